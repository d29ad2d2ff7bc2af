/*
 * test_model_hpa.c: the Horizontal Pod Autoscaler's decision core (models/model_hpa.c) on its
 * own: the replica calculator against rows of Kubernetes' replica_calculator_test.go (restated
 * here as sums of busy ratios), the tolerance band, the stabilization windows (the scale-down
 * window takes the highest recommendation, the legacy one counts its cutoff in), the default
 * scale-up rate max(4 pods, 100 %) per 15 s and the docs' scale-down example, min/max, a count
 * set by hand, and the test: a constant load settles at ceil(load / target) replicas
 * within the tolerance once the stabilization window has passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_hpa.h"
#include "tests/support/oom.h"

#define S INT64_C(1000000000)

static model_hpa_sample ready(int32_t n, double busy) {
  return (model_hpa_sample){.n_ready = n, .busy_sum = busy};
}

/* One sync with n ready replicas busy busy replicas' worth in all. */
static int32_t sync_ready(model_hpa *h, int32_t n, double busy, int64_t t) {
  model_hpa_sample s = ready(n, busy);
  return model_hpa_sync(h, &s, t);
}

/* {==================================================================
 * The replica calculator
 * =================================================================== */

/* Rows of replica_calculator_test.go (one CPU request per pod, so a pod's busy ratio is its
 * milli-CPU over 1000); failed and deleted pods are absent from a sample, so they are left out. */
static void test_model_hpa_calculator_rows_from_kubernetes(void **state) {
  (void)state;
  struct row {
    const char *name;
    int32_t current, target_pct, n_ready, n_unready, want, want_util;
    double busy;
  } rows[] = {
      /* TestReplicaCalcScaleUp: 300, 500, 700 at 30 % -> 50 %, 5 replicas. */
      {"ScaleUp", 3, 30, 3, 0, 5, 50, 1.5},
      /* ScaleUpUnreadyLessScale: the unready pod counts 0 % on the way up: 40 % -> 4. */
      {"ScaleUpUnreadyLessScale", 3, 30, 2, 1, 4, 60, 1.2},
      /* ScaleUpUnreadyNoScale: 400 ready, two unready: the re-run says 13 %, down: keep 3. */
      {"ScaleUpUnreadyNoScale", 3, 30, 1, 2, 3, 40, 0.4},
      /* ScaleUpIgnoresFailedPods: 500, 700 of 2 -> 4. */
      {"ScaleUpIgnoresFailedPods", 2, 30, 2, 0, 4, 60, 1.2},
      /* ScaleDown: 100, 300, 500, 250, 250 at 50 % -> 28 %, 3. */
      {"ScaleDown", 5, 50, 5, 0, 3, 28, 1.4},
      /* ScaleDownIncludeUnreadyPods: unready pods are ignored going down: 30 % of 3 -> 2. */
      {"ScaleDownIncludeUnreadyPods", 5, 50, 3, 2, 2, 30, 0.9},
      /* ScaleDownExcludeUnscheduledPods: one running pod at 10 % -> 1. */
      {"ScaleDownExcludeUnscheduledPods", 5, 50, 1, 4, 1, 10, 0.1},
      /* Tolerance: 3060 of 3000 requested at a 100 % target: 102 %, within 10 %: keep 3. */
      {"Tolerance", 3, 100, 3, 0, 3, 102, 3.06},
  };
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cfg.target_pct = rows[i].target_pct;
    model_hpa_sample s = {
        .n_ready = rows[i].n_ready, .n_unready = rows[i].n_unready, .busy_sum = rows[i].busy};
    int32_t util;
    int32_t got = model_hpa_recommend(&cfg, rows[i].current, &s, &util);
    if (got != rows[i].want || util != rows[i].want_util)
      fail_msg("%s: got %d replicas at %d %%, want %d at %d %%", rows[i].name, (int)got, (int)util,
               (int)rows[i].want, (int)rows[i].want_util);
  }
}

/* The docs' rule: no change while the ratio is within 10 % of 1, inclusive at both edges; the
 * formula ceil(current x ratio) outside it (200m of 100m doubles, 50m halves). */
