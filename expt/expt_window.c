/*
 * expt_window.c: the figures of a run over its named windows (expt_window.h). A window is the
 * whole buckets of the time series inside [from, to) and the duration: a bucket cut by either
 * end would weigh a fraction of a second as a whole one.
 */
#include "expt/expt_window.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "expt/expt_json.h"

/* The rounding the run object's numbers get (expt_output_round) is passed in, so that this
 * module and the writer do not include each other; it travels as an argument, not a static,
 * because a study's threads write runs at once. */
typedef double (*round_fn)(double);

static json_t *num(double v, round_fn rnd) {
  return isfinite(v) ? json_real(rnd(v)) : json_null();
}

/* The column of the time series called name, or -1. */
static long column(const model_timeseries *ts, const char *name) {
  for (size_t c = 0; c < ts->n_columns; c++)
    if (strcmp(ts->names[c], name) == 0) return (long)c;
  return -1;
}

/* The window [b0, b1) of whole buckets: its bounds, goodput / offered (sums, not a mean of
 * ratios, capped at 1 as the recovery rule does) and every column's mean. */
static json_t *window_json(const model_timeseries *ts, size_t b0, size_t b1, round_fn rnd,
                           bool *ok) {
  json_t *o = json_object();
  double sec = (double)ts->bucket_ns / 1e9;
  expt_json_put(o, "from_s", num((double)b0 * sec, rnd), ok);
  expt_json_put(o, "to_s", num((double)b1 * sec, rnd), ok);
  expt_json_put(o, "buckets", json_integer((json_int_t)(b1 - b0)), ok);
  long off = column(ts, "offered_rps"), good = column(ts, "goodput_rps");
  double so = 0, sg = 0;
  for (size_t b = b0; b < b1 && off >= 0 && good >= 0; b++) {
    so += ts->values[b * ts->n_columns + (size_t)off];
    sg += ts->values[b * ts->n_columns + (size_t)good];
  }
  expt_json_put(o, "goodput_ratio", num(so > 0 ? (sg < so ? sg / so : 1.0) : NAN, rnd), ok);
  for (size_t c = 0; c < ts->n_columns; c++) {
    double sum = 0;
    size_t n = 0;
    for (size_t b = b0; b < b1; b++) {
      double v = ts->values[b * ts->n_columns + c];
      if (isfinite(v)) {
        sum += v;
        n++;
      }
    }
    expt_json_put(o, ts->names[c], num(n > 0 ? sum / (double)n : NAN, rnd), ok);
  }
  return o;
}

json_t *expt_window_json(const expt_recovery *rec, const model_results *r, double (*rnd)(double),
                         bool *oom) {
  if (rec == NULL) return NULL;
  const expt_recovery_cfg *cfg = rec->windows_cfg;
  const model_timeseries *ts = &r->ts;
  if (cfg == NULL || cfg->n_windows == 0 || ts->values == NULL || ts->bucket_ns <= 0) return NULL;
  bool ok = true;
  json_t *o = json_object();
  int64_t dur = rec->window_duration_ns, t0 = rec->window_trigger_start_ns,
          t1 = rec->window_trigger_end_ns;
  for (size_t i = 0; i < cfg->n_windows && ok; i++) {
    const expt_window *w = &cfg->windows[i];
    int64_t from = w->kind == EXPT_WINDOW_SPAN ? w->from_ns : w->kind == EXPT_WINDOW_TRIGGER ? t0 : t1;
    int64_t to = w->kind == EXPT_WINDOW_SPAN ? w->to_ns : w->kind == EXPT_WINDOW_TRIGGER ? t1 : dur;
    /* No trigger (INT64_MAX, INT64_MIN), or one past the duration: no window to report. */
    if (from < 0 || from >= dur || to <= from) {
      expt_json_put(o, w->name, json_null(), &ok);
      continue;
    }
    if (to > dur) to = dur;
    size_t b0 = (size_t)((from + ts->bucket_ns - 1) / ts->bucket_ns);
    size_t b1 = (size_t)(to / ts->bucket_ns);
    if (b1 > ts->n_buckets) b1 = ts->n_buckets;
    expt_json_put(o, w->name, b1 > b0 ? window_json(ts, b0, b1, rnd, &ok) : json_null(), &ok);
  }
  if (ok) return o;
  json_decref(o);
  *oom = true;
  return NULL;
}
