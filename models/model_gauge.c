/*
 * model_gauge.c: the time series' figures of the edges' shared state (throttle tokens, retry
 * budgets, breakers, adaptive throttling, the client-side limiters), summed over each edge's
 * holders (its clients, or its calling service's replicas). Live gauges are kept up to date
 * around every engine call (model__gauge_read/_add, inline in model_int.h, model_call.c);
 * lazy gauges, for the parts whose windows expire with time (a Finagle budget, adaptive
 * throttling), read again at each sample only the holders called since the last one or whose
 * windows expired, which their own heap orders. Invariant: every kept sum equals a walk over
 * the holders at the last sample (model__gauges_check, asserted in the sanitizer builds).
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "models/model_int.h"

/* {==================================================================
 * Reading the holders
 * =================================================================== */

/* Reads the shared state of edge e at now: every holder's target (a client's target 0, or a
 * replica's target for the edge's slot), their mean, least and largest values. One walk over
 * the holders, whatever the number of mechanisms. */
void model__edge_state_read(const model_world *w, const mw_edge *e, int64_t now,
                            model_edge_state *st) {
  memset(st, 0, sizeof *st);
  if (!e->has_target) return;
  const retry_target_config *tc = retry_config_target(e->policy);
  st->has_throttle = tc->has_throttle;
  st->has_budget = tc->budget != RETRY_BUDGET_NONE;
  st->has_adaptive = tc->has_adaptive;
  st->has_breaker = tc->has_breaker;
  int64_t n =
      e->pop >= 0 ? w->topo.pops[e->pop].cfg->count : w->topo.services[e->svc].cfg->replicas;
  double tokens = 0, budget = 0, reject = 0;
  for (int64_t i = 0; i < n; i++) {
    const mw_channel *ch = e->pop >= 0 ? &model__pop_client(&w->topo.pops[e->pop], (size_t)i)->ch
                                       : &w->topo.services[e->svc].replicas[i].ch;
    retry_target_stats ts;
    retry_target_stats_get(model__channel_target(ch, e->pop >= 0 ? 0 : e->slot), now, &ts);
    double t = (double)ts.throttle_milli_tokens / 1000.0, b = (double)ts.budget_available;
    double p = ts.adaptive_reject_p;
    tokens += t;
    budget += b;
    reject += p;
    if (i == 0 || t < st->tokens_min) st->tokens_min = t;
    if (i == 0 || t > st->tokens_max) st->tokens_max = t;
    if (i == 0 || b < st->budget_min) st->budget_min = b;
    if (i == 0 || b > st->budget_max) st->budget_max = b;
    if (i == 0 || p < st->reject_p_min) st->reject_p_min = p;
    if (i == 0 || p > st->reject_p_max) st->reject_p_max = p;
    st->breaker_closed += ts.breaker == RETRY_BREAKER_CLOSED;
    st->breaker_open += ts.breaker == RETRY_BREAKER_OPEN;
    st->breaker_half_open += ts.breaker == RETRY_BREAKER_HALF_OPEN;
    st->breaker_opened += ts.breaker_opened;
  }
  st->holders = n;
  double d = n > 0 ? (double)n : 1.0;
  st->tokens_mean = tokens / d;
  st->budget_mean = budget / d;
  st->reject_p_mean = reject / d;
  /* Only the configured mechanisms carry figures. */
  if (!st->has_throttle) st->tokens_mean = st->tokens_min = st->tokens_max = 0;
  if (!st->has_budget) st->budget_mean = st->budget_min = st->budget_max = 0;
  if (!st->has_adaptive) st->reject_p_mean = st->reject_p_min = st->reject_p_max = 0;
  if (!st->has_breaker) st->breaker_closed = st->breaker_opened = 0;
}

/* The client-side limiters' columns of edge e: the concurrency limiter's mean limit over
 * its holders and the mean of the permits they hold (calls in flight through it), the AWS
 * adaptive limiter's mean fill rate (0 for a holder not yet throttled). A walk of its own,
 * made only on edges with one of them. */
