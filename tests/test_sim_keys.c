/*
 * test_sim_keys.c: key distributions. Draws on a fixed seed are binned (the first keys one by
 * one, the rest in ranges doubling in width up to N) and compared with the exact
 * probabilities by a chi-square test at level 1e-4, which must also reject the same draws
 * against a slightly wrong exponent (so the test has power). The harmonic numbers match
 * direct sums and known limits; s = 1, s near 1, N = 1, N past 2^32 work; bad input is
 * refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_keys.h"

#define SEED 20261202UL
#define N_DRAWS 400000
#define LEVEL 1e-4
#define MAX_BINS 96

static gsl_rng *rng_new(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, seed);
  return r;
}

static sim_keys keys_new(sim_keys_kind kind, uint64_t n, double s) {
  sim_keys k;
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(sim_keys_init(&k, kind, n, s, &err), 0);
  assert_int_equal(err.code, RETRY_OK);
  return k;
}

/* {==================================================================
 * Chi-square against the exact probabilities
 * =================================================================== */

/* Bins: keys 0 .. 15 one each, then [16, 32), [32, 64), ... up to n: lo[b] .. lo[b + 1]. */
static int make_bins(uint64_t n, uint64_t *lo) {
  int b = 0;
  for (uint64_t x = 0; x < n; x = x < 16 ? x + 1 : 2 * x)
    lo[b++] = x;
  lo[b] = n;
  return b;
}

static int bin_of(const uint64_t *lo, int n_bins, uint64_t key) {
  int a = 0, z = n_bins - 1; /* the last bin whose lo <= key */
  while (a < z) {
    int m = (a + z + 1) / 2;
    if (lo[m] <= key)
      a = m;
    else
      z = m - 1;
  }
  return a;
}

/* Pearson's statistic of count[] against the bins' exact masses under `model` (adjacent bins
 * merged until each expects at least 20 draws); returns whether it passes at LEVEL. */
static bool chisq_passes(const sim_keys *model, const uint64_t *lo, int n_bins,
                         const long *count, double *stat_out) {
  double stat = 0, exp_acc = 0, obs_acc = 0;
  int df = -1;
  for (int b = 0; b < n_bins; b++) {
    exp_acc += N_DRAWS * (sim_keys_top_mass(model, lo[b + 1]) - sim_keys_top_mass(model, lo[b]));
    obs_acc += (double)count[b];
    if (exp_acc >= 20 || b == n_bins - 1) {
      if (exp_acc > 0) {
        stat += (obs_acc - exp_acc) * (obs_acc - exp_acc) / exp_acc;
        df++;
      }
      exp_acc = obs_acc = 0;
    }
  }
  *stat_out = stat;
  return df <= 0 || stat <= gsl_cdf_chisq_Qinv(LEVEL, df);
}

/* Draws N_DRAWS keys of k, checks each is in range, and tests them against k and, when
 * wrong_s > 0, against a Zipf of exponent wrong_s over the same keys (which must fail). */
static void check_draws(const sim_keys *k, double wrong_s) {
  uint64_t lo[MAX_BINS + 1];
  long count[MAX_BINS] = {0};
  int n_bins = make_bins(k->n, lo);
  assert_true(n_bins <= MAX_BINS);
  gsl_rng *r = rng_new(SEED);
  for (int i = 0; i < N_DRAWS; i++) {
    uint64_t key = sim_keys_draw(k, r);
    assert_true(key < k->n);
    count[bin_of(lo, n_bins, key)]++;
  }
  gsl_rng_free(r);
  double stat;
  bool ok = chisq_passes(k, lo, n_bins, count, &stat);
  if (!ok) print_message("n %llu s %g: chi-square %g\n", (unsigned long long)k->n, k->s, stat);
  assert_true(ok);
  if (wrong_s > 0) {
    sim_keys wrong = keys_new(SIM_KEYS_ZIPF, k->n, wrong_s);
    assert_false(chisq_passes(&wrong, lo, n_bins, count, &stat));
  }
}

