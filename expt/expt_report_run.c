/*
 * expt_report_run.c: the page and the pictures of one run (`retrysim run --plot`): report.md and
 * report.html built from the run objects of the summary, so that every figure in them is the
 * one summary.json holds, and the gnuplot pictures of the run's CSV files.
 */
#include "expt/expt_output_ops.h"
#include "expt/expt_report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the edge starts at a service (an internal edge), not at a client population. */
static bool is_internal(const json_t *run, const json_t *e) {
  return at(at(run, "services"), json_string_value(at(e, "from"))) != NULL;
}


/* Attempts per call made on the edge: attempts_per_call (or "amplification", the same figure,
 * in a document without it). */
static double edge_apc(const json_t *e) {
  double v = num_or_nan(e, "attempts_per_call");
  return v == v ? v : num_or_nan(e, "amplification");
}

/* Percentage of the edge's calls that ended OK, of those its caller did not cancel; NaN
 * without an "ok" count or without such calls. */
static double edge_ok_pct(const json_t *e) {
  double calls = num_or_nan(e, "calls"), ok = num_or_nan(e, "ok"),
         cancelled = num_or_nan(e, "cancelled");
  if (cancelled == cancelled) calls -= cancelled;
  return calls > 0 && ok == ok ? 100 * ok / calls : NAN;
}

/* The edge of run named from->to, NULL when the run has none. */
static const json_t *find_edge(const json_t *run, const char *name) {
  size_t i;
  const json_t *e;
  char buf[160];
  json_array_foreach((json_t *)at(run, "amplification.edges"), i, e) {
    expt_output_edge_name(run, e, buf, sizeof buf);
    if (strcmp(buf, name) == 0) return e;
  }
  return NULL;
}

/* The worst internal edge of the whole scenario: each run's worst internal edge
 * (expt_output_worst_edge), the one with the most attempts per call over the runs (the first run
 * on a tie). Its name goes into name; false when no run has an internal edge. */
static bool scenario_worst_edge(const expt_output *o, char *name, size_t size) {
  const json_t *best = NULL, *best_run = NULL;
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *w = expt_output_worst_edge(expt_output_run(o, i));
    if (w != NULL && (best == NULL || edge_apc(w) > edge_apc(best))) {
      best = w;
      best_run = expt_output_run(o, i);
    }
  }
  if (best != NULL) expt_output_edge_name(best_run, best, name, size);
  return best != NULL;
}

/* Whether column name c of a time series ends with suffix s (and has more before it). */
static bool ends_with(const char *c, size_t n, const char *s) {
  size_t k = strlen(s);
  return n > k && memcmp(c + n - k, s, k) == 0;
}

/* Whether the first n characters of c hold "->" (an edge's name). */
static bool has_arrow(const char *c, size_t n) {
  for (size_t i = 0; i + 1 < n; i++)
    if (c[i] == '-' && c[i + 1] == '>') return true;
  return false;
}

/* The concurrency limits dir/timeseries.csv holds, as limits.gp finds them: the columns
 * FROM->TO_limit (a limiter on an edge) and SERVICE_concurrency_limit (Envoy's adaptive
 * concurrency filter). Their names ("web->api", "api") go into buf, ", " between them, cut to
 * size; returns how many there are, 0 without the file. */
static int limit_columns(const char *dir, char *buf, size_t size) {
  if (size > 0) buf[0] = '\0';
  char *path = expt_output_printf("%s/timeseries.csv", dir);
  FILE *f = path != NULL ? fopen(path, "r") : NULL;
  free(path);
  if (f == NULL) return 0;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len = getline(&line, &cap, f);
  fclose(f);
  int n = 0;
  size_t used = 0;
  for (char *c = len > 0 ? line : NULL, *next; c != NULL; c = next) {
    next = strpbrk(c, ",\r\n");
    size_t k = next != NULL ? (size_t)(next - c) : strlen(c);
    if (next != NULL) next = *next == ',' ? next + 1 : NULL;
    size_t keep = 0;
    if (ends_with(c, k, "_concurrency_limit"))
      keep = k - strlen("_concurrency_limit");
    else if (ends_with(c, k, "_limit") && has_arrow(c, k))
      keep = k - strlen("_limit");
    if (keep == 0) continue;
    if (used < size)
      used += (size_t)snprintf(buf + used, size - used, "%s%.*s", n > 0 ? ", " : "", (int)keep, c);
    n++;
  }
  free(line);
  return n;
}

/* The columns timeseries.gp draws beside load, queues, latency and shared retry state, by the
 * suffix it finds them with, and what the caption calls them. */
static const struct {
  const char *suffix, *words;
} picture_extra[] = {
    {"_cache_hit_ratio", "cache hit ratio"},
    {"_on_failure_rps", "on_failure firings"},
    {"_work_factor", "work factor"},
};
enum { N_EXTRA = sizeof picture_extra / sizeof picture_extra[0] };

/* Which kind of picture_extra column c (n characters) is, or -1. */
static int extra_kind(const char *c, size_t n) {
  for (int k = 0; k < N_EXTRA; k++)
    if (ends_with(c, n, picture_extra[k].suffix)) return k;
  return -1;
}

/* Marks in seen[] each kind of picture_extra whose column holds a value in the CSV line: kinds
 * is the kind of each column of the header (-1 for the others), n_cols of them. */
