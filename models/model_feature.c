/*
 * model_feature.c: the one table of the world's features that its fast paths skip. A fast
 * path leaves out the work of features an object does not have (a service's arrival screen,
 * a call's engine, a call's ext, ...); each row below names one feature, the object it belongs
 * to and the fast paths it rules out, and every "needs the slow path" flag of the world is
 * derived from the rows, once, when the world is built (and again when a trace sink comes or
 * goes), never per event. A new feature is one row here; a feature left out of the table is
 * one a fast path silently skips, which tools/test/test-fastpath.sh catches: it runs every
 * experiment and test scenario with the fast paths on and forced off (RETRYSIM_NO_FAST_PATHS=1,
 * model_config.fast_paths_off) and compares every output byte for byte.
 */
#include <stdlib.h>
#include <string.h>

#include "models/model_int.h"

/* {==================================================================
 * The features
 * =================================================================== */

/* What a row is asked about: a service (its config), or a call on an edge (the callee's
 * config, the edge's channel state and the method's policy and figures). */
typedef struct mw_subject {
  const model_world *w;
  const model_service_cfg *svc;  /* the service, or the callee of the edge */
  const mw_edge *edge;           /* NULL for a service */
  const retry_target_config *tc; /* the edge's channel state's config, NULL without */
  const retry_target *target;    /* its first holder's target (all share tc), NULL without */
  const retry_method_config *mc; /* the method's policy, NULL: one attempt */
  retry_stream_kind stream;      /* the method's call: its kind, ... */
  int64_t request_bytes;         /* ... its request's size (0: unset) ... */
  int64_t stream_items;          /* ... and a full reply's messages */
  const mw_pop *pop;             /* a population (MW_OF_POP), else NULL */
} mw_subject;

/* Which object a feature belongs to, so which subjects its row is asked about. */
typedef enum mw_feature_of {
  MW_OF_SERVICE = 1, /* a service: its own fast paths, and those of the calls to it */
  MW_OF_EDGE = 2,    /* an edge's channel state (the policy's shared parts) */
  MW_OF_METHOD = 4,  /* a method's call on an edge: its policy, size and stream */
  MW_OF_WORLD = 8,   /* the whole world (a trace sink) */
  MW_OF_POP = 16     /* a client population: its arrival events */
} mw_feature_of;

typedef struct mw_feature {
  const char *name;
  mw_feature_of of;
  uint8_t disables;                /* MW_FAST_*: the fast paths an object with it cannot take */
  bool (*on)(const mw_subject *x); /* whether the object has the feature */
} mw_feature;

static bool has_fault(const model_service_cfg *s, model_fault_kind kind) {
  for (size_t i = 0; i < s->n_faults; i++)
    if (s->faults[i].kind == kind) return true;
  return false;
}

/* A service's (MW_OF_SERVICE) */
static bool svc_criticality(const mw_subject *x) { return x->svc->criticality.on; }
static bool svc_retry_budget(const mw_subject *x) { return x->svc->retry_budget.on; }
static bool svc_admission(const mw_subject *x) { return x->svc->admission.on; }
static bool svc_faults(const mw_subject *x) { return x->svc->n_faults > 0; }
static bool svc_acc(const mw_subject *x) { return x->svc->acc.on; }
static bool svc_shedding(const mw_subject *x) { return x->svc->shedding.on; }
static bool svc_deadline(const mw_subject *x) { return x->svc->deadline != MODEL_DEADLINE_IGNORE; }
static bool svc_contention(const mw_subject *x) { return x->svc->contention.on; }
static bool svc_cache(const mw_subject *x) { return x->svc->cache.on; }
static bool svc_congestion(const mw_subject *x) { return x->svc->slowdown_per_busy != 0.0; }
static bool svc_work(const mw_subject *x) { return x->svc->work.on; }
static bool svc_slowdown(const mw_subject *x) { return has_fault(x->svc, MODEL_FAULT_SLOWDOWN); }
static bool svc_stall(const mw_subject *x) { return has_fault(x->svc, MODEL_FAULT_STALL); }
/* Replica control (model_ctl.c): none needs a fast path left, because the world gives such a
 * service its own config whose balancer (MODEL_LB_CTL) makes every pick there, and the
 * replies its callers' detectors hear are marked per request (mw_req.ctl_watch); the rows say
 * so, and keep the table the one list of what a world may have. */
static bool svc_outlier(const mw_subject *x) { return x->svc->ctl != NULL && x->svc->ctl->outlier_on; }
static bool svc_health(const mw_subject *x) { return x->svc->ctl != NULL && x->svc->ctl->health.on; }
static bool svc_self_eject(const mw_subject *x) {
  return x->svc->ctl != NULL && x->svc->ctl->self_eject.on;
}
static bool svc_autoscaler(const mw_subject *x) {
  return x->svc->ctl != NULL && x->svc->ctl->autoscaler_on;
}
static bool svc_scale(const mw_subject *x) { return x->svc->ctl != NULL && x->svc->ctl->n_scale > 0; }
/* A FAIL fault that sends stream messages first: a reply of any method may carry some, which
 * the engine counts in the call's ext. */
