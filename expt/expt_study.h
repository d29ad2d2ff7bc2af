/*
 * expt_study.h: a study of `retrysim run`: every (point, variant, replication) of a scenario run
 * on N threads, each run on its own kernel and world, the results kept by run index and
 * aggregated over the replications (expt_agg.h), then written in run-list order: summary.json,
 * runs.csv, points.csv, paired.csv, the text table, --check. Invariant: the files depend on the
 * scenario, the points, the options that change results and the seeds only, never on -j or on
 * how the runs were split into shards.
 */
#ifndef EXPT_STUDY_H
#define EXPT_STUDY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "expt/expt_progress.h"
#include "expt/expt_run.h"
#include "expt/expt_scenario.h"
#include "retry/retry.h"

/* The bounds of the study's keys and options (docs/cli.md). */
#define EXPT_STUDY_MAX_REPS 100000
#define EXPT_STUDY_MIN_CONFIDENCE 0.5
#define EXPT_STUDY_MAX_CONFIDENCE 0.9999
#define EXPT_STUDY_DEFAULT_CONFIDENCE 0.95

/* One point of a sweep: the --set-style overrides (path, value as text: JSON when it parses,
 * else a string) applied after the command line's own --set and before each variant's "set".
 * Every point of a study has the same paths in the same order (the sweep's axes). No sweep:
 * one point with n_sets == 0. Borrowed by the study. */
typedef struct expt_study_point {
  const expt_set *sets;
  size_t n_sets;
  const json_t *values; /* {axis: value} for the plan, or NULL: the sets' paths and values */
} expt_study_point;

/* One run to run: variant `variant` (index into the scenario's runs) of scenario, on seed.
 * Borrowed. */
typedef struct expt_study_job {
  const expt_scenario *scenario;
  size_t variant;
  uint64_t seed;
  struct expt_study_series *series; /* NULL, or where the run keeps its goodput per bucket */
} expt_study_job;

/* The seed of replication r of a variant whose base seed is base (--seed, else the variant's
 * config seed): base itself for r == 0 (so replication 0 is the plain run), else a splitmix64
 * finalizer of base + r * 0x9E3779B97F4A7C15 (docs/cli.md). */
uint64_t expt_study_seed(uint64_t base, uint64_t r);

/* The default of -j: the processors online (sysconf), at least 1. */
unsigned expt_study_default_jobs(void);

/* Runs jobs[0..n) on up to n_threads POSIX threads (0: 1) and stores each run's run object
 * (expt_output_run_json, with its recovery judgement) in results[i]. progress (may be NULL): the
 * line of "runs done of total, elapsed, remaining" (expt_progress.h), whose count of runs done
 * grows by n. On success returns 0 and every results[i] is a new reference (release each with
 * json_decref). On failure returns a negative RETRY code with err (may be NULL) filled for the
 * failed job of the lowest index, and results[] are all NULL. Thread-safe for scenarios that
 * are not modified meanwhile: this is the entry point for a search's probes (expt_search). */
int expt_study_run_jobs(const expt_study_job *jobs, size_t n, unsigned n_threads,
                        expt_progress *progress, json_t **results, retry_error *err);

/* Loads the scenario of each point: the file at path with sets[0..n_sets) (the command line's
 * --set, --duration last) and then the point's own sets, keeps the variants named in
 * variants[0..n_variants) (0: all), and validates it as `run` does (expectations, memory limit
 * max_bytes). out[0..n_points) receives the scenarios (free each with expt_scenario_destroy). A
 * sweep's (expt_sweep) stand-in until the loader can apply a point's sets to a parsed document:
 * it re-reads the file per point (not per run). Returns 0, or a RETRY code with err filled
 * (naming the point's sets in the message) and every out[i] NULL. */
int expt_study_load_points(const char *path, const expt_set *sets, size_t n_sets,
                           const expt_study_point *points, size_t n_points,
                           const char *const *variants, size_t n_variants, uint64_t max_bytes,
                           expt_scenario **out, retry_error *err);

/* A search's probe (expt_search): runs replications first_rep .. first_rep + reps - 1 of
 * variant of s (seeds expt_study_seed(base_seed, r), base_seed being --seed or the variant's
 * config seed) on n_threads threads, and counts in *k the runs where metric (a flattened name,
 * expt_agg.h: "recovery.recovered") is true, in *n those where it has a value (a run without a
 * trigger has no recovery: it counts in neither). Returns 0, or a negative RETRY code with err
 * filled (*k and *n then 0). */
int expt_study_probe(const expt_scenario *s, size_t variant, uint64_t base_seed, size_t first_rep,
                     size_t reps, unsigned n_threads, const char *metric, size_t *k, size_t *n,
                     retry_error *err);

/* What a study is asked to do. */
typedef struct expt_study_spec {
  const char *source;             /* the scenario file, for messages */
  const expt_scenario *base;      /* the scenario without any point's sets: provenance */
  const expt_study_point *points; /* n_points points; NULL with n_points 0: one, empty */
  size_t n_points;
  const expt_scenario *const *scenarios; /* the scenario of each point (base for no sweep) */
  size_t reps;                           /* replications, >= 1 */
  double confidence;                     /* level of every interval, in [0.5, 0.9999] */
  const char *baseline;                  /* variant compared against, or NULL */
  bool holm;                             /* --adjust holm: paired flags by Holm's step-down */
  double warmup_s;                       /* provenance only (the config applies it); < 0: none */
  unsigned jobs;                         /* threads (-j), >= 1 */
  unsigned shard_k, shard_n;             /* --shard K/N; shard_n 0: the whole run list */
  const json_t *search;                  /* a search's result block for summary.json, or NULL */
  const json_t *axes; /* the plan's axes (a sweep with linked or labelled axes), with each
                         point's values; NULL: one axis per set of the points */
  uint64_t max_bytes; /* --max-memory: the records and worlds the study holds; 0: unchecked */
  uint64_t max_runs;  /* --max-runs: the most runs it may make (expt_study_runs.h); 0: no limit */
  const struct expt_study_series *series; /* each run's series for series.csv (--plot without
                                             a sweep; expt_study_series.h), or NULL */
} expt_study_spec;

/* Runs the study and writes its outputs as opts says (out_dir, format, check, quiet); with a
 * shard, writes only DIR/shard.json. Returns the exit status (EXPT_EXIT_*), every error
 * printed on opts->err as one "retrysim: " line. */
int expt_study_run(const expt_study_spec *spec, const expt_run_opts *opts);

/* Aggregates the run records (every run of the plan, in run-list order: {"run", "point",
 * "variant", "replication", "seed", "result"}) and writes the outputs as opts says: files in
 * out_dir, summary.json or the table on out, --check when spec is given (a merge has no
 * scenario and checks nothing). The plan is what a shard file carries (expt_shard.h). Returns
 * the exit status. Used by expt_study_run and by the merge of shards. */
int expt_study_finish(const json_t *plan, const json_t *records, const expt_study_spec *spec,
                      const expt_run_opts *opts);

#endif /* EXPT_STUDY_H */
