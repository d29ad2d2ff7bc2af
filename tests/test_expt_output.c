/*
 * test_expt_output.c: the summary document (keys, order, values, rounding), the files of --out
 * DIR (exact CSV bytes, byte-identical rewrites, no temporary file left after a failure) and the
 * text summary, on model_results built by hand.
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
#include <sys/stat.h>
#include <unistd.h>

#include "expt/expt_output.h"
#include "expt/expt_recovery.h"
#include "expt/expt_scenario.h"
#include "models/model_world.h"
#include "sim/sim_event.h"
#include "tests/support/oom.h"

/* {==================================================================
 * Fixtures
 * =================================================================== */

/* Results of a small run: client web -> api -> db, three 1 s buckets of two columns. */
typedef struct fixture {
  model_results r;
  model_edge_stats edges[2];
  model_service_stats services[2];
  char names[3][MODEL_TS_NAME_MAX];
  double values[9];
} fixture;

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  model_results *r = &f->r;
  r->events = 12345;
  r->sim_time_ns = 12500000000; /* 12.5 s */
  r->duration_ns = 10000000000; /* 10 s */
  r->calls_started = 300;
  r->calls_ok = 270;
  r->calls_failed = 25;
  r->calls_unfinished = 5;
  r->calls_ok_in_deadline = 250;
  r->attempts = 400;
  r->retries = 90;
  r->hedges = 10;
  r->by_status.grpc[RETRY_GRPC_OK] = 270;
  r->by_status.grpc[RETRY_GRPC_UNAVAILABLE] = 20;
  r->by_status.grpc[RETRY_GRPC_DEADLINE_EXCEEDED] = 4;
  r->by_status.http[503] = 1;
  r->by_status.http[429] = 2;
  r->by_stop[RETRY_STOP_OK] = 270;
  r->by_stop[RETRY_STOP_MAX_ATTEMPTS] = 20;
  r->by_stop[RETRY_STOP_DEADLINE] = 5;
  sim_hist_init(&r->latency);
  sim_hist_init(&r->latency_ok);
  sim_hist_record(&r->latency, 50); /* small values: exact buckets */
  sim_hist_record(&r->latency, 100);
  sim_hist_record(&r->latency, 100);
  sim_hist_record(&r->latency, 100);
  sim_hist_record(&r->latency_ok, 100);
  r->executions = 280;
  r->operations = 270;
  r->duplicates = 10;
  f->edges[0] = (model_edge_stats){.from = "web",
                                   .to = "api",
                                   .calls = 300,
                                   .attempts = 400,
                                   .retries = 90,
                                   .hedges = 10,
                                   .ok = 270,
                                   .worst_case = 15,
                                   .max_attempts = 3};
  f->edges[1] = (model_edge_stats){.from = "api",
                                   .to = "db",
                                   .calls = 390,
                                   .attempts = 1000,
                                   .retries = 610,
                                   .ok = 380,
                                   .worst_case = 15,
                                   .max_attempts = 5};
  r->edges = f->edges;
  r->n_edges = 2;
  f->services[0] = (model_service_stats){.name = "api",
                                         .arrivals = 400,
                                         .served = 395,
                                         .rejected = 5,
                                         .expired = 2,
                                         .abandoned = 1,
                                         .busy_s = 30.0,
                                         .wasted_work_s = 1.0 / 3.0,
                                         .capacity_s = 40.0,
                                         .queue_max = 17};
  f->services[1] = (model_service_stats){.name = "db",
                                         .arrivals = 1000,
                                         .served = 990,
                                         .rejected = 10,
                                         .busy_s = 5.0,
                                         .wasted_work_s = 0.25,
                                         .capacity_s = 0.0,
                                         .queue_max = 3,
                                         .executions = 280,
                                         .operations = 270};
  r->services = f->services;
  r->n_services = 2;
  snprintf(f->names[0], MODEL_TS_NAME_MAX, "offered_rps");
  snprintf(f->names[1], MODEL_TS_NAME_MAX, "goodput_rps");
  snprintf(f->names[2], MODEL_TS_NAME_MAX, "api_queue");
  double v[6] = {30, 28.5, 31, 1.0 / 3.0, 29, NAN};
  memcpy(f->values, v, sizeof v);
  r->ts.bucket_ns = 1000000000;
  r->ts.n_buckets = 3;
  r->ts.n_columns = 2;
  r->ts.names = f->names;
  r->ts.values = f->values;
}

/* Returns the keys of a JSON object joined by commas, in order (a static buffer). */
static const char *keys_of(const json_t *o) {
  static char buf[1024];
  buf[0] = '\0';
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)o, key, v) {
    if (buf[0]) strcat(buf, ",");
    strcat(buf, key);
  }
  return buf;
}

static double num_at(const json_t *o, const char *a, const char *b) {
  json_t *v = json_object_get(o, a);
  if (b != NULL) v = json_object_get(v, b);
  assert_non_null(v);
  return json_number_value(v);
}

/* Reads a whole file into a new string (free it). */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc(1, (size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return s;
}

static char *path_in(const char *dir, const char *name) {
  static char buf[2][512];
  static int which;
  which ^= 1;
  snprintf(buf[which], sizeof buf[which], "%s/%s", dir, name);
  return buf[which];
}

/* Lists the names in dir, sorted, joined by commas (a static buffer). */
static const char *list_dir(const char *dir) {
  static char buf[2048];
  struct dirent **ents;
  int n = scandir(dir, &ents, NULL, alphasort);
  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (ents[i]->d_name[0] != '.') {
      if (buf[0]) strcat(buf, ",");
      strcat(buf, ents[i]->d_name);
    }
    free(ents[i]);
  }
  if (n >= 0) free(ents);
  return buf;
}

