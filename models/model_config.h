/*
 * model_config.h: the world a scenario describes, as plain structs. expt_scenario.c fills them
 * from JSON (and checks every rule written next to the fields); model_world.c builds the
 * running world from them. Times are int64 ns, rates per second. Names are owned strings,
 * services are referred to by index once the loader has resolved the names. A sim_dist's
 * table (a mixture, an empirical distribution) is not owned: the loader keeps it for as long
 * as the config (expt/expt_scenario.c).
 */
#ifndef MODEL_CONFIG_H
#define MODEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "retry/retry.h"
#include "sim/sim_dist.h"
#include "sim/sim_keys.h"
#include "models/model_ctl.h"

/* {==================================================================
 * Status mapping (gateways)
 * =================================================================== */

#define MODEL_STATUS_MAP_MAX 64
/* Maps a callee's final status (in the callee's space) into the caller's space. */
typedef struct model_status_map {
  int n;                              /* explicit entries */
  int32_t from[MODEL_STATUS_MAP_MAX]; /* callee status */
  int32_t to[MODEL_STATUS_MAP_MAX];   /* caller status */
  bool has_default;                   /* statuses not listed map to default_to ... */
  int32_t default_to;                 /* ... (the catch-all) */
  bool canonical;                     /* ... else, when the spaces differ, to the canonical
                                         mapping (grpc-gateway / gRPC's HTTP table); when the
                                         spaces are equal, unchanged */
} model_status_map;

/* }================================================================== */

/* {==================================================================
 * Clients
 * =================================================================== */

typedef enum model_loop_kind {
  MODEL_LOOP_OPEN = 0, /* Poisson arrivals following a rate profile (whole population) */
  MODEL_LOOP_CLOSED,   /* each client: think, call, wait for the answer, think again */
  MODEL_LOOP_SCRIPT    /* each client calls at fixed times (deterministic tables) */
} model_loop_kind;

typedef struct model_method_cfg {
  char *name;               /* full method name "/pkg.Service/Method" */
  double weight;            /* share of calls, > 0 */
  retry_stream_kind stream; /* unary or server streaming (client/bidi: never retried) */
  int64_t request_bytes;    /* request size for the retry-buffer commit rule, >= 0 */
  int64_t stream_items;     /* server streaming: messages in a full response, >= 0 */
  int64_t deadline_ns;      /* overrides the client's deadline; RETRY_NEVER = inherit */
} model_method_cfg;

#define MODEL_SCRIPT_MAX 256
typedef struct model_client_cfg {
  char *name;    /* unique among clients and services */
  int32_t count; /* clients in the population, >= 1; each has its own channel
                    state (throttle, budget, breaker) */
  int target;    /* index of the service called */
  model_loop_kind loop;
  sim_rate_profile rate;     /* open loop: calls per second of the whole population */
  sim_dist think;            /* closed loop: pause between a call's end and the next call */
  int32_t user_retries;      /* closed loop: user-level retries of a failed call (the
                                "refresh button"), >= 0 */
  sim_dist user_retry_delay; /* closed loop: pause before a user-level retry */
  int n_script;              /* script: calls per client */
  int64_t script_ns[MODEL_SCRIPT_MAX]; /* script: call times, non-decreasing */
  int64_t start_ns, stop_ns; /* new calls only in [start, stop); stop RETRY_NEVER = the run's
                                duration */
  model_method_cfg *methods; /* >= 1 */
  size_t n_methods;
  int64_t deadline_ns;  /* call deadline after its start; RETRY_NEVER = the policy's
                           methodConfig timeout, else none */
  retry_config *policy; /* owned; NULL = no retries (one attempt, no shared state) */
  sim_dist network;     /* one-way latency of each hop between client and service */
  /* Its own on_failure (model_client_fallback.c): which failures of its calls it takes, the
   * slow error path, one fallback call and the rule that picks the call's final status, all
   * in its target's status space. NULL: none (the population's calls end as they end). */
  struct model_client_fallback_cfg *on_failure;
} model_client_cfg;

