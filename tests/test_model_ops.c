/*
 * test_model_ops.c: operators and herds in a running world (model_operator.c, model_herd.c)
 * and their loader (expt_scenario_ops.c): a rule fires once per crossing (twice for a
 * condition that goes true, false, true; once with `once`), honours its `for`; a pause stops
 * a population's calls and a resume starts them again; CrashLoopBackOff waits 10, 20, 40 ...
 * 300 s; a restart spread over a window starts its clients uniformly over it; init calls are
 * counted; a shed of 0.5 refuses about half of the arrivals (a binomial interval) until a
 * shed of 0 stops it; replicas added by an operator serve after their startup delay and not
 * before; a policy pushed with a delay changes the attempts per call after the delay and not
 * before; a rate action of 0.5 halves an open-loop population's arrivals (a Poisson interval)
 * from its firing on and not before, and a factor of 1 restores them; bad operators are
 * refused with their path.
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

#include "models/model_ops.h"
#include "tests/support/world.h"

/* The value of column name in bucket b. */
static double ts_at(const model_timeseries *ts, const char *name, size_t b) {
  int col = test_ts_col(ts, name);
  assert_true(col >= 0);
  assert_true(b < ts->n_buckets);
  return ts->values[b * ts->n_columns + (size_t)col];
}

static const model_operator_stats *op_named(const model_results *r, const char *name) {
  for (size_t i = 0; i < r->n_operators; i++)
    if (strcmp(r->operators[i].name, name) == 0) return &r->operators[i];
  fail_msg("no operator %s", name);
  return NULL;
}

/* A service "api" with two fault windows, [2 s, 4 s) and [6 s, 8 s): faults_active is 1 in
 * buckets 2, 3, 6 and 7 and 0 elsewhere. %s: the operators. */
#define TWO_WINDOWS                                                                           \
  "{'duration': '12s', 'services': {'api': {'service_time': '1ms', 'workers': 4,"             \
  "   'faults': [{'kind': 'slowdown', 'factor': 1.5, 'start': '2s', 'end': '4s'},"            \
  "              {'kind': 'slowdown', 'factor': 1.5, 'start': '6s', 'end': '8s'}]}},"         \
  " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"                              \
  "   'arrival': {'kind': 'open', 'rate': '100/s'}}},"                                        \
  " 'operators': [%s]}"

static void run_fmt(test_run *x, const char *fmt, const char *arg, uint64_t seed) {
  char text[4096];
  snprintf(text, sizeof text, fmt, arg);
  test_run_text(x, text, seed);
}

/* True in buckets 2-3, false in 4-5, true in 6-7: fired at the end of bucket 2 (3 s) and of
 * bucket 6 (7 s); with `once`, at 3 s only. */
static void test_ops_rule_fires_once_per_crossing(void **state) {
  (void)state;
  test_run x;
  run_fmt(&x, TWO_WINDOWS,
          "{'name': 'r', 'when': {'column': 'faults_active', 'above': 0.5},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}},"
          "{'name': 'r1', 'once': true, 'when': {'column': 'faults_active', 'above': 0.5},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}}",
          1);
  const model_operator_stats *r = op_named(x.r, "r"), *r1 = op_named(x.r, "r1");
  assert_int_equal(r->n_fired, 2);
  assert_int_equal(r->fired_at_ns[0], 3000000000LL);
  assert_int_equal(r->fired_at_ns[1], 7000000000LL);
  assert_int_equal(r1->n_fired, 1);
  assert_int_equal(r1->fired_at_ns[0], 3000000000LL);
  assert_true(r->rule);
  test_run_free(&x);
}

/* `for`: held 2 s (buckets 2 and 3) fires at 4 s, then again at 8 s; held 3 s never does (each
 * window is 2 s). A rate column is read per second: offered_rps near 100 is above 50. */
