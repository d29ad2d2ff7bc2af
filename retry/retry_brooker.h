/*
 * retry_brooker.h: the two simple retry limiters of Marc Brooker's "Fixing retries with token
 * buckets and circuit breakers" (brooker.co.za/blog/2022/02/28/retries.html) as engine parts,
 * with the rules of the simulator behind the article (mbrooker/simulator_example,
 * retry_sim/retry_strategy.py): a retry-only circuit breaker and a retry token bucket that
 * earns per call. Neither ever stops a first attempt. Semantics and sources:
 * docs/shared-state.md, "Brooker's retry breaker and retry token bucket".
 *
 * Both work on the caller's storage; nothing here reads a clock or allocates.
 */
#ifndef RETRY_BROOKER_H
#define RETRY_BROOKER_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* {==================================================================
 * Retry-only circuit breaker
 * =================================================================== */

typedef struct retry_only_breaker_config {
  double max_ratio;  /* retries stop while failures / calls > max_ratio; >= 0 */
  int64_t window_ns; /* 0: counts since init (the simulator's); > 0: the last window_ns only
                      * (the article's "recent failure rate"), >= RETRY_ONLY_BREAKER_BINS ns */
} retry_only_breaker_config;

/* Fills cfg with the article's simulation (retry_sim.py run_sims, "breaker_10pct"):
 * max_ratio 0.1, counted since init (window_ns 0). */
void retry_only_breaker_config_init(retry_only_breaker_config *cfg);
/* Returns 0 when cfg is usable, else RETRY_ECONFIG with the first bad field's name in *field
 * (when field is not NULL; a static string): max_ratio finite and >= 0, window_ns 0 or
 * >= RETRY_ONLY_BREAKER_BINS. */
int retry_only_breaker_config_check(const retry_only_breaker_config *cfg, const char **field);

#define RETRY_ONLY_BREAKER_BINS 20
typedef struct retry_only_breaker {
  retry_only_breaker_config cfg; /* read-only */
  /* private: cumulative totals (window_ns 0) or a ring of RETRY_ONLY_BREAKER_BINS bins of
   * window_ns / RETRY_ONLY_BREAKER_BINS each, aligned on multiples of the bin width */
  int64_t calls[RETRY_ONLY_BREAKER_BINS];
  int64_t failures[RETRY_ONLY_BREAKER_BINS];
  int64_t bin_ns;
  int64_t cur_bin_start_ns;
  int cur;
} retry_only_breaker;

/* Starts with no calls and no failures at now_ns. cfg is copied and must pass
 * retry_only_breaker_config_check (asserted). b is the caller's storage. */
void retry_only_breaker_init(retry_only_breaker *b, const retry_only_breaker_config *cfg,
                             int64_t now_ns);
/* Counts one call (its first attempt, which always goes out) at now_ns. */
void retry_only_breaker_record_call(retry_only_breaker *b, int64_t now_ns);
/* Counts one failed attempt (first or retry) at now_ns, then answers whether the call may
 * retry: failures / calls <= max_ratio, the failure just counted included. A failure with no
 * call in the window (its call's bin expired) makes the ratio infinite: no retry. Returns
 * true to allow the retry (the caller's own limits, such as max attempts, still apply). */
bool retry_only_breaker_record_failure(retry_only_breaker *b, int64_t now_ns);
/* Returns whether a retry would be allowed at now_ns from the counts as they stand (after
 * expiring bins older than the window), without counting anything. */
bool retry_only_breaker_is_allowed(retry_only_breaker *b, int64_t now_ns);
/* Returns the calls and failures counted in the window as of the last operation (totals when
 * cumulative). */
int64_t retry_only_breaker_calls(const retry_only_breaker *b);
int64_t retry_only_breaker_failures(const retry_only_breaker *b);

/* }================================================================== */

/* {==================================================================
 * Retry token bucket
 * =================================================================== */

typedef struct retry_token_bucket_config {
  double capacity;         /* largest balance, tokens; > 0 (the simulator's bucket_size) */
  double initial;          /* balance at init, in [0, capacity] (the simulator: capacity) */
  double earn_per_call;    /* added when a call starts, capped at capacity (the simulator's
                            * bucket_fill_rate); >= 0 */
  double earn_per_success; /* added when an attempt succeeds (the article's wording); >= 0 */
  double retry_cost;       /* taken by each retry; > 0 (1 in both) */
  bool allow_at_cost;      /* false: a retry needs balance > retry_cost (the simulator's
                            * `bucket > 1.0`); true: balance >= retry_cost (the article's "as
                            * long as there are (whole) tokens") */
} retry_token_bucket_config;

/* Fills cfg with the article's simulation (retry_sim.py run_sims, "adaptive_10pct":
 * AdaptiveRetryFactory(0.1, 5)): capacity 5, initial 5 (full), earn_per_call 0.1,
 * earn_per_success 0, retry_cost 1, allow_at_cost false. */
void retry_token_bucket_config_init(retry_token_bucket_config *cfg);
/* Returns 0 when cfg is usable, else RETRY_ECONFIG with the first bad field's name in *field
 * (when field is not NULL; a static string). All finite; the ranges above. */
int retry_token_bucket_config_check(const retry_token_bucket_config *cfg, const char **field);

typedef struct retry_token_bucket {
  retry_token_bucket_config cfg; /* read-only */
  double balance;                /* read-only: tokens, in [0, capacity] */
} retry_token_bucket;

/* Starts at cfg->initial. cfg is copied and must pass retry_token_bucket_config_check
 * (asserted). b is the caller's storage. */
void retry_token_bucket_init(retry_token_bucket *b, const retry_token_bucket_config *cfg);
/* A call starts: balance += earn_per_call, capped at capacity. */
void retry_token_bucket_record_call(retry_token_bucket *b);
/* An attempt succeeded: balance += earn_per_success, capped at capacity. */
void retry_token_bucket_record_success(retry_token_bucket *b);
/* Asks for one retry: when the balance is above retry_cost (or at it, with allow_at_cost),
 * takes retry_cost and returns true; otherwise takes nothing and returns false. */
bool retry_token_bucket_try_retry(retry_token_bucket *b);

/* }================================================================== */

#ifdef __cplusplus
}
#endif

#endif /* RETRY_BROOKER_H */
