/*
 * expt_report.c: the pictures and report.md of `retrysim run --plot`.
 *
 * The pictures are drawn by the gnuplot scripts of plots/, run as separate processes on the CSV
 * files already written: the scripts stay usable by hand on any run's files, and retrysim does
 * not link a plotting library. report.md is built from the run objects of the summary, so every
 * figure in it is the one summary.json holds.
 */
#include "expt/expt_report.h"
#include "expt/expt_json.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The environment, for posix_spawnp: gnuplot needs PATH, HOME, the locale. */
extern char **environ;

/* {==================================================================
 * Errors and small helpers
 * =================================================================== */

/* malloc'd printf; NULL when out of memory. */
static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (s == NULL) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* A member of the run object by a dotted path ("latency_ms.p99"). */
static const json_t *at(const json_t *o, const char *path) { return expt_json_at(o, path); }

/* A number at path, NaN when absent or null: a figure that is not there is not drawn. */
static double num_or_nan(const json_t *o, const char *path) {
  return expt_json_number_or(expt_json_at(o, path), NAN);
}

/* }================================================================== */

/* {==================================================================
 * Edges
 * =================================================================== */

/* Whether the edge starts at a service (an internal edge), not at a client population. */
static bool is_internal(const json_t *run, const json_t *e) {
  return at(at(run, "services"), json_string_value(at(e, "from"))) != NULL;
}

/* "from->to", as the text summary and the time series' columns name an edge. */
static void edge_name(const json_t *e, char *buf, size_t size) {
  snprintf(buf, size, "%s->%s", json_string_value(at(e, "from")), json_string_value(at(e, "to")));
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
  double calls = num_or_nan(e, "calls"), ok = num_or_nan(e, "ok"), cancelled = num_or_nan(e, "cancelled");
  if (cancelled == cancelled) calls -= cancelled;
  return calls > 0 && ok == ok ? 100 * ok / calls : NAN;
}

/* The edge of run named from->to, NULL when the run has none. */
static const json_t *find_edge(const json_t *run, const char *name) {
  size_t i;
  const json_t *e;
  char buf[160];
  json_array_foreach((json_t *)at(run, "amplification.edges"), i, e) {
    edge_name(e, buf, sizeof buf);
    if (strcmp(buf, name) == 0) return e;
  }
  return NULL;
}

/* The worst internal edge of the whole scenario: each run's worst internal edge
 * (expt_output_worst_edge), the one with the most attempts per call over the runs (the first run
 * on a tie). Its name goes into name; false when no run has an internal edge. */
static bool scenario_worst_edge(const expt_output *o, char *name, size_t size) {
  const json_t *best = NULL;
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *w = expt_output_worst_edge(expt_output_run(o, i));
    if (w != NULL && (best == NULL || edge_apc(w) > edge_apc(best))) best = w;
  }
  if (best != NULL) edge_name(best, name, size);
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
  char *path = str_printf("%s/timeseries.csv", dir);
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

/* The file stem of an edge's picture: "edge-FROM-TO" (file-name safe). */
static void edge_stem(const char *name, char *buf, size_t size) {
  snprintf(buf, size, "edge-%s", name);
  char *arrow = strstr(buf, "->");
  if (arrow != NULL) memmove(arrow + 1, arrow + 2, strlen(arrow + 2) + 1);
  expt_output_safe_name(buf);
}

/* }================================================================== */

/* {==================================================================
 * Pictures
 * =================================================================== */

#ifndef RETRYSIM_PLOTS_DIR
#define RETRYSIM_PLOTS_DIR "plots"
#endif

const char *expt_report_plots_dir(void) {
  const char *env = getenv("RETRYSIM_PLOTS");
  if (env != NULL && env[0] != '\0') return env;
  /* The build's own tree when it still exists (a binary run from its checkout), else the
   * current directory's plots/, which is where a checkout's users stand. */
  if (access(RETRYSIM_PLOTS_DIR "/timeseries.gp", R_OK) == 0) return RETRYSIM_PLOTS_DIR;
  return "plots";
}

/* Runs `gnuplot [-e SET] -c script data out title` and waits for it (set: NULL or a gnuplot
 * command run first, e.g. "edge='a->b'"). gnuplot's stdout is sent to the log's descriptor like
 * its stderr. Returns 0, or RETRY_EIO with err filled. */
static int gnuplot(const char *set, const char *script, const char *data, const char *out,
                   const char *title, FILE *log, retry_error *err) {
  /* posix_spawnp takes char *const argv[] for historical reasons and does not write to it;
   * the literals are copied into arrays so that no const is cast away from a literal. */
  char prog[] = "gnuplot", dash_c[] = "-c", dash_e[] = "-e";
  char *argv[9] = {prog};
  size_t n = 1;
  if (set != NULL) {
    argv[n++] = dash_e;
    argv[n++] = (char *)set;
  }
  argv[n++] = dash_c;
  argv[n++] = (char *)script;
  argv[n++] = (char *)data;
  argv[n++] = (char *)out;
  argv[n++] = (char *)title;
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    expt_output_error(err, RETRY_ENOMEM, script, "out of memory");
    return RETRY_ENOMEM;
  }
  int logfd = fileno(log);
  fflush(log);
  if (logfd >= 0 && logfd != STDOUT_FILENO) posix_spawn_file_actions_adddup2(&fa, logfd, 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    expt_output_error(err, RETRY_EIO, script,
                     "cannot run gnuplot: %s (install gnuplot-nox, e.g. with `make deps`)",
                     strerror(rc));
    return RETRY_EIO;
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) {
      expt_output_error(err, RETRY_EIO, script, "cannot wait for gnuplot: %s", strerror(errno));
      return RETRY_EIO;
    }
  }
  /* Exit status 127 from a spawned child means the exec itself failed. */
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    expt_output_error(err, RETRY_EIO, script,
                     "cannot run gnuplot (install gnuplot-nox, `make deps`)");
    return RETRY_EIO;
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    expt_output_error(err, RETRY_EIO, script,
                     "gnuplot failed on %s (exit status %d): see its messages", data,
                     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return RETRY_EIO;
  }
  return 0;
}

/* Renders dir/stem.svg from dir/data_name with script NAME.gp of plots_dir (set: see gnuplot):
 * drawn as stem.tmp.<pid>.svg (the script picks its terminal from the extension) and renamed. */
