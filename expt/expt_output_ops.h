/*
 * expt_output_ops.h: the operators' and herds' part of a run's summary (summary.json's
 * "operators" and "herds", present only when the scenario has operators or events) and its
 * lines in the text summary.
 */
#ifndef EXPT_OUTPUT_OPS_H
#define EXPT_OUTPUT_OPS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "models/model_stats.h"

/* Puts "operators" (and "herds", when some population restarts or pauses) into the run
 * object o, when r has operators; nothing otherwise. Clears *ok when out of memory. */
void expt_output_ops_put(json_t *o, const model_results *r, bool *ok);

/* Prints the operators' firings and the herds' counters of run object run to f, when it has
 * them (one line each); nothing otherwise. */
void expt_output_ops_text(const json_t *run, FILE *f);

/* Writes into buf the gnuplot assignment plots/timeseries.gp reads for its marks,
 * "marks='T1 T2 ...'" (the times, in s, every operator and event of run object run fired, at
 * most 64, in the order listed); returns false (buf "") when none fired. */
bool expt_output_ops_marks(const json_t *run, char *buf, size_t size);

#endif /* EXPT_OUTPUT_OPS_H */
