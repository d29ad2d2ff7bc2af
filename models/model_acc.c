/*
 * model_acc.c: the gradient controller of Envoy's adaptive concurrency filter (model_acc.h),
 * written from gradient_controller.cc's rules: the controller starts in a minRTT window at
 * min_concurrency; a minRTT window ends when request_count samples arrived, sets minRTT to
 * their percentile, restores the limit it deferred and arms the next window after the interval
 * plus jitter; outside a window, each sample window sets sampleRTT to its percentile and the
 * limit by the gradient; five windows in a row at min_concurrency start a minRTT window at
 * once. Each minRTT window throws away the samples gathered before it.
 */
#include "models/model_acc.h"

#include <math.h>

static bool in_window(const model_acc *a) { return a->deferred > 0; }

int32_t model_acc_new_limit(const model_acc_cfg *cfg, int32_t limit, int64_t min_rtt_ns,
                            int64_t sample_rtt_ns, double *gradient) {
  double buffered = (double)min_rtt_ns + (double)min_rtt_ns * cfg->buffer;
  double g = sample_rtt_ns > 0 ? buffered / (double)sample_rtt_ns : 2.0;
  g = g < 0.5 ? 0.5 : g > 2.0 ? 2.0 : g;
  if (gradient != NULL) *gradient = g;
  double l = (double)limit * g;
  double n = floor(l + sqrt(l));
  if (n > (double)cfg->max_concurrency) n = (double)cfg->max_concurrency;
  if (n < (double)cfg->min_concurrency) n = (double)cfg->min_concurrency;
  return (int32_t)n;
}

/* Sets the limit; five sample windows in a row at min_concurrency (outside a minRTT window)
 * suggest a wrong minRTT, so the minRTT timer is made due now. */
static void set_limit(model_acc *a, int32_t limit, int64_t now_ns) {
  int32_t old = a->limit;
  a->limit = limit;
  if (!in_window(a) && old == a->cfg->min_concurrency && limit == a->cfg->min_concurrency)
    a->consecutive_min++;
  else
    a->consecutive_min = 0;
  if (a->consecutive_min >= 5) a->next_min_rtt_ns = now_ns;
}

static void enter_window(model_acc *a, int64_t now_ns) {
  if (in_window(a)) return;
  a->deferred = a->limit;
  set_limit(a, a->cfg->min_concurrency, now_ns);
  sim_hist_init(&a->samples);
  a->epoch_ns = now_ns;
}

/* The summary of the window's samples (then cleared). */
static int64_t summarize(model_acc *a) {
  int64_t v = sim_hist_quantile(&a->samples, a->cfg->percentile);
  sim_hist_init(&a->samples);
  return v;
}

static void update_min_rtt(model_acc *a, int64_t now_ns, gsl_rng *r) {
  if (a->samples.count > 0) a->min_rtt_ns = summarize(a);
  /* The limit is restored while the window still counts as open (as Envoy orders it), so the
   * restoring does not count towards the five windows at min_concurrency. */
  set_limit(a, a->deferred, now_ns);
  a->deferred = 0;
  /* Envoy: interval + random() % ceil(interval_ms x jitter), in whole milliseconds. */
  int64_t interval_ms = a->cfg->min_rtt_interval_ns / 1000000;
  int64_t range_ms = (int64_t)ceil((double)interval_ms * a->cfg->jitter);
  int64_t extra_ms = range_ms > 0 ? (int64_t)gsl_rng_uniform_int(r, (unsigned long)range_ms) : 0;
  a->next_min_rtt_ns = now_ns + a->cfg->min_rtt_interval_ns + extra_ms * 1000000;
  a->next_update_ns = now_ns + a->cfg->update_interval_ns;
}

void model_acc_init(model_acc *a, const model_acc_cfg *cfg, int64_t now_ns) {
  a->cfg = cfg;
  sim_hist_init(&a->samples);
  a->limit = cfg->min_concurrency;
  a->outstanding = 0;
  a->deferred = 0;
  a->consecutive_min = 0;
  a->min_rtt_ns = a->sample_rtt_ns = 0;
  a->gradient = 1.0;
  a->next_min_rtt_ns = INT64_MAX;
  enter_window(a, now_ns);
  a->next_update_ns = now_ns + cfg->update_interval_ns;
}

void model_acc_advance(model_acc *a, int64_t now_ns, gsl_rng *r) {
  (void)r;
  for (;;) {
    int64_t t = a->next_update_ns < a->next_min_rtt_ns ? a->next_update_ns : a->next_min_rtt_ns;
    if (t > now_ns) return;
    if (t == a->next_min_rtt_ns) {
      /* The minRTT timer fires: a new window (a no-op while one is open). */
      a->next_min_rtt_ns = INT64_MAX;
      enter_window(a, t);
      continue;
    }
    /* The sample timer fires; during a minRTT window it gives up without re-arming (the
     * window's end re-arms it). */
    if (in_window(a)) {
      a->next_update_ns = INT64_MAX;
      continue;
    }
    if (a->samples.count > 0) {
      a->sample_rtt_ns = summarize(a);
      set_limit(
          a, model_acc_new_limit(a->cfg, a->limit, a->min_rtt_ns, a->sample_rtt_ns, &a->gradient),
          t);
    }
    a->next_update_ns = t + a->cfg->update_interval_ns;
  }
}

bool model_acc_forward(model_acc *a, int64_t now_ns, gsl_rng *r) {
  model_acc_advance(a, now_ns, r);
  if (a->outstanding >= a->limit) return false;
  a->outstanding++;
  return true;
}

void model_acc_record(model_acc *a, int64_t send_ns, int64_t now_ns, gsl_rng *r) {
  model_acc_advance(a, now_ns, r);
  if (a->outstanding > 0) a->outstanding--;
  if (send_ns < a->epoch_ns) return;
  sim_hist_record(&a->samples, now_ns - send_ns);
  if (in_window(a) && a->samples.count >= (uint64_t)a->cfg->request_count)
    update_min_rtt(a, now_ns, r);
}
