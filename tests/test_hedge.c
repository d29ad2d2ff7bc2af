/*
 * test_hedge.c: A6 hedgingPolicy in the engine, rule by rule: the staggered schedule, "0s"
 * sends all at once, non-fatal statuses send the next hedge immediately, fatal ones cancel
 * everything, pushback on hedges, throttling of hedges, commit on headers, budgets and
 * breakers seeing hedges as attempts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "retry/retry_parts.h"
#include "tests/support/script.h"

#define MS RETRY_NS_PER_MS
#define S RETRY_NS_PER_S

static test_rng g_rng;

static retry_call_opts opts_make(int64_t deadline_ns) {
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.call_id = 1;
  o.method = "/svc/Get";
  o.deadline_ns = deadline_ns;
  o.rng = test_rng_make(&g_rng, 9);
  o.ext = script_ext();
  return o;
}

static void hedge_policy(retry_policy *p, int32_t max_attempts, int64_t delay_ms) {
  retry_policy_init(p, RETRY_SPACE_GRPC);
  p->kind = RETRY_POLICY_HEDGE;
  retry_policy_set_max_attempts(p, max_attempts, RETRY_GRPC_MAX_ATTEMPTS_LIMIT);
  p->hedging_delay_ns = delay_ms * MS;
  retry_status_set_add(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(retry_policy_validate(p, NULL), 0);
}

static void test_hedge_staggered_schedule_until_an_answer(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 4, 100);
  /* Every attempt takes 350 ms: hedges at 0, 100, 200, 300; the first answers at 350. */
  script_attempt slow = script_step(350, 0);
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &slow, 1, &r), 0);
  assert_int_equal(r.attempts, 4);
  for (int k = 0; k < 4; k++)
    assert_int_equal(r.send_ns[k], k * 100 * MS);
  assert_int_equal(r.end_ns, 350 * MS);
  assert_int_equal(r.status, RETRY_GRPC_OK);
  assert_int_equal(r.cancelled, 3);
  assert_int_equal(retry_call_hedges(&r.call), 3);
  assert_int_equal(retry_call_retries(&r.call), 0);
}

static void test_hedge_zero_delay_sends_all_at_once(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 3, 0);
  script_attempt steps[3] = {script_step(30, 0), script_step(10, 0), script_step(20, 0)};
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 3, &r), 0);
  assert_int_equal(r.attempts, 3);
  for (int k = 0; k < 3; k++)
    assert_int_equal(r.send_ns[k], 0);
  assert_int_equal(r.end_ns, 10 * MS); /* the fastest wins */
}

static void test_hedge_non_fatal_sends_next_hedge_immediately(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 3, 500);
  /* The original fails UNAVAILABLE (non-fatal) at 40 ms: hedge 2 goes at once, and the
   * schedule resumes 500 ms after it. */
  script_attempt steps[3] = {script_step(40, RETRY_GRPC_UNAVAILABLE), script_step(1000, 0),
                             script_step(10, 0)};
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 3, &r), 0);
  assert_int_equal(r.send_ns[1], 40 * MS);
  assert_int_equal(r.send_ns[2], 540 * MS);
  assert_int_equal(r.end_ns, 550 * MS);
  assert_int_equal(r.status, RETRY_GRPC_OK);
}

static void test_hedge_fatal_status_cancels_all(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 3, 50);
  script_attempt steps[2] = {script_step(500, 0), script_step(20, RETRY_GRPC_INVALID_ARGUMENT)};
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.status, RETRY_GRPC_INVALID_ARGUMENT);
  assert_int_equal(r.reason, RETRY_STOP_NON_RETRYABLE_STATUS);
  assert_int_equal(r.end_ns, 70 * MS);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.cancelled, 1);
}

static void test_hedge_all_non_fatal_ends_with_max_attempts(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 3, 100);
  script_attempt fail = script_step(10, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &fail, 1, &r), 0);
  assert_int_equal(r.attempts, 3);
  assert_int_equal(r.reason, RETRY_STOP_MAX_ATTEMPTS);
  assert_int_equal(r.status, RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(r.end_ns, 30 * MS); /* each failure sent the next one at once */
}

static void test_hedge_pushback_delays_next_hedge_then_schedule_resumes(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 4, 100);
  script_attempt steps[4] = {script_step(20, RETRY_GRPC_UNAVAILABLE), script_step(1000, 0),
                             script_step(1000, 0), script_step(1000, 0)};
  steps[0].pushback = "300";
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 4, &r), 0);
  assert_int_equal(r.send_ns[1], 320 * MS); /* n ms after the pushback */
  assert_int_equal(r.send_ns[2], 420 * MS); /* then hedgingDelay apart */
  assert_int_equal(r.send_ns[3], 520 * MS);
}

