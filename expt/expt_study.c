/*
 * expt_study.c: the study driver: the run list, the seeds, the runs on N threads, and the
 * outputs built from the plan and the run records alone (so a merge of shards, which has only
 * those, writes the same bytes as a local run). Invariant: results are stored by run index and
 * everything is written after every run ended, in run-list order; the wall clock feeds the
 * progress line only.
 */
/* sched_getaffinity (the processors this process may use: a Slurm step or a container's
 * cpuset) is a GNU extension; elsewhere the processors online are used. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "expt/expt_study.h"

#include "expt/expt_plot.h"
#include "expt/expt_report.h"

#if defined(__linux__)
#include <sched.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expt/expt_agg.h"
#include "expt/expt_expect.h"
#include "expt/expt_output.h"
#include "expt/expt_recovery.h"
#include "expt/expt_shard_file.h"
#include "expt/expt_json.h"
#include "expt/expt_csv.h"
#include "models/model_world.h"
#include "sim/sim_event.h"

/* {==================================================================
 * Seeds and cores
 * =================================================================== */

/* splitmix64's increment and finalizer (Steele, Lea and Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014): consecutive r give well-spread, distinct seeds. */
uint64_t expt_study_seed(uint64_t base, uint64_t r) {
  if (r == 0) return base;
  uint64_t z = base + r * UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

unsigned expt_study_default_jobs(void) {
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 1)
    return (unsigned)CPU_COUNT(&set);
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (unsigned)(n > 4096 ? 4096 : n) : 1;
}

static double wall_s(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* }================================================================== */

/* {==================================================================
 * Running runs on threads
 * =================================================================== */

typedef struct pool {
  const expt_study_job *jobs;
  size_t n;
  json_t **results;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t next;      /* the next job to take */
  size_t done;      /* jobs finished */
  size_t running;   /* threads still working */
  bool failed;      /* a job failed: take no more */
  size_t failed_at; /* the lowest failed job */
  int failed_rc;
  retry_error failed_err;
} pool;

/* One run: a fresh kernel and world on the job's seed, its run object built here (jansson
 * values are not shared between threads, which is all jansson asks). */
static int run_job(const expt_study_job *j, json_t **obj, retry_error *err) {
  const model_config *cfg = expt_scenario_config(j->scenario, j->variant);
  sim_kernel *k = sim_kernel_create(0, NULL);
  if (k == NULL) {
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory creating the kernel");
    return RETRY_ENOMEM;
  }
  model_world *w = model_world_create(cfg, k, j->seed, err);
  int rc = w != NULL ? 0 : (err->code != RETRY_OK ? err->code : RETRY_ENOMEM);
  if (rc == 0) rc = model_world_run(w, NULL, NULL, err);
  if (rc == 0) {
    const model_results *res = model_world_results(w);
    expt_recovery rec;
    rc = expt_recovery_of_run(expt_scenario_recovery(j->scenario, j->variant), cfg, res, &rec);
    if (rc == 0) {
      *obj = expt_output_run_json(res, &rec);
      if (*obj == NULL) rc = RETRY_ENOMEM;
    }
    if (rc != 0 && err->code == RETRY_OK)
      retry_error_set(err, rc, "", "", -1, -1, "out of memory keeping the results");
  }
  model_world_destroy(w);
  sim_kernel_destroy(k);
  if (rc != 0 && err->source[0] == '\0')
    snprintf(err->source, sizeof err->source, "%s (seed %" PRIu64 ")",
             expt_scenario_run_name(j->scenario, j->variant), j->seed);
  return rc;
}

