/*
 * model_capacity.h: the capacity estimate of a world before it runs (issue 23 item 6): from
 * the clients' rates, the call graph's fan-outs and branch probabilities and the services'
 * mean service times, each service's offered load against its capacity (replicas x workers /
 * mean service time), at each phase of the load profile. Without retries, faults, caches or
 * queueing: the load the first attempts alone bring, against the healthy fleet, so that a
 * world already saturated before its trigger is said to be before anything runs.
 */
#ifndef MODEL_CAPACITY_H
#define MODEL_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/model_config.h"

/* The utilization above which the estimate warns: at 0.9 an M/M/c queue's waits already grow
 * several-fold with small changes in load, and retries make any overload worse. */
#define MODEL_CAPACITY_WARN 0.9

/* The phases at which the load is evaluated: time 0, each client's start and stop, and each
 * time its rate profile has a point (after a step), within [0, duration). At most this many. */
#define MODEL_CAPACITY_MAX_PHASES 64

/* The estimate of one world. */
typedef struct model_capacity {
  size_t n_services, n_phases;
  int64_t phase_ns[MODEL_CAPACITY_MAX_PHASES]; /* each phase's start */
  double *capacity_per_s;                      /* per service: replicas x workers / mean time */
  double *offered_per_s;                       /* n_phases x n_services: requests per second */
  bool closed_loop; /* a closed-loop client counted at its upper bound (count / mean think) */
} model_capacity;

/* Fills cap from cfg (borrowed). Returns 0, or -1 when out of memory (cap then empty). Free
 * with model_capacity_close. */
int model_capacity_init(model_capacity *cap, const model_config *cfg);
/* Frees what cap holds; a zeroed or closed cap is a no-op. */
void model_capacity_close(model_capacity *cap);

/* The largest utilization (offered / capacity) of any service at any phase, with where: the
 * service's index and the phase's. 0 for a world with no load. */
double model_capacity_peak(const model_capacity *cap, size_t *service, size_t *phase);

/* Prints the table: one line per service and phase ("  api  from 0s  1600/s of 3200/s  0.50"),
 * names from cfg. */
void model_capacity_print(const model_capacity *cap, const model_config *cfg, FILE *f);

#endif /* MODEL_CAPACITY_H */