static int render(const char *plots_dir, const char *script, const char *set, const char *dir,
                  const char *data_name, const char *stem, const char *title, FILE *log,
                  retry_error *err) {
  char *gp = str_printf("%s/%s.gp", plots_dir, script);
  char *data = str_printf("%s/%s", dir, data_name);
  char *tmp = str_printf("%s/%s.tmp.%ld.svg", dir, stem, (long)getpid());
  char *out = str_printf("%s/%s.svg", dir, stem);
  int rc = 0;
  if (gp == NULL || data == NULL || tmp == NULL || out == NULL) {
    expt_output_error(err, RETRY_ENOMEM, dir, "out of memory");
    rc = RETRY_ENOMEM;
  } else if (access(gp, R_OK) != 0) {
    expt_output_error(err, RETRY_EIO, gp,
                     "cannot read the plot script: %s (set RETRYSIM_PLOTS to the plots/ directory)",
                     strerror(errno));
    rc = RETRY_EIO;
  } else {
    int slot = expt_output_tmp_register(tmp); /* removed on SIGINT / SIGTERM */
    rc = gnuplot(set, gp, data, tmp, title, log, err);
    if (rc == 0 && rename(tmp, out) != 0) {
      expt_output_error(err, RETRY_EIO, out, "cannot rename %s: %s", tmp, strerror(errno));
      rc = RETRY_EIO;
    }
    if (rc != 0) unlink(tmp);
    expt_output_tmp_forget(slot);
  }
  free(gp);
  free(data);
  free(tmp);
  free(out);
  return rc;
}

int expt_report_plots(const expt_output *o, const expt_scenario *s, const char *dir,
                     const char *plots_dir, FILE *log, retry_error *err) {
  const char *name = expt_scenario_name(s);
  char title[200];
  int rc = 0;
  if (!expt_scenario_has_variants(s)) {
    snprintf(title, sizeof title, "%s", name);
    rc =
        render(plots_dir, "timeseries", NULL, dir, "timeseries.csv", "timeseries", title, log, err);
  } else {
    /* One picture per variant, from the variant's own wide file, then the comparisons. */
    for (size_t i = 0; i < expt_output_n_runs(o) && rc == 0; i++) {
      char stem[128];
      snprintf(stem, sizeof stem, "timeseries-%s", expt_scenario_run_name(s, i));
      expt_output_safe_name(stem);
      char data[140];
      snprintf(data, sizeof data, "%s.csv", stem);
      snprintf(title, sizeof title, "%s: %s", name, expt_scenario_run_name(s, i));
      rc = render(plots_dir, "timeseries", NULL, dir, data, stem, title, log, err);
    }
    snprintf(title, sizeof title, "%s: goodput and attempts per variant", name);
    if (rc == 0)
      rc = render(plots_dir, "compare", NULL, dir, "timeseries.csv", "compare", title, log, err);
    snprintf(title, sizeof title, "%s: variants side by side", name);
    if (rc == 0)
      rc = render(plots_dir, "variants", NULL, dir, "variants.csv", "variants", title, log, err);
  }
  /* The worst internal edge by name: the same long or wide timeseries.csv, edge.gp choosing
   * the layout from the file. Names are letters, digits and "_.-" (the loader's rule), so the
   * gnuplot string needs no escaping. */
  char edge[160];
  if (rc == 0 && scenario_worst_edge(o, edge, sizeof edge)) {
    char set[200], stem[180];
    snprintf(set, sizeof set, "edge='%s'", edge);
    edge_stem(edge, stem, sizeof stem);
    snprintf(title, sizeof title, "%s: the %s edge", name, edge);
    rc = render(plots_dir, "edge", set, dir, "timeseries.csv", stem, title, log, err);
  }
  /* Every concurrency limit (each limited edge's and each service's adaptive one), in one
   * picture: a line per limit for one run, a panel per limit with a line per variant. */
  char limits[200];
  if (rc == 0 && limit_columns(dir, limits, sizeof limits) > 0) {
    snprintf(title, sizeof title, "%s: concurrency limits", name);
    rc = render(plots_dir, "limits", NULL, dir, "timeseries.csv", "limits", title, log, err);
  }
  snprintf(title, sizeof title, "%s: latency of finished calls", name);
  if (rc == 0)
    rc = render(plots_dir, "latency-cdf", NULL, dir, "latency.csv", "latency-cdf", title, log, err);
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * One page, two formats
 * =================================================================== */

/* report.md and report.html are written by the same code: each block (heading, paragraph,
 * list item, table, picture) goes through a doc, which writes Markdown or HTML. Text is
 * Markdown's inline subset: `code`, **strong**, *emphasis* and backslash escapes; in HTML it is
 * escaped and those marks become elements (doc_inline). */
typedef struct doc {
  FILE *f;
  bool html;
  const char *dir; /* the pictures are read from here for HTML */
  bool in_list;    /* a list is open */
  bool right[16];  /* the open table's right-aligned columns */
  size_t n_cols;   /* columns of the open table */
  bool failed;     /* a picture could not be read: the page is not put in place */
} doc;

/* Writes one character of text escaped for HTML. Control characters other than tab and line
 * end are not allowed in HTML text: they become U+FFFD. */
static void html_char(FILE *f, char c) {
  switch (c) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default:
      if ((unsigned char)c < 0x20 && c != '\n' && c != '\t')
        fputs("\xEF\xBF\xBD", f);
      else
        fputc(c, f);
  }
}

/* Writes s escaped for HTML, with no markup (attribute values, titles). */
static void html_text(FILE *f, const char *s) {
  for (; *s; s++)
    html_char(f, *s);
}

/* Writes the Markdown text s: as it is for Markdown; for HTML escaped, with `code`, **strong**
 * and *emphasis* as elements. The elements always nest and close: a mark that would close an
 * element other than the innermost one, or one left open at the end, is closed in order, so
 * any text gives well-formed HTML. A '*' opens emphasis only before a non-blank, as in
 * Markdown ("2 * 3" stays as it is). */
