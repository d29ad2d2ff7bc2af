/*
 * bench_sim.c: the simulator's speed and memory on a reference scenario (bench/reference.json:
 * a Poisson population, one queued service, a retry policy with throttling, a fault window).
 * Prints kernel events per second of CPU time, calls simulated, the peak number of calls in
 * flight and the peak resident set. Usage: bench_sim [SCENARIO] [DURATION] [SEED].
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "models/model_world.h"
#include "sim/sim_event.h"
#include "cli/cli_scenario.h"

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench/reference.json";
  const char *duration = argc > 2 ? argv[2] : "120s";
  uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
  cli_set set = {"duration", duration};
  retry_error err;
  retry_error_clear(&err);
  cli_scenario *s = cli_scenario_load(path, &set, 1, &err);
  if (s == NULL) {
    char buf[700];
    retry_error_format(&err, buf, sizeof buf);
    fprintf(stderr, "bench_sim: %s\n", buf);
    return 2;
  }
  sim_kernel *k = sim_kernel_create(0, NULL);
  model_world *w = model_world_create(cli_scenario_config(s, 0), k, seed, &err);
  if (k == NULL || w == NULL) {
    fprintf(stderr, "bench_sim: cannot build the world: %s\n", err.message);
    return 3;
  }
  double t0 = cpu_s();
  int rc = model_world_run(w, NULL, NULL, &err);
  double t1 = cpu_s();
  const model_results *r = model_world_results(w);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double secs = t1 - t0;
  printf("scenario %s, duration %s, seed %llu\n", cli_scenario_name(s), duration,
         (unsigned long long)seed);
  printf("  events            %llu\n", (unsigned long long)r->events);
  printf("  cpu               %.3f s\n", secs);
  printf("  events per cpu s  %.2f M\n", (double)r->events / secs / 1e6);
  printf("  ns per event      %.1f\n", secs * 1e9 / (double)r->events);
  printf("  calls simulated   %lld (attempts %lld)\n", (long long)r->calls_started,
         (long long)r->attempts);
  printf("  peak calls in flight %lld\n", (long long)model_world_peak_in_flight(w));
  printf("  event pool slots  %zu\n", sim_kernel_pool_capacity(k));
  printf("  peak RSS          %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
  model_world_destroy(w);
  sim_kernel_destroy(k);
  cli_scenario_destroy(s);
  return rc == 0 ? 0 : 3;
}
