/*
 * expt_search.h: the tipping-point search of a study. For one variant, the highest value of
 * one axis (an offered load, say) at which the probability that a run's boolean metric
 * ("recovery.recovered") is true stays at least p, found by bisection on [from, to]. It
 * assumes the probability falls as the value rises, and says so when `from` already fails or
 * `to` already passes.
 *
 * Each probe is a sequential test with a stated error: after every batch of `reps`
 * replications (a look, up to `max_reps`), it passes when the exact (Clopper-Pearson) lower
 * bound of k/n is >= p and fails when the exact upper bound is < p, each look at its share of
 * the error (expt_search_plan), so that over all its looks a probe whose true probability is
 * at least p fails with probability at most (1 - confidence) / 2, and one whose probability
 * is below p passes with at most as much. A probe still undecided at max_reps says so; the
 * bisection then goes by the share k/n >= p. The driver is a pure function of its probe callback, which runs the
 * replications (expt_study_run_jobs in the program, a fake with a known boundary in the
 * tests). Owns the probes' values.
 */
#ifndef EXPT_SEARCH_H
#define EXPT_SEARCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "expt/expt_axis.h"
#include "expt/expt_scenario.h"
#include "retry/retry.h"

#define EXPT_SEARCH_DEFAULT_METRIC "recovery.recovered"
#define EXPT_SEARCH_DEFAULT_P 0.95
#define EXPT_SEARCH_DEFAULT_REPS EXPT_AXIS_SEARCH_DEFAULT_REPS
#define EXPT_SEARCH_DEFAULT_MAX_REPS 100 /* or reps, when larger */
#define EXPT_SEARCH_DEFAULT_PROBES 8
#define EXPT_SEARCH_MAX_REPS EXPT_AXIS_SEARCH_MAX_REPS
#define EXPT_SEARCH_MAX_PROBES EXPT_AXIS_SEARCH_MAX_PROBES

/* A scenario's "search" block, read. */
typedef struct expt_search_spec {
  char *path;            /* the --set path searched */
  char *metric;          /* a boolean of the run object, true = success */
  expt_axis_scalar from;  /* the range's ends (from < to); the values probed are written */
  expt_axis_scalar to;    /* like from: a number, or a string with from's unit */
  double p;              /* the probability to keep, in (0, 1) */
  size_t reps, max_reps; /* replications per batch, and at most at one probe */
  size_t probes;         /* probes in all, both ends included, >= 2 */
  int bound_kind;        /* 0: metric is a boolean; 1: a number >= bound; -1: <= bound */
  double bound;          /* "at_least" or "at_most" */
} expt_search_spec;

/* Reads a search block that the loader validated, defaults filled. Returns 0, or RETRY_ENOMEM
 * with err filled. */
int expt_search_spec_from_json(const json_t *block, expt_search_spec *out, retry_error *err);
void expt_search_spec_free(expt_search_spec *spec);

/* Runs n more replications at value x (set: the override {spec->path, the value's JSON
 * text}), the replications first_rep .. first_rep + n - 1, and stores in *k how many had the
 * metric true. Returns 0, or a RETRY_* code with err filled (the search stops with it). */
typedef int (*expt_search_probe_fn)(void *ctx, double x, const expt_set *set, size_t first_rep,
                                   size_t n, size_t *k, retry_error *err);

/* One probe as run. */
/* How a probe's error is spent over its looks. */
typedef struct expt_search_levels {
  double error;      /* each way, over all looks: (1 - confidence) / 2 */
  size_t looks;      /* ceil(max_reps / reps) */
  double fail_alpha; /* the upper bound's error at each look: error / looks */
  double pass_alpha; /* the lower bound's error at each look that can pass; NaN: none can */
  size_t pass_from_n; /* the first look (in replications) that can pass */
} expt_search_levels;

/* Fills lv for spec at confidence: the fail side spends error / looks at every look; the pass
 * side spends error / m at each of the last m looks, m the most looks whose first can still
 * pass (n of n successes give the exact lower bound alpha^(1/n), which must reach p). */
void expt_search_plan(const expt_search_spec *spec, double confidence, expt_search_levels *lv);

