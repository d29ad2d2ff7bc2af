/*
 * test_expt_sweep.c: sweeps. Deriving a loaded scenario with a point's overrides
 * (expt_scenario_derive: the order of the overrides, provenance carried over, no file read
 * again, the variants kept, its errors); ranges with units and integers; --sweep arguments;
 * the scenario's "sweep" block and its errors; the grid's order.
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

#include "expt/expt_scenario.h"
#include "expt/expt_sweep.h"

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

static int32_t workers(const expt_scenario *s, size_t run, const char *name) {
  return service(expt_scenario_config(s, run), name)->workers;
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
 * expt_scenario_derive
 * =================================================================== */

/* --set first, then the point's overrides, then each variant's "set": a variant's own value
 * wins over the point's, the point's over --set. The base is left as it was. */
static void test_derive_applies_overrides_between_set_and_variants(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  expt_set cmd[] = {{"services.api.workers", "5"}, {"services.db.workers", "3"}};
  expt_scenario *base = expt_scenario_load_string(scenario, "d.json", cmd, 2, &err);
  assert_non_null(base);
  expt_set point[] = {{"services.api.workers", "6"}, {"services.db.workers", "8"}};
  expt_scenario *d = expt_scenario_derive(base, point, 2, &err);
  assert_non_null(d);
  assert_int_equal(expt_scenario_n_runs(d), 3);
  assert_int_equal(workers(d, 0, "api"), 6);
  assert_int_equal(workers(d, 0, "db"), 8);
  assert_int_equal(workers(d, 1, "db"), 7); /* variant b's own set wins */
  assert_int_equal(workers(d, 2, "api"), 9);
  assert_int_equal(workers(d, 2, "db"), 8);
  assert_string_equal(expt_scenario_run_name(d, 1), "b");
  /* The base is untouched. */
  assert_int_equal(workers(base, 0, "api"), 5);
  assert_int_equal(workers(base, 0, "db"), 3);
  /* Provenance: the same file, and the overrides in the order applied. */
  assert_string_equal(expt_scenario_sha256(d), expt_scenario_sha256(base));
  assert_string_equal(expt_scenario_name(d), "d");
  assert_same_json(expt_scenario_inputs(d), expt_scenario_inputs(base));
  const json_t *ov = expt_scenario_overrides(d);
  assert_int_equal(json_array_size(ov), 4);
  assert_string_equal(json_string_value(json_object_get(json_array_get(ov, 2), "value")), "6");
  assert_string_equal(json_string_value(json_object_get(json_array_get(ov, 3), "path")),
                      "services.db.workers");
  /* No overrides: the same runs as the base. */
  expt_scenario *same = expt_scenario_derive(base, NULL, 0, &err);
  assert_non_null(same);
  for (size_t i = 0; i < 3; i++)
    assert_same_json(expt_scenario_document(same, i), expt_scenario_document(base, i));
  expt_scenario_destroy(same);
  expt_scenario_destroy(d);
  expt_scenario_destroy(base);
}

/* A derived scenario keeps the variants the base kept (--variant), in the same order. */
static void test_derive_keeps_the_selected_variants(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *base = expt_scenario_load_string(scenario, "d.json", NULL, 0, &err);
  assert_non_null(base);
  const char *names[] = {"c", "b"};
  assert_int_equal(expt_scenario_select(base, names, 2, &err), 0);
  expt_set point[] = {{"services.db.workers", "4"}};
  expt_scenario *d = expt_scenario_derive(base, point, 1, &err);
  assert_non_null(d);
  assert_int_equal(expt_scenario_n_runs(d), 2);
  assert_string_equal(expt_scenario_run_name(d, 0), "b");
  assert_string_equal(expt_scenario_run_name(d, 1), "c");
  assert_int_equal(workers(d, 0, "db"), 7);
  assert_int_equal(workers(d, 1, "db"), 4);
  expt_scenario_destroy(d);
  expt_scenario_destroy(base);
}

/* A path that cannot be set is the --set error, named "override"; a value that does not
 * validate is reported at its JSON path, in the scenario's file. */
