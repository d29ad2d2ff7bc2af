/*
 * expt_scenario_study.c: the loader's part of the top-level keys of a study that belong to
 * sweeps and searches: "sweep" and "search", their shapes checked with every document (as
 * "variants" and "expect" are), and once every run was built, that their paths reach a value
 * in every run's document (expt__scenario_check_axes). What they mean is expt_sweep.h's and
 * expt_search.h's; the values and limits both share are expt_axis.h's, so that the loader
 * includes neither.
 */
#include "expt/expt_scenario_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expt/expt_axis.h"

/* {==================================================================
 * Unknown keys (used for the top level, variants and the study blocks)
 * =================================================================== */

/* The list alone, "key not one of: a b c" (the path names the key), when the comma-separated
 * one does not fit: the top level's 17 keys need it. Returns whether it fitted (and failed). */
static bool fail_spaced(scn_ctx *c, const char *const *allowed, size_t n) {
  char msg[sizeof c->j.e.message];
  size_t pre = c->j.prefix != NULL ? strlen(c->j.prefix) : 0, len = 0;
  size_t room = pre < sizeof msg - 32 ? sizeof msg - pre : 32;
  len = (size_t)snprintf(msg, sizeof msg, "key not one of:");
  for (size_t i = 0; i < n && len < room; i++)
    len += (size_t)snprintf(msg + len, sizeof msg - len, " %s", allowed[i]);
  if (len >= room) return false;
  retry_json_fail(&c->j, RETRY_ECONFIG, "%s", msg);
  return true;
}

bool expt__scenario_check_keys(scn_ctx *c, json_t *obj, const char *const *allowed, size_t n,
                               const char *where) {
  for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it)) {
    const char *key = json_object_iter_key(it);
    if (retry_json_key_in(key, allowed, n)) continue;
    size_t mark = retry_json_path_push_key(&c->j, key);
    bool case_only = false;
    const char *near = retry_json_suggest(key, allowed, n, &case_only);
    char shown[48], list[512];
    retry_json_printable(shown, sizeof shown, key, 32);
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof list; i++)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", allowed[i]);
    /* Whether a comma-separated form of retry_json_fail_unknown_key fits (the same sums as
     * there): then it says it best. */
    size_t pre = c->j.prefix != NULL ? strlen(c->j.prefix) : 0;
    size_t room = pre < sizeof c->j.e.message - 32 ? sizeof c->j.e.message - pre : 32;
    size_t head = where != NULL ? strlen("key \"\" is not allowed in ; allowed: ") + strlen(where)
                                : strlen("unknown key \"\"; allowed: ");
    bool fits = head + strlen(shown) + len < room ||
                (where == NULL && strlen("key not one of: ") + len < room);
    if (near != NULL) {
      if (where != NULL)
        retry_json_fail(&c->j, RETRY_ECONFIG,
                        "key \"%s\" is not allowed in %s; did you mean \"%s\"?%s", shown, where,
                        near, case_only ? " (keys are case-sensitive)" : "");
      else
        retry_json_fail(&c->j, RETRY_ECONFIG, "unknown key \"%s\"; did you mean \"%s\"?%s", shown,
                        near, case_only ? " (keys are case-sensitive)" : "");
    } else if (fits || where != NULL || !fail_spaced(c, allowed, n)) {
      retry_json_fail_unknown_key(&c->j, key, allowed, n, where);
    }
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

/* }================================================================== */

/* One path a sweep or a search may change (at the JSON path the caller pushed): the --set
 * syntax, and not inside the keys that define runs and studies. */
static bool check_one_path(scn_ctx *c, const char *path) {
  char shown[72], head[64] = "";
  retry_error why;
  retry_error_clear(&why);
  retry_json_printable(shown, sizeof shown, path, 64);
  if (expt__scenario_path_check(path, false, &why) != 0) {
    retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": %s", shown, why.message);
    return false;
  }
  expt__scenario_path_head(path, head, sizeof head);
  if (expt_axis_reserved(head) != NULL) {
    retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": \"%s\" cannot be varied", shown, head);
    return false;
  }
  return true;
}