static void extra_values(const char *line, const int *kinds, size_t n_cols, bool *seen) {
  size_t col = 0;
  for (const char *c = line; c != NULL && col < n_cols; col++) {
    const char *next = strpbrk(c, ",\r\n");
    size_t k = next != NULL ? (size_t)(next - c) : strlen(c);
    /* An empty cell is a bucket without a value; gnuplot reads it as NaN, as it does "nan". */
    if (kinds[col] >= 0 && k > 0 && !(k == 3 && strncmp(c, "nan", 3) == 0)) seen[kinds[col]] = true;
    c = next != NULL && *next == ',' ? next + 1 : NULL;
  }
}

/* The caption's words for what the picture of dir/data draws beyond its usual panels: "; cache
 * hit ratio; on_failure firings; work factor", those of the three with a value in the file, as
 * timeseries.gp draws a column only then. "" without the file or such a column. */
static void picture_extras(const char *dir, const char *data, char *buf, size_t size) {
  if (size > 0) buf[0] = '\0';
  char *path = expt_output_printf("%s/%s", dir, data);
  FILE *f = path != NULL ? fopen(path, "r") : NULL;
  free(path);
  if (f == NULL) return;
  char *line = NULL;
  size_t cap = 0, n_cols = 0, n_extra = 0;
  int *kinds = NULL;
  if (getline(&line, &cap, f) > 0) {
    for (const char *c = line; *c != '\0'; c++)
      if (*c == ',') n_cols++;
    kinds = malloc((n_cols + 1) * sizeof *kinds);
    n_cols = 0;
    for (const char *c = kinds != NULL ? line : NULL, *next; c != NULL; c = next) {
      next = strpbrk(c, ",\r\n");
      size_t k = next != NULL ? (size_t)(next - c) : strlen(c);
      kinds[n_cols] = extra_kind(c, k);
      if (kinds[n_cols++] >= 0) n_extra++;
      next = next != NULL && *next == ',' ? next + 1 : NULL;
    }
  }
  bool seen[N_EXTRA] = {false};
  while (n_extra > 0 && getline(&line, &cap, f) > 0) extra_values(line, kinds, n_cols, seen);
  fclose(f);
  free(line);
  free(kinds);
  size_t used = 0;
  for (int k = 0; k < N_EXTRA; k++)
    if (seen[k] && used < size)
      used += (size_t)snprintf(buf + used, size - used, "; %s", picture_extra[k].words);
}

/* The file stem of an edge's picture: "edge-FROM-TO" (file-name safe). */
static void edge_stem(const char *name, char *buf, size_t size) {
  snprintf(buf, size, "edge-%s", name);
  char *arrow = strstr(buf, "->");
  if (arrow != NULL) memmove(arrow + 1, arrow + 2, strlen(arrow + 2) + 1);
  expt_output_safe_name(buf);
}

/* The trigger the recovery rule names ("recovery": {"trigger": ...}) as gnuplot's
 * "trigger='START END'" in seconds, when every run has the same one; false when a run's
 * trigger is its faults' span (the pictures then shade the faults every variant shares). */
static bool named_trigger(const expt_scenario *s, char *buf, size_t size) {
  size_t n = expt_scenario_n_runs(s);
  const expt_recovery_cfg *r0 = expt_scenario_recovery(s, 0);
  if (n == 0 || r0 == NULL || !r0->explicit_trigger) return false;
  for (size_t i = 1; i < n; i++) {
    const expt_recovery_cfg *r = expt_scenario_recovery(s, i);
    if (r == NULL || !r->explicit_trigger || r->trigger_start_ns != r0->trigger_start_ns ||
        r->trigger_end_ns != r0->trigger_end_ns)
      return false;
  }
  snprintf(buf, size, "trigger='%.12g %.12g'", (double)r0->trigger_start_ns / 1e9,
           (double)r0->trigger_end_ns / 1e9);
  return true;
}

