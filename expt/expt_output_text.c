/*
 * expt_output_text.c: the text summary of `retrysim run` on stdout: a block of figures for one
 * run, a comparison table for variants. It reads only the summary document (expt_output.h's
 * public accessors), so the text and summary.json cannot disagree: every number shown is one
 * written there, after rounding.
 */
#include "expt/expt_output_ops.h"
#include "expt/expt_output.h"
#include "expt/expt_json.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* {==================================================================
 * Reading the document
 * =================================================================== */

/* Returns o[k1] or o[k1][k2] (k2 NULL), or NULL when missing. Every lookup below goes through dig:
 * jansson's getters return NULL for a NULL or non-object parent, so a missing level anywhere yields
 * NULL instead of a crash. */
static json_t *dig(const json_t *o, const char *k1, const char *k2) {
  json_t *v = json_object_get(o, k1);
  return k2 != NULL ? json_object_get(v, k2) : v;
}

/* A number at o[k1][k2], 0 when missing: a missing figure prints as 0 rather than failing the
 * whole summary (the document always has every key; this only guards the printer). */
static double num_or_zero(const json_t *o, const char *k1, const char *k2) {
  return expt_json_number_or(dig(o, k1, k2), 0);
}

/* An integer at o[k1][k2], 0 when missing or not an integer (a seed or count past INT64_MAX is
 * written as a string and shows as 0 here). long long, so one "%lld" prints it on every
 * platform. */
static long long cnt(const json_t *o, const char *k1, const char *k2) {
  const json_t *v = dig(o, k1, k2);
  return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* Prints "<label><scenario> (seed N, retrysim V)" without a newline. The seed is an integer,
 * or a decimal string when it does not fit a JSON integer (expt_output.c). */
static void print_provenance(const expt_output *o, FILE *f, const char *label) {
  const json_t *doc = expt_output_summary(o), *seed = dig(doc, "seed", NULL);
  char buf[32];
  /* "?" only for a document without a seed, which expt_output never writes. */
  if (json_is_integer(seed))
    snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(seed));
  else
    snprintf(buf, sizeof buf, "%s", json_string_value(seed) ? json_string_value(seed) : "?");
  fprintf(f, "%s%s (seed %s, retrysim %s)", label, json_string_value(dig(doc, "scenario", NULL)),
          buf, json_string_value(dig(doc, "version", NULL)));
}

/* }================================================================== */

/* {==================================================================
 * Aligned tables
 * =================================================================== */

/* The widest table (variants) has 15 columns; TABLE_MAX_COLS also sizes table_print's stack
 * buffers, so a wider table is an assert, not an overflow. */
#define TABLE_MAX_COLS 16
#define TABLE_CELL 96

/* A table of text cells printed with aligned columns; row 0 is the header. Cells are fixed-size
 * strings, so filling one is a single snprintf and a long name is cut rather than reallocated;
 * names are at most 63 bytes (the loader's limit), well inside a cell. */
typedef struct table {
  size_t n_cols, n_rows, cap_rows; /* columns; rows used, header included; rows allocated */
  char (*cells)[TABLE_CELL];       /* n_rows x n_cols */
  const char *align;               /* one 'l' or 'r' per column */
  bool oom;                        /* a row could not be added */
} table;

/* Room for 8 rows at first, doubled when full. Out of memory leaves the table empty with oom
 * set: every call after it does nothing, and table_print reports -1. */
static void table_init(table *t, const char *align, const char *const *header) {
  memset(t, 0, sizeof *t);
  t->align = align;
  t->n_cols = strlen(align);
  assert(t->n_cols <= TABLE_MAX_COLS);
  t->cells = malloc(8 * t->n_cols * sizeof *t->cells);
  t->cap_rows = 8;
  t->oom = t->cells == NULL;
  if (t->oom) return;
  t->n_rows = 1;
  for (size_t c = 0; c < t->n_cols; c++)
    snprintf(t->cells[c], TABLE_CELL, "%s", header[c]);
}

/* Adds an empty row. Returns its index, or 0 (the header, harmlessly overwritten) when out of
 * memory, with t->oom set. */
