/*
 * retry_call.c: the state machine of one logical call, for retry and hedging policies.
 *
 * The caller owns the retry_call and drives it with four events (start, outcome, wake,
 * headers) and may cancel it; each answers one retry_decision. Invariants: a call stops exactly
 * once, with exactly one stop reason; an attempt is in flight (in_flight below) from SEND until its
 * outcome is reported or it is cancelled, and every piece of shared state it holds (in-flight
 * count, Envoy slot) is given back at that moment. What only hedging, the Envoy and AWS
 * budgets, the limiters and traces use lives in the caller's retry_call_ext (c->ext, NULL for
 * a call that needs none: retry_call_ext_needed). Nothing here allocates.
 */
#include "retry_int.h"

#include <assert.h>
#include <string.h>

/* What one event learnt, for the trace record. The target's state before the event is read
 * only when the call is traced (a pure read: retry_target_stats_get changes nothing). */
typedef struct event_info {
  retry_trace_event event;
  int32_t attempt;
  int32_t status;
  retry_pushback_kind pushback;
  int64_t pushback_ns;
  const retry_outcome *outcome; /* the outcome reported, or NULL */
  int64_t backoff_ns;
  int64_t backoff_nominal_ns;
  retry_delay_source delay_source;
  retry_target_stats before;
} event_info;

/* Whether the call has a trace function (only a call with an ext can). */
static inline bool traced(const retry_call *c) { return c->ext != NULL && c->ext->trace != NULL; }

static void event_info_init(event_info *ev, const retry_call *c, retry_trace_event event,
                            int32_t attempt, int64_t now_ns) {
  ev->event = event;
  ev->attempt = attempt;
  ev->status = -1;
  ev->pushback = RETRY_PUSHBACK_NONE;
  ev->pushback_ns = 0;
  ev->backoff_ns = -1;
  /* What only a trace reads is filled only for a traced call (the decision code writes
   * outcome and delay_source on its way, and nothing reads them untraced). */
  if (traced(c)) {
    ev->outcome = NULL;
    ev->backoff_nominal_ns = -1;
    ev->delay_source = RETRY_DELAY_NONE;
    if (c->target != NULL) retry_target_stats_get(c->target, now_ns, &ev->before);
  }
}

static void trace_emit(const retry_call *c, const event_info *ev, int64_t now_ns,
                       const retry_decision *d);

/* Hands the event's record to the call's trace function, if it has one (inline: an untraced
 * call pays the test alone). */
static inline void trace(const retry_call *c, const event_info *ev, int64_t now_ns,
                         const retry_decision *d) {
  if (traced(c)) trace_emit(c, ev, now_ns, d);
}

static void trace_emit(const retry_call *c, const event_info *ev, int64_t now_ns,
                       const retry_decision *d) {
  retry_trace_rec rec;
  memset(&rec, 0, sizeof rec);
  rec.call_id = c->ext->id;
  rec.event = ev->event;
  rec.now_ns = now_ns;
  rec.attempt = ev->attempt;
  rec.status = ev->status;
  rec.pushback = ev->pushback;
  rec.pushback_ns = ev->pushback_ns;
  if (ev->outcome != NULL) {
    rec.pushback_values = ev->outcome->n_pushback > 0 ? ev->outcome->pushback : NULL;
    rec.n_pushback_values = rec.pushback_values != NULL ? ev->outcome->n_pushback : 0;
    rec.retry_after = ev->outcome->retry_after;
  }
  rec.backoff_ns = ev->backoff_ns;
  rec.backoff_nominal_ns = ev->backoff_nominal_ns;
  rec.delay_source = ev->delay_source;
  rec.throttle_milli_tokens = c->target != NULL && c->target->off_throttle
                                  ? retry__target_throttle(c->target)->milli_tokens
                                  : -1;
  rec.has_target = c->target != NULL;
  if (rec.has_target) {
    rec.before = ev->before;
    retry_target_stats_get(c->target, now_ns, &rec.after);
  }
  rec.decision = d;
  c->ext->trace(c->ext->trace_ctx, &rec);
}

/* {==================================================================
 * Small helpers
 * =================================================================== */

_Static_assert(RETRY_STOP_N <= UINT8_MAX, "retry_call.reason and retry_call_ext.blocked are bytes");
_Static_assert(RETRY_MAX_HEDGED_ATTEMPTS <= UINT8_MAX, "retry_call.n_in_flight is a byte");
_Static_assert(RETRY_CALL_MAX_ATTEMPTS <= INT16_MAX && RETRY_CALL_MAX_ATTEMPTS <= UINT16_MAX,
               "retry_call.n_attempts and backoff_n (< n_attempts) are 16 bits");
_Static_assert(RETRY_STREAM_BIDI <= 3, "retry_call.stream is 2 bits");
/* The size issue 12 asks for: a call in flight of the world stays within 256 bytes. */
_Static_assert(sizeof(void *) != 8 || sizeof(retry_call) <= 88, "retry_call grew past 88 bytes");

