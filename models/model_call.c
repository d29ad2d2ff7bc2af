/*
 * model_call.c: one logical call on an edge, driven by the retry engine. The engine decides;
 * this file carries the decisions out in virtual time: it sends attempts (requests with an
 * outbound hop), arms the attempt deadlines and the engine's timer, abandons the attempts the
 * engine cancels and reports every outcome back through the callback its caller gave. It also
 * opens and closes the callers' channels. A call never frees a request the server still
 * holds: an abandoned request forgets its call and is freed when its reply comes back.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "retry/retry_parts.h"
#include "sim/sim_dist.h"
#include "models/model_int.h"
#include "sim/sim_rng.h"

static void call_apply(model_world *w, mw_call *c, const retry_decision *d, int64_t armed_ns);
static void call_outcome(model_world *w, mw_call *c, int32_t attempt, const retry_outcome *o);

/* {==================================================================
 * Requests (attempts) seen from the caller
 * =================================================================== */

/* A request holds a reference on its operation for as long as the server may still execute
 * its side effect, which can be long after its call ended. */
static MODEL_HOT void req_free(model_world *w, mw_req *r) {
  if (r->cache_lead) model__cache_lead_drop(w, r); /* before the op, which holds its key */
  model__op_unref(w, r->op);
  r->op = NULL;
  /* A handler that went on at k of n (wait_for) may still have calls running, which report
   * to r: the last of them frees it. */
  if (model__req_ds_pending(r) > 0) {
    r->side->ds_orphan = true;
    return;
  }
  model__req_put(w, r);
}

/* Unlinks r from its call's list of attempts in flight. The list is short (one attempt, or a
 * few hedges), so a linear walk beats keeping back pointers. */
static void req_unlink(mw_call *c, mw_req *r) {
  for (mw_req **p = &c->reqs; *p != NULL; p = &(*p)->call_next) {
    if (*p == r) {
      *p = r->call_next;
      r->call_next = NULL;
      return;
    }
  }
}

/* The caller stops waiting for r. Nothing cancels the server's work (as with a client that
 * gives up without propagating a cancellation); the reply, when it comes, counts as abandoned
 * and its work as wasted. */
static void req_abandon(model_world *w, mw_req *r) {
  sim_event_cancel(w->k, r->timeout);
  r->timeout = SIM_EVENT_NONE;
  if (model__req_call(r) != NULL) req_unlink(model__req_call(r), r);
  r->call = NULL;
}

/* Abandons every attempt in flight of c except attempt `keep` (0: all). The engine has
 * already released what those attempts held (budget slots, in-flight counts). */
static void call_abandon_all(model_world *w, mw_call *c, int32_t keep) {
  mw_req *r = c->reqs;
  while (r != NULL) {
    mw_req *next = r->call_next;
    if (r->attempt != keep) req_abandon(w, r);
    r = next;
  }
}

/* The outbound hop is over: the service takes it from here. */
static void ev_req_arrive(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  (void)arg;
  mw_req *r = obj;
  model__service_arrive(r->edge->w, r);
}

/* The engine changes a target's state only inside its calls: reading the target's figures
 * before and after each one keeps the edge's sums (mw_edge.gauge) exact. */
static inline void gauge_enter(const mw_edge *e, const retry_target *t, mw_gauge *before) {
  if (e->gauge_live && t != NULL) model__gauge_read(e, t, before);
}
static inline void gauge_leave(mw_edge *e, const retry_target *t, const mw_gauge *before) {
  if (e->lazy != NULL && t != NULL) model__gauge_touch(e, t);
  if (!e->gauge_live || t == NULL) return;
  mw_gauge after;
  model__gauge_read(e, t, &after);
  model__gauge_add(&e->gauge, before, &after);
}

static MODEL_HOT void bare_end(model_world *w, mw_req *r, int32_t status, int64_t items);

/* The attempt's deadline passed before its reply: report DEADLINE_EXCEEDED to the engine (or
 * end the bare call); the server keeps the request until its reply comes back. */
static void ev_req_timeout(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  (void)k;
  mw_req *r = obj;
  model_world *w = r->edge->w;
  r->timeout = SIM_EVENT_NONE;
  if (r->bare) {
    r->waiting = false;
    bare_end(w, r, model__status_deadline(model__edge_callee_space(r->edge)), 0);
    return;
  }
  mw_call *c = model__req_call(r);
  req_unlink(c, r);
  r->call = NULL;
  retry_outcome o;
  retry_outcome_init(&o, model__status_deadline(model__call_rc(c)->policy->space));
  call_outcome(w, c, r->attempt, &o);
}

/* What every attempt starts with, and its way out: the fields set one by one (the pool does
 * not zero), the counters of an attempt sent (bumped here, at the moment an attempt leaves
 * the caller, so that amplification counts what was sent whatever happened to it
 * afterwards), its deadline's timer and the outbound hop. */