static void *worker(void *arg) {
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    if (p->failed || p->next >= p->n) {
      p->running--;
      pthread_cond_broadcast(&p->cv);
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    size_t i = p->next++;
    pthread_mutex_unlock(&p->mu);
    retry_error e;
    retry_error_clear(&e);
    json_t *obj = NULL;
    int rc = run_job(&p->jobs[i], &obj, &e);
    pthread_mutex_lock(&p->mu);
    p->results[i] = obj;
    p->done++;
    if (rc != 0 && (!p->failed || i < p->failed_at)) {
      p->failed = true;
      p->failed_at = i;
      p->failed_rc = rc;
      p->failed_err = e;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
}

/* "retrysim: 12 of 48 runs, 3.1 s elapsed, about 9.3 s left", redrawn in place. */
static int progress_draw(FILE *f, size_t done, size_t n, double elapsed, int width) {
  double left = done > 0 ? elapsed * (double)(n - done) / (double)done : 0;
  int w = fprintf(f, "\rretrysim: %zu of %zu runs, %.1f s elapsed, about %.1f s left", done, n,
                  elapsed, left);
  if (w > 0 && w < width) fprintf(f, "%*s", width - w, "");
  fflush(f);
  return w > width ? w : width;
}

int expt_study_run_jobs(const expt_study_job *jobs, size_t n, unsigned n_threads, FILE *progress,
                       json_t **results, retry_error *err) {
  for (size_t i = 0; i < n; i++)
    results[i] = NULL;
  if (n == 0) return 0;
  if (n_threads == 0) n_threads = 1;
  if (n_threads > n) n_threads = (unsigned)n;
  /* jansson seeds its hash function on the first object made; making one here, before any
   * thread, keeps that one-time step out of the threads. */
  json_decref(json_object());
  pool p = {.jobs = jobs, .n = n, .results = results, .running = n_threads};
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  pthread_t *th = calloc(n_threads, sizeof *th);
  if (th == NULL) {
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory starting the runs");
    return RETRY_ENOMEM;
  }
  unsigned started = 0;
  for (; started < n_threads; started++)
    if (pthread_create(&th[started], NULL, worker, &p) != 0) break;
  int rc = 0;
  if (started == 0) {
    /* No thread at all: run them here, one after the other. */
    p.running = 1;
    worker(&p);
  } else {
    pthread_mutex_lock(&p.mu);
    p.running -= n_threads - started;
    double start = wall_s();
    int width = 0;
    double last = 0;
    while (p.running > 0) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 250 * 1000 * 1000;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&p.cv, &p.mu, &ts);
      double el = wall_s() - start;
      /* The first second stays silent (short studies draw nothing); then 4 lines a second. */
      if (progress != NULL && el > 1.0 && el - last >= 0.25) {
        width = progress_draw(progress, p.done, n, el, width);
        last = el;
      }
    }
    pthread_mutex_unlock(&p.mu);
    for (unsigned t = 0; t < started; t++)
      pthread_join(th[t], NULL);
    if (progress != NULL && width > 0) {
      fprintf(progress, "\r%*s\r", width, "");
      fflush(progress);
    }
  }
  free(th);
  if (p.failed) {
    rc = p.failed_rc;
    if (err != NULL) *err = p.failed_err;
    for (size_t i = 0; i < n; i++) {
      json_decref(results[i]);
      results[i] = NULL;
    }
  }
  pthread_mutex_destroy(&p.mu);
  pthread_cond_destroy(&p.cv);
  return rc;
}

/* }================================================================== */

