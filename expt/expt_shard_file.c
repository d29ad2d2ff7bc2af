/*
 * expt_shard_file.c: the file of one shard of a study (DIR/shard.json), written by the study
 * that runs the slice and read back by the merge (expt_shard.c). Invariant: the file is written
 * atomically, so a merge never reads half of one.
 */
#include "expt/expt_shard_file.h"

#include <assert.h>
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

int expt_shard_file_write(const char *dir, unsigned k, unsigned n, const json_t *plan,
                          const json_t *records, retry_error *err) {
  assert(dir != NULL);
  json_t *doc = json_pack("{s:i, s:i, s:i, s:O, s:O}", "retrysim_shard", 1, "shard", (int)k, "of",
                          (int)n, "plan", plan, "runs", records);
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
