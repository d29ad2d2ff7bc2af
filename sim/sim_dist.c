/*
 * sim_dist.c: durations drawn from a sim_dist with GSL, mixtures and empirical distributions
 * (built once, read only afterwards), and arrival rates read from a piecewise-linear
 * sim_rate_profile. Drawing owns nothing: the generator comes in. Invariants: a sample is a
 * whole number of ns in [0, INT64_MAX / 4]; a mixture's and a histogram's cumulative weights
 * are non-decreasing and end at exactly 1.
 */
#include "sim/sim_dist.h"
#include "sim/sim_rng.h"

#include <assert.h>
#include <gsl/gsl_histogram.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <string.h>

/* {==================================================================
 * Distributions
 * =================================================================== */

/* Samples stop at INT64_MAX / 4 so that a model may add a few of them (a hop, a service
 * time, a backoff) to a time without overflowing. */
#define SAMPLE_MAX_NS (INT64_MAX / 4)

static int64_t to_ns(double x) { return sim__dist_to_ns(x); }

/* Defined with their types below. */
static int64_t mixture_sample(const sim_mixture *m, gsl_rng *r);
static double mixture_mean(const sim_mixture *m);
static double empirical_sample(const sim_empirical *e, gsl_rng *r);
static double empirical_mean(const sim_empirical *e);

int64_t sim__dist_sample(const sim_dist *d, gsl_rng *r) {
  assert(d != NULL);
  double x;
  switch (d->kind) {
    case SIM_DIST_CONSTANT:
      return to_ns(d->p1); /* draws nothing: other streams unmoved */
    /* gsl_ran_exponential's draw, inline and through log rather than log1p (sim_rng.h). */
    case SIM_DIST_EXPONENTIAL: x = sim_rng_exponential(r, d->p1); break;
    case SIM_DIST_LOGNORMAL: x = gsl_ran_lognormal(r, d->p1, d->p2); break;
    case SIM_DIST_GAMMA: x = gsl_ran_gamma(r, d->p1, d->p2); break;
    /* GSL's argument order is (a = scale, b = shape); ours is p1 = shape, p2 = scale. */
    case SIM_DIST_WEIBULL: x = gsl_ran_weibull(r, d->p2, d->p1); break;
    /* gsl_ran_pareto(a, b) has density a b^a / x^(a+1) for x >= b: a = shape, b = x_m. */
    case SIM_DIST_PARETO: x = gsl_ran_pareto(r, d->p1, d->p2); break;
    case SIM_DIST_UNIFORM: x = gsl_ran_flat(r, d->p1, d->p2); break;
    case SIM_DIST_MIXTURE: return mixture_sample(d->table, r);
    case SIM_DIST_EMPIRICAL: x = empirical_sample(d->table, r); break;
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
    case SIM_DIST_MIXTURE: return mixture_mean(d->table);
    case SIM_DIST_EMPIRICAL: return empirical_mean(d->table);
    default: assert(0 && "unknown sim_dist_kind"); return NAN;
  }
}

/* }================================================================== */

/* {==================================================================
 * Checking a distribution
 * =================================================================== */

static bool finite_nonneg(double x) { return x >= 0 && isfinite(x); }
static bool finite_pos(double x) { return x > 0 && isfinite(x); }

int sim_dist_check(const sim_dist *d, retry_error *err) {
  assert(d != NULL);
  const char *why = NULL;
  switch (d->kind) {
    case SIM_DIST_CONSTANT:
      if (!finite_nonneg(d->p1)) why = "a constant needs a finite value >= 0";
      break;
    case SIM_DIST_EXPONENTIAL:
      if (!finite_pos(d->p1)) why = "an exponential needs a finite mean > 0";
      break;
    case SIM_DIST_LOGNORMAL:
      if (!isfinite(d->p1) || !finite_pos(d->p2))
        why = "a lognormal needs a finite mu and a finite sigma > 0";
      break;
    case SIM_DIST_GAMMA:
    case SIM_DIST_WEIBULL:
    case SIM_DIST_PARETO:
      if (!finite_pos(d->p1) || !finite_pos(d->p2))
        why = "a gamma, Weibull or Pareto needs a finite shape > 0 and a finite scale > 0";
      break;
    case SIM_DIST_UNIFORM:
      if (!finite_nonneg(d->p1) || !finite_nonneg(d->p2) || d->p2 < d->p1)
        why = "a uniform needs finite bounds with 0 <= min <= max";
      break;
    case SIM_DIST_MIXTURE:
    case SIM_DIST_EMPIRICAL:
      if (d->table == NULL) why = "a mixture or an empirical distribution needs its table";
      break;
    default: why = "unknown distribution kind"; break;
  }
  if (why == NULL) return RETRY_OK;
  retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "%s", why);
  return RETRY_EINVAL;
}

