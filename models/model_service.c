/*
 * model_service.c: services. Each has replicas; each replica has workers and a bounded queue
 * (its discipline, FIFO, LIFO or CoDel's, in model_queue.h). A request picks a replica through
 * the load balancer, meets the fault timeline, is admitted, queued or rejected, holds a worker
 * for its service time, runs the handler (its side effect; its own calls are model_fanout.c's)
 * and travels back. Invariant: a replica never has a queued request while one of its workers
 * is idle.
 */
#include <assert.h>
#include <gsl/gsl_randist.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_dist.h"
#include "models/model_int.h"
#include "models/model_queue.h"
#include "sim/sim_rng.h"

static MODEL_HOT void replica_pump(model_world *w, mw_service *s, int32_t rep);

/* {==================================================================
 * Faults
 * =================================================================== */

_Static_assert(MODEL_MAX_REPLICAS <= 64, "a fault's replica_mask has a bit a replica");

/* Returns whether fault f applies to a request of `method`, attempt `attempt`, on replica rep
 * at now (time window, replicas, attempts, method and count limit). */
static bool fault_applies(const mw_service *s, size_t i, int64_t now, int32_t rep, int32_t attempt,
                          const char *method) {
  const model_fault_cfg *f = &s->cfg->faults[i];
  if (now < f->start_ns || now >= f->end_ns) return false;
  if (rep >= 0 && rep < MODEL_MAX_REPLICAS && !(f->replica_mask & (UINT64_C(1) << rep)))
    return false;
  if (f->attempt_mask != 0 &&
      (attempt < 1 || attempt > 32 || !(f->attempt_mask & (UINT32_C(1) << (attempt - 1)))))
    return false;
  if (f->method != NULL && (method == NULL || strcmp(f->method, method) != 0)) return false;
  if (f->max_count > 0 && s->fault_counts[i] >= f->max_count) return false;
  return true;
}

/* Draws whether a fault with probability rate strikes this request. A certain fault draws
 * nothing, so adding `rate: 1` explicitly does not shift the fault stream. */
static bool fault_strikes(const model_fault_cfg *f, gsl_rng *r) {
  return f->rate >= 1.0 || sim_rng_uniform(r) < f->rate;
}

/* Returns the first fault of `kind` that applies now to (rep, attempt, method), or NULL. Does
 * not count it. */
static const model_fault_cfg *fault_search(const mw_service *s, model_fault_kind kind, int64_t now,
                                           int32_t rep, int32_t attempt, const char *method,
                                           size_t *index) {
  for (size_t i = 0; i < s->cfg->n_faults; i++) {
    if (s->cfg->faults[i].kind != kind) continue;
    if (!fault_applies(s, i, now, rep, attempt, method)) continue;
    if (index != NULL) *index = i;
    return &s->cfg->faults[i];
  }
  return NULL;
}

/* fault_search, asked only when the service has a fault of that kind at all. */
static inline const model_fault_cfg *fault_find(const mw_service *s, model_fault_kind kind,
                                                int64_t now, int32_t rep, int32_t attempt,
                                                const char *method, size_t *index) {
  if (!(s->fault_kinds & (UINT32_C(1) << kind))) return NULL;
  return fault_search(s, kind, now, rep, attempt, method, index);
}

/* Workers of replica rep now: fewer while a CAPACITY fault below the configured count holds
 * (the least of those active wins). Requests already on a worker finish; the lower count only
 * stops new ones from starting, as when a node loses cores to a noisy neighbour rather than
 * crashing. A CAPACITY fault above the configured count adds workers for its window (the
 * most of those active, when no cut holds): capacity added by hand, as operators add hosts;
 * workers busy when it ends finish their requests. */
static int32_t replica_workers_faulted(const mw_service *s, int32_t rep, int64_t now) {
  int32_t base = s->cfg->workers;
  if (!(s->fault_kinds & (UINT32_C(1) << MODEL_FAULT_CAPACITY))) return base;
  /* an operator's capacity action (model__service_set_workers) replaces the config's count;
   * its service always has a capacity fault (an inert one: model_operator.c) */
  if (s->replicas[rep].ops_workers > 0) base = s->replicas[rep].ops_workers;
  int32_t n = base, added = base;
  for (size_t i = 0; i < s->cfg->n_faults; i++) {
    const model_fault_cfg *f = &s->cfg->faults[i];
    if (f->kind != MODEL_FAULT_CAPACITY || !fault_applies(s, i, now, rep, 0, NULL)) continue;
    if (f->workers < n) n = f->workers;
    if (f->workers > added) added = f->workers;
  }
  return n < base ? n : added;
}

static inline int32_t replica_workers(const mw_service *s, int32_t rep, int64_t now) {
  return s->cfg->n_faults == 0 ? s->cfg->workers : replica_workers_faulted(s, rep, now);
}

/* An operator's capacity action: every replica has `workers` workers from now on. Fewer: the
 * requests on a worker finish, no new one starts beyond the count; more: queued requests
 * start now. */