static void test_derive_reports_bad_overrides(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *base = expt_scenario_load_string(scenario, "d.json", NULL, 0, &err);
  assert_non_null(base);
  expt_set bad_path[] = {{"services.api.workers.x", "1"}};
  assert_null(expt_scenario_derive(base, bad_path, 1, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.source, "<command line>");
  assert_non_null(strstr(err.message, "override \"services.api.workers.x\""));
  retry_error_clear(&err);
  expt_set bad_value[] = {{"services.api.workers", "0"}};
  assert_null(expt_scenario_derive(base, bad_value, 1, &err));
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.source, "d.json");
  assert_string_equal(err.path, "$.services.api.workers");
  retry_error_clear(&err);
  /* The base still derives after a failed derivation. */
  expt_set ok[] = {{"services.api.workers", "2"}};
  expt_scenario *d = expt_scenario_derive(base, ok, 1, &err);
  assert_non_null(d);
  assert_int_equal(workers(d, 0, "api"), 2);
  expt_scenario_destroy(d);
  expt_scenario_destroy(base);
}

/* Files are read once, at load: deriving after they were deleted still works, with the
 * policy (patched by the point) and the distribution file the load read; the inputs name
 * them with their hashes. */
static void test_derive_reads_no_file_again(void **state) {
  (void)state;
  char dir[] = "/tmp/test_expt_sweep_XXXXXX";
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
  expt_scenario *base = expt_scenario_load(scn, NULL, 0, &err);
  assert_non_null(base);
  assert_int_equal(unlink(pol), 0);
  assert_int_equal(unlink(csv), 0);
  assert_int_equal(unlink(scn), 0);
  assert_int_equal(rmdir(dir), 0);
  expt_set point[] = {{"clients.web.policy.methodConfig[0].retryPolicy.maxAttempts", "4"}};
  expt_scenario *d = expt_scenario_derive(base, point, 1, &err);
  if (d == NULL) fail_msg("%s: %s: %s", err.source, err.path, err.message);
  assert_same_json(expt_scenario_inputs(d), expt_scenario_inputs(base));
  assert_int_equal(json_array_size(expt_scenario_inputs(d)), 3);
  const json_t *doc = expt_scenario_document(d, 0);
  json_t *rp = json_object_get(
      json_array_get(
          json_object_get(
              json_object_get(json_object_get(json_object_get(doc, "clients"), "web"), "policy"),
              "methodConfig"),
          0),
      "retryPolicy");
  assert_int_equal(json_integer_value(json_object_get(rp, "maxAttempts")), 4);
  /* The distribution table is the base's, borrowed: destroying d leaves it to base. */
  const void *table = expt_scenario_config(d, 0)->services[0].service_time.table;
  assert_non_null(table);
  assert_ptr_equal(table, expt_scenario_config(base, 0)->services[0].service_time.table);
  expt_scenario_destroy(d);
  /* A second derivation after the first was destroyed: base's table is still there. */
  d = expt_scenario_derive(base, point, 1, &err);
  assert_non_null(d);
  expt_scenario_destroy(d);
  expt_scenario_destroy(base);
}

/* }================================================================== */

/* {==================================================================
 * Ranges, arguments, the grid
 * =================================================================== */

/* The range's values as compact JSON text, or the reason it was refused. */
static void range_text(const char *from, const char *to, long steps, bool log, char *buf,
                       size_t size) {
  json_t *a = json_loads(from, JSON_DECODE_ANY, NULL), *b = json_loads(to, JSON_DECODE_ANY, NULL);
  assert_non_null(a);
  assert_non_null(b);
  retry_error why;
  retry_error_clear(&why);
  json_t *v = expt_axis_range(a, b, steps, log, &why);
  if (v == NULL) {
    assert_int_equal(why.code, RETRY_EINVAL);
    snprintf(buf, size, "error: %s", why.message);
  } else {
    char *t = json_dumps(v, JSON_COMPACT);
    snprintf(buf, size, "%s", t);
    free(t);
  }
  json_decref(v);
  json_decref(a);
  json_decref(b);
}

