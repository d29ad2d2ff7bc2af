/*
 * expt_import_linkerd_ann.c: Linkerd's retry and timeout annotations (Linkerd >= 2.16) on an
 * HTTPRoute, a GRPCRoute or a Service: retry.linkerd.io/http, /grpc, /limit, /timeout and
 * timeout.linkerd.io/request, /response, /idle. Semantics from Linkerd's reference pages
 * (linkerd.io/2/reference/retries, /timeouts) and its policy controller and proxy, as
 * /work/research/policy-formats.md section 3.2 records them (docs/policy-formats.md, "Linkerd").
 * Invariant: a route's retry annotations replace all of its parent Service's retry annotations,
 * and its timeout annotations all of the Service's timeout ones, never field by field.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expt/expt_import_int.h"
#include "retry/retry_json.h"

/* The annotations Linkerd reads; any other key under the two prefixes is a typo. */
static const char *const ann_known[] = {
    "retry.linkerd.io/http",      "retry.linkerd.io/grpc",        "retry.linkerd.io/limit",
    "retry.linkerd.io/timeout",   "timeout.linkerd.io/request",   "timeout.linkerd.io/response",
    "timeout.linkerd.io/idle"};
enum { A_HTTP, A_GRPC, A_LIMIT, A_RTIMEOUT, A_REQUEST, A_RESPONSE, A_IDLE, A_N };

/* One resource's annotations: each value, the document it is in and its source path. */
typedef struct ann_set {
  const char *v[A_N];
  int doc[A_N];
  char from[A_N][IMP_PATH];
  bool retry, timeout; /* any retry.linkerd.io / timeout.linkerd.io annotation */
} ann_set;

static bool has_prefix(const char *k) {
  return strncmp(k, "retry.linkerd.io/", 17) == 0 || strncmp(k, "timeout.linkerd.io/", 19) == 0;
}

bool expt__import_is_linkerd_annotated(json_t *d) {
  const char *kind = json_string_value(json_object_get(d, "kind"));
  if (kind == NULL || (strcmp(kind, "HTTPRoute") != 0 && strcmp(kind, "GRPCRoute") != 0 &&
                       strcmp(kind, "Service") != 0))
    return false;
  json_t *ann = json_object_get(json_object_get(d, "metadata"), "annotations");
  const char *k;
  json_t *v;
  json_object_foreach(ann, k, v) if (has_prefix(k)) return true;
  return false;
}

/* Reads the annotations of document d (index doc) into a; unknown keys under Linkerd's
 * prefixes warn with a did-you-mean; values must be strings, as Kubernetes requires. */
static int ann_read(imp_ctx *c, json_t *d, int doc, ann_set *a) {
  memset(a, 0, sizeof *a);
  json_t *ann = json_object_get(json_object_get(d, "metadata"), "annotations");
  const char *k;
  json_t *v;
  char p[IMP_PATH];
  json_object_foreach(ann, k, v) {
    if (!has_prefix(k)) continue;
    imp_path_key(p, "$.metadata.annotations", k);
    size_t i = 0;
    while (i < A_N && strcmp(k, ann_known[i]) != 0) i++;
    if (i == A_N) {
      const char *near = retry_json_suggest(k, ann_known, A_N, NULL);
      imp_warn(c, p, "unknown annotation \"%s\" ignored%s%s%s", k, near ? "; did you mean \"" : "",
               near ? near : "", near ? "\"?" : "");
      continue;
    }
    if (!json_is_string(v))
      return imp_fail(c, p, "an annotation's value is a string (quote it: \"%s\": \"...\")", k);
    a->v[i] = json_string_value(v);
    a->doc[i] = doc;
    snprintf(a->from[i], IMP_PATH, "%s", p);
  }
  /* "0" counts as absent for the limit (the policy controller's filter). */
  if (a->v[A_LIMIT] != NULL && strcmp(a->v[A_LIMIT], "0") == 0) a->v[A_LIMIT] = NULL;
  a->retry = a->v[A_HTTP] || a->v[A_GRPC] || a->v[A_LIMIT] || a->v[A_RTIMEOUT];
  a->timeout = a->v[A_REQUEST] || a->v[A_RESPONSE] || a->v[A_IDLE];
  return 0;
}

