/*
 * model_eject.h: Envoy's outlier detection for one cluster of up to 64 hosts (a service's
 * replicas), the decision core of issue 24 item 5. The caller feeds each response a host gave
 * (an HTTP code, a gRPC status, or a local-origin result such as a connect failure) and calls
 * the interval timer; the detector ejects by consecutive 5xx, consecutive gateway failures and
 * consecutive local-origin failures at once, by success rate and failure percentage at each
 * interval, and returns hosts when their ejection time is over. Caller-owned, fixed size, no
 * allocation. Invariant: bit i of `ejected` is set exactly when host i is out of service.
 *
 * Semantics taken from (read, not copied):
 *  - https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/outlier
 *  - https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/outlier_detection.proto
 *  - https://github.com/envoyproxy/envoy/blob/main/source/common/upstream/outlier_detection_impl.cc
 *    and outlier_detection_impl.h (DetectorImpl::ejectHost, onIntervalTimer,
 *    checkHostForUneject, processSuccessRateEjections, successRateEjectionThreshold,
 *    DetectorHostMonitorImpl::putHttpResponseCode, putResultNoLocalExternalSplit,
 *    putResultWithLocalExternalSplit; the DEFAULT_* constants)
 *  - https://github.com/envoyproxy/envoy/blob/main/source/common/grpc/status.cc
 *    (grpcToHttpStatus) and source/common/router/router.cc (a grpc-status in the response
 *    headers is mapped to an HTTP code for outlier detection)
 *  - The max-percent rule's history: envoyproxy/envoy#3263 (one host always ejectable),
 *    #27624 and #27909 (2023: the percent after this ejection must not exceed the maximum, no
 *    exception), #34796 (2024: always_eject_one_host restores the exception on request).
 *  - Rows of test/common/upstream/outlier_detection_impl_test.cc re-expressed in
 *    tests/test_model_eject.c.
 *
 * Modelled as Envoy does it:
 *  - Consecutive counters count on the worker; the ejection "posted to the main thread" runs
 *    at once here (no other response lands in between). A counter fires when it reaches its
 *    threshold exactly, and is reset by that detection whether or not the ejection is enforced;
 *    a host already ejected ignores detections (its counters then keep counting and are reset
 *    when it returns).
 *  - An ejection is allowed when 100 x (ejected + 1) / hosts <= max_ejection_percent, or when
 *    always_eject_one_host is set and no host is ejected; otherwise it counts as an overflow.
 *    With the default 10 % a cluster of fewer than 10 hosts therefore never ejects.
 *  - Enforcement: a detection with enforcing percent p ejects when p = 100, never when p = 0,
 *    else when a draw uniform in 0..99 is below p (Envoy's runtime featureEnabled).
 *  - Ejection time: min(base x backoff, max) + jitter, where backoff goes up by one at each
 *    enforced ejection (while backoff x base < max + base) and down by one at each interval
 *    tick at which the host is in service and has been back for at least one interval. A host
 *    returns at the first tick at which its time is over (ticks are the only clock).
 *  - Success rate and failure percentage use the requests of the last whole interval (two
 *    buckets swapped at each tick), among hosts in service with enough volume.
 *
 * Not modelled: priorities and per-priority checks (Envoy does not check them either), the
 * runtime overrides, extension monitors, event logging, active health checking beyond
 * model_eject_health_ok, grpc-status sent in trailers after headers (Envoy's router does not
 * map those; every gRPC status fed here is treated as a trailers-only response).
 */
#ifndef MODEL_EJECT_H
#define MODEL_EJECT_H

#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "retry/retry.h"

#define MODEL_EJECT_MAX_HOSTS 64

/* Envoy's OutlierEjectionType, in the order of its statistics. */
typedef enum model_eject_type {
  MODEL_EJECT_CONSECUTIVE_5XX,
  MODEL_EJECT_CONSECUTIVE_GATEWAY,
  MODEL_EJECT_SUCCESS_RATE,
  MODEL_EJECT_CONSECUTIVE_LOCAL,
  MODEL_EJECT_SUCCESS_RATE_LOCAL,
  MODEL_EJECT_FAILURE_PCT,
  MODEL_EJECT_FAILURE_PCT_LOCAL,
  MODEL_EJECT_N_TYPES
} model_eject_type;