int expt_report_plots(const expt_output *o, const expt_scenario *s, const char *dir,
                      const char *plots_dir, FILE *log, retry_error *err) {
  const char *name = expt_scenario_name(s);
  char title[200], trig[80];
  const char *trigger = named_trigger(s, trig, sizeof trig) ? trig : NULL;
  int rc = 0;
  if (!expt_scenario_has_variants(s)) {
    snprintf(title, sizeof title, "%s", name);
    char marks[64 * 16 + 16]; /* the operators' firings (expt_output_ops.c), if any */
    bool m = expt_output_n_runs(o) > 0 && expt_output_ops_marks(expt_output_run(o, 0), marks, sizeof marks);
    rc = expt_plot_render(plots_dir, "timeseries", m ? marks : NULL, dir, "timeseries.csv",
                          "timeseries", title, log, err);
  } else {
    /* One picture per variant, from the variant's own wide file, then the comparisons. */
    for (size_t i = 0; i < expt_output_n_runs(o) && rc == 0; i++) {
      char stem[128];
      snprintf(stem, sizeof stem, "timeseries-%s", expt_scenario_run_name(s, i));
      expt_output_safe_name(stem);
      char data[140];
      snprintf(data, sizeof data, "%s.csv", stem);
      snprintf(title, sizeof title, "%s: %s", name, expt_scenario_run_name(s, i));
      char marks[64 * 16 + 16];
      bool m = expt_output_ops_marks(expt_output_run(o, i), marks, sizeof marks);
      rc = expt_plot_render(plots_dir, "timeseries", m ? marks : NULL, dir, data, stem, title, log,
                            err);
    }
    snprintf(title, sizeof title, "%s: goodput and attempts per variant", name);
    if (rc == 0)
      rc = expt_plot_render(plots_dir, "compare", trigger, dir, "timeseries.csv", "compare",
                            title, log, err);
    snprintf(title, sizeof title, "%s: variants side by side", name);
    if (rc == 0)
      rc = expt_plot_render(plots_dir, "variants", NULL, dir, "variants.csv", "variants", title,
                            log, err);
  }
  /* The worst internal edge by name: the same long or wide timeseries.csv, edge.gp choosing
   * the layout from the file. Names are letters, digits and "_.-" (the loader's rule), so the
   * gnuplot string needs no escaping. */
  char edge[160];
  if (rc == 0 && scenario_worst_edge(o, edge, sizeof edge)) {
    char set[280], stem[180];
    snprintf(set, sizeof set, "edge='%s'%s%s", edge, trigger != NULL ? "; " : "",
             trigger != NULL ? trigger : "");
    edge_stem(edge, stem, sizeof stem);
    snprintf(title, sizeof title, "%s: the %s edge", name, edge);
    rc = expt_plot_render(plots_dir, "edge", set, dir, "timeseries.csv", stem, title, log, err);
  }
  /* Every concurrency limit (each limited edge's and each service's adaptive one), in one
   * picture: a line per limit for one run, a panel per limit with a line per variant. */
  char limits[200];
  if (rc == 0 && limit_columns(dir, limits, sizeof limits) > 0) {
    snprintf(title, sizeof title, "%s: concurrency limits", name);
    rc = expt_plot_render(plots_dir, "limits", trigger, dir, "timeseries.csv", "limits", title,
                          log, err);
  }
  snprintf(title, sizeof title, "%s: latency of finished calls", name);
  if (rc == 0)
    rc = expt_plot_render(plots_dir, "latency-cdf", NULL, dir, "latency.csv", "latency-cdf", title,
                          log, err);
  return rc;
}

/* "after 3 s (last: latency)", "never (last: queue)", "unjudged", or "-" for a run without a
 * trigger that ended: as the text table's recovered column. */
static void recovery_text(const json_t *run, char *buf, size_t size) {
  const json_t *rc = at(run, "recovery");
  const char *last = json_string_value(at(rc, "last_criterion"));
  char tail[48] = "";
  if (last != NULL) snprintf(tail, sizeof tail, " (last: %s)", last);
  if (!json_is_object(rc))
    snprintf(buf, size, "-");
  else if (json_is_true(at(rc, "recovered")))
    snprintf(buf, size, "after %g s%s", num_or_nan(rc, "recovery_s"), tail);
  else if (json_is_true(at(rc, "unjudged")))
    snprintf(buf, size, "unjudged");
  else
    snprintf(buf, size, "never%s", tail);
}

/* Worker time whose result nobody used, over every service. */
static double wasted_s(const json_t *run) {
  double w = 0;
  const char *key;
  const json_t *svc;
  json_object_foreach((json_t *)at(run, "services"), key, svc) {
    w += num_or_nan(svc, "wasted_work_s");
  }
  return w;
}

/* The largest counts of an object of counts (stop reasons, statuses), most first, ties in the
 * document's order, skipping key skip and zeros: "deadline 1234, max_attempts 56". At most
 * four; "none" when there is nothing. */
