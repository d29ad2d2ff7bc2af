/*
 * test_call.c: the logical-call state machine, rule by rule, and every row of the seeds'
 * tables reproduced at engine level with scripted attempt outcomes (tests/support/script.h).
 * Each test is named test_call_<rule>; one that reproduces a seed says which in a comment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "retry/retry_int.h"
#include "retry/retry_parts.h"
#include "tests/support/script.h"

#define MS RETRY_NS_PER_MS
#define S RETRY_NS_PER_S

static test_rng g_rng;

static retry_call_opts opts_make(const char *method, int64_t deadline_ns) {
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.call_id = 1;
  o.method = method;
  o.stream = RETRY_STREAM_UNARY;
  o.deadline_ns = deadline_ns;
  o.rng = test_rng_make(&g_rng, 42);
  return o;
}

/* A gRPC retry policy: attempts, backoff in ms (fixed when jitter none), codes. */
static void grpc_policy(retry_policy *p, int32_t max_attempts, int64_t initial_ms, int64_t max_ms,
                        double mult, retry_jitter jitter) {
  retry_policy_init(p, RETRY_SPACE_GRPC);
  p->kind = RETRY_POLICY_RETRY;
  retry_policy_set_max_attempts(p, max_attempts, RETRY_GRPC_MAX_ATTEMPTS_LIMIT);
  p->backoff.initial_ns = initial_ms * MS;
  p->backoff.max_ns = max_ms * MS;
  p->backoff.multiplier = mult;
  p->backoff.jitter = jitter;
  retry_status_set_add(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(retry_policy_validate(p, NULL), 0);
}

/* seed 000's grpc-client-kit defaults: 3 attempts, {UNAVAILABLE, RESOURCE_EXHAUSTED}. */
static void kit_policy(retry_policy *p) {
  grpc_policy(p, 3, 100, 1000, 2.0, RETRY_JITTER_NONE);
  retry_status_set_add(&p->retryable, RETRY_SPACE_GRPC, RETRY_GRPC_RESOURCE_EXHAUSTED);
}

/* An attempt that fails with status after the handler made its side effect. */
static script_attempt after_charge(int64_t ms, int32_t status) {
  script_attempt a = script_step(ms, status);
  a.side_effect_at_ns = 0;
  return a;
}

/* {==================================================================
 * Seed 000: five ways to fail a charge, the deadline row, breakers, streams, two layers
 * =================================================================== */

static const char *const kit_idempotent[] = {"/lab.Payments/Export", "/lab.Payments/GetCharge"};

/* One row of seed 000's "five ways to fail a charge": what the server does, how the policy
 * differs from the kit's defaults, and what the article measured. */
typedef struct charge_row {
  const char *label;
  script_attempt first, then; /* attempt 1, and every later attempt */
  bool internal_retryable;    /* INTERNAL added to the retryable codes */
  bool allowlist;             /* idempotent_methods set, without Charge */
  int32_t status;             /* what the caller saw */
  retry_stop reason;
  int attempts, charges;
} charge_row;

/* seed 000: five ways to fail a charge */
static void test_call_retries_only_retryable_statuses_of_idempotent_methods(void **state) {
  (void)state;
  const script_attempt refuse = script_step(5, RETRY_GRPC_UNAVAILABLE);
  const charge_row rows[] = {
      {"UNAVAILABLE before the handler ran", refuse, after_charge(5, RETRY_GRPC_OK), false, false,
       RETRY_GRPC_OK, RETRY_STOP_OK, 2, 1},
      {"INTERNAL after the charge, default policy", after_charge(5, RETRY_GRPC_INTERNAL),
       after_charge(5, RETRY_GRPC_INTERNAL), false, false, RETRY_GRPC_INTERNAL,
       RETRY_STOP_NON_RETRYABLE_STATUS, 1, 1},
      {"INTERNAL after the charge, INTERNAL made retryable", after_charge(5, RETRY_GRPC_INTERNAL),
       after_charge(5, RETRY_GRPC_INTERNAL), true, false, RETRY_GRPC_INTERNAL,
       RETRY_STOP_MAX_ATTEMPTS, 3, 3},
      {"UNAVAILABLE after the charge, default policy", after_charge(5, RETRY_GRPC_UNAVAILABLE),
       after_charge(5, RETRY_GRPC_UNAVAILABLE), false, false, RETRY_GRPC_UNAVAILABLE,
       RETRY_STOP_MAX_ATTEMPTS, 3, 3},
      {"UNAVAILABLE after the charge, Charge not in idempotent_methods",
       after_charge(5, RETRY_GRPC_UNAVAILABLE), after_charge(5, RETRY_GRPC_UNAVAILABLE), false,
       true, RETRY_GRPC_UNAVAILABLE, RETRY_STOP_METHOD_NOT_IDEMPOTENT, 1, 1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const charge_row *row = &rows[i];
    retry_policy p;
    kit_policy(&p);
    if (row->internal_retryable)
      retry_status_set_add(&p.retryable, RETRY_SPACE_GRPC, RETRY_GRPC_INTERNAL);
    if (row->allowlist) {
      p.idempotent_methods = kit_idempotent;
      p.n_idempotent_methods = 2;
      p.has_idempotent_allowlist = true;
    }
    script_attempt steps[2] = {row->first, row->then};
    retry_call_opts o = opts_make("/lab.Payments/Charge", RETRY_NEVER);
    script_result r;
    assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
    if (r.status != row->status || r.reason != row->reason || r.attempts != row->attempts ||
        r.side_effects != row->charges)
      fail_msg("%s: got %s %s attempts=%d charges=%d, want %s %s attempts=%d charges=%d",
               row->label, retry_grpc_code_name(r.status), retry_stop_name(r.reason), r.attempts,
               r.side_effects, retry_grpc_code_name(row->status), retry_stop_name(row->reason),
               row->attempts, row->charges);
  }
}

/* seed 000: Export is in idempotent_methods */
static void test_call_allowlisted_method_keeps_its_retries(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  p.idempotent_methods = kit_idempotent;
  p.n_idempotent_methods = 2;
  p.has_idempotent_allowlist = true;
  script_attempt s = after_charge(5, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = opts_make("/lab.Payments/Export", RETRY_NEVER);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_MAX_ATTEMPTS);
  assert_int_equal(r.attempts, 3);
}

/* seed 000: the call ends at 2 s, not 4.7 s */
static void test_call_deadline_spans_all_attempts(void **state) {
  (void)state;
  /* The handler sleeps 1.5 s then refuses; timeout 2.0 s; 3 attempts; 0.1 s backoff. */
  retry_policy p;
  grpc_policy(&p, 3, 100, 100, 1.0, RETRY_JITTER_NONE);
  script_attempt steps[1] = {script_step(1500, RETRY_GRPC_UNAVAILABLE)};
  retry_call_opts o = opts_make("/lab.Payments/Charge", 2 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 1, &r), 0);
  assert_int_equal(r.status, RETRY_GRPC_DEADLINE_EXCEEDED);
  assert_int_equal(r.reason, RETRY_STOP_DEADLINE);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.side_effects, 0);
  assert_int_equal(r.end_ns, 2 * S);
  assert_int_equal(r.send_ns[1], 1600 * MS); /* the second attempt got the remaining 0.4 s */
  /* Counting attempts instead of the deadline would have waited 4.7 s. */
  o = opts_make("/lab.Payments/Charge", RETRY_NEVER);
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 1, &r), 0);
  assert_int_equal(r.attempts, 3);
  assert_int_equal(r.end_ns, 4700 * MS);
}

static retry_target *consecutive_breaker(int32_t threshold) {
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_breaker = true;
  retry_breaker_config_init(&tc.breaker, RETRY_BREAKER_CONSECUTIVE);
  tc.breaker.failure_threshold = threshold;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  return t;
}

