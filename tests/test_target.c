/*
 * test_target.c: retry_target: creation, validation and allocation failure, the snapshot, and
 * every retry__target_* hook the call state machine uses (admission order, the draw of the
 * uniform, outcome recording, budgets, slots), including t == NULL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "retry/retry_int.h"
#include "tests/support/oom.h"

#define MS RETRY_NS_PER_MS
#define S RETRY_NS_PER_S

/* {==================================================================
 * Helpers
 * =================================================================== */

/* An RNG that returns a fixed value and counts how often it was asked. */
typedef struct fixed_rng {
  uint64_t value;
  int n_draws;
} fixed_rng;

static uint64_t fixed_next(void *ctx) {
  fixed_rng *r = ctx;
  r->n_draws++;
  return r->value;
}

static retry_rng rng_of(fixed_rng *r) {
  retry_rng g = {fixed_next, r};
  return g;
}

static retry_target *create_ok(const retry_target_config *cfg) {
  retry_error err;
  retry_error_clear(&err);
  retry_target *t = retry_target_create(cfg, 0, NULL, &err);
  if (t == NULL) print_error("create failed: %s: %s\n", err.path, err.message);
  assert_non_null(t);
  return t;
}

/* A config with every part present. */
static void config_all(retry_target_config *cfg, retry_budget_kind budget) {
  retry_target_config_init(cfg);
  cfg->has_throttle = true;
  cfg->throttle.max_milli_tokens = 10000;
  cfg->throttle.token_ratio_milli = 100;
  cfg->budget = budget;
  retry_aws_quota_config_init(&cfg->aws);
  retry_finagle_budget_config_init(&cfg->finagle);
  retry_envoy_budget_config_init(&cfg->envoy);
  cfg->has_adaptive = true;
  retry_adaptive_config_init(&cfg->adaptive);
  cfg->has_breaker = true;
  retry_breaker_config_init(&cfg->breaker, RETRY_BREAKER_TIME_WINDOW);
}

/* Sends one attempt through the hooks and reports its status; returns the admission. */
static retry_stop attempt(retry_target *t, int64_t now_ns, const retry_rng *rng, int32_t status) {
  retry_stop why = retry__target_admit(t, now_ns, rng);
  if (why != RETRY_STOP_NONE) return why;
  retry__target_attempt_sent(t, now_ns);
  retry__target_attempt_done(t, now_ns, RETRY_SPACE_GRPC, status, 0);
  return why;
}

/* }================================================================== */

/* {==================================================================
 * Lifecycle and validation
 * =================================================================== */

static void test_target_config_init_has_nothing(void **state) {
  (void)state;
  retry_target_config cfg;
  memset(&cfg, 0xff, sizeof cfg);
  retry_target_config_init(&cfg);
  assert_false(cfg.has_throttle);
  assert_int_equal(cfg.budget, RETRY_BUDGET_NONE);
  assert_false(cfg.has_adaptive);
  assert_false(cfg.has_breaker);
  retry_target *t = create_ok(&cfg);
  assert_null(retry_target_throttle(t));
  assert_null(retry_target_breaker(t));
  retry_target_destroy(t);
}

static void test_target_destroy_null_is_noop(void **state) {
  (void)state;
  retry_target_destroy(NULL);
}

static void test_target_create_copies_config(void **state) {
  (void)state;
  retry_target_config cfg;
  config_all(&cfg, RETRY_BUDGET_AWS);
  retry_target *t = create_ok(&cfg);
  memset(&cfg, 0, sizeof cfg); /* the caller may free its input at once */
  assert_int_equal(retry_target_throttle(t)->cfg.max_milli_tokens, 10000);
  assert_int_equal(retry_target_throttle(t)->milli_tokens, 10000);
  assert_int_equal(((const retry_aws_quota *)retry__target_budget(t))->available, 500);
  assert_non_null(retry_target_breaker(t));
  retry_target_destroy(t);
}

/* A target holds only what its config turns on: a gRPC throttle alone is 64 bytes, and the
 * adaptive throttler's history (1,600 bytes of bins) comes only with adaptive throttling. */
static void test_target_size_follows_the_parts(void **state) {
  (void)state;
  retry_target_config none, thr, all;
  retry_target_config_init(&none);
  retry_target_config_init(&thr);
  thr.has_throttle = true;
  thr.throttle.max_milli_tokens = 10000;
  thr.throttle.token_ratio_milli = 100;
  config_all(&all, RETRY_BUDGET_FINAGLE);
  size_t n0 = retry_target_size(&none), n1 = retry_target_size(&thr);
  size_t n2 = retry_target_size(&all);
  print_message("target bytes: none %zu, throttle %zu, everything %zu\n", n0, n1, n2);
  assert_true(n1 <= 64);
  assert_true(n0 < n1);
  assert_true(n2 >= n1 + sizeof(retry_adaptive) + sizeof(retry_finagle_budget));
  assert_int_equal(n0 % 8, 0);
  assert_int_equal(n2 % 8, 0);
  all.has_adaptive = false;
  assert_true(retry_target_size(&all) + sizeof(retry_adaptive) <= n2);
}