static void top_counts(const json_t *counts, const char *skip, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  /* A selection sort over a few dozen keys. taken[] marks keys already printed by their
   * position in the object, so equal counts keep the document's (enum or numeric) order. */
  bool taken[64] = {false};
  for (int k = 0; k < 4; k++) {
    const char *best = NULL, *key;
    long long most = 0;
    size_t best_i = 0, i = 0;
    const json_t *v;
    json_object_foreach((json_t *)counts, key, v) {
      long long n = json_integer_value(v);
      /* Skipping "OK" skips the HTTP successes ("200" .. "299") too. */
      bool ok_http = strcmp(skip, "OK") == 0 && key[0] == '2' && strlen(key) == 3;
      if (i < 64 && !taken[i] && strcmp(key, skip) != 0 && !ok_http && n > most) {
        most = n;
        best = key;
        best_i = i;
      }
      i++;
    }
    if (best == NULL) break;
    taken[best_i] = true;
    int n = snprintf(buf + used, size - used, "%s%s %lld", used ? ", " : "", best, most);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
  if (used == 0) snprintf(buf, size, "none");
}

/* Index of the run with the largest (most) or smallest value at path; ties go to the first. */
static size_t extreme(const expt_output *o, const char *path, bool most) {
  size_t best = 0;
  for (size_t i = 1; i < expt_output_n_runs(o); i++) {
    double v = num_or_nan(expt_output_run(o, i), path),
           b = num_or_nan(expt_output_run(o, best), path);
    if (most ? v > b : v < b) best = i;
  }
  return best;
}

/* Front-door attempts per call of a run: attempts over calls of the edges that start at a
 * client, the column of the text table (0 without calls). */
static double front_door(const json_t *run) {
  double calls = 0, attempts = 0;
  size_t i;
  const json_t *e;
  json_array_foreach((json_t *)at(run, "amplification.edges"), i, e) {
    if (is_internal(run, e)) continue;
    calls += num_or_nan(e, "calls");
    attempts += num_or_nan(e, "attempts");
  }
  return calls > 0 ? attempts / calls : 0.0;
}

/* A cell with a percentage, "-" for NaN. */
static void pct_text(char *buf, size_t size, double pct) {
  if (pct == pct)
    snprintf(buf, size, "%.2f", pct);
  else
    snprintf(buf, size, "-");
}

/* Whether the edge made more attempts than calls (retries or hedges: the edge carries them). */
static bool carries_retries(const json_t *e) {
  return num_or_nan(e, "attempts") > num_or_nan(e, "calls");
}

/* "In short" on internal edges: for each internal edge that carried retries in some run, its
 * attempts per call in every run (the most and the fewest when there are more than six runs). */
static void short_edges(expt_page *d, const expt_output *o, const expt_scenario *s) {
  size_t n = expt_output_n_runs(o);
  const json_t *first = expt_output_run(o, 0);
  size_t i;
  const json_t *e;
  /* The runs of one scenario have the same edges in the same order: the first run's list. */
  json_array_foreach((json_t *)at(first, "amplification.edges"), i, e) {
    if (!is_internal(first, e)) continue;
    char name[160];
    expt_output_edge_name(first, e, name, sizeof name);
    bool any = false;
    size_t hi = 0, lo = 0;
    for (size_t r = 0; r < n; r++) {
      const json_t *er = find_edge(expt_output_run(o, r), name);
      if (er == NULL) continue;
      if (carries_retries(er)) any = true;
      double a = edge_apc(er);
      if (a > edge_apc(find_edge(expt_output_run(o, hi), name))) hi = r;
      if (a < edge_apc(find_edge(expt_output_run(o, lo), name))) lo = r;
    }
    if (!any) continue;
    /* Up to six runs, one clause each; past that the extremes only. */
    char text[1600];
    if (n > 6) {
      const json_t *eh = find_edge(expt_output_run(o, hi), name);
      const json_t *el = find_edge(expt_output_run(o, lo), name);
      char okh[64] = "", okl[64] = "";
      if (edge_ok_pct(eh) == edge_ok_pct(eh))
        snprintf(okh, sizeof okh, " (%.2f %% of its calls ok)", edge_ok_pct(eh));
      if (edge_ok_pct(el) == edge_ok_pct(el))
        snprintf(okl, sizeof okl, " (%.2f %%)", edge_ok_pct(el));
      snprintf(text, sizeof text,
               "Of the %zu variants, the %s edge made the most attempts per call under %s, "
               "%.3f%s, and the fewest under %s, %.3f%s",
               n, name, expt_scenario_run_name(s, hi), edge_apc(eh), okh,
               expt_scenario_run_name(s, lo), edge_apc(el), okl);
      expt_page_li(d, "%s.", text);
      continue;
    }
    size_t used = (size_t)snprintf(text, sizeof text, "The %s edge made ", name);
    bool first_clause = true;
    for (size_t r = 0; r < n && used < sizeof text; r++) {
      const json_t *er = find_edge(expt_output_run(o, r), name);
      if (er == NULL) continue;
      char ok[64] = "";
      double pct = edge_ok_pct(er);
      if (pct == pct)
        snprintf(ok, sizeof ok, first_clause ? " (%.2f %% of its calls ok)" : " (%.2f %%)", pct);
      used += (size_t)snprintf(text + used, sizeof text - used, "%s%.3f%s under %s%s",
                               first_clause ? "" : (r + 1 == n ? " and " : ", "), edge_apc(er),
                               first_clause ? " attempts per call" : "",
                               expt_scenario_run_name(s, r), ok);
      first_clause = false;
    }
    expt_page_li(d, "%s.", text);
  }
}

/* "In short": the comparison in a few sentences, for a scenario with variants. Which runs came
 * back after the faults and which never did, then the extremes of goodput, load, tail and
 * duplicates, each with its variant, and what the internal edges did. */
static void report_short(expt_page *d, const expt_output *o, const expt_scenario *s) {
  size_t n = expt_output_n_runs(o);
  expt_page_h(d, 2, "In short");
  /* Two passes over the runs: those that recovered, then those that never did. */
  for (int pass = 0; pass < 2; pass++) {
    char text[2048];
    size_t used = 0;
    text[0] = '\0';
    for (size_t i = 0; i < n && used < sizeof text; i++) {
      const json_t *rc = at(expt_output_run(o, i), "recovery");
      if (!json_is_object(rc) || json_is_true(at(rc, "recovered")) != (pass == 0)) continue;
      used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", used ? ", " : "",
                               expt_scenario_run_name(s, i));
      if (pass == 0 && used < sizeof text)
        used += (size_t)snprintf(text + used, sizeof text - used, " (after %g s)",
                                 num_or_nan(rc, "recovery_s"));
    }
    if (used > 0)
      expt_page_li(d, "%s%s.",
                   pass == 0 ? "Back in their good state after the trigger: "
                             : "**Never back in their good state** within the run: ",
                   text);
  }
  size_t hi = extreme(o, "goodput_per_s", true), lo = extreme(o, "goodput_per_s", false);
  expt_page_li(d, "Most goodput: %s, %.4g calls/s; least: %s, %.4g calls/s.",
               expt_scenario_run_name(s, hi), num_or_nan(expt_output_run(o, hi), "goodput_per_s"),
               expt_scenario_run_name(s, lo), num_or_nan(expt_output_run(o, lo), "goodput_per_s"));
  size_t amp = 0;
  for (size_t i = 1; i < n; i++)
    if (front_door(expt_output_run(o, i)) > front_door(expt_output_run(o, amp))) amp = i;
  /* Said only when the clients retried or hedged at all: 1.000 everywhere is no news. */
  if (front_door(expt_output_run(o, amp)) > 1)
    expt_page_li(d,
                 "Most load from the clients' retries and hedges: %s, %.3f front-door attempts per "
                 "call.",
                 expt_scenario_run_name(s, amp), front_door(expt_output_run(o, amp)));
  short_edges(d, o, s);
  size_t tail = extreme(o, "latency_ms.p99", true), fast = extreme(o, "latency_ms.p99", false);
  expt_page_li(
      d, "Slowest p99: %s, %.4g ms; fastest: %s, %.4g ms.", expt_scenario_run_name(s, tail),
      num_or_nan(expt_output_run(o, tail), "latency_ms.p99"), expt_scenario_run_name(s, fast),
      num_or_nan(expt_output_run(o, fast), "latency_ms.p99"));
  size_t dup = extreme(o, "side_effects.duplicates", true);
  if (num_or_nan(expt_output_run(o, dup), "side_effects.duplicates") > 0)
    expt_page_li(d, "Most duplicate side effects: %s, %.0f.", expt_scenario_run_name(s, dup),
                 num_or_nan(expt_output_run(o, dup), "side_effects.duplicates"));
  expt_page_end_list(d);
}

