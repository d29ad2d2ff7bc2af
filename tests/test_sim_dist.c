/*
 * test_sim_dist.c: duration distributions and rate profiles. Each kind's sample mean lies
 * within a few standard errors of sim_dist_mean_ns (which also catches swapped GSL
 * arguments), samples are rounded and clamped, constants draw nothing, and profiles
 * interpolate linearly with steps where two points share a time. Mixtures: the moments of
 * "10 ms, 1 % of the time 1 s", nesting, one uniform per draw, zero weights. Empirical
 * distributions: KS distance of the draws to their samples and to a histogram's CDF, the CSV
 * format and its errors, bad input refused, every allocation failed once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim_dist.h"
#include "tests/support/oom.h"

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
  sim_dist d = {.kind = kind, .p1 = p1, .p2 = p2};
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
  assert_true(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_EXPONENTIAL, .p1 = ms, .p2 = 0}) == ms);

  /* Lognormal: mean exp(mu + s^2/2), variance (exp(s^2) - 1) exp(2 mu + s^2). */
  double mu = log(ms), s = 0.5;
  double ln_sd = sqrt((exp(s * s) - 1) * exp(2 * mu + s * s));
  check_mean(SIM_DIST_LOGNORMAL, mu, s, ln_sd, 0, INFINITY);
  assert_true(fabs(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_LOGNORMAL, .p1 = mu, .p2 = s}) -
                   ms * exp(s * s / 2)) < 1e-6);

  /* Gamma: shape k, scale theta: mean k theta, sd sqrt(k) theta. */
  check_mean(SIM_DIST_GAMMA, 2.0, ms / 2, sqrt(2.0) * ms / 2, 0, INFINITY);
  assert_true(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_GAMMA, .p1 = 2.0, .p2 = ms / 2}) == ms);

  /* Weibull: p1 = shape k, p2 = scale lambda. Swapping them for GSL's (scale, shape) order
   * would give samples near 1.5 ns and fail by far. */
  double k = 1.5, g1 = gsl_sf_gamma(1 + 1 / k), g2 = gsl_sf_gamma(1 + 2 / k);
  check_mean(SIM_DIST_WEIBULL, k, ms, ms * sqrt(g2 - g1 * g1), 0, INFINITY);
  assert_true(fabs(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_WEIBULL, .p1 = k, .p2 = ms}) -
                   ms * g1) < 1e-6);
  /* Shape 1 is the exponential. */
  assert_true(
      fabs(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_WEIBULL, .p1 = 1, .p2 = ms}) - ms) < 1e-6);

  /* Pareto: shape a, minimum x_m: mean a x_m / (a - 1), variance x_m^2 a / ((a-1)^2 (a-2)). */
  double a = 5;
  check_mean(SIM_DIST_PARETO, a, ms, ms * sqrt(a / ((a - 1) * (a - 1) * (a - 2))), ms, INFINITY);
  assert_true(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_PARETO, .p1 = a, .p2 = ms}) ==
              a * ms / (a - 1));

  check_mean(SIM_DIST_UNIFORM, ms, 3 * ms, 2 * ms / sqrt(12.0), ms, 3 * ms);
  assert_true(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_UNIFORM, .p1 = ms, .p2 = 3 * ms}) ==
              2 * ms);

  check_mean(SIM_DIST_CONSTANT, 5 * ms, 0, 0, 5 * ms, 5 * ms);
}

static void test_sim_dist_heavy_tails_have_an_infinite_mean(void **state) {
  (void)state;
  /* A Pareto with shape <= 1 has no finite mean. */
  assert_true(isinf(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_PARETO, .p1 = 1.0, .p2 = 1e6})));
  assert_true(isinf(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_PARETO, .p1 = 0.5, .p2 = 1e6})));
  /* A Weibull with a tiny shape: Gamma(1 + 1000) overflows a double; no abort, INFINITY. */
  assert_true(
      isinf(sim_dist_mean_ns(&(sim_dist){.kind = SIM_DIST_WEIBULL, .p1 = 0.001, .p2 = 1e6})));
}

