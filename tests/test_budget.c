/*
 * test_budget.c: the three retry budgets: the AWS SDK quota (costs, refunds, caps), Finagle's
 * RetryBudget (fixed point, reserve, WindowedAdder expiry and drift) and Envoy's concurrent
 * retry budget (percent of active requests, truncation, floor, slots).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "retry/retry_int.h"

#define MS RETRY_NS_PER_MS
#define S RETRY_NS_PER_S

/* {==================================================================
 * AWS quota
 * =================================================================== */

static retry_aws_quota aws_default(void) {
  retry_aws_quota_config cfg;
  retry_aws_quota_config_init(&cfg);
  retry_aws_quota q;
  retry_aws_quota_init(&q, &cfg);
  return q;
}

static void test_aws_quota_defaults_are_sdk_standard_mode(void **state) {
  (void)state;
  retry_aws_quota q = aws_default();
  assert_int_equal(q.cfg.capacity, 500);
  assert_int_equal(q.cfg.retry_cost, 5);
  assert_int_equal(q.cfg.timeout_cost, 10);
  assert_int_equal(q.cfg.no_retry_increment, 1);
  assert_int_equal(q.available, 500);
  assert_true(retry_status_set_has(&q.cfg.timeout_statuses, RETRY_SPACE_GRPC,
                                   RETRY_GRPC_DEADLINE_EXCEEDED));
  assert_true(retry_status_set_has(&q.cfg.timeout_statuses, RETRY_SPACE_HTTP, 504));
  assert_false(
      retry_status_set_has(&q.cfg.timeout_statuses, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE));
  assert_false(retry_status_set_has(&q.cfg.timeout_statuses, RETRY_SPACE_HTTP, 503));
}

static void test_aws_quota_hundred_retries_drain_500_then_fail(void **state) {
  (void)state;
  retry_aws_quota q = aws_default();
  for (int i = 0; i < 100; i++)
    assert_int_equal(retry_aws_quota_acquire(&q, false), 5);
  assert_int_equal(q.available, 0);
  assert_int_equal(retry_aws_quota_acquire(&q, false), 0);
  assert_int_equal(q.available, 0);
}

static void test_aws_quota_refusal_takes_nothing(void **state) {
  (void)state;
  retry_aws_quota q = aws_default();
  for (int i = 0; i < 99; i++)
    retry_aws_quota_acquire(&q, false);
  assert_int_equal(q.available, 5);
  assert_int_equal(retry_aws_quota_acquire(&q, true), 0); /* a timeout needs 10 */
  assert_int_equal(q.available, 5);
  assert_int_equal(retry_aws_quota_acquire(&q, false), 5); /* a plain retry still fits */
  assert_int_equal(q.available, 0);
}

static void test_aws_quota_timeout_retry_costs_ten(void **state) {
  (void)state;
  retry_aws_quota q = aws_default();
  assert_int_equal(retry_aws_quota_acquire(&q, true), 10);
  assert_int_equal(q.available, 490);
}

static void test_aws_quota_successful_retry_refunds_its_cost(void **state) {
  (void)state;
  retry_aws_quota q = aws_default();
  retry_aws_quota_acquire(&q, false);
  int32_t cost = retry_aws_quota_acquire(&q, true);
  assert_int_equal(q.available, 485);
  retry_aws_quota_release(&q, cost); /* the timeout retry succeeded: 10 back, no +1 */
  assert_int_equal(q.available, 495);
}

static void test_aws_quota_first_attempt_success_adds_increment(void **state) {
  (void)state;
  retry_aws_quota q = aws_default();
  retry_aws_quota_acquire(&q, false);
  retry_aws_quota_release(&q, 0);
  assert_int_equal(q.available, 496);
}

static void test_aws_quota_refund_capped_at_capacity(void **state) {
  (void)state;
  retry_aws_quota q = aws_default();
  retry_aws_quota_release(&q, 0);
  assert_int_equal(q.available, 500);
  retry_aws_quota_acquire(&q, false);
  retry_aws_quota_release(&q, 0);
  retry_aws_quota_release(&q, 5); /* 496 + 5 = 501, capped */
  assert_int_equal(q.available, 500);
}

