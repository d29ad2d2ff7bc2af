/*
 * test_model_cache_world.c: look-aside caches in a running world (model_cache_world.c): the
 * hit ratio uniform keys imply, a flush emptying the cache at its instant, coalescing of
 * concurrent misses on one key, every attempt of a logical request carrying its key, and the
 * memory estimate of a cache of a million entries. Caches of scope replica: each replica's
 * the hit ratio of its own, a scale-up's new replicas starting cold, a replica removed and
 * added again starting empty, and their memory counted per replica.
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

#include "models/model_cache.h"
#include "models/model_cache_world.h"
#include "models/model_estimate.h"
#include "tests/support/world.h"

/* The value of column name in bucket b (the row starting at b x bucket). */
static double ts_at(const model_timeseries *ts, const char *name, size_t b) {
  int col = test_ts_col(ts, name);
  assert_true(col >= 0);
  assert_true(b < ts->n_buckets);
  return ts->values[b * ts->n_columns + (size_t)col];
}

/* Uniform keys over N = 1000, a cache of 200 and no TTL: once full, LRU holds 200 distinct
 * keys whatever the order, so a lookup hits with probability exactly 200 / 1000. After a 5 s
 * warm-up (about 1,000 fills needed at most: the cache is full in about 250 ms), 20,000
 * lookups: the hit ratio is within 5 standard deviations of 0.2 (sd 0.0028). */
static void test_cache_world_uniform_hit_ratio_is_capacity_over_n(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '25s', 'warmup': '5s', 'services': {'db': {'service_time': '1ms',"
                "   'workers': 8, 'cache': {'keys': {'dist': 'uniform', 'n': 1000},"
                "   'capacity': 200}}},"
                " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}",
                7);
  const model_service_stats *s = test_svc(x.r, "db");
  assert_true(s->has_cache);
  double looks = (double)(s->cache_hits + s->cache_misses);
  assert_true(looks > 18000 && looks < 22000);
  double p = (double)s->cache_hits / looks, sd = sqrt(0.2 * 0.8 / looks);
  assert_true(fabs(p - 0.2) < 5 * sd);
  /* Misses, and only they, reach a worker; every call is answered OK. */
  assert_int_equal(s->served, s->cache_misses);
  assert_int_equal(x.r->calls_failed, 0);
  assert_int_equal(s->cache_expirations, 0);
  test_run_free(&x);
}

/* A cache as large as the key space is all hits once warm; a full flush at 10 s empties it,
 * so the bucket right after (100 ms, about 100 lookups, each miss refilling one key of 1,000)
 * sees a hit ratio near 0, and the ones before near 1. */
static void test_cache_world_flush_drops_the_hit_ratio(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '12s', 'bucket': '100ms', 'services': {'db': {"
                "   'service_time': '1ms', 'workers': 8,"
                "   'cache': {'keys': {'dist': 'uniform', 'n': 1000}, 'capacity': 1000},"
                "   'faults': [{'kind': 'cache_flush', 'start': '10s'}]}},"
                " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}",
                3);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "db_cache_hit_ratio", 99) > 0.95);
  assert_true(ts_at(ts, "db_cache_hit_ratio", 100) < 0.1);
  assert_int_equal(test_svc(x.r, "db")->cache_flushed, 1000);
  /* The flush is marked in its bucket alone. */
  assert_true(ts_at(ts, "faults_active", 100) == 1);
  assert_true(ts_at(ts, "faults_active", 101) == 0);
  test_run_free(&x);
}

/* A capacity cut from 1,000 entries (all the keys) to 100 in [5 s, 8 s): the hit ratio falls
 * to 100 / 1000 while it holds (about 1,000 lookups a bucket: sd 0.01), and once it ends the
 * capacity is back but not the entries, so the next bucket is between the two (refilled by
 * its misses alone). */
