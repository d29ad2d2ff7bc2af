/*
 * model_fallback.c: what a handler does when one of its calls fails (model_on_failure_cfg):
 * the slow error path (its worker stays busy extra_ns), the failed call's key deleted from its
 * callee's cache (invalidate), and one fallback call whose result replaces the failure, or is
 * answered OK regardless (a degraded answer), or leaves the failure standing. Invariant: from
 * the failure to the handler's going on, r's side record counts the error path as one call
 * pending (ds_pending), so a handler cut short meanwhile is freed only once it is over, as it
 * is for any of its calls (model_fanout.c).
 */
#include <assert.h>

#include "models/model_int.h"

/* {==================================================================
 * The failure's identity: the failed call's number and its status, in one word
 * =================================================================== */

/* The extra time's event and the fallback's end carry which call failed (its number among the
 * handler's calls, mw_end.slot) and the status it failed with (in the handler's space): an HTTP
 * status is below 1024, a gRPC code below 17, and a handler makes fewer than 2^20 calls. */
#define FB_STATUS_BITS 10
_Static_assert(599 < (1 << FB_STATUS_BITS) && RETRY_GRPC_UNAUTHENTICATED < (1 << FB_STATUS_BITS),
               "a status fits the failure word's low bits");

static int32_t fb_pack(int32_t child, int32_t status) {
  assert(status >= 0 && status < (1 << FB_STATUS_BITS) && child >= 0 && child < (1 << 20));
  return (child << FB_STATUS_BITS) | status;
}
static int32_t fb_child(int32_t word) { return word >> FB_STATUS_BITS; }
static int32_t fb_status(int32_t word) { return word & ((1 << FB_STATUS_BITS) - 1); }

/* The call of r's handler numbered child, and its on_failure. */
static const model_call_cfg *failed_call(const mw_service *s, int32_t child) {
  return &s->cfg->calls[s->call_of_child[child]];
}

/* }================================================================== */

/* {==================================================================
 * The error path
 * =================================================================== */

/* Whether the failure (status st in the handler's space, stop reason why) is one on_failure
 * answers: its status among `statuses` (none listed: any) and its reason among `reasons`
 * (none: any); never a call the handler cancelled itself (a k-of-n fan-out's leftovers). */
bool model__fallback_matches(const model_on_failure_cfg *of, int32_t st, retry_stop why) {
  if (why == RETRY_STOP_CANCELLED) return false; /* the handler itself no longer wants it */
  if (of->reasons != 0 && !(of->reasons & (UINT32_C(1) << why))) return false;
  if (of->n_statuses == 0) return true;
  for (int i = 0; i < of->n_statuses; i++)
    if (of->statuses[i] == st) return true;
  return false;
}

/* The error path is over with status st for the failed call: the handler goes on, as after
 * any end of a call, unless it was cut short meanwhile (it then only counts the path out, and
 * the last of its calls frees it). */
static void path_end(model_world *w, mw_req *r, int32_t st) {
  mw_req_side *d = r->side;
  d->ds_pending--;
  if (d->ds_decided) {
    if (d->ds_orphan && d->ds_pending == 0) model__req_put(w, r);
    return;
  }
  model__downstream_settle(w, r, st);
}

/* The status the handler keeps when the error path has no fallback (or after it): OK for a
 * degraded answer, else the failure. */
static int32_t result_without_fallback(const mw_service *s, const model_on_failure_cfg *of,
                                       int32_t st) {
  return of->result == MODEL_FALLBACK_ANSWER_OK ? model__status_ok(s->cfg->space) : st;
}

/* Starts the fallback of r's failed call (word: its number and status). It carries the failed
 * call's operation, so it looks up the same key and a side effect it repeats counts as the
 * same operation's; its deadline is its own timeout, bounded by r's when it propagates. */
static void fallback_start(model_world *w, mw_service *s, mw_req *r, int32_t word, bool measured) {
  int32_t child = fb_child(word);
  const model_call_cfg *cc = failed_call(s, child);
  int32_t fj = cc->on_failure.fallback;
  const model_call_cfg *fb = &s->cfg->calls[fj];
  const retry_method_config *mc = s->call_mcfg[fj].mc;
  int64_t now = sim_now_ns(w->k);
  int64_t timeout = fb->deadline_ns != RETRY_NEVER ? fb->deadline_ns
                    : mc != NULL                   ? mc->timeout_ns
                                                   : RETRY_NEVER;
  int64_t deadline =
      timeout == RETRY_NEVER || timeout > INT64_MAX - now ? RETRY_NEVER : now + timeout;
  if (fb->propagate_deadline && r->deadline_ns < deadline) deadline = r->deadline_ns;
  mw_op *op = model__op_child(w, r->op, child);
  if (op == NULL && r->op != NULL) return; /* out of memory: the world has failed */
  if (measured) s->call_edges[s->call_of_child[child]]->stats->fallbacks++;
  mw_call_args a = {.edge = s->call_edges[fj],
                    .mc = mc,
                    .method = fb->method,
                    .stream = fb->stream,
                    .request_bytes = fb->request_bytes,
                    .stream_items = fb->stream_items,
                    .deadline_ns = deadline,
                    .op = op,
                    .ch = &s->replicas[r->replica].ch,
                    .target = model__channel_target(&s->replicas[r->replica].ch, (size_t)fj),
                    .top = false,
                    .criticality = r->criticality,
                    .done_ctx = r,
                    .slot = word, /* model__fallback_done finds the failure through it */
                    .child = NULL,
                    .fast = s->call_mcfg[fj].fast};
  /* Its end may come at once (refused locally), inside the start: model__fallback_done then
   * ends the path before this returns. */
  if (model__call_start(w, &a) < 0) r->side->ds_pending--; /* the world has failed */
}

