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

/* {==================================================================
 * Linkerd ServiceProfile (linkerd.io/v1alpha2)
 * =================================================================== */

/* gRPC's failure codes by default in Linkerd's gRPC classifier (client-policy grpc.rs). */
static const char *const linkerd_grpc_failures[] = {"DATA_LOSS", "DEADLINE_EXCEEDED", "INTERNAL",
                                                    "PERMISSION_DENIED", "UNAVAILABLE", "UNKNOWN"};

/* A route's gRPC name from its condition's pathRegex when that is a literal "/pkg.Svc/Method"
 * (or "/pkg.Svc/.*"); "" otherwise. Returns whether it named gRPC methods. */
static bool profile_route_name(json_t *cond, char *service, char *method, size_t size) {
  const char *re = json_string_value(json_object_get(cond, "pathRegex"));
  service[0] = method[0] = '\0';
  if (re == NULL || re[0] != '/') return false;
  const char *slash = strchr(re + 1, '/');
  if (slash == NULL || memchr(re + 1, '.', (size_t)(slash - re - 1)) == NULL) return false;
  size_t svc = (size_t)(slash - re - 1);
  if (svc >= size || strpbrk(slash + 1, "/[(|+?^$\\") != NULL) return false;
  for (size_t i = 0; i < svc; i++)
    if (strchr("[(|*+?^$\\", re[1 + i]) != NULL) return false;
  snprintf(service, size, "%.*s", (int)svc, re + 1);
  /* Regex dots in the service name are literal enough: Linkerd matches the whole path. */
  if (strcmp(slash + 1, ".*") != 0) {
    if (strchr(slash + 1, '*') != NULL || strchr(slash + 1, '.') != NULL) return service[0] = '\0', false;
    snprintf(method, size, "%s", slash + 1);
  }
  return true;
}

/* The HTTP statuses a route's responseClasses call failures, into codes (a "5xx" class when a
 * range is 500..599). Returns the array, or NULL after a warning when none can be read. */
static json_t *profile_failure_classes(imp_ctx *c, json_t *classes, const char *src) {
  json_t *codes = json_array();
  size_t i;
  json_t *rc;
  char p[IMP_PATH];
  json_array_foreach(classes, i, rc) {
    imp_path_index(p, src, i);
    if (!json_is_true(json_object_get(rc, "isFailure"))) continue;
    json_t *st = json_object_get(json_object_get(rc, "condition"), "status");
    json_t *mn = json_object_get(st, "min"), *mx = json_object_get(st, "max");
    if (!json_is_integer(mn) && !json_is_integer(mx)) {
      imp_warn(c, p, "a response class that is not one status range (all, any, not) is not "
                     "modelled");
      continue;
    }
    long long lo = json_is_integer(mn) ? json_integer_value(mn) : 100;
    long long hi = json_is_integer(mx) ? json_integer_value(mx) : 599;
    if (lo == 500 && hi == 599) {
      json_array_append_new(codes, json_string("5xx"));
      continue;
    }
    for (long long s = lo < 100 ? 100 : lo; s <= hi && s <= 599; s++)
      if (s < 200 || s >= 300) json_array_append_new(codes, json_integer(s));
  }
  return codes;
}

/* One profile route as a methodConfig entry: retried immediately, without a count limit (the
 * budget is the only bound), when isRetryable. */
