/*
 * test_expt_agg.c: flattening run objects and aggregating them over replications, against values
 * computed by hand: metric names (edges, arrays, by_status), means and Student t intervals,
 * proportions, the censored recovery time and P(storm), Welch's interval, and pairing's gain on
 * correlated runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "expt/expt_agg.h"
#include "expt/expt_paired.h"

#define near(a, b, tol) assert_true(fabs((a) - (b)) < (tol))

static const char *const rep_json[] = {
    "{\"name\": \"x\", \"goodput_per_s\": 1, \"calls\": {\"ok\": 10, \"by_status\": {\"OK\": 10}},"
    " \"amplification\": {\"edges\": [{\"from\": \"web\", \"to\": \"api\", \"attempts\": 2}]},"
    " \"tags\": [5], \"recovery\": {\"recovered\": true, \"recovery_s\": 2.0}}",
    "{\"name\": \"x\", \"goodput_per_s\": 2, \"calls\": {\"ok\": 20, \"by_status\": {\"OK\": 18,"
    " \"UNAVAILABLE\": 2}}, \"amplification\": {\"edges\": [{\"from\": \"web\", \"to\": \"api\","
    " \"attempts\": 4}]}, \"tags\": [5], \"recovery\": {\"recovered\": false, \"recovery_s\": "
    "null}}",
    "{\"name\": \"x\", \"goodput_per_s\": 3, \"calls\": {\"ok\": 30, \"by_status\": {\"OK\": 30}},"
    " \"amplification\": {\"edges\": [{\"from\": \"web\", \"to\": \"api\", \"attempts\": 6}]},"
    " \"tags\": [5], \"recovery\": {\"recovered\": true, \"recovery_s\": 4.0}}"};

static void load_reps(json_t **runs) {
  for (size_t i = 0; i < 3; i++) {
    runs[i] = json_loads(rep_json[i], 0, NULL);
    assert_non_null(runs[i]);
  }
}

static void free_reps(json_t **runs, size_t n) {
  for (size_t i = 0; i < n; i++)
    json_decref(runs[i]);
}

typedef struct seen {
  char names[16][64];
  int kinds[16];
  size_t n;
} seen;

static void record(void *ctx, const char *name, expt_agg_kind kind, double value) {
  (void)value;
  seen *s = ctx;
  assert_true(s->n < 16);
  snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
  s->kinds[s->n++] = (int)kind;
}

/* Names join keys with '.', edges by [from->to], other arrays by [i]; strings are skipped. */
static void test_flatten_names(void **state) {
  (void)state;
  json_t *runs[3];
  load_reps(runs);
  seen s = {.n = 0};
  expt_agg_flatten(runs[1], record, &s);
  const char *want[] = {"goodput_per_s",
                        "calls.ok",
                        "calls.by_status.OK",
                        "calls.by_status.UNAVAILABLE",
                        "amplification.edges[web->api].attempts",
                        "tags[0]",
                        "recovery.recovered",
                        "recovery.recovery_s"};
  assert_int_equal(s.n, 8);
  for (size_t i = 0; i < 8; i++)
    assert_string_equal(s.names[i], want[i]);
  assert_int_equal(s.kinds[6], EXPT_AGG_BOOL);
  assert_int_equal(s.kinds[7], EXPT_AGG_NULL);
  assert_int_equal(s.kinds[0], EXPT_AGG_NUMBER);
  free_reps(runs, 3);
}

/* Means, t intervals (t(0.975, 2) = 4.302653), a status seen in one replication only (0 in the
 * others), proportions, and the censored recovery time. */
