/*
 * expt_capacity.h: the capacity estimate of a scenario's runs (models/model_capacity.h), as
 * `validate` prints it and as `validate` and `run` warn about it before anything runs.
 */
#ifndef EXPT_CAPACITY_H
#define EXPT_CAPACITY_H

#include <stdio.h>

#include "expt/expt_scenario.h"

/* Warns on err, one line per run (variant) whose first attempts alone load a service above
 * MODEL_CAPACITY_WARN of its healthy capacity at some phase: the service, the phase, the
 * offered load and the capacity. Nothing when every run is below. */
void expt_capacity_warn(const expt_scenario *s, FILE *err);

/* Prints every run's table on out (validate). */
void expt_capacity_print(const expt_scenario *s, FILE *out);

#endif /* EXPT_CAPACITY_H */