static int profile_route(imp_ctx *c, json_t *route, const char *src, json_t *entries,
                         json_t *top, json_t *seen) {
  char out[IMP_PATH], p[IMP_PATH], q[IMP_PATH], d[40];
  char service[128], method[128];
  bool grpc = profile_route_name(json_object_get(route, "condition"), service, method, sizeof service);
  char key[300];
  snprintf(key, sizeof key, "%s/%s", service, method);
  if (json_object_get(seen, key) != NULL) {
    imp_warn(c, src, "an earlier route matches the same methods first: this one is never used");
    return 0;
  }
  if (!grpc)
    imp_warn(c, imp_path_key(p, src, "condition"), "the condition is not a gRPC method path "
             "(\"/pkg.Svc/Method\"): the route's policy applies to every method");
  json_object_set_new(seen, key, json_true());
  imp_path_index(out, "$.methodConfig", json_array_size(entries));
  json_t *entry = json_object(), *name = json_object();
  if (entry == NULL || name == NULL || json_array_append_new(entries, entry) != 0)
    return json_decref(name), imp_oom(c);
  if (service[0]) json_object_set_new(name, "service", json_string(service));
  if (method[0]) json_object_set_new(name, "method", json_string(method));
  json_object_set_new(entry, "name", json_pack("[o]", name));
  imp_origin(c, imp_path_key(p, out, "name"), grpc ? imp_path_key(q, src, "condition.pathRegex") : NULL,
             grpc ? NULL : "every method");
  int64_t t;
  if (duration(c, route, "timeout", src, &t, q) < 0) return -1;
  if (json_object_get(route, "timeout") != NULL && t > 0) {
    imp_duration_format(t, d, sizeof d);
    json_object_set_new(entry, "timeout", json_string(d));
    imp_origin(c, imp_path_key(p, out, "timeout"), q, "covers every retry");
  }
  if (!json_is_true(json_object_get(route, "isRetryable"))) {
    imp_origin(c, imp_path_key(p, out, "retryPolicy"), NULL, "isRetryable is not true: not retried");
    return 0;
  }
  json_t *classes = json_object_get(route, "responseClasses");
  json_t *codes;
  bool http = !grpc || classes != NULL;
  const char *codes_note;
  if (classes != NULL) {
    codes = profile_failure_classes(c, classes, imp_path_key(q, src, "responseClasses"));
    codes_note = NULL;
  } else if (grpc) {
    codes = json_array();
    for (size_t i = 0; i < 6; i++) json_array_append_new(codes, json_string(linkerd_grpc_failures[i]));
    codes_note = "Linkerd's gRPC failures by default (UNVERIFIED which classifier a profile route "
                 "without response classes uses)";
  } else {
    codes = json_pack("[s]", "5xx");
    codes_note = "Linkerd's default failure class: HTTP 5xx";
  }
  if (codes == NULL) return imp_oom(c);
  if (json_array_size(codes) == 0) {
    json_decref(codes);
    imp_warn(c, src, "isRetryable, but no response class is a failure retrysim can read: not retried");
    return 0;
  }
  char rp[IMP_PATH], ext[IMP_PATH];
  imp_path_key(rp, out, "retryPolicy");
  imp_path_key(ext, out, "retrysim");
  json_t *pol = json_pack("{s:i, s:s, s:s, s:i, s:o}", "maxAttempts", 1000, "initialBackoff",
                          "0.000000001s", "maxBackoff", "0.000000001s", "backoffMultiplier", 1,
                          "retryableStatusCodes", codes);
  json_t *x = json_pack("{s:s, s:s}", "statusSpace", http ? "http" : "grpc", "jitter", "none");
  if (pol == NULL || x == NULL) return json_decref(pol), json_decref(x), imp_oom(c);
  json_object_set_new(entry, "retryPolicy", pol);
  json_object_set_new(entry, "retrysim", x);
  if (http) json_object_set_new(x, "honorRetryAfter", json_false());
  char isr[IMP_PATH];
  imp_path_key(isr, src, "isRetryable");
  imp_origin(c, imp_path_key(p, rp, "maxAttempts"), isr,
             "Linkerd retries a retryable route without a count limit while the budget allows: "
             "1000, the most retrysim allows");
  imp_origin(c, imp_path_key(p, rp, "initialBackoff"), isr, "retried at once: no back-off on this path");
  imp_origin(c, imp_path_key(p, rp, "maxBackoff"), isr, "retried at once");
  imp_origin(c, imp_path_key(p, rp, "backoffMultiplier"), isr, "retried at once");
  imp_origin(c, imp_path_key(p, rp, "retryableStatusCodes"),
             classes != NULL ? imp_path_key(q, src, "responseClasses") : NULL, codes_note);
  imp_origin(c, imp_path_key(p, ext, "statusSpace"), NULL, "the space of the route's failures");
  imp_origin(c, imp_path_key(p, ext, "jitter"), NULL, "no back-off, so no jitter");
  json_object_set_new(top, "maxAttemptsLimit", json_integer(1000));
  imp_origin(c, "$.retrysim.maxAttemptsLimit", isr, "lifted so that the budget is the only bound");
  return 0;
}

