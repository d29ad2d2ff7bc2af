/*
 * model_estimate.h: how much memory a world built from a config will take, computed from the
 * config alone, before anything is allocated, so that the program can refuse a scenario that
 * would exhaust the machine minutes into its run (issue 10, defect 8).
 */
#ifndef MODEL_ESTIMATE_H
#define MODEL_ESTIMATE_H

#include <stdint.h>

#include "models/model_config.h"

/* Bytes of a retry_target (the shared throttle, budget, adaptive and breaker state of one
 * caller on one edge). The type is opaque above retry/, so this is a documented figure, not a
 * sizeof: sizeof(struct retry_target) is 2,848 bytes on x86-64 (retry/retry_int.h), plus the
 * allocator's overhead, rounded up. A target with an optional part (the AWS adaptive limiter,
 * Brooker's retry breaker or token bucket, a concurrency limiter) holds one more block,
 * sizeof(retry_target_opt), 760 bytes, counted as MODEL_ESTIMATE_TARGET_OPT_BYTES. */
#define MODEL_ESTIMATE_TARGET_BYTES 2880
#define MODEL_ESTIMATE_TARGET_OPT_BYTES 784

/* Returns the bytes a world for cfg holds from its creation on: per client its struct, its
 * three random streams and, when its population's policy keeps shared state, a retry_target;
 * per replica its struct, four streams and a target per downstream call with shared state;
 * per edge its struct and statistics; per service its struct, statistics and arrays; and the
 * time series, counted twice (the world's table and the copy the program keeps for the
 * files), each bucket of (duration + drain) / bucket holding 8 bytes per column. Calls and
 * requests in flight are not counted: they follow the load, not the config. Saturates at
 * UINT64_MAX. cfg is borrowed. */
uint64_t model_world_estimate_bytes(const model_config *cfg);

#endif /* MODEL_ESTIMATE_H */
