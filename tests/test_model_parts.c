/*
 * test_model_parts.c: pieces of the world tested on their own: the status mapping a gateway
 * applies (explicit entries, the catch-all, the canonical tables both ways) and the free-list
 * pools that keep memory proportional to the objects in flight.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "models/model_int.h"

static const retry_space G = RETRY_SPACE_GRPC, H = RETRY_SPACE_HTTP;

/* Without a map, same-space statuses pass and the canonical tables cross spaces. */
static void test_status_map_canonical_tables(void **state) {
  (void)state;
  assert_int_equal(model__status_map(NULL, G, G, RETRY_GRPC_INTERNAL), RETRY_GRPC_INTERNAL);
  assert_int_equal(model__status_map(NULL, H, H, 418), 418);
  /* gRPC to HTTP as grpc-gateway maps it. */
  static const int32_t to_http[RETRY_GRPC_N_CODES] = {200, 499, 500, 400, 504, 404, 409, 403, 429,
                                                      400, 409, 400, 501, 500, 503, 500, 401};
  for (int32_t c = 0; c < RETRY_GRPC_N_CODES; c++)
    assert_int_equal(model__status_map(NULL, G, H, c), to_http[c]);
  assert_int_equal(model__status_map(NULL, G, H, 99), 500); /* not a gRPC code */
  /* HTTP to gRPC as gRPC clients read a non-gRPC response. */
  assert_int_equal(model__status_map(NULL, H, G, 200), RETRY_GRPC_OK);
  assert_int_equal(model__status_map(NULL, H, G, 204), RETRY_GRPC_OK);
  assert_int_equal(model__status_map(NULL, H, G, 400), RETRY_GRPC_INTERNAL);
  assert_int_equal(model__status_map(NULL, H, G, 401), RETRY_GRPC_UNAUTHENTICATED);
  assert_int_equal(model__status_map(NULL, H, G, 403), RETRY_GRPC_PERMISSION_DENIED);
  assert_int_equal(model__status_map(NULL, H, G, 404), RETRY_GRPC_UNIMPLEMENTED);
  for (int32_t s = 429; s <= 504; s++)
    if (s == 429 || s == 502 || s == 503 || s == 504)
      assert_int_equal(model__status_map(NULL, H, G, s), RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(model__status_map(NULL, H, G, 500), RETRY_GRPC_UNKNOWN);
  assert_int_equal(model__status_map(NULL, H, G, 418), RETRY_GRPC_UNKNOWN);
}

/* Explicit entries win; the catch-all covers failures only; the rest falls to the tables. */
static void test_status_map_entries_and_default(void **state) {
  (void)state;
  model_status_map m;
  memset(&m, 0, sizeof m);
  m.n = 2;
  m.from[0] = RETRY_GRPC_NOT_FOUND;
  m.to[0] = 404;
  m.from[1] = RETRY_GRPC_OK;
  m.to[1] = 201;
  assert_int_equal(model__status_map(&m, G, H, RETRY_GRPC_NOT_FOUND), 404);
  assert_int_equal(model__status_map(&m, G, H, RETRY_GRPC_OK), 201);
  /* No catch-all: canonical. */
  assert_int_equal(model__status_map(&m, G, H, RETRY_GRPC_FAILED_PRECONDITION), 400);
  m.has_default = true;
  m.default_to = 500;
  assert_int_equal(model__status_map(&m, G, H, RETRY_GRPC_FAILED_PRECONDITION), 500);
  assert_int_equal(model__status_map(&m, G, H, RETRY_GRPC_UNAVAILABLE), 500);
  assert_int_equal(model__status_map(&m, G, H, RETRY_GRPC_NOT_FOUND), 404);
  m.n = 0; /* a success that is not listed still passes through the canonical table */
  assert_int_equal(model__status_map(&m, G, H, RETRY_GRPC_OK), 200);
  /* Same space with a catch-all: every failure becomes the default. */
  assert_int_equal(model__status_map(&m, G, G, RETRY_GRPC_ABORTED), 500);
}

static void test_status_helpers(void **state) {
  (void)state;
  assert_int_equal(model__status_ok(G), RETRY_GRPC_OK);
  assert_int_equal(model__status_ok(H), 200);
  assert_int_equal(model__status_deadline(G), RETRY_GRPC_DEADLINE_EXCEEDED);
  assert_int_equal(model__status_deadline(H), 504);
  assert_int_equal(model__status_unavailable(G), RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(model__status_unavailable(H), 503);
}

/* Objects come back zeroed, are reused LIFO, and chunks only grow with the peak in use. */
static void test_pool_reuses_objects(void **state) {
  (void)state;
  mw_pool p;
  model__pool_init(&p, 40, 4);
  assert_int_equal(p.obj_size % sizeof(void *), 0);
  void *obj[10];
  for (int i = 0; i < 10; i++) {
    obj[i] = model__pool_get(&p);
    assert_non_null(obj[i]);
    memset(obj[i], 0xab, 40);
  }
  assert_int_equal(p.in_use, 10);
  assert_int_equal(p.peak, 10);
  assert_int_equal(p.n_chunks, 3);
  for (int i = 0; i < 10; i++)
    model__pool_put(&p, obj[i]);
  assert_int_equal(p.in_use, 0);
  /* A million get/put pairs with at most 10 live objects allocate nothing more. */
  for (int round = 0; round < 100000; round++) {
    for (int i = 0; i < 10; i++)
      obj[i] = model__pool_get(&p);
    for (int i = 0; i < 10; i++)
      model__pool_put(&p, obj[i]);
  }
  assert_int_equal(p.n_chunks, 3);
  assert_int_equal(p.peak, 10);
  unsigned char *z = model__pool_get(&p);
  for (int i = 0; i < 40; i++)
    assert_int_equal(z[i], 0);
  model__pool_put(&p, z);
  model__pool_free(&p);
  assert_int_equal(p.n_chunks, 0);
}

/* {==================================================================
 * Recovery after a trigger
 * =================================================================== */

/* A series of n one-second buckets: offered 100/s throughout, goodput from good[] (NaN-free),
 * interleaved as the world stores them (stride 2: offered, goodput). */
static void series(double *v, const double *good, size_t n) {
  for (size_t b = 0; b < n; b++) {
    v[2 * b] = 100;
    v[2 * b + 1] = good[b];
  }
}

static const model_recovery_cfg rcfg = {.threshold = 0.9, .hold_ns = 3000000000, .warmup_ns = -1};
#define S 1000000000LL

static void test_recovery_after_the_trigger(void **state) {
  (void)state;
  /* 20 s: healthy 98/s, trigger [6 s, 9 s), bad until 11 s, then healthy. */
  double good[20], v[40];
  for (int b = 0; b < 20; b++)
    good[b] = (b >= 6 && b < 11) ? 20 : 98;
  series(v, good, 20);
  model_recovery r;
  model_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.has_trigger && r.recovered);
  /* Baseline: buckets 3..5 (warm-up is half of the 6 s before the trigger). */
  assert_true(fabs(r.baseline_ratio - 0.98) < 1e-12);
  assert_true(r.trigger_start_s == 6 && r.trigger_end_s == 9);
  /* Buckets 9 and 10 are bad; 11, 12, 13 healthy: recovered 2 s after the end. */
  assert_true(r.recovery_s == 2.0);
  assert_true(fabs(r.final_ratio - 0.98) < 1e-12);
  /* One bad bucket inside the hold span restarts it. */
  good[12] = 50;
  series(v, good, 20);
  model_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.recovered && r.recovery_s == 4.0);
}