static void test_sweep_ranges_keep_units_and_integers(void **state) {
  (void)state;
  char b[512];
  range_text("\"400/s\"", "\"1200/s\"", 3, false, b, sizeof b);
  assert_string_equal(b, "[\"400/s\",\"800/s\",\"1200/s\"]");
  range_text("2", "6", 5, false, b, sizeof b);
  assert_string_equal(b, "[2,3,4,5,6]");
  range_text("0.1", "0.5", 5, false, b, sizeof b);
  assert_string_equal(b,
                      "[0.10000000000000001,0.20000000000000001,0.29999999999999999,"
                      "0.40000000000000002,0.5]");
  range_text("\"0.1s\"", "\"0.5s\"", 5, false, b, sizeof b);
  assert_string_equal(b, "[\"0.1s\",\"0.2s\",\"0.3s\",\"0.4s\",\"0.5s\"]");
  range_text("1", "2", 3, false, b, sizeof b);
  assert_string_equal(b, "[1.0,1.5,2.0]"); /* a step of 0.5: all reals */
  range_text("1", "1000", 4, true, b, sizeof b);
  assert_string_equal(b, "[1,10,100,1000]");
  range_text("\"12s\"", "\"40s\"", 5, false, b, sizeof b);
  assert_string_equal(b, "[\"12s\",\"19s\",\"26s\",\"33s\",\"40s\"]");
  range_text("\"50%\"", "\"100%\"", 2, false, b, sizeof b);
  assert_string_equal(b, "[\"50%\",\"100%\"]");
  range_text("\"-5\"", "\"5\"", 3, false, b, sizeof b);
  assert_string_equal(b, "[\"-5\",\"0\",\"5\"]");
  range_text("3", "3", 1, false, b, sizeof b);
  assert_string_equal(b, "[3]");
  /* Refusals. */
  range_text("\"250ms\"", "\"2s\"", 3, false, b, sizeof b);
  assert_non_null(strstr(b, "the same unit"));
  range_text("1", "\"2s\"", 3, false, b, sizeof b);
  assert_non_null(strstr(b, "the same unit"));
  range_text("1", "4", 10, true, b, sizeof b);
  assert_non_null(strstr(b, "repeats 1"));
  range_text("0", "10", 3, true, b, sizeof b);
  assert_non_null(strstr(b, "both ends > 0"));
  range_text("1", "2", 1, false, b, sizeof b);
  assert_non_null(strstr(b, "steps must be"));
  range_text("\"fast\"", "\"slow\"", 2, false, b, sizeof b);
  assert_non_null(strstr(b, "\"from\": \"fast\" is not a number"));
  range_text("\"0x10\"", "\"0x20\"", 2, false, b, sizeof b);
  assert_non_null(strstr(b, "is not a number"));
  range_text("true", "2", 2, false, b, sizeof b);
  assert_non_null(strstr(b, "must be a number or a string"));
}

static char *axis_text(const expt_sweep *sw, size_t a) {
  return json_dumps(sw->axes[a].values, JSON_COMPACT);
}

