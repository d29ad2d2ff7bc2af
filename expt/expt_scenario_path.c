/*
 * expt_scenario_path.c: the PATH syntax shared by --set, a variant's "set" and "expect":
 * "services.api.workers", "clients.web.policy.methodConfig[0].retryPolicy.maxAttempts",
 * "services[\"db.v2\"].workers", "amplification.edges[to=db].amplification".
 *
 * Parsing allocates nothing: a path is walked one segment at a time, each segment decoded
 * into a fixed buffer. Setting validates the whole path before it changes anything.
 */
#include "expt/expt_scenario_int.h"

#include <stdio.h>
#include <string.h>

#include "expt/expt_json.h"

/* Grammar (no blanks anywhere):
 *   path    := ["$" ("." | &"[")] first rest*
 *   first   := key | bracket
 *   rest    := "." key | bracket
 *   key     := one or more bytes other than '.', '[', ']'
 *   bracket := "[" index "]" | "[\"" quoted "\"]" | "[" member "=" value "]"
 *   index   := "0" | [1-9][0-9]*
 * The leading "$" lets a path be pasted from an error message ("$.services.api.workers").
 * The quoted form is needed for names holding a '.', which names may ("db.v2"); inside it, \"
 * and \\ stand for '"' and '\'. The member=value selector picks the first element of an array
 * that is an object whose member equals value; only expectations use it, since the summary's
 * arrays are lists of records, whereas a scenario's arrays are addressed by position. */

/* Longest key or selector text, NUL included. Names stop at 63 bytes, but a path may address
 * any key of the document, a policy's included; 255 is generous and keeps a segment on the
 * stack. */
#define SEG_TEXT_MAX 256

/* A member of an object, an element by position, or the first element whose member matches
 * (expectations only). */
typedef enum seg_kind { SEG_KEY, SEG_INDEX, SEG_MATCH } seg_kind;

/* One segment, decoded into fixed buffers so parsing allocates nothing. */
typedef struct seg {
  seg_kind kind;            /* which of the fields below is meaningful */
  char key[SEG_TEXT_MAX];   /* SEG_KEY: the key; SEG_MATCH: the member compared */
  size_t index;             /* SEG_INDEX */
  char value[SEG_TEXT_MAX]; /* SEG_MATCH: the value it must equal, as a string */
} seg;

/* Reasons go to the caller's retry_error (RETRY_EINVAL, the reason alone: no source, no path),
 * which may be NULL when only the verdict is wanted; the first reason wins. Callers quote the
 * path themselves, so the message is only what is wrong with it. */
static void path_fail(retry_error *err, const char *reason) {
  retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "%s", reason);
}

/* Reads a bracket segment; *pp is just past '['. Returns 1 with *pp past ']', or -1 with a
 * reason. Indexes refuse leading zeros ("[01]") so that one element has one spelling, and stop at
 * SIZE_MAX rather than wrap. */
static int read_bracket(const char **pp, bool allow_match, seg *s, retry_error *err) {
  const char *p = *pp;
  if (*p >= '0' && *p <= '9') {
    if (*p == '0' && p[1] >= '0' && p[1] <= '9') {
      path_fail(err, "an index has a leading zero");
      return -1;
    }
    size_t idx = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
      /* Checked before the multiply, so idx * 10 + 9 can never wrap. */
      if (idx > (SIZE_MAX - 9) / 10) {
        path_fail(err, "an index is too large");
        return -1;
      }
      idx = idx * 10 + (size_t)(*p - '0');
    }
    if (*p != ']') {
      path_fail(err, "an index must be digits followed by ']'");
      return -1;
    }
    s->kind = SEG_INDEX;
    s->index = idx;
    *pp = p + 1;
    return 1;
  }
  if (*p == '"') {
    size_t n = 0;
    for (p++; *p != '"'; p++) {
      if (*p == '\0') {
        path_fail(err, "a quoted key has no closing quote");
        return -1;
      }
      /* Only \" and \\ are escapes; a backslash before anything else is an ordinary byte. */
      if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
      if (n + 1 >= SEG_TEXT_MAX) {
        path_fail(err, "a key is longer than 255 bytes");
        return -1;
      }
      s->key[n++] = *p;
    }
    s->key[n] = '\0';
    if (p[1] != ']') {
      path_fail(err, "a quoted key must be followed by ']'");
      return -1;
    }
    s->kind = SEG_KEY;
    *pp = p + 2;
    return 1;
  }
  if (!allow_match) {
    path_fail(err, "expected an index [0] or a quoted key [\"name\"] after '['");
    return -1;
  }
  /* member=value: the member runs to '=', the value to the next ']'. A value may therefore
   * hold '.', '=' and '[' ("[to=db.v2]"), but never ']'. */
  const char *eq = p;
  while (*eq != '\0' && *eq != '=' && *eq != ']' && *eq != '[')
    eq++;
  const char *close = eq;
  while (*close != '\0' && *close != ']')
    close++;
  if (*eq != '=' || eq == p || *close != ']') {
    path_fail(err, "expected [index], [\"key\"] or [member=value] after '['");
    return -1;
  }
  size_t klen = (size_t)(eq - p), vlen = (size_t)(close - eq - 1);
  if (klen >= SEG_TEXT_MAX || vlen >= SEG_TEXT_MAX) {
    path_fail(err, "a selector is longer than 255 bytes");
    return -1;
  }
  memcpy(s->key, p, klen);
  s->key[klen] = '\0';
  memcpy(s->value, eq + 1, vlen);
  s->value[vlen] = '\0';
  s->kind = SEG_MATCH;
  *pp = close + 1;
  return 1;
}

