/*
 * expt_study_estimate.h: how much memory a study, a sweep or a search will hold, estimated
 * before its first run, so that one asked for 10^4 points x 10^5 replications is refused in a
 * second instead of running until the machine is out of memory. The estimate counts every
 * run record the study keeps until its end (the outputs are written from all of them) and
 * the worlds its parallel runs hold at once; --max-memory bounds their sum, as it bounds one
 * world for a plain run.
 */
#ifndef EXPT_STUDY_ESTIMATE_H
#define EXPT_STUDY_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "retry/retry.h"

#include "expt/expt_scenario.h"

/* The bytes one run record of variant v of s takes while the study holds it (its result as a
 * JSON tree, and its share of summary.json once written): about 8 KiB, plus 6 KiB per service,
 * 6 KiB per edge (a client's target or a service's call) and 4 KiB per client, measured on
 * the experiments (docs/cli.md). */
uint64_t expt_study_estimate_record_bytes(const expt_scenario *s, size_t v);

/* Checks that n_records run records of s's variants (spread evenly over them) and jobs worlds
 * at once (the largest of s's variants, model_world_estimate_bytes) fit in max_bytes. what
 * names the work in the message ("a study of 6 points x 1000 replications x 3 variants").
 * Returns 0, or RETRY_ERANGE with one line on errf (the estimate, the limit, and what lowers
 * or raises it). */
int expt_study_estimate_check(const expt_scenario *s, uint64_t n_records, unsigned jobs,
                              uint64_t max_bytes, const char *what, FILE *errf);

/* Refuses, before anything is derived or run, a study of n_points points of s, reps
 * replications of each variant, split in shard_n shards (0: none) and run jobs at a time,
 * that makes more than max_runs runs (0: no limit; expt_study_runs.h), or whose records,
 * parallel worlds and series_runs kept series (expt_study_series.h, about 8 KB each: the
 * study page's mean time series) would not fit in max_bytes (0: unchecked). Returns the exit
 * status (2 with one line on errf). */
int expt_study_estimate_refuse(const expt_scenario *s, size_t n_points, size_t reps,
                               unsigned shard_n, unsigned jobs, uint64_t max_bytes,
                               uint64_t max_runs, uint64_t series_runs, FILE *errf);

#endif /* EXPT_STUDY_ESTIMATE_H */
