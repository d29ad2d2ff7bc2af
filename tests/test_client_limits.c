/*
 * test_client_limits.c: the client-side protections of issue 14 wired into retry_target and
 * retry_call, rule by rule: the AWS SDKs' adaptive retry mode (its limiter holds an attempt
 * back or refuses it, first attempts included, after a throttling status), Brooker's
 * retry-only breaker (retries stop above failures / calls; first attempts always go) and his
 * retry token bucket (starts full, earns per call). The parts' own rules are in
 * test_aws_adaptive.c and test_brooker.c; this suite checks what a call sees.
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
  o.deadline_ns = deadline_ns;
  o.rng = test_rng_make(&g_rng, 7);
  o.ext = script_ext();
  return o;
}

/* Starts c with o and an ext of its own (calls a test holds at once never share one). */
static void start_call(retry_call *c, const retry_policy *p, retry_target *t,
                       const retry_call_opts *o, int64_t now_ns, retry_decision *d) {
  retry_call_opts own = *o;
  own.ext = script_ext();
  retry_call_start(c, p, t, &own, now_ns, d);
}

/* A retry policy without jitter: max attempts (cap 10), backoff fixed at backoff_ms, retrying
 * UNAVAILABLE and RESOURCE_EXHAUSTED. */
static void policy_make(retry_policy *p, int32_t max_attempts, int64_t backoff_ms) {
  retry_policy_init(p, RETRY_SPACE_GRPC);
  p->kind = RETRY_POLICY_RETRY;
  retry_policy_set_max_attempts(p, max_attempts, 10);
  p->backoff.initial_ns = backoff_ms * MS;
  p->backoff.max_ns = backoff_ms * MS;
  p->backoff.multiplier = 1.0;
  p->backoff.jitter = RETRY_JITTER_NONE;
  retry_status_set_add(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);
  retry_status_set_add(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_RESOURCE_EXHAUSTED);
  assert_int_equal(retry_policy_validate(p, NULL), 0);
}

static retry_target *aws_target(bool fail_fast) {
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_aws_adaptive = true;
  retry_aws_adaptive_config_init(&tc.aws_adaptive);
  tc.aws_adaptive.fail_fast = fail_fast;
  retry_aws_throttle_statuses_init(&tc.aws_throttle_statuses);
  assert_true(retry_target_config_has_parts(&tc));
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  return t;
}

static void outcome(retry_call *c, int32_t attempt, int32_t status, int64_t now_ns,
                    retry_decision *d) {
  retry_outcome o;
  retry_outcome_init(&o, status);
  retry_call_on_outcome(c, attempt, &o, now_ns, d);
}

/* {==================================================================
 * AWS adaptive retry mode
 * =================================================================== */

/* The limiter is off until the first throttle (botocore ClientRateLimiter._enabled): a call
 * whose attempts fail with a status outside the throttle set sends as a call without it. */
