/*
 * test_backoff.c: every jitter mode's distribution, checked over many seeded draws with GSL's
 * statistics (mean, bounds, chi-square uniformity), and the exponent's growth, cap and reset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/script.h"

#define MS RETRY_NS_PER_MS
#define N_DRAWS 200000

static retry_backoff backoff_make(retry_jitter j, int64_t initial_ms, int64_t max_ms, double mult) {
  retry_backoff b;
  memset(&b, 0, sizeof b);
  b.initial_ns = initial_ms * MS;
  b.max_ns = max_ms * MS;
  b.multiplier = mult;
  b.jitter = j;
  b.jitter_fraction = 0.2;
  return b;
}

/* Draws the n-th retry's delay (1-based) N_DRAWS times, each from a fresh state, in ms. */
static double *draw_nth(const retry_backoff *b, int n, uint64_t seed) {
  double *x = malloc(sizeof(double) * N_DRAWS);
  assert_non_null(x);
  test_rng r;
  retry_rng rng = test_rng_make(&r, seed);
  for (int i = 0; i < N_DRAWS; i++) {
    retry_backoff_state st;
    retry_backoff_state_reset(&st);
    int64_t d = 0;
    for (int k = 0; k < n; k++)
      d = retry_backoff_next(b, &st, &rng, NULL);
    x[i] = (double)d / (double)MS;
  }
  return x;
}

/* Chi-square test that x is uniform on [lo, hi) with 20 bins; returns the p-value. */
static double uniform_p(const double *x, size_t n, double lo, double hi) {
  double bins[20] = {0};
  for (size_t i = 0; i < n; i++) {
    int b = (int)((x[i] - lo) / (hi - lo) * 20.0);
    if (b < 0) b = 0;
    if (b > 19) b = 19;
    bins[b] += 1;
  }
  double expect = (double)n / 20.0, chi2 = 0;
  for (int b = 0; b < 20; b++)
    chi2 += (bins[b] - expect) * (bins[b] - expect) / expect;
  return gsl_cdf_chisq_Q(chi2, 19.0);
}

static void check_uniform(double *x, double lo, double hi) {
  gsl_sort(x, 1, N_DRAWS);
  assert_true(x[0] >= lo);
  assert_true(x[N_DRAWS - 1] < hi);
  /* The draws reach both ends of the interval. */
  assert_true(x[0] < lo + (hi - lo) * 1e-3);
  assert_true(x[N_DRAWS - 1] > hi - (hi - lo) * 1e-3);
  double mean = gsl_stats_mean(x, 1, N_DRAWS);
  double sd = (hi - lo) / sqrt(12.0);
  /* Within 5 standard errors of the exact mean. */
  assert_true(fabs(mean - (lo + hi) / 2) < 5 * sd / sqrt((double)N_DRAWS));
  assert_true(uniform_p(x, N_DRAWS, lo, hi) > 1e-4);
}

static void test_backoff_grpc_proportional_is_uniform_80_to_120_percent(void **state) {
  (void)state;
  retry_backoff b = backoff_make(RETRY_JITTER_PROPORTIONAL, 100, 1000, 2.0);
  for (int n = 1; n <= 3; n++) {
    double *x = draw_nth(&b, n, (uint64_t)n);
    double d = 100.0 * pow(2.0, n - 1);
    check_uniform(x, 0.8 * d, 1.2 * d);
    free(x);
  }
}

static void test_backoff_grpc_caps_before_jitter_so_may_exceed_max(void **state) {
  (void)state;
  /* d(5) = min(100 * 2^4, 1000) = 1000 ms, then x U[0.8, 1.2): up to 1200 ms. */
  retry_backoff b = backoff_make(RETRY_JITTER_PROPORTIONAL, 100, 1000, 2.0);
  double *x = draw_nth(&b, 5, 7);
  check_uniform(x, 800, 1200);
  free(x);
  b.cap_after_jitter = true;
  x = draw_nth(&b, 5, 7);
  gsl_sort(x, 1, N_DRAWS);
  assert_true(x[N_DRAWS - 1] <= 1000.0);
  assert_true(x[0] >= 800.0);
  free(x);
}

