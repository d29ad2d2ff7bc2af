/*
 * model_ctl.c: replicas that leave service and replicas that come and go, in the world
 * (model_ctl.h). A service with any of these gets the world's own copy of its config whose
 * `replicas` is the count allocated for the run and whose balancer is MODEL_LB_CTL, so that
 * every loop over replicas covers the ones added later and every pick comes here; the
 * replicas beyond the count in force sit idle. Invariant: a pick returns a replica that
 * exists; it is in service for its caller unless none is (then, as Envoy's panic routing,
 * any replica that has started).
 */
#include <stdio.h>
#include <string.h>

#include "models/model_int.h"
#include "sim/sim_dist.h"
#include "sim/sim_rng.h"

/* {==================================================================
 * State
 * =================================================================== */

/* One service's control state. */
typedef struct mw_ctl_svc {
  model_service_cfg cfg; /* the world's copy: replicas allocated, balancer MODEL_LB_CTL */
  model_lb_kind lb;      /* the balancer configured */
  int32_t n_cur;         /* replicas in force: 0 .. n_cur - 1 exist */
  uint64_t ready;        /* bit i: replica i has started (past its startup delay) */
  uint64_t unhealthy;    /* bit i: replica i failed its health checks */
  uint64_t self_out;     /* bit i: replica i took itself out of service */
  uint32_t gen[MODEL_MAX_REPLICAS]; /* bumped when replica i is added or removed */
  int32_t hc_fail[MODEL_MAX_REPLICAS], hc_ok[MODEL_MAX_REPLICAS];
  int32_t se_fail[MODEL_MAX_REPLICAS], se_ok[MODEL_MAX_REPLICAS];
  model_eject **ej; /* the detectors of the edges calling it (n_ej), with outlier_detection */
  size_t n_ej;
  gsl_rng *rng_ej; /* the detectors' enforcement and jitter draws */
  model_hpa *hpa;
  double util[MODEL_MAX_REPLICAS];    /* autoscaler: busy fraction summed over samples ... */
  int32_t util_n[MODEL_MAX_REPLICAS]; /* ... and the samples of each replica */
  double replica_s;                   /* replicas in force x seconds since the warmup */
  int64_t counted_to_ns;              /* ... counted up to here */
  int col_in_service, col_replicas;   /* time-series columns, -1 without */
} mw_ctl_svc;

struct mw_ctl {
  mw_ctl_svc **svc;   /* per service, NULL for one without control */
  model_eject **edge; /* per edge: the detector of its callee's replicas, or NULL */
};

static mw_ctl_svc *ctl_of(const model_world *w, int svc) {
  return w->ctl != NULL ? w->ctl->svc[svc] : NULL;
}

static uint64_t mask_of(int32_t n) { return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1; }

static int popcount64(uint64_t x) { return __builtin_popcountll(x); }

/* The i-th set bit of m (i < popcount(m)). */
static int32_t nth_bit(uint64_t m, int32_t i) {
  for (; i > 0; i--)
    m &= m - 1;
  return (int32_t)__builtin_ctzll(m);
}

/* Replicas in service for every caller: existing, started, healthy, not out by their own
 * choice. */
static uint64_t in_service(const mw_ctl_svc *c) {
  return mask_of(c->n_cur) & c->ready & ~c->unhealthy & ~c->self_out;
}

/* }================================================================== */

/* {==================================================================
 * Picks and replies (from model_service.c's balancer and model_call.c's replies)
 * =================================================================== */

static int32_t load_of(const mw_service *s, int32_t i) {
  return s->replicas[i].busy + s->replicas[i].queued;
}

