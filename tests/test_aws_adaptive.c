/*
 * test_aws_adaptive.c: the AWS SDKs' adaptive-mode rate limiter, rule by rule, against the
 * SDKs' own test vectors: botocore tests/unit/retries/test_bucket.py, test_throttling.py and
 * test_adaptive.py (TestRateClocker, TestClientRateLimiter), and aws-sdk-go-v2
 * aws/retry/adaptive_ratelimit_test.go (TestAdaptiveRateLimit_cubic, _Update). Their fake
 * clocks hand out seconds; here every time is the same instant in ns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "retry/retry.h"
#include "retry/retry_aws_adaptive.h"

#define MS RETRY_NS_PER_MS
#define S RETRY_NS_PER_S

/* Seconds (as the SDKs' fake clocks give them) to ns, exactly for the values used here. */
#define SEC(x) ((int64_t)llround((x)*1e9))

/* cmocka 1.1.5's assert_float_equal works in float; rates are doubles. */
#define assert_near_eps(a, b, eps)                             \
  do {                                                         \
    double a_ = (a), b_ = (b);                                 \
    if (!(fabs(a_ - b_) <= (eps))) {                           \
      print_error("%.17g != %.17g (eps %g)\n", a_, b_, (eps)); \
      fail();                                                  \
    }                                                          \
  } while (0)
/* aws-sdk-go-v2's floatEqual uses 1e-15; pytest.approx a relative 1e-6. */
#define assert_near(a, b) assert_near_eps((a), (b), 1e-12)

/* {==================================================================
 * Throttling errors
 * =================================================================== */

static void test_aws_throttling_codes_are_the_sdks_fourteen(void **state) {
  (void)state;
  const char *codes[] = {"Throttling",
                         "ThrottlingException",
                         "ThrottledException",
                         "RequestThrottledException",
                         "TooManyRequestsException",
                         "ProvisionedThroughputExceededException",
                         "TransactionInProgressException",
                         "RequestLimitExceeded",
                         "BandwidthLimitExceeded",
                         "LimitExceededException",
                         "RequestThrottled",
                         "SlowDown",
                         "PriorRequestNotComplete",
                         "EC2ThrottledException"};
  assert_int_equal(sizeof codes / sizeof codes[0], RETRY_AWS_N_THROTTLING_CODES);
  for (int i = 0; i < RETRY_AWS_N_THROTTLING_CODES; i++) {
    assert_true(retry_aws_is_throttling_code(codes[i]));
    assert_string_equal(retry_aws_throttling_code(i), codes[i]);
  }
  assert_null(retry_aws_throttling_code(RETRY_AWS_N_THROTTLING_CODES));
  assert_null(retry_aws_throttling_code(-1));
}

static void test_aws_throttling_codes_exact_and_not_statuses(void **state) {
  (void)state;
  /* Retryable but not throttling (DefaultRetryableErrorCodes), case differences, prefixes, and
   * an HTTP status spelled as a code: none count. */
  assert_false(retry_aws_is_throttling_code("RequestTimeout"));
  assert_false(retry_aws_is_throttling_code("RequestTimeoutException"));
  assert_false(retry_aws_is_throttling_code("throttlingexception"));
  assert_false(retry_aws_is_throttling_code("Throttlin"));
  assert_false(retry_aws_is_throttling_code("ThrottlingExceptionX"));
  assert_false(retry_aws_is_throttling_code("429"));
  assert_false(retry_aws_is_throttling_code(""));
  assert_false(retry_aws_is_throttling_code(NULL));
}

/* }================================================================== */

/* {==================================================================
 * Token bucket: botocore test_bucket.py (max_rate 10, min_rate 0.1, created at t = 0)
 * =================================================================== */

static retry_aws_bucket bucket_at_0(double max_rate, double min_rate) {
  retry_aws_bucket b;
  retry_aws_bucket_init(&b, max_rate, min_rate, 0);
  return b;
}

static void test_aws_bucket_can_acquire_amount(void **state) {
  (void)state;
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  for (int t = 1; t <= 5; t++)
    assert_true(retry_aws_bucket_acquire(&b, t * S, 1, NULL));
}

