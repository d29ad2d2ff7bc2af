/*
 * model_int.h: the world's internal objects, shared by the files of models/. A logical call
 * (mw_call) runs one retry engine instance on one edge; each of its attempts is a request
 * (mw_req) that travels to a service, waits in a replica's queue, holds a worker and travels
 * back. Calls, requests and ledger operations come from free-list pools, so memory follows the
 * number in flight, never the number simulated.
 */
#ifndef MODEL_INT_H
#define MODEL_INT_H

#include <assert.h>
#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "models/model_acc.h"
#include "models/model_config.h"
#include "models/model_ops.h"
#include "models/model_overload.h"
#include "models/model_stats.h"
#include "models/model_world.h"
#include "retry/retry.h"
#include "retry/retry_parts.h" /* the throttle and breaker a gauge reads */
#include "sim/sim_event.h"
#include "sim/sim_hist.h"
#include "sim/sim_rng.h"
#include "sim/sim_series.h"

typedef struct mw_call mw_call;
typedef struct mw_req mw_req;
typedef struct mw_op mw_op;
typedef struct mw_client mw_client;
typedef struct mw_pop mw_pop;
typedef struct mw_service mw_service;
typedef struct mw_replica mw_replica;

/* A static function of the hot path inlined into its few callers whatever the compiler's
 * estimate of its size (gcc and clang): a call's way through the world is some twenty
 * functions deep, and their calls, saves and restores were a tenth of an M/M/1's
 * instructions. Elsewhere a hint. */
#if defined(__GNUC__) || defined(__clang__)
#define MODEL_HOT inline __attribute__((always_inline))
#else
#define MODEL_HOT inline
#endif

/* A function of a mechanism most worlds do not use, called from the hot path behind a test of
 * its flag: marked cold, so that the compiler keeps the call out of the hot path's line (no
 * extra saves and restores in its caller for worlds that never make it). */
#if defined(__GNUC__) || defined(__clang__)
#define MODEL_COLD __attribute__((cold))
#else
#define MODEL_COLD
#endif

/* Checks of the packed storage that cost too much for a release build: which phase an
 * overlaid field belongs to, which object a pointer found by arithmetic points into. On in the
 * sanitizer builds (every test runs there once) or with -DMODEL_CALL_CHECK; a no-op (the
 * expression is not evaluated) otherwise, so the hot path pays nothing. */
#if defined(__SANITIZE_ADDRESS__) || defined(MODEL_CALL_CHECK)
#define MODEL_CHECKS 1
#define MODEL_CHECK(x) assert(x)
#else
#define MODEL_CHECKS 0
#define MODEL_CHECK(x) ((void)0)
#endif

/* {==================================================================
 * Pools: fixed-size objects carved from chunks, recycled through a free list
 * =================================================================== */

typedef struct mw_pool {
  const retry_allocator *alloc; /* the kernel's (borrowed): chunks come from it */
  size_t obj_size;              /* bytes per object (>= sizeof(void *)) */
  size_t per_chunk;             /* objects per chunk */
  void **chunks;                /* every chunk, freed at destroy */
  size_t n_chunks, cap_chunks;
  void *free_list; /* first free object; each free object starts with the next pointer */
  int64_t in_use;  /* objects handed out and not returned */
  int64_t peak;    /* largest in_use seen */
} mw_pool;

/* alloc is borrowed and must outlive the pool (the kernel's allocator does). */
void model__pool_init(mw_pool *p, const retry_allocator *alloc, size_t obj_size, size_t per_chunk);
/* Returns an object, or NULL when out of memory. Not zeroed: it holds what its last user left
 * (zeros the first time), so the caller sets every field it reads, field by field. Built
 * with AddressSanitizer (or -DMODEL_POOL_POISON) every object comes filled with 0xa5 bytes,
 * so that a field left unset shows in the tests. */
static inline void *model__pool_get(mw_pool *p);
static inline void model__pool_put(mw_pool *p, void *obj);
void model__pool_free(mw_pool *p);
/* Adds a chunk to p's free list: 0, or -1 when out of memory (model__pool_get's slow path). */
int model__pool_grow(mw_pool *p);

/* Inline: a call takes and gives back a few objects. */
static inline void *model__pool_get(mw_pool *p) {
  if (p->free_list == NULL && model__pool_grow(p) < 0) return NULL;
  void *obj = p->free_list;
  p->free_list = *(void **)obj;
#if defined(__SANITIZE_ADDRESS__) || defined(MODEL_POOL_POISON)
  /* Sanitizer builds hand out garbage, so a field a caller forgets to set (a new one) reads
   * as 0xa5 bytes there and the tests show it, rather than reading a stale value in silence. */
  memset(obj, 0xa5, p->obj_size);
#endif
  if (++p->in_use > p->peak) p->peak = p->in_use;
  return obj;
}

static inline void model__pool_put(mw_pool *p, void *obj) {
  *(void **)obj = p->free_list;
  p->free_list = obj;
  p->in_use--;
}

/* }================================================================== */

/* {==================================================================
 * Edges, channels and calls
 * =================================================================== */

/* A target's time-series figures, as integers so that sums of them are exact: throttle
 * milli-tokens, budget available, breaker open / half-open (0 or 1). */
typedef struct mw_gauge {
  int64_t tokens_milli, budget, open, half_open;
  /* the client-side limiters (an edge with one: mw_edge.gauge_limits): the concurrency
   * limit and the permits held, and the AWS adaptive limiter's fill rate in fixed point */
  int64_t limit, limit_held, aws_rate_fix;
} mw_gauge;

/* An AWS fill rate (sends per second) in fixed point, 2^-24 a unit: a million holders at
 * 500,000 sends a second stay below 2^63, and the sum does not depend on the order holders
 * change in. The mean differs from a mean of the doubles by at most 2^-25, far below the
 * 6 significant digits the outputs keep for rates of that order. */
#define MODEL_AWS_RATE_ONE 16777216.0 /* 2^24 */
static inline int64_t model__aws_rate_fix(double r) {
  return r > 0 ? (int64_t)(r * MODEL_AWS_RATE_ONE + 0.5) : 0;
}

/* Adds after - before to sum. */
static inline void model__gauge_add(mw_gauge *sum, const mw_gauge *before, const mw_gauge *after) {
  sum->tokens_milli += after->tokens_milli - before->tokens_milli;
  sum->budget += after->budget - before->budget;
  sum->open += after->open - before->open;
  sum->half_open += after->half_open - before->half_open;
  sum->limit += after->limit - before->limit;
  sum->limit_held += after->limit_held - before->limit_held;
  sum->aws_rate_fix += after->aws_rate_fix - before->aws_rate_fix;
}

/* What the caller of a call hears when the call ends: everything the summary counts of it.
 * done_ctx and slot are what the caller gave at the start (model__call_start). */
typedef struct mw_end {
  void *done_ctx;      /* the caller's context (an mw_client, an mw_req) */
  void *handle;        /* the call that ended, as mw_child.call holds it (NULL: it ended before it
                          took one, refused at its start) */
  int64_t start_ns;    /* when the call started */
  int64_t deadline_ns; /* its absolute deadline, RETRY_NEVER if none */
  int64_t stream_items, stream_duplicates; /* server streams: messages delivered, again */
  int32_t slot;   /* the caller's index for it: a population's method, or a handler's number
                     for the call (mw_service.call_of_child) */
  int32_t status; /* final status, in the callee's space */
  int32_t retries, hedges;
  retry_space space; /* the space of status */
  retry_stop reason;
  bool ok;       /* status is OK in space */
  bool measured; /* started at or after the warmup */
} mw_end;

/* The caller's handler of its calls' ends (one per edge: a population's, a service's). The
 * call is freed right after it returns; it may start new calls. */
typedef void (*mw_call_done_fn)(model_world *w, const mw_end *e);

