/*
 * test_model_fastpath.c: the world's fast paths and their one table of features
 * (models/model_feature.c). A world with every fast path forced off must do exactly what the
 * same world does with them on; and the table must matter: with one row left out (the test
 * hook model__features_skip), a fast path skips that feature and the world does something
 * else, which is what tools/test/test-fastpath.sh would catch over every scenario. Scenarios are
 * written with single quotes, turned into double quotes before loading.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario.h"
#include "models/model_int.h"
#include "models/model_world.h"
#include "sim/sim_event.h"
#include "tests/support/world.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

/* How a world is run: as configured, with every fast path forced off, or without one row. */
typedef enum { AS_IS, ALL_OFF, SKIP_ROW } how;

typedef struct world_run {
  model_config cfg; /* the scenario's, copied (the world borrows it) */
  sim_kernel *k;
  model_world *w;
  const model_results *r;
} world_run;

static void world_run_start(world_run *x, const expt_scenario *s, how h, int row) {
  memset(x, 0, sizeof *x);
  x->cfg = *expt_scenario_config(s, 0); /* shallow: the scenario owns what it points to */
  x->cfg.fast_paths_off = h == ALL_OFF;
  retry_error err;
  retry_error_clear(&err);
  x->k = sim_kernel_create(0, NULL);
  assert_non_null(x->k);
  x->w = model_world_create(&x->cfg, x->k, 11, &err);
  assert_non_null(x->w);
  if (h == SKIP_ROW) model__features_skip(x->w, row);
  assert_int_equal(model_world_run(x->w, NULL, NULL, &err), 0);
  x->r = model_world_results(x->w);
}

static void world_run_free(world_run *x) {
  model_world_destroy(x->w);
  sim_kernel_destroy(x->k);
}

/* Whether two runs measured the same: the counts, the latencies and the whole time series. */
static bool same_results(const model_results *a, const model_results *b) {
  if (a->events != b->events || a->calls_ok != b->calls_ok || a->calls_failed != b->calls_failed ||
      a->attempts != b->attempts || a->retries != b->retries)
    return false;
  if (memcmp(a->by_stop, b->by_stop, sizeof a->by_stop) != 0 ||
      memcmp(&a->latency, &b->latency, sizeof a->latency) != 0)
    return false;
  if (a->ts.n_buckets != b->ts.n_buckets || a->ts.n_columns != b->ts.n_columns) return false;
  return memcmp(a->ts.values, b->ts.values, a->ts.n_buckets * a->ts.n_columns * sizeof(double)) ==
         0;
}

/* The row of the table named name; fails the test when there is none. */
static int row_named(const char *name) {
  for (size_t i = 0; i < model__features_count(); i++)
    if (strcmp(model__feature_name(i), name) == 0) return (int)i;
  fail_msg("no feature named %s", name);
  return -1;
}

/* }================================================================== */

/* {==================================================================
 * The table
 * =================================================================== */

/* Every row has a name of its own (the hook and the docs refer to rows by it). */
static void test_model_fastpath_rows_are_named_once(void **state) {
  (void)state;
  size_t n = model__features_count();
  assert_true(n >= 20);
  for (size_t i = 0; i < n; i++) {
    assert_non_null(model__feature_name(i));
    for (size_t j = 0; j < i; j++)
      assert_string_not_equal(model__feature_name(i), model__feature_name(j));
  }
  assert_null(model__feature_name(n));
}

/* One feature, a scenario in which it is at work, and the row that names it. */
typedef struct row_case {
  const char *row;
  const char *scenario;
} row_case;

#define CLIENT                                                                   \
  " 'clients': {'web': {'count': 4, 'target': 'api', 'methods': ['/api.A/Get']," \
  "   'deadline': '60ms', 'network': {'dist': 'exponential', 'mean': '1ms'},"    \
  "   'arrival': {'kind': 'open', 'rate': '300/s'}"

static const row_case cases[] = {
    /* the arrival screen: a fault refuses a fifth of the requests */
    {"faults",
     "{'duration': '5s', 'services': {'api': {'workers': 4,"
     "   'service_time': {'dist': 'exponential', 'mean': '5ms'},"
     "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.2}]}}," CLIENT "}}}"},
    /* a worker's start: a deadline-aware server drops what expired in its queue */
    {"deadline-aware server",
     "{'duration': '5s', 'services': {'api': {'workers': 1,"
     "   'queue': {'capacity': 100}, 'deadline': 'drop',"
     "   'service_time': {'dist': 'exponential', 'mean': '3ms'}}}," CLIENT "}}}"},
    /* the work's time: congestion slows every request down */
    {"congestion slowdown",
     "{'duration': '5s', 'services': {'api': {'workers': 4,"
     "   'slowdown_per_busy': 0.5,"
     "   'service_time': {'dist': 'exponential', 'mean': '5ms'}}}," CLIENT "}}}"},
    /* the work's time: work that grows with the queue */
    {"work that grows",
     "{'duration': '5s', 'services': {'api': {'workers': 4,"
     "   'work': {'per_queued': 0.1},"
     "   'service_time': {'dist': 'exponential', 'mean': '5ms'}}}," CLIENT "}}}"},
    /* a bare call: a breaker without retries still counts the failures, and opens */
    {"channel state",
     "{'duration': '5s', 'services': {'api': {'workers': 4,"
     "   'service_time': {'dist': 'exponential', 'mean': '5ms'},"
     "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.3}]}}," CLIENT
     ", 'policy': {'retrysim': {'circuitBreaker': {'type': 'consecutive',"
     "   'failureThreshold': 3, 'waitDurationInOpenState': '0.1s',"
     "   'permittedNumberOfCallsInHalfOpenState': 1,"
     "   'failureStatusCodes': ['UNAVAILABLE']}}}"
     "}}}"},
    /* a bare call: a pushed policy that retries lands at 1 s on an edge without one */
    {"policy push",
     "{'duration': '5s', 'services': {'api': {'workers': 4,"
     "   'service_time': {'dist': 'exponential', 'mean': '5ms'},"
     "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.3}]}}," CLIENT
     "}}, 'events': [{'at': '1s', 'action': 'policy', 'edge': 'web->api', 'policy':"
     "   {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
     "    'initialBackoff': '0.01s', 'maxBackoff': '0.1s', 'backoffMultiplier': 2,"
     "    'retryableStatusCodes': ['UNAVAILABLE']}}]}}]}"},
    /* the arrival screen: a look-aside cache answers its hits before any replica */
    {"look-aside cache",
     "{'duration': '5s', 'services': {'api': {'workers': 4,"
     "   'service_time': {'dist': 'exponential', 'mean': '5ms'},"
     "   'cache': {'keys': {'dist': 'zipf', 's': 1.1, 'n': 1000}, 'capacity': 100}}}," CLIENT
     "}}}"},
};

