/*
 * expt_agg.c: flattening run objects into metrics and aggregating them over replications.
 * Invariant: every figure is computed from the values as the run objects hold them (already
 * rounded by expt_output), in replication order, and rounded again before it is written, so an
 * aggregate rebuilt from run objects read back from a file (a merge of shards) is the same
 * to the byte.
 */
#include "expt/expt_agg.h"

#include <assert.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_output.h"
#include "expt/expt_paired.h"
#include "expt/expt_json.h"

/* {==================================================================
 * Flattening
 * =================================================================== */

#define NAME_MAX_BYTES 512

typedef struct walker {
  expt_agg_visit visit;
  void *ctx;
  char name[NAME_MAX_BYTES];
} walker;

/* Appends text to the name at len; returns the new length (cut at the buffer's end). */
static size_t name_append(walker *w, size_t len, const char *text) {
  size_t room = sizeof w->name - 1 - len, n = strlen(text);
  if (n > room) n = room;
  memcpy(w->name + len, text, n);
  w->name[len + n] = '\0';
  return len + n;
}

static void walk(walker *w, const json_t *v, size_t len) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: {
      const char *key;
      json_t *child;
      json_object_foreach((json_t *)v, key, child) {
        size_t l = len > 0 ? name_append(w, len, ".") : len;
        walk(w, child, name_append(w, l, key));
      }
      w->name[len] = '\0';
      break;
    }
    case JSON_ARRAY: {
      size_t i;
      json_t *child;
      json_array_foreach(v, i, child) {
        const char *from = json_string_value(json_object_get(child, "from"));
        const char *to = json_string_value(json_object_get(child, "to"));
        char sel[NAME_MAX_BYTES];
        if (from != NULL && to != NULL)
          snprintf(sel, sizeof sel, "[%s->%s]", from, to);
        else
          snprintf(sel, sizeof sel, "[%zu]", i);
        walk(w, child, name_append(w, len, sel));
      }
      w->name[len] = '\0';
      break;
    }
    case JSON_INTEGER:
    case JSON_REAL: w->visit(w->ctx, w->name, EXPT_AGG_NUMBER, json_number_value(v)); break;
    case JSON_TRUE:
    case JSON_FALSE: w->visit(w->ctx, w->name, EXPT_AGG_BOOL, json_is_true(v) ? 1.0 : 0.0); break;
    case JSON_NULL: w->visit(w->ctx, w->name, EXPT_AGG_NULL, NAN); break;
    default: /* strings name things; they are not figures */ break;
  }
}

void expt_agg_flatten(const json_t *run, expt_agg_visit visit, void *ctx) {
  walker w = {.visit = visit, .ctx = ctx};
  w.name[0] = '\0';
  if (run != NULL) walk(&w, run, 0);
}

/* }================================================================== */

/* {==================================================================
 * The table of a (point, variant)
 * =================================================================== */

typedef struct metric {
  char *name;
  expt_agg_kind kind; /* the first non-null kind met */
  double *values;     /* n_reps, NaN until set */
  size_t n_null;      /* replications where it is null: censored (a missing key is not) */
} metric;

struct expt_agg_table {
  metric *m;
  size_t n, cap;
  size_t n_reps;
  size_t *slots; /* open addressing: index + 1, 0 free; n_slots a power of two */
  size_t n_slots;
  size_t rep;  /* the replication being flattened */
  bool failed; /* out of memory while flattening */
};

static uint64_t hash_name(const char *s) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
  return h;
}

static long find(const expt_agg_table *t, const char *name) {
  if (t->n_slots == 0) return -1;
  size_t mask = t->n_slots - 1;
  for (size_t i = (size_t)hash_name(name) & mask;; i = (i + 1) & mask) {
    if (t->slots[i] == 0) return -1;
    if (strcmp(t->m[t->slots[i] - 1].name, name) == 0) return (long)(t->slots[i] - 1);
  }
}