/* Removes dir and everything in it (one level of subdirectories is enough here). */
static void remove_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static char *make_tmpdir(void) {
  char tmpl[] = "/tmp/test_expt_output.XXXXXX";
  char *d = mkdtemp(tmpl);
  assert_non_null(d);
  char *copy = malloc(strlen(d) + 1);
  assert_non_null(copy);
  strcpy(copy, d);
  return copy;
}

/* A scenario without variants holding the fixture. */
static expt_output *single_output(fixture *f) {
  fixture_init(f);
  expt_output *o = expt_output_create("demo", "ab12", 42, false);
  assert_non_null(o);
  assert_int_equal(expt_output_add_run(o, "demo", 42, &f->r, NULL), 0);
  return o;
}

/* }================================================================== */

/* {==================================================================
 * The document
 * =================================================================== */

static void test_expt_output_round_keeps_six_digits(void **state) {
  (void)state;
  assert_true(expt_output_round(1.0 / 3.0) == 0.333333);
  assert_true(expt_output_round(123456789.0) == 123457000.0);
  assert_true(expt_output_round(2.5) == 2.5);
  assert_false(signbit(expt_output_round(-0.0)));
  assert_true(isnan(expt_output_round(NAN)));
}

static void test_expt_output_run_keys_in_order(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  json_t *run = expt_output_run_json(&f.r, NULL);
  assert_non_null(run);
  assert_string_equal(keys_of(run),
                      "sim_time_s,events,calls,amplification,goodput_per_s,latency_ms,"
                      "latency_ok_ms,side_effects,services,recovery");
  json_t *calls = json_object_get(run, "calls");
  assert_string_equal(keys_of(calls),
                      "started,ok,failed,unfinished,by_status,by_stop_reason,attempts,"
                      "attempts_per_call,retries,hedges,stream_items,stream_duplicates");
  assert_string_equal(keys_of(json_object_get(calls, "by_status")),
                      "OK,DEADLINE_EXCEEDED,UNAVAILABLE,429,503");
  assert_string_equal(keys_of(json_object_get(calls, "by_stop_reason")),
                      "ok,non_retryable_status,method_not_idempotent,max_attempts,deadline,"
                      "pushback_stop,throttled,budget_exhausted,breaker_open,committed,streaming,"
                      "no_retry_policy");
  assert_string_equal(keys_of(json_object_get(run, "amplification")), "api,db,edges");
  json_t *edge = json_array_get(json_object_get(json_object_get(run, "amplification"), "edges"), 1);
  assert_string_equal(keys_of(edge),
                      "from,to,calls,attempts,amplification,attempts_per_call,worst_case,"
                      "max_attempts,ok,failed,retries,hedges,by_stop_reason,by_status,latency_ms,"
                      "latency_ok_ms,shared_state");
  assert_string_equal(keys_of(json_object_get(edge, "latency_ms")),
                      "p50,p90,p99,p999,max,mean,count");
  assert_string_equal(keys_of(json_object_get(run, "latency_ms")),
                      "p50,p90,p99,p999,max,mean,count");
  assert_string_equal(keys_of(json_object_get(run, "side_effects")),
                      "executions,operations,duplicates");
  assert_string_equal(keys_of(json_object_get(run, "services")), "api,db");
  assert_string_equal(keys_of(json_object_get(json_object_get(run, "services"), "db")),
                      "arrivals,arrivals_per_call,served,rejected,expired,abandoned,wasted_work_s,"
                      "utilization,queue_max,executions,operations,deduplicated");
  json_decref(run);
}

static void test_expt_output_run_values_come_from_the_results(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  json_t *run = expt_output_run_json(&f.r, NULL);
  assert_non_null(run);
  assert_true(num_at(run, "sim_time_s", NULL) == 12.5);
  assert_true(json_is_integer(json_object_get(run, "events")));
  assert_int_equal(json_integer_value(json_object_get(run, "events")), 12345);
  json_t *calls = json_object_get(run, "calls");
  assert_int_equal(json_integer_value(json_object_get(calls, "unfinished")), 5);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(calls, "by_status"), "429")),
                   2);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(calls, "by_stop_reason"), "throttled")),
      0);
  json_t *amp = json_object_get(run, "amplification");
  assert_true(num_at(amp, "api", NULL) == expt_output_round(400.0 / 300.0));
  assert_true(num_at(amp, "db", NULL) == expt_output_round(1000.0 / 300.0));
  json_t *e = json_array_get(json_object_get(amp, "edges"), 1);
  assert_string_equal(json_string_value(json_object_get(e, "from")), "api");
  assert_true(num_at(e, "amplification", NULL) == expt_output_round(1000.0 / 390.0));
  assert_int_equal(json_integer_value(json_object_get(e, "worst_case")), 15);
  assert_int_equal(json_integer_value(json_object_get(e, "max_attempts")), 5);
  assert_true(num_at(run, "goodput_per_s", NULL) == 25.0);
  /* 50, 100, 100, 100 ns: every bucket below 128 ns holds one value exactly. */
  assert_true(num_at(run, "latency_ms", "p50") == 0.0001);
  assert_true(num_at(run, "latency_ms", "max") == 0.0001);
  assert_true(num_at(run, "latency_ms", "mean") == expt_output_round(87.5 / 1e6));
  assert_int_equal(json_integer_value(json_object_get(json_object_get(run, "latency_ms"), "count")),
                   4);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(run, "latency_ok_ms"), "count")), 1);
  json_t *api = json_object_get(json_object_get(run, "services"), "api");
  assert_true(num_at(api, "utilization", NULL) == 0.75);
  assert_true(num_at(api, "wasted_work_s", NULL) == 0.333333);
  json_t *db = json_object_get(json_object_get(run, "services"), "db");
  assert_true(num_at(db, "utilization", NULL) == 0.0); /* capacity 0 */
  assert_int_equal(json_integer_value(json_object_get(db, "executions")), 280);
  json_decref(run);
}

