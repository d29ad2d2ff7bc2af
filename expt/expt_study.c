/*
 * expt_study.c: the study driver: the plan (what a shard carries), the scenario of each point,
 * and a local study: the run list run on N threads (expt_study_pool.c), then finished
 * (expt_study_finish.c: the files of expt_study_files.c, the table of expt_study_table.c) from
 * the plan and the run records alone (so a merge of shards, which has only those, writes the
 * same bytes as a local run). Invariant: results are stored by run index and
 * everything is written after every run ended, in run-list order; the wall clock feeds the
 * progress line only.
 */
#include "expt/expt_study_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expt/expt_output.h"
#include "expt/expt_shard_file.h"
#include "expt/expt_study_estimate.h"
#include "expt/expt_study_series.h"
#include "expt/expt_json.h"

/* {==================================================================
 * The plan
 * =================================================================== */

/* A point's value as the loader reads a --set value: JSON when it parses, else a string. */
static json_t *set_value(const char *text) {
  if (text == NULL) return json_null();
  json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
  return v != NULL ? v : json_string(text);
}

static size_t n_points_of(const expt_study_spec *s) { return s->n_points > 0 ? s->n_points : 1; }

/* The seed of run (variant v, replication r) of point p: the same for every point. */
static uint64_t run_seed(const expt_study_spec *s, const expt_run_opts *o, size_t v, size_t r) {
  uint64_t base = o->has_seed ? o->seed : expt_scenario_config(s->scenarios[0], v)->seed;
  return expt_study_seed(base, r);
}

/* Everything the outputs need besides the run records: provenance, the study block (with the
 * variants' names and each point's values). A shard file carries it so that a merge can check
 * that its shards belong together and write what a local run writes. */
static json_t *make_plan(const expt_study_spec *s, const expt_run_opts *o) {
  bool ok = true;
  const expt_scenario *b = s->base;
  size_t nv = expt_scenario_n_runs(s->scenarios[0]), np = n_points_of(s);
  uint64_t top = o->has_seed ? o->seed : expt_scenario_config(s->scenarios[0], 0)->seed;
  json_t *plan = json_object();
  expt_json_put(plan, "scenario", json_string(expt_scenario_name(b)), &ok);
  expt_json_put(plan, "version", json_string(RETRY_VERSION), &ok);
  expt_json_put(plan, "scenario_sha256", json_string(expt_scenario_sha256(b)), &ok);
  expt_json_put(plan, "seed", expt_json_u64(top), &ok);
  expt_json_put(plan, "inputs", json_deep_copy(expt_scenario_inputs(b)), &ok);
  expt_json_put(plan, "overrides", json_deep_copy(expt_scenario_overrides(b)), &ok);
  expt_json_put(plan, "document", json_deep_copy(expt_scenario_base_document(b)), &ok);
  json_t *st = json_object();
  expt_json_put(st, "replications", json_integer((json_int_t)s->reps), &ok);
  expt_json_put(st, "confidence", json_real(s->confidence), &ok);
  expt_json_put(st, "baseline", s->baseline != NULL ? json_string(s->baseline) : json_null(), &ok);
  /* Only when asked, so that the plans (and shard files) of studies without it are unchanged. */
  if (s->holm) expt_json_put(st, "adjust", json_string("holm"), &ok);
  expt_json_put(st, "warmup_s",
                s->warmup_s >= 0 ? json_real(expt_output_round(s->warmup_s)) : json_null(), &ok);
  expt_json_put(st, "has_variants", json_boolean(expt_scenario_has_variants(s->scenarios[0])), &ok);
  json_t *names = json_array();
  for (size_t v = 0; v < nv; v++)
    if (json_array_append_new(names, json_string(expt_scenario_run_name(s->scenarios[0], v))))
      ok = false;
  expt_json_put(st, "variants", names, &ok);
  /* The axes: the points' paths (every point has the same), each with its values in the order
   * first met. */
  json_t *axes = s->axes != NULL ? json_deep_copy(s->axes) : json_array();
  size_t n_axes = s->n_points > 0 && s->axes == NULL ? s->points[0].n_sets : 0;
  for (size_t a = 0; a < n_axes && ok; a++) {
    json_t *vals = json_array();
    for (size_t p = 0; p < s->n_points; p++) {
      json_t *v = set_value(s->points[p].sets[a].value);
      bool seen = false;
      for (size_t k = 0; k < json_array_size(vals) && !seen; k++)
        seen = json_equal(json_array_get(vals, k), v);
      if (seen)
        json_decref(v);
      else if (json_array_append_new(vals, v) != 0)
        ok = false;
    }
    json_t *ax = json_object();
    expt_json_put(ax, "path", json_string(s->points[0].sets[a].path), &ok);
    expt_json_put(ax, "values", vals, &ok);
    if (json_array_append_new(axes, ax) != 0) ok = false;
  }
  expt_json_put(st, "axes", axes, &ok);
  expt_json_put(st, "n_points", json_integer((json_int_t)np), &ok);
  expt_json_put(st, "n_runs", json_integer((json_int_t)(np * nv * s->reps)), &ok);
  json_t *seeds = json_array();
  for (size_t r = 0; r < s->reps && ok; r++)
    if (json_array_append_new(seeds, expt_json_u64(expt_study_seed(top, r))) != 0) ok = false;
  expt_json_put(st, "seeds", seeds, &ok);
  /* Issue 23: what seeds[0] means, said where the seeds are (docs/cli.md says what follows). */
  expt_json_put(st, "seeds_note",
                json_string("seeds[0] is the base seed itself: replication 0 is the plain run on "
                            "it, and a study whose base seed is one of these seeds shares runs "
                            "with this one"),
                &ok);
  expt_json_put(plan, "study", st, &ok);
  json_t *pts = json_array();
  for (size_t p = 0; p < np && ok; p++) {
    json_t *pt = json_object(), *vals = json_object();
    expt_json_put(pt, "point", json_integer((json_int_t)p), &ok);
    for (size_t a = 0; a < n_axes; a++)
      expt_json_put(vals, s->points[p].sets[a].path, set_value(s->points[p].sets[a].value), &ok);
    if (s->axes != NULL && s->n_points > 0 && s->points[p].values != NULL) {
      json_decref(vals);
      vals = json_deep_copy(s->points[p].values);
    }
    expt_json_put(pt, "values", vals, &ok);
    if (json_array_append_new(pts, pt) != 0) ok = false;
  }
  expt_json_put(plan, "points", pts, &ok);
  if (ok) return plan;
  json_decref(plan);
  return NULL;
}