static void edge_limit_sample(const model_world *w, const mw_edge *e, int64_t now, double *row) {
  int64_t n =
      e->pop >= 0 ? w->topo.pops[e->pop].cfg->count : w->topo.services[e->svc].cfg->replicas;
  double limit = 0, held = 0, rate = 0;
  for (int64_t i = 0; i < n; i++) {
    const mw_channel *ch = e->pop >= 0 ? &model__pop_client(&w->topo.pops[e->pop], (size_t)i)->ch
                                       : &w->topo.services[e->svc].replicas[i].ch;
    retry_target_stats ts;
    retry_target_stats_get(model__channel_target(ch, e->pop >= 0 ? 0 : e->slot), now, &ts);
    limit += (double)ts.limit;
    held += (double)ts.limit_in_flight;
    rate += ts.aws_fill_rate;
  }
  double d = n > 0 ? (double)n : 1.0;
  if (e->col_limit >= 0) row[e->col_limit] = limit / d;
  if (e->col_limit_in_flight >= 0) row[e->col_limit_in_flight] = held / d;
  if (e->col_aws_rate >= 0) row[e->col_aws_rate] = rate / d;
}

/* }================================================================== */

/* {==================================================================
 * Lazy gauges: edges whose figures also change with time
 * =================================================================== */

/* An adaptive throttler's probability is a double per holder; its sum is kept exact in fixed
 * point (2^-40 per unit: a million holders at 1 stay below 2^60), so that the sum does not
 * depend on the order holders change in. The mean differs from a sum of doubles in the order
 * of the holders by at most n * 2^-41, far below the 6 digits the outputs keep. */
#define LAZY_P_ONE 1099511627776.0 /* 2^40 */

/* What one holder adds to its edge's sums, as last read, and when its windows next expire. */
typedef struct mw_lazy_holder {
  int64_t tokens_milli, budget, p_fix;     /* throttle milli-tokens, budget, probability x 2^40 */
  int64_t limit, limit_held, aws_rate_fix; /* the limiters' figures (mw_gauge's) */
  int64_t due_ns;                          /* next expiry (RETRY_NEVER: none) */
  uint32_t stamp;                          /* the sample that last read it */
  uint8_t open, half_open;                 /* breaker state */
} mw_lazy_holder;

/* A holder due at a time (a binary min-heap of them, by time then holder). */
typedef struct mw_lazy_due {
  int64_t at_ns;
  int64_t holder;
} mw_lazy_due;

struct mw_lazy {
  int64_t n;                    /* holders */
  mw_lazy_holder *holders;      /* n of them */
  mw_gauge sum;                 /* every figure of mw_gauge summed over the holders */
  int64_t p_sum;                /* probability x 2^40 summed */
  const retry_target **touched; /* holders called since the last sample (repeats allowed) */
  size_t n_touched, cap_touched;
  mw_lazy_due *heap; /* holders whose windows expire, soonest first (stale entries skipped) */
  size_t n_heap, cap_heap;
  uint32_t stamp; /* samples so far */
  bool failed;    /* out of memory keeping the lists: every holder is read at the next sample */
};

static const retry_target *lazy_target(const model_world *w, const mw_edge *e, int64_t h) {
  const mw_channel *ch = e->pop >= 0 ? &model__pop_client(&w->topo.pops[e->pop], (size_t)h)->ch
                                     : &w->topo.services[e->svc].replicas[h].ch;
  return model__channel_target(ch, e->pop >= 0 ? 0 : e->slot);
}

/* The holder whose target is t: a population's client from its place in the clients' array
 * (its target lies in its stride), a replica by search (replicas are few). -1 if none. */