/* Two targets pointed at one throttle (C-core's one bucket per server name) drain it
 * together; the rest of each stays its own; a target given back its own throttle starts full;
 * a config change keeps the bucket's fraction of maxTokens, as C-core's replacement entry. */
static void test_target_share_throttle_drains_one_bucket(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_throttle = true;
  cfg.throttle.max_milli_tokens = 10000;
  cfg.throttle.token_ratio_milli = 100;
  retry_error err;
  retry_error_clear(&err);
  retry_target *a = retry_target_create(&cfg, 0, NULL, &err);
  retry_target *b = retry_target_create(&cfg, 0, NULL, &err);
  retry_target_config empty;
  retry_target_config_init(&empty);
  retry_target *none = retry_target_create(&empty, 0, NULL, &err);
  assert_non_null(none);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(retry_target_share_throttle(none, retry_target_throttle(a)), RETRY_EINVAL);
  retry_throttle *bucket = retry_target_throttle(a);
  assert_int_equal(retry_target_share_throttle(b, bucket), 0);
  assert_ptr_equal(retry_target_throttle(b), bucket);
  retry_throttle_record_failure(retry_target_throttle(a));
  retry_throttle_record_failure(retry_target_throttle(b));
  retry_target_stats sa, sb;
  retry_target_stats_get(a, 0, &sa);
  retry_target_stats_get(b, 0, &sb);
  assert_int_equal(sa.throttle_milli_tokens, 8000);
  assert_int_equal(sb.throttle_milli_tokens, 8000);
  /* A different config replaces the parameters; the count keeps its fraction (0.8 of 4). */
  retry_throttle_config small = {.max_milli_tokens = 4000, .token_ratio_milli = 100};
  retry_throttle_reconfigure(bucket, &small);
  assert_int_equal(bucket->milli_tokens, 3200);
  assert_int_equal(bucket->cfg.max_milli_tokens, 4000);
  retry_throttle_reconfigure(bucket, &small); /* the same config changes nothing */
  assert_int_equal(bucket->milli_tokens, 3200);
  /* b's own again: full, and a's failures no longer reach it. */
  assert_int_equal(retry_target_share_throttle(b, NULL), 0);
  assert_true(retry_target_throttle(b) != bucket);
  retry_throttle_record_failure(bucket);
  retry_target_stats_get(b, 0, &sb);
  assert_int_equal(sb.throttle_milli_tokens, 10000);
  retry_target_destroy(a);
  retry_target_destroy(b);
  retry_target_destroy(none);
}

/* Targets made in the caller's storage share one config by reference and keep their own
 * state; destroy frees the breaker and leaves the storage alone. */
static void test_target_init_shares_the_config(void **state) {
  (void)state;
  retry_target_config cfg;
  config_all(&cfg, RETRY_BUDGET_AWS);
  size_t n = retry_target_size(&cfg);
  assert_int_equal(n % 8, 0);
  int64_t *block = calloc(2, n); /* two targets back to back, as a fleet lays them out */
  assert_non_null(block);
  retry_error err;
  retry_error_clear(&err);
  retry_target *a = retry_target_init(block, n, &cfg, 0, NULL, &err);
  retry_target *b = retry_target_init((char *)block + n, n, &cfg, 0, NULL, &err);
  assert_ptr_equal(a, block);
  assert_non_null(b);
  assert_non_null(retry_target_breaker(a));
  assert_true(retry_target_breaker(a) != retry_target_breaker(b));
  /* One failure on a: b's throttle and quota are untouched. */
  assert_true(retry_throttle_record_failure(retry_target_throttle(a)));
  int32_t cost = 0;
  bool slot = false;
  assert_true(retry__target_budget_acquire(a, 0, false, &cost, &slot));
  assert_int_equal(retry_target_throttle(a)->milli_tokens, 9000);
  assert_int_equal(retry_target_throttle(b)->milli_tokens, 10000);
  retry_target_stats sa, sb;
  retry_target_stats_get(a, 0, &sa);
  retry_target_stats_get(b, 0, &sb);
  assert_int_equal(sa.budget_available, 495);
  assert_int_equal(sb.budget_available, 500);
  /* The config is borrowed, not copied: both point at the caller's. */
  assert_ptr_equal(a->cfg, &cfg);
  assert_ptr_equal(b->cfg, &cfg);
  retry_target_destroy(a);
  retry_target_destroy(b);
  free(block); /* the storage was never the targets' to free (valgrind checks) */
}

