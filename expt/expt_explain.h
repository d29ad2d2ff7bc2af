/*
 * expt_explain.h: `retrysim explain`: runs one run of a scenario with the world's trace hook
 * on, picks one logical call (by id, by its stop reason, by its start time) and prints the
 * engine's decisions for it and for every call made below its attempts, layer by layer, as
 * text or JSON. Deterministic: the same scenario, run and seed print the same bytes.
 */
#ifndef EXPT_EXPLAIN_H
#define EXPT_EXPLAIN_H

#include <stdio.h>

/* Runs `retrysim explain` with the whole command line (argv[1] is "explain"); the timeline
 * goes to out, errors (one "retrysim: " line each) to err. Returns the process exit status:
 * 0, EXPT_EXIT_USAGE (bad command line or scenario, or no call matches the selector) or
 * EXPT_EXIT_RUNTIME (out of memory, a failed run). */
int expt_explain_main(int argc, char **argv, FILE *out, FILE *err);

#endif /* EXPT_EXPLAIN_H */