void model__service_set_workers(model_world *w, int svc, int32_t workers) {
  mw_service *s = &w->topo.services[svc];
  assert(s->fault_kinds & (UINT32_C(1) << MODEL_FAULT_CAPACITY)); /* model__ops_columns */
  for (int32_t rep = 0; rep < s->cfg->replicas; rep++) {
    s->replicas[rep].ops_workers = workers;
    replica_pump(w, s, rep);
  }
}

int32_t model__replica_workers(const mw_service *s, int32_t rep, int64_t now) {
  return replica_workers(s, rep, now);
}

bool model__replica_down(const mw_service *s, int32_t rep, int64_t now) {
  if (!(s->fault_kinds & (UINT32_C(1) << MODEL_FAULT_DOWN))) return false;
  for (size_t i = 0; i < s->cfg->n_faults; i++)
    if (s->cfg->faults[i].kind == MODEL_FAULT_DOWN && s->cfg->faults[i].rate >= 1.0 &&
        s->cfg->faults[i].attempt_mask == 0 && s->cfg->faults[i].method == NULL &&
        fault_applies(s, i, now, rep, 0, NULL))
      return true;
  return false;
}

/* A capacity fault is over: its workers are back, and nothing else would start the requests
 * queued meanwhile (with `workers: 0` no request finishes to pump the queue); or a fault that
 * adds workers starts, whose new workers take the queue at once. obj is the
 * world, arg the service's index. Every replica is pumped; replica_pump stops at each
 * replica's current count, so an overlapping fault still holding keeps its limit. */
static void ev_capacity_back(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  model_world *w = obj;
  mw_service *s = &w->topo.services[arg];
  for (int32_t rep = 0; rep < s->cfg->replicas; rep++)
    replica_pump(w, s, rep);
}

/* For the time series: how many fault entries overlap [t0, t1), whatever their selectors,
 * so that plots can shade the fault window. */
int model__faults_active(const model_world *w, int64_t t0_ns, int64_t t1_ns) {
  int n = 0;
  for (size_t s = 0; s < w->topo.n_services; s++) {
    const model_service_cfg *cfg = w->topo.services[s].cfg;
    for (size_t i = 0; i < cfg->n_faults; i++)
      if (cfg->faults[i].start_ns < t1_ns && cfg->faults[i].end_ns > t0_ns) n++;
  }
  return n;
}

/* }================================================================== */

/* {==================================================================
 * Replies
 * =================================================================== */

/* The return hop is over: the caller (or nobody) gets the reply. */
static void ev_reply(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  (void)arg;
  mw_req *r = obj;
  model__req_reply_arrived(r->edge->w, r);
}

/* Readies r's reply: a failure reply without pushback of its own gets the pushback of an
 * active PUSHBACK fault. */
static MODEL_HOT void reply_prepare(model_world *w, mw_req *r) {
  mw_service *s = &w->topo.services[r->edge->callee];
  int64_t now = sim_now_ns(w->k);
  /* Out of the queue the links read NULL: no pushback yet (the invariant at mw_req's union). */
  if (!retry_status_is_ok(s->cfg->space, r->status) && model__req_pushback_unset(r)) {
    const model_fault_cfg *f = fault_find(s, MODEL_FAULT_PUSHBACK, now, r->replica, r->attempt,
                                          model__req_method(r), NULL);
    if (f != NULL) {
      r->pushback = f->pushback;
      r->retry_after = f->retry_after;
    }
  }
  if (r->acc_forwarded) { /* the filter sees the response go by */
    mw_replica *rp = &s->replicas[r->replica];
    model_acc_record(rp->acc, r->side->acc_sent_ns, now, rp->rng_acc);
    r->acc_forwarded = false;
  }
  r->state = MW_REQ_HOP_BACK;
}

/* Sends r's reply back over one hop, always an event: this is called while the caller may be
 * inside its own send (a refusal on arrival), where it must not hear the reply yet. */
