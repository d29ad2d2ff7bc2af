/*
 * expt_axis.h: the values a study varies, below the scenario loader, the sweep and the search
 * that all read them: numbers with units ("400/s", "2s"), the ranges of a sweep's axes, the keys
 * that no sweep or search may vary, and the limits of both blocks. Pure functions over jansson
 * values; nothing here knows a scenario.
 */
#ifndef EXPT_AXIS_H
#define EXPT_AXIS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "retry/retry.h"

/* Limits of a sweep: axes of one sweep, values of one axis, points of the grid. */
#define EXPT_AXIS_MAX_AXES 8
#define EXPT_AXIS_MAX_STEPS 10000
#define EXPT_AXIS_MAX_POINTS 100000

/* A linked axis moves at most this many paths; a label has at most this many characters. */
#define EXPT_AXIS_MAX_LINKED 8
#define EXPT_AXIS_MAX_LABEL 48

/* The paths a sweep's axis object moves: its "path", or each string of its "paths" (a linked
 * axis), into out[0..max). Returns how many (0 for an axis with neither). Borrowed from ax. */
size_t expt_axis_paths(const json_t *ax, const char **out, size_t max);

/* Limits and default of a search's batches: replications per batch and at one probe, probes in
 * all (the loader checks a "search" block against them; expt_search.h uses them). */
#define EXPT_AXIS_SEARCH_DEFAULT_REPS 20
#define EXPT_AXIS_SEARCH_MAX_REPS 100000
#define EXPT_AXIS_SEARCH_MAX_PROBES 64

/* A number as a sweep's ends are written: a JSON number (text false), or a string of a
 * number and a unit suffix ("400/s", "2s", "50%"; text true, unit the suffix, maybe "").
 * integer: the number is integral (and, for a JSON number, was written as an integer). */
typedef struct expt_axis_scalar {
  double x;
  char unit[16];
  bool text;
  bool integer;
} expt_axis_scalar;

/* Reads v as a sweep's end. Returns 0, or RETRY_EINVAL with the reason alone in err's message
 * ("\"fast\" is not a number with a unit such as \"400/s\""; no source, no path: the caller
 * says where). err may be NULL. */
int expt_axis_scalar_parse(const json_t *v, expt_axis_scalar *out, retry_error *err);
/* The value x written like `like`: a JSON number, or a string with like's unit; an integer
 * (no decimals) when integer is true, else the shortest of 12 significant digits. New
 * reference, NULL when out of memory. */
json_t *expt_axis_scalar_json(const expt_axis_scalar *like, double x, bool integer);

/* The values of a range from `from` to `to` in steps values (steps >= 2, or 1 when from ==
 * to), linear or logarithmic (both ends > 0). Both ends numbers, or both strings with the
 * same unit. Integers stay integers when both ends are integral and so is every step
 * (linear), or when both ends are integral (log: values rounded, and refused when two
 * round to the same integer). Returns a new array, or NULL with err filled: RETRY_EINVAL and
 * the reason alone in its message, or RETRY_ENOMEM ("out of memory"). err may be NULL. */
json_t *expt_axis_range(const json_t *from, const json_t *to, long steps, bool log,
                        retry_error *err);

/* The key head (the first key of a path) names when a sweep or a search may not vary it
 * ("variants", "expect", "sweep", "search", "replications", "confidence", "baseline",
 * "warmup": they define the runs and the study), else NULL. */
const char *expt_axis_reserved(const char *head);

#endif /* EXPT_AXIS_H */
