/*
 * model_trace.c: the world's trace hook. A program installs a sink (model_world_set_trace);
 * each call then asks it once, at its start, whether to be traced, unless the attempt that
 * started it belongs to a traced call, which traces it anyway. A traced call hands every
 * engine record to the sink with the call's place in the call graph (edge, depth, parent call
 * and attempt), which is all a program needs to rebuild one logical call's tree. Nothing here
 * runs without a sink: model__call_start tests w->trace.record first.
 */
#include <string.h>

#include "models/model_int.h"

void model_world_set_trace(model_world *w, const model_trace_sink *sink) {
  if (sink == NULL || sink->record == NULL)
    memset(&w->trace, 0, sizeof w->trace);
  else
    w->trace = *sink;
  /* A sink is a feature of the whole world: the calls' fast paths follow. */
  model__features_apply(w);
}

/* The call as the sink sees it. start_ns is the engine's once the call has started. */
static void call_info(const mw_call *c, int64_t start_ns, model_trace_call *info) {
  const mw_call_ext *x = model__call_ext(c); /* a call has one while a sink is installed */
  info->id = x->rx.id;
  info->parent_id = x->trace_parent;
  info->parent_attempt = x->trace_parent_attempt;
  info->depth = x->trace_depth;
  info->top = model__call_top(c);
  info->from = c->edge->stats->from;
  info->to = c->edge->stats->to;
  info->method = model__call_method(c);
  info->start_ns = start_ns;
  info->deadline_ns = model__call_rc_const(c)->deadline_ns;
  info->policy = model__call_rc_const(c)->policy;
}

/* The engine's trace callback: ctx is the call, alive for as long as the engine runs it. */
static void call_record(void *ctx, const retry_trace_rec *rec) {
  const mw_call *c = ctx;
  model_trace_call info;
  call_info(c, model__call_rc_const(c)->start_ns, &info);
  model_world *w = c->edge->w;
  w->trace.record(w->trace.ctx, &info, rec);
}

void model__trace_call_start(model_world *w, mw_call *c, retry_call_opts *o) {
  /* A client's call is told to its client; a service's call to the request whose handler
   * made it (model_service.c, downstream_start), which is the attempt it serves. */
  const mw_req *parent = model__call_top(c) || c->edge->init >= 0 ? NULL : c->done_ctx;
  bool inherited = parent != NULL && model__req_trace_call(parent) != 0;
  /* A call has an ext while a sink is installed (model__call_start), and its id, deadline
   * and policy are set before this (call_engine_start). */
  mw_call_ext *e = model__call_ext(c);
  e->trace_parent = inherited ? model__req_trace_call(parent) : 0;
  e->trace_parent_attempt = inherited ? parent->attempt : 0;
  /* A depth not known (a call picked below an untraced parent) stays unknown below it. */
  if (inherited)
    e->trace_depth = model__req_trace_depth(parent) < 0 ? -1 : model__req_trace_depth(parent) + 1;
  else
    e->trace_depth = parent == NULL ? 0 : -1;
  if (!inherited) {
    model_trace_call info;
    call_info(c, sim_now_ns(w->k), &info);
    if (w->trace.select == NULL || !w->trace.select(w->trace.ctx, &info)) return;
  }
  c->flags |= MW_CALL_TRACED;
  o->trace = call_record;
  o->trace_ctx = c;
}
