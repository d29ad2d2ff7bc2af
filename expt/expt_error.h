/*
 * expt_error.h: the one error convention of the program floors (expt/ and cli/). A library
 * function that can fail on input fills a caller's retry_error (retry/retry.h: code, source,
 * path, line, column, message; the first error wins) and returns an int: 0, a RETRY_E* code,
 * or the status its contract documents. Only the drivers that own a stream (run, study, search,
 * sweep, merge, explain) print, each error as one `retrysim: ` line on the stream they were
 * given, and return an exit status below. Nothing here allocates.
 */
#ifndef EXPT_ERROR_H
#define EXPT_ERROR_H

#include <stdio.h>

#include "retry/retry.h"

/* Exit statuses of the retrysim command. */
#define EXPT_EXIT_OK 0      /* success (and every expectation held, with --check) */
#define EXPT_EXIT_CHECK 1   /* --check found a failed expectation */
#define EXPT_EXIT_USAGE 2   /* bad command line, unreadable or invalid scenario */
#define EXPT_EXIT_RUNTIME 3 /* failure while running or writing: out of memory, I/O */

/* Prints e on f as one line, "retrysim: " and retry_error_format's "source:line:column: path:
 * message". */
void expt_error_print(FILE *f, const retry_error *e);

#endif /* EXPT_ERROR_H */
