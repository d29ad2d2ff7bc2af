/*
 * expt_scenario_variants.c: the shapes of "variants" and "expect", checked with the base
 * document before any run is built, so that a bad variant or expectation is refused first.
 */
#include "expt/expt_scenario_int.h"

#include <math.h>
#include <string.h>

/* {==================================================================
 * Variants and expectations: shapes, checked with the base document
 * =================================================================== */

static const char *const variant_keys[] = {"name", "description", "set", "expect"};

/* A variant's "set": each key a path that does not reach "variants" or "expect" (a variant
 * cannot define variants, and its expectations have their own key). Values are anything:
 * they are validated where they land, in the variant's document. */
static bool check_set(scn_ctx *c, json_t *set) {
  if (!json_is_object(set)) {
    retry_json_fail_value(&c->j, "\"set\"", "an object {\"path\": value, ...}", set);
    return false;
  }
  for (void *it = json_object_iter(set); it != NULL; it = json_object_iter_next(set, it)) {
    const char *path = json_object_iter_key(it);
    char shown[72], head[64] = "";
    retry_error why;
    retry_error_clear(&why);
    retry_json_printable(shown, sizeof shown, path, 64);
    /* No [key=value] selectors here (allow_match false): a scenario's arrays are addressed by
     * position, and a selector could not say what to create when nothing matched. */
    if (expt__scenario_path_check(path, false, &why) != 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": %s", shown, why.message);
      return false;
    }
    expt__scenario_path_head(path, head, sizeof head);
    if (strcmp(head, "variants") == 0 || strcmp(head, "expect") == 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "bad path \"%s\": a variant may not change \"variants\" or \"expect\" "
                      "(it has its own \"expect\")",
                      shown);
      return false;
    }
    if (strcmp(head, "sweep") == 0 || strcmp(head, "search") == 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "bad path \"%s\": a variant may not change \"%s\" (every variant "
                      "runs at the same points)",
                      shown, head);
      return false;
    }
  }
  return true;
}

/* One variant of the base document: its keys, a unique valid name, the syntax of its set
 * paths and the shape of its expectations. Whether the paths apply, and whether the result
 * is valid, is found when its document is built (build_variant). */