/* An edge that can cancel (a k-of-n fan-out with cancel_rest) carries "cancelled" and
 * "cancelled_unworked", and "cancelled" among its stop reasons; the others and the top-level
 * calls never show them, so a run without such an edge reads as before. */
static void test_edge_cancelled_only_where_calls_can_be_cancelled(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  model_edge_stats *e = &f.edges[1];
  e->can_cancel = true;
  e->cancelled = 12;
  e->cancelled_unworked = 5;
  e->by_stop[RETRY_STOP_CANCELLED] = 12;
  sim_hist_init(&e->latency);
  sim_hist_init(&e->latency_ok);
  json_t *run = expt_output_run_json(&f.r, NULL);
  assert_non_null(run);
  json_t *edges = json_object_get(json_object_get(run, "amplification"), "edges");
  json_t *j = json_array_get(edges, 1);
  assert_int_equal(json_integer_value(json_object_get(j, "cancelled")), 12);
  assert_int_equal(json_integer_value(json_object_get(j, "cancelled_unworked")), 5);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(j, "by_stop_reason"), "cancelled")), 12);
  json_t *other = json_array_get(edges, 0);
  assert_null(json_object_get(other, "cancelled"));
  assert_null(json_object_get(json_object_get(other, "by_stop_reason"), "cancelled"));
  assert_null(json_object_get(json_object_get(json_object_get(run, "calls"), "by_stop_reason"),
                              "cancelled"));
  json_decref(run);
}

/* Issue 10, item 1: an edge carries its own stop reasons, statuses, retries, hedges,
 * latencies and shared state, not only its attempts. */
static void test_edge_by_stop_reason(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  model_edge_stats *e = &f.edges[1];
  e->failed = 10;
  e->by_stop[RETRY_STOP_OK] = 380;
  e->by_stop[RETRY_STOP_BUDGET_EXHAUSTED] = 7;
  e->by_stop[RETRY_STOP_MAX_ATTEMPTS] = 3;
  e->by_status.grpc[RETRY_GRPC_OK] = 380;
  e->by_status.grpc[RETRY_GRPC_UNAVAILABLE] = 10;
  sim_hist_init(&e->latency);
  sim_hist_init(&e->latency_ok);
  sim_hist_record(&e->latency, 100);
  sim_hist_record(&e->latency, 200);
  sim_hist_record(&e->latency_ok, 100);
  e->state = (model_edge_state){.holders = 4,
                                .has_budget = true,
                                .has_breaker = true,
                                .budget_mean = 2.5,
                                .budget_min = 1,
                                .budget_max = 4,
                                .breaker_closed = 3,
                                .breaker_open = 1,
                                .breaker_opened = 2};
  json_t *run = expt_output_run_json(&f.r, NULL);
  assert_non_null(run);
  json_t *edges = json_object_get(json_object_get(run, "amplification"), "edges");
  json_t *j = json_array_get(edges, 1);
  assert_int_equal(json_integer_value(json_object_get(j, "ok")), 380);
  assert_int_equal(json_integer_value(json_object_get(j, "failed")), 10);
  assert_int_equal(json_integer_value(json_object_get(j, "retries")), 610);
  assert_true(num_at(j, "attempts_per_call", NULL) == num_at(j, "amplification", NULL));
  json_t *stop = json_object_get(j, "by_stop_reason");
  assert_int_equal(json_integer_value(json_object_get(stop, "budget_exhausted")), 7);
  assert_int_equal(json_integer_value(json_object_get(stop, "max_attempts")), 3);
  assert_int_equal(json_integer_value(json_object_get(stop, "throttled")), 0);
  assert_string_equal(keys_of(json_object_get(j, "by_status")), "OK,UNAVAILABLE");
  assert_true(num_at(j, "latency_ms", "max") == 0.0002);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(j, "latency_ok_ms"), "count")), 1);
  /* Only the configured mechanisms appear. */
  json_t *st = json_object_get(j, "shared_state");
  assert_string_equal(keys_of(st), "holders,budget_balance,breaker");
  assert_true(num_at(st, "budget_balance", "mean") == 2.5);
  assert_true(num_at(st, "budget_balance", "min") == 1.0);
  assert_true(num_at(json_object_get(st, "breaker"), "open_fraction", NULL) == 0.25);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(st, "breaker"), "times_opened")), 2);
  /* An edge without shared state says null. */
  assert_true(json_is_null(json_object_get(json_array_get(edges, 0), "shared_state")));
  json_decref(run);
}

/* Issue 10, item 3: a worst case beyond 2^53 - 1 (31 layers of 1000 attempts saturate the
 * engine's uint64) stays a JSON integer, saturated at 2^53 - 1. */
static void test_worst_case_saturates(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  f.edges[0].worst_case = UINT64_MAX;
  f.edges[1].worst_case = UINT64_C(9007199254740991) - 1;
  json_t *run = expt_output_run_json(&f.r, NULL);
  assert_non_null(run);
  json_t *edges = json_object_get(json_object_get(run, "amplification"), "edges");
  json_t *w0 = json_object_get(json_array_get(edges, 0), "worst_case");
  json_t *w1 = json_object_get(json_array_get(edges, 1), "worst_case");
  assert_true(json_is_integer(w0));
  assert_true(json_integer_value(w0) == 9007199254740991LL);
  assert_true(json_integer_value(w1) == 9007199254740990LL);
  json_decref(run);
}

