/*
 * expt_scenario_windows.c: the loader's part of "recovery.windows": the named windows of
 * the time series whose figures each run also reports (expt_window.h). {"trigger": true,
 * "after": true, "NAME": ["10s", "40s"]}: the two built-in names take true, any other name a
 * [from, to) pair of durations. Stored with the recovery rule, which resolves the trigger.
 */
#include "expt/expt_scenario_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One window, name: v, into *w. */
static bool one_window(scn_ctx *c, const char *name, json_t *v, expt_window *w) {
  memset(w, 0, sizeof *w);
  snprintf(w->name, sizeof w->name, "%s", name);
  bool builtin = strcmp(name, "trigger") == 0 || strcmp(name, "after") == 0;
  if (builtin) {
    /* false would change nothing: refused, as any value that cannot. */
    if (!json_is_true(v)) {
      retry_json_fail_value(&c->j, name, "true (the recovery rule's window)", v);
      return false;
    }
    w->kind = strcmp(name, "trigger") == 0 ? EXPT_WINDOW_TRIGGER : EXPT_WINDOW_AFTER;
    return true;
  }
  w->kind = EXPT_WINDOW_SPAN;
  if (!json_is_array(v) || json_array_size(v) != 2) {
    retry_json_fail_value(&c->j, name, "a pair of durations [\"10s\", \"40s\"]", v);
    return false;
  }
  if (!expt__scenario_duration_value(c, json_array_get(v, 0), "[0]", 0, false, SCN_DUR_NONNEG,
                                     &w->from_ns) ||
      !expt__scenario_duration_value(c, json_array_get(v, 1), "[1]", 0, false, SCN_DUR_NONNEG,
                                     &w->to_ns))
    return false;
  if (w->to_ns <= w->from_ns) {
    retry_json_fail_value(&c->j, name, "an end after the start", v);
    return false;
  }
  return true;
}

bool expt__scenario_parse_windows(scn_ctx *c, json_t *v) {
  expt_recovery_cfg *r = &c->recovery;
  if (!json_is_object(v) || json_object_size(v) == 0) {
    retry_json_fail_value(&c->j, "\"windows\"",
                          "an object {\"trigger\": true, \"after\": true, \"NAME\": [\"10s\", "
                          "\"40s\"]}",
                          v);
    return false;
  }
  if (json_object_size(v) > EXPT_WINDOW_MAX) {
    retry_json_fail_value(&c->j, "\"windows\"", "at most 16 windows", v);
    return false;
  }
  r->n_windows = 0;
  const char *key;
  json_t *w;
  json_object_foreach(v, key, w) {
    if (strlen(key) == 0 || strlen(key) >= EXPT_WINDOW_NAME_MAX || strchr(key, '.') != NULL) {
      retry_json_fail_value(&c->j, "\"windows\"",
                            "names of 1 to 31 characters without '.' (a path separator)", v);
      return false;
    }
    size_t mark = retry_json_path_push_key(&c->j, key);
    if (!one_window(c, key, w, &r->windows[r->n_windows])) return false;
    retry_json_path_pop(&c->j, mark);
    r->n_windows++;
  }
  return true;
}

void expt_scenario_warn_unjudged(const expt_scenario *s, FILE *f) {
  for (size_t v = 0; v < expt_scenario_n_runs(s); v++) {
    const model_config *cfg = expt_scenario_config(s, v);
    const expt_recovery_cfg *rc = expt_scenario_recovery(s, v);
    double until = expt_recovery_judged_until_s(rc, cfg);
    if (isnan(until) || until >= 0) continue;
    int64_t t0, t1;
    expt_recovery_trigger(rc, cfg, &t0, &t1);
    char var[96] = "";
    if (expt_scenario_has_variants(s)) {
      char name[72];
      retry_json_printable(name, sizeof name, expt_scenario_run_name(s, v), 64);
      snprintf(var, sizeof var, "variant \"%s\": ", name);
    }
    fprintf(f,
            "retrysim: warning: %s: %sthe trigger ends at %gs and the run at %gs, too soon for "
            "one span of the recovery hold (%gs, in whole buckets of %gs): recovery cannot be "
            "judged, and each run's verdict will be \"unjudged\" (lengthen \"duration\" or "
            "shorten \"recovery.hold\")\n",
            expt_scenario_source(s), var, (double)t1 / 1e9, (double)cfg->duration_ns / 1e9,
            (double)rc->hold_ns / 1e9, (double)cfg->bucket_ns / 1e9);
  }
}