static void doc_inline(const doc *d, const char *s) {
  if (!d->html) {
    fputs(s, d->f);
    return;
  }
  const char *stack[8];
  int depth = 0;
  for (const char *p = s; *p; p++) {
    bool code = depth > 0 && strcmp(stack[depth - 1], "code") == 0;
    if (code && *p != '`') {
      html_char(d->f, *p);
    } else if (*p == '`') {
      if (code) {
        fputs("</code>", d->f);
        depth--;
      } else if (depth < 8) {
        fputs("<code>", d->f);
        stack[depth++] = "code";
      }
    } else if (*p == '\\' && p[1] != '\0' && strchr("\\`*_{}[]()#+-.!|", p[1]) != NULL) {
      html_char(d->f, *++p);
    } else if (*p == '*') {
      const char *tag = p[1] == '*' ? "strong" : "em";
      size_t len = p[1] == '*' ? 2 : 1;
      bool top = depth > 0 && strcmp(stack[depth - 1], tag) == 0;
      if (top) {
        fprintf(d->f, "</%s>", tag);
        depth--;
        p += len - 1;
      } else if (depth < 8 && p[len] != '\0' && p[len] != ' ') {
        fprintf(d->f, "<%s>", tag);
        stack[depth++] = tag;
        p += len - 1;
      } else {
        html_char(d->f, *p);
      }
    } else {
      html_char(d->f, *p);
    }
  }
  while (depth > 0)
    fprintf(d->f, "</%s>", stack[--depth]);
}

/* The printf of the blocks below: formats into a buffer, NULL when out of memory (the block
 * is then left out; report_write checks the stream's error state, not each block). */
