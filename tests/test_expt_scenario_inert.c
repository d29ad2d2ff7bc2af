/*
 * test_expt_scenario_inert.c: the loader's refusals of values that could change nothing once
 * the whole document is read (expt_scenario_inert.c) and of an outlier detector that enforces
 * nothing (expt_scenario_ctl.c). A route ("when_method") is accepted for a method that reaches
 * its service each way one can (a population's method or fallback, a caller's call or
 * fallback, a herd's init call) and refused otherwise, also when a variant or --set takes the
 * route's method away; a scale event to the count in force is refused only where that count is
 * known (no autoscaler, no operator setting replicas).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "expt/expt_scenario.h"
#include "expt/expt_scenario_int.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

/* Loads text written with single quotes (after fmt's one %s) with the overrides; returns
 * whether it loaded, the error in *err. */
static bool loads(const char *fmt, const char *arg, const expt_set *sets, size_t n,
                  retry_error *err) {
  char text[4096];
  snprintf(text, sizeof text, fmt, arg);
  for (char *p = text; *p != '\0'; p++)
    if (*p == '\'') *p = '"';
  retry_error_clear(err);
  expt_scenario *s = expt_scenario_load_string(text, "t.json", sets, n, err);
  expt_scenario_destroy(s);
  return s != NULL;
}

static void assert_loads(const char *fmt, const char *arg) {
  retry_error err;
  if (!loads(fmt, arg, NULL, 0, &err)) fail_msg("refused: %s: %s", err.path, err.message);
}

