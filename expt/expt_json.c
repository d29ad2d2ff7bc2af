/*
 * expt_json.c: the JSON helpers shared by the library's writers (expt_json.h). Invariant:
 * nothing here keeps a reference to what it is given.
 */
#include "expt/expt_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void expt_json_put(json_t *o, const char *key, json_t *v, bool *ok) {
  if (v == NULL || json_object_set_new(o, key, v) != 0) *ok = false;
}

json_t *expt_json_u64(uint64_t v) {
  if (v <= (uint64_t)INT64_MAX) return json_integer((json_int_t)v);
  char buf[24];
  snprintf(buf, sizeof buf, "%" PRIu64, v);
  return json_string(buf);
}

int expt_json_fill(void *ctx, FILE *f) {
  char *s = json_dumps(ctx, EXPT_JSON_FLAGS);
  if (s == NULL) return -1;
  int rc = (fputs(s, f) < 0 || fputc('\n', f) == EOF) ? -1 : 0;
  free(s);
  return rc;
}

const json_t *expt_json_at(const json_t *o, const char *path) {
  char buf[96];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *key = buf, *dot; key != NULL && o != NULL; key = dot) {
    dot = strchr(key, '.');
    if (dot != NULL) *dot++ = '\0';
    o = json_object_get(o, key);
  }
  return o;
}

double expt_json_number_or(const json_t *v, double missing) {
  return json_is_number(v) ? json_number_value(v) : missing;
}

const char *expt_json_type_name(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
  }
  return "a value";
}