/* Reads the next segment at *pp. Returns 1 and advances *pp, 0 at the end of the path, -1
 * with a reason in err. */
static int next_seg(const char **pp, bool first, bool allow_match, seg *s, retry_error *err) {
  const char *p = *pp;
  if (*p == '\0') return 0;
  if (*p == '[') {
    *pp = p + 1;
    return read_bracket(pp, allow_match, s, err);
  }
  /* Only the first segment goes without a separator; after it a key needs its '.'. */
  if (!first) {
    if (*p != '.') {
      path_fail(err, "expected '.' or '[' after a segment");
      return -1;
    }
    p++;
  }
  size_t n = 0;
  for (; *p != '\0' && *p != '.' && *p != '[' && *p != ']'; p++) {
    if (n + 1 >= SEG_TEXT_MAX) {
      path_fail(err, "a key is longer than 255 bytes");
      return -1;
    }
    s->key[n++] = *p;
  }
  if (n == 0) {
    path_fail(err, *p == ']' ? "unexpected ']'" : "a key is empty");
    return -1;
  }
  /* A ']' outside a bracket is a typo or half of a broken bracket, never part of a key. */
  if (*p == ']') {
    path_fail(err, "unexpected ']'");
    return -1;
  }
  s->key[n] = '\0';
  s->kind = SEG_KEY;
  *pp = p;
  return 1;
}

/* Skips the optional "$" prefix. Returns the start of the first segment, or NULL (with err)
 * when the path is empty. */
static const char *path_start(const char *path, retry_error *err) {
  const char *p = path;
  if (p[0] == '$') {
    if (p[1] == '.')
      p += 2;
    else if (p[1] == '[' || p[1] == '\0')
      p += 1;
    else
      p = path; /* "$x" is a key that starts with '$' */
  }
  if (*p == '\0') {
    path_fail(err, "the path is empty");
    return NULL;
  }
  return p;
}

/* The syntax alone: every segment must decode. */
int expt__scenario_path_check(const char *path, bool allow_match, retry_error *err) {
  const char *p = path_start(path, err);
  if (p == NULL) return RETRY_EINVAL;
  seg s;
  int rc;
  /* The loop has no body: next_seg decodes and advances. rc == 0 means the whole path
   * decoded; -1 left its reason in err. */
  for (bool first = true; (rc = next_seg(&p, first, allow_match, &s, err)) == 1;
       first = false) {
  }
  return rc == 0 ? RETRY_OK : RETRY_EINVAL;
}

/* The first key, for the rule that a variant may not reach "variants" or "expect". */
bool expt__scenario_path_head(const char *path, char *buf, size_t size) {
  const char *p = path_start(path, NULL);
  seg s;
  /* Selectors are accepted so any checked path has a head; only a key counts as one. */
  if (p == NULL || next_seg(&p, true, true, &s, NULL) != 1 || s.kind != SEG_KEY) return false;
  snprintf(buf, size, "%s", s.key);
  return true;
}

/* "\"services.api\" is a string, not an object": prefix is the path up to the container. */
static void why_type(retry_error *err, const char *path, size_t prefix_len, const json_t *v,
                     const char *want) {
  char shown[72];
  /* The path up to the container, cut at 60 bytes so a caller's message quoting the reason
   * still fits its 160 bytes. */
  size_t n = prefix_len < 60 ? prefix_len : 60;
  memcpy(shown, path, n);
  snprintf(shown + n, sizeof shown - n, "%s", prefix_len > 60 ? "..." : "");
  if (prefix_len == 0)
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "the document is %s, not %s",
                    expt_json_type_name(v), want);
  else
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "\"%s\" is %s, not %s", shown,
                    expt_json_type_name(v), want);
}

