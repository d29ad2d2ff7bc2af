/*
 * model_client_fallback.c: what a client population does when one of its calls fails
 * (model_client_fallback_cfg): the slow error path (extra_ns before the user hears of it),
 * then one fallback call, whose result replaces the failure, or is answered OK regardless
 * (a degraded answer), or leaves the failure standing. Only then does the call end for its
 * client (model__client_call_done): its latency, goodput or error, and the closed loop's next
 * call or user retry follow the final outcome. Invariant: a call taken by the error path stays
 * counted in top_in_flight until it settles, so the run does not end under it.
 */
#include <assert.h>

#include "models/model_int.h"

/* One failure on its error path: the failed call's end as its client will hear it. Allocated when
 * the filter takes the failure and freed when the call settles: a rare, cold path. */
typedef struct mw_cfb {
  mw_end end;
} mw_cfb;

static const model_client_fallback_cfg *cfb_cfg(const mw_cfb *f) {
  return ((const mw_client *)f->end.done_ctx)->pop->cfg->on_failure;
}

/* The error path is over: the call settles, OK or not. The summary's calls ok and failed are
 * its population's edge's (world_finish), which counted this call failed: one the path turned
 * OK moves from the one to the other here (its stop reason and status stay the call's own). */
static void path_end(model_world *w, mw_cfb *f, bool ok) {
  mw_end e = f->end;
  if (ok && e.measured) {
    w->res.calls_ok++;
    w->res.calls_failed--;
  }
  model__free(w, f);
  e.ok = ok;
  model__client_call_done(w, &e);
}

/* Population p's fallback edge: one of those just before the herds' init edges
 * (model_world.c, edges_create). */
static mw_edge *fallback_edge(model_world *w, const mw_pop *p) {
  size_t end = w->topo.n_edges - w->topo.n_init_edges;
  for (size_t i = end - w->topo.n_pop_fb_edges; i < end; i++)
    if (w->topo.edges[i].pop == p->index) return &w->topo.edges[i];
  return NULL;
}

/* Starts f's fallback on the population's fallback edge. Its deadline is its own timeout,
 * bounded by the failed call's when it propagates. */
static void fallback_start(model_world *w, mw_cfb *f) {
  mw_client *cl = f->end.done_ctx;
  mw_pop *p = cl->pop;
  const model_client_fallback_cfg *cf = p->cfg->on_failure;
  const model_call_cfg *fb = cf->fallback;
  mw_edge *edge = fallback_edge(w, p);
  assert(edge != NULL && edge->pop_fallback);
  const retry_method_config *mc = edge->fb_mc;
  int64_t now = sim_now_ns(w->k);
  int64_t timeout = fb->deadline_ns != RETRY_NEVER ? fb->deadline_ns
                    : mc != NULL                   ? mc->timeout_ns
                                                   : RETRY_NEVER;
  int64_t deadline =
      timeout == RETRY_NEVER || timeout > INT64_MAX - now ? RETRY_NEVER : now + timeout;
  if (fb->propagate_deadline && f->end.deadline_ns < deadline) deadline = f->end.deadline_ns;
  mw_op *op = model__op_new(w);
  if (op == NULL) return; /* out of memory: the world has failed */
  if (f->end.measured) p->edge->stats->fallbacks++;
  mw_call_args a = {.edge = edge,
                    .mc = mc,
                    .method = fb->method,
                    .stream = fb->stream,
                    .request_bytes = fb->request_bytes,
                    .stream_items = fb->stream_items,
                    .deadline_ns = deadline,
                    .op = op,
                    .ch = &cl->ch,
                    .target = NULL, /* no shared state (model_world.c, edges_create) */
                    .top = false,
                    .criticality = 0,
                    .done_ctx = f,
                    .slot = cf->slot,
                    .child = NULL,
                    .fast = edge->fb_fast};
  /* Its end may come at once (refused locally), inside the start: f is settled then. */
  model__call_start(w, &a);
  model__op_unref(w, op);
}

/* The slow error path's time is over: the fallback, or the call settles. */
static void ev_extra_done(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  (void)arg;
  mw_cfb *f = obj;
  mw_client *cl = f->end.done_ctx;
  const model_on_failure_cfg *of = &cfb_cfg(f)->on_failure;
  if (of->fallback >= 0) {
    fallback_start(cl->w, f);
    return;
  }
  path_end(cl->w, f, of->result == MODEL_FALLBACK_ANSWER_OK);
}

static bool fire(model_world *w, const mw_end *e) {
  mw_client *cl = e->done_ctx;
  mw_pop *p = cl->pop;
  const model_on_failure_cfg *of = &p->cfg->on_failure->on_failure;
  if (!model__fallback_matches(of, e->status, e->reason)) return false;
  mw_cfb *f = model__calloc(w, 1, sizeof *f);
  if (f == NULL) {
    model__fail(w, RETRY_ENOMEM, "out of memory for a client's fallback");
    return false;
  }
  f->end = *e;
  f->end.handle = NULL; /* the call is freed once this returns */
  if (e->measured) p->edge->stats->on_failure++;
  model__ts_add(w, p->edge->col_on_failure, 1.0);
  if (of->extra_ns > 0) {
    if (sim_event_schedule_in(w->k, of->extra_ns, ev_extra_done, f, 0) == SIM_EVENT_NONE) {
      model__free(w, f);
      model__fail(w, RETRY_ENOMEM, "out of memory for events");
      return false;
    }
    return true;
  }
  if (of->fallback >= 0)
    fallback_start(w, f);
  else
    path_end(w, f, of->result == MODEL_FALLBACK_ANSWER_OK);
  return true;
}

void model__client_fallback_call_done(model_world *w, const mw_end *e) {
  if (!e->ok && fire(w, e)) return;
  model__client_call_done(w, e);
}

/* A population's fallback call ended (the on_done of its edge). Its status, mapped into the
 * target's space, decides ("fallback"), or the call is OK ("ok"), or the failure stands
 * ("failure"). */
void model__client_fallback_done(model_world *w, const mw_end *e) {
  mw_cfb *f = e->done_ctx;
  mw_client *cl = f->end.done_ctx;
  const model_client_cfg *cc = cl->pop->cfg;
  const model_on_failure_cfg *of = &cc->on_failure->on_failure;
  const model_call_cfg *fb = cc->on_failure->fallback;
  retry_space space = w->cfg->services[cc->target].space;
  int32_t st = model__status_map(&fb->map, w->cfg->services[fb->service].space, space, e->status);
  bool ok = of->result == MODEL_FALLBACK_USE_FALLBACK ? retry_status_is_ok(space, st)
            : of->result == MODEL_FALLBACK_ANSWER_OK  ? true
                                                      : false;
  path_end(w, f, ok);
}

/* Marks the populations' edges whose population has an on_failure, adds each one's
 * <client>_on_failure_rps column and sets the fallback edges' ends. */
int model__client_fallbacks_setup(model_world *w,
                                  int (*column)(model_world *, const char *, const char *, bool)) {
  for (size_t i = 0; i < w->topo.n_pops; i++) {
    mw_pop *p = &w->topo.pops[i];
    if (p->cfg->on_failure == NULL) continue;
    p->edge->stats->has_on_failure = true;
    p->edge->col_on_failure = column(w, p->cfg->name, "on_failure_rps", true);
    if (p->edge->col_on_failure < 0) return -1;
  }
  size_t end = w->topo.n_edges - w->topo.n_init_edges;
  for (size_t i = end - w->topo.n_pop_fb_edges; i < end; i++)
    w->topo.edges[i].on_done = model__client_fallback_done;
  return 0;
}
