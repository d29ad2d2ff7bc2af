/*
 * test_expt_recovery.c: the judgement of recovery after a trigger, on hand-made series: the
 * baseline, the hold span, a trigger that never ends or never starts, nothing offered, and the
 * three criteria (goodput capped at 1, OK latency, queues) with the last one to come back.
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

#include "expt/expt_recovery.h"
#include "expt/expt_scenario.h"
#include "models/model_world.h"
#include "sim/sim_event.h"

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

static const expt_recovery_cfg rcfg = {.threshold = 0.9,
                                      .hold_ns = 3000000000,
                                      .warmup_ns = -1,
                                      .latency_factor = 3,
                                      .latency_q = 0.99,
                                      .queue_factor = 2,
                                      .queue_slack = 1,
                                      .goodput_alpha = 0.01};
#define S 1000000000LL

static void test_expt_recovery_counts_from_the_trigger_end_to_a_held_healthy_span(void **state) {
  (void)state;
  /* 20 s: healthy 98/s, trigger [6 s, 9 s), bad until 11 s, then healthy. */
  double good[20], v[40];
  for (int b = 0; b < 20; b++)
    good[b] = (b >= 6 && b < 11) ? 20 : 98;
  series(v, good, 20);
  expt_recovery r;
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
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
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.recovered && r.recovery_s == 4.0);
}

static void test_expt_recovery_not_judged_without_a_trigger_nor_held_health(void **state) {
  (void)state;
  double good[20], v[40];
  for (int b = 0; b < 20; b++)
    good[b] = b < 6 ? 98 : 30;
  series(v, good, 20);
  expt_recovery r;
  /* Stays down: never recovered, recovery_s NaN, the final ratio tells how far down. */
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.has_trigger && !r.recovered && isnan(r.recovery_s));
  assert_true(fabs(r.final_ratio - 0.3) < 1e-12);
  /* Healthy only in the last 2 s: a hold span cut by the end of the duration does not count. */
  good[18] = good[19] = 98;
  series(v, good, 20);
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_false(r.recovered);
  /* A trigger that lasts past the duration (or no fault at all): nothing to judge. */
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 20 * S, v, v + 1, 2, 20, &r);
  assert_false(r.has_trigger);
  expt_recovery_judge(&rcfg, 20 * S, S, INT64_MAX, INT64_MIN, v, v + 1, 2, 20, &r);
  assert_false(r.has_trigger);
  /* A trigger at time 0 has no history: the baseline is 1. */
  for (int b = 0; b < 20; b++)
    good[b] = 95;
  series(v, good, 20);
  expt_recovery_judge(&rcfg, 20 * S, S, 0, 2 * S, v, v + 1, 2, 20, &r);
  assert_true(r.baseline_ratio == 1.0 && r.recovered && r.recovery_s == 0.0);
  /* Nothing offered after the trigger (stuck closed-loop users) is never healthy. */
  for (int b = 9; b < 20; b++)
    v[2 * b] = v[2 * b + 1] = 0;
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_false(r.recovered);
  assert_true(isnan(r.final_ratio));
}

/* Where a run not recovered is censored: the last hold span that fits starts judged_until_s
 * after the trigger's end (20 s of 1 s buckets, hold 3 s, trigger ending at 9 s: 17 - 9 = 8 s).
 * A trigger that ends too near the duration's end leaves no span: judged_until_s < 0, and the
 * same figure comes from the configuration alone (the loader's warning). */
