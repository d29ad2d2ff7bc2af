/*
 * test_model_world.c: the simulated world, driven through scenario text. Queueing theory
 * (M/M/1 and M/M/c against Erlang C, with t-based confidence intervals over replications),
 * determinism and common random numbers, retries and amplification, nested layers, the
 * side-effect ledger, gateways, deadlines, hedging, fan-out, load balancing and memory.
 * Scenarios are written with single quotes, turned into double quotes before loading.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario.h"
#include "models/model_world.h"
#include "sim/sim_event.h"
#include "tests/support/oom.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

typedef struct run {
  expt_scenario *s;
  sim_kernel *k;
  model_world *w;
  const model_results *r;
} run;

/* Loads a scenario written with single quotes; fails the test on any error. */
static expt_scenario *load(const char *text) {
  char *json = strdup(text);
  assert_non_null(json);
  for (char *p = json; *p; p++)
    if (*p == '\'') *p = '"';
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(json, "<test>", NULL, 0, &err);
  free(json);
  if (s == NULL) {
    char buf[700];
    retry_error_format(&err, buf, sizeof buf);
    fail_msg("scenario failed to load: %s", buf);
  }
  return s;
}

/* Runs run i of an already loaded scenario with the given seed. */
static void run_loaded(run *x, size_t i, uint64_t seed) {
  retry_error err;
  retry_error_clear(&err);
  x->k = sim_kernel_create(0, NULL);
  assert_non_null(x->k);
  x->w = model_world_create(expt_scenario_config(x->s, i), x->k, seed, &err);
  assert_non_null(x->w);
  assert_int_equal(model_world_run(x->w, NULL, NULL, &err), 0);
  x->r = model_world_results(x->w);
}

static void run_text(run *x, const char *text, uint64_t seed) {
  memset(x, 0, sizeof *x);
  x->s = load(text);
  run_loaded(x, 0, seed);
}

static void run_close(run *x) {
  model_world_destroy(x->w);
  sim_kernel_destroy(x->k);
  x->w = NULL;
  x->k = NULL;
}

static void run_free(run *x) {
  run_close(x);
  expt_scenario_destroy(x->s);
}

static const model_service_stats *svc(const model_results *r, const char *name) {
  for (size_t i = 0; i < r->n_services; i++)
    if (strcmp(r->services[i].name, name) == 0) return &r->services[i];
  fail_msg("no service %s", name);
  return NULL;
}

static const model_edge_stats *edge(const model_results *r, const char *from, const char *to) {
  for (size_t i = 0; i < r->n_edges; i++)
    if (strcmp(r->edges[i].from, from) == 0 && strcmp(r->edges[i].to, to) == 0) return &r->edges[i];
  fail_msg("no edge %s -> %s", from, to);
  return NULL;
}

/* }================================================================== */

/* {==================================================================
 * Queueing theory
 * =================================================================== */

/* Erlang C: mean time in system of an M/M/c queue with arrival rate lambda, service rate mu. */
static double erlang_c_sojourn(int c, double lambda, double mu) {
  double a = lambda / mu, rho = a / c;
  double term = 1, sum = 1; /* k = 0 */
  for (int k = 1; k < c; k++) {
    term *= a / k;
    sum += term;
  }
  double last = term * a / c / (1 - rho); /* a^c / c! / (1 - rho) */
  double pw = last / (sum + last);
  return pw / (c * mu - lambda) + 1 / mu;
}

/* Runs n replications (seeds 1..n) and checks that the analytic mean sojourn time lies in the
 * t-based 99 % confidence interval of the replication means. */
static void check_queue(const char *text, double expected_ms, int n) {
  double means[32];
  expt_scenario *s = load(text);
  for (int i = 0; i < n; i++) {
    run x = {.s = s};
    run_loaded(&x, 0, (uint64_t)(i + 1));
    assert_int_equal(x.r->calls_failed, 0);
    means[i] = sim_hist_mean(&x.r->latency) / 1e6;
    run_close(&x);
  }
  expt_scenario_destroy(s);
  double m = gsl_stats_mean(means, 1, (size_t)n);
  double sd = gsl_stats_sd_m(means, 1, (size_t)n, m);
  double half = gsl_cdf_tdist_Pinv(0.995, n - 1) * sd / sqrt(n);
  print_message("mean sojourn %.3f ms +- %.3f (99 %% CI, %d reps), theory %.3f ms\n", m, half, n,
                expected_ms);
  assert_true(fabs(m - expected_ms) <= half);
  /* The interval must be narrow enough to mean something: within 4 % of the value. */
  assert_true(half < 0.04 * expected_ms);
}

static void test_model_world_mm1_matches_theory(void **state) {
  (void)state;
  /* rho = 0.8: lambda 80/s, mean service 10 ms: W = 1 / (mu - lambda) = 50 ms. */
  check_queue(
      "{'duration': '800s', 'drain': '10s',"
      " 'services': {'q': {'service_time': {'dist': 'exponential', 'mean': '10ms'},"
      "                    'queue': {'capacity': 1000000}}},"
      " 'clients': {'src': {'target': 'q', 'methods': ['/q.Q/Do'],"
      "                     'arrival': {'kind': 'open', 'rate': '80/s'}}}}",
      50.0, 20);
}

static void test_model_world_mmc_matches_erlang_c(void **state) {
  (void)state;
  /* c = 8, rho = 0.9: lambda 720/s, mu 100/s per worker. */
  double w_ms = erlang_c_sojourn(8, 720.0, 100.0) * 1e3;
  check_queue(
      "{'duration': '150s', 'drain': '10s',"
      " 'services': {'q': {'workers': 8, 'service_time': {'dist': 'exponential', 'mean': '10ms'},"
      "                    'queue': {'capacity': 1000000}}},"
      " 'clients': {'src': {'target': 'q', 'methods': ['/q.Q/Do'],"
      "                     'arrival': {'kind': 'open', 'rate': '720/s'}}}}",
      w_ms, 20);
}

/* }================================================================== */

/* {==================================================================
 * Determinism and common random numbers
 * =================================================================== */

static const char storm[] =
    "{'duration': '20s', 'drain': '5s',"
    " 'services': {'api': {'replicas': 2, 'workers': 4, 'queue': {'capacity': 50},"
    "   'service_time': {'dist': 'lognormal', 'median': '8ms', 'sigma': 0.6},"
    "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.3,"
    "               'start': '5s', 'end': '10s'}]}},"
    " 'clients': {'web': {'count': 20, 'target': 'api', 'methods': ['/api.A/Get'],"
    "   'deadline': '500ms', 'network': {'dist': 'exponential', 'mean': '1ms'},"
    "   'arrival': {'kind': 'open', 'rate': '600/s'},"
    "   'policy': {'methodConfig': [{'name': [{'service': 'api.A'}],"
    "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s', 'maxBackoff': '0.1s',"
    "       'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']}}],"
    "     'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}}}},"
    " 'variants': [{'name': 'retry'},"
    "              {'name': 'no-retry', 'set': {'clients.web.policy': null}}]}";

static void test_model_world_same_seed_same_results(void **state) {
  (void)state;
  run a, b;
  run_text(&a, storm, 7);
  run_text(&b, storm, 7);
  assert_true(a.r->events > 10000);
  assert_int_equal(a.r->events, b.r->events);
  assert_int_equal(a.r->sim_time_ns, b.r->sim_time_ns);
  assert_int_equal(a.r->attempts, b.r->attempts);
  assert_int_equal(a.r->calls_ok, b.r->calls_ok);
  assert_memory_equal(&a.r->latency, &b.r->latency, sizeof a.r->latency);
  assert_int_equal(a.r->ts.n_buckets, b.r->ts.n_buckets);
  assert_memory_equal(a.r->ts.values, b.r->ts.values,
                      a.r->ts.n_buckets * a.r->ts.n_columns * sizeof(double));
  run c;
  run_text(&c, storm, 8);
  assert_int_not_equal(a.r->attempts, c.r->attempts);
  run_free(&a);
  run_free(&b);
  run_free(&c);
}

/* Sampling the time series changes no decision: the sampler reads every client's target each
 * bucket (tokens, budget, adaptive probability), and a read that rolled the Finagle budget's
 * unaligned window would restart its slice and keep deposits counted longer, so the bucket
 * width changed which retries the budget granted. The same run with buckets of 1 s and of
 * 130 ms must send the same attempts and end the same calls the same way. */
static const char *const sampled =
    "{'duration': '8s', 'drain': '2s', 'bucket': 'BUCKET',"
    " 'services': {'api': {'workers': 4, 'queue': {'capacity': 20},"
    "   'service_time': {'dist': 'exponential', 'mean': '10ms'},"
    "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.4, 'start': '2s', 'end': "
    "'6s'}]}},"
    " 'clients': {'web': {'count': 20, 'target': 'api', 'deadline': '1s', 'methods': ['/a.A/Get'],"
    "   'arrival': {'kind': 'open', 'rate': '150/s'},"
    "   'policy': {'retrysim': {'budget': {'type': 'finagle', 'ttl': '1s', 'minRetriesPerSec': 0,"
    "                                      'percentCanRetry': 0.3},"
    "                           'adaptiveThrottling': {'k': 1.5, 'window': '3s'}},"
    "              'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 4,"
    "                'initialBackoff': '0.01s', 'maxBackoff': '0.1s', 'backoffMultiplier': 2,"
    "                'retryableStatusCodes': ['UNAVAILABLE']}}]}}}}";

static void run_with_bucket(run *x, const char *bucket) {
  char text[2048];
  const char *at = strstr(sampled, "BUCKET");
  assert_non_null(at);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - sampled), sampled, bucket, at + 6);
  run_text(x, text, 3);
}

static void test_model_world_sampling_changes_no_decision(void **state) {
  (void)state;
  run a, b;
  run_with_bucket(&a, "1s");
  run_with_bucket(&b, "130ms");
  /* The mechanisms were at work: the budget and the throttler refused retries. */
  assert_true(a.r->by_stop[RETRY_STOP_BUDGET_EXHAUSTED] > 0);
  assert_true(a.r->by_stop[RETRY_STOP_THROTTLED] > 0);
  assert_int_equal(a.r->calls_started, b.r->calls_started);
  assert_int_equal(a.r->attempts, b.r->attempts);
  assert_int_equal(a.r->retries, b.r->retries);
  assert_int_equal(a.r->calls_ok, b.r->calls_ok);
  assert_memory_equal(a.r->by_stop, b.r->by_stop, sizeof a.r->by_stop);
  assert_memory_equal(&a.r->latency, &b.r->latency, sizeof a.r->latency);
  assert_int_not_equal(a.r->ts.n_buckets, b.r->ts.n_buckets);
  run_free(&a);
  run_free(&b);
}

/* The time series' gauges of a Finagle budget and adaptive throttling (whose windows expire
 * with time) are sums kept as holders change: at every sample they equal a walk over every
 * holder, for a population's clients and for a service's replicas, with buckets shorter and
 * longer than the windows' slices. */
typedef struct gauge_probe {
  model_world *w;
  int samples, bad;
} gauge_probe;

static void gauge_probe_cb(void *ctx, int64_t now_ns, int64_t end_ns) {
  (void)end_ns;
  gauge_probe *g = ctx;
  g->samples++;
  if (!model_world_gauges_check(g->w, now_ns)) g->bad++;
}

/* Runs text (seed 5) checking the gauges' sums against a walk at every sample; returns the
 * samples taken. */
static int run_gauge_probed(run *x, const char *text) {
  memset(x, 0, sizeof *x);
  x->s = load(text);
  retry_error err;
  retry_error_clear(&err);
  x->k = sim_kernel_create(0, NULL);
  assert_non_null(x->k);
  x->w = model_world_create(expt_scenario_config(x->s, 0), x->k, 5, &err);
  assert_non_null(x->w);
  gauge_probe g = {x->w, 0, 0};
  assert_int_equal(model_world_run(x->w, gauge_probe_cb, &g, &err), 0);
  x->r = model_world_results(x->w);
  assert_int_equal(g.bad, 0);
  return g.samples;
}

static void test_model_world_gauges_equal_walk(void **state) {
  (void)state;
  const char *buckets[] = {"1s", "130ms", "2.5s"};
  for (size_t i = 0; i < 3; i++) {
    char text[4096];
    const char *at = strstr(sampled, "BUCKET");
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - sampled), sampled, buckets[i], at + 6);
    /* A second tier whose replicas hold the same policy on their edge to a flaky backend. */
    char *svcs = strstr(text, "'services': {");
    assert_non_null(svcs);
    char tier[4096];
    snprintf(tier, sizeof tier,
             "%.*s'services': {'db': {'workers': 8, 'service_time': '2ms', 'faults': [{'kind': "
             "'fail', 'status': 'UNAVAILABLE', 'rate': 0.5, 'start': '1s', 'end': '5s'}]},"
             " 'mid': {'workers': 16, 'replicas': 3, 'service_time': '1ms', 'calls': [{'service': "
             "'db', 'method': '/d.D/Q', 'policy': {'retrysim': {'budget': {'type': 'finagle', "
             "'ttl': '2s', 'minRetriesPerSec': 1}, 'adaptiveThrottling': {'k': 1.2, 'window': "
             "'2s'}}, 'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3, "
             "'initialBackoff': '0.01s', 'maxBackoff': '0.1s', 'backoffMultiplier': 2, "
             "'retryableStatusCodes': ['UNAVAILABLE']}}]}}]},"
             " %s",
             (int)(svcs - text), text, svcs + strlen("'services': {"));
    char *api = strstr(tier, "'api': {");
    assert_non_null(api);
    char full[4096];
    snprintf(full, sizeof full, "%.*s'api': {'calls': [{'service': 'mid', 'method': '/m.M/G'}], %s",
             (int)(api - tier), tier, api + strlen("'api': {"));
    run x;
    assert_true(run_gauge_probed(&x, full) >= 3);
    /* The windows were at work: budgets refused retries and the throttlers calls. */
    assert_true(x.r->by_stop[RETRY_STOP_BUDGET_EXHAUSTED] > 0);
    assert_true(x.r->by_stop[RETRY_STOP_THROTTLED] > 0);
    const model_edge_stats *mid = NULL;
    for (size_t j = 0; j < x.r->n_edges; j++)
      if (strcmp(x.r->edges[j].from, "mid") == 0) mid = &x.r->edges[j];
    assert_non_null(mid);
    assert_true(mid->retries > 0);
    assert_true(mid->by_stop[RETRY_STOP_BUDGET_EXHAUSTED] + mid->by_stop[RETRY_STOP_THROTTLED] > 0);
    run_free(&x);
  }
}

