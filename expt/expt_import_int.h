/*
 * expt_import_int.h: what the importers share; private to expt/expt_import*.c.
 *
 *   expt_import.c        detection, YAML into jansson with positions, durations, warnings,
 *                        the scenario loader's hook
 *   expt_import_envoy.c  Envoy (route, retry_policy, cluster) and the emitter of one route's
 *                        policy, which Istio's translation reuses (Istio emits Envoy config)
 *   expt_import_k8s.c    Kubernetes resources: Istio VirtualService and DestinationRule,
 *                        Linkerd ServiceProfile, Gateway API HTTPRoute and XBackendTrafficPolicy
 *   expt_import_linkerd_ann.c  Linkerd's retry and timeout annotations on routes and Services
 *   expt_import_aws.c    the AWS shared config file's retry_mode and max_attempts
 *   expt_import_r4j.c    resilience4j's retry and circuitbreaker (Spring Boot YAML)
 *   expt_import_polly.c  Polly v8 and the standard HTTP resilience handler (appsettings JSON)
 */
#ifndef EXPT_IMPORT_INT_H
#define EXPT_IMPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "expt/expt_import.h"

#define IMP_PATH 256

/* One translation in progress. pos maps "D$.path" (D the YAML document's index) to [line,
 * column]; it is NULL for JSON input, which has no positions (jansson keeps none). */
typedef struct imp_ctx {
  const char *source; /* the file's name, for messages */
  json_t *pos;        /* borrowed; NULL: no positions */
  int doc;            /* the document being read (multi-document YAML) */
  json_t *origins;    /* borrowed from the result */
  json_t *warnings;   /* borrowed from the result */
  retry_error *err;   /* the first error; code RETRY_OK while none */
} imp_ctx;

