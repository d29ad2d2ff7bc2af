/*
 * test_model_fallback.c: a handler's on_failure (models/model_fallback.c): the fallback is made
 * exactly for the failures its filter takes, its result replaces the failure, answers OK or
 * keeps it as "result" says, extra_time holds the worker, and invalidate deletes the failed
 * call's key from its callee's cache, so that every read after an invalid one misses. A
 * client population's own on_failure (models/model_client_fallback.c) does the same for its
 * calls, and what its client hears (the closed loop's next call or user retry) is the
 * outcome the error path gave; its fallback's deadline is bounded by the failed call's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/world.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

/* The k-th edge (k >= 1) from -> to: the fallback's edge is the one after the listed call's. */
static const model_edge_stats *edge_nth(const model_results *r, const char *from, const char *to,
                                        int k) {
  for (size_t i = 0; i < r->n_edges; i++)
    if (strcmp(r->edges[i].from, from) == 0 && strcmp(r->edges[i].to, to) == 0 && --k == 0)
      return &r->edges[i];
  fail_msg("no edge %s -> %s number %d", from, to, k);
  return NULL;
}

/* A front end `web` whose handler calls `a`, which fails half of its requests (UNAVAILABLE
 * after its work), with on_failure ON (text pasted in the call); `b` is the fallback's callee
 * and fails with INTERNAL when B_FAILS is its fault list. */
#define WORLD(ON, B_FAULTS)                                                      \
  "{'duration': '10s', 'services': {"                                            \
  "  'web': {'service_time': '1ms', 'workers': 50, 'calls': ["                   \
  "     {'service': 'a', 'method': '/a.A/Get', 'on_failure': " ON                \
  "}]},"                                                                         \
  "  'a': {'service_time': '1ms', 'workers': 50,"                                \
  "        'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.5}]}," \
  "  'b': {'service_time': '1ms', 'workers': 50, 'faults': " B_FAULTS            \
  "}},"                                                                          \
  " 'clients': {'shop': {'target': 'web', 'methods': ['/w.W/Page'],"             \
  "   'arrival': {'kind': 'open', 'rate': '200/s'}}}}"
#define FB "'fallback': {'service': 'b', 'method': '/b.B/Get'}"
#define B_OK "[]"
#define B_FAILS "[{'kind': 'fail', 'status': 'INTERNAL'}]"

/* }================================================================== */

/* {==================================================================
 * When the fallback is made, and its result
 * =================================================================== */

/* Every failed call to a, and only those, makes one fallback call to b: on the listed call's
 * edge on_failure = fallbacks = its failures; the fallback's own edge and b count as many. */
static void test_model_fallback_made_exactly_on_failure(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x, WORLD("{" FB "}", B_OK), 3);
  const model_edge_stats *call = edge_nth(x.r, "web", "a", 1);
  const model_edge_stats *fb = edge_nth(x.r, "web", "b", 1);
  assert_true(call->has_on_failure && !fb->has_on_failure && !fb->has_branch);
  assert_true(call->failed > 500 && call->ok > 500);
  assert_int_equal(call->on_failure, call->failed);
  assert_int_equal(call->fallbacks, call->failed);
  assert_int_equal(fb->calls, call->failed);
  assert_int_equal(test_svc(x.r, "b")->arrivals, call->failed);
  /* "fallback" by default, and b answers: every page is OK. */
  assert_int_equal(x.r->calls_failed, 0);
  assert_true(test_ts_total(&x.r->ts, "web_on_failure_rps") == (double)call->on_failure);
  test_run_free(&x);
}

/* A failure the filter does not take goes on as if there were no on_failure. */
static void test_model_fallback_filter_by_status(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x, WORLD("{'statuses': ['INTERNAL'], " FB "}", B_OK), 3);
  const model_edge_stats *call = edge_nth(x.r, "web", "a", 1);
  assert_true(call->failed > 500);
  assert_int_equal(call->on_failure, 0);
  assert_int_equal(test_svc(x.r, "b")->arrivals, 0);
  assert_int_equal(x.r->calls_failed, call->failed);
  test_run_free(&x);
  test_run_text(&x, WORLD("{'reasons': ['deadline'], " FB "}", B_OK), 3);
  assert_int_equal(edge_nth(x.r, "web", "a", 1)->on_failure, 0);
  test_run_free(&x);
  test_run_text(&x, WORLD("{'reasons': ['no_retry_policy'], " FB "}", B_OK), 3);
  call = edge_nth(x.r, "web", "a", 1);
  assert_int_equal(call->on_failure, call->failed);
  test_run_free(&x);
}

