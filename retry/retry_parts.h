/*
 * retry_parts.h: the parts of a retry_target, one by one, for code that runs or inspects a part
 * by hand (the engine's own tests, a client with its own call loop).
 *
 * retry.h holds what an embedding client needs: the parts' configs and their *_config_init,
 * retry_target and retry_call, which drive the parts. This header adds each part's state type
 * and operations: gRPC throttle, AWS quota, Finagle budget, Envoy budget, adaptive throttler,
 * circuit breaker. Each works on the caller's storage (the breaker alone is created) and never
 * allocates after init or create.
 */
#ifndef RETRY_PARTS_H
#define RETRY_PARTS_H

#include "retry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct retry_throttle retry_throttle;
typedef struct retry_breaker retry_breaker;

/* {==================================================================
 * gRPC retry throttle (A6 retryThrottling)
 * =================================================================== */

struct retry_throttle {
  retry_throttle_config cfg; /* read-only */
  int64_t milli_tokens;      /* read-only: current count in [0, max_milli_tokens] */
};

/* Starts the bucket full. t is the caller's storage; cfg is copied. */
void retry_throttle_init(retry_throttle *t, const retry_throttle_config *cfg);
/* Records a qualifying failure: -1000, clamped at 0. Returns whether retries are still
 * allowed afterwards (count > max/2), which is the answer for the failed call's retry. */
bool retry_throttle_record_failure(retry_throttle *t);
/* Records a success: +token_ratio_milli, clamped at max. */
void retry_throttle_record_success(retry_throttle *t);
/* Returns whether retries and hedges are allowed now (count > max/2), without changing it. */
bool retry_throttle_is_allowed(const retry_throttle *t);
/* Gives t a new config as C-core does when a channel brings a different retryThrottling for a
 * server name already in its map (retry_throttle.cc, GetDataForServer): the new parameters
 * replace the old for every holder, the count scaled to keep its fraction of maxTokens
 * (truncated). The same config changes nothing. */
void retry_throttle_reconfigure(retry_throttle *t, const retry_throttle_config *cfg);

/* }================================================================== */

/* {==================================================================
 * AWS SDK retry quota
 * =================================================================== */

typedef struct retry_aws_quota {
  retry_aws_quota_config cfg; /* read-only */
  int32_t available;          /* read-only: tokens left, in [0, capacity] */
} retry_aws_quota;

/* Starts the quota full (available = capacity). q is the caller's storage; cfg is copied. */
void retry_aws_quota_init(retry_aws_quota *q, const retry_aws_quota_config *cfg);
/* Takes the cost of one retry (timeout_cost when is_timeout). Returns the cost taken (> 0),
 * or 0 when the quota cannot pay it (nothing taken: the retry must not happen). */
int32_t retry_aws_quota_acquire(retry_aws_quota *q, bool is_timeout);
/* The same after a throttling status: throttle_cost when the config has one, else retry_cost
 * (is_timeout's rule does not apply: in the 2026 behaviour timeouts cost as other failures). */
int32_t retry_aws_quota_acquire_throttled(retry_aws_quota *q);
/* Reports a successful attempt: refunds retry_cost_taken (the value acquire returned for that
 * attempt, 0 for a first attempt, which adds no_retry_increment instead). Clamped at capacity. */
void retry_aws_quota_release(retry_aws_quota *q, int32_t retry_cost_taken);

/* }================================================================== */

/* {==================================================================
 * Finagle / Linkerd ratio retry budget
 * =================================================================== */

#define RETRY_FINAGLE_SLICES 10
typedef struct retry_finagle_budget {
  retry_finagle_budget_config cfg; /* read-only */
  /* private: a windowed adder of RETRY_FINAGLE_SLICES slices over ttl, in milli-units */
  int64_t deposit, withdrawal, reserve;
  int64_t slices[RETRY_FINAGLE_SLICES];
  int64_t slice_ns;
  int64_t cur_slice_start_ns;
  int cur;
} retry_finagle_budget;

/* Starts an empty window at now_ns. b is the caller's storage; cfg is copied. */
void retry_finagle_budget_init(retry_finagle_budget *b, const retry_finagle_budget_config *cfg,
                               int64_t now_ns);
/* Rolls the window forward to now_ns: slices older than ttl expire. Finagle's window rolls at
 * most once a slice width and restarts its slice at the roll time, so when it advances changes
 * what it holds; deposit and try_withdraw advance by themselves. A time before the last
 * advance changes nothing. */
void retry_finagle_budget_advance(retry_finagle_budget *b, int64_t now_ns);
/* Records one request (the original attempt of a call) at now_ns, after advancing to it. */
void retry_finagle_budget_deposit(retry_finagle_budget *b, int64_t now_ns);
/* Takes one retry from the budget at now_ns, after advancing to it. Returns whether it was
 * granted. */
bool retry_finagle_budget_try_withdraw(retry_finagle_budget *b, int64_t now_ns);
/* Returns how many retries the budget would grant from the window as it stands (as of the
 * last advance, deposit or withdrawal): (window sum + reserve) / cost of one retry. Call
 * retry_finagle_budget_advance first for the balance at a given time. May be negative once
 * deposits expire behind later withdrawals. */
int64_t retry_finagle_budget_balance(const retry_finagle_budget *b);

/* }================================================================== */

/* {==================================================================
 * Envoy retry budget
 * =================================================================== */

