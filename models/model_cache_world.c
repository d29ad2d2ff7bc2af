/*
 * model_cache_world.c: look-aside caches in the world. A service with a cache
 * (model_cache_cfg) has one model_cache in front of all its replicas, shared by every caller.
 * A request's key is drawn once per logical request and kept in its ledger operation, which
 * every attempt of its call shares; a hit is answered OK after the hit time without a
 * replica; a miss goes to the service, and the OK reply its caller hears fills the key. With
 * coalescing, a miss of a key already in flight waits for that miss's end. Invariant: a lead
 * (mw_req.cache_lead) ends exactly once, by a fill or an abandon, before its request is freed.
 */
#include <math.h>
#include <stdio.h>

#include "models/model_cache.h"
#include "models/model_int.h"
#include "sim/sim_dist.h"
#include "sim/sim_keys.h"
#include "sim/sim_rng.h"

/* One service's cache and what the world keeps beside it. */
typedef struct mw_cache {
  model_cache *c;
  sim_keys keys;              /* the distribution of the requests' keys */
  gsl_rng *rng_keys;          /* the keys, one draw per logical request */
  gsl_rng *rng_hit;           /* hit times */
  gsl_rng *rng_flush;         /* which entries a partial flush drops */
  model_world *w;             /* for the release of waiters */
  int col_ratio;              /* <service>_cache_hit_ratio */
  uint64_t ts_hits, ts_looks; /* hits and lookups at the last sample */
  model_cache_counters base;  /* the counters at the warmup's end */
} mw_cache;

/* {==================================================================
 * Keys
 * =================================================================== */

/* Why the operation: every attempt of one call shares it (retries and hedges alike), it is
 * the request as its caller meant it (a closed-loop user's retry of the same request keeps
 * it too), and mw_req, packed to 120 bytes, has no room. A world with a cache gives every
 * logical request an operation of its own (model__ledger_on) with 8 more bytes at its end;
 * the key is stored there plus one, so the zeroed op reads "not drawn yet". */
static uint64_t *op_key(const model_world *w, mw_op *op) {
  return (uint64_t *)(void *)((char *)op + w->pools.ops.obj_size - sizeof(uint64_t));
}

/* The key of r's logical request: drawn from the cache's stream by the first of its attempts
 * that reaches the service, then read by every other. */
static uint64_t req_key(model_world *w, mw_cache *m, const mw_req *r) {
  if (r->op == NULL) return sim_keys_draw(&m->keys, m->rng_keys); /* the world has failed */
  uint64_t *slot = op_key(w, r->op);
  if (*slot == 0) *slot = sim_keys_draw(&m->keys, m->rng_keys) + 1;
  return *slot - 1;
}

/* }================================================================== */

/* {==================================================================
 * Requests
 * =================================================================== */

/* A hit's time is over: r is answered OK, with headers and a full reply's messages, by the
 * cache (no worker: its worker time stays 0). */
static void hit_reply(model_world *w, mw_req *r) {
  const model_service_cfg *cfg = &w->cfg->services[r->edge->callee];
  r->status = (int16_t)model__status_ok(cfg->space);
  r->headers = true;
  r->items = r->ok_items;
  /* A cache_invalid fault: the value is there but reads as invalid, a failure without a
   * reply's body (the caller decides what to make of it: on_failure, model_fallback.c). */
  if (w->topo.services[r->edge->callee].fault_kinds & (UINT32_C(1) << MODEL_FAULT_CACHE_INVALID)) {
    int64_t now = sim_now_ns(w->k);
    for (size_t i = 0; i < cfg->n_faults; i++) {
      const model_fault_cfg *f = &cfg->faults[i];
      if (f->kind != MODEL_FAULT_CACHE_INVALID || now < f->start_ns || now >= f->end_ns) continue;
      r->status = (int16_t)f->status;
      r->headers = false;
      r->items = 0;
      break;
    }
  }
  model__service_reply(w, r);
}

static void ev_hit(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  (void)arg;
  mw_req *r = obj;
  hit_reply(r->edge->w, r);
}

