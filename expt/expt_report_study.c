/*
 * expt_report_study.c: the page and the pictures of a study (replications, a sweep): report.md
 * and report.html from its summary.json, and the sweep's pictures from its points.csv. Also
 * the first lines and the writer that a search's page shares (expt_report_int.h).
 */
#include "expt/expt_report_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The study's metrics a report shows, in this order, when the aggregates have them: the label
 * of its column, and whether it is a proportion (Wilson) rather than a number (Student t). */
typedef struct study_metric {
  const char *name, *label, *stem;
  bool prop;
} study_metric;

static const study_metric study_metrics[] = {
    {"goodput_per_s", "goodput/s", "goodput", false},
    {"calls.attempts_per_call", "front-door attempts/call", "attempts", false},
    {"latency_ms.p99", "p99 ms", "p99", false},
    {"recovery.recovered", "P(recovered)", "recovered", true},
};
#define N_STUDY_METRICS (sizeof study_metrics / sizeof study_metrics[0])

/* The aggregate object of point p, variant v, or NULL. */
static const json_t *study_agg(const json_t *summary, size_t p, size_t v) {
  return json_array_get(
      json_object_get(json_array_get(json_object_get(summary, "points"), p), "variants"), v);
}

/* The interval ({n, mean, ..., half_width}) or proportion ({n, k, p, lo, hi}) of metric m in
 * aggregate a, or NULL. */
static const json_t *study_figure(const json_t *a, const study_metric *m) {
  return json_object_get(json_object_get(a, m->prop ? "proportions" : "intervals"), m->name);
}

/* Whether the study's first aggregate has metric m (every aggregate has the same metrics). */
static bool study_has(const json_t *summary, const study_metric *m) {
  return study_figure(study_agg(summary, 0, 0), m) != NULL;
}

static size_t study_n_axes(const json_t *summary) {
  return json_array_size(json_object_get(json_object_get(summary, "study"), "axes"));
}

static const char *study_axis(const json_t *summary, size_t i) {
  return json_string_value(json_object_get(
      json_array_get(json_object_get(json_object_get(summary, "study"), "axes"), i), "path"));
}

/* A value of an axis as the sweep gave it (expt_output_value_text: 0.05 as 0.05). */
static void value_text(const json_t *v, char *buf, size_t size) {
  expt_output_value_text(v, buf, size);
}

/* "625.3 ± 2.1" (mean and half-width, 4 and 2 significant digits), "625.3" without a
 * half-width, "0.95 [0.83, 0.99]" for a proportion, "-" for none. */
static void figure_text(const json_t *f, bool prop, char *buf, size_t size) {
  if (f == NULL) {
    snprintf(buf, size, "-");
  } else if (prop) {
    snprintf(buf, size, "%.2f [%.2f, %.2f]", num_or_nan(f, "p"), num_or_nan(f, "lo"),
             num_or_nan(f, "hi"));
  } else {
    double m = num_or_nan(f, "mean"), h = num_or_nan(f, "half_width");
    /* A half-width that is rounding noise of equal values (2e-14 on 250.1) is none. */
    if (isnan(m))
      snprintf(buf, size, "-");
    else if (isnan(h) || h <= 1e-9 * fabs(m))
      snprintf(buf, size, "%.4g", m);
    else
      snprintf(buf, size, "%.4g ± %.2g", m, h);
  }
}

/* The pictures of a study: script, its data file, gnuplot -e setting, file stem, caption. */
typedef struct study_picture {
  const char *script, *data;
  char set[1024], stem[96], caption[512];
} study_picture;

/* The extra metrics the user asked to draw (--plot-metric). */
typedef struct study_extra {
  const char *const *metrics;
  size_t n_metrics;
  bool series; /* the directory has series.csv (expt_study_series.h) */
} study_extra;

/* s as a gnuplot string in single quotes, where a quote is written twice. */
static void gp_quote(const char *s, char *buf, size_t size) {
  size_t n = 0;
  if (size < 3) return;
  buf[n++] = '\'';
  for (; *s != '\0' && n + 3 < size; s++) {
    if (*s == '\'') buf[n++] = '\'';
    buf[n++] = *s;
  }
  buf[n++] = '\'';
  buf[n] = '\0';
}

