/*
 * cmd_validate.c: `retrysim validate SCENARIO.json [options]`. Loads and checks the scenario,
 * every variant and every point of its sweep, as `run` would, and prints "FILE: ok (N runs)".
 * Invariant: it shares the loading of run (cli_runopts_load), so it refuses exactly the files
 * run would refuse, and it runs nothing.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "expt/expt_capacity.h"
#include "expt/expt_output.h"
#include "expt/expt_search.h"

/* The ok line of a search: it is adaptive, so its runs are counted as at most probes x
 * max_reps per variant (a study's "4 runs" said nothing of them). */
static int validate_search(const cli_runopts *o, const expt_scenario *s) {
  expt_search_spec spec;
  retry_error err;
  retry_error_clear(&err);
  if (expt_search_spec_from_json(expt_scenario_search_block(s), &spec, &err) != 0)
    return cli_oom();
  size_t nv = expt_scenario_n_runs(s);
  printf("%s: ok (a search: %zu variant%s x %zu probes x %zu to %zu replications: at most %zu "
         "runs)\n",
         o->scenario, nv, nv == 1 ? "" : "s", spec.probes, spec.reps, spec.max_reps,
         nv * spec.probes * spec.max_reps);
  expt_search_spec_free(&spec);
  return EXPT_EXIT_OK;
}

/* The ok line: a run per variant and replication ("replications" in the file), at each point
 * of the sweep. The points are checked as run checks them (expt_sweep_check_study). */
static int validate(const cli_runopts *o, const expt_scenario *s) {
  size_t np = 1;
  size_t reps = expt_scenario_replications(s);
  size_t n = expt_scenario_n_runs(s) * (reps > 0 ? reps : 1);
  int status = expt_sweep_check_study(s, NULL, o->max_memory, false, &np, stderr);
  /* Beyond --max-runs, refused as run would refuse it, before the ok line. */
  if (status == EXPT_EXIT_OK) status = cli_estimate_study(o, s, np, NULL);
  if (status == EXPT_EXIT_OK && expt_scenario_search_block(s) != NULL) {
    status = validate_search(o, s);
    if (status == EXPT_EXIT_OK && !o->opts.quiet) cli_estimate_study(o, s, np, stdout);
    return status;
  }
  if (status == EXPT_EXIT_OK && expt_scenario_sweep_block(s) != NULL)
    printf("%s: ok (%zu run%s at each of %zu sweep points)\n", o->scenario, n, n == 1 ? "" : "s",
           np);
  else if (status == EXPT_EXIT_OK)
    printf("%s: ok (%zu run%s)\n", o->scenario, n, n == 1 ? "" : "s");
  /* The capacity table of the runs (of the base point for a sweep): offered load against
   * capacity, before anything runs. */
  if (status == EXPT_EXIT_OK && !o->opts.quiet) {
    cli_estimate_study(o, s, np, stdout);
    expt_capacity_print(s, stdout);
  }
  return status;
}

static int validate_action(cli_runopts *o, expt_scenario *s, int argc, char **argv) {
  (void)argc;
  (void)argv;
  return validate(o, s);
}

int cmd_validate_main(int argc, char **argv) {
  return cli_runopts_command(argc, argv, validate_action);
}
