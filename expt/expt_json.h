/*
 * expt_json.h: the small JSON helpers every writer of the library shares: setting a key while
 * counting allocation failures, a uint64 that keeps every digit, the writer of a document as
 * the program prints it, and reading a number at a dotted path with an explicit value for a
 * missing one. Pure functions over jansson values; no state.
 */
#ifndef EXPT_JSON_H
#define EXPT_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* How the program writes every JSON file and JSON output: indented by 2, keys in insertion
 * order, reals with 10 significant digits. */
#define EXPT_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

/* Sets key to v in o, which steals v. Clears *ok when v is NULL (out of memory) or the set
 * fails; o may be NULL (then v is released). With it a builder is one straight list of keys:
 * an allocation failure anywhere only clears the flag. */
void expt_json_put(json_t *o, const char *key, json_t *v, bool *ok);

/* A uint64 as an integer when JSON integers (int64) can hold it, else as a decimal string:
 * seeds (any uint64 from the command line) can pass INT64_MAX, and a string keeps every
 * digit where a real would round it. Readers must accept both forms. New reference, NULL when
 * out of memory. */
json_t *expt_json_u64(uint64_t v);

/* Writes the JSON document ctx (a json_t *) to f with EXPT_JSON_FLAGS and a newline: the fill
 * callback of expt_output_write_atomic, and the printer of --format json. Returns 0, or -1
 * when out of memory or on a write error. */
int expt_json_fill(void *ctx, FILE *f);

/* The member of o at a dotted path of keys ("latency_ms.p99"; at most 95 characters), or NULL
 * when a key is missing. Borrowed from o. */
const json_t *expt_json_at(const json_t *o, const char *path);

/* v's number, or `missing` when v is NULL or not a number. The pages use NaN (a figure that
 * is not there is not drawn, expt_report), the text table 0 (a missing figure prints as 0
 * rather than failing the table, expt_output_text): the two callers say which by name. */
double expt_json_number_or(const json_t *v, double missing);

/* v's kind as an error message says it: "an object", "an array", "a string", "a number", "a
 * boolean" or "null" (\"services.api\" is a string, not an object). */
const char *expt_json_type_name(const json_t *v);

#endif /* EXPT_JSON_H */