/* }================================================================== */

/* {==================================================================
 * Services
 * =================================================================== */

typedef enum model_queue_kind { MODEL_QUEUE_FIFO = 0, MODEL_QUEUE_LIFO } model_queue_kind;
typedef enum model_lb_kind {
  MODEL_LB_ROUND_ROBIN = 0,
  MODEL_LB_RANDOM,
  MODEL_LB_P2C, /* power of two choices: the less loaded of two random replicas */
  /* The world's own, never the loader's: a service whose replicas come and go or leave
   * service (model_ctl.c) picks among those in service, with the configured kind. */
  MODEL_LB_CTL
} model_lb_kind;
typedef enum model_deadline_mode {
  MODEL_DEADLINE_IGNORE = 0, /* work on expired requests as if they were live */
  MODEL_DEADLINE_DROP,       /* expired at dequeue or at the side effect: reply
                                DEADLINE_EXCEEDED without (further) work */
  MODEL_DEADLINE_WASTE       /* do expired work anyway and count it as expired and wasted */
} model_deadline_mode;
typedef enum model_effect_point {
  MODEL_EFFECT_NONE = 0, /* the handler has no side effect */
  MODEL_EFFECT_BEFORE,   /* after the service time, before the downstream calls */
  MODEL_EFFECT_AFTER     /* after the downstream calls succeeded */
} model_effect_point;
typedef enum model_fanout_kind {
  MODEL_CALLS_SEQUENTIAL = 0, /* one downstream call after another, stop at a failure */
  MODEL_CALLS_FANOUT          /* all at once, wait for all; first failure is the result */
} model_fanout_kind;

/* What a handler does when one of its calls ends failed, throttled or refused (any stop
 * reason but ok), optionally only for some statuses or stop reasons: the slow error path
 * (extra_ns of the worker's time), the key the call looked up deleted from its callee's cache
 * (invalidate), and one fallback call, whose result replaces the failure, or an OK
 * (a degraded answer), or the failure kept (model_fallback.c). */
typedef enum model_fallback_result {
  MODEL_FALLBACK_KEEP_FAILURE = 0, /* "failure": the call's failure stands */
  MODEL_FALLBACK_USE_FALLBACK,     /* "fallback": the fallback's status replaces it */
  MODEL_FALLBACK_ANSWER_OK         /* "ok": the handler goes on as if the call had succeeded */
} model_fallback_result;

#define MODEL_ON_FAILURE_STATUSES_MAX 16
typedef struct model_on_failure_cfg {
  bool on;
  int32_t statuses[MODEL_ON_FAILURE_STATUSES_MAX]; /* in the caller's space; none: any */
  int n_statuses;
  uint32_t reasons;  /* bit s: stop reason s (retry_stop); 0: any reason but ok */
  int64_t extra_ns;  /* the slow error path: the worker stays busy this long, >= 0 */
  int32_t fallback;  /* index in the service's calls of the fallback call, -1: none */
  model_fallback_result result;
  bool invalidate; /* delete the failed call's key from its callee's cache (and the
                      fallback's, when it fails too) */
} model_on_failure_cfg;

/* A downstream call made by a service's handler: one caller-to-callee edge. Each replica of
 * the caller keeps its own channel state for it. */
typedef struct model_call_cfg {
  int service;  /* index of the callee */
  char *method; /* full method name */
  retry_stream_kind stream;
  int64_t request_bytes;
  int64_t stream_items;
  retry_config *policy;    /* owned; NULL = one attempt */
  int64_t deadline_ns;     /* own timeout after the call starts; RETRY_NEVER = policy timeout */
  bool propagate_deadline; /* also bounded by the deadline of the request being served */
  sim_dist network;        /* one-way hop latency */
  model_status_map map;    /* callee's final status into the caller's space */
  int32_t fanout;          /* copies made at once, each its own logical call and operation,
                              1..1000 (> 1 only in a fan-out handler) */
  /* Branching: the call is made only for requests whose method is one of when_method (none:
   * every request) and, among those, with probability `probability` (1: always, no draw).
   * The choice belongs to the logical request being served: every attempt of it goes the same
   * way (model_fanout.c, branch_taken). */
  double probability;  /* (0, 1]; 0 (a zeroed config, the key absent) means 1 */
  char **when_method;  /* full method names (owned), NULL: every method */
  size_t n_when_method;
  model_on_failure_cfg on_failure;
  /* A fallback call (some call's on_failure.fallback): kept after the calls of the list in
   * calls[], made only by on_failure, never by the handler's own loop. */
  bool fallback_only;
} model_call_cfg;

