/*
 * expt_expect.c: expectations: parsing a path into segments, resolving it in a run object,
 * reading the expected value's shape and comparing. Invariant: a path that does not resolve and
 * a malformed expectation both count as failures, never as passes.
 */
#include "expt/expt_expect.h"
#include "expt/expt_error.h"
#include "expt/expt_output.h"

#include <errno.h>
#include <unistd.h>

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* {==================================================================
 * Paths
 * =================================================================== */

/* The grammar is the one the scenario loader checks expectation paths with
 * (expt/expt_scenario_path.c), so a path it accepts resolves here as it meant:
 *   path    := ["$" ("." | &"[")] first rest*
 *   first   := key | bracket
 *   rest    := "." key | bracket
 *   key     := one or more bytes other than '.', '[', ']'
 *   bracket := "[" index "]" | "[\"" quoted "\"]" | "[" member "=" value "]"
 *   index   := "0" | [1-9][0-9]*
 * A quoted key holds names with dots ("services[\"db.v2\"].utilization"); inside it \" and \\
 * stand for '"' and '\'. A member=value value runs to the next ']' and may hold dots. */

/* The scenario loader's limit too, so every key it accepts fits here. */
#define SEG_TEXT_MAX 256

typedef enum seg_kind {
  SEG_KEY,   /* ".key", ["key"] or the first key: a member of an object */
  SEG_INDEX, /* "[n]": an element of an array */
  SEG_MATCH  /* "[key=value]": the first element whose member key is the string value */
} seg_kind;

/* One segment of a path, decoded. */
typedef struct seg {
  seg_kind kind;
  char key[SEG_TEXT_MAX]; /* SEG_KEY: the key; SEG_MATCH: the member's key */
  char val[SEG_TEXT_MAX]; /* SEG_MATCH: the value */
  size_t index;           /* SEG_INDEX */
} seg;

/* Copies n bytes of src into dst (SEG_TEXT_MAX bytes). Returns -1 when they do not fit. */
static int seg_text(char *dst, const char *src, size_t n) {
  if (n >= SEG_TEXT_MAX) return -1;
  memcpy(dst, src, n);
  dst[n] = '\0';
  return 0;
}

/* Reads a bracket; p is just past '['. Returns the position after ']', or NULL. */
static const char *read_bracket(const char *p, seg *s) {
  if (*p >= '0' && *p <= '9') {
    if (*p == '0' && p[1] >= '0' && p[1] <= '9') return NULL; /* no leading zeros */
    /* s was zeroed by next_seg, so the index starts at 0. The cap (about 1e9) is lower than
     * the loader's SIZE_MAX: a larger index passes loading but is malformed here, and fails
     * either way, as no summary array comes near that length. */
    s->kind = SEG_INDEX;
    for (; *p >= '0' && *p <= '9'; p++) {
      if (s->index > 100000000) return NULL;
      s->index = s->index * 10 + (size_t)(*p - '0');
    }
    return *p == ']' ? p + 1 : NULL;
  }
  if (*p == '"') {
    size_t n = 0;
    for (p++; *p != '"'; p++) {
      if (*p == '\0' || n + 1 >= SEG_TEXT_MAX) return NULL;
      if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
      s->key[n++] = *p;
    }
    s->key[n] = '\0';
    s->kind = SEG_KEY;
    return p[1] == ']' ? p + 2 : NULL;
  }
  /* member=value: the member may hold none of '=', '[' and ']'; the value runs to the first
   * ']', so it may hold dots ("[to=db.v2]"). The same split as the loader's. */
  const char *eq = p + strcspn(p, "=[]");
  if (*eq != '=' || eq == p) return NULL;
  const char *close = strchr(eq, ']');
  if (close == NULL) return NULL;
  s->kind = SEG_MATCH;
  if (seg_text(s->key, p, (size_t)(eq - p)) != 0) return NULL;
  if (seg_text(s->val, eq + 1, (size_t)(close - eq - 1)) != 0) return NULL;
  return close + 1;
}

/* Skips the optional "$" ("$.a", "$[0]"); "$x" is a key that starts with '$'. */
static size_t path_start(const char *path) {
  if (path[0] != '$') return 0;
  if (path[1] == '.') return 2;
  if (path[1] == '[' || path[1] == '\0') return 1;
  return 0;
}

/* Reads the segment at path + *pos and advances *pos past it; first tells whether it is the
 * path's first segment (a key without its dot). Returns 1 with s filled, 0 at the end of the
 * path, -1 on a syntax error. */
static int next_seg(const char *path, size_t *pos, bool first, seg *s) {
  const char *p = path + *pos;
  if (*p == '\0') return first ? -1 : 0; /* an empty path names nothing */
  memset(s, 0, sizeof *s);
  if (*p == '[') {
    const char *end = read_bracket(p + 1, s);
    if (end == NULL) return -1;
    *pos = (size_t)(end - path);
    return 1;
  }
  /* After the first segment a key must come with its '.'. */
  if (!first) {
    if (*p != '.') return -1;
    p++;
  }
  size_t n = strcspn(p, ".[]");
  if (n == 0 || p[n] == ']' || seg_text(s->key, p, n) != 0) return -1;
  s->kind = SEG_KEY;
  *pos = (size_t)(p + n - path);
  return 1;
}

/* Whether path is well formed. */
static bool path_is_valid(const char *path) {
  size_t pos = path_start(path);
  seg s;
  int rc;
  /* next_seg decodes and advances; rc == 0 means the whole path decoded. */
  for (bool first = true; (rc = next_seg(path, &pos, first, &s)) == 1; first = false)
    continue;
  return rc == 0;
}

/* Whether array element e matches every [key=value] selector in sel[0..n). */
/* Only string members match: selectors compare text, and the summary's records are keyed by
 * name strings ("from", "to"). An element that is not an object has no members and never
 * matches. */
static bool element_matches(const json_t *e, const seg *sel, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const json_t *m = json_object_get(e, sel[i].key);
    if (!json_is_string(m) || strcmp(json_string_value(m), sel[i].val) != 0) return false;
  }
  return true;
}