int expt_study_probe(const expt_scenario *s, size_t variant, uint64_t base_seed, size_t first_rep,
                    size_t reps, unsigned n_threads, const char *metric, size_t *k, size_t *n,
                    retry_error *err) {
  *k = *n = 0;
  expt_study_job *jobs = calloc(reps > 0 ? reps : 1, sizeof *jobs);
  json_t **res = calloc(reps > 0 ? reps : 1, sizeof *res);
  if (jobs == NULL || res == NULL) {
    free(jobs);
    free(res);
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory starting the runs");
    return RETRY_ENOMEM;
  }
  for (size_t r = 0; r < reps; r++)
    jobs[r] = (expt_study_job){s, variant, expt_study_seed(base_seed, first_rep + r)};
  int rc = expt_study_run_jobs(jobs, reps, n_threads, NULL, res, err);
  for (size_t r = 0; r < reps && rc == 0; r++) {
    expt_agg_table *t = expt_agg_table_create((const json_t *const *)&res[r], 1);
    if (t == NULL) {
      retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory reading the runs");
      rc = RETRY_ENOMEM;
      break;
    }
    long i = expt_agg_table_find(t, metric);
    double v = i >= 0 ? expt_agg_table_values(t, (size_t)i)[0] : NAN;
    if (!isnan(v)) {
      (*n)++;
      if (v == 1.0) (*k)++;
    }
    expt_agg_table_destroy(t);
  }
  for (size_t r = 0; r < reps; r++)
    json_decref(res[r]);
  free(res);
  free(jobs);
  return rc;
}

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
  expt_json_put(st, "warmup_s", s->warmup_s >= 0 ? json_real(expt_output_round(s->warmup_s)) : json_null(),
      &ok);
  expt_json_put(st, "has_variants", json_boolean(expt_scenario_has_variants(s->scenarios[0])), &ok);
  json_t *names = json_array();
  for (size_t v = 0; v < nv; v++)
    if (json_array_append_new(names, json_string(expt_scenario_run_name(s->scenarios[0], v))))
      ok = false;
  expt_json_put(st, "variants", names, &ok);
  /* The axes: the points' paths (every point has the same), each with its values in the order
   * first met. */
  json_t *axes = json_array();
  size_t n_axes = s->n_points > 0 ? s->points[0].n_sets : 0;
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
  expt_json_put(plan, "study", st, &ok);
  json_t *pts = json_array();
  for (size_t p = 0; p < np && ok; p++) {
    json_t *pt = json_object(), *vals = json_object();
    expt_json_put(pt, "point", json_integer((json_int_t)p), &ok);
    for (size_t a = 0; a < n_axes; a++)
      expt_json_put(vals, s->points[p].sets[a].path, set_value(s->points[p].sets[a].value), &ok);
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
 * Outputs
 * =================================================================== */

/* What the outputs are made of, read back from a plan and its records. */
typedef struct study {
  const json_t *plan;
  size_t reps, nv, np, n_axes;
  double level;
  long baseline;         /* index of the baseline variant, -1 for none */
  const json_t *names;   /* the variants' names */
  const json_t *axes;    /* [{path, values}] */
  const json_t *points;  /* [{point, values}] */
  const json_t *records; /* every run record, in run-list order */
  json_t **aggs;         /* np * nv aggregate objects */
  json_t *summary;       /* summary.json */
} study;

static const char *variant_name(const study *st, size_t v) {
  return json_string_value(json_array_get(st->names, v));
}

static const json_t *result_of(const study *st, size_t p, size_t v, size_t r) {
  return json_object_get(json_array_get(st->records, (p * st->nv + v) * st->reps + r), "result");
}

/* Aggregates every (point, variant). Returns 0 or RETRY_ENOMEM. */
static int aggregate(study *st) {
  st->aggs = calloc(st->np * st->nv, sizeof *st->aggs);
  const json_t **runs = calloc(st->reps, sizeof *runs);
  expt_agg_table **tables = calloc(st->nv, sizeof *tables);
  int rc = st->aggs != NULL && runs != NULL && tables != NULL ? 0 : RETRY_ENOMEM;
  for (size_t p = 0; p < st->np && rc == 0; p++) {
    for (size_t v = 0; v < st->nv && rc == 0; v++) {
      for (size_t r = 0; r < st->reps; r++)
        runs[r] = result_of(st, p, v, r);
      tables[v] = expt_agg_table_create(runs, st->reps);
      if (tables[v] == NULL) rc = RETRY_ENOMEM;
    }
    for (size_t v = 0; v < st->nv && rc == 0; v++) {
      for (size_t r = 0; r < st->reps; r++)
        runs[r] = result_of(st, p, v, r);
      bool paired = st->baseline >= 0 && (size_t)st->baseline != v;
      json_t *a =
          expt_agg_object(variant_name(st, v), tables[v], runs, paired ? tables[st->baseline] : NULL,
                         paired ? variant_name(st, (size_t)st->baseline) : NULL, st->level);
      if (a == NULL) rc = RETRY_ENOMEM;
      st->aggs[p * st->nv + v] = a;
    }
    for (size_t v = 0; v < st->nv; v++) {
      expt_agg_table_destroy(tables[v]);
      tables[v] = NULL;
    }
  }
  free(tables);
  free(runs);
  return rc;
}

/* summary.json: the plan's provenance, the study block, the points with their aggregates, the
 * search (local runs only) and every run record. */
static int make_summary(study *st, const json_t *search) {
  bool ok = true;
  json_t *doc = json_object();
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)st->plan, key, v) {
    if (strcmp(key, "points") != 0) expt_json_put(doc, key, json_incref(v), &ok);
  }
  json_t *pts = json_array();
  for (size_t p = 0; p < st->np && ok; p++) {
    json_t *pt = json_deep_copy(json_array_get(st->points, p)), *vars = json_array();
    for (size_t k = 0; k < st->nv; k++)
      if (json_array_append(vars, st->aggs[p * st->nv + k]) != 0) ok = false;
    expt_json_put(pt, "variants", vars, &ok);
    if (json_array_append_new(pts, pt) != 0) ok = false;
  }
  expt_json_put(doc, "points", pts, &ok);
  if (search != NULL) expt_json_put(doc, "search", json_deep_copy(search), &ok);
  expt_json_put(doc, "runs", json_incref((json_t *)st->records), &ok);
  if (!ok) {
    json_decref(doc);
    return RETRY_ENOMEM;
  }
  st->summary = doc;
  return 0;
}

/* A number as the CSV files write it: integers in full, anything else with the 10 significant
 * digits that print a rounded value exactly; empty for none. */
