/*
 * retry_realtime.c: the real-time driver of retry_realtime.h. The engine itself never reads a
 * clock; this file feeds it CLOCK_MONOTONIC and sleeps through the backoffs it chooses.
 */
#include "retry/retry_realtime.h"
#include "retry/retry_int.h"

#include <errno.h>
#include <time.h>

int64_t retry_realtime_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * RETRY_NS_PER_S + ts.tv_nsec;
}

void retry_realtime_sleep_until(int64_t t_ns) {
  if (t_ns == RETRY_NEVER) return;
  struct timespec ts;
  ts.tv_sec = (time_t)(t_ns / RETRY_NS_PER_S);
  ts.tv_nsec = (long)(t_ns % RETRY_NS_PER_S);
  /* Absolute sleep: a signal that interrupts it does not stretch the backoff. */
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

int32_t retry_realtime_call(retry_call *c, const retry_policy *p, retry_target *t,
                            const retry_call_opts *o, int64_t timeout_ns, retry_attempt_fn fn,
                            void *ctx) {
  retry_call_opts opts = *o;
  int64_t now = retry_realtime_now_ns();
  opts.deadline_ns = timeout_ns == RETRY_NEVER ? RETRY_NEVER : retry__add_ns(now, timeout_ns);
  /* The call runs inside this function: its optional state can live here. */
  retry_call_ext ext;
  if (opts.ext == NULL) opts.ext = &ext;
  retry_decision d;
  retry_call_start(c, p, t, &opts, now, &d);
  while (d.action != RETRY_ACTION_DONE) {
    if (d.action == RETRY_ACTION_SEND) {
      retry_outcome out;
      retry_outcome_init(&out, 0);
      fn(ctx, d.attempt, d.attempt_deadline_ns, &out);
      retry_call_on_outcome(c, d.attempt, &out, retry_realtime_now_ns(), &d);
    } else if (d.wake_ns != RETRY_NEVER) {
      retry_realtime_sleep_until(d.wake_ns);
      retry_call_wake(c, retry_realtime_now_ns(), &d);
    } else {
      /* WAIT with no timer and nothing in flight cannot happen with one attempt at a time;
       * wake the engine so it decides rather than block forever. */
      retry_call_wake(c, retry_realtime_now_ns(), &d);
      if (d.action == RETRY_ACTION_WAIT && d.wake_ns == RETRY_NEVER) break;
    }
  }
  if (d.action == RETRY_ACTION_DONE && d.done_ns != RETRY_NEVER)
    retry_realtime_sleep_until(d.done_ns);
  if (c->ext == &ext) c->ext = NULL; /* not valid past the return */
  return retry_call_status(c);
}
