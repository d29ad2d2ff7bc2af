/*
 * retry_config.c: the gRPC service config loader (methodConfig, retryThrottling and our
 * "retrysim" extension block) and proto3 JSON Duration parsing.
 *
 * The only file of libretry that includes <jansson.h>: the JSON tree lives only while loading
 * and what comes out is plain retry_policy / retry_target_config structs. A retry_config owns
 * every string its policies point to. Lookups never allocate: the method names are kept in one
 * array sorted by (service, method) and searched by bisection.
 *
 * Validation follows gRPC (A6, A21, service_config.md): any known field that fails makes the
 * whole config fail, unknown standard fields are ignored. The "retrysim" block is ours and
 * strict: an unknown key there is an error. docs/service-config.md is the user's view.
 */
#include "retry_int.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* The largest JSON integer jansson represents. */
#if JSON_INTEGER_IS_LONG_LONG
#define JINT_MAX LLONG_MAX
#else
#define JINT_MAX LONG_MAX
#endif

/* One name of a methodConfig entry. An empty method is service-wide; an empty service (and
 * method) is the default. Strings point into retry_config.strings, not NUL-terminated here. */
typedef struct name_key {
  const char *service; /* "" for the default */
  size_t service_len;
  const char *method;  /* "" for a service-wide name */
  size_t method_len;
  size_t entry; /* index of the methodConfig entry (and of retry_config.methods) */
  size_t index; /* index in that entry's name list, for error messages */
} name_key;

struct retry_config {
  retry_allocator alloc; /* how the config was allocated (a copy: the caller's may go) */
  bool has_alloc;        /* false: libc */
  retry_target_config target;   /* retryThrottling plus the extension's shared state */
  retry_method_config unmatched;/* answer of a lookup that matches nothing */
  retry_method_config *methods; /* one per methodConfig entry */
  size_t n_methods;
  name_key *keys;               /* every name, sorted by (service, method) */
  size_t n_keys;
  const char **idempotent;      /* the extension's idempotentMethods, NULL when absent */
  size_t n_idempotent;
  char *strings;                /* one arena for every string above */
  size_t strings_size;
  int32_t max_attempts_limit;   /* the client cap on maxAttempts; <= 0 means none */
};

/* {==================================================================
 * proto3 JSON Duration
 * =================================================================== */

/* The proto3 Duration range: +-10000 years, in seconds. */
#define MAX_DURATION_SECONDS INT64_C(315576000000)

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* Grammar: -? (0 | [1-9][0-9]*) (. [0-9]{1,9})? s. The integer part is that of a JSON number,
 * so "01s" is rejected like the JSON number 01; no exponent, no blanks, no "+". Syntax is
 * checked before range, so a malformed huge value is EINVAL, not ERANGE. */
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
  uint64_t secs = 0;
  bool too_big = false;
  for (; is_digit(*p); p++) {
    if (secs > (uint64_t)MAX_DURATION_SECONDS) too_big = true; /* keep scanning the syntax */
    else secs = secs * 10 + (uint64_t)(*p - '0');
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
  for (; n_frac < 9; n_frac++) frac *= 10;
  if (too_big || secs > (uint64_t)MAX_DURATION_SECONDS) return RETRY_ERANGE;
  /* The proto3 range is wider than int64 nanoseconds (about 292 years): check that too. */
  uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  if (secs > (limit - frac) / (uint64_t)RETRY_NS_PER_S) return RETRY_ERANGE;
  uint64_t mag = secs * (uint64_t)RETRY_NS_PER_S + frac;
  if (!neg) *ns = (int64_t)mag;
  else if (mag == (uint64_t)INT64_MAX + 1u) *ns = INT64_MIN;
  else *ns = -(int64_t)mag;
  return RETRY_OK;
}

/* }================================================================== */

/* {==================================================================
 * Loading context: where we are in the document, and the first error
 * =================================================================== */

/* The extension's method options, each with a flag saying whether it was given. */
typedef struct method_opts {
  bool has_space, has_jitter, has_jitter_fraction, has_cap_after_jitter;
  bool has_per_attempt_timeout, has_retry_buffer, has_retry_streaming;
  bool has_honor_retry_after, has_wait_for_deadline;
  retry_space space;              /* statusSpace */
  retry_jitter jitter;            /* jitter */
  double jitter_fraction;         /* jitterFraction, in [0, 1] */
  bool cap_after_jitter;          /* capAfterJitter */
  int64_t per_attempt_timeout_ns; /* perAttemptTimeout, > 0 */
  int64_t retry_buffer_bytes;     /* retryBufferBytes, >= 0 (0: unlimited) */
  bool retry_streaming, honor_retry_after, wait_for_deadline;
} method_opts;

typedef struct load_ctx {
  const char *source;   /* file name or "<string>" */
  retry_error e;        /* the first error; e.code != RETRY_OK once loading failed */
  char path[512];       /* JSON path of the value being read, "$.methodConfig[0]" */
  size_t path_len;
  retry_config *cfg;    /* being filled */
  size_t strings_used;  /* bytes of cfg->strings handed out */
  method_opts top;      /* method options of the top-level extension block */
} load_ctx;

static bool failed(const load_ctx *c) { return c->e.code != RETRY_OK; }

