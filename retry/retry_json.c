/*
 * retry_json.c: the load context, JSON paths, messages and typed getters of retry_json.h.
 *
 * Every function here either reads a valid value or records exactly one error (the first) in
 * the context, located by its JSON path; none allocates, so running out of memory is reported
 * like any other mistake. The contracts are in retry_json.h.
 */
#include "retry_json.h"
#include "retry_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {==================================================================
 * Context and errors
 * =================================================================== */

/* Jansson keeps no positions for the values it has parsed (akheron/jansson#272), so a semantic
 * error is located by its JSON path instead, built up in c->path while the tree is walked;
 * line and column are -1 for every error but a syntax error, which the loaders report
 * themselves from jansson's json_error_t. */

void retry_json_ctx_init(retry_json_ctx *c, const char *source) {
  memset(c, 0, sizeof *c);
  /* The memset alone would leave line and column 0, which reads as a position. */
  retry_error_clear(&c->e);
  c->source = source;
  snprintf(c->path, sizeof c->path, "$"); /* the root of every path, as in JSONPath */
  c->path_len = 1;
}

bool retry_json_failed(const retry_json_ctx *c) { return c->e.code != RETRY_OK; }

/* Formats the message and records it with the prefix. full is twice a message, so that the
 * prefix never cuts the text before retry_error_set does, at the one place that decides what
 * fits. Every buffer is on the stack: the error path allocates nothing. */
static void fail_at(retry_json_ctx *c, int code, const char *source, const char *path, int line,
                    int column, const char *fmt, va_list ap) RETRY_PRINTF(7, 0);
static void fail_at(retry_json_ctx *c, int code, const char *source, const char *path, int line,
                    int column, const char *fmt, va_list ap) {
  if (retry_json_failed(c)) return;
  char msg[sizeof c->e.message], full[2 * sizeof c->e.message];
  vsnprintf(msg, sizeof msg, fmt, ap);
  snprintf(full, sizeof full, "%s%s", c->prefix != NULL ? c->prefix : "", msg);
  retry_error_set(&c->e, code, source, path, line, column, "%s", full);
}

void retry_json_fail(retry_json_ctx *c, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fail_at(c, code, c->source, c->path, -1, -1, fmt, ap);
  va_end(ap);
}

/* A wrapper only to get a va_list for fail_at. */
static void fail_error(retry_json_ctx *c, const retry_error *e, const char *fmt, ...)
    RETRY_PRINTF(3, 4);
static void fail_error(retry_json_ctx *c, const retry_error *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fail_at(c, e->code != RETRY_OK ? e->code : RETRY_ECONFIG, e->source, e->path, e->line, e->column,
          fmt, ap);
  va_end(ap);
}

/* The other document's error belongs to that document: its source, path, line and column are
 * kept; only the prefix (which variant included it) is added. */
void retry_json_fail_error(retry_json_ctx *c, const retry_error *e) {
  fail_error(c, e, "%s", e->message);
}

void retry_json_fail_value(retry_json_ctx *c, const char *label, const char *what,
                           const json_t *v) {
  /* 64 bytes are enough: describe cuts strings at 40 and shows containers by kind only. */
  char got[64];
  retry_json_describe(v, got, sizeof got);
  retry_json_fail(c, RETRY_ECONFIG, "%s must be %s, got %s", label, what, got);
}

/* The list of allowed keys is the useful half of the message, and retry_error.message holds
 * 159 characters (less the context's prefix) while some lists are longer (resilience4j's key
 * names are long), so no fixed format always fits: the key named in the message with the whole
 * list when that fits; else, when the caller says where the key is not allowed (which the path
 * alone does not tell), that sentence with the list cut at a key boundary; else the whole list
 * alone (the path names the key); else the list cut at a key boundary. */
