/*
 * expt_study_pool.c: the runs of a study on N threads: the seeds of the replications, the
 * default of -j, the pool that runs jobs and keeps each result by its index (counting them for
 * the progress line, expt_progress.h), and a search's probe. Invariant: results are stored by run index, so nothing depends
 * on which thread ran what; the wall clock feeds the progress line only.
 */
/* sched_getaffinity (the processors this process may use: a Slurm step or a container's
 * cpuset) is a GNU extension; elsewhere the processors online are used. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "expt/expt_study_int.h"

#if defined(__linux__)
#include <sched.h>
#endif

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "expt/expt_agg.h"
#include "expt/expt_output.h"
#include "expt/expt_recovery.h"
#include "expt/expt_study_series.h"
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
    if (j->series != NULL) expt_study_series_of_run(res, j->series);
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

int expt_study_run_jobs(const expt_study_job *jobs, size_t n, unsigned n_threads,
                        expt_progress *progress, json_t **results, retry_error *err) {
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
  /* The runs done before this batch (a search's earlier probes) count in the line too. */
  size_t before = progress != NULL ? progress->done : 0;
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
    while (p.running > 0) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 250 * 1000 * 1000;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&p.cv, &p.mu, &ts);
      expt_progress_show(progress, before + p.done);
    }
    pthread_mutex_unlock(&p.mu);
    for (unsigned t = 0; t < started; t++)
      pthread_join(th[t], NULL);
    expt_progress_clear(progress);
  }
  if (progress != NULL) progress->done = before + p.done;
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
    jobs[r] = (expt_study_job){s, variant, expt_study_seed(base_seed, first_rep + r), NULL};
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
