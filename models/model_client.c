/*
 * model_client.c: client populations. Each client of a population has its own channel state
 * toward the target (throttle, budget, breaker) and its own random streams, keyed by the
 * population's name and the client's index, so adding a population leaves the others' draws
 * alone. Arrivals are open loop (Poisson following a rate profile, by thinning), closed loop
 * (think, call, wait) or scripted (fixed times).
 */
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_dist.h"
#include "models/model_int.h"
#include "sim/sim_rng.h"

/* {==================================================================
 * Starting top-level calls
 * =================================================================== */

/* Picks a method by weight, with one uniform draw (none for a single method, so adding a
 * method list of one does not shift the stream). */
static inline int32_t pick_method(const mw_pop *p, gsl_rng *r) {
  size_t n = p->cfg->n_methods;
  if (n == 1) return 0;
  double u = sim_rng_uniform(r) * p->cum_weight[n - 1];
  for (size_t i = 0; i < n; i++)
    if (u < p->cum_weight[i]) return (int32_t)i;
  return (int32_t)(n - 1);
}

/* The call's deadline after its start: the method's, else the client's, else the methodConfig
 * timeout of its policy, else none. */
static int64_t call_timeout(const model_method_cfg *m, const model_client_cfg *cfg,
                            const retry_method_config *mc) {
  if (m->deadline_ns != RETRY_NEVER) return m->deadline_ns;
  if (cfg->deadline_ns != RETRY_NEVER) return cfg->deadline_ns;
  return mc != NULL ? mc->timeout_ns : RETRY_NEVER;
}

/* Starts one top-level call of client cl for method j, on operation op (a new one when NULL).
 * A closed-loop client that may retry by hand keeps a reference to the operation in
 * cl->user_op, set before the call starts: a call refused locally ends inside
 * model__call_start, and model__client_call_done must already see the operation then. */
void model__client_call_done(model_world *w, const mw_end *e);

static MODEL_HOT void client_call(model_world *w, mw_client *cl, int32_t j, mw_op *op) {
  mw_pop *p = cl->pop;
  const model_method_cfg *m = &p->cfg->methods[j];
  const retry_method_config *mc = p->mcfg[j].mc;
  int64_t now = sim_now_ns(w->k);
  int64_t timeout = call_timeout(m, p->cfg, mc);
  int64_t deadline =
      timeout == RETRY_NEVER || timeout > INT64_MAX - now ? RETRY_NEVER : now + timeout;
  if (op == NULL && (op = model__op_new(w)) == NULL) return;
  bool keep = p->cfg->loop == MODEL_LOOP_CLOSED && p->cfg->user_retries > 0;
  if (keep) {
    cl->user_op = op; /* the client's reference: new, or the one it already held */
    cl->user_method = j;
  }
  if (now >= w->cfg->warmup_ns) { /* the call's own test (model__call_start) agrees */
    w->res.calls_started++;
    w->run.top_measured++;
  }
  model__ts_add(w, w->ts.col_offered, 1.0);
  if (++w->run.top_in_flight > w->run.top_peak) w->run.top_peak = w->run.top_in_flight;
  mw_call_args a = {.edge = p->edge,
                    .mc = mc,
                    .method = m->name,
                    .stream = m->stream,
                    .request_bytes = m->request_bytes,
                    .stream_items = m->stream_items,
                    .deadline_ns = deadline,
                    .op = op,
                    .ch = &cl->ch,
                    .target = model__channel_target(&cl->ch, 0),
                    .top = true,
                    .criticality = 0,
                    .done_ctx = cl,
                    .slot = j,
                    .child = NULL,
                    .fast = p->mcfg[j].fast};
  model__call_start(w, &a);
  if (!keep) model__op_unref(w, op); /* the call holds its own reference */
}

/* Returns whether a client may still start calls at now: inside its own [start, stop) and
 * before the scenario's duration, after which only calls in flight go on (the drain). */
static bool may_start(const model_world *w, const model_client_cfg *cfg, int64_t now) {
  int64_t stop = cfg->stop_ns == RETRY_NEVER ? w->cfg->duration_ns : cfg->stop_ns;
  return now >= cfg->start_ns && now < stop && now < w->cfg->duration_ns;
}

/* }================================================================== */

/* {==================================================================
 * Arrival processes
 * =================================================================== */

/* Open loop: one Poisson process for the whole population (the superposition of its clients'
 * processes), each arrival going to a client drawn uniformly. Candidates come at the profile's
 * largest rate and each is kept with probability rate(t) / largest (thinning, Lewis and
 * Shedler), so any profile is followed exactly. One pending event per population instead of
 * one per client keeps the event set small with 1e5 clients. */
