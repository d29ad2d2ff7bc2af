/*
 * test_model_eject.c: Envoy's outlier detection (models/model_eject.c) on its own. The issue's
 * test first: ejection never exceeds max_ejection_percent, with Envoy's exact rule for small
 * clusters (the percent after the ejection, so the default 10 % ejects nothing under 10 hosts,
 * unless always_eject_one_host). Then rows of Envoy's outlier_detection_impl_test.cc restated
 * here: ejection at exactly N consecutive 5xx, a success resetting the count, the ejection
 * time growing as base x k and shrinking while healthy, success-rate ejection with the 1.9
 * stdev factor and its minimum hosts and request volume, failure percentage, gRPC statuses
 * mapped as Envoy's router maps them, and the split of local-origin errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "models/model_eject.h"

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)

/* n responses of code from host at now. */
static void load(model_eject *e, int32_t host, int n, int32_t code, int64_t now, gsl_rng *r) {
  for (int i = 0; i < n; i++)
    model_eject_http(e, host, code, now, r);
}

static model_eject_cfg cfg_with_pct(uint32_t pct) {
  model_eject_cfg c;
  model_eject_cfg_default(&c);
  c.max_ejection_pct = pct;
  return c;
}

/* {==================================================================
 * The maximum ejection percent
 * =================================================================== */

/* Random failures on clusters of 1..64 hosts under several limits, with ticks returning hosts:
 * after every event the ejected share never exceeds the limit; with always_eject_one_host,
 * one host may be out even when that alone exceeds it, never more. And the limit is reached:
 * the test would fail if nothing were ever ejected. */
static void test_model_eject_never_exceeds_max_percent(void **state) {
  (void)state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 24);
  const uint32_t pcts[] = {0, 10, 33, 50, 67, 90, 100};
  int64_t reached = 0;
  for (int one = 0; one <= 1; one++) {
    for (size_t p = 0; p < sizeof pcts / sizeof pcts[0]; p++) {
      for (int32_t n = 1; n <= 64; n += (n < 12 ? 1 : 13)) {
        model_eject_cfg c = cfg_with_pct(pcts[p]);
        c.always_eject_one_host = one;
        c.base_ejection_ns = 20 * S;
        model_eject e;
        assert_int_equal(model_eject_init(&e, &c, n, NULL), RETRY_OK);
        int32_t allowed = (int32_t)((uint64_t)pcts[p] * (uint64_t)n / 100);
        if (one && allowed < 1) allowed = 1;
        int32_t most = 0;
        for (int64_t t = 0; t < 600 * S; t += 100 * MS) {
          int32_t host = (int32_t)gsl_rng_uniform_int(r, (unsigned long)n);
          model_eject_http(&e, host, gsl_rng_uniform(r) < 0.7 ? 500 : 200, t, r);
          if (t % c.interval_ns == 0) model_eject_tick(&e, t, r);
          int32_t k = model_eject_n_ejected(&e);
          if (k > allowed)
            fail_msg("%d hosts, %u %%, one=%d: %d ejected > %d", (int)n, (unsigned)pcts[p], one,
                     (int)k, (int)allowed);
          most = k > most ? k : most;
        }
        if (allowed > 0 && most == allowed) reached++;
        if (allowed == 0) assert_int_equal(e.stats.enforced_total, 0);
      }
    }
  }
  assert_true(reached > 40); /* the bound is met, not just respected */
  gsl_rng_free(r);
}

/* Envoy's rows and the small-cluster cases of the rule: 3 hosts at 50 % eject 1 of 3
 * (MaxEjectionPercentage); a single host at 90 % is never ejected (...SingleHost); the default
 * 10 % ejects nothing among 9 hosts and one among 10; 67 % ejects 2 of 3, not 3 (#27066);
 * always_eject_one_host ejects exactly one of 3 at 10 %. Refusals count as overflow. */
