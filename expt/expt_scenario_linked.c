/*
 * expt_scenario_linked.c: the loader's checks of a sweep axis's "label" and of a linked axis,
 * {"paths": [...], "values": [...]}, whose one list of values moves every path together (the
 * same rate on three edges is one axis, not a 3-axis grid). Each path is checked as a "path"
 * is; no path may be swept twice, within an axis or across axes.
 */
#include "expt/expt_scenario_int.h"

#include <ctype.h>
#include <string.h>

#include "expt/expt_axis.h"

bool expt__scenario_check_axis_label(scn_ctx *c, json_t *ax) {
  json_t *v = retry_json_field(ax, "label");
  if (v == NULL) return true;
  const char *s = json_string_value(v);
  bool ok = s != NULL && s[0] != '\0' && strlen(s) <= EXPT_AXIS_MAX_LABEL;
  for (const char *p = s; ok && *p != '\0'; p++)
    ok = isalnum((unsigned char)*p) || strchr("_-.:/()%+#", *p) != NULL;
  if (ok) return true;
  size_t mark = retry_json_path_push_key(&c->j, "label");
  retry_json_fail_value(&c->j, "\"label\"",
                        "the axis's name in tables and pictures: 1 to 48 letters, digits or "
                        "_-.:/()%+# (no spaces: it names a column of points.csv)",
                        v);
  retry_json_path_pop(&c->j, mark);
  return false;
}

bool expt__scenario_check_linked_paths(scn_ctx *c, json_t *ax,
                                       bool (*check_one)(scn_ctx *c, const char *path)) {
  if (retry_json_field(ax, "path") != NULL) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "an axis has \"path\" (one value) or \"paths\" (several moved together), "
                    "not both");
    return false;
  }
  json_t *paths = retry_json_field(ax, "paths");
  size_t mark = retry_json_path_push_key(&c->j, "paths");
  if (!json_is_array(paths) || json_array_size(paths) < 2 ||
      json_array_size(paths) > EXPT_AXIS_MAX_LINKED) {
    retry_json_fail_value(&c->j, "\"paths\"",
                          "an array of 2 to 8 --set paths that take the axis's values together "
                          "(one path: \"path\")",
                          paths);
    return false;
  }
  for (size_t i = 0; i < json_array_size(paths); i++) {
    const char *p = json_string_value(json_array_get(paths, i));
    size_t at = retry_json_path_push_index(&c->j, i);
    if (p == NULL) {
      retry_json_fail_value(&c->j, "each path", "a string such as \"clients.web.arrival.rate\"",
                            json_array_get(paths, i));
      return false;
    }
    if (!check_one(c, p)) return false;
    for (size_t k = 0; k < i; k++) {
      if (strcmp(json_string_value(json_array_get(paths, k)), p) != 0) continue;
      retry_json_fail(&c->j, RETRY_ECONFIG, "the path is listed twice (first at [%zu])", k);
      return false;
    }
    retry_json_path_pop(&c->j, at);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

bool expt__scenario_check_swept_twice(scn_ctx *c, json_t *sweep, size_t i) {
  const char *mine[EXPT_AXIS_MAX_LINKED], *theirs[EXPT_AXIS_MAX_LINKED];
  size_t n = expt_axis_paths(json_array_get(sweep, i), mine, EXPT_AXIS_MAX_LINKED);
  for (size_t j = 0; j < i; j++) {
    size_t m = expt_axis_paths(json_array_get(sweep, j), theirs, EXPT_AXIS_MAX_LINKED);
    for (size_t a = 0; a < n; a++)
      for (size_t b = 0; b < m; b++) {
        if (strcmp(mine[a], theirs[b]) != 0) continue;
        /* The error stays at the path pushed here: the first error wins, nothing pops it. */
        retry_json_path_push_key(&c->j, n > 1 ? "paths" : "path");
        if (n > 1) retry_json_path_push_index(&c->j, a);
        retry_json_fail(&c->j, RETRY_ECONFIG, "the path \"%s\" is swept twice (first at [%zu])",
                        mine[a], j);
        return false;
      }
  }
  return true;
}