/* retryBudget: Linkerd's names as the "linkerd" budget. With the block present, each omitted
 * field is zero (Go's zero value), and an omitted ttl fails the controller's translation. */
static int profile_budget(imp_ctx *c, json_t *rb, const char *src, json_t *top) {
  static const char *const known[] = {"retryRatio", "minRetriesPerSecond", "ttl"};
  char p[IMP_PATH];
  json_t *b;
  if (rb == NULL) {
    b = json_pack("{s:s, s:f, s:i, s:s}", "type", "linkerd", "retryRatio", 0.2,
                  "minRetriesPerSecond", 10, "ttl", "10s");
    if (b == NULL || json_object_set_new(top, "budget", b) != 0) return imp_oom(c);
    imp_origin(c, "$.retrysim.budget", NULL, "Linkerd's default budget (no retryBudget): 20 %, "
                                             "10 retries per second, ttl 10 s");
    return 0;
  }
  imp_check_keys(c, rb, src, known, 3, NULL, 0);
  double ratio = 0;
  long long min = 0;
  if (imp_number(c, rb, "retryRatio", src, &ratio) < 0) return -1;
  if (ratio < 0) return imp_fail(c, imp_path_key(p, src, "retryRatio"), "retryRatio must be >= 0");
  if (imp_int(c, rb, "minRetriesPerSecond", src, 0, 4294967295LL, &min) < 0) return -1;
  json_t *ttl = json_object_get(rb, "ttl");
  if (!json_is_string(ttl))
    return imp_fail(c, src, "\"ttl\" is required in a retryBudget (Linkerd's controller fails "
                            "to translate the profile without it)");
  b = json_pack("{s:s, s:f, s:I, s:O}", "type", "linkerd", "retryRatio", ratio,
                "minRetriesPerSecond", (json_int_t)min, "ttl", ttl);
  if (b == NULL || json_object_set_new(top, "budget", b) != 0) return imp_oom(c);
  imp_origin(c, "$.retrysim.budget.type", src,
             "Linkerd's budget, as tower rounds it; retrysim deposits when a call starts, "
             "Linkerd's proxy at the request's final response: the same count, earlier");
  static const char *const keys[] = {"retryRatio", "minRetriesPerSecond", "ttl"};
  for (size_t i = 0; i < 3; i++) {
    char out[IMP_PATH];
    bool given = json_object_get(rb, keys[i]) != NULL;
    imp_origin(c, imp_path_key(out, "$.retrysim.budget", keys[i]),
               given ? imp_path_key(p, src, keys[i]) : NULL,
               given ? NULL : "omitted in a retryBudget block: zero, as Linkerd's controller reads it");
  }
  return 0;
}

/* Whether docs hold a ServiceProfile. */
static bool has_profile(json_t *docs) {
  size_t i;
  json_t *d;
  json_array_foreach(docs, i, d) {
    const char *kind = json_string_value(json_object_get(d, "kind"));
    if (kind != NULL && strcmp(kind, "ServiceProfile") == 0) return true;
  }
  return false;
}