/* A fleet larger than the caches: the next arrival's client is read from memory, a few
 * hundred nanoseconds a call at random out of hundreds of megabytes. Its index is what the
 * next ev_open will draw (the thinning uniform first when the rate is under the bound then),
 * worked out on a copy of the stream, so its lines can be fetched while the events between
 * now and then run. Nothing drawn changes. */
static void prefetch_next_client(const mw_pop *p, int64_t next_ns) {
  int skip = sim_profile_rate(&p->cfg->rate, next_ns) >= p->max_rate ? 0 : 1;
  unsigned long n = (unsigned long)p->cfg->count;
  unsigned long i = sim_rng_peek_uniform_int(p->rng_open, skip, n);
  if (i >= n) return;
  const char *c = (const char *)model__pop_client(p, i);
  for (size_t off = 0; off < p->client_stride && off < 4 * 64; off += 64)
    __builtin_prefetch(c + off, 1, 3);
}

/* The rate of p's profile at t: a profile of one point is that point's rate at every time. */
static inline double pop_rate(const mw_pop *p, int64_t t_ns) {
  const sim_rate_profile *r = &p->cfg->rate;
  return r->n_points == 1 ? r->rate[0] : sim_profile_rate(r, t_ns);
}

/* A gated population's client may be paused or down (model_herd.c): asked before every
 * call it would make. Paused, it makes none (the call is not offered); down (restarting), its
 * call fails at once without being sent: counted as offered and as an error in the time
 * series, since the users behind a restarting process see their requests fail. Returns
 * whether the call goes ahead. Only the gated event functions below call it, so a population
 * without herds or pauses runs exactly the code it ran before they existed. */
static MODEL_COLD bool gate_pass(model_world *w, mw_client *cl) {
  int g = model__herd_gate(w, cl->pop, cl);
  if (g > 0) return true;
  if (g < 0) {
    model__ts_add(w, w->ts.col_offered, 1.0);
    model__ts_add(w, w->ts.col_errors, 1.0);
  }
  return false;
}

/* One step of a population's open-loop process; self is the event function it reschedules
 * (ev_open, or ev_open_gated for a gated population: gated is a constant in each, so the
 * ungated one has no test of it). */