/* The result of resolving a path. */
typedef struct found {
  const json_t *value; /* what the path names, NULL when it does not resolve */
  bool missing_status; /* the last key is missing directly under an existing "by_status" */
  char why[400];       /* when value is NULL: why */
} found;

/* Consecutive selectors combined into one choice. Edges need two (from and to); a ninth would
 * be applied to the chosen element as a new step and fail, since that is not an array. */
#define MAX_SELECTORS 8

/* Applies the run of [key=value] selectors starting with *first (the rest at path + *pos) to
 * array a; done_len is the length of the path that led to a. Returns the element, or NULL with
 * out->why filled. */
static const json_t *select_match(const json_t *a, const char *path, size_t *pos, const seg *first,
                                  size_t done_len, found *out) {
  seg sel[MAX_SELECTORS];
  size_t n = 1;
  sel[0] = *first;
  /* The following [key=value] selectors refine this same choice. */
  /* The lookahead works on a copy of the position: *pos moves only past selectors actually
   * taken, so a following key or index is read by resolve as usual. */
  size_t p = *pos;
  while (n < MAX_SELECTORS && path[p] == '[' && next_seg(path, &p, false, &sel[n]) == 1 &&
         sel[n].kind == SEG_MATCH) {
    n++;
    *pos = p;
  }
  if (!json_is_array(a)) {
    snprintf(out->why, sizeof out->why, "%.*s is not an array", (int)done_len, path);
    return NULL;
  }
  size_t i;
  const json_t *e;
  json_array_foreach(a, i, e) {
    if (element_matches(e, sel, n)) return e;
  }
  /* No match is a plain failure: the by_status zero rule is for keys only. */
  snprintf(out->why, sizeof out->why, "no element of %.*s matches %.*s", (int)done_len, path,
           (int)(*pos - done_len), path + done_len);
  return NULL;
}

/* Fills out->why for key s missing from cur (last: the segment before, NULL for the first), and
 * decides the by_status zero rule. */