static void test_cache_world_capacity_cut_and_refill(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '10s', 'services': {'db': {'service_time': '1ms', 'workers': 8,"
                "   'cache': {'keys': {'dist': 'uniform', 'n': 1000}, 'capacity': 1000},"
                "   'faults': [{'kind': 'cache_capacity', 'capacity': 100, 'start': '5s',"
                "               'end': '8s'}]}},"
                " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}",
                11);
  const model_timeseries *ts = &x.r->ts;
  assert_true(ts_at(ts, "db_cache_hit_ratio", 4) > 0.95);
  assert_true(fabs(ts_at(ts, "db_cache_hit_ratio", 6) - 0.1) < 0.05);
  double after = ts_at(ts, "db_cache_hit_ratio", 8);
  assert_true(after > 0.2 && after < 0.9);
  assert_true(test_svc(x.r, "db")->cache_evictions >= 900);
  test_run_free(&x);
}

/* Ten calls at once on one key (n = 1) in front of a backend that takes 1 s: with
 * coalescing, one miss goes to the backend and nine wait for it, then are answered from the
 * cache; without, all ten go. */
static void test_cache_world_coalescing_sends_one_miss(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '3s', 'services': {'db': {'service_time': '1s', 'workers': 20,"
      "   'cache': {'keys': {'dist': 'uniform', 'n': 1}, 'capacity': 10, 'coalesce': %s}}},"
      " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'], 'count': 10,"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  char text[512];
  test_run x;
  snprintf(text, sizeof text, fmt, "true");
  test_run_text(&x, text, 1);
  const model_service_stats *s = test_svc(x.r, "db");
  assert_int_equal(x.r->calls_ok, 10);
  assert_int_equal(s->served, 1);
  assert_int_equal(s->cache_misses, 10);
  assert_int_equal(s->cache_coalesced, 9);
  assert_int_equal(s->cache_fills, 1);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "false");
  test_run_text(&x, text, 1);
  s = test_svc(x.r, "db");
  assert_int_equal(x.r->calls_ok, 10);
  assert_int_equal(s->served, 10);
  assert_int_equal(s->cache_coalesced, 0);
  test_run_free(&x);
}

/* Every attempt of one logical request has its key: each call's hedge (sent 10 ms in, while
 * the first attempt's miss is in flight for 100 ms) finds that key in flight and waits for
 * it, among 10^12 keys where two calls never share one. So coalesced misses equal hedges,
 * and the backend serves one request per call. */
static void test_cache_world_attempts_share_their_key(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '2s', 'services': {'db': {'service_time': '100ms', 'workers': 50,"
                "   'cache': {'keys': {'dist': 'uniform', 'n': 1000000000000},"
                "   'capacity': 1000, 'coalesce': true}}},"
                " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '100/s'},"
                "   'policy': {'methodConfig': [{'name': [{}], 'hedgingPolicy': {'maxAttempts': 2,"
                "     'hedgingDelay': '0.01s'}}]}}}}",
                5);
  const model_service_stats *s = test_svc(x.r, "db");
  assert_true(x.r->hedges > 100);
  assert_int_equal(s->cache_coalesced, x.r->hedges);
  assert_int_equal(s->served, x.r->calls_started);
  assert_int_equal(s->cache_hits, 0);
  test_run_free(&x);
}

/* A cache of a million entries is counted in the memory estimate: tens of MB (36 bytes an
 * entry and the hash table), on top of the same world without it. */
static void test_cache_world_estimate_counts_the_cache(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {'db': {'service_time': '1ms'%s}},"
      " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '10/s'}}}}";
  char text[512];
  snprintf(text, sizeof text, fmt,
           ", 'cache': {'keys': {'dist': 'zipf', 's': 1.1, 'n': 10000000}, 'capacity': 1000000}");
  expt_scenario *with = test_load(text);
  snprintf(text, sizeof text, fmt, "");
  expt_scenario *without = test_load(text);
  uint64_t a = model_world_estimate_bytes(expt_scenario_config(with, 0));
  uint64_t b = model_world_estimate_bytes(expt_scenario_config(without, 0));
  assert_true(a > b);
  assert_true(a - b >= model_cache_bytes_for(1000000));
  assert_true(a - b > UINT64_C(10000000) && a - b < UINT64_C(100000000));
  expt_scenario_destroy(with);
  expt_scenario_destroy(without);
}

/* {==================================================================
 * Scope replica: a cache in each replica
 * =================================================================== */

/* Runs scenario text (seed 1) with a progress callback that records, at each 1 s bucket's
 * end, the entries of each of service 0's replicas' caches: sizes[t][i] at t seconds. */
#define RC_MAX_T 40
#define RC_MAX_R 8
typedef struct rc_probe {
  model_world *w;
  size_t sizes[RC_MAX_T + 1][RC_MAX_R];
} rc_probe;

static void rc_progress(void *ctx, int64_t now_ns, int64_t end_ns) {
  (void)end_ns;
  rc_probe *p = ctx;
  int64_t t = now_ns / INT64_C(1000000000);
  if (t < 0 || t > RC_MAX_T) return;
  for (int32_t i = 0; i < RC_MAX_R; i++)
    p->sizes[t][i] = model_world_cache_size(p->w, 0, i);
}

static void rc_run(test_run *x, rc_probe *p, const char *text) {
  memset(x, 0, sizeof *x);
  memset(p, 0, sizeof *p);
  x->s = test_load(text);
  x->k = sim_kernel_create(0, NULL);
  assert_non_null(x->k);
  retry_error err;
  retry_error_clear(&err);
  x->w = model_world_create(expt_scenario_config(x->s, 0), x->k, 1, &err);
  assert_non_null(x->w);
  p->w = x->w;
  assert_int_equal(model_world_run(x->w, rc_progress, p, &err), 0);
  x->r = model_world_results(x->w);
}

/* The mean of a column over buckets [b0, b1]. */
static double ts_mean(const model_timeseries *ts, const char *name, size_t b0, size_t b1) {
  double sum = 0;
  for (size_t b = b0; b <= b1; b++)
    sum += ts_at(ts, name, b);
  return sum / (double)(b1 - b0 + 1);
}

/* Four replicas, each with a cache of 200 entries, uniform keys over 1,000 and no TTL: every
 * replica sees every key, so once full each holds 200 distinct keys and a lookup hits with
 * probability 200 / 1000, as one shared cache would; but the caches are four, each full
 * (200 entries each at the end, where one shared cache would hold 200 in all). 20,000
 * lookups after the warm-up: within 5 standard deviations of 0.2 (sd 0.0028). */
static void test_cache_world_replica_scope_hit_ratio_is_capacity_over_n(void **state) {
  (void)state;
  test_run x;
  rc_probe p;
  rc_run(&x, &p,
         "{'duration': '25s', 'warmup': '5s', 'services': {'db': {'service_time': '1ms',"
         "   'replicas': 4, 'workers': 8, 'cache': {'keys': {'dist': 'uniform', 'n': 1000},"
         "   'capacity': 200, 'scope': 'replica'}}},"
         " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
         "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}");
  const model_service_stats *s = test_svc(x.r, "db");
  assert_true(s->has_cache);
  double looks = (double)(s->cache_hits + s->cache_misses);
  assert_true(looks > 18000 && looks < 22000);
  double ratio = (double)s->cache_hits / looks, sd = sqrt(0.2 * 0.8 / looks);
  assert_true(fabs(ratio - 0.2) < 5 * sd);
  assert_int_equal(s->served, s->cache_misses);
  assert_int_equal(x.r->calls_failed, 0);
  for (int32_t i = 0; i < 4; i++) {
    assert_int_equal(p.sizes[20][i], 200);
    assert_int_equal(model_world_cache_size(x.w, 0, i), 200);
  }
  assert_int_equal(model_world_cache_size(x.w, 0, 4), 0); /* no such replica */
  test_run_free(&x);
}

/* A scale-up from 2 replicas to 4 at 15.5 s (started at once), keys uniform over 10,000 and
 * caches of 2,000 (ratio 0.2, about 2,000 lookups a bucket: sd 0.009). With scope replica the
 * two new replicas start empty and take half the requests: the buckets just after (16 and 17)
 * fall well below the steady ratio, and 10 s later it is back; their caches were empty as
 * they started (the probe at 15 s, before the scale-up, finds them empty, and nothing else
 * filled them). With scope service the one cache does not notice the new replicas. */
static void test_cache_world_replica_scope_scale_up_starts_cold(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '30s', 'bucket': '1s', 'services': {'db': {'service_time': '2ms',"
      "   'replicas': 2, 'workers': 8, 'scale': [{'at': '15.5s', 'replicas': 4}],"
      "   'cache': {'keys': {'dist': 'uniform', 'n': 10000}, 'capacity': 2000,"
      "   'scope': '%s'}}},"
      " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '2000/s'}}}}";
  char text[768];
  test_run x;
  rc_probe p;
  snprintf(text, sizeof text, fmt, "replica");
  rc_run(&x, &p, text);
  const model_timeseries *ts = &x.r->ts;
  double steady = ts_mean(ts, "db_cache_hit_ratio", 8, 14);
  assert_true(fabs(steady - 0.2) < 0.02);
  assert_true(ts_mean(ts, "db_cache_hit_ratio", 16, 17) < 0.75 * steady);
  assert_true(fabs(ts_mean(ts, "db_cache_hit_ratio", 25, 29) - steady) < 0.02);
  assert_int_equal(p.sizes[15][2], 0);
  assert_int_equal(p.sizes[15][3], 0);
  assert_int_equal(p.sizes[15][0], 2000);
  assert_true(p.sizes[16][2] > 0 && p.sizes[16][2] < 2000); /* filling, from empty */
  assert_int_equal(p.sizes[29][2], 2000);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "service");
  rc_run(&x, &p, text);
  ts = &x.r->ts;
  steady = ts_mean(ts, "db_cache_hit_ratio", 8, 14);
  assert_true(fabs(steady - 0.2) < 0.02);
  assert_true(ts_mean(ts, "db_cache_hit_ratio", 16, 17) > 0.85 * steady);
  test_run_free(&x);
}

/* A replica removed at 10.5 s keeps its cache while it is out (it is not picked), and when it
 * is added again at 15.5 s (serving 2 s later) its cache is empty: the probe at 16 s finds 0
 * entries where the one at 15 s found it full; it fills again once it serves. */
static void test_cache_world_replica_scope_readded_replica_starts_empty(void **state) {
  (void)state;
  test_run x;
  rc_probe p;
  rc_run(&x, &p,
         "{'duration': '25s', 'bucket': '1s', 'services': {'db': {'service_time': '2ms',"
         "   'replicas': 3, 'workers': 8, 'scale': [{'at': '10.5s', 'replicas': 2},"
         "   {'at': '15.5s', 'replicas': 3, 'startup_delay': '2s'}],"
         "   'cache': {'keys': {'dist': 'uniform', 'n': 1000}, 'capacity': 300,"
         "   'scope': 'replica'}}},"
         " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
         "   'arrival': {'kind': 'open', 'rate': '1500/s'}}}}");
  assert_int_equal(p.sizes[10][2], 300);
  assert_int_equal(p.sizes[15][2], 300); /* out of service, not emptied */
  assert_int_equal(p.sizes[16][2], 0);   /* added again: a new process */
  assert_int_equal(p.sizes[17][2], 0);   /* not serving before 17.5 s */
  assert_int_equal(p.sizes[16][0], 300); /* the others keep theirs */
  assert_int_equal(p.sizes[24][2], 300);
  /* Its emptying is no flush. */
  assert_int_equal(test_svc(x.r, "db")->cache_flushed, 0);
  test_run_free(&x);
}

/* A flush fault reaches every replica's cache: a half flush leaves about half of each. */
static void test_cache_world_replica_scope_flush_reaches_every_replica(void **state) {
  (void)state;
  test_run x;
  rc_probe p;
  rc_run(&x, &p,
         "{'duration': '12s', 'bucket': '1s', 'services': {'db': {'service_time': '1ms',"
         "   'replicas': 3, 'workers': 8,"
         "   'cache': {'keys': {'dist': 'uniform', 'n': 1000000}, 'capacity': 1000,"
         "   'scope': 'replica'},"
         "   'faults': [{'kind': 'cache_flush', 'start': '10.999999s', 'fraction': 0.5}]}},"
         " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
         "   'arrival': {'kind': 'open', 'rate': '1500/s'}}}}");
  /* 1,000 entries each before; 1,000 x 0.5 (sd 16) left, and a handful refilled after. */
  for (int32_t i = 0; i < 3; i++) {
    assert_int_equal(p.sizes[10][i], 1000);
    assert_true(p.sizes[11][i] > 400 && p.sizes[11][i] < 600);
  }
  int64_t flushed = test_svc(x.r, "db")->cache_flushed;
  assert_true(flushed > 1300 && flushed < 1700);
  test_run_free(&x);
}

/* Coalescing is per replica: ten calls at once on one key (n = 1), spread over two replicas
 * by round robin, make one miss at each replica's cache; the other eight wait for their own
 * replica's lead. */
static void test_cache_world_replica_scope_coalesces_per_replica(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '3s', 'services': {'db': {'service_time': '1s', 'workers': 20,"
                "   'replicas': 2, 'lb': 'round_robin',"
                "   'cache': {'keys': {'dist': 'uniform', 'n': 1}, 'capacity': 10,"
                "   'coalesce': true, 'scope': 'replica'}}},"
                " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'], 'count': 10,"
                "   'arrival': {'kind': 'script', 'at': ['0s']}}}}",
                1);
  const model_service_stats *s = test_svc(x.r, "db");
  assert_int_equal(x.r->calls_ok, 10);
  assert_int_equal(s->served, 2);
  assert_int_equal(s->cache_coalesced, 8);
  assert_int_equal(s->cache_fills, 2);
  assert_int_equal(model_world_cache_size(x.w, 0, 0), 1);
  assert_int_equal(model_world_cache_size(x.w, 0, 1), 1);
  test_run_free(&x);
}

/* The memory estimate counts a cache per replica the service may have (its scale events'
 * most, here 8). */
static void test_cache_world_replica_scope_estimate_counts_each_replica(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {'db': {'service_time': '1ms', 'replicas': 2,"
      "   'scale': [{'at': '0.5s', 'replicas': 8}],"
      "   'cache': {'keys': {'dist': 'uniform', 'n': 10000000}, 'capacity': 1000000,"
      "   'scope': '%s'}}},"
      " 'clients': {'c': {'target': 'db', 'methods': ['/d.D/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '10/s'}}}}";
  char text[640];
  snprintf(text, sizeof text, fmt, "replica");
  expt_scenario *rep = test_load(text);
  snprintf(text, sizeof text, fmt, "service");
  expt_scenario *svc = test_load(text);
  uint64_t a = model_world_estimate_bytes(expt_scenario_config(rep, 0));
  uint64_t b = model_world_estimate_bytes(expt_scenario_config(svc, 0));
  assert_true(a - b >= 7 * model_cache_bytes_for(1000000));
  assert_true(a - b < 8 * model_cache_bytes_for(1000000));
  expt_scenario_destroy(rep);
  expt_scenario_destroy(svc);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_world_uniform_hit_ratio_is_capacity_over_n),
      cmocka_unit_test(test_cache_world_flush_drops_the_hit_ratio),
      cmocka_unit_test(test_cache_world_capacity_cut_and_refill),
      cmocka_unit_test(test_cache_world_coalescing_sends_one_miss),
      cmocka_unit_test(test_cache_world_attempts_share_their_key),
      cmocka_unit_test(test_cache_world_estimate_counts_the_cache),
      cmocka_unit_test(test_cache_world_replica_scope_hit_ratio_is_capacity_over_n),
      cmocka_unit_test(test_cache_world_replica_scope_scale_up_starts_cold),
      cmocka_unit_test(test_cache_world_replica_scope_readded_replica_starts_empty),
      cmocka_unit_test(test_cache_world_replica_scope_flush_reaches_every_replica),
      cmocka_unit_test(test_cache_world_replica_scope_coalesces_per_replica),
      cmocka_unit_test(test_cache_world_replica_scope_estimate_counts_each_replica),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