static size_t table_add(table *t) {
  if (t->oom) return 0;
  if (t->n_rows == t->cap_rows) {
    void *p = realloc(t->cells, 2 * t->cap_rows * t->n_cols * sizeof *t->cells);
    if (p == NULL) {
      t->oom = true;
      return 0;
    }
    t->cells = p;
    t->cap_rows *= 2;
  }
  for (size_t c = 0; c < t->n_cols; c++)
    t->cells[t->n_rows * t->n_cols + c][0] = '\0';
  return t->n_rows++;
}

/* Declared apart only to carry the printf attribute, so formats are checked at each call. */
static void table_set(table *t, size_t row, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Sets one cell, cut to TABLE_CELL bytes. Ignored once the table is out of memory, when row
 * may be 0 (see table_add). */
static void table_set(table *t, size_t row, size_t col, const char *fmt, ...) {
  if (t->oom) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->cells[row * t->n_cols + col], TABLE_CELL, fmt, ap);
  va_end(ap);
}

/* Prints the table, each row after indent, columns two spaces apart, then frees it. Returns 0
 * or -1 when a row was lost to out of memory. */
static int table_print(table *t, FILE *f, const char *indent) {
  /* Widths in bytes: names are ASCII by the loader's rule, so a byte is a column. */
  int width[TABLE_MAX_COLS] = {0};
  for (size_t r = 0; r < t->n_rows; r++)
    for (size_t c = 0; c < t->n_cols; c++) {
      int w = (int)strlen(t->cells[r * t->n_cols + c]);
      if (w > width[c]) width[c] = w;
    }
  /* A whole row: every cell and its two-space separator fit. A negative %*s width left-aligns.
   * Nothing is printed once a row was lost, so a table never appears with a row missing. */
  char line[TABLE_MAX_COLS * (TABLE_CELL + 2) + 1];
  for (size_t r = 0; r < t->n_rows && !t->oom; r++) {
    size_t len = 0;
    for (size_t c = 0; c < t->n_cols; c++) {
      const char *cell = t->cells[r * t->n_cols + c];
      int w = t->align[c] == 'r' ? width[c] : -width[c];
      len += (size_t)snprintf(line + len, sizeof line - len, "%*s%s", w, cell,
                              c + 1 < t->n_cols ? "  " : "");
    }
    /* Empty cells at the end of a row would leave trailing blanks. */
    while (len > 0 && line[len - 1] == ' ')
      line[--len] = '\0';
    fprintf(f, "%s%s\n", indent, line);
  }
  /* The cells are freed here, printed or not, so callers have no cleanup of their own. */
  int rc = t->oom ? -1 : 0;
  free(t->cells);
  t->cells = NULL;
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * Edges
 * =================================================================== */

/* Whether name is a service of the run (an edge from anything else starts at a client). */
static bool is_service(const json_t *run, const char *name) {
  return dig(run, "services", name) != NULL;
}

/* The edges of a run: summary.json's amplification.edges. */
static const json_t *edges_of(const json_t *run) { return dig(run, "amplification", "edges"); }

void expt_output_edge_name(const json_t *run, const json_t *e, char *buf, size_t size) {
  const char *from = json_string_value(dig(e, "from", NULL));
  const char *to = json_string_value(dig(e, "to", NULL));
  if (from == NULL) from = "?";
  if (to == NULL) to = "?";
  /* The k-th of the edges with these names, counted up to e (model_world.c numbers the time
   * series' columns so). */
  int k = 1;
  size_t i;
  const json_t *x;
  json_array_foreach(edges_of(run), i, x) {
    if (x == e) break;
    const char *xf = json_string_value(dig(x, "from", NULL));
    const char *xt = json_string_value(dig(x, "to", NULL));
    if (xf != NULL && xt != NULL && strcmp(xf, from) == 0 && strcmp(xt, to) == 0) k++;
  }
  if (k == 1)
    snprintf(buf, size, "%s->%s", from, to);
  else
    snprintf(buf, size, "%s->%s#%d", from, to, k);
}

/* Attempts per call made on the edge: its attempts / calls, summary.json's attempts_per_call of
 * the edge (or "amplification", the same figure, in a document without it); 0 for an edge
 * without calls. */
static double edge_attempts_per_call(const json_t *e) {
  const json_t *v = dig(e, "attempts_per_call", NULL);
  return json_is_number(v) ? json_number_value(v) : num_or_zero(e, "amplification", NULL);
}

/* Share of the edge's calls that ended OK, in percent, of those its caller did not cancel (a
 * cancelled call neither succeeded nor failed); NaN when the document has no "ok" count for
 * the edge or the edge had no such call. */
static double edge_ok_pct(const json_t *e) {
  const json_t *ok = dig(e, "ok", NULL);
  const json_t *cancelled = dig(e, "cancelled", NULL);
  double calls = num_or_zero(e, "calls", NULL);
  if (json_is_integer(cancelled)) calls -= (double)json_integer_value(cancelled);
  if (!json_is_integer(ok) || calls <= 0) return NAN;
  return 100.0 * (double)json_integer_value(ok) / calls;
}

const json_t *expt_output_worst_edge(const json_t *run) {
  const json_t *best = NULL, *e;
  size_t i;
  json_array_foreach(edges_of(run), i, e) {
    if (!is_service(run, json_string_value(dig(e, "from", NULL)))) continue;
    if (best == NULL) {
      best = e;
      continue;
    }
    double a = edge_attempts_per_call(e), b = edge_attempts_per_call(best);
    double ok_a = edge_ok_pct(e), ok_b = edge_ok_pct(best);
    /* A missing ok % (NaN) never wins a tie: the comparison is false. */
    if (a > b || (a == b && ok_a < ok_b)) best = e;
  }
  return best;
}

/* The count other than ok that is largest in counts (stop reasons of a run or an edge), as
 * "deadline 12" ("-" when every other count is zero); the first in the document's (enum) order
 * on ties. */
static void top_stop(const json_t *counts, char *buf, size_t size) {
  const char *key, *best = NULL;
  json_t *v;
  long long most = 0;
  json_object_foreach((json_t *)counts, key, v) {
    /* ok is skipped: the column tells why calls did not succeed. */
    if (strcmp(key, "ok") != 0 && json_integer_value(v) > most) {
      most = json_integer_value(v);
      best = key;
    }
  }
  if (best == NULL)
    snprintf(buf, size, "-");
  else
    snprintf(buf, size, "%s %lld", best, most);
}

/* A percentage with two decimals, or "-" for NaN (a figure the document does not hold). */
static void pct_cell(table *t, size_t r, size_t c, double pct) {
  if (pct == pct)
    table_set(t, r, c, "%.2f", pct);
  else
    table_set(t, r, c, "-");
}

/* One row per edge of the run: the columns of print_edge_table after its first (variant). */
static void edge_rows(table *t, const json_t *run, const char *variant, bool cancels) {
  size_t i;
  const json_t *e;
  json_array_foreach(edges_of(run), i, e) {
    size_t r = table_add(t), c = 0;
    char name[TABLE_CELL];
    if (variant != NULL) table_set(t, r, c++, "%s", variant);
    expt_output_edge_name(run, e, name, sizeof name);
    table_set(t, r, c++, "%s", name);
    table_set(t, r, c++, "%lld", cnt(e, "calls", NULL));
    table_set(t, r, c++, "%lld", cnt(e, "attempts", NULL));
    table_set(t, r, c++, "%.3f", edge_attempts_per_call(e));
    /* worst_case saturates at 2^53 - 1, "at least this many" (docs/cli.md). */
    table_set(t, r, c++, "%lldx", cnt(e, "worst_case", NULL));
    table_set(t, r, c++, "%lld", cnt(e, "max_attempts", NULL));
    pct_cell(t, r, c++, edge_ok_pct(e));
    if (cancels) {
      if (json_is_integer(dig(e, "cancelled", NULL)))
        table_set(t, r, c++, "%lld", cnt(e, "cancelled", NULL));
      else
        table_set(t, r, c++, "-");
    }
    const json_t *p99 = dig(e, "latency_ms", "p99");
    if (json_is_number(p99))
      table_set(t, r, c++, "%.4g", json_number_value(p99));
    else
      table_set(t, r, c++, "-");
    top_stop(dig(e, "by_stop_reason", NULL), name, sizeof name);
    table_set(t, r, c++, "%s", name);
  }
}

/* The table of every edge of every run, one row per edge (with a variant column when o has
 * variants), after indent. */
static int print_edge_table(const expt_output *o, FILE *f, const char *indent) {
  static const char *const head[] = {"variant",       "edge",       "calls",        "attempts",
                                     "attempts/call", "worst case", "max_attempts", "ok %",
                                     "cancelled",     "p99 ms",     "top stop"};
  static const char align_all[] = "llrrrrrrrrl";
  enum { COL_VARIANT = 0, COL_CANCELLED = 8, N_HEAD = sizeof head / sizeof head[0] };
  bool variants = dig(expt_output_summary(o), "variants", NULL) != NULL;
  /* The cancelled column only when some edge can cancel (its summary has the key), so that
   * every other table reads as before. */
  bool cancels = false;
  for (size_t i = 0; i < expt_output_n_runs(o) && !cancels; i++) {
    size_t k;
    const json_t *e;
    json_array_foreach(edges_of(expt_output_run(o, i)), k, e) {
      if (dig(e, "cancelled", NULL) != NULL) cancels = true;
    }
  }
  const char *h[N_HEAD];
  char align[N_HEAD + 1];
  size_t n = 0;
  for (size_t i = 0; i < N_HEAD; i++) {
    if ((i == COL_VARIANT && !variants) || (i == COL_CANCELLED && !cancels)) continue;
    h[n] = head[i];
    align[n++] = align_all[i];
  }
  align[n] = '\0';
  table t;
  table_init(&t, align, h);
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *run = expt_output_run(o, i);
    edge_rows(&t, run, variants ? json_string_value(dig(run, "variant", NULL)) : NULL, cancels);
  }
  return table_print(&t, f, indent);
}