static void test_sweep_arguments(void **state) {
  (void)state;
  expt_sweep sw;
  expt_sweep_init(&sw);
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_sweep_add_arg(&sw, "clients.web.arrival.rate=400/s,800/s", &err), 0);
  assert_int_equal(expt_sweep_add_arg(&sw, "services.api.workers=2:6:3", &err), 0);
  assert_int_equal(expt_sweep_add_arg(&sw, "services.api.faults[0].end=12s:40s:2:log", &err), 0);
  assert_int_equal(expt_sweep_add_arg(&sw, "$.services[\"a=b\"].x=true,3,{\"k\":1}", &err), 0);
  assert_int_equal(sw.n_axes, 4);
  char *t = axis_text(&sw, 0);
  assert_string_equal(t, "[\"400/s\",\"800/s\"]");
  free(t);
  t = axis_text(&sw, 1);
  assert_string_equal(t, "[2,4,6]");
  free(t);
  t = axis_text(&sw, 2);
  assert_string_equal(t, "[\"12s\",\"40s\"]");
  free(t);
  assert_string_equal(sw.axes[3].path, "$.services[\"a=b\"].x");
  t = axis_text(&sw, 3);
  assert_string_equal(t, "[true,3,{\"k\":1}]");
  free(t);
  assert_int_equal(expt_sweep_n_points(&sw), 2 * 3 * 2 * 3);
  /* Errors, each naming the argument. */
  static const struct {
    const char *arg, *msg;
  } bad[] = {
      {"services.api.workers", "expected PATH=v1,v2,... or PATH=FROM:TO:N[:log]"},
      {"=1,2", "expected PATH="},
      {"services..workers=1", "a key is empty"},
      {"services.api.workers=", "no values after '='"},
      {"services.api.workers=1,,2", "a value is empty"},
      {"services.api.workers=1,null", "a value cannot be null"},
      {"services.api.workers=1:5:3:cubic", "\"log\" or \"linear\""},
      {"services.api.workers=1:5:0", "steps must be"},
      {"services.api.workers=1s:5:3", "the same unit"},
      {"clients.web.arrival.rate=1,2", "the path is swept twice"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    retry_error_clear(&err);
    assert_int_not_equal(expt_sweep_add_arg(&sw, bad[i].arg, &err), 0);
    assert_string_equal(err.source, "<command line>");
    if (strstr(err.message, bad[i].msg) == NULL || strncmp(err.message, "--sweep \"", 9) != 0)
      fail_msg("%s: got %s", bad[i].arg, err.message);
  }
  assert_int_equal(sw.n_axes, 4);
  expt_sweep_free(&sw);
  /* Too many points. */
  expt_sweep_init(&sw);
  retry_error_clear(&err);
  assert_int_equal(expt_sweep_add_arg(&sw, "a=1:1000:1000", &err), 0);
  assert_int_equal(expt_sweep_add_arg(&sw, "b=1:100:100", &err), 0);
  assert_int_not_equal(expt_sweep_add_arg(&sw, "c=1:2:2", &err), 0);
  if (strstr(err.message, "more than 100000 points") == NULL) fail_msg("%s", err.message);
  expt_sweep_free(&sw);
}

/* The first axis slowest; each point's sets carry the values' JSON text. */
static void test_sweep_grid_order(void **state) {
  (void)state;
  expt_sweep sw;
  expt_sweep_init(&sw);
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_sweep_add_arg(&sw, "a=1,2", &err), 0);
  assert_int_equal(expt_sweep_add_arg(&sw, "b=x,y,z", &err), 0);
  assert_int_equal(expt_sweep_n_points(&sw), 6);
  static const char *const want[6][2] = {{"1", "\"x\""}, {"1", "\"y\""}, {"1", "\"z\""},
                                         {"2", "\"x\""}, {"2", "\"y\""}, {"2", "\"z\""}};
  for (size_t i = 0; i < 6; i++) {
    expt_set sets[2];
    expt_sweep_point(&sw, i, sets);
    assert_string_equal(sets[0].path, "a");
    assert_string_equal(sets[0].value, want[i][0]);
    assert_string_equal(sets[1].path, "b");
    assert_string_equal(sets[1].value, want[i][1]);
  }
  json_t *p4 = expt_sweep_point_json(&sw, 4);
  char *t = json_dumps(p4, JSON_COMPACT);
  assert_string_equal(t, "{\"a\":2,\"b\":\"y\"}");
  free(t);
  json_decref(p4);
  json_t *axes = expt_sweep_axes_json(&sw);
  t = json_dumps(axes, JSON_COMPACT);
  assert_string_equal(t,
                      "[{\"path\":\"a\",\"values\":[1,2]},{\"path\":\"b\",\"values\":[\"x\","
                      "\"y\",\"z\"]}]");
  free(t);
  json_decref(axes);
  expt_sweep_free(&sw);
  expt_sweep_init(&sw);
  assert_int_equal(expt_sweep_n_points(&sw), 1);
  expt_sweep_free(&sw);
}