/* Restarts the backoff's exponent (at the start and after a pushback): what
 * retry_backoff_state_reset does to the state the call packs. */
static void backoff_reset(retry_call *c) {
  c->backoff_n = 0;
  c->backoff_carried = 0.0;
}

static uint64_t bit(int32_t attempt) { return UINT64_C(1) << (attempt - 1); }

static int32_t deadline_status(const retry_call *c) {
  return c->policy->space == RETRY_SPACE_GRPC ? RETRY_GRPC_DEADLINE_EXCEEDED : 504;
}

static bool is_hedging(const retry_call *c) { return c->policy->kind == RETRY_POLICY_HEDGE; }

/* Attempts in flight: a retry policy (or none) sends the next attempt only once the one
 * before was reported, so its one attempt in flight is the last one sent; a hedging policy
 * (at most RETRY_MAX_HEDGED_ATTEMPTS) keeps a bit per attempt in its ext. */
static bool in_flight(const retry_call *c, int32_t attempt) {
  if (attempt < 1 || attempt > c->n_attempts) return false;
  if (is_hedging(c)) return (c->ext->in_flight & bit(attempt)) != 0;
  return attempt == c->n_attempts && c->n_in_flight > 0;
}
static void set_in_flight(retry_call *c, int32_t attempt) {
  if (is_hedging(c)) c->ext->in_flight |= bit(attempt);
  c->n_in_flight++;
}
static void clear_in_flight(retry_call *c, int32_t attempt) {
  if (is_hedging(c)) c->ext->in_flight &= ~bit(attempt);
  c->n_in_flight--;
}
/* The bit of ext->budget_held for an attempt: its own for a hedge, bit 0 for the one attempt
 * in flight of a retry policy (whose attempts may number more than 64). */
static uint64_t held_bit(const retry_call *c, int32_t attempt) {
  return is_hedging(c) ? bit(attempt) : 1;
}

/* A server stream may be retried only with the explicit opt-in and the method named in a
 * configured idempotent allowlist; client and bidi streams never (A6; seed 000). */
static retry_stop stream_rule(const retry_call *c) {
  switch ((retry_stream_kind)c->stream) {
    case RETRY_STREAM_UNARY: return RETRY_STOP_NONE;
    case RETRY_STREAM_SERVER:
      if (c->policy->retry_streaming && c->policy->has_idempotent_allowlist && c->idempotent)
        return RETRY_STOP_NONE;
      return RETRY_STOP_STREAMING;
    case RETRY_STREAM_CLIENT:
    case RETRY_STREAM_BIDI: break;
  }
  return RETRY_STOP_STREAMING;
}

/* Whether response headers commit the call: they do, except on an opted-in server stream,
 * which the engine restarts from the beginning (and counts the replayed prefix). */
static bool headers_commit(const retry_call *c) {
  return !(c->stream == RETRY_STREAM_SERVER && stream_rule(c) == RETRY_STOP_NONE);
}

/* Gives back what a cancelled (never reported) attempt holds in the target. It is not
 * recorded as a success or a failure anywhere. */
static void release_cancelled(retry_call *c, int32_t attempt) {
  retry_target *t = c->target;
  if (t != NULL) {
    if (t->in_flight > 0) t->in_flight--;
    if (t->budget == RETRY_BUDGET_ENVOY) retry_envoy_budget_request_end(retry__target_budget(t));
    /* A cancelled half-open probe must give its permit back, or the breaker would wait for
     * a result that never comes and refuse everything. */
    if (t->breaker != NULL) retry__breaker_release(t->breaker);
  }
  if (c->ext != NULL) {
    if (t != NULL && (c->ext->budget_held & held_bit(c, attempt))) retry__target_budget_release(t);
    c->ext->budget_held &= ~held_bit(c, attempt);
  }
  clear_in_flight(c, attempt);
}

/* Cancels every attempt in flight except `keep` (0: all of them). */
static void cancel_in_flight(retry_call *c, int32_t keep) {
  if (!is_hedging(c)) {
    if (c->n_in_flight > 0 && c->n_attempts != keep) release_cancelled(c, c->n_attempts);
    return;
  }
  for (int32_t k = 1; k <= c->n_attempts && c->ext->in_flight != 0; k++)
    if (k != keep && in_flight(c, k)) release_cancelled(c, k);
}

/* Drops a budget grant taken for a retry or hedge that will not be sent. */
static void drop_pending_budget(retry_call *c) {
  retry_call_ext *x = c->ext;
  if (x == NULL) return;
  if (x->pending_slot) retry__target_budget_release(c->target);
  x->pending_slot = false;
  x->pending_aws_cost = 0;
}

/* }================================================================== */

/* {==================================================================
 * Decisions
 * =================================================================== */