int expt_output_print_edges(const expt_output *o, FILE *f) {
  assert(o != NULL && f != NULL);
  if (expt_output_n_runs(o) == 0) return 0;
  fputs("\nedges (attempts/call: attempts made on the edge per call made on it)\n", f);
  int rc = print_edge_table(o, f, "");
  if (fflush(f) != 0 || ferror(f)) rc = -1;
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * One run
 * =================================================================== */

/* Writes the non-zero stop reasons as "ok 470, deadline 6" ("none" when all are zero). */
static void print_stops(const json_t *run, FILE *f) {
  const char *key;
  json_t *v;
  bool any = false;
  /* The object is in the enum's order (stop_json), so the line reads the same every run. */
  json_object_foreach(dig(run, "calls", "by_stop_reason"), key, v) {
    if (json_integer_value(v) == 0) continue;
    fprintf(f, "%s%s %lld", any ? ", " : "", key, (long long)json_integer_value(v));
    any = true;
  }
  fputs(any ? "\n" : "none\n", f);
}

/* The load of each service: arrivals per top-level call ("load x"), in the scenario's order. */
static int print_load(const json_t *run, FILE *f) {
  static const char *const head[] = {"service", "load x"};
  table t;
  table_init(&t, "lr", head);
  const char *key;
  json_t *v;
  /* %.4g keeps four significant digits, enough to compare policies without a wall of
   * decimals. */
  json_object_foreach(dig(run, "amplification", NULL), key, v) {
    if (!json_is_number(v)) continue; /* the "edges" array */
    size_t r = table_add(&t);
    table_set(&t, r, 0, "%s", key);
    table_set(&t, r, 1, "%.4gx", json_number_value(v));
  }
  fputs("load x (arrivals at each service, retries included, per top-level call)\n", f);
  return table_print(&t, f, "  ");
}

/* One line per service: load (arrivals), refusals, work on expired requests, how busy the
 * workers were and the work nobody used, and the longest queue; and the handlers a cancel cut
 * short, in a column of their own only when some service can hear one (its summary has the
 * key), so that every other table reads as before. */
static int print_services(const json_t *run, FILE *f) {
  static const char *const head[] = {"service", "arrivals", "rejected",  "expired",
                                     "util %",  "wasted s", "queue max", "cancelled"};
  const char *key;
  json_t *v;
  bool cancels = false;
  json_object_foreach(dig(run, "services", NULL), key, v) {
    if (dig(v, "cancelled", NULL) != NULL) cancels = true;
  }
  table t;
  table_init(&t, cancels ? "lrrrrrrr" : "lrrrrrr", head);
  json_object_foreach(dig(run, "services", NULL), key, v) {
    size_t r = table_add(&t);
    table_set(&t, r, 0, "%s", key);
    table_set(&t, r, 1, "%lld", cnt(v, "arrivals", NULL));
    table_set(&t, r, 2, "%lld", cnt(v, "rejected", NULL));
    table_set(&t, r, 3, "%lld", cnt(v, "expired", NULL));
    table_set(&t, r, 4, "%.1f", 100.0 * num_or_zero(v, "utilization", NULL));
    table_set(&t, r, 5, "%.4g", num_or_zero(v, "wasted_work_s", NULL));
    table_set(&t, r, 6, "%lld", cnt(v, "queue_max", NULL));
    if (cancels && json_is_integer(dig(v, "cancelled", NULL)))
      table_set(&t, r, 7, "%lld", cnt(v, "cancelled", NULL));
    else if (cancels)
      table_set(&t, r, 7, "-");
  }
  return table_print(&t, f, "");
}

/* "after 3 s (last: latency)", "never (last: queue)", "unjudged" when the run ends too soon
 * after the trigger for one span of the hold, or "-" for a run without a trigger that
 * ended (recovery null): when the run came back in its good state, and which of the recovery
 * rule's criteria came back last (or stayed out). */
static void recovery_cell(const json_t *run, char *buf, size_t size) {
  const json_t *rc = dig(run, "recovery", NULL);
  const char *last = json_string_value(dig(rc, "last_criterion", NULL));
  char tail[48] = "";
  if (last != NULL) snprintf(tail, sizeof tail, " (last: %s)", last);
  if (!json_is_object(rc))
    snprintf(buf, size, "-");
  else if (json_is_true(dig(rc, "recovered", NULL)))
    snprintf(buf, size, "after %g s%s", num_or_zero(rc, "recovery_s", NULL), tail);
  else if (json_is_true(dig(rc, "unjudged", NULL)))
    snprintf(buf, size, "unjudged");
  else
    snprintf(buf, size, "never%s", tail);
}

/* The block of a scenario without variants. */
static int print_single(const expt_output *o, FILE *f) {
  /* Every figure comes from the run object (cnt, num), so this block and summary.json never
   * disagree. The services table is printed even when a table before it lost a row; rc keeps
   * the failure either way. */
  const json_t *r = expt_output_run(o, 0);
  long long started = cnt(r, "calls", "started"), ok = cnt(r, "calls", "ok");
  print_provenance(o, f, "scenario      ");
  fputc('\n', f);
  fprintf(f, "sim time      %g s, %lld events\n", num_or_zero(r, "sim_time_s", NULL),
          cnt(r, "events", NULL));
  fprintf(f, "calls         started %lld, ok %lld (%.2f %%), failed %lld, unfinished %lld\n",
          started, ok, started ? 100.0 * (double)ok / (double)started : 0.0,
          cnt(r, "calls", "failed"), cnt(r, "calls", "unfinished"));
  /* Calls made while their client was down (a herd's restart, a pause) never started: the
   * line above does not count them, so a herd's outage would read as all well. */
  long long down = 0;
  size_t hi;
  const json_t *h;
  json_array_foreach(dig(r, "herds", NULL), hi, h) down += cnt(h, "calls_down", NULL);
  if (down > 0)
    fprintf(f, "              and %lld more found their client down (restarting or paused): "
               "never sent, not counted above\n", down);
  fprintf(f, "attempts      %lld (retries %lld, hedges %lld)\n", cnt(r, "calls", "attempts"),
          cnt(r, "calls", "retries"), cnt(r, "calls", "hedges"));
  fprintf(f, "goodput       %g calls/s ok within their deadline\n", num_or_zero(r, "goodput_per_s", NULL));
  const json_t *l = dig(r, "latency_ms", NULL);
  fprintf(f, "latency ms    p50 %.4g  p90 %.4g  p99 %.4g  p99.9 %.4g  max %.4g  (%lld calls)\n",
          num_or_zero(l, "p50", NULL), num_or_zero(l, "p90", NULL), num_or_zero(l, "p99", NULL), num_or_zero(l, "p999", NULL),
          num_or_zero(l, "max", NULL), cnt(l, "count", NULL));
  fprintf(f, "duplicates    %lld (executions %lld, operations %lld)\n",
          cnt(r, "side_effects", "duplicates"), cnt(r, "side_effects", "executions"),
          cnt(r, "side_effects", "operations"));
  fputs("stop reasons  ", f);
  print_stops(r, f);
  fputc('\n', f);
  const json_t *rec = dig(r, "recovery", NULL);
  if (json_is_object(rec)) {
    char cell[TABLE_CELL];
    recovery_cell(r, cell, sizeof cell);
    /* The rule in one line: goodput, latency (when there was a baseline), queues, hold. */
    char lat[96] = "";
    if (json_is_number(dig(rec, "baseline_latency_ms", NULL)))
      snprintf(lat, sizeof lat, ", %s <= %g x %.4g ms",
               json_string_value(dig(rec, "latency_column", NULL)),
               num_or_zero(rec, "latency_factor", NULL), num_or_zero(rec, "baseline_latency_ms", NULL));
    fprintf(f,
            "recovery      trigger %g-%g s, recovered: %s\n"
            "              (healthy: goodput/offered >= %g x %g%s, queues <= %g x baseline + %g "
            "per worker, for %g s)\n",
            num_or_zero(rec, "trigger_start_s", NULL), num_or_zero(rec, "trigger_end_s", NULL), cell,
            num_or_zero(rec, "threshold", NULL), num_or_zero(rec, "baseline_ratio", NULL), lat,
            num_or_zero(rec, "queue_factor", NULL), num_or_zero(rec, "queue_slack", NULL),
            num_or_zero(rec, "hold_s", NULL));
  }
  expt_output_ops_text(r, f); /* only with operators (expt_output_ops.c) */
  int rc = print_load(r, f);
  fputs("edges (attempts/call: attempts made on the edge per call made on it)\n", f);
  if (print_edge_table(o, f, "  ") != 0) rc = -1;
  fputc('\n', f);
  if (print_services(r, f) != 0) rc = -1;
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * Variants
 * =================================================================== */

/* Front-door attempts per call (attempts over calls of the edges that start at a client) and
 * the largest service load with its service's name. */
static double front_door(const json_t *run, const char **max_name, double *max_load) {
  /* Edges that start at a client are the front door: their attempts per call are the load the
   * clients put on the system. *max_name is borrowed from the document. */
  double calls = 0, attempts = 0;
  size_t i;
  json_t *v;
  json_array_foreach(edges_of(run), i, v) {
    if (is_service(run, json_string_value(dig(v, "from", NULL)))) continue;
    calls += num_or_zero(v, "calls", NULL);
    attempts += num_or_zero(v, "attempts", NULL);
  }
  const char *key;
  *max_name = "-";
  *max_load = 0;
  json_object_foreach(dig(run, "amplification", NULL), key, v) {
    if (json_is_number(v) && json_number_value(v) > *max_load) {
      *max_load = json_number_value(v);
      *max_name = key;
    }
  }
  return calls > 0 ? attempts / calls : 0.0;
}

/* The comparison table of a scenario with variants, one row per variant. Columns are the figures
 * a policy comparison turns on: how many calls succeeded, the goodput, how much load the
 * retries added at the front door and at the busiest service, the tail, duplicate side effects,
 * why the failed calls stopped, and the worst internal edge (expt_output_worst_edge) with its
 * attempts per call and ok %. The header takes two lines, so that the names stay whole and the
 * columns narrow. */
static int print_variants(const expt_output *o, FILE *f) {
  static const char *const head1[] = {"", "", "", "",      "front-door", "max",  "", "",
                                      "", "", "", "worst", "edge",       "edge", ""};
  static const char *const head2[] = {"variant",       "calls",  "ok %",     "goodput/s",
                                      "attempts/call", "load x", "p50 ms",   "p99 ms",
                                      "p99.9 ms",      "dups",   "top stop", "internal edge",
                                      "attempts/call", "ok %",   "recovered"};
  static const char all_align[] = "lrrrrrrrrrllrrl";
  /* The edge columns only when some run has an internal edge; the recovery column only when
   * some run had a trigger that ended before the duration. */
  bool recovery = false, edges = false;
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    if (json_is_object(dig(expt_output_run(o, i), "recovery", NULL))) recovery = true;
    if (expt_output_worst_edge(expt_output_run(o, i)) != NULL) edges = true;
  }
  /* The columns shown, as indices into head1, head2 and all_align. */
  size_t cols[15], n_cols = 0;
  for (size_t c = 0; c < 15; c++)
    if ((c < 11 || c > 13 || edges) && (c != 14 || recovery)) cols[n_cols++] = c;
  char align[16];
  const char *h1[15] = {NULL};
  for (size_t k = 0; k < n_cols; k++) {
    align[k] = all_align[cols[k]];
    h1[k] = head1[cols[k]];
  }
  align[n_cols] = '\0';
  table t;
  table_init(&t, align, h1);
  size_t h = table_add(&t);
  for (size_t k = 0; k < n_cols; k++)
    table_set(&t, h, k, "%s", head2[cols[k]]);
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *run = expt_output_run(o, i);
    long long started = cnt(run, "calls", "started"), ok = cnt(run, "calls", "ok");
    const char *max_name;
    double max_load, front = front_door(run, &max_name, &max_load);
    char cell[15][TABLE_CELL];
    snprintf(cell[0], TABLE_CELL, "%s", json_string_value(dig(run, "variant", NULL)));
    snprintf(cell[1], TABLE_CELL, "%lld", started);
    /* A variant that started no call shows 0.00 rather than NaN. */
    snprintf(cell[2], TABLE_CELL, "%.2f", started ? 100.0 * (double)ok / (double)started : 0.0);
    snprintf(cell[3], TABLE_CELL, "%.4g", num_or_zero(run, "goodput_per_s", NULL));
    snprintf(cell[4], TABLE_CELL, "%.3f", front);
    snprintf(cell[5], TABLE_CELL, "%.3f %s", max_load, max_name);
    snprintf(cell[6], TABLE_CELL, "%.4g", num_or_zero(run, "latency_ms", "p50"));
    snprintf(cell[7], TABLE_CELL, "%.4g", num_or_zero(run, "latency_ms", "p99"));
    snprintf(cell[8], TABLE_CELL, "%.4g", num_or_zero(run, "latency_ms", "p999"));
    snprintf(cell[9], TABLE_CELL, "%lld", cnt(run, "side_effects", "duplicates"));
    top_stop(dig(run, "calls", "by_stop_reason"), cell[10], TABLE_CELL);
    const json_t *w = expt_output_worst_edge(run);
    /* A run without an internal edge among runs with one shows "-". */
    snprintf(cell[11], TABLE_CELL, "-");
    snprintf(cell[12], TABLE_CELL, "-");
    snprintf(cell[13], TABLE_CELL, "-");
    if (w != NULL) {
      expt_output_edge_name(run, w, cell[11], TABLE_CELL);
      snprintf(cell[12], TABLE_CELL, "%.3f", edge_attempts_per_call(w));
      double pct = edge_ok_pct(w);
      if (pct == pct) snprintf(cell[13], TABLE_CELL, "%.2f", pct);
    }
    recovery_cell(run, cell[14], TABLE_CELL);
    size_t r = table_add(&t);
    for (size_t k = 0; k < n_cols; k++)
      table_set(&t, r, k, "%s", cell[cols[k]]);
  }
  print_provenance(o, f, "scenario ");
  fprintf(f, ", %zu variants\n\n", expt_output_n_runs(o));
  return table_print(&t, f, "");
}

/* The layout follows the summary's shape: "variants" in the document means a table. A write
 * error (a closed pipe, a full disk) shows in the stream's flags, checked once at the end
 * after a flush rather than after each fprintf. */
int expt_output_print_text(const expt_output *o, FILE *f) {
  assert(o != NULL && f != NULL);
  if (expt_output_n_runs(o) == 0) return 0;
  bool has_variants = dig(expt_output_summary(o), "variants", NULL) != NULL;
  int rc = has_variants ? print_variants(o, f) : print_single(o, f);
  if (fflush(f) != 0 || ferror(f)) rc = -1;
  return rc;
}

/* }================================================================== */
