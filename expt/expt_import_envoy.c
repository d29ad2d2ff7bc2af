/*
 * expt_import_envoy.c: Envoy's retry configuration read verbatim (a route's retry_policy, a
 * virtual host's, a cluster's circuit_breakers with retry_budget) and the emitter of one
 * route's policy as a methodConfig entry, which the Istio reader reuses since Istio emits Envoy
 * config. Semantics from Envoy's docs and source as /work/research/policy-formats.md section 1
 * records them (docs/policy-formats.md, "Envoy").
 * Invariant: every field read is either mapped (and its origin recorded) or warned about.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_import_int.h"
#include "retry/retry_json.h"

/* {==================================================================
 * retry_on
 * =================================================================== */

static const struct {
  const char *name;
  unsigned bit;
} conditions[] = {
    {"5xx", IMP_ON_5XX},
    {"gateway-error", IMP_ON_GATEWAY},
    {"retriable-4xx", IMP_ON_4XX},
    {"retriable-status-codes", IMP_ON_CODES},
    {"connect-failure", IMP_ON_CONNECT},
    {"reset", IMP_ON_RESET},
    {"reset-before-request", IMP_ON_RESET_BEFORE},
    {"refused-stream", IMP_ON_REFUSED},
    {"cancelled", IMP_ON_CANCELLED},
    {"deadline-exceeded", IMP_ON_DEADLINE},
    {"internal", IMP_ON_INTERNAL},
    {"resource-exhausted", IMP_ON_EXHAUSTED},
    {"unavailable", IMP_ON_UNAVAILABLE},
};

/* Conditions Envoy has that look at what the engine never sees. */
static const imp_unmodelled unseen_conditions[] = {
    {"retriable-headers", "it matches response headers, which the simulated world does not send"},
    {"envoy-ratelimited", "it matches Envoy's x-envoy-ratelimited header, never sent here"},
    {"http3-post-connect-failure", "HTTP/3 with TCP fallback is not modelled"},
};

void imp_route_init(imp_route *r) {
  memset(r, 0, sizeof *r);
  r->timeout_ns = -1;
  r->retries = -1;
  r->per_try_ns = -1;
}

/* Whether code is an HTTP status Go's http.StatusText knows (Istio's test), roughly: 1xx..5xx
 * with a standard meaning. We accept 100..599, as the loader does. */
static bool is_http_status(long v) { return v >= 100 && v <= 599; }