/* A warning at a source path (a path inside the current document, "$.spec.http[0]"). */
void imp_warn(imp_ctx *c, const char *src, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The first error at a source path; returns -1. */
int imp_fail(imp_ctx *c, const char *src, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Out of memory; returns -1. */
int imp_oom(imp_ctx *c);
/* Records that the output field out (a JSON path in the service config) came from src, or,
 * with src NULL, from note alone (a default). */
void imp_origin(imp_ctx *c, const char *out, const char *src, const char *note);

/* A duration: a proto3 JSON string ("0.25s"), a Go/Kubernetes one ("250ms", "1m30s"), or a
 * {seconds, nanos} object. Returns 1 with *ns set, -1 after an error at src. */
int imp_duration(imp_ctx *c, json_t *v, const char *src, int64_t *ns);
/* ns as a proto3 JSON duration ("0.05s") into buf. */
void imp_duration_format(int64_t ns, char *buf, size_t size);
/* An integer field (a JSON integer, or a real with no fraction): 1 with *out, 0 absent, -1. */
int imp_int(imp_ctx *c, json_t *obj, const char *key, const char *src, long long lo, long long hi,
            long long *out);
/* A number field: 1 with *out, 0 absent, -1. */
int imp_number(imp_ctx *c, json_t *obj, const char *key, const char *src, double *out);

/* A key the format has but retrysim cannot model, and why. */
typedef struct imp_unmodelled {
  const char *key;
  const char *why;
} imp_unmodelled;
/* Warns on each key of obj (at src) that is neither in known nor in skip: "unknown field"
 * with a did-you-mean over known and skip together; and on each key in skip, with its why. */
void imp_check_keys(imp_ctx *c, json_t *obj, const char *src, const char *const *known,
                    size_t n_known, const imp_unmodelled *skip, size_t n_skip);

/* src joined with ".key" or "[i]" into buf, which holds IMP_PATH bytes (and may be src). */
const char *imp_path_key(char *buf, const char *src, const char *key);
const char *imp_path_index(char *buf, const char *src, size_t i);

/* {==================================================================
 * One route's retry policy in Envoy's terms (expt_import_envoy.c)
 * =================================================================== */

/* Envoy's retry_on conditions, one bit each. */
enum {
  IMP_ON_5XX = 1 << 0,
  IMP_ON_GATEWAY = 1 << 1,
  IMP_ON_4XX = 1 << 2,
  IMP_ON_CODES = 1 << 3, /* retriable-status-codes */
  IMP_ON_CONNECT = 1 << 4,
  IMP_ON_RESET = 1 << 5,
  IMP_ON_RESET_BEFORE = 1 << 6,
  IMP_ON_REFUSED = 1 << 7,
  IMP_ON_CANCELLED = 1 << 8,
  IMP_ON_DEADLINE = 1 << 9,
  IMP_ON_INTERNAL = 1 << 10,
  IMP_ON_EXHAUSTED = 1 << 11,
  IMP_ON_UNAVAILABLE = 1 << 12,
};

#define IMP_MAX_CODES 32

/* A route's policy, filled by a format's reader, emitted by imp_route_emit. Each *_from is the
 * source path of the value, "" for a default (then *_note says whose). */
typedef struct imp_route {
  char service[128], method[128]; /* the gRPC name the route matches; "" = every method */
  char name_from[IMP_PATH];
  int64_t timeout_ns; /* the route's overall timeout, -1 none */
  char timeout_from[IMP_PATH];
  const char *timeout_note;
  long long retries; /* -1: no retry policy at all */
  char retries_from[IMP_PATH];
  const char *retries_note;
  unsigned on; /* IMP_ON_* */
  char on_from[IMP_PATH];
  const char *on_note;
  int codes[IMP_MAX_CODES]; /* retriable_status_codes */
  size_t n_codes;
  char codes_from[IMP_PATH];
  int64_t base_ns, max_ns; /* back-off; 0: Envoy's default (25 ms, 10 x base) */
  char base_from[IMP_PATH], max_from[IMP_PATH];
  int64_t per_try_ns; /* -1 none */
  char per_try_from[IMP_PATH];
  bool rate_limited; /* rate_limited_retry_back_off present: honour Retry-After */
  char rate_limited_from[IMP_PATH];
  bool hedge; /* hedge_policy.hedge_on_per_try_timeout: hedge at each per-try timeout */
  char hedge_from[IMP_PATH];
} imp_route;

/* A route with nothing set (no policy, no timeout). */
void imp_route_init(imp_route *r);
/* Parses an Envoy retry_on list (at src) into r->on; unknown tokens warn with a did-you-mean
 * and, with allow_codes, integers that are HTTP statuses go to r->codes (Istio's rule). */
int imp_retry_on_parse(imp_ctx *c, imp_route *r, const char *list, const char *src,
                       bool allow_codes);
/* Sets r's service and method from a request path ("/pkg.Svc/" or "/pkg.Svc/Method", read at
 * src); any other path but "/" warns that the policy applies to every method. */
void imp_grpc_name(imp_ctx *c, imp_route *r, const char *path, const char *src);
/* Appends r as methodConfig entry index idx of entries (and a maximum attempts limit to top's
 * "retrysim" block when needed). Returns 0 or -1. */
int imp_route_emit(imp_ctx *c, const imp_route *r, json_t *entries, json_t *top);
/* The channel's budget: Envoy's concurrent-retry budget. percent < 0: none. */
int imp_budget_emit(imp_ctx *c, json_t *top, double percent, const char *percent_from,
                    long long min_conc, const char *min_from, const char *note);

/* The translators: doc is the parsed source (for YAML, an array of its documents). */
int expt__import_envoy(imp_ctx *c, json_t *doc, json_t *config);
int expt__import_istio(imp_ctx *c, json_t *docs, json_t *config);
int expt__import_linkerd(imp_ctx *c, json_t *docs, json_t *config);
int expt__import_gateway(imp_ctx *c, json_t *docs, json_t *config);
/* Whether a document is a Service, HTTPRoute or GRPCRoute with Linkerd's retry.linkerd.io or
 * timeout.linkerd.io annotations (expt_import_linkerd_ann.c). */
bool expt__import_is_linkerd_annotated(json_t *d);
/* Those annotations of docs, as methodConfig entries (the routes', then the Service's for
 * every other method) and top-level keys of the retrysim block. */
int expt__import_linkerd_annotated(imp_ctx *c, json_t *docs, json_t *entries, json_t *top);
int expt__import_r4j(imp_ctx *c, json_t *doc, json_t *config);
/* Whether a document has resilience4j.retry or resilience4j.circuitbreaker. */
bool expt__import_is_r4j(json_t *doc);
int expt__import_polly(imp_ctx *c, json_t *doc, json_t *config);
/* Whether a document holds Polly settings: the standard handler's sections, or MaxRetryAttempts. */
bool expt__import_is_polly(json_t *doc);
/* The AWS shared config file: whether text is one (its first section is [default] or
 * [profile NAME]); its sections parsed into doc with positions; one profile translated. */
bool expt__import_is_aws(const char *text, size_t len);
int expt__import_aws_parse(imp_ctx *c, const char *text, size_t len, json_t *doc, json_t *pos);
int expt__import_aws(imp_ctx *c, json_t *doc, json_t *config);
/* Whether a document (object) is an Envoy one by its top-level keys. */
bool expt__import_is_envoy(json_t *doc);

/* }================================================================== */

#endif /* EXPT_IMPORT_INT_H */