static void test_aws_bucket_starts_empty(void **state) {
  (void)state;
  /* The bucket earns from its creation on: nothing at t = 0. */
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  int64_t wait = 0;
  assert_false(retry_aws_bucket_acquire(&b, 0, 1, &wait));
  assert_int_equal(wait, 100 * MS); /* 1 token at 10 per s */
}

static void test_aws_bucket_can_change_max_capacity_lower(void **state) {
  (void)state;
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  for (int t = 1; t <= 5; t++)
    assert_true(retry_aws_bucket_acquire(&b, t * S, 1, NULL));
  retry_aws_bucket_set_max_rate(&b, 5 * S, 1);
  assert_near(b.max_capacity, 1);
  assert_near(b.tokens, 1); /* 9 left, capped at the new capacity */
  for (int t = 6; t <= 10; t++)
    assert_true(retry_aws_bucket_acquire(&b, t * S, 1, NULL));
}

static void test_aws_bucket_max_capacity_is_at_least_one(void **state) {
  (void)state;
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  retry_aws_bucket_set_max_rate(&b, 1 * S, 0.5);
  assert_near(b.fill_rate, 0.5);
  assert_near(b.max_capacity, 1);
}

static void test_aws_bucket_acquire_fails_in_non_block_mode(void **state) {
  (void)state;
  /* botocore raises CapacityNotAvailableError for acquire(100, block=False) at t = 1: the
   * bucket holds at most 10. Nothing is taken, and the wait is (100 - 10) / 10 s. */
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  int64_t wait = 0;
  assert_false(retry_aws_bucket_acquire(&b, 1 * S, 100, &wait));
  assert_near(b.tokens, 10);
  assert_int_equal(wait, 9 * S);
}

static void test_aws_bucket_can_retrieve_at_max_send_rate(void **state) {
  (void)state;
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  for (int i = 0; i < 20; i++)
    assert_true(retry_aws_bucket_acquire(&b, S + i * 100 * MS, 1, NULL));
}

static void test_aws_bucket_acquiring_blocks_when_capacity_reached(void **state) {
  (void)state;
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  assert_true(retry_aws_bucket_acquire(&b, SEC(0.1), 1, NULL));
  assert_near(b.tokens, 0);
  /* At 0.15 s the bucket holds 0.5: botocore sleeps 0.05 s, refills and takes. */
  int64_t wait = 0;
  assert_false(retry_aws_bucket_acquire(&b, SEC(0.15), 1, &wait));
  assert_int_equal(wait, 50 * MS);
  assert_true(retry_aws_bucket_acquire(&b, SEC(0.15) + wait, 1, NULL));
  assert_near(b.tokens, 0);
  assert_true(retry_aws_bucket_acquire(&b, SEC(0.300001), 1, NULL));
}

static void test_aws_bucket_rate_cant_go_below_min(void **state) {
  (void)state;
  retry_aws_bucket b = bucket_at_0(1, 0.2);
  retry_aws_bucket_set_max_rate(&b, 1 * S, 0.1);
  assert_near(b.fill_rate, 0.2);
  assert_near(b.max_capacity, 1);
}

static void test_aws_bucket_set_rate_refills_at_old_rate_first(void **state) {
  (void)state;
  /* 0.5 s at 1 per s earns 0.5 before the rate goes to 100 (capacity 100); had the new rate
   * applied to the past, the bucket would hold 50. */
  retry_aws_bucket b = bucket_at_0(1, 0.1);
  retry_aws_bucket_set_max_rate(&b, 500 * MS, 100);
  assert_near(b.tokens, 0.5);
  assert_near(b.max_capacity, 100);
}

static void test_aws_bucket_time_going_back_adds_nothing(void **state) {
  (void)state;
  retry_aws_bucket b = bucket_at_0(10, 0.1);
  assert_true(retry_aws_bucket_acquire(&b, 1 * S, 1, NULL));
  assert_near(b.tokens, 9);
  assert_true(retry_aws_bucket_acquire(&b, 500 * MS, 1, NULL));
  assert_near(b.tokens, 8);
}

/* }================================================================== */

