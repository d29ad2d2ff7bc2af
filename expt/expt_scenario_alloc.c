/*
 * expt_scenario_alloc.c: the loader's allocations, through one hook that the tests use to
 * inject failures (expt__scenario_set_fail_hook), also handed to the engine's config loader.
 * Invariant: without a hook, these are malloc, calloc, strdup and free.
 */
#include "expt/expt_scenario_int.h"

#include <stdlib.h>
#include <string.h>

/* {==================================================================
 * Allocation, with a hook for the tests' failure injection
 * =================================================================== */

/* The hook is process-wide state, which sim/ otherwise avoids: the loader's API takes no
 * allocator (the command line has no use for one), and the only caller that wants failures
 * injected is the test, which runs one thread. */
static bool (*fail_hook)(void *ctx);
static void *fail_hook_ctx;

void expt__scenario_set_fail_hook(bool (*fail)(void *ctx), void *ctx) {
  fail_hook = fail;
  fail_hook_ctx = ctx;
}

/* Asked before every allocation of the loader. The chaos test in tests/test_expt_scenario.c
 * fails the Nth allocation for N = 0, 1, 2, ... and checks that each failure is reported as
 * RETRY_ENOMEM and leaks nothing, so an allocation that bypassed this hook would be a failure
 * path the test never exercises. */
static bool should_fail(void) { return fail_hook != NULL && fail_hook(fail_hook_ctx); }

/* A zero size is bumped to 1: malloc(0) may return NULL, which a caller would take for out of
 * memory. No caller means to ask for 0 bytes, but one that did must not fail spuriously. */
void *expt__scenario_malloc(size_t size) { return should_fail() ? NULL : malloc(size ? size : 1); }

void *expt__scenario_calloc(size_t n, size_t size) {
  return should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

char *expt__scenario_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = expt__scenario_malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

/* libretry's allocator interface (malloc/realloc/free with a context), wired to the same hook,
 * so a policy loaded by retry_config_load_* fails under the test exactly like the rest of the
 * loader. Frees never fail, and the context is unused because the hook's state is global. */
static void *hook_malloc(size_t size, void *ctx) {
  (void)ctx;
  return expt__scenario_malloc(size);
}

static void *hook_realloc(void *p, size_t size, void *ctx) {
  (void)ctx;
  return should_fail() ? NULL : realloc(p, size);
}

static void hook_free(void *p, void *ctx) {
  (void)ctx;
  free(p);
}

static const retry_allocator hook_alloc = {hook_malloc, hook_realloc, hook_free, NULL};

/* Without a hook, NULL tells libretry to use its default allocator: the production path pays
 * nothing for the test facility. */
const retry_allocator *expt__scenario_retry_alloc(void) {
  return fail_hook != NULL ? &hook_alloc : NULL;
}

/* }================================================================== */
