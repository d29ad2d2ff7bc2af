/*
 * test_profile.c: implementation profiles (retry_profile.c) and the loader's "profile" key:
 * the table, what a profile changes on a policy, that explicit keys still win, that C-core
 * 1.51's first delay (and the first after a pushback) is exactly initialBackoff, that it ends
 * a call at its deadline with DEADLINE_EXCEEDED, that it ignores a hedgingPolicy, and that a
 * jitter named over it (full) jitters the first delay too, as the docs say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "retry/retry.h"

static uint64_t counter_next(void *ctx) {
  uint64_t *s = ctx;
  *s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return *s;
}

static retry_config *load_ok(const char *json) {
  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_string(json, "<test>", NULL, &err);
  if (cfg == NULL) {
    char buf[600];
    retry_error_format(&err, buf, sizeof buf);
    fail_msg("load failed: %s", buf);
  }
  return cfg;
}

#define RETRY_POLICY_JSON(ext)                                                       \
  "{" ext                                                                            \
  "\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 4, "       \
  "\"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, " \
  "\"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}"

static void test_profile_table_has_the_default_first_and_finds_by_name(void **state) {
  (void)state;
  const retry_profile *d = retry_profile_default();
  assert_ptr_equal(d, retry_profile_at(0));
  assert_string_equal(d->name, "grpc");
  assert_true(d->first_delay_jittered);
  assert_true(d->wait_for_deadline);
  assert_true(d->hedging_supported);
  assert_false(d->throttle_per_process);
  const retry_profile *go = retry_profile_find("grpc-go-1.85");
  assert_non_null(go);
  assert_true(go->first_delay_jittered && go->wait_for_deadline && !go->hedging_supported);
  const retry_profile *java = retry_profile_find("grpc-java-1.85");
  assert_non_null(java);
  assert_true(java->first_delay_jittered && java->wait_for_deadline && java->hedging_supported);
  const retry_profile *c = retry_profile_find("grpc-core-1.51");
  assert_non_null(c);
  assert_false(c->first_delay_jittered);
  assert_true(c->wait_for_deadline);
  assert_false(c->hedging_supported);
  assert_true(c->throttle_per_process);
  assert_null(retry_profile_find("grpc-core"));
  assert_null(retry_profile_find(NULL));
  size_t n = 0;
  while (retry_profile_at(n) != NULL)
    n++;
  assert_int_equal(n, 4);
}

static void test_profile_grpc_core_first_delay_is_exact_later_ones_jittered(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_init(&p, RETRY_SPACE_GRPC);
  retry_profile_apply(retry_profile_find("grpc-core-1.51"), &p);
  uint64_t seed = 42;
  retry_rng rng = {counter_next, &seed};
  int64_t lo2 = INT64_MAX, hi2 = 0;
  for (int i = 0; i < 2000; i++) {
    retry_backoff_state st;
    retry_backoff_state_reset(&st);
    assert_int_equal(retry_backoff_next(&p.backoff, &st, &rng, NULL), 100 * RETRY_NS_PER_MS);
    int64_t d2 = retry_backoff_next(&p.backoff, &st, &rng, NULL);
    lo2 = d2 < lo2 ? d2 : lo2;
    hi2 = d2 > hi2 ? d2 : hi2;
    /* a pushback resets the state: the next delay is exact again */
    retry_backoff_state_reset(&st);
    assert_int_equal(retry_backoff_next(&p.backoff, &st, &rng, NULL), 100 * RETRY_NS_PER_MS);
  }
  assert_true(lo2 >= 160 * RETRY_NS_PER_MS && lo2 < 165 * RETRY_NS_PER_MS);
  assert_true(hi2 < 240 * RETRY_NS_PER_MS && hi2 > 235 * RETRY_NS_PER_MS);
}

static void test_profile_default_jitters_the_first_delay(void **state) {
  (void)state;
  retry_config *cfg = load_ok(RETRY_POLICY_JSON(""));
  const retry_policy *p = &retry_config_lookup(cfg, "/a.B/C")->policy;
  assert_false(p->backoff.first_delay_exact);
  assert_true(p->wait_for_deadline); /* the default: end at the deadline, as gRPC does */
  uint64_t seed = 7;
  retry_rng rng = {counter_next, &seed};
  int exact = 0;
  for (int i = 0; i < 100; i++) {
    retry_backoff_state st;
    retry_backoff_state_reset(&st);
    exact += retry_backoff_next(&p->backoff, &st, &rng, NULL) == 100 * RETRY_NS_PER_MS;
  }
  assert_true(exact < 5);
  retry_config_destroy(cfg);
}