static void test_ops_rule_honours_for(void **state) {
  (void)state;
  test_run x;
  run_fmt(&x, TWO_WINDOWS,
          "{'name': 'two', 'when': {'column': 'faults_active', 'above': 0.5, 'for': '2s'},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}},"
          "{'name': 'three', 'when': {'column': 'faults_active', 'above': 0.5, 'for': '3s'},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}},"
          "{'name': 'rate', 'once': true, 'when': {'column': 'offered_rps', 'above': 50, 'for': '5s'},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}}",
          1);
  const model_operator_stats *two = op_named(x.r, "two");
  assert_int_equal(two->n_fired, 2);
  assert_int_equal(two->fired_at_ns[0], 4000000000LL);
  assert_int_equal(two->fired_at_ns[1], 8000000000LL);
  assert_int_equal(op_named(x.r, "three")->n_fired, 0);
  assert_int_equal(op_named(x.r, "rate")->n_fired, 1);
  assert_int_equal(op_named(x.r, "rate")->fired_at_ns[0], 5000000000LL);
  test_run_free(&x);
}

/* `after`: buckets that start before it never hold. Armed from 5 s, the rule misses the first
 * window ([2 s, 4 s)) and fires at the end of bucket 6 (7 s), once; armed from 7 s, it starts
 * its streak in bucket 7 and fires at 8 s. offered_rps (true from the first bucket) below a
 * threshold armed from 10 s fires at 11 s, not at 1 s. */
static void test_ops_rule_after(void **state) {
  (void)state;
  test_run x;
  run_fmt(&x, TWO_WINDOWS,
          "{'name': 'five', 'when': {'column': 'faults_active', 'above': 0.5, 'after': '5s'},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}},"
          "{'name': 'seven', 'when': {'column': 'faults_active', 'above': 0.5, 'after': '7s'},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}},"
          "{'name': 'warm', 'once': true, 'when': {'column': 'offered_rps', 'above': 50, 'after': '10s'},"
          " 'do': {'action': 'capacity', 'service': 'api', 'workers': 4}}",
          1);
  const model_operator_stats *five = op_named(x.r, "five"), *seven = op_named(x.r, "seven");
  assert_int_equal(five->n_fired, 1);
  assert_int_equal(five->fired_at_ns[0], 7000000000LL);
  assert_int_equal(seven->n_fired, 1);
  assert_int_equal(seven->fired_at_ns[0], 8000000000LL);
  assert_int_equal(op_named(x.r, "warm")->n_fired, 1);
  assert_int_equal(op_named(x.r, "warm")->fired_at_ns[0], 11000000000LL);
  test_run_free(&x);
}

/* Paused from 5 s to 10 s: nothing offered in buckets 5 to 9, calls again from 10 s; and the
 * same for a closed-loop population (which polls once a think time). */
static void test_ops_pause_and_resume(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '15s', 'services': {'api': {'service_time': '1ms', 'workers': 8}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '200/s'}},"
                "  'u': {'count': 20, 'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'closed', 'think': '100ms'}}},"
                " 'events': [{'at': '5s', 'action': 'pause', 'population': 'c'},"
                "  {'at': '10s', 'action': 'resume', 'population': 'c'},"
                "  {'at': '5s', 'action': 'pause', 'population': 'u'},"
                "  {'at': '10s', 'action': 'resume', 'population': 'u'}]}",
                2);
  const model_timeseries *ts = &x.r->ts;
  for (size_t b = 0; b < 15; b++) {
    double v = ts_at(ts, "offered_rps", b);
    if (b >= 5 && b < 10)
      assert_true(v == 0);
    else
      assert_true(v > 250); /* 200/s open and about 200/s closed */
  }
  assert_int_equal(x.r->n_herds, 2);
  assert_int_equal(x.r->herds[0].calls_down, 0); /* paused is not down */
  test_run_free(&x);
}

/* Kubernetes' CrashLoopBackOff: 10 s, doubling, capped at 300 s. A custom backoff with full
 * jitter stays in [0, d). */
static void test_herd_crashloop_delays(void **state) {
  (void)state;
  model_backoff_cfg c = {.kind = MODEL_BACKOFF_CRASHLOOP};
  static const int64_t want_s[] = {10, 20, 40, 80, 160, 300, 300, 300};
  for (int k = 1; k <= 8; k++)
    assert_int_equal(model_backoff_delay(&c, k, 0.5), want_s[k - 1] * 1000000000LL);
  model_backoff_cfg j = {MODEL_BACKOFF_CUSTOM, 1000000000LL, 8000000000LL, 2.0, 1.0, 1};
  assert_int_equal(model_backoff_delay(&j, 3, 0.0), 4000000000LL);
  assert_int_equal(model_backoff_delay(&j, 3, 0.25), 3000000000LL);
  assert_int_equal(model_backoff_delay(&j, 9, 0.5), 4000000000LL); /* capped at 8 s */
  model_backoff_cfg n = {.kind = MODEL_BACKOFF_NONE};
  assert_int_equal(model_backoff_delay(&n, 5, 0.5), 0);
}

