/*
 * model_dist.h: drawing durations from a model_dist with GSL, and arrival rates from a
 * model_rate_profile. Stateless: the generator is passed in.
 */
#ifndef MODEL_DIST_H
#define MODEL_DIST_H

#include <gsl/gsl_rng.h>

#include "models/model_config.h"

/* Draws one duration in ns from d using r (gsl_ran_* functions), rounded, clamped to
 * [0, INT64_MAX / 4]. A constant draws nothing from r. */
int64_t model_dist_sample(const model_dist *d, gsl_rng *r);
/* Returns the mean of d in ns (INFINITY for a Pareto with shape <= 1). */
double model_dist_mean_ns(const model_dist *d);
/* Returns the rate (per second) of p at t_ns, interpolating linearly between points. */
double model_profile_rate(const model_rate_profile *p, int64_t t_ns);
/* Returns the largest rate of p. */
double model_profile_max_rate(const model_rate_profile *p);

#endif /* MODEL_DIST_H */