int imp_retry_on_parse(imp_ctx *c, imp_route *r, const char *list, const char *src,
                       bool allow_codes) {
  const char *names[sizeof conditions / sizeof conditions[0] + 3];
  size_t n = 0;
  for (size_t i = 0; i < sizeof conditions / sizeof conditions[0]; i++) names[n++] = conditions[i].name;
  for (size_t i = 0; i < 3; i++) names[n++] = unseen_conditions[i].key;
  char tok[64];
  for (const char *p = list; *p;) {
    size_t l = strcspn(p, ",");
    const char *b = p, *e = p + l;
    p = *e ? e + 1 : e;
    while (b < e && (*b == ' ' || *b == '\t')) b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t')) e--;
    if (b == e) continue;
    snprintf(tok, sizeof tok, "%.*s", (int)(e - b), b);
    bool found = false;
    for (size_t i = 0; i < sizeof conditions / sizeof conditions[0] && !found; i++)
      if (strcmp(tok, conditions[i].name) == 0) r->on |= conditions[i].bit, found = true;
    for (size_t i = 0; i < 3 && !found; i++)
      if (strcmp(tok, unseen_conditions[i].key) == 0) {
        imp_warn(c, src, "retry condition \"%s\" is not modelled: %s", tok, unseen_conditions[i].why);
        found = true;
      }
    char *end;
    long v = strtol(tok, &end, 10);
    if (!found && allow_codes && *end == '\0' && is_http_status(v)) {
      if (r->n_codes < IMP_MAX_CODES) r->codes[r->n_codes++] = (int)v;
      r->on |= IMP_ON_CODES;
      if (r->codes_from[0] == '\0') snprintf(r->codes_from, sizeof r->codes_from, "%s", src);
      found = true;
    }
    if (found) continue;
    const char *near = retry_json_suggest(tok, names, n, NULL);
    if (near != NULL)
      imp_warn(c, src, "unknown retry condition \"%s\" ignored; did you mean \"%s\"?", tok, near);
    else
      imp_warn(c, src, "unknown retry condition \"%s\" ignored (Envoy drops it too)", tok);
  }
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Emitting one route
 * =================================================================== */

/* The statuses a route retries, in the space it is emitted in: HTTP when the conditions name
 * HTTP statuses (5xx, gateway-error, retriable-4xx, explicit codes), else gRPC. A transport
 * condition (connect-failure, reset, refused-stream) becomes what a refused connection looks
 * like at the caller in the world: a replica that is down answers UNAVAILABLE (gRPC) or 503
 * (HTTP) (models/model_service.c, the `down` fault). */
static json_t *status_list(imp_ctx *c, const imp_route *r, bool *http, const char *src) {
  unsigned on = r->on;
  unsigned transport = IMP_ON_CONNECT | IMP_ON_RESET | IMP_ON_RESET_BEFORE | IMP_ON_REFUSED;
  unsigned grpc = IMP_ON_CANCELLED | IMP_ON_DEADLINE | IMP_ON_INTERNAL | IMP_ON_EXHAUSTED |
                  IMP_ON_UNAVAILABLE;
  *http = (on & (IMP_ON_5XX | IMP_ON_GATEWAY | IMP_ON_4XX)) != 0 || r->n_codes > 0;
  json_t *l = json_array();
  if (l == NULL) return NULL;
  if (*http) {
    if (on & IMP_ON_5XX) json_array_append_new(l, json_string("5xx"));
    if ((on & IMP_ON_GATEWAY) && !(on & IMP_ON_5XX)) json_array_append_new(l, json_string("gateway-error"));
    if (on & IMP_ON_4XX) json_array_append_new(l, json_string("retriable-4xx"));
    for (size_t i = 0; i < r->n_codes; i++) json_array_append_new(l, json_integer(r->codes[i]));
    bool has503 = false;
    for (size_t i = 0; i < r->n_codes; i++) has503 = has503 || r->codes[i] == 503;
    if ((on & transport) && !(on & (IMP_ON_5XX | IMP_ON_GATEWAY)) && !has503) {
      json_array_append_new(l, json_integer(503));
      imp_warn(c, src, "connection failures and resets are retried as 503, what a replica that "
                       "is down answers here; a 503 the service itself returns is retried too");
    }
    if (on & grpc)
      imp_warn(c, src, "the gRPC conditions of this policy are not modelled: it retries HTTP "
                       "statuses (it names 5xx, gateway-error, retriable-4xx or codes), and one "
                       "policy has one status space");
  } else {
    if (on & IMP_ON_CANCELLED) json_array_append_new(l, json_string("CANCELLED"));
    if (on & IMP_ON_DEADLINE) json_array_append_new(l, json_string("DEADLINE_EXCEEDED"));
    if (on & IMP_ON_INTERNAL) json_array_append_new(l, json_string("INTERNAL"));
    if (on & IMP_ON_EXHAUSTED) json_array_append_new(l, json_string("RESOURCE_EXHAUSTED"));
    if (on & (IMP_ON_UNAVAILABLE | transport)) json_array_append_new(l, json_string("UNAVAILABLE"));
    if ((on & transport) && !(on & IMP_ON_UNAVAILABLE))
      imp_warn(c, src, "connection failures and resets are retried as UNAVAILABLE, what a "
                       "replica that is down answers here; an UNAVAILABLE the service itself "
                       "returns is retried too");
  }
  return l;
}

/* Sets key in obj to v (stolen) and records where it came from. */
static void put(imp_ctx *c, json_t *obj, const char *out, const char *key, json_t *v,
                const char *src, const char *note) {
  char p[IMP_PATH];
  if (v == NULL || json_object_set_new(obj, key, v) != 0) {
    imp_oom(c);
    return;
  }
  imp_origin(c, imp_path_key(p, out, key), src, note);
}

static const char *or_null(const char *s) { return s != NULL && s[0] ? s : NULL; }

/* The maximum attempts limit of the top block raised to attempts when above gRPC's 5. */
static void lift_limit(imp_ctx *c, const imp_route *r, json_t *top, long long attempts) {
  if (attempts <= 5) return;
  /* Envoy has no cap like gRPC's 5: lift the client's cap to what the route asks. */
  json_t *t = json_object_get(top, "maxAttemptsLimit");
  if (t == NULL || json_integer_value(t) < attempts)
    put(c, top, "$.retrysim", "maxAttemptsLimit", json_integer(attempts > 1000 ? 1000 : attempts),
        or_null(r->retries_from), "Envoy has no cap on retries; gRPC's cap of 5 is lifted");
}

/* hedge_on_per_try_timeout as A6 hedging: at each per-try timeout Envoy sends another request
 * without cancelling the one in flight (route_components.proto HedgePolicy; router_filter
 * "hedging"), up to num_retries more; the first good response wins. Here a hedge is sent every
 * per_try_timeout, and a retryable status sends the next at once (nonFatalStatusCodes). */
static bool emit_hedging(imp_ctx *c, const imp_route *r, json_t *entry, const char *out,
                         json_t *top, json_t *codes, bool http) {
  char p[IMP_PATH], q[IMP_PATH], d[40];
  json_t *hp = json_object(), *ext = json_object();
  if (hp == NULL || ext == NULL || json_object_set_new(entry, "hedgingPolicy", hp) != 0 ||
      json_object_set_new(entry, "retrysim", ext) != 0)
    return json_decref(codes), imp_oom(c), false;
  imp_path_key(p, out, "hedgingPolicy");
  imp_path_key(q, out, "retrysim");
  long long attempts = r->retries + 1;
  put(c, hp, p, "maxAttempts", json_integer(attempts), or_null(r->retries_from),
      "num_retries + 1: each hedge counts as a retry");
  imp_duration_format(r->per_try_ns, d, sizeof d);
  put(c, hp, p, "hedgingDelay", json_string(d), r->per_try_from,
      "a hedge at each per-try timeout (hedge_on_per_try_timeout)");
  put(c, hp, p, "nonFatalStatusCodes", codes, or_null(r->on_from), r->on_note);
  put(c, ext, q, "statusSpace", json_string(http ? "http" : "grpc"), or_null(r->on_from),
      "the space the retry conditions name");
  imp_warn(c, r->hedge_from,
           "hedging is approximated: Envoy sends the hedge after the retry back-off, retrysim at "
           "the per-try timeout exactly; and a retryable response here sends the next hedge at "
           "once where Envoy waits the back-off");
  lift_limit(c, r, top, attempts);
  return true;
}

/* The retryPolicy of an entry and its retrysim block; false when the route does not retry. */
static bool emit_retries(imp_ctx *c, const imp_route *r, json_t *entry, const char *out,
                         json_t *top) {
  char p[IMP_PATH], q[IMP_PATH], d[40];
  bool http;
  json_t *codes = status_list(c, r, &http, or_null(r->on_from) ? r->on_from : "$");
  if (codes == NULL) return imp_oom(c), false;
  if (r->retries <= 0 || json_array_size(codes) == 0) {
    if (r->retries > 0)
      imp_warn(c, or_null(r->on_from) ? r->on_from : "$",
               "retry_on names no condition retrysim can see: the route is not retried");
    json_decref(codes);
    return false;
  }
  if (r->hedge && r->per_try_ns <= 0)
    imp_warn(c, r->hedge_from, "hedge_on_per_try_timeout without a per_try_timeout has no "
                               "effect: the route is imported as retries");
  if (r->hedge && r->per_try_ns > 0) return emit_hedging(c, r, entry, out, top, codes, http);
  json_t *rp = json_object(), *ext = json_object();
  if (rp == NULL || ext == NULL || json_object_set_new(entry, "retryPolicy", rp) != 0 ||
      json_object_set_new(entry, "retrysim", ext) != 0)
    return json_decref(codes), imp_oom(c), false;
  imp_path_key(p, out, "retryPolicy");
  imp_path_key(q, out, "retrysim");
  long long attempts = r->retries + 1;
  put(c, rp, p, "maxAttempts", json_integer(attempts), or_null(r->retries_from), r->retries_note);
  int64_t base = r->base_ns > 0 ? r->base_ns : 25000000, max = r->max_ns > 0 ? r->max_ns : 10 * base;
  imp_duration_format(base, d, sizeof d);
  put(c, rp, p, "initialBackoff", json_string(d), or_null(r->base_from),
      r->base_from[0] ? NULL : "Envoy's default base interval, 25 ms");
  imp_duration_format(max, d, sizeof d);
  put(c, rp, p, "maxBackoff", json_string(d), or_null(r->max_from),
      r->max_from[0] ? NULL : "Envoy's default max interval, 10 x the base interval");
  put(c, rp, p, "backoffMultiplier", json_integer(2), NULL, "Envoy doubles the interval");
  put(c, rp, p, "retryableStatusCodes", codes, or_null(r->on_from), r->on_note);
  put(c, ext, q, "statusSpace", json_string(http ? "http" : "grpc"), or_null(r->on_from),
      "the space the retry conditions name");
  put(c, ext, q, "jitter", json_string("full"), NULL,
      "Envoy draws U[0, min(2^(n-1) base, max)) in whole ms: full jitter");
  if (r->per_try_ns > 0) {
    imp_duration_format(r->per_try_ns, d, sizeof d);
    put(c, ext, q, "perAttemptTimeout", json_string(d), r->per_try_from, NULL);
  }
  if (http)
    put(c, ext, q, "honorRetryAfter", json_boolean(r->rate_limited), or_null(r->rate_limited_from),
        r->rate_limited ? NULL : "Envoy ignores Retry-After without rate_limited_retry_back_off");
  lift_limit(c, r, top, attempts);
  return true;
}

int imp_route_emit(imp_ctx *c, const imp_route *r, json_t *entries, json_t *top) {
  char out[IMP_PATH], p[IMP_PATH], d[40];
  imp_path_index(out, "$.methodConfig", json_array_size(entries));
  json_t *entry = json_object(), *name = json_object();
  if (entry == NULL || name == NULL || json_array_append_new(entries, entry) != 0)
    return json_decref(name), imp_oom(c);
  if (r->service[0]) json_object_set_new(name, "service", json_string(r->service));
  if (r->method[0]) json_object_set_new(name, "method", json_string(r->method));
  put(c, entry, out, "name", json_pack("[o]", name), or_null(r->name_from),
      r->service[0] ? NULL : "every method");
  if (r->timeout_ns > 0) {
    imp_duration_format(r->timeout_ns, d, sizeof d);
    put(c, entry, out, "timeout", json_string(d), or_null(r->timeout_from), r->timeout_note);
  }
  if (!emit_retries(c, r, entry, out, top))
    imp_origin(c, imp_path_key(p, out, "retryPolicy"), or_null(r->retries_from),
               r->retries <= 0 ? "no retries: no retry policy, or 0 retries" : "no retries");
  return c->err->code == RETRY_OK ? 0 : -1;
}

int imp_budget_emit(imp_ctx *c, json_t *top, double percent, const char *percent_from,
                    long long min_conc, const char *min_from, const char *note) {
  json_t *b = json_object();
  if (b == NULL || json_object_set_new(top, "budget", b) != 0) return imp_oom(c);
  put(c, b, "$.retrysim.budget", "type", json_string("envoy"), NULL, note);
  put(c, b, "$.retrysim.budget", "budgetPercent", json_real(percent), or_null(percent_from),
      or_null(percent_from) ? NULL : note);
  put(c, b, "$.retrysim.budget", "minRetryConcurrency", json_integer(min_conc), or_null(min_from),
      or_null(min_from) ? NULL : note);
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Reading Envoy
 * =================================================================== */

static const char *const envoy_top_keys[] = {"retry_policy", "route", "routes", "virtual_hosts",
                                             "route_config", "clusters", "circuit_breakers",
                                             "outlier_detection", "static_resources"};

bool expt__import_is_envoy(json_t *doc) {
  if (!json_is_object(doc)) return false;
  for (size_t i = 0; i < sizeof envoy_top_keys / sizeof envoy_top_keys[0]; i++)
    if (json_object_get(doc, envoy_top_keys[i]) != NULL) return true;
  return false;
}

/* A duration field of obj at src: 1 with *ns and *from set, 0 absent, -1. */
static int get_duration(imp_ctx *c, json_t *obj, const char *key, const char *src, int64_t *ns,
                        char *from) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) return 0;
  char p[IMP_PATH];
  imp_path_key(p, src, key);
  if (imp_duration(c, v, p, ns) < 0) return -1;
  if (from != NULL) snprintf(from, IMP_PATH, "%s", p);
  return 1;
}