static void test_sim_keys_zipf_draws_match_exact_probabilities(void **state) {
  (void)state;
  /* Each case is also tested against an exponent 0.02 to 0.05 off, which must be rejected. */
  sim_keys k = keys_new(SIM_KEYS_ZIPF, 1000, 1.2);
  check_draws(&k, 1.23);
  k = keys_new(SIM_KEYS_ZIPF, 1000, 0.5);
  check_draws(&k, 0.52);
  k = keys_new(SIM_KEYS_ZIPF, 2, 3.0);
  check_draws(&k, 3.05);
  k = keys_new(SIM_KEYS_ZIPF, 20, 0.01);
  check_draws(&k, 0);
}

static void test_sim_keys_zipf_s_one_and_near_one_over_1e8_keys(void **state) {
  (void)state;
  /* The bins run up to 1e8, so the tail (where 32-bit uniforms would be too coarse) is tested. */
  sim_keys k = keys_new(SIM_KEYS_ZIPF, 100000000, 1.0);
  check_draws(&k, 1.02);
  k = keys_new(SIM_KEYS_ZIPF, 100000000, 1.00001);
  check_draws(&k, 0.98);
  k = keys_new(SIM_KEYS_ZIPF, 100000000, 1 - 1e-9);
  check_draws(&k, 1.02);
  k = keys_new(SIM_KEYS_ZIPF, 100000000, 0.99);
  check_draws(&k, 1.01);
}

static void test_sim_keys_uniform_draws_are_uniform(void **state) {
  (void)state;
  for (uint64_t n = 1; n <= 1000; n = n * 10 + 7) {
    sim_keys k = keys_new(SIM_KEYS_UNIFORM, n, 0);
    check_draws(&k, 0);
    assert_true(sim_keys_prob(&k, 0) == 1.0 / (double)n);
    assert_true(sim_keys_prob(&k, n) == 0);
    assert_true(sim_keys_top_mass(&k, n / 2) == (double)(n / 2) / (double)n);
  }
  /* Up to 2^32 - 1 keys a draw is GSL's gsl_rng_uniform_int, draw for draw. */
  sim_keys k = keys_new(SIM_KEYS_UNIFORM, 1000003, 0);
  gsl_rng *a = rng_new(SEED), *b = rng_new(SEED);
  for (int i = 0; i < 1000; i++)
    assert_true(sim_keys_draw(&k, a) == gsl_rng_uniform_int(b, 1000003));
  /* Past 2^32 keys the 64-bit path: the top half and the odd keys are reached, and the 16
   * equal ranges are hit evenly (chi-square, 15 degrees of freedom). */
  uint64_t n = (UINT64_C(1) << 40) + 3;
  k = keys_new(SIM_KEYS_UNIFORM, n, 0);
  long count[16] = {0}, odd = 0;
  for (int i = 0; i < 160000; i++) {
    uint64_t key = sim_keys_draw(&k, a);
    assert_true(key < n);
    count[key / (n / 16 + 1)]++;
    odd += (long)(key & 1);
  }
  double stat = 0;
  for (int i = 0; i < 16; i++)
    stat += ((double)count[i] - 10000.0) * ((double)count[i] - 10000.0) / 10000.0;
  assert_true(stat <= gsl_cdf_chisq_Qinv(LEVEL, 15));
  assert_true(labs(odd - 80000) < 4 * 200); /* 4 sd of Binomial(160000, 1/2) */
  gsl_rng_free(a);
  gsl_rng_free(b);
}