/* seed 000: fail_threshold 2 opens on the first call */
static void test_call_breaker_counts_attempts_not_calls(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_target *t = consecutive_breaker(2);
  script_attempt steps[1] = {after_charge(5, RETRY_GRPC_UNAVAILABLE)};
  retry_call_opts o = opts_make("/lab.Payments/Charge", RETRY_NEVER);
  script_result r;
  assert_int_equal(script_run(&p, t, &o, 0, steps, 1, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_BREAKER_OPEN);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.side_effects, 2);
  assert_int_equal(retry_breaker_state_get(retry_target_breaker(t)), RETRY_BREAKER_OPEN);
  retry_target_destroy(t);
}

/* seed 000: a recoverable call leaves the count at 0 */
static void test_call_breaker_success_resets_the_failure_count(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_target *t = consecutive_breaker(2);
  script_attempt steps[2] = {script_step(5, RETRY_GRPC_UNAVAILABLE), after_charge(5, 0)};
  retry_call_opts o = opts_make("/lab.Payments/Charge", RETRY_NEVER);
  script_result r;
  assert_int_equal(script_run(&p, t, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_OK);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.side_effects, 1);
  /* The count went back to zero: one more failed attempt does not open it. */
  script_attempt fail1[2] = {script_step(5, RETRY_GRPC_UNAVAILABLE), script_step(5, 0)};
  assert_int_equal(script_run(&p, t, &o, 10 * MS * 100, fail1, 2, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_OK);
  assert_int_equal(retry_breaker_state_get(retry_target_breaker(t)), RETRY_BREAKER_CLOSED);
  retry_target_destroy(t);
}

/* seed 000: the export stream */
static void test_call_server_stream_not_retried_without_opt_in(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  script_attempt s = script_step(5, RETRY_GRPC_UNAVAILABLE);
  s.stream_items = 2;
  s.headers_at_ns = 1 * MS;
  retry_call_opts o = opts_make("/lab.Payments/Export", RETRY_NEVER);
  o.stream = RETRY_STREAM_SERVER;
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.status, RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(r.reason, RETRY_STOP_STREAMING);
  assert_int_equal(r.attempts, 1);
  assert_int_equal(r.stream_items, 2);
  assert_int_equal(r.stream_duplicates, 0);
}

/* seed 000: [1, 2, 1, 2, 3, 4, 5] */
static void test_call_opted_in_server_stream_replays_its_prefix(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  p.retry_streaming = true;
  p.idempotent_methods = kit_idempotent;
  p.n_idempotent_methods = 2;
  p.has_idempotent_allowlist = true;
  script_attempt steps[2] = {script_step(5, RETRY_GRPC_UNAVAILABLE), script_step(5, 0)};
  steps[0].stream_items = 2;
  steps[0].headers_at_ns = 1 * MS;
  steps[1].stream_items = 5;
  steps[1].headers_at_ns = 1 * MS;
  retry_call_opts o = opts_make("/lab.Payments/Export", RETRY_NEVER);
  o.stream = RETRY_STREAM_SERVER;
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  /* The client saw [1, 2, 1, 2, 3, 4, 5]: 7 messages, 2 of them replayed. */
  assert_int_equal(r.status, RETRY_GRPC_OK);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.stream_items, 7);
  assert_int_equal(r.stream_duplicates, 2);
  /* The opt-in alone is not enough: without an allowlist the stream is not retried. */
  p.has_idempotent_allowlist = false;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_STREAMING);
  assert_int_equal(r.attempts, 1);
}

/* seed 000: the upload stream */
static void test_call_client_stream_never_retried(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  p.retry_streaming = true;
  script_attempt s = script_step(5, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = opts_make("/lab.Payments/Upload", RETRY_NEVER);
  o.stream = RETRY_STREAM_CLIENT;
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_STREAMING);
  assert_int_equal(r.attempts, 1);
}

