/*
 * sim_dist.h: drawing durations from a sim_dist with GSL, and arrival rates from a
 * sim_rate_profile. Drawing is stateless: the generator is passed in. Mixtures and empirical
 * distributions are built once (sim_mixture_create, sim_empirical_create_*) and then read only;
 * a sim_dist of those kinds borrows them.
 */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include <gsl/gsl_rng.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "retry/retry.h"
#include "sim/sim_rng.h"

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
  SIM_DIST_UNIFORM,      /* p1 = min (ns), p2 = max (ns) */
  SIM_DIST_MIXTURE,      /* table = a sim_mixture; p1, p2 unused */
  SIM_DIST_EMPIRICAL     /* table = a sim_empirical; p1, p2 unused */
} sim_dist_kind;

typedef struct sim_mixture sim_mixture;
typedef struct sim_empirical sim_empirical;

/* A distribution of durations. Samples are rounded to whole ns and clamped to >= 0. Build one
 * with a designated initializer ({.kind = ..., .p1 = ...}) so that table starts NULL. */
typedef struct sim_dist {
  sim_dist_kind kind;
  double p1, p2;     /* parameters, meaning per kind above */
  const void *table; /* SIM_DIST_MIXTURE: a sim_mixture, SIM_DIST_EMPIRICAL: a sim_empirical;
                      * borrowed, not copied: it must outlive every copy of the sim_dist.
                      * NULL for the other kinds. */
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
 * [0, INT64_MAX / 4]. A constant draws nothing from r; a mixture draws one uniform to pick its
 * part, then what the part draws; an empirical distribution draws one value from r. */
int64_t sim__dist_sample(const sim_dist *d, gsl_rng *r);
/* Rounds a draw to whole ns, clamped to [0, INT64_MAX / 4]. NaN (a bad parameter that got
 * past validation) becomes 0 rather than undefined behaviour in the conversion. The bound is
 * compared as a double: 2^61 - 1 converts to 2^61, and the largest double below that is
 * 2^61 - 256, which converts exactly. Positive and below 2^61, adding one half and truncating
 * rounds half away from zero like llround, without its library call. */
static inline int64_t sim__dist_to_ns(double x) {
  if (!(x > 0)) return 0; /* also NaN */
  if (x >= (double)(INT64_MAX / 4)) return INT64_MAX / 4;
  return (int64_t)(x + 0.5);
}
/* Inline for the commonest kinds, the exponential and the constant (a service time, a network
 * hop: one or two draws a request); the others through sim__dist_sample. */
static inline int64_t sim_dist_sample(const sim_dist *d, gsl_rng *r) {
  if (d->kind == SIM_DIST_EXPONENTIAL) return sim__dist_to_ns(sim_rng_exponential(r, d->p1));
  if (d->kind == SIM_DIST_CONSTANT) return sim__dist_to_ns(d->p1); /* draws nothing */
  return sim__dist_sample(d, r);
}
/* Returns the mean of d in ns (INFINITY for a Pareto with shape <= 1, and for a mixture with
 * such a part). */
double sim_dist_mean_ns(const sim_dist *d);
/* Returns 0 when d can be drawn from, else RETRY_EINVAL with the reason in err (path empty;
 * err may be NULL): a known kind, finite parameters in each kind's domain (constant >= 0,
 * exponential mean > 0, lognormal sigma > 0, gamma, Weibull and Pareto shape and scale > 0,
 * uniform 0 <= min <= max), and a non-NULL table for a mixture or an empirical one. */
int sim_dist_check(const sim_dist *d, retry_error *err);

/* }================================================================== */

/* {==================================================================
 * Mixtures
 * =================================================================== */

/* How deep mixtures may nest (a mixture of plain distributions has depth 1). */
#define SIM_MIXTURE_MAX_DEPTH 8

/* Builds the mixture that draws from parts[i] with probability weights[i] / sum(weights).
 * n_parts >= 1; each weight finite and >= 0, their sum > 0; each part passes sim_dist_check
 * and may itself be a mixture (borrowed: it must outlive this one) up to
 * SIM_MIXTURE_MAX_DEPTH. weights and parts are copied. alloc may be NULL (libc). NULL on bad
 * input (RETRY_EINVAL: the message names the part, "part 2: weight -1 ...") or no memory
 * (RETRY_ENOMEM), details in err. Returns a new mixture; free with sim_mixture_destroy. */
sim_mixture *sim_mixture_create(size_t n_parts, const double *weights, const sim_dist *parts,
                                const retry_allocator *alloc, retry_error *err);
/* Frees m; NULL is a no-op. Every sim_dist that borrows m is invalid afterwards. */
void sim_mixture_destroy(sim_mixture *m);
/* Returns a sim_dist of kind SIM_DIST_MIXTURE that borrows m (valid until sim_mixture_destroy). */
sim_dist sim_dist_of_mixture(const sim_mixture *m);
/* Returns how many parts m has, and how deep it nests (1 for plain parts). */
size_t sim_mixture_n_parts(const sim_mixture *m);
int sim_mixture_depth(const sim_mixture *m);

/* }================================================================== */

/* {==================================================================
 * Empirical distributions
 * =================================================================== */

/* Builds the empirical distribution of n samples (ns, each finite and >= 0; 1 <= n <=
 * SIM_EMPIRICAL_MAX_SAMPLES): each draw is one of the samples, chosen uniformly
 * (gsl_rng_uniform_int), so the draws follow the samples' empirical CDF exactly and never
 * take a value that was not measured. samples_ns is copied. alloc may be NULL. NULL on bad
 * input (RETRY_EINVAL: "sample 3: -1 ...") or no memory (RETRY_ENOMEM), details in err.
 * Returns a new distribution; free with sim_empirical_destroy. */
#define SIM_EMPIRICAL_MAX_SAMPLES (UINT32_C(1) << 31)
sim_empirical *sim_empirical_create_samples(const double *samples_ns, size_t n,
                                            const retry_allocator *alloc, retry_error *err);
/* Builds the distribution of a histogram of n_bins bins: bin i covers [edges_ns[i],
 * edges_ns[i + 1]) and holds counts[i]. Each draw picks bin i with probability counts[i] /
 * sum(counts), then a point uniformly inside it (gsl_histogram_pdf_sample). n_bins >= 1;
 * edges_ns (n_bins + 1 of them) finite, >= 0 and strictly increasing; counts finite, >= 0,
 * sum > 0 (a bin of count 0 is never drawn). Both arrays are copied. alloc may be NULL. NULL
 * on bad input (RETRY_EINVAL) or no memory (RETRY_ENOMEM), details in err. Returns a new
 * distribution; free with sim_empirical_destroy. */
sim_empirical *sim_empirical_create_histogram(const double *edges_ns, const double *counts,
                                              size_t n_bins, const retry_allocator *alloc,
                                              retry_error *err);
/* Frees e; NULL is a no-op. Every sim_dist that borrows e is invalid afterwards. */
void sim_empirical_destroy(sim_empirical *e);
/* Returns a sim_dist of kind SIM_DIST_EMPIRICAL that borrows e (valid until
 * sim_empirical_destroy). */
sim_dist sim_dist_of_empirical(const sim_empirical *e);
/* Returns whether e was built from a histogram (else from samples), and how many samples or
 * bins it holds. */
bool sim_empirical_is_histogram(const sim_empirical *e);
size_t sim_empirical_size(const sim_empirical *e);

/* Reads an empirical distribution from the CSV file at path (format: docs/simulator.md,
 * "Empirical distributions from a file"): a header naming the columns with their unit, then
 * one sample per line ("latency_ms") or one bin per line ("lower_ms,upper_ms,count"). alloc
 * may be NULL. NULL on a file that cannot be read (RETRY_EIO), bad content (RETRY_EINVAL, with
 * err->source = path and err->line the 1-based line) or no memory (RETRY_ENOMEM). Returns a
 * new distribution; free with sim_empirical_destroy. */
sim_empirical *sim_empirical_load_csv(const char *path, const retry_allocator *alloc,
                                      retry_error *err);
/* The same from a stream already open for reading (a file, or bytes the caller hashed and
 * opened with fmemopen); path only names it in errors. f is read to its end and left open.
 * Returns a new distribution; free with sim_empirical_destroy. */
sim_empirical *sim_empirical_read_csv(FILE *f, const char *path, const retry_allocator *alloc,
                                      retry_error *err);
/* Returns the rate (per second) of p at t_ns, interpolating linearly between points. */
double sim_profile_rate(const sim_rate_profile *p, int64_t t_ns);
/* Returns the largest rate of p. */
double sim_profile_max_rate(const sim_rate_profile *p);

#endif /* SIM_DIST_H */