static void csv_num(FILE *f, double x) {
  if (!isfinite(x)) return;
  if (x == floor(x) && fabs(x) < 1e15)
    fprintf(f, "%.0f", x == 0 ? 0.0 : x);
  else
    fprintf(f, "%.10g", x);
}

/* A JSON value as one CSV field: a string as it is, anything else as compact JSON. */
static void csv_json(FILE *f, const json_t *v) {
  if (json_is_string(v)) {
    expt_csv_text(f, json_string_value(v));
    return;
  }
  if (json_is_integer(v)) { /* seeds: every digit */
    fprintf(f, "%lld", (long long)json_integer_value(v));
    return;
  }
  if (json_is_real(v)) {
    csv_num(f, json_real_value(v));
    return;
  }
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  if (s != NULL) expt_csv_text(f, s);
  free(s);
}

/* "point,<axis paths>," */
static void csv_head(FILE *f, const study *st) {
  fputs("point,", f);
  for (size_t a = 0; a < st->n_axes; a++) {
    expt_csv_text(f, json_string_value(json_object_get(json_array_get(st->axes, a), "path")));
    fputc(',', f);
  }
}

/* "<point>,<axis values>," */
static void csv_point(FILE *f, const study *st, size_t p) {
  fprintf(f, "%zu,", p);
  const json_t *vals = json_object_get(json_array_get(st->points, p), "values");
  for (size_t a = 0; a < st->n_axes; a++) {
    const char *path = json_string_value(json_object_get(json_array_get(st->axes, a), "path"));
    csv_json(f, json_object_get(vals, path));
    fputc(',', f);
  }
}

typedef struct csv_run_ctx {
  FILE *f;
  const study *st;
  size_t p, v, r;
  const json_t *seed;
} csv_run_ctx;

static void csv_run_metric(void *ctx, const char *name, expt_agg_kind kind, double value) {
  (void)kind;
  csv_run_ctx *c = ctx;
  csv_point(c->f, c->st, c->p);
  expt_csv_text(c->f, variant_name(c->st, c->v));
  fprintf(c->f, ",%zu,", c->r);
  csv_json(c->f, c->seed);
  fputc(',', c->f);
  expt_csv_text(c->f, name);
  fputc(',', c->f);
  csv_num(c->f, value);
  fputc('\n', c->f);
}

static int fill_runs_csv(void *ctx, FILE *f) {
  const study *st = ctx;
  csv_head(f, st);
  fputs("variant,replication,seed,metric,value\n", f);
  for (size_t i = 0; i < json_array_size(st->records); i++) {
    const json_t *rec = json_array_get(st->records, i);
    csv_run_ctx c = {.f = f,
                     .st = st,
                     .p = i / (st->nv * st->reps),
                     .v = (i / st->reps) % st->nv,
                     .r = i % st->reps,
                     .seed = json_object_get(rec, "seed")};
    expt_agg_flatten(json_object_get(rec, "result"), csv_run_metric, &c);
  }
  return ferror(f) ? -1 : 0;
}

static void csv_field_num(FILE *f, const json_t *o, const char *key) {
  fputc(',', f);
  csv_num(f, json_is_number(json_object_get(o, key)) ? json_number_value(json_object_get(o, key))
                                                     : NAN);
}

static int fill_points_csv(void *ctx, FILE *f) {
  const study *st = ctx;
  csv_head(f, st);
  fputs("variant,metric,n,mean,sd,lo,hi,half_width\n", f);
  for (size_t p = 0; p < st->np; p++)
    for (size_t v = 0; v < st->nv; v++) {
      const json_t *a = st->aggs[p * st->nv + v];
      const char *key;
      json_t *e;
      json_object_foreach(json_object_get(a, "intervals"), key, e) {
        csv_point(f, st, p);
        expt_csv_text(f, variant_name(st, v));
        fputc(',', f);
        expt_csv_text(f, key);
        static const char *const cols[] = {"n", "mean", "sd", "lo", "hi", "half_width"};
        for (size_t k = 0; k < 6; k++)
          csv_field_num(f, e, cols[k]);
        fputc('\n', f);
      }
      json_object_foreach(json_object_get(a, "proportions"), key, e) {
        csv_point(f, st, p);
        expt_csv_text(f, variant_name(st, v));
        fputc(',', f);
        expt_csv_text(f, key);
        csv_field_num(f, e, "n");
        csv_field_num(f, e, "p");
        fputc(',', f); /* sd: none for a proportion */
        csv_field_num(f, e, "lo");
        csv_field_num(f, e, "hi");
        fputs(",\n", f); /* half_width: the Wilson interval is not symmetric */
      }
    }
  return ferror(f) ? -1 : 0;
}

