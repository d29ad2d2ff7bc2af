/*
 * test_model_fanout.c: a handler's downstream calls: fan-out and sequential calls, a call made
 * fanout times, wait_for k of n (quorums, a hedged call counted once) and the cancel that
 * travels down the call graph to the calls a handler leaves.
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

#include "tests/support/world.h"

/* {==================================================================
 * Fan-out and sequential calls
 * =================================================================== */

/* Fan-out waits for every call; sequential stops at the first failure. */
static void test_model_fanout_waits_for_all_sequential_stops_at_a_failure(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': '%s', 'calls': ["
      "     {'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "     {'service': 'a', 'method': '/a.A/N'}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '30ms', 'workers': 10,"
      "        'faults': [{'kind': 'fail', 'status': 'NOT_FOUND'}]}},"
      " 'clients': {'c': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  char text[1500];
  test_run x;
  snprintf(text, sizeof text, fmt, "fanout");
  test_run_text(&x, text, 1);
  assert_int_equal(test_svc(x.r, "a")->arrivals, 2);
  assert_int_equal(test_svc(x.r, "b")->arrivals, 1);
  assert_int_equal(x.r->by_status.grpc[RETRY_GRPC_NOT_FOUND], 1);
  /* 1 ms of work, then the slowest branch (30 ms). */
  assert_int_equal(x.r->latency.max, 31000000);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "sequential");
  test_run_text(&x, text, 1);
  assert_int_equal(test_svc(x.r, "a")->arrivals, 1);
  assert_int_equal(test_svc(x.r, "b")->arrivals, 1);
  assert_int_equal(x.r->latency.max, 41000000);
  test_run_free(&x);
}

/* "fanout": 100 on one call is the same world as 100 entries of that call: the same calls,
 * attempts, operations and latencies, draw for draw. */
static void test_model_fanout_count_is_that_many_calls(void **state) {
  (void)state;
  char entries[12000], count[1500];
  const char *head =
      "{'duration': '5s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 100, 'calls_mode': 'fanout', 'calls': [";
  const char *tail =
      "]}, 'leaf': {'replicas': 4, 'workers': 64, 'side_effect': 'before',"
      "            'service_time': {'dist': 'exponential', 'mean': '5ms'}}},"
      " 'clients': {'c': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'open', 'rate': '50/s'}}}}";
  size_t n = (size_t)snprintf(entries, sizeof entries, "%s", head);
  for (int i = 0; i < 100; i++)
    n += (size_t)snprintf(entries + n, sizeof entries - n,
                          "%s{'service': 'leaf', 'method': '/l.L/M'}", i ? ", " : "");
  snprintf(entries + n, sizeof entries - n, "%s", tail);
  snprintf(count, sizeof count, "%s{'service': 'leaf', 'method': '/l.L/M', 'fanout': 100}%s", head,
           tail);
  test_run a, b;
  test_run_text(&a, entries, 1);
  test_run_text(&b, count, 1);
  assert_true(a.r->calls_started > 100);
  assert_int_equal(a.r->calls_ok, b.r->calls_ok);
  /* 100 entries are 100 edges; one entry of 100 copies is one edge with all their calls. */
  int64_t calls = 0, attempts = 0;
  for (size_t i = 0; i < a.r->n_edges; i++)
    if (strcmp(a.r->edges[i].from, "agg") == 0) {
      calls += a.r->edges[i].calls;
      attempts += a.r->edges[i].attempts;
    }
  assert_int_equal(calls, 100 * a.r->calls_started);
  assert_int_equal(test_edge(b.r, "agg", "leaf")->calls, calls);
  assert_int_equal(test_edge(b.r, "agg", "leaf")->attempts, attempts);
  assert_int_equal(test_svc(b.r, "leaf")->arrivals, test_svc(a.r, "leaf")->arrivals);
  /* Each copy is an operation of its own, as each entry is. */
  assert_int_equal(b.r->operations, a.r->operations);
  assert_int_equal(b.r->operations, 100 * a.r->calls_started);
  assert_int_equal(b.r->duplicates, 0);
  assert_true(b.r->latency.sum == a.r->latency.sum);
  assert_int_equal(b.r->latency.max, a.r->latency.max);
  test_run_free(&a);
  test_run_free(&b);
}