static void test_sim_keys_one_key_draws_key_zero_and_nothing_else(void **state) {
  (void)state;
  gsl_rng *r = rng_new(SEED), *copy = rng_new(SEED);
  sim_keys z = keys_new(SIM_KEYS_ZIPF, 1, 1.0), u = keys_new(SIM_KEYS_UNIFORM, 1, 0);
  for (int i = 0; i < 100; i++) {
    assert_true(sim_keys_draw(&z, r) == 0);
    assert_true(sim_keys_draw(&u, r) == 0);
  }
  assert_true(gsl_rng_get(r) == gsl_rng_get(copy)); /* nothing was drawn */
  assert_true(sim_keys_prob(&z, 0) == 1 && sim_keys_prob(&z, 1) == 0);
  assert_true(sim_keys_top_mass(&z, 0) == 0 && sim_keys_top_mass(&z, 1) == 1);
  gsl_rng_free(r);
  gsl_rng_free(copy);
}

static void test_sim_keys_same_seed_same_keys(void **state) {
  (void)state;
  sim_keys k = keys_new(SIM_KEYS_ZIPF, 1000000, 0.9);
  gsl_rng *a = rng_new(7), *b = rng_new(7);
  for (int i = 0; i < 10000; i++)
    assert_true(sim_keys_draw(&k, a) == sim_keys_draw(&k, b));
  gsl_rng_free(a);
  gsl_rng_free(b);
}

/* {==================================================================
 * Exact probabilities
 * =================================================================== */

static double direct_sum(uint64_t n, double s) {
  double sum = 0;
  for (uint64_t i = n; i >= 1; i--)
    sum += pow((double)i, -s);
  return sum;
}

static void test_sim_keys_harmonic_matches_direct_sums_and_limits(void **state) {
  (void)state;
  const double ss[] = {0, 0.3, 0.99, 1, 1.00001, 1.5, 2, 4};
  const uint64_t ns[] = {1, 2, 1023, 1024, 1025, 5000, 300000};
  for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++)
    for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
      double want = direct_sum(ns[j], ss[i]), got = sim_keys_harmonic(ns[j], ss[i]);
      assert_true(fabs(got - want) <= 1e-12 * want);
    }
  assert_true(sim_keys_harmonic(0, 1) == 0);
  /* H(n, 1) = ln n + gamma + 1/(2n) - 1/(12 n^2) + ...; H(n, 2) = pi^2/6 - 1/n + 1/(2 n^2) - ... */
  const double gamma = 0.57721566490153286, pi = 3.14159265358979324;
  double n = 1e8;
  assert_true(fabs(sim_keys_harmonic(100000000, 1) - (log(n) + gamma + 1 / (2 * n))) < 1e-13 * 20);
  assert_true(fabs(sim_keys_harmonic(100000000, 2) - (pi * pi / 6 - 1 / n + 1 / (2 * n * n))) <
              1e-14);
  /* Continuous through s = 1: the two forms of the integral meet. */
  double at1 = sim_keys_harmonic(100000000, 1);
  assert_true(fabs(sim_keys_harmonic(100000000, 1 + 1e-12) - at1) < 1e-9);
  assert_true(fabs(sim_keys_harmonic(100000000, 1 - 1e-12) - at1) < 1e-9);
  assert_true(fabs(sim_keys_harmonic(100000000, 1.00001) - at1) < 2e-3);
  assert_true(sim_keys_harmonic(100000000, 1.00001) < at1);
}

static void test_sim_keys_probabilities_sum_to_the_top_mass(void **state) {
  (void)state;
  const double ss[] = {0.5, 1, 1.00001, 2.5};
  for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++) {
    sim_keys k = keys_new(SIM_KEYS_ZIPF, 3000, ss[i]);
    double sum = 0;
    for (uint64_t c = 0; c < 3000; c++) {
      if (c % 97 == 0) assert_true(fabs(sim_keys_top_mass(&k, c) - sum) < 1e-13);
      sum += sim_keys_prob(&k, c);
    }
    assert_true(fabs(sum - 1) < 1e-13);
    assert_true(sim_keys_top_mass(&k, 3000) == 1 && sim_keys_top_mass(&k, 1u << 30) == 1);
    assert_true(sim_keys_prob(&k, 0) > sim_keys_prob(&k, 1)); /* key 0 is the most popular */
  }
  /* A known figure: zipf s = 1 over 1e6 keys, a cache of the top 1 % holds about 70 % of the
   * requests (H(1e4) / H(1e6) = 9.7876 / 14.3927). */
  sim_keys k = keys_new(SIM_KEYS_ZIPF, 1000000, 1);
  assert_true(fabs(sim_keys_top_mass(&k, 10000) - 9.787606036 / 14.392726722) < 1e-9);
}