/* }================================================================== */

/* {==================================================================
 * Finagle RetryBudget
 * =================================================================== */

static retry_finagle_budget finagle_make(int64_t ttl_ns, int32_t min_per_s, double percent,
                                         int64_t now_ns) {
  retry_finagle_budget_config cfg = {ttl_ns, min_per_s, percent};
  retry_finagle_budget b;
  retry_finagle_budget_init(&b, &cfg, now_ns);
  return b;
}

static int withdraw_all(retry_finagle_budget *b, int64_t now_ns) {
  int n = 0;
  while (retry_finagle_budget_try_withdraw(b, now_ns))
    n++;
  return n;
}

/* The balance at now_ns: advance, then the const read. */
static int64_t balance_at(retry_finagle_budget *b, int64_t now_ns) {
  retry_finagle_budget_advance(b, now_ns);
  return retry_finagle_budget_balance(b);
}

static void test_finagle_defaults_10s_10_per_s_20_percent(void **state) {
  (void)state;
  retry_finagle_budget_config cfg;
  retry_finagle_budget_config_init(&cfg);
  assert_int_equal(cfg.ttl_ns, 10 * S);
  assert_int_equal(cfg.min_retries_per_sec, 10);
  assert_true(cfg.percent_can_retry == 0.2);
}

static void test_finagle_fixed_point_amounts(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.2, 0);
  assert_int_equal(b.deposit, 1000);
  assert_int_equal(b.withdrawal, 5000);
  assert_int_equal(b.reserve, 10 * 10 * 5000);
  b = finagle_make(10 * S, 10, 3.0, 0); /* (int)(1000 / 3) */
  assert_int_equal(b.withdrawal, 333);
  b = finagle_make(10 * S, 10, 0.0, 0); /* reserve only: costs 1, deposits nothing */
  assert_int_equal(b.deposit, 0);
  assert_int_equal(b.withdrawal, 1);
  assert_int_equal(b.reserve, 100);
}

static void test_finagle_default_reserve_allows_exactly_100_withdrawals(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.2, 0);
  assert_int_equal(balance_at(&b, 0), 100);
  assert_int_equal(withdraw_all(&b, 0), 100);
  assert_int_equal(balance_at(&b, 0), 0);
  assert_false(retry_finagle_budget_try_withdraw(&b, 0));
}

static void test_finagle_ten_deposits_add_two_withdrawals(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.2, 0);
  for (int i = 0; i < 10; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 0), 102);
  assert_int_equal(withdraw_all(&b, 0), 102);
}

static void test_finagle_partial_deposits_round_down(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 0, 0.2, 0);
  for (int i = 0; i < 9; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 0), 1); /* 9000 / 5000 */
  assert_int_equal(withdraw_all(&b, 0), 1);
}

static void test_finagle_deposits_expire_after_ttl(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.2, 0);
  for (int i = 0; i < 10; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 10 * S), 100);
  b = finagle_make(10 * S, 10, 0.2, 0);
  for (int i = 0; i < 10; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 10 * S - 1 * MS), 102);
}

static void test_finagle_reads_realign_slices_so_deposits_can_outlive_ttl(void **state) {
  (void)state;
  /* WindowedAdder restarts the slice at the time of the roll: a read at 9.999 s rolls 9 slices
   * and starts the next one at 9.999 s, so the deposit from t = 0 lasts until 10.999 s. */
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.2, 0);
  for (int i = 0; i < 10; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 9999 * MS), 102);
  assert_int_equal(balance_at(&b, 10998 * MS), 102);
  assert_int_equal(balance_at(&b, 10999 * MS), 100);
}

static void test_finagle_clock_truncated_to_milliseconds(void **state) {
  (void)state;
  /* 9.9999999 s is 9999 ms on Finagle's millisecond clock: the deposit is still there. */
  retry_finagle_budget b = finagle_make(10 * S, 0, 0.2, 0);
  for (int i = 0; i < 5; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 10 * S - 1), 1);
}