static MODEL_HOT void open_step(sim_kernel *k, mw_pop *p, sim_event_fn self, bool gated) {
  model_world *w = p->w;
  int64_t now = sim_now_ns(k);
  if (!may_start(w, p->cfg, now)) return;
  double rate = pop_rate(p, now);
  if (rate >= p->max_rate || sim_rng_uniform(p->rng_open) * p->max_rate < rate) {
    int32_t n = p->cfg->count;
    int32_t i = n > 1 ? (int32_t)sim_rng_uniform_int(p->rng_open, (unsigned long)n) : 0;
    mw_client *cl = model__pop_client(p, (size_t)i);
    int32_t j = pick_method(p, p->rng_open);
    if (!gated || gate_pass(w, cl)) client_call(w, cl, j, NULL);
  }
  double gap_ns = sim_rng_exponential(p->rng_open, 1e9 / p->max_rate);
  if (gap_ns >= (double)(INT64_MAX / 4)) return;
  if (sim_event_schedule_in(k, (int64_t)(gap_ns + 0.5), self, p, 0) == SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
  if (p->prefetch) prefetch_next_client(p, now + (int64_t)(gap_ns + 0.5));
}

static void ev_open(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  open_step(k, obj, ev_open, false);
}

static void ev_open_gated(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  open_step(k, obj, ev_open_gated, true);
}

/* Closed loop: the client's next call, or the user's retry of the operation that failed. A
 * gated client that may not call thinks again (a paused client polls its population's state
 * once a think time; a down one's call failed at once) and drops its user's retry. */
static void closed_think(model_world *w, mw_client *cl, bool gated);

static MODEL_HOT void closed_step(sim_kernel *k, mw_client *cl, bool gated) {
  model_world *w = cl->w;
  if (!may_start(w, cl->pop->cfg, sim_now_ns(k))) {
    model__op_unref(w, cl->user_op);
    cl->user_op = NULL;
    return;
  }
  if (gated && !gate_pass(w, cl)) {
    model__op_unref(w, cl->user_op);
    cl->user_op = NULL;
    closed_think(w, cl, true);
    return;
  }
  if (cl->user_op != NULL) { /* a user-level retry of the same operation */
    cl->user_tries++;
    client_call(w, cl, cl->user_method, cl->user_op);
    return;
  }
  cl->user_tries = 0;
  client_call(w, cl, pick_method(cl->pop, sim_rng_gsl(&cl->rng_arrival)), NULL);
}

static void ev_closed(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  closed_step(k, obj, false);
}

static void ev_closed_gated(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  closed_step(k, obj, true);
}

static void closed_think(model_world *w, mw_client *cl, bool gated) {
  int64_t pause = sim_dist_sample(&cl->pop->cfg->think, sim_rng_gsl(&cl->rng_arrival));
  if (sim_event_schedule_in(w->k, pause, gated ? ev_closed_gated : ev_closed, cl, 0) ==
      SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

/* Scripted calls: at each listed time every client of the population makes one call; this
 * is how the deterministic tables of the source articles are written. */
static MODEL_HOT void script_step(sim_kernel *k, mw_client *cl, sim_event_fn self, bool gated) {
  model_world *w = cl->w;
  const model_client_cfg *cfg = cl->pop->cfg;
  if (may_start(w, cfg, sim_now_ns(k))) {
    int32_t j = pick_method(cl->pop, sim_rng_gsl(&cl->rng_arrival));
    if (!gated || gate_pass(w, cl)) client_call(w, cl, j, NULL);
  }
  if (++cl->script_next < cfg->n_script &&
      sim_event_schedule(k, cfg->script_ns[cl->script_next], self, cl, 0) == SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

static void ev_script(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  script_step(k, obj, ev_script, false);
}

static void ev_script_gated(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  script_step(k, obj, ev_script_gated, true);
}

/* A top-level call ended: everything the summary reports per call is recorded here, once.
 * Goodput counts only OK calls that ended at or before their deadline (a call that waits
 * past it for a reply is not good). When the scenario's duration has passed and nothing is
 * left in flight, the run ends. */
void model__client_call_done(model_world *w, const mw_end *c) {
  mw_client *cl = c->done_ctx;
  mw_pop *p = cl->pop;
  model_results *res = &w->res;
  int64_t now = sim_now_ns(w->k);
  bool ok = c->ok;
  w->run.top_in_flight--;
  int64_t latency = now - c->start_ns;
  model__ts_latency(w, latency, ok);
  bool good = ok && (c->deadline_ns == RETRY_NEVER || now <= c->deadline_ns);
  /* A call started before the warmup counts in the time series only. */
  if (c->measured) {
    w->run.top_measured--;
    /* The calls ok and failed, their statuses, stop reasons, retries, hedges and latencies:
     * the populations' edges' own (call_report), added up when the run ends (world_finish) */
    res->stream_items += c->stream_items;
    res->stream_duplicates += c->stream_duplicates;
    if (good) res->calls_ok_in_deadline++;
  }
  if (good) {
    model__ts_add(w, w->ts.col_goodput, 1.0);
  } else if (!ok) {
    model__ts_add(w, w->ts.col_errors, 1.0);
  }
  if (p->cfg->loop == MODEL_LOOP_CLOSED) {
    const model_client_cfg *cfg = p->cfg;
    bool retry = !ok && cl->user_op != NULL && cl->user_tries < cfg->user_retries;
    if (!retry) {
      model__op_unref(w, cl->user_op);
      cl->user_op = NULL;
    }
    int64_t pause = sim_dist_sample(retry ? &cfg->user_retry_delay : &cfg->think,
                                    sim_rng_gsl(&cl->rng_arrival));
    /* a gated population's clients keep to its gated events (p->gated: closed loop only) */
    if (sim_event_schedule_in(w->k, pause, p->gated ? ev_closed_gated : ev_closed, cl, 0) ==
        SIM_EVENT_NONE)
      model__fail(w, RETRY_ENOMEM, "out of memory for events");
  }
  if (w->run.top_in_flight == 0 && now >= w->cfg->duration_ns) sim_kernel_stop(w->k);
}


/* }================================================================== */

/* {==================================================================
 * Creation
 * =================================================================== */

/* Creates the clients of population p and schedules their first arrivals. Each client's
 * streams are keyed by the population's name and the client's index, so a population of 200
 * has the same first 100 clients as one of 100. Closed-loop clients start after one think
 * time, so that they do not all call at t = 0. */
static int pop_create(model_world *w, mw_pop *p) {
  const model_client_cfg *cfg = p->cfg;
  char entity[96];
  snprintf(entity, sizeof entity, "client:%s", cfg->name);
  p->mcfg = model__calloc(w, cfg->n_methods, sizeof *p->mcfg);
  p->cum_weight = model__calloc(w, cfg->n_methods, sizeof *p->cum_weight);
  size_t block = model__channel_bytes(&p->edge, 1);
  p->client_stride = (sizeof(mw_client) + block + 7) / 8 * 8;
  p->clients = model__calloc(w, (size_t)cfg->count, p->client_stride);
  /* past 8 MiB of clients (far more than a core's caches) the next one is fetched ahead */
  p->prefetch = cfg->count > 1 && (size_t)cfg->count * p->client_stride > ((size_t)8 << 20);
  if (p->mcfg == NULL || p->cum_weight == NULL || p->clients == NULL) return -1;
  double total = 0;
  for (size_t j = 0; j < cfg->n_methods; j++) {
    p->mcfg[j].mc =
        cfg->policy != NULL ? retry_config_lookup(cfg->policy, cfg->methods[j].name) : NULL;
    total += cfg->methods[j].weight;
    p->cum_weight[j] = total;
  }
  p->w = w;
  for (int32_t i = 0; i < cfg->count; i++) {
    mw_client *cl = model__pop_client(p, (size_t)i);
    cl->w = w;
    cl->pop = p;
    cl->index = i;
    sim_rng_init(&cl->rng_arrival, w->seed, entity, "arrivals", (uint64_t)i);
    if (model__channel_open(w, &cl->ch, entity, (uint64_t)i, &p->edge, 1,
                            block > 0 ? (char *)cl + sizeof(mw_client) : NULL) < 0)
      return -1;
    sim_event_handle h = SIM_EVENT_NONE;
    switch (cfg->loop) {
      case MODEL_LOOP_OPEN: continue; /* one process for the population, below */
      case MODEL_LOOP_CLOSED:
        h = sim_event_schedule(
            w->k, cfg->start_ns + sim_dist_sample(&cfg->think, sim_rng_gsl(&cl->rng_arrival)),
            p->gated ? ev_closed_gated : ev_closed, cl, 0);
        break;
      case MODEL_LOOP_SCRIPT:
        if (cfg->n_script == 0) continue;
        h = sim_event_schedule(w->k, cfg->script_ns[0], p->gated ? ev_script_gated : ev_script,
                               cl, 0);
        break;
    }
    if (h == SIM_EVENT_NONE) return -1;
  }
  if (cfg->loop == MODEL_LOOP_OPEN) {
    p->max_rate = sim_profile_max_rate(&cfg->rate);
    p->rng_open = sim_rng_stream_create(w->seed, entity, "open-arrivals", 0);
    if (p->rng_open == NULL) return -1;
    if (p->max_rate > 0) {
      double gap_ns = sim_rng_exponential(p->rng_open, 1e9 / p->max_rate);
      if (gap_ns < (double)(INT64_MAX / 4) &&
          sim_event_schedule(w->k, cfg->start_ns + (int64_t)(gap_ns + 0.5),
                             p->gated ? ev_open_gated : ev_open, p, 0) ==
              SIM_EVENT_NONE)
        return -1;
    }
  }
  return 0;
}

int model__pops_create(model_world *w) {
  for (size_t i = 0; i < w->topo.n_pops; i++) {
    mw_pop *p = &w->topo.pops[i];
    p->gated = model__pop_is_gated(w, p); /* model_feature.c */
    /* A population with its own on_failure hears of its calls' ends first through its error
     * path (model_client_fallback.c), so that the others' ends pay nothing for it. */
    p->edge->on_done =
        p->cfg->on_failure != NULL ? model__client_fallback_call_done : model__client_call_done;
    if (pop_create(w, &w->topo.pops[i]) < 0) return -1;
  }
  return 0;
}

void model__pops_destroy(model_world *w) {
  if (w->topo.pops == NULL) return;
  for (size_t i = 0; i < w->topo.n_pops; i++) {
    mw_pop *p = &w->topo.pops[i];
    if (p->clients != NULL) {
      for (int32_t c = 0; c < p->cfg->count; c++) {
        mw_client *cl = model__pop_client(p, (size_t)c);
        model__channel_close(w, &cl->ch);
      }
    }
    if (p->rng_open) gsl_rng_free(p->rng_open);
    model__free(w, p->clients);
    model__free(w, p->mcfg);
    model__free(w, p->cum_weight);
  }
}

/* }================================================================== */
