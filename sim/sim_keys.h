/*
 * sim_keys.h: drawing keys of a keyed workload (a look-aside cache's requests) from a
 * distribution over N ranked keys [0, N): uniform, or Zipf with exponent s > 0, where key 0 is
 * the most popular. A sim_keys is a small caller-owned value built once (sim_keys_init) and
 * then read only; drawing is stateless (the generator is passed in), costs O(1) expected time
 * and holds no table of N entries, so N may be 1e8 or more. The exact probabilities of a key
 * and of the C most popular keys come with it, so a test or a page can state the hit ratio a
 * cache of C entries implies.
 */
#ifndef SIM_KEYS_H
#define SIM_KEYS_H

#include <gsl/gsl_rng.h>

#include <stdint.h>

#include "retry/retry.h"

typedef enum sim_keys_kind {
  SIM_KEYS_UNIFORM = 0, /* every key has probability 1 / N */
  SIM_KEYS_ZIPF         /* key k has probability (k + 1)^-s / H(N, s) */
} sim_keys_kind;

/* The largest N accepted: 2^53, so that every rank is exact in a double (the Zipf sampler
 * works with ranks as doubles). */
#define SIM_KEYS_MAX_N (UINT64_C(1) << 53)
/* The largest Zipf exponent accepted. Past it every draw is key 0 to within a double anyway,
 * and x^-s underflows for the second key already. */
#define SIM_KEYS_MAX_S 1000.0

/* A key distribution. Build it with sim_keys_init; the fields below n and s are private. */
typedef struct sim_keys {
  sim_keys_kind kind; /* read-only */
  uint64_t n;         /* read-only: the number of keys, >= 1 */
  double s;           /* read-only: the Zipf exponent (0 for uniform) */
  /* private: constants of the Zipf sampler and of the probabilities */
  double h_lo;   /* H(1.5) - 1: the lowest value of the uniform driving a Zipf draw */
  double h_hi;   /* H(N + 0.5): its highest value */
  double h_norm; /* the generalised harmonic number H(N, s) = sum_{i=1..N} i^-s */
} sim_keys;

/* Fills *k with the distribution of kind over n keys with exponent s (read for SIM_KEYS_ZIPF
 * only: finite, 0 < s <= SIM_KEYS_MAX_S; s = 1 and s near 1 are fine). 1 <= n <=
 * SIM_KEYS_MAX_N. O(1) time (at most about a thousand powers for the normaliser). Returns 0,
 * or RETRY_EINVAL with the reason in err (path empty; err may be NULL), leaving *k zeroed. No
 * pointer is kept. */
int sim_keys_init(sim_keys *k, sim_keys_kind kind, uint64_t n, double s, retry_error *err);

/* Draws one key in [0, n) from r, which must yield 32 full bits a draw (taus2, every stream
 * of sim_rng.h, or mt19937; asserted), as sim_rng_next_u64 requires.
 * Uniform: one gsl_rng_uniform_int(r, n) when n <= 2^32 - 1 (the same draw as GSL's), else
 * 64-bit values (sim_rng_next_u64) with rejection of the incomplete last block.
 * Zipf: rejection-inversion (Hormann and Derflinger 1996). Each try draws one 53-bit uniform
 * (two 32-bit draws from r), inverts the integral of x^-s at it, and accepts the nearest rank
 * when the point falls under that rank's bar; the expected number of tries is
 * (H(N + 0.5) - H(1.5) + 1) / H(N, s), at most 1.017 over s in [0.01, 20] and N in [2, 1e8]
 * (a test measures it).
 * n = 1 returns key 0 and draws nothing. */
uint64_t sim_keys_draw(const sim_keys *k, gsl_rng *r);

/* Returns the exact probability that a draw is key (0 for key >= n): 1 / n, or
 * (key + 1)^-s / H(N, s), with H(N, s) to about 1e-13 relative (sim_keys_harmonic). */
double sim_keys_prob(const sim_keys *k, uint64_t key);

/* Returns the probability that a draw is one of the c most popular keys (keys 0 .. c - 1):
 * min(c, n) / n, or H(min(c, n), s) / H(N, s). This is the hit ratio of a cache that holds
 * exactly those keys: the stationary hit ratio of an LFU cache of c entries, and an upper
 * bound on LRU's (LRU approaches it as s grows; for uniform keys the two are equal). */
double sim_keys_top_mass(const sim_keys *k, uint64_t c);

/* Returns the generalised harmonic number H(n, s) = sum_{i=1..n} i^-s for n >= 1 (0 for n = 0)
 * and finite s >= 0. Exact summation (smallest terms first) up to n = 1024; beyond, the first
 * 1023 terms are summed and the rest is the Euler-Maclaurin formula with terms up to f'''
 * (remainder below 1e-16 of the sum). */
double sim_keys_harmonic(uint64_t n, double s);

#endif /* SIM_KEYS_H */