/* seed 000: two layers of 3 make 9 requests */
static void test_call_layered_retries_multiply_attempts(void **state) {
  (void)state;
  /* An interceptor retry loop (3 attempts) over a channel's retryPolicy (3 attempts): every
   * outer attempt is a whole inner call. The server always answers UNAVAILABLE. */
  retry_policy outer, inner;
  kit_policy(&outer);
  kit_policy(&inner);
  script_attempt fail = script_step(5, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = opts_make("/lab.Payments/Export", RETRY_NEVER);
  retry_call oc;
  retry_decision d;
  int64_t now = 0;
  int requests = 0;
  retry_call_start(&oc, &outer, NULL, &o, now, &d);
  while (d.action != RETRY_ACTION_DONE) {
    if (d.action == RETRY_ACTION_WAIT) {
      now = d.wake_ns;
      retry_call_wake(&oc, now, &d);
      continue;
    }
    script_result r;
    assert_int_equal(script_run(&inner, NULL, &o, now, &fail, 1, &r), 0);
    requests += r.attempts;
    now = r.end_ns;
    retry_outcome out;
    retry_outcome_init(&out, r.status);
    retry_call_on_outcome(&oc, d.attempt, &out, now, &d);
  }
  assert_int_equal(requests, 9);
  const retry_policy *chain[2] = {&outer, &inner};
  assert_int_equal(retry_policy_layers_worst_case(chain, 2), 9);
}

/* }================================================================== */

/* {==================================================================
 * Seed 001: grpc-go lab
 * =================================================================== */

static void seed001_policy(retry_policy *p) {
  grpc_policy(p, 4, 10, 50, 2.0, RETRY_JITTER_PROPORTIONAL);
}

/* One row of seed 001's grpc-go examples: a policy (seed 001's retryPolicy, or none), what the
 * server answers attempt by attempt (the last status repeats), and what the client saw. */
typedef struct seed001_row {
  const char *label;
  bool no_policy;          /* true: no retryPolicy at all */
  const int32_t *statuses; /* attempt 1, 2, ... answer these after 1 ms each */
  size_t n_statuses;       /* how many are scripted, <= 3 */
  int32_t status;          /* what the caller saw */
  retry_stop reason;       /* why the call stopped */
  int attempts, n_retries; /* requests that reached the server; how many were retries */
} seed001_row;

static const int32_t flaky_then_ok[] = {RETRY_GRPC_UNAVAILABLE, RETRY_GRPC_UNAVAILABLE,
                                        RETRY_GRPC_OK};
static const int32_t always_unavailable[] = {RETRY_GRPC_UNAVAILABLE};
static const int32_t invalid_argument[] = {RETRY_GRPC_INVALID_ARGUMENT};

/* seed 001: grpc-go's examples/features/retry against a flaky server (3 requests for two
 * failures then success, 4 when it always fails, 1 for a fatal status, 1 without a policy).
 * The call stops at the first success, at maxAttempts, or at a status that is not retryable,
 * and without a policy it never retries. */
static void test_call_stops_at_success_max_attempts_or_fatal_status(void **state) {
  (void)state;
  static const seed001_row rows[] = {
      {"two UNAVAILABLE then OK", false, flaky_then_ok, 3, RETRY_GRPC_OK, RETRY_STOP_OK, 3, 2},
      {"always UNAVAILABLE", false, always_unavailable, 1, RETRY_GRPC_UNAVAILABLE,
       RETRY_STOP_MAX_ATTEMPTS, 4, 3},
      {"INVALID_ARGUMENT", false, invalid_argument, 1, RETRY_GRPC_INVALID_ARGUMENT,
       RETRY_STOP_NON_RETRYABLE_STATUS, 1, 0},
      {"two UNAVAILABLE then OK, no retryPolicy", true, flaky_then_ok, 3, RETRY_GRPC_UNAVAILABLE,
       RETRY_STOP_NO_RETRY_POLICY, 1, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const seed001_row *row = &rows[i];
    retry_policy p;
    if (row->no_policy)
      retry_policy_init(&p, RETRY_SPACE_GRPC);
    else
      seed001_policy(&p);
    script_attempt steps[3];
    assert_true(row->n_statuses <= sizeof steps / sizeof steps[0]);
    for (size_t k = 0; k < row->n_statuses; k++)
      steps[k] = script_step(1, row->statuses[k]);
    retry_call_opts o = opts_make("/flaky.v1.Flaky/Do", 5 * S);
    script_result r;
    assert_int_equal(script_run(&p, NULL, &o, 0, steps, row->n_statuses, &r), 0);
    if (r.status != row->status || r.reason != row->reason || r.attempts != row->attempts ||
        retry_call_retries(&r.call) != row->n_retries)
      fail_msg("%s: got %s %s attempts=%d retries=%d, want %s %s attempts=%d retries=%d",
               row->label, retry_grpc_code_name(r.status), retry_stop_name(r.reason), r.attempts,
               (int)retry_call_retries(&r.call), retry_grpc_code_name(row->status),
               retry_stop_name(row->reason), row->attempts, row->n_retries);
  }
}

/* Runs 20 always-failing calls one after the other; returns the requests made. */
static int twenty_failing_calls(const retry_policy *p, retry_target *t) {
  script_attempt s = script_step(1, RETRY_GRPC_UNAVAILABLE);
  int requests = 0;
  int64_t now = 0;
  for (int i = 0; i < 20; i++) {
    retry_call_opts o = opts_make("/flaky.v1.Flaky/Do", now + 5 * S);
    script_result r;
    assert_int_equal(script_run(p, t, &o, now, &s, 1, &r), 0);
    requests += r.attempts;
    now = r.end_ns;
  }
  return requests;
}

/* seed 001: 20 failing calls make 80 requests, 21 with maxTokens 4 */
static void test_call_throttle_stops_retries_at_half_the_tokens(void **state) {
  (void)state;
  retry_policy p;
  seed001_policy(&p);
  assert_int_equal(twenty_failing_calls(&p, NULL), 80);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 4000;
  tc.throttle.token_ratio_milli = 100;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  assert_int_equal(twenty_failing_calls(&p, t), 21);
  assert_int_equal(retry_target_throttle(t)->milli_tokens, 0);
  retry_target_destroy(t);
}

/* seed 001: the by-hand hedge answers under 200 ms */
static void test_call_hedge_answers_when_the_original_stalls(void **state) {
  (void)state;
  /* Hedge after 50 ms; the first attempt stalls 400 ms, the hedge answers at once. */
  retry_policy p;
  retry_policy_init(&p, RETRY_SPACE_GRPC);
  p.kind = RETRY_POLICY_HEDGE;
  retry_policy_set_max_attempts(&p, 2, RETRY_GRPC_MAX_ATTEMPTS_LIMIT);
  p.hedging_delay_ns = 50 * MS;
  assert_int_equal(retry_policy_validate(&p, NULL), 0);
  script_attempt steps[2] = {script_step(400, 0), script_step(2, 0)};
  retry_call_opts o = opts_make("/flaky.v1.Flaky/Do", 5 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.status, RETRY_GRPC_OK);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.send_ns[1], 50 * MS);
  assert_true(r.end_ns < 200 * MS);
  assert_int_equal(r.end_ns, 52 * MS);
  assert_int_equal(r.cancelled, 1); /* the stalled original is cancelled */
}

/* }================================================================== */

/* {==================================================================
 * Seed 003: pushback, throttle, backoff windows
 * =================================================================== */

static script_attempt pushback_step(int64_t ms, const char *pb) {
  script_attempt a = script_step(ms, RETRY_GRPC_UNAVAILABLE);
  a.pushback = pb;
  return a;
}

/* seed 003: the 900 ms timeline, two attempts */
static void test_call_pushback_delays_exactly_and_the_deadline_still_stops(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 4, 100, 1000, 2.0, RETRY_JITTER_PROPORTIONAL);
  p.wait_for_deadline = false; /* the seed 003 kit stops as soon as no attempt fits */
  script_attempt steps[2] = {pushback_step(100, "300"), pushback_step(150, "500")};
  retry_call_opts o = opts_make("/svc/M", 900 * MS);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.send_ns[1], 400 * MS);        /* exactly the pushback: no jitter */
  assert_int_equal(r.reason, RETRY_STOP_DEADLINE); /* 550 + 500 = 1050 > 900 */
  assert_int_equal(r.end_ns, 550 * MS);
  assert_int_equal(r.status, RETRY_GRPC_UNAVAILABLE);
  /* A client that sleeps instead (the default, as gRPC's) ends at the deadline with
   * DEADLINE_EXCEEDED. */
  p.wait_for_deadline = true;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.end_ns, 900 * MS);
  assert_int_equal(r.status, RETRY_GRPC_DEADLINE_EXCEEDED);
}

/* seed 003: pushback -1 with 350 ms left */
static void test_call_negative_pushback_stops_retries(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 4, 100, 1000, 2.0, RETRY_JITTER_PROPORTIONAL);
  script_attempt steps[2] = {pushback_step(100, "300"), pushback_step(150, "-1")};
  retry_call_opts o = opts_make("/svc/M", 900 * MS);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.attempts, 2);
  assert_int_equal(r.reason, RETRY_STOP_PUSHBACK_STOP);
  assert_int_equal(r.end_ns, 550 * MS); /* 350 ms and 2 attempts left unused */
}

/* seed 003: pushback "soon" */
static void test_call_unparseable_pushback_stops_and_costs_a_token(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 4, 100, 1000, 2.0, RETRY_JITTER_PROPORTIONAL);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 10000;
  tc.throttle.token_ratio_milli = 100;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  /* A non-retryable status with a stop pushback still counts as a throttle failure (A6). */
  script_attempt s = script_step(10, RETRY_GRPC_RESOURCE_EXHAUSTED);
  s.pushback = "soon";
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  script_result r;
  assert_int_equal(script_run(&p, t, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_NON_RETRYABLE_STATUS);
  assert_int_equal(retry_target_throttle(t)->milli_tokens, 9000);
  s.status = RETRY_GRPC_UNAVAILABLE;
  assert_int_equal(script_run(&p, t, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_PUSHBACK_STOP);
  assert_int_equal(r.attempts, 1);
  assert_int_equal(retry_target_throttle(t)->milli_tokens, 8000);
  retry_target_destroy(t);
}

/* seed 003: 700 ms of pushback, 400 ms left */
static void test_call_pushback_past_the_deadline_is_not_waited_for(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 4, 100, 1000, 2.0, RETRY_JITTER_PROPORTIONAL);
  script_attempt s = pushback_step(10, "700");
  retry_call_opts o = opts_make("/svc/M", 410 * MS); /* 400 ms left when the answer comes */
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.attempts, 1);
  assert_int_equal(r.reason, RETRY_STOP_DEADLINE);
}

/* seed 003: 350 ms of pushback, then 80-120 ms */
static void test_call_pushback_replaces_backoff_and_resets_exponent(void **state) {
  (void)state;
  /* Nominal 100, 200, 400 ms; the first failure carries 350 ms of pushback. The next wait is
   * exactly 350 ms, and the one after restarts at initialBackoff (80-120 ms), not 200 ms. */
  retry_policy p;
  grpc_policy(&p, 4, 100, 1000, 2.0, RETRY_JITTER_PROPORTIONAL);
  script_attempt steps[3] = {pushback_step(10, "350"), script_step(10, RETRY_GRPC_UNAVAILABLE),
                             script_step(10, 0)};
  for (uint64_t seed = 1; seed <= 200; seed++) {
    retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
    o.rng = test_rng_make(&g_rng, seed);
    script_result r;
    assert_int_equal(script_run(&p, NULL, &o, 0, steps, 3, &r), 0);
    assert_int_equal(r.attempts, 3);
    assert_int_equal(r.send_ns[1], 360 * MS);
    int64_t wait = r.send_ns[2] - (r.send_ns[1] + 10 * MS);
    assert_true(wait >= 80 * MS && wait < 120 * MS);
  }
}

