/*
 * expt_paired.c: exact paired tests (expt_paired.h). The distributions are GSL's: the binomial
 * cumulative for the sign and McNemar tests, Student's t for the paired t. Invariant: every
 * p-value is two-sided and in [0, 1], or NaN when there is nothing to test.
 */
#include "expt/expt_paired.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

const char *expt_paired_method_name(expt_paired_method m) {
  switch (m) {
    case EXPT_PAIRED_T: return "t";
    case EXPT_PAIRED_SIGN: return "sign";
    case EXPT_PAIRED_MCNEMAR: return "mcnemar";
    case EXPT_PAIRED_CENSORED: return "censored_sign";
  }
  return "t";
}

double expt_paired_sign_p(size_t up, size_t down) {
  size_t n = up + down, k = up < down ? up : down;
  if (n == 0) return 1.0;
  /* Doubling the smaller tail is the usual two-sided exact p, capped at 1 (k = n / 2). */
  double p = 2.0 * gsl_cdf_binomial_P((unsigned)k, 0.5, (unsigned)n);
  return p < 1.0 ? p : 1.0;
}

void expt_paired_mcnemar(const double *a, const double *b, size_t n, expt_paired_test *out) {
  *out = (expt_paired_test){.method = EXPT_PAIRED_MCNEMAR};
  for (size_t i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) continue;
    out->n_pairs++;
    bool x = a[i] != 0, y = b[i] != 0;
    if (x && !y)
      out->up++;
    else if (!x && y)
      out->down++;
    else
      out->ties++;
  }
  /* Only the discordant pairs carry evidence: under no difference each is either way at 1/2. */
  out->p_value = expt_paired_sign_p(out->up, out->down);
}

void expt_paired_censored(const double *a, const double *b, size_t n, expt_paired_test *out) {
  *out = (expt_paired_test){.method = EXPT_PAIRED_CENSORED};
  for (size_t i = 0; i < n; i++) {
    bool na = isnan(a[i]), nb = isnan(b[i]);
    if (na && nb) {
      out->both_censored++;
      continue;
    }
    out->n_pairs++;
    if (na != nb) out->one_censored++;
    /* A time that never came is longer than any that did: the pair is ordered all the same. */
    if (na || (!nb && a[i] > b[i]))
      out->up++;
    else if (nb || a[i] < b[i])
      out->down++;
    else
      out->ties++;
  }
  out->p_value = expt_paired_sign_p(out->up, out->down);
}

void expt_paired_numbers(const double *a, const double *b, size_t n, expt_paired_test *out) {
  *out = (expt_paired_test){.method = EXPT_PAIRED_T, .p_value = NAN};
  double mean = 0, m2 = 0, first = NAN;
  bool constant = true;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(a[i]) || !isfinite(b[i])) continue;
    double d = a[i] - b[i];
    if (out->n_pairs == 0) first = d;
    constant = constant && d == first;
    out->n_pairs++;
    out->up += d > 0;
    out->down += d < 0;
    out->ties += d == 0;
    /* Welford: one pass, no catastrophic cancellation. */
    double delta = d - mean;
    mean += delta / (double)out->n_pairs;
    m2 += delta * (d - mean);
  }
  if (out->n_pairs == 0) return;
  if (constant) {
    /* No spread: the t statistic is undefined, but n pairs all on one side is evidence the
     * sign test can weigh (and none at all when the difference is 0: p = 1). */
    out->method = EXPT_PAIRED_SIGN;
    out->p_value = expt_paired_sign_p(out->up, out->down);
    return;
  }
  if (out->n_pairs < 2) return;
  double se = sqrt(m2 / (double)(out->n_pairs - 1) / (double)out->n_pairs);
  double t = fabs(mean) / se;
  out->p_value = 2.0 * gsl_cdf_tdist_Q(t, (double)(out->n_pairs - 1));
  if (out->p_value > 1.0) out->p_value = 1.0;
}

static int by_p(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int expt_paired_holm(const double *p, size_t m, double alpha, bool *reject) {
  for (size_t i = 0; i < m; i++)
    reject[i] = false;
  /* Pairs (p, index) sorted by p; the index rides in a double, exact up to 2^53. */
  double *s = malloc((2 * m + 2) * sizeof *s);
  if (s == NULL) return -1;
  size_t k = 0;
  for (size_t i = 0; i < m; i++) {
    if (isnan(p[i])) continue;
    s[2 * k] = p[i];
    s[2 * k + 1] = (double)i;
    k++;
  }
  qsort(s, k, 2 * sizeof s[0], by_p);
  /* Step down: the j-th smallest (from 0) is rejected at alpha / (k - j), and the first that
   * is not stops the procedure. */
  for (size_t j = 0; j < k; j++) {
    if (!(s[2 * j] <= alpha / (double)(k - j))) break;
    reject[(size_t)s[2 * j + 1]] = true;
  }
  free(s);
  return 0;
}
