/*
 * expt_scenario_files.c: the files a scenario names: policy files read into the document,
 * distribution (data) files and mixtures built once and borrowed by the configs. Invariant: a
 * file is read once per load, however many runs name it.
 */
#include "expt/expt_import.h"
#include "expt/expt_scenario_int.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* {==================================================================
 * Policy files: read into the document
 * =================================================================== */

/* A POLICY value may name a service config file. The file is read once, when the scenario is
 * loaded, and a copy of its document replaces the name, so that --set and a variant's "set"
 * can patch a policy kept in a file exactly as one written inline
 * ("clients.web.policy.retryThrottling.maxTokens=5"), and so that the document recorded in
 * summary.json is the one that ran, with the file's SHA-256 next to it. Rejected: keeping the
 * name and loading the file during the conversion (as before), where an override could only
 * replace the whole policy. */

/* Every out of memory here is one message, at the current path. */
static bool files_oom(scn_ctx *c) {
  retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory loading the scenario");
  return false;
}

/* The name as written, joined to the scenario's directory unless absolute. NULL when out of
 * memory. */
static char *policy_path(const char *base_dir, const char *name) {
  size_t dir_len = name[0] == '/' ? 0 : strlen(base_dir);
  size_t n = dir_len + strlen(name) + 2;
  char *full = expt__scenario_malloc(n);
  if (full == NULL) return NULL;
  if (dir_len > 0)
    snprintf(full, n, "%s%s%s", base_dir, base_dir[dir_len - 1] == '/' ? "" : "/", name);
  else
    snprintf(full, n, "%s", name);
  return full;
}

/* An error found inside a policy file (its syntax, its shape) names the file and the place in
 * it, as the service config loader would. retry_error_set keeps the end of a path too long for
 * retry_error.source (255 bytes), "...dir/broken.json", so the file's own name survives
 * (issue 10, defect 5). */
static void fail_in_file(scn_ctx *c, const char *full, int code, const char *path, int line,
                         int column, const char *msg) {
  retry_error e;
  retry_error_clear(&e);
  retry_error_set(&e, code, full, path, line, column, "%s", msg);
  retry_json_fail_error(&c->j, &e);
}

/* A file's name as a message shows it: the end of a long name (the part that tells which
 * file), "...name-8/broken.json", made printable. */
static void shown_name(char *shown, size_t size, const char *name) {
  size_t n = strlen(name), keep = size - 8; /* room for "..." on either side and the NUL */
  if (n > keep) {
    shown[0] = shown[1] = shown[2] = '.';
    retry_json_printable(shown + 3, size - 3, name + n - keep, keep);
  } else {
    retry_json_printable(shown, size, name, keep);
  }
}

/* Reads the policy file full (named name at the current path) into c->files, or finds it
 * there. Returns its index, or -1: with an error in c->j unless quiet (out of memory is always
 * reported). I/O errors are the scenario's mistake (the name written there) and are reported at
 * the policy's path in the scenario, whatever the cause: missing, a directory or a device,
 * unreadable (issue 10, defect 6). */
static const char *not_regular(mode_t m) {
  if (S_ISDIR(m)) return "it is a directory, not a regular file";
  if (S_ISCHR(m)) return "it is a character device, not a regular file";
  if (S_ISBLK(m)) return "it is a block device, not a regular file";
  if (S_ISFIFO(m)) return "it is a FIFO (named pipe), not a regular file";
  if (S_ISSOCK(m)) return "it is a socket, not a regular file";
  return "it is not a regular file";
}