/* Edges with a concurrency limiter or the AWS adaptive limiter keep those figures in their
 * sums too (live on the clients' edge, lazily on the replicas' edge beside adaptive
 * throttling),
 * so the limit columns need no walk: at every sample the sums equal a walk, and the
 * limiters did move (a limit that never changed would check nothing). */
static void test_model_world_limiter_gauges_equal_walk(void **state) {
  (void)state;
  const char *text =
      "{'duration': '8s', 'drain': '2s', 'bucket': '250ms',"
      " 'services': {'db': {'workers': 4, 'service_time': {'dist': 'exponential', 'mean': "
      "'4ms'}, 'faults': [{'kind': 'fail', 'status': 'RESOURCE_EXHAUSTED', 'rate': 0.5, "
      "'start': '2s', 'end': '5s'}]},"
      "  'mid': {'workers': 16, 'replicas': 3, 'service_time': '1ms', 'calls': [{'service': "
      "'db', 'method': '/d.D/Q', 'policy': {'retrysim': {'adaptiveThrottling': {'k': 1.5, "
      "'window': '2s'}, 'retryMode': 'adaptive', 'budget': {'type': 'aws'}, "
      "'concurrencyLimit': {'type': 'aimd', 'initialLimit': 4, 'minLimit': 1, 'maxLimit': "
      "30}}, 'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3, "
      "'initialBackoff': '0.01s', 'maxBackoff': '0.1s', 'backoffMultiplier': 2, "
      "'retryableStatusCodes': ['UNAVAILABLE', 'RESOURCE_EXHAUSTED']}}]}}]},"
      "  'api': {'workers': 8, 'service_time': '1ms', 'calls': [{'service': 'mid', 'method': "
      "'/m.M/G'}], 'faults': [{'kind': 'fail', 'status': 'RESOURCE_EXHAUSTED', 'rate': 0.3, "
      "'start': '3s', 'end': '6s'}]}},"
      " 'clients': {'web': {'count': 20, 'target': 'api', 'deadline': '1s', 'methods': "
      "['/a.A/Get'], 'arrival': {'kind': 'open', 'rate': '300/s'},"
      "   'policy': {'retrysim': {'retryMode': 'adaptive', 'budget': {'type': 'aws'}, "
      "'concurrencyLimit': {'type': 'vegas', 'initialLimit': 3}},"
      "              'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
      "                'initialBackoff': '0.01s', 'maxBackoff': '0.1s', 'backoffMultiplier': 2,"
      "                'retryableStatusCodes': ['UNAVAILABLE', 'RESOURCE_EXHAUSTED']}}]}}}}";
  run x;
  assert_true(run_gauge_probed(&x, text) >= 30);
  /* the limit columns moved: a fixed value would hold whatever the sums did */
  const model_timeseries *ts = &x.r->ts;
  const char *cols[] = {"web->api_limit", "mid->db_limit", "web->api_aws_fill_rate",
                        "mid->db_aws_fill_rate"};
  for (size_t c = 0; c < 4; c++) {
    size_t col = ts->n_columns;
    for (size_t j = 0; j < ts->n_columns; j++)
      if (strcmp(ts->names[j], cols[c]) == 0) col = j;
    assert_true(col < ts->n_columns);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t b = 0; b < ts->n_buckets; b++) {
      double v = ts->values[b * ts->n_columns + col];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (!(hi > lo)) fprintf(stderr, "column %s stays at %g\n", cols[c], lo);
    assert_true(hi > lo);
  }
  run_free(&x);
}

static void test_model_world_variants_see_same_arrivals(void **state) {
  (void)state;
  expt_scenario *s = load(storm);
  assert_int_equal(expt_scenario_n_runs(s), 2);
  run a = {.s = s}, b = {.s = s};
  run_loaded(&a, 0, 3);
  run_loaded(&b, 1, 3);
  /* Retries change everything downstream, never the offered load. */
  assert_int_equal(a.r->calls_started, b.r->calls_started);
  assert_true(a.r->attempts > b.r->attempts);
  assert_int_equal(b.r->attempts, b.r->calls_started);
  for (size_t i = 0; i < 20; i++)
    assert_true(a.r->ts.values[i * a.r->ts.n_columns] == b.r->ts.values[i * b.r->ts.n_columns]);
  run_close(&a);
  run_close(&b);
  expt_scenario_destroy(s);
}

/* }================================================================== */

/* {==================================================================
 * Retries, layers, ledger
 * =================================================================== */

static void test_model_world_retries_multiply_attempts(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '10s', 'services': {'api': {'service_time': '1ms', 'workers': 100,"
           "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
           " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/M'],"
           "   'arrival': {'kind': 'open', 'rate': '50/s'},"
           "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
           "     'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
           "     'retryableStatusCodes': ['UNAVAILABLE']}}]}}}}",
           1);
  const model_results *r = x.r;
  assert_true(r->calls_started > 400);
  assert_int_equal(r->calls_ok, 0);
  assert_int_equal(r->attempts, 3 * r->calls_started);
  assert_int_equal(r->retries, 2 * r->calls_started);
  assert_int_equal(r->by_stop[RETRY_STOP_MAX_ATTEMPTS], r->calls_started);
  assert_int_equal(r->by_status.grpc[RETRY_GRPC_UNAVAILABLE], r->calls_started);
  assert_int_equal(svc(r, "api")->arrivals, 3 * r->calls_started);
  assert_int_equal(svc(r, "api")->rejected, 3 * r->calls_started);
  assert_int_equal(edge(r, "c", "api")->worst_case, 3);
  run_free(&x);
}

/* A retry policy of 3 attempts on UNAVAILABLE with a fixed 10 ms backoff, for any method. */
#define P3                                                                     \
  "{'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"         \
  " 'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1," \
  " 'retryableStatusCodes': ['UNAVAILABLE']}}]}"

/* One world on a kernel whose allocation number fail fails (tests/support/oom.h), built and,
 * when and_run is true, run. Asserts that nothing leaked once the world and the kernel are gone. */
typedef struct failing_world {
  bool kernel;                 /* the kernel was made (else nothing else was tried) */
  bool built;                  /* the world was made */
  int rc;                      /* 0: nothing failed; else RETRY_ENOMEM, details in err */
  long n_calls;                /* allocations attempted */
  int64_t peak;                /* calls in flight at most, when the run completed */
  int64_t worst_case_front_db; /* the edge front -> db's worst case, when built (-1: none) */
} failing_world;

static failing_world world_with_failing_alloc(const model_config *cfg, long fail, bool and_run,
                                              retry_error *err) {
  failing_world f = {.rc = RETRY_ENOMEM, .worst_case_front_db = -1};
  test_oom c;
  retry_allocator a = test_oom_allocator(&c, fail);
  retry_error_clear(err);
  sim_kernel *k = sim_kernel_create(0, &a);
  if (k != NULL) {
    f.kernel = true;
    model_world *w = model_world_create(cfg, k, 1, err);
    if (w != NULL) {
      f.built = true;
      const model_results *r = model_world_results(w);
      for (size_t i = 0; i < r->n_edges; i++)
        if (strcmp(r->edges[i].from, "front") == 0 && strcmp(r->edges[i].to, "db") == 0)
          f.worst_case_front_db = (int64_t)r->edges[i].worst_case;
      f.rc = and_run ? model_world_run(w, NULL, NULL, err) : 0;
      if (f.rc == 0) f.peak = model_world_peak_in_flight(w);
      model_world_destroy(w);
    }
    sim_kernel_destroy(k);
  }
  f.n_calls = c.n_calls;
  assert_int_equal(c.live, 0);
  return f;
}

/* The worst-case figures need scratch memory: when it cannot be had, the world is not built
 * (no wrong figures), the error says why, and nothing leaks. The time series' table also comes
 * from the kernel's allocator, so its failures are refused the same way, as the world's. */
static void test_model_world_worst_case_out_of_memory_builds_no_world(void **state) {
  (void)state;
  expt_scenario *s = load(
      "{'duration': '1s',"
      " 'services': {"
      "  'front': {'service_time': '1ms', 'calls': [{'service': 'db',"
      "     'method': '/d.D/Do', 'policy': " P3
      "}]},"
      "  'db': {'service_time': '1ms'}},"
      " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'],"
      "   'policy': " P3 ", 'arrival': {'kind': 'script', 'at': ['0s']}}}}");
  int failures = 0, series_failures = 0;
  for (long fail = 0;; fail++) {
    retry_error err;
    failing_world f = world_with_failing_alloc(expt_scenario_config(s, 0), fail, false, &err);
    if (f.built) {
      assert_int_equal(f.worst_case_front_db, 9);
      break;
    }
    if (!f.kernel) continue;
    assert_int_equal(err.code, RETRY_ENOMEM);
    if (strstr(err.message, "worst-case") != NULL)
      failures++;
    else if (strstr(err.message, "building the world") != NULL)
      series_failures++;
    else
      fail_msg("unexpected message: %s", err.message);
  }
  assert_int_equal(failures, 4);     /* its four scratch arrays */
  assert_true(series_failures >= 2); /* the series and its columns, at least */
  expt_scenario_destroy(s);
}

/* Every allocation of a world, built and run, comes from its kernel's allocator (GSL's
 * generators aside): failing each one in turn, the world is either not built (RETRY_ENOMEM,
 * said so) or its run stops with RETRY_ENOMEM, and either way nothing leaks. The scenario has
 * nested calls, shared state on every edge, a ledger and enough calls in flight to grow the
 * pools and the series during the run. */
static void test_model_world_every_allocation_can_fail_cleanly(void **state) {
  (void)state;
  expt_scenario *s = load(
      "{'duration': '1s', 'bucket': '100ms',"
      " 'services': {"
      "  'front': {'service_time': '2ms', 'workers': 1024, 'side_effect': 'after',"
      "     'calls': [{'service': 'db', 'method': '/d.D/Do', 'policy': {"
      "       'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1},"
      "       'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
      "         'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "         'retryableStatusCodes': ['UNAVAILABLE']}}]}}]},"
      "  'db': {'service_time': '300ms', 'workers': 512, 'side_effect': 'before',"
      "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.3}]}},"
      " 'clients': {'c': {'count': 30, 'target': 'front', 'methods': ['/f.F/Do'],"
      "   'arrival': {'kind': 'open', 'rate': '1000/s'}, 'policy': " P3 "}}}");
  long stopped = 0; /* runs of a built world that an allocation stopped */
  int64_t peak = 0;
  for (long fail = 0;; fail++) {
    retry_error err;
    failing_world f = world_with_failing_alloc(expt_scenario_config(s, 0), fail, true, &err);
    if (!f.kernel) continue;
    if (f.rc == 0) {
      /* A success must mean fail_at is past every allocation the run made, not a failure
       * that went unnoticed. */
      assert_true(f.n_calls <= fail);
      peak = f.peak;
      break;
    }
    assert_int_equal(f.rc, RETRY_ENOMEM);
    assert_int_equal(err.code, RETRY_ENOMEM);
    assert_non_null(strstr(err.message, "out of memory"));
    stopped += f.built;
  }
  /* Failures were met while building and while running, the pools growing past one chunk of
   * 256 calls in flight among them. */
  assert_true(stopped > 6);
  assert_true(peak > 256);
  expt_scenario_destroy(s);
}

/* Three layers of three attempts over a failing bottom: 27 attempts per call arrive there. */
static void test_model_world_nested_layers_multiply(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '2s',"
           " 'services': {"
           "  'front': {'service_time': '1ms', 'workers': 1000, 'calls': [{'service': 'mid',"
           "     'method': '/m.M/Do', 'policy': " P3
           "}]},"
           "  'mid': {'service_time': '1ms', 'workers': 1000, 'calls': [{'service': 'db',"
           "     'method': '/d.D/Do', 'policy': " P3
           "}]},"
           "  'db': {'service_time': '1ms', 'workers': 1000,"
           "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
           " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'], 'policy': " P3
           ","
           "   'arrival': {'kind': 'script', 'at': ['0s']}, 'count': 10}}}",
           1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 10);
  assert_int_equal(svc(r, "front")->arrivals, 30);
  assert_int_equal(svc(r, "mid")->arrivals, 90);
  assert_int_equal(svc(r, "db")->arrivals, 270);
  assert_int_equal(edge(r, "c", "front")->worst_case, 3);
  assert_int_equal(edge(r, "front", "mid")->worst_case, 9);
  assert_int_equal(edge(r, "mid", "db")->worst_case, 27);
  assert_int_equal(edge(r, "mid", "db")->calls, 90);
  assert_int_equal(edge(r, "mid", "db")->attempts, 270);
  /* The failure travels up as UNAVAILABLE at every layer. */
  assert_int_equal(r->by_status.grpc[RETRY_GRPC_UNAVAILABLE], 10);
  run_free(&x);
}

/* A call made fanout times is that many calls: the worst case into db is 3 (the client) x 10
 * copies x 3 (each copy's own attempts), and a failing db sees exactly that per call. */