static void test_target_init_refuses_small_storage_and_bad_config(void **state) {
  (void)state;
  retry_target_config cfg;
  config_all(&cfg, RETRY_BUDGET_ENVOY);
  size_t n = retry_target_size(&cfg);
  int64_t *block = calloc(1, n);
  assert_non_null(block);
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_target_init(block, n - 8, &cfg, 0, NULL, &err));
  assert_int_equal(err.code, RETRY_EINVAL);
  assert_non_null(strstr(err.message, "retry_target_size"));
  retry_error_clear(&err);
  cfg.throttle.max_milli_tokens = 0;
  assert_null(retry_target_init(block, n, &cfg, 0, NULL, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, "throttle.max_milli_tokens");
  free(block);
}

/* Expects cfg to be refused with RETRY_ECONFIG at path, the message naming the field. */
static void expect_bad(const retry_target_config *cfg, const char *path) {
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_target_create(cfg, 0, NULL, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, path);
  assert_non_null(strstr(err.message, path));
  assert_null(retry_target_create(cfg, 0, NULL, NULL));
}

static void test_target_create_validates_throttle(void **state) {
  (void)state;
  retry_target_config c;
  config_all(&c, RETRY_BUDGET_NONE);
  c.throttle.max_milli_tokens = 0;
  expect_bad(&c, "throttle.max_milli_tokens");
  c.throttle.max_milli_tokens = 1000001;
  expect_bad(&c, "throttle.max_milli_tokens");
  c.throttle.max_milli_tokens = 1000000;
  c.throttle.token_ratio_milli = 0;
  expect_bad(&c, "throttle.token_ratio_milli");
  c.has_throttle = false; /* an absent part is not validated */
  retry_target_destroy(create_ok(&c));
}

static void test_target_create_validates_budgets(void **state) {
  (void)state;
  retry_target_config c;
  config_all(&c, RETRY_BUDGET_AWS);
  c.aws.retry_cost = 0;
  expect_bad(&c, "aws.retry_cost");
  config_all(&c, RETRY_BUDGET_AWS);
  c.aws.timeout_cost = -1;
  expect_bad(&c, "aws.timeout_cost");
  config_all(&c, RETRY_BUDGET_AWS);
  c.aws.capacity = -1;
  expect_bad(&c, "aws.capacity");
  config_all(&c, RETRY_BUDGET_AWS);
  c.aws.no_retry_increment = -1;
  expect_bad(&c, "aws.no_retry_increment");

  config_all(&c, RETRY_BUDGET_FINAGLE);
  c.finagle.ttl_ns = 999 * MS;
  expect_bad(&c, "finagle.ttl_ns");
  c.finagle.ttl_ns = 61 * S;
  expect_bad(&c, "finagle.ttl_ns");
  c.finagle.ttl_ns = 60 * S + 900 * MS; /* Finagle checks whole seconds: 60 */
  retry_target_destroy(create_ok(&c));
  config_all(&c, RETRY_BUDGET_FINAGLE);
  c.finagle.min_retries_per_sec = -1;
  expect_bad(&c, "finagle.min_retries_per_sec");
  config_all(&c, RETRY_BUDGET_FINAGLE);
  c.finagle.percent_can_retry = 1000.5;
  expect_bad(&c, "finagle.percent_can_retry");
  c.finagle.percent_can_retry = -0.1;
  expect_bad(&c, "finagle.percent_can_retry");
  config_all(&c, RETRY_BUDGET_FINAGLE);
  c.finagle.percent_can_retry = 0.001; /* withdrawal ~1e6: 10 * 10 s * 1e6 fits in 32 bits */
  retry_target_destroy(create_ok(&c));
  c.finagle.ttl_ns = 60 * S; /* 10 * 60 s * 1e6 = 6e8 still fits */
  retry_target_destroy(create_ok(&c));
  c.finagle.percent_can_retry = 0.0001; /* 10 * 60 s * 1e7 = 6e9 does not */
  expect_bad(&c, "finagle.min_retries_per_sec");

  config_all(&c, RETRY_BUDGET_ENVOY);
  c.envoy.budget_percent = 100.1;
  expect_bad(&c, "envoy.budget_percent");
  config_all(&c, RETRY_BUDGET_ENVOY);
  c.envoy.min_retry_concurrency = -1;
  expect_bad(&c, "envoy.min_retry_concurrency");

  config_all(&c, RETRY_BUDGET_NONE);
  c.budget = (retry_budget_kind)9;
  expect_bad(&c, "budget");
}