static int fill_paired_csv(void *ctx, FILE *f) {
  const study *st = ctx;
  csv_head(f, st);
  fputs("variant,baseline,metric,n,mean_diff,lo,hi,unpaired_lo,unpaired_hi,distinguishable\n", f);
  for (size_t p = 0; p < st->np; p++)
    for (size_t v = 0; v < st->nv; v++) {
      const json_t *pd = json_object_get(st->aggs[p * st->nv + v], "paired");
      if (pd == NULL) continue;
      const char *key;
      json_t *e;
      json_object_foreach(json_object_get(pd, "metrics"), key, e) {
        csv_point(f, st, p);
        expt_csv_text(f, variant_name(st, v));
        fputc(',', f);
        expt_csv_text(f, json_string_value(json_object_get(pd, "baseline")));
        fputc(',', f);
        expt_csv_text(f, key);
        static const char *const cols[] = {"n",  "mean_diff",   "lo",
                                           "hi", "unpaired_lo", "unpaired_hi"};
        for (size_t k = 0; k < 6; k++)
          csv_field_num(f, e, cols[k]);
        fprintf(f, ",%d\n", json_is_true(json_object_get(e, "distinguishable")) ? 1 : 0);
      }
    }
  return ferror(f) ? -1 : 0;
}

/* Joins dir and name into buf. */
static void join_path(char *buf, size_t size, const char *dir, const char *name) {
  size_t n = strlen(dir);
  snprintf(buf, size, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name);
}

static int write_files(const study *st, const char *dir, retry_error *err) {
  int rc = expt_output_make_dirs(dir, err);
  char path[4096];
  if (rc == 0) {
    join_path(path, sizeof path, dir, "runs.csv");
    rc = expt_output_write_atomic(path, fill_runs_csv, (void *)st, err);
  }
  if (rc == 0) {
    join_path(path, sizeof path, dir, "points.csv");
    rc = expt_output_write_atomic(path, fill_points_csv, (void *)st, err);
  }
  if (rc == 0 && st->baseline >= 0) {
    join_path(path, sizeof path, dir, "paired.csv");
    rc = expt_output_write_atomic(path, fill_paired_csv, (void *)st, err);
  }
  if (rc == 0) {
    join_path(path, sizeof path, dir, "summary.json");
    rc = expt_output_write_atomic(path, expt_json_fill, st->summary, err);
  }
  return rc;
}

/* The point's values as "path=value, path=value" (empty without a sweep). */
static void point_label(const study *st, size_t p, char *buf, size_t size) {
  buf[0] = '\0';
  size_t len = 0;
  const json_t *vals = json_object_get(json_array_get(st->points, p), "values");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)vals, key, v) {
    char text[256];
    expt_output_value_text(v, text, sizeof text);
    int w = snprintf(buf + len, size - len, "%s%s=%s", len > 0 ? ", " : "", key, text);
    if (w < 0 || (size_t)w >= size - len) break;
    len += (size_t)w;
  }
}

/* }================================================================== */

/* {==================================================================
 * The text table
 * =================================================================== */

/* x with sig significant digits, but never in exponent form for |x| >= 1 (160, not 1.6e+02). */
static void fmt_sig(char *buf, size_t size, double x, int sig) {
  if (fabs(x) >= pow(10, sig))
    snprintf(buf, size, "%.0f", x);
  else
    snprintf(buf, size, "%.*g", sig, x);
}

/* A cell "mean ±half_width" of metric in aggregate a, with '*' when its paired difference from
 * the baseline is distinguishable from zero. */
static void cell(const json_t *a, const char *metric, char *buf, size_t size) {
  const json_t *iv = json_object_get(json_object_get(a, "intervals"), metric);
  if (iv == NULL) {
    snprintf(buf, size, "-");
    return;
  }
  const json_t *mean = json_object_get(iv, "mean"), *hw = json_object_get(iv, "half_width");
  const json_t *pd =
      json_object_get(json_object_get(json_object_get(a, "paired"), "metrics"), metric);
  const char *mark = json_is_true(json_object_get(pd, "distinguishable")) ? "*" : "";
  if (!json_is_number(mean)) {
    snprintf(buf, size, "-");
    return;
  }
  char m[40], h[40];
  fmt_sig(m, sizeof m, json_number_value(mean), 4);
  fmt_sig(h, sizeof h, json_number_value(hw), 2);
  if (json_is_number(hw))
    snprintf(buf, size, "%s ±%s%s", m, h, mark);
  else
    snprintf(buf, size, "%s%s", m, mark);
}