/* A path as a reader says it: "clients.web.arrival.rate" as "web: arrival rate",
 * "services.api.faults[0].end" as "api: faults[0] end"; the service's or client's name first,
 * then the keys with spaces for the dots. */
static void readable_path(const char *path, char *buf, size_t size) {
  const char *rest = path;
  size_t n = 0;
  buf[0] = '\0';
  if (strncmp(path, "services.", 9) == 0 || strncmp(path, "clients.", 8) == 0) {
    const char *name = strchr(path, '.') + 1, *dot = strchr(name, '.');
    if (dot != NULL) {
      n = (size_t)snprintf(buf, size, "%.*s: ", (int)(dot - name), name);
      rest = dot + 1;
    }
  }
  for (; *rest != '\0' && n + 1 < size; rest++)
    buf[n++] = *rest == '.' ? ' ' : *rest;
  buf[n < size ? n : size - 1] = '\0';
}

/* The name of axis a in pictures: the "label" the sweep gave it, else its path made readable. */
static void axis_label(const json_t *summary, size_t a, char *buf, size_t size) {
  const json_t *ax = json_array_get(json_object_get(json_object_get(summary, "study"), "axes"), a);
  const char *label = json_string_value(json_object_get(ax, "label"));
  if (label != NULL)
    snprintf(buf, size, "%s", label);
  else
    readable_path(json_string_value(json_object_get(ax, "path")), buf, size);
}

/* A file stem from a metric's name: what is not a letter, a digit, '.', '-' or '_' as '_'. */
static void metric_stem(const char *metric, char *buf, size_t size) {
  int n = snprintf(buf, size, "sweep-metric-");
  for (const char *c = metric; *c != '\0' && n > 0 && (size_t)n + 1 < size; c++)
    buf[n++] = (isalnum((unsigned char)*c) || strchr(".-_", *c) != NULL) ? *c : '_';
  if (n > 0 && (size_t)n < size) buf[n] = '\0';
}

/* Whether dir has series.csv: the runs kept their series (--plot without a sweep), and the
 * finishing step wrote it (or removed an older one). */