/* }================================================================== */

/* {==================================================================
 * Mixtures
 * =================================================================== */

/* One block holds the struct and its two arrays, so a mixture is one allocation and one
 * free. cum[i] is the share of parts 0..i, non-decreasing, and cum[n - 1] is exactly 1: a
 * uniform u in [0, 1) always finds a part, and a part of weight 0 is never picked (its cum
 * equals the previous one, so the first cum above u is never its own). */
struct sim_mixture {
  retry_allocator alloc; /* the one it was made with, to free it */
  size_t n;              /* parts, >= 1 */
  int depth;             /* 1 + the deepest part that is a mixture */
  double *cum;           /* n cumulative shares */
  sim_dist *parts;       /* n parts, copied */
};

/* a * b + c bytes without overflow; 0 on overflow. */
static size_t block_size(size_t a, size_t b, size_t c) {
  if (b != 0 && a > (SIZE_MAX - c) / b) return 0;
  return a * b + c;
}

sim_mixture *sim_mixture_create(size_t n_parts, const double *weights, const sim_dist *parts,
                                const retry_allocator *alloc, retry_error *err) {
  if (n_parts == 0 || weights == NULL || parts == NULL) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "a mixture needs at least one part with its weight");
    return NULL;
  }
  double total = 0;
  int depth = 1;
  for (size_t i = 0; i < n_parts; i++) {
    if (!finite_nonneg(weights[i])) {
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                      "part %zu: weight %g; a weight is a finite number >= 0", i + 1, weights[i]);
      return NULL;
    }
    retry_error part_err;
    retry_error_clear(&part_err);
    if (sim_dist_check(&parts[i], &part_err) != RETRY_OK) {
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "part %zu: %s", i + 1,
                      part_err.message);
      return NULL;
    }
    if (parts[i].kind == SIM_DIST_MIXTURE) {
      int d = sim_mixture_depth(parts[i].table) + 1;
      if (d > depth) depth = d;
    }
    total += weights[i];
  }
  if (depth > SIM_MIXTURE_MAX_DEPTH) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "mixtures nest %d deep; at most %d levels are allowed", depth,
                    SIM_MIXTURE_MAX_DEPTH);
    return NULL;
  }
  if (!(total > 0) || !isfinite(total)) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "the weights sum to %g; their sum must be finite and > 0", total);
    return NULL;
  }
  size_t bytes = block_size(n_parts, sizeof(double) + sizeof(sim_dist), sizeof(sim_mixture));
  retry_allocator a;
  retry_allocator_resolve(alloc, &a);
  sim_mixture *m = bytes == 0 ? NULL : a.malloc_fn(bytes, a.ctx);
  if (m == NULL) {
    retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1,
                    "out of memory for a mixture of %zu parts", n_parts);
    return NULL;
  }
  m->alloc = a;
  m->n = n_parts;
  m->depth = depth;
  /* sim_dist holds doubles and a pointer, so an array of them right after the struct is
   * aligned; the doubles follow the parts. */
  m->parts = (sim_dist *)(m + 1);
  m->cum = (double *)(m->parts + n_parts);
  memcpy(m->parts, parts, n_parts * sizeof *parts);
  double run = 0;
  for (size_t i = 0; i < n_parts; i++) {
    run += weights[i];
    m->cum[i] = run / total;
  }
  /* Rounding may leave the last share a hair off 1; it is 1 by definition. The parts of
   * weight 0 at the end share that 1 and are still never picked (the first cum above u wins). */
  for (size_t i = n_parts; i-- > 0 && m->cum[i] >= m->cum[n_parts - 1];)
    m->cum[i] = 1.0;
  return m;
}

