/*
 * test_model_cache.c: the look-aside cache. Hit ratios on a fixed seed: uniform keys reach
 * capacity / N within a binomial interval, Zipf keys reach Che's approximation of LRU and stay
 * below the top-C mass. Scripted sequences pin the LRU order, the TTL boundary, the flushes,
 * a capacity cut and restore, and coalescing (LEAD then WAIT, waiters released in order,
 * also from inside a release). Every allocation failure is clean; a million entries' bytes
 * are reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_cache.h"
#include "sim/sim_keys.h"
#include "tests/support/oom.h"

#define SEED 20261202UL

static gsl_rng *rng_new(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, seed);
  return r;
}

/* A release function that records the waiters it is given, in order. */
typedef struct released {
  int n;
  intptr_t who[4096];
  bool filled[4096];
  model_cache *cache;  /* for the reentrant test: a release that uses the cache */
  uint64_t key;        /* the key it looks up */
  int reenter;         /* 1: look the key up on each release; 2: also wait on it */
  model_cache_result seen[16];
} released;

static void on_release(void *waiter, bool filled, void *ctx) {
  released *r = ctx;
  assert_true(r->n < 4096);
  if (r->reenter > 0 && r->n < 16) {
    model_cache_result res = model_cache_lookup(r->cache, r->key, 0);
    r->seen[r->n] = res;
    if (res == MODEL_CACHE_MISS_WAIT && r->reenter == 2)
      assert_int_equal(model_cache_wait_add(r->cache, r->key, (void *)(intptr_t)(1000 + r->n)), 0);
  }
  r->who[r->n] = (intptr_t)waiter;
  r->filled[r->n] = filled;
  r->n++;
}

static model_cache *cache_new(size_t capacity, int64_t ttl_ns, bool coalesce, released *rel) {
  model_cache_config cfg = {.capacity = capacity, .ttl_ns = ttl_ns, .coalesce = coalesce,
                            .release = on_release, .release_ctx = rel};
  retry_error err;
  retry_error_clear(&err);
  model_cache *c = model_cache_create(&cfg, NULL, &err);
  assert_non_null(c);
  assert_int_equal(err.code, RETRY_OK);
  return c;
}

/* {==================================================================
 * Hit ratios
 * =================================================================== */

/* Runs warm + measure requests of keys drawn from k through c (a miss is filled at once, as
 * a successful backend reply would) and returns the hit ratio of the last `measure`. */
static double run_hit_ratio(model_cache *c, const sim_keys *k, long warm, long measure) {
  gsl_rng *r = rng_new(SEED);
  long hits = 0;
  for (long i = 0; i < warm + measure; i++) {
    uint64_t key = sim_keys_draw(k, r);
    model_cache_result res = model_cache_lookup(c, key, i);
    if (res == MODEL_CACHE_HIT)
      hits += i >= warm;
    else
      model_cache_fill(c, key, i);
  }
  gsl_rng_free(r);
  return (double)hits / (double)measure;
}

/* The test. Under independent uniform requests, once the cache holds C of the N keys
 * every request is a hit with probability exactly C / N whatever came before, so the hits of
 * M requests are Binomial(M, C / N): the interval is 4 standard deviations (two-sided level
 * 6e-5). Also with coalescing on (each lead filled at once), which must not change it. */
static void test_model_cache_uniform_keys_hit_capacity_over_n(void **state) {
  (void)state;
  const size_t caps[] = {1, 100, 900};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
    for (int co = 0; co <= 1; co++) {
      released rel = {0};
      model_cache *c = cache_new(caps[i], 0, co, &rel);
      sim_keys k;
      assert_int_equal(sim_keys_init(&k, SIM_KEYS_UNIFORM, 1000, 0, NULL), 0);
      const long m = 200000;
      double hr = run_hit_ratio(c, &k, 20000, m), p = sim_keys_top_mass(&k, caps[i]);
      double sd = sqrt(p * (1 - p) / (double)m);
      print_message("uniform N 1000 C %zu: hit ratio %.4f, capacity / N %.4f +- %.4f\n", caps[i], hr,
                    p, 4 * sd);
      assert_true(fabs(hr - p) <= 4 * sd);
      assert_int_equal(model_cache_size(c), caps[i]);
      assert_int_equal(model_cache_n_inflight(c), 0);
      const model_cache_counters *ct = model_cache_counters_get(c);
      assert_true(ct->hits + ct->misses == 220000 && ct->fills == ct->misses);
      assert_true(ct->evictions == ct->fills - caps[i]);
      model_cache_destroy(c);
    }
}