/* The results table: a row per run, the front door's figures and the worst internal edge (its
 * three columns only when some run has an internal edge). */
static void report_results(expt_page *d, const expt_output *o, const expt_scenario *s) {
  static const char *const head[] = {"variant",
                                     "calls",
                                     "ok %",
                                     "goodput (calls/s)",
                                     "front-door attempts/call",
                                     "p50 ms",
                                     "p99 ms",
                                     "p99.9 ms",
                                     "duplicate side effects",
                                     "wasted work (worker-s)",
                                     "worst internal edge",
                                     "its attempts/call",
                                     "its ok %",
                                     "recovered"};
  static const char all_align[] = "lrrrrrrrrrlrrl";
  bool edges = false;
  for (size_t i = 0; i < expt_output_n_runs(o); i++)
    if (expt_output_worst_edge(expt_output_run(o, i)) != NULL) edges = true;
  size_t cols[14], n_cols = 0;
  for (size_t c = 0; c < 14; c++)
    if (edges || c < 10 || c > 12) cols[n_cols++] = c;
  const char *h[14] = {NULL};
  char align[15];
  for (size_t k = 0; k < n_cols; k++) {
    h[k] = head[cols[k]];
    align[k] = all_align[cols[k]];
  }
  align[n_cols] = '\0';
  expt_page_h(d, 2, "Results");
  expt_page_table(d, h, align);
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *run = expt_output_run(o, i);
    double calls = num_or_nan(run, "calls.started"), ok = num_or_nan(run, "calls.ok");
    char c[14][128], row[14][128];
    snprintf(c[0], sizeof c[0], "%s", expt_scenario_run_name(s, i));
    snprintf(c[1], sizeof c[1], "%.0f", calls);
    snprintf(c[2], sizeof c[2], "%.2f", calls > 0 ? 100 * ok / calls : 0.0);
    snprintf(c[3], sizeof c[3], "%.4g", num_or_nan(run, "goodput_per_s"));
    snprintf(c[4], sizeof c[4], "%.3f", front_door(run));
    snprintf(c[5], sizeof c[5], "%.4g", num_or_nan(run, "latency_ms.p50"));
    snprintf(c[6], sizeof c[6], "%.4g", num_or_nan(run, "latency_ms.p99"));
    snprintf(c[7], sizeof c[7], "%.4g", num_or_nan(run, "latency_ms.p999"));
    snprintf(c[8], sizeof c[8], "%.0f", num_or_nan(run, "side_effects.duplicates"));
    snprintf(c[9], sizeof c[9], "%.4g", wasted_s(run));
    const json_t *w = expt_output_worst_edge(run);
    if (w != NULL) {
      expt_output_edge_name(run, w, c[10], sizeof c[10]);
      snprintf(c[11], sizeof c[11], "%.3f", edge_apc(w));
      pct_text(c[12], sizeof c[12], edge_ok_pct(w));
    } else {
      for (int k = 10; k < 13; k++)
        snprintf(c[k], sizeof c[k], "-");
    }
    recovery_text(run, c[13], sizeof c[13]);
    for (size_t k = 0; k < n_cols; k++)
      memcpy(row[k], c[cols[k]], sizeof row[k]);
    expt_page_row(d, row);
  }
  expt_page_table_end(d);
  expt_page_p(
      d, "%s",
      edges ? "*goodput*: calls that ended OK within their deadline, per second of the run; "
              "*front-door attempts/call*: attempts sent by the clients per call they started; "
              "*worst internal edge*: of the edges from one service to another, the one with "
              "the most attempts per call (on a tie the lowest ok %), with its attempts per "
              "call and the share of its calls that ended OK; *recovered*: how long after the "
              "trigger ended the run was back in its good state and held it (goodput/offered, "
              "OK latency and queues near their levels before the trigger: the summary's "
              "`recovery` rule), with the criterion that came back last; `never` if it did "
              "not within the run."
            : "*goodput*: calls that ended OK within their deadline, per second of the run; "
              "*front-door attempts/call*: attempts sent by the clients per call they started; "
              "*recovered*: how long after the trigger ended the run was back in its good "
              "state and held it (goodput/offered, OK latency and queues near their levels "
              "before the trigger: the summary's `recovery` rule), with the criterion that "
              "came back last; `never` if it did not within the run.");
}

