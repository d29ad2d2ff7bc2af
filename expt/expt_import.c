/*
 * expt_import.c: detection of a policy file's format by its content, YAML read through libyaml
 * into a jansson tree with the line and column of every node, and the helpers the translators
 * share (durations, warnings, where each output field came from). Owns nothing beyond one
 * translation; the result owns its documents.
 * Invariant: a text that is not a recognised foreign format is left to the service config
 * loader untouched (return 0), so its messages, and every golden file, stay as they were.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "expt/expt_import_int.h"
#include "retry/retry_json.h"

/* {==================================================================
 * Messages, origins, paths
 * =================================================================== */

/* The key of a source path in the position table: the document's index, then the path. */
static void pos_key(char *buf, size_t size, int doc, const char *src) {
  snprintf(buf, size, "%d%s", doc, src);
}

/* The line and column (1-based) of src in the current document, -1 when unknown. */
static void position(const imp_ctx *c, const char *src, int *line, int *column) {
  *line = *column = -1;
  if (c->pos == NULL || src == NULL) return;
  char key[IMP_PATH + 16];
  pos_key(key, sizeof key, c->doc, src);
  json_t *p = json_object_get(c->pos, key);
  if (json_is_array(p)) {
    *line = (int)json_integer_value(json_array_get(p, 0));
    *column = (int)json_integer_value(json_array_get(p, 1));
  }
}

void imp_warn(imp_ctx *c, const char *src, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line, column;
  position(c, src, &line, &column);
  json_t *w = json_pack("{s:s, s:i, s:i, s:s}", "path", src, "line", line, "column", column,
                        "message", msg);
  if (w == NULL || json_array_append_new(c->warnings, w) != 0) imp_oom(c);
}

int imp_fail(imp_ctx *c, const char *src, const char *fmt, ...) {
  if (c->err->code != RETRY_OK) return -1;
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line, column;
  position(c, src, &line, &column);
  retry_error_set(c->err, RETRY_ECONFIG, c->source, src, line, column, "%s", msg);
  return -1;
}

int imp_oom(imp_ctx *c) {
  if (c->err->code == RETRY_OK)
    retry_error_set(c->err, RETRY_ENOMEM, c->source, "$", -1, -1, "out of memory");
  return -1;
}

void imp_origin(imp_ctx *c, const char *out, const char *src, const char *note) {
  int line = -1, column = -1;
  position(c, src, &line, &column);
  json_t *o = json_pack("{s:s?, s:i, s:i, s:s?}", "from", src != NULL && src[0] ? src : NULL,
                        "line", line, "column", column, "note", note);
  if (o == NULL || json_object_set_new(c->origins, out, o) != 0) imp_oom(c);
}

/* buf may be src itself: the result is built apart, then copied. */
const char *imp_path_key(char *buf, const char *src, const char *key) {
  char tmp[IMP_PATH];
  snprintf(tmp, sizeof tmp, "%s.%s", src, key);
  memcpy(buf, tmp, sizeof tmp);
  return buf;
}

const char *imp_path_index(char *buf, const char *src, size_t i) {
  char tmp[IMP_PATH];
  snprintf(tmp, sizeof tmp, "%s[%zu]", src, i);
  memcpy(buf, tmp, sizeof tmp);
  return buf;
}

void imp_check_keys(imp_ctx *c, json_t *obj, const char *src, const char *const *known,
                    size_t n_known, const imp_unmodelled *skip, size_t n_skip) {
  const char *names[64];
  size_t n = 0;
  for (size_t i = 0; i < n_known && n < 64; i++) names[n++] = known[i];
  for (size_t i = 0; i < n_skip && n < 64; i++) names[n++] = skip[i].key;
  const char *key;
  json_t *v;
  char p[IMP_PATH];
  json_object_foreach(obj, key, v) {
    bool found = false;
    for (size_t i = 0; i < n_known && !found; i++) found = strcmp(key, known[i]) == 0;
    for (size_t i = 0; i < n_skip && !found; i++)
      if (strcmp(key, skip[i].key) == 0) {
        imp_warn(c, imp_path_key(p, src, key), "\"%s\" is not modelled: %s", key, skip[i].why);
        found = true;
      }
    if (found) continue;
    const char *near = retry_json_suggest(key, names, n, NULL);
    if (near != NULL) {
      imp_warn(c, imp_path_key(p, src, key), "unknown field \"%s\" ignored; did you mean \"%s\"?",
               key, near);
    } else {
      char list[300] = "";
      for (size_t i = 0; i < n; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s\"%s\"", i ? ", " : "", names[i]);
      }
      imp_warn(c, imp_path_key(p, src, key), "unknown field \"%s\" ignored; known here: %s", key,
               list);
    }
  }
}

