/*
 * expt_shard_file.c: the file of one shard of a study (DIR/shard.json), written by the study
 * that runs the slice and read back by the merge (expt_shard.c). Invariant: the file is written
 * atomically, so a merge never reads half of one.
 */
#include "expt/expt_shard_file.h"

#include <assert.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "expt/expt_output.h"
#include "expt/expt_json.h"

void expt_shard_file_path(char *buf, size_t size, const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0 && S_ISREG(st.st_mode)) {
    snprintf(buf, size, "%s", dir);
    return;
  }
  size_t n = strlen(dir);
  snprintf(buf, size, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", EXPT_SHARD_FILE);
}

/* The digest is over a canonical dump (compact, sorted keys, reals at jansson's round-trip
 * precision), so the same plan read back from the file hashes the same: key order and spacing
 * in the file do not matter, any changed value does. */
int expt_shard_file_digest(const json_t *plan, const json_t *variant_seeds, char hex[65]) {
  json_t *both = json_pack("{s:O, s:O}", "plan", plan, "variant_seeds", variant_seeds);
  char *text = both != NULL ? json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(both);
  if (text == NULL) return -1;
  struct sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, strlen(text), (const uint8_t *)text);
  sha256_digest(&ctx, sizeof digest, digest);
  free(text);
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[64] = '\0';
  return 0;
}

int expt_shard_file_write(const char *dir, unsigned k, unsigned n, const json_t *plan,
                          const json_t *variant_seeds, const json_t *records, retry_error *err) {
  assert(dir != NULL);
  char hex[65];
  json_t *doc = expt_shard_file_digest(plan, variant_seeds, hex) == 0
                    ? json_pack("{s:i, s:i, s:i, s:s, s:O, s:O, s:O}", "retrysim_shard", 1, "shard",
                                (int)k, "of", (int)n, "plan_sha256", hex, "variant_seeds",
                                variant_seeds, "plan", plan, "runs", records)
                    : NULL;
  if (doc == NULL) {
    retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory");
    return RETRY_ENOMEM;
  }
  int rc = expt_output_make_dirs(dir, err);
  if (rc == 0) {
    char path[4096];
    expt_shard_file_path(path, sizeof path, dir);
    rc = expt_output_write_atomic(path, expt_json_fill, doc, err);
  }
  json_decref(doc);
  /* A failure that left no message (the first error wins, so this fills only an empty err)
   * can only have been an allocation. */
  if (rc != 0) retry_error_set(err, rc, NULL, NULL, -1, -1, "out of memory");
  return rc;
}