int expt__import_linkerd(imp_ctx *c, json_t *docs, json_t *config) {
  json_t *entries = json_array(), *top = json_object(), *seen = json_object();
  int rc = entries && top && seen ? 0 : imp_oom(c);
  size_t i;
  json_t *d;
  bool any = false;
  /* Without a ServiceProfile, the annotations of Linkerd >= 2.16 are the policy. */
  if (rc == 0 && !has_profile(docs)) rc = expt__import_linkerd_annotated(c, docs, entries, top);
  json_array_foreach(docs, i, d) {
    if (rc != 0 || !has_profile(docs)) break;
    c->doc = (int)i;
    const char *kind = json_string_value(json_object_get(d, "kind"));
    json_t *spec = json_object_get(d, "spec");
    if (expt__import_is_linkerd_annotated(d)) {
      imp_warn(c, "$.metadata.annotations", "Linkerd ignores the retry and timeout annotations "
               "of a service that has a ServiceProfile: not read");
      continue;
    }
    if (kind == NULL || strcmp(kind, "ServiceProfile") != 0 || !json_is_object(spec)) {
      imp_warn(c, "$.kind", "a %s is not read: retrysim reads Linkerd's ServiceProfile, or the "
                            "retry.linkerd.io annotations of routes and Services without one",
               kind != NULL ? kind : "resource without a kind");
      continue;
    }
    if (any) {
      imp_warn(c, "$", "a second ServiceProfile: a policy is one service's, this one is not read");
      continue;
    }
    any = true;
    json_t *routes = json_object_get(spec, "routes");
    size_t j;
    json_t *r;
    char p[IMP_PATH];
    json_array_foreach(routes, j, r) {
      if (rc != 0) break;
      rc = profile_route(c, r, imp_path_index(p, "$.spec.routes", j), entries, top, seen);
    }
    if (rc == 0) rc = profile_budget(c, json_object_get(spec, "retryBudget"), "$.spec.retryBudget", top);
    if (json_object_get(spec, "dstOverrides") != NULL)
      imp_warn(c, "$.spec.dstOverrides", "traffic splitting is not modelled");
  }
  c->doc = 0;
  if (rc == 0 && c->err->code == RETRY_OK) {
    if (json_array_size(entries) > 0) json_object_set(config, "methodConfig", entries);
    if (json_object_size(top) > 0) json_object_set(config, "retrysim", top);
  }
  json_decref(entries);
  json_decref(top);
  json_decref(seen);
  return c->err->code == RETRY_OK ? rc : -1;
}

/* }================================================================== */

/* {==================================================================
 * Gateway API: HTTPRoute retry (GEP-1731), XBackendTrafficPolicy budget (GEP-3388)
 * =================================================================== */

/* One HTTPRoute rule, as Istio implements GEP-1731 (the GEP leaves attempts, back-off shape
 * and jitter to implementations): attempts default 2, Envoy's full jitter from backoff with a
 * cap of 10 x, connection errors always retried. */
