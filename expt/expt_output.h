/*
 * expt_output.h: what a run of retrysim leaves behind: the summary document (summary.json, and
 * `--format json`), the files of `--out DIR` (expt_output.c) and the text summary on stdout
 * (expt_output_text.c). A expt_output collects copies of every run's results, so the worlds can
 * be freed as soon as they ran. Invariant: equal results give byte-identical documents and files.
 */
#ifndef EXPT_OUTPUT_H
#define EXPT_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "expt/expt_recovery.h"
#include "expt/expt_json.h"
#include "models/model_stats.h"
#include "retry/retry.h"

/* Significant digits kept in every double written (JSON and CSV). */
#define EXPT_OUTPUT_DIGITS 6

/* Flags of every JSON dump (EXPT_JSON_FLAGS): indent 2, keys in insertion order, reals with
 * enough precision to print the EXPT_OUTPUT_DIGITS kept by expt_output_round exactly. */
#define EXPT_OUTPUT_JSON_FLAGS EXPT_JSON_FLAGS

typedef struct expt_output expt_output;

/* Returns x rounded to EXPT_OUTPUT_DIGITS significant digits (-0 becomes 0). Non-finite values
 * are returned unchanged. */
double expt_output_round(double x);

/* A value of the scenario (a sweep's or a search's) as the scenario or the command line wrote
 * it, for tables, FAIL lines and reports: a string as it is ("800/s"), a real with the fewest
 * significant digits that read back as the same double (0.3, not 0.29999999999999999;
 * 3.16227766017 when that is what ran), anything else as compact JSON (its reals with 15
 * digits), "-" for NULL. Always NUL-terminates buf (size > 0); truncates to fit. */
void expt_output_value_text(const json_t *v, char *buf, size_t size);

/* Returns the run object of the summary document for results r: the keys sim_time_s, events,
 * calls, amplification, goodput_per_s, latency_ms, latency_ok_ms, side_effects and services,
 * and recovery, in that order (docs/cli.md lists every key and unit); rec is the judgement of
 * expt_recovery.h (NULL: recovery is null). NULL when out of memory. Returns a new reference;
 * release with json_decref. */
json_t *expt_output_run_json(const model_results *r, const expt_recovery *rec);
/* Puts "operators" (and "herds", when some population restarts or pauses) into the run
 * object o, when r has operators; nothing otherwise. Clears *ok when out of memory. Defined in
 * expt_output_ops.c (summary.json's "operators" and "herds"). */
void expt_output_ops_put(json_t *o, const model_results *r, bool *ok);

/* Returns a new collector for the runs of one scenario.
 *   scenario      the scenario's name (copied)
 *   sha256        hex SHA-256 of the scenario file (copied)
 *   seed          the seed written at the top level (the run's seed when the scenario has no
 *                 variants; the first run's otherwise)
 *   has_variants  true: runs go into a "variants" array; false: exactly one run, inline
 * NULL when out of memory. Returns a new object; free with expt_output_destroy. */
expt_output *expt_output_create(const char *scenario, const char *sha256, uint64_t seed,
                              bool has_variants);
/* Adds the provenance keys after "seed": "inputs" (the files read, expt_scenario_inputs),
 * "overrides" (the --set overrides as given) and "document" (the scenario as run,
 * expt_scenario_base_document); each is copied, NULL writes [] or null. Call before the first
 * run is added. Returns 0 or RETRY_ENOMEM (o is unchanged). */
int expt_output_set_provenance(expt_output *o, const json_t *inputs, const json_t *overrides,
                              const json_t *document);
/* Frees o and every copy it holds. NULL is a no-op. */
void expt_output_destroy(expt_output *o);

/* Adds one run: builds its run object and copies its time series and latency histogram, so r
 * may be freed right after; rec (may be NULL) is the run's recovery judgement, copied too. name is
 * the variant's name (ignored without variants). A variant whose seed differs from the top-level
 * one gets its own "seed" key after "variant". Returns 0, or RETRY_ENOMEM (o is unchanged), or
 * RETRY_EINVAL for a second run without variants. */
int expt_output_add_run(expt_output *o, const char *name, uint64_t seed, const model_results *r,
                       const expt_recovery *rec);

/* Adds key (stolen value v) at the end of run i's object, and of the top level too for a run
 * without variants, whose keys are there. Returns 0, or RETRY_ENOMEM when v is NULL or the set
 * fails (then the run may hold the key without the top level: a failed write follows). */
int expt_output_run_put(expt_output *o, size_t i, const char *key, json_t *v);