/* Every edge of every run, then the load of every service. */
static void report_edges(expt_page *d, const expt_output *o, const expt_scenario *s) {
  static const char *const head[] = {"variant",  "edge",          "calls",
                                     "attempts", "attempts/call", "worst case",
                                     "ok %",     "p99 ms",        "top stop reason"};
  bool variants = expt_scenario_has_variants(s);
  size_t skip = variants ? 0 : 1; /* the variant column, only with variants */
  expt_page_h(d, 2, "Edges");
  expt_page_table(d, head + skip, variants ? "llrrrrrrl" : "lrrrrrrl");
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *run = expt_output_run(o, i);
    size_t k;
    const json_t *e;
    json_array_foreach((json_t *)at(run, "amplification.edges"), k, e) {
      char c[9][128];
      snprintf(c[0], sizeof c[0], "%s", expt_scenario_run_name(s, i));
      expt_output_edge_name(run, e, c[1], sizeof c[1]);
      snprintf(c[2], sizeof c[2], "%.0f", num_or_nan(e, "calls"));
      snprintf(c[3], sizeof c[3], "%.0f", num_or_nan(e, "attempts"));
      snprintf(c[4], sizeof c[4], "%.3f", edge_apc(e));
      /* An integer, saturated at 2^53 - 1 (exact in a double). */
      snprintf(c[5], sizeof c[5], "%.0fx", num_or_nan(e, "worst_case"));
      pct_text(c[6], sizeof c[6], edge_ok_pct(e));
      double p99 = num_or_nan(e, "latency_ms.p99");
      if (p99 == p99)
        snprintf(c[7], sizeof c[7], "%.4g", p99);
      else
        snprintf(c[7], sizeof c[7], "-");
      top_counts(at(e, "by_stop_reason"), "ok", c[8], 40);
      /* "-" as in the text summary, when no call failed or the document has no counts. */
      if (strcmp(c[8], "none") == 0) snprintf(c[8], sizeof c[8], "-");
      /* top_counts writes up to four reasons; the table keeps the first. */
      char *comma = strchr(c[8], ',');
      if (comma != NULL) *comma = '\0';
      expt_page_row(d, c + skip);
    }
  }
  expt_page_table_end(d);
  expt_page_p(
      d,
      "*attempts/call*: attempts made on the edge per call made on it (retries and hedges "
      "included); *worst case*: the product of `max_attempts` along the worst chain of "
      "callers reaching the edge, the bound attempts/call is compared with; *ok %%*: calls on "
      "the edge that ended OK.");
  /* The load of each service: a column per service. */
  const json_t *first = expt_output_run(o, 0);
  const char *svc_head[15];
  char names[15][72];
  size_t n_svc = 0;
  const char *key;
  const json_t *v;
  svc_head[n_svc] = "variant";
  snprintf(names[n_svc++], sizeof names[0], "variant");
  json_object_foreach((json_t *)at(first, "amplification"), key, v) {
    if (!json_is_number(v) || n_svc == 15) continue; /* "edges"; at most 14 services shown */
    snprintf(names[n_svc], sizeof names[0], "%s", key);
    svc_head[n_svc] = names[n_svc];
    n_svc++;
  }
  char align[16];
  memset(align, 'r', n_svc);
  align[0] = 'l';
  align[n_svc] = '\0';
  expt_page_p(d,
              "*load x* of each service: the attempts arriving at it (retries and refused ones "
              "included) per call started by the clients.");
  expt_page_table(d, svc_head, align);
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *run = expt_output_run(o, i);
    char c[15][128];
    snprintf(c[0], sizeof c[0], "%s", variants ? expt_scenario_run_name(s, i) : "the run");
    for (size_t k = 1; k < n_svc; k++)
      snprintf(c[k], sizeof c[k], "%.4gx",
               json_number_value(at(at(run, "amplification"), names[k])));
    expt_page_row(d, c);
  }
  expt_page_table_end(d);
}

/* The internal edges of a run, one list item each: calls, attempts, retries and hedges, ok %,
 * p99 and why the failed calls stopped. Figures the document lacks are left out. */