/* retry_back_off: base required, at least 1 ms (Envoy rounds up), max >= base. */
static int read_back_off(imp_ctx *c, imp_route *r, json_t *bo, const char *src) {
  static const char *const known[] = {"base_interval", "max_interval"};
  imp_check_keys(c, bo, src, known, 2, NULL, 0);
  int rc = get_duration(c, bo, "base_interval", src, &r->base_ns, r->base_from);
  if (rc == 0) return imp_fail(c, src, "\"base_interval\" is required in retry_back_off");
  if (rc < 0 || get_duration(c, bo, "max_interval", src, &r->max_ns, r->max_from) < 0) return -1;
  if (r->base_ns < 1000000) r->base_ns = 1000000;
  if (r->max_from[0] && r->max_ns < 1000000) r->max_ns = 1000000;
  if (r->max_from[0] && r->max_ns < r->base_ns)
    return imp_fail(c, r->max_from, "\"max_interval\" must be at least \"base_interval\"");
  if (r->max_from[0] && (r->max_ns / 1000000) % 2 == 1 && r->max_ns / 2 > r->base_ns)
    imp_warn(c, r->max_from, "an odd max_interval in ms makes Envoy jump to it one step early "
                             "(it compares with max/2 in whole ms); retrysim doubles exactly");
  return 0;
}

