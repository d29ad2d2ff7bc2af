/*
 * sim_hist.c: the log-bucketed histogram of sim_hist.h. Owns nothing: the caller's sim_hist
 * holds every bucket. Invariant: count equals the sum of the buckets, and every recorded
 * value v lies in [sim_hist_bucket_lo(b), sim_hist_bucket_hi(b)] for b = sim_hist_bucket_of(v).
 */
#include "sim/sim_hist.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* {==================================================================
 * Buckets
 * =================================================================== */

/* Layout. Values below SIM_HIST_SUB are their own bucket. A larger value whose top set bit is
 * bit p (p >= SUB_BITS) falls in group g = p - SUB_BITS + 1, and within it in sub-bucket
 * s = the SUB_BITS bits just below the top bit: bucket g * SUB + s. Group g's buckets are
 * 2^(g-1) wide and start at (SUB + s) << (g-1), so a bucket is at most 1/SUB of its lower
 * bound wide. Group 1 (128 .. 255) still has width 1: values below 256 are exact. The last
 * group in use is 56 (p = 62); int64 values never reach the rest of the array. */

/* Position of the highest set bit of v > 0. */
static int top_bit(uint64_t v) {
#if defined(__GNUC__) || defined(__clang__)
  return 63 - __builtin_clzll(v);
#else
  /* Portable fallback: a binary search over the bit positions. */
  int p = 0;
  for (int step = 32; step > 0; step /= 2)
    if (v >> (p + step) != 0) p += step;
  return p;
#endif
}

int sim_hist_bucket_of(int64_t value) {
  if (value < SIM_HIST_SUB) return value < 0 ? 0 : (int)value;
  uint64_t v = (uint64_t)value;
  int p = top_bit(v);
  int shift = p - SIM_HIST_SUB_BITS; /* = g - 1 */
  int sub = (int)((v >> shift) & (SIM_HIST_SUB - 1));
  return (shift + 1) * SIM_HIST_SUB + sub;
}

int64_t sim_hist_bucket_lo(int b) {
  assert(b >= 0 && b < SIM_HIST_N_BUCKETS);
  if (b < SIM_HIST_SUB) return b;
  int shift = b / SIM_HIST_SUB - 1;
  uint64_t lo = (uint64_t)(SIM_HIST_SUB + b % SIM_HIST_SUB) << shift;
  /* Groups past 56 start at or above 2^63: no int64 lands there. Saturate. */
  return shift > 62 - SIM_HIST_SUB_BITS ? INT64_MAX : (int64_t)lo;
}

int64_t sim_hist_bucket_hi(int b) {
  assert(b >= 0 && b < SIM_HIST_N_BUCKETS);
  if (b < SIM_HIST_SUB) return b;
  int shift = b / SIM_HIST_SUB - 1;
  if (shift > 62 - SIM_HIST_SUB_BITS) return INT64_MAX;
  /* Computed unsigned: the last bucket's hi is exactly INT64_MAX. */
  uint64_t lo = (uint64_t)(SIM_HIST_SUB + b % SIM_HIST_SUB) << shift;
  return (int64_t)(lo + ((uint64_t)1 << shift) - 1);
}

/* The value reported for bucket b: its midpoint, kept inside [min, max], what was recorded. */
static int64_t bucket_value_in(int b, int64_t min, int64_t max) {
  int64_t lo = sim_hist_bucket_lo(b);
  int64_t v = lo + (sim_hist_bucket_hi(b) - lo) / 2;
  if (v < min) v = min;
  if (v > max) v = max;
  return v;
}
static int64_t bucket_value(const sim_hist *h, int b) { return bucket_value_in(b, h->min, h->max); }

/* }================================================================== */

/* {==================================================================
 * Recording and merging
 * =================================================================== */

void sim_hist_init(sim_hist *h) {
  assert(h != NULL);
  memset(h, 0, sizeof *h);
  h->min = INT64_MAX;
  h->max = 0;
}

void sim_hist_clear(sim_hist *h) {
  assert(h != NULL);
  if (h->count > 0) {
    int lo = sim_hist_bucket_of(h->min), hi = sim_hist_bucket_of(h->max);
    memset(&h->buckets[lo], 0, (size_t)(hi - lo + 1) * sizeof h->buckets[0]);
  }
  h->count = 0;
  h->sum = 0;
  h->min = INT64_MAX;
  h->max = 0;
}

