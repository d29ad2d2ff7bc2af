/*
 * model_eject.c: Envoy's outlier detection (models/model_eject.h has the contract, the
 * sources and what is left out). It owns nothing but the caller's struct. Invariants: bit i of
 * e->ejected is set exactly for the hosts ejected, never for i >= n_hosts, and the active count
 * Envoy keeps is its population count (one fact, not two to keep in step).
 *
 * The order of the rules is Envoy's and matters: in a response, the gateway counter is looked
 * at before the 5xx counter; in a tick, returns come first, then the bucket swap, the success
 * rate pass, the failure percentage pass, and the backoff decrement last, so a host that
 * returned in this tick keeps its multiplier until the next one.
 */
#include "models/model_eject.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#define MS INT64_C(1000000)

/* {==================================================================
 * Configuration
 * =================================================================== */

void model_eject_cfg_default(model_eject_cfg *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->interval_ns = 10000 * MS;
  cfg->base_ejection_ns = 30000 * MS;
  cfg->max_ejection_ns = 300000 * MS; /* 10 x the default base (DEFAULT_MAX_EJECTION_TIME_MS) */
  cfg->max_jitter_ns = 0;
  cfg->consecutive_5xx = 5;
  cfg->consecutive_gateway = 5;
  cfg->consecutive_local = 5;
  cfg->max_ejection_pct = 10;
  cfg->always_eject_one_host = false;
  cfg->enforcing_5xx = 100;
  cfg->enforcing_gateway = 0;
  cfg->enforcing_local = 100;
  cfg->enforcing_sr = 100;
  cfg->enforcing_sr_local = 100;
  cfg->enforcing_fp = 0;
  cfg->enforcing_fp_local = 0;
  cfg->sr_min_hosts = 5;
  cfg->sr_request_volume = 100;
  cfg->sr_stdev_factor = 1900;
  cfg->fp_threshold = 85;
  cfg->fp_min_hosts = 5;
  cfg->fp_request_volume = 50;
  cfg->split_local = false;
}

static int bad(retry_error *err, const char *path, const char *msg) {
  retry_error_set(err, RETRY_ECONFIG, NULL, path, -1, -1, "%s", msg);
  return RETRY_ECONFIG;
}

int model_eject_cfg_check(const model_eject_cfg *cfg, retry_error *err) {
  if (cfg->interval_ns <= 0) return bad(err, "outlier_detection.interval", "must be > 0");
  if (cfg->base_ejection_ns <= 0)
    return bad(err, "outlier_detection.base_ejection_time", "must be > 0");
  /* Envoy refuses a cluster whose max_ejection_time is below base_ejection_time. */
  if (cfg->max_ejection_ns < cfg->base_ejection_ns)
    return bad(err, "outlier_detection.max_ejection_time",
               "max_ejection_time cannot be smaller than base_ejection_time");
  if (cfg->max_jitter_ns < 0 || cfg->max_jitter_ns / MS >= UINT32_MAX)
    return bad(err, "outlier_detection.max_ejection_time_jitter", "must be >= 0 and < 49 days");
  const uint32_t pcts[] = {cfg->max_ejection_pct, cfg->enforcing_5xx,      cfg->enforcing_gateway,
                           cfg->enforcing_local,  cfg->enforcing_sr,       cfg->enforcing_sr_local,
                           cfg->enforcing_fp,     cfg->enforcing_fp_local, cfg->fp_threshold};
  for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
    if (pcts[i] > 100) return bad(err, "outlier_detection", "percentages must be 0..100");
  return RETRY_OK;
}

int model_eject_init(model_eject *e, const model_eject_cfg *cfg, int32_t n_hosts,
                     retry_error *err) {
  int rc = model_eject_cfg_check(cfg, err);
  if (rc != RETRY_OK) return rc;
  if (n_hosts < 0 || n_hosts > MODEL_EJECT_MAX_HOSTS) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "a cluster holds 0..64 hosts, not %d",
                    (int)n_hosts);
    return RETRY_EINVAL;
  }
  memset(e, 0, sizeof *e);
  e->cfg = *cfg;
  e->n_hosts = n_hosts;
  for (int k = 0; k < 2; k++)
    e->sr_mean[k] = e->sr_threshold[k] = -1;
  return RETRY_OK;
}