static void test_target_create_validates_adaptive(void **state) {
  (void)state;
  retry_target_config c;
  config_all(&c, RETRY_BUDGET_NONE);
  c.adaptive.k = 0.5;
  expect_bad(&c, "adaptive.k");
  config_all(&c, RETRY_BUDGET_NONE);
  c.adaptive.window_ns = 99;
  expect_bad(&c, "adaptive.window_ns");
  config_all(&c, RETRY_BUDGET_NONE);
  c.adaptive.padding = -1.0;
  expect_bad(&c, "adaptive.padding");
}

static void test_target_breaker_errors_reported_under_breaker(void **state) {
  (void)state;
  retry_target_config c;
  config_all(&c, RETRY_BUDGET_NONE);
  c.breaker.minimum_calls = 0;
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_target_create(&c, 0, NULL, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, "breaker.minimum_calls");
  assert_non_null(strstr(err.message, "breaker.minimum_calls"));
}

static void test_target_create_survives_every_allocation_failure(void **state) {
  (void)state;
  retry_target_config cfg;
  config_all(&cfg, RETRY_BUDGET_ENVOY);
  int failures = 0;
  for (long n = 0;; n++) {
    test_oom c;
    retry_allocator a = test_oom_allocator(&c, n);
    retry_error err;
    retry_error_clear(&err);
    retry_target *t = retry_target_create(&cfg, 0, &a, &err);
    if (t == NULL) {
      failures++;
      assert_int_equal(err.code, RETRY_ENOMEM);
      assert_int_equal(c.live, 0);
      continue;
    }
    /* Hooks never allocate. */
    fixed_rng r = {0, 0};
    retry_rng g = rng_of(&r);
    long before = c.n_calls;
    for (int i = 0; i < 200; i++) {
      int32_t cost;
      bool slot;
      attempt(t, i * 10 * MS, &g, i % 4 ? RETRY_GRPC_OK : RETRY_GRPC_UNAVAILABLE);
      if (retry__target_budget_acquire(t, i * 10 * MS, false, &cost, &slot))
        retry__target_budget_release(t);
    }
    retry_target_stats s;
    retry_target_stats_get(t, 3 * S, &s);
    assert_int_equal(c.n_calls, before);
    retry_target_destroy(t);
    assert_int_equal(c.live, 0);
    break;
  }
  assert_int_equal(failures, 2); /* the target, then its breaker */
}

/* }================================================================== */

/* {==================================================================
 * Hooks
 * =================================================================== */

static void test_target_hooks_accept_null_as_no_shared_state(void **state) {
  (void)state;
  fixed_rng r = {0, 0};
  retry_rng g = rng_of(&r);
  assert_int_equal(retry__target_admit(NULL, 0, &g), RETRY_STOP_NONE);
  retry__target_call_started(NULL, 0);
  retry__target_attempt_sent(NULL, 0);
  retry__target_attempt_done(NULL, 0, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE, 5);
  int32_t cost = 77;
  bool slot = true;
  assert_true(retry__target_budget_acquire(NULL, 0, true, &cost, &slot));
  assert_int_equal(cost, 0);
  assert_false(slot);
  retry__target_budget_release(NULL);
  assert_int_equal(r.n_draws, 0);
  assert_null(retry_target_throttle(NULL));
  assert_null(retry_target_breaker(NULL));
  retry_target_stats s;
  retry_target_stats_get(NULL, 0, &s);
  assert_int_equal(s.throttle_milli_tokens, -1);
  assert_int_equal(s.budget_available, -1);
  assert_true(s.adaptive_reject_p == -1.0);
  assert_int_equal(s.breaker, RETRY_BREAKER_CLOSED);
}

static void test_target_admit_draws_uniform_only_when_probability_positive(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_adaptive = true;
  retry_adaptive_config_init(&cfg.adaptive);
  retry_target *t = create_ok(&cfg);
  fixed_rng r = {UINT64_MAX, 0}; /* u close to 1: admits whenever P < 1 */
  retry_rng g = rng_of(&r);
  /* P = 0 on an empty window: admitted, no draw. A request in flight does not count. */
  assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_NONE);
  assert_int_equal(r.n_draws, 0);
  assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_NONE);
  assert_int_equal(r.n_draws, 0);
  /* One response that was not accepted: P = 1/2 > 0, so the next admission draws once. */
  retry_adaptive_record_response(retry__target_adaptive(t), 0, false);
  assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_NONE);
  assert_int_equal(r.n_draws, 1);
  /* Accepts bring P back to 0: no draw again. */
  for (int i = 0; i < 3; i++)
    retry_adaptive_record_response(retry__target_adaptive(t), 0, true);
  assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_NONE);
  assert_int_equal(r.n_draws, 1);
  retry_target_destroy(t);
}

