/*
 * test_model_call.c: a logical call on an edge, driven by the engine: retries multiply
 * attempts, layers of retries multiply again (and fan-out with them, in the worst case),
 * the deadline spans every attempt, replayed streams count duplicates, a hedge cuts a stall,
 * and each edge counts its calls' stop reasons (no_retry_policy where there is no policy).
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
 * Retries and layers
 * =================================================================== */

static void test_model_call_retries_multiply_attempts(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
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
  assert_int_equal(test_svc(r, "api")->arrivals, 3 * r->calls_started);
  assert_int_equal(test_svc(r, "api")->rejected, 3 * r->calls_started);
  assert_int_equal(test_edge(r, "c", "api")->worst_case, 3);
  test_run_free(&x);
}

/* Three layers of three attempts over a failing bottom: 27 attempts per call arrive there. */
static void test_model_call_nested_layers_multiply(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '2s',"
                " 'services': {"
                "  'front': {'service_time': '1ms', 'workers': 1000, 'calls': [{'service': 'mid',"
                "     'method': '/m.M/Do', 'policy': " TEST_P3
                "}]},"
                "  'mid': {'service_time': '1ms', 'workers': 1000, 'calls': [{'service': 'db',"
                "     'method': '/d.D/Do', 'policy': " TEST_P3
                "}]},"
                "  'db': {'service_time': '1ms', 'workers': 1000,"
                "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
                " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'], 'policy': " TEST_P3
                ","
                "   'arrival': {'kind': 'script', 'at': ['0s']}, 'count': 10}}}",
                1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 10);
  assert_int_equal(test_svc(r, "front")->arrivals, 30);
  assert_int_equal(test_svc(r, "mid")->arrivals, 90);
  assert_int_equal(test_svc(r, "db")->arrivals, 270);
  assert_int_equal(test_edge(r, "c", "front")->worst_case, 3);
  assert_int_equal(test_edge(r, "front", "mid")->worst_case, 9);
  assert_int_equal(test_edge(r, "mid", "db")->worst_case, 27);
  assert_int_equal(test_edge(r, "mid", "db")->calls, 90);
  assert_int_equal(test_edge(r, "mid", "db")->attempts, 270);
  /* The failure travels up as UNAVAILABLE at every layer. */
  assert_int_equal(r->by_status.grpc[RETRY_GRPC_UNAVAILABLE], 10);
  test_run_free(&x);
}

/* A call made fanout times is that many calls: the worst case into db is 3 (the client) x 10
 * copies x 3 (each copy's own attempts), and a failing db sees exactly that per call. */
