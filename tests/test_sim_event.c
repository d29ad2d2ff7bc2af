/*
 * test_sim_event.c: the event kernel. Edge cases first (equal times, zero delay, times near
 * INT64_MAX, cancel from inside an action, stale handles), then run/stop semantics, memory
 * bounds, determinism, a randomized comparison against a sorted-array reference, a randomized
 * model checked after every operation (from outside and inside actions), and out-of-memory at
 * each of the kernel's allocations (a chaos allocator).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/sim_event.h"
#include "tests/support/oom.h"

/* {==================================================================
 * Helpers
 * =================================================================== */

/* What ran: each action appends its time and argument. */
typedef struct trace {
  size_t n, cap;
  int64_t *t_ns;
  uint64_t *arg;
} trace;

static trace *trace_create(size_t cap) {
  trace *tr = calloc(1, sizeof *tr);
  assert_non_null(tr);
  tr->cap = cap;
  tr->t_ns = malloc(cap * sizeof *tr->t_ns);
  tr->arg = malloc(cap * sizeof *tr->arg);
  assert_non_null(tr->t_ns);
  assert_non_null(tr->arg);
  return tr;
}

static void trace_destroy(trace *tr) {
  free(tr->t_ns);
  free(tr->arg);
  free(tr);
}

static void trace_add(trace *tr, int64_t t_ns, uint64_t arg) {
  assert_true(tr->n < tr->cap);
  tr->t_ns[tr->n] = t_ns;
  tr->arg[tr->n] = arg;
  tr->n++;
}

/* An action that only records itself; obj is a trace. */
static void ev_record(sim_kernel *k, void *obj, uint64_t arg) {
  trace_add(obj, sim_now_ns(k), arg);
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* }================================================================== */

/* {==================================================================
 * Ordering
 * =================================================================== */

static void test_sim_event_runs_in_time_order(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(1000);
  uint64_t s = 1;
  for (uint64_t i = 0; i < 1000; i++)
    assert_int_not_equal(sim_event_schedule(k, (int64_t)(splitmix(&s) % 1000000), ev_record, tr, i),
                         0);
  assert_int_equal(sim_kernel_n_pending(k), 1000);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 1000);
  assert_int_equal(tr->n, 1000);
  for (size_t i = 1; i < tr->n; i++)
    assert_true(tr->t_ns[i - 1] <= tr->t_ns[i]);
  /* The clock reads the last event's time; a drain does not move it to INT64_MAX. */
  assert_int_equal(sim_now_ns(k), tr->t_ns[999]);
  assert_int_equal(sim_kernel_n_events(k), 1000);
  assert_int_equal(sim_kernel_n_pending(k), 0);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

