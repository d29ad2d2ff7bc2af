/*
 * expt_study_series.c: each run's goodput and offered load per bucket, and series.csv: their
 * mean and 10-90 % band across replications per variant (expt_study_series.h). Invariant: the
 * file depends only on the runs' values in run-list order, never on the thread that ran them.
 */
#include "expt/expt_study_series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_csv.h"
#include "expt/expt_output.h"

static int ts_column(const model_timeseries *ts, const char *name) {
  for (size_t c = 0; c < ts->n_columns; c++)
    if (strcmp(ts->names[c], name) == 0) return (int)c;
  return -1;
}

void expt_study_series_of_run(const model_results *res, expt_study_series *out) {
  const model_timeseries *ts = &res->ts;
  out->n = 0;
  out->bucket_s = (double)ts->bucket_ns / 1e9;
  int g = ts_column(ts, "goodput_rps"), o = ts_column(ts, "offered_rps");
  if (g < 0 || o < 0 || ts->values == NULL || ts->n_buckets == 0) return;
  /* Groups of f buckets keep the run within the cap; a rate's mean over a group is the rate
   * over the group's span (the last, shorter group averages what it has). */
  size_t f = (ts->n_buckets + EXPT_STUDY_SERIES_MAX - 1) / EXPT_STUDY_SERIES_MAX;
  out->bucket_s *= (double)f;
  for (size_t b0 = 0; b0 < ts->n_buckets; b0 += f) {
    double sg = 0, so = 0;
    size_t m = 0;
    for (size_t b = b0; b < b0 + f && b < ts->n_buckets; b++, m++) {
      sg += ts->values[b * ts->n_columns + (size_t)g];
      so += ts->values[b * ts->n_columns + (size_t)o];
    }
    out->goodput[out->n] = sg / (double)m;
    out->offered[out->n] = so / (double)m;
    out->n++;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of the n sorted values xs (Hyndman and Fan's type 7, as R's default). */
static double quantile(const double *xs, size_t n, double q) {
  double h = (double)(n - 1) * q;
  size_t i = (size_t)floor(h);
  return i + 1 < n ? xs[i] + (h - (double)i) * (xs[i + 1] - xs[i]) : xs[n - 1];
}

typedef struct series_ctx {
  const expt_study_series *runs;
  size_t nv, reps;
  const json_t *names;
  double *scratch; /* reps values */
} series_ctx;

/* The rows of variant v: one per bucket that some replication has. */
static void variant_rows(const series_ctx *c, size_t v, FILE *f) {
  size_t nb = 0;
  double width = 0;
  for (size_t r = 0; r < c->reps; r++) {
    const expt_study_series *s = &c->runs[v * c->reps + r];
    if (s->n > nb) {
      nb = s->n;
      width = s->bucket_s;
    }
  }
  for (size_t b = 0; b < nb; b++) {
    size_t n = 0;
    double offered = 0, sum = 0;
    for (size_t r = 0; r < c->reps; r++) {
      const expt_study_series *s = &c->runs[v * c->reps + r];
      if (b >= s->n) continue;
      c->scratch[n++] = s->goodput[b];
      sum += s->goodput[b];
      offered += s->offered[b];
    }
    qsort(c->scratch, n, sizeof *c->scratch, cmp_double);
    expt_csv_text(f, json_string_value(json_array_get(c->names, v)));
    fprintf(f, ",%.12g,%zu,%.12g,%.12g,%.12g,%.12g\n", expt_output_round((double)b * width), n,
            expt_output_round(sum / (double)n), expt_output_round(quantile(c->scratch, n, 0.1)),
            expt_output_round(quantile(c->scratch, n, 0.9)),
            expt_output_round(offered / (double)n));
  }
}

static int fill_series(void *ctx, FILE *f) {
  const series_ctx *c = ctx;
  fputs("variant,t_s,n,goodput_mean,goodput_p10,goodput_p90,offered_mean\n", f);
  for (size_t v = 0; v < c->nv; v++)
    variant_rows(c, v, f);
  return ferror(f) ? -1 : 0;
}

int expt_study_series_write(const char *dir, const expt_study_series *runs, size_t nv, size_t reps,
                            const json_t *names, retry_error *err) {
  series_ctx c = {runs, nv, reps, names, calloc(reps > 0 ? reps : 1, sizeof(double))};
  char *path = expt_output_printf("%s/series.csv", dir);
  int rc = 0;
  if (c.scratch == NULL || path == NULL) {
    retry_error_set(err, RETRY_ENOMEM, dir, "", -1, -1, "out of memory writing series.csv");
    rc = RETRY_ENOMEM;
  } else {
    rc = expt_output_write_atomic(path, fill_series, &c, err);
  }
  free(path);
  free(c.scratch);
  return rc;
}