static void fail(load_ctx *c, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Records an error at the current path (the first one wins). Callers return false / -1
 * right after, so loading stops at the first problem; nothing after it is validated. */
static void fail(load_ctx *c, int code, const char *fmt, ...) {
  char msg[sizeof c->e.message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  retry__error_set(&c->e, code, c->source, c->path, -1, -1, "%s", msg);
}

static bool is_ident(const char *key) {
  if (!((*key >= 'a' && *key <= 'z') || (*key >= 'A' && *key <= 'Z') || *key == '_')) return false;
  for (const char *p = key; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || is_digit(*p) || *p == '_'))
      return false;
  return true;
}

/* Appends ".key" (or ["key"] when the key is not an identifier) to the path. Returns the old
 * length for path_pop. A path that does not fit is truncated, never overflowed. Keys come
 * from the input, so quotes and backslashes are escaped and control bytes shown as '?'. */
static size_t path_push_key(load_ctx *c, const char *key) {
  size_t old = c->path_len, n = old, room = sizeof c->path - 1;
  if (is_ident(key)) {
    snprintf(c->path + n, sizeof c->path - n, ".%s", key);
  } else {
    const char *open = "[\"";
    for (; *open && n < room; open++) c->path[n++] = *open;
    for (const char *p = key; *p && n + 1 < room; p++) {
      unsigned char ch = (unsigned char)*p;
      if (ch == '"' || ch == '\\') c->path[n++] = '\\';
      c->path[n++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    for (const char *close = "\"]"; *close && n < room; close++) c->path[n++] = *close;
    c->path[n] = '\0';
  }
  c->path_len = strlen(c->path);
  return old;
}

static size_t path_push_index(load_ctx *c, size_t i) {
  size_t old = c->path_len;
  snprintf(c->path + old, sizeof c->path - old, "[%zu]", i);
  c->path_len = strlen(c->path);
  return old;
}

static void path_pop(load_ctx *c, size_t old) {
  c->path_len = old;
  c->path[old] = '\0';
}

/* Copies at most max bytes of s into buf as printable text: control bytes become '?', and a
 * cut never splits a UTF-8 sequence. Appends "..." when s was longer. */
static void printable(char *buf, size_t size, const char *s, size_t max) {
  size_t len = strlen(s), n = len > max ? max : len;
  while (n > 0 && n < len && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  if (n + 4 > size) n = size > 4 ? size - 4 : 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    buf[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
  }
  if (n < len) memcpy(buf + n, "...", 4);
  else buf[n] = '\0';
}

/* Formats v with the fewest digits that read back as the same double; an integral value
 * keeps a ".0" so that "got 2.0" tells a JSON real from the integer 2. */
static void format_double(char *buf, size_t size, double v) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  size_t len = strlen(buf);
  if (strspn(buf, "-0123456789") == len && len + 3 <= size) memcpy(buf + len, ".0", 3);
}

/* Describes a JSON value for "got ..." in messages: scalars as written (strings quoted and
 * cut at 40 bytes), containers by kind, so a message never grows with the input. */
static void describe(const json_t *v, char *buf, size_t size) {
  char tmp[48];
  switch (json_typeof(v)) {
    case JSON_OBJECT: snprintf(buf, size, "an object"); return;
    case JSON_ARRAY: snprintf(buf, size, json_array_size(v) == 0 ? "[]" : "an array"); return;
    case JSON_STRING:
      printable(tmp, sizeof tmp, json_string_value(v), 40);
      snprintf(buf, size, "\"%s\"", tmp);
      return;
    case JSON_INTEGER: snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return;
    case JSON_REAL: format_double(buf, size, json_real_value(v)); return;
    case JSON_TRUE: snprintf(buf, size, "true"); return;
    case JSON_FALSE: snprintf(buf, size, "false"); return;
    case JSON_NULL: snprintf(buf, size, "null"); return;
  }
  snprintf(buf, size, "a value");
}

/* "<key> must be <what>, got <v>", at the current path. */
static void fail_value(load_ctx *c, const char *key, const char *what, const json_t *v) {
  char got[64];
  describe(v, got, sizeof got);
  fail(c, RETRY_ECONFIG, "%s must be %s, got %s", key, what, got);
}

/* Reports an unknown key (the path already ends with it) and lists the allowed keys: with the
 * key named in the message when that fits in a message, else without (the path names it),
 * else with the list cut short. retry_error.message holds 159 characters and some lists are
 * longer (resilience4j's key names are long), so a fixed format could not always fit. */
static void fail_unknown_key(load_ctx *c, const char *key, const char *const *allowed,
                             size_t n_allowed) {
  char list[512] = "", shown[48], msg[sizeof c->e.message];
  size_t len = 0;
  for (size_t i = 0; i < n_allowed && len < sizeof list; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", allowed[i]);
  printable(shown, sizeof shown, key, 32);
  if (snprintf(msg, sizeof msg, "unknown key \"%s\"; allowed: %s", shown, list) < (int)sizeof msg ||
      snprintf(msg, sizeof msg, "key not one of: %s", list) < (int)sizeof msg) {
    fail(c, RETRY_ECONFIG, "%s", msg);
    return;
  }
  len = (size_t)snprintf(msg, sizeof msg, "unknown key \"%s\"; allowed: ", shown);
  for (size_t i = 0; i < n_allowed; i++) {
    size_t need = strlen(allowed[i]) + (i ? 2 : 0);
    if (len + need + 5 >= sizeof msg) break; /* keep room for ", ..." */
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", i ? ", " : "", allowed[i]);
  }
  snprintf(msg + len, sizeof msg - len, ", ...");
  fail(c, RETRY_ECONFIG, "%s", msg);
}

static bool key_in(const char *key, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(key, list[i]) == 0) return true;
  return false;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Fails on the first key of obj (in document order) that is not in allowed. */
static bool check_keys(load_ctx *c, json_t *obj, const char *const *allowed, size_t n) {
  for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it)) {
    const char *key = json_object_iter_key(it);
    if (key_in(key, allowed, n)) continue;
    size_t mark = path_push_key(c, key);
    fail_unknown_key(c, key, allowed, n);
    path_pop(c, mark);
    return false;
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Typed fields. Each getter returns 1 and sets *out when the field is present and valid,
 * 0 when it is absent (JSON null counts as absent, as in proto3 JSON), -1 after an error.
 * *out is left alone unless the field is valid, so callers preset it with the default.
 * =================================================================== */

/* obj[key], with null read as absent: proto3 JSON maps null to "field not set", and treating
 * the extension block the same way keeps one rule for the whole document. */
static json_t *field(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  return json_is_null(v) ? NULL : v;
}

/* Turns "absent" into an error for required fields. Used as require(c, get_x(...), ...) so
 * the getter's own errors pass through untouched. */
static int require(load_ctx *c, int rc, const char *key, const char *what) {
  if (rc != 0) return rc;
  size_t mark = path_push_key(c, key);
  fail(c, RETRY_ECONFIG, "%s is required: %s", key, what);
  path_pop(c, mark);
  return -1;
}

static int get_bool(load_ctx *c, json_t *obj, const char *key, bool *out) {
  json_t *v = field(obj, key);
  if (v == NULL) return 0;
  if (!json_is_boolean(v)) {
    size_t mark = path_push_key(c, key);
    fail_value(c, key, "true or false", v);
    path_pop(c, mark);
    return -1;
  }
  *out = json_is_true(v);
  return 1;
}

/* A JSON integer in [lo, hi]. A real such as 2.0 is refused, as grpc-go refuses it (its
 * decoder will not put 2.0 into an int) and as A6 says "integer". Jansson already failed the
 * parse for integers beyond int64. hi == INT32_MAX is where an int32 field ends, not a rule
 * of the config, so it gets its own message rather than a misleading "must be >= 0". */
static int get_int(load_ctx *c, json_t *obj, const char *key, json_int_t lo, json_int_t hi,
                   const char *what, json_int_t *out) {
  json_t *v = field(obj, key);
  if (v == NULL) return 0;
  size_t mark = path_push_key(c, key);
  int rc = 1;
  if (!json_is_integer(v) || json_integer_value(v) < lo ||
      (json_integer_value(v) > hi && hi != INT32_MAX)) {
    fail_value(c, key, what, v);
    rc = -1;
  } else if (json_integer_value(v) > hi) {
    fail(c, RETRY_ECONFIG, "%s must be at most %d, got %" JSON_INTEGER_FORMAT, key, INT32_MAX,
         json_integer_value(v));
    rc = -1;
  } else {
    *out = json_integer_value(v);
  }
  path_pop(c, mark);
  return rc;
}

static int get_int32(load_ctx *c, json_t *obj, const char *key, int32_t lo, int32_t hi,
                     const char *what, int32_t *out) {
  json_int_t v = 0;
  int rc = get_int(c, obj, key, lo, hi, what, &v);
  if (rc == 1) *out = (int32_t)v;
  return rc;
}

/* A JSON number (integer or real) in the interval lo..hi, each end open or closed. Jansson
 * never yields NaN or infinities (an overflowing real is a syntax error), but the negated
 * comparisons would refuse a NaN anyway. */
static int get_number(load_ctx *c, json_t *obj, const char *key, double lo, bool lo_open,
                      double hi, bool hi_open, const char *what, double *out) {
  json_t *v = field(obj, key);
  if (v == NULL) return 0;
  double d = json_is_number(v) ? json_number_value(v) : 0;
  if (!json_is_number(v) || (lo_open ? !(d > lo) : !(d >= lo)) ||
      (hi_open ? !(d < hi) : !(d <= hi))) {
    size_t mark = path_push_key(c, key);
    fail_value(c, key, what, v);
    path_pop(c, mark);
    return -1;
  }
  *out = d;
  return 1;
}

/* A proto3 Duration string in the interval lo..hi (lo open or closed, hi closed). A JSON
 * number is refused even when it looks like seconds: proto3 JSON writes durations as strings,
 * and gRPC parsers do not accept 0.5 for "0.5s". */
static int get_duration(load_ctx *c, json_t *obj, const char *key, int64_t lo, bool lo_open,
                        int64_t hi, const char *what, int64_t *out) {
  json_t *v = field(obj, key);
  if (v == NULL) return 0;
  size_t mark = path_push_key(c, key);
  int64_t ns = 0;
  int rc = json_is_string(v) ? retry_duration_parse(json_string_value(v), &ns) : RETRY_EINVAL;
  if (rc == RETRY_ERANGE) {
    char got[64];
    describe(v, got, sizeof got);
    fail(c, RETRY_ECONFIG, "%s is out of range: a duration must be within 292 years, got %s",
         key, got);
  } else if (rc != RETRY_OK || (lo_open ? ns <= lo : ns < lo) || ns > hi) {
    fail_value(c, key, what, v);
  } else {
    *out = ns;
  }
  path_pop(c, mark);
  return failed(c) ? -1 : 1;
}

#define DUR_POS "a duration > 0 such as \"0.1s\""
#define DUR_NONNEG "a duration >= 0 such as \"0.1s\""

/* }================================================================== */

/* {==================================================================
 * Status lists
 * =================================================================== */

/* How the members of a status list are read. A policy's list uses the policy's space; the
 * shared state (adaptive throttling, breaker) may serve a gRPC layer and an HTTP gateway at
 * once, so its lists take both spaces and rely on the ranges not overlapping. */
typedef enum list_space {
  LIST_GRPC,  /* gRPC code names (upper case) or integers 0..16 */
  LIST_HTTP,  /* HTTP statuses 100..599 or tokens ("5xx", "gateway-error", "503") */
  LIST_MIXED  /* either: 0..16 and names are gRPC, 100..599 and tokens are HTTP */
} list_space;

static const char *list_what(list_space sp) {
  switch (sp) {
    case LIST_GRPC: return "upper-case gRPC code names or integers in [1, 16]";
    case LIST_HTTP:
      return "HTTP statuses in [100, 599] or tokens such as \"5xx\", \"gateway-error\"";
    case LIST_MIXED: break;
  }
  return "gRPC codes (names or 1..16) or HTTP statuses (100..599, \"5xx\", \"gateway-error\")";
}

static bool has_http_success(const retry_status_set *s) {
  for (int st = 200; st <= 299; st++)
    if (retry_status_set_has(s, RETRY_SPACE_HTTP, st)) return true;
  return false;
}

/* Adds one list member to *s. Returns 1, 0 when v names no status, -1 when it names a
 * success (OK, 2xx), which no list may hold: grpc-java refuses OK in retryable codes, and a
 * success counted as a breaker failure or a throttling reject would be a config bug. The
 * token goes into a scratch set first so a refused token leaves *s unchanged. */
static int add_status(retry_status_set *s, list_space sp, const json_t *v) {
  retry_status_set one;
  retry_status_set_clear(&one);
  if (json_is_integer(v)) {
    json_int_t n = json_integer_value(v);
    if (sp != LIST_HTTP && n >= 0 && n < RETRY_GRPC_N_CODES)
      retry_status_set_add(&one, RETRY_SPACE_GRPC, (int)n);
    else if (sp != LIST_GRPC && n >= 100 && n <= 599)
      retry_status_set_add(&one, RETRY_SPACE_HTTP, (int)n);
    else
      return 0;
  } else if (json_is_string(v)) {
    const char *tok = json_string_value(v);
    bool is_grpc =
        sp != LIST_HTTP && retry_status_set_add_token(&one, RETRY_SPACE_GRPC, tok) == RETRY_OK;
    if (!is_grpc &&
        (sp == LIST_GRPC || retry_status_set_add_token(&one, RETRY_SPACE_HTTP, tok) != RETRY_OK))
      return 0;
  } else {
    return 0;
  }
  if (retry_status_set_has(&one, RETRY_SPACE_GRPC, RETRY_GRPC_OK) || has_http_success(&one))
    return -1;
  s->grpc |= one.grpc;
  for (size_t i = 0; i < N_OF(s->http); i++) s->http[i] |= one.http[i];
  return 1;
}

/* Reads a status list into *out, replacing (not extending) the default it held: a list in
 * the config is the whole list. non_empty: [] is an error (A6 requires a non-empty
 * retryableStatusCodes; an empty breaker or reject list would switch the mechanism off). */
static int get_status_list(load_ctx *c, json_t *obj, const char *key, list_space sp,
                           bool non_empty, retry_status_set *out) {
  json_t *v = field(obj, key);
  if (v == NULL) return 0;
  size_t mark = path_push_key(c, key);
  char what[160];
  snprintf(what, sizeof what, "%sarray of %s", non_empty ? "a non-empty " : "an ",
           list_what(sp));
  if (!json_is_array(v) || (non_empty && json_array_size(v) == 0)) {
    fail_value(c, key, what, v);
    path_pop(c, mark);
    return -1;
  }
  retry_status_set_clear(out);
  for (size_t i = 0; i < json_array_size(v); i++) {
    json_t *item = json_array_get(v, i);
    int rc = add_status(out, sp, item);
    if (rc == 1) continue;
    char got[64];
    describe(item, got, sizeof got);
    path_push_index(c, i);
    if (rc == 0) fail(c, RETRY_ECONFIG, "%s entries must be %s, got %s", key, list_what(sp), got);
    else fail(c, RETRY_ECONFIG, "%s must not contain a success status (OK, 2xx), got %s", key, got);
    break;
  }
  path_pop(c, mark);
  return failed(c) ? -1 : 1;
}

/* }================================================================== */

/* {==================================================================
 * The "retrysim" extension block
 * =================================================================== */

static const char *const method_keys[] = {
    "statusSpace",       "jitter",           "jitterFraction", "capAfterJitter",
    "perAttemptTimeout", "retryBufferBytes", "retryStreaming", "honorRetryAfter",
    "waitForDeadline"};
static const char *const channel_keys[] = {"maxAttemptsLimit", "idempotentMethods", "budget",
                                           "adaptiveThrottling", "circuitBreaker"};
/* Every key of the top-level block. Channel-wide keys come first because a message that lists
 * them may be cut short, and a channel key is the likelier thing to be misspelled there. */
static const char *const top_keys[] = {
    "maxAttemptsLimit", "idempotentMethods", "budget",           "adaptiveThrottling",
    "circuitBreaker",   "statusSpace",       "jitter",           "jitterFraction",
    "capAfterJitter",   "perAttemptTimeout", "retryBufferBytes", "retryStreaming",
    "honorRetryAfter",  "waitForDeadline"};

/* Reads the method options of an extension block (its keys were checked already). Each
 * option keeps a has_ flag so that an entry's block overrides only what it sets and
 * inherits the rest from the top level. */
static bool parse_method_opts(load_ctx *c, json_t *ext, method_opts *mo) {
  json_t *v = field(ext, "statusSpace");
  if (v != NULL) {
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    mo->has_space = true;
    if (strcmp(s, "grpc") == 0) mo->space = RETRY_SPACE_GRPC;
    else if (strcmp(s, "http") == 0) mo->space = RETRY_SPACE_HTTP;
    else {
      size_t mark = path_push_key(c, "statusSpace");
      fail_value(c, "statusSpace", "\"grpc\" or \"http\"", v);
      path_pop(c, mark);
      return false;
    }
  }
  v = field(ext, "jitter");
  if (v != NULL) {
    if (!json_is_string(v) || retry_jitter_parse(json_string_value(v), &mo->jitter) != RETRY_OK) {
      size_t mark = path_push_key(c, "jitter");
      fail_value(c, "jitter",
                 "one of grpc, proportional, full, equal, decorrelated, polly-v2, none", v);
      path_pop(c, mark);
      return false;
    }
    mo->has_jitter = true;
  }
  int rc;
  if ((rc = get_number(c, ext, "jitterFraction", 0, false, 1, false, "a number in [0, 1]",
                       &mo->jitter_fraction)) < 0)
    return false;
  mo->has_jitter_fraction |= rc == 1;
  if ((rc = get_bool(c, ext, "capAfterJitter", &mo->cap_after_jitter)) < 0) return false;
  mo->has_cap_after_jitter |= rc == 1;
  if ((rc = get_duration(c, ext, "perAttemptTimeout", 0, true, INT64_MAX, DUR_POS,
                         &mo->per_attempt_timeout_ns)) < 0)
    return false;
  mo->has_per_attempt_timeout |= rc == 1;
  json_int_t bytes = 0;
  if ((rc = get_int(c, ext, "retryBufferBytes", 0, JINT_MAX, "an integer >= 0 (0: unlimited)",
                    &bytes)) < 0)
    return false;
  if (rc == 1) {
    mo->has_retry_buffer = true;
    mo->retry_buffer_bytes = (int64_t)bytes;
  }
  if ((rc = get_bool(c, ext, "retryStreaming", &mo->retry_streaming)) < 0) return false;
  mo->has_retry_streaming |= rc == 1;
  if ((rc = get_bool(c, ext, "honorRetryAfter", &mo->honor_retry_after)) < 0) return false;
  mo->has_honor_retry_after |= rc == 1;
  if ((rc = get_bool(c, ext, "waitForDeadline", &mo->wait_for_deadline)) < 0) return false;
  mo->has_wait_for_deadline |= rc == 1;
  return true;
}

/* dst takes every option that over sets: an entry's block over the top-level defaults. */
static void merge_opts(method_opts *dst, const method_opts *over) {
#define TAKE(flag, ...)                      \
  if (over->flag) {                          \
    dst->flag = true;                        \
    __VA_ARGS__;                             \
  }
  TAKE(has_space, dst->space = over->space)
  TAKE(has_jitter, dst->jitter = over->jitter)
  TAKE(has_jitter_fraction, dst->jitter_fraction = over->jitter_fraction)
  TAKE(has_cap_after_jitter, dst->cap_after_jitter = over->cap_after_jitter)
  TAKE(has_per_attempt_timeout, dst->per_attempt_timeout_ns = over->per_attempt_timeout_ns)
  TAKE(has_retry_buffer, dst->retry_buffer_bytes = over->retry_buffer_bytes)
  TAKE(has_retry_streaming, dst->retry_streaming = over->retry_streaming)
  TAKE(has_honor_retry_after, dst->honor_retry_after = over->honor_retry_after)
  TAKE(has_wait_for_deadline, dst->wait_for_deadline = over->wait_for_deadline)
#undef TAKE
}

/* Sets what the options override on a policy already filled from gRPC fields, plus what every
 * policy of the config shares (the allowlist). The space was chosen at retry_policy_init;
 * the local reject status follows it (UNAVAILABLE, or 503 for an HTTP layer) so a call
 * refused by the breaker ends with a status its own layer understands. */
static void apply_method_opts(const retry_config *cfg, retry_policy *p, const method_opts *mo) {
  if (mo->has_jitter) p->backoff.jitter = mo->jitter;
  if (mo->has_jitter_fraction) p->backoff.jitter_fraction = mo->jitter_fraction;
  if (mo->has_cap_after_jitter) p->backoff.cap_after_jitter = mo->cap_after_jitter;
  if (mo->has_per_attempt_timeout) p->per_attempt_timeout_ns = mo->per_attempt_timeout_ns;
  if (mo->has_retry_buffer) p->retry_buffer_bytes = mo->retry_buffer_bytes;
  if (mo->has_retry_streaming) p->retry_streaming = mo->retry_streaming;
  if (mo->has_honor_retry_after) p->honor_retry_after = mo->honor_retry_after;
  if (mo->has_wait_for_deadline) p->wait_for_deadline = mo->wait_for_deadline;
  p->local_reject_status = p->space == RETRY_SPACE_HTTP ? 503 : RETRY_GRPC_UNAVAILABLE;
  if (cfg->idempotent != NULL) {
    p->has_idempotent_allowlist = true;
    p->idempotent_methods = cfg->idempotent;
    p->n_idempotent_methods = cfg->n_idempotent;
  }
}

/* Hands out len + 1 bytes of the arena (sized by measure()) holding a copy of s. The arena
 * never moves, so the pointers handed out stay valid for the life of the config; an empty
 * string points at a literal and takes no room. */
static const char *copy_string(load_ctx *c, const char *s, size_t len) {
  if (len == 0) return "";
  retry_config *cfg = c->cfg;
  assert(c->strings_used + len + 1 <= cfg->strings_size);
  char *dst = cfg->strings + c->strings_used;
  memcpy(dst, s, len);
  dst[len] = '\0';
  c->strings_used += len + 1;
  return dst;
}

/* "/service/Method": a leading '/', then two non-empty parts without '/'. That is the form a
 * call's method name takes on the wire (HTTP/2 :path), and the form retry_call_opts.method
 * is compared with, byte for byte. */
static bool is_full_method_name(const char *s) {
  if (s[0] != '/') return false;
  const char *slash = strchr(s + 1, '/');
  return slash != NULL && slash > s + 1 && slash[1] != '\0' && strchr(slash + 1, '/') == NULL;
}

/* "idempotentMethods": copied into the config, which every policy then points at. Repeated
 * names are harmless and kept. */
static bool parse_idempotent(load_ctx *c, json_t *list) {
  retry_config *cfg = c->cfg;
  static const char what[] = "an array of full method names such as \"/pkg.Service/Method\"";
  if (!json_is_array(list)) {
    fail_value(c, "idempotentMethods", what, list);
    return false;
  }
  for (size_t i = 0; i < json_array_size(list); i++) {
    json_t *item = json_array_get(list, i);
    if (!json_is_string(item) || !is_full_method_name(json_string_value(item))) {
      size_t mark = path_push_index(c, i);
      fail_value(c, "idempotentMethods entries", "full method names \"/pkg.Service/Method\"",
                 item);
      path_pop(c, mark);
      return false;
    }
    cfg->idempotent[cfg->n_idempotent++] =
        copy_string(c, json_string_value(item), json_string_length(item));
  }
  return true;
}

/* "budget": {"type": ..., keys of that type}. Each type starts from the defaults of its
 * *_config_default function, so an omitted key means the documented default of the system
 * the budget imitates (AWS SDK, Finagle, Envoy). A key of another type is an unknown key. */
static bool parse_budget(load_ctx *c, json_t *b) {
  static const char *const aws_keys[] = {"type", "capacity", "retryCost", "timeoutCost",
                                         "noRetryIncrement"};
  static const char *const finagle_keys[] = {"type", "ttl", "minRetriesPerSec",
                                             "percentCanRetry"};
  static const char *const envoy_keys[] = {"type", "budgetPercent", "minRetryConcurrency"};
  static const char types[] = "one of \"aws\", \"finagle\", \"envoy\"";
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(b)) {
    fail_value(c, "budget", "an object with a \"type\"", b);
    return false;
  }
  json_t *type = field(b, "type");
  if (require(c, type == NULL ? 0 : 1, "type", types) < 0) return false;
  const char *s = json_is_string(type) ? json_string_value(type) : "";
  if (strcmp(s, "aws") == 0) {
    t->budget = RETRY_BUDGET_AWS;
    retry_aws_quota_config_default(&t->aws);
    return check_keys(c, b, aws_keys, N_OF(aws_keys)) &&
           get_int32(c, b, "capacity", 1, INT32_MAX, "an integer > 0", &t->aws.capacity) >= 0 &&
           get_int32(c, b, "retryCost", 1, INT32_MAX, "an integer > 0", &t->aws.retry_cost) >= 0 &&
           get_int32(c, b, "timeoutCost", 1, INT32_MAX, "an integer > 0",
                     &t->aws.timeout_cost) >= 0 &&
           get_int32(c, b, "noRetryIncrement", 0, INT32_MAX, "an integer >= 0",
                     &t->aws.no_retry_increment) >= 0;
  }
  if (strcmp(s, "finagle") == 0) {
    t->budget = RETRY_BUDGET_FINAGLE;
    retry_finagle_budget_config_default(&t->finagle);
    return check_keys(c, b, finagle_keys, N_OF(finagle_keys)) &&
           get_duration(c, b, "ttl", RETRY_NS_PER_S, false, 60 * RETRY_NS_PER_S,
                        "a duration in [1s, 60s]", &t->finagle.ttl_ns) >= 0 &&
           get_int32(c, b, "minRetriesPerSec", 0, INT32_MAX, "an integer >= 0",
                     &t->finagle.min_retries_per_sec) >= 0 &&
           get_number(c, b, "percentCanRetry", 0, false, 1000, false, "a number in [0, 1000]",
                      &t->finagle.percent_can_retry) >= 0;
  }
  if (strcmp(s, "envoy") == 0) {
    t->budget = RETRY_BUDGET_ENVOY;
    retry_envoy_budget_config_default(&t->envoy);
    return check_keys(c, b, envoy_keys, N_OF(envoy_keys)) &&
           get_number(c, b, "budgetPercent", 0, false, 100, false, "a number in [0, 100]",
                      &t->envoy.budget_percent) >= 0 &&
           get_int32(c, b, "minRetryConcurrency", 0, INT32_MAX, "an integer >= 0",
                     &t->envoy.min_retry_concurrency) >= 0;
  }
  size_t mark = path_push_key(c, "type");
  fail_value(c, "type", types, type);
  path_pop(c, mark);
  return false;
}

/* "adaptiveThrottling": the SRE client-side throttle. {} turns it on with the defaults. */
static bool parse_adaptive(load_ctx *c, json_t *a) {
  static const char *const keys[] = {"k", "window", "padding", "rejectStatusCodes"};
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(a)) {
    fail_value(c, "adaptiveThrottling", "an object", a);
    return false;
  }
  t->has_adaptive = true;
  retry_adaptive_config_default(&t->adaptive);
  return check_keys(c, a, keys, N_OF(keys)) &&
         get_number(c, a, "k", 1, false, DBL_MAX, false, "a number >= 1", &t->adaptive.k) >= 0 &&
         get_duration(c, a, "window", 0, true, INT64_MAX, DUR_POS, &t->adaptive.window_ns) >= 0 &&
         get_number(c, a, "padding", 0, false, DBL_MAX, false, "a number >= 0",
                    &t->adaptive.padding) >= 0 &&
         get_status_list(c, a, "rejectStatusCodes", LIST_MIXED, true,
                         &t->adaptive.reject_statuses) >= 0;
}

/* "circuitBreaker": {"type": "consecutive"|"count"|"time", ...}, key names after
 * resilience4j's. The type decides which keys make sense; the rest start from
 * retry_breaker_config_default for that type. */
static bool parse_breaker(load_ctx *c, json_t *b) {
  static const char *const consecutive_keys[] = {"type", "failureThreshold",
                                                 "waitDurationInOpenState",
                                                 "permittedNumberOfCallsInHalfOpenState",
                                                 "failureStatusCodes"};
  static const char *const window_keys[] = {"type", "failureRateThreshold", "slidingWindowSize",
                                            "minimumNumberOfCalls", "waitDurationInOpenState",
                                            "permittedNumberOfCallsInHalfOpenState",
                                            "failureStatusCodes"};
  static const char types[] = "one of \"consecutive\", \"count\", \"time\"";
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(b)) {
    fail_value(c, "circuitBreaker", "an object with a \"type\"", b);
    return false;
  }
  json_t *type = field(b, "type");
  if (require(c, type == NULL ? 0 : 1, "type", types) < 0) return false;
  const char *s = json_is_string(type) ? json_string_value(type) : "";
  retry_breaker_kind kind;
  if (strcmp(s, "consecutive") == 0) kind = RETRY_BREAKER_CONSECUTIVE;
  else if (strcmp(s, "count") == 0) kind = RETRY_BREAKER_COUNT_WINDOW;
  else if (strcmp(s, "time") == 0) kind = RETRY_BREAKER_TIME_WINDOW;
  else {
    size_t mark = path_push_key(c, "type");
    fail_value(c, "type", types, type);
    path_pop(c, mark);
    return false;
  }
  /* A key of the other kind gets a precise message rather than "unknown key". */
  bool consecutive = kind == RETRY_BREAKER_CONSECUTIVE;
  const char *const *own = consecutive ? consecutive_keys : window_keys;
  const char *const *other = consecutive ? window_keys : consecutive_keys;
  size_t n_own = consecutive ? N_OF(consecutive_keys) : N_OF(window_keys);
  size_t n_other = consecutive ? N_OF(window_keys) : N_OF(consecutive_keys);
  for (void *it = json_object_iter(b); it != NULL; it = json_object_iter_next(b, it)) {
    const char *key = json_object_iter_key(it);
    if (key_in(key, own, n_own) || !key_in(key, other, n_other)) continue;
    size_t mark = path_push_key(c, key);
    fail(c, RETRY_ECONFIG, "%s applies to %s breakers only; this one is \"%s\"", key,
         consecutive ? "\"count\" and \"time\"" : "\"consecutive\"", s);
    path_pop(c, mark);
    return false;
  }
  if (!check_keys(c, b, own, n_own)) return false;
  t->has_breaker = true;
  retry_breaker_config_default(&t->breaker, kind);
  retry_breaker_config *bc = &t->breaker;
  return get_int32(c, b, "failureThreshold", 1, INT32_MAX, "an integer >= 1",
                   &bc->failure_threshold) >= 0 &&
         get_number(c, b, "failureRateThreshold", 0, true, 100, false, "a number in (0, 100]",
                    &bc->failure_rate_threshold) >= 0 &&
         get_int32(c, b, "slidingWindowSize", 1, INT32_MAX, "an integer >= 1",
                   &bc->window_size) >= 0 &&
         get_int32(c, b, "minimumNumberOfCalls", 1, INT32_MAX, "an integer >= 1",
                   &bc->minimum_calls) >= 0 &&
         get_duration(c, b, "waitDurationInOpenState", 0, true, INT64_MAX, DUR_POS,
                      &bc->open_duration_ns) >= 0 &&
         get_int32(c, b, "permittedNumberOfCallsInHalfOpenState", 1, INT32_MAX,
                   "an integer >= 1", &bc->half_open_calls) >= 0 &&
         get_status_list(c, b, "failureStatusCodes", LIST_MIXED, true,
                         &bc->failure_statuses) >= 0;
}

/* Calls parse(c, value) with the path at obj.key when the key is present (absent and null
 * are fine: every block this is used for is optional). */
static bool parse_sub(load_ctx *c, json_t *obj, const char *key,
                      bool (*parse)(load_ctx *c, json_t *v)) {
  json_t *v = field(obj, key);
  if (v == NULL) return true;
  size_t mark = path_push_key(c, key);
  bool ok = parse(c, v);
  path_pop(c, mark);
  return ok;
}

/* The top-level block: channel-wide settings and the default method options. Read before
 * methodConfig because its maxAttemptsLimit, idempotentMethods and statusSpace shape every
 * policy built there. */
static bool parse_top_ext(load_ctx *c, json_t *ext) {
  if (!json_is_object(ext)) {
    fail_value(c, "retrysim", "an object", ext);
    return false;
  }
  if (!check_keys(c, ext, top_keys, N_OF(top_keys)) || !parse_method_opts(c, ext, &c->top))
    return false;
  if (get_int32(c, ext, "maxAttemptsLimit", 1, 1000, "an integer in [1, 1000]",
                &c->cfg->max_attempts_limit) < 0)
    return false;
  return parse_sub(c, ext, "idempotentMethods", parse_idempotent) &&
         parse_sub(c, ext, "budget", parse_budget) &&
         parse_sub(c, ext, "adaptiveThrottling", parse_adaptive) &&
         parse_sub(c, ext, "circuitBreaker", parse_breaker);
}

/* A methodConfig entry's block: method options only. A channel-wide key here gets its own
 * message, since the key is right and only its place is wrong. */
static bool parse_entry_ext(load_ctx *c, json_t *ext, method_opts *mo) {
  if (!json_is_object(ext)) {
    fail_value(c, "retrysim", "an object", ext);
    return false;
  }
  for (void *it = json_object_iter(ext); it != NULL; it = json_object_iter_next(ext, it)) {
    const char *key = json_object_iter_key(it);
    if (key_in(key, method_keys, N_OF(method_keys))) continue;
    size_t mark = path_push_key(c, key);
    if (key_in(key, channel_keys, N_OF(channel_keys)))
      fail(c, RETRY_ECONFIG, "%s is channel-wide: set it in the top-level retrysim block", key);
    else
      fail_unknown_key(c, key, method_keys, N_OF(method_keys));
    path_pop(c, mark);
    return false;
  }
  return parse_method_opts(c, ext, mo);
}

/* }================================================================== */

/* {==================================================================
 * methodConfig
 * =================================================================== */

/* Reads an entry's name list into cfg->keys. The rules are gRPC's (service_config.md, A21):
 * each name is an object whose "service" and "method" are strings (or null / absent); a
 * method without a service is invalid, since it could never be looked up. Unknown keys in a
 * name object are ignored like any unknown standard field. Duplicates are found later, across
 * every entry, by sort_names(). */
static bool parse_names(load_ctx *c, json_t *names, size_t entry) {
  retry_config *cfg = c->cfg;
  if (!json_is_array(names)) {
    fail_value(c, "name", "an array of {\"service\": ..., \"method\": ...} objects", names);
    return false;
  }
  for (size_t j = 0; j < json_array_size(names); j++) {
    json_t *n = json_array_get(names, j);
    size_t mark = path_push_index(c, j);
    if (!json_is_object(n)) {
      fail_value(c, "name entries", "objects such as {\"service\": \"pkg.Service\"}", n);
      return false;
    }
    json_t *parts[2] = {field(n, "service"), field(n, "method")};
    static const char *const part_keys[2] = {"service", "method"};
    for (int k = 0; k < 2; k++) {
      if (parts[k] != NULL && !json_is_string(parts[k])) {
        path_push_key(c, part_keys[k]);
        fail_value(c, part_keys[k], "a string", parts[k]);
        return false;
      }
    }
    name_key *key = &cfg->keys[cfg->n_keys];
    key->service_len = parts[0] ? json_string_length(parts[0]) : 0;
    key->method_len = parts[1] ? json_string_length(parts[1]) : 0;
    if (key->method_len > 0 && key->service_len == 0) {
      char m[48];
      printable(m, sizeof m, json_string_value(parts[1]), 40);
      fail(c, RETRY_ECONFIG, "method \"%s\" needs a service: a name is {\"service\": s} or "
           "{\"service\": s, \"method\": m}", m);
      return false;
    }
    key->service = parts[0] ? copy_string(c, json_string_value(parts[0]), key->service_len) : "";
    key->method = parts[1] ? copy_string(c, json_string_value(parts[1]), key->method_len) : "";
    key->entry = entry;
    key->index = j;
    cfg->n_keys++;
    path_pop(c, mark);
  }
  return true;
}

/* Reads maxAttempts (> 1; clamped to the client limit without error, as gRPC does). */
static bool parse_max_attempts(load_ctx *c, json_t *obj, retry_policy *p) {
  json_int_t n = 0;
  if (require(c, get_int(c, obj, "maxAttempts", 2, JINT_MAX, "an integer > 1", &n),
              "maxAttempts", "an integer > 1") < 0)
    return false;
  retry_policy_set_max_attempts(p, n > INT32_MAX ? INT32_MAX : (int32_t)n,
                                c->cfg->max_attempts_limit);
  return true;
}

/* retryPolicy (A6): every field required. Fields of newer gRPC releases that we do not
 * model (perAttemptRecvTimeout) are ignored like any unknown field. Java and C-core allow an
 * empty retryableStatusCodes when perAttemptRecvTimeout is set; without that field modelled,
 * an empty list is always an error here. */
static bool parse_retry_policy(load_ctx *c, json_t *rp, retry_policy *p, list_space sp) {
  if (!json_is_object(rp)) {
    fail_value(c, "retryPolicy", "an object", rp);
    return false;
  }
  p->kind = RETRY_POLICY_RETRY;
  return parse_max_attempts(c, rp, p) &&
         require(c, get_duration(c, rp, "initialBackoff", 0, true, INT64_MAX, DUR_POS,
                                 &p->backoff.initial_ns),
                 "initialBackoff", DUR_POS) >= 0 &&
         require(c, get_duration(c, rp, "maxBackoff", 0, true, INT64_MAX, DUR_POS,
                                 &p->backoff.max_ns),
                 "maxBackoff", DUR_POS) >= 0 &&
         require(c, get_number(c, rp, "backoffMultiplier", 0, true, DBL_MAX, false,
                               "a number > 0", &p->backoff.multiplier),
                 "backoffMultiplier", "a number > 0") >= 0 &&
         require(c, get_status_list(c, rp, "retryableStatusCodes", sp, true, &p->retryable),
                 "retryableStatusCodes", "a non-empty array of status codes") >= 0;
}

/* hedgingPolicy (A6): maxAttempts required, hedgingDelay and nonFatalStatusCodes optional
 * (grpc-java insists on hedgingDelay; A6 does not). The engine tracks hedges in flight in a
 * 64-bit mask, so after the clamp at most 64 attempts fit; with gRPC's cap of 5 that limit
 * is only reachable once maxAttemptsLimit lifts the cap. */
static bool parse_hedging_policy(load_ctx *c, json_t *hp, retry_policy *p, list_space sp) {
  if (!json_is_object(hp)) {
    fail_value(c, "hedgingPolicy", "an object", hp);
    return false;
  }
  p->kind = RETRY_POLICY_HEDGE;
  if (!parse_max_attempts(c, hp, p)) return false;
  if (p->max_attempts > RETRY_MAX_HEDGED_ATTEMPTS) {
    size_t mark = path_push_key(c, "maxAttempts");
    fail(c, RETRY_ECONFIG, "hedging maxAttempts must be at most %d after the client limit, got %d",
         RETRY_MAX_HEDGED_ATTEMPTS, (int)p->max_attempts);
    path_pop(c, mark);
    return false;
  }
  p->hedging_delay_ns = 0; /* absent: send every hedge at once */
  return get_duration(c, hp, "hedgingDelay", 0, false, INT64_MAX, DUR_NONNEG,
                      &p->hedging_delay_ns) >= 0 &&
         get_status_list(c, hp, "nonFatalStatusCodes", sp, false, &p->retryable) >= 0;
}

/* Whether a path from retry_policy_validate names a field of retryPolicy / hedgingPolicy. */
static bool is_policy_field(const char *rel) {
  static const char *const fields[] = {"maxAttempts",          "initialBackoff",
                                       "maxBackoff",           "backoffMultiplier",
                                       "retryableStatusCodes", "hedgingDelay",
                                       "nonFatalStatusCodes"};
  return key_in(rel, fields, N_OF(fields));
}

/* Runs the engine's own checks and reports them under the entry's path. */
static bool validate_policy(load_ctx *c, const retry_policy *p) {
  retry_error ve;
  retry_error_clear(&ve);
  if (retry_policy_validate(p, &ve) == RETRY_OK) return true;
  size_t mark = c->path_len;
  if (ve.path[0] != '\0' && is_policy_field(ve.path))
    path_push_key(c, p->kind == RETRY_POLICY_HEDGE ? "hedgingPolicy" : "retryPolicy");
  if (ve.path[0] != '\0') path_push_key(c, ve.path);
  fail(c, ve.code != RETRY_OK ? ve.code : RETRY_ECONFIG, "%s",
       ve.message[0] ? ve.message : "invalid policy");
  path_pop(c, mark);
  return false;
}

/* One methodConfig entry, in a fixed order so the first error is predictable: names, the
 * entry's extension block (its statusSpace decides how status lists read), plain fields,
 * then the policy. An entry without names is read and validated all the same, as C-core does:
 * A21 makes any invalid known field fatal, wherever it sits; it just selects no method. */
static bool parse_entry(load_ctx *c, json_t *entry, size_t i) {
  retry_config *cfg = c->cfg;
  retry_method_config *mc = &cfg->methods[i];
  if (!json_is_object(entry)) {
    fail_value(c, "methodConfig entries", "objects", entry);
    return false;
  }
  json_t *names = field(entry, "name");
  if (names != NULL) {
    size_t mark = path_push_key(c, "name");
    if (!parse_names(c, names, i)) return false;
    path_pop(c, mark);
  }
  method_opts mo = c->top;
  json_t *ext = field(entry, "retrysim");
  if (ext != NULL) {
    method_opts own;
    memset(&own, 0, sizeof own);
    size_t mark = path_push_key(c, "retrysim");
    if (!parse_entry_ext(c, ext, &own)) return false;
    path_pop(c, mark);
    merge_opts(&mo, &own);
  }
  retry_space space = mo.has_space ? mo.space : RETRY_SPACE_GRPC;
  retry_policy_init(&mc->policy, space);
  mc->timeout_ns = RETRY_NEVER;
  mc->matched = true;
  bool b;
  json_int_t n;
  if (get_duration(c, entry, "timeout", 0, false, INT64_MAX, DUR_NONNEG, &mc->timeout_ns) < 0 ||
      get_bool(c, entry, "waitForReady", &b) < 0 ||
      get_int(c, entry, "maxRequestMessageBytes", 0, JINT_MAX, "an integer >= 0", &n) < 0 ||
      get_int(c, entry, "maxResponseMessageBytes", 0, JINT_MAX, "an integer >= 0", &n) < 0)
    return false;
  json_t *rp = field(entry, "retryPolicy"), *hp = field(entry, "hedgingPolicy");
  list_space sp = space == RETRY_SPACE_HTTP ? LIST_HTTP : LIST_GRPC;
  if (rp != NULL && hp != NULL) {
    size_t mark = path_push_key(c, "hedgingPolicy");
    fail(c, RETRY_ECONFIG, "retryPolicy and hedgingPolicy are exclusive: a methodConfig "
         "may have one of them, not both");
    path_pop(c, mark);
    return false;
  }
  if (rp != NULL || hp != NULL) {
    size_t mark = path_push_key(c, rp != NULL ? "retryPolicy" : "hedgingPolicy");
    bool ok = rp != NULL ? parse_retry_policy(c, rp, &mc->policy, sp)
                         : parse_hedging_policy(c, hp, &mc->policy, sp);
    if (!ok) return false;
    path_pop(c, mark);
  }
  apply_method_opts(cfg, &mc->policy, &mo);
  return validate_policy(c, &mc->policy);
}

/* Orders names by (service, method), then by position in the document. The tie-break makes
 * the order total, so qsort's instability cannot change which duplicate is reported. */
static int cmp_part(const char *a, size_t a_len, const char *b, size_t b_len) {
  size_t n = a_len < b_len ? a_len : b_len;
  int r = n > 0 ? memcmp(a, b, n) : 0;
  if (r != 0) return r;
  return a_len < b_len ? -1 : a_len > b_len;
}

static int cmp_key(const void *pa, const void *pb) {
  const name_key *a = pa, *b = pb;
  int r = cmp_part(a->service, a->service_len, b->service, b->service_len);
  if (r == 0) r = cmp_part(a->method, a->method_len, b->method, b->method_len);
  if (r == 0) r = a->entry != b->entry ? (a->entry < b->entry ? -1 : 1)
                                       : (a->index < b->index ? -1 : a->index > b->index);
  return r;
}

static bool same_name(const name_key *a, const name_key *b) {
  return cmp_part(a->service, a->service_len, b->service, b->service_len) == 0 &&
         cmp_part(a->method, a->method_len, b->method, b->method_len) == 0;
}

/* Sorts the names and rejects duplicates, reporting the one that comes first in the document
 * among those that repeat an earlier name. */
static bool sort_names(load_ctx *c) {
  retry_config *cfg = c->cfg;
  if (cfg->n_keys == 0) return true;
  qsort(cfg->keys, cfg->n_keys, sizeof cfg->keys[0], cmp_key);
  const name_key *dup = NULL, *first = NULL, *group = &cfg->keys[0];
  for (size_t k = 1; k < cfg->n_keys; k++) {
    const name_key *cur = &cfg->keys[k];
    if (!same_name(cur, group)) {
      group = cur;
      continue;
    }
    bool earlier = dup == NULL || cur->entry < dup->entry ||
                   (cur->entry == dup->entry && cur->index < dup->index);
    if (earlier) {
      dup = cur;
      first = group;
    }
  }
  if (dup == NULL) return true;
  snprintf(c->path, sizeof c->path, "$.methodConfig[%zu].name[%zu]", dup->entry, dup->index);
  c->path_len = strlen(c->path);
  char svc[48], m[48];
  printable(svc, sizeof svc, dup->service, 40);
  printable(m, sizeof m, dup->method, 40);
  if (dup->service_len == 0)
    fail(c, RETRY_ECONFIG, "duplicate default name, first at $.methodConfig[%zu].name[%zu]; "
         "only one default is allowed", first->entry, first->index);
  else if (dup->method_len == 0)
    fail(c, RETRY_ECONFIG, "duplicate name for service \"%s\", first at $.methodConfig[%zu]"
         ".name[%zu]; a name may appear once", svc, first->entry, first->index);
  else
    fail(c, RETRY_ECONFIG, "duplicate name \"/%s/%s\", first at $.methodConfig[%zu].name[%zu]; "
         "a name may appear once", svc, m, first->entry, first->index);
  return false;
}

/* "methodConfig": entry i of the array fills cfg->methods[i]. */
static bool parse_method_configs(load_ctx *c, json_t *list) {
  if (!json_is_array(list)) {
    fail_value(c, "methodConfig", "an array of objects", list);
    return false;
  }
  for (size_t i = 0; i < json_array_size(list); i++) {
    json_t *entry = json_array_get(list, i);
    size_t mark = path_push_index(c, i);
    if (!parse_entry(c, entry, i)) return false;
    path_pop(c, mark);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * retryThrottling
 * =================================================================== */

/* retryThrottling (A6): both fields required. maxTokens must be an integer as A6 and C-core
 * say (grpc-go also takes 4.5, grpc-java anything > 0). */
static bool parse_throttling(load_ctx *c, json_t *rt) {
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(rt)) {
    fail_value(c, "retryThrottling", "an object", rt);
    return false;
  }
  json_int_t max_tokens = 0;
  double ratio = 0;
  if (require(c, get_int(c, rt, "maxTokens", 1, 1000, "an integer in (0, 1000]", &max_tokens),
              "maxTokens", "an integer in (0, 1000]") < 0 ||
      require(c, get_number(c, rt, "tokenRatio", 0, true, DBL_MAX, false, "a number > 0",
                            &ratio),
              "tokenRatio", "a number > 0") < 0)
    return false;
  /* Three decimals are kept, the rest truncated (0.5466 -> 546), as grpc-java and C-core do.
   * The epsilon absorbs binary rounding: 1.001 * 1000 is 1000.9999999999999. A ratio above
   * 1e12 is as good as infinite for a bucket of at most 1e6 milli-tokens. */
  double milli = ratio > 1e12 ? 1e15 : ratio * 1000 + 1e-9;
  if (milli < 1) {
    size_t mark = path_push_key(c, "tokenRatio");
    char got[64];
    format_double(got, sizeof got, ratio);
    fail(c, RETRY_ECONFIG, "tokenRatio must be a number >= 0.001 (3 decimals are kept), got %s",
         got);
    path_pop(c, mark);
    return false;
  }
  t->has_throttle = true;
  t->throttle.max_milli_tokens = (int64_t)max_tokens * 1000;
  t->throttle.token_ratio_milli = (int64_t)milli;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Loading, lookup, destruction
 * =================================================================== */

/* What to allocate, counted on the raw tree before validation (wrong types count nothing).
 * Counting first gives every array its final size up front: no realloc while pointers into
 * the arrays are being handed out, and a handful of allocations per config whatever its size,
 * which keeps the chaos-allocator test short. */
typedef struct sizes {
  size_t n_entries;    /* methodConfig entries */
  size_t n_names;      /* name objects */
  size_t n_idempotent; /* idempotentMethods entries */
  bool has_idempotent; /* idempotentMethods present */
  size_t string_bytes; /* every string to copy, NULs included */
} sizes;

static size_t string_bytes(json_t *v) { return json_is_string(v) ? json_string_length(v) + 1 : 0; }

static void measure(json_t *root, sizes *s) {
  memset(s, 0, sizeof *s);
  json_t *list = field(root, "methodConfig");
  if (json_is_array(list)) {
    s->n_entries = json_array_size(list);
    for (size_t i = 0; i < json_array_size(list); i++) {
      json_t *entry = json_array_get(list, i);
      json_t *names = json_is_object(entry) ? field(entry, "name") : NULL;
      if (!json_is_array(names)) continue;
      for (size_t j = 0; j < json_array_size(names); j++) {
        json_t *n = json_array_get(names, j);
        if (!json_is_object(n)) continue;
        s->n_names++;
        s->string_bytes += string_bytes(field(n, "service")) + string_bytes(field(n, "method"));
      }
    }
  }
  json_t *ext = field(root, "retrysim");
  json_t *idem = json_is_object(ext) ? field(ext, "idempotentMethods") : NULL;
  if (json_is_array(idem)) {
    s->has_idempotent = true;
    s->n_idempotent = json_array_size(idem);
    for (size_t i = 0; i < json_array_size(idem); i++)
      s->string_bytes += string_bytes(json_array_get(idem, i));
  }
}

static const retry_allocator *config_alloc(const retry_config *cfg) {
  return cfg->has_alloc ? &cfg->alloc : NULL;
}

/* Allocates n elements of size bytes (NULL for n == 0, or on overflow / no memory). */
static void *alloc_array(const retry_config *cfg, size_t n, size_t size, bool *ok) {
  if (n == 0) return NULL;
  void *p = n > SIZE_MAX / size ? NULL : retry__malloc(config_alloc(cfg), n * size);
  if (p == NULL) *ok = false;
  return p;
}

void retry_config_destroy(retry_config *cfg) {
  if (cfg == NULL) return;
  retry_allocator a = cfg->alloc;
  const retry_allocator *ap = cfg->has_alloc ? &a : NULL;
  retry__free(ap, cfg->methods);
  retry__free(ap, cfg->keys);
  retry__free(ap, (void *)cfg->idempotent);
  retry__free(ap, cfg->strings);
  retry__free(ap, cfg);
}

/* Builds a config from a parsed document. Returns a new config, or NULL with err set.
 * Errors are collected in the context's own retry_error and copied to err once at the end,
 * so a NULL err needs no special case and a partly built config is always freed. */
static retry_config *load_root(json_t *root, const char *source, const retry_config_opts *opts,
                               retry_error *err) {
  const retry_allocator *alloc = opts != NULL ? opts->alloc : NULL;
  load_ctx c;
  memset(&c, 0, sizeof c);
  retry_error_clear(&c.e);
  c.source = source;
  snprintf(c.path, sizeof c.path, "$");
  c.path_len = 1;
  if (!json_is_object(root)) {
    fail_value(&c, "a service config", "a JSON object", root);
    retry__error_set(err, c.e.code, source, c.e.path, -1, -1, "%s", c.e.message);
    return NULL;
  }
  retry_config *cfg = retry__malloc(alloc, sizeof *cfg);
  if (cfg == NULL) {
    retry__error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the config");
    return NULL;
  }
  memset(cfg, 0, sizeof *cfg);
  if (alloc != NULL) {
    cfg->alloc = *alloc;
    cfg->has_alloc = true;
  }
  c.cfg = cfg;
  sizes sz;
  measure(root, &sz);
  bool ok = true;
  cfg->methods = alloc_array(cfg, sz.n_entries, sizeof cfg->methods[0], &ok);
  cfg->n_methods = sz.n_entries;
  cfg->keys = alloc_array(cfg, sz.n_names, sizeof cfg->keys[0], &ok);
  /* Never NULL when present, even empty: an allowlist that allows nothing. */
  cfg->idempotent = sz.has_idempotent
                        ? alloc_array(cfg, sz.n_idempotent + 1, sizeof cfg->idempotent[0], &ok)
                        : NULL;
  cfg->strings = alloc_array(cfg, sz.string_bytes, 1, &ok);
  cfg->strings_size = sz.string_bytes;
  if (!ok) {
    retry_config_destroy(cfg);
    retry__error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the config");
    return NULL;
  }
  int32_t limit = opts != NULL ? opts->max_attempts_limit : 0;
  cfg->max_attempts_limit = limit == 0 ? RETRY_GRPC_MAX_ATTEMPTS_LIMIT : limit;
  retry_target_config_init(&cfg->target);

  /* The extension first: its limit, allowlist and status space shape every methodConfig. */
  if (!parse_sub(&c, root, "retrysim", parse_top_ext) ||
      !parse_sub(&c, root, "methodConfig", parse_method_configs) ||
      !parse_sub(&c, root, "retryThrottling", parse_throttling) || !sort_names(&c)) {
    retry__error_set(err, c.e.code, c.e.source, c.e.path, -1, -1, "%s", c.e.message);
    retry_config_destroy(cfg);
    return NULL;
  }
  retry_method_config *um = &cfg->unmatched;
  retry_policy_init(&um->policy, c.top.has_space ? c.top.space : RETRY_SPACE_GRPC);
  apply_method_opts(cfg, &um->policy, &c.top);
  um->timeout_ns = RETRY_NEVER;
  um->matched = false;
  return cfg;
}

/* Parser flags: duplicate keys are an error (which value would win is up to each gRPC
 * implementation: Go and Java keep the last, C-core rejects the document); any top-level
 * value is parsed so that a non-object gets our own message with a path. JSON_ALLOW_NUL is
 * not set, so every string is a proper C string. */
#define JSON_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

/* Jansson reports most allocation failures as json_error_out_of_memory, but a failure in its
 * lexer's set-up returns NULL with the error left as initialised (empty text). */
static void report_json_error(retry_error *err, const char *source, const json_error_t *je) {
  if (je->text[0] == '\0' || json_error_code(je) == json_error_out_of_memory) {
    retry__error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory parsing JSON");
    return;
  }
  /* Jansson's own text names a flag of its API, which means nothing to a user. */
  const char *text = json_error_code(je) == json_error_null_character
                         ? "\\u0000 is not allowed in strings"
                         : je->text;
  retry__error_set(err, RETRY_ESYNTAX, source, "", je->line > 0 ? je->line : -1,
                   je->line > 0 ? je->column : -1, "invalid JSON: %s", text);
}

retry_config *retry_config_load_string(const char *json, const char *source,
                                       const retry_config_opts *opts, retry_error *err) {
  assert(json != NULL);
  if (source == NULL) source = "<string>";
  json_error_t je;
  memset(&je, 0, sizeof je); /* jansson leaves parts of it unset on some failures */
  json_t *root = json_loads(json, JSON_FLAGS, &je);
  if (root == NULL) {
    report_json_error(err, source, &je);
    return NULL;
  }
  retry_config *cfg = load_root(root, source, opts, err);
  json_decref(root);
  return cfg;
}

/* Reads a whole file into a buffer from the config's allocator. Returns 0, or an error code
 * with err set. A directory or a read error is RETRY_EIO, like a missing file. We read the
 * file ourselves rather than call json_load_file: jansson would report a directory or a
 * failed read as a syntax error at line 1, and its buffer would bypass our allocator. */
static int read_file(const char *path, const retry_allocator *a, char **out, size_t *out_len,
                     retry_error *err) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    retry__error_set(err, RETRY_EIO, path, "", -1, -1, "cannot open the file: %s",
                     strerror(errno));
    return RETRY_EIO;
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      size_t ncap = cap == 0 ? 4096 : cap * 2;
      char *nbuf = ncap < cap ? NULL : retry__realloc(a, buf, ncap);
      if (nbuf == NULL) {
        retry__free(a, buf);
        fclose(f);
        retry__error_set(err, RETRY_ENOMEM, path, "", -1, -1, "out of memory reading the file");
        return RETRY_ENOMEM;
      }
      buf = nbuf;
      cap = ncap;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got > 0) continue;
    if (ferror(f)) {
      int e = errno;
      retry__free(a, buf);
      fclose(f);
      retry__error_set(err, RETRY_EIO, path, "", -1, -1, "cannot read the file: %s",
                       strerror(e));
      return RETRY_EIO;
    }
    break;
  }
  fclose(f);
  *out = buf;
  *out_len = len;
  return RETRY_OK;
}

