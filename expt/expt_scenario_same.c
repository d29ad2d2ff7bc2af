/*
 * expt_scenario_same.c: variants that are the same world. Two variants whose documents are
 * equal once their sets are applied run the same runs on the same seeds: their rows, their
 * paired differences (all zero) and their pictures (one drawn over the other) say nothing,
 * and a user who meant them to differ (a set at a path the loader reads nowhere that matters,
 * a copied variant) deserves to hear it before the runs.
 */
#include "expt/expt_scenario.h"

#include <string.h>

#include "retry/retry_json.h"

/* The documents of runs i and j equal but for their "name" (a variant's own name is no
 * difference in the world). */
static bool same_world(const json_t *a, const json_t *b) {
  if (json_equal(a, b)) return true;
  if (!json_is_object(a) || !json_is_object(b) || json_object_size(a) != json_object_size(b))
    return false;
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)a, key, v) {
    if (strcmp(key, "name") != 0 && !json_equal(v, json_object_get(b, key))) return false;
  }
  return true;
}

void expt_scenario_warn_identical(const expt_scenario *s, FILE *f) {
  size_t n = expt_scenario_has_variants(s) ? expt_scenario_n_runs(s) : 0;
  for (size_t j = 1; j < n; j++)
    for (size_t i = 0; i < j; i++) {
      if (!same_world(expt_scenario_document(s, i), expt_scenario_document(s, j)) ||
          expt_scenario_config(s, i)->seed != expt_scenario_config(s, j)->seed)
        continue;
      char a[72], b[72];
      retry_json_printable(a, sizeof a, expt_scenario_run_name(s, i), 64);
      retry_json_printable(b, sizeof b, expt_scenario_run_name(s, j), 64);
      fprintf(f,
              "retrysim: warning: %s: variants \"%s\" and \"%s\" are identical (the same document "
              "once their sets are applied, the same seed): their results will be the same\n",
              expt_scenario_source(s), a, b);
      break; /* j is named once, with the first it repeats */
    }
}
