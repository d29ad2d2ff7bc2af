/*
 * retry_aws_adaptive.h: the client-side rate limiter of the AWS SDKs' "adaptive" retry mode
 * (botocore retries/adaptive.py, bucket.py, throttling.py; aws-sdk-go-v2 aws/retry/adaptive*.go),
 * as engine parts that work on the caller's storage: the throttling-error codes, the measured
 * response rate, the CUBIC fill-rate calculator, the token bucket, and the limiter that ties
 * them together in front of every attempt. Semantics and sources: docs/shared-state.md,
 * "AWS adaptive retry mode".
 *
 * Time comes in as int64 ns; rates are in requests per second (doubles, as both SDKs keep
 * them). Nothing here reads a clock, draws a random number or allocates.
 */
#ifndef RETRY_AWS_ADAPTIVE_H
#define RETRY_AWS_ADAPTIVE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* {==================================================================
 * Throttling errors
 * =================================================================== */

/* How many error codes both SDKs treat as throttling by default. */
#define RETRY_AWS_N_THROTTLING_CODES 14

/* Returns whether code (an AWS error code such as "ThrottlingException", compared exactly,
 * case-sensitive) is one of the RETRY_AWS_N_THROTTLING_CODES codes both botocore
 * (ThrottledRetryableChecker) and aws-sdk-go-v2 (DefaultThrottleErrorCodes) treat as a
 * throttling error. NULL and "" are not. An HTTP status alone (429 included) never is: both SDKs
 * look only at the error code; botocore also counts a modeled error whose service model marks
 * it retryable with throttling, which the caller decides (pass throttled = true). */
bool retry_aws_is_throttling_code(const char *code);
/* Returns the i-th default throttling code (0 <= i < RETRY_AWS_N_THROTTLING_CODES) in the
 * SDKs' order, NULL past the end. Returns a static string. */
const char *retry_aws_throttling_code(int i);

/* }================================================================== */

/* {==================================================================
 * Configuration
 * =================================================================== */

typedef struct retry_aws_adaptive_config {
  double beta;                  /* CUBIC multiplicative decrease on a throttle: 0.7 */
  double scale_constant;        /* CUBIC C: 0.4 */
  double smoothing;             /* weight of the newest bucket's rate: 0.8 */
  int64_t rate_bucket_ns;       /* width of a rate-measuring bucket: 500 ms */
  double min_fill_rate;         /* lowest fill rate of the token bucket, per s: 0.5 */
  double max_rate_adjust_scale; /* fill rate <= this * measured rate: 2.0 */
  double request_cost;          /* tokens one attempt takes: 1 */
  bool fail_fast;               /* true: refuse an attempt when no token (aws-sdk-go-v2
                                 * FailOnNoAttemptTokens); false: wait for one (botocore, and
                                 * aws-sdk-go-v2's default) */
} retry_aws_adaptive_config;

/* Fills cfg with both SDKs' defaults (above), waiting for tokens. */
void retry_aws_adaptive_config_init(retry_aws_adaptive_config *cfg);
/* Returns 0 when cfg is usable, else a negative RETRY_* code (RETRY_ECONFIG) and, when field is
 * not NULL, the name of the first bad field ("beta") in *field (a static string). Allowed:
 * 0 < beta < 1, scale_constant > 0, 0 < smoothing <= 1, rate_bucket_ns > 0,
 * min_fill_rate > 0, max_rate_adjust_scale > 0, request_cost > 0, all finite. */
int retry_aws_adaptive_config_check(const retry_aws_adaptive_config *cfg, const char **field);

/* }================================================================== */

/* {==================================================================
 * Measured rate (botocore RateClocker; aws-sdk-go-v2 updateMeasuredRate)
 * =================================================================== */

typedef struct retry_aws_rate_clock {
  double smoothing;       /* read-only */
  int64_t bucket_ns;      /* read-only: bucket width */
  double measured_rate;   /* read-only: smoothed responses per s, 0 at start */
  int64_t last_bucket_ns; /* private: start of the last bucket that closed a count */
  int64_t count;          /* private: responses since then */
} retry_aws_rate_clock;

/* Starts at now_ns with a rate of 0. The first bucket boundary is now_ns floored to a whole
 * second, as in both SDKs (later boundaries are multiples of bucket_ns). c is the caller's
 * storage. */
void retry_aws_rate_clock_init(retry_aws_rate_clock *c, double smoothing, int64_t bucket_ns,
                               int64_t now_ns);
/* Counts one response at now_ns. When now_ns is in a later bucket than the last one, the rate
 * of the count over the time between the two bucket starts is blended in (rate * smoothing +
 * old * (1 - smoothing)) and the count restarts. Returns the measured rate afterwards. */
double retry_aws_rate_clock_record(retry_aws_rate_clock *c, int64_t now_ns);

/* }================================================================== */

/* {==================================================================
 * CUBIC fill rate (botocore CubicCalculator; aws-sdk-go-v2 cubicSuccess / cubicThrottle)
 * =================================================================== */

typedef struct retry_aws_cubic {
  double beta, scale_constant; /* read-only */
  double w_max;                /* read-only: the rate at the last throttle, per s */
  double k;                    /* read-only: s after last_fail_ns at which the curve is w_max */
  int64_t last_fail_ns;        /* read-only: time of the last throttle */
} retry_aws_cubic;

