/*
 * expt_recovery.c: did the world come back after its trigger, and how long did it take? The
 * question a metastable failure answers with "never": the trigger is gone, yet the retries it
 * set off keep the service saturated.
 *
 * A metastable system has recovered when it is back in its good state, not merely when it
 * answers again: the judgement reads three things of the finished time series over a span of
 * `hold` seconds. Goodput per offered call (offered_rps, goodput_rps), capped at 1 so that a
 * queue draining its backlog (goodput above offered) does not pass for health; the OK calls'
 * latency (latency_ok_p99_ms by default), so that answers ten times slower than before do
 * not either; and every service's queue (<service>_queue), so that a backlog still waiting
 * does not. A span with no offered call is never healthy: for a closed-loop population,
 * nothing offered means every user is stuck waiting.
 *
 * Each criterion is judged over the whole span, not bucket by bucket (issue 23): at a few
 * calls a second, one second's ratio of calls ended OK (counted at their end) to calls offered
 * (counted at their start) is mostly Poisson noise, and a rule that needed every bucket of the
 * hold to pass called a world with no trigger at all "never recovered" in most runs. Over the
 * span, goodput is a count of k good calls of n offered, judged against need = threshold x
 * baseline by a one-sided binomial test: unhealthy only when k is below need x n and
 * P(X <= k) < goodput_alpha for X ~ Binomial(n, need). The latency and queue criteria compare
 * the span's mean of the bucket values with the same bounds as before. A span that holds is
 * found from the trigger's end on; a world with no storm has its first span healthy but for
 * these tests' errors, so its false "never recovered" rate is at most about goodput_alpha plus
 * the chance that a span's mean latency or queue exceeds its bound (tested at 2 to 1000 calls
 * a second in tests/test_expt_recovery_noise.c). A storm (goodput a fraction of offered) fails
 * the binomial test by far at any rate of at least a call a second over a 10 s hold.
 *
 * The baselines are a good state only if the time before the trigger was steady. A service
 * overloaded from the start has a backlog that grows throughout: judged against itself, its
 * queue and latency look "near baseline" for a while after any trigger, and a short trigger
 * would pass for one it recovered from. So when the calls in flight grew, over the baseline
 * buckets, by more than a tenth of the calls offered in them (fewer than 90 % of the offered
 * calls ended), the baselines are the ideal ones: every offered call good (ratio 1), no queue
 * beyond the slack, and no latency to compare with. A tenth is far above the noise of a
 * steady queue (its backlog goes up and down by tens of calls, not by a tenth of thousands)
 * and far below the growth of real overload (offered - capacity, every second).
 */
#include "expt/expt_recovery.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retry/retry.h"

void expt_recovery_cfg_init(expt_recovery_cfg *cfg) {
  *cfg = (expt_recovery_cfg){.threshold = 0.9,
                            .hold_ns = 10 * RETRY_NS_PER_S,
                            .warmup_ns = -1,
                            .latency_factor = 3.0,
                            .latency_q = 0.99,
                            .queue_factor = 2.0,
                            .queue_slack = 1.0,
                            .goodput_alpha = 0.01};
}

const char *expt_recovery_criterion_name(expt_recovery_criterion c) {
  switch (c) {
    case EXPT_RECOVERY_GOODPUT: return "goodput";
    case EXPT_RECOVERY_LATENCY: return "latency";
    case EXPT_RECOVERY_QUEUE: return "queue";
    case EXPT_RECOVERY_N: break;
  }
  return "unknown";
}

/* goodput/offered over buckets [b0, b1), NaN when nothing was offered there. Sums rather than
 * a mean of ratios, so a nearly empty bucket does not weigh as much as a full one. Capped at
 * 1: more good answers than calls offered is a backlog draining, not better health. */
static double span_ratio(const expt_recovery_series *s, size_t b0, size_t b1) {
  double o = 0, g = 0;
  for (size_t b = b0; b < b1; b++) {
    o += s->offered[b * s->stride];
    g += s->goodput[b * s->stride];
  }
  if (!(o > 0)) return NAN;
  return g / o < 1.0 ? g / o : 1.0;
}

/* The mean of the finite values of col over [b0, b1), NaN when there is none. */
static double span_mean(const double *col, size_t stride, size_t b0, size_t b1) {
  double sum = 0;
  size_t n = 0;
  for (size_t b = b0; b < b1; b++) {
    double v = col[b * stride];
    if (isfinite(v)) {
      sum += v;
      n++;
    }
  }
  return n > 0 ? sum / (double)n : NAN;
}