static void test_expt_recovery_says_where_it_is_censored(void **state) {
  (void)state;
  double good[20], v[40];
  for (int b = 0; b < 20; b++)
    good[b] = 98;
  series(v, good, 20);
  expt_recovery r;
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.judged_until_s == 8.0);
  /* Healthy from 18 s on: that span would start at 18 s, past 17 s: not seen. */
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 18 * S, v, v + 1, 2, 20, &r);
  assert_true(r.has_trigger && !r.recovered && r.judged_until_s == -1.0);
  model_config cfg = {.duration_ns = 20 * S, .bucket_ns = S};
  expt_recovery_cfg explicit = rcfg;
  explicit.explicit_trigger = true;
  explicit.trigger_start_ns = 6 * S;
  explicit.trigger_end_ns = 18 * S;
  assert_true(expt_recovery_judged_until_s(&explicit, &cfg) == -1.0);
  explicit.trigger_end_ns = 9 * S;
  assert_true(expt_recovery_judged_until_s(&explicit, &cfg) == 8.0);
  /* Hold spans are whole buckets: a 2.5 s hold in 1 s buckets takes 3. */
  explicit.hold_ns = 2500000000;
  assert_true(expt_recovery_judged_until_s(&explicit, &cfg) == 8.0);
  /* No trigger before the duration's end: nothing to judge, NaN. */
  explicit.trigger_end_ns = 20 * S;
  assert_true(isnan(expt_recovery_judged_until_s(&explicit, &cfg)));
}

/* {==================================================================
 * The three criteria
 * =================================================================== */

/* 20 one-second buckets, stride 4: offered, goodput, OK p99 latency, one service's queue.
 * Healthy before the trigger [6 s, 9 s): offered 100, goodput 98, p99 100 ms, queue 2. */
typedef struct three {
  double v[80];
  const double *queues[1];
  double allow[1];
  const char *names[1];
  expt_recovery_series s;
} three;

static void three_init(three *t) {
  for (int b = 0; b < 20; b++) {
    t->v[4 * b] = 100;
    t->v[4 * b + 1] = (b >= 6 && b < 9) ? 10 : 98;
    t->v[4 * b + 2] = 100;
    t->v[4 * b + 3] = 2;
  }
  t->queues[0] = t->v + 3;
  t->allow[0] = 8; /* queue_slack 1 x 8 workers */
  t->names[0] = "api";
  t->s = (expt_recovery_series){.bucket_ns = S,
                               .n_buckets = 20,
                               .stride = 4,
                               .offered = t->v,
                               .goodput = t->v + 1,
                               .latency = t->v + 2,
                               .n_queues = 1,
                               .queues = t->queues,
                               .queue_allow = t->allow,
                               .queue_names = t->names};
}

static void judge3(three *t, expt_recovery *r) {
  assert_int_equal(expt_recovery_judge_series(&rcfg, 20 * S, 6 * S, 9 * S, &t->s, r), 0);
}

/* Issue 10, item 4: goodput is back at the trigger's end (a draining queue even answers more
 * than is offered), but the queue holds 273 requests for 4 more seconds: the run recovers only
 * when the queue is back near its baseline (2 x 2 + 8 = 12 requests), and says the queue was
 * the last criterion to come back. */
static void test_recovery_waits_for_queue(void **state) {
  (void)state;
  three t;
  three_init(&t);
  for (int b = 9; b < 13; b++)
    t.v[4 * b + 3] = 273 - 60 * (b - 9);
  t.v[4 * 9 + 1] = 130; /* goodput above offered: capped at 1, healthy */
  expt_recovery r;
  judge3(&t, &r);
  assert_true(r.recovered);
  assert_true(r.criterion_s[EXPT_RECOVERY_GOODPUT] == 0.0);
  assert_true(r.criterion_s[EXPT_RECOVERY_LATENCY] == 0.0);
  assert_true(r.criterion_s[EXPT_RECOVERY_QUEUE] == 4.0);
  assert_true(r.recovery_s == 4.0);
  assert_int_equal(r.last_criterion, EXPT_RECOVERY_QUEUE);
  assert_string_equal(r.queue_service, "api");
  /* The old rule (goodput alone) said 0 s. */
  expt_recovery old;
  expt_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, t.v, t.v + 1, 4, 20, &old);
  assert_true(old.recovered && old.recovery_s == 0.0);
  /* A span whose mean queue is just at the limit is healthy; one above it is not: the span
   * [12 s, 15 s) holds 30, 2 and 2 (mean 11.33), then 32.5, 2 and 2 (mean 12.17). */
  t.v[4 * 12 + 3] = 30;
  judge3(&t, &r);
  assert_true(r.recovery_s == 3.0);
  t.v[4 * 12 + 3] = 32.5;
  judge3(&t, &r);
  assert_true(r.recovery_s == 4.0);
}