/* C-core's deadline: the call ends at the deadline with DEADLINE_EXCEEDED instead of stopping
 * when the next attempt cannot fit (the sim-to-real deadline case: 500 ms, attempts failing
 * after 30 ms, backoff 80 ms doubling). */
static void test_profile_grpc_core_ends_at_the_deadline(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"retrysim\": {\"profile\": \"grpc-core-1.51\"}, \"methodConfig\": [{\"name\": [{}], "
      "\"retryPolicy\": {\"maxAttempts\": 5, \"initialBackoff\": \"0.08s\", \"maxBackoff\": "
      "\"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}");
  const retry_policy *p = &retry_config_lookup(cfg, "/a.B/C")->policy;
  assert_true(p->wait_for_deadline);
  uint64_t seed = 3;
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.rng = (retry_rng){counter_next, &seed};
  o.deadline_ns = 500 * RETRY_NS_PER_MS;
  retry_call c;
  retry_decision d;
  retry_call_start(&c, p, NULL, &o, 0, &d);
  int64_t now = 0;
  for (int i = 0; i < 20 && d.action != RETRY_ACTION_DONE; i++) {
    if (d.action == RETRY_ACTION_SEND) {
      now += 30 * RETRY_NS_PER_MS;
      retry_outcome out;
      retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
      retry_call_on_outcome(&c, d.attempt, &out, now, &d);
    } else {
      assert_true(d.wake_ns != RETRY_NEVER);
      now = d.wake_ns;
      retry_call_wake(&c, now, &d);
    }
  }
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(c.n_attempts, 3);
  assert_int_equal(d.status, RETRY_GRPC_DEADLINE_EXCEEDED);
  assert_int_equal(d.done_ns, 500 * RETRY_NS_PER_MS);
  assert_int_equal(d.reason, RETRY_STOP_DEADLINE);
  retry_config_destroy(cfg);
}

static void test_profile_grpc_core_ignores_hedging(void **state) {
  (void)state;
  const char *json =
      "{%s\"methodConfig\": [{\"name\": [{}], \"hedgingPolicy\": {\"maxAttempts\": 3, "
      "\"hedgingDelay\": \"0.05s\", \"nonFatalStatusCodes\": [\"UNAVAILABLE\"]}}]}";
  char buf[400];
  snprintf(buf, sizeof buf, json, "");
  retry_config *cfg = load_ok(buf);
  const retry_policy *p = &retry_config_lookup(cfg, "/a.B/C")->policy;
  assert_int_equal(p->kind, RETRY_POLICY_HEDGE);
  assert_int_equal(p->max_attempts, 3);
  assert_false(p->hedging_ignored);
  retry_config_destroy(cfg);
  snprintf(buf, sizeof buf, json, "\"retrysim\": {\"profile\": \"grpc-core-1.51\"}, ");
  cfg = load_ok(buf);
  p = &retry_config_lookup(cfg, "/a.B/C")->policy;
  assert_int_equal(p->kind, RETRY_POLICY_NONE);
  assert_int_equal(p->max_attempts, 1);
  assert_true(p->hedging_ignored);
  retry_config_destroy(cfg);
}

static void test_profile_explicit_keys_win_over_the_profile(void **state) {
  (void)state;
  retry_config *cfg = load_ok(RETRY_POLICY_JSON(
      "\"retrysim\": {\"profile\": \"grpc-core-1.51\", \"waitForDeadline\": false, "
      "\"jitter\": \"full\"}, "));
  const retry_policy *p = &retry_config_lookup(cfg, "/a.B/C")->policy;
  assert_false(p->wait_for_deadline);
  assert_int_equal(p->backoff.jitter, RETRY_JITTER_FULL);
  assert_false(p->backoff.first_delay_exact);
  retry_config_destroy(cfg);
}

/* docs/service-config.md ("profile"): "profile": "grpc-core-1.51" with "jitter": "full" keeps
 * full jitter. The first delay (and the first after a pushback, which resets the state) is
 * drawn from U[0, initialBackoff) like every later one, not left at exactly initialBackoff as
 * the profile's own jitter leaves it; the same holds for a jitter named in a methodConfig
 * entry's block under a top-level profile. */