static bool has_series(const char *dir) {
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/series.csv", dir);
  return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* Whether the study has a baseline: paired.csv was written. */
static bool study_paired_any(const json_t *summary) {
  const json_t *vars =
      json_object_get(json_array_get(json_object_get(summary, "points"), 0), "variants");
  for (size_t v = 0; v < json_array_size(vars); v++)
    if (json_object_get(json_array_get(vars, v), "paired") != NULL) return true;
  return false;
}

/* The pictures of a study without a sweep (plots/study.gp): each main metric's value in every
 * replication per variant (runs.csv); P(recovered) with its Wilson interval per variant
 * (points.csv), with a trigger; the paired differences from the baseline with their intervals
 * (paired.csv), with one. Returns how many were added to pics. */
static size_t study_point_pictures(const json_t *summary, const study_extra *extra,
                                   study_picture *pics) {
  size_t n = 0;
  study_picture *p = &pics[n++];
  *p = (study_picture){.script = "study", .data = "runs.csv"};
  snprintf(p->set, sizeof p->set, "kind='spread'");
  snprintf(p->stem, sizeof p->stem, "study-spread");
  snprintf(p->caption, sizeof p->caption,
           "Goodput, front-door attempts/call and p99 latency in every replication, per variant; "
           "the bar is the mean");
  if (study_has(summary, &study_metrics[3])) {
    p = &pics[n++];
    *p = (study_picture){.script = "study", .data = "points.csv"};
    snprintf(p->set, sizeof p->set, "kind='share'");
    snprintf(p->stem, sizeof p->stem, "study-recovered");
    snprintf(p->caption, sizeof p->caption,
             "P(recovered) per variant with its Wilson interval (P(storm) is the rest of the "
             "replications that had a trigger)");
  }
  if (study_paired_any(summary)) {
    p = &pics[n++];
    *p = (study_picture){.script = "study", .data = "paired.csv"};
    snprintf(p->set, sizeof p->set, "kind='paired'");
    snprintf(p->stem, sizeof p->stem, "study-paired");
    snprintf(p->caption, sizeof p->caption,
             "Each variant minus the baseline over the same seeds, with its interval; a bar "
             "that misses the dashed zero line is a difference");
  }
  if (extra != NULL && extra->series) {
    p = &pics[n++];
    *p = (study_picture){.script = "study", .data = "series.csv"};
    snprintf(p->set, sizeof p->set, "kind='series'");
    snprintf(p->stem, sizeof p->stem, "study-series");
    snprintf(p->caption, sizeof p->caption,
             "Goodput over time per variant: the mean over the replications as a line, the band "
             "from their 10th to their 90th percentile in each bucket, the mean offered load "
             "dotted (series.csv)");
  }
  return n;
}

/* Fills pics (room for 2 * N_STUDY_METRICS) with the study's pictures; returns how many. A
 * sweep draws each metric of study_metrics it has against the first axis (one panel per value
 * of the others); a two-axis sweep adds the map of P(recovered) (or goodput without a trigger).
 * A study without a sweep has one point: study_point_pictures. */
static size_t study_pictures(const json_t *summary, const study_extra *extra,
                             study_picture *pics) {
  size_t n_axes = study_n_axes(summary), n = 0;
  if (n_axes == 0) return study_point_pictures(summary, extra, pics);
  char xl[128], yl[128], xq[264], yq[264];
  axis_label(summary, 0, xl, sizeof xl);
  gp_quote(xl, xq, sizeof xq);
  for (size_t i = 0; i < N_STUDY_METRICS; i++) {
    const study_metric *m = &study_metrics[i];
    if (!study_has(summary, m)) continue;
    study_picture *p = &pics[n++];
    p->script = "sweep";
    p->data = "points.csv";
    snprintf(p->set, sizeof p->set, "metric='%.100s'; axislabel=%s", m->name, xq);
    snprintf(p->stem, sizeof p->stem, "sweep-%s", m->stem);
    snprintf(p->caption, sizeof p->caption, "%s against %s: the mean of each variant with its %s",
             m->label, xl, m->prop ? "Wilson interval" : "confidence interval");
  }
  if (n_axes == 2) {
    const study_metric *m = &study_metrics[3];
    if (!study_has(summary, m)) m = &study_metrics[0];
    if (study_has(summary, m)) {
      axis_label(summary, 1, yl, sizeof yl);
      gp_quote(yl, yq, sizeof yq);
      study_picture *p = &pics[n++];
      p->script = "heatmap";
      p->data = "points.csv";
      snprintf(p->set, sizeof p->set, "metric='%.100s'; xname=%s; yname=%s", m->name, xq, yq);
      snprintf(p->stem, sizeof p->stem, "heatmap-%s", m->stem);
      snprintf(p->caption, sizeof p->caption, "%s over %s and %s, one map per variant", m->label,
               xl, yl);
    }
  }
  for (size_t i = 0; extra != NULL && i < extra->n_metrics && i < EXPT_REPORT_MAX_PLOT_METRICS;
       i++) {
    char mq[264];
    gp_quote(extra->metrics[i], mq, sizeof mq);
    study_picture *p = &pics[n++];
    p->script = "sweep";
    p->data = "points.csv";
    snprintf(p->set, sizeof p->set, "metric=%s; axislabel=%s", mq, xq);
    metric_stem(extra->metrics[i], p->stem, sizeof p->stem);
    snprintf(p->caption, sizeof p->caption, "%.200s against %s (--plot-metric)", extra->metrics[i], xl);
  }
  return n;
}

/* Whether points.csv has metric name: the first aggregate has it as a number or a boolean. */
static bool study_has_name(const json_t *summary, const char *name) {
  const json_t *a = study_agg(summary, 0, 0);
  return json_object_get(json_object_get(a, "intervals"), name) != NULL ||
         json_object_get(json_object_get(a, "proportions"), name) != NULL;
}

/* --plot-metric's names: a sweep to draw them against, and metrics points.csv has. Returns 0
 * or RETRY_EINVAL with err filled. */
static int check_extra(const json_t *summary, const study_extra *extra, retry_error *err) {
  if (extra == NULL || extra->n_metrics == 0) return 0;
  if (study_n_axes(summary) == 0) {
    retry_error_set(err, RETRY_EINVAL, "<command line>", "", -1, -1,
                    "--plot-metric draws a metric against a sweep's axis, and this study has "
                    "no sweep (give --sweep PATH=VALUES)");
    return RETRY_EINVAL;
  }
  for (size_t i = 0; i < extra->n_metrics; i++) {
    if (study_has_name(summary, extra->metrics[i])) continue;
    retry_error_set(err, RETRY_EINVAL, "<command line>", "", -1, -1,
                    "--plot-metric %s: points.csv has no such metric (the third column of "
                    "points.csv lists them: goodput_per_s, amplification.SERVICE, "
                    "services.SERVICE.utilization, ...)",
                    extra->metrics[i]);
    return RETRY_EINVAL;
  }
  return 0;
}

int expt_report_study_plots(const json_t *summary, const char *dir, const char *plots_dir,
                            const char *const *metrics, size_t n_metrics, FILE *log,
                            retry_error *err) {
  study_extra extra = {metrics, n_metrics, has_series(dir)};
  int bad = check_extra(summary, &extra, err);
  if (bad != 0) return bad;
  study_picture pics[2 * N_STUDY_METRICS + EXPT_REPORT_MAX_PLOT_METRICS];
  size_t n = study_pictures(summary, &extra, pics);
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    char title[200];
    snprintf(title, sizeof title, "%s", name != NULL ? name : "study");
    rc = expt_plot_render(plots_dir, pics[i].script, pics[i].set, dir, pics[i].data, pics[i].stem,
                          title, log, err);
  }
  return rc;
}