/* Whether the calls of buckets [b0, b1) reached need: goodput / offered (capped at 1) is at
 * least need, or falls short of it by no more than chance would: the count of good calls k of n
 * offered is not in the lower alpha tail of a binomial of n draws with success need. Counts
 * are the columns' rates times the bucket's seconds. No offered call is never healthy (a
 * closed-loop population that offers nothing is stuck). */
static bool goodput_holds(const expt_recovery_series *s, size_t b0, size_t b1, double need,
                          double alpha) {
  double sec = (double)s->bucket_ns / 1e9, o = 0, g = 0;
  for (size_t b = b0; b < b1; b++) {
    o += s->offered[b * s->stride] * sec;
    g += s->goodput[b * s->stride] * sec;
  }
  if (!(o >= 0.5) || !(o < 4e9)) return o >= 4e9 && g >= need * o;
  unsigned n = (unsigned)llround(o), k = g < o ? (unsigned)llround(g) : n;
  if ((double)k >= need * (double)n) return true;
  return gsl_cdf_binomial_P(k, need, n) >= alpha;
}

/* Whether buckets [b0, b1) are a steady state: the calls in flight (snapshots at bucket
 * ends; 0 at time 0) grew by at most a tenth of the calls offered over them. Without the
 * in-flight column there is nothing to tell, and the span counts as steady. */
static bool steady(const expt_recovery_series *s, size_t b0, size_t b1) {
  if (s->in_flight == NULL) return true;
  double offered = 0;
  for (size_t b = b0; b < b1; b++)
    offered += s->offered[b * s->stride];
  offered *= (double)s->bucket_ns / 1e9; /* offered_rps x seconds: calls */
  double start = b0 > 0 ? s->in_flight[(b0 - 1) * s->stride] : 0.0;
  double grew = s->in_flight[(b1 - 1) * s->stride] - start;
  return !(grew > 0.1 * offered);
}

/* Each criterion over the span [b, b + hold), into ok[]; the queue criterion per service into
 * qok[] as well. */
static void span_health(const expt_recovery_cfg *cfg, const expt_recovery_series *s,
                        const expt_recovery *out, const double *qbase, size_t b, size_t hold,
                        double need, bool *ok, bool *qok) {
  size_t e = b + hold;
  ok[EXPT_RECOVERY_GOODPUT] = goodput_holds(s, b, e, need, cfg->goodput_alpha);
  double lat = s->latency != NULL ? span_mean(s->latency, s->stride, b, e) : NAN;
  ok[EXPT_RECOVERY_LATENCY] = isnan(out->baseline_latency_ms) ||
                              (isfinite(lat) && lat <= cfg->latency_factor * out->baseline_latency_ms);
  ok[EXPT_RECOVERY_QUEUE] = true;
  for (size_t k = 0; k < s->n_queues; k++) {
    double q = span_mean(s->queues[k], s->stride, b, e);
    qok[k] = !(q > qbase[k]);
    ok[EXPT_RECOVERY_QUEUE] = ok[EXPT_RECOVERY_QUEUE] && qok[k];
  }
}

/* The index of the latest time among n (NaN, never, is the latest; ties: the first). */
static size_t latest(const double *t, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; i++) {
    if (isnan(t[best])) break;
    if (isnan(t[i]) || t[i] > t[best]) best = i;
  }
  return best;
}