int32_t model__ctl_pick(mw_service *s, mw_req *r) {
  model_world *w = r->edge->w;
  mw_ctl_svc *c = ctl_of(w, s->index);
  model_eject *e = w->ctl->edge[r->edge - w->topo.edges];
  uint64_t m = in_service(c);
  if (e != NULL) m &= ~e->ejected;
  if (m == 0) m = mask_of(c->n_cur) & c->ready; /* panic: every replica that started */
  if (m == 0) m = mask_of(c->n_cur);
  if (m == 0) m = 1;
  r->ctl_watch = e != NULL;
  if (s->cfg->lb_avoid_previous && !r->bare && r->attempt > 1 && model__req_call(r) != NULL) {
    int32_t avoid = model__req_call(r)->last_replica;
    if (avoid >= 0 && popcount64(m & ~(UINT64_C(1) << avoid)) > 0) m &= ~(UINT64_C(1) << avoid);
  }
  int32_t n = popcount64(m);
  switch (c->lb) {
    case MODEL_LB_ROUND_ROBIN:
      for (;;) {
        int32_t i = (int32_t)(s->rr_next++ % (uint32_t)c->cfg.replicas);
        if (m & (UINT64_C(1) << i)) return i;
      }
    case MODEL_LB_RANDOM:
      return nth_bit(m, (int32_t)sim_rng_uniform_int(s->rng_lb, (unsigned long)n));
    default: {
      int32_t a = (int32_t)sim_rng_uniform_int(s->rng_lb, (unsigned long)n);
      int32_t b = n > 1 ? (int32_t)sim_rng_uniform_int(s->rng_lb, (unsigned long)(n - 1)) : a;
      if (n > 1 && b >= a) b++;
      a = nth_bit(m, a);
      b = nth_bit(m, b);
      return load_of(s, b) < load_of(s, a) ? b : a;
    }
  }
}

/* What the caller's detector hears: the status as the callee sent it (a gRPC status is mapped
 * as Envoy's router maps one in the response headers); a reply nobody waited for counts as a
 * timeout when its attempt's deadline had passed (Envoy reports its own timeout as it fires:
 * here it is heard when the late reply comes back), and as nothing otherwise (a hedge's loser,
 * a cancelled call). */
void model__ctl_reply(model_world *w, mw_req *r, bool waits) {
  r->ctl_watch = false;
  if (w->ctl == NULL) return; /* a stale mark (mw_req.ctl_watch) */
  model_eject *e = w->ctl->edge[r->edge - w->topo.edges];
  if (e == NULL || r->replica < 0 || r->replica >= e->n_hosts) return;
  mw_ctl_svc *c = ctl_of(w, r->edge->callee);
  int64_t now = sim_now_ns(w->k);
  if (!waits) {
    if (now >= r->deadline_ns)
      model_eject_result(e, r->replica, MODEL_EJECT_LOCAL_TIMEOUT, now, c->rng_ej);
    return;
  }
  if (c->cfg.space == RETRY_SPACE_HTTP)
    model_eject_http(e, r->replica, r->status, now, c->rng_ej);
  else
    model_eject_grpc(e, r->replica, r->status, now, c->rng_ej);
}

/* }================================================================== */

/* {==================================================================
 * The replica count
 * =================================================================== */

/* Replicas in force x time, from the warmup on (the capacity utilization divides by). */
static void count_replicas(const model_world *w, mw_ctl_svc *c, int64_t now) {
  int64_t from = c->counted_to_ns > w->cfg->warmup_ns ? c->counted_to_ns : w->cfg->warmup_ns;
  if (now > from) c->replica_s += (double)c->n_cur * (double)(now - from) / 1e9;
  c->counted_to_ns = now;
}

/* arg: the service in bits 40.., the replica in 32..39, its generation in 0..31. */
static void ev_ready(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  model_world *w = obj;
  mw_ctl_svc *c = ctl_of(w, (int)(arg >> 40));
  int32_t i = (int32_t)((arg >> 32) & 0xff);
  if (c->gen[i] != (uint32_t)arg || i >= c->n_cur) return; /* removed since */
  c->ready |= UINT64_C(1) << i;
}

static int32_t set_replicas(model_world *w, int svc, int32_t n, int64_t delay, int64_t now) {
  mw_ctl_svc *c = ctl_of(w, svc);
  if (n < 1) n = 1;
  if (n > c->cfg.replicas) n = c->cfg.replicas;
  count_replicas(w, c, now);
  for (int32_t i = n; i < c->n_cur; i++) { /* removed: they finish what they hold */
    c->gen[i]++;
    c->ready &= ~(UINT64_C(1) << i);
  }
  for (int32_t i = c->n_cur; i < n; i++) { /* added: fresh, serving after the delay */
    uint64_t bit = UINT64_C(1) << i;
    c->gen[i]++;
    c->unhealthy &= ~bit;
    c->self_out &= ~bit;
    c->hc_fail[i] = c->hc_ok[i] = c->se_fail[i] = c->se_ok[i] = 0;
    c->util[i] = 0;
    c->util_n[i] = 0;
    model__cache_replica_added(w, svc, i); /* a new process: its own cache starts empty */
    if (delay == 0) {
      c->ready |= bit;
      continue;
    }
    c->ready &= ~bit;
    uint64_t arg = ((uint64_t)svc << 40) | ((uint64_t)i << 32) | c->gen[i];
    if (sim_event_schedule_in(w->k, delay, ev_ready, w, arg) == SIM_EVENT_NONE)
      model__fail(w, RETRY_ENOMEM, "out of memory for events");
  }
  c->n_cur = n;
  for (size_t j = 0; j < c->n_ej; j++)
    model_eject_set_hosts(c->ej[j], n);
  return n;
}