/* Results that do not come with a response code (Envoy's Outlier::Result). */
typedef enum model_eject_local {
  MODEL_EJECT_LOCAL_CONNECT_FAILED,        /* no connection: 503 when errors are not split */
  MODEL_EJECT_LOCAL_TIMEOUT,               /* the upstream timed out: 504 when not split */
  MODEL_EJECT_LOCAL_CONNECT_SUCCESS,       /* connected, a response code follows (no-op unsplit) */
  MODEL_EJECT_LOCAL_CONNECT_SUCCESS_FINAL, /* connected, nothing follows: 200 unsplit */
  MODEL_EJECT_EXT_REQUEST_FAILED,          /* non-HTTP transaction failed: 500 unsplit, 503 split */
  MODEL_EJECT_EXT_REQUEST_SUCCESS          /* non-HTTP transaction succeeded: 200 */
} model_eject_local;

/* config.cluster.v3.OutlierDetection; percentages are integers 0..100. */
typedef struct model_eject_cfg {
  int64_t interval_ns;          /* interval, 10 s */
  int64_t base_ejection_ns;     /* base_ejection_time, 30 s */
  int64_t max_ejection_ns;      /* max_ejection_time, max(300 s, base); must be >= base */
  int64_t max_jitter_ns;        /* max_ejection_time_jitter, 0 (drawn in whole ms) */
  uint32_t consecutive_5xx;     /* 5 */
  uint32_t consecutive_gateway; /* consecutive_gateway_failure, 5 (502, 503, 504) */
  uint32_t consecutive_local;   /* consecutive_local_origin_failure, 5 (split only) */
  uint32_t max_ejection_pct;    /* max_ejection_percent, 10 */
  bool always_eject_one_host;   /* false */
  uint32_t enforcing_5xx;       /* enforcing_consecutive_5xx, 100 */
  uint32_t enforcing_gateway;   /* enforcing_consecutive_gateway_failure, 0 */
  uint32_t enforcing_local;     /* enforcing_consecutive_local_origin_failure, 100 */
  uint32_t enforcing_sr;        /* enforcing_success_rate, 100 */
  uint32_t enforcing_sr_local;  /* enforcing_local_origin_success_rate, 100 */
  uint32_t enforcing_fp;        /* enforcing_failure_percentage, 0 */
  uint32_t enforcing_fp_local;  /* enforcing_failure_percentage_local_origin, 0 */
  uint32_t sr_min_hosts;        /* success_rate_minimum_hosts, 5 */
  uint32_t sr_request_volume;   /* success_rate_request_volume, 100 per interval */
  uint32_t sr_stdev_factor;     /* success_rate_stdev_factor, 1900 (x 1/1000: 1.9) */
  uint32_t fp_threshold;        /* failure_percentage_threshold, 85 */
  uint32_t fp_min_hosts;        /* failure_percentage_minimum_hosts, 5 */
  uint32_t fp_request_volume;   /* failure_percentage_request_volume, 50 per interval */
  bool split_local;             /* split_external_local_origin_errors, false */
} model_eject_cfg;

/* One host's detector state (DetectorHostMonitorImpl). Private to model_eject.c. */
typedef struct model_eject_host {
  uint32_t c5xx, cgateway, clocal; /* consecutive counters */
  uint32_t backoff;                /* ejection-time multiplier (ejectTimeBackoff) */
  uint32_t n_ejections;            /* enforced ejections so far */
  bool has_returned;               /* returned at least once (lastUnejectionTime is set) */
  int64_t ejected_at_ns;           /* last enforced ejection */
  int64_t returned_at_ns;          /* last return to service */
  int64_t jitter_ns;               /* drawn at the last ejection */
  uint32_t total[2][2];            /* [external, local][current, last interval] requests */
  uint32_t success[2][2];          /* ... and the successes among them */
} model_eject_host;

typedef struct model_eject_stats {
  int64_t detected[MODEL_EJECT_N_TYPES]; /* ejections_detected_* */
  int64_t enforced[MODEL_EJECT_N_TYPES]; /* ejections_enforced_* */
  int64_t enforced_total;                /* ejections_enforced_total */
  int64_t overflow;                      /* ejections_overflow: refused by the max percent */
  int64_t returned;                      /* hosts returned to service */
} model_eject_stats;

