/*
 * cli_recovery.h: judging, from a finished run's time series, whether the world came back
 * after its trigger and how long that took. A judgement of the program, not of the world:
 * the world only records what happened, bucket by bucket.
 */
#ifndef CLI_RECOVERY_H
#define CLI_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/model_config.h"
#include "models/model_stats.h"

/* How recovery after the faults is judged (the scenario's "recovery"). */
typedef struct cli_recovery_cfg {
  double threshold;  /* (0, 1]: healthy = goodput/offered >= threshold x baseline; default 0.9 */
  int64_t hold_ns;   /* > 0: health must last this long; default 10 s */
  int64_t warmup_ns; /* >= 0: buckets before this are left out of the baseline; -1 = the
                        default, min(10 s, half the time before the first fault) */
} cli_recovery_cfg;

/* Did the run recover after its faults? The trigger is the span from the first fault's start
 * to the last fault's end; a bucket is healthy when its goodput over its offered load is at
 * least threshold x the baseline (the same ratio before the trigger), and the run has
 * recovered at the first bucket from which hold_s of healthy buckets follow. */
typedef struct cli_recovery {
  bool has_trigger;       /* a fault starts before the end of the duration; else the rest is 0 */
  double trigger_start_s; /* first fault start */
  double trigger_end_s;   /* last fault end; NaN when a fault never ends */
  double baseline_ratio;  /* goodput / offered before the trigger (after warm-up) */
  double threshold;       /* the healthy fraction of the baseline */
  double hold_s;          /* how long health must last */
  bool recovered;
  double recovery_s;  /* from trigger_end_s to the start of the healthy span; NaN if never */
  double final_ratio; /* goodput / offered over the last hold_s of the duration */
} cli_recovery;

/* Judges recovery after a trigger from a time series: offered[b * stride] and
 * goodput[b * stride] are bucket b's offered load and goodput (any common unit), for
 * n_buckets buckets of bucket_ns. The trigger is [trigger_start_ns, trigger_end_ns); when it
 * does not both start and end before duration_ns, out->has_trigger is false and the rest 0.
 * Otherwise out holds the baseline, whether and when the run recovered (recovery_s from the
 * trigger's end to the first of hold healthy buckets) and the final ratio. */
void cli_recovery_judge(const cli_recovery_cfg *cfg, int64_t duration_ns, int64_t bucket_ns,
                        int64_t trigger_start_ns, int64_t trigger_end_ns, const double *offered,
                        const double *goodput, size_t stride, size_t n_buckets, cli_recovery *out);

/* Judges the finished run r of world cfg: the trigger spans every fault entry of every
 * service, from the first start to the last end, whatever their selectors (as the
 * faults_active column does); the series are r's offered_rps and goodput_rps columns. */
void cli_recovery_of_run(const cli_recovery_cfg *rcfg, const model_config *cfg,
                         const model_results *r, cli_recovery *out);

#endif /* CLI_RECOVERY_H */