static void test_hedge_stop_pushback_sends_no_more_hedges(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 4, 100);
  script_attempt steps[2] = {script_step(20, RETRY_GRPC_UNAVAILABLE), script_step(10, 0)};
  steps[0].pushback = "-1";
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.attempts, 1);
  assert_int_equal(r.reason, RETRY_STOP_PUSHBACK_STOP);
  /* With another hedge already in flight, it may still win. */
  steps[0].duration_ns = 150 * MS;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.status, RETRY_GRPC_OK);
  assert_int_equal(r.end_ns, 110 * MS);
}

static void test_hedge_throttle_blocks_hedges_not_the_original(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 3, 10);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 4000;
  tc.throttle.token_ratio_milli = 100;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_throttle *th = retry_target_throttle(t);
  retry_throttle_record_failure(th);
  retry_throttle_record_failure(th); /* 2000 = max/2: hedges blocked */
  script_attempt slow = script_step(100, 0);
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, t, &o, 0, &slow, 1, &r), 0);
  assert_int_equal(r.attempts, 1); /* the original is always sent */
  assert_int_equal(r.status, RETRY_GRPC_OK);
  /* A non-fatal failure of the original then ends the call as throttled. */
  script_attempt fail = script_step(5, RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(script_run(&p, t, &o, 0, &fail, 1, &r), 0);
  assert_int_equal(r.attempts, 1);
  assert_int_equal(r.reason, RETRY_STOP_THROTTLED);
  retry_target_destroy(t);
}

static void test_hedge_headers_commit_and_cancel_the_others(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 3, 50);
  script_attempt steps[3] = {script_step(400, RETRY_GRPC_UNAVAILABLE), script_step(400, 0),
                             script_step(400, 0)};
  steps[0].headers_at_ns = 120 * MS; /* the original commits at 120 ms, after 2 hedges left */
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 3, &r), 0);
  assert_int_equal(r.attempts, 3);
  assert_int_equal(r.cancelled, 2);
  assert_int_equal(r.reason, RETRY_STOP_COMMITTED);
  assert_int_equal(r.status, RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(r.end_ns, 400 * MS);
}

static void test_hedge_not_idempotent_sends_no_hedges(void **state) {
  (void)state;
  static const char *const allow[] = {"/svc/Get"};
  retry_policy p;
  hedge_policy(&p, 3, 10);
  p.idempotent_methods = allow;
  p.n_idempotent_methods = 1;
  p.has_idempotent_allowlist = true;
  script_attempt slow = script_step(100, 0);
  retry_call_opts o = opts_make(5 * S);
  o.method = "/svc/Charge";
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &slow, 1, &r), 0);
  assert_int_equal(r.attempts, 1);
  slow.status = RETRY_GRPC_UNAVAILABLE;
  assert_int_equal(script_run(&p, NULL, &o, 0, &slow, 1, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_METHOD_NOT_IDEMPOTENT);
}

static void test_hedge_deadline_stops_the_schedule(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 5, 100);
  script_attempt slow = script_step(1000, 0);
  retry_call_opts o = opts_make(250 * MS);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &slow, 1, &r), 0);
  assert_int_equal(r.attempts, 3); /* 0, 100, 200; 300 is past the deadline */
  assert_int_equal(r.reason, RETRY_STOP_DEADLINE);
  assert_int_equal(r.end_ns, 250 * MS);
  assert_int_equal(r.status, RETRY_GRPC_DEADLINE_EXCEEDED);
}

static void test_hedge_breaker_sees_hedges_as_attempts(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 4, 10);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_breaker = true;
  retry_breaker_config_init(&tc.breaker, RETRY_BREAKER_CONSECUTIVE);
  tc.breaker.failure_threshold = 2;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  script_attempt fail = script_step(1, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  assert_int_equal(script_run(&p, t, &o, 0, &fail, 1, &r), 0);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.reason, RETRY_STOP_BREAKER_OPEN);
  retry_target_stats s;
  retry_target_stats_get(t, 10 * MS, &s);
  assert_int_equal(s.in_flight, 0); /* every attempt's accounting was given back */
  retry_target_destroy(t);
}

