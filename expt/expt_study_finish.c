/*
 * expt_study_finish.c: the finishing step, the same for a local run and a merge of shards:
 * aggregate, write the files, print the table or summary.json, check the expectations, draw
 * the pictures and the report.
 */
#include "expt/expt_study_int.h"

#include "expt/expt_plot.h"
#include "expt/expt_report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expt/expt_expect.h"
#include "expt/expt_output.h"
#include "expt/expt_json.h"
#include "expt/expt_study_series.h"

/* {==================================================================
 * Finishing: the same for a local run and a merge
 * =================================================================== */

/* The expectations as they apply to an aggregate, where a boolean became its share of true:
 * `true` means every replication (share >= 1), `false` none (share <= 0). Those of a search
 * ("search...") are left out and counted into *skipped. Returns a new reference, NULL when
 * out of memory or when expect is NULL. */
static json_t *expect_for_means(const json_t *expect, size_t *skipped) {
  size_t other = 0;
  json_t *e = expt_expect_part(expect, false, &other);
  *skipped += other;
  if (e == NULL) return NULL;
  const char *key;
  json_t *v;
  void *tmp;
  json_object_foreach_safe(e, tmp, key, v) {
    if (json_is_boolean(v))
      json_object_set_new(
          e, key, json_pack("{s:i}", json_is_true(v) ? "min" : "max", json_is_true(v) ? 1 : 0));
  }
  return e;
}

/* Variant v's expectations from the plan's document, as the loader merges them (the top
 * level's, then the variant's own winning): what a merge, which has no scenario, checks. New
 * reference, NULL when there are none or out of memory. */
static json_t *plan_expect(const expt__study *st, size_t v) {
  const json_t *doc = json_object_get(st->plan, "document");
  const json_t *top = json_object_get(doc, "expect");
  json_t *e = json_is_object(top) ? json_deep_copy(top) : json_object();
  const json_t *vars = json_object_get(doc, "variants");
  const char *name = expt__study_variant_name(st, v);
  for (size_t i = 0; e != NULL && name != NULL && i < json_array_size(vars); i++) {
    const json_t *var = json_array_get(vars, i);
    const char *vn = json_string_value(json_object_get(var, "name"));
    const json_t *ve = json_object_get(var, "expect");
    if (vn != NULL && strcmp(vn, name) == 0 && json_is_object(ve))
      json_object_update(e, (json_t *)ve);
  }
  if (e != NULL && json_object_size(e) == 0) {
    json_decref(e);
    e = NULL;
  }
  return e;
}

/* Checks every variant's expectations against its aggregate at every point; spec NULL (a
 * merge): those of the plan's document. */
static int check_all(const expt__study *st, const expt_study_spec *spec, const expt_run_opts *o,
                     bool *junit_failed) {
  bool verbose = o->format == EXPT_FORMAT_JSON && !o->quiet;
  size_t total = 0, skipped = 0; /* skipped: expectations of a search ("search...") */
  int failed = 0;
  expt_junit *junit =
      o->junit != NULL ? expt_junit_create(json_string_value(json_object_get(st->plan, "scenario")))
                       : NULL;
  *junit_failed = o->junit != NULL && junit == NULL;
  for (size_t p = 0; p < st->np; p++) {
    char label[512];
    expt__study_point_label(st, p, label, sizeof label);
    const expt_scenario *s = spec != NULL ? spec->scenarios[spec->n_points > 0 ? p : 0] : NULL;
    for (size_t v = 0; v < st->nv; v++) {
      json_t *pe = s == NULL ? plan_expect(st, v) : NULL;
      json_t *expect = expect_for_means(s != NULL ? expt_scenario_expect(s, v) : pe, &skipped);
      json_decref(pe);
      char name[700];
      snprintf(name, sizeof name, "%s%s%s%s", expt__study_variant_name(st, v), label[0] ? " (" : "",
               label, label[0] ? ")" : "");
      total += json_object_size(expect);
      failed += expt_expect_check_to(expect, st->aggs[p * st->nv + v], name, o->err, verbose,
                                     junit != NULL ? expt_junit_add : NULL, junit);
      json_decref(expect);
    }
  }
  if (expt_junit_finish(junit, o->junit, true, o->err) != 0) *junit_failed = true;
  char note[96] = "";
  if (skipped > 0)
    snprintf(note, sizeof note, "; %zu expectation%s of a search not checked", skipped,
             skipped == 1 ? "" : "s");
  if (total == 0 && !o->quiet)
    fprintf(o->err, "retrysim: check: the scenario has no expectations%s\n", note);
  else if (!o->quiet || failed > 0)
    fprintf(o->err,
            "retrysim: check: %zu passed, %d failed (against the means over %zu "
            "replications%s)\n",
            total - (size_t)failed, failed, st->reps, note);
  return failed;
}

