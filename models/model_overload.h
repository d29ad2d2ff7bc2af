/*
 * model_overload.h: the server-side rules a service can apply to the requests it receives,
 * each a small piece of state and a pure function of it and the time, so that a test drives
 * it by hand: rate-limited admission (a token bucket), controlled delay with adaptive LIFO
 * ("Fail at Scale"), and optimistic concurrency on a versioned row (the AWS backoff article's
 * contention). model_service.c calls them; their semantics and sources are in
 * docs/simulator.md.
 */
#ifndef MODEL_OVERLOAD_H
#define MODEL_OVERLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "models/model_config.h"

/* {==================================================================
 * Admission: a token bucket that admits C requests a second
 * =================================================================== */

typedef struct model_bucket {
  double tokens;   /* balance at last_ns */
  int64_t last_ns; /* when tokens was last brought up to date */
} model_bucket;

/* Starts full: burst tokens at now. */
void model_bucket_init(model_bucket *b, const model_admission_cfg *cfg, int64_t now_ns);
/* Earns rate x elapsed tokens (up to burst), then spends one if there is a whole one.
 * Returns whether the request is admitted. */
bool model_bucket_admit(model_bucket *b, const model_admission_cfg *cfg, int64_t now_ns);

/* }================================================================== */

/* {==================================================================
 * Controlled delay and adaptive LIFO
 * =================================================================== */

/* Whether a queue whose last empty moment was last_empty_ns is overloaded at now: it has not
 * been empty at any moment of the last interval. */
bool model_codel_overloaded(const model_codel_cfg *cfg, int64_t last_empty_ns, int64_t now_ns);
/* The longest a request queued at now may wait: target when overloaded, interval otherwise. */
int64_t model_codel_bound(const model_codel_cfg *cfg, int64_t last_empty_ns, int64_t now_ns);
/* Whether the next request served should be the newest: adaptive LIFO while overloaded. */
bool model_codel_lifo(const model_codel_cfg *cfg, int64_t last_empty_ns, int64_t now_ns);

/* }================================================================== */

/* {==================================================================
 * Contention: a versioned row with conditional writes
 * =================================================================== */

typedef struct model_row {
  int64_t version; /* writes committed so far */
} model_row;

/* The read: the version a write will be conditional on. */
static inline int64_t model_row_read(const model_row *row) { return row->version; }
/* The conditional write: commits (the version moves on) and returns true when no write
 * landed since read_version was read, else returns false and changes nothing. */
bool model_row_write(model_row *row, int64_t read_version);

/* }================================================================== */

/* {==================================================================
 * Criticality, shedding and the server-side retry budget (the SRE book)
 * =================================================================== */

/* The criticality a service gives a request that arrives without one: its method's, else its
 * caller's, else the default. */
int32_t model_criticality_of(const model_criticality_cfg *cfg, const char *method,
                             const char *caller);
/* Whether a replica with `queued` requests waiting refuses a request of criticality crit
 * (UNSET counts as CRITICAL, the SRE book's default). */
bool model_shedding_refuses(const model_shedding_cfg *cfg, int32_t crit, int32_t queued);

/* Recent arrivals and the retries among them, exponentially decayed. */
typedef struct model_retry_share {
  double all, retries;
  int64_t last_ns;
} model_retry_share;

/* One arrival at now; retry: its attempt counter says it is not a first attempt. */
void model_retry_share_add(model_retry_share *s, int64_t window_ns, int64_t now_ns, bool retry);
/* Retries over arrivals (0 when none). */
double model_retry_share_ratio(const model_retry_share *s);

/* }================================================================== */

#endif /* MODEL_OVERLOAD_H */