static void decide_done(retry_call *c, int64_t now_ns, int64_t done_ns, int32_t status,
                        retry_stop reason, retry_decision *d) {
  assert(reason != RETRY_STOP_NONE);
  bool others = c->n_in_flight > 0;
  cancel_in_flight(c, 0);
  drop_pending_budget(c);
  /* The limiter's permit covers the whole logical call, as the library's client interceptor
   * sits above gRPC's retries: its sample is the call's time and final status. Vegas alone
   * uses the uniform (for its next probe jitter), so only it draws one. */
  if (c->ext != NULL && c->ext->limit_held) {
    c->ext->limit_held = false;
    double u = 0.0;
    if (c->target->cfg->limit.kind == RETRY_LIMIT_VEGAS) u = retry_rng_uniform(&c->rng);
    retry__target_limit_release(c->target, c->policy->space, status, done_ns - c->start_ns,
                                c->ext->limit_in_flight_at_start, u);
  }
  c->done = true;
  c->status = status;
  c->reason = (uint8_t)reason;
  c->end_ns = done_ns; /* in next_send_ns' storage: nothing is pending any more */
  memset(d, 0, sizeof *d);
  d->action = RETRY_ACTION_DONE;
  d->wake_ns = RETRY_NEVER;
  d->attempt_deadline_ns = RETRY_NEVER;
  d->cancel_others = others;
  d->status = status;
  d->reason = reason;
  d->done_ns = done_ns;
  (void)now_ns;
}

/* The decision that repeats a finished call's result (late events after DONE). */
static void repeat_done(const retry_call *c, retry_decision *d) {
  memset(d, 0, sizeof *d);
  d->action = RETRY_ACTION_DONE;
  d->wake_ns = RETRY_NEVER;
  d->attempt_deadline_ns = RETRY_NEVER;
  d->status = c->status;
  d->reason = (retry_stop)c->reason;
  d->done_ns = c->end_ns;
}

static void decide_wait(const retry_call *c, retry_decision *d) {
  memset(d, 0, sizeof *d);
  d->action = RETRY_ACTION_WAIT;
  d->wake_ns = c->next_send_ns;
  d->attempt_deadline_ns = RETRY_NEVER;
}

/* Tries to send the next attempt now: admission by adaptive throttling and the breaker, then
 * the bookkeeping of a sent attempt. Returns RETRY_STOP_NONE and fills d with SEND, or the
 * reason it was refused (d untouched). A refused attempt gives back its budget grant. */
static retry_stop try_send(retry_call *c, int64_t now_ns, retry_decision *d) {
  /* The AWS adaptive limiter comes before the other admissions (it is the SDKs' last step
   * before the wire, but a held-back attempt must not hold a breaker probe or count as a
   * request in adaptive throttling while it waits). A wait keeps the budget grant pending;
   * the wake at next_send_ns asks again. A wait that would pass the deadline wakes at the
   * deadline, which ends the call there, as a client blocked in acquire would see it. */
  int64_t wait_ns = 0;
  retry_aws_send rl = retry__target_rate_limit(c->target, now_ns, &wait_ns);
  if (rl == RETRY_AWS_SEND_REFUSE) {
    drop_pending_budget(c);
    return RETRY_STOP_THROTTLED;
  }
  if (rl == RETRY_AWS_SEND_WAIT) {
    int64_t at = retry__add_ns(now_ns, wait_ns);
    c->next_send_ns = at < c->deadline_ns ? at : c->deadline_ns;
    assert(c->ext != NULL); /* only a target with the AWS limiter waits: it has an ext */
    c->ext->send_delayed = true;
    decide_wait(c, d);
    return RETRY_STOP_NONE;
  }
  retry_stop why = retry__target_admit(c->target, now_ns, &c->rng);
  if (why != RETRY_STOP_NONE) {
    drop_pending_budget(c);
    return why;
  }
  assert(c->n_attempts < RETRY_CALL_MAX_ATTEMPTS); /* retry_refusal; hedging stops at 64 */
  int32_t k = ++c->n_attempts; /* past the first, a hedge or a retry (retry_call_retries) */
  set_in_flight(c, k);
  retry_call_ext *x = c->ext;
  if (x != NULL) {
    if (x->pending_slot) x->budget_held |= held_bit(c, k);
    if (x->pending_aws_cost > 0) {
      x->aws_paid_attempt = k;
      x->aws_paid_cost = x->pending_aws_cost;
    }
    x->pending_slot = false;
    x->pending_aws_cost = 0;
  }
  retry__target_attempt_sent(c->target, now_ns);

  memset(d, 0, sizeof *d);
  d->action = RETRY_ACTION_SEND;
  d->attempt = k;
  int64_t per = c->policy->per_attempt_timeout_ns;
  d->attempt_deadline_ns = c->deadline_ns;
  if (per > 0) {
    int64_t t = retry__add_ns(now_ns, per);
    if (t < d->attempt_deadline_ns) d->attempt_deadline_ns = t;
  }
  c->next_send_ns = RETRY_NEVER;
  if (is_hedging(c) && x->blocked == RETRY_STOP_NONE && k < c->policy->max_attempts)
    c->next_send_ns = retry__add_ns(now_ns, c->policy->hedging_delay_ns);
  d->wake_ns = c->next_send_ns;
  return RETRY_STOP_NONE;
}