static void test_recovery_never_or_not_asked(void **state) {
  (void)state;
  double good[20], v[40];
  for (int b = 0; b < 20; b++)
    good[b] = b < 6 ? 98 : 30;
  series(v, good, 20);
  model_recovery r;
  /* Stays down: never recovered, recovery_s NaN, the final ratio tells how far down. */
  model_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_true(r.has_trigger && !r.recovered && isnan(r.recovery_s));
  assert_true(fabs(r.final_ratio - 0.3) < 1e-12);
  /* Healthy only in the last 2 s: a hold span cut by the end of the duration does not count. */
  good[18] = good[19] = 98;
  series(v, good, 20);
  model_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_false(r.recovered);
  /* A trigger that lasts past the duration (or no fault at all): nothing to judge. */
  model_recovery_judge(&rcfg, 20 * S, S, 6 * S, 20 * S, v, v + 1, 2, 20, &r);
  assert_false(r.has_trigger);
  model_recovery_judge(&rcfg, 20 * S, S, INT64_MAX, INT64_MIN, v, v + 1, 2, 20, &r);
  assert_false(r.has_trigger);
  /* A trigger at time 0 has no history: the baseline is 1. */
  for (int b = 0; b < 20; b++)
    good[b] = 95;
  series(v, good, 20);
  model_recovery_judge(&rcfg, 20 * S, S, 0, 2 * S, v, v + 1, 2, 20, &r);
  assert_true(r.baseline_ratio == 1.0 && r.recovered && r.recovery_s == 0.0);
  /* Nothing offered after the trigger (stuck closed-loop users) is never healthy. */
  for (int b = 9; b < 20; b++)
    v[2 * b] = v[2 * b + 1] = 0;
  model_recovery_judge(&rcfg, 20 * S, S, 6 * S, 9 * S, v, v + 1, 2, 20, &r);
  assert_false(r.recovered);
  assert_true(isnan(r.final_ratio));
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_map_canonical_tables),
      cmocka_unit_test(test_recovery_after_the_trigger),
      cmocka_unit_test(test_recovery_never_or_not_asked),
      cmocka_unit_test(test_status_map_entries_and_default),
      cmocka_unit_test(test_status_helpers),
      cmocka_unit_test(test_pool_reuses_objects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