/* The same, end to end: 31 layers of 1000 attempts (the case; 1000^7 already saturates the
 * engine's uint64), built by the world from a scenario and written by the summary. */
static void test_worst_case_saturates_in_a_world(void **state) {
  (void)state;
  static char text[40000];
  const char *pol =
      "{\"retrysim\": {\"maxAttemptsLimit\": 1000}, \"methodConfig\": [{\"name\": "
      "[{}], \"retryPolicy\": {\"maxAttempts\": 1000, \"initialBackoff\": \"0.01s\", "
      "\"maxBackoff\": \"0.01s\", \"backoffMultiplier\": 1, "
      "\"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}";
  size_t n = (size_t)snprintf(text, sizeof text, "{\"duration\": \"1s\", \"services\": {");
  for (int i = 0; i < 31; i++) {
    n += (size_t)snprintf(text + n, sizeof text - n, "%s\"s%d\": {\"service_time\": \"1ms\"",
                          i ? "," : "", i);
    if (i < 30)
      n += (size_t)snprintf(text + n, sizeof text - n,
                            ", \"calls\": [{\"service\": \"s%d\", \"method\": \"/x.X/M\", "
                            "\"policy\": %s}]",
                            i + 1, pol);
    n += (size_t)snprintf(text + n, sizeof text - n, "}");
  }
  n += (size_t)snprintf(text + n, sizeof text - n,
                        "}, \"clients\": {\"c\": {\"target\": \"s0\", \"methods\": [\"/x.X/M\"], "
                        "\"arrival\": {\"kind\": \"script\", \"at\": [\"0s\"]}, \"policy\": %s}}}",
                        pol);
  assert_true(n < sizeof text);
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *sc = expt_scenario_load_string(text, "<test>", NULL, 0, &err);
  if (sc == NULL) fail_msg("%s", err.message);
  sim_kernel *k = sim_kernel_create(0, NULL);
  assert_non_null(k);
  model_world *w = model_world_create(expt_scenario_config(sc, 0), k, 1, &err);
  assert_non_null(w);
  assert_int_equal(model_world_run(w, NULL, NULL, &err), 0);
  const model_results *r = model_world_results(w);
  assert_true(r->edges[r->n_edges - 1].worst_case == UINT64_MAX);
  json_t *run = expt_output_run_json(r, NULL);
  assert_non_null(run);
  json_t *edges = json_object_get(json_object_get(run, "amplification"), "edges");
  json_t *last = json_object_get(json_array_get(edges, json_array_size(edges) - 1), "worst_case");
  assert_true(json_is_integer(last));
  assert_true(json_integer_value(last) == 9007199254740991LL);
  /* Two layers: 1000^2, exact. */
  assert_true(json_integer_value(json_object_get(json_array_get(edges, 1), "worst_case")) ==
              1000000);
  json_decref(run);
  model_world_destroy(w);
  sim_kernel_destroy(k);
  expt_scenario_destroy(sc);
}

/* The edge called from -> to in a run object, or NULL. */
static json_t *edge_of(const json_t *run, const char *from, const char *to) {
  json_t *edges = json_object_get(json_object_get(run, "amplification"), "edges");
  size_t i;
  json_t *e;
  json_array_foreach(edges, i, e) {
    if (strcmp(json_string_value(json_object_get(e, "from")), from) == 0 &&
        strcmp(json_string_value(json_object_get(e, "to")), to) == 0)
      return e;
  }
  return NULL;
}

static int64_t int_at(const json_t *o, const char *a, const char *b) {
  json_t *v = json_object_get(o, a);
  if (b != NULL) v = json_object_get(v, b);
  assert_true(json_is_integer(v));
  return (int64_t)json_integer_value(v);
}

/* Issue 10, item 5: tests/data/scenarios/valid/internal-edge, the new user's scenario. The
 * front door has no retries and shows 1 attempt per call in every variant; the internal edge
 * checkout -> payments carries the differences: its attempts per call, its stop reasons, its
 * p99 and its shared state, in summary.json; and the written timeseries.csv has the edge's
 * columns (the shared-state ones only where configured). */
