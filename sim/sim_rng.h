/*
 * sim_rng.h: independent random streams, one per (entity, purpose), derived from the scenario
 * seed. A stream's seed depends only on (scenario seed, entity name, purpose), never on how
 * many other entities exist, so adding a client leaves the other clients' draws unchanged and
 * variants of one scenario see the same arrivals and service times (common random numbers).
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

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

/* Returns a uniform 64-bit value from r (a gsl_rng *), built from two 32-bit draws, the first
 * one the high half. r must yield 32 full bits per draw, as taus2 and mt19937 do. */
uint64_t sim_rng_next_u64(void *r);

/* Returns a retry_rng reading from r through sim_rng_next_u64 (asserts that r yields 32 full
 * bits). The result holds a borrowed pointer to r, valid until r is freed. */
retry_rng sim_rng_adapter(gsl_rng *r);

#endif /* SIM_RNG_H */
