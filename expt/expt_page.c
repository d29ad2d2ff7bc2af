/*
 * expt_page.c: one page, two formats: report.md and report.html are written by the same code,
 * each block (heading, paragraph, list item, table, picture) going through an expt_page, which
 * writes Markdown or HTML5 with the pictures inlined as base64 data: URIs. Invariant: any text
 * gives well-formed HTML, and a page whose picture cannot be read is not put in place.
 */
#include "expt/expt_page.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_output.h"

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
void expt_page_inline(const expt_page *d, const char *s) {
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
 * is then left out; expt_output_write_atomic checks the stream's error state, not each block). */
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
void expt_page_end_list(expt_page *d) {
  if (!d->in_list) return;
  fputs(d->html ? "</ul>\n" : "\n", d->f);
  d->in_list = false;
}

/* A heading of level 1 to 3. */
void expt_page_h(expt_page *d, int level, const char *fmt, ...) {
  expt_page_end_list(d);
  va_list ap;
  va_start(ap, fmt);
  char *s = vfmt(fmt, ap);
  va_end(ap);
  if (s == NULL) return;
  if (d->html) {
    fprintf(d->f, "<h%d>", level);
    expt_page_inline(d, s);
    fprintf(d->f, "</h%d>\n", level);
  } else {
    fprintf(d->f, "%.*s %s\n\n", level, "###", s);
  }
  free(s);
}

/* A paragraph. */
void expt_page_p(expt_page *d, const char *fmt, ...) {
  expt_page_end_list(d);
  va_list ap;
  va_start(ap, fmt);
  char *s = vfmt(fmt, ap);
  va_end(ap);
  if (s == NULL) return;
  fputs(d->html ? "<p>" : "", d->f);
  expt_page_inline(d, s);
  fputs(d->html ? "</p>\n" : "\n\n", d->f);
  free(s);
}

/* An item of a bulleted list, which opens with the first item and ends with the next block. */
void expt_page_li(expt_page *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vfmt(fmt, ap);
  va_end(ap);
  if (s == NULL) return;
  if (d->html && !d->in_list) fputs("<ul>\n", d->f);
  d->in_list = true;
  fputs(d->html ? "<li>" : "- ", d->f);
  expt_page_inline(d, s);
  fputs(d->html ? "</li>\n" : "\n", d->f);
  free(s);
}

/* Opens a table: its header cells (Markdown text) and their alignment ('l' or 'r' each). */
void expt_page_table(expt_page *d, const char *const *head, const char *align) {
  expt_page_end_list(d);
  d->n_cols = strlen(align);
  assert(d->n_cols <= sizeof d->right / sizeof d->right[0]);
  fputs(d->html ? "<table>\n<thead><tr>" : "|", d->f);
  for (size_t c = 0; c < d->n_cols; c++) {
    d->right[c] = align[c] == 'r';
    if (d->html) {
      fputs(d->right[c] ? "<th class=\"r\">" : "<th>", d->f);
      expt_page_inline(d, head[c]);
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
void expt_page_row(expt_page *d, char cells[][128]) {
  fputs(d->html ? "<tr>" : "|", d->f);
  for (size_t c = 0; c < d->n_cols; c++) {
    if (d->html) {
      fputs(d->right[c] ? "<td class=\"r\">" : "<td>", d->f);
      expt_page_inline(d, cells[c]);
      fputs("</td>", d->f);
    } else {
      fprintf(d->f, " %s |", cells[c]);
    }
  }
  fputs(d->html ? "</tr>\n" : "\n", d->f);
}

void expt_page_table_end(expt_page *d) { fputs(d->html ? "</tbody>\n</table>\n" : "\n", d->f); }

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
void expt_page_img(expt_page *d, const char *file, const char *caption) {
  expt_page_end_list(d);
  if (!d->html) {
    fprintf(d->f, "![%s](%s)\n\n", caption, file);
    return;
  }
  char *path = expt_output_printf("%s/%s", d->dir, file);
  if (path == NULL) return;
  fputs("<figure><img src=\"data:image/svg+xml;base64,", d->f);
  int rc = base64_file(d->f, path);
  fputs("\" alt=\"", d->f);
  html_text(d->f, caption);
  fputs("\"><figcaption>", d->f);
  expt_page_inline(d, caption);
  fputs("</figcaption></figure>\n", d->f);
  /* A picture that cannot be read would leave a broken image: the page is then not put in
   * place. */
  if (rc != 0) d->failed = true;
  free(path);
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
static int page_end(expt_page *d) {
  expt_page_end_list(d);
  if (d->html) fputs("</main>\n</body>\n</html>\n", d->f);
  return d->failed ? -1 : 0;
}

/* What the writer of one of the two files needs, for expt_output_write_atomic. */
typedef struct pair_args {
  const char *title, *kind, *dir;
  expt_page_body_fn body;
  void *ctx;
  bool html;
} pair_args;

static int pair_fill(void *ctx, FILE *f) {
  const pair_args *p = ctx;
  expt_page d = {.f = f, .html = p->html, .dir = p->dir};
  if (p->html) html_head(f, p->title, p->kind);
  p->body(&d, p->ctx);
  return page_end(&d);
}

int expt_page_write_pair(const char *dir, const char *title, const char *kind,
                         expt_page_body_fn body, void *ctx, retry_error *err) {
  int rc = 0;
  for (int html = 0; html <= 1 && rc == 0; html++) {
    char *path = expt_output_printf("%s/%s", dir, html ? "report.html" : "report.md");
    if (path == NULL) {
      expt_output_error(err, RETRY_ENOMEM, dir, "out of memory");
      return RETRY_ENOMEM;
    }
    pair_args p = {title, kind, dir, body, ctx, html != 0};
    rc = expt_output_write_atomic(path, pair_fill, &p, err);
    free(path);
  }
  return rc;
}