static void missing_key(const json_t *cur, const seg *s, const seg *last, const char *path,
                        size_t pos, size_t prev, found *out) {
  /* The zero rule needs all three: the missing key ends the path, its parent is an object,
   * and that parent was reached by a key named by_status. So "calls.by_status.UNAVAILABLE"
   * qualifies, while a missing by_status itself, or a deeper path under it, does not. The
   * %.100s and the 200-byte cut keep why inside its 400 bytes. */
  out->missing_status = path[pos] == '\0' && json_is_object(cur) && last != NULL &&
                        last->kind == SEG_KEY && strcmp(last->key, "by_status") == 0;
  if (last == NULL)
    snprintf(out->why, sizeof out->why, "no key \"%.100s\"", s->key);
  else
    snprintf(out->why, sizeof out->why, "no key \"%.100s\" in %.*s", s->key,
             (int)(prev < 200 ? prev : 200), path);
}

/* Resolves path in root. Fills out; returns 0, or -1 on a syntax error. */
static int resolve(const json_t *root, const char *path, found *out) {
  memset(out, 0, sizeof *out);
  const json_t *cur = root;
  size_t pos = path_start(path), prev = pos;
  /* last holds the previous segment and is read only once first is false. prev is the length
   * of the path consumed before the current segment, which messages quote. */
  seg s, last;
  bool first = true;
  int rc;
  while ((rc = next_seg(path, &pos, first, &s)) == 1) {
    const json_t *next = NULL;
    if (s.kind == SEG_KEY) {
      next = json_object_get(cur, s.key);
      if (next == NULL) {
        missing_key(cur, &s, first ? NULL : &last, path, pos, prev, out);
        return 0;
      }
    } else if (s.kind == SEG_INDEX) {
      next = json_array_get(cur, s.index);
      if (next == NULL) {
        snprintf(out->why, sizeof out->why, "%.*s has no element %zu (%s)", (int)prev, path,
                 s.index, json_is_array(cur) ? "out of range" : "not an array");
        return 0;
      }
    } else {
      next = select_match(cur, path, &pos, &s, prev, out);
      if (next == NULL) return 0;
    }
    cur = next;
    last = s;
    prev = pos;
    first = false;
  }
  if (rc < 0) {
    /* 1-based for people. check_one reports this like a missing value: a failure. */
    snprintf(out->why, sizeof out->why, "malformed path (at character %zu)", pos + 1);
    return -1;
  }
  out->value = cur;
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Expected values
 * =================================================================== */

/* An expected value is read into a shape once per check. A malformed one becomes SHAPE_BAD with
 * the reason, and the check fails with that reason: the loader refuses such files already, and
 * if one slipped through (an "expect" built by hand), failing loudly is safer than a check that
 * passes without checking anything. */

typedef enum shape_kind {
  SHAPE_BAD = 0, /* not a valid expectation */
  SHAPE_NUMBER,  /* a number: equal within tolerance */
  SHAPE_SCALAR,  /* a string, bool or null: equal */
  SHAPE_RANGE,   /* [lo, hi] or {"min", "max"}: lo <= got <= hi, each bound optional */
  SHAPE_APPROX   /* {"approx": x, "tol": t} */
} shape_kind;

typedef struct shape {
  shape_kind kind;
  double x, tol;       /* SHAPE_NUMBER: x; SHAPE_APPROX: x and tol */
  bool has_lo, has_hi; /* SHAPE_RANGE */
  double lo, hi;       /* SHAPE_RANGE bounds, each used only when its has_ flag is set */
  const char *why;     /* SHAPE_BAD: what is wrong */
} shape;

/* Reads {"min": x, "max": y} or {"approx": x, "tol": t}. Extra keys are refused, not ignored:
 * {"min": 1, "mx": 5} is a typo that would otherwise drop the upper bound silently. */
static shape object_shape(const json_t *want) {
  shape s = {.kind = SHAPE_BAD};
  const json_t *min = json_object_get(want, "min"), *max = json_object_get(want, "max");
  const json_t *approx = json_object_get(want, "approx"), *tol = json_object_get(want, "tol");
  /* n must equal the keys recognised: any other key makes the object malformed. */
  size_t n = json_object_size(want);
  if ((min || max) && n == (size_t)(min != NULL) + (size_t)(max != NULL)) {
    if ((min && !json_is_number(min)) || (max && !json_is_number(max))) {
      s.why = "min and max must be numbers";
      return s;
    }
    if (min && max && json_number_value(min) > json_number_value(max)) {
      s.why = "min must be <= max";
      return s;
    }
    s.kind = SHAPE_RANGE;
    s.has_lo = min != NULL;
    s.has_hi = max != NULL;
    s.lo = json_number_value(min);
    s.hi = json_number_value(max);
  } else if (approx && tol && n == 2) {
    if (!json_is_number(approx) || !json_is_number(tol) || json_number_value(tol) < 0) {
      s.why = "approx must be a number and tol a number >= 0";
      return s;
    }
    s.kind = SHAPE_APPROX;
    s.x = json_number_value(approx);
    s.tol = json_number_value(tol);
  } else {
    s.why = "an object must be {\"min\", \"max\"} (either optional) or {\"approx\", \"tol\"}";
  }
  return s;
}

/* Reads the shape of an expected value. */
static shape shape_of(const json_t *want) {
  shape s = {.kind = SHAPE_BAD};
  /* Integers and reals alike: 1000 and 1000.0 are the same expectation. */
  if (json_is_number(want)) {
    s.kind = SHAPE_NUMBER;
    s.x = json_number_value(want);
  } else if (json_is_string(want) || json_is_boolean(want) || json_is_null(want)) {
    s.kind = SHAPE_SCALAR;
  } else if (json_is_array(want)) {
    const json_t *lo = json_array_get(want, 0), *hi = json_array_get(want, 1);
    if (json_array_size(want) != 2 || !json_is_number(lo) || !json_is_number(hi) ||
        json_number_value(lo) > json_number_value(hi)) {
      s.why = "a range must be [lo, hi] with two numbers, lo <= hi";
      return s;
    }
    s.kind = SHAPE_RANGE;
    s.has_lo = s.has_hi = true;
    s.lo = json_number_value(lo);
    s.hi = json_number_value(hi);
  } else {
    s = object_shape(want);
  }
  return s;
}

/* Whether the number g satisfies a numeric shape. */
static bool number_holds(const shape *s, double g) {
  /* The rounding slack of an equality: a relative 1e-9, at least an absolute 1e-12. It also
   * widens approx's tolerance, so that 1.5 is within 0.1 of 1.4 although 1.5 - 1.4 computes
   * to 0.10000000000000009. */
  double slack = fmax(1e-12, 1e-9 * fmax(fabs(g), fabs(s->x)));
  switch (s->kind) {
    case SHAPE_NUMBER: return fabs(g - s->x) <= slack;
    /* Ranges get no slack: a bound is a limit, written with whatever margin the user wants. */
    case SHAPE_RANGE: return (!s->has_lo || g >= s->lo) && (!s->has_hi || g <= s->hi);
    case SHAPE_APPROX: return fabs(g - s->x) <= s->tol + slack;
    default: return false;
  }
}

/* Whether got satisfies the shape. */
static bool shape_holds(const shape *s, const json_t *want, const json_t *got) {
  /* The casts only feed json_equal, which reads its arguments. */
  if (s->kind == SHAPE_SCALAR) return json_equal((json_t *)want, (json_t *)got) == 1;
  /* A numeric shape needs a number: the string "1000" does not satisfy 1000. */
  return json_is_number(got) && number_holds(s, json_number_value(got));
}

/* Writes a JSON value compactly ("1.5", "\"x\"", "{...}") into buf. Numbers use %.10g, enough
 * to show every digit of the summary's 6-digit values and of a user's expected value, so a FAIL
 * line never shows two equal-looking numbers. */
static void describe_json(char *buf, size_t size, const json_t *v) {
  if (json_is_number(v)) {
    snprintf(buf, size, "%.10g", json_number_value(v));
    return;
  }
  /* JSON_ENCODE_ANY lets a scalar dump on its own; a failed dump shows as "?", and snprintf
   * cuts a large object to the buffer. */
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_PRESERVE_ORDER);
  snprintf(buf, size, "%s", s ? s : "?");
  free(s);
}

