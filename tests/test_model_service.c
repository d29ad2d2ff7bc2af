/*
 * test_model_service.c: services: the side-effect ledger (duplicates, sibling calls as
 * separate operations), a gateway's status map, deadline-aware servers dropping expired
 * work, the load balancer avoiding the previous replica, and a capacity fault's end serving
 * the queue it left.
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
 * The ledger and the gateway
 * =================================================================== */

static void test_model_service_ledger_counts_duplicate_charges(void **state) {
  (void)state;
  /* INTERNAL after the charge, INTERNAL retryable: 3 attempts, 3 charges per call. */
  test_run x;
  test_run_text(&x,
                "{'duration': '1s', 'services': {'pay': {'service_time': '10ms',"
                "   'side_effect': 'before',"
                "   'faults': [{'kind': 'fail', 'status': 'INTERNAL'}]}},"
                " 'clients': {'c': {'count': 4, 'target': 'pay', 'methods': ['/p.P/Charge'],"
                "   'arrival': {'kind': 'script', 'at': ['0s', '0.5s']},"
                "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
                "     'initialBackoff': '0.1s', 'maxBackoff': '0.1s', 'backoffMultiplier': 1,"
                "     'retryableStatusCodes': ['INTERNAL']}}]}}}}",
                1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 8);
  assert_int_equal(r->attempts, 24);
  assert_int_equal(r->executions, 24);
  assert_int_equal(r->operations, 8);
  assert_int_equal(r->duplicates, 16);
  assert_int_equal(r->by_status.grpc[RETRY_GRPC_INTERNAL], 8);
  test_run_free(&x);
  /* The same with idempotency keys: one charge per operation. */
  test_run_text(&x,
                "{'duration': '1s', 'services': {'pay': {'service_time': '10ms',"
                "   'side_effect': 'before', 'dedup': true,"
                "   'faults': [{'kind': 'fail', 'status': 'INTERNAL'}]}},"
                " 'clients': {'c': {'count': 4, 'target': 'pay', 'methods': ['/p.P/Charge'],"
                "   'arrival': {'kind': 'script', 'at': ['0s', '0.5s']},"
                "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
                "     'initialBackoff': '0.1s', 'maxBackoff': '0.1s', 'backoffMultiplier': 1,"
                "     'retryableStatusCodes': ['INTERNAL']}}]}}}}",
                1);
  assert_int_equal(x.r->executions, 8);
  assert_int_equal(x.r->duplicates, 0);
  assert_int_equal(test_svc(x.r, "pay")->deduplicated, 16);
  test_run_free(&x);
}

/* Two calls of one handler to one service are two operations, not duplicates; a retried
 * upstream request repeats both, and those repeats are duplicates. */
static void test_model_service_sibling_calls_are_separate_operations(void **state) {
  (void)state;
  for (int retried = 0; retried < 2; retried++) {
    char text[1200];
    snprintf(
        text, sizeof text,
        "{'duration': '1s', 'services': {"
        "  'front': {'service_time': '1ms', 'workers': 4,"
        "    'calls': [{'service': 'ledger', 'method': '/l.L/Debit'},"
        "              {'service': 'ledger', 'method': '/l.L/Credit'}]%s},"
        "  'ledger': {'service_time': '1ms', 'workers': 4, 'side_effect': 'before'}},"
        " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Transfer'],"
        "   'arrival': {'kind': 'script', 'at': ['0s', '0.1s', '0.2s']},"
        "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
        "     'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
        "     'retryableStatusCodes': ['UNAVAILABLE']}}]}}}}",
        retried ? ", 'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'attempts': [1]}]" : "");
    test_run x;
    test_run_text(&x, text, 1);
    assert_int_equal(x.r->operations, 6);
    assert_int_equal(x.r->executions, retried ? 12 : 6);
    assert_int_equal(x.r->duplicates, retried ? 6 : 0);
    test_run_free(&x);
  }
}

/* A gateway maps an unmapped FAILED_PRECONDITION to 500; a retry-on-5xx client in front of it
 * then sends 3 attempts, each reaching the backend once. */
static void test_model_service_gateway_maps_statuses(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '1s',"
                " 'services': {"
                "  'gw': {'space': 'http', 'service_time': '0s', 'workers': 100,"
                "    'calls': [{'service': 'be', 'method': '/b.B/Do', 'map': {'default': 500}}]},"
                "  'be': {'service_time': '1ms', 'workers': 100,"
                "    'faults': [{'kind': 'fail', 'status': 'FAILED_PRECONDITION'}]}},"
                " 'clients': {'c': {'target': 'gw', 'methods': ['/g.G/Do'], 'count': 5,"
                "   'arrival': {'kind': 'script', 'at': ['0s']},"
                "   'policy': {'methodConfig': [{'name': [{}], 'retrysim': {'statusSpace': 'http'},"
                "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s',"
                "       'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
                "       'retryableStatusCodes': ['5xx']}}]}}}}",
                1);
  const model_results *r = x.r;
  assert_int_equal(r->calls_started, 5);
  assert_int_equal(r->by_status.http[500], 5);
  assert_int_equal(test_svc(r, "gw")->arrivals, 15);
  assert_int_equal(test_svc(r, "be")->arrivals, 15);
  test_run_free(&x);
  /* Without the catch-all the canonical table applies: FAILED_PRECONDITION is 400, final. */
  test_run_text(&x,
                "{'duration': '1s',"
                " 'services': {"
                "  'gw': {'space': 'http', 'service_time': '0s', 'workers': 100,"
                "    'calls': [{'service': 'be', 'method': '/b.B/Do'}]},"
                "  'be': {'service_time': '1ms', 'workers': 100,"
                "    'faults': [{'kind': 'fail', 'status': 'FAILED_PRECONDITION'}]}},"
                " 'clients': {'c': {'target': 'gw', 'methods': ['/g.G/Do'], 'count': 5,"
                "   'arrival': {'kind': 'script', 'at': ['0s']},"
                "   'policy': {'methodConfig': [{'name': [{}], 'retrysim': {'statusSpace': 'http'},"
                "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s',"
                "       'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
                "       'retryableStatusCodes': ['5xx']}}]}}}}",
                1);
  assert_int_equal(x.r->by_status.http[400], 5);
  assert_int_equal(test_svc(x.r, "be")->arrivals, 5);
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Queues, replicas and faults
 * =================================================================== */

