/*
 * test_trace.c: what the engine's trace record tells about one decision: the pushback and
 * Retry-After as received beside what they parsed to, the backoff drawn and its nominal
 * value, where the delay came from, the shared state before and after the event, and that a
 * call traced decides exactly as a call not traced.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "retry/retry.h"
#include "tests/support/script.h"

#define MAX_RECS 16

/* Copies of the records of one call (their borrowed parts are checked in the callback). */
typedef struct rec_log {
  retry_trace_rec recs[MAX_RECS];
  retry_decision decisions[MAX_RECS];
  char raw[MAX_RECS][32]; /* the first pushback value or the Retry-After, as received */
  char line[MAX_RECS][1024];
  int n;
} rec_log;

static void keep(void *ctx, const retry_trace_rec *rec) {
  rec_log *log = ctx;
  if (log->n >= MAX_RECS) return;
  int i = log->n++;
  log->recs[i] = *rec;
  log->decisions[i] = *rec->decision;
  log->recs[i].decision = &log->decisions[i];
  log->raw[i][0] = '\0';
  if (rec->n_pushback_values > 0)
    snprintf(log->raw[i], sizeof log->raw[i], "%s", rec->pushback_values[0]);
  if (rec->retry_after != NULL) snprintf(log->raw[i], sizeof log->raw[i], "%s", rec->retry_after);
  retry_trace_format(rec, log->line[i], sizeof log->line[i]);
  log->recs[i].pushback_values = NULL;
  log->recs[i].retry_after = NULL;
}

static void retry_policy_3(retry_policy *p, retry_space space) {
  retry_policy_init(p, space);
  p->kind = RETRY_POLICY_RETRY;
  retry_policy_set_max_attempts(p, 3, 5);
  if (space == RETRY_SPACE_GRPC)
    retry_status_set_add(&p->retryable, space, RETRY_GRPC_UNAVAILABLE);
  else
    retry_status_set_add(&p->retryable, space, 503);
}

static retry_call_opts traced_opts(rec_log *log, test_rng *r) {
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.call_id = 1;
  o.deadline_ns = RETRY_NEVER;
  o.rng = test_rng_make(r, 5);
  o.trace = keep;
  o.trace_ctx = log;
  o.ext = script_ext();
  return o;
}

static void test_trace_keeps_pushback_as_received_and_as_parsed(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_3(&p, RETRY_SPACE_GRPC);
  rec_log log;
  memset(&log, 0, sizeof log);
  test_rng r;
  retry_call_opts o = traced_opts(&log, &r);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  const char *v[1] = {"900"};
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  out.pushback = v;
  out.n_pushback = 1;
  retry_call_on_outcome(&c, 1, &out, 100, &d);
  assert_int_equal(log.n, 2);
  const retry_trace_rec *rec = &log.recs[1];
  assert_int_equal(rec->n_pushback_values, 1);
  assert_string_equal(log.raw[1], "900");
  assert_int_equal(rec->pushback, RETRY_PUSHBACK_DELAY);
  assert_int_equal(rec->pushback_ns, 900000000);
  assert_int_equal(rec->backoff_ns, 900000000);
  assert_int_equal(rec->delay_source, RETRY_DELAY_PUSHBACK);
  assert_int_equal(rec->backoff_nominal_ns, -1);
  assert_non_null(strstr(log.line[1], "\"pushback_raw\":[\"900\"]"));
  assert_non_null(strstr(log.line[1], "\"delay_source\":\"pushback\""));
  /* An unparseable value is kept as it came, and escaped in the JSON line. */
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  const char *bad[1] = {"9\"0"};
  out.pushback = bad;
  retry_call_on_outcome(&c, 1, &out, 100, &d);
  rec = &log.recs[3];
  assert_int_equal(rec->pushback, RETRY_PUSHBACK_INVALID);
  assert_string_equal(log.raw[3], "9\"0");
  assert_int_equal(rec->backoff_ns, -1);
  assert_int_equal(log.decisions[3].reason, RETRY_STOP_PUSHBACK_STOP);
  assert_non_null(strstr(log.line[3], "\"pushback_raw\":[\"9\\\"0\"]"));
}

