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

/* Whether the sums the time series keeps of each edge's shared state (throttle tokens,
 * budgets, breaker states, adaptive probabilities, kept up to date as holders change) equal a
 * walk over every holder as of now_ns, the time of the latest sample: a check for tests, O(all
 * holders); call it from the progress callback. The sanitizer builds check it at every
 * sample. */
bool model_world_gauges_check(const model_world *w, int64_t now_ns);

/* Returns the sum of the largest numbers of pooled calls, requests and ledger operations held
 * at once: the world's memory in flight, in objects (a test of leaks and of its size). */
int64_t model_world_peak_objects(const model_world *w);

/* {==================================================================
 * Tracing the engine's decisions (model_trace.c)
 * =================================================================== */

/* One logical call as a trace sink sees it. Strings are borrowed from the config. */
typedef struct model_trace_call {
  uint64_t id;                /* the engine's call id (retry_trace_rec.call_id): 1, 2, ... in
                                 the order calls start, on every edge */
  uint64_t parent_id;         /* the traced call one of whose attempts started this call; 0 for
                                 a client's call and when the parent is not traced */
  int32_t parent_attempt;     /* that attempt (1-based), 0 when parent_id is 0 */
  int32_t depth;              /* 0 for a client's call, n + 1 for a call made while serving an
                                 attempt of a traced depth-n call, -1 when not known (a
                                 service's call whose parent is not traced, and every call
                                 below it) */
  bool top;                   /* made by a client population */
  const char *from;           /* caller: the population's or the service's name */
  const char *to;             /* callee: the service's name */
  const char *method;         /* "/pkg.Service/Method" */
  int64_t start_ns;           /* when the call started */
  int64_t deadline_ns;        /* its absolute deadline, RETRY_NEVER if none */
  const retry_policy *policy; /* the policy it runs (borrowed, valid in the callback) */
} model_trace_call;

/* Where traces go. A call is traced when its parent attempt belongs to a traced call (so a
 * traced call brings every call below it), or else when select says so; select sees every
 * other call once, at its start. Every decision of a traced call reaches record, in the
 * order the engine makes them. Both run inside the simulation and must not touch the world. */
typedef struct model_trace_sink {
  /* Whether to trace a call whose parent is not traced; NULL: none is. */
  bool (*select)(void *ctx, const model_trace_call *call);
  /* One decision of a traced call; NULL turns tracing off. */
  void (*record)(void *ctx, const model_trace_call *call, const retry_trace_rec *rec);
  void *ctx;
} model_trace_sink;

/* Installs sink (copied) before model_world_run; NULL or a NULL record turns tracing off.
 * Without a sink a call costs one NULL check at its start and one flag test per attempt; a
 * traced call's records are made only for it. Tracing never changes what the world does. */
void model_world_set_trace(model_world *w, const model_trace_sink *sink);

/* }================================================================== */

/* Frees w, its objects and statistics. NULL is a no-op. */
void model_world_destroy(model_world *w);

#endif /* MODEL_WORLD_H */
