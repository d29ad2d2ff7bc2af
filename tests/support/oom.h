/*
 * oom.h: test support. A chaos allocator: allocation number fail_at (0-based, mallocs and
 * reallocs counted together) fails, and every block handed out is counted until freed, so a
 * test that walks fail_at over every allocation sees both the error path and any leak
 * (live != 0).
 */
#ifndef TEST_OOM_H
#define TEST_OOM_H

#include "retry/retry.h"

typedef struct test_oom {
  long n_calls; /* allocations attempted */
  long fail_at; /* the one that fails, -1: none */
  long live;    /* blocks handed out and not freed */
} test_oom;

/* Resets c to fail allocation fail_at and returns an allocator counting into c (borrowed: c
 * must outlive every block the allocator hands out). */
retry_allocator test_oom_allocator(test_oom *c, long fail_at);

#endif /* TEST_OOM_H */
