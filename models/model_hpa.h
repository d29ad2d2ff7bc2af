/*
 * model_hpa.h: a Kubernetes Horizontal Pod Autoscaler over abstract inputs, the decision core
 * of issue 24 item 7. Each sync the caller reports how busy the ready replicas were and how
 * many are starting; the controller answers with the replica count to run, applying the
 * replica calculator (ratio to target, tolerance, not-ready and missing replicas), the
 * stabilization windows, the scale-up and scale-down rate policies and min/max. It owns its
 * recommendation and scale-event histories in arrays sized at creation; a sync never allocates.
 *
 * Semantics taken from (read, not copied):
 *  - https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
 *    (algorithm details, tolerance 0.1, sync period 15 s, behavior, default policies)
 *  -
 * https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/podautoscaler/horizontal.go
 *    (reconcileAutoscaler, normalizeDesiredReplicas[WithBehaviors], stabilizeRecommendation
 *    [WithBehaviors], convertDesiredReplicasWith{Rules,BehaviorRate},
 * calculateScale{Up,Down}Limit*, storeScaleEvent, getReplicasChangePerPeriod,
 * recordInitialRecommendation)
 *  -
 * https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/podautoscaler/replica_calculator.go
 *    (GetResourceReplicas, Tolerances.isWithin, groupPods)
 *  - https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/autoscaling/v2/defaults.go
 *    (behavior defaults filled only when spec.behavior is present)
 *
 * What is modelled, in Kubernetes' own words where they exist:
 *  - One Resource metric with a target averageUtilization in integer percent. Utilization is
 *    the sum of the ready replicas' busy ratios over their number, times 100, truncated to an
 *    integer (Kubernetes divides integer milli-values), then usageRatio = util / target.
 *  - Tolerance per direction (the global --horizontal-pod-autoscaler-tolerance, 0.1; newer
 *    releases take behavior.scaleUp/scaleDown.tolerance): no change while
 *    1 - tol_down <= usageRatio <= 1 + tol_up.
 *  - Starting replicas are Kubernetes' "unready" pods: left out of the average, and on a
 *    scale-up counted as 0 % busy (the conservative re-run). Missing replicas (ready, no
 *    measurement) count 0 % on a scale-up and max(100 %, target) on a scale-down. A re-run
 *    that lands within tolerance or flips direction keeps the current count.
 *  - behavior present (the default of model_hpa_cfg_default): stabilization brings the
 *    current count within [min of recommendations in the scale-up window, max of those in the
 *    scale-down window]; rate policies (Pods/Percent per period, selectPolicy Max/Min/
 *    Disabled) count the replicas added and removed within each policy's period.
 *  - behavior absent (legacy = true): only the scale-down window (max of recommendations) and
 *    the fixed scale-up limit max(2 x current, 4) per sync.
 *  - The current count is the target's spec.replicas: the last count this controller set or
 *    one set by hand (model_hpa_set_replicas). A count outside [min, max] is brought back to
 *    the bound at the next sync without stabilization, as the controller does; a count of 0
 *    with min > 0 disables autoscaling.
 *
 * Not modelled: several metrics (the max over metrics), Pods/Object/External metrics, the CPU
 * initialization period and readiness delay (the caller decides which replicas are starting),
 * the controller's work-queue jitter (syncs happen exactly when the caller calls), failed
 * scale updates, scale-to-zero.
 */
#ifndef MODEL_HPA_H
#define MODEL_HPA_H

#include <stdbool.h>
#include <stdint.h>

#include "retry/retry.h"

/* Kubernetes' defaults (the docs and horizontal.go). */
#define MODEL_HPA_DEFAULT_SYNC_NS INT64_C(15000000000) /* --horizontal-pod-autoscaler-sync-period \
                                                        */
#define MODEL_HPA_DEFAULT_DOWN_WINDOW_NS INT64_C(300000000000) /* --...-downscale-stabilization */
#define MODEL_HPA_DEFAULT_TOLERANCE 0.1 /* --horizontal-pod-autoscaler-tolerance */
#define MODEL_HPA_MAX_POLICIES 4 /* policies per direction (Kubernetes allows more; 4 is plenty) \
                                  */

typedef enum model_hpa_policy_type {
  MODEL_HPA_PODS,   /* change by at most value replicas per period */
  MODEL_HPA_PERCENT /* change by at most value percent of the count at the period's start */
} model_hpa_policy_type;

typedef enum model_hpa_select {
  MODEL_HPA_SELECT_MAX,     /* the policy allowing the largest change (Kubernetes' default) */
  MODEL_HPA_SELECT_MIN,     /* the policy allowing the smallest change */
  MODEL_HPA_SELECT_DISABLED /* no change in this direction */
} model_hpa_select;

typedef struct model_hpa_policy {
  model_hpa_policy_type type;
  int32_t value; /* replicas (PODS) or percent (PERCENT), > 0 */
  int64_t
      period_ns; /* the sliding window the change is counted over, > 0 (at most 30 min in k8s) */
} model_hpa_policy;

