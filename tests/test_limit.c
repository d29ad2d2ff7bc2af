/*
 * test_limit.c: Netflix concurrency-limits' AIMD, Vegas and Gradient2 limits and the simple
 * limiter, rule by rule. Where the library has unit tests (AIMDLimitTest, VegasLimitTest,
 * ExpAvgMeasurementTest, Log10RootIntFunctionTest; read at commit 78a74b9) each is reproduced
 * under its own name with its numbers; the library has no Gradient2LimitTest, so Gradient2's
 * numbers are worked out here from Gradient2Limit._update and said so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "retry/retry.h"
#include "retry/retry_limit.h"

#define MS RETRY_NS_PER_MS
#define S RETRY_NS_PER_S

static retry_limit make(retry_limit_kind kind, int32_t initial) {
  retry_limit_config c;
  retry_limit_config_init(&c, kind);
  c.initial_limit = initial;
  retry_limit l;
  retry_limit_init(&l, &c, 0.0);
  return l;
}

/* {==================================================================
 * AIMD (AIMDLimitTest)
 * =================================================================== */

static void test_aimd_default(void **state) {
  (void)state;
  retry_limit l = make(RETRY_LIMIT_AIMD, 10); /* below min 20: kept, as the Java keeps it */
  assert_int_equal(l.limit, 10);
}

static void test_aimd_increase_on_success(void **state) {
  (void)state;
  retry_limit l = make(RETRY_LIMIT_AIMD, 20);
  assert_int_equal(retry_limit_on_sample(&l, 1 * MS, 10, false, 0), 21);
}

static void test_aimd_decrease_on_drops(void **state) {
  (void)state;
  retry_limit l = make(RETRY_LIMIT_AIMD, 30);
  assert_int_equal(retry_limit_on_sample(&l, 0, 0, true, 0), 27);
}

static void test_aimd_success_overflow(void **state) {
  (void)state;
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_AIMD);
  c.initial_limit = 21;
  c.max_limit = 21;
  c.min_limit = 0;
  retry_limit l;
  retry_limit_init(&l, &c, 0);
  assert_int_equal(retry_limit_on_sample(&l, 1 * MS, 10, false, 0), 21);
}

/* The rules the tests do not reach: no growth below half the limit in flight, an RTT above
 * the 5 s timeout is a drop, the floor of min_limit. */
static void test_aimd_grows_only_near_the_limit_and_times_out_as_a_drop(void **state) {
  (void)state;
  retry_limit l = make(RETRY_LIMIT_AIMD, 40);
  assert_int_equal(retry_limit_on_sample(&l, MS, 19, false, 0), 40);
  assert_int_equal(retry_limit_on_sample(&l, MS, 20, false, 0), 41);
  assert_int_equal(retry_limit_on_sample(&l, 5 * S, 40, false, 0), 42); /* not above */
  assert_int_equal(retry_limit_on_sample(&l, 5 * S + 1, 40, false, 0), 37);
  for (int i = 0; i < 20; i++)
    retry_limit_on_sample(&l, 0, 0, true, 0);
  assert_int_equal(l.limit, 20);
}

/* }================================================================== */

/* {==================================================================
 * Vegas (VegasLimitTest)
 * =================================================================== */

/* VegasLimitTest.create(): alpha 3, beta 6, smoothing 1, initial 10, max 20. */
static retry_limit vegas_create(void) {
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_VEGAS);
  c.alpha = 3;
  c.beta = 6;
  c.smoothing = 1.0;
  c.initial_limit = 10;
  c.max_limit = 20;
  retry_limit l;
  retry_limit_init(&l, &c, 0.0);
  return l;
}

static void test_vegas_large_limit_increase(void **state) {
  (void)state;
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_VEGAS);
  c.initial_limit = 10000;
  c.max_limit = 20000;
  retry_limit l;
  retry_limit_init(&l, &c, 0.0);
  assert_int_equal(retry_limit_on_sample(&l, 10 * S, 5000, false, 0), 10000);
  assert_int_equal(retry_limit_on_sample(&l, 10 * S, 6000, false, 0), 10024);
}

