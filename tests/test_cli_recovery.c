/*
 * test_cli_recovery.c: the judgement of recovery after a trigger, on hand-made series: the
 * baseline, the hold span, a trigger that never ends or never starts, nothing offered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "cli/cli_recovery.h"

/* {==================================================================
 * Recovery after a trigger
 * =================================================================== */

/* A series of n one-second buckets: offered 100/s throughout, goodput from good[] (NaN-free),
 * interleaved as the world stores them (stride 2: offered, goodput). */
static void series(double *v, const double *good, size_t n) {
  for (size_t b = 0; b < n; b++) {
    v[2 * b] = 100;
    v[2 * b + 1] = good[b];
  }
}

static const cli_recovery_cfg rcfg = {.threshold = 0.9, .hold_ns = 3000000000, .warmup_ns = -1};
#define S 1000000000LL

static void test_cli_recovery_counts_from_the_trigger_end_to_a_held_healthy_span(void **state) {
  (void)state;
  /* 20 s: healthy 98/s, trigger [6 s, 9 s), bad until 11 s, then healthy. */
  double good[20], v[40];
  for (int b = 0; b < 20; b++)
    good[b] = (b >= 6 && b < 11) ? 20 : 98;
  series(v, good, 20);
  cli_recovery r;
  cli_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.has_trigger && r.recovered);
  /* Baseline: buckets 3..5 (warm-up is half of the 6 s before the trigger). */
  assert_true(fabs(r.baseline_ratio - 0.98) < 1e-12);
  assert_true(r.trigger_start_s == 6 && r.trigger_end_s == 9);
  /* Buckets 9 and 10 are bad; 11, 12, 13 healthy: recovered 2 s after the end. */
  assert_true(r.recovery_s == 2.0);
  assert_true(fabs(r.final_ratio - 0.98) < 1e-12);
  /* One bad bucket inside the hold span restarts it. */
  good[12] = 50;
  series(v, good, 20);
  cli_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.recovered && r.recovery_s == 4.0);
}

static void test_cli_recovery_not_judged_without_a_trigger_nor_held_health(void **state) {
  (void)state;
  double good[20], v[40];
  for (int b = 0; b < 20; b++)
    good[b] = b < 6 ? 98 : 30;
  series(v, good, 20);
  cli_recovery r;
  /* Stays down: never recovered, recovery_s NaN, the final ratio tells how far down. */
  cli_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.has_trigger && !r.recovered && isnan(r.recovery_s));
  assert_true(fabs(r.final_ratio - 0.3) < 1e-12);
  /* Healthy only in the last 2 s: a hold span cut by the end of the duration does not count. */
  good[18] = good[19] = 98;
  series(v, good, 20);
  cli_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_false(r.recovered);
  /* A trigger that lasts past the duration (or no fault at all): nothing to judge. */
  cli_recovery_judge(&rcfg, 20 * S, S, 6 * S, 20 * S, v, v + 1, 2, 20, &r);
  assert_false(r.has_trigger);
  cli_recovery_judge(&rcfg, 20 * S, S, INT64_MAX, INT64_MIN, v, v + 1, 2, 20, &r);
  assert_false(r.has_trigger);
  /* A trigger at time 0 has no history: the baseline is 1. */
  for (int b = 0; b < 20; b++)
    good[b] = 95;
  series(v, good, 20);
  cli_recovery_judge(&rcfg, 20 * S, S, 0, 2 * S, v, v + 1, 2, 20, &r);
  assert_true(r.baseline_ratio == 1.0 && r.recovered && r.recovery_s == 0.0);
  /* Nothing offered after the trigger (stuck closed-loop users) is never healthy. */
  for (int b = 9; b < 20; b++)
    v[2 * b] = v[2 * b + 1] = 0;
  cli_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_false(r.recovered);
  assert_true(isnan(r.final_ratio));
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cli_recovery_counts_from_the_trigger_end_to_a_held_healthy_span),
      cmocka_unit_test(test_cli_recovery_not_judged_without_a_trigger_nor_held_health),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