void retry_json_fail_unknown_key(retry_json_ctx *c, const char *key, const char *const *allowed,
                                 size_t n_allowed, const char *where) {
  char list[512] = "", shown[48], head[sizeof c->e.message], msg[sizeof c->e.message];
  size_t len = 0;
  for (size_t i = 0; i < n_allowed && len < sizeof list; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", allowed[i]);
  retry_json_printable(shown, sizeof shown, key, 32);
  if (where != NULL)
    snprintf(head, sizeof head, "key \"%s\" is not allowed in %s; allowed: ", shown, where);
  else
    snprintf(head, sizeof head, "unknown key \"%s\"; allowed: ", shown);
  /* What fits is what is left after the prefix fail_at puts in front. */
  size_t pre = c->prefix != NULL ? strlen(c->prefix) : 0;
  int room = pre < sizeof msg - 32 ? (int)(sizeof msg - pre) : 32;
  if (snprintf(msg, sizeof msg, "%s%s", head, list) < room ||
      (where == NULL && snprintf(msg, sizeof msg, "key not one of: %s", list) < room)) {
    retry_json_fail(c, RETRY_ECONFIG, "%s", msg);
    return;
  }
  len = strlen(head);
  memcpy(msg, head, len + 1);
  for (size_t i = 0; i < n_allowed; i++) {
    size_t need = strlen(allowed[i]) + (i ? 2 : 0);
    if (len + need + 5 >= (size_t)room) break; /* keep room for ", ..." */
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", i ? ", " : "", allowed[i]);
  }
  /* No ", " before the dots when not even the first key fitted. */
  snprintf(msg + len, sizeof msg - len, "%s...", len < strlen(head) + 1 ? "" : ", ");
  retry_json_fail(c, RETRY_ECONFIG, "%s", msg);
}

/* jansson's line is 1-based and 0 when it has no position; -1 is our "unknown". The text may
 * quote the input ("near '...'"), hence printable. */
void retry_json_error_syntax(retry_error *e, const char *source, const json_error_t *je) {
  if (je->text[0] == '\0' || json_error_code(je) == json_error_out_of_memory) {
    retry_error_set(e, RETRY_ENOMEM, source, "", -1, -1, "out of memory parsing JSON");
    return;
  }
  char text[sizeof je->text];
  if (json_error_code(je) == json_error_null_character)
    snprintf(text, sizeof text, "\\u0000 is not allowed in strings");
  else
    retry_json_printable(text, sizeof text, je->text, sizeof text - 4);
  retry_error_set(e, RETRY_ESYNTAX, source, "", je->line > 0 ? je->line : -1,
                  je->line > 0 ? je->column : -1, "invalid JSON: %s", text);
}

/* }================================================================== */

/* {==================================================================
 * Paths
 * =================================================================== */

/* Whether key is a C-style identifier, which a path can show as .key; others get ["key"].
 * Names such as "checkout-api" thus appear as $.services["checkout-api"], which the
 * simulator's --set syntax reads back, so an error's path can be pasted into an override. */
static bool is_ident(const char *key) {
  if (!((*key >= 'a' && *key <= 'z') || (*key >= 'A' && *key <= 'Z') || *key == '_')) return false;
  for (const char *p = key; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return false;
  return true;
}

/* The path buffer (512 bytes) is larger than retry_error.path (160), so a deep path is cut only
 * when it is copied into the error. room keeps a byte for the NUL; the byte loop stops at
 * n + 1 < room so an escaped character always gets both of its bytes. */
size_t retry_json_path_push_key(retry_json_ctx *c, const char *key) {
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

size_t retry_json_path_push_index(retry_json_ctx *c, size_t i) {
  size_t old = c->path_len;
  snprintf(c->path + old, sizeof c->path - old, "[%zu]", i);
  c->path_len = strlen(c->path);
  return old;
}

size_t retry_json_path_push_raw(retry_json_ctx *c, const char *text) {
  size_t old = c->path_len;
  snprintf(c->path + old, sizeof c->path - old, "%s", text);
  c->path_len = strlen(c->path);
  return old;
}

/* Marks are path lengths, so pops nest like the pushes that returned them. */
void retry_json_path_pop(retry_json_ctx *c, size_t mark) {
  c->path_len = mark;
  c->path[mark] = '\0';
}

/* }================================================================== */

/* {==================================================================
 * Text for messages
 * =================================================================== */

/* A key holding escape sequences or newlines must not be able to rewrite the line it is
 * reported in. The cut steps back over UTF-8 continuation bytes (10xxxxxx) so it lands on the
 * start of a character, then leaves room in buf for "..." and the NUL. */
void retry_json_printable(char *buf, size_t size, const char *s, size_t max) {
  size_t len = strlen(s), n = len > max ? max : len;
  if (n + 4 > size) n = size > 4 ? size - 4 : 0;
  /* After both limits, so that neither can cut inside a character. */
  while (n > 0 && n < len && ((unsigned char)s[n] & 0xC0) == 0x80)
    n--;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    buf[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
  }
  if (n < len && size >= 4)
    memcpy(buf + n, "...", 4);
  else
    buf[n < size ? n : size - 1] = '\0';
}

void retry_json_quote(char *buf, size_t size, const char *key) {
  char shown[48];
  retry_json_printable(shown, sizeof shown, key, 40);
  snprintf(buf, size, "\"%s\"", shown);
}

/* The fewest digits that read back as the same double (17 significant digits always do, so
 * the loop ends); an integral value keeps a ".0" so that "got 2.0" tells a JSON real from the
 * integer 2. Jansson never yields NaN or infinities. */
static void format_double(char *buf, size_t size, double v) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  size_t len = strlen(buf);
  if (strspn(buf, "-0123456789") == len && len + 3 <= size) memcpy(buf + len, ".0", 3);
}

/* Empty containers are shown as [] and {}: "got an object" for {} would hide that the object
 * was empty, which is usually the mistake. */
void retry_json_describe(const json_t *v, char *buf, size_t size) {
  char tmp[48];
  switch (json_typeof(v)) {
    case JSON_OBJECT: snprintf(buf, size, json_object_size(v) == 0 ? "{}" : "an object"); return;
    case JSON_ARRAY: snprintf(buf, size, json_array_size(v) == 0 ? "[]" : "an array"); return;
    case JSON_STRING:
      retry_json_printable(tmp, sizeof tmp, json_string_value(v), 40);
      snprintf(buf, size, "\"%s\"", tmp);
      return;
    case JSON_INTEGER: snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return;
    case JSON_REAL: format_double(buf, size, json_real_value(v)); return;
    case JSON_TRUE: snprintf(buf, size, "true"); return;
    case JSON_FALSE: snprintf(buf, size, "false"); return;
    case JSON_NULL: snprintf(buf, size, "null"); return;
  }
  snprintf(buf, size, "a value"); /* not reached: jansson has no other kind of value */
}

/* }================================================================== */

/* {==================================================================
 * Keys and fields
 * =================================================================== */

/* Linear: the lists are a handful of keys. */
bool retry_json_key_in(const char *key, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(key, list[i]) == 0) return true;
  return false;
}

static char ascii_lower(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

static bool equal_but_case(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (ascii_lower(*a) != ascii_lower(*b)) return false;
  return *a == *b;
}

#define SUGGEST_MAX 64

/* Levenshtein distance with one row on the stack; both strings at most SUGGEST_MAX bytes. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb) {
  size_t row[SUGGEST_MAX + 1];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (ascii_lower(a[i - 1]) == ascii_lower(b[j - 1]) ? 0 : 1);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *retry_json_suggest(const char *key, const char *const *names, size_t n,
                               bool *case_only) {
  if (case_only != NULL) *case_only = false;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(key, names[i]) != 0 && equal_but_case(key, names[i])) {
      if (case_only != NULL) *case_only = true;
      return names[i];
    }
  }
  size_t lk = strlen(key);
  if (lk > SUGGEST_MAX) return NULL;
  const char *best = NULL;
  size_t best_d = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    size_t ln = strlen(names[i]);
    if (ln > SUGGEST_MAX) continue;
    size_t longer = lk > ln ? lk : ln, limit = longer / 3 > 0 ? longer / 3 : 1;
    size_t d = edit_distance(key, lk, names[i], ln);
    if (d <= limit && d < best_d) {
      best = names[i];
      best_d = d;
    }
  }
  return best;
}

/* Jansson keeps an object's keys in insertion order, so the key reported is the first one a
 * reader of the file sees. */
bool retry_json_check_keys(retry_json_ctx *c, json_t *obj, const char *const *allowed, size_t n,
                           const char *where) {
  for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it)) {
    const char *key = json_object_iter_key(it);
    if (retry_json_key_in(key, allowed, n)) continue;
    size_t mark = retry_json_path_push_key(c, key);
    retry_json_fail_unknown_key(c, key, allowed, n, where);
    retry_json_path_pop(c, mark);
    return false;
  }
  return true;
}