/* Che's approximation of LRU under independent requests: the characteristic time T solves
 * sum_i (1 - exp(-p_i T)) = C, and the hit ratio is sum_i p_i (1 - exp(-p_i T)). */
static double che_hit_ratio(const sim_keys *k, size_t cap) {
  double lo = 0, hi = 1;
  for (;;) {
    double occ = 0;
    for (uint64_t i = 0; i < k->n; i++)
      occ += -expm1(-sim_keys_prob(k, i) * hi);
    if (occ >= (double)cap) break;
    hi *= 2;
  }
  double hit = 0;
  for (int it = 0; it < 100; it++) {
    double t = (lo + hi) / 2, occ = 0;
    hit = 0;
    for (uint64_t i = 0; i < k->n; i++) {
      double p = sim_keys_prob(k, i), in = -expm1(-p * t);
      occ += in;
      hit += p * in;
    }
    if (occ < (double)cap)
      lo = t;
    else
      hi = t;
  }
  return hit;
}

/* Zipf keys. An LRU cache of C entries does not hold exactly the C most popular keys, so its
 * hit ratio lies below the top-C mass (LFU's, sim_keys_top_mass) by more than the binomial
 * interval, and matches Che's approximation (accurate to a few 1e-4 at these sizes) within
 * 4 binomial standard deviations plus 0.002 for the approximation itself. */
static void test_model_cache_zipf_keys_hit_che_and_below_top_c(void **state) {
  (void)state;
  const double ss[] = {0.8, 1.0, 1.2};
  for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++) {
    released rel = {0};
    model_cache *c = cache_new(500, 0, false, &rel);
    sim_keys k;
    assert_int_equal(sim_keys_init(&k, SIM_KEYS_ZIPF, 10000, ss[i], NULL), 0);
    const long m = 300000;
    double hr = run_hit_ratio(c, &k, 50000, m);
    double top = sim_keys_top_mass(&k, 500), che = che_hit_ratio(&k, 500);
    double sd = sqrt(top * (1 - top) / (double)m);
    print_message("zipf s %.1f N 10000 C 500: hit ratio %.4f, Che %.4f, top-C %.4f +- %.4f\n",
                  ss[i], hr, che, top, 4 * sd);
    assert_true(fabs(hr - che) <= 4 * sqrt(che * (1 - che) / (double)m) + 0.002);
    assert_true(hr < top - 4 * sd);
    model_cache_destroy(c);
  }
}

/* }================================================================== */

/* {==================================================================
 * Scripted behaviour
 * =================================================================== */

static void assert_mru(const model_cache *c, const uint64_t *want, size_t n) {
  uint64_t got[16];
  assert_int_equal(model_cache_keys_mru(c, got, 16), n);
  for (size_t i = 0; i < n; i++)
    assert_true(got[i] == want[i]);
}

static void test_model_cache_lru_order_is_exact(void **state) {
  (void)state;
  released rel = {0};
  model_cache *c = cache_new(3, 0, false, &rel);
  assert_int_equal(model_cache_lookup(c, 1, 0), MODEL_CACHE_MISS);
  model_cache_fill(c, 1, 0);
  model_cache_fill(c, 2, 1);
  model_cache_fill(c, 3, 2);
  assert_mru(c, (uint64_t[]){3, 2, 1}, 3);
  assert_int_equal(model_cache_lookup(c, 1, 3), MODEL_CACHE_HIT); /* 1 is the most recent */
  assert_mru(c, (uint64_t[]){1, 3, 2}, 3);
  model_cache_fill(c, 4, 4); /* full: 2, the least recently used, goes */
  assert_mru(c, (uint64_t[]){4, 1, 3}, 3);
  assert_false(model_cache_has(c, 2, 5));
  model_cache_fill(c, 3, 5); /* a fill of a cached key refreshes it, evicts nothing */
  assert_mru(c, (uint64_t[]){3, 4, 1}, 3);
  assert_int_equal(model_cache_lookup(c, 2, 6), MODEL_CACHE_MISS);
  model_cache_fill(c, 2, 6);
  assert_mru(c, (uint64_t[]){2, 3, 4}, 3);
  const model_cache_counters *ct = model_cache_counters_get(c);
  assert_true(ct->hits == 1 && ct->misses == 2 && ct->fills == 6 && ct->evictions == 2);
  /* Keys spread over the buckets whatever their values: large and colliding-looking keys. */
  model_cache_fill(c, UINT64_MAX, 7);
  model_cache_fill(c, UINT64_C(1) << 63, 8);
  assert_mru(c, (uint64_t[]){UINT64_C(1) << 63, UINT64_MAX, 2}, 3);
  model_cache_destroy(c);
}

