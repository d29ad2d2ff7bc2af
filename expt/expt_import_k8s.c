/*
 * expt_import_k8s.c: Kubernetes resources that carry retry policies, read verbatim: Istio's
 * VirtualService (spec.http[].retries, timeout) and DestinationRule (trafficPolicy's retry
 * budget and connection pool retries). Istio turns them into Envoy config, so each route is
 * filled in Envoy's terms and emitted by expt_import_envoy.c. Semantics from Istio's API and
 * its translation (pilot's route/retry), as /work/research/policy-formats.md section 2 records
 * them (docs/policy-formats.md, "Istio").
 * Invariant: a route without `retries` gets Istio's default policy, and the printout says so.
 */
#include <stdio.h>
#include <string.h>

#include "expt/expt_import_int.h"

/* Istio's outbound default (pilot retry.go DefaultPolicy, Istio >= 1.24: no 503 in the codes). */
#define ISTIO_DEFAULT_RETRY_ON "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"
#define ISTIO_DEFAULT_NOTE "Istio's default, since the route has no retries: 2 retries on " \
                           "connect-failure, refused-stream, unavailable, cancelled (no HTTP status " \
                           "since Istio 1.24)"

/* Istio's default retries on r, every field noted as the default. */
static void istio_default(imp_ctx *c, imp_route *r) {
  r->retries = 2;
  r->retries_note = ISTIO_DEFAULT_NOTE;
  r->on_note = ISTIO_DEFAULT_NOTE;
  r->on_from[0] = '\0';
  imp_retry_on_parse(c, r, ISTIO_DEFAULT_RETRY_ON, "$", false);
}

/* A Go duration of obj[key] (Istio writes "800ms", "1h"): 1 with *ns and from set, 0, -1. */
static int duration(imp_ctx *c, json_t *obj, const char *key, const char *src, int64_t *ns,
                    char *from) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) return 0;
  char p[IMP_PATH];
  imp_path_key(p, src, key);
  if (imp_duration(c, v, p, ns) < 0) return -1;
  snprintf(from, IMP_PATH, "%s", p);
  return 1;
}

/* HTTPRetry at src into r (Istio's validation: attempts >= 0; 0 with other fields is an error). */
static int read_retries(imp_ctx *c, imp_route *r, json_t *rt, const char *src) {
  static const char *const known[] = {"attempts", "perTryTimeout", "retryOn", "backoff"};
  static const imp_unmodelled skip[] = {
      {"retryRemoteLocalities", "localities are not modelled"},
      {"retryIgnorePreviousHosts", "which host a retry goes to is the world's load balancer's choice"}};
  char p[IMP_PATH];
  if (!json_is_object(rt)) return imp_fail(c, src, "\"retries\" must be a mapping");
  imp_check_keys(c, rt, src, known, 4, skip, 2);
  long long n = 0;
  int rc = imp_int(c, rt, "attempts", src, 0, 2147483647LL, &n);
  if (rc < 0) return -1;
  if (n == 0) {
    if (json_object_get(rt, "perTryTimeout") || json_object_get(rt, "retryOn") ||
        json_object_get(rt, "retryRemoteLocalities"))
      return imp_fail(c, src, "http retry policy configured when attempts are set to 0 (disabled): "
                              "Istio refuses this");
    r->retries = 0;
    if (rc == 1) imp_path_key(r->retries_from, src, "attempts");
    else r->retries_note = "no attempts: Istio's retries are off for this route";
    return 0;
  }
  r->retries = n;
  imp_path_key(r->retries_from, src, "attempts");
  json_t *on = json_object_get(rt, "retryOn");
  if (on != NULL && !json_is_string(on))
    return imp_fail(c, imp_path_key(p, src, "retryOn"), "\"retryOn\" must be a string");
  if (on != NULL) {
    imp_path_key(r->on_from, src, "retryOn");
    imp_retry_on_parse(c, r, json_string_value(on), r->on_from, true);
  } else {
    r->on_note = "Istio's default retryOn (connect-failure,refused-stream,unavailable,cancelled)";
    imp_retry_on_parse(c, r, ISTIO_DEFAULT_RETRY_ON, "$", false);
  }
  if (duration(c, rt, "perTryTimeout", src, &r->per_try_ns, r->per_try_from) < 0) return -1;
  /* backoff is Envoy's base interval only; the max stays 10 x base. */
  if (duration(c, rt, "backoff", src, &r->base_ns, r->base_from) < 0) return -1;
  return 0;
}

