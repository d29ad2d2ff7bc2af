/*
 * retry_json.h: libretry's auxiliary API for loading JSON documents with precise errors.
 *
 * It stands beside retry.h the way lauxlib.h stands beside lua.h: nothing in the engine needs
 * it, but every loader of a JSON document built on libretry (the service config loader, the
 * simulator's scenario loader) walks its tree with it, so all of them locate an error the same
 * way (source, JSON path "$.a.b[2].c") and word it the same way ("\"key\" must be WHAT, got V").
 * Needs libc and jansson only. Not thread-safe per context; contexts share nothing.
 */
#ifndef RETRY_JSON_H
#define RETRY_JSON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "retry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* {==================================================================
 * First error wins
 * =================================================================== */

/* Sets e (first error wins) from a failed jansson parse of source: RETRY_ENOMEM "out of memory
 * parsing JSON" when jansson ran out of memory (or left je's text empty, as a failure in its
 * lexer's set-up does), else RETRY_ESYNTAX "invalid JSON: <jansson's text>" with je's line and
 * column (-1 when jansson has none). The text is made printable, and jansson's text for a NUL,
 * which names a flag of its API, becomes "\u0000 is not allowed in strings". No pointer kept. */
void retry_json_error_syntax(retry_error *e, const char *source, const json_error_t *je);

/* }================================================================== */

/* {==================================================================
 * The load context
 * =================================================================== */

/* The state of one load, in the caller's storage (usually the stack). A loader that needs more
 * state embeds it as its first member ({retry_json_ctx j; ...}) and passes &ctx->j: one object,
 * one lifetime, nothing to point at that could outlive it.
 * Invariants: path is NUL-terminated and path_len == strlen(path); every push is undone by a pop
 * with its mark, except on the way out after a failure, when the path is dead (the error holds a
 * copy). Once e.code is set nothing else is validated: every getter returns -1 straight up and
 * every fail is a no-op. */
typedef struct retry_json_ctx {
  /* public */
  const char *source; /* file name or "<string>", named by every error; borrowed */
  const char *prefix; /* put before every message ("in variant \"x\": "), NULL: none; borrowed */
  retry_error e;      /* the first error; e.code != RETRY_OK once loading failed */
  /* read-only: use the path functions below */
  char path[512]; /* JSON path of the value being read, "$.methodConfig[0]" */
  size_t path_len;
} retry_json_ctx;

/* Starts c at path "$" with no error (line and column -1). source is borrowed and may be NULL
 * (""); prefix starts NULL. */
void retry_json_ctx_init(retry_json_ctx *c, const char *source);

/* Whether an error was recorded in c. */
bool retry_json_failed(const retry_json_ctx *c);

/* Records an error at the current path, line and column -1: code (RETRY_ECONFIG for bad input)
 * and a printf-style message, after c->prefix. The first error wins; the message is cut to
 * retry_error.message. Allocates nothing. */
void retry_json_fail(retry_json_ctx *c, int code, const char *fmt, ...) RETRY_PRINTF(3, 4);

/* Takes over an error from another load (a document included by this one) as it is: its
 * source, path, line and column, its message after c->prefix, its code (RETRY_ECONFIG when it
 * has none). The first error wins. */
void retry_json_fail_error(retry_json_ctx *c, const retry_error *e);

/* "<label> must be <what>, got <v>" at the current path, v as retry_json_describe shows it.
 * label is used as given: a key comes quoted (retry_json_quote), prose ("each point") not. */
void retry_json_fail_value(retry_json_ctx *c, const char *label, const char *what, const json_t *v);

/* "\"<key>\" must be <what>, got <obj[key]>" at the current path plus key: for a rule between
 * two fields that the getters cannot check alone ("end" must be after "start"). Returns -1,
 * so that a getter-like caller can return it. */
int retry_json_fail_field(retry_json_ctx *c, json_t *obj, const char *key, const char *what);

