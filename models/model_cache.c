/*
 * model_cache.c: the look-aside cache of model_cache.h. Owns one array of entries (allocated
 * at creation, never grown), a chained hash table over it, and the coalescing pools (in-flight
 * keys and their waiters, grown by doubling). Invariants: every used entry is in exactly one
 * hash chain and in the LRU list, every free entry only in the free list; n <= capacity <=
 * capacity_max; a key is in flight at most once, and never both in flight and free-listed.
 *
 * Layout: entries are named by 32-bit indices (NIL = none), so one entry is 32 bytes (key,
 * expiry, two LRU links, one chain link) and the buckets 4 bytes each. Rejected: open
 * addressing with tombstones (a churning LRU cache fills with them and needs rehashing, which
 * is O(N) at a random moment), and pointers for links (40 bytes an entry instead of 32).
 */
#include "models/model_cache.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "sim/sim_rng.h"

/* {==================================================================
 * Data
 * =================================================================== */

#define NIL UINT32_MAX
#define INFLIGHT_RESERVE_DEFAULT 64

typedef struct cache_entry {
  uint64_t key;       /* the key cached */
  int64_t expires_ns; /* fresh while now_ns < expires_ns (INT64_MAX: no TTL) */
  uint32_t newer;     /* LRU list: toward the most recently used, NIL at the head */
  uint32_t older;     /* toward the least recently used, NIL at the tail */
  uint32_t chain;     /* the next entry of this hash bucket; for a free entry, the next free */
  uint32_t unused;    /* padding, kept zero */
} cache_entry;
_Static_assert(sizeof(cache_entry) == 32, "a cache entry is 32 bytes (model_cache_bytes_for)");

/* A key with a miss in flight, and the FIFO of its waiters. */
typedef struct inflight {
  uint64_t key;  /* the key */
  uint32_t chain; /* the next record of this bucket; for a free record, the next free */
  uint32_t head;  /* the first waiter (NIL: none) */
  uint32_t tail;  /* the last waiter */
} inflight;

typedef struct waiter_node {
  void *waiter;  /* the caller's pointer (borrowed) */
  uint32_t next; /* the next waiter of the key, or the next free node */
} waiter_node;

struct model_cache {
  retry_allocator alloc;      /* every byte comes from it */
  model_cache_config cfg;     /* as created */
  cache_entry *entries;       /* capacity_max entries */
  uint32_t *buckets;          /* mask + 1 chain heads */
  uint64_t mask;              /* buckets - 1, a power of two minus one */
  uint32_t mru, lru;          /* the LRU list's ends (NIL when empty) */
  uint32_t free_head;         /* free entries */
  size_t n;                   /* entries in use */
  size_t capacity;            /* capacity in force (<= cfg.capacity) */
  model_cache_counters ctr;   /* counters */
  inflight *fl;               /* coalescing: fl_cap in-flight records */
  uint32_t *fl_buckets;       /* fl_mask + 1 chain heads */
  uint64_t fl_mask;           /* fl buckets - 1 */
  size_t fl_cap, n_fl;        /* records allocated, in use */
  uint32_t fl_free;           /* free records */
  waiter_node *wn;            /* wn_cap waiter nodes */
  size_t wn_cap, n_wn;        /* nodes allocated, in use */
  uint32_t wn_free;           /* free nodes */
};

static void *c_alloc(const model_cache *c, size_t size) {
  return c->alloc.malloc_fn(size, c->alloc.ctx);
}
static void c_free(const model_cache *c, void *p) {
  if (p != NULL) c->alloc.free_fn(p, c->alloc.ctx);
}

/* The splitmix64 finalizer: keys are often small consecutive integers, which must spread
 * over the buckets. */
