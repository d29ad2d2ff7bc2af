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
static void test_model_parts_status_map_crosses_spaces_by_the_canonical_tables(void **state) {
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
static void test_model_parts_status_map_entries_win_and_default_covers_failures(void **state) {
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

static void test_model_parts_status_helpers_name_each_space_code(void **state) {
  (void)state;
  assert_int_equal(model__status_ok(G), RETRY_GRPC_OK);
  assert_int_equal(model__status_ok(H), 200);
  assert_int_equal(model__status_deadline(G), RETRY_GRPC_DEADLINE_EXCEEDED);
  assert_int_equal(model__status_deadline(H), 504);
  assert_int_equal(model__status_unavailable(G), RETRY_GRPC_UNAVAILABLE);
  assert_int_equal(model__status_unavailable(H), 503);
}

/* Objects come back zeroed, are reused LIFO, and chunks only grow with the peak in use. */
static void test_model_parts_pool_reuses_objects_without_growing(void **state) {
  (void)state;
  mw_pool p;
  retry_allocator libc;
  retry_allocator_resolve(NULL, &libc);
  model__pool_init(&p, &libc, 40, 4);
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
  /* Not zeroed: past the free-list link it holds what its last user wrote (callers set every
   * field, model_int.h), and a new chunk's objects start as zeros past the link. */
  unsigned char *z = model__pool_get(&p);
#if defined(__SANITIZE_ADDRESS__) || defined(MODEL_POOL_POISON)
  const unsigned char left = 0xa5, fresh = 0xa5; /* poisoned on every get */
#else
  const unsigned char left = 0xab, fresh = 0;
#endif
  for (size_t i = sizeof(void *); i < 40; i++)
    assert_int_equal(z[i], left);
  void *more[12]; /* the other 11 slots of the 3 chunks, then one from a 4th */
  for (int i = 0; i < 12; i++)
    more[i] = model__pool_get(&p);
  assert_int_equal(p.n_chunks, 4);
  for (size_t i = sizeof(void *); i < 40; i++)
    assert_int_equal(((unsigned char *)more[11])[i], fresh);
  for (int i = 0; i < 12; i++)
    model__pool_put(&p, more[i]);
  model__pool_put(&p, z);
  model__pool_free(&p);
  assert_int_equal(p.n_chunks, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_parts_status_map_crosses_spaces_by_the_canonical_tables),
      cmocka_unit_test(test_model_parts_status_map_entries_win_and_default_covers_failures),
      cmocka_unit_test(test_model_parts_status_helpers_name_each_space_code),
      cmocka_unit_test(test_model_parts_pool_reuses_objects_without_growing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
