/*
 * test_expt_expect.c: expectations against a run object: every value shape passing and failing,
 * paths with [n] and [key=value] selectors, paths that do not resolve, the by_status zero rule,
 * the report lines, expt_expect_validate and the JUnit XML of --junit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expt/expt_expect.h"

static const char run_text[] =
    "{\"variant\": \"base\", \"flag\": true, \"nothing\": null,"
    " \"calls\": {\"started\": 100, \"ok\": 90, \"by_status\": {\"OK\": 90, \"UNAVAILABLE\": 10}},"
    " \"goodput_per_s\": 9.5,"
    " \"amplification\": {\"api\": 1.5, \"edges\": ["
    "   {\"from\": \"web\", \"to\": \"api\", \"amplification\": 1.25},"
    "   {\"from\": \"api\", \"to\": \"db\", \"amplification\": 2.0},"
    "   {\"from\": \"web\", \"to\": \"db.v2\", \"amplification\": 1.0}]},"
    " \"services\": {\"api\": {\"utilization\": 0.0}, \"db.v2\": {\"queue_max\": 7}}}";

static json_t *load(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  if (j == NULL) fail_msg("bad test JSON: %s", e.text);
  return j;
}

/* Checks the expect object given as text against the run; returns the failures and, when
 * report is not NULL, stores the report text there (free it). */
static int check(const char *expect_text, bool verbose, char **report) {
  json_t *run = load(run_text), *expect = load(expect_text);
  char *buf = NULL;
  size_t n;
  FILE *f = open_memstream(&buf, &n);
  assert_non_null(f);
  int failed = expt_expect_check(expect, run, "base", f, verbose);
  fclose(f);
  if (report != NULL)
    *report = buf;
  else
    free(buf);
  json_decref(run);
  json_decref(expect);
  return failed;
}

/* Asserts that one expectation fails with exactly this report line. */
static void assert_fails_with(const char *expect_text, const char *line) {
  char *report;
  assert_int_equal(check(expect_text, false, &report), 1);
  assert_string_equal(report, line);
  free(report);
}

/* {==================================================================
 * Value shapes
 * =================================================================== */

static void test_expt_expect_number_equal_within_tolerance(void **state) {
  (void)state;
  assert_int_equal(check("{\"calls.ok\": 90, \"goodput_per_s\": 9.5}", false, NULL), 0);
  assert_int_equal(check("{\"calls.ok\": 90.0}", false, NULL), 0);             /* integer vs real */
  assert_int_equal(check("{\"goodput_per_s\": 9.500000004}", false, NULL), 0); /* rel 4e-10 */
  assert_int_equal(check("{\"services.api.utilization\": 1e-13}", false, NULL), 0); /* abs */
  assert_fails_with("{\"goodput_per_s\": 9.50001}",
                    "FAIL base: goodput_per_s: expected 9.50001, got 9.5\n");
  assert_fails_with("{\"calls.ok\": 91}", "FAIL base: calls.ok: expected 91, got 90\n");
  assert_fails_with("{\"variant\": 1}", "FAIL base: variant: expected 1, got \"base\"\n");
}

static void test_expt_expect_string_bool_null_compare_exactly(void **state) {
  (void)state;
  assert_int_equal(check("{\"variant\": \"base\", \"flag\": true, \"nothing\": null}", false, NULL),
                   0);
  assert_fails_with("{\"variant\": \"other\"}",
                    "FAIL base: variant: expected \"other\", got \"base\"\n");
  assert_fails_with("{\"flag\": false}", "FAIL base: flag: expected false, got true\n");
  assert_fails_with("{\"calls.ok\": null}", "FAIL base: calls.ok: expected null, got 90\n");
}

static void test_expt_expect_range_is_inclusive(void **state) {
  (void)state;
  assert_int_equal(check("{\"calls.ok\": [90, 100], \"goodput_per_s\": [0, 9.5]}", false, NULL), 0);
  assert_fails_with("{\"calls.ok\": [91, 100]}",
                    "FAIL base: calls.ok: expected [91, 100], got 90\n");
  assert_fails_with("{\"calls.ok\": [0, 89.5]}",
                    "FAIL base: calls.ok: expected [0, 89.5], got 90\n");
  assert_fails_with("{\"variant\": [0, 1]}", "FAIL base: variant: expected [0, 1], got \"base\"\n");
}