static uint64_t hash_key(uint64_t x) {
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* The smallest power of two >= n (n >= 1). */
static uint64_t pow2_at_least(uint64_t n) {
  uint64_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

/* }================================================================== */

/* {==================================================================
 * The entry table and the LRU list
 * =================================================================== */

/* The chain head that holds key's entry, if any. */
static uint32_t *bucket_of(const model_cache *c, uint64_t key) {
  return &c->buckets[hash_key(key) & c->mask];
}

static uint32_t entry_find(const model_cache *c, uint64_t key) {
  uint32_t i = *bucket_of(c, key);
  while (i != NIL && c->entries[i].key != key)
    i = c->entries[i].chain;
  return i;
}

static void lru_unlink(model_cache *c, uint32_t i) {
  cache_entry *e = &c->entries[i];
  if (e->newer != NIL) c->entries[e->newer].older = e->older;
  else c->mru = e->older;
  if (e->older != NIL) c->entries[e->older].newer = e->newer;
  else c->lru = e->newer;
}

static void lru_push_front(model_cache *c, uint32_t i) {
  cache_entry *e = &c->entries[i];
  e->newer = NIL;
  e->older = c->mru;
  if (c->mru != NIL) c->entries[c->mru].newer = i;
  c->mru = i;
  if (c->lru == NIL) c->lru = i;
}

/* Drops used entry i: out of its chain (a walk of the chain, expected O(1) at a load of at
 * most 1) and the LRU list, onto the free list. */
static void entry_drop(model_cache *c, uint32_t i) {
  uint32_t *link = bucket_of(c, c->entries[i].key);
  while (*link != i)
    link = &c->entries[*link].chain;
  *link = c->entries[i].chain;
  lru_unlink(c, i);
  c->entries[i].chain = c->free_head;
  c->free_head = i;
  c->n--;
}

/* Takes a free entry for key (one must exist: n < capacity_max), in its chain and at the
 * front of the LRU list. */
static void entry_insert(model_cache *c, uint64_t key, int64_t expires_ns) {
  uint32_t i = c->free_head;
  assert(i != NIL);
  cache_entry *e = &c->entries[i];
  c->free_head = e->chain;
  uint32_t *b = bucket_of(c, key);
  *e = (cache_entry){.key = key, .expires_ns = expires_ns, .chain = *b};
  *b = i;
  lru_push_front(c, i);
  c->n++;
}

static void evict_to(model_cache *c, size_t target) {
  while (c->n > target) {
    entry_drop(c, c->lru);
    c->ctr.evictions++;
  }
}

/* }================================================================== */

/* {==================================================================
 * Coalescing: keys in flight and their waiters
 * =================================================================== */

static uint32_t *fl_bucket_of(const model_cache *c, uint64_t key) {
  return &c->fl_buckets[hash_key(key) & c->fl_mask];
}

static uint32_t fl_find(const model_cache *c, uint64_t key) {
  if (c->fl == NULL) return NIL;
  uint32_t i = *fl_bucket_of(c, key);
  while (i != NIL && c->fl[i].key != key)
    i = c->fl[i].chain;
  return i;
}

/* Doubles the in-flight records (to at least `want`) and rebuilds their buckets. The new
 * buckets are allocated first, so that a failure leaves the table as it was. Returns 0 or
 * RETRY_ENOMEM. */
static int fl_grow(model_cache *c, size_t want) {
  if (want > NIL || want > SIZE_MAX / sizeof(inflight)) return RETRY_ENOMEM;
  uint64_t nb = pow2_at_least(want);
  uint32_t *b = c_alloc(c, (size_t)nb * sizeof *b);
  if (b == NULL) return RETRY_ENOMEM;
  inflight *fl = c->alloc.realloc_fn(c->fl, want * sizeof *fl, c->alloc.ctx);
  if (fl == NULL) {
    c_free(c, b);
    return RETRY_ENOMEM;
  }
  c->fl = fl;
  c_free(c, c->fl_buckets);
  c->fl_buckets = b;
  c->fl_mask = nb - 1;
  memset(b, 0xff, (size_t)nb * sizeof *b); /* every head NIL */
  /* The table grows only when every record is in use (or at creation, when there is none),
   * so all of the old records are rehashed and all of the new ones are free. */
  assert(c->fl_free == NIL);
  for (size_t i = 0; i < c->fl_cap; i++) {
    uint32_t *h = fl_bucket_of(c, fl[i].key);
    fl[i].chain = *h;
    *h = (uint32_t)i;
  }
  uint32_t free_head = NIL;
  for (size_t i = want; i-- > c->fl_cap;) {
    fl[i].chain = free_head;
    free_head = (uint32_t)i;
  }
  c->fl_free = free_head;
  c->fl_cap = want;
  return 0;
}

/* Doubles the waiter nodes (to at least `want`). Returns 0 or RETRY_ENOMEM. */
static int wn_grow(model_cache *c, size_t want) {
  if (want > NIL - 1 || want > SIZE_MAX / sizeof(waiter_node)) return RETRY_ENOMEM;
  waiter_node *wn = c->alloc.realloc_fn(c->wn, want * sizeof *wn, c->alloc.ctx);
  if (wn == NULL) return RETRY_ENOMEM;
  c->wn = wn;
  for (size_t i = want; i-- > c->wn_cap;) {
    wn[i] = (waiter_node){.waiter = NULL, .next = c->wn_free};
    c->wn_free = (uint32_t)i;
  }
  c->wn_cap = want;
  return 0;
}

/* Puts key in flight; returns false when the records are full and cannot grow. */
static bool fl_start(model_cache *c, uint64_t key) {
  if (c->fl_free == NIL && fl_grow(c, 2 * c->fl_cap) != 0) return false;
  uint32_t i = c->fl_free;
  c->fl_free = c->fl[i].chain;
  uint32_t *h = fl_bucket_of(c, key);
  c->fl[i] = (inflight){.key = key, .chain = *h, .head = NIL, .tail = NIL};
  *h = i;
  c->n_fl++;
  return true;
}

/* Ends key's flight, if it is in flight, and releases its waiters in order. Each node is
 * freed before its release call, and the next index read before it, so a release that adds
 * waiters (and grows or reuses the pool) cannot disturb the walk. */
static void fl_end(model_cache *c, uint64_t key, bool filled) {
  if (c->fl == NULL) return;
  uint32_t *link = fl_bucket_of(c, key);
  while (*link != NIL && c->fl[*link].key != key)
    link = &c->fl[*link].chain;
  uint32_t i = *link;
  if (i == NIL) return;
  *link = c->fl[i].chain;
  uint32_t w = c->fl[i].head;
  c->fl[i].chain = c->fl_free;
  c->fl_free = i;
  c->n_fl--;
  while (w != NIL) {
    void *waiter = c->wn[w].waiter;
    uint32_t next = c->wn[w].next;
    c->wn[w] = (waiter_node){.waiter = NULL, .next = c->wn_free};
    c->wn_free = w;
    c->n_wn--;
    c->cfg.release(waiter, filled, c->cfg.release_ctx);
    w = next;
  }
}

int model_cache_wait_add(model_cache *c, uint64_t key, void *waiter) {
  assert(c != NULL && c->cfg.coalesce);
  uint32_t i = fl_find(c, key);
  assert(i != NIL && "model_cache_wait_add: the key has no miss in flight");
  if (c->wn_free == NIL && wn_grow(c, 2 * c->wn_cap) != 0) return RETRY_ENOMEM;
  uint32_t w = c->wn_free;
  c->wn_free = c->wn[w].next;
  c->wn[w] = (waiter_node){.waiter = waiter, .next = NIL};
  if (c->fl[i].tail != NIL) c->wn[c->fl[i].tail].next = w;
  else c->fl[i].head = w;
  c->fl[i].tail = w;
  c->n_wn++;
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Life cycle
 * =================================================================== */

size_t model_cache_bytes_for(size_t capacity) {
  if (capacity < 1) capacity = 1;
  return sizeof(model_cache) + capacity * sizeof(cache_entry) +
         (size_t)pow2_at_least(capacity) * sizeof(uint32_t);
}

static int check_config(const model_cache_config *cfg, retry_error *err) {
  const char *why = NULL;
  if (cfg->capacity < 1 || cfg->capacity > MODEL_CACHE_MAX_CAPACITY ||
      cfg->capacity > (SIZE_MAX - sizeof(model_cache)) / 40)
    why = "a cache's capacity must be at least 1 entry and at most 2^32 - 2";
  else if (cfg->ttl_ns < 0)
    why = "a cache's ttl must not be negative (0: entries never expire)";
  else if (cfg->coalesce && cfg->release == NULL)
    why = "a coalescing cache needs a release function for its waiters";
  if (why == NULL) return 0;
  retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "%s", why);
  return RETRY_EINVAL;
}

model_cache *model_cache_create(const model_cache_config *cfg, const retry_allocator *alloc,
                                retry_error *err) {
  assert(cfg != NULL);
  if (check_config(cfg, err) != 0) return NULL;
  retry_allocator a;
  retry_allocator_resolve(alloc, &a);
  model_cache *c = a.malloc_fn(sizeof *c, a.ctx);
  if (c == NULL) goto oom;
  *c = (model_cache){.alloc = a, .cfg = *cfg, .capacity = cfg->capacity};
  c->mru = c->lru = c->free_head = c->fl_free = c->wn_free = NIL;
  uint64_t nb = pow2_at_least(cfg->capacity);
  c->mask = nb - 1;
  c->entries = c_alloc(c, cfg->capacity * sizeof *c->entries);
  c->buckets = c_alloc(c, (size_t)nb * sizeof *c->buckets);
  if (c->entries == NULL || c->buckets == NULL) goto oom;
  memset(c->buckets, 0xff, (size_t)nb * sizeof *c->buckets); /* every head NIL */
  for (size_t i = cfg->capacity; i-- > 0;) {
    c->entries[i] = (cache_entry){.chain = c->free_head};
    c->free_head = (uint32_t)i;
  }
  if (cfg->coalesce) {
    size_t reserve = cfg->inflight_reserve > 0 ? cfg->inflight_reserve : INFLIGHT_RESERVE_DEFAULT;
    if (fl_grow(c, reserve) != 0 || wn_grow(c, reserve) != 0) goto oom;
  }
  return c;
oom:
  model_cache_destroy(c);
  retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory for a cache of %zu entries",
                  cfg->capacity);
  return NULL;
}

void model_cache_destroy(model_cache *c) {
  if (c == NULL) return;
  c_free(c, c->entries);
  c_free(c, c->buckets);
  c_free(c, c->fl);
  c_free(c, c->fl_buckets);
  c_free(c, c->wn);
  c->alloc.free_fn(c, c->alloc.ctx);
}

size_t model_cache_bytes(const model_cache *c) {
  assert(c != NULL);
  return model_cache_bytes_for(c->cfg.capacity) + c->fl_cap * sizeof(inflight) +
         (c->fl == NULL ? 0 : (size_t)(c->fl_mask + 1) * sizeof(uint32_t)) +
         c->wn_cap * sizeof(waiter_node);
}

/* }================================================================== */

/* {==================================================================
 * Requests
 * =================================================================== */

model_cache_result model_cache_lookup(model_cache *c, uint64_t key, int64_t now_ns) {
  assert(c != NULL);
  uint32_t i = entry_find(c, key);
  if (i != NIL) {
    if (now_ns < c->entries[i].expires_ns) {
      if (c->mru != i) {
        lru_unlink(c, i);
        lru_push_front(c, i);
      }
      c->ctr.hits++;
      return MODEL_CACHE_HIT;
    }
    entry_drop(c, i);
    c->ctr.expirations++;
  }
  c->ctr.misses++;
  if (!c->cfg.coalesce) return MODEL_CACHE_MISS;
  if (fl_find(c, key) != NIL) {
    c->ctr.coalesced++;
    return MODEL_CACHE_MISS_WAIT;
  }
  return fl_start(c, key) ? MODEL_CACHE_MISS_LEAD : MODEL_CACHE_MISS;
}

void model_cache_fill(model_cache *c, uint64_t key, int64_t now_ns) {
  assert(c != NULL);
  if (c->capacity > 0) {
    int64_t ttl_ns = c->cfg.ttl_ns;
    int64_t expires_ns = ttl_ns == 0 || now_ns > INT64_MAX - ttl_ns ? INT64_MAX : now_ns + ttl_ns;
    uint32_t i = entry_find(c, key);
    if (i != NIL) {
      c->entries[i].expires_ns = expires_ns;
      if (c->mru != i) {
        lru_unlink(c, i);
        lru_push_front(c, i);
      }
    } else {
      evict_to(c, c->capacity - 1);
      entry_insert(c, key, expires_ns);
    }
    c->ctr.fills++;
  }
  if (c->cfg.coalesce) fl_end(c, key, true);
}

void model_cache_abandon(model_cache *c, uint64_t key) {
  assert(c != NULL);
  if (!c->cfg.coalesce) return;
  size_t before = c->n_fl;
  fl_end(c, key, false);
  if (c->n_fl < before) c->ctr.abandoned++;
}

bool model_cache_delete(model_cache *c, uint64_t key) {
  assert(c != NULL);
  uint32_t i = entry_find(c, key);
  if (i == NIL) return false;
  entry_drop(c, i);
  c->ctr.deleted++;
  return true;
}

bool model_cache_has(const model_cache *c, uint64_t key, int64_t now_ns) {
  assert(c != NULL);
  uint32_t i = entry_find(c, key);
  return i != NIL && now_ns < c->entries[i].expires_ns;
}

bool model_cache_is_inflight(const model_cache *c, uint64_t key) {
  assert(c != NULL);
  return fl_find(c, key) != NIL;
}

/* }================================================================== */

/* {==================================================================
 * Faults and reading
 * =================================================================== */

void model_cache_clear(model_cache *c) {
  assert(c != NULL);
  /* Clearing the chain heads of the used entries' buckets is O(entries), unlike clearing
   * every bucket, which would cost O(capacity) for a nearly empty cache. */
  for (uint32_t i = c->mru; i != NIL;) {
    uint32_t older = c->entries[i].older;
    *bucket_of(c, c->entries[i].key) = NIL;
    c->entries[i].chain = c->free_head;
    c->free_head = i;
    i = older;
  }
  c->n = 0;
  c->mru = c->lru = NIL;
}

void model_cache_flush(model_cache *c) {
  assert(c != NULL);
  c->ctr.flushed += c->n;
  model_cache_clear(c);
}

size_t model_cache_flush_fraction(model_cache *c, double fraction, gsl_rng *r) {
  assert(c != NULL && fraction >= 0 && fraction <= 1);
  size_t before = c->n;
  if (fraction <= 0) return 0;
  if (fraction >= 1) {
    model_cache_flush(c);
    return before;
  }
  assert(r != NULL);
  for (uint32_t i = c->mru; i != NIL;) {
    uint32_t older = c->entries[i].older;
    if (gsl_rng_uniform(r) < fraction) entry_drop(c, i);
    i = older;
  }
  c->ctr.flushed += before - c->n;
  return before - c->n;
}

void model_cache_set_capacity(model_cache *c, size_t capacity) {
  assert(c != NULL && capacity <= c->cfg.capacity);
  c->capacity = capacity;
  evict_to(c, capacity);
}

const model_cache_counters *model_cache_counters_get(const model_cache *c) {
  assert(c != NULL);
  return &c->ctr;
}

size_t model_cache_size(const model_cache *c) { return c->n; }
size_t model_cache_capacity(const model_cache *c) { return c->capacity; }
size_t model_cache_capacity_max(const model_cache *c) { return c->cfg.capacity; }
size_t model_cache_n_inflight(const model_cache *c) { return c->n_fl; }
size_t model_cache_n_waiters(const model_cache *c) { return c->n_wn; }

size_t model_cache_keys_mru(const model_cache *c, uint64_t *keys, size_t n) {
  assert(c != NULL && (keys != NULL || n == 0));
  size_t k = 0;
  for (uint32_t i = c->mru; i != NIL && k < n; i = c->entries[i].older)
    keys[k++] = c->entries[i].key;
  return k;
}

/* }================================================================== */
