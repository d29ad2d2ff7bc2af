/*
 * retry_limit.c: Netflix concurrency-limits' AIMD, Vegas and Gradient2 limits and the simple
 * limiter that admits requests below the limit, on the caller's storage.
 *
 * Each algorithm follows the library's Java (concurrency-limits-core, read at commit 78a74b9,
 * January 2026), including its integer truncations: the limit a caller sees is always the
 * truncated estimate, and AIMD works on that integer. Nothing here allocates.
 */
#include "retry_limit.h"
#include "retry.h"

#include <assert.h>
#include <math.h>
#include <string.h>

const char *retry_limit_kind_name(retry_limit_kind k) {
  switch (k) {
    case RETRY_LIMIT_AIMD: return "aimd";
    case RETRY_LIMIT_VEGAS: return "vegas";
    case RETRY_LIMIT_GRADIENT2: return "gradient2";
  }
  return "unknown";
}

/* {==================================================================
 * Configuration
 * =================================================================== */

/* The Builders' defaults: AIMDLimit.Builder, VegasLimit.Builder, Gradient2Limit.Builder. */
void retry_limit_config_init(retry_limit_config *cfg, retry_limit_kind kind) {
  assert(cfg != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->kind = kind;
  cfg->initial_limit = 20;
  cfg->min_limit = kind == RETRY_LIMIT_VEGAS ? 1 : 20;
  cfg->max_limit = kind == RETRY_LIMIT_VEGAS ? 1000 : 200;
  cfg->backoff_ratio = 0.9;
  cfg->timeout_ns = 5 * RETRY_NS_PER_S;
  cfg->smoothing = kind == RETRY_LIMIT_GRADIENT2 ? 0.2 : 1.0;
  cfg->alpha = 0;
  cfg->beta = 0;
  cfg->probe_multiplier = 30;
  cfg->queue_size = 4;
  cfg->long_window = 600;
  cfg->rtt_tolerance = 1.5;
  cfg->blocking = false;
  cfg->block_timeout_ns = RETRY_NEVER;
}

int retry_limit_config_check(const retry_limit_config *cfg, const char **field) {
  assert(cfg != NULL);
  const char *bad = NULL;
  if (cfg->kind != RETRY_LIMIT_AIMD && cfg->kind != RETRY_LIMIT_VEGAS &&
      cfg->kind != RETRY_LIMIT_GRADIENT2)
    bad = "kind";
  else if (cfg->initial_limit < 1)
    bad = "initial_limit";
  else if (cfg->max_limit < 1)
    bad = "max_limit";
  else if (cfg->min_limit < 0 || cfg->min_limit > cfg->max_limit)
    bad = "min_limit";
  else if (!(cfg->backoff_ratio >= 0.5 && cfg->backoff_ratio < 1.0))
    bad = "backoff_ratio";
  else if (cfg->timeout_ns <= 0)
    bad = "timeout_ns";
  else if (!(cfg->smoothing > 0.0 && cfg->smoothing <= 1.0))
    bad = "smoothing";
  else if (cfg->alpha < 0)
    bad = "alpha";
  else if (cfg->beta < 0)
    bad = "beta";
  else if (cfg->probe_multiplier < 1)
    bad = "probe_multiplier";
  else if (cfg->queue_size < 0)
    bad = "queue_size";
  else if (cfg->long_window < 1)
    bad = "long_window";
  else if (!(cfg->rtt_tolerance >= 1.0) || isinf(cfg->rtt_tolerance))
    bad = "rtt_tolerance";
  else if (cfg->block_timeout_ns <= 0)
    bad = "block_timeout_ns";
  if (field != NULL) *field = bad;
  return bad == NULL ? RETRY_OK : RETRY_ECONFIG;
}

/* Log10RootIntFunction: a lookup of max(1, (int)log10(i)) for i < 1000 (log10(0) is -inf,
 * which Java's cast makes Integer.MIN_VALUE, so 0 gives 1 too), (int)log10(n) above. */
int32_t retry_limit_log10root(int32_t n) {
  if (n < 1000) {
    if (n <= 1) return 1;
    int32_t v = (int32_t)log10((double)n);
    return v > 1 ? v : 1;
  }
  return (int32_t)log10((double)n);
}

/* }================================================================== */

/* {==================================================================
 * The algorithms (each one's _update)
 * =================================================================== */

/* AIMDLimit._update works on the integer limit: a drop (or an RTT above the timeout)
 * multiplies and truncates; a sample while at least half the limit is in flight adds one;
 * then the clamp to [min, max]. */
static int32_t aimd_update(retry_limit *l, int64_t rtt_ns, int64_t in_flight, bool did_drop) {
  int64_t cur = l->limit;
  if (did_drop || rtt_ns > l->cfg.timeout_ns)
    cur = (int64_t)((double)cur * l->cfg.backoff_ratio);
  else if (in_flight * 2 >= cur)
    cur = cur + 1;
  if (cur < l->cfg.min_limit) cur = l->cfg.min_limit;
  if (cur > l->cfg.max_limit) cur = l->cfg.max_limit;
  return (int32_t)cur;
}

static void vegas_reset_jitter(retry_limit *l, double u) {
  /* ThreadLocalRandom.nextDouble(0.5, 1): the caller's uniform stands for it. */
  l->probe_jitter = 0.5 + 0.5 * u;
}

/* VegasLimit.updateEstimatedLimit: the queue estimate is ceil(limit (1 - noload / rtt)). A
 * drop decreases; below half the limit in flight nothing moves (no upward drift); else
 * queue <= threshold jumps by beta, queue < alpha increases by log10, queue > beta
 * decreases by log10, in between nothing. The result is clamped to [1, max] and smoothed. */
static int32_t vegas_estimate(retry_limit *l, int64_t rtt_ns, int64_t in_flight, bool did_drop) {
  double est = l->estimated;
  int32_t e = (int32_t)est;
  double queue = ceil(est * (1.0 - (double)l->rtt_noload_ns / (double)rtt_ns));
  double next;
  if (did_drop) {
    next = est - retry_limit_log10root(e);
  } else if ((double)(in_flight * 2) < est) {
    return e;
  } else {
    int32_t log = retry_limit_log10root(e);
    int32_t alpha = l->cfg.alpha > 0 ? l->cfg.alpha : 3 * log;
    int32_t beta = l->cfg.beta > 0 ? l->cfg.beta : 6 * log;
    int32_t threshold = log;
    if (queue <= threshold)
      next = est + beta;
    else if (queue < alpha)
      next = est + log;
    else if (queue > beta)
      next = est - log;
    else
      return e;
  }
  if (next > l->cfg.max_limit) next = l->cfg.max_limit;
  if (next < 1) next = 1;
  next = (1.0 - l->cfg.smoothing) * est + l->cfg.smoothing * next;
  l->estimated = next;
  return (int32_t)next;
}

/* VegasLimit._update: every sample counts towards the next probe; a probe (or the first
 * sample, or a new minimum) takes the sample as the no-load RTT and leaves the limit. */
static int32_t vegas_update(retry_limit *l, int64_t rtt_ns, int64_t in_flight, bool did_drop,
                            double u) {
  /* The library throws on rtt <= 0; a simulated request that took no time gives no sample. */
  if (rtt_ns <= 0) return (int32_t)l->estimated;
  l->probe_count++;
  if (l->probe_jitter * l->cfg.probe_multiplier * l->estimated <= (double)l->probe_count) {
    vegas_reset_jitter(l, u);
    l->probe_count = 0;
    l->rtt_noload_ns = rtt_ns;
    return (int32_t)l->estimated;
  }
  if (l->rtt_noload_ns == 0 || rtt_ns < l->rtt_noload_ns) {
    l->rtt_noload_ns = rtt_ns;
    return (int32_t)l->estimated;
  }
  return vegas_estimate(l, rtt_ns, in_flight, did_drop);
}

/* ExpAvgMeasurement(long_window, 10).add: the plain average of the first 10 samples, then
 * an exponential average with factor 2 / (window + 1). */
static double long_rtt_add(retry_limit *l, double rtt) {
  if (l->long_count < 10) {
    l->long_count++;
    l->long_sum_ns += rtt;
    l->long_rtt_ns = l->long_sum_ns / l->long_count;
  } else {
    double f = 2.0 / (l->cfg.long_window + 1.0);
    l->long_rtt_ns = l->long_rtt_ns * (1.0 - f) + rtt * f;
  }
  return l->long_rtt_ns;
}

/* Gradient2Limit._update. A long RTT above twice the sample decays by 5 % (the library's
 * update(v * 0.95), which changes the average but not the warm-up sum: a warm-up sample after
 * a decay recomputes the average from the sum, as there). Below half the limit in flight the
 * limit stays (app-limited). Else gradient = clamp(tolerance x long / short, 0.5, 1), new =
 * limit x gradient + queue_size, smoothed, clamped to [min, max]. */
static int32_t gradient2_update(retry_limit *l, int64_t rtt_ns, int64_t in_flight) {
  double est = l->estimated;
  double queue = l->cfg.queue_size;
  double shortr = (double)rtt_ns;
  double longr = long_rtt_add(l, shortr);
  if (shortr > 0 && longr / shortr > 2) l->long_rtt_ns *= 0.95;
  if ((double)in_flight < est / 2) return (int32_t)est;
  double g = shortr > 0 ? l->cfg.rtt_tolerance * longr / shortr : 1.0;
  if (g > 1.0) g = 1.0;
  if (g < 0.5) g = 0.5;
  double next = est * g + queue;
  next = est * (1.0 - l->cfg.smoothing) + next * l->cfg.smoothing;
  if (next > l->cfg.max_limit) next = l->cfg.max_limit;
  if (next < l->cfg.min_limit) next = l->cfg.min_limit;
  l->estimated = next;
  return (int32_t)next;
}

/* }================================================================== */

/* {==================================================================
 * The limiter
 * =================================================================== */

void retry_limit_init(retry_limit *l, const retry_limit_config *cfg, double u) {
  assert(l != NULL && cfg != NULL);
  int rc = retry_limit_config_check(cfg, NULL);
  assert(rc == RETRY_OK);
  (void)rc;
  memset(l, 0, sizeof *l);
  l->cfg = *cfg;
  l->limit = cfg->initial_limit;
  l->estimated = cfg->initial_limit;
  vegas_reset_jitter(l, u);
}

int32_t retry_limit_on_sample(retry_limit *l, int64_t rtt_ns, int64_t in_flight, bool did_drop,
                              double u) {
  assert(l != NULL);
  switch (l->cfg.kind) {
    case RETRY_LIMIT_AIMD: l->limit = aimd_update(l, rtt_ns, in_flight, did_drop); break;
    case RETRY_LIMIT_VEGAS: l->limit = vegas_update(l, rtt_ns, in_flight, did_drop, u); break;
    /* Gradient2 ignores didDrop: only the RTT moves it. */
    case RETRY_LIMIT_GRADIENT2: l->limit = gradient2_update(l, rtt_ns, in_flight); break;
  }
  return l->limit;
}

/* SimpleLimiter holds an AdjustableSemaphore of `limit` permits: tryAcquire succeeds while
 * fewer than limit are out. A limit lowered below the requests in flight refuses new ones
 * until enough have ended. */
bool retry_limit_try_acquire(retry_limit *l) {
  assert(l != NULL);
  if (l->in_flight >= l->limit) return false;
  l->in_flight++;
  return true;
}

void retry_limit_release(retry_limit *l, bool sample, int64_t rtt_ns, int64_t in_flight_at_start,
                         bool did_drop, double u) {
  assert(l != NULL && l->in_flight > 0);
  if (l->in_flight > 0) l->in_flight--;
  if (sample) retry_limit_on_sample(l, rtt_ns, in_flight_at_start, did_drop, u);
}

/* }================================================================== */