static void test_finagle_withdrawals_expire_so_reserve_renews_per_window(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.2, 0);
  assert_int_equal(withdraw_all(&b, 0), 100);
  assert_int_equal(withdraw_all(&b, 5 * S), 0);
  assert_int_equal(balance_at(&b, 10 * S), 100);
}

static void test_finagle_debits_outlive_the_deposits_that_paid_for_them(void **state) {
  (void)state;
  /* Deposits at t = 0 pay for withdrawals at t = 5 s. At 10 s the deposits expire while the
   * debits stay in the window: the sum is negative and outweighs the reserve, as Finagle allows
   * ("the debit will simply roll over"). At 15 s the debits expire too. */
  retry_finagle_budget b = finagle_make(10 * S, 1, 1.0, 0); /* reserve 10 retries, deposit 1 */
  for (int i = 0; i < 5; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 0), 15);
  assert_int_equal(withdraw_all(&b, 5 * S), 15);
  assert_int_equal(balance_at(&b, 10 * S), -5); /* (-15 + 10) retries */
  assert_false(retry_finagle_budget_try_withdraw(&b, 10 * S));
  assert_int_equal(balance_at(&b, 15 * S), 10);
}

static void test_finagle_balance_reads_the_window_as_last_advanced(void **state) {
  (void)state;
  /* The read is const: at 10 s the deposits from 0 are still in the window until an advance
   * (or a deposit or withdrawal) rolls it; advancing to an earlier time changes nothing. */
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.2, 0);
  for (int i = 0; i < 10; i++)
    retry_finagle_budget_deposit(&b, 0);
  const retry_finagle_budget *ro = &b;
  assert_int_equal(retry_finagle_budget_balance(ro), 102);
  retry_finagle_budget before = b; /* fields compared one by one: the struct has padding */
  retry_finagle_budget_advance(&b, 999 * MS); /* under one 1 s slice: nothing rolls */
  assert_int_equal(b.cur, before.cur);
  assert_int_equal(b.cur_slice_start_ns, before.cur_slice_start_ns);
  assert_memory_equal(b.slices, before.slices, sizeof b.slices);
  retry_finagle_budget_advance(&b, 10 * S);
  assert_int_equal(retry_finagle_budget_balance(ro), 100);
  retry_finagle_budget_advance(&b, 0); /* backwards: nothing changes */
  assert_int_equal(retry_finagle_budget_balance(ro), 100);
}

static void test_finagle_percent_zero_spends_reserve_only(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 10, 0.0, 0);
  for (int i = 0; i < 50; i++)
    retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(withdraw_all(&b, 0), 100);
}

static void test_finagle_both_zero_is_empty(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 0, 0.0, 0);
  retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(balance_at(&b, 0), 0);
  assert_false(retry_finagle_budget_try_withdraw(&b, 0));
}

static void test_finagle_ttl_truncated_to_whole_seconds_for_reserve(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(1900 * MS, 10, 0.2, 0);
  assert_int_equal(b.reserve, 10 * 1 * 5000);
  assert_int_equal(b.slice_ns, 190 * MS);
  assert_int_equal(withdraw_all(&b, 0), 10);
}

static void test_finagle_percent_above_one_gives_several_retries_per_deposit(void **state) {
  (void)state;
  retry_finagle_budget b = finagle_make(10 * S, 0, 2.0, 0); /* withdrawal 500 */
  retry_finagle_budget_deposit(&b, 0);
  assert_int_equal(withdraw_all(&b, 0), 2);
}

/* }================================================================== */

/* {==================================================================
 * Envoy retry budget
 * =================================================================== */

static retry_envoy_budget envoy_make(double percent, int32_t min) {
  retry_envoy_budget_config cfg = {percent, min};
  retry_envoy_budget b;
  retry_envoy_budget_init(&b, &cfg);
  return b;
}

static int acquire_all(retry_envoy_budget *b) {
  int n = 0;
  while (retry_envoy_budget_try_acquire(b))
    n++;
  return n;
}