/* A count set by hand: the autoscaler hears of it. */
static int32_t set_by_hand(model_world *w, int svc, int32_t n, int64_t delay, int64_t now) {
  mw_ctl_svc *c = ctl_of(w, svc);
  int32_t set = set_replicas(w, svc, n, delay, now);
  if (c->hpa != NULL) model_hpa_set_replicas(c->hpa, set);
  return set;
}

int32_t model_world_set_replicas_delay(model_world *w, int svc, int32_t n, int64_t delay_ns,
                                       int64_t now_ns) {
  if (svc < 0 || (size_t)svc >= w->topo.n_services) return -1;
  mw_ctl_svc *c = ctl_of(w, svc);
  if (c == NULL || c->cfg.ctl->replicas_max == 0) return -1;
  return set_by_hand(w, svc, n, delay_ns >= 0 ? delay_ns : c->cfg.ctl->startup_delay_ns, now_ns);
}

int32_t model_world_set_replicas(model_world *w, int svc, int32_t n, int64_t now_ns) {
  return model_world_set_replicas_delay(w, svc, n, -1, now_ns);
}

/* arg: the service in the high 32 bits, the event's index in the low. */
static void ev_scale(sim_kernel *k, void *obj, uint64_t arg) {
  model_world *w = obj;
  int svc = (int)(arg >> 32);
  const model_scale_event *e = &ctl_of(w, svc)->cfg.ctl->scale[arg & UINT32_MAX];
  int64_t delay =
      e->startup_delay_ns >= 0 ? e->startup_delay_ns : ctl_of(w, svc)->cfg.ctl->startup_delay_ns;
  set_by_hand(w, svc, e->replicas, delay, sim_now_ns(k));
}

/* }================================================================== */

/* {==================================================================
 * Periodic work: outlier intervals, health checks, self-eject probes, the autoscaler
 * =================================================================== */