static const imp_unmodelled retry_policy_unmodelled[] = {
    {"per_try_idle_timeout", "an idle timer on a streaming response; attempts here are unary"},
    {"retry_priority", "priority levels and localities are not modelled"},
    {"retry_host_predicate", "which host a retry goes to is the world's load balancer's choice"},
    {"host_selection_retry_max_attempts", "host selection is the world's load balancer's"},
    {"retriable_headers", "the world's responses carry no headers"},
    {"retriable_request_headers", "requests carry no headers here"},
    {"retry_options_predicates", "Envoy has no built-in extension for it"},
};

/* A RetryPolicy object at src into r. */
static int read_retry_policy(imp_ctx *c, imp_route *r, json_t *rp, const char *src) {
  static const char *const known[] = {"retry_on", "num_retries", "per_try_timeout",
                                      "retriable_status_codes", "retry_back_off",
                                      "rate_limited_retry_back_off"};
  char p[IMP_PATH];
  if (!json_is_object(rp)) return imp_fail(c, src, "a retry_policy must be a mapping");
  imp_check_keys(c, rp, src, known, 6, retry_policy_unmodelled,
                 sizeof retry_policy_unmodelled / sizeof retry_policy_unmodelled[0]);
  json_t *on = json_object_get(rp, "retry_on");
  if (on != NULL && !json_is_string(on))
    return imp_fail(c, imp_path_key(p, src, "retry_on"), "\"retry_on\" must be a string");
  r->on = 0;
  if (on != NULL) {
    imp_path_key(r->on_from, src, "retry_on");
    imp_retry_on_parse(c, r, json_string_value(on), r->on_from, false);
  } else {
    r->on_note = "no retry_on: Envoy retries nothing";
  }
  long long n;
  int rc = imp_int(c, rp, "num_retries", src, 0, 4294967295LL, &n);
  if (rc < 0) return -1;
  r->retries = rc == 1 ? n : 1;
  if (rc == 1) imp_path_key(r->retries_from, src, "num_retries");
  else r->retries_note = "Envoy's default num_retries, 1";
  json_t *codes = json_object_get(rp, "retriable_status_codes");
  if (codes != NULL) {
    imp_path_key(r->codes_from, src, "retriable_status_codes");
    size_t i;
    json_t *v;
    if (!json_is_array(codes)) return imp_fail(c, r->codes_from, "must be a list of HTTP statuses");
    json_array_foreach(codes, i, v) {
      if (!json_is_integer(v) || !is_http_status((long)json_integer_value(v)))
        return imp_fail(c, imp_path_index(p, r->codes_from, i), "an HTTP status in 100..599");
      if (!(r->on & IMP_ON_CODES)) continue; /* Envoy reads them only with the condition */
      if (r->n_codes < IMP_MAX_CODES) r->codes[r->n_codes++] = (int)json_integer_value(v);
    }
    if (!(r->on & IMP_ON_CODES) && json_array_size(codes) > 0)
      imp_warn(c, r->codes_from, "retriable_status_codes is ignored without "
                                 "\"retriable-status-codes\" in retry_on (as Envoy does)");
  }
  if (get_duration(c, rp, "per_try_timeout", src, &r->per_try_ns, r->per_try_from) < 0) return -1;
  json_t *bo = json_object_get(rp, "retry_back_off");
  if (bo != NULL && read_back_off(c, r, bo, imp_path_key(p, src, "retry_back_off")) < 0) return -1;
  json_t *rl = json_object_get(rp, "rate_limited_retry_back_off");
  if (rl != NULL) {
    r->rate_limited = true;
    imp_path_key(r->rate_limited_from, src, "rate_limited_retry_back_off");
    imp_warn(c, r->rate_limited_from, "rate-limited back-off is modelled as honouring Retry-After "
                                      "exactly: Envoy's U[I, 1.5 I) jitter on the header's "
                                      "interval, its reset_headers formats and max_interval are "
                                      "not modelled");
  }
  return 0;
}

