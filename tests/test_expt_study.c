/*
 * test_expt_study.c: the study driver: replication seeds (splitmix64's known first outputs),
 * runs on threads giving the same run objects as one thread, and a study over two sweep points
 * whose summary holds the points, the aggregates and the runs in run-list order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expt/expt_study.h"

/* A short scenario: 1 s of 200 calls/s to a 2-worker service, a fault from 0.3 s to 0.5 s, two
 * variants (retries or not). */
static const char scenario_json[] =
    "{\"name\": \"tiny\", \"seed\": 7, \"duration\": \"1s\", \"drain\": \"1s\","
    " \"bucket\": \"100ms\","
    " \"services\": {\"api\": {\"replicas\": 1, \"workers\": 2,"
    "   \"service_time\": {\"dist\": \"exponential\", \"mean\": \"5ms\"},"
    "   \"faults\": [{\"kind\": \"fail\", \"rate\": 0.5, \"status\": \"UNAVAILABLE\",\"start\": "
    "\"300ms\", \"end\": \"500ms\"}]}},"
    " \"clients\": {\"web\": {\"count\": 4, \"target\": \"api\", \"methods\": [\"/a.B/C\"],"
    "   \"arrival\": {\"kind\": \"open\", \"rate\": \"200/s\"},"
    "   \"policy\": {\"methodConfig\": [{\"name\": [{\"service\": \"a.B\"}], \"retryPolicy\":"
    "     {\"maxAttempts\": 3, \"initialBackoff\": \"0.01s\", \"maxBackoff\": \"0.1s\","
    "      \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}}},"
    " \"variants\": [{\"name\": \"none\", \"set\": {\"clients.web.policy\": null}},"
    "                {\"name\": \"retries\"}]}";

/* splitmix64 from state 0 gives 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f
 * (the published reference outputs); replication r of base 0 is the r-th of them, and
 * replication 0 is the base seed itself. */
static void test_seed_known_values(void **state) {
  (void)state;
  assert_true(expt_study_seed(0, 0) == 0);
  assert_true(expt_study_seed(12345, 0) == 12345);
  assert_true(expt_study_seed(0, 1) == UINT64_C(0xe220a8397b1dcdaf));
  assert_true(expt_study_seed(0, 2) == UINT64_C(0x6e789e6aa1b965f4));
  assert_true(expt_study_seed(0, 3) == UINT64_C(0x06c45d188009454f));
  /* Different bases give different streams; no repeats among the first thousand. */
  assert_true(expt_study_seed(1, 1) != expt_study_seed(0, 1));
  for (uint64_t a = 1; a < 1000; a++)
    for (uint64_t b = a + 1; b < 1000; b += 97)
      assert_true(expt_study_seed(1, a) != expt_study_seed(1, b));
  assert_true(expt_study_default_jobs() >= 1);
}

/* The same jobs on 1 and on 3 threads give equal run objects, job by job; different seeds give
 * different runs. */
static void test_threads_same_results(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(scenario_json, "tiny.json", NULL, 0, &err);
  assert_non_null(s);
  expt_study_job jobs[8];
  for (size_t i = 0; i < 8; i++)
    jobs[i] = (expt_study_job){s, i % 2, expt_study_seed(7, i / 2), NULL};
  json_t *one[8], *three[8];
  assert_int_equal(expt_study_run_jobs(jobs, 8, 1, NULL, one, &err), 0);
  assert_int_equal(expt_study_run_jobs(jobs, 8, 3, NULL, three, &err), 0);
  for (size_t i = 0; i < 8; i++) {
    assert_non_null(one[i]);
    assert_true(json_equal(one[i], three[i]));
  }
  assert_false(json_equal(one[0], one[2]));
  /* No retries: one attempt per call. */
  json_t *calls = json_object_get(one[0], "calls");
  assert_int_equal(json_integer_value(json_object_get(calls, "retries")), 0);
  assert_true(json_integer_value(json_object_get(json_object_get(one[1], "calls"), "retries")) > 0);
  for (size_t i = 0; i < 8; i++) {
    json_decref(one[i]);
    json_decref(three[i]);
  }
  /* More threads than jobs, and no job at all. */
  assert_int_equal(expt_study_run_jobs(jobs, 1, 16, NULL, one, &err), 0);
  json_decref(one[0]);
  assert_int_equal(expt_study_run_jobs(jobs, 0, 2, NULL, one, &err), 0);
  expt_scenario_destroy(s);
}