/* One caller-to-callee edge. */
typedef struct mw_edge {
  int callee;                  /* service index */
  retry_space caller_space;    /* space the caller wants statuses in */
  const retry_config *policy;  /* NULL: one attempt */
  const model_status_map *map; /* NULL for client edges (no mapping) */
  const sim_dist *network;     /* one-way hop latency */
  bool zero_hop;               /* network is a constant 0: a hop costs no event */
  bool has_target;             /* the policy has shared state (throttle, budget, ...) */
  /* The callee's space (its config's, a retry_space): kept here for the per-call path, which
   * would otherwise index w->cfg->services, whose 2056-byte stride costs three instructions
   * a lookup where the edge, already loaded, costs one. In the padding before on_done. */
  uint8_t callee_space;
  mw_call_done_fn on_done;     /* its caller's handler of a call's end */
  model_world *w;              /* the world it belongs to */
  model_edge_stats *stats;     /* in the world's results */
  /* Who holds the edge's shared state: population `pop` (>= 0, target 0 of each client's
   * channel), or each replica of service `svc` (target `slot` of its channel). */
  int pop, svc;
  size_t slot;
  /* time-series columns: counters, then shared-state gauges (-1 when absent) */
  int col_attempt, col_retry, col_failure;
  int col_tokens, col_budget, col_breaker, col_reject_p;
  int col_limit, col_limit_in_flight; /* a concurrency limiter's mean limit and permits held */
  int col_aws_rate;                   /* the AWS adaptive limiter's mean fill rate */
  /* The holders' shared state summed, kept up to date around every engine call on the edge
   * (model__gauge_*), so a time-series row costs O(edges), not O(holders). Live only when
   * every configured part changes in engine calls alone: not with a Finagle budget or
   * adaptive throttling, whose windows expire with time (those edges keep lazy gauges). */
  bool gauge_live;
  mw_gauge gauge;
  /* On an edge with a Finagle budget or adaptive throttling (not throttle_shared): the
   * holders' figures as last read, their sums, the holders called since the last sample
   * (model__gauge_touch) and when each holder's windows next expire; the sampler reads again
   * only those (model_world.c), so a row costs O(holders changed), not O(holders). */
  struct mw_lazy *lazy;
  /* Its holders' throttle is one bucket per (replica, callee) shared with the replica's other
   * edges to the same callee (a profile with throttle_per_process; model__channel_open): the
   * edge's gauges then walk its holders, since the other edges' calls move the bucket too. */
  bool throttle_shared;
  /* Its live gauges may read the throttle and the breaker alone (model__gauge_read): no part
   * of its policy's shared state has other figures (MW_FAST_GAUGE_THIN, model_feature.c). */
  bool gauge_no_budget;
  /* Its policy has a concurrency limiter or the AWS adaptive limiter: the gauges also sum
   * their figures (mw_gauge.limit ...), which change only inside engine calls. */
  bool gauge_limits;
  int col_on_failure; /* <caller>_on_failure_rps, for an edge whose call has an on_failure */
  /* A herd's initialisation call (model_herd.c): its index in the config's inits, the
   * population's in pop; -1 for every other edge. */
  int32_t init;
  /* A population's fallback call (model_client_fallback.c), pop its population's: its method's
   * policy and fast paths (the population's methods are the population's edge's). */
  bool pop_fallback;
  uint8_t fb_fast;
  const retry_method_config *fb_mc;
} mw_edge;

_Static_assert(RETRY_SPACE_HTTP <= UINT8_MAX, "mw_edge.callee_space holds any retry_space");
_Static_assert(sizeof(void *) != 8 || sizeof(mw_edge) == 216, "mw_edge is 216 bytes on LP64");

/* The fast paths: each skips the work of features an object does not have. Which object may
 * take which is derived from one table of features (model_feature.c) when the world is
 * built, and kept in flags the hot path reads: mw_service.plain_*, mw_edge.gauge_no_budget,
 * and per method of a caller mw_method.fast (given to each call in mw_call_args.fast). */
enum {
  MW_FAST_ARRIVAL = 1,    /* a service skips the arrival screen (mw_service.plain_arrival) */
  MW_FAST_START = 2,      /* a worker starts without deadline check or contention read */
  MW_FAST_TIME = 4,       /* work is a draw of the service time and nothing else */
  MW_FAST_BARE = 8,       /* a call goes without the engine: its one request is the call */
  MW_FAST_NO_EXT = 16,    /* a call has no mw_call_ext */
  MW_FAST_GAUGE_THIN = 32, /* live gauges read the throttle and the breaker alone */
  MW_FAST_UNGATED = 64,    /* a population's arrivals never ask for its clients' state
                              (mw_pop.gated clear) */
  MW_FAST_NO_OPS = 128,    /* a bucket's end runs no operator (mw_world.fast.ops_sample clear) */
  MW_FAST_ALL = 255
};

/* Sets every fast-path flag of w from the table of features (model_feature.c): at the
 * world's creation, once its services, populations and channels exist, and again when a
 * trace sink comes or goes. Every fast path is off when the world's fast.off is set. Never
 * allocates, never fails. */
void model__features_apply(model_world *w);
/* For the tests: the table's rows, and w's flags again without row `row` (-1: every row), to
 * show that a row left out changes what the world does. */
size_t model__features_count(void);
const char *model__feature_name(size_t i);
void model__features_skip(model_world *w, int row);
/* Whether population p runs the gated event functions (model_client.c): from the table's
 * population rows, at the world's creation. */
bool model__pop_is_gated(const model_world *w, const mw_pop *p);

/* Reads t's figures (t not NULL) for the sums of its edge e. A policy with neither budget
 * nor adaptive throttling (e->gauge_no_budget) has only a throttle and a breaker to read:
 * straight from the parts, as retry_target_stats_get would give them, without filling its
 * whole report (twice per engine call on the edge). */
static inline void model__gauge_read(const mw_edge *e, const retry_target *t, mw_gauge *g) {
  if (e->gauge_no_budget) {
    retry_target *m = (retry_target *)(uintptr_t)t; /* the accessors only read here */
    const retry_throttle *th = retry_target_throttle(m);
    const retry_breaker *br = retry_target_breaker(m);
    retry_breaker_state b = br != NULL ? retry_breaker_state_get(br) : RETRY_BREAKER_CLOSED;
    g->tokens_milli = th != NULL ? th->milli_tokens : -1;
    g->budget = -1;
    g->open = b == RETRY_BREAKER_OPEN;
    g->half_open = b == RETRY_BREAKER_HALF_OPEN;
    g->limit = g->limit_held = g->aws_rate_fix = 0;
    return;
  }
  retry_target_stats s;
  retry_target_stats_get(t, 0, &s); /* time matters only to the parts gauges leave out */
  g->tokens_milli = s.throttle_milli_tokens;
  g->budget = s.budget_available;
  g->open = s.breaker == RETRY_BREAKER_OPEN;
  g->half_open = s.breaker == RETRY_BREAKER_HALF_OPEN;
  g->limit = s.limit > 0 ? s.limit : 0;
  g->limit_held = s.limit_in_flight;
  g->aws_rate_fix = model__aws_rate_fix(s.aws_fill_rate);
}

/* model_gauge.c */
/* Notes that an engine call on e touched holder target t (e->lazy not NULL). */
void model__gauge_touch(mw_edge *e, const retry_target *t);
/* Whether every edge's kept sums equal a walk over its holders at now, the time of the last
 * sample (the sanitizer builds check it at every sample, the tests too). */
bool model__gauges_check(const model_world *w, int64_t now);
/* Sums every live edge's holders' figures, or sets up its lazy gauges, once the holders
 * exist (and the fast paths are set: model__features_apply). Returns 0, or -1 when out of
 * memory. */
int model__gauges_init(model_world *w);
/* Fills the shared-state columns of every edge (and its population's) in row at now. */
void model__gauges_sample(model_world *w, double *row, int64_t now);
/* Reads edge e's shared state at now by a walk over its holders (the end-of-run figures). */
void model__edge_state_read(const model_world *w, const mw_edge *e, int64_t now,
                            model_edge_state *st);
/* Frees every edge's lazy gauges (NULL parts allowed). */
void model__gauges_free(model_world *w);

/* A caller's channel state toward the services it calls: what a client and a replica both
 * hold, and what every call they make borrows. The random streams are the caller's (keyed by
 * its entity name and index, so jitter draws never disturb arrivals or service times); the
 * targets are its shared retry state (throttle, budget, breaker), one per edge it calls on.
 * Opened and closed by model__channel_open/_close, which own all three. */
/* The calls waiting for a permit of one target's blocking concurrency limiter, first come
 * first served (model_call.c). t is the target; on: its limiter blocks. */
typedef struct mw_waitq {
  mw_call *head, *tail;
  retry_target *t;
  bool on;
} mw_waitq;

typedef struct mw_channel {
  sim_rng rng_engine;     /* the engines' randomness: jitter, adaptive throttling */
  sim_rng rng_net;        /* hop latencies of its calls */
  retry_target **targets; /* per edge called: channel state or NULL; NULL when none has any */
  uint32_t n_targets;     /* entries of targets (0 when targets is NULL) */
  bool own_block;         /* targets' block was allocated here (else it is the caller's) */
  mw_waitq *waitq;        /* per edge called (n_targets), NULL when no limiter blocks */
} mw_channel;

/* Bytes of the block a channel calling on edges[0 .. n_edges) keeps its target pointers and
 * targets in (model__channel_open), 0 when no edge has shared state; a multiple of 8. */
size_t model__channel_bytes(mw_edge *const *edges, size_t n_edges);

/* Fills ch for the caller (entity, index): its two streams (held in ch), and a target for each of
 * the n_edges edges it calls on (edges[j]) whose policy has shared state; edges to one callee
 * whose policies keep the throttle per process and server name (the grpc-core-1.51 profile)
 * draw on one bucket, the first such edge's, with the last such edge's maxTokens and
 * tokenRatio as C-core's map keeps (marking them throttle_shared); in block (zeroed,
 * model__channel_bytes(edges, n_edges) bytes, 8-aligned: a client's lies right after it) or,
 * when block is NULL, in one allocated here. Returns 0, or -1 when out of memory or a target
 * cannot be made (details in the world's error); ch is then half-filled and
 * model__channel_close frees what it holds. */
