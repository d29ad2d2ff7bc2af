/*
 * expt_shard_check.h: what a merge checks in a shard file before it trusts it. In a cluster
 * the files come from other machines (and other hands), so every field the merge reads is
 * checked against its type, its range and the rest of the plan: the plan against its recorded
 * digest, each run record against the plan (its run, point, variant, replication and seed),
 * and each run result against the shape of its neighbours. Each refusal names the shard file
 * and the JSON path of the field, on one line; the exit status is 2.
 */
#ifndef EXPT_SHARD_CHECK_H
#define EXPT_SHARD_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Loads the shard file path into *doc (a new reference) after checking that it is a regular
 * file (a FIFO or a device would block or never end). Returns the exit status: 0, or 2 with
 * the reason on errf. */
int expt_shard_check_load(const char *path, json_t **doc, FILE *errf);

/* The first key (top level or in "study") in which plans a and b differ, into buf ("?" when
 * none), for the messages. */
void expt_shard_check_first_difference(const json_t *a, const json_t *b, char *buf, size_t size);

/* Whether the loaded shard file doc's plan matches its recorded digest. */
bool expt_shard_check_digest_ok(const json_t *doc);

/* Checks the top level of a loaded shard file (retrysim_shard, shard, of, plan_sha256,
 * variant_seeds, plan, runs), then every field of its plan that the merge reads (version,
 * seed, study.replications, confidence, variants, baseline, warmup_s, has_variants, axes,
 * n_points, n_runs, seeds, points) and last the plan's digest; when that fails and ref (the
 * plan of a shard that matches its digest, may be NULL) differs, the message names the first
 * key that differs. Returns the exit status. */
int expt_shard_check_doc(const char *path, const json_t *doc, const json_t *ref, FILE *errf);

/* Checks run record j of the shard k of n (path, doc already checked): its fields against the
 * plan. Returns the exit status. */
int expt_shard_check_record(const char *path, const json_t *doc, size_t j, long k, long n,
                            FILE *errf);

/* Where run record r of the merged list came from: for the messages. */
typedef struct expt_shard_origin {
  const char *path; /* the shard file */
  size_t index;     /* the record's index in its "runs" */
} expt_shard_origin;

/* Checks the results of the merged records[0..n_runs) (every one placed, checked by
 * expt_shard_check_record) for shape: a result holds the core counts, and the results of one
 * (point, variant) have the same keys and kinds (a number stays a number; null may stand for
 * anything, a "by_status" object lists what it saw). Returns the exit status. */
int expt_shard_check_results(const json_t *plan, const json_t *const *records,
                             const expt_shard_origin *from, size_t n_runs, FILE *errf);

#endif /* EXPT_SHARD_CHECK_H */