/* The header promises at most 1.017 tries a draw on average: the hat's area over the sum. */
static void test_sim_keys_zipf_rejection_rate_is_bounded(void **state) {
  (void)state;
  double worst = 0;
  for (double s = 0.01; s <= 20; s *= 1.2)
    for (uint64_t n = 2; n <= 100000000; n = n * 3 + 1) {
      sim_keys k = keys_new(SIM_KEYS_ZIPF, n, s);
      double tries = (k.h_hi - k.h_lo) / k.h_norm;
      assert_true(tries >= 1 - 1e-12);
      if (tries > worst) worst = tries;
    }
  print_message("worst expected tries per zipf draw: %.4f\n", worst);
  assert_true(worst < 1.017);
}

static void test_sim_keys_init_refuses_bad_parameters(void **state) {
  (void)state;
  struct {
    sim_keys_kind kind;
    uint64_t n;
    double s;
  } bad[] = {
      {SIM_KEYS_UNIFORM, 0, 0},
      {SIM_KEYS_ZIPF, 0, 1},
      {SIM_KEYS_UNIFORM, SIM_KEYS_MAX_N + 1, 0},
      {SIM_KEYS_ZIPF, 10, 0},
      {SIM_KEYS_ZIPF, 10, -1},
      {SIM_KEYS_ZIPF, 10, NAN},
      {SIM_KEYS_ZIPF, 10, INFINITY},
      {SIM_KEYS_ZIPF, 10, SIM_KEYS_MAX_S * 2},
      {(sim_keys_kind)7, 10, 1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sim_keys k;
    retry_error err;
    retry_error_clear(&err);
    assert_int_equal(sim_keys_init(&k, bad[i].kind, bad[i].n, bad[i].s, &err), RETRY_EINVAL);
    assert_int_equal(err.code, RETRY_EINVAL);
    assert_true(err.message[0] != '\0');
    assert_true(k.n == 0);
    assert_int_equal(sim_keys_init(&k, bad[i].kind, bad[i].n, bad[i].s, NULL), RETRY_EINVAL);
  }
  /* The edges are accepted. */
  sim_keys k = keys_new(SIM_KEYS_ZIPF, SIM_KEYS_MAX_N, SIM_KEYS_MAX_S);
  gsl_rng *r = rng_new(SEED);
  for (int i = 0; i < 100; i++)
    assert_true(sim_keys_draw(&k, r) == 0); /* 2^-1000 is zero next to 1 */
  k = keys_new(SIM_KEYS_ZIPF, SIM_KEYS_MAX_N, 1);
  for (int i = 0; i < 1000; i++)
    assert_true(sim_keys_draw(&k, r) < SIM_KEYS_MAX_N);
  gsl_rng_free(r);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_keys_init_refuses_bad_parameters),
      cmocka_unit_test(test_sim_keys_one_key_draws_key_zero_and_nothing_else),
      cmocka_unit_test(test_sim_keys_harmonic_matches_direct_sums_and_limits),
      cmocka_unit_test(test_sim_keys_probabilities_sum_to_the_top_mass),
      cmocka_unit_test(test_sim_keys_zipf_rejection_rate_is_bounded),
      cmocka_unit_test(test_sim_keys_zipf_draws_match_exact_probabilities),
      cmocka_unit_test(test_sim_keys_zipf_s_one_and_near_one_over_1e8_keys),
      cmocka_unit_test(test_sim_keys_uniform_draws_are_uniform),
      cmocka_unit_test(test_sim_keys_same_seed_same_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