static void test_model_eject_max_percent_rows(void **state) {
  (void)state;
  struct row {
    uint32_t pct;
    bool one;
    int32_t n_hosts, want;
  } rows[] = {
      {50, false, 3, 1}, {90, false, 1, 0}, {10, false, 9, 0},  {10, false, 10, 1},
      {67, false, 3, 2}, {10, true, 3, 1},  {100, false, 3, 3}, {0, true, 3, 1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    model_eject_cfg c = cfg_with_pct(rows[i].pct);
    c.always_eject_one_host = rows[i].one;
    model_eject e;
    model_eject_init(&e, &c, rows[i].n_hosts, NULL);
    for (int32_t h = 0; h < rows[i].n_hosts; h++)
      load(&e, h, 5, 500, 0, NULL);
    if (model_eject_n_ejected(&e) != rows[i].want)
      fail_msg("row %zu: %d ejected, want %d", i, (int)model_eject_n_ejected(&e),
               (int)rows[i].want);
    assert_int_equal(e.stats.overflow, rows[i].n_hosts - rows[i].want);
    assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_5XX], rows[i].n_hosts);
    /* The first hosts go first: the mask is the low bits. */
    uint64_t low = (UINT64_C(1) << rows[i].want) - 1;
    assert_true(e.ejected == low);
    assert_true(model_eject_in_service(&e) == (((UINT64_C(1) << rows[i].n_hosts) - 1) & ~low));
  }
}

/* }================================================================== */

/* {==================================================================
 * Consecutive errors
 * =================================================================== */

/* Ejection at exactly the Nth consecutive 5xx, for N = 1..10; a 2xx or 4xx in between resets
 * the count (Envoy counts every non-5xx as a success). */
static void test_model_eject_exactly_n_consecutive_5xx(void **state) {
  (void)state;
  for (uint32_t n = 1; n <= 10; n++) {
    model_eject_cfg c = cfg_with_pct(100);
    c.consecutive_5xx = n;
    model_eject e;
    model_eject_init(&e, &c, 2, NULL);
    for (uint32_t k = 1; k < n; k++)
      assert_false(model_eject_http(&e, 0, 500, 0, NULL));
    assert_false(model_eject_is_ejected(&e, 0));
    assert_true(model_eject_http(&e, 0, 500, 0, NULL));
    assert_true(model_eject_is_ejected(&e, 0));
    assert_false(model_eject_is_ejected(&e, 1));
  }
  model_eject_cfg c = cfg_with_pct(100);
  model_eject e;
  model_eject_init(&e, &c, 1, NULL);
  load(&e, 0, 4, 500, 0, NULL);
  load(&e, 0, 1, 200, 0, NULL);
  load(&e, 0, 4, 503, 0, NULL);
  load(&e, 0, 1, 404, 0, NULL); /* a 4xx is a success to the detector */
  load(&e, 0, 4, 500, 0, NULL);
  assert_false(model_eject_is_ejected(&e, 0));
  load(&e, 0, 1, 500, 0, NULL);
  assert_true(model_eject_is_ejected(&e, 0));
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_5XX], 1);
}

/* Gateway errors (502, 503, 504) count on both counters. With the default
 * enforcing_consecutive_gateway_failure of 0 %, five 503s are detected as a gateway failure
 * but ejected as five 5xx; enforced at 100 %, the gateway detection ejects and the 5xx one is
 * ignored (the host is already out). A 500 resets the gateway counter only. */