static long read_policy_file(scn_ctx *c, const char *full, const char *name, bool quiet) {
  scn_files *fs = c->files;
  for (size_t i = 0; i < fs->n; i++)
    if (strcmp(fs->files[i].path, full) == 0) return (long)i;
  char shown[72];
  shown_name(shown, sizeof shown, name);
  /* The same rule as the scenario's own file: a regular file, opened before it is read so
   * that the reason (no such file, permission denied) is the system's own words. */
  struct stat st;
  FILE *f = NULL;
  const char *why = NULL;
  if (stat(full, &st) != 0)
    why = strerror(errno);
  else if (!S_ISREG(st.st_mode))
    why = not_regular(st.st_mode);
  else if ((f = fopen(full, "rb")) == NULL)
    why = strerror(errno);
  if (f != NULL) fclose(f);
  if (why != NULL) {
    if (!quiet)
      retry_json_fail(&c->j, RETRY_EIO, "cannot open the policy file \"%s\": %s", shown, why);
    return -1;
  }
  char *buf = NULL;
  size_t len = 0;
  retry_error re;
  retry_error_clear(&re);
  if (retry_json_read_file(full, expt__scenario_retry_alloc(), &buf, &len, &re) != RETRY_OK) {
    if (re.code == RETRY_ENOMEM) return files_oom(c), -1;
    if (!quiet)
      retry_json_fail(&c->j, re.code, "cannot read the policy file \"%s\": %s", shown, re.message);
    return -1;
  }
  /* A byte order mark is skipped as in the scenario; the hash covers the bytes as read. */
  size_t skip = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  json_error_t je;
  memset(&je, 0, sizeof je);
  /* A foreign format (Envoy, Istio, ...: expt_import.h) is translated into the service config
   * it means; anything else is read as a service config, as before. */
  json_t *doc = NULL, *origins = NULL;
  expt_import_format format = EXPT_IMPORT_NATIVE;
  retry_error ie;
  retry_error_clear(&ie);
  int imported =
      expt_import_policy_text(buf + skip, len - skip, full, &doc, &origins, &format, &ie);
  if (imported == 0)
    doc = json_loadb(buf + skip, len - skip, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  char sha[65];
  expt__scenario_sha256(buf, len, sha);
  free(buf);
  if (imported < 0) {
    if (ie.code == RETRY_ENOMEM) return files_oom(c), -1;
    if (!quiet) fail_in_file(c, full, ie.code, ie.path, ie.line, ie.column, ie.message);
    return -1;
  }
  if (doc == NULL) {
    if (!quiet) {
      retry_error e;
      retry_error_clear(&e);
      retry_json_error_syntax(&e, full, &je);
      fail_in_file(c, full, e.code, e.path, e.line, e.column, e.message);
    }
    return -1;
  }
  if (!json_is_object(doc)) {
    if (!quiet) {
      char got[64], msg[128];
      retry_json_describe(doc, got, sizeof got);
      snprintf(msg, sizeof msg, "a service config must be a JSON object, got %s", got);
      fail_in_file(c, full, RETRY_ECONFIG, "$", -1, -1, msg);
    }
    json_decref(doc);
    json_decref(origins);
    return -1;
  }
  if (fs->n == fs->cap) {
    size_t ncap = fs->cap ? 2 * fs->cap : 4;
    scn_policy_file *nf = expt__scenario_malloc(ncap * sizeof *nf);
    if (nf == NULL) {
      json_decref(doc);
      json_decref(origins);
      return files_oom(c), -1;
    }
    if (fs->n > 0) memcpy(nf, fs->files, fs->n * sizeof *nf);
    free(fs->files);
    fs->files = nf;
    fs->cap = ncap;
  }
  scn_policy_file *pf = &fs->files[fs->n];
  memset(pf, 0, sizeof *pf);
  pf->content = doc;
  pf->path = expt__scenario_strdup(full);
  pf->name = expt__scenario_strdup(name);
  pf->named_at = json_array();
  pf->origins = origins;
  pf->format = imported == 1 ? expt_import_format_name(format) : NULL;
  memcpy(pf->sha256, sha, sizeof sha);
  fs->n++; /* counted now: destroy frees whatever of it exists */
  if (pf->path == NULL || pf->name == NULL || pf->named_at == NULL) return files_oom(c), -1;
  return (long)(fs->n - 1);
}

/* The "policy" member of holder, at the current path, when it names a file. */
static bool expand_one(scn_ctx *c, json_t *holder, bool quiet) {
  json_t *v = json_object_get(holder, "policy");
  if (!json_is_string(v) || json_string_value(v)[0] == '\0') return true;
  size_t mark = retry_json_path_push_key(&c->j, "policy");
  char *full = policy_path(c->base_dir, json_string_value(v));
  long i = full != NULL ? read_policy_file(c, full, json_string_value(v), quiet) : -1;
  free(full);
  if (full == NULL) return files_oom(c);
  if (i < 0) {
    retry_json_path_pop(&c->j, mark);
    return !retry_json_failed(&c->j);
  }
  scn_policy_file *pf = &c->files->files[i];
  /* The path is noted once per file, however many runs met it there. */
  bool seen = false;
  for (size_t k = 0; k < json_array_size(pf->named_at); k++)
    seen = seen || strcmp(json_string_value(json_array_get(pf->named_at, k)), c->j.path) == 0;
  json_t *copy = json_deep_copy(pf->content);
  if (copy == NULL || json_object_set_new(holder, "policy", copy) != 0 ||
      (!seen && json_array_append_new(pf->named_at, json_string(c->j.path)) != 0))
    return files_oom(c);
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* events[i].policy and operators[i].do.policy: an operator's policy action
 * (expt_scenario_ops.c). */
static bool expand_actions(scn_ctx *c, json_t *doc, const char *key, bool quiet) {
  json_t *list = json_object_get(doc, key);
  if (!json_is_array(list)) return true;
  size_t mark = retry_json_path_push_key(&c->j, key);
  for (size_t i = 0; i < json_array_size(list); i++) {
    json_t *holder = json_array_get(list, i);
    size_t m2 = retry_json_path_push_index(&c->j, i);
    if (key[0] == 'o' && json_is_object(holder)) { /* a rule's action is its "do" */
      retry_json_path_push_key(&c->j, "do");
      holder = json_object_get(holder, "do");
    }
    if (json_is_object(holder) && !expand_one(c, holder, quiet)) return false;
    retry_json_path_pop(&c->j, m2);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* The places a POLICY may be: clients.NAME.policy and services.NAME.calls[i].policy. Anything
 * of the wrong shape on the way is left alone: the conversion reports it at its place. */
bool expt__scenario_expand_policies(scn_ctx *c, json_t *doc, bool quiet) {
  json_t *clients = json_object_get(doc, "clients");
  size_t mark = retry_json_path_push_key(&c->j, "clients");
  for (void *it = json_is_object(clients) ? json_object_iter(clients) : NULL; it != NULL;
       it = json_object_iter_next(clients, it)) {
    json_t *cl = json_object_iter_value(it);
    if (!json_is_object(cl)) continue;
    size_t m2 = retry_json_path_push_key(&c->j, json_object_iter_key(it));
    if (!expand_one(c, cl, quiet)) return false;
    retry_json_path_pop(&c->j, m2);
  }
  retry_json_path_pop(&c->j, mark);
  json_t *services = json_object_get(doc, "services");
  mark = retry_json_path_push_key(&c->j, "services");
  for (void *it = json_is_object(services) ? json_object_iter(services) : NULL; it != NULL;
       it = json_object_iter_next(services, it)) {
    json_t *calls = json_object_get(json_object_iter_value(it), "calls");
    if (!json_is_array(calls)) continue;
    size_t m2 = retry_json_path_push_key(&c->j, json_object_iter_key(it));
    retry_json_path_push_key(&c->j, "calls");
    for (size_t i = 0; i < json_array_size(calls); i++) {
      json_t *call = json_array_get(calls, i);
      if (!json_is_object(call)) continue;
      size_t m3 = retry_json_path_push_index(&c->j, i);
      if (!expand_one(c, call, quiet)) return false;
      retry_json_path_pop(&c->j, m3);
    }
    retry_json_path_pop(&c->j, m2);
  }
  retry_json_path_pop(&c->j, mark);
  return expand_actions(c, doc, "events", quiet) && expand_actions(c, doc, "operators", quiet);
}

/* }================================================================== */

/* {==================================================================
 * Distribution files and mixtures: built once, borrowed by the configs
 * =================================================================== */

/* A distribution file cannot be read into the document as a policy is (its samples are not
 * JSON and may be millions), so it is parsed into the kernel's table and the name stays in the
 * document. The bytes are read once, hashed, and parsed from memory (fmemopen), so that the
 * SHA-256 in summary.json is of exactly the bytes the runs drew from. */
static bool grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return true;
  size_t ncap = *cap ? 2 * *cap : 4;
  void *np = expt__scenario_malloc(ncap * size);
  if (np == NULL) return false;
  if (n > 0) memcpy(np, *p, n * size);
  free(*p);
  *p = np;
  *cap = ncap;
  return true;
}

/* Parses buf[0..len) as the CSV of file full. Errors in it name the file and the line, as the
 * kernel reports them (a long path keeps its end, the file's own name). */
static sim_empirical *parse_data_file(scn_ctx *c, const char *full, const char *buf, size_t len) {
  retry_error re;
  retry_error_clear(&re);
  sim_empirical *e = NULL;
  if (len == 0) {
    retry_error_set(&re, RETRY_EINVAL, full, NULL, -1, -1,
                    "the file is empty: give a header (\"latency_ms\", or "
                    "\"lower_ms,upper_ms,count\") and rows");
  } else {
    /* fmemopen reads but never writes in mode "r"; the cast only drops const. */
    FILE *f = fmemopen((void *)(uintptr_t)buf, len, "r");
    if (f == NULL)
      retry_error_set(&re, RETRY_ENOMEM, full, NULL, -1, -1, "out of memory reading the file");
    else
      e = sim_empirical_read_csv(f, full, expt__scenario_retry_alloc(), &re);
    if (f != NULL) fclose(f);
  }
  if (e != NULL) return e;
  if (re.code == RETRY_ENOMEM) return files_oom(c), NULL;
  fail_in_file(c, full, re.code == RETRY_EIO ? RETRY_EIO : RETRY_ECONFIG, "", re.line, -1,
               re.message);
  return NULL;
}

const sim_empirical *expt__scenario_data_file(scn_ctx *c, const char *name) {
  scn_files *fs = c->files;
  assert(fs != NULL);
  char *full = policy_path(c->base_dir, name);
  if (full == NULL) return files_oom(c), NULL;
  scn_data_file *df = NULL;
  for (size_t i = 0; i < fs->n_data && df == NULL; i++)
    if (strcmp(fs->data[i].path, full) == 0) df = &fs->data[i];
  if (df == NULL) {
    char shown[72];
    retry_json_printable(shown, sizeof shown, name, 64);
    struct stat st;
    const char *why = NULL;
    if (stat(full, &st) != 0)
      why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
      why = not_regular(st.st_mode);
    char *buf = NULL;
    size_t len = 0;
    retry_error re;
    retry_error_clear(&re);
    if (why == NULL &&
        retry_json_read_file(full, expt__scenario_retry_alloc(), &buf, &len, &re) != RETRY_OK) {
      if (re.code == RETRY_ENOMEM) {
        free(full);
        return files_oom(c), NULL;
      }
      why = re.message;
    }
    if (why != NULL) {
      retry_json_fail(&c->j, RETRY_EIO, "cannot open the distribution file \"%s\": %s", shown, why);
      free(full);
      return NULL;
    }
    char sha[65];
    expt__scenario_sha256(buf, len, sha);
    sim_empirical *e = parse_data_file(c, full, buf, len);
    free(buf);
    if (e == NULL || !grow((void **)&fs->data, &fs->cap_data, fs->n_data, sizeof *fs->data)) {
      sim_empirical_destroy(e);
      free(full);
      return e == NULL ? NULL : (files_oom(c), NULL);
    }
    df = &fs->data[fs->n_data++]; /* counted now: destroy frees whatever of it exists */
    memset(df, 0, sizeof *df);
    df->dist = e;
    df->path = expt__scenario_strdup(full);
    df->name = expt__scenario_strdup(name);
    df->named_at = json_array();
    memcpy(df->sha256, sha, sizeof sha);
    if (df->path == NULL || df->name == NULL || df->named_at == NULL) {
      free(full);
      return files_oom(c), NULL;
    }
  }
  free(full);
  /* The path is noted once per file, however many runs met it there. */
  bool seen = false;
  for (size_t k = 0; k < json_array_size(df->named_at); k++)
    seen = seen || strcmp(json_string_value(json_array_get(df->named_at, k)), c->j.path) == 0;
  if (!seen && json_array_append_new(df->named_at, json_string(c->j.path)) != 0)
    return files_oom(c), NULL;
  return df->dist;
}

bool expt__scenario_keep_mixture(scn_ctx *c, sim_mixture *m) {
  scn_files *fs = c->files;
  assert(fs != NULL);
  if (!grow((void **)&fs->mixtures, &fs->cap_mixtures, fs->n_mixtures, sizeof *fs->mixtures)) {
    sim_mixture_destroy(m);
    return files_oom(c);
  }
  fs->mixtures[fs->n_mixtures++] = m;
  return true;
}
