/*
 * sim_series.h: a time series in virtual time: a table of named columns with one row per
 * bucket of bucket_ns, grown by doubling as time advances, so its size follows the run's
 * length in buckets, never the number of events. It owns its rows and names; it knows no
 * model: which columns exist and what fills them is the caller's business. Invariant: rows
 * 0 .. n_buckets - 1 exist; a row's counters are zero and its quantiles NaN until written.
 */
#ifndef SIM_SERIES_H
#define SIM_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "retry/retry.h"

/* Longest column name, the terminating NUL included. */
/* 160: an edge column "<from>-><to>#k_failure_rps" of two 63-byte names fits whole. */
#define SIM_SERIES_NAME_MAX 160

typedef struct sim_series sim_series;

/* Returns a new, empty series (no column, no row) with buckets of bucket_ns (> 0): row b
 * covers [b * bucket_ns, (b + 1) * bucket_ns). alloc (copied; NULL: malloc/realloc/free)
 * supplies every byte the series holds, now and as it grows. NULL when out of memory.
 * Returns a new object; free with sim_series_destroy. */
sim_series *sim_series_create(int64_t bucket_ns, const retry_allocator *alloc);

/* Frees s, its rows and names. NULL is a no-op. */
void sim_series_destroy(sim_series *s);

/* Adds a column named name (truncated to SIM_SERIES_NAME_MAX - 1 bytes; copied) and returns
 * its index, 0 for the first one and one more for each next one. A column holds what the
 * caller writes or adds to it; with is_rate it is a count that sim_series_finish divides by
 * the bucket's length in seconds (so it reads in events per second). Columns must all be
 * added before the first row exists (assert). Returns RETRY_ENOMEM (negative) when out of
 * memory, s unchanged. */
int sim_series_column_add(sim_series *s, const char *name, bool is_rate);

/* Adds a quantile column and returns its index (as sim_series_column_add): in every row it
 * holds the q-quantile (q in [0, 1]) of the values sim_series_record recorded during that
 * bucket, divided by unit (> 0: 1e6 turns ns into ms), or NaN when none was recorded there
 * (no value: 0 would read as a real one). Every quantile column reads the same recorded
 * values. Returns RETRY_ENOMEM when out of memory, s unchanged. */
int sim_series_quantile_add(sim_series *s, const char *name, double q, double unit);

/* Returns row b (b >= 0) of s, n_columns values, making rows up to b exist (n_buckets becomes
 * at least b + 1), for the caller to read or write (a gauge sampled at the bucket's end).
 * NULL when out of memory (s unchanged). Returns a borrowed pointer valid until the next call
 * that may grow s (sim_series_row, _add, _record, _flush, _finish) or sim_series_destroy. */
double *sim_series_row(sim_series *s, int64_t b);

/* The first member of every sim_series: the row of the current bucket, for the inline fast path
 * of sim_series_add. Private: read and written by sim_series.c and sim_series_add only. */
typedef struct sim__series_cache {
  double *row;              /* the row of bucket [start_ns, end_ns), NULL when unknown */
  int64_t start_ns, end_ns; /* the cached bucket */
} sim__series_cache;

/* sim_series_add past its cache: finds (or makes) the row and caches it. */
int sim__series_add_slow(sim_series *s, int64_t now_ns, int col, double v);

/* Adds v to column col (a column of s) of the row of bucket now_ns / bucket_ns (now_ns >= 0).
 * The current row is cached, so adds within one bucket cost a comparison each (inline: the
 * world adds a few counters per event). Returns 0, or RETRY_ENOMEM when the row could not be
 * made (nothing added). */
static inline int sim_series_add(sim_series *s, int64_t now_ns, int col, double v) {
  /* A pointer to a struct converts to a pointer to its first member (C11 6.7.2.1). */
  sim__series_cache *c = (sim__series_cache *)(void *)s;
  if (c->row != NULL && now_ns < c->end_ns && now_ns >= c->start_ns) {
    c->row[col] += v;
    return 0;
  }
  return sim__series_add_slow(s, now_ns, col, v);
}

/* Records value (e.g. a latency, in ns) for the quantile columns of the bucket of now_ns.
 * Values are kept in one histogram (sim_hist: O(1), no allocation) for the current bucket;
 * when now_ns moves to another bucket, the previous bucket's quantiles are written first
 * (sim_series_flush). now_ns must not move back. Returns 0, or RETRY_ENOMEM when that write
 * found no memory for its row (those quantiles are lost; value is recorded). */
int sim_series_record(sim_series *s, int64_t now_ns, int64_t value);

/* Writes the quantile columns of the bucket whose values are being recorded, when any was,
 * and empties the histogram; that row is made if needed. Returns 0 or RETRY_ENOMEM. */
int sim_series_flush(sim_series *s);

/* Ends the series: sim_series_flush, then divides every rate column of every row by the
 * bucket's length in seconds. Call it once, after the last write (assert). Returns 0 or
 * RETRY_ENOMEM (from the flush; the rates are divided either way). */
int sim_series_finish(sim_series *s);

/* The table, read-only for the caller (borrowed pointers valid until s grows or is
 * destroyed). values is n_buckets x n_columns, row-major, NULL while no row exists. */
int64_t sim_series_bucket_ns(const sim_series *s);
size_t sim_series_n_columns(const sim_series *s);
/* Whether column col (< n_columns) was added with is_rate: its values are counts until
 * sim_series_finish divides them by the bucket's length (a reader at a bucket's end, such as
 * an operator rule, divides them itself). */
bool sim_series_column_is_rate(const sim_series *s, size_t col);
size_t sim_series_n_buckets(const sim_series *s);
char (*sim_series_names(const sim_series *s))[SIM_SERIES_NAME_MAX];
double *sim_series_values(const sim_series *s);

#endif /* SIM_SERIES_H */
