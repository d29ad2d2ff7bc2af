/*
 * test_stats_coverage.c: statistical tests of a study that can fail.
 *
 * 1. Coverage: on an M/M/1 (open Poisson arrivals at 50/s, one worker, exponential service of
 *    mean 10 ms, no network, no retries) the mean time in system is 1 / (mu - lambda) = 20 ms.
 *    400 independent repetitions, each of 10 replications run the way a study runs them
 *    (expt_study_run_jobs on the seeds expt_study_seed(base, r), the metric latency_ms.mean of
 *    each run object): the 95 % Student t interval over the 10 covers 20 ms in 90-99 % of
 *    the repetitions, and a wrong value (20 % off) in fewer than a quarter: the test has power.
 * 2. The tipping point: with no retries, a service recovers after a short trigger while the
 *    offered load is below its capacity, and never above it, so a search over the offered
 *    load (expt_search_run_study, as `retrysim run` with a "search") brackets the capacity,
 *    for two capacities.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expt/expt_run.h"
#include "expt/expt_scenario.h"
#include "expt/expt_search.h"
#include "expt/expt_study.h"
#include "sim/sim_stats.h"

/* {==================================================================
 * Coverage of the t interval
 * =================================================================== */

/* 10 s of arrivals: about 500 calls a run, so that 4000 runs take a few seconds. The
 * relaxation time of this queue is about 1 / (mu (1 - sqrt(rho))^2) = 0.12 s, so starting
 * empty biases a run's mean by well under a tenth of its standard error. */
static const char mm1[] =
    "{\"name\": \"mm1\", \"duration\": \"10s\", \"drain\": \"60s\","
    " \"services\": {\"q\": {\"workers\": 1, \"queue\": {\"capacity\": 100000},"
    "   \"service_time\": {\"dist\": \"exponential\", \"mean\": \"10ms\"}}},"
    " \"clients\": {\"c\": {\"target\": \"q\", \"arrival\": {\"kind\": \"open\", \"rate\": "
    "\"50/s\"}, \"methods\": [\"/m.M/M\"]}}}";

#define REPETITIONS 400
#define REPS 10

/* Under valgrind (tools/test/run-tests.sh passes RUNNER on), which checks memory and not
 * statistics, the same tests run smaller: the first 40 repetitions (their count is as
 * deterministic as the 400's: the seeds are fixed), and one capacity searched with fewer
 * replications a probe and 6 probes (45, 145, 95, 120, 107, 101: a bracket of 6 %). */
static bool under_valgrind(void) {
  const char *r = getenv("RUNNER");
  return r != NULL && strstr(r, "valgrind") != NULL;
}

static double latency_mean(const json_t *run) {
  const json_t *v = expt_scenario_path_get(run, "latency_ms.mean", NULL);
  assert_true(json_is_number(v));
  return json_number_value(v);
}

static void test_t_interval_covers_the_mm1_mean(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(mm1, "mm1.json", NULL, 0, &err);
  if (s == NULL) fail_msg("%s: %s", err.path, err.message);
  const size_t repetitions = under_valgrind() ? 40 : REPETITIONS;
  const size_t n = repetitions * REPS;
  expt_study_job *jobs = calloc(n, sizeof *jobs);
  json_t **runs = calloc(n, sizeof *runs);
  assert_non_null(jobs);
  assert_non_null(runs);
  /* Repetition j is a study on base seed 1000 + j: its replications are seeds
   * expt_study_seed(1000 + j, r), all distinct. */
  for (size_t j = 0; j < repetitions; j++)
    for (size_t r = 0; r < REPS; r++)
      jobs[j * REPS + r] = (expt_study_job){s, 0, expt_study_seed(1000 + j, r), NULL};
  assert_int_equal(expt_study_run_jobs(jobs, n, 2, NULL, runs, &err), 0);
  const double truth = 1000.0 / (100.0 - 50.0); /* ms */
  int covered = 0, covered_wrong = 0;
  double grand = 0;
  for (size_t j = 0; j < repetitions; j++) {
    double x[REPS];
    for (size_t r = 0; r < REPS; r++) {
      x[r] = latency_mean(runs[j * REPS + r]);
      grand += x[r];
    }
    sim_stats_interval iv;
    sim_stats_mean_interval(x, REPS, 0.95, &iv);
    covered += iv.lo <= truth && truth <= iv.hi;
    covered_wrong += iv.lo <= 1.2 * truth && 1.2 * truth <= iv.hi;
  }
  grand /= (double)n;
  fprintf(stderr,
          "  M/M/1: mean of %zu runs %.3f ms (true %.3f); the 95 %% interval covered it "
          "in %d of %zu repetitions, 24 ms in %d\n",
          n, grand, truth, covered, repetitions, covered_wrong);
  /* 95 % nominal; over 400 repetitions the share's standard deviation is 1.1 %. */
  assert_true(covered >= (int)(repetitions * 90 / 100) && covered <= (int)(repetitions * 99 / 100));
  assert_true(covered_wrong < (int)(repetitions / 4));
  assert_true(fabs(grand - truth) < 0.02 * truth);
  for (size_t i = 0; i < n; i++)
    json_decref(runs[i]);
  free(runs);
  free(jobs);
  expt_scenario_destroy(s);
}