/* {==================================================================
 * CUBIC: botocore test_throttling.py and aws-sdk-go-v2 TestAdaptiveRateLimit_cubic
 * =================================================================== */

static void test_aws_cubic_starting_params(void **state) {
  (void)state;
  retry_aws_cubic c;
  retry_aws_cubic_init(&c, 10, 0.7, 0.4, 0);
  assert_near(c.k, 1.9574338205844317);
  assert_near(c.w_max, 10);
  assert_int_equal(c.last_fail_ns, 0);
}

static void test_aws_cubic_success_responses_until_max_hit(void **state) {
  (void)state;
  retry_aws_cubic c;
  retry_aws_cubic_init(&c, 10, 0.7, 0.4, 0);
  double k = c.k;
  assert_true(retry_aws_cubic_success(&c, SEC(k / 3.0)) <= 10);
  assert_true(retry_aws_cubic_success(&c, SEC(k / 2.0)) <= 10);
  assert_true(retry_aws_cubic_success(&c, SEC(k / 1.1)) <= 10);
  assert_near_eps(retry_aws_cubic_success(&c, SEC(k)), 10.0, 1e-6);
  assert_true(retry_aws_cubic_success(&c, SEC(k * 1.1)) >= 10);
  assert_true(retry_aws_cubic_success(&c, SEC(k * 2.0)) >= 10);
}

static void test_aws_cubic_error_response_decreases_rate_by_beta(void **state) {
  (void)state;
  retry_aws_cubic c;
  retry_aws_cubic_init(&c, 10, 0.7, 0.4, 0);
  assert_near(retry_aws_cubic_throttle(&c, 8, 1 * S), 8 * 0.7);
  assert_near(c.w_max, 8);
  assert_near(c.k, 1.8171205928321397);
  assert_int_equal(c.last_fail_ns, 1 * S);
}

static void test_aws_cubic_t_0_should_match_beta_decrease(void **state) {
  (void)state;
  retry_aws_cubic c;
  retry_aws_cubic_init(&c, 10, 0.6, 0.4, 0);
  assert_true(retry_aws_cubic_throttle(&c, 10, 1 * S) == 6.0);
  assert_near(retry_aws_cubic_success(&c, 1 * S), 6.0);
}

static void test_aws_cubic_go_vectors_success(void **state) {
  (void)state;
  /* lastMaxRate 10, lastThrottleTime 5 s; successes at 5 .. 11 s. */
  static const double want[] = {7.,
                                9.64893600966,
                                10.000030849917364,
                                10.453284520772092,
                                13.408697022224185,
                                21.26626835427364,
                                36.425998516920465};
  retry_aws_cubic c;
  retry_aws_cubic_init(&c, 10, 0.7, 0.4, 5 * S);
  for (int i = 0; i < 7; i++)
    assert_near(retry_aws_cubic_success(&c, (5 + i) * S), want[i]);
}

static void test_aws_cubic_go_vectors_mixed(void **state) {
  (void)state;
  /* The Go test's own bookkeeping on a throttle: the new rate is the last rate times beta,
   * and it becomes lastMaxRate too (w_max = the reduced rate, from that instant), which is
   * retry_aws_cubic_init at that time. */
  static const struct {
    bool throttled;
    double want;
  } steps[] = {{false, 7.},
               {false, 9.64893600966},
               {true, 6.754255206761999},
               {true, 4.727978644733399},
               {false, 4.670125557970046},
               {false, 4.770870456867401},
               {false, 6.011819748005445},
               {false, 10.792973431384178}};
  retry_aws_cubic c;
  retry_aws_cubic_init(&c, 10, 0.7, 0.4, 5 * S);
  double rate = 0;
  for (int i = 0; i < 8; i++) {
    int64_t t = (5 + i) * S;
    if (steps[i].throttled) {
      rate = retry_aws_cubic_throttle(&c, rate, t);
      retry_aws_cubic_init(&c, rate, 0.7, 0.4, t);
    } else {
      rate = retry_aws_cubic_success(&c, t);
    }
    assert_near(rate, steps[i].want);
  }
}

/* }================================================================== */

