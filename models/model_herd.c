/*
 * model_herd.c: herds. A restart action takes every client of a population, or a fraction of
 * them, down; each comes back at a time spread uniformly over the action's `spread`, makes its
 * initialisation call and serves again once that call succeeds; a failed init restarts it
 * after the action's restart backoff (Kubernetes' CrashLoopBackOff, a custom one, or none).
 * Pauses stop a population's calls. Owns the per-client state of every population some action
 * restarts, pauses or resumes; nothing here exists for the others.
 *
 * What "a client" is: the population's `count` clients, as elsewhere. An open-loop population
 * offers its rate as one Poisson process whose arrivals go to clients drawn uniformly, so a
 * client's share of the traffic is rate / count; a call that falls to a client that is down
 * fails at once, unsent (the users of a restarting process get errors), and counts as offered
 * and as an error in the time series (calls_down in the summary). Closed-loop and scripted
 * clients do the same with their own calls. A paused population makes no calls at all.
 *
 * A rate action multiplies an open-loop population's arrival rate by a factor in (0, 1]: each
 * arrival of its Poisson process (after the rate profile's own thinning) is kept with
 * probability factor, drawn from a stream of its own, so the arrivals from the firing on are
 * a Poisson process of factor x profile(t), and the population's other draws are the same as
 * without the action. A thinned arrival never existed: not offered, not counted.
 */
#include <math.h>
#include <stdio.h>

#include "models/model_ops_int.h"
#include "sim/sim_rng.h"

/* {==================================================================
 * Backoff
 * =================================================================== */

/* Kubernetes' kubelet: a crashed container restarts after 10 s, doubling at each crash in a
 * row up to 5 minutes, and the delay starts again from 10 s once the container has run for
 * 10 minutes (kubernetes.io, "Pod Lifecycle", container restarts). */
static const model_backoff_cfg crashloop = {MODEL_BACKOFF_CRASHLOOP, 10000000000LL, 300000000000LL,
                                            2.0, 0.0, 600000000000LL};

static const model_backoff_cfg *backoff_of(const model_backoff_cfg *b) {
  return b->kind == MODEL_BACKOFF_CRASHLOOP ? &crashloop : b;
}

int64_t model_backoff_delay(const model_backoff_cfg *b, int32_t k, double u) {
  if (b->kind == MODEL_BACKOFF_NONE) return 0;
  b = backoff_of(b);
  double d = (double)b->initial_ns;
  for (int32_t i = 1; i < k && d < (double)b->max_ns; i++)
    d *= b->multiplier;
  if (d > (double)b->max_ns) d = (double)b->max_ns;
  d -= b->jitter * u * d; /* jitter 1: uniform in [0, d) */
  return (int64_t)(d + 0.5);
}

/* }================================================================== */

/* {==================================================================
 * Clients going down and coming back
 * =================================================================== */

static mw_herd *herd_of(model_world *w, const mw_pop *p) { return &w->ops->herds[p->index]; }

int model__herd_gate(model_world *w, const mw_pop *p, const mw_client *cl) {
  if (w->ops == NULL) return 1; /* gated only because the fast paths are off */
  mw_herd *h = herd_of(w, p);
  if (h->p == NULL) return 1;
  if (h->paused) return 0;
  if (h->factor < 1.0 && sim_rng_uniform(h->rng_rate) >= h->factor) return 0;
  if (h->state[cl->index] == MW_HC_UP) return 1;
  h->stats->calls_down++;
  return -1;
}

static void ev_start(sim_kernel *k, void *obj, uint64_t arg);

