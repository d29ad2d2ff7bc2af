/*
 * test_adaptive.c: SRE client-side adaptive throttling: the probability formula, counting of
 * rejected requests, the u < P rule, and expiry of the bins of the sliding window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "retry/retry.h"
#include "retry/retry_parts.h"

#define MS RETRY_NS_PER_MS
#define S RETRY_NS_PER_S
#define EPS 1e-12

/* cmocka 1.1.5's assert_float_equal works in float; probabilities are doubles. */
#define assert_near(a, b)                      \
  do {                                         \
    double a_ = (a), b_ = (b);                 \
    if (!(fabs(a_ - b_) <= EPS)) {             \
      print_error("%.17g != %.17g\n", a_, b_); \
      fail();                                  \
    }                                          \
  } while (0)

static retry_adaptive make(double k, int64_t window_ns, double padding, int64_t now_ns) {
  retry_adaptive_config cfg;
  retry_adaptive_config_init(&cfg);
  cfg.k = k;
  cfg.window_ns = window_ns;
  cfg.padding = padding;
  retry_adaptive a;
  retry_adaptive_init(&a, &cfg, now_ns);
  return a;
}

/* The probability at now_ns: advance, then the const read. */
static double p_at(retry_adaptive *a, int64_t now_ns) {
  retry_adaptive_advance(a, now_ns);
  return retry_adaptive_reject_probability(a);
}

/* Counts n requests at now_ns whose responses were refusals (requests without accepts). */
static void count_requests(retry_adaptive *a, int64_t now_ns, int n) {
  for (int i = 0; i < n; i++)
    retry_adaptive_record_response(a, now_ns, false);
}

/* Counts n requests at now_ns whose responses were accepted. */
static void count_accepts(retry_adaptive *a, int64_t now_ns, int n) {
  for (int i = 0; i < n; i++)
    retry_adaptive_record_response(a, now_ns, true);
}

static void test_adaptive_defaults_sre_k2_two_minutes(void **state) {
  (void)state;
  retry_adaptive_config cfg;
  retry_adaptive_config_init(&cfg);
  assert_true(cfg.k == 2.0);
  assert_int_equal(cfg.window_ns, 120 * S);
  assert_true(cfg.padding == 1.0);
  const retry_status_set *r = &cfg.reject_statuses;
  assert_true(retry_status_set_has(r, RETRY_SPACE_GRPC, RETRY_GRPC_RESOURCE_EXHAUSTED));
  assert_true(retry_status_set_has(r, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE));
  assert_true(retry_status_set_has(r, RETRY_SPACE_HTTP, 429));
  assert_true(retry_status_set_has(r, RETRY_SPACE_HTTP, 503));
  assert_false(retry_status_set_has(r, RETRY_SPACE_GRPC, RETRY_GRPC_INTERNAL));
  assert_false(retry_status_set_has(r, RETRY_SPACE_HTTP, 500));
}

static void test_adaptive_no_history_probability_zero(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 120 * S, 1.0, 0);
  assert_true(p_at(&a, 0) == 0.0);
  a = make(2.0, 120 * S, 0.0, 0); /* 0/0 with no padding: still nothing to reject on */
  assert_true(p_at(&a, 0) == 0.0);
}

static void test_adaptive_zero_accepts_probability_is_requests_over_requests_plus_one(
    void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 120 * S, 1.0, 0);
  for (int n = 1; n <= 20; n++) {
    count_requests(&a, 0, 1);
    assert_near(p_at(&a, 0), (double)n / (n + 1.0));
  }
}

static void test_adaptive_accepts_times_k_at_least_requests_gives_zero(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 120 * S, 1.0, 0);
  count_requests(&a, 0, 5);
  count_accepts(&a, 0, 5);
  assert_true(p_at(&a, 0) == 0.0); /* 10 - 2*5 = 0 */
  count_accepts(&a, 0, 1);
  assert_true(p_at(&a, 0) == 0.0); /* negative, clamped */
  retry_adaptive b = make(2.0, 120 * S, 1.0, 0);
  count_requests(&b, 0, 6);
  count_accepts(&b, 0, 4);
  assert_near(p_at(&b, 0), 2.0 / 11.0);
}

static void test_adaptive_k_scales_accepts(void **state) {
  (void)state;
  retry_adaptive a = make(1.1, 120 * S, 1.0, 0);
  count_requests(&a, 0, 5);
  count_accepts(&a, 0, 5);
  assert_near(p_at(&a, 0), (10.0 - 5.5) / 11.0);
}

static void test_adaptive_padding_of_grpc_rls_eight(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 30 * S, 8.0, 0);
  count_requests(&a, 0, 8);
  assert_near(p_at(&a, 0), 0.5);
}

static void test_adaptive_rejects_iff_u_below_probability(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 120 * S, 1.0, 0);
  count_requests(&a, 0, 1); /* P = 1/2 */
  assert_true(retry_adaptive_should_reject(&a, 0, 0.4999));
  /* P is now 2/3. */
  assert_false(retry_adaptive_should_reject(&a, 0, 2.0 / 3.0));
  assert_true(retry_adaptive_should_reject(&a, 0, 0.0));
}