/* The gRPC name a path selects: "/pkg.Svc/" a service, "/pkg.Svc/M" a method; anything else
 * but "/" warns (at src) that the policy applies to every method. */
void imp_grpc_name(imp_ctx *c, imp_route *r, const char *s, const char *src) {
  if (strcmp(s, "/") == 0) return;
  const char *slash = s[0] == '/' ? strchr(s + 1, '/') : NULL;
  size_t svc = slash != NULL ? (size_t)(slash - s - 1) : 0;
  if (slash == NULL || memchr(s + 1, '.', svc) == NULL || svc >= sizeof r->service ||
      strchr(slash + 1, '/') != NULL) {
    imp_warn(c, src, "the match \"%s\" is not a gRPC service or method name: the policy is "
                     "applied to every method", s);
    return;
  }
  snprintf(r->service, sizeof r->service, "%.*s", (int)svc, s + 1);
  snprintf(r->method, sizeof r->method, "%s", slash + 1);
  snprintf(r->name_from, sizeof r->name_from, "%s", src);
}

/* The gRPC name a route's match selects (its prefix or path). */
static void route_name(imp_ctx *c, imp_route *r, json_t *match, const char *src) {
  const char *key = "prefix";
  json_t *v = json_object_get(match, key);
  if (v == NULL) v = json_object_get(match, key = "path");
  if (!json_is_string(v)) return;
  char p[IMP_PATH];
  imp_grpc_name(c, r, json_string_value(v), imp_path_key(p, src, key));
}

/* A route's hedge_policy at src (route_components.proto HedgePolicy). hedge_on_per_try_timeout
 * becomes A6 hedging, a hedge at each per-try timeout (emit_retries); initial_requests above 1
 * and additional_request_chance above 0 have no counterpart and are warned, by name and why. */
