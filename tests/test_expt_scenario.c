/*
 * test_expt_scenario.c: the scenario loader. Units (durations, rates), SHA-256 on the FIPS 180-4
 * vectors, hand-written documents checked field by field against model_config, --set and
 * variants, policies inline and in files, the data-driven suites
 * tests/data/scenarios/{valid,invalid}/<case>, a chaos-allocator run that fails every
 * allocation in turn, and a no-crash run that replaces every value of a rich document.
 * The data directory is $TEST_DATA_DIR, default "tests/data" (tests run from the repo root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "expt/expt_scenario.h"
#include "expt/expt_output.h"
#include "expt/expt_scenario_int.h"
#include "models/model_estimate.h"
#include "models/model_world.h"
#include "sim/sim_event.h"
#include "tests/support/files.h"
#include "tests/support/oom.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

#define MS (INT64_C(1000000))
#define SEC (INT64_C(1000000000))

static const char *data_dir(void) {
  const char *d = getenv("TEST_DATA_DIR");
  return d != NULL && d[0] != '\0' ? d : "tests/data";
}

/* Loads text with the overrides and fails the test when it does not load. */
static expt_scenario *load_ok_sets(const char *text, const expt_set *sets, size_t n) {
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(text, "t.json", sets, n, &err);
  if (s == NULL) {
    char buf[700];
    retry_error_format(&err, buf, sizeof buf);
    fail_msg("load failed: %s", buf);
  }
  return s;
}

static expt_scenario *load_ok(const char *text) { return load_ok_sets(text, NULL, 0); }

/* Loads text expecting an error, returned in *err. */
static void load_bad_sets(const char *text, const expt_set *sets, size_t n, retry_error *err) {
  retry_error_clear(err);
  expt_scenario *s = expt_scenario_load_string(text, "t.json", sets, n, err);
  if (s != NULL) {
    expt_scenario_destroy(s);
    fail_msg("loaded but should not have: %s", text);
  }
  assert_int_not_equal(err->code, RETRY_OK);
}

/* A small valid scenario for overrides to start from. */
static const char small[] =
    "{\"duration\": \"10s\","
    " \"services\": {\"api\": {\"service_time\": \"5ms\"}},"
    " \"clients\": {\"web\": {\"target\": \"api\", \"arrival\": {\"kind\": \"open\", \"rate\": "
    "\"100/s\"},"
    "   \"methods\": [\"/api.Api/Get\"]}}}";

/* A retry policy as a service config object, in a space. */
#define RETRY_POLICY(space, codes)                                                       \
  "{\"retrysim\": {\"statusSpace\": \"" space                                            \
  "\"}, \"methodConfig\": [{\"name\": [{}], "                                            \
  "\"retryPolicy\": {\"maxAttempts\": 3, \"initialBackoff\": \"0.1s\", \"maxBackoff\": " \
  "\"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [" codes "]}}]}"

/* }================================================================== */

/* {==================================================================
 * Units and SHA-256
 * =================================================================== */

static void test_expt_scenario_durations_take_units_and_round_to_the_ns(void **state) {
  (void)state;
  static const struct {
    const char *s;
    int64_t ns;
  } cases[] = {
      {"0", 0},
      {"0s", 0},
      {"100ns", 100},
      {"500us", 500000},
      {"250ms", 250 * MS},
      {"1.5s", 1500 * MS},
      {"0.1s", 100 * MS},
      {"2m", 120 * SEC},
      {"1h", 3600 * SEC},
      {"1.5ns", 2},      /* rounded to the nearest ns */
      {"0.0001ms", 100}, /* 100 ns */
      {"1.000000001s", SEC + 1},
      {"007s", 7 * SEC}, /* leading zeros are harmless */
      {"9223372036854775807ns", INT64_MAX},
      {"9223372036.854775807s", INT64_MAX},
      {"2562047h", INT64_C(2562047) * 3600 * SEC},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t ns = -1;
    int rc = expt_duration_parse(cases[i].s, &ns);
    if (rc != RETRY_OK || ns != cases[i].ns)
      fail_msg("%s: rc %d ns %lld, want %lld", cases[i].s, rc, (long long)ns,
               (long long)cases[i].ns);
  }
}

static void test_expt_scenario_malformed_durations_are_einval_huge_ones_erange(void **state) {
  (void)state;
  static const char *const einval[] = {"",     "s",   "5",   "1.s",   ".5s",  "-1s",  "+1s",
                                       "1e3s", "1 s", " 1s", "1s ",   "1sec", "1S",   "1ms2",
                                       "0.0",  "00",  "1.5", "1..5s", "µs",   "1us1", "1hh"};
  for (size_t i = 0; i < sizeof einval / sizeof einval[0]; i++) {
    int64_t ns = 42;
    int rc = expt_duration_parse(einval[i], &ns);
    if (rc != RETRY_EINVAL || ns != 42) fail_msg("%s: rc %d, want EINVAL", einval[i], rc);
  }
  int64_t ns = 42;
  assert_int_equal(expt_duration_parse(NULL, &ns), RETRY_EINVAL);
  static const char *const erange[] = {"9223372036854775808ns", "2562048h", "9223372036.854775808s",
                                       "99999999999999999999999999s"};
  for (size_t i = 0; i < sizeof erange / sizeof erange[0]; i++) {
    int rc = expt_duration_parse(erange[i], &ns);
    if (rc != RETRY_ERANGE) fail_msg("%s: rc %d, want ERANGE", erange[i], rc);
  }
  /* A malformed huge value is EINVAL (syntax before range). */
  assert_int_equal(expt_duration_parse("99999999999999999999999x", &ns), RETRY_EINVAL);
}

static void test_expt_scenario_rates_take_a_unit_and_refuse_malformed_text(void **state) {
  (void)state;
  static const struct {
    const char *s;
    double per_s;
  } cases[] = {{"800/s", 800}, {"50/ms", 50000}, {"3000/min", 50},
               {"0.5/s", 0.5}, {"7200/h", 2},    {"0/s", 0},
               {"0.1/s", 0.1}, {"1.25/s", 1.25}, {"1000000000/s", 1e9}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double r = -1;
    int rc = expt_rate_parse(cases[i].s, &r);
    if (rc != RETRY_OK || r != cases[i].per_s)
      fail_msg("%s: rc %d rate %.17g, want %.17g", cases[i].s, rc, r, cases[i].per_s);
  }
  static const char *const bad[] = {"",     "800",   "/s",    "800/", "800/sec", "-1/s",  "1e3/s",
                                    "8 /s", "800/S", "800/m", ".5/s", "5./s",    "800/s "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    double r = 42;
    int rc = expt_rate_parse(bad[i], &r);
    if (rc != RETRY_EINVAL || r != 42) fail_msg("%s: rc %d, want EINVAL", bad[i], rc);
  }
  double r = 0;
  assert_int_equal(expt_rate_parse(NULL, &r), RETRY_EINVAL);
  char big[400];
  memset(big, '9', 350);
  memcpy(big + 350, "/s", 3);
  assert_int_equal(expt_rate_parse(big, &r), RETRY_ERANGE);
}

