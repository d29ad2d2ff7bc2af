/*
 * bench_sim.c: the simulator's speed and memory on a reference scenario (bench/reference.json:
 * a Poisson population, one queued service, a retry policy with throttling, a fault window).
 * Prints kernel events per second of CPU time, calls simulated, the peak number of calls in
 * flight and the peak resident set. Usage: bench_sim [SCENARIO] [DURATION] [SEED] [PATH=VALUE...]
 * (each PATH=VALUE is a --set override, e.g. clients.web.count=1000000). The last line,
 * "result key=value ...", is for bench/bench.sh, which computes the ratios of `make bench`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "models/model_world.h"
#include "sim/sim_event.h"
#include "sim/sim_hist.h"
#include "expt/expt_scenario.h"

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench/reference.json";
  const char *duration = argc > 2 ? argv[2] : "120s";
  uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
  expt_set sets[16] = {{"duration", duration}};
  size_t n_sets = 1;
  char *owned[16] = {NULL};
  for (int i = 4; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (eq == NULL || n_sets == sizeof sets / sizeof sets[0]) {
      fprintf(stderr, "bench_sim: '%s': expected PATH=VALUE (at most 15)\n", argv[i]);
      return 2;
    }
    owned[n_sets] = strdup(argv[i]);
    if (owned[n_sets] == NULL) return 3;
    owned[n_sets][eq - argv[i]] = '\0';
    sets[n_sets].path = owned[n_sets];
    sets[n_sets].value = owned[n_sets] + (eq - argv[i]) + 1;
    n_sets++;
  }
  retry_error err;
  retry_error_clear(&err);
  double l0 = cpu_s();
  expt_scenario *s = expt_scenario_load(path, sets, n_sets, &err);
  if (s == NULL) {
    char buf[700];
    retry_error_format(&err, buf, sizeof buf);
    fprintf(stderr, "bench_sim: %s\n", buf);
    return 2;
  }
  sim_kernel *k = sim_kernel_create(0, NULL);
  model_world *w = model_world_create(expt_scenario_config(s, 0), k, seed, &err);
  if (k == NULL || w == NULL) {
    fprintf(stderr, "bench_sim: cannot build the world: %s\n", err.message);
    return 3;
  }
  double t0 = cpu_s();
  struct rusage ru0;
  getrusage(RUSAGE_SELF, &ru0);
  int rc = model_world_run(w, NULL, NULL, &err);
  double t1 = cpu_s();
  const model_results *r = model_world_results(w);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double secs = t1 - t0;
  printf("scenario %s, duration %s, seed %llu\n", expt_scenario_name(s), duration,
         (unsigned long long)seed);
  printf("  events            %llu\n", (unsigned long long)r->events);
  printf("  cpu               %.3f s\n", secs);
  printf("  events per cpu s  %.2f M\n", (double)r->events / secs / 1e6);
  printf("  ns per event      %.1f\n", secs * 1e9 / (double)r->events);
  printf("  calls simulated   %lld (attempts %lld)\n", (long long)r->calls_started,
         (long long)r->attempts);
  printf("  peak calls in flight %lld\n", (long long)model_world_peak_in_flight(w));
  printf("  event pool slots  %zu\n", sim_kernel_pool_capacity(k));
  printf("  peak RSS          %.1f MiB (%.1f MiB once built, build %.3f s cpu)\n",
         (double)ru.ru_maxrss / 1024.0, (double)ru0.ru_maxrss / 1024.0, t0 - l0);
  printf(
      "result events=%llu cpu_s=%.6f ns_per_event=%.3f calls=%lld peak_in_flight=%lld "
      "rss_kib=%ld built_rss_kib=%ld build_cpu_s=%.6f mean_latency_ms=%.6f\n",
      (unsigned long long)r->events, secs, secs * 1e9 / (double)r->events,
      (long long)r->calls_started, (long long)model_world_peak_in_flight(w), ru.ru_maxrss,
      ru0.ru_maxrss, t0 - l0, sim_hist_mean(&r->latency) / 1e6);
  model_world_destroy(w);
  sim_kernel_destroy(k);
  expt_scenario_destroy(s);
  for (size_t i = 0; i < n_sets; i++)
    free(owned[i]);
  return rc == 0 ? 0 : 3;
}