static void test_model_hpa_calculator_tolerance_band(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 50;
  model_hpa_sample s;
  s = ready(10, 10 * 0.55); /* 110 %: the upper edge */
  assert_int_equal(model_hpa_recommend(&cfg, 10, &s, NULL), 10);
  s = ready(10, 10 * 0.56); /* 112 % */
  assert_int_equal(model_hpa_recommend(&cfg, 10, &s, NULL), 12);
  s = ready(10, 10 * 0.45); /* 90 %: the lower edge */
  assert_int_equal(model_hpa_recommend(&cfg, 10, &s, NULL), 10);
  s = ready(10, 10 * 0.44); /* 88 % */
  assert_int_equal(model_hpa_recommend(&cfg, 10, &s, NULL), 9);
  s = ready(4, 4 * 1.0); /* twice the target doubles */
  assert_int_equal(model_hpa_recommend(&cfg, 4, &s, NULL), 8);
  s = ready(4, 4 * 0.25); /* half the target halves */
  assert_int_equal(model_hpa_recommend(&cfg, 4, &s, NULL), 2);
  /* Per-direction tolerances (behavior.scaleUp.tolerance in newer releases). */
  cfg.tolerance_up = 0.0;
  s = ready(10, 10 * 0.53); /* 106 % now scales up */
  assert_int_equal(model_hpa_recommend(&cfg, 10, &s, NULL), 11);
  s = ready(10, 10 * 0.46); /* the down side still holds at 92 % */
  assert_int_equal(model_hpa_recommend(&cfg, 10, &s, NULL), 10);
}

/* Missing measurements: 0 % on the way up, max(100 %, target) on the way down, and a re-run
 * that flips the direction keeps the count. No ready measurement: no decision. */
static void test_model_hpa_calculator_missing_and_no_metrics(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 50;
  /* Up: 2 ready at 100 % (ratio 2), 2 missing at 0 %: 50 % over 4 is exactly the target. */
  model_hpa_sample s = {.n_ready = 2, .n_missing = 2, .busy_sum = 2.0};
  assert_int_equal(model_hpa_recommend(&cfg, 4, &s, NULL), 4);
  /* Up: 2 ready at 100 %, 1 missing: 66 % of 3 -> ceil(1.32 x 3) = 4. */
  s = (model_hpa_sample){.n_ready = 2, .n_missing = 1, .busy_sum = 2.0};
  assert_int_equal(model_hpa_recommend(&cfg, 3, &s, NULL), 4);
  /* Down: 3 ready at 10 %, 1 missing counted at 100 %: 32 % of 4 -> ceil(0.64 x 4) = 3. */
  s = (model_hpa_sample){.n_ready = 3, .n_missing = 1, .busy_sum = 0.3};
  assert_int_equal(model_hpa_recommend(&cfg, 4, &s, NULL), 3);
  /* Down, but the missing replica lifts the average over the target: keep the count. */
  s = (model_hpa_sample){.n_ready = 1, .n_missing = 3, .busy_sum = 0.2};
  assert_int_equal(model_hpa_recommend(&cfg, 4, &s, NULL), 4);
  int32_t util = 7;
  s = (model_hpa_sample){.n_ready = 0, .n_unready = 3};
  assert_int_equal(model_hpa_recommend(&cfg, 3, &s, &util), 3);
  assert_int_equal(util, -1);
}

/* }================================================================== */

/* {==================================================================
 * The controller over time
 * =================================================================== */

/* A service of `replicas` replicas offered `load` replicas' worth of work: each replica is
 * busy min(1, load / replicas). */
static model_hpa_sample offered(int32_t replicas, double load) {
  double busy = load < (double)replicas ? load : (double)replicas;
  return ready(replicas, busy);
}

/* The test: under a constant load the count settles at ceil(load / target) within
 * the tolerance, from below (scale-up, no window) and from above (after the 300 s window),
 * and then never moves. Rows sweep the load so that the truncation to whole percent is hit. */