static int read_hedge(imp_ctx *c, imp_route *r, json_t *hp, const char *src) {
  static const char *const known[] = {"initial_requests", "additional_request_chance",
                                      "hedge_on_per_try_timeout"};
  char p[IMP_PATH];
  imp_check_keys(c, hp, src, known, 3, NULL, 0);
  long long initial = 1;
  if (imp_int(c, hp, "initial_requests", src, 1, 1000000, &initial) < 0) return -1;
  if (initial > 1)
    imp_warn(c, imp_path_key(p, src, "initial_requests"),
             "initial_requests %lld is not modelled: retrysim's hedging sends one first attempt "
             "and its hedges one hedgingDelay apart, never several requests at once", initial);
  json_t *chance = json_object_get(hp, "additional_request_chance");
  double pct = 0;
  if (json_is_object(chance) && imp_number(c, chance, "numerator", src, &pct) < 0) return -1;
  if (chance != NULL && (!json_is_object(chance) || pct > 0))
    imp_warn(c, imp_path_key(p, src, "additional_request_chance"),
             "additional_request_chance is not modelled: a request sent with a probability at "
             "the start has no counterpart in retrysim's hedging");
  json_t *on = json_object_get(hp, "hedge_on_per_try_timeout");
  if (on != NULL && !json_is_boolean(on))
    return imp_fail(c, imp_path_key(p, src, "hedge_on_per_try_timeout"), "must be true or false");
  if (json_is_true(on)) {
    r->hedge = true;
    imp_path_key(r->hedge_from, src, "hedge_on_per_try_timeout");
  }
  return 0;
}

/* A Route (match + route action) at src, with the virtual host's policy vh_rp (may be NULL). */
static int read_route(imp_ctx *c, json_t *route, const char *src, json_t *vh_rp,
                      const char *vh_src, json_t *entries, json_t *top, json_t *seen) {
  imp_route r;
  imp_route_init(&r);
  char p[IMP_PATH], a[IMP_PATH];
  json_t *match = json_object_get(route, "match");
  if (json_is_object(match)) route_name(c, &r, match, imp_path_key(p, src, "match"));
  json_t *action = json_object_get(route, "route");
  imp_path_key(a, src, "route");
  if (!json_is_object(action)) action = NULL;
  if (action != NULL) {
    r.timeout_ns = 15000000000LL;
    r.timeout_note = "Envoy's default route timeout, 15 s (it covers every retry)";
    if (get_duration(c, action, "timeout", a, &r.timeout_ns, r.timeout_from) < 0) return -1;
    if (r.timeout_from[0]) r.timeout_note = NULL;
    json_t *hp = json_object_get(action, "hedge_policy");
    if (hp != NULL && read_hedge(c, &r, hp, imp_path_key(p, a, "hedge_policy")) < 0) return -1;
    if (json_object_get(action, "retry_policy_typed_config") != NULL)
      imp_warn(c, imp_path_key(p, a, "retry_policy_typed_config"),
               "an extension retry policy is not modelled");
  }
  json_t *rp = action != NULL ? json_object_get(action, "retry_policy") : NULL;
  if (rp != NULL) {
    if (read_retry_policy(c, &r, rp, imp_path_key(p, a, "retry_policy")) < 0) return -1;
  } else if (vh_rp != NULL) {
    if (read_retry_policy(c, &r, vh_rp, vh_src) < 0) return -1;
  } else {
    r.retries_note = "no retry_policy: Envoy does not retry";
  }
  char key[300];
  snprintf(key, sizeof key, "%s/%s", r.service, r.method);
  if (json_object_get(seen, key) != NULL) {
    imp_warn(c, src, "an earlier route matches the same methods first: this one is never used");
    return 0;
  }
  json_object_set_new(seen, key, json_true());
  return imp_route_emit(c, &r, entries, top);
}

static int read_routes(imp_ctx *c, json_t *routes, const char *src, json_t *vh_rp,
                       const char *vh_src, json_t *entries, json_t *top, json_t *seen) {
  if (!json_is_array(routes)) return imp_fail(c, src, "\"routes\" must be a list");
  size_t i;
  json_t *rt;
  char p[IMP_PATH];
  json_array_foreach(routes, i, rt) {
    imp_path_index(p, src, i);
    if (!json_is_object(rt)) return imp_fail(c, p, "a route must be a mapping");
    if (read_route(c, rt, p, vh_rp, vh_src, entries, top, seen) < 0) return -1;
  }
  return 0;
}

