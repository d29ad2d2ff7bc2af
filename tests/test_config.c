/*
 * test_config.c: the gRPC service config loader. Hand-written cases (seed configs, name
 * precedence, the maxAttempts clamp, durations, tokenRatio truncation, hedging, every part of
 * the "retrysim" block, HTTP statuses), the data-driven suites tests/data/{valid,invalid}/<case>,
 * a chaos-allocator run that fails every allocation in turn, and a no-crash mutation run.
 * The data directory is $TEST_DATA_DIR, default "tests/data" (tests run from the repo root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "retry/retry.h"
#include "retry/retry_parts.h"
#include "tests/support/files.h"
#include "tests/support/oom.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

/* Loads json and fails the test when it does not load. */
static retry_config *load_ok(const char *json, const retry_config_opts *opts) {
  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_string(json, NULL, opts, &err);
  if (cfg == NULL) {
    char buf[600];
    retry_error_format(&err, buf, sizeof buf);
    fail_msg("load failed: %s", buf);
  }
  assert_int_equal(err.code, RETRY_OK);
  return cfg;
}

/* Loads json expecting an error; returns it in *err. */
static void load_bad(const char *json, const retry_config_opts *opts, retry_error *err) {
  retry_error_clear(err);
  retry_config *cfg = retry_config_load_string(json, NULL, opts, err);
  if (cfg != NULL) {
    retry_config_destroy(cfg);
    fail_msg("config loaded but should not have: %s", json);
  }
  assert_int_not_equal(err->code, RETRY_OK);
}

static const char *data_dir(void) {
  const char *d = getenv("TEST_DATA_DIR");
  return d != NULL && d[0] != '\0' ? d : "tests/data";
}

/* }================================================================== */

/* {==================================================================
 * A text dump of the effective configuration, for tests/data/valid/<case>/expected
 * =================================================================== */

typedef struct sbuf {
  char *s;
  size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if ((size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    b->cap = b->cap * 2 + (size_t)n;
    b->s = test_xrealloc(b->s, b->cap);
  }
}

/* gRPC names in code order, then HTTP statuses as ranges ("500-599"); "-" when empty. */
static void sb_statuses(sbuf *b, const retry_status_set *s) {
  bool any = false;
  for (int c = 0; c < RETRY_GRPC_N_CODES; c++) {
    if (!retry_status_set_has(s, RETRY_SPACE_GRPC, c)) continue;
    sb_printf(b, "%s%s", any ? "," : "", retry_grpc_code_name(c));
    any = true;
  }
  for (int st = 100; st <= 599; st++) {
    if (!retry_status_set_has(s, RETRY_SPACE_HTTP, st)) continue;
    int end = st;
    while (end < 599 && retry_status_set_has(s, RETRY_SPACE_HTTP, end + 1))
      end++;
    if (end == st)
      sb_printf(b, "%s%d", any ? "," : "", st);
    else
      sb_printf(b, "%s%d-%d", any ? "," : "", st, end);
    any = true;
    st = end;
  }
  if (!any) sb_printf(b, "-");
}

static const char *jitter_str(retry_jitter j) {
  static const char *const names[] = {"proportional", "full",     "equal",
                                      "decorrelated", "polly-v2", "none"};
  return (unsigned)j < 6 ? names[j] : "?";
}

static const char *yes(bool b) { return b ? "true" : "false"; }

static void sb_ns(sbuf *b, const char *name, int64_t ns) {
  if (ns == RETRY_NEVER)
    sb_printf(b, "%s=never", name);
  else
    sb_printf(b, "%s=%lld", name, (long long)ns);
}

static void dump_target(sbuf *b, const retry_target_config *t) {
  sb_printf(b, "target\n");
  if (t->has_throttle)
    sb_printf(b, "  throttle max_milli_tokens=%lld token_ratio_milli=%lld\n",
              (long long)t->throttle.max_milli_tokens, (long long)t->throttle.token_ratio_milli);
  else
    sb_printf(b, "  throttle none\n");
  switch (t->budget) {
    case RETRY_BUDGET_NONE: sb_printf(b, "  budget none\n"); break;
    case RETRY_BUDGET_AWS:
      sb_printf(b,
                "  budget aws capacity=%d retry_cost=%d timeout_cost=%d no_retry_increment=%d "
                "timeout_statuses=",
                (int)t->aws.capacity, (int)t->aws.retry_cost, (int)t->aws.timeout_cost,
                (int)t->aws.no_retry_increment);
      sb_statuses(b, &t->aws.timeout_statuses);
      sb_printf(b, "\n");
      break;
    case RETRY_BUDGET_FINAGLE:
      sb_printf(b, "  budget finagle ttl_ns=%lld min_retries_per_sec=%d percent_can_retry=%g\n",
                (long long)t->finagle.ttl_ns, (int)t->finagle.min_retries_per_sec,
                t->finagle.percent_can_retry);
      break;
    case RETRY_BUDGET_ENVOY:
      sb_printf(b, "  budget envoy budget_percent=%g min_retry_concurrency=%d\n",
                t->envoy.budget_percent, (int)t->envoy.min_retry_concurrency);
      break;
    case RETRY_BUDGET_TOKEN_BUCKET: {
      const retry_token_bucket_config *tb = &t->token_bucket;
      sb_printf(b,
                "  budget token_bucket capacity=%g initial=%g earn_per_call=%g "
                "earn_per_success=%g retry_cost=%g allow_at_cost=%d\n",
                tb->capacity, tb->initial, tb->earn_per_call, tb->earn_per_success, tb->retry_cost,
                (int)tb->allow_at_cost);
      break;
    }
  }
  if (t->has_adaptive) {
    sb_printf(b, "  adaptive k=%g window_ns=%lld padding=%g reject=", t->adaptive.k,
              (long long)t->adaptive.window_ns, t->adaptive.padding);
    sb_statuses(b, &t->adaptive.reject_statuses);
    sb_printf(b, "\n");
  } else {
    sb_printf(b, "  adaptive none\n");
  }
  if (t->has_breaker) {
    static const char *const kinds[] = {"consecutive", "count", "time"};
    const retry_breaker_config *c = &t->breaker;
    sb_printf(b,
              "  breaker kind=%s failure_threshold=%d failure_rate_threshold=%g "
              "window_size=%d minimum_calls=%d open_duration_ns=%lld half_open_calls=%d "
              "failures=",
              kinds[c->kind], (int)c->failure_threshold, c->failure_rate_threshold,
              (int)c->window_size, (int)c->minimum_calls, (long long)c->open_duration_ns,
              (int)c->half_open_calls);
    sb_statuses(b, &c->failure_statuses);
    sb_printf(b, "\n");
  } else {
    sb_printf(b, "  breaker none\n");
  }
  /* The parts added later print only when on, so older expected files stay as they were. */
  if (t->has_aws_adaptive) {
    const retry_aws_adaptive_config *a = &t->aws_adaptive;
    sb_printf(b,
              "  aws_adaptive beta=%g scale_constant=%g smoothing=%g rate_bucket_ns=%lld "
              "min_fill_rate=%g max_rate_adjust_scale=%g request_cost=%g fail_fast=%d "
              "throttles=",
              a->beta, a->scale_constant, a->smoothing, (long long)a->rate_bucket_ns,
              a->min_fill_rate, a->max_rate_adjust_scale, a->request_cost, (int)a->fail_fast);
    sb_statuses(b, &t->aws_throttle_statuses);
    sb_printf(b, "\n");
  }
  if (t->has_retry_breaker)
    sb_printf(b, "  retry_breaker max_ratio=%g window_ns=%lld\n", t->retry_breaker.max_ratio,
              (long long)t->retry_breaker.window_ns);
  if (t->has_limit) {
    const retry_limit_config *l = &t->limit;
    sb_printf(b,
              "  limit %s initial=%d min=%d max=%d backoff_ratio=%g timeout_ns=%lld "
              "smoothing=%g alpha=%d beta=%d probe_multiplier=%d queue_size=%d long_window=%d "
              "rtt_tolerance=%g reject=%d,%d drops=",
              retry_limit_kind_name(l->kind), (int)l->initial_limit, (int)l->min_limit,
              (int)l->max_limit, l->backoff_ratio, (long long)l->timeout_ns, l->smoothing,
              (int)l->alpha, (int)l->beta, (int)l->probe_multiplier, (int)l->queue_size,
              (int)l->long_window, l->rtt_tolerance, (int)t->limit_reject_grpc,
              (int)t->limit_reject_http);
    sb_statuses(b, &t->limit_drop_statuses);
    sb_printf(b, "\n");
  }
}

static void dump_method(sbuf *b, const char *method, const retry_method_config *mc) {
  static const char *const kinds[] = {"none", "retry", "hedge"};
  const retry_policy *p = &mc->policy;
  sb_printf(b, "lookup %s\n  matched=%s ", method, yes(mc->matched));
  sb_ns(b, "timeout_ns", mc->timeout_ns);
  sb_printf(b, "\n  policy kind=%s space=%s max_attempts=%d configured=%d\n", kinds[p->kind],
            p->space == RETRY_SPACE_HTTP ? "http" : "grpc", (int)p->max_attempts,
            (int)p->max_attempts_configured);
  sb_printf(b,
            "  backoff initial_ns=%lld max_ns=%lld multiplier=%g jitter=%s fraction=%g "
            "cap_after_jitter=%s\n",
            (long long)p->backoff.initial_ns, (long long)p->backoff.max_ns, p->backoff.multiplier,
            jitter_str(p->backoff.jitter), p->backoff.jitter_fraction,
            yes(p->backoff.cap_after_jitter));
  sb_printf(b, "  statuses=");
  sb_statuses(b, &p->retryable);
  sb_printf(b, "\n  hedging_delay_ns=%lld per_attempt_timeout_ns=%lld retry_buffer_bytes=%lld\n",
            (long long)p->hedging_delay_ns, (long long)p->per_attempt_timeout_ns,
            (long long)p->retry_buffer_bytes);
  sb_printf(b,
            "  retry_streaming=%s honor_retry_after=%s wait_for_deadline=%s "
            "local_reject_status=%d\n",
            yes(p->retry_streaming), yes(p->honor_retry_after), yes(p->wait_for_deadline),
            (int)p->local_reject_status);
  if (!p->has_idempotent_allowlist) {
    sb_printf(b, "  idempotent=none\n");
  } else {
    sb_printf(b, "  idempotent=[");
    for (size_t i = 0; i < p->n_idempotent_methods; i++)
      sb_printf(b, "%s%s", i ? "," : "", p->idempotent_methods[i]);
    sb_printf(b, "]\n");
  }
}

/* Dumps the target config, then one block per "lookup <method>" line of expected ("lookup -"
 * looks up NULL). Returns a malloc'd string. */
static char *dump_config(const retry_config *cfg, const char *expected) {
  sbuf b = {test_xrealloc(NULL, 256), 0, 256};
  b.s[0] = '\0';
  dump_target(&b, retry_config_target(cfg));
  for (const char *line = expected; line != NULL && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
    if (len > 7 && strncmp(line, "lookup ", 7) == 0) {
      char method[256];
      snprintf(method, sizeof method, "%.*s", (int)(len - 7), line + 7);
      const char *m = strcmp(method, "-") == 0 ? NULL : method;
      dump_method(&b, method, retry_config_lookup(cfg, m));
    }
    line = end != NULL ? end + 1 : NULL;
  }
  return b.s;
}

/* }================================================================== */

/* {==================================================================
 * Seed configs, lookups, clamp
 * =================================================================== */

static const char seed_throttled[] =
    "{\"methodConfig\":[{\"name\":[{\"service\":\"flaky.v1.Flaky\"}],\"retryPolicy\":"
    "{\"maxAttempts\":4,\"initialBackoff\":\"0.01s\",\"maxBackoff\":\"0.05s\","
    "\"backoffMultiplier\":2,\"retryableStatusCodes\":[\"UNAVAILABLE\"]}}],"
    "\"retryThrottling\":{\"maxTokens\":4,\"tokenRatio\":0.1}}";

static void test_config_seed_throttled_policy_loads_and_other_services_get_none(void **state) {
  (void)state;
  retry_config *cfg = load_ok(seed_throttled, NULL);
  const retry_method_config *mc = retry_config_lookup(cfg, "/flaky.v1.Flaky/Do");
  assert_true(mc->matched);
  assert_int_equal(mc->timeout_ns, RETRY_NEVER);
  const retry_policy *p = &mc->policy;
  assert_int_equal(p->kind, RETRY_POLICY_RETRY);
  assert_int_equal(p->space, RETRY_SPACE_GRPC);
  assert_int_equal(p->max_attempts, 4);
  assert_int_equal(p->max_attempts_configured, 4);
  assert_int_equal(p->backoff.initial_ns, 10 * RETRY_NS_PER_MS);
  assert_int_equal(p->backoff.max_ns, 50 * RETRY_NS_PER_MS);
  assert_true(p->backoff.multiplier == 2.0);
  assert_int_equal(p->backoff.jitter, RETRY_JITTER_PROPORTIONAL);
  assert_true(p->backoff.jitter_fraction == 0.2);
  assert_false(p->backoff.cap_after_jitter);
  assert_true(retry_status_set_has(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE));
  assert_false(retry_status_set_has(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_INTERNAL));
  assert_false(p->has_idempotent_allowlist);
  assert_int_equal(p->local_reject_status, RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(retry_policy_validate(p, NULL), RETRY_OK);
  const retry_target_config *t = retry_config_target(cfg);
  assert_true(t->has_throttle);
  assert_int_equal(t->throttle.max_milli_tokens, 4000);
  assert_int_equal(t->throttle.token_ratio_milli, 100);
  assert_int_equal(t->budget, RETRY_BUDGET_NONE);
  assert_false(t->has_adaptive);
  assert_false(t->has_breaker);
  /* Another service: nothing matches. */
  const retry_method_config *other = retry_config_lookup(cfg, "/other.v1.Other/Do");
  assert_false(other->matched);
  assert_int_equal(other->policy.kind, RETRY_POLICY_NONE);
  assert_int_equal(other->policy.max_attempts, 1);
  assert_int_equal(other->timeout_ns, RETRY_NEVER);
  retry_config_destroy(cfg);
}

/* The loaded target config is accepted by retry_target_create as is. */
static void test_config_loaded_target_config_creates_a_target(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":0.1},\"retrysim\":{"
      "\"budget\":{\"type\":\"aws\"},\"adaptiveThrottling\":{},"
      "\"circuitBreaker\":{\"type\":\"count\",\"slidingWindowSize\":20}}}",
      NULL);
  retry_error err;
  retry_error_clear(&err);
  retry_target *t = retry_target_create(retry_config_target(cfg), 0, NULL, &err);
  assert_non_null(t);
  assert_non_null(retry_target_throttle(t));
  assert_non_null(retry_target_breaker(t));
  retry_target_destroy(t);
  retry_config_destroy(cfg);
}

static void test_config_method_name_beats_service_beats_default(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"methodConfig\":["
      "{\"name\":[{}],\"timeout\":\"1s\"},"
      "{\"name\":[{\"service\":\"a.S\"}],\"timeout\":\"2s\"},"
      "{\"name\":[{\"service\":\"a.S\",\"method\":\"M\"},{\"service\":\"b.T\",\"method\":\"\"}],"
      "\"timeout\":\"3s\"},"
      "{\"name\":[{\"service\":\"a.Sx\",\"method\":null}],\"timeout\":\"4s\"}]}",
      NULL);
  struct {
    const char *method;
    int64_t timeout_s;
  } cases[] = {
      {"/a.S/M", 3},  {"/a.S/N", 2},  {"/a.S/", 2},   {"/b.T/Any", 3}, {"/c.U/M", 1},
      {"/a.Sx/M", 4}, {"/a.S/MM", 2}, {"/a.SM/M", 1}, {"a.S/M", 3},    {"/M", 1},
      {"", 1},        {"/", 1},       {"//M", 1},     {NULL, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const retry_method_config *mc = retry_config_lookup(cfg, cases[i].method);
    assert_true(mc->matched);
    if (mc->timeout_ns != cases[i].timeout_s * RETRY_NS_PER_S)
      fail_msg("%s: timeout %lld, want %lld s", cases[i].method ? cases[i].method : "NULL",
               (long long)mc->timeout_ns, (long long)cases[i].timeout_s);
  }
  retry_config_destroy(cfg);
}

static void test_config_unmatched_method_gets_no_policy_without_default(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"methodConfig\":[{\"name\":[{\"service\":\"a.S\",\"method\":\"M\"}],\"timeout\":\"1s\"},"
      "{\"name\":[],\"timeout\":\"9s\"}],"
      "\"retrysim\":{\"statusSpace\":\"http\",\"idempotentMethods\":[\"/a.S/M\"]}}",
      NULL);
  const retry_method_config *mc = retry_config_lookup(cfg, "/a.S/N");
  assert_false(mc->matched);
  assert_int_equal(mc->policy.kind, RETRY_POLICY_NONE);
  assert_int_equal(mc->policy.space, RETRY_SPACE_HTTP);
  assert_int_equal(mc->policy.local_reject_status, 503);
  assert_true(mc->policy.has_idempotent_allowlist);
  assert_int_equal(mc->timeout_ns, RETRY_NEVER);
  assert_ptr_equal(retry_config_lookup(cfg, NULL), mc);
  assert_ptr_equal(retry_config_lookup(cfg, "garbage"), mc);
  /* The entry with an empty name list was read but matches nothing. */
  assert_int_equal(retry_config_lookup(cfg, "/a.S/M")->timeout_ns, RETRY_NS_PER_S);
  retry_config_destroy(cfg);
}