static void reply_send(model_world *w, mw_req *r) {
  reply_prepare(w, r);
  if (model__schedule_sample(w, r->edge->network, r->rng_net, ev_reply, r) == SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

/* One refusal, in the summary and in the <service>_rejected_rps column alike (column 1 of the
 * service's block). */
static void count_rejected(model_world *w, mw_service *s) {
  s->stats->rejected++;
  model__ts_add(w, w->ts.col_svc0 + (int)s->index * w->ts.svc_cols + 1, 1.0);
}

/* Refuses r without work: queue full, replica down or a REFUSE fault. Refusals take no
 * worker and no time beyond the hops, which is why a refusing replica looks idle to p2c. */
static void reply_reject(model_world *w, mw_req *r, int32_t status, const char *pushback,
                         const char *retry_after) {
  mw_service *s = &w->topo.services[r->edge->callee];
  count_rejected(w, s);
  r->status = (int16_t)status;
  r->pushback = pushback;
  r->retry_after = retry_after;
  reply_send(w, r);
}

/* A refusal for overload (queue full, shedding, a refused retry): with a retry budget whose
 * replica sees more than its share of retries, "overloaded; don't retry" instead. */
static void reject_overload(model_world *w, mw_req *r, int32_t status, const char *pushback,
                            const char *retry_after) {
  mw_service *s = &w->topo.services[r->edge->callee];
  const model_retry_budget_cfg *rb = &s->cfg->retry_budget;
  if (rb->on && model_retry_share_ratio(&s->replicas[r->replica].share) > rb->ratio) {
    s->stats->dont_retry++;
    reply_reject(w, r, rb->status, rb->pushback, NULL);
    return;
  }
  reply_reject(w, r, status, pushback, retry_after);
}

/* }================================================================== */

/* {==================================================================
 * Load balancing
 * =================================================================== */

/* Load of a replica for power of two choices: requests it holds (busy workers plus queue),
 * the local view a proxy has of its outstanding requests. */
static int32_t replica_load(const mw_service *s, int32_t i) {
  return s->replicas[i].busy + s->replicas[i].queued;
}

/* Picks a replica for r. A retry may avoid the replica its call's previous attempt used. */
static MODEL_HOT int32_t lb_pick(mw_service *s, mw_req *r) {
  int32_t n = s->cfg->replicas;
  if (n == 1) return 0;
  int32_t avoid = -1;
  if (s->cfg->lb_avoid_previous && !r->bare && r->attempt > 1 && model__req_call(r) != NULL)
    avoid = model__req_call(r)->last_replica;
  int32_t m = avoid >= 0 ? n - 1 : n; /* candidates */
  /* With avoid set, random and p2c draw among m = n - 1 candidates and indexes from `avoid`
   * up shift by one, so the avoided replica is never picked and the others stay equally
   * likely; round robin steps over it. */
  switch (s->cfg->lb) {
    case MODEL_LB_ROUND_ROBIN: {
      int32_t i = (int32_t)(s->rr_next++ % (uint32_t)n);
      if (i == avoid) i = (int32_t)(s->rr_next++ % (uint32_t)n);
      return i;
    }
    case MODEL_LB_RANDOM: {
      int32_t i = (int32_t)sim_rng_uniform_int(s->rng_lb, (unsigned long)m);
      return avoid >= 0 && i >= avoid ? i + 1 : i;
    }
    case MODEL_LB_CTL: return model__ctl_pick(s, r); /* model_ctl.c */
    case MODEL_LB_P2C:
    default: {
      /* Two distinct candidates among the m allowed, mapped past the avoided one. */
      int32_t a = (int32_t)sim_rng_uniform_int(s->rng_lb, (unsigned long)m);
      int32_t b = m > 1 ? (int32_t)sim_rng_uniform_int(s->rng_lb, (unsigned long)(m - 1)) : a;
      if (m > 1 && b >= a) b++;
      if (avoid >= 0) {
        if (a >= avoid) a++;
        if (b >= avoid) b++;
      }
      return replica_load(s, b) < replica_load(s, a) ? b : a;
    }
  }
}

/* }================================================================== */

/* {==================================================================
 * Work: admission, queue, workers, handler
 * =================================================================== */

static void ev_work_done(sim_kernel *k, void *obj, uint64_t arg);

/* Gives r a worker of its replica (or drops it when it expired and the service drops expired
 * work). Returns whether a worker was taken. */
/* How long r's worker is busy, and whether that time repeats (a FIFO lane holds its end):
 * a fault's fixed delay replaces the service time (a handler that hangs then fails),
 * otherwise one draw from the replica's stream; then the multipliers: active slowdown faults
 * and congestion with the workers already busy. */
static int64_t work_time(mw_service *s, mw_replica *rp, mw_req *r, int64_t now, bool *repeats) {
  const model_service_cfg *cfg = s->cfg;
  int64_t work;
  if (r->refuse_after_delay)
    work = r->fail != 0 ? model__req_fail(s, r)->delay_ns : 0;
  else if (r->fail != 0 && model__req_fail(s, r)->delay_ns > 0)
    work = model__req_fail(s, r)->delay_ns;
  else
    work = sim_dist_sample(&cfg->service_time, rp->rng_work);
  double factor = 1.0 + cfg->slowdown_per_busy * (double)(rp->busy - 1);
  if (cfg->work.on) /* work that grows beyond the per-busy term (model_work.c) */
    factor = model__work_factor(cfg, (double)(rp->busy - 1), (double)rp->queued, now);
  int64_t stall = 0;
  bool timed = (s->fault_kinds &
                ((UINT32_C(1) << MODEL_FAULT_SLOWDOWN) | (UINT32_C(1) << MODEL_FAULT_STALL))) != 0;
  for (size_t i = 0; timed && i < cfg->n_faults; i++) {
    const model_fault_cfg *f = &cfg->faults[i];
    if (f->kind != MODEL_FAULT_SLOWDOWN && f->kind != MODEL_FAULT_STALL) continue;
    if (!fault_applies(s, i, now, r->replica, r->attempt, model__req_method(r))) continue;
    if (f->kind == MODEL_FAULT_SLOWDOWN) {
      factor *= f->factor;
    } else if (fault_strikes(f, rp->rng_fault)) {
      stall += f->delay_ns;
      s->fault_counts[i]++;
    }
  }
  double t = (double)work * factor + (double)stall;
  /* Constant work (a constant service time, or a fault's fixed delay) repeats. */
  *repeats = stall == 0 && factor == 1.0 &&
             (r->refuse_after_delay || (r->fail != 0 && model__req_fail(s, r)->delay_ns > 0) ||
              cfg->service_time.kind == SIM_DIST_CONSTANT);
  return t >= (double)(INT64_MAX / 4) ? INT64_MAX / 4 : (int64_t)t;
}

/* Gives r a worker of its replica (or drops it when it expired and the service drops expired
 * work). Returns whether a worker was taken. */
static MODEL_HOT bool work_start(model_world *w, mw_service *s, mw_req *r) {
  const model_service_cfg *cfg = s->cfg;
  mw_replica *rp = &s->replicas[r->replica];
  int64_t now = sim_now_ns(w->k);
  if (!s->plain_start) {
    /* The deadline a request carries is its attempt's; RETRY_NEVER never expires. */
    if (cfg->deadline != MODEL_DEADLINE_IGNORE && now >= r->deadline_ns) {
      s->stats->expired++;
      if (cfg->deadline == MODEL_DEADLINE_DROP) {
        r->dropped = true;
        r->status = (int16_t)model__status_deadline(cfg->space);
        reply_send(w, r);
        return false;
      }
      r->expired_waste = true;
    }
    if (cfg->contention.on) r->read_version = model_row_read(&s->row);
  }
  rp->busy++;
  rp->busy_start_sum += (uint64_t)now;
  r->state = MW_REQ_WORKING;
  r->work_start_ns = now;
  /* A service without slowdown or stall faults or congestion draws the time of a request no
   * fault holds and uses it as it is: work_time would multiply it by 1 and add 0, which
   * changes nothing below 2^53 ns. */
  int64_t work;
  bool repeats;
  if (s->plain_time && r->fail == 0) { /* (a delayed refusal has its fault in fail too) */
    work = sim_dist_sample(&cfg->service_time, rp->rng_work);
    repeats = cfg->service_time.kind == SIM_DIST_CONSTANT;
    if (work >= (INT64_C(1) << 53)) { /* as work_time rounds and bounds it */
      double t = (double)work;
      work = t >= (double)(INT64_MAX / 4) ? INT64_MAX / 4 : (int64_t)t;
    }
  } else {
    work = work_time(s, rp, r, now, &repeats);
  }
  sim_event_handle h = repeats ? sim_event_schedule_lane(w->k, work, ev_work_done, r, 0)
                               : sim_event_schedule_in(w->k, work, ev_work_done, r, 0);
  if (h == SIM_EVENT_NONE) model__fail(w, RETRY_ENOMEM, "out of memory for events");
  return true;
}

/* Starts queued requests while replica rep has idle workers, in the order of the queue's
 * discipline (model_queue.h). A request refused as it leaves the queue (CoDel's bound) or
 * dropped as expired does not take a worker, so the loop goes on to the next one. */
static MODEL_HOT void replica_pump(model_world *w, mw_service *s, int32_t rep) {
  mw_replica *rp = &s->replicas[rep];
  int64_t now = sim_now_ns(w->k);
  while (model__queue_has_waiting(rp) && rp->busy < replica_workers(s, rep, now)) {
    mw_req *r = model__queue_take(s, rp, now);
    /* Controlled delay: waited past the bound set when it was queued, refused unworked. */
    if (model__queue_expired(s, r, now)) {
      s->stats->codel_dropped++;
      reply_reject(w, r, s->cfg->codel.status, NULL, NULL);
      continue;
    }
    work_start(w, s, r);
  }
}

/* The handler is over (status in r->status): free the worker, reply, serve the queue. Busy
 * time is counted here, when it is known, for utilization and wasted work; an OK reply
 * carries headers and the method's stream messages, a failure after headers the fault's. */
/* r's worker is free at now: its time (returned, in seconds) counts as busy. */
static double worker_release(mw_service *s, mw_req *r, int64_t now) {
  mw_replica *rp = &s->replicas[r->replica];
  rp->busy--;
  rp->busy_start_sum -= (uint64_t)r->work_start_ns;
  r->worker_ns = now - r->work_start_ns;
  double secs = (double)r->worker_ns / 1e9;
  s->stats->busy_s += secs;
  return secs;
}

static MODEL_HOT void handler_finish(model_world *w, mw_req *r) {
  mw_service *s = &w->topo.services[r->edge->callee];
  int64_t now = sim_now_ns(w->k);
  double secs = worker_release(s, r, now);
  s->stats->served++;
  if (r->expired_waste) s->stats->wasted_work_s += secs;
  if (retry_status_is_ok(s->cfg->space, r->status)) {
    r->headers = true;
    r->items = r->ok_items;
  } else if (r->fail != 0 && !r->refuse_after_delay) {
    r->headers = model__req_fail(s, r)->after_headers;
    r->items = model__req_fail(s, r)->after_headers ? model__req_fail(s, r)->stream_items : 0;
  }
  int32_t rep = r->replica;
  /* A hop back of no time costs no event: the reply reaches the caller now, after the queue
   * was served, as the event would have (it ran before the work the pump schedules). Safe:
   * a handler finishes in an event of its own (the work done, or a downstream call's end),
   * never inside its caller's send. */
  if (r->edge->zero_hop) {
    reply_prepare(w, r);
    replica_pump(w, s, rep);
    model__req_reply_arrived(w, r);
    return;
  }
  reply_send(w, r);
  replica_pump(w, s, rep);
}

/* Downstream calls are over (or there were none): the side effect after them, then the reply.
 * A FAIL fault's status wins over the handler's own result: the fault says the handler
 * failed after doing its work, which is exactly the case that duplicates side effects. */
static MODEL_HOT void handler_after_calls(model_world *w, mw_req *r) {
  mw_service *s = &w->topo.services[r->edge->callee];
  /* The record of its calls (all ended, or left by a k-of-n fan-out, which took it) goes. */
  if (r->state == MW_REQ_DOWNSTREAM && s->keeps_calls && r->fanout != NULL) {
    model__pool_put(&w->pools.fanouts, r->fanout);
    r->fanout = NULL;
  }
  bool ds_failed = r->side != NULL && r->side->ds_failed;
  if (!ds_failed && s->cfg->effect == MODEL_EFFECT_AFTER) model__op_execute(w, s, r->op);
  if (r->fail != 0)
    r->status = (int16_t)model__req_fail(s, r)->status;
  else if (ds_failed)
    r->status = (int16_t)r->side->ds_status;
  else
    r->status = (int16_t)model__status_ok(s->cfg->space);
  if (r->fail != 0) {
    r->pushback = model__req_fail(s, r)->pushback;
    r->retry_after = model__req_fail(s, r)->retry_after;
  }
  handler_finish(w, r);
}

/* The handler's end, its worker and its queue, for the handler's calls (model_fanout.c):
 * out-of-line doors to what stays inline here. */
void model__handler_after_calls(model_world *w, mw_req *r) { handler_after_calls(w, r); }
double model__worker_release(mw_service *s, mw_req *r, int64_t now) {
  return worker_release(s, r, now);
}
void model__replica_pump(model_world *w, mw_service *s, int32_t rep) { replica_pump(w, s, rep); }

/* The service time is over: the handler's own work is done. What follows depends on the
 * handler: a delayed refusal replies at once; a deadline-aware handler checks its context
 * before the side effect; then the effect (before), the downstream calls, the effect (after). */
static void ev_work_done(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  mw_req *r = obj;
  model_world *w = r->edge->w;
  mw_service *s = &w->topo.services[r->edge->callee];
  const model_service_cfg *cfg = s->cfg;
  int64_t now = sim_now_ns(k);
  if (r->refuse_after_delay) { /* refused after a delay: no handler, no side effect */
    r->pushback = model__req_fail(s, r)->pushback;
    r->retry_after = model__req_fail(s, r)->retry_after;
    count_rejected(w, s);
    handler_finish(w, r);
    return;
  }
  if (cfg->deadline == MODEL_DEADLINE_DROP && now >= r->deadline_ns) {
    /* A deadline-aware handler checks its context before the side effect. */
    s->stats->expired++;
    r->dropped = true;
    r->status = (int16_t)model__status_deadline(cfg->space);
    handler_finish(w, r);
    return;
  }
  /* Contention: the conditional write, with the version read when the work started. */
  if (cfg->contention.on && !model_row_write(&s->row, r->read_version)) {
    s->stats->conflicts++;
    r->status = (int16_t)cfg->contention.status;
    handler_finish(w, r);
    return;
  }
  if (cfg->effect == MODEL_EFFECT_BEFORE ||
      (cfg->effect == MODEL_EFFECT_AFTER && cfg->n_calls == 0))
    model__op_execute(w, s, r->op);
  if (cfg->n_calls == 0) {
    handler_after_calls(w, r);
    return;
  }
  model__handler_calls(w, s, r); /* model_fanout.c */
}

/* A request arrives: load balancer, then the fault timeline in a fixed order (down, refuse,
 * fail: the first that applies wins), then admission. Faults are judged at arrival, with the
 * attempt number the request carries, which is how "refuse every first attempt" is written. */
/* What a request meets before the queue, in a fixed order: its criticality label, the
 * server-side retry budget's count, the admission bucket, the fault timeline (down, refuse,
 * fail: the first that applies wins), Envoy's adaptive concurrency filter, the retry budget's
 * refusal and shedding. Returns whether r was answered (refused) here. A service with none of
 * these (mw_service.plain_arrival) skips the lot. */
static MODEL_HOT bool arrive_screen(model_world *w, mw_service *s, mw_req *r, mw_replica *rp, int64_t now) {
  const model_service_cfg *cfg = s->cfg;
  /* A request without a criticality gets this service's label (its calls then carry it). */
  if (r->criticality == MODEL_CRIT_UNSET && cfg->criticality.on)
    r->criticality =
        (int8_t)model_criticality_of(&cfg->criticality, model__req_method(r), r->edge->stats->from);
  if (cfg->retry_budget.on)
    model_retry_share_add(&rp->share, cfg->retry_budget.window_ns, now, r->attempt > 1);
  /* Admission: the token bucket in front of the replicas refuses before anything else. */
  if (cfg->admission.on && !model_bucket_admit(&s->bucket, &cfg->admission, now)) {
    s->stats->admission_rejected++;
    reply_reject(w, r, cfg->admission.status, NULL, NULL);
    return true;
  }
  size_t fi;
  const model_fault_cfg *f;
  if ((f = fault_find(s, MODEL_FAULT_DOWN, now, r->replica, r->attempt, model__req_method(r),
                      &fi))) {
    s->fault_counts[fi]++;
    reply_reject(w, r, model__status_unavailable(cfg->space), NULL, NULL);
    return true;
  }
  /* Envoy's adaptive concurrency filter in front of the replica (past a replica that is
   * down): above its limit it answers at once. */
  if (cfg->acc.on) {
    if (!model_acc_forward(rp->acc, now, rp->rng_acc)) {
      s->stats->acc_rejected++;
      reply_reject(w, r, cfg->acc.status, NULL, NULL);
      return true;
    }
    mw_req_side *d = model__req_side(w, r);
    if (d == NULL) return true; /* the world has failed */
    r->acc_forwarded = true;
    d->acc_sent_ns = now;
  }
  if ((f = fault_find(s, MODEL_FAULT_REFUSE, now, r->replica, r->attempt, model__req_method(r),
                      &fi)) &&
      fault_strikes(f, rp->rng_fault)) {
    s->fault_counts[fi]++;
    if (f->delay_ns == 0) {
      reply_reject(w, r, f->status, f->pushback, f->retry_after);
      return true;
    }
    /* The handler takes its time, then refuses before the side effect. */
    r->refuse_after_delay = true;
    r->fail = (uint16_t)(fi + 1);
    r->status = (int16_t)f->status; /* its pushback is set once it leaves the queue */
  } else if ((f = fault_find(s, MODEL_FAULT_FAIL, now, r->replica, r->attempt, model__req_method(r),
                             &fi)) &&
             fault_strikes(f, rp->rng_fault)) {
    s->fault_counts[fi]++;
    r->fail = (uint16_t)(fi + 1);
  }
  /* The server-side retry budget: an overloaded replica refuses retries first. */
  if (cfg->retry_budget.on && r->attempt > 1 && rp->queued >= cfg->retry_budget.queue) {
    s->stats->retries_rejected++;
    reject_overload(w, r, cfg->retry_budget.retry_status, NULL, NULL);
    return true;
  }
  /* Shedding by criticality: the lowest first, as the queue grows. */
  if (cfg->shedding.on && model_shedding_refuses(&cfg->shedding, r->criticality, rp->queued)) {
    s->stats->shed++;
    reject_overload(w, r, cfg->shedding.status, NULL, NULL);
    return true;
  }
  return false;
}

static MODEL_HOT void service_enter(model_world *w, mw_service *s, mw_req *r, int64_t now);

void model__service_arrive(model_world *w, mw_req *r) {
  /* Its call was cancelled on the way: the server never starts it (model_call.c). */
  if (r->cancelled) {
    model__req_discard(w, r);
    return;
  }
  mw_service *s = &w->topo.services[r->edge->callee];
  int64_t now = sim_now_ns(w->k);
  s->stats->arrivals++;
  model__ts_add(w, w->ts.col_svc0 + (int)s->index * w->ts.svc_cols, 1.0);
  r->state = MW_REQ_AT_SERVICE;
  /* A look-aside cache answers before any replica is chosen (model_cache_world.c). */
  if (!s->plain_arrival && s->cache != NULL && model__cache_arrive(w, s, r, now)) return;
  service_enter(w, s, r, now);
}

MODEL_COLD void model__service_enter(model_world *w, mw_service *s, mw_req *r, int64_t now) {
  service_enter(w, s, r, now);
}

void model__service_reply(model_world *w, mw_req *r) { reply_send(w, r); }

/* Past the cache: the load balancer, the screen, then a worker, the queue or a refusal
 * (model__replica_enter repeats all but the balancer: keep them alike). */
static MODEL_HOT void service_enter(model_world *w, mw_service *s, mw_req *r, int64_t now) {
  const model_service_cfg *cfg = s->cfg;
  r->replica = (int8_t)lb_pick(s, r);
  if (!r->bare && model__req_call(r) != NULL) model__req_call(r)->last_replica = r->replica;
  mw_replica *rp = &s->replicas[r->replica];
  if (!s->plain_arrival && arrive_screen(w, s, r, rp, now)) return;
  /* Admission: a free worker (and nobody waiting ahead), else the queue, else a refusal. */
  if (rp->busy < replica_workers(s, r->replica, now) && !model__queue_has_waiting(rp)) {
    work_start(w, s, r);
    return;
  }
  if (rp->queued >= cfg->queue_capacity) {
    reject_overload(w, r, cfg->reject_status, cfg->reject_pushback, cfg->reject_retry_after);
    return;
  }
  model__queue_put(s, rp, r, now);
}

/* service_enter in its two steps, for a cache in each replica, looked up between them
 * (model_cache_world.c). The second repeats service_enter's tail, and the two must stay
 * alike: sharing it as an inline function compiled the hot path differently (280,000 more
 * instructions in bench/reference.json's run, none of them this feature's). */
MODEL_COLD void model__service_pick(mw_service *s, mw_req *r) {
  r->replica = (int8_t)lb_pick(s, r);
  if (!r->bare && model__req_call(r) != NULL) model__req_call(r)->last_replica = r->replica;
}

MODEL_COLD void model__replica_enter(model_world *w, mw_service *s, mw_req *r, int64_t now) {
  const model_service_cfg *cfg = s->cfg;
  mw_replica *rp = &s->replicas[r->replica];
  if (!s->plain_arrival && arrive_screen(w, s, r, rp, now)) return;
  if (rp->busy < replica_workers(s, r->replica, now) && !model__queue_has_waiting(rp)) {
    work_start(w, s, r);
    return;
  }
  if (rp->queued >= cfg->queue_capacity) {
    reject_overload(w, r, cfg->reject_status, cfg->reject_pushback, cfg->reject_retry_after);
    return;
  }
  model__queue_put(s, rp, r, now);
}

/* A cancelled request leaves its replica's queue as if it had never joined (model_queue.h).
 * An adaptive concurrency
 * filter that forwarded it stops counting it outstanding without a latency sample, as Envoy's
 * filter does for a stream reset before its response (cancelLatencySample). */
bool model__service_withdraw(model_world *w, mw_req *r) {
  if (r->state != MW_REQ_QUEUED || r->replica < 0) return false;
  mw_service *s = &w->topo.services[r->edge->callee];
  mw_replica *rp = &s->replicas[r->replica];
  model__queue_withdraw(rp, r, sim_now_ns(w->k));
  if (r->acc_forwarded) {
    if (rp->acc->outstanding > 0) rp->acc->outstanding--;
    r->acc_forwarded = false;
  }
  r->state = MW_REQ_HOP_BACK; /* out of the server's hands: nothing will touch it there */
  return true;
}

/* Queue and busy workers summed over replicas, for the time series. */
void model__service_sample(const model_world *w, size_t svc, double *queued, double *busy) {
  const mw_service *s = &w->topo.services[svc];
  double q = 0, b = 0;
  for (int32_t i = 0; i < s->cfg->replicas; i++) {
    q += s->replicas[i].queued;
    b += s->replicas[i].busy;
  }
  *queued = q;
  *busy = b;
}

/* The adaptive concurrency limits of service svc summed over its replicas, at now (their
 * timers run up to now first, so the value is the one the filter would apply). */
double model__service_acc_limit(model_world *w, size_t svc) {
  mw_service *s = &w->topo.services[svc];
  if (!s->cfg->acc.on) return 0;
  int64_t now = sim_now_ns(w->k);
  double total = 0;
  for (int32_t i = 0; i < s->cfg->replicas; i++) {
    mw_replica *rp = &s->replicas[i];
    model_acc_advance(rp->acc, now, rp->rng_acc);
    total += rp->acc->limit;
  }
  return total;
}

/* Work a worker holds at now (busy x now minus the start times, both modulo 2^64). */
double model__service_busy_in_progress(const model_world *w, size_t svc, int64_t now_ns) {
  const mw_service *s = &w->topo.services[svc];
  double total = 0;
  for (int32_t i = 0; i < s->cfg->replicas; i++) {
    const mw_replica *rp = &s->replicas[i];
    uint64_t ns = (uint64_t)rp->busy * (uint64_t)now_ns - rp->busy_start_sum;
    total += (double)ns / 1e9;
  }
  return total;
}

/* }================================================================== */

/* {==================================================================
 * Creation
 * =================================================================== */

/* Each replica gets its own streams for work, faults, the engines of its downstream calls and
 * their hops, keyed by the service's name and the replica's index, and its own channel state
 * toward each downstream service (a replica is a separate process with its own channels). */
int model__services_create(model_world *w) {
  char entity[96];
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_service *s = &w->topo.services[i];
    const model_service_cfg *cfg = s->cfg;
    for (size_t j = 0; j < cfg->n_calls; j++)
      s->call_edges[j]->on_done = cfg->calls[j].fallback_only
                                      ? model__fallback_done     /* model_fallback.c */
                                      : model__downstream_done; /* model_fanout.c */
    snprintf(entity, sizeof entity, "service:%s", cfg->name);
    s->rng_lb = sim_rng_stream_create(w->seed, entity, "lb", 0);
    s->replicas = model__calloc(w, (size_t)cfg->replicas, sizeof *s->replicas);
    assert(cfg->n_faults <= MODEL_MAX_FAULTS); /* the loader refuses more (mw_req.fail) */
    /* the loader refuses more (mw_req.replica, a fault's replica_mask) */
    assert(cfg->replicas >= 1 && cfg->replicas <= MODEL_MAX_REPLICAS);
    s->fault_counts = model__calloc(w, cfg->n_faults + 1, sizeof *s->fault_counts);
    if (s->rng_lb == NULL || s->replicas == NULL || s->fault_counts == NULL) return -1;
    if (cfg->admission.on) model_bucket_init(&s->bucket, &cfg->admission, 0);
    s->stats->has_contention = cfg->contention.on;
    s->stats->has_admission = cfg->admission.on;
    s->stats->has_codel = cfg->codel.on;
    s->stats->has_acc = cfg->acc.on;
    s->stats->has_shedding = cfg->shedding.on;
    s->stats->has_retry_budget = cfg->retry_budget.on;
    s->fault_kinds = 0;
    for (size_t f = 0; f < cfg->n_faults; f++)
      s->fault_kinds |= UINT32_C(1) << cfg->faults[f].kind;
    /* plain_arrival, plain_start, plain_time: model__features_apply, once the world exists */
    for (int32_t r = 0; r < cfg->replicas; r++) {
      mw_replica *rp = &s->replicas[r];
      rp->rng_work = sim_rng_stream_create(w->seed, entity, "work", (uint64_t)r);
      rp->rng_fault = sim_rng_stream_create(w->seed, entity, "faults", (uint64_t)r);
      if (!rp->rng_work || !rp->rng_fault) return -1;
      if (cfg->acc.on) {
        rp->acc = model__calloc(w, 1, sizeof *rp->acc);
        rp->rng_acc = sim_rng_stream_create(w->seed, entity, "adaptive-concurrency", (uint64_t)r);
        if (rp->acc == NULL || rp->rng_acc == NULL) return -1;
        model_acc_init(rp->acc, &cfg->acc, 0);
      }
      if (model__channel_open(w, &rp->ch, entity, (uint64_t)r, s->call_edges, cfg->n_calls, NULL) <
          0)
        return -1;
    }
    /* The end of each capacity fault that ends within the run starts the queue again. */
    for (size_t f = 0; f < cfg->n_faults; f++) {
      const model_fault_cfg *fc = &cfg->faults[f];
      if (fc->kind != MODEL_FAULT_CAPACITY || fc->end_ns <= 0 || fc->end_ns > w->run.end_ns)
        continue;
      if (sim_event_schedule(w->k, fc->end_ns, ev_capacity_back, w, (uint64_t)i) == SIM_EVENT_NONE)
        return -1;
    }
    /* The start of each capacity fault that adds workers starts the queue too. */
    for (size_t f = 0; f < cfg->n_faults; f++) {
      const model_fault_cfg *fc = &cfg->faults[f];
      if (fc->kind != MODEL_FAULT_CAPACITY || fc->workers <= cfg->workers ||
          fc->start_ns > w->run.end_ns)
        continue;
      if (sim_event_schedule(w->k, fc->start_ns, ev_capacity_back, w, (uint64_t)i) ==
          SIM_EVENT_NONE)
        return -1;
    }
  }
  return 0;
}

/* Frees what model__services_create made; copes with a half-built service (NULL parts). */
void model__services_destroy(model_world *w) {
  if (w->topo.services == NULL) return;
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_service *s = &w->topo.services[i];
    if (s->replicas != NULL) {
      for (int32_t r = 0; r < s->cfg->replicas; r++) {
        mw_replica *rp = &s->replicas[r];
        if (rp->rng_work) gsl_rng_free(rp->rng_work);
        if (rp->rng_fault) gsl_rng_free(rp->rng_fault);
        if (rp->rng_acc) gsl_rng_free(rp->rng_acc);
        model__free(w, rp->acc);
        model__channel_close(w, &rp->ch);
      }
    }
    model__free(w, s->replicas);
    model__free(w, s->fault_counts);
    model__free(w, s->call_edges);
    model__free(w, s->call_mcfg);
    model__free(w, s->call_of_child);
    if (s->rng_lb) gsl_rng_free(s->rng_lb);
  }
}

/* }================================================================== */
