/*
 * cmd_run.c: `retrysim run SCENARIO.json [options]`. Loads and validates the whole scenario,
 * then runs it as a plain run (expt_run.c), a study of replications (expt_study.c) or a sweep
 * (expt_sweep.c), as its keys and the options ask.
 * Invariant: nothing runs and nothing is written unless the whole line and scenario are valid;
 * what a study would silently not do is refused before it starts.
 */
#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "expt/expt_output.h"
#include "expt/expt_study.h"

/* Refuses what a study would silently not do (review 11 item 11); returns 0 or 2. */
static int check_study(const cli_runopts *o) {
  if (o->opts.plot && o->shard_n > 0)
    return cli_usage("%s", "--plot draws a whole study: merge the shards first");
  if (o->opts.edges)
    return cli_usage("%s",
                     "--edges adds the edge table of a plain run; a study's edges are in its "
                     "points.csv (amplification.edges[FROM->TO]...)");
  if (o->shard_n > 0 && o->opts.format == EXPT_FORMAT_JSON)
    return cli_usage("%s",
                     "--format json prints a summary, which a shard does not have: merge the "
                     "shards for it");
  return 0;
}

/* A study when any of its keys or options asks for more than one plain run. */
static int run_study_or_plain(cli_runopts *o, expt_scenario *s) {
  size_t reps = o->reps > 0 ? o->reps : expt_scenario_replications(s);
  if (reps == 0) reps = 1;
  double level = !isnan(o->confidence) ? o->confidence : expt_scenario_confidence(s);
  if (isnan(level)) level = EXPT_STUDY_DEFAULT_CONFIDENCE;
  const char *baseline = o->baseline != NULL ? o->baseline : expt_scenario_baseline(s);
  bool study = reps > 1 || o->shard_n > 0 || expt_sweep_wanted(s, &o->sweep);
  if (!study) {
    if (o->baseline != NULL || !isnan(o->confidence) || o->adjust_given)
      return cli_usage("%s",
                       "--baseline, --confidence and --adjust apply to a study: add --reps N with "
                       "N >= 2 (or \"replications\" in the scenario)");
    return expt_run_scenario(s, &o->opts);
  }
  int rc = check_study(o);
  if (rc != 0) return rc;
  /* An adjustment of paired flags without a baseline would change nothing. */
  if (o->adjust_given && baseline == NULL)
    return cli_usage("%s", "--adjust applies to the paired differences: give --baseline V");
  const expt_scenario *scenarios[1] = {s};
  expt_study_spec spec = {.source = o->scenario,
                          .base = s,
                          .points = NULL,
                          .n_points = 0,
                          .scenarios = scenarios,
                          .reps = reps,
                          .confidence = level,
                          .baseline = baseline,
                          .holm = o->holm,
                          .warmup_s = (double)expt_scenario_config(s, 0)->warmup_ns / 1e9,
                          .jobs = o->jobs > 0 ? o->jobs : expt_study_default_jobs(),
                          .shard_k = o->shard_k,
                          .shard_n = o->shard_n,
                          .search = NULL,
                          .max_bytes = o->max_memory,
                          .max_runs = o->max_runs};
  if (expt_sweep_wanted(s, &o->sweep))
    return expt_sweep_run_study(s, &o->sweep, &spec, o->max_memory, &o->opts);
  return expt_study_run(&spec, &o->opts);
}

static int run_action(cli_runopts *o, expt_scenario *s, int argc, char **argv) {
  (void)argc;
  (void)argv;
  return run_study_or_plain(o, s);
}

int cmd_run_main(int argc, char **argv) { return cli_runopts_command(argc, argv, run_action); }