static void test_model_eject_gateway_failures(void **state) {
  (void)state;
  model_eject_cfg c = cfg_with_pct(100);
  model_eject e;
  model_eject_init(&e, &c, 1, NULL);
  load(&e, 0, 5, 503, 0, NULL);
  assert_true(model_eject_is_ejected(&e, 0));
  assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_GATEWAY], 1);
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_GATEWAY], 0);
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_5XX], 1);

  c.enforcing_gateway = 100;
  model_eject_init(&e, &c, 1, NULL);
  load(&e, 0, 5, 504, 0, NULL);
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_GATEWAY], 1);
  assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_5XX], 0);

  c.consecutive_5xx = 100;
  model_eject_init(&e, &c, 1, NULL);
  load(&e, 0, 4, 502, 0, NULL);
  load(&e, 0, 1, 500, 0, NULL);
  load(&e, 0, 4, 503, 0, NULL);
  assert_false(model_eject_is_ejected(&e, 0));
  load(&e, 0, 1, 503, 0, NULL);
  assert_true(model_eject_is_ejected(&e, 0));
}

/* gRPC statuses as Envoy's router feeds them: grpcToHttpStatus, then the HTTP rules. */
static void test_model_eject_grpc_mapping(void **state) {
  (void)state;
  const int32_t want[17] = {200, 499, 500, 400, 504, 404, 409, 403, 429,
                            400, 409, 400, 501, 500, 503, 500, 401};
  for (int32_t g = 0; g <= 16; g++)
    assert_int_equal(model_eject_grpc_to_http(g), want[g]);
  assert_int_equal(model_eject_grpc_to_http(17), 500);
  assert_int_equal(model_eject_grpc_to_http(-1), 500);
  model_eject_cfg c = cfg_with_pct(100);
  c.enforcing_gateway = 100;
  model_eject e;
  model_eject_init(&e, &c, 2, NULL);
  /* RESOURCE_EXHAUSTED (429) never ejects and resets the counters. */
  for (int i = 0; i < 4; i++)
    model_eject_grpc(&e, 0, 14, 0, NULL);
  model_eject_grpc(&e, 0, 8, 0, NULL);
  for (int i = 0; i < 4; i++)
    model_eject_grpc(&e, 0, 14, 0, NULL);
  assert_false(model_eject_is_ejected(&e, 0));
  /* UNAVAILABLE and DEADLINE_EXCEEDED are gateway errors; INTERNAL a plain 5xx. */
  assert_true(model_eject_grpc(&e, 0, 4, 0, NULL));
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_GATEWAY], 1);
  for (int i = 0; i < 5; i++)
    model_eject_grpc(&e, 1, 13, 0, NULL);
  assert_true(model_eject_is_ejected(&e, 1));
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_5XX], 1);
}

/* Enforcement below 100 %: a detection ejects with that probability (a draw in 0..99), within
 * a 4.5-sigma binomial interval over 20000 detections. */
static void test_model_eject_enforcing_probability(void **state) {
  (void)state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  model_eject_cfg c = cfg_with_pct(100);
  c.enforcing_5xx = 30;
  model_eject e;
  model_eject_init(&e, &c, 1, NULL);
  for (int i = 0; i < 20000; i++) {
    load(&e, 0, 5, 500, 0, r);
    model_eject_health_ok(&e, 0, 0);
  }
  double n = (double)e.stats.detected[MODEL_EJECT_CONSECUTIVE_5XX];
  assert_true(n == 20000);
  double p = (double)e.stats.enforced_total / n, sigma = sqrt(0.3 * 0.7 / n);
  if (fabs(p - 0.3) > 4.5 * sigma)
    fail_msg("enforced share %.4f, want 0.3 +- %.4f", p, 4.5 * sigma);
  gsl_rng_free(r);
}

/* }================================================================== */

/* {==================================================================
 * Ejection time
 * =================================================================== */

/* Envoy's EjectTimeBackoff row, base 10 s, ticks every 10 s: ejections at 0, 10 and 30 s last
 * 10, 20 and 30 s; two healthy ticks lower the multiplier to 1 so an ejection at 80 s lasts
 * 20 s; after 50 healthy ticks one at 610 s lasts 10 s. */