#define N_COLS 8
static int print_table(const study *st, FILE *f) {
  static const char *const head[N_COLS] = {"variant", "n",    "goodput/s",    "attempts/call",
                                           "p99 ms",  "dups", "P(recovered)", "median recovery s"};
  static const char *const metrics[] = {"goodput_per_s", "calls.attempts_per_call",
                                        "latency_ms.p99", "side_effects.duplicates"};
  size_t rows = st->nv + 1;
  char(*cells)[N_COLS][96] = calloc(rows, sizeof *cells);
  if (cells == NULL) return -1;
  fprintf(f, "study %s (seed ", json_string_value(json_object_get(st->plan, "scenario")));
  const json_t *seed = json_object_get(st->plan, "seed");
  if (json_is_integer(seed))
    fprintf(f, "%lld", (long long)json_integer_value(seed));
  else
    fputs(json_string_value(seed) ? json_string_value(seed) : "?", f);
  fprintf(f, ", retrysim %s): %zu point%s x %zu variant%s x %zu replications, %.4g %% intervals",
          json_string_value(json_object_get(st->plan, "version")), st->np, st->np == 1 ? "" : "s",
          st->nv, st->nv == 1 ? "" : "s", st->reps, st->level * 100);
  if (st->baseline >= 0)
    fprintf(f, ", * = differs from %s", variant_name(st, (size_t)st->baseline));
  fputs("\n", f);
  for (size_t p = 0; p < st->np; p++) {
    char label[512];
    point_label(st, p, label, sizeof label);
    fprintf(f, "\n%s%s", label, label[0] ? "\n" : "");
    for (size_t c = 0; c < N_COLS; c++)
      snprintf(cells[0][c], sizeof cells[0][c], "%s", head[c]);
    for (size_t v = 0; v < st->nv; v++) {
      const json_t *a = st->aggs[p * st->nv + v];
      char(*row)[96] = cells[v + 1];
      snprintf(row[0], 96, "%s", variant_name(st, v));
      snprintf(row[1], 96, "%lld", (long long)json_integer_value(json_object_get(a, "n")));
      for (size_t m = 0; m < 4; m++)
        cell(a, metrics[m], row[2 + m], 96);
      const json_t *pr = json_object_get(json_object_get(a, "proportions"), "recovery.recovered");
      if (pr != NULL)
        snprintf(row[6], 96, "%.3g [%.3g, %.3g]", json_number_value(json_object_get(pr, "p")),
                 json_number_value(json_object_get(pr, "lo")),
                 json_number_value(json_object_get(pr, "hi")));
      else
        snprintf(row[6], 96, "-");
      const json_t *rs = json_object_get(a, "recovery_s");
      const json_t *med = json_object_get(rs, "median");
      if (json_is_number(med))
        snprintf(row[7], 96, "%.3g", json_number_value(med));
      else
        snprintf(row[7], 96, "%s", rs != NULL ? "never (most)" : "-");
    }
    int width[N_COLS] = {0};
    for (size_t r = 0; r < rows; r++)
      for (size_t c = 0; c < N_COLS; c++) {
        /* Display width: "±" is two bytes in UTF-8 and one column. */
        int w = 0;
        for (const unsigned char *s = (const unsigned char *)cells[r][c]; *s; s++)
          w += (*s & 0xC0) != 0x80;
        if (w > width[c]) width[c] = w;
      }
    for (size_t r = 0; r < rows; r++) {
      for (size_t c = 0; c < N_COLS; c++) {
        int w = 0;
        for (const unsigned char *s = (const unsigned char *)cells[r][c]; *s; s++)
          w += (*s & 0xC0) != 0x80;
        if (c == 0)
          fprintf(f, "%s%*s", cells[r][c], width[c] - w, "");
        else
          fprintf(f, "  %*s%s", width[c] - w, "", cells[r][c]);
      }
      fputc('\n', f);
    }
  }
  free(cells);
  return ferror(f) ? -1 : 0;
}

/* }================================================================== */

/* {==================================================================
 * Finishing: the same for a local run and a merge
 * =================================================================== */

static void print_error(FILE *f, const retry_error *e) {
  char buf[800];
  retry_error_format(e, buf, sizeof buf);
  fprintf(f, "retrysim: %s\n", buf);
}

/* The expectations as they apply to an aggregate, where a boolean became its share of true:
 * `true` means every replication (share >= 1), `false` none (share <= 0). Those of a search
 * ("search...") are left out and counted into *skipped. Returns a new reference, NULL when
 * out of memory or when expect is NULL. */
