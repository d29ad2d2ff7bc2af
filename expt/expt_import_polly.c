/*
 * expt_import_polly.c: a .NET application's Polly v8 settings read verbatim from appsettings
 * JSON: the sections AddStandardResilienceHandler binds (Retry, CircuitBreaker, AttemptTimeout,
 * TotalRequestTimeout, RateLimiter) anywhere in the document, or a bare RetryStrategyOptions
 * object. Semantics from Polly's and Microsoft.Extensions.Http.Resilience's docs and source as
 * /work/research/policy-formats.md section 7 records them (docs/policy-formats.md, "Polly").
 * Invariant: the standard handler's defaults fill what its sections leave out; a bare options
 * object gets Polly's own defaults.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_import_int.h"

/* Whether obj holds the standard handler's sections (Retry or CircuitBreaker, as objects). */
static bool is_handler(json_t *obj) {
  return json_is_object(obj) && (json_is_object(json_object_get(obj, "Retry")) ||
                                 json_is_object(json_object_get(obj, "CircuitBreaker")));
}

/* The first object, depth first, that is a handler's section set; its path into path. */
static json_t *find_handler(json_t *v, char *path, int depth) {
  if (!json_is_object(v) || depth > 16) return NULL;
  if (is_handler(v)) return v;
  const char *k;
  json_t *x;
  size_t n = strlen(path);
  json_object_foreach(v, k, x) {
    snprintf(path + n, IMP_PATH - n, ".%s", k);
    json_t *h = find_handler(x, path, depth + 1);
    if (h != NULL) return h;
    path[n] = '\0';
  }
  return NULL;
}

bool expt__import_is_polly(json_t *doc) {
  char p[IMP_PATH] = "$";
  if (!json_is_object(doc) || json_object_get(doc, "methodConfig") != NULL ||
      json_object_get(doc, "retrysim") != NULL)
    return false;
  return json_object_get(doc, "MaxRetryAttempts") != NULL || find_handler(doc, p, 0) != NULL;
}

/* A .NET TimeSpan as configuration binds it: "[d.]hh:mm:ss[.fffffff]". */
static int timespan(imp_ctx *c, json_t *obj, const char *key, const char *src, int64_t *ns, char *from) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) return 0;
  char p[IMP_PATH];
  imp_path_key(p, src, key);
  const char *s = json_string_value(v);
  double d = 0, h, m, sec;
  int used = 0;
  if (s != NULL && sscanf(s, "%lf:%lf:%lf%n", &h, &m, &sec, &used) == 3 && s[used] == '\0') {
    const char *dot = strchr(s, '.'), *colon = strchr(s, ':');
    if (dot != NULL && dot < colon) { /* d.hh:mm:ss */
      d = floor(h);          /* "1.02:00:00": the days before the dot, */
      h = atof(dot + 1);     /* the hours after it */
    }
    double total = ((d * 24 + h) * 60 + m) * 60 + sec;
    if (total >= 0 && total < 9e9) {
      *ns = (int64_t)(total * 1e9 + 0.5);
      if (from != NULL) snprintf(from, IMP_PATH, "%s", p);
      return 1;
    }
  }
  return imp_fail(c, p, "\"%s\" is a TimeSpan such as \"00:00:02\" or \"00:00:00.5\"", key);
}

static const char *or_null(const char *s) { return s[0] ? s : NULL; }

