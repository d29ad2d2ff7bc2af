/*
 * expt_capacity.c: the capacity estimate of each run of a scenario, printed and warned about
 * (expt_capacity.h). The computation is the world's (models/model_capacity.c): it needs the
 * config alone. Out of memory here only skips the estimate: it is advice, not a check.
 */
#include "expt/expt_capacity.h"

#include <math.h>

#include "expt/expt_json.h"
#include "expt/expt_output.h"
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
      const model_service_cfg *sc = &cfg->services[svc];
      /* An autoscaler may carry the load at its maximum, once it has scaled: say so. */
      char hpa[200] = "";
      if (sc->ctl != NULL && sc->ctl->autoscaler_on && sc->replicas > 0) {
        double at_max =
            cap.capacity_per_s[svc] * (double)sc->ctl->hpa.max_replicas / (double)sc->replicas;
        snprintf(hpa, sizeof hpa,
                 "; its autoscaler's %d replicas would give %.4g/s (%.2f), once it has scaled",
                 (int)sc->ctl->hpa.max_replicas, at_max,
                 cap.offered_per_s[ph * cap.n_services + svc] / at_max);
      }
      fprintf(err,
              "retrysim: warning: %s: %s%s%sservice \"%s\" is offered %.4g requests/s from %gs "
              "on, %.2f of its capacity of %.4g/s (replicas x workers / mean service time), "
              "before any retry or fault%s (above %.2f: validate prints the table)\n",
              expt_scenario_source(s), var != NULL ? "variant \"" : "", var != NULL ? var : "",
              var != NULL ? "\": " : "", sc->name, cap.offered_per_s[ph * cap.n_services + svc],
              (double)cap.phase_ns[ph] / 1e9, u, cap.capacity_per_s[svc], hpa,
              MODEL_CAPACITY_WARN);
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

/* A rounded number as every figure of summary.json is; null for an infinity. */
static json_t *num(double v) {
  return isfinite(v) ? json_real(expt_output_round(v)) : json_null();
}

/* One service's object: its capacity and its load at each phase. */
static json_t *service_json(const model_capacity *cap, size_t s, bool *ok) {
  json_t *o = json_object(), *phases = json_array();
  double c = cap->capacity_per_s[s];
  expt_json_put(o, "capacity_per_s", num(c), ok);
  for (size_t p = 0; p < cap->n_phases && *ok; p++) {
    double off = cap->offered_per_s[p * cap->n_services + s];
    json_t *ph = json_object();
    expt_json_put(ph, "from_s", num((double)cap->phase_ns[p] / 1e9), ok);
    expt_json_put(ph, "offered_per_s", num(off), ok);
    expt_json_put(ph, "utilization", num(isfinite(c) && c > 0 ? off / c : 0.0), ok);
    if (ph == NULL || json_array_append_new(phases, ph) != 0) *ok = false;
  }
  expt_json_put(o, "phases", phases, ok);
  return o;
}

json_t *expt_capacity_json(const model_config *cfg) {
  model_capacity cap;
  if (model_capacity_init(&cap, cfg) != 0) return NULL;
  bool ok = true;
  json_t *o = json_object(), *svcs = json_object();
  expt_json_put(o, "warn_above", json_real(MODEL_CAPACITY_WARN), &ok);
  expt_json_put(o, "closed_loop", json_boolean(cap.closed_loop), &ok);
  for (size_t s = 0; s < cap.n_services && ok; s++)
    expt_json_put(svcs, cfg->services[s].name, service_json(&cap, s, &ok), &ok);
  expt_json_put(o, "services", svcs, &ok);
  model_capacity_close(&cap);
  if (ok) return o;
  json_decref(o);
  return NULL;
}
