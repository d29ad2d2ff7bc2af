/*
 * model_fanout.c: a handler's own calls: sequential or fanned out, their ends gathered (the
 * first failure is the handler's, mapped into its service's space), a k-of-n quorum
 * (wait_for) that goes on at k and cancels what it leaves (cancel_rest), and the cancel that
 * travels down a call graph as a gRPC context's does. Invariant: a handler's request is freed
 * only once every call it started has reported (mw_req_side.ds_pending, ds_orphan).
 */
#include <assert.h>
#include <string.h>

#include "models/model_int.h"

static void handler_cut_short(model_world *w, mw_service *s, mw_req *r);
static MODEL_HOT void downstream_settle(model_world *w, mw_service *s, mw_req *r, int32_t st,
                                        bool ok);

/* {==================================================================
 * Calls, their ends and the quorum
 * =================================================================== */

/* The record of the calls r's handler started, when its service keeps them (a k-of-n fan-out
 * that cancels what it leaves, or a service a cancel can reach) and r still waits for them
 * (state MW_REQ_DOWNSTREAM: the field is another phase's before); else NULL. */
static mw_fanout *fanout_of(const mw_service *s, const mw_req *r) {
  return s->keeps_calls && r->state == MW_REQ_DOWNSTREAM ? r->fanout : NULL;
}

/* Cancels every call f notes (f taken from its request first, so that their ends, which
 * model__downstream_done hears now, find no record to clear): those still waiting for a blocking
 * limiter's permit before the others, so that a permit a cancel gives back never starts a
 * call about to be cancelled. Then frees f. */
static void fanout_cancel(model_world *w, mw_fanout *f) {
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t i = 0; i < f->n; i++) {
      mw_child ch = f->child[i];
      if (ch.call == NULL) continue;
      bool waits = !ch.bare && (((mw_call *)ch.call)->flags & MW_CALL_WAITING) != 0;
      if (pass == 0 && !waits) continue;
      f->child[i].call = NULL;
      model__call_cancel(w, &ch);
    }
  }
  model__pool_put(&w->pools.fanouts, f);
}

/* Starts downstream call j of r's handler. Its deadline is its own timeout, bounded by the
 * deadline r carries when the call propagates deadlines. */
static void downstream_start(model_world *w, mw_service *s, mw_req *r, int32_t j, int32_t child) {
  const model_call_cfg *cc = &s->cfg->calls[j];
  const retry_method_config *mc = s->call_mcfg[j].mc;
  mw_replica *rp = &s->replicas[r->replica];
  int64_t now = sim_now_ns(w->k);
  int64_t timeout = cc->deadline_ns != RETRY_NEVER ? cc->deadline_ns
                    : mc != NULL                   ? mc->timeout_ns
                                                   : RETRY_NEVER;
  int64_t deadline =
      timeout == RETRY_NEVER || timeout > INT64_MAX - now ? RETRY_NEVER : now + timeout;
  if (cc->propagate_deadline && r->deadline_ns < deadline) deadline = r->deadline_ns;
  /* The downstream operation: the same for every attempt of this handler's operation, its own
   * for each call j (model_int.h, mw_op). */
  mw_op *op = model__op_child(w, r->op, child);
  if (op == NULL && r->op != NULL) return; /* out of memory: the world has failed */
  r->side->ds_pending++;                   /* (model__handler_calls took it) */
  mw_call_args a = {.edge = s->call_edges[j],
                    .mc = mc,
                    .method = cc->method,
                    .stream = cc->stream,
                    .request_bytes = cc->request_bytes,
                    .stream_items = cc->stream_items,
                    .deadline_ns = deadline,
                    .op = op,
                    .ch = &rp->ch,
                    .target = model__channel_target(&rp->ch, (size_t)j),
                    .top = false,
                    .criticality = r->criticality,
                    .done_ctx = r,
                    .slot = child, /* model__downstream_done finds call j through it */
                    .child = NULL,
                    .fast = s->call_mcfg[j].fast};
  /* A handler whose calls may be cancelled notes each call it makes. */
  mw_fanout *f = fanout_of(s, r);
  if (f != NULL) a.child = &f->child[f->n++];
  if (model__call_start(w, &a) < 0) r->side->ds_pending--;
}

/* }================================================================== */

/* {==================================================================
 * Branches
 * =================================================================== */

/* The splitmix64 finalizer: unrelated values for a word and the call's neighbouring numbers. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Whether r's handler makes its call j (a world that branches). The route first: r's method
 * must be one of the call's when_method. Then the probability, drawn from the branch word of
 * r's operation, which every attempt of r's logical call shares (a retry, a hedge, and a
 * retried upstream request that serves it again): each attempt goes the same way, so a retry
 * repeats its request's choice instead of rolling again. u = mix(word ^ (j + 1) * golden)
 * / 2^64, made iff u < p: no random stream is drawn from. */
