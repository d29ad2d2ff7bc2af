/*
 * model_capacity.c: the offered load of every service against its capacity, from the config
 * alone (model_capacity.h). Invariant: the call graph has no cycle (the loader refuses one),
 * so the load flows from the clients down a topological order of the services in one pass,
 * per phase, each request's method followed so that a branch on "when_method" takes its
 * share and no more.
 */
#include "models/model_capacity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_dist.h"

/* {==================================================================
 * The load, per service and method
 * =================================================================== */

/* The requests per second arriving at one service for one method. */
typedef struct method_load {
  const char *method; /* borrowed from the config */
  double per_s;
} method_load;

typedef struct load {
  method_load *m; /* what arrives at each service, by method */
  size_t n, cap;
} load;

static int add_load(load *l, const char *method, double per_s) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->m[i].method, method) == 0) {
      l->m[i].per_s += per_s;
      return 0;
    }
  if (l->n == l->cap) {
    size_t cap = l->cap == 0 ? 4 : 2 * l->cap;
    method_load *m = realloc(l->m, cap * sizeof *m);
    if (m == NULL) return -1;
    l->m = m;
    l->cap = cap;
  }
  l->m[l->n++] = (method_load){method, per_s};
  return 0;
}

/* The share of a service's load a call c takes: the methods it is made for (all without
 * when_method). */
static double matching(const load *l, const model_call_cfg *c) {
  double sum = 0;
  for (size_t i = 0; i < l->n; i++) {
    bool match = c->n_when_method == 0;
    for (size_t k = 0; k < c->n_when_method && !match; k++)
      match = strcmp(l->m[i].method, c->when_method[k]) == 0;
    if (match) sum += l->m[i].per_s;
  }
  return sum;
}

/* A client's calls per second at t_ns (0 outside its start and stop); *closed set when it is
 * a closed loop, counted at its upper bound. */
static double client_rate(const model_client_cfg *cl, int64_t t_ns, int64_t duration_ns,
                          bool *closed) {
  if (t_ns < cl->start_ns || (cl->stop_ns != RETRY_NEVER && t_ns >= cl->stop_ns)) return 0;
  switch (cl->loop) {
    case MODEL_LOOP_OPEN: return sim_profile_rate(&cl->rate, t_ns);
    case MODEL_LOOP_CLOSED: {
      *closed = true;
      double think_s = sim_dist_mean_ns(&cl->think) / 1e9;
      return think_s > 0 ? cl->count / think_s : INFINITY;
    }
    default:
      return duration_ns > 0 ? (double)cl->count * cl->n_script / ((double)duration_ns / 1e9) : 0;
  }
}

/* The services in an order where every caller comes before its callees (depth first from
 * each service, emitted after its callers: the reverse post-order of the callee graph). */
static void visit(const model_config *cfg, size_t s, bool *seen, size_t *order, size_t *n) {
  if (seen[s]) return;
  seen[s] = true;
  const model_service_cfg *sv = &cfg->services[s];
  for (size_t c = 0; c < sv->n_calls; c++)
    visit(cfg, (size_t)sv->calls[c].service, seen, order, n);
  order[(*n)++] = s;
}