static char *vfmt(const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (s != NULL) vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

/* Ends an open list. */
static void doc_end_list(doc *d) {
  if (!d->in_list) return;
  fputs(d->html ? "</ul>\n" : "\n", d->f);
  d->in_list = false;
}

static void doc_h(doc *d, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void doc_p(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void doc_li(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A heading of level 1 to 3. */
static void doc_h(doc *d, int level, const char *fmt, ...) {
  doc_end_list(d);
  va_list ap;
  va_start(ap, fmt);
  char *s = vfmt(fmt, ap);
  va_end(ap);
  if (s == NULL) return;
  if (d->html) {
    fprintf(d->f, "<h%d>", level);
    doc_inline(d, s);
    fprintf(d->f, "</h%d>\n", level);
  } else {
    fprintf(d->f, "%.*s %s\n\n", level, "###", s);
  }
  free(s);
}

/* A paragraph. */
static void doc_p(doc *d, const char *fmt, ...) {
  doc_end_list(d);
  va_list ap;
  va_start(ap, fmt);
  char *s = vfmt(fmt, ap);
  va_end(ap);
  if (s == NULL) return;
  fputs(d->html ? "<p>" : "", d->f);
  doc_inline(d, s);
  fputs(d->html ? "</p>\n" : "\n\n", d->f);
  free(s);
}

/* An item of a bulleted list, which opens with the first item and ends with the next block. */
static void doc_li(doc *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vfmt(fmt, ap);
  va_end(ap);
  if (s == NULL) return;
  if (d->html && !d->in_list) fputs("<ul>\n", d->f);
  d->in_list = true;
  fputs(d->html ? "<li>" : "- ", d->f);
  doc_inline(d, s);
  fputs(d->html ? "</li>\n" : "\n", d->f);
  free(s);
}

/* Opens a table: its header cells (Markdown text) and their alignment ('l' or 'r' each). */
static void doc_table(doc *d, const char *const *head, const char *align) {
  doc_end_list(d);
  d->n_cols = strlen(align);
  assert(d->n_cols <= sizeof d->right / sizeof d->right[0]);
  fputs(d->html ? "<table>\n<thead><tr>" : "|", d->f);
  for (size_t c = 0; c < d->n_cols; c++) {
    d->right[c] = align[c] == 'r';
    if (d->html) {
      fputs(d->right[c] ? "<th class=\"r\">" : "<th>", d->f);
      doc_inline(d, head[c]);
      fputs("</th>", d->f);
    } else {
      fprintf(d->f, " %s |", head[c]);
    }
  }
  if (d->html) {
    fputs("</tr></thead>\n<tbody>\n", d->f);
  } else {
    fputs("\n|", d->f);
    for (size_t c = 0; c < d->n_cols; c++)
      fputs(d->right[c] ? "--:|" : "---|", d->f);
    fputc('\n', d->f);
  }
}

/* One row of the open table: n_cols cells of Markdown text. */
static void doc_row(doc *d, char cells[][128]) {
  fputs(d->html ? "<tr>" : "|", d->f);
  for (size_t c = 0; c < d->n_cols; c++) {
    if (d->html) {
      fputs(d->right[c] ? "<td class=\"r\">" : "<td>", d->f);
      doc_inline(d, cells[c]);
      fputs("</td>", d->f);
    } else {
      fprintf(d->f, " %s |", cells[c]);
    }
  }
  fputs(d->html ? "</tr>\n" : "\n", d->f);
}

static void doc_table_end(doc *d) { fputs(d->html ? "</tbody>\n</table>\n" : "\n", d->f); }

/* Writes the bytes of file path as base64 (RFC 4648, with padding, no line breaks). Returns 0,
 * or -1 when the file cannot be read. */
static int base64_file(FILE *out, const char *path) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  FILE *in = fopen(path, "rb");
  if (in == NULL) return -1;
  unsigned char buf[3 * 1024];
  size_t n;
  /* fread fills whole buffers until the end, so only the last chunk can leave 1 or 2 bytes. */
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
      unsigned v = (unsigned)buf[i] << 16 | (unsigned)buf[i + 1] << 8 | buf[i + 2];
      fputc(abc[v >> 18], out);
      fputc(abc[v >> 12 & 63], out);
      fputc(abc[v >> 6 & 63], out);
      fputc(abc[v & 63], out);
    }
    if (i < n) {
      unsigned v = (unsigned)buf[i] << 16 | (i + 1 < n ? (unsigned)buf[i + 1] << 8 : 0);
      fputc(abc[v >> 18], out);
      fputc(abc[v >> 12 & 63], out);
      fputc(i + 1 < n ? abc[v >> 6 & 63] : '=', out);
      fputc('=', out);
    }
  }
  int rc = ferror(in) ? -1 : 0;
  fclose(in);
  return rc;
}

/* A picture with its caption: linked by file name in Markdown (report.md sits next to it),
 * inlined as a data: URI in HTML, so that report.html stands alone. */
static void doc_img(doc *d, const char *file, const char *caption) {
  doc_end_list(d);
  if (!d->html) {
    fprintf(d->f, "![%s](%s)\n\n", caption, file);
    return;
  }
  char *path = str_printf("%s/%s", d->dir, file);
  if (path == NULL) return;
  fputs("<figure><img src=\"data:image/svg+xml;base64,", d->f);
  int rc = base64_file(d->f, path);
  fputs("\" alt=\"", d->f);
  html_text(d->f, caption);
  fputs("\"><figcaption>", d->f);
  doc_inline(d, caption);
  fputs("</figcaption></figure>\n", d->f);
  /* A picture that cannot be read would leave a broken image: the page is then not put in
   * place. */
  if (rc != 0) d->failed = true;
  free(path);
}

/* }================================================================== */

/* {==================================================================
 * The report
 * =================================================================== */

/* "after 3 s (last: latency)", "never (last: queue)", or "-" for a run without a trigger that
 * ended: as the text table's recovered column. */
static void recovery_text(const json_t *run, char *buf, size_t size) {
  const json_t *rc = at(run, "recovery");
  const char *last = json_string_value(at(rc, "last_criterion"));
  char tail[48] = "";
  if (last != NULL) snprintf(tail, sizeof tail, " (last: %s)", last);
  if (!json_is_object(rc))
    snprintf(buf, size, "-");
  else if (json_is_true(at(rc, "recovered")))
    snprintf(buf, size, "after %g s%s", num_or_nan(rc, "recovery_s"), tail);
  else
    snprintf(buf, size, "never%s", tail);
}

/* Worker time whose result nobody used, over every service. */
static double wasted_s(const json_t *run) {
  double w = 0;
  const char *key;
  const json_t *svc;
  json_object_foreach((json_t *)at(run, "services"), key, svc) { w += num_or_nan(svc, "wasted_work_s"); }
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
    double v = num_or_nan(expt_output_run(o, i), path), b = num_or_nan(expt_output_run(o, best), path);
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
static bool carries_retries(const json_t *e) { return num_or_nan(e, "attempts") > num_or_nan(e, "calls"); }

/* "In short" on internal edges: for each internal edge that carried retries in some run, its
 * attempts per call in every run (the most and the fewest when there are more than six runs). */
static void short_edges(doc *d, const expt_output *o, const expt_scenario *s) {
  size_t n = expt_output_n_runs(o);
  const json_t *first = expt_output_run(o, 0);
  size_t i;
  const json_t *e;
  /* The runs of one scenario have the same edges in the same order: the first run's list. */
  json_array_foreach((json_t *)at(first, "amplification.edges"), i, e) {
    if (!is_internal(first, e)) continue;
    char name[160];
    edge_name(e, name, sizeof name);
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
      doc_li(d, "%s.", text);
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
    doc_li(d, "%s.", text);
  }
}

/* "In short": the comparison in a few sentences, for a scenario with variants. Which runs came
 * back after the faults and which never did, then the extremes of goodput, load, tail and
 * duplicates, each with its variant, and what the internal edges did. */
static void report_short(doc *d, const expt_output *o, const expt_scenario *s) {
  size_t n = expt_output_n_runs(o);
  doc_h(d, 2, "In short");
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
      doc_li(d, "%s%s.",
             pass == 0 ? "Back in their good state after the trigger: "
                       : "**Never back in their good state** within the run: ",
             text);
  }
  size_t hi = extreme(o, "goodput_per_s", true), lo = extreme(o, "goodput_per_s", false);
  doc_li(d, "Most goodput: %s, %.4g calls/s; least: %s, %.4g calls/s.",
         expt_scenario_run_name(s, hi), num_or_nan(expt_output_run(o, hi), "goodput_per_s"),
         expt_scenario_run_name(s, lo), num_or_nan(expt_output_run(o, lo), "goodput_per_s"));
  size_t amp = 0;
  for (size_t i = 1; i < n; i++)
    if (front_door(expt_output_run(o, i)) > front_door(expt_output_run(o, amp))) amp = i;
  /* Said only when the clients retried or hedged at all: 1.000 everywhere is no news. */
  if (front_door(expt_output_run(o, amp)) > 1)
    doc_li(d,
           "Most load from the clients' retries and hedges: %s, %.3f front-door attempts per "
           "call.",
           expt_scenario_run_name(s, amp), front_door(expt_output_run(o, amp)));
  short_edges(d, o, s);
  size_t tail = extreme(o, "latency_ms.p99", true), fast = extreme(o, "latency_ms.p99", false);
  doc_li(d, "Slowest p99: %s, %.4g ms; fastest: %s, %.4g ms.", expt_scenario_run_name(s, tail),
         num_or_nan(expt_output_run(o, tail), "latency_ms.p99"), expt_scenario_run_name(s, fast),
         num_or_nan(expt_output_run(o, fast), "latency_ms.p99"));
  size_t dup = extreme(o, "side_effects.duplicates", true);
  if (num_or_nan(expt_output_run(o, dup), "side_effects.duplicates") > 0)
    doc_li(d, "Most duplicate side effects: %s, %.0f.", expt_scenario_run_name(s, dup),
           num_or_nan(expt_output_run(o, dup), "side_effects.duplicates"));
  doc_end_list(d);
}

/* The results table: a row per run, the front door's figures and the worst internal edge (its
 * three columns only when some run has an internal edge). */
static void report_results(doc *d, const expt_output *o, const expt_scenario *s) {
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
  doc_h(d, 2, "Results");
  doc_table(d, h, align);
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
      edge_name(w, c[10], sizeof c[10]);
      snprintf(c[11], sizeof c[11], "%.3f", edge_apc(w));
      pct_text(c[12], sizeof c[12], edge_ok_pct(w));
    } else {
      for (int k = 10; k < 13; k++)
        snprintf(c[k], sizeof c[k], "-");
    }
    recovery_text(run, c[13], sizeof c[13]);
    for (size_t k = 0; k < n_cols; k++)
      memcpy(row[k], c[cols[k]], sizeof row[k]);
    doc_row(d, row);
  }
  doc_table_end(d);
  doc_p(d, "%s",
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
static void report_edges(doc *d, const expt_output *o, const expt_scenario *s) {
  static const char *const head[] = {"variant",  "edge",          "calls",
                                     "attempts", "attempts/call", "worst case",
                                     "ok %",     "p99 ms",        "top stop reason"};
  bool variants = expt_scenario_has_variants(s);
  size_t skip = variants ? 0 : 1; /* the variant column, only with variants */
  doc_h(d, 2, "Edges");
  doc_table(d, head + skip, variants ? "llrrrrrrl" : "lrrrrrrl");
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *run = expt_output_run(o, i);
    size_t k;
    const json_t *e;
    json_array_foreach((json_t *)at(run, "amplification.edges"), k, e) {
      char c[9][128];
      snprintf(c[0], sizeof c[0], "%s", expt_scenario_run_name(s, i));
      edge_name(e, c[1], sizeof c[1]);
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
      doc_row(d, c + skip);
    }
  }
  doc_table_end(d);
  doc_p(d,
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
  doc_p(d,
        "*load x* of each service: the attempts arriving at it (retries and refused ones "
        "included) per call started by the clients.");
  doc_table(d, svc_head, align);
  for (size_t i = 0; i < expt_output_n_runs(o); i++) {
    const json_t *run = expt_output_run(o, i);
    char c[15][128];
    snprintf(c[0], sizeof c[0], "%s", variants ? expt_scenario_run_name(s, i) : "the run");
    for (size_t k = 1; k < n_svc; k++)
      snprintf(c[k], sizeof c[k], "%.4gx",
               json_number_value(at(at(run, "amplification"), names[k])));
    doc_row(d, c);
  }
  doc_table_end(d);
}

/* The internal edges of a run, one list item each: calls, attempts, retries and hedges, ok %,
 * p99 and why the failed calls stopped. Figures the document lacks are left out. */
static void report_run_edges(doc *d, const json_t *run) {
  size_t k;
  const json_t *e;
  json_array_foreach((json_t *)at(run, "amplification.edges"), k, e) {
    if (!is_internal(run, e)) continue;
    char name[160], more[400] = "", ok[32], stops[200];
    edge_name(e, name, sizeof name);
    size_t used = 0;
    double retries = num_or_nan(e, "retries"), hedges = num_or_nan(e, "hedges"), p99 = num_or_nan(e, "latency_ms.p99");
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
    doc_li(d, "The %s edge: %.0f calls made %.0f attempts (%.3g per call%s)%s.", name,
           num_or_nan(e, "calls"), num_or_nan(e, "attempts"), edge_apc(e), more, tail);
  }
}

/* The section of one run: its figures in words and its picture. */
static void report_run(doc *d, const expt_output *o, const expt_scenario *s, size_t i,
                       bool pictures) {
  const json_t *run = expt_output_run(o, i);
  const char *name = expt_scenario_run_name(s, i);
  const char *vdesc = expt_scenario_run_description(s, i);
  bool variants = expt_scenario_has_variants(s);
  if (variants) {
    doc_h(d, 3, "%s", name);
    if (vdesc != NULL) doc_p(d, "%s", vdesc);
  }
  double calls = num_or_nan(run, "calls.started"), attempts = num_or_nan(run, "calls.attempts");
  char stops[200], statuses[200];
  top_counts(at(run, "calls.by_stop_reason"), "ok", stops, sizeof stops);
  top_counts(at(run, "calls.by_status"), "OK", statuses, sizeof statuses);
  doc_li(d,
         "%.0f calls sent %.0f attempts (%.3g per call: %.0f retries, %.0f hedges); "
         "%.0f ended OK, %.0f failed.",
         calls, attempts, calls > 0 ? attempts / calls : 0.0, num_or_nan(run, "calls.retries"),
         num_or_nan(run, "calls.hedges"), num_or_nan(run, "calls.ok"), num_or_nan(run, "calls.failed"));
  doc_li(d, "Why the failed calls stopped: %s; the statuses they ended with: %s.", stops, statuses);
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
               num_or_nan(rc, "recovery_s"), 100 * num_or_nan(rc, "threshold"), lat_rule, num_or_nan(rc, "hold_s"),
               last != NULL ? last : "-");
    else
      snprintf(text + used, sizeof text - used,
               "; it never came back within the run: over the last %g s, %.1f %% did; the "
               "criterion that stayed out longest: %s.",
               num_or_nan(rc, "hold_s"), 100 * num_or_nan(rc, "final_ratio"), last != NULL ? last : "-");
    doc_li(d, "%s", text);
  }
  double wasted = wasted_s(run), dups = num_or_nan(run, "side_effects.duplicates");
  if (wasted > 0)
    doc_li(d, "Servers spent %.4g worker-seconds on attempts whose caller had given up.", wasted);
  if (dups > 0)
    doc_li(d, "%.0f side effects were executed more than once (of %.0f operations).", dups,
           num_or_nan(run, "side_effects.operations"));
  doc_end_list(d);
  if (pictures) {
    char stem[128], file[140], caption[200];
    snprintf(stem, sizeof stem, variants ? "timeseries-%s" : "timeseries", name);
    expt_output_safe_name(stem);
    snprintf(file, sizeof file, "%s.svg", stem);
    snprintf(caption, sizeof caption, "%s over time: load, queues, latency, shared retry state",
             name);
    doc_img(d, file, caption);
  }
}