static void test_model_eject_backoff_timeline_from_envoy(void **state) {
  (void)state;
  model_eject_cfg c = cfg_with_pct(100);
  c.base_ejection_ns = 10 * S;
  model_eject e;
  model_eject_init(&e, &c, 1, NULL);
  struct step {
    int64_t t;    /* seconds */
    int action;   /* 0: tick, 1: five 500s */
    bool ejected; /* after it */
  } steps[] = {
      {0, 1, true},   {10, 0, false}, {10, 1, true}, {20, 0, true},   {30, 0, false},
      {30, 1, true},  {40, 0, true},  {50, 0, true}, {60, 0, false},  {70, 0, false},
      {80, 0, false}, {80, 1, true},  {90, 0, true}, {100, 0, false},
  };
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    if (steps[i].action == 1)
      load(&e, 0, 5, 500, steps[i].t * S, NULL);
    else
      model_eject_tick(&e, steps[i].t * S, NULL);
    if (model_eject_is_ejected(&e, 0) != steps[i].ejected)
      fail_msg("step %zu (t=%llds): ejected=%d", i, (long long)steps[i].t,
               model_eject_is_ejected(&e, 0));
  }
  for (int i = 1; i <= 50; i++)
    model_eject_tick(&e, (100 + i * 10) * S, NULL);
  assert_int_equal(model_eject_host_backoff(&e, 0), 0);
  load(&e, 0, 5, 500, 610 * S, NULL);
  assert_int_equal(model_eject_host_backoff(&e, 0), 1);
  model_eject_tick(&e, 620 * S, NULL);
  assert_false(model_eject_is_ejected(&e, 0));
  assert_int_equal(e.stats.returned, 5);
}

/* Ejected again as soon as it returns, a host stays out base x k, k = 1, 2, ..., until that
 * reaches max_ejection_time (defaults 30 s and 300 s), then 300 s; the multiplier stops at 11
 * (the first k with k x base >= max + base). A host returns at the first tick at or after its
 * time, never before. */
static void test_model_eject_time_grows_to_max(void **state) {
  (void)state;
  model_eject_cfg c = cfg_with_pct(100);
  model_eject e;
  model_eject_init(&e, &c, 1, NULL);
  int64_t t = 0;
  for (int k = 1; k <= 14; k++) {
    load(&e, 0, 5, 500, t, NULL);
    assert_true(model_eject_is_ejected(&e, 0));
    int64_t out_from = t;
    while (model_eject_is_ejected(&e, 0)) {
      t += c.interval_ns;
      model_eject_tick(&e, t, NULL);
    }
    int64_t want = (k * 30 < 300 ? k * 30 : 300) * S;
    if (t - out_from != want)
      fail_msg("ejection %d lasted %llds, want %llds", k, (long long)((t - out_from) / S),
               (long long)(want / S));
  }
  assert_int_equal(model_eject_host_backoff(&e, 0), 11);
  /* A jitter of up to 13 s delays the return by whole ticks, never more than 13 s + a tick. */
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 3);
  c.max_jitter_ns = 13 * S;
  c.interval_ns = 1 * S;
  int64_t longest = 0;
  for (int i = 0; i < 200; i++) {
    model_eject_init(&e, &c, 1, NULL);
    load(&e, 0, 5, 500, 0, r);
    t = 0;
    while (model_eject_is_ejected(&e, 0)) {
      t += c.interval_ns;
      model_eject_tick(&e, t, r);
    }
    assert_true(t >= 30 * S && t <= 44 * S);
    longest = t > longest ? t : longest;
  }
  assert_true(longest >= 40 * S); /* the jitter is drawn, not always 0 */
  gsl_rng_free(r);
}

/* }================================================================== */

/* {==================================================================
 * Success rate and failure percentage
 * =================================================================== */

/* Envoy's BasicFlowSuccessRateExternalOrigin: 5 hosts, 200 successes each, and 200 503s on
 * host 4 (consecutive detections not enforced: 40 of each kind are only counted). At the tick
 * host 4's rate is 50 %, the mean 90, the threshold 90 - 1.9 x 20 = 52: it is ejected; still
 * out at 19.999 s, back at 50.001 s. Then 25 + 25 requests: 50 is under the volume of 100, so
 * no mean is computed and nothing is ejected, though host 4's rate is known (50 %). */
