/*
 * expt_study_runs.c: the runs count and time estimate of a study (expt_study_runs.h). The
 * time is the simulated requests (first attempts, from the capacity estimate) at an assumed
 * rate of EXPT_STUDY_REQUESTS_PER_CPU_S: retries, fan-out chains and time series make a run
 * slower, so it is a lower bound of the right order, and the output says so.
 */
#include "expt/expt_study_runs.h"

#include "expt/expt_error.h"
#include "models/model_capacity.h"

double expt_study_runs_requests(const expt_scenario *s, size_t v) {
  const model_config *cfg = expt_scenario_config(s, v);
  model_capacity cap;
  if (model_capacity_init(&cap, cfg) != 0) return 0;
  double total = 0;
  for (size_t p = 0; p < cap.n_phases; p++) {
    int64_t end = p + 1 < cap.n_phases ? cap.phase_ns[p + 1] : cfg->duration_ns;
    double len_s = (double)(end - cap.phase_ns[p]) / 1e9, per_s = 0;
    for (size_t i = 0; i < cap.n_services; i++)
      per_s += cap.offered_per_s[p * cap.n_services + i];
    if (len_s > 0) total += per_s * len_s;
  }
  model_capacity_close(&cap);
  return total;
}

/* Seconds as "40 s", "12 min", "3.5 h" or "2.1 days". */
static void format_time(char *buf, size_t size, double s) {
  if (s < 120)
    snprintf(buf, size, "%.2g s", s);
  else if (s < 7200)
    snprintf(buf, size, "%.0f min", s / 60);
  else if (s < 172800)
    snprintf(buf, size, "%.1f h", s / 3600);
  else
    snprintf(buf, size, "%.3g days", s / 86400);
}

int expt_study_runs_check(const expt_scenario *s, uint64_t n_runs, uint64_t max_runs,
                          const char *what, FILE *out, FILE *errf) {
  if (out != NULL) {
    size_t nv = expt_scenario_n_runs(s);
    double per_run = 0;
    for (size_t v = 0; v < nv; v++)
      per_run += expt_study_runs_requests(s, v);
    double req = nv > 0 ? per_run / (double)nv * (double)n_runs : 0;
    char t[32];
    format_time(t, sizeof t, req / EXPT_STUDY_REQUESTS_PER_CPU_S);
    fprintf(out,
            "  estimate: %llu runs, about %.3g simulated requests (first attempts, without "
            "retries), at least about %s of CPU (at %.0g requests/s)\n",
            (unsigned long long)n_runs, req, t, EXPT_STUDY_REQUESTS_PER_CPU_S);
  }
  if (max_runs == 0 || n_runs <= max_runs) return EXPT_EXIT_OK;
  fprintf(errf,
          "retrysim: %s: %s makes %llu runs, over the limit of %llu: give fewer points, "
          "variants or replications, split it with --shard K/N, or raise --max-runs N\n",
          expt_scenario_source(s), what, (unsigned long long)n_runs,
          (unsigned long long)max_runs);
  return EXPT_EXIT_USAGE;
}