long expt_agg_table_find(const expt_agg_table *t, const char *name) { return find(t, name); }

/* Rebuilds the slots at twice the size; false when out of memory. */
static bool rehash(expt_agg_table *t) {
  size_t n_slots = t->n_slots ? t->n_slots * 2 : 256;
  size_t *slots = calloc(n_slots, sizeof *slots);
  if (slots == NULL) return false;
  for (size_t k = 0; k < t->n; k++) {
    size_t i = (size_t)hash_name(t->m[k].name) & (n_slots - 1);
    while (slots[i] != 0)
      i = (i + 1) & (n_slots - 1);
    slots[i] = k + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->n_slots = n_slots;
  return true;
}

static long add_metric(expt_agg_table *t, const char *name) {
  if ((t->n + 1) * 2 > t->n_slots && !rehash(t)) return -1;
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 128;
    metric *m = realloc(t->m, cap * sizeof *m);
    if (m == NULL) return -1;
    t->m = m;
    t->cap = cap;
  }
  metric *m = &t->m[t->n];
  m->name = malloc(strlen(name) + 1);
  m->values = malloc(t->n_reps * sizeof *m->values);
  if (m->name == NULL || m->values == NULL) {
    free(m->name);
    free(m->values);
    return -1;
  }
  strcpy(m->name, name);
  m->kind = EXPT_AGG_NULL;
  m->n_null = 0;
  for (size_t r = 0; r < t->n_reps; r++)
    m->values[r] = NAN;
  size_t i = (size_t)hash_name(name) & (t->n_slots - 1);
  while (t->slots[i] != 0)
    i = (i + 1) & (t->n_slots - 1);
  t->slots[i] = t->n + 1;
  return (long)t->n++;
}

static void table_visit(void *ctx, const char *name, expt_agg_kind kind, double value) {
  expt_agg_table *t = ctx;
  if (t->failed) return;
  long i = find(t, name);
  if (i < 0) i = add_metric(t, name);
  if (i < 0) {
    t->failed = true;
    return;
  }
  metric *m = &t->m[i];
  if (m->kind == EXPT_AGG_NULL) m->kind = kind;
  if (kind == EXPT_AGG_NULL) m->n_null++;
  m->values[t->rep] = value;
}

void expt_agg_table_destroy(expt_agg_table *t) {
  if (t == NULL) return;
  for (size_t i = 0; i < t->n; i++) {
    free(t->m[i].name);
    free(t->m[i].values);
  }
  free(t->m);
  free(t->slots);
  free(t);
}

expt_agg_table *expt_agg_table_create(const json_t *const *runs, size_t n) {
  assert(n >= 1);
  expt_agg_table *t = calloc(1, sizeof *t);
  if (t == NULL) return NULL;
  t->n_reps = n;
  for (size_t r = 0; r < n && !t->failed; r++) {
    t->rep = r;
    expt_agg_flatten(runs[r], table_visit, t);
  }
  if (t->failed) {
    expt_agg_table_destroy(t);
    return NULL;
  }
  /* by_status lists only the statuses a run saw: absent there means none. */
  for (size_t i = 0; i < t->n; i++) {
    if (strstr(t->m[i].name, "by_status.") == NULL) continue;
    for (size_t r = 0; r < n; r++)
      if (isnan(t->m[i].values[r])) t->m[i].values[r] = 0.0;
  }
  return t;
}

size_t expt_agg_table_n_metrics(const expt_agg_table *t) { return t->n; }
size_t expt_agg_table_n_reps(const expt_agg_table *t) { return t->n_reps; }
const char *expt_agg_table_name(const expt_agg_table *t, size_t i) { return t->m[i].name; }
expt_agg_kind expt_agg_table_kind(const expt_agg_table *t, size_t i) { return t->m[i].kind; }
const double *expt_agg_table_values(const expt_agg_table *t, size_t i) { return t->m[i].values; }

/* }================================================================== */