/* }================================================================== */

/* {==================================================================
 * wait_for k of n
 * =================================================================== */

/* wait_for k of n: the handler goes on once k calls succeeded, or once n - k + 1 failed; with
 * cancel_rest false the calls left run to their end (their work and side effects count),
 * unheard; by default the one left is cancelled, and c, whose worker already holds it, still
 * executes. Leaves of 10, 20 and 30 ms behind 1 ms of work. */
static void test_model_fanout_wait_for_goes_on_at_k_successes_or_n_minus_k_plus_1_failures(
    void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "     'cancel_rest': false,"
      "     'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "               {'service': 'c', 'method': '/c.C/M'}]},"
      "  'a': {'service_time': '10ms', 'side_effect': 'before'%s},"
      "  'b': {'service_time': '20ms', 'side_effect': 'before'%s},"
      "  'c': {'service_time': '30ms', 'side_effect': 'before'}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  const char *fail = ", 'faults': [{'kind': 'fail', 'status': 'NOT_FOUND'}]";
  char text[1500];
  test_run x;
  /* 2 of 3 OK at 20 ms: done at 21 ms, c still runs and executes. */
  snprintf(text, sizeof text, fmt, "", "");
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 21000000);
  assert_int_equal(test_svc(x.r, "c")->executions, 1);
  assert_int_equal(test_edge(x.r, "agg", "c")->ok, 1);
  assert_false(test_edge(x.r, "agg", "c")->can_cancel);
  test_run_free(&x);
  /* The default cancels c's call at 21 ms: it counts as cancelled, not OK nor failed, and its
   * attempt, already worked, still executes; the caller's latency is unchanged. */
  char dflt[1500];
  snprintf(dflt, sizeof dflt, fmt, "", "");
  char *off = strstr(dflt, "'cancel_rest': false,");
  assert_non_null(off);
  memset(off, ' ', strlen("'cancel_rest': false,"));
  test_run_text(&x, dflt, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 21000000);
  const model_edge_stats *ec = test_edge(x.r, "agg", "c");
  assert_true(ec->can_cancel);
  assert_int_equal(ec->ok, 0);
  assert_int_equal(ec->failed, 0);
  assert_int_equal(ec->cancelled, 1);
  assert_int_equal(ec->cancelled_unworked, 0);
  assert_int_equal(ec->by_stop[RETRY_STOP_CANCELLED], 1);
  assert_int_equal(ec->by_status.grpc[RETRY_GRPC_CANCELLED], 1);
  assert_int_equal(ec->latency.count, 0);
  assert_int_equal(test_svc(x.r, "c")->executions, 1);
  assert_int_equal(test_svc(x.r, "c")->abandoned, 1); /* its reply found nobody */
  test_run_free(&x);
  /* b fails: the second success is c's, at 30 ms; OK despite a failure. */
  snprintf(text, sizeof text, fmt, "", fail);
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 31000000);
  test_run_free(&x);
  /* a and b fail: 2 = n - k + 1 failures at 20 ms, the first failure's status; c finishes. */
  snprintf(text, sizeof text, fmt, fail, fail);
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_failed, 1);
  assert_int_equal(x.r->by_status.grpc[RETRY_GRPC_NOT_FOUND], 1);
  assert_int_equal(x.r->latency.max, 21000000);
  assert_int_equal(test_svc(x.r, "c")->executions, 1);
  test_run_free(&x);
}

/* A quorum read, 2 of 3 copies of one call, each failing with probability 0.3 on its own:
 * the share of OK calls is P(at least 2 of 3) = 3 x 0.7^2 x 0.3 + 0.7^3 = 0.784, within four
 * binomial standard errors over 2000 calls. */