static void test_expt_expect_min_max_either_optional(void **state) {
  (void)state;
  assert_int_equal(check("{\"calls.ok\": {\"min\": 90}}", false, NULL), 0);
  assert_int_equal(check("{\"calls.ok\": {\"max\": 90}}", false, NULL), 0);
  assert_int_equal(check("{\"calls.ok\": {\"min\": 1, \"max\": 1000}}", false, NULL), 0);
  assert_fails_with("{\"calls.ok\": {\"min\": 95}}",
                    "FAIL base: calls.ok: expected >= 95, got 90\n");
  assert_fails_with("{\"calls.ok\": {\"max\": 50}}",
                    "FAIL base: calls.ok: expected <= 50, got 90\n");
  assert_fails_with("{\"calls.ok\": {\"max\": 50, \"min\": 10}}",
                    "FAIL base: calls.ok: expected [10, 50], got 90\n");
}

static void test_expt_expect_approx_within_tol(void **state) {
  (void)state;
  assert_int_equal(check("{\"amplification.api\": {\"approx\": 1.4, \"tol\": 0.1}}", false, NULL),
                   0);
  assert_int_equal(check("{\"calls.ok\": {\"approx\": 90, \"tol\": 0}}", false, NULL), 0);
  assert_fails_with("{\"amplification.api\": {\"approx\": 1.3, \"tol\": 0.1}}",
                    "FAIL base: amplification.api: expected 1.3 +- 0.1, got 1.5\n");
}

static void test_expt_expect_invalid_shapes_fail(void **state) {
  (void)state;
  static const char *const bad[] = {
      "{\"calls.ok\": [1]}",
      "{\"calls.ok\": [2, 1]}",
      "{\"calls.ok\": [1, \"x\"]}",
      "{\"calls.ok\": {\"min\": \"a\"}}",
      "{\"calls.ok\": {\"min\": 5, \"max\": 1}}",
      "{\"calls.ok\": {\"foo\": 1}}",
      "{\"calls.ok\": {\"min\": 1, \"foo\": 1}}",
      "{\"calls.ok\": {\"approx\": 90}}",
      "{\"calls.ok\": {\"approx\": 90, \"tol\": -1}}",
      "{\"calls.ok\": {}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *report;
    assert_int_equal(check(bad[i], false, &report), 1);
    assert_non_null(strstr(report, "got nothing: invalid expectation: "));
    free(report);
  }
}

/* }================================================================== */

/* {==================================================================
 * Paths
 * =================================================================== */

static void test_expt_expect_paths_select_by_index_and_key(void **state) {
  (void)state;
  assert_int_equal(check("{\"amplification.edges[1].amplification\": 2,"
                         " \"amplification.edges[to=db].amplification\": 2,"
                         " \"amplification.edges[from=web].to\": \"api\","
                         " \"amplification.edges[from=web][to=db.v2].amplification\": 1,"
                         " \"amplification.edges[to=db.v2].from\": \"web\"}",
                         false, NULL),
                   0);
  /* The loader's grammar: a "$" prefix, quoted keys for names with dots. */
  assert_int_equal(check("{\"$.calls.ok\": 90, \"$[\\\"calls\\\"].started\": 100,"
                         " \"services[\\\"db.v2\\\"].queue_max\": 7}",
                         false, NULL),
                   0);
}

static void test_expt_expect_unresolved_paths_fail(void **state) {
  (void)state;
  assert_fails_with("{\"calls.nope\": 1}",
                    "FAIL base: calls.nope: expected 1, got nothing: no key \"nope\" in calls\n");
  assert_fails_with("{\"nope\": 1}", "FAIL base: nope: expected 1, got nothing: no key \"nope\"\n");
  assert_fails_with("{\"amplification.edges[7].to\": \"x\"}",
                    "FAIL base: amplification.edges[7].to: expected \"x\", got nothing: "
                    "amplification.edges has no element 7 (out of range)\n");
  assert_fails_with("{\"calls[0]\": 1}",
                    "FAIL base: calls[0]: expected 1, got nothing: calls has no element 0 "
                    "(not an array)\n");
  assert_fails_with("{\"amplification.edges[to=x].calls\": 1}",
                    "FAIL base: amplification.edges[to=x].calls: expected 1, got nothing: "
                    "no element of amplification.edges matches [to=x]\n");
  assert_fails_with("{\"amplification.edges[from=api][to=api].calls\": 1}",
                    "FAIL base: amplification.edges[from=api][to=api].calls: expected 1, got "
                    "nothing: no element of amplification.edges matches [from=api][to=api]\n");
  assert_fails_with("{\"calls[k=v]\": 1}",
                    "FAIL base: calls[k=v]: expected 1, got nothing: calls is not an array\n");
}