/* The gRPC name of an HTTPRoute's first match (uri prefix or exact). */
static void match_name(imp_ctx *c, imp_route *r, json_t *route, const char *src) {
  json_t *m = json_object_get(route, "match");
  char p[IMP_PATH + 32];
  if (!json_is_array(m) || json_array_size(m) == 0) return;
  if (json_array_size(m) > 1)
    imp_warn(c, imp_path_key(p, src, "match"), "only the first match names the methods the policy "
                                              "applies to");
  json_t *uri = json_object_get(json_array_get(m, 0), "uri");
  const char *key = "prefix";
  json_t *v = json_object_get(uri, key);
  if (v == NULL) v = json_object_get(uri, key = "exact");
  if (!json_is_string(v)) return;
  snprintf(p, sizeof p, "%s.match[0].uri.%s", src, key);
  const char *s = json_string_value(v);
  const char *slash = s[0] == '/' ? strchr(s + 1, '/') : NULL;
  size_t svc = slash != NULL ? (size_t)(slash - s - 1) : 0;
  if (slash == NULL || memchr(s + 1, '.', svc) == NULL || svc >= sizeof r->service ||
      strchr(slash + 1, '/') != NULL) {
    if (strcmp(s, "/") != 0)
      imp_warn(c, p, "the match \"%s\" is not a gRPC service or method name: the policy is "
                     "applied to every method", s);
    return;
  }
  snprintf(r->service, sizeof r->service, "%.*s", (int)svc, s + 1);
  snprintf(r->method, sizeof r->method, "%s", slash + 1);
  snprintf(r->name_from, sizeof r->name_from, "%.255s", p);
}

static int read_virtual_service(imp_ctx *c, json_t *spec, const char *src, json_t *entries,
                                json_t *top, json_t *seen) {
  char p[IMP_PATH], q[IMP_PATH];
  json_t *http = json_object_get(spec, "http");
  if (http == NULL) {
    imp_warn(c, src, "no http routes: nothing to read (tcp and tls routes are not retried)");
    return 0;
  }
  imp_path_key(p, src, "http");
  if (!json_is_array(http)) return imp_fail(c, p, "\"http\" must be a list");
  size_t i;
  json_t *route;
  json_array_foreach(http, i, route) {
    imp_path_index(q, p, i);
    imp_route r;
    imp_route_init(&r);
    match_name(c, &r, route, q);
    r.timeout_note = NULL;
    if (duration(c, route, "timeout", q, &r.timeout_ns, r.timeout_from) < 0) return -1;
    char rp[IMP_PATH];
    json_t *retries = json_object_get(route, "retries");
    if (retries != NULL) {
      if (read_retries(c, &r, retries, imp_path_key(rp, q, "retries")) < 0) return -1;
    } else {
      istio_default(c, &r);
    }
    if (json_object_get(route, "fault") != NULL)
      imp_warn(c, imp_path_key(rp, q, "fault"), "fault injection is not read: give the scenario's "
                                                "service the faults instead");
    if (json_object_get(route, "mirror") != NULL)
      imp_warn(c, imp_path_key(rp, q, "mirror"), "mirroring is not modelled");
    char key[300];
    snprintf(key, sizeof key, "%s/%s", r.service, r.method);
    if (json_object_get(seen, key) != NULL) {
      imp_warn(c, q, "an earlier route matches the same methods first: this one is never used");
      continue;
    }
    json_object_set_new(seen, key, json_true());
    if (imp_route_emit(c, &r, entries, top) < 0) return -1;
  }
  return 0;
}

/* trafficPolicy: retryBudget (a percent, as Envoy's), else connectionPool.http.maxRetries as a
 * budget of 0 % with that minimum; Istio's own default is unlimited (2^32 - 1), i.e. none. */
