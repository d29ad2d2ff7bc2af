/*
 * test_expt_import.c: the foreign policy formats (expt/expt_import*.c) as row tables. Each row
 * is a project's own test case (Envoy's retry_state_impl_test.cc, Istio's retry_test.go, as
 * /work/research/policy-formats.md sections 1.9 and 2.7 list them) turned into input -> the
 * service config fields retrysim runs; every translation must also load through libretry's
 * loader. Then the example files of tests/data/import/ and the invalid cases: unknown fields
 * warn with a did-you-mean, a YAML syntax error names line and column, a service config is
 * left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_import.h"
#include "retry/retry.h"
#include "retry/retry_json.h"

/* One row: a source text and what its translation holds for its first methodConfig entry. */
typedef struct row {
  const char *name;     /* the project's test it comes from */
  const char *input;    /* YAML */
  int max_attempts;     /* 0: no retryPolicy */
  const char *codes;    /* retryableStatusCodes, compact JSON; NULL when no policy */
  const char *space;    /* "grpc" or "http"; NULL when no policy */
  const char *initial;  /* initialBackoff, NULL: not checked */
  const char *max;      /* maxBackoff, NULL: not checked */
  const char *budget;   /* $.retrysim.budget, compact JSON; NULL: none */
  const char *warning;  /* a substring of some warning; NULL: no warning at all */
} row;

/* The compact JSON of v ("" when v is NULL), into buf. */
static const char *dump(json_t *v, char *buf, size_t size) {
  char *s = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER |
                                          JSON_REAL_PRECISION(15))
                      : NULL;
  snprintf(buf, size, "%s", s != NULL ? s : "");
  free(s);
  return buf;
}

/* Whether a warning of r holds text. */
static bool has_warning(const expt_import_result *r, const char *text) {
  size_t i;
  json_t *w;
  json_array_foreach(r->warnings, i, w) {
    if (strstr(json_string_value(json_object_get(w, "message")), text) != NULL) return true;
  }
  return false;
}

/* The translation must load as it is, with no error. */
static void loads(const expt_import_result *r, const char *name) {
  char *text = json_dumps(r->config, JSON_COMPACT);
  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_string(text, name, NULL, &err);
  if (cfg == NULL) fail_msg("%s: the translation does not load: %s: %s", name, err.path, err.message);
  retry_config_destroy(cfg);
  free(text);
}

static void check_row(const row *w) {
  expt_import_result r;
  retry_error err;
  char got[512];
  int rc = expt_import_text(w->input, strlen(w->input), w->name, &r, &err);
  if (rc != 1) fail_msg("%s: rc %d: %s", w->name, rc, err.message);
  json_t *e = json_array_get(json_object_get(r.config, "methodConfig"), 0);
  json_t *rp = json_object_get(e, "retryPolicy");
  if (w->max_attempts == 0) {
    if (rp != NULL) fail_msg("%s: a retryPolicy where none was expected: %s", w->name,
                             dump(rp, got, sizeof got));
  } else {
    if (rp == NULL) fail_msg("%s: no retryPolicy: %s", w->name, dump(r.config, got, sizeof got));
    assert_int_equal(json_integer_value(json_object_get(rp, "maxAttempts")), w->max_attempts);
    assert_string_equal(dump(json_object_get(rp, "retryableStatusCodes"), got, sizeof got), w->codes);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "retrysim"), "statusSpace")),
                        w->space);
    if (w->initial != NULL)
      assert_string_equal(json_string_value(json_object_get(rp, "initialBackoff")), w->initial);
    if (w->max != NULL)
      assert_string_equal(json_string_value(json_object_get(rp, "maxBackoff")), w->max);
  }
  json_t *b = json_object_get(json_object_get(r.config, "retrysim"), "budget");
  if (w->budget == NULL && b != NULL) fail_msg("%s: a budget: %s", w->name, dump(b, got, sizeof got));
  if (w->budget != NULL) assert_string_equal(dump(b, got, sizeof got), w->budget);
  if (w->warning == NULL && json_array_size(r.warnings) > 0)
    fail_msg("%s: unexpected warning: %s", w->name, dump(r.warnings, got, sizeof got));
  if (w->warning != NULL && !has_warning(&r, w->warning))
    fail_msg("%s: no warning holding \"%s\": %s", w->name, w->warning, dump(r.warnings, got, sizeof got));
  loads(&r, w->name);
  expt_import_result_close(&r);
}

/* {==================================================================
 * Envoy (retry_state_impl_test.cc, config_impl.cc defaults)
 * =================================================================== */

#define RP(on) "retry_policy: {retry_on: \"" on "\"}\n"

