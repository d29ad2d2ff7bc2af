/*
 * oom.c: the chaos allocator of oom.h over malloc, realloc and free, and its bridge to
 * jansson's allocator.
 */
#include "tests/support/oom.h"

#include <jansson.h>
#include <stdlib.h>

static void *oom_malloc(size_t size, void *ctx) {
  test_oom *c = ctx;
  if (c->n_calls++ == c->fail_at) return NULL;
  void *p = malloc(size);
  if (p != NULL) c->live++;
  return p;
}

/* A realloc of NULL is a new block; of a block, the same block moved (live unchanged). */
static void *oom_realloc(void *ptr, size_t size, void *ctx) {
  test_oom *c = ctx;
  if (c->n_calls++ == c->fail_at) return NULL;
  void *p = realloc(ptr, size);
  if (p != NULL && ptr == NULL) c->live++;
  return p;
}

static void oom_free(void *ptr, void *ctx) {
  test_oom *c = ctx;
  if (ptr != NULL) c->live--;
  free(ptr);
}

retry_allocator test_oom_allocator(test_oom *c, long fail_at) {
  c->n_calls = 0;
  c->fail_at = fail_at;
  c->live = 0;
  c->json_failed = false;
  retry_allocator a = {oom_malloc, oom_realloc, oom_free, c};
  return a;
}

bool test_oom_failed(const test_oom *c) { return c->fail_at >= 0 && c->n_calls > c->fail_at; }

/* {==================================================================
 * Jansson's allocator: it takes no context, so the counter it feeds is one static pointer,
 * set for the time between begin and end.
 * =================================================================== */

static test_oom *json_oom;
static json_malloc_t json_saved_malloc;
static json_free_t json_saved_free;

static void *json_oom_malloc(size_t size) {
  bool failing = json_oom->n_calls == json_oom->fail_at;
  void *p = oom_malloc(size, json_oom);
  if (failing) json_oom->json_failed = true;
  return p;
}

static void json_oom_free(void *ptr) { oom_free(ptr, json_oom); }

void test_oom_json_begin(test_oom *c) {
  json_oom = c;
  json_get_alloc_funcs(&json_saved_malloc, &json_saved_free);
  json_set_alloc_funcs(json_oom_malloc, json_oom_free);
}

void test_oom_json_end(void) {
  json_set_alloc_funcs(json_saved_malloc, json_saved_free);
  json_oom = NULL;
}

/* }================================================================== */
