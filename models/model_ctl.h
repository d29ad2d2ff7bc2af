/*
 * model_ctl.h: capacity and health control of a service's replicas (issue 24, items 5 and 7):
 * Envoy's outlier detection in each caller's load balancer, active health checks, a replica
 * that takes itself out of service while a dependency fails, a Kubernetes HPA, and scale
 * events by hand. The configs below are plain structs the scenario loader fills; the world's
 * side is model_ctl.c (decision cores: model_eject.c, model_hpa.c). A service with none of
 * them (model_ctl_cfg_on false) costs nothing: its replicas are its configured ones, always in
 * service, and its load balancer is the plain one.
 */
#ifndef MODEL_CTL_H
#define MODEL_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "models/model_eject.h"
#include "models/model_hpa.h"

#define MODEL_MAX_SCALE_EVENTS 16 /* scale events per service */

/* Active health checks of every replica (Kubernetes' readiness probe; Envoy's health_check).
 * A probe fails when the replica is down (a `down` fault), has no worker (a `capacity` fault
 * of 0), has a full queue, or would make the probe wait longer than timeout (its queue times
 * the mean service time over its workers). The probe itself costs the replica nothing. */
typedef struct model_health_cfg {
  bool on;
  int64_t interval_ns; /* between probes, 10 s (periodSeconds) */
  int64_t timeout_ns;  /* 1 s (timeoutSeconds) */
  int32_t unhealthy;   /* consecutive failures that take it out, 3 (failureThreshold) */
  int32_t healthy;     /* consecutive successes that bring it back, 1 (successThreshold) */
} model_health_cfg;

/* A replica takes itself out of service after after_failures consecutive failed calls to its
 * dependency, and returns after return_after_successes consecutive successful probes of it
 * (one every probe_interval while it is out: the dependency has a replica in service whose
 * probe, as a health check's with timeout 1 s, passes). */
typedef struct model_self_eject_cfg {
  bool on;
  int32_t dependency;             /* index of the service called (one of this one's calls) */
  int32_t after_failures;         /* >= 1, 3 */
  int32_t return_after_successes; /* >= 1, 1 */
  int64_t probe_interval_ns;      /* > 0, 1 s */
} model_self_eject_cfg;

/* A scale event by hand: the service runs `replicas` replicas from at_ns on. */
typedef struct model_scale_event {
  int64_t at_ns;
  int64_t startup_delay_ns; /* of the replicas it adds, -1: the service's (startup_delay_ns) */
  int32_t replicas;         /* 1 .. MODEL_MAX_REPLICAS */
} model_scale_event;

typedef struct model_ctl_cfg {
  bool outlier_on;
  model_eject_cfg outlier; /* outlier_detection: applied per caller-to-this-service edge */
  model_health_cfg health;
  model_self_eject_cfg self_eject;
  bool autoscaler_on;
  model_hpa_cfg hpa;        /* autoscaler */
  int64_t startup_delay_ns; /* a new replica serves this long after it is added, >= 0 */
  int32_t n_scale;          /* scale events, in time order */
  model_scale_event scale[MODEL_MAX_SCALE_EVENTS];
  /* Replicas allocated for the run: the most the service may ever run (the autoscaler's max,
   * the largest scale event), >= the configured count; 0 when nothing changes the count. A
   * later rule may raise it before the world is made. */
  int32_t replicas_max;
} model_ctl_cfg;

/* Whether a service's ctl config (NULL: none) asks for anything. */
static inline bool model_ctl_cfg_on(const model_ctl_cfg *c) {
  return c != NULL &&
         (c->outlier_on || c->health.on || c->self_eject.on || c->autoscaler_on || c->n_scale > 0 ||
          c->replicas_max > 0); /* an operator's `replicas` action (expt_scenario_ops.c) */
}

/* Fills c with every part off and each part's defaults (the values in the comments above;
 * the outlier detector's are Envoy's, model_eject_cfg_default; the autoscaler's Kubernetes',
 * model_hpa_cfg_default). */
void model_ctl_cfg_default(model_ctl_cfg *c);

struct model_world;
/* Sets service svc's replica count to n at now_ns (an operator's action, a scale event): it
 * is clamped to [1, the replicas allocated for the run]; replicas added serve after the
 * service's startup delay, replicas removed take no new request and finish what they hold.
 * An autoscaler hears of it as Kubernetes' controller hears of a hand-set spec.replicas.
 * Returns the count set, or -1 when svc has no replicas to change (its config has no
 * autoscaler and no scale event, so only its configured replicas exist). */
int32_t model_world_set_replicas(struct model_world *w, int svc, int32_t n, int64_t now_ns);
/* The same with the added replicas' startup delay given (delay_ns >= 0), or the service's
 * (delay_ns < 0): an operator's `replicas` action. */
int32_t model_world_set_replicas_delay(struct model_world *w, int svc, int32_t n,
                                       int64_t delay_ns, int64_t now_ns);

#endif /* MODEL_CTL_H */
