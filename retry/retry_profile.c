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
    /* retrysim's own rules: every delay jittered, a call that no attempt fits stops at once
     * with the last status, hedging as A6 words it, one throttle per client. */
    {"retrysim", "retrysim's defaults", true, false, true, false, RETRY_JITTER_PROPORTIONAL, 0.2},
    /* gRPC C-core 1.51 (Debian's libgrpc-dev, also grpcio 1.51, C++, Ruby): the first delay
     * after the start and after a pushback is exactly initialBackoff (BackOff's first
     * NextAttemptTime); the retry timer runs into the deadline, which ends the call with
     * DEADLINE_EXCEEDED; hedgingPolicy is parsed and ignored; one throttle per server name for
     * the whole process. Measured on loopback by make sim-to-real. */
    {"grpc-core-1.51", "gRPC C-core 1.51 (C++, Python, Ruby), read from its sources and measured",
     false, true, false, true, RETRY_JITTER_PROPORTIONAL, 0.2},
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
