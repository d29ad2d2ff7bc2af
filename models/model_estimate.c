/*
 * model_estimate.c: the memory a world will take, from its config (model_estimate.h). Every
 * figure is the sizeof of the struct the world allocates (model_int.h) plus the allocator's
 * overhead, so that the estimate follows the structs as they change. Saturating arithmetic:
 * a config the loader accepts can ask for more than 2^64 bytes (a million clients in each of
 * thousands of populations).
 */
#include "models/model_estimate.h"

#include <gsl/gsl_rng.h>

#include "models/model_cache.h"
#include "models/model_int.h"

/* glibc's malloc rounds a request up to 16 bytes and keeps 8 of its own: 16 per block is
 * close enough for an estimate whose purpose is a limit in gibibytes. */
#define MALLOC_OVERHEAD 16

/* The time series of the world: the totals (9 columns), 4 per service, up to 3 per
 * population (tokens, budget, breaker) and room for per-edge columns (8 each), an upper
 * bound that stays right when columns are added to the world. */
#define TS_TOTAL_COLS 16
#define TS_SERVICE_COLS 8
#define TS_POP_COLS 3
#define TS_EDGE_COLS 8

static uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static uint64_t mul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* One gsl_rng of the kind sim_rng_stream_create makes: the struct and taus2's state, two
 * allocations (a service's, a replica's and a population's streams). */
static uint64_t rng_bytes(void) {
  return sizeof(gsl_rng) + gsl_rng_taus2->size + 2 * MALLOC_OVERHEAD;
}

/* What a caller's channel adds for its policy's shared state: the target held in the channel's
 * block (model__channel_open) and its pointer (a replica's block is an allocation of its own); a
 * breaker is a block of its own (retry_breaker.c: its struct with a copy of its config, then 16
 * bytes a second of a time window or a byte a call of a count window, and a byte per half-open
 * probe), counted here from above. */
static uint64_t target_bytes(const retry_config *policy) {
  const retry_target_config *tc = retry_config_target(policy);
  uint64_t n = retry_target_size(tc) + sizeof(retry_target *);
  if (tc->has_breaker) {
    const retry_breaker_config *b = &tc->breaker;
    uint64_t window = b->window_size > 0 ? (uint64_t)b->window_size : 0;
    n += sizeof(retry_breaker_config) + 128 + MALLOC_OVERHEAD +
         (b->kind == RETRY_BREAKER_TIME_WINDOW ? 16 * window : window) +
         (b->half_open_calls > 0 ? (uint64_t)b->half_open_calls : 0);
  }
  return n;
}

/* A policy keeps shared state (one retry_target per caller) when it throttles, budgets,
 * adapts or breaks; model_world.c makes a target in exactly those cases. */
static bool has_shared_state(const retry_config *policy) {
  if (policy == NULL) return false;
  const retry_target_config *tc = retry_config_target(policy);
  return tc != NULL && retry_target_config_has_parts(tc);
}

/* Branching calls (model_call_cfg.probability, when_method) add nothing to the world's
 * structure: their routes stay in the config, and the 8-byte branch word they give each ledger
 * operation lives in the operations' pool, which follows the work in flight like the calls' and
 * requests' pools, none of which this estimate counts. */
uint64_t model_world_estimate_bytes(const model_config *cfg) {
  uint64_t total = sizeof(model_world) + MALLOC_OVERHEAD;
  uint64_t n_edges = cfg->n_clients, cols = TS_TOTAL_COLS;
  for (size_t i = 0; i < cfg->n_clients; i++) {
    const model_client_cfg *cl = &cfg->clients[i];
    /* The client's three streams are inside its struct (sim_rng); its channel's block of
     * target pointers and targets follows it in the population's array. */
    uint64_t per_client = sizeof(mw_client);
    if (has_shared_state(cl->policy)) per_client += target_bytes(cl->policy);
    total = add(total, sizeof(mw_pop) + rng_bytes() + 3 * MALLOC_OVERHEAD +
                           cl->n_methods * (sizeof(double) + sizeof(void *)));
    total = add(total, mul((uint64_t)cl->count, per_client));
    cols += TS_POP_COLS;
    /* Its own on_failure: <client>_on_failure_rps, a fallback's edge, and a record per
     * failure on its error path (those follow the calls in flight: not here). */
    if (cl->on_failure != NULL) {
      cols++;
      n_edges += model_client_has_fallback(cl);
    }
  }
  for (size_t s = 0; s < cfg->n_services; s++) {
    const model_service_cfg *sv = &cfg->services[s];
    uint64_t per_replica = sizeof(mw_replica) + 2 * rng_bytes() + MALLOC_OVERHEAD;
    for (size_t j = 0; j < sv->n_calls; j++)
      if (has_shared_state(sv->calls[j].policy)) per_replica += target_bytes(sv->calls[j].policy);
    total = add(total, sizeof(mw_service) + sizeof(model_service_stats) + rng_bytes() +
                           4 * MALLOC_OVERHEAD + (sv->n_calls + 1) * 2 * sizeof(void *) +
                           (sv->n_faults + 1) * sizeof(int64_t));
    /* Replica control (model_ctl.c): the replicas allocated for the run (the most it may
     * have), the world's copy of the config, and a detector per edge into the service. */
    int32_t allocated = sv->replicas;
    if (sv->ctl != NULL) {
      if (sv->ctl->replicas_max > allocated) allocated = sv->ctl->replicas_max;
      total = add(total, 2048 + sizeof(model_service_cfg) + rng_bytes() + 4 * MALLOC_OVERHEAD);
      if (sv->ctl->autoscaler_on) total = add(total, 4096); /* the HPA's histories */
      cols += 2;
    }
    total = add(total, mul((uint64_t)allocated, per_replica));
    /* A look-aside cache: its table, allocated whole at creation (one per replica allocated
     * with scope replica), its three streams and the key every operation then carries
     * (operations follow the work in flight: not here). */
    if (sv->cache.on) {
      uint64_t one = model_cache_bytes_for((size_t)sv->cache.capacity);
      total = add(total, one + 3 * rng_bytes() + 128 + 2 * MALLOC_OVERHEAD);
      if (sv->cache.scope == MODEL_CACHE_SCOPE_REPLICA) /* the other replicas' caches */
        total = add(total, mul((uint64_t)allocated - 1, one + MALLOC_OVERHEAD) +
                               (uint64_t)allocated * sizeof(void *));
    }
    n_edges += sv->n_calls; /* fallback calls included: each is an edge of its own */
    cols += TS_SERVICE_COLS;
    /* <service>_work_factor, and <service>_on_failure_rps once for its calls' on_failure. */
    if (sv->work.on) cols++;
    for (size_t j = 0; j < sv->n_calls; j++)
      if (sv->calls[j].on_failure.on) {
        cols++;
        break;
      }
  }
  /* Operators and herds (model_ops.h): an edge per init call, a herd's state per client. */
  if (cfg->ops != NULL) {
    n_edges += cfg->ops->n_inits;
    total = add(total, model__ops_estimate_bytes(cfg));
    cols += cfg->n_clients; /* at most one <pop>_clients_up each */
  }
  total = add(total, mul(n_edges, sizeof(mw_edge) + sizeof(model_edge_stats) + sizeof(void *)));
  /* An outlier detector per edge into a service that has one. */
  for (size_t s = 0; s < cfg->n_services; s++) {
    const model_service_cfg *sv = &cfg->services[s];
    for (size_t j = 0; j < sv->n_calls; j++) {
      const model_ctl_cfg *k = cfg->services[sv->calls[j].service].ctl;
      if (k != NULL && k->outlier_on) total = add(total, sizeof(model_eject) + MALLOC_OVERHEAD);
    }
  }
  for (size_t i = 0; i < cfg->n_clients; i++) {
    const model_ctl_cfg *k = cfg->services[cfg->clients[i].target].ctl;
    if (k != NULL && k->outlier_on) total = add(total, sizeof(model_eject) + MALLOC_OVERHEAD);
  }
  cols = add(cols, mul(n_edges, TS_EDGE_COLS));
  /* Buckets: (duration + drain) / bucket, rounded up, plus one. */
  uint64_t span = (uint64_t)cfg->duration_ns + (uint64_t)cfg->drain_ns;
  uint64_t buckets = cfg->bucket_ns > 0 ? span / (uint64_t)cfg->bucket_ns + 2 : 2;
  total = add(total, mul(2, mul(buckets, mul(cols, sizeof(double)))));
  return total;
}
