/*
 * expt_scenario.c: loading a scenario: the file and its SHA-256, building every run (the
 * variants with their own overrides and expectations) and the provenance (files read,
 * overrides), and deriving a loaded scenario with more overrides. The policy and data files
 * (expt_scenario_files.c), the overrides (expt_scenario_overrides.c), the shapes of variants
 * and expectations (expt_scenario_variants.c), the accessors (expt_scenario_access.c) and the
 * choice of variants (expt_scenario_select.c) are files of their own.
 *
 * Owns the document (after --set), one resolved document, config and expectation set per run.
 * Invariant: a expt_scenario exists only when every run's document converted without error,
 * so nothing starts unless the whole file is right.
 */
#include "expt/expt_scenario_int.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>

/* {==================================================================
 * SHA-256, by nettle
 * =================================================================== */

/* Debian's nettle (nettle-dev) replaces the hand-written FIPS 180-4 code this file once had: a
 * hash that provenance relies on is better taken from a library that is reviewed and tested
 * for it. tests/test_expt_scenario.c still checks the NIST vectors through this function. */
void expt__scenario_sha256(const void *data, size_t len, char hex[65]) {
  struct sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, len, data);
  sha256_digest(&ctx, sizeof digest, digest);
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[64] = '\0';
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
 * Building the runs
 * =================================================================== */

/* Frees what exists: a scenario abandoned half-way by load_buffer has zeroed runs past the
 * point of failure, and NULL members are no-ops for every function called here.
 * n_runs is set only after runs was allocated, so a scenario that failed earlier has no runs
 * to walk. Documents are released with json_decref: the base run shares s->doc by reference. */
void expt_scenario_destroy(expt_scenario *s) {
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
  for (size_t i = 0; i < s->files.n; i++) {
    free(s->files.files[i].path);
    free(s->files.files[i].name);
    json_decref(s->files.files[i].content);
    json_decref(s->files.files[i].named_at);
    json_decref(s->files.files[i].origins);
  }
  free(s->files.files);
  for (size_t i = 0; i < s->files.n_data; i++) {
    free(s->files.data[i].path);
    free(s->files.data[i].name);
    if (!s->files.data[i].borrowed) sim_empirical_destroy(s->files.data[i].dist);
    json_decref(s->files.data[i].named_at);
  }
  free(s->files.data);
  /* Mixtures last: one may borrow another (a part), never the other way round, and none is
   * drawn from any more. */
  for (size_t i = s->files.n_mixtures; i-- > 0;)
    sim_mixture_destroy(s->files.mixtures[i]);
  free(s->files.mixtures);
  json_decref(s->inputs);
  json_decref(s->overrides);
  free(s->source);
  free(s->base_dir);
  free(s->default_name);
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
    char shown[72];
    retry_error why;
    retry_error_clear(&why);
    int rc = v == NULL ? RETRY_ENOMEM : expt__scenario_path_set(doc, path, v, &why);
    /* A name still in the way is a policy file that could not be read: its reason says more. */
    if (rc == RETRY_EINVAL && c->files != NULL &&
        !expt__scenario_read_named(doc, c->j.source, c->base_dir, c->files, false, &why)) {
      retry_json_fail_error(&c->j, &why);
      json_decref(doc);
      return NULL;
    }
    if (rc != RETRY_OK) {
      retry_json_printable(shown, sizeof shown, path, 64);
      if (rc == RETRY_ENOMEM)
        retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory applying a variant");
      else
        retry_json_fail(&c->j, RETRY_ECONFIG, "cannot set \"%s\": %s", shown, why.message);
      json_decref(doc);
      return NULL;
    }
    /* A path that named a policy file has it read now, so that the next may patch inside it. */
    if (c->files != NULL && json_object_iter_next(set, it) != NULL &&
        !expt__scenario_read_named(doc, c->j.source, c->base_dir, c->files, true, &why)) {
      retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory applying a variant");
      json_decref(doc);
      return NULL;
    }
  }
  return doc;
}