/* The axis columns of a row of point p, into cells[0..n_axes). */
static void axis_cells(const json_t *summary, size_t p, char cells[][128], size_t n_axes) {
  const json_t *vals =
      json_object_get(json_array_get(json_object_get(summary, "points"), p), "values");
  for (size_t a = 0; a < n_axes; a++)
    value_text(json_object_get(vals, study_axis(summary, a)), cells[a], 128);
}

/* The table of every (point, variant): the axes' values, n, each metric with its interval, and
 * with a trigger the recovery time (median over every replication, censored honestly). */
static void study_table(expt_page *d, const json_t *summary) {
  size_t n_axes = study_n_axes(summary);
  if (n_axes > 6) n_axes = 6; /* the table has room for 16 columns */
  const char *head[16];
  char align[17];
  size_t c = 0;
  for (size_t a = 0; a < n_axes; a++, c++) {
    head[c] = study_axis(summary, a);
    align[c] = 'r';
  }
  head[c] = "variant";
  align[c++] = 'l';
  head[c] = "n";
  align[c++] = 'r';
  const study_metric *shown[N_STUDY_METRICS];
  size_t ns = 0;
  for (size_t i = 0; i < N_STUDY_METRICS; i++) {
    if (!study_has(summary, &study_metrics[i])) continue;
    shown[ns++] = &study_metrics[i];
    head[c] = study_metrics[i].label;
    align[c++] = 'r';
  }
  bool rec = json_object_get(study_agg(summary, 0, 0), "recovery_s") != NULL;
  if (rec) {
    head[c] = "P(storm)";
    align[c++] = 'r';
    head[c] = "recovery s: median";
    align[c++] = 'r';
    head[c] = "recovery s: mean of recovered";
    align[c++] = 'r';
  }
  align[c] = '\0';
  expt_page_table(d, head, align);
  size_t np = json_array_size(json_object_get(summary, "points"));
  for (size_t p = 0; p < np; p++) {
    const json_t *vars =
        json_object_get(json_array_get(json_object_get(summary, "points"), p), "variants");
    for (size_t v = 0; v < json_array_size(vars); v++) {
      const json_t *a = json_array_get(vars, v);
      char cells[16][128];
      axis_cells(summary, p, cells, n_axes);
      size_t k = n_axes;
      snprintf(cells[k++], 128, "%s", json_string_value(json_object_get(a, "variant")));
      snprintf(cells[k++], 128, "%g", num_or_nan(a, "n"));
      for (size_t i = 0; i < ns; i++, k++)
        figure_text(study_figure(a, shown[i]), shown[i]->prop, cells[k], 128);
      if (rec) {
        const json_t *r = json_object_get(a, "recovery_s");
        figure_text(json_object_get(a, "p_storm"), true, cells[k++], 128);
        double med = num_or_nan(r, "median");
        if (isnan(med))
          snprintf(cells[k++], 128, "never (%g of %g did not recover)", num_or_nan(r, "n_censored"),
                   num_or_nan(r, "n"));
        else
          snprintf(cells[k++], 128, "%g", med);
        double m = num_or_nan(r, "mean"), h = num_or_nan(r, "half_width");
        if (!(num_or_nan(r, "n_recovered") > 0) || isnan(m))
          snprintf(cells[k++], 128, "- (none recovered)");
        else if (isnan(h) || h == 0)
          snprintf(cells[k++], 128, "%.3g (%g of %g)", m, num_or_nan(r, "n_recovered"),
                   num_or_nan(r, "n"));
        else
          snprintf(cells[k++], 128, "%.3g ± %.2g (%g of %g)", m, h, num_or_nan(r, "n_recovered"),
                   num_or_nan(r, "n"));
      }
      expt_page_row(d, cells);
    }
  }
  expt_page_table_end(d);
}