/* {==================================================================
 * Statistics
 * =================================================================== */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

bool expt_agg_recovery_of(const expt_agg_table *t, double level, expt_agg_recovery *r) {
  memset(r, 0, sizeof *r);
  r->median = NAN;
  long ir = find(t, "recovery.recovered"), is = find(t, "recovery.recovery_s");
  long iu = find(t, "recovery.unjudged");
  if (ir < 0 || t->m[ir].kind != EXPT_AGG_BOOL) return false;
  const double *rec = t->m[ir].values;
  double *times = malloc(t->n_reps * sizeof *times);
  size_t nt = 0;
  for (size_t k = 0; k < t->n_reps; k++) {
    /* A run too short after its trigger to judge (recovered null) is neither recovered nor a
     * storm. */
    if (isnan(rec[k])) {
      if (iu >= 0 && t->m[iu].values[k] == 1.0) r->n_unjudged++;
      continue;
    }
    r->n++;
    if (rec[k] != 1.0) continue;
    r->n_recovered++;
    double v = is >= 0 ? t->m[is].values[k] : NAN;
    if (times != NULL && isfinite(v)) times[nt++] = v;
  }
  r->n_censored = r->n - r->n_recovered;
  sim_stats_mean_interval(times != NULL ? times : (const double[]){0}, times != NULL ? nt : 0,
                          level, &r->recovered);
  /* Kaplan-Meier with every censored replication censored after every recovery: the survival
   * curve falls by 1/n at each recovery time, so it reaches 1/2 at the ceil(n/2)-th smallest
   * time, when that many recovered. */
  size_t half = (r->n + 1) / 2;
  if (times != NULL && r->n > 0 && nt >= half) {
    qsort(times, nt, sizeof *times, cmp_double);
    r->median = times[half - 1];
  }
  free(times);
  return r->n > 0;
}

void expt_agg_welch(const double *a, size_t na, const double *b, size_t nb, double level,
                    double *lo, double *hi) {
  sim_stats_interval ia, ib;
  sim_stats_mean_interval(a, na, level, &ia);
  sim_stats_mean_interval(b, nb, level, &ib);
  *lo = *hi = NAN;
  if (ia.n < 2 || ib.n < 2) return;
  double d = ia.mean - ib.mean;
  double va = ia.sd * ia.sd / (double)ia.n, vb = ib.sd * ib.sd / (double)ib.n;
  if (va + vb == 0) {
    *lo = *hi = d;
    return;
  }
  double df = (va + vb) * (va + vb) / (va * va / (double)(ia.n - 1) + vb * vb / (double)(ib.n - 1));
  double t = gsl_cdf_tdist_Pinv(1 - (1 - level) / 2, df);
  double hw = t * sqrt(va + vb);
  *lo = d - hw;
  *hi = d + hw;
}

/* }================================================================== */

/* {==================================================================
 * The aggregate object
 * =================================================================== */

static json_t *jreal(double v) {
  if (!isfinite(v)) return json_null();
  return json_real(expt_output_round(v));
}

static json_t *jsize(size_t v) { return json_integer((json_int_t)v); }

/* Merges into dst what src has and dst lacks (keys, array elements, values where dst has null),
 * so the template holds every key of every replication. */
static bool merge_shape(json_t *dst, const json_t *src) {
  if (json_is_object(dst) && json_is_object(src)) {
    const char *key;
    json_t *sv;
    json_object_foreach((json_t *)src, key, sv) {
      json_t *dv = json_object_get(dst, key);
      if (dv == NULL || (json_is_null(dv) && !json_is_null(sv))) {
        if (json_object_set_new(dst, key, json_deep_copy(sv)) != 0) return false;
      } else if (!merge_shape(dv, sv)) {
        return false;
      }
    }
  } else if (json_is_array(dst) && json_is_array(src)) {
    for (size_t i = 0; i < json_array_size(src); i++) {
      json_t *sv = json_array_get(src, i), *dv = json_array_get(dst, i);
      if (dv == NULL) {
        if (json_array_append_new(dst, json_deep_copy(sv)) != 0) return false;
      } else if (json_is_null(dv) && !json_is_null(sv)) {
        if (json_array_set_new(dst, i, json_deep_copy(sv)) != 0) return false;
      } else if (!merge_shape(dv, sv)) {
        return false;
      }
    }
  }
  return true;
}