static int64_t lazy_holder_of(const model_world *w, const mw_edge *e, const retry_target *t) {
  if (e->pop >= 0) {
    const mw_pop *p = &w->topo.pops[e->pop];
    ptrdiff_t off = (const char *)(const void *)t - (const char *)(const void *)p->clients;
    int64_t h = off >= 0 ? (int64_t)((size_t)off / p->client_stride) : -1;
    /* Not checked against the client's own pointer outside asserts: that load is a cache miss
     * per call in a large fleet, and lazy_read uses t itself. */
    assert(h >= 0 && h < e->lazy->n && lazy_target(w, e, h) == t);
    return h >= 0 && h < e->lazy->n ? h : -1;
  }
  for (int64_t h = 0; h < e->lazy->n; h++)
    if (lazy_target(w, e, h) == t) return h;
  return -1;
}

static bool lazy_due_less(const mw_lazy_due *a, const mw_lazy_due *b) {
  return a->at_ns < b->at_ns || (a->at_ns == b->at_ns && a->holder < b->holder);
}

static int lazy_heap_push(model_world *w, struct mw_lazy *z, int64_t at, int64_t h) {
  if (z->n_heap == z->cap_heap) {
    size_t cap = z->cap_heap > 0 ? 2 * z->cap_heap : 64;
    mw_lazy_due *nh = model__calloc(w, cap, sizeof *nh);
    if (nh == NULL) return -1;
    if (z->n_heap > 0) memcpy(nh, z->heap, z->n_heap * sizeof *nh);
    model__free(w, z->heap);
    z->heap = nh;
    z->cap_heap = cap;
  }
  size_t i = z->n_heap++;
  mw_lazy_due d = {at, h};
  while (i > 0) {
    size_t up = (i - 1) / 2;
    if (!lazy_due_less(&d, &z->heap[up])) break;
    z->heap[i] = z->heap[up];
    i = up;
  }
  z->heap[i] = d;
  return 0;
}

static void lazy_heap_pop(struct mw_lazy *z) {
  mw_lazy_due last = z->heap[--z->n_heap];
  size_t i = 0, n = z->n_heap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && lazy_due_less(&z->heap[c + 1], &z->heap[c])) c++;
    if (!lazy_due_less(&z->heap[c], &last)) break;
    z->heap[i] = z->heap[c];
    i = c;
  }
  if (n > 0) z->heap[i] = last;
}

/* A holder's figures as of now, as lazy_read and the check take them. */
static void lazy_figures(const retry_target *t, int64_t now, mw_lazy_holder *f) {
  retry_target_stats st;
  retry_target_stats_get(t, now, &st);
  f->tokens_milli = st.throttle_milli_tokens;
  f->budget = st.budget_available;
  f->p_fix = st.adaptive_reject_p > 0 ? (int64_t)(st.adaptive_reject_p * LAZY_P_ONE + 0.5) : 0;
  f->open = st.breaker == RETRY_BREAKER_OPEN;
  f->half_open = st.breaker == RETRY_BREAKER_HALF_OPEN;
  f->limit = st.limit > 0 ? st.limit : 0;
  f->limit_held = st.limit_in_flight;
  f->aws_rate_fix = model__aws_rate_fix(st.aws_fill_rate);
}

/* Reads holder h (target t, or NULL to look it up) again at now (once per sample): its figures
 * replace what it added to the sums, and it is queued for its windows' next expiry. */