/* }================================================================== */

/* {==================================================================
 * The scenario's "sweep" block
 * =================================================================== */

/* The scenario with extra top-level members (a JSON fragment such as "\"sweep\": [...]"). */
static char *with(const char *members) {
  size_t n = strlen(scenario) + strlen(members) + 8;
  char *t = malloc(n);
  assert_non_null(t);
  snprintf(t, n, "%.*s, %s}", (int)(strlen(scenario) - 1), scenario, members);
  return t;
}

static void expect_error(const char *members, const char *path, const char *msg) {
  char *t = with(members);
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(t, "d.json", NULL, 0, &err);
  if (s != NULL) fail_msg("loaded: %s", members);
  if (strcmp(err.path, path) != 0 || strstr(err.message, msg) == NULL)
    fail_msg("%s:\n got %s: %s\nwant %s: ...%s...", members, err.path, err.message, path, msg);
  assert_string_equal(err.source, "d.json");
  free(t);
}

static void test_sweep_block_loads_and_drives_the_points(void **state) {
  (void)state;
  char *t = with(
      "\"sweep\": [{\"path\": \"services.db.workers\", \"values\": [1, 5]},"
      " {\"path\": \"clients.web.arrival.rate\", \"from\": \"100/s\", \"to\": "
      "\"300/s\", \"steps\": 3}]");
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(t, "d.json", NULL, 0, &err);
  free(t);
  if (s == NULL) fail_msg("%s: %s", err.path, err.message);
  assert_non_null(expt_scenario_sweep_block(s));
  assert_null(expt_scenario_search_block(s));
  expt_sweep sw;
  assert_int_equal(expt_sweep_for_scenario(s, NULL, &sw, &err), 0);
  assert_int_equal(expt_sweep_n_points(&sw), 6);
  /* Point 5 = (db 5, 300/s): variant b keeps its own db workers. */
  expt_set sets[2];
  expt_sweep_point(&sw, 5, sets);
  expt_scenario *d = expt_scenario_derive(s, sets, 2, &err);
  assert_non_null(d);
  assert_int_equal(workers(d, 0, "db"), 5);
  assert_int_equal(workers(d, 1, "db"), 7);
  assert_true(expt_scenario_config(d, 2)->clients[0].rate.rate[0] == 300);
  expt_scenario_destroy(d);
  expt_sweep_free(&sw);
  /* The command line's axes replace the scenario's, and are checked the same way. */
  expt_sweep cmd;
  expt_sweep_init(&cmd);
  assert_int_equal(expt_sweep_add_arg(&cmd, "services.api.workers=1:3:3", &err), 0);
  assert_int_equal(expt_sweep_for_scenario(s, &cmd, &sw, &err), 0);
  assert_int_equal(sw.n_axes, 1);
  assert_int_equal(expt_sweep_n_points(&sw), 3);
  expt_sweep_free(&sw);
  assert_int_equal(expt_sweep_add_arg(&cmd, "services.api.queue.capacity=1,2", &err), 0);
  assert_int_equal(expt_sweep_for_scenario(s, &cmd, &sw, &err), RETRY_ECONFIG);
  assert_string_equal(err.source, "<command line>");
  assert_string_equal(err.message,
                      "--sweep \"services.api.queue.capacity\": reaches no value in variant "
                      "\"a\" (\"services.api.queue\" is not there): a sweep changes values, it "
                      "does not add them");
  expt_sweep_free(&cmd);
  expt_scenario_destroy(s);
}