/* seed 003: maxTokens 10 blocks at 5, allows at 5.1 */
static void test_call_throttle_blocks_at_half_and_a_success_reopens(void **state) {
  (void)state;
  /* maxTokens 10: each always-failing call (2 attempts) costs up to 2 tokens. */
  retry_policy p;
  grpc_policy(&p, 2, 1, 1, 1.0, RETRY_JITTER_NONE);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 10000;
  tc.throttle.token_ratio_milli = 100;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  script_attempt fail = script_step(1, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  script_result r;
  assert_int_equal(script_run(&p, t, &o, 0, &fail, 1, &r), 0); /* 10 -> 9 -> 8 */
  assert_int_equal(r.reason, RETRY_STOP_MAX_ATTEMPTS);
  assert_int_equal(script_run(&p, t, &o, 0, &fail, 1, &r), 0); /* 8 -> 7 -> 6 */
  assert_int_equal(r.attempts, 2);
  assert_int_equal(script_run(&p, t, &o, 0, &fail, 1, &r), 0); /* 6 -> 5: blocks */
  assert_int_equal(r.reason, RETRY_STOP_THROTTLED);
  assert_int_equal(r.attempts, 1);
  assert_int_equal(retry_target_throttle(t)->milli_tokens, 5000);
  assert_false(retry_throttle_is_allowed(retry_target_throttle(t)));
  script_attempt ok = script_step(1, 0);
  assert_int_equal(script_run(&p, t, &o, 0, &ok, 1, &r), 0); /* +0.1 -> 5.1 */
  assert_int_equal(retry_target_throttle(t)->milli_tokens, 5100);
  assert_true(retry_throttle_is_allowed(retry_target_throttle(t)));
  retry_target_destroy(t);
}

/* seed 003: 80-120, 160-240, 320-480 ms */
static void test_call_backoff_waits_stay_in_their_jitter_windows(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 4, 100, 1000, 2.0, RETRY_JITTER_PROPORTIONAL);
  script_attempt fail = script_step(0, RETRY_GRPC_UNAVAILABLE);
  int64_t lo[3] = {INT64_MAX, INT64_MAX, INT64_MAX}, hi[3] = {0, 0, 0};
  int64_t total_lo = INT64_MAX, total_hi = 0;
  for (uint64_t seed = 1; seed <= 5000; seed++) {
    retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
    o.rng = test_rng_make(&g_rng, seed);
    script_result r;
    assert_int_equal(script_run(&p, NULL, &o, 0, &fail, 1, &r), 0);
    assert_int_equal(r.attempts, 4);
    for (int i = 0; i < 3; i++) {
      int64_t w = r.send_ns[i + 1] - r.send_ns[i];
      lo[i] = w < lo[i] ? w : lo[i];
      hi[i] = w > hi[i] ? w : hi[i];
    }
    int64_t total = r.send_ns[3];
    total_lo = total < total_lo ? total : total_lo;
    total_hi = total > total_hi ? total : total_hi;
    assert_int_equal(r.call.backoff_total_ns, total);
  }
  const int64_t want_lo[3] = {80, 160, 320}, want_hi[3] = {120, 240, 480};
  for (int i = 0; i < 3; i++) {
    assert_true(lo[i] >= want_lo[i] * MS && hi[i] < want_hi[i] * MS);
    /* 5000 draws reach within 0.5 % of each end of the window. */
    assert_true(lo[i] < want_lo[i] * MS + (want_hi[i] - want_lo[i]) * MS / 200);
    assert_true(hi[i] > want_hi[i] * MS - (want_hi[i] - want_lo[i]) * MS / 200);
  }
  assert_true(total_lo >= 560 * MS && total_hi < 840 * MS);
}

/* seed 003: 200 clients refused make 800 attempts */
static void test_call_every_refused_client_makes_max_attempts(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 4, 100, 1000, 2.0, RETRY_JITTER_PROPORTIONAL);
  script_attempt fail = script_step(1, RETRY_GRPC_UNAVAILABLE);
  int attempts = 0;
  for (int i = 0; i < 200; i++) {
    retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
    o.call_id = (uint64_t)i;
    script_result r;
    assert_int_equal(script_run(&p, NULL, &o, 0, &fail, 1, &r), 0);
    attempts += r.attempts;
  }
  assert_int_equal(attempts, 800);
}

/* }================================================================== */

/* {==================================================================
 * Seed 004: a gateway that maps unmapped codes to 500 under retry-on-5xx
 * =================================================================== */

static void http_policy(retry_policy *p, int32_t max_attempts, const char *const *tokens,
                        size_t n) {
  retry_policy_init(p, RETRY_SPACE_HTTP);
  p->kind = RETRY_POLICY_RETRY;
  retry_policy_set_max_attempts(p, max_attempts, 0); /* not gRPC: no cap of 5 */
  p->backoff.initial_ns = 10 * MS;
  p->backoff.max_ns = 100 * MS;
  for (size_t i = 0; i < n; i++)
    assert_int_equal(retry_status_set_add_token(&p->retryable, RETRY_SPACE_HTTP, tokens[i]), 0);
  assert_int_equal(retry_policy_validate(p, NULL), 0);
}

/* seed 004: retry-on 5xx, six attempts for a FAILED_PRECONDITION mapped to 500 */
static void test_call_http_5xx_class_retries_a_mapped_500(void **state) {
  (void)state;
  const char *const fivexx[] = {"5xx"};
  retry_policy p;
  http_policy(&p, 6, fivexx, 1);
  script_attempt s = script_step(20, 500); /* FAILED_PRECONDITION fell to the catch-all 500 */
  retry_call_opts o = opts_make("/auth.v1.Mfa/Verify", 10 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.attempts, 6);
  assert_int_equal(r.status, 500);
  assert_int_equal(r.reason, RETRY_STOP_MAX_ATTEMPTS);
}

/* seed 004: 422 and 500 under a 503/504 list, one attempt */
static void test_call_http_statuses_outside_the_retryable_set_are_not_retried(void **state) {
  (void)state;
  const char *const allow[] = {"503", "504"};
  retry_policy p;
  http_policy(&p, 6, allow, 2);
  script_attempt s = script_step(20, 422); /* FAILED_PRECONDITION -> 422, not retryable */
  retry_call_opts o = opts_make("/auth.v1.Mfa/Verify", 10 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.attempts, 1);
  assert_int_equal(r.reason, RETRY_STOP_NON_RETRYABLE_STATUS);
  /* Even the old 500 is not retried under the allowlist. */
  s.status = 500;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.attempts, 1);
}

/* }================================================================== */

/* {==================================================================
 * Rules that no seed row names
 * =================================================================== */

static void test_call_max_attempts_clamped_to_grpc_limit_of_five(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 7, 1, 1, 1.0, RETRY_JITTER_NONE);
  assert_int_equal(p.max_attempts, 5);
  assert_int_equal(p.max_attempts_configured, 7);
  script_attempt s = script_step(1, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.attempts, 5);
  retry_policy_set_max_attempts(&p, 7, 0); /* the documented option lifts the cap */
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.attempts, 7);
}

static void test_call_per_attempt_timeout_bounded_by_deadline(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 3, 10, 10, 1.0, RETRY_JITTER_NONE);
  retry_status_set_add(&p.retryable, RETRY_SPACE_GRPC, RETRY_GRPC_DEADLINE_EXCEEDED);
  p.per_attempt_timeout_ns = 300 * MS;
  script_attempt slow = script_step(1000, 0);
  retry_call_opts o = opts_make("/svc/M", 700 * MS);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &slow, 1, &r), 0);
  /* 0-300 timeout, 310-610 timeout, 620: third attempt gets only 80 ms (the deadline). */
  assert_int_equal(r.attempts, 3);
  assert_int_equal(r.send_ns[1], 310 * MS);
  assert_int_equal(r.send_ns[2], 620 * MS);
  assert_int_equal(r.end_ns, 700 * MS);
  assert_int_equal(r.reason, RETRY_STOP_DEADLINE);
}

static void test_call_headers_commit_so_no_retry(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  script_attempt s = script_step(10, RETRY_GRPC_UNAVAILABLE);
  s.headers_at_ns = 5 * MS;
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, &s, 1, &r), 0);
  assert_int_equal(r.reason, RETRY_STOP_COMMITTED);
  assert_int_equal(r.attempts, 1);
}