static void test_model_world_worst_case_multiplies_by_fanout(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '2s',"
           " 'services': {"
           "  'front': {'service_time': '1ms', 'workers': 1000, 'calls_mode': 'fanout',"
           "     'calls': [{'service': 'db', 'method': '/d.D/Do', 'fanout': 10, 'policy': " P3
           "}]},"
           "  'db': {'service_time': '1ms', 'workers': 1000,"
           "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
           " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'], 'policy': " P3
           ","
           "   'arrival': {'kind': 'script', 'at': ['0s']}, 'count': 4}}}",
           1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 4);
  assert_int_equal(edge(r, "c", "front")->worst_case, 3);
  assert_int_equal(edge(r, "front", "db")->worst_case, 90);
  assert_int_equal(edge(r, "front", "db")->max_attempts, 3);
  assert_int_equal(svc(r, "db")->arrivals, 4 * 90);
  run_free(&x);
  /* Seven layers of 1000 copies: 10^21 saturates (the world is only built, not run). */
  char text[2048];
  int n = snprintf(text, sizeof text, "{'duration': '1s', 'services': {");
  for (int i = 0; i < 7; i++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "'s%d': {'service_time': '1ms', 'calls_mode': 'fanout', 'calls': [{'service':"
                  " 's%d', 'method': '/s.S/Do', 'fanout': 1000}]},",
                  i, i + 1);
  snprintf(text + n, sizeof text - (size_t)n,
           "'s7': {'service_time': '1ms'}}, 'clients': {'c': {'target': 's0', 'methods':"
           " ['/s.S/Do'], 'arrival': {'kind': 'script', 'at': ['0s']}}}}");
  memset(&x, 0, sizeof x);
  x.s = load(text);
  retry_error err;
  retry_error_clear(&err);
  x.k = sim_kernel_create(0, NULL);
  x.w = model_world_create(expt_scenario_config(x.s, 0), x.k, 1, &err);
  assert_non_null(x.w);
  r = model_world_results(x.w);
  assert_true(edge(r, "s0", "s1")->worst_case == 1000);
  assert_true(edge(r, "s5", "s6")->worst_case == UINT64_C(1000000000000000000));
  assert_true(edge(r, "s6", "s7")->worst_case == UINT64_MAX);
  run_free(&x);
}

static void test_model_world_ledger_counts_duplicate_charges(void **state) {
  (void)state;
  /* INTERNAL after the charge, INTERNAL retryable: 3 attempts, 3 charges per call. */
  run x;
  run_text(&x,
           "{'duration': '1s', 'services': {'pay': {'service_time': '10ms',"
           "   'side_effect': 'before',"
           "   'faults': [{'kind': 'fail', 'status': 'INTERNAL'}]}},"
           " 'clients': {'c': {'count': 4, 'target': 'pay', 'methods': ['/p.P/Charge'],"
           "   'arrival': {'kind': 'script', 'at': ['0s', '0.5s']},"
           "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
           "     'initialBackoff': '0.1s', 'maxBackoff': '0.1s', 'backoffMultiplier': 1,"
           "     'retryableStatusCodes': ['INTERNAL']}}]}}}}",
           1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 8);
  assert_int_equal(r->attempts, 24);
  assert_int_equal(r->executions, 24);
  assert_int_equal(r->operations, 8);
  assert_int_equal(r->duplicates, 16);
  assert_int_equal(r->by_status.grpc[RETRY_GRPC_INTERNAL], 8);
  run_free(&x);
  /* The same with idempotency keys: one charge per operation. */
  run_text(&x,
           "{'duration': '1s', 'services': {'pay': {'service_time': '10ms',"
           "   'side_effect': 'before', 'dedup': true,"
           "   'faults': [{'kind': 'fail', 'status': 'INTERNAL'}]}},"
           " 'clients': {'c': {'count': 4, 'target': 'pay', 'methods': ['/p.P/Charge'],"
           "   'arrival': {'kind': 'script', 'at': ['0s', '0.5s']},"
           "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
           "     'initialBackoff': '0.1s', 'maxBackoff': '0.1s', 'backoffMultiplier': 1,"
           "     'retryableStatusCodes': ['INTERNAL']}}]}}}}",
           1);
  assert_int_equal(x.r->executions, 8);
  assert_int_equal(x.r->duplicates, 0);
  assert_int_equal(svc(x.r, "pay")->deduplicated, 16);
  run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Gateways, deadlines, hedging, fan-out, load balancing, memory
 * =================================================================== */

/* A gateway maps an unmapped FAILED_PRECONDITION to 500; a retry-on-5xx client in front of it
 * then sends 3 attempts, each reaching the backend once. */
static void test_model_world_gateway_maps_statuses(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '1s',"
           " 'services': {"
           "  'gw': {'space': 'http', 'service_time': '0s', 'workers': 100,"
           "    'calls': [{'service': 'be', 'method': '/b.B/Do', 'map': {'default': 500}}]},"
           "  'be': {'service_time': '1ms', 'workers': 100,"
           "    'faults': [{'kind': 'fail', 'status': 'FAILED_PRECONDITION'}]}},"
           " 'clients': {'c': {'target': 'gw', 'methods': ['/g.G/Do'], 'count': 5,"
           "   'arrival': {'kind': 'script', 'at': ['0s']},"
           "   'policy': {'methodConfig': [{'name': [{}], 'retrysim': {'statusSpace': 'http'},"
           "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s',"
           "       'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
           "       'retryableStatusCodes': ['5xx']}}]}}}}",
           1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 5);
  assert_int_equal(r->by_status.http[500], 5);
  assert_int_equal(svc(r, "gw")->arrivals, 15);
  assert_int_equal(svc(r, "be")->arrivals, 15);
  run_free(&x);
  /* Without the catch-all the canonical table applies: FAILED_PRECONDITION is 400, final. */
  run_text(&x,
           "{'duration': '1s',"
           " 'services': {"
           "  'gw': {'space': 'http', 'service_time': '0s', 'workers': 100,"
           "    'calls': [{'service': 'be', 'method': '/b.B/Do'}]},"
           "  'be': {'service_time': '1ms', 'workers': 100,"
           "    'faults': [{'kind': 'fail', 'status': 'FAILED_PRECONDITION'}]}},"
           " 'clients': {'c': {'target': 'gw', 'methods': ['/g.G/Do'], 'count': 5,"
           "   'arrival': {'kind': 'script', 'at': ['0s']},"
           "   'policy': {'methodConfig': [{'name': [{}], 'retrysim': {'statusSpace': 'http'},"
           "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s',"
           "       'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
           "       'retryableStatusCodes': ['5xx']}}]}}}}",
           1);
  assert_int_equal(x.r->by_status.http[400], 5);
  assert_int_equal(svc(x.r, "be")->arrivals, 5);
  run_free(&x);
}

/* The deadline covers every attempt: 1.5 s handler that refuses, 2 s timeout: two attempts,
 * DEADLINE_EXCEEDED, and the call ends at the deadline. */
static void test_model_world_deadline_spans_attempts(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '1s', 'services': {'pay': {'service_time': '1ms', 'side_effect': 'before',"
           "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'delay': '1.5s'}]}},"
           " 'clients': {'c': {'target': 'pay', 'methods': ['/p.P/Charge'], 'deadline': '2s',"
           "   'arrival': {'kind': 'script', 'at': ['0s']},"
           "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
           "     'initialBackoff': '0.1s', 'maxBackoff': '0.1s', 'backoffMultiplier': 1,"
           "     'retryableStatusCodes': ['UNAVAILABLE']}, 'retrysim': {'jitter': 'none'}}]}}}}",
           1);
  const model_results *r = x.r;
  assert_int_equal(r->attempts, 2);
  assert_int_equal(r->by_status.grpc[RETRY_GRPC_DEADLINE_EXCEEDED], 1);
  assert_int_equal(r->by_stop[RETRY_STOP_DEADLINE], 1);
  assert_int_equal(r->executions, 0);
  assert_int_equal(r->latency.max, 2000000000);
  /* The delayed refusal shows in the time series as in the summary (the second attempt's
   * would come at 3.1 s, after the run ended with its call). */
  double refused = 0;
  for (size_t c = 0; c < r->ts.n_columns; c++)
    if (strcmp(r->ts.names[c], "pay_rejected_rps") == 0)
      for (size_t b = 0; b < r->ts.n_buckets; b++)
        refused += r->ts.values[b * r->ts.n_columns + c] * (double)r->ts.bucket_ns / 1e9;
  assert_int_equal(r->services[0].rejected, 1);
  assert_true(fabs(refused - 1.0) < 1e-9);
  run_free(&x);
}

/* Seed000's stream rows at world level: a server stream of 5 messages breaks after 2. By
 * default it is not retried (the caller got 2); with retryStreaming and the allowlist it
 * restarts, and the caller sees 2 + 5 = 7 messages of which 2 again. */
static void stream_row(bool opt_in, int64_t attempts, int64_t items, int64_t dups) {
  char text[1400];
  snprintf(text, sizeof text,
           "{'duration': '1s', 'services': {'pay': {'service_time': '1ms',"
           "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'attempts': [1],"
           "     'after_headers': true, 'stream_items': 2}]}},"
           " 'clients': {'c': {'target': 'pay', 'arrival': {'kind': 'script', 'at': ['0s']},"
           "   'methods': [{'name': '/p.P/Export', 'stream': 'server', 'stream_items': 5}],"
           "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
           "     'initialBackoff': '0.1s', 'maxBackoff': '0.1s', 'backoffMultiplier': 1,"
           "     'retryableStatusCodes': ['UNAVAILABLE']}%s}]%s}}}}",
           opt_in ? ", 'retrysim': {'retryStreaming': true}" : "",
           opt_in ? ", 'retrysim': {'idempotentMethods': ['/p.P/Export']}" : "");
  run x;
  run_text(&x, text, 1);
  assert_int_equal(x.r->attempts, attempts);
  assert_int_equal(x.r->stream_items, items);
  assert_int_equal(x.r->stream_duplicates, dups);
  run_free(&x);
}

static void test_model_world_stream_replays_count_duplicates(void **state) {
  (void)state;
  stream_row(false, 1, 2, 0);
  stream_row(true, 2, 7, 2);
}

/* A call that ends exactly on a bucket's end, at the end of the run: its count and its latency
 * land in the same row (the bucket that starts then), whichever of the call's end and the
 * sample event runs first at that instant. */
static void test_model_world_latency_row_matches_count_row(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    run x;
    /* 100 ms ends on the 50 ms grid; 120 ms does not. */
    run_text(&x,
             i == 0 ? "{'duration': '50ms', 'drain': '1s', 'bucket': '50ms',"
                      " 'services': {'api': {'service_time': '100ms'}},"
                      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}"
                    : "{'duration': '50ms', 'drain': '1s', 'bucket': '50ms',"
                      " 'services': {'api': {'service_time': '120ms'}},"
                      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}",
             1);
    const model_timeseries *ts = &x.r->ts;
    int good = -1, p50 = -1;
    for (size_t c = 0; c < ts->n_columns; c++) {
      if (strcmp(ts->names[c], "goodput_rps") == 0) good = (int)c;
      if (strcmp(ts->names[c], "latency_p50_ms") == 0) p50 = (int)c;
    }
    assert_true(good >= 0 && p50 >= 0);
    assert_int_equal(ts->n_buckets, 3);
    for (size_t b = 0; b < ts->n_buckets; b++) {
      double g = ts->values[b * ts->n_columns + (size_t)good];
      double l = ts->values[b * ts->n_columns + (size_t)p50];
      /* The row with the call's count holds its latency, the others neither. */
      assert_true((g > 0) == (l > 0));
      if (g > 0) assert_true(b == 2 && fabs(l - (i == 0 ? 100 : 120)) < 1);
    }
    run_free(&x);
  }
}

/* The index of the time-series column called name, or -1. */
static int ts_col(const model_timeseries *ts, const char *name) {
  for (size_t c = 0; c < ts->n_columns; c++)
    if (strcmp(ts->names[c], name) == 0) return (int)c;
  return -1;
}

/* Column name summed over the buckets, times the bucket length: a rate column back to its
 * count. */
static double ts_total(const model_timeseries *ts, const char *name) {
  int c = ts_col(ts, name);
  assert_true(c >= 0);
  double sum = 0;
  for (size_t b = 0; b < ts->n_buckets; b++)
    sum += ts->values[b * ts->n_columns + (size_t)c];
  return sum * (double)ts->bucket_ns / 1e9;
}

/* Issue 10, item 1: an internal edge counts its own calls' stop reasons, statuses, latencies
 * and failures, and reports the shared state its callers (each replica of front) hold, in the
 * results and in its own time-series columns. */
/* Issue 13, item 4: the throttle's scope is the profile's. Under grpc-core-1.51 a replica is a
 * process and its callee a server name: its two call entries to db (different methods) drain
 * ONE bucket, as C-core's ServerRetryThrottleMap keeps; under the default profile each
 * channel keeps its own. db refuses everything; three requests fan out to both entries, each
 * with 2 attempts and maxTokens 10 (retries allowed while the count after a failure is > 5).
 * Two buckets: each edge goes 9 (retry), 8, 7 (retry), 6, 5 (throttled): 2 retries per edge,
 * 5 tokens left in each. One bucket: 9 and 8 (both retry), 7, 6, then 5, 4, 3, 2 throttled:
 * 2 retries in all, 2 tokens left, seen from both edges. With the second entry's maxTokens 4
 * the bucket takes the later config (C-core replaces the entry's parameters): 3 (retry), 2,
 * 1, then 0: one retry in all. */
static void run_two_entries(run *x, const char *profile, int max_tokens_b) {
  const char *fmt =
      "{'duration': '3s', 'drain': '1s', 'services': {"
      "  'front': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'calls': ["
      "     {'service': 'db', 'method': '/d.D/A', 'policy': %s},"
      "     {'service': 'db', 'method': '/d.D/B', 'policy': %s}]},"
      "  'db': {'service_time': '1ms', 'workers': 10,"
      "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
      " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'],"
      "   'arrival': {'kind': 'script', 'at': ['0s', '1s', '2s']}}}}";
  const char *pol =
      "{'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 2,"
      " 'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      " 'retryableStatusCodes': ['UNAVAILABLE']}}],"
      " 'retryThrottling': {'maxTokens': %d, 'tokenRatio': 0.1}%s}";
  char ext[100] = "";
  if (profile != NULL) snprintf(ext, sizeof ext, ", 'retrysim': {'profile': '%s'}", profile);
  char pa[600], pb[600], text[2500];
  snprintf(pa, sizeof pa, pol, 10, ext);
  snprintf(pb, sizeof pb, pol, max_tokens_b, ext);
  snprintf(text, sizeof text, fmt, pa, pb);
  run_text(x, text, 1);
}

