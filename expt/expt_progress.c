/*
 * expt_progress.c: the progress line of the runs of a study, a sweep or a search. The only
 * clock it reads is monotonic, so a clock step never floods or hides the line; its value never
 * reaches a run, whose results depend on the scenario and the seed alone.
 */
#include "expt/expt_progress.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double wall_s(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* $RETRYSIM_PROGRESS_S when it is a plain number in range, else 5 s: often enough to tell a
 * stuck job from a slow one in a log, rarely enough not to fill it. */
static double interval_s(void) {
  const char *env = getenv("RETRYSIM_PROGRESS_S");
  if (env == NULL || env[0] == '\0') return 5.0;
  char *end;
  double v = strtod(env, &end);
  if (*end != '\0' || !(v >= 0.05 && v <= 3600)) return 5.0;
  return v;
}

void expt_progress_init(expt_progress *p, FILE *f, bool quiet, size_t total, bool at_most) {
  *p = (expt_progress){.f = quiet ? NULL : f, .total = total, .at_most = at_most, .last_s = -1};
  if (p->f == NULL) return;
  p->tty = isatty(fileno(f)) != 0;
  p->every_s = p->tty ? 0.25 : interval_s();
  p->start_s = wall_s();
}

/* "12 of 48 runs, 3.1 s elapsed, about 9.3 s left": the estimate assumes the runs left take
 * as long as those done; a search's total is its budget, which it may not use up. */
static int print_line(const expt_progress *p, double el) {
  double left = p->done > 0 && p->total > p->done
                    ? el * (double)(p->total - p->done) / (double)p->done
                    : 0;
  const char *bound = p->at_most ? "at most " : "";
  if (p->done == 0)
    return fprintf(p->f, "retrysim: 0 of %s%zu runs, %.1f s elapsed", bound, p->total, el);
  return fprintf(p->f, "retrysim: %zu of %s%zu runs, %.1f s elapsed, %s %.1f s left", p->done,
                 bound, p->total, el, p->at_most ? "at most" : "about", left);
}

void expt_progress_show(expt_progress *p, size_t done) {
  if (p == NULL) return;
  p->done = done;
  if (p->f == NULL) return;
  double el = wall_s() - p->start_s;
  /* A terminal stays silent for the first second (short studies draw nothing); a log gets
   * its first line after one interval. */
  double first = p->tty ? 1.0 : p->every_s;
  if (el <= first || (p->last_s >= 0 && el - p->last_s < p->every_s)) return;
  p->last_s = el;
  if (p->tty) {
    fputc('\r', p->f);
    int w = print_line(p, el);
    /* Blank what is left of a longer previous line. */
    if (w > 0 && w < p->width) fprintf(p->f, "%*s", p->width - w, "");
    if (w > p->width) p->width = w;
  } else {
    print_line(p, el);
    fputc('\n', p->f);
  }
  fflush(p->f);
}

void expt_progress_clear(expt_progress *p) {
  if (p == NULL || p->f == NULL || !p->tty || p->width <= 0) return;
  fprintf(p->f, "\r%*s\r", p->width, "");
  fflush(p->f);
  p->width = 0;
}
