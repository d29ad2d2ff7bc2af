/*
 * retry_limit.h: client concurrency limits as Netflix's concurrency-limits library defines
 * them (concurrency-limits-core, com.netflix.concurrency.limits): the AIMD, Vegas and
 * Gradient2 limit algorithms (limit/AIMDLimit.java, VegasLimit.java, Gradient2Limit.java) and
 * the simple limiter in front of them (limiter/SimpleLimiter.java, AbstractLimiter.java): a
 * request is admitted while fewer than `limit` are in flight, and each one that ends feeds
 * its round-trip time back into the algorithm. Semantics and sources: docs/shared-state.md,
 * "Concurrency limits".
 *
 * Time comes in as int64 ns; randomness (Vegas's probe jitter) as a uniform the caller draws.
 * Nothing here reads a clock or allocates.
 */
#ifndef RETRY_LIMIT_H
#define RETRY_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum retry_limit_kind {
  RETRY_LIMIT_AIMD = 0, /* loss based: +1 per sample near the limit, x backoff_ratio per drop */
  RETRY_LIMIT_VEGAS,    /* delay based: queue = limit (1 - rtt_noload / rtt), TCP Vegas */
  RETRY_LIMIT_GRADIENT2 /* delay based: gradient of a long-term average RTT over the sample */
} retry_limit_kind;

/* Returns "aimd", "vegas", "gradient2"; a static string. */
const char *retry_limit_kind_name(retry_limit_kind k);

typedef struct retry_limit_config {
  retry_limit_kind kind;
  int32_t initial_limit; /* all: 20 */
  int32_t min_limit;     /* AIMD 20, Gradient2 20; Vegas has none (its floor is 1) */
  int32_t max_limit;     /* AIMD maxLimit 200, Vegas maxConcurrency 1000, Gradient2 200 */
  /* AIMD */
  double backoff_ratio; /* limit x this on a drop, in [0.5, 1): 0.9 */
  int64_t timeout_ns;   /* an RTT above this is a drop: 5 s */
  /* Vegas and Gradient2 */
  double smoothing; /* weight of the new estimate: Vegas 1.0, Gradient2 0.2; in (0, 1] */
  /* Vegas */
  int32_t alpha;            /* 0: 3 x log10root(limit) (the default); > 0: fixed */
  int32_t beta;             /* 0: 6 x log10root(limit); > 0: fixed */
  int32_t probe_multiplier; /* re-probe rtt_noload every jitter x this x limit samples: 30 */
  /* Gradient2 */
  int32_t queue_size;   /* growth allowed while latency is low: 4 */
  int32_t long_window;  /* samples of the long-term RTT average: 600 (warm-up 10) */
  double rtt_tolerance; /* >= 1: how much RTT growth is accepted before shrinking: 1.5 */
  /* BlockingLimiter (limiter/BlockingLimiter.java) around the limiter: a request above the
   * limit waits for a permit instead of being refused, up to block_timeout_ns (RETRY_NEVER:
   * without bound, BlockingLimiter.wrap(delegate)), and is refused only then. The engine
   * never waits: its caller keeps the waiting requests and tries retry_limit_try_acquire
   * again when a permit is released (the library's notifyAll) or gives up at the timeout. */
  bool blocking;            /* default false: refuse at once (SimpleLimiter) */
  int64_t block_timeout_ns; /* > 0 when blocking; default RETRY_NEVER */
} retry_limit_config;

/* Fills cfg with the library's defaults for kind (above). */
void retry_limit_config_init(retry_limit_config *cfg, retry_limit_kind kind);
/* Returns 0 when cfg is usable, else RETRY_ECONFIG with the first bad field's name in *field
 * (when field is not NULL; a static string). Allowed: initial_limit >= 1, max_limit >= 1,
 * min_limit in [0, max_limit] (an initial limit outside [min, max] is allowed, as the library
 * only warns); backoff_ratio in [0.5, 1) (AIMDLimit's precondition); timeout_ns > 0;
 * smoothing in (0, 1]; alpha, beta >= 0; probe_multiplier >= 1; queue_size >= 0; long_window
 * >= 1; rtt_tolerance >= 1 (Gradient2Limit's precondition) and finite; block_timeout_ns > 0. */
int retry_limit_config_check(const retry_limit_config *cfg, const char **field);

/* The library's Log10RootIntFunction with baseline 0: max(1, (int)log10(n)) below 1000 (1 for
 * n <= 1), (int)log10(n) from 1000 on. */
int32_t retry_limit_log10root(int32_t n);

typedef struct retry_limit {
  retry_limit_config cfg; /* read-only */
  int32_t limit;          /* read-only: the current limit, requests in flight */
  int64_t in_flight;      /* read-only: requests admitted and not yet ended */
  double estimated;       /* read-only (Vegas, Gradient2): the unrounded limit */
  int64_t rtt_noload_ns;  /* read-only (Vegas): the no-load RTT, 0 before the first sample */
  int64_t probe_count;    /* private (Vegas): samples since the last probe */
  double probe_jitter;    /* private (Vegas): in [0.5, 1) */
  double long_rtt_ns;     /* read-only (Gradient2): the long-term RTT average */
  double long_sum_ns;     /* private (Gradient2): sum of the warm-up samples */
  int32_t long_count;     /* private (Gradient2): warm-up samples so far (at most 10) */
} retry_limit;

/* Starts at cfg->initial_limit with nothing in flight. u, a uniform in [0, 1), draws Vegas's
 * first probe jitter (0.5 + 0.5 u; ignored by the others). cfg is copied and must pass
 * retry_limit_config_check (asserted). l is the caller's storage. */
void retry_limit_init(retry_limit *l, const retry_limit_config *cfg, double u);
/* The SimpleLimiter's acquire: when in_flight < limit, counts one more in flight and returns
 * true; otherwise returns false (the request is rejected) and changes nothing. */
bool retry_limit_try_acquire(retry_limit *l);
/* A request admitted by retry_limit_try_acquire ended (AbstractLimiter's listener). in_flight
 * is decremented. With sample true, the algorithm takes one sample: rtt_ns (the request's
 * time from acquire to end), in_flight_at_start (the count its acquire left, itself included),
 * did_drop (onDropped; false is onSuccess). With sample false (onIgnore) nothing else
 * happens. u, a uniform in [0, 1), draws Vegas's next probe jitter when it probes. */
void retry_limit_release(retry_limit *l, bool sample, int64_t rtt_ns, int64_t in_flight_at_start,
                         bool did_drop, double u);
/* The algorithm alone (Limit.onSample), without the in-flight count: for tests and callers
 * that keep their own count. Returns the new limit. */
int32_t retry_limit_on_sample(retry_limit *l, int64_t rtt_ns, int64_t in_flight, bool did_drop,
                              double u);

#ifdef __cplusplus
}
#endif

#endif /* RETRY_LIMIT_H */