static void test_expt_expect_malformed_paths_fail(void **state) {
  (void)state;
  static const char *const bad[] = {"{\"calls..ok\": 1}", "{\"calls.\": 1}",  "{\".calls\": 1}",
                                    "{\"calls[\": 1}",    "{\"calls[]\": 1}", "{\"calls[x]\": 1}",
                                    "{\"calls]\": 1}",    "{\"\": 1}",        "{\"a[=b]\": 1}",
                                    "{\"a[01]\": 1}",     "{\"$\": 1}",       "{\"a[\\\"b]\": 1}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *report;
    assert_int_equal(check(bad[i], false, &report), 1);
    assert_non_null(strstr(report, "got nothing: "));
    free(report);
  }
}

static void test_expt_expect_missing_status_counts_as_zero(void **state) {
  (void)state;
  assert_int_equal(check("{\"calls.by_status.DEADLINE_EXCEEDED\": 0,"
                         " \"calls.by_status.503\": [0, 5],"
                         " \"calls.by_status.INTERNAL\": {\"max\": 0}}",
                         false, NULL),
                   0);
  assert_fails_with("{\"calls.by_status.DEADLINE_EXCEEDED\": 3}",
                    "FAIL base: calls.by_status.DEADLINE_EXCEEDED: expected 3, got 0\n");
  /* Only numbers: a string is not "seen 0 times". */
  assert_fails_with("{\"calls.by_status.ABORTED\": \"x\"}",
                    "FAIL base: calls.by_status.ABORTED: expected \"x\", got nothing: no key "
                    "\"ABORTED\" in calls.by_status\n");
  /* The rule is for by_status only, and needs the by_status object. */
  assert_int_equal(check("{\"calls.missing\": 0}", false, NULL), 1);
  assert_int_equal(check("{\"other.by_status.OK\": 0}", false, NULL), 1);
  assert_int_equal(check("{\"calls.by_status.OK.x\": 0}", false, NULL), 1);
}

/* }================================================================== */

/* {==================================================================
 * Reports and validation
 * =================================================================== */

static void test_expt_expect_verbose_reports_every_line(void **state) {
  (void)state;
  char *report;
  assert_int_equal(check("{\"calls.ok\": 90, \"calls.started\": [0, 10]}", true, &report), 1);
  assert_string_equal(report,
                      "PASS base: calls.ok: expected 90, got 90\n"
                      "FAIL base: calls.started: expected [0, 10], got 100\n");
  free(report);
  assert_int_equal(check("{\"calls.ok\": 90}", false, &report), 0);
  assert_string_equal(report, "");
  free(report);
}

static void test_expt_expect_counts_every_failure(void **state) {
  (void)state;
  assert_int_equal(check("{\"calls.ok\": 1, \"calls.started\": 2, \"variant\": \"base\","
                         " \"x\": 3}",
                         false, NULL),
                   3);
  json_t *run = load(run_text);
  assert_int_equal(expt_expect_check(NULL, run, "base", NULL, true), 0);
  json_t *arr = json_array();
  assert_int_equal(expt_expect_check(arr, run, "base", NULL, false), 1);
  json_t *one = load("{\"calls.ok\": 5}");
  assert_int_equal(expt_expect_check(one, run, NULL, NULL, false), 1); /* report may be NULL */
  json_decref(one);
  json_decref(arr);
  json_decref(run);
}

static void test_expt_expect_validate_refuses_bad_paths_and_values(void **state) {
  (void)state;
  retry_error e;
  retry_error_clear(&e);
  json_t *good = load(
      "{\"calls.ok\": 1, \"a.b[0][k=v].c\": [1, 2], \"x\": {\"min\": 0},"
      " \"y\": {\"approx\": 1, \"tol\": 0.5}, \"z\": \"s\", \"w\": false}");
  assert_int_equal(expt_expect_validate(good, &e), 0);
  assert_int_equal(e.code, RETRY_OK);
  json_t *bad_path = load("{\"calls.ok\": 1, \"calls..ok\": 1}");
  assert_int_equal(expt_expect_validate(bad_path, &e), RETRY_ECONFIG);
  assert_int_equal(e.code, RETRY_ECONFIG);
  assert_non_null(strstr(e.message, "\"calls..ok\": malformed path"));
  /* The first error wins, so each refusal is read from a cleared error. */
  retry_error_clear(&e);
  json_t *bad_value = load("{\"calls.ok\": [3, 1]}");
  assert_int_equal(expt_expect_validate(bad_value, &e), RETRY_ECONFIG);
  assert_non_null(strstr(e.message, "\"calls.ok\": a range must be [lo, hi]"));
  json_t *not_object = load("[1]");
  assert_int_equal(expt_expect_validate(not_object, NULL), RETRY_ECONFIG);
  json_decref(good);
  json_decref(bad_path);
  json_decref(bad_value);
  json_decref(not_object);
}