static void test_expt_scenario_sha256_matches_the_fips_vectors(void **state) {
  (void)state;
  /* FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf") and lengths around
   * the padding boundaries (55, 56, 63, 64, 65, 119, 120 bytes). */
  static const struct {
    const char *msg;
    size_t repeat; /* 0: msg as is; else msg[0] repeated */
    const char *hex;
  } cases[] = {
      {"", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", 0, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 0,
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
       "lmnopqrsmnopqrstnopqrstu",
       0, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
      {"x", 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {"x", 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {"x", 63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {"x", 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {"x", 65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {"x", 119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {"x", 120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char hex[65];
    if (cases[i].repeat > 0) {
      char *buf = malloc(cases[i].repeat);
      assert_non_null(buf);
      memset(buf, cases[i].msg[0], cases[i].repeat);
      expt__scenario_sha256(buf, cases[i].repeat, hex);
      free(buf);
    } else {
      expt__scenario_sha256(cases[i].msg, strlen(cases[i].msg), hex);
    }
    assert_string_equal(hex, cases[i].hex);
  }
}

/* }================================================================== */

/* {==================================================================
 * Documents into model_config
 * =================================================================== */

static void test_expt_scenario_small_document_gets_the_defaults(void **state) {
  (void)state;
  expt_scenario *s = load_ok(small);
  assert_string_equal(expt_scenario_name(s), "t"); /* the source's base name without .json */
  assert_int_equal(expt_scenario_n_runs(s), 1);
  assert_false(expt_scenario_has_variants(s));
  assert_string_equal(expt_scenario_run_name(s, 0), "t");
  assert_null(expt_scenario_expect(s, 0));
  assert_non_null(expt_scenario_document(s, 0));
  char hex[65];
  expt__scenario_sha256(small, strlen(small), hex);
  assert_string_equal(expt_scenario_sha256(s), hex);
  const model_config *c = expt_scenario_config(s, 0);
  assert_string_equal(c->name, "t");
  assert_int_equal(c->seed, 1);
  assert_int_equal(c->duration_ns, 10 * SEC);
  assert_int_equal(c->drain_ns, 60 * SEC);
  assert_int_equal(c->bucket_ns, SEC);
  assert_int_equal(c->n_services, 1);
  const model_service_cfg *api = &c->services[0];
  assert_string_equal(api->name, "api");
  assert_int_equal(api->space, RETRY_SPACE_GRPC);
  assert_int_equal(api->replicas, 1);
  assert_int_equal(api->workers, 1);
  assert_int_equal(api->queue_capacity, 1000);
  assert_int_equal(api->queue, MODEL_QUEUE_FIFO);
  assert_int_equal(api->reject_status, RETRY_GRPC_RESOURCE_EXHAUSTED);
  assert_null(api->reject_pushback);
  assert_null(api->reject_retry_after);
  assert_int_equal(api->service_time.kind, SIM_DIST_CONSTANT);
  assert_true(api->service_time.p1 == 5e6);
  assert_true(api->slowdown_per_busy == 0);
  assert_int_equal(api->deadline, MODEL_DEADLINE_IGNORE);
  assert_int_equal(api->lb, MODEL_LB_ROUND_ROBIN);
  assert_false(api->lb_avoid_previous);
  assert_int_equal(api->effect, MODEL_EFFECT_NONE);
  assert_false(api->dedup);
  assert_int_equal(api->calls_mode, MODEL_CALLS_SEQUENTIAL);
  assert_int_equal(api->n_calls, 0);
  assert_int_equal(api->n_faults, 0);
  assert_int_equal(c->n_clients, 1);
  const model_client_cfg *web = &c->clients[0];
  assert_string_equal(web->name, "web");
  assert_int_equal(web->count, 1);
  assert_int_equal(web->target, 0);
  assert_int_equal(web->loop, MODEL_LOOP_OPEN);
  assert_int_equal(web->rate.n_points, 1);
  assert_int_equal(web->rate.t_ns[0], 0);
  assert_true(web->rate.rate[0] == 100);
  assert_int_equal(web->start_ns, 0);
  assert_int_equal(web->stop_ns, RETRY_NEVER);
  assert_int_equal(web->n_methods, 1);
  assert_string_equal(web->methods[0].name, "/api.Api/Get");
  assert_true(web->methods[0].weight == 1);
  assert_int_equal(web->methods[0].stream, RETRY_STREAM_UNARY);
  assert_int_equal(web->methods[0].request_bytes, 0);
  assert_int_equal(web->methods[0].deadline_ns, RETRY_NEVER);
  assert_int_equal(web->deadline_ns, RETRY_NEVER);
  assert_null(web->policy);
  assert_int_equal(web->network.kind, SIM_DIST_CONSTANT);
  assert_true(web->network.p1 == 0);
  expt_scenario_destroy(s);
  expt_scenario_destroy(NULL);
  model_config_destroy(NULL);

  /* Without a source the default name is "scenario"; the source of errors is "<string>". */
  retry_error err;
  retry_error_clear(&err);
  s = expt_scenario_load_string(small, NULL, NULL, 0, &err);
  assert_non_null(s);
  assert_string_equal(expt_scenario_name(s), "scenario");
  expt_scenario_destroy(s);
  s = expt_scenario_load_string("[]", NULL, NULL, 0, &err);
  assert_null(s);
  assert_string_equal(err.source, "<string>");
  assert_string_equal(err.path, "$");
  assert_string_equal(err.message, "a scenario must be a JSON object, got []");
}

static const char full[] =
    "{\"name\": \"full-1\", \"description\": \"every field\", \"seed\": 42,"
    " \"duration\": \"2m\", \"drain\": \"0\", \"bucket\": \"250ms\","
    " \"services\": {"
    "  \"gw\": {\"space\": \"http\", \"replicas\": 4, \"workers\": 16,"
    "    \"queue\": {\"capacity\": 0, \"discipline\": \"lifo\"},"
    "    \"reject\": {\"status\": 429, \"retry_after\": \"2\"},"
    "    \"service_time\": {\"dist\": \"exponential\", \"mean\": \"2ms\"},"
    "    \"slowdown_per_busy\": 0.25, \"deadline\": \"drop\","
    "    \"lb\": {\"kind\": \"p2c\", \"avoid_previous\": true},"
    "    \"side_effect\": \"after\", \"dedup\": true, \"calls_mode\": \"fanout\","
    "    \"calls\": [{\"service\": \"db\", \"method\": \"/db.Db/Get\", \"stream\": \"server\","
    "      \"request_bytes\": 1024, \"stream_items\": 10, \"deadline\": \"300ms\","
    "      \"propagate_deadline\": false, \"network\": \"1ms\","
    "      \"map\": {\"UNAVAILABLE\": 503, \"DEADLINE_EXCEEDED\": 504, \"default\": 500},"
    "      \"policy\": {\"methodConfig\": [{\"name\": [{\"service\": \"db.Db\"}], "
    "        \"retryPolicy\": {\"maxAttempts\": 4, \"initialBackoff\": \"0.05s\","
    "        \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2,"
    "        \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}},"
    "      {\"service\": \"db\", \"method\": \"/db.Db/Put\"}],"
    "    \"faults\": ["
    "      {\"kind\": \"refuse\", \"status\": 503, \"rate\": 0.5, \"delay\": \"1ms\","
    "       \"retry_after\": \"1\", \"start\": \"5s\", \"end\": \"10s\", \"replicas\": [0, 3],"
    "       \"attempts\": [1, 2], \"method\": \"/gw.Gw/Get\", \"count\": 100},"
    "      {\"kind\": \"fail\", \"status\": 500, \"after_headers\": true, \"stream_items\": 3},"
    "      {\"kind\": \"slowdown\", \"factor\": 3},"
    "      {\"kind\": \"stall\", \"delay\": \"2s\", \"rate\": 0.01},"
    "      {\"kind\": \"down\", \"replicas\": [1]},"
    "      {\"kind\": \"pushback\", \"retry_after\": \"5\"},"
    "      {\"kind\": \"capacity\", \"workers\": 0, \"attempts\": [32]}]},"
    "  \"db\": {\"service_time\": {\"dist\": \"uniform\", \"min\": \"1ms\", \"max\": \"3ms\"},"
    "    \"reject\": {\"pushback\": \"-1\"},"
    "    \"faults\": [{\"kind\": \"fail\", \"status\": \"UNAVAILABLE\"},"
    "                {\"kind\": \"pushback\", \"pushback\": \"100\"}]}},"
    " \"clients\": {"
    "  \"users\": {\"count\": 50, \"target\": \"gw\","
    "    \"arrival\": {\"kind\": \"closed\", \"think\": {\"dist\": \"gamma\", \"shape\": 2, \"mean\": \"1s\"},"
    "      \"user_retries\": 2, \"user_retry_delay\": \"3s\"},"
    "    \"start\": \"1s\", \"stop\": \"100s\","
    "    \"methods\": [{\"name\": \"/gw.Gw/Get\", \"weight\": 3, \"deadline\": \"1s\"},"
    "                {\"name\": \"/gw.Gw/Watch\", \"stream\": \"server\", \"stream_items\": 5,"
    "                 \"request_bytes\": 10}, \"/gw.Gw/Put\"],"
    "    \"deadline\": \"5s\", \"network\": {\"dist\": \"weibull\", \"shape\": 1.5, \"scale\": \"2ms\"},"
    "    \"policy\": " RETRY_POLICY("http", "\"gateway-error\"") "},"
    "  \"batch\": {\"target\": \"db\", \"arrival\": {\"kind\": \"script\", \"at\": [\"0s\", \"0s\", \"1.5s\"]},"
    "    \"methods\": [\"/db.Db/Get\"], \"network\": {\"dist\": \"pareto\", \"shape\": 2.5, \"scale\": \"1ms\"}}}}";

static void test_expt_scenario_every_field_reaches_model_config(void **state) {
  (void)state;
  expt_scenario *s = load_ok(full);
  const model_config *c = expt_scenario_config(s, 0);
  assert_string_equal(expt_scenario_name(s), "full-1");
  assert_int_equal(c->seed, 42);
  assert_int_equal(c->duration_ns, 120 * SEC);
  assert_int_equal(c->drain_ns, 0);
  assert_int_equal(c->bucket_ns, 250 * MS);
  assert_int_equal(c->n_services, 2);
  const model_service_cfg *gw = &c->services[0], *db = &c->services[1];
  assert_string_equal(gw->name, "gw");
  assert_int_equal(gw->space, RETRY_SPACE_HTTP);
  assert_int_equal(gw->replicas, 4);
  assert_int_equal(gw->workers, 16);
  assert_int_equal(gw->queue_capacity, 0);
  assert_int_equal(gw->queue, MODEL_QUEUE_LIFO);
  assert_int_equal(gw->reject_status, 429);
  assert_null(gw->reject_pushback);
  assert_string_equal(gw->reject_retry_after, "2");
  assert_int_equal(gw->service_time.kind, SIM_DIST_EXPONENTIAL);
  assert_true(gw->service_time.p1 == 2e6);
  assert_true(gw->slowdown_per_busy == 0.25);
  assert_int_equal(gw->deadline, MODEL_DEADLINE_DROP);
  assert_int_equal(gw->lb, MODEL_LB_P2C);
  assert_true(gw->lb_avoid_previous);
  assert_int_equal(gw->effect, MODEL_EFFECT_AFTER);
  assert_true(gw->dedup);
  assert_int_equal(gw->calls_mode, MODEL_CALLS_FANOUT);
  /* Calls. */
  assert_int_equal(gw->n_calls, 2);
  const model_call_cfg *k = &gw->calls[0];
  assert_int_equal(k->service, 1);
  assert_string_equal(k->method, "/db.Db/Get");
  assert_int_equal(k->stream, RETRY_STREAM_SERVER);
  assert_int_equal(k->request_bytes, 1024);
  assert_int_equal(k->stream_items, 10);
  assert_int_equal(k->deadline_ns, 300 * MS);
  assert_false(k->propagate_deadline);
  assert_true(k->network.p1 == 1e6);
  assert_non_null(k->policy);
  const retry_method_config *mc = retry_config_lookup(k->policy, "/db.Db/Get");
  assert_int_equal(mc->policy.kind, RETRY_POLICY_RETRY);
  assert_int_equal(mc->policy.max_attempts, 4);
  assert_int_equal(k->map.n, 2);
  assert_int_equal(k->map.from[0], RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(k->map.to[0], 503);
  assert_int_equal(k->map.from[1], RETRY_GRPC_DEADLINE_EXCEEDED);
  assert_int_equal(k->map.to[1], 504);
  assert_true(k->map.has_default);
  assert_int_equal(k->map.default_to, 500);
  assert_false(k->map.canonical);
  k = &gw->calls[1];
  assert_null(k->policy);
  assert_int_equal(k->deadline_ns, RETRY_NEVER);
  assert_true(k->propagate_deadline);
  assert_int_equal(k->map.n, 0);
  assert_true(k->map.canonical);
  assert_false(k->map.has_default);
  /* Faults. */
  assert_int_equal(gw->n_faults, 7);
  const model_fault_cfg *f = &gw->faults[0];
  assert_int_equal(f->kind, MODEL_FAULT_REFUSE);
  assert_int_equal(f->status, 503);
  assert_true(f->rate == 0.5);
  assert_int_equal(f->delay_ns, MS);
  assert_string_equal(f->retry_after, "1");
  assert_null(f->pushback);
  assert_int_equal(f->start_ns, 5 * SEC);
  assert_int_equal(f->end_ns, 10 * SEC);
  assert_int_equal(f->replica_mask, 0x9);
  assert_int_equal(f->attempt_mask, 0x3);
  assert_string_equal(f->method, "/gw.Gw/Get");
  assert_int_equal(f->max_count, 100);
  f = &gw->faults[1];
  assert_int_equal(f->kind, MODEL_FAULT_FAIL);
  assert_int_equal(f->status, 500);
  assert_true(f->after_headers);
  assert_int_equal(f->stream_items, 3);
  assert_int_equal(f->start_ns, 0);
  assert_int_equal(f->end_ns, RETRY_NEVER);
  assert_true(f->replica_mask == ~UINT64_C(0));
  assert_int_equal(f->attempt_mask, 0);
  assert_null(f->method);
  assert_int_equal(f->max_count, 0);
  assert_true(f->rate == 1);
  assert_int_equal(gw->faults[2].kind, MODEL_FAULT_SLOWDOWN);
  assert_true(gw->faults[2].factor == 3);
  assert_int_equal(gw->faults[3].kind, MODEL_FAULT_STALL);
  assert_int_equal(gw->faults[3].delay_ns, 2 * SEC);
  assert_true(gw->faults[3].rate == 0.01);
  assert_int_equal(gw->faults[4].kind, MODEL_FAULT_DOWN);
  assert_int_equal(gw->faults[4].replica_mask, 0x2);
  assert_int_equal(gw->faults[5].kind, MODEL_FAULT_PUSHBACK);
  assert_string_equal(gw->faults[5].retry_after, "5");
  assert_int_equal(gw->faults[6].kind, MODEL_FAULT_CAPACITY);
  assert_int_equal(gw->faults[6].workers, 0);
  assert_int_equal(gw->faults[6].attempt_mask, 0x80000000u);
  /* db: grpc defaults and pushback strings. */
  assert_int_equal(db->space, RETRY_SPACE_GRPC);
  assert_int_equal(db->reject_status, RETRY_GRPC_RESOURCE_EXHAUSTED);
  assert_string_equal(db->reject_pushback, "-1");
  assert_int_equal(db->service_time.kind, SIM_DIST_UNIFORM);
  assert_true(db->service_time.p1 == 1e6 && db->service_time.p2 == 3e6);
  assert_int_equal(db->faults[0].status, RETRY_GRPC_UNAVAILABLE);
  assert_string_equal(db->faults[1].pushback, "100");
  /* Clients, in document order. */
  assert_int_equal(c->n_clients, 2);
  const model_client_cfg *u = &c->clients[0], *b = &c->clients[1];
  assert_string_equal(u->name, "users");
  assert_int_equal(u->count, 50);
  assert_int_equal(u->target, 0);
  assert_int_equal(u->loop, MODEL_LOOP_CLOSED);
  assert_int_equal(u->think.kind, SIM_DIST_GAMMA);
  assert_true(u->think.p1 == 2 && u->think.p2 == 5e8);
  assert_int_equal(u->rate.n_points, 1); /* unused by closed loops, but well-formed */
  assert_true(u->rate.rate[0] == 0);
  assert_int_equal(u->user_retries, 2);
  assert_true(u->user_retry_delay.p1 == 3e9);
  assert_int_equal(u->start_ns, SEC);
  assert_int_equal(u->stop_ns, 100 * SEC);
  assert_int_equal(u->n_methods, 3);
  assert_true(u->methods[0].weight == 3);
  assert_int_equal(u->methods[0].deadline_ns, SEC);
  assert_int_equal(u->methods[1].stream, RETRY_STREAM_SERVER);
  assert_int_equal(u->methods[1].stream_items, 5);
  assert_int_equal(u->methods[1].request_bytes, 10);
  assert_string_equal(u->methods[2].name, "/gw.Gw/Put");
  assert_true(u->methods[2].weight == 1);
  assert_int_equal(u->deadline_ns, 5 * SEC);
  assert_int_equal(u->network.kind, SIM_DIST_WEIBULL);
  assert_true(u->network.p1 == 1.5 && u->network.p2 == 2e6);
  assert_non_null(u->policy);
  assert_int_equal(retry_config_lookup(u->policy, "/gw.Gw/Get")->policy.space, RETRY_SPACE_HTTP);
  assert_string_equal(b->name, "batch");
  assert_int_equal(b->target, 1);
  assert_int_equal(b->loop, MODEL_LOOP_SCRIPT);
  assert_int_equal(b->n_script, 3);
  assert_int_equal(b->script_ns[2], 1500 * MS);
  assert_int_equal(b->network.kind, SIM_DIST_PARETO);
  assert_true(b->network.p1 == 2.5 && b->network.p2 == 1e6);
  expt_scenario_destroy(s);
}

/* Loads small with one --set and returns the scenario. */
static expt_scenario *load_with(const char *path, const char *value) {
  expt_set set = {path, value};
  return load_ok_sets(small, &set, 1);
}

static void test_expt_scenario_dists_read_their_parameters(void **state) {
  (void)state;
  static const struct {
    const char *json;
    sim_dist_kind kind;
    double p1, p2;
  } cases[] = {
      {"\"0\"", SIM_DIST_CONSTANT, 0, 0},
      {"{\"dist\": \"constant\", \"value\": \"3ms\"}", SIM_DIST_CONSTANT, 3e6, 0},
      {"{\"dist\": \"exponential\", \"mean\": \"1us\"}", SIM_DIST_EXPONENTIAL, 1e3, 0},
      {"{\"dist\": \"gamma\", \"shape\": 4, \"scale\": \"2ms\"}", SIM_DIST_GAMMA, 4, 2e6},
      {"{\"dist\": \"uniform\", \"min\": \"1ms\", \"max\": \"1ms\"}", SIM_DIST_UNIFORM, 1e6, 1e6},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    expt_scenario *s = load_with("services.api.service_time", cases[i].json);
    const sim_dist *d = &expt_scenario_config(s, 0)->services[0].service_time;
    assert_int_equal(d->kind, cases[i].kind);
    assert_true(d->p1 == cases[i].p1);
    assert_true(d->p2 == cases[i].p2);
    expt_scenario_destroy(s);
  }
  /* Lognormal: mu = ln(median), or ln(mean) - sigma^2 / 2. */
  expt_scenario *s = load_with("services.api.service_time",
                              "{\"dist\": \"lognormal\", \"median\": \"20ms\", \"sigma\": 0.5}");
  const sim_dist *d = &expt_scenario_config(s, 0)->services[0].service_time;
  assert_int_equal(d->kind, SIM_DIST_LOGNORMAL);
  assert_true(fabs(d->p1 - log(2e7)) < 1e-12);
  assert_true(d->p2 == 0.5);
  expt_scenario_destroy(s);
  s = load_with("services.api.service_time",
                "{\"dist\": \"lognormal\", \"mean\": \"20ms\", \"sigma\": 2}");
  d = &expt_scenario_config(s, 0)->services[0].service_time;
  assert_true(fabs(d->p1 - (log(2e7) - 2.0)) < 1e-12);
  expt_scenario_destroy(s);
}

static void test_expt_scenario_rate_profiles_become_points(void **state) {
  (void)state;
  expt_scenario *s =
      load_with("clients.web.arrival.rate",
                "{\"kind\": \"step\", \"from\": \"10/s\", \"to\": \"1/ms\", \"at\": \"5s\"}");
  const sim_rate_profile *p = &expt_scenario_config(s, 0)->clients[0].rate;
  assert_int_equal(p->n_points, 2);
  assert_int_equal(p->t_ns[0], 5 * SEC);
  assert_int_equal(p->t_ns[1], 5 * SEC);
  assert_true(p->rate[0] == 10 && p->rate[1] == 1000);
  expt_scenario_destroy(s);
  s = load_with("clients.web.arrival.rate",
                "{\"kind\": \"ramp\", \"from\": \"0/s\", \"to\": \"60/min\", \"start\": \"1s\", "
                "\"end\": \"9s\"}");
  p = &expt_scenario_config(s, 0)->clients[0].rate;
  assert_int_equal(p->n_points, 2);
  assert_int_equal(p->t_ns[0], SEC);
  assert_int_equal(p->t_ns[1], 9 * SEC);
  assert_true(p->rate[0] == 0 && p->rate[1] == 1);
  expt_scenario_destroy(s);
  s = load_with("clients.web.arrival.rate",
                "{\"kind\": \"spike\", \"base\": \"100/s\", \"peak\": \"900/s\", \"start\": "
                "\"2s\", \"end\": \"3s\"}");
  p = &expt_scenario_config(s, 0)->clients[0].rate;
  assert_int_equal(p->n_points, 4);
  int64_t want_t[4] = {2 * SEC, 2 * SEC, 3 * SEC, 3 * SEC};
  double want_r[4] = {100, 900, 900, 100};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(p->t_ns[i], want_t[i]);
    assert_true(p->rate[i] == want_r[i]);
  }
  expt_scenario_destroy(s);
  s = load_with("clients.web.arrival.rate",
                "{\"kind\": \"points\", \"points\": [[\"0s\", \"100/s\"], [\"10s\", \"300/s\"], "
                "[\"10s\", \"0/s\"]]}");
  p = &expt_scenario_config(s, 0)->clients[0].rate;
  assert_int_equal(p->n_points, 3);
  assert_int_equal(p->t_ns[2], 10 * SEC);
  assert_true(p->rate[1] == 300 && p->rate[2] == 0);
  expt_scenario_destroy(s);
  s = load_with("clients.web.arrival.rate", "{\"kind\": \"constant\", \"rate\": \"2/h\"}");
  p = &expt_scenario_config(s, 0)->clients[0].rate;
  assert_int_equal(p->n_points, 1);
  assert_true(fabs(p->rate[0] - 2.0 / 3600) < 1e-15);
  expt_scenario_destroy(s);
}

/* }================================================================== */

/* {==================================================================
 * --set, variants and expectations
 * =================================================================== */

static void test_expt_scenario_set_edits_the_document_before_validation(void **state) {
  (void)state;
  expt_set sets[] = {
      {"services.api.workers", "8"},                      /* JSON integer */
      {"services.api.queue.discipline", "lifo"},          /* a string (not JSON) */
      {"$.services.api.service_time", "\"7ms\""},         /* a JSON string, "$." prefix */
      {"services.api.faults[0]", "{\"kind\": \"down\"}"}, /* creates the array, appends */
      {"services.api.faults[1].kind", "slowdown"},        /* appends an object */
      {"services.api.faults[1].factor", "2"},
      {"services.api.faults[0]", "null"},         /* removes element 0 */
      {"clients.web.methods[1]", "/api.Api/Put"}, /* append to an existing array */
      {"clients.web.deadline", "2s"},
      {"clients.web.deadline", NULL},  /* NULL deletes, like null */
      {"clients.web.nothing", "null"}, /* deleting what is absent */
      {"clients[\"web\"].count", "3"}, /* quoted key */
  };
  expt_scenario *s = load_ok_sets(small, sets, sizeof sets / sizeof sets[0]);
  const model_config *c = expt_scenario_config(s, 0);
  assert_int_equal(c->services[0].workers, 8);
  assert_int_equal(c->services[0].queue, MODEL_QUEUE_LIFO);
  assert_true(c->services[0].service_time.p1 == 7e6);
  assert_int_equal(c->services[0].n_faults, 1);
  assert_int_equal(c->services[0].faults[0].kind, MODEL_FAULT_SLOWDOWN);
  assert_int_equal(c->clients[0].n_methods, 2);
  assert_int_equal(c->clients[0].deadline_ns, RETRY_NEVER);
  assert_int_equal(c->clients[0].count, 3);
  /* The document is the one after --set; the hash is of the bytes as read. */
  const json_t *doc = expt_scenario_document(s, 0);
  assert_int_equal(json_integer_value(json_object_get(
                       json_object_get(json_object_get(doc, "services"), "api"), "workers")),
                   8);
  char hex[65];
  expt__scenario_sha256(small, strlen(small), hex);
  assert_string_equal(expt_scenario_sha256(s), hex);
  expt_scenario_destroy(s);

  static const struct {
    const char *path, *value, *message;
  } bad[] = {
      {"", "1", "--set \"\": the path is empty"},
      {"services..api", "1", "--set \"services..api\": a key is empty"},
      {"services.api.faults[2]", "1",
       "--set \"services.api.faults[2]\": index 2 is past the end of an array of 0 elements"},
      {"duration.x", "1", "--set \"duration.x\": \"duration\" is a string, not an object"},
      {"services[0]", "1", "--set \"services[0]\": \"services\" is an object, not an array"},
      {"[0]", "1", "--set \"[0]\": the document is an object, not an array"},
      {"services.api[01]", "1", "--set \"services.api[01]\": an index has a leading zero"},
      {"services.api[x=y]", "1",
       "--set \"services.api[x=y]\": expected an index [0] or a quoted key [\"name\"] after '['"},
      {"a]", "1", "--set \"a]\": unexpected ']'"},
      {"a[\"b", "1", "--set \"a[\"b\": a quoted key has no closing quote"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    retry_error err;
    expt_set set = {bad[i].path, bad[i].value};
    load_bad_sets(small, &set, 1, &err);
    assert_int_equal(err.code, RETRY_ECONFIG);
    assert_string_equal(err.source, "<command line>");
    assert_string_equal(err.path, "");
    assert_int_equal(err.line, -1);
    assert_string_equal(err.message, bad[i].message);
  }
  /* An override whose value is wrong is found by validation, at the document's path. */
  retry_error err;
  expt_set set = {"services.api.workers", "0"};
  load_bad_sets(small, &set, 1, &err);
  assert_string_equal(err.source, "t.json");
  assert_string_equal(err.path, "$.services.api.workers");
  assert_string_equal(err.message, "\"workers\" must be an integer in [1, 1000000], got 0");
}

static const char with_variants[] =
    "{\"name\": \"v\", \"duration\": \"10s\","
    " \"services\": {\"api\": {\"service_time\": \"5ms\", \"workers\": 2}},"
    " \"clients\": {\"web\": {\"target\": \"api\", \"arrival\": {\"kind\": \"open\", \"rate\": "
    "\"100/s\"}, \"methods\": [\"/api.Api/Get\"]}},"
    " \"variants\": ["
    "   {\"name\": \"base\", \"description\": \"as written\"},"
    "   {\"name\": \"more.workers\", \"set\": {\"services.api.workers\": 8,"
    "      \"services.api.faults\": [{\"kind\": \"down\"}], \"services.api.faults[0].end\": "
    "\"1s\"},"
    "    \"expect\": {\"calls.ok\": 10, \"x[k=v].y\": {\"approx\": 1, \"tol\": 0.5}}}],"
    " \"expect\": {\"calls.ok\": {\"min\": 1}, \"flag\": true, \"none\": null}}";

static void test_expt_scenario_variants_apply_their_sets_and_merge_expectations(void **state) {
  (void)state;
  expt_scenario *s = load_ok(with_variants);
  assert_true(expt_scenario_has_variants(s));
  assert_int_equal(expt_scenario_n_runs(s), 2);
  assert_string_equal(expt_scenario_name(s), "v");
  assert_string_equal(expt_scenario_run_name(s, 0), "base");
  assert_string_equal(expt_scenario_run_name(s, 1), "more.workers");
  assert_int_equal(expt_scenario_config(s, 0)->services[0].workers, 2);
  assert_int_equal(expt_scenario_config(s, 0)->services[0].n_faults, 0);
  assert_string_equal(expt_scenario_config(s, 1)->name, "v");
  const model_service_cfg *api = &expt_scenario_config(s, 1)->services[0];
  assert_int_equal(api->workers, 8);
  assert_int_equal(api->n_faults, 1);
  assert_int_equal(api->faults[0].end_ns, SEC);
  /* A run's document is the base without "variants", with the variant's set applied. */
  const json_t *d0 = expt_scenario_document(s, 0), *d1 = expt_scenario_document(s, 1);
  assert_null(json_object_get(d0, "variants"));
  assert_null(json_object_get(d1, "variants"));
  assert_non_null(json_object_get(d1, "expect"));
  /* Expectations: the top level for run 0; merged for run 1, the variant's keys winning. */
  const json_t *e0 = expt_scenario_expect(s, 0), *e1 = expt_scenario_expect(s, 1);
  assert_int_equal(json_object_size(e0), 3);
  assert_true(json_is_object(json_object_get(e0, "calls.ok")));
  assert_int_equal(json_object_size(e1), 4);
  assert_int_equal(json_integer_value(json_object_get(e1, "calls.ok")), 10);
  assert_true(json_is_true(json_object_get(e1, "flag")));
  assert_non_null(json_object_get(e1, "x[k=v].y"));
  expt_scenario_destroy(s);

  /* An error in a variant's document names the variant and its path. */
  retry_error err;
  expt_set bad = {"variants[1].set", "{\"services.api.workers\": 0}"};
  load_bad_sets(with_variants, &bad, 1, &err);
  assert_string_equal(err.path, "$.services.api.workers");
  assert_string_equal(
      err.message,
      "in variant \"more.workers\": \"workers\" must be an integer in [1, 1000000], "
      "got 0");
  /* Without expectations anywhere, expect is NULL for every run. */
  expt_set none[] = {{"expect", "null"}, {"variants[1].expect", "null"}};
  s = load_ok_sets(with_variants, none, 2);
  assert_null(expt_scenario_expect(s, 0));
  assert_null(expt_scenario_expect(s, 1));
  expt_scenario_destroy(s);
  /* Only the variant's own. */
  expt_set only_own[] = {{"expect", "null"}};
  s = load_ok_sets(with_variants, only_own, 1);
  assert_null(expt_scenario_expect(s, 0));
  assert_int_equal(json_object_size(expt_scenario_expect(s, 1)), 2);
  expt_scenario_destroy(s);
}

/* }================================================================== */

/* {==================================================================
 * Policies
 * =================================================================== */

/* A request names the fault it carries in 16 bits (mw_req.fail), so a service has at most
 * MODEL_MAX_FAULTS faults: that many load, one more is refused with the limit in the error. */
static char *faults_scenario(size_t n) {
  const char head[] =
      "{\"duration\": \"10s\", \"services\": {\"api\": {\"service_time\": "
      "\"5ms\", \"faults\": [";
  const char fault[] =
      "{\"kind\": \"fail\", \"start\": \"1s\", \"end\": \"2s\", "
      "\"status\": \"UNAVAILABLE\"}";
  const char tail[] =
      "]}}, \"clients\": {\"web\": {\"target\": \"api\", \"arrival\": "
      "{\"kind\": \"open\", \"rate\": \"100/s\"}, \"methods\": "
      "[\"/api.Api/Get\"]}}}";
  size_t len = sizeof head + n * sizeof fault + sizeof tail;
  char *text = malloc(len);
  assert_non_null(text);
  char *p = text;
  p += sprintf(p, "%s", head);
  for (size_t i = 0; i < n; i++)
    p += sprintf(p, "%s%s", i > 0 ? "," : "", fault);
  sprintf(p, "%s", tail);
  return text;
}

static void test_expt_scenario_faults_of_a_service_are_bounded(void **state) {
  (void)state;
  char *text = faults_scenario(MODEL_MAX_FAULTS);
  expt_scenario *s = load_ok(text);
  assert_int_equal(expt_scenario_config(s, 0)->services[0].n_faults, MODEL_MAX_FAULTS);
  expt_scenario_destroy(s);
  free(text);
  text = faults_scenario(MODEL_MAX_FAULTS + 1);
  retry_error err;
  load_bad_sets(text, NULL, 0, &err);
  assert_string_equal(err.path, "$.services.api.faults");
  assert_non_null(strstr(err.message, "at most 10000 faults, got 10001"));
  free(text);
}

static void test_expt_scenario_inline_policy_errors_keep_the_policy_path(void **state) {
  (void)state;
  const char *pol = RETRY_POLICY("grpc", "\"UNAVAILABLE\"");
  expt_set set = {"clients.web.policy", pol};
  expt_scenario *s = load_ok_sets(small, &set, 1);
  const retry_config *p = expt_scenario_config(s, 0)->clients[0].policy;
  assert_non_null(p);
  assert_int_equal(retry_config_lookup(p, "/api.Api/Get")->policy.max_attempts, 3);
  expt_scenario_destroy(s);

  /* An error inside keeps its message, its path prefixed with the policy's. */
  retry_error err;
  expt_set sets[] = {{"clients.web.policy.methodConfig[0].retryPolicy.maxAttempts", "1"}};
  expt_set both[] = {{"clients.web.policy", pol}, sets[0]};
  load_bad_sets(small, both, 2, &err);
  assert_int_equal(err.code, RETRY_ECONFIG);
  assert_string_equal(err.source, "t.json");
  assert_string_equal(err.path, "$.clients.web.policy.methodConfig[0].retryPolicy.maxAttempts");
  assert_string_equal(err.message, "\"maxAttempts\" must be an integer > 1, got 1");

  /* A policy in the wrong status space. */
  const char *hpol = RETRY_POLICY("http", "503");
  expt_set http[] = {{"clients.web.policy", hpol}};
  load_bad_sets(small, http, 1, &err);
  assert_string_equal(err.path, "$.clients.web.policy");
  assert_string_equal(err.message,
                      "the policy of \"/api.Api/Get\" uses http statuses but service \"api\" "
                      "replies with grpc statuses");
  /* ... which is fine once the service is http. */
  expt_set http_ok[] = {{"clients.web.policy", hpol}, {"services.api.space", "http"}};
  s = load_ok_sets(small, http_ok, 2);
  expt_scenario_destroy(s);

  /* null is no policy; other types are errors. */
  expt_set nul[] = {{"clients.web.policy", "null"}};
  s = load_ok_sets(small, nul, 1);
  assert_null(expt_scenario_config(s, 0)->clients[0].policy);
  expt_scenario_destroy(s);
  expt_set num[] = {{"clients.web.policy", "3"}};
  load_bad_sets(small, num, 1, &err);
  assert_string_equal(err.message,
                      "\"policy\" must be a service config object, the name of a service config "
                      "file or null, got 3");
}

static void test_expt_scenario_policy_file_loads_and_missing_one_is_an_io_error(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/scenarios/valid/policy-file/scenario.json", data_dir());
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load(path, NULL, 0, &err);
  if (s == NULL) fail_msg("%s: %s", err.source, err.message);
  const model_config *c = expt_scenario_config(s, 0);
  assert_string_equal(c->name, "scenario"); /* the file's base name */
  assert_non_null(c->clients[0].policy);
  assert_int_equal(retry_config_lookup(c->clients[0].policy, "/api.v1.Api/Get")->policy.kind,
                   RETRY_POLICY_RETRY);
  /* The hash is that of the file's bytes. */
  size_t len = 0;
  char *bytes = test_slurp(path, &len);
  assert_non_null(bytes);
  char hex[65];
  expt__scenario_sha256(bytes, len, hex);
  assert_string_equal(expt_scenario_sha256(s), hex);
  free(bytes);
  expt_scenario_destroy(s);

  /* A missing file is an I/O error at the scenario's path. */
  expt_set set = {"clients.web.policy", "nope.json"};
  s = expt_scenario_load(path, &set, 1, &err);
  assert_null(s);
  assert_int_equal(err.code, RETRY_EIO);
  assert_string_equal(err.source, path);
  assert_string_equal(err.path, "$.clients.web.policy");
  assert_string_equal(err.message,
                      "cannot open the policy file \"nope.json\": No such file or directory");
}

/* Issue 10: a policy kept in a file is read into the document, so --set and a variant's "set"
 * patch it like an inline one (before, such a path failed: "...policy" is a string). */
static void test_expt_scenario_policy_file_is_patched_by_set_and_variants(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/scenarios/valid/policy-file/scenario.json", data_dir());
  expt_set sets[] = {{"clients.web.policy.retryThrottling.maxTokens", "5"},
                    {"variants",
                     "[{\"name\": \"as-is\", \"set\": {}}, {\"name\": \"four\", "
                     "\"set\": {\"clients.web.policy.methodConfig[0].retryPolicy."
                     "maxAttempts\": 4}}]"}};
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load(path, sets, 2, &err);
  if (s == NULL) fail_msg("%s: %s: %s", err.source, err.path, err.message);
  assert_int_equal(expt_scenario_n_runs(s), 2);
  for (size_t i = 0; i < 2; i++) {
    const retry_config *p = expt_scenario_config(s, i)->clients[0].policy;
    assert_non_null(p);
    /* The file says maxTokens 10; the command line's 5 reached both runs. */
    assert_int_equal(retry_config_target(p)->throttle.max_milli_tokens, 5000);
    assert_int_equal(retry_config_lookup(p, "/api.v1.Api/Get")->policy.max_attempts,
                     i == 0 ? 3 : 4);
  }
  /* The recorded document holds the file's policy as patched. */
  const json_t *doc = expt_scenario_base_document(s);
  json_t *pol = json_object_get(json_object_get(json_object_get(doc, "clients"), "web"), "policy");
  assert_true(json_is_object(pol));
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(pol, "retryThrottling"), "maxTokens")), 5);
  expt_scenario_destroy(s);
}

/* Issue 10: provenance. The scenario and each policy file with their SHA-256, the --set
 * overrides as given, in order. */
static void test_expt_scenario_provenance_records_files_and_overrides(void **state) {
  (void)state;
  char path[1024], pol_path[1024];
  snprintf(path, sizeof path, "%s/scenarios/valid/policy-file/scenario.json", data_dir());
  snprintf(pol_path, sizeof pol_path, "%s/scenarios/valid/policy-file/policy.json", data_dir());
  expt_set sets[] = {{"duration", "5s"}, {"clients.web.count", "3"}, {"services.api.workers", NULL}};
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load(path, sets, 3, &err);
  if (s == NULL) fail_msg("%s: %s", err.source, err.message);
  const json_t *in = expt_scenario_inputs(s);
  assert_int_equal(json_array_size(in), 2);
  json_t *f0 = json_array_get(in, 0), *f1 = json_array_get(in, 1);
  assert_string_equal(json_string_value(json_object_get(f0, "role")), "scenario");
  assert_string_equal(json_string_value(json_object_get(f0, "path")), "scenario.json");
  assert_string_equal(json_string_value(json_object_get(f0, "sha256")), expt_scenario_sha256(s));
  assert_string_equal(json_string_value(json_object_get(f1, "role")), "policy");
  assert_string_equal(json_string_value(json_object_get(f1, "path")), "policy.json");
  size_t len = 0;
  char *bytes = test_slurp(pol_path, &len);
  assert_non_null(bytes);
  char hex[65];
  expt__scenario_sha256(bytes, len, hex);
  free(bytes);
  assert_string_equal(json_string_value(json_object_get(f1, "sha256")), hex);
  json_t *named = json_object_get(f1, "named_at");
  assert_int_equal(json_array_size(named), 1);
  assert_string_equal(json_string_value(json_array_get(named, 0)), "$.clients.web.policy");
  const json_t *ov = expt_scenario_overrides(s);
  assert_int_equal(json_array_size(ov), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(ov, 1), "path")),
                      "clients.web.count");
  assert_string_equal(json_string_value(json_object_get(json_array_get(ov, 1), "value")), "3");
  assert_true(json_is_null(json_object_get(json_array_get(ov, 2), "value")));
  expt_scenario_destroy(s);
}

/* Issue 10: a policy file that cannot be read (a directory here) is reported at the scenario's
 * file and the JSON path that named it, like a missing one (defect 6). */
static void test_expt_scenario_policy_file_io_errors_name_the_scenario_and_path(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/scenarios/valid/policy-file/scenario.json", data_dir());
  const char *bad[] = {".", "/dev/zero"};
  const char *why[] = {"a directory", "a character device"};
  for (size_t i = 0; i < 2; i++) {
    char value[64];
    snprintf(value, sizeof value, "\"%s\"", bad[i]);
    expt_set set = {"clients.web.policy", value};
    retry_error err;
    retry_error_clear(&err);
    assert_null(expt_scenario_load(path, &set, 1, &err));
    assert_int_equal(err.code, RETRY_EIO);
    assert_string_equal(err.source, path);
    assert_string_equal(err.path, "$.clients.web.policy");
    char want[160];
    snprintf(want, sizeof want, "cannot open the policy file \"%s\": it is %s, not a regular file",
             bad[i], why[i]);
    assert_string_equal(err.message, want);
  }
}

/* Issue 10: --variant keeps the named variants in the scenario's order; an unknown name lists
 * the variants there are. */
static void test_expt_scenario_select_keeps_the_named_variants(void **state) {
  (void)state;
  expt_set v = {"variants",
               "[{\"name\": \"a\"}, {\"name\": \"b\", \"description\": \"bee\"}, "
               "{\"name\": \"c\", \"description\": \"sea\"}]"};
  expt_scenario *s = load_ok_sets(small, &v, 1);
  const char *pick[] = {"c", "a"};
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_scenario_select(s, pick, 2, &err), 0);
  assert_int_equal(expt_scenario_n_runs(s), 2);
  assert_string_equal(expt_scenario_run_name(s, 0), "a");
  assert_string_equal(expt_scenario_run_name(s, 1), "c");
  assert_null(expt_scenario_run_description(s, 0));
  assert_string_equal(expt_scenario_run_description(s, 1), "sea");
  const char *unknown[] = {"d"};
  assert_int_equal(expt_scenario_select(s, unknown, 1, &err), RETRY_EINVAL);
  assert_string_equal(err.source, "<command line>");
  assert_string_equal(err.message, "--variant \"d\": no such variant; variants: a, b, c");
  assert_int_equal(expt_scenario_n_runs(s), 2);
  expt_scenario_destroy(s);
  s = load_ok(small);
  retry_error_clear(&err);
  assert_int_equal(expt_scenario_select(s, pick, 1, &err), RETRY_EINVAL);
  assert_string_equal(err.message, "--variant \"c\": the scenario has no variants");
  assert_int_equal(expt_scenario_select(s, NULL, 0, &err), 0);
  expt_scenario_destroy(s);
}

/* Issue 10, defect 8: the world's memory is estimated before it is built; 1,000 populations
 * of a million clients are refused under the default limit, with the figure and the option. */
static void test_expt_scenario_memory_estimate_refuses_a_huge_world(void **state) {
  (void)state;
  expt_scenario *s = load_ok(small);
  uint64_t one = model_world_estimate_bytes(expt_scenario_config(s, 0));
  assert_true(one > 0 && one < (UINT64_C(1) << 20));
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_scenario_check_memory(s, EXPT_SCENARIO_MAX_MEMORY_DEFAULT, &err), 0);
  assert_int_equal(expt_scenario_check_memory(s, 1000, &err), RETRY_ERANGE);
  assert_non_null(strstr(err.message, "--max-memory SIZE"));
  expt_scenario_destroy(s);
  /* The estimate grows with the clients: a million in one population. */
  expt_set big = {"clients.web.count", "1000000"};
  s = load_ok_sets(small, &big, 1);
  uint64_t million = model_world_estimate_bytes(expt_scenario_config(s, 0));
  assert_true(million > one + UINT64_C(1000000) * 100);
  expt_scenario_destroy(s);
  /* 1,000 such populations: about a thousand times that, far over 8 GiB. */
  size_t cap = 1000 * 160 + 256;
  char *clients = malloc(cap);
  assert_non_null(clients);
  size_t n = (size_t)snprintf(clients, cap, "{");
  for (int i = 0; i < 1000; i++)
    n += (size_t)snprintf(clients + n, cap - n,
                          "%s\"c%d\": {\"count\": 1000000, \"target\": \"api\", \"arrival\": "
                          "{\"kind\": \"open\", \"rate\": \"1/s\"}, \"methods\": [\"/a.B/C\"]}",
                          i ? ", " : "", i);
  snprintf(clients + n, cap - n, "}");
  expt_set many = {"clients", clients};
  s = load_ok_sets(small, &many, 1);
  retry_error_clear(&err);
  assert_int_equal(expt_scenario_check_memory(s, EXPT_SCENARIO_MAX_MEMORY_DEFAULT, &err),
                   RETRY_ERANGE);
  assert_string_equal(err.source, "t.json");
  assert_non_null(strstr(err.message, "over the limit of 8.0 GiB"));
  assert_true(model_world_estimate_bytes(expt_scenario_config(s, 0)) > (UINT64_C(100) << 30));
  assert_int_equal(expt_scenario_check_memory(s, UINT64_MAX, &err), 0);
  expt_scenario_destroy(s);
  free(clients);
}

/* Issue 10, defect 7: a long chain of services with a cycle at its end is found and named;
 * the lookups by name are a binary search, so this is quick (tools/test/test-cli.sh times a chain
 * of 100,000). */
static void test_expt_scenario_cycle_at_the_end_of_a_long_chain_is_named(void **state) {
  (void)state;
  const int n = 2000;
  size_t cap = (size_t)n * 160 + 512;
  char *text = malloc(cap);
  assert_non_null(text);
  size_t len = (size_t)snprintf(text, cap, "{\"duration\": \"1s\", \"services\": {");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "%s\"s%d\": {\"service_time\": \"1ms\", \"calls\": [{\"service\": "
                            "\"s%d\", \"method\": \"/a.B/C\"}]}",
                            i ? ", " : "", i, i + 1 < n ? i + 1 : n - 3);
  snprintf(text + len, cap - len,
           "}, \"clients\": {\"c\": {\"target\": \"s0\", \"arrival\": {\"kind\": \"open\", "
           "\"rate\": \"1/s\"}, \"methods\": [\"/a.B/C\"]}}}");
  retry_error err;
  load_bad_sets(text, NULL, 0, &err);
  assert_string_equal(err.path, "$.services.s1999.calls[0].service");
  assert_string_equal(err.message, "the calls form a cycle: s1997 -> s1998 -> s1999 -> s1997");
  free(text);
}

static void test_expt_scenario_io_and_syntax_errors_name_the_source(void **state) {
  (void)state;
  retry_error err;
  retry_error_clear(&err);
  assert_null(expt_scenario_load("/nonexistent/scenario.json", NULL, 0, &err));
  assert_int_equal(err.code, RETRY_EIO);
  assert_string_equal(err.source, "/nonexistent/scenario.json");
  assert_string_equal(err.message, "cannot open the file: No such file or directory");
  retry_error_clear(&err);
  assert_null(expt_scenario_load(data_dir(), NULL, 0, &err));
  assert_int_equal(err.code, RETRY_EIO);
  assert_string_equal(err.message, "cannot read the file: Is a directory");
  /* A NULL err is allowed. */
  assert_null(expt_scenario_load("/nonexistent/scenario.json", NULL, 0, NULL));
  assert_null(expt_scenario_load_string("{", NULL, NULL, 0, NULL));
  /* Syntax errors carry line and column. */
  retry_error_clear(&err);
  assert_null(expt_scenario_load_string("{\n  \"a\": 1,\n  \"a\": 2}", "x.json", NULL, 0, &err));
  assert_int_equal(err.code, RETRY_ESYNTAX);
  assert_int_equal(err.line, 3);
  assert_string_equal(err.source, "x.json");
  assert_string_equal(err.path, "");
}

/* }================================================================== */

/* {==================================================================
 * Data-driven cases
 * =================================================================== */

/* {==================================================================
 * Mixtures and empirical distributions in a scenario
 * =================================================================== */

/* Runs run 0 of s and returns its summary's run object (free with json_decref). */
static json_t *run_summary(const expt_scenario *s) {
  retry_error err;
  retry_error_clear(&err);
  sim_kernel *k = sim_kernel_create(0, NULL);
  assert_non_null(k);
  model_world *w = model_world_create(expt_scenario_config(s, 0), k, 1, &err);
  assert_non_null(w);
  assert_int_equal(model_world_run(w, NULL, NULL, &err), 0);
  json_t *run = expt_output_run_json(model_world_results(w), NULL);
  assert_non_null(run);
  model_world_destroy(w);
  sim_kernel_destroy(k);
  return run;
}

static double latency_ms(const json_t *run, const char *q) {
  return json_number_value(json_object_get(json_object_get(run, "latency_ms"), q));
}

/* "10 ms except 1 % of the time 1 s": with no network and enough workers a call's latency is
 * its service time, so the summary's percentiles are the mixture's quantiles: 10 ms up to
 * p99 (exclusive), 1 s above; and the mean is 0.99 x 10 + 0.01 x 1000 = 19.9 ms, within four
 * standard errors (sd 98.5 ms over 20,000 calls: 0.70 ms each). */
static void test_expt_scenario_mixture_service_time_gives_the_mixtures_quantiles(void **state) {
  (void)state;
  const char *text =
      "{\"duration\": \"20s\", \"services\": {\"api\": {\"workers\": 500, \"service_time\": "
      "{\"dist\": \"mixture\", \"parts\": [{\"weight\": 0.99, \"value\": \"10ms\"}, "
      "{\"weight\": 0.01, \"value\": {\"dist\": \"constant\", \"value\": \"1s\"}}]}}}, "
      "\"clients\": {\"c\": {\"target\": \"api\", \"arrival\": {\"kind\": \"open\", \"rate\": "
      "\"1000/s\"}, \"methods\": [\"/a.A/M\"]}}}";
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(text, "<test>", NULL, 0, &err);
  if (s == NULL) fail_msg("%s", err.message);
  const sim_dist *d = &expt_scenario_config(s, 0)->services[0].service_time;
  assert_int_equal(d->kind, SIM_DIST_MIXTURE);
  assert_true(fabs(sim_dist_mean_ns(d) - 19.9e6) < 1);
  json_t *run = run_summary(s);
  double n = json_number_value(json_object_get(json_object_get(run, "latency_ms"), "count"));
  assert_true(n > 19000 && n < 21000);
  assert_true(fabs(latency_ms(run, "p50") - 10) < 0.01);
  assert_true(fabs(latency_ms(run, "p90") - 10) < 0.01);
  assert_true(fabs(latency_ms(run, "p999") - 1000) < 1);
  assert_true(fabs(latency_ms(run, "max") - 1000) < 1);
  assert_true(fabs(latency_ms(run, "mean") - 19.9) < 4 * 0.70);
  json_decref(run);
  /* A variant's weights are the document's, like any value: 50/50 moves p90 to 1 s. */
  expt_scenario_destroy(s);
  expt_set sets[] = {{"services.api.service_time.parts[1].weight", "0.99"},
                    {"services.api.workers", "2000"}};
  s = expt_scenario_load_string(text, "<test>", sets, 2, &err);
  if (s == NULL) fail_msg("%s", err.message);
  run = run_summary(s);
  assert_true(fabs(latency_ms(run, "p90") - 1000) < 1);
  assert_true(fabs(latency_ms(run, "mean") - 505) < 20);
  json_decref(run);
  expt_scenario_destroy(s);
}

/* valid/mixture-empirical: latency.csv holds seven samples (9.5 to 31 ms); every service time
 * drawn from it is one of them, so the edge's min and max are the file's and its median one
 * of its values; the histogram's draws stay inside its bins (0 to 50 ms); both files are in
 * inputs once, with the SHA-256 of their bytes and every path that named them. */
static void test_expt_scenario_empirical_file_draws_its_samples_and_is_recorded(void **state) {
  (void)state;
  char path[1024], csv[1024];
  snprintf(path, sizeof path, "%s/scenarios/valid/mixture-empirical/scenario.json", data_dir());
  snprintf(csv, sizeof csv, "%s/scenarios/valid/mixture-empirical/latency.csv", data_dir());
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load(path, NULL, 0, &err);
  if (s == NULL) fail_msg("%s", err.message);
  const model_config *cfg = expt_scenario_config(s, 0);
  assert_int_equal(cfg->services[1].service_time.kind, SIM_DIST_EMPIRICAL);
  assert_int_equal(cfg->services[2].service_time.kind, SIM_DIST_EMPIRICAL);
  /* One table for the file, however many places name it. */
  const sim_mixture *net = cfg->clients[1].network.table;
  assert_int_equal(sim_mixture_n_parts(net), 2);
  assert_ptr_equal(sim_dist_of_empirical(cfg->services[1].service_time.table).table,
                   cfg->services[1].service_time.table);
  const json_t *in = expt_scenario_inputs(s);
  assert_int_equal(json_array_size(in), 3);
  const json_t *lat = json_array_get(in, 1);
  assert_string_equal(json_string_value(json_object_get(lat, "role")), "distribution");
  assert_string_equal(json_string_value(json_object_get(lat, "path")), "latency.csv");
  size_t len = 0;
  char *bytes = test_slurp(csv, &len);
  assert_non_null(bytes);
  char sha[65];
  expt__scenario_sha256(bytes, len, sha);
  free(bytes);
  assert_string_equal(json_string_value(json_object_get(lat, "sha256")), sha);
  const json_t *named = json_object_get(lat, "named_at");
  assert_int_equal(json_array_size(named), 2);
  assert_string_equal(json_string_value(json_array_get(named, 0)),
                      "$.services.measured.service_time.file");
  assert_string_equal(json_string_value(json_array_get(named, 1)),
                      "$.clients.b.network.parts[1].value.file");
  json_t *run = run_summary(s);
  json_t *edges = json_object_get(json_object_get(run, "amplification"), "edges");
  /* Client c's edge to "binned": no network, so latency = service time, inside [0, 50 ms). */
  json_t *binned = json_object_get(json_array_get(edges, 2), "latency_ms");
  assert_true(json_number_value(json_object_get(binned, "max")) <= 50);
  /* Client a's edge to "tail": a mixture with no network. */
  json_t *tail = json_object_get(json_array_get(edges, 0), "latency_ms");
  assert_true(fabs(json_number_value(json_object_get(tail, "max")) - 1000) < 1);
  json_decref(run);
  expt_scenario_destroy(s);
  /* Without the network and with workers to spare, every latency on b's edge is a sample:
   * the largest is exactly 31 ms, the median one of the samples (to the histogram's 1/256). */
  expt_set sets[] = {{"clients.b.network", "0s"}, {"services.measured.workers", "1000"}};
  s = expt_scenario_load(path, sets, 2, &err);
  if (s == NULL) fail_msg("%s", err.message);
  run = run_summary(s);
  edges = json_object_get(json_object_get(run, "amplification"), "edges");
  json_t *m = json_object_get(json_array_get(edges, 1), "latency_ms");
  assert_true(fabs(json_number_value(json_object_get(m, "max")) - 31) < 0.01);
  double p50 = json_number_value(json_object_get(m, "p50"));
  static const double samples[] = {12.5, 9.75, 11, 10.25, 14, 31, 9.5};
  bool is_sample = false;
  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
    is_sample = is_sample || fabs(p50 - samples[i]) <= samples[i] / 256; /* sim_hist.h */
  assert_true(is_sample);
  json_decref(run);
  expt_scenario_destroy(s);
}

/* }================================================================== */

/* tests/data/scenarios/valid/<case>/scenario.json: each loads, with a config per run. */
static void test_expt_scenario_loads_each_valid_case(void **state) {
  (void)state;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/scenarios/valid", data_dir());
  size_t n;
  char **names = test_list_cases(dir, &n);
  assert_true(n >= 10);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char input[1024];
    snprintf(input, sizeof input, "%s/%s/scenario.json", dir, names[i]);
    retry_error err;
    retry_error_clear(&err);
    expt_scenario *s = expt_scenario_load(input, NULL, 0, &err);
    if (s == NULL) {
      char buf[700];
      retry_error_format(&err, buf, sizeof buf);
      print_error("%s: %s\n", names[i], buf);
      bad++;
      continue;
    }
    for (size_t r = 0; r < expt_scenario_n_runs(s); r++) {
      const model_config *c = expt_scenario_config(s, r);
      if (c == NULL || c->n_services == 0 || c->n_clients == 0 ||
          expt_scenario_run_name(s, r) == NULL) {
        print_error("%s: run %zu is empty\n", names[i], r);
        bad++;
      }
    }
    expt_scenario_destroy(s);
  }
  test_free_cases(names, n);
  assert_int_equal(bad, 0);
}