typedef struct retry_envoy_budget {
  retry_envoy_budget_config cfg; /* read-only */
  int64_t active_requests;       /* read-only: attempts in flight to the target */
  int64_t active_retries;        /* read-only: retries holding the budget */
} retry_envoy_budget;

/* Starts with nothing active. b is the caller's storage; cfg is copied. */
void retry_envoy_budget_init(retry_envoy_budget *b, const retry_envoy_budget_config *cfg);
/* An attempt (original or retry) started / ended. */
void retry_envoy_budget_request_start(retry_envoy_budget *b);
void retry_envoy_budget_request_end(retry_envoy_budget *b);
/* Takes one concurrent-retry slot when active_retries < max(trunc(percent/100 *
 * active_requests), min_retry_concurrency). Returns whether it was granted. */
bool retry_envoy_budget_try_acquire(retry_envoy_budget *b);
/* Gives back a slot taken by try_acquire (the retry finished). */
void retry_envoy_budget_release(retry_envoy_budget *b);

/* }================================================================== */

/* {==================================================================
 * Client-side adaptive throttling
 * =================================================================== */

#define RETRY_ADAPTIVE_BINS 100
typedef struct retry_adaptive {
  retry_adaptive_config cfg; /* read-only */
  /* private: ring of RETRY_ADAPTIVE_BINS bins over window_ns */
  int64_t requests[RETRY_ADAPTIVE_BINS];
  int64_t accepts[RETRY_ADAPTIVE_BINS];
  int64_t bin_ns;
  int64_t cur_bin_start_ns;
  int cur;
} retry_adaptive;

/* Starts an empty history at now_ns. a is the caller's storage; cfg is copied. */
void retry_adaptive_init(retry_adaptive *a, const retry_adaptive_config *cfg, int64_t now_ns);
/* Moves the history forward to the bin of now_ns: bins older than window_ns are cleared.
 * should_reject and record_response advance by themselves. A time before the current bin
 * changes nothing. */
void retry_adaptive_advance(retry_adaptive *a, int64_t now_ns);
/* Returns max(0, (requests - K * accepts) / (requests + padding)) over the history as it
 * stands (as of the last advance, rejection or response); 0 with no history and padding 0.
 * Call retry_adaptive_advance first for the probability at a given time. */
double retry_adaptive_reject_probability(const retry_adaptive *a);
/* Decides whether to reject one attempt locally at now_ns, after advancing to it: rejects iff
 * u < probability, u in [0, 1). A rejected attempt is counted as a request now; one let
 * through is counted when its response is recorded (as grpc-go's throttler does). Returns true
 * to reject. */
bool retry_adaptive_should_reject(retry_adaptive *a, int64_t now_ns, double u);
/* Records at now_ns, after advancing to it, the response to an attempt that was let through:
 * a request, and an accept unless the backend refused the work (accepted false: a status in
 * reject_statuses). */
void retry_adaptive_record_response(retry_adaptive *a, int64_t now_ns, bool accepted);

/* }================================================================== */

/* {==================================================================
 * Circuit breaker
 * =================================================================== */

/* Validates cfg (paths in err are field names: "window_size") and copies it. alloc may be
 * NULL. NULL on bad config (RETRY_ECONFIG) or no memory (RETRY_ENOMEM), details in err.
 * Returns a new breaker; free with retry_breaker_destroy. */
retry_breaker *retry_breaker_create(const retry_breaker_config *cfg, const retry_allocator *alloc,
                                    retry_error *err);
/* Frees b; NULL is a no-op. */
void retry_breaker_destroy(retry_breaker *b);
/* Asks to send one attempt at now_ns. Moves OPEN to HALF_OPEN once now_ns is strictly after
 * the end of open_duration (lazily, on this call only), then hands out a probe permit while
 * any is left. Returns whether the attempt may be sent. */
bool retry_breaker_allow(retry_breaker *b, int64_t now_ns);
/* Records at now_ns the result of an attempt that allow() admitted. Ignored while OPEN. */
void retry_breaker_record(retry_breaker *b, int64_t now_ns, bool failure);
/* Returns the state as the last allow or record left it: an OPEN breaker whose open_duration
 * has passed still reads OPEN until retry_breaker_allow moves it to HALF_OPEN. */
retry_breaker_state retry_breaker_state_get(const retry_breaker *b);
/* Returns how many times the breaker has opened. */
int64_t retry_breaker_n_opened(const retry_breaker *b);

/* }================================================================== */

/* {==================================================================
 * A target's parts
 * =================================================================== */

/* Returns a borrowed pointer to t's throttle (or breaker), valid until retry_target_destroy;
 * NULL when t is NULL or has none. */
retry_throttle *retry_target_throttle(retry_target *t);
retry_breaker *retry_target_breaker(retry_target *t);

/* Makes t draw on shared (the caller's storage, which must outlive t) instead of its own
 * throttle, so several targets keep one bucket: C-core's one throttle per server name for the
 * whole process (retry_throttle.cc, ServerRetryThrottleMap). Everything else on t stays its
 * own. shared NULL gives t back its own throttle, full. Returns 0, or RETRY_EINVAL when t has
 * no throttle. Not on the decision path: every later read of t's throttle follows it. */
int retry_target_share_throttle(retry_target *t, retry_throttle *shared);

/* }================================================================== */

#ifdef __cplusplus
}
#endif

#endif /* RETRY_PARTS_H */