static int gateway_rule(imp_ctx *c, json_t *rule, const char *src, json_t *entries, json_t *top,
                        json_t *seen) {
  static const char *const known[] = {"codes", "attempts", "backoff"};
  imp_route r;
  imp_route_init(&r);
  char p[IMP_PATH], rs[IMP_PATH];
  json_t *m = json_object_get(json_array_get(json_object_get(rule, "matches"), 0), "path");
  const char *pv = json_string_value(json_object_get(m, "value"));
  if (pv != NULL) {
    snprintf(p, sizeof p, "%s.matches[0].path.value", src);
    imp_grpc_name(c, &r, pv, p);
  }
  json_t *to = json_object_get(rule, "timeouts");
  if (json_is_object(to)) {
    imp_path_key(p, src, "timeouts");
    if (duration(c, to, "request", p, &r.timeout_ns, r.timeout_from) < 0 ||
        duration(c, to, "backendRequest", p, &r.per_try_ns, r.per_try_from) < 0)
      return -1;
  }
  json_t *rt = json_object_get(rule, "retry");
  imp_path_key(rs, src, "retry");
  if (rt == NULL) {
    r.retries_note = "no retry stanza: not retried";
  } else {
    imp_check_keys(c, rt, rs, known, 3, NULL, 0);
    long long n = 2;
    int rc = imp_int(c, rt, "attempts", rs, 1, 2147483647LL, &n);
    if (rc < 0) return -1;
    r.retries = n;
    if (rc == 1) imp_path_key(r.retries_from, rs, "attempts");
    else r.retries_note = "implementation-specific; Istio's 2 retries";
    if (duration(c, rt, "backoff", rs, &r.base_ns, r.base_from) < 0) return -1;
    json_t *codes = json_object_get(rt, "codes");
    size_t i;
    json_t *v;
    r.on = IMP_ON_CONNECT;
    r.on_note = "connection errors (SHOULD in GEP-1731) and the codes";
    json_array_foreach(codes, i, v) {
      if (!json_is_integer(v) || json_integer_value(v) < 400 || json_integer_value(v) > 599)
        return imp_fail(c, imp_path_index(p, imp_path_key(p, rs, "codes"), i), "a code is an HTTP status in 400..599");
      if (r.n_codes < IMP_MAX_CODES) r.codes[r.n_codes++] = (int)json_integer_value(v);
      imp_path_key(r.on_from, rs, "codes");
    }
    if (r.n_codes == 0) {
      /* Connection errors only: in the world, what a down replica answers over HTTP. */
      r.codes[r.n_codes++] = 503;
      imp_warn(c, rs, "no codes: only connection errors are retried, which here are a down "
                      "replica's 503; a 503 the service itself returns is retried too");
    }
  }
  char key[300];
  snprintf(key, sizeof key, "%s/%s", r.service, r.method);
  if (json_object_get(seen, key) != NULL) {
    imp_warn(c, src, "an earlier rule matches the same methods first: this one is never used");
    return 0;
  }
  json_object_set_new(seen, key, json_true());
  return imp_route_emit(c, &r, entries, top);
}

/* XBackendTrafficPolicy's retryConstraint as the Finagle budget: a share of the requests in a
 * window plus a minimum rate. The GEP leaves open whether retries count in the denominator;
 * Finagle counts original requests. */
static int gateway_budget(imp_ctx *c, json_t *rc, const char *src, json_t *top) {
  char p[IMP_PATH], d[40];
  json_t *b = json_object_get(rc, "budget"), *mr = json_object_get(rc, "minRetryRate");
  double percent = 20;
  int64_t interval = 10000000000LL, mr_int = 1000000000LL;
  long long count = 10;
  char bp[IMP_PATH], ip[IMP_PATH] = "", cp[IMP_PATH] = "", mp[IMP_PATH] = "";
  imp_path_key(bp, src, "budget");
  if (json_is_object(b) && imp_number(c, b, "percent", bp, &percent) < 0) return -1;
  if (json_is_object(b) && duration(c, b, "interval", bp, &interval, ip) < 0) return -1;
  imp_path_key(p, src, "minRetryRate");
  if (json_is_object(mr) && imp_int(c, mr, "count", p, 1, 1000000, &count) < 0) return -1;
  if (json_is_object(mr) && duration(c, mr, "interval", p, &mr_int, mp) < 0) return -1;
  if (json_is_object(mr) && json_object_get(mr, "count") != NULL) imp_path_key(cp, p, "count");
  if (percent < 0 || percent > 100) return imp_fail(c, bp, "\"percent\" must be in 0..100");
  if (interval < 1000000000LL || interval > 60000000000LL) {
    imp_warn(c, ip[0] ? ip : bp, "the window is kept in [1s, 60s], the Finagle budget's range");
    interval = interval < 1000000000LL ? 1000000000LL : 60000000000LL;
  }
  long long per_s = mr_int > 0 ? (long long)((double)count * 1e9 / (double)mr_int + 0.5) : count;
  imp_duration_format(interval, d, sizeof d);
  json_t *o = json_pack("{s:s, s:s, s:I, s:f}", "type", "finagle", "ttl", d, "minRetriesPerSec",
                        (json_int_t)per_s, "percentCanRetry", percent / 100);
  if (o == NULL || json_object_set_new(top, "budget", o) != 0) return imp_oom(c);
  imp_warn(c, src, "GEP-3388 leaves open whether retries count among the requests of the "
                   "window: retrysim's finagle budget counts original requests (Envoy counts every "
                   "upstream request; Istio runs this as an Envoy budget of concurrent retries)");
  imp_origin(c, "$.retrysim.budget.type", src, "a share of the requests in a window: Finagle's budget");
  imp_origin(c, "$.retrysim.budget.ttl", ip[0] ? ip : NULL, ip[0] ? NULL : "GEP-3388's default interval, 10 s");
  imp_origin(c, "$.retrysim.budget.minRetriesPerSec", cp[0] ? cp : NULL,
             "minRetryRate count per interval, as retries per second (default 10 per 1 s)");
  imp_origin(c, "$.retrysim.budget.percentCanRetry", json_object_get(b, "percent") ? imp_path_key(p, bp, "percent") : NULL,
             "percent / 100 (default 20 %)");
  return 0;
}