/* null reads as absent: proto3 JSON maps null to "field not set", and one rule for a whole
 * document lets an override write null to get the default back. */
json_t *retry_json_field(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  return json_is_null(v) ? NULL : v;
}

int retry_json_require(retry_json_ctx *c, int rc, const char *key, const char *what) {
  if (rc != 0) return rc;
  char label[64];
  retry_json_quote(label, sizeof label, key);
  size_t mark = retry_json_path_push_key(c, key);
  retry_json_fail(c, RETRY_ECONFIG, "%s is required: %s", label, what);
  retry_json_path_pop(c, mark);
  return -1;
}

/* }================================================================== */

/* {==================================================================
 * Typed getters
 * =================================================================== */

/* The getters share one pattern: absent (or null) returns 0 with *out untouched, a bad value
 * pushes its key only for the message and returns -1, a good one sets *out and returns 1. */

/* Reports that obj[key] (the value v) is not what was expected, at the key's path. Returns -1,
 * the getters' "failed". */
static int fail_key(retry_json_ctx *c, const char *key, const char *what, const json_t *v) {
  char label[64];
  retry_json_quote(label, sizeof label, key);
  size_t mark = retry_json_path_push_key(c, key);
  retry_json_fail_value(c, label, what, v);
  retry_json_path_pop(c, mark);
  return -1;
}