static bool svc_fail_items(const mw_subject *x) {
  for (size_t i = 0; i < x->svc->n_faults; i++) {
    const model_fault_cfg *f = &x->svc->faults[i];
    if (f->kind == MODEL_FAULT_FAIL && f->after_headers && f->stream_items > 0) return true;
  }
  return false;
}

/* An edge's channel state (MW_OF_EDGE) */
static bool edge_target(const mw_subject *x) { return x->tc != NULL; }
/* What the engine itself keeps in a call's ext for this target, whatever the policy: asked of
 * the engine (retry_call_ext_needed), so that a new part of it needs no row here. */
static bool edge_target_ext(const mw_subject *x) {
  if (x->target == NULL) return false;
  retry_call_opts probe;
  memset(&probe, 0, sizeof probe);
  retry_policy plain;
  retry_policy_init(&plain, x->svc->space);
  return retry_call_ext_needed(&plain, x->target, &probe);
}
static bool edge_blocking_limit(const mw_subject *x) {
  return x->tc != NULL && x->tc->has_limit && x->tc->limit.blocking;
}
static bool edge_budget(const mw_subject *x) {
  return x->tc != NULL && x->tc->budget != RETRY_BUDGET_NONE;
}
static bool edge_adaptive(const mw_subject *x) { return x->tc != NULL && x->tc->has_adaptive; }
/* Some operator's policy action names the edge: its calls may take another policy later
 * (model_operator.c), so they take the paths that serve any policy. */
static bool edge_policy_push(const mw_subject *x) {
  const model_ops_cfg *o = x->w->cfg->ops;
  const mw_edge *e = x->edge;
  for (size_t i = 0; o != NULL && i < o->n_ops; i++) {
    const model_action_cfg *a = &o->ops[i].action;
    if (a->kind != MODEL_ACTION_POLICY) continue;
    if (a->pop >= 0 ? e->pop == a->pop && e->init < 0
                    : e->pop < 0 && e->svc == a->service && e->callee == a->callee)
      return true;
  }
  return false;
}
static bool edge_limiters(const mw_subject *x) {
  return x->tc != NULL && (x->tc->has_limit || x->tc->has_aws_adaptive);
}

/* A method's call (MW_OF_METHOD) */
static bool method_retries(const mw_subject *x) {
  return x->mc != NULL && x->mc->policy.kind != RETRY_POLICY_NONE;
}
static bool method_attempt_timeout(const mw_subject *x) {
  return x->mc != NULL && x->mc->policy.per_attempt_timeout_ns != 0;
}
static bool method_hedging(const mw_subject *x) {
  return x->mc != NULL && x->mc->policy.kind == RETRY_POLICY_HEDGE;
}
static bool method_request_bytes(const mw_subject *x) { return x->request_bytes != 0; }
static bool method_stream_items(const mw_subject *x) { return x->stream_items != 0; }
static bool method_stream(const mw_subject *x) { return x->stream != RETRY_STREAM_UNARY; }

/* The world's (MW_OF_WORLD) */
static bool world_trace(const mw_subject *x) { return x->w->trace.record != NULL; }
static bool world_operators(const mw_subject *x) { return x->w->cfg->ops != NULL; }

/* A population's (MW_OF_POP): some action restarts, pauses, resumes or throttles it
 * (model_herd.c). */
static bool pop_herd(const mw_subject *x) {
  const model_ops_cfg *o = x->w->cfg->ops;
  for (size_t i = 0; o != NULL && i < o->n_ops; i++) {
    const model_action_cfg *a = &o->ops[i].action;
    if (a->pop == x->pop->index &&
        (a->kind == MODEL_ACTION_PAUSE || a->kind == MODEL_ACTION_RESUME ||
         a->kind == MODEL_ACTION_RESTART || a->kind == MODEL_ACTION_RATE))
      return true;
  }
  return false;
}

/* Its own on_failure (model_client_fallback.c): no fast path is left, because a failed call
 * of its asks the population's flag (mw_pop.has_on_failure) off the success path; the row
 * keeps the table the one list of what a world may have. */
static bool pop_on_failure(const mw_subject *x) { return x->pop->cfg->on_failure != NULL; }

