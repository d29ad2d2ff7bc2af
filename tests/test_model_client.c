/*
 * test_model_client.c: the callers' channel state and the client populations: the retry
 * throttle's scope (per channel, or per process and server name), concurrency limiters that
 * refuse or make calls wait for a permit, and closed-loop clients retrying by hand (one
 * operation however many tries, settled even when a breaker refuses them).
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
 * Channel state: throttles and limiters
 * =================================================================== */

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
static void run_two_entries(test_run *x, const char *profile, int max_tokens_b) {
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
  test_run_text(x, text, 1);
}

/* The two edges front -> db (in the order of the call entries). */
static void two_edges(const model_results *r, const model_edge_stats **e) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_edges; i++)
    if (strcmp(r->edges[i].from, "front") == 0 && strcmp(r->edges[i].to, "db") == 0 && n < 2)
      e[n++] = &r->edges[i];
  assert_int_equal(n, 2);
}

static void test_model_client_throttle_scope_per_process_and_server_name(void **state) {
  (void)state;
  test_run x;
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
  test_run_free(&x);
  /* grpc-core-1.51: one bucket for the replica's two channels to db. */
  run_two_entries(&x, "grpc-core-1.51", 10);
  two_edges(x.r, e);
  assert_int_equal(e[0]->retries + e[1]->retries, 2);
  assert_int_equal(e[0]->by_stop[RETRY_STOP_THROTTLED] + e[1]->by_stop[RETRY_STOP_THROTTLED], 4);
  for (int k = 0; k < 2; k++)
    assert_true(fabs(e[k]->state.tokens_mean - 2.0) < 1e-9);
  /* The time series follows the same bucket from both edges (their gauges walk the holders). */
  double t0 = x.r->ts.values[(x.r->ts.n_buckets - 1) * x.r->ts.n_columns +
                             (size_t)test_ts_col(&x.r->ts, "front->db_tokens")];
  assert_true(fabs(t0 - 2.0) < 1e-9);
  test_run_free(&x);
  /* Configs that differ: the later entry's maxTokens 4 governs the shared bucket. */
  run_two_entries(&x, "grpc-core-1.51", 4);
  two_edges(x.r, e);
  assert_int_equal(e[0]->retries + e[1]->retries, 1);
  for (int k = 0; k < 2; k++)
    assert_true(fabs(e[k]->state.tokens_mean - 0.0) < 1e-9);
  test_run_free(&x);
  /* The same world under the default profile: 10 and 4 tokens, 2 + 1 retries. */
  run_two_entries(&x, NULL, 4);
  two_edges(x.r, e);
  assert_int_equal(e[0]->retries, 2);
  assert_int_equal(e[1]->retries, 1);
  test_run_free(&x);
}

/* Closed loop with a user-level retry: every failed call is tried again by the user, and the
 * ledger counts both tries as one operation. */
/* Issue 14: a concurrency limiter on a client edge. One client sends 200 calls/s to a
 * service that takes 100 ms with no queueing: 20 calls would be in flight, but an AIMD limit
 * pinned at 5 (min = max = 5) admits 5 at a time, about 50/s; the others end at once,
 * throttled, with UNAVAILABLE and no attempt. The time series carries the limit (5) and the
 * permits held (at most 5). */
static void test_model_client_concurrency_limit_refuses_above_the_limit(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '5s', 'services': {"
                "  'svc': {'service_time': '100ms', 'workers': 1000}},"
                " 'clients': {'c': {'target': 'svc', 'methods': ['/s.S/Do'],"
                "   'arrival': {'kind': 'open', 'rate': '200/s'},"
                "   'policy': {'retrysim': {'concurrencyLimit': {'type': 'aimd', 'initialLimit': 5,"
                "     'minLimit': 5, 'maxLimit': 5}}}}}}",
                1);
  const model_results *r = x.r;
  const model_edge_stats *e = test_edge(r, "c", "svc");
  assert_true(e->calls > 800);
  int64_t refused = e->by_stop[RETRY_STOP_THROTTLED];
  assert_true(refused > e->calls / 2);
  assert_int_equal(e->attempts, e->calls - refused);
  assert_int_equal(e->by_status.grpc[RETRY_GRPC_UNAVAILABLE], refused);
  double admitted_per_s = (double)(e->calls - refused) / 5.0;
  assert_true(admitted_per_s > 40 && admitted_per_s < 55);
  const model_timeseries *ts = &r->ts;
  int cl = test_ts_col(ts, "c->svc_limit"), cf = test_ts_col(ts, "c->svc_limit_in_flight");
  assert_true(cl >= 0 && cf >= 0);
  double held = 0;
  for (size_t b = 0; b + 1 < ts->n_buckets; b++) {
    assert_true(ts->values[b * ts->n_columns + (size_t)cl] == 5.0);
    double f = ts->values[b * ts->n_columns + (size_t)cf];
    assert_true(f >= 0 && f <= 5.0);
    held += f;
  }
  assert_true(held / (double)(ts->n_buckets - 1) > 3.5);
  assert_int_equal(test_ts_col(ts, "c->svc_aws_fill_rate"), -1);
  test_run_free(&x);
}

