/*
 * cli_search.c: the bisection of a tipping-point search, with Wilson decisions (cli_search.h).
 * Invariant: every probe between the first pass and the first fail lies strictly between the
 * highest pass and the lowest fail found so far, so the reported interval only shrinks.
 */
#include "cli/cli_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_output.h"
#include "sim/sim_stats.h"

static size_t int_or(const json_t *v, size_t dflt) {
  return json_is_integer(v) ? (size_t)json_integer_value(v) : dflt;
}

int cli_search_spec_from_json(const json_t *block, cli_search_spec *out, retry_error *err) {
  memset(out, 0, sizeof *out);
  const char *metric = json_string_value(json_object_get(block, "metric"));
  out->path = strdup(json_string_value(json_object_get(block, "path")));
  out->metric = strdup(metric != NULL ? metric : CLI_SEARCH_DEFAULT_METRIC);
  char why[128];
  cli_sweep_scalar_parse(json_object_get(block, "from"), &out->from, why, sizeof why);
  cli_sweep_scalar_parse(json_object_get(block, "to"), &out->to, why, sizeof why);
  json_t *p = json_object_get(block, "p");
  out->p = json_is_number(p) ? json_number_value(p) : CLI_SEARCH_DEFAULT_P;
  out->reps = int_or(json_object_get(block, "reps"), CLI_SEARCH_DEFAULT_REPS);
  size_t dflt_max =
      out->reps > CLI_SEARCH_DEFAULT_MAX_REPS ? out->reps : CLI_SEARCH_DEFAULT_MAX_REPS;
  out->max_reps = int_or(json_object_get(block, "max_reps"), dflt_max);
  out->probes = int_or(json_object_get(block, "probes"), CLI_SEARCH_DEFAULT_PROBES);
  if (out->path == NULL || out->metric == NULL) {
    cli_search_spec_free(out);
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory");
    return RETRY_ENOMEM;
  }
  return 0;
}

void cli_search_spec_free(cli_search_spec *spec) {
  free(spec->path);
  free(spec->metric);
  spec->path = spec->metric = NULL;
}

void cli_search_result_free(cli_search_result *r) {
  for (size_t i = 0; i < r->n_probes; i++)
    json_decref(r->probes[i].value);
  r->n_probes = 0;
}

/* Runs the probe at x until it is decided (or max_reps), into *pr. */
static int probe(const cli_search_spec *spec, double confidence, cli_search_probe_fn fn, void *ctx,
                 double x, bool integer, cli_search_probe *pr, retry_error *err) {
  memset(pr, 0, sizeof *pr);
  pr->value = cli_sweep_scalar_json(&spec->from, x, integer);
  char *text = pr->value != NULL ? json_dumps(pr->value, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
  if (text == NULL) {
    retry_error_set(err, RETRY_ENOMEM, "", "", -1, -1, "out of memory");
    return RETRY_ENOMEM;
  }
  /* What ran is the value as written: 12 significant digits, or the integer. */
  pr->x = integer ? x : strtod(text + (spec->from.text ? 1 : 0), NULL);
  cli_set set = {spec->path, text};
  for (;;) {
    size_t add = spec->max_reps - pr->n < spec->reps ? spec->max_reps - pr->n : spec->reps, k = 0;
    int rc = fn(ctx, pr->x, &set, pr->n, add, &k, err);
    if (rc != 0) {
      free(text);
      return rc;
    }
    pr->n += add;
    pr->k += k > add ? add : k;
    sim_stats_wilson(pr->k, pr->n, confidence, &pr->lo, &pr->hi);
    pr->p_hat = (double)pr->k / (double)pr->n;
    if (pr->lo >= spec->p || pr->hi < spec->p) {
      pr->pass = pr->lo >= spec->p;
      break;
    }
    if (pr->n >= spec->max_reps) {
      pr->pass = pr->p_hat >= spec->p;
      pr->undecided = true;
      break;
    }
  }
  free(text);
  return 0;
}

int cli_search_run(const cli_search_spec *spec, double confidence, cli_search_probe_fn fn,
                   void *ctx, cli_search_result *out, retry_error *err) {
  memset(out, 0, sizeof *out);
  out->pass = out->fail = -1;
  bool integer = spec->from.integer && spec->to.integer;
  double lo = spec->from.x, hi = spec->to.x;
  size_t budget = spec->probes < CLI_SEARCH_MAX_PROBES ? spec->probes : CLI_SEARCH_MAX_PROBES;
  int rc = 0;
  /* The ends first: a range that does not bracket the boundary is said so, not bisected. */
  for (int end = 0; end < 2; end++) {
    cli_search_probe *pr = &out->probes[out->n_probes];
    rc = probe(spec, confidence, fn, ctx, end == 0 ? lo : hi, integer, pr, err);
    out->n_probes++;
    if (rc != 0) goto failed;
    if (pr->pass)
      out->pass = (int)out->n_probes - 1;
    else
      out->fail = (int)out->n_probes - 1;
    if (end == 0 && !pr->pass) {
      out->outcome = CLI_SEARCH_FROM_FAILS;
      return 0;
    }
    if (end == 1 && pr->pass) {
      out->outcome = CLI_SEARCH_TO_PASSES;
      return 0;
    }
  }
  out->outcome = CLI_SEARCH_BRACKETED;
  while (out->n_probes < budget) {
    double a = out->probes[out->pass].x, b = out->probes[out->fail].x, mid;
    if (integer) {
      if (b - a <= 1) break;
      mid = a + floor((b - a) / 2);
    } else {
      mid = a + (b - a) / 2;
    }
    cli_search_probe *pr = &out->probes[out->n_probes];
    rc = probe(spec, confidence, fn, ctx, mid, integer, pr, err);
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
  cli_search_result_free(out);
  return rc;
}

static json_t *probe_json(const cli_search_probe *pr) {
  return json_pack("{s:O,s:I,s:I,s:f,s:f,s:f,s:s,s:b}", "value", pr->value, "n", (json_int_t)pr->n,
                   "k", (json_int_t)pr->k, "p", cli_output_round(pr->p_hat), "lo",
                   cli_output_round(pr->lo), "hi", cli_output_round(pr->hi), "verdict",
                   pr->pass ? "pass" : "fail", "undecided", pr->undecided);
}

json_t *cli_search_result_json(const cli_search_spec *spec, double confidence, const char *variant,
                               const cli_search_result *r) {
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
  return json_pack("{s:s,s:s,s:s,s:f,s:f,s:s,s:{s:o,s:o},s:o}", "variant", variant, "path",
                   spec->path, "metric", spec->metric, "p", spec->p, "confidence", confidence,
                   "outcome", outcomes[r->outcome], "boundary", "pass", pass, "fail", fail,
                   "probes", probes);
}