static void test_sim_event_equal_times_run_fifo(void **state) {
  (void)state;
  /* Start small so the pool and the heap grow (and are copied) while ties are pending. */
  sim_kernel *k = sim_kernel_create(1, NULL);
  trace *tr = trace_create(3000);
  for (uint64_t i = 0; i < 1000; i++) {
    sim_event_schedule(k, 50, ev_record, tr, i);
    sim_event_schedule(k, 40, ev_record, tr, 1000 + i);
    sim_event_schedule(k, 60, ev_record, tr, 2000 + i);
  }
  sim_kernel_run(k, INT64_MAX);
  assert_int_equal(tr->n, 3000);
  for (uint64_t i = 0; i < 1000; i++) {
    assert_int_equal(tr->arg[i], 1000 + i);
    assert_int_equal(tr->arg[1000 + i], i);
    assert_int_equal(tr->arg[2000 + i], 2000 + i);
  }
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* Schedules a zero-delay follower (arg + 1) until arg reaches 5. */
static void ev_chain_now(sim_kernel *k, void *obj, uint64_t arg) {
  trace_add(obj, sim_now_ns(k), arg);
  if (arg < 5) assert_int_not_equal(sim_event_schedule_in(k, 0, ev_chain_now, obj, arg + 1), 0);
}

static void test_sim_event_zero_delay_runs_at_now(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  /* At time 0 from outside a run, and then from inside actions. */
  sim_event_schedule_in(k, 0, ev_chain_now, tr, 0);
  sim_event_schedule(k, 0, ev_record, tr, 100);
  assert_int_equal(sim_kernel_next_ns(k), 0);
  assert_int_equal(sim_kernel_run(k, 0), 7);
  /* Each follower is scheduled after 100 was, so 100 runs second. */
  const uint64_t want[7] = {0, 100, 1, 2, 3, 4, 5};
  for (size_t i = 0; i < 7; i++) {
    assert_int_equal(tr->arg[i], want[i]);
    assert_int_equal(tr->t_ns[i], 0);
  }
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

static void test_sim_event_times_near_int64_max_clamp_and_keep_order(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  const int64_t top = INT64_MAX - 1;
  sim_event_schedule(k, top, ev_record, tr, 1);
  sim_event_schedule(k, top - 1, ev_record, tr, 0);
  sim_event_schedule(k, top, ev_record, tr, 2);
  /* A delay that overflows clamps to INT64_MAX - 1 and queues behind the others there. */
  sim_event_schedule_in(k, INT64_MAX, ev_record, tr, 3);
  sim_event_schedule(k, 0, ev_record, tr, 100);
  assert_int_equal(sim_kernel_next_ns(k), 0);
  assert_int_equal(sim_kernel_run(k, 0), 1);
  assert_int_equal(sim_kernel_run(k, top - 1), 1);
  assert_int_equal(sim_now_ns(k), top - 1);
  assert_int_equal(sim_kernel_next_ns(k), top);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 3);
  assert_int_equal(sim_now_ns(k), top);
  const uint64_t want[5] = {100, 0, 1, 2, 3};
  for (size_t i = 0; i < 5; i++)
    assert_int_equal(tr->arg[i], want[i]);
  /* At the end of time every delay clamps to "now". */
  sim_event_schedule_in(k, 1000, ev_record, tr, 4);
  assert_int_equal(sim_kernel_next_ns(k), top);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 1);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* Schedules two events at the current time; they must run after every event already pending
 * for this time, in the order scheduled, and within the same sim_kernel_run. */
static void ev_spawn_now(sim_kernel *k, void *obj, uint64_t arg) {
  trace_add(obj, sim_now_ns(k), arg);
  sim_event_schedule(k, sim_now_ns(k), ev_record, obj, arg * 10 + 1);
  sim_event_schedule_in(k, 0, ev_record, obj, arg * 10 + 2);
}

static void test_sim_event_schedule_now_from_action_runs_after_pending(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  sim_event_schedule(k, 10, ev_spawn_now, tr, 1);
  sim_event_schedule(k, 10, ev_record, tr, 2);
  sim_event_schedule(k, 10, ev_spawn_now, tr, 3);
  sim_event_schedule(k, 11, ev_record, tr, 4);
  assert_int_equal(sim_kernel_run(k, 10), 7);
  const uint64_t want[7] = {1, 2, 3, 11, 12, 31, 32};
  for (size_t i = 0; i < 7; i++) {
    assert_int_equal(tr->arg[i], want[i]);
    assert_int_equal(tr->t_ns[i], 10);
  }
  assert_int_equal(sim_kernel_n_pending(k), 1);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* }================================================================== */

/* {==================================================================
 * Cancel and handles
 * =================================================================== */

static void test_sim_event_cancel_works_only_on_pending_events(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  sim_event_handle a = sim_event_schedule(k, 10, ev_record, tr, 1);
  sim_event_handle b = sim_event_schedule(k, 20, ev_record, tr, 2);
  sim_event_handle c = sim_event_schedule(k, 30, ev_record, tr, 3);
  assert_true(a != b && b != c && a != SIM_EVENT_NONE);
  assert_true(sim_event_is_pending(k, b));
  assert_true(sim_event_cancel(k, b));
  assert_false(sim_event_is_pending(k, b));
  assert_false(sim_event_cancel(k, b)); /* twice */
  assert_false(sim_event_cancel(k, SIM_EVENT_NONE));
  assert_false(sim_event_is_pending(k, SIM_EVENT_NONE));
  assert_int_equal(sim_kernel_n_pending(k), 2);
  assert_int_equal(sim_kernel_run(k, 15), 1);
  assert_false(sim_event_cancel(k, a)); /* already ran */
  assert_false(sim_event_is_pending(k, a));
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 1);
  assert_int_equal(tr->n, 2);
  assert_int_equal(tr->arg[0], 1);
  assert_int_equal(tr->arg[1], 3);
  /* A handle with an index beyond the pool is harmless too. */
  assert_false(sim_event_cancel(k, (sim_event_handle)1 << 32 | UINT32_MAX));
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

static void test_sim_event_stale_handle_after_slot_reuse(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(1, NULL);
  trace *tr = trace_create(16);
  sim_event_handle a = sim_event_schedule(k, 10, ev_record, tr, 1);
  assert_true(sim_event_cancel(k, a));
  /* The pool has one slot: b reuses a's slot with a new generation. */
  sim_event_handle b = sim_event_schedule(k, 10, ev_record, tr, 2);
  assert_int_equal(sim_kernel_pool_capacity(k), 1);
  assert_true(a != b);
  assert_int_equal(a & UINT32_MAX, b & UINT32_MAX);
  assert_false(sim_event_is_pending(k, a));
  assert_false(sim_event_cancel(k, a));
  assert_true(sim_event_is_pending(k, b));
  sim_kernel_run(k, INT64_MAX);
  assert_int_equal(tr->n, 1);
  assert_int_equal(tr->arg[0], 2);
  /* After b ran, a third event takes the slot again: neither old handle touches it. */
  sim_event_handle c = sim_event_schedule(k, 20, ev_record, tr, 3);
  assert_false(sim_event_cancel(k, a));
  assert_false(sim_event_cancel(k, b));
  assert_true(sim_event_is_pending(k, c));
  sim_kernel_run(k, INT64_MAX);
  assert_int_equal(tr->n, 2);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* Context for cancelling from inside an action. */
typedef struct canceller {
  trace *tr;
  sim_event_handle self, victim_later, victim_same_time, victim_ran;
  bool cancel_self, cancel_later, cancel_same, cancel_ran;
} canceller;

static void ev_cancel_others(sim_kernel *k, void *obj, uint64_t arg) {
  canceller *c = obj;
  trace_add(c->tr, sim_now_ns(k), arg);
  /* The running event is no longer pending: cancelling it is a harmless no-op. */
  c->cancel_self = sim_event_cancel(k, c->self);
  c->cancel_later = sim_event_cancel(k, c->victim_later);
  c->cancel_same = sim_event_cancel(k, c->victim_same_time);
  c->cancel_ran = sim_event_cancel(k, c->victim_ran);
}

static void test_sim_event_cancel_from_inside_action(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  canceller c = {0};
  c.tr = tr;
  c.victim_ran = sim_event_schedule(k, 5, ev_record, tr, 1);
  c.self = sim_event_schedule(k, 10, ev_cancel_others, &c, 2);
  c.victim_same_time = sim_event_schedule(k, 10, ev_record, tr, 3);
  c.victim_later = sim_event_schedule(k, 20, ev_record, tr, 4);
  sim_event_schedule(k, 20, ev_record, tr, 5);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 3);
  assert_false(c.cancel_self);
  assert_true(c.cancel_later);
  assert_true(c.cancel_same);
  assert_false(c.cancel_ran);
  const uint64_t want[3] = {1, 2, 5};
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(tr->arg[i], want[i]);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* Cancels its own handle (in *obj), then reschedules itself into the slot it just freed. */
static void ev_cancel_self_then_reuse(sim_kernel *k, void *obj, uint64_t arg) {
  sim_event_handle *h = obj;
  sim_event_handle old = *h;
  assert_false(sim_event_cancel(k, old));
  if (arg > 0) {
    *h = sim_event_schedule_in(k, 1, ev_cancel_self_then_reuse, h, arg - 1);
    /* LIFO reuse: same slot, new generation, so the old handle must stay dead. */
    assert_int_equal(*h & UINT32_MAX, old & UINT32_MAX);
    assert_false(sim_event_is_pending(k, old));
    assert_false(sim_event_cancel(k, old));
  }
}

static void test_sim_event_cancel_self_and_reuse_in_action(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  sim_event_handle h = sim_event_schedule(k, 0, ev_cancel_self_then_reuse, &h, 10);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 11);
  assert_int_equal(sim_now_ns(k), 10);
  sim_kernel_destroy(k);
}

/* }================================================================== */

/* {==================================================================
 * run, stop and counters
 * =================================================================== */

static void test_sim_event_run_until_includes_until_and_never_moves_back(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  sim_event_schedule(k, 10, ev_record, tr, 1);
  sim_event_schedule(k, 20, ev_record, tr, 2);
  sim_event_schedule(k, 30, ev_record, tr, 3);
  assert_int_equal(sim_kernel_run(k, 15), 1);
  assert_int_equal(sim_now_ns(k), 15);        /* nothing else <= 15: the clock advances */
  assert_int_equal(sim_kernel_run(k, 20), 1); /* an event exactly at until runs */
  assert_int_equal(sim_now_ns(k), 20);
  assert_int_equal(sim_kernel_run(k, 25), 0);
  assert_int_equal(sim_now_ns(k), 25);
  assert_int_equal(sim_kernel_run(k, 5), 0); /* the clock never moves back */
  assert_int_equal(sim_now_ns(k), 25);
  assert_int_equal(sim_kernel_next_ns(k), 30);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 1);
  assert_int_equal(sim_now_ns(k), 30); /* INT64_MAX drains but is not a time to reach */
  assert_int_equal(sim_kernel_next_ns(k), INT64_MAX);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 0);
  assert_int_equal(sim_now_ns(k), 30);
  assert_int_equal(sim_kernel_run(k, 100), 0); /* empty: straight to until */
  assert_int_equal(sim_now_ns(k), 100);
  assert_int_equal(sim_kernel_n_events(k), 3);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

