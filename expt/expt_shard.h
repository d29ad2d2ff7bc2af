/*
 * expt_shard.h: the shards of a study (`run --shard K/N`) and their merge (`retrysim merge`). A
 * shard file DIR/shard.json holds the plan (everything the outputs need but the runs) and the
 * raw run records of the runs whose index % N == K - 1; no aggregates. Merging N shards of one
 * plan gives the records of every run, from which expt_study_finish writes what a local run
 * writes, byte for byte.
 */
#ifndef EXPT_SHARD_H
#define EXPT_SHARD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "expt/expt_shard_file.h"

/* `retrysim merge DIR... --out DIR`: reads dirs[i]/shard.json (or dirs[i] itself when it
 * names a file), checks that they are the shards 1..N of one plan, each once, and writes the
 * files of a local run into out_dir; the text table on out unless quiet. Returns the exit
 * status: 2 (naming the file and the reason) for a file that is not a shard, shards of
 * different plans, a shard missing or given twice; 3 on a write error. With o->check (and
 * o->junit), checks the expectations of the plan's document as a local run of the study does
 * (1 when one fails); o->plot draws the pictures and the report. o supplies out_dir, quiet,
 * out, err, check, junit, plot and command; its format is text. */
struct expt_run_opts;
int expt_shard_merge(const char *const *dirs, size_t n, const struct expt_run_opts *o);

#endif /* EXPT_SHARD_H */
