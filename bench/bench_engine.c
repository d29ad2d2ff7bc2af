/*
 * bench_engine.c: the cost of the engine's decisions, in decisions per second of CPU time.
 *
 * Drives N logical calls straight through retry_call_* (no simulator): each call fails twice
 * with UNAVAILABLE and succeeds on its third attempt, against a target that carries a gRPC
 * throttle, a Finagle budget and a consecutive breaker, so every hook of the decision path
 * runs. Each call makes 6 decisions (start, outcome, wake, outcome, wake, outcome).
 * Usage: bench_engine [N_CALLS]   (default 2,000,000)
 */
#include "retry/retry.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t splitmix(void *ctx) {
  uint64_t *s = ctx;
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

int main(int argc, char **argv) {
  long n_calls = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
  if (n_calls <= 0) {
    fprintf(stderr, "usage: bench_engine [N_CALLS > 0]\n");
    return 2;
  }
  retry_policy p;
  retry_policy_init(&p, RETRY_SPACE_GRPC);
  p.kind = RETRY_POLICY_RETRY;
  retry_policy_set_max_attempts(&p, 4, RETRY_GRPC_MAX_ATTEMPTS_LIMIT);
  p.backoff.initial_ns = 10 * RETRY_NS_PER_MS;
  p.backoff.max_ns = 50 * RETRY_NS_PER_MS;
  retry_status_set_add(&p.retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);

  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle.max_milli_tokens = 1000 * 1000;
  tc.throttle.token_ratio_milli = 2000; /* each call: 2 failures, 1 success; stays level */
  tc.budget = RETRY_BUDGET_FINAGLE;
  retry_finagle_budget_config_init(&tc.finagle);
  tc.finagle.percent_can_retry = 1000; /* generous: measure the path, not refusals */
  tc.has_breaker = true;
  retry_breaker_config_init(&tc.breaker, RETRY_BREAKER_CONSECUTIVE);
  tc.breaker.failure_threshold = 1000;
  retry_error err;
  retry_error_clear(&err);
  retry_target *t = retry_target_create(&tc, 0, NULL, &err);
  if (t == NULL) {
    fprintf(stderr, "bench_engine: %s\n", err.message);
    return 1;
  }

  uint64_t seed = 1;
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.rng.next = splitmix;
  o.rng.ctx = &seed;
  retry_outcome fail, ok;
  retry_outcome_init(&fail, RETRY_GRPC_UNAVAILABLE);
  retry_outcome_init(&ok, RETRY_GRPC_OK);

  long decisions = 0, retries = 0, oks = 0;
  int64_t now = 0;
  double t0 = cpu_seconds();
  for (long i = 0; i < n_calls; i++) {
    retry_call c;
    retry_decision d;
    o.call_id = (uint64_t)i;
    o.deadline_ns = now + 5 * RETRY_NS_PER_S;
    retry_call_start(&c, &p, t, &o, now, &d);
    decisions++;
    while (d.action != RETRY_ACTION_DONE) {
      if (d.action == RETRY_ACTION_WAIT) {
        now = d.wake_ns;
        retry_call_wake(&c, now, &d);
      } else {
        now += RETRY_NS_PER_MS;
        retry_call_on_outcome(&c, d.attempt, d.attempt < 3 ? &fail : &ok, now, &d);
      }
      decisions++;
    }
    retries += retry_call_retries(&c);
    oks += c.reason == RETRY_STOP_OK;
  }
  double cpu = cpu_seconds() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  retry_target_destroy(t);
  if (oks != n_calls || retries != 2 * n_calls) {
    fprintf(stderr, "bench_engine: unexpected result: %ld OK, %ld retries\n", oks, retries);
    return 1;
  }
  printf(
      "engine: %ld calls, %ld decisions in %.3f s CPU: %.1f M decisions/s, %.1f ns each; "
      "peak RSS %ld KiB\n",
      n_calls, decisions, cpu, (double)decisions / cpu / 1e6, cpu * 1e9 / (double)decisions,
      ru.ru_maxrss);
  return 0;
}
