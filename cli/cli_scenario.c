/*
 * cli_scenario.c: loading a scenario: the file, its SHA-256, the command line's --set
 * overrides, the variants with their own overrides and expectations, and the accessors.
 *
 * Owns the document (after --set), one resolved document, config and expectation set per run.
 * Invariant: a cli_scenario exists only when every run's document converted without error,
 * so nothing starts unless the whole file is right.
 */
#include "cli/cli_scenario_int.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One run: the base document, or one variant of it. In a scenario abandoned half-way any
 * member may still be NULL; cli_scenario_destroy relies on every release call accepting that. */
typedef struct scn_run {
  char *name;                /* the variant's name, or the scenario's */
  model_config *cfg;         /* converted from doc */
  cli_recovery_cfg recovery; /* how its recovery is judged */
  json_t *doc;               /* the resolved document */
  json_t *expect;            /* merged expectations, NULL when none */
} scn_run;

struct cli_scenario {
  char *name;        /* the base document's name */
  char sha256[65];   /* of the bytes as read */
  json_t *doc;       /* the document after --set */
  bool has_variants; /* "variants" was present: the runs are the variants */
  scn_run *runs;     /* n_runs entries, zeroed until each is built */
  size_t n_runs;     /* 1 without variants; set only once runs exists */
};

/* {==================================================================
 * Allocation, with a hook for the tests' failure injection
 * =================================================================== */

/* The hook is process-wide state, which sim/ otherwise avoids: the loader's API takes no
 * allocator (the command line has no use for one), and the only caller that wants failures
 * injected is the test, which runs one thread. */
static bool (*fail_hook)(void *ctx);
static void *fail_hook_ctx;

void cli__scenario_set_fail_hook(bool (*fail)(void *ctx), void *ctx) {
  fail_hook = fail;
  fail_hook_ctx = ctx;
}

/* Asked before every allocation of the loader. The chaos test in tests/test_cli_scenario.c
 * fails the Nth allocation for N = 0, 1, 2, ... and checks that each failure is reported as
 * RETRY_ENOMEM and leaks nothing, so an allocation that bypassed this hook would be a failure
 * path the test never exercises. */
static bool should_fail(void) { return fail_hook != NULL && fail_hook(fail_hook_ctx); }

/* A zero size is bumped to 1: malloc(0) may return NULL, which a caller would take for out of
 * memory. No caller means to ask for 0 bytes, but one that did must not fail spuriously. */
void *cli__scenario_malloc(size_t size) { return should_fail() ? NULL : malloc(size ? size : 1); }