/* Netflix's BlockingLimiter around a limit of 5 (100 ms calls, 20 made at once by one
 * process): a call above the limit waits for a permit, first come first served, and is
 * refused only when its wait is over. Without a timeout all 20 succeed, in waves of 5 (the
 * last waited 300 ms); with a 150 ms timeout the second wave (waited 100 ms) gets in and the
 * other 10 are refused at 150 ms; without blocking 15 are refused at once. */
static void blocking_run(test_run *x, const char *limit_extra) {
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
  test_run_text(x, text, 1);
}

static void test_model_client_blocking_limit_waits_for_a_permit(void **state) {
  (void)state;
  test_run x;
  blocking_run(&x, ", 'blocking': true");
  const model_edge_stats *e = test_edge(x.r, "c", "svc");
  assert_int_equal(e->calls, 20);
  assert_int_equal(e->ok, 20);
  assert_int_equal(e->attempts, 20);
  assert_int_equal(e->by_stop[RETRY_STOP_THROTTLED], 0);
  int64_t p25 = sim_hist_quantile(&e->latency, 0.25), max = sim_hist_quantile(&e->latency, 1.0);
  assert_true(p25 >= 99000000 && p25 <= 101000000);  /* the first wave: no wait */
  assert_true(max >= 399000000 && max <= 401000000); /* the fourth: 300 ms of it waiting */
  test_run_free(&x);

  blocking_run(&x, ", 'blocking': true, 'blockingTimeout': '0.15s'");
  e = test_edge(x.r, "c", "svc");
  assert_int_equal(e->ok, 10);
  assert_int_equal(e->attempts, 10);
  assert_int_equal(e->by_stop[RETRY_STOP_THROTTLED], 10);
  assert_int_equal(e->by_status.grpc[RETRY_GRPC_UNAVAILABLE], 10);
  /* the refused ones waited their 150 ms; the second wave took 100 ms + 100 ms */
  max = sim_hist_quantile(&e->latency, 1.0);
  assert_true(max >= 199000000 && max <= 201000000);
  assert_true(sim_hist_quantile(&e->latency_ok, 0.75) >= 199000000);
  test_run_free(&x);

  blocking_run(&x, "");
  e = test_edge(x.r, "c", "svc");
  assert_int_equal(e->ok, 5);
  assert_int_equal(e->by_stop[RETRY_STOP_THROTTLED], 15);
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * User-level retries
 * =================================================================== */

static void test_model_client_user_retries_count_as_one_operation(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
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
  test_run_free(&x);
}

/* A breaker that opens refuses calls inside their start: a closed-loop client that retries by
 * hand must still account for its operation (the ledger settles, nothing leaks under ASan). */
static void test_model_client_breaker_refusals_settle_user_retried_operations(void **state) {
  (void)state;
  test_run x;
  test_run_text(
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
  assert_int_equal(r->executions, test_svc(r, "s")->arrivals);
  assert_int_equal(r->calls_started, r->calls_ok + r->calls_failed + r->calls_unfinished);
  /* Each operation is tried at most three times by its user. */
  assert_true(r->executions <= 3 * r->operations);
  test_run_free(&x);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_client_throttle_scope_per_process_and_server_name),
      cmocka_unit_test(test_model_client_user_retries_count_as_one_operation),
      cmocka_unit_test(test_model_client_concurrency_limit_refuses_above_the_limit),
      cmocka_unit_test(test_model_client_blocking_limit_waits_for_a_permit),
      cmocka_unit_test(test_model_client_breaker_refusals_settle_user_retried_operations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