/* Setting path to null deletes it; deleting what is not there does nothing, so that a variant
 * can say "no policy" whether or not the base has one. Missing or null intermediate values
 * become objects (arrays before an index, which must then be [0]). An index may name an
 * element or the position just past the end (append). */
/* A step of expt__scenario_path_set that goes one level down rather than ending the walk. */
#define STEP_DOWN 1

/* Whether a and b differ only by two adjacent letters swapped ("fruad", "fraud"), which
 * retry_json_suggest's edit distance counts as 2 and so misses in short names. */
static bool swapped(const char *a, const char *b) {
  size_t n = strlen(a), i = 0;
  if (n != strlen(b) || n < 2) return false;
  while (i < n && a[i] == b[i])
    i++;
  return i + 1 < n && a[i] == b[i + 1] && a[i + 1] == b[i] && strcmp(a + i + 2, b + i + 2) == 0;
}

/* The key of cur that key most likely misspells, or NULL. A --set under a missing key would
 * create it, and a typo of an existing one ("services.fruad.workers") would silently add a
 * new service instead of changing the one meant (issue 23). */
static const char *misspelt(const json_t *cur, const char *key) {
  const char *names[64];
  size_t n = 0;
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)cur, k, v) {
    if (n < sizeof names / sizeof names[0]) names[n++] = k;
  }
  const char *near = retry_json_suggest(key, names, n, NULL);
  for (size_t i = 0; near == NULL && i < n; i++)
    if (swapped(key, names[i])) near = names[i];
  return near;
}

/* A missing key under cur that looks like a typo of one that is there (services.fruad where
 * fraud exists): true, with err saying which was meant, since creating it would add an object
 * rather than change one. path[0, cont_len) is the path down to cur. */
static bool refuse_misspelt(const json_t *cur, const char *key, const char *path, size_t cont_len,
                            retry_error *err) {
  const char *near = misspelt(cur, key);
  if (near == NULL) return false;
  char shown[48], cont[48];
  retry_json_printable(shown, sizeof shown, key, 40);
  size_t n = cont_len < 40 ? cont_len : 40;
  memcpy(cont, path, n);
  cont[n] = '\0';
  retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                  "no \"%s\" to set into; did you mean \"%s%s%.40s\"? (a new one is set "
                  "whole: %s%s%s={...})",
                  shown, cont, n > 0 ? "." : "", near, cont, n > 0 ? "." : "", shown);
  return true;
}

/* Applies key segment a to cur (b, the segment after it, decides what a missing child becomes;
 * more is 0 when a is the last): sets or deletes the key, or finds or creates the child to walk
 * into (*next). Returns STEP_DOWN, or the walk's result (RETRY_OK or an error, err filled for
 * RETRY_EINVAL) with value consumed. */
static int step_key(json_t *cur, const seg *a, const seg *b, int more, bool del, json_t *value,
                    json_t **next, const char *path, size_t cont_len, retry_error *err) {
  if (!json_is_object(cur)) {
    why_type(err, path, cont_len, cur, "an object");
    json_decref(value);
    return RETRY_EINVAL;
  }
  json_t *child = json_object_get(cur, a->key);
  /* a is the last segment: set or delete it. json_object_set_new steals value even
   * when it fails, so the ENOMEM return has nothing left to release. */
  if (more == 0) {
    if (del) {
      json_object_del(cur, a->key);
      json_decref(value);
      return RETRY_OK;
    }
    return json_object_set_new(cur, a->key, value) == 0 ? RETRY_OK : RETRY_ENOMEM;
  }
  /* Deleting under a missing parent: there is nothing to delete, and creating parents
   * just to remove nothing would change the document. */
  if (child == NULL || json_is_null(child)) {
    if (del) {
      json_decref(value);
      return RETRY_OK;
    }
    if (child == NULL && refuse_misspelt(cur, a->key, path, cont_len, err)) {
      json_decref(value);
      return RETRY_EINVAL;
    }
    child = b->kind == SEG_INDEX ? json_array() : json_object();
    if (child == NULL || json_object_set_new(cur, a->key, child) != 0) {
      json_decref(value);
      return RETRY_ENOMEM;
    }
  }
  *next = child;
  return STEP_DOWN;
}

/* As step_key, for index segment a: index == size appends, and anything past it would leave a
 * hole that JSON cannot hold. */
