/*
 * expt_output_ops.h: the operators' and herds' lines in the text summary and the marks of the
 * run pictures. Their part of summary.json (expt_output_ops_put) is declared in expt_output.h,
 * whose run object calls it, so that the two modules do not include each other.
 */
#ifndef EXPT_OUTPUT_OPS_H
#define EXPT_OUTPUT_OPS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "models/model_stats.h"

/* Prints the operators' firings and the herds' counters of run object run to f, when it has
 * them (one line each); nothing otherwise. */
void expt_output_ops_text(const json_t *run, FILE *f);

/* Writes into buf the gnuplot assignment plots/timeseries.gp reads for its marks,
 * "marks='T1 T2 ...'" (the times, in s, every operator and event of run object run fired, at
 * most 64, in the order listed); returns false (buf "") when none fired. */
bool expt_output_ops_marks(const json_t *run, char *buf, size_t size);

#endif /* EXPT_OUTPUT_OPS_H */