int model__channel_open(model_world *w, mw_channel *ch, const char *entity, uint64_t index,
                        mw_edge *const *edges, size_t n_edges, void *block);
/* Frees what ch holds (any part may be NULL) and empties it. */
void model__channel_close(model_world *w, mw_channel *ch);
/* Returns the target of ch toward edge j, NULL when that edge keeps no channel state. */
static inline retry_target *model__channel_target(const mw_channel *ch, size_t j) {
  return ch->targets != NULL && j < ch->n_targets ? ch->targets[j] : NULL;
}

/* What only some calls hold: the engine's optional state (retry_call_ext, which hedging,
 * the Envoy and AWS budgets, the limiters and traces need) and the model's own figures that
 * most calls do not have (a request size, a reply's stream messages, tracing, a wait for a
 * blocking limiter's permit). From the world's pool (w->pools.exts), only for a call that
 * needs one (model_call.c); the call's rc.ext points to its first member. */
typedef struct mw_call_ext {
  retry_call_ext rx;     /* the engine's: first, so that rc.ext is this record */
  int64_t request_bytes; /* for the engine's buffer limit (0 for a call without one) */
  int64_t stream_items;  /* messages of a full reply (0 for a call without one) */
  int64_t begin_ns;      /* when the call was made: its latency counts a wait */
  /* tracing (model_trace.c): written only while a trace sink is installed */
  uint64_t trace_parent;        /* model_trace_call.parent_id */
  int32_t trace_depth;          /* model_trace_call.depth */
  int32_t trace_parent_attempt; /* model_trace_call.parent_attempt */
} mw_call_ext;

/* A call waiting for a permit of a blocking limiter has not started in the engine: the
 * engine's storage holds what its start needs instead (model_call.c, call_wait). */
typedef struct mw_wait {
  mw_call_ext *ext;           /* the call's (a target with a limiter needs one) */
  mw_channel *ch;             /* the caller's channel */
  const retry_policy *policy; /* what the engine is started with */
  mw_call *next;              /* the next call waiting in the same queue */
  sim_event_handle ev;        /* the timer of its wait */
  uint64_t id;
  int64_t deadline_ns;
  retry_stream_kind stream;
} mw_wait;

/* A logical call run by the retry engine. A call without a policy, without channel state and
 * not traced (a "bare" call, the commonest kind deep in a call graph) has no mw_call: its one
 * request is the call (mw_req.bare, model_call.c). Every field is set by model__call_start
 * (the pool does not zero it). What the engine keeps it does not repeat: the policy, the
 * deadline and the start are rc's; the world is the edge's; the queue of a blocking limiter
 * is found through the channel, and the channel through the engine's random stream
 * (model__call_channel). 136 bytes on LP64 (asserted below): a call in flight is held by the
 * thousand. */
struct mw_call {
  /* One phase or the other, told apart by MW_CALL_WAITING in flags: read them through
   * model__call_rc and model__call_wait, which check the phase in the sanitizer builds. */
  union {
    retry_call rc; /* the engine's state, once started (MW_CALL_WAITING clear) */
    mw_wait wait;  /* while in its blocking limiter's queue (MW_CALL_WAITING set; call_wait) */
  };
  /* the rest ordered by size so that nothing pads */
  mw_edge *edge;
  void *done_ctx;        /* the caller's context (mw_end.done_ctx) */
  mw_op *op;             /* ledger operation (one reference held) */
  mw_req *reqs;          /* attempts in flight (the caller still waits for them) */
  sim_event_handle wake; /* the engine's timer, at rc.next_send_ns (call_set_wake) */
  int32_t slot;          /* the caller's index for it (mw_end.slot) */
  int8_t criticality;    /* given to each attempt (model_criticality, < MODEL_CRIT_N; 0 unset) */
  int8_t last_replica;   /* replica of the latest attempt (< MODEL_MAX_REPLICAS), -1 before
                            the first */
  uint8_t flags;         /* MW_CALL_*, set in one store at the start */
};

#define MW_CALL_TOP 1        /* a top-level call (made by a client population) */
#define MW_CALL_MEASURED 2   /* started at or after the warmup: counted in the results */
#define MW_CALL_TRACED 4     /* its decisions go to the trace sink */
#define MW_CALL_OWN_POLICY 8 /* rc.policy is from the world's policies pool (freed with it) */
#define MW_CALL_LIMITED 16   /* its target's limiter blocks: call_waitq finds its queue */
#define MW_CALL_WAITING \
  32 /* in its blocking limiter's queue: c->wait holds its start (call_wait) */

/* The packing the hot path relies on, checked by the compiler: the sizes (a call and a
 * request in flight are held by the thousand; issue 12's budget is 256 bytes a call in
 * flight), and every narrowed field against the limit that bounds it. */
_Static_assert(sizeof(void *) != 8 || sizeof(mw_call) == 136, "mw_call is 136 bytes on LP64");
_Static_assert(offsetof(mw_call, rc) == 0 && offsetof(mw_call, wait) == 0,
               "the engine's state and the wait share the call's first bytes");
_Static_assert(sizeof(mw_wait) <= sizeof(retry_call), "the wait fits the engine's storage");
_Static_assert(MODEL_CRIT_N - 1 <= INT8_MAX, "mw_call.criticality and mw_req.criticality are int8");
_Static_assert(MW_CALL_WAITING <= UINT8_MAX, "mw_call.flags is a byte");

/* The engine's state of c (started in the engine: not waiting for a limiter's permit). */
static inline retry_call *model__call_rc(mw_call *c) {
  MODEL_CHECK(!(c->flags & MW_CALL_WAITING));
  return &c->rc;
}
static inline const retry_call *model__call_rc_const(const mw_call *c) {
  MODEL_CHECK(!(c->flags & MW_CALL_WAITING));
  return &c->rc;
}
/* The start c waits to make (in its blocking limiter's queue). */
static inline mw_wait *model__call_wait(mw_call *c) {
  MODEL_CHECK(c->flags & MW_CALL_WAITING);
  return &c->wait;
}

/* Whether ch is the channel of some caller of edge e: a client of its population, or a
 * replica of its calling service (model_call.c; for the checks of the sanitizer builds). */
bool model__channel_is_callers(const mw_edge *e, const mw_channel *ch);

/* The caller's channel of a call started in the engine. The engine draws from the channel's
 * rng_engine stream (call_engine_start passes sim_rng_adapter(&ch->rng_engine.g)), so the
 * engine's random context, which the call holds anyway, says which channel it is: a call
 * keeps no pointer of its own (8 bytes a call in flight). The arithmetic below is right only
 * while call_engine_start gives the engine that stream and nothing else: the sanitizer builds
 * check that the context is a sim_rng's generator (the adapter's next function, the state
 * inside the struct) and that the channel found belongs to a caller of the call's edge. */
static inline mw_channel *model__call_channel(const mw_call *c) {
  const retry_call *rc = model__call_rc_const(c);
  mw_channel *ch = (mw_channel *)(void *)((char *)rc->rng.ctx - offsetof(sim_rng, g) -
                                          offsetof(mw_channel, rng_engine));
#if MODEL_CHECKS
  sim_rng *eng = &ch->rng_engine;
  assert(rc->rng.next == sim_rng_adapter(&eng->g).next && rc->rng.ctx == (void *)&eng->g);
  assert(eng->g.state == (void *)eng->s);
  assert(model__channel_is_callers(c->edge, ch));
#endif
  return ch;
}

/* The call's mw_call_ext once the engine holds it (NULL for a call without one). */
static inline mw_call_ext *model__call_ext(const mw_call *c) {
  return (mw_call_ext *)(void *)model__call_rc_const(c)->ext;
}

static inline bool model__call_traced(const mw_call *c) { return c->flags & MW_CALL_TRACED; }
static inline bool model__call_top(const mw_call *c) { return c->flags & MW_CALL_TOP; }

/* Where a request is on the server side. */
typedef enum mw_req_state {
  MW_REQ_HOP_OUT = 0, /* on its way out (req_launch) */
  MW_REQ_QUEUED,      /* in its replica's queue: its queue links are live (model_queue.h) */
  MW_REQ_WORKING,     /* a worker holds it */
  MW_REQ_DOWNSTREAM,  /* its handler waits for its own calls */
  MW_REQ_HOP_BACK,    /* its reply is readied or on its way back, or it left the server */
  MW_REQ_AT_SERVICE   /* at its replica in no queue: screened on arrival, or just taken out of
                         the queue (its links cleared), before a worker or a refusal */
} mw_req_state;