static void test_model_hpa_constant_load_settles(void **state) {
  (void)state;
  const double loads[] = {0.7, 3.0, 7.3, 11.9, 18.0, 24.5};
  const int32_t starts[] = {1, 2, 40};
  for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
    for (size_t j = 0; j < sizeof starts / sizeof starts[0]; j++) {
      model_hpa_cfg cfg;
      model_hpa_cfg_default(&cfg);
      cfg.target_pct = 50;
      cfg.max_replicas = 100;
      model_hpa *h = model_hpa_create(&cfg, starts[j], NULL, NULL);
      assert_non_null(h);
      int32_t settled_at = -1, n = starts[j];
      for (int64_t t = 0; t <= 1200 * S; t += cfg.sync_period_ns) {
        n = model_hpa_replicas(h);
        model_hpa_sample s = offered(n, loads[i]);
        int32_t next = model_hpa_sync(h, &s, t);
        if (next != n)
          settled_at = -1;
        else if (settled_at < 0)
          settled_at = (int32_t)(t / S);
        n = next;
      }
      model_hpa_destroy(h);
      int32_t ideal = (int32_t)ceil(loads[i] / 0.5);
      if (ideal < 1) ideal = 1;
      double ratio = loads[i] / ((double)n * 0.5);
      if (!(ratio >= 0.9 - 0.01 && ratio <= 1.1 + 0.01) && n != ideal)
        fail_msg("load %.1f from %d: settled at %d (ideal %d, ratio %.3f)", loads[i],
                 (int)starts[j], (int)n, (int)ideal, ratio);
      if (abs(n - ideal) > 1 + ideal / 10)
        fail_msg("load %.1f from %d: %d is too far from %d", loads[i], (int)starts[j], (int)n,
                 (int)ideal);
      /* Settled well before the end: within the window plus a few syncs. */
      if (settled_at < 0 || settled_at > 300 + 120)
        fail_msg("load %.1f from %d: not settled by 420 s (%d)", loads[i], (int)starts[j],
                 (int)settled_at);
    }
  }
}

/* The row the issue states, step by step: 7.3 replicas of load at a 50 % target from 2
 * replicas: 2 (saturated, ratio 2) -> 4 -> 8 -> 91 % of 8 -> 15, and 15 is within tolerance. */
static void test_model_hpa_constant_load_exact_path(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 50;
  cfg.max_replicas = 100;
  model_hpa *h = model_hpa_create(&cfg, 2, NULL, NULL);
  const int32_t path[] = {4, 8, 15, 15, 15};
  for (int k = 0; k < 5; k++) {
    int32_t n = model_hpa_replicas(h);
    model_hpa_sample s = offered(n, 7.3);
    assert_int_equal(model_hpa_sync(h, &s, k * 15 * S), path[k]);
  }
  assert_int_equal(model_hpa_get_stats(h)->last_util_pct, 48);
  model_hpa_destroy(h);
}

/* Scale-down waits for the window and takes the highest recommendation in it: from 20
 * replicas, recommendations 10 from t = 0 s, one of 14 at t = 105 s, then 5. The initial
 * recommendation (20, recorded at the first sync) leaves the window at 300 s, the 14 at 405 s.
 * The legacy path (no behavior) counts an entry exactly at its cutoff, one sync later. */
static void test_model_hpa_scale_down_waits_and_takes_max(void **state) {
  (void)state;
  for (int legacy = 0; legacy <= 1; legacy++) {
    model_hpa_cfg cfg;
    model_hpa_cfg_default(&cfg);
    cfg.target_pct = 50;
    cfg.max_replicas = 100;
    cfg.legacy = legacy;
    model_hpa *h = model_hpa_create(&cfg, 20, NULL, NULL);
    for (int64_t t = 0; t <= 450 * S; t += 15 * S) {
      int32_t n = model_hpa_replicas(h);
      /* busy_sum giving util u of n: raw = ceil(u / 50 x n) -> choose u per phase. */
      int32_t want_raw = t < 100 * S ? 10 : t < 115 * S ? 14 : 5;
      double util = 50.0 * (double)want_raw / (double)n - 0.5; /* just under: ceil lands on it */
      model_hpa_sample s = ready(n, (double)n * util / 100.0);
      int32_t got = model_hpa_sync(h, &s, t);
      int32_t want;
      int64_t shift = legacy ? 15 * S : 0;
      if (t < 300 * S + shift)
        want = 20;
      else if (t < 400 * S + shift)
        want = 14;
      else
        want = 5;
      if (got != want)
        fail_msg("legacy=%d t=%llds: %d replicas, want %d", legacy, (long long)(t / S), (int)got,
                 (int)want);
    }
    model_hpa_destroy(h);
  }
}

