/*
 * expt_scenario_origin.c: where a rule of a run's policy was written (expt_scenario_origin.h).
 * The loader keeps each foreign policy file's table of origins next to its translation
 * (scn_policy_file.origins); this walks from an edge to its policy in the run's document, from
 * the policy to the file it was read from, and from a field to its line.
 */
#include "expt/expt_scenario_origin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario_int.h"

/* The value at a path of the form the translations write ("$.methodConfig[0].retryPolicy.x"),
 * NULL when the document has none. */
static json_t *value_at(json_t *doc, const char *path) {
  if (strncmp(path, "$", 1) != 0) return NULL;
  const char *p = path + 1;
  json_t *cur = doc;
  while (*p != '\0' && cur != NULL) {
    if (*p == '.') {
      char key[128];
      size_t n = strcspn(p + 1, ".[");
      if (n == 0 || n >= sizeof key) return NULL;
      memcpy(key, p + 1, n);
      key[n] = '\0';
      cur = json_object_get(cur, key);
      p += 1 + n;
    } else if (*p == '[') {
      char *end;
      unsigned long i = strtoul(p + 1, &end, 10);
      if (*end != ']') return NULL;
      cur = json_array_get(cur, i);
      p = end + 1;
    } else {
      return NULL;
    }
  }
  return cur;
}

/* The policy object of the edge in doc, and the path that names it there (as the loader notes
 * it in scn_policy_file.named_at). */
static json_t *edge_policy(json_t *doc, bool top, const char *from, const char *to,
                           const char *method, char *path, size_t size) {
  if (top) {
    snprintf(path, size, "$.clients.%s.policy", from);
    return json_object_get(json_object_get(json_object_get(doc, "clients"), from), "policy");
  }
  json_t *calls = json_object_get(json_object_get(json_object_get(doc, "services"), from), "calls");
  json_t *best = NULL;
  for (size_t i = 0; i < json_array_size(calls); i++) {
    json_t *call = json_array_get(calls, i);
    const char *svc = json_string_value(json_object_get(call, "service"));
    const char *m = json_string_value(json_object_get(call, "method"));
    if (svc == NULL || strcmp(svc, to) != 0) continue;
    bool exact = m != NULL && method != NULL && strcmp(m, method) == 0;
    if (best == NULL || exact) {
      best = call;
      snprintf(path, size, "$.services.%s.calls[%zu].policy", from, i);
    }
    if (exact) break;
  }
  return json_object_get(best, "policy");
}

/* The foreign file the policy was read from: the one it still equals, else the one named at
 * its path (a file patched by an override since). */
static const scn_policy_file *file_of(const expt_scenario *s, json_t *policy, const char *path) {
  for (size_t i = 0; i < s->files.n; i++)
    if (s->files.files[i].origins != NULL && json_equal(s->files.files[i].content, policy))
      return &s->files.files[i];
  for (size_t i = 0; i < s->files.n; i++) {
    const scn_policy_file *pf = &s->files.files[i];
    for (size_t k = 0; pf->origins != NULL && k < json_array_size(pf->named_at); k++)
      if (strcmp(json_string_value(json_array_get(pf->named_at, k)), path) == 0) return pf;
  }
  return NULL;
}

/* How well one "name" entry matches method ("/pkg.Svc/Method"): 3 service and method, 2 the
 * service, 1 every method ({}), 0 not at all (gRPC A6's precedence). */
static int name_score(json_t *name, const char *method) {
  const char *svc = json_string_value(json_object_get(name, "service"));
  const char *m = json_string_value(json_object_get(name, "method"));
  if (svc == NULL || svc[0] == '\0') return 1;
  if (method == NULL || method[0] != '/') return 0;
  const char *slash = strchr(method + 1, '/');
  size_t n = slash != NULL ? (size_t)(slash - method - 1) : strlen(method + 1);
  if (strlen(svc) != n || strncmp(svc, method + 1, n) != 0) return 0;
  if (m == NULL || m[0] == '\0') return 2;
  return slash != NULL && strcmp(m, slash + 1) == 0 ? 3 : 0;
}

/* The index of the methodConfig entry of config that applies to method, -1 when none. */
static long method_entry(json_t *config, const char *method) {
  json_t *entries = json_object_get(config, "methodConfig");
  long best = -1;
  int best_score = 0;
  for (size_t i = 0; i < json_array_size(entries); i++) {
    json_t *names = json_object_get(json_array_get(entries, i), "name");
    for (size_t k = 0; k < json_array_size(names); k++) {
      int sc = name_score(json_array_get(names, k), method);
      if (sc > best_score) best_score = sc, best = (long)i;
    }
  }
  return best;
}

/* The origin recorded for key, or for a part of it ("key.type"): the first part read from the
 * file, else the first part (a default). *at is the key found. */
static json_t *origin_of(json_t *origins, const char *key, const char **at) {
  json_t *o = json_object_get(origins, key);
  if (o != NULL) {
    *at = key;
    return o;
  }
  size_t n = strlen(key);
  const char *k;
  json_t *v;
  json_object_foreach(origins, k, v) {
    if (strncmp(k, key, n) != 0 || (k[n] != '.' && k[n] != '[')) continue;
    bool read = json_is_string(json_object_get(v, "from"));
    if (o == NULL || (read && !json_is_string(json_object_get(o, "from")))) {
      o = v;
      *at = k;
    }
  }
  return o;
}

bool expt_scenario_rule_source(const expt_scenario *s, size_t run, bool top, const char *from,
                               const char *to, const char *method, const char *field,
                               expt_rule_source *out) {
  if (s == NULL || run >= s->n_runs || s->runs[run].doc == NULL || from == NULL || to == NULL)
    return false;
  char path[300] = "";
  json_t *policy = edge_policy(s->runs[run].doc, top, from, to, method, path, sizeof path);
  if (!json_is_object(policy)) return false;
  const scn_policy_file *pf = file_of(s, policy, path);
  if (pf == NULL) return false;
  char key[300];
  if (field[0] == '$') {
    snprintf(key, sizeof key, "%s", field);
  } else {
    long i = method_entry(pf->content, method);
    if (i < 0) return false;
    snprintf(key, sizeof key, "$.methodConfig[%ld].%s", i, field);
  }
  const char *at = NULL;
  json_t *o = origin_of(pf->origins, key, &at);
  if (o == NULL) return false;
  json_t *was = value_at(pf->content, key), *is = value_at(policy, key);
  memset(out, 0, sizeof *out);
  out->file = pf->name;
  out->format = pf->format;
  snprintf(out->field, sizeof out->field, "%s", at);
  out->from = json_string_value(json_object_get(o, "from"));
  out->note = json_string_value(json_object_get(o, "note"));
  out->line = (int)json_integer_value(json_object_get(o, "line"));
  out->column = (int)json_integer_value(json_object_get(o, "column"));
  out->overridden = was == NULL || is == NULL || !json_equal(was, is);
  return true;
}
