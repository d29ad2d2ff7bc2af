/*
 * files.h: test support. Reading the corpora of tests/data: whole files, and the sorted case
 * folders of a directory. Running out of memory ends the test program (abort): these are the
 * tests' own buffers, not the code under test.
 */
#ifndef TEST_FILES_H
#define TEST_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "retry/retry.h"

/* realloc that aborts instead of returning NULL. */
void *test_xrealloc(void *p, size_t size);
/* Reads the file at path whole; returns a malloc'd NUL-terminated copy (its length in *len
 * when len is not NULL), or NULL when it cannot be opened. */
char *test_slurp(const char *path, size_t *len);
/* The entries of dir but "." ones, sorted by name: a malloc'd array of n malloc'd names, or
 * NULL (n = 0) when dir cannot be opened. Free with test_free_cases. */
char **test_list_cases(const char *dir, size_t *n);
void test_free_cases(char **names, size_t n);

/* The error an invalid case of tests/data must give, from its "error" file: line 1 is
 * "LINE COLUMN PATH" (-1 -1 when there is no position; the path may be empty), line 2 the
 * exact message, optional line 3 the code's name (default RETRY_ESYNTAX when there is a
 * position, else RETRY_ECONFIG), optional line 4 the source when it is not the case's input:
 * "<command line>", or a file relative to the case's folder. */
typedef struct test_expected_error {
  int code, line, column;
  char path[256];
  char message[256];
  char source[1024]; /* "" when line 4 is absent */
} test_expected_error;

/* Reads the error file at path into *out. Returns false (with a line on stderr naming it)
 * when the file is missing or malformed. */
bool test_expected_error_read(const char *path, test_expected_error *out);
/* Whether got is exactly want (code, line, column, path, message) from source; prints both
 * under the case's name when not. */
bool test_expected_error_matches(const char *name, const test_expected_error *want,
                                 const char *source, const retry_error *got);

#endif /* TEST_FILES_H */
