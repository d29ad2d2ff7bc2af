/*
 * sim_hist.h: a log-bucketed histogram of non-negative int64 values (latencies in ns), in the
 * style of HdrHistogram: each power of two is split into SIM_HIST_SUB linear sub-buckets, so a
 * bucket is at most 1/SIM_HIST_SUB of its lower bound wide and a value, reported as its
 * bucket's midpoint, is off by at most 1/(2 SIM_HIST_SUB). Recording is O(1) and never
 * allocates; two histograms merge by adding their buckets. Fixed size, caller-owned.
 */
#ifndef SIM_HIST_H
#define SIM_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Sub-buckets per power of two (a power of two): 2^7 = 128, as sim_hist.c lays them out. A
 * bucket is then at most 1/128 (0.79 %) of its lower bound wide, and the midpoint reported
 * for it is within 1/256 (0.39 %) of every value it holds. */
#define SIM_HIST_SUB_BITS 7
#define SIM_HIST_SUB (1 << SIM_HIST_SUB_BITS)
/* Values 0 .. 2 SIM_HIST_SUB - 1 (0 .. 255) are exact: the first SIM_HIST_SUB buckets hold one
 * value each, and so does group 1 (128 .. 255). Above, one group per power of two up to 2^63. */
#define SIM_HIST_N_BUCKETS ((64 - SIM_HIST_SUB_BITS + 1) * SIM_HIST_SUB)

typedef struct sim_hist {
  /* read-only */
  uint64_t count; /* values recorded */
  int64_t min;    /* smallest value recorded (INT64_MAX when empty) */
  int64_t max;    /* largest value recorded (0 when empty) */
  double sum;     /* sum of values, for the mean */
  /* private */
  uint64_t buckets[SIM_HIST_N_BUCKETS];
} sim_hist;

/* Empties h. */
void sim_hist_init(sim_hist *h);
/* Empties h (already initialised) as sim_hist_init does, zeroing only the buckets its values
 * can have reached (from its min's to its max's): a per-bucket histogram of a few values is
 * emptied in a few bytes instead of the whole table. */
void sim_hist_clear(sim_hist *h);
/* Returns the bucket index of a value, and the bounds [lo, hi] of values sharing a bucket. */
int sim_hist_bucket_of(int64_t value);
int64_t sim_hist_bucket_lo(int b);
int64_t sim_hist_bucket_hi(int b);
/* Records one value; negative values are recorded as 0. Inline: a call records it up to four
 * times (its edge's two, the series', the OK-only split). */
static inline void sim_hist_record(sim_hist *h, int64_t value) {
  if (value < 0) value = 0;
#if defined(__GNUC__) || defined(__clang__)
  int b;
  if (value < SIM_HIST_SUB) {
    b = (int)value;
  } else {
    /* As sim_hist_bucket_of: group (top bit - SUB_BITS + 1), then the SUB_BITS bits below it. */
    int shift = 63 - __builtin_clzll((uint64_t)value) - SIM_HIST_SUB_BITS;
    b = (shift + 1) * SIM_HIST_SUB + (int)(((uint64_t)value >> shift) & (SIM_HIST_SUB - 1));
  }
#else
  int b = sim_hist_bucket_of(value);
#endif
  h->buckets[b]++;
  h->count++;
  h->sum += (double)value;
  if (value < h->min) h->min = value;
  if (value > h->max) h->max = value;
}
/* Adds every value of src into dst. */
void sim_hist_merge(sim_hist *dst, const sim_hist *src);

/* Returns the value at quantile q in [0, 1]: the representative value (the midpoint, clamped to
 * [min, max]) of the bucket holding the ceil(q * count)-th smallest value (at least the first).
 * q = 1 returns max exactly, q = 0 min. Returns 0 when h is empty. */
int64_t sim_hist_quantile(const sim_hist *h, double q);
/* The quantiles q[0] <= q[1] <= ... <= q[n-1] of the values h holds that minus does not, in
 * one pass: minus (NULL for none) holds a subset of h's values, bucket by bucket (the failed
 * calls among all calls), and min and max are the least and largest of what remains, which
 * the two histograms cannot tell. out[i] is exactly what sim_hist_quantile(r, q[i]) returns
 * for r, the histogram of the remaining values alone (0 for each when none remains). */
void sim_hist_quantiles_minus(const sim_hist *h, const sim_hist *minus, int64_t min, int64_t max,
                              const double *q, int n, int64_t *out);
/* Returns the mean of the recorded values, 0 when empty. */
double sim_hist_mean(const sim_hist *h);

/* Writes the non-empty buckets as CSV rows "<prefix>lo_ms,hi_ms,count,cumulative_fraction"
 * (values divided by scale_ns_per_unit, e.g. 1e6 for milliseconds, printed with %.6f). prefix
 * may be "" and is written verbatim at the start of every row (e.g. "baseline,"). Returns 0 or
 * -1 on a write error. */
int sim_hist_write_csv(const sim_hist *h, FILE *f, const char *prefix, double scale);

#endif /* SIM_HIST_H */
