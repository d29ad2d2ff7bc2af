/*
 * expt_scenario_inert.c: values that could change nothing, refused once the whole document is
 * read (services, clients and operators), since whether they can act depends on parts read
 * after them: a call's "when_method" naming a method that never reaches its service, and a
 * scale event to the replica count already in force. Each run's document (the base without
 * variants, else each variant's; after --set) is judged as built: what is judged is what runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario_int.h"
#include "models/model_ctl.h"
#include "models/model_ops.h"

/* {==================================================================
 * when_method: a route to a method that reaches the service
 * =================================================================== */

/* The methods that may reach each service, as lists into the config's own strings (CSR: the
 * methods of service t are m[at[t] .. at[t + 1])). Duplicates are kept: they change neither
 * a membership test nor the nearest name. */
typedef struct reach {
  const char **m; /* every method, grouped by the service it reaches */
  size_t *at;     /* n_services + 1 offsets into m */
} reach;

/* Calls f(ctx, service, method) for every way a request of a method reaches a service: a
 * population's methods (its target), a handler's calls (fallbacks included: their place is in
 * the calls), a population's fallback and a herd's init calls. Nothing else sends a request
 * (health and self-eject probes cost nothing and carry no method). */
static void each_route(const model_config *cfg, void (*f)(void *, int, const char *), void *ctx) {
  for (size_t i = 0; i < cfg->n_clients; i++) {
    const model_client_cfg *cl = &cfg->clients[i];
    for (size_t m = 0; m < cl->n_methods; m++)
      f(ctx, cl->target, cl->methods[m].name);
    if (model_client_has_fallback(cl))
      f(ctx, cl->on_failure->fallback->service, cl->on_failure->fallback->method);
  }
  for (size_t s = 0; s < cfg->n_services; s++)
    for (size_t j = 0; j < cfg->services[s].n_calls; j++)
      f(ctx, cfg->services[s].calls[j].service, cfg->services[s].calls[j].method);
  for (size_t k = 0; cfg->ops != NULL && k < cfg->ops->n_inits; k++)
    f(ctx, cfg->ops->inits[k].service, cfg->ops->inits[k].method);
}

static void count_route(void *ctx, int t, const char *method) {
  (void)method;
  ((reach *)ctx)->at[t + 1]++;
}

/* After counting, at[t] is used as the next free place of t; reach_build shifts it back. */
static void fill_route(void *ctx, int t, const char *method) {
  reach *r = ctx;
  r->m[r->at[t]++] = method;
}

/* Two passes over the routes: count per service, then fill. Returns false when out of memory. */
static bool reach_build(const model_config *cfg, reach *r) {
  size_t ns = cfg->n_services;
  r->at = expt__scenario_calloc(ns + 1, sizeof *r->at);
  if (r->at == NULL) return false;
  each_route(cfg, count_route, r);
  for (size_t t = 0; t < ns; t++)
    r->at[t + 1] += r->at[t];
  r->m = expt__scenario_calloc(r->at[ns] + 1, sizeof *r->m);
  if (r->m == NULL) return false;
  each_route(cfg, fill_route, r);
  /* Each at[t] now holds t's end, which is at[t + 1]'s start: shift the offsets back. */
  for (size_t t = ns; t > 0; t--)
    r->at[t] = r->at[t - 1];
  r->at[0] = 0;
  return true;
}

static bool reaches(const reach *r, int t, const char *method) {
  for (size_t i = r->at[t]; i < r->at[t + 1]; i++)
    if (strcmp(r->m[i], method) == 0) return true;
  return false;
}

/* `"/a.A/M", "/b.B/N"` for a message, cut with "..." to fit size. */
static void method_list(const reach *r, int t, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = r->at[t]; i < r->at[t + 1]; i++) {
    bool seen = false;
    for (size_t k = r->at[t]; k < i && !seen; k++)
      seen = strcmp(r->m[k], r->m[i]) == 0;
    if (seen) continue;
    int n = snprintf(buf + len, size - len, "%s\"%s\"", len ? ", " : "", r->m[i]);
    if (n < 0 || (size_t)n >= size - len) {
      snprintf(buf + (len < size - 4 ? len : size - 4), 4, "...");
      return;
    }
    len += (size_t)n;
  }
}

/* Refuses method k of call j of service s, at its path: the element of an array, or the
 * string itself (doc says which was written). */
