/*
 * bench_mm1_bare.c: the floor a general kernel can approach on the simplest workload, an M/M/1
 * queue, written as bare C: a 4-ary heap of (time, sequence, kind) events, exponential draws
 * inlined (-mean * log(u) from a splitmix64 stream), a FIFO ring of arrival times. Two events
 * per customer (arrival, departure), time in int64 ns as in retrysim.
 *
 * It measures its own answer too: the mean sojourn time against 1 / (mu - lambda), so a
 * broken loop cannot pass for a fast one (bench/bench.sh fails the run when it is off by more
 * than 5 %).
 *
 * Usage: bench_mm1_bare [CUSTOMERS] [RHO]   (defaults 10,000,000 and 0.9; mean service 1 ms)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct ev {
  int64_t t;    /* due time, ns */
  uint64_t seq; /* tie breaker: the order of scheduling */
  int kind;     /* 0 arrival, 1 departure */
} ev;

typedef struct heap {
  ev *a;
  size_t n, cap;
} heap;

static int before(const ev *x, const ev *y) {
  return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void heap_push(heap *h, ev e) {
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 64;
    h->a = realloc(h->a, h->cap * sizeof *h->a);
    if (h->a == NULL) abort();
  }
  size_t i = h->n++;
  while (i > 0) {
    size_t p = (i - 1) / 4;
    if (!before(&e, &h->a[p])) break;
    h->a[i] = h->a[p];
    i = p;
  }
  h->a[i] = e;
}

static ev heap_pop(heap *h) {
  ev top = h->a[0];
  ev last = h->a[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 4 * i + 1;
    if (c >= h->n) break;
    size_t best = c;
    size_t end = c + 4 < h->n ? c + 4 : h->n;
    for (size_t j = c + 1; j < end; j++)
      if (before(&h->a[j], &h->a[best])) best = j;
    if (!before(&h->a[best], &last)) break;
    h->a[i] = h->a[best];
    i = best;
  }
  if (h->n > 0) h->a[i] = last;
  return top;
}

static uint64_t rng_state = UINT64_C(0x2545F4914F6CDD1D);

static inline uint64_t splitmix(void) {
  uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* An exponential delay of the given mean, in whole ns: u in (0, 1]. */
static inline int64_t expo_ns(double mean_ns) {
  double u = ((double)(splitmix() >> 11) + 1.0) * 0x1.0p-53;
  return (int64_t)(-mean_ns * log(u) + 0.5);
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  long long customers = argc > 1 ? atoll(argv[1]) : 10000000LL;
  double rho = argc > 2 ? atof(argv[2]) : 0.9;
  if (customers < 1 || !(rho > 0.0 && rho < 1.0)) {
    fprintf(stderr, "usage: bench_mm1_bare [CUSTOMERS >= 1] [RHO in (0, 1)]\n");
    return 2;
  }
  const double service_ns = 1e6;
  const double interarrival_ns = service_ns / rho;
  heap h = {0};
  /* FIFO ring of the arrival times of customers in the system (grows when full). */
  size_t qcap = 1024, qhead = 0, qlen = 0;
  int64_t *q = malloc(qcap * sizeof *q);
  if (q == NULL) return 3;
  uint64_t seq = 0;
  long long arrived = 0, departed = 0;
  double sojourn_sum = 0.0;
  double t0 = cpu_s();
  heap_push(&h, (ev){expo_ns(interarrival_ns), seq++, 0});
  while (h.n > 0) {
    ev e = heap_pop(&h);
    if (e.kind == 0) {
      arrived++;
      if (qlen == qcap) {
        int64_t *nq = malloc(2 * qcap * sizeof *nq);
        if (nq == NULL) return 3;
        for (size_t i = 0; i < qlen; i++)
          nq[i] = q[(qhead + i) % qcap];
        free(q);
        q = nq;
        qhead = 0;
        qcap *= 2;
      }
      q[(qhead + qlen++) % qcap] = e.t;
      if (qlen == 1) heap_push(&h, (ev){e.t + expo_ns(service_ns), seq++, 1});
      if (arrived < customers) heap_push(&h, (ev){e.t + expo_ns(interarrival_ns), seq++, 0});
    } else {
      sojourn_sum += (double)(e.t - q[qhead]);
      qhead = (qhead + 1) % qcap;
      qlen--;
      departed++;
      if (qlen > 0) heap_push(&h, (ev){e.t + expo_ns(service_ns), seq++, 1});
    }
  }
  double secs = cpu_s() - t0;
  double mean_ms = sojourn_sum / (double)departed / 1e6;
  double theory_ms = service_ns / (1.0 - rho) / 1e6;
  printf("bare C M/M/1, rho %.2f, %lld customers\n", rho, customers);
  printf("  cpu               %.3f s\n", secs);
  printf("  ns per customer   %.1f\n", secs * 1e9 / (double)customers);
  printf("  mean sojourn      %.3f ms (theory %.3f ms)\n", mean_ms, theory_ms);
  printf("result customers=%lld cpu_s=%.6f ns_per_customer=%.3f mean_ms=%.6f theory_ms=%.6f\n",
         customers, secs, secs * 1e9 / (double)customers, mean_ms, theory_ms);
  free(q);
  free(h.a);
  return departed == customers ? 0 : 3;
}
