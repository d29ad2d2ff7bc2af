/*
 * retry_pushback.c: strict parsers for server pushback (gRPC grpc-retry-pushback-ms) and
 * HTTP Retry-After, and an HTTP-date parser that needs no clock.
 *
 * Parsing is strict on purpose: A6 asks for a signed 32-bit decimal without unnecessary
 * leading zeros, and anything else must stop retries rather than be guessed at.
 */
#include "retry_int.h"

#include <stdio.h>
#include <string.h>

/* Parses one pushback value. Returns 0 and sets *ms, or -1 when it is not canonical. */
static int parse_pushback_value(const char *s, int64_t *ms) {
  if (s == NULL) return -1;
  bool neg = false;
  const char *p = s;
  if (*p == '-') {
    neg = true;
    p++;
  }
  if (*p < '0' || *p > '9') return -1;
  if (*p == '0' && (p[1] != '\0' || neg)) return -1; /* "007", "-0" */
  int64_t v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v > INT64_C(2147483648)) return -1; /* beyond any int32 */
  }
  if (neg) v = -v;
  if (v > INT32_MAX || v < INT32_MIN) return -1;
  *ms = v;
  return 0;
}

retry_pushback_kind retry_pushback_parse(const char *const *values, size_t n_values,
                                         int64_t *delay_ns) {
  *delay_ns = 0;
  if (values == NULL || n_values == 0) return RETRY_PUSHBACK_NONE;
  /* grpc-go: more than one value means "don't retry" and counts against the throttle. */
  if (n_values > 1) return RETRY_PUSHBACK_REPEATED;
  int64_t ms;
  if (parse_pushback_value(values[0], &ms) != 0) return RETRY_PUSHBACK_INVALID;
  if (ms < 0) return RETRY_PUSHBACK_STOP;
  *delay_ns = ms * RETRY_NS_PER_MS;
  return RETRY_PUSHBACK_DELAY;
}

int retry_pushback_parse_retry_after(const char *value, int64_t *delay_ns) {
  if (value == NULL || *value == '\0') return RETRY_EINVAL;
  int64_t s = 0;
  for (const char *p = value; *p; p++) {
    if (*p < '0' || *p > '9') return RETRY_EINVAL;
    s = s * 10 + (*p - '0');
    if (s > INT64_MAX / RETRY_NS_PER_S) return RETRY_ERANGE;
  }
  *delay_ns = s * RETRY_NS_PER_S;
  return RETRY_OK;
}

/* {==================================================================
 * HTTP-date (RFC 9110 section 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime
 * forms that recipients must still accept.
 * =================================================================== */

static int month_index(const char *m) {
  static const char *const months[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; i++)
    if (strncmp(m, months[i], 3) == 0 && m[3] == '\0') return i + 1;
  return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (era arithmetic:
 * 400-year cycles of 146097 days, March-based years so February ends a year). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t mp = (m + 9) % 12;
  int64_t doy = (153 * mp + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static bool valid_day(int y, int m, int d) {
  static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  int lim = mdays[m - 1];
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) lim = 29;
  return d <= lim;
}

int retry_pushback_parse_http_date(const char *value, int64_t *epoch_ns) {
  if (value == NULL) return RETRY_EINVAL;
  char wk[16], mon[4], zone[4];
  int d, y, hh, mm, ss, n = -1;
  size_t len = strlen(value);
  /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (29 characters). */
  if (len == 29 &&
      sscanf(value, "%3s, %2d %3s %4d %2d:%2d:%2d %3s%n", wk, &d, mon, &y, &hh, &mm, &ss, zone,
             &n) == 8 &&
      n == 29 && strcmp(zone, "GMT") == 0) {
    /* accepted below */
  } else if (sscanf(value, "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d %3s%n", wk, &d, mon, &y, &hh, &mm,
                    &ss, zone, &n) == 8 &&
             (size_t)n == len && strcmp(zone, "GMT") == 0) {
    /* RFC 850: two-digit year; RFC 9110 says to read it as the most recent past year with
     * those digits, which without a clock we take as 19yy for yy >= 70, else 20yy. */
    y += y >= 70 ? 1900 : 2000;
  } else if (len == 24 &&
             sscanf(value, "%3s %3s %2d %2d:%2d:%2d %4d%n", wk, mon, &d, &hh, &mm, &ss, &y, &n) ==
                 7 &&
             n == 24) {
    /* asctime: "Sun Nov  6 08:49:37 1994" */
  } else {
    return RETRY_EINVAL;
  }
  int m = month_index(mon);
  if (m == 0 || !valid_day(y, m, d) || hh > 23 || mm > 59 || ss > 60 || hh < 0 || mm < 0 || ss < 0)
    return RETRY_EINVAL;
  int64_t secs = days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss;
  *epoch_ns = secs * RETRY_NS_PER_S;
  return RETRY_OK;
}

/* }================================================================== */
