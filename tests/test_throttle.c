/*
 * test_throttle.c: the gRPC retry throttle in milli-tokens: order of decrement and check,
 * clamps, integer threshold, and the arithmetic of the seeds (maxTokens 4 over 20 failing calls,
 * seed 003's maxTokens 10 / tokenRatio 0.1 walk).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "retry/retry.h"
#include "retry/retry_parts.h"

static retry_throttle make(int64_t max_tokens, int64_t ratio_milli) {
  retry_throttle_config cfg = {max_tokens * 1000, ratio_milli};
  retry_throttle t;
  retry_throttle_init(&t, &cfg);
  return t;
}

/* Runs n_calls logical calls whose every attempt fails with a retryable status, the way the
 * engine consults the throttle: each failure is recorded first, then the call retries only if
 * the throttle allows it and attempts remain. t == NULL means no throttle. Returns the
 * requests sent; *retries receives how many of them were retries. */
static int run_failing_calls(retry_throttle *t, int n_calls, int max_attempts, int *retries) {
  int requests = 0;
  *retries = 0;
  for (int call = 0; call < n_calls; call++) {
    int attempts = 1;
    requests++;
    for (;;) {
      bool allowed = t != NULL ? retry_throttle_record_failure(t) : true; /* attempt failed */
      if (!allowed || attempts == max_attempts) break;
      attempts++;
      requests++;
      (*retries)++;
    }
  }
  return requests;
}

static void test_throttle_starts_full(void **state) {
  (void)state;
  retry_throttle t = make(4, 100);
  assert_int_equal(t.milli_tokens, 4000);
  assert_true(retry_throttle_is_allowed(&t));
}

static void test_throttle_failure_recorded_before_threshold_check(void **state) {
  (void)state;
  retry_throttle t = make(4, 100);
  /* 4 -> 3: the new value 3000 is compared with 2000, so the retry is allowed. */
  assert_true(retry_throttle_record_failure(&t));
  assert_int_equal(t.milli_tokens, 3000);
  /* 3 -> 2: 2000 is not above 2000; checking before decrementing would have said yes. */
  assert_false(retry_throttle_record_failure(&t));
  assert_int_equal(t.milli_tokens, 2000);
  assert_false(retry_throttle_is_allowed(&t));
}

static void test_throttle_failure_clamps_at_zero(void **state) {
  (void)state;
  retry_throttle t = make(4, 100);
  for (int i = 0; i < 4; i++)
    retry_throttle_record_failure(&t);
  assert_int_equal(t.milli_tokens, 0);
  assert_false(retry_throttle_record_failure(&t));
  assert_int_equal(t.milli_tokens, 0);
  /* Clamped, not negative: one success is credited in full. */
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 100);
}

static void test_throttle_success_adds_ratio_clamped_at_max(void **state) {
  (void)state;
  retry_throttle t = make(4, 600);
  retry_throttle_record_failure(&t); /* 3000 */
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 3600);
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 4000); /* 4200 clamped */
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 4000);
}

static void test_throttle_is_allowed_does_not_change_count(void **state) {
  (void)state;
  retry_throttle t = make(10, 100);
  for (int i = 0; i < 3; i++)
    assert_true(retry_throttle_is_allowed(&t));
  assert_int_equal(t.milli_tokens, 10000);
}

static void test_throttle_max4_lets_one_retry_through_twenty_failing_calls(void **state) {
  (void)state;
  retry_throttle t = make(4, 100);
  int retries = 0;
  assert_int_equal(run_failing_calls(&t, 20, 4, &retries), 21);
  assert_int_equal(retries, 1);
  assert_int_equal(t.milli_tokens, 0);
  /* Without a throttle every call uses its 4 attempts. */
  assert_int_equal(run_failing_calls(NULL, 20, 4, &retries), 80);
  assert_int_equal(retries, 60);
}

static void test_throttle_max4_allows_only_the_first_failure(void **state) {
  (void)state;
  retry_throttle t = make(4, 100);
  const bool expect[] = {true, false, false, false, false, false};
  const int64_t tokens[] = {3000, 2000, 1000, 0, 0, 0};
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    assert_int_equal(retry_throttle_record_failure(&t), expect[i]);
    assert_int_equal(t.milli_tokens, tokens[i]);
  }
}