static const row envoy_rows[] = {
    /* PolicyNoneRemoteReset: a route without a retry policy never retries. */
    {"PolicyNoneRemoteReset", "route: {cluster: c}\nmatch: {prefix: /}\n", 0, NULL, NULL, NULL,
     NULL, NULL, NULL},
    /* Policy5xxRemote503: 503 retried once (num_retries defaults to 1), then no more. */
    {"Policy5xxRemote503", RP("5xx"), 2, "[\"5xx\"]", "http", "0.025s", "0.25s", NULL, NULL},
    /* PolicyGatewayErrorRemote502/503/504. */
    {"PolicyGatewayErrorRemote50x", RP("gateway-error"), 2, "[\"gateway-error\"]", "http", NULL,
     NULL, NULL, NULL},
    /* PolicyRetriable4xxRetry / NoRetry: 409 only. */
    {"PolicyRetriable4xxRetry", RP("retriable-4xx"), 2, "[\"retriable-4xx\"]", "http", NULL, NULL,
     NULL, NULL},
    /* PolicyGrpcCancelled / DeadlineExceeded / ResourceExhausted: grpc-status in headers. */
    {"PolicyGrpcCancelled", RP("cancelled"), 2, "[\"CANCELLED\"]", "grpc", NULL, NULL, NULL, NULL},
    {"PolicyGrpcDeadlineExceeded", RP("deadline-exceeded"), 2, "[\"DEADLINE_EXCEEDED\"]", "grpc",
     NULL, NULL, NULL, NULL},
    {"PolicyGrpcResourceExhausted", RP("resource-exhausted"), 2, "[\"RESOURCE_EXHAUSTED\"]", "grpc",
     NULL, NULL, NULL, NULL},
    /* PolicyConnectFailureResetConnectFailure: a connection failure is retried; here that is
     * what a down replica answers, UNAVAILABLE, and the approximation is warned. */
    {"PolicyConnectFailure", RP("connect-failure"), 2, "[\"UNAVAILABLE\"]", "grpc", NULL, NULL,
     NULL, "retried as UNAVAILABLE"},
    {"PolicyRefusedStream", RP("refused-stream"), 2, "[\"UNAVAILABLE\"]", "grpc", NULL, NULL, NULL,
     "retried as UNAVAILABLE"},
    /* Policy5xxRemoteReset: 5xx covers resets too, so no 503 is added and nothing warns. */
    {"Policy5xxRemoteReset", RP("5xx,reset"), 2, "[\"5xx\"]", "http", NULL, NULL, NULL, NULL},
    /* MaxRetriesHeader (3): three retries, four attempts. */
    {"MaxRetries3", "retry_policy: {retry_on: 5xx, num_retries: 3}\n", 4, "[\"5xx\"]", "http",
     NULL, NULL, NULL, NULL},
    /* ZeroMaxRetriesHeader: no retry at all. */
    {"ZeroMaxRetries", "retry_policy: {retry_on: 5xx, num_retries: 0}\n", 0, NULL, NULL, NULL,
     NULL, NULL, NULL},
    /* CustomBackOffInterval: base 100 ms, max 1200 ms. */
    {"CustomBackOffInterval",
     "retry_policy: {retry_on: 5xx, retry_back_off: {base_interval: 0.1s, max_interval: 1.2s}}\n",
     2, "[\"5xx\"]", "http", "0.1s", "1.2s", NULL, NULL},
    /* CustomBackOffIntervalDefaultMax: max is 10 x base. */
    {"CustomBackOffIntervalDefaultMax",
     "retry_policy: {retry_on: 5xx, retry_back_off: {base_interval: 0.1s}}\n", 2, "[\"5xx\"]",
     "http", "0.1s", "1s", NULL, NULL},
    /* retriable-status-codes with its list. */
    {"RetriableStatusCodes",
     "retry_policy: {retry_on: retriable-status-codes, retriable_status_codes: [409, 429]}\n", 2,
     "[409,429]", "http", NULL, NULL, NULL, NULL},
    /* BudgetAvailableRetries: the budget (20 %, min 3) replaces max_retries 0. */
    {"BudgetAvailableRetries",
     RP("5xx") "clusters:\n- circuit_breakers: {thresholds: [{max_retries: 0, retry_budget: "
               "{budget_percent: {value: 20}, min_retry_concurrency: 3}}]}\n",
     2, "[\"5xx\"]", "http", NULL, NULL,
     "{\"type\":\"envoy\",\"budgetPercent\":20.0,\"minRetryConcurrency\":3}",
     "max_retries is replaced by retry_budget"},
    /* BudgetNoAvailableRetries: a budget of 0 % with minimum 0 overrides max_retries 5. */
    {"BudgetNoAvailableRetries",
     RP("5xx") "clusters:\n- circuit_breakers: {thresholds: [{max_retries: 5, retry_budget: "
               "{budget_percent: {value: 0}, min_retry_concurrency: 0}}]}\n",
     2, "[\"5xx\"]", "http", NULL, NULL,
     "{\"type\":\"envoy\",\"budgetPercent\":0.0,\"minRetryConcurrency\":0}",
     "max_retries is replaced by retry_budget"},
    /* Default thresholds: max_retries 3 concurrent retries, the same arithmetic as a budget of
     * 0 % with minimum 3. */
    {"DefaultMaxRetries", RP("5xx") "clusters:\n- circuit_breakers: {thresholds: [{priority: DEFAULT}]}\n",
     2, "[\"5xx\"]", "http", NULL, NULL,
     "{\"type\":\"envoy\",\"budgetPercent\":0.0,\"minRetryConcurrency\":3}", NULL},
    /* ParseRetryOn: spaces around tokens are fine; "xxx" is dropped (warned here). */
    {"ParseRetryOnSpaces", RP(" 5xx , gateway-error ,connect-failure"), 2, "[\"5xx\"]", "http",
     NULL, NULL, NULL, NULL},
    {"ParseRetryOnUnknown", RP("xxx,gateway-error,connect-failure"), 2,
     "[\"gateway-error\"]", "http", NULL, NULL, NULL, "unknown retry condition \"xxx\""},
    /* ParseRetryGrpcOn: "resource-exhaust" is not a condition (Envoy drops it). */
    {"ParseRetryGrpcOnMisspelt", RP("cancelled,resource-exhaust"), 2, "[\"CANCELLED\"]", "grpc",
     NULL, NULL, NULL, "did you mean \"resource-exhausted\"?"},
    /* More than gRPC's 5 attempts: the cap is lifted to what Envoy would do. */
    {"TenRetries", "retry_policy: {retry_on: unavailable, num_retries: 9}\n", 10,
     "[\"UNAVAILABLE\"]", "grpc", NULL, NULL, NULL, NULL},
};

