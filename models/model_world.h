/*
 * model_world.h: the simulated world built from a model_config: client populations, services
 * with replicas and queues, edges each running its own retry engine instances, faults and the
 * side-effect ledger. It owns every model object and its statistics; the kernel owns time.
 */
#ifndef MODEL_WORLD_H
#define MODEL_WORLD_H

#include "models/model_config.h"
#include "models/model_stats.h"
#include "retry/retry.h"
#include "sim/sim_event.h"

typedef struct model_world model_world;

/* Returns a new world for cfg (borrowed: cfg must outlive the world) on kernel k (borrowed),
 * drawing every random stream from seed. Schedules the first arrivals and the time-series
 * sampling. NULL on error (out of memory, a config the loader should have refused), with
 * details in err. Free with model_world_destroy. */
model_world *model_world_create(const model_config *cfg, sim_kernel *k, uint64_t seed,
                                retry_error *err);

/* Runs the world to its end: arrivals during the duration, then at most drain_ns more for the
 * calls in flight (the run stops as soon as none is left). progress, when not NULL, is called
 * at the end of every time-series bucket with the current time and the scenario's duration +
 * drain. Returns 0 or a negative RETRY_* code (out of
 * memory during the run, with details in err). */
int model_world_run(model_world *w, void (*progress)(void *ctx, int64_t now_ns, int64_t end_ns),
                    void *ctx, retry_error *err);

/* Returns the results of the run (borrowed, valid until model_world_destroy). */
const model_results *model_world_results(const model_world *w);

/* Returns the peak number of top-level calls in flight at once (memory grows with this). */
int64_t model_world_peak_in_flight(const model_world *w);

/* Frees w, its objects and statistics. NULL is a no-op. */
void model_world_destroy(model_world *w);

#endif /* MODEL_WORLD_H */