/* Reads the case's optional "set" file: one PATH=VALUE per line. Returns the count. */
static size_t read_sets(const char *file, char **text, expt_set *sets, size_t max) {
  *text = test_slurp(file, NULL);
  if (*text == NULL) return 0;
  size_t n = 0;
  for (char *line = *text; line != NULL && *line != '\0' && n < max;) {
    char *next = strchr(line, '\n');
    if (next != NULL) *next++ = '\0';
    char *eq = strchr(line, '=');
    if (eq != NULL) {
      *eq = '\0';
      sets[n].path = line;
      sets[n].value = eq + 1;
      n++;
    }
    line = next;
  }
  return n;
}

/* tests/data/scenarios/invalid/<case>/{scenario.json,error[,set]}: the error file's format is
 * in tests/support/files.h (test_expected_error); set holds --set overrides, one a line. */
static void test_expt_scenario_refuses_each_invalid_case(void **state) {
  (void)state;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/scenarios/invalid", data_dir());
  size_t n;
  char **names = test_list_cases(dir, &n);
  assert_true(n >= 60);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char input[1024], errpath[1024], setpath[1024], source[1600];
    snprintf(input, sizeof input, "%s/%s/scenario.json", dir, names[i]);
    snprintf(errpath, sizeof errpath, "%s/%s/error", dir, names[i]);
    snprintf(setpath, sizeof setpath, "%s/%s/set", dir, names[i]);
    test_expected_error want;
    if (!test_expected_error_read(errpath, &want)) {
      bad++;
      continue;
    }
    if (want.source[0] == '\0')
      snprintf(source, sizeof source, "%s", input);
    else if (want.source[0] == '<')
      snprintf(source, sizeof source, "%s", want.source);
    else
      snprintf(source, sizeof source, "%s/%s/%s", dir, names[i], want.source);
    expt_set sets[16];
    char *set_text = NULL;
    size_t n_sets = read_sets(setpath, &set_text, sets, 16);
    retry_error err;
    retry_error_clear(&err);
    expt_scenario *s = expt_scenario_load(input, sets, n_sets, &err);
    if (s != NULL) {
      print_error("%s: loaded, want an error\n", names[i]);
      expt_scenario_destroy(s);
      bad++;
    } else if (!test_expected_error_matches(names[i], &want, source, &err)) {
      bad++;
    }
    free(set_text);
  }
  test_free_cases(names, n);
  assert_int_equal(bad, 0);
}

