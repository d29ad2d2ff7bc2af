/*
 * test_cli_sweep.c: deriving a loaded scenario with a sweep point's overrides
 * (cli_scenario_derive): the order of the overrides, provenance carried over, no file read
 * again, the variants kept, and its errors.
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

#include "cli/cli_scenario.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

/* Two services, a retry policy, three variants; a variant sets the workers of "db". */
static const char scenario[] =
    "{\"name\": \"d\", \"duration\": \"10s\","
    " \"services\": {\"api\": {\"workers\": 4, \"service_time\": \"5ms\"},"
    "                \"db\": {\"workers\": 2, \"service_time\": \"1ms\"}},"
    " \"clients\": {\"web\": {\"target\": \"api\", \"arrival\": {\"kind\": \"open\", \"rate\": "
    "\"100/s\"}, \"methods\": [\"/api.Api/Get\"]}},"
    " \"variants\": [{\"name\": \"a\"},"
    "              {\"name\": \"b\", \"set\": {\"services.db.workers\": 7}},"
    "              {\"name\": \"c\", \"set\": {\"services.api.workers\": 9}}]}";

static const model_service_cfg *service(const model_config *cfg, const char *name) {
  for (size_t i = 0; i < cfg->n_services; i++)
    if (strcmp(cfg->services[i].name, name) == 0) return &cfg->services[i];
  fail_msg("no service %s", name);
  return NULL;
}

static int32_t workers(const cli_scenario *s, size_t run, const char *name) {
  return service(cli_scenario_config(s, run), name)->workers;
}

static char *dumps(const json_t *j) { return json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT); }

static void assert_same_json(const json_t *a, const json_t *b) {
  char *x = dumps(a), *y = dumps(b);
  assert_string_equal(x, y);
  free(x);
  free(y);
}

/* }================================================================== */

/* {==================================================================
 * cli_scenario_derive
 * =================================================================== */

/* --set first, then the point's overrides, then each variant's "set": a variant's own value
 * wins over the point's, the point's over --set. The base is left as it was. */
static void test_derive_applies_overrides_between_set_and_variants(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  cli_set cmd[] = {{"services.api.workers", "5"}, {"services.db.workers", "3"}};
  cli_scenario *base = cli_scenario_load_string(scenario, "d.json", cmd, 2, &err);
  assert_non_null(base);
  cli_set point[] = {{"services.api.workers", "6"}, {"services.db.workers", "8"}};
  cli_scenario *d = cli_scenario_derive(base, point, 2, &err);
  assert_non_null(d);
  assert_int_equal(cli_scenario_n_runs(d), 3);
  assert_int_equal(workers(d, 0, "api"), 6);
  assert_int_equal(workers(d, 0, "db"), 8);
  assert_int_equal(workers(d, 1, "db"), 7); /* variant b's own set wins */
  assert_int_equal(workers(d, 2, "api"), 9);
  assert_int_equal(workers(d, 2, "db"), 8);
  assert_string_equal(cli_scenario_run_name(d, 1), "b");
  /* The base is untouched. */
  assert_int_equal(workers(base, 0, "api"), 5);
  assert_int_equal(workers(base, 0, "db"), 3);
  /* Provenance: the same file, and the overrides in the order applied. */
  assert_string_equal(cli_scenario_sha256(d), cli_scenario_sha256(base));
  assert_string_equal(cli_scenario_name(d), "d");
  assert_same_json(cli_scenario_inputs(d), cli_scenario_inputs(base));
  const json_t *ov = cli_scenario_overrides(d);
  assert_int_equal(json_array_size(ov), 4);
  assert_string_equal(json_string_value(json_object_get(json_array_get(ov, 2), "value")), "6");
  assert_string_equal(json_string_value(json_object_get(json_array_get(ov, 3), "path")),
                      "services.db.workers");
  /* No overrides: the same runs as the base. */
  cli_scenario *same = cli_scenario_derive(base, NULL, 0, &err);
  assert_non_null(same);
  for (size_t i = 0; i < 3; i++)
    assert_same_json(cli_scenario_document(same, i), cli_scenario_document(base, i));
  cli_scenario_destroy(same);
  cli_scenario_destroy(d);
  cli_scenario_destroy(base);
}

/* A derived scenario keeps the variants the base kept (--variant), in the same order. */
static void test_derive_keeps_the_selected_variants(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  cli_scenario *base = cli_scenario_load_string(scenario, "d.json", NULL, 0, &err);
  assert_non_null(base);
  const char *names[] = {"c", "b"};
  assert_int_equal(cli_scenario_select(base, names, 2, &err), 0);
  cli_set point[] = {{"services.db.workers", "4"}};
  cli_scenario *d = cli_scenario_derive(base, point, 1, &err);
  assert_non_null(d);
  assert_int_equal(cli_scenario_n_runs(d), 2);
  assert_string_equal(cli_scenario_run_name(d, 0), "b");
  assert_string_equal(cli_scenario_run_name(d, 1), "c");
  assert_int_equal(workers(d, 0, "db"), 7);
  assert_int_equal(workers(d, 1, "db"), 4);
  cli_scenario_destroy(d);
  cli_scenario_destroy(base);
}

