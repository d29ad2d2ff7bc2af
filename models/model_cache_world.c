/*
 * model_cache_world.c: look-aside caches in the world. A service with a cache
 * (model_cache_cfg) has one model_cache in front of all its replicas, shared by every caller
 * (scope service), or one in each replica, looked up once the balancer has picked it (scope
 * replica). A request's key is drawn once per logical request and kept in its ledger
 * operation, which every attempt of its call shares; a hit is answered OK after the hit time
 * without a worker; a miss goes to the service (its replica), and the OK reply its caller
 * hears fills the key. With coalescing, a miss of a key already in flight (in the same cache)
 * waits for that miss's end. Invariant: a lead (mw_req.cache_lead) ends exactly once, by a
 * fill or an abandon, before its request is freed.
 */
#include <math.h>
#include <stdio.h>

#include "models/model_cache.h"
#include "models/model_cache_world.h"
#include "models/model_int.h"
#include "sim/sim_dist.h"
#include "sim/sim_keys.h"
#include "sim/sim_rng.h"

/* One service's caches and what the world keeps beside them. */
typedef struct mw_cache {
  model_cache **cs; /* scope service: one; scope replica: one per replica allocated
                     * (the most the service may have, model_ctl.c), all created
                     * at the start so that a replica's start allocates nothing */
  int32_t n_cs;
  bool per_replica;           /* scope replica: r's cache is cs[r->replica] */
  sim_keys keys;              /* the distribution of the requests' keys */
  gsl_rng *rng_keys;          /* the keys, one draw per logical request */
  gsl_rng *rng_hit;           /* hit times */
  gsl_rng *rng_flush;         /* which entries a partial flush drops */
  model_world *w;             /* for the release of waiters */
  int col_ratio;              /* <service>_cache_hit_ratio */
  uint64_t ts_hits, ts_looks; /* hits and lookups at the last sample */
  model_cache_counters base;  /* the counters at the warmup's end, summed over the caches */
} mw_cache;

/* The cache r looks up (or looked up): the service's, or its replica's once picked. */
static model_cache *cache_of(const mw_cache *m, const mw_req *r) {
  return m->per_replica ? m->cs[r->replica] : m->cs[0];
}

/* The counters of m's caches, summed: the hit ratio is one figure for the service. */
static model_cache_counters counters_sum(const mw_cache *m) {
  model_cache_counters t = {0};
  for (int32_t i = 0; i < m->n_cs; i++) {
    const model_cache_counters *c = model_cache_counters_get(m->cs[i]);
    t.hits += c->hits;
    t.misses += c->misses;
    t.coalesced += c->coalesced;
    t.fills += c->fills;
    t.evictions += c->evictions;
    t.expirations += c->expirations;
    t.flushed += c->flushed;
    t.abandoned += c->abandoned;
    t.deleted += c->deleted;
  }
  return t;
}

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

/* r looks its key up in c: a hit is answered, a coalesced miss waits (both return true);
 * a miss returns false, r marked, and goes on to the service. */
static bool lookup(model_world *w, mw_service *s, model_cache *c, mw_req *r, int64_t now) {
  uint64_t key = req_key(w, s->cache, r);
  switch (model_cache_lookup(c, key, now)) {
    case MODEL_CACHE_HIT: hit_answer(w, s, r); return true;
    case MODEL_CACHE_MISS_LEAD: r->cache_lead = true; /* fall through */
    case MODEL_CACHE_MISS: r->cache_miss = true; return false;
    case MODEL_CACHE_MISS_WAIT:
      /* Without room for one more waiter it is a miss of its own (model_cache.h). */
      if (model_cache_wait_add(c, key, r) == 0) return true;
      r->cache_miss = true;
      return false;
  }
  return false;
}

/* A replica's own cache is looked up once the balancer has picked the replica, before
 * anything else the request meets there (model_service.c's screen and queue), which a miss
 * then goes on to, at that replica; r is in the world's hands either way. A replica that a
 * `down` fault takes out for every request answers nothing, its cache included: the request
 * goes on to be refused. (A waiter whose lead failed goes on by itself through
 * model__service_enter: the balancer again, and no second lookup.) */
static bool arrive_replica(model_world *w, mw_service *s, mw_req *r, int64_t now) {
  model__service_pick(s, r);
  if (model__replica_down(s, r->replica, now) || !lookup(w, s, s->cache->cs[r->replica], r, now))
    model__replica_enter(w, s, r, now);
  return true;
}

bool model__cache_arrive(model_world *w, mw_service *s, mw_req *r, int64_t now) {
  if (s->cache->per_replica) return arrive_replica(w, s, r, now);
  return lookup(w, s, s->cache->cs[0], r, now);
}

/* A waiter's lead ended. The release comes inside the lead's caller's reply (or its free),
 * so the waiter goes on in an event of its own at the same instant: filled, it is answered
 * as a hit; not, it goes to the service itself (a miss whose OK reply fills), through the
 * balancer (scope replica: perhaps to another replica, whose cache its reply then fills). */
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
    model_cache_fill(cache_of(m, r), key, sim_now_ns(w->k));
  else if (r->cache_lead)
    model_cache_abandon(cache_of(m, r), key);
  r->cache_miss = r->cache_lead = false;
}

/* Scope replica is refused with invalidate by the loader (a caller reaches no replica's
 * in-process cache): nothing to delete here. */