/* }================================================================== */

/* {==================================================================
 * Failure injection and robustness
 * =================================================================== */

/* Failure injection has two sources: the loader's own allocations and libretry's (through
 * the allocator the loader hands to retry_config loads) go through sim__scenario's hook;
 * jansson's go through json_set_alloc_funcs. Jansson 2.14's lexer does not survive a failed
 * allocation (lex_save ignores strbuffer_append_byte's result, and lex_scan_string then reads
 * past the saved text), so jansson allocations are failed only after the document was parsed:
 * in json_deep_copy, json_object_set_new, json_dumps and friends, which the loader calls. */
typedef struct chaos {
  long n;        /* hook allocations so far */
  long fail;     /* the one to fail, -1 none */
  bool failed;   /* the hook failed one */
  test_oom json; /* jansson's allocations (tests/support/oom.h) */
} chaos;

static chaos the_chaos;

static bool chaos_fail(void *ctx) {
  chaos *ch = ctx;
  if (ch->n++ == ch->fail) {
    ch->failed = true;
    return true;
  }
  return false;
}

/* One load with allocation `fail` of the hook (or `jfail` of jansson) failing. Returns whether
 * the load ran without any failure injected (the end of the sweep). */
static bool chaos_load(const char *text, const char *path, const expt_set *sets, size_t n_sets,
                       long fail, long jfail) {
  the_chaos = (chaos){0, fail, false, {0}};
  (void)test_oom_allocator(&the_chaos.json, jfail);
  expt__scenario_set_fail_hook(chaos_fail, &the_chaos);
  test_oom_json_begin(&the_chaos.json);
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = text != NULL ? expt_scenario_load_string(text, "c.json", sets, n_sets, &err)
                                 : expt_scenario_load(path, sets, n_sets, &err);
  test_oom_json_end();
  expt__scenario_set_fail_hook(NULL, NULL);
  bool failed = the_chaos.failed || test_oom_failed(&the_chaos.json);
  if (s == NULL) {
    assert_true(failed);
    assert_int_not_equal(err.code, RETRY_OK);
    return false;
  }
  expt_scenario_destroy(s);
  return !failed;
}