static void test_import_envoy_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof envoy_rows / sizeof envoy_rows[0]; i++) check_row(&envoy_rows[i]);
}

/* }================================================================== */

/* {==================================================================
 * Istio (pilot/pkg/networking/core/route/retry/retry_test.go)
 * =================================================================== */

#define VS(route) "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a}\n" \
                  "spec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a}}]\n" route

static const row istio_rows[] = {
    /* TestNilRetryShouldReturnDefault: 2 retries on the default conditions, no HTTP status. */
    {"TestNilRetryShouldReturnDefault", VS(""), 3, "[\"CANCELLED\",\"UNAVAILABLE\"]", "grpc",
     "0.025s", "0.25s", NULL, NULL},
    /* TestZeroAttemptsShouldReturnNilPolicy. */
    {"TestZeroAttemptsShouldReturnNilPolicy", VS("    retries: {attempts: 0}\n"), 0, NULL, NULL,
     NULL, NULL, NULL, NULL},
    /* TestRetryWithAllFieldsSet: made-up conditions are kept by Istio, dropped by Envoy; here
     * they are warned and nothing is left to retry on. */
    {"TestRetryWithAllFieldsSet",
     VS("    retries: {attempts: 2, retryOn: \"some,fake,conditions\", perTryTimeout: 3s, backoff: 2s}\n"),
     0, NULL, NULL, NULL, NULL, NULL, "unknown retry condition \"fake\""},
    /* TestRetryOnWithRetriableStatusCodes: codes [503] next to gateway-error. */
    {"TestRetryOnWithRetriableStatusCodes",
     VS("    retries: {attempts: 2, retryOn: \"gateway-error,retriable-status-codes,503\"}\n"), 3,
     "[\"gateway-error\",503]", "http", NULL, NULL, NULL, NULL},
    /* TestRetryOnContainingStatusCodes: 404 and 503 become status codes. */
    {"TestRetryOnContainingStatusCodes",
     VS("    retries: {attempts: 2, retryOn: \"some,fake,5xx,404,conditions,503\"}\n"), 3,
     "[\"5xx\",404,503]", "http", NULL, NULL, NULL, "unknown retry condition \"some\""},
    /* The backoff is Envoy's base interval; the max stays 10 x base. */
    {"Backoff", VS("    retries: {attempts: 1, retryOn: unavailable, backoff: 100ms}\n"), 2,
     "[\"UNAVAILABLE\"]", "grpc", "0.1s", "1s", NULL, NULL},
    /* A DestinationRule's retryBudget; minRetryConcurrency 0 stays Istio's 3. */
    {"RetryBudget",
     VS("") "---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: a}\n"
            "spec: {host: a, trafficPolicy: {retryBudget: {percent: 25, minRetryConcurrency: 0}}}\n",
     3, "[\"CANCELLED\",\"UNAVAILABLE\"]", "grpc", NULL, NULL,
     "{\"type\":\"envoy\",\"budgetPercent\":25.0,\"minRetryConcurrency\":3}", NULL},
    /* connectionPool.http.maxRetries alone: that many retries in flight. */
    {"MaxRetries",
     VS("") "---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: a}\n"
            "spec: {host: a, trafficPolicy: {connectionPool: {http: {maxRetries: 7}}}}\n",
     3, "[\"CANCELLED\",\"UNAVAILABLE\"]", "grpc", NULL, NULL,
     "{\"type\":\"envoy\",\"budgetPercent\":0.0,\"minRetryConcurrency\":7}", NULL},
};

static void test_import_istio_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof istio_rows / sizeof istio_rows[0]; i++) check_row(&istio_rows[i]);
}

/* }================================================================== */

/* {==================================================================
 * Linkerd ServiceProfile (profile_translator.go, linkerd2-proxy http/retry.rs)
 * =================================================================== */

#define SP(route, budget) "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\n" \
                          "metadata: {name: a.ns.svc.cluster.local}\nspec:\n  routes:\n" route budget
#define LINKERD_GRPC "[\"DATA_LOSS\",\"DEADLINE_EXCEEDED\",\"INTERNAL\",\"PERMISSION_DENIED\",\"UNAVAILABLE\",\"UNKNOWN\"]"
#define LINKERD_DEFAULT_BUDGET "{\"type\":\"linkerd\",\"retryRatio\":0.2,\"minRetriesPerSecond\":10,\"ttl\":\"10s\"}"