/* The mean of metric i over its finite values: what the aggregate object shows for it. A
 * metric that some replications have as null (a recovery that never came: censored) has no
 * mean that means anything; it is NaN (written null), and its interval says how many were
 * censored. */
static double metric_mean(const metric *m, size_t n_reps) {
  if (m->n_null > 0) return NAN;
  double sum = 0;
  size_t n = 0;
  for (size_t r = 0; r < n_reps; r++)
    if (isfinite(m->values[r])) {
      sum += m->values[r];
      n++;
    }
  return n > 0 ? sum / (double)n : NAN;
}

typedef struct replacer {
  const expt_agg_table *t;
  char name[NAME_MAX_BYTES];
  bool ok;
} replacer;

static json_t *leaf_value(replacer *p) {
  long i = find(p->t, p->name);
  if (i < 0) return json_null();
  return jreal(metric_mean(&p->t->m[i], p->t->n_reps));
}

/* Replaces every number, boolean and null of v (named as expt_agg_flatten names them) with the
 * metric's mean. */
static void replace(replacer *p, json_t *v, size_t len) {
  if (json_is_object(v)) {
    const char *key;
    json_t *child;
    void *tmp;
    json_object_foreach_safe(v, tmp, key, child) {
      size_t l = len;
      if (l > 0 && l < sizeof p->name - 1) p->name[l++] = '.';
      size_t k = strlen(key);
      if (k > sizeof p->name - 1 - l) k = sizeof p->name - 1 - l;
      memcpy(p->name + l, key, k);
      p->name[l + k] = '\0';
      if (json_is_object(child) || json_is_array(child))
        replace(p, child, l + k);
      else if (!json_is_string(child) && json_object_set_new(v, key, leaf_value(p)) != 0)
        p->ok = false;
      p->name[len] = '\0';
    }
  } else if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++) {
      json_t *child = json_array_get(v, i);
      const char *from = json_string_value(json_object_get(child, "from"));
      const char *to = json_string_value(json_object_get(child, "to"));
      char sel[NAME_MAX_BYTES];
      if (from != NULL && to != NULL)
        snprintf(sel, sizeof sel, "[%s->%s]", from, to);
      else
        snprintf(sel, sizeof sel, "[%zu]", i);
      size_t k = strlen(sel);
      if (k > sizeof p->name - 1 - len) k = sizeof p->name - 1 - len;
      memcpy(p->name + len, sel, k);
      p->name[len + k] = '\0';
      if (json_is_object(child) || json_is_array(child))
        replace(p, child, len + k);
      else if (!json_is_string(child) && json_array_set_new(v, i, leaf_value(p)) != 0)
        p->ok = false;
      p->name[len] = '\0';
    }
  }
}

static json_t *interval_json(const sim_stats_interval *iv) {
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "n", jsize(iv->n), &ok);
  expt_json_put(o, "mean", jreal(iv->mean), &ok);
  expt_json_put(o, "sd", jreal(iv->sd), &ok);
  expt_json_put(o, "lo", jreal(iv->lo), &ok);
  expt_json_put(o, "hi", jreal(iv->hi), &ok);
  expt_json_put(o, "half_width", jreal(iv->half_width), &ok);
  if (ok) return o;
  json_decref(o);
  return NULL;
}