static void test_backoff_full_jitter_is_uniform_0_to_d(void **state) {
  (void)state;
  retry_backoff b = backoff_make(RETRY_JITTER_FULL, 25, 250, 2.0);
  for (int n = 1; n <= 5; n++) {
    double *x = draw_nth(&b, n, 10 + (uint64_t)n);
    double d = fmin(25.0 * pow(2.0, n - 1), 250.0);
    check_uniform(x, 0, d);
    free(x);
  }
}

static void test_backoff_equal_jitter_is_uniform_half_d_to_d(void **state) {
  (void)state;
  retry_backoff b = backoff_make(RETRY_JITTER_EQUAL, 100, 10000, 2.0);
  for (int n = 1; n <= 3; n++) {
    double *x = draw_nth(&b, n, 20 + (uint64_t)n);
    double d = 100.0 * pow(2.0, n - 1);
    check_uniform(x, d / 2, d);
    free(x);
  }
}

/* Linkerd's exp-backoff with min 25 ms, max 250 ms, jitter ratio 1 (the policy controller's
 * fixed parameters): retry 1 U[25, 50), 2 U[50, 100), 3 U[100, 200); retry 4 is 200 plus a
 * jitter cut at 50, so uniform on [200, 250) a quarter of the time and exactly 250 else;
 * retry 5 and later exactly 250. */
static void test_backoff_linkerd_adds_jitter_above_d_within_max(void **state) {
  (void)state;
  retry_backoff b = backoff_make(RETRY_JITTER_LINKERD, 25, 250, 2.0);
  for (int n = 1; n <= 3; n++) {
    double *x = draw_nth(&b, n, 40 + (uint64_t)n);
    double d = 25.0 * pow(2.0, n - 1);
    check_uniform(x, d, 2 * d);
    free(x);
  }
  double *x = draw_nth(&b, 4, 44);
  size_t at_max = 0;
  for (size_t i = 0; i < N_DRAWS; i++) {
    assert_true(x[i] >= 200.0 && x[i] <= 250.0);
    at_max += x[i] == 250.0;
  }
  assert_true(fabs((double)at_max / N_DRAWS - 0.75) < 0.02);
  free(x);
  x = draw_nth(&b, 5, 45);
  for (size_t i = 0; i < N_DRAWS; i++) assert_true(x[i] == 250.0);
  free(x);
}

static void test_backoff_decorrelated_first_is_uniform_base_to_3base(void **state) {
  (void)state;
  retry_backoff b = backoff_make(RETRY_JITTER_DECORRELATED, 100, 100000, 2.0);
  double *x = draw_nth(&b, 1, 31);
  check_uniform(x, 100, 300);
  free(x);
  /* Later delays stay in [base, min(cap, 3 * previous)). */
  test_rng r;
  retry_rng rng = test_rng_make(&r, 32);
  b.max_ns = 5000 * MS;
  for (int i = 0; i < 2000; i++) {
    retry_backoff_state st;
    retry_backoff_state_reset(&st);
    double prev = 100;
    for (int k = 0; k < 12; k++) {
      double d = (double)retry_backoff_next(&b, &st, &rng, NULL) / (double)MS;
      assert_true(d >= 100.0 - 1e-6);
      assert_true(d <= fmin(5000.0, 3 * prev) + 1e-6);
      prev = d;
    }
  }
}

