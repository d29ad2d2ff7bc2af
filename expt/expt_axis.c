/*
 * expt_axis.c: the values a study varies: numbers with units ("400/s"), the ranges of a sweep's
 * axes, the keys no axis may vary. Shared by the scenario loader (which checks a "sweep" or
 * "search" block), the sweep and the search, so that none of them includes another for these.
 * Invariant: a range's ends are exactly the ends written.
 */
#include "expt/expt_axis.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retry/retry_json.h"

/* {==================================================================
 * Numbers with units
 * =================================================================== */

/* A number as strtod reads it, but only the decimal forms: no hex, inf or nan, which a unit
 * string never means. */
static bool decimal_prefix(const char *s, double *x, const char **end) {
  const char *p = s;
  if (*p == '+' || *p == '-') p++;
  if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))) return false;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return false;
  char *e = NULL;
  *x = strtod(s, &e);
  if (e == s || !isfinite(*x)) return false;
  *end = e;
  return true;
}

int expt_axis_scalar_parse(const json_t *v, expt_axis_scalar *out, retry_error *err) {
  memset(out, 0, sizeof *out);
  if (json_is_integer(v)) {
    out->x = (double)json_integer_value(v);
    out->integer = true;
    return 0;
  }
  if (json_is_real(v)) {
    out->x = json_real_value(v);
    out->integer = false;
    return 0;
  }
  char shown[48];
  if (json_is_string(v)) {
    const char *s = json_string_value(v), *end = NULL;
    retry_json_printable(shown, sizeof shown, s, 40);
    if (!decimal_prefix(s, &out->x, &end)) {
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                      "\"%s\" is not a number with a unit such as \"400/s\" or \"2s\"", shown);
      return RETRY_EINVAL;
    }
    size_t n = strlen(end);
    if (n >= sizeof out->unit || strchr(end, ' ') != NULL) {
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "\"%s\" has a unit that is not one",
                      shown);
      return RETRY_EINVAL;
    }
    memcpy(out->unit, end, n + 1);
    out->text = true;
    /* "2.0s" is integral as a number, and 2 steps of it stay "2s", "3s". */
    out->integer = out->x == floor(out->x) && fabs(out->x) < 9e15;
    return 0;
  }
  char got[48];
  retry_json_describe(v, got, sizeof got);
  retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                  "an end of a range must be a number or a string such as \"400/s\", got %s", got);
  return RETRY_EINVAL;
}

json_t *expt_axis_scalar_json(const expt_axis_scalar *like, double x, bool integer) {
  char num[40];
  if (integer)
    snprintf(num, sizeof num, "%.0f", x);
  else
    snprintf(num, sizeof num, "%.12g", x);
  if (strcmp(num, "-0") == 0) snprintf(num, sizeof num, "0");
  if (like->text) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s%s", num, like->unit);
    return json_string(buf);
  }
  if (integer) return json_integer((json_int_t)llround(x));
  /* The number the text means, so that what the document gets is what the point shows. */
  return json_real(strtod(num, NULL));
}

/* Every refusal is RETRY_EINVAL with the reason alone; only a failed allocation is
 * RETRY_ENOMEM, so callers tell the two apart by the code, not the text. */
static json_t *range_fail(retry_error *err, const char *fmt, ...) RETRY_PRINTF(2, 3);
static json_t *range_fail(retry_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  retry_error_vset(err, RETRY_EINVAL, NULL, NULL, -1, -1, fmt, ap);
  va_end(ap);
  return NULL;
}

json_t *expt_axis_range(const json_t *from, const json_t *to, long steps, bool log,
                        retry_error *err) {
  expt_axis_scalar a, b;
  retry_error e;
  retry_error_clear(&e);
  if (expt_axis_scalar_parse(from, &a, &e) != 0) return range_fail(err, "\"from\": %s", e.message);
  if (expt_axis_scalar_parse(to, &b, &e) != 0) return range_fail(err, "\"to\": %s", e.message);
  if (a.text != b.text || strcmp(a.unit, b.unit) != 0) {
    char sa[48], sb[48];
    retry_json_describe(from, sa, sizeof sa);
    retry_json_describe(to, sb, sizeof sb);
    return range_fail(
        err, "\"from\" and \"to\" must be both numbers or both have the same unit, got %s and %s",
        sa, sb);
  }
  if (steps < 1 || steps > EXPT_AXIS_MAX_STEPS || (steps == 1 && a.x != b.x)) {
    return range_fail(err, "the steps must be 2 to %d (or 1 when from == to), got %ld",
                      EXPT_AXIS_MAX_STEPS, steps);
  }
  if (log && (a.x <= 0 || b.x <= 0)) {
    return range_fail(err, "a log scale needs both ends > 0");
  }
  /* Ends near the largest double have a width that overflows: every step would be infinite. */
  if (!isfinite(b.x - a.x))
    return range_fail(err, "the range from %g to %g is wider than a double can hold: narrow it",
                      a.x, b.x);
  bool integer = a.integer && b.integer;
  double step = steps > 1 ? (b.x - a.x) / (double)(steps - 1) : 0;
  if (!log && integer && step != floor(step)) integer = false;
  json_t *values = json_array();
  if (values == NULL) {
    retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory");
    return NULL;
  }
  double prev = 0;
  for (long i = 0; i < steps; i++) {
    double t = steps > 1 ? (double)i / (double)(steps - 1) : 0, x;
    /* The ends are exactly the ends written, whatever the rounding in between. */
    if (i == 0)
      x = a.x;
    else if (i == steps - 1)
      x = b.x;
    else if (log)
      x = a.x * pow(b.x / a.x, t);
    else
      x = a.x + step * (double)i;
    if (integer) x = (double)llround(x);
    if (integer && log && i > 0 && x == prev) {
      json_decref(values);
      return range_fail(err,
                        "a log scale of %ld integers from %.0f to %.0f repeats %.0f: use fewer "
                        "steps, or give the values",
                        steps, a.x, b.x, x);
    }
    prev = x;
    if (json_array_append_new(values, expt_axis_scalar_json(&a, x, integer)) != 0) {
      json_decref(values);
      retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory");
      return NULL;
    }
  }
  return values;
}

/* }================================================================== */

const char *expt_axis_reserved(const char *head) {
  static const char *const reserved[] = {"variants",     "expect",     "sweep",    "search",
                                         "replications", "confidence", "baseline", "warmup"};
  for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
    if (strcmp(head, reserved[i]) == 0) return reserved[i];
  return NULL;
}

size_t expt_axis_paths(const json_t *ax, const char **out, size_t max) {
  const char *one = json_string_value(json_object_get(ax, "path"));
  if (one != NULL) {
    if (max > 0) out[0] = one;
    return max > 0 ? 1 : 0;
  }
  const json_t *paths = json_object_get(ax, "paths");
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(paths) && n < max; i++) {
    const char *p = json_string_value(json_array_get(paths, i));
    if (p != NULL) out[n++] = p;
  }
  return n;
}