static void test_target_admit_adaptive_rejection_counts_and_stops_throttled(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_adaptive = true;
  retry_adaptive_config_init(&cfg.adaptive);
  retry_target *t = create_ok(&cfg);
  fixed_rng r = {0, 0}; /* u = 0: rejects whenever P > 0 */
  retry_rng g = rng_of(&r);
  assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_NONE);
  /* Its response was a refusal: P = 1/2, and u = 0 rejects the next two. */
  retry_adaptive_record_response(retry__target_adaptive(t), 0, false);
  assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_THROTTLED);
  assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_THROTTLED);
  /* The rejected ones are requests too: 3 requests, 0 accepts. */
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_true(s.adaptive_reject_p == 3.0 / 4.0);
  retry_target_destroy(t);
}

static void test_target_admit_adaptive_before_breaker(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_adaptive = true;
  retry_adaptive_config_init(&cfg.adaptive);
  cfg.has_breaker = true;
  retry_breaker_config_init(&cfg.breaker, RETRY_BREAKER_CONSECUTIVE);
  cfg.breaker.failure_threshold = 1;
  cfg.breaker.open_duration_ns = 1 * S;
  retry_target *t = create_ok(&cfg);
  fixed_rng r = {0, 0};
  retry_rng g = rng_of(&r);
  /* One failing attempt opens the breaker (UNAVAILABLE is also "not accepted"). */
  assert_int_equal(attempt(t, 0, &g, RETRY_GRPC_UNAVAILABLE), RETRY_STOP_NONE);
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_OPEN);
  /* After the wait the breaker would give its only probe, but adaptive throttling (P = 1/2,
   * u = 0) refuses first, so the probe is not consumed. */
  assert_int_equal(retry__target_admit(t, 2 * S, &g), RETRY_STOP_THROTTLED);
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_OPEN);
  assert_true(retry_breaker_allow(t->breaker, 2 * S));
  retry_target_destroy(t);
}

static void test_target_admit_breaker_open(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_breaker = true;
  retry_breaker_config_init(&cfg.breaker, RETRY_BREAKER_CONSECUTIVE);
  cfg.breaker.failure_threshold = 2;
  retry_target *t = create_ok(&cfg);
  fixed_rng r = {0, 0};
  retry_rng g = rng_of(&r);
  /* Seed 000: threshold 2 under 3 attempts, all UNAVAILABLE: the third is refused. */
  int sent = 0;
  retry_stop why = RETRY_STOP_NONE;
  for (int k = 1; k <= 3 && why == RETRY_STOP_NONE; k++) {
    why = attempt(t, k * MS, &g, RETRY_GRPC_UNAVAILABLE);
    if (why == RETRY_STOP_NONE) sent++;
  }
  assert_int_equal(sent, 2);
  assert_int_equal(why, RETRY_STOP_BREAKER_OPEN);
  assert_int_equal(r.n_draws, 0);
  retry_target_destroy(t);
}

static void test_target_attempt_done_records_breaker_by_status(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_breaker = true;
  retry_breaker_config_init(&cfg.breaker, RETRY_BREAKER_CONSECUTIVE);
  cfg.breaker.failure_threshold = 2;
  retry_target *t = create_ok(&cfg);
  /* UNAVAILABLE is a failure, NOT_FOUND neither (no reset), OK a success (reset). */
  assert_int_equal(attempt(t, 0, NULL, RETRY_GRPC_UNAVAILABLE), RETRY_STOP_NONE);
  assert_int_equal(attempt(t, 0, NULL, RETRY_GRPC_NOT_FOUND), RETRY_STOP_NONE);
  assert_int_equal(attempt(t, 0, NULL, RETRY_GRPC_OK), RETRY_STOP_NONE);
  assert_int_equal(attempt(t, 0, NULL, RETRY_GRPC_UNAVAILABLE), RETRY_STOP_NONE);
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_CLOSED);
  assert_int_equal(attempt(t, 0, NULL, RETRY_GRPC_NOT_FOUND), RETRY_STOP_NONE);
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_CLOSED);
  assert_int_equal(attempt(t, 0, NULL, RETRY_GRPC_DEADLINE_EXCEEDED), RETRY_STOP_NONE);
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_OPEN);
  retry_target_destroy(t);
}

static void test_target_probe_with_neither_status_gives_permit_back(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_breaker = true;
  retry_breaker_config_init(&cfg.breaker, RETRY_BREAKER_CONSECUTIVE);
  cfg.breaker.failure_threshold = 1;
  cfg.breaker.open_duration_ns = 1 * S;
  retry_target *t = create_ok(&cfg);
  attempt(t, 0, NULL, RETRY_GRPC_INTERNAL);
  /* The only probe answers NOT_FOUND: neither failure nor success. Without the permit coming
   * back the breaker would stay half-open and refuse everything for ever. */
  assert_int_equal(attempt(t, 2 * S, NULL, RETRY_GRPC_NOT_FOUND), RETRY_STOP_NONE);
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_HALF_OPEN);
  assert_int_equal(attempt(t, 2 * S, NULL, RETRY_GRPC_OK), RETRY_STOP_NONE);
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_CLOSED);
  retry_target_destroy(t);
}