/* Deadline-aware servers drop expired work instead of doing it. */
static void test_model_service_deadline_aware_drops_expired(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {'s': {'service_time': '10ms', 'deadline': '%s',"
      "   'queue': {'capacity': 100000}}},"
      " 'clients': {'c': {'target': 's', 'methods': ['/s.S/M'], 'deadline': '50ms',"
      "   'arrival': {'kind': 'open', 'rate': '200/s'}}}}";
  char text[1024];
  test_run x;
  snprintf(text, sizeof text, fmt, "ignore");
  test_run_text(&x, text, 1);
  double wasted_ignore = test_svc(x.r, "s")->wasted_work_s;
  double busy_ignore = test_svc(x.r, "s")->busy_s;
  assert_int_equal(test_svc(x.r, "s")->expired, 0);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "drop");
  test_run_text(&x, text, 1);
  const model_service_stats *s = test_svc(x.r, "s");
  /* Overloaded twice over: most requests expire in the queue and are dropped unworked. */
  assert_true(s->expired > 0);
  /* Both runs keep the one worker busy (utilization counts the work in progress at the end);
   * dropping expired work never adds worker time. */
  assert_true(s->busy_s <= busy_ignore * 1.001);
  assert_true(s->wasted_work_s < wasted_ignore);
  test_run_free(&x);
}

/* A retry that avoids the previous replica never meets the broken one twice. */
static void test_model_service_lb_avoids_previous_replica(void **state) {
  (void)state;
  const char *fmt =
      "{'duration': '10s', 'services': {'s': {'replicas': 2, 'workers': 100, 'service_time': '1ms',"
      "   'lb': {'kind': 'random', 'avoid_previous': %s},"
      "   'faults': [{'kind': 'down', 'replicas': [0]}]}},"
      " 'clients': {'c': {'target': 's', 'methods': ['/s.S/M'],"
      "   'arrival': {'kind': 'open', 'rate': '100/s'},"
      "   'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 2,"
      "     'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "     'retryableStatusCodes': ['UNAVAILABLE']}}]}}}}";
  char text[1500];
  test_run x;
  snprintf(text, sizeof text, fmt, "true");
  test_run_text(&x, text, 1);
  assert_int_equal(x.r->calls_failed, 0);
  test_run_free(&x);
  snprintf(text, sizeof text, fmt, "false");
  test_run_text(&x, text, 1);
  /* Random choice: about a quarter of the calls meet the dead replica twice. */
  double f = (double)x.r->calls_failed / (double)x.r->calls_started;
  assert_true(f > 0.18 && f < 0.32);
  test_run_free(&x);
}

/* A capacity fault with no workers at all: nothing finishes while it holds, so only the fault's
 * end can start the requests it left queued. Every one of them is served once it is over. */
static void test_model_service_capacity_fault_end_serves_the_queue(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '4s', 'drain': '5s', 'services': {"
                "  'api': {'workers': 4, 'queue': {'capacity': 100000},"
                "   'service_time': {'dist': 'constant', 'value': '10ms'}, 'deadline': 'ignore',"
                "   'faults': [{'kind': 'capacity', 'workers': 0, 'start': '1s', 'end': '2s'}]}},"
                " 'clients': {'web': {'target': 'api', 'methods': ['/a.A/Get'],"
                "   'arrival': {'kind': 'open', 'rate': '80/s'}}}}",
                1);
  const model_results *r = x.r;
  assert_true(r->calls_started > 250);
  assert_int_equal(r->calls_unfinished, 0);
  assert_int_equal(r->calls_ok, r->calls_started);
  /* About 80 requests waited for the fault to end; the first of them nearly a second. */
  const model_service_stats *a = test_svc(r, "api");
  assert_true(a->queue_max > 60 && a->queue_max < 100);
  assert_true(sim_hist_quantile(&r->latency, 1.0) > 900000000);
  test_run_free(&x);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_service_ledger_counts_duplicate_charges),
      cmocka_unit_test(test_model_service_gateway_maps_statuses),
      cmocka_unit_test(test_model_service_sibling_calls_are_separate_operations),
      cmocka_unit_test(test_model_service_deadline_aware_drops_expired),
      cmocka_unit_test(test_model_service_lb_avoids_previous_replica),
      cmocka_unit_test(test_model_service_capacity_fault_end_serves_the_queue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