static void test_aggregate_known_values(void **state) {
  (void)state;
  json_t *runs[3];
  load_reps(runs);
  expt_agg_table *t = expt_agg_table_create((const json_t *const *)runs, 3);
  assert_non_null(t);
  assert_int_equal(expt_agg_table_n_reps(t), 3);
  /* Replication 1 adds UNAVAILABLE after replication 0's seven metrics: first-met order. */
  assert_int_equal(expt_agg_table_n_metrics(t), 8);
  assert_string_equal(expt_agg_table_name(t, 7), "calls.by_status.UNAVAILABLE");
  long u = expt_agg_table_find(t, "calls.by_status.UNAVAILABLE");
  assert_int_equal(u, 7);
  assert_true(expt_agg_table_values(t, 7)[0] == 0.0 && expt_agg_table_values(t, 7)[1] == 2.0);
  assert_int_equal(expt_agg_table_find(t, "nope"), -1);

  json_t *o = expt_agg_object("v", t, (const json_t *const *)runs, NULL, NULL, 0.95);
  assert_non_null(o);
  assert_string_equal(json_string_value(json_object_get(o, "variant")), "v");
  assert_int_equal(json_integer_value(json_object_get(o, "n")), 3);
  near(json_number_value(json_object_get(o, "goodput_per_s")), 2.0, 1e-12);
  near(json_number_value(json_object_get(json_object_get(o, "calls"), "ok")), 20.0, 1e-12);
  /* The string stays as replication 0 had it. */
  assert_string_equal(json_string_value(json_object_get(o, "name")), "x");
  json_t *edge = json_array_get(json_object_get(json_object_get(o, "amplification"), "edges"), 0);
  near(json_number_value(json_object_get(edge, "attempts")), 4.0, 1e-12);
  json_t *rec = json_object_get(o, "recovery");
  near(json_number_value(json_object_get(rec, "recovered")), 0.666667, 1e-9);
  /* One replication never recovered: its recovery time is censored, not averaged away. */
  assert_true(json_is_null(json_object_get(rec, "recovery_s")));
  json_t *rsi = json_object_get(json_object_get(o, "intervals"), "recovery.recovery_s");
  assert_int_equal(json_integer_value(json_object_get(rsi, "n")), 2);
  assert_int_equal(json_integer_value(json_object_get(rsi, "n_censored")), 1);
  assert_string_equal(json_string_value(json_object_get(rsi, "over")),
                      "replications with a value only");
  near(json_number_value(json_object_get(rsi, "mean")), 3.0, 1e-12);
  assert_null(json_object_get(json_object_get(json_object_get(o, "intervals"), "goodput_per_s"),
                              "n_censored"));

  json_t *iv = json_object_get(json_object_get(o, "intervals"), "goodput_per_s");
  assert_int_equal(json_integer_value(json_object_get(iv, "n")), 3);
  near(json_number_value(json_object_get(iv, "sd")), 1.0, 1e-12);
  near(json_number_value(json_object_get(iv, "half_width")), 4.302653 / sqrt(3.0), 1e-5);
  near(json_number_value(json_object_get(iv, "lo")), 2 - 4.302653 / sqrt(3.0), 1e-5);
  json_t *un = json_object_get(json_object_get(o, "intervals"), "calls.by_status.UNAVAILABLE");
  near(json_number_value(json_object_get(un, "mean")), 2.0 / 3, 1e-6);

  /* Wilson for 2 of 3 at 95 %: [0.207655, 0.938510]. */
  json_t *pr = json_object_get(json_object_get(o, "proportions"), "recovery.recovered");
  assert_int_equal(json_integer_value(json_object_get(pr, "k")), 2);
  near(json_number_value(json_object_get(pr, "lo")), 0.207655, 1e-5);
  near(json_number_value(json_object_get(pr, "hi")), 0.938510, 1e-5);
  assert_null(json_object_get(json_object_get(o, "proportions"), "goodput_per_s"));

  json_t *rs = json_object_get(o, "recovery_s");
  assert_int_equal(json_integer_value(json_object_get(rs, "n")), 3);
  assert_int_equal(json_integer_value(json_object_get(rs, "n_recovered")), 2);
  assert_int_equal(json_integer_value(json_object_get(rs, "n_censored")), 1);
  near(json_number_value(json_object_get(rs, "mean")), 3.0, 1e-12);
  /* Two of three recovered, by 2 s and 4 s: half of 3 had recovered at 4 s. */
  near(json_number_value(json_object_get(rs, "median")), 4.0, 1e-12);
  assert_null(json_object_get(rs, "median_note"));
  json_t *storm = json_object_get(o, "p_storm");
  assert_int_equal(json_integer_value(json_object_get(storm, "k")), 1);
  near(json_number_value(json_object_get(storm, "p")), 0.333333, 1e-9);
  assert_null(json_object_get(o, "paired"));
  json_decref(o);
  expt_agg_table_destroy(t);
  free_reps(runs, 3);
}

/* Most replications never recovered: the median is unknown, and says why; the mean is over the
 * one that did, labelled so. */