static void test_vegas_increase_limit(void **state) {
  (void)state;
  retry_limit l = vegas_create();
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 10, false, 0), 10);
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 11, false, 0), 16);
}

static void test_vegas_decrease_limit(void **state) {
  (void)state;
  retry_limit l = vegas_create();
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 10, false, 0), 10);
  assert_int_equal(retry_limit_on_sample(&l, 50 * MS, 11, false, 0), 9);
}

static void test_vegas_no_change_if_within_thresholds(void **state) {
  (void)state;
  retry_limit l = vegas_create();
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 10, false, 0), 10);
  assert_int_equal(retry_limit_on_sample(&l, 14 * MS, 14, false, 0), 10);
}

/* decreaseSmoothing and decreaseWithoutSmoothing use decreaseFunction(current / 2), which
 * this engine does not take (its decrease is the library's default, limit - log10root). The
 * same two sequences with the default decrease: 100 -> 98 (log10root(100) = 2) -> 97
 * (log10root(98) = 1) without smoothing, and with smoothing 0.5: 100 -> 99 -> 98 (98.5). */
static void test_vegas_decrease_smoothing_with_default_decrease(void **state) {
  (void)state;
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_VEGAS);
  c.initial_limit = 100;
  c.max_limit = 200;
  retry_limit l;
  retry_limit_init(&l, &c, 0.0);
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 100, false, 0), 100);
  assert_int_equal(retry_limit_on_sample(&l, 20 * MS, 100, false, 0), 98);
  assert_int_equal(retry_limit_on_sample(&l, 20 * MS, 100, false, 0), 97);
  c.smoothing = 0.5;
  retry_limit_init(&l, &c, 0.0);
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 100, false, 0), 100);
  assert_int_equal(retry_limit_on_sample(&l, 20 * MS, 100, false, 0), 99);
  assert_int_equal(retry_limit_on_sample(&l, 20 * MS, 100, false, 0), 98);
}

/* shouldProbe: after jitter x probe_multiplier x limit samples (jitter 0.5 + 0.5 u) the
 * sample becomes the new no-load RTT, even when it is larger. With u = 0: 0.5 x 30 x 10 = 150
 * samples. */
static void test_vegas_probes_a_new_noload_rtt(void **state) {
  (void)state;
  retry_limit l = vegas_create();
  retry_limit_on_sample(&l, 10 * MS, 1, false, 0);
  for (int i = 2; i < 150; i++)
    retry_limit_on_sample(&l, 12 * MS, 1, false, 0); /* app-limited: nothing moves */
  assert_int_equal(l.rtt_noload_ns, 10 * MS);
  retry_limit_on_sample(&l, 12 * MS, 1, false, 0.5);
  assert_int_equal(l.rtt_noload_ns, 12 * MS);
  assert_true(fabs(l.probe_jitter - 0.75) < 1e-12);
}

/* A drop decreases whatever the queue (didDrop first), even below half the limit in flight. */
static void test_vegas_drop_decreases(void **state) {
  (void)state;
  retry_limit l = vegas_create();
  retry_limit_on_sample(&l, 10 * MS, 10, false, 0);
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 1, true, 0), 9);
}

/* Log10RootIntFunctionTest: 1 up to 99 (0 included), 2 from 100, 3 from 1000. */
static void test_log10_root_int_function(void **state) {
  (void)state;
  assert_int_equal(retry_limit_log10root(0), 1);
  assert_int_equal(retry_limit_log10root(1), 1);
  assert_int_equal(retry_limit_log10root(99), 1);
  assert_int_equal(retry_limit_log10root(100), 2);
  assert_int_equal(retry_limit_log10root(999), 2);
  assert_int_equal(retry_limit_log10root(1000), 3);
  assert_int_equal(retry_limit_log10root(10000), 4);
}

/* }================================================================== */

/* {==================================================================
 * Gradient2 (no upstream test: the numbers follow Gradient2Limit._update by hand)
 * =================================================================== */

/* ExpAvgMeasurementTest.testWarmup with window 600 (Gradient2's): the warm-up is the plain
 * average (10, 10.5, ..., 14.5 for samples 10..19). The upstream test's window is 100, giving
 * 16.2 after a sample of 100; with 600 the factor is 2/601: 14.5 x (1 - f) + 100 f = 14.7845. */
