/*
 * expt_sweep.c: sweep axes (the scenario's "sweep" block, --sweep arguments), ranges with
 * units, the grid of points. Invariant: every axis has at least one value, none null, each
 * also kept as the JSON text that expt_scenario_derive parses back to the same value.
 */
#include "expt/expt_sweep.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retry/retry_json.h"
#include "expt/expt_output.h"
#include "expt/expt_search.h"
#include "expt/expt_study.h"
#include "expt/expt_study_estimate.h"

/* {==================================================================
 * Axes
 * =================================================================== */

void expt_sweep_init(expt_sweep *sw) { memset(sw, 0, sizeof *sw); }

static void axis_free(expt_sweep_axis *ax) {
  for (size_t i = 0; ax->texts != NULL && i < json_array_size(ax->values); i++)
    free(ax->texts[i]);
  free(ax->texts);
  json_decref(ax->values);
  free(ax->path);
  for (size_t k = 0; k < ax->n_paths; k++)
    free(ax->paths[k]);
  free(ax->label);
  memset(ax, 0, sizeof *ax);
}

size_t expt_sweep_n_sets(const expt_sweep *sw) {
  size_t n = 0;
  for (size_t a = 0; a < sw->n_axes; a++)
    n += sw->axes[a].n_paths;
  return n;
}

bool expt_sweep_has_named_axes(const expt_sweep *sw) {
  for (size_t a = 0; a < sw->n_axes; a++)
    if (sw->axes[a].n_paths > 1 || sw->axes[a].label != NULL) return true;
  return false;
}

/* The name of an axis of paths[0..n) in tables: the label of a linked axis, else its paths
 * joined by "+" (a plain axis: its path). New string, NULL when out of memory. */
static char *axis_name(const char *const *paths, size_t n, const char *label) {
  if (n > 1 && label != NULL) return strdup(label);
  size_t len = 1;
  for (size_t k = 0; k < n; k++)
    len += strlen(paths[k]) + 1;
  char *s = malloc(len);
  if (s == NULL) return NULL;
  s[0] = '\0';
  for (size_t k = 0; k < n; k++) {
    if (k > 0) strcat(s, "+");
    strcat(s, paths[k]);
  }
  return s;
}

void expt_sweep_free(expt_sweep *sw) {
  for (size_t a = 0; a < sw->n_axes; a++)
    axis_free(&sw->axes[a]);
  sw->n_axes = 0;
}

size_t expt_sweep_n_points(const expt_sweep *sw) {
  size_t n = 1;
  for (size_t a = 0; a < sw->n_axes; a++)
    n *= json_array_size(sw->axes[a].values);
  return n;
}

/* Adds the axis that moves paths[0..n_paths) together (one: a plain axis) with values (taken)
 * and label (may be NULL). On error (a path twice, too many axes or points, out of memory)
 * returns the code with a message in why, values released. */
