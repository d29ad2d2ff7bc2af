/*
 * expt_study_files.c: a study's outputs read back from its plan and run records: the
 * aggregates, summary.json, runs.csv, points.csv and paired.csv. Invariant: written in
 * run-list order from the records alone, so a merge of shards writes the same bytes.
 */
#include "expt/expt_study_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_agg.h"
#include "expt/expt_output.h"
#include "expt/expt_json.h"
#include "expt/expt_csv.h"

/* {==================================================================
 * Outputs
 * =================================================================== */

const char *expt__study_variant_name(const expt__study *st, size_t v) {
  return json_string_value(json_array_get(st->names, v));
}

static const json_t *result_of(const expt__study *st, size_t p, size_t v, size_t r) {
  return json_object_get(json_array_get(st->records, (p * st->nv + v) * st->reps + r), "result");
}

/* Aggregates every (point, variant). Returns 0 or RETRY_ENOMEM. */
int expt__study_aggregate(expt__study *st) {
  st->aggs = calloc(st->np * st->nv, sizeof *st->aggs);
  const json_t **runs = calloc(st->reps, sizeof *runs);
  expt_agg_table **tables = calloc(st->nv, sizeof *tables);
  int rc = st->aggs != NULL && runs != NULL && tables != NULL ? 0 : RETRY_ENOMEM;
  for (size_t p = 0; p < st->np && rc == 0; p++) {
    for (size_t v = 0; v < st->nv && rc == 0; v++) {
      for (size_t r = 0; r < st->reps; r++)
        runs[r] = result_of(st, p, v, r);
      tables[v] = expt_agg_table_create(runs, st->reps);
      if (tables[v] == NULL) rc = RETRY_ENOMEM;
    }
    for (size_t v = 0; v < st->nv && rc == 0; v++) {
      for (size_t r = 0; r < st->reps; r++)
        runs[r] = result_of(st, p, v, r);
      bool paired = st->baseline >= 0 && (size_t)st->baseline != v;
      json_t *a = expt_agg_object_adjusted(
          expt__study_variant_name(st, v), tables[v], runs, paired ? tables[st->baseline] : NULL,
          paired ? expt__study_variant_name(st, (size_t)st->baseline) : NULL, st->level, st->holm);
      if (a == NULL) rc = RETRY_ENOMEM;
      st->aggs[p * st->nv + v] = a;
    }
    for (size_t v = 0; v < st->nv; v++) {
      expt_agg_table_destroy(tables[v]);
      tables[v] = NULL;
    }
  }
  free(tables);
  free(runs);
  return rc;
}

/* summary.json: the plan's provenance, the study block, the points with their aggregates, the
 * search (local runs only) and every run record. */
int expt__study_make_summary(expt__study *st, const json_t *search) {
  bool ok = true;
  json_t *doc = json_object();
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)st->plan, key, v) {
    if (strcmp(key, "points") != 0) expt_json_put(doc, key, json_incref(v), &ok);
  }
  json_t *pts = json_array();
  for (size_t p = 0; p < st->np && ok; p++) {
    json_t *pt = json_deep_copy(json_array_get(st->points, p)), *vars = json_array();
    for (size_t k = 0; k < st->nv; k++)
      if (json_array_append(vars, st->aggs[p * st->nv + k]) != 0) ok = false;
    expt_json_put(pt, "variants", vars, &ok);
    if (json_array_append_new(pts, pt) != 0) ok = false;
  }
  expt_json_put(doc, "points", pts, &ok);
  if (search != NULL) expt_json_put(doc, "search", json_deep_copy(search), &ok);
  expt_json_put(doc, "runs", json_incref((json_t *)st->records), &ok);
  if (!ok) {
    json_decref(doc);
    return RETRY_ENOMEM;
  }
  st->summary = doc;
  return 0;
}

/* A number as the CSV files write it: integers in full, anything else with the 10 significant
 * digits that print a rounded value exactly; empty for none. */