/* {==================================================================
 * Measured rate: botocore TestRateClocker (smoothing 0.8, buckets of 0.5 s, created at 0)
 * =================================================================== */

static retry_aws_rate_clock clock_at_0(void) {
  retry_aws_rate_clock c;
  retry_aws_rate_clock_init(&c, 0.8, 500 * MS, 0);
  return c;
}

static void test_aws_rate_initial_rate_is_0(void **state) {
  (void)state;
  retry_aws_rate_clock c = clock_at_0();
  assert_true(c.measured_rate == 0);
}

static void test_aws_rate_time_updates_if_after_bucket_range(void **state) {
  (void)state;
  retry_aws_rate_clock c = clock_at_0();
  assert_near(retry_aws_rate_clock_record(&c, 1 * S), 0.8);
}

static void test_aws_rate_can_measure_constant_rate(void **state) {
  (void)state;
  retry_aws_rate_clock c = clock_at_0();
  for (int t = 1; t <= 20; t++)
    retry_aws_rate_clock_record(&c, t * S);
  assert_near_eps(c.measured_rate, 1, 1e-7); /* assertAlmostEqual: 7 places */
}

static void test_aws_rate_uses_smoothing_to_favor_recent_weights(void **state) {
  (void)state;
  retry_aws_rate_clock c = clock_at_0();
  for (int i = 0; i < 7; i++) /* 1, 1.5, ..., 4 s: 2 per s */
    retry_aws_rate_clock_record(&c, S + i * 500 * MS);
  assert_true(c.measured_rate >= 1.99 && c.measured_rate <= 2.0);
  retry_aws_rate_clock_record(&c, 14 * S); /* one in 10 s */
  assert_true(c.measured_rate >= 0.1 && c.measured_rate <= 2.0);
  /* Exactly: 1 / 10 s blended with weight 0.8. */
  double before = 0;
  {
    retry_aws_rate_clock d = clock_at_0();
    for (int i = 0; i < 7; i++)
      before = retry_aws_rate_clock_record(&d, S + i * 500 * MS);
  }
  assert_near(c.measured_rate, 0.1 * 0.8 + before * 0.2);
}

static void test_aws_rate_noop_when_delta_t_is_0(void **state) {
  (void)state;
  retry_aws_rate_clock c = clock_at_0();
  int64_t ts[] = {1 * S, 1 * S, 1 * S, 2 * S, 3 * S};
  for (int i = 0; i < 5; i++)
    retry_aws_rate_clock_record(&c, ts[i]);
  assert_true(c.measured_rate >= 1.0);
}

static void test_aws_rate_times_are_grouped_per_time_bucket(void **state) {
  (void)state;
  retry_aws_rate_clock c = clock_at_0();
  double ts[] = {0.1, 0.2, 0.3, 0.4, 0.49};
  for (int i = 0; i < 5; i++)
    retry_aws_rate_clock_record(&c, SEC(ts[i]));
  assert_true(c.measured_rate == 0);
  /* The sixth response opens the bucket [0.5, 1): 6 responses over 0.5 s. */
  retry_aws_rate_clock_record(&c, 500 * MS);
  assert_near(c.measured_rate, 12 * 0.8);
}

static void test_aws_rate_first_boundary_is_the_whole_second(void **state) {
  (void)state;
  /* Created at 1.7 s: the first boundary is 1 s, so a response at 2 s measures 1 over 1 s
   * (not over the 0.5 s bucket width, nor from 1.5 s). */
  retry_aws_rate_clock c;
  retry_aws_rate_clock_init(&c, 0.8, 500 * MS, SEC(1.7));
  assert_near(retry_aws_rate_clock_record(&c, 2 * S), 0.8);
}

/* }================================================================== */

/* {==================================================================
 * The limiter: aws-sdk-go-v2 TestAdaptiveRateLimit_Update, botocore TestClientRateLimiter
 * =================================================================== */

static retry_aws_adaptive limiter_at_0(bool fail_fast) {
  retry_aws_adaptive_config cfg;
  retry_aws_adaptive_config_init(&cfg);
  cfg.fail_fast = fail_fast;
  retry_aws_adaptive l;
  retry_aws_adaptive_init(&l, &cfg, 0);
  return l;
}

