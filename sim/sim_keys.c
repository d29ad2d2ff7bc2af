/*
 * sim_keys.c: the key distributions of sim_keys.h. Owns nothing but the few constants of each
 * distribution. Invariant: a Zipf draw is a rank r in [1, N] accepted with probability
 * exactly proportional to r^-s, and the key returned is r - 1.
 *
 * The Zipf sampler is rejection-inversion (W. Hormann and G. Derflinger, "Rejection-inversion
 * to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996), written
 * here from the mathematics. Rejected alternatives: a table of N cumulative weights (8 bytes a
 * key, 800 MB at N = 1e8, and O(log N) a draw); Gray's approximate formula used by YCSB (not
 * exact, and undefined at s = 1); GSL has no bounded Zipf.
 */
#include "sim/sim_keys.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "sim/sim_rng.h"

/* {==================================================================
 * The integral of x^-s and its inverse
 * =================================================================== */

/* Let h(x) = x^-s and H(x) = integral from 1 to x of h = (x^(1-s) - 1) / (1 - s), which is
 * ln x at s = 1. Written as ln x * expm1(t) / t with t = (1 - s) ln x, it is continuous in s
 * and accurate when s is 1 or within 1e-12 of it, where the quotient form loses every digit. */

/* expm1(t) / t, with its Taylor series near 0 (where the division would lose precision). */
static double expm1_over(double t) {
  if (fabs(t) > 1e-5) return expm1(t) / t;
  return 1 + t / 2 * (1 + t / 3 * (1 + t / 4));
}

/* log1p(t) / t, likewise. */
static double log1p_over(double t) {
  if (fabs(t) > 1e-5) return log1p(t) / t;
  return 1 - t * (0.5 - t * (1.0 / 3 - t * 0.25));
}

static double h_of(double x, double s) { return exp(-s * log(x)); }

static double big_h(double x, double s) {
  double lx = log(x);
  return lx * expm1_over((1 - s) * lx);
}

/* The inverse of H: from y = (x^(1-s) - 1) / (1 - s), ln x = log1p((1 - s) y) / (1 - s). For
 * s > 1, H is bounded above by 1 / (s - 1); a y rounded up to that bound gives t = -1 and
 * x = +inf, which the caller clamps to the last rank. */
static double big_h_inv(double y, double s) {
  double t = (1 - s) * y;
  if (t <= -1) return INFINITY;
  return exp(y * log1p_over(t));
}

/* }================================================================== */

/* {==================================================================
 * Building and probabilities
 * =================================================================== */

/* Up to this n the harmonic number is summed exactly; past it, the first EM_HEAD - 1 terms
 * are summed and Euler-Maclaurin gives the rest. */
#define EM_HEAD 1024

/* sum_{i=from..to} i^-s, smallest terms first (they are the last ones). */
static double sum_powers(uint64_t from, uint64_t to, double s) {
  double sum = 0;
  for (uint64_t i = to; i >= from && i > 0; i--)
    sum += h_of((double)i, s);
  return sum;
}

/* sum_{i=m..n} f(i) for f(x) = x^-s by Euler-Maclaurin: the integral from m to n, the mean of
 * the end values, and the Bernoulli terms B2/2! (f'(n) - f'(m)) + B4/4! (f'''(n) - f'''(m)),
 * with f'(x) = -s x^(-s-1) and f'''(x) = -s (s+1) (s+2) x^(-s-3). The next term is of order
 * s^5 m^(-s-5) / 30240, negligible for m = 1024. */
static double euler_maclaurin(double m, double n, double s) {
  double lr = log(n / m);
  double integral = exp((1 - s) * log(m)) * lr * expm1_over((1 - s) * lr);
  double fm = h_of(m, s), fn = h_of(n, s);
  double d1 = -s * (fn / n - fm / m);
  double d3 = -s * (s + 1) * (s + 2) * (fn / (n * n * n) - fm / (m * m * m));
  return integral + (fm + fn) / 2 + d1 / 12 - d3 / 720;
}

double sim_keys_harmonic(uint64_t n, double s) {
  assert(isfinite(s) && s >= 0);
  if (n <= EM_HEAD) return sum_powers(1, n, s);
  return euler_maclaurin((double)EM_HEAD, (double)n, s) + sum_powers(1, EM_HEAD - 1, s);
}

