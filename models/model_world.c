/*
 * model_world.c: building the world from a config, running it and keeping its statistics:
 * edges with their worst-case amplification, the time series (one row per bucket, sampled at
 * each bucket's end) and the end-of-run totals. Owns every model object through pools and
 * arrays; the kernel (borrowed) owns time and events.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_int.h"
#include "sim/sim_dist.h"
#include "sim/sim_series.h"

/* {==================================================================
 * Errors and time series
 * =================================================================== */

void *model__calloc(const model_world *w, size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  /* 0 bytes are asked as 1, so that a NULL always means "out of memory". */
  size_t bytes = n * size > 0 ? n * size : 1;
  const retry_allocator *a = sim_kernel_allocator(w->k);
  void *p = a->malloc_fn(bytes, a->ctx);
  if (p != NULL) memset(p, 0, bytes);
  return p;
}

void model__free(const model_world *w, void *p) {
  if (p == NULL) return;
  const retry_allocator *a = sim_kernel_allocator(w->k);
  a->free_fn(p, a->ctx);
}

/* A run-time failure (out of memory while the run is under way): the first one is kept, its
 * message goes to the caller's retry_error, and the kernel stops after the current event. The
 * world is then in no state to report results; model_world_run returns the code and the
 * caller only destroys it. */
void model__fail(model_world *w, int code, const char *msg) {
  if (w->run.fail_code == 0) {
    w->run.fail_code = code;
    retry_error_set(w->run.err, code, NULL, NULL, -1, -1, "%s", msg);
  }
  sim_kernel_stop(w->k);
}

sim_event_handle model__schedule_sample(model_world *w, const sim_dist *d, gsl_rng *r,
                                        sim_event_fn fn, void *obj) {
  int64_t delay = sim_dist_sample(d, r);
  if (d->kind == SIM_DIST_CONSTANT) return sim_event_schedule_lane(w->k, delay, fn, obj, 0);
  return sim_event_schedule_in(w->k, delay, fn, obj, 0);
}

/* Writes the latency quantiles of the bucket l holds into that bucket's row, in ms: every
 * call's (the series' quantile columns, NaN in a bucket in which no call ended, as the
 * series leaves them), the OK calls' and the failed calls' (NaN where there were none: set by
 * ts_sample), each exactly what a histogram of those calls alone would give; then empties l. */
void model__lat_write(model_world *w, struct mw_lat *l) {
  double *row = sim_series_row(w->ts.series, l->bucket);
  if (row == NULL) {
    model__fail(w, RETRY_ENOMEM, "out of memory for the time series");
    return;
  }
  static const double q[2] = {0.5, 0.99};
  int64_t v[2];
  sim_hist_quantiles_minus(&l->all, NULL, l->all.min, l->all.max, q, 2, v);
  row[w->ts.col_p50] = (double)v[0] / 1e6;
  row[w->ts.col_p99] = (double)v[1] / 1e6;
  if (l->all.count > l->failed.count) {
    /* With no failure the OK calls are all calls: the same quantiles, without a second pass. */
    if (l->failed.count > 0)
      sim_hist_quantiles_minus(&l->all, &l->failed, l->ok_min, l->ok_max, q, 2, v);
    row[l->col_ok_p50] = (double)v[0] / 1e6;
    row[l->col_ok_p99] = (double)v[1] / 1e6;
    l->written_ok = l->bucket;
  }
  if (l->failed.count > 0) {
    sim_hist_quantiles_minus(&l->failed, NULL, l->failed.min, l->failed.max, q, 2, v);
    row[l->col_failed_p50] = (double)v[0] / 1e6;
    row[l->col_failed_p99] = (double)v[1] / 1e6;
    l->written_failed = l->bucket;
  }
  l->bucket = -1;
  sim_hist_clear(&l->all);
  sim_hist_clear(&l->failed);
  l->ok_min = INT64_MAX;
  l->ok_max = 0;
}

/* Adds a column; returns its index, or -1 when out of memory. Names are "<prefix>_<name>"
 * (prefix: a service or a population) so that gnuplot scripts can refer to columns by name.
 * is_rate marks counters the series divides by the bucket length at the end, so the CSV
 * reads in events per second. */
static int ts_column(model_world *w, const char *prefix, const char *name, bool is_rate) {
  char full[2 * SIM_SERIES_NAME_MAX]; /* sim_series_column_add cuts what is too long */
  snprintf(full, sizeof full, "%.*s%s%s", SIM_SERIES_NAME_MAX, prefix, prefix[0] ? "_" : "", name);
  int col = sim_series_column_add(w->ts.series, full, is_rate);
  if (col < 0) w->ts.failed = true;
  return col < 0 ? -1 : col;
}

/* A per-bucket latency quantile column, in ms, NaN in a row until written (model__lat_write writes
 * it: the series records no values of its own); -1 when out of memory. */
static int quantile_column(model_world *w, const char *name, double q) {
  int col = sim_series_quantile_add(w->ts.series, name, q, 1e6);
  if (col < 0) w->ts.failed = true;
  return col < 0 ? -1 : col;
}

/* The results read the series' table; its pointers move as it grows, so this runs once the
 * series is complete (and after setup, for a world that never runs). */
static void ts_publish(model_world *w) {
  model_timeseries *ts = &w->res.ts;
  ts->bucket_ns = sim_series_bucket_ns(w->ts.series);
  ts->n_buckets = sim_series_n_buckets(w->ts.series);
  ts->n_columns = sim_series_n_columns(w->ts.series);
  ts->names = sim_series_names(w->ts.series);
  ts->values = sim_series_values(w->ts.series);
}

