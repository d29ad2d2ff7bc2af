/*
 * sim_dist_csv.c: reads an empirical distribution (samples or a histogram) from a CSV file
 * with libc stdio, for sim_empirical_load_csv (sim_dist.h). Owns the file while it reads and
 * two growing arrays, freed before it returns; the result is built by
 * sim_empirical_create_samples or _histogram, which copy them.
 *
 * The format is docs/simulator.md's "Empirical distributions from a file": '#' comments and
 * blank lines anywhere, a header naming the columns with a unit suffix, then data rows.
 */
#include "sim/sim_dist.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A line longer than this (with its newline) is refused rather than split. */
#define LINE_MAX_CHARS 1024
/* Columns a line may have: 1 (samples) or 3 (histogram). One more is read to notice extras. */
#define MAX_FIELDS 4

/* {==================================================================
 * Lines and fields
 * =================================================================== */

/* What reading one file needs: where errors go and the arrays being filled. */
typedef struct csv_reader {
  const char *path;
  int line;              /* 1-based number of the line being read */
  retry_error *err;      /* may be NULL */
  retry_allocator alloc; /* resolved */
  double *a, *b;         /* samples, or lower edges and counts */
  size_t n, cap;         /* values in a (and b), room for */
} csv_reader;

/* Records the first error at the current line. */
static void fail(csv_reader *rd, int code, const char *fmt, ...) RETRY_PRINTF(3, 4);
static void fail(csv_reader *rd, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  retry_error_vset(rd->err, code, rd->path, NULL, rd->line, -1, fmt, ap);
  va_end(ap);
}

/* Strips leading and trailing blanks (spaces, tabs) in place; returns the new start. */
static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
  return s;
}

/* Splits line at commas into at most MAX_FIELDS trimmed fields. Returns how many. */
static int split(char *line, char *fields[MAX_FIELDS]) {
  int n = 0;
  char *s = line;
  for (;;) {
    char *comma = strchr(s, ',');
    if (comma != NULL) *comma = '\0';
    if (n < MAX_FIELDS) fields[n] = trim(s);
    n++;
    if (comma == NULL || n > MAX_FIELDS) break;
    s = comma + 1;
  }
  return n > MAX_FIELDS ? MAX_FIELDS : n;
}

/* The unit a column name ends with: "_ns", "_us", "_ms" or "_s". Returns ns per unit, or 0
 * when the name has none of them. */
static double unit_of(const char *name) {
  static const struct {
    const char *suffix;
    double ns;
  } units[] = {{"_ns", 1}, {"_us", 1e3}, {"_ms", 1e6}, {"_s", 1e9}};
  size_t len = strlen(name);
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    size_t k = strlen(units[i].suffix);
    if (len > k && strcmp(name + len - k, units[i].suffix) == 0) return units[i].ns;
  }
  return 0;
}

/* The largest value a file may give, in seconds: a sample or edge past a day is no service
 * time or delay, and a run would leave every call that drew it unfinished. */
#define VALUE_MAX_S 86400.0

/* Parses a field as a finite number >= 0, written in decimal (strtod would also take
 * hexadecimal, "inf" and "nan", which no measurement file means). */
static bool number(const char *field, double *out) {
  if (field[0] == '\0' || strspn(field, "0123456789.eE+-") != strlen(field)) return false;
  char *end = NULL;
  errno = 0;
  double x = strtod(field, &end);
  if (end == field || *end != '\0' || errno == ERANGE || !isfinite(x) || x < 0) return false;
  *out = x;
  return true;
}

/* Appends (x, y) to the arrays, growing them through the allocator. */
static bool push(csv_reader *rd, double x, double y) {
  if (rd->n == rd->cap) {
    size_t cap = rd->cap == 0 ? 256 : rd->cap * 2;
    if (cap > SIZE_MAX / sizeof(double)) cap = 0;
    double *a = cap == 0 ? NULL : rd->alloc.realloc_fn(rd->a, cap * sizeof(double), rd->alloc.ctx);
    if (a == NULL) return false;
    rd->a = a;
    double *b = rd->alloc.realloc_fn(rd->b, cap * sizeof(double), rd->alloc.ctx);
    if (b == NULL) return false;
    rd->b = b;
    rd->cap = cap;
  }
  rd->a[rd->n] = x;
  rd->b[rd->n] = y;
  rd->n++;
  return true;
}

/* Reads the next line that is neither blank nor a comment into buf, without its line end.
 * Returns 1 with a line, 0 at the end of the file, -1 after an error (recorded). */
