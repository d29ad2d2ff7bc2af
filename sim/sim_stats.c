/*
 * sim_stats.c: means and intervals over replications. Two passes over the values (mean,
 * then squared deviations) rather than one running sum of squares, which loses digits when
 * the mean is large against the spread (a goodput of 1e4 varying by 1).
 */
#include "sim/sim_stats.h"

#include <assert.h>
#include <gsl/gsl_cdf.h>
#include <math.h>

/* Value i: a[i], or a[i] - b[i] when b is given; NaN when an operand is not finite. */
static double value_at(const double *a, const double *b, size_t i) {
  if (b == NULL) return isfinite(a[i]) ? a[i] : NAN;
  return isfinite(a[i]) && isfinite(b[i]) ? a[i] - b[i] : NAN;
}

/* The mean and t interval of the finite values value_at(a, b, i). The differences are
 * computed on the fly rather than stored, so that no buffer is needed and nothing can fail. */
static void interval(const double *a, const double *b, size_t n, double level,
                     sim_stats_interval *out) {
  assert(out != NULL && (a != NULL || n == 0));
  assert(level > 0 && level < 1);
  *out = (sim_stats_interval){
      .n = 0, .mean = NAN, .sd = NAN, .half_width = NAN, .lo = NAN, .hi = NAN, .level = level};
  double sum = 0;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    double v = value_at(a, b, i);
    if (isnan(v)) continue;
    sum += v;
    m++;
  }
  out->n = m;
  if (m == 0) return;
  double mean = sum / (double)m;
  out->mean = mean;
  if (m < 2) return;
  double ss = 0;
  for (size_t i = 0; i < n; i++) {
    double v = value_at(a, b, i);
    if (!isnan(v)) ss += (v - mean) * (v - mean);
  }
  double sd = sqrt(ss / (double)(m - 1));
  double t = gsl_cdf_tdist_Pinv(1 - (1 - level) / 2, (double)(m - 1));
  out->sd = sd;
  out->half_width = t * sd / sqrt((double)m);
  out->lo = mean - out->half_width;
  out->hi = mean + out->half_width;
}

void sim_stats_mean_interval(const double *x, size_t n, double level, sim_stats_interval *out) {
  interval(x, NULL, n, level, out);
}

void sim_stats_paired_interval(const double *a, const double *b, size_t n, double level,
                               sim_stats_interval *out) {
  assert(b != NULL || n == 0);
  interval(a, n == 0 ? NULL : b, n, level, out);
}

bool sim_stats_excludes_zero(const sim_stats_interval *iv) {
  assert(iv != NULL);
  return iv->lo > 0 || iv->hi < 0; /* false for NaN */
}

void sim_stats_wilson(size_t k, size_t n, double level, double *lo, double *hi) {
  assert(lo != NULL && hi != NULL && k <= n);
  assert(level > 0 && level < 1);
  if (n == 0) {
    *lo = 0;
    *hi = 1;
    return;
  }
  double z = gsl_cdf_ugaussian_Pinv(1 - (1 - level) / 2);
  double nn = (double)n, p = (double)k / nn, z2 = z * z;
  double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  double half = z / (1 + z2 / nn) * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  *lo = k == 0 ? 0 : fmax(0, centre - half);
  *hi = k == n ? 1 : fmin(1, centre + half);
}

void sim_stats_clopper_pearson(size_t k, size_t n, double level, double *lo, double *hi) {
  assert(lo != NULL && hi != NULL && k <= n);
  assert(level > 0 && level < 1);
  if (n == 0) {
    *lo = 0;
    *hi = 1;
    return;
  }
  double alpha = 1 - level, kk = (double)k, nn = (double)n;
  *lo = k == 0 ? 0 : gsl_cdf_beta_Pinv(alpha / 2, kk, nn - kk + 1);
  *hi = k == n ? 1 : gsl_cdf_beta_Pinv(1 - alpha / 2, kk + 1, nn - kk);
}