static MODEL_HOT void req_launch(model_world *w, mw_req *r, const mw_edge *edge, int32_t attempt,
                                 int64_t attempt_deadline_ns, bool top, bool measured, bool retry,
                                 gsl_rng *rng_net) {
  int64_t now = sim_now_ns(w->k);
  r->edge = (mw_edge *)edge;
  r->attempt = (int16_t)attempt;
  r->replica = -1;
  r->rng_net = rng_net;
  r->deadline_ns = attempt_deadline_ns;
  /* nothing has happened to it yet */
  r->state = MW_REQ_HOP_OUT;
  r->timeout = SIM_EVENT_NONE;
  r->q_prev = r->q_next = NULL;
  r->worker_ns = 0;
  r->fail = 0;
  r->refuse_after_delay = false;
  r->expired_waste = false;
  r->dropped = false;
  r->status = 0;
  r->headers = false;
  r->codel_until = 0;
  r->acc_forwarded = false;
  r->cancelled = false;
  r->cache_miss = false;
  r->cache_lead = false;
  /* ctl_watch is not cleared here: see its comment (mw_req). */
  if (measured) edge->stats->attempts++;
  model__ts_add(w, edge->col_attempt, 1.0);
  if (retry) model__ts_add(w, edge->col_retry, 1.0);
  if (top) {
    if (measured) w->res.attempts++;
    model__ts_add(w, w->ts.col_attempts, 1.0);
  }
  /* Attempt deadlines of first attempts repeat one delay per population: a FIFO lane. */
  if (attempt_deadline_ns != RETRY_NEVER) {
    r->timeout = sim_event_schedule_lane(w->k, attempt_deadline_ns - now, ev_req_timeout, r, 0);
    if (r->timeout == SIM_EVENT_NONE) model__fail(w, RETRY_ENOMEM, "out of memory for events");
  }
  /* A hop of no time costs no event: the request reaches the service now, inside this send.
   * That is safe from any caller: arriving only schedules (the work, or a refusal's reply,
   * whose hop back is always an event), so the caller never hears of the attempt before its
   * send returns. A constant hop draws nothing from the stream either way. */
  const sim_dist *net = edge->network;
  if (edge->zero_hop) {
    model__service_arrive(w, r);
    return;
  }
  if (model__schedule_sample(w, net, rng_net, ev_req_arrive, r) == SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

/* Sends attempt `attempt` of engine call c: a request that reaches the service after one hop. */
static void req_send(model_world *w, mw_call *c, int32_t attempt, int64_t attempt_deadline_ns) {
  mw_req *r = model__pool_get(&w->pools.reqs);
  if (r == NULL) {
    model__fail(w, RETRY_ENOMEM, "out of memory for requests in flight");
    return;
  }
  r->bare = false;
  r->side = NULL;
  r->call = c;
  r->op = c->op;
  model__op_ref(r->op);
  r->slot = c->slot;
  const mw_call_ext *x = model__call_ext(c);
  r->ok_items = x != NULL ? x->stream_items : 0;
  r->criticality = c->criticality;
  if (model__call_traced(c)) {
    mw_req_side *d = model__req_side(w, r);
    if (d == NULL) return; /* the world has failed: its pools go wholesale */
    d->trace_call = x->rx.id;
    d->trace_depth = x->trace_depth;
  }
  r->call_next = c->reqs;
  c->reqs = r;
  bool retry = attempt > 1 && model__call_rc(c)->policy->kind == RETRY_POLICY_RETRY;
  req_launch(w, r, c->edge, attempt, attempt_deadline_ns, c->flags & MW_CALL_TOP,
             c->flags & MW_CALL_MEASURED, retry, sim_rng_gsl(&model__call_channel(c)->rng_net));
}

/* A reply someone beside its caller watches: a look-aside cache's miss (model_cache_world.c),
 * a caller's outlier detector (model_ctl.c). One test of two bits of one byte in the hot
 * path, one call out of it. */
static MODEL_COLD void reply_watched(model_world *w, mw_req *r, bool waits) {
  if (r->cache_miss) model__cache_reply(w, r, waits);
  if (r->ctl_watch) model__ctl_reply(w, r, waits);
}

/* The reply is handed to the engine exactly as a transport would: the status in the callee's
 * space, the pushback values as received (the engine parses them, so invalid values behave as
 * in gRPC), whether headers came first, and the stream messages delivered. The request is
 * freed before the engine decides, so that its pool slot can serve the next attempt. */
void model__req_reply_arrived(model_world *w, mw_req *r) {
  bool waits = r->bare ? r->waiting : model__req_call(r) != NULL;
  /* A look-aside fill, or none (model_cache_world.c), first in each branch below: tested there
   * rather than here, where a call before the branches cost every reply of every world. */
  if (!waits) {
    if (r->cache_miss || r->ctl_watch) reply_watched(w, r, false);
    /* Nobody waits any more: everything the server did for it was wasted (unless the
     * deadline-aware server already counted it as expired work). */
    model_service_stats *ss = w->topo.services[r->edge->callee].stats;
    ss->abandoned++;
    if (!r->expired_waste) ss->wasted_work_s += (double)r->worker_ns / 1e9;
    req_free(w, r);
    return;
  }
  if (r->cache_miss || r->ctl_watch) reply_watched(w, r, true);
  if (r->timeout != SIM_EVENT_NONE) {
    sim_event_cancel(w->k, r->timeout);
    r->timeout = SIM_EVENT_NONE;
  }
  if (r->bare) {
    r->waiting = false;
    bare_end(w, r, r->status, r->headers ? r->items : 0);
    req_free(w, r);
    return;
  }
  mw_call *c = model__req_call(r);
  req_unlink(c, r);
  const char *pushback[1] = {r->pushback};
  retry_outcome o;
  retry_outcome_init(&o, r->status);
  o.pushback = pushback;
  o.n_pushback = r->pushback != NULL ? 1 : 0;
  o.retry_after = r->retry_after;
  o.headers_received = r->headers;
  const mw_call_ext *x = model__call_ext(c);
  o.request_bytes = x != NULL ? x->request_bytes : 0;
  o.stream_items = r->headers ? r->items : 0; /* items shares ok_items' storage */
  int32_t attempt = r->attempt;
  req_free(w, r);
  call_outcome(w, c, attempt, &o);
}

/* }================================================================== */

/* {==================================================================
 * Channels
 * =================================================================== */

/* The streams are named "<entity>/engine" and "<entity>/network" with the caller's index, so
 * a client's and a replica's draws are what they were when each kept its own fields. Targets
 * are made only for edges whose policy has shared state, and the array only when one is. */
/* One block: the pointers, then each target's storage (retry_target_init), which borrows the
 * edge's config rather than copying it: a client with a throttle alone holds 64 bytes of
 * target. */
size_t model__channel_bytes(mw_edge *const *edges, size_t n_edges) {
  bool any = false;
  for (size_t j = 0; j < n_edges; j++)
    any = any || edges[j]->has_target;
  if (!any) return 0;
  size_t bytes = (n_edges * sizeof(retry_target *) + 7) / 8 * 8;
  for (size_t j = 0; j < n_edges; j++)
    if (edges[j]->has_target) bytes += retry_target_size(retry_config_target(edges[j]->policy));
  return bytes;
}

/* Whether edge e's target keeps its throttle per process and server name. */
static bool throttle_per_process(const mw_edge *e, const retry_target *t) {
  if (t == NULL) return false;
  const retry_target_config *tc = retry_config_target(e->policy);
  return tc->has_throttle && tc->throttle_per_process;
}

/* C-core 1.51 keeps one throttle per server name for the whole process, shared by every
 * channel (retry_throttle.cc, ServerRetryThrottleMap::GetDataForServer): the caller is the
 * process and the callee service the server name, so edges toward one callee whose policies say
 * so draw on the first one's bucket. A later edge with another maxTokens or tokenRatio
 * replaces the bucket's parameters for all of them, as C-core's map does (the count keeps
 * its fraction; at the start every bucket is full). Budgets, breakers and the rest stay per
 * edge. O(n_edges^2) once per caller, with a handful of edges. */
static void share_throttles(mw_channel *ch, mw_edge *const *edges, size_t n_edges) {
  for (size_t j = 1; j < n_edges; j++) {
    if (!throttle_per_process(edges[j], ch->targets[j])) continue;
    for (size_t i = 0; i < j; i++) {
      if (edges[i]->callee != edges[j]->callee || !throttle_per_process(edges[i], ch->targets[i]))
        continue;
      retry_throttle *bucket = retry_target_throttle(ch->targets[i]);
      retry_throttle_reconfigure(bucket, &retry_config_target(edges[j]->policy)->throttle);
      (void)retry_target_share_throttle(ch->targets[j], bucket);
      edges[i]->throttle_shared = edges[j]->throttle_shared = true;
      break;
    }
  }
}

int model__channel_open(model_world *w, mw_channel *ch, const char *entity, uint64_t index,
                        mw_edge *const *edges, size_t n_edges, void *storage) {
  memset(ch, 0, sizeof *ch);
  sim_rng_init(&ch->rng_engine, w->seed, entity, "engine", index);
  sim_rng_init(&ch->rng_net, w->seed, entity, "network", index);
  size_t bytes = model__channel_bytes(edges, n_edges);
  if (bytes == 0) return 0;
  size_t ptrs = (n_edges * sizeof *ch->targets + 7) / 8 * 8;
  char *block = storage;
  if (block == NULL) {
    block = model__calloc(w, 1, bytes);
    if (block == NULL) return -1;
    ch->own_block = true;
  }
  ch->targets = (retry_target **)(void *)block;
  size_t off = ptrs;
  for (size_t j = 0; j < n_edges; j++) {
    if (!edges[j]->has_target) continue;
    const retry_target_config *tc = retry_config_target(edges[j]->policy);
    size_t n = retry_target_size(tc);
    ch->targets[j] =
        retry_target_init(block + off, n, tc, 0, sim_kernel_allocator(w->k), w->run.err);
    if (ch->targets[j] == NULL) return -1;
    ch->n_targets = (uint32_t)j + 1; /* close destroys targets [0, n_targets) */
    off += n;
  }
  ch->n_targets = (uint32_t)n_edges;
  share_throttles(ch, edges, n_edges);
  for (size_t j = 0; j < n_edges; j++) {
    if (ch->targets[j] == NULL) continue;
    const retry_target_config *tc = retry_config_target(edges[j]->policy);
    if (!tc->has_limit || !tc->limit.blocking) continue;
    if (ch->waitq == NULL) {
      ch->waitq = model__calloc(w, n_edges, sizeof *ch->waitq);
      if (ch->waitq == NULL) return -1;
    }
    ch->waitq[j].t = ch->targets[j];
    ch->waitq[j].on = true;
  }
  return 0;
}

bool model__channel_is_callers(const mw_edge *e, const mw_channel *ch) {
  const model_world *w = e->w;
  if (e->pop >= 0) {
    const mw_pop *p = &w->topo.pops[e->pop];
    const char *base = (const char *)(const void *)p->clients;
    const char *at = (const char *)(const void *)ch - offsetof(mw_client, ch);
    if (at < base) return false;
    size_t off = (size_t)(at - base);
    return off % p->client_stride == 0 && off / p->client_stride < (size_t)p->cfg->count;
  }
  const mw_service *s = &w->topo.services[e->svc];
  for (int32_t r = 0; r < s->cfg->replicas; r++)
    if (&s->replicas[r].ch == ch) return true;
  return false;
}

void model__channel_close(model_world *w, mw_channel *ch) {
  for (size_t j = 0; j < ch->n_targets; j++)
    retry_target_destroy(ch->targets[j]);
  if (ch->own_block) model__free(w, ch->targets);
  model__free(w, ch->waitq);
  memset(ch, 0, sizeof *ch);
}

/* }================================================================== */

/* {==================================================================
 * The call
 * =================================================================== */

/* A call ends now: the edge records it (OK or failed, a failure also in the edge's
 * failure_rps column, its stop reason, its status in the callee's space, its latency), unless
 * it started before the warmup (the time series keeps it anyway); then its caller hears. */
static MODEL_HOT void call_report(model_world *w, mw_edge *edge, mw_end *e) {
  bool ok = retry_status_is_ok(e->space, e->status);
  /* A cancelled call did not fail: its caller stopped wanting it. It is counted apart, with
   * its stop reason and status, and left out of the failures and the latencies (its end is
   * its caller's decision, not its own). */
  bool cancelled = e->reason == RETRY_STOP_CANCELLED;
  e->ok = ok;
  if (!ok && !cancelled) model__ts_add(w, edge->col_failure, 1.0);
  if (e->measured) {
    model_edge_stats *es = edge->stats;
    int32_t st = e->status;
    int64_t latency = sim_now_ns(w->k) - e->start_ns;
    es->retries += e->retries;
    es->hedges += e->hedges;
    /* An OK call's latency is recorded once: latency holds the failed calls' during the run
     * and gets latency_ok's added when it ends (world_finish, model_world.c). */
    if (cancelled) {
      es->cancelled++;
    } else if (ok) {
      es->ok++;
      sim_hist_record(&es->latency_ok, latency);
    } else {
      es->failed++;
      sim_hist_record(&es->latency, latency);
    }
    if ((int)e->reason >= 0 && e->reason < RETRY_STOP_N) es->by_stop[e->reason]++;
    if (e->space == RETRY_SPACE_GRPC && st >= 0 && st < RETRY_GRPC_N_CODES)
      es->by_status.grpc[st]++;
    else if (e->space == RETRY_SPACE_HTTP && st >= 100 && st < 600)
      es->by_status.http[st]++;
  }
  edge->on_done(w, e);
}

/* The call is over: tell the parent, then free it. The parent may start new calls from its
 * handler (a closed-loop client, a sequential handler), which can reuse pool slots; c stays
 * valid until the parent returns because it goes back to the pool only afterwards. */
static void waitq_pump(model_world *w, mw_waitq *q);

/* The queue of the blocking limiter of a call on channel ch (top-level or the caller's call
 * slot), or NULL when its target's limiter does not block. */
static mw_waitq *waitq_of(const mw_channel *ch, const mw_edge *e) {
  size_t ti = e->pop >= 0 ? 0 : (size_t)e->slot; /* the target's index in the channel */
  return ch->waitq != NULL && ti < ch->n_targets && ch->waitq[ti].on ? &ch->waitq[ti] : NULL;
}
static mw_waitq *call_waitq(const mw_call *c) { return waitq_of(model__call_channel(c), c->edge); }

/* Gives back what a call holds once its caller heard of its end: its operation, its own
 * policy and its ext (p and x: the engine's, or a waiting call's). */
static void call_free(model_world *w, mw_call *c, const retry_policy *p, mw_call_ext *x) {
  model__op_unref(w, c->op);
  if (c->flags & MW_CALL_OWN_POLICY) model__pool_put(&w->pools.policies, (void *)(uintptr_t)p);
  if (x != NULL) model__pool_put(&w->pools.exts, x);
  model__pool_put(&w->pools.calls, c);
}

static void call_done(model_world *w, mw_call *c) {
  const retry_call *rc = model__call_rc(c);
  mw_call_ext *x = model__call_ext(c);
  /* Its permit (if it held one) is free: the first waiting calls take it before anything
   * the caller starts on hearing of this one. */
  if (c->flags & MW_CALL_LIMITED) waitq_pump(w, call_waitq(c));
  mw_end e = {.done_ctx = c->done_ctx,
              .handle = c,
              .start_ns = x != NULL ? x->begin_ns : rc->start_ns,
              .deadline_ns = rc->deadline_ns,
              .stream_items = retry_call_stream_items(rc),
              .stream_duplicates = retry_call_stream_duplicates(rc),
              .slot = c->slot,
              .status = rc->status,
              .retries = retry_call_retries(rc),
              .hedges = retry_call_hedges(rc),
              .space = rc->policy->space,
              .reason = rc->reason,
              .measured = (c->flags & MW_CALL_MEASURED) != 0};
  call_report(w, c->edge, &e);
  call_free(w, c, rc->policy, x);
}

/* A bare call (no policy, no channel state, not traced: model__call_start) is its one
 * request, and decides as the engine decides for such a call, without it: its attempt ends
 * it. OK is OK; any other status stops with no_retry_policy, or with deadline once the
 * deadline has passed (the attempt's timeout reports DEADLINE_EXCEEDED at the deadline);
 * stream messages delivered count. Nothing is retried, so nothing waits, and the call ends
 * now. The request stays with the server when the call ends on its timeout (the reply then
 * counts as abandoned, as an engine call's would). test_model_world checks the bare path
 * against the engine's on the same calls. */
static MODEL_HOT void bare_report(model_world *w, mw_req *r, int32_t status, retry_stop reason,
                                  int64_t items) {
  retry_space space = model__edge_callee_space(r->edge);
  mw_end e = {.done_ctx = r->done_ctx,
              .handle = r,
              .start_ns = r->start_ns,
              .deadline_ns = r->deadline_ns, /* its attempt's deadline is the call's */
              .stream_items = items > 0 ? items : 0,
              .stream_duplicates = 0,
              .slot = r->slot,
              .status = status,
              .retries = 0,
              .hedges = 0,
              .space = space,
              .reason = reason,
              .measured = r->measured};
  call_report(w, r->edge, &e);
}

static MODEL_HOT void bare_end(model_world *w, mw_req *r, int32_t status, int64_t items) {
  retry_space space = model__edge_callee_space(r->edge);
  retry_stop reason = RETRY_STOP_OK;
  if (!retry_status_is_ok(space, status))
    reason = sim_now_ns(w->k) >= r->deadline_ns ? RETRY_STOP_DEADLINE : RETRY_STOP_NO_RETRY_POLICY;
  bare_report(w, r, status, reason, items);
}

/* The outcome of attempt `attempt` of c, to the engine. */
static void call_outcome(model_world *w, mw_call *c, int32_t attempt, const retry_outcome *o) {
  retry_decision d;
  mw_gauge g = {0};
  retry_call *rc = model__call_rc(c);
  int64_t armed = rc->next_send_ns; /* the timer's time, if one is armed */
  gauge_enter(c->edge, rc->target, &g);
  retry_call_on_outcome(rc, attempt, o, sim_now_ns(w->k), &d);
  gauge_leave(c->edge, rc->target, &g);
  call_apply(w, c, &d, armed);
}

/* A call the engine ended at a later time (a client that sleeps until its deadline). */
static void ev_call_done(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  (void)arg;
  mw_call *c = obj;
  c->wake = SIM_EVENT_NONE; /* the pending end's event (call_apply) */
  call_done(c->edge->w, c);
}

/* The engine's timer: a backoff ended or a hedge is due. */
static void ev_call_wake(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  mw_call *c = obj;
  c->wake = SIM_EVENT_NONE;
  retry_decision d;
  mw_gauge g = {0};
  retry_call *rc = model__call_rc(c);
  gauge_enter(c->edge, rc->target, &g);
  retry_call_wake(rc, sim_now_ns(k), &d);
  gauge_leave(c->edge, rc->target, &g);
  call_apply(c->edge->w, c, &d, RETRY_NEVER);
}

/* Each decision's wake time replaces the previous timer; an unchanged time keeps it. The
 * timer armed (c->wake) is always at the engine's next_send_ns as the decision before left
 * it, since every decision of a call not done has its next_send_ns for wake_ns, nothing else
 * moves it, and a done call has no timer: so armed_ns, read before the engine decided, is the
 * armed timer's time (any value when none is armed), and the call keeps no copy of it. */
static void call_set_wake(model_world *w, mw_call *c, int64_t wake_ns, int64_t armed_ns) {
  if (c->wake != SIM_EVENT_NONE && wake_ns == armed_ns) return;
  sim_event_cancel(w->k, c->wake);
  c->wake = SIM_EVENT_NONE;
  if (wake_ns == RETRY_NEVER) return;
  int64_t now = sim_now_ns(w->k);
  c->wake = sim_event_schedule(w->k, wake_ns < now ? now : wake_ns, ev_call_wake, c, 0);
  if (c->wake == SIM_EVENT_NONE) model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

/* Carries out one decision. The engine has already updated its own view (attempts in flight,
 * budgets, throttle); this only mirrors it in virtual time: requests, timers, abandonment. */
static void call_apply(model_world *w, mw_call *c, const retry_decision *d, int64_t armed_ns) {
  switch (d->action) {
    case RETRY_ACTION_SEND:
      /* cancel_others on a SEND (a hedge after commit is impossible) means every attempt
       * in flight is dropped before the new one goes out. */
      if (d->cancel_others) call_abandon_all(w, c, 0);
      req_send(w, c, d->attempt, d->attempt_deadline_ns);
      call_set_wake(w, c, d->wake_ns, armed_ns);
      return;
    case RETRY_ACTION_WAIT:
      if (d->cancel_others) call_abandon_all(w, c, d->attempt);
      call_set_wake(w, c, d->wake_ns, armed_ns);
      return;
    case RETRY_ACTION_DONE:
      call_set_wake(w, c, RETRY_NEVER, armed_ns);
      call_abandon_all(w, c, 0);
      if (d->done_ns > sim_now_ns(w->k)) {
        /* The timer is free once the call is done: it holds the end's event, so that a
         * cancel before then can take it back (call_cancel). */
        c->wake = sim_event_schedule(w->k, d->done_ns, ev_call_done, c, 0);
        if (c->wake == SIM_EVENT_NONE) model__fail(w, RETRY_ENOMEM, "out of memory for events");
        return;
      }
      call_done(w, c);
      return;
  }
}

/* A bare call's start, as the engine's: refused at once past its deadline, else its one
 * request goes with the call's deadline as its own. */
static int bare_start(model_world *w, const mw_call_args *a, int64_t now, bool measured) {
  mw_edge *edge = a->edge;
  if (measured) edge->stats->calls++;
  if (now >= a->deadline_ns) {
    retry_space space = model__edge_callee_space(edge);
    mw_end e = {.done_ctx = a->done_ctx,
                .start_ns = now,
                .deadline_ns = a->deadline_ns,
                .slot = a->slot,
                .status = model__status_deadline(space),
                .space = space,
                .reason = RETRY_STOP_DEADLINE,
                .measured = measured};
    call_report(w, edge, &e);
    return 0;
  }
  mw_req *r = model__pool_get(&w->pools.reqs);
  if (r == NULL) {
    model__fail(w, RETRY_ENOMEM, "out of memory for requests in flight");
    return -1; /* its caller is never told */
  }
  if (a->child != NULL) {
    a->child->call = r;
    a->child->bare = true;
  }
  r->bare = true;
  r->side = NULL;
  r->waiting = true;
  r->top = a->top;
  r->measured = measured;
  r->done_ctx = a->done_ctx;
  r->start_ns = now;
  r->slot = a->slot;
  MODEL_CHECK(model__edge_method(edge, a->slot) == a->method); /* read back from the edge */
  r->op = a->op;
  model__op_ref(r->op);
  r->ok_items = a->stream_items;
  r->criticality = (int8_t)a->criticality;
  req_launch(w, r, edge, 1, a->deadline_ns, a->top, measured, false, sim_rng_gsl(&a->ch->rng_net));
  return 0;
}

/* Starts call c in the engine (now, or once a blocking limiter let it go) with what its
 * start (or its wait) gave: the policy, its id, deadline and stream kind, and its ext. */
static void call_engine_start(model_world *w, mw_call *c, mw_channel *ch, retry_target *t,
                              const retry_policy *p, const char *method, uint64_t id,
                              int64_t deadline_ns, retry_stream_kind stream, mw_call_ext *x) {
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.call_id = id;
  o.method = method;
  o.stream = stream;
  o.deadline_ns = deadline_ns;
  /* the channel's engine stream: model__call_channel finds the channel from it */
  o.rng = sim_rng_adapter(sim_rng_gsl(&ch->rng_engine));
  o.ext = x != NULL ? &x->rx : NULL;
  o.stream_items = x != NULL; /* the calls whose replies may carry messages have one */
  if (w->trace.record != NULL) {
    /* The sink sees the call before the engine starts it: what it reads is set early
     * (retry_call_start sets the same values again). */
    retry_call *rc = model__call_rc(c);
    rc->policy = p;
    rc->deadline_ns = deadline_ns;
    rc->ext = o.ext;
    x->rx.id = id;
    model__trace_call_start(w, c, &o);
  }
  retry_decision d;
  mw_gauge g = {0};
  gauge_enter(c->edge, t, &g);
  retry_call_start(model__call_rc(c), p, t, &o, sim_now_ns(w->k), &d);
  gauge_leave(c->edge, t, &g);
  call_apply(w, c, &d, RETRY_NEVER); /* no timer armed yet */
}

/* {==================================================================
 * A blocking concurrency limiter (Netflix concurrency-limits' BlockingLimiter)
 * =================================================================== */

/* Whether t's limiter would admit a call now (a pure read of its state). */
static bool limit_has_permit(const retry_target *t, int64_t now) {
  retry_target_stats st;
  retry_target_stats_get(t, now, &st);
  return st.limit < 0 || st.limit_in_flight < st.limit;
}

/* Takes c out of its queue (it is there) and starts it in the engine: with a permit, or, at
 * the end of its wait, to be refused (THROTTLED, or DEADLINE once the deadline has come). */
static mw_waitq *waitq_remove(model_world *w, mw_call *c) {
  mw_wait *wt = model__call_wait(c);
  mw_waitq *q = waitq_of(wt->ch, c->edge);
  mw_call **p = &q->head, *prev = NULL;
  while (*p != c) {
    prev = *p;
    p = &model__call_wait(*p)->next;
  }
  *p = wt->next;
  if (q->tail == c) q->tail = prev;
  sim_event_cancel(w->k, wt->ev);
  wt->ev = SIM_EVENT_NONE;
  c->flags &= (uint8_t)~MW_CALL_WAITING; /* the storage is the engine's from now on */
  return q;
}

static void waitq_release(model_world *w, mw_call *c) {
  mw_wait wt = *model__call_wait(c); /* the engine's start overwrites it */
  mw_waitq *q = waitq_remove(w, c);
  call_engine_start(w, c, wt.ch, q->t, wt.policy, model__call_method(c), wt.id, wt.deadline_ns,
                    wt.stream, wt.ext);
}

/* While q's limiter has a permit, its first waiting call takes it. The limit can have grown
 * with the sample just taken, so more than one may go (the library wakes every waiter). */
static void waitq_pump(model_world *w, mw_waitq *q) {
  while (q->head != NULL && limit_has_permit(q->t, sim_now_ns(w->k)))
    waitq_release(w, q->head);
}

/* The wait is over without a permit: the call is started anyway and the engine refuses it. */
static void ev_wait_over(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  (void)arg;
  mw_call *c = obj;
  model__call_wait(c)->ev = SIM_EVENT_NONE;
  waitq_release(c->edge->w, c);
}

/* Queues c (the limiter is full, or others wait before it) until a permit comes, its
 * blockingTimeout passes or its deadline does, whichever is first. */
static void call_wait(model_world *w, mw_call *c, mw_channel *ch, mw_waitq *q,
                      const retry_policy *p, uint64_t id, int64_t deadline_ns,
                      retry_stream_kind stream, mw_call_ext *x) {
  c->flags |= MW_CALL_WAITING; /* the storage is the wait's from now on */
  mw_wait *wt = model__call_wait(c);
  wt->ext = x;
  wt->ch = ch;
  wt->policy = p;
  wt->next = NULL;
  wt->ev = SIM_EVENT_NONE;
  wt->id = id;
  wt->deadline_ns = deadline_ns;
  wt->stream = stream;
  if (q->tail != NULL)
    model__call_wait(q->tail)->next = c;
  else
    q->head = c;
  q->tail = c;
  int64_t now = sim_now_ns(w->k);
  int64_t timeout = retry_config_target(c->edge->policy)->limit.block_timeout_ns;
  int64_t until = timeout >= RETRY_NEVER - now ? RETRY_NEVER : now + timeout;
  if (deadline_ns < until) until = deadline_ns;
  if (until == RETRY_NEVER) return;
  wt->ev = sim_event_schedule(w->k, until < now ? now : until, ev_wait_over, c, 0);
  if (wt->ev == SIM_EVENT_NONE) model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

/* }================================================================== */

/* The engine's randomness comes from the caller's stream (a client's, or the calling
 * replica's), so jitter draws never disturb arrivals or service times. */
int model__call_start(model_world *w, const mw_call_args *a) {
  assert(a->ch != NULL && a->edge->on_done != NULL);
  mw_edge *edge = a->edge;
  const retry_method_config *mc = a->mc;
  retry_space callee_space = model__edge_callee_space(edge);
  int64_t now = sim_now_ns(w->k);
  bool measured = now >= w->cfg->warmup_ns;
  uint64_t id = ++w->run.next_call_id;
  if (a->child != NULL) a->child->call = NULL;
  /* A call that can go without the engine (one attempt and nothing the engine would keep:
   * MW_FAST_BARE, model_feature.c) is its one request. */
  if (a->fast & MW_FAST_BARE) return bare_start(w, a, now, measured);
  mw_call *c = model__pool_get(&w->pools.calls);
  if (c == NULL) {
    model__fail(w, RETRY_ENOMEM, "out of memory for calls in flight");
    return -1;
  }
  c->edge = edge;
  c->done_ctx = a->done_ctx;
  c->slot = a->slot;
  c->op = a->op;
  c->reqs = NULL;
  c->last_replica = -1;
  c->criticality = (int8_t)a->criticality;
  MODEL_CHECK(model__call_method(c) == a->method); /* read back from the edge from now on */
  mw_waitq *q = waitq_of(a->ch, a->edge);
  uint8_t flags = (uint8_t)((a->top ? MW_CALL_TOP : 0) | (measured ? MW_CALL_MEASURED : 0) |
                            (q != NULL ? MW_CALL_LIMITED : 0));
  /* A policy without retries still decides what counts as OK, so it must speak the callee's
   * space; the loader guarantees that for retry and hedging policies. */
  const retry_policy *p;
  if (mc != NULL && (mc->policy.kind != RETRY_POLICY_NONE || mc->policy.space == callee_space)) {
    p = &mc->policy;
  } else if (mc == NULL) {
    p = &w->pools.none[callee_space == RETRY_SPACE_HTTP];
  } else {
    /* A policy without retries in the other space: a copy in the callee's space. */
    retry_policy *own = model__pool_get(&w->pools.policies);
    if (own == NULL) {
      model__pool_put(&w->pools.calls, c);
      model__fail(w, RETRY_ENOMEM, "out of memory for calls in flight");
      return -1;
    }
    *own = mc->policy;
    own->space = callee_space;
    p = own;
    flags |= MW_CALL_OWN_POLICY;
  }
  c->flags = flags;
  /* The ext: what the engine needs for this policy and target, and what the model keeps of
   * the rarer figures (a request size, a reply's messages, tracing, a wait), unless none of
   * its features needs one (MW_FAST_NO_EXT, model_feature.c). */
  mw_call_ext *x = NULL;
  if (!(a->fast & MW_FAST_NO_EXT)) {
    x = model__pool_get(&w->pools.exts);
    if (x == NULL) {
      if (flags & MW_CALL_OWN_POLICY) model__pool_put(&w->pools.policies, (void *)(uintptr_t)p);
      model__pool_put(&w->pools.calls, c);
      model__fail(w, RETRY_ENOMEM, "out of memory for calls in flight");
      return -1;
    }
    x->request_bytes = a->request_bytes;
    x->stream_items = a->stream_items;
    x->begin_ns = now;
    x->trace_depth = 0;
    x->trace_parent = 0;
    x->trace_parent_attempt = 0;
  }
  model__op_ref(a->op);
  c->wake = SIM_EVENT_NONE;
  if (a->child != NULL) { /* the fan-out that may cancel it (model_service.c) */
    a->child->call = c;
    a->child->bare = false;
  }
  if (measured) edge->stats->calls++;
  if (q != NULL && (q->head != NULL || !limit_has_permit(q->t, now))) {
    call_wait(w, c, a->ch, q, p, id, a->deadline_ns, a->stream, x);
    return 0;
  }
  call_engine_start(w, c, a->ch, a->target, p, a->method, id, a->deadline_ns, a->stream, x);
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Cancelling a call (a k-of-n fan-out's leftovers)
 * =================================================================== */

/* What the callee does with attempt r of a cancelled call. The cancellation reaches it at
 * once (its own hop is not modelled). One still in the queue leaves it unworked, one on its
 * way out is dropped as it lands: neither takes a worker. One whose handler waits for its own
 * calls has them cancelled in turn (the cancel travels down, as a gRPC context's does) and
 * ends now without a reply; one a worker holds finishes its work (not interrupted: its side
 * effect "before" happens) but makes no calls (model__service_cancel); that one, and one
 * whose reply is on its way back, reply, and the reply is dropped as abandoned, exactly as a
 * hedge's losing attempts' are (req_abandon). Returns whether r is free to be freed now (it
 * left the queue, or its handler ended without a reply). */
static bool req_cancel_at_callee(model_world *w, mw_req *r, int64_t *unworked) {
  if (r->state == MW_REQ_HOP_OUT) {
    r->cancelled = true;
    (*unworked)++;
    return false;
  }
  if (r->state == MW_REQ_QUEUED && model__service_withdraw(w, r)) {
    (*unworked)++;
    return true;
  }
  return model__service_cancel(w, r);
}

/* A bare call's one attempt: the call ends now, cancelled; the request is freed unless the
 * callee still holds it. */
static void bare_cancel(model_world *w, mw_req *r) {
  sim_event_cancel(w->k, r->timeout);
  r->timeout = SIM_EVENT_NONE;
  r->waiting = false;
  int64_t unworked = 0;
  bool free_now = req_cancel_at_callee(w, r, &unworked);
  if (r->measured) r->edge->stats->cancelled_unworked += unworked;
  retry_space space = model__edge_callee_space(r->edge);
  int32_t st = space == RETRY_SPACE_GRPC ? RETRY_GRPC_CANCELLED : RETRY_HTTP_CANCELLED;
  bare_report(w, r, st, RETRY_STOP_CANCELLED, 0);
  if (free_now) req_free(w, r);
}

/* An engine call waiting for a blocking limiter's permit never reached the engine: it leaves
 * the queue and ends cancelled, with nothing sent and nothing held. */
static void call_cancel_waiting(model_world *w, mw_call *c) {
  mw_wait wt = *model__call_wait(c);
  waitq_remove(w, c);
  retry_space space = wt.policy->space;
  mw_end e = {.done_ctx = c->done_ctx,
              .handle = c,
              .start_ns = wt.ext != NULL ? wt.ext->begin_ns : sim_now_ns(w->k),
              .deadline_ns = wt.deadline_ns,
              .slot = c->slot,
              .status = space == RETRY_SPACE_GRPC ? RETRY_GRPC_CANCELLED : RETRY_HTTP_CANCELLED,
              .space = space,
              .reason = RETRY_STOP_CANCELLED,
              .measured = (c->flags & MW_CALL_MEASURED) != 0};
  call_report(w, c->edge, &e);
  call_free(w, c, wt.policy, wt.ext);
}

/* An engine call: the engine ends it and gives back what it holds (retry_call_cancel), the
 * callee hears of each attempt in flight, and the DONE decision is carried out as any other.
 * A call the engine already ended is either waiting for its end's event (it waits out its
 * deadline: that event is taken back and the call ends now, cancelled) or in the middle of
 * its own call_done further up the stack (a permit it gave back let a waiting sibling start
 * and end at once, which decided the fan-out): that call_done reports and frees it, so
 * nothing is done here. */
static void call_cancel(model_world *w, mw_call *c) {
  if (c->flags & MW_CALL_WAITING) {
    call_cancel_waiting(w, c);
    return;
  }
  retry_call *rc = model__call_rc(c);
  if (rc->done && c->wake == SIM_EVENT_NONE) return; /* ending now, further up */
  if (rc->done) {
    sim_event_cancel(w->k, c->wake); /* its end's event: the cancel ends it instead */
    c->wake = SIM_EVENT_NONE;
  }
  retry_decision d;
  mw_gauge g = {0};
  int64_t armed = rc->done ? RETRY_NEVER : rc->next_send_ns;
  gauge_enter(c->edge, rc->target, &g);
  retry_call_cancel(rc, sim_now_ns(w->k), &d);
  gauge_leave(c->edge, rc->target, &g);
  int64_t unworked = 0;
  mw_req *r = c->reqs;
  while (r != NULL) {
    mw_req *next = r->call_next;
    bool free_now = req_cancel_at_callee(w, r, &unworked);
    req_abandon(w, r);
    if (free_now) req_free(w, r);
    r = next;
  }
  if (c->flags & MW_CALL_MEASURED) c->edge->stats->cancelled_unworked += unworked;
  call_apply(w, c, &d, armed);
}

void model__call_cancel(model_world *w, const mw_child *ch) {
  assert(ch->call != NULL);
  if (ch->bare)
    bare_cancel(w, ch->call);
  else
    call_cancel(w, ch->call);
}

void model__req_discard(model_world *w, mw_req *r) { req_free(w, r); }

/* }================================================================== */