/* Fills offered[0..n_services) at t_ns. Returns 0 or -1 (out of memory). */
static int offered_at(const model_config *cfg, int64_t t_ns, const size_t *topo, double *offered,
                      bool *closed) {
  size_t ns = cfg->n_services;
  load *l = calloc(ns, sizeof *l);
  if (l == NULL) return -1;
  int rc = 0;
  for (size_t i = 0; i < cfg->n_clients && rc == 0; i++) {
    const model_client_cfg *cl = &cfg->clients[i];
    double rate = client_rate(cl, t_ns, cfg->duration_ns, closed), w = 0;
    for (size_t m = 0; m < cl->n_methods; m++)
      w += cl->methods[m].weight;
    for (size_t m = 0; m < cl->n_methods && rc == 0 && w > 0; m++)
      rc = add_load(&l[cl->target], cl->methods[m].name, rate * cl->methods[m].weight / w);
  }
  for (size_t k = 0; k < ns && rc == 0; k++) {
    size_t s = topo[ns - 1 - k]; /* callers first */
    const model_service_cfg *sv = &cfg->services[s];
    for (size_t c = 0; c < sv->n_calls && rc == 0; c++) {
      const model_call_cfg *call = &sv->calls[c];
      /* A fallback is made only after a failure, and the estimate counts no failure: its
       * probability field is 0 (unset), which would otherwise read as "always". */
      if (call->fallback_only) continue;
      double p = call->probability > 0 ? call->probability : 1.0;
      double fan = call->fanout > 0 ? call->fanout : 1;
      rc = add_load(&l[call->service], call->method, matching(&l[s], call) * p * fan);
    }
  }
  for (size_t s = 0; s < ns; s++) {
    offered[s] = matching(&l[s], &(model_call_cfg){.n_when_method = 0});
    free(l[s].m);
  }
  free(l);
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * Phases and the table
 * =================================================================== */

static void add_phase(model_capacity *cap, int64_t t_ns, int64_t duration_ns) {
  if (t_ns < 0 || t_ns >= duration_ns) return;
  for (size_t i = 0; i < cap->n_phases; i++)
    if (cap->phase_ns[i] == t_ns) return;
  if (cap->n_phases == MODEL_CAPACITY_MAX_PHASES) return;
  size_t i = cap->n_phases++;
  while (i > 0 && cap->phase_ns[i - 1] > t_ns) {
    cap->phase_ns[i] = cap->phase_ns[i - 1];
    i--;
  }
  cap->phase_ns[i] = t_ns;
}

int model_capacity_init(model_capacity *cap, const model_config *cfg) {
  memset(cap, 0, sizeof *cap);
  size_t ns = cfg->n_services;
  add_phase(cap, 0, cfg->duration_ns);
  for (size_t i = 0; i < cfg->n_clients; i++) {
    const model_client_cfg *cl = &cfg->clients[i];
    add_phase(cap, cl->start_ns, cfg->duration_ns);
    if (cl->stop_ns != RETRY_NEVER) add_phase(cap, cl->stop_ns, cfg->duration_ns);
    for (int k = 0; cl->loop == MODEL_LOOP_OPEN && k < cl->rate.n_points; k++)
      add_phase(cap, cl->rate.t_ns[k], cfg->duration_ns);
  }
  cap->n_services = ns;
  cap->capacity_per_s = calloc(ns, sizeof *cap->capacity_per_s);
  cap->offered_per_s = calloc(ns * (cap->n_phases > 0 ? cap->n_phases : 1), sizeof(double));
  size_t *topo = calloc(ns, sizeof *topo);
  bool *seen = calloc(ns, sizeof *seen);
  int rc = cap->capacity_per_s != NULL && cap->offered_per_s != NULL && topo != NULL && seen != NULL
               ? 0
               : -1;
  size_t n = 0;
  for (size_t s = 0; s < ns && rc == 0; s++)
    visit(cfg, s, seen, topo, &n);
  for (size_t s = 0; s < ns && rc == 0; s++) {
    const model_service_cfg *sv = &cfg->services[s];
    double mean_s = sim_dist_mean_ns(&sv->service_time) / 1e9;
    cap->capacity_per_s[s] = mean_s > 0 ? sv->replicas * (double)sv->workers / mean_s : INFINITY;
  }
  for (size_t p = 0; p < cap->n_phases && rc == 0; p++)
    rc = offered_at(cfg, cap->phase_ns[p], topo, cap->offered_per_s + p * ns, &cap->closed_loop);
  free(topo);
  free(seen);
  if (rc != 0) model_capacity_close(cap);
  return rc;
}

void model_capacity_close(model_capacity *cap) {
  free(cap->capacity_per_s);
  free(cap->offered_per_s);
  memset(cap, 0, sizeof *cap);
}

double model_capacity_peak(const model_capacity *cap, size_t *service, size_t *phase) {
  double peak = 0;
  *service = *phase = 0;
  for (size_t p = 0; p < cap->n_phases; p++)
    for (size_t s = 0; s < cap->n_services; s++) {
      double u = cap->offered_per_s[p * cap->n_services + s] / cap->capacity_per_s[s];
      if (u > peak) {
        peak = u;
        *service = s;
        *phase = p;
      }
    }
  return peak;
}

void model_capacity_print(const model_capacity *cap, const model_config *cfg, FILE *f) {
  fprintf(f, "  capacity (first attempts, no retries or faults%s):\n",
          cap->closed_loop ? "; closed loops at their most" : "");
  for (size_t p = 0; p < cap->n_phases; p++)
    for (size_t s = 0; s < cap->n_services; s++) {
      double o = cap->offered_per_s[p * cap->n_services + s], c = cap->capacity_per_s[s];
      fprintf(f, "    %-16s from %8.6gs  %10.6g/s of %10.6g/s  utilization %.2f%s\n",
              cfg->services[s].name, (double)cap->phase_ns[p] / 1e9, o, c, o / c,
              o / c > MODEL_CAPACITY_WARN ? "  over 0.9" : "");
    }
}

/* }================================================================== */