/* Writes the report body through d. */
static void report_body(doc *d, const expt_output *o, const expt_scenario *s, const char *command,
                        bool pictures) {
  const json_t *doc_json = expt_output_summary(o);
  bool variants = expt_scenario_has_variants(s);
  const char *desc = expt_scenario_description(s);
  doc_h(d, 1, "%s", expt_scenario_name(s));
  if (desc != NULL) doc_p(d, "%s", desc);
  /* The experiment's own page, when the run is one of experiments/ seen from the checkout. */
  char page[160];
  snprintf(page, sizeof page, "docs/experiments/%s.md", expt_scenario_name(s));
  if (access(page, R_OK) == 0) doc_p(d, "What happens and why, in words: `%s`.", page);
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
  doc_p(d,
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
    doc_h(d, 2, "Over time");
    doc_img(d, "compare.svg",
            "Goodput and attempts per second of every variant; the shaded band is the fault "
            "window");
  }
  if (pictures && has_edge) {
    char stem[180], file[190];
    edge_stem(edge, stem, sizeof stem);
    snprintf(file, sizeof file, "%s.svg", stem);
    doc_h(d, 2, "The worst internal edge: %s", edge);
    doc_img(d, file,
            variants ? "Attempts, retries and failures per second on the edge, one line per "
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
    doc_h(d, 2, "Concurrency limits");
    doc_img(d, "limits.svg", caption);
  }
  if (pictures && variants) {
    doc_h(d, 2, "Side by side");
    doc_img(d, "variants.svg",
            "Front-door attempts/call, goodput, p99 latency and success ratio per variant");
  }
  if (pictures) {
    doc_h(d, 2, "Latency");
    doc_img(d, "latency-cdf.svg",
            "Latency distribution of finished calls: the CDF, and its tail as 1 - F on a log "
            "scale");
  }
  doc_h(d, 2, "%s", variants ? "Each variant" : "The run");
  for (size_t i = 0; i < expt_output_n_runs(o); i++)
    report_run(d, o, s, i, pictures);
}

/* The style of report.html: readable on a screen and on paper, no external asset. */
static const char html_style[] =
    "body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;line-height:1.45;"
    "color:#222;background:#fff;margin:0}\n"
    "main{max-width:1240px;margin:0 auto;padding:1.5em 2em 3em}\n"
    "h1{font-size:1.8em;margin:.2em 0 .5em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;margin:.8em 0;font-size:.85em;display:block;overflow-x:auto}\n"
    "th,td{border:1px solid #ccc;padding:.25em .45em;vertical-align:top}td{white-space:nowrap}\n"
    "th{background:#f3f3f3;text-align:left}.r{text-align:right;font-variant-numeric:"
    "tabular-nums}\n"
    "tbody tr:nth-child(even){background:#fafafa}\n"
    "code{background:#f3f3f3;padding:0 .25em;border-radius:3px;font-size:.92em}\n"
    "figure{margin:1em 0}img{max-width:100%;height:auto;border:1px solid #eee}\n"
    "figcaption{color:#555;font-size:.9em}\n";

/* What a page's writer needs, for expt_output_write_atomic. */
typedef struct page_args {
  const expt_output *o;
  const expt_scenario *s;
  const char *dir, *command;
  bool pictures, html;
} page_args;

/* The HTML page's head, up to the opening <main>: title "NAME: retrysim KIND". The policy
 * lets the page load nothing but its own style and data: pictures: a browser refuses (and
 * reports) anything external instead of fetching it. */
static void html_head(FILE *f, const char *name, const char *kind) {
  fputs(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "img-src data:; style-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      f);
  html_text(f, name);
  fprintf(f, ": retrysim %s</title>\n<style>\n", kind);
  fputs(html_style, f);
  fputs("</style>\n</head>\n<body>\n<main>\n", f);
}

/* Ends a page whose body d wrote: closes its list and, in HTML, the page. */
static int page_end(doc *d) {
  doc_end_list(d);
  if (d->html) fputs("</main>\n</body>\n</html>\n", d->f);
  return d->failed ? -1 : 0;
}

static int page_fill(void *ctx, FILE *f) {
  const page_args *p = ctx;
  doc d = {.f = f, .html = p->html, .dir = p->dir};
  if (p->html) html_head(f, expt_scenario_name(p->s), "report");
  report_body(&d, p->o, p->s, p->command, p->pictures);
  return page_end(&d);
}

/* Writes dir/NAME (report.md or report.html, by html) through NAME.tmp.<pid>, renamed whole. */
static int write_page(const expt_output *o, const expt_scenario *s, const char *dir,
                      const char *command, bool pictures, bool html, retry_error *err) {
  char *path = str_printf("%s/%s", dir, html ? "report.html" : "report.md");
  if (path == NULL) {
    expt_output_error(err, RETRY_ENOMEM, dir, "out of memory");
    return RETRY_ENOMEM;
  }
  page_args p = {o, s, dir, command, pictures, html};
  int rc = expt_output_write_atomic(path, page_fill, &p, err);
  free(path);
  return rc;
}

int expt_report_write(const expt_output *o, const expt_scenario *s, const char *dir,
                     const char *command, bool pictures, retry_error *err) {
  int rc = write_page(o, s, dir, command, pictures, false, err);
  if (rc == 0) rc = write_page(o, s, dir, command, pictures, true, err);
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * Studies: replications, sweeps, searches
 * =================================================================== */

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
    snprintf(buf, size, "%.2f [%.2f, %.2f]", num_or_nan(f, "p"), num_or_nan(f, "lo"), num_or_nan(f, "hi"));
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

/* The pictures of a study: script, gnuplot -e setting, file stem, caption. */
typedef struct study_picture {
  const char *script;
  char set[160], stem[64], caption[200];
} study_picture;

/* Fills pics (room for 2 * N_STUDY_METRICS) with the study's pictures; returns how many. A
 * sweep draws each metric of study_metrics it has against the first axis (one panel per value
 * of the others); a two-axis sweep adds the map of P(recovered) (or goodput without a trigger).
 * A study without a sweep has one point: no picture. */
static size_t study_pictures(const json_t *summary, study_picture *pics) {
  size_t n_axes = study_n_axes(summary), n = 0;
  if (n_axes == 0) return 0;
  const char *x = study_axis(summary, 0);
  for (size_t i = 0; i < N_STUDY_METRICS; i++) {
    const study_metric *m = &study_metrics[i];
    if (!study_has(summary, m)) continue;
    study_picture *p = &pics[n++];
    p->script = "sweep";
    snprintf(p->set, sizeof p->set, "metric='%s'", m->name);
    snprintf(p->stem, sizeof p->stem, "sweep-%s", m->stem);
    snprintf(p->caption, sizeof p->caption, "%s against `%s`: the mean of each variant with its %s",
             m->label, x, m->prop ? "Wilson interval" : "confidence interval");
  }
  if (n_axes == 2) {
    const study_metric *m = &study_metrics[3];
    if (!study_has(summary, m)) m = &study_metrics[0];
    if (study_has(summary, m)) {
      study_picture *p = &pics[n++];
      p->script = "heatmap";
      snprintf(p->set, sizeof p->set, "metric='%s'", m->name);
      snprintf(p->stem, sizeof p->stem, "heatmap-%s", m->stem);
      snprintf(p->caption, sizeof p->caption, "%s over `%s` and `%s`, one map per variant",
               m->label, study_axis(summary, 0), study_axis(summary, 1));
    }
  }
  return n;
}

int expt_report_study_plots(const json_t *summary, const char *dir, const char *plots_dir, FILE *log,
                           retry_error *err) {
  study_picture pics[2 * N_STUDY_METRICS];
  size_t n = study_pictures(summary, pics);
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    char title[200];
    snprintf(title, sizeof title, "%s", name != NULL ? name : "study");
    rc = render(plots_dir, pics[i].script, pics[i].set, dir, "points.csv", pics[i].stem, title, log,
                err);
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
static void study_table(doc *d, const json_t *summary) {
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
  doc_table(d, head, align);
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
          snprintf(cells[k++], 128, "%.3g (%g of %g)", m, num_or_nan(r, "n_recovered"), num_or_nan(r, "n"));
        else
          snprintf(cells[k++], 128, "%.3g ± %.2g (%g of %g)", m, h, num_or_nan(r, "n_recovered"),
                   num_or_nan(r, "n"));
      }
      doc_row(d, cells);
    }
  }
  doc_table_end(d);
}

/* With a baseline: each variant's paired difference from it, per metric, on the same seeds;
 * a mark on those whose interval excludes zero. */
static void study_paired(doc *d, const json_t *summary) {
  const json_t *first = NULL;
  size_t np = json_array_size(json_object_get(summary, "points"));
  for (size_t v = 0; first == NULL && v < 64; v++) {
    const json_t *a = study_agg(summary, 0, v);
    if (a == NULL) break;
    if (json_object_get(a, "paired") != NULL) first = a;
  }
  if (first == NULL) return;
  const char *base = json_string_value(at(first, "paired.baseline"));
  doc_h(d, 2, "Against the baseline `%s`", base != NULL ? base : "");
  doc_p(d,
        "Each variant minus `%s` over the same seeds (paired), with its interval; **\\*** marks "
        "a difference whose interval excludes zero. The unpaired (Welch) interval of the same "
        "runs is in summary.json and paired.csv.",
        base != NULL ? base : "");
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
  doc_table(d, head, align);
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
        snprintf(cells[k], 128, "%+.3g [%.3g, %.3g]%s", num_or_nan(e, "mean_diff"), num_or_nan(e, "lo"),
                 num_or_nan(e, "hi"), json_is_true(json_object_get(e, "distinguishable")) ? " \\*" : "");
      }
      doc_row(d, cells);
    }
  }
  doc_table_end(d);
}