static int read_traffic_policy(imp_ctx *c, json_t *tp, const char *src, json_t *top) {
  static const char *const known[] = {"retryBudget", "connectionPool"};
  static const imp_unmodelled skip[] = {
      {"outlierDetection", "it is a load balancer's (the world's) setting, not a policy's"},
      {"loadBalancer", "load balancing is the world's"},
      {"tls", "not retry-related"},
      {"portLevelSettings", "per-port policies are not read"},
      {"tunnel", "not retry-related"},
      {"proxyProtocol", "not retry-related"}};
  char p[IMP_PATH], pf[IMP_PATH] = "", mf[IMP_PATH] = "";
  imp_check_keys(c, tp, src, known, 2, skip, sizeof skip / sizeof skip[0]);
  json_t *rb = json_object_get(tp, "retryBudget");
  json_t *http = json_object_get(json_object_get(tp, "connectionPool"), "http");
  if (json_object_get(tp, "connectionPool") != NULL) {
    json_t *cp = json_object_get(tp, "connectionPool");
    const char *k;
    json_t *v;
    imp_path_key(p, src, "connectionPool");
    json_object_foreach(cp, k, v) if (strcmp(k, "http") != 0) {
      char q[IMP_PATH];
      imp_warn(c, imp_path_key(q, p, k), "connection pool limits are the world's, not a policy's");
    }
    if (json_is_object(http)) {
      const char *hk;
      imp_path_key(p, p, "http");
      json_object_foreach(http, hk, v) if (strcmp(hk, "maxRetries") != 0) {
        char q[IMP_PATH];
        imp_warn(c, imp_path_key(q, p, hk), "\"%s\" is not modelled: connection pool settings "
                                            "are the world's", hk);
      }
    }
  }
  if (rb != NULL) {
    static const char *const rb_known[] = {"percent", "minRetryConcurrency"};
    static const imp_unmodelled rb_skip[] = {
        {"budgetInterval", "retrysim's envoy budget counts requests in flight only (Istio's "
                           "default, 0); a sliding interval is not modelled"}};
    char b[IMP_PATH];
    imp_path_key(b, src, "retryBudget");
    imp_check_keys(c, rb, b, rb_known, 2, rb_skip, 1);
    double percent = 20;
    int rc = imp_number(c, rb, "percent", b, &percent);
    if (rc < 0) return -1;
    if (rc == 1) imp_path_key(pf, b, "percent");
    if (percent < 0 || percent > 100) return imp_fail(c, pf, "\"percent\" must be in 0..100");
    long long min = 3;
    rc = imp_int(c, rb, "minRetryConcurrency", b, 0, 4294967295LL, &min);
    if (rc < 0) return -1;
    if (rc == 1 && min > 0) imp_path_key(mf, b, "minRetryConcurrency");
    if (min == 0) min = 3; /* Istio's translation keeps 3 unless > 0 */
    if (json_is_object(http) && json_object_get(http, "maxRetries") != NULL)
      imp_warn(c, imp_path_key(p, p, "maxRetries"), "maxRetries is replaced by retryBudget, as in Envoy");
    return imp_budget_emit(c, top, percent, pf, min, mf, "Istio's retryBudget default (20 %, 3)");
  }
  long long n;
  int rc = json_is_object(http) ? imp_int(c, http, "maxRetries", p, 0, 4294967295LL, &n) : 0;
  if (rc <= 0) return rc;
  if (n == 0) return 0; /* Istio ignores 0 ("FIXME: zero is a valid value if explicitly set") */
  imp_path_key(mf, p, "maxRetries");
  return imp_budget_emit(c, top, 0, NULL, n, mf, "maxRetries as a budget: at most that many "
                                                 "retries in flight");
}

int expt__import_istio(imp_ctx *c, json_t *docs, json_t *config) {
  json_t *entries = json_array(), *top = json_object(), *seen = json_object();
  int rc = entries && top && seen ? 0 : imp_oom(c);
  bool any_vs = false;
  size_t i;
  json_t *d;
  json_array_foreach(docs, i, d) {
    if (rc != 0) break;
    c->doc = (int)i;
    const char *kind = json_string_value(json_object_get(d, "kind"));
    json_t *spec = json_object_get(d, "spec");
    if (kind != NULL && strcmp(kind, "VirtualService") == 0 && json_is_object(spec)) {
      any_vs = true;
      rc = read_virtual_service(c, spec, "$.spec", entries, top, seen);
    } else if (kind != NULL && strcmp(kind, "DestinationRule") == 0 && json_is_object(spec)) {
      json_t *tp = json_object_get(spec, "trafficPolicy");
      if (json_object_get(spec, "subsets") != NULL)
        imp_warn(c, "$.spec.subsets", "subsets' traffic policies are not read");
      if (json_is_object(tp) && json_object_get(top, "budget") != NULL)
        imp_warn(c, "$.spec.trafficPolicy", "a second DestinationRule: a policy has one channel, "
                                            "this one is not read");
      else if (json_is_object(tp))
        rc = read_traffic_policy(c, tp, "$.spec.trafficPolicy", top);
    } else {
      imp_warn(c, "$.kind", "a %s is not read: retrysim reads Istio's VirtualService and "
                            "DestinationRule", kind != NULL ? kind : "resource without a kind");
    }
  }
  c->doc = 0;
  if (rc == 0 && !any_vs) {
    /* A DestinationRule alone: the routes Istio generates get its default retries. */
    imp_route r;
    imp_route_init(&r);
    istio_default(c, &r);
    rc = imp_route_emit(c, &r, entries, top);
  }
  if (rc == 0 && c->err->code == RETRY_OK) {
    if (json_array_size(entries) > 0) json_object_set(config, "methodConfig", entries);
    if (json_object_size(top) > 0) json_object_set(config, "retrysim", top);
  }
  json_decref(entries);
  json_decref(top);
  json_decref(seen);
  return c->err->code == RETRY_OK ? rc : -1;
}
