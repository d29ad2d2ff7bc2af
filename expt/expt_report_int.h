/*
 * expt_report_int.h: what the three report files share (expt_report_run.c, a run's page and
 * pictures; expt_report_study.c, a study's; expt_report_search.c, a search's): reading the
 * summary's figures, and the first lines and the writer of a study's or a search's pages.
 */
#ifndef EXPT_REPORT_INT_H
#define EXPT_REPORT_INT_H

#include <math.h>
#include <stdbool.h>

#include <jansson.h>

#include "expt/expt_json.h"
#include "expt/expt_page.h"
#include "expt/expt_plot.h"
#include "expt/expt_report.h"

/* A member of a run object or a summary by a dotted path ("latency_ms.p99"). Borrowed. */
static inline const json_t *at(const json_t *o, const char *path) { return expt_json_at(o, path); }

/* A number at path, NaN when absent or null: a figure that is not there is not drawn (the
 * text table's missing figure is 0 instead: expt_output_text.c's num_or_zero). */
static inline double num_or_nan(const json_t *o, const char *path) {
  return expt_json_number_or(expt_json_at(o, path), NAN);
}

/* The body of a study's or a search's page. */
typedef void (*expt__report_summary_body)(expt_page *d, const json_t *summary, const char *command,
                                          bool pictures);

/* A study's or a search's first lines: the title, the scenario's description, its page when
 * there is one, and the command that made the files. */
void expt__report_summary_intro(expt_page *d, const json_t *summary, const char *title,
                                const char *name, const char *command);

/* Writes report.md and report.html of a study or a search (kind: "study" or "search", the
 * page's title when the summary names no scenario) into dir, each whole or not at all. Returns
 * as expt_report_write. */
int expt__report_summary_pages(const json_t *summary, const char *dir, const char *command,
                               bool pictures, const char *kind, expt__report_summary_body body,
                               retry_error *err);

#endif /* EXPT_REPORT_INT_H */
