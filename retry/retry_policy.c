/*
 * retry_policy.c: policy defaults, the client's cap on maxAttempts, validation, the
 * idempotent-method allowlist and the worst-case amplification of stacked layers.
 *
 * A policy is a plain struct so a client can fill it by hand; validation states the same
 * rules gRPC applies to a service config, plus the engine's own (jitter fraction, hedges).
 */
#include "retry_int.h"

#include <math.h>
#include <string.h>

void retry_policy_init(retry_policy *p, retry_space space) {
  memset(p, 0, sizeof *p);
  p->kind = RETRY_POLICY_NONE;
  p->space = space;
  p->max_attempts = 1;
  p->max_attempts_configured = 1;
  /* gRPC's documented example values; only used once a retry policy sets kind. */
  p->backoff.initial_ns = 100 * RETRY_NS_PER_MS;
  p->backoff.max_ns = 1 * RETRY_NS_PER_S;
  p->backoff.multiplier = 2.0;
  p->backoff.jitter = RETRY_JITTER_PROPORTIONAL;
  p->backoff.jitter_fraction = 0.2;
  p->backoff.cap_after_jitter = false;
  p->retry_buffer_bytes = RETRY_DEFAULT_BUFFER_BYTES;
  p->honor_retry_after = true;
  /* C-core, grpc-go and grpc-java sleep the backoff and end the call at its deadline with
   * DEADLINE_EXCEEDED; none asks whether the next attempt fits (retry_profile.c). */
  p->wait_for_deadline = true;
  p->local_reject_status = space == RETRY_SPACE_GRPC ? RETRY_GRPC_UNAVAILABLE : 503;
}

void retry_policy_set_max_attempts(retry_policy *p, int32_t configured, int32_t limit) {
  p->max_attempts_configured = configured;
  /* gRPC clamps silently (grpc-go convertRetryPolicy, grpc-java maxRetryAttempts, C-core
   * MAX_MAX_RETRY_ATTEMPTS): a config asking for 7 gets 5, with no error. */
  int32_t n = limit > 0 && configured > limit ? limit : configured;
  /* The engine counts a call's attempts in 16 bits (retry_call.n_attempts). */
  p->max_attempts = n > RETRY_CALL_MAX_ATTEMPTS ? RETRY_CALL_MAX_ATTEMPTS : n;
}

/* Fails with a message about one field of the policy. */
#define FAIL(field, ...)                                                   \
  do {                                                                     \
    retry_error_set(err, RETRY_ECONFIG, NULL, field, -1, -1, __VA_ARGS__); \
    return RETRY_ECONFIG;                                                  \
  } while (0)

static int validate_backoff(const retry_backoff *b, retry_error *err) {
  if (b->initial_ns <= 0) FAIL("initialBackoff", "initialBackoff must be a duration > 0");
  if (b->max_ns <= 0) FAIL("maxBackoff", "maxBackoff must be a duration > 0");
  if (!(b->multiplier > 0) || !isfinite(b->multiplier))
    FAIL("backoffMultiplier", "backoffMultiplier must be a number > 0, got %g", b->multiplier);
  if ((unsigned)b->jitter > (unsigned)RETRY_JITTER_LINKERD)
    FAIL("jitter", "jitter must be one of grpc, full, equal, decorrelated, polly-v2, none, linkerd");
  if (b->throttle_initial_ns < 0)
    FAIL("throttleInitialBackoff", "throttleInitialBackoff must be a duration > 0");
  if (b->throttle_initial_ns > 0 &&
      (b->jitter == RETRY_JITTER_DECORRELATED || b->jitter == RETRY_JITTER_POLLY_V2))
    FAIL("throttleInitialBackoff", "throttleInitialBackoff needs a jitter that draws from the "
                                   "nominal delay alone (not decorrelated or polly-v2)");
  if (!(b->jitter_fraction >= 0 && b->jitter_fraction <= 1))
    FAIL("jitterFraction", "jitterFraction must be a number in [0, 1], got %g", b->jitter_fraction);
  return RETRY_OK;
}

int retry_policy_validate(const retry_policy *p, retry_error *err) {
  if (p->space != RETRY_SPACE_GRPC && p->space != RETRY_SPACE_HTTP)
    FAIL("statusSpace", "statusSpace must be grpc or http");
  if (p->per_attempt_timeout_ns < 0)
    FAIL("perAttemptTimeout", "perAttemptTimeout must be a duration > 0");
  if (p->retry_buffer_bytes < 0)
    FAIL("retryBufferBytes", "retryBufferBytes must be an integer >= 0");
  bool reject_ok = p->space == RETRY_SPACE_GRPC
                       ? p->local_reject_status > 0 && p->local_reject_status < RETRY_GRPC_N_CODES
                       : p->local_reject_status >= 100 && p->local_reject_status <= 599;
  if (!reject_ok) FAIL("localRejectStatus", "the local reject status must be a non-OK status");
  switch (p->kind) {
    case RETRY_POLICY_NONE: return RETRY_OK;
    case RETRY_POLICY_RETRY:
      if (p->max_attempts_configured <= 1)
        FAIL("maxAttempts", "maxAttempts must be an integer > 1, got %d",
             (int)p->max_attempts_configured);
      if (p->max_attempts < 1) FAIL("maxAttempts", "the maxAttempts limit must be >= 1");
      if (validate_backoff(&p->backoff, err) != RETRY_OK) return RETRY_ECONFIG;
      if (retry_status_set_is_empty(&p->retryable, p->space))
        FAIL("retryableStatusCodes", "retryableStatusCodes must list at least one status");
      if (retry_status_set_has(&p->retryable, p->space, p->space == RETRY_SPACE_GRPC ? 0 : 200))
        FAIL("retryableStatusCodes", "retryableStatusCodes must not contain OK");
      return RETRY_OK;
    case RETRY_POLICY_HEDGE:
      if (p->max_attempts_configured <= 1)
        FAIL("maxAttempts", "maxAttempts must be an integer > 1, got %d",
             (int)p->max_attempts_configured);
      if (p->max_attempts < 1 || p->max_attempts > RETRY_MAX_HEDGED_ATTEMPTS)
        FAIL("maxAttempts", "hedging allows at most %d attempts, got %d", RETRY_MAX_HEDGED_ATTEMPTS,
             (int)p->max_attempts);
      if (p->hedging_delay_ns < 0) FAIL("hedgingDelay", "hedgingDelay must be a duration >= 0");
      if (retry_status_set_has(&p->retryable, p->space, p->space == RETRY_SPACE_GRPC ? 0 : 200))
        FAIL("nonFatalStatusCodes", "nonFatalStatusCodes must not contain OK");
      return RETRY_OK;
  }
  FAIL("", "unknown policy kind %d", (int)p->kind);
}

#undef FAIL

bool retry_policy_is_idempotent(const retry_policy *p, const char *method) {
  if (!p->has_idempotent_allowlist) return true;
  if (method == NULL) return false;
  for (size_t i = 0; i < p->n_idempotent_methods; i++)
    if (strcmp(p->idempotent_methods[i], method) == 0) return true;
  return false;
}

uint64_t retry_policy_layers_worst_case(const retry_policy *const *chain, size_t n) {
  uint64_t product = 1;
  for (size_t i = 0; i < n; i++) {
    uint64_t a = 1;
    if (chain[i] != NULL && chain[i]->kind != RETRY_POLICY_NONE && chain[i]->max_attempts > 1)
      a = (uint64_t)chain[i]->max_attempts;
    if (product > UINT64_MAX / a) return UINT64_MAX;
    product *= a;
  }
  return product;
}
