/*
 * sim_series.c: the time series of sim_series.h. Owns the rows (one block, grown by doubling),
 * the column names and kinds, and one histogram for the bucket being recorded. Invariant:
 * cache.row, when not NULL, points inside values at the row of the bucket [cache.start_ns,
 * cache.end_ns); any growth drops it, since realloc may move the rows.
 */
#include "sim/sim_series.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_hist.h"

/* {==================================================================
 * Data and memory
 * =================================================================== */

/* What a column holds. */
typedef enum col_kind { COL_PLAIN = 0, COL_RATE, COL_QUANTILE } col_kind;

typedef struct col_info {
  col_kind kind;
  double q;    /* COL_QUANTILE: the quantile */
  double unit; /* COL_QUANTILE: divisor of the recorded values */
} col_info;

struct sim_series {
  sim__series_cache cache;            /* first: sim_series_add's inline fast path reads it */
  retry_allocator alloc;              /* every allocation goes through it */
  int64_t bucket_ns;                  /* a row's width in virtual time */
  char (*names)[SIM_SERIES_NAME_MAX]; /* cap_cols names */
  col_info *cols;                     /* cap_cols kinds */
  size_t n_cols, cap_cols;            /* columns in use and allocated */
  bool has_quantiles;                 /* some column is COL_QUANTILE */
  double *values;                     /* cap_rows x n_cols, row-major */
  size_t n_rows, cap_rows;            /* rows that exist and rows allocated */
  sim_hist hist;                      /* values recorded in bucket hist_b */
  int64_t hist_b;                     /* the bucket hist belongs to */
  int64_t hist_start_ns, hist_end_ns; /* that bucket's times: [start, end) */
  bool finished;                      /* sim_series_finish ran */
};

static void *s_realloc(sim_series *s, void *ptr, size_t size) {
  return s->alloc.realloc_fn(ptr, size, s->alloc.ctx);
}
static void s_free(sim_series *s, void *ptr) {
  if (ptr != NULL) s->alloc.free_fn(ptr, s->alloc.ctx);
}

/* }================================================================== */

/* {==================================================================
 * Building
 * =================================================================== */

sim_series *sim_series_create(int64_t bucket_ns, const retry_allocator *alloc) {
  assert(bucket_ns > 0);
  retry_allocator a;
  retry_allocator_resolve(alloc, &a);
  alloc = &a;
  sim_series *s = alloc->malloc_fn(sizeof *s, alloc->ctx);
  if (s == NULL) return NULL;
  memset(s, 0, sizeof *s);
  s->alloc = *alloc;
  s->bucket_ns = bucket_ns;
  sim_hist_init(&s->hist);
  s->hist_end_ns = bucket_ns; /* hist_b 0: [0, bucket_ns) */
  return s;
}

void sim_series_destroy(sim_series *s) {
  if (s == NULL) return;
  s_free(s, s->names);
  s_free(s, s->cols);
  s_free(s, s->values);
  retry_allocator a = s->alloc;
  a.free_fn(s, a.ctx);
}

/* Adds a column of the given kind. Both arrays grow first, so a failure leaves s as it was:
 * a grown array that is not yet used is harmless. */
static int column_add(sim_series *s, const char *name, col_info info) {
  assert(s != NULL && name != NULL && !s->finished);
  assert(s->cap_rows == 0); /* rows are laid out for a fixed number of columns */
  if (s->n_cols == s->cap_cols) {
    size_t cap = s->cap_cols == 0 ? 16 : s->cap_cols * 2;
    char(*names)[SIM_SERIES_NAME_MAX] = s_realloc(s, s->names, cap * sizeof *names);
    if (names == NULL) return RETRY_ENOMEM;
    s->names = names;
    col_info *cols = s_realloc(s, s->cols, cap * sizeof *cols);
    if (cols == NULL) return RETRY_ENOMEM;
    s->cols = cols;
    s->cap_cols = cap;
  }
  size_t c = s->n_cols++;
  snprintf(s->names[c], SIM_SERIES_NAME_MAX, "%s", name);
  s->cols[c] = info;
  if (info.kind == COL_QUANTILE) s->has_quantiles = true;
  return (int)c;
}

int sim_series_column_add(sim_series *s, const char *name, bool is_rate) {
  col_info info = {is_rate ? COL_RATE : COL_PLAIN, 0, 1};
  return column_add(s, name, info);
}

int sim_series_quantile_add(sim_series *s, const char *name, double q, double unit) {
  assert(q >= 0 && q <= 1 && unit > 0);
  col_info info = {COL_QUANTILE, q, unit};
  return column_add(s, name, info);
}

/* }================================================================== */

/* {==================================================================
 * Rows
 * =================================================================== */