/* Issue 10, item 4: OK latency ten times the baseline is not health, whatever goodput says;
 * at 3 x the baseline (300 ms) it is. */
static void test_recovery_waits_for_latency(void **state) {
  (void)state;
  three t;
  three_init(&t);
  for (int b = 9; b < 14; b++)
    t.v[4 * b + 2] = 1000;
  t.v[4 * 14 + 2] = 300;
  expt_recovery r;
  judge3(&t, &r);
  assert_true(fabs(r.baseline_latency_ms - 100) < 1e-9);
  assert_true(r.recovered && r.recovery_s == 5.0);
  assert_true(r.criterion_s[EXPT_RECOVERY_GOODPUT] == 0.0);
  assert_int_equal(r.last_criterion, EXPT_RECOVERY_LATENCY);
  assert_string_equal(r.latency_column, "latency_ok_p99_ms");
  /* The latency is judged by the span's mean over its buckets with an OK call: one bucket
   * without any (NaN) leaves the span healthy, a span without any OK call is not. */
  t.v[4 * 15 + 2] = NAN;
  judge3(&t, &r);
  assert_true(r.recovery_s == 5.0);
  t.v[4 * 14 + 2] = t.v[4 * 16 + 2] = NAN;
  judge3(&t, &r);
  assert_true(r.recovery_s == 6.0);
  /* Without an OK latency before the trigger the criterion cannot be judged and holds. */
  for (int b = 0; b < 6; b++)
    t.v[4 * b + 2] = NAN;
  judge3(&t, &r);
  assert_true(isnan(r.baseline_latency_ms) && r.recovery_s == 0.0);
}

/* Issue 10, item 4: the last criterion when one never comes back is that one; each
 * criterion's time is its own first held span, which may come before the overall one. */
static void test_recovery_last_criterion_never_back(void **state) {
  (void)state;
  three t;
  three_init(&t);
  for (int b = 9; b < 20; b++)
    t.v[4 * b + 3] = 100;
  expt_recovery r;
  judge3(&t, &r);
  assert_false(r.recovered);
  assert_true(isnan(r.criterion_s[EXPT_RECOVERY_QUEUE]));
  assert_true(r.criterion_s[EXPT_RECOVERY_GOODPUT] == 0.0);
  assert_int_equal(r.last_criterion, EXPT_RECOVERY_QUEUE);
}

/* Issue 10, item 4: a trigger given explicitly is judged like a fault's window. */
static void test_recovery_explicit_trigger(void **state) {
  (void)state;
  three t;
  three_init(&t);
  /* A load spike at [6 s, 9 s): offered 300, goodput 100; afterwards the backlog drains. */
  for (int b = 6; b < 9; b++) {
    t.v[4 * b] = 300;
    t.v[4 * b + 1] = 100;
    t.v[4 * b + 3] = 400;
  }
  t.v[4 * 9 + 3] = 200;
  expt_recovery_cfg cfg = rcfg;
  cfg.explicit_trigger = true;
  expt_recovery r;
  assert_int_equal(expt_recovery_judge_series(&cfg, 20 * S, 6 * S, 9 * S, &t.s, &r), 0);
  assert_true(r.has_trigger && r.explicit_trigger);
  assert_true(r.recovered && r.recovery_s == 1.0);
  assert_int_equal(r.last_criterion, EXPT_RECOVERY_QUEUE);
}

/* {==================================================================
 * Real runs
 * =================================================================== */

static char queue_service[64]; /* judge_text's copy of r->queue_service */

/* Loads a scenario written with single quotes, runs its first run with seed 1 and judges it
 * with the scenario's recovery block, and also with the goodput criterion alone (*old). */