static int read_virtual_hosts(imp_ctx *c, json_t *vhs, const char *src, json_t *entries,
                              json_t *top, json_t *seen) {
  if (!json_is_array(vhs)) return imp_fail(c, src, "\"virtual_hosts\" must be a list");
  size_t i;
  json_t *vh;
  char p[IMP_PATH], q[IMP_PATH], r[IMP_PATH];
  json_array_foreach(vhs, i, vh) {
    imp_path_index(p, src, i);
    json_t *rp = json_object_get(vh, "retry_policy");
    imp_path_key(r, p, "retry_policy");
    json_t *routes = json_object_get(vh, "routes");
    if (routes != NULL &&
        read_routes(c, routes, imp_path_key(q, p, "routes"), rp, r, entries, top, seen) < 0)
      return -1;
    if (json_object_get(vh, "hedge_policy") != NULL)
      imp_warn(c, imp_path_key(q, p, "hedge_policy"), "a virtual host's hedge_policy is not read: "
               "write it on each route (a route's hedge_policy is read)");
  }
  return 0;
}

/* A cluster's circuit_breakers at src: the DEFAULT priority's first thresholds entry. Its
 * retry_budget, when set, replaces max_retries (Envoy's rule); max_retries alone is the same
 * arithmetic as a budget of 0 % with that minimum (active < max(0, n)). */
static int read_breakers(imp_ctx *c, json_t *cb, const char *src, json_t *top) {
  static const char *const known[] = {"thresholds", "per_host_thresholds"};
  static const char *const th_known[] = {"priority", "max_retries", "retry_budget", "max_connections",
                                         "max_pending_requests", "max_requests", "track_remaining",
                                         "max_connection_pools"};
  static const char *const rb_known[] = {"budget_percent", "min_retry_concurrency"};
  static const imp_unmodelled rb_skip[] = {
      {"budget_interval", "Envoy then counts the upstream requests started in the last "
                          "interval (ten sliding slots) as the budget's base, where retrysim's "
                          "envoy budget counts the requests in flight (Envoy's default, 0s), so "
                          "the budget here follows concurrency, not the rate over the interval"}};
  char p[IMP_PATH], q[IMP_PATH], b[IMP_PATH], pf[IMP_PATH] = "", mf[IMP_PATH] = "";
  imp_check_keys(c, cb, src, known, 2, NULL, 0);
  if (json_object_get(cb, "per_host_thresholds") != NULL)
    imp_warn(c, imp_path_key(p, src, "per_host_thresholds"), "per-host connection limits are not modelled");
  json_t *ths = json_object_get(cb, "thresholds");
  if (ths == NULL) return 0;
  if (!json_is_array(ths)) return imp_fail(c, imp_path_key(p, src, "thresholds"), "must be a list");
  size_t i;
  json_t *th, *chosen = NULL;
  json_array_foreach(ths, i, th) {
    snprintf(p, sizeof p, "%s.thresholds[%zu]", src, i);
    const char *prio = json_string_value(json_object_get(th, "priority"));
    if (prio != NULL && strcmp(prio, "DEFAULT") != 0) {
      imp_warn(c, p, "thresholds of priority %s are not modelled: every call here is DEFAULT", prio);
      continue;
    }
    if (chosen != NULL) {
      imp_warn(c, p, "a second DEFAULT thresholds entry: Envoy uses the first");
      continue;
    }
    chosen = th;
    snprintf(q, sizeof q, "%s", p);
  }
  if (chosen == NULL) return 0;
  imp_check_keys(c, chosen, q, th_known, 8, NULL, 0);
  static const char *const pools[] = {"max_connections", "max_pending_requests", "max_requests",
                                      "max_connection_pools"};
  for (size_t k = 0; k < 4; k++)
    if (json_object_get(chosen, pools[k]) != NULL)
      imp_warn(c, imp_path_key(p, q, pools[k]), "\"%s\" is not modelled: connection pool limits "
               "are the world's, not a policy's", pools[k]);
  json_t *rb = json_object_get(chosen, "retry_budget");
  long long n;
  if (rb != NULL) {
    imp_path_key(b, q, "retry_budget");
    imp_check_keys(c, rb, b, rb_known, 2, rb_skip, 1);
    double percent = 20;
    json_t *bp = json_object_get(rb, "budget_percent");
    if (bp != NULL) {
      /* An envoy.type.v3.Percent: {value: <percent>}; a bare number is accepted too. */
      imp_path_key(pf, b, "budget_percent");
      json_t *v = json_is_object(bp) ? json_object_get(bp, "value") : bp;
      if (json_is_object(bp)) imp_path_key(pf, pf, "value");
      if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 100)
        return imp_fail(c, pf, "budget_percent must be {value: <percent in 0..100>}");
      percent = json_number_value(v);
    }
    long long min = 3;
    int rc = imp_int(c, rb, "min_retry_concurrency", b, 0, 4294967295LL, &min);
    if (rc < 0) return -1;
    if (rc == 1) imp_path_key(mf, b, "min_retry_concurrency");
    if (json_object_get(chosen, "max_retries") != NULL)
      imp_warn(c, imp_path_key(p, q, "max_retries"), "max_retries is replaced by retry_budget, as in Envoy");
    return imp_budget_emit(c, top, percent, pf, min, mf, "Envoy's retry_budget default (20 %, 3)");
  }
  int rc = imp_int(c, chosen, "max_retries", q, 0, 4294967295LL, &n);
  if (rc < 0) return -1;
  if (rc == 0) n = 3;
  if (rc == 1) imp_path_key(mf, q, "max_retries");
  return imp_budget_emit(c, top, 0, NULL, n, mf,
                         "max_retries (Envoy's default 3) as a budget: at most that many retries "
                         "in flight");
}

