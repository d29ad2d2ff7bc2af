/*
 * test_sim_hist.c: the log-bucketed histogram. Small values are exact, every bucket holds its
 * values within 1/128, quantiles match exact sorted quantiles, merging equals recording into
 * one histogram, and the CSV rows have the documented format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_hist.h"

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* A value spread evenly over the decades of [lo, hi] (log-uniform). */
static int64_t log_uniform(uint64_t *s, double lo, double hi) {
  double u = (double)(splitmix(s) >> 11) * 0x1.0p-53;
  return (int64_t)llround(exp(log(lo) + u * (log(hi) - log(lo))));
}

/* sim_hist is 58 KiB: keep it off the stack. */
static sim_hist *hist_new(void) {
  sim_hist *h = malloc(sizeof *h);
  assert_non_null(h);
  sim_hist_init(h);
  return h;
}

static void test_sim_hist_small_values_are_exact(void **state) {
  (void)state;
  /* Values up to 255 have buckets of width 1 (group 0 exact by design, group 1 of width 1). */
  for (int64_t v = 0; v < 256; v++) {
    int b = sim_hist_bucket_of(v);
    assert_int_equal(sim_hist_bucket_lo(b), v);
    assert_int_equal(sim_hist_bucket_hi(b), v);
  }
  sim_hist *h = hist_new();
  for (int64_t v = 1; v <= 100; v++)
    sim_hist_record(h, v);
  assert_int_equal(sim_hist_quantile(h, 0.5), 50);
  assert_int_equal(sim_hist_quantile(h, 0.99), 99);
  assert_int_equal(sim_hist_quantile(h, 0.011), 2); /* ceil(1.1) = 2nd smallest */
  assert_int_equal(h->min, 1);
  assert_int_equal(h->max, 100);
  assert_true(fabs(sim_hist_mean(h) - 50.5) < 1e-12);
  free(h);
}

/* Checks v's bucket: it contains v and is at most 1/SIM_HIST_SUB of its lower bound wide. */
static void check_bucket(int64_t v) {
  int b = sim_hist_bucket_of(v);
  assert_true(b >= 0 && b < SIM_HIST_N_BUCKETS);
  int64_t lo = sim_hist_bucket_lo(b), hi = sim_hist_bucket_hi(b);
  assert_true(lo <= v && v <= hi);
  assert_true((double)(hi - lo) <= (double)lo / SIM_HIST_SUB);
}

static void test_sim_hist_bucket_bounds_contain_value(void **state) {
  (void)state;
  /* Around every power of two, where the group changes. */
  for (int p = 0; p < 63; p++) {
    int64_t two = (int64_t)1 << p;
    check_bucket(two - 1);
    check_bucket(two);
    check_bucket(two + 1);
  }
  check_bucket(INT64_MAX);
  uint64_t s = 3;
  for (int i = 0; i < 100000; i++)
    check_bucket(log_uniform(&s, 1, 9e18));
  /* Buckets tile [0, INT64_MAX] without gaps or overlaps, and end exactly at INT64_MAX. */
  int last = sim_hist_bucket_of(INT64_MAX);
  assert_int_equal(sim_hist_bucket_lo(0), 0);
  for (int b = 0; b < last; b++)
    assert_int_equal(sim_hist_bucket_hi(b) + 1, sim_hist_bucket_lo(b + 1));
  assert_int_equal(sim_hist_bucket_hi(last), INT64_MAX);
  assert_true(last < SIM_HIST_N_BUCKETS);
}

static void test_sim_hist_quantiles_within_relative_error(void **state) {
  (void)state;
  enum { N = 100000 };
  double *x = malloc(N * sizeof *x);
  assert_non_null(x);
  sim_hist *h = hist_new();
  uint64_t s = 17;
  for (int i = 0; i < N; i++) {
    int64_t v = log_uniform(&s, 1, 1e12); /* 1 ns .. 1000 s */
    sim_hist_record(h, v);
    x[i] = (double)v;
  }
  gsl_sort(x, 1, N);
  const double qs[] = {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999};
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    /* The exact quantile by the same rule: the ceil(q n)-th smallest value. */
    double exact = x[(size_t)ceil(qs[i] * N) - 1];
    double got = (double)sim_hist_quantile(h, qs[i]);
    assert_true(fabs(got - exact) <= exact / 128);
  }
  assert_int_equal(sim_hist_quantile(h, 0), (int64_t)x[0]);
  assert_int_equal(sim_hist_quantile(h, 1), (int64_t)x[N - 1]);
  double sum = 0;
  for (int i = 0; i < N; i++)
    sum += x[i];
  assert_true(fabs(sim_hist_mean(h) - sum / N) <= 1e-9 * sum / N);
  free(x);
  free(h);
}