static void test_internal_edge_scenario_shows_the_edge(void **state) {
  (void)state;
  const char *d = getenv("TEST_DATA_DIR");
  char path[512];
  snprintf(path, sizeof path, "%s/scenarios/valid/internal-edge/scenario.json",
           d != NULL && d[0] != '\0' ? d : "tests/data");
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load(path, NULL, 0, &err);
  if (s == NULL) fail_msg("%s", err.message);
  assert_int_equal(expt_scenario_n_runs(s), 4);
  expt_output *o = expt_output_create("internal-edge", "ab12", 3, true);
  assert_non_null(o);
  for (size_t i = 0; i < 4; i++) {
    sim_kernel *k = sim_kernel_create(0, NULL);
    assert_non_null(k);
    const model_config *cfg = expt_scenario_config(s, i);
    model_world *w = model_world_create(cfg, k, 3, &err);
    assert_non_null(w);
    assert_int_equal(model_world_run(w, NULL, NULL, &err), 0);
    expt_recovery rec;
    assert_int_equal(
        expt_recovery_of_run(expt_scenario_recovery(s, i), cfg, model_world_results(w), &rec), 0);
    assert_int_equal(
        expt_output_add_run(o, expt_scenario_run_name(s, i), 3, model_world_results(w), &rec), 0);
    model_world_destroy(w);
    sim_kernel_destroy(k);
  }
  const json_t *none = expt_output_run(o, 0), *retries = expt_output_run(o, 1);
  const json_t *throttled = expt_output_run(o, 2), *finagle = expt_output_run(o, 3);
  const json_t *runs[4] = {none, retries, throttled, finagle};
  double apc[4], p99[4];
  for (int i = 0; i < 4; i++) {
    /* The front door shows nothing: one attempt per call, no retries. */
    assert_true(num_at(runs[i], "calls", "attempts_per_call") == 1.0);
    json_t *e = edge_of(runs[i], "checkout", "payments");
    assert_non_null(e);
    apc[i] = num_at(e, "attempts_per_call", NULL);
    p99[i] = num_at(e, "latency_ms", "p99");
    print_message("%s: checkout->payments %.4f attempts/call, p99 %.1f ms\n",
                  json_string_value(json_object_get(runs[i], "variant")), apc[i], p99[i]);
    assert_int_equal(int_at(e, "ok", NULL) + int_at(e, "failed", NULL), int_at(e, "calls", NULL));
  }
  /* The edge's figures differ between every pair of variants. */
  for (int i = 0; i < 4; i++)
    for (int j = i + 1; j < 4; j++)
      assert_true(apc[i] != apc[j]);
  json_t *e_none = edge_of(none, "checkout", "payments");
  json_t *e_retries = edge_of(retries, "checkout", "payments");
  json_t *e_thr = edge_of(throttled, "checkout", "payments");
  json_t *e_fin = edge_of(finagle, "checkout", "payments");
  assert_true(apc[0] == 1.0 && apc[1] > 1.02);
  assert_true(json_is_null(json_object_get(e_none, "shared_state")));
  assert_true(json_is_null(json_object_get(e_retries, "shared_state")));
  assert_int_equal(int_at(e_none, "retries", NULL), 0);
  assert_true(int_at(e_retries, "retries", NULL) > 100);
  /* How each stopped: no policy, out of time, throttled, out of budget. */
  assert_int_equal(int_at(e_none, "by_stop_reason", "no_retry_policy"),
                   int_at(e_none, "failed", NULL));
  assert_true(int_at(e_retries, "by_stop_reason", "deadline") > 0);
  assert_true(int_at(e_thr, "by_stop_reason", "throttled") > 0);
  assert_true(int_at(e_fin, "by_stop_reason", "budget_exhausted") > 0);
  assert_int_equal(int_at(e_retries, "by_stop_reason", "throttled"), 0);
  /* Throttling keeps the edge's tail below plain retries'. */
  assert_true(p99[2] < p99[1]);
  /* Shared state: the 3 checkout replicas hold it, only the configured mechanism shows. */
  json_t *st = json_object_get(e_thr, "shared_state");
  assert_string_equal(keys_of(st), "holders,throttle_tokens");
  assert_int_equal(int_at(st, "holders", NULL), 3);
  st = json_object_get(e_fin, "shared_state");
  assert_string_equal(keys_of(st), "holders,budget_balance");
  /* The time series, as written. */
  char *dir = make_tmpdir();
  assert_int_equal(expt_output_write_dir(o, dir, &err), 0);
  const char *cols[] = {"checkout->payments_attempt_rps",
                        "checkout->payments_retry_rps",
                        "checkout->payments_failure_rps",
                        "shoppers->checkout_attempt_rps",
                        "latency_ok_p99_ms",
                        "latency_failed_p99_ms"};
  const char *files[] = {"timeseries-none.csv", "timeseries-retries.csv",
                         "timeseries-throttled.csv", "timeseries-finagle.csv"};
  for (int i = 0; i < 4; i++) {
    char *csv = slurp(path_in(dir, files[i]));
    assert_non_null(csv);
    char *nl = strchr(csv, '\n');
    assert_non_null(nl);
    *nl = '\0';
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
      assert_non_null(strstr(csv, cols[c]));
    assert_true((strstr(csv, "checkout->payments_tokens") != NULL) == (i == 2));
    assert_true((strstr(csv, "checkout->payments_budget") != NULL) == (i == 3));
    assert_null(strstr(csv, "checkout->payments_breaker_open"));
    free(csv);
  }
  remove_tree(dir);
  free(dir);
  expt_output_destroy(o);
  expt_scenario_destroy(s);
}

static void test_expt_output_no_calls_gives_zero_ratios(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  f.r.calls_started = 0;
  f.r.duration_ns = 0;
  f.edges[0].calls = 0;
  sim_hist_init(&f.r.latency);
  json_t *run = expt_output_run_json(&f.r, NULL);
  assert_non_null(run);
  assert_true(num_at(run, "amplification", "api") == 0.0);
  assert_true(num_at(run, "goodput_per_s", NULL) == 0.0);
  assert_true(num_at(run, "latency_ms", "p99") == 0.0);
  assert_true(num_at(run, "latency_ms", "max") == 0.0);
  json_t *e = json_array_get(json_object_get(json_object_get(run, "amplification"), "edges"), 0);
  assert_true(num_at(e, "amplification", NULL) == 0.0);
  json_decref(run);
}

