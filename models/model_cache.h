/*
 * model_cache.h: a look-aside cache in front of a service: at most `capacity` entries over
 * integer keys, least-recently-used eviction, an optional time to live, faults that flush
 * all or a fraction of it and that take capacity away, and per-key request coalescing (one
 * miss in flight per key, the others wait for it). It holds keys only, never values: what the
 * world needs is whether a request is a hit. Every operation costs O(1) except the flushes
 * and a capacity cut (O(entries dropped) or O(entries)); the entries are allocated once at
 * creation, 36 bytes each at a million entries (model_cache_bytes_for).
 */
#ifndef MODEL_CACHE_H
#define MODEL_CACHE_H

#include <gsl/gsl_rng.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "retry/retry.h"

typedef struct model_cache model_cache;

/* The most entries a cache may hold: entries are named by 32-bit indices, one value of which
 * means "none". */
#define MODEL_CACHE_MAX_CAPACITY ((size_t)UINT32_MAX - 1)

/* What a lookup found. */
typedef enum model_cache_result {
  MODEL_CACHE_HIT = 0,   /* the key is cached and fresh: answer at the cache's latency */
  MODEL_CACHE_MISS,      /* go to the backend; on success call model_cache_fill. Returned when
                          * coalescing is off, or when its bookkeeping could not grow */
  MODEL_CACHE_MISS_LEAD, /* coalescing: the first miss of the key now in flight. The caller
                          * goes to the backend and must then call model_cache_fill (success)
                          * or model_cache_abandon (failure, timeout) exactly once */
  MODEL_CACHE_MISS_WAIT  /* coalescing: a miss of the key is in flight. The caller registers
                          * with model_cache_wait_add and is released when the lead ends */
} model_cache_result;

/* Called once for each waiter of a key when its lead ends, in the order the waiters were
 * added: filled is true after model_cache_fill (the key is now cached: the waiter may be
 * answered as a hit) and false after model_cache_abandon (it must go to the backend itself,
 * or fail). The call may use the cache, the same key included (a lookup then sees the new
 * state; a waiter added to the key now is not released by this round). */
typedef void (*model_cache_release_fn)(void *waiter, bool filled, void *ctx);

typedef struct model_cache_config {
  size_t capacity;                /* entries, 1 .. MODEL_CACHE_MAX_CAPACITY: the memory held */
  int64_t ttl_ns;                 /* an entry's time to live; 0: entries never expire */
  bool coalesce;                  /* one miss in flight per key (MISS_LEAD / MISS_WAIT) */
  size_t inflight_reserve;        /* coalescing: in-flight keys and waiters room at creation
                                   * (0: 64); both grow by doubling past it */
  model_cache_release_fn release; /* coalescing: required; how waiters are let go */
  void *release_ctx;              /* passed to release (borrowed, not copied) */
} model_cache_config;

/* Counters since creation, for the time series. Every lookup counts once in hits or misses;
 * hit ratio = hits / (hits + misses). */
typedef struct model_cache_counters {
  uint64_t hits;        /* lookups answered from the cache */
  uint64_t misses;      /* lookups that were not (MISS, MISS_LEAD and MISS_WAIT) */
  uint64_t coalesced;   /* of the misses, MISS_WAIT: they did not reach the backend */
  uint64_t fills;       /* model_cache_fill calls that cached the key (capacity > 0) */
  uint64_t evictions;   /* entries dropped as least recently used: by a fill when full, or
                         * by model_cache_set_capacity */
  uint64_t expirations; /* entries found past their TTL by a lookup, and dropped */
  uint64_t flushed;     /* entries dropped by model_cache_flush and model_cache_flush_fraction */
  uint64_t abandoned;   /* leads ended by model_cache_abandon */
  uint64_t deleted;     /* entries dropped by model_cache_delete */
} model_cache_counters;

/* {==================================================================
 * Life cycle
 * =================================================================== */

/* Returns the bytes model_cache_create allocates for `capacity` entries without coalescing
 * (with it, add about 40 bytes per in-flight key and 16 per waiter, which grow with load):
 * for the world's memory estimate. 32 bytes an entry plus 4 a hash bucket, buckets the power
 * of two at or above capacity: 36.2 bytes an entry at 1e6, at most 40. */
size_t model_cache_bytes_for(size_t capacity);

/* Returns a new, empty cache for cfg (copied). alloc (copied; NULL: malloc/realloc/free)
 * supplies every byte: all entries and the hash table at creation, and the in-flight records
 * and waiters as they grow. NULL on bad cfg (RETRY_EINVAL: capacity 0 or too large, ttl_ns
 * < 0, coalescing without release) or no memory (RETRY_ENOMEM), details in err (may be NULL);
 * nothing is leaked. Returns a new object; free with model_cache_destroy. */
model_cache *model_cache_create(const model_cache_config *cfg, const retry_allocator *alloc,
                                retry_error *err);

/* Frees c and everything it holds; waiters still registered are dropped without a release
 * call (their owners must not wait on a destroyed cache). NULL is a no-op. */
void model_cache_destroy(model_cache *c);

/* Returns the bytes c holds now (the table, and the in-flight pools as grown). */
size_t model_cache_bytes(const model_cache *c);

/* }================================================================== */

/* {==================================================================
 * Requests
 * =================================================================== */