void model_eject_set_hosts(model_eject *e, int32_t n_hosts) {
  assert(n_hosts >= 0 && n_hosts <= MODEL_EJECT_MAX_HOSTS);
  for (int32_t i = n_hosts; i < MODEL_EJECT_MAX_HOSTS; i++)
    memset(&e->hosts[i], 0, sizeof e->hosts[i]); /* leaving hosts lose their monitor */
  for (int32_t i = e->n_hosts; i < n_hosts; i++)
    memset(&e->hosts[i], 0, sizeof e->hosts[i]); /* joining hosts start fresh */
  uint64_t keep = n_hosts == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n_hosts) - 1;
  e->ejected &= keep;
  e->n_hosts = n_hosts;
}

/* }================================================================== */

/* {==================================================================
 * Ejecting and returning (DetectorImpl::ejectHost, unejectHost)
 * =================================================================== */

int32_t model_eject_n_ejected(const model_eject *e) {
  int32_t n = 0;
  for (uint64_t m = e->ejected; m != 0; m &= m - 1)
    n++;
  return n;
}

uint64_t model_eject_in_service(const model_eject *e) {
  uint64_t all = e->n_hosts == 64 ? ~UINT64_C(0) : (UINT64_C(1) << e->n_hosts) - 1;
  return all & ~e->ejected;
}

static uint32_t enforcing_pct(const model_eject_cfg *c, model_eject_type t) {
  switch (t) {
    case MODEL_EJECT_CONSECUTIVE_5XX: return c->enforcing_5xx;
    case MODEL_EJECT_CONSECUTIVE_GATEWAY: return c->enforcing_gateway;
    case MODEL_EJECT_SUCCESS_RATE: return c->enforcing_sr;
    case MODEL_EJECT_CONSECUTIVE_LOCAL: return c->enforcing_local;
    case MODEL_EJECT_SUCCESS_RATE_LOCAL: return c->enforcing_sr_local;
    case MODEL_EJECT_FAILURE_PCT: return c->enforcing_fp;
    case MODEL_EJECT_FAILURE_PCT_LOCAL: return c->enforcing_fp_local;
    case MODEL_EJECT_N_TYPES: break;
  }
  assert(0);
  return 0;
}

/* Envoy's runtime featureEnabled: no draw at 0 or 100, so a stream is only consumed where
 * the outcome is random. */
static bool enforced(uint32_t pct, gsl_rng *r) {
  if (pct == 0) return false;
  if (pct >= 100) return true;
  assert(r != NULL && "an enforcing percent strictly between 0 and 100 needs a stream");
  return gsl_rng_uniform_int(r, 100) < pct;
}

/* One detection of type t for host (in service). Returns whether it was ejected. */
static bool eject(model_eject *e, int32_t host, model_eject_type t, int64_t now_ns, gsl_rng *r) {
  e->stats.detected[t]++;
  int32_t active = model_eject_n_ejected(e);
  uint32_t max_pct = e->cfg.max_ejection_pct > 100 ? 100 : e->cfg.max_ejection_pct;
  /* The percent after this ejection, as a double, exactly as Envoy divides. */
  double after_pct = 100.0 * (double)(active + 1) / (double)e->n_hosts;
  bool allowed = after_pct <= (double)max_pct || (e->cfg.always_eject_one_host && active == 0);
  if (!allowed) {
    e->stats.overflow++;
    return false;
  }
  if (!enforced(enforcing_pct(&e->cfg, t), r)) return false;
  model_eject_host *h = &e->hosts[host];
  e->ejected |= UINT64_C(1) << host;
  e->stats.enforced[t]++;
  e->stats.enforced_total++;
  h->n_ejections++;
  h->ejected_at_ns = now_ns;
  h->jitter_ns = 0;
  if (e->cfg.max_jitter_ns > 0) { /* Envoy: random % (jitter_ms + 1), whole milliseconds */
    assert(r != NULL && "an ejection jitter needs a stream");
    h->jitter_ns =
        (int64_t)gsl_rng_uniform_int(r, (unsigned long)(e->cfg.max_jitter_ns / MS) + 1) * MS;
  }
  /* The multiplier stops growing once base x backoff reaches max + base. */
  if ((double)h->backoff * (double)e->cfg.base_ejection_ns <
      (double)e->cfg.max_ejection_ns + (double)e->cfg.base_ejection_ns)
    h->backoff++;
  return true;
}