int retry_json_fail_field(retry_json_ctx *c, json_t *obj, const char *key, const char *what) {
  return fail_key(c, key, what, json_object_get(obj, key));
}

/* Looks obj[key] up for a getter: NULL with *rc = 0 when absent, NULL with *rc = -1 once the
 * context failed (nothing after the first error is validated). */
static json_t *lookup(const retry_json_ctx *c, json_t *obj, const char *key, int *rc) {
  *rc = retry_json_failed(c) ? -1 : 0;
  return *rc < 0 ? NULL : retry_json_field(obj, key);
}

int retry_json_get_bool(retry_json_ctx *c, json_t *obj, const char *key, bool *out) {
  int rc;
  json_t *v = lookup(c, obj, key, &rc);
  if (v == NULL) return rc;
  if (!json_is_boolean(v)) return fail_key(c, key, "true or false", v);
  *out = json_is_true(v);
  return 1;
}

/* A real such as 2.0 is refused: counts and sizes are integers, accepting 2.5 silently
 * truncated would hide a mistake, and grpc-go will not decode 2.0 into an int either. Jansson
 * already failed the parse for integers beyond its json_int_t. */
int retry_json_get_int(retry_json_ctx *c, json_t *obj, const char *key, int64_t lo, int64_t hi,
                       const char *what, int64_t *out) {
  int rc;
  json_t *v = lookup(c, obj, key, &rc);
  if (v == NULL) return rc;
  if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
    return fail_key(c, key, what, v);
  *out = (int64_t)json_integer_value(v); /* exact: the value is within [lo, hi] */
  return 1;
}

/* lo and hi are int32_t, so a value that passed fits the cast. INT32_MAX as hi is where the
 * type ends, not a rule of the document: "must be >= 0" would mislead there. */
int retry_json_get_int32(retry_json_ctx *c, json_t *obj, const char *key, int32_t lo, int32_t hi,
                         const char *what, int32_t *out) {
  int64_t v = 0;
  json_t *jv = retry_json_field(obj, key);
  if (hi == INT32_MAX && !retry_json_failed(c) && json_is_integer(jv) &&
      json_integer_value(jv) > INT32_MAX) {
    char label[64];
    retry_json_quote(label, sizeof label, key);
    size_t mark = retry_json_path_push_key(c, key);
    retry_json_fail(c, RETRY_ECONFIG, "%s must be at most %d, got %" JSON_INTEGER_FORMAT, label,
                    INT32_MAX, json_integer_value(jv));
    retry_json_path_pop(c, mark);
    return -1;
  }
  int rc = retry_json_get_int(c, obj, key, lo, hi, what, &v);
  if (rc == 1) *out = (int32_t)v;
  return rc;
}

