/*
 * expt_shard_check.c: a shard file checked field by field before a merge trusts it
 * (expt_shard_check.h). Invariant: when every check passes, every value that
 * expt_study_finish reads from the plan and the records has its type and range, so a merge
 * never asserts, divides by zero or allocates by a count it has not bounded.
 */
#include "expt/expt_shard_check.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "retry/retry.h"

#include "expt/expt_json.h"
#include "expt/expt_output.h"
#include "expt/expt_shard_file.h"
#include "expt/expt_study.h"

/* {==================================================================
 * Reading the values
 * =================================================================== */

/* Prints "retrysim: PATH: FIELD: message" and returns the usage status, so a check reads
 * `return bad(...)`. */
static int bad(FILE *errf, const char *path, const char *field, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(errf, "retrysim: %s: %s: %s\n", path, field, msg);
  return EXPT_EXIT_USAGE;
}

/* A seed as expt_json_u64 writes it: an integer >= 0, or a string of decimal digits (one past
 * INT64_MAX). Returns false for anything else. */
static bool get_u64(const json_t *v, uint64_t *out) {
  if (json_is_integer(v) && json_integer_value(v) >= 0) {
    *out = (uint64_t)json_integer_value(v);
    return true;
  }
  const char *s = json_string_value(v);
  if (s == NULL || *s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = (uint64_t)x;
  return true;
}

/* The value of an integer field in [lo, hi], else -1 (every range here is >= 0). */
static long long get_count(const json_t *v, long long lo, long long hi) {
  if (!json_is_integer(v)) return -1;
  long long x = (long long)json_integer_value(v);
  return x >= lo && x <= hi ? x : -1;
}

/* A JSON value described for a message ("7", "\"x\"", "an array"). */
static void describe(const json_t *v, char *buf, size_t size) {
  if (v == NULL) {
    snprintf(buf, size, "nothing");
  } else if (json_is_object(v)) {
    snprintf(buf, size, "an object");
  } else if (json_is_array(v)) {
    snprintf(buf, size, "an array of %zu", json_array_size(v));
  } else {
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(buf, size, "%.60s", s != NULL ? s : "?");
    free(s);
  }
}

/* }================================================================== */

/* {==================================================================
 * The file and its plan
 * =================================================================== */

int expt_shard_check_load(const char *path, json_t **doc, FILE *errf) {
  *doc = NULL;
  /* O_NONBLOCK so that opening a FIFO does not wait for a writer; fstat then refuses it. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    fprintf(errf, "retrysim: %s: cannot read the shard: %s\n", path, strerror(errno));
    return EXPT_EXIT_USAGE;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    fprintf(errf,
            "retrysim: %s: not a regular file (a shard is the file `run --shard K/N` "
            "writes)\n",
            path);
    return EXPT_EXIT_USAGE;
  }
  /* Back to blocking reads: a regular file never blocks, and jansson does not expect EAGAIN. */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  json_error_t je;
  *doc = json_loadfd(fd, 0, &je);
  close(fd);
  if (*doc != NULL) return EXPT_EXIT_OK;
  if (je.line > 0)
    fprintf(errf, "retrysim: %s:%d:%d: not a shard file: %s\n", path, je.line, je.column, je.text);
  else
    fprintf(errf, "retrysim: %s: cannot read the shard: %s\n", path, je.text);
  return EXPT_EXIT_USAGE;
}

/* The variants: 1 .. EXPT_SHARD_MAX_VARIANTS distinct non-empty names; the baseline null or
 * one of them. */
#define MAX_VARIANTS 10000
static int check_variants(const char *path, const json_t *sb, FILE *errf) {
  const json_t *names = json_object_get(sb, "variants");
  size_t nv = json_array_size(names);
  if (!json_is_array(names) || nv < 1 || nv > MAX_VARIANTS)
    return bad(errf, path, "$.plan.study.variants", "must list 1 .. %d variant names",
               MAX_VARIANTS);
  for (size_t v = 0; v < nv; v++) {
    const char *s = json_string_value(json_array_get(names, v));
    char field[64];
    snprintf(field, sizeof field, "$.plan.study.variants[%zu]", v);
    if (s == NULL || s[0] == '\0') return bad(errf, path, field, "must be a variant's name");
    for (size_t w = 0; w < v; w++)
      if (strcmp(s, json_string_value(json_array_get(names, w))) == 0)
        return bad(errf, path, field, "\"%s\" is listed twice", s);
  }
  const json_t *bl = json_object_get(sb, "baseline");
  if (json_is_null(bl)) return EXPT_EXIT_OK;
  for (size_t v = 0; json_is_string(bl) && v < nv; v++)
    if (strcmp(json_string_value(bl), json_string_value(json_array_get(names, v))) == 0)
      return EXPT_EXIT_OK;
  return bad(errf, path, "$.plan.study.baseline", "must be null or one of the variants");
}

/* The study block's numbers: replications, confidence, warmup_s, has_variants. */
static int check_numbers(const char *path, const json_t *sb, FILE *errf) {
  char got[80];
  const json_t *v = json_object_get(sb, "replications");
  if (get_count(v, 1, EXPT_STUDY_MAX_REPS) < 0) {
    describe(v, got, sizeof got);
    return bad(errf, path, "$.plan.study.replications", "must be an integer 1 .. %d, got %s",
               EXPT_STUDY_MAX_REPS, got);
  }
  v = json_object_get(sb, "confidence");
  double l = json_is_number(v) ? json_number_value(v) : NAN;
  if (!(l >= EXPT_STUDY_MIN_CONFIDENCE && l <= EXPT_STUDY_MAX_CONFIDENCE)) {
    describe(v, got, sizeof got);
    return bad(errf, path, "$.plan.study.confidence", "must be a level 0.5 .. 0.9999, got %s", got);
  }
  v = json_object_get(sb, "warmup_s");
  if (!json_is_null(v) &&
      !(json_is_number(v) && json_number_value(v) >= 0 && isfinite(json_number_value(v))))
    return bad(errf, path, "$.plan.study.warmup_s", "must be null or a number of seconds >= 0");
  if (!json_is_boolean(json_object_get(sb, "has_variants")))
    return bad(errf, path, "$.plan.study.has_variants", "must be true or false");
  return EXPT_EXIT_OK;
}

/* The axes and the points: every point numbered in order, with a value for every axis path
 * and no other, each among its axis's values. */
static int check_points(const char *path, const json_t *plan, FILE *errf) {
  const json_t *sb = json_object_get(plan, "study");
  const json_t *axes = json_object_get(sb, "axes"), *pts = json_object_get(plan, "points");
  char field[96];
  if (!json_is_array(axes)) return bad(errf, path, "$.plan.study.axes", "must be an array");
  for (size_t a = 0; a < json_array_size(axes); a++) {
    const json_t *ax = json_array_get(axes, a);
    snprintf(field, sizeof field, "$.plan.study.axes[%zu]", a);
    if (!json_is_string(json_object_get(ax, "path")) ||
        json_array_size(json_object_get(ax, "values")) == 0)
      return bad(errf, path, field, "must be {\"path\": ..., \"values\": [...]}");
  }
  size_t np = json_array_size(pts);
  if (!json_is_array(pts) || np < 1)
    return bad(errf, path, "$.plan.points", "must list the study's points (1 or more)");
  if (get_count(json_object_get(sb, "n_points"), 1, (long long)np) != (long long)np)
    return bad(errf, path, "$.plan.study.n_points", "must be %zu, the number of points", np);
  for (size_t p = 0; p < np; p++) {
    const json_t *pt = json_array_get(pts, p), *vals = json_object_get(pt, "values");
    snprintf(field, sizeof field, "$.plan.points[%zu]", p);
    if (get_count(json_object_get(pt, "point"), 0, (long long)p) != (long long)p ||
        !json_is_object(vals) || json_object_size(vals) != json_array_size(axes))
      return bad(errf, path, field, "must be {\"point\": %zu, \"values\": {one per axis}}", p);
    for (size_t a = 0; a < json_array_size(axes); a++) {
      const json_t *ax = json_array_get(axes, a), *axv = json_object_get(ax, "values");
      const char *ap = json_string_value(json_object_get(ax, "path"));
      const json_t *x = json_object_get(vals, ap);
      bool found = false;
      for (size_t i = 0; x != NULL && i < json_array_size(axv) && !found; i++)
        found = json_equal(x, json_array_get(axv, i));
      snprintf(field, sizeof field, "$.plan.points[%zu].values", p);
      if (!found) return bad(errf, path, field, "\"%.40s\" is not a value of its axis", ap);
    }
  }
  return EXPT_EXIT_OK;
}

/* The seeds: the plan's seed is variant 0's base seed, and study.seeds[r] is replication r's
 * seed derived from it (expt_study_seed). */
static int check_seeds(const char *path, const json_t *doc, FILE *errf) {
  const json_t *plan = json_object_get(doc, "plan"), *sb = json_object_get(plan, "study");
  uint64_t top, s;
  if (!get_u64(json_object_get(plan, "seed"), &top))
    return bad(errf, path, "$.plan.seed", "must be a seed 0 .. 18446744073709551615");
  size_t reps = (size_t)json_integer_value(json_object_get(sb, "replications"));
  const json_t *seeds = json_object_get(sb, "seeds");
  if (!json_is_array(seeds) || json_array_size(seeds) != reps)
    return bad(errf, path, "$.plan.study.seeds", "must list %zu seeds, one per replication", reps);
  for (size_t r = 0; r < reps; r++)
    if (!get_u64(json_array_get(seeds, r), &s) || s != expt_study_seed(top, r)) {
      char field[64];
      snprintf(field, sizeof field, "$.plan.study.seeds[%zu]", r);
      return bad(errf, path, field, "is not replication %zu's seed from the plan's seed", r);
    }
  const json_t *vs = json_object_get(doc, "variant_seeds");
  size_t nv = json_array_size(json_object_get(sb, "variants"));
  if (!json_is_array(vs) || json_array_size(vs) != nv)
    return bad(errf, path, "$.variant_seeds", "must list %zu seeds, one per variant", nv);
  for (size_t v = 0; v < nv; v++)
    if (!get_u64(json_array_get(vs, v), &s) || (v == 0 && s != top)) {
      char field[64];
      snprintf(field, sizeof field, "$.variant_seeds[%zu]", v);
      return bad(errf, path, field, v == 0 ? "must be the plan's seed" : "must be a seed");
    }
  return EXPT_EXIT_OK;
}

/* The plan's provenance and study block. */
static int check_plan(const char *path, const json_t *doc, FILE *errf) {
  const json_t *plan = json_object_get(doc, "plan"), *sb = json_object_get(plan, "study");
  const char *ver = json_string_value(json_object_get(plan, "version"));
  if (ver == NULL || strcmp(ver, RETRY_VERSION) != 0)
    return bad(errf, path, "$.plan.version",
               "written by retrysim %.20s, this is %s: merge with the version that ran the shards",
               ver != NULL ? ver : "(none)", RETRY_VERSION);
  if (!json_is_string(json_object_get(plan, "scenario")) ||
      !json_is_string(json_object_get(plan, "scenario_sha256")))
    return bad(errf, path, "$.plan.scenario", "must name the scenario and its sha256");
  if (!json_is_object(json_object_get(plan, "document")))
    return bad(errf, path, "$.plan.document", "must be the scenario's document (an object)");
  if (!json_is_object(sb)) return bad(errf, path, "$.plan.study", "must be an object");
  int status = check_numbers(path, sb, errf);
  if (status == EXPT_EXIT_OK) status = check_variants(path, sb, errf);
  if (status == EXPT_EXIT_OK) status = check_points(path, plan, errf);
  if (status == EXPT_EXIT_OK) status = check_seeds(path, doc, errf);
  if (status != EXPT_EXIT_OK) return status;
  /* n_runs: the product is bounded (reps <= 1e5, variants <= 1e4, points <= the file's size)
   * well inside a long long only when checked step by step. */
  long long reps = (long long)json_integer_value(json_object_get(sb, "replications"));
  long long nv = (long long)json_array_size(json_object_get(sb, "variants"));
  long long np = (long long)json_array_size(json_object_get(plan, "points"));
  long long want = np * nv <= INT64_MAX / reps ? np * nv * reps : -1;
  if (want < 0 || get_count(json_object_get(sb, "n_runs"), 1, want) != want)
    return bad(errf, path, "$.plan.study.n_runs", "must be %lld: points x variants x replications",
               want);
  return EXPT_EXIT_OK;
}

/* The first key (top level or in "study") in which two plans differ, for the message. */
void expt_shard_check_first_difference(const json_t *a, const json_t *b, char *buf, size_t size) {
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

bool expt_shard_check_digest_ok(const json_t *doc) {
  const char *digest = json_string_value(json_object_get(doc, "plan_sha256"));
  char hex[65];
  return digest != NULL &&
         expt_shard_file_digest(json_object_get(doc, "plan"), json_object_get(doc, "variant_seeds"),
                                hex) == 0 &&
         strcmp(hex, digest) == 0;
}

int expt_shard_check_doc(const char *path, const json_t *doc, const json_t *ref, FILE *errf) {
  if (!json_is_object(doc) || json_integer_value(json_object_get(doc, "retrysim_shard")) != 1 ||
      !json_is_object(json_object_get(doc, "plan")) ||
      !json_is_array(json_object_get(doc, "runs"))) {
    fprintf(errf,
            "retrysim: %s: not a shard file (a shard file has \"retrysim_shard\": 1, \"shard\", "
            "\"of\", \"plan\" and \"runs\"; `retrysim run --shard K/N --out DIR` writes one)\n",
            path);
    return EXPT_EXIT_USAGE;
  }
  long long of = get_count(json_object_get(doc, "of"), 1, 100000);
  if (of < 0) return bad(errf, path, "$.of", "must be a number of shards 1 .. 100000");
  if (get_count(json_object_get(doc, "shard"), 1, of) < 0)
    return bad(errf, path, "$.shard", "must be a shard 1 .. %lld", of);
  const char *digest = json_string_value(json_object_get(doc, "plan_sha256"));
  if (digest == NULL)
    return bad(errf, path, "$.plan_sha256",
               "missing: the shard was written by an older retrysim, run it again");
  int status = check_plan(path, doc, errf);
  if (status != EXPT_EXIT_OK) return status;
  char hex[65];
  if (expt_shard_file_digest(json_object_get(doc, "plan"), json_object_get(doc, "variant_seeds"),
                             hex) != 0) {
    fprintf(errf, "retrysim: out of memory\n");
    return EXPT_EXIT_RUNTIME;
  }
  if (strcmp(hex, digest) == 0) return EXPT_EXIT_OK;
  const json_t *plan = json_object_get(doc, "plan");
  char field[160] = "$.plan";
  if (ref != NULL && !json_equal(ref, plan)) {
    char key[128];
    expt_shard_check_first_difference(plan, ref, key, sizeof key);
    snprintf(field, sizeof field, "$.plan.%s", key);
  }
  return bad(
      errf, path, field,
      "the plan does not match $.plan_sha256: it was changed after the shard was "
      "written%s",
      ref != NULL && !json_equal(ref, plan) ? " (it differs there from the other shards)" : "");
  return EXPT_EXIT_OK;
}

/* }================================================================== */

/* {==================================================================
 * The run records
 * =================================================================== */

int expt_shard_check_record(const char *path, const json_t *doc, size_t j, long k, long n,
                            FILE *errf) {
  const json_t *plan = json_object_get(doc, "plan"), *sb = json_object_get(plan, "study");
  const json_t *rec = json_array_get(json_object_get(doc, "runs"), j);
  long long n_runs = (long long)json_integer_value(json_object_get(sb, "n_runs"));
  long long reps = (long long)json_integer_value(json_object_get(sb, "replications"));
  long long nv = (long long)json_array_size(json_object_get(sb, "variants"));
  char field[80], got[80];
  snprintf(field, sizeof field, "$.runs[%zu]", j);
  if (!json_is_object(rec)) return bad(errf, path, field, "must be a run record (an object)");
  long long r = get_count(json_object_get(rec, "run"), 0, n_runs - 1);
  snprintf(field, sizeof field, "$.runs[%zu].run", j);
  if (r < 0) return bad(errf, path, field, "must be a run 0 .. %lld", n_runs - 1);
  if (r % n != k - 1) return bad(errf, path, field, "run %lld is not of shard %ld of %ld", r, k, n);
  long long p = r / (nv * reps), v = (r / reps) % nv, rep = r % reps;
  const json_t *x = json_object_get(rec, "point");
  snprintf(field, sizeof field, "$.runs[%zu].point", j);
  describe(x, got, sizeof got);
  if (get_count(x, p, p) != p)
    return bad(errf, path, field, "%s, but run %lld is of point %lld", got, r, p);
  const char *name = json_string_value(json_array_get(json_object_get(sb, "variants"), (size_t)v));
  x = json_object_get(rec, "variant");
  snprintf(field, sizeof field, "$.runs[%zu].variant", j);
  describe(x, got, sizeof got);
  if (!json_is_string(x) || strcmp(json_string_value(x), name) != 0)
    return bad(errf, path, field, "%s, but run %lld is of variant \"%s\"", got, r, name);
  x = json_object_get(rec, "replication");
  snprintf(field, sizeof field, "$.runs[%zu].replication", j);
  describe(x, got, sizeof got);
  if (get_count(x, rep, rep) != rep)
    return bad(errf, path, field, "%s, but run %lld is replication %lld", got, r, rep);
  uint64_t base = 0, seed;
  get_u64(json_array_get(json_object_get(doc, "variant_seeds"), (size_t)v), &base);
  uint64_t want = expt_study_seed(base, (uint64_t)rep);
  x = json_object_get(rec, "seed");
  snprintf(field, sizeof field, "$.runs[%zu].seed", j);
  describe(x, got, sizeof got);
  if (!get_u64(x, &seed) || seed != want)
    return bad(errf, path, field, "%s, but run %lld runs on seed %llu", got, r,
               (unsigned long long)want);
  snprintf(field, sizeof field, "$.runs[%zu].result", j);
  if (!json_is_object(json_object_get(rec, "result")))
    return bad(errf, path, field, "must be the run's result (an object)");
  return EXPT_EXIT_OK;
}

/* }================================================================== */

/* {==================================================================
 * The results' shape
 * =================================================================== */

/* The first place where a and b differ in shape, appended to at (a JSON path) with what a
 * has there into what (NULL: same shape). Null matches anything (a value some runs lack);
 * arrays are compared over their common length; a "by_status" object lists what its run saw.
 * Returns true when they differ. */
static bool shape_differs(const json_t *a, const json_t *b, bool is_map, char *at, size_t size,
                          const char **what) {
  if (json_is_null(a) || json_is_null(b)) return false;
  if (strcmp(expt_json_type_name(a), expt_json_type_name(b)) != 0) {
    *what = expt_json_type_name(a);
    return true;
  }
  size_t len = strlen(at);
  if (json_is_array(a)) {
    size_t n = json_array_size(a) < json_array_size(b) ? json_array_size(a) : json_array_size(b);
    for (size_t i = 0; i < n; i++) {
      snprintf(at + len, size - len, "[%zu]", i);
      if (shape_differs(json_array_get(a, i), json_array_get(b, i), false, at, size, what))
        return true;
    }
  } else if (json_is_object(a)) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)a, key, v) {
      snprintf(at + len, size - len, ".%s", key);
      const json_t *w = json_object_get(b, key);
      if (is_map ? !json_is_number(v) : w == NULL) {
        *what = is_map ? expt_json_type_name(v) : "a key the others lack";
        return true;
      }
      if (!is_map && shape_differs(v, w, strcmp(key, "by_status") == 0, at, size, what))
        return true;
    }
    json_object_foreach((json_t *)b, key, v) {
      snprintf(at + len, size - len, ".%s", key);
      if (!is_map && json_object_get(a, key) == NULL) {
        *what = "nothing";
        return true;
      }
    }
  }
  at[len] = '\0';
  return false;
}