static void test_model_fanout_wait_for_quorum_succeeds_as_the_binomial_says(void **state) {
  (void)state;
  test_run x;
  test_run_text(
      &x,
      "{'duration': '20s', 'services': {"
      "  'coord': {'service_time': '1ms', 'workers': 50, 'calls_mode': 'fanout',"
      "     'wait_for': 2, 'calls': [{'service': 'store', 'method': '/s.S/Get', 'fanout': 3}]},"
      "  'store': {'replicas': 3, 'workers': 50, 'service_time': {'dist': 'exponential',"
      "     'mean': '5ms'}, 'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.3}]}},"
      " 'clients': {'c': {'target': 'coord', 'methods': ['/k.K/Get'],"
      "   'arrival': {'kind': 'open', 'rate': '100/s'}}}}",
      1);
  double n = (double)x.r->calls_started, ok = (double)x.r->calls_ok / n;
  assert_true(n > 1800);
  assert_true(fabs(ok - 0.784) < 4 * sqrt(0.784 * 0.216 / n));
  /* Every copy was sent, the ones left to finish included. */
  assert_int_equal(test_edge(x.r, "coord", "store")->calls, 3 * x.r->calls_started);
  test_run_free(&x);
}

/* Hedging inside a k-of-n fan-out: a hedged call is one of the n, however many attempts it
 * sends, and it counts once, with its engine's verdict. First attempts stall for 400 ms; each
 * call's hedge (5 ms later) answers at 25 ms, so 2 of 3 are reached at 1 + 25 ms; the edge has
 * 3 calls and 6 hedges, not 9 calls. */