/* A probe counts the replications where a boolean metric is true, among those where it has a
 * value: the tiny scenario cannot be judged within its 1 s with the default 10 s hold (no hold
 * span fits after its trigger: recovered is null, counted nowhere), and always recovers with a
 * 200 ms hold; a number or a missing metric counts nowhere. */
static void test_probe_counts(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(scenario_json, "tiny.json", NULL, 0, &err);
  expt_set hold[] = {{"recovery.hold", "200ms"}};
  expt_scenario *h = expt_scenario_load_string(scenario_json, "tiny.json", hold, 1, &err);
  assert_non_null(s);
  assert_non_null(h);
  size_t k = 9, n = 9;
  assert_int_equal(expt_study_probe(s, 1, 7, 0, 4, 2, "recovery.recovered", &k, &n, &err), 0);
  assert_int_equal(n, 0);
  assert_int_equal(k, 0);
  assert_int_equal(expt_study_probe(h, 1, 7, 2, 3, 2, "recovery.recovered", &k, &n, &err), 0);
  assert_int_equal(n, 3);
  assert_int_equal(k, 3);
  assert_int_equal(expt_study_probe(h, 0, 7, 0, 2, 1, "no.such.metric", &k, &n, &err), 0);
  assert_int_equal(n, 0);
  assert_int_equal(k, 0);
  expt_scenario_destroy(s);
  expt_scenario_destroy(h);
}

static json_t *load_summary(const char *dir) {
  char path[700];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  json_t *doc = json_load_file(path, 0, NULL);
  assert_non_null(doc);
  return doc;
}

/* Two sweep points (the offered load) x 2 variants x 3 replications: the summary has both
 * points with their values, each with one aggregate per variant, and the 12 runs in run-list
 * order; the higher load starts more calls. */