/* The route's annotations over the Service's: retry ones as a group, timeout ones as a group. */
static void ann_inherit(ann_set *route, const ann_set *svc) {
  for (int i = 0; i < A_N; i++) {
    bool retry = i <= A_RTIMEOUT;
    if ((retry && route->retry) || (!retry && route->timeout)) continue;
    route->v[i] = svc->v[i];
    route->doc[i] = svc->doc[i];
    memcpy(route->from[i], svc->from[i], IMP_PATH);
  }
  route->retry = route->retry || svc->retry;
  route->timeout = route->timeout || svc->timeout;
}

/* Records an origin of annotation i, in the document it was read from. */
static void ann_origin(imp_ctx *c, const ann_set *a, int i, const char *out, const char *note) {
  int keep = c->doc;
  c->doc = a->doc[i];
  imp_origin(c, out, a->v[i] != NULL ? a->from[i] : NULL, note);
  c->doc = keep;
}

/* A warning at annotation i, in the document it was read from. */
static void ann_warn(imp_ctx *c, const ann_set *a, int i, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ann_warn(imp_ctx *c, const ann_set *a, int i, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int keep = c->doc;
  c->doc = a->doc[i];
  imp_warn(c, a->from[i], "%s", msg);
  c->doc = keep;
}

static int ann_fail(imp_ctx *c, const ann_set *a, int i, const char *msg) {
  c->doc = a->doc[i];
  return imp_fail(c, a->from[i], "%s: \"%s\"", msg, a->v[i]);
}

/* A Linkerd duration (GEP-2257: a number with a unit, "300ms", "5s"; a bare number is invalid)
 * of annotation i: 1 with *ns, 0 absent or "0s" (unset), -1. */
static int ann_duration(imp_ctx *c, const ann_set *a, int i, int64_t *ns) {
  if (a->v[i] == NULL) return 0;
  const char *s = a->v[i];
  size_t n = strlen(s);
  if (n == 0 || (s[n - 1] >= '0' && s[n - 1] <= '9'))
    return ann_fail(c, a, i, "a duration needs a unit (\"300ms\", \"5s\")");
  json_t *v = json_string(s);
  int keep = c->doc;
  c->doc = a->doc[i];
  int rc = v != NULL ? imp_duration(c, v, a->from[i], ns) : imp_oom(c);
  c->doc = keep;
  json_decref(v);
  if (rc < 0) return -1;
  return *ns > 0 ? 1 : 0;
}

/* retry.linkerd.io/http: "5xx", "gateway-error", "NNN" or "NNN-MMM" (100..599), into l. */
static int http_codes(imp_ctx *c, const ann_set *a, json_t *l) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", a->v[A_HTTP]);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
    while (*t == ' ') t++;
    size_t n = strlen(t);
    while (n > 0 && t[n - 1] == ' ') t[--n] = '\0';
    if (strcasecmp(t, "5xx") == 0) {
      json_array_append_new(l, json_string("5xx"));
      continue;
    }
    if (strcasecmp(t, "gateway-error") == 0) {
      json_array_append_new(l, json_string("gateway-error"));
      continue;
    }
    char *end;
    long lo = strtol(t, &end, 10), hi = lo;
    if (*end == '-') hi = strtol(end + 1, &end, 10);
    if (end == t || *end != '\0' || lo < 100 || hi > 599 || lo > hi)
      return ann_fail(c, a, A_HTTP, "each element is 5xx, gateway-error, a status 100..599 or a "
                                    "range of them (\"500-504\")");
    if (hi - lo > 100) return ann_fail(c, a, A_HTTP, "a range of more than 100 statuses");
    for (long s = lo; s <= hi; s++) json_array_append_new(l, json_integer(s));
  }
  return 0;
}