void sim_mixture_destroy(sim_mixture *m) {
  if (m == NULL) return;
  m->alloc.free_fn(m, m->alloc.ctx);
}

sim_dist sim_dist_of_mixture(const sim_mixture *m) {
  assert(m != NULL);
  return (sim_dist){.kind = SIM_DIST_MIXTURE, .table = m};
}

size_t sim_mixture_n_parts(const sim_mixture *m) {
  assert(m != NULL);
  return m->n;
}

int sim_mixture_depth(const sim_mixture *m) {
  assert(m != NULL);
  return m->depth;
}

/* The first part whose cumulative share is above u, by bisection. */
static size_t pick_part(const sim_mixture *m, double u) {
  size_t lo = 0, hi = m->n - 1; /* the answer is in [lo, hi]: cum[n - 1] = 1 > u */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (u < m->cum[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static int64_t mixture_sample(const sim_mixture *m, gsl_rng *r) {
  assert(m != NULL);
  /* One uniform picks the part, always, even with one part: how many numbers a draw takes
   * from r depends only on which part is picked, never on earlier draws. */
  return sim_dist_sample(&m->parts[pick_part(m, sim_rng_uniform(r))], r);
}

static double mixture_mean(const sim_mixture *m) {
  assert(m != NULL);
  double mean = 0, prev = 0;
  for (size_t i = 0; i < m->n; i++) {
    double share = m->cum[i] - prev;
    prev = m->cum[i];
    /* A part of weight 0 adds nothing, even one with an infinite mean (0 x inf is NaN). */
    if (share > 0) mean += share * sim_dist_mean_ns(&m->parts[i]);
  }
  return mean;
}

/* }================================================================== */

/* {==================================================================
 * Empirical distributions
 * =================================================================== */

/* From samples: values holds the n samples and cum is NULL; a draw is
 * values[gsl_rng_uniform_int(r, n)]. From a histogram: values holds the n + 1 edges and cum
 * the n + 1 cumulative shares (cum[0] = 0, cum[n] = 1), which is exactly GSL's
 * gsl_histogram_pdf (range, sum), so the draw is gsl_histogram_pdf_sample on our own memory
 * (no gsl_histogram_pdf_alloc, which would malloc behind the caller's allocator). */
struct sim_empirical {
  retry_allocator alloc; /* the one it was made with, to free it */
  bool histogram;        /* built from a histogram (else from samples) */
  size_t n;              /* samples, or bins */
  double mean_ns;        /* the mean of the distribution */
  double *values;        /* n samples, or n + 1 edges */
  double *cum;           /* histogram: n + 1 cumulative shares; NULL otherwise */
};

static sim_empirical *empirical_alloc(const retry_allocator *alloc, size_t n_doubles,
                                      retry_error *err) {
  size_t bytes = block_size(n_doubles, sizeof(double), sizeof(sim_empirical));
  retry_allocator a;
  retry_allocator_resolve(alloc, &a);
  sim_empirical *e = bytes == 0 ? NULL : a.malloc_fn(bytes, a.ctx);
  if (e == NULL) {
    retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1,
                    "out of memory for an empirical distribution of %zu values", n_doubles);
    return NULL;
  }
  memset(e, 0, sizeof *e);
  e->alloc = a;
  e->values = (double *)(e + 1);
  return e;
}

sim_empirical *sim_empirical_create_samples(const double *samples_ns, size_t n,
                                            const retry_allocator *alloc, retry_error *err) {
  if (n == 0 || samples_ns == NULL) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "an empirical distribution needs at least one sample");
    return NULL;
  }
  if (n > SIM_EMPIRICAL_MAX_SAMPLES) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "%zu samples; at most %lu are allowed",
                    n, (unsigned long)SIM_EMPIRICAL_MAX_SAMPLES);
    return NULL;
  }
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (!finite_nonneg(samples_ns[i])) {
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                      "sample %zu: %g; a sample is a finite duration >= 0", i + 1, samples_ns[i]);
      return NULL;
    }
    sum += samples_ns[i];
  }
  sim_empirical *e = empirical_alloc(alloc, n, err);
  if (e == NULL) return NULL;
  e->n = n;
  memcpy(e->values, samples_ns, n * sizeof *samples_ns);
  e->mean_ns = sum / (double)n;
  return e;
}

