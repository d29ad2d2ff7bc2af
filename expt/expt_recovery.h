/*
 * expt_recovery.h: judging, from a finished run's time series, whether the world came back
 * after its trigger and how long that took. A judgement of the program, not of the world:
 * the world only records what happened, bucket by bucket.
 */
#ifndef EXPT_RECOVERY_H
#define EXPT_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/model_config.h"
#include "models/model_stats.h"

/* A window of the time series whose figures a run also reports ("recovery.windows"). */
#define EXPT_WINDOW_MAX 16
#define EXPT_WINDOW_NAME_MAX 32
typedef enum expt_window_kind {
  EXPT_WINDOW_TRIGGER, /* the recovery rule's trigger window */
  EXPT_WINDOW_AFTER,   /* from the trigger's end to the end of the duration */
  EXPT_WINDOW_SPAN     /* [from_ns, to_ns) as given */
} expt_window_kind;
typedef struct expt_window {
  char name[EXPT_WINDOW_NAME_MAX];
  expt_window_kind kind;
  int64_t from_ns, to_ns; /* EXPT_WINDOW_SPAN only */
} expt_window;

/* How recovery after the trigger is judged (the scenario's "recovery"). */
typedef struct expt_recovery_cfg {
  double threshold;      /* (0, 1]: goodput/offered (capped at 1) >= threshold x baseline; 0.9 */
  int64_t hold_ns;       /* > 0: health must last this long; default 10 s */
  int64_t warmup_ns;     /* >= 0: buckets before this are left out of the baseline; -1 = the
                            default, min(10 s, half the time before the trigger) */
  double latency_factor; /* >= 1: OK latency <= factor x its baseline; default 3 */
  double latency_q;      /* the OK latency percentile judged: 0.5 or 0.99 (default) */
  double queue_factor;   /* >= 1: queue <= factor x baseline + slack; default 2 */
  double queue_slack;    /* >= 0: requests per worker allowed above that; default 1 */
  double goodput_alpha;  /* (0, 1): a span's goodput short of the threshold is unhealthy only
                            when a binomial test puts it below at this level; default 0.01 */
  bool explicit_trigger; /* the trigger window below was given ("trigger"), not the faults' */
  int64_t trigger_start_ns, trigger_end_ns;
  size_t n_windows;      /* "windows", reported with each run (expt_window.h) */
  expt_window windows[EXPT_WINDOW_MAX];
} expt_recovery_cfg;

/* Sets the defaults above (no explicit trigger). */
void expt_recovery_cfg_init(expt_recovery_cfg *cfg);

/* The three criteria, in the order ties are broken. */
typedef enum expt_recovery_criterion {
  EXPT_RECOVERY_GOODPUT = 0,
  EXPT_RECOVERY_LATENCY,
  EXPT_RECOVERY_QUEUE,
  EXPT_RECOVERY_N
} expt_recovery_criterion;

/* Returns "goodput", "latency" or "queue". */
const char *expt_recovery_criterion_name(expt_recovery_criterion c);

/* Did the run recover after its trigger? A span of hold_s (whole buckets inside the duration)
 * is healthy when all three hold over the span as a whole: its good calls k of n offered are
 * at least threshold x baseline x n, or short of it by no more than chance (a binomial test at
 * goodput_alpha); the mean over its buckets of the OK latency percentile is at most
 * latency_factor x its baseline; and the mean over its buckets of every service's queue is at
 * most queue_factor x its baseline + queue_slack x its workers (replicas x workers: one
 * waiting request per worker drains within about one service time). Baselines are the buckets
 * between the warm-up and the trigger. The run has recovered at the first bucket at or after
 * the trigger's end that starts a healthy span; each criterion alone gets its own such time,
 * and last_criterion names the criterion whose time is the latest. */
