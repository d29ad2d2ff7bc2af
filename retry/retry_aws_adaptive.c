/*
 * retry_aws_adaptive.c: the AWS SDKs' adaptive-mode client rate limiter: throttling codes,
 * measured response rate, CUBIC fill rate and the token bucket in front of every attempt.
 *
 * Works on the caller's storage and never allocates. Invariants: 0 <= tokens <= max_capacity,
 * fill_rate >= min_rate, max_capacity >= 1 (after init); the rate clock's last bucket never
 * moves back.
 */
#include "retry_aws_adaptive.h"

#include "retry_int.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* Both SDKs keep time as seconds in doubles (Python floats, Go float64 seconds); here time is
 * int64 ns and becomes seconds only where a rate or the CUBIC curve needs it. Differences are
 * taken in int64 first, so that two clock readings far from 0 (ns since 1970 are past 2^60)
 * keep their full precision. */
static double seconds_between(int64_t later_ns, int64_t earlier_ns) {
  /* Saturate rather than overflow: a difference past +-2^63 ns (292 years) is clamped. */
  if (earlier_ns > 0 && later_ns < INT64_MIN + earlier_ns) return (double)INT64_MIN / 1e9;
  if (earlier_ns < 0 && later_ns > INT64_MAX + earlier_ns) return (double)INT64_MAX / 1e9;
  return (double)(later_ns - earlier_ns) / 1e9;
}

/* floor(t / width) * width, also for negative t. width > 0. */
static int64_t floor_to(int64_t t, int64_t width) {
  int64_t q = t / width;
  if (t % width < 0) q--;
  return q * width;
}

/* {==================================================================
 * Throttling errors
 * =================================================================== */

/* botocore retries/standard.py ThrottledRetryableChecker._THROTTLED_ERROR_CODES ("the union of
 * all error codes we've seen that represent a throttled error") and aws-sdk-go-v2
 * aws/retry/standard.go DefaultThrottleErrorCodes (checked by ThrottleErrorCode in
 * throttle_error.go) hold the same 14 codes; the order here is botocore's. */
static const char *const throttling_codes[RETRY_AWS_N_THROTTLING_CODES] = {
    "Throttling",
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
    "EC2ThrottledException",
};

bool retry_aws_is_throttling_code(const char *code) {
  if (code == NULL || code[0] == '\0') return false;
  for (int i = 0; i < RETRY_AWS_N_THROTTLING_CODES; i++)
    if (strcmp(code, throttling_codes[i]) == 0) return true;
  return false;
}

const char *retry_aws_throttling_code(int i) {
  return i >= 0 && i < RETRY_AWS_N_THROTTLING_CODES ? throttling_codes[i] : NULL;
}

/* }================================================================== */

/* {==================================================================
 * Configuration
 * =================================================================== */

