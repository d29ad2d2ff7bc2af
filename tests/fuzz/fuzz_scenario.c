/*
 * fuzz_scenario.c: libFuzzer target for the scenario loader: any text, as a scenario file,
 * with and without a --set override, and the duration and rate parsers. The loader must
 * either build every run's config or fail with a message; any crash, leak or sanitizer report
 * is a bug. Build and run with `make fuzz FUZZ_SECONDS=60`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks one load: a success has at least one run, each with a config and a name. */
static void load(const char *s, const expt_set *sets, size_t n_sets) {
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *sc = expt_scenario_load_string(s, "<fuzz>", sets, n_sets, &err);
  if (sc == NULL) {
    if (err.code == RETRY_OK || err.message[0] == '\0') abort(); /* a failure must say why */
    return;
  }
  size_t n = expt_scenario_n_runs(sc);
  if (n == 0) abort();
  for (size_t i = 0; i < n; i++) {
    const model_config *cfg = expt_scenario_config(sc, i);
    if (cfg == NULL || cfg->n_clients == 0 || cfg->n_services == 0) abort();
    if (expt_scenario_run_name(sc, i) == NULL) abort();
  }
  expt_scenario_destroy(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (s == NULL) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  load(s, NULL, 0);
  /* The same text as the value of an override, so the --set path is fuzzed too. */
  expt_set set = {"services.api.service_time", s};
  load(s, &set, 1);
  int64_t ns;
  double rate;
  expt_duration_parse(s, &ns);
  expt_rate_parse(s, &rate);
  free(s);
  return 0;
}