static bool check_axis_path(scn_ctx *c, json_t *obj) {
  const char *path = NULL;
  if (retry_json_require(&c->j, retry_json_get_string(&c->j, obj, "path", &path), "path",
                         "the --set path of the value to vary, such as "
                         "\"clients.web.arrival.rate\"") != 1)
    return false;
  size_t mark = retry_json_path_push_key(&c->j, "path");
  if (!check_one_path(c, path)) return false;
  retry_json_path_pop(&c->j, mark);
  return true;
}

static const char *const axis_keys[] = {"path",  "paths", "label", "values",
                                        "from",  "to",    "steps", "scale"};
static const char *const scale_names[] = {"linear", "log"};

/* One axis: {"path", "values": [...]} or {"path", "from", "to", "steps", "scale"}. */
static bool check_axis(scn_ctx *c, json_t *ax) {
  if (!json_is_object(ax)) {
    retry_json_fail_value(&c->j, "each axis",
                          "an object {\"path\": ..., \"values\": [...]} or {\"path\": ..., "
                          "\"from\": ..., \"to\": ..., \"steps\": N}",
                          ax);
    return false;
  }
  if (!expt__scenario_check_keys(c, ax, axis_keys, SCN_N_OF(axis_keys), "a sweep's axis") ||
      !expt__scenario_check_axis_label(c, ax))
    return false;
  if (retry_json_field(ax, "paths") != NULL) {
    if (!expt__scenario_check_linked_paths(c, ax, check_one_path)) return false;
  } else if (!check_axis_path(c, ax)) {
    return false;
  }
  json_t *values = retry_json_field(ax, "values");
  bool range = retry_json_field(ax, "from") != NULL || retry_json_field(ax, "to") != NULL ||
               retry_json_field(ax, "steps") != NULL || retry_json_field(ax, "scale") != NULL;
  if (values != NULL && range) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "an axis has either \"values\" or \"from\", \"to\" and \"steps\", not both");
    return false;
  }
  if (values != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "values");
    if (!json_is_array(values) || json_array_size(values) == 0 ||
        json_array_size(values) > EXPT_AXIS_MAX_STEPS) {
      retry_json_fail_value(&c->j, "\"values\"", "a non-empty array of values (at most 10000)",
                            values);
      return false;
    }
    for (size_t i = 0; i < json_array_size(values); i++) {
      if (!json_is_null(json_array_get(values, i))) continue;
      retry_json_path_push_index(&c->j, i);
      retry_json_fail(&c->j, RETRY_ECONFIG, "a sweep's value cannot be null");
      return false;
    }
    retry_json_path_pop(&c->j, mark);
    return true;
  }
  int64_t steps = 0;
  int scale = 0;
  if (retry_json_require(&c->j, retry_json_field(ax, "from") != NULL, "from",
                         "the first value, a number or a string such as \"400/s\"") != 1 ||
      retry_json_require(&c->j, retry_json_field(ax, "to") != NULL, "to",
                         "the last value, like \"from\"") != 1 ||
      retry_json_require(&c->j,
                         retry_json_get_int(&c->j, ax, "steps", 1, EXPT_AXIS_MAX_STEPS,
                                            "an integer from 1 to 10000", &steps),
                         "steps", "the number of values, >= 2") != 1 ||
      retry_json_get_enum(&c->j, ax, "scale", scale_names, SCN_N_OF(scale_names), &scale) < 0)
    return false;
  retry_error why;
  retry_error_clear(&why);
  json_t *v = expt_axis_range(retry_json_field(ax, "from"), retry_json_field(ax, "to"), (long)steps,
                              scale == 1, &why);
  if (v == NULL) {
    retry_json_fail(&c->j, why.code == RETRY_ENOMEM ? RETRY_ENOMEM : RETRY_ECONFIG, "%s",
                    why.message);
    return false;
  }
  json_decref(v);
  return true;
}

