/*
 * expt_study_table.c: the text table of a study: one row per (point, variant), means with
 * their half-widths and the proportions with their intervals.
 */
#include "expt/expt_study_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* {==================================================================
 * The text table
 * =================================================================== */

/* x with sig significant digits, but never in exponent form for |x| >= 1 (160, not 1.6e+02). */
static void fmt_sig(char *buf, size_t size, double x, int sig) {
  if (fabs(x) >= pow(10, sig))
    snprintf(buf, size, "%.0f", x);
  else
    snprintf(buf, size, "%.*g", sig, x);
}

/* With a baseline: per variant, how many of its metrics the paired tests flagged, at what
 * level and with what adjustment (issue 23: a "*" among hundreds of tests is read with this). */
static void paired_counts(FILE *f, const expt__study *st, size_t p) {
  for (size_t v = 0; st->baseline >= 0 && v < st->nv; v++) {
    const json_t *pd = json_object_get(st->aggs[p * st->nv + v], "paired");
    if (pd == NULL) continue;
    const char *adjust = json_string_value(json_object_get(pd, "adjust"));
    fprintf(f, "  %s - %s: %lld of %lld metrics differ at %.4g %% (%s)\n",
            expt__study_variant_name(st, v), expt__study_variant_name(st, (size_t)st->baseline),
            (long long)json_integer_value(json_object_get(pd, "n_flagged")),
            (long long)json_integer_value(json_object_get(pd, "n_tested")), st->level * 100,
            adjust != NULL && strcmp(adjust, "holm") == 0 ? "Holm's step-down"
                                                          : "each alone, no adjustment");
  }
}

/* A cell "mean ±half_width" of metric in aggregate a, with '*' when its paired difference from
 * the baseline is distinguishable from zero. */
static void cell(const json_t *a, const char *metric, char *buf, size_t size) {
  const json_t *iv = json_object_get(json_object_get(a, "intervals"), metric);
  if (iv == NULL) {
    snprintf(buf, size, "-");
    return;
  }
  const json_t *mean = json_object_get(iv, "mean"), *hw = json_object_get(iv, "half_width");
  const json_t *pd =
      json_object_get(json_object_get(json_object_get(a, "paired"), "metrics"), metric);
  const char *mark = json_is_true(json_object_get(pd, "distinguishable")) ? "*" : "";
  if (!json_is_number(mean)) {
    snprintf(buf, size, "-");
    return;
  }
  char m[40], h[40];
  fmt_sig(m, sizeof m, json_number_value(mean), 4);
  fmt_sig(h, sizeof h, json_number_value(hw), 2);
  if (json_is_number(hw))
    snprintf(buf, size, "%s ±%s%s", m, h, mark);
  else
    snprintf(buf, size, "%s%s", m, mark);
}

/* "0.3 [0.2, 0.4]" for the proportion pr ({p, lo, hi}), "-" without one. */
static void prop_cell(const json_t *pr, char *buf, size_t size) {
  if (pr == NULL)
    snprintf(buf, size, "-");
  else
    snprintf(buf, size, "%.3g [%.3g, %.3g]", json_number_value(json_object_get(pr, "p")),
             json_number_value(json_object_get(pr, "lo")),
             json_number_value(json_object_get(pr, "hi")));
}

#define N_COLS 9
int expt__study_print_table(const expt__study *st, FILE *f) {
  static const char *const head[N_COLS] = {
      "variant", "n", "goodput/s", "attempts/call", "p99 ms", "dups", "P(recovered)", "P(storm)",
      "median recovery s"};
  static const char *const metrics[] = {"goodput_per_s", "calls.attempts_per_call",
                                        "latency_ms.p99", "side_effects.duplicates"};
  size_t rows = st->nv + 1;
  char(*cells)[N_COLS][96] = calloc(rows, sizeof *cells);
  if (cells == NULL) return -1;
  fprintf(f, "study %s (seed ", json_string_value(json_object_get(st->plan, "scenario")));
  const json_t *seed = json_object_get(st->plan, "seed");
  if (json_is_integer(seed))
    fprintf(f, "%lld", (long long)json_integer_value(seed));
  else
    fputs(json_string_value(seed) ? json_string_value(seed) : "?", f);
  fprintf(f, ", retrysim %s): %zu point%s x %zu variant%s x %zu replications, %.4g %% intervals",
          json_string_value(json_object_get(st->plan, "version")), st->np, st->np == 1 ? "" : "s",
          st->nv, st->nv == 1 ? "" : "s", st->reps, st->level * 100);
  if (st->baseline >= 0)
    fprintf(f, ", * = differs from %s", expt__study_variant_name(st, (size_t)st->baseline));
  fputs("\n", f);
  for (size_t p = 0; p < st->np; p++) {
    char label[512];
    expt__study_point_label(st, p, label, sizeof label);
    fprintf(f, "\n%s%s", label, label[0] ? "\n" : "");
    for (size_t c = 0; c < N_COLS; c++)
      snprintf(cells[0][c], sizeof cells[0][c], "%s", head[c]);
    for (size_t v = 0; v < st->nv; v++) {
      const json_t *a = st->aggs[p * st->nv + v];
      char(*row)[96] = cells[v + 1];
      snprintf(row[0], 96, "%s", expt__study_variant_name(st, v));
      snprintf(row[1], 96, "%lld", (long long)json_integer_value(json_object_get(a, "n")));
      for (size_t m = 0; m < 4; m++)
        cell(a, metrics[m], row[2 + m], 96);
      prop_cell(json_object_get(json_object_get(a, "proportions"), "recovery.recovered"), row[6],
                96);
      /* P(storm): the share that never recovered after the trigger, beside P(recovered) whose
       * complement it is not when some runs had no trigger to recover from. */
      prop_cell(json_object_get(a, "p_storm"), row[7], 96);
      const json_t *rs = json_object_get(a, "recovery_s");
      const json_t *med = json_object_get(rs, "median");
      if (json_is_number(med))
        snprintf(row[8], 96, "%.3g", json_number_value(med));
      else
        snprintf(row[8], 96, "%s", rs != NULL ? "never (most)" : "-");
    }
    int width[N_COLS] = {0};
    for (size_t r = 0; r < rows; r++)
      for (size_t c = 0; c < N_COLS; c++) {
        /* Display width: "±" is two bytes in UTF-8 and one column. */
        int w = 0;
        for (const unsigned char *s = (const unsigned char *)cells[r][c]; *s; s++)
          w += (*s & 0xC0) != 0x80;
        if (w > width[c]) width[c] = w;
      }
    for (size_t r = 0; r < rows; r++) {
      for (size_t c = 0; c < N_COLS; c++) {
        int w = 0;
        for (const unsigned char *s = (const unsigned char *)cells[r][c]; *s; s++)
          w += (*s & 0xC0) != 0x80;
        if (c == 0)
          fprintf(f, "%s%*s", cells[r][c], width[c] - w, "");
        else
          fprintf(f, "  %*s%s", width[c] - w, "", cells[r][c]);
      }
      fputc('\n', f);
    }
    paired_counts(f, st, p);
  }
  free(cells);
  return ferror(f) ? -1 : 0;
}

/* }================================================================== */