static void test_envoy_defaults_20_percent_min_3(void **state) {
  (void)state;
  retry_envoy_budget_config cfg;
  retry_envoy_budget_config_init(&cfg);
  assert_true(cfg.budget_percent == 20.0);
  assert_int_equal(cfg.min_retry_concurrency, 3);
}

static void test_envoy_floor_is_min_retry_concurrency(void **state) {
  (void)state;
  retry_envoy_budget b = envoy_make(20.0, 3);
  assert_int_equal(retry__envoy_budget_max(&b), 3);
  assert_int_equal(acquire_all(&b), 3);
  assert_int_equal(b.active_retries, 3);
}

static void test_envoy_limit_is_percent_of_active_truncated(void **state) {
  (void)state;
  retry_envoy_budget b = envoy_make(20.0, 0);
  for (int i = 0; i < 19; i++)
    retry_envoy_budget_request_start(&b);
  assert_int_equal(retry__envoy_budget_max(&b), 3); /* 3.8 truncated */
  retry_envoy_budget_request_start(&b);
  assert_int_equal(retry__envoy_budget_max(&b), 4);
  assert_int_equal(acquire_all(&b), 4);
  for (int i = 0; i < 16; i++)
    retry_envoy_budget_request_end(&b);
  assert_int_equal(retry__envoy_budget_max(&b), 0); /* 0.8 truncated, floor 0 */
  assert_false(retry_envoy_budget_try_acquire(&b));
  /* Slots already held stay held when the limit falls below them. */
  assert_int_equal(b.active_retries, 4);
}

static void test_envoy_limit_is_max_of_percent_and_floor(void **state) {
  (void)state;
  retry_envoy_budget b = envoy_make(25.0, 3);
  for (int i = 0; i < 12; i++)
    retry_envoy_budget_request_start(&b);
  assert_int_equal(retry__envoy_budget_max(&b), 3); /* 3 vs 3 */
  for (int i = 0; i < 8; i++)
    retry_envoy_budget_request_start(&b);
  assert_int_equal(retry__envoy_budget_max(&b), 5); /* 25% of 20 */
}

static void test_envoy_release_frees_a_slot(void **state) {
  (void)state;
  retry_envoy_budget b = envoy_make(20.0, 1);
  assert_true(retry_envoy_budget_try_acquire(&b));
  assert_false(retry_envoy_budget_try_acquire(&b));
  retry_envoy_budget_release(&b);
  assert_int_equal(b.active_retries, 0);
  assert_true(retry_envoy_budget_try_acquire(&b));
}

static void test_envoy_counts_active_requests(void **state) {
  (void)state;
  retry_envoy_budget b = envoy_make(20.0, 3);
  retry_envoy_budget_request_start(&b);
  retry_envoy_budget_request_start(&b);
  retry_envoy_budget_request_end(&b);
  assert_int_equal(b.active_requests, 1);
}

/* }================================================================== */

/* retry__finagle_next_change and retry__adaptive_next_change (what the time series' gauges
 * re-read by): from a random history, a read at any time before the next change gives what a
 * read now gives, and with no change left a read far later does too; the change they name is
 * a real one for at least some histories. Reads are of copies (the _at functions). */
static uint64_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005u + 1442695040888963407u;
  return *x >> 33;
}