static void ev_stop(sim_kernel *k, void *obj, uint64_t arg) {
  trace_add(obj, sim_now_ns(k), arg);
  sim_kernel_stop(k);
}

static void test_sim_event_stop_returns_after_current_action(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  sim_event_schedule(k, 10, ev_stop, tr, 1);
  sim_event_schedule(k, 10, ev_record, tr, 2);
  sim_event_schedule(k, 20, ev_record, tr, 3);
  assert_int_equal(sim_kernel_run(k, 100), 1);
  assert_int_equal(sim_now_ns(k), 10); /* stopped: no advance to 100 */
  assert_int_equal(sim_kernel_n_pending(k), 2);
  /* The next run resumes where the last one stopped. */
  assert_int_equal(sim_kernel_run(k, 100), 2);
  assert_int_equal(sim_now_ns(k), 100);
  /* A stop outside a run does nothing. */
  sim_kernel_stop(k);
  sim_event_schedule(k, 150, ev_record, tr, 4);
  assert_int_equal(sim_kernel_run(k, 200), 1);
  assert_int_equal(tr->n, 4);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* A hold model: each event schedules its successor a pseudo-random delay later. */
typedef struct hold {
  uint64_t s;      /* splitmix state */
  uint64_t left;   /* events still to schedule */
  int64_t last_ns; /* time of the previous event, for the order check */
  bool in_order;   /* every event ran at or after its predecessor */
} hold;

static void ev_hold(sim_kernel *k, void *obj, uint64_t arg) {
  hold *h = obj;
  if (sim_now_ns(k) < h->last_ns) h->in_order = false;
  h->last_ns = sim_now_ns(k);
  if (h->left == 0) return;
  h->left--;
  sim_event_schedule_in(k, (int64_t)(splitmix(&h->s) % 1000), ev_hold, h, arg);
}

static void test_sim_event_pool_stays_bounded(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  hold h = {7, 200000, 0, true};
  for (uint64_t i = 0; i < 100; i++)
    sim_event_schedule(k, (int64_t)i, ev_hold, &h, i);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 200100);
  assert_true(h.in_order);
  /* Memory follows the 100 pending events, not the 200100 run. */
  assert_true(sim_kernel_pool_capacity(k) <= 128);
  assert_int_equal(sim_kernel_n_pending(k), 0);
  sim_kernel_destroy(k);
}