static json_t *expect_for_means(const json_t *expect, size_t *skipped) {
  size_t other = 0;
  json_t *e = expt_expect_part(expect, false, &other);
  *skipped += other;
  if (e == NULL) return NULL;
  const char *key;
  json_t *v;
  void *tmp;
  json_object_foreach_safe(e, tmp, key, v) {
    if (json_is_boolean(v))
      json_object_set_new(
          e, key, json_pack("{s:i}", json_is_true(v) ? "min" : "max", json_is_true(v) ? 1 : 0));
  }
  return e;
}

/* Variant v's expectations from the plan's document, as the loader merges them (the top
 * level's, then the variant's own winning): what a merge, which has no scenario, checks. New
 * reference, NULL when there are none or out of memory. */
static json_t *plan_expect(const study *st, size_t v) {
  const json_t *doc = json_object_get(st->plan, "document");
  const json_t *top = json_object_get(doc, "expect");
  json_t *e = json_is_object(top) ? json_deep_copy(top) : json_object();
  const json_t *vars = json_object_get(doc, "variants");
  const char *name = variant_name(st, v);
  for (size_t i = 0; e != NULL && name != NULL && i < json_array_size(vars); i++) {
    const json_t *var = json_array_get(vars, i);
    const char *vn = json_string_value(json_object_get(var, "name"));
    const json_t *ve = json_object_get(var, "expect");
    if (vn != NULL && strcmp(vn, name) == 0 && json_is_object(ve))
      json_object_update(e, (json_t *)ve);
  }
  if (e != NULL && json_object_size(e) == 0) {
    json_decref(e);
    e = NULL;
  }
  return e;
}

/* Checks every variant's expectations against its aggregate at every point; spec NULL (a
 * merge): those of the plan's document. */
static int check_all(const study *st, const expt_study_spec *spec, const expt_run_opts *o,
                     bool *junit_failed) {
  bool verbose = o->format == EXPT_FORMAT_JSON && !o->quiet;
  size_t total = 0, skipped = 0; /* skipped: expectations of a search ("search...") */
  int failed = 0;
  expt_junit *junit =
      o->junit != NULL ? expt_junit_create(json_string_value(json_object_get(st->plan, "scenario")))
                       : NULL;
  *junit_failed = o->junit != NULL && junit == NULL;
  for (size_t p = 0; p < st->np; p++) {
    char label[512];
    point_label(st, p, label, sizeof label);
    const expt_scenario *s = spec != NULL ? spec->scenarios[spec->n_points > 0 ? p : 0] : NULL;
    for (size_t v = 0; v < st->nv; v++) {
      json_t *pe = s == NULL ? plan_expect(st, v) : NULL;
      json_t *expect = expect_for_means(s != NULL ? expt_scenario_expect(s, v) : pe, &skipped);
      json_decref(pe);
      char name[700];
      snprintf(name, sizeof name, "%s%s%s%s", variant_name(st, v), label[0] ? " (" : "", label,
               label[0] ? ")" : "");
      total += json_object_size(expect);
      failed += expt_expect_check_to(expect, st->aggs[p * st->nv + v], name, o->err, verbose,
                                    junit != NULL ? expt_junit_add : NULL, junit);
      json_decref(expect);
    }
  }
  if (expt_junit_finish(junit, o->junit, true, o->err) != 0) *junit_failed = true;
  char note[96] = "";
  if (skipped > 0)
    snprintf(note, sizeof note, "; %zu expectation%s of a search not checked", skipped,
             skipped == 1 ? "" : "s");
  if (total == 0 && !o->quiet)
    fprintf(o->err, "retrysim: check: the scenario has no expectations%s\n", note);
  else if (!o->quiet || failed > 0)
    fprintf(o->err,
            "retrysim: check: %zu passed, %d failed (against the means over %zu "
            "replications%s)\n",
            total - (size_t)failed, failed, st->reps, note);
  return failed;
}

