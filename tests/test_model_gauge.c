/*
 * test_model_gauge.c: the world's time series and the gauges it samples: sampling changes no
 * decision, the gauges' sums equal a walk over every holder at every sample (budgets,
 * adaptive throttling, limiters), a call's count and latency land in the same row, OK-only
 * and failed-only latency columns, and utilization counting the work in progress.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/world.h"

/* {==================================================================
 * Sampling and the gauges
 * =================================================================== */

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

static void run_with_bucket(test_run *x, const char *bucket) {
  char text[2048];
  const char *at = strstr(sampled, "BUCKET");
  assert_non_null(at);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - sampled), sampled, bucket, at + 6);
  test_run_text(x, text, 3);
}

static void test_model_gauge_sampling_changes_no_decision(void **state) {
  (void)state;
  test_run a, b;
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
  test_run_free(&a);
  test_run_free(&b);
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
static int run_gauge_probed(test_run *x, const char *text) {
  memset(x, 0, sizeof *x);
  x->s = test_load(text);
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

static void test_model_gauge_gauges_equal_walk(void **state) {
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
    test_run x;
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
    test_run_free(&x);
  }
}

/* Edges with a concurrency limiter or the AWS adaptive limiter keep those figures in their
 * sums too (live on the clients' edge, lazily on the replicas' edge beside adaptive
 * throttling),
 * so the limit columns need no walk: at every sample the sums equal a walk, and the
 * limiters did move (a limit that never changed would check nothing). */
static void test_model_gauge_limiter_gauges_equal_walk(void **state) {
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
  test_run x;
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
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Rows and columns
 * =================================================================== */

/* A call that ends exactly on a bucket's end, at the end of the run: its count and its latency
 * land in the same row (the bucket that starts then), whichever of the call's end and the
 * sample event runs first at that instant. */
static void test_model_gauge_latency_row_matches_count_row(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    test_run x;
    /* 100 ms ends on the 50 ms grid; 120 ms does not. */
    test_run_text(&x,
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
    test_run_free(&x);
  }
}

/* Issue 10, item 3: utilization counts the work still on a worker when the run ends. Two
 * closed-loop clients keep 2 workers busy through a 3 s run without drain: ~1.0 with 1 s
 * service times (today's figure was 0.667) and with 10 s ones (0.0). */
static void test_model_gauge_utilization_counts_work_in_progress(void **state) {
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
    test_run x;
    test_run_text(&x, text, 1);
    const model_service_stats *s = test_svc(x.r, "s");
    double u = s->busy_s / s->capacity_s;
    print_message("service time %s: utilization %.4f\n", times[i], u);
    assert_true(u > 0.99 && u <= 1.0 + 1e-9);
    test_run_free(&x);
  }
}

/* Issue 10, item 3: OK-only and failed-only latency columns. A fast refusal during [1 s, 2 s)
 * makes the failed latency small there; the OK latency keeps the service's 100 ms, where the
 * mixed p50 would drop. A bucket without such calls has no value (NaN). */
static void test_model_gauge_latency_ok_columns_leave_failures_out(void **state) {
  (void)state;
  test_run x;
  test_run_text(
      &x,
      "{'duration': '3s', 'services': {'api': {'service_time': '100ms', 'workers': 100,"
      "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'start': '1s', 'end': '2s',"
      "     'rate': 0.8}]}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/M'],"
      "   'arrival': {'kind': 'open', 'rate': '200/s'}}}}",
      1);
  const model_timeseries *ts = &x.r->ts;
  int ok50 = test_ts_col(ts, "latency_ok_p50_ms"), ok99 = test_ts_col(ts, "latency_ok_p99_ms");
  int f50 = test_ts_col(ts, "latency_failed_p50_ms"),
      f99 = test_ts_col(ts, "latency_failed_p99_ms");
  int all50 = test_ts_col(ts, "latency_p50_ms");
  assert_true(ok50 >= 0 && ok99 >= 0 && f50 >= 0 && f99 >= 0 && all50 >= 0);
  /* Bucket 0: only OK calls; bucket 1 (mostly refused): both; OK latency stays ~100 ms. */
  const double *b0 = ts->values, *b1 = ts->values + ts->n_columns;
  assert_true(fabs(b0[ok50] - 100) < 2 && isnan(b0[f50]) && isnan(b0[f99]));
  assert_true(fabs(b1[ok50] - 100) < 2 && b1[ok99] >= b1[ok50]);
  assert_true(b1[f50] < 10 && b1[all50] < 10);
  test_run_free(&x);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_gauge_sampling_changes_no_decision),
      cmocka_unit_test(test_model_gauge_gauges_equal_walk),
      cmocka_unit_test(test_model_gauge_limiter_gauges_equal_walk),
      cmocka_unit_test(test_model_gauge_latency_row_matches_count_row),
      cmocka_unit_test(test_model_gauge_utilization_counts_work_in_progress),
      cmocka_unit_test(test_model_gauge_latency_ok_columns_leave_failures_out),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