/* In a world: one client whose init always fails (a fault on the init method) restarts at
 * 0 s and inits at about 0, 10, 30, 70, 150 and 310 s: 6 init calls in 400 s, the client
 * never up. */
static void test_herd_crashloop_in_a_world(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '400s', 'services': {'api': {'service_time': '1ms'},"
                "  'auth': {'service_time': '1ms', 'faults': [{'kind': 'fail',"
                "   'status': 'UNAVAILABLE', 'method': '/auth.A/Login'}]}},"
                " 'clients': {'c': {'count': 1, 'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '1/s'}}},"
                " 'events': [{'at': '0s', 'action': 'restart', 'population': 'c',"
                "   'init': {'service': 'auth', 'method': '/auth.A/Login'},"
                "   'restart_backoff': 'crashloop'}]}",
                1);
  assert_int_equal(x.r->n_herds, 1);
  const model_herd_stats *h = &x.r->herds[0];
  assert_int_equal(h->inits, 6);
  assert_int_equal(h->inits_failed, 6);
  assert_int_equal(h->clients_up, 0);
  assert_int_equal(x.r->calls_started, 0); /* every call found the client down */
  assert_true(h->calls_down > 300);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "c->auth_attempt_rps", 10) > 0);
  assert_true(ts_at(ts, "c->auth_attempt_rps", 30) > 0);
  assert_true(ts_at(ts, "c->auth_attempt_rps", 310) > 0);
  assert_true(ts_at(ts, "c->auth_attempt_rps", 20) == 0);
  test_run_free(&x);
}

/* 2,000 clients restart at 10 s spread over 10 s: their init calls (all succeed) fall in the
 * ten 1 s buckets from 10 s about 200 each (binomial, sd about 13.4: within 5 sd), none
 * before or after; every init call counted, once per restart; clients_up dips and returns. */
static void test_herd_spread_is_uniform(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '30s', 'services': {'api': {'service_time': '1ms', 'workers': 8},"
                "  'auth': {'service_time': '1ms', 'workers': 64}},"
                " 'clients': {'c': {'count': 2000, 'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '500/s'}}},"
                " 'events': [{'at': '10s', 'action': 'restart', 'population': 'c', 'spread': '10s',"
                "   'init': {'service': 'auth', 'method': '/auth.A/Login'}}]}",
                5);
  const model_timeseries *ts = &x.r->ts;
  double total = 0;
  for (size_t b = 0; b < 30; b++) {
    double n = ts_at(ts, "c->auth_attempt_rps", b);
    total += n;
    if (b < 10 || b >= 20)
      assert_true(n == 0);
    else
      assert_true(fabs(n - 200) < 5 * 13.4);
  }
  assert_true(total == 2000);
  const model_herd_stats *h = &x.r->herds[0];
  assert_int_equal(h->restarts, 2000);
  assert_int_equal(h->inits, 2000);
  assert_int_equal(h->inits_ok, 2000);
  assert_int_equal(test_edge(x.r, "c", "auth")->attempts, 2000);
  assert_int_equal(h->clients_up, 2000);
  assert_true(ts_at(ts, "c_clients_up", 8) == 2000); /* bucket 9 is sampled at 10 s, after the restart */
  assert_true(ts_at(ts, "c_clients_up", 14) < 1500);
  assert_true(ts_at(ts, "c_clients_up", 25) == 2000);
  /* About half the calls between 10 s and 20 s found their client down. */
  assert_true(h->calls_down > 1500 && h->calls_down < 3500);
  test_run_free(&x);
}

/* Shedding 0.5 from 2 s to 6 s: in buckets 2 to 5 the goodput is Binomial(offered, 0.5)
 * (one attempt a call, a service that never fails otherwise), within 4.5 standard deviations;
 * before and after, every call succeeds (a call in flight across a boundary aside). */
