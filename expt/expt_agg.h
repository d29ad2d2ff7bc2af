/*
 * expt_agg.h: the statistics of a study over its replications: a run object (expt_output_run_json)
 * flattened into named metrics, the table of one (point, variant)'s metrics over its
 * replications, and the aggregate object built from it (means, intervals, proportions, the
 * censored recovery time, P(storm), paired differences against a baseline). Pure functions of
 * the run objects: equal inputs give equal (byte-identical once dumped) aggregates.
 */
#ifndef EXPT_AGG_H
#define EXPT_AGG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "sim/sim_stats.h"

/* What a metric holds: a JSON number, a boolean (a proportion: true = 1), or only nulls so far
 * (no value: a recovery that never came). */
typedef enum expt_agg_kind { EXPT_AGG_NULL = 0, EXPT_AGG_NUMBER, EXPT_AGG_BOOL } expt_agg_kind;

/* One flattened value: the metric's name (object keys joined with '.', array elements that
 * have "from" and "to" named "[from->to]", other array elements "[i]"), its kind and value
 * (NaN for null). */
typedef void (*expt_agg_visit)(void *ctx, const char *name, expt_agg_kind kind, double value);

/* Calls visit for every number, boolean and null of run in document order (strings, empty
 * objects and empty arrays are skipped). Names longer than 511 bytes are cut. */
void expt_agg_flatten(const json_t *run, expt_agg_visit visit, void *ctx);

/* The metrics of n replications of one (point, variant): one row per metric name met in any
 * replication, in the order first met (replication 0's document order, then what later ones
 * add), and one value per replication (NaN: null or missing; a missing count under a
 * "by_status" object is 0, as that object lists only the statuses seen). */
typedef struct expt_agg_table expt_agg_table;

/* Flattens runs[0..n) (run objects; n >= 1). NULL when out of memory. Returns a new object; free
 * with expt_agg_table_destroy. */
expt_agg_table *expt_agg_table_create(const json_t *const *runs, size_t n);
/* NULL is a no-op. */
void expt_agg_table_destroy(expt_agg_table *t);
size_t expt_agg_table_n_metrics(const expt_agg_table *t);
size_t expt_agg_table_n_reps(const expt_agg_table *t);
/* Name, kind and values (n_reps of them) of metric i. Borrowed until expt_agg_table_destroy. */
const char *expt_agg_table_name(const expt_agg_table *t, size_t i);
expt_agg_kind expt_agg_table_kind(const expt_agg_table *t, size_t i);
const double *expt_agg_table_values(const expt_agg_table *t, size_t i);
/* Index of the metric named name, or -1. */
long expt_agg_table_find(const expt_agg_table *t, const char *name);

/* The censored recovery time: over the n replications that have a recovery judgement, the
 * n_recovered ones that recovered give the mean and interval (over them only); the median is
 * Kaplan-Meier's (every non-recovered replication censored past the longest run: the smallest
 * recovery time by which at least half of the n had recovered), NaN when more than half never
 * recovered. Replications flagged "unjudged" (no hold span fits after their trigger) are
 * counted in n_unjudged and left out of n. */
typedef struct expt_agg_recovery {
  size_t n, n_recovered, n_censored;
  size_t n_unjudged;
  sim_stats_interval recovered; /* over the recovered replications only */
  double median;                /* NaN: more than half never recovered (or n == 0) */
} expt_agg_recovery;

/* Fills r from the table's "recovery.recovered" and "recovery.recovery_s". Returns false (r
 * zeroed, median NaN) when no replication has a recovery judgement. */
bool expt_agg_recovery_of(const expt_agg_table *t, double level, expt_agg_recovery *r);

/* The Welch (unpaired) interval of mean(a) - mean(b) over the finite values of a[0..na) and
 * b[0..nb), with the Welch-Satterthwaite degrees of freedom. NaN bounds when either side has
 * fewer than 2 values. When both spreads are 0, the interval is the difference itself. */
void expt_agg_welch(const double *a, size_t na, const double *b, size_t nb, double level, double *lo,
                   double *hi);

/* The aggregate object of one (point, variant): runs[0..n) (the table's run objects) merged
 * into one run-shaped object where every number is the mean over the replications, every
 * boolean the share of true, and every value that some replication has as null (censored: a
 * recovery that never came) null, all rounded as expt_output writes numbers; "variant" first (name,
 * may be NULL: no key), then "n", the run keys, and "intervals":   {metric: {n, mean, sd, lo, hi,
 * half_width}} for every number (Student t), over the replications with a value; with "n_censored"
 * and "over" when some had it null "proportions": {metric: {n, k, p, lo, hi}} for every boolean
 * (Wilson) "recovery_s":  the censored block (expt_agg_recovery) when there is a recovery judgement
 *   "p_storm":     {n, k, p, lo, hi}: the share that never recovered (Wilson), likewise
 *   "paired":      with base (the baseline's table on the same seeds, not this variant's own):
 *                  {"baseline": base_name, "metrics": {metric: {n, mean_diff, sd, lo, hi,
 *                  half_width, unpaired_lo, unpaired_hi, test, p_value, distinguishable}},
 *                  "level", "adjust": "none" | "holm", "n_tested", "n_flagged"} for every
 *                  number and boolean both have (booleans as 1/0): the intervals over the
 *                  pairs where both have a value (the unpaired Welch one too), with
 *                  "n_censored" (the pairs left out) when a side had nulls; "test" the exact
 *                  test that sets the flag (expt_paired.h: "t", "sign" for a difference of
 *                  zero spread, "mcnemar" for booleans, "censored_sign" for a recovery time
 *                  with nulls, with n_ordered, n_up, n_down, n_ties and for the last
 *                  n_one_censored, n_both_censored); distinguishable: the t interval excludes
 *                  0, or the exact test's p < 1 - level, or with Holm the step-down rejects
 * NaN figures are written as null. level in (0, 1). NULL when out of memory. Returns a new
 * reference; release with json_decref. */
json_t *expt_agg_object(const char *name, const expt_agg_table *t, const json_t *const *runs,
                       const expt_agg_table *base, const char *base_name, double level);

/* expt_agg_object, with holm: the paired flags by Holm's step-down over the variant's tested
 * metrics at family error 1 - level (on every test's p-value, the t test's too). */
json_t *expt_agg_object_adjusted(const char *name, const expt_agg_table *t,
                                 const json_t *const *runs, const expt_agg_table *base,
                                 const char *base_name, double level, bool holm);

#endif /* EXPT_AGG_H */