static void test_aws_adaptive_go_update_vectors(void **state) {
  (void)state;
  static const struct {
    bool throttled;
    int ms;
    double measured, fill;
  } steps[] = {
      {false, 200, 0., 0.5},
      {false, 400, 0., 0.5},
      {false, 600, 4.8, 0.5},
      {false, 800, 4.8, 0.5},
      {false, 1000, 4.16, 0.5},
      {false, 1200, 4.16, 0.6912},
      {false, 1400, 4.16, 1.0976},
      {false, 1600, 5.632, 1.6384},
      {false, 1800, 5.632, 2.3328},
      {true, 2000, 4.3264, 3.02848},
      {false, 2200, 4.3264, 3.4866391734702598},
      {false, 2400, 4.3264, 3.8218744160402554},
      {false, 2600, 5.665280, 4.053385727709987},
      {false, 2800, 5.665280, 4.200373108479455},
      {false, 3000, 4.333056, 4.282036558348658},
      {true, 3200, 4.333056, 2.99742559084406},
      {false, 3400, 4.333056, 3.4522263943863463},
  };
  retry_aws_adaptive l = limiter_at_0(false);
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    retry_aws_adaptive_on_response(&l, steps[i].ms * MS, steps[i].throttled);
    assert_near(l.clock.measured_rate, steps[i].measured);
    assert_near(l.bucket.fill_rate, steps[i].fill);
  }
  assert_true(l.enabled);
}

static void test_aws_adaptive_bucket_acquisition_only_if_enabled(void **state) {
  (void)state;
  /* Before any throttle every attempt goes out, however many at one instant. */
  retry_aws_adaptive l = limiter_at_0(true);
  for (int i = 0; i < 1000; i++)
    assert_int_equal(retry_aws_adaptive_before_send(&l, 0, NULL), RETRY_AWS_SEND_OK);
  retry_aws_adaptive_on_response(&l, 1 * S, false);
  for (int i = 0; i < 1000; i++)
    assert_int_equal(retry_aws_adaptive_before_send(&l, 1 * S, NULL), RETRY_AWS_SEND_OK);
  assert_false(l.enabled);
}

static void test_aws_adaptive_token_bucket_enabled_on_throttling_error(void **state) {
  (void)state;
  retry_aws_adaptive l = limiter_at_0(true);
  retry_aws_adaptive_on_response(&l, 1 * S, false);
  assert_false(l.enabled);
  retry_aws_adaptive_on_response(&l, 1 * S, true);
  assert_true(l.enabled);
  /* From now on sends take tokens: the bucket (capacity 1) runs dry within one instant. */
  int sent = 0;
  for (int i = 0; i < 10; i++)
    sent += retry_aws_adaptive_before_send(&l, 1 * S, NULL) == RETRY_AWS_SEND_OK;
  assert_true(sent <= 1);
}

static void test_aws_adaptive_max_rate_updated_on_success_response(void **state) {
  (void)state;
  /* With a measured rate high enough not to cap it, a success sets the bucket's rate to the
   * CUBIC curve's value. 40 responses in [0, 1) s, then one at 1 s: 41 per s measured. */
  retry_aws_adaptive l = limiter_at_0(false);
  for (int i = 0; i < 40; i++)
    retry_aws_adaptive_on_response(&l, i * 25 * MS, false);
  retry_aws_adaptive_on_response(&l, 1 * S, true); /* w_max = measured, from 1 s */
  double w_max = l.cubic.w_max;
  assert_near(w_max, l.clock.measured_rate);
  retry_aws_adaptive_on_response(&l, 1200 * MS, false);
  double want = retry_aws_cubic_success(&l.cubic, 1200 * MS);
  assert_true(want < 2 * l.clock.measured_rate);
  assert_near(l.calculated_rate, want);
  assert_near(l.bucket.fill_rate, want);
}