static json_t *proportion_json(size_t k, size_t n, double level) {
  double lo, hi;
  sim_stats_wilson(k, n, level, &lo, &hi);
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "n", jsize(n), &ok);
  expt_json_put(o, "k", jsize(k), &ok);
  expt_json_put(o, "p", jreal(n > 0 ? (double)k / (double)n : NAN), &ok);
  expt_json_put(o, "lo", jreal(lo), &ok);
  expt_json_put(o, "hi", jreal(hi), &ok);
  if (ok) return o;
  json_decref(o);
  return NULL;
}

/* k of n: the replications where metric m is true, among those where it has a value. */
static void count_true(const metric *m, size_t n_reps, size_t *k, size_t *n) {
  *k = *n = 0;
  for (size_t r = 0; r < n_reps; r++) {
    if (isnan(m->values[r])) continue;
    (*n)++;
    if (m->values[r] == 1.0) (*k)++;
  }
}

static json_t *recovery_json(const expt_agg_recovery *r) {
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "n", jsize(r->n), &ok);
  expt_json_put(o, "n_recovered", jsize(r->n_recovered), &ok);
  expt_json_put(o, "n_censored", jsize(r->n_censored), &ok);
  if (r->n_unjudged > 0) expt_json_put(o, "n_unjudged", jsize(r->n_unjudged), &ok);
  expt_json_put(o, "over", json_string("recovered replications only"), &ok);
  expt_json_put(o, "mean", jreal(r->recovered.mean), &ok);
  expt_json_put(o, "sd", jreal(r->recovered.sd), &ok);
  expt_json_put(o, "lo", jreal(r->recovered.lo), &ok);
  expt_json_put(o, "hi", jreal(r->recovered.hi), &ok);
  expt_json_put(o, "half_width", jreal(r->recovered.half_width), &ok);
  expt_json_put(o, "median", jreal(r->median), &ok);
  if (isnan(r->median))
    expt_json_put(o, "median_note",
                  json_string(r->n == 0 ? "no replication" : "more than half never recovered"),
                  &ok);
  if (ok) return o;
  json_decref(o);
  return NULL;
}

/* Whether metric name is a time that a replication can lack because it never came (a
 * recovery time: null = never recovered, censored at the end of the run), so that a pair with
 * one side null is ordered rather than dropped. */
static bool is_censored_time(const char *name) {
  size_t n = strlen(name);
  return strncmp(name, "recovery.", 9) == 0 && n > 2 && strcmp(name + n - 2, "_s") == 0;
}

/* The exact test of metric m against the baseline's bm over n pairs (expt_paired.h). */
static void paired_test(const metric *m, const metric *bm, size_t n, expt_paired_test *pt) {
  if (m->kind == EXPT_AGG_BOOL)
    expt_paired_mcnemar(m->values, bm->values, n, pt);
  else if (is_censored_time(m->name) && (m->n_null > 0 || bm->n_null > 0))
    expt_paired_censored(m->values, bm->values, n, pt);
  else
    expt_paired_numbers(m->values, bm->values, n, pt);
}

/* The Welch interval on the same pairs as the paired one (both sides with a value), so that
 * the two compare the same runs: 9 values against 30 would not. */
static void welch_same_pairs(const double *a, const double *b, size_t n, double level, double *lo,
                             double *hi) {
  double *x = malloc((2 * n + 2) * sizeof *x);
  if (x == NULL) {
    *lo = *hi = NAN;
    return;
  }
  size_t k = 0;
  for (size_t r = 0; r < n; r++)
    if (isfinite(a[r]) && isfinite(b[r])) {
      x[k] = a[r];
      x[n + 1 + k] = b[r];
      k++;
    }
  expt_agg_welch(x, k, x + n + 1, k, level, lo, hi);
  free(x);
}