/* Whether status is a throttle as the AWS SDKs classify failures: the target's throttle
 * statuses (adaptiveMode's throttleStatusCodes), else RESOURCE_EXHAUSTED and 429. */
static bool is_throttle_status(const retry_call *c, int32_t status) {
  if (c->target != NULL && c->target->cfg->has_aws_adaptive)
    return retry_status_set_has(&c->target->cfg->aws_throttle_statuses, c->policy->space, status);
  return c->policy->space == RETRY_SPACE_HTTP ? status == 429
                                              : status == RETRY_GRPC_RESOURCE_EXHAUSTED;
}

/* The AWS quota charges more for a retry after a timeout, and in the 2026 behaviour less
 * after a throttle (throttle_cost). */
static int aws_kind(const retry_call *c, int32_t status) {
  if (c->target == NULL || c->target->budget != RETRY_BUDGET_AWS) return RETRY__AWS_PLAIN;
  const retry_aws_quota_config *q = &c->target->cfg->aws;
  if (q->throttle_cost > 0 && is_throttle_status(c, status)) return RETRY__AWS_THROTTLE;
  return retry_status_set_has(&q->timeout_statuses, c->policy->space, status) ? RETRY__AWS_TIMEOUT
                                                                              : RETRY__AWS_PLAIN;
}

