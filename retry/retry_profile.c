/*
 * retry_profile.c: implementation profiles, what a given gRPC implementation does where the
 * implementations (and retrysim's own defaults) differ.
 *
 * Each rule is cited in docs/service-config.md ("Implementation profiles") to the source file
 * it was read from, or to the sim-to-real measurement (docs/sim-to-real.md) for C-core 1.51.
 */
#include "retry_int.h"

#include <string.h>

static const retry_profile profiles[] = {
    /* The default: what the implementations below agree on, A6 where they do not. Every delay
     * jittered (grpc-go and grpc-java jitter the first one too); a call whose next attempt
     * does not fit sleeps on and ends at its deadline with DEADLINE_EXCEEDED (all three);
     * hedging as A6 words it (grpc-java); one throttle per channel (grpc-go, grpc-java). */
    {"grpc", "where gRPC implementations agree (A6 where they do not)", true, true, true, false,
     RETRY_JITTER_PROPORTIONAL, 0.2},
    /* gRPC C-core 1.51 (Debian's libgrpc-dev; grpcio, C++ and Ruby of that version): the
     * first delay after the start and after a pushback is exactly initialBackoff (BackOff's
     * first NextAttemptTime); the retry timer runs into the deadline; hedgingPolicy is parsed
     * and ignored; one throttle per server name for the whole process. Measured on loopback
     * by make sim-to-real. */
    {"grpc-core-1.51", "gRPC C-core 1.51 (C++, Python, Ruby): read from its sources, measured",
     false, true, false, true, RETRY_JITTER_PROPORTIONAL, 0.2},
    /* grpc-go 1.85 (stream.go, shouldRetry): every delay x U(0.8, 1.2); the backoff timer
     * races the call's context, whose deadline ends the call with DEADLINE_EXCEEDED; no
     * hedging (stream.go leaves it as an open to-do); the throttle lives on the ClientConn. */
    {"grpc-go-1.85", "grpc-go 1.85: read from its sources", true, true, false, false,
     RETRY_JITTER_PROPORTIONAL, 0.2},
    /* grpc-java 1.85 (RetriableStream.intervalWithJitter on every delay, x U(0.8, 1.2) by
     * default; ClientCallImpl cancels the call at its deadline with DEADLINE_EXCEEDED; hedging
     * implemented; the throttle belongs to the ManagedChannel). */
    {"grpc-java-1.85", "grpc-java 1.85: read from its sources", true, true, true, false,
     RETRY_JITTER_PROPORTIONAL, 0.2},
};

const retry_profile *retry_profile_default(void) { return &profiles[0]; }

const retry_profile *retry_profile_at(size_t i) {
  return i < sizeof profiles / sizeof profiles[0] ? &profiles[i] : NULL;
}

const retry_profile *retry_profile_find(const char *name) {
  if (name == NULL) return NULL;
  for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
    if (strcmp(profiles[i].name, name) == 0) return &profiles[i];
  return NULL;
}

void retry_profile_apply(const retry_profile *pr, retry_policy *p) {
  if (pr == NULL || p == NULL) return;
  p->backoff.jitter = pr->jitter;
  p->backoff.jitter_fraction = pr->jitter_fraction;
  p->backoff.first_delay_exact = !pr->first_delay_jittered;
  p->wait_for_deadline = pr->wait_for_deadline;
  if (p->kind == RETRY_POLICY_HEDGE && !pr->hedging_supported) {
    /* Accepted and ignored, as the implementation does: one attempt. */
    p->kind = RETRY_POLICY_NONE;
    p->max_attempts = 1;
    p->hedging_delay_ns = 0;
    p->hedging_ignored = true;
  }
}
