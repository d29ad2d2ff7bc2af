/*
 * expt_study_runs.h: how many runs a study, a sweep or a search will make, and about how long
 * they will take, said before anything runs and refused beyond a limit (issue 23 item 9: 10^4
 * points x 10^5 replications ran until memory ran out). The memory side is
 * expt_study_estimate.h.
 */
#ifndef EXPT_STUDY_RUNS_H
#define EXPT_STUDY_RUNS_H

#include <stdint.h>
#include <stdio.h>

#include "expt/expt_scenario.h"

/* The default of --max-runs: a million runs of even a small world take hours of CPU. */
#define EXPT_STUDY_MAX_RUNS_DEFAULT 1000000u

/* The simulated requests per second of CPU time the time estimate assumes, measured on the
 * golden scenarios (docs/cli.md): the order of magnitude, not a promise. */
#define EXPT_STUDY_REQUESTS_PER_CPU_S 1.0e6

/* The requests one run of variant v of s brings to its services over its duration, first
 * attempts only (the capacity estimate's offered load integrated over its phases): a lower
 * bound, since retries add to it. */
double expt_study_runs_requests(const expt_scenario *s, size_t v);

/* Prints on out (when not NULL) "  estimate: N runs, about R simulated requests (first
 * attempts), about T of CPU" for n_runs runs spread evenly over s's variants, then refuses
 * when n_runs is above max_runs (0: no limit): one line on errf naming what (as "a study of 6
 * points x 1000 replications x 3 variants"), the count and the limit. Returns the exit
 * status: 0, or 2 when refused. */
int expt_study_runs_check(const expt_scenario *s, uint64_t n_runs, uint64_t max_runs,
                          const char *what, FILE *out, FILE *errf);

#endif /* EXPT_STUDY_RUNS_H */