/* Starts with w_max = starting_max_rate and last_fail_ns = now_ns; k = cbrt(w_max (1 - beta) /
 * scale_constant). c is the caller's storage. */
void retry_aws_cubic_init(retry_aws_cubic *c, double starting_max_rate, double beta,
                          double scale_constant, int64_t now_ns);
/* Returns the rate for a success at now_ns: scale_constant * (t - k)^3 + w_max, t the seconds
 * since last_fail_ns. Changes nothing. */
double retry_aws_cubic_success(const retry_aws_cubic *c, int64_t now_ns);
/* Records a throttle at now_ns while sending at rate (per s): w_max = rate, k recomputed,
 * last_fail_ns = now_ns. Returns rate * beta. */
double retry_aws_cubic_throttle(retry_aws_cubic *c, double rate, int64_t now_ns);

/* }================================================================== */

/* {==================================================================
 * Token bucket (botocore TokenBucket; aws-sdk-go-v2 adaptiveTokenBucket)
 * =================================================================== */

typedef struct retry_aws_bucket {
  double min_rate;     /* read-only: lowest fill rate, per s */
  double fill_rate;    /* read-only: tokens per s, >= min_rate */
  double max_capacity; /* read-only: max(requested rate, 1) */
  double tokens;       /* read-only: in [0, max_capacity] */
  int64_t last_ns;     /* private: time of the last refill */
} retry_aws_bucket;

/* Starts empty at now_ns with retry_aws_bucket_set_max_rate(max_rate) applied. b is the
 * caller's storage. */
void retry_aws_bucket_init(retry_aws_bucket *b, double max_rate, double min_rate, int64_t now_ns);
/* Refills to now_ns at the old rate first, then: fill_rate = max(rate, min_rate),
 * max_capacity = max(rate, 1), tokens capped at max_capacity. */
void retry_aws_bucket_set_max_rate(retry_aws_bucket *b, int64_t now_ns, double rate);
/* Refills to now_ns (tokens += elapsed s * fill_rate, capped at max_capacity; a time before the
 * last refill adds nothing) and takes amount when the bucket holds at least that much: returns
 * true. Otherwise takes nothing, returns false and, when wait_ns is not NULL, sets *wait_ns to
 * the time until the bucket would hold amount at the current fill rate, rounded up (>= 1 ns;
 * a caller that waits calls again then, as botocore's blocking acquire and aws-sdk-go-v2's
 * GetAttemptToken loop do). */
bool retry_aws_bucket_acquire(retry_aws_bucket *b, int64_t now_ns, double amount, int64_t *wait_ns);

/* }================================================================== */

/* {==================================================================
 * The limiter (botocore ClientRateLimiter; aws-sdk-go-v2 adaptiveRateLimit + AdaptiveMode)
 * =================================================================== */

typedef enum retry_aws_send {
  RETRY_AWS_SEND_OK = 0, /* send now: a token was taken, or the limiter is not yet enabled */
  RETRY_AWS_SEND_WAIT,   /* no token: ask again after *wait_ns (fail_fast false) */
  RETRY_AWS_SEND_REFUSE  /* no token and fail_fast: the attempt fails without being sent */
} retry_aws_send;

typedef struct retry_aws_adaptive {
  retry_aws_adaptive_config cfg; /* read-only */
  bool enabled;                  /* read-only: a throttle has been seen; sends need tokens */
  retry_aws_rate_clock clock;    /* read-only */
  retry_aws_cubic cubic;         /* read-only */
  retry_aws_bucket bucket;       /* read-only */
  double calculated_rate;        /* read-only: the CUBIC rate of the last response, per s */
} retry_aws_adaptive;

/* Starts disabled at now_ns: CUBIC from w_max 0, a bucket at max rate 1 (botocore's
 * register_retry_handler), rate 0. cfg is copied and must pass retry_aws_adaptive_config_check
 * (asserted). l is the caller's storage. */
void retry_aws_adaptive_init(retry_aws_adaptive *l, const retry_aws_adaptive_config *cfg,
                             int64_t now_ns);
/* Asks to send one attempt (first or retry) at now_ns. Until the first throttle every attempt
 * goes out. Afterwards one takes request_cost tokens; without them the answer is WAIT (with
 * *wait_ns, when wait_ns is not NULL, the time to wait before asking again) or, with
 * fail_fast, REFUSE. */
retry_aws_send retry_aws_adaptive_before_send(retry_aws_adaptive *l, int64_t now_ns,
                                              int64_t *wait_ns);
/* Records the response to an attempt at now_ns (every response: success, throttle or other
 * error). Counts it in the measured rate; a throttle sets the CUBIC w_max to the measured rate
 * (the lower of it and the fill rate once enabled), the rate to w_max * beta, and enables the
 * limiter; any other response takes the CUBIC curve's rate. The bucket's max rate becomes
 * min(that rate, max_rate_adjust_scale * measured rate). */
void retry_aws_adaptive_on_response(retry_aws_adaptive *l, int64_t now_ns, bool throttled);

/* }================================================================== */

#ifdef __cplusplus
}
#endif

#endif /* RETRY_AWS_ADAPTIVE_H */