/* The negated comparisons refuse a NaN too, although jansson never yields one (an overflowing
 * real is a syntax error). Callers pass HUGE_VAL or DBL_MAX for "no upper bound". */
int retry_json_get_number(retry_json_ctx *c, json_t *obj, const char *key, double lo, bool lo_open,
                          double hi, bool hi_open, const char *what, double *out) {
  int rc;
  json_t *v = lookup(c, obj, key, &rc);
  if (v == NULL) return rc;
  double d = json_is_number(v) ? json_number_value(v) : 0;
  if (!json_is_number(v) || (lo_open ? !(d > lo) : !(d >= lo)) ||
      (hi_open ? !(d < hi) : !(d <= hi)))
    return fail_key(c, key, what, v);
  *out = d;
  return 1;
}

int retry_json_get_string(retry_json_ctx *c, json_t *obj, const char *key, const char **out) {
  int rc;
  json_t *v = lookup(c, obj, key, &rc);
  if (v == NULL) return rc;
  if (!json_is_string(v)) return fail_key(c, key, "a string", v);
  *out = json_string_value(v);
  return 1;
}

/* The message lists every name, so a typo is fixed without opening the documentation. */
int retry_json_get_enum(retry_json_ctx *c, json_t *obj, const char *key, const char *const *names,
                        size_t n, int *out) {
  int rc;
  json_t *v = lookup(c, obj, key, &rc);
  if (v == NULL) return rc;
  if (json_is_string(v)) {
    for (size_t i = 0; i < n; i++) {
      if (strcmp(json_string_value(v), names[i]) == 0) {
        *out = (int)i;
        return 1;
      }
    }
  }
  /* "a" or "b"; "a", "b" or "c". As large as a whole message: len < sizeof what stops the loop
   * should a list ever be too long, and the message then is cut like any other. */
  char what[sizeof c->e.message];
  size_t len = 0;
  for (size_t i = 0; i < n && len < sizeof what; i++)
    len += (size_t)snprintf(what + len, sizeof what - len, "%s\"%s\"",
                            i == 0 ? "" : (i + 1 == n ? " or " : ", "), names[i]);
  return fail_key(c, key, what, v);
}

/* A JSON number is refused even when it looks like seconds: proto3 JSON writes durations as
 * strings, and gRPC parsers do not accept 0.5 for "0.5s". */
int retry_json_get_duration(retry_json_ctx *c, json_t *obj, const char *key, int64_t lo,
                            bool lo_open, int64_t hi, const char *what, int64_t *out) {
  int rc;
  json_t *v = lookup(c, obj, key, &rc);
  if (v == NULL) return rc;
  int64_t ns = 0;
  int prc = json_is_string(v) ? retry_duration_parse(json_string_value(v), &ns) : RETRY_EINVAL;
  if (prc == RETRY_ERANGE) {
    /* Valid proto3 (which allows 10000 years) but not int64 nanoseconds: say so, rather than
     * "must be a duration", which the value is. */
    char got[64];
    retry_json_describe(v, got, sizeof got);
    char label[64];
    retry_json_quote(label, sizeof label, key);
    size_t mark = retry_json_path_push_key(c, key);
    retry_json_fail(c, RETRY_ECONFIG, "%s is out of range: at most about 292 years, got %s", label,
                    got);
    retry_json_path_pop(c, mark);
    return -1;
  }
  if (prc != RETRY_OK || (lo_open ? ns <= lo : ns < lo) || ns > hi)
    return fail_key(c, key, what, v);
  *out = ns;
  return 1;
}

/* }================================================================== */

/* {==================================================================
 * Reading a document
 * =================================================================== */