/* One metric's paired entry (without its flag), its test's p-value in *p. */
static json_t *paired_entry(const metric *m, const metric *bm, size_t n, double level, double *p) {
  bool ok = true;
  const double *b = bm->values;
  sim_stats_interval iv;
  sim_stats_paired_interval(m->values, b, n, level, &iv);
  double ulo, uhi;
  welch_same_pairs(m->values, b, n, level, &ulo, &uhi);
  expt_paired_test pt;
  paired_test(m, bm, n, &pt);
  *p = pt.p_value;
  json_t *e = json_object();
  expt_json_put(e, "n", jsize(iv.n), &ok);
  expt_json_put(e, "mean_diff", jreal(iv.mean), &ok);
  expt_json_put(e, "sd", jreal(iv.sd), &ok);
  expt_json_put(e, "lo", jreal(iv.lo), &ok);
  expt_json_put(e, "hi", jreal(iv.hi), &ok);
  expt_json_put(e, "half_width", jreal(iv.half_width), &ok);
  expt_json_put(e, "unpaired_lo", jreal(ulo), &ok);
  expt_json_put(e, "unpaired_hi", jreal(uhi), &ok);
  /* Pairs where either side is null (censored) are left out of the intervals: say how many. */
  size_t cens = 0;
  for (size_t r = 0; r < n; r++)
    cens += (isnan(m->values[r]) || isnan(b[r])) && (m->n_null > 0 || bm->n_null > 0);
  if (cens > 0) expt_json_put(e, "n_censored", jsize(cens), &ok);
  expt_json_put(e, "test", json_string(expt_paired_method_name(pt.method)), &ok);
  expt_json_put(e, "p_value", jreal(pt.p_value), &ok);
  if (pt.method != EXPT_PAIRED_T) {
    expt_json_put(e, "n_ordered", jsize(pt.n_pairs), &ok);
    expt_json_put(e, "n_up", jsize(pt.up), &ok);
    expt_json_put(e, "n_down", jsize(pt.down), &ok);
    expt_json_put(e, "n_ties", jsize(pt.ties), &ok);
  }
  if (pt.method == EXPT_PAIRED_CENSORED) {
    expt_json_put(e, "n_one_censored", jsize(pt.one_censored), &ok);
    expt_json_put(e, "n_both_censored", jsize(pt.both_censored), &ok);
  }
  if (ok) return e;
  json_decref(e);
  return NULL;
}

/* Whether entry e (its p-value p) is distinguishable without an adjustment. The t test is
 * decided on the interval's rounded bounds, as written, so a reader of the file agrees; the
 * exact tests by p < 1 - level. */
static bool flagged_alone(const json_t *e, double p, double level) {
  if (strcmp(json_string_value(json_object_get(e, "test")), "t") != 0) return p < 1 - level;
  double lo = json_number_value(json_object_get(e, "lo"));
  double hi = json_number_value(json_object_get(e, "hi"));
  return json_is_number(json_object_get(e, "lo")) && json_is_number(json_object_get(e, "hi")) &&
         (lo > 0 || hi < 0);
}

static json_t *paired_json(const expt_agg_table *t, const expt_agg_table *base, double level,
                           bool holm, size_t *n_tested, size_t *n_flagged) {
  bool ok = true;
  json_t *o = json_object();
  size_t n = t->n_reps < base->n_reps ? t->n_reps : base->n_reps, k = 0;
  json_t **es = malloc((t->n + 1) * sizeof *es);
  double *ps = malloc((t->n + 1) * sizeof *ps);
  bool *rej = malloc((t->n + 1) * sizeof *rej);
  ok = o != NULL && es != NULL && ps != NULL && rej != NULL;
  for (size_t i = 0; i < t->n && ok; i++) {
    const metric *m = &t->m[i];
    if (m->kind == EXPT_AGG_NULL) continue;
    long j = find(base, m->name);
    if (j < 0 || base->m[j].kind != m->kind) continue;
    es[k] = paired_entry(m, &base->m[j], n, level, &ps[k]);
    expt_json_put(o, m->name, es[k], &ok);
    k++;
  }
  /* Holm's step-down over this variant's metrics, at 1 - level for the family. */
  if (ok && holm) ok = expt_paired_holm(ps, k, 1 - level, rej) == 0;
  *n_tested = *n_flagged = 0;
  for (size_t i = 0; i < k && ok; i++) {
    bool f = holm ? rej[i] : flagged_alone(es[i], ps[i], level);
    *n_tested += isnan(ps[i]) ? 0u : 1u;
    *n_flagged += f ? 1u : 0u;
    expt_json_put(es[i], "distinguishable", json_boolean(f), &ok);
  }
  free(es);
  free(ps);
  free(rej);
  if (ok) return o;
  json_decref(o);
  return NULL;
}