/* An entry filled at t is a hit at t + ttl - 1 and a miss at t + ttl, when it is dropped. */
static void test_model_cache_ttl_expires_exactly_at_fill_plus_ttl(void **state) {
  (void)state;
  released rel = {0};
  model_cache *c = cache_new(4, 100, false, &rel);
  model_cache_fill(c, 7, 1000);
  assert_true(model_cache_has(c, 7, 1099));
  assert_false(model_cache_has(c, 7, 1100));
  assert_int_equal(model_cache_lookup(c, 7, 1099), MODEL_CACHE_HIT); /* a hit does not renew */
  assert_int_equal(model_cache_lookup(c, 7, 1100), MODEL_CACHE_MISS);
  assert_int_equal(model_cache_size(c), 0);
  assert_int_equal(model_cache_counters_get(c)->expirations, 1);
  model_cache_fill(c, 7, 1100); /* a refill is fresh for another ttl */
  assert_int_equal(model_cache_lookup(c, 7, 1199), MODEL_CACHE_HIT);
  assert_int_equal(model_cache_lookup(c, 7, 1200), MODEL_CACHE_MISS);
  /* A fill near the end of time is clamped, not wrapped. */
  model_cache_fill(c, 8, INT64_MAX - 5);
  assert_int_equal(model_cache_lookup(c, 8, INT64_MAX - 1), MODEL_CACHE_HIT);
  model_cache_destroy(c);
  /* Without a TTL nothing expires. */
  c = cache_new(4, 0, false, &rel);
  model_cache_fill(c, 7, 0);
  assert_int_equal(model_cache_lookup(c, 7, INT64_MAX - 1), MODEL_CACHE_HIT);
  model_cache_destroy(c);
}

static void test_model_cache_flush_all_and_a_fraction(void **state) {
  (void)state;
  released rel = {0};
  model_cache *c = cache_new(10000, 0, true, &rel);
  for (uint64_t k = 0; k < 10000; k++)
    model_cache_fill(c, k, 0);
  assert_int_equal(model_cache_lookup(c, 123456, 0), MODEL_CACHE_MISS_LEAD);
  model_cache_flush(c);
  assert_int_equal(model_cache_size(c), 0);
  assert_int_equal(model_cache_counters_get(c)->flushed, 10000);
  assert_int_equal(model_cache_lookup(c, 5, 1), MODEL_CACHE_MISS_LEAD);
  assert_true(model_cache_is_inflight(c, 123456)); /* a miss in flight survives the flush */
  model_cache_fill(c, 123456, 2);                  /* and its late fill caches the key */
  assert_int_equal(model_cache_lookup(c, 123456, 3), MODEL_CACHE_HIT);
  model_cache_abandon(c, 5);
  model_cache_flush(c);

  /* A fraction 0.3 of 10000: Binomial(10000, 0.3) dropped (4 sd = 183), the survivors are
   * exactly the keys still cached, and one seed gives the same survivors. */
  size_t dropped[2];
  uint64_t survivors[2][64];
  for (int run = 0; run < 2; run++) {
    for (uint64_t k = 0; k < 10000; k++)
      model_cache_fill(c, k, 0);
    gsl_rng *r = rng_new(SEED);
    dropped[run] = model_cache_flush_fraction(c, 0.3, r);
    gsl_rng_free(r);
    assert_int_equal(model_cache_size(c), 10000 - dropped[run]);
    size_t n = model_cache_keys_mru(c, survivors[run], 64);
    for (size_t i = 0; i < n; i++)
      assert_true(model_cache_has(c, survivors[run][i], 0));
    model_cache_flush(c);
  }
  print_message("flush_fraction 0.3 of 10000 dropped %zu\n", dropped[0]);
  assert_true(fabs((double)dropped[0] - 3000) <= 4 * sqrt(10000 * 0.3 * 0.7));
  assert_int_equal(dropped[0], dropped[1]);
  assert_memory_equal(survivors[0], survivors[1], sizeof survivors[0]);
  /* 0 drops nothing and draws nothing; 1 drops all and draws nothing. */
  for (uint64_t k = 0; k < 100; k++)
    model_cache_fill(c, k, 0);
  gsl_rng *r = rng_new(SEED), *copy = rng_new(SEED);
  assert_int_equal(model_cache_flush_fraction(c, 0, r), 0);
  assert_int_equal(model_cache_flush_fraction(c, 1, r), 100);
  assert_int_equal(model_cache_size(c), 0);
  assert_true(gsl_rng_get(r) == gsl_rng_get(copy));
  gsl_rng_free(r);
  gsl_rng_free(copy);
  model_cache_destroy(c);
}