static const row linkerd_rows[] = {
    /* Not isRetryable: no retries; the budget is still the default one. */
    {"NotRetryable", SP("  - {name: a, condition: {pathRegex: /p.S/M}}\n", ""), 0, NULL, NULL,
     NULL, NULL, LINKERD_DEFAULT_BUDGET, NULL},
    /* isRetryable: at once, no count limit (1000, the engine's most), gRPC failures. */
    {"RetryableGrpc", SP("  - {name: a, condition: {pathRegex: /p.S/M}, isRetryable: true}\n", ""),
     1000, LINKERD_GRPC, "grpc", "0.000000001s", "0.000000001s", LINKERD_DEFAULT_BUDGET, NULL},
    /* responseClasses: a 500..599 failure range is HTTP 5xx. */
    {"ResponseClasses",
     SP("  - {name: a, condition: {pathRegex: /p.S/M}, isRetryable: true, responseClasses: "
        "[{condition: {status: {min: 500, max: 599}}, isFailure: true}]}\n", ""),
     1000, "[\"5xx\"]", "http", NULL, NULL, LINKERD_DEFAULT_BUDGET, NULL},
    /* A retryBudget block: omitted fields are zero (Go's zero values). */
    {"BudgetBlockZeroes",
     SP("  - {name: a, condition: {pathRegex: /p.S/M}, isRetryable: true}\n",
        "  retryBudget: {retryRatio: 0.3, ttl: 5s}\n"),
     1000, LINKERD_GRPC, "grpc", NULL, NULL,
     "{\"type\":\"linkerd\",\"retryRatio\":0.3,\"minRetriesPerSecond\":0,\"ttl\":\"5s\"}", NULL},
    /* A path that is not a gRPC method: every method, with a warning. */
    {"HttpPath", SP("  - {name: a, condition: {pathRegex: '/books/[^/]*'}, isRetryable: true}\n", ""),
     1000, "[\"5xx\"]", "http", NULL, NULL, LINKERD_DEFAULT_BUDGET, "not a gRPC method path"},
};

/* Linkerd >= 2.16's annotations (policy-test outbound_api_http.rs, the policy controller's
 * index/http.rs and grpc.rs, linkerd.io/2/reference/retries), one resource per row. */
#define LR(kind, ann, rules) "apiVersion: gateway.networking.k8s.io/v1\nkind: " kind "\n" \
                             "metadata:\n  name: r\n  annotations:\n" ann "spec:\n  rules:\n" rules
#define LHTTP "  - matches: [{path: {type: PathPrefix, value: /p.S/M}}]\n"
#define LGRPC "  - matches: [{method: {service: p.S, method: M}}]\n"

static const row linkerd_ann_rows[] = {
    /* http_route_retries_and_timeouts: 5xx is the range 500..599; the limit defaults to 1. */
    {"HttpRouteRetries5xx", LR("HTTPRoute", "    retry.linkerd.io/http: 5xx\n"
                               "    timeout.linkerd.io/response: 10s\n", LHTTP),
     2, "[\"5xx\"]", "http", "0.025s", "0.25s", NULL, "timeout.linkerd.io/response is not modelled"},
    /* Ranges and gateway-error; the limit counts retries. */
    {"HttpRangesLimit", LR("HTTPRoute", "    retry.linkerd.io/http: \"gateway-error,429-430\"\n"
                           "    retry.linkerd.io/limit: \"4\"\n", LHTTP),
     5, "[\"gateway-error\",429,430]", "http", NULL, NULL, NULL, NULL},
    /* A limit of "0" counts as absent: with http set, 1 retry. */
    {"LimitZeroIsAbsent", LR("HTTPRoute", "    retry.linkerd.io/http: \"503\"\n"
                             "    retry.linkerd.io/limit: \"0\"\n", LHTTP),
     2, "[503]", "http", NULL, NULL, NULL, NULL},
    /* gRPC names on a GRPCRoute; a retry timeout makes its own expiry retryable. */
    {"GrpcRouteTimeout", LR("GRPCRoute", "    retry.linkerd.io/grpc: cancelled,unavailable\n"
                            "    retry.linkerd.io/timeout: 250ms\n", LGRPC),
     2, "[\"CANCELLED\",\"UNAVAILABLE\",\"DEADLINE_EXCEEDED\"]", "grpc", NULL, NULL, NULL,
     "DEADLINE_EXCEEDED is retryable here"},
    /* retry.linkerd.io/http is not valid on a GRPCRoute; no status left: not retried. */
    {"HttpOnGrpcRoute", LR("GRPCRoute", "    retry.linkerd.io/http: 5xx\n", LGRPC), 0, NULL, NULL,
     NULL, NULL, NULL, "not valid on a GRPCRoute"},
    /* A limit alone retries only connection-level errors, which retrysim does not see. */
    {"LimitAlone", LR("HTTPRoute", "    retry.linkerd.io/limit: \"3\"\n", LHTTP), 0, NULL, NULL,
     NULL, NULL, NULL, "Linkerd retries only connection-level errors"},
    /* A typo under Linkerd's prefix warns with a did-you-mean. */
    {"Typo", LR("HTTPRoute", "    retry.linkerd.io/http: 5xx\n    retry.linkerd.io/limt: \"2\"\n",
                LHTTP),
     2, "[\"5xx\"]", "http", NULL, NULL, NULL, "did you mean \"retry.linkerd.io/limit\"?"},
};

