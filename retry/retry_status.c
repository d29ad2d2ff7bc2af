/*
 * retry_status.c: gRPC status codes and HTTP statuses, status sets, and the small name
 * tables of the public enums.
 *
 * A status set holds both spaces at once (gRPC bits and an HTTP bitmap), so one set can
 * describe "failures" for a breaker that sits under a gRPC and an HTTP layer alike.
 */
#include "retry_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const grpc_names[RETRY_GRPC_N_CODES] = {
#define GEN(name, val) [val] = #name,
    RETRY_GRPC_CODE_MAP(GEN)
#undef GEN
};

const char *retry_grpc_code_name(int code) {
  if (code < 0 || code >= RETRY_GRPC_N_CODES) return NULL;
  return grpc_names[code];
}

int retry_grpc_code_parse(const char *name, int *code) {
  if (name == NULL) return RETRY_EINVAL;
  for (int c = 0; c < RETRY_GRPC_N_CODES; c++) {
    if (strcmp(name, grpc_names[c]) == 0) {
      *code = c;
      return RETRY_OK;
    }
  }
  return RETRY_EINVAL;
}

void retry_status_set_clear(retry_status_set *s) { memset(s, 0, sizeof *s); }

int retry_status_set_add(retry_status_set *s, retry_space space, int status) {
  if (space == RETRY_SPACE_GRPC) {
    if (status < 0 || status >= RETRY_GRPC_N_CODES) return RETRY_ERANGE;
    s->grpc |= UINT32_C(1) << status;
    return RETRY_OK;
  }
  if (status < 100 || status > 599) return RETRY_ERANGE;
  unsigned bit = (unsigned)(status - 100);
  s->http[bit / 64] |= UINT64_C(1) << (bit % 64);
  return RETRY_OK;
}

bool retry_status_set_has(const retry_status_set *s, retry_space space, int status) {
  if (space == RETRY_SPACE_GRPC) {
    if (status < 0 || status >= RETRY_GRPC_N_CODES) return false;
    return (s->grpc >> status) & 1u;
  }
  if (status < 100 || status > 599) return false;
  unsigned bit = (unsigned)(status - 100);
  return (s->http[bit / 64] >> (bit % 64)) & 1u;
}

bool retry_status_set_is_empty(const retry_status_set *s, retry_space space) {
  if (space == RETRY_SPACE_GRPC) return s->grpc == 0;
  for (int i = 0; i < 8; i++)
    if (s->http[i] != 0) return false;
  return true;
}

/* Parses a whole decimal number of at most 3 digits; -1 when s is not one. */
static int parse_small_uint(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 3) return -1;
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

int retry_status_set_add_token(retry_status_set *s, retry_space space, const char *token) {
  if (token == NULL) return RETRY_EINVAL;
  if (space == RETRY_SPACE_GRPC) {
    int code;
    if (retry_grpc_code_parse(token, &code) != RETRY_OK) return RETRY_EINVAL;
    return retry_status_set_add(s, space, code);
  }
  /* HTTP: "503", "5xx", "gateway-error", "retriable-4xx" (Envoy's names for the last two). */
  if (strcmp(token, "gateway-error") == 0) {
    retry_status_set_add(s, space, 502);
    retry_status_set_add(s, space, 503);
    retry_status_set_add(s, space, 504);
    return RETRY_OK;
  }
  if (strcmp(token, "retriable-4xx") == 0) return retry_status_set_add(s, space, 409);
  if (strlen(token) == 3 && token[0] >= '1' && token[0] <= '5' &&
      (token[1] == 'x' || token[1] == 'X') && (token[2] == 'x' || token[2] == 'X')) {
    int base = (token[0] - '0') * 100;
    for (int st = base; st < base + 100; st++)
      retry_status_set_add(s, space, st);
    return RETRY_OK;
  }
  int v = parse_small_uint(token);
  if (v < 100 || v > 599) return RETRY_EINVAL;
  return retry_status_set_add(s, space, v);
}

/* {==================================================================
 * Names of the public enums
 * =================================================================== */

const char *retry_stop_name(retry_stop s) {
  static const char *const names[RETRY_STOP_N] = {
#define GEN(name, str) str,
      RETRY_STOP_MAP(GEN)
#undef GEN
  };
  if ((int)s < 0 || s >= RETRY_STOP_N) return "unknown";
  return names[s];
}

const char *retry_action_name(retry_action a) {
  switch (a) {
    case RETRY_ACTION_SEND: return "send";
    case RETRY_ACTION_WAIT: return "wait";
    case RETRY_ACTION_DONE: return "done";
  }
  return "unknown";
}

const char *retry_pushback_kind_name(retry_pushback_kind k) {
  switch (k) {
    case RETRY_PUSHBACK_NONE: return "none";
    case RETRY_PUSHBACK_DELAY: return "delay";
    case RETRY_PUSHBACK_STOP: return "stop";
    case RETRY_PUSHBACK_INVALID: return "invalid";
    case RETRY_PUSHBACK_REPEATED: return "repeated";
  }
  return "unknown";
}

const char *retry_breaker_state_name(retry_breaker_state s) {
  switch (s) {
    case RETRY_BREAKER_CLOSED: return "closed";
    case RETRY_BREAKER_OPEN: return "open";
    case RETRY_BREAKER_HALF_OPEN: return "half_open";
  }
  return "unknown";
}

const char *retry_budget_kind_name(retry_budget_kind k) {
  switch (k) {
    case RETRY_BUDGET_NONE: return "none";
    case RETRY_BUDGET_AWS: return "aws";
    case RETRY_BUDGET_FINAGLE: return "finagle";
    case RETRY_BUDGET_ENVOY: return "envoy";
    case RETRY_BUDGET_TOKEN_BUCKET: return "token_bucket";
  }
  return "unknown";
}

/* }================================================================== */