static void test_model_eject_success_rate_row_from_envoy(void **state) {
  (void)state;
  model_eject_cfg c = cfg_with_pct(100);
  c.enforcing_5xx = 0;
  c.enforcing_gateway = 0;
  model_eject e;
  model_eject_init(&e, &c, 5, NULL);
  for (int32_t h = 0; h < 5; h++)
    load(&e, h, 200, 200, 0, NULL);
  load(&e, 4, 200, 503, 0, NULL);
  assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_5XX], 40);
  assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_GATEWAY], 40);
  model_eject_tick(&e, 10000 * MS, NULL);
  assert_true(fabs(model_eject_host_success_rate(&e, 4, false) - 50) < 1e-9);
  assert_true(fabs(e.sr_mean[0] - 90) < 1e-9);
  assert_true(fabs(e.sr_threshold[0] - 52) < 1e-9);
  assert_true(e.sr_mean[1] == -1); /* the local-origin monitor saw nothing */
  assert_true(model_eject_is_ejected(&e, 4));
  assert_int_equal(e.stats.enforced[MODEL_EJECT_SUCCESS_RATE], 1);
  model_eject_tick(&e, 19999 * MS, NULL);
  assert_true(model_eject_is_ejected(&e, 4));
  model_eject_tick(&e, 50001 * MS, NULL);
  assert_false(model_eject_is_ejected(&e, 4));
  for (int32_t h = 0; h < 5; h++)
    load(&e, h, 25, 200, 50001 * MS, NULL);
  load(&e, 4, 25, 503, 50001 * MS, NULL);
  model_eject_tick(&e, 60001 * MS, NULL);
  assert_int_equal(model_eject_n_ejected(&e), 0);
  assert_true(fabs(model_eject_host_success_rate(&e, 4, false) - 50) < 1e-9);
  assert_true(e.sr_mean[0] == -1 && e.sr_threshold[0] == -1);
}

/* The same shape with the factor and the limits varied: a factor of 2.0 puts the threshold at
 * exactly 50, and a rate must be below it; 4 hosts with volume are under the minimum of 5; a
 * host with 99 requests is not counted. */
static void test_model_eject_success_rate_factor_and_minimums(void **state) {
  (void)state;
  struct row {
    uint32_t factor;
    int32_t n_hosts, volume;
    bool want;
  } rows[] = {
      {1900, 5, 200, true},
      {2000, 5, 200, false},
      {1900, 4, 200, false},
      {1900, 5, 99, false},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    model_eject_cfg c = cfg_with_pct(100);
    c.enforcing_5xx = 0;
    c.sr_stdev_factor = rows[i].factor;
    c.fp_min_hosts = 100; /* keep failure percentage out of the way */
    model_eject e;
    model_eject_init(&e, &c, rows[i].n_hosts, NULL);
    int32_t last = rows[i].n_hosts - 1;
    for (int32_t h = 0; h < last; h++)
      load(&e, h, 200, 200, 0, NULL);
    load(&e, last, rows[i].volume / 2, 200, 0, NULL);
    load(&e, last, rows[i].volume - rows[i].volume / 2, 500, 0, NULL);
    model_eject_tick(&e, 10 * S, NULL);
    if (model_eject_is_ejected(&e, last) != rows[i].want)
      fail_msg("row %zu: ejected=%d", i, model_eject_is_ejected(&e, last));
  }
}

/* Failure percentage (enforced at 100 % here; Envoy's default is 0 %), the row of
 * EjectTimeBackoffTimeBasedDetection: one host, minimum hosts 1, 100 % failures ejected at
 * each tick that sees them, 20 non-enforced 5xx detections per hundred; the second ejection
 * lasts two periods, and two healthy periods bring it back to one. */