/* parent_retries_and_timeouts: the Service's retry annotations reach a route that has only
 * timeout ones, whose request timeout replaces the Service's timeouts wholesale. */
static void test_import_linkerd_parent(void **state) {
  (void)state;
  const char *in =
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n"
      "    retry.linkerd.io/http: 5xx\n    timeout.linkerd.io/response: 10s\n---\n"
      LR("HTTPRoute", "    timeout.linkerd.io/request: 5s\n", LHTTP);
  expt_import_result r;
  retry_error err;
  char got[512];
  assert_int_equal(expt_import_text(in, strlen(in), "parent", &r, &err), 1);
  json_t *e = json_array_get(json_object_get(r.config, "methodConfig"), 0);
  assert_string_equal(dump(json_object_get(json_object_get(e, "retryPolicy"),
                                           "retryableStatusCodes"), got, sizeof got), "[\"5xx\"]");
  assert_string_equal(json_string_value(json_object_get(e, "timeout")), "5s");
  /* The Service's own entry, for every other method, keeps its response timeout's warning. */
  assert_int_equal(json_array_size(json_object_get(r.config, "methodConfig")), 2);
  assert_true(has_warning(&r, "timeout.linkerd.io/response is not modelled"));
  loads(&r, "parent");
  expt_import_result_close(&r);
}

static void test_import_linkerd_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof linkerd_rows / sizeof linkerd_rows[0]; i++) check_row(&linkerd_rows[i]);
  for (size_t i = 0; i < sizeof linkerd_ann_rows / sizeof linkerd_ann_rows[0]; i++)
    check_row(&linkerd_ann_rows[i]);
}

/* }================================================================== */

/* {==================================================================
 * Gateway API (conformance/tests/httproute-retry*.go), as Istio implements the GEP
 * =================================================================== */

#define HR(rule) "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\n" \
                 "spec:\n  rules:\n  - " rule "\n"

static const row gateway_rows[] = {
    /* codes [500], attempts 3: 500 x2 then OK is 200, 500 x4 is 500 (4 retries > 3), 503 is
     * not retried. */
    {"Codes500Attempts3", HR("retry: {codes: [500], attempts: 3}"), 4, "[500,503]", "http",
     "0.025s", "0.25s", NULL, "connection failures and resets are retried as 503"},
    /* codes 500, 502, 503, 504, attempts 2: each retried twice. */
    {"Codes5xxAttempts2", HR("retry: {codes: [500, 502, 503, 504], attempts: 2}"), 3,
     "[500,502,503,504]", "http", NULL, NULL, NULL, NULL},
    /* No codes (HTTPRouteRetryConnectionError): connection errors only. */
    {"NoCodesConnectionErrors", HR("retry: {attempts: 3}"), 4, "[503]", "http", NULL, NULL, NULL,
     "only connection errors are retried"},
    /* attempts is implementation-specific: Istio's 2; backoff is the base. */
    {"DefaultAttempts", HR("retry: {codes: [503], backoff: 1s500ms}"), 3, "[503]", "http", "1.5s",
     "15s", NULL, NULL},
    /* No retry stanza: not retried. */
    {"NoRetry", HR("timeouts: {request: 4s}"), 0, NULL, NULL, NULL, NULL, NULL, NULL},
};

static void test_import_gateway_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof gateway_rows / sizeof gateway_rows[0]; i++) check_row(&gateway_rows[i]);
}

/* }================================================================== */

/* {==================================================================
 * resilience4j (SupplierRetryTest, IntervalFunctionTest, CommonRetryConfigurationProperties)
 * =================================================================== */

#define R4J(inst) "resilience4j:\n  retry:\n    instances:\n      a: " inst "\n"
#define R4J_ALL "[\"CANCELLED\",\"UNKNOWN\",\"INVALID_ARGUMENT\",\"DEADLINE_EXCEEDED\",\"NOT_FOUND\"," \
                "\"ALREADY_EXISTS\",\"PERMISSION_DENIED\",\"RESOURCE_EXHAUSTED\",\"FAILED_PRECONDITION\"," \
                "\"ABORTED\",\"OUT_OF_RANGE\",\"UNIMPLEMENTED\",\"INTERNAL\",\"UNAVAILABLE\",\"DATA_LOSS\"," \
                "\"UNAUTHENTICATED\"]"