/* Fills the sampled columns of bucket b: the state at the bucket's end. Counters were added
 * as events happened; gauges (in flight, queue, busy workers, tokens) are read here once. The
 * shared-state means come from each edge's sums (mw_edge.gauge), O(1) per edge; on an edge
 * with a Finagle budget or adaptive throttling, whose windows expire with time, from its lazy
 * gauges, brought to now by reading again the holders that changed (lazy_update). Edges with a
 * shared throttle walk their holders (clients or replicas) once per bucket. A population's own
 * columns are filled from its edge's. The
 * latency quantiles are written apart, by model__ts_latency; the OK-only and failed-only ones
 * of bucket b are completed here (NaN when no such call ended in it). */
static void ts_sample(model_world *w, int64_t b) {
  struct mw_lat *l = &w->ts.lat;
  if (l->bucket >= 0 && l->bucket <= b) model__lat_write(w, l);
  double *row = sim_series_row(w->ts.series, b);
  if (row == NULL) {
    model__fail(w, RETRY_ENOMEM, "out of memory for the time series");
    return;
  }
  if (l->written_ok != b) row[l->col_ok_p50] = row[l->col_ok_p99] = NAN;
  if (l->written_failed != b) row[l->col_failed_p50] = row[l->col_failed_p99] = NAN;
  int64_t bucket = w->cfg->bucket_ns;
  row[w->ts.col_in_flight] = (double)w->run.top_in_flight;
  row[w->ts.col_faults] = model__faults_active(w, b * bucket, (b + 1) * bucket);
  for (size_t s = 0; s < w->topo.n_services; s++) {
    double q, busy;
    model__service_sample(w, s, &q, &busy);
    row[w->ts.col_svc0 + (int)s * w->ts.svc_cols + 2] = q;
    row[w->ts.col_svc0 + (int)s * w->ts.svc_cols + 3] = busy;
    if (w->topo.services[s].col_limit >= 0)
      row[w->topo.services[s].col_limit] = model__service_acc_limit(w, s);
  }
  if (w->topo.n_cache_services > 0) model__caches_sample(w, row);
  if (w->ts.col_work0 >= 0) model__work_sample(w, row);
  if (w->ctl != NULL) model__ctl_sample(w, row);
  model__gauges_sample(w, row, sim_now_ns(w->k)); /* model_gauge.c */
  if (w->fast.ops_sample) model__ops_sample(w, b, row); /* model_operator.c */
  w->ts.sampled = b + 1;
}

/* The sampler: one event per bucket, at its end; arg is the bucket's index. It also reports
 * progress and ends the run early once arrivals are over and nothing is in flight (a drain
 * with nothing left to drain would otherwise only tick the clock). */
static void ev_sample(sim_kernel *k, void *obj, uint64_t arg) {
  model_world *w = obj;
  int64_t now = sim_now_ns(k);
  ts_sample(w, (int64_t)arg);
  if (w->run.progress != NULL) w->run.progress(w->run.progress_ctx, now, w->run.end_ns);
  if (now >= w->cfg->duration_ns && w->run.top_in_flight == 0) {
    sim_kernel_stop(k);
    return;
  }
  int64_t next = now + w->cfg->bucket_ns;
  if (next <= w->run.end_ns && sim_event_schedule(k, next, ev_sample, w, arg + 1) == SIM_EVENT_NONE)
    model__fail(w, RETRY_ENOMEM, "out of memory for events");
}

/* The warmup is over: the services' counters start again from zero, so that they count what
 * happens from now on (the calls and the side effects look at their own start instead:
 * model_call.c, model_ledger.c). Scheduled before any other event, it runs first at its
 * instant. Work in progress counts from now: busy_s starts at minus what the busy workers
 * have done so far, and the longest queue at the longest there is now. The side-effect
 * counters, the configured flags and the adaptive limit are not counts of this kind. */
static void ev_warmup_end(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  model_world *w = obj;
  int64_t now = sim_now_ns(k);
  for (size_t s = 0; s < w->topo.n_services; s++) {
    model_service_stats *st = w->topo.services[s].stats;
    int64_t queue_max = 0;
    for (int32_t r = 0; r < w->topo.services[s].cfg->replicas; r++)
      if (w->topo.services[s].replicas[r].queued > queue_max)
        queue_max = w->topo.services[s].replicas[r].queued;
    st->arrivals = st->served = st->rejected = st->expired = st->abandoned = 0;
    st->busy_s = -model__service_busy_in_progress(w, s, now);
    st->wasted_work_s = 0;
    st->queue_max = queue_max;
    st->conflicts = st->admission_rejected = st->codel_dropped = st->acc_rejected = 0;
    st->shed = st->retries_rejected = st->dont_retry = st->cancelled = 0;
  }
  if (w->topo.n_cache_services > 0) model__caches_warmup(w);
}

/* Arrivals end at the duration: stop now when nothing is left in flight. */
static void ev_duration_end(sim_kernel *k, void *obj, uint64_t arg) {
  (void)arg;
  model_world *w = obj;
  w->run.arrivals_over = true;
  if (w->run.top_in_flight == 0) sim_kernel_stop(k);
}

