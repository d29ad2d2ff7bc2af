/*
 * expt_capacity.h: the capacity estimate of a scenario's runs (models/model_capacity.h), as
 * `validate` prints it and as `validate` and `run` warn about it before anything runs.
 */
#ifndef EXPT_CAPACITY_H
#define EXPT_CAPACITY_H

#include <stdio.h>

#include <jansson.h>

#include "expt/expt_scenario.h"

/* Warns on err, one line per run (variant) whose first attempts alone load a service above
 * MODEL_CAPACITY_WARN of its healthy capacity at some phase: the service, the phase, the
 * offered load and the capacity. Nothing when every run is below. */
void expt_capacity_warn(const expt_scenario *s, FILE *err);

/* Prints every run's table on out (validate). */
void expt_capacity_print(const expt_scenario *s, FILE *out);

/* The table of one run as summary.json holds it (docs/cli.md): {"warn_above", "closed_loop",
 * "services": {NAME: {"capacity_per_s", "phases": [{"from_s", "offered_per_s",
 * "utilization"}]}}}. A service of mean service time 0 has an unbounded capacity, written as
 * null, and utilization 0. Returns a new reference, or NULL when out of memory. */
json_t *expt_capacity_json(const model_config *cfg);

#endif /* EXPT_CAPACITY_H */
