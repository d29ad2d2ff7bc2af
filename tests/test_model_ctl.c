/*
 * test_model_ctl.c: replica control in a running world (model_ctl.c): outlier ejection held to
 * its maximum percent, an ejected replica getting no calls, the self-eject cascade in the
 * replicas_in_service column, an HPA settling at ceil(load / target), a startup delay, a
 * capacity fault that adds workers, and the loader's refusals.
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

/* The value of column name in bucket b. */
static double ts_at(const model_timeseries *ts, const char *name, size_t b) {
  int col = test_ts_col(ts, name);
  assert_true(col >= 0);
  assert_true(b < ts->n_buckets);
  return ts->values[b * ts->n_columns + (size_t)col];
}

/* Ten replicas, four failing every request from 5 s to 40 s, outlier detection at most 20 %:
 * two are ejected (the column shows 8 in service) and never more, in any bucket. */
static void test_ctl_outlier_never_ejects_more_than_max_percent(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '60s', 'bucket': '250ms', 'services': {'api': {"
                "   'replicas': 10, 'workers': 4, 'service_time': '2ms', 'lb': 'random',"
                "   'outlier_detection': {'max_ejection_percent': 20, 'interval': '1s',"
                "     'base_ejection_time': '5s'},"
                "   'faults': [{'kind': 'fail', 'start': '5s', 'end': '40s',"
                "     'replicas': [0, 1, 2, 3], 'status': 'UNAVAILABLE'}]}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}",
                11);
  const model_timeseries *ts = &x.r->ts;
  double least = 10;
  for (size_t b = 0; b < ts->n_buckets; b++) {
    double v = ts_at(ts, "api_replicas_in_service", b);
    if (v < least) least = v;
  }
  assert_true(least == 8);                                     /* ejected, but at most 2 of 10 */
  assert_true(ts_at(ts, "api_replicas_in_service", 10) == 10); /* at 2.75 s: before the fault */
  assert_true(ts_at(ts, "api_replicas_in_service", 80) == 8);  /* at 20.25 s */
  test_run_free(&x);
}

/* One replica of ten fails every request from 5 s on; ejected after 5 failures for 30 s
 * (returned at the first 10 s tick after that). While it is out, no call reaches it: no
 * error at all in the buckets of its ejection; before it, and when it comes back, errors. */
static void test_ctl_ejected_replica_gets_no_calls(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '50s', 'services': {'api': {"
                "   'replicas': 10, 'workers': 4, 'service_time': '2ms', 'lb': 'round_robin',"
                "   'outlier_detection': {'max_ejection_percent': 10},"
                "   'faults': [{'kind': 'fail', 'start': '5s', 'replicas': [0],"
                "     'status': 'UNAVAILABLE'}]}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}",
                5);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "error_rps", 5) >= 5); /* the five that eject it */
  for (size_t b = 6; b < 35; b++) {
    assert_true(ts_at(ts, "error_rps", b) == 0);
    assert_true(ts_at(ts, "api_replicas_in_service", b) == 9);
  }
  /* Back at the 40 s tick (ejected at about 5 s for 30 s): failing again, ejected again. */
  double later = 0;
  for (size_t b = 35; b < 45; b++)
    later += ts_at(ts, "error_rps", b);
  assert_true(later >= 5);
  test_run_free(&x);
}

/* front -> mid -> back. back is down from 10 s to 30 s: mid's replicas count their failed
 * calls and take themselves out, then front's (whose calls to mid fail) do the same; both
 * return once their dependency's probe passes again. */
static void test_ctl_self_eject_cascade_in_the_column(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '45s', 'services': {"
                " 'front': {'replicas': 3, 'workers': 8, 'service_time': '1ms',"
                "   'calls': [{'service': 'mid', 'method': '/m.M/Get'}],"
                "   'self_eject': {'dependency': 'mid', 'after_failures': 3}},"
                " 'mid': {'replicas': 3, 'workers': 8, 'service_time': '1ms',"
                "   'calls': [{'service': 'back', 'method': '/b.B/Get'}],"
                "   'self_eject': {'dependency': 'back', 'after_failures': 3,"
                "     'return_after_successes': 2}},"
                " 'back': {'replicas': 2, 'workers': 8, 'service_time': '1ms',"
                "   'faults': [{'kind': 'down', 'start': '10s', 'end': '30s'}]}},"
                " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '300/s'}}}}",
                2);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "mid_replicas_in_service", 5) == 3);
  assert_true(ts_at(ts, "front_replicas_in_service", 5) == 3);
  assert_true(ts_at(ts, "mid_replicas_in_service", 15) == 0);
  assert_true(ts_at(ts, "front_replicas_in_service", 15) == 0);
  assert_true(ts_at(ts, "mid_replicas_in_service", 40) == 3);
  assert_true(ts_at(ts, "front_replicas_in_service", 40) == 3);
  test_run_free(&x);
}

/* Constant work of 10 ms, one worker a replica, 300 calls/s: 3 workers' worth of load. A
 * target of 65 % settles at ceil(3 / 0.65) = 5 replicas: at 5 the utilization is 60 % (ratio
 * 0.92, within the tolerance of 0.1), at 4 it is 75 % (1.15: up to ceil(4 x 1.15) = 5), at 6
 * it is 50 % (0.77: down to ceil(6 x 0.77) = 5). (A load over target that is a whole number
 * sits on the rounding's edge: at one replica more, ceil(n x ratio) is that number exactly,
 * and the utilization's integer percent tips it either way.) After the scale-down window
 * (30 s here), every bucket shows 5. */