static void lazy_read(model_world *w, mw_edge *e, int64_t h, const retry_target *t, int64_t now) {
  struct mw_lazy *z = e->lazy;
  mw_lazy_holder *o = &z->holders[h];
  if (o->stamp == z->stamp) return;
  if (t == NULL) t = lazy_target(w, e, h);
  mw_lazy_holder f;
  lazy_figures(t, now, &f);
  z->sum.tokens_milli += f.tokens_milli - o->tokens_milli;
  z->sum.budget += f.budget - o->budget;
  z->sum.open += (int64_t)f.open - (int64_t)o->open;
  z->sum.half_open += (int64_t)f.half_open - (int64_t)o->half_open;
  z->sum.limit += f.limit - o->limit;
  z->sum.limit_held += f.limit_held - o->limit_held;
  z->sum.aws_rate_fix += f.aws_rate_fix - o->aws_rate_fix;
  z->p_sum += f.p_fix - o->p_fix;
  int64_t due = retry_target_stats_next_change(t, now);
  f.stamp = z->stamp;
  f.due_ns = o->due_ns;
  if (due != RETRY_NEVER && due != o->due_ns) {
    if (lazy_heap_push(w, z, due, h) < 0)
      z->failed = true;
    else
      f.due_ns = due;
  } else if (due == RETRY_NEVER) {
    f.due_ns = RETRY_NEVER;
  }
  *o = f;
}

void model__gauge_touch(mw_edge *e, const retry_target *t) {
  struct mw_lazy *z = e->lazy;
  if (z->failed) return;
  if (z->n_touched == z->cap_touched) {
    if ((int64_t)z->n_touched >= z->n) { /* more calls than holders: the sample reads all */
      z->failed = true;
      return;
    }
    size_t cap = z->cap_touched > 0 ? 2 * z->cap_touched : 64;
    const retry_target **nt = model__calloc(e->w, cap, sizeof *nt);
    if (nt == NULL) {
      z->failed = true;
      return;
    }
    if (z->n_touched > 0) memcpy(nt, z->touched, z->n_touched * sizeof *nt);
    model__free(e->w, z->touched);
    z->touched = nt;
    z->cap_touched = cap;
  }
  z->touched[z->n_touched++] = t;
}

/* Brings e's sums to now: the holders called since the last sample, then those whose windows
 * have expired since; every holder when the lists were given up (more calls than holders, or
 * out of memory). */
static void lazy_update(model_world *w, mw_edge *e, int64_t now) {
  struct mw_lazy *z = e->lazy;
  z->stamp++;
  if (z->failed) {
    z->failed = false;
    for (int64_t h = 0; h < z->n; h++)
      lazy_read(w, e, h, NULL, now);
  } else {
    for (size_t i = 0; i < z->n_touched; i++) {
      int64_t h = lazy_holder_of(w, e, z->touched[i]);
      assert(h >= 0);
      if (h >= 0) lazy_read(w, e, h, z->touched[i], now);
    }
  }
  z->n_touched = 0;
  while (z->n_heap > 0 && z->heap[0].at_ns <= now) {
    mw_lazy_due d = z->heap[0];
    lazy_heap_pop(z);
    if (z->holders[d.holder].due_ns != d.at_ns) continue; /* read again since: stale */
    z->holders[d.holder].due_ns = RETRY_NEVER;
    lazy_read(w, e, d.holder, NULL, now);
  }
}

/* Whether every kept sum (the live gauges and the lazy ones) equals a walk over the holders as
 * of now, the time the last sample brought them to. */
bool model__gauges_check(const model_world *w, int64_t now) {
  for (size_t i = 0; i < w->topo.n_edges; i++) {
    const mw_edge *e = &w->topo.edges[i];
    if (!e->gauge_live && e->lazy == NULL) continue;
    int64_t n =
        e->pop >= 0 ? w->topo.pops[e->pop].cfg->count : w->topo.services[e->svc].cfg->replicas;
    mw_gauge sum = {0};
    int64_t p_sum = 0;
    for (int64_t h = 0; h < n; h++) {
      mw_lazy_holder f;
      lazy_figures(lazy_target(w, e, h), now, &f);
      sum.tokens_milli += f.tokens_milli;
      sum.budget += f.budget;
      sum.open += f.open;
      sum.half_open += f.half_open;
      sum.limit += f.limit;
      sum.limit_held += f.limit_held;
      sum.aws_rate_fix += f.aws_rate_fix;
      p_sum += f.p_fix;
    }
    const mw_gauge *g = e->lazy != NULL ? &e->lazy->sum : &e->gauge;
    if (sum.tokens_milli != g->tokens_milli || sum.budget != g->budget || sum.open != g->open ||
        sum.half_open != g->half_open)
      return false;
    /* the limiters' sums are kept only where the edge has one (live gauges read them so) */
    if ((e->gauge_limits || e->lazy != NULL) &&
        (sum.limit != g->limit || sum.limit_held != g->limit_held ||
         sum.aws_rate_fix != g->aws_rate_fix))
      return false;
    if (e->lazy != NULL && p_sum != e->lazy->p_sum) return false;
  }
  return true;
}