/* r is answered from the cache after the hit time (drawn; a constant 0 costs no event). */
static void hit_answer(model_world *w, mw_service *s, mw_req *r) {
  const sim_dist *d = &s->cfg->cache.hit_time;
  if (d->kind == SIM_DIST_CONSTANT && d->p1 == 0) {
    hit_reply(w, r);
    return;
  }
  if (model__schedule_sample(w, d, s->cache->rng_hit, ev_hit, r) == SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

bool model__cache_arrive(model_world *w, mw_service *s, mw_req *r, int64_t now) {
  mw_cache *m = s->cache;
  uint64_t key = req_key(w, m, r);
  switch (model_cache_lookup(m->c, key, now)) {
    case MODEL_CACHE_HIT: hit_answer(w, s, r); return true;
    case MODEL_CACHE_MISS_LEAD: r->cache_lead = true; /* fall through */
    case MODEL_CACHE_MISS: r->cache_miss = true; return false;
    case MODEL_CACHE_MISS_WAIT:
      /* Without room for one more waiter it is a miss of its own (model_cache.h). */
      if (model_cache_wait_add(m->c, key, r) == 0) return true;
      r->cache_miss = true;
      return false;
  }
  return false;
}

/* A waiter's lead ended. The release comes inside the lead's caller's reply (or its free),
 * so the waiter goes on in an event of its own at the same instant: filled, it is answered
 * as a hit; not, it goes to the service itself (a miss whose OK reply fills). */
static void ev_released(sim_kernel *k, void *obj, uint64_t filled) {
  mw_req *r = obj;
  model_world *w = r->edge->w;
  mw_service *s = &w->topo.services[r->edge->callee];
  if (filled) {
    hit_answer(w, s, r);
    return;
  }
  r->cache_miss = true;
  model__service_enter(w, s, r, sim_now_ns(k));
}

static void cache_release(void *waiter, bool filled, void *ctx) {
  mw_cache *m = ctx;
  if (sim_event_schedule_in(m->w->k, 0, ev_released, waiter, filled) == SIM_EVENT_NONE)
    model__fail(m->w, RETRY_ENOMEM, "out of memory for events");
}

/* The fill is the caller's, as a look-aside client writes the value it read: only a reply
 * that someone still waits for fills. A caller that gave up (a timeout, a hedge's loser)
 * writes nothing, which is how a cache under an overloaded backend never refills. */
void model__cache_reply(model_world *w, mw_req *r, bool waits) {
  mw_service *s = &w->topo.services[r->edge->callee];
  mw_cache *m = s->cache;
  uint64_t key = req_key(w, m, r);
  if (waits && retry_status_is_ok(s->cfg->space, r->status))
    model_cache_fill(m->c, key, sim_now_ns(w->k));
  else if (r->cache_lead)
    model_cache_abandon(m->c, key);
  r->cache_miss = r->cache_lead = false;
}

bool model__cache_invalidate(model_world *w, mw_service *s, mw_op *op) {
  if (s->cache == NULL || op == NULL || op == w->pools.no_effect_op) return false;
  uint64_t slot = *op_key(w, op);
  return slot != 0 && model_cache_delete(s->cache->c, slot - 1);
}

void model__cache_lead_drop(model_world *w, mw_req *r) {
  mw_cache *m = w->topo.services[r->edge->callee].cache;
  model_cache_abandon(m->c, req_key(w, m, r));
  r->cache_miss = r->cache_lead = false;
}

/* }================================================================== */

/* {==================================================================
 * Faults: a flush at an instant, a capacity cut for a window
 * =================================================================== */

/* arg: the service's index in the high 32 bits, the fault's in the low. */
static void ev_flush(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  model_world *w = obj;
  mw_service *s = &w->topo.services[arg >> 32];
  const model_fault_cfg *f = &s->cfg->faults[arg & UINT32_MAX];
  if (f->fraction >= 1)
    model_cache_flush(s->cache->c);
  else
    model_cache_flush_fraction(s->cache->c, f->fraction, s->cache->rng_flush);
}

/* An operator's flush (model_operator.c): the same as a flush fault's, now. */
void model__cache_flush_now(model_world *w, int svc, double fraction) {
  mw_service *s = &w->topo.services[svc];
  if (fraction >= 1)
    model_cache_flush(s->cache->c);
  else
    model_cache_flush_fraction(s->cache->c, fraction, s->cache->rng_flush);
}

/* A capacity fault starts or ends: the capacity in force is the least of the cuts active
 * now, or the cache's own. A restored capacity refills only by traffic. */
static void ev_capacity(sim_kernel *k, void *obj, uint64_t arg) {
  model_world *w = obj;
  mw_service *s = &w->topo.services[arg];
  int64_t now = sim_now_ns(k);
  size_t cap = model_cache_capacity_max(s->cache->c);
  for (size_t i = 0; i < s->cfg->n_faults; i++) {
    const model_fault_cfg *f = &s->cfg->faults[i];
    if (f->kind == MODEL_FAULT_CACHE_CAPACITY && now >= f->start_ns && now < f->end_ns &&
        (size_t)f->cache_capacity < cap)
      cap = (size_t)f->cache_capacity;
  }
  model_cache_set_capacity(s->cache->c, cap);
}

/* Each fault's events within the run: a flush at its start, a cut at its start and end. */
static int faults_schedule(model_world *w, size_t si) {
  const model_service_cfg *cfg = w->topo.services[si].cfg;
  for (size_t i = 0; i < cfg->n_faults; i++) {
    const model_fault_cfg *f = &cfg->faults[i];
    if (f->start_ns > w->run.end_ns) continue;
    if (f->kind == MODEL_FAULT_CACHE_FLUSH) {
      if (sim_event_schedule(w->k, f->start_ns, ev_flush, w, ((uint64_t)si << 32) | i) ==
          SIM_EVENT_NONE)
        return -1;
    } else if (f->kind == MODEL_FAULT_CACHE_CAPACITY) {
      if (sim_event_schedule(w->k, f->start_ns, ev_capacity, w, si) == SIM_EVENT_NONE ||
          (f->end_ns <= w->run.end_ns &&
           sim_event_schedule(w->k, f->end_ns, ev_capacity, w, si) == SIM_EVENT_NONE))
        return -1;
    }
  }
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Life cycle and figures
 * =================================================================== */

/* Its own streams, keyed by the service's name, so that a cache shifts no other draw. */
static int cache_create(model_world *w, mw_service *s) {
  const model_cache_cfg *cc = &s->cfg->cache;
  mw_cache *m = model__calloc(w, 1, sizeof *m);
  if (m == NULL) return -1;
  s->cache = m;
  m->w = w;
  m->col_ratio = -1;
  char entity[96];
  snprintf(entity, sizeof entity, "service:%s", s->cfg->name);
  m->rng_keys = sim_rng_stream_create(w->seed, entity, "cache-keys", 0);
  m->rng_hit = sim_rng_stream_create(w->seed, entity, "cache-hit", 0);
  m->rng_flush = sim_rng_stream_create(w->seed, entity, "cache-flush", 0);
  if (m->rng_keys == NULL || m->rng_hit == NULL || m->rng_flush == NULL) return -1;
  if (sim_keys_init(&m->keys, cc->keys, cc->n_keys, cc->s, w->run.err) != 0) return -1;
  model_cache_config mc = {.capacity = (size_t)cc->capacity,
                           .ttl_ns = cc->ttl_ns,
                           .coalesce = cc->coalesce,
                           .release = cache_release,
                           .release_ctx = m};
  m->c = model_cache_create(&mc, sim_kernel_allocator(w->k), w->run.err);
  return m->c == NULL ? -1 : 0;
}

int model__caches_create(model_world *w) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_service *s = &w->topo.services[i];
    if (!s->cfg->cache.on) continue;
    if (cache_create(w, s) < 0 || faults_schedule(w, i) < 0) return -1;
    s->stats->has_cache = true;
  }
  return 0;
}

void model__caches_destroy(model_world *w) {
  if (w->topo.services == NULL) return;
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_cache *m = w->topo.services[i].cache;
    if (m == NULL) continue;
    model_cache_destroy(m->c);
    if (m->rng_keys) gsl_rng_free(m->rng_keys);
    if (m->rng_hit) gsl_rng_free(m->rng_hit);
    if (m->rng_flush) gsl_rng_free(m->rng_flush);
    model__free(w, m);
    w->topo.services[i].cache = NULL;
  }
}