/* }================================================================== */

/* {==================================================================
 * The tipping point of a service without retries
 * =================================================================== */

/* `workers` workers of 100 ms each: a capacity of 10 x workers calls a second. From 20 s to
 * 21 s all but one worker are lost, so a backlog builds; after it, the backlog drains while
 * the offered load is below the capacity (in about rho / (1 - rho) seconds) and never above
 * it. 200 s leave time to drain up to about 0.99 of the capacity, so P(recovered) falls
 * through 0.5 within a percent of it. The search's range puts no integer probe where that
 * is undecided by more than one step. */
static void search_capacity(int workers, const char *from, const char *to, double capacity,
                            int reps, int max_reps, int n_probes) {
  char text[1600];
  snprintf(text, sizeof text,
           "{\"name\": \"tip\", \"duration\": \"200s\", \"drain\": \"0s\","
           " \"services\": {\"api\": {\"workers\": %d, \"queue\": {\"capacity\": 1000000},"
           "   \"service_time\": \"100ms\","
           "   \"faults\": [{\"kind\": \"capacity\", \"workers\": 1, \"start\": \"20s\", \"end\": "
           "\"21s\"}]}},"
           " \"clients\": {\"web\": {\"target\": \"api\", \"arrival\": {\"kind\": \"open\", "
           "\"rate\": \"%s\"}, \"methods\": [\"/a.A/M\"]}},"
           " \"search\": {\"path\": \"clients.web.arrival.rate\", \"from\": \"%s\", \"to\": "
           "\"%s\", \"p\": 0.5, \"reps\": %d, \"max_reps\": %d, \"probes\": %d}}",
           workers, from, from, to, reps, max_reps, n_probes);
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(text, "tip.json", NULL, 0, &err);
  if (s == NULL) fail_msg("%s: %s", err.path, err.message);
  char dir[] = "/tmp/test_stats_coverage_XXXXXX";
  assert_non_null(mkdtemp(dir));
  FILE *out = tmpfile();
  assert_non_null(out);
  expt_run_opts opts = {.out_dir = dir, .quiet = true, .out = out, .err = stderr};
  expt_study_spec tmpl = {.source = "tip.json", .base = s, .reps = 1, .confidence = 0.95, .jobs = 2};
  assert_int_equal(expt_search_run_study(s, &tmpl, &opts), EXPT_EXIT_OK);
  fclose(out);
  char path[128];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  json_t *doc = json_load_file(path, 0, NULL);
  assert_non_null(doc);
  const json_t *res = json_array_get(json_object_get(doc, "search"), 0);
  assert_string_equal(json_string_value(json_object_get(res, "outcome")), "bracketed");
  const json_t *b = json_object_get(res, "boundary");
  double pass = atof(json_string_value(json_object_get(b, "pass")));
  double fail = atof(json_string_value(json_object_get(b, "fail")));
  fprintf(stderr, "  capacity %g/s: the search brackets the boundary in [%g/s, %g/s]\n", capacity,
          pass, fail);
  assert_true(pass <= capacity && capacity <= fail);
  if (n_probes == 12) assert_true(fail - pass <= 1); /* integers: adjacent at the end */
  /* Never above, always below: every probe 3 % or more from the capacity went its way. */
  const json_t *probes = json_object_get(res, "probes");
  for (size_t i = 0; i < json_array_size(probes); i++) {
    const json_t *p = json_array_get(probes, i);
    double x = json_number_value(json_object_get(p, "x"));
    const char *verdict = json_string_value(json_object_get(p, "verdict"));
    if (x <= 0.97 * capacity) assert_string_equal(verdict, "pass");
    if (x >= 1.03 * capacity) assert_string_equal(verdict, "fail");
  }
  /* Every replication of every probe is in the runs, with its seed. */
  size_t total = 0;
  for (size_t i = 0; i < json_array_size(probes); i++)
    total += (size_t)json_integer_value(json_object_get(json_array_get(probes, i), "n"));
  assert_int_equal(json_array_size(json_object_get(doc, "runs")), total);
  json_decref(doc);
  unlink(path);
  snprintf(path, sizeof path, "%s/search.csv", dir);
  unlink(path);
  rmdir(dir);
  expt_scenario_destroy(s);
}

static void test_search_brackets_the_capacity(void **state) {
  (void)state;
  if (under_valgrind()) {
    search_capacity(10, "45/s", "145/s", 100, 10, 20, 6);
    return;
  }
  search_capacity(10, "45/s", "145/s", 100, 20, 100, 12);
  search_capacity(20, "90/s", "290/s", 200, 20, 100, 12);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_t_interval_covers_the_mm1_mean),
      cmocka_unit_test(test_search_brackets_the_capacity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