static void test_model_call_worst_case_multiplies_by_fanout(void **state) {
  (void)state;
  test_run x;
  test_run_text(
      &x,
      "{'duration': '2s',"
      " 'services': {"
      "  'front': {'service_time': '1ms', 'workers': 1000, 'calls_mode': 'fanout',"
      "     'calls': [{'service': 'db', 'method': '/d.D/Do', 'fanout': 10, 'policy': " TEST_P3
      "}]},"
      "  'db': {'service_time': '1ms', 'workers': 1000,"
      "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
      " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'], 'policy': " TEST_P3
      ","
      "   'arrival': {'kind': 'script', 'at': ['0s']}, 'count': 4}}}",
      1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 4);
  assert_int_equal(test_edge(r, "c", "front")->worst_case, 3);
  assert_int_equal(test_edge(r, "front", "db")->worst_case, 90);
  assert_int_equal(test_edge(r, "front", "db")->max_attempts, 3);
  assert_int_equal(test_svc(r, "db")->arrivals, 4 * 90);
  test_run_free(&x);
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
  x.s = test_load(text);
  retry_error err;
  retry_error_clear(&err);
  x.k = sim_kernel_create(0, NULL);
  x.w = model_world_create(expt_scenario_config(x.s, 0), x.k, 1, &err);
  assert_non_null(x.w);
  r = model_world_results(x.w);
  assert_true(test_edge(r, "s0", "s1")->worst_case == 1000);
  assert_true(test_edge(r, "s5", "s6")->worst_case == UINT64_C(1000000000000000000));
  assert_true(test_edge(r, "s6", "s7")->worst_case == UINT64_MAX);
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Deadlines, streams, hedging, stop reasons
 * =================================================================== */

/* The deadline covers every attempt: 1.5 s handler that refuses, 2 s timeout: two attempts,
 * DEADLINE_EXCEEDED, and the call ends at the deadline. */
static void test_model_call_deadline_spans_attempts(void **state) {
  (void)state;
  test_run x;
  test_run_text(
      &x,
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
  test_run_free(&x);
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
  test_run x;
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->attempts, attempts);
  assert_int_equal(x.r->stream_items, items);
  assert_int_equal(x.r->stream_duplicates, dups);
  test_run_free(&x);
}

static void test_model_call_stream_replays_count_duplicates(void **state) {
  (void)state;
  stream_row(false, 1, 2, 0);
  stream_row(true, 2, 7, 2);
}

/* Hedging: a replica that stalls 400 ms on first attempts; a hedge after 50 ms answers. */
static void test_model_call_hedge_cuts_the_stall(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
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
  assert_int_equal(test_svc(r, "s")->abandoned, 3);
  test_run_free(&x);
}

/* Issue 10, item 1: an internal edge counts its own calls' stop reasons, statuses, latencies
 * and failures, and reports the shared state its callers (each replica of front) hold, in the
 * results and in its own time-series columns. */
static void test_model_call_edge_by_stop_reason(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
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
  const model_edge_stats *e = test_edge(r, "front", "db");
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
  assert_int_equal(test_edge(r, "c", "front")->state.holders, 0);
  /* Its columns: counters that add up to the totals, and the throttle's tokens. */
  const model_timeseries *ts = &r->ts;
  assert_true(fabs(test_ts_total(ts, "front->db_attempt_rps") - (double)e->attempts) < 1e-6);
  assert_true(fabs(test_ts_total(ts, "front->db_retry_rps") - (double)e->retries) < 1e-6);
  assert_true(fabs(test_ts_total(ts, "front->db_failure_rps") - (double)e->failed) < 1e-6);
  assert_true(test_ts_col(ts, "front->db_tokens") >= 0);
  assert_true(test_ts_col(ts, "front->db_budget") < 0);
  assert_true(test_ts_col(ts, "front->db_reject_p") < 0);
  assert_true(test_ts_col(ts, "c->front_attempt_rps") >= 0);
  assert_true(test_ts_col(ts, "c->front_tokens") < 0);
  test_run_free(&x);
}

/* Issue 10, item 3: a client without a retry policy never ran out of attempts. Its
 * queue-full refusals stop with no_retry_policy, not max_attempts; a call whose deadline
 * passed still says deadline; and an internal edge without a policy says the same. */
static void test_model_call_no_policy_stop_reason(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
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
  const model_edge_stats *e = test_edge(r, "front", "db");
  assert_int_equal(e->by_stop[RETRY_STOP_MAX_ATTEMPTS], 0);
  assert_int_equal(e->by_stop[RETRY_STOP_NO_RETRY_POLICY], e->failed);
  assert_true(e->by_status.grpc[RETRY_GRPC_RESOURCE_EXHAUSTED] +
                  e->by_status.grpc[RETRY_GRPC_UNAVAILABLE] >
              0);
  const model_edge_stats *d = test_edge(r, "d", "db");
  assert_true(d->by_stop[RETRY_STOP_DEADLINE] > 0);
  test_run_free(&x);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_call_retries_multiply_attempts),
      cmocka_unit_test(test_model_call_nested_layers_multiply),
      cmocka_unit_test(test_model_call_worst_case_multiplies_by_fanout),
      cmocka_unit_test(test_model_call_deadline_spans_attempts),
      cmocka_unit_test(test_model_call_stream_replays_count_duplicates),
      cmocka_unit_test(test_model_call_edge_by_stop_reason),
      cmocka_unit_test(test_model_call_no_policy_stop_reason),
      cmocka_unit_test(test_model_call_hedge_cuts_the_stall),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