/* Writes what a shape expects ("1000", "[10, 250]", ">= 700", "1.5 +- 0.1") into buf. */
static void describe_shape(char *buf, size_t size, const shape *s, const json_t *want) {
  switch (s->kind) {
    case SHAPE_RANGE:
      if (s->has_lo && s->has_hi)
        snprintf(buf, size, "[%.10g, %.10g]", s->lo, s->hi);
      else if (s->has_lo)
        snprintf(buf, size, ">= %.10g", s->lo);
      else
        snprintf(buf, size, "<= %.10g", s->hi);
      break;
    case SHAPE_APPROX: snprintf(buf, size, "%.10g +- %.10g", s->x, s->tol); break;
    default: describe_json(buf, size, want); break;
  }
}

/* }================================================================== */

/* {==================================================================
 * Checking
 * =================================================================== */

/* Checks one expectation and reports it. Returns whether it passed. The order of the tests
 * matters: a bad expectation is reported as such even when its path does not resolve, and the
 * by_status zero rule applies only once the path was found missing in the right place. */
static bool check_one(const char *path, const json_t *want, const json_t *run, const char *run_name,
                      FILE *report, bool verbose, expt_expect_sink sink, void *sink_ctx) {
  /* got has room for a why (400 bytes) and its prefix. The expectation is described first,
   * so even the line of a bad one shows what was written. */
  char expected[160], got[480];
  shape s = shape_of(want);
  found at;
  bool pass = false;
  describe_shape(expected, sizeof expected, &s, want);
  if (s.kind == SHAPE_BAD) {
    snprintf(got, sizeof got, "nothing: invalid expectation: %s", s.why);
  } else if (resolve(run, path, &at) != 0 || (at.value == NULL && !at.missing_status)) {
    snprintf(got, sizeof got, "nothing: %s", at.why);
  } else if (at.value == NULL && s.kind == SHAPE_SCALAR) {
    snprintf(got, sizeof got, "nothing: %s", at.why); /* the zero rule is for numbers only */
  } else if (at.value == NULL) {
    pass = number_holds(&s, 0.0); /* a status by_status does not list was seen 0 times */
    snprintf(got, sizeof got, "0");
  } else {
    pass = shape_holds(&s, want, at.value);
    describe_json(got, sizeof got, at.value);
  }
  if (report != NULL && (!pass || verbose))
    fprintf(report, "%s %s: %s: expected %s, got %s\n", pass ? "PASS" : "FAIL", run_name, path,
            expected, got);
  if (sink != NULL) sink(sink_ctx, run_name, path, pass, expected, got);
  return pass;
}

