/*
 * expt_scenario.c: loading a scenario: the file, its SHA-256, the policy files it names (read
 * into the document), the command line's --set overrides, the variants with their own
 * overrides and expectations, the provenance (files read, overrides), and the accessors.
 *
 * Owns the document (after --set), one resolved document, config and expectation set per run.
 * Invariant: a expt_scenario exists only when every run's document converted without error,
 * so nothing starts unless the whole file is right.
 */
#include "expt/expt_scenario_int.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nettle/sha2.h>

#include "expt/expt_import.h"
#include "models/model_estimate.h"

/* One run: the base document, or one variant of it. In a scenario abandoned half-way any
 * member may still be NULL; expt_scenario_destroy relies on every release call accepting that. */
typedef struct scn_run {
  char *name;                /* the variant's name, or the scenario's */
  model_config *cfg;         /* converted from doc */
  expt_recovery_cfg recovery; /* how its recovery is judged */
  json_t *doc;               /* the resolved document */
  json_t *expect;            /* merged expectations, NULL when none */
  size_t variant;            /* its index in "variants" (0 without variants) */
} scn_run;

struct expt_scenario {
  char *name;         /* the base document's name */
  char sha256[65];    /* of the bytes as read */
  json_t *doc;        /* the document after --set */
  scn_files files;    /* the policy files read into it */
  json_t *inputs;     /* provenance: the files read (expt_scenario_inputs) */
  json_t *overrides;  /* provenance: the --set overrides as given */
  char *source;       /* the scenario file as named, for messages */
  char *base_dir;     /* the directory of relative policy and data files, kept for derive */
  char *default_name; /* the name used when the document has none, kept for derive */
  bool has_variants;  /* "variants" was present: the runs are the variants */
  scn_run *runs;      /* n_runs entries, zeroed until each is built */
  size_t n_runs;      /* 1 without variants; set only once runs exists */
};

/* {==================================================================
 * Allocation, with a hook for the tests' failure injection
 * =================================================================== */

/* The hook is process-wide state, which sim/ otherwise avoids: the loader's API takes no
 * allocator (the command line has no use for one), and the only caller that wants failures
 * injected is the test, which runs one thread. */
static bool (*fail_hook)(void *ctx);
static void *fail_hook_ctx;

void expt__scenario_set_fail_hook(bool (*fail)(void *ctx), void *ctx) {
  fail_hook = fail;
  fail_hook_ctx = ctx;
}

/* Asked before every allocation of the loader. The chaos test in tests/test_expt_scenario.c
 * fails the Nth allocation for N = 0, 1, 2, ... and checks that each failure is reported as
 * RETRY_ENOMEM and leaks nothing, so an allocation that bypassed this hook would be a failure
 * path the test never exercises. */
static bool should_fail(void) { return fail_hook != NULL && fail_hook(fail_hook_ctx); }

/* A zero size is bumped to 1: malloc(0) may return NULL, which a caller would take for out of
 * memory. No caller means to ask for 0 bytes, but one that did must not fail spuriously. */
void *expt__scenario_malloc(size_t size) { return should_fail() ? NULL : malloc(size ? size : 1); }

void *expt__scenario_calloc(size_t n, size_t size) {
  return should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

char *expt__scenario_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = expt__scenario_malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

/* libretry's allocator interface (malloc/realloc/free with a context), wired to the same hook,
 * so a policy loaded by retry_config_load_* fails under the test exactly like the rest of the
 * loader. Frees never fail, and the context is unused because the hook's state is global. */
static void *hook_malloc(size_t size, void *ctx) {
  (void)ctx;
  return expt__scenario_malloc(size);
}

static void *hook_realloc(void *p, size_t size, void *ctx) {
  (void)ctx;
  return should_fail() ? NULL : realloc(p, size);
}

static void hook_free(void *p, void *ctx) {
  (void)ctx;
  free(p);
}

static const retry_allocator hook_alloc = {hook_malloc, hook_realloc, hook_free, NULL};

/* Without a hook, NULL tells libretry to use its default allocator: the production path pays
 * nothing for the test facility. */
const retry_allocator *expt__scenario_retry_alloc(void) {
  return fail_hook != NULL ? &hook_alloc : NULL;
}

/* }================================================================== */

/* {==================================================================
 * SHA-256, by nettle
 * =================================================================== */

/* Debian's nettle (nettle-dev) replaces the hand-written FIPS 180-4 code this file once had: a
 * hash that provenance relies on is better taken from a library that is reviewed and tested
 * for it. tests/test_expt_scenario.c still checks the NIST vectors through this function. */
void expt__scenario_sha256(const void *data, size_t len, char hex[65]) {
  struct sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, len, data);
  sha256_digest(&ctx, sizeof digest, digest);
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[64] = '\0';
}

/* }================================================================== */

/* {==================================================================
 * Errors outside a conversion (reading, parsing, --set)
 * =================================================================== */

/* Every error here goes through retry_error_set (retry_json.h), which keeps the first error:
 * a cleanup path that fails after the real error (out of memory while unwinding, say) must not
 * replace the message that explains the cause. A conversion's error is copied over whole, the
 * same way. Syntax errors are reported by retry_json_error_syntax, as in the service config
 * loader: a duplicate key is one, with its line and column (which copy should win is a guess
 * we refuse to make). */
static void copy_error(retry_error *err, const retry_error *e) {
  retry_error_set(err, e->code, e->source, e->path, e->line, e->column, "%s", e->message);
}

