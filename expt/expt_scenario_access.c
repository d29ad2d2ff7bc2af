/*
 * expt_scenario_access.c: the accessors of a loaded scenario, and the study's keys
 * ("replications", "confidence", "baseline"). Misuse (NULL, an index past the runs) is a bug,
 * hence asserts; every pointer returned is borrowed from the scenario.
 */
#include "expt/expt_scenario_int.h"

#include <assert.h>
#include <math.h>

/* {==================================================================
 * Accessors: misuse (NULL, an index past the runs) is a bug, hence asserts
 * =================================================================== */

const char *expt_scenario_name(const expt_scenario *s) {
  assert(s != NULL);
  return s->name;
}

const char *expt_scenario_sha256(const expt_scenario *s) {
  assert(s != NULL);
  return s->sha256;
}

const json_t *expt_scenario_inputs(const expt_scenario *s) {
  assert(s != NULL);
  return s->inputs;
}

const json_t *expt_scenario_overrides(const expt_scenario *s) {
  assert(s != NULL);
  return s->overrides;
}

const json_t *expt_scenario_base_document(const expt_scenario *s) {
  assert(s != NULL);
  return s->doc;
}

const char *expt_scenario_source(const expt_scenario *s) {
  assert(s != NULL);
  return s->source;
}

/* Read from the document after --set: the loader validated both. */
const json_t *expt_scenario_sweep_block(const expt_scenario *s) {
  assert(s != NULL);
  return json_object_get(s->doc, "sweep");
}

const json_t *expt_scenario_search_block(const expt_scenario *s) {
  assert(s != NULL);
  return json_object_get(s->doc, "search");
}

size_t expt_scenario_n_runs(const expt_scenario *s) {
  assert(s != NULL);
  return s->n_runs;
}

bool expt_scenario_has_variants(const expt_scenario *s) {
  assert(s != NULL);
  return s->has_variants;
}

const char *expt_scenario_run_name(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].name;
}

/* Read from the document after --set: the loader checked both are strings when present. */
const char *expt_scenario_description(const expt_scenario *s) {
  assert(s != NULL);
  return json_string_value(json_object_get(s->doc, "description"));
}

const char *expt_scenario_run_description(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  if (!s->has_variants) return NULL;
  json_t *v = json_array_get(json_object_get(s->doc, "variants"), s->runs[i].variant);
  return json_string_value(json_object_get(v, "description"));
}

const expt_recovery_cfg *expt_scenario_recovery(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return &s->runs[i].recovery;
}

const model_config *expt_scenario_config(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].cfg;
}

/* NULL when neither the base nor the variant has "expect"; callers may pass that straight to
 * json_object_size, which reads it as 0 expectations. */
const json_t *expt_scenario_expect(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].expect;
}

/* Without variants this is s->doc itself, shared through a second reference; with variants
 * each run has a deep copy of its own, so no two runs' documents share a value. */
const json_t *expt_scenario_document(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].doc;
}

/* }================================================================== */

/* {==================================================================
 * The study's keys
 * =================================================================== */

/* Read from the document, which the loader validated: no copies to keep in step. */
size_t expt_scenario_replications(const expt_scenario *s) {
  json_t *v = json_object_get(s->doc, "replications");
  return json_is_integer(v) ? (size_t)json_integer_value(v) : 0;
}

double expt_scenario_confidence(const expt_scenario *s) {
  json_t *v = json_object_get(s->doc, "confidence");
  return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *expt_scenario_baseline(const expt_scenario *s) {
  return json_string_value(json_object_get(s->doc, "baseline"));
}

/* }================================================================== */