/* Every expectation is checked and reported, not only up to the first failure: a run can be
 * long, and one report should list everything that is wrong with it. Jansson iterates in
 * insertion order, so the report follows the expect object and reads the same every time. */
int expt_expect_check(const json_t *expect, const json_t *run, const char *run_name, FILE *report,
                     bool verbose) {
  return expt_expect_check_to(expect, run, run_name, report, verbose, NULL, NULL);
}

int expt_expect_check_to(const json_t *expect, const json_t *run, const char *run_name, FILE *report,
                        bool verbose, expt_expect_sink sink, void *sink_ctx) {
  if (expect == NULL) return 0;
  if (run_name == NULL) run_name = "run";
  if (!json_is_object(expect)) {
    if (report != NULL) fprintf(report, "FAIL %s: expect: not an object\n", run_name);
    if (sink != NULL) sink(sink_ctx, run_name, "expect", false, "an object", "not an object");
    return 1;
  }
  int failed = 0;
  const char *path;
  const json_t *want;
  /* The cast only feeds jansson's iterator, which does not modify the object. */
  json_object_foreach((json_t *)expect, path, want) {
    if (!check_one(path, want, run, run_name, report, verbose, sink, sink_ctx)) failed++;
  }
  return failed;
}

/* Unlike check, validate stops at the first bad key: it guards loading, where the first error
 * wins. */