/* The two edges front -> db (in the order of the call entries). */
static void two_edges(const model_results *r, const model_edge_stats **e) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_edges; i++)
    if (strcmp(r->edges[i].from, "front") == 0 && strcmp(r->edges[i].to, "db") == 0 && n < 2)
      e[n++] = &r->edges[i];
  assert_int_equal(n, 2);
}

static void test_model_world_throttle_scope_per_process_and_server_name(void **state) {
  (void)state;
  run x;
  const model_edge_stats *e[2];
  /* The default profile: one bucket per channel. */
  run_two_entries(&x, NULL, 10);
  two_edges(x.r, e);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(e[k]->calls, 3);
    assert_int_equal(e[k]->retries, 2);
    assert_int_equal(e[k]->by_stop[RETRY_STOP_THROTTLED], 1);
    assert_true(e[k]->state.has_throttle && fabs(e[k]->state.tokens_mean - 5.0) < 1e-9);
  }
  run_free(&x);
  /* grpc-core-1.51: one bucket for the replica's two channels to db. */
  run_two_entries(&x, "grpc-core-1.51", 10);
  two_edges(x.r, e);
  assert_int_equal(e[0]->retries + e[1]->retries, 2);
  assert_int_equal(e[0]->by_stop[RETRY_STOP_THROTTLED] + e[1]->by_stop[RETRY_STOP_THROTTLED], 4);
  for (int k = 0; k < 2; k++)
    assert_true(fabs(e[k]->state.tokens_mean - 2.0) < 1e-9);
  /* The time series follows the same bucket from both edges (their gauges walk the holders). */
  double t0 = x.r->ts.values[(x.r->ts.n_buckets - 1) * x.r->ts.n_columns +
                             (size_t)ts_col(&x.r->ts, "front->db_tokens")];
  assert_true(fabs(t0 - 2.0) < 1e-9);
  run_free(&x);
  /* Configs that differ: the later entry's maxTokens 4 governs the shared bucket. */
  run_two_entries(&x, "grpc-core-1.51", 4);
  two_edges(x.r, e);
  assert_int_equal(e[0]->retries + e[1]->retries, 1);
  for (int k = 0; k < 2; k++)
    assert_true(fabs(e[k]->state.tokens_mean - 0.0) < 1e-9);
  run_free(&x);
  /* The same world under the default profile: 10 and 4 tokens, 2 + 1 retries. */
  run_two_entries(&x, NULL, 4);
  two_edges(x.r, e);
  assert_int_equal(e[0]->retries, 2);
  assert_int_equal(e[1]->retries, 1);
  run_free(&x);
}

static void test_model_world_edge_by_stop_reason(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '5s', 'services': {"
           "  'front': {'service_time': '1ms', 'workers': 100, 'replicas': 2,"
           "    'calls': [{'service': 'db', 'method': '/d.D/Do', 'policy':"
           "      {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
           "       'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
           "       'retryableStatusCodes': ['UNAVAILABLE']}}],"
           "       'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}}}]},"
           "  'db': {'service_time': '1ms', 'workers': 100,"
           "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
           " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'],"
           "   'arrival': {'kind': 'open', 'rate': '100/s'}}}}",
           1);
  const model_results *r = x.r;
  const model_edge_stats *e = edge(r, "front", "db");
  assert_true(e->calls > 300);
  assert_int_equal(e->ok, 0);
  assert_int_equal(e->failed, e->calls);
  int64_t stops = 0;
  for (int k = 0; k < RETRY_STOP_N; k++)
    stops += e->by_stop[k];
  assert_int_equal(stops, e->calls);
  /* The throttle empties after a few failures: most calls stop throttled, some first ones
   * ran out of attempts. */
  assert_true(e->by_stop[RETRY_STOP_THROTTLED] > e->calls / 2);
  assert_true(e->by_stop[RETRY_STOP_MAX_ATTEMPTS] > 0);
  assert_int_equal(e->by_status.grpc[RETRY_GRPC_UNAVAILABLE], e->calls);
  assert_int_equal((int64_t)e->latency.count, e->calls);
  assert_int_equal((int64_t)e->latency_ok.count, 0);
  assert_int_equal(e->attempts, e->calls + e->retries);
  /* The shared state: each of front's 2 replicas holds a throttle, below half of its 10
   * tokens; nothing else is configured. */
  assert_int_equal(e->state.holders, 2);
  assert_true(e->state.has_throttle && !e->state.has_budget && !e->state.has_breaker &&
              !e->state.has_adaptive);
  assert_true(e->state.tokens_max < 5.0 && e->state.tokens_min <= e->state.tokens_mean);
  /* The front door's edge keeps none. */
  assert_int_equal(edge(r, "c", "front")->state.holders, 0);
  /* Its columns: counters that add up to the totals, and the throttle's tokens. */
  const model_timeseries *ts = &r->ts;
  assert_true(fabs(ts_total(ts, "front->db_attempt_rps") - (double)e->attempts) < 1e-6);
  assert_true(fabs(ts_total(ts, "front->db_retry_rps") - (double)e->retries) < 1e-6);
  assert_true(fabs(ts_total(ts, "front->db_failure_rps") - (double)e->failed) < 1e-6);
  assert_true(ts_col(ts, "front->db_tokens") >= 0);
  assert_true(ts_col(ts, "front->db_budget") < 0);
  assert_true(ts_col(ts, "front->db_reject_p") < 0);
  assert_true(ts_col(ts, "c->front_attempt_rps") >= 0);
  assert_true(ts_col(ts, "c->front_tokens") < 0);
  run_free(&x);
}

/* Issue 10, item 3: utilization counts the work still on a worker when the run ends. Two
 * closed-loop clients keep 2 workers busy through a 3 s run without drain: ~1.0 with 1 s
 * service times (today's figure was 0.667) and with 10 s ones (0.0). */