static void test_sim_event_destroy_runs_no_pending_action_and_takes_null(void **state) {
  (void)state;
  sim_kernel_destroy(NULL);
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(1);
  for (int i = 0; i < 1000; i++)
    sim_event_schedule(k, i, ev_record, tr, 0);
  sim_kernel_destroy(k); /* no action runs, nothing leaks (valgrind, ASan) */
  assert_int_equal(tr->n, 0);
  trace_destroy(tr);
}

/* Ties straddling the 32-bit seq renumbering keep their FIFO order, and old handles work. */
static void test_sim_event_seq_renumbering_keeps_order(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(64);
  sim_event_handle h[40];
  sim__kernel_set_next_seq(k, ((uint64_t)1 << 32) - 20);
  for (uint64_t i = 0; i < 40; i++)
    h[i] = sim_event_schedule(k, i % 2 == 0 ? 7 : 3, ev_record, tr, i);
  assert_true(sim_event_cancel(k, h[0]));
  assert_true(sim_event_cancel(k, h[39]));
  assert_true(sim_event_is_pending(k, h[21]));
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 38);
  /* Odd args at time 3 first, then even ones at 7, each group in schedule order. */
  size_t j = 0;
  for (uint64_t i = 1; i < 39; i += 2)
    assert_int_equal(tr->arg[j++], i);
  for (uint64_t i = 2; i < 40; i += 2)
    assert_int_equal(tr->arg[j++], i);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* }================================================================== */

/* {==================================================================
 * Randomized: determinism and a reference model
 * =================================================================== */

#define MAX_HANDLES 256

/* A model whose actions draw from their own generator to schedule children and cancel
 * earlier events, so the run depends on the dispatch order being reproduced exactly. */
typedef struct chaos {
  uint64_t s;
  trace *tr;
  sim_event_handle handles[MAX_HANDLES];
  uint64_t next_id;
  bool lanes; /* schedule the repeated delays through FIFO lanes */
} chaos;

static void ev_chaos(sim_kernel *k, void *obj, uint64_t arg) {
  chaos *c = obj;
  trace_add(c->tr, sim_now_ns(k), arg);
  if (c->tr->n + sim_kernel_n_pending(k) + 4 >= c->tr->cap) return;
  uint64_t r = splitmix(&c->s);
  int children = (int)(r % 4); /* 1.5 on average: the run grows until the trace fills */
  for (int i = 0; i < children; i++) {
    uint64_t d = splitmix(&c->s);
    /* Half the delays come from a small set (more kinds than lanes), half are random. */
    static const int64_t repeated[] = {0, 5, 17, 40, 41, 42, 43, 44, 45, 46, 63};
    int64_t delay = (d >> 40) % 2 ? repeated[(d >> 20) % 11] : (int64_t)(d % 64);
    c->handles[c->next_id % MAX_HANDLES] =
        c->lanes && (d >> 40) % 2 ? sim_event_schedule_lane(k, delay, ev_chaos, c, c->next_id)
                                  : sim_event_schedule_in(k, delay, ev_chaos, c, c->next_id);
    c->next_id++;
  }
  if ((r >> 8) % 4 == 0) sim_event_cancel(k, c->handles[(r >> 16) % MAX_HANDLES]);
}

static void chaos_run(uint64_t seed, trace *tr, bool lanes) {
  sim_kernel *k = sim_kernel_create(4, NULL);
  chaos c;
  memset(&c, 0, sizeof c);
  c.s = seed;
  c.tr = tr;
  c.lanes = lanes;
  for (int i = 0; i < 50; i++) {
    c.handles[c.next_id] = sim_event_schedule(k, i % 7, ev_chaos, &c, c.next_id);
    c.next_id++;
  }
  sim_kernel_run(k, INT64_MAX);
  sim_kernel_destroy(k);
}

static void test_sim_event_same_inputs_same_trace(void **state) {
  (void)state;
  trace *a = trace_create(50000), *b = trace_create(50000), *c = trace_create(50000);
  chaos_run(42, a, false);
  chaos_run(42, b, false);
  chaos_run(43, c, false);
  assert_true(a->n > 10000);
  assert_int_equal(a->n, b->n);
  assert_memory_equal(a->t_ns, b->t_ns, a->n * sizeof *a->t_ns);
  assert_memory_equal(a->arg, b->arg, a->n * sizeof *a->arg);
  /* And the trace depends on the seed, so the comparison above means something. */
  assert_true(a->n != c->n || memcmp(a->arg, c->arg, a->n * sizeof *a->arg) != 0);
  trace_destroy(a);
  trace_destroy(b);
  trace_destroy(c);
}

/* FIFO lanes change the cost of repeated delays, never the order: the same random model run
 * with and without lanes (cancels included) gives the same trace. */
static void test_sim_event_lanes_keep_the_order(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    trace *a = trace_create(50000), *b = trace_create(50000);
    chaos_run(seed, a, false);
    chaos_run(seed, b, true);
    assert_true(a->n > 10000);
    assert_int_equal(a->n, b->n);
    assert_memory_equal(a->t_ns, b->t_ns, a->n * sizeof *a->t_ns);
    assert_memory_equal(a->arg, b->arg, a->n * sizeof *a->arg);
    trace_destroy(a);
    trace_destroy(b);
  }
}