/* The Retry options at src into entry; standard: the HTTP handler's defaults, else Polly's. */
static int polly_retry(imp_ctx *c, json_t *r, const char *src, bool standard, json_t *entry,
                       json_t *top) {
  static const char *const known[] = {"MaxRetryAttempts", "Delay", "BackoffType", "UseJitter",
                                      "MaxDelay", "ShouldRetryAfterHeader", "Name"};
  static const imp_unmodelled skip[] = {
      {"ShouldHandle", "a delegate cannot come from configuration"},
      {"DelayGenerator", "a delegate cannot come from configuration"},
      {"OnRetry", "not a retry decision"}, {"Randomizer", "not a retry decision"}};
  char p[IMP_PATH], q[IMP_PATH], fa[IMP_PATH] = "", fd[IMP_PATH] = "", fm[IMP_PATH] = "";
  if (r != NULL) imp_check_keys(c, r, src, known, 7, skip, 4);
  long long n = 3;
  int rc = r != NULL ? imp_int(c, r, "MaxRetryAttempts", src, 1, 2147483647LL, &n) : 0;
  if (rc < 0) return -1;
  if (rc == 1) imp_path_key(fa, src, "MaxRetryAttempts");
  int64_t delay = 2000000000LL, maxd = -1;
  if (r != NULL && (timespan(c, r, "Delay", src, &delay, fd) < 0 || timespan(c, r, "MaxDelay", src, &maxd, fm) < 0))
    return -1;
  const char *bt = r != NULL ? json_string_value(json_object_get(r, "BackoffType")) : NULL;
  const char *type = bt != NULL ? bt : standard ? "Exponential" : "Constant";
  bool jitter = standard;
  json_t *j = r != NULL ? json_object_get(r, "UseJitter") : NULL;
  if (json_is_boolean(j)) jitter = json_is_true(j);
  bool exp = strcmp(type, "Exponential") == 0;
  if (!exp && strcmp(type, "Constant") != 0 && strcmp(type, "Linear") != 0)
    return imp_fail(c, imp_path_key(p, src, "BackoffType"), "BackoffType is Constant, Linear or Exponential");
  if (strcmp(type, "Linear") == 0)
    imp_warn(c, imp_path_key(p, src, "BackoffType"), "Linear growth ((n + 1) x Delay) is not a "
             "multiplier: imported as Constant, so later delays are shorter than Polly's");
  if (delay == 0) delay = 1; /* Polly's 0 means no delay; the engine's least is 1 ns */
  long long attempts = n + 1 > 1000 ? 1000 : n + 1;
  if (n + 1 > 1000) imp_warn(c, or_null(fa) ? fa : src, "more than 999 retries are kept at 999");
  int64_t maxb = maxd > 0 ? maxd : exp ? (int64_t)fmin((double)delay * pow(2, (double)(attempts - 2)), 8.64e13) : delay;
  if (maxb < delay) maxb = delay;
  json_t *codes = standard ? json_pack("[s,i,i]", "5xx", 408, 429)
                           : json_pack("[s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s]", "CANCELLED", "UNKNOWN",
                                       "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                                       "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                                       "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                                       "UNAUTHENTICATED");
  char dd[40], md[40];
  imp_duration_format(delay, dd, sizeof dd);
  imp_duration_format(maxb, md, sizeof md);
  json_t *rp = json_pack("{s:I, s:s, s:s, s:i, s:o}", "maxAttempts", (json_int_t)attempts,
                         "initialBackoff", dd, "maxBackoff", md, "backoffMultiplier", exp ? 2 : 1,
                         "retryableStatusCodes", codes);
  json_t *ext = json_object_get(entry, "retrysim");
  if (rp == NULL || ext == NULL) return json_decref(rp), imp_oom(c);
  json_object_set_new(entry, "retryPolicy", rp);
  json_object_set_new(ext, "statusSpace", json_string(standard ? "http" : "grpc"));
  json_object_set_new(ext, "jitter", json_string(!jitter ? "none" : exp ? "polly-v2" : "grpc"));
  if (jitter && !exp) json_object_set_new(ext, "jitterFraction", json_real(0.25));
  if (maxd > 0) json_object_set_new(ext, "capAfterJitter", json_true());
  if (standard) {
    json_t *ra = r != NULL ? json_object_get(r, "ShouldRetryAfterHeader") : NULL;
    json_object_set_new(ext, "honorRetryAfter", json_boolean(ra == NULL || json_is_true(ra)));
  }
  if (attempts > 5) json_object_set_new(top, "maxAttemptsLimit", json_integer(attempts));
  const char *mp = "$.methodConfig[0].retryPolicy";
  imp_origin(c, imp_path_key(p, mp, "maxAttempts"), or_null(fa), "MaxRetryAttempts + 1 (retries, default 3)");
  imp_origin(c, imp_path_key(p, mp, "initialBackoff"), or_null(fd), "Delay (default 2 s)");
  imp_origin(c, imp_path_key(p, mp, "maxBackoff"), or_null(fm),
             maxd > 0 ? "MaxDelay caps the jittered delay" : "no MaxDelay: the largest delay these attempts reach");
  imp_origin(c, imp_path_key(p, mp, "backoffMultiplier"), bt ? imp_path_key(q, src, "BackoffType") : NULL,
             standard ? "BackoffType (the standard handler's default: Exponential)"
                      : "BackoffType (Polly's default: Constant)");
  imp_origin(c, imp_path_key(p, mp, "retryableStatusCodes"), NULL,
             standard ? "the standard handler's transient failures: >= 500, 408, 429 (and "
                        "connection errors: a down replica's 503)"
                      : "Polly retries any exception by default: every gRPC failure");
  imp_origin(c, "$.methodConfig[0].retrysim.jitter", json_is_boolean(j) ? imp_path_key(q, src, "UseJitter") : NULL,
             "UseJitter: Exponential uses DecorrelatedJitterBackoffV2 (polly-v2), Constant and "
             "Linear d x U[0.75, 1.25)");
  return 0;
}

/* CircuitBreaker: Polly's ratio over a sampling window as the "time" breaker. */
static int polly_breaker(imp_ctx *c, json_t *b, const char *src, json_t *top) {
  static const char *const known[] = {"FailureRatio", "MinimumThroughput", "SamplingDuration",
                                      "BreakDuration", "Name"};
  static const imp_unmodelled skip[] = {
      {"ShouldHandle", "a delegate cannot come from configuration"},
      {"BreakDurationGenerator", "a delegate cannot come from configuration"},
      {"ManualControl", "not a breaker decision"}, {"StateProvider", "not a breaker decision"}};
  imp_check_keys(c, b, src, known, 5, skip, 4);
  double ratio = 0.1;
  long long min = 100;
  int64_t sampling = 30000000000LL, brk = 5000000000LL;
  if (imp_number(c, b, "FailureRatio", src, &ratio) < 0 ||
      imp_int(c, b, "MinimumThroughput", src, 2, 2147483647LL, &min) < 0 ||
      timespan(c, b, "SamplingDuration", src, &sampling, NULL) < 0 ||
      timespan(c, b, "BreakDuration", src, &brk, NULL) < 0)
    return -1;
  char p[IMP_PATH], d[40];
  if (ratio <= 0 || ratio > 1) return imp_fail(c, imp_path_key(p, src, "FailureRatio"), "FailureRatio is in (0, 1]");
  long long window = (long long)llround((double)sampling / 1e9);
  if (window < 1) window = 1;
  if ((double)window * 1e9 != (double)sampling)
    imp_warn(c, imp_path_key(p, src, "SamplingDuration"), "the window is kept in whole seconds: %lld s", window);
  imp_duration_format(brk, d, sizeof d);
  json_t *o = json_pack("{s:s, s:f, s:I, s:I, s:s, s:i}", "type", "time", "failureRateThreshold",
                        ratio * 100, "slidingWindowSize", (json_int_t)window, "minimumNumberOfCalls",
                        (json_int_t)min, "waitDurationInOpenState", d,
                        "permittedNumberOfCallsInHalfOpenState", 1);
  if (o == NULL || json_object_set_new(top, "circuitBreaker", o) != 0) return imp_oom(c);
  imp_origin(c, "$.retrysim.circuitBreaker", src,
             "FailureRatio x 100 over SamplingDuration in s, MinimumThroughput, BreakDuration, one "
             "half-open trial (Polly's defaults 0.1, 30 s, 100, 5 s)");
  return 0;
}

int expt__import_polly(imp_ctx *c, json_t *doc, json_t *config) {
  char src[IMP_PATH] = "$", p[IMP_PATH], d[40];
  json_t *h = find_handler(doc, src, 0);
  bool standard = h != NULL;
  json_t *entry = json_object(), *top = json_object(), *ext = json_object();
  if (entry == NULL || top == NULL || ext == NULL) return json_decref(entry), json_decref(top), json_decref(ext), imp_oom(c);
  json_object_set_new(entry, "name", json_pack("[{}]"));
  json_object_set_new(entry, "retrysim", ext);
  json_object_set_new(config, "methodConfig", json_pack("[o]", entry));
  imp_origin(c, "$.methodConfig[0].name", NULL, "every method: a pipeline guards every call");
  int rc;
  if (!standard) {
    rc = polly_retry(c, doc, "$", false, entry, top);
  } else {
    json_t *r = json_object_get(h, "Retry");
    rc = polly_retry(c, json_is_object(r) ? r : NULL, imp_path_key(p, src, "Retry"), true, entry, top);
    json_t *b = json_object_get(h, "CircuitBreaker");
    if (rc == 0) rc = polly_breaker(c, json_is_object(b) ? b : NULL, imp_path_key(p, src, "CircuitBreaker"), top);
    int64_t t = 10000000000LL, total = 30000000000LL;
    char ft[IMP_PATH] = "", ftt[IMP_PATH] = "";
    if (rc == 0 && (timespan(c, json_object_get(h, "AttemptTimeout"), "Timeout", imp_path_key(p, src, "AttemptTimeout"), &t, ft) < 0 ||
                    timespan(c, json_object_get(h, "TotalRequestTimeout"), "Timeout", imp_path_key(p, src, "TotalRequestTimeout"), &total, ftt) < 0))
      rc = -1;
    if (rc == 0) {
      imp_duration_format(t, d, sizeof d);
      json_object_set_new(ext, "perAttemptTimeout", json_string(d));
      imp_origin(c, "$.methodConfig[0].retrysim.perAttemptTimeout", or_null(ft), "AttemptTimeout (default 10 s)");
      imp_duration_format(total, d, sizeof d);
      json_object_set_new(entry, "timeout", json_string(d));
      imp_origin(c, "$.methodConfig[0].timeout", or_null(ftt), "TotalRequestTimeout (default 30 s)");
      if (t > total) rc = imp_fail(c, src, "AttemptTimeout must not exceed TotalRequestTimeout (the handler's validation)");
    }
    /* The handler always has its limiter, configured or not. */
    if (standard)
      imp_warn(c, imp_path_key(p, src, "RateLimiter"), "the standard handler's concurrency limiter "
               "(1000 permits, no queue, by default) is not modelled");
    if (json_object_get(h, "Hedging") != NULL)
      imp_warn(c, imp_path_key(p, src, "Hedging"), "the standard hedging handler is not read");
  }
  if (rc == 0 && json_object_size(top) > 0) json_object_set(config, "retrysim", top);
  json_decref(top);
  return c->err->code == RETRY_OK ? rc : -1;
}
