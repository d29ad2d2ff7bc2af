/*
 * retry_int.h: internals shared by the files of libretry; not part of the public API.
 *
 * Holds the definition of retry_target (opaque to users) and the hooks the call state machine
 * (retry_call.c) uses to consult and update shared per-target state (retry_target.c).
 */
#ifndef RETRY_INT_H
#define RETRY_INT_H

#include "retry.h"
#include "retry_parts.h"

#include <stdarg.h>
#include <string.h>

/* Clamped int64 arithmetic: time never wraps. */
static inline int64_t retry__add_ns(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
  if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
  return a + b;
}

/* Allocation through an optional retry_allocator (NULL: libc). */
void *retry__malloc(const retry_allocator *a, size_t size);
void *retry__realloc(const retry_allocator *a, void *ptr, size_t size);
void retry__free(const retry_allocator *a, void *ptr);

/* {==================================================================
 * The shared per-target state
 * =================================================================== */

/* One block: this header, then only the parts the config turns on, each at its byte offset
 * from the start of the block (0: absent). A target made by retry_target_create also holds a
 * copy of its config and of its allocator at the end of the block; one made by
 * retry_target_init borrows the caller's config, which any number of targets share. So a
 * target with a gRPC throttle alone takes 64 bytes, where embedding every part and a config
 * copy took 2,464. */
struct retry_target {
  const retry_target_config *cfg; /* borrowed, or the copy inside the block (owned) */
  retry_breaker *breaker;         /* NULL without breaker */
  int64_t in_flight;              /* attempts in flight through this target */
  uint16_t off_throttle;          /* retry_throttle, when cfg->has_throttle; with
                                     RETRY__THROTTLE_SHARED set, the slot holds a pointer to
                                     a throttle the caller shares (retry_target_share_throttle) */
  uint16_t off_budget;            /* the budget cfg->budget names (AWS, Finagle, Envoy or
                                     Brooker's token bucket) */
  uint16_t off_adaptive;          /* retry_adaptive, when cfg->has_adaptive */
  uint16_t off_alloc;             /* owned, with an allocator: the copy of it */
  uint16_t off_aws_adaptive;      /* retry_aws_adaptive, when cfg->has_aws_adaptive */
  uint16_t off_retry_breaker;     /* retry_only_breaker, when cfg->has_retry_breaker */
  uint16_t off_limit;             /* retry_limit, when cfg->has_limit */
  uint8_t budget;                 /* cfg->budget (retry_budget_kind), read on every decision */
  bool owned;                     /* made by retry_target_create: destroy frees the block */
};

/* The flag bit of off_throttle: the throttle is the first part, so its offset is far below it. */
#define RETRY__THROTTLE_SHARED 0x8000u

static inline retry_throttle *retry__target_throttle(const retry_target *t) {
  if (!t->off_throttle) return NULL;
  char *slot = (char *)(uintptr_t)t + (t->off_throttle & ~RETRY__THROTTLE_SHARED);
  if (!(t->off_throttle & RETRY__THROTTLE_SHARED)) return (retry_throttle *)(void *)slot;
  retry_throttle *shared;
  memcpy(&shared, slot, sizeof shared);
  return shared;
}
static inline void *retry__target_budget(const retry_target *t) {
  return t->off_budget ? (void *)((char *)(uintptr_t)t + t->off_budget) : NULL;
}
static inline retry_adaptive *retry__target_adaptive(const retry_target *t) {
  return t->off_adaptive ? (retry_adaptive *)(void *)((char *)(uintptr_t)t + t->off_adaptive)
                         : NULL;
}

static inline retry_aws_adaptive *retry__target_aws_adaptive(const retry_target *t) {
  return t->off_aws_adaptive
             ? (retry_aws_adaptive *)(void *)((char *)(uintptr_t)t + t->off_aws_adaptive)
             : NULL;
}
static inline retry_only_breaker *retry__target_retry_breaker(const retry_target *t) {
  return t->off_retry_breaker
             ? (retry_only_breaker *)(void *)((char *)(uintptr_t)t + t->off_retry_breaker)
             : NULL;
}
static inline retry_limit *retry__target_limit(const retry_target *t) {
  return t->off_limit ? (retry_limit *)(void *)((char *)(uintptr_t)t + t->off_limit) : NULL;
}

/* Asks to send one attempt (original, retry or hedge) now: adaptive throttling first (it may
 * reject even first attempts; draws one uniform from rng only when its probability is > 0),
 * then the breaker. Returns RETRY_STOP_NONE when admitted, else RETRY_STOP_THROTTLED or
 * RETRY_STOP_BREAKER_OPEN. t may be NULL (always admitted). */
retry_stop retry__target_admit(retry_target *t, int64_t now_ns, const retry_rng *rng);

/* Asks the AWS adaptive limiter for a token for one attempt at now_ns, before any other
 * admission. OK without the limiter (or t NULL); WAIT with *wait_ns; REFUSE (fail_fast). */
retry_aws_send retry__target_rate_limit(retry_target *t, int64_t now_ns, int64_t *wait_ns);