static void test_call_request_over_the_retry_buffer_commits(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  out.request_bytes = RETRY_DEFAULT_BUFFER_BYTES + 1;
  retry_call_on_outcome(&c, 1, &out, 1, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_COMMITTED);
  /* At exactly the buffer size it still fits. */
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  out.request_bytes = RETRY_DEFAULT_BUFFER_BYTES;
  retry_call_on_outcome(&c, 1, &out, 1, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
}

static void test_call_retry_after_seconds_replaces_backoff(void **state) {
  (void)state;
  const char *const codes[] = {"503"};
  retry_policy p;
  http_policy(&p, 3, codes, 1);
  script_attempt steps[2] = {script_step(10, 503), script_step(10, 200)};
  steps[0].retry_after = "2";
  retry_call_opts o = opts_make("/svc/M", 10 * S);
  script_result r;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_int_equal(r.status, 200);
  assert_int_equal(r.send_ns[1], 10 * MS + 2 * S);
  p.honor_retry_after = false;
  assert_int_equal(script_run(&p, NULL, &o, 0, steps, 2, &r), 0);
  assert_true(r.send_ns[1] < 100 * MS);
}

/* retry_after_at_ns is a time like any other, 0 included (a time already past: retry now);
 * only RETRY_NEVER, which retry_outcome_init sets, means "no Retry-After". */
static void test_call_retry_after_time_zero_is_a_time_and_never_means_none(void **state) {
  (void)state;
  const char *const codes[] = {"503"};
  retry_policy p;
  http_policy(&p, 3, codes, 1);
  p.backoff.jitter = RETRY_JITTER_NONE; /* backoff exactly 10 ms */
  retry_call_opts o = opts_make("/svc/M", 10 * S);
  retry_call c;
  retry_decision d;
  retry_outcome out;
  const int64_t at[] = {3 * S, 0, RETRY_NEVER};
  const int64_t wake[] = {3 * S, 50 * MS, 60 * MS};
  for (size_t i = 0; i < 3; i++) {
    retry_call_start(&c, &p, NULL, &o, 0, &d);
    retry_outcome_init(&out, 503);
    assert_true(out.retry_after_at_ns == RETRY_NEVER);
    out.retry_after_at_ns = at[i];
    retry_call_on_outcome(&c, 1, &out, 50 * MS, &d);
    assert_int_equal(d.action, RETRY_ACTION_WAIT);
    assert_int_equal(d.wake_ns, wake[i]);
  }
}

static void test_call_stops_once_and_ignores_late_events(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(d.attempt, 1);
  assert_int_equal(retry_call_end_ns(&c), RETRY_NEVER); /* not done yet */
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_OK);
  retry_call_on_outcome(&c, 1, &out, 5, &d);
  assert_int_equal(d.reason, RETRY_STOP_OK);
  /* A duplicate report and a stray wake change nothing. */
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 6, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_OK);
  retry_call_wake(&c, 7, &d);
  assert_int_equal(d.reason, RETRY_STOP_OK);
  assert_int_equal(c.status, RETRY_GRPC_OK);
  assert_int_equal(retry_call_end_ns(&c), 5);
}

static void test_call_deadline_already_passed_sends_nothing(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_call_opts o = opts_make("/svc/M", 100);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 100, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_DEADLINE);
  assert_int_equal(c.n_attempts, 0);
}

/* {==================================================================
 * Cancel (retry_call_cancel): the caller no longer wants the result
 * =================================================================== */

/* A cancel while an attempt is in flight ends the call at once: CANCELLED, cancel_others set,
 * the attempt out of the target's in-flight count and its Envoy slot back, no throttle token
 * taken (A6 counts only statuses from a server), and the limiter's permit released as
 * ignored (CANCELLED is no drop): the limit stays where it was. */
static void test_call_cancel_in_flight_ends_at_once_and_takes_no_token(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 10000;
  tc.throttle.token_ratio_milli = 100;
  tc.budget = RETRY_BUDGET_ENVOY;
  retry_envoy_budget_config_init(&tc.envoy);
  retry_target_config_set_limit(&tc, RETRY_LIMIT_AIMD);
  tc.limit.initial_limit = 4;
  tc.limit.min_limit = 1;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  o.ext = script_ext(); /* budgets, limiters, hedging and traces keep state there */
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, t, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  retry_target_stats s;
  retry_target_stats_get(t, 1, &s);
  assert_int_equal(s.in_flight, 1);
  assert_int_equal(s.limit_in_flight, 1);
  retry_call_cancel(&c, 7 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_CANCELLED);
  assert_int_equal(d.status, RETRY_GRPC_CANCELLED);
  assert_int_equal(d.done_ns, 7 * MS);
  assert_true(d.cancel_others);
  assert_true(c.done);
  assert_int_equal(c.n_in_flight, 0);
  assert_string_equal(retry_stop_name(c.reason), "cancelled");
  retry_target_stats_get(t, 8 * MS, &s);
  assert_int_equal(s.in_flight, 0);
  assert_int_equal(s.throttle_milli_tokens, 10000);
  assert_int_equal(s.budget_available, 3); /* Envoy's min_retry_concurrency, all free */
  assert_int_equal(s.limit_in_flight, 0);
  assert_int_equal(s.limit, 4);
  /* The cancelled attempt's late reply changes nothing; a second cancel repeats the result. */
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 9 * MS, &d);
  assert_int_equal(d.reason, RETRY_STOP_CANCELLED);
  assert_int_equal(d.done_ns, 7 * MS);
  retry_call_cancel(&c, 10 * MS, &d);
  assert_int_equal(d.reason, RETRY_STOP_CANCELLED);
  assert_false(d.cancel_others);
  retry_target_stats_get(t, 11 * MS, &s);
  assert_int_equal(s.throttle_milli_tokens, 10000);
  retry_target_destroy(t);
}

/* A cancel during a backoff drops the retry's budget grant (an Envoy slot taken when the retry
 * was decided) and the timer: nothing is in flight, so cancel_others is false. */
/* A call whose end the engine decided for later (the next backoff would pass the deadline, so
 * it waits the deadline out) is still running to its caller: a cancel before that end ends it
 * now, cancelled; once it has ended, a cancel changes nothing. */
static void test_call_cancel_before_a_decided_later_end_ends_it_now(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p); /* 100 ms initial backoff */
  assert_true(p.wait_for_deadline);
  retry_call_opts o = opts_make("/svc/M", 50 * MS);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 5 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.done_ns, 50 * MS);
  assert_int_equal(d.reason, RETRY_STOP_DEADLINE);
  retry_call_cancel(&c, 20 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.done_ns, 20 * MS);
  assert_int_equal(d.reason, RETRY_STOP_CANCELLED);
  assert_int_equal(d.status, RETRY_GRPC_CANCELLED);
  assert_int_equal(retry_call_end_ns(&c), 20 * MS);
  assert_int_equal(c.n_attempts, 1);
  /* ended: a second cancel repeats the result */
  retry_call_cancel(&c, 30 * MS, &d);
  assert_int_equal(d.done_ns, 20 * MS);
  assert_int_equal(d.reason, RETRY_STOP_CANCELLED);
}