static const row r4j_rows[] = {
    /* shouldReturnAfterThreeAttempts: the defaults, 3 calls with 2 x 500 ms between. */
    {"shouldReturnAfterThreeAttempts", R4J("{}"), 3, R4J_ALL, "grpc", "0.5s", "0.5s", NULL, NULL},
    /* shouldReturnAfterOneAttempt: maxAttempts 1 retries nothing. */
    {"shouldReturnAfterOneAttempt", R4J("{maxAttempts: 1}"), 0, NULL, NULL, NULL, NULL, NULL, NULL},
    /* maxAttempts 0 in the properties is ignored (the default 3 holds). */
    {"MaxAttemptsZeroIgnored", R4J("{maxAttempts: 0}"), 3, R4J_ALL, "grpc", NULL, NULL, NULL, NULL},
    /* shouldTakeIntoAccountBackoffFunction: ofExponentialBackoff(500, 2.0), 3 calls: 500 then
     * 1000 ms. */
    {"shouldTakeIntoAccountBackoffFunction",
     R4J("{waitDuration: 500ms, enableExponentialBackoff: true, exponentialBackoffMultiplier: 2}"),
     3, R4J_ALL, "grpc", "0.5s", "1s", NULL, NULL},
    /* Without waitDuration the back-off keys are not applied: fixed 500 ms. */
    {"BackoffNeedsWaitDuration", R4J("{enableExponentialBackoff: true}"), 3, R4J_ALL, "grpc", "0.5s",
     "0.5s", NULL, "without waitDuration"},
    /* The cap needs an explicit multiplier. */
    {"CapNeedsMultiplier",
     R4J("{waitDuration: 100, enableExponentialBackoff: true, exponentialMaxWaitDuration: 1s}"), 3,
     R4J_ALL, "grpc", "0.1s", NULL, NULL, "ignored, as resilience4j ignores it"},
    /* Exception classes cannot be evaluated: warned by name. */
    {"RetryExceptions", R4J("{retryExceptions: [java.io.IOException]}"), 3, R4J_ALL, "grpc", NULL,
     NULL, NULL, "\"retryExceptions\" is not modelled"},
    /* A misspelt key warns with a did-you-mean. */
    {"Misspelt", R4J("{maxAttempt: 4}"), 3, R4J_ALL, "grpc", NULL, NULL, NULL,
     "did you mean \"maxAttempts\"?"},
};

static void test_import_r4j_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof r4j_rows / sizeof r4j_rows[0]; i++) check_row(&r4j_rows[i]);
}

/* }================================================================== */

/* {==================================================================
 * Polly v8 (RetryHelperTests, RetryConstants; HttpStandardResilienceOptions)
 * =================================================================== */

static const row polly_rows[] = {
    /* new RetryStrategyOptions(): 3 retries, constant 2 s, no jitter, any exception. */
    {"DefaultRetryStrategyOptions", "{\"MaxRetryAttempts\": 3}", 4, R4J_ALL, "grpc", "2s", "2s",
     NULL, NULL},
    /* Exponential: 2^a x Delay, the largest of 3 retries 4 x Delay. */
    {"Exponential", "{\"MaxRetryAttempts\": 3, \"Delay\": \"00:00:01\", \"BackoffType\": \"Exponential\"}",
     4, R4J_ALL, "grpc", "1s", "4s", NULL, NULL},
    /* MaxDelay caps. */
    {"MaxDelay", "{\"MaxRetryAttempts\": 5, \"Delay\": \"00:00:00.2\", \"BackoffType\": \"Exponential\","
                 " \"MaxDelay\": \"00:00:01\"}",
     6, R4J_ALL, "grpc", "0.2s", "1s", NULL, NULL},
    /* Linear is not a multiplier: warned. */
    {"Linear", "{\"MaxRetryAttempts\": 2, \"BackoffType\": \"Linear\"}", 3, R4J_ALL, "grpc", "2s",
     "2s", NULL, "Linear growth"},
    /* AddStandardResilienceHandler's defaults: 3 retries, exponential 2 s with jitter, >= 500,
     * 408, 429; the limiter is warned. */
    {"StandardHandler", "{\"Resilience\": {\"Retry\": {}}}", 4, "[\"5xx\",408,429]", "http", "2s",
     "8s", NULL, "concurrency limiter"},
};

static void test_import_polly_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof polly_rows / sizeof polly_rows[0]; i++) check_row(&polly_rows[i]);
}

/* The standard handler's breaker: Polly's ratio over its sampling window, one half-open trial. */
static void test_import_polly_breaker(void **state) {
  (void)state;
  const char *in = "{\"R\": {\"CircuitBreaker\": {\"FailureRatio\": 0.5}}}";
  expt_import_result r;
  retry_error err;
  char got[300];
  assert_int_equal(expt_import_text(in, strlen(in), "a.json", &r, &err), 1);
  assert_string_equal(dump(json_object_get(json_object_get(r.config, "retrysim"), "circuitBreaker"),
                           got, sizeof got),
                      "{\"type\":\"time\",\"failureRateThreshold\":50.0,\"slidingWindowSize\":30,"
                      "\"minimumNumberOfCalls\":100,\"waitDurationInOpenState\":\"5s\","
                      "\"permittedNumberOfCallsInHalfOpenState\":1}");
  loads(&r, "breaker");
  expt_import_result_close(&r);
}

/* }================================================================== */

/* {==================================================================
 * AWS shared config (botocore configprovider.py, standard.py, retryhandler.py)
 * =================================================================== */

#define AWS_2026 "{\"type\":\"aws\",\"retryCost\":14,\"timeoutCost\":14,\"throttleCost\":5}"
#define BEFORE "retrysim_retry_behavior = before-2026\n"

