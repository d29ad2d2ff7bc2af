/*
 * retry_throttle.c: the gRPC retry throttle (A6 retryThrottling) in milli-tokens.
 *
 * Owns nothing but the caller's retry_throttle. Invariant: 0 <= milli_tokens <= max_milli_tokens;
 * retries and hedges are allowed iff milli_tokens > max_milli_tokens / 2 (integer division).
 */
#include "retry_int.h"

#include <assert.h>

/* Integer milli-tokens reproduce grpc-java (Throttle, THREE_DECIMAL_PLACES_SCALE_UP = 1000) and
 * C-core (retry_throttle.cc, max_milli_tokens_ and milli_token_ratio_) exactly. grpc-go keeps a
 * float64 instead; with a tokenRatio of at most 3 decimals the two agree except for rounding
 * noise after many successes, which the integer form avoids by construction. */

void retry_throttle_init(retry_throttle *t, const retry_throttle_config *cfg) {
  assert(t != NULL && cfg != NULL);
  t->cfg = *cfg;
  /* A6: "token_count" starts at maxTokens. */
  t->milli_tokens = cfg->max_milli_tokens;
}

/* The threshold is max/2 in integer arithmetic, as Java's `threshold = maxTokens / 2` and
 * C-core's `max_milli_tokens_ / 2`: with maxTokens 3 (3000 milli) the threshold is 1500. */
static int64_t threshold(const retry_throttle *t) { return t->cfg.max_milli_tokens / 2; }

bool retry_throttle_record_failure(retry_throttle *t) {
  assert(t != NULL);
  /* Decrement first, then compare the new value (C-core RecordFailure: ClampedAdd(-1000) then
   * `new_value > max / 2`). The order matters: the failure of the call's last attempt costs a
   * token too, even though that call cannot retry any more. */
  int64_t v = t->milli_tokens - 1000;
  if (v < 0) v = 0;
  t->milli_tokens = v;
  return v > threshold(t);
}

void retry_throttle_record_success(retry_throttle *t) {
  assert(t != NULL);
  /* Compare before adding so a huge ratio cannot overflow. */
  if (t->milli_tokens > t->cfg.max_milli_tokens - t->cfg.token_ratio_milli)
    t->milli_tokens = t->cfg.max_milli_tokens;
  else
    t->milli_tokens += t->cfg.token_ratio_milli;
}

bool retry_throttle_is_allowed(const retry_throttle *t) {
  assert(t != NULL);
  return t->milli_tokens > threshold(t);
}

void retry_throttle_reconfigure(retry_throttle *t, const retry_throttle_config *cfg) {
  assert(t != NULL && cfg != NULL);
  if (t->cfg.max_milli_tokens == cfg->max_milli_tokens &&
      t->cfg.token_ratio_milli == cfg->token_ratio_milli)
    return;
  /* C-core's replacement entry starts at old_tokens / old_max of the new max, in a double
   * truncated to an integer; a full bucket stays full. */
  double fraction = (double)t->milli_tokens / (double)t->cfg.max_milli_tokens;
  int64_t v = (int64_t)(fraction * (double)cfg->max_milli_tokens);
  if (v < 0) v = 0;
  if (v > cfg->max_milli_tokens) v = cfg->max_milli_tokens;
  t->cfg = *cfg;
  t->milli_tokens = v;
}