/* }================================================================== */

/* {==================================================================
 * Values: durations and numbers
 * =================================================================== */

/* A Go duration ("1m30s", "250ms", "1.5h") or a proto3 one ("0.25s"): a sequence of decimal
 * numbers each with a unit. Returns 0 with *ns, -1 when s is not one. */
static int parse_duration(const char *s, int64_t *ns) {
  static const struct {
    const char *unit;
    double ns;
  } units[] = {{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9},
               {"h", 3600e9}};
  double total = 0;
  const char *p = s;
  if (*p == '\0') return -1;
  if (strcmp(p, "0") == 0) return *ns = 0, 0;
  while (*p) {
    char *end;
    if (!isdigit((unsigned char)*p) && *p != '.') return -1;
    double v = strtod(p, &end);
    if (end == p) return -1;
    p = end;
    size_t best = 0, best_len = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
      size_t l = strlen(units[i].unit);
      if (strncmp(p, units[i].unit, l) == 0 && l > best_len) best = i, best_len = l;
    }
    if (best_len == 0) return -1;
    total += v * units[best].ns;
    p += best_len;
  }
  if (!(total < 9.2e18)) return -1;
  *ns = (int64_t)(total + 0.5);
  return 0;
}

int imp_duration(imp_ctx *c, json_t *v, const char *src, int64_t *ns) {
  if (json_is_string(v) && parse_duration(json_string_value(v), ns) == 0) return 1;
  if (json_is_object(v)) {
    json_t *s = json_object_get(v, "seconds"), *n = json_object_get(v, "nanos");
    if ((s == NULL || json_is_integer(s)) && (n == NULL || json_is_integer(n))) {
      *ns = (s ? json_integer_value(s) : 0) * 1000000000LL + (n ? json_integer_value(n) : 0);
      if (*ns >= 0) return 1;
    }
  }
  return imp_fail(c, src, "expected a duration such as \"0.25s\", \"250ms\" or \"1m30s\"");
}

void imp_duration_format(int64_t ns, char *buf, size_t size) {
  long long sec = (long long)(ns / 1000000000LL), frac = (long long)(ns % 1000000000LL);
  if (frac == 0) {
    snprintf(buf, size, "%llds", sec);
    return;
  }
  char digits[16];
  snprintf(digits, sizeof digits, "%09lld", frac);
  for (int i = 8; i > 0 && digits[i] == '0'; i--) digits[i] = '\0';
  snprintf(buf, size, "%lld.%ss", sec, digits);
}

int imp_int(imp_ctx *c, json_t *obj, const char *key, const char *src, long long lo, long long hi,
            long long *out) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) return 0;
  char p[IMP_PATH];
  imp_path_key(p, src, key);
  /* proto3 JSON writes 64-bit integers as strings; Envoy's YAML takes both. */
  if (json_is_string(v)) {
    char *end;
    long long x = strtoll(json_string_value(v), &end, 10);
    if (*end == '\0' && end != json_string_value(v)) v = json_integer(x);
    else v = NULL;
    if (v != NULL) {
      *out = json_integer_value(v);
      json_decref(v);
      goto range;
    }
  }
  if (!json_is_integer(v)) return imp_fail(c, p, "\"%s\" must be an integer", key);
  *out = json_integer_value(v);
range:
  if (*out < lo || *out > hi)
    return imp_fail(c, p, "\"%s\" must be in [%lld, %lld], got %lld", key, lo, hi, *out);
  return 1;
}

int imp_number(imp_ctx *c, json_t *obj, const char *key, const char *src, double *out) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) return 0;
  char p[IMP_PATH];
  if (!json_is_number(v)) return imp_fail(c, imp_path_key(p, src, key), "\"%s\" must be a number", key);
  *out = json_number_value(v);
  return 1;
}

/* }================================================================== */

/* {==================================================================
 * YAML through libyaml, into jansson with positions
 * =================================================================== */

typedef struct yaml_reader {
  yaml_parser_t parser;
  imp_ctx *c;
  json_t *pos; /* the position table being filled */
  int doc;
} yaml_reader;

/* Fails with libyaml's own message at its own place (1-based, as editors count). */
static int yaml_syntax(yaml_reader *y) {
  yaml_parser_t *p = &y->parser;
  if (p->error == YAML_MEMORY_ERROR) return imp_oom(y->c);
  yaml_mark_t m = p->problem_mark;
  retry_error_set(y->c->err, RETRY_ECONFIG, y->c->source, "$", (int)m.line + 1, (int)m.column + 1,
                  "YAML syntax error: %s%s%s", p->problem ? p->problem : "unknown",
                  p->context ? " " : "", p->context ? p->context : "");
  return -1;
}

