/*
 * test_sim_series.c: the kernel's time series: columns and names, counters added at now in
 * the right bucket (boundaries included), gauges written through rows, rates divided at the
 * end, quantile columns (NaN where nothing was recorded), growth far past the first block,
 * and out-of-memory at each allocation (a chaos allocator) with nothing leaked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_series.h"
#include "tests/support/oom.h"

/* {==================================================================
 * Behaviour
 * =================================================================== */

#define SEC 1000000000LL

static double at(const sim_series *s, size_t b, int col) {
  return sim_series_values(s)[b * sim_series_n_columns(s) + (size_t)col];
}

static void test_sim_series_columns_get_indices_and_names_are_cut(void **state) {
  (void)state;
  sim_series *s = sim_series_create(SEC, NULL);
  assert_non_null(s);
  assert_int_equal(sim_series_n_columns(s), 0);
  assert_int_equal(sim_series_n_buckets(s), 0);
  assert_null(sim_series_values(s));
  char name[40];
  for (int i = 0; i < 40; i++) { /* past the first block of names */
    snprintf(name, sizeof name, "col_%d", i);
    assert_int_equal(sim_series_column_add(s, name, i % 2 == 0), i);
  }
  char longname[SIM_SERIES_NAME_MAX + 40];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  assert_int_equal(sim_series_column_add(s, longname, false), 40);
  assert_string_equal(sim_series_names(s)[7], "col_7");
  assert_int_equal(strlen(sim_series_names(s)[40]), SIM_SERIES_NAME_MAX - 1);
  assert_int_equal(sim_series_bucket_ns(s), SEC);
  sim_series_destroy(s);
  sim_series_destroy(NULL);
}

/* Counters land in the bucket of now: a value at exactly b * bucket_ns is in row b. Rates
 * read per second at the end; other columns stay as written. */
static void test_sim_series_adds_land_in_bucket_of_now_and_rates_are_per_second(void **state) {
  (void)state;
  sim_series *s = sim_series_create(SEC / 2, NULL);
  int rate = sim_series_column_add(s, "rps", true);
  int count = sim_series_column_add(s, "n", false);
  assert_int_equal(sim_series_add(s, 0, rate, 1), 0);
  assert_int_equal(sim_series_add(s, SEC / 2 - 1, rate, 1), 0);
  assert_int_equal(sim_series_add(s, SEC / 2, rate, 1), 0);
  assert_int_equal(sim_series_add(s, SEC / 2, count, 3), 0);
  /* A time before the cached bucket still lands in its own row, not the cached one. */
  assert_int_equal(sim_series_add(s, SEC / 4, count, 5), 0);
  assert_int_equal(sim_series_n_buckets(s), 2);
  double *row = sim_series_row(s, 4); /* a gauge, past the counters */
  assert_non_null(row);
  row[count] = 7;
  assert_int_equal(sim_series_n_buckets(s), 5);
  assert_int_equal(sim_series_finish(s), 0);
  assert_true(at(s, 0, rate) == 4.0); /* 2 in half a second */
  assert_true(at(s, 1, rate) == 2.0);
  assert_true(at(s, 1, count) == 3.0);
  assert_true(at(s, 0, count) == 5.0);
  assert_true(at(s, 2, rate) == 0.0);
  assert_true(at(s, 4, count) == 7.0);
  sim_series_destroy(s);
}

/* Rows grow by doubling far beyond the first block, keeping what was written. */
static void test_sim_series_rows_grow_and_keep_what_was_written(void **state) {
  (void)state;
  sim_series *s = sim_series_create(10, NULL);
  int c = sim_series_column_add(s, "n", false);
  for (int64_t t = 0; t < 100000; t += 7)
    assert_int_equal(sim_series_add(s, t, c, 1), 0);
  assert_int_equal(sim_series_n_buckets(s), 10000);
  double total = 0;
  for (size_t b = 0; b < 10000; b++)
    total += at(s, b, c);
  assert_true(total == (double)((100000 + 6) / 7));
  sim_series_destroy(s);
}

/* Quantile columns hold the quantiles of each bucket's values, NaN where none was recorded;
 * the last bucket is written by the flush (or finish). */
static void test_sim_series_quantiles_per_bucket_nan_where_empty(void **state) {
  (void)state;
  sim_series *s = sim_series_create(SEC, NULL);
  int n = sim_series_column_add(s, "n", false);
  int p50 = sim_series_quantile_add(s, "p50_ms", 0.5, 1e6);
  int p100 = sim_series_quantile_add(s, "max_ms", 1.0, 1e6);
  for (int i = 1; i <= 99; i++)
    assert_int_equal(sim_series_record(s, SEC / 10, (int64_t)i * 1000000), 0);
  assert_int_equal(sim_series_add(s, 3 * SEC, n, 1), 0); /* buckets 1 and 2 stay empty */
  assert_int_equal(sim_series_record(s, 3 * SEC, 5000000), 0);
  assert_int_equal(sim_series_finish(s), 0);
  assert_int_equal(sim_series_n_buckets(s), 4);
  assert_true(fabs(at(s, 0, p50) - 50.0) <= 50.0 / 256);
  assert_true(at(s, 0, p100) == 99.0);
  assert_true(isnan(at(s, 1, p50)) && isnan(at(s, 2, p100)));
  assert_true(at(s, 1, n) == 0.0);
  assert_true(at(s, 3, p100) == 5.0);
  sim_series_destroy(s);
}

/* Every allocation may fail: creation returns NULL, a column RETRY_ENOMEM, a row NULL, a
 * counter or a flush RETRY_ENOMEM; the series stays usable and nothing leaks. */
static void test_sim_series_allocation_failures_leave_it_usable(void **state) {
  (void)state;
  long fail = 0;
  for (;; fail++) {
    test_oom c;
    retry_allocator a = test_oom_allocator(&c, fail);
    sim_series *s = sim_series_create(SEC, &a);
    bool failed = s == NULL;
    if (s != NULL) {
      char name[16];
      int cols = 0;
      for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "c%d", i);
        int col = i == 19 ? sim_series_quantile_add(s, name, 0.5, 1)
                          : sim_series_column_add(s, name, i % 3 == 0);
        if (col < 0) {
          assert_int_equal(col, RETRY_ENOMEM);
          failed = true;
          continue;
        }
        assert_int_equal(col, cols++);
      }
      assert_int_equal(sim_series_n_columns(s), (size_t)cols);
      for (int64_t t = 0; t < 200 * SEC; t += SEC / 3) {
        if (cols > 0 && sim_series_add(s, t, 0, 1) != 0) failed = true;
        if (sim_series_record(s, t, t) != 0) failed = true;
      }
      if (sim_series_row(s, 500) == NULL) failed = true;
      if (sim_series_finish(s) != 0) failed = true;
      sim_series_destroy(s);
    }
    assert_int_equal(c.live, 0);
    if (!failed) break;
  }
  assert_true(fail >= 4); /* the series, names, kinds, rows (and their growth) */
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_series_columns_get_indices_and_names_are_cut),
      cmocka_unit_test(test_sim_series_adds_land_in_bucket_of_now_and_rates_are_per_second),
      cmocka_unit_test(test_sim_series_rows_grow_and_keep_what_was_written),
      cmocka_unit_test(test_sim_series_quantiles_per_bucket_nan_where_empty),
      cmocka_unit_test(test_sim_series_allocation_failures_leave_it_usable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