static void test_target_http_space_statuses(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_breaker = true;
  retry_breaker_config_init(&cfg.breaker, RETRY_BREAKER_CONSECUTIVE);
  cfg.breaker.failure_threshold = 2;
  cfg.has_adaptive = true;
  retry_adaptive_config_init(&cfg.adaptive);
  retry_target *t = create_ok(&cfg);
  fixed_rng r = {UINT64_MAX, 0};
  retry_rng g = rng_of(&r);
  const int32_t statuses[] = {503, 204, 502, 429};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(retry__target_admit(t, 0, &g), RETRY_STOP_NONE);
    retry__target_attempt_sent(t, 0);
    retry__target_attempt_done(t, 0, RETRY_SPACE_HTTP, statuses[i], 0);
  }
  /* 503 fail, 204 success (any 2xx), 502 fail, 429 neither: still closed at 1 in a row. */
  assert_int_equal(retry_breaker_state_get(t->breaker), RETRY_BREAKER_CLOSED);
  /* Accepts: 204 and 502 (503 and 429 are rejections): 4 requests - 2 * 2 = 0. */
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_true(s.adaptive_reject_p == 0.0);
  retry_target_destroy(t);
}

static void test_target_attempt_done_throttle_success_only_on_ok(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_throttle = true;
  cfg.throttle.max_milli_tokens = 10000;
  cfg.throttle.token_ratio_milli = 100;
  retry_target *t = create_ok(&cfg);
  retry_throttle *th = retry_target_throttle(t);
  assert_non_null(th);
  retry_throttle_record_failure(th);           /* as retry_call does for a retryable failure */
  attempt(t, 0, NULL, RETRY_GRPC_UNAVAILABLE); /* the target itself never records failures */
  assert_int_equal(th->milli_tokens, 9000);
  attempt(t, 0, NULL, RETRY_GRPC_OK);
  assert_int_equal(th->milli_tokens, 9100);
  retry_target_destroy(t);
}

static void test_target_aws_costs_and_refunds_through_hooks(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.budget = RETRY_BUDGET_AWS;
  retry_aws_quota_config_init(&cfg.aws);
  retry_target *t = create_ok(&cfg);
  int32_t cost = 0;
  bool slot = true;
  assert_true(retry__target_budget_acquire(t, 0, false, &cost, &slot));
  assert_int_equal(cost, 5);
  assert_false(slot);
  assert_true(retry__target_budget_acquire(t, 0, true, &cost, &slot));
  assert_int_equal(cost, 10);
  assert_int_equal(((retry_aws_quota *)retry__target_budget(t))->available, 485);
  /* The timeout retry fails (no refund), then the other one succeeds (refund 5). */
  retry__target_attempt_sent(t, 0);
  retry__target_attempt_done(t, 0, RETRY_SPACE_GRPC, RETRY_GRPC_DEADLINE_EXCEEDED, 10);
  assert_int_equal(((retry_aws_quota *)retry__target_budget(t))->available, 485);
  retry__target_attempt_sent(t, 0);
  retry__target_attempt_done(t, 0, RETRY_SPACE_GRPC, RETRY_GRPC_OK, 5);
  assert_int_equal(((retry_aws_quota *)retry__target_budget(t))->available, 490);
  /* A first attempt that succeeds adds the no-retry increment. */
  retry__target_attempt_sent(t, 0);
  retry__target_attempt_done(t, 0, RETRY_SPACE_GRPC, RETRY_GRPC_OK, 0);
  assert_int_equal(((retry_aws_quota *)retry__target_budget(t))->available, 491);
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.budget_available, 491);
  /* Drained: refused, nothing taken. */
  ((retry_aws_quota *)retry__target_budget(t))->available = 4;
  cost = 99;
  assert_false(retry__target_budget_acquire(t, 0, false, &cost, &slot));
  assert_int_equal(cost, 0);
  assert_int_equal(((retry_aws_quota *)retry__target_budget(t))->available, 4);
  retry_target_destroy(t);
}

static void test_target_finagle_deposit_per_call_not_per_attempt(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.budget = RETRY_BUDGET_FINAGLE;
  retry_finagle_budget_config_init(&cfg.finagle);
  retry_target *t = create_ok(&cfg);
  for (int i = 0; i < 10; i++) {
    retry__target_call_started(t, 0);
    attempt(t, 0, NULL, RETRY_GRPC_UNAVAILABLE);
  }
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.budget_available, 102);
  int granted = 0;
  int32_t cost;
  bool slot;
  while (retry__target_budget_acquire(t, 0, false, &cost, &slot))
    granted++;
  assert_int_equal(granted, 102);
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.budget_available, 0);
  retry_target_destroy(t);
}