static const char clamp_json[] =
    "{\"methodConfig\":[{\"name\":[{\"service\":\"s.S\"}],\"retryPolicy\":{\"maxAttempts\":7,"
    "\"initialBackoff\":\"0.1s\",\"maxBackoff\":\"1s\",\"backoffMultiplier\":2,"
    "\"retryableStatusCodes\":[14]}},"
    "{\"name\":[{\"service\":\"h.H\"}],\"hedgingPolicy\":{\"maxAttempts\":64}}]}";

static void test_config_max_attempts_clamped_to_five(void **state) {
  (void)state;
  retry_config *cfg = load_ok(clamp_json, NULL);
  const retry_policy *p = &retry_config_lookup(cfg, "/s.S/M")->policy;
  assert_int_equal(p->max_attempts, 5);
  assert_int_equal(p->max_attempts_configured, 7);
  p = &retry_config_lookup(cfg, "/h.H/M")->policy;
  assert_int_equal(p->kind, RETRY_POLICY_HEDGE);
  assert_int_equal(p->max_attempts, 5);
  assert_int_equal(p->max_attempts_configured, 64);
  retry_config_destroy(cfg);
}

static void test_config_max_attempts_limit_lifts_the_clamp_but_hedging_stops_at_64(void **state) {
  (void)state;
  /* By the caller's option. */
  retry_config_opts opts = {.max_attempts_limit = 100};
  retry_config *cfg = load_ok(clamp_json, &opts);
  assert_int_equal(retry_config_lookup(cfg, "/s.S/M")->policy.max_attempts, 7);
  assert_int_equal(retry_config_lookup(cfg, "/h.H/M")->policy.max_attempts, 64);
  retry_config_destroy(cfg);
  /* A negative limit means no cap at all. */
  opts.max_attempts_limit = -1;
  cfg = load_ok(clamp_json, &opts);
  assert_int_equal(retry_config_lookup(cfg, "/s.S/M")->policy.max_attempts, 7);
  retry_config_destroy(cfg);
  /* By the extension block, which overrides the option. */
  opts.max_attempts_limit = 2;
  cfg = load_ok(
      "{\"retrysim\":{\"maxAttemptsLimit\":1000},\"methodConfig\":[{\"name\":[{}],"
      "\"retryPolicy\":{\"maxAttempts\":7,\"initialBackoff\":\"0.1s\",\"maxBackoff\":\"1s\","
      "\"backoffMultiplier\":2,\"retryableStatusCodes\":[14]}}]}",
      &opts);
  assert_int_equal(retry_config_lookup(cfg, "/x.X/Y")->policy.max_attempts, 7);
  retry_config_destroy(cfg);
  /* With the cap lifted, hedging still stops at 64 attempts. */
  retry_error err;
  opts.max_attempts_limit = 100;
  load_bad("{\"methodConfig\":[{\"name\":[{}],\"hedgingPolicy\":{\"maxAttempts\":65}}]}", &opts,
           &err);
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, "$.methodConfig[0].hedgingPolicy.maxAttempts");
  assert_string_equal(err.message,
                      "hedging \"maxAttempts\" must be at most 64 after the client limit, got 65");
  /* ...but 65 clamped to 5 by default is fine, as gRPC clamps silently. */
  cfg =
      load_ok("{\"methodConfig\":[{\"name\":[{}],\"hedgingPolicy\":{\"maxAttempts\":65}}]}", NULL);
  assert_int_equal(retry_config_lookup(cfg, "/x.X/Y")->policy.max_attempts, 5);
  retry_config_destroy(cfg);
}

