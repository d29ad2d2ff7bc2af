/*
 * model_operator.c: operators. A rule watches one column of the time series and fires its
 * action when the column has been above (or below) a value for a while; an event fires its
 * action at a fixed time. Rules are read at each bucket's end, inside the simulation (the
 * sampler's event, after the row is complete), so a run is as deterministic as without them.
 * Owns the world's w->ops (with the herds of model_herd.c) and the record of every firing.
 *
 * A rule fires once per crossing: when its condition has held for `for` (counted in whole
 * buckets: the start of the first true bucket to the end of the current one), it fires and
 * is disarmed; a bucket in which the condition is false re-arms it (and restarts the count).
 * With `once` it never re-arms. A value that is missing (NaN: no call ended in the bucket, for
 * a latency) counts as the condition not holding.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_ctl.h"
#include "models/model_ops_int.h"

/* {==================================================================
 * Config helpers (model_ops.h)
 * =================================================================== */

const char *model_action_name(model_action_kind k) {
  static const char *const names[] = {"pause",    "resume", "restart", "flush", "capacity",
                                      "replicas", "shed",   "policy",  "rate"};
  return (size_t)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

void model_ops_cfg_destroy(model_ops_cfg *c) {
  if (c == NULL) return;
  for (size_t i = 0; i < c->n_ops; i++) {
    free(c->ops[i].name);
    free(c->ops[i].when.column);
    retry_config_destroy(c->ops[i].action.policy);
  }
  free(c->ops);
  for (size_t i = 0; i < c->n_inits; i++) {
    free(c->inits[i].method);
    retry_config_destroy(c->inits[i].policy);
  }
  free(c->inits);
  free(c);
}

/* }================================================================== */

/* {==================================================================
 * Firing
 * =================================================================== */

/* Notes that op fired now; the list grows by doubling (from the kernel's allocator). */
static void record(model_world *w, size_t op) {
  struct mw_ops *o = w->ops;
  model_operator_stats *st = &o->stats[op];
  mw_opstate *s = &o->st[op];
  if (st->n_fired == s->cap_fired) {
    int64_t cap = s->cap_fired > 0 ? 2 * s->cap_fired : 8;
    int64_t *at = model__calloc(w, (size_t)cap, sizeof *at);
    if (at == NULL) {
      model__fail(w, RETRY_ENOMEM, "out of memory for the operators' record");
      return;
    }
    if (st->n_fired > 0) memcpy(at, st->fired_at_ns, (size_t)st->n_fired * sizeof *at);
    model__free(w, st->fired_at_ns);
    st->fired_at_ns = at;
    s->cap_fired = cap;
  }
  st->fired_at_ns[st->n_fired++] = sim_now_ns(w->k);
}

/* A shed action: the service's inert refuse fault (service_configs) holds from now on with
 * the action's fraction and status, or goes inert again for a fraction of 0. The fault's draw
 * is the replica's fault stream, as any refuse fault's. */
static void shed_set(model_world *w, const model_action_cfg *a) {
  struct mw_ops *o = w->ops;
  model_fault_cfg *f = &o->svc_cfgs[a->service]->faults[o->shed_fault[a->service]];
  if (a->fraction <= 0) {
    f->start_ns = RETRY_NEVER;
    return;
  }
  f->start_ns = sim_now_ns(w->k);
  f->rate = a->fraction;
  f->status = a->status;
}

/* Each method entry of a policy action's edge (a population's methods, or the calls of a
 * service's handler to the callee), with the method it names: fn(w, entry, method, arg). */
static void policy_entries(model_world *w, const model_action_cfg *a,
                           void (*fn)(mw_method *, const char *, const retry_config *),
                           const retry_config *arg) {
  if (a->pop >= 0) {
    mw_pop *p = &w->topo.pops[a->pop];
    for (size_t j = 0; j < p->cfg->n_methods; j++)
      fn(&p->mcfg[j], p->cfg->methods[j].name, arg);
    return;
  }
  mw_service *s = &w->topo.services[a->service];
  for (size_t j = 0; j < s->cfg->n_calls; j++)
    if (s->cfg->calls[j].service == a->callee)
      fn(&s->call_mcfg[j], s->cfg->calls[j].method, arg);
}

/* A call started from now on reads the new policy's method config; a call in flight keeps the
 * one it started with (its engine holds a pointer into the old config, which the config
 * owns to the end). The channel's state stays as it is. */
static void policy_take(mw_method *m, const char *method, const retry_config *pol) {
  m->mc = retry_config_lookup(pol, method);
}

static void ev_policy_lands(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  model_world *w = obj;
  const model_action_cfg *a = &w->ops->cfg->ops[arg].action;
  policy_entries(w, a, policy_take, a->policy);
}

void model__ops_fire(model_world *w, size_t op) {
  const model_action_cfg *a = &w->ops->cfg->ops[op].action;
  record(w, op);
  switch (a->kind) {
    case MODEL_ACTION_PAUSE: model__herd_pause(w, a->pop, true); break;
    case MODEL_ACTION_RESUME: model__herd_pause(w, a->pop, false); break;
    case MODEL_ACTION_RESTART: model__herd_restart(w, op); break;
    case MODEL_ACTION_FLUSH: model__cache_flush_now(w, a->service, a->fraction); break;
    case MODEL_ACTION_CAPACITY: model__service_set_workers(w, a->service, a->workers); break;
    case MODEL_ACTION_REPLICAS:
      model_world_set_replicas_delay(w, a->service, a->replicas, a->startup_delay_ns,
                                     sim_now_ns(w->k));
      break;
    case MODEL_ACTION_SHED: shed_set(w, a); break;
    case MODEL_ACTION_RATE: model__herd_rate(w, a->pop, a->fraction); break;
    case MODEL_ACTION_POLICY:
      if (sim_event_schedule_in(w->k, a->delay_ns, ev_policy_lands, w, (uint64_t)op) ==
          SIM_EVENT_NONE)
        model__fail(w, RETRY_ENOMEM, "out of memory for events");
      break;
  }
}

static void ev_event(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  model__ops_fire(obj, (size_t)arg);
}

/* Rule i at the end of bucket b, whose row is complete. */
static void rule_step(model_world *w, size_t i, int64_t b, const double *row) {
  struct mw_ops *o = w->ops;
  const model_operator_cfg *r = &o->cfg->ops[i];
  mw_opstate *s = &o->st[i];
  int64_t bucket = w->cfg->bucket_ns;
  double v = row[s->col];
  if (s->rate) v /= (double)bucket / 1e9;
  bool holds = b * bucket >= r->when.after_ns && !isnan(v) &&
               (r->when.above ? v > r->when.value : v < r->when.value);
  if (!holds) {
    s->streak_ns = -1;
    s->armed = !r->once || o->stats[i].n_fired == 0;
    return;
  }
  if (s->streak_ns < 0) s->streak_ns = b * bucket;
  if (s->armed && (b + 1) * bucket - s->streak_ns >= r->when.for_ns) {
    s->armed = false;
    model__ops_fire(w, i);
  }
}

void model__ops_sample(model_world *w, int64_t b, double *row) {
  struct mw_ops *o = w->ops;
  if (o == NULL) return; /* sampled only because the fast paths are off */
  if (o->n_herds > 0) model__herds_sample(w, row);
  /* The run's last, partial buckets are sampled when it is over (world_finish): no rule acts
   * then. */
  if (sim_now_ns(w->k) != (b + 1) * w->cfg->bucket_ns) return;
  for (size_t i = 0; i < o->cfg->n_rules; i++)
    rule_step(w, i, b, row);
}

/* }================================================================== */

/* {==================================================================
 * Building
 * =================================================================== */

/* A service some capacity action sets counts its workers on the capacity fault's slow path
 * (model__service_set_workers), and a service some shed action names refuses on the refuse
 * fault's: it runs on a copy of its config with one more fault of each kind it needs, never
 * active (it starts at the end of time) until an action says so, so that every other service
 * keeps its fast test. Before the services are built (they size their fault counters and
 * fault kinds from the config they run on); after the replica control's copy
 * (model__ctl_prepare), which this copy keeps. */
static bool needs_fault(const model_ops_cfg *oc, int svc, model_action_kind kind) {
  for (size_t i = 0; i < oc->n_ops; i++)
    if (oc->ops[i].action.kind == kind && oc->ops[i].action.service == svc) return true;
  return false;
}

static int service_copy(model_world *w, int svc, bool capacity, bool shed) {
  struct mw_ops *o = w->ops;
  const model_service_cfg *sc = w->topo.services[svc].cfg;
  size_t n = sc->n_faults + (capacity ? 1 : 0) + (shed ? 1 : 0);
  model_service_cfg *copy = model__calloc(w, 1, sizeof *copy);
  model_fault_cfg *f = model__calloc(w, n, sizeof *f);
  if (copy == NULL || f == NULL) {
    model__free(w, copy);
    model__free(w, f);
    return -1;
  }
  *copy = *sc;
  if (sc->n_faults > 0) memcpy(f, sc->faults, sc->n_faults * sizeof *f);
  size_t k = sc->n_faults;
  if (capacity)
    f[k++] = (model_fault_cfg){.kind = MODEL_FAULT_CAPACITY,
                               .start_ns = RETRY_NEVER,
                               .end_ns = RETRY_NEVER,
                               .replica_mask = UINT64_MAX,
                               .workers = INT32_MAX};
  if (shed) {
    o->shed_fault[svc] = (int32_t)k;
    f[k++] = (model_fault_cfg){.kind = MODEL_FAULT_REFUSE,
                               .start_ns = RETRY_NEVER,
                               .end_ns = RETRY_NEVER,
                               .replica_mask = UINT64_MAX,
                               .rate = 1.0};
  }
  copy->faults = f;
  copy->n_faults = n;
  o->svc_cfgs[svc] = copy;
  o->svc_prev[svc] = sc;
  w->topo.services[svc].cfg = copy;
  return 0;
}

static int service_configs(model_world *w) {
  struct mw_ops *o = w->ops;
  size_t n = w->topo.n_services;
  o->svc_cfgs = model__calloc(w, n, sizeof *o->svc_cfgs);
  o->svc_prev = model__calloc(w, n, sizeof *o->svc_prev);
  o->shed_fault = model__calloc(w, n, sizeof *o->shed_fault);
  if (o->svc_cfgs == NULL || o->svc_prev == NULL || o->shed_fault == NULL) return -1;
  for (size_t i = 0; i < n; i++) {
    o->shed_fault[i] = -1;
    bool capacity = needs_fault(o->cfg, (int)i, MODEL_ACTION_CAPACITY);
    bool shed = needs_fault(o->cfg, (int)i, MODEL_ACTION_SHED);
    if ((capacity || shed) && service_copy(w, (int)i, capacity, shed) < 0) return -1;
  }
  return 0;
}

int model__ops_columns(model_world *w, int (*column)(model_world *, const char *, const char *,
                                                     bool)) {
  const model_ops_cfg *oc = w->cfg->ops;
  w->ops = model__calloc(w, 1, sizeof *w->ops);
  if (w->ops == NULL) return -1;
  struct mw_ops *o = w->ops;
  o->cfg = oc;
  o->st = model__calloc(w, oc->n_ops, sizeof *o->st);
  o->stats = model__calloc(w, oc->n_ops, sizeof *o->stats);
  if (o->st == NULL || o->stats == NULL || service_configs(w) < 0 || model__herds_create(w) < 0)
    return -1;
  for (size_t i = 0; i < oc->n_ops; i++) {
    o->stats[i].name = oc->ops[i].name;
    o->stats[i].action = model_action_name(oc->ops[i].action.kind);
    o->stats[i].rule = oc->ops[i].has_when;
    o->st[i].col = -1;
    o->st[i].armed = true;
    o->st[i].streak_ns = -1;
  }
  return model__herds_columns(w, column);
}

/* The column named name, -1 when there is none. */
static int column_find(const model_world *w, const char *name) {
  size_t n = sim_series_n_columns(w->ts.series);
  char(*names)[SIM_SERIES_NAME_MAX] = sim_series_names(w->ts.series);
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return (int)i;
  return -1;
}

int model__ops_create(model_world *w) {
  struct mw_ops *o = w->ops;
  model__herds_wire(w);
  for (size_t i = 0; i < o->cfg->n_ops; i++) {
    const model_operator_cfg *r = &o->cfg->ops[i];
    if (r->has_when) {
      o->st[i].col = column_find(w, r->when.column);
      if (o->st[i].col < 0) {
        /* The loader checks the names (expt_scenario_ops.c); a config built by hand may not. */
        retry_error_set(w->run.err, RETRY_EINVAL, NULL, NULL, -1, -1,
                        "operator \"%s\": no time-series column \"%s\"", r->name, r->when.column);
        return -1;
      }
      o->st[i].rate = sim_series_column_is_rate(w->ts.series, (size_t)o->st[i].col);
    } else if (r->at_ns < w->run.end_ns &&
               sim_event_schedule(w->k, r->at_ns, ev_event, w, (uint64_t)i) == SIM_EVENT_NONE) {
      return -1;
    }
  }
  return 0;
}

void model__ops_destroy(model_world *w) {
  struct mw_ops *o = w->ops;
  if (o == NULL) return;
  model__herds_destroy(w);
  for (size_t i = 0; o->stats != NULL && i < o->cfg->n_ops; i++)
    model__free(w, o->stats[i].fired_at_ns);
  model__free(w, o->stats);
  model__free(w, o->st);
  for (size_t i = 0; o->svc_cfgs != NULL && i < w->topo.n_services; i++) {
    if (o->svc_cfgs[i] == NULL) continue;
    if (w->topo.services != NULL) w->topo.services[i].cfg = o->svc_prev[i];
    model__free(w, o->svc_cfgs[i]->faults);
    model__free(w, o->svc_cfgs[i]);
  }
  model__free(w, o->svc_cfgs);
  model__free(w, o->svc_prev);
  model__free(w, o->shed_fault);
  model__free(w, o);
  w->ops = NULL;
}

void model__ops_report(model_world *w) {
  model__herds_report(w);
  w->res.operators = w->ops->stats;
  w->res.n_operators = w->ops->cfg->n_ops;
}

/* }================================================================== */