static void judge_text(const char *text, expt_recovery *r, expt_recovery *old) {
  char *json = strdup(text);
  assert_non_null(json);
  for (char *p = json; *p; p++)
    if (*p == '\'') *p = '"';
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(json, "<test>", NULL, 0, &err);
  free(json);
  if (s == NULL) fail_msg("scenario failed to load: %s", err.message);
  sim_kernel *k = sim_kernel_create(0, NULL);
  assert_non_null(k);
  const model_config *cfg = expt_scenario_config(s, 0);
  model_world *w = model_world_create(cfg, k, 1, &err);
  assert_non_null(w);
  assert_int_equal(model_world_run(w, NULL, NULL, &err), 0);
  const model_results *res = model_world_results(w);
  const expt_recovery_cfg *rc_cfg = expt_scenario_recovery(s, 0);
  assert_int_equal(expt_recovery_of_run(rc_cfg, cfg, res, r), 0);
  /* queue_service is borrowed from the config, which goes below. */
  snprintf(queue_service, sizeof queue_service, "%s", r->queue_service ? r->queue_service : "");
  r->queue_service = queue_service;
  const model_timeseries *ts = &res->ts;
  int off = -1, good = -1;
  for (size_t c = 0; c < ts->n_columns; c++) {
    if (strcmp(ts->names[c], "offered_rps") == 0) off = (int)c;
    if (strcmp(ts->names[c], "goodput_rps") == 0) good = (int)c;
  }
  assert_true(off >= 0 && good >= 0);
  expt_recovery_judge(rc_cfg, cfg->duration_ns, ts->bucket_ns, llround(r->trigger_start_s * 1e9),
                     llround(r->trigger_end_s * 1e9), ts->values + off, ts->values + good,
                     ts->n_columns, ts->n_buckets, old);
  model_world_destroy(w);
  sim_kernel_destroy(k);
  expt_scenario_destroy(s);
}

/* Issue 10, item 4, on a real run: one replica of 4 workers (400/s) offered 300/s loses 3 of
 * them for 10 s; 2000 requests queue up and drain at 100/s for about 20 s. Goodput per offered
 * call is back (capped at 1) as soon as the fault ends, and the goodput rule alone said
 * "recovered after 0 s" while the queue held its backlog; the rule now waits for the queue
 * and the latency. */
static void test_recovery_waits_for_queue_in_a_run(void **state) {
  (void)state;
  expt_recovery r, old;
  judge_text(
      "{'duration': '60s', 'recovery': {'hold': '5s'},"
      " 'services': {'api': {'workers': 4, 'queue': {'capacity': 100000},"
      "   'service_time': {'dist': 'exponential', 'mean': '10ms'},"
      "   'faults': [{'kind': 'capacity', 'workers': 1, 'start': '10s', 'end': '20s'}]}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/M'], 'deadline': '60s',"
      "   'arrival': {'kind': 'open', 'rate': '300/s'}}}}",
      &r, &old);
  print_message("old rule %.1f s; new %.1f s (goodput %.1f, latency %.1f, queue %.1f), last %s\n",
                old.recovery_s, r.recovery_s, r.criterion_s[0], r.criterion_s[1], r.criterion_s[2],
                expt_recovery_criterion_name(r.last_criterion));
  assert_true(old.recovered && old.recovery_s <= 1.0);
  assert_true(r.recovered && r.recovery_s >= 12.0 && r.recovery_s <= 30.0);
  assert_true(r.criterion_s[EXPT_RECOVERY_GOODPUT] <= 1.0);
  assert_true(r.last_criterion == EXPT_RECOVERY_QUEUE || r.last_criterion == EXPT_RECOVERY_LATENCY);
  assert_true(r.criterion_s[EXPT_RECOVERY_QUEUE] >= 12.0);
  assert_string_equal(r.queue_service, "api");
}