/* A study's or a search's first lines: the title, the scenario's description, its page when
 * there is one, and the command that made the files. */
static void study_intro(doc *d, const json_t *summary, const char *title, const char *name,
                        const char *command) {
  doc_h(d, 1, "%s", title);
  const char *desc = json_string_value(at(summary, "document.description"));
  if (desc != NULL) doc_p(d, "%s", desc);
  char page[160];
  snprintf(page, sizeof page, "docs/experiments/%s.md", name != NULL ? name : "");
  if (name != NULL && access(page, R_OK) == 0)
    doc_p(d, "What happens and why, in words: `%s`.", page);
  bool tick = command != NULL && strchr(command, '`') != NULL;
  doc_p(d,
        "Produced by %s%s%s (retrysim %s, scenario SHA-256 `%.12s`). The same command gives the "
        "same files, byte for byte, whatever `-j`.",
        command == NULL || tick ? "" : "`", command != NULL ? command : "retrysim",
        command == NULL || tick ? "" : "`", json_string_value(json_object_get(summary, "version")),
        json_string_value(json_object_get(summary, "scenario_sha256")));
}

static void study_body(doc *d, const json_t *summary, const char *command, bool pictures) {
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  const json_t *st = json_object_get(summary, "study");
  study_intro(d, summary, name != NULL ? name : "study", name, command);
  doc_h(d, 2, "The study");
  size_t nv = json_array_size(
      json_object_get(json_array_get(json_object_get(summary, "points"), 0), "variants"));
  doc_li(d, "%g runs: %g point%s x %zu variant%s x %g replication%s", num_or_nan(st, "n_runs"),
         num_or_nan(st, "n_points"), num_or_nan(st, "n_points") == 1 ? "" : "s", nv, nv == 1 ? "" : "s",
         num_or_nan(st, "replications"), num_or_nan(st, "replications") == 1 ? "" : "s");
  doc_li(d,
         "every variant and every point on the same seeds (common random numbers); intervals "
         "at %g %% (Student t for numbers, Wilson for proportions)",
         num_or_nan(st, "confidence") * 100);
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
    doc_li(d, "axis `%s`: %s", study_axis(summary, a), list);
  }
  doc_h(d, 2, "Results");
  doc_p(d,
        "Means over the replications with the half-width of their interval; P(recovered) and "
        "P(storm) (the share that never recovered after the trigger) with their Wilson "
        "interval. The recovery time's median counts the replications that never recovered "
        "(censored), its mean is over those that did.");
  study_table(d, summary);
  study_paired(d, summary);
  if (pictures) {
    study_picture pics[2 * N_STUDY_METRICS];
    size_t n = study_pictures(summary, pics);
    if (n > 0) doc_h(d, 2, "Pictures");
    for (size_t i = 0; i < n; i++) {
      char file[80];
      snprintf(file, sizeof file, "%s.svg", pics[i].stem);
      doc_img(d, file, pics[i].caption);
    }
  }
}

