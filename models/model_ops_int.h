/*
 * model_ops_int.h: the running state of operators and herds, shared by model_herd.c (clients
 * that restart, initialise and back off; pauses) and model_operator.c (rules, scheduled
 * actions, the record of firings). Owned by the world (w->ops), built only when the config has
 * operators, events or herds.
 */
#ifndef MODEL_OPS_INT_H
#define MODEL_OPS_INT_H

#include "models/model_int.h"

/* Where a client of a herded population stands. */
enum {
  MW_HC_UP = 0, /* serving: its calls go out */
  MW_HC_DOWN,   /* restarting: waits for its start (after the spread or a backoff) */
  MW_HC_INIT    /* started: its initialisation call is in flight */
};

/* A population that some action restarts, pauses or resumes. Per client: its state, its
 * failed inits in a row (the backoff's k), when it last came up, its pending start and the
 * restart action it is in (whose init call and backoff it follows). */
typedef struct mw_herd {
  mw_pop *p;               /* NULL: the population has no herd */
  uint8_t *state;          /* MW_HC_* */
  int32_t *fails;          /* failed inits since it was last up long enough */
  int64_t *up_since_ns;    /* when it last came up (INT64_MIN: never went down) */
  sim_event_handle *start; /* its pending start, SIM_EVENT_NONE */
  int32_t *action;         /* the operator (index) whose restart it is in, -1 */
  mw_child *child;         /* its init call in flight (to cancel it), call NULL: none */
  int64_t n_up;            /* clients up */
  bool paused;
  double factor;     /* a rate action's multiplier of the arrival rate, (0, 1]; 1: none */
  gsl_rng *rng;      /* which clients restart, the spread, the backoff's jitter */
  gsl_rng *rng_rate; /* the rate action's thinning, NULL when no action throttles it */
  int col_up;        /* <pop>_clients_up */
  model_herd_stats *stats;
} mw_herd;

/* A rule's or an event's running state. */
typedef struct mw_opstate {
  int col;               /* a rule's column, -1 for an event */
  bool rate;             /* the column is a count per bucket (divided by the bucket's seconds) */
  bool armed;            /* may fire at the next crossing */
  int64_t streak_ns;     /* start of the first bucket of the current true streak, -1 none */
  int64_t cap_fired;     /* entries allocated in the stats' fired_at_ns */
} mw_opstate;

struct mw_ops {
  const model_ops_cfg *cfg;
  mw_herd *herds;         /* per population (n_pops) */
  mw_method *inits;       /* per init call: its policy and fast paths */
  mw_opstate *st;         /* per operator */
  model_operator_stats *stats; /* per operator (the results point here) */
  model_herd_stats *herd_stats; /* per herded population, in population order */
  size_t n_herds;
  model_service_cfg **svc_cfgs; /* per service: its own config with an inert capacity fault
                                   (a capacity action) and an inert refuse fault (a shed
                                   action), else NULL (model_operator.c) */
  const model_service_cfg **svc_prev; /* per service: the config svc_cfgs[i] replaced */
  int32_t *shed_fault; /* per service: the index of its shed action's refuse fault, -1 */
};

/* model_herd.c */
/* Allocates the herds (before the time series' columns and the populations' clients). */
int model__herds_create(model_world *w);
/* Adds each herd's <pop>_clients_up column. */
int model__herds_columns(model_world *w, int (*column)(model_world *, const char *, const char *,
                                                       bool));
/* Points the init edges at the herds' handler (once the edges' handlers are set). */
void model__herds_wire(model_world *w);
void model__herds_destroy(model_world *w);
void model__herds_sample(model_world *w, double *row);
void model__herds_report(model_world *w);

#endif /* MODEL_OPS_INT_H */