/* seed 003: maxTokens 10, five failures */
static void test_throttle_blocks_when_the_count_reaches_half(void **state) {
  (void)state;
  retry_throttle t = make(10, 100);
  /* 9, 8, 7, 6 still allow; 5 is at half and blocks. */
  for (int i = 0; i < 4; i++)
    assert_true(retry_throttle_record_failure(&t));
  assert_false(retry_throttle_record_failure(&t));
  assert_int_equal(t.milli_tokens, 5000);
  assert_false(retry_throttle_is_allowed(&t));
}

/* seed 003: 5 -> 5.1 */
static void test_throttle_one_success_above_half_allows(void **state) {
  (void)state;
  retry_throttle t = make(10, 100);
  for (int i = 0; i < 5; i++)
    retry_throttle_record_failure(&t);
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 5100);
  assert_true(retry_throttle_is_allowed(&t));
}

/* seed 003: from 4, eleven successes of 0.1 */
static void test_throttle_successes_add_exact_thousandths(void **state) {
  (void)state;
  retry_throttle t = make(10, 100);
  for (int i = 0; i < 6; i++)
    retry_throttle_record_failure(&t);
  assert_int_equal(t.milli_tokens, 4000);
  for (int i = 0; i < 10; i++)
    retry_throttle_record_success(&t);
  /* Exactly 5.0 in milli-tokens (a float sum of ten 0.1 would be 4.999...); still blocked. */
  assert_int_equal(t.milli_tokens, 5000);
  assert_false(retry_throttle_is_allowed(&t));
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 5100);
  assert_true(retry_throttle_is_allowed(&t));
}

static void test_throttle_threshold_uses_integer_division(void **state) {
  (void)state;
  /* max 3.001 tokens = 3001 milli: threshold 3001/2 = 1500, not 1500.5. */
  retry_throttle_config cfg = {3001, 100};
  retry_throttle t;
  retry_throttle_init(&t, &cfg);
  assert_true(retry_throttle_record_failure(&t));  /* 2001 */
  assert_false(retry_throttle_record_failure(&t)); /* 1001 */
  for (int i = 0; i < 5; i++)
    retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 1501);
  assert_true(retry_throttle_is_allowed(&t)); /* 1501 > 1500 */
}

static void test_throttle_single_token_never_allows_after_failure(void **state) {
  (void)state;
  retry_throttle t = make(1, 100);
  assert_true(retry_throttle_is_allowed(&t)); /* 1000 > 500 */
  assert_false(retry_throttle_record_failure(&t));
}

static void test_throttle_ratio_kept_in_thousandths(void **state) {
  (void)state;
  /* tokenRatio 0.5466 is configured as 546 milli (A6: extra decimals ignored). */
  retry_throttle t = make(2, 546);
  retry_throttle_record_failure(&t);
  retry_throttle_record_failure(&t);
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 546);
  retry_throttle_record_success(&t);
  assert_int_equal(t.milli_tokens, 1092);
  assert_true(retry_throttle_is_allowed(&t));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_throttle_starts_full),
      cmocka_unit_test(test_throttle_failure_recorded_before_threshold_check),
      cmocka_unit_test(test_throttle_failure_clamps_at_zero),
      cmocka_unit_test(test_throttle_success_adds_ratio_clamped_at_max),
      cmocka_unit_test(test_throttle_is_allowed_does_not_change_count),
      cmocka_unit_test(test_throttle_max4_lets_one_retry_through_twenty_failing_calls),
      cmocka_unit_test(test_throttle_max4_allows_only_the_first_failure),
      cmocka_unit_test(test_throttle_blocks_when_the_count_reaches_half),
      cmocka_unit_test(test_throttle_one_success_above_half_allows),
      cmocka_unit_test(test_throttle_successes_add_exact_thousandths),
      cmocka_unit_test(test_throttle_threshold_uses_integer_division),
      cmocka_unit_test(test_throttle_single_token_never_allows_after_failure),
      cmocka_unit_test(test_throttle_ratio_kept_in_thousandths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