int expt_expect_validate(const json_t *expect, retry_error *err) {
  if (!json_is_object(expect)) {
    retry_error_set(err, RETRY_ECONFIG, NULL, NULL, -1, -1,
                    "expect must be an object of path: value");
    return RETRY_ECONFIG;
  }
  const char *path;
  const json_t *want;
  json_object_foreach((json_t *)expect, path, want) {
    if (!path_is_valid(path)) {
      retry_error_set(err, RETRY_ECONFIG, NULL, NULL, -1, -1,
                      "\"%s\": malformed path (keys joined by '.', then [n] or [key=value])", path);
      return RETRY_ECONFIG;
    }
    shape s = shape_of(want);
    if (s.kind == SHAPE_BAD) {
      retry_error_set(err, RETRY_ECONFIG, NULL, NULL, -1, -1, "\"%s\": %s", path, s.why);
      return RETRY_ECONFIG;
    }
  }
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * JUnit XML
 * =================================================================== */

/* The results are kept as jansson values (an array per run, in the order checked): the
 * collector then has one owner of its strings and one release. */
struct expt_junit {
  char *suite;  /* the scenario's name */
  json_t *runs; /* [{"name": run, "cases": [{"path", "passed", "expected", "got"}]}] */
  bool failed;  /* out of memory while collecting: writing fails */
};

expt_junit *expt_junit_create(const char *suite) {
  expt_junit *j = calloc(1, sizeof *j);
  if (j == NULL) return NULL;
  size_t n = strlen(suite) + 1;
  j->suite = malloc(n);
  j->runs = json_array();
  if (j->suite == NULL || j->runs == NULL) {
    expt_junit_destroy(j);
    return NULL;
  }
  memcpy(j->suite, suite, n);
  return j;
}

void expt_junit_destroy(expt_junit *j) {
  if (j == NULL) return;
  free(j->suite);
  json_decref(j->runs);
  free(j);
}

/* A JSON string of s; bytes that are not UTF-8 (a path in an expect key always is, a run
 * name too) would fail json_string, and are then replaced by '?'. */
static json_t *jstr(const char *s) {
  json_t *v = json_string(s);
  if (v != NULL) return v;
  char buf[512];
  size_t n = 0;
  for (; *s && n + 1 < sizeof buf; s++)
    buf[n++] = (unsigned char)*s < 0x80 ? *s : '?';
  buf[n] = '\0';
  return json_string(buf);
}

void expt_junit_add(void *ctx, const char *run_name, const char *path, bool passed,
                   const char *expected, const char *got) {
  expt_junit *j = ctx;
  size_t n = json_array_size(j->runs);
  json_t *last = n > 0 ? json_array_get(j->runs, n - 1) : NULL;
  if (last == NULL || strcmp(json_string_value(json_object_get(last, "name")), run_name) != 0) {
    last = json_pack("{s:o, s:[]}", "name", jstr(run_name), "cases");
    if (last == NULL || json_array_append_new(j->runs, last) != 0) {
      j->failed = true;
      return;
    }
  }
  json_t *c = json_pack("{s:o, s:b, s:o, s:o}", "path", jstr(path), "passed", passed, "expected",
                        jstr(expected), "got", jstr(got));
  if (c == NULL || json_array_append_new(json_object_get(last, "cases"), c) != 0) j->failed = true;
}

/* Text for an attribute or an element, escaped: the five XML entities, and the control
 * characters XML 1.0 does not allow (all below 0x20 but tab, newline and carriage return)
 * replaced by '?'. The input is UTF-8 (jansson's), which XML takes as it is. */
static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    switch (ch) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default: fputc(ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' ? '?' : ch, f);
    }
  }
}

static size_t count_failures(const json_t *cases) {
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(cases); i++)
    n += !json_is_true(json_object_get(json_array_get(cases, i), "passed"));
  return n;
}