retry_config *retry_config_load_file(const char *path, const retry_config_opts *opts,
                                     retry_error *err) {
  assert(path != NULL);
  const retry_allocator *alloc = opts != NULL ? opts->alloc : NULL;
  char *buf = NULL;
  size_t len = 0;
  if (read_file(path, alloc, &buf, &len, err) != RETRY_OK) return NULL;
  json_error_t je;
  memset(&je, 0, sizeof je); /* jansson leaves parts of it unset on some failures */
  json_t *root = json_loadb(buf, len, JSON_FLAGS, &je);
  retry__free(alloc, buf);
  if (root == NULL) {
    report_json_error(err, path, &je);
    return NULL;
  }
  retry_config *cfg = load_root(root, path, opts, err);
  json_decref(root);
  return cfg;
}

/* Bisects the sorted names for an exact (service, method). O(log n) and no allocation: this
 * runs once per call. The names are length-delimited, so the caller's method string is
 * compared in place without being split into copies. */
static const retry_method_config *find(const retry_config *cfg, const char *svc, size_t svc_len,
                                       const char *m, size_t m_len) {
  size_t lo = 0, hi = cfg->n_keys;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const name_key *k = &cfg->keys[mid];
    int r = cmp_part(k->service, k->service_len, svc, svc_len);
    if (r == 0) r = cmp_part(k->method, k->method_len, m, m_len);
    if (r == 0) return &cfg->methods[k->entry];
    if (r < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* "/svc/m" splits at its last '/', as grpc-go does; a name without one matches only the
 * default. NULL (a call without a method name) also gets the default. Precedence is gRPC's:
 * the exact name, then the service-wide name, then the default, then the unmatched config
 * (kind NONE), which keeps the answer non-NULL so callers need no branch. */
const retry_method_config *retry_config_lookup(const retry_config *cfg, const char *method) {
  assert(cfg != NULL);
  const retry_method_config *mc = NULL;
  if (method != NULL) {
    const char *s = method[0] == '/' ? method + 1 : method;
    const char *slash = strrchr(s, '/');
    if (slash != NULL && slash > s) {
      size_t svc_len = (size_t)(slash - s), m_len = strlen(slash + 1);
      if (m_len > 0) mc = find(cfg, s, svc_len, slash + 1, m_len);
      if (mc == NULL) mc = find(cfg, s, svc_len, "", 0);
    }
  }
  if (mc == NULL) mc = find(cfg, "", 0, "", 0);
  return mc != NULL ? mc : &cfg->unmatched;
}

const retry_target_config *retry_config_target(const retry_config *cfg) {
  assert(cfg != NULL);
  return &cfg->target;
}

/* }================================================================== */
