/*
 * expt_import.h: foreign retry-policy formats (Envoy, Istio, ...) translated into the gRPC
 * service config with the "retrysim" block that retry/retry_config*.c loads. A translation is
 * a new service config document plus, for each of its fields, the place in the source it came
 * from, and the warnings about what the format says that retrysim cannot model.
 * Invariant: the document an import returns is what the scenario loader runs, unchanged; the
 * page docs/policy-formats.md says for each format what is read and what is warned.
 */
#ifndef EXPT_IMPORT_H
#define EXPT_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "expt/expt_scenario.h"
#include "retry/retry.h"

/* The formats recognised by content (expt_import_detect). */
typedef enum expt_import_format {
  EXPT_IMPORT_NATIVE = 0, /* a gRPC service config (with or without the "retrysim" block) */
  EXPT_IMPORT_ENVOY,      /* Envoy route / retry_policy / cluster, YAML or JSON */
  EXPT_IMPORT_ISTIO,      /* Istio VirtualService and DestinationRule resources */
  EXPT_IMPORT_AWS,        /* the AWS shared config file (~/.aws/config), INI */
  EXPT_IMPORT_LINKERD,    /* Linkerd's ServiceProfile */
  EXPT_IMPORT_GATEWAY,    /* Gateway API HTTPRoute and XBackendTrafficPolicy */
  EXPT_IMPORT_R4J,        /* a Spring application's resilience4j retry and circuitbreaker */
  EXPT_IMPORT_POLLY       /* a .NET application's Polly v8 / standard resilience handler */
} expt_import_format;

/* A translation. Every json_t is owned by the result; free with expt_import_result_close. */
typedef struct expt_import_result {
  expt_import_format format;
  json_t *config;   /* the service config document, as the scenario loader will run it */
  json_t *origins;  /* object: JSON path in config -> {"from", "line", "column", "note"} */
  json_t *warnings; /* array of {"path", "line", "column", "message"} in the source */
} expt_import_result;

/* The name of a format for messages ("envoy", "istio", "grpc-service-config"). */
const char *expt_import_format_name(expt_import_format f);

/* Translates text[0..len) named source (a file name, for messages). Returns 1 with *out filled
 * when the text is a foreign format, 0 when it is not one (out untouched: the caller reads the
 * text as a service config, whose syntax errors keep their own messages), or -1 with err set
 * (RETRY_ECONFIG: bad input, with line and column when the source gives them; RETRY_ENOMEM).
 * Warnings never fail here; see expt_import_policy_text for --strict. */
int expt_import_text(const char *text, size_t len, const char *source, expt_import_result *out,
                     retry_error *err);

/* Frees what r holds; r may be zeroed or half-filled. */
void expt_import_result_close(expt_import_result *r);

/* The hook of the scenario loader's policy files: 0 when text is not a foreign format, 1 with
 * *doc the translated document (a new reference) after relaying each warning to the sink set
 * by expt_import_set_warn, or -1 with err set (bad input, out of memory, or the first warning
 * when the sink is strict). With 1, *origins (when origins is not NULL) is the translation's
 * table of where each field came from (a new reference, expt_import_result.origins) and
 * *format its format, so that explain can name the line each rule was read from. */
int expt_import_policy_text(const char *text, size_t len, const char *source, json_t **doc,
                            json_t **origins, expt_import_format *format, retry_error *err);

/* Sets where expt_import_policy_text relays its warnings (the sink of expt_scenario_set_warn:
 * the same callback, context and strictness). NULL drops them. w is borrowed until replaced.
 * Process-wide, as the program has one command line; not thread-safe. */
void expt_import_set_warn(const expt_scenario_warn *w);

#endif /* EXPT_IMPORT_H */