typedef struct expt_recovery {
  bool has_trigger;       /* a trigger starts and ends before the end of the duration */
  bool explicit_trigger;  /* it came from the recovery block, not from the faults */
  double trigger_start_s; /* first fault start (or the given start) */
  double trigger_end_s;   /* last fault end (or the given end) */
  double baseline_ratio;  /* goodput / offered before the trigger, capped at 1 (1 when the
                             time before the trigger is not steady) */
  bool baseline_steady;   /* before the trigger, the calls in flight grew by at most a tenth
                             of the calls offered; when not, the baselines are the ideal
                             ones (ratio 1, no queue, no latency; see the .c) */
  double threshold;       /* the healthy fraction of the baseline */
  double hold_s;          /* how long health must last */
  bool recovered;
  double recovery_s;  /* from trigger_end_s to the start of the healthy span; NaN if never */
  /* The latest recovery_s the run could show: the last span of hold_s that fits the duration
   * starts this long after trigger_end_s. A run not recovered is censored there; a negative
   * value means no span fits at all, so the run cannot tell recovered from not. */
  double judged_until_s;
  double final_ratio; /* goodput / offered over the last hold_s of the duration, capped at 1 */
  /* latency: the column judged, its baseline (NaN: no OK call before the trigger, then the
   * criterion always holds) and the factor */
  const char *latency_column; /* "latency_ok_p99_ms" or "latency_ok_p50_ms" (static) */
  double baseline_latency_ms;
  double latency_factor;
  double queue_factor, queue_slack;
  /* per criterion: from trigger_end_s to the start of its own first held span; NaN if never */
  double criterion_s[EXPT_RECOVERY_N];
  /* the criterion with the latest time (one that never came back counts as latest; ties go
   * to the first in enum order); meaningful when has_trigger */
  expt_recovery_criterion last_criterion;
  const char *queue_service; /* the service whose queue came back last (borrowed), or NULL */
  /* Set by expt_recovery_of_run for the run's "windows" (expt_window.h): the configuration
   * (borrowed; NULL when it has no window) and the trigger it resolved, even when it lasts
   * past the duration (then has_trigger is false): INT64_MAX without a fault. */
  const expt_recovery_cfg *windows_cfg;
  int64_t window_trigger_start_ns, window_trigger_end_ns, window_duration_ns;
} expt_recovery;

/* The columns judged, for n_buckets buckets of bucket_ns; column c of bucket b is
 * col[b * stride]. offered and goodput are required; latency may be NULL (then the latency
 * criterion always holds); queues[k] is service k's queue column, queue_allow[k] the requests
 * it may hold above queue_factor x baseline (queue_slack x its workers), names[k] its name.
 * in_flight (may be NULL: the baseline is then taken as steady) tells whether the time before
 * the trigger was a steady state at all. */
typedef struct expt_recovery_series {
  int64_t bucket_ns;
  size_t n_buckets, stride;
  const double *offered, *goodput, *latency;
  const double *in_flight; /* top-level calls in flight at each bucket's end; NULL: unknown */
  size_t n_queues;
  const double *const *queues;
  const double *queue_allow;
  const char *const *queue_names;
} expt_recovery_series;

/* Judges recovery after the trigger [trigger_start_ns, trigger_end_ns) from the series s.
 * When the trigger does not both start and end before duration_ns, out->has_trigger is false
 * and the rest 0. Returns 0, or RETRY_ENOMEM (out is then "no trigger"). */
int expt_recovery_judge_series(const expt_recovery_cfg *cfg, int64_t duration_ns,
                              int64_t trigger_start_ns, int64_t trigger_end_ns,
                              const expt_recovery_series *s, expt_recovery *out);

/* The goodput criterion alone (no latency column, no queue): offered[b * stride] and
 * goodput[b * stride] for n_buckets buckets of bucket_ns. */
void expt_recovery_judge(const expt_recovery_cfg *cfg, int64_t duration_ns, int64_t bucket_ns,
                        int64_t trigger_start_ns, int64_t trigger_end_ns, const double *offered,
                        const double *goodput, size_t stride, size_t n_buckets, expt_recovery *out);

/* Judges the finished run r of world cfg. The trigger is the recovery block's when given, else
 * the span of every fault entry of every service, from the first start to the last end,
 * whatever their selectors (as the faults_active column does); the series are r's
 * offered_rps, goodput_rps, latency_ok_p99_ms (or _p50_) and <service>_queue columns. Returns 0,
 * or RETRY_ENOMEM (out is then "no trigger"). */
int expt_recovery_of_run(const expt_recovery_cfg *rcfg, const model_config *cfg,
                        const model_results *r, expt_recovery *out);

/* The trigger of world cfg as expt_recovery_of_run takes it: [*start, *end), or INT64_MAX and
 * INT64_MIN without a fault (and without a recovery block's trigger). */
void expt_recovery_trigger(const expt_recovery_cfg *rcfg, const model_config *cfg, int64_t *start,
                           int64_t *end);

/* The latest recovery time (after the trigger's end) that a run of world cfg judged by rcfg can
 * show: its last whole span of hold that fits the duration starts then. Negative when none
 * fits; NaN when the world has no trigger that ends before its duration. */
double expt_recovery_judged_until_s(const expt_recovery_cfg *rcfg, const model_config *cfg);

#endif /* EXPT_RECOVERY_H */
