/*
 * test_aws_2026.c: the AWS SDKs' 2026 retry behaviour (docs/policy-formats.md, "AWS"), as rows
 * from botocore's own tests (tests/unit/retries/test_standard_retry_v2_1.py, as
 * /work/research/policy-formats.md section 5.7 lists them): a throttling failure's base delay
 * of 1 s against 50 ms for the others (throttleInitialBackoff), and the quota's costs 14 for a
 * transient failure or a timeout and 5 for a throttle (throttleCost), through the loader and a
 * call; and that without those keys the quota and the backoff are what they were.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "retry/retry_int.h"
#include "tests/support/script.h"

#define MS 1000000LL

/* test_range_of_exponential_backoff (v2_1), random = 1: the nominal delays 0.05, 0.1, ...,
 * 12.8, then the 20 s cap; after a throttle the same from 1 s. A throttle in between leaves
 * the transient sequence where the count puts it. */
static void test_aws_2026_backoff_nominal_per_kind(void **state) {
  (void)state;
  retry_backoff b = {.initial_ns = 50 * MS, .max_ns = 20000 * MS, .multiplier = 2,
                     .jitter = RETRY_JITTER_FULL, .throttle_initial_ns = 1000 * MS};
  static const int64_t transient_ms[] = {50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000, 20000};
  test_rng g;
  retry_rng rng = test_rng_make(&g, 7);
  uint16_t n = 0;
  double carried = 0;
  for (size_t i = 0; i < sizeof transient_ms / sizeof transient_ms[0]; i++) {
    int64_t nominal = -1;
    int64_t d = retry__backoff_next_packed(&b, &n, &carried, &rng, &nominal);
    assert_int_equal(nominal, transient_ms[i] * MS);
    assert_true(d >= 0 && d < nominal);
  }
  static const int64_t throttle_ms[] = {1000, 2000, 4000, 8000, 16000, 20000};
  n = 0, carried = 0;
  for (size_t i = 0; i < sizeof throttle_ms / sizeof throttle_ms[0]; i++) {
    int64_t nominal = -1;
    int64_t d = retry__backoff_next_throttled(&b, &n, &carried, &rng, &nominal);
    assert_int_equal(nominal, throttle_ms[i] * MS);
    assert_true(d >= 0 && d < nominal);
  }
  /* transient, throttle, transient: 50 ms, 2 s, 200 ms. */
  n = 0, carried = 0;
  int64_t nom[3];
  retry__backoff_next_packed(&b, &n, &carried, &rng, &nom[0]);
  retry__backoff_next_throttled(&b, &n, &carried, &rng, &nom[1]);
  retry__backoff_next_packed(&b, &n, &carried, &rng, &nom[2]);
  assert_int_equal(nom[0], 50 * MS);
  assert_int_equal(nom[1], 2000 * MS);
  assert_int_equal(nom[2], 200 * MS);
}

/* The quota rows: a transient failure costs 14, a throttle 5; a success refunds what its retry
 * took (486 -> 500, 495 -> 500), a first-try success adds 1 (486 -> 487); and without a
 * throttle cost a throttle costs the retry cost, as before 2026. */
static void test_aws_2026_quota_costs(void **state) {
  (void)state;
  retry_aws_quota_config cfg;
  retry_aws_quota_config_init(&cfg);
  assert_int_equal(cfg.throttle_cost, 0);
  retry_aws_quota q;
  retry_aws_quota_init(&q, &cfg);
  assert_int_equal(retry_aws_quota_acquire_throttled(&q), 5);
  assert_int_equal(q.available, 495);
  cfg.retry_cost = 14, cfg.timeout_cost = 14, cfg.throttle_cost = 5;
  retry_aws_quota_init(&q, &cfg);
  int32_t cost = retry_aws_quota_acquire(&q, false);
  assert_int_equal(cost, 14);
  assert_int_equal(q.available, 486);
  retry_aws_quota_release(&q, cost);
  assert_int_equal(q.available, 500);
  assert_int_equal(retry_aws_quota_acquire(&q, true), 14); /* timeouts are not special */
  retry_aws_quota_release(&q, 0);
  assert_int_equal(q.available, 487);
  retry_aws_quota_init(&q, &cfg);
  cost = retry_aws_quota_acquire_throttled(&q);
  assert_int_equal(cost, 5);
  assert_int_equal(q.available, 495);
  retry_aws_quota_release(&q, cost);
  assert_int_equal(q.available, 500);
}