static void test_aws_adaptive_max_rate_cant_exceed_twice_measured(void **state) {
  (void)state;
  /* Long after the last throttle the curve asks for far more than the 2 per s measured: the
   * fill rate stops at 2 * measured. */
  retry_aws_adaptive l = limiter_at_0(false);
  for (int i = 0; i < 4; i++)
    retry_aws_adaptive_on_response(&l, S + i * 500 * MS, false);
  retry_aws_adaptive_on_response(&l, 3 * S, true);
  for (int i = 0; i < 40; i++)
    retry_aws_adaptive_on_response(&l, 60 * S + i * 500 * MS, false);
  assert_true(l.calculated_rate > 100);
  assert_near(l.bucket.fill_rate, 2 * l.clock.measured_rate);
}

static void test_aws_adaptive_throttle_uses_lower_of_measured_and_fill(void **state) {
  (void)state;
  /* Enabled, with a fill rate (0.5, the minimum) below the measured rate: the next throttle
   * takes w_max from the fill rate. */
  retry_aws_adaptive l = limiter_at_0(false);
  retry_aws_adaptive_on_response(&l, 200 * MS, true); /* measured 0: fill 0.5 */
  assert_near(l.bucket.fill_rate, 0.5);
  for (int i = 0; i < 20; i++)
    retry_aws_adaptive_on_response(&l, S + i * 50 * MS, true);
  assert_true(l.clock.measured_rate > 0.5);
  assert_true(l.cubic.w_max <= 0.5 + 1e-12);
}

static void test_aws_adaptive_wait_mode_delays_send(void **state) {
  (void)state;
  retry_aws_adaptive l = limiter_at_0(false);
  retry_aws_adaptive_on_response(&l, 200 * MS, true); /* enabled, fill 0.5, capacity 1 */
  /* The bucket earned 0.2 s at 1 per s before the throttle, then nothing: 0.2 tokens. */
  int64_t wait = 0;
  assert_int_equal(retry_aws_adaptive_before_send(&l, 200 * MS, &wait), RETRY_AWS_SEND_WAIT);
  assert_int_equal(wait, 1600 * MS); /* (1 - 0.2) / 0.5 per s */
  assert_int_equal(retry_aws_adaptive_before_send(&l, 200 * MS + wait - 1, NULL),
                   RETRY_AWS_SEND_WAIT);
  assert_int_equal(retry_aws_adaptive_before_send(&l, 200 * MS + wait, NULL), RETRY_AWS_SEND_OK);
}

static void test_aws_adaptive_fail_fast_refuses_send(void **state) {
  (void)state;
  retry_aws_adaptive l = limiter_at_0(true);
  retry_aws_adaptive_on_response(&l, 200 * MS, true);
  int64_t wait = -7;
  assert_int_equal(retry_aws_adaptive_before_send(&l, 200 * MS, &wait), RETRY_AWS_SEND_REFUSE);
  assert_int_equal(wait, -7); /* untouched: nothing to wait for */
  assert_int_equal(retry_aws_adaptive_before_send(&l, 1800 * MS, NULL), RETRY_AWS_SEND_OK);
  assert_int_equal(retry_aws_adaptive_before_send(&l, 1800 * MS, NULL), RETRY_AWS_SEND_REFUSE);
}