static void test_expt_output_single_run_summary_is_the_run_with_provenance(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  const json_t *doc = expt_output_summary(o);
  assert_string_equal(keys_of(doc),
                      "scenario,version,scenario_sha256,seed,variant,sim_time_s,events,calls,"
                      "amplification,goodput_per_s,latency_ms,latency_ok_ms,side_effects,"
                      "services,recovery");
  assert_string_equal(json_string_value(json_object_get(doc, "version")), RETRY_VERSION);
  assert_true(json_is_null(json_object_get(doc, "variant")));
  assert_int_equal(json_integer_value(json_object_get(doc, "seed")), 42);
  /* The run object for expectations has no provenance keys. */
  assert_null(json_object_get(expt_output_run(o, 0), "scenario"));
  assert_int_equal(expt_output_add_run(o, "again", 42, &f.r, NULL), RETRY_EINVAL);
  assert_int_equal(expt_output_n_runs(o), 1);
  expt_output_destroy(o);
}

static void test_expt_output_variant_summary_lists_runs_and_big_seeds_as_strings(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  expt_output *o = expt_output_create("demo", "ab12", UINT64_MAX, true);
  assert_non_null(o);
  assert_int_equal(expt_output_add_run(o, "baseline", UINT64_MAX, &f.r, NULL), 0);
  assert_int_equal(expt_output_add_run(o, "budget", 7, &f.r, NULL), 0);
  const json_t *doc = expt_output_summary(o);
  assert_string_equal(keys_of(doc), "scenario,version,scenario_sha256,seed,variants");
  /* Seeds past INT64_MAX do not fit a JSON integer: written as a decimal string. */
  assert_string_equal(json_string_value(json_object_get(doc, "seed")), "18446744073709551615");
  const json_t *v = json_object_get(doc, "variants");
  assert_int_equal(json_array_size(v), 2);
  assert_string_equal(keys_of(json_array_get(v, 0)),
                      "variant,sim_time_s,events,calls,amplification,goodput_per_s,latency_ms,"
                      "latency_ok_ms,side_effects,services,recovery");
  assert_string_equal(json_string_value(json_object_get(json_array_get(v, 1), "variant")),
                      "budget");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(v, 1), "seed")), 7);
  assert_ptr_equal(expt_output_run(o, 1), json_array_get(v, 1));
  expt_output_destroy(o);
}

static void test_expt_output_json_is_stable_text(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  char *a = NULL, *b = NULL;
  size_t na, nb;
  FILE *fa = open_memstream(&a, &na);
  assert_int_equal(expt_output_write_json(o, fa), 0);
  fclose(fa);
  expt_output_destroy(o);
  o = single_output(&f);
  FILE *fb = open_memstream(&b, &nb);
  assert_int_equal(expt_output_write_json(o, fb), 0);
  fclose(fb);
  expt_output_destroy(o);
  assert_string_equal(a, b);
  assert_true(na > 2 && a[na - 1] == '\n' && a[na - 2] == '}');
  assert_non_null(strstr(a, "{\n  \"scenario\": \"demo\",\n  \"version\": "));
  assert_non_null(strstr(a, "\"wasted_work_s\": 0.333333,"));
  assert_non_null(strstr(a, "\"sim_time_s\": 12.5,"));
  assert_non_null(strstr(a, "\"utilization\": 0.0,"));
  free(a);
  free(b);
}

/* jansson's allocation N fails, for N = 0, 1, 2, ... until none fails: every failure is
 * clean, RETRY_ENOMEM with no run added and nothing leaked (tests/support/oom.h). */
static void test_expt_output_survives_jansson_alloc_failures(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  for (long n = 0;; n++) {
    test_oom c;
    (void)test_oom_allocator(&c, n);
    test_oom_json_begin(&c);
    expt_output *o = expt_output_create("demo", "ab12", 1, true);
    int rc = o == NULL ? RETRY_ENOMEM : expt_output_add_run(o, "v", 2, &f.r, NULL);
    bool made = o != NULL;
    size_t n_runs = made ? expt_output_n_runs(o) : 0;
    expt_output_destroy(o);
    test_oom_json_end(); /* before any assertion can end the test */
    if (made) assert_int_equal(n_runs, rc == 0 ? 1 : 0);
    assert_int_equal(c.live, 0);
    if (!test_oom_failed(&c)) {
      assert_int_equal(rc, 0);
      break;
    }
    assert_int_equal(rc, RETRY_ENOMEM);
    assert_true(n < 100000);
  }
}

/* }================================================================== */

/* {==================================================================
 * Files
 * =================================================================== */

static void test_expt_output_single_run_writes_exact_csv_bytes(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  char *dir = make_tmpdir();
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_output_write_dir(o, dir, &err), 0);
  assert_string_equal(list_dir(dir), "latency.csv,summary.json,timeseries.csv,variants.csv");
  char *ts = slurp(path_in(dir, "timeseries.csv"));
  assert_string_equal(ts,
                      "t_s,offered_rps,goodput_rps\n"
                      "0,30,28.5\n"
                      "1,31,0.333333\n"
                      "2,29,\n"); /* NaN: an empty field */
  char *lat = slurp(path_in(dir, "latency.csv"));
  assert_string_equal(lat,
                      "variant,lo_ms,hi_ms,count,cumulative_fraction\n"
                      "demo,0.000050,0.000050,1,0.250000\n"
                      "demo,0.000100,0.000100,3,1.000000\n");
  /* One row of the figures the comparison plot needs: success 270/300, amplification
   * 400/300, goodput 250 in 10 s, wasted 1/3 + 1/4 s; no trigger, so recovery is empty. */
  char *var = slurp(path_in(dir, "variants.csv"));
  assert_string_equal(var,
                      "variant,calls,ok,failed,success_ratio,attempts,amplification,goodput_per_s,"
                      "latency_p50_ms,latency_p99_ms,latency_p999_ms,duplicates,wasted_work_s,"
                      "recovered,recovery_s\n"
                      "demo,300,270,25,0.9,400,1.33333,25,0.0001,0.0001,0.0001,10,0.583333,,\n");
  free(var);
  char *sum = slurp(path_in(dir, "summary.json"));
  char *mem = NULL;
  size_t n;
  FILE *m = open_memstream(&mem, &n);
  expt_output_write_json(o, m);
  fclose(m);
  assert_string_equal(sum, mem);
  free(ts);
  free(lat);
  free(sum);
  free(mem);
  expt_output_destroy(o);
  remove_tree(dir);
  free(dir);
}

