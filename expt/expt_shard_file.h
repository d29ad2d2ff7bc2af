/*
 * expt_shard_file.h: the file of one shard of a study (`run --shard K/N`): DIR/shard.json holds
 * the plan (everything the outputs need but the runs) and the raw run records of the runs whose
 * index % N == K - 1; no aggregates. Below both the study, which writes its slice of the run
 * list here, and the merge (expt_shard.h), which reads the slices back: the study knows the
 * file, not the merge.
 */
#ifndef EXPT_SHARD_FILE_H
#define EXPT_SHARD_FILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "retry/retry.h"

/* The file a shard writes into its directory. */
#define EXPT_SHARD_FILE "shard.json"

/* The shard file that dir names into buf (size bytes): dir itself when it is a regular file,
 * else dir/shard.json. */
void expt_shard_file_path(char *buf, size_t size, const char *dir);

/* The hex SHA-256 (into hex) of the plan and the variants' base seeds as the shard file records
 * them: their compact JSON with sorted keys, {"plan": plan, "variant_seeds": seeds}. A merge
 * recomputes it, so a plan changed after the shard was written is refused. Returns 0, or -1
 * when out of memory. */
int expt_shard_file_digest(const json_t *plan, const json_t *variant_seeds, char hex[65]);

/* Writes dir/shard.json (atomically; dir created when missing): {"retrysim_shard": 1, "shard":
 * k, "of": n, "plan_sha256": digest, "variant_seeds": variant_seeds, "plan": plan, "runs":
 * records}. variant_seeds holds each variant's base seed (--seed, else its own), from which a
 * merge checks every record's seed. dir must not be NULL (the study refuses --shard without
 * --out). Returns 0, or RETRY_ENOMEM or RETRY_EIO with err filled; the study prints it. */
int expt_shard_file_write(const char *dir, unsigned k, unsigned n, const json_t *plan,
                          const json_t *variant_seeds, const json_t *records, retry_error *err);

#endif /* EXPT_SHARD_FILE_H */