static void test_sweep_block_errors(void **state) {
  (void)state;
  expect_error("\"sweep\": {}", "$.sweep", "a non-empty array of at most 8 axes");
  expect_error("\"sweep\": [3]", "$.sweep[0]", "each axis must be an object");
  expect_error("\"sweep\": [{\"values\": [1]}]", "$.sweep[0].path", "\"path\" is required");
  expect_error("\"sweep\": [{\"path\": \"a..b\", \"values\": [1]}]", "$.sweep[0].path",
               "bad path \"a..b\": a key is empty");
  expect_error("\"sweep\": [{\"path\": \"variants[0].name\", \"values\": [\"x\"]}]",
               "$.sweep[0].path", "\"variants\" cannot be varied");
  expect_error("\"sweep\": [{\"path\": \"services.api.workers\", \"values\": []}]",
               "$.sweep[0].values", "a non-empty array");
  expect_error("\"sweep\": [{\"path\": \"services.api.workers\", \"values\": [1, null]}]",
               "$.sweep[0].values[1]", "cannot be null");
  expect_error("\"sweep\": [{\"path\": \"services.api.workers\", \"values\": [1], \"from\": 1}]",
               "$.sweep[0]", "either \"values\" or");
  expect_error("\"sweep\": [{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 3}]",
               "$.sweep[0].steps", "\"steps\" is required");
  expect_error(
      "\"sweep\": [{\"path\": \"services.api.workers\", \"from\": \"1s\", \"to\": 3, "
      "\"steps\": 3}]",
      "$.sweep[0]", "the same unit");
  expect_error(
      "\"sweep\": [{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 3, "
      "\"steps\": 3, \"scale\": \"cubic\"}]",
      "$.sweep[0].scale", "\"linear\" or \"log\"");
  expect_error("\"sweep\": [{\"path\": \"services.api.workers\", \"valuez\": [1]}]",
               "$.sweep[0].valuez", "not allowed in a sweep's axis");
  expect_error(
      "\"sweep\": [{\"path\": \"services.api.workers\", \"values\": [1]},"
      " {\"path\": \"services.api.workers\", \"values\": [2]}]",
      "$.sweep[1].path", "swept twice (first at [0])");
  /* A value the sweep would set must not fail validation only at run time: it is reported
   * as the path that reaches nothing, or where its values are wrong, when derived. */
  expect_error("\"sweep\": [{\"path\": \"services.api.queue.capacity\", \"values\": [1]}]",
               "$.sweep[0].path",
               "\"services.api.queue.capacity\" reaches no value in variant \"a\" "
               "(\"services.api.queue\" is not there)");
  expect_error(
      "\"sweep\": [{\"path\": \"services.api.workers\", \"values\": [1]}],"
      " \"search\": {\"path\": \"services.api.workers\", \"from\": 1, \"to\": 9}",
      "$.search", "a \"sweep\" or a \"search\", not both");
  /* A variant may not change the sweep. */
  char *t = with("\"sweep\": [{\"path\": \"services.api.workers\", \"values\": [1]}]");
  char *v = strstr(t, "{\"name\": \"a\"}");
  assert_non_null(v);
  const char *repl = "{\"name\": \"a\", \"set\": {\"sweep\": []}}";
  size_t n = strlen(t) + strlen(repl);
  char *u = malloc(n);
  assert_non_null(u);
  snprintf(u, n, "%.*s%s%s", (int)(v - t), t, repl, v + strlen("{\"name\": \"a\"}"));
  retry_error err;
  retry_error_clear(&err);
  assert_null(expt_scenario_load_string(u, "d.json", NULL, 0, &err));
  assert_string_equal(err.path, "$.variants[0].set");
  assert_non_null(strstr(err.message, "a variant may not change \"sweep\""));
  free(u);
  free(t);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_derive_applies_overrides_between_set_and_variants),
      cmocka_unit_test(test_derive_keeps_the_selected_variants),
      cmocka_unit_test(test_derive_reports_bad_overrides),
      cmocka_unit_test(test_derive_reads_no_file_again),
      cmocka_unit_test(test_sweep_ranges_keep_units_and_integers),
      cmocka_unit_test(test_sweep_arguments),
      cmocka_unit_test(test_sweep_grid_order),
      cmocka_unit_test(test_sweep_block_loads_and_drives_the_points),
      cmocka_unit_test(test_sweep_block_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
