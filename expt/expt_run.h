/*
 * expt_run.h: the run driver of `retrysim run`: runs every run (variant) of a loaded scenario on
 * its own kernel and world, then writes the output files, prints the summary and checks the
 * expectations. Owns nothing between calls; the scenario stays the caller's.
 */
#ifndef EXPT_RUN_H
#define EXPT_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "expt/expt_error.h"
#include "expt/expt_scenario.h"
#include "retry/retry.h"

/* The exit statuses (EXPT_EXIT_*) and the one way an error is printed are expt_error.h's. */

typedef enum expt_format {
  EXPT_FORMAT_TEXT = 0, /* the text summary on stdout */
  EXPT_FORMAT_JSON      /* the summary document (summary.json) on stdout */
} expt_format;

typedef struct expt_run_opts {
  const char *out_dir; /* write summary.json and the CSV files here; NULL: no files */
  expt_format format;   /* what goes to out */
  bool check;          /* check the scenario's expectations, exit EXPT_EXIT_CHECK on a failure */
  const char *junit;   /* with check: also write the results as JUnit XML here; NULL: none */
  bool quiet;          /* no text summary and no progress line */
  bool edges;          /* text summary: add the table of every edge (expt_output_print_edges) */
  bool plot;           /* with out_dir: render the pictures and write report.md (expt_report.h) */
  const char *command; /* the command line, quoted in report.md; NULL: none */
  const char *const *plot_metrics; /* --plot-metric: a sweep's extra pictures, by metric name */
  size_t n_plot_metrics;           /* entries of plot_metrics */
  bool has_seed;       /* seed replaces every run's scenario seed */
  uint64_t seed;
  FILE *out; /* the summary (stdout) */
  FILE *err; /* errors, expectation reports and progress (stderr) */
} expt_run_opts;

/* Runs every run of s in order with opts; out and err must not be NULL. The progress line is
 * shown only when err is a terminal, opts->quiet is false and the runs have lasted more than one
 * second of wall time. Files are written only when every run succeeded. Returns the process
 * exit status: EXPT_EXIT_OK, EXPT_EXIT_CHECK, EXPT_EXIT_USAGE (an expectation is malformed; checked
 * before anything runs) or EXPT_EXIT_RUNTIME, with a "retrysim: " line on err for every error. */
int expt_run_scenario(const expt_scenario *s, const expt_run_opts *opts);

/* Checks what the loader leaves to the runner: the shape of every run's expectations. source
 * names the scenario file in err. Returns 0, or RETRY_ECONFIG with err (may be NULL) filled. */
int expt_run_validate(const expt_scenario *s, const char *source, retry_error *err);

/* Returns the exit status for a RETRY_* error code of loading or validating a scenario:
 * EXPT_EXIT_RUNTIME for out of memory, EXPT_EXIT_USAGE for the rest (a missing file is bad input). */
int expt_run_exit_status(int code);

#endif /* EXPT_RUN_H */