json_t *expt_agg_object(const char *name, const expt_agg_table *t, const json_t *const *runs,
                        const expt_agg_table *base, const char *base_name, double level) {
  return expt_agg_object_adjusted(name, t, runs, base, base_name, level, false);
}

json_t *expt_agg_object_adjusted(const char *name, const expt_agg_table *t,
                                 const json_t *const *runs, const expt_agg_table *base,
                                 const char *base_name, double level, bool holm) {
  assert(level > 0 && level < 1);
  bool ok = true;
  json_t *shape = json_deep_copy(runs[0]);
  if (shape == NULL) return NULL;
  for (size_t r = 1; r < t->n_reps && ok; r++)
    ok = merge_shape(shape, runs[r]);
  replacer p = {.t = t, .ok = true};
  p.name[0] = '\0';
  if (ok) replace(&p, shape, 0);
  ok = ok && p.ok;
  json_t *o = json_object();
  if (name != NULL) expt_json_put(o, "variant", json_string(name), &ok);
  expt_json_put(o, "n", jsize(t->n_reps), &ok);
  const char *key;
  json_t *v;
  json_object_foreach(shape, key, v) {
    if (strcmp(key, "variant") != 0) expt_json_put(o, key, json_incref(v), &ok);
  }
  json_decref(shape);
  json_t *iv = json_object(), *pr = json_object();
  for (size_t i = 0; i < t->n && ok; i++) {
    const metric *m = &t->m[i];
    if (m->kind == EXPT_AGG_NUMBER) {
      sim_stats_interval s;
      sim_stats_mean_interval(m->values, t->n_reps, level, &s);
      json_t *e = interval_json(&s);
      /* Over the replications with a value only: say so, and how many had none. */
      if (e != NULL && m->n_null > 0) {
        expt_json_put(e, "n_censored", jsize(m->n_null), &ok);
        expt_json_put(e, "over", json_string("replications with a value only"), &ok);
      }
      expt_json_put(iv, m->name, e, &ok);
    } else if (m->kind == EXPT_AGG_BOOL) {
      size_t k, n;
      count_true(m, t->n_reps, &k, &n);
      expt_json_put(pr, m->name, proportion_json(k, n, level), &ok);
    }
  }
  expt_json_put(o, "intervals", iv, &ok);
  expt_json_put(o, "proportions", pr, &ok);
  expt_agg_recovery rec;
  if (expt_agg_recovery_of(t, level, &rec)) {
    expt_json_put(o, "recovery_s", recovery_json(&rec), &ok);
    expt_json_put(o, "p_storm", proportion_json(rec.n_censored, rec.n, level), &ok);
  }
  if (base != NULL) {
    json_t *pd = json_object();
    expt_json_put(pd, "baseline", json_string(base_name != NULL ? base_name : ""), &ok);
    size_t tested = 0, flagged = 0;
    expt_json_put(pd, "metrics", paired_json(t, base, level, holm, &tested, &flagged), &ok);
    expt_json_put(pd, "level", jreal(level), &ok);
    expt_json_put(pd, "adjust", json_string(holm ? "holm" : "none"), &ok);
    expt_json_put(pd, "n_tested", jsize(tested), &ok);
    expt_json_put(pd, "n_flagged", jsize(flagged), &ok);
    expt_json_put(o, "paired", pd, &ok);
  }
  if (ok) return o;
  json_decref(o);
  return NULL;
}

/* }================================================================== */
