/*
 * script.h: test support. A deterministic RNG (splitmix64) and a scripted virtual-time driver
 * that runs one logical call through the engine against a list of attempt outcomes, with
 * attempts in flight side by side (hedging), deadlines and side effects.
 */
#ifndef TEST_SCRIPT_H
#define TEST_SCRIPT_H

#include "retry/retry.h"

/* splitmix64 state; next() for a retry_rng. */
typedef struct test_rng {
  uint64_t s;
} test_rng;
uint64_t test_rng_next(void *ctx);
retry_rng test_rng_make(test_rng *r, uint64_t seed);

/* One scripted attempt: what the server does when this attempt reaches it. */
typedef struct script_attempt {
  int64_t duration_ns;       /* from send to outcome */
  int32_t status;            /* outcome status */
  const char *pushback;      /* grpc-retry-pushback-ms value, or NULL */
  int64_t side_effect_at_ns; /* the handler's side effect (a charge) at this offset, -1: none */
  int64_t headers_at_ns;     /* response headers arrive at this offset, -1: never */
  int64_t stream_items;      /* server stream: messages delivered before the outcome */
  const char *retry_after;   /* HTTP Retry-After, or NULL */
} script_attempt;

#define SCRIPT_MAX 64

typedef struct script_result {
  int32_t status;              /* final status */
  retry_stop reason;           /* stop reason */
  int64_t end_ns;              /* when the call ended */
  int attempts;                /* attempts sent (reached the server) */
  int side_effects;            /* side effects executed (charges) */
  int cancelled;               /* attempts cancelled by the engine */
  int64_t send_ns[SCRIPT_MAX]; /* when each attempt was sent */
  int64_t stream_items, stream_duplicates;
  retry_call call;    /* the call's final state */
  retry_call_ext ext; /* its optional state, when the options gave none and the call needs
                         one (retry_call_ext_needed); call.ext then points here */
} script_result;

/* A fresh retry_call_ext for a call a test starts by hand: 16 in turn, so that the calls one
 * test has in flight at once never share one. */
retry_call_ext *script_ext(void);

/* Runs a call starting at start_ns (with o->ext, or r->ext when o gives none and the call
 * needs one: a call that needs none runs without, as a lean caller's would). Attempt k follows
 * steps[min(k, n) - 1] (the last step repeats). An attempt still running at its attempt deadline is
 * abandoned then with DEADLINE_EXCEEDED (504 in HTTP space). Returns 0, or -1 if the engine
 * misbehaved (e.g. more than SCRIPT_MAX attempts or a decision in the past). */
int script_run(const retry_policy *p, retry_target *t, const retry_call_opts *o, int64_t start_ns,
               const script_attempt *steps, size_t n, script_result *r);

/* A step that fails (or succeeds) after duration_ms with no side effect. */
script_attempt script_step(int64_t duration_ms, int32_t status);

#endif
