/*
 * expt_plot.h: the pictures' plotter: a gnuplot script of plots/ run as a separate process on
 * CSV files the program already wrote, its SVG renamed into place whole. The reports
 * (expt_report.h) choose the pictures; this only draws one.
 */
#ifndef EXPT_PLOT_H
#define EXPT_PLOT_H

#include <stdio.h>

#include "retry/retry.h"

/* Where the gnuplot scripts are: $RETRYSIM_PLOTS when set and not empty, else the plots/
 * directory of the source tree the binary was built from (RETRYSIM_PLOTS_DIR, set by the
 * Makefile for this file), else "plots" in the current directory. Borrowed. */
const char *expt_plot_dir(void);

/* Renders dir/stem.svg from dir/data_name with the script plots_dir/script.gp: `gnuplot [-e
 * set] -c SCRIPT DATA OUT title` (set: NULL or a gnuplot command run first, e.g.
 * "edge='a->b'"), drawn as stem.tmp.<pid>.svg (the script picks its terminal from the
 * extension; the file is removed on SIGINT or SIGTERM) and renamed. gnuplot's messages, and its
 * stdout, go to log. Returns 0, or RETRY_EIO with err naming the script and why (gnuplot
 * missing, a script that failed, a script that cannot be read), RETRY_ENOMEM. */
int expt_plot_render(const char *plots_dir, const char *script, const char *set, const char *dir,
                     const char *data_name, const char *stem, const char *title, FILE *log,
                     retry_error *err);

#endif /* EXPT_PLOT_H */
