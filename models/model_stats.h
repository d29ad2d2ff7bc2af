/*
 * model_stats.h: what a run measured, filled by the world (models/) and read by the output
 * writers (expt/expt_output.c). Everything here is aggregated: its size grows with the number of
 * services, edges and time buckets, never with the number of calls.
 */
#ifndef MODEL_STATS_H
#define MODEL_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "retry/retry.h"
#include "sim/sim_hist.h"
#include "sim/sim_series.h"

/* Status counts of logical calls: gRPC codes and HTTP statuses kept apart. */
typedef struct model_status_counts {
  int64_t grpc[RETRY_GRPC_N_CODES];
  int64_t http[600]; /* index = status */
} model_status_counts;

/* The shared retry state of one edge at a moment: every caller instance that calls on the
 * edge (each client of a population, each replica of a calling service) holds its own
 * throttle, budget, adaptive throttler and breaker toward it, and these are their mean, least
 * and largest values. A mechanism the edge's policy does not configure has its has_ flag
 * false and its figures 0. holders is 0 when the edge keeps no shared state at all. */
typedef struct model_edge_state {
  int64_t holders; /* caller instances holding the state */
  bool has_throttle, has_budget, has_adaptive, has_breaker;
  double tokens_mean, tokens_min, tokens_max;              /* retryThrottling tokens */
  double budget_mean, budget_min, budget_max;              /* budget balance (retry_target_stats) */
  double reject_p_mean, reject_p_min, reject_p_max;        /* adaptive throttling's probability */
  int64_t breaker_closed, breaker_open, breaker_half_open; /* holders in each state */
  int64_t breaker_opened;                                  /* times opened, summed */
} model_edge_state;

/* One caller-to-callee edge: a client population and its target, or a service and one of its
 * downstream calls. Counts are of the edge's logical calls (one per call the caller made on
 * it, however many attempts it took), statuses in the callee's space (before a gateway maps
 * them for the caller). */
typedef struct model_edge_stats {
  const char *from; /* caller's name (borrowed from the config) */
  const char *to;   /* callee's name */
  int64_t calls;    /* logical calls started on the edge */
  bool has_branch;  /* a handler's call with a probability or when_method: skipped is written */
  int64_t skipped;  /* times its handler reached the call and did not make it (its branch: the
                       request's method or the draw), each copy of a fan-out counted */
  bool has_on_failure; /* its call has an on_failure: the two counters below are written */
  int64_t on_failure;  /* calls whose failure set off the on_failure (its filter matched) */
  int64_t fallbacks;   /* fallback calls those made (counted again as calls on the fallback's
                          own edge) */
  int64_t attempts; /* attempts sent (originals, retries and hedges) */
  int64_t retries;
  int64_t hedges;
  int64_t ok;                 /* calls that ended OK */
  int64_t failed;             /* calls that ended with another status, cancelled ones left out */
  bool can_cancel;            /* its caller cancels the calls a k-of-n fan-out leaves (wait_for with
                                 cancel_rest): the two counters below are written */
  int64_t cancelled;          /* calls the caller cancelled (stop reason cancelled): neither ok nor
                                 failed, and left out of the latencies */
  int64_t cancelled_unworked; /* attempts of those calls the callee withdrew from its queue
                                 (or dropped as they arrived): no worker ever took them */
  uint64_t worst_case;        /* product of max_attempts along the worst chain reaching this edge */
  int32_t max_attempts;       /* this edge's own max_attempts (the largest over its methods) */
  int64_t by_stop[RETRY_STOP_N]; /* why each finished call stopped */
  model_status_counts by_status; /* the status each finished call ended with */
  sim_hist latency;              /* every finished call on the edge, ns */
  sim_hist latency_ok;           /* OK calls only */
  model_edge_state state;        /* the shared state when the run ended */
} model_edge_stats;

