/*
 * test_sim_dist.c: duration distributions and rate profiles. Each kind's sample mean lies
 * within a few standard errors of sim_dist_mean_ns (which also catches swapped GSL
 * arguments), samples are rounded and clamped, constants draw nothing, and profiles
 * interpolate linearly with steps where two points share a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <string.h>

#include "sim/sim_dist.h"

#define N_SAMPLES 20000
#define NS_PER_S 1000000000

static gsl_rng *rng_new(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, seed);
  return r;
}

/* {==================================================================
 * Distributions
 * =================================================================== */

/* Draws N_SAMPLES from d and checks: the mean is within 5 standard errors of
 * sim_dist_mean_ns(d) (sd is the distribution's exact standard deviation), and every sample
 * lies in [lo, hi]. */
static void check_mean(sim_dist_kind kind, double p1, double p2, double sd, double lo, double hi) {
  sim_dist d = {kind, p1, p2};
  gsl_rng *r = rng_new(12345);
  double sum = 0;
  for (int i = 0; i < N_SAMPLES; i++) {
    int64_t x = sim_dist_sample(&d, r);
    assert_true((double)x >= lo && (double)x <= hi);
    sum += (double)x;
  }
  double mean = sum / N_SAMPLES, want = sim_dist_mean_ns(&d);
  assert_true(fabs(mean - want) <= 5 * sd / sqrt(N_SAMPLES));
  gsl_rng_free(r);
}

static void test_sim_dist_sample_means_match_each_kind(void **state) {
  (void)state;
  const double ms = 1e6;
  check_mean(SIM_DIST_EXPONENTIAL, ms, 0, ms, 0, INFINITY);
  assert_true(sim_dist_mean_ns(&(sim_dist){SIM_DIST_EXPONENTIAL, ms, 0}) == ms);

  /* Lognormal: mean exp(mu + s^2/2), variance (exp(s^2) - 1) exp(2 mu + s^2). */
  double mu = log(ms), s = 0.5;
  double ln_sd = sqrt((exp(s * s) - 1) * exp(2 * mu + s * s));
  check_mean(SIM_DIST_LOGNORMAL, mu, s, ln_sd, 0, INFINITY);
  assert_true(fabs(sim_dist_mean_ns(&(sim_dist){SIM_DIST_LOGNORMAL, mu, s}) - ms * exp(s * s / 2)) <
              1e-6);

  /* Gamma: shape k, scale theta: mean k theta, sd sqrt(k) theta. */
  check_mean(SIM_DIST_GAMMA, 2.0, ms / 2, sqrt(2.0) * ms / 2, 0, INFINITY);
  assert_true(sim_dist_mean_ns(&(sim_dist){SIM_DIST_GAMMA, 2.0, ms / 2}) == ms);

  /* Weibull: p1 = shape k, p2 = scale lambda. Swapping them for GSL's (scale, shape) order
   * would give samples near 1.5 ns and fail by far. */
  double k = 1.5, g1 = gsl_sf_gamma(1 + 1 / k), g2 = gsl_sf_gamma(1 + 2 / k);
  check_mean(SIM_DIST_WEIBULL, k, ms, ms * sqrt(g2 - g1 * g1), 0, INFINITY);
  assert_true(fabs(sim_dist_mean_ns(&(sim_dist){SIM_DIST_WEIBULL, k, ms}) - ms * g1) < 1e-6);
  /* Shape 1 is the exponential. */
  assert_true(fabs(sim_dist_mean_ns(&(sim_dist){SIM_DIST_WEIBULL, 1, ms}) - ms) < 1e-6);

  /* Pareto: shape a, minimum x_m: mean a x_m / (a - 1), variance x_m^2 a / ((a-1)^2 (a-2)). */
  double a = 5;
  check_mean(SIM_DIST_PARETO, a, ms, ms * sqrt(a / ((a - 1) * (a - 1) * (a - 2))), ms, INFINITY);
  assert_true(sim_dist_mean_ns(&(sim_dist){SIM_DIST_PARETO, a, ms}) == a * ms / (a - 1));

  check_mean(SIM_DIST_UNIFORM, ms, 3 * ms, 2 * ms / sqrt(12.0), ms, 3 * ms);
  assert_true(sim_dist_mean_ns(&(sim_dist){SIM_DIST_UNIFORM, ms, 3 * ms}) == 2 * ms);

  check_mean(SIM_DIST_CONSTANT, 5 * ms, 0, 0, 5 * ms, 5 * ms);
}