/* Schedules fn at now + every, again and again while within the run. */
static void again(model_world *w, int64_t every, sim_event_fn fn, uint64_t arg) {
  int64_t next = sim_now_ns(w->k) + every;
  if (next <= w->run.end_ns && sim_event_schedule(w->k, next, fn, w, arg) == SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

static void ev_outlier_tick(sim_kernel *k, void *obj, uint64_t svc) {
  model_world *w = obj;
  mw_ctl_svc *c = ctl_of(w, (int)svc);
  for (size_t j = 0; j < c->n_ej; j++)
    model_eject_tick(c->ej[j], sim_now_ns(k), c->rng_ej);
  again(w, c->cfg.ctl->outlier.interval_ns, ev_outlier_tick, svc);
}

/* A probe of replica rep of s (model_ctl.h, model_health_cfg). */
static bool probe_ok(const model_world *w, const mw_service *s, int32_t rep, int64_t now,
                     int64_t timeout_ns) {
  if (model__replica_down(s, rep, now)) return false;
  int32_t workers = model__replica_workers(s, rep, now);
  const mw_replica *rp = &s->replicas[rep];
  if (workers <= 0 || (rp->queued >= s->cfg->queue_capacity && rp->busy >= workers)) return false;
  double wait = rp->busy >= workers
                    ? (double)(rp->queued + 1) * sim_dist_mean_ns(&s->cfg->service_time) / workers
                    : 0;
  (void)w;
  return wait <= (double)timeout_ns;
}

static void ev_health(sim_kernel *k, void *obj, uint64_t svc) {
  model_world *w = obj;
  mw_ctl_svc *c = ctl_of(w, (int)svc);
  const mw_service *s = &w->topo.services[svc];
  const model_health_cfg *h = &c->cfg.ctl->health;
  int64_t now = sim_now_ns(k);
  for (int32_t i = 0; i < c->n_cur; i++) {
    if (!(c->ready & (UINT64_C(1) << i))) continue;
    uint64_t bit = UINT64_C(1) << i;
    if (probe_ok(w, s, i, now, h->timeout_ns)) {
      c->hc_fail[i] = 0;
      if (++c->hc_ok[i] >= h->healthy) c->unhealthy &= ~bit;
      /* Envoy's successful_active_health_check_uneject_host (on by default). */
      for (size_t j = 0; j < c->n_ej; j++)
        model_eject_health_ok(c->ej[j], i, now);
    } else {
      c->hc_ok[i] = 0;
      if (++c->hc_fail[i] >= h->unhealthy) c->unhealthy |= bit;
    }
  }
  again(w, h->interval_ns, ev_health, svc);
}

/* A self-eject probe: the dependency has a replica in service that passes a probe. */
static bool dependency_ok(const model_world *w, int dep, int64_t now) {
  const mw_service *d = &w->topo.services[dep];
  const mw_ctl_svc *dc = ctl_of(w, dep);
  uint64_t m = dc != NULL ? in_service(dc) : mask_of(d->cfg->replicas);
  for (int32_t i = 0; m != 0; i++, m >>= 1)
    if ((m & 1) && probe_ok(w, d, i, now, INT64_C(1000000000))) return true;
  return false;
}

static void ev_self_probe(sim_kernel *k, void *obj, uint64_t svc) {
  model_world *w = obj;
  mw_ctl_svc *c = ctl_of(w, (int)svc);
  const model_self_eject_cfg *se = &c->cfg.ctl->self_eject;
  if (c->self_out != 0) {
    bool ok = dependency_ok(w, se->dependency, sim_now_ns(k));
    for (int32_t i = 0; i < c->n_cur; i++) {
      uint64_t bit = UINT64_C(1) << i;
      if (!(c->self_out & bit)) continue;
      c->se_ok[i] = ok ? c->se_ok[i] + 1 : 0;
      if (c->se_ok[i] >= se->return_after_successes) {
        c->self_out &= ~bit;
        c->se_ok[i] = c->se_fail[i] = 0;
      }
    }
  }
  again(w, se->probe_interval_ns, ev_self_probe, svc);
}

/* A call of a self-ejecting service to its dependency ended (the edge's on_done in place of
 * model__downstream_done, which it then calls): its replica counts the failures in a row. */
static void self_eject_done(model_world *w, const mw_end *end) {
  const mw_req *r = end->done_ctx;
  mw_ctl_svc *c = ctl_of(w, r->edge->callee);
  int32_t i = r->replica;
  if (end->reason != RETRY_STOP_CANCELLED && i >= 0 && i < c->n_cur) {
    if (end->ok) {
      c->se_fail[i] = 0;
    } else if (++c->se_fail[i] >= c->cfg.ctl->self_eject.after_failures) {
      c->self_out |= UINT64_C(1) << i;
      c->se_ok[i] = 0;
    }
  }
  model__downstream_done(w, end);
}

/* The autoscaler's metric: each started replica's busy workers over its workers, sampled
 * 1,000 times per sync period and averaged over it, as metrics-server averages CPU over its
 * window. Sampled rather than integrated, so that the hot path keeps no per-replica busy
 * time; once a second was too coarse (a replica's mean over 15 binary samples wanders by
 * 10 %, more than the tolerance), a thousand times puts the noise near 1 %. */
static int64_t sample_every(const mw_ctl_svc *c) {
  int64_t every = c->cfg.ctl->hpa.sync_period_ns / 1000;
  return every > 0 ? every : 1;
}

static void ev_hpa_sample(sim_kernel *k, void *obj, uint64_t svc) {
  model_world *w = obj;
  mw_ctl_svc *c = ctl_of(w, (int)svc);
  const mw_service *s = &w->topo.services[svc];
  int64_t now = sim_now_ns(k);
  for (int32_t i = 0; i < c->n_cur; i++) {
    if (!(c->ready & (UINT64_C(1) << i))) continue;
    int32_t workers = model__replica_workers(s, i, now);
    c->util[i] += workers > 0 ? (double)s->replicas[i].busy / workers : 1.0;
    c->util_n[i]++;
  }
  again(w, sample_every(c), ev_hpa_sample, svc);
}

static void ev_hpa_sync(sim_kernel *k, void *obj, uint64_t svc) {
  model_world *w = obj;
  mw_ctl_svc *c = ctl_of(w, (int)svc);
  model_hpa_sample smp = {0};
  for (int32_t i = 0; i < c->n_cur; i++) {
    if (!(c->ready & (UINT64_C(1) << i))) {
      smp.n_unready++;
    } else if (c->util_n[i] == 0) {
      smp.n_missing++;
    } else {
      smp.n_ready++;
      smp.busy_sum += c->util[i] / c->util_n[i];
    }
    c->util[i] = 0;
    c->util_n[i] = 0;
  }
  int32_t want = model_hpa_sync(c->hpa, &smp, sim_now_ns(k));
  if (want != c->n_cur)
    set_replicas(w, (int)svc, want, c->cfg.ctl->startup_delay_ns, sim_now_ns(k));
  again(w, c->cfg.ctl->hpa.sync_period_ns, ev_hpa_sync, svc);
}

/* }================================================================== */

/* {==================================================================
 * Life cycle, columns and results
 * =================================================================== */

int model__ctl_prepare(model_world *w) {
  size_t n = w->topo.n_services;
  for (size_t i = 0; i < n; i++) {
    const model_service_cfg *sc = &w->cfg->services[i];
    if (!model_ctl_cfg_on(sc->ctl)) continue;
    if (w->ctl == NULL) {
      w->ctl = model__calloc(w, 1, sizeof *w->ctl);
      if (w->ctl == NULL) return -1;
      w->ctl->svc = model__calloc(w, n, sizeof *w->ctl->svc);
      if (w->ctl->svc == NULL) return -1;
    }
    mw_ctl_svc *c = model__calloc(w, 1, sizeof *c);
    if (c == NULL) return -1;
    w->ctl->svc[i] = c;
    c->cfg = *sc;
    c->lb = sc->lb;
    c->cfg.lb = MODEL_LB_CTL;
    if (sc->ctl->replicas_max > sc->replicas) c->cfg.replicas = sc->ctl->replicas_max;
    c->n_cur = sc->replicas;
    c->ready = mask_of(sc->replicas);
    c->col_in_service = c->col_replicas = -1;
    w->topo.services[i].cfg = &c->cfg;
  }
  return 0;
}

/* The detectors of the edges into service i (each caller's balancer has its own). */
static int detectors_create(model_world *w, size_t i, mw_ctl_svc *c) {
  for (size_t j = 0; j < w->topo.n_edges; j++)
    if (w->topo.edges[j].callee == (int)i) c->n_ej++;
  c->ej = model__calloc(w, c->n_ej + 1, sizeof *c->ej);
  if (c->ej == NULL) return -1;
  size_t k = 0;
  for (size_t j = 0; j < w->topo.n_edges; j++) {
    if (w->topo.edges[j].callee != (int)i) continue;
    model_eject *e = model__calloc(w, 1, sizeof *e);
    if (e == NULL) return -1;
    c->ej[k++] = e;
    w->ctl->edge[j] = e;
    if (model_eject_init(e, &c->cfg.ctl->outlier, c->n_cur, w->run.err) != 0) return -1;
  }
  char entity[96];
  snprintf(entity, sizeof entity, "service:%s", c->cfg.name);
  c->rng_ej = sim_rng_stream_create(w->seed, entity, "outlier", 0);
  return c->rng_ej == NULL ? -1 : 0;
}

static int schedule_first(model_world *w, int64_t at, sim_event_fn fn, uint64_t arg) {
  if (at > w->run.end_ns) return 0;
  return sim_event_schedule(w->k, at, fn, w, arg) == SIM_EVENT_NONE ? -1 : 0;
}

/* Service i's detectors, autoscaler, wrapped edges and first events. */
static int svc_start(model_world *w, size_t i, mw_ctl_svc *c) {
  const model_ctl_cfg *cc = c->cfg.ctl;
  if (cc->outlier_on && (detectors_create(w, i, c) < 0 ||
                         schedule_first(w, cc->outlier.interval_ns, ev_outlier_tick, i) < 0))
    return -1;
  if (cc->health.on && schedule_first(w, cc->health.interval_ns, ev_health, i) < 0) return -1;
  if (cc->self_eject.on) {
    mw_service *s = &w->topo.services[i];
    for (size_t j = 0; j < c->cfg.n_calls; j++)
      if (c->cfg.calls[j].service == cc->self_eject.dependency)
        s->call_edges[j]->on_done = self_eject_done;
    if (schedule_first(w, cc->self_eject.probe_interval_ns, ev_self_probe, i) < 0) return -1;
  }
  if (cc->autoscaler_on) {
    c->hpa = model_hpa_create(&cc->hpa, c->n_cur, sim_kernel_allocator(w->k), w->run.err);
    if (c->hpa == NULL || schedule_first(w, sample_every(c), ev_hpa_sample, i) < 0 ||
        schedule_first(w, cc->hpa.sync_period_ns, ev_hpa_sync, i) < 0)
      return -1;
  }
  for (int32_t e = 0; e < cc->n_scale; e++)
    if (schedule_first(w, cc->scale[e].at_ns, ev_scale, ((uint64_t)i << 32) | (uint64_t)e) < 0)
      return -1;
  return 0;
}

int model__ctl_create(model_world *w) {
  if (w->ctl == NULL) return 0;
  w->ctl->edge = model__calloc(w, w->topo.n_edges + 1, sizeof *w->ctl->edge);
  if (w->ctl->edge == NULL) return -1;
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_ctl_svc *c = w->ctl->svc[i];
    if (c != NULL && svc_start(w, i, c) < 0) return -1;
  }
  return 0;
}

void model__ctl_destroy(model_world *w) {
  if (w->ctl == NULL) return;
  for (size_t i = 0; w->ctl->svc != NULL && i < w->topo.n_services; i++) {
    mw_ctl_svc *c = w->ctl->svc[i];
    if (c == NULL) continue;
    for (size_t j = 0; c->ej != NULL && j < c->n_ej; j++)
      model__free(w, c->ej[j]);
    model__free(w, c->ej);
    if (c->rng_ej != NULL) gsl_rng_free(c->rng_ej);
    model_hpa_destroy(c->hpa);
    if (w->topo.services != NULL && w->topo.services[i].cfg == &c->cfg)
      w->topo.services[i].cfg = &w->cfg->services[i];
    model__free(w, c);
  }
  model__free(w, w->ctl->svc);
  model__free(w, w->ctl->edge);
  model__free(w, w->ctl);
  w->ctl = NULL;
}

int model__ctl_columns(model_world *w,
                       int (*column)(model_world *, const char *, const char *, bool)) {
  for (size_t i = 0; w->ctl != NULL && i < w->topo.n_services; i++) {
    mw_ctl_svc *c = w->ctl->svc[i];
    if (c == NULL) continue;
    c->col_in_service = column(w, c->cfg.name, "replicas_in_service", false);
    if (c->col_in_service < 0) return -1;
    if (c->cfg.ctl->replicas_max == 0) continue;
    c->col_replicas = column(w, c->cfg.name, "replicas", false);
    if (c->col_replicas < 0) return -1;
  }
  return 0;
}

/* Replicas in service at the bucket's end: for outlier detection, which each caller's
 * balancer keeps for itself, the mean over the callers' views. */
void model__ctl_sample(model_world *w, double *row) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_ctl_svc *c = w->ctl->svc[i];
    if (c == NULL) continue;
    uint64_t m = in_service(c);
    double v = popcount64(m);
    if (c->n_ej > 0) {
      v = 0;
      for (size_t j = 0; j < c->n_ej; j++)
        v += popcount64(m & ~c->ej[j]->ejected);
      v /= (double)c->n_ej;
    }
    row[c->col_in_service] = v;
    if (c->col_replicas >= 0) row[c->col_replicas] = c->n_cur;
  }
}

/* Capacity for utilization: the replicas in force over time, where their count changes. */
void model__ctl_report(model_world *w) {
  int64_t now = sim_now_ns(w->k);
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_ctl_svc *c = w->ctl->svc[i];
    if (c == NULL || c->cfg.ctl->replicas_max == 0) continue;
    count_replicas(w, c, now);
    w->res.services[i].capacity_s = c->replica_s * (double)c->cfg.workers;
  }
}

/* }================================================================== */

void model_ctl_cfg_default(model_ctl_cfg *c) {
  memset(c, 0, sizeof *c);
  model_eject_cfg_default(&c->outlier);
  model_hpa_cfg_default(&c->hpa);
  c->health.interval_ns = INT64_C(10000000000);
  c->health.timeout_ns = INT64_C(1000000000);
  c->health.unhealthy = 3;
  c->health.healthy = 1;
  c->self_eject.dependency = -1;
  c->self_eject.after_failures = 3;
  c->self_eject.return_after_successes = 1;
  c->self_eject.probe_interval_ns = INT64_C(1000000000);
}