static void csv_num(FILE *f, double x) {
  if (!isfinite(x)) return;
  if (x == floor(x) && fabs(x) < 1e15)
    fprintf(f, "%.0f", x == 0 ? 0.0 : x);
  else
    fprintf(f, "%.10g", x);
}

/* A JSON value as one CSV field: a string as it is, anything else as compact JSON. */
static void csv_json(FILE *f, const json_t *v) {
  if (json_is_string(v)) {
    expt_csv_text(f, json_string_value(v));
    return;
  }
  if (json_is_integer(v)) { /* seeds: every digit */
    fprintf(f, "%lld", (long long)json_integer_value(v));
    return;
  }
  if (json_is_real(v)) {
    csv_num(f, json_real_value(v));
    return;
  }
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  if (s != NULL) expt_csv_text(f, s);
  free(s);
}

/* "point,<axis paths>," */
static void csv_head(FILE *f, const expt__study *st) {
  fputs("point,", f);
  for (size_t a = 0; a < st->n_axes; a++) {
    expt_csv_text(f, json_string_value(json_object_get(json_array_get(st->axes, a), "path")));
    fputc(',', f);
  }
}

/* "<point>,<axis values>," */
static void csv_point(FILE *f, const expt__study *st, size_t p) {
  fprintf(f, "%zu,", p);
  const json_t *vals = json_object_get(json_array_get(st->points, p), "values");
  for (size_t a = 0; a < st->n_axes; a++) {
    const char *path = json_string_value(json_object_get(json_array_get(st->axes, a), "path"));
    csv_json(f, json_object_get(vals, path));
    fputc(',', f);
  }
}

typedef struct csv_run_ctx {
  FILE *f;
  const expt__study *st;
  size_t p, v, r;
  const json_t *seed;
} csv_run_ctx;

static void csv_run_metric(void *ctx, const char *name, expt_agg_kind kind, double value) {
  (void)kind;
  csv_run_ctx *c = ctx;
  csv_point(c->f, c->st, c->p);
  expt_csv_text(c->f, expt__study_variant_name(c->st, c->v));
  fprintf(c->f, ",%zu,", c->r);
  csv_json(c->f, c->seed);
  fputc(',', c->f);
  expt_csv_text(c->f, name);
  fputc(',', c->f);
  csv_num(c->f, value);
  fputc('\n', c->f);
}

static int fill_runs_csv(void *ctx, FILE *f) {
  const expt__study *st = ctx;
  csv_head(f, st);
  fputs("variant,replication,seed,metric,value\n", f);
  for (size_t i = 0; i < json_array_size(st->records); i++) {
    const json_t *rec = json_array_get(st->records, i);
    csv_run_ctx c = {.f = f,
                     .st = st,
                     .p = i / (st->nv * st->reps),
                     .v = (i / st->reps) % st->nv,
                     .r = i % st->reps,
                     .seed = json_object_get(rec, "seed")};
    expt_agg_flatten(json_object_get(rec, "result"), csv_run_metric, &c);
  }
  return ferror(f) ? -1 : 0;
}

static void csv_field_num(FILE *f, const json_t *o, const char *key) {
  fputc(',', f);
  csv_num(f, json_is_number(json_object_get(o, key)) ? json_number_value(json_object_get(o, key))
                                                     : NAN);
}

static int fill_points_csv(void *ctx, FILE *f) {
  const expt__study *st = ctx;
  csv_head(f, st);
  fputs("variant,metric,n,mean,sd,lo,hi,half_width\n", f);
  for (size_t p = 0; p < st->np; p++)
    for (size_t v = 0; v < st->nv; v++) {
      const json_t *a = st->aggs[p * st->nv + v];
      const char *key;
      json_t *e;
      json_object_foreach(json_object_get(a, "intervals"), key, e) {
        csv_point(f, st, p);
        expt_csv_text(f, expt__study_variant_name(st, v));
        fputc(',', f);
        expt_csv_text(f, key);
        static const char *const cols[] = {"n", "mean", "sd", "lo", "hi", "half_width"};
        for (size_t k = 0; k < 6; k++)
          csv_field_num(f, e, cols[k]);
        fputc('\n', f);
      }
      json_object_foreach(json_object_get(a, "proportions"), key, e) {
        csv_point(f, st, p);
        expt_csv_text(f, expt__study_variant_name(st, v));
        fputc(',', f);
        expt_csv_text(f, key);
        csv_field_num(f, e, "n");
        csv_field_num(f, e, "p");
        fputc(',', f); /* sd: none for a proportion */
        csv_field_num(f, e, "lo");
        csv_field_num(f, e, "hi");
        fputs(",\n", f); /* half_width: the Wilson interval is not symmetric */
      }
    }
  return ferror(f) ? -1 : 0;
}