static void test_call_cancel_in_backoff_gives_the_retry_slot_back(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.budget = RETRY_BUDGET_ENVOY;
  retry_envoy_budget_config_init(&tc.envoy);
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  o.ext = script_ext(); /* budgets, limiters, hedging and traces keep state there */
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, t, &o, 0, &d);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 5 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  retry_target_stats s;
  retry_target_stats_get(t, 6 * MS, &s);
  assert_int_equal(s.budget_available, 2); /* one of 3 slots held by the pending retry */
  retry_call_cancel(&c, 20 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(d.reason, RETRY_STOP_CANCELLED);
  assert_false(d.cancel_others);
  assert_int_equal(d.wake_ns, RETRY_NEVER);
  assert_int_equal(c.n_attempts, 1);
  retry_target_stats_get(t, 21 * MS, &s);
  assert_int_equal(s.budget_available, 3);
  /* The backoff's timer, if the caller still fires it, sends nothing. */
  retry_call_wake(&c, 105 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(c.n_attempts, 1);
  retry_target_destroy(t);
}

/* Every hedge in flight is given back at once, a half-open breaker's probe permits included,
 * and no result reaches the breaker. In the HTTP space the status is 499. */
static void test_call_cancel_hedges_give_back_probes_and_http_says_499(void **state) {
  (void)state;
  retry_policy p;
  retry_policy_init(&p, RETRY_SPACE_HTTP);
  p.kind = RETRY_POLICY_HEDGE;
  retry_policy_set_max_attempts(&p, 3, RETRY_GRPC_MAX_ATTEMPTS_LIMIT);
  p.hedging_delay_ns = 10 * MS;
  retry_status_set_add(&p.retryable, RETRY_SPACE_HTTP, 503);
  assert_int_equal(retry_policy_validate(&p, NULL), 0);
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_breaker = true;
  retry_breaker_config_init(&tc.breaker, RETRY_BREAKER_CONSECUTIVE);
  tc.breaker.failure_threshold = 1;
  tc.breaker.half_open_calls = 3;
  tc.breaker.open_duration_ns = 1 * S;
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  retry_breaker *b = retry_target_breaker(t);
  assert_true(retry_breaker_allow(b, 0));
  retry_breaker_record(b, 0, true);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  o.ext = script_ext(); /* budgets, limiters, hedging and traces keep state there */
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, t, &o, 2 * S, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  retry_call_wake(&c, 2 * S + 10 * MS, &d);
  retry_call_wake(&c, 2 * S + 20 * MS, &d);
  assert_int_equal(c.n_in_flight, 3);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  retry_call_cancel(&c, 2 * S + 25 * MS, &d);
  assert_int_equal(d.status, RETRY_HTTP_CANCELLED);
  assert_int_equal(d.reason, RETRY_STOP_CANCELLED);
  assert_true(d.cancel_others);
  assert_int_equal(c.n_in_flight, 0);
  retry_target_stats s;
  retry_target_stats_get(t, 3 * S, &s);
  assert_int_equal(s.in_flight, 0);
  /* Still half-open, with all three probes free again. */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  for (int i = 0; i < 3; i++)
    assert_true(retry_breaker_allow(b, 3 * S));
  retry_target_destroy(t);
}

/* A traced cancel gives one record, event "cancel", with the DONE decision. */
static int g_cancel_recs;
static void cancel_trace(void *ctx, const retry_trace_rec *rec) {
  (void)ctx;
  if (rec->event == RETRY_TRACE_CANCEL) {
    g_cancel_recs++;
    assert_int_equal(rec->decision->reason, RETRY_STOP_CANCELLED);
    assert_string_equal(retry_trace_event_name(rec->event), "cancel");
  }
}

static void test_call_cancel_is_traced_as_its_own_event(void **state) {
  (void)state;
  retry_policy p;
  kit_policy(&p);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  o.ext = script_ext(); /* budgets, limiters, hedging and traces keep state there */
  o.trace = cancel_trace;
  g_cancel_recs = 0;
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  retry_call_cancel(&c, 3, &d);
  assert_int_equal(g_cancel_recs, 1);
  assert_int_equal(c.end_ns, 3);
}

/* }================================================================== */

static void test_call_layers_worst_case_is_the_product_of_attempts(void **state) {
  (void)state;
  retry_policy three, four, none;
  grpc_policy(&three, 3, 1, 1, 1.0, RETRY_JITTER_NONE);
  grpc_policy(&four, 4, 1, 1, 1.0, RETRY_JITTER_NONE);
  retry_policy_init(&none, RETRY_SPACE_GRPC);
  const retry_policy *c2[2] = {&three, &three};
  const retry_policy *c3[3] = {&three, &three, &three};
  const retry_policy *c4[3] = {&four, &four, &four};
  const retry_policy *mixed[4] = {&three, NULL, &none, &four};
  assert_int_equal(retry_policy_layers_worst_case(c2, 2), 9);
  assert_int_equal(retry_policy_layers_worst_case(c3, 3), 27);
  assert_int_equal(retry_policy_layers_worst_case(c4, 3), 64);
  assert_int_equal(retry_policy_layers_worst_case(mixed, 4), 12);
  assert_int_equal(retry_policy_layers_worst_case(NULL, 0), 1);
  retry_policy big;
  grpc_policy(&big, 1000, 1, 1, 1.0, RETRY_JITTER_NONE);
  retry_policy_set_max_attempts(&big, 1000, 0);
  const retry_policy *many[8] = {&big, &big, &big, &big, &big, &big, &big, &big};
  assert_true(retry_policy_layers_worst_case(many, 8) == UINT64_MAX); /* saturates */
}

/* {==================================================================
 * The optional state (retry_call_ext)
 * =================================================================== */

static retry_target *target_with(bool throttle, bool breaker, retry_budget_kind budget,
                                 bool limit) {
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = throttle;
  tc.throttle.max_milli_tokens = 40000;
  tc.throttle.token_ratio_milli = 1000;
  if (breaker) {
    tc.has_breaker = true;
    retry_breaker_config_init(&tc.breaker, RETRY_BREAKER_CONSECUTIVE);
    tc.breaker.failure_threshold = 6;
    tc.breaker.open_duration_ns = 2 * S; /* calls come a second apart: some find it open */
  }
  tc.budget = budget;
  retry_aws_quota_config_init(&tc.aws);
  retry_finagle_budget_config_init(&tc.finagle);
  retry_envoy_budget_config_init(&tc.envoy);
  if (limit) retry_target_config_set_limit(&tc, RETRY_LIMIT_AIMD);
  retry_target *t = retry_target_create(&tc, 0, NULL, NULL);
  assert_non_null(t);
  return t;
}

static void test_call_ext_needed_only_for_the_features_that_use_it(void **state) {
  (void)state;
  retry_policy retry, hedge, none;
  kit_policy(&retry);
  retry_policy_init(&hedge, RETRY_SPACE_GRPC);
  hedge.kind = RETRY_POLICY_HEDGE;
  retry_policy_set_max_attempts(&hedge, 3, RETRY_GRPC_MAX_ATTEMPTS_LIMIT);
  retry_policy_init(&none, RETRY_SPACE_GRPC);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  retry_target *plain = target_with(true, true, RETRY_BUDGET_NONE, false);
  retry_target *envoy = target_with(false, false, RETRY_BUDGET_ENVOY, false);
  retry_target *aws = target_with(false, false, RETRY_BUDGET_AWS, false);
  retry_target *finagle = target_with(false, false, RETRY_BUDGET_FINAGLE, false);
  retry_target *limit = target_with(false, false, RETRY_BUDGET_NONE, true);
  assert_false(retry_call_ext_needed(&retry, NULL, &o));
  assert_false(retry_call_ext_needed(&none, NULL, &o));
  assert_false(retry_call_ext_needed(&retry, plain, &o));
  assert_false(retry_call_ext_needed(&retry, finagle, &o));
  assert_true(retry_call_ext_needed(&hedge, NULL, &o));
  assert_true(retry_call_ext_needed(&retry, envoy, &o));
  assert_true(retry_call_ext_needed(&retry, aws, &o));
  assert_true(retry_call_ext_needed(&retry, limit, &o));
  o.stream = RETRY_STREAM_SERVER; /* streams count their messages in the ext */
  assert_true(retry_call_ext_needed(&retry, NULL, &o));
  o.stream = RETRY_STREAM_UNARY;
  o.stream_items = true; /* and so does a unary call whose replies may carry some */
  assert_true(retry_call_ext_needed(&retry, NULL, &o));
  o.stream_items = false;
  assert_false(retry_call_ext_needed(&retry, NULL, &o));
  o.trace = (retry_trace_fn)(uintptr_t)1; /* only compared with NULL here */
  assert_true(retry_call_ext_needed(&retry, NULL, &o));
  retry_target_destroy(plain);
  retry_target_destroy(envoy);
  retry_target_destroy(aws);
  retry_target_destroy(finagle);
  retry_target_destroy(limit);
}

/* A call that needs no ext decides exactly as the same call given one: every figure of
 * every call of a run of calls sharing a throttle and a breaker, with headers that commit,
 * deadlines, and jitter drawn from the same stream. */
static void test_call_without_ext_decides_as_with_one(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 4, 10, 100, 2.0, RETRY_JITTER_FULL);
  retry_status_set_add(&p.retryable, RETRY_SPACE_GRPC, RETRY_GRPC_RESOURCE_EXHAUSTED);
  p.idempotent_methods = kit_idempotent;
  p.n_idempotent_methods = 2;
  p.has_idempotent_allowlist = true;
  retry_target *lean = target_with(true, true, RETRY_BUDGET_NONE, false);
  retry_target *full = target_with(true, true, RETRY_BUDGET_NONE, false);
  test_rng rl, rf;
  int retried = 0, refused = 0;
  for (int i = 0; i < 60; i++) {
    static const int32_t second[4] = {RETRY_GRPC_RESOURCE_EXHAUSTED, RETRY_GRPC_OK,
                                      RETRY_GRPC_UNAVAILABLE, RETRY_GRPC_UNAVAILABLE};
    script_attempt steps[3] = {
        script_step(5 + i % 7, i % 3 == 0 ? RETRY_GRPC_OK : RETRY_GRPC_UNAVAILABLE),
        script_step(3, second[i % 4]), script_step(4, i % 2 ? RETRY_GRPC_OK : RETRY_GRPC_INTERNAL)};
    if (i % 6 == 5) steps[1].headers_at_ns = 1 * MS;
    retry_call_opts o =
        opts_make("/lab.Payments/Export", i % 9 == 0 ? (int64_t)i * S + 40 * MS : RETRY_NEVER);
    o.rng = test_rng_make(&rl, 100 + (uint64_t)i);
    assert_false(retry_call_ext_needed(&p, lean, &o));
    script_result a, b;
    assert_int_equal(script_run(&p, lean, &o, (int64_t)i * S, steps, 3, &a), 0);
    assert_null(a.call.ext);
    o.rng = test_rng_make(&rf, 100 + (uint64_t)i);
    o.ext = script_ext();
    assert_int_equal(script_run(&p, full, &o, (int64_t)i * S, steps, 3, &b), 0);
    assert_ptr_equal(b.call.ext, o.ext);
    assert_int_equal(a.status, b.status);
    assert_int_equal(a.reason, b.reason);
    assert_int_equal(a.end_ns, b.end_ns);
    assert_int_equal(a.attempts, b.attempts);
    assert_int_equal(a.cancelled, b.cancelled);
    assert_int_equal(a.stream_items, b.stream_items);
    assert_int_equal(a.stream_duplicates, b.stream_duplicates);
    assert_memory_equal(a.send_ns, b.send_ns, sizeof a.send_ns);
    assert_int_equal(retry_call_retries(&a.call), retry_call_retries(&b.call));
    assert_int_equal(a.call.backoff_total_ns, b.call.backoff_total_ns);
    retry_target_stats sa, sb;
    retry_target_stats_get(lean, a.end_ns, &sa);
    retry_target_stats_get(full, b.end_ns, &sb);
    assert_int_equal(sa.throttle_milli_tokens, sb.throttle_milli_tokens);
    assert_int_equal(sa.breaker, sb.breaker);
    assert_int_equal(sa.in_flight, sb.in_flight);
    if (a.attempts > 1) retried++;
    if (a.reason == RETRY_STOP_THROTTLED || a.reason == RETRY_STOP_BREAKER_OPEN) refused++;
  }
  assert_true(retried > 10); /* retries were exercised */
  assert_true(refused > 0);  /* and so were the throttle or the breaker */
  retry_target_destroy(lean);
  retry_target_destroy(full);
}