static void test_ops_shed_half(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '10s', 'services': {'api': {'service_time': '1ms', 'workers': 8}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '500/s'}}},"
                " 'events': [{'at': '2s', 'action': 'shed', 'service': 'api', 'fraction': 0.5},"
                "  {'at': '6s', 'action': 'shed', 'service': 'api', 'fraction': 0}]}",
                3);
  const model_timeseries *ts = &x.r->ts;
  double n = 0, ok = 0;
  for (size_t b = 2; b < 6; b++) {
    n += ts_at(ts, "offered_rps", b);
    ok += ts_at(ts, "goodput_rps", b);
  }
  assert_true(n > 1800);
  if (fabs(ok - n / 2) > 4.5 * sqrt(n) / 2) fail_msg("%.0f of %.0f served while shedding", ok, n);
  for (size_t b = 0; b < 10; b++) {
    if (b >= 2 && b < 6) continue;
    double off = ts_at(ts, "offered_rps", b), good = ts_at(ts, "goodput_rps", b);
    if (good < off - 3) fail_msg("bucket %zu: %.0f of %.0f served without shedding", b, good, off);
  }
  assert_int_equal(op_named(x.r, "events[0]")->n_fired, 1);
  test_run_free(&x);
}

/* A population offering 1000/s, throttled to half from 4 s to 8 s: buckets 4 to 7 offer a
 * Poisson count of mean 2000 in all, buckets 0 to 3 one of mean 4000, and buckets 8 and 9
 * (restored by a factor of 1) one of mean 2000; each within 4.5 standard deviations, so a rate
 * that was not halved, or halved too early or for good, fails. */
static void expect_poisson(const model_timeseries *ts, size_t b0, size_t b1, double mean) {
  double n = 0;
  for (size_t b = b0; b < b1; b++)
    n += ts_at(ts, "offered_rps", b);
  if (fabs(n - mean) > 4.5 * sqrt(mean))
    fail_msg("buckets %zu to %zu offered %.0f, expected about %.0f", b0, b1 - 1, n, mean);
}

static void test_ops_rate_halves_arrivals(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '10s', 'services': {'api': {'service_time': '1ms', 'workers': 8}},"
                " 'clients': {'web': {'count': 10, 'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '1000/s'}}},"
                " 'events': [{'at': '4s', 'action': 'rate', 'population': 'web', 'factor': 0.5},"
                "  {'at': '8s', 'action': 'rate', 'population': 'web', 'factor': 1}]}",
                4);
  const model_timeseries *ts = &x.r->ts;
  expect_poisson(ts, 0, 4, 4000);
  expect_poisson(ts, 4, 8, 2000);
  expect_poisson(ts, 8, 10, 2000);
  assert_int_equal(op_named(x.r, "events[0]")->n_fired, 1);
  assert_int_equal(op_named(x.r, "events[0]")->fired_at_ns[0], 4000000000LL);
  assert_string_equal(op_named(x.r, "events[0]")->action, "rate");
  assert_int_equal(x.r->n_herds, 1);
  assert_int_equal(x.r->herds[0].calls_down, 0); /* a thinned arrival is not a call */
  test_run_free(&x);
}

/* One replica of one worker (10 ms a request) under 250/s is saturated. At 2 s an event asks
 * for 3 replicas, serving after 3 s: until 5 s at most one worker is busy and one replica is
 * in service; from 6 s on, three are, and more than one worker is busy. */