static void test_recovery_censored(void **state) {
  (void)state;
  const char *docs[] = {"{\"recovery\": {\"recovered\": false, \"recovery_s\": null}}",
                        "{\"recovery\": {\"recovered\": true, \"recovery_s\": 7.5}}",
                        "{\"recovery\": {\"recovered\": false, \"recovery_s\": null}}",
                        "{\"recovery\": {\"recovered\": false, \"recovery_s\": null}}"};
  json_t *runs[4];
  for (size_t i = 0; i < 4; i++)
    runs[i] = json_loads(docs[i], 0, NULL);
  expt_agg_table *t = expt_agg_table_create((const json_t *const *)runs, 4);
  expt_agg_recovery r;
  assert_true(expt_agg_recovery_of(t, 0.95, &r));
  assert_int_equal(r.n, 4);
  assert_int_equal(r.n_recovered, 1);
  assert_int_equal(r.n_censored, 3);
  assert_true(isnan(r.median));
  near(r.recovered.mean, 7.5, 1e-12);
  json_t *o = expt_agg_object(NULL, t, (const json_t *const *)runs, NULL, NULL, 0.95);
  json_t *rs = json_object_get(o, "recovery_s");
  assert_true(json_is_null(json_object_get(rs, "median")));
  assert_string_equal(json_string_value(json_object_get(rs, "median_note")),
                      "more than half never recovered");
  assert_string_equal(json_string_value(json_object_get(rs, "over")),
                      "recovered replications only");
  assert_true(json_is_null(json_object_get(rs, "half_width"))); /* one value: no spread */
  near(json_number_value(json_object_get(json_object_get(o, "p_storm"), "p")), 0.75, 1e-12);
  assert_null(json_object_get(o, "variant"));
  json_decref(o);
  expt_agg_table_destroy(t);
  free_reps(runs, 4);

  /* Kaplan-Meier's median is the ceil(n/2)-th recovery time of all n, not the middle of the
   * recovered ones: 3 of 5 recovered, by 1, 2 and 3 s, so half of 5 had recovered at 3 s. */
  const char *five[] = {"{\"recovery\": {\"recovered\": true, \"recovery_s\": 2}}",
                        "{\"recovery\": {\"recovered\": false, \"recovery_s\": null}}",
                        "{\"recovery\": {\"recovered\": true, \"recovery_s\": 3}}",
                        "{\"recovery\": {\"recovered\": true, \"recovery_s\": 1}}",
                        "{\"recovery\": {\"recovered\": false, \"recovery_s\": null}}"};
  json_t *runs5[5];
  for (size_t i = 0; i < 5; i++)
    runs5[i] = json_loads(five[i], 0, NULL);
  t = expt_agg_table_create((const json_t *const *)runs5, 5);
  assert_true(expt_agg_recovery_of(t, 0.95, &r));
  assert_int_equal(r.n_censored, 2);
  near(r.median, 3.0, 1e-12);
  expt_agg_table_destroy(t);
  free_reps(runs5, 5);

  /* An unjudged replication (no hold span fits after its trigger: recovered null) is neither
   * recovered nor a storm: left out of n and P(storm), counted in n_unjudged. */
  const char *three[] = {"{\"recovery\": {\"recovered\": true, \"recovery_s\": 2}}",
                         "{\"recovery\": {\"recovered\": null, \"recovery_s\": null,"
                         " \"unjudged\": true}}",
                         "{\"recovery\": {\"recovered\": false, \"recovery_s\": null}}"};
  json_t *runs3[3];
  for (size_t i = 0; i < 3; i++)
    runs3[i] = json_loads(three[i], 0, NULL);
  t = expt_agg_table_create((const json_t *const *)runs3, 3);
  assert_true(expt_agg_recovery_of(t, 0.95, &r));
  assert_int_equal(r.n, 2);
  assert_int_equal(r.n_unjudged, 1);
  assert_int_equal(r.n_censored, 1);
  o = expt_agg_object(NULL, t, (const json_t *const *)runs3, NULL, NULL, 0.95);
  near(json_number_value(json_object_get(json_object_get(o, "p_storm"), "p")), 0.5, 1e-12);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(o, "recovery_s"), "n_unjudged")), 1);
  json_decref(o);
  expt_agg_table_destroy(t);
  free_reps(runs3, 3);

  /* No recovery judgement (no trigger): no censored block, no P(storm). */
  json_t *plain = json_loads("{\"recovery\": null, \"x\": 1}", 0, NULL);
  t = expt_agg_table_create((const json_t *const *)&plain, 1);
  assert_false(expt_agg_recovery_of(t, 0.95, &r));
  o = expt_agg_object(NULL, t, (const json_t *const *)&plain, NULL, NULL, 0.95);
  assert_null(json_object_get(o, "p_storm"));
  assert_true(json_is_null(json_object_get(o, "recovery")));
  json_decref(o);
  expt_agg_table_destroy(t);
  json_decref(plain);
}