/* }================================================================== */

/* {==================================================================
 * Durations and tokenRatio
 * =================================================================== */

static void test_config_durations_parse_only_the_proto3_json_form(void **state) {
  (void)state;
  static const struct {
    const char *s;
    int rc;
    int64_t ns;
  } cases[] = {
      {"0.1s", RETRY_OK, 100000000},
      {"1.000340012s", RETRY_OK, 1000340012},
      {"-1.5s", RETRY_OK, -1500000000},
      {"10s", RETRY_OK, 10 * RETRY_NS_PER_S},
      {"0s", RETRY_OK, 0},
      {"-0s", RETRY_OK, 0},
      {"0.000000001s", RETRY_OK, 1},
      {"0.999999999s", RETRY_OK, 999999999},
      {"1.5s", RETRY_OK, 1500000000},
      {"100.01s", RETRY_OK, 100010000000},
      {"9223372036.854775807s", RETRY_OK, INT64_MAX},
      {"-9223372036.854775808s", RETRY_OK, INT64_MIN},
      {"9223372036.854775808s", RETRY_ERANGE, 0},
      {"9223372037s", RETRY_ERANGE, 0},
      {"315576000000s", RETRY_ERANGE, 0},
      {"315576000001s", RETRY_ERANGE, 0},
      {"99999999999999999999999999s", RETRY_ERANGE, 0},
      {"1", RETRY_EINVAL, 0},
      {"1.s", RETRY_EINVAL, 0},
      {".5s", RETRY_EINVAL, 0},
      {"01s", RETRY_EINVAL, 0},
      {"00s", RETRY_EINVAL, 0},
      {"1.0000000001s", RETRY_EINVAL, 0},
      {"1e3s", RETRY_EINVAL, 0},
      {"s", RETRY_EINVAL, 0},
      {"", RETRY_EINVAL, 0},
      {" 1s", RETRY_EINVAL, 0},
      {"1s ", RETRY_EINVAL, 0},
      {"+1s", RETRY_EINVAL, 0},
      {"--1s", RETRY_EINVAL, 0},
      {"-s", RETRY_EINVAL, 0},
      {"1S", RETRY_EINVAL, 0},
      {"1ms", RETRY_EINVAL, 0},
      {"1ss", RETRY_EINVAL, 0},
      {"0x10s", RETRY_EINVAL, 0},
      {"1,5s", RETRY_EINVAL, 0},
      {"1.5", RETRY_EINVAL, 0},
      {"-.5s", RETRY_EINVAL, 0},
      {"Infinitys", RETRY_EINVAL, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t ns = 42;
    int rc = retry_duration_parse(cases[i].s, &ns);
    if (rc != cases[i].rc)
      fail_msg("\"%s\": rc %s, want %s", cases[i].s, retry_err_name(rc),
               retry_err_name(cases[i].rc));
    if (rc == RETRY_OK && ns != cases[i].ns)
      fail_msg("\"%s\": %lld ns, want %lld", cases[i].s, (long long)ns, (long long)cases[i].ns);
    if (rc != RETRY_OK && ns != 42) fail_msg("\"%s\": output written on error", cases[i].s);
  }
  int64_t ns;
  assert_int_equal(retry_duration_parse(NULL, &ns), RETRY_EINVAL);
}

static void test_config_token_ratio_truncates_to_thousandths(void **state) {
  (void)state;
  static const struct {
    const char *ratio;
    int64_t milli;
  } cases[] = {
      {"0.5466", 546}, {"1.001", 1001}, {"0.1", 100},    {"1", 1000},
      {"0.001", 1},    {"0.0019", 1},   {"2.675", 2675}, {"999.9999", 999999},
      {"4.35", 4350},  {"0.3", 300},    {"1e-3", 1},     {"1000", 1000000},
      {"0.7", 700},    {"8.2", 8200},   {"1.0", 1000},   {"1e20", 1000000000000000},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char json[160];
    snprintf(json, sizeof json, "{\"retryThrottling\":{\"maxTokens\":1000,\"tokenRatio\":%s}}",
             cases[i].ratio);
    retry_config *cfg = load_ok(json, NULL);
    const retry_target_config *t = retry_config_target(cfg);
    assert_true(t->has_throttle);
    assert_int_equal(t->throttle.max_milli_tokens, 1000000);
    if (t->throttle.token_ratio_milli != cases[i].milli)
      fail_msg("tokenRatio %s: %lld milli, want %lld", cases[i].ratio,
               (long long)t->throttle.token_ratio_milli, (long long)cases[i].milli);
    retry_config_destroy(cfg);
  }
}

/* }================================================================== */

/* {==================================================================
 * Hedging, the extension block, HTTP statuses
 * =================================================================== */

static void test_config_hedging_policy_reads_delay_and_non_fatal_codes(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"methodConfig\":["
      "{\"name\":[{\"service\":\"h.A\"}],\"hedgingPolicy\":{\"maxAttempts\":3,"
      "\"hedgingDelay\":\"0.5s\",\"nonFatalStatusCodes\":[\"UNAVAILABLE\",4]}},"
      "{\"name\":[{\"service\":\"h.B\"}],\"hedgingPolicy\":{\"maxAttempts\":4}}]}",
      NULL);
  const retry_policy *p = &retry_config_lookup(cfg, "/h.A/Get")->policy;
  assert_int_equal(p->kind, RETRY_POLICY_HEDGE);
  assert_int_equal(p->max_attempts, 3);
  assert_int_equal(p->hedging_delay_ns, 500 * RETRY_NS_PER_MS);
  assert_true(retry_status_set_has(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE));
  assert_true(retry_status_set_has(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_DEADLINE_EXCEEDED));
  p = &retry_config_lookup(cfg, "/h.B/Get")->policy;
  assert_int_equal(p->kind, RETRY_POLICY_HEDGE);
  assert_int_equal(p->hedging_delay_ns, 0); /* absent: all at once */
  assert_true(retry_status_set_is_empty(&p->retryable, RETRY_SPACE_GRPC));
  retry_config_destroy(cfg);
}

static void test_config_ext_budgets_read_fields_and_defaults(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"retrysim\":{\"budget\":{\"type\":\"aws\",\"capacity\":100,\"retryCost\":3,"
      "\"timeoutCost\":7,\"noRetryIncrement\":0}}}",
      NULL);
  const retry_target_config *t = retry_config_target(cfg);
  assert_int_equal(t->budget, RETRY_BUDGET_AWS);
  assert_int_equal(t->aws.capacity, 100);
  assert_int_equal(t->aws.retry_cost, 3);
  assert_int_equal(t->aws.timeout_cost, 7);
  assert_int_equal(t->aws.no_retry_increment, 0);
  assert_false(t->has_throttle);
  retry_config_destroy(cfg);

  cfg = load_ok("{\"retrysim\":{\"budget\":{\"type\":\"aws\"}}}", NULL);
  retry_aws_quota_config aws;
  retry_aws_quota_config_init(&aws);
  assert_memory_equal(&retry_config_target(cfg)->aws, &aws, sizeof aws);
  retry_config_destroy(cfg);

  cfg = load_ok(
      "{\"retrysim\":{\"budget\":{\"type\":\"finagle\",\"ttl\":\"60s\","
      "\"minRetriesPerSec\":0,\"percentCanRetry\":1000}}}",
      NULL);
  t = retry_config_target(cfg);
  assert_int_equal(t->budget, RETRY_BUDGET_FINAGLE);
  assert_int_equal(t->finagle.ttl_ns, 60 * RETRY_NS_PER_S);
  assert_int_equal(t->finagle.min_retries_per_sec, 0);
  assert_true(t->finagle.percent_can_retry == 1000.0);
  retry_config_destroy(cfg);

  cfg = load_ok("{\"retrysim\":{\"budget\":{\"type\":\"finagle\"}}}", NULL);
  retry_finagle_budget_config fin;
  retry_finagle_budget_config_init(&fin);
  t = retry_config_target(cfg);
  assert_int_equal(t->finagle.ttl_ns, fin.ttl_ns);
  assert_int_equal(t->finagle.min_retries_per_sec, fin.min_retries_per_sec);
  assert_true(t->finagle.percent_can_retry == fin.percent_can_retry);
  retry_config_destroy(cfg);

  cfg = load_ok(
      "{\"retrysim\":{\"budget\":{\"type\":\"envoy\",\"budgetPercent\":12.5,"
      "\"minRetryConcurrency\":0}}}",
      NULL);
  t = retry_config_target(cfg);
  assert_int_equal(t->budget, RETRY_BUDGET_ENVOY);
  assert_true(t->envoy.budget_percent == 12.5);
  assert_int_equal(t->envoy.min_retry_concurrency, 0);
  retry_config_destroy(cfg);
}

static void test_config_ext_adaptive_reads_fields_and_defaults(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"retrysim\":{\"adaptiveThrottling\":{\"k\":1.5,\"window\":\"60s\",\"padding\":8,"
      "\"rejectStatusCodes\":[\"RESOURCE_EXHAUSTED\",429,\"5xx\"]}}}",
      NULL);
  const retry_target_config *t = retry_config_target(cfg);
  assert_true(t->has_adaptive);
  assert_true(t->adaptive.k == 1.5);
  assert_int_equal(t->adaptive.window_ns, 60 * RETRY_NS_PER_S);
  assert_true(t->adaptive.padding == 8.0);
  const retry_status_set *s = &t->adaptive.reject_statuses;
  assert_true(retry_status_set_has(s, RETRY_SPACE_GRPC, RETRY_GRPC_RESOURCE_EXHAUSTED));
  assert_false(retry_status_set_has(s, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE));
  assert_true(retry_status_set_has(s, RETRY_SPACE_HTTP, 429));
  assert_true(retry_status_set_has(s, RETRY_SPACE_HTTP, 500));
  assert_true(retry_status_set_has(s, RETRY_SPACE_HTTP, 599));
  assert_false(retry_status_set_has(s, RETRY_SPACE_HTTP, 404));
  retry_config_destroy(cfg);

  cfg = load_ok("{\"retrysim\":{\"adaptiveThrottling\":{}}}", NULL);
  retry_adaptive_config def;
  retry_adaptive_config_init(&def);
  assert_memory_equal(&retry_config_target(cfg)->adaptive, &def, sizeof def);
  retry_config_destroy(cfg);
}

