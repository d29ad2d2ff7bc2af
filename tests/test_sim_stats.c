/*
 * test_sim_stats.c: means and intervals over replications against values computed by hand
 * (and checked against R's t.test, binom.test and prop.test without continuity correction),
 * and the coverage of the t interval on a distribution with a known mean.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>

#include "sim/sim_stats.h"

#define near(a, b, tol) assert_true(fabs((a) - (b)) < (tol))

/* 1..5: mean 3, sd sqrt(2.5), t(0.975, 4) = 2.776445, half width 1.963243. */
static void test_sim_stats_t_interval_known_values(void **state) {
  (void)state;
  const double x[] = {1, 2, 3, 4, 5};
  sim_stats_interval iv;
  sim_stats_mean_interval(x, 5, 0.95, &iv);
  assert_int_equal(iv.n, 5);
  near(iv.mean, 3, 1e-12);
  near(iv.sd, sqrt(2.5), 1e-12);
  near(iv.half_width, 1.963243, 1e-6);
  near(iv.lo, 3 - 1.963243, 1e-6);
  near(iv.hi, 3 + 1.963243, 1e-6);
  /* A higher level widens it: t(0.995, 4) = 4.604095. */
  sim_stats_mean_interval(x, 5, 0.99, &iv);
  near(iv.half_width, 4.604095 * sqrt(2.5) / sqrt(5.0), 1e-6);
}

/* Values that are not numbers are left out; one value has a mean but no spread. */
static void test_sim_stats_skips_non_finite_values(void **state) {
  (void)state;
  const double x[] = {NAN, 10, INFINITY, 14};
  sim_stats_interval iv;
  sim_stats_mean_interval(x, 4, 0.95, &iv);
  assert_int_equal(iv.n, 2);
  near(iv.mean, 12, 1e-12);
  near(iv.sd, sqrt(8.0), 1e-12);
  sim_stats_mean_interval(x, 2, 0.95, &iv);
  assert_int_equal(iv.n, 1);
  near(iv.mean, 10, 1e-12);
  assert_true(isnan(iv.sd) && isnan(iv.half_width) && isnan(iv.lo));
  assert_false(sim_stats_excludes_zero(&iv));
  sim_stats_mean_interval(x, 1, 0.95, &iv);
  assert_int_equal(iv.n, 0);
  assert_true(isnan(iv.mean));
  sim_stats_mean_interval(NULL, 0, 0.95, &iv);
  assert_true(iv.n == 0 && isnan(iv.mean));
}

/* Two variants that share most of their variation: the paired interval is much narrower than
 * the one of either mean, and it tells the difference from zero where they cannot. */
static void test_sim_stats_paired_interval_is_narrower(void **state) {
  (void)state;
  const double a[] = {100, 140, 90, 160, 120, 110};
  const double b[] = {98, 137, 89, 157, 119, 107};
  sim_stats_interval ia, ib, d;
  sim_stats_mean_interval(a, 6, 0.95, &ia);
  sim_stats_mean_interval(b, 6, 0.95, &ib);
  sim_stats_paired_interval(a, b, 6, 0.95, &d);
  near(d.mean, 13.0 / 6, 1e-12); /* differences 2, 3, 1, 3, 1, 3 */
  assert_true(d.half_width < ia.half_width / 10 && d.half_width < ib.half_width / 10);
  assert_true(sim_stats_excludes_zero(&d));
  /* The unpaired intervals overlap: on their own they could not tell the two apart. */
  assert_true(ia.lo < ib.hi && ib.lo < ia.hi);
  /* A pair with a missing side is dropped. */
  const double c[] = {1, NAN, 3};
  const double e[] = {0, 5, NAN};
  sim_stats_paired_interval(c, e, 3, 0.95, &d);
  assert_int_equal(d.n, 1);
  near(d.mean, 1, 1e-12);
}

/* Wilson 8/10 at 95 %: [0.4902, 0.9433]; Clopper-Pearson 8/10: [0.4439, 0.9748]; 0/10:
 * [0, 0.3085]; 10/10: [0.6915, 1]. */
static void test_sim_stats_proportion_intervals_match_wilson_and_clopper_pearson(void **state) {
  (void)state;
  double lo, hi;
  sim_stats_wilson(8, 10, 0.95, &lo, &hi);
  near(lo, 0.4902, 1e-4);
  near(hi, 0.9433, 1e-4);
  sim_stats_clopper_pearson(8, 10, 0.95, &lo, &hi);
  near(lo, 0.4439, 1e-4);
  near(hi, 0.9748, 1e-4);
  sim_stats_clopper_pearson(0, 10, 0.95, &lo, &hi);
  assert_true(lo == 0);
  near(hi, 0.3085, 1e-4);
  sim_stats_clopper_pearson(10, 10, 0.95, &lo, &hi);
  near(lo, 0.6915, 1e-4);
  assert_true(hi == 1);
  sim_stats_wilson(0, 10, 0.95, &lo, &hi);
  assert_true(lo == 0);
  near(hi, 0.2775, 1e-4);
  sim_stats_wilson(0, 0, 0.95, &lo, &hi);
  assert_true(lo == 0 && hi == 1);
  sim_stats_clopper_pearson(0, 0, 0.95, &lo, &hi);
  assert_true(lo == 0 && hi == 1);
}

/* Coverage: 400 repetitions of 10 exponential draws with mean 50; the 95 % t interval must
 * cover 50 in 90-99 % of them (skewed data undercover a little; a wrong quantile or a
 * population sd in place of the sample's would fall outside). */
static void test_sim_stats_t_interval_covers_about_95_percent(void **state) {
  (void)state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, 12345);
  int covered = 0, reps = 400;
  for (int k = 0; k < reps; k++) {
    double x[10];
    for (int i = 0; i < 10; i++)
      x[i] = gsl_ran_exponential(r, 50);
    sim_stats_interval iv;
    sim_stats_mean_interval(x, 10, 0.95, &iv);
    covered += iv.lo <= 50 && 50 <= iv.hi;
  }
  gsl_rng_free(r);
  assert_true(covered >= reps * 90 / 100 && covered <= reps * 99 / 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_stats_t_interval_known_values),
      cmocka_unit_test(test_sim_stats_skips_non_finite_values),
      cmocka_unit_test(test_sim_stats_paired_interval_is_narrower),
      cmocka_unit_test(test_sim_stats_proportion_intervals_match_wilson_and_clopper_pearson),
      cmocka_unit_test(test_sim_stats_t_interval_covers_about_95_percent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