/* Converts variant i into s->runs[slot]. Errors in applying its "set" are located in the base
 * document ($.variants[i].set); errors in the result name the variant and the path in its
 * own document. */
static bool build_variant(expt_scenario *s, size_t slot, size_t i, const char *source,
                          const char *base_dir, const char *default_name, retry_error *err) {
  json_t *variant = json_array_get(json_object_get(s->doc, "variants"), i);
  const char *name = json_string_value(json_object_get(variant, "name"));
  scn_run *run = &s->runs[slot];
  scn_ctx c;
  /* Two contexts in turn. Applying "set" is located in the base document and carries no
   * variant prefix; converting the result is the variant's, so the second context names it. */
  expt__scenario_ctx_init(&c, source, base_dir, NULL);
  retry_json_path_push_key(&c.j, "variants");
  retry_json_path_push_index(&c.j, i);
  retry_json_path_push_key(&c.j, "set");
  c.files = &s->files;
  run->doc = variant_doc(&c, s->doc, variant);
  run->variant = i;
  if (run->doc == NULL) {
    copy_error(err, &c.j.e);
    return false;
  }
  expt__scenario_ctx_init(&c, source, base_dir, name);
  c.files = &s->files;
  /* A variant may name another policy file ("set": {"clients.web.policy": "other.json"}). */
  if (!expt__scenario_expand_policies(&c, run->doc, false)) {
    copy_error(err, &c.j.e);
    return false;
  }
  run->cfg = expt__scenario_build(&c, run->doc, default_name);
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
  run->name = expt__scenario_strdup(name);
  if (!ok || run->name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return false;
  }
  return true;
}

/* A file's name as a JSON string; a name that is not UTF-8 is shown with its bytes escaped. */
static json_t *name_json(const char *name) {
  json_t *v = json_string(name);
  if (v != NULL) return v;
  char shown[256];
  retry_json_printable(shown, sizeof shown, name, 200);
  return json_string(shown);
}

/* The files read, for provenance (expt_scenario_inputs); once every run was built, so that the
 * policy files variants named are in. Each is named as the scenario names it: the scenario by
 * its base name, a policy file as written in it (relative to the scenario's directory), so
 * that the same files give the same summary wherever they are (byte-identical outputs).
 * Returns s, or NULL (s destroyed) when out of memory. */