/* A cancelled lane event never runs, its handle goes stale, and pending counts drop. */
static void test_sim_event_cancelled_lane_event_never_runs(void **state) {
  (void)state;
  sim_kernel *k = sim_kernel_create(0, NULL);
  trace *tr = trace_create(16);
  sim_event_handle h[4];
  for (int i = 0; i < 4; i++)
    h[i] = sim_event_schedule_lane(k, 100, ev_record, tr, (uint64_t)i);
  assert_int_equal(sim_kernel_n_pending(k), 4);
  assert_true(sim_event_cancel(k, h[0]));
  assert_false(sim_event_cancel(k, h[0]));
  assert_false(sim_event_is_pending(k, h[0]));
  assert_true(sim_event_cancel(k, h[2]));
  assert_int_equal(sim_kernel_n_pending(k), 2);
  assert_int_equal(sim_kernel_next_ns(k), 100);
  sim_event_schedule(k, 100, ev_record, tr, 9); /* a heap event at the same time, later seq */
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 3);
  assert_int_equal(tr->n, 3);
  assert_int_equal(tr->arg[0], 1);
  assert_int_equal(tr->arg[1], 3);
  assert_int_equal(tr->arg[2], 9);
  assert_int_equal(sim_kernel_n_pending(k), 0);
  assert_int_equal(sim_kernel_next_ns(k), INT64_MAX);
  trace_destroy(tr);
  sim_kernel_destroy(k);
}

/* The reference: an unsorted array of pending events, popped by linear search. */
typedef struct ref_ev {
  int64_t t_ns;
  uint64_t seq, id;
  sim_event_handle h;
} ref_ev;

/* Index of the smallest (time, seq) in r[0..n), or n when empty. */
static size_t ref_min(const ref_ev *r, size_t n) {
  size_t best = n;
  for (size_t i = 0; i < n; i++)
    if (best == n || r[i].t_ns < r[best].t_ns ||
        (r[i].t_ns == r[best].t_ns && r[i].seq < r[best].seq))
      best = i;
  return best;
}

static void test_sim_event_matches_sorted_reference(void **state) {
  (void)state;
  enum { N_OPS = 40000, MAX_PENDING = 4096 };
  sim_kernel *k = sim_kernel_create(2, NULL);
  trace *tr = trace_create(N_OPS);
  ref_ev *ref = malloc(MAX_PENDING * sizeof *ref);
  sim_event_handle *old = calloc(N_OPS, sizeof *old); /* every handle ever made */
  assert_non_null(ref);
  assert_non_null(old);
  size_t n_ref = 0, n_old = 0, n_ran = 0;
  int resets = 0;
  uint64_t s = 99, seq = 0;
  for (int op = 0; op < N_OPS; op++) {
    uint64_t r = splitmix(&s);
    int kind = (int)(r % 10);
    if (kind < 5 && n_ref < MAX_PENDING) {
      /* Small offsets make ties common; now and then a time at the very end. */
      int64_t now = sim_now_ns(k), off = (int64_t)((r >> 8) % 40);
      int64_t at = now > INT64_MAX - 1 - off ? INT64_MAX - 1 : now + off;
      if ((r >> 20) % 50 == 0) at = INT64_MAX - 1 - (int64_t)((r >> 30) % 3);
      if (at < now) at = now;
      sim_event_handle h = sim_event_schedule(k, at, ev_record, tr, seq);
      assert_int_not_equal(h, SIM_EVENT_NONE);
      ref[n_ref++] = (ref_ev){at, seq, seq, h};
      old[n_old++] = h;
      seq++;
    } else if (kind < 7 && n_old > 0) {
      /* Cancel any handle ever made: pending, ran or cancelled. */
      sim_event_handle h = old[(r >> 8) % n_old];
      size_t i = 0;
      while (i < n_ref && ref[i].h != h)
        i++;
      bool pending = i < n_ref;
      assert_int_equal(sim_event_is_pending(k, h), pending);
      assert_int_equal(sim_event_cancel(k, h), pending);
      if (pending) ref[i] = ref[--n_ref];
    } else {
      /* Run everything at the earliest time (stopping short of INT64_MAX - 1 now and then). */
      size_t m = ref_min(ref, n_ref);
      int64_t next = m < n_ref ? ref[m].t_ns : INT64_MAX;
      assert_int_equal(sim_kernel_next_ns(k), next);
      if (next >= INT64_MAX - 3 && (r >> 8) % 8 != 0) continue;
      uint64_t ran = sim_kernel_run(k, next);
      while ((m = ref_min(ref, n_ref)) < n_ref && ref[m].t_ns <= next) {
        assert_true(n_ran < tr->n);
        assert_int_equal(tr->arg[n_ran], ref[m].id);
        assert_int_equal(tr->t_ns[n_ran], ref[m].t_ns);
        n_ran++;
        ran--;
        ref[m] = ref[--n_ref];
      }
      assert_int_equal(ran, 0);
      assert_int_equal(n_ran, tr->n);
      /* Once at the end of time, start a fresh kernel so the test keeps exercising ties. */
      if (sim_now_ns(k) >= INT64_MAX - 64 && n_ref == 0) {
        sim_kernel_destroy(k);
        k = sim_kernel_create(2, NULL);
        n_old = 0;
        resets++;
      }
    }
    assert_int_equal(sim_kernel_n_pending(k), n_ref);
  }
  /* The walk compared many events and reached the end of time at least once. */
  assert_true(n_ran > 10000);
  assert_true(resets > 0);
  sim_kernel_destroy(k);
  free(old);
  free(ref);
  trace_destroy(tr);
}

/* }================================================================== */

/* {==================================================================
 * Randomized: the kernel against a model, step by step
 * =================================================================== */

