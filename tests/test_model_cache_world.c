/*
 * test_model_cache_world.c: look-aside caches in a running world (model_cache_world.c): the
 * hit ratio uniform keys imply, a flush emptying the cache at its instant, coalescing of
 * concurrent misses on one key, every attempt of a logical request carrying its key, and the
 * memory estimate of a cache of a million entries.
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_world_uniform_hit_ratio_is_capacity_over_n),
      cmocka_unit_test(test_cache_world_flush_drops_the_hit_ratio),
      cmocka_unit_test(test_cache_world_capacity_cut_and_refill),
      cmocka_unit_test(test_cache_world_coalescing_sends_one_miss),
      cmocka_unit_test(test_cache_world_attempts_share_their_key),
      cmocka_unit_test(test_cache_world_estimate_counts_the_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
