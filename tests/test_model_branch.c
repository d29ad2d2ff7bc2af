/*
 * test_model_branch.c: a handler's calls that branch (model_fanout.c, branch_taken): a call
 * made with a probability sends that share of the requests, every attempt of one request goes
 * the way of its request, a call chosen by method (when_method) routes exactly, a skipped call
 * lets the next one start (sequential) or is left out of a fan-out's wait_for, and a
 * probability of 1 is the world without the key.
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

/* Two-sided 99.99 % normal quantile: a correct world fails a binomial check below once in
 * ten thousand seeds (the seeds are fixed, so the suite is deterministic). */
#define Z_9999 3.891

/* Whether k successes of n trials agree with probability p at the level of Z_9999. */
static bool binomial_agrees(int64_t k, int64_t n, double p) {
  double sd = sqrt((double)n * p * (1 - p));
  return fabs((double)k - (double)n * p) <= Z_9999 * sd;
}

/* {==================================================================
 * Probability
 * =================================================================== */

/* A call with probability p is made for p of the requests its handler serves, within the
 * binomial interval, over several seeds; calls + skipped is every request served. */
static void test_model_branch_probability_sends_its_share(void **state) {
  (void)state;
  const char *text =
      "{'duration': '20s', 'services': {"
      "  'orders': {'service_time': '1ms', 'workers': 50, 'calls': ["
      "     {'service': 'fraud', 'method': '/f.F/Score', 'probability': 0.3}]},"
      "  'fraud': {'service_time': '1ms', 'workers': 50}},"
      " 'clients': {'shop': {'target': 'orders', 'methods': ['/o.O/Place'],"
      "   'arrival': {'kind': 'open', 'rate': '500/s'}}}}";
  for (uint64_t seed = 1; seed <= 5; seed++) {
    test_run x;
    test_run_text(&x, text, seed);
    const model_edge_stats *e = test_edge(x.r, "orders", "fraud");
    int64_t served = test_svc(x.r, "orders")->arrivals;
    assert_true(e->has_branch);
    assert_int_equal(e->calls + e->skipped, served);
    assert_true(served > 9000);
    assert_true(binomial_agrees(e->calls, served, 0.3));
    assert_int_equal(test_svc(x.r, "fraud")->arrivals, e->calls);
    test_run_free(&x);
  }
}

/* Every attempt of one request goes its request's way. The service fails the first attempt
 * of every request after its handler ran (its calls made), and its caller retries once: one
 * request per world makes the downstream call on both attempts or on neither, never on one
 * (a branch drawn per attempt would give one call half the time). Both ways are seen. */
static void test_model_branch_retries_follow_their_request(void **state) {
  (void)state;
  const char *text =
      "{'duration': '1s', 'services': {"
      "  'orders': {'service_time': '1ms', 'calls': ["
      "     {'service': 'fraud', 'method': '/f.F/Score', 'probability': 0.5}],"
      "     'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'attempts': [1]}]},"
      "  'fraud': {'service_time': '1ms'}},"
      " 'clients': {'shop': {'target': 'orders', 'methods': ['/o.O/Place'], 'policy': " TEST_P3
      ",   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  int seen[3] = {0, 0, 0};
  for (uint64_t seed = 1; seed <= 40; seed++) {
    test_run x;
    test_run_text(&x, text, seed);
    assert_int_equal(test_svc(x.r, "orders")->arrivals, 2);
    const model_edge_stats *e = test_edge(x.r, "orders", "fraud");
    assert_true(e->calls == 0 || e->calls == 2);
    assert_int_equal(e->calls + e->skipped, 2);
    seen[e->calls]++;
    test_run_free(&x);
  }
  assert_true(seen[0] > 0 && seen[2] > 0);
}

/* Many requests at once, each retried once: the downstream calls are twice the requests that
 * took the branch, which is within the binomial interval of the requests (not of the
 * attempts), and the calls and skips are both even. */