/* Issue 10, item 4: a load spike (a rate profile, no fault) is judged once the recovery block
 * names its window; without it there is no trigger to judge. */
static void test_recovery_explicit_trigger_in_a_run(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '60s', 'recovery': {'hold': '5s'%s},"
      " 'services': {'api': {'workers': 4, 'queue': {'capacity': 100000},"
      "   'service_time': {'dist': 'exponential', 'mean': '10ms'}}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/M'], 'deadline': '60s',"
      "   'arrival': {'kind': 'open', 'rate': {'kind': 'spike', 'base': '200/s',"
      "     'peak': '600/s', 'start': '10s', 'end': '15s'}}}}}";
  char text[1024];
  expt_recovery r, old;
  snprintf(text, sizeof text, fmt, "");
  judge_text(text, &r, &old);
  assert_false(r.has_trigger);
  snprintf(text, sizeof text, fmt, ", 'trigger': {'start': '10s', 'end': '15s'}");
  judge_text(text, &r, &old);
  assert_true(r.has_trigger && r.explicit_trigger);
  assert_true(r.trigger_start_s == 10.0 && r.trigger_end_s == 15.0);
  /* 1000 requests queued at the spike's end, drained at 200/s: about 5 s. */
  print_message("spike: recovered after %.1f s, last %s\n", r.recovery_s,
                expt_recovery_criterion_name(r.last_criterion));
  assert_true(r.recovered && r.recovery_s >= 3.0 && r.recovery_s <= 12.0);
  assert_true(r.criterion_s[EXPT_RECOVERY_QUEUE] >= 3.0);
}

/* {==================================================================
 * A baseline that is not a good state
 * =================================================================== */

/* 40 one-second buckets, stride 5: offered, goodput, OK p99, queue, in flight. A service of
 * 10 workers (100/s) offered 145/s from the start: its queue (and the calls in flight) grow by
 * 45 a second; the trigger [20 s, 21 s) adds 90 more. Judged against the overloaded time
 * before the trigger, the queue stays within 2 x its baseline for 8 s after the trigger and
 * goodput / offered (0.69) is above 0.9 x its baseline: a 5 s hold passed for a recovery.
 * The calls in flight grew by 450 over the baseline's 1450 offered calls: not steady, so the
 * baselines are the ideal ones and the run never recovers. */
static void test_recovery_overloaded_from_the_start_never_recovers(void **state) {
  (void)state;
  double v[200];
  for (int b = 0; b < 40; b++) {
    double q = 45.0 * (b + 1) + (b >= 20 ? 90 : 0);
    v[5 * b] = 145;
    v[5 * b + 1] = 100;
    v[5 * b + 2] = 10 * q; /* waiting q / 100 s */
    v[5 * b + 3] = q;
    v[5 * b + 4] = q + 10;
  }
  const double *queues[1] = {v + 3};
  double allow[1] = {10};
  const char *names[1] = {"api"};
  expt_recovery_series s = {.bucket_ns = S,
                           .n_buckets = 40,
                           .stride = 5,
                           .offered = v,
                           .goodput = v + 1,
                           .latency = v + 2,
                           .n_queues = 1,
                           .queues = queues,
                           .queue_allow = allow,
                           .queue_names = names};
  expt_recovery_cfg cfg = rcfg;
  cfg.hold_ns = 5 * S;
  expt_recovery r;
  /* Without the calls in flight, goodput / offered (0.69, under the threshold 0.9) alone
   * tells the time before the trigger was no good state. */
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_false(r.baseline_steady);
  assert_false(r.recovered);
  s.in_flight = v + 4;
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_false(r.baseline_steady);
  assert_false(r.recovered);
  assert_true(r.baseline_ratio == 1.0);
  assert_true(isnan(r.baseline_latency_ms));
  assert_int_equal(r.last_criterion, EXPT_RECOVERY_GOODPUT);
  /* A steady service (in flight going up and down by tens) keeps its own baselines: offered
   * 100, goodput 98, queue 2, in flight 12 +- 40 around the bucket. */
  for (int b = 0; b < 40; b++) {
    v[5 * b] = 100;
    v[5 * b + 1] = b == 20 ? 10 : 98;
    v[5 * b + 2] = 100;
    v[5 * b + 3] = 2;
    v[5 * b + 4] = 12 + (b % 2 == 0 ? 40 : 0) + (b == 19 ? 60 : 0);
  }
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_true(r.baseline_steady);
  assert_true(fabs(r.baseline_ratio - 0.98) < 1e-9);
  assert_true(r.recovered && r.recovery_s == 0.0);
  /* Growth just above a tenth of the offered calls (1000 over the baseline's 10 s) is not. */
  v[5 * 19 + 4] = 12 + 101; /* the start: bucket 9's 12 */
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_false(r.baseline_steady);
  v[5 * 19 + 4] = 12 + 100;
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_true(r.baseline_steady);
}