/* An unknown key at the current path (the caller pushed it): `unknown key "k"; allowed: a, b`,
 * or with where ("a \"fail\" fault") `key "k" is not allowed in <where>; allowed: a, b`. When
 * that does not fit in a message, `key not one of: a, b` (the path names the key); when that
 * does not fit either, the first form with the list cut at a key and ended with ", ...". The
 * key is shown printable and cut at 32 bytes. where may be NULL. */
void retry_json_fail_unknown_key(retry_json_ctx *c, const char *key, const char *const *allowed,
                                 size_t n_allowed, const char *where);

/* }================================================================== */

/* {==================================================================
 * JSON paths
 *
 * Each push returns a mark to give back to retry_json_path_pop, which restores the path as it
 * was before the push; marks nest like the pushes. A path that does not fit is cut, never
 * overflowed (the walk keeps its place: pops restore it exactly).
 * =================================================================== */

/* Appends ".key", or ["key"] when key is not a C identifier, with '"' and '\\' escaped and
 * control bytes shown as '?'. Returns the mark. */
size_t retry_json_path_push_key(retry_json_ctx *c, const char *key);
/* Appends "[i]". Returns the mark. */
size_t retry_json_path_push_index(retry_json_ctx *c, size_t i);
/* Appends text as it is (a path in the same notation, such as another document's without its
 * "$"). Returns the mark. */
size_t retry_json_path_push_raw(retry_json_ctx *c, const char *text);
/* Cuts the path back to mark, a value returned by a push on c (or c->path_len). */
void retry_json_path_pop(retry_json_ctx *c, size_t mark);

/* }================================================================== */

/* {==================================================================
 * Text for messages
 * =================================================================== */

/* Copies at most max bytes of s into buf[size] as printable text: control bytes become '?',
 * a cut never splits a UTF-8 sequence, and "..." is appended when s was cut. Messages end up in
 * terminals and the text comes from the input. buf is always NUL-terminated (size > 0). */
void retry_json_printable(char *buf, size_t size, const char *s, size_t max);
/* "\"key\"" into buf[size], the key printable and cut at 40 bytes: how messages name a key. */
void retry_json_quote(char *buf, size_t size, const char *key);
/* v for "got ..." into buf[size]: scalars as written (strings quoted and cut at 40 bytes,
 * reals with the fewest digits that read back, integral ones with ".0"), containers by kind
 * ("an object", "an array"; empty ones as {} and []), so a message never grows with the input. */
void retry_json_describe(const json_t *v, char *buf, size_t size);

/* }================================================================== */

/* {==================================================================
 * Keys and fields
 * =================================================================== */

/* Whether key is one of list[0..n). */
bool retry_json_key_in(const char *key, const char *const *list, size_t n);
/* Fails (retry_json_fail_unknown_key, where as there) on the first key of obj, in document
 * order, that is not in allowed[0..n). Returns true when every key is allowed. */
bool retry_json_check_keys(retry_json_ctx *c, json_t *obj, const char *const *allowed, size_t n,
                           const char *where);
/* The name among names[0..n) that key most likely misspells, NULL when none is close. A name
 * equal to key but for ASCII case wins (and sets *case_only, which may be NULL); else the
 * name at the smallest edit distance (Levenshtein, case ignored), when that distance is at
 * most a third of the longer of the two (at least 1). Ties go to the earlier name. Keys or
 * names longer than 64 bytes are only compared for case. Allocates nothing. */
const char *retry_json_suggest(const char *key, const char *const *names, size_t n,
                               bool *case_only);
/* obj[key], NULL when obj has no such key or its value is JSON null (proto3 JSON reads null as
 * "not set"). obj must be an object. Returns a borrowed pointer valid while obj lives. */