/* What only some requests need, kept apart so that the others do not carry it: the state
 * of a handler's downstream calls, adaptive concurrency's send time, and tracing. From the
 * world's pool (w->pools.reqx), zeroed, taken by model__req_side the first time one of these
 * is set, and given back with its request (model__req_put). A request without one reads
 * every field as 0. */
typedef struct mw_req_side {
  uint64_t trace_call; /* tracing: the traced call this is an attempt of (0: not traced; a
                          bare call is never traced: no call is while a sink is in) */
  int64_t acc_sent_ns; /* adaptive concurrency: when the filter forwarded it */
  /* downstream calls of the handler */
  int32_t ds_next;         /* sequential: next call to start */
  int32_t ds_pending;      /* calls started and not finished */
  int32_t ds_status;       /* first failure (mapped into this service's space), or OK */
  int32_t ds_ok, ds_nfail; /* wait_for: calls ended OK, and not */
  int32_t trace_depth;     /* tracing: depth of trace_call (as wide as mw_call_ext's: the
                              struct's size is the same, 48 bytes) */
  bool ds_failed;
  bool ds_starting; /* fan-out: still starting its calls */
  bool ds_decided;  /* wait_for: the handler went on; the calls left still finish */
  bool ds_orphan;   /* its caller is done with it while such calls run: the last of them
                       frees it (model_service.c) */
} mw_req_side;

_Static_assert(sizeof(void *) != 8 || sizeof(mw_req_side) == 48, "mw_req_side is 48 bytes on LP64");

/* Every field is set by req_send (model_call.c): the pool does not zero it. */
struct mw_req {
  /* ordered by size so that nothing pads: a request in flight is held by the thousand */
  /* An attempt of an engine's call, or a bare call's one attempt, which is the call itself
   * (model_call.c): it then holds the call's few figures in place of the links. */
  union {
    struct {             /* an attempt of an engine's call */
      mw_call *call;     /* the caller's call; NULL once the caller gave up */
      mw_req *call_next; /* next attempt in flight of the same call */
    };
    struct {            /* a bare call's one attempt */
      void *done_ctx;   /* the caller's context (mw_end.done_ctx) */
      int64_t start_ns; /* when the call started */
    };
  };
  mw_edge *edge;       /* its edge (and through it the world: edge->w) */
  mw_op *op;           /* ledger operation (one reference held) */
  int64_t deadline_ns; /* propagated deadline of this attempt, RETRY_NEVER if none */
  union {
    int64_t ok_items; /* until its handler ends: stream messages of a full reply */
    int64_t items;    /* from then on, with headers: the reply's stream messages (read as 0
                         without headers: model_call.c) */
  };
  gsl_rng *rng_net;         /* hop latencies (the caller's stream, borrowed) */
  sim_event_handle timeout; /* the caller's attempt deadline */
  /* Fields of one phase each share their storage with another phase's. */
  /* The queue links and the reply's pushback share 16 bytes. Invariant: outside the queue
   * (state other than MW_REQ_QUEUED) both links are NULL until a reply sets the pushback:
   * req_launch clears them, and every way out of the queue clears them as it unlinks
   * (model_queue.h: the take and the withdrawal). So a request that leaves the queue, or never
   * joined it, reads "no pushback yet" (NULL) there, which reply_prepare relies on (it gives a
   * failure without pushback of its own a PUSHBACK fault's); it reads it through
   * model__req_pushback_unset, which checks the state in the sanitizer builds. */
  union {
    struct {
      mw_req *q_prev, *q_next; /* while queued: the replica's queue links */
    };
    struct {                   /* from the end of its work (or its refusal) on: the reply's */
      const char *pushback;    /* grpc-retry-pushback-ms value, or NULL */
      const char *retry_after; /* Retry-After value, or NULL */
    };
  };
  union {
    int64_t work_start_ns; /* while a worker holds it: when the worker took it */
    int64_t worker_ns;     /* once the worker is released: the worker time it held (0 if
                              it never had one) */
  };
  union {
    int64_t codel_until;      /* while queued, codel: it is refused if still queued after this */
    int64_t read_version;     /* while working, contention: the row's version when it started */
    struct mw_fanout *fanout; /* while its handler waits for its calls, in a service that
                                 keeps them (mw_service.keeps_calls): those calls, for a k-of-n
                                 fan-out's cancel or one that reaches r (model_service.c) */
  };
  mw_req_side *side; /* what only some requests need, or NULL (model__req_side) */
  /* The caller's index for the call (mw_end.slot): its population's method, which with the
   * edge names the method (model__req_method), or a handler's number for the call (the
   * edge alone names a handler's call's method). */
  int32_t slot;
  /* Narrow, each bound asserted below: statuses are gRPC codes (< RETRY_GRPC_N_CODES) or
   * HTTP statuses (< 600); attempts at most RETRY_CALL_MAX_ATTEMPTS (32,767: the engine
   * refuses to send more), replicas fewer than MODEL_MAX_REPLICAS (64), faults at most
   * MODEL_MAX_FAULTS a service, criticalities below MODEL_CRIT_N. */
  int16_t status;  /* reply: in the callee's space */
  int16_t attempt; /* 1-based, as grpc-previous-rpc-attempts tells the server */
  /* The FAIL fault applied (its status the reply's), or the delayed REFUSE fault: its index
   * in the callee's faults plus 1, 0 if none (model__req_fail). */
  uint16_t fail;
  int8_t replica;              /* chosen replica, -1 before the load balancer ran */
  int8_t criticality;          /* model_criticality; UNSET until a service labels it */
  uint8_t state;               /* mw_req_state */
  bool bare : 1;               /* a bare call's one attempt, the call itself */
  bool waiting : 1;            /* bare: the caller still waits (else it gave up) */
  bool top : 1;                /* bare: a top-level call */
  bool measured : 1;           /* bare: started at or after the warmup */
  bool refuse_after_delay : 1; /* a REFUSE fault with a delay: no handler, no effect */
  bool expired_waste : 1;      /* deadline mode WASTE found it expired */
  bool dropped : 1;            /* deadline mode DROP ended it */
  bool acc_forwarded : 1;      /* adaptive concurrency: ... and is still counted outstanding */
  bool headers : 1;            /* reply: headers were sent */
  bool cache_miss : 1; /* a miss of its callee's cache: an OK reply its caller hears fills
                          the key (model_cache_world.c) */
  bool cache_lead : 1; /* ... and the one miss of its key in flight (coalescing): its end
                          (fill or not) releases the key's waiters */
  bool cancelled : 1; /* its call was cancelled (a k-of-n fan-out's leftover, or a call of a
                         request cancelled so) while it was on its way out: the callee drops
                         it as it arrives (model__service_arrive); or while a worker held it:
                         its handler makes no calls when the work ends */
  /* Its caller's balancer has an outlier detector for its replica: the reply is fed to it
   * (model_ctl.c). Set, true or false, by the pick of every request at a service with
   * control, and by nothing else; not cleared per request (req_launch), which would cost every
   * call of every world an instruction: a stale value elsewhere only sends the reply to
   * model__ctl_reply, which finds no detector and clears it. */
  bool ctl_watch : 1;
};

_Static_assert(sizeof(void *) != 8 || sizeof(mw_req) == 120, "mw_req is 120 bytes on LP64");
_Static_assert(RETRY_GRPC_N_CODES <= INT16_MAX && 599 <= INT16_MAX,
               "mw_req.status holds a gRPC code or an HTTP status");
_Static_assert(RETRY_CALL_MAX_ATTEMPTS <= INT16_MAX, "mw_req.attempt holds any attempt's number");
_Static_assert(MODEL_MAX_FAULTS + 1 <= UINT16_MAX, "mw_req.fail holds a fault's index + 1");
_Static_assert(MODEL_MAX_REPLICAS <= INT8_MAX + 1, "mw_req.replica and mw_call.last_replica "
                                                   "hold a replica's index");
_Static_assert(MW_REQ_AT_SERVICE <= UINT8_MAX, "mw_req.state is a byte");

/* The links of the call's attempts in flight (an engine call's attempt, not a bare call). */
static inline mw_call *model__req_call(const mw_req *r) {
  MODEL_CHECK(!r->bare);
  return r->call;
}
/* Whether r's reply has no pushback yet (neither header set): read once r is out of the
 * queue, where the storage is the reply's (the invariant at mw_req's union). */
static inline bool model__req_pushback_unset(const mw_req *r) {
  MODEL_CHECK(r->state != MW_REQ_QUEUED);
  return r->pushback == NULL && r->retry_after == NULL;
}

/* A call a caller may cancel (model__call_cancel): an engine call's mw_call, or a bare call's
 * one mw_req (bare set). call is NULL once the call ended. */
typedef struct mw_child {
  void *call;
  bool bare;
} mw_child;

/* The calls a handler started, while it waits for them, in a service that keeps them
 * (mw_service.keeps_calls): n entries, each cleared as its call ends; the ones left are
 * cancelled when a k-of-n fan-out (wait_for with cancel_rest) goes on, or when the request's
 * own call is cancelled so. From the world's fanouts pool, sized for the largest such
 * handler's calls. */
