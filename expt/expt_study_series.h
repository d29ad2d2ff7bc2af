/*
 * expt_study_series.h: the mean time series of a study with a band across its replications
 * (series.csv, drawn by plots/study.gp's kind 'series'). Kept only when pictures are asked
 * (--plot) for a study without a sweep: each run's goodput and offered load per bucket, at
 * most EXPT_STUDY_SERIES_MAX buckets a run (longer runs are merged into wider buckets), so a
 * run costs at most sizeof(expt_study_series), about 8 KB, beside its result.
 */
#ifndef EXPT_STUDY_SERIES_H
#define EXPT_STUDY_SERIES_H

#include <jansson.h>
#include <stddef.h>

#include "models/model_stats.h"
#include "retry/retry.h"

#define EXPT_STUDY_SERIES_MAX 500

/* One run's goodput and offered load (calls/s) per bucket of bucket_s seconds. */
typedef struct expt_study_series {
  double bucket_s;
  size_t n; /* buckets kept, at most EXPT_STUDY_SERIES_MAX */
  double goodput[EXPT_STUDY_SERIES_MAX];
  double offered[EXPT_STUDY_SERIES_MAX];
} expt_study_series;

/* Keeps res's goodput_rps and offered_rps columns into out; consecutive buckets are averaged
 * by groups of ceil(n / EXPT_STUDY_SERIES_MAX) when the run has more (the last group may be
 * shorter). A run without those columns keeps n = 0. */
void expt_study_series_of_run(const model_results *res, expt_study_series *out);

/* Writes dir/series.csv whole: "variant,t_s,n,goodput_mean,goodput_p10,goodput_p90,
 * offered_mean", one row per variant and bucket (t_s the bucket's start), from runs[v * reps
 * + r] (nv variants named by names, reps replications each). The band is the 10th and the
 * 90th percentile over the replications (linear interpolation between order statistics).
 * Returns 0, or a RETRY code with err filled. */
int expt_study_series_write(const char *dir, const expt_study_series *runs, size_t nv, size_t reps,
                            const json_t *names, retry_error *err);

#endif /* EXPT_STUDY_SERIES_H */