void retry_aws_adaptive_config_init(retry_aws_adaptive_config *cfg) {
  assert(cfg != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->beta = 0.7;                             /* CubicCalculator._BETA, adaptiveRateLimit.beta */
  cfg->scale_constant = 0.4;                   /* _SCALE_CONSTANT, scaleConstant */
  cfg->smoothing = 0.8;                        /* RateClocker._DEFAULT_SMOOTHING, smooth */
  cfg->rate_bucket_ns = 500 * RETRY_NS_PER_MS; /* _TIME_BUCKET_RANGE 0.5; Go's floor(t*2)/2 */
  cfg->min_fill_rate = 0.5;                    /* TokenBucket._MIN_RATE, minFillRate */
  cfg->max_rate_adjust_scale = 2.0;            /* _MAX_RATE_ADJUST_SCALE; Go's 2*measured */
  cfg->request_cost = 1.0;                     /* acquire(amount=1); DefaultRequestCost */
  cfg->fail_fast = false;                      /* botocore blocks; Go waits by default */
}

/* A positive finite double. */
static bool positive(double x) { return x > 0 && isfinite(x); }

int retry_aws_adaptive_config_check(const retry_aws_adaptive_config *cfg, const char **field) {
  assert(cfg != NULL);
  const char *bad = NULL;
  if (!(cfg->beta > 0 && cfg->beta < 1))
    bad = "beta";
  else if (!positive(cfg->scale_constant))
    bad = "scale_constant";
  else if (!(cfg->smoothing > 0 && cfg->smoothing <= 1))
    bad = "smoothing";
  else if (cfg->rate_bucket_ns <= 0)
    bad = "rate_bucket_ns";
  else if (!positive(cfg->min_fill_rate))
    bad = "min_fill_rate";
  else if (!positive(cfg->max_rate_adjust_scale))
    bad = "max_rate_adjust_scale";
  else if (!positive(cfg->request_cost))
    bad = "request_cost";
  if (field != NULL) *field = bad;
  return bad == NULL ? RETRY_OK : RETRY_ECONFIG;
}

/* }================================================================== */

/* {==================================================================
 * Measured rate
 * =================================================================== */

/* botocore names it a send rate, but both SDKs count responses: RateClocker.record runs in
 * on_receiving_response, updateMeasuredRate in Update (the attempt token's release). The first
 * boundary is the start time floored to a whole second (math.floor(current_time()),
 * math.Floor(seconds)), not to a bucket: with the 0.5 s default that matters only in the first
 * second. */

void retry_aws_rate_clock_init(retry_aws_rate_clock *c, double smoothing, int64_t bucket_ns,
                               int64_t now_ns) {
  assert(c != NULL && bucket_ns > 0);
  memset(c, 0, sizeof *c);
  c->smoothing = smoothing;
  c->bucket_ns = bucket_ns;
  c->last_bucket_ns = floor_to(now_ns, RETRY_NS_PER_S);
}

double retry_aws_rate_clock_record(retry_aws_rate_clock *c, int64_t now_ns) {
  assert(c != NULL);
  int64_t bucket = floor_to(now_ns, c->bucket_ns);
  c->count++;
  if (bucket > c->last_bucket_ns) {
    /* The count spans every response since the last boundary, over the time between the two
     * bucket starts, however many buckets passed in between. */
    double current = (double)c->count / seconds_between(bucket, c->last_bucket_ns);
    c->measured_rate = current * c->smoothing + c->measured_rate * (1 - c->smoothing);
    c->count = 0;
    c->last_bucket_ns = bucket;
  }
  return c->measured_rate;
}

/* }================================================================== */

/* {==================================================================
 * CUBIC fill rate
 * =================================================================== */

/* The window growth function of CUBIC (RFC 8312, section 4.1) applied to a send rate:
 * W(t) = C (t - K)^3 + W_max with K = cbrt(W_max (1 - beta) / C), so W(0) = beta W_max and the
 * curve flattens out at W_max after K seconds. Both SDKs take the cube root as x ** (1/3) /
 * math.Pow(x, 1./3.); pow is used here too, so the last bits agree with their test vectors. */

static double zero_point(double w_max, double beta, double scale_constant) {
  return pow(w_max * (1 - beta) / scale_constant, 1.0 / 3.0);
}

void retry_aws_cubic_init(retry_aws_cubic *c, double starting_max_rate, double beta,
                          double scale_constant, int64_t now_ns) {
  assert(c != NULL);
  c->beta = beta;
  c->scale_constant = scale_constant;
  c->w_max = starting_max_rate;
  c->k = zero_point(starting_max_rate, beta, scale_constant);
  c->last_fail_ns = now_ns;
}

double retry_aws_cubic_success(const retry_aws_cubic *c, int64_t now_ns) {
  assert(c != NULL);
  double dt = seconds_between(now_ns, c->last_fail_ns);
  return c->scale_constant * pow(dt - c->k, 3) + c->w_max;
}

double retry_aws_cubic_throttle(retry_aws_cubic *c, double rate, int64_t now_ns) {
  assert(c != NULL);
  c->w_max = rate;
  c->k = zero_point(rate, c->beta, c->scale_constant);
  c->last_fail_ns = now_ns;
  return rate * c->beta;
}

/* }================================================================== */

/* {==================================================================
 * Token bucket
 * =================================================================== */

/* Adds what the bucket earned since the last refill. botocore would subtract tokens for a clock
 * that went backwards; a time before the last refill adds nothing and moves nothing here. */
static void refill(retry_aws_bucket *b, int64_t now_ns) {
  if (now_ns <= b->last_ns) return;
  double t = b->tokens + seconds_between(now_ns, b->last_ns) * b->fill_rate;
  b->tokens = t < b->max_capacity ? t : b->max_capacity;
  b->last_ns = now_ns;
}

void retry_aws_bucket_init(retry_aws_bucket *b, double max_rate, double min_rate, int64_t now_ns) {
  assert(b != NULL);
  memset(b, 0, sizeof *b);
  b->min_rate = min_rate;
  /* botocore's first refill (in the max_rate setter of __init__) only stamps the time. */
  b->last_ns = now_ns;
  retry_aws_bucket_set_max_rate(b, now_ns, max_rate);
}

void retry_aws_bucket_set_max_rate(retry_aws_bucket *b, int64_t now_ns, double rate) {
  assert(b != NULL);
  /* Refill at the old rate first: the time since the last refill was earned at that rate. */
  refill(b, now_ns);
  b->fill_rate = rate > b->min_rate ? rate : b->min_rate;
  b->max_capacity = rate >= 1 ? rate : 1;
  if (b->tokens > b->max_capacity) b->tokens = b->max_capacity;
}

bool retry_aws_bucket_acquire(retry_aws_bucket *b, int64_t now_ns, double amount,
                              int64_t *wait_ns) {
  assert(b != NULL && amount > 0);
  refill(b, now_ns);
  if (amount <= b->tokens) {
    b->tokens -= amount;
    return true;
  }
  if (wait_ns != NULL) {
    /* (amount - tokens) / fill_rate seconds, scaled to ns before the division so that round
     * numbers stay exact; rounded up, at least 1 ns, and capped like every engine delay. */
    double w = ceil((amount - b->tokens) * 1e9 / b->fill_rate);
    const double cap = (double)(INT64_MAX / 4);
    *wait_ns = !(w < cap) ? INT64_MAX / 4 : w < 1 ? 1 : (int64_t)w;
  }
  return false;
}

/* }================================================================== */

/* {==================================================================
 * The limiter
 * =================================================================== */

void retry_aws_adaptive_init(retry_aws_adaptive *l, const retry_aws_adaptive_config *cfg,
                             int64_t now_ns) {
  assert(l != NULL && cfg != NULL);
  assert(retry_aws_adaptive_config_check(cfg, NULL) == RETRY_OK);
  memset(l, 0, sizeof *l);
  l->cfg = *cfg;
  /* register_retry_handler: CubicCalculator(starting_max_rate=0, start_time=now),
   * TokenBucket(max_rate=1), RateClocker(now). aws-sdk-go-v2 starts its bucket at capacity 0
   * and fill rate 0, which differs only until the first response sets the rate. */
  retry_aws_rate_clock_init(&l->clock, cfg->smoothing, cfg->rate_bucket_ns, now_ns);
  retry_aws_cubic_init(&l->cubic, 0, cfg->beta, cfg->scale_constant, now_ns);
  retry_aws_bucket_init(&l->bucket, 1, cfg->min_fill_rate, now_ns);
}

retry_aws_send retry_aws_adaptive_before_send(retry_aws_adaptive *l, int64_t now_ns,
                                              int64_t *wait_ns) {
  assert(l != NULL);
  /* on_sending_request / AcquireToken: no bucket until the first throttle. */
  if (!l->enabled) return RETRY_AWS_SEND_OK;
  int64_t w = 0;
  if (retry_aws_bucket_acquire(&l->bucket, now_ns, l->cfg.request_cost, &w))
    return RETRY_AWS_SEND_OK;
  if (l->cfg.fail_fast) return RETRY_AWS_SEND_REFUSE;
  if (wait_ns != NULL) *wait_ns = w;
  return RETRY_AWS_SEND_WAIT;
}

void retry_aws_adaptive_on_response(retry_aws_adaptive *l, int64_t now_ns, bool throttled) {
  assert(l != NULL);
  double measured = retry_aws_rate_clock_record(&l->clock, now_ns);
  double rate;
  if (!throttled) {
    rate = retry_aws_cubic_success(&l->cubic, now_ns);
  } else {
    /* Once the bucket limits sends, the rate that drew the throttle is at most its fill
     * rate, even when responses arrive faster (botocore min(measured, max_rate), Go
     * min(measuredTxRate, fillRate)). */
    double use = measured;
    if (l->enabled && l->bucket.fill_rate < use) use = l->bucket.fill_rate;
    rate = retry_aws_cubic_throttle(&l->cubic, use, now_ns);
    l->enabled = true;
  }
  l->calculated_rate = rate;
  double cap = l->cfg.max_rate_adjust_scale * measured;
  retry_aws_bucket_set_max_rate(&l->bucket, now_ns, rate < cap ? rate : cap);
}

/* }================================================================== */