static void test_model_cache_capacity_cut_evicts_lru_and_restore_refills(void **state) {
  (void)state;
  released rel = {0};
  model_cache *c = cache_new(5, 0, false, &rel);
  for (uint64_t k = 1; k <= 5; k++)
    model_cache_fill(c, k, 0);
  assert_int_equal(model_cache_lookup(c, 1, 1), MODEL_CACHE_HIT);
  assert_int_equal(model_cache_lookup(c, 2, 1), MODEL_CACHE_HIT);
  assert_mru(c, (uint64_t[]){2, 1, 5, 4, 3}, 5);
  model_cache_set_capacity(c, 2); /* 3, 4, 5 were the least recently used */
  assert_mru(c, (uint64_t[]){2, 1}, 2);
  assert_int_equal(model_cache_counters_get(c)->evictions, 3);
  assert_int_equal(model_cache_capacity(c), 2);
  model_cache_fill(c, 6, 2);
  assert_mru(c, (uint64_t[]){6, 2}, 2);
  model_cache_set_capacity(c, 0); /* everything taken away: nothing is cached */
  assert_int_equal(model_cache_size(c), 0);
  model_cache_fill(c, 7, 3);
  assert_int_equal(model_cache_lookup(c, 7, 3), MODEL_CACHE_MISS);
  assert_int_equal(model_cache_counters_get(c)->fills, 6);
  model_cache_set_capacity(c, 5); /* restored: empty, and refills up to 5 */
  assert_int_equal(model_cache_size(c), 0);
  for (uint64_t k = 10; k < 17; k++)
    model_cache_fill(c, k, 4);
  assert_mru(c, (uint64_t[]){16, 15, 14, 13, 12}, 5);
  assert_int_equal(model_cache_capacity_max(c), 5);
  model_cache_destroy(c);
}

/* }================================================================== */

/* {==================================================================
 * Coalescing
 * =================================================================== */

static void test_model_cache_coalescing_lead_then_wait_released_in_order(void **state) {
  (void)state;
  released rel = {0};
  model_cache *c = cache_new(8, 0, true, &rel);
  assert_int_equal(model_cache_lookup(c, 42, 0), MODEL_CACHE_MISS_LEAD);
  for (intptr_t w = 1; w <= 3; w++) {
    assert_int_equal(model_cache_lookup(c, 42, 0), MODEL_CACHE_MISS_WAIT);
    assert_int_equal(model_cache_wait_add(c, 42, (void *)w), 0);
  }
  assert_int_equal(model_cache_lookup(c, 43, 0), MODEL_CACHE_MISS_LEAD); /* other keys lead */
  assert_int_equal(model_cache_n_inflight(c), 2);
  assert_int_equal(model_cache_n_waiters(c), 3);
  model_cache_fill(c, 42, 1);
  assert_int_equal(rel.n, 3);
  for (int i = 0; i < 3; i++)
    assert_true(rel.who[i] == i + 1 && rel.filled[i]);
  assert_int_equal(model_cache_lookup(c, 42, 2), MODEL_CACHE_HIT);
  assert_false(model_cache_is_inflight(c, 42));
  /* Abandon: the waiters go with filled = false, the key is not cached, the next miss leads. */
  assert_int_equal(model_cache_lookup(c, 43, 2), MODEL_CACHE_MISS_WAIT);
  assert_int_equal(model_cache_wait_add(c, 43, (void *)(intptr_t)9), 0);
  model_cache_abandon(c, 43);
  model_cache_abandon(c, 43); /* a second end is a no-op */
  assert_true(rel.n == 4 && rel.who[3] == 9 && !rel.filled[3]);
  assert_int_equal(model_cache_lookup(c, 43, 3), MODEL_CACHE_MISS_LEAD);
  const model_cache_counters *ct = model_cache_counters_get(c);
  assert_true(ct->coalesced == 4 && ct->abandoned == 1 && ct->misses == 7 && ct->hits == 1);
  assert_int_equal(model_cache_n_waiters(c), 0);
  model_cache_destroy(c); /* 43 still in flight: dropped without release */
  assert_int_equal(rel.n, 4);
}

