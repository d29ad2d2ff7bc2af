/*
 * expt_scenario_units.c: the units of a scenario file: durations ("250ms", "1.5s", "2m") into
 * int64 nanoseconds and rates ("800/s", "3000/min") into calls per second.
 *
 * libc only and allocation-free. The integer part of a duration is exact; a fraction is
 * rounded to the nearest nanosecond, and whatever does not fit in int64 is ERANGE.
 */
#include "expt/expt_scenario_int.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* The grammar of both units is a plain decimal: digits, optionally '.' and more digits. No
 * sign (a negative duration or rate means nothing here), no exponent and no blanks, so that
 * what a user writes is what a reader of the file sees. Go's time.ParseDuration has the same
 * units and rejects the same things except the sign; its compound forms ("1h30m") are left
 * out because one number per value keeps --set overrides and error messages simple. */

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* Scans "digits[.digits]" at s. Returns the length, or 0 when s does not start with one;
 * *int_len receives the length of the integer part. */
static size_t scan_decimal(const char *s, size_t *int_len) {
  size_t n = 0;
  while (is_digit(s[n]))
    n++;
  *int_len = n;
  if (n == 0) return 0;
  if (s[n] != '.') return n;
  size_t f = 0;
  while (is_digit(s[n + 1 + f]))
    f++;
  return f == 0 ? 0 : n + 1 + f; /* "1." has no fraction digits */
}

/* {==================================================================
 * Durations
 * =================================================================== */

typedef struct unit {
  const char *name;
  int64_t ns; /* nanoseconds per unit */
} unit;

/* Longest names first would matter for a prefix match; the match below is exact, so the
 * order is only the one a reader expects. */
static const unit duration_units[] = {
    {"ns", 1},
    {"us", INT64_C(1000)},
    {"ms", INT64_C(1000000)},
    {"s", INT64_C(1000000000)},
    {"m", INT64_C(60000000000)},
    {"h", INT64_C(3600000000000)},
};

int expt_duration_parse(const char *s, int64_t *ns) {
  assert(ns != NULL);
  if (s == NULL) return RETRY_EINVAL;
  if (strcmp(s, "0") == 0) {
    *ns = 0; /* the one number that needs no unit: zero of anything is zero */
    return RETRY_OK;
  }
  size_t int_len = 0, len = scan_decimal(s, &int_len);
  if (len == 0) return RETRY_EINVAL;
  const unit *u = NULL;
  for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++)
    if (strcmp(s + len, duration_units[i].name) == 0) u = &duration_units[i];
  if (u == NULL) return RETRY_EINVAL;
  /* Integer part: exact, with the overflow check before each step. Digits past the limit
   * are still scanned above, so a malformed huge value is EINVAL and not ERANGE. */
  int64_t whole = 0;
  for (size_t i = 0; i < int_len; i++) {
    int d = s[i] - '0';
    if (whole > (INT64_MAX - d) / 10) return RETRY_ERANGE;
    whole = whole * 10 + d;
  }
  if (whole > INT64_MAX / u->ns) return RETRY_ERANGE;
  whole *= u->ns;
  /* Fraction: digit k weighs ns / 10^k. The largest unit is 3.6e12 ns, so the sum stays far
   * inside a double's exact range and rounding it to whole nanoseconds is exact enough; no
   * locale-dependent strtod is involved. */
  double frac = 0, weight = (double)u->ns;
  for (size_t i = int_len + 1; i < len; i++) {
    weight /= 10;
    frac += (s[i] - '0') * weight;
  }
  int64_t frac_ns = (int64_t)floor(frac + 0.5);
  if (frac_ns > INT64_MAX - whole) return RETRY_ERANGE;
  *ns = whole + frac_ns;
  return RETRY_OK;
}

/* }================================================================== */

/* {==================================================================
 * Rates
 * =================================================================== */

typedef struct rate_unit {
  const char *name;
  double per_s; /* calls per second of one call per unit */
} rate_unit;

static const rate_unit rate_units[] = {
    {"/s", 1.0},
    {"/ms", 1000.0},
    {"/min", 1.0 / 60.0},
    {"/h", 1.0 / 3600.0},
};

int expt_rate_parse(const char *s, double *per_s) {
  assert(per_s != NULL);
  if (s == NULL) return RETRY_EINVAL;
  size_t int_len = 0, len = scan_decimal(s, &int_len);
  if (len == 0) return RETRY_EINVAL;
  const rate_unit *u = NULL;
  for (size_t i = 0; i < sizeof rate_units / sizeof rate_units[0]; i++)
    if (strcmp(s + len, rate_units[i].name) == 0) u = &rate_units[i];
  if (u == NULL) return RETRY_EINVAL;
  /* The digits go into one integer mantissa and a power of ten: for up to 15 significant
   * digits both are exact doubles and the division is correctly rounded ("0.1/s" is the
   * double nearest 0.1). Longer inputs lose only digits that no rate needs. */
  double mant = 0;
  int scale = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') continue;
    mant = mant * 10 + (s[i] - '0');
    if (i > int_len) scale++;
  }
  double v = mant / pow(10.0, scale);
  v *= u->per_s;
  if (!isfinite(v)) return RETRY_ERANGE;
  *per_s = v;
  return RETRY_OK;
}

/* }================================================================== */