static void test_next_change_bounds_when_windows_move(void **state) {
  (void)state;
  uint64_t x = 7;
  int changed_f = 0, changed_a = 0;
  for (int round = 0; round < 200; round++) {
    retry_finagle_budget b = finagle_make(2 * S, 1, 0.5, 0);
    retry_adaptive_config acfg;
    retry_adaptive_config_init(&acfg);
    acfg.window_ns = 1 * S;
    retry_adaptive a;
    retry_adaptive_init(&a, &acfg, 0);
    int64_t now = 0;
    int steps = (int)(lcg(&x) % 30);
    for (int i = 0; i < steps; i++) {
      now += (int64_t)(lcg(&x) % 400) * 1000000; /* 0 to 399 ms */
      if (lcg(&x) % 3 == 0)
        (void)retry_finagle_budget_try_withdraw(&b, now);
      else
        retry_finagle_budget_deposit(&b, now);
      retry_adaptive_record_response(&a, now, lcg(&x) % 2 == 0);
    }
    int64_t t0 = now + (int64_t)(lcg(&x) % 3000) * 1000000;
    int64_t nf = retry__finagle_next_change(&b, t0), na = retry__adaptive_next_change(&a, t0);
    assert_true(nf > t0 && na > t0);
    int64_t vf = retry__finagle_balance_at(&b, t0);
    double va = retry__adaptive_probability_at(&a, t0);
    for (int k = 1; k <= 20; k++) {
      int64_t tf = nf == RETRY_NEVER ? t0 + k * S : t0 + (nf - t0) * k / 21;
      int64_t ta = na == RETRY_NEVER ? t0 + k * S : t0 + (na - t0) * k / 21;
      if (tf < nf) assert_int_equal(retry__finagle_balance_at(&b, tf), vf);
      if (ta < na) assert_true(retry__adaptive_probability_at(&a, ta) == va);
    }
    if (nf != RETRY_NEVER) {
      assert_int_equal(retry__finagle_balance_at(&b, nf - 1), vf);
      changed_f += retry__finagle_balance_at(&b, nf) != vf;
    }
    if (na != RETRY_NEVER) {
      assert_true(retry__adaptive_probability_at(&a, na - 1) == va);
      changed_a += retry__adaptive_probability_at(&a, na) != va;
    }
  }
  assert_true(changed_f > 10);
  assert_true(changed_a > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aws_quota_defaults_are_sdk_standard_mode),
      cmocka_unit_test(test_aws_quota_hundred_retries_drain_500_then_fail),
      cmocka_unit_test(test_aws_quota_refusal_takes_nothing),
      cmocka_unit_test(test_aws_quota_timeout_retry_costs_ten),
      cmocka_unit_test(test_aws_quota_successful_retry_refunds_its_cost),
      cmocka_unit_test(test_aws_quota_first_attempt_success_adds_increment),
      cmocka_unit_test(test_aws_quota_refund_capped_at_capacity),
      cmocka_unit_test(test_finagle_defaults_10s_10_per_s_20_percent),
      cmocka_unit_test(test_finagle_fixed_point_amounts),
      cmocka_unit_test(test_finagle_default_reserve_allows_exactly_100_withdrawals),
      cmocka_unit_test(test_finagle_ten_deposits_add_two_withdrawals),
      cmocka_unit_test(test_finagle_partial_deposits_round_down),
      cmocka_unit_test(test_finagle_deposits_expire_after_ttl),
      cmocka_unit_test(test_finagle_reads_realign_slices_so_deposits_can_outlive_ttl),
      cmocka_unit_test(test_finagle_clock_truncated_to_milliseconds),
      cmocka_unit_test(test_finagle_withdrawals_expire_so_reserve_renews_per_window),
      cmocka_unit_test(test_finagle_debits_outlive_the_deposits_that_paid_for_them),
      cmocka_unit_test(test_finagle_balance_reads_the_window_as_last_advanced),
      cmocka_unit_test(test_finagle_percent_zero_spends_reserve_only),
      cmocka_unit_test(test_finagle_both_zero_is_empty),
      cmocka_unit_test(test_finagle_ttl_truncated_to_whole_seconds_for_reserve),
      cmocka_unit_test(test_finagle_percent_above_one_gives_several_retries_per_deposit),
      cmocka_unit_test(test_envoy_defaults_20_percent_min_3),
      cmocka_unit_test(test_envoy_floor_is_min_retry_concurrency),
      cmocka_unit_test(test_envoy_limit_is_percent_of_active_truncated),
      cmocka_unit_test(test_envoy_limit_is_max_of_percent_and_floor),
      cmocka_unit_test(test_envoy_release_frees_a_slot),
      cmocka_unit_test(test_envoy_counts_active_requests),
      cmocka_unit_test(test_next_change_bounds_when_windows_move),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