static void test_study_over_points(void **state) {
  (void)state;
  char dir[] = "/tmp/test_expt_study.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[512], out[600];
  snprintf(path, sizeof path, "%s/tiny.json", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(scenario_json, f);
  fclose(f);
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *base = expt_scenario_load(path, NULL, 0, &err);
  assert_non_null(base);
  expt_set p0[] = {{"clients.web.arrival.rate", "100/s"}},
          p1[] = {{"clients.web.arrival.rate", "300/s"}};
  expt_study_point points[] = {{p0, 1, NULL}, {p1, 1, NULL}};
  expt_scenario *scn[2];
  assert_int_equal(expt_study_load_points(path, NULL, 0, points, 2, NULL, 0, UINT64_MAX, scn, &err),
                   0);
  FILE *sink = fopen("/dev/null", "w");
  expt_run_opts o = {.out_dir = out, .quiet = true, .out = sink, .err = stderr};
  expt_study_spec spec = {.source = path,
                         .base = base,
                         .points = points,
                         .n_points = 2,
                         .scenarios = (const expt_scenario *const *)scn,
                         .reps = 3,
                         .confidence = 0.9,
                         .baseline = "none",
                         .warmup_s = -1,
                         .jobs = 2};
  assert_int_equal(expt_study_run(&spec, &o), EXPT_EXIT_OK);
  json_t *doc = load_summary(out);
  json_t *study = json_object_get(doc, "study");
  assert_int_equal(json_integer_value(json_object_get(study, "n_runs")), 12);
  assert_true(json_number_value(json_object_get(study, "confidence")) == 0.9);
  json_t *axis = json_array_get(json_object_get(study, "axes"), 0);
  assert_string_equal(json_string_value(json_object_get(axis, "path")), "clients.web.arrival.rate");
  assert_int_equal(json_array_size(json_object_get(axis, "values")), 2);
  json_t *pts = json_object_get(doc, "points");
  assert_int_equal(json_array_size(pts), 2);
  double started[2];
  for (size_t p = 0; p < 2; p++) {
    json_t *vars = json_object_get(json_array_get(pts, p), "variants");
    assert_int_equal(json_array_size(vars), 2);
    json_t *a = json_array_get(vars, 0);
    assert_string_equal(json_string_value(json_object_get(a, "variant")), "none");
    assert_int_equal(json_integer_value(json_object_get(a, "n")), 3);
    started[p] = json_number_value(json_object_get(json_object_get(a, "calls"), "started"));
    /* The baseline has no paired block; the other variant has. */
    assert_null(json_object_get(a, "paired"));
    assert_non_null(json_object_get(json_array_get(vars, 1), "paired"));
  }
  assert_true(started[1] > 2 * started[0]);
  json_t *runs = json_object_get(doc, "runs");
  assert_int_equal(json_array_size(runs), 12);
  for (size_t i = 0; i < 12; i++) {
    json_t *r = json_array_get(runs, i);
    assert_int_equal(json_integer_value(json_object_get(r, "run")), i);
    assert_int_equal(json_integer_value(json_object_get(r, "point")), i / 6);
    assert_int_equal(json_integer_value(json_object_get(r, "replication")), i % 3);
    /* Common random numbers: replication r has the same seed at every point and variant. */
    assert_true(json_integer_value(json_object_get(r, "seed")) ==
                (json_int_t)expt_study_seed(7, i % 3));
  }
  json_decref(doc);
  /* A baseline that is not a variant is refused before anything runs. */
  spec.baseline = "nope";
  assert_int_equal(expt_study_run(&spec, &o), EXPT_EXIT_USAGE);
  fclose(sink);
  expt_scenario_destroy(scn[0]);
  expt_scenario_destroy(scn[1]);

  /* The table names each point and shows half-widths; --check checks the means at every point
   * and names the point in its FAIL line (goodput at 100/s is about 100/s, never above 150). */
  expt_set cmdline[] = {{"expect.goodput_per_s", "{\"max\": 150}"}};
  assert_int_equal(
      expt_study_load_points(path, cmdline, 1, points, 2, NULL, 0, UINT64_MAX, scn, &err), 0);
  char *text = NULL, *report = NULL;
  size_t text_len = 0, report_len = 0;
  FILE *tf = open_memstream(&text, &text_len), *rf = open_memstream(&report, &report_len);
  expt_run_opts t = {.check = true, .out = tf, .err = rf};
  spec.baseline = "none";
  spec.reps = 2;
  assert_int_equal(expt_study_run(&spec, &t), EXPT_EXIT_CHECK);
  fclose(tf);
  fclose(rf);
  assert_non_null(strstr(text, "2 points x 2 variants x 2 replications, 90 % intervals"));
  assert_non_null(strstr(text, "\nclients.web.arrival.rate=100/s\n"));
  assert_non_null(strstr(text, "\nclients.web.arrival.rate=300/s\n"));
  assert_non_null(strstr(text, " ±"));
  assert_null(strstr(report, "FAIL none (clients.web.arrival.rate=100/s)"));
  assert_non_null(strstr(report, "FAIL none (clients.web.arrival.rate=300/s): goodput_per_s"));
  assert_non_null(strstr(report, "FAIL retries (clients.web.arrival.rate=300/s): goodput_per_s"));
  assert_non_null(strstr(report, "check: 2 passed, 2 failed (against the means over 2"));
  free(text);
  free(report);
  expt_scenario_destroy(scn[0]);
  expt_scenario_destroy(scn[1]);
  expt_scenario_destroy(base);
  /* A point whose value the loader refuses: the error names the point. */
  expt_set bad[] = {{"clients.web.arrival.rate", "fast"}};
  expt_study_point badp[] = {{p0, 1, NULL}, {bad, 1, NULL}};
  retry_error_clear(&err);
  assert_int_not_equal(
      expt_study_load_points(path, NULL, 0, badp, 2, NULL, 0, UINT64_MAX, scn, &err), 0);
  assert_null(scn[0]);
  assert_non_null(strstr(err.message, "(point 1: clients.web.arrival.rate=fast)"));
  char cmd[1300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_known_values),
      cmocka_unit_test(test_threads_same_results),
      cmocka_unit_test(test_probe_counts),
      cmocka_unit_test(test_study_over_points),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