static void test_target_finagle_negative_balance_reported_as_zero(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.budget = RETRY_BUDGET_FINAGLE;
  cfg.finagle.ttl_ns = 10 * S;
  cfg.finagle.min_retries_per_sec = 1;
  cfg.finagle.percent_can_retry = 1.0;
  retry_target *t = create_ok(&cfg);
  for (int i = 0; i < 5; i++)
    retry__target_call_started(t, 0);
  int32_t cost;
  bool slot;
  while (retry__target_budget_acquire(t, 5 * S, false, &cost, &slot)) {
  }
  retry_finagle_budget_advance((retry_finagle_budget *)retry__target_budget(t), 10 * S);
  assert_int_equal(retry_finagle_budget_balance((retry_finagle_budget *)retry__target_budget(t)),
                   -5);
  retry_target_stats s;
  retry_target_stats_get(t, 10 * S, &s);
  assert_int_equal(s.budget_available, 0);
  retry_target_destroy(t);
}

static void test_target_envoy_slot_held_until_released(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.budget = RETRY_BUDGET_ENVOY;
  retry_envoy_budget_config_init(&cfg.envoy); /* 20 %, min 3 */
  retry_target *t = create_ok(&cfg);
  for (int i = 0; i < 20; i++)
    retry__target_attempt_sent(t, 0); /* 20 active: limit 4 */
  assert_int_equal(((retry_envoy_budget *)retry__target_budget(t))->active_requests, 20);
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.budget_available, 4);
  assert_int_equal(s.in_flight, 20);
  int32_t cost = 9;
  bool slot = false;
  for (int i = 0; i < 4; i++) {
    assert_true(retry__target_budget_acquire(t, 0, false, &cost, &slot));
    assert_true(slot);
    assert_int_equal(cost, 0);
  }
  assert_false(retry__target_budget_acquire(t, 0, false, &cost, &slot));
  assert_false(slot);
  /* Attempts ending do not free a slot; only the release does. */
  retry__target_attempt_done(t, 0, RETRY_SPACE_GRPC, RETRY_GRPC_OK, 0);
  assert_int_equal(((retry_envoy_budget *)retry__target_budget(t))->active_requests,
                   19); /* limit 3.8 -> 3, 4 held */
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.budget_available, 0);
  retry__target_budget_release(t);
  retry__target_budget_release(t);
  assert_int_equal(((retry_envoy_budget *)retry__target_budget(t))->active_retries, 2);
  assert_true(retry__target_budget_acquire(t, 0, false, &cost, &slot));
  retry_target_destroy(t);
}

static void test_target_in_flight_counts_attempts(void **state) {
  (void)state;
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  retry_target *t = create_ok(&cfg);
  retry__target_attempt_sent(t, 0);
  retry__target_attempt_sent(t, 0);
  retry__target_attempt_done(t, 0, RETRY_SPACE_GRPC, RETRY_GRPC_OK, 0);
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.in_flight, 1);
  assert_int_equal(s.throttle_milli_tokens, -1);
  assert_int_equal(s.budget_available, -1);
  assert_true(s.adaptive_reject_p == -1.0);
  assert_int_equal(s.breaker, RETRY_BREAKER_CLOSED);
  assert_int_equal(s.breaker_opened, 0);
  retry_target_destroy(t);
}

static void test_target_stats_snapshot_of_every_part(void **state) {
  (void)state;
  retry_target_config cfg;
  config_all(&cfg, RETRY_BUDGET_AWS);
  cfg.breaker.kind = RETRY_BREAKER_CONSECUTIVE;
  cfg.breaker.failure_threshold = 1;
  retry_target *t = create_ok(&cfg);
  fixed_rng r = {UINT64_MAX, 0};
  retry_rng g = rng_of(&r);
  retry_throttle_record_failure(retry_target_throttle(t));
  assert_int_equal(attempt(t, 0, &g, RETRY_GRPC_UNAVAILABLE), RETRY_STOP_NONE);
  int32_t cost;
  bool slot;
  assert_true(retry__target_budget_acquire(t, 0, false, &cost, &slot));
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s);
  assert_int_equal(s.throttle_milli_tokens, 9000);
  assert_int_equal(s.budget_available, 495);
  assert_true(s.adaptive_reject_p == 0.5); /* 1 request, 0 accepts, padding 1 */
  assert_int_equal(s.breaker, RETRY_BREAKER_OPEN);
  assert_int_equal(s.breaker_opened, 1);
  assert_int_equal(s.in_flight, 0);
  retry_target_destroy(t);
}

/* }================================================================== */