static void uneject(model_eject *e, int32_t host, int64_t now_ns) {
  model_eject_host *h = &e->hosts[host];
  e->ejected &= ~(UINT64_C(1) << host);
  /* Reset, so that a counter left near its threshold does not eject again at once. */
  h->c5xx = h->cgateway = h->clocal = 0;
  h->has_returned = true;
  h->returned_at_ns = now_ns;
  e->stats.returned++;
}

void model_eject_health_ok(model_eject *e, int32_t host, int64_t now_ns) {
  assert(host >= 0 && host < e->n_hosts);
  if (model_eject_is_ejected(e, host)) uneject(e, host, now_ns);
}

/* onConsecutiveErrorWorker: an ejected host ignores it; otherwise detect, try to eject, and
 * reset the counter that fired whatever the outcome. */
static bool consecutive(model_eject *e, int32_t host, model_eject_type t, int64_t now_ns,
                        gsl_rng *r) {
  if (model_eject_is_ejected(e, host)) return false;
  bool out = eject(e, host, t, now_ns, r);
  model_eject_host *h = &e->hosts[host];
  if (t == MODEL_EJECT_CONSECUTIVE_5XX)
    h->c5xx = 0;
  else if (t == MODEL_EJECT_CONSECUTIVE_GATEWAY)
    h->cgateway = 0;
  else
    h->clocal = 0;
  return out;
}

/* }================================================================== */

/* {==================================================================
 * Feeding results (DetectorHostMonitorImpl)
 * =================================================================== */

enum { EXT = 0, LOC = 1 };

bool model_eject_http(model_eject *e, int32_t host, int32_t code, int64_t now_ns, gsl_rng *r) {
  assert(host >= 0 && host < e->n_hosts);
  model_eject_host *h = &e->hosts[host];
  /* Every response counts toward the interval's volume, ejected host or not: Envoy's monitor
   * keeps counting responses still in flight to a host it took out. */
  h->total[EXT][e->cur]++;
  bool out = false;
  if (code >= 500 && code < 600) {
    /* A gateway error is also a 5xx: both counters move, the gateway one first. Any other 5xx
     * breaks a run of gateway errors without breaking the run of 5xx. */
    if (code == 502 || code == 503 || code == 504) {
      if (++h->cgateway == e->cfg.consecutive_gateway)
        out |= consecutive(e, host, MODEL_EJECT_CONSECUTIVE_GATEWAY, now_ns, r);
    } else {
      h->cgateway = 0;
    }
    if (++h->c5xx == e->cfg.consecutive_5xx)
      out |= consecutive(e, host, MODEL_EJECT_CONSECUTIVE_5XX, now_ns, r);
  } else {
    h->success[EXT][e->cur]++;
    h->c5xx = 0;
    h->cgateway = 0;
  }
  return out;
}

int32_t model_eject_grpc_to_http(int32_t grpc_status) {
  static const int16_t map[17] = {200, 499, 500, 400, 504, 404, 409, 403, 429,
                                  400, 409, 400, 501, 500, 503, 500, 401};
  return grpc_status >= 0 && grpc_status <= 16 ? map[grpc_status] : 500;
}