/* The counts every run result has: a result emptied or cut short is refused even alone. */
static int check_core(const json_t *res, const expt_shard_origin *from, FILE *errf) {
  static const char *const core[][2] = {
      {"sim_time_s", NULL}, {"calls", "started"}, {"calls", "ok"}, {"calls", "failed"}};
  for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
    const json_t *v = json_object_get(res, core[i][0]);
    if (core[i][1] != NULL) v = json_object_get(v, core[i][1]);
    if (!json_is_number(v) || !(json_number_value(v) >= 0)) {
      char field[96];
      snprintf(field, sizeof field, "$.runs[%zu].result.%s%s%s", from->index, core[i][0],
               core[i][1] != NULL ? "." : "", core[i][1] != NULL ? core[i][1] : "");
      return bad(errf, from->path, field, "must be a number >= 0 (every run's result has it)");
    }
  }
  return EXPT_EXIT_OK;
}

int expt_shard_check_results(const json_t *plan, const json_t *const *records,
                             const expt_shard_origin *from, size_t n_runs, FILE *errf) {
  const json_t *sb = json_object_get(plan, "study");
  size_t reps = (size_t)json_integer_value(json_object_get(sb, "replications"));
  for (size_t r = 0; r < n_runs; r++) {
    const json_t *res = json_object_get(records[r], "result");
    int status = check_core(res, &from[r], errf);
    if (status != EXPT_EXIT_OK) return status;
    /* The reference of a (point, variant) is its replication 0, unless replication 0 alone
     * disagrees with replications 1 and 2: then it is the one to blame, not the others. */
    size_t first = r - r % reps, ref = first;
    char at[512];
    const char *what = NULL;
    if (reps >= 3) {
      const json_t *r0 = json_object_get(records[first], "result");
      const json_t *r1 = json_object_get(records[first + 1], "result");
      const json_t *r2 = json_object_get(records[first + 2], "result");
      at[0] = '\0';
      bool d01 = shape_differs(r0, r1, false, at, sizeof at, &what);
      at[0] = '\0';
      if (d01 && !shape_differs(r1, r2, false, at, sizeof at, &what)) ref = first + 1;
    }
    if (r == ref) continue;
    at[0] = '\0';
    if (shape_differs(res, json_object_get(records[ref], "result"), false, at, sizeof at, &what)) {
      char field[600];
      snprintf(field, sizeof field, "$.runs[%zu].result%s", from[r].index, at);
      return bad(errf, from[r].path, field,
                 "%s there, unlike replication %zu of the same point and variant (in %s)",
                 what != NULL ? what : "?", ref - first, from[ref].path);
    }
  }
  return EXPT_EXIT_OK;
}

/* }================================================================== */