/* We read the file ourselves rather than call json_load_file: jansson would report a
 * directory or a failed read as a syntax error at line 1, its buffer would bypass the
 * caller's allocator, and a loader that hashes what it read needs the bytes.
 * Only a regular file is read: /dev/zero or /dev/urandom would be read until memory ran out,
 * and a FIFO would block the loader. The file is opened with O_NONBLOCK so that opening a
 * FIFO returns at once (open() on a FIFO without a writer waits otherwise), checked with
 * fstat on the descriptor (no race between a stat and the open), then read blocking. */
static const char *file_kind(mode_t m) {
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  return "something else";
}

static int read_fail(retry_error *err, int code, const char *path, const char *what, int e) {
  if (e != 0)
    retry_error_set(err, code, path, "", -1, -1, "%s: %s", what, strerror(e));
  else
    retry_error_set(err, code, path, "", -1, -1, "%s", what);
  return code;
}

int retry_json_read_file(const char *path, const retry_allocator *a, char **out, size_t *out_len,
                         retry_error *err) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return read_fail(err, RETRY_EIO, path, "cannot open the file", errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return read_fail(err, RETRY_EIO, path, "cannot read the file", e);
  }
  if (S_ISDIR(st.st_mode)) { /* worded as the read() of a directory has always been */
    close(fd);
    return read_fail(err, RETRY_EIO, path, "cannot read the file", EISDIR);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    retry_error_set(err, RETRY_EIO, path, "", -1, -1,
                    "cannot read the file: it is %s, not a regular file", file_kind(st.st_mode));
    return RETRY_EIO;
  }
  if (st.st_size > (off_t)RETRY_JSON_MAX_FILE_BYTES) {
    close(fd);
    retry_error_set(err, RETRY_EIO, path, "", -1, -1,
                    "the file is too large: %lld bytes, at most %d MiB (%lld bytes) are read",
                    (long long)st.st_size, RETRY_JSON_MAX_FILE_BYTES >> 20,
                    (long long)RETRY_JSON_MAX_FILE_BYTES);
    return RETRY_EIO;
  }
  /* Back to blocking reads: O_NONBLOCK was for the open only. */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      /* One byte past the limit is enough to tell a file that grew after the fstat. */
      if (cap > RETRY_JSON_MAX_FILE_BYTES) {
        retry__free(a, buf);
        close(fd);
        retry_error_set(err, RETRY_EIO, path, "", -1, -1,
                        "the file is too large: more than %d MiB (%lld bytes)",
                        RETRY_JSON_MAX_FILE_BYTES >> 20, (long long)RETRY_JSON_MAX_FILE_BYTES);
        return RETRY_EIO;
      }
      /* Doubling keeps reads O(n); the first buffer fits the file as fstat saw it. */
      size_t want = (size_t)st.st_size + 1;
      size_t ncap = cap == 0 ? (want > 4096 ? want : 4096) : cap * 2;
      if (ncap > (size_t)RETRY_JSON_MAX_FILE_BYTES + 1)
        ncap = (size_t)RETRY_JSON_MAX_FILE_BYTES + 1;
      if (ncap <= cap) ncap = cap + 1;
      char *nbuf = retry__realloc(a, buf, ncap);
      if (nbuf == NULL) {
        retry__free(a, buf);
        close(fd);
        retry_error_set(err, RETRY_ENOMEM, path, "", -1, -1, "out of memory reading the file");
        return RETRY_ENOMEM;
      }
      buf = nbuf;
      cap = ncap;
    }
    ssize_t got = read(fd, buf + len, cap - len);
    if (got > 0) {
      len += (size_t)got;
      continue;
    }
    if (got == 0) break;
    if (errno == EINTR) continue;
    int e = errno;
    retry__free(a, buf);
    close(fd);
    return read_fail(err, RETRY_EIO, path, "cannot read the file", e);
  }
  close(fd);
  if (len > RETRY_JSON_MAX_FILE_BYTES) {
    retry__free(a, buf);
    retry_error_set(err, RETRY_EIO, path, "", -1, -1,
                    "the file is too large: more than %d MiB (%lld bytes)",
                    RETRY_JSON_MAX_FILE_BYTES >> 20, (long long)RETRY_JSON_MAX_FILE_BYTES);
    return RETRY_EIO;
  }
  *out = buf;
  *out_len = len;
  return RETRY_OK;
}

/* }================================================================== */
