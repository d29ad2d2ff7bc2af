/*
 * expt_import_r4j.c: a Spring Boot application's resilience4j configuration read verbatim:
 * resilience4j.retry (maxAttempts, waitDuration, exponential and randomized waits) and
 * resilience4j.circuitbreaker (sliding window, failure rate, minimum calls, open-state wait,
 * half-open calls), with the configs/instances inheritance of the Spring properties. Semantics
 * from resilience4j's docs and source as /work/research/policy-formats.md section 6 records them
 * (docs/policy-formats.md, "resilience4j").
 * Invariant: the policy is one instance's (the first retry instance, else configs.default).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_import_int.h"

bool expt__import_is_r4j(json_t *doc) {
  json_t *r = json_object_get(doc, "resilience4j");
  return json_is_object(r) &&
         (json_object_get(r, "retry") != NULL || json_object_get(r, "circuitbreaker") != NULL);
}

/* A Spring Duration: a bare number is milliseconds, "PT0.5S" ISO-8601, else "500ms", "2s". */
static int spring_duration(imp_ctx *c, json_t *v, const char *src, int64_t *ns) {
  if (json_is_integer(v)) return *ns = json_integer_value(v) * 1000000LL, 1;
  const char *s = json_string_value(v);
  if (s != NULL && (s[0] == 'P' || s[0] == 'p') && (s[1] == 'T' || s[1] == 't')) {
    double total = 0;
    const char *p = s + 2;
    while (*p) {
      char *end;
      double x = strtod(p, &end);
      if (end == p) break;
      char u = (char)toupper((unsigned char)*end);
      total += x * (u == 'H' ? 3600e9 : u == 'M' ? 60e9 : u == 'S' ? 1e9 : NAN);
      p = end + 1;
    }
    if (*p == '\0' && total >= 0 && total < 9e18) return *ns = (int64_t)(total + 0.5), 1;
    return imp_fail(c, src, "expected a duration such as 500ms, 2s, PT0.5S or a number of ms");
  }
  return imp_duration(c, v, src, ns);
}

/* obj's key merged over base's (instance keys win, as createRetryConfig merges them). */
static json_t *merged(json_t *base, json_t *inst) {
  json_t *m = json_is_object(base) ? json_deep_copy(base) : json_object();
  if (m != NULL && json_is_object(inst)) json_object_update(m, inst);
  return m;
}

/* Where each merged key was written: key -> source path, base config first, then the
 * instance's own keys over it (they win). Set for one translation at a time (the loaders run
 * on one thread, as expt_import_set_warn's sink does); freed at its end. */
static json_t *key_sources;

static void note_sources(json_t *obj, const char *src) {
  const char *k;
  json_t *v;
  char p[IMP_PATH];
  if (key_sources == NULL || !json_is_object(obj)) return;
  json_object_foreach(obj, k, v) json_object_set_new(key_sources, k, json_string(imp_path_key(p, src, k)));
}

/* The source path of a merged key, NULL when it was not written (a default). */
static const char *source_of(const char *key) {
  return json_string_value(json_object_get(key_sources, key));
}

/* The instance (its merged keys) the policy is made of, and its name. */
static json_t *pick_instance(imp_ctx *c, json_t *block, const char *src, const char **name) {
  json_t *configs = json_object_get(block, "configs");
  json_t *insts = json_object_get(block, "instances");
  if (insts == NULL) insts = json_object_get(block, "backends");
  *name = NULL;
  char p[IMP_PATH];
  if (json_is_object(insts) && json_object_size(insts) > 0) {
    void *it = json_object_iter(insts);
    *name = json_object_iter_key(it);
    json_t *inst = json_object_iter_value(it);
    for (it = json_object_iter_next(insts, it); it != NULL; it = json_object_iter_next(insts, it))
      imp_warn(c, imp_path_key(p, imp_path_key(p, src, "instances"), json_object_iter_key(it)),
               "a policy is one client: only the first instance, \"%s\", is read", *name);
    const char *bn = json_string_value(json_object_get(inst, "baseConfig"));
    json_t *base = bn != NULL ? json_object_get(configs, bn) : json_object_get(configs, "default");
    if (bn != NULL && base == NULL) {
      imp_fail(c, imp_path_key(p, imp_path_key(p, imp_path_key(p, src, "instances"), *name), "baseConfig"),
               "no config \"%s\" under configs (resilience4j refuses this too)", bn);
      return NULL;
    }
    json_t *m = merged(base, inst);
    if (m != NULL) json_object_del(m, "baseConfig");
    char q[IMP_PATH];
    snprintf(q, sizeof q, "%s.configs.%s", src, bn != NULL ? bn : "default");
    note_sources(base, q);
    snprintf(q, sizeof q, "%s.instances.%s", src, *name);
    note_sources(inst, q);
    return m;
  }
  json_t *def = json_object_get(configs, "default");
  *name = "default";
  snprintf(p, sizeof p, "%s.configs.default", src);
  note_sources(def, p);
  return json_is_object(def) ? json_deep_copy(def) : json_object();
}