static void test_utilization_counts_work_in_progress(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '3s', 'drain': '0s', 'services': {'s': {'service_time': '%s',"
      "  'workers': 2}},"
      " 'clients': {'c': {'target': 's', 'methods': ['/s.S/M'], 'count': 2,"
      "   'arrival': {'kind': 'closed', 'think': '0s'}}}}";
  const char *times[] = {"1s", "10s"};
  for (int i = 0; i < 2; i++) {
    char text[512];
    snprintf(text, sizeof text, fmt, times[i]);
    run x;
    run_text(&x, text, 1);
    const model_service_stats *s = svc(x.r, "s");
    double u = s->busy_s / s->capacity_s;
    print_message("service time %s: utilization %.4f\n", times[i], u);
    assert_true(u > 0.99 && u <= 1.0 + 1e-9);
    run_free(&x);
  }
}

/* Issue 10, item 3: a client without a retry policy never ran out of attempts. Its
 * queue-full refusals stop with no_retry_policy, not max_attempts; a call whose deadline
 * passed still says deadline; and an internal edge without a policy says the same. */
static void test_no_policy_stop_reason(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '3s', 'services': {"
           "  'front': {'service_time': '1ms', 'workers': 100,"
           "    'calls': [{'service': 'db', 'method': '/d.D/Do'}]},"
           "  'db': {'service_time': '50ms', 'workers': 1, 'queue': {'capacity': 1}}},"
           " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'],"
           "   'arrival': {'kind': 'open', 'rate': '200/s'}},"
           "             'd': {'target': 'db', 'methods': ['/d.D/Do'], 'deadline': '20ms',"
           "   'arrival': {'kind': 'open', 'rate': '20/s'}}}}",
           1);
  const model_results *r = x.r;
  assert_true(r->calls_failed > 100);
  assert_int_equal(r->by_stop[RETRY_STOP_MAX_ATTEMPTS], 0);
  assert_true(r->by_stop[RETRY_STOP_NO_RETRY_POLICY] > 100);
  assert_int_equal(r->by_stop[RETRY_STOP_NO_RETRY_POLICY] + r->by_stop[RETRY_STOP_DEADLINE],
                   r->calls_failed);
  const model_edge_stats *e = edge(r, "front", "db");
  assert_int_equal(e->by_stop[RETRY_STOP_MAX_ATTEMPTS], 0);
  assert_int_equal(e->by_stop[RETRY_STOP_NO_RETRY_POLICY], e->failed);
  assert_true(e->by_status.grpc[RETRY_GRPC_RESOURCE_EXHAUSTED] +
                  e->by_status.grpc[RETRY_GRPC_UNAVAILABLE] >
              0);
  const model_edge_stats *d = edge(r, "d", "db");
  assert_true(d->by_stop[RETRY_STOP_DEADLINE] > 0);
  run_free(&x);
}

/* Issue 10, item 3: OK-only and failed-only latency columns. A fast refusal during [1 s, 2 s)
 * makes the failed latency small there; the OK latency keeps the service's 100 ms, where the
 * mixed p50 would drop. A bucket without such calls has no value (NaN). */
static void test_latency_ok_columns_leave_failures_out(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '3s', 'services': {'api': {'service_time': '100ms', 'workers': 100,"
           "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'start': '1s', 'end': '2s',"
           "     'rate': 0.8}]}},"
           " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/M'],"
           "   'arrival': {'kind': 'open', 'rate': '200/s'}}}}",
           1);
  const model_timeseries *ts = &x.r->ts;
  int ok50 = ts_col(ts, "latency_ok_p50_ms"), ok99 = ts_col(ts, "latency_ok_p99_ms");
  int f50 = ts_col(ts, "latency_failed_p50_ms"), f99 = ts_col(ts, "latency_failed_p99_ms");
  int all50 = ts_col(ts, "latency_p50_ms");
  assert_true(ok50 >= 0 && ok99 >= 0 && f50 >= 0 && f99 >= 0 && all50 >= 0);
  /* Bucket 0: only OK calls; bucket 1 (mostly refused): both; OK latency stays ~100 ms. */
  const double *b0 = ts->values, *b1 = ts->values + ts->n_columns;
  assert_true(fabs(b0[ok50] - 100) < 2 && isnan(b0[f50]) && isnan(b0[f99]));
  assert_true(fabs(b1[ok50] - 100) < 2 && b1[ok99] >= b1[ok50]);
  assert_true(b1[f50] < 10 && b1[all50] < 10);
  run_free(&x);
}

/* Two calls of one handler to one service are two operations, not duplicates; a retried
 * upstream request repeats both, and those repeats are duplicates. */
static void test_model_world_sibling_calls_are_separate_operations(void **state) {
  (void)state;
  for (int retried = 0; retried < 2; retried++) {
    char text[1200];
    snprintf(
        text, sizeof text,
        "{'duration': '1s', 'services': {"
        "  'front': {'service_time': '1ms', 'workers': 4,"
        "    'calls': [{'service': 'ledger', 'method': '/l.L/Debit'},"
        "              {'service': 'ledger', 'method': '/l.L/Credit'}]%s},"
        "  'ledger': {'service_time': '1ms', 'workers': 4, 'side_effect': 'before'}},"
        " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Transfer'],"
        "   'arrival': {'kind': 'script', 'at': ['0s', '0.1s', '0.2s']},"
        "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
        "     'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
        "     'retryableStatusCodes': ['UNAVAILABLE']}}]}}}}",
        retried ? ", 'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'attempts': [1]}]" : "");
    run x;
    run_text(&x, text, 1);
    assert_int_equal(x.r->operations, 6);
    assert_int_equal(x.r->executions, retried ? 12 : 6);
    assert_int_equal(x.r->duplicates, retried ? 6 : 0);
    run_free(&x);
  }
}

/* Deadline-aware servers drop expired work instead of doing it. */
static void test_model_world_deadline_aware_drops_expired(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {'s': {'service_time': '10ms', 'deadline': '%s',"
      "   'queue': {'capacity': 100000}}},"
      " 'clients': {'c': {'target': 's', 'methods': ['/s.S/M'], 'deadline': '50ms',"
      "   'arrival': {'kind': 'open', 'rate': '200/s'}}}}";
  char text[1024];
  run x;
  snprintf(text, sizeof text, fmt, "ignore");
  run_text(&x, text, 1);
  double wasted_ignore = svc(x.r, "s")->wasted_work_s;
  double busy_ignore = svc(x.r, "s")->busy_s;
  assert_int_equal(svc(x.r, "s")->expired, 0);
  run_free(&x);
  snprintf(text, sizeof text, fmt, "drop");
  run_text(&x, text, 1);
  const model_service_stats *s = svc(x.r, "s");
  /* Overloaded twice over: most requests expire in the queue and are dropped unworked. */
  assert_true(s->expired > 0);
  /* Both runs keep the one worker busy (utilization counts the work in progress at the end);
   * dropping expired work never adds worker time. */
  assert_true(s->busy_s <= busy_ignore * 1.001);
  assert_true(s->wasted_work_s < wasted_ignore);
  run_free(&x);
}

/* Hedging: a replica that stalls 400 ms on first attempts; a hedge after 50 ms answers. */
static void test_model_world_hedge_cuts_the_stall(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '1s', 'services': {'s': {'service_time': '2ms', 'workers': 10,"
           "   'faults': [{'kind': 'stall', 'delay': '400ms', 'attempts': [1]}]}},"
           " 'clients': {'c': {'target': 's', 'methods': ['/s.S/Get'], 'count': 3,"
           "   'arrival': {'kind': 'script', 'at': ['0s']},"
           "   'policy': {'methodConfig': [{'name': [{}], 'hedgingPolicy': {'maxAttempts': 2,"
           "     'hedgingDelay': '0.05s'}}]}}}}",
           1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_ok, 3);
  assert_int_equal(r->hedges, 3);
  assert_int_equal(r->attempts, 6);
  assert_true(r->latency.max <= 60000000);
  assert_true(r->latency.min >= 52000000);
  /* The stalled first attempts finish later for nobody. */
  assert_int_equal(svc(r, "s")->abandoned, 3);
  run_free(&x);
}

/* Fan-out waits for every call; sequential stops at the first failure. */
static void test_model_world_fanout_waits_for_all_sequential_stops_at_a_failure(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': '%s', 'calls': ["
      "     {'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "     {'service': 'a', 'method': '/a.A/N'}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '30ms', 'workers': 10,"
      "        'faults': [{'kind': 'fail', 'status': 'NOT_FOUND'}]}},"
      " 'clients': {'c': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  char text[1500];
  run x;
  snprintf(text, sizeof text, fmt, "fanout");
  run_text(&x, text, 1);
  assert_int_equal(svc(x.r, "a")->arrivals, 2);
  assert_int_equal(svc(x.r, "b")->arrivals, 1);
  assert_int_equal(x.r->by_status.grpc[RETRY_GRPC_NOT_FOUND], 1);
  /* 1 ms of work, then the slowest branch (30 ms). */
  assert_int_equal(x.r->latency.max, 31000000);
  run_free(&x);
  snprintf(text, sizeof text, fmt, "sequential");
  run_text(&x, text, 1);
  assert_int_equal(svc(x.r, "a")->arrivals, 1);
  assert_int_equal(svc(x.r, "b")->arrivals, 1);
  assert_int_equal(x.r->latency.max, 41000000);
  run_free(&x);
}

/* "fanout": 100 on one call is the same world as 100 entries of that call: the same calls,
 * attempts, operations and latencies, draw for draw. */
static void test_model_world_fanout_count_is_that_many_calls(void **state) {
  (void)state;
  char entries[12000], count[1500];
  const char *head =
      "{'duration': '5s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 100, 'calls_mode': 'fanout', 'calls': [";
  const char *tail =
      "]}, 'leaf': {'replicas': 4, 'workers': 64, 'side_effect': 'before',"
      "            'service_time': {'dist': 'exponential', 'mean': '5ms'}}},"
      " 'clients': {'c': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'open', 'rate': '50/s'}}}}";
  size_t n = (size_t)snprintf(entries, sizeof entries, "%s", head);
  for (int i = 0; i < 100; i++)
    n += (size_t)snprintf(entries + n, sizeof entries - n,
                          "%s{'service': 'leaf', 'method': '/l.L/M'}", i ? ", " : "");
  snprintf(entries + n, sizeof entries - n, "%s", tail);
  snprintf(count, sizeof count, "%s{'service': 'leaf', 'method': '/l.L/M', 'fanout': 100}%s", head,
           tail);
  run a, b;
  run_text(&a, entries, 1);
  run_text(&b, count, 1);
  assert_true(a.r->calls_started > 100);
  assert_int_equal(a.r->calls_ok, b.r->calls_ok);
  /* 100 entries are 100 edges; one entry of 100 copies is one edge with all their calls. */
  int64_t calls = 0, attempts = 0;
  for (size_t i = 0; i < a.r->n_edges; i++)
    if (strcmp(a.r->edges[i].from, "agg") == 0) {
      calls += a.r->edges[i].calls;
      attempts += a.r->edges[i].attempts;
    }
  assert_int_equal(calls, 100 * a.r->calls_started);
  assert_int_equal(edge(b.r, "agg", "leaf")->calls, calls);
  assert_int_equal(edge(b.r, "agg", "leaf")->attempts, attempts);
  assert_int_equal(svc(b.r, "leaf")->arrivals, svc(a.r, "leaf")->arrivals);
  /* Each copy is an operation of its own, as each entry is. */
  assert_int_equal(b.r->operations, a.r->operations);
  assert_int_equal(b.r->operations, 100 * a.r->calls_started);
  assert_int_equal(b.r->duplicates, 0);
  assert_true(b.r->latency.sum == a.r->latency.sum);
  assert_int_equal(b.r->latency.max, a.r->latency.max);
  run_free(&a);
  run_free(&b);
}

/* wait_for k of n: the handler goes on once k calls succeeded, or once n - k + 1 failed; with
 * cancel_rest false the calls left run to their end (their work and side effects count),
 * unheard; by default the one left is cancelled, and c, whose worker already holds it, still
 * executes. Leaves of 10, 20 and 30 ms behind 1 ms of work. */
static void test_model_world_wait_for_goes_on_at_k_successes_or_n_minus_k_plus_1_failures(
    void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "     'cancel_rest': false,"
      "     'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "               {'service': 'c', 'method': '/c.C/M'}]},"
      "  'a': {'service_time': '10ms', 'side_effect': 'before'%s},"
      "  'b': {'service_time': '20ms', 'side_effect': 'before'%s},"
      "  'c': {'service_time': '30ms', 'side_effect': 'before'}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  const char *fail = ", 'faults': [{'kind': 'fail', 'status': 'NOT_FOUND'}]";
  char text[1500];
  run x;
  /* 2 of 3 OK at 20 ms: done at 21 ms, c still runs and executes. */
  snprintf(text, sizeof text, fmt, "", "");
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 21000000);
  assert_int_equal(svc(x.r, "c")->executions, 1);
  assert_int_equal(edge(x.r, "agg", "c")->ok, 1);
  assert_false(edge(x.r, "agg", "c")->can_cancel);
  run_free(&x);
  /* The default cancels c's call at 21 ms: it counts as cancelled, not OK nor failed, and its
   * attempt, already worked, still executes; the caller's latency is unchanged. */
  char dflt[1500];
  snprintf(dflt, sizeof dflt, fmt, "", "");
  char *off = strstr(dflt, "'cancel_rest': false,");
  assert_non_null(off);
  memset(off, ' ', strlen("'cancel_rest': false,"));
  run_text(&x, dflt, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 21000000);
  const model_edge_stats *ec = edge(x.r, "agg", "c");
  assert_true(ec->can_cancel);
  assert_int_equal(ec->ok, 0);
  assert_int_equal(ec->failed, 0);
  assert_int_equal(ec->cancelled, 1);
  assert_int_equal(ec->cancelled_unworked, 0);
  assert_int_equal(ec->by_stop[RETRY_STOP_CANCELLED], 1);
  assert_int_equal(ec->by_status.grpc[RETRY_GRPC_CANCELLED], 1);
  assert_int_equal(ec->latency.count, 0);
  assert_int_equal(svc(x.r, "c")->executions, 1);
  assert_int_equal(svc(x.r, "c")->abandoned, 1); /* its reply found nobody */
  run_free(&x);
  /* b fails: the second success is c's, at 30 ms; OK despite a failure. */
  snprintf(text, sizeof text, fmt, "", fail);
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 31000000);
  run_free(&x);
  /* a and b fail: 2 = n - k + 1 failures at 20 ms, the first failure's status; c finishes. */
  snprintf(text, sizeof text, fmt, fail, fail);
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_failed, 1);
  assert_int_equal(x.r->by_status.grpc[RETRY_GRPC_NOT_FOUND], 1);
  assert_int_equal(x.r->latency.max, 21000000);
  assert_int_equal(svc(x.r, "c")->executions, 1);
  run_free(&x);
}

/* A quorum read, 2 of 3 copies of one call, each failing with probability 0.3 on its own:
 * the share of OK calls is P(at least 2 of 3) = 3 x 0.7^2 x 0.3 + 0.7^3 = 0.784, within four
 * binomial standard errors over 2000 calls. */
static void test_model_world_wait_for_quorum_succeeds_as_the_binomial_says(void **state) {
  (void)state;
  run x;
  run_text(
      &x,
      "{'duration': '20s', 'services': {"
      "  'coord': {'service_time': '1ms', 'workers': 50, 'calls_mode': 'fanout',"
      "     'wait_for': 2, 'calls': [{'service': 'store', 'method': '/s.S/Get', 'fanout': 3}]},"
      "  'store': {'replicas': 3, 'workers': 50, 'service_time': {'dist': 'exponential',"
      "     'mean': '5ms'}, 'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.3}]}},"
      " 'clients': {'c': {'target': 'coord', 'methods': ['/k.K/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '100/s'}}}}",
      1);
  double n = (double)x.r->calls_started, ok = (double)x.r->calls_ok / n;
  assert_true(n > 1800);
  assert_true(fabs(ok - 0.784) < 4 * sqrt(0.784 * 0.216 / n));
  /* Every copy was sent, the ones left to finish included. */
  assert_int_equal(edge(x.r, "coord", "store")->calls, 3 * x.r->calls_started);
  run_free(&x);
}

/* Hedging inside a k-of-n fan-out: a hedged call is one of the n, however many attempts it
 * sends, and it counts once, with its engine's verdict. First attempts stall for 400 ms; each
 * call's hedge (5 ms later) answers at 25 ms, so 2 of 3 are reached at 1 + 25 ms; the edge has
 * 3 calls and 6 hedges, not 9 calls. */
static void test_model_world_wait_for_counts_a_hedged_call_once(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '1s', 'services': {"
           "  'coord': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout',"
           "     'wait_for': 2, 'calls': [{'service': 'store', 'method': '/s.S/Get', 'fanout': 3,"
           "       'policy': {'methodConfig': [{'name': [{}], 'hedgingPolicy': {'maxAttempts': 3,"
           "         'hedgingDelay': '0.005s'}}]}}]},"
           "  'store': {'workers': 20, 'service_time': '20ms',"
           "     'faults': [{'kind': 'stall', 'delay': '400ms', 'attempts': [1]}]}},"
           " 'clients': {'c': {'target': 'coord', 'methods': ['/k.K/Get'],"
           "   'arrival': {'kind': 'script', 'at': ['0s']}}}}",
           1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 26000000);
  const model_edge_stats *e = edge(x.r, "coord", "store");
  assert_int_equal(e->calls, 3);
  /* The third call's answer is cancelled: the 2 of 3 came first at the same moment. */
  assert_int_equal(e->ok, 2);
  assert_int_equal(e->cancelled, 1);
  assert_int_equal(e->hedges, 6);
  run_free(&x);
}

/* cancel_rest: a 2-of-3 fan-out's leftover call is cancelled when the handler goes on. Two
 * requests reach agg at once; c has one worker, so the first request's call to c is worked
 * (0 to 30 ms) while the second's waits in c's queue. At 21 ms both handlers have 2 of 3:
 * the queued attempt leaves c's queue unworked, the worked one finishes (its side effect
 * counts) and its reply is dropped. c serves and executes 1 request instead of 2. The same
 * holds for a bare call and for one run by the engine (a retry policy on the edge), and an
 * attempt still on its way out (a 50 ms hop to c) is dropped as it lands: c never sees it. */
/* A call that already decided to end at its deadline (a retry policy waits the deadline out
 * when the next backoff would pass it) is still running to its caller: a cancel ends it then,
 * once, cancelled. Ended twice, it was reported and freed twice. */
static void test_model_world_cancel_ends_a_call_waiting_out_its_deadline_once(void **state) {
  (void)state;
  const char *text =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "    'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "      {'service': 'c', 'method': '/c.C/M', 'deadline': '100ms', 'policy': {'methodConfig':"
      "        [{'name': [{}], 'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '1s',"
      "          'maxBackoff': '1s', 'backoffMultiplier': 1,"
      "          'retryableStatusCodes': ['UNAVAILABLE']}}]}}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '20ms', 'workers': 10},"
      "  'c': {'service_time': '5ms', 'workers': 10, 'faults': [{'kind': 'fail', 'status':"
      "    'UNAVAILABLE', 'rate': 1, 'start': '0s', 'end': '1s'}]}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  run x;
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  const model_edge_stats *e = edge(x.r, "agg", "c");
  assert_int_equal(e->calls, 1);
  assert_int_equal(e->cancelled, 1);
  assert_int_equal(e->failed, 0);
  assert_int_equal(e->by_stop[RETRY_STOP_CANCELLED], 1);
  assert_int_equal(e->by_stop[RETRY_STOP_DEADLINE], 0);
  /* ended when b answered (about 21 ms in), not at its 100 ms deadline */
  assert_true(x.r->latency.max < 30000000);
  run_free(&x);
}

/* A call that gives its blocking limiter's permit back lets a waiting sibling start; that one
 * is refused at once (the breaker just opened) and decides the fan-out, which cancels what is
 * left, the first call among them, though it is in the middle of its own end. It must end
 * once, failed as it was, not cancelled over it. */
static void test_model_world_cancel_leaves_a_call_in_its_own_end_to_end(void **state) {
  (void)state;
  const char *text =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 3,"
      "    'calls': [{'service': 'a', 'method': '/a.A/M'},"
      "      {'service': 'c', 'method': '/c.C/M', 'fanout': 2, 'policy': {'retrysim': {"
      "        'concurrencyLimit': {'type': 'aimd', 'initialLimit': 1, 'minLimit': 1,"
      "          'maxLimit': 1, 'blocking': true},"
      "        'circuitBreaker': {'type': 'consecutive', 'failureThreshold': 1}}}}]},"
      "  'a': {'service_time': '100ms', 'workers': 10},"
      "  'c': {'service_time': '5ms', 'workers': 10, 'faults': [{'kind': 'fail', 'status':"
      "    'UNAVAILABLE', 'rate': 1, 'start': '0s', 'end': '1s'}]}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  run x;
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_failed, 1);
  const model_edge_stats *c = edge(x.r, "agg", "c");
  assert_int_equal(c->calls, 2);
  assert_int_equal(c->failed, 2);
  assert_int_equal(c->cancelled, 0);
  assert_int_equal(c->by_stop[RETRY_STOP_BREAKER_OPEN], 1);
  const model_edge_stats *a = edge(x.r, "agg", "a");
  assert_int_equal(a->calls, 1);
  assert_int_equal(a->cancelled, 1);
  run_free(&x);
}

static void test_model_world_wait_for_cancels_the_calls_it_leaves(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "               {'service': 'c', 'method': '/c.C/M'%s}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '20ms', 'workers': 10},"
      "  'c': {'service_time': '30ms', 'workers': 1, 'side_effect': 'before'}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s', '0s']}}}}";
  const char *policy =
      ", 'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
      "   'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "   'retryableStatusCodes': ['UNAVAILABLE']}}]}";
  const char *extra[2] = {"", policy};
  char text[2000];
  run x;
  for (int k = 0; k < 2; k++) {
    snprintf(text, sizeof text, fmt, "false", extra[k]);
    run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(svc(x.r, "c")->served, 2);
    assert_int_equal(svc(x.r, "c")->executions, 2);
    assert_int_equal(edge(x.r, "agg", "c")->ok, 2);
    run_free(&x);
    snprintf(text, sizeof text, fmt, "true", extra[k]);
    run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 21000000);
    const model_service_stats *c = svc(x.r, "c");
    assert_int_equal(c->arrivals, 2);
    assert_int_equal(c->served, 1);
    assert_int_equal(c->executions, 1);
    assert_int_equal(c->abandoned, 1);
    const model_edge_stats *e = edge(x.r, "agg", "c");
    assert_int_equal(e->calls, 2);
    assert_int_equal(e->cancelled, 2);
    assert_int_equal(e->cancelled_unworked, 1);
    assert_int_equal(e->attempts, 2); /* nothing retried after the cancel */
    assert_int_equal(e->ok + e->failed, 0);
    run_free(&x);
  }
  /* On its way out: with a 50 ms hop to c both attempts are still travelling at 21 ms. */
  snprintf(text, sizeof text, fmt, "true", ", 'network': '50ms'");
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 2);
  assert_int_equal(svc(x.r, "c")->arrivals, 0);
  assert_int_equal(svc(x.r, "c")->served, 0);
  assert_int_equal(edge(x.r, "agg", "c")->cancelled_unworked, 2);
  run_free(&x);
}

