/*
 * sim_dist.c: durations drawn from a sim_dist with GSL, and arrival rates read from a
 * piecewise-linear sim_rate_profile. Stateless and owns nothing: the generator comes in.
 * Invariant: a sample is a whole number of ns in [0, INT64_MAX / 4].
 */
#include "sim/sim_dist.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>

/* {==================================================================
 * Distributions
 * =================================================================== */

/* Samples stop at INT64_MAX / 4 so that a model may add a few of them (a hop, a service
 * time, a backoff) to a time without overflowing. */
#define SAMPLE_MAX_NS (INT64_MAX / 4)

/* Rounds a draw to whole ns, clamped to [0, SAMPLE_MAX_NS]. NaN (a bad parameter that got
 * past validation) becomes 0 rather than undefined behaviour in the conversion. The
 * bound is compared as a double: 2^61 - 1 converts to 2^61, and the largest double below that
 * is 2^61 - 256, which converts exactly. */
static int64_t to_ns(double x) {
  if (!(x > 0)) return 0; /* also NaN */
  if (x >= (double)SAMPLE_MAX_NS) return SAMPLE_MAX_NS;
  /* x is positive and below 2^61: adding one half and truncating rounds half away from zero
   * like llround, without its library call (2 % of a simulation's time). */
  return (int64_t)(x + 0.5);
}

int64_t sim_dist_sample(const sim_dist *d, gsl_rng *r) {
  assert(d != NULL);
  double x;
  switch (d->kind) {
    case SIM_DIST_CONSTANT: return to_ns(d->p1); /* draws nothing: other streams unmoved */
    case SIM_DIST_EXPONENTIAL: x = gsl_ran_exponential(r, d->p1); break;
    case SIM_DIST_LOGNORMAL: x = gsl_ran_lognormal(r, d->p1, d->p2); break;
    case SIM_DIST_GAMMA: x = gsl_ran_gamma(r, d->p1, d->p2); break;
    /* GSL's argument order is (a = scale, b = shape); ours is p1 = shape, p2 = scale. */
    case SIM_DIST_WEIBULL: x = gsl_ran_weibull(r, d->p2, d->p1); break;
    /* gsl_ran_pareto(a, b) has density a b^a / x^(a+1) for x >= b: a = shape, b = x_m. */
    case SIM_DIST_PARETO: x = gsl_ran_pareto(r, d->p1, d->p2); break;
    case SIM_DIST_UNIFORM: x = gsl_ran_flat(r, d->p1, d->p2); break;
    default: assert(0 && "unknown sim_dist_kind"); return 0;
  }
  return to_ns(x);
}

double sim_dist_mean_ns(const sim_dist *d) {
  assert(d != NULL);
  /* The means of the distributions themselves, before rounding and clamping. */
  switch (d->kind) {
    case SIM_DIST_CONSTANT: return d->p1;
    case SIM_DIST_EXPONENTIAL: return d->p1;
    case SIM_DIST_LOGNORMAL: return exp(d->p1 + d->p2 * d->p2 / 2);
    case SIM_DIST_GAMMA: return d->p1 * d->p2;
    case SIM_DIST_WEIBULL: {
      /* lambda * Gamma(1 + 1/k). Gamma overflows past GSL_SF_GAMMA_XMAX (171), where GSL
       * would call its error handler, which aborts unless switched off: check first. */
      if (!(d->p1 > 0)) return NAN;
      double x = 1 + 1 / d->p1;
      return x > GSL_SF_GAMMA_XMAX ? INFINITY : d->p2 * gsl_sf_gamma(x);
    }
    case SIM_DIST_PARETO: return d->p1 <= 1 ? INFINITY : d->p1 * d->p2 / (d->p1 - 1);
    case SIM_DIST_UNIFORM: return (d->p1 + d->p2) / 2;
    default: assert(0 && "unknown sim_dist_kind"); return NAN;
  }
}

/* }================================================================== */

/* {==================================================================
 * Rate profiles
 * =================================================================== */

double sim_profile_rate(const sim_rate_profile *p, int64_t t_ns) {
  assert(p != NULL && p->n_points >= 1 && p->n_points <= SIM_PROFILE_MAX_POINTS);
  int n = p->n_points;
  if (t_ns < p->t_ns[0]) return p->rate[0];
  /* i = the last point at or before t. Taking the last one is what makes a step work: of two
   * points at the same time, the later one's rate holds from that time on. A linear scan:
   * at most 32 points. */
  int i = 0;
  while (i + 1 < n && p->t_ns[i + 1] <= t_ns)
    i++;
  if (i == n - 1) return p->rate[n - 1];
  /* Here t_ns[i] <= t < t_ns[i + 1], so the segment has positive length. The differences are
   * taken in uint64, where they cannot overflow, and are exact below 2^53 ns (104 days). */
  double dt = (double)((uint64_t)t_ns - (uint64_t)p->t_ns[i]);
  double span = (double)((uint64_t)p->t_ns[i + 1] - (uint64_t)p->t_ns[i]);
  return p->rate[i] + (p->rate[i + 1] - p->rate[i]) * (dt / span);
}

double sim_profile_max_rate(const sim_rate_profile *p) {
  assert(p != NULL && p->n_points >= 1 && p->n_points <= SIM_PROFILE_MAX_POINTS);
  /* Linear pieces peak at their ends, so the largest point is the largest rate. */
  double m = p->rate[0];
  for (int i = 1; i < p->n_points; i++)
    if (p->rate[i] > m) m = p->rate[i];
  return m;
}

/* }================================================================== */