static const row aws_rows[] = {
    /* No retry_mode: standard, 3 attempts, and the 2026 behaviour (the SDKs' default since
     * 2026-11-10): 50 ms base, quota costs 14 and 5. */
    {"DefaultMode", "[default]\nregion = eu-west-1\n", 3, "[500,502,503,504,429]", "http", "0.05s",
     "20s", AWS_2026, NULL},
    /* max_attempts counts attempts (1 = no retries). */
    {"StandardMaxAttempts", "[default]\nretry_mode = standard\nmax_attempts = 5\n", 5,
     "[500,502,503,504,429]", "http", "0.05s", "20s", AWS_2026, NULL},
    {"NoRetries", "[default]\nmax_attempts = 1\n", 0, NULL, NULL, NULL, NULL, AWS_2026, NULL},
    /* Before 2026 (botocore standard with NEW_RETRIES_ENABLED false): 1 s base, costs 5 and 10. */
    {"StandardBefore2026", "[default]\nretry_mode = standard\n" BEFORE, 3,
     "[500,502,503,504,429]", "http", "1s", "20s", "{\"type\":\"aws\"}", NULL},
    /* legacy: 5 attempts, U[0,1) x 2^(n-1) s uncapped (the cap is the largest delay 5 attempts
     * reach, 8 s), no quota, 509 retried too; the 2026 change leaves it as it was. */
    {"Legacy", "[default]\nretry_mode = legacy\n", 5, "[500,502,503,504,509,429]", "http", "1s",
     "8s", NULL, NULL},
    /* The first profile when there is no [default]; a misspelt key warns. */
    {"FirstProfile", "[profile a]\nretry_mod = legacy\nmax_attempts = 2\n", 2,
     "[500,502,503,504,429]", "http", NULL, NULL, AWS_2026, "did you mean \"retry_mode\"?"},
};

static void test_import_aws_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof aws_rows / sizeof aws_rows[0]; i++) check_row(&aws_rows[i]);
}

/* adaptive adds the client rate limiter to the quota; a bad mode is an error at its line. */
static void test_import_aws_adaptive_and_bad_mode(void **state) {
  (void)state;
  const char *in = "[default]\nretry_mode = adaptive\n";
  expt_import_result r;
  retry_error err;
  assert_int_equal(expt_import_text(in, strlen(in), "config", &r, &err), 1);
  assert_string_equal(json_string_value(json_object_get(json_object_get(r.config, "retrysim"),
                                                        "retryMode")), "adaptive");
  loads(&r, "adaptive");
  expt_import_result_close(&r);
  const char *bad = "# c\n[default]\nretry_mode = fast\n";
  assert_int_equal(expt_import_text(bad, strlen(bad), "config", &r, &err), -1);
  assert_string_equal(err.path, "$.default.retry_mode");
  assert_int_equal(err.line, 3);
  assert_int_equal(err.column, 14);
}

/* }================================================================== */

/* {==================================================================
 * Errors, warnings, detection, the example files
 * =================================================================== */

/* Istio refuses attempts 0 together with other fields (ValidateHTTPRetry). */
static void test_import_istio_zero_attempts_with_fields(void **state) {
  (void)state;
  const char *in = VS("    retries: {attempts: 0, perTryTimeout: 1s}\n");
  expt_import_result r;
  retry_error err;
  assert_int_equal(expt_import_text(in, strlen(in), "vs.yaml", &r, &err), -1);
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, "$.spec.http[0].retries");
  assert_int_equal(err.line, 8);
  assert_non_null(strstr(err.message, "attempts are set to 0"));
}

/* A YAML syntax error names the line and column libyaml found it at. */
static void test_import_yaml_syntax_error(void **state) {
  (void)state;
  const char *in = "retry_policy:\n  retry_on: [5xx\n  num_retries: 2\n";
  expt_import_result r;
  retry_error err;
  assert_int_equal(expt_import_text(in, strlen(in), "bad.yaml", &r, &err), -1);
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.source, "bad.yaml");
  assert_int_equal(err.line, 3);
  assert_true(err.column > 0);
  assert_non_null(strstr(err.message, "YAML syntax error"));
}

/* An unknown field warns with a did-you-mean, at its line and column; the default applies. */
static void test_import_unknown_field_did_you_mean(void **state) {
  (void)state;
  const char *in = "retry_policy:\n  retry_on: 5xx\n  num_retry: 4\n";
  expt_import_result r;
  retry_error err;
  assert_int_equal(expt_import_text(in, strlen(in), "t.yaml", &r, &err), 1);
  json_t *w = json_array_get(r.warnings, 0);
  assert_string_equal(json_string_value(json_object_get(w, "message")),
                      "unknown field \"num_retry\" ignored; did you mean \"num_retries\"?");
  assert_string_equal(json_string_value(json_object_get(w, "path")), "$.retry_policy.num_retry");
  assert_int_equal(json_integer_value(json_object_get(w, "line")), 3);
  assert_int_equal(json_integer_value(json_object_get(w, "column")), 14);
  json_t *rp = json_object_get(json_array_get(json_object_get(r.config, "methodConfig"), 0), "retryPolicy");
  assert_int_equal(json_integer_value(json_object_get(rp, "maxAttempts")), 2);
  expt_import_result_close(&r);
}

/* A service config, valid or not, and text that is not a known format are left alone (0), so
 * the service config loader reports them as before. */
static void test_import_not_foreign(void **state) {
  (void)state;
  static const char *const texts[] = {
      "{\"methodConfig\": []}", "{\"methodConfig\": [", "garbage", "", "name: x\nvalue: 1\n",
      "[1, 2]"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    expt_import_result r;
    retry_error err;
    assert_int_equal(expt_import_text(texts[i], strlen(texts[i]), "x", &r, &err), 0);
  }
}