/* Refused at path with a message containing part. */
static void assert_refused(const char *fmt, const char *arg, const expt_set *sets, size_t n,
                           const char *path, const char *part) {
  retry_error err;
  assert_false(loads(fmt, arg, sets, n, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.path, path);
  if (strstr(err.message, part) == NULL) fail_msg("message \"%s\" lacks \"%s\"", err.message, part);
}

/* }================================================================== */

/* {==================================================================
 * Routes
 * =================================================================== */

/* Service api is reached by five methods, one each way: web's method and web's fallback,
 * front's call and front's fallback, and the herd's init call. %s: api's route. */
static const char *const ROUTES =
    "{'duration': '10s', 'services': {"
    "  'front': {'service_time': '1ms', 'calls': [{'service': 'api', 'method': '/a.A/Call',"
    "    'on_failure': {'fallback': {'service': 'api', 'method': '/a.A/HandlerFallback'}}}]},"
    "  'api': {'service_time': '1ms', 'calls': ["
    "    {'service': 'db', 'method': '/d.D/Get', 'when_method': %s}]},"
    "  'db': {'service_time': '1ms'}},"
    " 'clients': {"
    "  'web': {'target': 'api', 'methods': ['/a.A/Get'],"
    "    'arrival': {'kind': 'open', 'rate': '10/s'},"
    "    'on_failure': {'fallback': {'service': 'api', 'method': '/a.A/ClientFallback'}}},"
    "  'f': {'target': 'front', 'methods': ['/f.F/Get'],"
    "    'arrival': {'kind': 'open', 'rate': '10/s'}}},"
    " 'events': [{'at': '5s', 'action': 'restart', 'population': 'web',"
    "   'init': {'service': 'api', 'method': '/a.A/Init'}}]}";

/* Each way a method reaches a service counts: a route to it alone is accepted. */
static void test_expt_scenario_inert_route_reached_every_way(void **state) {
  (void)state;
  assert_loads(ROUTES, "'/a.A/Get'");
  assert_loads(ROUTES, "'/a.A/ClientFallback'");
  assert_loads(ROUTES, "'/a.A/Call'");
  assert_loads(ROUTES, "'/a.A/HandlerFallback'");
  assert_loads(ROUTES, "'/a.A/Init'");
  assert_loads(ROUTES, "['/a.A/Get', '/a.A/Init']");
}

/* A method that reaches api no way is refused with the nearest method, at the string or at
 * the array's element; a method that reaches another service only does not count. */
static void test_expt_scenario_inert_route_never_reached(void **state) {
  (void)state;
  assert_refused(ROUTES, "'/a.A/Gte'", NULL, 0, "$.services.api.calls[0].when_method",
                 "did you mean \"/a.A/Get\"?");
  assert_refused(ROUTES, "['/a.A/Get', '/f.F/Get']", NULL, 0,
                 "$.services.api.calls[0].when_method[1]",
                 "no request of \"/f.F/Get\" reaches service \"api\"");
}

/* A service no request reaches at all is not the route's fault: its routes are left alone. */
static void test_expt_scenario_inert_unreached_service_left_alone(void **state) {
  (void)state;
  assert_loads(
      "{'duration': '10s', 'services': {"
      "  'api': {'service_time': '1ms'},"
      "  'spare': {'service_time': '1ms', 'calls': [{'service': 'api',"
      "    'method': '/a.A/Get', 'when_method': %s}]}},"
      " 'clients': {'web': {'target': 'api', 'methods': ['/a.A/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '10/s'}}}}",
      "'/s.S/Never'");
}

/* The routes are judged on each run's document: a variant or --set that takes the method away
 * is refused (naming the variant), one that adds it is accepted. */
static void test_expt_scenario_inert_route_judged_per_run(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {"
      "  'api': {'service_time': '1ms', 'calls': [{'service': 'db', 'method': '/d.D/Get',"
      "    'when_method': '/a.A/Put'}]},"
      "  'db': {'service_time': '1ms'}},"
      " 'clients': {'web': {'target': 'api', 'methods': ['/a.A/Get', '/a.A/Put'],"
      "   'arrival': {'kind': 'open', 'rate': '10/s'}}}%s}";
  assert_loads(fmt, "");
  assert_refused(fmt,
                 ", 'variants': [{'name': 'base'},"
                 " {'name': 'reads', 'set': {'clients.web.methods': ['/a.A/Get']}}]",
                 NULL, 0, "$.services.api.calls[0].when_method", "did you mean \"/a.A/Get\"?");
  retry_error err;
  assert_false(loads(fmt,
                     ", 'variants': [{'name': 'base'},"
                     " {'name': 'reads', 'set': {'clients.web.methods': ['/a.A/Get']}}]",
                     NULL, 0, &err));
  assert_non_null(strstr(err.message, "reads"));
  const expt_set reads[] = {{"clients.web.methods", "[\"/a.A/Get\"]"}};
  /* A base (here without Put, by --set) that only its variants complete is not judged: it
   * never runs, each variant does. */
  retry_error err2;
  assert_true(loads(fmt,
                    ", 'variants': [{'name': 'a', 'set': {'clients.web.methods': ['/a.A/Put']}},"
                    " {'name': 'b', 'set': {'clients.web.methods': ['/a.A/Put', '/b.B/Get']}}]",
                    reads, 1, &err2));
  assert_refused(fmt, "", reads, 1, "$.services.api.calls[0].when_method", "\"/a.A/Put\"");
  const expt_set writes[] = {{"clients.web.methods", "[\"/a.A/Put\"]"}};
  retry_error ok;
  assert_true(loads(fmt, "", writes, 1, &ok));
}

/* Fails the loader's allocation number *ctx (counting down to it). */
static bool fail_at(void *ctx) {
  long *n = ctx;
  return (*n)-- == 0;
}

/* The routes' pass allocates (its lists of methods): failing any allocation of a load that
 * reaches it gives an error and leaks nothing (ASan and valgrind check that), until one is
 * late enough that the load succeeds. (Some older parts of the loader report out of memory
 * with RETRY_ECONFIG, so the code is only required to be an error, as in
 * tests/test_expt_scenario.c's chaos test.) */
static void test_expt_scenario_inert_route_allocation_failures(void **state) {
  (void)state;
  char text[4096];
  snprintf(text, sizeof text, ROUTES, "['/a.A/Get', '/a.A/Init']");
  for (char *p = text; *p != '\0'; p++)
    if (*p == '\'') *p = '"';
  bool done = false;
  for (long k = 0; k < 100000 && !done; k++) {
    long n = k;
    retry_error err;
    retry_error_clear(&err);
    expt__scenario_set_fail_hook(fail_at, &n);
    expt_scenario *s = expt_scenario_load_string(text, "t.json", NULL, 0, &err);
    expt__scenario_set_fail_hook(NULL, NULL);
    done = s != NULL;
    if (!done) assert_int_not_equal(err.code, RETRY_OK);
    expt_scenario_destroy(s);
  }
  assert_true(done);
}

/* }================================================================== */

/* {==================================================================
 * Scale events
 * =================================================================== */

/* %s: the scale events, then the document's other top-level keys. */
static const char *const SCALE =
    "{'duration': '10s', 'services': {'api': {'replicas': 2, 'service_time': '1ms',"
    "   'scale': %s,"
    " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
    "   'arrival': {'kind': 'open', 'rate': '10/s'}}}}";

/* An event to the count in force (the configured one, then the previous event's) is refused;
 * with an autoscaler or an operator that sets the count, the count in force at the event is
 * not known from the config, and the event is accepted. */
static void test_expt_scenario_inert_scale_to_the_count_in_force(void **state) {
  (void)state;
  assert_refused(SCALE, "[{'at': '2s', 'replicas': 2}]}}", NULL, 0,
                 "$.services.api.scale[0].replicas", "2 replicas are already in force");
  assert_refused(SCALE, "[{'at': '2s', 'replicas': 3}, {'at': '3s', 'replicas': 3}]}}", NULL, 0,
                 "$.services.api.scale[1].replicas", "3 replicas are already in force");
  assert_loads(SCALE, "[{'at': '2s', 'replicas': 3}, {'at': '3s', 'replicas': 2}]}}");
  assert_loads(SCALE, "[{'at': '2s', 'replicas': 2}], 'autoscaler': {'max': 4}}}");
  assert_loads(SCALE,
               "[{'at': '2s', 'replicas': 2}]}}, 'events': [{'at': '1s',"
               " 'action': 'replicas', 'service': 'api', 'replicas': 3}]");
}

/* }================================================================== */

/* {==================================================================
 * Outlier detection
 * =================================================================== */

/* %s: the outlier_detection's fields. Four replicas, 50 %: the percent allows an ejection. */
static const char *const OUTLIER =
    "{'duration': '10s', 'services': {'api': {'replicas': 4, 'service_time': '1ms',"
    "   'outlier_detection': {'max_ejection_percent': 50, 'enforcing_consecutive_5xx': 0,"
    "   'enforcing_success_rate': 0%s}}},"
    " 'clients': {'c': {'target': 'api', 'methods': ['/a.A/Get'],"
    "   'arrival': {'kind': 'open', 'rate': '10/s'}}}}";

/* Any one detector that enforces makes the object useful; the local-origin ones only when
 * local errors are split from the replies, where they see results. */
static void test_expt_scenario_inert_outlier_one_detector_enough(void **state) {
  (void)state;
  assert_refused(OUTLIER, "", NULL, 0, "$.services.api.outlier_detection",
                 "no replica could ever be ejected");
  assert_loads(OUTLIER, ", 'enforcing_consecutive_gateway_failure': 1");
  assert_loads(OUTLIER, ", 'enforcing_failure_percentage': 100");
  assert_refused(OUTLIER, ", 'enforcing_local_origin_success_rate': 100", NULL, 0,
                 "$.services.api.outlier_detection", "no replica could ever be ejected");
  assert_loads(OUTLIER, ", 'split_external_local_origin_errors': true");
  assert_refused(OUTLIER,
                 ", 'split_external_local_origin_errors': true,"
                 " 'enforcing_consecutive_local_origin_failure': 0,"
                 " 'enforcing_local_origin_success_rate': 0",
                 NULL, 0, "$.services.api.outlier_detection", "no replica could ever be ejected");
  assert_loads(OUTLIER,
               ", 'split_external_local_origin_errors': true,"
               " 'enforcing_consecutive_local_origin_failure': 0,"
               " 'enforcing_local_origin_success_rate': 0,"
               " 'enforcing_failure_percentage_local_origin': 5");
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expt_scenario_inert_route_reached_every_way),
      cmocka_unit_test(test_expt_scenario_inert_route_never_reached),
      cmocka_unit_test(test_expt_scenario_inert_unreached_service_left_alone),
      cmocka_unit_test(test_expt_scenario_inert_route_judged_per_run),
      cmocka_unit_test(test_expt_scenario_inert_route_allocation_failures),
      cmocka_unit_test(test_expt_scenario_inert_scale_to_the_count_in_force),
      cmocka_unit_test(test_expt_scenario_inert_outlier_one_detector_enough),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