/* A retry policy may make more attempts than hedging's 64-bit mask holds (maxAttemptsLimit
 * lifts the cap to 1000): without an ext the one attempt in flight is the last one sent. */
static void test_call_without_ext_runs_past_64_attempts(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 1000, 1, 1, 1.0, RETRY_JITTER_NONE);
  retry_policy_set_max_attempts(&p, 200, 1000);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  int64_t now = 0;
  int sends = 0;
  while (d.action != RETRY_ACTION_DONE) {
    if (d.action == RETRY_ACTION_SEND) {
      sends++;
      assert_int_equal(d.attempt, sends);
      assert_int_equal(c.n_in_flight, 1);
      /* an attempt not in flight (the one before) changes nothing */
      if (sends > 1) {
        retry_outcome stale;
        retry_outcome_init(&stale, RETRY_GRPC_UNAVAILABLE);
        retry_call_on_outcome(&c, sends - 1, &stale, now, &d);
        assert_int_equal(d.action, RETRY_ACTION_WAIT);
        assert_int_equal(c.n_in_flight, 1);
      }
      retry_outcome out;
      retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
      now += MS;
      retry_call_on_outcome(&c, sends, &out, now, &d);
    } else {
      now = d.wake_ns;
      retry_call_wake(&c, now, &d);
    }
  }
  assert_int_equal(sends, 200);
  assert_int_equal(c.n_attempts, 200);
  assert_int_equal(c.n_in_flight, 0);
  assert_int_equal(c.reason, RETRY_STOP_MAX_ATTEMPTS);
}

/* {==================================================================
 * The call's size (issue 12) and what its packing costs nothing of
 * =================================================================== */

/* A call in flight of the world must stay within 256 bytes; the engine's part is 88. */
static void test_call_is_at_most_88_bytes_on_lp64(void **state) {
  (void)state;
  if (sizeof(void *) != 8) skip();
  assert_true(sizeof(retry_call) <= 88);
}

/* Fails every attempt of a started call at 1 ms each, waking at every backoff, until it is
 * done; returns the attempts sent. */
static int fail_until_done(retry_call *c, retry_decision *d) {
  int64_t now = 0;
  int sends = 0;
  while (d->action != RETRY_ACTION_DONE) {
    if (d->action == RETRY_ACTION_SEND) {
      sends++;
      assert_int_equal(d->attempt, sends);
      retry_outcome out;
      retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
      now += MS;
      retry_call_on_outcome(c, sends, &out, now, d);
    } else {
      now = d->wake_ns;
      retry_call_wake(c, now, d);
    }
  }
  return sends;
}

/* n_attempts is 16 bits: the largest max_attempts the engine allows is counted to its end, a
 * larger one is clamped to it by retry_policy_set_max_attempts, and one set past it by hand
 * stops there, with reason max_attempts either way. */
static void test_call_counts_up_to_the_largest_max_attempts(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 3, 1, 1, 1.0, RETRY_JITTER_NONE);
  retry_policy_set_max_attempts(&p, RETRY_CALL_MAX_ATTEMPTS, 0);
  assert_int_equal(p.max_attempts, 32767);
  retry_policy_set_max_attempts(&p, 100000, 0);
  assert_int_equal(p.max_attempts, RETRY_CALL_MAX_ATTEMPTS);
  assert_int_equal(p.max_attempts_configured, 100000);
  retry_policy_set_max_attempts(&p, 100000, 7);
  assert_int_equal(p.max_attempts, 7);

  int32_t by_hand[] = {RETRY_CALL_MAX_ATTEMPTS, 40000};
  for (size_t i = 0; i < sizeof by_hand / sizeof by_hand[0]; i++) {
    p.max_attempts = by_hand[i];
    retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
    retry_call c;
    retry_decision d;
    retry_call_start(&c, &p, NULL, &o, 0, &d);
    assert_int_equal(fail_until_done(&c, &d), RETRY_CALL_MAX_ATTEMPTS);
    assert_int_equal(c.n_attempts, RETRY_CALL_MAX_ATTEMPTS);
    assert_int_equal(retry_call_retries(&c), RETRY_CALL_MAX_ATTEMPTS - 1);
    assert_int_equal(c.n_in_flight, 0);
    assert_int_equal(c.reason, RETRY_STOP_MAX_ATTEMPTS);
    assert_int_equal(retry_call_status(&c), RETRY_GRPC_UNAVAILABLE);
    /* 32766 backoffs of 1 ms */
    assert_int_equal(c.backoff_total_ns, (int64_t)(RETRY_CALL_MAX_ATTEMPTS - 1) * MS);
  }
}