static int add_axis(expt_sweep *sw, const char *const *paths, size_t n_paths, const char *label,
                    json_t *values, char *why, size_t why_size) {
  for (size_t k = 0; k < n_paths; k++) {
    for (size_t a = 0; a < sw->n_axes; a++)
      for (size_t j = 0; j < sw->axes[a].n_paths; j++) {
        if (strcmp(sw->axes[a].paths[j], paths[k]) != 0) continue;
        json_decref(values);
        snprintf(why, why_size, "the path is swept twice");
        return RETRY_EINVAL;
      }
    for (size_t j = 0; j < k; j++) {
      if (strcmp(paths[j], paths[k]) != 0) continue;
      json_decref(values);
      snprintf(why, why_size, "the path is swept twice");
      return RETRY_EINVAL;
    }
  }
  if (sw->n_axes == EXPT_SWEEP_MAX_AXES) {
    json_decref(values);
    snprintf(why, why_size, "a sweep has at most %d axes", EXPT_SWEEP_MAX_AXES);
    return RETRY_EINVAL;
  }
  size_t n = json_array_size(values);
  /* The same limit on a listed axis as on a range and on a scenario's "values". */
  if (n > EXPT_SWEEP_MAX_STEPS) {
    json_decref(values);
    snprintf(why, why_size, "an axis has at most %d values, got %zu", EXPT_SWEEP_MAX_STEPS, n);
    return RETRY_EINVAL;
  }
  if (n == 0 || expt_sweep_n_points(sw) > EXPT_SWEEP_MAX_POINTS / n) {
    json_decref(values);
    snprintf(
        why, why_size,
        n == 0 ? "an axis needs at least one value" : "the grid would have more than %d points",
        EXPT_SWEEP_MAX_POINTS);
    return RETRY_EINVAL;
  }
  expt_sweep_axis *ax = &sw->axes[sw->n_axes];
  ax->values = values;
  ax->path = axis_name(paths, n_paths, label);
  ax->texts = calloc(n, sizeof *ax->texts);
  bool ok = ax->path != NULL && ax->texts != NULL;
  for (size_t k = 0; ok && k < n_paths && k < EXPT_AXIS_MAX_LINKED; k++) {
    ax->paths[ax->n_paths] = strdup(paths[k]);
    ok = ax->paths[ax->n_paths++] != NULL;
  }
  if (ok && label != NULL) ok = (ax->label = strdup(label)) != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    ax->texts[i] = json_dumps(json_array_get(values, i), JSON_ENCODE_ANY | JSON_COMPACT);
    ok = ax->texts[i] != NULL;
  }
  if (!ok) {
    axis_free(ax);
    snprintf(why, why_size, "out of memory");
    return RETRY_ENOMEM;
  }
  sw->n_axes++;
  return 0;
}

/* A --sweep value: JSON when it parses as JSON, else a string (as --set's). */
static json_t *arg_value(const char *text, size_t len) {
  char *t = strndup(text, len);
  if (t == NULL) return NULL;
  json_t *v = json_loads(t, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
  if (v == NULL) v = json_string(t);
  free(t);
  return v;
}

/* The first '=' outside a bracket (a quoted key may hold one). */
static const char *path_end(const char *arg) {
  int depth = 0;
  for (const char *p = arg; *p != '\0'; p++) {
    if (*p == '[') depth++;
    if (*p == ']' && depth > 0) depth--;
    if (*p == '=' && depth == 0) return p;
  }
  return NULL;
}

/* FROM:TO:N[:log|:linear] into a range, when spec has that shape: 1 with *out set, 0 when it
 * is not a range (a list, then), -1 with why. */
static int arg_range(const char *spec, json_t **out, char *why, size_t why_size) {
  const char *c1 = strchr(spec, ':');
  const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || strchr(spec, ',') != NULL) return 0;
  const char *c3 = strchr(c2 + 1, ':');
  if (c3 != NULL && strchr(c3 + 1, ':') != NULL) return 0;
  char nbuf[32];
  size_t nlen = c3 != NULL ? (size_t)(c3 - c2 - 1) : strlen(c2 + 1);
  if (nlen == 0 || nlen >= sizeof nbuf) return 0;
  memcpy(nbuf, c2 + 1, nlen);
  nbuf[nlen] = '\0';
  char *e = NULL;
  long steps = strtol(nbuf, &e, 10);
  if (*e != '\0') return 0;
  bool log = false;
  if (c3 != NULL) {
    if (strcmp(c3 + 1, "log") == 0)
      log = true;
    else if (strcmp(c3 + 1, "linear") != 0) {
      snprintf(why, why_size, "the scale after N must be \"log\" or \"linear\"");
      return -1;
    }
  }
  json_t *from = arg_value(spec, (size_t)(c1 - spec));
  json_t *to = arg_value(c1 + 1, (size_t)(c2 - c1 - 1));
  retry_error bad;
  retry_error_clear(&bad);
  json_t *values =
      from != NULL && to != NULL ? expt_axis_range(from, to, steps, log, &bad) : NULL;
  if (from == NULL || to == NULL)
    snprintf(why, why_size, "out of memory");
  else if (values == NULL)
    snprintf(why, why_size, "%s", bad.message);
  json_decref(from);
  json_decref(to);
  if (values == NULL) return -1;
  *out = values;
  return 1;
}

