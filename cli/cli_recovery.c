/*
 * cli_recovery.c: did the world come back after its faults, and how long did it take? The
 * question a metastable failure answers with "never": the trigger is gone, yet the retries it
 * set off keep the service saturated.
 *
 * The judgement reads two columns of the finished time series, offered_rps and goodput_rps,
 * bucket by bucket. Their ratio (good calls per offered call) compares buckets with different
 * offered loads (a ramp, a spike), where goodput alone would not. A bucket with no offered
 * call has no ratio and is never healthy: for a closed-loop population, nothing offered means
 * every user is stuck waiting.
 */
#include "cli/cli_recovery.h"

#include <math.h>
#include <string.h>

/* goodput/offered over buckets [b0, b1), NaN when nothing was offered there. Sums rather than
 * a mean of ratios, so a nearly empty bucket does not weigh as much as a full one. */
static double span_ratio(const double *offered, const double *goodput, size_t stride, size_t b0,
                         size_t b1) {
  double o = 0, g = 0;
  for (size_t b = b0; b < b1; b++) {
    o += offered[b * stride];
    g += goodput[b * stride];
  }
  return o > 0 ? g / o : NAN;
}

void cli_recovery_judge(const cli_recovery_cfg *cfg, int64_t duration_ns, int64_t bucket_ns,
                        int64_t trigger_start_ns, int64_t trigger_end_ns, const double *offered,
                        const double *goodput, size_t stride, size_t n_buckets, cli_recovery *out) {
  *out = (cli_recovery){0};
  /* No trigger, or one that lasts as long as the clients send: nothing to recover from. */
  if (trigger_start_ns >= duration_ns || trigger_end_ns >= duration_ns || bucket_ns <= 0) return;
  out->has_trigger = true;
  out->trigger_start_s = (double)trigger_start_ns / 1e9;
  out->trigger_end_s = (double)trigger_end_ns / 1e9;
  out->threshold = cfg->threshold;
  out->hold_s = (double)cfg->hold_ns / 1e9;
  out->recovery_s = NAN;
  /* Only whole buckets inside the duration count: the drain has no offered load, and a
   * bucket cut short by the end of the duration would be judged on a fraction of a second. */
  size_t full = (size_t)(duration_ns / bucket_ns);
  if (full > n_buckets) full = n_buckets;
  /* The baseline: whole buckets after the warm-up and before the trigger. The default
   * warm-up skips the start (empty queues, engines without history) but never more than
   * half of what precedes the trigger. */
  int64_t warmup = cfg->warmup_ns;
  if (warmup < 0) warmup = trigger_start_ns / 2 < 10000000000 ? trigger_start_ns / 2 : 10000000000;
  size_t b0 = (size_t)((warmup + bucket_ns - 1) / bucket_ns);
  size_t b1 = (size_t)(trigger_start_ns / bucket_ns);
  double base = b0 < b1 ? span_ratio(offered, goodput, stride, b0, b1) : NAN;
  /* Without a bucket of healthy history the baseline is 1: every offered call succeeds. */
  out->baseline_ratio = isnan(base) ? 1.0 : base;
  double need = cfg->threshold * out->baseline_ratio;
  size_t hold = (size_t)((cfg->hold_ns + bucket_ns - 1) / bucket_ns);
  if (hold < 1) hold = 1;
  /* The final ratio: the last hold buckets of the duration (all of them if fewer). */
  size_t f0 = full > hold ? full - hold : 0;
  out->final_ratio = span_ratio(offered, goodput, stride, f0, full);
  /* The first bucket that starts at or after the trigger's end and is followed by hold
   * healthy buckets (itself included). run counts healthy buckets ending at b. */
  size_t first = (size_t)((trigger_end_ns + bucket_ns - 1) / bucket_ns);
  size_t run = 0;
  for (size_t b = first; b < full; b++) {
    double r = span_ratio(offered, goodput, stride, b, b + 1);
    run = (!isnan(r) && r >= need) ? run + 1 : 0;
    if (run == hold) {
      size_t start = b + 1 - hold;
      out->recovered = true;
      out->recovery_s = (double)((int64_t)start * bucket_ns - trigger_end_ns) / 1e9;
      return;
    }
  }
}

/* The index of the column called name, or -1. */
static int column(const model_timeseries *ts, const char *name) {
  for (size_t c = 0; c < ts->n_columns; c++)
    if (strcmp(ts->names[c], name) == 0) return (int)c;
  return -1;
}

void cli_recovery_of_run(const cli_recovery_cfg *rcfg, const model_config *cfg,
                         const model_results *r, cli_recovery *out) {
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (size_t s = 0; s < cfg->n_services; s++)
    for (size_t i = 0; i < cfg->services[s].n_faults; i++) {
      const model_fault_cfg *f = &cfg->services[s].faults[i];
      if (f->start_ns < t0) t0 = f->start_ns;
      if (f->end_ns > t1) t1 = f->end_ns;
    }
  const model_timeseries *ts = &r->ts;
  int offered = column(ts, "offered_rps"), goodput = column(ts, "goodput_rps");
  if (offered < 0 || goodput < 0 || ts->values == NULL) {
    *out = (cli_recovery){0};
    return;
  }
  cli_recovery_judge(rcfg, cfg->duration_ns, ts->bucket_ns, t0, t1, ts->values + offered,
                     ts->values + goodput, ts->n_columns, ts->n_buckets, out);
}