static void test_sim_hist_quantile_clamps_to_min_and_max(void **state) {
  (void)state;
  sim_hist *h = hist_new();
  /* One value: every quantile is that value, not its bucket's midpoint. */
  sim_hist_record(h, 1000003);
  assert_int_equal(sim_hist_quantile(h, 0), 1000003);
  assert_int_equal(sim_hist_quantile(h, 0.5), 1000003);
  assert_int_equal(sim_hist_quantile(h, 1), 1000003);
  /* Out-of-range and NaN q read as the ends. */
  sim_hist_record(h, 5000000);
  assert_int_equal(sim_hist_quantile(h, -1), 1000003);
  assert_int_equal(sim_hist_quantile(h, NAN), 1000003);
  assert_int_equal(sim_hist_quantile(h, 2), 5000000);
  /* ceil(0.5 * 2) = 1st value: now its bucket's midpoint, which lies inside [min, max]. */
  int b = sim_hist_bucket_of(1000003);
  int64_t mid = sim_hist_bucket_lo(b) + (sim_hist_bucket_hi(b) - sim_hist_bucket_lo(b)) / 2;
  assert_true(mid > 1000003);
  assert_int_equal(sim_hist_quantile(h, 0.5), mid);
  free(h);
}

static void test_sim_hist_negative_values_count_as_zero(void **state) {
  (void)state;
  sim_hist *h = hist_new();
  sim_hist_record(h, -5);
  sim_hist_record(h, INT64_MIN);
  assert_int_equal(h->count, 2);
  assert_int_equal(h->min, 0);
  assert_int_equal(h->max, 0);
  assert_int_equal(sim_hist_quantile(h, 0.5), 0);
  assert_int_equal(sim_hist_bucket_of(-1), 0);
  free(h);
}

static void test_sim_hist_empty_answers_zero_and_merges_as_nothing(void **state) {
  (void)state;
  sim_hist *h = hist_new();
  assert_int_equal(h->count, 0);
  assert_int_equal(h->min, INT64_MAX);
  assert_int_equal(h->max, 0);
  assert_int_equal(sim_hist_quantile(h, 0), 0);
  assert_int_equal(sim_hist_quantile(h, 0.5), 0);
  assert_int_equal(sim_hist_quantile(h, 1), 0);
  assert_true(sim_hist_mean(h) == 0.0);
  /* Merging an empty histogram changes nothing, in either direction. */
  sim_hist *g = hist_new();
  sim_hist_merge(h, g);
  assert_int_equal(h->count, 0);
  assert_int_equal(h->min, INT64_MAX);
  sim_hist_record(g, 42);
  sim_hist_merge(h, g);
  assert_int_equal(h->count, 1);
  assert_int_equal(sim_hist_quantile(h, 0.5), 42);
  free(g);
  free(h);
}

/* Clearing a used histogram leaves exactly what a fresh one holds, whatever values it had
 * (zero, huge, spread over many buckets), and it records afterwards as a fresh one does. */
static void test_sim_hist_clear_equals_init(void **state) {
  (void)state;
  static sim_hist fresh, used;
  sim_hist_init(&fresh);
  sim_hist_init(&used);
  sim_hist_clear(&used); /* empty: a no-op */
  assert_memory_equal(&fresh, &used, sizeof fresh);
  const int64_t values[] = {0, 1, 7, 1000, 123456789, INT64_MAX / 3, 42};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    sim_hist_record(&used, values[i]);
  assert_true(used.count == 7);
  sim_hist_clear(&used);
  assert_memory_equal(&fresh, &used, sizeof fresh);
  sim_hist_record(&used, 5);
  sim_hist_record(&fresh, 5);
  assert_memory_equal(&fresh, &used, sizeof fresh);
}

static void test_sim_hist_merge_equals_recording_into_one(void **state) {
  (void)state;
  sim_hist *a = hist_new(), *b = hist_new(), *all = hist_new();
  uint64_t s = 5;
  for (int i = 0; i < 50000; i++) {
    /* Different ranges, so min and max come from different sides. */
    int64_t va = log_uniform(&s, 10, 1e6), vb = log_uniform(&s, 1e3, 1e10);
    sim_hist_record(a, va);
    sim_hist_record(b, vb);
    sim_hist_record(all, va);
    sim_hist_record(all, vb);
  }
  sim_hist_merge(a, b);
  assert_int_equal(a->count, all->count);
  assert_int_equal(a->min, all->min);
  assert_int_equal(a->max, all->max);
  assert_memory_equal(a->buckets, all->buckets, sizeof a->buckets);
  assert_true(fabs(a->sum - all->sum) <= 1e-9 * all->sum);
  for (double q = 0; q <= 1.0; q += 0.05)
    assert_int_equal(sim_hist_quantile(a, q), sim_hist_quantile(all, q));
  free(a);
  free(b);
  free(all);
}

/* The quantiles of what one histogram holds and a subset of it does not are, for every q,
 * those of a histogram of the rest alone: the time series' OK-only latencies are all calls'
 * less the failed ones'. Small and large subsets, values on both sides, q = 0 and 1, several
 * quantiles in one pass, and what is left empty. */