/* A path that cannot be set is the --set error, named "override"; a value that does not
 * validate is reported at its JSON path, in the scenario's file. */
static void test_derive_reports_bad_overrides(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  cli_scenario *base = cli_scenario_load_string(scenario, "d.json", NULL, 0, &err);
  assert_non_null(base);
  cli_set bad_path[] = {{"services.api.workers.x", "1"}};
  assert_null(cli_scenario_derive(base, bad_path, 1, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.source, "<command line>");
  assert_non_null(strstr(err.message, "override \"services.api.workers.x\""));
  retry_error_clear(&err);
  cli_set bad_value[] = {{"services.api.workers", "0"}};
  assert_null(cli_scenario_derive(base, bad_value, 1, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.source, "d.json");
  assert_string_equal(err.path, "$.services.api.workers");
  retry_error_clear(&err);
  /* The base still derives after a failed derivation. */
  cli_set ok[] = {{"services.api.workers", "2"}};
  cli_scenario *d = cli_scenario_derive(base, ok, 1, &err);
  assert_non_null(d);
  assert_int_equal(workers(d, 0, "api"), 2);
  cli_scenario_destroy(d);
  cli_scenario_destroy(base);
}

/* Files are read once, at load: deriving after they were deleted still works, with the
 * policy (patched by the point) and the distribution file the load read; the inputs name
 * them with their hashes. */
static void test_derive_reads_no_file_again(void **state) {
  (void)state;
  char dir[] = "/tmp/test_cli_sweep_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char scn[128], pol[128], csv[128];
  snprintf(scn, sizeof scn, "%s/s.json", dir);
  snprintf(pol, sizeof pol, "%s/p.json", dir);
  snprintf(csv, sizeof csv, "%s/lat.csv", dir);
  FILE *f = fopen(pol, "w");
  assert_non_null(f);
  fputs(
      "{\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 3,"
      " \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2,"
      " \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}",
      f);
  fclose(f);
  f = fopen(csv, "w");
  assert_non_null(f);
  fputs("latency_ms\n1\n2\n3\n", f);
  fclose(f);
  f = fopen(scn, "w");
  assert_non_null(f);
  fputs(
      "{\"duration\": \"10s\", \"services\": {\"api\": {\"service_time\": "
      "{\"dist\": \"empirical\", \"file\": \"lat.csv\"}}},"
      " \"clients\": {\"web\": {\"target\": \"api\", \"policy\": \"p.json\","
      " \"arrival\": {\"kind\": \"open\", \"rate\": \"100/s\"}, \"methods\": [\"/a.A/M\"]}}}",
      f);
  fclose(f);
  retry_error err;
  retry_error_clear(&err);
  cli_scenario *base = cli_scenario_load(scn, NULL, 0, &err);
  assert_non_null(base);
  assert_int_equal(unlink(pol), 0);
  assert_int_equal(unlink(csv), 0);
  assert_int_equal(unlink(scn), 0);
  assert_int_equal(rmdir(dir), 0);
  cli_set point[] = {{"clients.web.policy.methodConfig[0].retryPolicy.maxAttempts", "4"}};
  cli_scenario *d = cli_scenario_derive(base, point, 1, &err);
  if (d == NULL) fail_msg("%s: %s: %s", err.source, err.path, err.message);
  assert_same_json(cli_scenario_inputs(d), cli_scenario_inputs(base));
  assert_int_equal(json_array_size(cli_scenario_inputs(d)), 3);
  const json_t *doc = cli_scenario_document(d, 0);
  json_t *rp = json_object_get(
      json_array_get(
          json_object_get(
              json_object_get(json_object_get(json_object_get(doc, "clients"), "web"), "policy"),
              "methodConfig"),
          0),
      "retryPolicy");
  assert_int_equal(json_integer_value(json_object_get(rp, "maxAttempts")), 4);
  /* The distribution table is the base's, borrowed: destroying d leaves it to base. */
  const void *table = cli_scenario_config(d, 0)->services[0].service_time.table;
  assert_non_null(table);
  assert_ptr_equal(table, cli_scenario_config(base, 0)->services[0].service_time.table);
  cli_scenario_destroy(d);
  /* A second derivation after the first was destroyed: base's table is still there. */
  d = cli_scenario_derive(base, point, 1, &err);
  assert_non_null(d);
  cli_scenario_destroy(d);
  cli_scenario_destroy(base);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_derive_applies_overrides_between_set_and_variants),
      cmocka_unit_test(test_derive_keeps_the_selected_variants),
      cmocka_unit_test(test_derive_reports_bad_overrides),
      cmocka_unit_test(test_derive_reads_no_file_again),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