static void test_trace_keeps_retry_after_as_received(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_3(&p, RETRY_SPACE_HTTP);
  rec_log log;
  memset(&log, 0, sizeof log);
  test_rng r;
  retry_call_opts o = traced_opts(&log, &r);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  retry_outcome out;
  retry_outcome_init(&out, 503);
  out.retry_after = "2";
  retry_call_on_outcome(&c, 1, &out, 100, &d);
  assert_string_equal(log.raw[1], "2");
  assert_int_equal(log.recs[1].delay_source, RETRY_DELAY_RETRY_AFTER);
  assert_int_equal(log.recs[1].backoff_ns, 2000000000);
  assert_non_null(strstr(log.line[1], "\"retry_after_raw\":\"2\""));
}

static void test_trace_records_the_backoff_drawn_and_its_nominal_value(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_3(&p, RETRY_SPACE_GRPC);
  rec_log log;
  memset(&log, 0, sizeof log);
  test_rng r;
  retry_call_opts o = traced_opts(&log, &r);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 100, &d);
  const retry_trace_rec *rec = &log.recs[1];
  assert_int_equal(rec->delay_source, RETRY_DELAY_BACKOFF);
  /* gRPC's example backoff: nominal 100 ms, drawn within +-20 %. */
  assert_int_equal(rec->backoff_nominal_ns, 100000000);
  assert_true(rec->backoff_ns >= 80000000 && rec->backoff_ns <= 120000000);
  assert_int_equal(d.wake_ns, 100 + rec->backoff_ns);
  assert_int_equal(log.recs[0].delay_source, RETRY_DELAY_NONE);
}

static void test_trace_records_the_shared_state_before_and_after(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_3(&p, RETRY_SPACE_GRPC);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 10000;
  tc.throttle.token_ratio_milli = 100;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  rec_log log;
  memset(&log, 0, sizeof log);
  test_rng r;
  retry_call_opts o = traced_opts(&log, &r);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, t, &o, 0, &d);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 100, &d);
  assert_true(log.recs[0].has_target);
  assert_int_equal(log.recs[0].before.in_flight, 0);
  assert_int_equal(log.recs[0].after.in_flight, 1);
  assert_int_equal(log.recs[1].before.throttle_milli_tokens, 10000);
  assert_int_equal(log.recs[1].after.throttle_milli_tokens, 9000);
  assert_int_equal(log.recs[1].throttle_milli_tokens, 9000);
  assert_int_equal(log.recs[1].after.in_flight, 0);
  assert_non_null(strstr(log.line[1],
                         "\"before\":{\"breaker\":\"closed\","
                         "\"throttle_milli_tokens\":10000,\"in_flight\":1}"));
  retry_target_destroy(t);
}

/* Runs one failing-then-ok call and returns its decisions, traced or not. */
static int decisions_of(bool traced, retry_decision *ds) {
  retry_policy p;
  retry_policy_3(&p, RETRY_SPACE_GRPC);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 4000;
  tc.throttle.token_ratio_milli = 100;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  rec_log log;
  memset(&log, 0, sizeof log);
  test_rng r;
  retry_call_opts o = traced_opts(&log, &r);
  if (!traced) o.trace = NULL;
  retry_call c;
  int n = 0;
  retry_call_start(&c, &p, t, &o, 0, &ds[n++]);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 100, &ds[n++]);
  int64_t woke_ns = ds[n - 1].wake_ns; /* the backoff's end */
  retry_call_wake(&c, woke_ns, &ds[n]);
  n++;
  assert_int_equal(ds[n - 1].action, RETRY_ACTION_SEND);
  retry_outcome_init(&out, RETRY_GRPC_OK);
  retry_call_on_outcome(&c, 2, &out, woke_ns + 50, &ds[n]);
  n++;
  assert_int_equal(ds[n - 1].reason, RETRY_STOP_OK);
  retry_target_destroy(t);
  if (traced) assert_int_equal(log.n, n);
  if (!traced) assert_int_equal(log.n, 0);
  return n;
}

static void test_trace_changes_no_decision(void **state) {
  (void)state;
  retry_decision a[8], b[8];
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  int na = decisions_of(true, a);
  int nb = decisions_of(false, b);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, sizeof a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trace_keeps_pushback_as_received_and_as_parsed),
      cmocka_unit_test(test_trace_keeps_retry_after_as_received),
      cmocka_unit_test(test_trace_records_the_backoff_drawn_and_its_nominal_value),
      cmocka_unit_test(test_trace_records_the_shared_state_before_and_after),
      cmocka_unit_test(test_trace_changes_no_decision),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
