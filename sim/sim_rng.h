/*
 * sim_rng.h: independent random streams, one per (entity, purpose), derived from the scenario
 * seed. A stream's seed depends only on (scenario seed, entity name, purpose), never on how
 * many other entities exist, so adding a client leaves the other clients' draws unchanged and
 * variants of one scenario see the same arrivals and service times (common random numbers).
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "retry/retry.h"

/* Returns the 64-bit seed of the stream for (seed, entity, purpose, index): a hash of all four
 * (splitmix64 finalizer over FNV-1a of the strings). entity is a name such as "client:web",
 * purpose one such as "arrivals" (neither may be NULL); index tells members of a population
 * apart. With the rest fixed, distinct seeds or indices always give distinct results, distinct
 * names almost surely (a 64-bit hash). */
uint64_t sim_rng_derive(uint64_t seed, const char *entity, const char *purpose, uint64_t index);

/* Returns a new GSL generator (gsl_rng_taus2: small state, fast, maximally equidistributed)
 * seeded from sim_rng_derive(seed, entity, purpose, index). taus2 uses only the low 32 bits of
 * a seed, so there are 2^32 distinct streams: two of N streams coincide with probability about
 * N^2 / 2^33. NULL when out of memory (with GSL's error handler off; the default one aborts).
 * Unlike the kernel's constructors this one takes no retry_allocator: gsl_rng_alloc calls
 * malloc itself and GSL offers no way to pass it another allocator, so out-of-memory here can
 * only be met, not injected. Returns a new object; free with gsl_rng_free. */
gsl_rng *sim_rng_stream_create(uint64_t seed, const char *entity, const char *purpose,
                               uint64_t index);

/* A stream held in the caller's memory: a gsl_rng of type taus2 whose state is the struct's
 * own, so a client's streams cost no allocation and 40 bytes each (a heap-allocated gsl_rng
 * costs two allocations, 64 bytes with malloc's headers). The draws are exactly those of
 * sim_rng_stream_create with the same arguments. Use it through sim_rng_gsl with every GSL
 * function that takes a gsl_rng *; never pass that pointer to gsl_rng_free, and do not move
 * the struct once initialised (the gsl_rng points at the state inside it). */
typedef struct sim_rng {
  gsl_rng g;              /* type = gsl_rng_taus2, state = s */
  unsigned long int s[3]; /* taus2's state (GSL rng/taus.c: three unsigned longs) */
} sim_rng;

/* Seeds r in place for (seed, entity, purpose, index), as sim_rng_stream_create does. Never
 * allocates and never fails (asserts that GSL's taus2 state is the three unsigned longs the
 * struct holds). */
void sim_rng_init(sim_rng *r, uint64_t seed, const char *entity, const char *purpose,
                  uint64_t index);

/* The gsl_rng of an initialised sim_rng, for GSL's functions; borrowed, valid while r is. */
static inline gsl_rng *sim_rng_gsl(sim_rng *r) { return &r->g; }

/* One step of taus2 (L'Ecuyer's three-component Tausworthe generator, "taus88", as GSL's
 * rng/taus.c runs it) on its state s[3]: the same 32-bit value gsl_rng_get returns, without
 * the call through the generator's type. */
static inline unsigned long sim_rng_taus2_step(unsigned long *s) {
  const unsigned long m = 0xffffffffUL;
  s[0] = (((s[0] & 4294967294UL) << 12) & m) ^ ((((s[0] << 13) & m) ^ s[0]) >> 19);
  s[1] = (((s[1] & 4294967288UL) << 4) & m) ^ ((((s[1] << 2) & m) ^ s[1]) >> 25);
  s[2] = (((s[2] & 4294967280UL) << 17) & m) ^ ((((s[2] << 3) & m) ^ s[2]) >> 11);
  return s[0] ^ s[1] ^ s[2];
}

/* gsl_rng_uniform(r), bit for bit, inline when r is a taus2 stream (every stream of this
 * file): a value in [0, 1), the 32-bit draw / 2^32. */
static inline double sim_rng_uniform(gsl_rng *r) {
  if (r->type == gsl_rng_taus2) return (double)sim_rng_taus2_step(r->state) / 4294967296.0;
  return gsl_rng_uniform(r);
}

/* gsl_rng_uniform_int(r, n), draw for draw, inline when r is a taus2 stream: an integer in
 * [0, n) for 0 < n <= 2^32 - 1 (taus2's range), by GSL's rule of whole buckets of
 * floor((2^32 - 1) / n) values, drawing again past the last whole bucket. Any other
 * generator or n goes to GSL (which reports an n out of range). */
static inline unsigned long sim_rng_uniform_int(gsl_rng *r, unsigned long n) {
  if (r->type == gsl_rng_taus2 && n > 0 && n <= 0xffffffffUL) {
    unsigned long width = 0xffffffffUL / n, k;
    do
      k = sim_rng_taus2_step(r->state) / width;
    while (k >= n);
    return k;
  }
  return gsl_rng_uniform_int(r, n);
}
/* An exponential draw of the given mean from one uniform u of r: -mean ln(1 - u), the formula
 * of gsl_ran_exponential, which computes it as -mean log1p(-u). Here it is log(1 - u): 1 - u
 * is exact (u has 32 bits), log is about 2.4 times faster than log1p with glibc, and the two
 * differ at most in the last bit of the double, which rounding to whole nanoseconds hides
 * (a test checks a million draws of each agree to the ns). */
static inline double sim_rng_exponential(gsl_rng *r, double mean) {
  return -mean * log(1.0 - sim_rng_uniform(r));
}

/* Returns a uniform 64-bit value from r (a gsl_rng *), built from two 32-bit draws, the first
 * one the high half. r must yield 32 full bits per draw, as taus2 and mt19937 do. */
/* Returns what gsl_rng_uniform_int(r, n) would return after `skip` draws, without moving r:
 * the draw is made by GSL on a copy of r's state. A hint for prefetching what the next event
 * will touch (it never changes what anything draws); returns n when r's state is larger than
 * the copy it is given room for (not a taus2-sized generator). */
static inline unsigned long sim_rng_peek_uniform_int(const gsl_rng *r, int skip, unsigned long n) {
  unsigned long s[4];
  if (r->type->size > sizeof s) return n;
  memcpy(s, r->state, r->type->size);
  gsl_rng copy = {r->type, s};
  for (int i = 0; i < skip; i++)
    (void)gsl_rng_get(&copy);
  return gsl_rng_uniform_int(&copy, n);
}

uint64_t sim_rng_next_u64(void *r);

/* Returns a retry_rng reading from r through sim_rng_next_u64 (asserts that r yields 32 full
 * bits). The result holds a borrowed pointer to r, valid until r is freed. */
retry_rng sim_rng_adapter(gsl_rng *r);

#endif /* SIM_RNG_H */