static void test_model_fanout_wait_for_counts_a_hedged_call_once(void **state) {
  (void)state;
  test_run x;
  test_run_text(
      &x,
      "{'duration': '1s', 'services': {"
      "  'coord': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout',"
      "     'wait_for': 2, 'calls': [{'service': 'store', 'method': '/s.S/Get', 'fanout': 3,"
      "       'policy': {'methodConfig': [{'name': [{}], 'hedgingPolicy': {'maxAttempts': 3,"
      "         'hedgingDelay': '0.005s'}}]}}]},"
      "  'store': {'workers': 20, 'service_time': '20ms',"
      "     'faults': [{'kind': 'stall', 'delay': '400ms', 'attempts': [1]}]}},"
      " 'clients': {'c': {'target': 'coord', 'methods': ['/k.K/Get'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}",
      1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 26000000);
  const model_edge_stats *e = test_edge(x.r, "coord", "store");
  assert_int_equal(e->calls, 3);
  /* The third call's answer is cancelled: the 2 of 3 came first at the same moment. */
  assert_int_equal(e->ok, 2);
  assert_int_equal(e->cancelled, 1);
  assert_int_equal(e->hedges, 6);
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Cancel
 * =================================================================== */

/* cancel_rest: a 2-of-3 fan-out's leftover call is cancelled when the handler goes on. Two
 * requests reach agg at once; c has one worker, so the first request's call to c is worked
 * (0 to 30 ms) while the second's waits in c's queue. At 21 ms both handlers have 2 of 3:
 * the queued attempt leaves c's queue unworked, the worked one finishes (its side effect
 * counts) and its reply is dropped. c serves and executes 1 request instead of 2. The same
 * holds for a bare call and for one run by the engine (a retry policy on the edge), and an
 * attempt still on its way out (a 50 ms hop to c) is dropped as it lands: c never sees it. */
/* A call that already decided to end at its deadline (a retry policy waits the deadline out
 * when the next backoff would pass it) is still running to its caller: a cancel ends it then,
 * once, cancelled. Ended twice, it was reported and freed twice. */
static void test_model_fanout_cancel_ends_a_call_waiting_out_its_deadline_once(void **state) {
  (void)state;
  const char *text =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "    'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "      {'service': 'c', 'method': '/c.C/M', 'deadline': '100ms', 'policy': {'methodConfig':"
      "        [{'name': [{}], 'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '1s',"
      "          'maxBackoff': '1s', 'backoffMultiplier': 1,"
      "          'retryableStatusCodes': ['UNAVAILABLE']}}]}}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '20ms', 'workers': 10},"
      "  'c': {'service_time': '5ms', 'workers': 10, 'faults': [{'kind': 'fail', 'status':"
      "    'UNAVAILABLE', 'rate': 1, 'start': '0s', 'end': '1s'}]}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  test_run x;
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  const model_edge_stats *e = test_edge(x.r, "agg", "c");
  assert_int_equal(e->calls, 1);
  assert_int_equal(e->cancelled, 1);
  assert_int_equal(e->failed, 0);
  assert_int_equal(e->by_stop[RETRY_STOP_CANCELLED], 1);
  assert_int_equal(e->by_stop[RETRY_STOP_DEADLINE], 0);
  /* ended when b answered (about 21 ms in), not at its 100 ms deadline */
  assert_true(x.r->latency.max < 30000000);
  test_run_free(&x);
}

/* A call that gives its blocking limiter's permit back lets a waiting sibling start; that one
 * is refused at once (the breaker just opened) and decides the fan-out, which cancels what is
 * left, the first call among them, though it is in the middle of its own end. It must end
 * once, failed as it was, not cancelled over it. */
static void test_model_fanout_cancel_leaves_a_call_in_its_own_end_to_end(void **state) {
  (void)state;
  const char *text =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 3,"
      "    'calls': [{'service': 'a', 'method': '/a.A/M'},"
      "      {'service': 'c', 'method': '/c.C/M', 'fanout': 2, 'policy': {'retrysim': {"
      "        'concurrencyLimit': {'type': 'aimd', 'initialLimit': 1, 'minLimit': 1,"
      "          'maxLimit': 1, 'blocking': true},"
      "        'circuitBreaker': {'type': 'consecutive', 'failureThreshold': 1}}}}]},"
      "  'a': {'service_time': '100ms', 'workers': 10},"
      "  'c': {'service_time': '5ms', 'workers': 10, 'faults': [{'kind': 'fail', 'status':"
      "    'UNAVAILABLE', 'rate': 1, 'start': '0s', 'end': '1s'}]}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  test_run x;
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_failed, 1);
  const model_edge_stats *c = test_edge(x.r, "agg", "c");
  assert_int_equal(c->calls, 2);
  assert_int_equal(c->failed, 2);
  assert_int_equal(c->cancelled, 0);
  assert_int_equal(c->by_stop[RETRY_STOP_BREAKER_OPEN], 1);
  const model_edge_stats *a = test_edge(x.r, "agg", "a");
  assert_int_equal(a->calls, 1);
  assert_int_equal(a->cancelled, 1);
  test_run_free(&x);
}

static void test_model_fanout_wait_for_cancels_the_calls_it_leaves(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "               {'service': 'c', 'method': '/c.C/M'%s}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '20ms', 'workers': 10},"
      "  'c': {'service_time': '30ms', 'workers': 1, 'side_effect': 'before'}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s', '0s']}}}}";
  const char *policy =
      ", 'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
      "   'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "   'retryableStatusCodes': ['UNAVAILABLE']}}]}";
  const char *extra[2] = {"", policy};
  char text[2000];
  test_run x;
  for (int k = 0; k < 2; k++) {
    snprintf(text, sizeof text, fmt, "false", extra[k]);
    test_run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(test_svc(x.r, "c")->served, 2);
    assert_int_equal(test_svc(x.r, "c")->executions, 2);
    assert_int_equal(test_edge(x.r, "agg", "c")->ok, 2);
    test_run_free(&x);
    snprintf(text, sizeof text, fmt, "true", extra[k]);
    test_run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 21000000);
    const model_service_stats *c = test_svc(x.r, "c");
    assert_int_equal(c->arrivals, 2);
    assert_int_equal(c->served, 1);
    assert_int_equal(c->executions, 1);
    assert_int_equal(c->abandoned, 1);
    const model_edge_stats *e = test_edge(x.r, "agg", "c");
    assert_int_equal(e->calls, 2);
    assert_int_equal(e->cancelled, 2);
    assert_int_equal(e->cancelled_unworked, 1);
    assert_int_equal(e->attempts, 2); /* nothing retried after the cancel */
    assert_int_equal(e->ok + e->failed, 0);
    test_run_free(&x);
  }
  /* On its way out: with a 50 ms hop to c both attempts are still travelling at 21 ms. */
  snprintf(text, sizeof text, fmt, "true", ", 'network': '50ms'");
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 2);
  assert_int_equal(test_svc(x.r, "c")->arrivals, 0);
  assert_int_equal(test_svc(x.r, "c")->served, 0);
  assert_int_equal(test_edge(x.r, "agg", "c")->cancelled_unworked, 2);
  test_run_free(&x);
}