bool expt__scenario_check_sweep(scn_ctx *c, json_t *sweep) {
  if (!json_is_array(sweep) || json_array_size(sweep) == 0 ||
      json_array_size(sweep) > EXPT_AXIS_MAX_AXES) {
    retry_json_fail_value(&c->j, "\"sweep\"", "a non-empty array of at most 8 axes", sweep);
    return false;
  }
  double points = 1;
  for (size_t i = 0; i < json_array_size(sweep); i++) {
    json_t *ax = json_array_get(sweep, i);
    size_t mark = retry_json_path_push_index(&c->j, i);
    if (!check_axis(c, ax)) return false;
    if (!expt__scenario_check_swept_twice(c, sweep, i)) return false;
    json_t *values = json_object_get(ax, "values");
    points *= values != NULL ? (double)json_array_size(values)
                             : (double)json_integer_value(json_object_get(ax, "steps"));
    if (points > EXPT_AXIS_MAX_POINTS) {
      retry_json_fail(&c->j, RETRY_ECONFIG, "the grid would have more than %d points",
                      EXPT_AXIS_MAX_POINTS);
      return false;
    }
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

static const char *const search_keys[] = {"path", "from",     "to",     "metric",  "p",
                                          "reps", "max_reps", "probes", "at_least", "at_most"};

bool expt__scenario_check_search(scn_ctx *c, json_t *search) {
  if (!json_is_object(search)) {
    retry_json_fail_value(&c->j, "\"search\"",
                          "an object {\"path\": ..., \"from\": ..., \"to\": ..., \"p\": 0.95}",
                          search);
    return false;
  }
  const char *metric = NULL;
  double p = 0;
  int64_t reps = EXPT_AXIS_SEARCH_DEFAULT_REPS, max_reps = 0, probes = 0;
  if (!expt__scenario_check_keys(c, search, search_keys, SCN_N_OF(search_keys), "\"search\"") ||
      !check_axis_path(c, search) ||
      retry_json_require(&c->j, retry_json_field(search, "from") != NULL, "from",
                         "the lowest value searched, a number or a string such as \"400/s\"") !=
          1 ||
      retry_json_require(&c->j, retry_json_field(search, "to") != NULL, "to",
                         "the highest value searched, like \"from\"") != 1 ||
      retry_json_get_string(&c->j, search, "metric", &metric) < 0 ||
      retry_json_get_number(&c->j, search, "p", 0, true, 1, true, "a probability in (0, 1)", &p) <
          0 ||
      retry_json_get_int(&c->j, search, "reps", 1, EXPT_AXIS_SEARCH_MAX_REPS,
                         "an integer from 1 to 100000", &reps) < 0 ||
      retry_json_get_int(&c->j, search, "max_reps", 1, EXPT_AXIS_SEARCH_MAX_REPS,
                         "an integer from 1 to 100000", &max_reps) < 0 ||
      retry_json_get_int(&c->j, search, "probes", 2, EXPT_AXIS_SEARCH_MAX_PROBES,
                         "an integer from 2 to 64", &probes) < 0)
    return false;
  if (max_reps != 0 && max_reps < reps) {
    retry_json_fail_field(&c->j, search, "max_reps", "at least \"reps\"");
    return false;
  }
  /* A threshold makes a number (a window's goodput, say) a success or not; one only. */
  double bound = 0;
  if (retry_json_get_number(&c->j, search, "at_least", -1e300, false, 1e300, false, "a number",
                            &bound) < 0 ||
      retry_json_get_number(&c->j, search, "at_most", -1e300, false, 1e300, false, "a number",
                            &bound) < 0)
    return false;
  if (retry_json_field(search, "at_least") != NULL && retry_json_field(search, "at_most") != NULL) {
    retry_json_fail_field(&c->j, search, "at_most", "absent when \"at_least\" is given (one bound)");
    return false;
  }
  if (metric != NULL && expt__scenario_path_check(metric, false, NULL) != 0) {
    size_t mark = retry_json_path_push_key(&c->j, "metric");
    retry_json_fail_value(&c->j, "\"metric\"",
                          "the path of a boolean in a run's summary, such as "
                          "\"recovery.recovered\"",
                          json_object_get(search, "metric"));
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  expt_axis_scalar lo, hi;
  retry_error why;
  retry_error_clear(&why);
  const char *bad = NULL;
  if (expt_axis_scalar_parse(json_object_get(search, "from"), &lo, &why) != 0)
    bad = "from";
  else if (expt_axis_scalar_parse(json_object_get(search, "to"), &hi, &why) != 0)
    bad = "to";
  if (bad != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, bad);
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s", why.message);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  if (lo.text != hi.text || strcmp(lo.unit, hi.unit) != 0) {
    retry_json_fail_field(&c->j, search, "to", "like \"from\": both numbers or the same unit");
    return false;
  }
  if (!(hi.x > lo.x)) {
    retry_json_fail_field(&c->j, search, "to", "more than \"from\"");
    return false;
  }
  return true;
}

bool expt__scenario_check_study_pair(scn_ctx *c, json_t *doc) {
  if (retry_json_field(doc, "sweep") == NULL || retry_json_field(doc, "search") == NULL)
    return true;
  size_t mark = retry_json_path_push_key(&c->j, "search");
  retry_json_fail(&c->j, RETRY_ECONFIG,
                  "a scenario has a \"sweep\" or a \"search\", not both (a search runs over one "
                  "axis of its own)");
  retry_json_path_pop(&c->j, mark);
  return false;
}

bool expt_scenario_path_reaches(const expt_scenario *s, const char *path,
                                expt_scenario_miss *miss) {
  for (size_t r = 0; r < expt_scenario_n_runs(s); r++) {
    retry_error why;
    retry_error_clear(&why);
    if (expt_scenario_path_get(expt_scenario_document(s, r), path, &why) != NULL) continue;
    snprintf(miss->why, sizeof miss->why, "%s", why.message);
    retry_json_printable(miss->shown, sizeof miss->shown, path, 64);
    miss->run[0] = '\0';
    if (expt_scenario_has_variants(s)) {
      char name[48];
      retry_json_printable(name, sizeof name, expt_scenario_run_name(s, r), 40);
      snprintf(miss->run, sizeof miss->run, " in variant \"%s\"", name);
    }
    return false;
  }
  return true;
}

int expt__scenario_check_axes(const expt_scenario *s, retry_error *err) {
  /* The loader checked the block's shape: every axis has a string "path" or "paths". */
  const json_t *block = expt_scenario_sweep_block(s);
  expt_scenario_miss miss;
  for (size_t a = 0; a < json_array_size(block); a++) {
    const char *paths[EXPT_AXIS_MAX_LINKED];
    const json_t *ax = json_array_get(block, a);
    size_t n = expt_axis_paths(ax, paths, EXPT_AXIS_MAX_LINKED);
    for (size_t k = 0; k < n; k++) {
      if (expt_scenario_path_reaches(s, paths[k], &miss)) continue;
      char at[64]; /* two 20-digit indices fit */
      if (json_object_get(ax, "paths") != NULL)
        snprintf(at, sizeof at, "$.sweep[%zu].paths[%zu]", a, k);
      else
        snprintf(at, sizeof at, "$.sweep[%zu].path", a);
      retry_error_set(err, RETRY_ECONFIG, expt_scenario_source(s), at, -1, -1,
                      "\"%s\" reaches no value%s (%s): a sweep changes values, it does not add "
                      "them",
                      miss.shown, miss.run, miss.why);
      return RETRY_ECONFIG;
    }
  }
  block = expt_scenario_search_block(s);
  if (block != NULL) {
    const char *path = json_string_value(json_object_get(block, "path"));
    if (!expt_scenario_path_reaches(s, path, &miss)) {
      retry_error_set(err, RETRY_ECONFIG, expt_scenario_source(s), "$.search.path", -1, -1,
                      "\"%s\" reaches no value%s (%s): a search changes a value, it does not "
                      "add one",
                      miss.shown, miss.run, miss.why);
      return RETRY_ECONFIG;
    }
  }
  return 0;
}