/* For each case: the fast paths forced off change nothing; the row left out changes what the
 * world does (the fast path then skips a feature that is at work). */
static void test_model_fastpath_a_row_left_out_shows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    expt_scenario *s = test_load(cases[i].scenario);
    world_run as_is, off, skip;
    world_run_start(&as_is, s, AS_IS, -1);
    world_run_start(&off, s, ALL_OFF, -1);
    world_run_start(&skip, s, SKIP_ROW, row_named(cases[i].row));
    assert_true(as_is.r->calls_ok > 500);
    if (!same_results(as_is.r, off.r))
      fail_msg("%s: the fast paths forced off differ", cases[i].row);
    if (same_results(skip.r, off.r))
      fail_msg("%s: leaving its row out changes nothing", cases[i].row);
    world_run_free(&as_is);
    world_run_free(&off);
    world_run_free(&skip);
    expt_scenario_destroy(s);
  }
}

/* A world with many features at once (retries, hedging, a budget, streams, faults of every
 * kind a fast path looks at, a fan-out with a quorum, a deadline-aware server, contention and
 * congestion): forcing the fast paths off changes nothing, and neither does the hook with
 * every row kept (-1). */
static const char many[] =
    "{'duration': '6s', 'drain': '2s',"
    " 'services': {'api': {'replicas': 2, 'workers': 4, 'queue': {'capacity': 40},"
    "   'calls_mode': 'fanout',"
    "   'service_time': {'dist': 'exponential', 'mean': '2ms'}, 'deadline': 'drop',"
    "   'slowdown_per_busy': 0.05,"
    "   'calls': [{'service': 'db', 'method': '/db.D/Get', 'deadline': '15ms', 'fanout': 3,"
    "              'policy': {'methodConfig': [{'name': [{'service': 'db.D'}],"
    "                'retryPolicy': {'maxAttempts': 2, 'initialBackoff': '0.002s',"
    "                  'maxBackoff': '0.01s', 'backoffMultiplier': 2,"
    "                  'retryableStatusCodes': ['UNAVAILABLE']}}]}},"
    "             {'service': 'db', 'method': '/db.D/Scan', 'stream': 'server', 'stream_items': 3,"
    "              'deadline': '40ms'}],"
    "   'wait_for': 2,"
    "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.1},"
    "              {'kind': 'slowdown', 'factor': 2, 'start': '2s', 'end': '3s'}]},"
    "  'db': {'workers': 8, 'service_time': {'dist': 'exponential', 'mean': '3ms'},"
    "   'queue': {'capacity': 30},"
    "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.05},"
    "              {'kind': 'stall', 'delay': '5ms', 'rate': 0.1}]}},"
    " 'clients': {'web': {'count': 5, 'target': 'api', 'methods': ['/api.A/Get'],"
    "   'deadline': '60ms', 'network': {'dist': 'exponential', 'mean': '1ms'},"
    "   'arrival': {'kind': 'open', 'rate': '400/s'},"
    "   'policy': {'methodConfig': [{'name': [{'service': 'api.A'}],"
    "     'hedgingPolicy': {'maxAttempts': 2, 'hedgingDelay': '0.02s',"
    "       'nonFatalStatusCodes': ['UNAVAILABLE']}}],"
    "     'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}}}}}";

static void test_model_fastpath_forced_off_changes_nothing(void **state) {
  (void)state;
  expt_scenario *s = test_load(many);
  world_run as_is, off, kept;
  world_run_start(&as_is, s, AS_IS, -1);
  world_run_start(&off, s, ALL_OFF, -1);
  world_run_start(&kept, s, SKIP_ROW, -1);
  assert_true(as_is.r->calls_ok > 1000 && as_is.r->calls_failed > 10);
  assert_true(same_results(as_is.r, off.r));
  assert_true(same_results(as_is.r, kept.r));
  world_run_free(&as_is);
  world_run_free(&off);
  world_run_free(&kept);
  expt_scenario_destroy(s);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_fastpath_rows_are_named_once),
      cmocka_unit_test(test_model_fastpath_a_row_left_out_shows),
      cmocka_unit_test(test_model_fastpath_forced_off_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