/* A call waiting for a blocking limiter's permit is cancelled without reaching the engine:
 * agg's one replica holds a limit of 1 toward c, so the second of its two copies of the call
 * to c waits; at 21 ms (2 of 4 OK) it leaves the wait queue first (nothing sent), then the
 * first copy is cancelled in the engine and its permit given back, which starts nobody. */
static void test_model_world_wait_for_cancels_a_call_waiting_for_a_permit(void **state) {
  (void)state;
  run x;
  run_text(
      &x,
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "     'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "               {'service': 'c', 'method': '/c.C/M', 'fanout': 2, 'policy': {'retrysim': {"
      "                 'concurrencyLimit': {'type': 'aimd', 'initialLimit': 1, 'minLimit': 1,"
      "                 'maxLimit': 1, 'blocking': true}}}}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '20ms', 'workers': 10},"
      "  'c': {'service_time': '30ms', 'workers': 10}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}",
      1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 21000000);
  const model_edge_stats *e = edge(x.r, "agg", "c");
  assert_int_equal(e->calls, 2);
  assert_int_equal(e->attempts, 1); /* the waiting call never sent */
  assert_int_equal(e->cancelled, 2);
  assert_int_equal(svc(x.r, "c")->arrivals, 1);
  run_free(&x);
}

/* The k-of-n cancel travels down the call graph. agg goes on at 1 of 2 (fast answers at
 * 11 ms); its call to mid is then cancelled while mid's handler waits for its call to db
 * (50 ms of work, one worker): two requests at once, so one db attempt is worked (2 to 52 ms)
 * and the other waits in db's queue. The cancel reaches db: the queued attempt leaves the
 * queue unworked, the worked one finishes (its side effect counts) and its reply is dropped;
 * mid's handlers end at 11 ms without a reply (10 ms of worker time each, wasted). The
 * top-level latency is the fast branch's. The same with an engine call (a retry policy) on
 * mid -> db, and with a tier more (mid -> mid2 -> db). With cancel_rest false nothing is
 * cancelled: every call runs to its end, unheard, as before the cancel travelled. */
static void test_model_world_cancel_reaches_the_calls_of_a_handler_waiting_for_them(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 1,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'fast', 'method': '/f.F/M'}, {'service': 'mid',"
      "       'method': '/m.M/M'}]},"
      "  'fast': {'service_time': '10ms', 'workers': 10},"
      "  'mid': {'service_time': '1ms', 'workers': 10,"
      "     'calls': [{'service': '%s', 'method': '/d.D/M'%s}]},"
      "  'mid2': {'service_time': '0ms', 'workers': 10,"
      "     'calls': [{'service': 'db', 'method': '/d.D/M'%s}]},"
      "  'db': {'service_time': '50ms', 'workers': 1, 'side_effect': 'before'}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s', '0s']}}}}";
  const char *policy =
      ", 'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
      "   'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "   'retryableStatusCodes': ['UNAVAILABLE']}}]}";
  char text[2500];
  run x;
  for (int k = 0; k < 3; k++) {
    const char *pol = k == 1 ? policy : "";
    const char *via = k == 2 ? "mid2" : "db"; /* who calls db */
    const char *from = k == 2 ? "mid2" : "mid";
    snprintf(text, sizeof text, fmt, "false", via, pol, pol);
    run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 11000000);
    assert_int_equal(svc(x.r, "mid")->served, 2);
    assert_false(svc(x.r, "mid")->has_cancel);
    assert_int_equal(svc(x.r, "db")->served, 2);
    assert_int_equal(svc(x.r, "db")->executions, 2);
    assert_int_equal(edge(x.r, from, "db")->ok, 2);
    assert_false(edge(x.r, from, "db")->can_cancel);
    run_free(&x);
    snprintf(text, sizeof text, fmt, "true", via, pol, pol);
    run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 11000000);
    const model_service_stats *mid = svc(x.r, "mid");
    assert_true(mid->has_cancel);
    assert_int_equal(mid->arrivals, 2);
    assert_int_equal(mid->served, 0);
    assert_int_equal(mid->cancelled, 2);
    assert_int_equal(mid->abandoned, 0); /* no reply went back */
    assert_true(fabs(mid->busy_s - 0.020) < 1e-9);
    assert_true(fabs(mid->wasted_work_s - 0.020) < 1e-9);
    if (k == 2) assert_int_equal(svc(x.r, "mid2")->cancelled, 2);
    assert_int_equal(edge(x.r, "agg", "mid")->cancelled, 2);
    assert_int_equal(edge(x.r, "agg", "mid")->cancelled_unworked, 0);
    const model_edge_stats *e = edge(x.r, from, "db");
    assert_true(e->can_cancel);
    assert_int_equal(e->calls, 2);
    assert_int_equal(e->cancelled, 2);
    assert_int_equal(e->cancelled_unworked, 1); /* the queued one */
    assert_int_equal(e->attempts, 2);           /* nothing retried after the cancel */
    assert_int_equal(e->ok + e->failed, 0);
    const model_service_stats *db = svc(x.r, "db");
    assert_false(db->has_cancel); /* no calls: no handler to cut short */
    assert_int_equal(db->arrivals, 2);
    assert_int_equal(db->served, 1);
    assert_int_equal(db->executions, 1); /* a side effect already done stays */
    assert_int_equal(db->abandoned, 1);
    run_free(&x);
  }
}

/* A cancel that reaches a handler still at work does not interrupt it, but the handler makes
 * no calls when its work ends (its context is done, so they would fail at once) and its
 * reply is dropped: mid works 20 ms, agg cancels at 11 ms, db never hears of the requests.
 * A side effect before the calls happens; one after them does not (the calls failed). */
static void test_model_world_cancel_reaching_a_working_handler_stops_its_calls(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 1,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'fast', 'method': '/f.F/M'}, {'service': 'mid',"
      "       'method': '/m.M/M'}]},"
      "  'fast': {'service_time': '10ms', 'workers': 10},"
      "  'mid': {'service_time': '20ms', 'workers': 10, 'side_effect': '%s',"
      "     'calls': [{'service': 'db', 'method': '/d.D/M'}]},"
      "  'db': {'service_time': '50ms', 'workers': 10}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s', '0s']}}}}";
  const char *effect[2] = {"before", "after"};
  char text[2000];
  run x;
  for (int k = 0; k < 2; k++) {
    snprintf(text, sizeof text, fmt, "false", effect[k]);
    run_text(&x, text, 1);
    assert_int_equal(svc(x.r, "db")->arrivals, 2);
    assert_int_equal(svc(x.r, "mid")->executions, 2);
    run_free(&x);
    snprintf(text, sizeof text, fmt, "true", effect[k]);
    run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 11000000);
    const model_service_stats *mid = svc(x.r, "mid");
    assert_int_equal(mid->served, 2); /* the work was not interrupted */
    assert_int_equal(mid->cancelled, 2);
    assert_int_equal(mid->abandoned, 2);
    assert_int_equal(mid->executions, k == 0 ? 2 : 0);
    assert_int_equal(edge(x.r, "mid", "db")->calls, 0);
    assert_int_equal(svc(x.r, "db")->arrivals, 0);
    run_free(&x);
  }
}

/* Sequential calls: no call starts after the cancel. mid calls db (50 ms) then db2; the
 * cancel at 11 ms ends db's call and mid's handler, so db2 is never called. */
static void test_model_world_cancel_starts_no_further_sequential_call(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 1,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'fast', 'method': '/f.F/M'}, {'service': 'mid',"
      "       'method': '/m.M/M'}]},"
      "  'fast': {'service_time': '10ms', 'workers': 10},"
      "  'mid': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'sequential',"
      "     'calls': [{'service': 'db', 'method': '/d.D/M'}, {'service': 'db2',"
      "       'method': '/d.D/N'}]},"
      "  'db': {'service_time': '50ms', 'workers': 10},"
      "  'db2': {'service_time': '1ms', 'workers': 10}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  char text[2000];
  run x;
  snprintf(text, sizeof text, fmt, "false");
  run_text(&x, text, 1);
  assert_int_equal(svc(x.r, "db2")->arrivals, 1);
  assert_int_equal(svc(x.r, "mid")->served, 1);
  run_free(&x);
  snprintf(text, sizeof text, fmt, "true");
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(svc(x.r, "mid")->cancelled, 1);
  assert_int_equal(edge(x.r, "mid", "db")->cancelled, 1);
  assert_int_equal(edge(x.r, "mid", "db2")->calls, 0);
  assert_int_equal(svc(x.r, "db2")->arrivals, 0);
  assert_int_equal(svc(x.r, "db")->abandoned, 1);
  run_free(&x);
}

/* A retry that avoids the previous replica never meets the broken one twice. */
static void test_model_world_lb_avoids_previous_replica(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {'s': {'replicas': 2, 'workers': 100, 'service_time': '1ms',"
      "   'lb': {'kind': 'random', 'avoid_previous': %s},"
      "   'faults': [{'kind': 'down', 'replicas': [0]}]}},"
      " 'clients': {'c': {'target': 's', 'methods': ['/s.S/M'],"
      "   'arrival': {'kind': 'open', 'rate': '100/s'},"
      "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 2,"
      "     'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "     'retryableStatusCodes': ['UNAVAILABLE']}}]}}}}";
  char text[1500];
  run x;
  snprintf(text, sizeof text, fmt, "true");
  run_text(&x, text, 1);
  assert_int_equal(x.r->calls_failed, 0);
  run_free(&x);
  snprintf(text, sizeof text, fmt, "false");
  run_text(&x, text, 1);
  /* Random choice: about a quarter of the calls meet the dead replica twice. */
  double f = (double)x.r->calls_failed / (double)x.r->calls_started;
  assert_true(f > 0.18 && f < 0.32);
  run_free(&x);
}

/* Closed loop with a user-level retry: every failed call is tried again by the user, and the
 * ledger counts both tries as one operation. */
/* Issue 14: a concurrency limiter on a client edge. One client sends 200 calls/s to a
 * service that takes 100 ms with no queueing: 20 calls would be in flight, but an AIMD limit
 * pinned at 5 (min = max = 5) admits 5 at a time, about 50/s; the others end at once,
 * throttled, with UNAVAILABLE and no attempt. The time series carries the limit (5) and the
 * permits held (at most 5). */
static void test_model_world_concurrency_limit_refuses_above_the_limit(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '5s', 'services': {"
           "  'svc': {'service_time': '100ms', 'workers': 1000}},"
           " 'clients': {'c': {'target': 'svc', 'methods': ['/s.S/Do'],"
           "   'arrival': {'kind': 'open', 'rate': '200/s'},"
           "   'policy': {'retrysim': {'concurrencyLimit': {'type': 'aimd', 'initialLimit': 5,"
           "     'minLimit': 5, 'maxLimit': 5}}}}}}",
           1);
  const model_results *r = x.r;
  const model_edge_stats *e = edge(r, "c", "svc");
  assert_true(e->calls > 800);
  int64_t refused = e->by_stop[RETRY_STOP_THROTTLED];
  assert_true(refused > e->calls / 2);
  assert_int_equal(e->attempts, e->calls - refused);
  assert_int_equal(e->by_status.grpc[RETRY_GRPC_UNAVAILABLE], refused);
  double admitted_per_s = (double)(e->calls - refused) / 5.0;
  assert_true(admitted_per_s > 40 && admitted_per_s < 55);
  const model_timeseries *ts = &r->ts;
  int cl = ts_col(ts, "c->svc_limit"), cf = ts_col(ts, "c->svc_limit_in_flight");
  assert_true(cl >= 0 && cf >= 0);
  double held = 0;
  for (size_t b = 0; b + 1 < ts->n_buckets; b++) {
    assert_true(ts->values[b * ts->n_columns + (size_t)cl] == 5.0);
    double f = ts->values[b * ts->n_columns + (size_t)cf];
    assert_true(f >= 0 && f <= 5.0);
    held += f;
  }
  assert_true(held / (double)(ts->n_buckets - 1) > 3.5);
  assert_int_equal(ts_col(ts, "c->svc_aws_fill_rate"), -1);
  run_free(&x);
}

/* Netflix's BlockingLimiter around a limit of 5 (100 ms calls, 20 made at once by one
 * process): a call above the limit waits for a permit, first come first served, and is
 * refused only when its wait is over. Without a timeout all 20 succeed, in waves of 5 (the
 * last waited 300 ms); with a 150 ms timeout the second wave (waited 100 ms) gets in and the
 * other 10 are refused at 150 ms; without blocking 15 are refused at once. */