static void lazy_free(model_world *w, mw_edge *e) {
  if (e->lazy == NULL) return;
  model__free(w, e->lazy->holders);
  model__free(w, e->lazy->touched);
  model__free(w, e->lazy->heap);
  model__free(w, e->lazy);
  e->lazy = NULL;
}

/* }================================================================== */

/* Sums every live edge's holders' figures once the holders exist; the engine calls keep the
 * sums from then on (model_call.c). An edge with a Finagle budget or adaptive throttling gets
 * lazy gauges instead, read at each sample for the holders that changed. */
int model__gauges_init(model_world *w) {
  for (size_t i = 0; i < w->topo.n_edges; i++) {
    mw_edge *e = &w->topo.edges[i];
    memset(&e->gauge, 0, sizeof e->gauge);
    e->gauge_live = false; /* gauge_no_budget is the table's (model__features_apply) */
    e->gauge_limits = false;
    e->lazy = NULL;
    if (!e->has_target || e->throttle_shared) continue;
    const retry_target_config *tc = retry_config_target(e->policy);
    int64_t n =
        e->pop >= 0 ? w->topo.pops[e->pop].cfg->count : w->topo.services[e->svc].cfg->replicas;
    if (tc->budget == RETRY_BUDGET_FINAGLE || tc->has_adaptive) {
      struct mw_lazy *z = model__calloc(w, 1, sizeof *z);
      if (z == NULL) return -1;
      e->lazy = z;
      z->n = n;
      z->holders = model__calloc(w, n > 0 ? (size_t)n : 1, sizeof *z->holders);
      if (z->holders == NULL) return -1;
      /* No call has touched a holder yet: each holds a fresh target of the edge's one config,
       * so one read gives every holder's figures (a walk over a million 2 KB targets would
       * cost seconds). Read them all if that one has anything to expire. */
      mw_lazy_holder f0 = {0};
      f0.due_ns = RETRY_NEVER;
      int64_t now = sim_now_ns(w->k);
      if (n > 0) {
        lazy_figures(lazy_target(w, e, 0), now, &f0);
        f0.due_ns = RETRY_NEVER;
        f0.stamp = 0;
      }
      for (int64_t h = 0; h < n; h++)
        z->holders[h] = f0;
      z->sum.tokens_milli = n * f0.tokens_milli;
      z->sum.budget = n * f0.budget;
      z->sum.open = n * (int64_t)f0.open;
      z->sum.half_open = n * (int64_t)f0.half_open;
      z->sum.limit = n * f0.limit;
      z->sum.limit_held = n * f0.limit_held;
      z->sum.aws_rate_fix = n * f0.aws_rate_fix;
      z->p_sum = n * f0.p_fix;
      if (n > 0 && retry_target_stats_next_change(lazy_target(w, e, 0), now) != RETRY_NEVER) {
        z->failed = true; /* the first update reads every holder */
        lazy_update(w, e, now);
      }
      continue;
    }
    e->gauge_live = true;
    e->gauge_limits = tc->has_limit || tc->has_aws_adaptive;
    for (int64_t h = 0; h < n; h++) {
      mw_gauge g, zero = {0};
      model__gauge_read(e, lazy_target(w, e, h), &g);
      model__gauge_add(&e->gauge, &zero, &g);
    }
  }
  return 0;
}