/* The body of a study's or a search's page. */
typedef void (*study_body_fn)(doc *d, const json_t *summary, const char *command, bool pictures);

typedef struct study_page_args {
  const json_t *summary;
  const char *dir, *command;
  bool pictures, html;
  const char *kind; /* "study" or "search": the page's title and the name when none */
  study_body_fn body;
} study_page_args;

static int study_page_fill(void *ctx, FILE *f) {
  const study_page_args *p = ctx;
  doc d = {.f = f, .html = p->html, .dir = p->dir};
  const char *name = json_string_value(json_object_get(p->summary, "scenario"));
  if (p->html) {
    char kind[32];
    snprintf(kind, sizeof kind, "%s report", p->kind);
    html_head(f, name != NULL ? name : p->kind, kind);
  }
  p->body(&d, p->summary, p->command, p->pictures);
  return page_end(&d);
}

/* Writes report.md and report.html of a study or a search into dir, each whole or not at all. */
static int study_pages_write(const json_t *summary, const char *dir, const char *command,
                             bool pictures, const char *kind, study_body_fn body,
                             retry_error *err) {
  int rc = 0;
  for (int html = 0; html <= 1 && rc == 0; html++) {
    char *path = str_printf("%s/%s", dir, html ? "report.html" : "report.md");
    if (path == NULL) {
      expt_output_error(err, RETRY_ENOMEM, dir, "out of memory");
      return RETRY_ENOMEM;
    }
    study_page_args p = {summary, dir, command, pictures, html != 0, kind, body};
    rc = expt_output_write_atomic(path, study_page_fill, &p, err);
    free(path);
  }
  return rc;
}