/* A call waiting for a blocking limiter's permit is cancelled without reaching the engine:
 * agg's one replica holds a limit of 1 toward c, so the second of its two copies of the call
 * to c waits; at 21 ms (2 of 4 OK) it leaves the wait queue first (nothing sent), then the
 * first copy is cancelled in the engine and its permit given back, which starts nobody. */
static void test_model_fanout_wait_for_cancels_a_call_waiting_for_a_permit(void **state) {
  (void)state;
  test_run x;
  test_run_text(
      &x,
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 2,"
      "     'calls': [{'service': 'a', 'method': '/a.A/M'}, {'service': 'b', 'method': '/b.B/M'},"
      "               {'service': 'c', 'method': '/c.C/M', 'fanout': 2, 'policy': {'retrysim': {"
      "                 'concurrencyLimit': {'type': 'aimd', 'initialLimit': 1, 'minLimit': 1,"
      "                 'maxLimit': 1, 'blocking': true}}}}]},"
      "  'a': {'service_time': '10ms', 'workers': 10},"
      "  'b': {'service_time': '20ms', 'workers': 10},"
      "  'c': {'service_time': '30ms', 'workers': 10}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}",
      1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->latency.max, 21000000);
  const model_edge_stats *e = test_edge(x.r, "agg", "c");
  assert_int_equal(e->calls, 2);
  assert_int_equal(e->attempts, 1); /* the waiting call never sent */
  assert_int_equal(e->cancelled, 2);
  assert_int_equal(test_svc(x.r, "c")->arrivals, 1);
  test_run_free(&x);
}

/* The k-of-n cancel travels down the call graph. agg goes on at 1 of 2 (fast answers at
 * 11 ms); its call to mid is then cancelled while mid's handler waits for its call to db
 * (50 ms of work, one worker): two requests at once, so one db attempt is worked (2 to 52 ms)
 * and the other waits in db's queue. The cancel reaches db: the queued attempt leaves the
 * queue unworked, the worked one finishes (its side effect counts) and its reply is dropped;
 * mid's handlers end at 11 ms without a reply (10 ms of worker time each, wasted). The
 * top-level latency is the fast branch's. The same with an engine call (a retry policy) on
 * mid -> db, and with a tier more (mid -> mid2 -> db). With cancel_rest false nothing is
 * cancelled: every call runs to its end, unheard, as before the cancel travelled. */