/* The table. A row's fast paths are those whose work the feature is part of:
 *   MW_FAST_ARRIVAL    the arrival screen before the queue (model_service.c, arrive_screen)
 *   MW_FAST_START      a worker's start: the deadline check and the contention read
 *   MW_FAST_TIME       the work's time: faults' delays and multipliers (work_time)
 *   MW_FAST_BARE       a call without the engine, its one request (model_call.c, bare_start)
 *   MW_FAST_NO_EXT     a call without an mw_call_ext (the engine's optional state, the model's
 *                      rarer figures)
 *   MW_FAST_GAUGE_THIN a live gauge that reads the throttle and the breaker alone
 *                      (model__gauge_read)
 *   MW_FAST_UNGATED    a population's arrivals without asking whether the client is down or
 *                      paused (model_client.c's ungated event functions)
 *   MW_FAST_NO_OPS     a bucket's end without operators' rules or herds' columns */
static const mw_feature features[] = {
    {"criticality labels", MW_OF_SERVICE, MW_FAST_ARRIVAL, svc_criticality},
    {"server retry budget", MW_OF_SERVICE, MW_FAST_ARRIVAL, svc_retry_budget},
    {"admission bucket", MW_OF_SERVICE, MW_FAST_ARRIVAL, svc_admission},
    {"faults", MW_OF_SERVICE, MW_FAST_ARRIVAL, svc_faults},
    {"adaptive concurrency", MW_OF_SERVICE, MW_FAST_ARRIVAL, svc_acc},
    {"shedding", MW_OF_SERVICE, MW_FAST_ARRIVAL, svc_shedding},
    /* either scope: one cache looked up before the balancer, or one per replica after it */
    {"look-aside cache", MW_OF_SERVICE, MW_FAST_ARRIVAL, svc_cache},
    {"deadline-aware server", MW_OF_SERVICE, MW_FAST_START, svc_deadline},
    {"contention", MW_OF_SERVICE, MW_FAST_START, svc_contention},
    {"congestion slowdown", MW_OF_SERVICE, MW_FAST_TIME, svc_congestion},
    {"work that grows", MW_OF_SERVICE, MW_FAST_TIME, svc_work},
    {"slowdown fault", MW_OF_SERVICE, MW_FAST_TIME, svc_slowdown},
    {"stall fault", MW_OF_SERVICE, MW_FAST_TIME, svc_stall},
    {"fail fault with messages", MW_OF_SERVICE, MW_FAST_NO_EXT, svc_fail_items},
    {"outlier detection", MW_OF_SERVICE, 0, svc_outlier},
    {"health checks", MW_OF_SERVICE, 0, svc_health},
    {"self-eject", MW_OF_SERVICE, 0, svc_self_eject},
    {"autoscaler", MW_OF_SERVICE, 0, svc_autoscaler},
    {"scale events", MW_OF_SERVICE, 0, svc_scale},
    {"channel state", MW_OF_EDGE, MW_FAST_BARE, edge_target},
    {"engine's ext for the target", MW_OF_EDGE, MW_FAST_NO_EXT, edge_target_ext},
    {"blocking limiter", MW_OF_EDGE, MW_FAST_NO_EXT, edge_blocking_limit},
    {"client retry budget", MW_OF_EDGE, MW_FAST_GAUGE_THIN, edge_budget},
    {"adaptive throttling", MW_OF_EDGE, MW_FAST_GAUGE_THIN, edge_adaptive},
    {"client limiters", MW_OF_EDGE, MW_FAST_GAUGE_THIN, edge_limiters},
    {"policy push", MW_OF_EDGE, MW_FAST_BARE | MW_FAST_NO_EXT, edge_policy_push},
    {"retry or hedging policy", MW_OF_METHOD, MW_FAST_BARE, method_retries},
    {"per-attempt timeout", MW_OF_METHOD, MW_FAST_BARE, method_attempt_timeout},
    {"hedging", MW_OF_METHOD, MW_FAST_NO_EXT, method_hedging},
    {"request size", MW_OF_METHOD, MW_FAST_NO_EXT, method_request_bytes},
    {"stream messages", MW_OF_METHOD, MW_FAST_NO_EXT, method_stream_items},
    {"streaming call", MW_OF_METHOD, MW_FAST_NO_EXT, method_stream},
    {"trace sink", MW_OF_WORLD, MW_FAST_BARE | MW_FAST_NO_EXT, world_trace},
    {"operators and scheduled actions", MW_OF_WORLD, MW_FAST_NO_OPS, world_operators},
    {"herds and pauses", MW_OF_POP, MW_FAST_UNGATED, pop_herd},
    {"population's on_failure", MW_OF_POP, 0, pop_on_failure},
};

#define N_FEATURES (sizeof features / sizeof features[0])

/* }================================================================== */

/* {==================================================================
 * Deriving the flags
 * =================================================================== */

/* The fast paths x's features leave open, from the rows of the kinds in `of` (every one when
 * the world forces them all off). */