/* v1,v2,... into an array. NULL with why on an empty or null value. */
static json_t *arg_list(const char *spec, char *why, size_t why_size) {
  json_t *values = json_array();
  for (const char *p = spec; values != NULL;) {
    const char *comma = strchr(p, ',');
    size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
    json_t *v = len > 0 ? arg_value(p, len) : NULL;
    if (len == 0 || json_is_null(v)) {
      snprintf(why, why_size, len == 0 ? "a value is empty" : "a value cannot be null");
      json_decref(v);
      json_decref(values);
      return NULL;
    }
    if (v == NULL || json_array_append_new(values, v) != 0) break;
    if (comma == NULL) return values;
    p = comma + 1;
  }
  json_decref(values);
  snprintf(why, why_size, "out of memory");
  return NULL;
}

/* Splits s at each '+' outside brackets, in place, into out[0..max). Returns how many paths, 0
 * when there are more than max. */
static size_t split_linked(char *s, const char **out, size_t max) {
  size_t n = 0;
  int depth = 0;
  out[n++] = s;
  for (char *p = s; *p != '\0'; p++) {
    if (*p == '[') depth++;
    if (*p == ']' && depth > 0) depth--;
    if (*p != '+' || depth > 0) continue;
    if (n == max) return 0;
    *p = '\0';
    out[n++] = p + 1;
  }
  return n;
}

/* Why path cannot be swept, into why (left empty when it can). */
static void check_arg_path(const char *path, char *why, size_t why_size) {
  char head[64];
  snprintf(head, sizeof head, "%.*s", (int)strcspn(path, ".["), path);
  retry_error e;
  retry_error_clear(&e);
  if (expt_scenario_path_check_set(path, &e) != 0)
    snprintf(why, why_size, "%s", e.message); /* what is wrong with the path */
  else if (expt_axis_reserved(head) != NULL)
    snprintf(why, why_size, "\"%s\" cannot be varied (it defines the runs and the study)",
             expt_axis_reserved(head));
}

int expt_sweep_add_arg(expt_sweep *sw, const char *arg, retry_error *err) {
  char shown[72], why[160] = "";
  retry_json_printable(shown, sizeof shown, arg, 64);
  const char *eq = path_end(arg);
  if (eq == NULL || eq == arg) {
    retry_error_set(err, RETRY_EINVAL, "<command line>", "", -1, -1,
                    "--sweep \"%s\": expected PATH=v1,v2,... or PATH=FROM:TO:N[:log]", shown);
    return RETRY_EINVAL;
  }
  char *path = strndup(arg, (size_t)(eq - arg));
  if (path == NULL) {
    retry_error_set(err, RETRY_ENOMEM, "<command line>", "", -1, -1, "out of memory");
    return RETRY_ENOMEM;
  }
  int rc = RETRY_EINVAL;
  json_t *values = NULL;
  /* PATH1+PATH2+...: a linked axis, split at each '+' outside brackets (in place). */
  const char *paths[EXPT_AXIS_MAX_LINKED];
  size_t n_paths = split_linked(path, paths, EXPT_AXIS_MAX_LINKED);
  for (size_t k = 0; k < n_paths && why[0] == '\0'; k++)
    check_arg_path(paths[k], why, sizeof why);
  if (n_paths == 0) {
    snprintf(why, sizeof why, "a linked axis moves at most %d paths (PATH1+PATH2+...)",
             EXPT_AXIS_MAX_LINKED);
  } else if (why[0] != '\0') {
    /* what is wrong with a path, said above */
  } else if (eq[1] == '\0') {
    snprintf(why, sizeof why, "no values after '='");
  } else {
    int r = arg_range(eq + 1, &values, why, sizeof why);
    if (r == 0) values = arg_list(eq + 1, why, sizeof why);
    if (values != NULL) rc = add_axis(sw, paths, n_paths, NULL, values, why, sizeof why);
  }
  free(path);
  if (rc != 0) {
    if (strcmp(why, "out of memory") == 0) rc = RETRY_ENOMEM;
    retry_error_set(err, rc, "<command line>", "", -1, -1, "--sweep \"%s\": %s", shown, why);
  }
  return rc;
}

