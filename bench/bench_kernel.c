/*
 * bench_kernel.c: the cost of the event set alone, in events per second of CPU time.
 *
 * A hold model: N_PENDING entities each have one event pending; each action schedules the
 * entity's next event at now plus an exponential delay, so the set stays at N_PENDING. The
 * "timeout" variant also cancels the entity's previous timeout and schedules a new one, as an
 * RPC with a deadline does: twice as many events pending, three operations per event run.
 * Usage: bench_kernel [N_EVENTS] [N_PENDING]   (defaults 10,000,000 and 10,000)
 */
#include "sim/sim_event.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* Delays come from a precomputed table so the figures measure the kernel, not log(). */
#define N_DELAYS 65536
#define MEAN_DELAY_NS 1e6

typedef struct bench {
  int64_t delay_ns[N_DELAYS]; /* exponential delays, mean MEAN_DELAY_NS */
  uint32_t next_delay;        /* index of the next delay to use */
  uint64_t done;              /* hold events run */
  uint64_t target;            /* stop after this many */
  sim_event_handle *timeout;  /* per entity: its pending timeout (timeout variant) */
  uint64_t n_timeouts;        /* timeouts that fired */
} bench;

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t next_delay(bench *b) { return b->delay_ns[b->next_delay++ & (N_DELAYS - 1)]; }

static void on_hold(sim_kernel *k, void *obj, uint64_t arg) {
  bench *b = obj;
  if (++b->done >= b->target) sim_kernel_stop(k);
  sim_event_schedule_in(k, next_delay(b), on_hold, b, arg);
}

static void on_timeout(sim_kernel *k, void *obj, uint64_t arg) {
  (void)k;
  bench *b = obj;
  b->timeout[arg] = SIM_EVENT_NONE;
  b->n_timeouts++;
}

/* A hold event that also replaces its entity's timeout (10 mean delays away: rarely fires). */
static void on_hold_timeout(sim_kernel *k, void *obj, uint64_t arg) {
  bench *b = obj;
  if (++b->done >= b->target) sim_kernel_stop(k);
  sim_event_cancel(k, b->timeout[arg]);
  b->timeout[arg] = sim_event_schedule_in(k, (int64_t)(10 * MEAN_DELAY_NS), on_timeout, b, arg);
  sim_event_schedule_in(k, next_delay(b), on_hold_timeout, b, arg);
}

/* Runs one variant; returns CPU ns per hold event. */
static double run_variant(bench *b, uint64_t n_events, uint64_t n_pending, bool timeouts) {
  sim_kernel *k = sim_kernel_create(0, NULL);
  if (k == NULL) return -1;
  b->next_delay = 0;
  b->done = 0;
  b->n_timeouts = 0;
  sim_event_fn fn = timeouts ? on_hold_timeout : on_hold;
  for (uint64_t i = 0; i < n_pending; i++) {
    b->timeout[i] = SIM_EVENT_NONE;
    sim_event_schedule_in(k, next_delay(b), fn, b, i);
  }
  /* Warm up (grows the pool to its final size, fills the caches), then measure. */
  b->target = n_pending;
  sim_kernel_run(k, INT64_MAX);
  b->done = 0;
  b->target = n_events;
  double t0 = cpu_seconds();
  uint64_t ran = sim_kernel_run(k, INT64_MAX);
  double dt = cpu_seconds() - t0;
  printf("%-12s entities %8" PRIu64 "  pending %8zu  events %10" PRIu64
         "  %6.2f Mevents/s  %6.1f ns/event  pool %zu  timeouts fired %" PRIu64 "\n",
         timeouts ? "hold+timeout" : "hold", n_pending, sim_kernel_n_pending(k), ran,
         (double)ran / dt * 1e-6, dt / (double)ran * 1e9, sim_kernel_pool_capacity(k),
         b->n_timeouts);
  sim_kernel_destroy(k);
  return dt / (double)ran * 1e9;
}

int main(int argc, char **argv) {
  long long n_events = argc > 1 ? strtoll(argv[1], NULL, 10) : 10000000;
  long long n_pending = argc > 2 ? strtoll(argv[2], NULL, 10) : 10000;
  if (n_events <= 0 || n_pending <= 0) {
    fprintf(stderr, "usage: bench_kernel [N_EVENTS > 0] [N_PENDING > 0]\n");
    return 2;
  }
  bench *b = malloc(sizeof *b);
  if (b == NULL) return 1;
  b->timeout = malloc((size_t)n_pending * sizeof *b->timeout);
  if (b->timeout == NULL) {
    free(b);
    return 1;
  }
  uint64_t s = 42;
  for (int i = 0; i < N_DELAYS; i++) {
    /* 53 random bits in (0, 1]: log never sees 0. */
    double u = ((double)(splitmix(&s) >> 11) + 1.0) * 0x1.0p-53;
    b->delay_ns[i] = (int64_t)(-log(u) * MEAN_DELAY_NS);
  }
  run_variant(b, (uint64_t)n_events, (uint64_t)n_pending, false);
  run_variant(b, (uint64_t)n_events, (uint64_t)n_pending, true);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("peak RSS %ld KiB\n", ru.ru_maxrss);
  free(b->timeout);
  free(b);
  return 0;
}