/* The default scale-up limit (behavior present): the larger of +4 pods and +100 % per 15 s,
 * counted from the count at the start of the period: 1 -> 5 -> 10 -> 20 -> 40. Syncing every
 * 5 s does not go faster: the event inside the period is subtracted. Legacy: max(2n, 4). */
static void test_model_hpa_scale_up_rate_default_policy(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 10; /* a saturated replica is at 10 x the target */
  cfg.max_replicas = 1000;
  model_hpa *h = model_hpa_create(&cfg, 1, NULL, NULL);
  const int32_t path[] = {5, 10, 20, 40, 80};
  for (int k = 0; k < 5; k++) {
    int32_t n = model_hpa_replicas(h);
    assert_int_equal(
        model_hpa_sync(h, &(model_hpa_sample){.n_ready = n, .busy_sum = n}, k * 15 * S), path[k]);
  }
  assert_int_equal(model_hpa_get_stats(h)->n_limited, 5);
  model_hpa_destroy(h);

  cfg.sync_period_ns = 5 * S;
  h = model_hpa_create(&cfg, 1, NULL, NULL);
  const int32_t fast[] = {5, 5, 5, 10, 10, 10, 20};
  for (int k = 0; k < 7; k++) {
    int32_t n = model_hpa_replicas(h);
    int32_t got = model_hpa_sync(h, &(model_hpa_sample){.n_ready = n, .busy_sum = n}, k * 5 * S);
    if (got != fast[k]) fail_msg("5 s syncs, t=%ds: %d, want %d", k * 5, (int)got, (int)fast[k]);
  }
  model_hpa_destroy(h);

  /* A percent policy alone rounds up, or a small count could never grow: 50 % of 1 is 2,
   * of 3 is 5 (ceil 4.5), then ceil(7.5) = 8. */
  cfg.sync_period_ns = 15 * S;
  cfg.up.n_policies = 1;
  cfg.up.policies[0] = (model_hpa_policy){MODEL_HPA_PERCENT, 50, 15 * S};
  const int32_t from[] = {1, 3, 5}, to[] = {2, 5, 8};
  for (int k = 0; k < 3; k++) {
    h = model_hpa_create(&cfg, from[k], NULL, NULL);
    assert_int_equal(sync_ready(h, from[k], from[k], 0), to[k]);
    model_hpa_destroy(h);
  }

  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 10;
  cfg.max_replicas = 1000;
  cfg.legacy = true;
  h = model_hpa_create(&cfg, 1, NULL, NULL);
  const int32_t legacy[] = {4, 8, 16, 32};
  for (int k = 0; k < 4; k++) {
    int32_t n = model_hpa_replicas(h);
    assert_int_equal(
        model_hpa_sync(h, &(model_hpa_sample){.n_ready = n, .busy_sum = n}, k * 15 * S), legacy[k]);
  }
  model_hpa_destroy(h);
}

/* The docs' scale-down example: policies {4 pods, 10 %} per 60 s with selectPolicy Max: above
 * 40 replicas the percent policy removes more, below it the pods policy; Min picks the
 * smaller change; Disabled never scales down. Window 0 to see the rate alone. */
