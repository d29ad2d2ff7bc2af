/*
 * expt_scenario_select.c: choosing variants (--variant) and the memory a run needs
 * (--max-memory), refused before anything runs.
 */
#include "expt/expt_scenario_int.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_estimate.h"

/* {==================================================================
 * Choosing variants (--variant) and the memory a run needs (--max-memory)
 * =================================================================== */

/* "a, b, c" of every variant's name, cut at a name's boundary to fit size with "...". */
static void variant_list(const expt_scenario *s, char *buf, size_t size) {
  json_t *variants = json_object_get(s->doc, "variants");
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < json_array_size(variants); i++) {
    const char *name = json_string_value(json_object_get(json_array_get(variants, i), "name"));
    size_t need = strlen(name) + (i ? 2 : 0);
    if (len + need + 4 >= size) {
      snprintf(buf + len, size - len, "%s...", i ? ", " : "");
      return;
    }
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", name);
  }
}

/* The runs kept are moved down in place; the others are freed. The order is the scenario's,
 * whatever the order of the names: a comparison table reads the same either way. */
int expt_scenario_select(expt_scenario *s, const char *const *names, size_t n, retry_error *err) {
  assert(s != NULL && (names != NULL || n == 0));
  if (n == 0) return 0;
  char shown[48], list[96];
  retry_json_printable(shown, sizeof shown, names[0], 40);
  if (!s->has_variants) {
    retry_error_set(err, RETRY_EINVAL, "<command line>", "", -1, -1,
                    "--variant \"%s\": the scenario has no variants", shown);
    return RETRY_EINVAL;
  }
  for (size_t k = 0; k < n; k++) {
    bool found = false;
    for (size_t i = 0; i < s->n_runs && !found; i++)
      found = strcmp(s->runs[i].name, names[k]) == 0;
    if (!found) {
      retry_json_printable(shown, sizeof shown, names[k], 40);
      variant_list(s, list, sizeof list);
      retry_error_set(err, RETRY_EINVAL, "<command line>", "", -1, -1,
                      "--variant \"%s\": no such variant; variants: %s", shown, list);
      return RETRY_EINVAL;
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < s->n_runs; i++) {
    bool keep = false;
    for (size_t k = 0; k < n && !keep; k++)
      keep = strcmp(s->runs[i].name, names[k]) == 0;
    if (keep) {
      s->runs[kept++] = s->runs[i];
      continue;
    }
    free(s->runs[i].name);
    model_config_destroy(s->runs[i].cfg);
    json_decref(s->runs[i].doc);
    json_decref(s->runs[i].expect);
  }
  s->n_runs = kept;
  return 0;
}

/* Binary units, one decimal: "15.2 GiB". */
static void format_bytes(char *buf, size_t size, uint64_t b) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)b;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, size, "%llu bytes", (unsigned long long)b);
  else
    snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* Checked before any world is built: a world that does not fit fails only after minutes of
 * allocation (issue 10, defect 8), and validate, which builds none, refuses it too. */
int expt_scenario_check_memory(const expt_scenario *s, uint64_t max_bytes, retry_error *err) {
  assert(s != NULL);
  for (size_t i = 0; i < s->n_runs; i++) {
    uint64_t need = model_world_estimate_bytes(s->runs[i].cfg);
    if (need <= max_bytes) continue;
    char got[32], limit[32], name[40];
    format_bytes(got, sizeof got, need);
    format_bytes(limit, sizeof limit, max_bytes);
    retry_json_printable(name, sizeof name, s->runs[i].name, 32);
    retry_error_set(err, RETRY_ERANGE, s->source, "", -1, -1,
                    "run \"%s\" needs about %s of memory, over the limit of %s "
                    "(--max-memory SIZE raises it)",
                    name, got, limit);
    return RETRY_ERANGE;
  }
  return 0;
}

/* }================================================================== */