static void test_sim_dist_heavy_tails_have_an_infinite_mean(void **state) {
  (void)state;
  /* A Pareto with shape <= 1 has no finite mean. */
  assert_true(isinf(sim_dist_mean_ns(&(sim_dist){SIM_DIST_PARETO, 1.0, 1e6})));
  assert_true(isinf(sim_dist_mean_ns(&(sim_dist){SIM_DIST_PARETO, 0.5, 1e6})));
  /* A Weibull with a tiny shape: Gamma(1 + 1000) overflows a double; no abort, INFINITY. */
  assert_true(isinf(sim_dist_mean_ns(&(sim_dist){SIM_DIST_WEIBULL, 0.001, 1e6})));
}

static void test_sim_dist_constant_draws_nothing(void **state) {
  (void)state;
  gsl_rng *r = rng_new(77), *twin = rng_new(77);
  sim_dist d = {SIM_DIST_CONSTANT, 250e6, 0};
  for (int i = 0; i < 100; i++)
    assert_int_equal(sim_dist_sample(&d, r), 250000000);
  /* r has not moved: it still agrees with its untouched twin. */
  for (int i = 0; i < 10; i++)
    assert_int_equal(gsl_rng_get(r), gsl_rng_get(twin));
  /* And a constant needs no generator at all. */
  assert_int_equal(sim_dist_sample(&d, NULL), 250000000);
  gsl_rng_free(r);
  gsl_rng_free(twin);
}

static void test_sim_dist_samples_are_rounded_and_clamped(void **state) {
  (void)state;
  const int64_t max = INT64_MAX / 4;
  assert_int_equal(sim_dist_sample(&(sim_dist){SIM_DIST_CONSTANT, 2.5, 0}, NULL), 3);
  assert_int_equal(sim_dist_sample(&(sim_dist){SIM_DIST_CONSTANT, 2.4, 0}, NULL), 2);
  assert_int_equal(sim_dist_sample(&(sim_dist){SIM_DIST_CONSTANT, -7, 0}, NULL), 0);
  assert_int_equal(sim_dist_sample(&(sim_dist){SIM_DIST_CONSTANT, 1e30, 0}, NULL), max);
  assert_int_equal(sim_dist_sample(&(sim_dist){SIM_DIST_CONSTANT, INFINITY, 0}, NULL), max);
  assert_int_equal(sim_dist_sample(&(sim_dist){SIM_DIST_CONSTANT, NAN, 0}, NULL), 0);
  gsl_rng *r = rng_new(3);
  sim_dist huge = {SIM_DIST_EXPONENTIAL, 1e30, 0};
  sim_dist neg = {SIM_DIST_UNIFORM, -10, -5};
  for (int i = 0; i < 1000; i++) {
    int64_t x = sim_dist_sample(&huge, r);
    assert_true(x >= 0 && x <= max);
    assert_int_equal(sim_dist_sample(&neg, r), 0);
  }
  /* Whole ns: a uniform on [0, 1) ns rounds to 0 or 1, about half each. */
  sim_dist tiny = {SIM_DIST_UNIFORM, 0, 1};
  int ones = 0;
  for (int i = 0; i < 10000; i++) {
    int64_t x = sim_dist_sample(&tiny, r);
    assert_true(x == 0 || x == 1);
    ones += (int)x;
  }
  assert_true(ones > 4500 && ones < 5500);
  gsl_rng_free(r);
}

/* }================================================================== */

/* {==================================================================
 * Rate profiles
 * =================================================================== */

/* A profile from (t in s, rate) pairs. */
static sim_rate_profile profile(int n, const double *t_s, const double *rate) {
  sim_rate_profile p;
  memset(&p, 0, sizeof p);
  p.n_points = n;
  for (int i = 0; i < n; i++) {
    p.t_ns[i] = (int64_t)llround(t_s[i] * NS_PER_S);
    p.rate[i] = rate[i];
  }
  return p;
}

