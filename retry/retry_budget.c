/*
 * retry_budget.c: the three retry budgets a target may carry: the AWS SDK retry quota, the
 * Finagle / Linkerd ratio budget and the Envoy concurrent-retry budget.
 *
 * Each works on caller-owned storage and never allocates. Invariants: AWS 0 <= available <=
 * capacity; Finagle's window holds RETRY_FINAGLE_SLICES slices; Envoy counters never go below 0.
 */
#include "retry_int.h"

#include <assert.h>
#include <string.h>

/* {==================================================================
 * AWS SDK retry quota (aws-sdk-go-v2, standard mode before 2026)
 * =================================================================== */

/* Sources: aws/retry/standard.go (DefaultRetryRateTokens 500, DefaultRetryCost 5,
 * DefaultRetryTimeoutCost 10, DefaultNoRetryIncrement 1, GetRetryToken picks the timeout cost
 * when the error is a timeout) and aws/ratelimit/token_bucket.go (Retrieve refuses and takes
 * nothing when the bucket holds less than the cost; Refund adds and caps at the initial
 * capacity). In the SDK the timeout cost applies only when a Timeouts checker is configured,
 * which none is by default; here the set of timeout statuses is explicit instead. */

void retry_aws_quota_config_init(retry_aws_quota_config *cfg) {
  assert(cfg != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->capacity = 500;
  cfg->retry_cost = 5;
  cfg->timeout_cost = 10;
  cfg->no_retry_increment = 1;
  retry_status_set_clear(&cfg->timeout_statuses);
  retry_status_set_add(&cfg->timeout_statuses, RETRY_SPACE_GRPC, RETRY_GRPC_DEADLINE_EXCEEDED);
  retry_status_set_add(&cfg->timeout_statuses, RETRY_SPACE_HTTP, 504);
}

void retry_aws_quota_init(retry_aws_quota *q, const retry_aws_quota_config *cfg) {
  assert(q != NULL && cfg != NULL);
  q->cfg = *cfg;
  q->available = cfg->capacity; /* NewTokenBucket(i): starts full */
}

int32_t retry_aws_quota_acquire(retry_aws_quota *q, bool is_timeout) {
  assert(q != NULL);
  int32_t cost = is_timeout ? q->cfg.timeout_cost : q->cfg.retry_cost;
  /* A cost below 1 cannot be told apart from "refused" in the return value; create rejects such
   * configurations, and a hand-built one simply never retries. */
  if (cost < 1 || q->available < cost) return 0;
  q->available -= cost;
  return cost;
}

int32_t retry_aws_quota_acquire_throttled(retry_aws_quota *q) {
  assert(q != NULL);
  int32_t cost = q->cfg.throttle_cost > 0 ? q->cfg.throttle_cost : q->cfg.retry_cost;
  if (cost < 1 || q->available < cost) return 0;
  q->available -= cost;
  return cost;
}

void retry_aws_quota_release(retry_aws_quota *q, int32_t retry_cost_taken) {
  assert(q != NULL);
  /* A retried attempt gives back exactly what it took (rateToken.release -> Refund(cost)); a
   * first attempt took nothing and earns NoRetryIncrement instead (GetInitialToken). The early
   * AttemptMiddleware swapped the initial token for the retry token once a retry started, which
   * is the rule here; later SDK releases also release the attempt token on every attempt, so a
   * successful retry there earns the increment on top of its refund (docs/shared-state.md). */
  int32_t add = retry_cost_taken > 0 ? retry_cost_taken : q->cfg.no_retry_increment;
  if (add < 0) add = 0;
  if (q->available > q->cfg.capacity - add)
    q->available = q->cfg.capacity;
  else
    q->available += add;
}

/* A copy is rolled, not b: the roll restarts the current slice at the moment it happens
 * (unaligned, as Finagle's WindowedAdder does), so rolling b itself for a read would change
 * which deposits count at b's later decisions. */
int64_t retry__finagle_balance_at(const retry_finagle_budget *b, int64_t now_ns) {
  assert(b != NULL);
  retry_finagle_budget copy = *b;
  retry_finagle_budget_advance(&copy, now_ns);
  return retry_finagle_budget_balance(&copy);
}

/* A read at t rolls min(elapsed / slice, 10) slices, elapsed counted from the last roll in whole
 * ms (retry_finagle_budget_advance): the j-th slice after cur is cleared from
 * cur_slice_start_ns + j * slice_ns on (cur itself, the live slice, at j = 10). Only a slice
 * that holds something changes the balance when it goes. */
int64_t retry__finagle_next_change(const retry_finagle_budget *b, int64_t now_ns) {
  assert(b != NULL);
  for (int j = 1; j <= RETRY_FINAGLE_SLICES; j++) {
    if (b->slices[(b->cur + j) % RETRY_FINAGLE_SLICES] == 0) continue;
    int64_t at = retry__add_ns(b->cur_slice_start_ns, (int64_t)j * b->slice_ns);
    if (at > now_ns) return at;
  }
  return RETRY_NEVER;
}

/* }================================================================== */

/* {==================================================================
 * Finagle RetryBudget (finagle-core RetryBudget.scala on util-core TokenBucket.newLeakyBucket
 * and WindowedAdder.scala)
 * =================================================================== */

/* Finagle keeps a fixed-point token count, ScaleFactor 1000, so that percentCanRetry above 1
 * needs no floating point: each deposit adds 1000 (0 when the percent is 0), each retry costs
 * (int)(1000 / percent) (1 when the percent is 0), and the reserve is
 * minRetriesPerSec * ttl.inSeconds * withdrawal. The bucket is a leaky bucket whose count is
 * windowSum + reserve: the reserve is a constant floor, not tokens that are spent and refilled.
 *
 * The window is util's WindowedAdder(ttl in ms, 10 slices): one live slice plus 9 stored ones,
 * each ttl/10 ms wide. Its clock is in whole milliseconds, so now_ns is truncated to ms here and
 * the slice width is (ttl_ms / 10) ms, both as Finagle computes them. When at least one slice
 * width has passed since the last roll, the adder rolls min(elapsed / width, 10) slices
 * (the live slice is stored and `nskip = min(elapsed/width - 1, 9)` stored ones are zeroed) and
 * the roll time becomes *now*, not a multiple of the width. Two consequences reproduced here:
 * slices drift with the times the budget is touched, and a deposit lives between ~0.9 ttl and
 * ~1.1 ttl depending on when the budget is read. The ring below stores the live slice in
 * slices[cur] and the 9 older ones behind it, which is the same arithmetic without a separate
 * writer. */

#define FINAGLE_SCALE 1000.0

/* Floor of now_ns in whole milliseconds, expressed again in ns (Stopwatch.systemMillis). */
static int64_t floor_ms_ns(int64_t now_ns) {
  int64_t ms = now_ns / RETRY_NS_PER_MS;
  if (now_ns % RETRY_NS_PER_MS < 0) ms--; /* floor, for clocks with a negative origin */
  return ms * RETRY_NS_PER_MS;
}

void retry_finagle_budget_config_init(retry_finagle_budget_config *cfg) {
  assert(cfg != NULL);
  /* RetryBudget(): DefaultTtl 10 seconds, minRetriesPerSec 10, percentCanRetry 0.2. */
  cfg->ttl_ns = 10 * RETRY_NS_PER_S;
  cfg->min_retries_per_sec = 10;
  cfg->percent_can_retry = 0.2;
}

void retry_finagle_budget_init(retry_finagle_budget *b, const retry_finagle_budget_config *cfg,
                               int64_t now_ns) {
  assert(b != NULL && cfg != NULL);
  memset(b, 0, sizeof *b);
  b->cfg = *cfg;
  double pct = cfg->percent_can_retry;
  if (!(pct > 0.0)) {
    /* "if you only have minRetries, everything costs 1 but you get no credit for requests" */
    b->deposit = 0;
    b->withdrawal = 1;
  } else {
    b->deposit = (int64_t)FINAGLE_SCALE;
    double w = FINAGLE_SCALE / pct;
    /* Scala's Double.toInt truncates and saturates at Int.MaxValue. */
    b->withdrawal = w >= (double)INT32_MAX ? INT32_MAX : (int64_t)w;
    if (b->withdrawal < 1)
      b->withdrawal = 1; /* only for percents above 1000, which create refuses */
  }
  /* ttl.inSeconds truncates: a ttl of 1.9 s reserves for 1 second. Finagle multiplies in Int
   * and would wrap; here the product saturates and retry_target_create refuses a reserve above
   * INT32_MAX, so a validated budget computes exactly Finagle's value. */
  int64_t ttl_s = cfg->ttl_ns / RETRY_NS_PER_S;
  int64_t rps = cfg->min_retries_per_sec > 0 ? cfg->min_retries_per_sec : 0;
  if (ttl_s < 0) ttl_s = 0;
  int64_t per_ttl = rps * ttl_s; /* <= 2^31 * 2^33, fits */
  if (per_ttl != 0 && b->withdrawal > INT64_MAX / per_ttl)
    b->reserve = INT64_MAX;
  else
    b->reserve = per_ttl * b->withdrawal;
  /* WindowedAdder(range = ttl.inMilliseconds, slices = 10): window = range / slices ms. */
  int64_t ttl_ms = cfg->ttl_ns / RETRY_NS_PER_MS;
  b->slice_ns = ttl_ms / RETRY_FINAGLE_SLICES * RETRY_NS_PER_MS;
  if (b->slice_ns < RETRY_NS_PER_MS) b->slice_ns = RETRY_NS_PER_MS; /* never divide by zero */
  b->cur_slice_start_ns = floor_ms_ns(now_ns);
  b->cur = 0;
}

/* Rolls the window to now (WindowedAdder.expired, run by add and sum alike; here by
 * deposit and try_withdraw, and by whoever reads the balance at a time). */
void retry_finagle_budget_advance(retry_finagle_budget *b, int64_t now_ns) {
  assert(b != NULL);
  int64_t now = floor_ms_ns(now_ns);
  int64_t elapsed = retry__add_ns(now, -b->cur_slice_start_ns);
  if (elapsed < b->slice_ns) return; /* also covers a clock that went backwards */
  int64_t n = elapsed / b->slice_ns;
  if (n > RETRY_FINAGLE_SLICES) n = RETRY_FINAGLE_SLICES;
  for (int64_t i = 0; i < n; i++) {
    b->cur = (b->cur + 1) % RETRY_FINAGLE_SLICES;
    b->slices[b->cur] = 0;
  }
  b->cur_slice_start_ns = now; /* `old = now()`: the next slice starts now, unaligned */
}

/* The bucket's count from the window as it stands, after an advance. */
static int64_t finagle_count(const retry_finagle_budget *b) {
  int64_t sum = 0;
  for (int i = 0; i < RETRY_FINAGLE_SLICES; i++)
    sum += b->slices[i];
  /* count = w.sum() + reserve, clamped rather than wrapped */
  return retry__add_ns(sum, b->reserve);
}

void retry_finagle_budget_deposit(retry_finagle_budget *b, int64_t now_ns) {
  assert(b != NULL);
  retry_finagle_budget_advance(b, now_ns);
  b->slices[b->cur] = retry__add_ns(b->slices[b->cur], b->deposit);
}

bool retry_finagle_budget_try_withdraw(retry_finagle_budget *b, int64_t now_ns) {
  assert(b != NULL);
  /* TokenBucket.tryGet: ok iff count >= n, then add(-n) to the live slice. The debit can make
   * the sum negative once older deposits expire; Finagle accepts that ("the debit will simply
   * roll over to the next window"). */
  retry_finagle_budget_advance(b, now_ns);
  if (finagle_count(b) < b->withdrawal) return false;
  b->slices[b->cur] -= b->withdrawal;
  return true;
}

int64_t retry_finagle_budget_balance(const retry_finagle_budget *b) {
  assert(b != NULL);
  /* count / withdrawalAmount, Long division (truncates toward zero, as C does). Finagle's
   * balance runs sum(), which rolls the window first; here the roll is the caller's
   * retry_finagle_budget_advance, so that a read can be const. */
  return finagle_count(b) / b->withdrawal;
}

/* }================================================================== */

/* {==================================================================
 * Envoy retry budget (source/common/upstream/resource_manager_impl.h, RetryBudgetImpl)
 * =================================================================== */

/* Envoy's RetryBudgetImpl::max() is
 *   std::max<uint64_t>(budget_percent / 100.0 * (requests + pending_requests),
 * min_retry_concurrency) so the fractional product is truncated toward zero when it is converted to
 * uint64_t, and canCreate() is `count() < max()`. This engine has no connection pool, hence no
 * pending requests: active_requests counts the attempts in flight to the target. The router
 * (source/common/router/retry_state_impl.cc) takes the slot (retries().inc()) when it decides to
 * retry and gives it back (resetRetry -> dec()) at the next retry decision or when the request
 * ends, so a slot is held through the backoff and the whole retried request. */

void retry_envoy_budget_config_init(retry_envoy_budget_config *cfg) {
  assert(cfg != NULL);
  /* circuit_breaker.proto RetryBudget: budget_percent defaults to 20%, min_retry_concurrency 3. */
  cfg->budget_percent = 20.0;
  cfg->min_retry_concurrency = 3;
}

void retry_envoy_budget_init(retry_envoy_budget *b, const retry_envoy_budget_config *cfg) {
  assert(b != NULL && cfg != NULL);
  b->cfg = *cfg;
  b->active_requests = 0;
  b->active_retries = 0;
}

void retry_envoy_budget_request_start(retry_envoy_budget *b) {
  assert(b != NULL);
  b->active_requests++;
}

void retry_envoy_budget_request_end(retry_envoy_budget *b) {
  assert(b != NULL && b->active_requests > 0);
  if (b->active_requests > 0) b->active_requests--;
}

int64_t retry__envoy_budget_max(const retry_envoy_budget *b) {
  /* Same expression and order as Envoy, so the double rounds the same way. */
  double v = b->cfg.budget_percent / 100.0 * (double)b->active_requests;
  int64_t limit;
  if (!(v > 0.0))
    limit = 0;
  else if (v >= 9.2e18)
    limit = INT64_MAX;
  else
    limit = (int64_t)v; /* truncation toward zero, as the conversion to uint64_t */
  int64_t floor_n = b->cfg.min_retry_concurrency > 0 ? b->cfg.min_retry_concurrency : 0;
  return limit > floor_n ? limit : floor_n;
}

bool retry_envoy_budget_try_acquire(retry_envoy_budget *b) {
  assert(b != NULL);
  if (b->active_retries >= retry__envoy_budget_max(b)) return false;
  b->active_retries++;
  return true;
}

void retry_envoy_budget_release(retry_envoy_budget *b) {
  assert(b != NULL && b->active_retries > 0);
  if (b->active_retries > 0) b->active_retries--;
}

/* }================================================================== */