/* The three results, told apart by b answering or failing: "fallback" takes b's status,
 * "ok" answers OK whatever b did, "failure" keeps a's failure whatever b did. */
static void test_model_fallback_result_rules(void **state) {
  (void)state;
  static const struct {
    const char *text;
    bool pages_fail; /* the pages whose call to a failed fail too */
  } cases[] = {
      {WORLD("{" FB ", 'result': 'fallback'}", B_FAILS), true},
      {WORLD("{" FB ", 'result': 'ok'}", B_FAILS), false},
      {WORLD("{" FB ", 'result': 'failure'}", B_OK), true},
      {WORLD("{'result': 'ok', 'extra_time': '1ms'}", B_OK), false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    test_run x;
    test_run_text(&x, cases[i].text, 5);
    const model_edge_stats *call = edge_nth(x.r, "web", "a", 1);
    assert_true(call->failed > 500);
    assert_int_equal(x.r->calls_failed, cases[i].pages_fail ? call->failed : 0);
    assert_int_equal(x.r->calls_ok + x.r->calls_failed, x.r->calls_started);
    test_run_free(&x);
  }
}

/* }================================================================== */

/* {==================================================================
 * The slow error path, and invalidate
 * =================================================================== */

/* extra_time keeps the handler's worker: a's every call is refused at once, and each page's
 * worker is held its 1 ms of work plus the 50 ms of the error path (no hop takes time), so
 * web's busy time is 51 ms a page; without the key it is 1 ms. */
static void test_model_fallback_extra_time_holds_the_worker(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {"
      "  'web': {'service_time': '1ms', 'workers': 20, 'calls': ["
      "     {'service': 'a', 'method': '/a.A/Get'%s}]},"
      "  'a': {'service_time': '1ms', 'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]}},"
      " 'clients': {'shop': {'target': 'web', 'methods': ['/w.W/Page'],"
      "   'arrival': {'kind': 'open', 'rate': '100/s'}}}}";
  const char *extra[] = {"", ", 'on_failure': {'extra_time': '50ms', 'result': 'ok'}"};
  double per_page[2];
  for (int i = 0; i < 2; i++) {
    char text[1024];
    snprintf(text, sizeof text, fmt, extra[i]);
    test_run x;
    test_run_text(&x, text, 7);
    const model_service_stats *web = test_svc(x.r, "web");
    assert_true(web->served > 800);
    assert_int_equal(web->rejected, 0);
    per_page[i] = web->busy_s / (double)web->served;
    assert_int_equal(x.r->calls_failed, i == 0 ? x.r->calls_started : 0);
    test_run_free(&x);
  }
  assert_true(fabs(per_page[0] - 0.001) < 1e-6);
  assert_true(fabs(per_page[1] - 0.051) < 1e-6);
}

/* The Facebook loop's first half. A cache of one key in front of `config`, whose cached value
 * reads as invalid (DATA_LOSS) from 2 s to 4 s (500 reads a second). With invalidate, every
 * invalid read deletes the key, so the reads after it miss until a miss's OK refills it.
 * Without (the invalid value is only answered around, result ok), the key stays: every read
 * of the window is an invalid hit and nothing misses but the reads before the run's first fill. */
static void test_model_fallback_invalidate_deletes_the_key(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '6s', 'services': {"
      "  'web': {'service_time': '1ms', 'workers': 50, 'calls': ["
      "     {'service': 'config', 'method': '/c.C/Get',"
      "      'on_failure': {'statuses': ['DATA_LOSS'], 'result': 'ok', %s}}]},"
      "  'config': {'service_time': '2ms', 'workers': 50,"
      "    'cache': {'keys': {'dist': 'uniform', 'n': 1}, 'capacity': 1},"
      "    'faults': [{'kind': 'cache_invalid', 'status': 'DATA_LOSS', 'start': '2s', 'end': "
      "'4s'}]}},"
      " 'clients': {'shop': {'target': 'web', 'methods': ['/w.W/Page'],"
      "   'arrival': {'kind': 'open', 'rate': '500/s'}}}}";
  test_run x;
  char text[1400];
  snprintf(text, sizeof text, fmt, "'invalidate': true");
  test_run_text(&x, text, 9);
  const model_service_stats *cfg = test_svc(x.r, "config");
  const model_edge_stats *call = edge_nth(x.r, "web", "config", 1);
  assert_true(cfg->has_invalidate);
  /* Each invalid read deletes the key, and at least the read after it misses (its OK refills
   * it): the window's 1000 reads or so are invalid reads and misses, a fair share of each. */
  assert_true(call->on_failure > 200);
  assert_int_equal(cfg->cache_deleted, call->on_failure);
  assert_true(cfg->cache_misses > call->on_failure);
  assert_true(cfg->cache_misses + call->on_failure > 900);
  assert_int_equal(x.r->calls_failed, 0);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "'extra_time': '1ms'");
  test_run_text(&x, text, 9);
  cfg = test_svc(x.r, "config");
  assert_false(cfg->has_invalidate);
  assert_true(edge_nth(x.r, "web", "config", 1)->on_failure > 900);
  assert_int_equal(cfg->cache_deleted, 0);
  assert_true(cfg->cache_misses <= 10); /* the reads before the first fill */
  test_run_free(&x);
}

/* A handler cut short while it is in its error path (a k-of-n fan-out above cancels it): the
 * path's end only counts itself out, and the request is freed once (the sanitizer builds
 * check it). `front` asks two `mid`s and goes on with the first answer; each `mid`'s call to
 * `a` is refused at once and its error path takes 50 ms, with a fallback to `b` after it. */
static void test_model_fallback_cut_short_in_the_error_path(void **state) {
  (void)state;
  const char *text =
      "{'duration': '5s', 'services': {"
      "  'front': {'service_time': '1ms', 'workers': 100, 'calls_mode': 'fanout', 'wait_for': 1,"
      "     'calls': [{'service': 'mid', 'method': '/m.M/Get', 'fanout': 2}]},"
      "  'mid': {'service_time': {'dist': 'exponential', 'mean': '5ms'}, 'workers': 200,"
      "     'calls': [{'service': 'a', 'method': '/a.A/Get', 'on_failure': {'extra_time': '50ms',"
      "       'fallback': {'service': 'b', 'method': '/b.B/Get'}}}]},"
      "  'a': {'service_time': '1ms', 'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE'}]},"
      "  'b': {'service_time': '1ms', 'workers': 100}},"
      " 'clients': {'shop': {'target': 'front', 'methods': ['/f.F/Page'],"
      "   'arrival': {'kind': 'open', 'rate': '200/s'}}}}";
  test_run x;
  test_run_text(&x, text, 2);
  const model_edge_stats *call = edge_nth(x.r, "mid", "a", 1);
  assert_true(x.r->calls_ok > 900);
  assert_int_equal(x.r->calls_failed, 0);
  assert_true(test_svc(x.r, "mid")->cancelled > 100); /* cut short: the slower mid */
  /* Every failure went down the error path; the fallback is made only by the handlers that
   * were still waiting when their 50 ms were over. */
  assert_int_equal(call->on_failure, call->failed);
  assert_true(call->fallbacks < call->on_failure);
  assert_int_equal(edge_nth(x.r, "mid", "b", 1)->calls, call->fallbacks);
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * A client population's own on_failure
 * =================================================================== */

/* `shop` calls `a`, which fails half of its requests (UNAVAILABLE after its work), with its
 * own on_failure ON; `b` is the fallback's callee, with B_FAULTS its fault list. */
#define CWORLD(ON, B_FAULTS)                                                     \
  "{'duration': '10s', 'services': {"                                            \
  "  'a': {'service_time': '1ms', 'workers': 50,"                                \
  "        'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.5}]}," \
  "  'b': {'service_time': '1ms', 'workers': 50, 'faults': " B_FAULTS            \
  "}},"                                                                          \
  " 'clients': {'shop': {'target': 'a', 'methods': ['/a.A/Get'],"                \
  "   'arrival': {'kind': 'open', 'rate': '200/s'}, 'on_failure': " ON "}}}"

/* Every failed call of shop, and only those, makes one fallback call to b, on an edge of its
 * own after shop's; with b answering and the default result, no call fails. */
static void test_model_fallback_client_made_exactly_on_failure(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x, CWORLD("{" FB "}", B_OK), 3);
  const model_edge_stats *call = edge_nth(x.r, "shop", "a", 1);
  const model_edge_stats *fb = edge_nth(x.r, "shop", "b", 1);
  assert_true(call->has_on_failure && !fb->has_on_failure);
  assert_true(call->failed > 500 && call->ok > 500);
  assert_int_equal(call->on_failure, call->failed);
  assert_int_equal(call->fallbacks, call->failed);
  assert_int_equal(fb->calls, call->failed);
  assert_int_equal(test_svc(x.r, "b")->arrivals, call->failed);
  assert_int_equal(x.r->calls_failed, 0);
  assert_int_equal(x.r->calls_ok, x.r->calls_started);
  assert_true(test_ts_total(&x.r->ts, "shop_on_failure_rps") == (double)call->on_failure);
  test_run_free(&x);
  /* A filter that takes none of a's failures: no fallback, the failures stand. */
  test_run_text(&x, CWORLD("{'statuses': ['INTERNAL'], " FB "}", B_OK), 3);
  call = edge_nth(x.r, "shop", "a", 1);
  assert_true(call->failed > 500);
  assert_int_equal(call->on_failure, 0);
  assert_int_equal(test_svc(x.r, "b")->arrivals, 0);
  assert_int_equal(x.r->calls_failed, call->failed);
  test_run_free(&x);
}

/* The three results, told apart by b answering or failing, as for a handler's; the slow
 * error path alone answers OK or keeps the failure. */
static void test_model_fallback_client_result_rules(void **state) {
  (void)state;
  static const struct {
    const char *text;
    bool calls_fail; /* the calls to a that failed stay failed */
  } cases[] = {
      {CWORLD("{" FB ", 'result': 'fallback'}", B_FAILS), true},
      {CWORLD("{" FB ", 'result': 'fallback'}", B_OK), false},
      {CWORLD("{" FB ", 'result': 'ok'}", B_FAILS), false},
      {CWORLD("{" FB ", 'result': 'failure'}", B_OK), true},
      {CWORLD("{'result': 'ok', 'extra_time': '1ms'}", B_OK), false},
      {CWORLD("{'extra_time': '100ms'}", B_OK), true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    test_run x;
    test_run_text(&x, cases[i].text, 5);
    const model_edge_stats *call = edge_nth(x.r, "shop", "a", 1);
    assert_true(call->failed > 500);
    assert_int_equal(call->on_failure, call->failed);
    assert_int_equal(x.r->calls_failed, cases[i].calls_fail ? call->failed : 0);
    assert_int_equal(x.r->calls_ok + x.r->calls_failed, x.r->calls_started);
    test_run_free(&x);
  }
}

/* A population with a fallback and a herd's init call: the fallback's edge comes before the
 * init's (which the herd finds from the end), each named by its own method slot past the
 * population's (the sanitizer builds check every call's method against its slot), and each
 * edge counts its own calls. */
static void test_model_fallback_client_beside_a_herd(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '10s', 'services': {"
                "  'a': {'service_time': '1ms', 'workers': 50,"
                "        'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.5}]},"
                "  'b': {'service_time': '1ms', 'workers': 50}},"
                " 'clients': {'shop': {'count': 5, 'target': 'a', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '200/s'}, 'on_failure': {" FB
                "}}},"
                " 'events': [{'at': '5s', 'action': 'restart', 'population': 'shop',"
                "   'init': {'service': 'b', 'method': '/b.B/Login'}}]}",
                3);
  const model_edge_stats *call = edge_nth(x.r, "shop", "a", 1);
  const model_edge_stats *fb = edge_nth(x.r, "shop", "b", 1);
  const model_edge_stats *init = edge_nth(x.r, "shop", "b", 2);
  assert_int_equal(x.r->n_herds, 1);
  assert_int_equal(x.r->herds[0].inits, 5);
  assert_int_equal(init->calls, 5);
  assert_true(call->failed > 300);
  assert_int_equal(fb->calls, call->fallbacks);
  assert_int_equal(call->fallbacks, call->failed);
  assert_int_equal(test_svc(x.r, "b")->arrivals, call->failed + 5);
  assert_int_equal(x.r->calls_failed, 0);
  test_run_free(&x);
}

/* A closed loop's user retries follow the outcome the error path gave, not the failed call's:
 * 10 users think 10 ms and retry a failed call after 1 s. When on_failure answers OK, no user
 * ever waits that second (about 10 x 10 s / 12 ms calls); when it keeps the failure, half of
 * the cycles last a second more (about 10 x 10 s / 0.5 s). */
static void test_model_fallback_client_closed_loop_follows_the_outcome(void **state) {
  (void)state;
#define CLOSED(ON)                                                                \
  "{'duration': '10s', 'services': {"                                             \
  "  'a': {'service_time': '1ms', 'workers': 50,"                                 \
  "        'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.5}]}}," \
  " 'clients': {'shop': {'count': 10, 'target': 'a', 'methods': ['/a.A/Get'],"    \
  "   'arrival': {'kind': 'closed', 'think': '10ms', 'user_retries': 3,"          \
  "               'user_retry_delay': '1s'}, 'on_failure': " ON "}}}"
  test_run x;
  test_run_text(&x, CLOSED("{'result': 'ok', 'extra_time': '1ms'}"), 3);
  const model_edge_stats *call = edge_nth(x.r, "shop", "a", 1);
  assert_true(call->calls > 6000);
  assert_true(call->failed > 2000);
  assert_int_equal(call->on_failure, call->failed);
  assert_int_equal(x.r->calls_failed, 0);
  test_run_free(&x);
  test_run_text(&x, CLOSED("{'result': 'failure', 'extra_time': '1ms'}"), 3);
  call = edge_nth(x.r, "shop", "a", 1);
  assert_true(call->calls > 100 && call->calls < 400);
  assert_int_equal(call->on_failure, call->failed);
  assert_int_equal(x.r->calls_failed, call->failed);
  test_run_free(&x);
#undef CLOSED
}

/* The fallback's deadline is its own, bounded by the failed call's deadline (200 ms after the
 * call's start) unless propagate_deadline is false: b answers after 300 ms, so with the bound
 * every fallback ends DEADLINE_EXCEEDED and the failure stands; without it every one is OK. */
static void test_model_fallback_client_propagates_the_deadline(void **state) {
  (void)state;
#define DEADLINE(PROPAGATE)                                                                        \
  "{'duration': '10s', 'services': {"                                                              \
  "  'a': {'service_time': '1ms', 'workers': 50,"                                                  \
  "        'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.5}]},"                   \
  "  'b': {'service_time': '300ms', 'workers': 500}},"                                             \
  " 'clients': {'shop': {'target': 'a', 'methods': ['/a.A/Get'], 'deadline': '200ms',"             \
  "   'arrival': {'kind': 'open', 'rate': '100/s'}, 'on_failure': {'fallback':"                    \
  "     {'service': 'b', 'method': '/b.B/Get', 'deadline': '1s', 'propagate_deadline': " PROPAGATE \
  "}}}}}"
  test_run x;
  test_run_text(&x, DEADLINE("true"), 3);
  const model_edge_stats *call = edge_nth(x.r, "shop", "a", 1);
  const model_edge_stats *fb = edge_nth(x.r, "shop", "b", 1);
  assert_true(call->failed > 300);
  assert_int_equal(fb->calls, call->failed);
  assert_int_equal(fb->failed, fb->calls);
  assert_int_equal(x.r->calls_failed, call->failed);
  test_run_free(&x);
  test_run_text(&x, DEADLINE("false"), 3);
  call = edge_nth(x.r, "shop", "a", 1);
  fb = edge_nth(x.r, "shop", "b", 1);
  assert_true(call->failed > 300);
  assert_int_equal(fb->ok, fb->calls);
  assert_int_equal(x.r->calls_failed, 0);
  test_run_free(&x);
#undef DEADLINE
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_fallback_made_exactly_on_failure),
      cmocka_unit_test(test_model_fallback_filter_by_status),
      cmocka_unit_test(test_model_fallback_result_rules),
      cmocka_unit_test(test_model_fallback_extra_time_holds_the_worker),
      cmocka_unit_test(test_model_fallback_invalidate_deletes_the_key),
      cmocka_unit_test(test_model_fallback_cut_short_in_the_error_path),
      cmocka_unit_test(test_model_fallback_client_made_exactly_on_failure),
      cmocka_unit_test(test_model_fallback_client_result_rules),
      cmocka_unit_test(test_model_fallback_client_beside_a_herd),
      cmocka_unit_test(test_model_fallback_client_closed_loop_follows_the_outcome),
      cmocka_unit_test(test_model_fallback_client_propagates_the_deadline),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