static bool branch_taken(model_world *w, const mw_service *s, const mw_req *r, int32_t j) {
  const model_call_cfg *cc = &s->cfg->calls[j];
  if (cc->fallback_only) return false; /* made by on_failure alone (model_fallback.c) */
  if (cc->n_when_method > 0) {
    const char *m = model__req_method(r);
    size_t i = 0;
    while (i < cc->n_when_method && strcmp(cc->when_method[i], m) != 0)
      i++;
    if (i == cc->n_when_method) return false;
  }
  if (!(cc->probability > 0.0 && cc->probability < 1.0)) return true;
  uint64_t word = r->op != NULL ? model__op_branch_word(w, r->op) : 0;
  uint64_t u = mix64(word ^ ((uint64_t)j + 1) * UINT64_C(0x9E3779B97F4A7C15));
  return (double)(u >> 11) * 0x1p-53 < cc->probability;
}

/* Call j of r's handler is not made (its branch said no): each of its copies counted skipped
 * on its edge, and their places in the record of r's calls (numbered as the calls would be)
 * left empty. */
static void downstream_skip(model_world *w, mw_service *s, mw_req *r, int32_t j) {
  int32_t copies = s->cfg->calls[j].fanout;
  if (sim_now_ns(w->k) >= w->cfg->warmup_ns && !s->cfg->calls[j].fallback_only)
    s->call_edges[j]->stats->skipped += copies;
  mw_fanout *f = fanout_of(s, r);
  for (int32_t i = 0; f != NULL && i < copies; i++)
    f->child[f->n++].call = NULL;
}

/* A sequential handler's first call from j on that its branch makes (the ones before it
 * skipped), or n_calls if none. */
static int32_t sequential_next(model_world *w, mw_service *s, mw_req *r, int32_t j) {
  int32_t n = (int32_t)s->cfg->n_calls;
  if (!w->pools.branches) return j;
  while (j < n && !branch_taken(w, s, r, j))
    downstream_skip(w, s, r, j++);
  return j;
}

/* }================================================================== */

/* {==================================================================
 * Quorum and ends
 * =================================================================== */

/* wait_for k of n: 1 once k calls succeeded, 0 once n - k + 1 failed (k can no longer be
 * reached), -1 before either. A call counts once however many attempts or hedges it sent. */
static int quorum_state(const mw_service *s, const mw_req *r) {
  const mw_req_side *d = r->side;
  int32_t k = s->cfg->wait_for, n = d->ds_next;
  if (k > n) k = n; /* calls skipped by their branch: k of the n made (none: it goes on) */
  if (d->ds_ok >= k) return 1;
  return d->ds_nfail >= n - k + 1 ? 0 : -1;
}

/* The fan-out reached its wait_for: the handler goes on with the calls' verdict (a failure's
 * status is the first failure's). The calls left are cancelled first (cancel_rest:
 * fanout_cancel); or, without cancel_rest, they run to their end unheard (the record, kept
 * when a cancel can reach r, is dropped). Each cancel ends its call now, which tells
 * model__downstream_done (r is then decided: it only counts the call out). */
static void quorum_decide(model_world *w, mw_req *r, int state) {
  mw_service *s = &w->topo.services[r->edge->callee];
  r->side->ds_decided = true;
  r->side->ds_failed = state == 0;
  mw_fanout *f = fanout_of(s, r);
  if (f != NULL) {
    r->fanout = NULL;
    if (s->cfg->cancel_rest)
      fanout_cancel(w, f);
    else
      model__pool_put(&w->pools.fanouts, f);
  }
  model__handler_after_calls(w, r);
}

/* A downstream call of request r ended. Its status is mapped into r's service's space (the
 * gateway's job); the first failure is kept as the handler's result. Sequential calls stop
 * at the first failure; a fan-out waits for every call it started, or with wait_for until k
 * succeeded or n - k + 1 failed. */
