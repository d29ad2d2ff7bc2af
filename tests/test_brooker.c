/*
 * test_brooker.c: Brooker's retry-only circuit breaker and retry token bucket
 * (brooker.co.za/blog/2022/02/28/retries.html; mbrooker/simulator_example
 * retry_sim/retry_strategy.py), rule by rule, and the article's two regimes on a Bernoulli
 * server: like N retries below the breaker's ratio, like no retries above it; the bucket
 * spending about earn_per_call retries a call under total failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "retry/retry.h"
#include "retry/retry_brooker.h"

#define S RETRY_NS_PER_S

/* {==================================================================
 * A fixed random stream for the regime tests (splitmix64)
 * =================================================================== */

static uint64_t mix_state;
static double uniform(void) {
  uint64_t z = (mix_state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

/* }================================================================== */

/* {==================================================================
 * Retry-only circuit breaker
 * =================================================================== */

static retry_only_breaker breaker(double max_ratio, int64_t window_ns) {
  retry_only_breaker_config cfg;
  retry_only_breaker_config_init(&cfg);
  cfg.max_ratio = max_ratio;
  cfg.window_ns = window_ns;
  retry_only_breaker b;
  retry_only_breaker_init(&b, &cfg, 0);
  return b;
}

static void test_retry_only_breaker_defaults_are_the_articles(void **state) {
  (void)state;
  retry_only_breaker_config cfg;
  retry_only_breaker_config_init(&cfg);
  assert_true(cfg.max_ratio == 0.1);
  assert_int_equal(cfg.window_ns, 0);
}

static void test_retry_only_breaker_ratio_counts_calls_not_attempts(void **state) {
  (void)state;
  /* 10 calls and one failure: 0.1 <= 0.1, retry. The retry fails too: 2 failures over the
   * same 10 calls (a retry is not a call), 0.2 > 0.1, no further retry. */
  retry_only_breaker b = breaker(0.1, 0);
  for (int i = 0; i < 10; i++)
    retry_only_breaker_record_call(&b, i);
  assert_true(retry_only_breaker_record_failure(&b, 10));
  assert_false(retry_only_breaker_record_failure(&b, 11));
  assert_int_equal(retry_only_breaker_calls(&b), 10);
  assert_int_equal(retry_only_breaker_failures(&b), 2);
}

static void test_retry_only_breaker_stops_only_strictly_above_ratio(void **state) {
  (void)state;
  retry_only_breaker b = breaker(0.5, 0);
  retry_only_breaker_record_call(&b, 0);
  retry_only_breaker_record_call(&b, 0);
  assert_true(retry_only_breaker_record_failure(&b, 0));  /* 1/2 = 0.5: at the ratio */
  assert_false(retry_only_breaker_record_failure(&b, 0)); /* 2/2 */
}

static void test_retry_only_breaker_counts_failure_even_when_refusing(void **state) {
  (void)state;
  /* The failure is counted before the decision, whatever it is: a breaker that refuses keeps
   * counting, and only new calls bring the ratio back down. */
  retry_only_breaker b = breaker(0.1, 0);
  retry_only_breaker_record_call(&b, 0);
  for (int i = 0; i < 5; i++)
    assert_false(retry_only_breaker_record_failure(&b, 0));
  assert_int_equal(retry_only_breaker_failures(&b), 5);
  for (int i = 0; i < 48; i++)
    retry_only_breaker_record_call(&b, 0);
  assert_false(retry_only_breaker_is_allowed(&b, 0)); /* 5 / 49 > 0.1 */
  retry_only_breaker_record_call(&b, 0);
  assert_true(retry_only_breaker_is_allowed(&b, 0));    /* 5 / 50 */
  assert_int_equal(retry_only_breaker_failures(&b), 5); /* is_allowed counts nothing */
}

static void test_retry_only_breaker_cumulative_never_forgets(void **state) {
  (void)state;
  retry_only_breaker b = breaker(0.1, 0);
  retry_only_breaker_record_call(&b, 0);
  assert_false(retry_only_breaker_record_failure(&b, 0));
  assert_false(retry_only_breaker_is_allowed(&b, 1000000 * S));
}

static void test_retry_only_breaker_window_forgets_old_bins(void **state) {
  (void)state;
  /* A 10 s window in 20 bins of 0.5 s: the failures at t = 0 leave it once 20 newer bins
   * have started, at 10 s. */
  retry_only_breaker b = breaker(0.1, 10 * S);
  retry_only_breaker_record_call(&b, 0);
  assert_false(retry_only_breaker_record_failure(&b, 0));
  retry_only_breaker_record_call(&b, 9 * S);
  assert_false(retry_only_breaker_is_allowed(&b, 9 * S + S / 2)); /* 1 / 2 */
  assert_true(retry_only_breaker_is_allowed(&b, 10 * S));         /* 0 / 1 */
  assert_int_equal(retry_only_breaker_calls(&b), 1);
  assert_int_equal(retry_only_breaker_failures(&b), 0);
  /* A long silence empties the window entirely. */
  assert_true(retry_only_breaker_is_allowed(&b, 1000 * S));
  assert_int_equal(retry_only_breaker_calls(&b), 0);
}

static void test_retry_only_breaker_failure_without_call_in_window_refuses(void **state) {
  (void)state;
  retry_only_breaker b = breaker(0.5, 10 * S);
  retry_only_breaker_record_call(&b, 0);
  /* The call's bin has expired when its attempt fails: no calls, one failure. */
  assert_false(retry_only_breaker_record_failure(&b, 20 * S));
}

static void test_retry_only_breaker_config_check(void **state) {
  (void)state;
  retry_only_breaker_config cfg;
  retry_only_breaker_config_init(&cfg);
  const char *field = "x";
  assert_int_equal(retry_only_breaker_config_check(&cfg, &field), RETRY_OK);
  assert_null(field);
  cfg.max_ratio = -0.1;
  assert_int_equal(retry_only_breaker_config_check(&cfg, &field), RETRY_ECONFIG);
  assert_string_equal(field, "max_ratio");
  cfg.max_ratio = NAN;
  assert_int_equal(retry_only_breaker_config_check(&cfg, &field), RETRY_ECONFIG);
  cfg.max_ratio = 0;
  cfg.window_ns = RETRY_ONLY_BREAKER_BINS - 1;
  assert_int_equal(retry_only_breaker_config_check(&cfg, &field), RETRY_ECONFIG);
  assert_string_equal(field, "window_ns");
  cfg.window_ns = -S;
  assert_int_equal(retry_only_breaker_config_check(&cfg, NULL), RETRY_ECONFIG);
}

/* One client of the article's model: n_calls calls to a server that fails each attempt with
 * probability p, up to 3 retries each, the breaker deciding every retry. Returns attempts per
 * call. */
static double breaker_load(double p, int n_calls) {
  retry_only_breaker b = breaker(0.1, 0);
  mix_state = 42;
  int64_t attempts = 0;
  for (int c = 0; c < n_calls; c++) {
    retry_only_breaker_record_call(&b, c);
    for (int tries = 0;; tries++) {
      attempts++;
      if (uniform() >= p) break;                            /* success */
      if (!retry_only_breaker_record_failure(&b, c)) break; /* breaker says no */
      if (tries == 3) break;                                /* N = 3 retries used */
    }
  }
  return (double)attempts / n_calls;
}

static void test_retry_only_breaker_regimes_of_the_article(void **state) {
  (void)state;
  /* Well below the ratio the breaker is N retries: attempts per call 1 + p + p^2 + p^3. */
  double p = 0.02;
  assert_true(fabs(breaker_load(p, 100000) - (1 + p + p * p + p * p * p)) < 0.005);
  /* Well above it the breaker is no retries: first attempts alone exceed the ratio. */
  assert_true(breaker_load(0.5, 100000) < 1.01);
}

/* }================================================================== */

/* {==================================================================
 * Retry token bucket
 * =================================================================== */

static retry_token_bucket bucket(double capacity, double initial, double per_call,
                                 double per_success, bool at_cost) {
  retry_token_bucket_config cfg;
  retry_token_bucket_config_init(&cfg);
  cfg.capacity = capacity;
  cfg.initial = initial;
  cfg.earn_per_call = per_call;
  cfg.earn_per_success = per_success;
  cfg.allow_at_cost = at_cost;
  retry_token_bucket b;
  retry_token_bucket_init(&b, &cfg);
  return b;
}

static void test_retry_token_bucket_defaults_are_the_articles(void **state) {
  (void)state;
  retry_token_bucket_config cfg;
  retry_token_bucket_config_init(&cfg);
  assert_true(cfg.capacity == 5 && cfg.initial == 5 && cfg.earn_per_call == 0.1);
  assert_true(cfg.earn_per_success == 0 && cfg.retry_cost == 1 && !cfg.allow_at_cost);
  retry_token_bucket b;
  retry_token_bucket_init(&b, &cfg);
  assert_true(b.balance == 5); /* starts full */
}

static void test_retry_token_bucket_starts_at_chosen_balance(void **state) {
  (void)state;
  retry_token_bucket b = bucket(5, 0, 0.1, 0, false);
  assert_false(retry_token_bucket_try_retry(&b));
  b = bucket(5, 3, 0.1, 0, false);
  assert_true(retry_token_bucket_try_retry(&b));
  assert_true(retry_token_bucket_try_retry(&b));
  assert_false(retry_token_bucket_try_retry(&b)); /* 1 left: not above the cost */
  assert_true(b.balance == 1);
}

static void test_retry_token_bucket_needs_more_than_cost(void **state) {
  (void)state;
  /* The simulator's `bucket > 1.0`: exactly one token is not enough ... */
  retry_token_bucket b = bucket(5, 1, 0, 0, false);
  assert_false(retry_token_bucket_try_retry(&b));
  assert_true(b.balance == 1);
  /* ... the article's "(whole) tokens" reading lets it through. */
  b = bucket(5, 1, 0, 0, true);
  assert_true(retry_token_bucket_try_retry(&b));
  assert_true(b.balance == 0);
  assert_false(retry_token_bucket_try_retry(&b));
}

static void test_retry_token_bucket_earns_per_call_capped(void **state) {
  (void)state;
  retry_token_bucket b = bucket(5, 0, 0.25, 0, false);
  for (int i = 0; i < 8; i++)
    retry_token_bucket_record_call(&b);
  assert_true(b.balance == 2.0);
  retry_token_bucket_record_success(&b); /* earns nothing per success here */
  assert_true(b.balance == 2.0);
  for (int i = 0; i < 100; i++)
    retry_token_bucket_record_call(&b);
  assert_true(b.balance == 5.0);
}

static void test_retry_token_bucket_earns_per_success_when_asked(void **state) {
  (void)state;
  retry_token_bucket b = bucket(5, 0, 0, 0.5, false);
  retry_token_bucket_record_call(&b);
  assert_true(b.balance == 0);
  for (int i = 0; i < 3; i++)
    retry_token_bucket_record_success(&b);
  assert_true(b.balance == 1.5);
  for (int i = 0; i < 30; i++)
    retry_token_bucket_record_success(&b);
  assert_true(b.balance == 5.0);
}

static void test_retry_token_bucket_total_failure_costs_earn_per_call(void **state) {
  (void)state;
  /* Every attempt fails: once the first 5 tokens are spent, each call earns 0.1 and retries
   * spend them, so retries per call tend to 0.1 ("like 0.1 retries" in the article). */
  retry_token_bucket b = bucket(5, 5, 0.1, 0, false);
  int64_t retries = 0;
  const int n = 100000;
  for (int c = 0; c < n; c++) {
    retry_token_bucket_record_call(&b);
    for (int r = 0; r < 3 && retry_token_bucket_try_retry(&b); r++)
      retries++;
  }
  assert_true(fabs((double)retries / n - 0.1) < 0.001);
}

static void test_retry_token_bucket_config_check(void **state) {
  (void)state;
  retry_token_bucket_config cfg;
  retry_token_bucket_config_init(&cfg);
  const char *field = "x";
  assert_int_equal(retry_token_bucket_config_check(&cfg, &field), RETRY_OK);
  assert_null(field);
  struct {
    double capacity, initial, per_call, per_success, cost;
    const char *field;
  } bad[] = {{0, 0, 0, 0, 1, "capacity"},         {INFINITY, 0, 0, 0, 1, "capacity"},
             {5, 6, 0, 0, 1, "initial"},          {5, -1, 0, 0, 1, "initial"},
             {5, 1, -0.1, 0, 1, "earn_per_call"}, {5, 1, 0, NAN, 1, "earn_per_success"},
             {5, 1, 0, 0, 0, "retry_cost"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    retry_token_bucket_config c = cfg;
    c.capacity = bad[i].capacity;
    c.initial = bad[i].initial;
    c.earn_per_call = bad[i].per_call;
    c.earn_per_success = bad[i].per_success;
    c.retry_cost = bad[i].cost;
    assert_int_equal(retry_token_bucket_config_check(&c, &field), RETRY_ECONFIG);
    assert_string_equal(field, bad[i].field);
  }
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_retry_only_breaker_defaults_are_the_articles),
      cmocka_unit_test(test_retry_only_breaker_ratio_counts_calls_not_attempts),
      cmocka_unit_test(test_retry_only_breaker_stops_only_strictly_above_ratio),
      cmocka_unit_test(test_retry_only_breaker_counts_failure_even_when_refusing),
      cmocka_unit_test(test_retry_only_breaker_cumulative_never_forgets),
      cmocka_unit_test(test_retry_only_breaker_window_forgets_old_bins),
      cmocka_unit_test(test_retry_only_breaker_failure_without_call_in_window_refuses),
      cmocka_unit_test(test_retry_only_breaker_config_check),
      cmocka_unit_test(test_retry_only_breaker_regimes_of_the_article),
      cmocka_unit_test(test_retry_token_bucket_defaults_are_the_articles),
      cmocka_unit_test(test_retry_token_bucket_starts_at_chosen_balance),
      cmocka_unit_test(test_retry_token_bucket_needs_more_than_cost),
      cmocka_unit_test(test_retry_token_bucket_earns_per_call_capped),
      cmocka_unit_test(test_retry_token_bucket_earns_per_success_when_asked),
      cmocka_unit_test(test_retry_token_bucket_total_failure_costs_earn_per_call),
      cmocka_unit_test(test_retry_token_bucket_config_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