static void test_model_branch_many_requests_keep_their_branch(void **state) {
  (void)state;
  const char *text =
      "{'duration': '10s', 'services': {"
      "  'orders': {'service_time': '1ms', 'workers': 50, 'calls': ["
      "     {'service': 'fraud', 'method': '/f.F/Score', 'probability': 0.3}],"
      "     'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'attempts': [1]}]},"
      "  'fraud': {'service_time': '1ms', 'workers': 50}},"
      " 'clients': {'shop': {'target': 'orders', 'methods': ['/o.O/Place'], 'policy': " TEST_P3
      ",   'arrival': {'kind': 'open', 'rate': '300/s'}}}}";
  test_run x;
  test_run_text(&x, text, 3);
  const model_edge_stats *top = test_edge(x.r, "shop", "orders");
  const model_edge_stats *e = test_edge(x.r, "orders", "fraud");
  assert_int_equal(top->attempts, 2 * top->calls);
  assert_int_equal(e->calls + e->skipped, top->attempts);
  assert_int_equal(e->calls % 2, 0);
  assert_true(binomial_agrees(e->calls / 2, top->calls, 0.3));
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Routes
 * =================================================================== */

/* when_method: inventory is called for every Place and for nothing else; with a probability
 * too, fraud is called for p of the Place and Refund requests (a route of two methods) and
 * never for a Get. */
static void test_model_branch_when_method_routes_exactly(void **state) {
  (void)state;
  const char *text =
      "{'duration': '10s', 'services': {"
      "  'orders': {'service_time': '1ms', 'workers': 50, 'calls': ["
      "     {'service': 'inventory', 'method': '/i.I/Reserve', 'when_method': '/o.O/Place'},"
      "     {'service': 'fraud', 'method': '/f.F/Score', 'probability': 0.5,"
      "      'when_method': ['/o.O/Place', '/o.O/Refund']}]},"
      "  'inventory': {'service_time': '1ms', 'workers': 50},"
      "  'fraud': {'service_time': '1ms', 'workers': 50}},"
      " 'clients': {"
      "  'buyers': {'target': 'orders', 'methods': ['/o.O/Place'],"
      "    'arrival': {'kind': 'open', 'rate': '200/s'}},"
      "  'browsers': {'target': 'orders', 'methods': ['/o.O/Get'],"
      "    'arrival': {'kind': 'open', 'rate': '300/s'}},"
      "  'refunds': {'target': 'orders', 'methods': ['/o.O/Refund'],"
      "    'arrival': {'kind': 'open', 'rate': '100/s'}}}}";
  test_run x;
  test_run_text(&x, text, 5);
  int64_t place = test_edge(x.r, "buyers", "orders")->calls;
  int64_t get = test_edge(x.r, "browsers", "orders")->calls;
  int64_t refund = test_edge(x.r, "refunds", "orders")->calls;
  assert_true(place > 1000 && get > 1000 && refund > 500);
  const model_edge_stats *inv = test_edge(x.r, "orders", "inventory");
  assert_int_equal(inv->calls, place);
  assert_int_equal(inv->skipped, get + refund);
  const model_edge_stats *fr = test_edge(x.r, "orders", "fraud");
  assert_int_equal(fr->calls + fr->skipped, place + get + refund);
  assert_true(binomial_agrees(fr->calls, place + refund, 0.5));
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Sequential and fan-out handlers
 * =================================================================== */

/* The routes below name '/g.G/Other', a method that reaches the handler (the loader refuses a
 * route to a method that never does) only as the client's fallback: every call succeeds, so
 * the fallback is never made and the one request, '/g.G/M', is not routed. */
#define OTHER_ROUTE ", 'on_failure': {'fallback': {'service': '%s', 'method': '/g.G/Other'}}"

/* Sequential: a skipped call counts as not made and the next one starts; a handler whose
 * every call is skipped replies at once after its own work. */
static void test_model_branch_sequential_skips_to_the_next_call(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'api': {'service_time': '1ms', 'calls': ["
      "     {'service': 'a', 'method': '/a.A/M', 'when_method': '/g.G/Other'},"
      "     {'service': 'b', 'method': '/b.B/M'},"
      "     {'service': 'a', 'method': '/a.A/N', 'when_method': '/g.G/Other'}]},"
      "  'a': {'service_time': '10ms'}, 'b': {'service_time': '20ms'}},"
      " 'clients': {'c': {'target': 'api', 'methods': ['/g.G/M']" OTHER_ROUTE ","
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  char text[1500];
  snprintf(text, sizeof text, fmt, "api");
  test_run x;
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(test_svc(x.r, "a")->arrivals, 0);
  assert_int_equal(test_svc(x.r, "b")->arrivals, 1);
  assert_int_equal(x.r->latency.max, 21000000); /* 1 ms, then b's 20 ms */
  assert_int_equal(test_edge(x.r, "c", "api")->fallbacks, 0);
  test_run_free(&x);
}

/* Fan-out: skipped calls are not started and wait_for counts only the calls made (k of them,
 * or all when fewer were made): with both branches skipped the handler goes on at once; with
 * one made it waits for that one. Every copy of a skipped call counts as skipped. */
static void test_model_branch_fanout_wait_for_counts_calls_made(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 3,"
      "    'calls': ["
      "     {'service': 'a', 'method': '/a.A/M', 'fanout': 2, 'when_method': '%s'},"
      "     {'service': 'b', 'method': '/b.B/M', 'when_method': '/g.G/Other'},"
      "     {'service': 'b', 'method': '/b.B/N', 'when_method': '/g.G/Other'}]},"
      "  'a': {'service_time': '10ms', 'workers': 10}, 'b': {'service_time': '20ms'}},"
      " 'clients': {'c': {'target': 'agg', 'methods': ['/g.G/M']" OTHER_ROUTE ","
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  char text[1500];
  test_run x;
  snprintf(text, sizeof text, fmt, "/g.G/Other", "agg");
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 1000000);
  assert_int_equal(test_edge(x.r, "agg", "a")->skipped, 2);
  assert_int_equal(test_edge(x.r, "c", "agg")->fallbacks, 0);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "/g.G/M", "agg");
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(test_svc(x.r, "a")->arrivals, 2);
  assert_int_equal(test_svc(x.r, "b")->arrivals, 0);
  assert_int_equal(x.r->latency.max, 11000000);
  test_run_free(&x);
}

/* }================================================================== */

/* Variants pair request for request: changing one call's probability leaves every other
 * branch of every request as it was. orders calls inventory with probability P and fraud with
 * 0.5; inventory's own call to stock branches too (its operation's word comes from its
 * parent's). Between P = 0.2 and P = 0.9 the requests served are the same, so fraud must see
 * exactly the same calls; and stock's share of inventory's requests stays its own 0.5. */
static void test_model_branch_one_branch_moves_no_other(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {"
      "  'orders': {'service_time': '1ms', 'workers': 50, 'calls': ["
      "     {'service': 'inventory', 'method': '/i.I/Get', 'probability': %s},"
      "     {'service': 'fraud', 'method': '/f.F/Score', 'probability': 0.5}]},"
      "  'inventory': {'service_time': '1ms', 'workers': 50, 'calls': ["
      "     {'service': 'stock', 'method': '/s.S/Get', 'probability': 0.5}]},"
      "  'stock': {'service_time': '1ms', 'workers': 50},"
      "  'fraud': {'service_time': '1ms', 'workers': 50}},"
      " 'clients': {'shop': {'target': 'orders', 'methods': ['/o.O/Place'],"
      "   'arrival': {'kind': 'open', 'rate': '300/s'}}}}";
  char a[1200], b[1200];
  snprintf(a, sizeof a, fmt, "0.2");
  snprintf(b, sizeof b, fmt, "0.9");
  test_run x, y;
  test_run_text(&x, a, 4);
  test_run_text(&y, b, 4);
  int64_t served = test_svc(x.r, "orders")->arrivals;
  assert_true(served > 2500);
  assert_int_equal(test_svc(y.r, "orders")->arrivals, served);
  const model_edge_stats *fx = test_edge(x.r, "orders", "fraud");
  const model_edge_stats *fy = test_edge(y.r, "orders", "fraud");
  assert_true(binomial_agrees(fx->calls, served, 0.5));
  assert_int_equal(fx->calls, fy->calls);
  assert_int_equal(fx->skipped, fy->skipped);
  const model_edge_stats *ix = test_edge(x.r, "orders", "inventory");
  const model_edge_stats *iy = test_edge(y.r, "orders", "inventory");
  assert_true(iy->calls > 3 * ix->calls);
  for (int k = 0; k < 2; k++) {
    const test_run *t = k == 0 ? &x : &y;
    const model_edge_stats *st = test_edge(t->r, "inventory", "stock");
    assert_true(binomial_agrees(st->calls, test_svc(t->r, "inventory")->arrivals, 0.5));
  }
  test_run_free(&x);
  test_run_free(&y);
}

/* {==================================================================
 * No branch
 * =================================================================== */

/* "probability": 1 is the world without the key, figure for figure, and writes no skipped. */
static void test_model_branch_probability_one_is_no_branch(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '5s', 'services': {"
      "  'orders': {'service_time': '1ms', 'workers': 20, 'calls': ["
      "     {'service': 'fraud', 'method': '/f.F/Score'%s, 'policy': " TEST_P3 "}]},"
      "  'fraud': {'service_time': '2ms', 'workers': 4,"
      "    'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.2}]}},"
      " 'clients': {'shop': {'target': 'orders', 'methods': ['/o.O/Place'], 'policy': " TEST_P3
      ",   'arrival': {'kind': 'open', 'rate': '400/s'}}}}";
  char a[2000], b[2000];
  snprintf(a, sizeof a, fmt, "");
  snprintf(b, sizeof b, fmt, ", 'probability': 1");
  test_run x, y;
  test_run_text(&x, a, 9);
  test_run_text(&y, b, 9);
  for (size_t i = 0; i < x.r->n_edges; i++) {
    const model_edge_stats *e = &x.r->edges[i], *f = &y.r->edges[i];
    assert_false(e->has_branch || f->has_branch);
    assert_int_equal(e->calls, f->calls);
    assert_int_equal(e->attempts, f->attempts);
    assert_int_equal(e->ok, f->ok);
    assert_int_equal(e->skipped, 0);
    assert_int_equal(f->skipped, 0);
    assert_memory_equal(&e->latency, &f->latency, sizeof e->latency);
  }
  assert_memory_equal(&x.r->latency, &y.r->latency, sizeof x.r->latency);
  test_run_free(&x);
  test_run_free(&y);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_branch_probability_sends_its_share),
      cmocka_unit_test(test_model_branch_retries_follow_their_request),
      cmocka_unit_test(test_model_branch_many_requests_keep_their_branch),
      cmocka_unit_test(test_model_branch_when_method_routes_exactly),
      cmocka_unit_test(test_model_branch_sequential_skips_to_the_next_call),
      cmocka_unit_test(test_model_branch_fanout_wait_for_counts_calls_made),
      cmocka_unit_test(test_model_branch_probability_one_is_no_branch),
      cmocka_unit_test(test_model_branch_one_branch_moves_no_other),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