static void test_sim_dist_profile_interpolates_linearly(void **state) {
  (void)state;
  const double t[] = {10, 20, 40}, r[] = {100, 200, 0};
  sim_rate_profile p = profile(3, t, r);
  const int64_t s = NS_PER_S;
  assert_true(sim_profile_rate(&p, 0) == 100);      /* before the first: first rate */
  assert_true(sim_profile_rate(&p, 10 * s) == 100); /* at a point: its rate */
  assert_true(fabs(sim_profile_rate(&p, 15 * s) - 150) < 1e-9);
  assert_true(sim_profile_rate(&p, 20 * s) == 200);
  assert_true(fabs(sim_profile_rate(&p, 35 * s) - 50) < 1e-9);
  assert_true(fabs(sim_profile_rate(&p, 20 * s + 1) - (200 - 1e-8)) < 1e-9);
  assert_true(sim_profile_rate(&p, 40 * s) == 0);
  assert_true(sim_profile_rate(&p, INT64_MAX) == 0); /* after the last: last rate */
  assert_true(sim_profile_max_rate(&p) == 200);
}

static void test_sim_dist_profile_steps_at_shared_times(void **state) {
  (void)state;
  const int64_t s = NS_PER_S;
  /* Flat 100/s, a step up to 500/s at 5 s, flat, a step down to 0 at 10 s (the last point). */
  const double t[] = {0, 5, 5, 10, 10}, r[] = {100, 100, 500, 500, 0};
  sim_rate_profile p = profile(5, t, r);
  assert_true(sim_profile_rate(&p, 5 * s - 1) == 100);
  assert_true(sim_profile_rate(&p, 5 * s) == 500); /* the later point's rate applies */
  assert_true(sim_profile_rate(&p, 7 * s) == 500);
  assert_true(sim_profile_rate(&p, 10 * s - 1) == 500);
  assert_true(sim_profile_rate(&p, 10 * s) == 0);
  assert_true(sim_profile_rate(&p, 11 * s) == 0);
  assert_true(sim_profile_max_rate(&p) == 500);
  /* A step at the very first time: before it the first rate, from it the second. */
  const double t2[] = {2, 2, 4}, r2[] = {10, 30, 50};
  sim_rate_profile q = profile(3, t2, r2);
  assert_true(sim_profile_rate(&q, 2 * s - 1) == 10);
  assert_true(sim_profile_rate(&q, 2 * s) == 30);
  assert_true(fabs(sim_profile_rate(&q, 3 * s) - 40) < 1e-9);
  /* Three points at one time: the last one wins. */
  const double t3[] = {1, 1, 1}, r3[] = {1, 2, 3};
  sim_rate_profile u = profile(3, t3, r3);
  assert_true(sim_profile_rate(&u, 0) == 1);
  assert_true(sim_profile_rate(&u, s) == 3);
}

static void test_sim_dist_profile_single_point_is_flat_and_full_span_fits(void **state) {
  (void)state;
  const double t[] = {3}, r[] = {42};
  sim_rate_profile p = profile(1, t, r);
  assert_true(sim_profile_rate(&p, 0) == 42);
  assert_true(sim_profile_rate(&p, INT64_MAX) == 42);
  assert_true(sim_profile_max_rate(&p) == 42);
  /* A segment spanning all of int64: no overflow in the time differences. */
  sim_rate_profile w;
  memset(&w, 0, sizeof w);
  w.n_points = 2;
  w.t_ns[0] = INT64_MIN;
  w.t_ns[1] = INT64_MAX;
  w.rate[0] = 0;
  w.rate[1] = 1000;
  assert_true(fabs(sim_profile_rate(&w, 0) - 500) < 1e-6);
  assert_true(sim_profile_rate(&w, INT64_MAX) == 1000);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_dist_sample_means_match_each_kind),
      cmocka_unit_test(test_sim_dist_heavy_tails_have_an_infinite_mean),
      cmocka_unit_test(test_sim_dist_constant_draws_nothing),
      cmocka_unit_test(test_sim_dist_samples_are_rounded_and_clamped),
      cmocka_unit_test(test_sim_dist_profile_interpolates_linearly),
      cmocka_unit_test(test_sim_dist_profile_steps_at_shared_times),
      cmocka_unit_test(test_sim_dist_profile_single_point_is_flat_and_full_span_fits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