void *cli__scenario_calloc(size_t n, size_t size) {
  return should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

char *cli__scenario_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = cli__scenario_malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

/* libretry's allocator interface (malloc/realloc/free with a context), wired to the same hook,
 * so a policy loaded by retry_config_load_* fails under the test exactly like the rest of the
 * loader. Frees never fail, and the context is unused because the hook's state is global. */
static void *hook_malloc(size_t size, void *ctx) {
  (void)ctx;
  return cli__scenario_malloc(size);
}

static void *hook_realloc(void *p, size_t size, void *ctx) {
  (void)ctx;
  return should_fail() ? NULL : realloc(p, size);
}

static void hook_free(void *p, void *ctx) {
  (void)ctx;
  free(p);
}

static const retry_allocator hook_alloc = {hook_malloc, hook_realloc, hook_free, NULL};

/* Without a hook, NULL tells libretry to use its default allocator: the production path pays
 * nothing for the test facility. */
const retry_allocator *cli__scenario_retry_alloc(void) {
  return fail_hook != NULL ? &hook_alloc : NULL;
}

/* }================================================================== */

/* {==================================================================
 * Errors outside a conversion (reading, parsing, --set)
 * =================================================================== */

/* Every error here goes through retry_error_set (retry_json.h), which keeps the first error:
 * a cleanup path that fails after the real error (out of memory while unwinding, say) must not
 * replace the message that explains the cause. A conversion's error is copied over whole, the
 * same way. Syntax errors are reported by retry_json_error_syntax, as in the service config
 * loader: a duplicate key is one, with its line and column (which copy should win is a guess
 * we refuse to make). */
static void copy_error(retry_error *err, const retry_error *e) {
  retry_error_set(err, e->code, e->source, e->path, e->line, e->column, "%s", e->message);
}

/* }================================================================== */

/* {==================================================================
 * Overrides: --set and a variant's "set"
 * =================================================================== */

/* VALUE is JSON when it parses as JSON ("4", "true", "{\"dist\": ...}", "null"), else a
 * string ("2s", "lifo"), so that the common cases need no shell quoting of JSON quotes.
 * A NULL value (the API's way to remove a key) becomes JSON null. Duplicate keys are refused as
 * in the file; such a value, like any invalid JSON, then falls back to a string, so the mistake
 * surfaces in validation as a value of the wrong type. json_string fails on bytes that are not
 * UTF-8 (and when out of memory, which the caller cannot tell apart). */
static json_t *set_value(const char *text) {
  if (text == NULL) return json_null();
  json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
  return v != NULL ? v : json_string(text);
}

/* --set overrides, in order, on the parsed document. They change the document itself: what
 * the runs record as their document is the scenario as it was run. The paths are the
 * command line's, so errors name "<command line>" and quote the path; a wrong value (as
 * opposed to a wrong path) is found later by validation, at its place in the document. */
static bool apply_sets(json_t *doc, const cli_set *sets, size_t n_sets, retry_error *err) {
  for (size_t i = 0; i < n_sets; i++) {
    assert(sets[i].path != NULL);
    char shown[72], why[128] = "";
    /* The path is cut for display: the message has 160 bytes and needs room for the reason. */
    retry_json_printable(shown, sizeof shown, sets[i].path, 64);
    json_t *v = set_value(sets[i].value);
    if (v == NULL) {
      retry_error_set(err, RETRY_ECONFIG, "<command line>", "", -1, -1,
                      "--set \"%s\": the value is not valid UTF-8", shown);
      return false;
    }
    /* path_set consumes v whatever it returns, so no error path below releases it. On an error
     * the document may already hold intermediate objects that path_set created; that is
     * harmless because the caller destroys the whole scenario. */
    int rc = cli__scenario_path_set(doc, sets[i].path, v, why, sizeof why);
    if (rc == RETRY_ENOMEM) {
      retry_error_set(err, RETRY_ENOMEM, "<command line>", "", -1, -1,
                      "out of memory applying --set");
      return false;
    }
    if (rc != RETRY_OK) {
      retry_error_set(err, RETRY_ECONFIG, "<command line>", "", -1, -1, "--set \"%s\": %s", shown,
                      why);
      return false;
    }
  }
  return true;
}

/* }================================================================== */

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
    char shown[72], why[128], head[64] = "";
    retry_json_printable(shown, sizeof shown, path, 64);
    /* No [key=value] selectors here (allow_match false): a scenario's arrays are addressed by
     * position, and a selector could not say what to create when nothing matched. */
    if (!cli__scenario_path_check(path, false, why, sizeof why)) {
      retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": %s", shown, why);
      return false;
    }
    cli__scenario_path_head(path, head, sizeof head);
    if (strcmp(head, "variants") == 0 || strcmp(head, "expect") == 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "bad path \"%s\": a variant may not change \"variants\" or \"expect\" "
                      "(it has its own \"expect\")",
                      shown);
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
  if (!retry_json_check_keys(&c->j, v, variant_keys, SCN_N_OF(variant_keys), NULL) ||
      retry_json_require(&c->j, retry_json_get_string(&c->j, v, "name", &name), "name",
                         SCN_NAME_WHAT) != 1)
    return false;
  /* On failure the path is not popped: the error already holds a copy of it, and the whole
   * walk unwinds without reading the path again (scn_ctx's invariant). */
  size_t mark = retry_json_path_push_key(&c->j, "name");
  if (!cli__scenario_check_name(c, "variant", name)) return false;
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
    if (!cli__scenario_check_expect(c, expect)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* "variants": a non-empty array (an empty one would make a scenario with no run). */
bool cli__scenario_check_variants(scn_ctx *c, json_t *variants) {
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

/* The shapes of an expectation, for messages. Keep them in step with cli/cli_expect.h, which
 * defines what each shape means when a run is checked. */
#define EXPECT_WHAT                                                                           \
  "a number, string, boolean or null, [lo, hi], {\"min\": x, \"max\": y} or {\"approx\": x, " \
  "\"tol\": t}"

static const char *const range_keys[] = {"min", "max"};
static const char *const approx_keys[] = {"approx", "tol"};

/* An object expectation: {"min", "max"} (one or both) or {"approx", "tol"} (both). */
static bool check_expect_object(scn_ctx *c, json_t *v) {
  double lo = 0, hi = 0, x = 0;
  /* null is not "absent" here: cli_expect_check reads {"min": null} as malformed. */
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

/* The shapes are those cli_expect_check (cli/cli_expect.c) compares, null included (a value
 * that must be null); only the shape is checked here, before anything runs.
 * Why check here as well as in cli_expect_validate: the loader's messages carry the JSON path
 * and the variant's name, and a bad expectation must stop the scenario before a long run rather
 * than fail after it. An inverted range [hi, lo] would never pass, so it is refused too.
 * cli_run_validate still calls cli_expect_validate after loading, as a second guard. */
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
bool cli__scenario_check_expect(scn_ctx *c, json_t *expect) {
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
    char shown[72], why[128];
    if (!cli__scenario_path_check(path, true, why, sizeof why)) {
      retry_json_printable(shown, sizeof shown, path, 64);
      retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": %s", shown, why);
      return false;
    }
    if (!check_expect_value(c, json_object_iter_value(it))) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Building the runs
 * =================================================================== */

/* Frees what exists: a scenario abandoned half-way by load_buffer has zeroed runs past the
 * point of failure, and NULL members are no-ops for every function called here.
 * n_runs is set only after runs was allocated, so a scenario that failed earlier has no runs
 * to walk. Documents are released with json_decref: the base run shares s->doc by reference. */
void cli_scenario_destroy(cli_scenario *s) {
  if (s == NULL) return;
  for (size_t i = 0; i < s->n_runs; i++) {
    free(s->runs[i].name);
    model_config_destroy(s->runs[i].cfg);
    json_decref(s->runs[i].doc);
    json_decref(s->runs[i].expect);
  }
  free(s->runs);
  free(s->name);
  json_decref(s->doc);
  free(s);
}

/* The variant's expectations over the base's: a new object, so that the variant's keys win
 * without changing either document. json_object_update shares the values by reference rather than
 * copying them: nothing changes an expectation after loading, so sharing is safe and cheaper. *ok
 * tells out of memory apart from "no expectations", since both return NULL. */
static json_t *merge_expect(json_t *base, json_t *own, bool *ok) {
  *ok = true;
  if (base == NULL && own == NULL) return NULL;
  json_t *m = json_object();
  if (m == NULL || (base != NULL && json_object_update(m, base) != 0) ||
      (own != NULL && json_object_update(m, own) != 0)) {
    json_decref(m);
    *ok = false;
    return NULL;
  }
  return m;
}

/* The document of variant i: the base (after --set) without "variants", with the variant's
 * "set" applied in order. Values are deep copies: a later path of the same "set" may write
 * inside an earlier value, which must not reach back into the base document. */
static json_t *variant_doc(scn_ctx *c, json_t *base, json_t *variant) {
  json_t *doc = json_deep_copy(base);
  if (doc == NULL) {
    retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory applying a variant");
    return NULL;
  }
  json_object_del(doc, "variants");
  json_t *set = retry_json_field(variant, "set");
  for (void *it = set != NULL ? json_object_iter(set) : NULL; it != NULL;
       it = json_object_iter_next(set, it)) {
    const char *path = json_object_iter_key(it);
    /* A failed copy is reported as out of memory like a failed set; path_set consumes v
     * in every case, so only doc is released on the way out. The paths' syntax was checked
     * with the base document, so RETRY_EINVAL here means a path does not fit this document
     * (an index past the end, a key under a string). */
    json_t *v = json_deep_copy(json_object_iter_value(it));
    char why[128] = "", shown[72];
    int rc = v == NULL ? RETRY_ENOMEM : cli__scenario_path_set(doc, path, v, why, sizeof why);
    if (rc != RETRY_OK) {
      retry_json_printable(shown, sizeof shown, path, 64);
      if (rc == RETRY_ENOMEM)
        retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory applying a variant");
      else
        retry_json_fail(&c->j, RETRY_ECONFIG, "cannot set \"%s\": %s", shown, why);
      json_decref(doc);
      return NULL;
    }
  }
  return doc;
}

/* Converts variant i into s->runs[i]. Errors in applying its "set" are located in the base
 * document ($.variants[i].set); errors in the result name the variant and the path in its
 * own document. */
static bool build_variant(cli_scenario *s, size_t i, const char *source, const char *base_dir,
                          const char *default_name, retry_error *err) {
  json_t *variant = json_array_get(json_object_get(s->doc, "variants"), i);
  const char *name = json_string_value(json_object_get(variant, "name"));
  scn_run *run = &s->runs[i];
  scn_ctx c;
  /* Two contexts in turn. Applying "set" is located in the base document and carries no
   * variant prefix; converting the result is the variant's, so the second context names it. */
  cli__scenario_ctx_init(&c, source, base_dir, NULL);
  retry_json_path_push_key(&c.j, "variants");
  retry_json_path_push_index(&c.j, i);
  retry_json_path_push_key(&c.j, "set");
  run->doc = variant_doc(&c, s->doc, variant);
  if (run->doc == NULL) {
    copy_error(err, &c.j.e);
    return false;
  }
  cli__scenario_ctx_init(&c, source, base_dir, name);
  run->cfg = cli__scenario_build(&c, run->doc, default_name);
  if (run->cfg == NULL) {
    copy_error(err, &c.j.e);
    return false;
  }
  run->recovery = c.recovery;
  /* The name and the merged expectations are both attempted before one check; whatever was
   * stored in run is freed with the scenario by the caller, on success or failure alike. */
  bool ok = true;
  run->expect =
      merge_expect(retry_json_field(s->doc, "expect"), retry_json_field(variant, "expect"), &ok);
  run->name = cli__scenario_strdup(name);
  if (!ok || run->name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return false;
  }
  return true;
}

/* Everything after reading: hash, parse, --set, the base conversion, the variants.
 *
 * Without variants the base document is the single run, and its config is kept. With
 * variants the base is still converted, so that an error in the common part is reported
 * once, without a variant's name, and before any variant is looked at; its config is then
 * dropped, since only the variants run.
 *
 * s owns everything from its allocation on, and every failure path below hands it to
 * cli_scenario_destroy, which frees whatever was set by then. */
static cli_scenario *load_buffer(const char *buf, size_t len, const char *source,
                                 const char *base_dir, const char *default_name,
                                 const cli_set *sets, size_t n_sets, retry_error *err) {
  cli_scenario *s = cli__scenario_calloc(1, sizeof *s);
  if (s == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  cli__scenario_sha256(buf, len, s->sha256);
  /* RFC 8259 lets a parser ignore a UTF-8 byte order mark, which some Windows editors add;
   * jansson does not, and its message would show the invisible bytes. The hash still covers
   * them: it is of the file as read. An empty file gets a message of its own too. */
  size_t skip = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  size_t blank = skip; /* buf is not NUL-terminated: count by hand */
  while (blank < len &&
         (buf[blank] == ' ' || buf[blank] == '\t' || buf[blank] == '\r' || buf[blank] == '\n'))
    blank++;
  if (blank == len) {
    retry_error_set(err, RETRY_ESYNTAX, source, "", -1, -1,
                    "the file is empty: a scenario is a JSON object {\"duration\": ..., ...}");
    cli_scenario_destroy(s);
    return NULL;
  }
  /* JSON_DECODE_ANY lets a scalar or array parse, so the message can say what the file held
   * ("got an array") rather than jansson's generic complaint. json_loadb takes a length, which
   * is why the buffer needs no NUL: an embedded NUL byte is reported by jansson as such. */
  json_error_t je;
  memset(&je, 0, sizeof je);
  s->doc = json_loadb(buf + skip, len - skip, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  if (s->doc == NULL) {
    retry_json_error_syntax(err, source, &je);
    cli_scenario_destroy(s);
    return NULL;
  }
  if (!json_is_object(s->doc)) {
    char got[64];
    retry_json_describe(s->doc, got, sizeof got);
    retry_error_set(err, RETRY_ECONFIG, source, "$", -1, -1,
                    "a scenario must be a JSON object, got %s", got);
    cli_scenario_destroy(s);
    return NULL;
  }
  /* --set goes before any validation, so an override can repair a file (add a required key)
   * as well as break it, and what is validated is exactly what runs. */
  if (!apply_sets(s->doc, sets, n_sets, err)) {
    cli_scenario_destroy(s);
    return NULL;
  }
  scn_ctx c;
  cli__scenario_ctx_init(&c, source, base_dir, NULL);
  model_config *base = cli__scenario_build(&c, s->doc, default_name);
  if (base == NULL) {
    copy_error(err, &c.j.e);
    cli_scenario_destroy(s);
    return NULL;
  }
  json_t *variants = retry_json_field(s->doc, "variants");
  s->has_variants = variants != NULL;
  size_t n = variants != NULL ? json_array_size(variants) : 1;
  /* base->name is the document's "name", or default_name when it has none. */
  s->name = cli__scenario_strdup(base->name);
  s->runs = cli__scenario_calloc(n, sizeof s->runs[0]);
  if (s->name == NULL || s->runs == NULL) {
    /* base is not stored in s yet, so destroying s would not free it. */
    model_config_destroy(base);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    cli_scenario_destroy(s);
    return NULL;
  }
  s->n_runs = n;
  if (variants == NULL) {
    /* One run: the base itself. */
    /* Ownership of base moves to the run here; s->doc is shared by reference, not copied. */
    s->runs[0].cfg = base;
    s->runs[0].recovery = c.recovery;
    s->runs[0].doc = json_incref(s->doc);
    s->runs[0].expect = json_incref(retry_json_field(s->doc, "expect"));
    s->runs[0].name = cli__scenario_strdup(base->name);
    if (s->runs[0].name == NULL) {
      retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
      cli_scenario_destroy(s);
      return NULL;
    }
    return s;
  }
  /* The base was converted to validate it; the runs are the variants. */
  model_config_destroy(base);
  for (size_t i = 0; i < n; i++) {
    if (!build_variant(s, i, source, base_dir, default_name, err)) {
      cli_scenario_destroy(s);
      return NULL;
    }
  }
  return s;
}

/* }================================================================== */

/* {==================================================================
 * Entry points
 * =================================================================== */

/* The name a scenario gets without "name": the file's base name without ".json".
 * Only '/' separates directories: retrysim targets POSIX systems. A file called just ".json"
 * keeps its whole name (n > 5), so the default name is never empty. */
static char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  b = b != NULL ? b + 1 : path;
  size_t n = strlen(b);
  if (n > 5 && strcmp(b + n - 5, ".json") == 0) n -= 5;
  char *s = cli__scenario_malloc(n + 1);
  if (s != NULL) {
    memcpy(s, b, n);
    s[n] = '\0';
  }
  return s;
}

/* The directory part of path ("" when it has none), for relative policy files. */
static char *dir_name(const char *path) {
  const char *slash = strrchr(path, '/');
  /* A file directly under "/" keeps "/" as its directory: "" would mean the current one. */
  size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  char *s = cli__scenario_malloc(n + 1);
  if (s != NULL) {
    memcpy(s, path, n);
    s[n] = '\0';
  }
  return s;
}

/* The file's own directory resolves relative policy files; its base name is the default
 * scenario name. Both are computed once, here, and borrowed by the conversion. */
cli_scenario *cli_scenario_load(const char *path, const cli_set *sets, size_t n_sets,
                                retry_error *err) {
  assert(path != NULL);
  assert(sets != NULL || n_sets == 0);
  size_t len = 0;
  char *buf = NULL;
  /* The bytes are read here, not by jansson, because the hash needs them; the hook's
   * allocator makes the read fail under the chaos test like the loader's other allocations. */
  if (retry_json_read_file(path, cli__scenario_retry_alloc(), &buf, &len, err) != RETRY_OK)
    return NULL;
  /* name, dir and buf are freed here on every path: load_buffer copies what it keeps (the name
   * into the config) and uses the directory only while policies are loaded. */
  char *name = base_name(path), *dir = dir_name(path);
  cli_scenario *s = NULL;
  if (name == NULL || dir == NULL)
    retry_error_set(err, RETRY_ENOMEM, path, "", -1, -1, "out of memory loading the scenario");
  else
    s = load_buffer(buf, len, path, dir, name, sets, n_sets, err);
  free(name);
  free(dir);
  free(buf);
  return s;
}

/* A string has no directory: relative policy files are read from the current one. */
cli_scenario *cli_scenario_load_string(const char *json, const char *source, const cli_set *sets,
                                       size_t n_sets, retry_error *err) {
  assert(json != NULL);
  assert(sets != NULL || n_sets == 0);
  /* A source such as "tests/x.json" gives the default name a file of that name would get. */
  char *name = source != NULL ? base_name(source) : cli__scenario_strdup("scenario");
  if (source == NULL) source = "<string>";
  if (name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  cli_scenario *s = load_buffer(json, strlen(json), source, "", name, sets, n_sets, err);
  free(name);
  return s;
}

/* }================================================================== */

/* {==================================================================
 * Accessors: misuse (NULL, an index past the runs) is a bug, hence asserts
 * =================================================================== */

const char *cli_scenario_name(const cli_scenario *s) {
  assert(s != NULL);
  return s->name;
}

const char *cli_scenario_sha256(const cli_scenario *s) {
  assert(s != NULL);
  return s->sha256;
}

size_t cli_scenario_n_runs(const cli_scenario *s) {
  assert(s != NULL);
  return s->n_runs;
}

bool cli_scenario_has_variants(const cli_scenario *s) {
  assert(s != NULL);
  return s->has_variants;
}

const char *cli_scenario_run_name(const cli_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].name;
}

/* Read from the document after --set: the loader checked both are strings when present. */
const char *cli_scenario_description(const cli_scenario *s) {
  assert(s != NULL);
  return json_string_value(json_object_get(s->doc, "description"));
}

const char *cli_scenario_run_description(const cli_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  if (!s->has_variants) return NULL;
  json_t *v = json_array_get(json_object_get(s->doc, "variants"), i);
  return json_string_value(json_object_get(v, "description"));
}

const cli_recovery_cfg *cli_scenario_recovery(const cli_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return &s->runs[i].recovery;
}

const model_config *cli_scenario_config(const cli_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].cfg;
}

/* NULL when neither the base nor the variant has "expect"; callers may pass that straight to
 * json_object_size, which reads it as 0 expectations. */
const json_t *cli_scenario_expect(const cli_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].expect;
}

/* Without variants this is s->doc itself, shared through a second reference; with variants
 * each run has a deep copy of its own, so no two runs' documents share a value. */
const json_t *cli_scenario_document(const cli_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].doc;
}

/* }================================================================== */