static void test_config_ext_breakers_read_fields_and_defaults(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"retrysim\":{\"circuitBreaker\":{\"type\":\"consecutive\",\"failureThreshold\":3,"
      "\"waitDurationInOpenState\":\"2.5s\",\"permittedNumberOfCallsInHalfOpenState\":2,"
      "\"failureStatusCodes\":[\"UNAVAILABLE\",503]}}}",
      NULL);
  const retry_breaker_config *b = &retry_config_target(cfg)->breaker;
  assert_true(retry_config_target(cfg)->has_breaker);
  assert_int_equal(b->kind, RETRY_BREAKER_CONSECUTIVE);
  assert_int_equal(b->failure_threshold, 3);
  assert_int_equal(b->open_duration_ns, 2500 * RETRY_NS_PER_MS);
  assert_int_equal(b->half_open_calls, 2);
  assert_true(retry_status_set_has(&b->failure_statuses, RETRY_SPACE_GRPC, 14));
  assert_true(retry_status_set_has(&b->failure_statuses, RETRY_SPACE_HTTP, 503));
  assert_false(retry_status_set_has(&b->failure_statuses, RETRY_SPACE_GRPC, 13));
  retry_config_destroy(cfg);

  static const char *const kinds[] = {"count", "time"};
  for (int k = 0; k < 2; k++) {
    char json[400];
    snprintf(json, sizeof json,
             "{\"retrysim\":{\"circuitBreaker\":{\"type\":\"%s\",\"failureRateThreshold\":25.5,"
             "\"slidingWindowSize\":10,\"minimumNumberOfCalls\":5}}}",
             kinds[k]);
    cfg = load_ok(json, NULL);
    b = &retry_config_target(cfg)->breaker;
    retry_breaker_config def;
    retry_breaker_config_init(&def,
                              k == 0 ? RETRY_BREAKER_COUNT_WINDOW : RETRY_BREAKER_TIME_WINDOW);
    assert_int_equal(b->kind, def.kind);
    assert_true(b->failure_rate_threshold == 25.5);
    assert_int_equal(b->window_size, 10);
    assert_int_equal(b->minimum_calls, 5);
    assert_int_equal(b->open_duration_ns, def.open_duration_ns);
    assert_int_equal(b->half_open_calls, def.half_open_calls);
    assert_memory_equal(&b->failure_statuses, &def.failure_statuses, sizeof def.failure_statuses);
    retry_config_destroy(cfg);
  }
}

static void test_config_ext_method_options_apply_to_all_and_method_blocks_override(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"retrysim\":{\"jitter\":\"full\",\"jitterFraction\":0.5,\"capAfterJitter\":true,"
      "\"perAttemptTimeout\":\"0.25s\",\"retryBufferBytes\":0,\"retryStreaming\":true,"
      "\"honorRetryAfter\":false,\"waitForDeadline\":true},"
      "\"methodConfig\":[{\"name\":[{\"service\":\"a.A\"}]},"
      "{\"name\":[{\"service\":\"b.B\"}],\"retrysim\":{\"jitter\":\"polly-v2\","
      "\"retryBufferBytes\":1024,\"waitForDeadline\":false}}]}",
      NULL);
  const retry_policy *a = &retry_config_lookup(cfg, "/a.A/M")->policy;
  const retry_policy *b = &retry_config_lookup(cfg, "/b.B/M")->policy;
  const retry_policy *u = &retry_config_lookup(cfg, "/c.C/M")->policy;
  const retry_policy *all[] = {a, b, u};
  for (int i = 0; i < 3; i++) {
    assert_true(all[i]->backoff.jitter_fraction == 0.5);
    assert_true(all[i]->backoff.cap_after_jitter);
    assert_int_equal(all[i]->per_attempt_timeout_ns, 250 * RETRY_NS_PER_MS);
    assert_true(all[i]->retry_streaming);
    assert_false(all[i]->honor_retry_after);
  }
  assert_int_equal(a->backoff.jitter, RETRY_JITTER_FULL);
  assert_int_equal(a->retry_buffer_bytes, 0);
  assert_true(a->wait_for_deadline);
  assert_int_equal(b->backoff.jitter, RETRY_JITTER_POLLY_V2);
  assert_int_equal(b->retry_buffer_bytes, 1024);
  assert_false(b->wait_for_deadline);
  assert_int_equal(u->backoff.jitter, RETRY_JITTER_FULL);
  retry_config_destroy(cfg);
}

static void test_config_http_space_reads_http_statuses_and_refuses_grpc_names(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"methodConfig\":[{\"name\":[{\"service\":\"gw.Api\"}],"
      "\"retrysim\":{\"statusSpace\":\"http\"},\"retryPolicy\":{\"maxAttempts\":3,"
      "\"initialBackoff\":\"0.1s\",\"maxBackoff\":\"1s\",\"backoffMultiplier\":2,"
      "\"retryableStatusCodes\":[\"gateway-error\",429,\"retriable-4xx\",\"500\"]}},"
      "{\"name\":[{\"service\":\"rpc.Svc\"}],\"retryPolicy\":{\"maxAttempts\":3,"
      "\"initialBackoff\":\"0.1s\",\"maxBackoff\":\"1s\",\"backoffMultiplier\":2,"
      "\"retryableStatusCodes\":[\"UNAVAILABLE\"]}}]}",
      NULL);
  const retry_policy *p = &retry_config_lookup(cfg, "/gw.Api/Get")->policy;
  assert_int_equal(p->space, RETRY_SPACE_HTTP);
  assert_int_equal(p->local_reject_status, 503);
  static const int yes_codes[] = {500, 502, 503, 504, 429, 409};
  for (size_t i = 0; i < 6; i++)
    assert_true(retry_status_set_has(&p->retryable, RETRY_SPACE_HTTP, yes_codes[i]));
  assert_false(retry_status_set_has(&p->retryable, RETRY_SPACE_HTTP, 501));
  assert_true(retry_status_set_is_empty(&p->retryable, RETRY_SPACE_GRPC));
  p = &retry_config_lookup(cfg, "/rpc.Svc/Get")->policy;
  assert_int_equal(p->space, RETRY_SPACE_GRPC);
  assert_int_equal(p->local_reject_status, RETRY_GRPC_UNAVAILABLE);
  retry_config_destroy(cfg);
  /* In the HTTP space a gRPC name is not a status. */
  retry_error err;
  load_bad(
      "{\"retrysim\":{\"statusSpace\":\"http\"},\"methodConfig\":[{\"name\":[{}],"
      "\"hedgingPolicy\":{\"maxAttempts\":2,\"nonFatalStatusCodes\":[\"UNAVAILABLE\"]}}]}",
      NULL, &err);
  assert_string_equal(err.path, "$.methodConfig[0].hedgingPolicy.nonFatalStatusCodes[0]");
}

/* The config owns its strings: the input may be freed right after loading. */
static void test_config_owns_its_strings_and_shares_the_allowlist(void **state) {
  (void)state;
  const char *json =
      "{\"retrysim\":{\"idempotentMethods\":[\"/a.A/Get\",\"/a.A/List\",\"/a.A/Get\"]},"
      "\"methodConfig\":[{\"name\":[{\"service\":\"a.A\",\"method\":\"Get\"}],"
      "\"hedgingPolicy\":{\"maxAttempts\":2}}]}";
  char *copy = strdup(json);
  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_string(copy, "mine.json", NULL, &err);
  assert_non_null(cfg);
  memset(copy, 'x', strlen(copy));
  free(copy);
  const retry_method_config *mc = retry_config_lookup(cfg, "/a.A/Get");
  assert_true(mc->matched);
  const retry_policy *p = &mc->policy;
  assert_true(p->has_idempotent_allowlist);
  assert_int_equal(p->n_idempotent_methods, 3);
  assert_string_equal(p->idempotent_methods[1], "/a.A/List");
  assert_true(retry_policy_is_idempotent(p, "/a.A/List"));
  assert_false(retry_policy_is_idempotent(p, "/a.A/Delete"));
  /* Every policy of the config shares the allowlist, the unmatched one included. */
  const retry_policy *u = &retry_config_lookup(cfg, "/b.B/X")->policy;
  assert_ptr_equal(u->idempotent_methods, p->idempotent_methods);
  retry_config_destroy(cfg);
  /* An empty allowlist allows nothing. */
  cfg = load_ok("{\"retrysim\":{\"idempotentMethods\":[]}}", NULL);
  u = &retry_config_lookup(cfg, "/b.B/X")->policy;
  assert_true(u->has_idempotent_allowlist);
  assert_int_equal(u->n_idempotent_methods, 0);
  assert_false(retry_policy_is_idempotent(u, "/b.B/X"));
  retry_config_destroy(cfg);
}

/* Unknown standard fields are ignored (A21), null is absent (proto3 JSON). */
static void test_config_ignores_unknown_standard_fields(void **state) {
  (void)state;
  retry_config *cfg = load_ok(
      "{\"loadBalancingConfig\":[{\"round_robin\":{}}],\"loadBalancingPolicy\":\"x\","
      "\"healthCheckConfig\":{\"serviceName\":\"\"},\"futureField\":[1,2],"
      "\"retryThrottling\":null,"
      "\"methodConfig\":[{\"name\":[{\"service\":\"a.A\",\"extra\":1}],\"waitForReady\":true,"
      "\"maxRequestMessageBytes\":0,\"maxResponseMessageBytes\":4194304,\"futureKnob\":\"on\","
      "\"hedgingPolicy\":null,\"retryPolicy\":{\"maxAttempts\":2,\"initialBackoff\":\"1s\","
      "\"maxBackoff\":\"1s\",\"backoffMultiplier\":1,\"retryableStatusCodes\":[1],"
      "\"perAttemptRecvTimeout\":\"1s\"}}]}",
      NULL);
  assert_int_equal(retry_config_lookup(cfg, "/a.A/M")->policy.kind, RETRY_POLICY_RETRY);
  assert_false(retry_config_target(cfg)->has_throttle);
  retry_config_destroy(cfg);
}