static void test_model_hpa_scale_down_policies_select(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 50;
  cfg.max_replicas = 100;
  cfg.down.window_ns = 0;
  cfg.down.n_policies = 2;
  cfg.down.policies[0] = (model_hpa_policy){MODEL_HPA_PODS, 4, 60 * S};
  cfg.down.policies[1] = (model_hpa_policy){MODEL_HPA_PERCENT, 10, 60 * S};
  model_hpa_sample idle = ready(1, 0.01); /* recommends 1 whatever the count */
  struct {
    model_hpa_select sel;
    int32_t from, to;
  } rows[] = {
      {MODEL_HPA_SELECT_MAX, 80, 72}, /* 10 % of 80 = 8 > 4 */
      {MODEL_HPA_SELECT_MAX, 40, 36}, /* both remove 4 */
      {MODEL_HPA_SELECT_MAX, 30, 26}, /* 4 > 3 */
      {MODEL_HPA_SELECT_MIN, 80, 76}, /* the smaller change */
      {MODEL_HPA_SELECT_MIN, 30, 27}, {MODEL_HPA_SELECT_DISABLED, 80, 80},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cfg.down.select = rows[i].sel;
    model_hpa *h = model_hpa_create(&cfg, rows[i].from, NULL, NULL);
    idle.n_ready = rows[i].from;
    int32_t got = model_hpa_sync(h, &idle, 0);
    if (got != rows[i].to)
      fail_msg("select %d from %d: %d, want %d", (int)rows[i].sel, (int)rows[i].from, (int)got,
               (int)rows[i].to);
    /* Within the same 60 s nothing more goes; after it, the next step. */
    if (rows[i].sel == MODEL_HPA_SELECT_MAX && rows[i].from == 80) {
      idle.n_ready = got;
      assert_int_equal(model_hpa_sync(h, &idle, 15 * S), 72);
      assert_int_equal(model_hpa_sync(h, &idle, 45 * S), 72);
      /* At 60 s the event at 0 is not after the cutoff: the period restarts from 72. */
      assert_int_equal(model_hpa_sync(h, &idle, 60 * S), 64); /* trunc(72 x 0.9) */
      idle.n_ready = 64;
      assert_int_equal(model_hpa_sync(h, &idle, 75 * S), 64);
    }
    model_hpa_destroy(h);
  }
}

/* min/max: the calculator's count is clamped; a count set by hand outside the range is
 * brought back at the next sync at once (no window); 0 by hand switches autoscaling off. */
static void test_model_hpa_min_max_and_by_hand(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 50;
  cfg.min_replicas = 3;
  cfg.max_replicas = 6;
  model_hpa *h = model_hpa_create(&cfg, 4, NULL, NULL);
  assert_int_equal(model_hpa_sync(h, &(model_hpa_sample){.n_ready = 4, .busy_sum = 4}, 0), 6);
  model_hpa_set_replicas(h, 20); /* an operator's action */
  assert_int_equal(model_hpa_replicas(h), 20);
  assert_int_equal(model_hpa_sync(h, &(model_hpa_sample){.n_ready = 20, .busy_sum = 20}, 15 * S),
                   6);
  model_hpa_set_replicas(h, 1);
  assert_int_equal(model_hpa_sync(h, &(model_hpa_sample){.n_ready = 1, .busy_sum = 0}, 30 * S), 3);
  /* Far below the target, after the window: never under min. */
  for (int64_t t = 45 * S; t <= 400 * S; t += 15 * S)
    model_hpa_sync(h, &(model_hpa_sample){.n_ready = 3, .busy_sum = 0.03}, t);
  assert_int_equal(model_hpa_replicas(h), 3);
  model_hpa_set_replicas(h, 0);
  assert_int_equal(model_hpa_sync(h, &(model_hpa_sample){0}, 415 * S), 0);
  assert_int_equal(model_hpa_get_stats(h)->n_no_metrics, 0);
  model_hpa_destroy(h);
}

/* A sync without a ready measurement decides nothing (Kubernetes returns an error) and records
 * no recommendation; a scale-up window takes the lowest recommendation in it. */
