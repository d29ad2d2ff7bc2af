/*
 * cli_expect.h: checking a scenario's "expect" object against the run object of one run (the
 * keys of summary.json), for `retrysim run --check`. Pure functions over jansson values: no
 * state, no allocation that outlives a call.
 */
#ifndef CLI_EXPECT_H
#define CLI_EXPECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * An expect object maps paths to expected values:
 *
 *   "calls.ok": 1000                              a number: equal within a relative 1e-9, or an
 *                                                 absolute 1e-12
 *   "variant": "baseline", "x.flag": true         a string, bool or null: equal
 *   "latency_ms.p99": [10, 250]                   [lo, hi]: lo <= got <= hi
 *   "goodput_per_s": {"min": 700}                 {"min": x, "max": y}: either may be left out
 *   "amplification.api": {"approx": 1.5, "tol": 0.1}   |got - approx| <= tol (plus the
 *                                                 slack of equality, so decimal edges hold)
 *
 * A path is keys separated by dots, each followed by any number of selectors: "[n]" takes
 * element n (from 0) of an array, "[key=value]" the first element of an array whose member key
 * is a string equal to value. Consecutive [key=value] selectors combine: "edges[from=api][to=db]"
 * is the first edge matching both. A value may hold dots: "edges[to=db.v2]". A path that does
 * not resolve is a failure, with one exception: a missing key directly under "by_status" counts
 * as 0 when the expected value is numeric (by_status lists only the statuses seen) and the
 * by_status object exists.
 */

/* Checks every expectation of expect (an object; NULL checks nothing) against run, the run
 * object. For each failure writes "FAIL <run_name>: <path>: expected <...>, got <...>\n" to
 * report, and with verbose also "PASS ..." lines for the others; report may be NULL. A
 * malformed expectation (see cli_expect_validate) is a failure too. Returns the number of
 * failed expectations, 0 when all passed. */
int cli_expect_check(const json_t *expect, const json_t *run, const char *run_name, FILE *report,
                     bool verbose);

/* Checks the shape of an expect object without a run: an object whose keys are well-formed
 * paths and whose values have one of the shapes above. Returns 0, or -1 with a message naming
 * the bad key written to msg (size bytes, may be 0). Meant for the scenario loader, so that a
 * bad expectation is refused before anything runs. */
int cli_expect_validate(const json_t *expect, char *msg, size_t size);

#endif /* CLI_EXPECT_H */