/* Fails allocation N for N = 0, 1, 2, ... until the load succeeds. Every failure must be
 * clean: NULL, an error set, nothing leaked (ASan and valgrind check the last part). */
static void test_expt_scenario_allocation_failures_fail_cleanly(void **state) {
  (void)state;
  char path[1024];
  char dists[1024];
  snprintf(path, sizeof path, "%s/scenarios/valid/policy-file/scenario.json", data_dir());
  snprintf(dists, sizeof dists, "%s/scenarios/valid/mixture-empirical/scenario.json", data_dir());
  expt_set sets[] = {{"services.api.workers", "3"}, {"clients.web.count", "2"}};
  /* The loader's and libretry's allocations. */
  const struct {
    const char *text, *path;
    const expt_set *sets;
    size_t n_sets;
  } runs[] = {{with_variants, NULL, sets, 2},
              {full, NULL, NULL, 0},
              {NULL, path, NULL, 0},
              {NULL, dists, NULL, 0}};
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    bool done = false;
    for (long k = 0; k < 100000 && !done; k++)
      done = chaos_load(runs[r].text, runs[r].path, runs[r].sets, runs[r].n_sets, k, -1);
    assert_true(done);
  }
  /* Jansson's allocations after the parse: count what parsing takes, then fail each later
   * one (with_variants has no policy and no --set, so nothing is parsed afterwards). */
  test_oom count;
  (void)test_oom_allocator(&count, -1);
  test_oom_json_begin(&count);
  json_t *doc = json_loadb(with_variants, strlen(with_variants),
                           JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
  long parse_allocs = count.n_calls;
  json_decref(doc);
  test_oom_json_end();
  assert_non_null(doc);
  bool done = false;
  for (long k = 0; k < 100000 && !done; k++)
    done = chaos_load(with_variants, NULL, NULL, 0, -1, parse_allocs + k);
  assert_true(done);
}