/* A client population's on_failure (model_client_cfg.on_failure): its filter, extra time and
 * result as a handler's (invalidate is refused); fallback is its one fallback call (owned,
 * on_failure.fallback 0) or NULL, named by the population's method slot `slot`, past its
 * methods (model__edge_method). */
typedef struct model_client_fallback_cfg {
  model_on_failure_cfg on_failure;
  model_call_cfg *fallback;
  int32_t slot;
} model_client_fallback_cfg;

/* Whether population c has an on_failure with a fallback call (an edge of its own). */
static inline bool model_client_has_fallback(const model_client_cfg *c) {
  return c->on_failure != NULL && c->on_failure->fallback != NULL;
}

/* Whether call c branches: made with a probability below 1 or for some methods only, or a
 * fallback call, which the handler's own loop never makes (its branch always says no). */
static inline bool model_call_branches(const model_call_cfg *c) {
  return (c->probability > 0.0 && c->probability < 1.0) || c->n_when_method > 0 ||
         c->fallback_only;
}

typedef enum model_fault_kind {
  MODEL_FAULT_REFUSE = 0, /* reply status before the handler: no work, no side effect */
  MODEL_FAULT_FAIL,       /* run the handler (work, side effect), then reply status */
  MODEL_FAULT_SLOWDOWN,   /* multiply service times by factor */
  MODEL_FAULT_STALL,      /* hold the reply for delay (the worker stays busy) */
  MODEL_FAULT_DOWN,       /* the replicas refuse connections: UNAVAILABLE at the caller */
  MODEL_FAULT_PUSHBACK,   /* attach pushback to every failure reply */
  MODEL_FAULT_CAPACITY,   /* only `workers` workers per replica */
  MODEL_FAULT_CACHE_FLUSH,   /* at start_ns, drop `fraction` of the cache's entries */
  MODEL_FAULT_CACHE_CAPACITY, /* the cache holds at most `cache_capacity` entries in the window */
  MODEL_FAULT_CACHE_INVALID   /* a hit in the window reads as invalid: answered with `status` */
} model_fault_kind;

/* One entry of a target's fault timeline, active in [start_ns, end_ns). */
typedef struct model_fault_cfg {
  model_fault_kind kind;
  int64_t start_ns, end_ns; /* end RETRY_NEVER = until the end */
  uint64_t replica_mask;    /* bit r: applies to replica r; all ones = every replica (64
                               bits: MODEL_MAX_REPLICAS, asserted in model_service.c) */
  uint32_t attempt_mask;    /* bit a-1: applies to attempt a (as the server sees it through
                               grpc-previous-rpc-attempts); 0 = every attempt */
  char *method;             /* NULL = every method */
  int64_t max_count;        /* apply to at most this many requests, 0 = no limit */
  double rate;              /* REFUSE, FAIL, STALL: probability per request, (0, 1] */
  int32_t status;           /* REFUSE, FAIL: the reply's status (service's space) */
  int64_t delay_ns;         /* REFUSE, FAIL: time the handler takes first; STALL: hold */
  double factor;            /* SLOWDOWN: > 0 */
  int32_t workers;          /* CAPACITY: >= 0 */
  bool after_headers;       /* FAIL: headers (and stream_items messages) were sent first */
  int64_t stream_items;     /* FAIL with after_headers: messages sent before the failure */
  char *pushback;           /* grpc-retry-pushback-ms value sent with the failure, or NULL */
  char *retry_after;        /* HTTP Retry-After sent with the failure, or NULL */
  double fraction;          /* CACHE_FLUSH: the share of entries dropped, (0, 1] */
  int64_t cache_capacity;   /* CACHE_CAPACITY: entries while it lasts, 0 .. the cache's */
} model_fault_cfg;