/* retry.linkerd.io/grpc: the five names Linkerd takes, as gRPC status names, into l. */
static int grpc_codes(imp_ctx *c, const ann_set *a, json_t *l) {
  static const char *const names[] = {"cancelled", "deadline-exceeded", "internal",
                                      "resource-exhausted", "unavailable"};
  static const char *const codes[] = {"CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL",
                                      "RESOURCE_EXHAUSTED", "UNAVAILABLE"};
  char buf[512];
  snprintf(buf, sizeof buf, "%s", a->v[A_GRPC]);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
    while (*t == ' ') t++;
    size_t n = strlen(t), i = 0;
    while (n > 0 && t[n - 1] == ' ') t[--n] = '\0';
    while (i < 5 && strcasecmp(t, names[i]) != 0) i++;
    if (i == 5) {
      const char *near = retry_json_suggest(t, names, 5, NULL);
      char msg[200];
      snprintf(msg, sizeof msg, "\"%s\" is not one of cancelled, deadline-exceeded, internal, "
                                "resource-exhausted, unavailable%s%s%s", t,
               near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
      return ann_fail(c, a, A_GRPC, msg);
    }
    json_array_append_new(l, json_string(codes[i]));
  }
  return 0;
}

/* Sets key in obj to v (stolen) and records its origin from annotation i (-1: a default). */
static void put(imp_ctx *c, const ann_set *a, json_t *obj, const char *out, const char *key,
                json_t *v, int i, const char *note) {
  char p[IMP_PATH];
  if (v == NULL || json_object_set_new(obj, key, v) != 0) {
    imp_oom(c);
    return;
  }
  imp_path_key(p, out, key);
  if (i >= 0) ann_origin(c, a, i, p, note);
  else imp_origin(c, p, NULL, note);
}

/* The statuses retried, in the space the annotations name; *http set. NULL after an error. */
static json_t *ann_codes(imp_ctx *c, const ann_set *a, const char *kind, bool *http, int *from) {
  bool http_ok = strcmp(kind, "GRPCRoute") != 0, grpc_ok = strcmp(kind, "HTTPRoute") != 0;
  if (a->v[A_HTTP] && !http_ok)
    ann_warn(c, a, A_HTTP, "retry.linkerd.io/http is not valid on a GRPCRoute: ignored");
  if (a->v[A_GRPC] && !grpc_ok)
    ann_warn(c, a, A_GRPC, "retry.linkerd.io/grpc is not valid on an HTTPRoute: ignored");
  bool use_http = http_ok && a->v[A_HTTP] != NULL, use_grpc = grpc_ok && a->v[A_GRPC] != NULL;
  if (use_http && use_grpc) {
    ann_warn(c, a, A_GRPC, "a policy has one status space: the HTTP statuses of "
                                 "retry.linkerd.io/http are used, these gRPC ones are not");
    use_grpc = false;
  }
  *http = !use_grpc && strcmp(kind, "GRPCRoute") != 0;
  *from = use_http ? A_HTTP : use_grpc ? A_GRPC : -1;
  json_t *l = json_array();
  if (l == NULL) return imp_oom(c), NULL;
  if ((use_http && http_codes(c, a, l) < 0) || (use_grpc && grpc_codes(c, a, l) < 0)) {
    json_decref(l);
    return NULL;
  }
  return l;
}