/* Grows the rows to hold row b: doubling from 64, so a run of n buckets reallocates
 * O(log n) times. New rows are zero, and NaN in the quantile columns. */
static int rows_grow(sim_series *s, size_t b) {
  size_t cap = s->cap_rows == 0 ? 64 : s->cap_rows;
  while (cap <= b)
    cap *= 2;
  size_t nc = s->n_cols;
  double *v = s_realloc(s, s->values, cap * nc * sizeof *v);
  if (v == NULL) return RETRY_ENOMEM;
  memset(v + s->cap_rows * nc, 0, (cap - s->cap_rows) * nc * sizeof *v);
  if (s->has_quantiles)
    for (size_t row = s->cap_rows; row < cap; row++)
      for (size_t c = 0; c < nc; c++)
        if (s->cols[c].kind == COL_QUANTILE) v[row * nc + c] = NAN;
  s->values = v;
  s->cache.row = NULL; /* the rows may have moved */
  s->cap_rows = cap;
  return 0;
}

double *sim_series_row(sim_series *s, int64_t b) {
  assert(s != NULL && b >= 0);
  if ((size_t)b >= s->cap_rows && rows_grow(s, (size_t)b) != 0) return NULL;
  if ((size_t)b >= s->n_rows) s->n_rows = (size_t)b + 1;
  return s->values + (size_t)b * s->n_cols;
}

/* One division per bucket rather than per counter: the division was a visible cost at several
 * counters per event, and so was the call itself until the fast path moved inline. The cache
 * serves any time inside its bucket, so a time before it (which a kernel's clock never gives,
 * but a caller may) still finds its own row. */
int sim__series_add_slow(sim_series *s, int64_t now_ns, int col, double v) {
  assert(s != NULL && col >= 0 && (size_t)col < s->n_cols && now_ns >= 0);
  int64_t b = now_ns / s->bucket_ns;
  double *row = sim_series_row(s, b);
  if (row == NULL) return RETRY_ENOMEM;
  s->cache.row = row;
  s->cache.start_ns = b * s->bucket_ns;
  s->cache.end_ns = (b + 1) * s->bucket_ns;
  row[col] += v;
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Quantile columns
 * =================================================================== */

int sim_series_flush(sim_series *s) {
  assert(s != NULL);
  if (s->hist.count == 0) return 0;
  double *row = sim_series_row(s, s->hist_b);
  if (row != NULL)
    for (size_t c = 0; c < s->n_cols; c++)
      if (s->cols[c].kind == COL_QUANTILE)
        row[c] = (double)sim_hist_quantile(&s->hist, s->cols[c].q) / s->cols[c].unit;
  sim_hist_clear(&s->hist);
  return row != NULL ? 0 : RETRY_ENOMEM;
}

/* A value goes to the bucket of the moment it is recorded, as sim_series_add's counters do,
 * so that a count and its value land in the same row whatever the order of events at a
 * bucket's boundary. */
int sim_series_record(sim_series *s, int64_t now_ns, int64_t value) {
  assert(s != NULL && now_ns >= 0);
  int rc = 0;
  /* A comparison with the bucket's times, not a division per value (a call records one). */
  if (now_ns < s->hist_start_ns || now_ns >= s->hist_end_ns) {
    int64_t b = now_ns / s->bucket_ns;
    rc = sim_series_flush(s);
    s->hist_b = b;
    s->hist_start_ns = b * s->bucket_ns;
    s->hist_end_ns = s->hist_start_ns + s->bucket_ns;
  }
  sim_hist_record(&s->hist, value);
  return rc;
}

int sim_series_finish(sim_series *s) {
  assert(s != NULL && !s->finished);
  int rc = sim_series_flush(s);
  s->finished = true;
  double bucket_s = (double)s->bucket_ns / 1e9;
  for (size_t b = 0; b < s->n_rows; b++)
    for (size_t c = 0; c < s->n_cols; c++)
      if (s->cols[c].kind == COL_RATE) s->values[b * s->n_cols + c] /= bucket_s;
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * Reading
 * =================================================================== */

int64_t sim_series_bucket_ns(const sim_series *s) { return s->bucket_ns; }
size_t sim_series_n_columns(const sim_series *s) { return s->n_cols; }
size_t sim_series_n_buckets(const sim_series *s) { return s->n_rows; }
bool sim_series_column_is_rate(const sim_series *s, size_t col) {
  return col < s->n_cols && s->cols[col].kind == COL_RATE;
}
char (*sim_series_names(const sim_series *s))[SIM_SERIES_NAME_MAX] { return s->names; }
double *sim_series_values(const sim_series *s) { return s->values; }

/* }================================================================== */
