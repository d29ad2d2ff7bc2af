/*
 * test_breaker.c: circuit breakers: consecutive failures (seed 000's rows), resilience4j's
 * count and time windows, OPEN -> HALF_OPEN timing, probes, validation and allocation failure.
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

static retry_breaker *consecutive(int32_t threshold, int64_t open_ns, int32_t probes) {
  retry_breaker_config cfg;
  retry_breaker_config_init(&cfg, RETRY_BREAKER_CONSECUTIVE);
  cfg.failure_threshold = threshold;
  cfg.open_duration_ns = open_ns;
  cfg.half_open_calls = probes;
  retry_breaker *b = retry_breaker_create(&cfg, NULL, NULL);
  assert_non_null(b);
  return b;
}

static retry_breaker *windowed(retry_breaker_kind kind, int32_t size, int32_t minimum, double rate,
                               int32_t probes) {
  retry_breaker_config cfg;
  retry_breaker_config_init(&cfg, kind);
  cfg.window_size = size;
  cfg.minimum_calls = minimum;
  cfg.failure_rate_threshold = rate;
  cfg.half_open_calls = probes;
  cfg.open_duration_ns = 10 * S;
  retry_breaker *b = retry_breaker_create(&cfg, NULL, NULL);
  assert_non_null(b);
  return b;
}

/* One admitted call with the given result; fails the test if the breaker refuses it. */
static void call(retry_breaker *b, int64_t now_ns, bool failure) {
  assert_true(retry_breaker_allow(b, now_ns));
  retry_breaker_record(b, now_ns, failure);
}

/* Records a string of outcomes ("FFS": failure, failure, success) at one time. */
static void calls(retry_breaker *b, int64_t now_ns, const char *outcomes) {
  for (const char *p = outcomes; *p; p++)
    call(b, now_ns, *p == 'F');
}

/* }================================================================== */

/* {==================================================================
 * Defaults and validation
 * =================================================================== */

static void test_breaker_consecutive_defaults_five_failures_30s_one_probe(void **state) {
  (void)state;
  retry_breaker_config cfg;
  retry_breaker_config_init(&cfg, RETRY_BREAKER_CONSECUTIVE);
  assert_int_equal(cfg.kind, RETRY_BREAKER_CONSECUTIVE);
  assert_int_equal(cfg.failure_threshold, 5);
  assert_int_equal(cfg.open_duration_ns, 30 * S);
  assert_int_equal(cfg.half_open_calls, 1);
}

static void test_breaker_defaults_windows_are_resilience4j(void **state) {
  (void)state;
  retry_breaker_kind kinds[] = {RETRY_BREAKER_COUNT_WINDOW, RETRY_BREAKER_TIME_WINDOW};
  for (size_t i = 0; i < 2; i++) {
    retry_breaker_config cfg;
    retry_breaker_config_init(&cfg, kinds[i]);
    assert_int_equal(cfg.kind, kinds[i]);
    assert_true(cfg.failure_rate_threshold == 50.0);
    assert_int_equal(cfg.window_size, 100);
    assert_int_equal(cfg.minimum_calls, 100);
    assert_int_equal(cfg.open_duration_ns, 60 * S);
    assert_int_equal(cfg.half_open_calls, 10);
  }
}

static void test_breaker_default_failure_statuses_are_server_side(void **state) {
  (void)state;
  retry_breaker_config cfg;
  retry_breaker_config_init(&cfg, RETRY_BREAKER_CONSECUTIVE);
  const retry_status_set *f = &cfg.failure_statuses;
  const int yes[] = {
      RETRY_GRPC_UNKNOWN,  RETRY_GRPC_DEADLINE_EXCEEDED, RETRY_GRPC_RESOURCE_EXHAUSTED,
      RETRY_GRPC_INTERNAL, RETRY_GRPC_UNAVAILABLE,       RETRY_GRPC_DATA_LOSS};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
    assert_true(retry_status_set_has(f, RETRY_SPACE_GRPC, yes[i]));
  for (int c = 0; c < RETRY_GRPC_N_CODES; c++) {
    bool listed = false;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
      listed = listed || yes[i] == c;
    assert_int_equal(retry_status_set_has(f, RETRY_SPACE_GRPC, c), listed);
  }
  assert_true(retry_status_set_has(f, RETRY_SPACE_HTTP, 500));
  assert_true(retry_status_set_has(f, RETRY_SPACE_HTTP, 599));
  assert_false(retry_status_set_has(f, RETRY_SPACE_HTTP, 429));
  assert_false(retry_status_set_has(f, RETRY_SPACE_HTTP, 200));
}