/* A release may use the cache: after a fill each waiter's lookup hits; after an abandon the
 * first waiter's lookup leads again and the next ones wait on it (and are not released in
 * this round). */
static void test_model_cache_coalescing_release_may_reenter(void **state) {
  (void)state;
  released rel = {0};
  model_cache *c = cache_new(8, 0, true, &rel);
  rel.cache = c;
  rel.key = 5;
  rel.reenter = 2;
  assert_int_equal(model_cache_lookup(c, 5, 0), MODEL_CACHE_MISS_LEAD);
  for (intptr_t w = 1; w <= 3; w++) {
    assert_int_equal(model_cache_lookup(c, 5, 0), MODEL_CACHE_MISS_WAIT);
    assert_int_equal(model_cache_wait_add(c, 5, (void *)w), 0);
  }
  model_cache_abandon(c, 5);
  assert_int_equal(rel.n, 3);
  assert_int_equal(rel.seen[0], MODEL_CACHE_MISS_LEAD);
  assert_int_equal(rel.seen[1], MODEL_CACHE_MISS_WAIT);
  assert_int_equal(rel.seen[2], MODEL_CACHE_MISS_WAIT);
  assert_int_equal(model_cache_n_waiters(c), 2); /* 1001 and 1002 wait on the new lead */
  rel.reenter = 1;
  model_cache_fill(c, 5, 1);
  assert_int_equal(rel.n, 5);
  assert_true(rel.who[3] == 1001 && rel.who[4] == 1002 && rel.filled[3] && rel.filled[4]);
  assert_int_equal(rel.seen[3], MODEL_CACHE_HIT);
  model_cache_destroy(c);
}

/* The pools grow past their reserve: 1000 keys in flight, 3000 waiters on one key, released
 * in order. */
static void test_model_cache_coalescing_pools_grow(void **state) {
  (void)state;
  released rel = {0};
  model_cache_config cfg = {.capacity = 2000, .coalesce = true, .inflight_reserve = 1,
                            .release = on_release, .release_ctx = &rel};
  model_cache *c = model_cache_create(&cfg, NULL, NULL);
  assert_non_null(c);
  size_t bytes0 = model_cache_bytes(c);
  for (uint64_t k = 0; k < 1000; k++)
    assert_int_equal(model_cache_lookup(c, k, 0), MODEL_CACHE_MISS_LEAD);
  for (intptr_t w = 0; w < 3000; w++) {
    assert_int_equal(model_cache_lookup(c, 500, 0), MODEL_CACHE_MISS_WAIT);
    assert_int_equal(model_cache_wait_add(c, 500, (void *)w), 0);
  }
  for (uint64_t k = 0; k < 1000; k++)
    assert_true(model_cache_is_inflight(c, k));
  assert_true(model_cache_bytes(c) > bytes0);
  for (uint64_t k = 0; k < 1000; k++)
    model_cache_fill(c, k, 1);
  assert_int_equal(rel.n, 3000);
  for (int i = 0; i < 3000; i++)
    assert_true(rel.who[i] == i);
  assert_int_equal(model_cache_n_inflight(c), 0);
  assert_int_equal(model_cache_size(c), 1000);
  model_cache_destroy(c);
}

/* }================================================================== */

/* {==================================================================
 * Memory and errors
 * =================================================================== */

/* A scripted workload that grows the coalescing pools; returns whether anything failed. */
static bool oom_workload(model_cache *c) {
  bool failed = false;
  for (uint64_t k = 0; k < 40; k++) {
    model_cache_result res = model_cache_lookup(c, k % 20, (int64_t)k);
    if (res == MODEL_CACHE_MISS) failed = true; /* the in-flight table could not grow */
    if (res == MODEL_CACHE_MISS_WAIT && model_cache_wait_add(c, k % 20, (void *)(intptr_t)k) != 0)
      failed = true;
  }
  for (uint64_t k = 0; k < 20; k++)
    model_cache_fill(c, k, 100);
  for (uint64_t k = 0; k < 20; k++)
    assert_int_equal(model_cache_lookup(c, k, 101), MODEL_CACHE_HIT);
  return failed;
}

