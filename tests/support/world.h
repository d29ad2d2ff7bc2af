/*
 * world.h: test support. Building and running a world from scenario text, for the suites of
 * the world (tests/test_model_*.c): a scenario written with single quotes (turned into double
 * quotes before loading), run on a kernel of its own with a given seed, and lookups into its
 * results. Any error fails the calling test (cmocka), so a suite reads as the rule it checks.
 */
#ifndef TEST_WORLD_H
#define TEST_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "expt/expt_scenario.h"
#include "models/model_world.h"
#include "sim/sim_event.h"

/* A retry policy of 3 attempts on UNAVAILABLE with a fixed 10 ms backoff, for any method (to
 * paste into scenario text). */
#define TEST_P3                                                                \
  "{'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"         \
  " 'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1," \
  " 'retryableStatusCodes': ['UNAVAILABLE']}}]}"

/* One run: the scenario, the kernel, the world and its results (borrowed from the world). */
typedef struct test_run {
  expt_scenario *s;
  sim_kernel *k;
  model_world *w;
  const model_results *r;
} test_run;

/* Loads a scenario written with single quotes; fails the test on any error. Returns a new
 * scenario; free with expt_scenario_destroy. */
expt_scenario *test_load(const char *text);
/* Runs run i of the already loaded x->s with the given seed, into x->k, x->w and x->r. */
void test_run_loaded(test_run *x, size_t i, uint64_t seed);
/* Loads text into a cleared x and runs its first run with the given seed. */
void test_run_text(test_run *x, const char *text, uint64_t seed);
/* Frees the world and the kernel of x, keeping its scenario for another run. */
void test_run_close(test_run *x);
/* Frees everything x holds. */
void test_run_free(test_run *x);

/* The results of service name, or of the edge from -> to; fail the test when there is none.
 * Return a borrowed pointer valid until the world is destroyed. */
const model_service_stats *test_svc(const model_results *r, const char *name);
const model_edge_stats *test_edge(const model_results *r, const char *from, const char *to);

/* The index of the time-series column called name, or -1. */
int test_ts_col(const model_timeseries *ts, const char *name);
/* Column name summed over the buckets, times the bucket length: a rate column back to its
 * count. Fails the test when there is no such column. */
double test_ts_total(const model_timeseries *ts, const char *name);

#endif /* TEST_WORLD_H */