/* The slow error path's time is over: the fallback, or the handler goes on. */
static void ev_extra_done(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  mw_req *r = obj;
  model_world *w = r->edge->w;
  mw_service *s = &w->topo.services[r->edge->callee];
  int32_t word = (int32_t)(arg & 0x7fffffff);
  bool measured = (arg >> 32) != 0;
  const model_on_failure_cfg *of = &failed_call(s, fb_child(word))->on_failure;
  if (of->fallback >= 0 && !r->side->ds_decided) {
    fallback_start(w, s, r, word, measured);
    return;
  }
  path_end(w, r, result_without_fallback(s, of, fb_status(word)));
}

bool model__fallback_fire(model_world *w, mw_req *r, const mw_end *e, int32_t st) {
  mw_service *s = &w->topo.services[r->edge->callee];
  const model_call_cfg *cc = failed_call(s, e->slot);
  const model_on_failure_cfg *of = &cc->on_failure;
  if (!model__fallback_matches(of, st, e->reason)) return false;
  mw_edge *edge = s->call_edges[s->call_of_child[e->slot]];
  if (e->measured) edge->stats->on_failure++;
  model__ts_add(w, edge->col_on_failure, 1.0);
  if (of->invalidate) /* counted by the cache (model__caches_report) */
    model__cache_invalidate(w, &w->topo.services[cc->service], model__op_child(w, r->op, e->slot));
  r->side->ds_pending++; /* the error path is one call pending until it ends (path_end) */
  int32_t word = fb_pack(e->slot, st);
  if (of->extra_ns > 0) {
    uint64_t arg = (uint64_t)word | ((uint64_t)e->measured << 32);
    if (sim_event_schedule_in(w->k, of->extra_ns, ev_extra_done, r, arg) == SIM_EVENT_NONE) {
      r->side->ds_pending--;
      model__fail(w, RETRY_ENOMEM, "out of memory for events");
    }
    return true;
  }
  if (of->fallback >= 0)
    fallback_start(w, s, r, word, e->measured);
  else
    path_end(w, r, result_without_fallback(s, of, st));
  return true;
}

/* A fallback call ended (the on_done of every fallback's edge). Its status, mapped into the
 * handler's space, replaces the failure ("fallback"), or an OK does ("ok"), or the failure
 * stands ("failure"); with invalidate, a failed fallback deletes its own key too. */
void model__fallback_done(model_world *w, const mw_end *e) {
  mw_req *r = e->done_ctx;
  mw_service *s = &w->topo.services[r->edge->callee];
  int32_t child = fb_child(e->slot), st0 = fb_status(e->slot);
  const model_on_failure_cfg *of = &failed_call(s, child)->on_failure;
  const model_call_cfg *fb = &s->cfg->calls[of->fallback];
  int32_t st =
      model__status_map(&fb->map, w->cfg->services[fb->service].space, s->cfg->space, e->status);
  bool ok = retry_status_is_ok(s->cfg->space, st);
  if (!ok && of->invalidate)
    model__cache_invalidate(w, &w->topo.services[fb->service], model__op_child(w, r->op, child));
  int32_t keep = of->result == MODEL_FALLBACK_USE_FALLBACK ? st
                 : of->result == MODEL_FALLBACK_ANSWER_OK  ? model__status_ok(s->cfg->space)
                                                           : st0;
  path_end(w, r, keep);
}

/* }================================================================== */

/* {==================================================================
 * Setup: the edges' ends and columns
 * =================================================================== */

int model__fallbacks_setup(model_world *w,
                           int (*column)(model_world *, const char *, const char *, bool)) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_service *s = &w->topo.services[i];
    const model_service_cfg *cfg = s->cfg;
    int col = -1;
    for (size_t j = 0; j < cfg->n_calls; j++) {
      const model_on_failure_cfg *of = &cfg->calls[j].on_failure;
      if (!of->on) continue;
      s->call_edges[j]->stats->has_on_failure = true;
      if (of->invalidate) {
        w->res.services[cfg->calls[j].service].has_invalidate = true;
        if (of->fallback >= 0)
          w->res.services[cfg->calls[of->fallback].service].has_invalidate = true;
      }
      if (col < 0) col = column(w, cfg->name, "on_failure_rps", true);
      if (col < 0) return -1;
      s->call_edges[j]->col_on_failure = col;
    }
  }
  return 0;
}

/* }================================================================== */
