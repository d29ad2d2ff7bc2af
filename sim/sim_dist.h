/*
 * sim_dist.h: drawing durations from a sim_dist with GSL, and arrival rates from a
 * sim_rate_profile. Stateless: the generator is passed in.
 */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include <gsl/gsl_rng.h>

#include <stdint.h>

/* {==================================================================
 * Distributions and rate profiles
 * =================================================================== */

typedef enum sim_dist_kind {
  SIM_DIST_CONSTANT = 0, /* p1 = value (ns) */
  SIM_DIST_EXPONENTIAL,  /* p1 = mean (ns) */
  SIM_DIST_LOGNORMAL,    /* p1 = mu of ln(ns), p2 = sigma > 0 */
  SIM_DIST_GAMMA,        /* p1 = shape k > 0, p2 = scale theta (ns) */
  SIM_DIST_WEIBULL,      /* p1 = shape k > 0, p2 = scale lambda (ns) */
  SIM_DIST_PARETO,       /* p1 = shape a > 0, p2 = scale x_m (ns, the minimum) */
  SIM_DIST_UNIFORM       /* p1 = min (ns), p2 = max (ns) */
} sim_dist_kind;

/* A distribution of durations. Samples are rounded to whole ns and clamped to >= 0. */
typedef struct sim_dist {
  sim_dist_kind kind;
  double p1, p2; /* parameters, meaning per kind above */
} sim_dist;

/* Piecewise-linear arrival rate over time: before the first point the first rate holds, after
 * the last point the last rate. A step is two points at the same time. */
#define SIM_PROFILE_MAX_POINTS 32
typedef struct sim_rate_profile {
  int n_points;                         /* >= 1 */
  int64_t t_ns[SIM_PROFILE_MAX_POINTS]; /* non-decreasing */
  double rate[SIM_PROFILE_MAX_POINTS];  /* calls per second, >= 0 */
} sim_rate_profile;

/* }================================================================== */

/* Draws one duration in ns from d using r (gsl_ran_* functions), rounded, clamped to
 * [0, INT64_MAX / 4]. A constant draws nothing from r. */
int64_t sim_dist_sample(const sim_dist *d, gsl_rng *r);
/* Returns the mean of d in ns (INFINITY for a Pareto with shape <= 1). */
double sim_dist_mean_ns(const sim_dist *d);
/* Returns the rate (per second) of p at t_ns, interpolating linearly between points. */
double sim_profile_rate(const sim_rate_profile *p, int64_t t_ns);
/* Returns the largest rate of p. */
double sim_profile_max_rate(const sim_rate_profile *p);

#endif /* SIM_DIST_H */
