/*
 * expt_page.h: the page writer of the reports: one page, two formats (report.md and a
 * self-contained report.html), written block by block by the same code. Text is Markdown's
 * inline subset; in HTML it is escaped and its marks become elements. A picture is linked in
 * Markdown and inlined as a base64 data: URI in HTML.
 */
#ifndef EXPT_PAGE_H
#define EXPT_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "retry/retry.h"

/* report.md and report.html are written by the same code: each block (heading, paragraph,
 * list item, table, picture) goes through an expt_page, which writes Markdown or HTML. Text is
 * Markdown's inline subset: `code`, **strong**, *emphasis* and backslash escapes; in HTML it is
 * escaped and those marks become elements (expt_page_inline). */
typedef struct expt_page {
  FILE *f;
  bool html;
  const char *dir; /* the pictures are read from here for HTML */
  bool in_list;    /* a list is open */
  bool right[16];  /* the open table's right-aligned columns */
  size_t n_cols;   /* columns of the open table */
  bool failed;     /* a picture could not be read: the page is not put in place */
} expt_page;

/* Writes the Markdown text s: as it is for Markdown; for HTML escaped, with `code`, **strong**
 * and *emphasis* as elements that always nest and close (expt_page.c). */
void expt_page_inline(const expt_page *d, const char *s);
/* Ends an open list (every block but a list item does it first). */
void expt_page_end_list(expt_page *d);
/* A heading of level 1 to 3, a paragraph, an item of a bulleted list (the list opens with its
 * first item and ends with the next block): printf formats of Markdown text. A block that
 * cannot be formatted (out of memory) is left out; the writer checks the stream's state. */
void expt_page_h(expt_page *d, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void expt_page_p(expt_page *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void expt_page_li(expt_page *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Opens a table: its header cells (Markdown text) and their alignment ('l' or 'r' each; at
 * most 16 columns). */
void expt_page_table(expt_page *d, const char *const *head, const char *align);
/* One row of the open table: as many cells of Markdown text as it has columns. */
void expt_page_row(expt_page *d, char cells[][128]);
void expt_page_table_end(expt_page *d);
/* A picture (file, in the page's directory) with its caption; a picture that cannot be read
 * marks the page failed. */
void expt_page_img(expt_page *d, const char *file, const char *caption);

/* Writes the body of a page onto page; ctx is the caller's. */
typedef void (*expt_page_body_fn)(expt_page *page, void *ctx);

/* Writes dir/report.md, then dir/report.html (titled "TITLE: retrysim KIND"), each through
 * NAME.tmp.<pid> renamed whole, body writing both. Returns 0, RETRY_EIO (a file that cannot be
 * written, a picture that cannot be read) or RETRY_ENOMEM with err filled; stops at the first
 * failure. */
int expt_page_write_pair(const char *dir, const char *title, const char *kind,
                         expt_page_body_fn body, void *ctx, retry_error *err);

#endif /* EXPT_PAGE_H */
