/*
 * oom.c: the chaos allocator of oom.h over malloc, realloc and free.
 */
#include "tests/support/oom.h"

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
  retry_allocator a = {oom_malloc, oom_realloc, oom_free, c};
  return a;
}