static void test_hedge_envoy_budget_slots_returned(void **state) {
  (void)state;
  retry_policy p;
  hedge_policy(&p, 3, 10);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.budget = RETRY_BUDGET_ENVOY;
  retry_envoy_budget_config_init(&tc.envoy);
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  script_attempt slow = script_step(100, 0);
  retry_call_opts o = opts_make(5 * S);
  script_result r;
  for (int i = 0; i < 5; i++) {
    assert_int_equal(script_run(&p, t, &o, (int64_t)i * S, &slow, 1, &r), 0);
    assert_int_equal(r.attempts, 3);
  }
  retry_target_stats s;
  retry_target_stats_get(t, 10 * S, &s);
  assert_int_equal(s.in_flight, 0);
  retry_target_destroy(t);
}

static void test_hedge_cancelled_half_open_probe_gives_permit_back(void **state) {
  (void)state;
  /* A half-open breaker with 2 probes admits the original and one hedge; the hedge wins and
   * the original is cancelled. Its permit must come back, or the breaker would wait forever
   * for a probe result that never comes. */
  retry_policy p;
  hedge_policy(&p, 2, 10);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_breaker = true;
  retry_breaker_config_init(&tc.breaker, RETRY_BREAKER_CONSECUTIVE);
  tc.breaker.failure_threshold = 1;
  tc.breaker.half_open_calls = 2;
  tc.breaker.open_duration_ns = 1 * S;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_breaker *b = retry_target_breaker(t);
  assert_true(retry_breaker_allow(b, 0));
  retry_breaker_record(b, 0, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  script_attempt steps[2] = {script_step(500, 0), script_step(5, 0)};
  retry_call_opts o = opts_make(10 * S);
  script_result r;
  assert_int_equal(script_run(&p, t, &o, 2 * S, steps, 2, &r), 0);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.cancelled, 1);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  assert_true(retry_breaker_allow(b, 3 * S)); /* the cancelled probe's permit is back */
  retry_breaker_record(b, 3 * S, false);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  retry_target_destroy(t);
}

static void test_hedge_blocked_hedge_leaves_no_timer(void **state) {
  (void)state;
  /* Envoy budget with one concurrent slot: hedge 2 takes it at 100 ms. The original then
   * fails non-fatally at 150 ms; hedge 3 is refused by the budget, so the engine must wait
   * for hedge 2 only, with no timer left for the hedge that cannot go. */
  retry_policy p;
  hedge_policy(&p, 3, 100);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.budget = RETRY_BUDGET_ENVOY;
  tc.envoy.budget_percent = 0;
  tc.envoy.min_retry_concurrency = 1;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_call_opts o = opts_make(5 * S);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(d.wake_ns, 100 * MS);
  retry_call_wake(&c, 100 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(d.attempt, 2);
  assert_int_equal(d.wake_ns, 200 * MS);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 150 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_true(d.wake_ns == RETRY_NEVER);
  retry_outcome_init(&out, RETRY_GRPC_OK);
  retry_call_on_outcome(&c, 2, &out, 180 * MS, &d);
  assert_int_equal(d.reason, RETRY_STOP_OK);
  retry_target_stats s;
  retry_target_stats_get(t, 200 * MS, &s);
  assert_int_equal(s.in_flight, 0);
  assert_int_equal(s.budget_available, 1); /* the slot came back */
  retry_target_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hedge_staggered_schedule_until_an_answer),
      cmocka_unit_test(test_hedge_zero_delay_sends_all_at_once),
      cmocka_unit_test(test_hedge_non_fatal_sends_next_hedge_immediately),
      cmocka_unit_test(test_hedge_fatal_status_cancels_all),
      cmocka_unit_test(test_hedge_all_non_fatal_ends_with_max_attempts),
      cmocka_unit_test(test_hedge_pushback_delays_next_hedge_then_schedule_resumes),
      cmocka_unit_test(test_hedge_stop_pushback_sends_no_more_hedges),
      cmocka_unit_test(test_hedge_throttle_blocks_hedges_not_the_original),
      cmocka_unit_test(test_hedge_headers_commit_and_cancel_the_others),
      cmocka_unit_test(test_hedge_not_idempotent_sends_no_hedges),
      cmocka_unit_test(test_hedge_deadline_stops_the_schedule),
      cmocka_unit_test(test_hedge_breaker_sees_hedges_as_attempts),
      cmocka_unit_test(test_hedge_envoy_budget_slots_returned),
      cmocka_unit_test(test_hedge_cancelled_half_open_probe_gives_permit_back),
      cmocka_unit_test(test_hedge_blocked_hedge_leaves_no_timer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