/* Replaces the k-th value of the tree under v (pre-order, the root excluded) by r. Returns
 * whether it did. */
static bool replace_nth(json_t *v, long *k, json_t *r) {
  if (json_is_object(v)) {
    for (void *it = json_object_iter(v); it != NULL; it = json_object_iter_next(v, it)) {
      if ((*k)-- == 0) {
        json_object_iter_set_new(v, it, json_deep_copy(r));
        return true;
      }
      if (replace_nth(json_object_iter_value(it), k, r)) return true;
    }
  } else if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++) {
      if ((*k)-- == 0) {
        json_array_set_new(v, i, json_deep_copy(r));
        return true;
      }
      if (replace_nth(json_array_get(v, i), k, r)) return true;
    }
  }
  return false;
}

/* Every value of two rich documents replaced in turn by values of every type and a few
 * edge cases: the loader must answer (load or error) without crashing or leaking. */
static void test_expt_scenario_mutations_never_crash(void **state) {
  (void)state;
  const char *inputs[2] = {full, with_variants};
  static const char *const repl[] = {"null",
                                     "0",
                                     "-1",
                                     "1.5",
                                     "\"\"",
                                     "\"x\"",
                                     "[]",
                                     "{}",
                                     "true",
                                     "[1, 2]",
                                     "\"1s\"",
                                     "\"0\"",
                                     "\"800/s\"",
                                     "9223372036854775807",
                                     "1e300",
                                     "\"UNAVAILABLE\"",
                                     "{\"dist\": \"pareto\"}",
                                     "\"9999999999999999h\"",
                                     "[\"0s\"]",
                                     "{\"kind\": \"spike\"}"};
  long loaded = 0, refused = 0;
  for (int in = 0; in < 2; in++) {
    json_t *base = json_loads(inputs[in], 0, NULL);
    assert_non_null(base);
    for (size_t r = 0; r < sizeof repl / sizeof repl[0]; r++) {
      json_t *rv = json_loads(repl[r], JSON_DECODE_ANY, NULL);
      assert_non_null(rv);
      for (long k = 0;; k++) {
        json_t *doc = json_deep_copy(base);
        long kk = k;
        bool did = replace_nth(doc, &kk, rv);
        if (!did) {
          json_decref(doc);
          break;
        }
        char *t = json_dumps(doc, 0);
        json_decref(doc);
        retry_error err;
        retry_error_clear(&err);
        expt_scenario *s = expt_scenario_load_string(t, "m.json", NULL, 0, &err);
        if (s != NULL) {
          loaded++;
          expt_scenario_destroy(s);
        } else {
          refused++;
          assert_true(err.code != RETRY_OK && err.message[0] != '\0');
        }
        free(t);
      }
      json_decref(rv);
    }
    json_decref(base);
  }
  assert_true(loaded > 0 && refused > 0);
}