/* Looks key up at now_ns (never earlier than a time c was given before). A fresh entry is a
 * HIT and becomes the most recently used. TTL convention: an entry filled at t is fresh while
 * now_ns < t + ttl_ns: a hit at t + ttl_ns - 1, a miss at t + ttl_ns, when it is dropped
 * (counted in expirations). Entries past their TTL that nobody looks up are not swept: they
 * hold their place until evicted as least recently used, as memcached's lazy expiry does.
 * A miss with coalescing off is MISS. With it, the first miss of a key not in flight is
 * MISS_LEAD (the key is now in flight), a miss of a key in flight is MISS_WAIT; when the
 * in-flight table cannot grow (no memory) the miss is MISS, not in flight. O(1). */
model_cache_result model_cache_lookup(model_cache *c, uint64_t key, int64_t now_ns);

/* Registers waiter (an opaque pointer, borrowed) on key, which must be in flight (a lookup
 * just returned MISS_WAIT for it: a bug otherwise, assert). It is released, after the waiters
 * registered before it, when the lead fills or abandons. Returns 0, or RETRY_ENOMEM when the
 * waiter pool could not grow: the waiter is not registered and the caller should treat its
 * request as a MISS of its own. O(1) amortized. */
int model_cache_wait_add(model_cache *c, uint64_t key, void *waiter);

/* Records a successful backend reply for key at now_ns: the key becomes the most recently
 * used entry, fresh until now_ns + ttl_ns (clamped at INT64_MAX), evicting the least
 * recently used entry when the cache is at its capacity; an entry already cached is
 * refreshed. With capacity 0 (all taken away) nothing is cached. When key is in flight, the
 * lead is over: its waiters are released with filled = true, in order. A fill of a key that
 * is not in flight (MISS, or a late fill) only caches it. Never allocates. O(1) plus the
 * waiters released. */
void model_cache_fill(model_cache *c, uint64_t key, int64_t now_ns);

/* Ends key's lead without caching it (the backend failed or the caller gave up): its
 * waiters are released with filled = false, in order. A key not in flight is a no-op (a
 * lead's second end). Never allocates. O(1) plus the waiters released. */
void model_cache_abandon(model_cache *c, uint64_t key);

/* Deletes key's entry, fresh or not, as a look-aside client deletes a value it read as
 * invalid (counted in deleted); a miss in flight for it stays in flight. Returns whether an
 * entry was there. Never allocates. O(1). */
bool model_cache_delete(model_cache *c, uint64_t key);

/* Returns whether key is cached and fresh at now_ns, without changing anything (no order, no
 * counter, no expiry): for tests and traces. */
bool model_cache_has(const model_cache *c, uint64_t key, int64_t now_ns);

/* Returns whether key has a miss in flight. */
bool model_cache_is_inflight(const model_cache *c, uint64_t key);

/* }================================================================== */

/* {==================================================================
 * Faults
 * =================================================================== */

/* Drops every entry (counted in flushed). Misses in flight stay in flight: a fill that lands
 * after the flush caches its key, as a late write to a restarted memcached would. O(entries). */
void model_cache_flush(model_cache *c);

/* Drops every entry as model_cache_flush does, without counting them in flushed: the cache
 * of a replica that starts afresh (a new process) is empty rather than flushed. Misses in
 * flight stay in flight. O(entries). */
void model_cache_clear(model_cache *c);

/* Drops each entry independently with probability fraction (0 <= fraction <= 1), drawing one
 * gsl_rng_uniform from r per entry in order from most to least recently used (so a seed gives
 * the same survivors); 0 draws nothing and drops nothing, 1 is model_cache_flush and draws
 * nothing. A random subset rather than a fixed count, because a fault that loses part of a
 * cache (a memcached node of several) loses keys regardless of their recency. Returns the
 * number dropped. O(entries). */
size_t model_cache_flush_fraction(model_cache *c, double fraction, gsl_rng *r);

/* Sets the capacity in force to capacity (0 .. the capacity created with: a bug otherwise,
 * assert). Cutting it evicts least recently used entries until the cache fits (counted in
 * evictions), O(entries evicted); raising it (restoring what a fault took) only lets later
 * fills cache more: the cache refills from the backend, nothing comes back. Memory is never
 * freed or allocated by it. */
void model_cache_set_capacity(model_cache *c, size_t capacity);

/* }================================================================== */

/* {==================================================================
 * Reading
 * =================================================================== */

/* Returns c's counters (borrowed: valid and current until c is destroyed). */
const model_cache_counters *model_cache_counters_get(const model_cache *c);

size_t model_cache_size(const model_cache *c);          /* entries cached now */
size_t model_cache_capacity(const model_cache *c);      /* the capacity in force */
size_t model_cache_capacity_max(const model_cache *c);  /* the capacity created with */
size_t model_cache_n_inflight(const model_cache *c);    /* keys with a miss in flight */
size_t model_cache_n_waiters(const model_cache *c);     /* waiters registered, all keys */

/* Copies up to n cached keys into keys, most recently used first, and returns how many were
 * copied (fresh or not: expiry is only checked by lookups). O(n). For tests and traces. */
size_t model_cache_keys_mru(const model_cache *c, uint64_t *keys, size_t n);

/* }================================================================== */

#endif /* MODEL_CACHE_H */