/* }================================================================== */

/* {==================================================================
 * Errors
 * =================================================================== */

static void test_config_error_has_source_path_message_and_position(void **state) {
  (void)state;
  retry_error err;
  load_bad("{\"methodConfig\":[{\"name\":[{}],\"retryPolicy\":{\"maxAttempts\":1}}]}", NULL, &err);
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.source, "<string>");
  assert_string_equal(err.path, "$.methodConfig[0].retryPolicy.maxAttempts");
  assert_string_equal(err.message, "\"maxAttempts\" must be an integer > 1, got 1");
  assert_int_equal(err.line, -1);
  assert_int_equal(err.column, -1);
  char buf[600];
  retry_error_format(&err, buf, sizeof buf);
  assert_string_equal(buf,
                      "<string>: $.methodConfig[0].retryPolicy.maxAttempts: "
                      "\"maxAttempts\" must be an integer > 1, got 1");
  /* A syntax error has a position and no path; the source is the name given. */
  retry_error_clear(&err);
  assert_null(retry_config_load_string("{\n  \"a\": [1,\n}", "inline.json", NULL, &err));
  assert_int_equal(err.code, RETRY_ESYNTAX);
  assert_string_equal(err.source, "inline.json");
  assert_string_equal(err.path, "");
  assert_int_equal(err.line, 3);
  assert_int_equal(err.column, 1);
  assert_string_equal(err.message, "invalid JSON: unexpected token near '}'");
}

static void test_config_first_error_wins_and_err_may_be_null(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_config_load_string("[", NULL, NULL, &err));
  retry_error first = err;
  assert_null(retry_config_load_string("{\"methodConfig\":1}", NULL, NULL, &err));
  assert_memory_equal(&err, &first, sizeof err);
  /* err may be NULL. */
  assert_null(retry_config_load_string("{\"methodConfig\":1}", NULL, NULL, NULL));
  assert_null(retry_config_load_string("nope", NULL, NULL, NULL));
  assert_null(retry_config_load_file("/nonexistent/retrysim/x.json", NULL, NULL));
  retry_config_destroy(NULL);
}

static void test_config_file_errors_name_the_file(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_config_load_file("/nonexistent/retrysim/x.json", NULL, &err));
  assert_int_equal(err.code, RETRY_EIO);
  assert_string_equal(err.source, "/nonexistent/retrysim/x.json");
  assert_string_equal(err.path, "");
  assert_int_equal(err.line, -1);
  assert_string_equal(err.message, "cannot open the file: No such file or directory");
  /* A directory opens but cannot be read. */
  retry_error_clear(&err);
  assert_null(retry_config_load_file(data_dir(), NULL, &err));
  assert_int_equal(err.code, RETRY_EIO);
  assert_string_equal(err.source, data_dir());
  /* A file that loads; the source of its errors is its path. */
  char path[512];
  snprintf(path, sizeof path, "%s/valid/seed-go-throttled/input.json", data_dir());
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_file(path, NULL, &err);
  assert_non_null(cfg);
  assert_int_equal(retry_config_target(cfg)->throttle.max_milli_tokens, 4000);
  retry_config_destroy(cfg);
}

/* The first unknown key is reported in document order, and messages always fit. */
static void test_config_unknown_key_reported_first_and_message_fits(void **state) {
  (void)state;
  retry_error err;
  load_bad("{\"retrysim\":{\"jitter\":\"none\",\"zzz\":1,\"aaa\":2}}", NULL, &err);
  assert_string_equal(err.path, "$.retrysim.zzz");
  assert_true(strncmp(err.message, "unknown key \"zzz\"; allowed: maxAttemptsLimit, ", 45) == 0);
  assert_true(strlen(err.message) < sizeof err.message - 1);
  load_bad("{\"retrysim\":{\"a key\\\"with\\\\odd chars\":1}}", NULL, &err);
  assert_string_equal(err.path, "$.retrysim[\"a key\\\"with\\\\odd chars\"]");
  /* A key longer than a message still leaves room for the list. */
  char json[400], key[200];
  memset(key, 'k', sizeof key - 1);
  key[sizeof key - 1] = '\0';
  snprintf(json, sizeof json, "{\"retrysim\":{\"%s\":1}}", key);
  load_bad(json, NULL, &err);
  assert_true(strstr(err.message, "allowed: maxAttemptsLimit") != NULL);
}

/* }================================================================== */

/* {==================================================================
 * Data-driven suites
 * =================================================================== */

/* tests/data/invalid/<case>/{input.json,error}: the error file's format is in
 * tests/support/files.h (test_expected_error). */
static void test_config_refuses_each_invalid_case(void **state) {
  (void)state;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/invalid", data_dir());
  size_t n;
  char **names = test_list_cases(dir, &n);
  assert_true(n >= 30);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char input[1024], errpath[1024];
    snprintf(input, sizeof input, "%s/%s/input.json", dir, names[i]);
    snprintf(errpath, sizeof errpath, "%s/%s/error", dir, names[i]);
    test_expected_error want;
    if (!test_expected_error_read(errpath, &want)) {
      bad++;
      continue;
    }
    retry_error err;
    retry_error_clear(&err);
    retry_config *cfg = retry_config_load_file(input, NULL, &err);
    if (cfg != NULL) {
      print_error("%s: loaded, want an error\n", names[i]);
      retry_config_destroy(cfg);
      bad++;
    } else if (!test_expected_error_matches(names[i], &want, input, &err)) {
      bad++;
    }
  }
  test_free_cases(names, n);
  assert_int_equal(bad, 0);
}

/* tests/data/valid/<case>/{input.json,expected}: expected is dump_config's text; its
 * "lookup <method>" lines choose the methods. TEST_CONFIG_UPDATE=1 rewrites expected. */
static void test_config_loads_each_valid_case(void **state) {
  (void)state;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/valid", data_dir());
  size_t n;
  char **names = test_list_cases(dir, &n);
  assert_true(n >= 10);
  const char *update = getenv("TEST_CONFIG_UPDATE");
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char input[1024], exp_path[1024];
    snprintf(input, sizeof input, "%s/%s/input.json", dir, names[i]);
    snprintf(exp_path, sizeof exp_path, "%s/%s/expected", dir, names[i]);
    char *want = test_slurp(exp_path, NULL);
    retry_error err;
    retry_error_clear(&err);
    retry_config *cfg = retry_config_load_file(input, NULL, &err);
    if (cfg == NULL) {
      char buf[600];
      retry_error_format(&err, buf, sizeof buf);
      print_error("%s: %s\n", names[i], buf);
      bad++;
      free(want);
      continue;
    }
    char *got = dump_config(cfg, want);
    if (update != NULL && strcmp(update, "1") == 0) {
      FILE *f = fopen(exp_path, "w");
      if (f != NULL) {
        fputs(got, f);
        fclose(f);
      }
    } else if (want == NULL || strcmp(got, want) != 0) {
      print_error("%s: dump differs; got:\n%s", names[i], got);
      bad++;
    }
    free(got);
    free(want);
    retry_config_destroy(cfg);
  }
  test_free_cases(names, n);
  assert_int_equal(bad, 0);
}

/* }================================================================== */

/* {==================================================================
 * Warnings: ignored fields, probable unit mistakes, strict
 * =================================================================== */

/* A warning sink that keeps what it gets. */
typedef struct warn_list {
  retry_error w[32];
  size_t n;
} warn_list;

static void collect_warning(void *ctx, const retry_error *w) {
  warn_list *l = ctx;
  if (l->n < sizeof l->w / sizeof l->w[0]) l->w[l->n++] = *w;
}

/* Loads json with warnings collected into *l (emptied first); the config must load. */
static retry_config *load_warn(const char *json, warn_list *l) {
  memset(l, 0, sizeof *l);
  retry_config_opts opts = {.warn = collect_warning, .warn_ctx = l};
  return load_ok(json, &opts);
}

/* Loads json and checks that it gives exactly one warning, at path, whose message contains
 * each of the NULL-terminated fragments; the same json under strict fails with that warning
 * as its error. */
static void expect_one_warning(const char *json, const char *path, ...) {
  warn_list l;
  retry_config_destroy(load_warn(json, &l));
  if (l.n != 1) fail_msg("%zu warnings for %s, want 1", l.n, json);
  assert_string_equal(l.w[0].path, path);
  assert_int_equal(l.w[0].code, RETRY_ECONFIG);
  va_list ap;
  va_start(ap, path);
  for (const char *frag = va_arg(ap, const char *); frag != NULL; frag = va_arg(ap, const char *))
    if (strstr(l.w[0].message, frag) == NULL)
      fail_msg("warning \"%s\" lacks \"%s\"", l.w[0].message, frag);
  va_end(ap);
  retry_config_opts strict = {.strict = true};
  retry_error err;
  load_bad(json, &strict, &err);
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, l.w[0].path);
  assert_string_equal(err.message, l.w[0].message);
}

static const char policy_tail[] =
    "\"initialBackoff\":\"0.1s\",\"maxBackoff\":\"1s\",\"backoffMultiplier\":2,"
    "\"retryableStatusCodes\":[\"UNAVAILABLE\"]}}]";

static void test_percent_can_retry_above_one_warns(void **state) {
  (void)state;
  /* 20 is legal for Finagle (up to 1000) and means 20 retries per request. */
  expect_one_warning("{\"retrysim\":{\"budget\":{\"type\":\"finagle\",\"percentCanRetry\":20}}}",
                     "$.retrysim.budget.percentCanRetry", "\"percentCanRetry\" 20", "0.2 is 20 %",
                     NULL);
  warn_list l;
  retry_config *cfg =
      load_warn("{\"retrysim\":{\"budget\":{\"type\":\"finagle\",\"percentCanRetry\":20}}}", &l);
  assert_float_equal(retry_config_target(cfg)->finagle.percent_can_retry, 20.0, 0);
  retry_config_destroy(cfg);
  /* 1 (one retry per request) and 0.2 are what a fraction looks like: no warning. */
  retry_config_destroy(
      load_warn("{\"retrysim\":{\"budget\":{\"type\":\"finagle\",\"percentCanRetry\":1}}}", &l));
  assert_int_equal(l.n, 0);
  retry_config_destroy(
      load_warn("{\"retrysim\":{\"budget\":{\"type\":\"finagle\",\"percentCanRetry\":0.2}}}", &l));
  assert_int_equal(l.n, 0);
  /* Past Finagle's own limit it is refused, as before. */
  retry_error err;
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"finagle\",\"percentCanRetry\":1001}}}", NULL,
           &err);
  assert_string_equal(err.message, "\"percentCanRetry\" must be a number in [0, 1000], got 1001");
}

