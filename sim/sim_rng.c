/*
 * sim_rng.c: per-entity random streams. A stream's seed is a hash of (scenario seed, entity,
 * purpose, index) and nothing else, so streams never depend on one another. Owns no state:
 * each stream is a gsl_rng (or a sim_rng, held in place) that belongs to its caller.
 */
#include "sim/sim_rng.h"

#include <assert.h>

/* {==================================================================
 * Deriving seeds
 * =================================================================== */

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)
#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

/* FNV-1a over the bytes of s and its terminating NUL. Hashing the NUL separates fields:
 * ("ab", "c") hashes "ab\0c\0" and ("a", "bc") hashes "a\0bc\0". */
static uint64_t fnv1a(uint64_t h, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  do {
    h ^= *p;
    h *= FNV_PRIME;
  } while (*p++ != 0);
  return h;
}

/* The splitmix64 finalizer (Steele, Lea, Flood 2014): a bijection of 64-bit values with good
 * avalanche, so nearby inputs (seeds 1, 2, 3; indices 0, 1, 2) give unrelated outputs. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

uint64_t sim_rng_derive(uint64_t seed, const char *entity, const char *purpose, uint64_t index) {
  assert(entity != NULL && purpose != NULL);
  uint64_t names = fnv1a(fnv1a(FNV_OFFSET, entity), purpose);
  /* One finalizer round per input, rather than mixing seed ^ names ^ index once, where two
   * inputs could cancel out. Each round is a bijection, so changing one input changes z. */
  uint64_t z = mix64(seed + GOLDEN);
  z = mix64(z ^ names);
  z = mix64(z + GOLDEN * (index + 1));
  return z;
}

/* }================================================================== */

/* {==================================================================
 * Streams
 * =================================================================== */

/* Seeds the taus2 generator r (whose state may live anywhere) from the 64-bit seed s. */
static void seed_taus2(gsl_rng *r, uint64_t s) {
  /* taus2's own seeding (GSL rng/taus.c) keeps only seed mod 2^32, so two of N streams would
   * coincide with probability ~N^2 / 2^33 (1 % at 10000 streams). We seed it as GSL does and
   * then replace its three 32-bit components, through gsl_rng_state, with 96 bits drawn from
   * the 64-bit seed by splitmix64, keeping taus2's rule (s1 > 1, s2 > 7, s3 > 15) and warming
   * up with six draws as GSL does. The layout (three unsigned longs) is checked through
   * gsl_rng_size; should a GSL ever change it, the 32-bit seeding alone remains. */
  gsl_rng_set(r, (unsigned long)(s & UINT32_MAX));
  if (gsl_rng_size(r) == 3 * sizeof(unsigned long)) {
    unsigned long *st = gsl_rng_state(r);
    static const unsigned long min_value[3] = {2, 8, 16};
    uint64_t z = s;
    for (int i = 0; i < 3; i++) {
      z += GOLDEN;
      unsigned long v = (unsigned long)(mix64(z) & UINT32_MAX);
      st[i] = v < min_value[i] ? v + min_value[i] : v;
    }
    for (int i = 0; i < 6; i++)
      (void)gsl_rng_get(r);
  }
}

gsl_rng *sim_rng_stream_create(uint64_t seed, const char *entity, const char *purpose,
                               uint64_t index) {
  uint64_t s = sim_rng_derive(seed, entity, purpose, index);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  if (r == NULL) return NULL;
  seed_taus2(r, s);
  return r;
}

void sim_rng_init(sim_rng *r, uint64_t seed, const char *entity, const char *purpose,
                  uint64_t index) {
  assert(r != NULL);
  /* The state must be what the struct holds: gsl_rng_taus2's size is its state struct's. */
  assert(gsl_rng_taus2->size == sizeof r->s);
  r->g.type = gsl_rng_taus2;
  r->g.state = r->s;
  seed_taus2(&r->g, sim_rng_derive(seed, entity, purpose, index));
}

uint64_t sim_rng_next_u64(void *r) {
  /* taus2 returns 32 uniform bits (gsl_rng_max = 2^32 - 1, min = 0): two draws make 64.
   * The first draw is the high half, so a stream's sequence of u64 is fixed by its seed. */
  gsl_rng *g = r;
  if (g->type == gsl_rng_taus2) { /* the same two draws, without two calls through the type */
    uint64_t hi = (uint64_t)sim_rng_taus2_step(g->state) & UINT32_MAX;
    uint64_t lo = (uint64_t)sim_rng_taus2_step(g->state) & UINT32_MAX;
    return (hi << 32) | lo;
  }
  uint64_t hi = (uint64_t)gsl_rng_get(g) & UINT32_MAX;
  uint64_t lo = (uint64_t)gsl_rng_get(g) & UINT32_MAX;
  return (hi << 32) | lo;
}

retry_rng sim_rng_adapter(gsl_rng *r) {
  assert(r != NULL);
  /* next_u64 needs exactly 32 random bits per draw: a full-range 32-bit generator. */
  assert(gsl_rng_min(r) == 0 && gsl_rng_max(r) == UINT32_MAX);
  retry_rng g = {sim_rng_next_u64, r};
  return g;
}

/* }================================================================== */