static uint8_t fast_of(const model_world *w, const mw_subject *x, unsigned of) {
  if (w->fast.off) return 0;
  uint8_t slow = 0;
  for (size_t i = 0; i < N_FEATURES; i++) {
    if ((int)i == w->fast.skip || !(of & features[i].of)) continue;
    if (features[i].on(x)) slow |= features[i].disables;
  }
  return (uint8_t)(MW_FAST_ALL & ~slow);
}

/* The first holder's target of edge e (every holder's has the same config), or NULL. */
static const retry_target *edge_first_target(const model_world *w, const mw_edge *e) {
  if (!e->has_target) return NULL;
  if (e->pop >= 0)
    return model__channel_target(&model__pop_client(&w->topo.pops[e->pop], 0)->ch, 0);
  return model__channel_target(&w->topo.services[e->svc].replicas[0].ch, e->slot);
}

/* Every call on edge e: its fast paths per method (a population's methods, or the one call
 * of a service's handler the edge is). */
static void edge_apply(model_world *w, mw_edge *e) {
  const model_service_cfg *callee = &w->cfg->services[e->callee];
  mw_subject x = {.w = w, .svc = callee, .edge = e};
  x.target = edge_first_target(w, e);
  x.tc = e->has_target ? retry_config_target(e->policy) : NULL;
  uint8_t fe = fast_of(w, &x, MW_OF_SERVICE | MW_OF_EDGE | MW_OF_WORLD);
  e->gauge_no_budget = (fe & MW_FAST_GAUGE_THIN) != 0;
  if (e->pop_fallback) { /* a population's fallback call (model_client_fallback.c) */
    const model_call_cfg *fb = w->cfg->clients[e->pop].on_failure->fallback;
    x.mc = e->fb_mc;
    x.stream = fb->stream;
    x.request_bytes = fb->request_bytes;
    x.stream_items = fb->stream_items;
    e->fb_fast = fe & fast_of(w, &x, MW_OF_METHOD);
    return;
  }
  if (e->pop >= 0 && e->init < 0) {
    mw_pop *p = &w->topo.pops[e->pop];
    const model_client_cfg *cc = p->cfg;
    for (size_t j = 0; j < cc->n_methods; j++) {
      x.mc = p->mcfg[j].mc;
      x.stream = cc->methods[j].stream;
      x.request_bytes = cc->methods[j].request_bytes;
      x.stream_items = cc->methods[j].stream_items;
      p->mcfg[j].fast = fe & fast_of(w, &x, MW_OF_METHOD);
    }
    return;
  }
  if (e->init >= 0) { /* a herd's init call: its one method (model_herd.c) */
    if (w->ops == NULL) return; /* set again once the herds exist (model__ops_create) */
    mw_method *m = model__herd_init_method(w, e);
    x.mc = m->mc;
    x.stream = RETRY_STREAM_UNARY;
    x.request_bytes = x.stream_items = 0;
    m->fast = fe & fast_of(w, &x, MW_OF_METHOD);
    return;
  }
  mw_service *s = &w->topo.services[e->svc];
  const model_call_cfg *cc = &s->cfg->calls[e->slot];
  x.mc = s->call_mcfg[e->slot].mc;
  x.stream = cc->stream;
  x.request_bytes = cc->request_bytes;
  x.stream_items = cc->stream_items;
  s->call_mcfg[e->slot].fast = fe & fast_of(w, &x, MW_OF_METHOD);
}

void model__features_apply(model_world *w) {
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_service *s = &w->topo.services[i];
    mw_subject x = {.w = w, .svc = s->cfg};
    uint8_t f = fast_of(w, &x, MW_OF_SERVICE);
    s->plain_arrival = (f & MW_FAST_ARRIVAL) != 0;
    s->plain_start = (f & MW_FAST_START) != 0;
    s->plain_time = (f & MW_FAST_TIME) != 0;
  }
  for (size_t i = 0; i < w->topo.n_edges; i++)
    edge_apply(w, &w->topo.edges[i]);
  mw_subject x = {.w = w};
  w->fast.ops_sample = !(fast_of(w, &x, MW_OF_WORLD) & MW_FAST_NO_OPS);
}

/* Read once, when the population's first events are scheduled (model_client.c): its event
 * functions cannot change afterwards, so a row left out (model__features_skip) does not move
 * it. Every population is gated when the fast paths are forced off. */
bool model__pop_is_gated(const model_world *w, const mw_pop *p) {
  mw_subject x = {.w = w, .pop = p};
  return !(fast_of(w, &x, MW_OF_POP) & MW_FAST_UNGATED);
}

size_t model__features_count(void) { return N_FEATURES; }

const char *model__feature_name(size_t i) { return i < N_FEATURES ? features[i].name : NULL; }

void model__features_skip(model_world *w, int row) {
  w->fast.skip = row;
  model__features_apply(w);
}

/* }================================================================== */