static void test_model_cache_every_allocation_failure_is_clean(void **state) {
  (void)state;
  long fail = 0;
  for (;; fail++) {
    released rel = {0};
    test_oom o;
    retry_allocator a = test_oom_allocator(&o, fail);
    model_cache_config cfg = {.capacity = 64, .ttl_ns = 1000, .coalesce = true,
                              .inflight_reserve = 2, .release = on_release, .release_ctx = &rel};
    retry_error err;
    retry_error_clear(&err);
    model_cache *c = model_cache_create(&cfg, &a, &err);
    bool failed = c == NULL;
    if (c == NULL) {
      assert_int_equal(err.code, RETRY_ENOMEM);
    } else {
      failed = oom_workload(c);
      model_cache_destroy(c);
    }
    assert_int_equal(o.live, 0);
    if (!failed) break;
  }
  print_message("allocations failed one at a time: %ld\n", fail);
  assert_true(fail >= 6); /* create's five blocks, then growth of the pools */
}

static void test_model_cache_create_refuses_bad_config(void **state) {
  (void)state;
  released rel = {0};
  model_cache_config bad[] = {
      {.capacity = 0},
      {.capacity = MODEL_CACHE_MAX_CAPACITY + 1},
      {.capacity = 4, .ttl_ns = -1},
      {.capacity = 4, .coalesce = true},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    retry_error err;
    retry_error_clear(&err);
    assert_null(model_cache_create(&bad[i], NULL, &err));
    assert_int_equal(err.code, RETRY_EINVAL);
    assert_true(err.message[0] != '\0');
  }
  model_cache_config ok = {.capacity = 4, .coalesce = true, .release = on_release,
                           .release_ctx = &rel};
  model_cache *c = model_cache_create(&ok, NULL, NULL);
  assert_non_null(c);
  model_cache_destroy(c);
  model_cache_destroy(NULL);
}

/* A million entries fit in tens of MB: the bytes are measured, reported and bounded by 40 an
 * entry; filling them all and then a million more (each evicting) works. */
static void test_model_cache_million_entries_bytes(void **state) {
  (void)state;
  released rel = {0};
  const size_t cap = 1000000;
  model_cache *c = cache_new(cap, 0, false, &rel);
  size_t bytes = model_cache_bytes(c);
  assert_int_equal(bytes, model_cache_bytes_for(cap));
  print_message("a cache of %zu entries holds %zu bytes: %.2f bytes an entry\n", cap, bytes,
                (double)bytes / (double)cap);
  assert_true(bytes <= 40 * cap);
  for (uint64_t k = 0; k < 2 * cap; k++)
    model_cache_fill(c, k * 7919, 0);
  assert_int_equal(model_cache_size(c), cap);
  assert_int_equal(model_cache_counters_get(c)->evictions, cap);
  assert_true(model_cache_has(c, (2 * cap - 1) * 7919, 0));
  assert_false(model_cache_has(c, (cap - 1) * 7919, 0));
  assert_int_equal(model_cache_bytes(c), bytes); /* nothing allocated after creation */
  for (size_t n = 1; n <= (size_t)1 << 24; n = n * 3 + 1)
    assert_true(model_cache_bytes_for(n) <= 40 * n + 512);
  model_cache_destroy(c);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_cache_create_refuses_bad_config),
      cmocka_unit_test(test_model_cache_lru_order_is_exact),
      cmocka_unit_test(test_model_cache_ttl_expires_exactly_at_fill_plus_ttl),
      cmocka_unit_test(test_model_cache_flush_all_and_a_fraction),
      cmocka_unit_test(test_model_cache_capacity_cut_evicts_lru_and_restore_refills),
      cmocka_unit_test(test_model_cache_coalescing_lead_then_wait_released_in_order),
      cmocka_unit_test(test_model_cache_coalescing_release_may_reenter),
      cmocka_unit_test(test_model_cache_coalescing_pools_grow),
      cmocka_unit_test(test_model_cache_every_allocation_failure_is_clean),
      cmocka_unit_test(test_model_cache_million_entries_bytes),
      cmocka_unit_test(test_model_cache_uniform_keys_hit_capacity_over_n),
      cmocka_unit_test(test_model_cache_zipf_keys_hit_che_and_below_top_c),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
