/*
 * expt_expect.h: checking a scenario's "expect" object against the run object of one run (the
 * keys of summary.json), for `retrysim run --check`, and the JUnit XML of those results
 * (`--junit`). The checks are pure functions over jansson values: no state, no allocation
 * that outlives a call; the JUnit collector owns what it collected.
 */
#ifndef EXPT_EXPECT_H
#define EXPT_EXPECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "retry/retry.h"

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
 * malformed expectation (see expt_expect_validate) is a failure too. Returns the number of
 * failed expectations, 0 when all passed. */
int expt_expect_check(const json_t *expect, const json_t *run, const char *run_name, FILE *report,
                     bool verbose);

/* One expectation's outcome, for reports other than the text lines: the run, the path, whether
 * it held, and the expected and found values described as in the FAIL lines. The strings are
 * borrowed for the call. */
typedef void (*expt_expect_sink)(void *ctx, const char *run_name, const char *path, bool passed,
                                const char *expected, const char *got);
/* expt_expect_check, also telling sink (may be NULL) the outcome of every expectation. */
int expt_expect_check_to(const json_t *expect, const json_t *run, const char *run_name, FILE *report,
                        bool verbose, expt_expect_sink sink, void *sink_ctx);

/* Checks the shape of an expect object without a run: an object whose keys are well-formed
 * paths and whose values have one of the shapes above. Returns 0, or RETRY_ECONFIG with a
 * message naming the bad key in err (no source, no path: the caller says where; err may be
 * NULL). Meant for the scenario loader, so that a bad expectation is refused before anything
 * runs. */
int expt_expect_validate(const json_t *expect, retry_error *err);

/* The two kinds of expectations. A variant's "expect" may hold paths that start with "search"
 * ("search.outcome", "search.boundary.pass"): they are checked by `--check` against that
 * variant's search result only (a plain run or another study skips them, and a search skips
 * the others, which are a run's). Returns a new object with the keys of expect of one kind:
 * those of a search (search = true) or the others; *other (may be NULL) gets the number of
 * keys of the other kind. NULL when expect is NULL (*other = 0) or out of memory. */
json_t *expt_expect_part(const json_t *expect, bool search, size_t *other);

/* The results of --check as JUnit XML (`--junit FILE`): one <testsuite> per run, one
 * <testcase> per expectation (named by its path), a <failure> with "expected X, got Y" for
 * each that failed. */
typedef struct expt_junit expt_junit;
/* Returns a new collector for the scenario named suite (copied), NULL when out of memory;
 * free with expt_junit_destroy. */
expt_junit *expt_junit_create(const char *suite);
/* NULL is a no-op. */
void expt_junit_destroy(expt_junit *j);
/* A expt_expect_sink: ctx is the expt_junit. Runs are grouped as they come. */
void expt_junit_add(void *ctx, const char *run_name, const char *path, bool passed,
                   const char *expected, const char *got);
/* Writes the XML to path atomically (path.tmp.<pid>, then renamed; removed on a failure or a
 * signal). Returns 0, RETRY_EIO or RETRY_ENOMEM with err (may be NULL) naming the file. */
int expt_junit_write(const expt_junit *j, const char *path, retry_error *err);
/* Ends a collector: with write, writes it to path (expt_junit_write) and reports a failure as
 * one "retrysim: ..." line on report; then frees j (NULL is a no-op and succeeds). Returns 0,
 * or -1 when the file could not be written. */
int expt_junit_finish(expt_junit *j, const char *path, bool write, FILE *report);

#endif /* EXPT_EXPECT_H */