static void test_aws_adaptive_config_defaults_and_check(void **state) {
  (void)state;
  retry_aws_adaptive_config cfg;
  retry_aws_adaptive_config_init(&cfg);
  assert_true(cfg.beta == 0.7 && cfg.scale_constant == 0.4 && cfg.smoothing == 0.8);
  assert_true(cfg.min_fill_rate == 0.5 && cfg.max_rate_adjust_scale == 2.0);
  assert_true(cfg.request_cost == 1.0 && !cfg.fail_fast);
  assert_int_equal(cfg.rate_bucket_ns, 500 * MS);
  const char *field = "x";
  assert_int_equal(retry_aws_adaptive_config_check(&cfg, &field), RETRY_OK);
  assert_null(field);

  retry_aws_adaptive_config c = cfg;
  c.beta = 1.0;
  assert_int_equal(retry_aws_adaptive_config_check(&c, &field), RETRY_ECONFIG);
  assert_string_equal(field, "beta");
  c = cfg;
  c.scale_constant = INFINITY;
  assert_int_equal(retry_aws_adaptive_config_check(&c, &field), RETRY_ECONFIG);
  assert_string_equal(field, "scale_constant");
  c = cfg;
  c.smoothing = 0;
  assert_int_equal(retry_aws_adaptive_config_check(&c, &field), RETRY_ECONFIG);
  assert_string_equal(field, "smoothing");
  c = cfg;
  c.rate_bucket_ns = 0;
  assert_int_equal(retry_aws_adaptive_config_check(&c, &field), RETRY_ECONFIG);
  assert_string_equal(field, "rate_bucket_ns");
  c = cfg;
  c.min_fill_rate = NAN;
  assert_int_equal(retry_aws_adaptive_config_check(&c, &field), RETRY_ECONFIG);
  assert_string_equal(field, "min_fill_rate");
  c = cfg;
  c.max_rate_adjust_scale = -1;
  assert_int_equal(retry_aws_adaptive_config_check(&c, &field), RETRY_ECONFIG);
  assert_string_equal(field, "max_rate_adjust_scale");
  c = cfg;
  c.request_cost = 0;
  assert_int_equal(retry_aws_adaptive_config_check(&c, NULL), RETRY_ECONFIG);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aws_throttling_codes_are_the_sdks_fourteen),
      cmocka_unit_test(test_aws_throttling_codes_exact_and_not_statuses),
      cmocka_unit_test(test_aws_bucket_can_acquire_amount),
      cmocka_unit_test(test_aws_bucket_starts_empty),
      cmocka_unit_test(test_aws_bucket_can_change_max_capacity_lower),
      cmocka_unit_test(test_aws_bucket_max_capacity_is_at_least_one),
      cmocka_unit_test(test_aws_bucket_acquire_fails_in_non_block_mode),
      cmocka_unit_test(test_aws_bucket_can_retrieve_at_max_send_rate),
      cmocka_unit_test(test_aws_bucket_acquiring_blocks_when_capacity_reached),
      cmocka_unit_test(test_aws_bucket_rate_cant_go_below_min),
      cmocka_unit_test(test_aws_bucket_set_rate_refills_at_old_rate_first),
      cmocka_unit_test(test_aws_bucket_time_going_back_adds_nothing),
      cmocka_unit_test(test_aws_cubic_starting_params),
      cmocka_unit_test(test_aws_cubic_success_responses_until_max_hit),
      cmocka_unit_test(test_aws_cubic_error_response_decreases_rate_by_beta),
      cmocka_unit_test(test_aws_cubic_t_0_should_match_beta_decrease),
      cmocka_unit_test(test_aws_cubic_go_vectors_success),
      cmocka_unit_test(test_aws_cubic_go_vectors_mixed),
      cmocka_unit_test(test_aws_rate_initial_rate_is_0),
      cmocka_unit_test(test_aws_rate_time_updates_if_after_bucket_range),
      cmocka_unit_test(test_aws_rate_can_measure_constant_rate),
      cmocka_unit_test(test_aws_rate_uses_smoothing_to_favor_recent_weights),
      cmocka_unit_test(test_aws_rate_noop_when_delta_t_is_0),
      cmocka_unit_test(test_aws_rate_times_are_grouped_per_time_bucket),
      cmocka_unit_test(test_aws_rate_first_boundary_is_the_whole_second),
      cmocka_unit_test(test_aws_adaptive_go_update_vectors),
      cmocka_unit_test(test_aws_adaptive_bucket_acquisition_only_if_enabled),
      cmocka_unit_test(test_aws_adaptive_token_bucket_enabled_on_throttling_error),
      cmocka_unit_test(test_aws_adaptive_max_rate_updated_on_success_response),
      cmocka_unit_test(test_aws_adaptive_max_rate_cant_exceed_twice_measured),
      cmocka_unit_test(test_aws_adaptive_throttle_uses_lower_of_measured_and_fill),
      cmocka_unit_test(test_aws_adaptive_wait_mode_delays_send),
      cmocka_unit_test(test_aws_adaptive_fail_fast_refuses_send),
      cmocka_unit_test(test_aws_adaptive_config_defaults_and_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