static void test_ctl_hpa_settles_at_ceil_load_over_target(void **state) {
  (void)state;
  test_run x;
  test_run_text(
      &x,
      "{'duration': '240s', 'services': {'db': {"
      "   'replicas': 1, 'workers': 1, 'service_time': '10ms', 'queue': {'capacity': 100},"
      "   'autoscaler': {'target_utilization': 0.65, 'min': 1, 'max': 20,"
      "     'scale_down': {'stabilization_window': '30s'}}}},"
      " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '300/s'}}}}",
      9);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "db_replicas", 0) == 1);
  for (size_t b = 150; b < 240; b++)
    assert_true(ts_at(ts, "db_replicas", b) == 5);
  test_run_free(&x);
}

/* A scale event from 2 to 4 replicas at 10 s with a startup delay of 5 s: the count is 4 at
 * once, the replicas in service stay 2 until 15 s, then 4. A row holds the state at its
 * bucket's end: row 9 (sampled at 10 s, after the event) already counts 4. */
static void test_ctl_startup_delay_is_honoured(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '30s', 'services': {'api': {"
                "   'replicas': 2, 'workers': 2, 'service_time': '1ms',"
                "   'scale': [{'at': '10s', 'replicas': 4, 'startup_delay': '5s'}]}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '100/s'}}}}",
                4);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "api_replicas", 8) == 2);
  for (size_t b = 9; b < 14; b++) {
    assert_true(ts_at(ts, "api_replicas", b) == 4);
    assert_true(ts_at(ts, "api_replicas_in_service", b) == 2);
  }
  for (size_t b = 14; b < 30; b++)
    assert_true(ts_at(ts, "api_replicas_in_service", b) == 4);
  test_run_free(&x);
}

/* One worker of 10 ms serves 100 calls/s of the 200 offered; a capacity fault of 4 workers
 * from 10 s to 20 s serves all 200. */
static void test_ctl_capacity_fault_above_workers_adds_throughput(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '30s', 'services': {'api': {"
                "   'workers': 1, 'service_time': '10ms', 'queue': {'capacity': 5},"
                "   'faults': [{'kind': 'capacity', 'start': '10s', 'end': '20s', 'workers': 4}]}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '200/s'}}}}",
                6);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "goodput_rps", 5) <= 101);
  assert_true(ts_at(ts, "goodput_rps", 15) >= 150);
  assert_true(ts_at(ts, "goodput_rps", 25) <= 101);
  test_run_free(&x);
}

/* The loader refuses, with the JSON path, what could change nothing or is not allowed. */
static void expect_refused(const char *text, const char *path, const char *words) {
  char json[2048];
  snprintf(json, sizeof json, "%s", text);
  for (char *p = json; *p; p++)
    if (*p == '\'') *p = '"';
  retry_error err;
  memset(&err, 0, sizeof err);
  expt_scenario *s = expt_scenario_load_string(json, "t.json", NULL, 0, &err);
  assert_null(s);
  assert_string_equal(err.path, path);
  assert_non_null(strstr(err.message, words));
}

static void test_ctl_loader_refusals(void **state) {
  (void)state;
  expect_refused(
      "{'duration': '10s', 'services': {'api': {'replicas': 4, 'service_time': '1ms',"
      " 'outlier_detection': {}}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
      " 'arrival': {'kind': 'open', 'rate': '1/s'}}}}",
      "$.services.api.outlier_detection.max_ejection_percent", "nothing would ever be ejected");
  expect_refused(
      "{'duration': '10s', 'services': {'api': {'service_time': '1ms',"
      " 'self_eject': {'dependency': 'db'}}, 'db': {'service_time': '1ms'}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
      " 'arrival': {'kind': 'open', 'rate': '1/s'}}}}",
      "$.services.api.self_eject.dependency", "does not call");
  expect_refused(
      "{'duration': '10s', 'services': {'api': {'service_time': '1ms',"
      " 'scale': [{'at': '20s', 'replicas': 2}]}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
      " 'arrival': {'kind': 'open', 'rate': '1/s'}}}}",
      "$.services.api.scale[0].at", "could change nothing");
  expect_refused(
      "{'duration': '10s', 'services': {'api': {'service_time': '1ms',"
      " 'autoscaler': {'max': 65}}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
      " 'arrival': {'kind': 'open', 'rate': '1/s'}}}}",
      "$.services.api.autoscaler.max", "[1, 64]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ctl_outlier_never_ejects_more_than_max_percent),
      cmocka_unit_test(test_ctl_ejected_replica_gets_no_calls),
      cmocka_unit_test(test_ctl_self_eject_cascade_in_the_column),
      cmocka_unit_test(test_ctl_hpa_settles_at_ceil_load_over_target),
      cmocka_unit_test(test_ctl_startup_delay_is_honoured),
      cmocka_unit_test(test_ctl_capacity_fault_above_workers_adds_throughput),
      cmocka_unit_test(test_ctl_loader_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