typedef struct mw_fanout {
  int32_t n;
  mw_child child[];
} mw_fanout;

/* }================================================================== */

/* {==================================================================
 * Clients and services
 * =================================================================== */

/* A method a caller calls (a population's method, a service's downstream call): its policy
 * (NULL without) and the fast paths its calls may take (MW_FAST_*: model_feature.c). */
typedef struct mw_method {
  const retry_method_config *mc;
  uint8_t fast;
} mw_method;

struct mw_client {
  model_world *w;
  mw_pop *pop;
  int32_t index;
  sim_rng rng_arrival;     /* closed loop and script: arrivals, think times, mix */
  mw_channel ch;           /* streams and the target toward its population's edge */
  int32_t script_next;     /* script: next call */
  int64_t next_arrival_ns; /* open loop: the candidate time being considered */
  /* closed loop: the operation being retried by the user */
  mw_op *user_op;
  int32_t user_tries;
  int32_t user_method;
};

struct mw_pop {
  model_world *w;
  size_t client_stride; /* bytes from one client to the next: the struct, then its channel's
                           block of targets (model__pop_client) */
  const model_client_cfg *cfg;
  gsl_rng *rng_open; /* open loop: the population's arrivals and method mix */
  int index;
  /* Its clients can be down (restarting) or paused (model_herd.c): its arrivals run the
   * gated event functions, which ask first (model_client.c). Set from the table of features
   * (model_feature.c) before its first arrival; in the struct's padding. */
  bool gated;
  mw_edge *edge;
  mw_client *clients;
  mw_method *mcfg;                  /* per method: its policy and fast paths */
  double *cum_weight;               /* cumulative method weights, last = total */
  double max_rate;                  /* open loop: thinning bound, the profile's largest rate */
  bool prefetch; /* open loop: fetch the next arrival's client ahead (model_client.c) */
  int col_tokens, col_budget, col_breaker; /* time-series columns, -1 when absent */
};

struct mw_replica {
  int32_t busy; /* workers busy */
  /* the sum of the busy workers' start times, modulo 2^64: busy x now - busy_start_sum is the
   * work in progress (exact while that fits in 2^64 ns) */
  uint64_t busy_start_sum;
  /* its queue (model_queue.h: read here, changed only there) */
  int32_t queued; /* requests waiting */
  mw_req *q_head, *q_tail;
  int64_t q_nonempty_since; /* codel: when the queue last went from empty to not empty */
  model_retry_share share;  /* retry budget: recent arrivals and retries */
  model_acc *acc;           /* adaptive concurrency: this replica's controller, or NULL */
  gsl_rng *rng_acc;         /* ... and its minRTT timer's jitter */
  gsl_rng *rng_work;        /* service times */
  gsl_rng *rng_fault;       /* fault probabilities */
  mw_channel ch;            /* downstream calls made here: streams, a target per call */
  int32_t ops_workers;      /* an operator's capacity action: workers from then on, 0: none */
};

/* Client i of p: clients are laid out every p->client_stride bytes, each followed by the block
 * of its channel's targets, so a call that picks a client at random finds its throttle in the
 * same page and mostly the same cache lines. */
static inline mw_client *model__pop_client(const mw_pop *p, size_t i) {
  return (mw_client *)(void *)((char *)p->clients + i * p->client_stride);
}

struct mw_service {
  const model_service_cfg *cfg;
  int index;
  int effect_slot; /* index into an operation's executions, -1 without effect */
  mw_replica *replicas;
  mw_edge **call_edges; /* per downstream call */
  /* Per call the handler makes (a call made fanout times is that many, numbered as
   * model__handler_calls starts them): the index of its downstream call. A handler's call carries
   * its own number as the caller's index (mw_end.slot), so its end finds its fan-out record
   * at once (model_fanout.c, model__downstream_done). */
  int32_t *call_of_child;
  mw_method *call_mcfg;                  /* per downstream call: its policy and fast paths */
  int64_t *fault_counts; /* per fault: times applied (for max_count) */
  gsl_rng *rng_lb;       /* load balancer */
  uint32_t rr_next;      /* round robin position */
  int col_limit;         /* time series: <name>_concurrency_limit, -1 without the filter */
  model_bucket bucket;   /* admission: the token bucket in front of the replicas */
  model_row row;         /* contention: the versioned row the replicas share */
  struct mw_cache *cache; /* its look-aside cache (model_cache_world.c), NULL without */
  /* A request here can be cancelled by its caller while its handler runs: some k-of-n
   * fan-out that cancels its leftovers (wait_for with cancel_rest) calls this service, or a
   * service that can itself be cancelled so does (model__services_cancel_reach). */
  bool hears_cancel;
  /* Its handlers note the calls they make (mw_req.fanout), to cancel them: it makes calls and
   * either is such a fan-out or hears a cancel. */
  bool keeps_calls;
  /* Its fast paths (model_feature.c's table). MW_FAST_ARRIVAL: none of what a request may
   * meet before the queue is configured, arrive_screen is skipped (model_service.c). */
  bool plain_arrival;
  /* MW_FAST_START: a worker takes a request without a deadline check or a contention read
   * (work_start). */
  bool plain_start;
  /* MW_FAST_TIME: work is a draw of the service time and nothing else, for a request no
   * fault holds (work_start). */
  bool plain_time;
  uint32_t fault_kinds; /* bit k set when a fault of kind k (model_fault_kind) is configured */
  model_service_stats *stats;
};

/* Sizes the hot path indexes by (w->topo.services[i], w->topo.pops[i]): a power of two, or
 * three times one, is a shift (or a shift and a lea); 136 bytes took three more instructions
 * at every lookup, a percent of an M/M/1's. */
_Static_assert(sizeof(void *) != 8 || sizeof(mw_service) == 128, "mw_service is 128 bytes on LP64");
_Static_assert(sizeof(void *) != 8 || sizeof(mw_pop) == 96, "mw_pop is 96 bytes on LP64");

/* }================================================================== */

/* {==================================================================
 * The ledger of side effects
 * =================================================================== */

/* An operation: what one caller asked one service to do. The top-level call's operation is
 * kept across user retries; the operation of downstream call j of a handler working for op is
 * op's child j, the same for every attempt of that handler (so a retried upstream request that
 * calls again repeats the same downstream operations), and different for each j (two calls of
 * one handler to one service are two operations, never duplicates of each other). Children
 * are made on first use; a parent holds a reference to each until it is settled. After
 * executions[] (n_effect_services entries) come max_calls child pointers (model__op_child). */
struct mw_op {
  void *pool_link;      /* the pool's free-list link while free */
  int32_t refs;         /* holders: calls, requests and the parent; 0 while free */
  bool measured;        /* made at or after the warmup: its executions are counted */
  int32_t executions[]; /* per side-effecting service */
};

/* }================================================================== */

/* The world, in groups by what each owns. Borrowed inputs at the top; then the topology
 * (built once, read by every event), the pools (memory that follows the work in flight), the
 * time series (the kernel's table plus the columns the world fills) and the run's progress and
 * failure. The results are what the program reads afterwards. */