int expt_recovery_judge_series(const expt_recovery_cfg *cfg, int64_t duration_ns,
                              int64_t trigger_start_ns, int64_t trigger_end_ns,
                              const expt_recovery_series *s, expt_recovery *out) {
  *out = (expt_recovery){0};
  int64_t bucket_ns = s->bucket_ns;
  /* No trigger, or one that lasts as long as the clients send: nothing to recover from. */
  if (trigger_start_ns >= duration_ns || trigger_end_ns >= duration_ns || bucket_ns <= 0 ||
      trigger_end_ns < trigger_start_ns)
    return 0;
  /* Per service: its baseline queue, whether its span holds, its own time. */
  size_t nq = s->n_queues;
  double *qbase = malloc((2 * nq + 1) * sizeof *qbase);
  bool *qok = malloc((nq + 1) * sizeof *qok);
  if (qbase == NULL || qok == NULL) {
    free(qbase);
    free(qok);
    return RETRY_ENOMEM;
  }
  double *qat = qbase + nq;
  out->has_trigger = true;
  out->explicit_trigger = cfg->explicit_trigger;
  out->trigger_start_s = (double)trigger_start_ns / 1e9;
  out->trigger_end_s = (double)trigger_end_ns / 1e9;
  out->threshold = cfg->threshold;
  out->hold_s = (double)cfg->hold_ns / 1e9;
  out->recovery_s = NAN;
  out->latency_column = cfg->latency_q == 0.5 ? "latency_ok_p50_ms" : "latency_ok_p99_ms";
  out->latency_factor = cfg->latency_factor;
  out->queue_factor = cfg->queue_factor;
  out->queue_slack = cfg->queue_slack;
  for (int c = 0; c < EXPT_RECOVERY_N; c++)
    out->criterion_s[c] = NAN;
  /* Only whole buckets inside the duration count: the drain has no offered load, and a
   * bucket cut short by the end of the duration would be judged on a fraction of a second. */
  size_t full = (size_t)(duration_ns / bucket_ns);
  if (full > s->n_buckets) full = s->n_buckets;
  /* The baselines: whole buckets after the warm-up and before the trigger. The default
   * warm-up skips the start (empty queues, engines without history) but never more than
   * half of what precedes the trigger. */
  int64_t warmup = cfg->warmup_ns;
  if (warmup < 0) warmup = trigger_start_ns / 2 < 10000000000 ? trigger_start_ns / 2 : 10000000000;
  size_t b0 = (size_t)((warmup + bucket_ns - 1) / bucket_ns);
  size_t b1 = (size_t)(trigger_start_ns / bucket_ns);
  if (b1 > full) b1 = full;
  out->baseline_steady = b0 >= b1 || steady(s, b0, b1);
  if (!out->baseline_steady) b0 = b1; /* judged as with no history: the ideal baselines */
  double base = b0 < b1 ? span_ratio(s, b0, b1) : NAN;
  /* A fleet already failing before the trigger (goodput / offered under the threshold by more
   * than chance: an overload that sheds or times out calls instead of queueing them) has no
   * good state to return to either; judged against its own collapse it would "recover" at
   * once. A few calls a second short of the threshold by chance are no collapse. */
  if (!isnan(base) && !goodput_holds(s, b0, b1, cfg->threshold, cfg->goodput_alpha)) {
    out->baseline_steady = false;
    b0 = b1;
    base = NAN;
  }
  /* Without a bucket of healthy history the baseline is 1: every offered call succeeds. */
  out->baseline_ratio = isnan(base) ? 1.0 : base;
  double need = cfg->threshold * out->baseline_ratio;
  /* Without an OK latency before the trigger there is nothing to compare with: the latency
   * criterion then always holds (baseline_latency_ms is NaN, written null). */
  out->baseline_latency_ms =
      s->latency != NULL && b0 < b1 ? span_mean(s->latency, s->stride, b0, b1) : NAN;
  for (size_t k = 0; k < nq; k++) {
    double m = b0 < b1 ? span_mean(s->queues[k], s->stride, b0, b1) : NAN;
    qbase[k] = cfg->queue_factor * (isnan(m) ? 0.0 : m) + s->queue_allow[k];
    qat[k] = NAN;
  }
  size_t hold = (size_t)((cfg->hold_ns + bucket_ns - 1) / bucket_ns);
  if (hold < 1) hold = 1;
  /* The final ratio: the last hold buckets of the duration (all of them if fewer). */
  size_t f0 = full > hold ? full - hold : 0;
  out->final_ratio = f0 < full ? span_ratio(s, f0, full) : NAN;
  /* From the first bucket that starts at or after the trigger's end: the first span of hold
   * buckets where each criterion holds (judged over the whole span, not bucket by bucket:
   * see the file's header), every queue's, and the first where all hold at once. */
  size_t first = (size_t)((trigger_end_ns + bucket_ns - 1) / bucket_ns);
  out->judged_until_s = (double)((int64_t)full - (int64_t)hold) * ((double)bucket_ns / 1e9) -
                        (double)trigger_end_ns / 1e9;
  for (size_t b = first; b + hold <= full; b++) {
    bool ok[EXPT_RECOVERY_N];
    span_health(cfg, s, out, qbase, b, hold, need, ok, qok);
    double at = (double)((int64_t)b * bucket_ns - trigger_end_ns) / 1e9;
    for (size_t k = 0; k < nq; k++)
      if (qok[k] && isnan(qat[k])) qat[k] = at;
    for (int c = 0; c < EXPT_RECOVERY_N; c++)
      if (ok[c] && isnan(out->criterion_s[c])) out->criterion_s[c] = at;
    if (ok[0] && ok[1] && ok[2] && isnan(out->recovery_s)) out->recovery_s = at;
  }
  out->recovered = !isnan(out->recovery_s);
  out->last_criterion = (expt_recovery_criterion)latest(out->criterion_s, EXPT_RECOVERY_N);
  out->queue_service = nq > 0 ? s->queue_names[latest(qat, nq)] : NULL;
  free(qbase);
  free(qok);
  return 0;
}

