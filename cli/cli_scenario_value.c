/*
 * cli_scenario_value.c: the scenario loader's errors, JSON paths and typed values: integers,
 * durations, rates, distributions, rate profiles, statuses and names.
 *
 * Every reader here either fills its output from a valid value or records exactly one error
 * (the first) in the context, with the JSON path of the value and a message saying what was
 * wrong and what is allowed. The style is the one of the service config loader
 * (retry/retry_config.c), whose helpers are private to libretry, hence these twins.
 */
#include "cli/cli_scenario_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* {==================================================================
 * Context, errors and paths
 * =================================================================== */

/* A context starts at the document's root with no error. Its strings are borrowed: the
 * caller keeps source, base_dir and variant alive for the context's life. */
void cli__scenario_ctx_init(scn_ctx *c, const char *source, const char *base_dir,
                            const char *variant) {
  memset(c, 0, sizeof *c);
  /* The memset alone would leave line and column 0, which reads as a position; clearing
   * makes them -1 ("unknown"), the value every semantic error keeps. */
  retry_error_clear(&c->e);
  c->source = source;
  c->base_dir = base_dir;
  c->variant = variant;
  snprintf(c->path, sizeof c->path, "$"); /* the root of every path, as in JSONPath */
  c->path_len = 1;
}

/* Once an error is recorded, every later check is moot: the first error wins, and the
 * callers return straight up without looking at anything else. */
static bool failed(const scn_ctx *c) { return c->e.code != RETRY_OK; }