static void remember(yaml_reader *y, const char *path, yaml_mark_t m) {
  char key[IMP_PATH + 16];
  pos_key(key, sizeof key, y->doc, path);
  json_object_set_new(y->pos, key, json_pack("[i, i]", (int)m.line + 1, (int)m.column + 1));
}

/* A plain scalar as YAML 1.1's core schema reads it: null, booleans, integers, floats; a quoted
 * one is always a string. */
static json_t *scalar(const yaml_event_t *e) {
  const char *s = (const char *)e->data.scalar.value;
  if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return json_string(s);
  if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
    return json_null();
  static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (!strcmp(s, yes[i])) return json_true();
    if (!strcmp(s, no[i])) return json_false();
  }
  char *end;
  const char *d = s + (*s == '-' || *s == '+');
  if (isdigit((unsigned char)*d)) {
    long long i = strtoll(s, &end, 10);
    if (*end == '\0') return json_integer(i);
    double x = strtod(s, &end);
    if (*end == '\0') return json_real(x);
  }
  return json_string(s);
}

static json_t *yaml_node(yaml_reader *y, yaml_event_t *e, const char *path, int depth);

/* The children of a mapping or a sequence, until its end event. */
static json_t *yaml_collection(yaml_reader *y, bool map, const char *path, int depth) {
  json_t *out = map ? json_object() : json_array();
  if (out == NULL) return imp_oom(y->c), NULL;
  for (size_t i = 0;; i++) {
    yaml_event_t e;
    if (!yaml_parser_parse(&y->parser, &e)) return json_decref(out), yaml_syntax(y), NULL;
    if (e.type == (map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT)) {
      yaml_event_delete(&e);
      return out;
    }
    char child[IMP_PATH];
    json_t *v;
    if (map) {
      if (e.type != YAML_SCALAR_EVENT) {
        imp_fail(y->c, path, "a mapping key must be a plain string");
        yaml_event_delete(&e);
        return json_decref(out), NULL;
      }
      char key[128];
      snprintf(key, sizeof key, "%s", (const char *)e.data.scalar.value);
      imp_path_key(child, path, key);
      yaml_event_delete(&e);
      if (!yaml_parser_parse(&y->parser, &e)) return json_decref(out), yaml_syntax(y), NULL;
      v = yaml_node(y, &e, child, depth + 1);
      if (v != NULL && json_object_get(out, key) != NULL) {
        json_decref(v), json_decref(out);
        imp_fail(y->c, child, "the key \"%s\" appears twice in one mapping", key);
        return NULL;
      }
      if (v != NULL) json_object_set_new(out, key, v);
    } else {
      imp_path_index(child, path, i);
      v = yaml_node(y, &e, child, depth + 1);
      if (v != NULL) json_array_append_new(out, v);
    }
    if (v == NULL) return json_decref(out), NULL;
  }
}

/* One node from its first event e (deleted here). */
static json_t *yaml_node(yaml_reader *y, yaml_event_t *e, const char *path, int depth) {
  json_t *v = NULL;
  remember(y, path, e->start_mark);
  if (depth > 64) {
    imp_fail(y->c, path, "nested more than 64 levels deep");
  } else if (e->type == YAML_SCALAR_EVENT) {
    if ((v = scalar(e)) == NULL) imp_oom(y->c);
  } else if (e->type == YAML_MAPPING_START_EVENT || e->type == YAML_SEQUENCE_START_EVENT) {
    bool map = e->type == YAML_MAPPING_START_EVENT;
    yaml_event_delete(e);
    return yaml_collection(y, map, path, depth);
  } else if (e->type == YAML_ALIAS_EVENT) {
    imp_fail(y->c, path, "YAML aliases (*name) are not supported: write the value out");
  } else {
    imp_fail(y->c, path, "unexpected YAML event");
  }
  yaml_event_delete(e);
  return v;
}