typedef struct model_service_stats {
  const char *name;     /* borrowed from the config */
  int64_t arrivals;     /* attempts that reached the service (refused ones included) */
  int64_t served;       /* requests a worker finished (any status) */
  int64_t rejected;     /* refused: queue full, replica down, REFUSE faults */
  int64_t expired;      /* found past their deadline (dropped or wasted) */
  int64_t abandoned;    /* replies that arrived after the caller had given up */
  double busy_s;        /* worker-seconds spent working, work still in progress at the end
                           included (up to the end of the run) */
  double wasted_work_s; /* worker-seconds whose result nobody used */
  double capacity_s;    /* worker-seconds available (replicas x workers x time) */
  int64_t queue_max;    /* longest queue seen on one replica */
  int64_t executions;   /* side effects executed here */
  int64_t operations;   /* logical operations with at least one execution here */
  int64_t deduplicated; /* repeats refused by idempotency keys */
  bool has_contention, has_admission, has_codel, has_acc, has_shedding, has_retry_budget;
  bool has_cancel;   /* its handlers make calls and a cancel can reach them: cancelled written */
  int64_t cancelled; /* requests whose handler a cancel cut short: ended while it waited for
                        its calls (no reply), or left to make none after its work */
  int64_t conflicts; /* contention: writes refused because the row changed since the read */
  int64_t admission_rejected; /* admission: refused for want of a token */
  int64_t codel_dropped;      /* codel: refused after waiting longer than the bound */
  int64_t acc_rejected;       /* adaptive concurrency: refused above the limit */
  int64_t shed;               /* shedding: refused for their criticality */
  int64_t retries_rejected;   /* retry budget: retries refused while overloaded */
  int64_t dont_retry;         /* retry budget: refusals sent as "overloaded; don't retry" */
  double acc_limit;           /* adaptive concurrency: the limits summed over replicas, at
                                 the end of the run */
  /* A look-aside cache (has_cache): its counters after the warmup (model_cache.h's). Hits are
   * answered by the cache and count in arrivals, never in served. */
  bool has_cache;
  int64_t cache_hits, cache_misses, cache_coalesced, cache_fills, cache_evictions,
      cache_expirations, cache_flushed;
  bool has_invalidate;  /* some caller's on_failure deletes keys here: cache_deleted is written */
  int64_t cache_deleted; /* entries deleted by those callers (model_cache_delete) */
} model_service_stats;

/* Time series: one row per bucket, one column per named metric. The world fills it from its
 * sim_series (names and values borrowed from it, valid until model_world_destroy). */
#define MODEL_TS_NAME_MAX SIM_SERIES_NAME_MAX
typedef struct model_timeseries {
  int64_t bucket_ns;
  size_t n_buckets;
  size_t n_columns;
  char (*names)[MODEL_TS_NAME_MAX]; /* column names, e.g. "goodput_rps", "api_queue" */
  double *values;                   /* n_buckets x n_columns, row-major */
} model_timeseries;

/* An operator (a rule or a scheduled action, model_ops.h): the times it fired. */
typedef struct model_operator_stats {
  const char *name;   /* borrowed from the config */
  const char *action; /* model_action_name */
  bool rule;          /* a rule ("operators"), else a scheduled action ("events") */
  int64_t n_fired;
  int64_t *fired_at_ns; /* n_fired times, in order (owned by the world) */
} model_operator_stats;

/* A population some action restarts or pauses (model_herd.c). */
typedef struct model_herd_stats {
  const char *population; /* borrowed from the config */
  int64_t restarts;       /* clients taken down by a restart action */
  int64_t inits, inits_ok, inits_failed; /* initialisation calls made, and how they ended */
  int64_t calls_down; /* calls that found their client down: failed at once, never sent */
  int64_t clients_up; /* at the end of the run */
} model_herd_stats;

typedef struct model_results {
  uint64_t events;     /* kernel events run */
  int64_t sim_time_ns; /* the clock when the run ended */
  int64_t duration_ns; /* the scenario's duration less the warmup: the measured time
                          (goodput is per second of it) */
  int64_t warmup_ns;   /* the scenario's warmup (0: none). The figures below, per edge and
                          per service leave out what happened before it: calls (top-level
                          and on each edge), their attempts, statuses, stop reasons and
                          latencies count only calls that started at or after the warmup;
                          the services' counters count what happened at or after it (work
                          done, arrivals, refusals, ...: a time window, so utilization is
                          busy time over capacity in [warmup, end]); side effects count the
                          operations made at or after it. The time series keeps
                          everything. */
  /* top-level calls (made by client populations) */
  int64_t calls_started, calls_ok, calls_failed, calls_unfinished;
  int64_t calls_ok_in_deadline; /* ended OK at or before their deadline */
  int64_t attempts, retries, hedges;
  /* server streams: messages delivered to top-level callers (replays included), and those
   * delivered again because a retried stream started over */
  int64_t stream_items, stream_duplicates;
  model_status_counts by_status;
  int64_t by_stop[RETRY_STOP_N];
  sim_hist latency;    /* every finished top-level call, ns */
  sim_hist latency_ok; /* OK calls only */
  /* side effects over all services */
  int64_t executions, operations, duplicates;
  model_edge_stats *edges;
  size_t n_edges;
  model_service_stats *services;
  size_t n_services;
  model_timeseries ts;
  /* operators and herds (model_ops.h): none (0, NULL) without */
  model_operator_stats *operators;
  size_t n_operators;
  model_herd_stats *herds;
  size_t n_herds;
} model_results;

#endif /* MODEL_STATS_H */