/* The retries of one entry; false when the annotations retry nothing retrysim can see. */
static bool ann_retries(imp_ctx *c, const ann_set *a, const char *kind, json_t *entry,
                        const char *out, json_t *top) {
  char p[IMP_PATH], q[IMP_PATH], d[40];
  bool http;
  int from;
  json_t *codes = ann_codes(c, a, kind, &http, &from);
  if (codes == NULL) return false;
  int64_t per_try = 0;
  int has_per_try = ann_duration(c, a, A_RTIMEOUT, &per_try);
  long limit = 1;
  if (a->v[A_LIMIT] != NULL) {
    char *end;
    limit = strtol(a->v[A_LIMIT], &end, 10);
    if (*end != '\0' || end == a->v[A_LIMIT] || limit < 1 || limit > 65535) {
      json_decref(codes);
      ann_fail(c, a, A_LIMIT, "retry.linkerd.io/limit is a number of retries, 0..65535");
      return false;
    }
  }
  if (has_per_try < 0) return json_decref(codes), false;
  /* An attempt the retry timeout ends is retried: in the world it ends as 504 or
   * DEADLINE_EXCEEDED, which must then be retryable. */
  const char *to = http ? "504" : "DEADLINE_EXCEEDED";
  bool added = false;
  if (has_per_try == 1) {
    bool there = false;
    size_t i;
    json_t *v;
    json_array_foreach(codes, i, v) there = there || (http ? json_integer_value(v) == 504 ||
                                                                 (json_is_string(v) && (!strcmp(json_string_value(v), "5xx") || !strcmp(json_string_value(v), "gateway-error")))
                                                           : json_is_string(v) && !strcmp(json_string_value(v), to));
    if (!there) {
      json_array_append_new(codes, http ? json_integer(504) : json_string(to));
      added = true;
      ann_warn(c, a, A_RTIMEOUT, "an attempt that retry.linkerd.io/timeout ends is retried, "
               "so %s is retryable here: a %s the service itself returns is retried too", to, to);
    }
  }
  if (json_array_size(codes) == 0) {
    json_decref(codes);
    ann_warn(c, a, a->v[A_LIMIT] ? A_LIMIT : A_RTIMEOUT,
             "no status to retry: without retry.linkerd.io/http (or /grpc) Linkerd retries only "
             "connection-level errors (fail-fast, refused streams), which retrysim does not tell "
             "apart from a status: not retried");
    return false;
  }
  json_t *rp = json_object(), *ext = json_object();
  if (rp == NULL || ext == NULL || json_object_set_new(entry, "retryPolicy", rp) != 0 ||
      json_object_set_new(entry, "retrysim", ext) != 0)
    return json_decref(codes), imp_oom(c), false;
  imp_path_key(p, out, "retryPolicy");
  imp_path_key(q, out, "retrysim");
  put(c, a, rp, p, "maxAttempts", json_integer(limit + 1), a->v[A_LIMIT] ? A_LIMIT : -1,
      a->v[A_LIMIT] ? "retries + 1" : "Linkerd's default limit, 1 retry");
  put(c, a, rp, p, "initialBackoff", json_string("0.025s"), -1,
      "the policy controller's fixed back-off: 25 ms minimum");
  put(c, a, rp, p, "maxBackoff", json_string("0.25s"), -1, "250 ms maximum");
  put(c, a, rp, p, "backoffMultiplier", json_integer(2), -1, "exp-backoff doubles");
  put(c, a, rp, p, "retryableStatusCodes", codes, from >= 0 ? from : A_RTIMEOUT,
      added ? "and the retry timeout's own status" : NULL);
  put(c, a, ext, q, "statusSpace", json_string(http ? "http" : "grpc"), from >= 0 ? from : -1,
      "the space the annotations name");
  put(c, a, ext, q, "jitter", json_string("linkerd"), -1,
      "exp-backoff with jitter ratio 1: min(d + U[0, d), 250 ms)");
  if (has_per_try == 1) {
    imp_duration_format(per_try, d, sizeof d);
    put(c, a, ext, q, "perAttemptTimeout", json_string(d), A_RTIMEOUT,
        "a response-headers timeout per attempt, retried");
  }
  if (http)
    put(c, a, ext, q, "honorRetryAfter", json_false(), -1,
        "the policy controller sends respect_retry_after_hint false");
  if (limit + 1 > 5) {
    json_t *t = json_object_get(top, "maxAttemptsLimit");
    if (t == NULL || json_integer_value(t) < limit + 1)
      put(c, a, top, "$.retrysim", "maxAttemptsLimit",
          json_integer(limit + 1 > 1000 ? 1000 : limit + 1), A_LIMIT,
          "Linkerd has no cap like gRPC's 5: lifted");
  }
  return c->err->code == RETRY_OK;
}