static void test_adaptive_probability_computed_before_counting_the_request(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 120 * S, 1.0, 0);
  count_requests(&a, 0, 1);
  /* P = 1/2 before this request: u = 0 rejects it, and only then is it counted. */
  assert_true(retry_adaptive_should_reject(&a, 0, 0.0));
  assert_near(p_at(&a, 0), 2.0 / 3.0);
}

/* grpc-go's accounting: a request let through counts with its response, so requests in
 * flight never raise P. On a cold start every request of the first burst is admitted, even
 * with u = 0; a literal "count at the attempt" would already reject the second one. */
static void test_adaptive_requests_in_flight_do_not_count(void **state) {
  (void)state;
  retry_adaptive a = make(1.1, 30 * S, 1.0, 0);
  for (int i = 0; i < 20; i++)
    assert_false(retry_adaptive_should_reject(&a, 0, 0.0));
  assert_true(p_at(&a, 0) == 0.0);
  /* Their responses come back accepted: still 0. */
  count_accepts(&a, 10 * MS, 20);
  assert_true(p_at(&a, 10 * MS) == 0.0);
}

static void test_adaptive_rejected_requests_still_count(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 120 * S, 1.0, 0);
  count_requests(&a, 0, 1);
  for (int i = 0; i < 9; i++)
    assert_true(retry_adaptive_should_reject(&a, 0, 0.0));
  assert_near(p_at(&a, 0), 10.0 / 11.0);
}

static void test_adaptive_requests_expire_after_the_window(void **state) {
  (void)state;
  /* 100 s window: bins of 1 s. Requests in bin [0, 1 s) count until the 100th bin after. */
  retry_adaptive a = make(2.0, 100 * S, 1.0, 0);
  count_requests(&a, 0, 3);
  assert_near(p_at(&a, 99 * S + 999 * MS), 0.75);
  assert_true(p_at(&a, 100 * S) == 0.0);
}

static void test_adaptive_window_accepts_expire_too(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 100 * S, 1.0, 0);
  count_requests(&a, 0, 2);
  count_accepts(&a, 0, 2);
  count_requests(&a, 50 * S, 2); /* 6 requests, 2 accepts: (6-4)/7 */
  assert_near(p_at(&a, 50 * S), 2.0 / 7.0);
  /* At 100 s the first bin leaves: 2 requests, 0 accepts. */
  assert_near(p_at(&a, 100 * S), 2.0 / 3.0);
}

static void test_adaptive_probability_reads_the_history_as_last_advanced(void **state) {
  (void)state;
  /* The read is const: the bin from 0 still counts until an advance (or a rejection or a
   * response) moves the ring past the window; advancing backwards changes nothing. */
  retry_adaptive a = make(2.0, 100 * S, 1.0, 0);
  count_requests(&a, 0, 3);
  const retry_adaptive *ro = &a;
  assert_near(retry_adaptive_reject_probability(ro), 0.75);
  retry_adaptive_advance(&a, 100 * S);
  assert_true(retry_adaptive_reject_probability(ro) == 0.0);
  count_requests(&a, 100 * S, 1);
  retry_adaptive_advance(&a, 0);
  assert_near(retry_adaptive_reject_probability(ro), 0.5);
}

static void test_adaptive_bins_are_aligned_to_the_clock(void **state) {
  (void)state;
  /* A request at 0.9 s sits in bin [0, 1 s) and leaves at 100 s, after only 99.1 s. */
  retry_adaptive a = make(2.0, 100 * S, 1.0, 0);
  count_requests(&a, 900 * MS, 1);
  assert_near(p_at(&a, 99 * S + 999 * MS), 0.5);
  assert_true(p_at(&a, 100 * S) == 0.0);
}

static void test_adaptive_long_idle_clears_everything(void **state) {
  (void)state;
  retry_adaptive a = make(2.0, 120 * S, 1.0, -5 * S); /* a clock with a negative origin */
  count_requests(&a, -5 * S, 7);
  assert_true(p_at(&a, INT64_MAX / 2) == 0.0);
  count_requests(&a, INT64_MAX / 2, 1);
  assert_near(p_at(&a, INT64_MAX / 2), 0.5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_adaptive_defaults_sre_k2_two_minutes),
      cmocka_unit_test(test_adaptive_no_history_probability_zero),
      cmocka_unit_test(test_adaptive_zero_accepts_probability_is_requests_over_requests_plus_one),
      cmocka_unit_test(test_adaptive_accepts_times_k_at_least_requests_gives_zero),
      cmocka_unit_test(test_adaptive_k_scales_accepts),
      cmocka_unit_test(test_adaptive_padding_of_grpc_rls_eight),
      cmocka_unit_test(test_adaptive_rejects_iff_u_below_probability),
      cmocka_unit_test(test_adaptive_probability_computed_before_counting_the_request),
      cmocka_unit_test(test_adaptive_requests_in_flight_do_not_count),
      cmocka_unit_test(test_adaptive_rejected_requests_still_count),
      cmocka_unit_test(test_adaptive_requests_expire_after_the_window),
      cmocka_unit_test(test_adaptive_window_accepts_expire_too),
      cmocka_unit_test(test_adaptive_probability_reads_the_history_as_last_advanced),
      cmocka_unit_test(test_adaptive_bins_are_aligned_to_the_clock),
      cmocka_unit_test(test_adaptive_long_idle_clears_everything),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