/* A reference for every promise of the event set, checked after each operation: a list of
 * the pending events, each with its time and the order it was scheduled in; the next to run
 * is the smallest (time, order). The kernel is driven from outside (schedules of the three
 * kinds, cancels, runs to a random until_ns) and from inside its own actions (several
 * schedules or none, cancels of pending events, of events that ran, of the running event's
 * own handle, sim_kernel_stop, and the seq counter moved to its renumbering point). Every
 * dispatch must be the model's next event, and sim_kernel_n_pending and sim_kernel_next_ns
 * must agree with the model whenever they are read, also while the running event's heap entry
 * waits at the root for the action's first schedule (the "stale top" of sim_event.c). */

enum { MODEL_MAX_IDS = 24000 };
enum { EV_PENDING = 1, EV_RAN, EV_CANCELLED };

typedef struct model {
  sim_kernel *k;
  uint64_t s;                    /* splitmix state */
  size_t n_ids;                  /* events scheduled, ids 0 .. n_ids - 1 */
  int64_t t_ns[MODEL_MAX_IDS];   /* per id: its time */
  uint64_t order[MODEL_MAX_IDS]; /* per id: its place in the schedule order */
  sim_event_handle h[MODEL_MAX_IDS];
  unsigned char state[MODEL_MAX_IDS];
  size_t pend[MODEL_MAX_IDS]; /* the ids pending, in no order */
  size_t n_pend;
  uint64_t next_order;
  uint64_t kseq; /* the kernel's next seq: +1 a schedule, n pending once renumbered (sim_event.c) */
  int64_t until_ns;    /* of the run under way */
  uint64_t ran_in_run; /* actions run by it */
  size_t running;      /* id of the action running, MODEL_MAX_IDS outside one */
  bool stopped;        /* an action of this run called sim_kernel_stop */
  int64_t last_ns;     /* time of the last action run */
  /* What the walk did, so the test can insist that it covered each case. */
  uint64_t n_ran, n_self_cancels, n_ran_cancels, n_pending_cancels, n_inside_cancels, n_lane,
      n_ties, n_renumbers, n_renumbers_inside, n_stops, n_empty_actions, n_multi_actions;
} model;

/* Position in pend of the next event to run (smallest time, then order), n_pend if none. */
static size_t model_next(const model *m) {
  size_t best = m->n_pend;
  for (size_t i = 0; i < m->n_pend; i++) {
    size_t a = m->pend[i], b = best < m->n_pend ? m->pend[best] : 0;
    if (best == m->n_pend || m->t_ns[a] < m->t_ns[b] ||
        (m->t_ns[a] == m->t_ns[b] && m->order[a] < m->order[b]))
      best = i;
  }
  return best;
}

static void model_check(const model *m) {
  assert_int_equal(sim_kernel_n_pending(m->k), m->n_pend);
  size_t j = model_next(m);
  assert_int_equal(sim_kernel_next_ns(m->k), j < m->n_pend ? m->t_ns[m->pend[j]] : INT64_MAX);
}

static void model_drop(model *m, size_t id, unsigned char why) {
  for (size_t i = 0; i < m->n_pend; i++)
    if (m->pend[i] == id) {
      m->pend[i] = m->pend[--m->n_pend];
      m->state[id] = why;
      return;
    }
  fail_msg("id %zu is not pending in the model", id);
}

static void ev_model(sim_kernel *k, void *obj, uint64_t arg);

/* Schedules one event by one of the three calls; delays repeat often (ties, and more kinds
 * than there are lanes, so some lane schedules fall back to the heap). */
static void model_schedule(model *m) {
  if (m->n_ids >= MODEL_MAX_IDS) return;
  static const int64_t delays[] = {0, 0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89};
  uint64_t r = splitmix(&m->s);
  int64_t now = sim_now_ns(m->k), t;
  size_t id = m->n_ids;
  sim_event_handle h;
  switch (r % 3) {
    case 0:
      t = now + (int64_t)((r >> 8) % 40);
      h = sim_event_schedule(m->k, t, ev_model, m, id);
      break;
    case 1:
      t = now + delays[(r >> 8) % 12];
      h = sim_event_schedule_in(m->k, t - now, ev_model, m, id);
      break;
    default:
      t = now + delays[(r >> 8) % 12];
      h = sim_event_schedule_lane(m->k, t - now, ev_model, m, id);
      m->n_lane++;
      break;
  }
  assert_int_not_equal(h, SIM_EVENT_NONE);
  /* At 2^32 the kernel renumbers the pending events 0 .. n-1 before taking this one. */
  if (m->kseq == (uint64_t)1 << 32) {
    m->kseq = m->n_pend;
    m->n_renumbers++;
    if (m->running < MODEL_MAX_IDS) m->n_renumbers_inside++;
  }
  m->kseq++;
  for (size_t i = 0; i < m->n_pend; i++)
    if (m->t_ns[m->pend[i]] == t) {
      m->n_ties++;
      break;
    }
  m->t_ns[id] = t;
  m->order[id] = m->next_order++;
  m->h[id] = h;
  m->state[id] = EV_PENDING;
  m->pend[m->n_pend++] = id;
  m->n_ids++;
}

/* Cancels an event chosen among all ever scheduled, half the time among the latest ones
 * (recently run or just scheduled, where slot reuse happens), now and then the running one. */