/* Faults of one service, at most (a request in flight names the fault it carries in 16
 * bits; the timeline is searched on every arrival, so real scenarios have a handful). */
#define MODEL_MAX_FAULTS 10000

/* Replicas of one service, at most: a fault's replica_mask has one bit a replica, and a
 * request in flight names its replica in a byte (mw_req.replica). The loader refuses more
 * (expt/expt_scenario_int.h), the world asserts it (model__services_create). */
#define MODEL_MAX_REPLICAS 64

/* Optimistic concurrency (the AWS "Exponential Backoff And Jitter" article's contention): the
 * service holds one versioned row. A request reads the version when a worker takes it and
 * writes with that version when its service time ends (the service time is the read-to-write
 * interval); the write fails with `status` if another write landed in between. */
typedef struct model_contention_cfg {
  bool on;
  int32_t status; /* the failed write's reply (service's space): ABORTED / 409 by default */
} model_contention_cfg;

/* Rate-limited admission: a token bucket per service (shared by its replicas, as a gateway in
 * front would be) that starts full with `burst` tokens, earns `rate` tokens a second up to
 * `burst`, and admits a request only when it can spend one whole token. */
typedef struct model_admission_cfg {
  bool on;
  double rate;    /* tokens a second, > 0 */
  double burst;   /* bucket size and initial balance, >= 1 */
  int32_t status; /* the refusal: RESOURCE_EXHAUSTED / 429 by default */
} model_admission_cfg;

/* Controlled delay and adaptive LIFO ("Fail at Scale", Maurer 2015), per replica: when the
 * replica's queue has not been empty at some moment of the last `interval`, a request may wait
 * at most `target`, otherwise at most `interval`; a request found waiting longer when a worker
 * frees is refused with `status` without work. With adaptive_lifo, the queue is served newest
 * first while it is in that overloaded state, oldest first otherwise. */
typedef struct model_codel_cfg {
  bool on;
  int64_t target_ns;   /* M: the queueing bound under overload, > 0 */
  int64_t interval_ns; /* N: the look-back window and the bound otherwise, >= target */
  bool adaptive_lifo;
  int32_t status; /* the refusal: the service's reject status by default */
} model_codel_cfg;

/* Envoy's adaptive concurrency filter (gradient controller), per replica. Defaults are
 * Envoy's: jitter 15 %, request_count 50, percentile p50, min_concurrency 3, buffer 25 %,
 * max_concurrency 1000; both intervals are required, as in Envoy's config. */
typedef struct model_acc_cfg {
  bool on;
  int64_t update_interval_ns;  /* concurrency_update_interval: the sample window, > 0 */
  int64_t min_rtt_interval_ns; /* min_rtt_calc_params.interval: between minRTT windows, > 0 */
  double jitter;               /* the minRTT timer's extra delay: U[0, jitter x interval) */
  int32_t request_count;       /* samples that end a minRTT window, >= 1 */
  double percentile;           /* sample_aggregate_percentile, in (0, 1] */
  int32_t min_concurrency;     /* the limit during a minRTT window and the lowest, >= 1 */
  int32_t max_concurrency;     /* the highest limit, >= min_concurrency */
  double buffer;               /* min_rtt_calc_params.buffer, >= 0 */
  int32_t status;              /* the refusal: 503 (HTTP) / UNAVAILABLE (gRPC) */
} model_acc_cfg;

/* Criticality (the SRE book, "Handling Overload"): every request carries one, from lowest to
 * highest. A request arriving without one (from a client, or from a service that does not
 * label its calls) gets one from the first service that labels it, by method, then by
 * caller, then the default; a handler's downstream calls carry the criticality of the request
 * it serves (propagation). */