/* One direction's behavior (HPAScalingRules). */
typedef struct model_hpa_rules {
  int64_t window_ns;       /* stabilizationWindowSeconds, >= 0 */
  model_hpa_select select; /* selectPolicy */
  int32_t n_policies;      /* 1 .. MODEL_HPA_MAX_POLICIES (ignored when DISABLED) */
  model_hpa_policy policies[MODEL_HPA_MAX_POLICIES];
} model_hpa_rules;

typedef struct model_hpa_cfg {
  int32_t min_replicas;          /* minReplicas, >= 1 */
  int32_t max_replicas;          /* maxReplicas, >= min_replicas */
  int32_t target_pct;            /* target averageUtilization in percent of a replica, > 0 */
  int64_t sync_period_ns;        /* how often the caller syncs (sizes the histories), > 0 */
  double tolerance_up;           /* scale up only above 1 + this ratio, >= 0 */
  double tolerance_down;         /* scale down only below 1 - this ratio, >= 0 */
  bool legacy;                   /* true: spec.behavior absent (fixed limits, see the header) */
  int64_t legacy_down_window_ns; /* the legacy path's window (the controller flag), >= 0 */
  model_hpa_rules up;            /* behavior.scaleUp (legacy = false) */
  model_hpa_rules down;          /* behavior.scaleDown (legacy = false) */
} model_hpa_cfg;

/* The measurement of one sync. */
typedef struct model_hpa_sample {
  int32_t n_ready;   /* ready replicas with a measurement, >= 0 */
  int32_t n_unready; /* replicas starting (not yet ready), >= 0 */
  int32_t n_missing; /* ready replicas without a measurement, >= 0 */
  double busy_sum;   /* sum over the n_ready replicas of busy / capacity over the last period */
} model_hpa_sample;

/* Counters, read-only for the caller. */
typedef struct model_hpa_stats {
  int64_t n_syncs;       /* syncs run */
  int64_t n_scale_ups;   /* syncs that raised the count */
  int64_t n_scale_downs; /* syncs that lowered it */
  int64_t n_no_metrics;  /* syncs with no ready measured replica (no decision, as in k8s) */
  int64_t n_limited;     /* syncs whose stabilized recommendation a rate or min/max changed */
  int32_t last_util_pct; /* utilization of the last sync with metrics, percent */
  int32_t last_raw;      /* the calculator's recommendation of the last sync */
} model_hpa_stats;

typedef struct model_hpa model_hpa;

/* Fills cfg with Kubernetes' defaults for an HPA with spec.behavior present but empty: min 1,
 * max 10, target 80 % (the API's default metric), sync 15 s, tolerance 0.1 both ways;
 * scale-up window 0 s, select Max over {4 pods per 15 s, 100 % per 15 s}; scale-down window
 * 300 s, select Max over {100 % per 15 s}. legacy = false. */
void model_hpa_cfg_default(model_hpa_cfg *cfg);

/* Checks cfg; returns RETRY_OK, or RETRY_ECONFIG with err's path naming the field
 * ("hpa.max_replicas") and the message what is allowed. err may be NULL. */
int model_hpa_cfg_check(const model_hpa_cfg *cfg, retry_error *err);

/* Creates a controller for a target whose spec.replicas is replicas at now_ns (the first sync
 * records it as the initial recommendation, as the controller does). cfg is copied. alloc may
 * be NULL (libc). NULL on a bad cfg (RETRY_ECONFIG in err) or out of memory (RETRY_ENOMEM).
 * Returns a new object; free with model_hpa_destroy. */
model_hpa *model_hpa_create(const model_hpa_cfg *cfg, int32_t replicas,
                            const retry_allocator *alloc, retry_error *err);
/* Frees h; NULL is a no-op. */
void model_hpa_destroy(model_hpa *h);

/* One sync at now_ns (non-decreasing across calls; the caller calls every sync_period_ns).
 * Returns the replica count the target should run from now on (its new spec.replicas), which
 * is also model_hpa_replicas(h). Never allocates. */
int32_t model_hpa_sync(model_hpa *h, const model_hpa_sample *s, int64_t now_ns);

/* An operator's action: sets the target's spec.replicas to replicas (>= 0). The controller
 * records no scale event for it (Kubernetes does not either) and reacts at its next sync. */
void model_hpa_set_replicas(model_hpa *h, int32_t replicas);

/* The target's spec.replicas now. */
int32_t model_hpa_replicas(const model_hpa *h);
/* Counters. Returns a borrowed pointer valid until model_hpa_destroy. */
const model_hpa_stats *model_hpa_get_stats(const model_hpa *h);

/* The replica calculator alone (exposed for tests and for the capacity estimate): the count
 * Kubernetes' GetResourceReplicas proposes for current spec.replicas and sample s, or current
 * when s has no ready measured replica. *util_pct (may be NULL) gets the utilization in
 * percent, -1 when there was none. Pure. */
int32_t model_hpa_recommend(const model_hpa_cfg *cfg, int32_t current, const model_hpa_sample *s,
                            int32_t *util_pct);

#endif /* MODEL_HPA_H */