static void test_profile_grpc_core_with_full_jitter_jitters_the_first_delay(void **state) {
  (void)state;
  static const char *const configs[] = {
      RETRY_POLICY_JSON("\"retrysim\": {\"profile\": \"grpc-core-1.51\", \"jitter\": \"full\"}, "),
      "{\"retrysim\": {\"profile\": \"grpc-core-1.51\"}, \"methodConfig\": [{\"name\": [{}], "
      "\"retrysim\": {\"jitter\": \"full\"}, \"retryPolicy\": {\"maxAttempts\": 4, "
      "\"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, "
      "\"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}",
  };
  for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
    retry_config *cfg = load_ok(configs[k]);
    const retry_policy *p = &retry_config_lookup(cfg, "/a.B/C")->policy;
    assert_int_equal(p->backoff.jitter, RETRY_JITTER_FULL);
    assert_true(p->wait_for_deadline); /* the profile's other rules stay */
    uint64_t seed = 11;
    retry_rng rng = {counter_next, &seed};
    int64_t lo = INT64_MAX, hi = 0;
    double sum = 0;
    const int n = 4000;
    for (int i = 0; i < n; i++) {
      retry_backoff_state st;
      retry_backoff_state_reset(&st);
      int64_t d1 = retry_backoff_next(&p->backoff, &st, &rng, NULL);
      assert_true(d1 >= 0 && d1 < 100 * RETRY_NS_PER_MS);
      lo = d1 < lo ? d1 : lo;
      hi = d1 > hi ? d1 : hi;
      sum += (double)d1;
    }
    /* U[0, 100 ms): both ends reached, the mean 50 ms within 5 standard errors (0.46 ms). */
    assert_true(lo < 1 * RETRY_NS_PER_MS && hi > 99 * RETRY_NS_PER_MS);
    double mean_ms = sum / n / 1e6;
    assert_true(mean_ms > 47.7 && mean_ms < 52.3);
    retry_config_destroy(cfg);
  }
}

/* The throttle's scope reaches the target config, which the simulator reads: per process under
 * grpc-core-1.51, per channel without a profile and under grpc-go. */
static void test_profile_throttle_scope_reaches_the_target_config(void **state) {
  (void)state;
  static const struct {
    const char *ext;
    bool per_process;
  } cases[] = {
      {"", false},
      {"\"retrysim\": {\"profile\": \"grpc-core-1.51\"}, ", true},
      {"\"retrysim\": {\"profile\": \"grpc-go-1.85\"}, ", false},
      {"\"retrysim\": {}, ", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[600];
    snprintf(buf, sizeof buf,
             "{%s\"retryThrottling\": {\"maxTokens\": 10, \"tokenRatio\": 0.1}, "
             "\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 2, "
             "\"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", "
             "\"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}",
             cases[i].ext);
    retry_config *cfg = load_ok(buf);
    const retry_target_config *tc = retry_config_target(cfg);
    assert_true(tc->has_throttle);
    assert_int_equal(tc->throttle_per_process, cases[i].per_process);
    retry_config_destroy(cfg);
  }
}

static void test_profile_unknown_name_and_entry_level_profile_are_errors(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_config_load_string(
      RETRY_POLICY_JSON("\"retrysim\": {\"profile\": \"grpc-core\"}, "), "<t>", NULL, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, "$.retrysim.profile");
  assert_non_null(strstr(err.message, "\"grpc-core-1.51\""));
  retry_error_clear(&err);
  assert_null(retry_config_load_string(
      "{\"methodConfig\": [{\"name\": [{}], \"retrysim\": {\"profile\": \"grpc-core-1.51\"}}]}",
      "<t>", NULL, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_non_null(strstr(err.message, "channel-wide"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_profile_table_has_the_default_first_and_finds_by_name),
      cmocka_unit_test(test_profile_grpc_core_first_delay_is_exact_later_ones_jittered),
      cmocka_unit_test(test_profile_default_jitters_the_first_delay),
      cmocka_unit_test(test_profile_grpc_core_ends_at_the_deadline),
      cmocka_unit_test(test_profile_grpc_core_ignores_hedging),
      cmocka_unit_test(test_profile_explicit_keys_win_over_the_profile),
      cmocka_unit_test(test_profile_grpc_core_with_full_jitter_jitters_the_first_delay),
      cmocka_unit_test(test_profile_unknown_name_and_entry_level_profile_are_errors),
      cmocka_unit_test(test_profile_throttle_scope_reaches_the_target_config),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
