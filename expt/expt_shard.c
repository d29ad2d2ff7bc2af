/*
 * expt_shard.c: merging shard files (expt_shard_file.h) back into a study's outputs.
 * Invariant: a merge accepts only a complete set of shards of one plan, each run exactly once,
 * and refuses anything else before writing a file.
 */
#include "expt/expt_shard.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "expt/expt_output.h"
#include "expt/expt_shard_check.h"
#include "expt/expt_shard_file.h"
#include "expt/expt_run.h"
#include "expt/expt_study.h"

typedef struct shard_in {
  char path[4096];
  json_t *doc;
  long k, n;
} shard_in;

/* Checks shard i (in[i], loaded): a regular file, every field the merge
 * reads (expt_shard_check.h), and for i > 0 of the same plan and count as in[0], not given
 * twice. Returns the exit status, the reason printed on errf. */
static int read_shard(shard_in *in, size_t i, const json_t *ref, FILE *errf) {
  int status = expt_shard_check_doc(in[i].path, in[i].doc, ref, errf);
  if (status != EXPT_EXIT_OK) return status;
  const json_t *d = in[i].doc;
  in[i].k = (long)json_integer_value(json_object_get(d, "shard"));
  in[i].n = (long)json_integer_value(json_object_get(d, "of"));
  if (i == 0) return EXPT_EXIT_OK;
  const json_t *plan = json_object_get(in[0].doc, "plan");
  long of = in[0].n;
  if (!json_equal(plan, json_object_get(d, "plan"))) {
    char key[128];
    expt_shard_check_first_difference(plan, json_object_get(d, "plan"), key, sizeof key);
    fprintf(errf, "retrysim: %s: a shard of a different plan than %s (they differ in \"%s\")\n",
            in[i].path, in[0].path, key);
    return EXPT_EXIT_USAGE;
  }
  if (in[i].n != of) {
    fprintf(errf, "retrysim: %s: shard %ld of %ld, but %s is a shard of %ld\n", in[i].path, in[i].k,
            in[i].n, in[0].path, of);
    return EXPT_EXIT_USAGE;
  }
  for (size_t j = 0; j < i; j++)
    if (in[j].k == in[i].k) {
      fprintf(errf, "retrysim: %s: shard %ld of %ld given twice (also %s)\n", in[i].path, in[i].k,
              of, in[j].path);
      return EXPT_EXIT_USAGE;
    }
  return EXPT_EXIT_OK;
}

/* Fewer than N shards given (more would have repeated one): names the first missing. Returns
 * the exit status. */
static int check_all_given(const shard_in *in, size_t n, long of, FILE *errf) {
  if ((long)n == of) return EXPT_EXIT_OK;
  for (long k = 1; k <= of; k++) {
    bool found = false;
    for (size_t j = 0; j < n && !found; j++)
      found = in[j].k == k;
    if (!found) {
      fprintf(errf, "retrysim: merge: shard %ld of %ld is missing (%zu given)\n", k, of, n);
      break;
    }
  }
  return EXPT_EXIT_USAGE;
}

/* Puts every run record of the shards into slots[0..n_runs) by its index (from[] says where
 * each came from), checking each against the plan, that it appears once, and that none is
 * missing. Returns the exit status. */
static int place_runs(const shard_in *in, size_t n, long of, json_t **slots,
                      expt_shard_origin *from, json_int_t n_runs, FILE *errf) {
  for (size_t i = 0; i < n; i++) {
    size_t j;
    json_t *rec;
    json_array_foreach(json_object_get(in[i].doc, "runs"), j, rec) {
      int status = expt_shard_check_record(in[i].path, in[i].doc, j, in[i].k, of, errf);
      if (status != EXPT_EXIT_OK) return status;
      json_int_t r = json_integer_value(json_object_get(rec, "run"));
      if (slots[r] != NULL) {
        fprintf(errf, "retrysim: %s: $.runs[%zu]: run %lld appears twice\n", in[i].path, j,
                (long long)r);
        return EXPT_EXIT_USAGE;
      }
      slots[r] = rec;
      from[r] = (expt_shard_origin){in[i].path, j};
    }
  }
  for (json_int_t r = 0; r < n_runs; r++)
    if (slots[r] == NULL) {
      /* in[] is in the order given, not in shard order: find the shard that should have it. */
      size_t j = 0;
      while (j + 1 < n && in[j].k != (long)(r % of) + 1)
        j++;
      fprintf(errf, "retrysim: %s: run %lld is missing from this shard\n", in[j].path,
              (long long)r);
      return EXPT_EXIT_USAGE;
    }
  return expt_shard_check_results(json_object_get(in[0].doc, "plan"), (const json_t *const *)slots,
                                  from, (size_t)n_runs, errf);
}