static int fill_paired_csv(void *ctx, FILE *f) {
  const expt__study *st = ctx;
  csv_head(f, st);
  fputs("variant,baseline,metric,n,mean_diff,lo,hi,unpaired_lo,unpaired_hi,distinguishable,test,"
        "p_value,n_one_censored,n_both_censored\n",
        f);
  for (size_t p = 0; p < st->np; p++)
    for (size_t v = 0; v < st->nv; v++) {
      const json_t *pd = json_object_get(st->aggs[p * st->nv + v], "paired");
      if (pd == NULL) continue;
      const char *key;
      json_t *e;
      json_object_foreach(json_object_get(pd, "metrics"), key, e) {
        csv_point(f, st, p);
        expt_csv_text(f, expt__study_variant_name(st, v));
        fputc(',', f);
        expt_csv_text(f, json_string_value(json_object_get(pd, "baseline")));
        fputc(',', f);
        expt_csv_text(f, key);
        static const char *const cols[] = {"n",  "mean_diff",   "lo",
                                           "hi", "unpaired_lo", "unpaired_hi"};
        for (size_t k = 0; k < 6; k++)
          csv_field_num(f, e, cols[k]);
        fprintf(f, ",%d,", json_is_true(json_object_get(e, "distinguishable")) ? 1 : 0);
        /* Which test set the flag, and for a censored time the pairs it ordered or left. */
        expt_csv_text(f, json_string_value(json_object_get(e, "test")));
        static const char *const tail[] = {"p_value", "n_one_censored", "n_both_censored"};
        for (size_t k = 0; k < 3; k++)
          csv_field_num(f, e, tail[k]);
        fputc('\n', f);
      }
    }
  return ferror(f) ? -1 : 0;
}

/* Joins dir and name into buf. */
static void join_path(char *buf, size_t size, const char *dir, const char *name) {
  size_t n = strlen(dir);
  snprintf(buf, size, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name);
}

int expt__study_write_files(const expt__study *st, const char *dir, retry_error *err) {
  int rc = expt_output_make_dirs(dir, err);
  char path[4096];
  if (rc == 0) {
    join_path(path, sizeof path, dir, "runs.csv");
    rc = expt_output_write_atomic(path, fill_runs_csv, (void *)st, err);
  }
  if (rc == 0) {
    join_path(path, sizeof path, dir, "points.csv");
    rc = expt_output_write_atomic(path, fill_points_csv, (void *)st, err);
  }
  if (rc == 0 && st->baseline >= 0) {
    join_path(path, sizeof path, dir, "paired.csv");
    rc = expt_output_write_atomic(path, fill_paired_csv, (void *)st, err);
  }
  if (rc == 0) {
    join_path(path, sizeof path, dir, "summary.json");
    rc = expt_output_write_atomic(path, expt_json_fill, st->summary, err);
  }
  return rc;
}

/* The point's values as "path=value, path=value" (empty without a sweep). */
void expt__study_point_label(const expt__study *st, size_t p, char *buf, size_t size) {
  buf[0] = '\0';
  size_t len = 0;
  const json_t *vals = json_object_get(json_array_get(st->points, p), "values");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)vals, key, v) {
    char text[256];
    expt_output_value_text(v, text, sizeof text);
    int w = snprintf(buf + len, size - len, "%s%s=%s", len > 0 ? ", " : "", key, text);
    if (w < 0 || (size_t)w >= size - len) break;
    len += (size_t)w;
  }
}

/* }================================================================== */