/* }================================================================== */

/* {==================================================================
 * The scenario of each point
 * =================================================================== */

int expt_study_load_points(const char *path, const expt_set *sets, size_t n_sets,
                           const expt_study_point *points, size_t n_points,
                           const char *const *variants, size_t n_variants, uint64_t max_bytes,
                           expt_scenario **out, retry_error *err) {
  for (size_t p = 0; p < n_points; p++)
    out[p] = NULL;
  int rc = 0;
  for (size_t p = 0; p < n_points && rc == 0; p++) {
    size_t n = n_sets + points[p].n_sets;
    expt_set *all = malloc((n > 0 ? n : 1) * sizeof *all);
    if (all == NULL) {
      retry_error_set(err, RETRY_ENOMEM, path, "", -1, -1, "out of memory loading the points");
      rc = RETRY_ENOMEM;
      break;
    }
    /* The point's sets go after the command line's, so a sweep's axis wins over a --set of
     * the same path. */
    for (size_t i = 0; i < n_sets; i++)
      all[i] = sets[i];
    for (size_t i = 0; i < points[p].n_sets; i++)
      all[n_sets + i] = points[p].sets[i];
    retry_error e;
    retry_error_clear(&e);
    out[p] = expt_scenario_load(path, all, n, &e);
    free(all);
    if (out[p] != NULL && (expt_scenario_select(out[p], variants, n_variants, &e) != 0 ||
                           expt_run_validate(out[p], path, &e) != 0 ||
                           expt_scenario_check_memory(out[p], max_bytes, &e) != 0)) {
      expt_scenario_destroy(out[p]);
      out[p] = NULL;
    }
    if (out[p] == NULL) {
      rc = e.code != RETRY_OK ? e.code : RETRY_ENOMEM;
      if (err != NULL) {
        *err = e;
        /* Name the point when the message has room: its first set is enough to find it. */
        char suffix[100];
        const expt_set *first = points[p].n_sets > 0 ? &points[p].sets[0] : NULL;
        snprintf(suffix, sizeof suffix, " (point %zu%s%.40s%s%.30s)", p, first ? ": " : "",
                 first ? first->path : "", first ? "=" : "",
                 first && first->value ? first->value : "");
        size_t len = strlen(err->message);
        if (len + strlen(suffix) < sizeof err->message)
          memcpy(err->message + len, suffix, strlen(suffix) + 1);
      }
    }
  }
  if (rc != 0)
    for (size_t p = 0; p < n_points; p++) {
      expt_scenario_destroy(out[p]);
      out[p] = NULL;
    }
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * A local study
 * =================================================================== */

/* Checks that the baseline (when there is one) is a variant being run, and warns on o->err
 * for each variant whose own seed differs from the baseline's (no --seed): its differences
 * are not paired by seed. Returns the exit status. */
static int check_baseline(const expt_study_spec *spec, const expt_run_opts *o) {
  if (spec->baseline == NULL) return EXPT_EXIT_OK;
  const expt_scenario *s0 = spec->scenarios[0];
  size_t nv = expt_scenario_n_runs(s0);
  bool found = false;
  for (size_t v = 0; v < nv && !found; v++)
    found = strcmp(expt_scenario_run_name(s0, v), spec->baseline) == 0;
  if (!found) {
    fprintf(o->err,
            "retrysim: %s: baseline: \"%s\" is not a variant being run (--variant chooses "
            "which run)\n",
            spec->source, spec->baseline);
    return EXPT_EXIT_USAGE;
  }
  /* A variant with its own seed runs other seeds than the baseline: its differences are
   * not paired by seed (common random numbers), whatever the table says. --seed evens
   * them out. */
  size_t b = 0;
  while (strcmp(expt_scenario_run_name(s0, b), spec->baseline) != 0)
    b++;
  for (size_t v = 0; v < nv && !o->has_seed; v++) {
    uint64_t sv = expt_scenario_config(s0, v)->seed, sb = expt_scenario_config(s0, b)->seed;
    if (sv != sb)
      fprintf(o->err,
              "retrysim: warning: %s: variant \"%s\" runs on its own seed (%" PRIu64
              ", the baseline's is %" PRIu64
              "): its paired differences are not on the same seeds (give --seed N)\n",
              spec->source, expt_scenario_run_name(s0, v), sv, sb);
  }
  return EXPT_EXIT_OK;
}

/* Writes this shard's slice of the runs (`run --shard K/N`) into o->out_dir. Returns the exit
 * status, the error printed on o->err. */
static int write_shard(const json_t *plan, const json_t *records, const expt_study_spec *spec,
                       const expt_run_opts *o) {
  /* The command refuses --shard without --out; this keeps the library's own callers honest. */
  if (o->out_dir == NULL) {
    fprintf(o->err, "retrysim: --shard needs --out DIR: the shard's runs go to DIR/%s\n",
            EXPT_SHARD_FILE);
    return EXPT_EXIT_USAGE;
  }
  retry_error e;
  retry_error_clear(&e);
  /* Each variant's base seed, from which a merge checks every record's seed. */
  json_t *seeds = json_array();
  size_t nv = expt_scenario_n_runs(spec->scenarios[0]);
  for (size_t v = 0; v < nv && seeds != NULL; v++)
    if (json_array_append_new(seeds, expt_json_u64(run_seed(spec, o, v, 0))) != 0) {
      json_decref(seeds);
      seeds = NULL;
    }
  int rc = seeds != NULL ? expt_shard_file_write(o->out_dir, spec->shard_k, spec->shard_n, plan,
                                                 seeds, records, &e)
                         : RETRY_ENOMEM;
  json_decref(seeds);
  if (rc == 0) return EXPT_EXIT_OK;
  if (e.code == RETRY_OK) retry_error_set(&e, rc, NULL, NULL, -1, -1, "out of memory");
  expt_error_print(o->err, &e);
  return EXPT_EXIT_RUNTIME;
}

/* Room for each run's series (expt_study_series.h) when the study page will draw them: --plot
 * into a directory, a study without a sweep, search or shard, and at most
 * EXPT_STUDY_SERIES_MAX_RUNS runs (8 KB each). NULL otherwise, or when out of memory (the
 * picture is then left out, which a note says). */
#define EXPT_STUDY_SERIES_MAX_RUNS 20000
static bool series_wanted(const expt_study_spec *spec, const expt_run_opts *o) {
  return o->plot && o->out_dir != NULL && spec->n_points == 0 && spec->search == NULL &&
         spec->shard_n == 0;
}

static expt_study_series *series_alloc(const expt_study_spec *spec, const expt_run_opts *o,
                                       size_t n_runs) {
  if (!series_wanted(spec, o)) return NULL;
  expt_study_series *s = n_runs <= EXPT_STUDY_SERIES_MAX_RUNS ? calloc(n_runs, sizeof *s) : NULL;
  if (s == NULL && !o->quiet)
    fprintf(o->err, "retrysim: note: %zu runs are more than the mean time series keeps (%d): "
            "the study page leaves it out\n", n_runs, EXPT_STUDY_SERIES_MAX_RUNS);
  return s;
}

int expt_study_run(const expt_study_spec *spec, const expt_run_opts *o) {
  const expt_scenario *s0 = spec->scenarios[0];
  size_t nv = expt_scenario_n_runs(s0), np = n_points_of(spec), reps = spec->reps;
  int status = check_baseline(spec, o);
  if (status != EXPT_EXIT_OK) return status;
  struct stat sb;
  if (o->out_dir != NULL && stat(o->out_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
    fprintf(o->err, "retrysim: %s: --out must name a directory, this is a file\n", o->out_dir);
    return EXPT_EXIT_USAGE;
  }
  size_t n_runs = np * nv * reps;
  /* The series the page will keep count in the memory estimate (series_alloc's test). */
  size_t kept = series_wanted(spec, o) && n_runs <= EXPT_STUDY_SERIES_MAX_RUNS ? n_runs : 0;
  status = expt_study_estimate_refuse(spec->scenarios[0], np, reps, spec->shard_n, spec->jobs,
                                      spec->max_bytes, spec->max_runs, kept, o->err);
  if (status != EXPT_EXIT_OK) return status;
  json_t *plan = make_plan(spec, o);
  /* The runs of this shard (all without one): index % N == K - 1. */
  size_t n_jobs = 0;
  expt_study_job *jobs = calloc(n_runs, sizeof *jobs);
  expt_study_series *series = series_alloc(spec, o, n_runs);
  size_t *index = calloc(n_runs, sizeof *index);
  json_t **results = calloc(n_runs, sizeof *results);
  if (plan == NULL || jobs == NULL || index == NULL || results == NULL) {
    json_decref(plan);
    free(jobs);
    free(index);
    free(results);
    free(series);
    fprintf(o->err, "retrysim: out of memory planning %zu runs\n", n_runs);
    return EXPT_EXIT_RUNTIME;
  }
  for (size_t i = 0; i < n_runs; i++) {
    if (spec->shard_n > 0 && i % spec->shard_n != spec->shard_k - 1) continue;
    size_t p = i / (nv * reps), v = (i / reps) % nv, r = i % reps;
    jobs[n_jobs] =
        (expt_study_job){spec->scenarios[spec->n_points > 0 ? p : 0], v, run_seed(spec, o, v, r),
                         series != NULL ? &series[i] : NULL};
    index[n_jobs++] = i;
  }
  expt_progress prog;
  expt_progress_init(&prog, o->err, o->quiet, n_jobs, false);
  retry_error err;
  retry_error_clear(&err);
  int rc = expt_study_run_jobs(jobs, n_jobs, spec->jobs, &prog, results, &err);
  if (rc != 0) {
    expt_error_print(o->err, &err);
    status = rc == RETRY_ECONFIG || rc == RETRY_EINVAL || rc == RETRY_ERANGE ? EXPT_EXIT_USAGE
                                                                             : EXPT_EXIT_RUNTIME;
  }
  /* The records, in run-list order: what summary.json's "runs" and a shard file hold. */
  json_t *records = json_array();
  for (size_t j = 0; j < n_jobs && status == EXPT_EXIT_OK; j++) {
    size_t i = index[j];
    size_t p = i / (nv * reps), v = (i / reps) % nv, r = i % reps;
    bool ok = true;
    json_t *rec = json_object();
    expt_json_put(rec, "run", json_integer((json_int_t)i), &ok);
    expt_json_put(rec, "point", json_integer((json_int_t)p), &ok);
    expt_json_put(rec, "variant", json_string(expt_scenario_run_name(s0, v)), &ok);
    expt_json_put(rec, "replication", json_integer((json_int_t)r), &ok);
    expt_json_put(rec, "seed", expt_json_u64(jobs[j].seed), &ok);
    expt_json_put(rec, "result", results[j], &ok);
    results[j] = NULL;
    if (!ok || json_array_append_new(records, rec) != 0) {
      fprintf(o->err, "retrysim: out of memory keeping the results\n");
      status = EXPT_EXIT_RUNTIME;
    }
  }
  for (size_t j = 0; j < n_jobs; j++)
    json_decref(results[j]);
  free(results);
  free(jobs);
  free(index);
  if (status == EXPT_EXIT_OK) {
    if (spec->shard_n > 0)
      status = write_shard(plan, records, spec, o);
    else {
      expt_study_spec with = *spec;
      with.series = series;
      status = expt_study_finish(plan, records, &with, o);
    }
  }
  free(series);
  json_decref(records);
  json_decref(plan);
  return status;
}

/* }================================================================== */