/* The run records of every shard in run-list order into *records (a new array). Returns the
 * exit status. */
static int merge_records(const shard_in *in, size_t n, const json_t *plan, long of,
                         json_t **records, FILE *errf) {
  json_int_t n_runs = json_integer_value(json_object_get(json_object_get(plan, "study"), "n_runs"));
  /* n_runs >= 1, checked with the plan (expt_shard_check_doc). */
  json_t **slots = calloc((size_t)n_runs, sizeof *slots);
  expt_shard_origin *from = calloc((size_t)n_runs, sizeof *from);
  if (slots == NULL || from == NULL) {
    free(slots);
    free(from);
    fprintf(errf, "retrysim: out of memory merging %lld runs\n", (long long)n_runs);
    return EXPT_EXIT_RUNTIME;
  }
  int status = place_runs(in, n, of, slots, from, n_runs, errf);
  if (status == EXPT_EXIT_OK) {
    *records = json_array();
    for (json_int_t r = 0; r < n_runs && *records != NULL; r++)
      if (json_array_append(*records, slots[r]) != 0) {
        json_decref(*records);
        *records = NULL;
      }
    if (*records == NULL) {
      fprintf(errf, "retrysim: out of memory\n");
      status = EXPT_EXIT_RUNTIME;
    }
  }
  free(slots);
  free(from);
  return status;
}

int expt_shard_merge(const char *const *dirs, size_t n, const expt_run_opts *opts) {
  FILE *errf = opts->err;
  const char *out_dir = opts->out_dir;
  if (n == 0) {
    fprintf(errf, "retrysim: merge: which shard directories? (see retrysim --help)\n");
    return EXPT_EXIT_USAGE;
  }
  struct stat sb;
  if (stat(out_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
    fprintf(errf, "retrysim: %s: --out must name a directory, this is a file\n", out_dir);
    return EXPT_EXIT_USAGE;
  }
  shard_in *in = calloc(n, sizeof *in);
  if (in == NULL) {
    fprintf(errf, "retrysim: out of memory\n");
    return EXPT_EXIT_RUNTIME;
  }
  int status = EXPT_EXIT_OK;
  for (size_t i = 0; i < n && status == EXPT_EXIT_OK; i++) {
    expt_shard_file_path(in[i].path, sizeof in[i].path, dirs[i]);
    status = expt_shard_check_load(in[i].path, &in[i].doc, errf);
  }
  /* A plan that matches its digest, so that a shard whose plan was changed can be told which
   * field differs from it. */
  const json_t *ref = NULL;
  for (size_t i = 0; i < n && status == EXPT_EXIT_OK && ref == NULL; i++)
    if (expt_shard_check_digest_ok(in[i].doc)) ref = json_object_get(in[i].doc, "plan");
  for (size_t i = 0; i < n && status == EXPT_EXIT_OK; i++)
    status = read_shard(in, i, ref, errf);
  const json_t *plan = json_object_get(in[0].doc, "plan");
  long of = in[0].n;
  if (status == EXPT_EXIT_OK) status = check_all_given(in, n, of, errf);
  json_t *records = NULL;
  if (status == EXPT_EXIT_OK) status = merge_records(in, n, plan, of, &records, errf);
  if (status == EXPT_EXIT_OK) {
    expt_run_opts o = *opts;
    o.format = EXPT_FORMAT_TEXT;
    status = expt_study_finish(plan, records, NULL, &o);
  }
  json_decref(records);
  for (size_t i = 0; i < n; i++)
    json_decref(in[i].doc);
  free(in);
  return status;
}
