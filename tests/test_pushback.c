/*
 * test_pushback.c: the strict grpc-retry-pushback-ms parser, HTTP Retry-After, HTTP-dates,
 * status sets and the trace formatter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tests/support/script.h"

static retry_pushback_kind parse1(const char *v, int64_t *ns) {
  const char *vals[1] = {v};
  return retry_pushback_parse(vals, 1, ns);
}

static void test_pushback_valid_values_delay_exactly(void **state) {
  (void)state;
  int64_t ns;
  assert_int_equal(parse1("0", &ns), RETRY_PUSHBACK_DELAY);
  assert_int_equal(ns, 0);
  assert_int_equal(parse1("450", &ns), RETRY_PUSHBACK_DELAY);
  assert_int_equal(ns, 450 * RETRY_NS_PER_MS);
  assert_int_equal(parse1("2147483647", &ns), RETRY_PUSHBACK_DELAY);
  assert_int_equal(ns, INT64_C(2147483647) * RETRY_NS_PER_MS);
}

static void test_pushback_negative_means_stop(void **state) {
  (void)state;
  int64_t ns;
  assert_int_equal(parse1("-1", &ns), RETRY_PUSHBACK_STOP);
  assert_int_equal(parse1("-2147483648", &ns), RETRY_PUSHBACK_STOP);
}

static void test_pushback_non_canonical_is_invalid(void **state) {
  (void)state;
  const char *bad[] = {
      "",    "007",  "-0",  "+5", " 5",         "5 ",          "5ms",
      "1e3", "0x10", "--1", "-",  "2147483648", "-2147483649", "99999999999999999999",
      "1.5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t ns = 123;
    assert_int_equal(parse1(bad[i], &ns), RETRY_PUSHBACK_INVALID);
    assert_int_equal(ns, 0);
  }
  int64_t ns;
  assert_int_equal(parse1(NULL, &ns), RETRY_PUSHBACK_INVALID);
}

static void test_pushback_repeated_values_stop_and_absent_is_none(void **state) {
  (void)state;
  int64_t ns;
  const char *two[2] = {"100", "100"};
  assert_int_equal(retry_pushback_parse(two, 2, &ns), RETRY_PUSHBACK_REPEATED);
  assert_int_equal(retry_pushback_parse(NULL, 0, &ns), RETRY_PUSHBACK_NONE);
  assert_int_equal(retry_pushback_parse(two, 0, &ns), RETRY_PUSHBACK_NONE);
}

static void test_pushback_retry_after_takes_delta_seconds_only(void **state) {
  (void)state;
  int64_t ns;
  assert_int_equal(retry_pushback_parse_retry_after("120", &ns), 0);
  assert_int_equal(ns, 120 * RETRY_NS_PER_S);
  assert_int_equal(retry_pushback_parse_retry_after("0", &ns), 0);
  assert_int_equal(retry_pushback_parse_retry_after("", &ns), RETRY_EINVAL);
  assert_int_equal(retry_pushback_parse_retry_after("-1", &ns), RETRY_EINVAL);
  assert_int_equal(retry_pushback_parse_retry_after("1.5", &ns), RETRY_EINVAL);
  assert_int_equal(retry_pushback_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", &ns),
                   RETRY_EINVAL);
  assert_int_equal(retry_pushback_parse_retry_after("99999999999999999999", &ns), RETRY_ERANGE);
}

static void test_pushback_http_date_accepts_the_three_rfc9110_forms(void **state) {
  (void)state;
  int64_t ns;
  /* RFC 9110's example instant: 784111777 s after the epoch, in all three forms. */
  assert_int_equal(retry_pushback_parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", &ns), 0);
  assert_int_equal(ns, INT64_C(784111777) * RETRY_NS_PER_S);
  assert_int_equal(retry_pushback_parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", &ns), 0);
  assert_int_equal(ns, INT64_C(784111777) * RETRY_NS_PER_S);
  assert_int_equal(retry_pushback_parse_http_date("Sun Nov  6 08:49:37 1994", &ns), 0);
  assert_int_equal(ns, INT64_C(784111777) * RETRY_NS_PER_S);
  assert_int_equal(retry_pushback_parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT", &ns), 0);
  assert_int_equal(ns, 0);
  assert_int_equal(retry_pushback_parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT", &ns), 0);
  assert_int_equal(ns, INT64_C(951825600) * RETRY_NS_PER_S);
  const char *bad[] = {"Sun, 06 Nov 1994 08:49:37 UTC",
                       "Mon, 29 Feb 2100 00:00:00 GMT",
                       "Sun, 06 Foo 1994 08:49:37 GMT",
                       "Sun, 06 Nov 1994 24:00:00 GMT",
                       "120",
                       "",
                       "Sun, 6 Nov 1994 08:49:37 GMT"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(retry_pushback_parse_http_date(bad[i], &ns), RETRY_EINVAL);
}

static void test_pushback_status_sets_hold_both_spaces(void **state) {
  (void)state;
  retry_status_set s;
  retry_status_set_clear(&s);
  assert_true(retry_status_set_is_empty(&s, RETRY_SPACE_GRPC));
  assert_int_equal(retry_status_set_add_token(&s, RETRY_SPACE_HTTP, "5xx"), 0);
  assert_true(retry_status_set_has(&s, RETRY_SPACE_HTTP, 500));
  assert_true(retry_status_set_has(&s, RETRY_SPACE_HTTP, 599));
  assert_false(retry_status_set_has(&s, RETRY_SPACE_HTTP, 499));
  assert_false(retry_status_set_has(&s, RETRY_SPACE_GRPC, 14));
  assert_int_equal(retry_status_set_add_token(&s, RETRY_SPACE_GRPC, "UNAVAILABLE"), 0);
  assert_true(retry_status_set_has(&s, RETRY_SPACE_GRPC, 14));
  assert_int_equal(retry_status_set_add_token(&s, RETRY_SPACE_GRPC, "unavailable"), RETRY_EINVAL);
  assert_int_equal(retry_status_set_add_token(&s, RETRY_SPACE_HTTP, "gateway-error"), 0);
  assert_int_equal(retry_status_set_add_token(&s, RETRY_SPACE_HTTP, "retriable-4xx"), 0);
  assert_true(retry_status_set_has(&s, RETRY_SPACE_HTTP, 409));
  assert_int_equal(retry_status_set_add_token(&s, RETRY_SPACE_HTTP, "600"), RETRY_EINVAL);
  assert_int_equal(retry_status_set_add_token(&s, RETRY_SPACE_HTTP, "6xx"), RETRY_EINVAL);
  assert_int_equal(retry_status_set_add(&s, RETRY_SPACE_GRPC, 17), RETRY_ERANGE);
  assert_false(retry_status_set_has(&s, RETRY_SPACE_HTTP, 99));
  assert_true(retry_status_is_ok(RETRY_SPACE_HTTP, 204));
  assert_false(retry_status_is_ok(RETRY_SPACE_GRPC, 14));
  int code;
  assert_int_equal(retry_grpc_code_parse("FAILED_PRECONDITION", &code), 0);
  assert_int_equal(code, 9);
  assert_string_equal(retry_grpc_code_name(16), "UNAUTHENTICATED");
  assert_null(retry_grpc_code_name(17));
}

/* The trace records of a call, kept as text. */
typedef struct trace_log {
  char lines[16][512];
  int n;
} trace_log;

static void keep_trace(void *ctx, const retry_trace_rec *rec) {
  trace_log *log = ctx;
  if (log->n < 16) retry_trace_format(rec, log->lines[log->n++], sizeof log->lines[0]);
}

static void test_pushback_trace_records_every_decision(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_init(&p, RETRY_SPACE_GRPC);
  p.kind = RETRY_POLICY_RETRY;
  retry_policy_set_max_attempts(&p, 3, 5);
  retry_status_set_add(&p.retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);
  trace_log log;
  memset(&log, 0, sizeof log);
  test_rng r;
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.call_id = 7;
  o.deadline_ns = RETRY_NEVER;
  o.rng = test_rng_make(&r, 3);
  o.trace = keep_trace;
  o.trace_ctx = &log;
  script_attempt steps[2] = {script_step(80, RETRY_GRPC_UNAVAILABLE), script_step(5, 0)};
  steps[0].pushback = "250";
  script_result res;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &res), 0);
  assert_int_equal(log.n, 4); /* start, outcome, wake, outcome */
  assert_string_equal(log.lines[0],
                      "{\"call\":7,\"event\":\"start\",\"t_ns\":0,\"decision\":\"send\","
                      "\"send_attempt\":1}");
  assert_string_equal(log.lines[1],
                      "{\"call\":7,\"event\":\"outcome\",\"t_ns\":80000000,\"attempt\":1,"
                      "\"status\":14,\"pushback\":\"delay\",\"pushback_ns\":250000000,"
                      "\"backoff_ns\":250000000,\"delay_source\":\"pushback\","
                      "\"pushback_raw\":[\"250\"],\"decision\":\"wait\","
                      "\"wake_ns\":330000000}");
  assert_string_equal(log.lines[2],
                      "{\"call\":7,\"event\":\"wake\",\"t_ns\":330000000,\"decision\":\"send\","
                      "\"send_attempt\":2}");
  assert_string_equal(log.lines[3],
                      "{\"call\":7,\"event\":\"outcome\",\"t_ns\":335000000,\"attempt\":2,"
                      "\"status\":0,\"decision\":\"done\",\"final_status\":0,\"reason\":\"ok\","
                      "\"done_ns\":335000000}");
  /* A short buffer is truncated but the full length is reported. */
  char small[8];
  retry_trace_rec rec;
  memset(&rec, 0, sizeof rec);
  rec.status = -1;
  rec.backoff_ns = -1;
  rec.throttle_milli_tokens = -1;
  int n = retry_trace_format(&rec, small, sizeof small);
  assert_true(n > 8);
  assert_int_equal(strlen(small), 7);
}

static void test_pushback_error_codes_have_names_and_a_format(void **state) {
  (void)state;
  assert_string_equal(retry_err_name(RETRY_ECONFIG), "RETRY_ECONFIG");
  assert_string_equal(retry_strerror(RETRY_ENOMEM), "out of memory");
  assert_string_equal(retry_stop_name(RETRY_STOP_BUDGET_EXHAUSTED), "budget_exhausted");
  retry_error e;
  retry_error_clear(&e);
  assert_int_equal(e.line, -1);
  char buf[256];
  retry_error_clear(&e);
  e.code = RETRY_ECONFIG;
  strcpy(e.source, "sc.json");
  strcpy(e.path, "$.methodConfig[0].timeout");
  strcpy(e.message, "timeout must be a duration");
  retry_error_format(&e, buf, sizeof buf);
  assert_string_equal(buf, "sc.json: $.methodConfig[0].timeout: timeout must be a duration");
  e.line = 3;
  e.column = 14;
  e.path[0] = '\0';
  retry_error_format(&e, buf, sizeof buf);
  assert_string_equal(buf, "sc.json:3:14: timeout must be a duration");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pushback_valid_values_delay_exactly),
      cmocka_unit_test(test_pushback_negative_means_stop),
      cmocka_unit_test(test_pushback_non_canonical_is_invalid),
      cmocka_unit_test(test_pushback_repeated_values_stop_and_absent_is_none),
      cmocka_unit_test(test_pushback_retry_after_takes_delta_seconds_only),
      cmocka_unit_test(test_pushback_http_date_accepts_the_three_rfc9110_forms),
      cmocka_unit_test(test_pushback_status_sets_hold_both_spaces),
      cmocka_unit_test(test_pushback_trace_records_every_decision),
      cmocka_unit_test(test_pushback_error_codes_have_names_and_a_format),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