/* }================================================================== */

/* The path functions report through a retry_error: RETRY_EINVAL with the reason alone (the
 * caller quotes the path), and the first reason is kept when a second call fails. */
static void test_expt_scenario_path_errors_fill_a_retry_error_first_wins(void **state) {
  (void)state;
  json_t *doc = json_loads("{\"services\": {\"api\": {\"workers\": 4}}}", 0, NULL);
  assert_non_null(doc);
  retry_error e;
  retry_error_clear(&e);
  assert_non_null(expt_scenario_path_get(doc, "services.api.workers", &e));
  assert_int_equal(e.code, RETRY_OK);
  assert_null(expt_scenario_path_get(doc, "services.apx.workers", &e));
  assert_int_equal(e.code, RETRY_EINVAL);
  assert_string_equal(e.message, "\"services.apx\" is not there");
  assert_string_equal(e.path, "");
  assert_int_equal(expt_scenario_path_check_set("a[01]", &e), RETRY_EINVAL);
  assert_string_equal(e.message, "\"services.apx\" is not there");
  retry_error_clear(&e);
  assert_int_equal(expt_scenario_path_check_set("a[01]", &e), RETRY_EINVAL);
  assert_string_equal(e.message, "an index has a leading zero");
  assert_int_equal(expt_scenario_path_check_set("a[1]", NULL), 0);
  retry_error_clear(&e);
  assert_int_equal(expt__scenario_path_set(doc, "services.api.workers[0]", json_integer(1), &e),
                   RETRY_EINVAL);
  assert_string_equal(e.message, "\"services.api.workers\" is a number, not an array");
  json_decref(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expt_scenario_durations_take_units_and_round_to_the_ns),
      cmocka_unit_test(test_expt_scenario_malformed_durations_are_einval_huge_ones_erange),
      cmocka_unit_test(test_expt_scenario_rates_take_a_unit_and_refuse_malformed_text),
      cmocka_unit_test(test_expt_scenario_sha256_matches_the_fips_vectors),
      cmocka_unit_test(test_expt_scenario_small_document_gets_the_defaults),
      cmocka_unit_test(test_expt_scenario_every_field_reaches_model_config),
      cmocka_unit_test(test_expt_scenario_dists_read_their_parameters),
      cmocka_unit_test(test_expt_scenario_rate_profiles_become_points),
      cmocka_unit_test(test_expt_scenario_set_edits_the_document_before_validation),
      cmocka_unit_test(test_expt_scenario_variants_apply_their_sets_and_merge_expectations),
      cmocka_unit_test(test_expt_scenario_faults_of_a_service_are_bounded),
      cmocka_unit_test(test_expt_scenario_inline_policy_errors_keep_the_policy_path),
      cmocka_unit_test(test_expt_scenario_policy_file_loads_and_missing_one_is_an_io_error),
      cmocka_unit_test(test_expt_scenario_policy_file_is_patched_by_set_and_variants),
      cmocka_unit_test(test_expt_scenario_provenance_records_files_and_overrides),
      cmocka_unit_test(test_expt_scenario_policy_file_io_errors_name_the_scenario_and_path),
      cmocka_unit_test(test_expt_scenario_select_keeps_the_named_variants),
      cmocka_unit_test(test_expt_scenario_memory_estimate_refuses_a_huge_world),
      cmocka_unit_test(test_expt_scenario_cycle_at_the_end_of_a_long_chain_is_named),
      cmocka_unit_test(test_expt_scenario_io_and_syntax_errors_name_the_source),
      cmocka_unit_test(test_expt_scenario_mixture_service_time_gives_the_mixtures_quantiles),
      cmocka_unit_test(test_expt_scenario_empirical_file_draws_its_samples_and_is_recorded),
      cmocka_unit_test(test_expt_scenario_loads_each_valid_case),
      cmocka_unit_test(test_expt_scenario_refuses_each_invalid_case),
      cmocka_unit_test(test_expt_scenario_allocation_failures_fail_cleanly),
      cmocka_unit_test(test_expt_scenario_mutations_never_crash),
      cmocka_unit_test(test_expt_scenario_path_errors_fill_a_retry_error_first_wins),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