/* One methodConfig entry: the methods of (svc, m) ("" = every method) under a; rule_timeout
 * (> 0) is an HTTPRoute rule's timeouts.request, used when the annotation is absent. */
static int ann_entry(imp_ctx *c, const ann_set *a, const char *kind, const char *svc,
                     const char *m, const char *name_from, int64_t rule_timeout,
                     const char *rule_from, json_t *entries, json_t *top) {
  char out[IMP_PATH], p[IMP_PATH], d[40];
  imp_path_index(out, "$.methodConfig", json_array_size(entries));
  json_t *entry = json_object(), *name = json_object();
  if (entry == NULL || name == NULL || json_array_append_new(entries, entry) != 0)
    return json_decref(name), imp_oom(c);
  if (svc[0]) json_object_set_new(name, "service", json_string(svc));
  if (m[0]) json_object_set_new(name, "method", json_string(m));
  json_object_set_new(entry, "name", json_pack("[o]", name));
  imp_origin(c, imp_path_key(p, out, "name"), name_from, svc[0] ? NULL : "every method");
  int64_t t = 0;
  int rc = ann_duration(c, a, A_REQUEST, &t);
  if (rc < 0) return -1;
  if (rc == 1 || rule_timeout > 0) {
    imp_duration_format(rc == 1 ? t : rule_timeout, d, sizeof d);
    json_object_set_new(entry, "timeout", json_string(d));
    imp_path_key(p, out, "timeout");
    if (rc == 1) ann_origin(c, a, A_REQUEST, p, "the whole request, retries included; not retried");
    else imp_origin(c, p, rule_from, "the rule's request timeout (no timeout.linkerd.io/request)");
  }
  if (a->v[A_RESPONSE] != NULL)
    ann_warn(c, a, A_RESPONSE, "timeout.linkerd.io/response is not modelled: a time a "
             "backend response may be in flight, not retried, is neither retrysim's call "
             "timeout nor its per-attempt timeout (which is retried)");
  if (a->v[A_IDLE] != NULL)
    ann_warn(c, a, A_IDLE, "timeout.linkerd.io/idle is not modelled: calls here are unary, "
                                 "never idle");
  if (!a->retry || !ann_retries(c, a, kind, entry, out, top))
    imp_origin(c, imp_path_key(p, out, "retryPolicy"), NULL,
               a->retry ? "no status retrysim can see" : "no retry.linkerd.io annotation: not retried");
  return c->err->code == RETRY_OK ? 0 : -1;
}

/* The gRPC name of a route rule's first match: a GRPCRoute's method {service, method}, an
 * HTTPRoute's path ("/pkg.Svc/Method" or "/pkg.Svc/"); "" for every method. */
static void rule_name(imp_ctx *c, json_t *rule, const char *src, bool grpc, imp_route *r) {
  char p[IMP_PATH];
  json_t *m0 = json_array_get(json_object_get(rule, "matches"), 0);
  if (grpc) {
    json_t *mm = json_object_get(m0, "method");
    const char *svc = json_string_value(json_object_get(mm, "service"));
    const char *m = json_string_value(json_object_get(mm, "method"));
    if (svc != NULL) snprintf(r->service, sizeof r->service, "%s", svc);
    if (svc != NULL && m != NULL) snprintf(r->method, sizeof r->method, "%s", m);
    if (svc != NULL) imp_path_key(r->name_from, imp_path_key(p, src, "matches[0]"), "method");
    return;
  }
  const char *pv = json_string_value(json_object_get(json_object_get(m0, "path"), "value"));
  if (pv != NULL) {
    imp_grpc_name(c, r, pv, imp_path_key(p, imp_path_key(p, src, "matches[0]"), "path.value"));
  }
}