bool model_eject_grpc(model_eject *e, int32_t host, int32_t grpc_status, int64_t now_ns,
                      gsl_rng *r) {
  return model_eject_http(e, host, model_eject_grpc_to_http(grpc_status), now_ns, r);
}

static bool local_failure(model_eject *e, int32_t host, int64_t now_ns, gsl_rng *r) {
  model_eject_host *h = &e->hosts[host];
  h->total[LOC][e->cur]++;
  if (++h->clocal == e->cfg.consecutive_local)
    return consecutive(e, host, MODEL_EJECT_CONSECUTIVE_LOCAL, now_ns, r);
  return false;
}

static void local_success(model_eject *e, int32_t host) {
  model_eject_host *h = &e->hosts[host];
  h->total[LOC][e->cur]++;
  h->success[LOC][e->cur]++;
  h->clocal = 0;
}

bool model_eject_result(model_eject *e, int32_t host, model_eject_local res, int64_t now_ns,
                        gsl_rng *r) {
  assert(host >= 0 && host < e->n_hosts);
  if (!e->cfg.split_local) { /* everything becomes an HTTP code */
    switch (res) {
      case MODEL_EJECT_LOCAL_CONNECT_FAILED: return model_eject_http(e, host, 503, now_ns, r);
      case MODEL_EJECT_LOCAL_TIMEOUT: return model_eject_http(e, host, 504, now_ns, r);
      case MODEL_EJECT_LOCAL_CONNECT_SUCCESS: return false;
      case MODEL_EJECT_LOCAL_CONNECT_SUCCESS_FINAL:
        return model_eject_http(e, host, 200, now_ns, r);
      case MODEL_EJECT_EXT_REQUEST_FAILED: return model_eject_http(e, host, 500, now_ns, r);
      case MODEL_EJECT_EXT_REQUEST_SUCCESS: return model_eject_http(e, host, 200, now_ns, r);
    }
    return false;
  }
  switch (res) {
    case MODEL_EJECT_LOCAL_CONNECT_SUCCESS:
    case MODEL_EJECT_LOCAL_CONNECT_SUCCESS_FINAL: local_success(e, host); return false;
    case MODEL_EJECT_LOCAL_TIMEOUT:
    case MODEL_EJECT_LOCAL_CONNECT_FAILED: return local_failure(e, host, now_ns, r);
    case MODEL_EJECT_EXT_REQUEST_FAILED: return model_eject_http(e, host, 503, now_ns, r);
    case MODEL_EJECT_EXT_REQUEST_SUCCESS: {
      bool out = model_eject_http(e, host, 200, now_ns, r);
      local_success(e, host);
      return out;
    }
  }
  return false;
}

/* }================================================================== */

/* {==================================================================
 * The interval timer (DetectorImpl::onIntervalTimer)
 * =================================================================== */

double model_eject_host_success_rate(const model_eject *e, int32_t host, bool local) {
  const model_eject_host *h = &e->hosts[host];
  uint32_t last = e->cur ^ 1u, k = local ? LOC : EXT;
  if (h->total[k][last] == 0) return -1;
  return (double)h->success[k][last] * 100.0 / (double)h->total[k][last];
}

uint32_t model_eject_host_backoff(const model_eject *e, int32_t host) {
  return e->hosts[host].backoff;
}

/* The host's time is over when min(base x backoff, max) + jitter has passed since it left. */
static bool time_is_over(const model_eject *e, const model_eject_host *h, int64_t now_ns) {
  double t = (double)e->cfg.base_ejection_ns * (double)h->backoff;
  if (t > (double)e->cfg.max_ejection_ns) t = (double)e->cfg.max_ejection_ns;
  return (int64_t)t + h->jitter_ns <= now_ns - h->ejected_at_ns;
}