sim_empirical *sim_empirical_create_histogram(const double *edges_ns, const double *counts,
                                              size_t n_bins, const retry_allocator *alloc,
                                              retry_error *err) {
  if (n_bins == 0 || edges_ns == NULL || counts == NULL) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "a histogram needs at least one bin");
    return NULL;
  }
  if (n_bins >= SIZE_MAX / 2) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "%zu bins is too many", n_bins);
    return NULL;
  }
  double total = 0;
  for (size_t i = 0; i <= n_bins; i++) {
    if (!finite_nonneg(edges_ns[i])) {
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                      "edge %zu: %g; an edge is a finite duration >= 0", i + 1, edges_ns[i]);
      return NULL;
    }
    if (i > 0 && !(edges_ns[i] > edges_ns[i - 1])) {
      retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                      "bin %zu: upper edge %g is not above its lower edge %g; edges must "
                      "increase strictly",
                      i, edges_ns[i], edges_ns[i - 1]);
      return NULL;
    }
    if (i < n_bins) {
      if (!finite_nonneg(counts[i])) {
        retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                        "bin %zu: count %g; a count is a finite number >= 0", i + 1, counts[i]);
        return NULL;
      }
      total += counts[i];
    }
  }
  if (!(total > 0) || !isfinite(total)) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "the counts sum to %g; their sum must be finite and > 0", total);
    return NULL;
  }
  sim_empirical *e = empirical_alloc(alloc, 2 * (n_bins + 1), err);
  if (e == NULL) return NULL;
  e->histogram = true;
  e->n = n_bins;
  e->cum = e->values + n_bins + 1;
  memcpy(e->values, edges_ns, (n_bins + 1) * sizeof *edges_ns);
  double run = 0, mean = 0;
  e->cum[0] = 0;
  for (size_t i = 0; i < n_bins; i++) {
    run += counts[i];
    e->cum[i + 1] = run / total;
    /* Uniform inside its bin: each bin contributes its share times its midpoint. */
    mean += counts[i] / total * (edges_ns[i] + edges_ns[i + 1]) / 2;
  }
  /* As for mixtures: the last share is 1 by definition, and so are the trailing empty bins'. */
  for (size_t i = n_bins + 1; i-- > 1 && e->cum[i] >= e->cum[n_bins];)
    e->cum[i] = 1.0;
  e->mean_ns = mean;
  return e;
}

void sim_empirical_destroy(sim_empirical *e) {
  if (e == NULL) return;
  e->alloc.free_fn(e, e->alloc.ctx);
}

sim_dist sim_dist_of_empirical(const sim_empirical *e) {
  assert(e != NULL);
  return (sim_dist){.kind = SIM_DIST_EMPIRICAL, .table = e};
}

bool sim_empirical_is_histogram(const sim_empirical *e) {
  assert(e != NULL);
  return e->histogram;
}

size_t sim_empirical_size(const sim_empirical *e) {
  assert(e != NULL);
  return e->n;
}

static double empirical_sample(const sim_empirical *e, gsl_rng *r) {
  assert(e != NULL);
  if (!e->histogram) {
    /* gsl_rng_uniform_int needs n <= the generator's range; taus2's is 2^32 - 1, and
     * create caps n at 2^31. One sample still draws (the stream moves the same way). */
    return e->values[sim_rng_uniform_int(r, (unsigned long)e->n)];
  }
  gsl_histogram_pdf pdf = {e->n, e->values, e->cum};
  /* u is in [0, 1) and cum runs from 0 to exactly 1, so GSL always finds the bin and never
   * calls its error handler. */
  return gsl_histogram_pdf_sample(&pdf, gsl_rng_uniform(r));
}

static double empirical_mean(const sim_empirical *e) {
  assert(e != NULL);
  return e->mean_ns;
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