static void model_cancel(model *m) {
  if (m->n_ids == 0) return;
  uint64_t r = splitmix(&m->s);
  size_t id;
  if (m->running < MODEL_MAX_IDS && r % 8 == 0)
    id = m->running;
  else if ((r >> 4) % 2 == 0)
    id = m->n_ids - 1 - (size_t)((r >> 8) % (m->n_ids < 8 ? m->n_ids : 8));
  else
    id = (size_t)((r >> 8) % m->n_ids);
  bool pending = m->state[id] == EV_PENDING;
  assert_int_equal(sim_event_is_pending(m->k, m->h[id]), pending);
  assert_int_equal(sim_event_cancel(m->k, m->h[id]), pending);
  assert_false(sim_event_cancel(m->k, m->h[id]));
  assert_false(sim_event_is_pending(m->k, m->h[id]));
  if (pending) {
    model_drop(m, id, EV_CANCELLED);
    m->n_pending_cancels++;
  } else if (id == m->running) {
    m->n_self_cancels++;
  } else {
    m->n_ran_cancels++;
  }
  if (m->running < MODEL_MAX_IDS) m->n_inside_cancels++;
}

/* Moves the kernel's seq counter forward to next_seq, if it is not already past it. */
static void model_set_seq(model *m, uint64_t next_seq) {
  if (next_seq <= m->kseq) return;
  sim__kernel_set_next_seq(m->k, next_seq);
  m->kseq = next_seq;
}

static void ev_model(sim_kernel *k, void *obj, uint64_t arg) {
  model *m = obj;
  size_t id = (size_t)arg, j = model_next(m);
  /* The model's next event, at its time, within the run's bound. */
  assert_true(j < m->n_pend);
  assert_int_equal(m->pend[j], id);
  assert_int_equal(sim_now_ns(k), m->t_ns[id]);
  assert_true(m->t_ns[id] <= m->until_ns);
  assert_true(m->running == MODEL_MAX_IDS); /* not reentered */
  model_drop(m, id, EV_RAN);
  m->running = id;
  m->ran_in_run++;
  m->n_ran++;
  m->last_ns = sim_now_ns(k);
  assert_false(sim_event_is_pending(k, m->h[id]));
  model_check(m);
  uint64_t r = splitmix(&m->s);
  int n_ops = (int)(r % 6); /* 0 .. 5 operations; 0: the action schedules nothing */
  int n_sched = 0;
  if ((r >> 8) % 64 == 0) {
    /* The next schedule renumbers the seqs, whatever the state of the heap's top. */
    model_set_seq(m, (uint64_t)1 << 32);
  }
  for (int i = 0; i < n_ops; i++) {
    uint64_t op = splitmix(&m->s) % 10;
    if (op < 6) {
      model_schedule(m);
      n_sched++;
    } else {
      model_cancel(m);
    }
    model_check(m);
  }
  if (n_sched == 0) m->n_empty_actions++;
  if (n_sched > 1) m->n_multi_actions++;
  if ((r >> 16) % 40 == 0) {
    sim_kernel_stop(k);
    m->stopped = true;
    m->n_stops++;
    model_check(m);
  }
  m->running = MODEL_MAX_IDS;
}

/* One walk: start_seq moves the seq counter close to its renumbering point first. */
static void model_walk(model *m, uint64_t seed, size_t capacity, uint64_t start_seq) {
  memset(m, 0, sizeof *m);
  m->s = seed;
  m->running = MODEL_MAX_IDS;
  m->k = sim_kernel_create(capacity, NULL);
  assert_non_null(m->k);
  model_set_seq(m, start_seq);
  while (m->n_ids < MODEL_MAX_IDS) {
    uint64_t r = splitmix(&m->s);
    int kind = (int)(r % 10);
    if (kind < 4) {
      model_schedule(m);
    } else if (kind < 5) {
      model_cancel(m);
    } else if (kind < 6) {
      model_set_seq(m, ((uint64_t)1 << 32) - (r >> 8) % 4);
    } else {
      /* Run to a bound a little ahead (now and then behind the clock, which never moves back). */
      int64_t now = sim_now_ns(m->k);
      int64_t until = (r >> 8) % 16 == 0 ? now - 1 : now + (int64_t)((r >> 12) % 60);
      m->until_ns = until;
      m->ran_in_run = 0;
      m->stopped = false;
      uint64_t ran = sim_kernel_run(m->k, until);
      assert_int_equal(ran, m->ran_in_run);
      size_t j = model_next(m);
      if (m->stopped) {
        assert_int_equal(sim_now_ns(m->k), m->last_ns);
      } else {
        /* Everything due ran; the clock went to until_ns unless that is behind it. */
        assert_true(j == m->n_pend || m->t_ns[m->pend[j]] > until);
        int64_t after = ran > 0 ? m->last_ns : now;
        assert_int_equal(sim_now_ns(m->k), until > after ? until : after);
      }
    }
    model_check(m);
  }
  /* Drain: each remaining event runs in the model's order. */
  m->until_ns = INT64_MAX;
  while (m->n_pend > 0) {
    m->ran_in_run = 0;
    m->stopped = false;
    uint64_t ran = sim_kernel_run(m->k, INT64_MAX);
    assert_int_equal(ran, m->ran_in_run);
    model_check(m);
  }
  sim_kernel_destroy(m->k);
}

static void test_sim_event_matches_a_model_step_by_step(void **state) {
  (void)state;
  model *m = malloc(sizeof *m);
  assert_non_null(m);
  uint64_t ran = 0, self = 0, gone = 0, pend = 0, inside = 0, lane = 0, ties = 0, ren = 0,
           ren_in = 0, stops = 0, empty = 0, multi = 0;
  for (uint64_t seed = 1; seed <= 6; seed++) {
    model_walk(m, seed, seed % 2 == 0 ? 1 : 0, seed % 3 == 0 ? ((uint64_t)1 << 32) - 100 : 0);
    ran += m->n_ran, self += m->n_self_cancels, gone += m->n_ran_cancels;
    pend += m->n_pending_cancels, inside += m->n_inside_cancels, lane += m->n_lane;
    ties += m->n_ties, ren += m->n_renumbers, ren_in += m->n_renumbers_inside, stops += m->n_stops;
    empty += m->n_empty_actions, multi += m->n_multi_actions;
  }
  /* The walks reached every case the model is there to check. */
  assert_true(ran > 50000);
  assert_true(self > 1000 && gone > 1000 && pend > 1000 && inside > 1000);
  assert_true(lane > 10000 && ties > 10000 && stops > 100);
  assert_true(ren > 100 && ren_in > 100); /* renumberings, and those inside an action */
  assert_true(empty > 1000 && multi > 1000);
  free(m);
}