/* With a baseline: each variant's paired difference from it, per metric, on the same seeds;
 * a mark on those whose interval excludes zero. */
static void study_paired(expt_page *d, const json_t *summary) {
  const json_t *first = NULL;
  size_t np = json_array_size(json_object_get(summary, "points"));
  for (size_t v = 0; first == NULL && v < 64; v++) {
    const json_t *a = study_agg(summary, 0, v);
    if (a == NULL) break;
    if (json_object_get(a, "paired") != NULL) first = a;
  }
  if (first == NULL) return;
  const char *base = json_string_value(at(first, "paired.baseline"));
  expt_page_h(d, 2, "Against the baseline `%s`", base != NULL ? base : "");
  expt_page_p(
      d,
      "Each variant minus `%s` over the same seeds (paired), with its interval; **\\*** marks "
      "a difference its test finds distinguishable (the interval excludes zero; yes/no outcomes "
      "by McNemar's exact test, recovery times with never-recovered runs by a sign test on the "
      "ordered pairs). The unpaired (Welch) interval of the same pairs, each test and its "
      "p-value are in summary.json and paired.csv.",
      base != NULL ? base : "");
  /* Every metric is tested, not only those shown: say how many were flagged, and at what
   * level, so that a handful of marks among hundreds of tests is read as it should be. */
  const json_t *pf = json_object_get(first, "paired");
  const char *vname = json_string_value(json_object_get(first, "variant"));
  const char *adjust = json_string_value(json_object_get(pf, "adjust"));
  expt_page_p(d, "`%s`: %lld of %lld metrics flagged at %g %% (%s).", vname != NULL ? vname : "",
              (long long)json_integer_value(json_object_get(pf, "n_flagged")),
              (long long)json_integer_value(json_object_get(pf, "n_tested")),
              100 * json_number_value(json_object_get(pf, "level")),
              adjust != NULL && strcmp(adjust, "holm") == 0
                  ? "Holm's step-down over the variant's metrics"
                  : "each alone, no adjustment for multiplicity: --adjust holm");
  size_t n_axes = study_n_axes(summary);
  if (n_axes > 8) n_axes = 8;
  const char *head[16];
  char align[17];
  size_t c = 0;
  for (size_t a = 0; a < n_axes; a++, c++) {
    head[c] = study_axis(summary, a);
    align[c] = 'r';
  }
  head[c] = "variant";
  align[c++] = 'l';
  const study_metric *shown[N_STUDY_METRICS];
  size_t ns = 0;
  for (size_t i = 0; i < N_STUDY_METRICS; i++) {
    const json_t *e = json_object_get(at(first, "paired.metrics"), study_metrics[i].name);
    if (e == NULL) continue;
    shown[ns++] = &study_metrics[i];
    head[c] = study_metrics[i].label;
    align[c++] = 'r';
  }
  align[c] = '\0';
  expt_page_table(d, head, align);
  for (size_t p = 0; p < np; p++) {
    const json_t *vars =
        json_object_get(json_array_get(json_object_get(summary, "points"), p), "variants");
    for (size_t v = 0; v < json_array_size(vars); v++) {
      const json_t *a = json_array_get(vars, v);
      const json_t *pm = at(a, "paired.metrics");
      if (pm == NULL) continue;
      char cells[16][128];
      axis_cells(summary, p, cells, n_axes);
      size_t k = n_axes;
      snprintf(cells[k++], 128, "%s", json_string_value(json_object_get(a, "variant")));
      for (size_t i = 0; i < ns; i++, k++) {
        const json_t *e = json_object_get(pm, shown[i]->name);
        if (e == NULL || isnan(num_or_nan(e, "mean_diff"))) {
          snprintf(cells[k], 128, "-");
          continue;
        }
        snprintf(cells[k], 128, "%+.3g [%.3g, %.3g]%s", num_or_nan(e, "mean_diff"),
                 num_or_nan(e, "lo"), num_or_nan(e, "hi"),
                 json_is_true(json_object_get(e, "distinguishable")) ? " \\*" : "");
      }
      expt_page_row(d, cells);
    }
  }
  expt_page_table_end(d);
}