json_t *retry_json_field(json_t *obj, const char *key);
/* Passes a getter's result rc through, turning 0 (absent) into `"key" is required: what` at
 * the key's path. Used as retry_json_require(c, retry_json_get_x(c, obj, key, ...), key, what).
 * Returns rc, or -1 after recording that error. */
int retry_json_require(retry_json_ctx *c, int rc, const char *key, const char *what);

/* }================================================================== */

/* {==================================================================
 * Typed getters
 *
 * Each reads obj[key] (obj an object) and returns 1 with *out set when the value is present and
 * valid, 0 when it is absent or null (*out untouched: preset it with the default), -1 after
 * recording `"key" must be <what>, got <v>` at the key's path (*out untouched). what says what
 * is allowed ("an integer >= 0"). A failed context returns -1 without looking.
 * =================================================================== */

/* true or false; nothing else (1, "true") passes. */
int retry_json_get_bool(retry_json_ctx *c, json_t *obj, const char *key, bool *out);
/* A JSON integer (a real such as 2.0 is refused) in [lo, hi]. */
int retry_json_get_int(retry_json_ctx *c, json_t *obj, const char *key, int64_t lo, int64_t hi,
                       const char *what, int64_t *out);
/* An integer in [lo, hi] into an int32_t. When hi is INT32_MAX, the end of the type rather than
 * a rule of the document, a larger value gets `"key" must be at most 2147483647, got v`. */
int retry_json_get_int32(retry_json_ctx *c, json_t *obj, const char *key, int32_t lo, int32_t hi,
                         const char *what, int32_t *out);
/* A JSON number (integer or real) in lo..hi, each end open (excluded) or closed. */
int retry_json_get_number(retry_json_ctx *c, json_t *obj, const char *key, double lo, bool lo_open,
                          double hi, bool hi_open, const char *what, double *out);
/* Any JSON string, "" included. *out is borrowed from the document. */
int retry_json_get_string(retry_json_ctx *c, json_t *obj, const char *key, const char **out);
/* A string equal (case included) to one of names[0..n); *out receives its index. The message
 * lists the names: "a", "b" or "c". */
int retry_json_get_enum(retry_json_ctx *c, json_t *obj, const char *key, const char *const *names,
                        size_t n, int *out);
/* A proto3 Duration string ("0.1s", retry_duration_parse) in lo..hi nanoseconds, lo open or
 * closed, hi closed. A JSON number is refused: proto3 JSON writes durations as strings. A valid
 * duration beyond int64 nanoseconds gets `"key" is out of range: at most about 292 years`. */
int retry_json_get_duration(retry_json_ctx *c, json_t *obj, const char *key, int64_t lo,
                            bool lo_open, int64_t hi, const char *what, int64_t *out);

/* }================================================================== */

/* {==================================================================
 * Reading a document
 * =================================================================== */

/* The largest file retry_json_read_file reads: 64 MiB, far above any config or scenario (the
 * largest in the tests are a few KiB) and far below what would exhaust memory. */
#define RETRY_JSON_MAX_FILE_BYTES (64 * 1024 * 1024)

/* Reads the whole file at path into a new buffer from a (NULL: libc's), not NUL-terminated:
 * *out and *out_len receive it (an empty file gives a buffer of length 0). Only a regular file
 * of at most RETRY_JSON_MAX_FILE_BYTES is read: a directory, a device (/dev/zero), a FIFO or a
 * socket is refused without reading (a FIFO without a writer does not block), and so is a
 * larger file. Returns 0, or RETRY_EIO (the file cannot be opened or read, is not a regular
 * file or is too large: the message says which, with strerror where the system said why) or
 * RETRY_ENOMEM, with err set (first error wins; source = path, its end kept when long). Free
 * *out with a's free (or free() when a is NULL). */
int retry_json_read_file(const char *path, const retry_allocator *a, char **out, size_t *out_len,
                         retry_error *err);

/* }================================================================== */

#ifdef __cplusplus
}
#endif

#endif /* RETRY_JSON_H */