static void test_expt_output_variants_get_their_own_files_and_quoted_names(void **state) {
  (void)state;
  fixture f, g;
  fixture_init(&f);
  fixture_init(&g);
  /* The second variant has a third column (say a service the first does not have). */
  g.r.ts.n_columns = 3;
  double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  memcpy(g.values, v, sizeof v);
  g.r.ts.n_buckets = 2;
  g.r.ts.bucket_ns = 500000000;
  expt_output *o = expt_output_create("demo", "ab12", 1, true);
  assert_int_equal(expt_output_add_run(o, "base", 1, &f.r, NULL), 0);
  assert_int_equal(expt_output_add_run(o, "with/slash,comma", 1, &g.r, NULL), 0);
  char *dir = make_tmpdir();
  assert_int_equal(expt_output_write_dir(o, dir, NULL), 0);
  assert_string_equal(list_dir(dir),
                      "latency.csv,summary.json,timeseries-base.csv,"
                      "timeseries-with_slash_comma.csv,timeseries.csv,variants.csv");
  char *all = slurp(path_in(dir, "timeseries.csv"));
  assert_string_equal(all,
                      "variant,t_s,offered_rps,goodput_rps,api_queue\n"
                      "base,0,30,28.5,\n"
                      "base,1,31,0.333333,\n"
                      "base,2,29,,\n"
                      "\"with/slash,comma\",0,1,2,3\n"
                      "\"with/slash,comma\",0.5,4,5,6\n");
  char *one = slurp(path_in(dir, "timeseries-with_slash_comma.csv"));
  assert_string_equal(one, "t_s,offered_rps,goodput_rps,api_queue\n0,1,2,3\n0.5,4,5,6\n");
  char *lat = slurp(path_in(dir, "latency.csv"));
  assert_non_null(strstr(lat, "\nbase,0.000050,"));
  assert_non_null(strstr(lat, "\n\"with/slash,comma\",0.000100,0.000100,3,1.000000\n"));
  free(all);
  free(one);
  free(lat);
  expt_output_destroy(o);
  remove_tree(dir);
  free(dir);
}

static void test_expt_output_rewrite_is_byte_identical(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  char *dir = make_tmpdir();
  static const char *const names[] = {"summary.json", "timeseries.csv", "latency.csv"};
  char *first[3];
  assert_int_equal(expt_output_write_dir(o, dir, NULL), 0);
  for (int i = 0; i < 3; i++)
    first[i] = slurp(path_in(dir, names[i]));
  expt_output_destroy(o);
  o = single_output(&f); /* built again from equal results */
  assert_int_equal(expt_output_write_dir(o, dir, NULL), 0);
  for (int i = 0; i < 3; i++) {
    char *again = slurp(path_in(dir, names[i]));
    assert_string_equal(first[i], again);
    free(again);
    free(first[i]);
  }
  assert_string_equal(list_dir(dir), "latency.csv,summary.json,timeseries.csv,variants.csv");
  expt_output_destroy(o);
  remove_tree(dir);
  free(dir);
}

static void test_expt_output_creates_missing_parents(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  char *dir = make_tmpdir();
  char deep[600];
  snprintf(deep, sizeof deep, "%s/a/b/c/", dir);
  assert_int_equal(expt_output_write_dir(o, deep, NULL), 0);
  assert_string_equal(list_dir(deep), "latency.csv,summary.json,timeseries.csv,variants.csv");
  expt_output_destroy(o);
  remove_tree(dir);
  free(dir);
}

static void test_expt_output_dir_that_is_a_file_fails(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  char *dir = make_tmpdir();
  char *file = path_in(dir, "plain");
  FILE *fp = fopen(file, "w");
  assert_non_null(fp);
  fclose(fp);
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_output_write_dir(o, file, &err), RETRY_EIO);
  assert_int_equal(err.code, RETRY_EIO);
  assert_string_equal(err.source, file);
  assert_non_null(strstr(err.message, "cannot create directory"));
  /* A path through the file fails too. */
  char below[600];
  snprintf(below, sizeof below, "%s/sub", file);
  retry_error_clear(&err);
  assert_int_equal(expt_output_write_dir(o, below, &err), RETRY_EIO);
  assert_string_equal(list_dir(dir), "plain");
  expt_output_destroy(o);
  remove_tree(dir);
  free(dir);
}

static void test_expt_output_failed_write_leaves_no_temp_files(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  char *dir = make_tmpdir();
  /* latency.csv's temporary name is taken by a directory, so opening it fails (even as root),
   * after timeseries.csv's temporary file was written. */
  char blocker[64];
  snprintf(blocker, sizeof blocker, "latency.csv.tmp.%ld", (long)getpid());
  assert_int_equal(mkdir(path_in(dir, blocker), 0700), 0);
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_output_write_dir(o, dir, &err), RETRY_EIO);
  assert_string_equal(err.source, path_in(dir, "latency.csv"));
  assert_non_null(strstr(err.message, blocker));
  assert_string_equal(list_dir(dir), blocker); /* only what was there before */
  /* An older summary.json is kept as it was when writing fails. */
  FILE *old = fopen(path_in(dir, "summary.json"), "w");
  fputs("old\n", old);
  fclose(old);
  assert_int_equal(expt_output_write_dir(o, dir, NULL), RETRY_EIO);
  char *kept = slurp(path_in(dir, "summary.json"));
  assert_string_equal(kept, "old\n");
  free(kept);
  expt_output_destroy(o);
  remove_tree(dir);
  free(dir);
}