static void test_model_fanout_cancel_reaches_the_calls_of_a_handler_waiting_for_them(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 1,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'fast', 'method': '/f.F/M'}, {'service': 'mid',"
      "       'method': '/m.M/M'}]},"
      "  'fast': {'service_time': '10ms', 'workers': 10},"
      "  'mid': {'service_time': '1ms', 'workers': 10,"
      "     'calls': [{'service': '%s', 'method': '/d.D/M'%s}]},"
      "  'mid2': {'service_time': '0ms', 'workers': 10,"
      "     'calls': [{'service': 'db', 'method': '/d.D/M'%s}]},"
      "  'db': {'service_time': '50ms', 'workers': 1, 'side_effect': 'before'}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s', '0s']}}}}";
  const char *policy =
      ", 'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
      "   'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "   'retryableStatusCodes': ['UNAVAILABLE']}}]}";
  char text[2500];
  test_run x;
  for (int k = 0; k < 3; k++) {
    const char *pol = k == 1 ? policy : "";
    const char *via = k == 2 ? "mid2" : "db"; /* who calls db */
    const char *from = k == 2 ? "mid2" : "mid";
    snprintf(text, sizeof text, fmt, "false", via, pol, pol);
    test_run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 11000000);
    assert_int_equal(test_svc(x.r, "mid")->served, 2);
    assert_false(test_svc(x.r, "mid")->has_cancel);
    assert_int_equal(test_svc(x.r, "db")->served, 2);
    assert_int_equal(test_svc(x.r, "db")->executions, 2);
    assert_int_equal(test_edge(x.r, from, "db")->ok, 2);
    assert_false(test_edge(x.r, from, "db")->can_cancel);
    test_run_free(&x);
    snprintf(text, sizeof text, fmt, "true", via, pol, pol);
    test_run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 11000000);
    const model_service_stats *mid = test_svc(x.r, "mid");
    assert_true(mid->has_cancel);
    assert_int_equal(mid->arrivals, 2);
    assert_int_equal(mid->served, 0);
    assert_int_equal(mid->cancelled, 2);
    assert_int_equal(mid->abandoned, 0); /* no reply went back */
    assert_true(fabs(mid->busy_s - 0.020) < 1e-9);
    assert_true(fabs(mid->wasted_work_s - 0.020) < 1e-9);
    if (k == 2) assert_int_equal(test_svc(x.r, "mid2")->cancelled, 2);
    assert_int_equal(test_edge(x.r, "agg", "mid")->cancelled, 2);
    assert_int_equal(test_edge(x.r, "agg", "mid")->cancelled_unworked, 0);
    const model_edge_stats *e = test_edge(x.r, from, "db");
    assert_true(e->can_cancel);
    assert_int_equal(e->calls, 2);
    assert_int_equal(e->cancelled, 2);
    assert_int_equal(e->cancelled_unworked, 1); /* the queued one */
    assert_int_equal(e->attempts, 2);           /* nothing retried after the cancel */
    assert_int_equal(e->ok + e->failed, 0);
    const model_service_stats *db = test_svc(x.r, "db");
    assert_false(db->has_cancel); /* no calls: no handler to cut short */
    assert_int_equal(db->arrivals, 2);
    assert_int_equal(db->served, 1);
    assert_int_equal(db->executions, 1); /* a side effect already done stays */
    assert_int_equal(db->abandoned, 1);
    test_run_free(&x);
  }
}

/* A cancel that reaches a handler still at work does not interrupt it, but the handler makes
 * no calls when its work ends (its context is done, so they would fail at once) and its
 * reply is dropped: mid works 20 ms, agg cancels at 11 ms, db never hears of the requests.
 * A side effect before the calls happens; one after them does not (the calls failed). */
static void test_model_fanout_cancel_reaching_a_working_handler_stops_its_calls(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 1,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'fast', 'method': '/f.F/M'}, {'service': 'mid',"
      "       'method': '/m.M/M'}]},"
      "  'fast': {'service_time': '10ms', 'workers': 10},"
      "  'mid': {'service_time': '20ms', 'workers': 10, 'side_effect': '%s',"
      "     'calls': [{'service': 'db', 'method': '/d.D/M'}]},"
      "  'db': {'service_time': '50ms', 'workers': 10}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s', '0s']}}}}";
  const char *effect[2] = {"before", "after"};
  char text[2000];
  test_run x;
  for (int k = 0; k < 2; k++) {
    snprintf(text, sizeof text, fmt, "false", effect[k]);
    test_run_text(&x, text, 1);
    assert_int_equal(test_svc(x.r, "db")->arrivals, 2);
    assert_int_equal(test_svc(x.r, "mid")->executions, 2);
    test_run_free(&x);
    snprintf(text, sizeof text, fmt, "true", effect[k]);
    test_run_text(&x, text, 1);
    assert_int_equal(x.r->calls_ok, 2);
    assert_int_equal(x.r->latency.max, 11000000);
    const model_service_stats *mid = test_svc(x.r, "mid");
    assert_int_equal(mid->served, 2); /* the work was not interrupted */
    assert_int_equal(mid->cancelled, 2);
    assert_int_equal(mid->abandoned, 2);
    assert_int_equal(mid->executions, k == 0 ? 2 : 0);
    assert_int_equal(test_edge(x.r, "mid", "db")->calls, 0);
    assert_int_equal(test_svc(x.r, "db")->arrivals, 0);
    test_run_free(&x);
  }
}