/* The reads behind retry_target_stats_get give, at any later time, what the part's own next
 * decision would see after rolling its window, without rolling it: the Finagle balance (whose
 * unaligned roll would otherwise restart its slice at the read) and the adaptive probability
 * with the expired bins left out. */
static void test_target_reads_at_a_later_time_change_nothing(void **state) {
  (void)state;
  const int64_t sec = RETRY_NS_PER_S, ms = RETRY_NS_PER_MS;
  retry_finagle_budget_config fc;
  memset(&fc, 0, sizeof fc); /* its padding is copied into the budget */
  retry_finagle_budget_config_init(&fc);
  fc.ttl_ns = 2 * sec;
  fc.min_retries_per_sec = 0;
  fc.percent_can_retry = 1.0;
  /* Zeroed first and copied with memcpy, so that the byte comparisons below also compare
   * initialised padding (valgrind checks that). */
  retry_finagle_budget fb;
  memset(&fb, 0, sizeof fb);
  retry_finagle_budget_init(&fb, &fc, 0);
  retry_adaptive_config ac;
  memset(&ac, 0, sizeof ac);
  retry_adaptive_config_init(&ac);
  ac.window_ns = 1 * sec;
  retry_adaptive ad;
  memset(&ad, 0, sizeof ad);
  retry_adaptive_init(&ad, &ac, 0);
  for (int64_t t = 0; t < 3 * sec; t += 37 * ms) {
    retry_finagle_budget_deposit(&fb, t);
    retry_adaptive_record_response(&ad, t, (t / ms) % 3 != 0);
  }
  for (int64_t t = 3 * sec; t < 7 * sec; t += 90 * ms) {
    retry_finagle_budget before, rolled;
    memcpy(&before, &fb, sizeof fb);
    memcpy(&rolled, &fb, sizeof fb);
    retry_finagle_budget_advance(&rolled, t);
    assert_int_equal(retry__finagle_balance_at(&fb, t), retry_finagle_budget_balance(&rolled));
    assert_memory_equal(&before, &fb, sizeof fb);
    retry_adaptive abefore, arolled;
    memcpy(&abefore, &ad, sizeof ad);
    memcpy(&arolled, &ad, sizeof ad);
    retry_adaptive_advance(&arolled, t);
    assert_true(retry__adaptive_probability_at(&ad, t) ==
                retry_adaptive_reject_probability(&arolled));
    assert_memory_equal(&abefore, &ad, sizeof ad);
  }
  /* Long after everything expired, both read as empty windows. */
  assert_int_equal(retry__finagle_balance_at(&fb, 100 * sec), 0);
  assert_true(retry__adaptive_probability_at(&ad, 100 * sec) == 0.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_target_config_init_has_nothing),
      cmocka_unit_test(test_target_destroy_null_is_noop),
      cmocka_unit_test(test_target_create_copies_config),
      cmocka_unit_test(test_target_size_follows_the_parts),
      cmocka_unit_test(test_target_init_shares_the_config),
      cmocka_unit_test(test_target_init_refuses_small_storage_and_bad_config),
      cmocka_unit_test(test_target_create_validates_throttle),
      cmocka_unit_test(test_target_create_validates_budgets),
      cmocka_unit_test(test_target_create_validates_adaptive),
      cmocka_unit_test(test_target_breaker_errors_reported_under_breaker),
      cmocka_unit_test(test_target_create_survives_every_allocation_failure),
      cmocka_unit_test(test_target_hooks_accept_null_as_no_shared_state),
      cmocka_unit_test(test_target_admit_draws_uniform_only_when_probability_positive),
      cmocka_unit_test(test_target_admit_adaptive_rejection_counts_and_stops_throttled),
      cmocka_unit_test(test_target_admit_adaptive_before_breaker),
      cmocka_unit_test(test_target_admit_breaker_open),
      cmocka_unit_test(test_target_attempt_done_records_breaker_by_status),
      cmocka_unit_test(test_target_probe_with_neither_status_gives_permit_back),
      cmocka_unit_test(test_target_http_space_statuses),
      cmocka_unit_test(test_target_attempt_done_throttle_success_only_on_ok),
      cmocka_unit_test(test_target_aws_costs_and_refunds_through_hooks),
      cmocka_unit_test(test_target_finagle_deposit_per_call_not_per_attempt),
      cmocka_unit_test(test_target_finagle_negative_balance_reported_as_zero),
      cmocka_unit_test(test_target_envoy_slot_held_until_released),
      cmocka_unit_test(test_target_in_flight_counts_attempts),
      cmocka_unit_test(test_target_stats_snapshot_of_every_part),
      cmocka_unit_test(test_target_reads_at_a_later_time_change_nothing),
      cmocka_unit_test(test_target_share_throttle_drains_one_bucket),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