static void test_model_hpa_no_metrics_and_scale_up_window(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 50;
  cfg.max_replicas = 100;
  cfg.up.window_ns = 60 * S;
  model_hpa *h = model_hpa_create(&cfg, 4, NULL, NULL);
  assert_int_equal(model_hpa_sync(h, &(model_hpa_sample){.n_unready = 4}, 0), 4);
  assert_int_equal(model_hpa_get_stats(h)->n_no_metrics, 1);
  /* Recommendations 8 (t=15), 6 (t=30), 8 after: the up window keeps the lowest, 6... */
  assert_int_equal(sync_ready(h, 4, 4 * 1.0, 15 * S), 4); /* min(4 initial, 8) */
  assert_int_equal(sync_ready(h, 4, 4 * 0.75, 30 * S), 4);
  /* ...until the initial 4 leaves the 60 s window (at t = 60 s: 0 is not after the cutoff). */
  assert_int_equal(sync_ready(h, 4, 4 * 1.0, 45 * S), 4);
  assert_int_equal(sync_ready(h, 4, 4 * 1.0, 60 * S), 6);
  model_hpa_destroy(h);
}

/* }================================================================== */

/* {==================================================================
 * Configuration and memory
 * =================================================================== */

static void test_model_hpa_config_errors_and_oom(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  retry_error err;
  retry_error_clear(&err);
  cfg.max_replicas = 0;
  assert_null(model_hpa_create(&cfg, 1, NULL, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, "hpa.max_replicas");
  model_hpa_cfg_default(&cfg);
  cfg.up.policies[1].period_ns = 0;
  retry_error_clear(&err);
  assert_int_equal(model_hpa_cfg_check(&cfg, &err), RETRY_ECONFIG);
  assert_string_equal(err.path, "hpa.behavior.scaleUp");
  model_hpa_cfg_default(&cfg);
  for (long k = 0;; k++) {
    test_oom c;
    retry_allocator a = test_oom_allocator(&c, k);
    retry_error_clear(&err);
    model_hpa *h = model_hpa_create(&cfg, 3, &a, &err);
    if (h != NULL) {
      model_hpa_destroy(h);
      assert_int_equal(c.live, 0);
      break;
    }
    assert_int_equal(err.code, RETRY_ENOMEM);
    assert_int_equal(c.live, 0);
  }
  model_hpa_destroy(NULL);
}

/* Histories stay bounded: a day of syncs with a swinging load never needs more slots than the
 * window holds (the oldest-overwrite fallback is never taken with regular syncs). */
static void test_model_hpa_history_bounded(void **state) {
  (void)state;
  model_hpa_cfg cfg;
  model_hpa_cfg_default(&cfg);
  cfg.target_pct = 50;
  cfg.max_replicas = 60;
  model_hpa *h = model_hpa_create(&cfg, 5, NULL, NULL);
  int32_t prev_max = 0;
  for (int64_t t = 0; t <= 86400 * S; t += 15 * S) {
    double load = 10.0 + 9.0 * sin((double)t / (double)S / 600.0);
    int32_t n = model_hpa_replicas(h);
    int32_t got =
        model_hpa_sync(h, &(model_hpa_sample){.n_ready = n, .busy_sum = load < n ? load : n}, t);
    assert_true(got >= 1 && got <= 60);
    if (got > prev_max) prev_max = got;
  }
  assert_true(prev_max >= 30); /* it did follow the swings up */
  assert_true(model_hpa_get_stats(h)->n_scale_downs > 10);
  model_hpa_destroy(h);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_hpa_calculator_rows_from_kubernetes),
      cmocka_unit_test(test_model_hpa_calculator_tolerance_band),
      cmocka_unit_test(test_model_hpa_calculator_missing_and_no_metrics),
      cmocka_unit_test(test_model_hpa_constant_load_settles),
      cmocka_unit_test(test_model_hpa_constant_load_exact_path),
      cmocka_unit_test(test_model_hpa_scale_down_waits_and_takes_max),
      cmocka_unit_test(test_model_hpa_scale_up_rate_default_policy),
      cmocka_unit_test(test_model_hpa_scale_down_policies_select),
      cmocka_unit_test(test_model_hpa_min_max_and_by_hand),
      cmocka_unit_test(test_model_hpa_no_metrics_and_scale_up_window),
      cmocka_unit_test(test_model_hpa_config_errors_and_oom),
      cmocka_unit_test(test_model_hpa_history_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
