/*
 * expt_scenario.h: loading a scenario file. The JSON document is read with jansson, the
 * command line's --set overrides are applied to it, and then the base scenario and every
 * variant are turned into model_config structs and validated completely, so that nothing
 * runs when any part is wrong. Owns the JSON document and every config it built.
 */
#ifndef EXPT_SCENARIO_H
#define EXPT_SCENARIO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "expt/expt_recovery.h"
#include "models/model_config.h"
#include "retry/retry.h"

/* One override "PATH=VALUE" from the command line. PATH is a dotted path into the scenario
 * document ("services.api.workers", "clients.web.policy.methodConfig[0].retryPolicy.maxAttempts");
 * [n] indexes an array (n may be its size: append), ["key"] quotes a key holding a '.', and a
 * leading "$." is allowed (docs/scenario-format.md, "Paths and --set"). VALUE is parsed as
 * JSON when it is valid JSON, else taken as a string ("2s"). A JSON null (or a NULL value)
 * removes the key. Missing intermediate objects are created. Neither string is kept. */
typedef struct expt_set {
  const char *path;
  const char *value;
} expt_set;

typedef struct expt_scenario expt_scenario;

/* Where the loaders report the warnings of the service configs they load (policies inline or
 * in files: ignored fields, probable unit mistakes; docs/service-config.md, "Warnings"). fn
 * gets each one: w->source is the file it is in (the scenario for an inline policy, else the
 * policy file), w->path its JSON path there, w->message what is wrong; variant names the
 * variant being converted, NULL for the base document. A policy shared by several variants
 * is loaded once per variant, so the same warning may come several times. strict: each
 * warning is a loading error instead, with the same message. */
typedef struct expt_scenario_warn {
  void (*fn)(void *ctx, const char *variant, const retry_error *w);
  void *ctx;
  bool strict;
} expt_scenario_warn;

/* Sets the warning sink of the loads that follow; NULL (the start) drops warnings and is not
 * strict. w is borrowed until replaced. Process-wide, as the program has one command line;
 * not thread-safe. */
void expt_scenario_set_warn(const expt_scenario_warn *w);

/* Loads and validates the scenario file at path with overrides applied in order. Returns a new
 * scenario; free with expt_scenario_destroy. NULL on error: err names the file (source), the
 * JSON path of the bad value ("$.services.api.queue.capacity"), line and column when jansson
 * gives them (syntax errors), and a message saying what was wrong and what is allowed. */
expt_scenario *expt_scenario_load(const char *path, const expt_set *sets, size_t n_sets,
                                retry_error *err);
/* Same from a string; source names it in errors (NULL: "<string>"); relative policy file
 * paths are resolved against the current directory. */
expt_scenario *expt_scenario_load_string(const char *json, const char *source, const expt_set *sets,
                                       size_t n_sets, retry_error *err);
/* A new scenario: base as loaded (its document after the command line's --set, the policy
 * files already read into it) with sets[0..n_sets) applied after base's own overrides and
 * before each variant's "set", then validated like a load (same errors as --set, named
 * "override"; a value that does not validate is reported at its JSON path). Keeps base's
 * selection of variants (expt_scenario_select). Reads no file again and hashes nothing:
 * sha256 and inputs are base's (plus any file an override names for the first time), and
 * the overrides are base's followed by these. base is only read, so threads may derive from
 * one base at once; base must outlive the result (it borrows base's distribution tables).
 * A sweep's point is one such derivation (expt_sweep.h). NULL on error, err filled. */
expt_scenario *expt_scenario_derive(const expt_scenario *base, const expt_set *sets, size_t n_sets,
                                  retry_error *err);
/* Frees s and every config it built. NULL is a no-op. */
void expt_scenario_destroy(expt_scenario *s);

/* The scenario's name ("name", else the file's base name without .json). Borrowed. */
const char *expt_scenario_name(const expt_scenario *s);
/* Lower-case hex SHA-256 of the file's bytes as read (before overrides). Borrowed. */
const char *expt_scenario_sha256(const expt_scenario *s);
/* Every file read, in the order read: the scenario first ({"role": "scenario", "path": its
 * base name, "sha256"}), then each policy file once ({"role": "policy", "path": as written in
 * the scenario, "sha256", "named_at": [JSON paths that named it]}), then each distribution file
 * once
 * ({"role": "distribution", ...}, the same members). A JSON array; returns a borrowed pointer
 * valid until expt_scenario_destroy. */
const json_t *expt_scenario_inputs(const expt_scenario *s);
/* The --set overrides as given, in order ({"path": PATH, "value": VALUE as text, or null}),
 * --duration included as the set it is. A JSON array; borrowed, valid until destroy. */
const json_t *expt_scenario_overrides(const expt_scenario *s);
/* The scenario's document as it was run: the file after its policy files were read into it
 * and the --set overrides applied, variants included (each run's own document is this one
 * with its variant's "set" applied). Borrowed, valid until expt_scenario_destroy. */
const json_t *expt_scenario_base_document(const expt_scenario *s);

/* Keeps only the variants named in names[0..n) (n == 0 keeps every run), in the scenario's
 * order. Returns 0, or RETRY_EINVAL with err filled ("<command line>": the scenario has no
 * variants, or a name is not one of them; the message lists the variants). */
int expt_scenario_select(expt_scenario *s, const char *const *names, size_t n, retry_error *err);