/* The other percent and ratio fields: legal values that read like the other unit warn. */
static void test_percent_and_ratio_fields_warn_on_the_other_unit(void **state) {
  (void)state;
  expect_one_warning("{\"retrysim\":{\"budget\":{\"type\":\"envoy\",\"budgetPercent\":0.2}}}",
                     "$.retrysim.budget.budgetPercent", "0.2", "20 is 20 %", NULL);
  expect_one_warning(
      "{\"retrysim\":{\"circuitBreaker\":{\"type\":\"count\","
      "\"failureRateThreshold\":0.5}}}",
      "$.retrysim.circuitBreaker.failureRateThreshold", "0.5", "50 is 50 %", NULL);
  expect_one_warning("{\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":10}}",
                     "$.retryThrottling.tokenRatio", "\"tokenRatio\" 10", "not a percent", NULL);
  warn_list l;
  retry_config_destroy(
      load_warn("{\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":0.1},\"retrysim\":{"
                "\"budget\":{\"type\":\"envoy\",\"budgetPercent\":20},"
                "\"circuitBreaker\":{\"type\":\"time\",\"failureRateThreshold\":50}}}",
                &l));
  assert_int_equal(l.n, 0);
  /* A consecutive breaker has no rate: its zeroed rate is not a value the user wrote. */
  retry_config_destroy(
      load_warn("{\"retrysim\":{\"circuitBreaker\":{\"type\":\"consecutive\"}}}", &l));
  assert_int_equal(l.n, 0);
  /* What the sources refuse stays refused. */
  retry_error err;
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"envoy\",\"budgetPercent\":100.5}}}", NULL, &err);
  load_bad("{\"retrysim\":{\"circuitBreaker\":{\"type\":\"count\",\"failureRateThreshold\":0}}}",
           NULL, &err);
  load_bad("{\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":0}}", NULL, &err);
}

/* Linkerd's names for the Finagle budget, with tower's rounding of the ratio. */
static void test_linkerd_retry_ratio(void **state) {
  (void)state;
  warn_list l;
  /* The defaults are Finagle's (and Linkerd's): 0.2, 10 per second, 10 s. */
  retry_config *cfg = load_warn("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\"}}}", &l);
  const retry_target_config *t = retry_config_target(cfg);
  assert_int_equal(t->budget, RETRY_BUDGET_FINAGLE);
  assert_float_equal(t->finagle.percent_can_retry, 0.2, 1e-12);
  assert_int_equal(t->finagle.min_retries_per_sec, 10);
  assert_int_equal(t->finagle.ttl_ns, 10 * RETRY_NS_PER_S);
  retry_config_destroy(cfg);
  assert_int_equal(l.n, 0);
  /* Every name as Linkerd spells it; ttl as a Go duration. */
  cfg = load_warn(
      "{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"retryRatio\":0.3,"
      "\"minRetriesPerSecond\":2,\"ttl\":\"1m\"}}}",
      &l);
  t = retry_config_target(cfg);
  assert_int_equal(t->finagle.min_retries_per_sec, 2);
  assert_int_equal(t->finagle.ttl_ns, 60 * RETRY_NS_PER_S);
  /* tower's budget costs (int)(1 / 0.3) = 3 deposits per retry: one retry per 3 requests. */
  assert_float_equal(t->finagle.percent_can_retry, 1.0 / 3, 1e-12);
  retry_config_destroy(cfg);
  /* Decided like tower: 30 requests and no reserve allow 10 retries (Finagle's 0.3: 9). */
  static const double ratios[] = {0.3, 0.15, 0.7, 0.1, 0.2, 2.5};
  static const int granted[] = {10, 5, 30, 3, 6, 75};
  for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
    char json[200];
    snprintf(json, sizeof json,
             "{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"retryRatio\":%g,"
             "\"minRetriesPerSecond\":0,\"ttl\":\"10s\"}}}",
             ratios[i]);
    cfg = load_warn(json, &l);
    assert_int_equal(l.n, ratios[i] > 1 ? 1 : 0);
    retry_finagle_budget b;
    retry_finagle_budget_init(&b, &retry_config_target(cfg)->finagle, 0);
    for (int k = 0; k < 30; k++)
      retry_finagle_budget_deposit(&b, 0);
    int n = 0;
    while (n < 1000 && retry_finagle_budget_try_withdraw(&b, 0))
      n++;
    if (n != granted[i]) fail_msg("retryRatio %g: %d retries, want %d", ratios[i], n, granted[i]);
    retry_config_destroy(cfg);
  }
  /* Above 1 it means that many retries per request: legal, with a warning. */
  expect_one_warning("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"retryRatio\":20}}}",
                     "$.retrysim.budget.retryRatio", "\"retryRatio\" 20", "0.2 is 20 %", NULL);
  /* tower's ranges: ttl in [1 s, 60 s], ratio in [0, 1000]; Finagle's names are not Linkerd's. */
  retry_error err;
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"ttl\":\"61s\"}}}", NULL, &err);
  assert_string_equal(err.path, "$.retrysim.budget.ttl");
  assert_string_equal(err.message,
                      "\"ttl\" must be a Go duration in [1s, 60s] such as \"10s\" or \"1m\", "
                      "got \"61s\"");
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"ttl\":\"500ms\"}}}", NULL, &err);
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"ttl\":10}}}", NULL, &err);
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"ttl\":\"10\"}}}", NULL, &err);
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"retryRatio\":-0.1}}}", NULL, &err);
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"retryRatio\":1000.5}}}", NULL, &err);
  load_bad("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"percentCanRetry\":0.2}}}", NULL,
           &err);
  assert_string_equal(err.path, "$.retrysim.budget.percentCanRetry");
  /* Ratios too small for any count to matter load as written (both budgets saturate). */
  cfg = load_warn("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"retryRatio\":1e-40}}}", &l);
  assert_true(retry_config_target(cfg)->finagle.percent_can_retry > 0);
  assert_true(retry_config_target(cfg)->finagle.percent_can_retry < 1e-9);
  retry_config_destroy(cfg);
  cfg = load_warn("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"retryRatio\":0}}}", &l);
  assert_float_equal(retry_config_target(cfg)->finagle.percent_can_retry, 0, 0);
  retry_config_destroy(cfg);
  cfg = load_warn("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"ttl\":\"30s500ms\"}}}", &l);
  assert_int_equal(retry_config_target(cfg)->finagle.ttl_ns, 30500 * RETRY_NS_PER_MS);
  retry_config_destroy(cfg);
  cfg = load_warn("{\"retrysim\":{\"budget\":{\"type\":\"linkerd\",\"ttl\":\"0.5m\"}}}", &l);
  assert_int_equal(retry_config_target(cfg)->finagle.ttl_ns, 30 * RETRY_NS_PER_S);
  retry_config_destroy(cfg);
}

static void test_unknown_field_did_you_mean(void **state) {
  (void)state;
  char json[512];
  /* The misspelling that turns retries off, inside a methodConfig entry. */
  snprintf(json, sizeof json,
           "{\"methodConfig\":[{\"name\":[{}],\"retryPolicies\":{\"maxAttempts\":3,%s}",
           policy_tail);
  expect_one_warning(json, "$.methodConfig[0].retryPolicies",
                     "unknown field \"retryPolicies\" ignored; did you mean \"retryPolicy\"?",
                     NULL);
  warn_list l;
  retry_config *cfg = load_warn(json, &l);
  assert_int_equal(retry_config_lookup(cfg, "/a.A/M")->policy.kind, RETRY_POLICY_NONE);
  retry_config_destroy(cfg);
  expect_one_warning("{\"methodConfigs\":[]}", "$.methodConfigs", "did you mean \"methodConfig\"?",
                     NULL);
  expect_one_warning("{\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":0.1,\"maxToken\":1}}",
                     "$.retryThrottling.maxToken", "did you mean \"maxTokens\"?", NULL);
  expect_one_warning("{\"methodConfig\":[{\"name\":[{\"service\":\"a.A\",\"methd\":\"M\"}]}]}",
                     "$.methodConfig[0].name[0].methd", "did you mean \"method\"?", NULL);
  expect_one_warning(
      "{\"methodConfig\":[{\"name\":[{}],\"hedgingPolicy\":{\"maxAttempts\":2,"
      "\"hedgeDelay\":\"1s\"}}]}",
      "$.methodConfig[0].hedgingPolicy.hedgeDelay", "did you mean \"hedgingDelay\"?", NULL);
  /* A field written at the wrong level says where it belongs. */
  expect_one_warning("{\"retryPolicy\":{\"maxAttempts\":3,\"initialBackoff\":\"0.1s\"}}",
                     "$.retryPolicy",
                     "field \"retryPolicy\" ignored: it belongs in a methodConfig entry", NULL);
  expect_one_warning(
      "{\"methodConfig\":[{\"name\":[{}],\"maxAttempts\":3}]}", "$.methodConfig[0].maxAttempts",
      "field \"maxAttempts\" ignored: it belongs in a retryPolicy or hedgingPolicy", NULL);
  expect_one_warning("{\"budget\":{\"type\":\"aws\"}}", "$.budget",
                     "it belongs in the top-level retrysim block", NULL);
  /* Nothing close: the known fields are listed instead. */
  expect_one_warning("{\"futureField\":1}", "$.futureField",
                     "unknown field \"futureField\" ignored; known here: methodConfig, "
                     "retryThrottling, retrysim",
                     NULL);
  /* gRPC's own fields that bear on no retry decision are ignored without a word. */
  retry_config_destroy(
      load_warn("{\"loadBalancingConfig\":[{\"round_robin\":{}}],\"loadBalancingPolicy\":\"x\","
                "\"healthCheckConfig\":{\"serviceName\":\"\"}}",
                &l));
  assert_int_equal(l.n, 0);
  /* perAttemptRecvTimeout is gRPC's but not modelled: said so. */
  snprintf(json, sizeof json,
           "{\"methodConfig\":[{\"name\":[{}],\"retryPolicy\":{\"maxAttempts\":3,"
           "\"perAttemptRecvTimeout\":\"1s\",%s}",
           policy_tail);
  expect_one_warning(json, "$.methodConfig[0].retryPolicy.perAttemptRecvTimeout", "not modelled",
                     "retrysim.perAttemptTimeout", NULL);
  /* Every ignored field gets its own warning, in document order. */
  cfg = load_warn("{\"a1\":1,\"methodConfig\":[{\"b2\":1,\"name\":[{\"c3\":1}]}]}", &l);
  retry_config_destroy(cfg);
  assert_int_equal(l.n, 3);
  assert_string_equal(l.w[0].path, "$.a1");
  assert_string_equal(l.w[1].path, "$.methodConfig[0].b2");
  assert_string_equal(l.w[2].path, "$.methodConfig[0].name[0].c3");
  assert_string_equal(l.w[0].source, "<string>");
}