struct model_world {
  const model_config *cfg; /* borrowed; outlives the world */
  sim_kernel *k;           /* borrowed; owns time and events */
  uint64_t seed;           /* every random stream derives from it */
  /* The simulated structure: arrays sized from the config at creation, never resized. Owns
   * the edges, populations (with their clients) and services (with their replicas). */
  struct mw_topology {
    mw_edge *edges; /* clients' edges first (edge i is population i's), then services' calls */
    size_t n_edges;
    mw_pop *pops;
    size_t n_pops;
    mw_service *services;
    size_t n_services;
    int n_effect_services; /* services with a side effect: executions per op */
    int n_cache_services;  /* services with a look-aside cache: each op then ends in a key */
    size_t n_init_edges;   /* herds' init calls: the last edges (model_herd.c) */
    size_t n_pop_fb_edges; /* populations' fallback calls: just before the init edges */
  } topo;
  /* Calls, requests and ledger operations in flight: owns every chunk. */
  struct mw_pools {
    mw_pool calls, reqs, ops;
    mw_pool reqx;    /* the mw_req_side of the requests that need one */
    mw_pool fanouts; /* mw_fanout records of the k-of-n fan-outs that cancel (obj_size 0:
                        no service has one) */
    mw_pool exts;    /* the calls' mw_call_ext, for the calls that need one */
    /* Policies of calls whose method's policy keeps no retries but speaks another space than
     * the callee (a copy with the callee's space, held by the call); rare. */
    mw_pool policies;
    /* "No retries" in each space (retry_policy_init), shared by every call without a policy. */
    retry_policy none[2];
    /* Without a side-effecting service the ledger has nothing to tell apart: every call
     * shares this one operation (never settled: the world holds a reference to it). Allocated
     * with the world: an mw_op ends in a flexible array, which C lets no struct hold inline. */
    mw_op *no_effect_op;
    size_t max_calls;    /* the most downstream calls any handler makes: child slots per op */
    size_t op_child_off; /* byte offset of an op's child pointers */
    /* Operations are objects of their own (with children) when some service has a side
     * effect or a cache, or some handler's call branches (model_call_branches): a branch is drawn from the
     * operation of the logical request being served, so that every attempt of it goes the same
     * way. A world that branches also keeps a branch word per op, at op_branch_off, derived
     * from the seed and a serial number given to each op when it is made (no random stream is
     * drawn from, so no other figure of the run moves); other worlds' ops do not grow. */
    bool ops_real;
    bool branches;
    size_t op_branch_off; /* byte offset of an op's branch word (a world that branches) */
    uint64_t op_serial;   /* ops made so far (a world that branches) */
  } pools;
  /* The time series: owns the kernel's table; the rest says which column is which. */
  struct mw_series {
    sim_series *series; /* the table and the latencies of the current bucket (owned) */
    int64_t sampled;    /* buckets sampled so far */
    bool failed;        /* a column could not be added */
    int col_offered, col_attempts, col_goodput, col_errors, col_in_flight, col_p50, col_p99,
        col_faults, col_svc0; /* column indices: totals, then the first service's */
    int col_work0; /* the first <service>_work_factor (model_work.c), -1 none */
    int svc_cols;             /* columns per service */
    /* The latency quantiles of the bucket in which calls are ending (model__ts_latency):
     * every call's latency in all, the failed ones' also in failed, so that an OK call is
     * recorded once and the OK-only quantiles are all's less failed's, with the OK calls'
     * own least and largest (bucket: which, -1 none; written_*: the last bucket whose
     * OK-only and failed-only columns were set, which are NaN in the others). */
    struct mw_lat {
      sim_hist all, failed;
      int64_t ok_min, ok_max; /* the OK calls' least and largest latency in the bucket */
      int64_t bucket, written_ok, written_failed;
      int64_t now_b, now_start, now_end; /* the bucket of the latest record, and its times */
      int col_ok_p50, col_ok_p99, col_failed_p50, col_failed_p99;
    } lat;
  } ts;
  /* The run: where it stands, how it ends, whom it tells. Owns nothing. */
  struct mw_run {
    retry_error *err;      /* where a run-time error goes (borrowed, may be NULL) */
    int fail_code;         /* first run-time error, 0 if none */
    uint64_t next_call_id; /* the engine's call ids */
    int64_t top_in_flight; /* top-level calls in flight */
    int64_t top_peak;      /* the most at once */
    int64_t top_measured;  /* top-level calls in flight started at or after the warmup */
    int64_t end_ns;        /* duration + drain */
    bool arrivals_over;    /* the duration has passed */
    void (*progress)(void *, int64_t, int64_t);
    void *progress_ctx;
  } run;
  /* The fast paths' switches (model_feature.c): off forces every one off (the config's
   * fast_paths_off, or RETRYSIM_NO_FAST_PATHS=1 in the environment); skip is the test hook's
   * row left out of the table, -1 none. */
  struct mw_fast {
    bool off;
    int skip;
    bool ops_sample; /* a bucket's end runs model__ops_sample (MW_FAST_NO_OPS clear) */
  } fast;
  struct mw_ctl *ctl; /* replicas' health and count (model_ctl.c), NULL when no service has any */
  model_results res;      /* what the run measured (owns the edge and service arrays) */
  model_trace_sink trace; /* model_world_set_trace; record NULL: tracing off */
  struct mw_ops *ops;     /* operators and herds (model_operator.c, model_herd.c), NULL: none */
};

/* The method of a call on edge e with the caller's index slot: its population's method
 * `slot`, or the one of its edge's downstream call (an edge per call of a service's
 * handler). */
static inline const char *model__edge_method(const mw_edge *e, int32_t slot) {
  const model_config *cfg = e->w->cfg;
  return e->pop >= 0 ? cfg->clients[e->pop].methods[slot].name
                     : cfg->services[e->svc].calls[e->slot].method;
}
/* The space of edge e's callee (its service's config's space). */
static inline retry_space model__edge_callee_space(const mw_edge *e) {
  return (retry_space)e->callee_space;
}
static inline const char *model__call_method(const mw_call *c) {
  return model__edge_method(c->edge, c->slot);
}
static inline const char *model__req_method(const mw_req *r) {
  return model__edge_method(r->edge, r->slot);
}

/* The fault r's reply carries (mw_req.fail), or NULL; s is r's callee. */
static inline const model_fault_cfg *model__req_fail(const mw_service *s, const mw_req *r) {
  return r->fail != 0 ? &s->cfg->faults[r->fail - 1] : NULL;
}

/* model_world.c */
/* The world's memory comes from its kernel's allocator (sim_kernel_allocator), so a test can
 * fail any allocation of a world as it fails the kernel's: zeroed n x size bytes (NULL on
 * overflow or out of memory), and its free (NULL is a no-op). GSL's generators are the one
 * exception: gsl_rng_alloc takes no allocator (sim_rng.h). */
void *model__calloc(const model_world *w, size_t n, size_t size);
void model__free(const model_world *w, void *p);
/* Records a run-time failure (the first one wins) and stops the kernel after this event. */
void model__fail(model_world *w, int code, const char *msg);

/* r's side record, taken (zeroed) the first time it is needed; NULL when out of memory
 * (the world has then failed). */
static inline mw_req_side *model__req_side(model_world *w, mw_req *r) {
  if (r->side == NULL) {
    r->side = (mw_req_side *)model__pool_get(&w->pools.reqx);
    if (r->side == NULL) {
      model__fail(w, RETRY_ENOMEM, "out of memory for requests in flight");
      return NULL;
    }
    memset(r->side, 0, sizeof *r->side);
  }
  return r->side;
}

/* The side record's fields of a request that may have none (all 0 then). */
static inline int32_t model__req_ds_pending(const mw_req *r) {
  return r->side != NULL ? r->side->ds_pending : 0;
}
static inline uint64_t model__req_trace_call(const mw_req *r) {
  return r->side != NULL ? r->side->trace_call : 0;
}
static inline int32_t model__req_trace_depth(const mw_req *r) {
  return r->side != NULL ? r->side->trace_depth : 0;
}

/* Gives r (and its side record) back to the pool. */
static inline void model__req_put(model_world *w, mw_req *r) {
  if (r->side != NULL) model__pool_put(&w->pools.reqx, r->side);
  model__pool_put(&w->pools.reqs, r);
}

/* Schedules fn(obj) after a delay drawn from d: constant delays go to a FIFO lane. */
sim_event_handle model__schedule_sample(model_world *w, const sim_dist *d, gsl_rng *r,
                                        sim_event_fn fn, void *obj);
/* Adds v to column col of the time series, in the bucket of the current time (inline: a few
 * counters per event; the series' fast path is inline too). */
static inline void model__ts_add(model_world *w, int col, double v) {
  if (sim_series_add(w->ts.series, sim_now_ns(w->k), col, v) != 0)
    model__fail(w, RETRY_ENOMEM, "out of memory for the time series");
}
/* Writes the latency quantiles of the bucket l holds into that bucket's row and empties l
 * (model_world.c). */
void model__lat_write(model_world *w, struct mw_lat *l);
/* Records the latency of a top-level call that ends now, in the bucket its count goes to:
 * in every latency column, and in the OK-only or the failed-only ones as ok says.
 * Latencies go to the bucket of the moment the call ended, now / bucket, as the counters of
 * model__ts_add do, and not to the bucket the next sample closes: a call that ends exactly on
 * a bucket's end can run before or after that sample event (both are at the same instant),
 * and its count and its latency must land in the same row either way. */
static inline void model__ts_latency(model_world *w, int64_t latency_ns, bool ok) {
  int64_t now = sim_now_ns(w->k);
  struct mw_lat *l = &w->ts.lat;
  if (now < l->now_start || now >= l->now_end) { /* a division per bucket, not per call */
    l->now_b = now / w->cfg->bucket_ns;
    l->now_start = l->now_b * w->cfg->bucket_ns;
    l->now_end = l->now_start + w->cfg->bucket_ns;
  }
  if (l->bucket >= 0 && l->bucket != l->now_b) model__lat_write(w, l);
  l->bucket = l->now_b;
  sim_hist_record(&l->all, latency_ns);
  if (ok) {
    int64_t v = latency_ns < 0 ? 0 : latency_ns; /* as sim_hist_record keeps it */
    if (v < l->ok_min) l->ok_min = v;
    if (v > l->ok_max) l->ok_max = v;
  } else {
    sim_hist_record(&l->failed, latency_ns);
  }
}

/* model_call.c */