/* Copies src into dst[size], cutting it; always NUL-terminated. */
/* size must be > 0; every caller passes an array. */
static void copy_cut(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* The message is formatted on the stack first and then, in a variant, prefixed with the
 * variant's name: a user running twenty variants needs to know which one is wrong, and the
 * path alone cannot say it (every variant's document has the same paths). */
void cli__scenario_fail(scn_ctx *c, int code, const char *fmt, ...) {
  if (failed(c)) return;
  /* Every buffer here is on the stack: recording an error allocates nothing, so running out of
   * memory can be reported like any other mistake. full is twice a message so the prefix never
   * cuts the text before copy_cut does, at the one place that decides what fits. */
  char msg[sizeof c->e.message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->e.code = code;
  copy_cut(c->e.source, sizeof c->e.source, c->source);
  copy_cut(c->e.path, sizeof c->e.path, c->path);
  /* No position: jansson keeps none for parsed values (akheron/jansson#272), so a semantic
   * error is located by its JSON path alone. */
  c->e.line = -1;
  c->e.column = -1;
  if (c->variant != NULL) {
    char name[SCN_NAME_MAX + 8];
    cli__scenario_printable(name, sizeof name, c->variant, SCN_NAME_MAX);
    char full[2 * sizeof c->e.message];
    snprintf(full, sizeof full, "in variant \"%s\": %s", name, msg);
    copy_cut(c->e.message, sizeof c->e.message, full);
  } else {
    copy_cut(c->e.message, sizeof c->e.message, msg);
  }
}

/* An error from a service config file belongs to that file: its source, path, line and
 * column are kept as they are. The context's own source and path are swapped out for the
 * duration of the call so that cli__scenario_fail, which alone applies the variant prefix
 * and the first-error rule, can be reused; they are restored before returning. */
void cli__scenario_fail_copy(scn_ctx *c, const retry_error *e) {
  if (failed(c)) return;
  const char *source = c->source;
  char path[sizeof c->path];
  copy_cut(path, sizeof path, c->path);
  c->source = e->source;
  snprintf(c->path, sizeof c->path, "%s", e->path);
  cli__scenario_fail(c, e->code != RETRY_OK ? e->code : RETRY_ECONFIG, "%s", e->message);
  c->e.line = e->line;
  c->e.column = e->column;
  c->source = source;
  snprintf(c->path, sizeof c->path, "%s", path);
}

/* Whether key is a C-style identifier, which a path can show as .key; others get ["key"].
 * Names such as "checkout-api" thus appear as $.services["checkout-api"], which the PATH
 * syntax of --set reads back, so an error's path can be pasted into an override. */
static bool is_ident(const char *key) {
  if (!((*key >= 'a' && *key <= 'z') || (*key >= 'A' && *key <= 'Z') || *key == '_')) return false;
  for (const char *p = key; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return false;
  return true;
}

/* The path buffer (512 bytes) is larger than retry_error.path (160), so a deep path is cut
 * only when it is copied into the error; the walk itself never loses its place. Keys come
 * from the input: quotes and backslashes are escaped, control bytes shown as '?'. */
size_t cli__scenario_path_push_key(scn_ctx *c, const char *key) {
  /* room keeps a byte for the NUL. The byte loop stops at n + 1 < room so an escaped
   * character always gets both of its bytes; a push never fails, it only cuts. */
  size_t old = c->path_len, n = old, room = sizeof c->path - 1;
  if (is_ident(key)) {
    snprintf(c->path + n, sizeof c->path - n, ".%s", key);
  } else {
    for (const char *open = "[\""; *open && n < room; open++)
      c->path[n++] = *open;
    for (const char *p = key; *p && n + 1 < room; p++) {
      unsigned char ch = (unsigned char)*p;
      if (ch == '"' || ch == '\\') c->path[n++] = '\\';
      c->path[n++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    for (const char *close = "\"]"; *close && n < room; close++)
      c->path[n++] = *close;
    c->path[n] = '\0';
  }
  c->path_len = strlen(c->path);
  return old;
}

/* "[i]": array elements are numbered from 0, as the PATH syntax reads them back. */
size_t cli__scenario_path_push_index(scn_ctx *c, size_t i) {
  size_t old = c->path_len;
  snprintf(c->path + old, sizeof c->path - old, "[%zu]", i);
  c->path_len = strlen(c->path);
  return old;
}

/* Text appended as it is: a service config's own path after the policy's key, already in
 * the same notation. Cut like the other pushes when it does not fit. */
size_t cli__scenario_path_push_raw(scn_ctx *c, const char *text) {
  size_t old = c->path_len;
  snprintf(c->path + old, sizeof c->path - old, "%s", text);
  c->path_len = strlen(c->path);
  return old;
}

/* Marks are path lengths, so pops nest like the pushes that returned them. */
void cli__scenario_path_pop(scn_ctx *c, size_t mark) {
  c->path_len = mark;
  c->path[mark] = '\0';
}

/* Text from the input ends up in terminals: control bytes become '?', and a cut never splits
 * a UTF-8 sequence. */
void cli__scenario_printable(char *buf, size_t size, const char *s, size_t max) {
  size_t len = strlen(s), n = len > max ? max : len;
  /* Step back over UTF-8 continuation bytes (10xxxxxx) so the cut lands on the start of a
   * character; then leave room in buf for "..." and the NUL. */
  while (n > 0 && n < len && ((unsigned char)s[n] & 0xC0) == 0x80)
    n--;
  if (n + 4 > size) n = size > 4 ? size - 4 : 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    buf[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
  }
  if (n < len)
    memcpy(buf + n, "...", 4);
  else
    buf[n] = '\0';
}

/* The fewest digits that read back as the same double; an integral real keeps ".0" so that
 * "got 2.0" tells a JSON real from the integer 2. */
static void format_double(char *buf, size_t size, double v) {
  /* 17 significant digits always read back exactly; trying fewer first gives "0.1" rather
   * than "0.10000000000000001". Only the "%g" form with no '.', 'e' or "inf" gets ".0". */
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  size_t len = strlen(buf);
  if (strspn(buf, "-0123456789") == len && len + 3 <= size) memcpy(buf + len, ".0", 3);
}

/* "got ..." shows a scalar as the user wrote it and a container only by its kind: a message
 * has 160 bytes, and echoing a whole object would push out the part that says what is
 * allowed. Empty containers are shown as [] and {} because "got an object" for {} would
 * hide that the object was empty, which is usually the mistake. */
void cli__scenario_describe(const json_t *v, char *buf, size_t size) {
  char tmp[48];
  switch (json_typeof(v)) {
    case JSON_OBJECT: snprintf(buf, size, json_object_size(v) == 0 ? "{}" : "an object"); return;
    case JSON_ARRAY: snprintf(buf, size, json_array_size(v) == 0 ? "[]" : "an array"); return;
    case JSON_STRING:
      cli__scenario_printable(tmp, sizeof tmp, json_string_value(v), 40);
      snprintf(buf, size, "\"%s\"", tmp);
      return;
    /* JSON_INTEGER_FORMAT is jansson's own, matching json_int_t on every platform. */
    case JSON_INTEGER: snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return;
    case JSON_REAL: format_double(buf, size, json_real_value(v)); return;
    case JSON_TRUE: snprintf(buf, size, "true"); return;
    case JSON_FALSE: snprintf(buf, size, "false"); return;
    case JSON_NULL: snprintf(buf, size, "null"); return;
  }
  /* The switch covers every json_type; this line is for compilers that cannot see that. */
  snprintf(buf, size, "a value"); /* not reached */
}

/* The common shape of a message: the value's label, what it must be, and what it was. */
void cli__scenario_fail_value(scn_ctx *c, const char *label, const char *what, const json_t *v) {
  /* 64 bytes are enough: describe cuts strings at 40 and shows containers by kind only. */
  char got[64];
  cli__scenario_describe(v, got, sizeof got);
  cli__scenario_fail(c, RETRY_ECONFIG, "%s must be %s, got %s", label, what, got);
}

/* The list of allowed keys is the useful half of the message, so when the whole does not fit
 * in retry_error.message the list is cut at a key boundary and ends with ", ...". */
void cli__scenario_fail_unknown_key(scn_ctx *c, const char *key, const char *const *allowed,
                                    size_t n, const char *where) {
  char shown[48], msg[sizeof c->e.message];
  cli__scenario_printable(shown, sizeof shown, key, 32);
  size_t len;
  if (where != NULL)
    len = (size_t)snprintf(msg, sizeof msg, "key \"%s\" is not allowed in %s; allowed: ", shown,
                           where);
  else
    len = (size_t)snprintf(msg, sizeof msg, "unknown key \"%s\"; allowed: ", shown);
  /* snprintf returns the length it wanted; clamp it so the appends below stay in bounds. */
  if (len >= sizeof msg) len = sizeof msg - 1;
  for (size_t i = 0; i < n; i++) {
    size_t need = strlen(allowed[i]) + (i ? 2 : 0);
    bool last = i + 1 == n;
    /* Keep room for ", ..." unless this is the last key. */
    if (len + need + (last ? 0 : 5) >= sizeof msg) {
      snprintf(msg + len, sizeof msg - len, "%s...", i ? ", " : "");
      break;
    }
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", i ? ", " : "", allowed[i]);
  }
  cli__scenario_fail(c, RETRY_ECONFIG, "%s", msg);
}

/* Linear: the lists are a handful of keys. */
bool cli__scenario_key_in(const char *key, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(key, list[i]) == 0) return true;
  return false;
}

/* Jansson keeps an object's keys in insertion order, so the key reported is the first one a
 * reader of the file sees. */
bool cli__scenario_check_keys(scn_ctx *c, json_t *obj, const char *const *allowed, size_t n,
                              const char *where) {
  /* Only the first unknown key is reported; the first error wins here as everywhere. */
  for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it)) {
    const char *key = json_object_iter_key(it);
    if (cli__scenario_key_in(key, allowed, n)) continue;
    size_t mark = cli__scenario_path_push_key(c, key);
    cli__scenario_fail_unknown_key(c, key, allowed, n, where);
    cli__scenario_path_pop(c, mark);
    return false;
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Plain fields
 * =================================================================== */

/* null reads as absent, as in the service config (proto3 JSON): one rule for the whole file,
 * and a --set or a variant can always write null to get the default back. */
json_t *cli__scenario_field(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  return json_is_null(v) ? NULL : v;
}

/* Used as require(c, get_x(...), key, what): a getter's own error passes through untouched,
 * and only "absent" becomes `"key" is required: what`, at the path of the missing key. */
int cli__scenario_require(scn_ctx *c, int rc, const char *key, const char *what) {
  if (rc != 0) return rc;
  size_t mark = cli__scenario_path_push_key(c, key);
  cli__scenario_fail(c, RETRY_ECONFIG, "\"%s\" is required: %s", key, what);
  cli__scenario_path_pop(c, mark);
  return -1;
}

/* Messages name a key in quotes, as the file writes it: "workers" must be ... The label is
 * built before the key is pushed; it depends on the key only, not on the path. */
static void quoted(char *buf, size_t size, const char *key) {
  char shown[48];
  cli__scenario_printable(shown, sizeof shown, key, 40);
  snprintf(buf, size, "\"%s\"", shown);
}

/* Reports that obj[key] (the value v) is not what was expected, at the key's path: "\"key\"
 * must be what, got ...". Returns -1, the getters' "failed". */
static int fail_at_key(scn_ctx *c, const char *key, const char *what, json_t *v) {
  char label[64];
  quoted(label, sizeof label, key);
  size_t mark = cli__scenario_path_push_key(c, key);
  cli__scenario_fail_value(c, label, what, v);
  cli__scenario_path_pop(c, mark);
  return -1;
}

/* true or false only: "yes", 1 and "true" are refused, since each has a plausible other
 * meaning in some configuration language. */
/* The getters below share one pattern: absent (or null) returns 0 with *out untouched, a bad
 * value pushes its key only for the message and returns -1, and a good one sets *out and
 * returns 1. The pop after a failure keeps callers' marks consistent even though the walk is
 * about to unwind. */
int cli__scenario_get_bool(scn_ctx *c, json_t *obj, const char *key, bool *out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  if (!json_is_boolean(v)) {
    return fail_at_key(c, key, "true or false", v);
  }
  *out = json_is_true(v);
  return 1;
}

/* A real such as 2.0 is refused: counts and sizes are integers, and accepting 2.5 workers
 * silently truncated would hide a mistake. */
int cli__scenario_get_int(scn_ctx *c, json_t *obj, const char *key, int64_t lo, int64_t hi,
                          const char *what, int64_t *out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
    return fail_at_key(c, key, what, v);
  }
  /* json_int_t is long long here, so the cast is exact; the range was checked above. */
  *out = (int64_t)json_integer_value(v);
  return 1;
}

/* For int32_t fields; lo and hi are int32_t, so a value that passed fits the cast. */
int cli__scenario_get_int32(scn_ctx *c, json_t *obj, const char *key, int32_t lo, int32_t hi,
                            const char *what, int32_t *out) {
  int64_t v = 0;
  int rc = cli__scenario_get_int(c, obj, key, lo, hi, what, &v);
  if (rc == 1) *out = (int32_t)v;
  return rc;
}

/* A JSON integer or real in the interval lo..hi. Jansson never yields NaN or infinities (an
 * overflowing real is a syntax error), and the negated comparisons would refuse a NaN anyway.
 * Callers pass HUGE_VAL for "no upper bound". */
int cli__scenario_get_number(scn_ctx *c, json_t *obj, const char *key, double lo, bool lo_open,
                             double hi, bool hi_open, const char *what, double *out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  double d = json_is_number(v) ? json_number_value(v) : 0;
  if (!json_is_number(v) || (lo_open ? !(d > lo) : !(d >= lo)) ||
      (hi_open ? !(d < hi) : !(d <= hi))) {
    return fail_at_key(c, key, what, v);
  }
  *out = d;
  return 1;
}

/* Any string, empty included; callers that need more (names, methods) check it after. */
int cli__scenario_get_string(scn_ctx *c, json_t *obj, const char *key, const char **out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  if (!json_is_string(v)) {
    return fail_at_key(c, key, "a string", v);
  }
  *out = json_string_value(v);
  return 1;
}

/* One of a fixed set of names, compared exactly (case matters, as everywhere in the file).
 * The message lists every name, so a typo is fixed without opening the documentation. */
int cli__scenario_get_enum(scn_ctx *c, json_t *obj, const char *key, const char *const *names,
                           size_t n, int *out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  if (json_is_string(v)) {
    for (size_t i = 0; i < n; i++) {
      if (strcmp(json_string_value(v), names[i]) == 0) {
        *out = (int)i;
        return 1;
      }
    }
  }
  /* "a" or "b"; "a", "b" or "c" */
  /* As large as a whole message; the name lists here are short enough never to be cut, and
   * len < sizeof what stops the loop if one ever is. */
  char what[160];
  size_t len = 0;
  for (size_t i = 0; i < n && len < sizeof what; i++)
    len += (size_t)snprintf(what + len, sizeof what - len, "%s\"%s\"",
                            i == 0 ? "" : (i + 1 == n ? " or " : ", "), names[i]);
  return fail_at_key(c, key, what, v);
}

/* Names end up in file names, CSV headers and command lines (--set services.NAME.workers),
 * hence the small alphabet: nothing a shell, a CSV reader or a path would need quoted, except
 * '.', which the PATH syntax handles with ["a.b"]. */
bool cli__scenario_name_is_valid(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > SCN_NAME_MAX) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '.' || *p == '-'))
      return false;
  return true;
}

/* The shape gRPC gives a full method name on the wire (":path" = "/service/method"), which is
 * what retry_config_lookup splits and the idempotent allowlist compares. */
bool cli__scenario_method_is_valid(const char *s) {
  if (s[0] != '/') return false;
  const char *slash = strchr(s + 1, '/');
  /* A non-empty service, one '/', a non-empty method and no further '/'. */
  return slash != NULL && slash > s + 1 && slash[1] != '\0' && strchr(slash + 1, '/') == NULL;
}

/* A string that must be a full method name. The message quotes the value from the document,
 * not s, so describe shows it as written, quotes included. */
int cli__scenario_get_method(scn_ctx *c, json_t *obj, const char *key, const char **out) {
  const char *s = NULL;
  int rc = cli__scenario_get_string(c, obj, key, &s);
  if (rc != 1) return rc;
  if (!cli__scenario_method_is_valid(s)) {
    return fail_at_key(c, key, "a full method name \"/package.Service/Method\"",
                       json_object_get(obj, key));
  }
  *out = s;
  return 1;
}

/* For "key ... is not allowed in an \"open\" arrival": the article follows the kind. */
void cli__scenario_kind_where(char *buf, size_t size, const char *kind, const char *what) {
  /* kind[0] != '\0' matters: strchr finds the terminator, so "" would count as a vowel. */
  bool vowel = strchr("aeiou", kind[0]) != NULL && kind[0] != '\0';
  snprintf(buf, size, "%s \"%s\" %s", vowel ? "an" : "a", kind, what);
}

/* The names the "space" key takes; retry_space has only the two values. */
const char *cli__scenario_space_name(retry_space sp) {
  return sp == RETRY_SPACE_HTTP ? "http" : "grpc";
}

/* }================================================================== */

/* {==================================================================
 * Durations and rates
 * =================================================================== */

/* A number where a duration belongs is the commonest slip ("timeout": 5), and guessing its
 * unit is how an outage scenario ends up a thousand times too fast; the message offers both
 * readings instead. */
bool cli__scenario_duration_value(scn_ctx *c, json_t *v, const char *label, int64_t lo,
                                  bool lo_open, const char *what, int64_t *out) {
  /* Described once, first: the same "got" text serves every message below. */
  char got[64];
  cli__scenario_describe(v, got, sizeof got);
  if (json_is_number(v)) {
    cli__scenario_fail(c, RETRY_ECONFIG,
                       "%s needs a unit, such as \"%ss\" or \"%sms\" (ns, us, ms, s, m, h), got %s",
                       label, got, got, got);
    return false;
  }
  int64_t ns = 0;
  int rc = json_is_string(v) ? cli_duration_parse(json_string_value(v), &ns) : RETRY_EINVAL;
  /* ERANGE: more than INT64_MAX ns, which is about 292 years. lo_open separates the "> 0"
   * limits (a deadline, a mean) from the ">= 0" ones (a delay, a start time). */
  if (rc == RETRY_ERANGE) {
    cli__scenario_fail(c, RETRY_ECONFIG, "%s is out of range: at most about 292 years, got %s",
                       label, got);
    return false;
  }
  if (rc != RETRY_OK || (lo_open ? ns <= lo : ns < lo)) {
    cli__scenario_fail_value(c, label, what, v);
    return false;
  }
  *out = ns;
  return true;
}

/* obj[key] as a duration, with the path at the key while it is read. */
int cli__scenario_get_duration(scn_ctx *c, json_t *obj, const char *key, int64_t lo, bool lo_open,
                               const char *what, int64_t *out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  char label[64];
  quoted(label, sizeof label, key);
  size_t mark = cli__scenario_path_push_key(c, key);
  bool ok = cli__scenario_duration_value(c, v, label, lo, lo_open, what, out);
  cli__scenario_path_pop(c, mark);
  return ok ? 1 : -1;
}

/* The units cli_rate_parse accepts, for messages. */
#define RATE_WHAT "a rate such as \"800/s\" (/s, /ms, /min, /h)"

/* Rates have the same rule as durations: a unit is required, because "800" per second and
 * per minute differ by 60x, and a bare number is refused with a message showing the fix. The
 * upper bound keeps the arrival process's per-event arithmetic far from overflow. */
bool cli__scenario_rate_value(scn_ctx *c, json_t *v, const char *label, double *out) {
  char got[64];
  cli__scenario_describe(v, got, sizeof got);
  if (json_is_number(v)) {
    cli__scenario_fail(c, RETRY_ECONFIG,
                       "%s needs a unit, such as \"%s/s\" (/s, /ms, /min, /h), got %s", label, got,
                       got);
    return false;
  }
  double r = 0;
  int rc = json_is_string(v) ? cli_rate_parse(json_string_value(v), &r) : RETRY_EINVAL;
  if (rc == RETRY_EINVAL) {
    cli__scenario_fail_value(c, label, RATE_WHAT, v);
    return false;
  }
  /* The parser's own ERANGE and a rate above the limit get the same message: either way the
   * fix is a smaller rate. */
  if (rc != RETRY_OK || r > SCN_MAX_RATE) {
    cli__scenario_fail(c, RETRY_ECONFIG, "%s must be at most 1000000000/s, got %s", label, got);
    return false;
  }
  *out = r;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Distributions
 * =================================================================== */

/* Indexed like sim_dist_kind, so the index read from "dist" is the kind stored. dist_allowed
 * below follows the same order; weibull and pareto share their keys (shape and scale). */
static const char *const dist_names[] = {"constant", "exponential", "lognormal", "gamma",
                                         "weibull",  "pareto",      "uniform"};

/* The keys each kind allows, "dist" first. */
static const char *const keys_constant[] = {"dist", "value"};
static const char *const keys_exponential[] = {"dist", "mean"};
static const char *const keys_lognormal[] = {"dist", "median", "mean", "sigma"};
static const char *const keys_gamma[] = {"dist", "shape", "mean", "scale"};
static const char *const keys_shape_scale[] = {"dist", "shape", "scale"};
static const char *const keys_uniform[] = {"dist", "min", "max"};

/* The keys one kind allows; also used for the rate profiles' kinds. */
typedef struct dist_keys {
  const char *const *keys; /* the allowed key names, "dist" or "kind" first */
  size_t n;                /* entries in keys */
} dist_keys;

static const dist_keys dist_allowed[] = {
    {keys_constant, SCN_N_OF(keys_constant)},       {keys_exponential, SCN_N_OF(keys_exponential)},
    {keys_lognormal, SCN_N_OF(keys_lognormal)},     {keys_gamma, SCN_N_OF(keys_gamma)},
    {keys_shape_scale, SCN_N_OF(keys_shape_scale)}, {keys_shape_scale, SCN_N_OF(keys_shape_scale)},
    {keys_uniform, SCN_N_OF(keys_uniform)},
};

/* A required duration parameter of a distribution. positive refuses 0: a mean or a scale of
 * 0 describes no distribution, whereas a constant or a uniform bound may well be 0. */
static bool dist_dur(scn_ctx *c, json_t *obj, const char *key, bool positive, int64_t *out) {
  const char *what = positive ? SCN_DUR_POS : SCN_DUR_NONNEG;
  return cli__scenario_require(c, cli__scenario_get_duration(c, obj, key, 0, positive, what, out),
                               key, what) == 1;
}

/* A required shape-like parameter: a number > 0. */
static bool dist_pos(scn_ctx *c, json_t *obj, const char *key, double *out) {
  return cli__scenario_require(
             c,
             cli__scenario_get_number(c, obj, key, 0, true, HUGE_VAL, false, "a number > 0", out),
             key, "a number > 0") == 1;
}

/* Exactly one of two keys ("median" or "mean", "mean" or "scale"). Returns the one given, or
 * NULL after an error. */
static const char *one_of(scn_ctx *c, json_t *obj, const char *a, const char *b) {
  bool has_a = cli__scenario_field(obj, a) != NULL, has_b = cli__scenario_field(obj, b) != NULL;
  /* Both given: reported at the second key, the one to delete. */
  if (has_a && has_b) {
    size_t mark = cli__scenario_path_push_key(c, b);
    cli__scenario_fail(c, RETRY_ECONFIG, "give \"%s\" or \"%s\", not both", a, b);
    cli__scenario_path_pop(c, mark);
    return NULL;
  }
  if (!has_a && !has_b) {
    size_t mark = cli__scenario_path_push_key(c, a);
    cli__scenario_fail(c, RETRY_ECONFIG, "\"%s\" is required: %s (or give \"%s\")", a, SCN_DUR_POS,
                       b);
    cli__scenario_path_pop(c, mark);
    return NULL;
  }
  return has_a ? a : b;
}

/* The parameters go into sim_dist as model_config.h documents them, in ns as doubles; the
 * user-facing forms that GSL does not take directly are converted here: a lognormal given by
 * its mean (mu = ln(mean) - sigma^2 / 2) and a gamma given by its mean (scale = mean / k). */
static bool parse_dist_object(scn_ctx *c, json_t *v, int kind, sim_dist *out) {
  int64_t a = 0, b = 0;
  double k = 0;
  /* Built in a local and copied out only when complete, so *out keeps the caller's default
   * after any error. Durations arrive as int64 ns and are stored as doubles, sim_dist's
   * unit for every time parameter. */
  sim_dist d = {(sim_dist_kind)kind, 0, 0};
  const char *which;
  switch ((sim_dist_kind)kind) {
    case SIM_DIST_CONSTANT:
      if (!dist_dur(c, v, "value", false, &a)) return false;
      d.p1 = (double)a;
      break;
    case SIM_DIST_EXPONENTIAL:
      if (!dist_dur(c, v, "mean", true, &a)) return false;
      d.p1 = (double)a;
      break;
    case SIM_DIST_LOGNORMAL:
      if ((which = one_of(c, v, "median", "mean")) == NULL || !dist_dur(c, v, which, true, &a) ||
          !dist_pos(c, v, "sigma", &k))
        return false;
      /* p1 is mu, the mean of the log: a lognormal's median is e^mu, and its mean is
       * e^(mu + sigma^2 / 2), hence the correction only when the mean was given. */
      d.p1 = log((double)a) - (strcmp(which, "mean") == 0 ? k * k / 2 : 0);
      d.p2 = k;
      break;
    case SIM_DIST_GAMMA:
      if (!dist_pos(c, v, "shape", &k) || (which = one_of(c, v, "mean", "scale")) == NULL ||
          !dist_dur(c, v, which, true, &a))
        return false;
      d.p1 = k;
      /* The mean of a gamma is shape x scale. */
      d.p2 = strcmp(which, "mean") == 0 ? (double)a / k : (double)a;
      break;
    case SIM_DIST_WEIBULL:
    case SIM_DIST_PARETO:
      if (!dist_pos(c, v, "shape", &k) || !dist_dur(c, v, "scale", true, &a)) return false;
      d.p1 = k;
      d.p2 = (double)a;
      break;
    case SIM_DIST_UNIFORM:
      if (!dist_dur(c, v, "min", false, &a) || !dist_dur(c, v, "max", false, &b)) return false;
      /* min == max is allowed: a constant written as a range. */
      if (b < a) {
        size_t mark = cli__scenario_path_push_key(c, "max");
        char got[64];
        cli__scenario_describe(json_object_get(v, "max"), got, sizeof got);
        cli__scenario_fail(c, RETRY_ECONFIG, "\"max\" must be >= \"min\", got %s", got);
        cli__scenario_path_pop(c, mark);
        return false;
      }
      d.p1 = (double)a;
      d.p2 = (double)b;
      break;
  }
  *out = d;
  return true;
}

/* A distribution: a duration string is the constant shorthand (by far the commonest case),
 * an object names the kind in "dist" and may hold only that kind's keys; anything else,
 * including a bare number, is refused with a message asking for a unit or an object. */
bool cli__scenario_dist_value(scn_ctx *c, json_t *v, const char *label, sim_dist *out) {
  /* A number goes through duration_value too, only to get its "needs a unit" message. */
  if (json_is_string(v) || json_is_number(v)) {
    int64_t ns = 0;
    if (!cli__scenario_duration_value(c, v, label, 0, false, SCN_DUR_NONNEG, &ns)) return false;
    out->kind = SIM_DIST_CONSTANT;
    out->p1 = (double)ns;
    out->p2 = 0;
    return true;
  }
  if (!json_is_object(v)) {
    cli__scenario_fail_value(c, label, "a duration such as \"10ms\" or an object {\"dist\": ...}",
                             v);
    return false;
  }
  int kind = 0;
  int rc = cli__scenario_get_enum(c, v, "dist", dist_names, SCN_N_OF(dist_names), &kind);
  if (cli__scenario_require(c, rc, "dist",
                            "\"constant\", \"exponential\", \"lognormal\", \"gamma\", "
                            "\"weibull\", \"pareto\" or \"uniform\"") != 1)
    return false;
  char where[48];
  cli__scenario_kind_where(where, sizeof where, dist_names[kind], "distribution");
  if (!cli__scenario_check_keys(c, v, dist_allowed[kind].keys, dist_allowed[kind].n, where))
    return false;
  return parse_dist_object(c, v, kind, out);
}

/* obj[key] as a distribution; absent leaves *out (the caller's default) alone. */
int cli__scenario_get_dist(scn_ctx *c, json_t *obj, const char *key, sim_dist *out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  char label[64];
  quoted(label, sizeof label, key);
  size_t mark = cli__scenario_path_push_key(c, key);
  bool ok = cli__scenario_dist_value(c, v, label, out);
  cli__scenario_path_pop(c, mark);
  return ok ? 1 : -1;
}

/* }================================================================== */

/* {==================================================================
 * Rate profiles
 * =================================================================== */

static const char *const profile_kinds[] = {"constant", "step", "ramp", "spike", "points"};
/* Mirrors profile_kinds. There is no model enum to follow: every shape is stored as points. */
enum { PROF_CONSTANT, PROF_STEP, PROF_RAMP, PROF_SPIKE, PROF_POINTS };

static const char *const keys_p_constant[] = {"kind", "rate"};
static const char *const keys_p_step[] = {"kind", "from", "to", "at"};
static const char *const keys_p_ramp[] = {"kind", "from", "to", "start", "end"};
static const char *const keys_p_spike[] = {"kind", "base", "peak", "start", "end"};
static const char *const keys_p_points[] = {"kind", "points"};

static const dist_keys profile_allowed[] = {
    {keys_p_constant, SCN_N_OF(keys_p_constant)}, {keys_p_step, SCN_N_OF(keys_p_step)},
    {keys_p_ramp, SCN_N_OF(keys_p_ramp)},         {keys_p_spike, SCN_N_OF(keys_p_spike)},
    {keys_p_points, SCN_N_OF(keys_p_points)},
};

/* A required rate field. */
static bool prof_rate(scn_ctx *c, json_t *obj, const char *key, double *out) {
  /* Presence is checked with the field itself: the rate getter has no "absent" result. */
  json_t *v = cli__scenario_field(obj, key);
  if (cli__scenario_require(c, v != NULL, key, RATE_WHAT) != 1) return false;
  char label[64];
  quoted(label, sizeof label, key);
  size_t mark = cli__scenario_path_push_key(c, key);
  bool ok = cli__scenario_rate_value(c, v, label, out);
  cli__scenario_path_pop(c, mark);
  return ok;
}

/* A required time of a shape, >= 0: a step or a ramp may well start at 0. */
static bool prof_time(scn_ctx *c, json_t *obj, const char *key, int64_t *out) {
  return cli__scenario_require(
             c, cli__scenario_get_duration(c, obj, key, 0, false, SCN_DUR_NONNEG, out), key,
             SCN_DUR_NONNEG) == 1;
}

/* Callers never exceed SIM_PROFILE_MAX_POINTS: the shapes add at most 4 points and
 * "points" is checked for at most 32 before any is added. */
static void add_point(sim_rate_profile *p, int64_t t_ns, double rate) {
  p->t_ns[p->n_points] = t_ns;
  p->rate[p->n_points] = rate;
  p->n_points++;
}

/* "points": [[time, rate], ...], 1 to SIM_PROFILE_MAX_POINTS of them, times non-decreasing
 * (two equal times make a step). */
static bool parse_points(scn_ctx *c, json_t *obj, sim_rate_profile *p) {
  json_t *pts = cli__scenario_field(obj, "points");
  const char *what = "an array of 1 to 32 [time, rate] pairs such as [\"10s\", \"300/s\"]";
  if (cli__scenario_require(c, pts != NULL, "points", what) != 1) return false;
  size_t mark = cli__scenario_path_push_key(c, "points");
  if (!json_is_array(pts) || json_array_size(pts) == 0 ||
      json_array_size(pts) > SIM_PROFILE_MAX_POINTS) {
    cli__scenario_fail_value(c, "\"points\"", what, pts);
    return false;
  }
  for (size_t i = 0; i < json_array_size(pts); i++) {
    json_t *pair = json_array_get(pts, i);
    size_t mi = cli__scenario_path_push_index(c, i);
    if (!json_is_array(pair) || json_array_size(pair) != 2) {
      cli__scenario_fail_value(c, "each point", "a [time, rate] pair such as [\"10s\", \"300/s\"]",
                               pair);
      return false;
    }
    int64_t t = 0;
    double r = 0;
    size_t m0 = cli__scenario_path_push_index(c, 0);
    if (!cli__scenario_duration_value(c, json_array_get(pair, 0), "a point's time", 0, false,
                                      SCN_DUR_NONNEG, &t))
      return false;
    /* The time is judged against the previous point before the rate is read, so errors come
     * in the order of the pair. Paths: [i][0] for the time, [i][1] for the rate; the pop to
     * mi after the rate removes both levels. */
    if (p->n_points > 0 && t < p->t_ns[p->n_points - 1]) {
      char got[64], prev[64];
      cli__scenario_describe(json_array_get(pair, 0), got, sizeof got);
      cli__scenario_describe(json_array_get(json_array_get(pts, i - 1), 0), prev, sizeof prev);
      cli__scenario_fail(c, RETRY_ECONFIG, "point times must not decrease: %s comes after %s", got,
                         prev);
      return false;
    }
    cli__scenario_path_pop(c, m0);
    cli__scenario_path_push_index(c, 1);
    if (!cli__scenario_rate_value(c, json_array_get(pair, 1), "a point's rate", &r)) return false;
    cli__scenario_path_pop(c, mi);
    add_point(p, t, r);
  }
  cli__scenario_path_pop(c, mark);
  return true;
}

/* A start/end pair of a ramp or spike: end after start. */
static bool start_end(scn_ctx *c, json_t *obj, int64_t *start, int64_t *end) {
  if (!prof_time(c, obj, "start", start) || !prof_time(c, obj, "end", end)) return false;
  if (*end <= *start) {
    size_t mark = cli__scenario_path_push_key(c, "end");
    char got[64];
    cli__scenario_describe(json_object_get(obj, "end"), got, sizeof got);
    cli__scenario_fail(c, RETRY_ECONFIG, "\"end\" must be after \"start\", got %s", got);
    cli__scenario_path_pop(c, mark);
    return false;
  }
  return true;
}

/* Every shape becomes points, which is all sim_rate_profile knows: the world interpolates
 * between them and holds the first and last rate outside. A step is two points at one time,
 * so it is exact whatever the interpolation does between them. */
static bool parse_profile_object(scn_ctx *c, json_t *v, int kind, sim_rate_profile *p) {
  double a = 0, b = 0;
  int64_t t0 = 0, t1 = 0;
  switch (kind) {
    case PROF_CONSTANT:
      if (!prof_rate(c, v, "rate", &a)) return false;
      add_point(p, 0, a);
      return true;
    case PROF_STEP:
      if (!prof_rate(c, v, "from", &a) || !prof_rate(c, v, "to", &b) || !prof_time(c, v, "at", &t0))
        return false;
      add_point(p, t0, a);
      add_point(p, t0, b);
      return true;
    case PROF_RAMP:
      if (!prof_rate(c, v, "from", &a) || !prof_rate(c, v, "to", &b) || !start_end(c, v, &t0, &t1))
        return false;
      add_point(p, t0, a);
      add_point(p, t1, b);
      return true;
    case PROF_SPIKE:
      /* Base before and after, peak inside: a step up at start and a step down at end. */
      if (!prof_rate(c, v, "base", &a) || !prof_rate(c, v, "peak", &b) ||
          !start_end(c, v, &t0, &t1))
        return false;
      add_point(p, t0, a);
      add_point(p, t0, b);
      add_point(p, t1, b);
      add_point(p, t1, a);
      return true;
    /* PROF_POINTS: kind came from get_enum, so no other value reaches here. */
    default: return parse_points(c, v, p);
  }
}

/* A profile that is 0 everywhere is refused: it describes a population that never calls,
 * which is never the intent and would make every rate-based statistic divide by zero. */
bool cli__scenario_profile_value(scn_ctx *c, json_t *v, const char *label, sim_rate_profile *out) {
  /* Built in a local, like a distribution: *out is written only once the profile is valid. */
  sim_rate_profile p;
  memset(&p, 0, sizeof p);
  if (json_is_string(v) || json_is_number(v)) {
    double r = 0;
    if (!cli__scenario_rate_value(c, v, label, &r)) return false;
    add_point(&p, 0, r);
  } else if (!json_is_object(v)) {
    cli__scenario_fail_value(c, label, "a rate such as \"800/s\" or an object {\"kind\": ...}", v);
    return false;
  } else {
    int kind = 0;
    int rc = cli__scenario_get_enum(c, v, "kind", profile_kinds, SCN_N_OF(profile_kinds), &kind);
    if (cli__scenario_require(c, rc, "kind",
                              "\"constant\", \"step\", \"ramp\", \"spike\" or \"points\"") != 1)
      return false;
    char where[48];
    cli__scenario_kind_where(where, sizeof where, profile_kinds[kind], "rate");
    if (!cli__scenario_check_keys(c, v, profile_allowed[kind].keys, profile_allowed[kind].n,
                                  where) ||
        !parse_profile_object(c, v, kind, &p))
      return false;
  }
  double max = 0;
  for (int i = 0; i < p.n_points; i++)
    if (p.rate[i] > max) max = p.rate[i];
  /* Written as !(max > 0) rather than max <= 0 so that a NaN would be refused too, although
   * the rate parser never yields one. */
  if (!(max > 0)) {
    cli__scenario_fail(c, RETRY_ECONFIG, "%s is 0 everywhere: some rate must be > 0", label);
    return false;
  }
  *out = p;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Statuses
 * =================================================================== */

/* A status in the space of the service that sends it. gRPC takes the upper-case code names
 * the service config uses (retry_grpc_code_parse) or the numbers; HTTP takes numbers only, as
 * a status line has them. */
bool cli__scenario_status_value(scn_ctx *c, json_t *v, const char *label, retry_space space,
                                bool allow_ok, int32_t *out) {
  /* code stays -1 when nothing matched; each space then gets one message listing what it
   * accepts, so a gRPC name given to an HTTP service reads "an HTTP status, ...". */
  int code = -1;
  if (space == RETRY_SPACE_GRPC) {
    if (json_is_string(v)) {
      if (retry_grpc_code_parse(json_string_value(v), &code) != RETRY_OK) code = -1;
    } else if (json_is_integer(v) && json_integer_value(v) >= 0 &&
               json_integer_value(v) < RETRY_GRPC_N_CODES) {
      /* Numbers as grpc-status carries them on the wire; names as the service config
       * writes them. Both read the same in the summary, which prints names. */
      code = (int)json_integer_value(v);
    }
    if (code < 0) {
      cli__scenario_fail_value(c, label,
                               "a gRPC status: a code name such as \"UNAVAILABLE\" or 0..16", v);
      return false;
    }
  } else {
    /* An integer only: "503" as a string is refused here, although a map key has to be one
     * (JSON keys are strings); a value has no such constraint, so it takes the plain form. */
    if (json_is_integer(v) && json_integer_value(v) >= 100 && json_integer_value(v) <= 599)
      code = (int)json_integer_value(v);
    if (code < 0) {
      cli__scenario_fail_value(c, label, "an HTTP status, an integer 100..599", v);
      return false;
    }
  }
  /* A fault's status or a full queue's reply must be a failure: one that answered OK would
   * inject nothing. Map values pass allow_ok, since a gateway may turn a failure into OK. */
  if (!allow_ok && retry_status_is_ok(space, code)) {
    char got[64];
    cli__scenario_describe(v, got, sizeof got);
    cli__scenario_fail(c, RETRY_ECONFIG, "%s must be a failure status, not a success, got %s",
                       label, got);
    return false;
  }
  *out = code;
  return true;
}

/* obj[key] as a status of the given space. */
int cli__scenario_get_status(scn_ctx *c, json_t *obj, const char *key, retry_space space,
                             bool allow_ok, int32_t *out) {
  json_t *v = cli__scenario_field(obj, key);
  if (v == NULL) return 0;
  char label[64];
  quoted(label, sizeof label, key);
  size_t mark = cli__scenario_path_push_key(c, key);
  bool ok = cli__scenario_status_value(c, v, label, space, allow_ok, out);
  cli__scenario_path_pop(c, mark);
  return ok ? 1 : -1;
}

/* }================================================================== */