static void test_sim_hist_quantiles_minus_equal_the_rest_alone(void **state) {
  (void)state;
  sim_hist *all = hist_new(), *sub = hist_new(), *rest = hist_new();
  static const double qs[] = {0, 0.001, 0.1, 0.5, 0.5, 0.9, 0.99, 0.999, 1, 1};
  const int nq = (int)(sizeof qs / sizeof qs[0]);
  uint64_t s = 11;
  for (int round = 0; round < 40; round++) {
    sim_hist_clear(all);
    sim_hist_clear(sub);
    sim_hist_clear(rest);
    int n = 1 + (int)(splitmix(&s) % 3000);
    unsigned share = (unsigned)(splitmix(&s) % 101); /* percent in the subset */
    for (int i = 0; i < n; i++) {
      int64_t v = round % 4 == 0 ? (int64_t)(splitmix(&s) % 300) : log_uniform(&s, 1, 1e11);
      sim_hist_record(all, v);
      if (splitmix(&s) % 100 < share)
        sim_hist_record(sub, v);
      else
        sim_hist_record(rest, v);
    }
    int64_t out[10];
    for (int i = 0; i < nq; i++)
      out[i] = -1;
    sim_hist_quantiles_minus(all, sub, rest->min, rest->max, qs, nq, out);
    for (int i = 0; i < nq; i++)
      assert_int_equal(out[i], sim_hist_quantile(rest, qs[i]));
    /* Without a subset: the histogram's own quantiles. */
    sim_hist_quantiles_minus(all, NULL, all->min, all->max, qs, nq, out);
    for (int i = 0; i < nq; i++)
      assert_int_equal(out[i], sim_hist_quantile(all, qs[i]));
    /* Nothing left: 0, as an empty histogram answers. */
    sim_hist_quantiles_minus(all, all, INT64_MAX, 0, qs, nq, out);
    for (int i = 0; i < nq; i++)
      assert_int_equal(out[i], 0);
  }
  free(all);
  free(sub);
  free(rest);
}

/* Returns the whole content of f (rewound), NUL-terminated; free it. */
static char *slurp(FILE *f) {
  long n = ftell(f);
  assert_true(n >= 0);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  return buf;
}

static void test_sim_hist_csv_writes_a_row_per_bucket_in_scale(void **state) {
  (void)state;
  sim_hist *h = hist_new();
  sim_hist_record(h, 1000000);
  sim_hist_record(h, 1000000);
  sim_hist_record(h, 2000000);
  sim_hist_record(h, 10000000);
  FILE *f = tmpfile();
  assert_non_null(f);
  assert_int_equal(sim_hist_write_csv(h, f, "base,", 1e6), 0);
  char *text = slurp(f);
  /* 1 ms falls in [999424, 1003519] ns: 2^19 .. 2^20 has buckets 4096 ns wide. */
  assert_string_equal(text,
                      "base,0.999424,1.003519,2,0.500000\n"
                      "base,1.998848,2.007039,1,0.750000\n"
                      "base,9.961472,10.027007,1,1.000000\n");
  free(text);
  fclose(f);
  /* No prefix, another scale; an empty histogram writes nothing. */
  f = tmpfile();
  assert_non_null(f);
  sim_hist_init(h);
  assert_int_equal(sim_hist_write_csv(h, f, "", 1e6), 0);
  assert_int_equal(ftell(f), 0);
  sim_hist_record(h, 7);
  assert_int_equal(sim_hist_write_csv(h, f, "", 1), 0);
  text = slurp(f);
  assert_string_equal(text, "7.000000,7.000000,1,1.000000\n");
  free(text);
  fclose(f);
  free(h);
}

static void test_sim_hist_csv_reports_write_errors(void **state) {
  (void)state;
  sim_hist *h = hist_new();
  sim_hist_record(h, 1);
  FILE *f = fopen("/dev/null", "r"); /* a stream that cannot be written */
  assert_non_null(f);
  assert_int_equal(sim_hist_write_csv(h, f, "", 1), -1);
  fclose(f);
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_hist_small_values_are_exact),
      cmocka_unit_test(test_sim_hist_bucket_bounds_contain_value),
      cmocka_unit_test(test_sim_hist_quantiles_within_relative_error),
      cmocka_unit_test(test_sim_hist_quantile_clamps_to_min_and_max),
      cmocka_unit_test(test_sim_hist_negative_values_count_as_zero),
      cmocka_unit_test(test_sim_hist_empty_answers_zero_and_merges_as_nothing),
      cmocka_unit_test(test_sim_hist_merge_equals_recording_into_one),
      cmocka_unit_test(test_sim_hist_quantiles_minus_equal_the_rest_alone),
      cmocka_unit_test(test_sim_hist_clear_equals_init),
      cmocka_unit_test(test_sim_hist_csv_writes_a_row_per_bucket_in_scale),
      cmocka_unit_test(test_sim_hist_csv_reports_write_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