/* The concurrency limiter's admission of a logical call: true (and the call holds a permit,
 * with *in_flight_at_start set) or false (refused). True without a limiter, holding nothing
 * (*held false). */
bool retry__target_limit_acquire(retry_target *t, bool *held, int64_t *in_flight_at_start);
/* A call holding a permit ended at now_ns after rtt_ns with status in space: OK samples a
 * success, a drop status a drop, anything else is ignored; u draws Vegas's next jitter. */
void retry__target_limit_release(retry_target *t, retry_space space, int32_t status, int64_t rtt_ns,
                                 int64_t in_flight_at_start, double u);
/* The status a refused call ends with, in space. */
int32_t retry__target_limit_reject_status(const retry_target *t, retry_space space);

/* Whether Brooker's retry breaker allows a retry (or hedge) at now_ns; true without one. */
bool retry__target_retry_allowed(retry_target *t, int64_t now_ns);

/* A logical call started (Finagle deposit; Brooker's breaker counts a call and his token
 * bucket earns per call). */
void retry__target_call_started(retry_target *t, int64_t now_ns);

/* An admitted attempt was sent (in-flight and Envoy active-request accounting). */
void retry__target_attempt_sent(retry_target *t, int64_t now_ns);

/* An attempt that was sent ended with status in the given space: in-flight and Envoy
 * accounting; breaker records failure iff status is in its failure set, success iff OK;
 * adaptive throttling records an accept iff status is not in its reject set; the throttle
 * records a success iff status is OK; the AWS quota refunds aws_cost (0 for an attempt that
 * took none, which adds no_retry_increment) iff status is OK. */
void retry__target_attempt_done(retry_target *t, int64_t now_ns, retry_space space, int32_t status,
                                int32_t aws_cost);

/* What kind of failure an AWS quota charges for (aws_kind below). */
enum { RETRY__AWS_PLAIN = 0, RETRY__AWS_TIMEOUT = 1, RETRY__AWS_THROTTLE = 2 };

/* Asks the budget for one retry or hedge. Returns true when granted (or there is no budget).
 * *aws_cost receives the AWS cost taken (0 otherwise); *holds_slot whether an Envoy slot is
 * now held (give it back with retry__target_budget_release when that attempt ends or is not
 * sent). aws_kind (RETRY__AWS_*) selects the AWS cost: the timeout or the throttle one. */
bool retry__target_budget_acquire(retry_target *t, int64_t now_ns, int aws_kind,
                                  int32_t *aws_cost, bool *holds_slot);
void retry__target_budget_release(retry_target *t);

/* Envoy's current limit on concurrent retries: max(trunc(percent/100 * active_requests),
 * min_retry_concurrency) (retry_budget.c). */
int64_t retry__envoy_budget_max(const retry_envoy_budget *b);

/* Gives back a HALF_OPEN probe permit taken by retry_breaker_allow for an attempt whose result
 * is recorded as neither failure nor success (resilience4j releasePermission), so a probe
 * answered with, say, NOT_FOUND cannot leave the breaker half-open for ever. No-op in other
 * states and when no permit is out (retry_breaker.c). */
void retry__breaker_release(retry_breaker *b);

/* }================================================================== */

/* Reads for retry_target_stats_get, as of now_ns without changing the part: the Finagle
 * balance an advance to now_ns would give (retry_budget.c), the adaptive throttler's
 * probability with the bins an advance to now_ns would clear left out (retry_adaptive.c). */
int64_t retry__finagle_balance_at(const retry_finagle_budget *b, int64_t now_ns);
double retry__adaptive_probability_at(const retry_adaptive *a, int64_t now_ns);
/* The earliest time after now_ns at which those reads may give another value with no call in
 * between: the time a slice (bin) that holds something would be cleared, RETRY_NEVER when none
 * would (retry_target_stats_next_change). */
int64_t retry__finagle_next_change(const retry_finagle_budget *b, int64_t now_ns);
int64_t retry__adaptive_next_change(const retry_adaptive *a, int64_t now_ns);

/* The backoff state of a retry_call, packed (retry_backoff.c): the draws since the start or
 * the last pushback (n), and the one double a jitter carries from draw to draw (carried: the
 * nominal delay, or for decorrelated jitter and Polly v2 their prev_ns). Draws exactly what
 * retry_backoff_next draws from the full retry_backoff_state; a reset is n = 0, carried = 0. */
int64_t retry__backoff_next_packed(const retry_backoff *b, uint16_t *n, double *carried,
                                   const retry_rng *rng, int64_t *nominal_ns);
/* The nominal delay d(n) as retry_backoff_next grows it over n draws (0 for n = 0). */
double retry__backoff_nominal(const retry_backoff *b, int n);
/* retry__backoff_next_packed after a throttling status, for a backoff with a
 * throttle_initial_ns: the same draw from d(n) grown from throttle_initial_ns; carried is left
 * as the plain backoff's, so the next failure of the other kind draws as if this one had too. */
int64_t retry__backoff_next_throttled(const retry_backoff *b, uint16_t *n, double *carried,
                                      const retry_rng *rng, int64_t *nominal_ns);

#endif /* RETRY_INT_H */