int expt_sweep_add_json(expt_sweep *sw, const json_t *block, retry_error *err) {
  for (size_t i = 0; i < json_array_size(block); i++) {
    const json_t *ax = json_array_get(block, i);
    const char *paths[EXPT_AXIS_MAX_LINKED];
    size_t n_paths = expt_axis_paths(ax, paths, EXPT_AXIS_MAX_LINKED);
    const char *label = json_string_value(json_object_get(ax, "label"));
    json_t *values = json_object_get(ax, "values");
    char why[160] = "";
    if (values != NULL) {
      values = json_deep_copy(values);
    } else {
      json_t *steps = json_object_get(ax, "steps");
      const char *scale = json_string_value(json_object_get(ax, "scale"));
      retry_error e;
      retry_error_clear(&e);
      values = expt_axis_range(json_object_get(ax, "from"), json_object_get(ax, "to"),
                               steps != NULL ? (long)json_integer_value(steps) : 2,
                               scale != NULL && strcmp(scale, "log") == 0, &e);
      if (values == NULL) snprintf(why, sizeof why, "%s", e.message);
    }
    int rc = values != NULL ? add_axis(sw, paths, n_paths, label, values, why, sizeof why)
                            : RETRY_ECONFIG;
    if (rc != 0) {
      /* The loader checked the block: only out of memory (or a misuse) gets here. */
      retry_error_set(err, strcmp(why, "out of memory") == 0 ? RETRY_ENOMEM : RETRY_ECONFIG, "",
                      "$.sweep", -1, -1, "%s", why);
      return err->code;
    }
  }
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Checking axes against a scenario, and the grid
 * =================================================================== */

/* Whether the paths a and b (the --set syntax) overlap: equal, or one inside the other. */
static bool paths_overlap(const char *a, const char *b) {
  if (strncmp(a, "$.", 2) == 0) a += 2;
  if (strncmp(b, "$.", 2) == 0) b += 2;
  size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
  if (strncmp(a, b, n) != 0) return false;
  const char *rest = na > nb ? a + n : b + n;
  return *rest == '\0' || *rest == '.' || *rest == '[';
}

/* A variant's own "set" of an axis overrides every point's value for that variant (its set
 * comes after the point's): its rows would carry values that did not run. Warns on f, once
 * per axis and variant. */
static void warn_variant_sets(const expt_scenario *s, const expt_sweep *sw, FILE *f) {
  const json_t *vars = json_object_get(expt_scenario_base_document(s), "variants");
  for (size_t a = 0; a < sw->n_axes; a++) {
    for (size_t i = 0; i < json_array_size(vars); i++) {
      const json_t *var = json_array_get(vars, i);
      const char *key;
      json_t *v;
      json_object_foreach(json_object_get(var, "set"), key, v) {
        size_t hit = 0;
        while (hit < sw->axes[a].n_paths && !paths_overlap(key, sw->axes[a].paths[hit]))
          hit++;
        if (hit == sw->axes[a].n_paths) continue;
        char shown[72], name[48], k[72];
        const char *vn = json_string_value(json_object_get(var, "name"));
        retry_json_printable(shown, sizeof shown, sw->axes[a].paths[hit], 64);
        retry_json_printable(name, sizeof name, vn != NULL ? vn : "?", 40);
        retry_json_printable(k, sizeof k, key, 64);
        fprintf(f,
                "retrysim: warning: %s: the sweep's \"%s\": variant \"%s\" sets \"%s\", which "
                "overrides every point's value in its runs (its rows show the axis's values, "
                "not what ran)\n",
                expt_scenario_source(s), shown, name, k);
        break;
      }
    }
  }
}

/* The error of path k of axis a reaching no value (miss). */
static int reach_error(const expt_sweep *sw, size_t a, size_t k, bool from_scenario,
                       const char *source, const expt_scenario_miss *miss, retry_error *err) {
  if (from_scenario) {
    char at[64]; /* two 20-digit indices fit */
    if (sw->axes[a].n_paths > 1)
      snprintf(at, sizeof at, "$.sweep[%zu].paths[%zu]", a, k);
    else
      snprintf(at, sizeof at, "$.sweep[%zu].path", a);
    retry_error_set(err, RETRY_ECONFIG, source, at, -1, -1,
                    "\"%s\" reaches no value%s (%s): a sweep changes values, it does not add "
                    "them",
                    miss->shown, miss->run, miss->why);
  } else {
    retry_error_set(err, RETRY_ECONFIG, "<command line>", "", -1, -1,
                    "--sweep \"%s\": reaches no value%s (%s): a sweep changes values, it "
                    "does not add them",
                    miss->shown, miss->run, miss->why);
  }
  return RETRY_ECONFIG;
}

int expt_sweep_check(const expt_sweep *sw, const expt_scenario *s, bool from_scenario,
                    const char *source, retry_error *err) {
  expt_scenario_miss miss;
  for (size_t a = 0; a < sw->n_axes; a++)
    for (size_t k = 0; k < sw->axes[a].n_paths; k++)
      if (!expt_scenario_path_reaches(s, sw->axes[a].paths[k], &miss))
        return reach_error(sw, a, k, from_scenario, source, &miss, err);
  return 0;
}

int expt_sweep_for_scenario(const expt_scenario *s, const expt_sweep *cmd, expt_sweep *out,
                           retry_error *err) {
  expt_sweep_init(out);
  bool from_cmd = cmd != NULL && cmd->n_axes > 0;
  int rc = 0;
  if (from_cmd) {
    for (size_t a = 0; rc == 0 && a < cmd->n_axes; a++) {
      char why[64] = "";
      json_t *v = json_deep_copy(cmd->axes[a].values);
      const expt_sweep_axis *ca = &cmd->axes[a];
      rc = v != NULL ? add_axis(out, (const char *const *)ca->paths, ca->n_paths, ca->label, v, why,
                                sizeof why)
                     : RETRY_ENOMEM;
      if (rc != 0)
        retry_error_set(err, RETRY_ENOMEM, "<command line>", "", -1, -1, "out of memory");
    }
  } else if (expt_scenario_sweep_block(s) != NULL) {
    rc = expt_sweep_add_json(out, expt_scenario_sweep_block(s), err);
  }
  if (rc == 0) rc = expt_sweep_check(out, s, !from_cmd, expt_scenario_source(s), err);
  if (rc != 0) expt_sweep_free(out);
  return rc;
}

/* Axis a's index at point i: the last axis fastest. */
static size_t axis_index(const expt_sweep *sw, size_t i, size_t a) {
  for (size_t b = sw->n_axes; b-- > a + 1;)
    i /= json_array_size(sw->axes[b].values);
  return i % json_array_size(sw->axes[a].values);
}

void expt_sweep_point(const expt_sweep *sw, size_t i, expt_set *sets) {
  assert(i < expt_sweep_n_points(sw));
  size_t n = 0;
  for (size_t a = 0; a < sw->n_axes; a++)
    for (size_t k = 0; k < sw->axes[a].n_paths; k++) {
      sets[n].path = sw->axes[a].paths[k];
      sets[n++].value = sw->axes[a].texts[axis_index(sw, i, a)];
    }
}

const json_t *expt_sweep_point_value(const expt_sweep *sw, size_t i, size_t a) {
  assert(i < expt_sweep_n_points(sw) && a < sw->n_axes);
  return json_array_get(sw->axes[a].values, axis_index(sw, i, a));
}

json_t *expt_sweep_point_json(const expt_sweep *sw, size_t i) {
  json_t *o = json_object();
  for (size_t a = 0; o != NULL && a < sw->n_axes; a++) {
    if (json_object_set(o, sw->axes[a].path,
                        json_array_get(sw->axes[a].values, axis_index(sw, i, a))) != 0) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

json_t *expt_sweep_axes_json(const expt_sweep *sw) {
  json_t *a = json_array();
  for (size_t k = 0; a != NULL && k < sw->n_axes; k++) {
    const expt_sweep_axis *ax = &sw->axes[k];
    json_t *o = json_pack("{s:s,s:O}", "path", ax->path, "values", ax->values);
    bool ok = o != NULL;
    /* A linked axis's name is its label, always written, with the paths it moves. */
    if (ax->label != NULL || ax->n_paths > 1)
      expt_json_put(o, "label", json_string(ax->label != NULL ? ax->label : ax->path), &ok);
    if (ax->n_paths > 1) {
      json_t *ps = json_array();
      for (size_t j = 0; ps != NULL && j < ax->n_paths; j++)
        if (json_array_append_new(ps, json_string(ax->paths[j])) != 0) ok = false;
      expt_json_put(o, "paths", ps, &ok);
    }
    if (!ok || json_array_append_new(a, o) != 0) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

/* }================================================================== */

/* {==================================================================
 * The study of a sweep
 * =================================================================== */

bool expt_sweep_wanted(const expt_scenario *s, const expt_sweep *cmd) {
  return (cmd != NULL && cmd->n_axes > 0) || expt_scenario_sweep_block(s) != NULL ||
         expt_scenario_search_block(s) != NULL;
}

static void print_error(FILE *f, const retry_error *e, const char *tail) {
  char buf[1200];
  retry_error_format(e, buf, sizeof buf);
  fprintf(f, "retrysim: %s%s\n", buf, tail != NULL ? tail : "");
}

/* " (at the sweep's point 3: a=1, b=\"x\")" into buf. */
static void point_tail(const expt_sweep *sw, const expt_set *sets, size_t p, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, " (at the sweep's point %zu:", p);
  for (size_t a = 0, first = 0; a < sw->n_axes && n < size; first += sw->axes[a++].n_paths) {
    /* A number as written (0.3, not the 17 digits that set it exactly), a string quoted. */
    const json_t *v = json_array_get(sw->axes[a].values, axis_index(sw, p, a));
    char text[256];
    if (json_is_string(v))
      snprintf(text, sizeof text, "%s", sets[first].value);
    else
      expt_output_value_text(v, text, sizeof text);
    n += (size_t)snprintf(buf + n, size - n, "%s %s=%s", a ? "," : "", sw->axes[a].path, text);
    /* A range whose step is not integral gives reals, also at its integral ends (2.0 of
     * 2:5:3, whose step is 1.5): say why a value that looks whole is not an integer. */
    const json_t *ax = sw->axes[a].values;
    if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) && n < size &&
        json_array_size(ax) >= 2) {
      double step =
          json_number_value(json_array_get(ax, 1)) - json_number_value(json_array_get(ax, 0));
      if (step != floor(step))
        n += (size_t)snprintf(buf + n, size - n,
                              " (a real: the axis steps by %g, so its values are not integers)",
                              step);
    }
  }
  if (n < size) snprintf(buf + n, size - n, ")");
}

/* Point p's scenario (sets: its overrides), checked as `run` checks the one it loads. Returns
 * the exit status, the error printed on f with the point's values. */
static int derive_point(const expt_scenario *s, const expt_sweep *sw, size_t p, const expt_set *sets,
                        uint64_t max_bytes, FILE *f, expt_scenario **out) {
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *d = expt_scenario_derive(s, sets, expt_sweep_n_sets(sw), &err);
  if (d != NULL && (expt_run_validate(d, expt_scenario_source(s), &err) != 0 ||
                    expt_scenario_check_memory(d, max_bytes, &err) != 0)) {
    expt_scenario_destroy(d);
    d = NULL;
  }
  *out = d;
  if (d != NULL) return EXPT_EXIT_OK;
  char tail[400];
  point_tail(sw, sets, p, tail, sizeof tail);
  print_error(f, &err, tail);
  return expt_run_exit_status(err.code);
}

/* The two ends of s's search, derived and checked as `run` checks a sweep's point, so that
 * validate refuses them and a search does not stop at its "to" after running "from". Every
 * value probed lies between them. Returns the exit status, the error printed on f. */
static int check_search_ends(const expt_scenario *s, uint64_t max_bytes, FILE *f) {
  retry_error err;
  retry_error_clear(&err);
  expt_search_spec spec;
  if (expt_search_spec_from_json(expt_scenario_search_block(s), &spec, &err) != 0) {
    print_error(f, &err, NULL);
    return expt_run_exit_status(err.code);
  }
  bool integer = spec.from.integer && spec.to.integer;
  int status = EXPT_EXIT_OK;
  for (int end = 0; end < 2 && status == EXPT_EXIT_OK; end++) {
    /* The value as a probe writes it (expt_search.c). */
    json_t *v = expt_axis_scalar_json(&spec.from, end == 0 ? spec.from.x : spec.to.x, integer);
    char *text = v != NULL ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    expt_scenario *d = NULL;
    if (text == NULL) {
      retry_error_set(&err, RETRY_ENOMEM, "", "", -1, -1, "out of memory");
    } else {
      expt_set set = {spec.path, text};
      d = expt_scenario_derive(s, &set, 1, &err);
      if (d != NULL && (expt_run_validate(d, expt_scenario_source(s), &err) != 0 ||
                        expt_scenario_check_memory(d, max_bytes, &err) != 0)) {
        expt_scenario_destroy(d);
        d = NULL;
      }
    }
    if (d == NULL) {
      char shown[128], tail[400];
      expt_output_value_text(v, shown, sizeof shown);
      snprintf(tail, sizeof tail, " (at the search's \"%s\": %s=%s)", end == 0 ? "from" : "to",
               spec.path, shown);
      print_error(f, &err, tail);
      status = expt_run_exit_status(err.code);
    }
    expt_scenario_destroy(d);
    free(text);
    json_decref(v);
  }
  expt_search_spec_free(&spec);
  return status;
}

int expt_sweep_check_study(const expt_scenario *s, const expt_sweep *cmd, uint64_t max_bytes,
                          bool for_plan, size_t *n_points, FILE *f) {
  *n_points = 1;
  if (expt_scenario_search_block(s) != NULL) {
    if (!for_plan) return check_search_ends(s, max_bytes, f);
    fprintf(f,
            "retrysim: %s: a scenario with a \"search\" cannot be split into shards (a "
            "search is adaptive: each probe depends on the last; run it on one machine, "
            "with -j)\n",
            expt_scenario_source(s));
    return EXPT_EXIT_USAGE;
  }
  if (!expt_sweep_wanted(s, cmd)) return EXPT_EXIT_OK;
  retry_error err;
  retry_error_clear(&err);
  expt_sweep sw;
  if (expt_sweep_for_scenario(s, cmd, &sw, &err) != 0) {
    print_error(f, &err, NULL);
    return expt_run_exit_status(err.code);
  }
  warn_variant_sets(s, &sw, f);
  *n_points = expt_sweep_n_points(&sw);
  expt_set sets[EXPT_SWEEP_MAX_SETS];
  int status = EXPT_EXIT_OK;
  for (size_t p = 0; status == EXPT_EXIT_OK && p < *n_points; p++) {
    expt_scenario *d = NULL;
    expt_sweep_point(&sw, p, sets);
    status = derive_point(s, &sw, p, sets, max_bytes, f, &d);
    expt_scenario_destroy(d);
  }
  expt_sweep_free(&sw);
  return status;
}

int expt_sweep_run_study(const expt_scenario *s, const expt_sweep *cmd,
                        const struct expt_study_spec *tmpl, uint64_t max_bytes,
                        const struct expt_run_opts *opts) {
  if (expt_scenario_search_block(s) != NULL) {
    if (cmd != NULL && cmd->n_axes > 0) {
      fprintf(opts->err,
              "retrysim: %s: --sweep cannot be combined with the scenario's "
              "\"search\" (a search runs over its own axis)\n",
              expt_scenario_source(s));
      return EXPT_EXIT_USAGE;
    }
    int status = check_search_ends(s, max_bytes, opts->err);
    return status != EXPT_EXIT_OK ? status : expt_search_run_study(s, tmpl, opts);
  }
  retry_error err;
  retry_error_clear(&err);
  expt_sweep sw;
  if (expt_sweep_for_scenario(s, cmd, &sw, &err) != 0) {
    print_error(opts->err, &err, NULL);
    return expt_run_exit_status(err.code);
  }
  warn_variant_sets(s, &sw, opts->err);
  size_t np = expt_sweep_n_points(&sw), na = expt_sweep_n_sets(&sw);
  /* Refused before the points are derived, which takes long for many of them. */
  if (expt_study_estimate_refuse(s, np, tmpl->reps, tmpl->shard_n, tmpl->jobs, tmpl->max_bytes,
                                 tmpl->max_runs, 0, opts->err) != EXPT_EXIT_OK) {
    expt_sweep_free(&sw);
    return EXPT_EXIT_USAGE;
  }
  json_t *axes_vals = json_array(); /* holds each point's values for the plan */
  expt_set *sets = calloc(np * na + 1, sizeof *sets);
  expt_study_point *points = calloc(np, sizeof *points);
  expt_scenario **scenarios = calloc(np, sizeof *scenarios);
  int status = EXPT_EXIT_OK;
  if (sets == NULL || points == NULL || scenarios == NULL) {
    fprintf(opts->err, "retrysim: out of memory planning a sweep of %zu points\n", np);
    status = EXPT_EXIT_RUNTIME;
  }
  /* Each point's scenario is derived once, before anything runs: a point whose values do not
   * validate stops the study before its first run. */
  /* Linked or labelled axes: the plan names the axes, not each path the points set. */
  json_t *axes = expt_sweep_has_named_axes(&sw) ? expt_sweep_axes_json(&sw) : NULL;
  if (expt_sweep_has_named_axes(&sw) && axes == NULL) status = EXPT_EXIT_RUNTIME;
  for (size_t p = 0; status == EXPT_EXIT_OK && p < np; p++) {
    expt_sweep_point(&sw, p, sets + p * na);
    json_t *vals = axes != NULL ? expt_sweep_point_json(&sw, p) : NULL;
    if (axes != NULL && (vals == NULL || json_array_append_new(axes_vals, vals) != 0)) {
      fprintf(opts->err, "retrysim: out of memory planning a sweep of %zu points\n", np);
      status = EXPT_EXIT_RUNTIME;
      break;
    }
    points[p] = (expt_study_point){sets + p * na, na, vals};
    status = derive_point(s, &sw, p, sets + p * na, max_bytes, opts->err, &scenarios[p]);
  }
  if (status == EXPT_EXIT_OK) {
    expt_study_spec spec = *tmpl;
    spec.base = s;
    spec.points = points;
    spec.n_points = np;
    spec.scenarios = (const expt_scenario *const *)scenarios;
    spec.axes = axes;
    status = expt_study_run(&spec, opts);
  }
  json_decref(axes);
  json_decref(axes_vals);
  for (size_t p = 0; scenarios != NULL && p < np; p++)
    expt_scenario_destroy(scenarios[p]);
  free(scenarios);
  free(points);
  free(sets);
  expt_sweep_free(&sw);
  return status;
}

/* }================================================================== */