/* Sequential calls: no call starts after the cancel. mid calls db (50 ms) then db2; the
 * cancel at 11 ms ends db's call and mid's handler, so db2 is never called. */
static void test_model_fanout_cancel_starts_no_further_sequential_call(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '1s', 'services': {"
      "  'agg': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'fanout', 'wait_for': 1,"
      "     'cancel_rest': %s,"
      "     'calls': [{'service': 'fast', 'method': '/f.F/M'}, {'service': 'mid',"
      "       'method': '/m.M/M'}]},"
      "  'fast': {'service_time': '10ms', 'workers': 10},"
      "  'mid': {'service_time': '1ms', 'workers': 10, 'calls_mode': 'sequential',"
      "     'calls': [{'service': 'db', 'method': '/d.D/M'}, {'service': 'db2',"
      "       'method': '/d.D/N'}]},"
      "  'db': {'service_time': '50ms', 'workers': 10},"
      "  'db2': {'service_time': '1ms', 'workers': 10}},"
      " 'clients': {'c1': {'target': 'agg', 'methods': ['/g.G/M'],"
      "   'arrival': {'kind': 'script', 'at': ['0s']}}}}";
  char text[2000];
  test_run x;
  snprintf(text, sizeof text, fmt, "false");
  test_run_text(&x, text, 1);
  assert_int_equal(test_svc(x.r, "db2")->arrivals, 1);
  assert_int_equal(test_svc(x.r, "mid")->served, 1);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "true");
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(test_svc(x.r, "mid")->cancelled, 1);
  assert_int_equal(test_edge(x.r, "mid", "db")->cancelled, 1);
  assert_int_equal(test_edge(x.r, "mid", "db2")->calls, 0);
  assert_int_equal(test_svc(x.r, "db2")->arrivals, 0);
  assert_int_equal(test_svc(x.r, "db")->abandoned, 1);
  test_run_free(&x);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_fanout_waits_for_all_sequential_stops_at_a_failure),
      cmocka_unit_test(test_model_fanout_count_is_that_many_calls),
      cmocka_unit_test(
          test_model_fanout_wait_for_goes_on_at_k_successes_or_n_minus_k_plus_1_failures),
      cmocka_unit_test(test_model_fanout_wait_for_quorum_succeeds_as_the_binomial_says),
      cmocka_unit_test(test_model_fanout_wait_for_counts_a_hedged_call_once),
      cmocka_unit_test(test_model_fanout_wait_for_cancels_the_calls_it_leaves),
      cmocka_unit_test(test_model_fanout_wait_for_cancels_a_call_waiting_for_a_permit),
      cmocka_unit_test(test_model_fanout_cancel_reaches_the_calls_of_a_handler_waiting_for_them),
      cmocka_unit_test(test_model_fanout_cancel_reaching_a_working_handler_stops_its_calls),
      cmocka_unit_test(test_model_fanout_cancel_starts_no_further_sequential_call),
      cmocka_unit_test(test_model_fanout_cancel_ends_a_call_waiting_out_its_deadline_once),
      cmocka_unit_test(test_model_fanout_cancel_leaves_a_call_in_its_own_end_to_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