/* Welch on {1,2,3} vs {2,4,6,8}: difference -3, variance 1/3 + 5/3 = 2, df 4.0755 (by hand),
 * t(0.975, 4.0755) about 2.757: [-6.90, 0.90]. A pooled df (5) would give [-6.64, 0.64]. */
static void test_welch_known_values(void **state) {
  (void)state;
  const double a[] = {1, 2, 3}, b[] = {2, 4, 6, 8};
  double lo, hi;
  expt_agg_welch(a, 3, b, 4, 0.95, &lo, &hi);
  near(lo, -6.8996, 0.02);
  near(hi, 0.8996, 0.02);
  expt_agg_welch(a, 1, b, 4, 0.95, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
}

/* Two variants on the same seeds share the seed's variation (here large) and differ by about
 * 1: the paired interval excludes 0 and is far narrower than the unpaired one, which does not. */
static void test_paired_narrower_on_correlated_runs(void **state) {
  (void)state;
  const double common[] = {0, 10, -10, 20, -20, 5, -5, 15, -15, 8};
  const double noise[] = {0.1, -0.2, 0.05, 0.15, -0.1, 0.0, 0.2, -0.05, -0.15, 0.1};
  json_t *va[10], *vb[10];
  for (size_t i = 0; i < 10; i++) {
    va[i] = json_pack("{s:f, s:{s:b}}", "goodput_per_s", 100 + common[i] + 1 + noise[i], "recovery",
                      "recovered", true);
    vb[i] = json_pack("{s:f, s:{s:b}}", "goodput_per_s", 100 + common[i], "recovery", "recovered",
                      i % 2 == 0);
  }
  expt_agg_table *ta = expt_agg_table_create((const json_t *const *)va, 10);
  expt_agg_table *tb = expt_agg_table_create((const json_t *const *)vb, 10);
  json_t *o = expt_agg_object("a", ta, (const json_t *const *)va, tb, "b", 0.95);
  json_t *paired = json_object_get(o, "paired");
  assert_string_equal(json_string_value(json_object_get(paired, "baseline")), "b");
  json_t *g = json_object_get(json_object_get(paired, "metrics"), "goodput_per_s");
  assert_non_null(g);
  double lo = json_number_value(json_object_get(g, "lo"));
  double hi = json_number_value(json_object_get(g, "hi"));
  double ulo = json_number_value(json_object_get(g, "unpaired_lo"));
  double uhi = json_number_value(json_object_get(g, "unpaired_hi"));
  near(json_number_value(json_object_get(g, "mean_diff")), 1.01, 1e-9);
  assert_true(lo > 0 && hi > lo);
  assert_true(ulo < 0 && uhi > 0);
  assert_true((hi - lo) * 10 < uhi - ulo);
  assert_true(json_is_true(json_object_get(g, "distinguishable")));
  /* Booleans pair as 1/0: 10 of 10 against 5 of 10 is +0.5. */
  json_t *r = json_object_get(json_object_get(paired, "metrics"), "recovery.recovered");
  near(json_number_value(json_object_get(r, "mean_diff")), 0.5, 1e-12);
  json_decref(o);
  /* Against itself every difference is 0, never distinguishable. */
  o = expt_agg_object("b", tb, (const json_t *const *)vb, tb, "b", 0.95);
  g = json_object_get(json_object_get(json_object_get(o, "paired"), "metrics"), "goodput_per_s");
  assert_true(json_is_false(json_object_get(g, "distinguishable")));
  json_decref(o);
  /* A difference that is the same in every pair (sd 0, an interval of no width) has no spread
   * for a t test; the exact sign test weighs it: 4 pairs of 4 on one side is p = 2 / 16, not
   * enough at 95 %, and 8 of 8 (p = 2 / 256) is (issue 23). */
  json_t *qa[8], *qb[8];
  for (size_t i = 0; i < 8; i++) {
    qa[i] = json_pack("{s:f}", "p99", 250.0 + (double)i);
    qb[i] = json_pack("{s:f}", "p99", 200.0 + (double)i);
  }
  expt_agg_table *tqa = expt_agg_table_create((const json_t *const *)qa, 4);
  expt_agg_table *tqb = expt_agg_table_create((const json_t *const *)qb, 4);
  o = expt_agg_object("a", tqa, (const json_t *const *)qa, tqb, "b", 0.95);
  g = json_object_get(json_object_get(json_object_get(o, "paired"), "metrics"), "p99");
  near(json_number_value(json_object_get(g, "mean_diff")), 50.0, 1e-12);
  assert_string_equal(json_string_value(json_object_get(g, "test")), "sign");
  near(json_number_value(json_object_get(g, "p_value")), 0.125, 1e-12);
  assert_true(json_is_false(json_object_get(g, "distinguishable")));
  json_decref(o);
  expt_agg_table_destroy(tqa);
  expt_agg_table_destroy(tqb);
  tqa = expt_agg_table_create((const json_t *const *)qa, 8);
  tqb = expt_agg_table_create((const json_t *const *)qb, 8);
  o = expt_agg_object("a", tqa, (const json_t *const *)qa, tqb, "b", 0.95);
  g = json_object_get(json_object_get(json_object_get(o, "paired"), "metrics"), "p99");
  assert_true(json_is_true(json_object_get(g, "distinguishable")));
  json_decref(o);
  expt_agg_table_destroy(tqa);
  expt_agg_table_destroy(tqb);
  free_reps(qa, 8);
  free_reps(qb, 8);
  expt_agg_table_destroy(ta);
  expt_agg_table_destroy(tb);
  free_reps(va, 10);
  free_reps(vb, 10);
}

/* n runs of {"recovery": {"recovered": b, "recovery_s": t}}: recovered when ok(i), with time
 * t(i) (null when not recovered). */
static void recovery_runs(json_t **v, size_t n, bool all, double t0) {
  for (size_t i = 0; i < n; i++) {
    bool ok = all || i % 3 == 0;
    v[i] = json_pack("{s:{s:b,s:o}}", "recovery", "recovered", ok, "recovery_s",
                     ok ? json_real(t0 + (double)i) : json_null());
  }
}

/* Issue 23: 0 of 30 recovered against 30 of 30, every pair differing by exactly -1 (zero
 * spread), was "not distinguishable". McNemar's exact test on the 30 discordant pairs says
 * p = 2 / 2^30. The recovery times, censored in 20 pairs of one side, are ordered (a time that
 * never came is the longer), not dropped; and the unpaired interval is over the same pairs. */
static void test_paired_mcnemar_and_censored_times(void **state) {
  (void)state;
  json_t *va[30], *vb[30];
  recovery_runs(va, 30, false, 1.0); /* recovered in 10 of 30 */
  recovery_runs(vb, 30, true, 0.0);  /* in all, 1 s faster in each shared pair */
  expt_agg_table *ta = expt_agg_table_create((const json_t *const *)va, 30);
  expt_agg_table *tb = expt_agg_table_create((const json_t *const *)vb, 30);
  json_t *o = expt_agg_object("a", ta, (const json_t *const *)va, tb, "b", 0.95);
  json_t *pm = json_object_get(json_object_get(o, "paired"), "metrics");
  json_t *r = json_object_get(pm, "recovery.recovered");
  assert_string_equal(json_string_value(json_object_get(r, "test")), "mcnemar");
  assert_int_equal(json_integer_value(json_object_get(r, "n_down")), 20);
  assert_int_equal(json_integer_value(json_object_get(r, "n_up")), 0);
  assert_true(json_is_true(json_object_get(r, "distinguishable")));
  json_t *t = json_object_get(pm, "recovery.recovery_s");
  assert_string_equal(json_string_value(json_object_get(t, "test")), "censored_sign");
  assert_int_equal(json_integer_value(json_object_get(t, "n_one_censored")), 20);
  assert_int_equal(json_integer_value(json_object_get(t, "n_both_censored")), 0);
  assert_int_equal(json_integer_value(json_object_get(t, "n_up")), 30);
  assert_true(json_is_true(json_object_get(t, "distinguishable")));
  /* The intervals: the 10 pairs with both times, +1 s each; unpaired on those same 10. */
  near(json_number_value(json_object_get(t, "mean_diff")), 1.0, 1e-12);
  double ulo = json_number_value(json_object_get(t, "unpaired_lo"));
  double uhi = json_number_value(json_object_get(t, "unpaired_hi"));
  assert_true(ulo < 1.0 && uhi > 1.0 && uhi - ulo < 40);
  json_t *pd = json_object_get(o, "paired");
  assert_int_equal(json_integer_value(json_object_get(pd, "n_flagged")), 2);
  assert_string_equal(json_string_value(json_object_get(pd, "adjust")), "none");
  json_decref(o);
  free_reps(va, 30);
  free_reps(vb, 30);
  expt_agg_table_destroy(ta);
  expt_agg_table_destroy(tb);
  /* 0 of 30 against 30 of 30, exactly the case. */
  json_t *za[30], *zb[30];
  for (size_t i = 0; i < 30; i++) {
    za[i] = json_pack("{s:b}", "ok", false);
    zb[i] = json_pack("{s:b}", "ok", true);
  }
  ta = expt_agg_table_create((const json_t *const *)za, 30);
  tb = expt_agg_table_create((const json_t *const *)zb, 30);
  o = expt_agg_object("a", ta, (const json_t *const *)za, tb, "b", 0.95);
  r = json_object_get(json_object_get(json_object_get(o, "paired"), "metrics"), "ok");
  near(json_number_value(json_object_get(r, "p_value")), 2.0 / 1073741824.0, 1e-13);
  assert_true(json_is_true(json_object_get(r, "distinguishable")));
  json_decref(o);
  free_reps(za, 30);
  free_reps(zb, 30);
  expt_agg_table_destroy(ta);
  expt_agg_table_destroy(tb);
}

/* Holm's step-down: p-values 0.01, 0.015, 0.024, 0.5 at 0.05 reject the first three (0.01 <=
 * 0.05 / 4, 0.015 <= 0.05 / 3, 0.024 <= 0.05 / 2); 0.0126, 0.02 stop at the first (over
 * 0.0125). Unadjusted, each of these but 0.5 and 0.9 would be flagged alone. */
static void test_paired_holm(void **state) {
  (void)state;
  const double p[] = {0.024, 0.5, 0.01, NAN, 0.015};
  bool rej[5];
  assert_int_equal(expt_paired_holm(p, 5, 0.05, rej), 0);
  assert_true(rej[0] && !rej[1] && rej[2] && !rej[3] && rej[4]);
  const double q[] = {0.0126, 0.02, 0.5, 0.9};
  assert_int_equal(expt_paired_holm(q, 4, 0.05, rej), 0);
  assert_true(!rej[0] && !rej[1] && !rej[2] && !rej[3]);
  near(expt_paired_sign_p(0, 30), 2.0 / 1073741824.0, 1e-13);
  near(expt_paired_sign_p(3, 3), 1.0, 1e-12);
}

/* Replications whose shapes differ (a null in one, an object in another) merge into one shape. */
static void test_shape_union(void **state) {
  (void)state;
  json_t *runs[2] = {json_loads("{\"s\": null, \"a\": [1]}", 0, NULL),
                     json_loads("{\"s\": {\"h\": 4}, \"a\": [3, 5]}", 0, NULL)};
  expt_agg_table *t = expt_agg_table_create((const json_t *const *)runs, 2);
  json_t *o = expt_agg_object(NULL, t, (const json_t *const *)runs, NULL, NULL, 0.9);
  near(json_number_value(json_object_get(json_object_get(o, "s"), "h")), 4.0, 1e-12);
  json_t *a = json_object_get(o, "a");
  assert_int_equal(json_array_size(a), 2);
  near(json_number_value(json_array_get(a, 0)), 2.0, 1e-12);
  near(json_number_value(json_array_get(a, 1)), 5.0, 1e-12);
  json_decref(o);
  expt_agg_table_destroy(t);
  free_reps(runs, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flatten_names),
      cmocka_unit_test(test_aggregate_known_values),
      cmocka_unit_test(test_recovery_censored),
      cmocka_unit_test(test_welch_known_values),
      cmocka_unit_test(test_paired_narrower_on_correlated_runs),
      cmocka_unit_test(test_paired_mcnemar_and_censored_times),
      cmocka_unit_test(test_paired_holm),
      cmocka_unit_test(test_shape_union),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