void model__downstream_done(model_world *w, const mw_end *c) {
  mw_req *r = c->done_ctx;
  mw_service *s = &w->topo.services[r->edge->callee];
  int32_t child = c->slot;
  const model_call_cfg *cc = &s->cfg->calls[s->call_of_child[child]];
  /* The end's space is its callee's (a policy speaks its callee's space: model__call_start),
   * and is already loaded, where the callee's config is a 2 KB stride's index away. */
  retry_space from = c->space;
  MODEL_CHECK(from == w->cfg->services[cc->service].space);
  int32_t st = model__status_map(&cc->map, from, s->cfg->space, c->status);
  mw_req_side *d = r->side;
  d->ds_pending--;
  /* The fan-out's record forgets the call: it will not be cancelled. Its entry is the
   * call's own number (model__handler_calls numbers the calls as the record's entries). */
  mw_fanout *f = c->handle != NULL ? fanout_of(s, r) : NULL;
  if (f != NULL) {
    assert(child < f->n && f->child[child].call == c->handle);
    f->child[child].call = NULL;
  }
  if (d->ds_decided) {
    /* Left to finish: its attempts and side effects counted; r waits only to be freed. */
    if (d->ds_orphan && d->ds_pending == 0) model__req_put(w, r);
    return;
  }
  bool ok = retry_status_is_ok(s->cfg->space, st);
  /* A failure its on_failure takes goes down the error path first (model_fallback.c), which
   * settles it when it ends. */
  if (!ok && cc->on_failure.on && model__fallback_fire(w, r, c, st)) return;
  downstream_settle(w, s, r, st, ok);
}

void model__downstream_settle(model_world *w, mw_req *r, int32_t st) {
  mw_service *s = &w->topo.services[r->edge->callee];
  downstream_settle(w, s, r, st, retry_status_is_ok(s->cfg->space, st));
}

/* The second half of a call's end: counted as a success or a failure (the first failure is
 * the handler's), then the next sequential call, the quorum, or the handler's end. */
static MODEL_HOT void downstream_settle(model_world *w, mw_service *s, mw_req *r, int32_t st,
                                        bool ok) {
  mw_req_side *d = r->side;
  if (ok)
    d->ds_ok++;
  else
    d->ds_nfail++;
  if (!ok && !d->ds_failed) {
    d->ds_failed = true;
    d->ds_status = st;
  }
  if (s->cfg->calls_mode == MODEL_CALLS_SEQUENTIAL && !d->ds_failed &&
      d->ds_next < (int32_t)s->cfg->n_calls) {
    int32_t j = sequential_next(w, s, r, d->ds_next);
    d->ds_next = j + 1;
    if (j < (int32_t)s->cfg->n_calls) {
      downstream_start(w, s, r, j, j);
      return;
    }
  }
  /* A fan-out still starting its calls (one of them ended at once) finishes after the loop. */
  if (d->ds_starting) return;
  if (s->cfg->wait_for > 0) {
    int q = quorum_state(s, r);
    if (q >= 0) quorum_decide(w, r, q);
    return;
  }
  if (d->ds_pending == 0) model__handler_after_calls(w, r);
}

/* The handler of r (at service s, its own work done, with calls to make) makes them: in
 * order, one after the other's end (sequential), or all at once (fan-out). Its state is kept
 * on the side (mw_req_side). Called by ev_work_done (model_service.c). */
void model__handler_calls(model_world *w, mw_service *s, mw_req *r) {
  const model_service_cfg *cfg = s->cfg;
  mw_req_side *d = model__req_side(w, r);
  if (d == NULL) return; /* the world has failed */
  if (r->cancelled) {
    /* Its call was cancelled while it was worked: the request's context is done, so each
     * call it would make fails at once, cancelled, and is never sent (gRPC fails a call
     * made with a cancelled context before it leaves). The handler goes on as after any
     * failed call: no side effect "after", and a reply nobody waits for. */
    s->stats->cancelled++;
    d->ds_failed = true;
    d->ds_status = cfg->space == RETRY_SPACE_GRPC ? RETRY_GRPC_CANCELLED : RETRY_HTTP_CANCELLED;
    model__handler_after_calls(w, r);
    return;
  }
  r->state = MW_REQ_DOWNSTREAM;
  /* A service whose calls may be cancelled notes each call it makes (downstream_start). */
  if (s->keeps_calls) {
    r->fanout = model__pool_get(&w->pools.fanouts);
    if (r->fanout == NULL) {
      model__fail(w, RETRY_ENOMEM, "out of memory for fan-outs");
      return;
    }
    r->fanout->n = 0;
  }
  if (cfg->calls_mode == MODEL_CALLS_SEQUENTIAL) {
    /* A call its branch skips counts as not made: the next one starts (none: the handler
     * goes on as one without calls). */
    int32_t j = sequential_next(w, s, r, 0);
    d->ds_next = j + 1;
    if (j < (int32_t)cfg->n_calls)
      downstream_start(w, s, r, j, j);
    else
      model__handler_after_calls(w, r);
    return;
  }
  /* Every copy of every call: copy i of call j is operation (copies before j) + i, whether
   * made or skipped by its branch (so an operation keeps its number). Without wait_for a
   * failure while starting stops the rest (the handler fails anyway); with it the fan-out
   * starts all n, since k may still be reached. ds_next counts what was started. */
  d->ds_starting = true;
  int32_t child = 0, made = 0;
  for (int32_t j = 0; j < (int32_t)cfg->n_calls && (cfg->wait_for > 0 || !d->ds_failed); j++) {
    if (w->pools.branches && !branch_taken(w, s, r, j)) {
      downstream_skip(w, s, r, j);
      child += cfg->calls[j].fanout;
      continue;
    }
    for (int32_t i = 0; i < cfg->calls[j].fanout && (cfg->wait_for > 0 || !d->ds_failed); i++) {
      downstream_start(w, s, r, j, child++);
      made++;
    }
  }
  d->ds_next = made;
  d->ds_starting = false;
  if (r->cancelled) {
    /* Cancelled while it started its calls (model__service_cancel): its caller has dropped
     * it, so it is freed here once its calls have reported. */
    handler_cut_short(w, s, r);
    model__req_discard(w, r);
    return;
  }
  if (cfg->wait_for > 0) {
    int q = quorum_state(s, r);
    if (q >= 0) quorum_decide(w, r, q);
    return;
  }
  if (d->ds_pending == 0) model__handler_after_calls(w, r);
}