/* Fills the shared-state columns of every edge with a target in row, at now: from the sums
 * the engine calls keep (O(1) an edge), from the lazy gauges brought to now (the holders that
 * changed), or, for a shared throttle's edge, a walk over its holders. A population's own
 * columns are filled from its edge's. */
void model__gauges_sample(model_world *w, double *row, int64_t now) {
  for (size_t i = 0; i < w->topo.n_edges; i++) {
    mw_edge *e = &w->topo.edges[i];
    if (!e->has_target) continue;
    model_edge_state st;
    double open;
    if (e->gauge_live || e->lazy != NULL) {
      /* The sums kept up to date by the engine calls, or brought to now for the holders that
       * changed (lazy gauges). */
      if (e->lazy != NULL) lazy_update(w, e, now);
      const mw_gauge *g = e->lazy != NULL ? &e->lazy->sum : &e->gauge;
      int64_t n =
          e->pop >= 0 ? w->topo.pops[e->pop].cfg->count : w->topo.services[e->svc].cfg->replicas;
      double d = n > 0 ? (double)n : 1.0;
      memset(&st, 0, sizeof st);
      st.tokens_mean = (double)g->tokens_milli / 1000.0 / d;
      st.budget_mean = (double)g->budget / d;
      st.reject_p_mean = e->lazy != NULL ? (double)e->lazy->p_sum / LAZY_P_ONE / d : 0.0;
      open = n > 0 ? (double)(g->open + g->half_open) / (double)n : 0.0;
    } else {
      model__edge_state_read(w, e, now, &st);
      open = st.holders > 0 ? (double)(st.breaker_open + st.breaker_half_open) / (double)st.holders
                            : 0.0;
    }
    if (e->col_tokens >= 0) row[e->col_tokens] = st.tokens_mean;
    if (e->col_budget >= 0) row[e->col_budget] = st.budget_mean;
    if (e->col_breaker >= 0) row[e->col_breaker] = open;
    if (e->col_reject_p >= 0) row[e->col_reject_p] = st.reject_p_mean;
    if (e->col_limit >= 0 || e->col_aws_rate >= 0) {
      if (e->gauge_live || e->lazy != NULL) {
        const mw_gauge *g = e->lazy != NULL ? &e->lazy->sum : &e->gauge;
        int64_t n =
            e->pop >= 0 ? w->topo.pops[e->pop].cfg->count : w->topo.services[e->svc].cfg->replicas;
        double d = n > 0 ? (double)n : 1.0;
        if (e->col_limit >= 0) row[e->col_limit] = (double)g->limit / d;
        if (e->col_limit_in_flight >= 0) row[e->col_limit_in_flight] = (double)g->limit_held / d;
        if (e->col_aws_rate >= 0)
          row[e->col_aws_rate] = (double)g->aws_rate_fix / MODEL_AWS_RATE_ONE / d;
      } else {
        edge_limit_sample(w, e, now, row); /* a shared throttle's edge walks its holders */
      }
    }
    if (e->pop < 0) continue;
    const mw_pop *p = &w->topo.pops[e->pop];
    if (p->col_tokens >= 0) row[p->col_tokens] = st.tokens_mean;
    if (p->col_budget >= 0) row[p->col_budget] = st.budget_mean;
    if (p->col_breaker >= 0) row[p->col_breaker] = open;
  }
#if defined(__SANITIZE_ADDRESS__) || defined(MODEL_GAUGE_CHECK)
  /* Sanitizer builds (every test runs there once) check the sums against a walk. */
  assert(model__gauges_check(w, now));
#endif
}

void model__gauges_free(model_world *w) {
  for (size_t i = 0; w->topo.edges != NULL && i < w->topo.n_edges; i++)
    lazy_free(w, &w->topo.edges[i]);
}

/* }================================================================== */