static const char *const cfg_2026 =
    "{\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 4,"
    " \"initialBackoff\": \"0.05s\", \"maxBackoff\": \"20s\", \"backoffMultiplier\": 2,"
    " \"retryableStatusCodes\": [500, 503, 429]},"
    " \"retrysim\": {\"statusSpace\": \"http\", \"jitter\": \"full\","
    " \"throttleInitialBackoff\": \"1s\"}}],"
    " \"retrysim\": {\"maxAttemptsLimit\": 4, \"budget\": {\"type\": \"aws\", \"retryCost\": 14,"
    " \"timeoutCost\": 14, \"throttleCost\": 5}}}";

/* Through the loader and a call: test_dynamodb_base_backoff... without DynamoDB's base, quota
 * 486, 472, 458 after three 500s; a 429 costs 5 and waits up to 1 s. */
static void test_aws_2026_through_a_call(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_string(cfg_2026, "2026", NULL, &err);
  if (cfg == NULL) fail_msg("%s: %s", err.path, err.message);
  const retry_policy *p = &retry_config_lookup(cfg, "/s.S/M")->policy;
  assert_int_equal(p->backoff.throttle_initial_ns, 1000 * MS);
  retry_target *t = retry_target_create(retry_config_target(cfg), 0, NULL, NULL);
  assert_non_null(t);
  test_rng g;
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.call_id = 1;
  o.method = "/s.S/M";
  o.stream = RETRY_STREAM_UNARY;
  o.deadline_ns = RETRY_NEVER;
  o.rng = test_rng_make(&g, 3);
  retry_call_ext ext;
  o.ext = &ext;
  retry_call c;
  retry_decision d;
  retry_call_start(&c, p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  retry_outcome out = {.status = 500, .retry_after_at_ns = RETRY_NEVER};
  retry_target_stats st;
  static const int64_t left[] = {486, 472, 458};
  int64_t now = 0;
  for (int k = 1; k <= 3; k++) {
    retry_call_on_outcome(&c, k, &out, now, &d);
    assert_int_equal(d.action, RETRY_ACTION_WAIT);
    assert_true(d.wake_ns - now < 50 * MS << (k - 1));
    retry_target_stats_get(t, now, &st);
    assert_int_equal(st.budget_available, left[k - 1]);
    now = d.wake_ns;
    retry_call_wake(&c, now, &d);
    assert_int_equal(d.action, RETRY_ACTION_SEND);
  }
  retry_call_on_outcome(&c, 4, &out, now, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_MAX_ATTEMPTS);
  /* A throttle: cost 5, a delay drawn below 1 s (and above 50 ms for this seed's draws). */
  o.call_id = 2;
  retry_call_start(&c, p, t, &o, now, &d);
  out.status = 429;
  retry_call_on_outcome(&c, 1, &out, now, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_true(d.wake_ns - now < 1000 * MS);
  retry_target_stats_get(t, now, &st);
  assert_int_equal(st.budget_available, 453);
  retry_target_destroy(t);
  retry_config_destroy(cfg);
}

/* Without the keys nothing changes: a 429 costs the retry cost and waits from initialBackoff. */
static void test_aws_2026_keys_absent_mean_before(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_string(
      "{\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 3,"
      " \"initialBackoff\": \"1s\", \"maxBackoff\": \"20s\", \"backoffMultiplier\": 2,"
      " \"retryableStatusCodes\": [429]}, \"retrysim\": {\"statusSpace\": \"http\"}}],"
      " \"retrysim\": {\"budget\": {\"type\": \"aws\"}}}",
      "before", NULL, &err);
  assert_non_null(cfg);
  assert_int_equal(retry_config_lookup(cfg, "/s.S/M")->policy.backoff.throttle_initial_ns, 0);
  assert_int_equal(retry_config_target(cfg)->aws.throttle_cost, 0);
  retry_config_destroy(cfg);
  /* A second base with a jitter that carries its last delay is refused. */
  retry_error_clear(&err);
  cfg = retry_config_load_string(
      "{\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 3,"
      " \"initialBackoff\": \"1s\", \"maxBackoff\": \"20s\", \"backoffMultiplier\": 2,"
      " \"retryableStatusCodes\": [429]}, \"retrysim\": {\"statusSpace\": \"http\","
      " \"jitter\": \"decorrelated\", \"throttleInitialBackoff\": \"1s\"}}]}",
      "bad", NULL, &err);
  assert_null(cfg);
  if (strstr(err.message, "throttleInitialBackoff") == NULL) fail_msg("%s: %s", err.path, err.message);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aws_2026_backoff_nominal_per_kind),
      cmocka_unit_test(test_aws_2026_quota_costs),
      cmocka_unit_test(test_aws_2026_through_a_call),
      cmocka_unit_test(test_aws_2026_keys_absent_mean_before),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