static void blocking_run(run *x, const char *limit_extra) {
  char text[2048];
  int n = snprintf(text, sizeof text,
                   "{'duration': '2s', 'services': {"
                   "  'svc': {'service_time': '100ms', 'workers': 1000}},"
                   " 'clients': {'c': {'target': 'svc', 'methods': ['/s.S/Do'],"
                   "   'arrival': {'kind': 'script', 'at': [");
  for (int i = 0; i < 20; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%s'0s'", i ? ", " : "");
  snprintf(text + n, sizeof text - (size_t)n,
           "]}, 'policy': {'retrysim': {'concurrencyLimit': {'type': 'aimd',"
           " 'initialLimit': 5, 'minLimit': 5, 'maxLimit': 5%s}}}}}}",
           limit_extra);
  run_text(x, text, 1);
}

static void test_model_world_blocking_limit_waits_for_a_permit(void **state) {
  (void)state;
  run x;
  blocking_run(&x, ", 'blocking': true");
  const model_edge_stats *e = edge(x.r, "c", "svc");
  assert_int_equal(e->calls, 20);
  assert_int_equal(e->ok, 20);
  assert_int_equal(e->attempts, 20);
  assert_int_equal(e->by_stop[RETRY_STOP_THROTTLED], 0);
  int64_t p25 = sim_hist_quantile(&e->latency, 0.25), max = sim_hist_quantile(&e->latency, 1.0);
  assert_true(p25 >= 99000000 && p25 <= 101000000);  /* the first wave: no wait */
  assert_true(max >= 399000000 && max <= 401000000); /* the fourth: 300 ms of it waiting */
  run_free(&x);

  blocking_run(&x, ", 'blocking': true, 'blockingTimeout': '0.15s'");
  e = edge(x.r, "c", "svc");
  assert_int_equal(e->ok, 10);
  assert_int_equal(e->attempts, 10);
  assert_int_equal(e->by_stop[RETRY_STOP_THROTTLED], 10);
  assert_int_equal(e->by_status.grpc[RETRY_GRPC_UNAVAILABLE], 10);
  /* the refused ones waited their 150 ms; the second wave took 100 ms + 100 ms */
  max = sim_hist_quantile(&e->latency, 1.0);
  assert_true(max >= 199000000 && max <= 201000000);
  assert_true(sim_hist_quantile(&e->latency_ok, 0.75) >= 199000000);
  run_free(&x);

  blocking_run(&x, "");
  e = edge(x.r, "c", "svc");
  assert_int_equal(e->ok, 5);
  assert_int_equal(e->by_stop[RETRY_STOP_THROTTLED], 15);
  run_free(&x);
}

static void test_model_world_user_retries_count_as_one_operation(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '10s', 'drain': '1s', 'services': {'s': {'service_time': '10ms',"
           "   'workers': 100, 'side_effect': 'before',"
           "   'faults': [{'kind': 'fail', 'status': 'INTERNAL'}]}},"
           " 'clients': {'u': {'count': 10, 'target': 's', 'methods': ['/s.S/M'],"
           "   'arrival': {'kind': 'closed', 'think': '1s', 'user_retries': 1,"
           "               'user_retry_delay': '90ms'}}}}",
           1);
  const model_results *r = x.r;
  /* Each client: think 1 s, call (10 ms), refresh after 90 ms, call again: 1.2 s per cycle. */
  assert_true(r->calls_started >= 80);
  assert_int_equal(r->executions, r->calls_started);
  assert_true(r->duplicates >= r->calls_started / 2 - 10);
  run_free(&x);
}

/* A breaker that opens refuses calls inside their start: a closed-loop client that retries by
 * hand must still account for its operation (the ledger settles, nothing leaks under ASan). */
static void test_model_world_breaker_refusals_settle_user_retried_operations(void **state) {
  (void)state;
  run x;
  run_text(
      &x,
      "{'duration': '20s', 'services': {'s': {'service_time': '5ms', 'workers': 10,"
      "   'side_effect': 'before', 'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE'}]}},"
      " 'clients': {'u': {'count': 3, 'target': 's', 'methods': ['/s.S/M'],"
      "   'arrival': {'kind': 'closed', 'think': '100ms', 'user_retries': 2,"
      "               'user_retry_delay': '10ms'},"
      "   'policy': {'methodConfig': [{'name': [{}]}], 'retrysim': {'circuitBreaker':"
      "     {'type': 'consecutive', 'failureThreshold': 2, 'waitDurationInOpenState': '5s'}}}}}}",
      1);
  const model_results *r = x.r;
  assert_true(r->by_stop[RETRY_STOP_BREAKER_OPEN] > 100);
  /* Refused at once, a call is retried by its user after 10 ms, twice, then the user thinks
   * for 100 ms: 3 calls per 120 ms per client, about 1500 in 20 s (only ~600 if the refusal
   * lost track of the operation and waited a think time instead). */
  assert_true(r->calls_started > 1400 && r->calls_started < 1550);
  /* Refused calls never reach the server; every execution is one that did. */
  assert_int_equal(r->executions, svc(r, "s")->arrivals);
  assert_int_equal(r->calls_started, r->calls_ok + r->calls_failed + r->calls_unfinished);
  /* Each operation is tried at most three times by its user. */
  assert_true(r->executions <= 3 * r->operations);
  run_free(&x);
}

/* Memory follows calls in flight: a long run recycles the same few objects. */
static void test_model_world_memory_follows_in_flight(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '200s', 'services': {'s': {'service_time': {'dist': 'exponential',"
           "   'mean': '1ms'}, 'workers': 2}},"
           " 'clients': {'c': {'target': 's', 'methods': ['/s.S/M'],"
           "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}",
           1);
  assert_true(x.r->calls_started > 190000);
  assert_true(model_world_peak_in_flight(x.w) < 100);
  assert_true(sim_kernel_pool_capacity(x.k) < 4096);
  /* A call without a policy is one request (no call, no operation of its own): objects
   * follow the calls in flight, one each. */
  assert_true(model_world_peak_objects(x.w) <= model_world_peak_in_flight(x.w));
  assert_true(model_world_peak_objects(x.w) > 0);
  run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Random scenarios: invariants that hold whatever the world
 * =================================================================== */

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Appends printf output to a growing buffer. */
static void put(char *buf, size_t size, const char *fmt, ...) {
  size_t n = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, size - n, fmt, ap);
  va_end(ap);
}

/* A random policy (no retries, retries, or hedging) with random shared state. */
static void random_policy(char *b, size_t size, uint64_t *r) {
  static const char *const codes = "['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED']";
  switch (mix(r) % 3) {
    case 0: put(b, size, "null"); return;
    case 1:
      put(b, size,
          "{'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': %d,"
          " 'initialBackoff': '0.0%ds', 'maxBackoff': '0.2s', 'backoffMultiplier': 2,"
          " 'retryableStatusCodes': %s}, 'retrysim': {'jitter': '%s'}}]",
          (int)(mix(r) % 4) + 2, (int)(mix(r) % 9) + 1, codes,
          (const char *[]){"grpc", "full", "equal", "decorrelated", "none"}[mix(r) % 5]);
      break;
    default:
      put(b, size,
          "{'methodConfig': [{'name': [{}], 'hedgingPolicy': {'maxAttempts': %d,"
          " 'hedgingDelay': '0.0%ds', 'nonFatalStatusCodes': ['UNAVAILABLE']}}]",
          (int)(mix(r) % 3) + 2, (int)(mix(r) % 9) + 1);
      break;
  }
  if (mix(r) % 2) put(b, size, ", 'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}");
  uint64_t extra = mix(r) % 4;
  if (extra == 1) put(b, size, ", 'retrysim': {'budget': {'type': 'finagle'}}");
  if (extra == 2) put(b, size, ", 'retrysim': {'budget': {'type': 'envoy'}}");
  if (extra == 3)
    put(b, size,
        ", 'retrysim': {'circuitBreaker': {'type': 'consecutive', 'failureThreshold': 3,"
        " 'waitDurationInOpenState': '0.5s'}}");
  put(b, size, "}");
}

/* A random world: a chain of 1 to 3 services, random queues, faults and policies, one or two
 * client populations. */
static void random_scenario(char *b, size_t size, uint64_t seed) {
  uint64_t r = seed;
  int layers = (int)(mix(&r) % 3) + 1;
  b[0] = '\0';
  put(b, size, "{'duration': '3s', 'drain': '2s', 'bucket': '500ms', 'services': {");
  for (int l = 0; l < layers; l++) {
    put(b, size,
        "%s's%d': {'replicas': %d, 'workers': %d, 'queue': {'capacity': %d, 'discipline': '%s'},"
        " 'service_time': {'dist': 'exponential', 'mean': '%dms'}, 'deadline': '%s',"
        " 'lb': {'kind': '%s', 'avoid_previous': %s}, 'side_effect': '%s', 'dedup': %s,"
        " 'slowdown_per_busy': 0.%d, 'calls_mode': '%s'",
        l ? ", " : "", l, (int)(mix(&r) % 3) + 1, (int)(mix(&r) % 4) + 1, (int)(mix(&r) % 20),
        mix(&r) % 2 ? "fifo" : "lifo", (int)(mix(&r) % 20) + 1,
        (const char *[]){"ignore", "drop", "waste"}[mix(&r) % 3],
        (const char *[]){"round_robin", "random", "p2c"}[mix(&r) % 3],
        mix(&r) % 2 ? "true" : "false", (const char *[]){"none", "before", "after"}[mix(&r) % 3],
        mix(&r) % 2 ? "true" : "false", (int)(mix(&r) % 3), mix(&r) % 2 ? "sequential" : "fanout");
    put(b, size,
        ", 'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.%d, 'start': '1s',"
        " 'end': '2s'}, {'kind': 'fail', 'status': 'INTERNAL', 'rate': 0.%d},"
        " {'kind': 'stall', 'delay': '50ms', 'rate': 0.%d, 'attempts': [1]},"
        " {'kind': 'pushback', 'pushback': '%s'}, {'kind': 'capacity', 'workers': 1,"
        " 'start': '2s', 'end': '2.5s'}]",
        (int)(mix(&r) % 9) + 1, (int)(mix(&r) % 3) + 1, (int)(mix(&r) % 5) + 1,
        (const char *[]){"20", "-1", "x"}[mix(&r) % 3]);
    if (l + 1 < layers) {
      int n = (int)(mix(&r) % 2) + 1;
      put(b, size, ", 'calls': [");
      for (int j = 0; j < n; j++) {
        put(b, size, "%s{'service': 's%d', 'method': '/m.M/C%d', 'deadline': '%dms', 'policy': ",
            j ? ", " : "", l + 1, j, (int)(mix(&r) % 300) + 20);
        random_policy(b, size, &r);
        put(b, size, "}");
      }
      put(b, size, "]");
    }
    put(b, size, "}");
  }
  put(b, size, "}, 'clients': {");
  int pops = (int)(mix(&r) % 2) + 1;
  for (int p = 0; p < pops; p++) {
    put(b, size,
        "%s'c%d': {'count': %d, 'target': 's0', 'methods': ['/a.A/M'], 'deadline': '%dms',",
        p ? ", " : "", p, (int)(mix(&r) % 5) + 1, (int)(mix(&r) % 500) + 50);
    if (mix(&r) % 2)
      put(b, size, " 'arrival': {'kind': 'open', 'rate': '%d/s'},", (int)(mix(&r) % 300) + 10);
    else
      put(b, size,
          " 'arrival': {'kind': 'closed', 'think': '%dms', 'user_retries': %d,"
          " 'user_retry_delay': '10ms'},",
          (int)(mix(&r) % 50) + 1, (int)(mix(&r) % 3));
    put(b, size, " 'network': {'dist': 'uniform', 'min': '0s', 'max': '%dms'}, 'policy': ",
        (int)(mix(&r) % 3) + 1);
    random_policy(b, size, &r);
    put(b, size, "}");
  }
  put(b, size, "}}");
}

static void test_model_world_random_scenarios_keep_invariants(void **state) {
  (void)state;
  static char text[16384];
  for (uint64_t seed = 1; seed <= 40; seed++) {
    random_scenario(text, sizeof text, seed);
    run x;
    run_text(&x, text, seed);
    /* TEST_WORLD_DUMP=N writes scenario N to /tmp/world-dump.json (double quotes), to rerun
     * it with retrysim; TEST_WORLD_VERBOSE prints what each scenario did. */
    if (getenv("TEST_WORLD_DUMP") != NULL && (uint64_t)atoi(getenv("TEST_WORLD_DUMP")) == seed) {
      FILE *f = fopen("/tmp/world-dump.json", "w");
      if (f != NULL) {
        for (const char *p = text; *p; p++)
          fputc(*p == 39 ? 34 : *p, f);
        fclose(f);
      }
    }
    if (getenv("TEST_WORLD_VERBOSE") != NULL)
      print_message(
          "seed %d: calls %lld ok %lld attempts %lld retries %lld hedges %lld exec %lld dup %lld\n",
          (int)seed, (long long)x.r->calls_started, (long long)x.r->calls_ok,
          (long long)x.r->attempts, (long long)x.r->retries, (long long)x.r->hedges,
          (long long)x.r->executions, (long long)x.r->duplicates);
    const model_results *r = x.r;
    /* Every call is counted once: ended OK, ended otherwise, or still in flight. */
    assert_int_equal(r->calls_started, r->calls_ok + r->calls_failed + r->calls_unfinished);
    int64_t stops = 0, statuses = 0;
    for (int i = 1; i < RETRY_STOP_N; i++)
      stops += r->by_stop[i];
    assert_int_equal(r->by_stop[RETRY_STOP_NONE], 0);
    for (int i = 0; i < RETRY_GRPC_N_CODES; i++)
      statuses += r->by_status.grpc[i];
    assert_int_equal(stops, r->calls_ok + r->calls_failed);
    assert_int_equal(statuses, r->calls_ok + r->calls_failed);
    assert_int_equal((int64_t)r->latency.count, r->calls_ok + r->calls_failed);
    assert_int_equal((int64_t)r->latency_ok.count, r->calls_ok);
    assert_true(r->calls_ok_in_deadline <= r->calls_ok);
    /* What the edges sent is what the services received. */
    int64_t top = 0;
    for (size_t e = 0; e < r->n_edges; e++) {
      assert_true(r->edges[e].attempts <= r->edges[e].calls * (int64_t)r->edges[e].max_attempts);
      assert_true(r->edges[e].worst_case >= (uint64_t)r->edges[e].max_attempts);
      if (r->edges[e].from[0] == 'c') top += r->edges[e].attempts;
    }
    assert_int_equal(top, r->attempts);
    for (size_t s = 0; s < r->n_services; s++) {
      int64_t in = 0;
      for (size_t e = 0; e < r->n_edges; e++)
        if (strcmp(r->edges[e].to, r->services[s].name) == 0) in += r->edges[e].attempts;
      /* Attempts still on their outbound hop when the run ended have not arrived. */
      assert_true(r->services[s].arrivals <= in);
      assert_true(r->services[s].arrivals >= in - 64);
      assert_true(r->services[s].busy_s <= r->services[s].capacity_s + 1e-9);
      assert_true(r->services[s].wasted_work_s <= r->services[s].busy_s + 1e-9);
    }
    /* The ledger: every operation executed at least once, duplicates are the rest. */
    assert_int_equal(r->duplicates, r->executions - r->operations);
    run_free(&x);
  }
}

/* Issue 11: "warmup" leaves the calls started before it out of the summary's figures and
 * nothing out of the time series. The same seed with and without it runs the same world (the
 * series are equal value for value), and the counts differ by exactly the calls started
 * before the warmup, which the series' offered column counts on its own. */
static const char warm[] =
    "{'duration': '12s', 'drain': '5s',"
    " 'services': {'api': {'replicas': 2, 'workers': 4, 'queue': {'capacity': 50},"
    "   'side_effect': 'before',"
    "   'service_time': {'dist': 'exponential', 'mean': '8ms'},"
    "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.3}]}},"
    " 'clients': {'web': {'count': 20, 'target': 'api', 'methods': ['/api.A/Get'],"
    "   'network': {'dist': 'exponential', 'mean': '1ms'},"
    "   'arrival': {'kind': 'open', 'rate': '400/s'},"
    "   'policy': {'methodConfig': [{'name': [{'service': 'api.A'}],"
    "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s', 'maxBackoff': '0.1s',"
    "       'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']}}]}}},"
    " 'variants': [{'name': 'all'}, {'name': 'warm', 'set': {'warmup': '4s'}}]}";

static void test_model_world_warmup_leaves_out_calls_started_before_it(void **state) {
  (void)state;
  run a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.s = load(warm);
  run_loaded(&a, 0, 11);
  b.s = a.s;
  run_loaded(&b, 1, 11);
  const model_results *x = a.r, *y = b.r;
  /* The same world: the time series keeps everything, value for value. */
  assert_int_equal(y->warmup_ns, 4000000000LL);
  assert_int_equal(x->ts.n_buckets, y->ts.n_buckets);
  assert_int_equal(x->ts.n_columns, y->ts.n_columns);
  for (size_t i = 0; i < x->ts.n_buckets * x->ts.n_columns; i++) {
    double u = x->ts.values[i], v = y->ts.values[i];
    assert_true(u == v || (isnan(u) && isnan(v)));
  }
  /* Calls started in [0, 4 s): the offered column of the first four buckets. */
  int col = ts_col(&x->ts, "offered_rps");
  assert_true(col >= 0);
  double before = 0;
  for (size_t bk = 0; bk < 4; bk++)
    before += x->ts.values[bk * x->ts.n_columns + (size_t)col];
  assert_true(before > 1000);
  assert_int_equal(x->calls_started - y->calls_started, (int64_t)before);
  assert_int_equal(y->calls_ok + y->calls_failed + y->calls_unfinished, y->calls_started);
  assert_int_equal((int64_t)y->latency.count, y->calls_ok + y->calls_failed);
  const model_edge_stats *ex = edge(x, "web", "api"), *ey = edge(y, "web", "api");
  assert_int_equal(ex->calls - ey->calls, (int64_t)before);
  assert_int_equal(ey->calls, y->calls_started);
  assert_int_equal(ey->attempts, y->attempts);
  assert_true(y->attempts < x->attempts && y->attempts >= y->calls_started);
  assert_true(y->retries < x->retries && y->retries > 0);
  /* Side effects: operations made after the warmup, still consistent. */
  assert_true(y->executions < x->executions && y->executions > 0);
  assert_int_equal(y->duplicates, y->executions - y->operations);
  /* Services: the window after the warmup, so a utilization of the same order. */
  const model_service_stats *sx = svc(x, "api"), *sy = svc(y, "api");
  assert_true(sy->arrivals < sx->arrivals && sy->arrivals > 0);
  assert_true(sy->busy_s < sx->busy_s && sy->busy_s > 0);
  assert_true(sy->capacity_s < sx->capacity_s);
  double ux = sx->busy_s / sx->capacity_s, uy = sy->busy_s / sy->capacity_s;
  assert_true(fabs(ux - uy) < 0.1 * ux);
  /* Goodput is per second of the measured time. */
  assert_int_equal(y->duration_ns, 8000000000LL);
  run_close(&a);
  run_free(&b);
}

/* Calls without a policy, channel state or trace go without the retry engine ("bare" calls,
 * model_call.c), deciding as the engine decides for them. A trace sink that selects no call
 * sends every call through the engine instead, and tracing changes nothing the world does:
 * the two runs must agree on every figure. The world mixes deadlines met and missed (with
 * and without propagation), failures, streams and a gateway's map, all without a policy. */
static const char bare[] =
    "{'duration': '10s', 'drain': '2s',"
    " 'services': {'api': {'replicas': 2, 'workers': 4, 'queue': {'capacity': 20},"
    "   'service_time': {'dist': 'exponential', 'mean': '2ms'},"
    "   'calls': [{'service': 'db', 'method': '/db.D/Get', 'deadline': '15ms'},"
    "             {'service': 'db', 'method': '/db.D/Scan', 'stream': 'server', 'stream_items': 3,"
    "              'deadline': '40ms', 'propagate_deadline': false}],"
    "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.1}]},"
    "  'db': {'workers': 8, 'service_time': {'dist': 'exponential', 'mean': '3ms'},"
    "   'queue': {'capacity': 30},"
    "   'faults': [{'kind': 'refuse', 'status': 'RESOURCE_EXHAUSTED', 'rate': 0.05}]}},"
    " 'clients': {'web': {'count': 5, 'target': 'api', 'methods': ['/api.A/Get'],"
    "   'deadline': '25ms', 'network': {'dist': 'exponential', 'mean': '1ms'},"
    "   'arrival': {'kind': 'open', 'rate': '500/s'}}}}";

static bool select_none(void *ctx, const model_trace_call *call) {
  (void)ctx;
  (void)call;
  return false;
}
static void record_none(void *ctx, const model_trace_call *call, const retry_trace_rec *rec) {
  (void)ctx;
  (void)call;
  (void)rec;
  fail_msg("no call is selected");
}

static void test_model_world_bare_calls_decide_as_the_engine(void **state) {
  (void)state;
  run x[2];
  for (int i = 0; i < 2; i++) {
    retry_error err;
    retry_error_clear(&err);
    memset(&x[i], 0, sizeof x[i]);
    x[i].s = load(bare);
    x[i].k = sim_kernel_create(0, NULL);
    x[i].w = model_world_create(expt_scenario_config(x[i].s, 0), x[i].k, 5, &err);
    assert_non_null(x[i].w);
    model_trace_sink sink = {select_none, record_none, NULL};
    if (i == 1) model_world_set_trace(x[i].w, &sink);
    assert_int_equal(model_world_run(x[i].w, NULL, NULL, &err), 0);
    x[i].r = model_world_results(x[i].w);
  }
  const model_results *a = x[0].r, *b = x[1].r;
  assert_true(a->calls_ok > 1000 && a->calls_failed > 100);
  assert_true(a->by_stop[RETRY_STOP_DEADLINE] > 10 && a->by_stop[RETRY_STOP_NO_RETRY_POLICY] > 10);
  assert_int_equal(a->events, b->events);
  assert_int_equal(a->calls_started, b->calls_started);
  assert_int_equal(a->calls_ok, b->calls_ok);
  assert_int_equal(a->calls_ok_in_deadline, b->calls_ok_in_deadline);
  assert_int_equal(a->attempts, b->attempts);
  assert_memory_equal(a->by_stop, b->by_stop, sizeof a->by_stop);
  assert_memory_equal(&a->by_status, &b->by_status, sizeof a->by_status);
  assert_memory_equal(&a->latency, &b->latency, sizeof a->latency);
  assert_int_equal(a->n_edges, 3);
  for (size_t e = 0; e < a->n_edges; e++) {
    const model_edge_stats *p = &a->edges[e], *q = &b->edges[e];
    assert_true(p->calls > 100);
    assert_int_equal(p->calls, q->calls);
    assert_int_equal(p->ok, q->ok);
    assert_int_equal(p->failed, q->failed);
    assert_memory_equal(p->by_stop, q->by_stop, sizeof p->by_stop);
    assert_memory_equal(&p->by_status, &q->by_status, sizeof p->by_status);
    assert_memory_equal(&p->latency, &q->latency, sizeof p->latency);
  }
  assert_true(a->edges[1].by_stop[RETRY_STOP_DEADLINE] > 0);
  assert_memory_equal(a->ts.values, b->ts.values,
                      a->ts.n_buckets * a->ts.n_columns * sizeof(double));
  run_free(&x[0]);
  run_free(&x[1]);
}

/* A capacity fault with no workers at all: nothing finishes while it holds, so only the fault's
 * end can start the requests it left queued. Every one of them is served once it is over. */
static void test_model_world_capacity_fault_end_serves_the_queue(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '4s', 'drain': '5s', 'services': {"
           "  'api': {'workers': 4, 'queue': {'capacity': 100000},"
           "   'service_time': {'dist': 'constant', 'value': '10ms'}, 'deadline': 'ignore',"
           "   'faults': [{'kind': 'capacity', 'workers': 0, 'start': '1s', 'end': '2s'}]}},"
           " 'clients': {'web': {'target': 'api', 'methods': ['/a.A/Get'],"
           "   'arrival': {'kind': 'open', 'rate': '80/s'}}}}",
           1);
  const model_results *r = x.r;
  assert_true(r->calls_started > 250);
  assert_int_equal(r->calls_unfinished, 0);
  assert_int_equal(r->calls_ok, r->calls_started);
  /* About 80 requests waited for the fault to end; the first of them nearly a second. */
  const model_service_stats *a = svc(r, "api");
  assert_true(a->queue_max > 60 && a->queue_max < 100);
  assert_true(sim_hist_quantile(&r->latency, 1.0) > 900000000);
  run_free(&x);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_world_mm1_matches_theory),
      cmocka_unit_test(test_model_world_mmc_matches_erlang_c),
      cmocka_unit_test(test_model_world_same_seed_same_results),
      cmocka_unit_test(test_model_world_bare_calls_decide_as_the_engine),
      cmocka_unit_test(test_model_world_warmup_leaves_out_calls_started_before_it),
      cmocka_unit_test(test_model_world_sampling_changes_no_decision),
      cmocka_unit_test(test_model_world_gauges_equal_walk),
      cmocka_unit_test(test_model_world_limiter_gauges_equal_walk),
      cmocka_unit_test(test_model_world_variants_see_same_arrivals),
      cmocka_unit_test(test_model_world_retries_multiply_attempts),
      cmocka_unit_test(test_model_world_every_allocation_can_fail_cleanly),
      cmocka_unit_test(test_model_world_nested_layers_multiply),
      cmocka_unit_test(test_model_world_worst_case_multiplies_by_fanout),
      cmocka_unit_test(test_model_world_worst_case_out_of_memory_builds_no_world),
      cmocka_unit_test(test_model_world_ledger_counts_duplicate_charges),
      cmocka_unit_test(test_model_world_gateway_maps_statuses),
      cmocka_unit_test(test_model_world_deadline_spans_attempts),
      cmocka_unit_test(test_model_world_stream_replays_count_duplicates),
      cmocka_unit_test(test_model_world_latency_row_matches_count_row),
      cmocka_unit_test(test_model_world_edge_by_stop_reason),
      cmocka_unit_test(test_model_world_throttle_scope_per_process_and_server_name),
      cmocka_unit_test(test_utilization_counts_work_in_progress),
      cmocka_unit_test(test_latency_ok_columns_leave_failures_out),
      cmocka_unit_test(test_no_policy_stop_reason),
      cmocka_unit_test(test_model_world_sibling_calls_are_separate_operations),
      cmocka_unit_test(test_model_world_deadline_aware_drops_expired),
      cmocka_unit_test(test_model_world_hedge_cuts_the_stall),
      cmocka_unit_test(test_model_world_fanout_waits_for_all_sequential_stops_at_a_failure),
      cmocka_unit_test(test_model_world_fanout_count_is_that_many_calls),
      cmocka_unit_test(
          test_model_world_wait_for_goes_on_at_k_successes_or_n_minus_k_plus_1_failures),
      cmocka_unit_test(test_model_world_wait_for_quorum_succeeds_as_the_binomial_says),
      cmocka_unit_test(test_model_world_wait_for_counts_a_hedged_call_once),
      cmocka_unit_test(test_model_world_wait_for_cancels_the_calls_it_leaves),
      cmocka_unit_test(test_model_world_wait_for_cancels_a_call_waiting_for_a_permit),
      cmocka_unit_test(test_model_world_cancel_reaches_the_calls_of_a_handler_waiting_for_them),
      cmocka_unit_test(test_model_world_cancel_reaching_a_working_handler_stops_its_calls),
      cmocka_unit_test(test_model_world_cancel_starts_no_further_sequential_call),
      cmocka_unit_test(test_model_world_cancel_ends_a_call_waiting_out_its_deadline_once),
      cmocka_unit_test(test_model_world_cancel_leaves_a_call_in_its_own_end_to_end),
      cmocka_unit_test(test_model_world_lb_avoids_previous_replica),
      cmocka_unit_test(test_model_world_user_retries_count_as_one_operation),
      cmocka_unit_test(test_model_world_concurrency_limit_refuses_above_the_limit),
      cmocka_unit_test(test_model_world_blocking_limit_waits_for_a_permit),
      cmocka_unit_test(test_model_world_capacity_fault_end_serves_the_queue),
      cmocka_unit_test(test_model_world_breaker_refusals_settle_user_retried_operations),
      cmocka_unit_test(test_model_world_memory_follows_in_flight),
      cmocka_unit_test(test_model_world_random_scenarios_keep_invariants),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