int expt_report_study_write(const json_t *summary, const char *dir, const char *command,
                           bool pictures, retry_error *err) {
  return study_pages_write(summary, dir, command, pictures, "study", study_body, err);
}

/* }================================================================== */

/* {==================================================================
 * Searches: the tipping point of each variant
 * =================================================================== */

int expt_report_search_plots(const json_t *summary, const char *dir, const char *plots_dir,
                            FILE *log, retry_error *err) {
  const json_t *first = json_array_get(json_object_get(summary, "search"), 0);
  if (first == NULL) return 0;
  char set[64], title[200];
  snprintf(set, sizeof set, "p=%.10g", num_or_nan(first, "p"));
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  snprintf(title, sizeof title, "%s", name != NULL ? name : "search");
  return render(plots_dir, "search", set, dir, "search.csv", "search", title, log, err);
}

/* A probed value as the search wrote it ("376/s"), "-" for none. */
static void probe_value(const json_t *v, char *buf, size_t size) {
  if (v == NULL || json_is_null(v))
    snprintf(buf, size, "-");
  else
    value_text(v, buf, size);
}

static void search_body(doc *d, const json_t *summary, const char *command, bool pictures) {
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  const json_t *search = json_object_get(summary, "search");
  const json_t *first = json_array_get(search, 0);
  study_intro(d, summary, name != NULL ? name : "search", name, command);
  doc_h(d, 2, "The search");
  doc_p(d,
        "For each variant, the highest value of `%s` at which P(`%s`) stays at least %g, by "
        "bisection. A probe passes when the lower end of its Wilson interval (%g %%) is at least "
        "%g, fails when the upper end is below it; otherwise it runs more replications, and "
        "when it has run them all it is decided by the share alone (*undecided*). %zu runs in "
        "all.",
        json_string_value(json_object_get(first, "path")),
        json_string_value(json_object_get(first, "metric")), num_or_nan(first, "p"),
        num_or_nan(first, "confidence") * 100, num_or_nan(first, "p"),
        json_array_size(json_object_get(summary, "runs")));
  static const char *const head[] = {"variant", "survives up to", "fails from",
                                     "outcome", "probes",         "replications"};
  doc_table(d, head, "lrrlrr");
  for (size_t v = 0; v < json_array_size(search); v++) {
    const json_t *s = json_array_get(search, v);
    const json_t *probes = json_object_get(s, "probes");
    char cells[16][128];
    snprintf(cells[0], 128, "%s", json_string_value(json_object_get(s, "variant")));
    probe_value(at(s, "boundary.pass"), cells[1], 128);
    probe_value(at(s, "boundary.fail"), cells[2], 128);
    const char *oc = json_string_value(json_object_get(s, "outcome"));
    snprintf(cells[3], 128, "%s",
             oc == NULL                      ? "-"
             : strcmp(oc, "bracketed") == 0  ? "bracketed"
             : strcmp(oc, "from_fails") == 0 ? "below the range: `from` fails"
             : strcmp(oc, "to_passes") == 0  ? "above the range: `to` passes"
                                             : oc);
    double reps = 0;
    for (size_t i = 0; i < json_array_size(probes); i++)
      reps += num_or_nan(json_array_get(probes, i), "n");
    snprintf(cells[4], 128, "%zu", json_array_size(probes));
    snprintf(cells[5], 128, "%g", reps);
    doc_row(d, cells);
  }
  doc_table_end(d);
  if (pictures) {
    doc_img(d, "search.svg",
            "Every probe: the share of its replications with the metric true, its Wilson "
            "interval, filled when it passed; the dashed line is p");
  }
  doc_h(d, 2, "Every probe");
  for (size_t v = 0; v < json_array_size(search); v++) {
    const json_t *s = json_array_get(search, v);
    doc_h(d, 3, "%s", json_string_value(json_object_get(s, "variant")));
    static const char *const ph[] = {"value", "n", "k", "P", "Wilson interval", "verdict"};
    doc_table(d, ph, "rrrrrl");
    const json_t *probes = json_object_get(s, "probes");
    for (size_t i = 0; i < json_array_size(probes); i++) {
      const json_t *pr = json_array_get(probes, i);
      char cells[16][128];
      probe_value(json_object_get(pr, "value"), cells[0], 128);
      snprintf(cells[1], 128, "%g", num_or_nan(pr, "n"));
      snprintf(cells[2], 128, "%g", num_or_nan(pr, "k"));
      snprintf(cells[3], 128, "%.3f", num_or_nan(pr, "p"));
      snprintf(cells[4], 128, "[%.3f, %.3f]", num_or_nan(pr, "lo"), num_or_nan(pr, "hi"));
      const char *verdict = json_string_value(json_object_get(pr, "verdict"));
      snprintf(cells[5], 128, "%s%s", verdict != NULL ? verdict : "-",
               json_is_true(json_object_get(pr, "undecided")) ? " (undecided: by k/n)" : "");
      doc_row(d, cells);
    }
    doc_table_end(d);
  }
}

int expt_report_search_write(const json_t *summary, const char *dir, const char *command,
                            bool pictures, retry_error *err) {
  return study_pages_write(summary, dir, command, pictures, "search", search_body, err);
}

/* }================================================================== */
