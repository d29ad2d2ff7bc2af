/*
 * fuzz_config.c: libFuzzer target for the inputs libretry reads from outside: a service
 * config (JSON), grpc-retry-pushback-ms values, Retry-After and HTTP-dates. Any crash, leak
 * or sanitizer report is a bug, and so is a warning without a path or a message, or a strict
 * load that disagrees with the warnings of the plain one. Build and run with `make fuzz
 * FUZZ_SECONDS=60`.
 */
#include "retry/retry.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every warning must say where and why. */
static void check_warning(void *ctx, const retry_error *w) {
  size_t *n = ctx;
  if (w->code != RETRY_ECONFIG || w->message[0] == '\0' || w->path[0] != '$') abort();
  ++*n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (s == NULL) return 0;
  memcpy(s, data, size);
  s[size] = '\0';

  retry_error err;
  retry_error_clear(&err);
  size_t n_warnings = 0;
  retry_config_opts opts = {.warn = check_warning, .warn_ctx = &n_warnings};
  retry_config *cfg = retry_config_load_string(s, "<fuzz>", &opts, &err);
  /* Strict loads exactly when there was no warning, and fails on the same input otherwise. */
  retry_config_opts strict = {.strict = true};
  retry_config *scfg = retry_config_load_string(s, "<fuzz>", &strict, NULL);
  if (cfg != NULL && (scfg != NULL) != (n_warnings == 0)) abort();
  if (cfg == NULL && scfg != NULL) abort();
  retry_config_destroy(scfg);
  if (cfg != NULL) {
    /* A valid config must give usable, valid policies and a creatable target. */
    const retry_method_config *mc = retry_config_lookup(cfg, s);
    if (retry_policy_validate(&mc->policy, NULL) != 0) abort();
    retry_target *t = retry_target_create(retry_config_target(cfg), 0, NULL, NULL);
    if (t == NULL) abort();
    retry_target_destroy(t);
    retry_config_destroy(cfg);
  } else if (err.code == RETRY_OK || err.message[0] == '\0') {
    abort(); /* a failure must say why */
  }

  const char *vals[1] = {s};
  int64_t ns;
  retry_pushback_parse(vals, 1, &ns);
  retry_pushback_parse_retry_after(s, &ns);
  retry_pushback_parse_http_date(s, &ns);
  retry_duration_parse(s, &ns);
  free(s);
  return 0;
}