static void test_gradient2_long_rtt_warms_up_as_an_average(void **state) {
  (void)state;
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_GRADIENT2);
  c.min_limit = 0;
  retry_limit l;
  retry_limit_init(&l, &c, 0);
  for (int i = 0; i < 10; i++) {
    retry_limit_on_sample(&l, (10 + i), 0, false, 0);
    assert_true(fabs(l.long_rtt_ns - (10.0 + 0.5 * i)) < 1e-9);
  }
  retry_limit_on_sample(&l, 100, 0, false, 0);
  assert_true(fabs(l.long_rtt_ns - (14.5 * (1 - 2.0 / 601) + 100 * 2.0 / 601)) < 1e-9);
  /* The upstream window of 100: 16.2 within 0.1. */
  c.long_window = 100;
  retry_limit_init(&l, &c, 0);
  for (int i = 0; i < 10; i++)
    retry_limit_on_sample(&l, (10 + i), 0, false, 0);
  retry_limit_on_sample(&l, 100, 0, false, 0);
  assert_true(fabs(l.long_rtt_ns - 16.2) < 0.1);
}

/* Steady latency: gradient 1, new = 20 + 4, smoothed 0.8 x 20 + 0.2 x 24 = 20.8 (limit 20),
 * then 0.8 x 20.8 + 0.2 x 24.8 = 21.6 (21). */
static void test_gradient2_grows_by_queue_size_when_latency_is_steady(void **state) {
  (void)state;
  retry_limit l = make(RETRY_LIMIT_GRADIENT2, 20);
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 20, false, 0), 20);
  assert_true(fabs(l.estimated - 20.8) < 1e-9);
  assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 20, false, 0), 21);
  assert_true(fabs(l.estimated - 21.6) < 1e-9);
}

/* Latency four times the long average: the gradient is clamped at 0.5 (1.5 x 10 / 40 would
 * be 0.375), new = 100 x 0.5 + 4 = 54, smoothed 0.8 x 100 + 0.2 x 54 = 90.8. A drop changes
 * nothing by itself. */
static void test_gradient2_shrinks_at_most_by_half_a_sample(void **state) {
  (void)state;
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_GRADIENT2);
  c.initial_limit = 100;
  retry_limit l;
  retry_limit_init(&l, &c, 0);
  /* Ten warm-up samples of 10 ms with 40 in flight (app-limited: below 50) set long = 10. */
  for (int i = 0; i < 10; i++)
    assert_int_equal(retry_limit_on_sample(&l, 10 * MS, 40, false, 0), 100);
  double longr = 10.0 * MS * (1 - 2.0 / 601) + 40.0 * MS * 2.0 / 601;
  assert_int_equal(retry_limit_on_sample(&l, 40 * MS, 100, false, 0), 90);
  assert_true(fabs(l.long_rtt_ns - longr) < 1e-6);
  assert_true(fabs(l.estimated - 90.8) < 1e-9);
  /* Tolerance: an RTT 1.5 x the long average still counts as no queueing (gradient 1). */
  retry_limit_init(&l, &c, 0);
  for (int i = 0; i < 10; i++)
    retry_limit_on_sample(&l, 10 * MS, 40, false, 0);
  retry_limit_on_sample(&l, 15 * MS, 100, true, 0);
  assert_true(l.estimated > 100.0);
}

/* A long RTT more than twice the sample decays by 5 % (recovery after a long overload). */
static void test_gradient2_long_rtt_decays_when_latency_falls(void **state) {
  (void)state;
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_GRADIENT2);
  retry_limit l;
  retry_limit_init(&l, &c, 0);
  for (int i = 0; i < 10; i++)
    retry_limit_on_sample(&l, 100 * MS, 0, false, 0);
  retry_limit_on_sample(&l, 10 * MS, 0, false, 0);
  double f = 2.0 / 601;
  double want = (100.0 * MS * (1 - f) + 10.0 * MS * f) * 0.95;
  assert_true(fabs(l.long_rtt_ns - want) < 1e-6);
}

/* }================================================================== */