int sim_keys_init(sim_keys *k, sim_keys_kind kind, uint64_t n, double s, retry_error *err) {
  assert(k != NULL);
  memset(k, 0, sizeof *k);
  if (kind != SIM_KEYS_UNIFORM && kind != SIM_KEYS_ZIPF) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "unknown key distribution %d",
                    (int)kind);
    return RETRY_EINVAL;
  }
  if (n < 1 || n > SIM_KEYS_MAX_N) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "%llu keys: the number of keys must be between 1 and 2^53",
                    (unsigned long long)n);
    return RETRY_EINVAL;
  }
  if (kind == SIM_KEYS_ZIPF && !(isfinite(s) && s > 0 && s <= SIM_KEYS_MAX_S)) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "zipf exponent %g: it must be greater than 0 and at most %g", s,
                    SIM_KEYS_MAX_S);
    return RETRY_EINVAL;
  }
  k->kind = kind;
  k->n = n;
  if (kind == SIM_KEYS_UNIFORM) return 0;
  k->s = s;
  k->h_lo = big_h(1.5, s) - 1;
  k->h_hi = big_h((double)n + 0.5, s);
  k->h_norm = sim_keys_harmonic(n, s);
  return 0;
}

double sim_keys_prob(const sim_keys *k, uint64_t key) {
  assert(k != NULL && k->n >= 1);
  if (key >= k->n) return 0;
  if (k->kind == SIM_KEYS_UNIFORM) return 1.0 / (double)k->n;
  return h_of((double)key + 1, k->s) / k->h_norm;
}

double sim_keys_top_mass(const sim_keys *k, uint64_t c) {
  assert(k != NULL && k->n >= 1);
  if (c >= k->n) return 1;
  if (k->kind == SIM_KEYS_UNIFORM) return (double)c / (double)k->n;
  return sim_keys_harmonic(c, k->s) / k->h_norm;
}

/* }================================================================== */

/* {==================================================================
 * Drawing
 * =================================================================== */

/* A uniform double in [0, 1) with 53 random bits. 32 bits (gsl_rng_uniform) are too coarse
 * for a large N: at s = 1 and N = 1e8 the last ranks' slices of [h_lo, h_hi] are about 1e-8
 * wide, and 18.4 / 2^32 = 4e-9 would leave some of them hit by two or three grid points and
 * others by none. */
static double uniform53(gsl_rng *r) {
  return (double)(sim_rng_next_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t draw_uniform(uint64_t n, gsl_rng *r) {
  if (n <= 0xffffffffUL) return sim_rng_uniform_int(r, (unsigned long)n);
  /* Reject the last, incomplete block of 2^64 mod n values so every key is equally likely. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
  do
    x = sim_rng_next_u64(r);
  while (x >= limit);
  return x % n;
}

/* Rejection-inversion. The hat over rank r >= 2 is h on [r - 0.5, r + 0.5], whose area
 * H(r + 0.5) - H(r - 0.5) is at least h(r) because h is convex. Rank 1 gets the interval
 * [H(1.5) - 1, H(1.5)] of length exactly h(1) = 1, so it is always accepted. Laid end to end
 * the slices cover [h_lo, h_hi]. A uniform u on that range picks a slice by inversion
 * (x = H^-1(u), r = the rank nearest x); the draw is accepted when u lies in the last h(r) of
 * rank r's slice, u >= H(r + 0.5) - h(r). Each rank's chance of acceptance per try is then
 * h(r) / (h_hi - h_lo): exactly proportional to r^-s. */
static uint64_t draw_zipf(const sim_keys *k, gsl_rng *r) {
  double n = (double)k->n, s = k->s;
  for (;;) {
    double u = k->h_lo + uniform53(r) * (k->h_hi - k->h_lo);
    double x = big_h_inv(u, s);
    /* x + 0.5 rounds to the nearest rank; rounding in H^-1 may step just outside [0.5,
     * N + 0.5], so clamp (this also takes x = +inf to rank N). */
    double rank = floor(x + 0.5);
    if (!(rank >= 1)) rank = 1;
    if (!(rank <= n)) rank = n;
    if (rank == 1 || u >= big_h(rank + 0.5, s) - h_of(rank, s)) return (uint64_t)rank - 1;
  }
}

uint64_t sim_keys_draw(const sim_keys *k, gsl_rng *r) {
  assert(k != NULL && r != NULL && k->n >= 1);
  assert(gsl_rng_min(r) == 0 && gsl_rng_max(r) == 0xffffffffUL);
  if (k->n == 1) return 0;
  if (k->kind == SIM_KEYS_UNIFORM) return draw_uniform(k->n, r);
  return draw_zipf(k, r);
}

/* }================================================================== */