/* Expects create to refuse cfg with RETRY_ECONFIG at path, the message naming the field. */
static void expect_bad(const retry_breaker_config *cfg, const char *path) {
  retry_error err;
  retry_error_clear(&err);
  assert_null(retry_breaker_create(cfg, NULL, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, path);
  assert_non_null(strstr(err.message, path));
  assert_null(retry_breaker_create(cfg, NULL, NULL)); /* err may be NULL */
}

static void test_breaker_create_validates_each_field(void **state) {
  (void)state;
  retry_breaker_config c;
  retry_breaker_config_init(&c, RETRY_BREAKER_CONSECUTIVE);
  c.failure_threshold = 0;
  expect_bad(&c, "failure_threshold");
  retry_breaker_config_init(&c, RETRY_BREAKER_CONSECUTIVE);
  c.open_duration_ns = 0;
  expect_bad(&c, "open_duration_ns");
  retry_breaker_config_init(&c, RETRY_BREAKER_CONSECUTIVE);
  c.half_open_calls = 0;
  expect_bad(&c, "half_open_calls");
  retry_breaker_config_init(&c, RETRY_BREAKER_COUNT_WINDOW);
  c.failure_rate_threshold = 0.0;
  expect_bad(&c, "failure_rate_threshold");
  c.failure_rate_threshold = 100.5;
  expect_bad(&c, "failure_rate_threshold");
  retry_breaker_config_init(&c, RETRY_BREAKER_TIME_WINDOW);
  c.window_size = 0;
  expect_bad(&c, "window_size");
  retry_breaker_config_init(&c, RETRY_BREAKER_COUNT_WINDOW);
  c.minimum_calls = 0;
  expect_bad(&c, "minimum_calls");
  retry_breaker_config_init(&c, RETRY_BREAKER_COUNT_WINDOW);
  c.kind = (retry_breaker_kind)7;
  expect_bad(&c, "kind");
}

static void test_breaker_consecutive_ignores_window_fields(void **state) {
  (void)state;
  retry_breaker_config c;
  retry_breaker_config_init(&c, RETRY_BREAKER_CONSECUTIVE);
  c.window_size = 0;
  c.minimum_calls = 0;
  c.failure_rate_threshold = 0.0;
  retry_breaker *b = retry_breaker_create(&c, NULL, NULL);
  assert_non_null(b);
  retry_breaker_destroy(b);
}

static void test_breaker_create_survives_every_allocation_failure(void **state) {
  (void)state;
  retry_breaker_kind kinds[] = {RETRY_BREAKER_CONSECUTIVE, RETRY_BREAKER_COUNT_WINDOW,
                                RETRY_BREAKER_TIME_WINDOW};
  for (size_t k = 0; k < 3; k++) {
    retry_breaker_config cfg;
    retry_breaker_config_init(&cfg, kinds[k]);
    for (long n = 0;; n++) {
      test_oom c;
      retry_allocator a = test_oom_allocator(&c, n);
      retry_error err;
      retry_error_clear(&err);
      retry_breaker *b = retry_breaker_create(&cfg, &a, &err);
      if (b == NULL) {
        assert_int_equal(err.code, RETRY_ENOMEM);
        assert_int_equal(c.live, 0);
        continue;
      }
      assert_int_equal(err.code, RETRY_OK);
      /* The decision path allocates nothing. */
      long before = c.n_calls;
      for (int i = 0; i < 300; i++) {
        if (retry_breaker_allow(b, i * S)) retry_breaker_record(b, i * S, i % 3 == 0);
      }
      assert_int_equal(c.n_calls, before);
      retry_breaker_destroy(b);
      assert_int_equal(c.live, 0);
      break;
    }
  }
}

static void test_breaker_destroy_null_is_noop(void **state) {
  (void)state;
  retry_breaker_destroy(NULL);
}

/* }================================================================== */

/* {==================================================================
 * Consecutive failures
 * =================================================================== */

static void test_breaker_consecutive_opens_after_threshold_failures_in_a_row(void **state) {
  (void)state;
  retry_breaker *b = consecutive(3, 30 * S, 1);
  calls(b, 0, "FF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 0, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  assert_int_equal(retry_breaker_n_opened(b), 1);
  assert_false(retry_breaker_allow(b, 1 * S));
  retry_breaker_destroy(b);
}

static void test_breaker_consecutive_success_resets_count(void **state) {
  (void)state;
  retry_breaker *b = consecutive(3, 30 * S, 1);
  calls(b, 0, "FFSFFSFF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 0, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

/* seed 000: fail_threshold 2 under max_attempts 3 */
static void test_breaker_consecutive_threshold_two_refuses_the_third_attempt(void **state) {
  (void)state;
  /* fail_threshold=2 under max_attempts=3, every attempt failing: the breaker sees each attempt;
   * two failures open it and the third attempt is refused before it is sent. */
  retry_breaker *b = consecutive(2, 30 * S, 1);
  int attempts = 0;
  bool refused = false;
  for (int k = 1; k <= 3; k++) {
    int64_t now = k * 100 * MS;
    if (!retry_breaker_allow(b, now)) {
      refused = true;
      break;
    }
    attempts++;
    retry_breaker_record(b, now + 10 * MS, true);
  }
  assert_int_equal(attempts, 2);
  assert_true(refused);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

/* seed 000: the recoverable call */
static void test_breaker_consecutive_success_after_a_failure_resets_to_zero(void **state) {
  (void)state;
  /* First attempt fails, the second succeeds: the count is back to 0, so one more failure does
   * not open a threshold-2 breaker (a count of 1 left over would). */
  retry_breaker *b = consecutive(2, 30 * S, 1);
  calls(b, 0, "FS");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 1 * S, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  assert_int_equal(retry_breaker_n_opened(b), 0);
  retry_breaker_destroy(b);
}

static void test_breaker_half_open_lazily_strictly_after_open_duration(void **state) {
  (void)state;
  retry_breaker *b = consecutive(1, 30 * S, 1);
  call(b, 5 * S, true); /* open until 35 s */
  assert_false(retry_breaker_allow(b, 35 * S));
  /* The time has passed, but nothing moves until someone asks. */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  assert_true(retry_breaker_allow(b, 35 * S + 1));
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_half_open_permits_only_the_probes(void **state) {
  (void)state;
  retry_breaker *b = consecutive(1, 1 * S, 2);
  call(b, 0, true);
  assert_true(retry_breaker_allow(b, 2 * S));
  assert_true(retry_breaker_allow(b, 2 * S));
  assert_false(retry_breaker_allow(b, 2 * S));
  assert_false(retry_breaker_allow(b, 3 * S)); /* still waiting for the probes' results */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_consecutive_failed_probe_reopens(void **state) {
  (void)state;
  retry_breaker *b = consecutive(1, 1 * S, 2);
  call(b, 0, true);
  assert_true(retry_breaker_allow(b, 2 * S));
  assert_true(retry_breaker_allow(b, 2 * S));
  retry_breaker_record(b, 2 * S, false);
  retry_breaker_record(b, 3 * S, true); /* one failed probe is enough */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  assert_int_equal(retry_breaker_n_opened(b), 2);
  assert_false(retry_breaker_allow(b, 4 * S)); /* open again until 4 s */
  assert_true(retry_breaker_allow(b, 4 * S + 1));
  retry_breaker_destroy(b);
}

static void test_breaker_consecutive_all_probes_successful_close(void **state) {
  (void)state;
  retry_breaker *b = consecutive(2, 1 * S, 3);
  calls(b, 0, "FF");
  for (int i = 0; i < 3; i++)
    assert_true(retry_breaker_allow(b, 2 * S));
  retry_breaker_record(b, 2 * S, false);
  retry_breaker_record(b, 2 * S, false);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  retry_breaker_record(b, 2 * S, false);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  /* Closed afresh: one failure does not reopen a threshold-2 breaker. */
  call(b, 3 * S, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  retry_breaker_destroy(b);
}

static void test_breaker_release_returns_a_half_open_permit(void **state) {
  (void)state;
  retry_breaker *b = consecutive(1, 1 * S, 1);
  call(b, 0, true);
  assert_true(retry_breaker_allow(b, 2 * S));
  assert_false(retry_breaker_allow(b, 2 * S));
  retry__breaker_release(b); /* the probe ended with a status that is neither */
  assert_true(retry_breaker_allow(b, 2 * S));
  assert_false(retry_breaker_allow(b, 2 * S));
  retry__breaker_release(b);
  retry__breaker_release(b); /* never more permits than half_open_calls */
  assert_true(retry_breaker_allow(b, 2 * S));
  assert_false(retry_breaker_allow(b, 2 * S));
  retry__breaker_release(NULL);
  retry_breaker_destroy(b);
}

static void test_breaker_results_while_open_are_ignored(void **state) {
  (void)state;
  retry_breaker *b = consecutive(1, 1 * S, 1);
  call(b, 0, true);
  retry_breaker_record(b, 500 * MS, false); /* an attempt admitted before it opened */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  assert_false(retry_breaker_allow(b, 1 * S));
  retry_breaker_destroy(b);
}

/* }================================================================== */

/* {==================================================================
 * Count window
 * =================================================================== */

static void test_breaker_count_no_decision_below_minimum_calls(void **state) {
  (void)state;
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 10, 5, 50.0, 3);
  calls(b, 0, "FFFF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 0, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_count_minimum_clamped_to_window_size(void **state) {
  (void)state;
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 4, 100, 50.0, 3);
  calls(b, 0, "FFF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 0, true); /* 4 calls = min(100, 4) */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_count_opens_when_rate_reaches_threshold(void **state) {
  (void)state;
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 4, 4, 50.0, 3);
  calls(b, 0, "SSSF"); /* 25 % */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 0, true); /* window S S F F: exactly 50 %, >= opens */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_count_rate_compared_in_float(void **state) {
  (void)state;
  /* 1 failure in 3 is 1 * 100.0f / 3 = 33.333332f in resilience4j (SnapshotImpl works in
   * float), and the threshold 33.3333335 becomes 33.333332f too: the rate reaches it and the
   * breaker opens. In double arithmetic 33.3333333 < 33.3333335 would have kept it closed. */
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 3, 3, 33.3333335, 1);
  calls(b, 0, "SSF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
  b = windowed(RETRY_BREAKER_COUNT_WINDOW, 3, 3, 33.34, 1);
  calls(b, 0, "SSF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  retry_breaker_destroy(b);
}

static void test_breaker_count_ring_forgets_oldest_outcome(void **state) {
  (void)state;
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 4, 4, 100.0, 3);
  calls(b, 0, "SFFF"); /* 75 % */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 0, true); /* the S leaves: F F F F */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_half_open_uses_min_of_minimum_and_probes(void **state) {
  (void)state;
  /* minimum 3 < 10 probes: the half-open window decides after 3 results. */
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 5, 3, 50.0, 10);
  calls(b, 0, "FFF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  calls(b, 11 * S, "SS");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  call(b, 11 * S, false);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  retry_breaker_destroy(b);
}

static void test_breaker_half_open_evaluates_after_all_probes(void **state) {
  (void)state;
  /* minimum 100 > 4 probes: it waits for all 4 results. */
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 4, 100, 50.0, 4);
  calls(b, 0, "FFFF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  calls(b, 11 * S, "FSS");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_HALF_OPEN);
  assert_true(retry_breaker_allow(b, 11 * S));
  assert_false(retry_breaker_allow(b, 11 * S));
  retry_breaker_record(b, 11 * S, true); /* 2 of 4 = 50 % */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  assert_int_equal(retry_breaker_n_opened(b), 2);
  retry_breaker_destroy(b);
}

static void test_breaker_half_open_below_threshold_closes_with_fresh_window(void **state) {
  (void)state;
  retry_breaker *b = windowed(RETRY_BREAKER_COUNT_WINDOW, 4, 4, 50.0, 4);
  calls(b, 0, "SSFF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  calls(b, 11 * S, "SSSF"); /* 25 % */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  /* The old failures are gone: three failures are below the minimum of 4. */
  calls(b, 12 * S, "FFF");
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 12 * S, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

/* }================================================================== */

/* {==================================================================
 * Time window
 * =================================================================== */

static void test_breaker_time_window_counts_last_seconds_only(void **state) {
  (void)state;
  retry_breaker *b = windowed(RETRY_BREAKER_TIME_WINDOW, 10, 5, 50.0, 1);
  for (int i = 0; i < 4; i++)
    call(b, i * 100 * MS, true);
  /* At 10 s the bucket of second 0 has left the 10 s window: one call, below the minimum. */
  call(b, 10 * S, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  retry_breaker_destroy(b);
  b = windowed(RETRY_BREAKER_TIME_WINDOW, 10, 5, 50.0, 1);
  for (int i = 0; i < 4; i++)
    call(b, i * 100 * MS, true);
  call(b, 9 * S + 999 * MS, true); /* second 9: second 0 is still in */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_time_window_buckets_are_epoch_seconds(void **state) {
  (void)state;
  /* Calls at 0.9 s belong to second 0 and leave at 10.0 s, after 9.1 s. */
  retry_breaker *b = windowed(RETRY_BREAKER_TIME_WINDOW, 10, 2, 50.0, 1);
  call(b, 900 * MS, true);
  call(b, 10 * S, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  retry_breaker_destroy(b);
}

static void test_breaker_time_window_minimum_not_clamped(void **state) {
  (void)state;
  /* A 2-second window with minimum 10: a count window would clamp to 2, a time window does not. */
  retry_breaker *b = windowed(RETRY_BREAKER_TIME_WINDOW, 2, 10, 50.0, 1);
  for (int i = 0; i < 9; i++)
    call(b, 0, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  call(b, 0, true);
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  retry_breaker_destroy(b);
}

static void test_breaker_time_window_long_gap_evicts_everything(void **state) {
  (void)state;
  retry_breaker *b = windowed(RETRY_BREAKER_TIME_WINDOW, 3, 3, 50.0, 1);
  calls(b, 0, "FF");
  calls(b, 1 * S, "S"); /* 2 of 3 fail, >= 50 %: opens */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_OPEN);
  call(b, 20 * S, false); /* probe closes, window restarts */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  calls(b, 1000 * S, "FF");
  call(b, 5000 * S, true); /* the two failures at 1000 s are long gone */
  assert_int_equal(retry_breaker_state_get(b), RETRY_BREAKER_CLOSED);
  retry_breaker_destroy(b);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_breaker_consecutive_defaults_five_failures_30s_one_probe),
      cmocka_unit_test(test_breaker_defaults_windows_are_resilience4j),
      cmocka_unit_test(test_breaker_default_failure_statuses_are_server_side),
      cmocka_unit_test(test_breaker_create_validates_each_field),
      cmocka_unit_test(test_breaker_consecutive_ignores_window_fields),
      cmocka_unit_test(test_breaker_create_survives_every_allocation_failure),
      cmocka_unit_test(test_breaker_destroy_null_is_noop),
      cmocka_unit_test(test_breaker_consecutive_opens_after_threshold_failures_in_a_row),
      cmocka_unit_test(test_breaker_consecutive_success_resets_count),
      cmocka_unit_test(test_breaker_consecutive_threshold_two_refuses_the_third_attempt),
      cmocka_unit_test(test_breaker_consecutive_success_after_a_failure_resets_to_zero),
      cmocka_unit_test(test_breaker_half_open_lazily_strictly_after_open_duration),
      cmocka_unit_test(test_breaker_half_open_permits_only_the_probes),
      cmocka_unit_test(test_breaker_consecutive_failed_probe_reopens),
      cmocka_unit_test(test_breaker_consecutive_all_probes_successful_close),
      cmocka_unit_test(test_breaker_release_returns_a_half_open_permit),
      cmocka_unit_test(test_breaker_results_while_open_are_ignored),
      cmocka_unit_test(test_breaker_count_no_decision_below_minimum_calls),
      cmocka_unit_test(test_breaker_count_minimum_clamped_to_window_size),
      cmocka_unit_test(test_breaker_count_opens_when_rate_reaches_threshold),
      cmocka_unit_test(test_breaker_count_rate_compared_in_float),
      cmocka_unit_test(test_breaker_count_ring_forgets_oldest_outcome),
      cmocka_unit_test(test_breaker_half_open_uses_min_of_minimum_and_probes),
      cmocka_unit_test(test_breaker_half_open_evaluates_after_all_probes),
      cmocka_unit_test(test_breaker_half_open_below_threshold_closes_with_fresh_window),
      cmocka_unit_test(test_breaker_time_window_counts_last_seconds_only),
      cmocka_unit_test(test_breaker_time_window_buckets_are_epoch_seconds),
      cmocka_unit_test(test_breaker_time_window_minimum_not_clamped),
      cmocka_unit_test(test_breaker_time_window_long_gap_evicts_everything),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