typedef enum model_criticality {
  MODEL_CRIT_UNSET = 0,
  MODEL_CRIT_SHEDDABLE,
  MODEL_CRIT_SHEDDABLE_PLUS,
  MODEL_CRIT_CRITICAL,
  MODEL_CRIT_CRITICAL_PLUS,
  MODEL_CRIT_N
} model_criticality;

#define MODEL_CRIT_RULES_MAX 32
typedef struct model_crit_rule {
  char *name; /* a method name, or a caller's (client population or service) name */
  int32_t crit;
} model_crit_rule;

typedef struct model_criticality_cfg {
  bool on;      /* the service labels requests that arrive without a criticality */
  int32_t dflt; /* CRITICAL unless given */
  model_crit_rule methods[MODEL_CRIT_RULES_MAX];
  int n_methods;
  model_crit_rule callers[MODEL_CRIT_RULES_MAX];
  int n_callers;
} model_criticality_cfg;

/* Shedding by criticality: a request of criticality k is refused when its replica already has
 * at least threshold[k] requests queued; thresholds do not decrease with criticality, so a
 * criticality is refused only while every lower one is. INT32_MAX: never shed. */
typedef struct model_shedding_cfg {
  bool on;
  int32_t threshold[MODEL_CRIT_N];
  int32_t status; /* the service's reject status by default */
} model_shedding_cfg;

/* The server-side retry budget and "overloaded; don't retry" (the SRE book): a replica with at
 * least `queue` requests queued refuses retries (attempt > 1, as the request's attempt counter
 * says); when retries are more than `ratio` of its recent arrivals (exponentially decayed,
 * time constant `window`), every refusal for overload it makes (queue full, shedding, a
 * refused retry) carries the don't-retry reply instead of the retryable one. */
typedef struct model_retry_budget_cfg {
  bool on;
  int32_t queue;        /* overloaded at this many queued requests, >= 0 */
  double ratio;         /* in [0, 1] */
  int64_t window_ns;    /* > 0 */
  int32_t retry_status; /* a refused retry, while retries are few: the reject status */
  int32_t status;       /* "don't retry": RESOURCE_EXHAUSTED (gRPC) with ... */
  char *pushback;       /* ... grpc-retry-pushback-ms "-1" by default (A6: do not retry) */
} model_retry_budget_cfg;

/* Where a look-aside cache sits. */
typedef enum model_cache_scope {
  MODEL_CACHE_SCOPE_SERVICE = 0, /* one cache in front of every replica, before the balancer */
  MODEL_CACHE_SCOPE_REPLICA      /* one in each replica (an in-process cache), after the pick;
                                  * emptied when its replica is added (model_cache_world.c) */
} model_cache_scope;

/* A look-aside cache in front of the service, shared by all its callers (model_cache.h holds
 * it; model_cache_world.c wires it in). Each logical request carries one key, drawn from `keys`
 * at its first attempt; a hit is answered OK after hit_time without reaching a replica, a miss
 * goes to the service and its OK reply, heard by a caller that still waits, fills the key.
 * With scope REPLICA each replica has a cache of `capacity` entries of its own, looked up
 * once the balancer has picked the replica. */
typedef struct model_cache_cfg {
  bool on;
  sim_keys_kind keys;  /* uniform or Zipf */
  uint64_t n_keys;     /* keys, 1 .. SIM_KEYS_MAX_N */
  double s;            /* Zipf: the exponent, (0, SIM_KEYS_MAX_S] */
  int64_t capacity;    /* entries, 1 .. MODEL_CACHE_CONFIG_MAX (the loader's bound) */
  int64_t ttl_ns;      /* an entry's time to live; 0: entries never expire */
  sim_dist hit_time;   /* the cache's latency for a hit (constant 0 by default) */
  bool coalesce;       /* one miss in flight per key; the others wait for its reply */
  model_cache_scope scope; /* one cache for the service (default) or one per replica */
} model_cache_cfg;

