/*
 * expt_report.h: what --plot adds to the files of --out DIR, for a run, a study and a search:
 * the gnuplot pictures of plots/ rendered from the CSV files (expt_plot.h), and report.md with
 * report.html, the same page a person can read to understand the results (for a run: the
 * comparison table, every edge, a few sentences per variant, the pictures; expt_page.h writes
 * both formats): Markdown that links the pictures, and one self-contained HTML5 file with the
 * pictures inlined. expt_report_run.c, expt_report_study.c and expt_report_search.c hold the
 * three kinds of pages.
 * Invariant: like the other output files, every picture and the report are written under a
 * temporary name and renamed into place whole; equal runs give byte-identical files.
 */
#ifndef EXPT_REPORT_H
#define EXPT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "retry/retry.h"
#include "expt/expt_output.h"
#include "expt/expt_scenario.h"

/* Renders the pictures of the run whose files expt_output_write_dir already wrote into dir:
 * timeseries.svg (one run) or timeseries-VARIANT.svg per variant, compare.svg and variants.svg
 * (with variants), edge-FROM-TO.svg for the worst internal edge (the worst edge of
 * expt_output_worst_edge of the run where it has the most attempts per call; none without an
 * internal edge), latency-cdf.svg. Each is `gnuplot -c SCRIPT DATA OUT TITLE` with the script
 * from plots_dir; gnuplot's messages go to log (its stdout too, so that a summary on stdout
 * stays clean). Returns 0, or RETRY_EIO with err naming the script and why (gnuplot missing,
 * a script that failed), RETRY_ENOMEM. Pictures already rendered are kept on a failure. */
int expt_report_plots(const expt_output *o, const expt_scenario *s, const char *dir,
                      const char *plots_dir, FILE *log, retry_error *err);

/* Writes dir/report.md, then dir/report.html, for the run: title, description, the command that
 * produced it (command, may be NULL), "In short" (with variants), the comparison table, every
 * edge, the load of every service, a paragraph per variant and, when pictures is true, the
 * pictures expt_report_plots rendered (linked in report.md, inlined as data: URIs in
 * report.html, which then needs no other file). Returns 0, RETRY_EIO (a file that cannot be
 * written, a picture that cannot be read) or RETRY_ENOMEM with err filled. */
int expt_report_write(const expt_output *o, const expt_scenario *s, const char *dir,
                      const char *command, bool pictures, retry_error *err);

/* The most --plot-metric pictures of a study. */
#define EXPT_REPORT_MAX_PLOT_METRICS 16

/* The pictures of a study (`retrysim run` with replications, a sweep or a search, --plot)
 * whose points.csv is already in dir; summary is its summary.json. With a sweep: sweep-goodput,
 * sweep-attempts, sweep-p99 and sweep-recovered.svg (plots/sweep.gp: the metric against the
 * first axis, one line per variant with interval bars), those of the metrics the aggregates
 * have; with exactly two axes also heatmap-recovered.svg (plots/heatmap.gp; heatmap-goodput.svg
 * without a trigger); then each of metrics[0..n_metrics) (--plot-metric, at most
 * EXPT_REPORT_MAX_PLOT_METRICS) against the first axis, as sweep-metric-NAME.svg. The axes are
 * named by their "label", else by their path made readable ("web: arrival rate"). No sweep:
 * study-spread.svg, study-recovered.svg and study-paired.svg (plots/study.gp), those the files
 * allow. Returns as expt_report_plots, or RETRY_EINVAL when a metric is not in points.csv or
 * there is no sweep to draw it against. */
int expt_report_study_plots(const json_t *summary, const char *dir, const char *plots_dir,
                            const char *const *metrics, size_t n_metrics, FILE *log,
                            retry_error *err);

/* Writes dir/report.md and dir/report.html for a study from its summary.json: title,
 * description, the command, the study (runs, seeds, level, axes), the table of every (point,
 * variant) with means ± half-widths, P(recovered) and P(storm) with their Wilson intervals and
 * the censored recovery time, the paired differences against the baseline (marked when
 * distinguishable), and with pictures those of expt_report_study_plots. Returns as
 * expt_report_write. */
int expt_report_study_write(const json_t *summary, const char *dir, const char *command,
                            bool pictures, const char *const *metrics, size_t n_metrics,
                            retry_error *err);

/* The picture of a search whose search.csv is in dir: search.svg (plots/search.gp: every probe's
 * share with its Wilson interval, per variant, and the level p). Returns as expt_report_plots. */
int expt_report_search_plots(const json_t *summary, const char *dir, const char *plots_dir,
                             FILE *log, retry_error *err);

/* Writes dir/report.md and dir/report.html for a search from its summary.json: the command,
 * the rule of the search, a table of each variant's boundary (the highest passing and the
 * lowest failing value, the outcome, the probes and replications it took), the picture when
 * pictures is true, and every probe (value, n, k, P, Wilson interval, verdict). Returns as
 * expt_report_write. */
int expt_report_search_write(const json_t *summary, const char *dir, const char *command,
                             bool pictures, retry_error *err);

#endif /* EXPT_REPORT_H */
