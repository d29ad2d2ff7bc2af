/*
 * model_acc.h: Envoy's adaptive concurrency filter with its gradient controller
 * (source/extensions/filters/http/adaptive_concurrency/controller/gradient_controller.cc), one
 * per replica, as a sidecar in front of each replica would run it. The controller's timers are
 * kept as due times and run, in time order, before anything that reads or changes its state
 * (model_acc_advance), which gives the timers' own order without events of their own.
 * Semantics and constants: docs/simulator.md#envoys-adaptive-concurrency-filter.
 */
#ifndef MODEL_ACC_H
#define MODEL_ACC_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "models/model_config.h"
#include "sim/sim_hist.h"

typedef struct model_acc {
  const model_acc_cfg *cfg;
  sim_hist samples;        /* latencies of the current window (ns) */
  int32_t limit;           /* the concurrency limit */
  int32_t outstanding;     /* requests forwarded and not yet answered */
  int32_t deferred;        /* > 0: in a minRTT window, the limit to restore after it */
  int32_t consecutive_min; /* sample windows in a row that set the limit to min_concurrency */
  int64_t epoch_ns;        /* start of the last minRTT window: older requests are not sampled */
  int64_t min_rtt_ns;      /* the last minRTT measured (0 before the first) */
  int64_t sample_rtt_ns;   /* the last window's summary latency */
  int64_t next_update_ns;  /* the sample window timer, INT64_MAX when disarmed */
  int64_t next_min_rtt_ns; /* the minRTT timer, INT64_MAX when disarmed */
  double gradient;         /* the last gradient applied */
} model_acc;

/* Starts the controller at now: limit min_concurrency, a minRTT window open, the sample timer
 * armed for now + update_interval. */
void model_acc_init(model_acc *a, const model_acc_cfg *cfg, int64_t now_ns);
/* Runs the timers due at or before now, in time order; r draws the minRTT timer's jitter. */
void model_acc_advance(model_acc *a, int64_t now_ns, gsl_rng *r);
/* The forwarding decision at now: forwards (and counts outstanding) below the limit. */
bool model_acc_forward(model_acc *a, int64_t now_ns, gsl_rng *r);
/* A forwarded request sent at send_ns was answered at now: no longer outstanding, and its
 * latency a sample unless it started before the current minRTT window. */
void model_acc_record(model_acc *a, int64_t send_ns, int64_t now_ns, gsl_rng *r);
/* The limit a sample window computes from the current limit, minRTT and sample RTT:
 * g = clamp(minRTT (1 + buffer) / sampleRTT, 0.5, 2), l = limit x g,
 * new = clamp(floor(l + sqrt(l)), min_concurrency, max_concurrency). */
int32_t model_acc_new_limit(const model_acc_cfg *cfg, int32_t limit, int64_t min_rtt_ns,
                            int64_t sample_rtt_ns, double *gradient);

#endif /* MODEL_ACC_H */