static void report_run_edges(expt_page *d, const json_t *run) {
  size_t k;
  const json_t *e;
  json_array_foreach((json_t *)at(run, "amplification.edges"), k, e) {
    if (!is_internal(run, e)) continue;
    char name[160], more[400] = "", ok[32], stops[200];
    expt_output_edge_name(run, e, name, sizeof name);
    size_t used = 0;
    double retries = num_or_nan(e, "retries"), hedges = num_or_nan(e, "hedges"),
           p99 = num_or_nan(e, "latency_ms.p99");
    if (retries == retries && hedges == hedges)
      used += (size_t)snprintf(more + used, sizeof more - used, ": %.0f retries, %.0f hedges",
                               retries, hedges);
    pct_text(ok, sizeof ok, edge_ok_pct(e));
    char tail[600] = "";
    size_t t = 0;
    if (ok[0] != '-') t += (size_t)snprintf(tail + t, sizeof tail - t, "; %s %% ended OK", ok);
    if (p99 == p99 && t < sizeof tail)
      t += (size_t)snprintf(tail + t, sizeof tail - t, ", p99 %.4g ms", p99);
    if (json_is_object(at(e, "by_stop_reason")) && t < sizeof tail) {
      top_counts(at(e, "by_stop_reason"), "ok", stops, sizeof stops);
      /* Nothing to say when every call on the edge ended OK. */
      if (strcmp(stops, "none") != 0)
        snprintf(tail + t, sizeof tail - t, "; the failed ones stopped on: %s", stops);
    }
    expt_page_li(d, "The %s edge: %.0f calls made %.0f attempts (%.3g per call%s)%s.", name,
                 num_or_nan(e, "calls"), num_or_nan(e, "attempts"), edge_apc(e), more, tail);
  }
}

/* The section of one run: its figures in words and its picture. */
static void report_run(expt_page *d, const expt_output *o, const expt_scenario *s, size_t i,
                       bool pictures) {
  const json_t *run = expt_output_run(o, i);
  const char *name = expt_scenario_run_name(s, i);
  const char *vdesc = expt_scenario_run_description(s, i);
  bool variants = expt_scenario_has_variants(s);
  if (variants) {
    expt_page_h(d, 3, "%s", name);
    if (vdesc != NULL) expt_page_p(d, "%s", vdesc);
  }
  double calls = num_or_nan(run, "calls.started"), attempts = num_or_nan(run, "calls.attempts");
  char stops[200], statuses[200];
  top_counts(at(run, "calls.by_stop_reason"), "ok", stops, sizeof stops);
  top_counts(at(run, "calls.by_status"), "OK", statuses, sizeof statuses);
  expt_page_li(d,
               "%.0f calls sent %.0f attempts (%.3g per call: %.0f retries, %.0f hedges); "
               "%.0f ended OK, %.0f failed.",
               calls, attempts, calls > 0 ? attempts / calls : 0.0,
               num_or_nan(run, "calls.retries"), num_or_nan(run, "calls.hedges"),
               num_or_nan(run, "calls.ok"), num_or_nan(run, "calls.failed"));
  expt_page_li(d, "Why the failed calls stopped: %s; the statuses they ended with: %s.", stops,
               statuses);
  report_run_edges(d, run);
  const json_t *rc = at(run, "recovery");
  if (json_is_object(rc)) {
    /* The recovery rule of docs/cli.md in words: the baseline, then when the run was back in
     * its good state (or that it never was) and the criterion that came back last. */
    char text[900], lat[160] = "", lat_rule[160] = "";
    double base_lat = num_or_nan(rc, "baseline_latency_ms");
    const char *col = json_string_value(at(rc, "latency_column"));
    if (base_lat == base_lat && col != NULL) {
      snprintf(lat, sizeof lat, " and the OK calls' %s was %.4g ms",
               strstr(col, "p50") != NULL ? "p50" : "p99", base_lat);
      snprintf(lat_rule, sizeof lat_rule, ", that latency within %g x its level",
               num_or_nan(rc, "latency_factor"));
    }
    int n = snprintf(text, sizeof text,
                     "Trigger (%s) from %g s to %g s. Before it %.1f %% of offered calls "
                     "succeeded%s",
                     json_string_value(at(rc, "trigger_source")) != NULL
                         ? json_string_value(at(rc, "trigger_source"))
                         : "faults",
                     num_or_nan(rc, "trigger_start_s"), num_or_nan(rc, "trigger_end_s"),
                     100 * num_or_nan(rc, "baseline_ratio"), lat);
    size_t used = n > 0 && (size_t)n < sizeof text ? (size_t)n : 0;
    const char *last = json_string_value(at(rc, "last_criterion"));
    if (json_is_true(at(rc, "recovered")))
      snprintf(text + used, sizeof text - used,
               "; %g s after it ended the run was back in its good state (goodput/offered at "
               "least %g %% of that level%s, every queue near its level) and held it for %g s; "
               "the last to come back: %s.",
               num_or_nan(rc, "recovery_s"), 100 * num_or_nan(rc, "threshold"), lat_rule,
               num_or_nan(rc, "hold_s"), last != NULL ? last : "-");
    else if (json_is_true(at(rc, "unjudged")))
      snprintf(text + used, sizeof text - used,
               "; the run ends too soon after it for one span of %g s of health, so whether it "
               "recovered cannot be told (lengthen the duration or shorten the recovery's hold).",
               num_or_nan(rc, "hold_s"));
    else
      snprintf(text + used, sizeof text - used,
               "; it never came back within the run: over the last %g s, %.1f %% did; the "
               "criterion that stayed out longest: %s.",
               num_or_nan(rc, "hold_s"), 100 * num_or_nan(rc, "final_ratio"),
               last != NULL ? last : "-");
    expt_page_li(d, "%s", text);
  }
  double wasted = wasted_s(run), dups = num_or_nan(run, "side_effects.duplicates");
  if (wasted > 0)
    expt_page_li(d, "Servers spent %.4g worker-seconds on attempts whose caller had given up.",
                 wasted);
  if (dups > 0)
    expt_page_li(d, "%.0f side effects were executed more than once (of %.0f operations).", dups,
                 num_or_nan(run, "side_effects.operations"));
  expt_page_end_list(d);
  if (pictures) {
    char stem[128], file[140], data[140], extras[80], caption[280];
    snprintf(stem, sizeof stem, variants ? "timeseries-%s" : "timeseries", name);
    expt_output_safe_name(stem);
    snprintf(file, sizeof file, "%s.svg", stem);
    snprintf(data, sizeof data, "%s.csv", stem);
    picture_extras(d->dir, data, extras, sizeof extras);
    snprintf(caption, sizeof caption, "%s over time: load, queues, latency, shared retry state%s",
             name, extras);
    expt_page_img(d, file, caption);
  }
}