/* The default of --max-memory: 8 GiB. */
#define EXPT_SCENARIO_MAX_MEMORY_DEFAULT (UINT64_C(8) << 30)
/* Checks that no run's world would need more than max_bytes (model_world_estimate_bytes).
 * Returns 0, or RETRY_ERANGE with err filled: the run, the estimate, the limit and the
 * option that raises it. max_bytes UINT64_MAX: no limit. */
int expt_scenario_check_memory(const expt_scenario *s, uint64_t max_bytes, retry_error *err);
/* Number of runs: the number of variants, or 1 when the scenario has none. */
size_t expt_scenario_n_runs(const expt_scenario *s);
/* Whether the scenario defines variants. */
bool expt_scenario_has_variants(const expt_scenario *s);
/* Name of run i (the variant's name; the scenario's name when there are no variants). */
const char *expt_scenario_run_name(const expt_scenario *s, size_t i);
/* The scenario's "description", or NULL. Borrowed. */
const char *expt_scenario_description(const expt_scenario *s);
/* Variant i's "description", or NULL (also without variants). Borrowed. */
const char *expt_scenario_run_description(const expt_scenario *s, size_t i);
/* The config of run i: the document with variant i's overrides applied. Borrowed. */
const model_config *expt_scenario_config(const expt_scenario *s, size_t i);
/* How run i's recovery after its faults is judged (its "recovery", or the defaults). Borrowed. */
const expt_recovery_cfg *expt_scenario_recovery(const expt_scenario *s, size_t i);
/* The expectations of run i: the top-level "expect" merged with the variant's own (the
 * variant's win on equal keys). NULL when there are none. Borrowed. */
const json_t *expt_scenario_expect(const expt_scenario *s, size_t i);
/* The resolved document of run i (after --set and the variant's overrides), for provenance.
 * A variant's document is the base without its "variants" key, with the variant's "set"
 * applied. Borrowed. */
const json_t *expt_scenario_document(const expt_scenario *s, size_t i);

/* The value at path (the --set syntax, no selectors) in doc, or NULL when the path is bad,
 * does not fit the document, or reaches nothing or a null; err (may be NULL) then says which
 * (RETRY_EINVAL, the reason alone in its message: "\"services.apx\" is not there"). Borrowed
 * from doc. */
const json_t *expt_scenario_path_get(const json_t *doc, const char *path, retry_error *err);
/* Checks that path is a valid --set path. Returns 0, or RETRY_EINVAL with the reason alone in
 * err's message (err may be NULL). */
int expt_scenario_path_check_set(const char *path, retry_error *err);

/* Why a path reaches no value in one of a scenario's runs, for the message of a sweep's or a
 * search's check: the path as shown, " in variant \"NAME\"" (empty without variants) and where
 * the walk stopped (the message of expt_scenario_path_get's err). */
typedef struct expt_scenario_miss {
  char shown[72];
  char run[80];
  char why[160];
} expt_scenario_miss;

/* Whether path reaches a value (not null) in every run's document of s: a sweep or a search
 * changes values, it does not add them. False with *miss filled for the first run it does not
 * reach. */
bool expt_scenario_path_reaches(const expt_scenario *s, const char *path,
                                expt_scenario_miss *miss);

/* The scenario file as named (for messages). Borrowed. */
const char *expt_scenario_source(const expt_scenario *s);
/* The document's "sweep" block (the shape validated at load, every axis checked to reach a
 * value in every run's document; expt_sweep.h reads it), or NULL. Borrowed. */
const json_t *expt_scenario_sweep_block(const expt_scenario *s);
/* The document's "search" block (validated at load, its path checked like a sweep axis;
 * expt_search.h reads it), or NULL. Borrowed. */
const json_t *expt_scenario_search_block(const expt_scenario *s);

/* The study's top-level keys (validated by the loader): "replications" (0 when absent),
 * "confidence" (NaN when absent), "baseline" (NULL when absent; borrowed). */
size_t expt_scenario_replications(const expt_scenario *s);
double expt_scenario_confidence(const expt_scenario *s);
const char *expt_scenario_baseline(const expt_scenario *s);

/* Parses a duration with a unit: "250ms", "1.5s", "0.1s", "2m", "1h", "500us", "100ns", "0";
 * a bare number is an error (the unit is required) except 0. Returns 0 and sets *ns, or
 * RETRY_EINVAL / RETRY_ERANGE. */
int expt_duration_parse(const char *s, int64_t *ns);
/* Parses a rate "800/s", "50/ms", "3000/min", "0.5/s" into calls per second. Returns 0 or
 * RETRY_EINVAL / RETRY_ERANGE. */
int expt_rate_parse(const char *s, double *per_s);

/* Warns on f, one line per variant that repeats an earlier one, when two variants of s have
 * the same document once their sets are applied (their names aside) and the same seed: their
 * results would be the same (expt_scenario_same.c). Nothing without variants. */
void expt_scenario_warn_identical(const expt_scenario *s, FILE *f);

/* Warns on f, one line per run of s whose recovery cannot be judged: its trigger ends so near
 * the end of the duration that no span of the recovery rule's hold fits after it, so every
 * run would read as not recovered (expt_scenario_windows.c). */
void expt_scenario_warn_unjudged(const expt_scenario *s, FILE *f);

#endif /* EXPT_SCENARIO_H */
