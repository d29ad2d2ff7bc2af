/*
 * retry_realtime.h: runs logical calls through the engine in real time, for real programs.
 *
 * The only part of libretry that reads a clock (CLOCK_MONOTONIC) or sleeps. It is synchronous:
 * one attempt at a time, on the calling thread. Retry policies behave exactly as specified;
 * a hedging policy degrades to sequential fallbacks (the next hedge is sent only when the one
 * before has answered), because concurrent hedges need the caller's own event loop.
 */
#ifndef RETRY_REALTIME_H
#define RETRY_REALTIME_H

#include "retry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns CLOCK_MONOTONIC in nanoseconds. */
int64_t retry_realtime_now_ns(void);

/* Sleeps until the monotonic clock reaches t_ns. Returns at once if it already has, and for
 * RETRY_NEVER (there is nothing to wait for: sleeping for ever is never the answer). */
void retry_realtime_sleep_until(int64_t t_ns);

/* Sends attempt `attempt` and waits for its outcome, giving up at attempt_deadline_ns
 * (monotonic, RETRY_NEVER for none) with DEADLINE_EXCEEDED (504 for HTTP). Fills *out, which
 * the driver has initialised with retry_outcome_init; strings it points to must stay valid
 * until the next call of the function. */
typedef void (*retry_attempt_fn)(void *ctx, int32_t attempt, int64_t attempt_deadline_ns,
                                 retry_outcome *out);

/* Runs one logical call to the end on the calling thread, sleeping through backoffs and until
 * the decision's done_ns. o->deadline_ns is ignored: the deadline is now + timeout_ns (clamped;
 * RETRY_NEVER: none). c is the caller's storage and receives the call's final state (attempts,
 * stop reason...); p and t are borrowed for the call (t may be NULL), ctx is passed to fn.
 * Without o->ext the call's optional state (retry_call_ext) lives in the driver for the call's
 * length, and c->ext is NULL on return. Returns the final status. */
int32_t retry_realtime_call(retry_call *c, const retry_policy *p, retry_target *t,
                            const retry_call_opts *o, int64_t timeout_ns, retry_attempt_fn fn,
                            void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* RETRY_REALTIME_H */