/* Writes the report body through d. */
static void report_body(expt_page *d, const expt_output *o, const expt_scenario *s,
                        const char *command, bool pictures) {
  const json_t *doc_json = expt_output_summary(o);
  bool variants = expt_scenario_has_variants(s);
  const char *desc = expt_scenario_description(s);
  expt_page_h(d, 1, "%s", expt_scenario_name(s));
  if (desc != NULL) expt_page_p(d, "%s", desc);
  /* The experiment's own page, when the run is one of experiments/ seen from the checkout. */
  char page[160];
  snprintf(page, sizeof page, "docs/experiments/%s.md", expt_scenario_name(s));
  if (access(page, R_OK) == 0) expt_page_p(d, "What happens and why, in words: `%s`.", page);
  /* The seed is an integer, or a decimal string past INT64_MAX (expt_output's ju64). */
  const json_t *seed = at(doc_json, "seed");
  char seed_text[24];
  if (json_is_integer(seed))
    snprintf(seed_text, sizeof seed_text, "%lld", (long long)json_integer_value(seed));
  else
    snprintf(seed_text, sizeof seed_text, "%s", json_string_value(seed));
  /* The command is shown in a code span: a backtick in it would end the span, so the span is
   * left out for such a command (its text stays). */
  bool tick = command != NULL && strchr(command, '`') != NULL;
  expt_page_p(
      d,
      "Produced by %s%s%s (retrysim %s, seed %s, scenario SHA-256 `%.12s`). The same command "
      "gives the same files, byte for byte.",
      command == NULL || tick ? "" : "`", command != NULL ? command : "retrysim",
      command == NULL || tick ? "" : "`", json_string_value(at(doc_json, "version")), seed_text,
      json_string_value(at(doc_json, "scenario_sha256")));
  if (variants) report_short(d, o, s);
  report_results(d, o, s);
  report_edges(d, o, s);
  char edge[160];
  bool has_edge = scenario_worst_edge(o, edge, sizeof edge);
  if (pictures && variants) {
    expt_page_h(d, 2, "Over time");
    expt_page_img(d, "compare.svg",
                  "Goodput and attempts per second of every variant; the shaded band is the fault "
                  "window");
  }
  if (pictures && has_edge) {
    char stem[180], file[190];
    edge_stem(edge, stem, sizeof stem);
    snprintf(file, sizeof file, "%s.svg", stem);
    expt_page_h(d, 2, "The worst internal edge: %s", edge);
    expt_page_img(d, file,
                  variants
                      ? "Attempts, retries and failures per second on the edge, one line per "
                        "variant"
                      : "Attempts, retries and failures per second on the edge, and its shared "
                        "retry state");
  }
  char limits[200];
  int n_limits = pictures ? limit_columns(d->dir, limits, sizeof limits) : 0;
  if (n_limits > 0) {
    char caption[400];
    snprintf(caption, sizeof caption,
             variants ? "Each concurrency limit over time (%s), a panel each, one line per "
                        "variant that has it"
                      : "Each concurrency limit over time (%s): an edge's mean limit per caller "
                        "instance with its permits held dashed, a service's adaptive limit "
                        "summed over its replicas",
             limits);
    expt_page_h(d, 2, "Concurrency limits");
    expt_page_img(d, "limits.svg", caption);
  }
  if (pictures && variants) {
    expt_page_h(d, 2, "Side by side");
    expt_page_img(d, "variants.svg",
                  "Front-door attempts/call, goodput, p99 latency and success ratio per variant");
  }
  if (pictures) {
    expt_page_h(d, 2, "Latency");
    expt_page_img(d, "latency-cdf.svg",
                  "Latency distribution of finished calls: the CDF, and its tail as 1 - F on a log "
                  "scale");
  }
  expt_page_h(d, 2, "%s", variants ? "Each variant" : "The run");
  for (size_t i = 0; i < expt_output_n_runs(o); i++)
    report_run(d, o, s, i, pictures);
}

/* What the run's page needs, for expt_page_write_pair. */
typedef struct run_page {
  const expt_output *o;
  const expt_scenario *s;
  const char *command;
  bool pictures;
} run_page;

static void run_page_body(expt_page *d, void *ctx) {
  const run_page *p = ctx;
  report_body(d, p->o, p->s, p->command, p->pictures);
}

int expt_report_write(const expt_output *o, const expt_scenario *s, const char *dir,
                      const char *command, bool pictures, retry_error *err) {
  run_page p = {o, s, command, pictures};
  return expt_page_write_pair(dir, expt_scenario_name(s), "report", run_page_body, &p, err);
}
