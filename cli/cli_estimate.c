/*
 * cli_estimate.c: the runs and time of a study, sweep or search as `validate` and `plan` say
 * them before anything runs, and their refusal beyond --max-runs (issue 23 item 9). `run`
 * refuses the same counts in the study driver (expt_study_estimate_refuse, expt_search.c).
 */
#include "cli/cli.h"
#include "expt/expt_search.h"
#include "expt/expt_study_runs.h"

/* The runs of s: a search's most (variants x probes x max_reps), else variants x reps x
 * points. 0 when s is a plain run (one replication, no sweep), which has no estimate. */
static uint64_t runs_of(const cli_runopts *o, const expt_scenario *s, size_t np, bool *search) {
  uint64_t nv = expt_scenario_n_runs(s);
  *search = expt_scenario_search_block(s) != NULL;
  if (*search) {
    expt_search_spec spec;
    retry_error err;
    retry_error_clear(&err);
    if (expt_search_spec_from_json(expt_scenario_search_block(s), &spec, &err) != 0) return 0;
    uint64_t most = nv * spec.probes * spec.max_reps;
    expt_search_spec_free(&spec);
    return most;
  }
  uint64_t reps = o->reps > 0 ? o->reps : expt_scenario_replications(s);
  if (reps <= 1 && np <= 1 && expt_scenario_sweep_block(s) == NULL && o->sweep.n_axes == 0)
    return 0;
  return nv * (reps > 0 ? reps : 1) * np;
}

int cli_estimate_study(const cli_runopts *o, const expt_scenario *s, size_t np, FILE *out) {
  bool search;
  uint64_t n = runs_of(o, s, np, &search);
  if (n == 0) return EXPT_EXIT_OK;
  const char *what = search ? "a search of up to variants x probes x max_reps runs"
                            : "a study of variants x replications x points";
  if (out == NULL) return expt_study_runs_check(s, n, o->max_runs, what, NULL, stderr);
  return expt_study_runs_check(s, n, 0, what, out, stderr);
}