bool model__cache_invalidate(model_world *w, mw_service *s, mw_op *op) {
  if (s->cache == NULL || s->cache->per_replica || op == NULL || op == w->pools.no_effect_op)
    return false;
  uint64_t slot = *op_key(w, op);
  return slot != 0 && model_cache_delete(s->cache->cs[0], slot - 1);
}

void model__cache_lead_drop(model_world *w, mw_req *r) {
  mw_cache *m = w->topo.services[r->edge->callee].cache;
  model_cache_abandon(cache_of(m, r), req_key(w, m, r));
  r->cache_miss = r->cache_lead = false;
}

/* A replica is added (model_ctl.c): a new process, whose cache starts empty. Its misses
 * still in flight from before (a removed replica finishes what it holds) stay in flight:
 * their replies fill the new cache, as the same workers serve them. */
void model__cache_replica_added(model_world *w, int svc, int32_t replica) {
  mw_cache *m = w->topo.services[svc].cache;
  if (m == NULL || !m->per_replica) return;
  model_cache_clear(m->cs[replica]);
}

/* }================================================================== */

/* {==================================================================
 * Faults: a flush at an instant, a capacity cut for a window
 * =================================================================== */

/* Drops fraction of the entries of each of m's caches (every replica's, in the order of
 * their indices, from one stream), as a flush that reaches every process. */
static void flush(mw_cache *m, double fraction) {
  for (int32_t i = 0; i < m->n_cs; i++)
    if (fraction >= 1)
      model_cache_flush(m->cs[i]);
    else
      model_cache_flush_fraction(m->cs[i], fraction, m->rng_flush);
}

/* arg: the service's index in the high 32 bits, the fault's in the low. */
static void ev_flush(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  model_world *w = obj;
  mw_service *s = &w->topo.services[arg >> 32];
  flush(s->cache, s->cfg->faults[arg & UINT32_MAX].fraction);
}

/* An operator's flush (model_operator.c): the same as a flush fault's, now. */
void model__cache_flush_now(model_world *w, int svc, double fraction) {
  flush(w->topo.services[svc].cache, fraction);
}

/* A capacity fault starts or ends: the capacity in force is the least of the cuts active
 * now, or the cache's own, in every replica's cache alike. A restored capacity refills only
 * by traffic. */
static void ev_capacity(sim_kernel *k, void *obj, uint64_t arg) {
  model_world *w = obj;
  mw_service *s = &w->topo.services[arg];
  int64_t now = sim_now_ns(k);
  size_t cap = model_cache_capacity_max(s->cache->cs[0]);
  for (size_t i = 0; i < s->cfg->n_faults; i++) {
    const model_fault_cfg *f = &s->cfg->faults[i];
    if (f->kind == MODEL_FAULT_CACHE_CAPACITY && now >= f->start_ns && now < f->end_ns &&
        (size_t)f->cache_capacity < cap)
      cap = (size_t)f->cache_capacity;
  }
  for (int32_t i = 0; i < s->cache->n_cs; i++)
    model_cache_set_capacity(s->cache->cs[i], cap);
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

/* Its own streams, keyed by the service's name, so that a cache shifts no other draw; one
 * stream of each kind for all the replicas' caches (scope replica), so that scaling shifts no
 * draw either. */
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
  m->per_replica = cc->scope == MODEL_CACHE_SCOPE_REPLICA;
  int32_t n = m->per_replica ? s->cfg->replicas : 1; /* the replicas allocated (model_ctl.c) */
  m->cs = model__calloc(w, (size_t)n, sizeof *m->cs);
  if (m->cs == NULL) return -1;
  for (; m->n_cs < n; m->n_cs++) {
    m->cs[m->n_cs] = model_cache_create(&mc, sim_kernel_allocator(w->k), w->run.err);
    if (m->cs[m->n_cs] == NULL) return -1;
  }
  return 0;
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
    for (int32_t j = 0; j < m->n_cs; j++)
      model_cache_destroy(m->cs[j]);
    model__free(w, m->cs);
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
    model_cache_counters c = counters_sum(m);
    uint64_t hits = c.hits - m->ts_hits, looks = c.hits + c.misses - m->ts_looks;
    row[m->col_ratio] = looks > 0 ? (double)hits / (double)looks : NAN;
    m->ts_hits = c.hits;
    m->ts_looks = c.hits + c.misses;
  }
}

void model__caches_warmup(model_world *w) {
  for (size_t i = 0; i < w->topo.n_services; i++)
    if (w->topo.services[i].cache != NULL)
      w->topo.services[i].cache->base = counters_sum(w->topo.services[i].cache);
}

void model__caches_report(model_world *w) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_cache *m = w->topo.services[i].cache;
    if (m == NULL) continue;
    model_cache_counters sum = counters_sum(m);
    const model_cache_counters *c = &sum;
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

size_t model_world_cache_size(const model_world *w, int svc, int32_t replica) {
  if (svc < 0 || (size_t)svc >= w->topo.n_services) return 0;
  const mw_cache *m = w->topo.services[svc].cache;
  if (m == NULL) return 0;
  if (!m->per_replica) return model_cache_size(m->cs[0]);
  return replica >= 0 && replica < m->n_cs ? model_cache_size(m->cs[replica]) : 0;
}