static int next_line(csv_reader *rd, FILE *f, char *buf, char **out) {
  for (;;) {
    memset(buf, 'x', LINE_MAX_CHARS);
    if (fgets(buf, LINE_MAX_CHARS, f) == NULL) {
      if (ferror(f)) {
        fail(rd, RETRY_EIO, "cannot read the file: %s", strerror(errno));
        return -1;
      }
      return 0;
    }
    rd->line++;
    /* fgets ends what it read with a NUL; one before that was in the file. The last NUL in
     * buf is fgets's, because buf was filled with something else first. */
    size_t len = strlen(buf), end = LINE_MAX_CHARS - 1;
    while (end > len && buf[end] != '\0')
      end--;
    if (end != len) {
      fail(rd, RETRY_EINVAL, "a NUL byte at column %zu: a CSV file is text", len + 1);
      return -1;
    }
    if (len > 0 && buf[len - 1] == '\n') {
      buf[--len] = '\0';
    } else if (!feof(f)) {
      fail(rd, RETRY_EINVAL, "line longer than %d characters", LINE_MAX_CHARS - 2);
      return -1;
    }
    if (len > 0 && buf[len - 1] == '\r') buf[--len] = '\0';
    char *s = buf;
    /* A UTF-8 byte order mark on the first line, as spreadsheets write it. */
    if (rd->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3;
    s = trim(s);
    if (s[0] == '\0' || s[0] == '#') continue;
    *out = s;
    return 1;
  }
}

/* }================================================================== */

/* {==================================================================
 * The file
 * =================================================================== */

/* Reads the header and every row into rd, values scaled to ns: samples in rd->a, or a
 * histogram's lower edges in rd->a and counts in rd->b, with the last bin's upper edge in
 * *upper_last_ns. Returns whether it read them all; *histogram tells which it read. */
static bool read_rows(csv_reader *rd, FILE *f, bool *histogram, double *upper_last_ns) {
  char buf[LINE_MAX_CHARS];
  char *line = NULL, *fields[MAX_FIELDS];
  int rc = next_line(rd, f, buf, &line);
  if (rc <= 0) {
    if (rc == 0) fail(rd, RETRY_EINVAL, "%s", "no header: the file has no lines but comments");
    return false;
  }
  int n_cols = split(line, fields);
  double unit = 0;
  if (n_cols == 1) {
    unit = unit_of(fields[0]);
  } else if (n_cols == 3) {
    unit = unit_of(fields[0]);
    if (unit != unit_of(fields[1]) || strcmp(fields[2], "count") != 0) unit = 0;
  }
  if (unit == 0) {
    fail(rd, RETRY_EINVAL,
         "header \"%s\": give one column named with its unit (\"latency_ms\"; units _ns, _us, "
         "_ms, _s) for samples, or three (\"lower_ms,upper_ms,count\") for a histogram",
         line);
    return false;
  }
  *histogram = n_cols == 3;
  double prev_upper = 0;
  while ((rc = next_line(rd, f, buf, &line)) == 1) {
    int n = split(line, fields);
    if (n != n_cols) {
      fail(rd, RETRY_EINVAL, "%s",
           n_cols == 1 ? "a sample row has exactly one value"
                       : "a histogram row has exactly three values: "
                         "lower, upper, count");
      return false;
    }
    double x = 0, up = 0, count = 0;
    if (!number(fields[0], &x) ||
        (n == 3 && (!number(fields[1], &up) || !number(fields[2], &count)))) {
      fail(rd, RETRY_EINVAL, "%s",
           "every value is a finite number >= 0 (a plain number: the unit is in the header)");
      return false;
    }
    if (x * unit > VALUE_MAX_S * 1e9 || up * unit > VALUE_MAX_S * 1e9) {
      fail(rd, RETRY_EINVAL,
           "%s is %g s, more than the limit of a day (%.0f s): no service time or delay is "
           "that long",
           x * unit > VALUE_MAX_S * 1e9 ? fields[0] : fields[1],
           (x * unit > VALUE_MAX_S * 1e9 ? x : up) * unit / 1e9, VALUE_MAX_S);
      return false;
    }
    if (n == 3) {
      if (!(up > x)) {
        fail(rd, RETRY_EINVAL, "%s", "a bin's upper edge must be above its lower edge");
        return false;
      }
      if (rd->n > 0 && x != prev_upper) {
        fail(rd, RETRY_EINVAL, "%s",
             "bins must be contiguous and in order: each lower edge is the previous upper edge "
             "(give a gap as a bin of count 0)");
        return false;
      }
      prev_upper = up;
    }
    if (!push(rd, x * unit, count)) {
      fail(rd, RETRY_ENOMEM, "%s", "out of memory reading the rows");
      return false;
    }
  }
  if (rc < 0) return false;
  if (rd->n == 0) {
    fail(rd, RETRY_EINVAL, "%s", "no data rows after the header");
    return false;
  }
  *upper_last_ns = prev_upper * unit;
  return true;
}

sim_empirical *sim_empirical_load_csv(const char *path, const retry_allocator *alloc,
                                      retry_error *err) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    retry_error_set(err, RETRY_EIO, path, NULL, -1, -1, "cannot open: %s", strerror(errno));
    return NULL;
  }
  sim_empirical *e = sim_empirical_read_csv(f, path, alloc, err);
  fclose(f);
  return e;
}

/* The stream is read to its end (or its first error) and left open: the caller opened it,
 * perhaps on bytes it also hashed (fmemopen), and closes it. */
sim_empirical *sim_empirical_read_csv(FILE *f, const char *path, const retry_allocator *alloc,
                                      retry_error *err) {
  csv_reader rd = {.path = path, .err = err};
  retry_allocator_resolve(alloc, &rd.alloc);
  bool histogram = false;
  double upper_last = 0;
  bool ok = read_rows(&rd, f, &histogram, &upper_last);
  sim_empirical *e = NULL;
  if (ok && !histogram) {
    e = sim_empirical_create_samples(rd.a, rd.n, alloc, err);
  } else if (ok) {
    /* The lower edges, then the last bin's upper edge: n + 1 edges. a has room (cap > n) or
     * is grown by one. */
    if (push(&rd, upper_last, 0)) {
      e = sim_empirical_create_histogram(rd.a, rd.b, rd.n - 1, alloc, err);
    } else {
      retry_error_set(err, RETRY_ENOMEM, path, NULL, -1, -1, "out of memory reading the rows");
    }
  }
  /* An error from create (a sum of counts of 0) has no line: it is about the whole file. */
  if (e == NULL && err != NULL && err->source[0] == '\0')
    snprintf(err->source, sizeof err->source, "%s", path);
  if (rd.a != NULL) rd.alloc.free_fn(rd.a, rd.alloc.ctx);
  if (rd.b != NULL) rd.alloc.free_fn(rd.b, rd.alloc.ctx);
  return e;
}

/* }================================================================== */