static void test_model_eject_failure_percentage_row_from_envoy(void **state) {
  (void)state;
  model_eject_cfg c = cfg_with_pct(100);
  c.base_ejection_ns = 10 * S;
  c.enforcing_5xx = 0;
  c.enforcing_gateway = 0;
  c.enforcing_sr = 0;
  c.enforcing_fp = 100;
  c.fp_min_hosts = 1;
  model_eject e;
  model_eject_init(&e, &c, 1, NULL);
  load(&e, 0, 100, 500, 0, NULL);
  assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_5XX], 20);
  struct step {
    int64_t t;
    int32_t code; /* 0: none, else 100 responses of it before the tick */
    bool ejected;
  } steps[] = {
      {10, 0, true},    {20, 0, false},   {30, 500, true}, {40, 0, true},  {50, 0, false},
      {60, 200, false}, {70, 200, false}, {80, 500, true}, {90, 0, false},
  };
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    if (steps[i].code != 0) load(&e, 0, 100, steps[i].code, (steps[i].t - 5) * S, NULL);
    model_eject_tick(&e, steps[i].t * S, NULL);
    if (model_eject_is_ejected(&e, 0) != steps[i].ejected)
      fail_msg("t=%llds: ejected=%d", (long long)steps[i].t, model_eject_is_ejected(&e, 0));
  }
  assert_int_equal(e.stats.enforced[MODEL_EJECT_FAILURE_PCT], 3);
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_5XX], 0);
}

/* }================================================================== */

/* {==================================================================
 * Local-origin errors, membership, configuration
 * =================================================================== */

/* Unsplit, a connect failure is a 503; split, it counts on its own counter and ejects as a
 * consecutive local-origin failure. ExternalOriginEventsWithSplit: alternating failed and
 * successful transactions never eject; 100 failures eject by 5xx, the gateway detection being
 * logged but not enforced. */
static void test_model_eject_local_origin_split(void **state) {
  (void)state;
  model_eject_cfg c = cfg_with_pct(100);
  model_eject e;
  model_eject_init(&e, &c, 1, NULL);
  for (int i = 0; i < 5; i++)
    model_eject_result(&e, 0, MODEL_EJECT_LOCAL_CONNECT_FAILED, 0, NULL);
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_5XX], 1);

  c.split_local = true;
  model_eject_init(&e, &c, 1, NULL);
  for (int i = 0; i < 4; i++)
    model_eject_result(&e, 0, MODEL_EJECT_LOCAL_TIMEOUT, 0, NULL);
  model_eject_result(&e, 0, MODEL_EJECT_LOCAL_CONNECT_SUCCESS, 0, NULL); /* resets */
  for (int i = 0; i < 4; i++)
    model_eject_result(&e, 0, MODEL_EJECT_LOCAL_CONNECT_FAILED, 0, NULL);
  assert_false(model_eject_is_ejected(&e, 0));
  assert_true(model_eject_result(&e, 0, MODEL_EJECT_LOCAL_CONNECT_FAILED, 0, NULL));
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_LOCAL], 1);
  assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_5XX], 0);

  model_eject_init(&e, &c, 1, NULL);
  for (int i = 0; i < 100; i++) {
    model_eject_result(&e, 0, MODEL_EJECT_EXT_REQUEST_FAILED, 0, NULL);
    model_eject_result(&e, 0, MODEL_EJECT_EXT_REQUEST_SUCCESS, 0, NULL);
  }
  assert_false(model_eject_is_ejected(&e, 0));
  for (int i = 0; i < 100; i++)
    model_eject_result(&e, 0, MODEL_EJECT_EXT_REQUEST_FAILED, 0, NULL);
  assert_true(model_eject_is_ejected(&e, 0));
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_5XX], 1);
  assert_int_equal(e.stats.detected[MODEL_EJECT_CONSECUTIVE_GATEWAY], 1);
  assert_int_equal(e.stats.enforced[MODEL_EJECT_CONSECUTIVE_GATEWAY], 0);
}