int expt_study_finish(const json_t *plan, const json_t *records, const expt_study_spec *spec,
                     const expt_run_opts *o) {
  const json_t *sb = json_object_get(plan, "study");
  study st = {.plan = plan, .records = records};
  st.reps = (size_t)json_integer_value(json_object_get(sb, "replications"));
  st.level = json_number_value(json_object_get(sb, "confidence"));
  st.names = json_object_get(sb, "variants");
  st.nv = json_array_size(st.names);
  st.axes = json_object_get(sb, "axes");
  st.n_axes = json_array_size(st.axes);
  st.points = json_object_get(plan, "points");
  st.np = json_array_size(st.points);
  st.baseline = -1;
  const char *bl = json_string_value(json_object_get(sb, "baseline"));
  for (size_t v = 0; bl != NULL && v < st.nv; v++)
    if (strcmp(variant_name(&st, v), bl) == 0) st.baseline = (long)v;
  int status = EXPT_EXIT_OK;
  if (aggregate(&st) != 0 || make_summary(&st, spec != NULL ? spec->search : NULL) != 0) {
    fprintf(o->err, "retrysim: out of memory aggregating the runs\n");
    status = EXPT_EXIT_RUNTIME;
  }
  if (status == EXPT_EXIT_OK && o->out_dir != NULL) {
    retry_error e;
    retry_error_clear(&e);
    if (write_files(&st, o->out_dir, &e) != 0) {
      print_error(o->err, &e);
      status = EXPT_EXIT_RUNTIME;
    }
    /* --plot: the study's pictures from points.csv, then report.md and report.html (the page
     * is written even when a picture failed, without pictures, as a plain run does). */
    if (status == EXPT_EXIT_OK && o->plot) {
      int prc = expt_report_study_plots(st.summary, o->out_dir, expt_plot_dir(), o->err, &e);
      if (prc != 0) print_error(o->err, &e);
      retry_error e2;
      retry_error_clear(&e2);
      if (expt_report_study_write(st.summary, o->out_dir, o->command, prc == 0, &e2) != 0) {
        print_error(o->err, &e2);
        status = EXPT_EXIT_RUNTIME;
      } else if (prc != 0) {
        status = EXPT_EXIT_RUNTIME;
      }
    }
  }
  if (status == EXPT_EXIT_OK) {
    int rc = 0;
    if (o->format == EXPT_FORMAT_JSON)
      rc = expt_json_fill(st.summary, o->out);
    else if (!o->quiet)
      rc = print_table(&st, o->out);
    if (rc == 0 && fflush(o->out) != 0) rc = -1;
    if (rc != 0) {
      fprintf(o->err, "retrysim: cannot write the summary to standard output\n");
      status = EXPT_EXIT_RUNTIME;
    }
    bool junit_failed = false;
    if (o->check && check_all(&st, spec, o, &junit_failed) > 0 && status == EXPT_EXIT_OK)
      status = EXPT_EXIT_CHECK;
    if (junit_failed) status = EXPT_EXIT_RUNTIME;
  }
  for (size_t i = 0; st.aggs != NULL && i < st.np * st.nv; i++)
    json_decref(st.aggs[i]);
  free(st.aggs);
  json_decref(st.summary);
  return status;
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

int expt_study_run(const expt_study_spec *spec, const expt_run_opts *o) {
  const expt_scenario *s0 = spec->scenarios[0];
  size_t nv = expt_scenario_n_runs(s0), np = n_points_of(spec), reps = spec->reps;
  if (spec->baseline != NULL) {
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
  }
  struct stat sb;
  if (o->out_dir != NULL && stat(o->out_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
    fprintf(o->err, "retrysim: %s: --out must name a directory, this is a file\n", o->out_dir);
    return EXPT_EXIT_USAGE;
  }
  size_t n_runs = np * nv * reps;
  json_t *plan = make_plan(spec, o);
  /* The runs of this shard (all without one): index % N == K - 1. */
  size_t n_jobs = 0;
  expt_study_job *jobs = calloc(n_runs, sizeof *jobs);
  size_t *index = calloc(n_runs, sizeof *index);
  json_t **results = calloc(n_runs, sizeof *results);
  if (plan == NULL || jobs == NULL || index == NULL || results == NULL) {
    json_decref(plan);
    free(jobs);
    free(index);
    free(results);
    fprintf(o->err, "retrysim: out of memory planning %zu runs\n", n_runs);
    return EXPT_EXIT_RUNTIME;
  }
  for (size_t i = 0; i < n_runs; i++) {
    if (spec->shard_n > 0 && i % spec->shard_n != spec->shard_k - 1) continue;
    size_t p = i / (nv * reps), v = (i / reps) % nv, r = i % reps;
    jobs[n_jobs] =
        (expt_study_job){spec->scenarios[spec->n_points > 0 ? p : 0], v, run_seed(spec, o, v, r)};
    index[n_jobs++] = i;
  }
  bool tty = !o->quiet && isatty(fileno(o->err));
  retry_error err;
  retry_error_clear(&err);
  int status = EXPT_EXIT_OK;
  int rc = expt_study_run_jobs(jobs, n_jobs, spec->jobs, tty ? o->err : NULL, results, &err);
  if (rc != 0) {
    print_error(o->err, &err);
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
      status = expt_shard_file_write(o->out_dir, spec->shard_k, spec->shard_n, plan, records, o->err);
    else
      status = expt_study_finish(plan, records, spec, o);
  }
  json_decref(records);
  json_decref(plan);
  return status;
}

/* }================================================================== */