/* One HTTPRoute or GRPCRoute (document index doc) under the Service's annotations svc. */
static int ann_route(imp_ctx *c, json_t *d, int doc, const ann_set *svc, json_t *entries,
                     json_t *top) {
  const char *kind = json_string_value(json_object_get(d, "kind"));
  bool grpc = strcmp(kind, "GRPCRoute") == 0;
  ann_set a;
  if (ann_read(c, d, doc, &a) < 0) return -1;
  ann_inherit(&a, svc);
  json_t *rules = json_object_get(json_object_get(d, "spec"), "rules");
  if (json_array_size(rules) == 0)
    return ann_entry(c, &a, kind, "", "", NULL, 0, NULL, entries, top);
  size_t j;
  json_t *rule;
  char src[IMP_PATH], q[IMP_PATH];
  json_array_foreach(rules, j, rule) {
    imp_path_index(src, "$.spec.rules", j);
    imp_route r;
    imp_route_init(&r);
    rule_name(c, rule, src, grpc, &r);
    int64_t rt = 0;
    json_t *req = json_object_get(json_object_get(rule, "timeouts"), "request");
    if (req != NULL && imp_duration(c, req, imp_path_key(q, src, "timeouts.request"), &rt) < 0)
      return -1;
    if (json_object_get(rule, "retry") != NULL)
      imp_warn(c, imp_path_key(q, src, "retry"), "the Gateway API's own retry stanza is not read "
               "on a route with Linkerd's annotations: Linkerd configures retries by annotation");
    if (ann_entry(c, &a, kind, r.service, r.method, r.name_from[0] ? r.name_from : NULL, rt, q,
                  entries, top) < 0)
      return -1;
  }
  return 0;
}

int expt__import_linkerd_annotated(imp_ctx *c, json_t *docs, json_t *entries, json_t *top) {
  ann_set svc;
  memset(&svc, 0, sizeof svc);
  int svc_doc = -1;
  size_t i;
  json_t *d;
  /* The Service first: its annotations are the routes' defaults, and its own entry (every
   * method) comes last, below every route's. */
  json_array_foreach(docs, i, d) {
    const char *kind = json_string_value(json_object_get(d, "kind"));
    if (kind == NULL || strcmp(kind, "Service") != 0) continue;
    c->doc = (int)i;
    if (svc_doc >= 0) {
      imp_warn(c, "$", "a second Service: a policy is one service's, this one is not read");
      continue;
    }
    if (ann_read(c, d, (int)i, &svc) < 0) return -1;
    svc_doc = (int)i;
  }
  json_array_foreach(docs, i, d) {
    const char *kind = json_string_value(json_object_get(d, "kind"));
    c->doc = (int)i;
    if (kind != NULL && (strcmp(kind, "HTTPRoute") == 0 || strcmp(kind, "GRPCRoute") == 0)) {
      if (ann_route(c, d, (int)i, &svc, entries, top) < 0) return -1;
    } else if (kind == NULL || strcmp(kind, "Service") != 0) {
      imp_warn(c, "$.kind", "a %s is not read here: with Linkerd's annotations retrysim reads "
                            "Services, HTTPRoutes and GRPCRoutes",
               kind != NULL ? kind : "resource without a kind");
    }
  }
  if (svc_doc >= 0 && (svc.retry || svc.timeout)) {
    c->doc = svc_doc;
    if (ann_entry(c, &svc, "Service", "", "", NULL, 0, NULL, entries, top) < 0) return -1;
  }
  c->doc = 0;
  return 0;
}
