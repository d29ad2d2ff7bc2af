/*
 * retry_brooker.c: Brooker's retry-only circuit breaker and retry token bucket
 * (brooker.co.za/blog/2022/02/28/retries.html; mbrooker/simulator_example
 * retry_sim/retry_strategy.py).
 *
 * Works on the caller's storage and never allocates. Invariants: the breaker's slot `cur`
 * holds the bin that starts at cur_bin_start_ns and every other slot is older (or, when
 * cumulative, slot 0 holds everything); 0 <= balance <= capacity.
 */
#include "retry_brooker.h"

#include "retry_int.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* {==================================================================
 * Retry-only circuit breaker
 * =================================================================== */

/* The simulator's CircuitBreakerRetryStrategy keeps two counters for a client, shared by all
 * its calls: `calls`, incremented when a call starts (CircuitBreakerRetryCall.start, once per
 * call, not per attempt), and `failures`, incremented on every failed attempt before the
 * decision (should_retry), whatever the decision. The call retries only when
 * failures / calls <= max_rate, and then only within its own N retries. Nothing ever resets
 * the counters: the ratio is cumulative over the client's life. The article describes the
 * statistics as tracking the "(recent) failure rate"; window_ns > 0 gives that reading, with
 * the same two counts over a sliding window of bins (the construction of retry_adaptive.c). */