static expt_scenario *record_inputs(expt_scenario *s, const char *source, retry_error *err) {
  const char *slash = strrchr(source, '/');
  json_t *a = json_array(), *o = json_object();
  bool ok =
      a != NULL && o != NULL && json_object_set_new(o, "role", json_string("scenario")) == 0 &&
      json_object_set_new(o, "path", name_json(slash != NULL ? slash + 1 : source)) == 0 &&
      json_object_set_new(o, "sha256", json_string(s->sha256)) == 0 && json_array_append(a, o) == 0;
  json_decref(o);
  for (size_t i = 0; ok && i < s->files.n; i++) {
    const scn_policy_file *pf = &s->files.files[i];
    o = json_object();
    ok = o != NULL && json_object_set_new(o, "role", json_string("policy")) == 0 &&
         json_object_set_new(o, "path", name_json(pf->name)) == 0 &&
         json_object_set_new(o, "sha256", json_string(pf->sha256)) == 0 &&
         json_object_set(o, "named_at", pf->named_at) == 0 && json_array_append(a, o) == 0;
    json_decref(o);
  }
  for (size_t i = 0; ok && i < s->files.n_data; i++) {
    const scn_data_file *df = &s->files.data[i];
    o = json_object();
    ok = o != NULL && json_object_set_new(o, "role", json_string("distribution")) == 0 &&
         json_object_set_new(o, "path", name_json(df->name)) == 0 &&
         json_object_set_new(o, "sha256", json_string(df->sha256)) == 0 &&
         json_object_set(o, "named_at", df->named_at) == 0 && json_array_append(a, o) == 0;
    json_decref(o);
  }
  if (!ok) {
    json_decref(a);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  s->inputs = a;
  return s;
}

/* The runs of s from its document (after every override, policy files read into it): the base
 * converted, then the variants, or the base as the single run. only[0..n_only), when not NULL,
 * are the indices in "variants" to build (a derived scenario keeps its base's selection).
 * Without variants the base document is the single run, and its config is kept. With
 * variants the base is still converted, so that an error in the common part is reported
 * once, without a variant's name, and before any variant is looked at; its config is then
 * dropped, since only the variants run. Returns s, or NULL with s destroyed. */
static expt_scenario *build_runs(expt_scenario *s, scn_ctx *c, const char *default_name,
                                 const size_t *only, size_t n_only, retry_error *err) {
  const char *source = s->source, *base_dir = c->base_dir;
  model_config *base = expt__scenario_build(c, s->doc, default_name);
  if (base == NULL) {
    copy_error(err, &c->j.e);
    expt_scenario_destroy(s);
    return NULL;
  }
  json_t *variants = retry_json_field(s->doc, "variants");
  s->has_variants = variants != NULL;
  size_t n = variants == NULL ? 1 : only != NULL ? n_only : json_array_size(variants);
  /* base->name is the document's "name", or default_name when it has none. */
  s->name = expt__scenario_strdup(base->name);
  s->runs = expt__scenario_calloc(n, sizeof s->runs[0]);
  if (s->name == NULL || s->runs == NULL) {
    /* base is not stored in s yet, so destroying s would not free it. */
    model_config_destroy(base);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  s->n_runs = n;
  if (variants == NULL) {
    /* One run: the base itself. */
    /* Ownership of base moves to the run here; s->doc is shared by reference, not copied. */
    s->runs[0].cfg = base;
    s->runs[0].recovery = c->recovery;
    s->runs[0].doc = json_incref(s->doc);
    s->runs[0].expect = json_incref(retry_json_field(s->doc, "expect"));
    s->runs[0].name = expt__scenario_strdup(base->name);
    if (s->runs[0].name == NULL) {
      retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
      expt_scenario_destroy(s);
      return NULL;
    }
    return record_inputs(s, source, err);
  }
  /* The base was converted to validate it; the runs are the variants. */
  model_config_destroy(base);
  for (size_t i = 0; i < n; i++) {
    if (!build_variant(s, i, only != NULL ? only[i] : i, source, base_dir, default_name, err)) {
      expt_scenario_destroy(s);
      return NULL;
    }
  }
  return record_inputs(s, source, err);
}

/* Everything after reading: hash, parse, --set, then the runs (build_runs).
 *
 * s owns everything from its allocation on, and every failure path below hands it to
 * expt_scenario_destroy, which frees whatever was set by then. */
static expt_scenario *load_buffer(const char *buf, size_t len, const char *source,
                                  const char *base_dir, const char *default_name,
                                  const expt_set *sets, size_t n_sets, retry_error *err) {
  expt_scenario *s = expt__scenario_calloc(1, sizeof *s);
  if (s == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  expt__scenario_sha256(buf, len, s->sha256);
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
    expt_scenario_destroy(s);
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
    expt_scenario_destroy(s);
    return NULL;
  }
  if (!json_is_object(s->doc)) {
    char got[64];
    retry_json_describe(s->doc, got, sizeof got);
    retry_error_set(err, RETRY_ECONFIG, source, "$", -1, -1,
                    "a scenario must be a JSON object, got %s", got);
    expt_scenario_destroy(s);
    return NULL;
  }
  /* Policy files are read into the document before --set, so that an override can patch
   * inside one; a file that cannot be read is left as its name for now, since --set may
   * still replace it (or remove the policy). After --set, the names left (and any an override
   * wrote) are read for good, with errors. */
  scn_ctx c;
  expt__scenario_ctx_init(&c, source, base_dir, NULL);
  c.files = &s->files;
  s->overrides = expt__scenario_overrides_json(sets, n_sets);
  s->source = expt__scenario_strdup(source);
  s->base_dir = expt__scenario_strdup(base_dir);
  s->default_name = expt__scenario_strdup(default_name);
  if (s->overrides == NULL || s->source == NULL || s->base_dir == NULL || s->default_name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  if (!expt__scenario_expand_policies(&c, s->doc, true)) {
    copy_error(err, &c.j.e);
    expt_scenario_destroy(s);
    return NULL;
  }
  /* --set goes before any validation, so an override can repair a file (add a required key)
   * as well as break it, and what is validated is exactly what runs. */
  if (!expt__scenario_apply_sets(s->doc, sets, n_sets, "--set", base_dir, &s->files, err)) {
    expt_scenario_destroy(s);
    return NULL;
  }
  expt__scenario_ctx_init(&c, source, base_dir, NULL);
  c.files = &s->files;
  if (!expt__scenario_expand_policies(&c, s->doc, false)) {
    copy_error(err, &c.j.e);
    expt_scenario_destroy(s);
    return NULL;
  }
  s = build_runs(s, &c, default_name, NULL, 0, err);
  if (s != NULL && expt__scenario_check_axes(s, err) != 0) {
    expt_scenario_destroy(s);
    return NULL;
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
  char *s = expt__scenario_malloc(n + 1);
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
  char *s = expt__scenario_malloc(n + 1);
  if (s != NULL) {
    memcpy(s, path, n);
    s[n] = '\0';
  }
  return s;
}

/* The file's own directory resolves relative policy files; its base name is the default
 * scenario name. Both are computed once, here, and borrowed by the conversion. */
expt_scenario *expt_scenario_load(const char *path, const expt_set *sets, size_t n_sets,
                                  retry_error *err) {
  assert(path != NULL);
  assert(sets != NULL || n_sets == 0);
  size_t len = 0;
  char *buf = NULL;
  /* The bytes are read here, not by jansson, because the hash needs them; the hook's
   * allocator makes the read fail under the chaos test like the loader's other allocations.
   * retry_json_read_file refuses what is not a regular file (/dev/zero, a pipe), which would
   * otherwise be read until memory runs out (issue 10, defect 3); policy files follow the
   * same rule (read_policy_file). */
  if (retry_json_read_file(path, expt__scenario_retry_alloc(), &buf, &len, err) != RETRY_OK)
    return NULL;
  /* name, dir and buf are freed here on every path: load_buffer copies what it keeps (the name
   * into the config) and uses the directory only while policies are loaded. */
  char *name = base_name(path), *dir = dir_name(path);
  expt_scenario *s = NULL;
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
expt_scenario *expt_scenario_load_string(const char *json, const char *source, const expt_set *sets,
                                         size_t n_sets, retry_error *err) {
  assert(json != NULL);
  assert(sets != NULL || n_sets == 0);
  /* A source such as "tests/x.json" gives the default name a file of that name would get. */
  char *name = source != NULL ? base_name(source) : expt__scenario_strdup("scenario");
  if (source == NULL) source = "<string>";
  if (name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  expt_scenario *s = load_buffer(json, strlen(json), source, "", name, sets, n_sets, err);
  free(name);
  return s;
}

/* }================================================================== */

/* {==================================================================
 * Deriving a scenario: a loaded one with more overrides (a sweep's point)
 * =================================================================== */

/* The base's files, as the derived scenario's own entries: names and hashes copied, the
 * policy documents and the "named at" lists deep-copied (so that nothing of base is written,
 * not even a reference count), the distribution tables borrowed. Nothing is read again. */
static bool copy_files(scn_files *to, const scn_files *from) {
  if (from->n > 0) {
    to->files = expt__scenario_calloc(from->n, sizeof *to->files);
    if (to->files == NULL) return false;
    to->cap = from->n;
  }
  for (size_t i = 0; i < from->n; i++) {
    const scn_policy_file *f = &from->files[i];
    scn_policy_file *t = &to->files[to->n++]; /* counted now: destroy frees what exists */
    t->path = expt__scenario_strdup(f->path);
    t->name = expt__scenario_strdup(f->name);
    memcpy(t->sha256, f->sha256, sizeof t->sha256);
    t->content = json_deep_copy(f->content);
    t->named_at = json_deep_copy(f->named_at);
    t->format = f->format;
    t->origins = f->origins != NULL ? json_deep_copy(f->origins) : NULL;
    if (t->path == NULL || t->name == NULL || t->content == NULL || t->named_at == NULL ||
        (f->origins != NULL && t->origins == NULL))
      return false;
  }
  if (from->n_data > 0) {
    to->data = expt__scenario_calloc(from->n_data, sizeof *to->data);
    if (to->data == NULL) return false;
    to->cap_data = from->n_data;
  }
  for (size_t i = 0; i < from->n_data; i++) {
    const scn_data_file *f = &from->data[i];
    scn_data_file *t = &to->data[to->n_data++];
    t->dist = f->dist;
    t->borrowed = true;
    t->path = expt__scenario_strdup(f->path);
    t->name = expt__scenario_strdup(f->name);
    memcpy(t->sha256, f->sha256, sizeof t->sha256);
    t->named_at = json_deep_copy(f->named_at);
    if (t->path == NULL || t->name == NULL || t->named_at == NULL) return false;
  }
  return true;
}

/* The base's overrides followed by sets[0..n), as one provenance array. */
static json_t *derived_overrides(const json_t *base, const expt_set *sets, size_t n) {
  json_t *a = json_deep_copy(base), *more = expt__scenario_overrides_json(sets, n);
  if (a == NULL || more == NULL || json_array_extend(a, more) != 0) {
    json_decref(a);
    json_decref(more);
    return NULL;
  }
  json_decref(more);
  return a;
}

/* base is only read (its document copied, its files copied or borrowed), so several threads
 * may derive from one base at once; the derived scenario borrows base's distribution tables,
 * so base must outlive it. What is validated is exactly what load would validate given the
 * same overrides after the command line's: the whole document, every run kept. */
expt_scenario *expt_scenario_derive(const expt_scenario *base, const expt_set *sets, size_t n_sets,
                                    retry_error *err) {
  assert(base != NULL);
  assert(sets != NULL || n_sets == 0);
  const char *source = base->source;
  expt_scenario *s = expt__scenario_calloc(1, sizeof *s);
  if (s == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  memcpy(s->sha256, base->sha256, sizeof s->sha256);
  s->doc = json_deep_copy(base->doc);
  s->source = expt__scenario_strdup(base->source);
  s->base_dir = expt__scenario_strdup(base->base_dir);
  s->default_name = expt__scenario_strdup(base->default_name);
  s->overrides = derived_overrides(base->overrides, sets, n_sets);
  /* The variants base kept (expt_scenario_select), by their index in "variants". */
  size_t *only = base->has_variants ? expt__scenario_calloc(base->n_runs, sizeof *only) : NULL;
  for (size_t i = 0; only != NULL && i < base->n_runs; i++)
    only[i] = base->runs[i].variant;
  if (s->doc == NULL || s->source == NULL || s->base_dir == NULL || s->default_name == NULL ||
      s->overrides == NULL || (base->has_variants && only == NULL) ||
      !copy_files(&s->files, &base->files)) {
    free(only);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  /* The base document has its policy files read into it already; an override naming another
   * file gets it read here, with errors (the load's second pass). */
  scn_ctx c;
  expt__scenario_ctx_init(&c, source, s->base_dir, NULL);
  c.files = &s->files;
  if (!expt__scenario_apply_sets(s->doc, sets, n_sets, "override", s->base_dir, &s->files, err) ||
      !expt__scenario_expand_policies(&c, s->doc, false)) {
    if (retry_json_failed(&c.j)) copy_error(err, &c.j.e);
    free(only);
    expt_scenario_destroy(s);
    return NULL;
  }
  s = build_runs(s, &c, s->default_name, only, base->n_runs, err);
  free(only);
  return s;
}

/* }================================================================== */