/* The documents of a YAML stream, as an array; positions go to pos. NULL after an error. */
static json_t *yaml_read(imp_ctx *c, const char *text, size_t len, json_t *pos) {
  yaml_reader y = {.c = c, .pos = pos, .doc = 0};
  if (!yaml_parser_initialize(&y.parser)) return imp_oom(c), NULL;
  yaml_parser_set_input_string(&y.parser, (const unsigned char *)text, len);
  json_t *docs = json_array();
  bool ok = docs != NULL;
  while (ok) {
    yaml_event_t e;
    if (!yaml_parser_parse(&y.parser, &e)) {
      ok = false, yaml_syntax(&y);
      break;
    }
    yaml_event_type_t t = e.type;
    if (t == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&e);
      break;
    }
    if (t == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&e);
      if (!yaml_parser_parse(&y.parser, &e)) {
        ok = false, yaml_syntax(&y);
        break;
      }
      json_t *d = yaml_node(&y, &e, "$", 0);
      if (d == NULL) ok = false;
      else if (!json_is_null(d)) json_array_append_new(docs, d), y.doc++;
      else json_decref(d);
      continue;
    }
    yaml_event_delete(&e); /* stream start, document end */
  }
  yaml_parser_delete(&y.parser);
  if (!ok) json_decref(docs);
  return ok ? docs : NULL;
}

/* }================================================================== */

/* {==================================================================
 * Detection and the entry points
 * =================================================================== */

const char *expt_import_format_name(expt_import_format f) {
  switch (f) {
    case EXPT_IMPORT_ENVOY: return "envoy";
    case EXPT_IMPORT_ISTIO: return "istio";
    case EXPT_IMPORT_AWS: return "aws-config";
    case EXPT_IMPORT_LINKERD: return "linkerd";
    case EXPT_IMPORT_GATEWAY: return "gateway-api";
    case EXPT_IMPORT_R4J: return "resilience4j";
    case EXPT_IMPORT_POLLY: return "polly";
    default: return "grpc-service-config";
  }
}

/* The format of a parsed document (an object), by its keys. */
static expt_import_format doc_format(json_t *d) {
  if (!json_is_object(d)) return EXPT_IMPORT_NATIVE;
  const char *api = json_string_value(json_object_get(d, "apiVersion"));
  if (api != NULL && json_object_get(d, "kind") != NULL &&
      strncmp(api, "networking.istio.io/", 20) == 0)
    return EXPT_IMPORT_ISTIO;
  if (api != NULL && json_object_get(d, "kind") != NULL &&
      (strncmp(api, "linkerd.io/", 11) == 0 || strncmp(api, "policy.linkerd.io/", 18) == 0 ||
       expt__import_is_linkerd_annotated(d)))
    return EXPT_IMPORT_LINKERD;
  if (api != NULL && json_object_get(d, "kind") != NULL &&
      (strncmp(api, "gateway.networking.k8s.io/", 26) == 0 ||
       strncmp(api, "gateway.networking.x-k8s.io/", 28) == 0))
    return EXPT_IMPORT_GATEWAY;
  if (expt__import_is_envoy(d)) return EXPT_IMPORT_ENVOY;
  if (expt__import_is_r4j(d)) return EXPT_IMPORT_R4J;
  if (expt__import_is_polly(d)) return EXPT_IMPORT_POLLY;
  return EXPT_IMPORT_NATIVE;
}

/* Whether text's first non-blank character opens JSON. */
static bool looks_json(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!isspace((unsigned char)text[i])) return text[i] == '{' || text[i] == '[';
  return false;
}

/* Whether a text that libyaml refuses was meant as one of our YAML formats: then its syntax
 * error is reported with YAML's line and column; otherwise the service config loader reports
 * its own. */
static bool mentions_foreign(const char *text, size_t len) {
  static const char *const marks[] = {"apiVersion:", "retry_policy:", "route_config:",
                                      "virtual_hosts:", "clusters:", "resilience4j:"};
  for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
    size_t l = strlen(marks[m]);
    for (size_t i = 0; i + l <= len; i++)
      if (memcmp(text + i, marks[m], l) == 0) return true;
  }
  return false;
}