static void test_case_only_mismatch_warning_names_grpc_go(void **state) {
  (void)state;
  /* grpc-go's retry example, as it writes its policy. */
  warn_list l;
  memset(&l, 0, sizeof l);
  retry_config_opts opts = {.warn = collect_warning, .warn_ctx = &l};
  retry_error err;
  load_bad(
      "{\"methodConfig\":[{\"name\":[{\"service\":\"grpc.examples.echo.Echo\"}],"
      "\"waitForReady\":true,\"retryPolicy\":{\"MaxAttempts\":4,\"InitialBackoff\":\".01s\","
      "\"MaxBackoff\":\".01s\",\"BackoffMultiplier\":1.0,"
      "\"RetryableStatusCodes\":[\"UNAVAILABLE\"]}}]}",
      &opts, &err);
  /* Five warnings, one per field, then the error that grpc-java and C-core give too. */
  assert_int_equal(l.n, 5);
  assert_string_equal(l.w[0].path, "$.methodConfig[0].retryPolicy.MaxAttempts");
  assert_string_equal(l.w[0].message,
                      "field \"MaxAttempts\" ignored: the field is \"maxAttempts\" (only the case "
                      "differs; grpc-go accepts that, grpc-java and C-core do not)");
  assert_non_null(strstr(l.w[4].message, "\"retryableStatusCodes\""));
  assert_string_equal(err.path, "$.methodConfig[0].retryPolicy.maxAttempts");
  assert_string_equal(err.message, "\"maxAttempts\" is required: an integer > 1");
  /* The case rule wins over a closer spelling and holds at every level. */
  expect_one_warning("{\"MethodConfig\":[]}", "$.MethodConfig", "the field is \"methodConfig\"",
                     "grpc-go accepts that", NULL);
  expect_one_warning("{\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":0.1,\"TOKENRATIO\":1}}",
                     "$.retryThrottling.TOKENRATIO", "the field is \"tokenRatio\"", NULL);
}

/* A scenario handed over as a policy loads as a config with no retries at all: said so. */
static void test_scenario_given_as_policy_warns(void **state) {
  (void)state;
  warn_list l;
  retry_config *cfg = load_warn("{\"duration\":\"10s\",\"services\":{},\"clients\":{}}", &l);
  assert_int_equal(retry_config_lookup(cfg, "/a.A/M")->policy.kind, RETRY_POLICY_NONE);
  retry_config_destroy(cfg);
  assert_int_equal(l.n, 3);
  for (size_t i = 0; i < l.n; i++)
    assert_non_null(strstr(l.w[i].message, "this looks like a retrysim scenario"));
}

static void test_strict_turns_warning_into_error(void **state) {
  (void)state;
  const char *json =
      "{\"retrysim\":{\"budget\":{\"type\":\"finagle\",\"percentCanRetry\":5}},"
      "\"methodConfig\":[{\"name\":[{}],\"retryPolicys\":{}}]}";
  warn_list l;
  retry_config_destroy(load_warn(json, &l));
  assert_int_equal(l.n, 2);
  /* Strict: the first warning is the error, same path and message; no sink is called. */
  warn_list none;
  memset(&none, 0, sizeof none);
  retry_config_opts strict = {.warn = collect_warning, .warn_ctx = &none, .strict = true};
  retry_error err;
  load_bad(json, &strict, &err);
  assert_int_equal(none.n, 0);
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, l.w[0].path);
  assert_string_equal(err.message, l.w[0].message);
  /* From a file the error names it, as the warning did. */
  char path[] = "/tmp/retrysim-strict-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(json, f);
  fclose(f);
  memset(&l, 0, sizeof l);
  retry_config_opts warn = {.warn = collect_warning, .warn_ctx = &l};
  retry_config *cfg = retry_config_load_file(path, &warn, NULL);
  assert_non_null(cfg);
  retry_config_destroy(cfg);
  assert_int_equal(l.n, 2);
  assert_string_equal(l.w[0].source, path);
  retry_error_clear(&err);
  assert_null(retry_config_load_file(path, &strict, &err));
  assert_string_equal(err.source, path);
  assert_string_equal(err.message, l.w[0].message);
  remove(path);
  /* A config without warnings loads under strict too; NULL warn drops warnings. */
  retry_config_destroy(load_ok("{\"methodConfig\":[]}", &strict));
  retry_config_opts quiet = {.warn = NULL};
  retry_config_destroy(load_ok(json, &quiet));
}

/* A long file name keeps its end, the file's own name, in the error's source. */
static void test_long_path_keeps_file_name(void **state) {
  (void)state;
  char dir[400];
  snprintf(dir, sizeof dir, "/tmp/retrysim-long-%ld", (long)getpid());
  mkdir(dir, 0700);
  /* Three 90-byte directories under it: a path of more than 300 characters. */
  char path[1024];
  snprintf(path, sizeof path, "%s", dir);
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(path);
    path[n++] = '/';
    memset(path + n, 'd', 90);
    path[n + 90] = '\0';
    mkdir(path, 0700);
  }
  char file[1100];
  snprintf(file, sizeof file, "%s/the-policy-file.json", path);
  assert_true(strlen(file) > 300);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs("{\"methodConfig\": 1}", f);
  fclose(f);
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_config_load_file(file, NULL, &err));
  size_t n = strlen(err.source);
  assert_true(n < sizeof err.source);
  assert_true(strncmp(err.source, "...", 3) == 0);
  assert_string_equal(err.source + n - strlen("/the-policy-file.json"), "/the-policy-file.json");
  /* The source's end is the path's end, byte for byte. */
  assert_string_equal(err.source + 3, file + strlen(file) - (n - 3));
  assert_string_equal(err.path, "$.methodConfig");
  /* A syntax error and a file that cannot be read keep it too. */
  f = fopen(file, "w");
  fputs("{", f);
  fclose(f);
  retry_error_clear(&err);
  assert_null(retry_config_load_file(file, NULL, &err));
  assert_int_equal(err.code, RETRY_ESYNTAX);
  assert_non_null(strstr(err.source, "/the-policy-file.json"));
  remove(file);
  retry_error_clear(&err);
  assert_null(retry_config_load_file(file, NULL, &err));
  assert_int_equal(err.code, RETRY_EIO);
  assert_non_null(strstr(err.source, "/the-policy-file.json"));
  for (int i = 0; i < 3; i++) {
    rmdir(path);
    *strrchr(path, '/') = '\0';
  }
  rmdir(dir);
}

/* tests/data/warn/<case>/{input.json,warnings}: the case loads, and gives exactly the warnings
 * listed, one "PATH: MESSAGE" line each, in order; under strict it fails with the first.
 * TEST_CONFIG_UPDATE=1 rewrites warnings. */
static void test_config_warns_for_each_warn_case(void **state) {
  (void)state;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/warn", data_dir());
  size_t n;
  char **names = test_list_cases(dir, &n);
  assert_true(n >= 5);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char input[1024], wpath[1024];
    snprintf(input, sizeof input, "%s/%s/input.json", dir, names[i]);
    snprintf(wpath, sizeof wpath, "%s/%s/warnings", dir, names[i]);
    char *want = test_slurp(wpath, NULL);
    warn_list l;
    memset(&l, 0, sizeof l);
    retry_config_opts opts = {.warn = collect_warning, .warn_ctx = &l};
    retry_error err;
    retry_error_clear(&err);
    retry_config *cfg = retry_config_load_file(input, &opts, &err);
    char got[4096] = "";
    size_t len = 0;
    for (size_t k = 0; k < l.n && len < sizeof got; k++)
      len += (size_t)snprintf(got + len, sizeof got - len, "%s: %s\n", l.w[k].path, l.w[k].message);
    const char *update = getenv("TEST_CONFIG_UPDATE");
    if (cfg != NULL && update != NULL && strcmp(update, "1") == 0) {
      FILE *f = fopen(wpath, "w");
      if (f != NULL) {
        fputs(got, f);
        fclose(f);
      }
    } else if (cfg == NULL || want == NULL || strcmp(got, want) != 0 || l.n == 0) {
      print_error("%s: %s; got:\n%s", names[i], cfg == NULL ? "did not load" : "warnings differ",
                  got);
      bad++;
    } else {
      retry_config_opts strict = {.strict = true};
      retry_error serr;
      retry_error_clear(&serr);
      retry_config *scfg = retry_config_load_file(input, &strict, &serr);
      if (scfg != NULL || strcmp(serr.path, l.w[0].path) != 0 ||
          strcmp(serr.message, l.w[0].message) != 0) {
        print_error("%s: strict did not fail with the first warning\n", names[i]);
        bad++;
      }
      retry_config_destroy(scfg);
    }
    retry_config_destroy(cfg);
    free(want);
  }
  test_free_cases(names, n);
  assert_int_equal(bad, 0);
}

/* The valid cases give no warning, or exactly those of their optional "warnings" file (the
 * format of tests/data/warn/): a new warning on a valid config shows up here. */
