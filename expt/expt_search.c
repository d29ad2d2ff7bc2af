/*
 * expt_search.c: the bisection of a tipping-point search, each probe decided by exact
 * (Clopper-Pearson) bounds repeated after every batch, the error split over the looks.
 * Invariant: every probe between the first pass and the first fail lies strictly between the
 * highest pass and the lowest fail found so far, so the reported interval only shrinks.
 */
#include "expt/expt_search.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_error.h"
#include "expt/expt_expect.h"
#include "expt/expt_output.h"
#include "expt/expt_plot.h"
#include "expt/expt_report.h"
#include "expt/expt_study.h"
#include "expt/expt_study_estimate.h"
#include "expt/expt_study_runs.h"
#include "expt/expt_json.h"
#include "retry/retry_json.h"
#include "sim/sim_stats.h"

static size_t int_or(const json_t *v, size_t dflt) {
  return json_is_integer(v) ? (size_t)json_integer_value(v) : dflt;
}

int expt_search_spec_from_json(const json_t *block, expt_search_spec *out, retry_error *err) {
  memset(out, 0, sizeof *out);
  const char *metric = json_string_value(json_object_get(block, "metric"));
  out->path = strdup(json_string_value(json_object_get(block, "path")));
  out->metric = strdup(metric != NULL ? metric : EXPT_SEARCH_DEFAULT_METRIC);
  /* The loader checked both ends, so no reason is wanted here. */
  expt_axis_scalar_parse(json_object_get(block, "from"), &out->from, NULL);
  expt_axis_scalar_parse(json_object_get(block, "to"), &out->to, NULL);
  json_t *p = json_object_get(block, "p");
  out->p = json_is_number(p) ? json_number_value(p) : EXPT_SEARCH_DEFAULT_P;
  out->reps = int_or(json_object_get(block, "reps"), EXPT_SEARCH_DEFAULT_REPS);
  size_t dflt_max =
      out->reps > EXPT_SEARCH_DEFAULT_MAX_REPS ? out->reps : EXPT_SEARCH_DEFAULT_MAX_REPS;
  out->max_reps = int_or(json_object_get(block, "max_reps"), dflt_max);
  out->probes = int_or(json_object_get(block, "probes"), EXPT_SEARCH_DEFAULT_PROBES);
  const json_t *al = json_object_get(block, "at_least"), *am = json_object_get(block, "at_most");
  out->bound_kind = json_is_number(al) ? 1 : json_is_number(am) ? -1 : 0;
  out->bound = json_is_number(al) ? json_number_value(al) : json_number_value(am);
  if (out->path == NULL || out->metric == NULL) {
    expt_search_spec_free(out);
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory");
    return RETRY_ENOMEM;
  }
  return 0;
}

void expt_search_spec_free(expt_search_spec *spec) {
  free(spec->path);
  free(spec->metric);
  spec->path = spec->metric = NULL;
}

void expt_search_result_free(expt_search_result *r) {
  for (size_t i = 0; i < r->n_probes; i++)
    json_decref(r->probes[i].value);
  r->n_probes = 0;
}

/* {==================================================================
 * The sequential test of one probe
 * =================================================================== */

/* The replications run after look j (from 1) of a probe: reps per batch, max_reps at most. */
static size_t look_n(const expt_search_spec *spec, size_t j) {
  size_t n = j * spec->reps;
  return n < spec->max_reps ? n : spec->max_reps;
}

static size_t n_looks(const expt_search_spec *spec) {
  return (spec->max_reps + spec->reps - 1) / spec->reps;
}

void expt_search_plan(const expt_search_spec *spec, double confidence, expt_search_levels *lv) {
  size_t looks = n_looks(spec);
  lv->error = (1 - confidence) / 2;
  lv->looks = looks;
  lv->fail_alpha = lv->error / (double)looks;
  /* A pass needs the exact lower bound at or above p, which n successes of n reach only from
   * n >= ln(alpha) / ln(p) on: a look before that cannot pass whatever it sees, and spending
   * error there would be waste. So the pass error is split among the last m looks, m as
   * large as keeps the first of them able to pass at error / m. */
  lv->pass_alpha = NAN;
  lv->pass_from_n = 0;
  for (size_t m = looks; m >= 1; m--) {
    double a = lv->error / (double)m;
    size_t n = look_n(spec, looks - m + 1);
    if ((double)n >= log(a) / log(spec->p) - 1e-9) {
      lv->pass_alpha = a;
      lv->pass_from_n = n;
      break;
    }
  }
}