/* What a logical call is asked to do, by whom, and whom it tells when it ends. */
typedef struct mw_call_args {
  /* ordered by size, nothing padding: a start sets every field, so that it is built by plain
   * stores (a hole would make the compiler clear the whole struct first) */
  mw_edge *edge;                 /* the edge it runs on */
  const retry_method_config *mc; /* the method's policy, NULL: one attempt */
  const char *method;            /* borrowed from the config */
  int64_t request_bytes;         /* for the engine's buffer limit */
  int64_t stream_items;          /* messages of a full reply */
  int64_t deadline_ns;           /* absolute, RETRY_NEVER: none */
  mw_op *op;                     /* the ledger operation (the call takes a reference) */
  mw_channel *ch;                /* the caller's channel (borrowed, outlives the call) */
  retry_target *target;          /* the caller's target toward edge, or NULL */
  void *done_ctx;                /* given back in c->done_ctx */
  mw_child *child;          /* filled with the call made before it can end, for a caller that may
                               cancel it (model__call_cancel), or NULL */
  retry_stream_kind stream; /* unary or a server stream */
  int32_t criticality;      /* model_criticality of its attempts, 0: unset */
  int32_t slot;             /* given back in c->slot */
  bool top;                 /* a top-level call (made by a client population) */
  uint8_t fast;             /* MW_FAST_* its call may take: its caller's flags for its method
                               (mw_method.fast) */
} mw_call_args;

/* Starts a logical call as a describes. Returns 0, or -1 when out of memory (the world's
 * error is set; its edge's on_done is never called then). The call may end inside this function
 * (refused locally); the edge's on_done hears of the end either way, and the call is freed right
 * after it returns. */
int model__call_start(model_world *w, const mw_call_args *a);
/* A request's reply reached its caller (or the caller had left). Frees the request. */
void model__req_reply_arrived(model_world *w, mw_req *r);
/* Cancels the call ch names (ch->call not NULL; its caller no longer wants the result): it
 * ends now, stop reason cancelled, its caller told as for any end. Its attempts still queued
 * at the callee leave the queue unworked, those on their way out are dropped as they arrive,
 * those being worked (or on their way back) finish and their replies are dropped, as a
 * hedge's losing attempts' are; and the cancel travels down (model__service_cancel): a
 * handler waiting for its calls has them cancelled and ends, one being worked makes none. */
void model__call_cancel(model_world *w, const mw_child *ch);
/* Frees a request nobody will hear of again: one dropped as it arrived (cancelled), or one
 * whose handler a cancel ended while it was starting its calls (model_service.c). */
void model__req_discard(model_world *w, mw_req *r);

/* model_trace.c */
/* At the start of call c (before retry_call_start, c filled from its mw_call_args): decides
 * whether c is traced and, if so, points o's trace callback at it. A service's call finds the
 * attempt it serves in c->done_ctx (the mw_req downstream_start gives). Call only when
 * w->trace.record is not NULL. */
void model__trace_call_start(model_world *w, mw_call *c, retry_call_opts *o);

/* model_client.c */
int model__pops_create(model_world *w);
void model__pops_destroy(model_world *w);

/* model_service.c */
int model__services_create(model_world *w);
void model__services_destroy(model_world *w);
/* A request arrived at its service after the outbound hop. */
void model__service_arrive(model_world *w, mw_req *r);
/* Takes r, cancelled by its caller, out of its replica's queue if it is there (state
 * MW_REQ_QUEUED): it is never worked. Returns whether it was (the caller then frees it). */
bool model__service_withdraw(model_world *w, mw_req *r);
/* Fills the queue length and busy workers of service svc summed over its replicas. */
void model__service_sample(const model_world *w, size_t svc, double *queued, double *busy);
/* Returns service svc's adaptive concurrency limits summed over replicas (0 without). */
double model__service_acc_limit(model_world *w, size_t svc);
/* Returns the worker-seconds of work still in progress on service svc at now. */
double model__service_busy_in_progress(const model_world *w, size_t svc, int64_t now_ns);
/* Returns how many fault entries are active at some time in [t0_ns, t1_ns). */
int model__faults_active(const model_world *w, int64_t t0_ns, int64_t t1_ns);

/* r, at s, goes past its cache to the service: the load balancer, the screen, the queue
 * (model__service_arrive without its counts and its cache). */
void model__service_enter(model_world *w, mw_service *s, mw_req *r, int64_t now);
/* model__service_enter in its two steps, for a cache in each replica, looked up between them
 * (model_cache_world.c): the balancer's pick of r->replica, then that replica's screen and
 * queue. */
MODEL_COLD void model__service_pick(mw_service *s, mw_req *r);
MODEL_COLD void model__replica_enter(model_world *w, mw_service *s, mw_req *r, int64_t now);
/* Sends r's reply back over its hop (always an event). */
void model__service_reply(model_world *w, mw_req *r);

/* The handler's end and its worker and queue, for model_fanout.c (model_service.c keeps them
 * inline for its own hot path): the side effect after the calls and the reply; the worker
 * freed (returns its busy time in seconds); queued requests started while workers are free. */
void model__handler_after_calls(model_world *w, mw_req *r);
double model__worker_release(mw_service *s, mw_req *r, int64_t now);
void model__replica_pump(model_world *w, mw_service *s, int32_t rep);

/* model_fanout.c */
/* The end of r's handler's call (status st in its service's space, any on_failure done):
 * counted, then the next call, the quorum or the handler's end (model__downstream_done's
 * second half, for model_fallback.c). */
void model__downstream_settle(model_world *w, mw_req *r, int32_t st);
/* The handler of r at service s, its own work done, makes its calls (s has some). */
void model__handler_calls(model_world *w, mw_service *s, mw_req *r);
/* A handler's call ended: every service's downstream edges' on_done. */
void model__downstream_done(model_world *w, const mw_end *c);
/* r's call was cancelled (a k-of-n fan-out's cancel, never a hedge's or a timeout's) while a
 * worker held r or its handler waited for its own calls. Being worked: the work goes on, but
 * the handler makes no calls (r->cancelled). Waiting for its calls: they are cancelled in
 * turn and the handler ends now, without a reply. Returns whether r is out of the server's
 * hands with no reply to come (the caller then frees it: req_free waits for its calls). */
bool model__service_cancel(model_world *w, mw_req *r);
/* Sets every service's hears_cancel and keeps_calls from the config (before the edges are
 * made: an edge out of a service that keeps its calls can see them cancelled). */
void model__services_cancel_reach(model_world *w);

/* model_work.c: work that grows (model_work_cfg, a service with work.on). */
/* The service time's multiplier for a request a worker takes at now, with busy_others other
 * workers of its replica busy and queued requests waiting behind it. */
double model__work_factor(const model_service_cfg *cfg, double busy_others, double queued,
                          int64_t now);
/* Adds a <service>_work_factor column per service with work.on (col_work0 the first, in
 * service order); returns -1 when one could not be added. Fills them in row (each bucket). */
int model__work_columns(model_world *w,
                        int (*column)(model_world *, const char *, const char *, bool));
void model__work_sample(model_world *w, double *row);

/* model_fallback.c: a handler's on_failure (model_on_failure_cfg). */
/* The call e of r's handler ended failed with st (in r's service's space) and has an
 * on_failure: returns false when its filter does not take this failure (the handler goes on as
 * usual), true when the error path took it over (the handler goes on when it ends). */
MODEL_COLD bool model__fallback_fire(model_world *w, mw_req *r, const mw_end *e, int32_t st);
/* The on_done of every fallback call's edge. */
void model__fallback_done(model_world *w, const mw_end *e);
/* The filter of an on_failure: whether it takes a failure with status st and stop reason why
 * (never a call cancelled by its own caller). */
bool model__fallback_matches(const model_on_failure_cfg *of, int32_t st, retry_stop why);

/* model_client_fallback.c: a client population's own on_failure. */
/* The on_done of a population with an on_failure: a failure its filter takes goes down the
 * error path and reaches model__client_call_done with its final outcome when the path is
 * over; any other end goes there at once. */
void model__client_fallback_call_done(model_world *w, const mw_end *e);
/* model_client.c: the end of a population's call, as its client hears of it. */
void model__client_call_done(model_world *w, const mw_end *e);
/* The on_done of a population's fallback edge. */
void model__client_fallback_done(model_world *w, const mw_end *e);
/* Marks the populations with an on_failure, adds their <client>_on_failure_rps columns and
 * sets their fallback edges' ends. Returns -1 when a column could not be added. */
int model__client_fallbacks_setup(model_world *w,
                                  int (*column)(model_world *, const char *, const char *, bool));

/* Marks the results of the edges with an on_failure and of the caches they delete from, and
 * adds each such service's <service>_on_failure_rps column. Returns -1 when one could not be
 * added. */
int model__fallbacks_setup(model_world *w,
                           int (*column)(model_world *, const char *, const char *, bool));

/* model_cache_world.c: look-aside caches in front of services (model_config.h's
 * model_cache_cfg). The key of a logical request lives in its ledger operation, which every
 * attempt of its call shares (the last 8 bytes of an op in a world with caches). */