static void test_config_valid_cases_give_only_their_warnings(void **state) {
  (void)state;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/valid", data_dir());
  size_t n;
  char **names = test_list_cases(dir, &n);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char input[1024], wpath[1024];
    snprintf(input, sizeof input, "%s/%s/input.json", dir, names[i]);
    snprintf(wpath, sizeof wpath, "%s/%s/warnings", dir, names[i]);
    char *want = test_slurp(wpath, NULL);
    warn_list l;
    memset(&l, 0, sizeof l);
    retry_config_opts opts = {.warn = collect_warning, .warn_ctx = &l};
    retry_config *cfg = retry_config_load_file(input, &opts, NULL);
    char got[4096] = "";
    size_t len = 0;
    for (size_t k = 0; k < l.n && len < sizeof got; k++)
      len += (size_t)snprintf(got + len, sizeof got - len, "%s: %s\n", l.w[k].path, l.w[k].message);
    if (strcmp(got, want != NULL ? want : "") != 0) {
      print_error("%s: warnings differ; got:\n%s", names[i], got);
      bad++;
    }
    free(want);
    retry_config_destroy(cfg);
  }
  test_free_cases(names, n);
  assert_int_equal(bad, 0);
}

/* }================================================================== */

/* {==================================================================
 * Chaos allocator and robustness
 * =================================================================== */

/* One count (tests/support/oom.h) for our retry_allocator and jansson's allocator. */
static test_oom chaos;

/* A config that touches every allocation: names, strings, the allowlist, every block. */
static const char chaos_json[] =
    "{\"retrysim\":{\"idempotentMethods\":[\"/a.A/Get\",\"/a.A/List\"],\"maxAttemptsLimit\":6,"
    "\"budget\":{\"type\":\"finagle\"},\"adaptiveThrottling\":{\"rejectStatusCodes\":[14,503]},"
    "\"circuitBreaker\":{\"type\":\"time\"}},"
    "\"methodConfig\":[{\"name\":[{\"service\":\"a.A\",\"method\":\"Get\"},{\"service\":\"b.B\"}],"
    "\"timeout\":\"2s\",\"retryPolicy\":{\"maxAttempts\":4,\"initialBackoff\":\"0.1s\","
    "\"maxBackoff\":\"1s\",\"backoffMultiplier\":2,\"retryableStatusCodes\":[\"UNAVAILABLE\"]}},"
    "{\"name\":[{}],\"retrysim\":{\"statusSpace\":\"http\"},"
    "\"hedgingPolicy\":{\"maxAttempts\":3,\"nonFatalStatusCodes\":[\"5xx\"]}}],"
    "\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":0.1}}";

/* Fails allocation n = 0, 1, 2, ... until the load succeeds. Jansson's allocators are
 * restored before any assertion can end the test. */
static void run_chaos(bool from_file, const char *path, const char *method) {
  test_oom_json_begin(&chaos);
  retry_allocator alloc = test_oom_allocator(&chaos, -1);
  retry_config_opts opts = {.max_attempts_limit = 0, .alloc = &alloc};
  char problem[800] = "";
  long n, n_enomem = 0;
  bool loaded = false;
  for (n = 0; n < 100000 && !loaded && problem[0] == '\0'; n++) {
    alloc = test_oom_allocator(&chaos, n);
    retry_error err;
    retry_error_clear(&err);
    retry_config *cfg = from_file ? retry_config_load_file(path, &opts, &err)
                                  : retry_config_load_string(chaos_json, NULL, &opts, &err);
    if (cfg != NULL) {
      /* Success must mean that no allocation failed. */
      if (test_oom_failed(&chaos))
        snprintf(problem, sizeof problem, "allocation %ld failed, load passed", n);
      else if (!retry_config_lookup(cfg, method)->matched)
        snprintf(problem, sizeof problem, "lookup failed after the load");
      retry_config_destroy(cfg);
      loaded = true;
    } else {
      /* Our own allocations must fail with RETRY_ENOMEM. Jansson reports some failures of
       * its lexer as syntax errors, and a failed growth of its token buffer drops one byte
       * of the token (akheron/jansson#362): here that byte is in a key of the strict
       * "retrysim" block, which then fails validation. Clean errors all the same. */
      bool clean = err.code == RETRY_ENOMEM ||
                   (chaos.json_failed && (err.code == RETRY_ESYNTAX || err.code == RETRY_ECONFIG));
      char buf[600];
      retry_error_format(&err, buf, sizeof buf);
      if (!test_oom_failed(&chaos))
        snprintf(problem, sizeof problem, "allocation %ld: failed without a failure: %s", n, buf);
      else if (!clean || err.message[0] == '\0')
        snprintf(problem, sizeof problem, "allocation %ld: want RETRY_ENOMEM, got %s (%s)", n,
                 retry_err_name(err.code), buf);
      n_enomem += err.code == RETRY_ENOMEM;
    }
    if (chaos.live != 0 && problem[0] == '\0')
      snprintf(problem, sizeof problem, "allocation %ld: %ld blocks leaked", n, chaos.live);
  }
  test_oom_json_end();
  if (problem[0] != '\0') fail_msg("%s", problem);
  assert_true(loaded);
  assert_true(n > 10); /* it did exercise failures */
  assert_true(n_enomem > 0);
}

static void test_config_allocation_failures_fail_cleanly_without_leaks(void **state) {
  (void)state;
  run_chaos(false, NULL, "/a.A/Get");
  char path[512];
  snprintf(path, sizeof path, "%s/valid/ext-everything/input.json", data_dir());
  run_chaos(true, path, "/bank.v1.Payments/Charge");
}

/* Lookups never allocate. */
static void test_config_lookup_does_not_allocate(void **state) {
  (void)state;
  retry_allocator alloc = test_oom_allocator(&chaos, -1);
  retry_config_opts opts = {.alloc = &alloc};
  retry_config *cfg = load_ok(chaos_json, &opts);
  long calls = chaos.n_calls;
  assert_true(calls > 0);
  static const char *const methods[] = {"/a.A/Get", "/a.A/Put", "/b.B/X", "/c.C/Y", NULL, ""};
  for (int k = 0; k < 1000; k++)
    retry_config_lookup(cfg, methods[k % 6]);
  assert_int_equal(chaos.n_calls, calls);
  retry_config_destroy(cfg);
  assert_int_equal(chaos.live, 0);
}

/* Every prefix of a rich config, and random byte edits of it, load or fail cleanly. */
static void test_config_mutations_never_crash(void **state) {
  (void)state;
  size_t len = strlen(chaos_json);
  char *buf = test_xrealloc(NULL, len + 1);
  for (size_t cut = 0; cut < len; cut++) {
    memcpy(buf, chaos_json, cut);
    buf[cut] = '\0';
    retry_error err;
    retry_error_clear(&err);
    retry_config *cfg = retry_config_load_string(buf, NULL, NULL, &err);
    assert_null(cfg);
    assert_int_equal(err.code, RETRY_ESYNTAX);
  }
  static const char alphabet[] = "{}[]\":,0123456789-.esx \\tfnul/AZ";
  uint64_t x = 0x9E3779B97F4A7C15u;
  int loaded = 0;
  for (int round = 0; round < 20000; round++) {
    memcpy(buf, chaos_json, len + 1);
    for (int edits = 0; edits < 1 + round % 3; edits++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      size_t at = (size_t)(x % len);
      buf[at] = alphabet[(x >> 32) % (sizeof alphabet - 1)];
    }
    retry_error err;
    retry_error_clear(&err);
    retry_config *cfg = retry_config_load_string(buf, NULL, NULL, &err);
    if (cfg != NULL) {
      loaded++;
      assert_int_equal(err.code, RETRY_OK);
      retry_config_lookup(cfg, "/a.A/Get");
      retry_config_destroy(cfg);
    } else {
      assert_true(err.code == RETRY_ESYNTAX || err.code == RETRY_ECONFIG);
      assert_true(strlen(err.message) > 0);
    }
  }
  assert_true(loaded > 0);
  free(buf);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_config_seed_throttled_policy_loads_and_other_services_get_none),
      cmocka_unit_test(test_config_loaded_target_config_creates_a_target),
      cmocka_unit_test(test_config_method_name_beats_service_beats_default),
      cmocka_unit_test(test_config_unmatched_method_gets_no_policy_without_default),
      cmocka_unit_test(test_config_max_attempts_clamped_to_five),
      cmocka_unit_test(test_config_max_attempts_limit_lifts_the_clamp_but_hedging_stops_at_64),
      cmocka_unit_test(test_config_durations_parse_only_the_proto3_json_form),
      cmocka_unit_test(test_config_token_ratio_truncates_to_thousandths),
      cmocka_unit_test(test_config_hedging_policy_reads_delay_and_non_fatal_codes),
      cmocka_unit_test(test_config_ext_budgets_read_fields_and_defaults),
      cmocka_unit_test(test_config_ext_adaptive_reads_fields_and_defaults),
      cmocka_unit_test(test_config_ext_breakers_read_fields_and_defaults),
      cmocka_unit_test(test_config_ext_method_options_apply_to_all_and_method_blocks_override),
      cmocka_unit_test(test_config_http_space_reads_http_statuses_and_refuses_grpc_names),
      cmocka_unit_test(test_config_owns_its_strings_and_shares_the_allowlist),
      cmocka_unit_test(test_config_ignores_unknown_standard_fields),
      cmocka_unit_test(test_config_error_has_source_path_message_and_position),
      cmocka_unit_test(test_config_first_error_wins_and_err_may_be_null),
      cmocka_unit_test(test_config_file_errors_name_the_file),
      cmocka_unit_test(test_config_unknown_key_reported_first_and_message_fits),
      cmocka_unit_test(test_config_refuses_each_invalid_case),
      cmocka_unit_test(test_config_loads_each_valid_case),
      cmocka_unit_test(test_percent_can_retry_above_one_warns),
      cmocka_unit_test(test_percent_and_ratio_fields_warn_on_the_other_unit),
      cmocka_unit_test(test_linkerd_retry_ratio),
      cmocka_unit_test(test_unknown_field_did_you_mean),
      cmocka_unit_test(test_case_only_mismatch_warning_names_grpc_go),
      cmocka_unit_test(test_scenario_given_as_policy_warns),
      cmocka_unit_test(test_strict_turns_warning_into_error),
      cmocka_unit_test(test_long_path_keeps_file_name),
      cmocka_unit_test(test_config_warns_for_each_warn_case),
      cmocka_unit_test(test_config_valid_cases_give_only_their_warnings),
      cmocka_unit_test(test_config_allocation_failures_fail_cleanly_without_leaks),
      cmocka_unit_test(test_config_lookup_does_not_allocate),
      cmocka_unit_test(test_config_mutations_never_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