/* Review of issue 11, P1: a fleet that had collapsed before the trigger (metastable-storm's
 * retries at 800/s: 6 % of calls OK, the rest timing out, so nothing queues up and the calls
 * in flight stay flat) was judged against its collapse and "recovered" at once. 40 buckets,
 * offered 800, goodput 50, queue 100, in flight flat; the trigger [20 s, 21 s). */
static void test_recovery_collapsed_before_the_trigger_is_no_baseline(void **state) {
  (void)state;
  double v[200];
  for (int b = 0; b < 40; b++) {
    v[5 * b] = 800;
    v[5 * b + 1] = 50;
    v[5 * b + 2] = 1000;
    v[5 * b + 3] = 100;
    v[5 * b + 4] = 900;
  }
  const double *queues[1] = {v + 3};
  double allow[1] = {10};
  const char *names[1] = {"api"};
  expt_recovery_series s = {.bucket_ns = S,
                           .n_buckets = 40,
                           .stride = 5,
                           .offered = v,
                           .goodput = v + 1,
                           .latency = v + 2,
                           .n_queues = 1,
                           .queues = queues,
                           .queue_allow = allow,
                           .queue_names = names,
                           .in_flight = v + 4};
  expt_recovery_cfg cfg = rcfg;
  cfg.hold_ns = 5 * S;
  expt_recovery r;
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_false(r.baseline_steady);
  assert_false(r.recovered);
  assert_true(r.baseline_ratio == 1.0);
  /* The same fleet coming back after the trigger (every call OK, no queue) does recover. */
  for (int b = 25; b < 40; b++) {
    v[5 * b + 1] = 800;
    v[5 * b + 2] = 20;
    v[5 * b + 3] = 0;
  }
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_true(r.recovered && r.recovery_s == 4.0);
  /* A healthy history just at the threshold keeps its own baseline. */
  for (int b = 0; b < 40; b++)
    v[5 * b + 1] = 720;
  assert_int_equal(expt_recovery_judge_series(&cfg, 40 * S, 20 * S, 21 * S, &s, &r), 0);
  assert_true(r.baseline_steady);
  assert_true(fabs(r.baseline_ratio - 0.9) < 1e-9);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expt_recovery_counts_from_the_trigger_end_to_a_held_healthy_span),
      cmocka_unit_test(test_expt_recovery_not_judged_without_a_trigger_nor_held_health),
      cmocka_unit_test(test_expt_recovery_says_where_it_is_censored),
      cmocka_unit_test(test_recovery_waits_for_queue),
      cmocka_unit_test(test_recovery_waits_for_latency),
      cmocka_unit_test(test_recovery_overloaded_from_the_start_never_recovers),
      cmocka_unit_test(test_recovery_collapsed_before_the_trigger_is_no_baseline),
      cmocka_unit_test(test_recovery_last_criterion_never_back),
      cmocka_unit_test(test_recovery_explicit_trigger),
      cmocka_unit_test(test_recovery_waits_for_queue_in_a_run),
      cmocka_unit_test(test_recovery_explicit_trigger_in_a_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