typedef struct model_eject {
  /* read-only */
  model_eject_cfg cfg;
  int32_t n_hosts;  /* hosts in the cluster, 0 .. 64 */
  uint64_t ejected; /* bit i: host i is ejected */
  model_eject_stats stats;
  double sr_mean[2];      /* [external, local]: last interval's mean success rate, -1 if none */
  double sr_threshold[2]; /* ... and the ejection threshold, -1 if none */
  /* private */
  uint32_t cur; /* index of the bucket being written, 0 or 1 */
  model_eject_host hosts[MODEL_EJECT_MAX_HOSTS];
} model_eject;

/* Fills cfg with Envoy's defaults (the values in the comments above). */
void model_eject_cfg_default(model_eject_cfg *cfg);
/* Checks cfg: RETRY_OK, or RETRY_ECONFIG with err's path naming the field
 * ("outlier_detection.max_ejection_time"). err may be NULL. */
int model_eject_cfg_check(const model_eject_cfg *cfg, retry_error *err);

/* Initializes e (the caller's storage) for n_hosts hosts (0..64), all in service; cfg is
 * copied. Returns RETRY_OK, or RETRY_ECONFIG (bad cfg) / RETRY_EINVAL (n_hosts) with e
 * untouched. Allocates nothing. */
int model_eject_init(model_eject *e, const model_eject_cfg *cfg, int32_t n_hosts, retry_error *err);

/* Membership change (an autoscaler, an operator): hosts n_hosts.. leave the cluster (their
 * state is dropped, as Envoy erases their monitors) and new hosts join in service with fresh
 * state. */
void model_eject_set_hosts(model_eject *e, int32_t n_hosts);

/* A response with HTTP status code from host at now_ns. r draws the enforcement and the
 * jitter; it may be NULL when every enforcing percent is 0 or 100 and the jitter is 0.
 * Returns whether this response ejected the host. */
bool model_eject_http(model_eject *e, int32_t host, int32_t code, int64_t now_ns, gsl_rng *r);
/* A gRPC status (0..16) from host, fed as Envoy's router does: mapped by
 * model_eject_grpc_to_http (UNAVAILABLE 503 and DEADLINE_EXCEEDED 504 are gateway errors;
 * UNKNOWN, INTERNAL, DATA_LOSS 500 and UNIMPLEMENTED 501 are other 5xx; the rest are not). */
bool model_eject_grpc(model_eject *e, int32_t host, int32_t grpc_status, int64_t now_ns,
                      gsl_rng *r);
/* A result without a response code, routed by split_local as Envoy does. */
bool model_eject_result(model_eject *e, int32_t host, model_eject_local res, int64_t now_ns,
                        gsl_rng *r);
/* Envoy's grpcToHttpStatus: 0 -> 200, 1 -> 499, 2 -> 500, 3 -> 400, 4 -> 504, 5 -> 404,
 * 6 -> 409, 7 -> 403, 8 -> 429, 9 -> 400, 10 -> 409, 11 -> 400, 12 -> 501, 13 -> 500,
 * 14 -> 503, 15 -> 500, 16 -> 401, anything else 500. */
int32_t model_eject_grpc_to_http(int32_t grpc_status);

/* The interval timer at now_ns (the caller calls it every interval_ns): returns hosts whose
 * ejection time is over, closes the interval's success-rate buckets, runs success-rate and
 * failure-percentage detection, and lowers the backoff of hosts back for an interval. */
void model_eject_tick(model_eject *e, int64_t now_ns, gsl_rng *r);

/* An active health check passed for host (successful_active_health_check_uneject_host):
 * an ejected host returns to service now. */
void model_eject_health_ok(model_eject *e, int32_t host, int64_t now_ns);

/* Hosts in service: bit i set for each host i < n_hosts not ejected. */
uint64_t model_eject_in_service(const model_eject *e);
/* Number of hosts ejected (ejections_active). */
int32_t model_eject_n_ejected(const model_eject *e);
/* Whether host is ejected. */
static inline bool model_eject_is_ejected(const model_eject *e, int32_t host) {
  return host >= 0 && host < MODEL_EJECT_MAX_HOSTS && ((e->ejected >> host) & 1u) != 0;
}
/* host's success rate in the last interval, percent, for external (local = false) or local
 * origin requests; -1 when it had no request. */
double model_eject_host_success_rate(const model_eject *e, int32_t host, bool local);
/* host's ejection-time multiplier now (Envoy's ejectTimeBackoff). */
uint32_t model_eject_host_backoff(const model_eject *e, int32_t host);

#endif /* MODEL_EJECT_H */