/* Asks the budget for one more attempt; keeps the grant pending until it is sent. */
static bool acquire_budget(retry_call *c, int64_t now_ns, int32_t status) {
  int32_t cost = 0;
  bool slot = false;
  if (!retry__target_budget_acquire(c->target, now_ns, aws_kind(c, status), &cost, &slot))
    return false;
  /* Only the Envoy and AWS budgets grant a slot or a cost, and their calls have an ext. */
  assert(c->ext != NULL || (cost == 0 && !slot));
  if (c->ext != NULL) {
    c->ext->pending_aws_cost = cost;
    c->ext->pending_slot = slot;
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Start
 * =================================================================== */

bool retry_call_ext_needed(const retry_policy *p, const retry_target *t, const retry_call_opts *o) {
  if (p->kind == RETRY_POLICY_HEDGE || o->trace != NULL || o->stream != RETRY_STREAM_UNARY ||
      o->stream_items)
    return true;
  if (t == NULL) return false;
  return t->budget == RETRY_BUDGET_ENVOY || t->budget == RETRY_BUDGET_AWS || t->off_limit != 0 ||
         t->off_aws_adaptive != 0;
}

void retry_call_start(retry_call *c, const retry_policy *p, retry_target *t,
                      const retry_call_opts *o, int64_t now_ns, retry_decision *d) {
  assert(c != NULL && p != NULL && o != NULL && d != NULL);
  /* A call that needs an ext and has none fails an assertion where it first needs it: here
   * for a trace or hedging, else at its limiter's permit, its budget's grant or the AWS
   * limiter's wait, or at an outcome with stream messages (cheaper than asking
   * retry_call_ext_needed at every start). */
  assert(o->trace == NULL || o->ext != NULL);
  /* Every field by name rather than a memset of the whole struct first: gcc clears the whole
   * struct with rep stos, which costs more than the rest of a start. status is not set: it
   * shares the backoff state's storage until the call is done (retry_call_status). */
  c->policy = p;
  c->target = t;
  c->ext = o->ext;
  c->rng = o->rng;
  c->start_ns = now_ns;
  c->deadline_ns = o->deadline_ns;
  c->backoff_total_ns = 0;
  c->n_attempts = 0;
  c->n_in_flight = 0;
  c->reason = (uint8_t)RETRY_STOP_NONE;
  c->done = false;
  c->idempotent = retry_policy_is_idempotent(p, o->method);
  c->committed = false;
  c->stream = (unsigned)o->stream & 3u; /* at most RETRY_STREAM_BIDI */
  backoff_reset(c);
  c->next_send_ns = RETRY_NEVER;
  retry_call_ext *x = o->ext;
  if (x != NULL) {
    memset(x, 0, sizeof *x);
    x->id = o->call_id;
    x->trace = o->trace;
    x->trace_ctx = o->trace_ctx;
    x->last_status = -1;
    x->blocked = (uint8_t)RETRY_STOP_NONE;
  }
  bool limit_held = false;
  int64_t limit_at_start = 0;

  event_info ev;
  event_info_init(&ev, c, RETRY_TRACE_START, 0, now_ns);
  if (is_hedging(c)) {
    /* Hedges repeat the request, so they need what a retry needs: an idempotent method and
     * a replayable (unary or opted-in server) stream. The original is sent regardless. */
    assert(x != NULL);
    if (!c->idempotent)
      x->blocked = (uint8_t)RETRY_STOP_METHOD_NOT_IDEMPOTENT;
    else if (stream_rule(c) != RETRY_STOP_NONE)
      x->blocked = (uint8_t)RETRY_STOP_STREAMING;
  }
  if (now_ns >= c->deadline_ns) {
    decide_done(c, now_ns, now_ns, deadline_status(c), RETRY_STOP_DEADLINE, d);
  } else if (!retry__target_limit_acquire(t, &limit_held, &limit_at_start)) {
    /* At the concurrency limit: refused before anything is counted (SimpleLimiter). */
    decide_done(c, now_ns, now_ns, retry__target_limit_reject_status(t, p->space),
                RETRY_STOP_THROTTLED, d);
  } else {
    if (limit_held) { /* only with a limiter, whose calls have an ext */
      assert(x != NULL);
      x->limit_held = true;
      x->limit_in_flight_at_start = limit_at_start;
    }
    retry__target_call_started(t, now_ns);
    retry_stop why = try_send(c, now_ns, d);
    if (why != RETRY_STOP_NONE) decide_done(c, now_ns, now_ns, p->local_reject_status, why, d);
  }
  trace(c, &ev, now_ns, d);
}

/* }================================================================== */

/* {==================================================================
 * Outcomes of a retry policy (and of calls without a policy)
 * =================================================================== */

/* The rules that refuse a retry before any delay is chosen, in their fixed order, so that
 * exactly one reason is reported (docs/engine.md, "When a failed attempt is retried").
 * Returns RETRY_STOP_NONE when every one of them allows the retry. */
static retry_stop retry_refusal(const retry_call *c, int32_t status, const event_info *ev,
                                bool throttle_ok, int64_t now_ns) {
  const retry_policy *p = c->policy;
  if (now_ns >= c->deadline_ns) return RETRY_STOP_DEADLINE;
  /* Without a policy nothing was counted against a limit: max_attempts would tell a reader
   * that retries ran out when none was ever allowed (a queue-full refusal included). */
  if (p->kind == RETRY_POLICY_NONE) return RETRY_STOP_NO_RETRY_POLICY;
  if (!retry_status_set_has(&p->retryable, p->space, status))
    return RETRY_STOP_NON_RETRYABLE_STATUS;
  if (!c->idempotent) return RETRY_STOP_METHOD_NOT_IDEMPOTENT;
  retry_stop s = stream_rule(c);
  if (s != RETRY_STOP_NONE) return s;
  if (c->committed) return RETRY_STOP_COMMITTED;
  /* RETRY_CALL_MAX_ATTEMPTS bounds a policy whose max_attempts was set by hand past it. */
  if (c->n_attempts >= p->max_attempts || c->n_attempts >= RETRY_CALL_MAX_ATTEMPTS)
    return RETRY_STOP_MAX_ATTEMPTS;
  if (ev->pushback >= RETRY_PUSHBACK_STOP) return RETRY_STOP_PUSHBACK_STOP;
  if (!throttle_ok) return RETRY_STOP_THROTTLED;
  if (!retry__target_retry_allowed(c->target, now_ns)) return RETRY_STOP_BREAKER_OPEN;
  return RETRY_STOP_NONE;
}

/* Decides after a failed attempt of a retry policy: the refusal rules, then the delay, which
 * must let the next attempt start before the deadline, then the budget pays for it (last, so
 * a retry that could never start spends nothing). */
static void retry_after_failure(retry_call *c, const retry_outcome *o, bool throttle_ok,
                                event_info *ev, int64_t now_ns, retry_decision *d) {
  const retry_policy *p = c->policy;
  int32_t status = o->status;
  retry_stop why = retry_refusal(c, status, ev, throttle_ok, now_ns);
  if (why != RETRY_STOP_NONE) {
    decide_done(c, now_ns, now_ns, status, why, d);
    return;
  }

  /* The delay: a valid pushback (or Retry-After on an HTTP layer) replaces the backoff, with
   * no jitter, and restarts the exponent; otherwise the policy's backoff. */
  int64_t delay;
  int64_t ra_ns;
  if (ev->pushback == RETRY_PUSHBACK_DELAY) {
    delay = ev->pushback_ns;
    ev->delay_source = RETRY_DELAY_PUSHBACK;
    backoff_reset(c);
  } else if (p->space == RETRY_SPACE_HTTP && p->honor_retry_after && o->retry_after != NULL &&
             retry_pushback_parse_retry_after(o->retry_after, &ra_ns) == RETRY_OK) {
    delay = ra_ns;
    ev->delay_source = RETRY_DELAY_RETRY_AFTER;
    backoff_reset(c);
  } else if (p->space == RETRY_SPACE_HTTP && p->honor_retry_after &&
             o->retry_after_at_ns != RETRY_NEVER) {
    delay = o->retry_after_at_ns > now_ns ? o->retry_after_at_ns - now_ns : 0;
    ev->delay_source = RETRY_DELAY_RETRY_AFTER;
    backoff_reset(c);
  } else {
    /* The value before jitter only for a trace: an untraced call skips its conversion. */
    int64_t *nominal = traced(c) ? &ev->backoff_nominal_ns : NULL;
    if (p->backoff.throttle_initial_ns > 0 && is_throttle_status(c, status))
      delay = retry__backoff_next_throttled(&p->backoff, &c->backoff_n, &c->backoff_carried,
                                            &c->rng, nominal);
    else
      delay = retry__backoff_next_packed(&p->backoff, &c->backoff_n, &c->backoff_carried, &c->rng,
                                         nominal);
    ev->delay_source = RETRY_DELAY_BACKOFF;
  }
  ev->backoff_ns = delay;
  int64_t next = retry__add_ns(now_ns, delay);
  /* An attempt is made only if it can start before the deadline. */
  if (next >= c->deadline_ns) {
    if (p->wait_for_deadline)
      decide_done(c, now_ns, c->deadline_ns, deadline_status(c), RETRY_STOP_DEADLINE, d);
    else
      decide_done(c, now_ns, now_ns, status, RETRY_STOP_DEADLINE, d);
    return;
  }
  if (!acquire_budget(c, now_ns, status)) {
    decide_done(c, now_ns, now_ns, status, RETRY_STOP_BUDGET_EXHAUSTED, d);
    return;
  }
  c->next_send_ns = next;
  c->backoff_total_ns = retry__add_ns(c->backoff_total_ns, delay);
  decide_wait(c, d);
}

/* }================================================================== */

/* {==================================================================
 * Hedging
 * =================================================================== */

/* Records why no more hedges may be sent (the first reason stays) and drops the hedge timer,
 * so the caller is not woken for a hedge that cannot go. */
static void block_hedges(retry_call *c, retry_stop why) {
  if (is_hedging(c) && c->ext->blocked == RETRY_STOP_NONE) c->ext->blocked = (uint8_t)why;
  c->next_send_ns = RETRY_NEVER;
}

/* Tries to send the next hedge now. Returns true with d = SEND; false when no hedge may be
 * sent (c->ext->blocked then says why). */
static bool send_hedge(retry_call *c, int64_t now_ns, int32_t status, retry_decision *d) {
  const retry_policy *p = c->policy;
  retry_stop why = RETRY_STOP_NONE;
  /* A hedge held back by the AWS limiter goes at its wake, with the grant it holds. */
  if (c->ext->send_delayed) {
    decide_wait(c, d);
    return true;
  }
  if (c->ext->blocked != RETRY_STOP_NONE)
    why = (retry_stop)c->ext->blocked;
  else if (c->n_attempts >= p->max_attempts)
    why = RETRY_STOP_MAX_ATTEMPTS;
  else if (now_ns >= c->deadline_ns)
    why = RETRY_STOP_DEADLINE;
  /* Throttling: the first RPC is always sent; a hedge only while tokens > max/2. */
  else if (c->target != NULL && c->target->off_throttle &&
           !retry_throttle_is_allowed(retry__target_throttle(c->target)))
    why = RETRY_STOP_THROTTLED;
  else if (!retry__target_retry_allowed(c->target, now_ns))
    why = RETRY_STOP_BREAKER_OPEN;
  else if (!acquire_budget(c, now_ns, status))
    why = RETRY_STOP_BUDGET_EXHAUSTED;
  else
    why = try_send(c, now_ns, d);
  if (why == RETRY_STOP_NONE) return true;
  block_hedges(c, why);
  return false;
}

/* After an event that sent no hedge: wait for attempts in flight or a scheduled hedge, or
 * stop with the last status when nothing is left. */
static void hedge_wait_or_done(retry_call *c, int64_t now_ns, retry_decision *d) {
  const retry_call_ext *x = c->ext;
  if (c->n_in_flight > 0 || (x->blocked == RETRY_STOP_NONE && c->next_send_ns != RETRY_NEVER)) {
    decide_wait(c, d);
    return;
  }
  retry_stop why = x->blocked != RETRY_STOP_NONE ? (retry_stop)x->blocked : RETRY_STOP_MAX_ATTEMPTS;
  int32_t status = x->last_status >= 0 ? x->last_status : c->policy->local_reject_status;
  decide_done(c, now_ns, now_ns, status, why, d);
}

static void hedge_after_failure(retry_call *c, const retry_outcome *o, event_info *ev,
                                int64_t now_ns, retry_decision *d) {
  const retry_policy *p = c->policy;
  int32_t status = o->status;
  /* Past the deadline, a fatal status (A6: it ends the call and cancels every other hedge),
   * or a commit all end the call at once. */
  retry_stop why = RETRY_STOP_NONE;
  if (now_ns >= c->deadline_ns)
    why = RETRY_STOP_DEADLINE;
  else if (!retry_status_set_has(&p->retryable, p->space, status))
    why = RETRY_STOP_NON_RETRYABLE_STATUS;
  else if (c->committed)
    why = RETRY_STOP_COMMITTED;
  if (why != RETRY_STOP_NONE) {
    decide_done(c, now_ns, now_ns, status, why, d);
    return;
  }
  if (ev->pushback >= RETRY_PUSHBACK_STOP) {
    block_hedges(c, RETRY_STOP_PUSHBACK_STOP); /* those in flight may still answer */
  } else if (ev->pushback == RETRY_PUSHBACK_DELAY) {
    /* The next hedge after the pushback, later ones hedgingDelay apart from it. */
    if (c->ext->blocked == RETRY_STOP_NONE && c->n_attempts < p->max_attempts) {
      c->next_send_ns = retry__add_ns(now_ns, ev->pushback_ns);
      ev->backoff_ns = ev->pushback_ns;
      ev->delay_source = RETRY_DELAY_PUSHBACK;
    }
  } else if (send_hedge(c, now_ns, status, d)) {
    /* A non-fatal status sends the next hedge immediately. */
    return;
  }
  hedge_wait_or_done(c, now_ns, d);
}

/* }================================================================== */

/* {==================================================================
 * Events
 * =================================================================== */

void retry_call_on_outcome(retry_call *c, int32_t attempt, const retry_outcome *o, int64_t now_ns,
                           retry_decision *d) {
  assert(c != NULL && o != NULL && d != NULL && c->policy != NULL);
  event_info ev;
  event_info_init(&ev, c, RETRY_TRACE_OUTCOME, attempt, now_ns);
  ev.status = o->status;
  ev.outcome = o;
  bool known = in_flight(c, attempt);
  if (!known) {
    /* An attempt that was cancelled (or reported twice): nothing changes. */
    if (c->done)
      repeat_done(c, d);
    else
      decide_wait(c, d);
    trace(c, &ev, now_ns, d);
    return;
  }
  const retry_policy *p = c->policy;
  clear_in_flight(c, attempt);
  retry_call_ext *x = c->ext;
  int32_t cost = x != NULL && x->aws_paid_attempt == attempt ? x->aws_paid_cost : 0;
  retry__target_attempt_done(c->target, now_ns, p->space, o->status, cost);
  if (x != NULL) {
    if (x->budget_held & held_bit(c, attempt)) {
      retry__target_budget_release(c->target);
      x->budget_held &= ~held_bit(c, attempt);
    }
    x->last_status = o->status;
  }

  /* A restarted server stream sends from the beginning: whatever this attempt delivered that
   * an earlier attempt had already delivered is a duplicate (seed 000: [1, 2, 1, 2, 3, 4, 5]). */
  if (o->stream_items > 0) {
    assert(x != NULL); /* a call whose outcomes carry messages has an ext */
    if (x != NULL) {
      int64_t dup = o->stream_items < x->stream_items_prev ? o->stream_items : x->stream_items_prev;
      x->stream_duplicates += dup;
      x->stream_items += o->stream_items;
      if (o->stream_items > x->stream_items_prev) x->stream_items_prev = o->stream_items;
    }
  }
  if (o->headers_received && headers_commit(c)) c->committed = true;
  if (p->retry_buffer_bytes > 0 && o->request_bytes > p->retry_buffer_bytes) c->committed = true;

  if (p->space == RETRY_SPACE_GRPC)
    ev.pushback = retry_pushback_parse(o->pushback, o->n_pushback, &ev.pushback_ns);

  if (retry_status_is_ok(p->space, o->status)) {
    decide_done(c, now_ns, now_ns, o->status, RETRY_STOP_OK, d);
    trace(c, &ev, now_ns, d);
    return;
  }
  /* gRPC throttling: a qualifying failure (retryable / non-fatal status, or a pushback that
   * says stop) is recorded before any other check, so it costs a token even on the last
   * attempt (C-core RetryState::ShouldRetry, grpc-java, grpc-go alike). */
  bool qualifying =
      p->kind != RETRY_POLICY_NONE && (retry_status_set_has(&p->retryable, p->space, o->status) ||
                                       ev.pushback >= RETRY_PUSHBACK_STOP);
  bool throttle_ok = true;
  if (qualifying && c->target != NULL && c->target->off_throttle)
    throttle_ok = retry_throttle_record_failure(retry__target_throttle(c->target));

  if (c->done) {
    repeat_done(c, d);
  } else if (is_hedging(c)) {
    hedge_after_failure(c, o, &ev, now_ns, d);
  } else {
    retry_after_failure(c, o, throttle_ok, &ev, now_ns, d);
  }
  trace(c, &ev, now_ns, d);
}

/* The wake of an attempt the AWS limiter held back: past the deadline the call ends (a retry
 * call has nothing in flight; a hedged one stops hedging and waits for what is); otherwise it
 * asks the limiter again, which may hold it back once more. */
static void wake_delayed(retry_call *c, int64_t now_ns, retry_decision *d) {
  c->ext->send_delayed = false;
  c->next_send_ns = RETRY_NEVER;
  retry_stop why = RETRY_STOP_NONE;
  if (now_ns >= c->deadline_ns) {
    drop_pending_budget(c);
    why = RETRY_STOP_DEADLINE;
  } else {
    why = try_send(c, now_ns, d);
    if (why == RETRY_STOP_NONE) return;
  }
  if (is_hedging(c) && c->n_attempts > 0) {
    block_hedges(c, why);
    hedge_wait_or_done(c, now_ns, d);
  } else if (why == RETRY_STOP_DEADLINE) {
    decide_done(c, now_ns, now_ns, deadline_status(c), RETRY_STOP_DEADLINE, d);
  } else {
    decide_done(c, now_ns, now_ns, c->policy->local_reject_status, why, d);
  }
}

void retry_call_wake(retry_call *c, int64_t now_ns, retry_decision *d) {
  assert(c != NULL && d != NULL && c->policy != NULL);
  event_info ev;
  event_info_init(&ev, c, RETRY_TRACE_WAKE, 0, now_ns);
  if (c->done) {
    repeat_done(c, d);
  } else if (c->next_send_ns == RETRY_NEVER || now_ns < c->next_send_ns) {
    decide_wait(c, d); /* early or spurious: keep the timer */
  } else if (c->ext != NULL && c->ext->send_delayed) {
    wake_delayed(c, now_ns, d);
  } else if (is_hedging(c)) {
    c->next_send_ns = RETRY_NEVER;
    if (!send_hedge(c, now_ns, c->ext->last_status, d)) hedge_wait_or_done(c, now_ns, d);
  } else {
    c->next_send_ns = RETRY_NEVER;
    if (now_ns >= c->deadline_ns) {
      decide_done(c, now_ns, now_ns, deadline_status(c), RETRY_STOP_DEADLINE, d);
    } else {
      retry_stop why = try_send(c, now_ns, d);
      if (why != RETRY_STOP_NONE)
        decide_done(c, now_ns, now_ns, c->policy->local_reject_status, why, d);
    }
  }
  trace(c, &ev, now_ns, d);
}

void retry_call_on_headers(retry_call *c, int32_t attempt, int64_t now_ns, retry_decision *d) {
  assert(c != NULL && d != NULL && c->policy != NULL);
  event_info ev;
  event_info_init(&ev, c, RETRY_TRACE_HEADERS, attempt, now_ns);
  bool known = in_flight(c, attempt);
  if (c->done) {
    repeat_done(c, d);
  } else if (!known || !headers_commit(c)) {
    decide_wait(c, d);
  } else {
    /* A6: once headers arrive the call is committed to this attempt; a hedged call cancels
     * every other attempt and sends no more hedges. */
    c->committed = true;
    bool others = c->n_in_flight > 1;
    cancel_in_flight(c, attempt);
    block_hedges(c, RETRY_STOP_COMMITTED);
    decide_wait(c, d);
    d->attempt = attempt;
    d->cancel_others = others;
  }
  trace(c, &ev, now_ns, d);
}

/* A cancel ends the call through decide_done like any other end, so the one place that gives
 * back what a call holds serves it too; only the reason and the status are its own. */
void retry_call_cancel(retry_call *c, int64_t now_ns, retry_decision *d) {
  assert(c != NULL && d != NULL && c->policy != NULL);
  event_info ev;
  event_info_init(&ev, c, RETRY_TRACE_CANCEL, 0, now_ns);
  int32_t status =
      c->policy->space == RETRY_SPACE_GRPC ? RETRY_GRPC_CANCELLED : RETRY_HTTP_CANCELLED;
  if (c->done && c->end_ns > now_ns) {
    /* Decided, but its end is still to come (a client that sleeps until its deadline rather
     * than fail early): to its caller it is still running, so the cancel ends it now. What
     * it held was given back when that end was decided. */
    c->status = status;
    c->reason = (uint8_t)RETRY_STOP_CANCELLED;
    c->end_ns = now_ns;
    repeat_done(c, d);
  } else if (c->done) {
    repeat_done(c, d);
  } else {
    if (c->ext != NULL) c->ext->send_delayed = false;
    decide_done(c, now_ns, now_ns, status, RETRY_STOP_CANCELLED, d);
  }
  trace(c, &ev, now_ns, d);
}

void retry_outcome_init(retry_outcome *o, int32_t status) {
  memset(o, 0, sizeof *o);
  o->status = status;
  o->retry_after_at_ns = RETRY_NEVER;
}

/* }================================================================== */