/* Client i goes down now (from any state) and starts after delay_ns. */
static void client_down(model_world *w, mw_herd *h, int32_t i, int64_t delay_ns) {
  uint8_t was = h->state[i];
  h->state[i] = MW_HC_DOWN;
  if (was == MW_HC_UP) h->n_up--;
  if (h->start[i] != SIM_EVENT_NONE) sim_event_cancel(w->k, h->start[i]);
  /* An init call still in flight is cancelled: the process that made it is gone. Its end
   * comes back to init_done, which sees the client down and ignores it. */
  mw_child *ch = &h->child[i];
  if (was == MW_HC_INIT && ch->call != NULL) model__call_cancel(w, ch);
  ch->call = NULL;
  h->start[i] = sim_event_schedule_in(w->k, delay_ns, ev_start, h, (uint64_t)i);
  if (h->start[i] == SIM_EVENT_NONE) model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

static void client_up(model_world *w, mw_herd *h, int32_t i) {
  h->state[i] = MW_HC_UP;
  h->n_up++;
  h->up_since_ns[i] = sim_now_ns(w->k);
}

/* Client i starts: its init call, or up at once when its restart has none. */
static void ev_start(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  mw_herd *h = obj;
  model_world *w = h->p->w;
  int32_t i = (int32_t)arg;
  h->start[i] = SIM_EVENT_NONE;
  const model_ops_cfg *oc = w->ops->cfg;
  const model_action_cfg *a = &oc->ops[h->action[i]].action;
  if (a->init < 0) {
    client_up(w, h, i);
    return;
  }
  const model_init_cfg *in = &oc->inits[a->init];
  const mw_method *m = &w->ops->inits[a->init];
  mw_edge *e = &w->topo.edges[w->topo.n_edges - w->topo.n_init_edges + (size_t)a->init];
  int64_t now = sim_now_ns(k);
  int64_t timeout = in->deadline_ns != RETRY_NEVER ? in->deadline_ns
                    : m->mc != NULL                ? m->mc->timeout_ns
                                                   : RETRY_NEVER;
  int64_t deadline =
      timeout == RETRY_NEVER || timeout > INT64_MAX - now ? RETRY_NEVER : now + timeout;
  mw_op *op = model__op_new(w);
  if (op == NULL) return;
  mw_client *cl = model__pop_client(h->p, (size_t)i);
  h->state[i] = MW_HC_INIT;
  h->stats->inits++;
  mw_call_args args = {.edge = e,
                       .mc = m->mc,
                       .method = in->method,
                       .stream = RETRY_STREAM_UNARY,
                       .request_bytes = 0,
                       .stream_items = 0,
                       .deadline_ns = deadline,
                       .op = op,
                       .ch = &cl->ch,
                       .target = NULL,
                       .top = false,
                       .criticality = 0,
                       .done_ctx = cl,
                       .slot = in->slot,
                       .child = &h->child[i],
                       .fast = m->fast};
  model__call_start(w, &args);
  model__op_unref(w, op);
}

/* An init call ended. */
static void init_done(model_world *w, const mw_end *e) {
  mw_client *cl = e->done_ctx;
  mw_herd *h = herd_of(w, cl->pop);
  int32_t i = cl->index;
  if (h->state[i] != MW_HC_INIT) return; /* cancelled by a newer restart */
  h->child[i].call = NULL;
  if (e->ok) {
    h->stats->inits_ok++;
    h->fails[i] = 0;
    client_up(w, h, i);
    return;
  }
  h->stats->inits_failed++;
  const model_action_cfg *a = &w->ops->cfg->ops[h->action[i]].action;
  int32_t k = ++h->fails[i];
  double u = a->backoff.jitter > 0 ? sim_rng_uniform(h->rng) : 0.0;
  h->state[i] = MW_HC_DOWN;
  h->start[i] = sim_event_schedule_in(w->k, model_backoff_delay(&a->backoff, k, u), ev_start, h,
                                      (uint64_t)i);
  if (h->start[i] == SIM_EVENT_NONE) model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

/* Restart action op: round(fraction x count) clients, at least one, chosen uniformly without
 * replacement (selection sampling, Knuth's algorithm S, one draw per client considered), each
 * starting at a uniform time in [now, now + spread). A client up for the backoff's reset time
 * starts its backoff afresh. */
void model__herd_restart(model_world *w, size_t op) {
  const model_action_cfg *a = &w->ops->cfg->ops[op].action;
  mw_herd *h = &w->ops->herds[a->pop];
  int64_t n = h->p->cfg->count;
  int64_t want = llround(a->fraction * (double)n);
  if (want < 1) want = 1;
  if (want > n) want = n;
  int64_t now = sim_now_ns(w->k);
  int64_t reset = backoff_of(&a->backoff)->reset_ns;
  for (int64_t i = 0, chosen = 0; i < n && chosen < want; i++) {
    if (want < n && sim_rng_uniform(h->rng) * (double)(n - i) >= (double)(want - chosen))
      continue;
    chosen++;
    if (h->state[i] == MW_HC_UP && (h->up_since_ns[i] == INT64_MIN ||
                                    now - h->up_since_ns[i] >= reset))
      h->fails[i] = 0;
    h->action[i] = (int32_t)op;
    h->stats->restarts++;
    int64_t delay = a->spread_ns > 0 ? (int64_t)(sim_rng_uniform(h->rng) * (double)a->spread_ns) : 0;
    client_down(w, h, (int32_t)i, delay);
  }
}

void model__herd_pause(model_world *w, int pop, bool paused) { w->ops->herds[pop].paused = paused; }

void model__herd_rate(model_world *w, int pop, double factor) {
  w->ops->herds[pop].factor = factor;
}

/* }================================================================== */

/* {==================================================================
 * Building, columns, results
 * =================================================================== */

struct mw_method *model__herd_init_method(model_world *w, const mw_edge *e) {
  return &w->ops->inits[e->init];
}

/* Whether some action of kind rate (rate) or else restarts, pauses or resumes population pop. */
static bool pop_acted(const model_ops_cfg *oc, int pop, bool rate) {
  for (size_t i = 0; i < oc->n_ops; i++) {
    const model_action_cfg *a = &oc->ops[i].action;
    if (a->pop == pop && (rate ? a->kind == MODEL_ACTION_RATE : a->kind <= MODEL_ACTION_RESTART))
      return true;
  }
  return false;
}

static bool pop_herded(const model_ops_cfg *oc, int pop) {
  return pop_acted(oc, pop, false) || pop_acted(oc, pop, true);
}

static int herd_create(model_world *w, mw_herd *h, mw_pop *p, model_herd_stats *st) {
  size_t n = (size_t)p->cfg->count;
  h->p = p;
  h->stats = st;
  st->population = p->cfg->name;
  h->state = model__calloc(w, n, sizeof *h->state);
  h->fails = model__calloc(w, n, sizeof *h->fails);
  h->up_since_ns = model__calloc(w, n, sizeof *h->up_since_ns);
  h->start = model__calloc(w, n, sizeof *h->start);
  h->action = model__calloc(w, n, sizeof *h->action);
  h->child = model__calloc(w, n, sizeof *h->child);
  char entity[96];
  snprintf(entity, sizeof entity, "herd:%s", p->cfg->name);
  h->rng = sim_rng_stream_create(w->seed, entity, "restart", 0);
  h->factor = 1.0;
  if (pop_acted(w->ops->cfg, p->index, true)) {
    h->rng_rate = sim_rng_stream_create(w->seed, entity, "rate", 0);
    if (h->rng_rate == NULL) return -1;
  }
  if (h->state == NULL || h->fails == NULL || h->up_since_ns == NULL || h->start == NULL ||
      h->action == NULL || h->child == NULL || h->rng == NULL)
    return -1;
  for (size_t i = 0; i < n; i++) {
    h->up_since_ns[i] = INT64_MIN;
    h->action[i] = -1;
  }
  h->n_up = (int64_t)n;
  return 0;
}

uint64_t model__ops_estimate_bytes(const model_config *cfg) {
  const model_ops_cfg *oc = cfg->ops;
  uint64_t b = sizeof(struct mw_ops) + oc->n_ops * (sizeof(mw_opstate) + sizeof(model_operator_stats)) +
               oc->n_inits * sizeof(mw_method) +
               cfg->n_clients * (sizeof(mw_herd) + sizeof(model_herd_stats));
  size_t per_client = sizeof(uint8_t) + sizeof(int32_t) + sizeof(int64_t) +
                      sizeof(sim_event_handle) + sizeof(int32_t) + sizeof(mw_child);
  for (size_t p = 0; p < cfg->n_clients; p++)
    if (pop_herded(oc, (int)p)) b += (uint64_t)cfg->clients[p].count * per_client + 2048;
  return b;
}

int model__herds_create(model_world *w) {
  struct mw_ops *o = w->ops;
  const model_ops_cfg *oc = o->cfg;
  o->herds = model__calloc(w, w->topo.n_pops, sizeof *o->herds);
  o->inits = model__calloc(w, oc->n_inits, sizeof *o->inits);
  o->herd_stats = model__calloc(w, w->topo.n_pops, sizeof *o->herd_stats);
  if (o->herds == NULL || o->inits == NULL || o->herd_stats == NULL) return -1;
  for (size_t i = 0; i < oc->n_inits; i++) {
    const model_init_cfg *in = &oc->inits[i];
    o->inits[i].mc = in->policy != NULL ? retry_config_lookup(in->policy, in->method) : NULL;
  }
  for (size_t p = 0; p < w->topo.n_pops; p++) {
    if (!pop_herded(oc, (int)p)) continue;
    if (herd_create(w, &o->herds[p], &w->topo.pops[p], &o->herd_stats[o->n_herds++]) < 0)
      return -1;
  }
  return 0;
}

void model__herds_wire(model_world *w) {
  for (size_t i = 0; i < w->topo.n_init_edges; i++) {
    mw_edge *e = &w->topo.edges[w->topo.n_edges - w->topo.n_init_edges + i];
    e->on_done = init_done;
  }
}

void model__herds_destroy(model_world *w) {
  struct mw_ops *o = w->ops;
  for (size_t p = 0; o->herds != NULL && p < w->topo.n_pops; p++) {
    mw_herd *h = &o->herds[p];
    model__free(w, h->state);
    model__free(w, h->fails);
    model__free(w, h->up_since_ns);
    model__free(w, h->start);
    model__free(w, h->action);
    model__free(w, h->child);
    if (h->rng != NULL) gsl_rng_free(h->rng);
    if (h->rng_rate != NULL) gsl_rng_free(h->rng_rate);
  }
  model__free(w, o->herds);
  model__free(w, o->inits);
  model__free(w, o->herd_stats);
}

int model__herds_columns(model_world *w, int (*column)(model_world *, const char *, const char *,
                                                       bool)) {
  for (size_t p = 0; p < w->topo.n_pops; p++) {
    mw_herd *h = &w->ops->herds[p];
    if (h->p != NULL && (h->col_up = column(w, h->p->cfg->name, "clients_up", false)) < 0)
      return -1;
  }
  return 0;
}

void model__herds_sample(model_world *w, double *row) {
  for (size_t p = 0; p < w->topo.n_pops; p++) {
    const mw_herd *h = &w->ops->herds[p];
    if (h->p != NULL) row[h->col_up] = (double)h->n_up;
  }
}

void model__herds_report(model_world *w) {
  for (size_t p = 0; p < w->topo.n_pops; p++) {
    mw_herd *h = &w->ops->herds[p];
    if (h->p != NULL) h->stats->clients_up = h->n_up;
  }
  w->res.herds = w->ops->herd_stats;
  w->res.n_herds = w->ops->n_herds;
}

/* }================================================================== */