/* Makes the cache of every service that has one and schedules its faults' events (before the
 * time series is set up, which gives each its column). Returns 0, or -1 when out of memory. */
int model__caches_create(model_world *w);
void model__caches_destroy(model_world *w);
/* Adds each cache's <service>_cache_hit_ratio column; returns -1 when one could not be added. */
int model__caches_columns(model_world *w, int (*column)(model_world *, const char *, const char *,
                                                        bool));
/* Fills each cache's column in row: hits over lookups since the last sample, NaN for none. */
void model__caches_sample(model_world *w, double *row);
/* The counters at the warmup's end, and the results (the counters since) at the run's end. */
void model__caches_warmup(model_world *w);
void model__caches_report(model_world *w);
/* r arrived at s, which has a cache (before the load balancer): a hit is answered after the
 * hit time, a coalesced miss waits for its lead; both return true (r is in the cache's hands).
 * A miss returns false, r marked (cache_miss, cache_lead), and goes on to the service. A
 * cache per replica (scope replica) is looked up past the balancer's pick, and a miss goes on
 * at that replica from here (model__service_pick, model__replica_enter): always true. */
MODEL_COLD bool model__cache_arrive(model_world *w, mw_service *s, mw_req *r, int64_t now);
/* Replica `replica` of service svc is added (model_ctl.c): its own cache, if it has one, is
 * emptied. */
MODEL_COLD void model__cache_replica_added(model_world *w, int svc, int32_t replica);
/* The reply of r, a miss, reached its caller (waits: the caller still wanted it): an OK one
 * heard fills the key; a lead's other ends abandon it. Clears r's marks. */
MODEL_COLD void model__cache_reply(model_world *w, mw_req *r, bool waits);
/* Deletes the key op's logical request looked up from s's cache (a caller that read its
 * value as invalid: on_failure's invalidate). Returns whether an entry went; false when s has
 * no cache or op no key yet (its request never reached the cache). */
MODEL_COLD bool model__cache_invalidate(model_world *w, mw_service *s, mw_op *op);
/* r, a lead, is freed without its reply heard: its key's waiters go to the service. */
MODEL_COLD void model__cache_lead_drop(model_world *w, mw_req *r);
/* model_ctl.c: replicas that leave service and replicas that come and go (model_ctl.h). */
/* Gives each service with control the world's copy of its config (replicas allocated,
 * balancer MODEL_LB_CTL), before anything reads its replicas. 0, or -1 when out of memory. */
int model__ctl_prepare(model_world *w);
/* Detectors, autoscalers and first events, once edges, services and populations exist. */
int model__ctl_create(model_world *w);
void model__ctl_destroy(model_world *w);
/* <service>_replicas_in_service (and <service>_replicas where the count changes). */
int model__ctl_columns(model_world *w, int (*column)(model_world *, const char *, const char *,
                                                     bool));
void model__ctl_sample(model_world *w, double *row);
/* The capacity of services whose count changed (replicas in force over time). */
void model__ctl_report(model_world *w);
/* The balancer of a service with control (lb MODEL_LB_CTL): a replica in service for r's
 * caller, with the configured kind; marks r ctl_watch when its caller has a detector. */
MODEL_COLD int32_t model__ctl_pick(mw_service *s, mw_req *r);
/* r's reply (waits: its caller still wanted it) reached its caller's detector. */
MODEL_COLD void model__ctl_reply(model_world *w, mw_req *r, bool waits);
/* model_service.c, for the probes: whether a `down` fault holds replica rep now, and its
 * workers now (capacity faults applied). */
bool model__replica_down(const mw_service *s, int32_t rep, int64_t now);
int32_t model__replica_workers(const mw_service *s, int32_t rep, int64_t now);

/* Whether a world's ledger makes an operation per logical request: some service has a side
 * effect or a cache (whose key the operation holds), or some call branches (drawn from the
 * operation's branch word): pools.ops_real, set when the world is built. */
static inline bool model__ledger_on(const model_world *w) { return w->pools.ops_real; }

/* model_herd.c and model_operator.c: operators, scheduled actions and herds (model_ops.h).
 * Every function is called only for a world whose config has ops (w->ops not NULL), except
 * model__ops_create, which does nothing without. */
/* Wires the runtime of cfg->ops that model__ops_columns built (after the populations and the
 * fast paths): resolves each rule's column, schedules the events. Returns 0, or -1 (the
 * world's error set: out of memory, or a rule's column that does not exist). */
int model__ops_create(model_world *w);
void model__ops_destroy(model_world *w);
/* Builds the runtime of cfg->ops (w->ops, the herds) and adds the herds' <pop>_clients_up
 * columns (in ts_setup, before any row exists). */
int model__ops_columns(model_world *w, int (*column)(model_world *, const char *, const char *,
                                                     bool));
/* At the end of bucket b (row filled): the herds' columns, then every rule. */
void model__ops_sample(model_world *w, int64_t b, double *row);
/* The results (fired times, herd counters) at the run's end. */
void model__ops_report(model_world *w);
/* Fires operator op now: records the time and runs its action (model_operator.c's rules and
 * events; tests). */
void model__ops_fire(model_world *w, size_t op);
/* Whether client cl of gated population p may call now: 1 yes, 0 paused (no call, not
 * offered), -1 down (the call fails at once: counted offered and as an error). */
int model__herd_gate(model_world *w, const mw_pop *p, const mw_client *cl);
/* The edge's fast paths of init edge e, given the edge's own (model_feature.c). */
struct mw_method *model__herd_init_method(model_world *w, const mw_edge *e);
/* The herds' actions (model_herd.c). */
void model__herd_restart(model_world *w, size_t op);
void model__herd_pause(model_world *w, int pop, bool paused);
/* A rate action: open-loop population pop keeps each later arrival with probability factor
 * (0, 1]; 1 restores its rate (model_herd.c). */
void model__herd_rate(model_world *w, int pop, double factor);
/* Bytes the runtime of cfg->ops (not NULL) holds: operators' state, herds' per-client state
 * (model_world_estimate_bytes; the firings' record grows with the run and is not counted). */
uint64_t model__ops_estimate_bytes(const model_config *cfg);
/* A capacity action on service svc (model_service.c): every replica's workers from now on,
 * starting what the queue holds. The service counts its workers on the slow path of a
 * capacity fault (replica_workers_faulted), which a service with a capacity action always
 * takes: model__ops_columns gives it a config of its own with one more, inert, capacity fault
 * (never active), so that worlds without the action keep their fast test of n_faults. The
 * hook for replicas in place of workers is here too. */
void model__service_set_workers(model_world *w, int svc, int32_t workers);
/* A look-aside cache flush by an action (model_cache_world.c). */
void model__cache_flush_now(model_world *w, int svc, double fraction);

/* model_ledger.c */
mw_op *model__op_new(model_world *w);
/* Settles and frees op, whose last reference went (model__op_unref). */
void model__op_release(model_world *w, mw_op *op);
/* References are counted inline: a call takes and drops two or three. */
static inline void model__op_ref(mw_op *op) {
  if (op != NULL) op->refs++;
}
static inline void model__op_unref(model_world *w, mw_op *op) {
  if (op != NULL && --op->refs <= 0) model__op_release(w, op);
}
/* Returns child j of op (made on first use, owned by op), or op itself when no service has a
 * side effect and no call branches (the ledger then has nothing to tell apart). NULL when out of memory (the world
 * has failed) or op is NULL. */
mw_op *model__op_child(model_world *w, mw_op *op, int32_t j);
/* The branch word of op (a world that branches: w->pools.branches). */
static inline uint64_t model__op_branch_word(const model_world *w, const mw_op *op) {
  assert(w->pools.branches && op != w->pools.no_effect_op);
  return *(const uint64_t *)(const void *)((const char *)op + w->pools.op_branch_off);
}
/* Settles every operation still referenced (at the end of a run). */
void model__ops_settle_all(model_world *w);
/* Records the side effect of service s for op; returns false when deduplicated. */
bool model__op_execute(model_world *w, mw_service *s, mw_op *op);

/* model_gateway.c */
int32_t model__status_map(const model_status_map *m, retry_space from, retry_space to,
                          int32_t status);
/* A space's OK, DEADLINE_EXCEEDED and UNAVAILABLE (HTTP 200, 504, 503). Inline: asked per call. */
static inline int32_t model__status_ok(retry_space s) {
  return s == RETRY_SPACE_HTTP ? 200 : RETRY_GRPC_OK;
}
static inline int32_t model__status_deadline(retry_space s) {
  return s == RETRY_SPACE_HTTP ? 504 : RETRY_GRPC_DEADLINE_EXCEEDED;
}
static inline int32_t model__status_unavailable(retry_space s) {
  return s == RETRY_SPACE_HTTP ? 503 : RETRY_GRPC_UNAVAILABLE;
}

#endif /* MODEL_INT_H */