/* processSuccessRateEjections for one origin k, over the buckets just closed. */
static void rate_pass(model_eject *e, int k, int64_t now_ns, gsl_rng *r) {
  const model_eject_cfg *c = &e->cfg;
  e->sr_mean[k] = e->sr_threshold[k] = -1;
  /* Too small a cluster for either statistic: nothing to compare a host against. */
  if ((uint32_t)e->n_hosts < c->sr_min_hosts && (uint32_t)e->n_hosts < c->fp_min_hosts) return;
  uint32_t last = e->cur ^ 1u;
  double rate[MODEL_EJECT_MAX_HOSTS] = {0};
  uint64_t sr_valid = 0, fp_valid = 0;
  uint32_t n_sr = 0, n_fp = 0;
  double sum = 0;
  for (int32_t i = 0; i < e->n_hosts; i++) {
    const model_eject_host *h = &e->hosts[i];
    if (model_eject_is_ejected(e, i) || h->total[k][last] == 0) continue;
    rate[i] = (double)h->success[k][last] * 100.0 / (double)h->total[k][last];
    if (h->total[k][last] >= c->sr_request_volume) {
      sr_valid |= UINT64_C(1) << i;
      n_sr++;
      sum += rate[i];
    }
    if (h->total[k][last] >= c->fp_request_volume) {
      fp_valid |= UINT64_C(1) << i;
      n_fp++;
    }
  }
  model_eject_type sr_type = k == EXT ? MODEL_EJECT_SUCCESS_RATE : MODEL_EJECT_SUCCESS_RATE_LOCAL;
  model_eject_type fp_type = k == EXT ? MODEL_EJECT_FAILURE_PCT : MODEL_EJECT_FAILURE_PCT_LOCAL;
  if (n_sr > 0 && n_sr >= c->sr_min_hosts) {
    /* Mean and population standard deviation of the valid hosts' rates. */
    double mean = sum / (double)n_sr, var = 0;
    for (int32_t i = 0; i < e->n_hosts; i++)
      if ((sr_valid >> i) & 1u) var += (rate[i] - mean) * (rate[i] - mean);
    double threshold = mean - ((double)c->sr_stdev_factor / 1000.0) * sqrt(var / (double)n_sr);
    e->sr_mean[k] = mean;
    e->sr_threshold[k] = threshold;
    for (int32_t i = 0; i < e->n_hosts; i++)
      if (((sr_valid >> i) & 1u) && rate[i] < threshold) eject(e, i, sr_type, now_ns, r);
  }
  if (n_fp > 0 && n_fp >= c->fp_min_hosts) {
    for (int32_t i = 0; i < e->n_hosts; i++)
      /* A host the success-rate pass just ejected is skipped: Envoy asserts it cannot be. */
      if (((fp_valid >> i) & 1u) && !model_eject_is_ejected(e, i) &&
          100.0 - rate[i] >= (double)c->fp_threshold)
        eject(e, i, fp_type, now_ns, r);
  }
}

void model_eject_tick(model_eject *e, int64_t now_ns, gsl_rng *r) {
  uint32_t next = e->cur ^ 1u;
  for (int32_t i = 0; i < e->n_hosts; i++) {
    model_eject_host *h = &e->hosts[i];
    if (model_eject_is_ejected(e, i) && time_is_over(e, h, now_ns)) uneject(e, i, now_ns);
    /* The bucket written so far becomes "last interval"; the older one is emptied. */
    for (int k = 0; k < 2; k++)
      h->total[k][next] = h->success[k][next] = 0;
  }
  e->cur = next;
  /* Hosts that returned just now are in the pass, with the counts of the interval they spent
   * out (usually none, so they are skipped), as in Envoy. */
  rate_pass(e, EXT, now_ns, r);
  rate_pass(e, LOC, now_ns, r);
  /* A host that has been back for a whole interval earns one step of its multiplier back;
   * one that never left (has_returned false) has nothing to earn back. */
  for (int32_t i = 0; i < e->n_hosts; i++) {
    model_eject_host *h = &e->hosts[i];
    if (!model_eject_is_ejected(e, i) && h->has_returned &&
        now_ns - h->returned_at_ns >= e->cfg.interval_ns && h->backoff != 0)
      h->backoff--;
  }
}

/* }================================================================== */