typedef struct expt_search_probe {
  double x;       /* the value (as written: what ran) */
  json_t *value;  /* the value as the document got it ("800/s"), owned */
  size_t n, k;    /* replications run, with the metric true */
  double p_hat;   /* k / n */
  double lo, hi;  /* the exact one-sided bounds at the last look's spent errors */
  size_t looks;   /* batches run */
  bool pass;      /* the verdict (when undecided, the side k/n leans to) */
  bool undecided; /* max_reps reached with neither bound past p: by p_hat */
} expt_search_probe;

typedef enum expt_search_outcome {
  EXPT_SEARCH_BRACKETED,  /* the bisection's bracket [pass, fail]: a passing probe below a
                             failing one (not an interval with a confidence) */
  EXPT_SEARCH_FROM_FAILS, /* already "from" fails: the boundary is below the range */
  EXPT_SEARCH_TO_PASSES   /* still "to" passes: the boundary is above the range */
} expt_search_outcome;

typedef struct expt_search_result {
  expt_search_outcome outcome;
  expt_search_levels levels; /* how each probe spent its error */
  expt_search_probe probes[EXPT_SEARCH_MAX_PROBES]; /* in the order run */
  size_t n_probes;
  int pass; /* index of the highest passing probe, -1 when none */
  int fail; /* index of the lowest failing probe, -1 when none */
} expt_search_result;

/* The search: probes `from` (stops when it fails), then `to` (stops when it passes), then
 * bisects [highest pass, lowest fail] until spec->probes probes in all have run, or, on an
 * integer axis, the two are adjacent. confidence is the level of the Wilson intervals.
 * Returns 0 with *out filled (free with expt_search_result_free), or the callback's error. */
int expt_search_run(const expt_search_spec *spec, double confidence, expt_search_probe_fn fn,
                   void *ctx, expt_search_result *out, retry_error *err);
void expt_search_result_free(expt_search_result *r);

/* Whether the probes' shares fall as the value rises, as the search assumes: false when a
 * probe at a higher value has a Wilson interval wholly above that of a probe at a lower one
 * (then *lower and *higher, which may be NULL, get their indices): the bracket may then be
 * one of several crossings, or an artefact. */
bool expt_search_monotone(const expt_search_result *r, size_t *lower, size_t *higher);

/* The fewest replications that can pass a probe of spec at confidence (expt_search_plan's
 * pass_from_n), or 0 when no look within max_reps can pass (n of n successes never bring the
 * exact lower bound to p). */
size_t expt_search_min_reps_to_pass(const expt_search_spec *spec, double confidence);

/* {"variant": variant, "path", "metric", "p", "confidence", "outcome": "bracketed" |
 * "from_fails" | "to_passes", "boundary": {"pass": value or null, "fail": value or null},
 * "probes": [{"value", "n", "k", "p", "lo", "hi", "verdict": "pass" | "fail", "undecided"}]}.
 * New reference, NULL when out of memory. */
json_t *expt_search_result_json(const expt_search_spec *spec, double confidence, const char *variant,
                               const expt_search_result *r);

/* The object a variant's search expectations are checked against: {"search": result} with
 * result as expt_search_result_json gives it, except that the boundary's ends are numbers, the
 * values' x ("340/s" reads 340), so that a range [lo, hi] applies to them. New reference, NULL
 * when out of memory. */
json_t *expt_search_check_doc(const json_t *result);

struct expt_study_spec;
struct expt_run_opts;

/* The search of s ("search" block) for every variant it runs, each probe's replications run
 * by expt_study_run_jobs on tmpl->jobs threads with the study's seeds (replication r of a
 * variant on expt_study_seed(base, r), as in any study). Refused (exit 2): --shard (a search
 * is adaptive), --reps / "replications" > 1 (the search's "reps" and "max_reps" say how many),
 * --baseline. Warns on stderr when max_reps < expt_search_min_reps_to_pass (every pass would be
 * undecided) and when a variant's probes are not monotone (expt_search_monotone). With --check, each
 * variant's search expectations (expt_expect_part) are checked against expt_search_check_doc
 * of its result (exit 1 when one fails). Writes to opts->out_dir summary.json (provenance, "study",
 * "search": one result per variant (expt_search_result_json), "runs": every replication run, with
 * its value, seed and run object) and search.csv (one row per probe); prints a table per variant
 * (or summary.json with --format json). Returns the exit status. */
int expt_search_run_study(const expt_scenario *s, const struct expt_study_spec *tmpl,
                         const struct expt_run_opts *opts);

#endif /* EXPT_SEARCH_H */