/* Work that grows with the state (model_work.c): the service time is multiplied by
 * (1 + slowdown_per_busy x (busy - 1) + per_queued x queued) x size(t) x gc(held), busy and
 * queued counted on the replica when a worker takes the request (queued: those still waiting
 * behind it), size(t) a piecewise-linear profile of the request size over time (1 without),
 * gc(held) = 1 / (1 - min(held / held_limit, 0.99)) with held the requests the replica holds
 * (queued and worked). on: some term beyond slowdown_per_busy is set (a world with only that
 * term keeps its own, older arithmetic, bit for bit). */
typedef struct model_work_cfg {
  bool on;
  double per_queued;        /* >= 0 */
  bool has_size;            /* size is given */
  sim_rate_profile size;    /* multiplier per point, > 0 (the rate field holds it) */
  int64_t held_limit;       /* 0: no collector term */
} model_work_cfg;

typedef struct model_service_cfg {
  char *name;
  retry_space space;      /* statuses this service replies with */
  int32_t replicas;       /* >= 1, <= MODEL_MAX_REPLICAS */
  int32_t workers;        /* per replica, >= 1 */
  int32_t queue_capacity; /* per replica, >= 0 (0: reject when all workers are busy) */
  model_queue_kind queue;
  int32_t reject_status;    /* reply when the queue is full */
  char *reject_pushback;    /* grpc-retry-pushback-ms sent with that reply, or NULL */
  char *reject_retry_after; /* Retry-After sent with that reply, or NULL */
  sim_dist service_time;
  double slowdown_per_busy; /* service time x (1 + k * (busy workers - 1)), k >= 0 */
  model_deadline_mode deadline;
  model_lb_kind lb;
  bool lb_avoid_previous; /* a retry avoids the replica its call's last attempt used */
  model_effect_point effect;
  bool dedup; /* idempotency keys: a repeated operation is not executed again */
  model_fanout_kind calls_mode;
  int32_t wait_for; /* fan-out: done once this many calls succeeded, failed once more than
                       n - wait_for failed (n: the calls, each counted fanout times); the
                       rest are left to finish. 0: wait for every call */
  bool cancel_rest; /* wait_for: the calls left are cancelled once the handler goes on
                       (default); false: they run to their end, unheard */
  model_call_cfg *calls;
  size_t n_calls;
  model_fault_cfg *faults;
  size_t n_faults; /* at most MODEL_MAX_FAULTS (a request names its fault in 16 bits) */
  model_contention_cfg contention;
  model_admission_cfg admission;
  model_codel_cfg codel;
  model_acc_cfg acc;
  model_criticality_cfg criticality;
  model_shedding_cfg shedding;
  model_retry_budget_cfg retry_budget;
  model_cache_cfg cache;
  model_work_cfg work;
  model_ctl_cfg *ctl; /* replicas' health and count (model_ctl.h), NULL: none (owned) */
} model_service_cfg;

/* }================================================================== */

typedef struct model_config {
  char *name;          /* the scenario's name */
  uint64_t seed;       /* scenario seed (the command line may override it) */
  int64_t duration_ns; /* arrivals happen in [0, duration) */
  int64_t drain_ns;    /* after the duration, wait at most this long for calls in flight */
  int64_t warmup_ns;   /* calls started before it are left out of the results' figures
                          (model_stats.h says which), 0 <= warmup < duration */
  int64_t bucket_ns;   /* time-series bucket, default 1 s */
  model_client_cfg *clients;
  size_t n_clients; /* >= 1 */
  model_service_cfg *services;
  size_t n_services; /* >= 1; the call graph has no cycle */
  /* Every fast path of the world forced off (models/model_feature.c): the same outputs, more
   * work. For the differential test; RETRYSIM_NO_FAST_PATHS=1 in the environment does the
   * same for a program that does not set it. */
  bool fast_paths_off;
  /* Operators, scheduled actions and herds (models/model_ops.h), owned; NULL: none. */
  struct model_ops_cfg *ops;
} model_config;

/* Frees c and everything it owns (names, policies, arrays). NULL is a no-op. */
void model_config_destroy(model_config *c);

#endif /* MODEL_CONFIG_H */
