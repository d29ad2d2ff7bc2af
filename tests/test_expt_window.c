/*
 * test_expt_window.c: a run's figures over named windows (expt_window.h; issue 23, item 4): a
 * storm during the trigger is seen in the "trigger" window, the state after it in "after",
 * and a window the user names gets the same figures; bad "windows" blocks are refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "expt/expt_recovery.h"
#include "expt/expt_scenario.h"
#include "expt/expt_search.h"
#include "expt/expt_output.h"
#include "expt/expt_window.h"
#include "support/world.h"

#define WORLD(windows)                                                                  \
  "{'duration': '30s', " windows                                                        \
  " 'services': {'api': {'workers': 4, 'queue': {'capacity': 100000},"                  \
  "   'service_time': {'dist': 'exponential', 'mean': '50ms'},"                         \
  "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'start': '10s', 'end': '15s'}]}}," \
  " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/M'], 'deadline': '10s',"       \
  "   'arrival': {'kind': 'open', 'rate': '40/s'}}}}"

static double num(const json_t *o, const char *w, const char *k) {
  return json_number_value(json_object_get(json_object_get(o, w), k));
}

/* Every call fails during [10 s, 15 s): the whole run's goodput hides it (about 5/6 of the
 * calls are good), the trigger window shows it, the time after it is healthy. */
static void test_window_trigger_after_and_named(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x, WORLD("'recovery': {'windows': {'trigger': true, 'after': true, 'early': ['2s', '8s']}},"), 1);
  expt_recovery rec;
  const model_config *cfg = expt_scenario_config(x.s, 0);
  assert_int_equal(expt_recovery_of_run(expt_scenario_recovery(x.s, 0), cfg, x.r, &rec), 0);
  bool oom = false;
  json_t *w = expt_window_json(&rec, x.r, expt_output_round, &oom);
  assert_non_null(w);
  assert_false(oom);
  assert_true(num(w, "trigger", "from_s") == 10 && num(w, "trigger", "to_s") == 15);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(w, "trigger"), "buckets")), 5);
  assert_true(num(w, "trigger", "goodput_ratio") < 0.05);
  assert_true(num(w, "after", "from_s") == 15 && num(w, "after", "to_s") == 30);
  assert_true(num(w, "after", "goodput_ratio") > 0.95);
  assert_true(num(w, "early", "from_s") == 2 && num(w, "early", "to_s") == 8);
  assert_true(fabs(num(w, "early", "offered_rps") - 40) < 10);
  json_decref(w);
  test_run_close(&x);
  expt_scenario_destroy(x.s);
  /* Without a "windows" block there is nothing to write. */
  test_run_text(&x, WORLD(""), 1);
  assert_int_equal(expt_recovery_of_run(expt_scenario_recovery(x.s, 0), expt_scenario_config(x.s, 0),
                                        x.r, &rec),
                   0);
  assert_null(expt_window_json(&rec, x.r, expt_output_round, &oom));
  test_run_close(&x);
  expt_scenario_destroy(x.s);
}

/* Values that cannot mean a window are refused, naming the path. */
static void test_window_bad_blocks(void **state) {
  (void)state;
  static const char *const bad[] = {
      WORLD("'recovery': {'windows': {'trigger': false}},"), WORLD("'recovery': {'windows': {'w': ['8s', '2s']}},"),
      WORLD("'recovery': {'windows': {'w': '2s'}},"), WORLD("'recovery': {'windows': {}},"), WORLD("'recovery': {'windows': {'a.b': ['1s', '2s']}},")};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *json = strdup(bad[i]);
    for (char *p = json; *p; p++)
      if (*p == '\'') *p = '"';
    retry_error err;
    retry_error_clear(&err);
    expt_scenario *s = expt_scenario_load_string(json, "<test>", NULL, 0, &err);
    free(json);
    if (s != NULL) fail_msg("case %zu loaded", i);
    print_message("%s: %s\n", err.path, err.message);
    assert_non_null(strstr(err.path, "windows"));
  }
}

/* A search's criterion can be a window's figure against a bound ("at_least" or "at_most", one
 * of them), read into the spec; both at once are refused. */
static void test_window_as_a_search_criterion(void **state) {
  (void)state;
  expt_scenario *s = test_load(WORLD(
      "'recovery': {'windows': {'after': true}}, 'search': {'path': 'clients.c.arrival.rate', 'from': '10/s',"
      " 'to': '200/s', 'metric': 'windows.after.goodput_ratio', 'at_least': 0.9},"));
  expt_search_spec spec;
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_search_spec_from_json(expt_scenario_search_block(s), &spec, &err), 0);
  assert_int_equal(spec.bound_kind, 1);
  assert_true(spec.bound == 0.9);
  assert_string_equal(spec.metric, "windows.after.goodput_ratio");
  expt_search_spec_free(&spec);
  expt_scenario_destroy(s);
  char *json = strdup(WORLD(
      "'search': {'path': 'clients.c.arrival.rate', 'from': '10/s', 'to': '200/s',"
      " 'metric': 'windows.after.goodput_ratio', 'at_least': 0.9, 'at_most': 1},"));
  for (char *p = json; *p; p++)
    if (*p == '\'') *p = '"';
  retry_error_clear(&err);
  assert_null(expt_scenario_load_string(json, "<test>", NULL, 0, &err));
  free(json);
  assert_non_null(strstr(err.path, "at_most"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_window_trigger_after_and_named),
      cmocka_unit_test(test_window_bad_blocks),
      cmocka_unit_test(test_window_as_a_search_criterion),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