/* }================================================================== */

/* {==================================================================
 * Out of memory
 * =================================================================== */

/* Creation fails cleanly at each of its allocations, then succeeds. */
static void test_sim_event_create_fails_cleanly_at_each_allocation(void **state) {
  (void)state;
  test_oom c;
  long n = 0;
  for (;; n++) {
    retry_allocator a = test_oom_allocator(&c, n);
    sim_kernel *k = sim_kernel_create(0, &a);
    if (k != NULL) {
      assert_ptr_equal(sim_kernel_allocator(k)->ctx, &c);
      sim_kernel_destroy(k);
      assert_int_equal(c.live, 0);
      break;
    }
    assert_int_equal(c.live, 0);
  }
  assert_true(n >= 3); /* the kernel, its slots, its heap */
}

/* A growth that fails reports SIM_EVENT_NONE and leaves the kernel working: the events
 * already pending still run in order, and a later schedule may grow it after all. */
static void test_sim_event_failed_growth_refuses_the_event_and_keeps_working(void **state) {
  (void)state;
  for (long fail = 3; fail < 8; fail++) {
    test_oom c;
    retry_allocator a = test_oom_allocator(&c, fail);
    sim_kernel *k = sim_kernel_create(2, &a);
    assert_non_null(k);
    trace *tr = trace_create(64);
    int failed = 0;
    uint64_t scheduled = 0;
    for (uint64_t i = 0; i < 16; i++) {
      if (sim_event_schedule(k, (int64_t)(100 - i), ev_record, tr, i) == SIM_EVENT_NONE)
        failed++;
      else
        scheduled++;
    }
    assert_true(failed > 0 || c.n_calls <= fail);
    assert_int_equal(sim_kernel_n_pending(k), scheduled);
    assert_int_equal(sim_kernel_run(k, INT64_MAX), scheduled);
    for (size_t i = 1; i < tr->n; i++)
      assert_true(tr->t_ns[i - 1] <= tr->t_ns[i]);
    sim_kernel_destroy(k);
    assert_int_equal(c.live, 0);
    trace_destroy(tr);
  }
}

/* A lane that cannot get its ring refuses the event, which is not scheduled at all. */
static void test_sim_event_lane_without_its_ring_refuses_the_event(void **state) {
  (void)state;
  test_oom c;
  retry_allocator a = test_oom_allocator(&c, 3); /* the first allocation after create */
  sim_kernel *k = sim_kernel_create(0, &a);
  assert_non_null(k);
  trace *tr = trace_create(8);
  assert_true(sim_event_schedule_lane(k, 10, ev_record, tr, 1) == SIM_EVENT_NONE);
  assert_int_equal(sim_kernel_n_pending(k), 0);
  assert_true(sim_event_schedule_lane(k, 10, ev_record, tr, 2) != SIM_EVENT_NONE);
  assert_int_equal(sim_kernel_run(k, INT64_MAX), 1);
  assert_int_equal(tr->n, 1);
  assert_int_equal(tr->arg[0], 2);
  sim_kernel_destroy(k);
  assert_int_equal(c.live, 0);
  trace_destroy(tr);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_event_runs_in_time_order),
      cmocka_unit_test(test_sim_event_equal_times_run_fifo),
      cmocka_unit_test(test_sim_event_zero_delay_runs_at_now),
      cmocka_unit_test(test_sim_event_times_near_int64_max_clamp_and_keep_order),
      cmocka_unit_test(test_sim_event_schedule_now_from_action_runs_after_pending),
      cmocka_unit_test(test_sim_event_cancel_works_only_on_pending_events),
      cmocka_unit_test(test_sim_event_stale_handle_after_slot_reuse),
      cmocka_unit_test(test_sim_event_cancel_from_inside_action),
      cmocka_unit_test(test_sim_event_cancel_self_and_reuse_in_action),
      cmocka_unit_test(test_sim_event_run_until_includes_until_and_never_moves_back),
      cmocka_unit_test(test_sim_event_stop_returns_after_current_action),
      cmocka_unit_test(test_sim_event_pool_stays_bounded),
      cmocka_unit_test(test_sim_event_destroy_runs_no_pending_action_and_takes_null),
      cmocka_unit_test(test_sim_event_seq_renumbering_keeps_order),
      cmocka_unit_test(test_sim_event_same_inputs_same_trace),
      cmocka_unit_test(test_sim_event_matches_sorted_reference),
      cmocka_unit_test(test_sim_event_matches_a_model_step_by_step),
      cmocka_unit_test(test_sim_event_lanes_keep_the_order),
      cmocka_unit_test(test_sim_event_cancelled_lane_event_never_runs),
      cmocka_unit_test(test_sim_event_create_fails_cleanly_at_each_allocation),
      cmocka_unit_test(test_sim_event_failed_growth_refuses_the_event_and_keeps_working),
      cmocka_unit_test(test_sim_event_lane_without_its_ring_refuses_the_event),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