/* The prefix of edge i's columns: "<from>-><to>", and "<from>-><to>#k" for the k-th edge
 * (k >= 2) between the same two names (a service calling one service twice, or a population
 * named like a service calling the same callee), so that every column name is unique. */
static void edge_column_prefix(const model_world *w, size_t i, char *buf, size_t size) {
  const model_edge_stats *e = &w->res.edges[i];
  int k = 1;
  for (size_t j = 0; j < i; j++)
    if (strcmp(w->res.edges[j].from, e->from) == 0 && strcmp(w->res.edges[j].to, e->to) == 0) k++;
  if (k == 1)
    snprintf(buf, size, "%s->%s", e->from, e->to);
  else
    snprintf(buf, size, "%s->%s#%d", e->from, e->to, k);
}

/* Sets up every column: totals, then per service, then per client population. A population
 * gets a tokens, budget or breaker column only when its policy has that mechanism, so the
 * CSV never carries columns that could only hold placeholders. Then the OK-only and
 * failed-only latency quantiles, and per edge its attempts, retries and failures per second and
 * its shared-state gauges (again only the configured mechanisms). */
static int ts_setup(model_world *w) {
  w->ts.series = sim_series_create(w->cfg->bucket_ns, sim_kernel_allocator(w->k));
  if (w->ts.series == NULL) return -1;
  w->ts.col_offered = ts_column(w, "", "offered_rps", true);
  w->ts.col_attempts = ts_column(w, "", "attempt_rps", true);
  w->ts.col_goodput = ts_column(w, "", "goodput_rps", true);
  w->ts.col_errors = ts_column(w, "", "error_rps", true);
  w->ts.col_in_flight = ts_column(w, "", "in_flight", false);
  /* The latency columns of a bucket in which no call ended have no value (an empty CSV
   * field): 0 ms would read as calls answered at once, which refused calls really are. */
  w->ts.col_p50 = quantile_column(w, "latency_p50_ms", 0.5);
  w->ts.col_p99 = quantile_column(w, "latency_p99_ms", 0.99);
  w->ts.col_faults = ts_column(w, "", "faults_active", false);
  w->ts.col_svc0 = (int)sim_series_n_columns(w->ts.series);
  w->ts.svc_cols = 4;
  for (size_t s = 0; s < w->topo.n_services; s++) {
    const char *name = w->cfg->services[s].name;
    ts_column(w, name, "arrival_rps", true);
    ts_column(w, name, "rejected_rps", true);
    ts_column(w, name, "queue", false);
    ts_column(w, name, "busy", false);
  }
  /* Optional columns of a service come after every service's four. */
  for (size_t s = 0; s < w->topo.n_services; s++)
    w->topo.services[s].col_limit =
        w->cfg->services[s].acc.on
            ? ts_column(w, w->cfg->services[s].name, "concurrency_limit", false)
            : -1;
  if (model__caches_columns(w, ts_column) < 0 || model__fallbacks_setup(w, ts_column) < 0 ||
      model__client_fallbacks_setup(w, ts_column) < 0 || model__work_columns(w, ts_column) < 0)
    return -1;
  if (model__ctl_columns(w, ts_column) < 0) return -1;
  if (w->cfg->ops != NULL && model__ops_columns(w, ts_column) < 0) return -1;
  for (size_t i = 0; i < w->topo.n_pops; i++) {
    mw_pop *p = &w->topo.pops[i];
    const retry_target_config *tc =
        p->cfg->policy != NULL ? retry_config_target(p->cfg->policy) : NULL;
    const char *name = p->cfg->name;
    p->col_tokens = tc != NULL && tc->has_throttle ? ts_column(w, name, "tokens", false) : -1;
    p->col_budget =
        tc != NULL && tc->budget != RETRY_BUDGET_NONE ? ts_column(w, name, "budget", false) : -1;
    p->col_breaker = tc != NULL && tc->has_breaker ? ts_column(w, name, "breaker_open", false) : -1;
  }
  /* Added after every older column, so that those keep their positions. */
  static const char *const lat_names[2][2] = {{"latency_ok_p50_ms", "latency_ok_p99_ms"},
                                              {"latency_failed_p50_ms", "latency_failed_p99_ms"}};
  struct mw_lat *l = &w->ts.lat;
  l->col_ok_p50 = ts_column(w, "", lat_names[0][0], false);
  l->col_ok_p99 = ts_column(w, "", lat_names[0][1], false);
  l->col_failed_p50 = ts_column(w, "", lat_names[1][0], false);
  l->col_failed_p99 = ts_column(w, "", lat_names[1][1], false);
  l->bucket = l->written_ok = l->written_failed = -1;
  l->now_b = l->now_start = l->now_end = 0; /* none yet */
  l->ok_min = INT64_MAX;
  l->ok_max = 0;
  sim_hist_init(&l->all);
  sim_hist_init(&l->failed);
  for (size_t i = 0; i < w->topo.n_edges; i++) {
    mw_edge *e = &w->topo.edges[i];
    char name[SIM_SERIES_NAME_MAX];
    edge_column_prefix(w, i, name, sizeof name);
    e->col_attempt = ts_column(w, name, "attempt_rps", true);
    e->col_retry = ts_column(w, name, "retry_rps", true);
    e->col_failure = ts_column(w, name, "failure_rps", true);
    const retry_target_config *tc = e->has_target ? retry_config_target(e->policy) : NULL;
    e->col_tokens = tc != NULL && tc->has_throttle ? ts_column(w, name, "tokens", false) : -1;
    e->col_budget =
        tc != NULL && tc->budget != RETRY_BUDGET_NONE ? ts_column(w, name, "budget", false) : -1;
    e->col_breaker = tc != NULL && tc->has_breaker ? ts_column(w, name, "breaker_open", false) : -1;
    e->col_reject_p = tc != NULL && tc->has_adaptive ? ts_column(w, name, "reject_p", false) : -1;
    e->col_limit = tc != NULL && tc->has_limit ? ts_column(w, name, "limit", false) : -1;
    e->col_limit_in_flight =
        tc != NULL && tc->has_limit ? ts_column(w, name, "limit_in_flight", false) : -1;
    e->col_aws_rate =
        tc != NULL && tc->has_aws_adaptive ? ts_column(w, name, "aws_fill_rate", false) : -1;
  }
  if (w->ts.failed) return -1;
  ts_publish(w);
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Edges
 * =================================================================== */

/* A policy without throttle, budget, adaptive throttling or breaker needs no channel state:
 * its calls run with a NULL target, which saves a retry_target per client (about 2 KiB). */
static bool target_config_is_empty(const retry_target_config *tc) {
  return !retry_target_config_has_parts(tc);
}

/* The policy whose max_attempts counts for a method on an edge (the value the engine
 * enforces, after gRPC's clamp), NULL without a retry or hedging policy (one attempt). */
static const retry_policy *method_layer(const retry_config *policy, const char *method) {
  if (policy == NULL) return NULL;
  const retry_method_config *mc = retry_config_lookup(policy, method);
  return mc->policy.kind == RETRY_POLICY_NONE ? NULL : &mc->policy;
}

/* The attempts one layer makes: 1 without a policy, as retry_policy_layers_worst_case. */
static int32_t layer_attempts(const retry_policy *layer) {
  return (int32_t)retry_policy_layers_worst_case(&layer, 1);
}

/* Fills edge i. Its statistics live in the results (res.edges[i]) so that the output writers
 * read them without knowing the world's internals. */
static void edge_init(model_world *w, size_t i, const char *from, int callee,
                      retry_space caller_space, const retry_config *policy,
                      const model_status_map *map, const sim_dist *network) {
  mw_edge *e = &w->topo.edges[i];
  e->w = w;
  e->callee = callee;
  e->callee_space = (uint8_t)w->cfg->services[callee].space;
  e->caller_space = caller_space;
  e->policy = policy;
  e->map = map;
  e->network = network;
  e->zero_hop = network->kind == SIM_DIST_CONSTANT && sim_dist_sample(network, NULL) == 0;
  e->has_target = policy != NULL && !target_config_is_empty(retry_config_target(policy));
  e->stats = &w->res.edges[i];
  e->stats->from = from;
  e->stats->to = w->cfg->services[callee].name;
  e->pop = e->svc = -1;
  e->init = -1;
  sim_hist_init(&e->stats->latency);
  sim_hist_init(&e->stats->latency_ok);
}

/* Worst-case attempts reaching each edge: the product of max_attempts (and of each call's
 * fanout: a call made 100 times is 100 calls) along the worst chain of layers into it,
 * saturating at UINT64_MAX as libretry's retry_policy_layers_worst_case does
 * (ten layers of 100 attempts must not wrap to a small number in the summary). A client's edge
 * is its own layer; a service's downstream edge is its layer times the worst edge into that
 * service. The saturating product is monotone, so the worst chain into an edge goes through the
 * worst edge into its caller, and one pass over the services in topological order (Kahn's
 * algorithm: the graph has no cycle, the loader refused those) computes every edge in
 * O(services + edges). The scratch comes from the kernel's allocator, so tests can make it
 * fail. Returns 0, or -1 when out of memory (the world's error says so). */
static uint64_t mul_saturating(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

static int edges_worst_case(model_world *w, const retry_policy *const *layer) {
  const retry_allocator *a = sim_kernel_allocator(w->k);
  size_t ne = w->topo.n_edges, ns = w->topo.n_services, np = w->topo.n_pops;
  uint64_t *in_worst = a->malloc_fn((ns + 1) * sizeof *in_worst, a->ctx);
  size_t *indeg = a->malloc_fn((ns + 1) * sizeof *indeg, a->ctx);
  size_t *first = a->malloc_fn((ns + 1) * sizeof *first, a->ctx);
  size_t *queue = a->malloc_fn((ns + 1) * sizeof *queue, a->ctx);
  int rc = in_worst != NULL && indeg != NULL && first != NULL && queue != NULL ? 0 : -1;
  if (rc < 0) {
    model__fail(w, RETRY_ENOMEM, "out of memory computing the edges' worst-case attempts");
    goto done;
  }
  /* in_worst[s] == 0: no edge reaches s (its calls then count their own layer only). */
  for (size_t s = 0; s < ns; s++)
    in_worst[s] = 0, indeg[s] = 0;
  for (size_t i = 0; i < np && i < ne; i++) {
    uint64_t wc = retry_policy_layers_worst_case(&layer[i], 1);
    w->res.edges[i].worst_case = wc;
    size_t callee = (size_t)w->topo.edges[i].callee;
    if (wc > in_worst[callee]) in_worst[callee] = wc;
  }
  /* A population's fallback and a herd's init call are its population's layer too (the last
   * edges). */
  for (size_t i = ne - w->topo.n_init_edges - w->topo.n_pop_fb_edges; i < ne; i++) {
    uint64_t wc = retry_policy_layers_worst_case(&layer[i], 1);
    w->res.edges[i].worst_case = wc;
    size_t callee = (size_t)w->topo.edges[i].callee;
    if (wc > in_worst[callee]) in_worst[callee] = wc;
  }
  size_t e = np;
  for (size_t s = 0; s < ns; s++) {
    first[s] = e;
    for (size_t j = 0; j < w->cfg->services[s].n_calls; j++, e++)
      indeg[w->topo.edges[e].callee]++;
  }
  first[ns] = e;
  size_t head = 0, tail = 0;
  for (size_t s = 0; s < ns; s++)
    if (indeg[s] == 0) queue[tail++] = s;
  while (head < tail) {
    size_t s = queue[head++];
    uint64_t in = in_worst[s] != 0 ? in_worst[s] : 1;
    for (size_t x = first[s]; x < first[s + 1]; x++) {
      /* A call made fanout times is that many calls, each with its own attempts. */
      uint64_t n = (uint64_t)w->cfg->services[s].calls[x - first[s]].fanout;
      uint64_t wc = mul_saturating(retry_policy_layers_worst_case(&layer[x], 1), n > 0 ? n : 1);
      wc = mul_saturating(wc, in);
      w->res.edges[x].worst_case = wc;
      size_t callee = (size_t)w->topo.edges[x].callee;
      if (wc > in_worst[callee]) in_worst[callee] = wc;
      if (--indeg[callee] == 0) queue[tail++] = callee;
    }
  }
done:
  if (in_worst != NULL) a->free_fn(in_worst, a->ctx);
  if (indeg != NULL) a->free_fn(indeg, a->ctx);
  if (first != NULL) a->free_fn(first, a->ctx);
  if (queue != NULL) a->free_fn(queue, a->ctx);
  return rc;
}

/* Edges are numbered clients first (edge i is population i's), then each service's
 * downstream calls in order. That order is also the order of summary.json's edges. */
static int edges_create(model_world *w) {
  const model_config *cfg = w->cfg;
  w->topo.n_edges = cfg->n_clients;
  for (size_t s = 0; s < cfg->n_services; s++)
    w->topo.n_edges += cfg->services[s].n_calls;
  for (size_t i = 0; i < cfg->n_clients; i++)
    w->topo.n_pop_fb_edges += model_client_has_fallback(&cfg->clients[i]);
  w->topo.n_init_edges = cfg->ops != NULL ? cfg->ops->n_inits : 0;
  w->topo.n_edges += w->topo.n_pop_fb_edges + w->topo.n_init_edges;
  w->topo.edges = model__calloc(w, w->topo.n_edges, sizeof *w->topo.edges);
  w->res.edges = model__calloc(w, w->topo.n_edges, sizeof *w->res.edges);
  /* Each edge's layer: the policy of its method with the most attempts (scratch). */
  const retry_policy **layer = model__calloc(w, w->topo.n_edges + 1, sizeof *layer);
  if (w->topo.edges == NULL || w->res.edges == NULL || layer == NULL) {
    model__free(w, layer);
    return -1;
  }
  w->res.n_edges = w->topo.n_edges;
  size_t e = 0;
  for (size_t i = 0; i < cfg->n_clients; i++, e++) {
    const model_client_cfg *cc = &cfg->clients[i];
    edge_init(w, e, cc->name, cc->target, cfg->services[cc->target].space, cc->policy, NULL,
              &cc->network);
    int32_t m = 1;
    for (size_t j = 0; j < cc->n_methods; j++) {
      const retry_policy *l = method_layer(cc->policy, cc->methods[j].name);
      int32_t a = layer_attempts(l);
      if (a > m) {
        m = a;
        layer[e] = l;
      }
    }
    w->res.edges[e].max_attempts = m;
    w->topo.pops[i].edge = &w->topo.edges[e];
    w->topo.edges[e].pop = (int)i;
  }
  for (size_t s = 0; s < cfg->n_services; s++) {
    const model_service_cfg *sc = &cfg->services[s];
    mw_service *sv = &w->topo.services[s];
    sv->call_edges = model__calloc(w, sc->n_calls + 1, sizeof *sv->call_edges);
    sv->call_mcfg = model__calloc(w, sc->n_calls + 1, sizeof *sv->call_mcfg);
    size_t children = 0;
    for (size_t j = 0; j < sc->n_calls; j++)
      children += (size_t)sc->calls[j].fanout;
    sv->call_of_child = model__calloc(w, children + 1, sizeof *sv->call_of_child);
    if (sv->call_edges == NULL || sv->call_mcfg == NULL || sv->call_of_child == NULL) {
      model__free(w, layer);
      return -1;
    }
    for (size_t j = 0, child = 0; j < sc->n_calls; j++, e++) {
      const model_call_cfg *c = &sc->calls[j];
      for (int32_t i = 0; i < c->fanout; i++)
        sv->call_of_child[child++] = (int32_t)j;
      edge_init(w, e, sc->name, c->service, sc->space, c->policy, &c->map, &c->network);
      layer[e] = method_layer(c->policy, c->method);
      w->res.edges[e].max_attempts = layer_attempts(layer[e]);
      w->res.edges[e].can_cancel = sv->keeps_calls;
      w->res.edges[e].has_branch = model_call_branches(c) && !c->fallback_only;
      sv->call_edges[j] = &w->topo.edges[e];
      w->topo.edges[e].svc = (int)s;
      w->topo.edges[e].slot = j;
      sv->call_mcfg[j].mc = c->policy != NULL ? retry_config_lookup(c->policy, c->method) : NULL;
    }
  }
  /* Populations' fallback calls (model_client_fallback.c), before the herds' init edges,
   * which are found by counting back from the end. */
  for (size_t i = 0; i < cfg->n_clients; i++) {
    if (!model_client_has_fallback(&cfg->clients[i])) continue;
    const model_call_cfg *fb = cfg->clients[i].on_failure->fallback;
    edge_init(w, e, cfg->clients[i].name, fb->service, cfg->services[cfg->clients[i].target].space,
              fb->policy, &fb->map, &fb->network);
    layer[e] = method_layer(fb->policy, fb->method);
    w->res.edges[e].max_attempts = layer_attempts(layer[e]);
    w->topo.edges[e].pop = (int)i;
    /* Its calls go without the population's channel state (as a herd's init calls do): the
     * fallback's policy gives them attempts, hedges and timeouts, no shared state. */
    w->topo.edges[e].has_target = false;
    w->topo.edges[e].pop_fallback = true;
    w->topo.edges[e++].fb_mc =
        fb->policy != NULL ? retry_config_lookup(fb->policy, fb->method) : NULL;
  }
  /* Herds' init calls (model_herd.c), after every service's: made by a population's clients
   * on their own channels, named by a method slot past the population's methods. */
  for (size_t h = 0; h < w->topo.n_init_edges; h++, e++) {
    const model_init_cfg *in = &cfg->ops->inits[h];
    edge_init(w, e, cfg->clients[in->pop].name, in->service, cfg->services[in->service].space,
              in->policy, NULL, &in->network);
    layer[e] = method_layer(in->policy, in->method);
    w->res.edges[e].max_attempts = layer_attempts(layer[e]);
    w->topo.edges[e].pop = in->pop;
    w->topo.edges[e].init = (int32_t)h;
  }
  int rc = edges_worst_case(w, layer);
  model__free(w, layer);
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * The world
 * =================================================================== */

/* RETRYSIM_NO_FAST_PATHS set to anything but "" or "0": every fast path off, for the
 * differential test (tools/test/test-fastpath.sh) of a program that does not set the config's
 * fast_paths_off itself. Read once per world, at its creation. */
static bool fast_paths_off_env(void) {
  const char *v = getenv("RETRYSIM_NO_FAST_PATHS");
  return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* Building order matters: services (with their effect slots) before pools, since an
 * operation's size depends on the number of side-effecting services; edges before services
 * and populations, which keep pointers to them; the time series before anything that counts;
 * and the first events last, once everything they touch exists. Any failure unwinds through
 * model_world_destroy, which copes with a half-built world. */
model_world *model_world_create(const model_config *cfg, sim_kernel *k, uint64_t seed,
                                retry_error *err) {
  const retry_allocator *a = sim_kernel_allocator(k);
  model_world *w = a->malloc_fn(sizeof *w, a->ctx);
  if (w == NULL) goto oom;
  memset(w, 0, sizeof *w);
  w->cfg = cfg;
  w->k = k;
  w->seed = seed;
  w->run.err = err;
  w->topo.n_services = cfg->n_services;
  w->topo.n_pops = cfg->n_clients;
  w->topo.services = model__calloc(w, cfg->n_services, sizeof *w->topo.services);
  w->topo.pops = model__calloc(w, cfg->n_clients, sizeof *w->topo.pops);
  w->res.services = model__calloc(w, cfg->n_services, sizeof *w->res.services);
  if (w->topo.services == NULL || w->topo.pops == NULL || w->res.services == NULL) goto oom;
  w->res.n_services = cfg->n_services;
  w->res.duration_ns = cfg->duration_ns - cfg->warmup_ns;
  w->res.warmup_ns = cfg->warmup_ns;
  for (size_t s = 0; s < cfg->n_services; s++) {
    mw_service *sv = &w->topo.services[s];
    sv->cfg = &cfg->services[s];
    sv->index = (int)s;
    sv->stats = &w->res.services[s];
    sv->stats->name = cfg->services[s].name;
    sv->effect_slot =
        cfg->services[s].effect != MODEL_EFFECT_NONE ? w->topo.n_effect_services++ : -1;
    if (cfg->services[s].cache.on) w->topo.n_cache_services++;
  }
  if (model__ctl_prepare(w) < 0) goto oom;
  model__services_cancel_reach(w);
  for (size_t i = 0; i < cfg->n_clients; i++) {
    w->topo.pops[i].cfg = &cfg->clients[i];
    w->topo.pops[i].index = (int)i;
  }
  model__pool_init(&w->pools.calls, a, sizeof(mw_call), 256);
  model__pool_init(&w->pools.reqs, a, sizeof(mw_req), 256);
  model__pool_init(&w->pools.reqx, a, sizeof(mw_req_side), 64);
  model__pool_init(&w->pools.exts, a, sizeof(mw_call_ext), 256);
  model__pool_init(&w->pools.policies, a, sizeof(retry_policy), 16);
  retry_policy_init(&w->pools.none[RETRY_SPACE_GRPC], RETRY_SPACE_GRPC);
  retry_policy_init(&w->pools.none[RETRY_SPACE_HTTP], RETRY_SPACE_HTTP);
  /* An op: header, executions, then child pointers aligned for a pointer (mw_op's comment). */
  for (size_t s = 0; s < cfg->n_services; s++) {
    size_t n = 0; /* a call made fanout times is that many operations */
    for (size_t j = 0; j < cfg->services[s].n_calls; j++)
      n += (size_t)cfg->services[s].calls[j].fanout;
    if (n > w->pools.max_calls) w->pools.max_calls = n;
  }
  for (size_t s = 0; s < cfg->n_services; s++)
    for (size_t j = 0; j < cfg->services[s].n_calls; j++)
      if (model_call_branches(&cfg->services[s].calls[j])) w->pools.branches = true;
  w->pools.ops_real =
      w->topo.n_effect_services > 0 || w->pools.branches || w->topo.n_cache_services > 0;
  size_t exec_end = sizeof(mw_op) + (size_t)w->topo.n_effect_services * sizeof(int32_t);
  w->pools.op_child_off = (exec_end + sizeof(mw_op *) - 1) / sizeof(mw_op *) * sizeof(mw_op *);
  size_t children = w->pools.ops_real ? w->pools.max_calls : 0;
  size_t op_end = w->pools.op_child_off + children * sizeof(mw_op *);
  /* A world that branches: the branch word after the children, aligned for a uint64_t. */
  w->pools.op_branch_off = (op_end + sizeof(uint64_t) - 1) / sizeof(uint64_t) * sizeof(uint64_t);
  if (w->pools.branches) op_end = w->pools.op_branch_off + sizeof(uint64_t);
  /* With a cache, the op's last 8 bytes hold its request's key (model_cache_world.c). */
  if (w->topo.n_cache_services > 0)
    op_end = (op_end + sizeof(uint64_t) - 1) / sizeof(uint64_t) * sizeof(uint64_t) + sizeof(uint64_t);
  model__pool_init(&w->pools.ops, a, op_end, 256);
  /* A service whose calls may be cancelled keeps one entry per call it makes. */
  size_t fan = 1;
  for (size_t s = 0; s < cfg->n_services; s++) {
    const model_service_cfg *sc = &cfg->services[s];
    size_t n = 0;
    for (size_t j = 0; w->topo.services[s].keeps_calls && j < sc->n_calls; j++)
      n += sc->calls[j].fanout > 1 ? (size_t)sc->calls[j].fanout : 1; /* sequential: one each */
    if (n > fan) fan = n;
  }
  model__pool_init(&w->pools.fanouts, a, sizeof(mw_fanout) + fan * sizeof(mw_child), 64);
  w->pools.no_effect_op = model__calloc(w, 1, sizeof(mw_op));
  if (w->pools.no_effect_op == NULL) goto oom;
  w->pools.no_effect_op->refs = 1; /* the world's own reference */
  w->pools.no_effect_op->measured = true;
  sim_hist_init(&w->res.latency);
  sim_hist_init(&w->res.latency_ok);
  w->run.end_ns = cfg->drain_ns > INT64_MAX - cfg->duration_ns ? INT64_MAX - 1
                                                               : cfg->duration_ns + cfg->drain_ns;
  if (edges_create(w) < 0 || model__caches_create(w) < 0 || ts_setup(w) < 0) goto oom;
  /* First of all events at its instant (its sequence number is the lowest); one more event
   * shifts every later one's number alike, which leaves their order as it was. */
  if (cfg->warmup_ns > 0 &&
      sim_event_schedule(k, cfg->warmup_ns, ev_warmup_end, w, 0) == SIM_EVENT_NONE)
    goto oom;
  /* The fast paths' switches before the populations, which choose their event functions from
   * the table (model__pop_is_gated); the flags themselves once every object exists. */
  w->fast.off = cfg->fast_paths_off || fast_paths_off_env();
  w->fast.skip = -1;
  if (model__services_create(w) < 0 || model__pops_create(w) < 0 || model__ctl_create(w) < 0)
    goto oom;
  /* The fast paths, from the table of features, before the gauges read with them. */
  model__features_apply(w);
  if (model__gauges_init(w) < 0) goto oom;
  if (cfg->ops != NULL && model__ops_create(w) < 0) goto oom;
  if (sim_event_schedule(k, cfg->duration_ns, ev_duration_end, w, 0) == SIM_EVENT_NONE ||
      sim_event_schedule(k, cfg->bucket_ns, ev_sample, w, 0) == SIM_EVENT_NONE)
    goto oom;
  return w;
oom:
  /* retry_target_create may have filled err already (a config the loader should have
   * refused); otherwise the only way to fail here is memory. */
  retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory building the world");
  model_world_destroy(w);
  return NULL;
}

/* Totals that only make sense once the run is over: the clock, calls still in flight, the
 * ledger's operations still referenced by work in flight (settled now so that no execution
 * is lost), the capacity for utilization, the last partial bucket, and counters turned into
 * rates. */
static void world_finish(model_world *w) {
  model_results *res = &w->res;
  int64_t now = sim_now_ns(w->k);
  res->events = sim_kernel_n_events(w->k);
  res->sim_time_ns = now;
  res->calls_unfinished = w->run.top_measured;
  /* An edge's latency of all calls held its failed ones' during the run (call_report records
   * an OK call's once, in latency_ok): the OK ones join them now. The sums are of whole ns,
   * exact in a double up to 2^53 ns (104 days of summed latency), so the order of the
   * additions changes nothing below that. */
  for (size_t i = 0; i < w->topo.n_edges; i++)
    sim_hist_merge(&w->topo.edges[i].stats->latency, &w->topo.edges[i].stats->latency_ok);
  /* A top-level call is counted on its population's edge (call_report, model_call.c): the
   * top-level figures are the populations' edges' together. A top-level call is never
   * cancelled, so its edge's failed calls are the calls that did not end OK. */
  for (size_t i = 0; i < w->topo.n_pops; i++) {
    const model_edge_stats *es = w->topo.pops[i].edge->stats;
    sim_hist_merge(&res->latency, &es->latency);
    sim_hist_merge(&res->latency_ok, &es->latency_ok);
    res->calls_ok += es->ok;
    res->calls_failed += es->failed;
    res->retries += es->retries;
    res->hedges += es->hedges;
    for (int r = 0; r < RETRY_STOP_N; r++)
      res->by_stop[r] += es->by_stop[r];
    for (int c = 0; c < RETRY_GRPC_N_CODES; c++)
      res->by_status.grpc[c] += es->by_status.grpc[c];
    for (int c = 100; c < 600; c++)
      res->by_status.http[c] += es->by_status.http[c];
  }
  model__ops_settle_all(w);
  /* Utilization counts the work still on a worker when the run ends, up to now: a worker
   * busy through the whole run is fully used even if its request never finished. */
  for (size_t s = 0; s < w->topo.n_services; s++) {
    const model_service_cfg *c = w->topo.services[s].cfg;
    int64_t span = now > w->cfg->warmup_ns ? now - w->cfg->warmup_ns : 0; /* measured time */
    res->services[s].capacity_s = (double)c->replicas * (double)c->workers * (double)span / 1e9;
    res->services[s].busy_s += model__service_busy_in_progress(w, s, now);
    res->services[s].acc_limit = model__service_acc_limit(w, s);
  }
  if (w->topo.n_cache_services > 0) model__caches_report(w);
  if (w->ops != NULL) model__ops_report(w);
  if (w->ctl != NULL) model__ctl_report(w);
  for (size_t i = 0; i < w->topo.n_edges; i++)
    model__edge_state_read(w, &w->topo.edges[i], now, &res->edges[i].state);
  /* The last buckets, cut short by the end of the run, are sampled now: up to the one the
   * clock is in, or the last row a counter created (a call that ended exactly at the end
   * counts in the bucket that starts then). The latencies of the bucket calls ended in last
   * are written first, which makes its row even when no counter did (an OK call that ended
   * past its deadline as the run stopped counts neither as goodput nor as an error). */
  if (w->ts.lat.bucket >= 0) model__lat_write(w, &w->ts.lat);
  if (sim_series_flush(w->ts.series) != 0)
    model__fail(w, RETRY_ENOMEM, "out of memory for the time series");
  int64_t bucket = w->cfg->bucket_ns;
  int64_t n_buckets = (int64_t)sim_series_n_buckets(w->ts.series);
  int64_t last = now <= 0 ? 0 : (now - 1) / bucket;
  if (n_buckets - 1 > last) last = n_buckets - 1;
  for (int64_t b = w->ts.sampled; b <= last; b++)
    ts_sample(w, b);
  if (sim_series_finish(w->ts.series) != 0)
    model__fail(w, RETRY_ENOMEM, "out of memory for the time series");
  ts_publish(w);
}

int model_world_run(model_world *w, void (*progress)(void *ctx, int64_t now_ns, int64_t end_ns),
                    void *ctx, retry_error *err) {
  w->run.progress = progress;
  w->run.progress_ctx = ctx;
  if (err != NULL) w->run.err = err;
  sim_kernel_run(w->k, w->run.end_ns);
  if (w->run.fail_code != 0) return w->run.fail_code;
  world_finish(w);
  return w->run.fail_code;
}

const model_results *model_world_results(const model_world *w) { return &w->res; }

int64_t model_world_peak_in_flight(const model_world *w) { return w->run.top_peak; }

bool model_world_gauges_check(const model_world *w, int64_t now_ns) {
  return model__gauges_check(w, now_ns);
}

int64_t model_world_peak_objects(const model_world *w) {
  return w->pools.calls.peak + w->pools.exts.peak + w->pools.reqs.peak + w->pools.reqx.peak +
         w->pools.ops.peak;
}

/* Frees everything, in any state: pools release their chunks wholesale, so objects still in
 * flight (calls, requests, operations) need no walk. */
void model_world_destroy(model_world *w) {
  if (w == NULL) return;
  model__ops_destroy(w);
  model__pops_destroy(w);
  model__caches_destroy(w);
  model__services_destroy(w);
  model__ctl_destroy(w);
  model__pool_free(&w->pools.calls);
  model__pool_free(&w->pools.reqs);
  model__pool_free(&w->pools.reqx);
  model__pool_free(&w->pools.exts);
  model__pool_free(&w->pools.policies);
  model__pool_free(&w->pools.ops);
  model__pool_free(&w->pools.fanouts);
  model__free(w, w->pools.no_effect_op);
  model__free(w, w->topo.services);
  model__free(w, w->topo.pops);
  model__gauges_free(w);
  model__free(w, w->topo.edges);
  model__free(w, w->res.edges);
  model__free(w, w->res.services);
  sim_series_destroy(w->ts.series);
  const retry_allocator *a = sim_kernel_allocator(w->k);
  a->free_fn(w, a->ctx);
}

/* }================================================================== */
