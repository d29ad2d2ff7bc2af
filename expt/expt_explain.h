/*
 * expt_explain.h: the engine's decisions for one call. Runs one run of a scenario with the
 * world's trace hook on, picks one logical call (by id, by its stop reason, by its start time)
 * and prints the engine's decisions for it and for every call made below its attempts, layer
 * by layer, as text or JSON. Deterministic: the same scenario, run and seed print the same
 * bytes. The command line of `retrysim explain` is read by cli/cmd_explain.c.
 */
#ifndef EXPT_EXPLAIN_H
#define EXPT_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "expt/expt_scenario.h"
#include "retry/retry.h"

/* What to explain. Every pointer is borrowed for the call of expt_explain_run. The call is
 * picked by call_id alone, or by stopped and/or has_after together: "the first call on the
 * edge started at or after after_ns that stopped with stopped". */
typedef struct expt_explain_opts {
  const char *scenario;  /* the scenario file */
  const expt_set *sets;  /* overrides applied in order before validation (--set, --duration) */
  size_t n_sets;         /* entries of sets */
  const char *variant;   /* the run to explain, by its name; NULL: the first run */
  bool has_seed;         /* seed replaces the run's own seed */
  uint64_t seed;         /* the seed when has_seed */
  bool json;             /* JSON instead of the text timeline */
  uint64_t call_id;      /* pick the call with this id (1 ..); 0: pick by the others */
  retry_stop stopped;    /* pick the first call that stopped with this reason; NONE: any */
  bool has_after;        /* pick among the calls started at or after after_ns */
  int64_t after_ns;      /* with has_after: the earliest start, in ns of simulated time */
  const char *after;     /* with has_after: after_ns as written ("30s"), for the words */
  const char *edge;      /* pick among the calls of this edge, as written ("web->api");
                            NULL: among the calls clients start. Not with call_id */
  const char *edge_from; /* with edge: its caller's name, blanks trimmed */
  const char *edge_to;   /* with edge: its callee's name, blanks trimmed */
} expt_explain_opts;

/* Loads and validates o->scenario, runs its run with the trace sink (twice with the same seed
 * for stopped: the first run finds the call, the second keeps its records) and prints the
 * explanation to out; errors go to err, one "retrysim: " line each. Returns the process exit
 * status: 0, EXPT_EXIT_USAGE (a bad scenario or variant, no selector, or no call matches) or
 * EXPT_EXIT_RUNTIME (out of memory, a failed run). */
int expt_explain_run(const expt_explain_opts *o, FILE *out, FILE *err);

#endif /* EXPT_EXPLAIN_H */