static bool check_variant(scn_ctx *c, json_t *variants, size_t i) {
  json_t *v = json_array_get(variants, i);
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "each variant", "an object {\"name\": ..., \"set\": {...}}", v);
    return false;
  }
  const char *name = NULL, *desc = NULL;
  if (!expt__scenario_check_keys(c, v, variant_keys, SCN_N_OF(variant_keys), NULL) ||
      retry_json_require(&c->j, retry_json_get_string(&c->j, v, "name", &name), "name",
                         SCN_NAME_WHAT) != 1)
    return false;
  /* On failure the path is not popped: the error already holds a copy of it, and the whole
   * walk unwinds without reading the path again (scn_ctx's invariant). */
  size_t mark = retry_json_path_push_key(&c->j, "name");
  if (!expt__scenario_check_name(c, "variant", name)) return false;
  /* Earlier variants passed this function, so their "name" is a valid string. The scan is
   * quadratic, which does not matter for the tens of variants a scenario has. */
  for (size_t j = 0; j < i; j++) {
    json_t *other = json_object_get(json_array_get(variants, j), "name");
    if (strcmp(json_string_value(other), name) == 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG, "variant \"%s\" is defined twice (first at [%zu])",
                      name, j);
      return false;
    }
  }
  retry_json_path_pop(&c->j, mark);
  if (retry_json_get_string(&c->j, v, "description", &desc) < 0) return false;
  json_t *set = retry_json_field(v, "set");
  if (set != NULL) {
    mark = retry_json_path_push_key(&c->j, "set");
    if (!check_set(c, set)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  json_t *expect = retry_json_field(v, "expect");
  if (expect != NULL) {
    mark = retry_json_path_push_key(&c->j, "expect");
    if (!expt__scenario_check_expect(c, expect)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* "variants": a non-empty array (an empty one would make a scenario with no run). */
bool expt__scenario_check_variants(scn_ctx *c, json_t *variants) {
  if (!json_is_array(variants) || json_array_size(variants) == 0) {
    retry_json_fail_value(&c->j, "\"variants\"", "a non-empty array of variants", variants);
    return false;
  }
  for (size_t i = 0; i < json_array_size(variants); i++) {
    size_t mark = retry_json_path_push_index(&c->j, i);
    if (!check_variant(c, variants, i)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* The shapes of an expectation, for messages. Keep them in step with expt/expt_expect.h, which
 * defines what each shape means when a run is checked. */
#define EXPECT_WHAT                                                                           \
  "a number, string, boolean or null, [lo, hi], {\"min\": x, \"max\": y} or {\"approx\": x, " \
  "\"tol\": t}"

static const char *const range_keys[] = {"min", "max"};
static const char *const approx_keys[] = {"approx", "tol"};

/* An object expectation: {"min", "max"} (one or both) or {"approx", "tol"} (both). */
static bool check_expect_object(scn_ctx *c, json_t *v) {
  double lo = 0, hi = 0, x = 0;
  /* null is not "absent" here: expt_expect_check reads {"min": null} as malformed. */
  for (void *it = json_object_iter(v); it != NULL; it = json_object_iter_next(v, it)) {
    if (!json_is_null(json_object_iter_value(it))) continue;
    size_t mark = retry_json_path_push_key(&c->j, json_object_iter_key(it));
    retry_json_fail_value(&c->j, "an expectation's bound", "a number", json_object_iter_value(it));
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  /* Either key of the approx form makes this an approx object, so {"approx": 1, "max": 2}
   * is reported as a misplaced "max" rather than as a broken range. x only receives the
   * values to validate them: the check reads them again from the document. */
  if (json_object_get(v, "approx") != NULL || json_object_get(v, "tol") != NULL) {
    return retry_json_check_keys(&c->j, v, approx_keys, 2,
                                 "an {\"approx\", \"tol\"} expectation") &&
           retry_json_require(&c->j,
                              retry_json_get_number(&c->j, v, "approx", -HUGE_VAL, false, HUGE_VAL,
                                                    false, "a number", &x),
                              "approx", "the expected value") == 1 &&
           retry_json_require(&c->j,
                              retry_json_get_number(&c->j, v, "tol", 0, false, HUGE_VAL, false,
                                                    "a number >= 0", &x),
                              "tol", "the absolute tolerance, a number >= 0") == 1;
  }
  if (!retry_json_check_keys(&c->j, v, range_keys, 2, "a {\"min\", \"max\"} expectation"))
    return false;
  int has_lo =
      retry_json_get_number(&c->j, v, "min", -HUGE_VAL, false, HUGE_VAL, false, "a number", &lo);
  if (has_lo < 0) return false;
  int has_hi =
      retry_json_get_number(&c->j, v, "max", -HUGE_VAL, false, HUGE_VAL, false, "a number", &hi);
  if (has_hi < 0) return false;
  /* {} would be a range without bounds, which every value passes: that cannot be what the
   * user meant, so it is refused as not being an expectation at all. */
  if (has_lo == 0 && has_hi == 0) {
    retry_json_fail_value(&c->j, "an expectation", EXPECT_WHAT, v);
    return false;
  }
  if (has_lo == 1 && has_hi == 1 && lo > hi) {
    size_t mark = retry_json_path_push_key(&c->j, "max");
    retry_json_fail(&c->j, RETRY_ECONFIG, "\"max\" must be >= \"min\"");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

/* The shapes are those expt_expect_check (expt/expt_expect.c) compares, null included (a value
 * that must be null); only the shape is checked here, before anything runs.
 * Why check here as well as in expt_expect_validate: the loader's messages carry the JSON path
 * and the variant's name, and a bad expectation must stop the scenario before a long run rather
 * than fail after it. An inverted range [hi, lo] would never pass, so it is refused too.
 * expt_run_validate still calls expt_expect_validate after loading, as a second guard. */
static bool check_expect_value(scn_ctx *c, json_t *v) {
  if (json_is_number(v) || json_is_string(v) || json_is_boolean(v) || json_is_null(v)) return true;
  if (json_is_object(v)) return check_expect_object(c, v);
  if (json_is_array(v) && json_array_size(v) == 2 && json_is_number(json_array_get(v, 0)) &&
      json_is_number(json_array_get(v, 1))) {
    if (json_number_value(json_array_get(v, 0)) <= json_number_value(json_array_get(v, 1)))
      return true;
    retry_json_fail(&c->j, RETRY_ECONFIG, "an expectation [lo, hi] needs lo <= hi");
    return false;
  }
  retry_json_fail_value(&c->j, "an expectation", EXPECT_WHAT, v);
  return false;
}

/* "expect": each key a path (selectors allowed), each value one of the shapes. The paths
 * are not resolved here: they name things in the run's summary, which does not exist yet. */
bool expt__scenario_check_expect(scn_ctx *c, json_t *expect) {
  if (!json_is_object(expect)) {
    retry_json_fail_value(&c->j, "\"expect\"", "an object {\"summary path\": expectation, ...}",
                          expect);
    return false;
  }
  /* The key is pushed before its syntax is checked, so a bad path is reported at itself:
   * $.expect["calls..ok"]. */
  for (void *it = json_object_iter(expect); it != NULL; it = json_object_iter_next(expect, it)) {
    const char *path = json_object_iter_key(it);
    size_t mark = retry_json_path_push_key(&c->j, path);
    char shown[72];
    retry_error why;
    retry_error_clear(&why);
    if (expt__scenario_path_check(path, true, &why) != 0) {
      retry_json_printable(shown, sizeof shown, path, 64);
      retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": %s", shown, why.message);
      return false;
    }
    if (!check_expect_value(c, json_object_iter_value(it))) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */
