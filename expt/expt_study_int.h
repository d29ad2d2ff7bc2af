/*
 * expt_study_int.h: what the files of the study driver share (expt_study.c, expt_study_pool.c,
 * expt_study_files.c, expt_study_table.c, expt_study_finish.c): the outputs' state, read back
 * from a plan and its records.
 */
#ifndef EXPT_STUDY_INT_H
#define EXPT_STUDY_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "retry/retry.h"

#include "expt/expt_error.h"
#include "expt/expt_study.h"

/* What the outputs are made of, read back from a plan and its records. */
typedef struct expt__study {
  const json_t *plan;
  size_t reps, nv, np, n_axes;
  double level;
  bool holm; /* the plan's study.adjust is "holm" */
  long baseline;         /* index of the baseline variant, -1 for none */
  const json_t *names;   /* the variants' names */
  const json_t *axes;    /* [{path, values}] */
  const json_t *points;  /* [{point, values}] */
  const json_t *records; /* every run record, in run-list order */
  json_t **aggs;         /* np * nv aggregate objects */
  json_t *summary;       /* summary.json */
} expt__study;

/* The name of variant v. Borrowed from the plan. */
const char *expt__study_variant_name(const expt__study *st, size_t v);
/* Aggregates every (point, variant) into st->aggs. Returns 0 or RETRY_ENOMEM. */
int expt__study_aggregate(expt__study *st);
/* Builds st->summary (summary.json): the plan's provenance, the study block, the points with
 * their aggregates, the search (local runs only, may be NULL) and every run record. Returns 0
 * or RETRY_ENOMEM. */
int expt__study_make_summary(expt__study *st, const json_t *search);
/* Writes summary.json, runs.csv, points.csv and paired.csv (with a baseline) into dir, each
 * whole. Returns 0, or a RETRY code with err filled. */
int expt__study_write_files(const expt__study *st, const char *dir, retry_error *err);
/* The point's values as "path=value, path=value" (empty without a sweep). */
void expt__study_point_label(const expt__study *st, size_t p, char *buf, size_t size);
/* Prints the text table on f. Returns 0, or -1 on a write error. */
int expt__study_print_table(const expt__study *st, FILE *f);

#endif /* EXPT_STUDY_INT_H */
