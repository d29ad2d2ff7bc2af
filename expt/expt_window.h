/*
 * expt_window.h: a run's figures over named windows of its time series (issue 23, item 4), so
 * that a storm during the trigger, or the state after it, is not averaged over the whole run.
 * The scenario's "recovery.windows" names them; the run object gets "windows": {NAME: {...}}, which
 * --check expectations and a study's aggregates read as any other path
 * ("windows.after.goodput_rps").
 */
#ifndef EXPT_WINDOW_H
#define EXPT_WINDOW_H

#include <jansson.h>

#include "expt/expt_recovery.h"
#include "models/model_stats.h"

/* The "windows" object of a run, every number through rnd (expt_output_round): for every
 * window of rec->windows_cfg, {"from_s", "to_s",
 * "buckets", "goodput_ratio", then the mean over the window's whole buckets of every
 * time-series column (its finite values; null when none)}; a window with no whole bucket
 * inside the duration (a trigger that never ended, or none) is null. "trigger" is the recovery
 * rule's trigger window, "after" from its end to the end of the duration. NULL when rec has no
 * window (rec NULL, or no "windows" block: nothing is written) or out of memory (*oom set).
 * Returns a new reference. */
json_t *expt_window_json(const expt_recovery *rec, const model_results *r, double (*rnd)(double),
                         bool *oom);

#endif /* EXPT_WINDOW_H */