/* }================================================================== */

/* {==================================================================
 * Text
 * =================================================================== */

/* Prints the text summary into *s (the caller's variable, as open_memstream wants; free it). */
static void text_of(const expt_output *o, char **s, size_t *n) {
  FILE *f = open_memstream(s, n);
  assert_non_null(f);
  assert_int_equal(expt_output_print_text(o, f), 0);
  fclose(f);
}

static void test_expt_output_text_summary_shows_every_section(void **state) {
  (void)state;
  fixture f;
  expt_output *o = single_output(&f);
  char *s = NULL;
  size_t n;
  text_of(o, &s, &n);
  assert_non_null(strstr(s, "scenario      demo (seed 42, retrysim " RETRY_VERSION ")\n"));
  assert_non_null(strstr(s, "sim time      12.5 s, 12345 events\n"));
  assert_non_null(
      strstr(s, "calls         started 300, ok 270 (90.00 %), failed 25, unfinished 5\n"));
  assert_non_null(strstr(s, "goodput       25 calls/s"));
  assert_non_null(strstr(s, "p50 0.0001"));
  assert_non_null(strstr(s, "stop reasons  ok 270, max_attempts 20, deadline 5\n"));
  /* The three names of docs/cli.md: load x per service, attempts/call per edge. */
  assert_non_null(strstr(s, "  db       3.333x\n"));
  assert_non_null(strstr(s, "  edge      calls  attempts  attempts/call  worst case"));
  assert_non_null(
      strstr(s, "  web->api    300       400          1.333         15x             3"));
  assert_non_null(
      strstr(s, "  api->db     390      1000          2.564         15x             5"));
  assert_non_null(strstr(s,
                         "service  arrivals  rejected  expired  util %  wasted s  queue max\n"
                         "api           400         5        2    75.0    0.3333         17\n"
                         "db           1000        10        0     0.0      0.25          3\n"));
  free(s);
  expt_output_destroy(o);
}

static void test_expt_output_text_variants_table_is_aligned(void **state) {
  (void)state;
  fixture f, g;
  fixture_init(&f);
  fixture_init(&g);
  g.r.by_stop[RETRY_STOP_THROTTLED] = 99;
  expt_output *o = expt_output_create("demo", "ab12", 1, true);
  assert_int_equal(expt_output_add_run(o, "baseline", 1, &f.r, NULL), 0);
  assert_int_equal(expt_output_add_run(o, "throttled-variant", 1, &g.r, NULL), 0);
  char *s = NULL;
  size_t n;
  text_of(o, &s, &n);
  /* Header and rows aligned: every line of the table starts its columns at the same place. */
  const char *head = strstr(s, "variant ");
  assert_non_null(head);
  const char *row1 = strstr(s, "\nbaseline ");
  const char *row2 = strstr(s, "\nthrottled-variant ");
  assert_non_null(row1);
  assert_non_null(row2);
  /* The last column starts at the same offset on the header and on both rows. */
  long at_head = strstr(head, "top stop") - head;
  long at1 = strstr(row1 + 1, "max_attempts 20") - (row1 + 1);
  long at2 = strstr(row2 + 1, "throttled 99") - (row2 + 1);
  assert_true(at_head > 40);
  assert_int_equal(at1, at_head);
  assert_int_equal(at2, at_head);
  /* Top-level amplification: web -> api, 400 / 300. */
  assert_non_null(strstr(row1, " 1.333 "));
  assert_non_null(strstr(row1, " 3.333 db "));
  free(s);
  expt_output_destroy(o);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expt_output_round_keeps_six_digits),
      cmocka_unit_test(test_expt_output_run_keys_in_order),
      cmocka_unit_test(test_expt_output_run_values_come_from_the_results),
      cmocka_unit_test(test_edge_by_stop_reason),
      cmocka_unit_test(test_edge_cancelled_only_where_calls_can_be_cancelled),
      cmocka_unit_test(test_worst_case_saturates),
      cmocka_unit_test(test_worst_case_saturates_in_a_world),
      cmocka_unit_test(test_internal_edge_scenario_shows_the_edge),
      cmocka_unit_test(test_expt_output_no_calls_gives_zero_ratios),
      cmocka_unit_test(test_expt_output_single_run_summary_is_the_run_with_provenance),
      cmocka_unit_test(test_expt_output_variant_summary_lists_runs_and_big_seeds_as_strings),
      cmocka_unit_test(test_expt_output_json_is_stable_text),
      cmocka_unit_test(test_expt_output_survives_jansson_alloc_failures),
      cmocka_unit_test(test_expt_output_single_run_writes_exact_csv_bytes),
      cmocka_unit_test(test_expt_output_variants_get_their_own_files_and_quoted_names),
      cmocka_unit_test(test_expt_output_rewrite_is_byte_identical),
      cmocka_unit_test(test_expt_output_creates_missing_parents),
      cmocka_unit_test(test_expt_output_dir_that_is_a_file_fails),
      cmocka_unit_test(test_expt_output_failed_write_leaves_no_temp_files),
      cmocka_unit_test(test_expt_output_text_summary_shows_every_section),
      cmocka_unit_test(test_expt_output_text_variants_table_is_aligned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
