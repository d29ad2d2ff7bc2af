/*
 * test_model_work.c: work that grows (models/model_work.c): the service time of deterministic
 * setups under each term (per queued item, the size profile, the collector's), and the
 * per-busy term given as "work.per_busy" doing bit for bit what "slowdown_per_busy" does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/world.h"

/* One replica with one worker and a constant 10 ms service time, its work given by WORK, and
 * three requests that arrive together at 0 (and, with AT, at the times given). No hop takes
 * time, so the worker's busy time is the sum of the three service times. */
#define ONE_WORKER(WORK, AT)                                                       \
  "{'duration': '30s', 'services': {'api': {'service_time': '10ms', 'work': " WORK \
  "}}, 'clients': {'c': {'count': " AT ", 'target': 'api', 'methods': ['/a.A/Get']}}}"

static double busy_of(const char *text) {
  test_run x;
  test_run_text(&x, text, 1);
  const model_service_stats *s = test_svc(x.r, "api");
  assert_int_equal(s->served, 3);
  double b = s->busy_s;
  test_run_free(&x);
  return b;
}

/* per_queued 0.5: the first request starts on an empty queue (10 ms); the second leaves one
 * behind it (x 1.5, 15 ms); the third none (10 ms): 35 ms in all. */
static void test_model_work_per_queued(void **state) {
  (void)state;
  double b =
      busy_of(ONE_WORKER("{'per_queued': 0.5}", "3, 'arrival': {'kind': 'script', 'at': ['0s']}"));
  assert_true(fabs(b - 0.035) < 1e-9);
}

/* A size profile that steps from 1 to 3 at 10 s: a request at 5 s takes 10 ms, at 15 s and
 * 20 s 30 ms each (one at a time: the queue stays empty). */
static void test_model_work_size_profile_multiplies(void **state) {
  (void)state;
  double b = busy_of(ONE_WORKER("{'size': [['0s', 1], ['10s', 1], ['10s', 3]]}",
                                "1, 'arrival': {'kind': 'script', 'at': ['5s', '15s', '20s']}"));
  assert_true(fabs(b - 0.070) < 1e-9);
}

/* The collector's term with room for 4 requests: held 1 (x 4/3), then 2 (the second with the
 * third behind it: x 2), then 1 (x 4/3): 13.33 + 20 + 13.33 ms. */
static void test_model_work_held_limit(void **state) {
  (void)state;
  double b =
      busy_of(ONE_WORKER("{'held_limit': 4}", "3, 'arrival': {'kind': 'script', 'at': ['0s']}"));
  assert_true(fabs(b - (0.010 * 4 / 3 * 2 + 0.020)) < 1e-8);
}

/* "work": {"per_busy": k} is "slowdown_per_busy": k, bit for bit: the same events, the same
 * latencies and the same time series (every column of every bucket). */
static void test_model_work_per_busy_is_slowdown_per_busy(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {'api': {'workers': 8, %s,"
      "   'queue': {'capacity': 50},"
      "   'service_time': {'dist': 'exponential', 'mean': '10ms'}}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '600/s'}}}}";
  char a[512], b[512];
  snprintf(a, sizeof a, fmt, "'slowdown_per_busy': 0.15");
  snprintf(b, sizeof b, fmt, "'work': {'per_busy': 0.15}");
  test_run x, y;
  test_run_text(&x, a, 4);
  test_run_text(&y, b, 4);
  assert_true(x.r->events > 10000);
  assert_int_equal(x.r->events, y.r->events);
  assert_int_equal(x.r->calls_ok, y.r->calls_ok);
  assert_memory_equal(&x.r->latency, &y.r->latency, sizeof x.r->latency);
  assert_int_equal(x.r->ts.n_columns, y.r->ts.n_columns); /* no work_factor column */
  assert_int_equal(x.r->ts.n_buckets, y.r->ts.n_buckets);
  assert_memory_equal(x.r->ts.values, y.r->ts.values,
                      x.r->ts.n_buckets * x.r->ts.n_columns * sizeof(double));
  assert_true(test_svc(x.r, "api")->busy_s == test_svc(y.r, "api")->busy_s);
  test_run_free(&x);
  test_run_free(&y);
}

/* The work_factor column: the multiplier a request taken at the bucket's end would get,
 * here the size profile's 1 and then 3. */
static void test_model_work_factor_column(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                ONE_WORKER("{'size': [['0s', 1], ['10s', 1], ['10s', 3]]}",
                           "1, 'arrival': {'kind': 'script', 'at': ['5s', '15s', '20s']}"),
                1);
  int col = test_ts_col(&x.r->ts, "api_work_factor");
  assert_true(col >= 0);
  const double *v = x.r->ts.values;
  size_t nc = x.r->ts.n_columns;
  assert_true(v[2 * nc + (size_t)col] == 1.0);  /* the bucket ending at 3 s */
  assert_true(v[12 * nc + (size_t)col] == 3.0); /* the bucket ending at 13 s */
  test_run_free(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_work_per_queued),
      cmocka_unit_test(test_model_work_size_profile_multiplies),
      cmocka_unit_test(test_model_work_held_limit),
      cmocka_unit_test(test_model_work_per_busy_is_slowdown_per_busy),
      cmocka_unit_test(test_model_work_factor_column),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