/* }================================================================== */

/* {==================================================================
 * Cancels
 * =================================================================== */

/* The cancel travels down as a request's context does in gRPC (the calls its handler made
 * with it are cancelled with it), one hop at a time: each call cancelled here cancels its own
 * attempts at their callees (model__call_cancel), which come back here. */
bool model__service_cancel(model_world *w, mw_req *r) {
  mw_service *s = &w->topo.services[r->edge->callee];
  if (s->cfg->n_calls == 0) return false; /* a handler without calls just finishes */
  if (r->state == MW_REQ_WORKING) {
    r->cancelled = true; /* its handler makes no calls */
    return false;
  }
  /* Waiting for its calls, and not already going on (a k-of-n fan-out deciding further up
   * the stack: it replies, and the reply is dropped). */
  if (r->state != MW_REQ_DOWNSTREAM || r->side->ds_decided) return false;
  /* Still starting them further up the stack (a call's end there set off the cancel): the
   * fan-out's loop ends the handler once it is out of it (model__handler_calls). */
  if (r->side->ds_starting) {
    r->cancelled = true;
    return false;
  }
  handler_cut_short(w, s, r);
  return true;
}

/* Ends the handler of r, cancelled while it waits for its calls: they are cancelled, the
 * worker is freed, no reply goes back (model__service_cancel). */
static void handler_cut_short(model_world *w, mw_service *s, mw_req *r) {
  s->stats->cancelled++;
  r->side->ds_decided = true; /* the calls' ends only count them out from now on */
  mw_fanout *f = fanout_of(s, r);
  r->fanout = NULL;
  if (f != NULL) fanout_cancel(w, f);
  /* The handler ends here: its worker is free, its time counted as busy and wasted (nobody
   * uses what it did), and no reply goes back. An adaptive concurrency filter forgets it
   * without a latency sample, as for a request withdrawn from the queue. */
  mw_replica *rp = &s->replicas[r->replica];
  int64_t now = sim_now_ns(w->k);
  s->stats->wasted_work_s += model__worker_release(s, r, now);
  if (r->acc_forwarded) {
    if (rp->acc->outstanding > 0) rp->acc->outstanding--;
    r->acc_forwarded = false;
  }
  r->state = MW_REQ_HOP_BACK; /* out of the server's hands */
  model__replica_pump(w, s, r->replica);
}

/* Which services a k-of-n cancel can reach: the callees of a fan-out with wait_for and
 * cancel_rest, then, as long as something changes, the callees of the services reached (the
 * call graph has no cycle, so this ends within n_services rounds; a cycle would end too). */
void model__services_cancel_reach(model_world *w) {
  const model_config *cfg = w->cfg;
  bool changed = true;
  for (size_t round = 0; changed && round <= cfg->n_services; round++) {
    changed = false;
    for (size_t i = 0; i < cfg->n_services; i++) {
      const model_service_cfg *sc = &cfg->services[i];
      bool sends = (sc->wait_for > 0 && sc->cancel_rest) || w->topo.services[i].hears_cancel;
      for (size_t j = 0; sends && j < sc->n_calls; j++) {
        mw_service *callee = &w->topo.services[sc->calls[j].service];
        if (!callee->hears_cancel) changed = callee->hears_cancel = true;
      }
    }
  }
  for (size_t i = 0; i < cfg->n_services; i++) {
    const model_service_cfg *sc = &cfg->services[i];
    mw_service *sv = &w->topo.services[i];
    sv->keeps_calls =
        sc->n_calls > 0 && ((sc->wait_for > 0 && sc->cancel_rest) || sv->hears_cancel);
    sv->stats->has_cancel = sc->n_calls > 0 && sv->hears_cancel;
  }
}

/* }================================================================== */