void retry_only_breaker_config_init(retry_only_breaker_config *cfg) {
  assert(cfg != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->max_ratio = 0.1; /* CircuitBreakerRetryFactory(NRetriesFactory(3), 0.1) */
  cfg->window_ns = 0;
}

int retry_only_breaker_config_check(const retry_only_breaker_config *cfg, const char **field) {
  assert(cfg != NULL);
  const char *bad = NULL;
  if (!(cfg->max_ratio >= 0 && isfinite(cfg->max_ratio)))
    bad = "max_ratio";
  else if (cfg->window_ns != 0 && cfg->window_ns < RETRY_ONLY_BREAKER_BINS)
    bad = "window_ns";
  if (field != NULL) *field = bad;
  return bad == NULL ? RETRY_OK : RETRY_ECONFIG;
}

/* Start of the bin that contains t: floor(t / bin) * bin, also for negative clock values. */
static int64_t bin_start(int64_t t, int64_t bin_ns) {
  int64_t q = t / bin_ns;
  if (t % bin_ns < 0) q--;
  return q * bin_ns;
}

void retry_only_breaker_init(retry_only_breaker *b, const retry_only_breaker_config *cfg,
                             int64_t now_ns) {
  assert(b != NULL && cfg != NULL);
  assert(retry_only_breaker_config_check(cfg, NULL) == RETRY_OK);
  memset(b, 0, sizeof *b);
  b->cfg = *cfg;
  if (cfg->window_ns > 0) {
    b->bin_ns = cfg->window_ns / RETRY_ONLY_BREAKER_BINS;
    b->cur_bin_start_ns = bin_start(now_ns, b->bin_ns);
  }
}

/* Moves the ring to the bin of now_ns, clearing the bins that fall out of the window. A time
 * in or before the current bin changes nothing. Cumulative breakers never move. */
static void advance(retry_only_breaker *b, int64_t now_ns) {
  if (b->cfg.window_ns == 0) return;
  int64_t start = bin_start(now_ns, b->bin_ns);
  if (start <= b->cur_bin_start_ns) return;
  /* Bins to step over, computed without overflow and capped at a full turn of the ring. */
  uint64_t gap = ((uint64_t)start - (uint64_t)b->cur_bin_start_ns) / (uint64_t)b->bin_ns;
  int n = gap >= RETRY_ONLY_BREAKER_BINS ? RETRY_ONLY_BREAKER_BINS : (int)gap;
  for (int i = 0; i < n; i++) {
    b->cur = (b->cur + 1) % RETRY_ONLY_BREAKER_BINS;
    b->calls[b->cur] = 0;
    b->failures[b->cur] = 0;
  }
  b->cur_bin_start_ns = start;
}

static int64_t sum(const int64_t *v) {
  int64_t s = 0;
  for (int i = 0; i < RETRY_ONLY_BREAKER_BINS; i++)
    s += v[i];
  return s;
}

int64_t retry_only_breaker_calls(const retry_only_breaker *b) {
  assert(b != NULL);
  return sum(b->calls);
}

int64_t retry_only_breaker_failures(const retry_only_breaker *b) {
  assert(b != NULL);
  return sum(b->failures);
}

/* failures / calls <= max_ratio, written as a product so that calls = 0 needs no special
 * case: with failures > 0 the ratio is infinite (refused), with none it is 0 (allowed). */
static bool ratio_allows(const retry_only_breaker *b) {
  double calls = (double)retry_only_breaker_calls(b);
  double failures = (double)retry_only_breaker_failures(b);
  if (calls == 0) return failures == 0;
  return failures / calls <= b->cfg.max_ratio;
}

void retry_only_breaker_record_call(retry_only_breaker *b, int64_t now_ns) {
  assert(b != NULL);
  advance(b, now_ns);
  b->calls[b->cur]++;
}

bool retry_only_breaker_record_failure(retry_only_breaker *b, int64_t now_ns) {
  assert(b != NULL);
  advance(b, now_ns);
  b->failures[b->cur]++;
  return ratio_allows(b);
}

bool retry_only_breaker_is_allowed(retry_only_breaker *b, int64_t now_ns) {
  assert(b != NULL);
  advance(b, now_ns);
  return ratio_allows(b);
}

/* }================================================================== */

/* {==================================================================
 * Retry token bucket
 * =================================================================== */

/* The simulator's AdaptiveRetryStrategy is one bucket per client (new_call returns the
 * strategy itself), created full (self.bucket = bucket_size). Every call start adds
 * bucket_fill_rate, capped at bucket_size, whatever the call's outcome; each retry needs
 * bucket > 1.0 and takes 1.0. The article words the deposit as "if it succeeds, it drops part
 * of a token" and the test as "(whole) tokens in the bucket"; earn_per_success and
 * allow_at_cost give that reading. This is not any of retry_budget.c's budgets with an initial
 * balance: the AWS quota earns only on successes (and refunds what a successful retry took),
 * the gRPC throttle loses a token on every failure and cuts off at half, and Finagle's
 * deposits expire after its ttl, where these never expire but stop at the capacity. */

void retry_token_bucket_config_init(retry_token_bucket_config *cfg) {
  assert(cfg != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->capacity = 5; /* AdaptiveRetryFactory(0.1, 5): fill 0.1 a call, size 5 */
  cfg->initial = 5;
  cfg->earn_per_call = 0.1;
  cfg->earn_per_success = 0;
  cfg->retry_cost = 1;
  cfg->allow_at_cost = false;
}

static bool nonneg(double x) { return x >= 0 && isfinite(x); }

int retry_token_bucket_config_check(const retry_token_bucket_config *cfg, const char **field) {
  assert(cfg != NULL);
  const char *bad = NULL;
  if (!(cfg->capacity > 0 && isfinite(cfg->capacity)))
    bad = "capacity";
  else if (!(nonneg(cfg->initial) && cfg->initial <= cfg->capacity))
    bad = "initial";
  else if (!nonneg(cfg->earn_per_call))
    bad = "earn_per_call";
  else if (!nonneg(cfg->earn_per_success))
    bad = "earn_per_success";
  else if (!(cfg->retry_cost > 0 && isfinite(cfg->retry_cost)))
    bad = "retry_cost";
  if (field != NULL) *field = bad;
  return bad == NULL ? RETRY_OK : RETRY_ECONFIG;
}

void retry_token_bucket_init(retry_token_bucket *b, const retry_token_bucket_config *cfg) {
  assert(b != NULL && cfg != NULL);
  assert(retry_token_bucket_config_check(cfg, NULL) == RETRY_OK);
  b->cfg = *cfg;
  b->balance = cfg->initial;
}

static void earn(retry_token_bucket *b, double amount) {
  double x = b->balance + amount;
  b->balance = x < b->cfg.capacity ? x : b->cfg.capacity;
}

void retry_token_bucket_record_call(retry_token_bucket *b) {
  assert(b != NULL);
  earn(b, b->cfg.earn_per_call);
}

void retry_token_bucket_record_success(retry_token_bucket *b) {
  assert(b != NULL);
  earn(b, b->cfg.earn_per_success);
}

bool retry_token_bucket_try_retry(retry_token_bucket *b) {
  assert(b != NULL);
  bool ok = b->cfg.allow_at_cost ? b->balance >= b->cfg.retry_cost : b->balance > b->cfg.retry_cost;
  if (!ok) return false;
  b->balance -= b->cfg.retry_cost;
  return true;
}

/* }================================================================== */
