/*
 * expt_scenario_overrides.c: overrides: the command line's --set and a variant's "set",
 * applied to a document, and their provenance. Invariant: a --set value is JSON when it parses
 * as JSON, else a string.
 */
#include "expt/expt_scenario_int.h"

#include <assert.h>

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
/* The overrides as given, for provenance: the text of each value, not what it parsed to (the
 * document shows that), so that the record reads like the command line. */
json_t *expt__scenario_overrides_json(const expt_set *sets, size_t n_sets) {
  json_t *a = json_array();
  for (size_t i = 0; a != NULL && i < n_sets; i++) {
    json_t *o = json_object();
    /* A value that is not UTF-8 cannot be a JSON string; it is refused by apply_sets anyway. */
    json_t *v = sets[i].value != NULL ? json_string(sets[i].value) : json_null();
    if (o == NULL || v == NULL || json_object_set_new(o, "path", json_string(sets[i].path)) != 0 ||
        json_object_set_new(o, "value", v) != 0 || json_array_append_new(a, o) != 0) {
      if (o == NULL) json_decref(v);
      json_decref(o);
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

bool expt__scenario_read_named(json_t *doc, const char *source, const char *base_dir,
                               scn_files *files, bool quiet, retry_error *err) {
  scn_ctx c;
  expt__scenario_ctx_init(&c, source, base_dir, NULL);
  c.files = files;
  if (expt__scenario_expand_policies(&c, doc, quiet)) return true;
  *err = c.j.e;
  return false;
}

/* label is how messages name an override: "--set" for the command line's, "override" for a
 * derived scenario's (expt_scenario_derive). An override may name a policy file and the next
 * one patch inside it ("clients.c.policy=other.json", then
 * "clients.c.policy.retryThrottling.maxTokens=5"), so with files each name is read in turn,
 * quietly: a file that cannot be read stays a name for the caller's last pass to report. */
bool expt__scenario_apply_sets(json_t *doc, const expt_set *sets, size_t n_sets, const char *label,
                               const char *base_dir, scn_files *files, retry_error *err) {
  for (size_t i = 0; i < n_sets; i++) {
    assert(sets[i].path != NULL);
    char shown[72];
    retry_error why;
    retry_error_clear(&why);
    /* The path is cut for display: the message has 160 bytes and needs room for the reason. */
    retry_json_printable(shown, sizeof shown, sets[i].path, 64);
    json_t *v = set_value(sets[i].value);
    if (v == NULL) {
      retry_error_set(err, RETRY_ECONFIG, "<command line>", "", -1, -1,
                      "%s \"%s\": the value is not valid UTF-8", label, shown);
      return false;
    }
    /* path_set consumes v whatever it returns, so no error path below releases it. On an error
     * the document may already hold intermediate objects that path_set created; that is
     * harmless because the caller destroys the whole scenario. */
    int rc = expt__scenario_path_set(doc, sets[i].path, v, &why);
    if (rc == RETRY_ENOMEM) {
      retry_error_set(err, RETRY_ENOMEM, "<command line>", "", -1, -1, "out of memory applying %s",
                      label);
      return false;
    }
    if (rc != RETRY_OK) {
      /* A name still in the way is a file that could not be read: its reason says more. */
      if (files != NULL &&
          !expt__scenario_read_named(doc, "<command line>", base_dir, files, false, err))
        return false;
      retry_error_set(err, RETRY_ECONFIG, "<command line>", "", -1, -1, "%s \"%s\": %s", label,
                      shown, why.message);
      return false;
    }
    if (files != NULL && i + 1 < n_sets &&
        !expt__scenario_read_named(doc, "<command line>", base_dir, files, true, err))
      return false;
  }
  return true;
}

/* }================================================================== */
