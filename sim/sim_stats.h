/*
 * sim_stats.h: the statistics of many runs, for replications and comparisons: the mean of a
 * metric over replications with its Student t interval, the paired difference of two
 * variants run on the same seeds, and intervals for a proportion (Wilson, Clopper-Pearson).
 * Stateless, allocates nothing; the quantiles come from GSL's cdf functions.
 */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* A mean with its two-sided confidence interval. */
typedef struct sim_stats_interval {
  size_t n;          /* values used (finite ones) */
  double mean;       /* NaN when n == 0 */
  double sd;         /* sample standard deviation (n - 1 in the denominator); NaN when n < 2 */
  double half_width; /* t(1 - (1 - level)/2, n - 1) * sd / sqrt(n); NaN when n < 2 */
  double lo, hi;     /* mean -+ half_width (NaN when n < 2) */
  double level;      /* the confidence level asked for, in (0, 1) */
} sim_stats_interval;

/* The mean of the finite values of x[0..n) (NaN and infinities are skipped: a replication
 * that has no value for a metric, such as a recovery time that never came, is not a number
 * to average) with the Student t interval at level (0.95 for 95 %). With no finite value the
 * mean is NaN; with one, the spread and the interval are NaN. level outside (0, 1) is a bug
 * (assert). */
void sim_stats_mean_interval(const double *x, size_t n, double level, sim_stats_interval *out);

/* The paired difference a[i] - b[i] over the pairs where both are finite, as
 * sim_stats_mean_interval of the differences. Pairing (both runs of a pair on the same seed)
 * removes the variation the two share, so its interval is narrower than the difference of two
 * independent means whenever the runs are positively correlated. */
void sim_stats_paired_interval(const double *a, const double *b, size_t n, double level,
                               sim_stats_interval *out);

/* Whether an interval excludes zero: the difference it bounds is distinguishable from none at
 * its level. False when the interval is NaN. */
bool sim_stats_excludes_zero(const sim_stats_interval *iv);

/* The Wilson score interval for k successes in n trials at level, in [0, 1]. n == 0 gives
 * [0, 1] (nothing is known). k > n is a bug (assert). */
void sim_stats_wilson(size_t k, size_t n, double level, double *lo, double *hi);

/* The Clopper-Pearson ("exact") interval for k successes in n trials at level, from the beta
 * quantiles: [0, hi] when k == 0 and [lo, 1] when k == n. n == 0 gives [0, 1]. Its coverage
 * is at least level for every true proportion, at the price of being wider than Wilson's. */
void sim_stats_clopper_pearson(size_t k, size_t n, double level, double *lo, double *hi);

#endif /* SIM_STATS_H */