void expt__report_summary_intro(expt_page *d, const json_t *summary, const char *title,
                                const char *name, const char *command) {
  expt_page_h(d, 1, "%s", title);
  const char *desc = json_string_value(at(summary, "document.description"));
  if (desc != NULL) expt_page_p(d, "%s", desc);
  char page[160];
  snprintf(page, sizeof page, "docs/experiments/%s.md", name != NULL ? name : "");
  if (name != NULL && access(page, R_OK) == 0)
    expt_page_p(d, "What happens and why, in words: `%s`.", page);
  bool tick = command != NULL && strchr(command, '`') != NULL;
  expt_page_p(
      d,
      "Produced by %s%s%s (retrysim %s, scenario SHA-256 `%.12s`). The same command gives the "
      "same files, byte for byte, whatever `-j`.",
      command == NULL || tick ? "" : "`", command != NULL ? command : "retrysim",
      command == NULL || tick ? "" : "`", json_string_value(json_object_get(summary, "version")),
      json_string_value(json_object_get(summary, "scenario_sha256")));
}

static void study_body(expt_page *d, const json_t *summary, const char *command, bool pictures,
                       const study_extra *extra) {
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  const json_t *st = json_object_get(summary, "study");
  expt__report_summary_intro(d, summary, name != NULL ? name : "study", name, command);
  expt_page_h(d, 2, "The study");
  size_t nv = json_array_size(
      json_object_get(json_array_get(json_object_get(summary, "points"), 0), "variants"));
  expt_page_li(d, "%g runs: %g point%s x %zu variant%s x %g replication%s",
               num_or_nan(st, "n_runs"), num_or_nan(st, "n_points"),
               num_or_nan(st, "n_points") == 1 ? "" : "s", nv, nv == 1 ? "" : "s",
               num_or_nan(st, "replications"), num_or_nan(st, "replications") == 1 ? "" : "s");
  expt_page_li(d,
               "every variant and every point on the same seeds (common random numbers); intervals "
               "at %g %% (Student t for numbers, Wilson for proportions)",
               num_or_nan(st, "confidence") * 100);
  /* Issue 23: a study is not independent of the plain run on its base seed, nor of a study
   * whose base is one of its seeds; the reader should know before comparing two. */
  const json_t *seed = json_object_get(summary, "seed");
  char base[32] = "";
  if (json_is_integer(seed))
    snprintf(base, sizeof base, " %lld", (long long)json_integer_value(seed));
  else if (json_is_string(seed))
    snprintf(base, sizeof base, " %.24s", json_string_value(seed));
  expt_page_li(d,
               "replication 0 runs on the base seed%s itself, so it is the plain run on that "
               "seed, and a study whose base seed is one of this study's seeds shares runs with "
               "it (docs/cli.md, \"Runs, seeds and threads\")",
               base);
  size_t n_axes = study_n_axes(summary);
  for (size_t a = 0; a < n_axes; a++) {
    const json_t *vals = json_object_get(json_array_get(json_object_get(st, "axes"), a), "values");
    char list[1024] = "";
    for (size_t i = 0; i < json_array_size(vals); i++) {
      char one[128];
      value_text(json_array_get(vals, i), one, sizeof one);
      size_t len = strlen(list);
      if (len + strlen(one) + 8 >= sizeof list) {
        snprintf(list + len, sizeof list - len, ", ...");
        break;
      }
      snprintf(list + len, sizeof list - len, "%s%s", i > 0 ? ", " : "", one);
    }
    expt_page_li(d, "axis `%s`: %s", study_axis(summary, a), list);
  }
  expt_page_h(d, 2, "Results");
  expt_page_p(d,
              "Means over the replications with the half-width of their interval; P(recovered) and "
              "P(storm) (the share that never recovered after the trigger) with their Wilson "
              "interval. The recovery time's median counts the replications that never recovered "
              "(censored), its mean is over those that did.");
  study_table(d, summary);
  study_paired(d, summary);
  if (pictures) {
    study_picture pics[2 * N_STUDY_METRICS + EXPT_REPORT_MAX_PLOT_METRICS];
    size_t n = study_pictures(summary, extra, pics);
    if (n > 0) expt_page_h(d, 2, "Pictures");
    for (size_t i = 0; i < n; i++) {
      char file[80];
      snprintf(file, sizeof file, "%s.svg", pics[i].stem);
      expt_page_img(d, file, pics[i].caption);
    }
  }
}