/* The final status shares the backoff state's storage: retry_call_status says -1 until the
 * call is done, however much backoff state it carries by then. */
static void test_call_status_is_minus_one_until_done(void **state) {
  (void)state;
  retry_policy p;
  grpc_policy(&p, 3, 100, 1000, 2.0, RETRY_JITTER_DECORRELATED);
  retry_call_opts o = opts_make("/svc/M", RETRY_NEVER);
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  assert_int_equal(retry_call_status(&c), -1);
  retry_outcome out;
  retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
  retry_call_on_outcome(&c, 1, &out, 10 * MS, &d);
  assert_int_equal(d.action, RETRY_ACTION_WAIT);
  assert_true(c.backoff_carried > 0.0); /* decorrelated: the delay it drew */
  assert_int_equal(retry_call_status(&c), -1);
  retry_call_wake(&c, d.wake_ns, &d);
  assert_int_equal(d.action, RETRY_ACTION_SEND);
  retry_outcome ok;
  retry_outcome_init(&ok, RETRY_GRPC_OK);
  retry_call_on_outcome(&c, 2, &ok, S, &d);
  assert_int_equal(d.action, RETRY_ACTION_DONE);
  assert_int_equal(retry_call_status(&c), RETRY_GRPC_OK);
  assert_int_equal(c.status, RETRY_GRPC_OK);
}

/* The call's packed backoff state (a 16-bit count and one carried double) draws what the full
 * retry_backoff_state draws, delays and nominal delays alike, for every jitter, across a
 * reset, with the nominal asked for or not (it is rebuilt for decorrelated and Polly v2). */
static void test_call_packed_backoff_draws_what_the_full_state_draws(void **state) {
  (void)state;
  const retry_jitter jitters[] = {RETRY_JITTER_PROPORTIONAL, RETRY_JITTER_FULL,
                                  RETRY_JITTER_EQUAL,        RETRY_JITTER_DECORRELATED,
                                  RETRY_JITTER_POLLY_V2,     RETRY_JITTER_NONE};
  const double mults[] = {2.0, 1.0, 0.5, 1.0001};
  for (size_t j = 0; j < sizeof jitters / sizeof jitters[0]; j++) {
    for (size_t m = 0; m < sizeof mults / sizeof mults[0]; m++) {
      for (int variant = 0; variant < 4; variant++) {
        retry_backoff b;
        memset(&b, 0, sizeof b);
        b.initial_ns = 100 * MS;
        b.max_ns = 2 * S;
        b.multiplier = mults[m];
        b.jitter = jitters[j];
        b.jitter_fraction = 0.2;
        b.cap_after_jitter = (variant & 1) != 0;
        b.first_delay_exact = (variant & 2) != 0;
        test_rng ra, rb;
        retry_rng rng_a = test_rng_make(&ra, 7 + j);
        retry_rng rng_b = test_rng_make(&rb, 7 + j);
        retry_backoff_state full;
        retry_backoff_state_reset(&full);
        uint16_t n = 0;
        double carried = 0.0;
        for (int k = 0; k < 1200; k++) {
          if (k == 40) { /* a pushback restarts the exponent */
            retry_backoff_state_reset(&full);
            n = 0;
            carried = 0.0;
          }
          bool want = k % 3 != 0;
          int64_t nom_a = -1, nom_b = -1;
          int64_t da = retry_backoff_next(&b, &full, &rng_a, &nom_a);
          int64_t db = retry__backoff_next_packed(&b, &n, &carried, &rng_b, want ? &nom_b : NULL);
          assert_int_equal(da, db);
          if (want) assert_int_equal(nom_a, nom_b);
          assert_int_equal(n, full.n_since_reset);
        }
        /* both streams drew the same number of values */
        assert_int_equal(test_rng_next(&ra), test_rng_next(&rb));
      }
    }
  }
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_call_retries_only_retryable_statuses_of_idempotent_methods),
      cmocka_unit_test(test_call_ext_needed_only_for_the_features_that_use_it),
      cmocka_unit_test(test_call_without_ext_decides_as_with_one),
      cmocka_unit_test(test_call_without_ext_runs_past_64_attempts),
      cmocka_unit_test(test_call_allowlisted_method_keeps_its_retries),
      cmocka_unit_test(test_call_deadline_spans_all_attempts),
      cmocka_unit_test(test_call_breaker_counts_attempts_not_calls),
      cmocka_unit_test(test_call_breaker_success_resets_the_failure_count),
      cmocka_unit_test(test_call_server_stream_not_retried_without_opt_in),
      cmocka_unit_test(test_call_opted_in_server_stream_replays_its_prefix),
      cmocka_unit_test(test_call_client_stream_never_retried),
      cmocka_unit_test(test_call_layered_retries_multiply_attempts),
      cmocka_unit_test(test_call_stops_at_success_max_attempts_or_fatal_status),
      cmocka_unit_test(test_call_throttle_stops_retries_at_half_the_tokens),
      cmocka_unit_test(test_call_hedge_answers_when_the_original_stalls),
      cmocka_unit_test(test_call_pushback_delays_exactly_and_the_deadline_still_stops),
      cmocka_unit_test(test_call_negative_pushback_stops_retries),
      cmocka_unit_test(test_call_unparseable_pushback_stops_and_costs_a_token),
      cmocka_unit_test(test_call_pushback_past_the_deadline_is_not_waited_for),
      cmocka_unit_test(test_call_pushback_replaces_backoff_and_resets_exponent),
      cmocka_unit_test(test_call_throttle_blocks_at_half_and_a_success_reopens),
      cmocka_unit_test(test_call_backoff_waits_stay_in_their_jitter_windows),
      cmocka_unit_test(test_call_every_refused_client_makes_max_attempts),
      cmocka_unit_test(test_call_http_5xx_class_retries_a_mapped_500),
      cmocka_unit_test(test_call_http_statuses_outside_the_retryable_set_are_not_retried),
      cmocka_unit_test(test_call_max_attempts_clamped_to_grpc_limit_of_five),
      cmocka_unit_test(test_call_per_attempt_timeout_bounded_by_deadline),
      cmocka_unit_test(test_call_headers_commit_so_no_retry),
      cmocka_unit_test(test_call_request_over_the_retry_buffer_commits),
      cmocka_unit_test(test_call_retry_after_seconds_replaces_backoff),
      cmocka_unit_test(test_call_retry_after_time_zero_is_a_time_and_never_means_none),
      cmocka_unit_test(test_call_stops_once_and_ignores_late_events),
      cmocka_unit_test(test_call_deadline_already_passed_sends_nothing),
      cmocka_unit_test(test_call_cancel_in_flight_ends_at_once_and_takes_no_token),
      cmocka_unit_test(test_call_cancel_in_backoff_gives_the_retry_slot_back),
      cmocka_unit_test(test_call_cancel_before_a_decided_later_end_ends_it_now),
      cmocka_unit_test(test_call_cancel_hedges_give_back_probes_and_http_says_499),
      cmocka_unit_test(test_call_cancel_is_traced_as_its_own_event),
      cmocka_unit_test(test_call_layers_worst_case_is_the_product_of_attempts),
      cmocka_unit_test(test_call_is_at_most_88_bytes_on_lp64),
      cmocka_unit_test(test_call_counts_up_to_the_largest_max_attempts),
      cmocka_unit_test(test_call_status_is_minus_one_until_done),
      cmocka_unit_test(test_call_packed_backoff_draws_what_the_full_state_draws),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