static void test_aws_adaptive_mode_sends_freely_until_a_throttle(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 3, 50);
  retry_target *t = aws_target(false);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  start_call(&c, &p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  outcome(&c, 1, RETRY_GRPC_UNAVAILABLE, 10 * MS, &d); /* not a throttle by default */
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_int_equal(d.wake_ns, 60 * MS);
  retry_call_wake(&c, 60 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(d.attempt, 2);
  retry_target_stats s;
  retry_target_stats_get(t, 60 * MS, &s);
  assert_true(s.aws_fill_rate == 0.0); /* not enabled */
  retry_target_destroy(t);
}

/* After a throttle the retry waits for a token: the bucket (fill 1/s from the start, then
 * 0.5/s, botocore's _MIN_RATE, once the throttle set the rate to 0.7 x a measured 0) holds
 * 0.01 + 0.05 x 0.5 tokens at the wake, so the attempt goes (1 - 0.035) / 0.5 s later. */
static void test_aws_adaptive_mode_delays_a_retry_until_a_token(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 3, 50);
  retry_target *t = aws_target(false);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  start_call(&c, &p, t, &o, 0, &d);
  outcome(&c, 1, RETRY_GRPC_RESOURCE_EXHAUSTED, 10 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_int_equal(d.wake_ns, 60 * MS);
  retry_call_wake(&c, 60 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  int64_t want = 60 * MS + 1930 * MS;
  assert_true(d.wake_ns >= want - 2 && d.wake_ns <= want + 2);
  assert_int_equal(c.n_attempts, 1);
  retry_target_stats s;
  retry_target_stats_get(t, 60 * MS, &s);
  assert_true(s.aws_fill_rate == 0.5);
  /* An early wake keeps waiting; the wake at the time sends attempt 2. */
  int64_t at = d.wake_ns;
  retry_call_wake(&c, at - 1, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  retry_call_wake(&c, at, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(d.attempt, 2);
  outcome(&c, 2, RETRY_GRPC_OK, at + 10 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_OK);
  retry_target_destroy(t);
}

/* Every attempt passes the limiter, a new call's first attempt included. */
static void test_aws_adaptive_mode_limits_first_attempts_too(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 2, 50);
  retry_target *t = aws_target(false);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  start_call(&c, &p, t, &o, 0, &d);
  outcome(&c, 1, RETRY_GRPC_RESOURCE_EXHAUSTED, 10 * MS, &d); /* its retry is not driven */
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  retry_call c2;
  start_call(&c2, &p, t, &o, 20 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_int_equal(c2.n_attempts, 0);
  assert_true(d.wake_ns > 20 * MS);
  int64_t at = d.wake_ns;
  retry_call_wake(&c2, at, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(d.attempt, 1);
  outcome(&c2, 1, RETRY_GRPC_OK, at + MS, &d);
  assert_int_equal(d.reason, RETRY_STOP_OK);
  retry_target_destroy(t);
}

/* A wait past the call's deadline wakes at the deadline, which ends the call there. */
static void test_aws_adaptive_mode_wait_ends_at_the_deadline(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 3, 50);
  retry_target *t = aws_target(false);
  retry_call_opts o = opts_make(S);
  retry_call c;
  retry_decision d;
  start_call(&c, &p, t, &o, 0, &d);
  outcome(&c, 1, RETRY_GRPC_RESOURCE_EXHAUSTED, 10 * MS, &d);
  retry_call_wake(&c, 60 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_int_equal(d.wake_ns, S);
  retry_call_wake(&c, S, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_DEADLINE);
  assert_int_equal(d.status, RETRY_GRPC_DEADLINE_EXCEEDED);
  assert_int_equal(c.n_attempts, 1);
  retry_target_destroy(t);
}

/* aws-sdk-go-v2 FailOnNoAttemptTokens: no token, the attempt fails unsent (throttled, with the
 * policy's local status) instead of waiting. */
static void test_aws_adaptive_mode_fail_on_no_attempt_tokens_refuses(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 3, 50);
  retry_target *t = aws_target(true);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  start_call(&c, &p, t, &o, 0, &d);
  outcome(&c, 1, RETRY_GRPC_RESOURCE_EXHAUSTED, 10 * MS, &d);
  retry_call_wake(&c, 60 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_THROTTLED);
  assert_int_equal(d.status, p.local_reject_status);
  assert_int_equal(c.n_attempts, 1);
  retry_target_destroy(t);
}

/* The throttle statuses are the config's: with UNAVAILABLE among them, it enables the limiter. */
static void test_aws_adaptive_mode_throttle_statuses_are_configurable(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 3, 50);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_aws_adaptive = true;
  retry_aws_adaptive_config_init(&tc.aws_adaptive);
  tc.aws_adaptive.fail_fast = true;
  retry_status_set_clear(&tc.aws_throttle_statuses);
  retry_status_set_add(&tc.aws_throttle_statuses, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  start_call(&c, &p, t, &o, 0, &d);
  outcome(&c, 1, RETRY_GRPC_UNAVAILABLE, 10 * MS, &d);
  retry_call_wake(&c, 60 * MS, &d);
  assert_int_equal(d.reason, RETRY_STOP_THROTTLED);
  retry_target_destroy(t);
}

/* A hedge held back by the limiter goes at its wake; an outcome in between does not send
 * another one or take a second budget grant. */
static void test_aws_adaptive_mode_delays_a_hedge(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_init(&p, RETRY_SPACE_GRPC);
  p.kind = RETRY_POLICY_HEDGE;
  retry_policy_set_max_attempts(&p, 3, 10);
  p.hedging_delay_ns = 100 * MS;
  retry_status_set_add(&p.retryable, RETRY_SPACE_GRPC, RETRY_GRPC_RESOURCE_EXHAUSTED);
  assert_int_equal(retry_policy_validate(&p, NULL), 0);
  retry_target *t = aws_target(false);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  start_call(&c, &p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  /* Attempt 1 throttled: the next hedge goes at once, but the limiter holds it back. */
  outcome(&c, 1, RETRY_GRPC_RESOURCE_EXHAUSTED, 10 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_true(d.wake_ns > S);
  assert_int_equal(c.n_attempts, 1);
  int64_t at = d.wake_ns;
  retry_call_wake(&c, at, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(d.attempt, 2);
  outcome(&c, 2, RETRY_GRPC_OK, at + MS, &d);
  assert_int_equal(d.reason, RETRY_STOP_OK);
  retry_target_destroy(t);
}

/* }================================================================== */

/* {==================================================================
 * Brooker's retry-only breaker and retry token bucket
 * =================================================================== */

/* retry_strategy.py CircuitBreakerRetryStrategy: after 9 good calls, the 10th call's failure
 * makes 1 / 10 = 0.1, not above max_ratio: it retries; the retry's failure makes 2 / 10: no
 * more retries (breaker_open). The next call's first attempt still goes. */
static void test_retry_breaker_stops_retries_above_the_ratio_never_first_attempts(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 4, 50);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_retry_breaker = true;
  retry_only_breaker_config_init(&tc.retry_breaker);
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  int64_t now = 0;
  for (int i = 0; i < 9; i++, now += 10 * MS) {
    start_call(&c, &p, t, &o, now, &d);
    outcome(&c, 1, RETRY_GRPC_OK, now + MS, &d);
    assert_int_equal(d.reason, RETRY_STOP_OK);
  }
  start_call(&c, &p, t, &o, now, &d);
  outcome(&c, 1, RETRY_GRPC_UNAVAILABLE, now + MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  retry_call_wake(&c, d.wake_ns, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  outcome(&c, 2, RETRY_GRPC_UNAVAILABLE, now + 100 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_BREAKER_OPEN);
  assert_int_equal(c.n_attempts, 2);
  retry_target_stats s;
  retry_target_stats_get(t, now + 100 * MS, &s);
  assert_true(s.retry_breaker_open);
  start_call(&c, &p, t, &o, now + 200 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  retry_target_destroy(t);
}

/* retry_strategy.py AdaptiveRetryStrategy with AdaptiveRetryFactory(0.1, 5): a full bucket of
 * 5 pays 4 retries of a call that always fails (each needs more than 1 token), then
 * budget_exhausted; the next call earns 0.1 on start, 1.1 > 1, so it gets one retry. */
static void test_retry_token_bucket_starts_full_and_earns_per_call(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 10, 50);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.budget = RETRY_BUDGET_TOKEN_BUCKET;
  retry_token_bucket_config_init(&tc.token_bucket);
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call c;
  retry_decision d;
  int64_t now = 0;
  start_call(&c, &p, t, &o, now, &d);
  while (d.action != RETRY_ACTION_DONE) {
    if (d.action == RETRY_ACTION_WAIT) {
      now = d.wake_ns;
      retry_call_wake(&c, now, &d);
      continue;
    }
    now += MS;
    outcome(&c, d.attempt, RETRY_GRPC_UNAVAILABLE, now, &d);
  }
  assert_int_equal(d.reason, RETRY_STOP_BUDGET_EXHAUSTED);
  assert_int_equal(c.n_attempts, 5);
  retry_target_stats s;
  retry_target_stats_get(t, now, &s);
  assert_int_equal(s.budget_available, 1);
  start_call(&c, &p, t, &o, now + S, &d);
  outcome(&c, 1, RETRY_GRPC_UNAVAILABLE, now + S + MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  now = d.wake_ns;
  retry_call_wake(&c, now, &d);
  outcome(&c, 2, RETRY_GRPC_UNAVAILABLE, now + MS, &d);
  assert_int_equal(d.reason, RETRY_STOP_BUDGET_EXHAUSTED);
  assert_int_equal(c.n_attempts, 2);
  retry_target_destroy(t);
}

/* {==================================================================
 * A concurrency limiter on the logical calls (Netflix concurrency-limits)
 * =================================================================== */

/* The limiter's permit covers the whole call, retries included (the library's client
 * interceptor sits above gRPC's retries): at the limit a new call is refused with the reject
 * status (throttled) before any attempt; a call that ends gives its permit back and samples
 * its time: OK a success (AIMD +1 with 2 x in flight >= limit), UNAVAILABLE a drop (x 0.9). */
static void test_concurrency_limit_refuses_calls_at_the_limit_and_samples_each_end(void **state) {
  (void)state;
  retry_policy p;
  policy_make(&p, 3, 50);
  retry_target_config tc;
  retry_target_config_init(&tc);
  retry_target_config_set_limit(&tc, RETRY_LIMIT_AIMD);
  tc.limit.initial_limit = 2;
  tc.limit.min_limit = 1;
  tc.limit_reject_grpc = RETRY_GRPC_RESOURCE_EXHAUSTED;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_call_opts o = opts_make(RETRY_NEVER);
  retry_call a, b, c;
  retry_decision d;
  start_call(&a, &p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  start_call(&b, &p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  start_call(&c, &p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_THROTTLED);
  assert_int_equal(d.status, RETRY_GRPC_RESOURCE_EXHAUSTED);
  assert_int_equal(c.n_attempts, 0);
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.limit, 2);
  assert_int_equal(s.limit_in_flight, 2);
  /* a retries once (the permit stays held), then succeeds: 2 x 1 >= 2, the limit grows. */
  outcome(&a, 1, RETRY_GRPC_UNAVAILABLE, 10 * MS, &d);
  retry_call_wake(&a, d.wake_ns, &d);
  retry_target_stats_get(t, 60 * MS, &s);
  assert_int_equal(s.limit_in_flight, 2);
  outcome(&a, 2, RETRY_GRPC_OK, 70 * MS, &d);
  retry_target_stats_get(t, 70 * MS, &s);
  assert_int_equal(s.limit, 3);
  assert_int_equal(s.limit_in_flight, 1);
  /* b ends UNAVAILABLE after its three attempts: a drop, (int)(3 x 0.9) = 2. */
  int64_t now = 0;
  int32_t k = 1;
  for (;;) {
    now += 10 * MS;
    outcome(&b, k, RETRY_GRPC_UNAVAILABLE, now, &d);
    if (d.action == RETRY_ACTION_DONE) break;
    now = d.wake_ns;
    retry_call_wake(&b, now, &d);
    k = d.attempt;
  }
  assert_int_equal(d.reason, RETRY_STOP_MAX_ATTEMPTS);
  retry_target_stats_get(t, now, &s);
  assert_int_equal(s.limit, 2);
  assert_int_equal(s.limit_in_flight, 0);
  retry_target_destroy(t);
}

/* }================================================================== */

/* The parts' own checks refuse a bad config at create, naming the part's field. */
static void test_client_limits_create_validates_each_part(void **state) {
  (void)state;
  retry_target_config tc;
  retry_error err;
  retry_target_config_init(&tc);
  tc.budget = RETRY_BUDGET_TOKEN_BUCKET;
  retry_token_bucket_config_init(&tc.token_bucket);
  tc.token_bucket.initial = 6;
  retry_error_clear(&err);
  assert_null(retry_target_create(&tc, 0, NULL, &err));
  assert_string_equal(err.path, "token_bucket.initial");
  retry_target_config_init(&tc);
  tc.has_aws_adaptive = true;
  retry_aws_adaptive_config_init(&tc.aws_adaptive);
  tc.aws_adaptive.beta = 1.0;
  retry_error_clear(&err);
  assert_null(retry_target_create(&tc, 0, NULL, &err));
  assert_string_equal(err.path, "aws_adaptive.beta");
  retry_target_config_init(&tc);
  tc.has_retry_breaker = true;
  retry_only_breaker_config_init(&tc.retry_breaker);
  tc.retry_breaker.window_ns = 5;
  retry_error_clear(&err);
  assert_null(retry_target_create(&tc, 0, NULL, &err));
  assert_string_equal(err.path, "retry_breaker.window_ns");
  retry_target_config_init(&tc);
  retry_target_config_set_limit(&tc, RETRY_LIMIT_GRADIENT2);
  tc.limit.rtt_tolerance = 0.5;
  retry_error_clear(&err);
  assert_null(retry_target_create(&tc, 0, NULL, &err));
  assert_string_equal(err.path, "limit.rtt_tolerance");
  retry_target_config_init(&tc);
  assert_false(retry_target_config_has_parts(&tc));
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aws_adaptive_mode_sends_freely_until_a_throttle),
      cmocka_unit_test(test_aws_adaptive_mode_delays_a_retry_until_a_token),
      cmocka_unit_test(test_aws_adaptive_mode_limits_first_attempts_too),
      cmocka_unit_test(test_aws_adaptive_mode_wait_ends_at_the_deadline),
      cmocka_unit_test(test_aws_adaptive_mode_fail_on_no_attempt_tokens_refuses),
      cmocka_unit_test(test_aws_adaptive_mode_throttle_statuses_are_configurable),
      cmocka_unit_test(test_aws_adaptive_mode_delays_a_hedge),
      cmocka_unit_test(test_retry_breaker_stops_retries_above_the_ratio_never_first_attempts),
      cmocka_unit_test(test_retry_token_bucket_starts_full_and_earns_per_call),
      cmocka_unit_test(test_concurrency_limit_refuses_calls_at_the_limit_and_samples_each_end),
      cmocka_unit_test(test_client_limits_create_validates_each_part),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