static int step_index(json_t *cur, const seg *a, const seg *b, int more, bool del, json_t *value,
                      json_t **next, const char *path, size_t cont_len, retry_error *err) {
  if (!json_is_array(cur)) {
    why_type(err, path, cont_len, cur, "an array");
    json_decref(value);
    return RETRY_EINVAL;
  }
  size_t size = json_array_size(cur);
  /* index == size appends; anything past it would leave a hole that JSON cannot hold. */
  if (a->index > size) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "index %zu is past the end of an array of %zu element%s", a->index, size,
                    size == 1 ? "" : "s");
    json_decref(value);
    return RETRY_EINVAL;
  }
  if (more == 0) {
    int rc;
    if (del) {
      /* Removing shifts later elements down; deleting just past the end is a no-op. */
      rc = a->index < size ? json_array_remove(cur, a->index) : 0;
      json_decref(value);
    } else if (a->index == size) {
      rc = json_array_append_new(cur, value); /* steals value, even on failure */
    } else {
      rc = json_array_set_new(cur, a->index, value);
    }
    return rc == 0 ? RETRY_OK : RETRY_ENOMEM;
  }
  json_t *child = a->index < size ? json_array_get(cur, a->index) : NULL;
  if (child == NULL || json_is_null(child)) {
    if (del) {
      json_decref(value);
      return RETRY_OK;
    }
    child = b->kind == SEG_INDEX ? json_array() : json_object();
    /* Both setters steal child even on failure, so only value is left to release. */
    int rc = child == NULL     ? -1
             : a->index < size ? json_array_set_new(cur, a->index, child)
                               : json_array_append_new(cur, child);
    if (rc != 0) {
      json_decref(value);
      return RETRY_ENOMEM;
    }
  }
  *next = child;
  return STEP_DOWN;
}

int expt__scenario_path_set(json_t *root, const char *path, json_t *value, retry_error *err) {
  if (expt__scenario_path_check(path, false, err) != 0) {
    json_decref(value);
    return RETRY_EINVAL;
  }
  /* The syntax was checked in full above, so a bad path changes nothing. What can still fail
   * is found as the walk meets it: a value of the wrong type, an index past the end, out of
   * memory. Objects created before such a failure stay in root; that is harmless, because
   * every caller discards the whole document on any error. value is consumed on every path:
   * stolen by a successful (or failed) *_set_new, released by hand otherwise. */
  bool del = json_is_null(value);
  const char *p = path_start(path, NULL), *root_start = p, *a_start = p;
  seg a, b;
  /* Two segments at a time: a is applied to cur, and b, the one after it, decides what a
   * missing child becomes (an array before an index, else an object). The return values of
   * next_seg are not tested for errors: the path was checked, so they are 1 or 0 (the end). */
  next_seg(&p, true, false, &a, NULL);
  json_t *cur = root;
  for (;;) {
    /* The container of segment a is the path before a's text (none: the document). It is
     * measured in the path as written, "$." included when given, so the quote matches it. */
    size_t cont_len = a_start == root_start ? 0 : (size_t)(a_start - path);
    const char *b_start = p;
    int more = next_seg(&p, false, false, &b, NULL);
    int rc = a.kind == SEG_KEY
                 ? step_key(cur, &a, &b, more, del, value, &cur, path, cont_len, err)
                 : step_index(cur, &a, &b, more, del, value, &cur, path, cont_len, err);
    if (rc != STEP_DOWN) return rc;
    /* One level down. a_start follows a's text so why_type can quote the path up to the
     * container of the next segment. */
    a = b;
    a_start = b_start;
  }
}

/* The walk of expt__scenario_path_set without changing anything: the value, or NULL with the
 * reason (the first segment that is missing or does not fit). A JSON null at the end counts
 * as missing. */
const json_t *expt_scenario_path_get(const json_t *doc, const char *path, retry_error *err) {
  if (expt__scenario_path_check(path, false, err) != 0) return NULL;
  const char *p = path_start(path, NULL), *root_start = p, *a_start = p;
  const json_t *cur = doc;
  seg a;
  for (bool first = true; next_seg(&p, first, false, &a, NULL) == 1; first = false) {
    size_t cont_len = a_start == root_start ? 0 : (size_t)(a_start - path);
    const json_t *child = NULL;
    if (a.kind == SEG_KEY) {
      if (!json_is_object(cur)) {
        why_type(err, path, cont_len, cur, "an object");
        return NULL;
      }
      child = json_object_get(cur, a.key);
    } else {
      if (!json_is_array(cur)) {
        why_type(err, path, cont_len, cur, "an array");
        return NULL;
      }
      child = json_array_get(cur, a.index);
    }
    if (child == NULL || json_is_null(child)) {
      size_t n = (size_t)(p - path) < 60 ? (size_t)(p - path) : 60;
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "\"%.*s\" is not there", (int)n,
                      path);
      return NULL;
    }
    cur = child;
    a_start = p;
  }
  return cur;
}

int expt_scenario_path_check_set(const char *path, retry_error *err) {
  return expt__scenario_path_check(path, false, err);
}