int expt__import_gateway(imp_ctx *c, json_t *docs, json_t *config) {
  json_t *entries = json_array(), *top = json_object(), *seen = json_object();
  int rc = entries && top && seen ? 0 : imp_oom(c);
  size_t i;
  json_t *d;
  json_array_foreach(docs, i, d) {
    if (rc != 0) break;
    c->doc = (int)i;
    const char *kind = json_string_value(json_object_get(d, "kind"));
    json_t *spec = json_object_get(d, "spec");
    if (kind != NULL && strcmp(kind, "HTTPRoute") == 0 && json_is_object(spec)) {
      json_t *rules = json_object_get(spec, "rules");
      size_t j;
      json_t *rule;
      char p[IMP_PATH];
      json_array_foreach(rules, j, rule) {
        if (rc != 0) break;
        rc = gateway_rule(c, rule, imp_path_index(p, "$.spec.rules", j), entries, top, seen);
      }
      json_t *ann = json_object_get(json_object_get(d, "metadata"), "annotations");
      const char *k;
      json_t *v;
      json_object_foreach(ann, k, v) if (strncmp(k, "retry.linkerd.io/", 17) == 0 ||
                                         strncmp(k, "timeout.linkerd.io/", 19) == 0) {
        imp_warn(c, "$.metadata.annotations", "Linkerd's retry and timeout annotations are not read yet");
        break;
      }
    } else if (kind != NULL && strcmp(kind, "XBackendTrafficPolicy") == 0 && json_is_object(spec)) {
      json_t *rcn = json_object_get(spec, "retryConstraint");
      if (json_object_get(top, "budget") != NULL)
        imp_warn(c, "$.spec", "a second backend traffic policy: a policy has one channel, not read");
      else if (json_is_object(rcn))
        rc = gateway_budget(c, rcn, "$.spec.retryConstraint", top);
    } else {
      imp_warn(c, "$.kind", "a %s is not read: retrysim reads the Gateway API's HTTPRoute and "
                            "XBackendTrafficPolicy", kind != NULL ? kind : "resource without a kind");
    }
  }
  c->doc = 0;
  if (rc == 0 && c->err->code == RETRY_OK) {
    if (json_array_size(entries) > 0) json_object_set(config, "methodConfig", entries);
    if (json_object_size(top) > 0) json_object_set(config, "retrysim", top);
  }
  json_decref(entries);
  json_decref(top);
  json_decref(seen);
  return c->err->code == RETRY_OK ? rc : -1;
}

/* }================================================================== */