void expt_recovery_judge(const expt_recovery_cfg *cfg, int64_t duration_ns, int64_t bucket_ns,
                        int64_t trigger_start_ns, int64_t trigger_end_ns, const double *offered,
                        const double *goodput, size_t stride, size_t n_buckets, expt_recovery *out) {
  expt_recovery_series s = {.bucket_ns = bucket_ns,
                           .n_buckets = n_buckets,
                           .stride = stride,
                           .offered = offered,
                           .goodput = goodput};
  /* Without queues nothing is allocated, so this cannot fail. */
  (void)expt_recovery_judge_series(cfg, duration_ns, trigger_start_ns, trigger_end_ns, &s, out);
}

void expt_recovery_trigger(const expt_recovery_cfg *rcfg, const model_config *cfg, int64_t *start,
                           int64_t *end) {
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  if (rcfg->explicit_trigger) {
    t0 = rcfg->trigger_start_ns;
    t1 = rcfg->trigger_end_ns;
  } else {
    for (size_t s = 0; s < cfg->n_services; s++)
      for (size_t i = 0; i < cfg->services[s].n_faults; i++) {
        const model_fault_cfg *f = &cfg->services[s].faults[i];
        if (f->start_ns < t0) t0 = f->start_ns;
        if (f->end_ns > t1) t1 = f->end_ns;
      }
  }
  *start = t0;
  *end = t1;
}

double expt_recovery_judged_until_s(const expt_recovery_cfg *rcfg, const model_config *cfg) {
  int64_t t0, t1, bucket = cfg->bucket_ns;
  expt_recovery_trigger(rcfg, cfg, &t0, &t1);
  if (t0 >= cfg->duration_ns || t1 >= cfg->duration_ns || t1 < t0 || bucket <= 0) return NAN;
  /* The same spans as expt_recovery_judge_series: whole buckets inside the duration. */
  int64_t hold = (rcfg->hold_ns + bucket - 1) / bucket;
  if (hold < 1) hold = 1;
  return (double)(cfg->duration_ns / bucket - hold) * ((double)bucket / 1e9) - (double)t1 / 1e9;
}

/* The index of the column called name, or -1. */
static int column(const model_timeseries *ts, const char *name) {
  for (size_t c = 0; c < ts->n_columns; c++)
    if (strcmp(ts->names[c], name) == 0) return (int)c;
  return -1;
}

int expt_recovery_of_run(const expt_recovery_cfg *rcfg, const model_config *cfg,
                        const model_results *r, expt_recovery *out) {
  *out = (expt_recovery){0};
  int64_t t0, t1;
  expt_recovery_trigger(rcfg, cfg, &t0, &t1);
  const model_timeseries *ts = &r->ts;
  int offered = column(ts, "offered_rps"), goodput = column(ts, "goodput_rps");
  if (offered < 0 || goodput < 0 || ts->values == NULL) return 0;
  int latency = column(ts, rcfg->latency_q == 0.5 ? "latency_ok_p50_ms" : "latency_ok_p99_ms");
  int in_flight = column(ts, "in_flight");
  size_t ns = cfg->n_services;
  const double **queues = malloc((ns + 1) * sizeof *queues);
  double *allow = malloc((ns + 1) * sizeof *allow);
  const char **names = malloc((ns + 1) * sizeof *names);
  int rc = queues != NULL && allow != NULL && names != NULL ? 0 : RETRY_ENOMEM;
  size_t nq = 0;
  for (size_t i = 0; i < ns && rc == 0; i++) {
    char name[MODEL_TS_NAME_MAX];
    snprintf(name, sizeof name, "%s_queue", cfg->services[i].name);
    int c = column(ts, name);
    if (c < 0) continue;
    queues[nq] = ts->values + c;
    allow[nq] =
        rcfg->queue_slack * (double)cfg->services[i].replicas * (double)cfg->services[i].workers;
    names[nq++] = cfg->services[i].name;
  }
  expt_recovery_series s = {.bucket_ns = ts->bucket_ns,
                           .n_buckets = ts->n_buckets,
                           .stride = ts->n_columns,
                           .offered = ts->values + offered,
                           .goodput = ts->values + goodput,
                           .latency = latency >= 0 ? ts->values + latency : NULL,
                           .in_flight = in_flight >= 0 ? ts->values + in_flight : NULL,
                           .n_queues = nq,
                           .queues = queues,
                           .queue_allow = allow,
                           .queue_names = names};
  if (rc == 0) rc = expt_recovery_judge_series(rcfg, cfg->duration_ns, t0, t1, &s, out);
  if (rc == 0 && rcfg->n_windows > 0) {
    out->windows_cfg = rcfg;
    out->window_trigger_start_ns = t0;
    out->window_trigger_end_ns = t1;
    out->window_duration_ns = cfg->duration_ns;
  }
  free(queues);
  free(allow);
  free(names);
  return rc;
}