static void test_backoff_polly_v2_medians_double_from_the_third_retry(void **state) {
  (void)state;
  /* Polly's decorrelated jitter V2 (Polly.Core RetryHelper): with f(t) = 2^t tanh(sqrt(4t))
   * and t = n - 1 + U, delay = (f(t) - f(t_prev)) / 1.4 * D. The first delay's median is
   * f(0.5)/1.4 * D ~ 0.90 D; the second's is ~1.14 D (the tanh still bends); from the third
   * on the medians double: ~2 D, 4 D, 8 D. */
  retry_backoff b = backoff_make(RETRY_JITTER_POLLY_V2, 100, 1000000, 2.0);
  double med[5];
  for (int n = 1; n <= 5; n++) {
    double *x = draw_nth(&b, n, 40 + (uint64_t)n);
    gsl_sort(x, 1, N_DRAWS);
    assert_true(x[0] >= 0);
    med[n - 1] = gsl_stats_median_from_sorted_data(x, 1, N_DRAWS);
    free(x);
  }
  double f05 = pow(2.0, 0.5) * tanh(sqrt(2.0)) / 1.4 * 100.0;
  assert_true(fabs(med[0] - f05) < 1.0);
  assert_true(med[1] > 105.0 && med[1] < 125.0);
  for (int n = 2; n < 5; n++) {
    assert_true(fabs(med[n] - 100.0 * pow(2.0, n - 1)) < 0.03 * 100.0 * pow(2.0, n - 1));
    double ratio = med[n] / med[n - 1];
    assert_true(n == 2 || (ratio > 1.9 && ratio < 2.1));
  }
}

static void test_backoff_none_is_exact_and_capped(void **state) {
  (void)state;
  retry_backoff b = backoff_make(RETRY_JITTER_NONE, 100, 1000, 3.0);
  retry_backoff_state st;
  retry_backoff_state_reset(&st);
  test_rng r;
  retry_rng rng = test_rng_make(&r, 1);
  const int64_t want[6] = {100, 300, 900, 1000, 1000, 1000};
  for (int k = 0; k < 6; k++) {
    int64_t nominal;
    assert_int_equal(retry_backoff_next(&b, &st, &rng, &nominal), want[k] * MS);
    assert_int_equal(nominal, want[k] * MS);
  }
  retry_backoff_state_reset(&st);
  assert_int_equal(retry_backoff_next(&b, &st, &rng, NULL), 100 * MS);
}

static void test_backoff_huge_values_saturate(void **state) {
  (void)state;
  retry_backoff b = backoff_make(RETRY_JITTER_NONE, 1, 1, 10.0);
  b.initial_ns = INT64_MAX / 2;
  b.max_ns = INT64_MAX;
  retry_backoff_state st;
  retry_backoff_state_reset(&st);
  test_rng r;
  retry_rng rng = test_rng_make(&r, 1);
  retry_backoff_next(&b, &st, &rng, NULL);
  for (int k = 0; k < 100; k++)
    assert_true(retry_backoff_next(&b, &st, &rng, NULL) > 0);
  b.jitter = RETRY_JITTER_PROPORTIONAL;
  for (int k = 0; k < 100; k++)
    assert_true(retry_backoff_next(&b, &st, &rng, NULL) > 0);
}

static void test_backoff_jitter_names_round_trip(void **state) {
  (void)state;
  const retry_jitter all[] = {RETRY_JITTER_PROPORTIONAL, RETRY_JITTER_FULL,     RETRY_JITTER_EQUAL,
                              RETRY_JITTER_DECORRELATED, RETRY_JITTER_POLLY_V2, RETRY_JITTER_NONE};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    retry_jitter j;
    assert_int_equal(retry_jitter_parse(retry_jitter_name(all[i]), &j), 0);
    assert_int_equal(j, all[i]);
  }
  retry_jitter j;
  assert_int_equal(retry_jitter_parse("proportional", &j), 0);
  assert_int_equal(j, RETRY_JITTER_PROPORTIONAL);
  assert_int_equal(retry_jitter_parse("Full", &j), RETRY_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backoff_grpc_proportional_is_uniform_80_to_120_percent),
      cmocka_unit_test(test_backoff_grpc_caps_before_jitter_so_may_exceed_max),
      cmocka_unit_test(test_backoff_full_jitter_is_uniform_0_to_d),
      cmocka_unit_test(test_backoff_linkerd_adds_jitter_above_d_within_max),
      cmocka_unit_test(test_backoff_equal_jitter_is_uniform_half_d_to_d),
      cmocka_unit_test(test_backoff_decorrelated_first_is_uniform_base_to_3base),
      cmocka_unit_test(test_backoff_polly_v2_medians_double_from_the_third_retry),
      cmocka_unit_test(test_backoff_none_is_exact_and_capped),
      cmocka_unit_test(test_backoff_huge_values_saturate),
      cmocka_unit_test(test_backoff_jitter_names_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