/* }================================================================== */

/* Issue 10: --junit. Each expectation is a testcase named by its path, a failure carries
 * "expected X, got Y", and text from the scenario (a path with '<', '&' and a quote, a
 * control character) is escaped so the XML stays well-formed. The file is complete and no
 * temporary file is left. */
static void test_expt_expect_junit_has_a_testcase_per_expectation(void **state) {
  (void)state;
  json_t *run = load(run_text);
  json_t *expect = load(
      "{\"calls.started\": 100, \"calls.ok\": [0, 5],"
      " \"services[a<b&c=\\\"q\\\"\\u0001]\": 1}");
  expt_junit *j = expt_junit_create("demo<&>");
  assert_non_null(j);
  assert_int_equal(expt_expect_check_to(expect, run, "base", NULL, false, expt_junit_add, j), 2);
  char dir[] = "/tmp/test_expt_expect.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof path, "%s/junit.xml", dir);
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_junit_write(j, path, &err), 0);
  expt_junit_destroy(j);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char xml[4096];
  size_t n = fread(xml, 1, sizeof xml - 1, f);
  xml[n] = '\0';
  fclose(f);
  assert_non_null(strstr(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
  assert_non_null(strstr(xml, "<testsuites name=\"demo&lt;&amp;&gt;\" tests=\"3\" failures=\"2\""));
  assert_non_null(strstr(xml, "<testsuite name=\"base\" tests=\"3\" failures=\"2\""));
  assert_non_null(strstr(xml,
                         "<testcase name=\"calls.started\" classname=\"demo&lt;&amp;&gt;.base\""
                         " time=\"0\"/>"));
  assert_non_null(strstr(xml, "<testcase name=\"calls.ok\""));
  assert_non_null(strstr(xml, "<failure message=\"expected [0, 5], got 90\""));
  assert_non_null(strstr(xml, "services[a&lt;b&amp;c=&quot;q&quot;?]"));
  assert_null(strchr(xml, '\001'));
  /* Balanced: as many testcases closed as opened. */
  size_t open = 0, close = 0;
  for (const char *p = xml; (p = strstr(p, "<testcase ")) != NULL; p++)
    open++;
  for (const char *p = xml; (p = strstr(p, "</testcase>")) != NULL; p++)
    close++;
  for (const char *p = xml; (p = strstr(p, "\"/>")) != NULL; p++)
    close++;
  assert_int_equal(open, 3);
  assert_int_equal(close, 3);
  assert_non_null(strstr(xml, "</testsuites>\n"));
  unlink(path);
  assert_int_equal(rmdir(dir), 0); /* empty: no temporary file was left */
  /* A directory that does not exist: an I/O error naming the file as the user gave it. */
  j = expt_junit_create("x");
  retry_error_clear(&err);
  assert_int_equal(expt_junit_write(j, "/nonexistent/dir/junit.xml", &err), RETRY_EIO);
  assert_string_equal(err.source, "/nonexistent/dir/junit.xml");
  expt_junit_destroy(j);
  json_decref(run);
  json_decref(expect);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expt_expect_number_equal_within_tolerance),
      cmocka_unit_test(test_expt_expect_string_bool_null_compare_exactly),
      cmocka_unit_test(test_expt_expect_range_is_inclusive),
      cmocka_unit_test(test_expt_expect_min_max_either_optional),
      cmocka_unit_test(test_expt_expect_approx_within_tol),
      cmocka_unit_test(test_expt_expect_invalid_shapes_fail),
      cmocka_unit_test(test_expt_expect_paths_select_by_index_and_key),
      cmocka_unit_test(test_expt_expect_unresolved_paths_fail),
      cmocka_unit_test(test_expt_expect_malformed_paths_fail),
      cmocka_unit_test(test_expt_expect_missing_status_counts_as_zero),
      cmocka_unit_test(test_expt_expect_verbose_reports_every_line),
      cmocka_unit_test(test_expt_expect_counts_every_failure),
      cmocka_unit_test(test_expt_expect_junit_has_a_testcase_per_expectation),
      cmocka_unit_test(test_expt_expect_validate_refuses_bad_paths_and_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