/* }================================================================== */

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
  json_t *doc = NULL;
  retry_error ie;
  retry_error_clear(&ie);
  int imported = expt_import_policy_text(buf + skip, len - skip, full, &doc, &ie);
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
    return -1;
  }
  if (fs->n == fs->cap) {
    size_t ncap = fs->cap ? 2 * fs->cap : 4;
    scn_policy_file *nf = expt__scenario_malloc(ncap * sizeof *nf);
    if (nf == NULL) {
      json_decref(doc);
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
  return true;
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

/* {==================================================================
 * Overrides: --set and a variant's "set"
 * =================================================================== */

/* VALUE is JSON when it parses as JSON ("4", "true", "{\"dist\": ...}", "null"), else a
 * string ("2s", "lifo"), so that the common cases need no shell quoting of JSON quotes.
 * A NULL value (the API's way to remove a key) becomes JSON null. Duplicate keys are refused as
 * in the file; such a value, like any invalid JSON, then falls back to a string, so the mistake
 * surfaces in validation as a value of the wrong type. json_string fails on bytes that are not
 * UTF-8 (and when out of memory, which the caller cannot tell apart). */
static json_t *set_value(const char *text) {
  if (text == NULL) return json_null();
  json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
  return v != NULL ? v : json_string(text);
}

/* --set overrides, in order, on the parsed document. They change the document itself: what
 * the runs record as their document is the scenario as it was run. The paths are the
 * command line's, so errors name "<command line>" and quote the path; a wrong value (as
 * opposed to a wrong path) is found later by validation, at its place in the document. */
/* The overrides as given, for provenance: the text of each value, not what it parsed to (the
 * document shows that), so that the record reads like the command line. */
static json_t *overrides_json(const expt_set *sets, size_t n_sets) {
  json_t *a = json_array();
  for (size_t i = 0; a != NULL && i < n_sets; i++) {
    json_t *o = json_object();
    /* A value that is not UTF-8 cannot be a JSON string; it is refused by apply_sets anyway. */
    json_t *v = sets[i].value != NULL ? json_string(sets[i].value) : json_null();
    if (o == NULL || v == NULL || json_object_set_new(o, "path", json_string(sets[i].path)) != 0 ||
        json_object_set_new(o, "value", v) != 0 || json_array_append_new(a, o) != 0) {
      if (o == NULL) json_decref(v);
      json_decref(o);
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

/* label is how messages name an override: "--set" for the command line's, "override" for a
 * derived scenario's (expt_scenario_derive). */
static bool apply_sets(json_t *doc, const expt_set *sets, size_t n_sets, const char *label,
                       retry_error *err) {
  for (size_t i = 0; i < n_sets; i++) {
    assert(sets[i].path != NULL);
    char shown[72], why[128] = "";
    /* The path is cut for display: the message has 160 bytes and needs room for the reason. */
    retry_json_printable(shown, sizeof shown, sets[i].path, 64);
    json_t *v = set_value(sets[i].value);
    if (v == NULL) {
      retry_error_set(err, RETRY_ECONFIG, "<command line>", "", -1, -1,
                      "%s \"%s\": the value is not valid UTF-8", label, shown);
      return false;
    }
    /* path_set consumes v whatever it returns, so no error path below releases it. On an error
     * the document may already hold intermediate objects that path_set created; that is
     * harmless because the caller destroys the whole scenario. */
    int rc = expt__scenario_path_set(doc, sets[i].path, v, why, sizeof why);
    if (rc == RETRY_ENOMEM) {
      retry_error_set(err, RETRY_ENOMEM, "<command line>", "", -1, -1, "out of memory applying %s",
                      label);
      return false;
    }
    if (rc != RETRY_OK) {
      retry_error_set(err, RETRY_ECONFIG, "<command line>", "", -1, -1, "%s \"%s\": %s", label,
                      shown, why);
      return false;
    }
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Variants and expectations: shapes, checked with the base document
 * =================================================================== */

static const char *const variant_keys[] = {"name", "description", "set", "expect"};

/* A variant's "set": each key a path that does not reach "variants" or "expect" (a variant
 * cannot define variants, and its expectations have their own key). Values are anything:
 * they are validated where they land, in the variant's document. */
static bool check_set(scn_ctx *c, json_t *set) {
  if (!json_is_object(set)) {
    retry_json_fail_value(&c->j, "\"set\"", "an object {\"path\": value, ...}", set);
    return false;
  }
  for (void *it = json_object_iter(set); it != NULL; it = json_object_iter_next(set, it)) {
    const char *path = json_object_iter_key(it);
    char shown[72], why[128], head[64] = "";
    retry_json_printable(shown, sizeof shown, path, 64);
    /* No [key=value] selectors here (allow_match false): a scenario's arrays are addressed by
     * position, and a selector could not say what to create when nothing matched. */
    if (!expt__scenario_path_check(path, false, why, sizeof why)) {
      retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": %s", shown, why);
      return false;
    }
    expt__scenario_path_head(path, head, sizeof head);
    if (strcmp(head, "variants") == 0 || strcmp(head, "expect") == 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "bad path \"%s\": a variant may not change \"variants\" or \"expect\" "
                      "(it has its own \"expect\")",
                      shown);
      return false;
    }
    if (strcmp(head, "sweep") == 0 || strcmp(head, "search") == 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "bad path \"%s\": a variant may not change \"%s\" (every variant "
                      "runs at the same points)",
                      shown, head);
      return false;
    }
  }
  return true;
}

/* One variant of the base document: its keys, a unique valid name, the syntax of its set
 * paths and the shape of its expectations. Whether the paths apply, and whether the result
 * is valid, is found when its document is built (build_variant). */
static bool check_variant(scn_ctx *c, json_t *variants, size_t i) {
  json_t *v = json_array_get(variants, i);
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "each variant", "an object {\"name\": ..., \"set\": {...}}", v);
    return false;
  }
  const char *name = NULL, *desc = NULL;
  if (!expt__scenario_check_keys(c, v, variant_keys, SCN_N_OF(variant_keys), NULL) ||
      retry_json_require(&c->j, retry_json_get_string(&c->j, v, "name", &name), "name",
                         SCN_NAME_WHAT) != 1)
    return false;
  /* On failure the path is not popped: the error already holds a copy of it, and the whole
   * walk unwinds without reading the path again (scn_ctx's invariant). */
  size_t mark = retry_json_path_push_key(&c->j, "name");
  if (!expt__scenario_check_name(c, "variant", name)) return false;
  /* Earlier variants passed this function, so their "name" is a valid string. The scan is
   * quadratic, which does not matter for the tens of variants a scenario has. */
  for (size_t j = 0; j < i; j++) {
    json_t *other = json_object_get(json_array_get(variants, j), "name");
    if (strcmp(json_string_value(other), name) == 0) {
      retry_json_fail(&c->j, RETRY_ECONFIG, "variant \"%s\" is defined twice (first at [%zu])",
                      name, j);
      return false;
    }
  }
  retry_json_path_pop(&c->j, mark);
  if (retry_json_get_string(&c->j, v, "description", &desc) < 0) return false;
  json_t *set = retry_json_field(v, "set");
  if (set != NULL) {
    mark = retry_json_path_push_key(&c->j, "set");
    if (!check_set(c, set)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  json_t *expect = retry_json_field(v, "expect");
  if (expect != NULL) {
    mark = retry_json_path_push_key(&c->j, "expect");
    if (!expt__scenario_check_expect(c, expect)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* "variants": a non-empty array (an empty one would make a scenario with no run). */
bool expt__scenario_check_variants(scn_ctx *c, json_t *variants) {
  if (!json_is_array(variants) || json_array_size(variants) == 0) {
    retry_json_fail_value(&c->j, "\"variants\"", "a non-empty array of variants", variants);
    return false;
  }
  for (size_t i = 0; i < json_array_size(variants); i++) {
    size_t mark = retry_json_path_push_index(&c->j, i);
    if (!check_variant(c, variants, i)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* The shapes of an expectation, for messages. Keep them in step with expt/expt_expect.h, which
 * defines what each shape means when a run is checked. */
#define EXPECT_WHAT                                                                           \
  "a number, string, boolean or null, [lo, hi], {\"min\": x, \"max\": y} or {\"approx\": x, " \
  "\"tol\": t}"

static const char *const range_keys[] = {"min", "max"};
static const char *const approx_keys[] = {"approx", "tol"};

/* An object expectation: {"min", "max"} (one or both) or {"approx", "tol"} (both). */
static bool check_expect_object(scn_ctx *c, json_t *v) {
  double lo = 0, hi = 0, x = 0;
  /* null is not "absent" here: expt_expect_check reads {"min": null} as malformed. */
  for (void *it = json_object_iter(v); it != NULL; it = json_object_iter_next(v, it)) {
    if (!json_is_null(json_object_iter_value(it))) continue;
    size_t mark = retry_json_path_push_key(&c->j, json_object_iter_key(it));
    retry_json_fail_value(&c->j, "an expectation's bound", "a number", json_object_iter_value(it));
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  /* Either key of the approx form makes this an approx object, so {"approx": 1, "max": 2}
   * is reported as a misplaced "max" rather than as a broken range. x only receives the
   * values to validate them: the check reads them again from the document. */
  if (json_object_get(v, "approx") != NULL || json_object_get(v, "tol") != NULL) {
    return retry_json_check_keys(&c->j, v, approx_keys, 2,
                                 "an {\"approx\", \"tol\"} expectation") &&
           retry_json_require(&c->j,
                              retry_json_get_number(&c->j, v, "approx", -HUGE_VAL, false, HUGE_VAL,
                                                    false, "a number", &x),
                              "approx", "the expected value") == 1 &&
           retry_json_require(&c->j,
                              retry_json_get_number(&c->j, v, "tol", 0, false, HUGE_VAL, false,
                                                    "a number >= 0", &x),
                              "tol", "the absolute tolerance, a number >= 0") == 1;
  }
  if (!retry_json_check_keys(&c->j, v, range_keys, 2, "a {\"min\", \"max\"} expectation"))
    return false;
  int has_lo =
      retry_json_get_number(&c->j, v, "min", -HUGE_VAL, false, HUGE_VAL, false, "a number", &lo);
  if (has_lo < 0) return false;
  int has_hi =
      retry_json_get_number(&c->j, v, "max", -HUGE_VAL, false, HUGE_VAL, false, "a number", &hi);
  if (has_hi < 0) return false;
  /* {} would be a range without bounds, which every value passes: that cannot be what the
   * user meant, so it is refused as not being an expectation at all. */
  if (has_lo == 0 && has_hi == 0) {
    retry_json_fail_value(&c->j, "an expectation", EXPECT_WHAT, v);
    return false;
  }
  if (has_lo == 1 && has_hi == 1 && lo > hi) {
    size_t mark = retry_json_path_push_key(&c->j, "max");
    retry_json_fail(&c->j, RETRY_ECONFIG, "\"max\" must be >= \"min\"");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

/* The shapes are those expt_expect_check (expt/expt_expect.c) compares, null included (a value
 * that must be null); only the shape is checked here, before anything runs.
 * Why check here as well as in expt_expect_validate: the loader's messages carry the JSON path
 * and the variant's name, and a bad expectation must stop the scenario before a long run rather
 * than fail after it. An inverted range [hi, lo] would never pass, so it is refused too.
 * expt_run_validate still calls expt_expect_validate after loading, as a second guard. */
static bool check_expect_value(scn_ctx *c, json_t *v) {
  if (json_is_number(v) || json_is_string(v) || json_is_boolean(v) || json_is_null(v)) return true;
  if (json_is_object(v)) return check_expect_object(c, v);
  if (json_is_array(v) && json_array_size(v) == 2 && json_is_number(json_array_get(v, 0)) &&
      json_is_number(json_array_get(v, 1))) {
    if (json_number_value(json_array_get(v, 0)) <= json_number_value(json_array_get(v, 1)))
      return true;
    retry_json_fail(&c->j, RETRY_ECONFIG, "an expectation [lo, hi] needs lo <= hi");
    return false;
  }
  retry_json_fail_value(&c->j, "an expectation", EXPECT_WHAT, v);
  return false;
}

/* "expect": each key a path (selectors allowed), each value one of the shapes. The paths
 * are not resolved here: they name things in the run's summary, which does not exist yet. */
bool expt__scenario_check_expect(scn_ctx *c, json_t *expect) {
  if (!json_is_object(expect)) {
    retry_json_fail_value(&c->j, "\"expect\"", "an object {\"summary path\": expectation, ...}",
                          expect);
    return false;
  }
  /* The key is pushed before its syntax is checked, so a bad path is reported at itself:
   * $.expect["calls..ok"]. */
  for (void *it = json_object_iter(expect); it != NULL; it = json_object_iter_next(expect, it)) {
    const char *path = json_object_iter_key(it);
    size_t mark = retry_json_path_push_key(&c->j, path);
    char shown[72], why[128];
    if (!expt__scenario_path_check(path, true, why, sizeof why)) {
      retry_json_printable(shown, sizeof shown, path, 64);
      retry_json_fail(&c->j, RETRY_ECONFIG, "bad path \"%s\": %s", shown, why);
      return false;
    }
    if (!check_expect_value(c, json_object_iter_value(it))) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Building the runs
 * =================================================================== */

/* Frees what exists: a scenario abandoned half-way by load_buffer has zeroed runs past the
 * point of failure, and NULL members are no-ops for every function called here.
 * n_runs is set only after runs was allocated, so a scenario that failed earlier has no runs
 * to walk. Documents are released with json_decref: the base run shares s->doc by reference. */
void expt_scenario_destroy(expt_scenario *s) {
  if (s == NULL) return;
  for (size_t i = 0; i < s->n_runs; i++) {
    free(s->runs[i].name);
    model_config_destroy(s->runs[i].cfg);
    json_decref(s->runs[i].doc);
    json_decref(s->runs[i].expect);
  }
  free(s->runs);
  free(s->name);
  json_decref(s->doc);
  for (size_t i = 0; i < s->files.n; i++) {
    free(s->files.files[i].path);
    free(s->files.files[i].name);
    json_decref(s->files.files[i].content);
    json_decref(s->files.files[i].named_at);
  }
  free(s->files.files);
  for (size_t i = 0; i < s->files.n_data; i++) {
    free(s->files.data[i].path);
    free(s->files.data[i].name);
    if (!s->files.data[i].borrowed) sim_empirical_destroy(s->files.data[i].dist);
    json_decref(s->files.data[i].named_at);
  }
  free(s->files.data);
  /* Mixtures last: one may borrow another (a part), never the other way round, and none is
   * drawn from any more. */
  for (size_t i = s->files.n_mixtures; i-- > 0;)
    sim_mixture_destroy(s->files.mixtures[i]);
  free(s->files.mixtures);
  json_decref(s->inputs);
  json_decref(s->overrides);
  free(s->source);
  free(s->base_dir);
  free(s->default_name);
  free(s);
}

/* The variant's expectations over the base's: a new object, so that the variant's keys win
 * without changing either document. json_object_update shares the values by reference rather than
 * copying them: nothing changes an expectation after loading, so sharing is safe and cheaper. *ok
 * tells out of memory apart from "no expectations", since both return NULL. */
static json_t *merge_expect(json_t *base, json_t *own, bool *ok) {
  *ok = true;
  if (base == NULL && own == NULL) return NULL;
  json_t *m = json_object();
  if (m == NULL || (base != NULL && json_object_update(m, base) != 0) ||
      (own != NULL && json_object_update(m, own) != 0)) {
    json_decref(m);
    *ok = false;
    return NULL;
  }
  return m;
}

/* The document of variant i: the base (after --set) without "variants", with the variant's
 * "set" applied in order. Values are deep copies: a later path of the same "set" may write
 * inside an earlier value, which must not reach back into the base document. */
static json_t *variant_doc(scn_ctx *c, json_t *base, json_t *variant) {
  json_t *doc = json_deep_copy(base);
  if (doc == NULL) {
    retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory applying a variant");
    return NULL;
  }
  json_object_del(doc, "variants");
  json_t *set = retry_json_field(variant, "set");
  for (void *it = set != NULL ? json_object_iter(set) : NULL; it != NULL;
       it = json_object_iter_next(set, it)) {
    const char *path = json_object_iter_key(it);
    /* A failed copy is reported as out of memory like a failed set; path_set consumes v
     * in every case, so only doc is released on the way out. The paths' syntax was checked
     * with the base document, so RETRY_EINVAL here means a path does not fit this document
     * (an index past the end, a key under a string). */
    json_t *v = json_deep_copy(json_object_iter_value(it));
    char why[128] = "", shown[72];
    int rc = v == NULL ? RETRY_ENOMEM : expt__scenario_path_set(doc, path, v, why, sizeof why);
    if (rc != RETRY_OK) {
      retry_json_printable(shown, sizeof shown, path, 64);
      if (rc == RETRY_ENOMEM)
        retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory applying a variant");
      else
        retry_json_fail(&c->j, RETRY_ECONFIG, "cannot set \"%s\": %s", shown, why);
      json_decref(doc);
      return NULL;
    }
  }
  return doc;
}

/* Converts variant i into s->runs[slot]. Errors in applying its "set" are located in the base
 * document ($.variants[i].set); errors in the result name the variant and the path in its
 * own document. */
static bool build_variant(expt_scenario *s, size_t slot, size_t i, const char *source,
                          const char *base_dir, const char *default_name, retry_error *err) {
  json_t *variant = json_array_get(json_object_get(s->doc, "variants"), i);
  const char *name = json_string_value(json_object_get(variant, "name"));
  scn_run *run = &s->runs[slot];
  scn_ctx c;
  /* Two contexts in turn. Applying "set" is located in the base document and carries no
   * variant prefix; converting the result is the variant's, so the second context names it. */
  expt__scenario_ctx_init(&c, source, base_dir, NULL);
  retry_json_path_push_key(&c.j, "variants");
  retry_json_path_push_index(&c.j, i);
  retry_json_path_push_key(&c.j, "set");
  run->doc = variant_doc(&c, s->doc, variant);
  run->variant = i;
  if (run->doc == NULL) {
    copy_error(err, &c.j.e);
    return false;
  }
  expt__scenario_ctx_init(&c, source, base_dir, name);
  c.files = &s->files;
  /* A variant may name another policy file ("set": {"clients.web.policy": "other.json"}). */
  if (!expt__scenario_expand_policies(&c, run->doc, false)) {
    copy_error(err, &c.j.e);
    return false;
  }
  run->cfg = expt__scenario_build(&c, run->doc, default_name);
  if (run->cfg == NULL) {
    copy_error(err, &c.j.e);
    return false;
  }
  run->recovery = c.recovery;
  /* The name and the merged expectations are both attempted before one check; whatever was
   * stored in run is freed with the scenario by the caller, on success or failure alike. */
  bool ok = true;
  run->expect =
      merge_expect(retry_json_field(s->doc, "expect"), retry_json_field(variant, "expect"), &ok);
  run->name = expt__scenario_strdup(name);
  if (!ok || run->name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return false;
  }
  return true;
}

/* A file's name as a JSON string; a name that is not UTF-8 is shown with its bytes escaped. */
static json_t *name_json(const char *name) {
  json_t *v = json_string(name);
  if (v != NULL) return v;
  char shown[256];
  retry_json_printable(shown, sizeof shown, name, 200);
  return json_string(shown);
}

/* The files read, for provenance (expt_scenario_inputs); once every run was built, so that the
 * policy files variants named are in. Each is named as the scenario names it: the scenario by
 * its base name, a policy file as written in it (relative to the scenario's directory), so
 * that the same files give the same summary wherever they are (byte-identical outputs).
 * Returns s, or NULL (s destroyed) when out of memory. */
static expt_scenario *record_inputs(expt_scenario *s, const char *source, retry_error *err) {
  const char *slash = strrchr(source, '/');
  json_t *a = json_array(), *o = json_object();
  bool ok =
      a != NULL && o != NULL && json_object_set_new(o, "role", json_string("scenario")) == 0 &&
      json_object_set_new(o, "path", name_json(slash != NULL ? slash + 1 : source)) == 0 &&
      json_object_set_new(o, "sha256", json_string(s->sha256)) == 0 && json_array_append(a, o) == 0;
  json_decref(o);
  for (size_t i = 0; ok && i < s->files.n; i++) {
    const scn_policy_file *pf = &s->files.files[i];
    o = json_object();
    ok = o != NULL && json_object_set_new(o, "role", json_string("policy")) == 0 &&
         json_object_set_new(o, "path", name_json(pf->name)) == 0 &&
         json_object_set_new(o, "sha256", json_string(pf->sha256)) == 0 &&
         json_object_set(o, "named_at", pf->named_at) == 0 && json_array_append(a, o) == 0;
    json_decref(o);
  }
  for (size_t i = 0; ok && i < s->files.n_data; i++) {
    const scn_data_file *df = &s->files.data[i];
    o = json_object();
    ok = o != NULL && json_object_set_new(o, "role", json_string("distribution")) == 0 &&
         json_object_set_new(o, "path", name_json(df->name)) == 0 &&
         json_object_set_new(o, "sha256", json_string(df->sha256)) == 0 &&
         json_object_set(o, "named_at", df->named_at) == 0 && json_array_append(a, o) == 0;
    json_decref(o);
  }
  if (!ok) {
    json_decref(a);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  s->inputs = a;
  return s;
}

/* The runs of s from its document (after every override, policy files read into it): the base
 * converted, then the variants, or the base as the single run. only[0..n_only), when not NULL,
 * are the indices in "variants" to build (a derived scenario keeps its base's selection).
 * Without variants the base document is the single run, and its config is kept. With
 * variants the base is still converted, so that an error in the common part is reported
 * once, without a variant's name, and before any variant is looked at; its config is then
 * dropped, since only the variants run. Returns s, or NULL with s destroyed. */
static expt_scenario *build_runs(expt_scenario *s, scn_ctx *c, const char *default_name,
                                const size_t *only, size_t n_only, retry_error *err) {
  const char *source = s->source, *base_dir = c->base_dir;
  model_config *base = expt__scenario_build(c, s->doc, default_name);
  if (base == NULL) {
    copy_error(err, &c->j.e);
    expt_scenario_destroy(s);
    return NULL;
  }
  json_t *variants = retry_json_field(s->doc, "variants");
  s->has_variants = variants != NULL;
  size_t n = variants == NULL ? 1 : only != NULL ? n_only : json_array_size(variants);
  /* base->name is the document's "name", or default_name when it has none. */
  s->name = expt__scenario_strdup(base->name);
  s->runs = expt__scenario_calloc(n, sizeof s->runs[0]);
  if (s->name == NULL || s->runs == NULL) {
    /* base is not stored in s yet, so destroying s would not free it. */
    model_config_destroy(base);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  s->n_runs = n;
  if (variants == NULL) {
    /* One run: the base itself. */
    /* Ownership of base moves to the run here; s->doc is shared by reference, not copied. */
    s->runs[0].cfg = base;
    s->runs[0].recovery = c->recovery;
    s->runs[0].doc = json_incref(s->doc);
    s->runs[0].expect = json_incref(retry_json_field(s->doc, "expect"));
    s->runs[0].name = expt__scenario_strdup(base->name);
    if (s->runs[0].name == NULL) {
      retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
      expt_scenario_destroy(s);
      return NULL;
    }
    return record_inputs(s, source, err);
  }
  /* The base was converted to validate it; the runs are the variants. */
  model_config_destroy(base);
  for (size_t i = 0; i < n; i++) {
    if (!build_variant(s, i, only != NULL ? only[i] : i, source, base_dir, default_name, err)) {
      expt_scenario_destroy(s);
      return NULL;
    }
  }
  return record_inputs(s, source, err);
}

/* Everything after reading: hash, parse, --set, then the runs (build_runs).
 *
 * s owns everything from its allocation on, and every failure path below hands it to
 * expt_scenario_destroy, which frees whatever was set by then. */
static expt_scenario *load_buffer(const char *buf, size_t len, const char *source,
                                 const char *base_dir, const char *default_name,
                                 const expt_set *sets, size_t n_sets, retry_error *err) {
  expt_scenario *s = expt__scenario_calloc(1, sizeof *s);
  if (s == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  expt__scenario_sha256(buf, len, s->sha256);
  /* RFC 8259 lets a parser ignore a UTF-8 byte order mark, which some Windows editors add;
   * jansson does not, and its message would show the invisible bytes. The hash still covers
   * them: it is of the file as read. An empty file gets a message of its own too. */
  size_t skip = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  size_t blank = skip; /* buf is not NUL-terminated: count by hand */
  while (blank < len &&
         (buf[blank] == ' ' || buf[blank] == '\t' || buf[blank] == '\r' || buf[blank] == '\n'))
    blank++;
  if (blank == len) {
    retry_error_set(err, RETRY_ESYNTAX, source, "", -1, -1,
                    "the file is empty: a scenario is a JSON object {\"duration\": ..., ...}");
    expt_scenario_destroy(s);
    return NULL;
  }
  /* JSON_DECODE_ANY lets a scalar or array parse, so the message can say what the file held
   * ("got an array") rather than jansson's generic complaint. json_loadb takes a length, which
   * is why the buffer needs no NUL: an embedded NUL byte is reported by jansson as such. */
  json_error_t je;
  memset(&je, 0, sizeof je);
  s->doc = json_loadb(buf + skip, len - skip, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  if (s->doc == NULL) {
    retry_json_error_syntax(err, source, &je);
    expt_scenario_destroy(s);
    return NULL;
  }
  if (!json_is_object(s->doc)) {
    char got[64];
    retry_json_describe(s->doc, got, sizeof got);
    retry_error_set(err, RETRY_ECONFIG, source, "$", -1, -1,
                    "a scenario must be a JSON object, got %s", got);
    expt_scenario_destroy(s);
    return NULL;
  }
  /* Policy files are read into the document before --set, so that an override can patch
   * inside one; a file that cannot be read is left as its name for now, since --set may
   * still replace it (or remove the policy). After --set, the names left (and any an override
   * wrote) are read for good, with errors. */
  scn_ctx c;
  expt__scenario_ctx_init(&c, source, base_dir, NULL);
  c.files = &s->files;
  s->overrides = overrides_json(sets, n_sets);
  s->source = expt__scenario_strdup(source);
  s->base_dir = expt__scenario_strdup(base_dir);
  s->default_name = expt__scenario_strdup(default_name);
  if (s->overrides == NULL || s->source == NULL || s->base_dir == NULL || s->default_name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  if (!expt__scenario_expand_policies(&c, s->doc, true)) {
    copy_error(err, &c.j.e);
    expt_scenario_destroy(s);
    return NULL;
  }
  /* --set goes before any validation, so an override can repair a file (add a required key)
   * as well as break it, and what is validated is exactly what runs. */
  if (!apply_sets(s->doc, sets, n_sets, "--set", err)) {
    expt_scenario_destroy(s);
    return NULL;
  }
  expt__scenario_ctx_init(&c, source, base_dir, NULL);
  c.files = &s->files;
  if (!expt__scenario_expand_policies(&c, s->doc, false)) {
    copy_error(err, &c.j.e);
    expt_scenario_destroy(s);
    return NULL;
  }
  s = build_runs(s, &c, default_name, NULL, 0, err);
  if (s != NULL && expt__scenario_check_axes(s, err) != 0) {
    expt_scenario_destroy(s);
    return NULL;
  }
  return s;
}

/* }================================================================== */

/* {==================================================================
 * Entry points
 * =================================================================== */

/* The name a scenario gets without "name": the file's base name without ".json".
 * Only '/' separates directories: retrysim targets POSIX systems. A file called just ".json"
 * keeps its whole name (n > 5), so the default name is never empty. */
static char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  b = b != NULL ? b + 1 : path;
  size_t n = strlen(b);
  if (n > 5 && strcmp(b + n - 5, ".json") == 0) n -= 5;
  char *s = expt__scenario_malloc(n + 1);
  if (s != NULL) {
    memcpy(s, b, n);
    s[n] = '\0';
  }
  return s;
}

/* The directory part of path ("" when it has none), for relative policy files. */
static char *dir_name(const char *path) {
  const char *slash = strrchr(path, '/');
  /* A file directly under "/" keeps "/" as its directory: "" would mean the current one. */
  size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  char *s = expt__scenario_malloc(n + 1);
  if (s != NULL) {
    memcpy(s, path, n);
    s[n] = '\0';
  }
  return s;
}

/* The file's own directory resolves relative policy files; its base name is the default
 * scenario name. Both are computed once, here, and borrowed by the conversion. */
expt_scenario *expt_scenario_load(const char *path, const expt_set *sets, size_t n_sets,
                                retry_error *err) {
  assert(path != NULL);
  assert(sets != NULL || n_sets == 0);
  size_t len = 0;
  char *buf = NULL;
  /* The bytes are read here, not by jansson, because the hash needs them; the hook's
   * allocator makes the read fail under the chaos test like the loader's other allocations.
   * retry_json_read_file refuses what is not a regular file (/dev/zero, a pipe), which would
   * otherwise be read until memory runs out (issue 10, defect 3); policy files follow the
   * same rule (read_policy_file). */
  if (retry_json_read_file(path, expt__scenario_retry_alloc(), &buf, &len, err) != RETRY_OK)
    return NULL;
  /* name, dir and buf are freed here on every path: load_buffer copies what it keeps (the name
   * into the config) and uses the directory only while policies are loaded. */
  char *name = base_name(path), *dir = dir_name(path);
  expt_scenario *s = NULL;
  if (name == NULL || dir == NULL)
    retry_error_set(err, RETRY_ENOMEM, path, "", -1, -1, "out of memory loading the scenario");
  else
    s = load_buffer(buf, len, path, dir, name, sets, n_sets, err);
  free(name);
  free(dir);
  free(buf);
  return s;
}

/* A string has no directory: relative policy files are read from the current one. */
expt_scenario *expt_scenario_load_string(const char *json, const char *source, const expt_set *sets,
                                       size_t n_sets, retry_error *err) {
  assert(json != NULL);
  assert(sets != NULL || n_sets == 0);
  /* A source such as "tests/x.json" gives the default name a file of that name would get. */
  char *name = source != NULL ? base_name(source) : expt__scenario_strdup("scenario");
  if (source == NULL) source = "<string>";
  if (name == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  expt_scenario *s = load_buffer(json, strlen(json), source, "", name, sets, n_sets, err);
  free(name);
  return s;
}

/* }================================================================== */

/* {==================================================================
 * Deriving a scenario: a loaded one with more overrides (a sweep's point)
 * =================================================================== */

/* The base's files, as the derived scenario's own entries: names and hashes copied, the
 * policy documents and the "named at" lists deep-copied (so that nothing of base is written,
 * not even a reference count), the distribution tables borrowed. Nothing is read again. */
static bool copy_files(scn_files *to, const scn_files *from) {
  if (from->n > 0) {
    to->files = expt__scenario_calloc(from->n, sizeof *to->files);
    if (to->files == NULL) return false;
    to->cap = from->n;
  }
  for (size_t i = 0; i < from->n; i++) {
    const scn_policy_file *f = &from->files[i];
    scn_policy_file *t = &to->files[to->n++]; /* counted now: destroy frees what exists */
    t->path = expt__scenario_strdup(f->path);
    t->name = expt__scenario_strdup(f->name);
    memcpy(t->sha256, f->sha256, sizeof t->sha256);
    t->content = json_deep_copy(f->content);
    t->named_at = json_deep_copy(f->named_at);
    if (t->path == NULL || t->name == NULL || t->content == NULL || t->named_at == NULL)
      return false;
  }
  if (from->n_data > 0) {
    to->data = expt__scenario_calloc(from->n_data, sizeof *to->data);
    if (to->data == NULL) return false;
    to->cap_data = from->n_data;
  }
  for (size_t i = 0; i < from->n_data; i++) {
    const scn_data_file *f = &from->data[i];
    scn_data_file *t = &to->data[to->n_data++];
    t->dist = f->dist;
    t->borrowed = true;
    t->path = expt__scenario_strdup(f->path);
    t->name = expt__scenario_strdup(f->name);
    memcpy(t->sha256, f->sha256, sizeof t->sha256);
    t->named_at = json_deep_copy(f->named_at);
    if (t->path == NULL || t->name == NULL || t->named_at == NULL) return false;
  }
  return true;
}

/* The base's overrides followed by sets[0..n), as one provenance array. */
static json_t *derived_overrides(const json_t *base, const expt_set *sets, size_t n) {
  json_t *a = json_deep_copy(base), *more = overrides_json(sets, n);
  if (a == NULL || more == NULL || json_array_extend(a, more) != 0) {
    json_decref(a);
    json_decref(more);
    return NULL;
  }
  json_decref(more);
  return a;
}

/* base is only read (its document copied, its files copied or borrowed), so several threads
 * may derive from one base at once; the derived scenario borrows base's distribution tables,
 * so base must outlive it. What is validated is exactly what load would validate given the
 * same overrides after the command line's: the whole document, every run kept. */
expt_scenario *expt_scenario_derive(const expt_scenario *base, const expt_set *sets, size_t n_sets,
                                  retry_error *err) {
  assert(base != NULL);
  assert(sets != NULL || n_sets == 0);
  const char *source = base->source;
  expt_scenario *s = expt__scenario_calloc(1, sizeof *s);
  if (s == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    return NULL;
  }
  memcpy(s->sha256, base->sha256, sizeof s->sha256);
  s->doc = json_deep_copy(base->doc);
  s->source = expt__scenario_strdup(base->source);
  s->base_dir = expt__scenario_strdup(base->base_dir);
  s->default_name = expt__scenario_strdup(base->default_name);
  s->overrides = derived_overrides(base->overrides, sets, n_sets);
  /* The variants base kept (expt_scenario_select), by their index in "variants". */
  size_t *only = base->has_variants ? expt__scenario_calloc(base->n_runs, sizeof *only) : NULL;
  for (size_t i = 0; only != NULL && i < base->n_runs; i++)
    only[i] = base->runs[i].variant;
  if (s->doc == NULL || s->source == NULL || s->base_dir == NULL || s->default_name == NULL ||
      s->overrides == NULL || (base->has_variants && only == NULL) ||
      !copy_files(&s->files, &base->files)) {
    free(only);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the scenario");
    expt_scenario_destroy(s);
    return NULL;
  }
  /* The base document has its policy files read into it already; an override naming another
   * file gets it read here, with errors (the load's second pass). */
  scn_ctx c;
  expt__scenario_ctx_init(&c, source, s->base_dir, NULL);
  c.files = &s->files;
  if (!apply_sets(s->doc, sets, n_sets, "override", err) ||
      !expt__scenario_expand_policies(&c, s->doc, false)) {
    if (retry_json_failed(&c.j)) copy_error(err, &c.j.e);
    free(only);
    expt_scenario_destroy(s);
    return NULL;
  }
  s = build_runs(s, &c, s->default_name, only, base->n_runs, err);
  free(only);
  return s;
}

/* }================================================================== */

/* {==================================================================
 * Accessors: misuse (NULL, an index past the runs) is a bug, hence asserts
 * =================================================================== */

const char *expt_scenario_name(const expt_scenario *s) {
  assert(s != NULL);
  return s->name;
}

const char *expt_scenario_sha256(const expt_scenario *s) {
  assert(s != NULL);
  return s->sha256;
}

const json_t *expt_scenario_inputs(const expt_scenario *s) {
  assert(s != NULL);
  return s->inputs;
}

const json_t *expt_scenario_overrides(const expt_scenario *s) {
  assert(s != NULL);
  return s->overrides;
}

const json_t *expt_scenario_base_document(const expt_scenario *s) {
  assert(s != NULL);
  return s->doc;
}

const char *expt_scenario_source(const expt_scenario *s) {
  assert(s != NULL);
  return s->source;
}

/* Read from the document after --set: the loader validated both. */
const json_t *expt_scenario_sweep_block(const expt_scenario *s) {
  assert(s != NULL);
  return json_object_get(s->doc, "sweep");
}

const json_t *expt_scenario_search_block(const expt_scenario *s) {
  assert(s != NULL);
  return json_object_get(s->doc, "search");
}

size_t expt_scenario_n_runs(const expt_scenario *s) {
  assert(s != NULL);
  return s->n_runs;
}

bool expt_scenario_has_variants(const expt_scenario *s) {
  assert(s != NULL);
  return s->has_variants;
}

const char *expt_scenario_run_name(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].name;
}

/* Read from the document after --set: the loader checked both are strings when present. */
const char *expt_scenario_description(const expt_scenario *s) {
  assert(s != NULL);
  return json_string_value(json_object_get(s->doc, "description"));
}

const char *expt_scenario_run_description(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  if (!s->has_variants) return NULL;
  json_t *v = json_array_get(json_object_get(s->doc, "variants"), s->runs[i].variant);
  return json_string_value(json_object_get(v, "description"));
}

const expt_recovery_cfg *expt_scenario_recovery(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return &s->runs[i].recovery;
}

const model_config *expt_scenario_config(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].cfg;
}

/* NULL when neither the base nor the variant has "expect"; callers may pass that straight to
 * json_object_size, which reads it as 0 expectations. */
const json_t *expt_scenario_expect(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].expect;
}

/* Without variants this is s->doc itself, shared through a second reference; with variants
 * each run has a deep copy of its own, so no two runs' documents share a value. */
const json_t *expt_scenario_document(const expt_scenario *s, size_t i) {
  assert(s != NULL && i < s->n_runs);
  return s->runs[i].doc;
}

/* }================================================================== */

/* {==================================================================
 * Choosing variants (--variant) and the memory a run needs (--max-memory)
 * =================================================================== */

/* "a, b, c" of every variant's name, cut at a name's boundary to fit size with "...". */
static void variant_list(const expt_scenario *s, char *buf, size_t size) {
  json_t *variants = json_object_get(s->doc, "variants");
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < json_array_size(variants); i++) {
    const char *name = json_string_value(json_object_get(json_array_get(variants, i), "name"));
    size_t need = strlen(name) + (i ? 2 : 0);
    if (len + need + 4 >= size) {
      snprintf(buf + len, size - len, "%s...", i ? ", " : "");
      return;
    }
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", name);
  }
}

/* The runs kept are moved down in place; the others are freed. The order is the scenario's,
 * whatever the order of the names: a comparison table reads the same either way. */
int expt_scenario_select(expt_scenario *s, const char *const *names, size_t n, retry_error *err) {
  assert(s != NULL && (names != NULL || n == 0));
  if (n == 0) return 0;
  char shown[48], list[96];
  retry_json_printable(shown, sizeof shown, names[0], 40);
  if (!s->has_variants) {
    retry_error_set(err, RETRY_EINVAL, "<command line>", "", -1, -1,
                    "--variant \"%s\": the scenario has no variants", shown);
    return RETRY_EINVAL;
  }
  for (size_t k = 0; k < n; k++) {
    bool found = false;
    for (size_t i = 0; i < s->n_runs && !found; i++)
      found = strcmp(s->runs[i].name, names[k]) == 0;
    if (!found) {
      retry_json_printable(shown, sizeof shown, names[k], 40);
      variant_list(s, list, sizeof list);
      retry_error_set(err, RETRY_EINVAL, "<command line>", "", -1, -1,
                      "--variant \"%s\": no such variant; variants: %s", shown, list);
      return RETRY_EINVAL;
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < s->n_runs; i++) {
    bool keep = false;
    for (size_t k = 0; k < n && !keep; k++)
      keep = strcmp(s->runs[i].name, names[k]) == 0;
    if (keep) {
      s->runs[kept++] = s->runs[i];
      continue;
    }
    free(s->runs[i].name);
    model_config_destroy(s->runs[i].cfg);
    json_decref(s->runs[i].doc);
    json_decref(s->runs[i].expect);
  }
  s->n_runs = kept;
  return 0;
}

/* Binary units, one decimal: "15.2 GiB". */
static void format_bytes(char *buf, size_t size, uint64_t b) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)b;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, size, "%llu bytes", (unsigned long long)b);
  else
    snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* Checked before any world is built: a world that does not fit fails only after minutes of
 * allocation (issue 10, defect 8), and validate, which builds none, refuses it too. */
int expt_scenario_check_memory(const expt_scenario *s, uint64_t max_bytes, retry_error *err) {
  assert(s != NULL);
  for (size_t i = 0; i < s->n_runs; i++) {
    uint64_t need = model_world_estimate_bytes(s->runs[i].cfg);
    if (need <= max_bytes) continue;
    char got[32], limit[32], name[40];
    format_bytes(got, sizeof got, need);
    format_bytes(limit, sizeof limit, max_bytes);
    retry_json_printable(name, sizeof name, s->runs[i].name, 32);
    retry_error_set(err, RETRY_ERANGE, s->source, "", -1, -1,
                    "run \"%s\" needs about %s of memory, over the limit of %s "
                    "(--max-memory SIZE raises it)",
                    name, got, limit);
    return RETRY_ERANGE;
  }
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * The study's keys
 * =================================================================== */

/* Read from the document, which the loader validated: no copies to keep in step. */
size_t expt_scenario_replications(const expt_scenario *s) {
  json_t *v = json_object_get(s->doc, "replications");
  return json_is_integer(v) ? (size_t)json_integer_value(v) : 0;
}

double expt_scenario_confidence(const expt_scenario *s) {
  json_t *v = json_object_get(s->doc, "confidence");
  return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *expt_scenario_baseline(const expt_scenario *s) {
  return json_string_value(json_object_get(s->doc, "baseline"));
}

/* }================================================================== */