static bool route_error(scn_ctx *c, json_t *doc, const reach *r, size_t s, size_t j, size_t k) {
  const model_service_cfg *svc = &c->cfg->services[s];
  const char *method = svc->calls[j].when_method[k];
  json_t *calls =
      json_object_get(json_object_get(json_object_get(doc, "services"), svc->name), "calls");
  json_t *wm = json_object_get(json_array_get(calls, j), "when_method");
  retry_json_path_push_key(&c->j, "services");
  retry_json_path_push_key(&c->j, svc->name);
  retry_json_path_push_key(&c->j, "calls");
  retry_json_path_push_index(&c->j, j);
  retry_json_path_push_key(&c->j, "when_method");
  if (json_is_array(wm)) retry_json_path_push_index(&c->j, k);
  size_t from = r->at[s], n = r->at[s + 1] - from;
  const char *near = retry_json_suggest(method, r->m + from, n, NULL);
  char shown[48], list[96];
  retry_json_printable(shown, sizeof shown, method, 40);
  if (near != NULL) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "no request of \"%s\" reaches service \"%s\": the call would never be made; "
                    "did you mean \"%s\"?",
                    shown, svc->name, near);
  } else {
    method_list(r, (int)s, list, sizeof list);
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "no request of \"%s\" reaches service \"%s\": the call would never be made "
                    "(methods that reach it: %s)",
                    shown, svc->name, list);
  }
  return false;
}

/* Every name of every call's "when_method" must be a method that reaches the call's service
 * (its clients' methods, its callers' calls, fallbacks and init calls to it): a route to any
 * other method never takes a request. A service that no request reaches at all is left alone:
 * none of its calls is ever made, whatever its routes say, and that is not the route's fault. */
static bool check_routes(scn_ctx *c, json_t *doc) {
  const model_config *cfg = c->cfg;
  bool any = false;
  for (size_t s = 0; s < cfg->n_services && !any; s++)
    for (size_t j = 0; j < cfg->services[s].n_calls && !any; j++)
      any = cfg->services[s].calls[j].n_when_method > 0;
  if (!any) return true;
  reach r = {NULL, NULL};
  bool ok = reach_build(cfg, &r);
  if (!ok) retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory loading the scenario");
  for (size_t s = 0; ok && s < cfg->n_services; s++) {
    const model_service_cfg *svc = &cfg->services[s];
    for (size_t j = 0; ok && j < svc->n_calls && r.at[s + 1] > r.at[s]; j++)
      for (size_t k = 0; ok && k < svc->calls[j].n_when_method; k++)
        if (!reaches(&r, (int)s, svc->calls[j].when_method[k]))
          ok = route_error(c, doc, &r, s, j, k);
  }
  free(r.m);
  free(r.at);
  return ok;
}

/* }================================================================== */

/* {==================================================================
 * scale: an event to the count already in force
 * =================================================================== */

/* Whether an operator's action sets service s's replica count: the count in force before a
 * scale event is then not known from the config alone. */
static bool operator_sets_replicas(const model_config *cfg, int s) {
  for (size_t i = 0; cfg->ops != NULL && i < cfg->ops->n_ops; i++)
    if (cfg->ops->ops[i].action.kind == MODEL_ACTION_REPLICAS &&
        cfg->ops->ops[i].action.service == s)
      return true;
  return false;
}

/* Without an autoscaler or an operator's "replicas" action on the service, the count in force
 * at a scale event is the previous event's (the configured "replicas" before the first): an
 * event to that count adds and removes nothing. */
static bool check_scale(scn_ctx *c) {
  const model_config *cfg = c->cfg;
  for (size_t s = 0; s < cfg->n_services; s++) {
    const model_service_cfg *svc = &cfg->services[s];
    const model_ctl_cfg *k = svc->ctl;
    if (k == NULL || k->n_scale == 0 || k->autoscaler_on || operator_sets_replicas(cfg, (int)s))
      continue;
    int32_t now = svc->replicas;
    for (int32_t i = 0; i < k->n_scale; i++) {
      if (k->scale[i].replicas != now) {
        now = k->scale[i].replicas;
        continue;
      }
      retry_json_path_push_key(&c->j, "services");
      retry_json_path_push_key(&c->j, svc->name);
      retry_json_path_push_key(&c->j, "scale");
      retry_json_path_push_index(&c->j, (size_t)i);
      retry_json_path_push_key(&c->j, "replicas");
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "%d replicas are already in force (%s): this event would change nothing; "
                      "give another count or remove it",
                      (int)now, i == 0 ? "the service's \"replicas\"" : "the event before");
      return false;
    }
  }
  return true;
}

/* }================================================================== */

/* The base of a document with variants is built to check what the variants share, but never
 * runs: what reaches a service, and whether an autoscaler or operator acts, are judged on each
 * variant's own document (which has no "variants"), so that a base completed only by its
 * variants is not refused. */
bool expt__scenario_check_inert(scn_ctx *c, json_t *doc) {
  if (retry_json_field(doc, "variants") != NULL) return true;
  return check_routes(c, doc) && check_scale(c);
}