/* Hosts leaving drop their state (an ejected one frees its share); hosts joining start in
 * service; a passing health check returns an ejected host at once and resets its counters. */
static void test_model_eject_membership_and_health(void **state) {
  (void)state;
  model_eject_cfg c = cfg_with_pct(50);
  model_eject e;
  model_eject_init(&e, &c, 4, NULL);
  load(&e, 3, 5, 500, 0, NULL);
  load(&e, 2, 5, 500, 0, NULL);
  assert_int_equal(model_eject_n_ejected(&e), 2);
  load(&e, 1, 5, 500, 0, NULL); /* 3 of 4 would be 75 % */
  assert_int_equal(model_eject_n_ejected(&e), 2);
  model_eject_set_hosts(&e, 3);
  assert_int_equal(model_eject_n_ejected(&e), 1);
  assert_true(model_eject_in_service(&e) == 0x3);
  model_eject_set_hosts(&e, 6);
  assert_true(model_eject_in_service(&e) == 0x3b);
  load(&e, 5, 5, 500, 0, NULL); /* 2 of 6 */
  assert_true(model_eject_is_ejected(&e, 5));
  load(&e, 2, 3, 500, 0, NULL); /* counted while out, no detection */
  model_eject_health_ok(&e, 2, 1 * S);
  assert_false(model_eject_is_ejected(&e, 2));
  load(&e, 2, 4, 500, 1 * S, NULL); /* 4, not 7: the counters were reset at the return */
  assert_false(model_eject_is_ejected(&e, 2));
  model_eject_set_hosts(&e, 64);
  assert_int_equal(__builtin_popcountll(model_eject_in_service(&e)), 64 - 1);
}

static void test_model_eject_config_errors(void **state) {
  (void)state;
  model_eject_cfg c;
  model_eject_cfg_default(&c);
  c.max_ejection_ns = 10 * S; /* below the 30 s base */
  retry_error err;
  retry_error_clear(&err);
  model_eject e;
  assert_int_equal(model_eject_init(&e, &c, 3, &err), RETRY_ECONFIG);
  assert_string_equal(err.path, "outlier_detection.max_ejection_time");
  model_eject_cfg_default(&c);
  c.enforcing_sr = 101;
  assert_int_equal(model_eject_cfg_check(&c, NULL), RETRY_ECONFIG);
  model_eject_cfg_default(&c);
  assert_int_equal(model_eject_init(&e, &c, 65, NULL), RETRY_EINVAL);
  assert_int_equal(model_eject_init(&e, &c, 0, NULL), RETRY_OK);
  model_eject_tick(&e, 10 * S, NULL); /* an empty cluster ticks quietly */
  assert_true(model_eject_in_service(&e) == 0);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_eject_never_exceeds_max_percent),
      cmocka_unit_test(test_model_eject_max_percent_rows),
      cmocka_unit_test(test_model_eject_exactly_n_consecutive_5xx),
      cmocka_unit_test(test_model_eject_gateway_failures),
      cmocka_unit_test(test_model_eject_grpc_mapping),
      cmocka_unit_test(test_model_eject_enforcing_probability),
      cmocka_unit_test(test_model_eject_backoff_timeline_from_envoy),
      cmocka_unit_test(test_model_eject_time_grows_to_max),
      cmocka_unit_test(test_model_eject_success_rate_row_from_envoy),
      cmocka_unit_test(test_model_eject_success_rate_factor_and_minimums),
      cmocka_unit_test(test_model_eject_failure_percentage_row_from_envoy),
      cmocka_unit_test(test_model_eject_local_origin_split),
      cmocka_unit_test(test_model_eject_membership_and_health),
      cmocka_unit_test(test_model_eject_config_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