int model__caches_columns(model_world *w,
                          int (*column)(model_world *, const char *, const char *, bool)) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_cache *m = w->topo.services[i].cache;
    if (m == NULL) continue;
    m->col_ratio = column(w, w->topo.services[i].cfg->name, "cache_hit_ratio", false);
    if (m->col_ratio < 0) return -1;
  }
  return 0;
}

/* The lookups counted between two samples, so a lookup at a bucket's very end goes to the
 * bucket its sample closes if it ran first. NaN (an empty CSV field) for a bucket without
 * lookups, as the latency columns of a bucket without calls: 0 would read as a cold cache. */
void model__caches_sample(model_world *w, double *row) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_cache *m = w->topo.services[i].cache;
    if (m == NULL) continue;
    const model_cache_counters *c = model_cache_counters_get(m->c);
    uint64_t hits = c->hits - m->ts_hits, looks = c->hits + c->misses - m->ts_looks;
    row[m->col_ratio] = looks > 0 ? (double)hits / (double)looks : NAN;
    m->ts_hits = c->hits;
    m->ts_looks = c->hits + c->misses;
  }
}

void model__caches_warmup(model_world *w) {
  for (size_t i = 0; i < w->topo.n_services; i++)
    if (w->topo.services[i].cache != NULL)
      w->topo.services[i].cache->base = *model_cache_counters_get(w->topo.services[i].cache->c);
}

void model__caches_report(model_world *w) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_cache *m = w->topo.services[i].cache;
    if (m == NULL) continue;
    const model_cache_counters *c = model_cache_counters_get(m->c);
    model_service_stats *st = w->topo.services[i].stats;
    st->cache_hits = (int64_t)(c->hits - m->base.hits);
    st->cache_misses = (int64_t)(c->misses - m->base.misses);
    st->cache_coalesced = (int64_t)(c->coalesced - m->base.coalesced);
    st->cache_fills = (int64_t)(c->fills - m->base.fills);
    st->cache_evictions = (int64_t)(c->evictions - m->base.evictions);
    st->cache_expirations = (int64_t)(c->expirations - m->base.expirations);
    st->cache_flushed = (int64_t)(c->flushed - m->base.flushed);
    st->cache_deleted = (int64_t)(c->deleted - m->base.deleted);
  }
}

/* }================================================================== */
