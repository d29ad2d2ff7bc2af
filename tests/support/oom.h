/*
 * oom.h: test support. A chaos allocator: allocation number fail_at (0-based, mallocs and
 * reallocs counted together) fails, and every block handed out is counted until freed, so a
 * test that walks fail_at over every allocation sees both the error path and any leak
 * (live != 0). Jansson's allocations can be routed into the same count (test_oom_json_begin),
 * for loaders whose allocations come from both.
 */
#ifndef TEST_OOM_H
#define TEST_OOM_H

#include <stdbool.h>

#include "retry/retry.h"

typedef struct test_oom {
  long n_calls;     /* allocations attempted */
  long fail_at;     /* the one that fails, -1: none */
  long live;        /* blocks handed out and not freed */
  bool json_failed; /* the allocation that failed was jansson's */
} test_oom;

/* Resets c to fail allocation fail_at and returns an allocator counting into c (borrowed: c
 * must outlive every block the allocator hands out). */
retry_allocator test_oom_allocator(test_oom *c, long fail_at);

/* Whether allocation fail_at was asked for, that is whether the failure was injected. */
bool test_oom_failed(const test_oom *c);

/* Routes jansson's allocations (json_set_alloc_funcs, which is process-wide and takes no
 * context) into c, counted and failed with c's other allocations, until test_oom_json_end,
 * which gives jansson back the functions it had. Calls do not nest. c is borrowed until then. */
void test_oom_json_begin(test_oom *c);
void test_oom_json_end(void);

#endif /* TEST_OOM_H */
