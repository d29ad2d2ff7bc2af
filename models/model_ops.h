/*
 * model_ops.h: what operators and herds are, as plain structs (the config's `ops`, filled by
 * expt/expt_scenario_ops.c) and the world's entry points for them (model_herd.c: populations
 * that restart, make an initialisation call and back off; model_operator.c: rules read at each
 * bucket's end and actions scheduled at fixed times). A config without operators, events or
 * herds has ops == NULL and the world builds none of this.
 */
#ifndef MODEL_OPS_H
#define MODEL_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "retry/retry.h"
#include "sim/sim_dist.h"

/* {==================================================================
 * Config
 * =================================================================== */

/* How a client whose initialisation call failed waits before it restarts. The k-th failure in
 * a row (k = 1, 2, ...) waits min(initial x multiplier^(k-1), max), then with jitter j a
 * uniform share of up to j of it is taken off (j = 1: "full jitter", uniform in [0, d)).
 * A client that stayed up for reset_ns starts again from k = 1 at its next failure. */
typedef enum model_backoff_kind {
  MODEL_BACKOFF_NONE = 0,  /* restart at once (no backoff at all) */
  MODEL_BACKOFF_CRASHLOOP, /* Kubernetes CrashLoopBackOff: 10 s doubling to 300 s, reset 10 min */
  MODEL_BACKOFF_CUSTOM     /* the fields below as written */
} model_backoff_kind;

typedef struct model_backoff_cfg {
  model_backoff_kind kind;
  int64_t initial_ns; /* > 0 */
  int64_t max_ns;     /* >= initial */
  double multiplier;  /* >= 1 */
  double jitter;      /* [0, 1] */
  int64_t reset_ns;   /* > 0 */
} model_backoff_cfg;

/* The call a restarted client makes before its normal traffic. Its policy keeps no channel
 * state (no throttle, budget, breaker or limiter: the loader refuses them), so the call needs
 * no target. */
typedef struct model_init_cfg {
  int pop;              /* the population (index) */
  int service;          /* the callee (index) */
  char *method;         /* full method name (owned) */
  retry_config *policy; /* owned; NULL: one attempt */
  int64_t deadline_ns;  /* after the call starts; RETRY_NEVER: the policy's timeout, else none */
  sim_dist network;     /* one-way hop latency (the population's by default) */
  int32_t slot;         /* the population's method slot that names it: n_methods + k, an entry
                           past its counted methods (model_herd.c) */
} model_init_cfg;

typedef enum model_action_kind {
  MODEL_ACTION_PAUSE = 0, /* a population stops making calls */
  MODEL_ACTION_RESUME,    /* ... and starts again */
  MODEL_ACTION_RESTART,   /* a population's clients (or a fraction) restart: a herd */
  MODEL_ACTION_FLUSH,     /* a service's look-aside cache drops a fraction of its entries */
  MODEL_ACTION_CAPACITY,  /* a service's workers per replica become `workers` */
  MODEL_ACTION_REPLICAS,  /* a service runs `replicas` replicas (model_ctl.h) */
  MODEL_ACTION_SHED,      /* a service refuses `fraction` of arriving requests with `status` */
  MODEL_ACTION_POLICY,    /* an edge's calls take `policy` from `delay_ns` after the action */
  MODEL_ACTION_RATE       /* an open-loop population's arrival rate is multiplied by `fraction` */
} model_action_kind;

typedef struct model_action_cfg {
  model_action_kind kind;
  int pop;                   /* PAUSE, RESUME, RESTART, RATE: the population, else -1 */
  int service;               /* FLUSH, CAPACITY, REPLICAS, SHED: the service, else -1 */
  double fraction;           /* RESTART: share of clients; FLUSH: share of entries; (0, 1];
                                SHED: share of arrivals refused, [0, 1] (0: shedding stops);
                                RATE: the arrival rate's multiplier, (0, 1] (1: restored) */
  int64_t spread_ns;         /* RESTART: each restart at a uniform time in [0, spread) */
  int init;                  /* RESTART: its init call (index into ops.inits), -1: none */
  model_backoff_cfg backoff; /* RESTART: after a failed init */
  int32_t workers;           /* CAPACITY: workers per replica, >= 1 */
  int32_t replicas;          /* REPLICAS: 1 .. MODEL_MAX_REPLICAS */
  int64_t startup_delay_ns;  /* REPLICAS: before an added replica serves, -1: the service's */
  int32_t status;            /* SHED: the refusal (the service's space) */
  /* POLICY: the edge is population `pop`'s calls to its target (pop >= 0), or service
   * `service`'s calls to service `callee`. */
  int callee;
  retry_config *policy; /* POLICY: owned; no channel-state parts (the loader refuses them) */
  int64_t delay_ns;     /* POLICY: the propagation delay, >= 0 */
} model_action_cfg;

/* A rule's condition: a time-series column above or below a value, held for a while. */
typedef struct model_when_cfg {
  char *column;    /* a column name of timeseries.csv (owned) */
  bool above;      /* above: value > threshold; else value < threshold */
  double value;    /* the threshold (a rate column in its per-second unit) */
  int64_t for_ns;  /* held this long (whole buckets, the bucket's end counted), >= 0 */
  int64_t after_ns; /* a bucket that starts before this never holds (0: from the start) */
} model_when_cfg;

/* An operator: a rule (has_when) or an action at a fixed time (at_ns). */
typedef struct model_operator_cfg {
  char *name; /* owned */
  bool has_when;
  model_when_cfg when;
  bool once;      /* a rule: fires at most once (else once per crossing) */
  int64_t at_ns;  /* an event: when it fires */
  model_action_cfg action;
} model_operator_cfg;

typedef struct model_ops_cfg {
  model_operator_cfg *ops; /* rules first (the "operators" key), then events ("events") */
  size_t n_ops, n_rules;
  model_init_cfg *inits; /* every restart's init call, each one edge of the world */
  size_t n_inits;
} model_ops_cfg;

/* Frees c and what it owns; NULL is a no-op. */
void model_ops_cfg_destroy(model_ops_cfg *c);

/* The name of action kind k ("pause", "resume", "restart", "flush", "capacity", "replicas",
 * "shed", "policy", "rate"). */
const char *model_action_name(model_action_kind k);

/* The delay before the k-th restart in a row (k >= 1) under b, for a uniform draw u in [0, 1)
 * (used only when b has jitter). */
int64_t model_backoff_delay(const model_backoff_cfg *b, int32_t k, double u);

/* }================================================================== */

#endif /* MODEL_OPS_H */