/* Number of runs added so far. */
size_t expt_output_n_runs(const expt_output *o);
/* Returns the run object of run i (with its "variant" key when the scenario has variants), for
 * checking expectations. Returns a borrowed pointer valid until expt_output_destroy. */
const json_t *expt_output_run(const expt_output *o, size_t i);
/* Returns the summary document. Returns a borrowed pointer valid until expt_output_destroy. */
const json_t *expt_output_summary(const expt_output *o);

/* Writes the summary document to f as JSON (EXPT_OUTPUT_JSON_FLAGS, trailing newline).
 * Returns 0, or -1 on a write error or when out of memory. */
int expt_output_write_json(const expt_output *o, FILE *f);

/* Writes the text summary to f: a block of figures for a scenario without variants, one
 * comparison table with a row per variant otherwise. Returns 0, or -1 on a write error or when
 * out of memory. */
int expt_output_print_text(const expt_output *o, FILE *f);

/* Writes the table of every edge of every run to f (`run --edges`), after a blank line and a
 * title: calls, attempts, attempts/call, worst case, max_attempts, ok %, p99 and the top stop
 * reason of each edge, with a variant column when the scenario has variants. Returns 0, or -1
 * on a write error or when out of memory. */
int expt_output_print_edges(const expt_output *o, FILE *f);

/* Returns the worst internal edge of run (a run object of the summary): among the edges that
 * start at a service, the one with the most attempts per call; on a tie the lowest ok % (calls
 * ended OK / calls on the edge), then the first in the document's order. NULL when no service
 * calls another. Borrowed from run. */
const json_t *expt_output_worst_edge(const json_t *run);
/* The name of run's edge e (an element of its amplification.edges) as the time series' columns
 * name it: "from->to", and "from->to#k" for the k-th edge (k >= 2) between the same two names
 * (a service calling one callee twice, a herd's init call beside a population's calls). */
void expt_output_edge_name(const json_t *run, const json_t *e, char *buf, size_t size);

/* Writes summary.json, timeseries.csv, latency.csv and, with variants, one
 * timeseries-<variant>.csv per variant into dir, creating dir (and its parents) when missing.
 * Every file is first written to NAME.tmp.<pid> and renamed over NAME only once all were
 * written, summary.json last; on a failure every temporary file is removed and err (may be
 * NULL) names the file and the reason. Returns 0, RETRY_EIO or RETRY_ENOMEM. */
int expt_output_write_dir(const expt_output *o, const char *dir, retry_error *err);

/* mkdir -p: creates dir and its missing parents. Returns 0, RETRY_EIO (err names dir and the
 * reason) or RETRY_ENOMEM. */
int expt_output_make_dirs(const char *dir, retry_error *err);

/* Fills err (when not NULL and still empty) with an error of the output files: code, the file
 * (source) and a printf message. Shared by the writers of expt_output.c, the pages and the plotter. */
void expt_output_error(retry_error *err, int code, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A printf into new memory (a path the writers build: "DIR/NAME"). Returns a new string, NULL
 * when out of memory; free with free. */
char *expt_output_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Temporary files removed when SIGINT or SIGTERM arrives (expt_output_signals_install):
 * register publishes path (borrowed: it must stay valid until forgotten) and returns its
 * slot, or -1 when the list is full (the file is then not removed on a signal); forget
 * withdraws it (-1 is a no-op). Every writer of a NAME.tmp.<pid> file registers it. */
int expt_output_tmp_register(const char *path);
void expt_output_tmp_forget(int slot);
/* Writes path whole or not at all: fill(ctx, f) writes the content into path.tmp.<pid> (a
 * registered temporary file, see above), which is then renamed over path. fill returns 0, or
 * non-zero when it could not write everything. Returns 0, or RETRY_ENOMEM / RETRY_EIO with err
 * naming path (the temporary file's name in the message); the temporary file never stays. */
int expt_output_write_atomic(const char *path, int (*fill)(void *ctx, FILE *f), void *ctx,
                            retry_error *err);
/* Installs the handlers of SIGINT and SIGTERM: remove every registered temporary file, then
 * end by the signal (exit status 130 and 143 in a shell). A SIGINT ignored on entry stays
 * ignored. SIGXFSZ is ignored, so a file over the size limit fails to write (EFBIG) and is
 * removed like any failed write (exit status 3). Called once, by main. */
void expt_output_signals_install(void);

/* Replaces, in place, every character of s unsafe in a file name with '_' (letters, digits,
 * '-', '_' and '.' are kept): how a variant's name becomes part of its files' names. */
void expt_output_safe_name(char *s);

#endif /* EXPT_OUTPUT_H */
