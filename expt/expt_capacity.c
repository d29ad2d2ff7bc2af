/*
 * expt_capacity.c: the capacity estimate of each run of a scenario, printed and warned about
 * (expt_capacity.h). The computation is the world's (models/model_capacity.c): it needs the
 * config alone. Out of memory here only skips the estimate: it is advice, not a check.
 */
#include "expt/expt_capacity.h"

#include "models/model_capacity.h"

void expt_capacity_warn(const expt_scenario *s, FILE *err) {
  for (size_t v = 0; v < expt_scenario_n_runs(s); v++) {
    const model_config *cfg = expt_scenario_config(s, v);
    model_capacity cap;
    if (model_capacity_init(&cap, cfg) != 0) continue;
    size_t svc, ph;
    double u = model_capacity_peak(&cap, &svc, &ph);
    if (u > MODEL_CAPACITY_WARN) {
      const char *var = expt_scenario_has_variants(s) ? expt_scenario_run_name(s, v) : NULL;
      fprintf(err,
              "retrysim: warning: %s: %s%s%sservice \"%s\" is offered %.4g requests/s from %gs "
              "on, %.2f of its capacity of %.4g/s (replicas x workers / mean service time), "
              "before any retry or fault (above %.2f: validate prints the table)\n",
              expt_scenario_source(s), var != NULL ? "variant \"" : "", var != NULL ? var : "",
              var != NULL ? "\": " : "", cfg->services[svc].name,
              cap.offered_per_s[ph * cap.n_services + svc], (double)cap.phase_ns[ph] / 1e9, u,
              cap.capacity_per_s[svc], MODEL_CAPACITY_WARN);
    }
    model_capacity_close(&cap);
  }
}

void expt_capacity_print(const expt_scenario *s, FILE *out) {
  for (size_t v = 0; v < expt_scenario_n_runs(s); v++) {
    const model_config *cfg = expt_scenario_config(s, v);
    model_capacity cap;
    if (model_capacity_init(&cap, cfg) != 0) continue;
    if (expt_scenario_has_variants(s))
      fprintf(out, "  variant \"%s\"\n", expt_scenario_run_name(s, v));
    model_capacity_print(&cap, cfg, out);
    model_capacity_close(&cap);
  }
}
