/*
 * sim_event.h: the discrete-event kernel: a virtual clock and the set of pending events.
 * Owns every event; models hold only handles. Invariant: events run in (time_ns, seq) order,
 * where seq is a kernel-wide insertion counter, so events at the same time run in the order
 * they were scheduled (FIFO) and a run is deterministic.
 */
#ifndef SIM_EVENT_H
#define SIM_EVENT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "retry/retry.h"

typedef struct sim_kernel sim_kernel;

/* An event's action: obj and arg are what was given to sim_event_schedule. The kernel's clock
 * already reads the event's time when fn runs. fn may schedule and cancel events, including
 * at the current time: such an event runs in this same sim_kernel_run, after every event
 * already pending for that time (its seq is larger). */
typedef void (*sim_event_fn)(sim_kernel *k, void *obj, uint64_t arg);

/* A handle names one scheduled event. 0 is never a valid handle ("no event"). A handle stays
 * safe to cancel after its event ran or was cancelled: the generation it carries no longer
 * matches and the cancel is a no-op. */
typedef uint64_t sim_event_handle;
#define SIM_EVENT_NONE ((sim_event_handle)0)

/* Returns a new kernel at time 0 with room for initial_capacity pending events (it grows as
 * needed; 0 picks a default). alloc (copied; NULL: malloc/realloc/free) supplies every byte
 * the kernel ever holds: the kernel itself, the event pool and heap, and the FIFO lanes, at
 * creation and whenever they grow; a failed growth makes that schedule return
 * SIM_EVENT_NONE and leaves the kernel as it was. NULL when out of memory (nothing is
 * leaked). Returns a new object; free with sim_kernel_destroy. */
sim_kernel *sim_kernel_create(size_t initial_capacity, const retry_allocator *alloc);
/* Frees k and every pending event (their actions never run), through k's allocator. NULL is a
 * no-op. */
void sim_kernel_destroy(sim_kernel *k);

/* Returns k's allocator (the one given to sim_kernel_create, or libc's behind the same
 * interface: never NULL, nor any of its functions), for objects that live as long as k and
 * want their memory from the same place. Returns a borrowed pointer valid until k is
 * destroyed. */
const retry_allocator *sim_kernel_allocator(const sim_kernel *k);

/* The first member of struct sim_kernel (sim_event.c), so the clock can be read inline:
 * sim_now_ns runs several times per event. Not for models: read it through sim_now_ns. */
typedef struct sim__kernel_head {
  int64_t now_ns; /* the virtual clock */
} sim__kernel_head;

/* Returns the current virtual time in nanoseconds. */
static inline int64_t sim_now_ns(const sim_kernel *k) {
  /* A pointer to a struct, converted, points to its first member (C11 6.7.2.1p15). */
  return ((const sim__kernel_head *)(const void *)k)->now_ns;
}

/* Schedules fn(k, obj, arg) at at_ns, which must be >= sim_now_ns(k) (scheduling in the past is
 * a bug: assert). Returns the event's handle, or SIM_EVENT_NONE when out of memory. Never
 * allocates once the pool has grown to the largest number of pending events seen and the heap
 * to the largest number of them outside FIFO lanes (each grows on its own). at_ns may be
 * INT64_MAX, but sim_kernel_next_ns cannot tell such an event from none: prefer not to
 * schedule what should never run. */
sim_event_handle sim_event_schedule(sim_kernel *k, int64_t at_ns, sim_event_fn fn, void *obj,
                                    uint64_t arg);

/* Schedules at sim_now_ns(k) + delay_ns (delay_ns >= 0), clamping at INT64_MAX - 1. Inline:
 * models call it once or twice per event. */
static inline sim_event_handle sim_event_schedule_in(sim_kernel *k, int64_t delay_ns,
                                                     sim_event_fn fn, void *obj, uint64_t arg) {
  assert(k != NULL && delay_ns >= 0);
  int64_t now_ns = sim_now_ns(k);
  /* Compare before adding so the sum cannot overflow; now_ns may already be past INT64_MAX - 1. */
  int64_t at_ns = delay_ns >= INT64_MAX - 1 - now_ns ? INT64_MAX - 1 : now_ns + delay_ns;
  return sim_event_schedule(k, at_ns < now_ns ? now_ns : at_ns, fn, obj, arg);
}

/* Number of FIFO lanes a kernel keeps (sim_event_schedule_lane). */
#define SIM_N_LANES 8

/* Schedules at sim_now_ns(k) + delay_ns like sim_event_schedule_in, for delays that repeat
 * (a population's call deadline, a constant hop): events of one delay are kept in a FIFO lane
 * at O(1) cost instead of the heap, and cancelling one is O(1) (it is dropped when it would
 * have run). The order of events is exactly the same as with sim_event_schedule_in; when
 * every lane serves another delay the event goes to the heap. */
sim_event_handle sim_event_schedule_lane(sim_kernel *k, int64_t delay_ns, sim_event_fn fn,
                                         void *obj, uint64_t arg);

/* sim_event_cancel's work for a handle other than SIM_EVENT_NONE. Not for models: call
 * sim_event_cancel. */
bool sim__event_cancel(sim_kernel *k, sim_event_handle h);

/* Cancels a pending event: its action will not run. Returns true when it was pending, false
 * when h is SIM_EVENT_NONE, already ran or was already cancelled. Safe from inside an action,
 * including on the event that is running (returns false). Inline: models cancel
 * SIM_EVENT_NONE (a timer never armed) about as often as a real event. */
static inline bool sim_event_cancel(sim_kernel *k, sim_event_handle h) {
  assert(k != NULL);
  return h != SIM_EVENT_NONE && sim__event_cancel(k, h);
}

/* Returns whether h names an event that is still pending. */
bool sim_event_is_pending(const sim_kernel *k, sim_event_handle h);

/* Returns the time of the earliest pending event, or INT64_MAX when none is pending. */
int64_t sim_kernel_next_ns(const sim_kernel *k);

/* Runs events in (time, seq) order while the earliest one is at or before until_ns and
 * sim_kernel_stop has not been called. Afterwards the clock reads the time of the last event
 * run; when no event is left at or before until_ns, the clock advances to until_ns (unless
 * until_ns is INT64_MAX, or earlier than the clock: it never moves back). Returns the number
 * of events run. Not reentrant: calling it from an action is a bug (assert). */
uint64_t sim_kernel_run(sim_kernel *k, int64_t until_ns);

/* Makes the running sim_kernel_run return after the current action (the clock then stays at
 * that action's time). Outside sim_kernel_run it does nothing. */
void sim_kernel_stop(sim_kernel *k);

/* Counters. */
uint64_t sim_kernel_n_events(const sim_kernel *k);    /* actions run since create */
size_t sim_kernel_n_pending(const sim_kernel *k);     /* events scheduled and not yet run */
size_t sim_kernel_pool_capacity(const sim_kernel *k); /* event slots allocated (memory) */

/* Testing only: moves the insertion counter forward to next_seq (at most 2^32), so a test
 * reaches the point where the kernel renumbers the pending events' seqs without scheduling
 * 2^32 events first. The order of events is unchanged by it. */
void sim__kernel_set_next_seq(sim_kernel *k, uint64_t next_seq);

#endif /* SIM_EVENT_H */
