/*
 * model_estimate.h: how much memory a world built from a config will take, computed from the
 * config alone, before anything is allocated, so that the program can refuse a scenario that
 * would exhaust the machine minutes into its run (issue 10, defect 8).
 */
#ifndef MODEL_ESTIMATE_H
#define MODEL_ESTIMATE_H

#include <stdint.h>

#include "models/model_config.h"

/* Returns the bytes a world for cfg holds from its creation on: per client its struct, its
 * three random streams and, when its population's policy keeps shared state, a retry_target;
 * per replica its struct, four streams and a target per downstream call with shared state
 * (retry_target_size of its policy's target config, plus a pointer; a breaker adds its own);
 * per edge its struct and statistics; per service its struct, statistics and arrays; and the
 * time series, counted twice (the world's table and the copy the program keeps for the
 * files), each bucket of (duration + drain) / bucket holding 8 bytes per column. Calls and
 * requests in flight are not counted: they follow the load, not the config. Saturates at
 * UINT64_MAX. cfg is borrowed. */
uint64_t model_world_estimate_bytes(const model_config *cfg);

#endif /* MODEL_ESTIMATE_H */