/* One <testsuite> per run (a variant, or the scenario itself), one <testcase> per
 * expectation, named by its path, with classname SCENARIO.RUN so CI systems group them; a
 * failure's message is "expected X, got Y". Time is 0: the checks take no measurable time,
 * and a wall-clock figure would make the file differ between equal runs. */
static void junit_body(const expt_junit *j, FILE *f) {
  size_t tests = 0, failures = 0;
  for (size_t r = 0; r < json_array_size(j->runs); r++) {
    const json_t *cases = json_object_get(json_array_get(j->runs, r), "cases");
    tests += json_array_size(cases);
    failures += count_failures(cases);
  }
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
  xml_text(f, j->suite);
  fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", tests, failures);
  for (size_t r = 0; r < json_array_size(j->runs); r++) {
    const json_t *run = json_array_get(j->runs, r);
    const char *name = json_string_value(json_object_get(run, "name"));
    const json_t *cases = json_object_get(run, "cases");
    fputs("  <testsuite name=\"", f);
    xml_text(f, name);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"0\">\n",
            json_array_size(cases), count_failures(cases));
    for (size_t i = 0; i < json_array_size(cases); i++) {
      const json_t *c = json_array_get(cases, i);
      fputs("    <testcase name=\"", f);
      xml_text(f, json_string_value(json_object_get(c, "path")));
      fputs("\" classname=\"", f);
      xml_text(f, j->suite);
      fputc('.', f);
      xml_text(f, name);
      fputs("\" time=\"0\"", f);
      if (json_is_true(json_object_get(c, "passed"))) {
        fputs("/>\n", f);
        continue;
      }
      fputs(">\n      <failure message=\"expected ", f);
      xml_text(f, json_string_value(json_object_get(c, "expected")));
      fputs(", got ", f);
      xml_text(f, json_string_value(json_object_get(c, "got")));
      fputs("\" type=\"expectation\">", f);
      xml_text(f, json_string_value(json_object_get(c, "path")));
      fputs(": expected ", f);
      xml_text(f, json_string_value(json_object_get(c, "expected")));
      fputs(", got ", f);
      xml_text(f, json_string_value(json_object_get(c, "got")));
      fputs("</failure>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n", f);
  }
  fputs("</testsuites>\n", f);
}

static int junit_fill(void *ctx, FILE *f) {
  junit_body(ctx, f);
  return 0;
}

/* Written as FILE.tmp.<pid> next to FILE and renamed over it, like the files of --out: a CI
 * system never reads half a report, and a signal removes the temporary file. */
int expt_junit_write(const expt_junit *j, const char *path, retry_error *err) {
  if (j->failed) {
    expt_output_error(err, RETRY_ENOMEM, path, "out of memory collecting the results");
    return RETRY_ENOMEM;
  }
  return expt_output_write_atomic(path, junit_fill, (void *)(uintptr_t)j, err);
}

/* }================================================================== */

int expt_junit_finish(expt_junit *j, const char *path, bool write, FILE *report) {
  if (j == NULL) return 0;
  int rc = 0;
  retry_error e;
  retry_error_clear(&e);
  if (write && expt_junit_write(j, path, &e) != 0) {
    expt_error_print(report, &e);
    rc = -1;
  }
  expt_junit_destroy(j);
  return rc;
}

/* {==================================================================
 * The two kinds of expectations: a run's and a search's
 * =================================================================== */

/* "search", "search.x", "search[0]": a path into the search result. */
static bool is_search_path(const char *key) {
  return strncmp(key, "search", 6) == 0 && (key[6] == '\0' || key[6] == '.' || key[6] == '[');
}

json_t *expt_expect_part(const json_t *expect, bool search, size_t *other) {
  if (other != NULL) *other = 0;
  if (expect == NULL) return NULL;
  json_t *part = json_object();
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)expect, key, v) {
    if (part == NULL) break;
    if (is_search_path(key) != search) {
      if (other != NULL) (*other)++;
    } else if (json_object_set(part, key, v) != 0) {
      json_decref(part);
      part = NULL;
    }
  }
  return part;
}

/* }================================================================== */
