/*
 * expt_progress.h: the progress line of a study, a sweep or a search on stderr: runs done of
 * the total, the time elapsed and an estimate of what is left. On a terminal it is redrawn in
 * place; otherwise (a log file, a pipe, a batch system) a whole line is written every few
 * seconds. It reads the wall clock and nothing it prints reaches any output file.
 */
#ifndef EXPT_PROGRESS_H
#define EXPT_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct expt_progress {
  FILE *f;          /* where to print; NULL: off (--quiet) */
  bool tty;         /* f is a terminal: redraw in place */
  bool at_most;     /* total is an upper bound (a search stops early), not a count */
  double start_s;   /* wall time at init (monotonic clock) */
  double last_s;    /* wall time of the last line, < 0 before the first */
  double every_s;   /* seconds between lines on a terminal or not */
  int width;        /* characters on the terminal's line now, to blank it */
  size_t done;      /* runs finished */
  size_t total;     /* runs in all (or at most, with at_most) */
} expt_progress;

/* Starts the line on f for total runs (quiet: off). Lines begin after a second on a terminal
 * (then 4 a second), after every_s seconds elsewhere: 5 s, or $RETRYSIM_PROGRESS_S when it is a
 * number from 0.05 to 3600 (for tests and for logs that want more or fewer lines). */
void expt_progress_init(expt_progress *p, FILE *f, bool quiet, size_t total, bool at_most);

/* The runs finished so far (done of p->total); prints a line when one is due. p may be NULL. */
void expt_progress_show(expt_progress *p, size_t done);

/* Blanks the terminal's line, if one is drawn, so that what follows starts on a clean line.
 * A no-op off a terminal. p may be NULL. */
void expt_progress_clear(expt_progress *p);

#endif /* EXPT_PROGRESS_H */