/* Parses text into an array of documents and a position table; 0 when it is not foreign. */
static int parse_source(imp_ctx *c, const char *text, size_t len, json_t **docs, json_t *pos,
                        expt_import_format *f) {
  *docs = NULL;
  if (expt__import_is_aws(text, len)) {
    json_t *d = json_object();
    *f = EXPT_IMPORT_AWS;
    if (d == NULL || (*docs = json_pack("[o]", d)) == NULL) return imp_oom(c);
    return expt__import_aws_parse(c, text, len, d, pos) == 0 ? 1 : -1;
  }
  if (looks_json(text, len)) {
    json_t *d = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    if (d == NULL) return 0; /* the service config loader reports the syntax error */
    *f = doc_format(d);
    if (*f == EXPT_IMPORT_NATIVE) return json_decref(d), 0;
    *docs = json_pack("[o]", d);
    c->pos = NULL;
    return *docs != NULL ? 1 : imp_oom(c);
  }
  retry_error quiet;
  retry_error_clear(&quiet);
  retry_error *keep = c->err;
  bool foreign = mentions_foreign(text, len);
  if (!foreign) c->err = &quiet; /* a failure here is the service config loader's to report */
  *docs = yaml_read(c, text, len, pos);
  c->err = keep;
  if (*docs == NULL) return foreign || quiet.code == RETRY_ENOMEM ? -1 : 0;
  *f = json_array_size(*docs) > 0 ? doc_format(json_array_get(*docs, 0)) : EXPT_IMPORT_NATIVE;
  /* Routes or a Service with Linkerd's annotations anywhere in the stream are Linkerd's. */
  for (size_t i = 0; *f == EXPT_IMPORT_GATEWAY && i < json_array_size(*docs); i++)
    if (expt__import_is_linkerd_annotated(json_array_get(*docs, i))) *f = EXPT_IMPORT_LINKERD;
  if (*f == EXPT_IMPORT_NATIVE) {
    json_decref(*docs);
    *docs = NULL;
    return 0;
  }
  return 1;
}

void expt_import_result_close(expt_import_result *r) {
  if (r == NULL) return;
  json_decref(r->config);
  json_decref(r->origins);
  json_decref(r->warnings);
  memset(r, 0, sizeof *r);
}

int expt_import_text(const char *text, size_t len, const char *source, expt_import_result *out,
                     retry_error *err) {
  retry_error local;
  if (err == NULL) err = &local;
  retry_error_clear(err);
  json_t *pos = json_object();
  expt_import_result r = {0};
  r.origins = json_object();
  r.warnings = json_array();
  r.config = json_object();
  imp_ctx c = {.source = source != NULL ? source : "<string>", .pos = pos, .doc = 0,
               .origins = r.origins, .warnings = r.warnings, .err = err};
  json_t *docs = NULL;
  int rc = -1;
  if (pos == NULL || r.origins == NULL || r.warnings == NULL || r.config == NULL) {
    imp_oom(&c);
  } else {
    rc = parse_source(&c, text, len, &docs, pos, &r.format);
    if (rc == 1) {
      json_t *first = json_array_get(docs, 0);
      int t = r.format == EXPT_IMPORT_ISTIO ? expt__import_istio(&c, docs, r.config)
              : r.format == EXPT_IMPORT_AWS ? expt__import_aws(&c, first, r.config)
              : r.format == EXPT_IMPORT_LINKERD ? expt__import_linkerd(&c, docs, r.config)
              : r.format == EXPT_IMPORT_GATEWAY ? expt__import_gateway(&c, docs, r.config)
              : r.format == EXPT_IMPORT_R4J ? expt__import_r4j(&c, first, r.config)
              : r.format == EXPT_IMPORT_POLLY ? expt__import_polly(&c, first, r.config)
                                            : expt__import_envoy(&c, first, r.config);
      if (t != 0 || err->code != RETRY_OK) rc = -1;
    }
  }
  json_decref(docs);
  json_decref(pos);
  if (rc == 1) *out = r;
  else expt_import_result_close(&r);
  return rc;
}

/* The sink of the scenario loader's warnings (expt_import_set_warn). */
static const expt_scenario_warn *warn_sink;

void expt_import_set_warn(const expt_scenario_warn *w) { warn_sink = w; }

int expt_import_policy_text(const char *text, size_t len, const char *source, json_t **doc,
                            json_t **origins, expt_import_format *format, retry_error *err) {
  expt_import_result r;
  int rc = expt_import_text(text, len, source, &r, err);
  if (rc != 1) return rc;
  size_t i;
  json_t *w;
  json_array_foreach(r.warnings, i, w) {
    retry_error e;
    retry_error_clear(&e);
    retry_error_set(&e, RETRY_ECONFIG, source, json_string_value(json_object_get(w, "path")),
                    (int)json_integer_value(json_object_get(w, "line")),
                    (int)json_integer_value(json_object_get(w, "column")), "%s",
                    json_string_value(json_object_get(w, "message")));
    if (warn_sink != NULL && warn_sink->strict) {
      *err = e;
      expt_import_result_close(&r);
      return -1;
    }
    if (warn_sink != NULL && warn_sink->fn != NULL) warn_sink->fn(warn_sink->ctx, NULL, &e);
  }
  *doc = json_incref(r.config);
  if (origins != NULL) *origins = json_incref(r.origins);
  if (format != NULL) *format = r.format;
  expt_import_result_close(&r);
  return 1;
}

/* }================================================================== */