/* --plot: series.csv when the runs kept their series (expt_study_series.h), else none (an
 * earlier study's file in the same directory would be drawn as this one's). A failure costs
 * the picture only, and says so. */
static void write_series(const expt__study *st, const expt_study_spec *spec,
                         const expt_run_opts *o) {
  retry_error e;
  retry_error_clear(&e);
  if (spec == NULL || spec->series == NULL) {
    char *path = expt_output_printf("%s/series.csv", o->out_dir);
    if (path != NULL) unlink(path);
    free(path);
  } else if (expt_study_series_write(o->out_dir, spec->series, st->nv, st->reps, st->names,
                                     &e) != 0) {
    expt_error_print(o->err, &e);
  }
}

int expt_study_finish(const json_t *plan, const json_t *records, const expt_study_spec *spec,
                      const expt_run_opts *o) {
  const json_t *sb = json_object_get(plan, "study");
  expt__study st = {.plan = plan, .records = records};
  st.reps = (size_t)json_integer_value(json_object_get(sb, "replications"));
  st.level = json_number_value(json_object_get(sb, "confidence"));
  const char *adjust = json_string_value(json_object_get(sb, "adjust"));
  st.holm = adjust != NULL && strcmp(adjust, "holm") == 0;
  st.names = json_object_get(sb, "variants");
  st.nv = json_array_size(st.names);
  st.axes = json_object_get(sb, "axes");
  st.n_axes = json_array_size(st.axes);
  st.points = json_object_get(plan, "points");
  st.np = json_array_size(st.points);
  st.baseline = -1;
  const char *bl = json_string_value(json_object_get(sb, "baseline"));
  for (size_t v = 0; bl != NULL && v < st.nv; v++)
    if (strcmp(expt__study_variant_name(&st, v), bl) == 0) st.baseline = (long)v;
  int status = EXPT_EXIT_OK;
  if (expt__study_aggregate(&st) != 0 ||
      expt__study_make_summary(&st, spec != NULL ? spec->search : NULL) != 0) {
    fprintf(o->err, "retrysim: out of memory aggregating the runs\n");
    status = EXPT_EXIT_RUNTIME;
  }
  if (status == EXPT_EXIT_OK && o->out_dir != NULL) {
    retry_error e;
    retry_error_clear(&e);
    if (expt__study_write_files(&st, o->out_dir, &e) != 0) {
      expt_error_print(o->err, &e);
      status = EXPT_EXIT_RUNTIME;
    }
    /* --plot: the study's pictures from points.csv, then report.md and report.html (the page
     * is written even when a picture failed, without pictures, as a plain run does). */
    if (status == EXPT_EXIT_OK && o->plot) {
      write_series(&st, spec, o);
      int prc = expt_report_study_plots(st.summary, o->out_dir, expt_plot_dir(), o->plot_metrics,
                                        o->n_plot_metrics, o->err, &e);
      if (prc != 0) expt_error_print(o->err, &e);
      retry_error e2;
      retry_error_clear(&e2);
      if (expt_report_study_write(st.summary, o->out_dir, o->command, prc == 0, o->plot_metrics,
                                  o->n_plot_metrics, &e2) != 0) {
        expt_error_print(o->err, &e2);
        status = EXPT_EXIT_RUNTIME;
      } else if (prc != 0) {
        /* A --plot-metric that names no metric is bad input; a picture that failed is not. */
        status = prc == RETRY_EINVAL ? EXPT_EXIT_USAGE : EXPT_EXIT_RUNTIME;
      }
    }
  }
  if (status == EXPT_EXIT_OK) {
    int rc = 0;
    if (o->format == EXPT_FORMAT_JSON)
      rc = expt_json_fill(st.summary, o->out);
    else if (!o->quiet)
      rc = expt__study_print_table(&st, o->out);
    if (rc == 0 && fflush(o->out) != 0) rc = -1;
    if (rc != 0) {
      fprintf(o->err, "retrysim: cannot write the summary to standard output\n");
      status = EXPT_EXIT_RUNTIME;
    }
    bool junit_failed = false;
    if (o->check && check_all(&st, spec, o, &junit_failed) > 0 && status == EXPT_EXIT_OK)
      status = EXPT_EXIT_CHECK;
    if (junit_failed) status = EXPT_EXIT_RUNTIME;
  }
  for (size_t i = 0; st.aggs != NULL && i < st.np * st.nv; i++)
    json_decref(st.aggs[i]);
  free(st.aggs);
  json_decref(st.summary);
  return status;
}

/* }================================================================== */
