/*
 * retry_duration.c: proto3 JSON Duration strings ("0.1s") to int64 nanoseconds.
 *
 * libc only and allocation-free, so clients can parse durations without the JSON loader.
 * Every result is exact: no floating point is involved, and what does not fit is refused.
 */
#include "retry_int.h"

#include <assert.h>

/* The proto3 Duration range (google/protobuf/duration.proto): +-10000 years, in seconds. */
#define MAX_DURATION_SECONDS INT64_C(315576000000)

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* Grammar: -? (0 | [1-9][0-9]*) (. [0-9]{1,9})? s. The integer part is that of a JSON number,
 * so "01s" is rejected like the JSON number 01; no exponent, no blanks, no "+". Syntax is
 * checked before range, so a malformed huge value is EINVAL, not ERANGE.
 *
 * This is the proto3 JSON mapping as gRPC reads it (service_config.md: "a decimal number of
 * seconds"); grpc-go's parser likewise refuses a missing "s", more than 9 fraction digits and
 * a part without digits ("1.s", ".5s"). Units other than "s" ("100ms") are not proto3 JSON. */
int retry_duration_parse(const char *s, int64_t *ns) {
  assert(ns != NULL);
  if (s == NULL) return RETRY_EINVAL;
  const char *p = s;
  bool neg = false;
  if (*p == '-') {
    neg = true;
    p++;
  }
  if (!is_digit(*p) || (*p == '0' && is_digit(p[1]))) return RETRY_EINVAL;
  /* Seconds are accumulated only up to just past the limit, then merely scanned, so that a
   * thousand-digit value cannot overflow and still gets its syntax checked to the end. */
  uint64_t secs = 0;
  bool too_big = false;
  for (; is_digit(*p); p++) {
    if (secs > (uint64_t)MAX_DURATION_SECONDS)
      too_big = true; /* keep scanning the syntax */
    else
      secs = secs * 10 + (uint64_t)(*p - '0');
  }
  uint64_t frac = 0;
  int n_frac = 0;
  if (*p == '.') {
    p++;
    for (; is_digit(*p); p++) {
      if (n_frac == 9) return RETRY_EINVAL;
      frac = frac * 10 + (uint64_t)(*p - '0');
      n_frac++;
    }
    if (n_frac == 0) return RETRY_EINVAL;
  }
  if (p[0] != 's' || p[1] != '\0') return RETRY_EINVAL;
  for (; n_frac < 9; n_frac++)
    frac *= 10; /* "0.1" is 100000000 ns */
  if (too_big || secs > (uint64_t)MAX_DURATION_SECONDS) return RETRY_ERANGE;
  /* The proto3 range is wider than int64 nanoseconds (about 292 years): check that too. The
   * magnitude is built unsigned so that -9223372036.854775808s, whose magnitude is one more
   * than INT64_MAX, still reads as INT64_MIN. */
  uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  if (secs > (limit - frac) / (uint64_t)RETRY_NS_PER_S) return RETRY_ERANGE;
  uint64_t mag = secs * (uint64_t)RETRY_NS_PER_S + frac;
  if (!neg)
    *ns = (int64_t)mag;
  else if (mag == (uint64_t)INT64_MAX + 1u)
    *ns = INT64_MIN;
  else
    *ns = -(int64_t)mag;
  return RETRY_OK;
}
