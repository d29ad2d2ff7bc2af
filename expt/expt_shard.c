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
#include "expt/expt_shard_file.h"
#include "expt/expt_run.h"
#include "expt/expt_study.h"

/* The first key (top level or in "study") in which two plans differ, for the message. */
static void first_difference(const json_t *a, const json_t *b, char *buf, size_t size) {
  const char *key;
  json_t *v;
  snprintf(buf, size, "?");
  json_object_foreach((json_t *)a, key, v) {
    const json_t *w = json_object_get(b, key);
    if (json_equal(v, w)) continue;
    if (strcmp(key, "study") == 0 && json_is_object(w)) {
      const char *k2;
      json_t *v2;
      json_object_foreach(v, k2, v2) {
        if (!json_equal(v2, json_object_get(w, k2))) {
          snprintf(buf, size, "study.%s", k2);
          return;
        }
      }
    }
    snprintf(buf, size, "%s", key);
    return;
  }
  json_object_foreach((json_t *)b, key, v) {
    if (json_object_get(a, key) == NULL) {
      snprintf(buf, size, "%s", key);
      return;
    }
  }
}

typedef struct shard_in {
  char path[4096];
  json_t *doc;
  long k, n;
} shard_in;

/* Reads shard i (from dirs[i]) into in[i] and checks it: a shard file, its shard in range, and
 * for i > 0 of the same plan and count as in[0], not given twice. Returns the exit status,
 * the reason printed on errf. */
static int read_shard(shard_in *in, size_t i, const char *dir, FILE *errf) {
  expt_shard_file_path(in[i].path, sizeof in[i].path, dir);
  json_error_t je;
  in[i].doc = json_load_file(in[i].path, 0, &je);
  if (in[i].doc == NULL) {
    if (je.line > 0)
      fprintf(errf, "retrysim: %s:%d:%d: not a shard file: %s\n", in[i].path, je.line, je.column,
              je.text);
    else
      fprintf(errf, "retrysim: %s: cannot read the shard: %s\n", in[i].path, je.text);
    return EXPT_EXIT_USAGE;
  }
  const json_t *d = in[i].doc;
  json_t *kv = json_object_get(d, "shard"), *nv = json_object_get(d, "of");
  if (json_integer_value(json_object_get(d, "retrysim_shard")) != 1 || !json_is_integer(kv) ||
      !json_is_integer(nv) || !json_is_object(json_object_get(d, "plan")) ||
      !json_is_array(json_object_get(d, "runs"))) {
    fprintf(errf,
            "retrysim: %s: not a shard file (a shard file has \"retrysim_shard\": 1, \"shard\", "
            "\"of\", \"plan\" and \"runs\"; `retrysim run --shard K/N --out DIR` writes one)\n",
            in[i].path);
    return EXPT_EXIT_USAGE;
  }
  in[i].k = (long)json_integer_value(kv);
  in[i].n = (long)json_integer_value(nv);
  if (in[i].n < 1 || in[i].k < 1 || in[i].k > in[i].n) {
    fprintf(errf, "retrysim: %s: $.shard: shard %ld of %ld is out of range\n", in[i].path, in[i].k,
            in[i].n);
    return EXPT_EXIT_USAGE;
  }
  if (i == 0) return EXPT_EXIT_OK;
  const json_t *plan = json_object_get(in[0].doc, "plan");
  long of = in[0].n;
  if (!json_equal(plan, json_object_get(d, "plan"))) {
    char key[128];
    first_difference(plan, json_object_get(d, "plan"), key, sizeof key);
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

/* Puts every run record of the shards into slots[0..n_runs) by its index, checking that each
 * belongs to its shard, appears once, and that none is missing. Returns the exit status. */
static int place_runs(const shard_in *in, size_t n, long of, json_t **slots, json_int_t n_runs,
                      FILE *errf) {
  for (size_t i = 0; i < n; i++) {
    size_t j;
    json_t *rec;
    json_array_foreach(json_object_get(in[i].doc, "runs"), j, rec) {
      json_t *ri = json_object_get(rec, "run");
      json_int_t r = json_integer_value(ri);
      if (!json_is_integer(ri) || r < 0 || r >= n_runs || r % of != in[i].k - 1 ||
          !json_is_object(json_object_get(rec, "result"))) {
        fprintf(errf, "retrysim: %s: $.runs[%zu]: not a run of shard %ld of %ld\n", in[i].path, j,
                in[i].k, of);
        return EXPT_EXIT_USAGE;
      }
      if (slots[r] != NULL) {
        fprintf(errf, "retrysim: %s: $.runs[%zu]: run %lld appears twice\n", in[i].path, j,
                (long long)r);
        return EXPT_EXIT_USAGE;
      }
      slots[r] = rec;
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
  return EXPT_EXIT_OK;
}

/* The run records of every shard in run-list order into *records (a new array). Returns the
 * exit status. */
static int merge_records(const shard_in *in, size_t n, const json_t *plan, long of,
                         json_t **records, FILE *errf) {
  json_int_t n_runs = json_integer_value(json_object_get(json_object_get(plan, "study"), "n_runs"));
  json_t **slots = n_runs > 0 ? calloc((size_t)n_runs, sizeof *slots) : NULL;
  if (slots == NULL) {
    fprintf(errf, "retrysim: %s: $.plan.study.n_runs: no runs to merge\n", in[0].path);
    return n_runs > 0 ? EXPT_EXIT_RUNTIME : EXPT_EXIT_USAGE;
  }
  int status = place_runs(in, n, of, slots, n_runs, errf);
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
  for (size_t i = 0; i < n && status == EXPT_EXIT_OK; i++)
    status = read_shard(in, i, dirs[i], errf);
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