/* The exact (Clopper-Pearson) one-sided bounds of k of n: lo at error alpha_lo (P < lo with
 * probability at most alpha_lo), hi at alpha_hi. */
static void exact_bounds(size_t k, size_t n, double alpha_lo, double alpha_hi, double *lo,
                         double *hi) {
  double dk = (double)k, dn = (double)n;
  *lo = k == 0 || isnan(alpha_lo) ? 0.0 : gsl_cdf_beta_Pinv(alpha_lo, dk, dn - dk + 1);
  *hi = k == n ? 1.0 : gsl_cdf_beta_Qinv(alpha_hi, dk + 1, dn - dk);
}

/* Runs the probe at x until it is decided (or max_reps), into *pr. The test is repeated after
 * every batch, each look at its share of the error (expt_search_plan), so that the chance of
 * a wrong decision over all the looks is at most lv->error each way (Bonferroni over the
 * looks: a crude but exact alpha spending). */
static int probe(const expt_search_spec *spec, const expt_search_levels *lv,
                 expt_search_probe_fn fn, void *ctx, double x, bool integer, expt_search_probe *pr,
                 retry_error *err) {
  memset(pr, 0, sizeof *pr);
  pr->value = expt_axis_scalar_json(&spec->from, x, integer);
  char *text = pr->value != NULL ? json_dumps(pr->value, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
  if (text == NULL) {
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory");
    return RETRY_ENOMEM;
  }
  /* What ran is the value as written: 12 significant digits, or the integer. */
  pr->x = integer ? x : strtod(text + (spec->from.text ? 1 : 0), NULL);
  expt_set set = {spec->path, text};
  for (;;) {
    size_t add = spec->max_reps - pr->n < spec->reps ? spec->max_reps - pr->n : spec->reps, k = 0;
    int rc = fn(ctx, pr->x, &set, pr->n, add, &k, err);
    if (rc != 0) {
      free(text);
      return rc;
    }
    pr->n += add;
    pr->k += k > add ? add : k;
    pr->looks++;
    /* When no look can pass, the lower bound is shown at the fail side's level. */
    exact_bounds(pr->k, pr->n, isnan(lv->pass_alpha) ? lv->fail_alpha : lv->pass_alpha,
                 lv->fail_alpha, &pr->lo, &pr->hi);
    pr->p_hat = (double)pr->k / (double)pr->n;
    bool can_pass = !isnan(lv->pass_alpha) && pr->n >= lv->pass_from_n;
    if ((can_pass && pr->lo >= spec->p) || pr->hi < spec->p) {
      pr->pass = can_pass && pr->lo >= spec->p;
      break;
    }
    if (pr->n >= spec->max_reps) {
      /* Not decided: the bisection still needs a side, which the share gives, and the
       * probe says it is only that. */
      pr->pass = pr->p_hat >= spec->p;
      pr->undecided = true;
      break;
    }
  }
  free(text);
  return 0;
}

/* }================================================================== */

int expt_search_run(const expt_search_spec *spec, double confidence, expt_search_probe_fn fn,
                    void *ctx, expt_search_result *out, retry_error *err) {
  memset(out, 0, sizeof *out);
  expt_search_plan(spec, confidence, &out->levels);
  out->pass = out->fail = -1;
  bool integer = spec->from.integer && spec->to.integer;
  double lo = spec->from.x, hi = spec->to.x;
  size_t budget = spec->probes < EXPT_SEARCH_MAX_PROBES ? spec->probes : EXPT_SEARCH_MAX_PROBES;
  int rc = 0;
  /* The ends first: a range that does not bracket the boundary is said so, not bisected. */
  for (int end = 0; end < 2; end++) {
    expt_search_probe *pr = &out->probes[out->n_probes];
    rc = probe(spec, &out->levels, fn, ctx, end == 0 ? lo : hi, integer, pr, err);
    out->n_probes++;
    if (rc != 0) goto failed;
    if (pr->pass)
      out->pass = (int)out->n_probes - 1;
    else
      out->fail = (int)out->n_probes - 1;
    if (end == 0 && !pr->pass) {
      out->outcome = EXPT_SEARCH_FROM_FAILS;
      return 0;
    }
    if (end == 1 && pr->pass) {
      out->outcome = EXPT_SEARCH_TO_PASSES;
      return 0;
    }
  }
  out->outcome = EXPT_SEARCH_BRACKETED;
  while (out->n_probes < budget) {
    double a = out->probes[out->pass].x, b = out->probes[out->fail].x, mid;
    if (integer) {
      if (b - a <= 1) break;
      mid = a + floor((b - a) / 2);
    } else {
      mid = a + (b - a) / 2;
    }
    expt_search_probe *pr = &out->probes[out->n_probes];
    rc = probe(spec, &out->levels, fn, ctx, mid, integer, pr, err);
    out->n_probes++;
    if (rc != 0) goto failed;
    /* Written with 12 digits, a midpoint can land on an end once the interval is that
     * narrow: nothing more can be learned. */
    if (!(pr->x > a && pr->x < b)) break;
    if (pr->pass)
      out->pass = (int)out->n_probes - 1;
    else
      out->fail = (int)out->n_probes - 1;
  }
  return 0;
failed:
  expt_search_result_free(out);
  return rc;
}

bool expt_search_monotone(const expt_search_result *r, size_t *lower, size_t *higher) {
  for (size_t i = 0; i < r->n_probes; i++)
    for (size_t j = 0; j < r->n_probes; j++) {
      const expt_search_probe *a = &r->probes[i], *b = &r->probes[j];
      if (a->x < b->x && b->lo > a->hi) {
        if (lower != NULL) *lower = i;
        if (higher != NULL) *higher = j;
        return false;
      }
    }
  return true;
}

size_t expt_search_min_reps_to_pass(const expt_search_spec *spec, double confidence) {
  expt_search_levels lv;
  expt_search_plan(spec, confidence, &lv);
  return isnan(lv.pass_alpha) ? 0 : lv.pass_from_n;
}

static json_t *probe_json(const expt_search_probe *pr) {
  const char *decision = pr->undecided ? "undecided" : pr->pass ? "pass" : "fail";
  return json_pack("{s:O,s:I,s:I,s:f,s:f,s:f,s:s,s:b,s:s,s:I}", "value", pr->value, "n",
                   (json_int_t)pr->n, "k", (json_int_t)pr->k, "p", expt_output_round(pr->p_hat),
                   "lo", expt_output_round(pr->lo), "hi", expt_output_round(pr->hi), "verdict",
                   pr->pass ? "pass" : "fail", "undecided", pr->undecided, "decision", decision,
                   "looks", (json_int_t)pr->looks);
}

/* How the probes were tested, for the reader of summary.json. */
static json_t *test_json(const expt_search_levels *lv) {
  return json_pack("{s:s,s:f,s:I,s:f,s:o,s:I}", "method",
                   "exact binomial bounds after each batch, the error split over the looks "
                   "(Bonferroni)",
                   "error", expt_output_round(lv->error), "looks", (json_int_t)lv->looks, "fail_alpha",
                   expt_output_round(lv->fail_alpha), "pass_alpha",
                   isnan(lv->pass_alpha) ? json_null() : json_real(expt_output_round(lv->pass_alpha)),
                   "pass_from_n", (json_int_t)lv->pass_from_n);
}

json_t *expt_search_result_json(const expt_search_spec *spec, double confidence,
                                const char *variant, const expt_search_result *r) {
  static const char *const outcomes[] = {"bracketed", "from_fails", "to_passes"};
  json_t *probes = json_array();
  for (size_t i = 0; probes != NULL && i < r->n_probes; i++) {
    if (json_array_append_new(probes, probe_json(&r->probes[i])) != 0) {
      json_decref(probes);
      probes = NULL;
    }
  }
  if (probes == NULL) return NULL;
  json_t *pass = r->pass >= 0 ? json_incref(r->probes[r->pass].value) : json_null();
  json_t *fail = r->fail >= 0 ? json_incref(r->probes[r->fail].value) : json_null();
  size_t undecided = 0;
  for (size_t i = 0; i < r->n_probes; i++)
    undecided += r->probes[i].undecided ? 1u : 0u;
  json_t *o = json_pack("{s:s,s:s,s:s,s:f,s:f,s:s,s:{s:o,s:o,s:s},s:o,s:I,s:o}", "variant", variant,
                   "path", spec->path, "metric", spec->metric, "p", spec->p, "confidence",
                   confidence, "outcome", outcomes[r->outcome], "boundary", "pass", pass, "fail",
                   fail, "is",
                   "the bisection's bracket: the highest value that passed and the lowest that "
                   "failed (or leaned so, when undecided); not an interval with a confidence",
                   "test", test_json(&r->levels), "n_undecided", (json_int_t)undecided, "probes",
                   probes);
  /* A number judged against a bound: say which, so "P" reads as P(metric >= bound). */
  if (o != NULL && spec->bound_kind != 0 &&
      json_object_set_new(o, spec->bound_kind > 0 ? "at_least" : "at_most",
                          json_real(spec->bound)) != 0) {
    json_decref(o);
    o = NULL;
  }
  return o;
}

/* {==================================================================
 * Expectations of a search
 * =================================================================== */

/* The x of the probe whose value is v (a boundary's end), or null. */
static json_t *boundary_x(const json_t *probes, const json_t *v) {
  for (size_t i = 0; v != NULL && !json_is_null(v) && i < json_array_size(probes); i++) {
    const json_t *p = json_array_get(probes, i);
    if (json_equal(json_object_get(p, "value"), (json_t *)v)) {
      const json_t *x = json_object_get(p, "x");
      if (json_is_number(x)) return json_real(json_number_value(x));
      if (json_is_number(v)) return json_real(json_number_value(v));
    }
  }
  return json_null();
}

json_t *expt_search_check_doc(const json_t *result) {
  json_t *r = json_deep_copy(result);
  json_t *b = json_object_get(r, "boundary");
  const json_t *probes = json_object_get(r, "probes");
  if (r == NULL || !json_is_object(b)) {
    json_decref(r);
    return NULL;
  }
  json_t *pass = boundary_x(probes, json_object_get(b, "pass"));
  json_t *fail = boundary_x(probes, json_object_get(b, "fail"));
  if (json_object_set_new(b, "pass", pass) != 0 || json_object_set_new(b, "fail", fail) != 0) {
    json_decref(r);
    return NULL;
  }
  return json_pack("{s:o}", "search", r);
}

/* --check of a search study: every variant's search expectations against its result. Returns
 * the number that failed, -1 when out of memory; *junit_failed is set when the JUnit file
 * could not be written (the error is printed). */
static int check_search(const expt_scenario *s, const json_t *search, const struct expt_run_opts *o,
                        bool *junit_failed) {
  bool verbose = o->format == EXPT_FORMAT_JSON && !o->quiet;
  size_t total = 0, others = 0;
  int failed = 0;
  expt_junit *junit = o->junit != NULL ? expt_junit_create(expt_scenario_name(s)) : NULL;
  *junit_failed = false;
  if (o->junit != NULL && junit == NULL) {
    fprintf(o->err, "retrysim: %s: out of memory\n", o->junit);
    *junit_failed = true;
  }
  for (size_t v = 0; v < json_array_size(search) && failed >= 0; v++) {
    size_t other = 0;
    const json_t *expect = expt_scenario_expect(s, v);
    json_t *part = expt_expect_part(expect, true, &other);
    json_t *doc = expt_search_check_doc(json_array_get(search, v));
    others += other;
    if ((expect != NULL && part == NULL) || doc == NULL) {
      fprintf(o->err, "retrysim: out of memory checking the search\n");
      failed = -1;
    } else {
      total += json_object_size(part);
      failed += expt_expect_check_to(part, doc, expt_scenario_run_name(s, v), o->err, verbose,
                                     junit != NULL ? expt_junit_add : NULL, junit);
    }
    json_decref(part);
    json_decref(doc);
  }
  if (expt_junit_finish(junit, o->junit, failed >= 0, o->err) != 0) *junit_failed = true;
  if (failed < 0) return failed;
  char note[96] = "";
  if (others > 0)
    snprintf(note, sizeof note, "; %zu expectation%s of a run not checked", others,
             others == 1 ? "" : "s");
  if (total == 0 && !o->quiet)
    fprintf(o->err, "retrysim: check: the scenario has no expectations of a search%s\n", note);
  else if (total > 0 && (!o->quiet || failed > 0))
    fprintf(o->err, "retrysim: check: %zu passed, %d failed (against each variant's search%s)\n",
            total - (size_t)failed, failed, note);
  return failed;
}

/* }================================================================== */

/* {==================================================================
 * The study of a search
 * =================================================================== */

/* The probe callback's state: one variant of the base scenario; the scenario of the value
 * probed last, derived once per probe. */
typedef struct search_ctx {
  const expt_scenario *base;
  const expt_search_spec *spec;
  size_t variant;
  uint64_t seed; /* the variant's base seed */
  unsigned jobs;
  expt_scenario *at; /* derived at x_at */
  double x_at;
  json_t *records; /* every run: {variant, value, replication, seed, result} */
  expt_progress *prog; /* the line on stderr, over every variant's probes */
} search_ctx;

static int study_probe(void *vctx, double x, const expt_set *set, size_t first_rep, size_t n,
                       size_t *k, retry_error *err) {
  search_ctx *c = vctx;
  if (c->at == NULL || c->x_at != x) {
    expt_scenario_destroy(c->at);
    c->at = expt_scenario_derive(c->base, set, 1, err);
    if (c->at == NULL) return err->code != 0 ? err->code : RETRY_ECONFIG;
    c->x_at = x;
  }
  expt_study_job *jobs = calloc(n, sizeof *jobs);
  json_t **results = calloc(n, sizeof *results);
  json_t *value = json_loads(set->value, JSON_DECODE_ANY, NULL);
  if (jobs == NULL || results == NULL || value == NULL) {
    free(jobs);
    free(results);
    json_decref(value);
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory running a probe");
    return RETRY_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    jobs[i] = (expt_study_job){c->at, c->variant, expt_study_seed(c->seed, first_rep + i), NULL};
  int rc = expt_study_run_jobs(jobs, n, c->jobs, c->prog, results, err);
  size_t kk = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    const json_t *m = expt_scenario_path_get(results[i], c->spec->metric, NULL);
    if (c->spec->bound_kind != 0 && (json_is_number(m) || json_is_null(m))) {
      /* A number against the search's bound; null (no value: a window without a bucket) is
       * no success. */
      double val = json_is_number(m) ? json_number_value(m) : NAN;
      kk += c->spec->bound_kind > 0 ? val >= c->spec->bound : val <= c->spec->bound;
    } else if (!json_is_boolean(m)) {
      char got[64] = "nothing";
      if (m != NULL) retry_json_describe(m, got, sizeof got);
      retry_error_set(err, RETRY_ECONFIG, expt_scenario_source(c->base), "$.search.metric", -1, -1,
                      "\"%s\" must name a boolean of a run's summary (such as "
                      "\"recovery.recovered\", which needs a trigger), or a number with "
                      "\"at_least\" or \"at_most\", got %s",
                      c->spec->metric, got);
      rc = RETRY_ECONFIG;
      break;
    } else {
      kk += json_is_true(m);
    }
    json_t *rec =
        json_pack("{s:s,s:O,s:I,s:o,s:O}", "variant", expt_scenario_run_name(c->at, c->variant),
                  "value", value, "replication", (json_int_t)(first_rep + i), "seed",
                  expt_json_u64(jobs[i].seed), "result", results[i]);
    if (rec == NULL || json_array_append_new(c->records, rec) != 0) {
      retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory keeping a probe's runs");
      rc = RETRY_ENOMEM;
    }
  }
  for (size_t i = 0; i < n; i++)
    json_decref(results[i]);
  free(results);
  free(jobs);
  json_decref(value);
  *k = kk;
  return rc;
}

/* A value for a CSV field: a string as it is (values have no comma or quote: numbers with a
 * unit), a number as JSON writes it. */
static void csv_value(FILE *f, const json_t *v) {
  if (json_is_string(v)) {
    fputs(json_string_value(v), f);
    return;
  }
  char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
  if (t != NULL) fputs(t, f);
  free(t);
}

static int fill_csv(void *ctx, FILE *f) {
  const json_t *search = ctx;
  fputs("variant,value,x,n,k,p,lo,hi,verdict,undecided\n", f);
  for (size_t v = 0; v < json_array_size(search); v++) {
    const json_t *res = json_array_get(search, v);
    const json_t *probes = json_object_get(res, "probes");
    for (size_t i = 0; i < json_array_size(probes); i++) {
      const json_t *p = json_array_get(probes, i);
      fprintf(f, "%s,", json_string_value(json_object_get(res, "variant")));
      csv_value(f, json_object_get(p, "value"));
      fprintf(
          f, ",%.10g,%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT ",%.10g,%.10g,%.10g,%s,%d\n",
          json_number_value(json_object_get(p, "x")), json_integer_value(json_object_get(p, "n")),
          json_integer_value(json_object_get(p, "k")), json_number_value(json_object_get(p, "p")),
          json_number_value(json_object_get(p, "lo")), json_number_value(json_object_get(p, "hi")),
          json_string_value(json_object_get(p, "verdict")),
          json_is_true(json_object_get(p, "undecided")) ? 1 : 0);
    }
  }
  return ferror(f) ? -1 : 0;
}

static void join_path(char *buf, size_t size, const char *dir, const char *name) {
  size_t n = strlen(dir);
  snprintf(buf, size, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name);
}

/* A value for the table: the string, or the number. */
static void show_value(char *buf, size_t size, const json_t *v) {
  if (v == NULL || json_is_null(v)) {
    snprintf(buf, size, "-");
  } else {
    expt_output_value_text(v, buf, size);
  }
}

static void print_table(FILE *f, const expt_scenario *s, const expt_search_spec *spec,
                        double confidence, const json_t *search) {
  char bound[64] = "";
  if (spec->bound_kind != 0)
    snprintf(bound, sizeof bound, " %s %g", spec->bound_kind > 0 ? ">=" : "<=", spec->bound);
  fprintf(f,
          "scenario %s (retrysim %s): search of %s for P(%s%s) >= %g (exact bounds after each "
          "batch; each probe wrong with probability at most %g either way)\n",
          expt_scenario_name(s), RETRY_VERSION, spec->path, spec->metric, bound, spec->p,
          (1 - confidence) / 2);
  for (size_t v = 0; v < json_array_size(search); v++) {
    const json_t *res = json_array_get(search, v);
    const json_t *b = json_object_get(res, "boundary");
    const char *outcome = json_string_value(json_object_get(res, "outcome"));
    char pass[64], fail[64];
    show_value(pass, sizeof pass, json_object_get(b, "pass"));
    show_value(fail, sizeof fail, json_object_get(b, "fail"));
    fprintf(f, "\n%s: ", json_string_value(json_object_get(res, "variant")));
    json_int_t undecided = json_integer_value(json_object_get(res, "n_undecided"));
    if (strcmp(outcome, "bracketed") == 0)
      fprintf(f,
              "the bisection's bracket: highest value passing %s, lowest failing %s (each "
              "probe's own interval below; the bracket is not a confidence interval)\n",
              pass, fail);
    else if (strcmp(outcome, "from_fails") == 0)
      fprintf(f, "already \"from\" (%s) fails: the boundary is below the range\n", fail);
    else
      fprintf(f, "still \"to\" (%s) passes: the boundary is above the range\n", pass);
    if (undecided > 0)
      fprintf(f,
              "  %" JSON_INTEGER_FORMAT " probe(s) undecided within max_reps: their side is "
              "only the share k/n, and the bracket rests on it\n",
              undecided);
    fprintf(f, "  %-14s %6s %6s %8s  %-19s %s\n", "value", "n", "k", "P", "exact bounds", "decision");
    const json_t *probes = json_object_get(res, "probes");
    for (size_t i = 0; i < json_array_size(probes); i++) {
      const json_t *p = json_array_get(probes, i);
      char val[64], iv[48];
      show_value(val, sizeof val, json_object_get(p, "value"));
      snprintf(iv, sizeof iv, "[%.3f, %.3f]", json_number_value(json_object_get(p, "lo")),
               json_number_value(json_object_get(p, "hi")));
      fprintf(f, "  %-14s %6" JSON_INTEGER_FORMAT " %6" JSON_INTEGER_FORMAT " %8.3f  %-19s %s%s\n",
              val, json_integer_value(json_object_get(p, "n")),
              json_integer_value(json_object_get(p, "k")),
              json_number_value(json_object_get(p, "p")), iv,
              json_string_value(json_object_get(p, "decision")),
              json_is_true(json_object_get(p, "undecided"))
                  ? strcmp(json_string_value(json_object_get(p, "verdict")), "pass") == 0
                        ? " (k/n leans pass)"
                        : " (k/n leans fail)"
                  : "");
    }
  }
}

/* Runs the search of every variant of s, appending each result (expt_search_result_json, with
 * each probe's x) to search and every replication run to records; warns on opts->err when a
 * variant's probes are not monotone. Returns the exit status, the error printed. */
static int search_variants(const expt_scenario *s, const struct expt_study_spec *tmpl,
                           const struct expt_run_opts *opts, const expt_search_spec *spec,
                           json_t *search, json_t *records, retry_error *err) {
  const char *src = expt_scenario_source(s);
  int status = EXPT_EXIT_OK;
  /* The runs a search may make: its budget, which it rarely uses up. */
  expt_progress prog;
  expt_progress_init(&prog, opts->err, opts->quiet,
                     expt_scenario_n_runs(s) * spec->probes * spec->max_reps, true);
  for (size_t v = 0; status == EXPT_EXIT_OK && v < expt_scenario_n_runs(s); v++) {
    search_ctx c = {.base = s,
                    .spec = spec,
                    .variant = v,
                    .seed = opts->has_seed ? opts->seed : expt_scenario_config(s, v)->seed,
                    .jobs = tmpl->jobs > 0 ? tmpl->jobs : 1,
                    .records = records,
                    .prog = &prog};
    expt_search_result r;
    int rc = expt_search_run(spec, tmpl->confidence, study_probe, &c, &r, err);
    expt_scenario_destroy(c.at);
    if (rc != 0) {
      expt_error_print(opts->err, err);
      return rc == RETRY_ENOMEM || rc == RETRY_EIO ? EXPT_EXIT_RUNTIME : EXPT_EXIT_USAGE;
    }
    size_t lower = 0, higher = 0;
    if (!expt_search_monotone(&r, &lower, &higher)) {
      char a[64], b[64];
      expt_output_value_text(r.probes[lower].value, a, sizeof a);
      expt_output_value_text(r.probes[higher].value, b, sizeof b);
      fprintf(opts->err,
              "retrysim: warning: %s: variant %s: P(%s) does not fall as %s rises: %.3g at %s "
              "but %.3g at %s (Wilson intervals apart); the boundary found may not be the only "
              "one\n",
              src, expt_scenario_run_name(s, v), spec->metric, spec->path, r.probes[lower].p_hat, a,
              r.probes[higher].p_hat, b);
    }
    json_t *res = expt_search_result_json(spec, tmpl->confidence, expt_scenario_run_name(s, v), &r);
    /* The value probed as a number too, for plots. */
    json_t *probes = json_object_get(res, "probes");
    for (size_t i = 0; probes != NULL && i < json_array_size(probes); i++)
      json_object_set_new(json_array_get(probes, i), "x", json_real(r.probes[i].x));
    expt_search_result_free(&r);
    if (res == NULL || json_array_append_new(search, res) != 0) status = EXPT_EXIT_RUNTIME;
  }
  return status;
}

/* summary.json of a search: provenance, "study", "search" (one result per variant) and "runs".
 * New reference, NULL when out of memory. */
static json_t *search_summary(const expt_scenario *s, const struct expt_study_spec *tmpl,
                              const struct expt_run_opts *opts, const expt_search_spec *spec,
                              json_t *search, json_t *records) {
  uint64_t seed = opts->has_seed ? opts->seed : expt_scenario_config(s, 0)->seed;
  json_t *names = json_array();
  for (size_t v = 0; names != NULL && v < expt_scenario_n_runs(s); v++)
    json_array_append_new(names, json_string(expt_scenario_run_name(s, v)));
  return json_pack("{s:s,s:s,s:s,s:o,s:O,s:O,s:O,s:{s:s,s:f,s:b,s:o,s:s,s:s},s:O,s:O}", "scenario",
                   expt_scenario_name(s), "version", RETRY_VERSION, "scenario_sha256",
                   expt_scenario_sha256(s), "seed", expt_json_u64(seed), "inputs",
                   expt_scenario_inputs(s), "overrides", expt_scenario_overrides(s), "document",
                   expt_scenario_base_document(s), "study", "kind", "search", "confidence",
                   tmpl->confidence, "has_variants", expt_scenario_has_variants(s), "variants",
                   names, "path", spec->path, "metric", spec->metric, "search", search, "runs",
                   records);
}

/* Writes search.csv and summary.json into opts->out_dir and, with --plot, search.svg and the
 * report (the page without the picture when it could not be drawn). Returns EXPT_EXIT_OK or
 * EXPT_EXIT_RUNTIME, every error printed. */
static int write_search_files(json_t *doc, json_t *search, const struct expt_run_opts *opts,
                              retry_error *err) {
  int status = EXPT_EXIT_OK;
  char path[4096];
  int rc = expt_output_make_dirs(opts->out_dir, err);
  if (rc == 0) {
    join_path(path, sizeof path, opts->out_dir, "search.csv");
    rc = expt_output_write_atomic(path, fill_csv, search, err);
  }
  if (rc == 0) {
    join_path(path, sizeof path, opts->out_dir, "summary.json");
    rc = expt_output_write_atomic(path, expt_json_fill, doc, err);
  }
  /* --plot: search.svg, then report.md and report.html (the page without the picture when
   * it could not be drawn). */
  if (rc == 0 && opts->plot) {
    int prc = expt_report_search_plots(doc, opts->out_dir, expt_plot_dir(), opts->err, err);
    if (prc != 0) {
      expt_error_print(opts->err, err);
      retry_error_clear(err);
    }
    rc = expt_report_search_write(doc, opts->out_dir, opts->command, prc == 0, err);
    if (rc == 0 && prc != 0) status = EXPT_EXIT_RUNTIME;
  }
  if (rc != 0) {
    expt_error_print(opts->err, err);
    status = EXPT_EXIT_RUNTIME;
  }
  return status;
}

int expt_search_run_study(const expt_scenario *s, const struct expt_study_spec *tmpl,
                          const struct expt_run_opts *opts) {
  const char *src = expt_scenario_source(s);
  const char *refused = tmpl->shard_n > 0 ? "--shard (a search is adaptive: each probe "
                                            "depends on the last; run it on one machine, with -j)"
                        : tmpl->reps > 1  ? "--reps or \"replications\" (the search's \"reps\" "
                                            "and \"max_reps\" say how many)"
                        : tmpl->baseline != NULL ? "--baseline or \"baseline\""
                                                 : NULL;
  if (refused != NULL) {
    fprintf(opts->err, "retrysim: %s: a scenario with a \"search\" does not take %s\n", src,
            refused);
    return EXPT_EXIT_USAGE;
  }
  retry_error err;
  retry_error_clear(&err);
  expt_search_spec spec;
  if (expt_search_spec_from_json(expt_scenario_search_block(s), &spec, &err) != 0) {
    fprintf(opts->err, "retrysim: out of memory\n");
    return EXPT_EXIT_RUNTIME;
  }
  /* Every replication of every probe is kept for summary.json: refuse what cannot fit. */
  uint64_t most = (uint64_t)expt_scenario_n_runs(s) * spec.probes * spec.max_reps;
  if (expt_study_runs_check(s, most, tmpl->max_runs,
                            "a search of up to variants x probes x max_reps runs", NULL,
                            opts->err) != EXPT_EXIT_OK ||
      (tmpl->max_bytes > 0 &&
      expt_study_estimate_check(s, most, tmpl->jobs > 0 ? tmpl->jobs : 1, tmpl->max_bytes,
                                "a search of up to probes x max_reps runs per variant",
                                opts->err) != 0)) {
    expt_search_spec_free(&spec);
    return EXPT_EXIT_USAGE;
  }
  if (expt_search_min_reps_to_pass(&spec, tmpl->confidence) == 0) {
    /* n of n successes give the exact lower bound alpha^(1/n): at one look with the whole
     * error, that reaches p from ln(error) / ln(p) on. */
    double need = ceil(log((1 - tmpl->confidence) / 2) / log(spec.p) - 1e-9);
    fprintf(opts->err,
            "retrysim: warning: %s: $.search.max_reps: %zu replications in batches of %zu "
            "cannot show P >= %g with error %g (one look would need %.0f successes of %.0f, "
            "more when the error is split over looks): every passing probe will be undecided, "
            "decided by k/n\n",
            src, spec.max_reps, spec.reps, spec.p, (1 - tmpl->confidence) / 2, need, need);
  }
  json_t *search = json_array(), *records = json_array();
  int status = search != NULL && records != NULL ? EXPT_EXIT_OK : EXPT_EXIT_RUNTIME;
  if (status == EXPT_EXIT_OK) status = search_variants(s, tmpl, opts, &spec, search, records, &err);
  json_t *doc = NULL;
  if (status == EXPT_EXIT_OK) {
    doc = search_summary(s, tmpl, opts, &spec, search, records);
    if (doc == NULL) status = EXPT_EXIT_RUNTIME;
  }
  if (status == EXPT_EXIT_OK && opts->out_dir != NULL)
    status = write_search_files(doc, search, opts, &err);
  if (status == EXPT_EXIT_OK) {
    if (opts->format == EXPT_FORMAT_JSON) {
      if (expt_json_fill(doc, opts->out) != 0) status = EXPT_EXIT_RUNTIME;
    } else if (!opts->quiet) {
      print_table(opts->out, s, &spec, tmpl->confidence, search);
    }
  }
  /* Files and summary first, then the expectations, as for a run: a failed check (1) does
   * not outrank a write failure (3). */
  if (opts->check && doc != NULL && status != EXPT_EXIT_USAGE) {
    bool junit_failed = false;
    int failed = check_search(s, search, opts, &junit_failed);
    if (failed < 0 || junit_failed)
      status = EXPT_EXIT_RUNTIME;
    else if (failed > 0 && status == EXPT_EXIT_OK)
      status = EXPT_EXIT_CHECK;
  }
  if (status == EXPT_EXIT_RUNTIME && doc == NULL && search == NULL)
    fprintf(opts->err, "retrysim: out of memory\n");
  json_decref(doc);
  json_decref(search);
  json_decref(records);
  expt_search_spec_free(&spec);
  return status;
}

/* }================================================================== */