/* clusters: the first one's breakers and outlier detection (a policy is one channel). */
static int read_clusters(imp_ctx *c, json_t *cl, const char *src, json_t *top) {
  char p[IMP_PATH], q[IMP_PATH];
  bool one = json_is_object(cl);
  if (!one && !json_is_array(cl)) return imp_fail(c, src, "\"clusters\" must be a list");
  size_t n = one ? 1 : json_array_size(cl);
  for (size_t i = 0; i < n; i++) {
    json_t *k = one ? cl : json_array_get(cl, i);
    if (one) snprintf(p, sizeof p, "%s", src);
    else imp_path_index(p, src, i);
    if (i > 0) {
      imp_warn(c, p, "a policy is one channel: only the first cluster is read");
      continue;
    }
    if (json_object_get(k, "outlier_detection") != NULL)
      imp_warn(c, imp_path_key(q, p, "outlier_detection"),
               "not modelled in a policy: it is a load balancer's (the world's) setting");
    json_t *cb = json_object_get(k, "circuit_breakers");
    if (cb != NULL && read_breakers(c, cb, imp_path_key(q, p, "circuit_breakers"), top) < 0) return -1;
  }
  return 0;
}

/* Puts the collected pieces together: methodConfig, then the top-level retrysim block. */
static int assemble(imp_ctx *c, json_t *config, json_t *entries, json_t *top) {
  if (json_array_size(entries) > 0) json_object_set(config, "methodConfig", entries);
  if (json_object_size(top) > 0) json_object_set(config, "retrysim", top);
  return c->err->code == RETRY_OK ? 0 : -1;
}

int expt__import_envoy(imp_ctx *c, json_t *doc, json_t *config) {
  json_t *entries = json_array(), *top = json_object(), *seen = json_object();
  int rc = entries && top && seen ? 0 : imp_oom(c);
  json_t *v, *root = doc;
  char p[IMP_PATH] = "$";
  /* A bootstrap: its static clusters (routes live inside listeners' filters: not searched). */
  if ((v = json_object_get(doc, "static_resources")) != NULL && json_is_object(v)) {
    root = v;
    snprintf(p, sizeof p, "$.static_resources");
    if (json_object_get(v, "listeners") != NULL)
      imp_warn(c, "$.static_resources.listeners", "routes inside listeners are not read: give the "
                                                  "route_config (or its routes) on its own");
  }
  char q[IMP_PATH];
  if (rc == 0 && (v = json_object_get(root, "retry_policy")) != NULL && !json_object_get(root, "match")) {
    imp_route r;
    imp_route_init(&r);
    rc = read_retry_policy(c, &r, v, imp_path_key(q, p, "retry_policy"));
    if (rc == 0) rc = imp_route_emit(c, &r, entries, top);
  }
  if (rc == 0 && json_object_get(root, "match") != NULL)
    rc = read_route(c, root, p, NULL, NULL, entries, top, seen);
  if (rc == 0 && (v = json_object_get(root, "routes")) != NULL)
    rc = read_routes(c, v, imp_path_key(q, p, "routes"), NULL, NULL, entries, top, seen);
  if (rc == 0 && (v = json_object_get(root, "virtual_hosts")) != NULL)
    rc = read_virtual_hosts(c, v, imp_path_key(q, p, "virtual_hosts"), entries, top, seen);
  if (rc == 0 && (v = json_object_get(root, "route_config")) != NULL) {
    json_t *vhs = json_object_get(v, "virtual_hosts");
    imp_path_key(q, p, "route_config");
    if (vhs != NULL) rc = read_virtual_hosts(c, vhs, imp_path_key(q, q, "virtual_hosts"), entries, top, seen);
  }
  if (rc == 0 && (v = json_object_get(root, "clusters")) != NULL)
    rc = read_clusters(c, v, imp_path_key(q, p, "clusters"), top);
  if (rc == 0 && (json_object_get(root, "circuit_breakers") || json_object_get(root, "outlier_detection")))
    rc = read_clusters(c, root, p, top);
  if (rc == 0 && json_array_size(entries) == 0)
    imp_warn(c, "$", "no route or retry_policy in this file: calls are not retried");
  if (rc == 0) rc = assemble(c, config, entries, top);
  json_decref(entries);
  json_decref(top);
  json_decref(seen);
  return rc;
}

/* }================================================================== */