void sim_hist_merge(sim_hist *dst, const sim_hist *src) {
  assert(dst != NULL && src != NULL);
  if (src->count == 0) return;
  /* Only the buckets between src's min and max can be non-empty. */
  int from = sim_hist_bucket_of(src->min), to = sim_hist_bucket_of(src->max);
  for (int b = from; b <= to; b++)
    dst->buckets[b] += src->buckets[b];
  dst->count += src->count;
  dst->sum += src->sum;
  if (src->min < dst->min) dst->min = src->min;
  if (src->max > dst->max) dst->max = src->max;
}

/* }================================================================== */

/* {==================================================================
 * Reading
 * =================================================================== */

int64_t sim_hist_quantile(const sim_hist *h, double q) {
  assert(h != NULL);
  if (h->count == 0) return 0;
  /* NaN and q <= 0 read as the minimum; q >= 1 as the maximum. Both are exact. */
  if (!(q > 0)) return h->min;
  if (q >= 1) return h->max;
  /* The rank of the wanted value, 1-based: ceil(q * count), at least 1. */
  double r = ceil(q * (double)h->count);
  uint64_t rank = r < 1 ? 1 : r >= (double)h->count ? h->count : (uint64_t)r;
  uint64_t seen = 0;
  int from = sim_hist_bucket_of(h->min), to = sim_hist_bucket_of(h->max);
  for (int b = from; b <= to; b++) {
    seen += h->buckets[b];
    if (seen >= rank) return bucket_value(h, b);
  }
  return h->max; /* unreachable while count matches the buckets */
}

/* The 1-based rank of quantile q among count values: ceil(q * count), in [1, count]. */
static uint64_t quantile_rank(double q, uint64_t count) {
  double r = ceil(q * (double)count);
  return r < 1 ? 1 : r >= (double)count ? count : (uint64_t)r;
}

void sim_hist_quantiles_minus(const sim_hist *h, const sim_hist *minus, int64_t min, int64_t max,
                              const double *q, int n, int64_t *out) {
  assert(h != NULL && (n == 0 || (q != NULL && out != NULL)));
  for (int j = 1; j < n; j++)
    assert(q[j] >= q[j - 1]); /* ascending, and no NaN past the first */
  uint64_t count = h->count - (minus != NULL ? minus->count : 0);
  int i = 0;
  /* As sim_hist_quantile: nothing reads 0, q <= 0 (or NaN) the least, q >= 1 the largest. */
  for (; i < n && (count == 0 || !(q[i] > 0)); i++)
    out[i] = count == 0 ? 0 : min;
  if (i == n) return;
  uint64_t seen = 0;
  int to = sim_hist_bucket_of(max);
  uint64_t rank = q[i] < 1 ? quantile_rank(q[i], count) : UINT64_MAX; /* the one sought */
  for (int b = sim_hist_bucket_of(min); b <= to && rank != UINT64_MAX; b++) {
    seen += h->buckets[b] - (minus != NULL ? minus->buckets[b] : 0);
    while (seen >= rank) {
      out[i++] = bucket_value_in(b, min, max);
      rank = i < n && q[i] < 1 ? quantile_rank(q[i], count) : UINT64_MAX;
    }
  }
  for (; i < n; i++) /* q >= 1 (and, were the counts wrong, what the scan did not reach) */
    out[i] = max;
}

double sim_hist_mean(const sim_hist *h) {
  assert(h != NULL);
  return h->count == 0 ? 0.0 : h->sum / (double)h->count;
}

int sim_hist_write_csv(const sim_hist *h, FILE *f, const char *prefix, double scale) {
  assert(h != NULL && f != NULL && prefix != NULL && scale > 0);
  if (h->count == 0) return 0;
  uint64_t seen = 0;
  int from = sim_hist_bucket_of(h->min), to = sim_hist_bucket_of(h->max);
  for (int b = from; b <= to; b++) {
    uint64_t n = h->buckets[b];
    if (n == 0) continue;
    seen += n;
    /* hi is inclusive, as sim_hist_bucket_hi: [lo, hi] holds every value counted. */
    int rc =
        fprintf(f, "%s%.6f,%.6f,%" PRIu64 ",%.6f\n", prefix, (double)sim_hist_bucket_lo(b) / scale,
                (double)sim_hist_bucket_hi(b) / scale, n, (double)seen / (double)h->count);
    if (rc < 0) return -1;
  }
  return ferror(f) ? -1 : 0;
}

/* }================================================================== */
