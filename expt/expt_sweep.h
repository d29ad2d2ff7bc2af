/*
 * expt_sweep.h: the axes of a sweep and the grid of its points. An axis is a --set path and
 * the values it takes, from the scenario's "sweep" block or from the command line's
 * `--sweep PATH=v1,v2,...`, `--sweep PATH=FROM:TO:N` or `--sweep PATH=FROM:TO:N:log`. A point
 * is one value of every axis, handed to expt_scenario_derive as a list of expt_set. The grid's
 * order is the first axis slowest (point index = ((i0 * n1) + i1) * n2 + i2 ...).
 * Owns its paths and values (as JSON and as the text a expt_set carries).
 */
#ifndef EXPT_SWEEP_H
#define EXPT_SWEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "expt/expt_axis.h"
#include "expt/expt_scenario.h"
#include "retry/retry.h"

/* Limits of a sweep (expt_axis.h says why they live there). */
#define EXPT_SWEEP_MAX_AXES EXPT_AXIS_MAX_AXES
#define EXPT_SWEEP_MAX_STEPS EXPT_AXIS_MAX_STEPS
#define EXPT_SWEEP_MAX_POINTS EXPT_AXIS_MAX_POINTS

/* The most --set overrides of one point: every path of every axis. */
#define EXPT_SWEEP_MAX_SETS (EXPT_AXIS_MAX_AXES * EXPT_AXIS_MAX_LINKED)

typedef struct expt_sweep_axis {
  char *path;     /* its name in tables (points.csv's column): the --set path of a plain axis;
                     a linked axis's label, else its paths joined by "+" */
  char *paths[EXPT_AXIS_MAX_LINKED]; /* the --set paths it moves together (one: a plain axis) */
  size_t n_paths;
  char *label;    /* the "label" the sweep gave it, or NULL */
  json_t *values; /* array of its values, none null */
  char **texts;   /* each value as the JSON text a expt_set carries */
} expt_sweep_axis;

typedef struct expt_sweep {
  expt_sweep_axis axes[EXPT_SWEEP_MAX_AXES];
  size_t n_axes;
} expt_sweep;

/* An empty sweep (no axis: one point with no overrides). */
void expt_sweep_init(expt_sweep *sw);
/* Frees what sw owns; sw is empty afterwards. */
void expt_sweep_free(expt_sweep *sw);

/* Adds the axis of one --sweep argument "PATH=SPEC", SPEC being v1,v2,... (each value JSON
 * when it parses as JSON, else a string, as --set's), FROM:TO:N, or FROM:TO:N:log (or
 * :linear). "PATH1+PATH2+...=SPEC" is a linked axis: every path takes each value together. Errors (RETRY_EINVAL, source "<command line>", message starting with
 * `--sweep "ARG"`): no '=', a bad path, an empty value, a bad range, a path given twice, too
 * many axes or points. Returns 0 or the error's code. For retrysim.c's option parsing. */
int expt_sweep_add_arg(expt_sweep *sw, const char *arg, retry_error *err);

/* Adds the axes of a scenario's "sweep" block (the loader validated its shape, so errors
 * here are only out of memory). Returns 0 or RETRY_ENOMEM with err filled. */
int expt_sweep_add_json(expt_sweep *sw, const json_t *block, retry_error *err);

/* The study's axes: the command line's (cmd, when it has any: they replace the scenario's),
 * else the scenario's "sweep" block. Fills *out (initialised here), then checks every axis
 * against s (expt_sweep_check). Returns 0 or the error's code with err filled; *out is freed
 * on error. */
int expt_sweep_for_scenario(const expt_scenario *s, const expt_sweep *cmd, expt_sweep *out,
                           retry_error *err);

/* Checks that every axis's path reaches a value (not null) in every run's document of s: a
 * sweep changes values, it does not add them. The error names the path, the run, and where
 * the walk stopped; source is s's file with path "$.sweep[i].path" for the scenario's axes
 * (from_scenario), "<command line>" for --sweep's. Returns 0 or RETRY_ECONFIG. */
int expt_sweep_check(const expt_sweep *sw, const expt_scenario *s, bool from_scenario,
                    const char *source, retry_error *err);

/* The number of points: the product of the axes' sizes, 1 without axes. */
size_t expt_sweep_n_points(const expt_sweep *sw);
/* The overrides of one point: every path of every axis (n_axes without linked axes). */
size_t expt_sweep_n_sets(const expt_sweep *sw);
/* Whether an axis is linked or labelled: the study then takes its axes from
 * expt_sweep_axes_json, not from the points' overrides. */
bool expt_sweep_has_named_axes(const expt_sweep *sw);
/* Point i's overrides into sets[0..expt_sweep_n_sets) (the first axis slowest, each axis's
 * paths in order); the strings are sw's, valid until expt_sweep_free. */
void expt_sweep_point(const expt_sweep *sw, size_t i, expt_set *sets);
/* The value of axis a at point i. Borrowed. */
const json_t *expt_sweep_point_value(const expt_sweep *sw, size_t i, size_t a);
/* {"name": value, ...} of point i (each axis's path field), in axis order. New reference, NULL
 * when out of memory. */
json_t *expt_sweep_point_json(const expt_sweep *sw, size_t i);
/* [{"path": ..., "values": [...]}, ...], with "label" when the axis has one and "paths" when it
 * is linked. New reference, NULL when out of memory. */
json_t *expt_sweep_axes_json(const expt_sweep *sw);

/* {==================================================================
 * The hook of `retrysim run` (cli/retrysim.c)
 * =================================================================== */

struct expt_study_spec;
struct expt_run_opts;

/* Whether s, with the command line's axes cmd (may be NULL), asks for a sweep or a search:
 * then the run is a study, even with one replication. */
bool expt_sweep_wanted(const expt_scenario *s, const expt_sweep *cmd);

/* Runs the study tmpl describes (replications, confidence, baseline, jobs, shard: everything
 * but the points) over the sweep's points: cmd's axes when it has any, else the scenario's
 * "sweep"; one scenario derived per point (expt_scenario_derive) and checked as `run` checks
 * the one it loads (expectations, no run's world over max_bytes), then expt_study_run. With a
 * warning on opts->err for an axis that a variant's "set" overrides, and with a
 * "search" in s, checks its two ends as points, then runs the search instead
 * (expt_search_run_study). Returns the exit status,
 * every error printed on opts->err as one "retrysim: " line (a point that does not
 * validate: the error, then the point's values). */
int expt_sweep_run_study(const expt_scenario *s, const expt_sweep *cmd,
                        const struct expt_study_spec *tmpl, uint64_t max_bytes,
                        const struct expt_run_opts *opts);

/* The checks `run` makes of a sweep's points before it runs any (each point derived and
 * checked, then freed), without running: for `validate` (cmd NULL: the scenario's sweep) and
 * `plan` (for_plan: a scenario with a "search" is refused, its shards could not run); for
 * `validate`, a search's two ends are derived and checked as points (every probe lies
 * between them). Sets
 * *n_points (1 without a sweep). Returns the exit status, errors printed on f. */
int expt_sweep_check_study(const expt_scenario *s, const expt_sweep *cmd, uint64_t max_bytes,
                          bool for_plan, size_t *n_points, FILE *f);

/* }================================================================== */

#endif /* EXPT_SWEEP_H */