/* What a study's or a search's page needs, for expt_page_write_pair. */
typedef struct summary_page {
  const json_t *summary;
  const char *command;
  bool pictures;
  expt__report_summary_body body;
} summary_page;

static void summary_page_body(expt_page *d, void *ctx) {
  const summary_page *p = ctx;
  p->body(d, p->summary, p->command, p->pictures);
}

int expt__report_summary_pages(const json_t *summary, const char *dir, const char *command,
                               bool pictures, const char *kind, expt__report_summary_body body,
                               retry_error *err) {
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  char title_kind[32];
  snprintf(title_kind, sizeof title_kind, "%s report", kind);
  summary_page p = {summary, command, pictures, body};
  return expt_page_write_pair(dir, name != NULL ? name : kind, title_kind, summary_page_body, &p,
                              err);
}

/* A study's page: what a search's has, and the metrics of --plot-metric. */
typedef struct study_page {
  const json_t *summary;
  const char *command;
  bool pictures;
  study_extra extra;
} study_page;

static void study_page_body(expt_page *d, void *ctx) {
  const study_page *p = ctx;
  study_body(d, p->summary, p->command, p->pictures, &p->extra);
}

int expt_report_study_write(const json_t *summary, const char *dir, const char *command,
                            bool pictures, const char *const *metrics, size_t n_metrics,
                            retry_error *err) {
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  study_page p = {summary, command, pictures, {metrics, n_metrics, has_series(dir)}};
  return expt_page_write_pair(dir, name != NULL ? name : "study", "study report", study_page_body,
                              &p, err);
}