static const imp_unmodelled retry_skip[] = {
    {"retryExceptions", "exception classes cannot be evaluated: every failure is retried"},
    {"ignoreExceptions", "exception classes cannot be evaluated: none is exempted"},
    {"retryExceptionPredicate", "a Java predicate cannot be evaluated"},
    {"resultPredicate", "a Java predicate cannot be evaluated: results are never retried"},
    {"intervalBiFunction", "a Java function cannot be evaluated"},
    {"failAfterMaxAttempts", "it changes only how the caller sees a retried result"},
    {"consumeResultBeforeRetryAttempt", "not a retry decision"},
    {"eventConsumerBufferSize", "not a retry decision"},
};

/* resilience4j retries any exception by default: every gRPC failure here. */
static json_t *every_grpc_failure(void) {
  return json_pack("[s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s]", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
                   "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
                   "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                   "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED");
}

static int r4j_retry(imp_ctx *c, json_t *block, json_t *config, json_t *top) {
  json_decref(key_sources);
  key_sources = json_object();
  static const char *const known[] = {"maxAttempts", "waitDuration", "enableExponentialBackoff",
                                      "exponentialBackoffMultiplier", "exponentialMaxWaitDuration",
                                      "enableRandomizedWait", "randomizedWaitFactor", "baseConfig"};
  const char *name;
  const char *src = "$.resilience4j.retry";
  json_t *m = pick_instance(c, block, src, &name);
  if (m == NULL) return c->err->code != RETRY_OK ? -1 : imp_oom(c);
  char isrc[IMP_PATH], p[IMP_PATH], d[40];
  snprintf(isrc, sizeof isrc, "%s.instances.%s", src, name);
  imp_check_keys(c, m, isrc, known, 8, retry_skip, sizeof retry_skip / sizeof retry_skip[0]);
  long long attempts = 3;
  int rc = imp_int(c, m, "maxAttempts", isrc, 0, 1000, &attempts);
  if (rc < 0) return json_decref(m), -1;
  if (rc == 1 && attempts == 0) attempts = 3; /* 0 is ignored, as the properties ignore it */
  int64_t wait = 500000000LL, cap = -1;
  json_t *w = json_object_get(m, "waitDuration");
  bool exp = json_is_true(json_object_get(m, "enableExponentialBackoff")) && w != NULL;
  bool rnd = json_is_true(json_object_get(m, "enableRandomizedWait")) && w != NULL;
  double mult = 1.5, factor = 0.5;
  if (w != NULL && spring_duration(c, w, imp_path_key(p, isrc, "waitDuration"), &wait) < 0)
    return json_decref(m), -1;
  bool mult_set = imp_number(c, m, "exponentialBackoffMultiplier", isrc, &mult) == 1;
  bool factor_set = imp_number(c, m, "randomizedWaitFactor", isrc, &factor) == 1;
  json_t *mx = json_object_get(m, "exponentialMaxWaitDuration");
  /* The cap is honoured only with an explicit multiplier (and factor, when randomized). */
  if (exp && mx != NULL && mult_set && (!rnd || factor_set)) {
    if (spring_duration(c, mx, imp_path_key(p, isrc, "exponentialMaxWaitDuration"), &cap) < 0)
      return json_decref(m), -1;
  } else if (mx != NULL) {
    imp_warn(c, imp_path_key(p, isrc, "exponentialMaxWaitDuration"), "ignored, as resilience4j "
             "ignores it without exponentialBackoffMultiplier%s", rnd ? " and randomizedWaitFactor" : "");
  }
  if (factor < 0 || factor >= 1) return json_decref(m), imp_fail(c, isrc, "randomizedWaitFactor is in [0, 1)");
  if (w == NULL && (json_object_get(m, "enableExponentialBackoff") || json_object_get(m, "enableRandomizedWait")))
    imp_warn(c, isrc, "without waitDuration resilience4j applies none of the back-off keys: a "
                      "fixed 500 ms wait");
  json_decref(m);
  json_t *entry = json_object();
  json_object_set_new(config, "methodConfig", json_pack("[o]", entry));
  json_object_set_new(entry, "name", json_pack("[{}]"));
  imp_origin(c, "$.methodConfig[0].name", NULL, "every method: an instance guards every call it wraps");
  if (attempts <= 1) {
    imp_origin(c, "$.methodConfig[0].retryPolicy", NULL, "maxAttempts 1: no retries");
    return 0;
  }
  int64_t maxb = exp ? (cap > 0 ? cap : (int64_t)((double)wait * pow(mult, (double)(attempts - 2)))) : wait;
  if (maxb < wait) maxb = wait;
  char wd[40], md[40];
  imp_duration_format(wait, wd, sizeof wd);
  imp_duration_format(maxb, md, sizeof md);
  json_t *rp = json_pack("{s:I, s:s, s:s, s:f, s:o}", "maxAttempts", (json_int_t)attempts,
                         "initialBackoff", wd, "maxBackoff", md, "backoffMultiplier", exp ? mult : 1.0,
                         "retryableStatusCodes", every_grpc_failure());
  json_t *ext = json_pack("{s:s, s:s}", "statusSpace", "grpc", "jitter", rnd ? "grpc" : "none");
  if (rp == NULL || ext == NULL) return json_decref(rp), json_decref(ext), imp_oom(c);
  if (rnd) json_object_set_new(ext, "jitterFraction", json_real(factor));
  if (rnd && exp && cap > 0) json_object_set_new(ext, "capAfterJitter", json_true());
  json_object_set_new(entry, "retryPolicy", rp);
  json_object_set_new(entry, "retrysim", ext);
  if (attempts > 5) json_object_set_new(top, "maxAttemptsLimit", json_integer(attempts));
  const char *mp = "$.methodConfig[0].retryPolicy";
  imp_origin(c, imp_path_key(p, mp, "maxAttempts"), source_of("maxAttempts"),
             "attempts, the first included (default 3)");
  imp_origin(c, imp_path_key(p, mp, "initialBackoff"), source_of("waitDuration"), "waitDuration (default 500 ms)");
  imp_origin(c, imp_path_key(p, mp, "maxBackoff"), cap > 0 ? source_of("exponentialMaxWaitDuration") : NULL,
             exp ? (cap > 0 ? "exponentialMaxWaitDuration" : "no cap: the largest wait these attempts reach")
                 : "a fixed wait");
  imp_origin(c, imp_path_key(p, mp, "backoffMultiplier"), exp ? source_of("exponentialBackoffMultiplier") : NULL,
             exp ? "exponentialBackoffMultiplier (default 1.5)" : "a fixed wait");
  imp_origin(c, imp_path_key(p, mp, "retryableStatusCodes"), NULL,
             "resilience4j retries every exception by default: every gRPC failure");
  imp_origin(c, "$.methodConfig[0].retrysim.jitter", rnd ? source_of("randomizedWaitFactor") : NULL,
             rnd ? "randomized wait: d x U[1 - f, 1 + f) (resilience4j draws whole ms up to "
                   "d (1 + f) inclusive)"
                 : "no randomized wait");
  (void)d;
  return 0;
}

static const imp_unmodelled cb_skip[] = {
    {"slowCallRateThreshold", "slow calls are not counted by the engine's breaker"},
    {"slowCallDurationThreshold", "slow calls are not counted by the engine's breaker"},
    {"maxWaitDurationInHalfOpenState", "the half-open state waits for its calls here"},
    {"transitionToStateAfterWaitDuration", "the half-open state waits for its calls here"},
    {"automaticTransitionFromOpenToHalfOpenEnabled", "the breaker turns half-open on the first call after the wait, resilience4j's default"},
    {"recordExceptions", "exception classes cannot be evaluated"},
    {"ignoreExceptions", "exception classes cannot be evaluated"},
    {"recordFailurePredicate", "a Java predicate cannot be evaluated"},
    {"ignoreExceptionPredicate", "a Java predicate cannot be evaluated"},
    {"recordResultPredicate", "a Java predicate cannot be evaluated"},
    {"enableExponentialBackoff", "the open-state wait does not grow here"},
    {"exponentialBackoffMultiplier", "the open-state wait does not grow here"},
    {"exponentialMaxWaitDurationInOpenState", "the open-state wait does not grow here"},
    {"enableRandomizedWait", "the open-state wait is not jittered here"},
    {"randomizedWaitFactor", "the open-state wait is not jittered here"},
    {"initialState", "the breaker starts closed"},
    {"registerHealthIndicator", "not a breaker decision"},
    {"allowHealthIndicatorToFail", "not a breaker decision"},
    {"eventConsumerBufferSize", "not a breaker decision"},
    {"writableStackTraceEnabled", "not a breaker decision"},
    {"ignoreClassBindingExceptions", "not a breaker decision"},
};

static int r4j_breaker(imp_ctx *c, json_t *block, json_t *top) {
  json_decref(key_sources);
  key_sources = json_object();
  static const char *const known[] = {"slidingWindowType", "slidingWindowSize", "minimumNumberOfCalls",
                                      "failureRateThreshold", "waitDurationInOpenState",
                                      "permittedNumberOfCallsInHalfOpenState", "baseConfig"};
  const char *name;
  const char *src = "$.resilience4j.circuitbreaker";
  json_t *m = pick_instance(c, block, src, &name);
  if (m == NULL) return c->err->code != RETRY_OK ? -1 : imp_oom(c);
  char isrc[IMP_PATH], p[IMP_PATH], d[40];
  snprintf(isrc, sizeof isrc, "%s.instances.%s", src, name);
  imp_check_keys(c, m, isrc, known, 7, cb_skip, sizeof cb_skip / sizeof cb_skip[0]);
  const char *type = json_string_value(json_object_get(m, "slidingWindowType"));
  bool time = type != NULL && strcmp(type, "TIME_BASED") == 0;
  if (type != NULL && !time && strcmp(type, "COUNT_BASED") != 0)
    return json_decref(m), imp_fail(c, imp_path_key(p, isrc, "slidingWindowType"),
                                    "slidingWindowType is COUNT_BASED or TIME_BASED");
  long long size = 100, min = 100, half = 10;
  double rate = 50;
  int64_t wait = 60000000000LL;
  json_t *wv = json_object_get(m, "waitDurationInOpenState");
  if (imp_int(c, m, "slidingWindowSize", isrc, 1, 1000000, &size) < 0 ||
      imp_int(c, m, "minimumNumberOfCalls", isrc, 1, 1000000000, &min) < 0 ||
      imp_int(c, m, "permittedNumberOfCallsInHalfOpenState", isrc, 1, 1000000, &half) < 0 ||
      imp_number(c, m, "failureRateThreshold", isrc, &rate) < 0 ||
      (wv != NULL && spring_duration(c, wv, imp_path_key(p, isrc, "waitDurationInOpenState"), &wait) < 0))
    return json_decref(m), -1;
  json_decref(m);
  if (!time && min > size) min = size; /* COUNT_BASED caps the minimum at the window */
  imp_duration_format(wait, d, sizeof d);
  json_t *b = json_pack("{s:s, s:f, s:I, s:I, s:s, s:I}", "type", time ? "time" : "count",
                        "failureRateThreshold", rate, "slidingWindowSize", (json_int_t)size,
                        "minimumNumberOfCalls", (json_int_t)min, "waitDurationInOpenState", d,
                        "permittedNumberOfCallsInHalfOpenState", (json_int_t)half);
  if (b == NULL || json_object_set_new(top, "circuitBreaker", b) != 0) return imp_oom(c);
  static const char *const keys[] = {"failureRateThreshold", "slidingWindowSize", "minimumNumberOfCalls",
                                     "waitDurationInOpenState", "permittedNumberOfCallsInHalfOpenState"};
  imp_origin(c, "$.retrysim.circuitBreaker.type", source_of("slidingWindowType"),
             source_of("slidingWindowType") ? NULL : "resilience4j's default, COUNT_BASED");
  for (size_t i = 0; i < 5; i++) {
    char out[IMP_PATH];
    imp_origin(c, imp_path_key(out, "$.retrysim.circuitBreaker", keys[i]), source_of(keys[i]),
               source_of(keys[i]) ? NULL : "resilience4j's default (100 calls, minimum 100 capped "
                                           "at the window, 50 %, 60 s, 10 calls)");
  }
  return 0;
}

int expt__import_r4j(imp_ctx *c, json_t *doc, json_t *config) {
  json_t *r = json_object_get(doc, "resilience4j"), *top = json_object();
  if (top == NULL) return imp_oom(c);
  int rc = 0;
  json_t *retry = json_object_get(r, "retry"), *cb = json_object_get(r, "circuitbreaker");
  if (json_is_object(retry)) rc = r4j_retry(c, retry, config, top);
  if (rc == 0 && json_is_object(cb)) rc = r4j_breaker(c, cb, top);
  const char *k;
  json_t *v;
  json_object_foreach(r, k, v) if (strcmp(k, "retry") != 0 && strcmp(k, "circuitbreaker") != 0) {
    char p[IMP_PATH];
    imp_warn(c, imp_path_key(p, "$.resilience4j", k), "resilience4j's %s is not read", k);
  }
  if (rc == 0 && json_object_size(top) > 0) json_object_set(config, "retrysim", top);
  json_decref(top);
  json_decref(key_sources);
  key_sources = NULL;
  return c->err->code == RETRY_OK ? rc : -1;
}