/* Envoy's JSON form is read too (no positions: jansson keeps none). */
static void test_import_envoy_json(void **state) {
  (void)state;
  const char *in = "{\"retry_policy\": {\"retry_on\": \"unavailable\", \"num_retries\": 2,"
                   " \"per_try_timeout\": \"0.25s\"}}";
  expt_import_result r;
  retry_error err;
  assert_int_equal(expt_import_text(in, strlen(in), "e.json", &r, &err), 1);
  assert_int_equal(r.format, EXPT_IMPORT_ENVOY);
  json_t *e = json_array_get(json_object_get(r.config, "methodConfig"), 0);
  assert_string_equal(json_string_value(json_object_get(json_object_get(e, "retrysim"),
                                                        "perAttemptTimeout")), "0.25s");
  json_t *o = json_object_get(r.origins, "$.methodConfig[0].retryPolicy.maxAttempts");
  assert_string_equal(json_string_value(json_object_get(o, "from")), "$.retry_policy.num_retries");
  assert_int_equal(json_integer_value(json_object_get(o, "line")), -1);
  expt_import_result_close(&r);
}

/* Reads a file of tests/data/import into a new buffer. */
static char *slurp(const char *name, size_t *len) {
  const char *dir = getenv("TEST_DATA_DIR");
  char path[512];
  snprintf(path, sizeof path, "%s/import/%s", dir != NULL && dir[0] ? dir : "tests/data", name);
  char *buf = NULL;
  retry_error err;
  if (retry_json_read_file(path, NULL, &buf, len, &err) != RETRY_OK) fail_msg("%s: %s", path, err.message);
  return buf;
}

/* The example files: each translates, loads, and names the fields' lines. */
static void test_import_example_files(void **state) {
  (void)state;
  static const struct {
    const char *file;
    expt_import_format format;
    const char *out;  /* an origin */
    int line;         /* its line */
    size_t warnings;  /* how many */
  } files[] = {
      {"envoy/orders-route.yaml", EXPT_IMPORT_ENVOY, "$.methodConfig[0].retryPolicy.maxAttempts", 16, 5},
      {"envoy/grpc-retry-policy.yaml", EXPT_IMPORT_ENVOY, "$.methodConfig[0].retrysim.perAttemptTimeout", 6, 1},
      {"istio/ratings.yaml", EXPT_IMPORT_ISTIO, "$.retrysim.budget.budgetPercent", 35, 4},
      {"gateway/checkout.yaml", EXPT_IMPORT_GATEWAY, "$.methodConfig[0].retrysim.perAttemptTimeout", 11, 1},
      {"istio/default-grpc.yaml", EXPT_IMPORT_ISTIO, "$.methodConfig[0].retryPolicy.maxAttempts", -1, 0},
      {"linkerd/books-profile.yaml", EXPT_IMPORT_LINKERD, "$.retrysim.budget.ttl", 24, 0},
      {"resilience4j/application.yml", EXPT_IMPORT_R4J, "$.retrysim.circuitBreaker.slidingWindowSize", 22, 0},
      {"polly/appsettings.json", EXPT_IMPORT_POLLY, "$.methodConfig[0].retryPolicy.maxAttempts", -1, 1},
      {"aws/config", EXPT_IMPORT_AWS, "$.methodConfig[0].retryPolicy.maxAttempts", 6, 0},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    size_t len;
    char *text = slurp(files[i].file, &len);
    expt_import_result r;
    retry_error err;
    int rc = expt_import_text(text, len, files[i].file, &r, &err);
    if (rc != 1) fail_msg("%s: rc %d: %s", files[i].file, rc, err.message);
    assert_int_equal(r.format, files[i].format);
    json_t *o = json_object_get(r.origins, files[i].out);
    if (o == NULL) fail_msg("%s: no origin for %s", files[i].file, files[i].out);
    assert_int_equal(json_integer_value(json_object_get(o, "line")), files[i].line);
    if (json_array_size(r.warnings) != files[i].warnings)
      fail_msg("%s: %zu warnings, want %zu", files[i].file, json_array_size(r.warnings),
               files[i].warnings);
    loads(&r, files[i].file);
    expt_import_result_close(&r);
    free(text);
  }
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_import_envoy_rows),
      cmocka_unit_test(test_import_istio_rows),
      cmocka_unit_test(test_import_linkerd_rows),
      cmocka_unit_test(test_import_linkerd_parent),
      cmocka_unit_test(test_import_gateway_rows),
      cmocka_unit_test(test_import_r4j_rows),
      cmocka_unit_test(test_import_polly_rows),
      cmocka_unit_test(test_import_polly_breaker),
      cmocka_unit_test(test_import_aws_rows),
      cmocka_unit_test(test_import_aws_adaptive_and_bad_mode),
      cmocka_unit_test(test_import_istio_zero_attempts_with_fields),
      cmocka_unit_test(test_import_yaml_syntax_error),
      cmocka_unit_test(test_import_unknown_field_did_you_mean),
      cmocka_unit_test(test_import_not_foreign),
      cmocka_unit_test(test_import_envoy_json),
      cmocka_unit_test(test_import_example_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