static void test_sim_dist_constant_draws_nothing(void **state) {
  (void)state;
  gsl_rng *r = rng_new(77), *twin = rng_new(77);
  sim_dist d = {.kind = SIM_DIST_CONSTANT, .p1 = 250e6, .p2 = 0};
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
  assert_int_equal(
      sim_dist_sample(&(sim_dist){.kind = SIM_DIST_CONSTANT, .p1 = 2.5, .p2 = 0}, NULL), 3);
  assert_int_equal(
      sim_dist_sample(&(sim_dist){.kind = SIM_DIST_CONSTANT, .p1 = 2.4, .p2 = 0}, NULL), 2);
  assert_int_equal(sim_dist_sample(&(sim_dist){.kind = SIM_DIST_CONSTANT, .p1 = -7, .p2 = 0}, NULL),
                   0);
  assert_int_equal(
      sim_dist_sample(&(sim_dist){.kind = SIM_DIST_CONSTANT, .p1 = 1e30, .p2 = 0}, NULL), max);
  assert_int_equal(
      sim_dist_sample(&(sim_dist){.kind = SIM_DIST_CONSTANT, .p1 = INFINITY, .p2 = 0}, NULL), max);
  assert_int_equal(
      sim_dist_sample(&(sim_dist){.kind = SIM_DIST_CONSTANT, .p1 = NAN, .p2 = 0}, NULL), 0);
  gsl_rng *r = rng_new(3);
  sim_dist huge = {.kind = SIM_DIST_EXPONENTIAL, .p1 = 1e30, .p2 = 0};
  sim_dist neg = {.kind = SIM_DIST_UNIFORM, .p1 = -10, .p2 = -5};
  for (int i = 0; i < 1000; i++) {
    int64_t x = sim_dist_sample(&huge, r);
    assert_true(x >= 0 && x <= max);
    assert_int_equal(sim_dist_sample(&neg, r), 0);
  }
  /* Whole ns: a uniform on [0, 1) ns rounds to 0 or 1, about half each. */
  sim_dist tiny = {.kind = SIM_DIST_UNIFORM, .p1 = 0, .p2 = 1};
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
 * Checking, mixtures and empirical distributions
 * =================================================================== */

#define MS 1e6

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Two-sample Kolmogorov-Smirnov distance: sup |F_a(x) - F_b(x)|. Sorts both arrays. */
static double ks_distance(double *a, size_t na, double *b, size_t nb) {
  qsort(a, na, sizeof *a, cmp_double);
  qsort(b, nb, sizeof *b, cmp_double);
  size_t i = 0, j = 0;
  double d = 0;
  while (i < na && j < nb) {
    double x = a[i] < b[j] ? a[i] : b[j];
    while (i < na && a[i] <= x)
      i++;
    while (j < nb && b[j] <= x)
      j++;
    double diff = fabs((double)i / (double)na - (double)j / (double)nb);
    if (diff > d) d = diff;
  }
  return d;
}

static void test_sim_dist_check_refuses_bad_parameters(void **state) {
  (void)state;
  const sim_dist good[] = {{.kind = SIM_DIST_CONSTANT, .p1 = 0},
                           {.kind = SIM_DIST_EXPONENTIAL, .p1 = MS},
                           {.kind = SIM_DIST_LOGNORMAL, .p1 = -3, .p2 = 0.5},
                           {.kind = SIM_DIST_GAMMA, .p1 = 2, .p2 = MS},
                           {.kind = SIM_DIST_UNIFORM, .p1 = MS, .p2 = MS}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    assert_int_equal(sim_dist_check(&good[i], NULL), 0);
  const sim_dist bad[] = {{.kind = SIM_DIST_CONSTANT, .p1 = -1},
                          {.kind = SIM_DIST_CONSTANT, .p1 = NAN},
                          {.kind = SIM_DIST_EXPONENTIAL, .p1 = 0},
                          {.kind = SIM_DIST_LOGNORMAL, .p1 = 1, .p2 = 0},
                          {.kind = SIM_DIST_WEIBULL, .p1 = INFINITY, .p2 = 1},
                          {.kind = SIM_DIST_PARETO, .p1 = 1, .p2 = -1},
                          {.kind = SIM_DIST_UNIFORM, .p1 = 2, .p2 = 1},
                          {.kind = SIM_DIST_MIXTURE},
                          {.kind = SIM_DIST_EMPIRICAL},
                          {.kind = (sim_dist_kind)99}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    retry_error err;
    retry_error_clear(&err);
    assert_int_equal(sim_dist_check(&bad[i], &err), RETRY_EINVAL);
    assert_int_equal(err.code, RETRY_EINVAL);
    assert_true(strlen(err.message) > 10);
  }
}

/* 10 ms, except 1 % of the time 1 s. */
static sim_mixture *ten_ms_or_one_s(void) {
  const double w[] = {99, 1};
  const sim_dist parts[] = {{.kind = SIM_DIST_CONSTANT, .p1 = 10 * MS},
                            {.kind = SIM_DIST_CONSTANT, .p1 = 1000 * MS}};
  sim_mixture *m = sim_mixture_create(2, w, parts, NULL, NULL);
  assert_non_null(m);
  return m;
}

static void test_sim_mixture_moments_of_10ms_with_1pct_1s(void **state) {
  (void)state;
  sim_mixture *m = ten_ms_or_one_s();
  sim_dist d = sim_dist_of_mixture(m);
  assert_int_equal(d.kind, SIM_DIST_MIXTURE);
  /* Mean 0.99 x 10 ms + 0.01 x 1 s = 19.9 ms; variance E[X^2] - mean^2. */
  const double mean = 19.9 * MS;
  const double var = 0.99 * 1e14 + 0.01 * 1e18 - mean * mean;
  assert_true(fabs(sim_dist_mean_ns(&d) - mean) < 1e-3);
  gsl_rng *r = rng_new(2024);
  const int n = 200000;
  double sum = 0, sum2 = 0;
  int slow = 0;
  for (int i = 0; i < n; i++) {
    int64_t x = sim_dist_sample(&d, r);
    assert_true(x == 10000000 || x == 1000000000); /* only the two parts' values */
    slow += x == 1000000000;
    sum += (double)x;
    sum2 += (double)x * (double)x;
  }
  double m1 = sum / n, v = sum2 / n - m1 * m1;
  assert_true(fabs(m1 - mean) < 5 * sqrt(var / n));
  /* The share of slow draws within 5 binomial standard errors of 1 %, and with it the
   * variance (which only that share moves here) within 6 % of its exact value. */
  assert_true(fabs((double)slow - 0.01 * n) < 5 * sqrt(n * 0.01 * 0.99));
  assert_true(fabs(v - var) < 0.06 * var);
  gsl_rng_free(r);
  sim_mixture_destroy(m);
}

static void test_sim_mixture_nests_mixtures(void **state) {
  (void)state;
  sim_mixture *inner = ten_ms_or_one_s();
  const double w[] = {1, 1};
  const sim_dist parts[] = {{.kind = SIM_DIST_EXPONENTIAL, .p1 = 1 * MS},
                            sim_dist_of_mixture(inner)};
  sim_mixture *outer = sim_mixture_create(2, w, parts, NULL, NULL);
  assert_non_null(outer);
  assert_int_equal(sim_mixture_depth(inner), 1);
  assert_int_equal(sim_mixture_depth(outer), 2);
  assert_int_equal(sim_mixture_n_parts(outer), 2);
  sim_dist d = sim_dist_of_mixture(outer);
  double mean = 0.5 * 1 * MS + 0.5 * 19.9 * MS;
  assert_true(fabs(sim_dist_mean_ns(&d) - mean) < 1e-3);
  /* E[X^2]: exponential 2 mean^2; the inner mixture 0.99 (10 ms)^2 + 0.01 (1 s)^2. */
  double ex2 = 0.5 * 2 * MS * MS + 0.5 * (0.99 * 1e14 + 0.01 * 1e18);
  double sd = sqrt(ex2 - mean * mean);
  gsl_rng *r = rng_new(99);
  const int n = 200000;
  double sum = 0;
  int fast = 0;
  for (int i = 0; i < n; i++) {
    int64_t x = sim_dist_sample(&d, r);
    sum += (double)x;
    fast += x != 10000000 && x != 1000000000; /* drawn from the exponential */
  }
  assert_true(fabs(sum / n - mean) < 5 * sd / sqrt(n));
  assert_true(fabs((double)fast - 0.5 * n) < 5 * sqrt(n * 0.25));
  gsl_rng_free(r);
  sim_mixture_destroy(outer);
  sim_mixture_destroy(inner);
}

static void test_sim_mixture_is_deterministic_one_uniform_then_the_part(void **state) {
  (void)state;
  sim_mixture *m = ten_ms_or_one_s();
  sim_dist d = sim_dist_of_mixture(m);
  gsl_rng *a = rng_new(5), *b = rng_new(5);
  for (int i = 0; i < 1000; i++)
    assert_int_equal(sim_dist_sample(&d, a), sim_dist_sample(&d, b));
  /* A one-part mixture of an exponential takes one uniform, then the exponential's own draw,
   * from the same stream. */
  const double w[] = {3};
  const sim_dist parts[] = {{.kind = SIM_DIST_EXPONENTIAL, .p1 = MS}};
  sim_mixture *one = sim_mixture_create(1, w, parts, NULL, NULL);
  assert_non_null(one);
  sim_dist d1 = sim_dist_of_mixture(one);
  for (int i = 0; i < 100; i++) {
    int64_t x = sim_dist_sample(&d1, a);
    (void)gsl_rng_uniform(b);
    assert_int_equal(x, sim_dist_sample(&parts[0], b));
  }
  gsl_rng_free(a);
  gsl_rng_free(b);
  sim_mixture_destroy(one);
  sim_mixture_destroy(m);
}

static void test_sim_mixture_never_draws_a_zero_weight_part(void **state) {
  (void)state;
  const double w[] = {0, 1, 0, 2, 0};
  const sim_dist parts[] = {
      {.kind = SIM_DIST_CONSTANT, .p1 = 1},
      {.kind = SIM_DIST_CONSTANT, .p1 = 2},
      {.kind = SIM_DIST_CONSTANT, .p1 = 3},
      {.kind = SIM_DIST_CONSTANT, .p1 = 4},
      {.kind = SIM_DIST_PARETO, .p1 = 0.5, .p2 = 1} /* infinite mean, weight 0 */};
  sim_mixture *m = sim_mixture_create(5, w, parts, NULL, NULL);
  assert_non_null(m);
  sim_dist d = sim_dist_of_mixture(m);
  assert_true(fabs(sim_dist_mean_ns(&d) - (2 + 2 * 4) / 3.0) < 1e-12);
  gsl_rng *r = rng_new(11);
  int twos = 0;
  for (int i = 0; i < 30000; i++) {
    int64_t x = sim_dist_sample(&d, r);
    assert_true(x == 2 || x == 4);
    twos += x == 2;
  }
  assert_true(fabs(twos - 10000.0) < 5 * sqrt(30000 * (1 / 3.0) * (2 / 3.0)));
  gsl_rng_free(r);
  sim_mixture_destroy(m);
}

static void test_sim_mixture_refuses_bad_input(void **state) {
  (void)state;
  const sim_dist c = {.kind = SIM_DIST_CONSTANT, .p1 = 1};
  const sim_dist two[] = {c, c};
  struct {
    size_t n;
    double w0, w1;
    const sim_dist *parts;
    const char *says;
  } cases[] = {
      {0, 1, 1, two, "at least one part"},         {2, -1, 1, two, "part 1: weight -1"},
      {2, 1, NAN, two, "part 2: weight nan"},      {2, 0, 0, two, "sum to 0"},
      {2, INFINITY, 1, two, "part 1: weight inf"}, {2, 1e308, 1e308, two, "sum to inf"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    retry_error err;
    retry_error_clear(&err);
    const double w[] = {cases[i].w0, cases[i].w1};
    assert_null(sim_mixture_create(cases[i].n, w, cases[i].parts, NULL, &err));
    assert_int_equal(err.code, RETRY_EINVAL);
    if (strstr(err.message, cases[i].says) == NULL) fail_msg("%s", err.message);
  }
  /* A bad part is named. */
  const sim_dist badpart[] = {c, {.kind = SIM_DIST_LOGNORMAL, .p1 = 0, .p2 = 0}};
  const double w[] = {1, 1};
  retry_error err;
  retry_error_clear(&err);
  assert_null(sim_mixture_create(2, w, badpart, NULL, &err));
  assert_non_null(strstr(err.message, "part 2: a lognormal"));
  /* Nesting deeper than SIM_MIXTURE_MAX_DEPTH. */
  sim_mixture *chain[SIM_MIXTURE_MAX_DEPTH + 1];
  sim_dist inner = c;
  const double one[] = {1};
  for (int i = 0; i < SIM_MIXTURE_MAX_DEPTH; i++) {
    chain[i] = sim_mixture_create(1, one, &inner, NULL, NULL);
    assert_non_null(chain[i]);
    inner = sim_dist_of_mixture(chain[i]);
  }
  retry_error_clear(&err);
  assert_null(sim_mixture_create(1, one, &inner, NULL, &err));
  assert_non_null(strstr(err.message, "at most 8 levels"));
  /* The deepest allowed one still draws. */
  gsl_rng *r = rng_new(1);
  assert_int_equal(sim_dist_sample(&inner, r), 1);
  gsl_rng_free(r);
  for (int i = SIM_MIXTURE_MAX_DEPTH; i-- > 0;)
    sim_mixture_destroy(chain[i]);
  sim_mixture_destroy(NULL);
}

static void test_sim_empirical_samples_draws_follow_their_ecdf(void **state) {
  (void)state;
  /* 500 measured latencies (a lognormal around 20 ms), then 20000 draws from them: every draw
   * is a measured value, and the two-sample KS distance is below the 1 % critical value
   * 1.63 sqrt((n + m) / (n m)). */
  enum { N_MEASURED = 500, N_DRAWS = 20000 };
  static double samples[N_MEASURED], sorted[N_MEASURED], draws[N_DRAWS];
  gsl_rng *src = rng_new(7);
  double sum = 0;
  for (int i = 0; i < N_MEASURED; i++) {
    samples[i] = (double)llround(gsl_ran_lognormal(src, log(20 * MS), 0.6));
    sum += samples[i];
  }
  gsl_rng_free(src);
  sim_empirical *e = sim_empirical_create_samples(samples, N_MEASURED, NULL, NULL);
  assert_non_null(e);
  assert_false(sim_empirical_is_histogram(e));
  assert_int_equal(sim_empirical_size(e), N_MEASURED);
  sim_dist d = sim_dist_of_empirical(e);
  assert_true(fabs(sim_dist_mean_ns(&d) - sum / N_MEASURED) < 1e-6);
  memcpy(sorted, samples, sizeof samples);
  qsort(sorted, N_MEASURED, sizeof sorted[0], cmp_double);
  gsl_rng *r = rng_new(8);
  for (int i = 0; i < N_DRAWS; i++) {
    draws[i] = (double)sim_dist_sample(&d, r);
    assert_non_null(bsearch(&draws[i], sorted, N_MEASURED, sizeof sorted[0], cmp_double));
  }
  double crit = 1.63 * sqrt((double)(N_MEASURED + N_DRAWS) / ((double)N_MEASURED * N_DRAWS));
  double dist = ks_distance(draws, N_DRAWS, sorted, N_MEASURED);
  assert_true(dist < crit);
  /* The check can fail: the same draws against samples scaled by 1.1 are far apart. */
  for (int i = 0; i < N_MEASURED; i++)
    sorted[i] *= 1.1;
  assert_true(ks_distance(draws, N_DRAWS, sorted, N_MEASURED) > crit);
  gsl_rng_free(r);
  sim_empirical_destroy(e);
}

static void test_sim_empirical_histogram_uniform_within_bins(void **state) {
  (void)state;
  /* [0, 10) ms x1, [10, 20) ms x0, [20, 40) ms x3. */
  const double edges[] = {0, 10 * MS, 20 * MS, 40 * MS}, counts[] = {1, 0, 3};
  sim_empirical *e = sim_empirical_create_histogram(edges, counts, 3, NULL, NULL);
  assert_non_null(e);
  assert_true(sim_empirical_is_histogram(e));
  assert_int_equal(sim_empirical_size(e), 3);
  sim_dist d = sim_dist_of_empirical(e);
  assert_true(fabs(sim_dist_mean_ns(&d) - (0.25 * 5 + 0.75 * 30) * MS) < 1e-3);
  gsl_rng *r = rng_new(21);
  enum { N = 40000 };
  /* KS against the histogram's own CDF, piecewise linear: 1 % critical value 1.63/sqrt(N). */
  static double draws[N];
  for (int i = 0; i < N; i++) {
    int64_t x = sim_dist_sample(&d, r);
    assert_true(x >= 0 && x <= 40000000);
    assert_false(x > 10000000 && x < 20000000); /* the empty bin */
    draws[i] = (double)x;
  }
  qsort(draws, N, sizeof draws[0], cmp_double);
  double dmax = 0;
  for (int i = 0; i < N; i++) {
    double x = draws[i] / MS, f;
    f = x < 10 ? 0.25 * x / 10 : x < 20 ? 0.25 : 0.25 + 0.75 * (x - 20) / 20;
    double lo = fabs(f - (double)i / N), hi = fabs(f - (double)(i + 1) / N);
    if (lo > dmax) dmax = lo;
    if (hi > dmax) dmax = hi;
  }
  assert_true(dmax < 1.63 / sqrt(N));
  gsl_rng_free(r);
  sim_empirical_destroy(e);
}

static void test_sim_empirical_refuses_bad_input(void **state) {
  (void)state;
  retry_error err;
  const double s_neg[] = {1, -2}, s_nan[] = {1, NAN};
  retry_error_clear(&err);
  assert_null(sim_empirical_create_samples(s_neg, 0, NULL, &err));
  assert_non_null(strstr(err.message, "at least one sample"));
  retry_error_clear(&err);
  assert_null(sim_empirical_create_samples(s_neg, 2, NULL, &err));
  assert_non_null(strstr(err.message, "sample 2: -2"));
  retry_error_clear(&err);
  assert_null(sim_empirical_create_samples(s_nan, 2, NULL, &err));
  assert_int_equal(err.code, RETRY_EINVAL);

  const double edges[] = {0, 10, 10, 30}, good_edges[] = {0, 10, 20, 30};
  const double counts[] = {1, 1, 1}, neg_counts[] = {1, -1, 1}, zero[] = {0, 0, 0};
  retry_error_clear(&err);
  assert_null(sim_empirical_create_histogram(edges, counts, 3, NULL, &err));
  assert_non_null(strstr(err.message, "bin 2: upper edge 10 is not above"));
  retry_error_clear(&err);
  assert_null(sim_empirical_create_histogram(good_edges, neg_counts, 3, NULL, &err));
  assert_non_null(strstr(err.message, "bin 2: count -1"));
  retry_error_clear(&err);
  assert_null(sim_empirical_create_histogram(good_edges, zero, 3, NULL, &err));
  assert_non_null(strstr(err.message, "sum to 0"));
  retry_error_clear(&err);
  assert_null(sim_empirical_create_histogram(good_edges, counts, 0, NULL, &err));
  assert_non_null(strstr(err.message, "at least one bin"));
  const double neg_edges[] = {-1, 10};
  retry_error_clear(&err);
  assert_null(sim_empirical_create_histogram(neg_edges, counts, 1, NULL, &err));
  assert_non_null(strstr(err.message, "edge 1: -1"));
  sim_empirical_destroy(NULL);
}

/* Writes text to a new temporary file; returns its path in buf. */
static const char *temp_csv(char *buf, size_t size, const char *text) {
  snprintf(buf, size, "/tmp/test_sim_dist_XXXXXX");
  int fd = mkstemp(buf);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return buf;
}

static void test_sim_empirical_csv_reads_samples_and_histograms(void **state) {
  (void)state;
  char path[64];
  /* Samples in ms, with a BOM, comments, blank lines and CRLF line ends. */
  temp_csv(path, sizeof path,
           "\xEF\xBB\xBF# measured on 2026-11-30\r\nlatency_ms\r\n12.5\r\n\r\n  # a comment\r\n"
           "3\r\n0.25\r\n");
  retry_error err;
  retry_error_clear(&err);
  sim_empirical *e = sim_empirical_load_csv(path, NULL, &err);
  assert_non_null(e);
  assert_false(sim_empirical_is_histogram(e));
  assert_int_equal(sim_empirical_size(e), 3);
  sim_dist d = sim_dist_of_empirical(e);
  assert_true(fabs(sim_dist_mean_ns(&d) - (12.5 + 3 + 0.25) / 3 * MS) < 1e-3);
  sim_empirical_destroy(e);
  remove(path);
  /* A histogram in us; the last line has no newline. */
  temp_csv(path, sizeof path, "lower_us, upper_us, count\n0,100,1\n100,300,3");
  e = sim_empirical_load_csv(path, NULL, &err);
  assert_non_null(e);
  assert_true(sim_empirical_is_histogram(e));
  assert_int_equal(sim_empirical_size(e), 2);
  d = sim_dist_of_empirical(e);
  assert_true(fabs(sim_dist_mean_ns(&d) - (0.25 * 50 + 0.75 * 200) * 1e3) < 1e-6);
  gsl_rng *r = rng_new(4);
  for (int i = 0; i < 1000; i++) {
    int64_t x = sim_dist_sample(&d, r);
    assert_true(x >= 0 && x <= 300000);
  }
  gsl_rng_free(r);
  sim_empirical_destroy(e);
  remove(path);
}

static void test_sim_empirical_csv_refuses_bad_files(void **state) {
  (void)state;
  struct {
    const char *text;
    int line;
    const char *says;
  } cases[] = {
      {"# nothing but comments\n\n", 2, "no header"},
      {"latency\n1\n", 1, "header \"latency\""},
      {"a_ms,b_ms\n1,2\n", 1, "give one column"},
      {"lower_ms,upper_us,count\n0,1,1\n", 1, "three"},
      {"lower_ms,upper_ms,n\n0,1,1\n", 1, "three"},
      {"latency_ms\n1\n-2\n", 3, "finite number >= 0"},
      {"latency_ms\n1\n2ms\n", 3, "the unit is in the header"},
      {"latency_ms\n1\nnan\n", 3, "finite number >= 0"},
      {"latency_ms\n1\n1,2\n", 3, "exactly one value"},
      {"latency_ms\n\n# only comments\n", 3, "no data rows"},
      {"lower_ms,upper_ms,count\n0,10,1\n10,10,1\n", 3, "above its lower edge"},
      {"lower_ms,upper_ms,count\n0,10,1\n12,20,1\n", 3, "contiguous"},
      {"lower_ms,upper_ms,count\n0,10,1\n10,20\n", 3, "exactly three values"},
      {"lower_ms,upper_ms,count\n0,10,0\n10,20,0\n", -1, "sum to 0"},
  };
  char path[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    temp_csv(path, sizeof path, cases[i].text);
    retry_error err;
    retry_error_clear(&err);
    assert_null(sim_empirical_load_csv(path, NULL, &err));
    assert_int_equal(err.code, RETRY_EINVAL);
    assert_string_equal(err.source, path);
    if (err.line != cases[i].line || strstr(err.message, cases[i].says) == NULL)
      fail_msg("case %zu: line %d: %s", i, err.line, err.message);
    remove(path);
  }
  /* A line too long to be a row. */
  static char longline[2048];
  memset(longline, '1', sizeof longline - 2);
  longline[sizeof longline - 2] = '\n';
  char text[2100];
  snprintf(text, sizeof text, "latency_ms\n%s", longline);
  temp_csv(path, sizeof path, text);
  retry_error err;
  retry_error_clear(&err);
  assert_null(sim_empirical_load_csv(path, NULL, &err));
  assert_non_null(strstr(err.message, "line longer than 1022"));
  assert_int_equal(err.line, 2);
  remove(path);
  /* No such file. */
  retry_error_clear(&err);
  assert_null(sim_empirical_load_csv("/nonexistent/dir/latency.csv", NULL, &err));
  assert_int_equal(err.code, RETRY_EIO);
  assert_string_equal(err.source, "/nonexistent/dir/latency.csv");
}

/* sim_empirical_read_csv reads a stream the caller opened (here bytes in memory, as the
 * scenario loader does after hashing them), names it as told in errors and leaves it open. */
static void test_sim_empirical_csv_reads_an_open_stream_under_its_name(void **state) {
  (void)state;
  static char text[] = "# two bins\nlower_ms,upper_ms,count\n0,10,3\n10,20,1\n";
  FILE *f = fmemopen(text, strlen(text), "r");
  assert_non_null(f);
  retry_error err;
  retry_error_clear(&err);
  sim_empirical *e = sim_empirical_read_csv(f, "mem.csv", NULL, &err);
  assert_non_null(e);
  assert_true(sim_empirical_is_histogram(e));
  assert_int_equal(sim_empirical_size(e), 2);
  sim_dist d = sim_dist_of_empirical(e);
  assert_true(fabs(sim_dist_mean_ns(&d) - (0.75 * 5e6 + 0.25 * 15e6)) < 1);
  assert_int_equal(fgetc(f), EOF); /* read to its end, still open */
  fclose(f);
  sim_empirical_destroy(e);
  static char bad[] = "latency_ms\n1\n-2\n";
  f = fmemopen(bad, strlen(bad), "r");
  assert_non_null(f);
  retry_error_clear(&err);
  assert_null(sim_empirical_read_csv(f, "mem.csv", NULL, &err));
  assert_string_equal(err.source, "mem.csv");
  assert_int_equal(err.line, 3);
  fclose(f);
}

static void test_sim_dist_tables_fail_each_allocation_cleanly(void **state) {
  (void)state;
  /* Fail the n-th allocation for n = 0, 1, ... until the call succeeds: each failure returns
   * NULL with RETRY_ENOMEM and leaves nothing allocated. */
  char path[64];
  char text[8000] = "latency_us\n";
  for (int i = 0; i < 600; i++) /* more rows than the first array holds: it must grow */
    snprintf(text + strlen(text), sizeof text - strlen(text), "%d\n", i);
  temp_csv(path, sizeof path, text);
  const double w[] = {1, 1};
  const sim_dist parts[] = {{.kind = SIM_DIST_CONSTANT, .p1 = 1},
                            {.kind = SIM_DIST_CONSTANT, .p1 = 2}};
  const double edges[] = {0, 1, 2}, counts[] = {1, 1}, samples[] = {1, 2, 3};
  for (int what = 0; what < 4; what++) {
    int fails = 0;
    for (long n = 0;; n++) {
      test_oom c;
      retry_allocator a = test_oom_allocator(&c, n);
      retry_error err;
      retry_error_clear(&err);
      void *obj = NULL;
      switch (what) {
        case 0: obj = sim_mixture_create(2, w, parts, &a, &err); break;
        case 1: obj = sim_empirical_create_samples(samples, 3, &a, &err); break;
        case 2: obj = sim_empirical_create_histogram(edges, counts, 2, &a, &err); break;
        default: obj = sim_empirical_load_csv(path, &a, &err); break;
      }
      if (obj != NULL) {
        if (what == 0)
          sim_mixture_destroy(obj);
        else
          sim_empirical_destroy(obj);
        assert_int_equal(c.live, 0);
        break;
      }
      assert_int_equal(err.code, RETRY_ENOMEM);
      assert_int_equal(c.live, 0);
      fails++;
    }
    assert_true(fails >= (what == 3 ? 4 : 1)); /* the CSV grows two arrays twice, then builds */
  }
  remove(path);
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
      cmocka_unit_test(test_sim_dist_check_refuses_bad_parameters),
      cmocka_unit_test(test_sim_mixture_moments_of_10ms_with_1pct_1s),
      cmocka_unit_test(test_sim_mixture_nests_mixtures),
      cmocka_unit_test(test_sim_mixture_is_deterministic_one_uniform_then_the_part),
      cmocka_unit_test(test_sim_mixture_never_draws_a_zero_weight_part),
      cmocka_unit_test(test_sim_mixture_refuses_bad_input),
      cmocka_unit_test(test_sim_empirical_samples_draws_follow_their_ecdf),
      cmocka_unit_test(test_sim_empirical_histogram_uniform_within_bins),
      cmocka_unit_test(test_sim_empirical_refuses_bad_input),
      cmocka_unit_test(test_sim_empirical_csv_reads_samples_and_histograms),
      cmocka_unit_test(test_sim_empirical_csv_refuses_bad_files),
      cmocka_unit_test(test_sim_empirical_csv_reads_an_open_stream_under_its_name),
      cmocka_unit_test(test_sim_dist_tables_fail_each_allocation_cleanly),
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