static void test_ops_replicas_after_delay(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '10s', 'services': {'api': {'service_time': {'dist': 'constant',"
                "   'value': '10ms'}, 'workers': 1, 'queue': {'capacity': 100000}}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '250/s'}}},"
                " 'events': [{'at': '2s', 'action': 'replicas', 'service': 'api', 'replicas': 3,"
                "   'startup_delay': '3s'}]}",
                4);
  const model_timeseries *ts = &x.r->ts;
  for (size_t b = 0; b < 4; b++) {
    assert_true(ts_at(ts, "api_busy", b) <= 1.0);
    assert_true(ts_at(ts, "api_replicas_in_service", b) == 1.0);
  }
  assert_true(ts_at(ts, "api_replicas", 2) == 3.0);
  for (size_t b = 6; b < 10; b++) {
    assert_true(ts_at(ts, "api_replicas_in_service", b) == 3.0);
    if (ts_at(ts, "api_busy", b) <= 1.5) fail_msg("bucket %zu: %g busy", b, ts_at(ts, "api_busy", b));
  }
  test_run_free(&x);
}

/* A service that refuses everything, a population without a policy: one attempt a call. A
 * policy of 3 attempts pushed at 2 s with a delay of 3 s: still one attempt a call in buckets
 * 0 to 4 (the push has not landed), three from bucket 5 on (calls started after 5 s; the
 * backoff is 1 ms, so a call's attempts fall in its own bucket but at the boundary). */
static void test_ops_policy_push_after_delay(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '10s', 'services': {'api': {'service_time': '1ms', 'workers': 8,"
                "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
                " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '200/s'}}},"
                " 'events': [{'at': '2s', 'action': 'policy', 'edge': 'c->api', 'delay': '3s',"
                "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
                "    'initialBackoff': '0.001s', 'maxBackoff': '0.001s', 'backoffMultiplier': 1,"
                "    'retryableStatusCodes': ['UNAVAILABLE']}}]}}]}",
                5);
  const model_timeseries *ts = &x.r->ts;
  for (size_t b = 0; b < 10; b++) {
    double off = ts_at(ts, "offered_rps", b), att = ts_at(ts, "c->api_attempt_rps", b);
    assert_true(off > 100);
    double per = att / off;
    if (b < 5 ? per != 1.0 : fabs(per - 3.0) > 0.05)
      fail_msg("bucket %zu: %.3f attempts a call", b, per);
  }
  assert_int_equal(op_named(x.r, "events[0]")->fired_at_ns[0], 2000000000LL);
  test_run_free(&x);
}

/* Bad operators: the path, and what is allowed (with a near name for a column). */
static void expect_error(const char *ops, const char *path, const char *words) {
  char text[4096];
  snprintf(text, sizeof text,
           "{'duration': '10s', 'services': {'api': {'service_time': '1ms'}},"
           " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
           "   'arrival': {'kind': 'open', 'rate': '10/s'}}}, %s}",
           ops);
  for (char *p = text; *p; p++)
    if (*p == '\'') *p = '"';
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(text, "<t>", NULL, 0, &err);
  assert_null(s);
  if (strcmp(err.path, path) != 0 || strstr(err.message, words) == NULL)
    fail_msg("got %s: %s", err.path, err.message);
}

static void test_ops_loader_errors(void **state) {
  (void)state;
  expect_error("'operators': [{'when': {'column': 'api_queu', 'above': 1},"
               " 'do': {'action': 'pause', 'population': 'c'}}]",
               "$.operators[0].when.column", "did you mean \"api_queue\"");
  expect_error("'events': [{'at': '1s', 'action': 'pause', 'population': 'd'}]",
               "$.events[0].population", "no client population");
  expect_error("'events': [{'at': '1s', 'action': 'restart', 'population': 'c',"
               " 'restart_backoff': 'none'}]",
               "$.events[0].restart_backoff", "only with \"init\"");
  expect_error("'events': [{'at': '1s', 'action': 'flush', 'service': 'api'}]", "$.events[0]",
               "no look-aside cache");
  expect_error("'events': [{'at': '20s', 'action': 'pause', 'population': 'c'}]",
               "$.events[0].at", "before the scenario's duration");
  expect_error("'operators': [{'when': {'column': 'api_queue', 'above': 1, 'after': '1h'},"
               " 'do': {'action': 'pause', 'population': 'c'}}]",
               "$.operators[0].when.after", "the rule would never fire");
  expect_error("'operators': [{'when': {'column': 'api_queue', 'above': 1, 'below': 2},"
               " 'do': {'action': 'pause', 'population': 'c'}}]",
               "$.operators[0].when", "exactly one of");
  expect_error("'events': [{'at': '1s', 'action': 'restart', 'population': 'c',"
               " 'init': {'service': 'api', 'method': '/a.A/Init', 'policy': {"
               "'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}}}}]",
               "$.events[0].init.policy", "keeps no channel state");
  expect_error("'events': [{'at': '1s', 'action': 'reboot', 'population': 'c'}]",
               "$.events[0].action", "\"shed\"");
  expect_error("'events': [{'at': '1s', 'action': 'shed', 'service': 'api', 'fraction': 1.5}]",
               "$.events[0].fraction", "[0, 1]");
  expect_error("'events': [{'at': '1s', 'action': 'shed', 'service': 'api'}]",
               "$.events[0].fraction", "share of arriving requests");
  expect_error("'events': [{'at': '1s', 'action': 'shed', 'service': 'api', 'fraction': 0.5,"
               " 'status': 'BOGUS'}]",
               "$.events[0].status", "status");
  expect_error("'events': [{'at': '1s', 'action': 'replicas', 'service': 'api', 'replicas': 65}]",
               "$.events[0].replicas", "[1, 64]");
  expect_error("'events': [{'at': '1s', 'action': 'replicas', 'service': 'api', 'replicas': 2,"
               " 'startup_delay': '-1s'}]",
               "$.events[0].startup_delay", "duration");
  expect_error("'operators': [{'when': {'column': 'api_queue', 'above': 1},"
               " 'do': {'action': 'replicas', 'service': 'api', 'replicas': 2, 'at': '1s'}}]",
               "$.operators[0].do.at", "");
  expect_error("'events': [{'at': '1s', 'action': 'policy', 'edge': 'c->db', 'policy': {}}]",
               "$.events[0].edge", "no edge");
  expect_error("'events': [{'at': '1s', 'action': 'policy', 'edge': 'c->api'}]",
               "$.events[0].policy", "pushed");
  expect_error("'events': [{'at': '1s', 'action': 'policy', 'edge': 'c->api', 'policy': {"
               "'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}}}]",
               "$.events[0].policy", "channel keeps its own");
  expect_error("'events': [{'at': '1s', 'action': 'policy', 'edge': 'c->api', 'delay': 'x',"
               " 'policy': {}}]",
               "$.events[0].delay", "duration");
  expect_error("'events': [{'at': '1s', 'action': 'rate', 'population': 'c', 'factor': 0}]",
               "$.events[0].factor", "for 0 use \"pause\"");
  expect_error("'events': [{'at': '1s', 'action': 'rate', 'population': 'c', 'factor': 1.5}]",
               "$.events[0].factor", "(0, 1]");
  expect_error("'events': [{'at': '1s', 'action': 'rate', 'population': 'c'}]",
               "$.events[0].factor", "multiplier");
  expect_error("'events': [{'at': '1s', 'action': 'rate', 'population': 'c', 'fraction': 0.5}]",
               "$.events[0].fraction", "factor");
}

/* A rate action on a closed-loop population is refused: it has no arrival rate to scale. */
static void test_ops_rate_refuses_closed_loop(void **state) {
  (void)state;
  const char *text =
      "{\"duration\": \"10s\", \"services\": {\"api\": {\"service_time\": \"1ms\"}},"
      " \"clients\": {\"u\": {\"target\": \"api\", \"methods\": [\"/a.A/Get\"],"
      "   \"arrival\": {\"kind\": \"closed\", \"think\": \"1s\"}}},"
      " \"events\": [{\"at\": \"1s\", \"action\": \"rate\", \"population\": \"u\","
      " \"factor\": 0.5}]}";
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(text, "<t>", NULL, 0, &err);
  assert_null(s);
  if (strcmp(err.path, "$.events[0].population") != 0 || strstr(err.message, "open-loop") == NULL)
    fail_msg("got %s: %s", err.path, err.message);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ops_rule_fires_once_per_crossing),
      cmocka_unit_test(test_ops_rule_after),
      cmocka_unit_test(test_ops_rule_honours_for),
      cmocka_unit_test(test_ops_pause_and_resume),
      cmocka_unit_test(test_herd_crashloop_delays),
      cmocka_unit_test(test_herd_crashloop_in_a_world),
      cmocka_unit_test(test_herd_spread_is_uniform),
      cmocka_unit_test(test_ops_shed_half),
      cmocka_unit_test(test_ops_replicas_after_delay),
      cmocka_unit_test(test_ops_policy_push_after_delay),
      cmocka_unit_test(test_ops_loader_errors),
      cmocka_unit_test(test_ops_rate_halves_arrivals),
      cmocka_unit_test(test_ops_rate_refuses_closed_loop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