/* {==================================================================
 * The limiter (SimpleLimiter, AbstractLimiter's listener)
 * =================================================================== */

static void test_limiter_rejects_at_the_limit_and_samples_on_release(void **state) {
  (void)state;
  retry_limit_config c;
  retry_limit_config_init(&c, RETRY_LIMIT_AIMD);
  c.initial_limit = 2;
  c.min_limit = 1;
  retry_limit l;
  retry_limit_init(&l, &c, 0);
  assert_true(retry_limit_try_acquire(&l));
  assert_true(retry_limit_try_acquire(&l));
  assert_false(retry_limit_try_acquire(&l));
  assert_int_equal(l.in_flight, 2);
  /* onIgnore: no sample. */
  retry_limit_release(&l, false, 5 * MS, 2, false, 0);
  assert_int_equal(l.limit, 2);
  /* onSuccess with 2 in flight at its start: 2 x 2 >= 2, +1. */
  retry_limit_release(&l, true, 5 * MS, 2, false, 0);
  assert_int_equal(l.limit, 3);
  assert_int_equal(l.in_flight, 0);
}

static void test_limit_config_check_names_the_field(void **state) {
  (void)state;
  retry_limit_config c;
  const char *f = NULL;
  retry_limit_config_init(&c, RETRY_LIMIT_AIMD);
  assert_int_equal(retry_limit_config_check(&c, &f), 0);
  assert_null(f);
  c.backoff_ratio = 1.0;
  assert_int_equal(retry_limit_config_check(&c, &f), RETRY_ECONFIG);
  assert_string_equal(f, "backoff_ratio");
  retry_limit_config_init(&c, RETRY_LIMIT_GRADIENT2);
  c.rtt_tolerance = 0.9;
  assert_int_equal(retry_limit_config_check(&c, &f), RETRY_ECONFIG);
  assert_string_equal(f, "rtt_tolerance");
  retry_limit_config_init(&c, RETRY_LIMIT_VEGAS);
  c.min_limit = 2000;
  assert_int_equal(retry_limit_config_check(&c, &f), RETRY_ECONFIG);
  assert_string_equal(f, "min_limit");
  assert_string_equal(retry_limit_kind_name(RETRY_LIMIT_GRADIENT2), "gradient2");
  /* BlockingLimiter: off by default, and then waiting without bound (wrap(delegate)). */
  retry_limit_config_init(&c, RETRY_LIMIT_AIMD);
  assert_false(c.blocking);
  assert_true(c.block_timeout_ns == INT64_MAX);
  c.blocking = true;
  c.block_timeout_ns = 0;
  assert_int_equal(retry_limit_config_check(&c, &f), RETRY_ECONFIG);
  assert_string_equal(f, "block_timeout_ns");
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aimd_default),
      cmocka_unit_test(test_aimd_increase_on_success),
      cmocka_unit_test(test_aimd_decrease_on_drops),
      cmocka_unit_test(test_aimd_success_overflow),
      cmocka_unit_test(test_aimd_grows_only_near_the_limit_and_times_out_as_a_drop),
      cmocka_unit_test(test_vegas_large_limit_increase),
      cmocka_unit_test(test_vegas_increase_limit),
      cmocka_unit_test(test_vegas_decrease_limit),
      cmocka_unit_test(test_vegas_no_change_if_within_thresholds),
      cmocka_unit_test(test_vegas_decrease_smoothing_with_default_decrease),
      cmocka_unit_test(test_vegas_probes_a_new_noload_rtt),
      cmocka_unit_test(test_vegas_drop_decreases),
      cmocka_unit_test(test_log10_root_int_function),
      cmocka_unit_test(test_gradient2_long_rtt_warms_up_as_an_average),
      cmocka_unit_test(test_gradient2_grows_by_queue_size_when_latency_is_steady),
      cmocka_unit_test(test_gradient2_shrinks_at_most_by_half_a_sample),
      cmocka_unit_test(test_gradient2_long_rtt_decays_when_latency_falls),
      cmocka_unit_test(test_limiter_rejects_at_the_limit_and_samples_on_release),
      cmocka_unit_test(test_limit_config_check_names_the_field),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
