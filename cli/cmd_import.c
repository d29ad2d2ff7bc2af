/*
 * cmd_import.c: `retrysim import FILE... [--format text|json] [--strict]`. Reads each policy file
 * as the scenario loader reads it (a foreign format translated by expt/expt_import.c, anything
 * else as a gRPC service config), loads the result through libretry's loader, and prints the
 * service config retrysim runs, every field with the file:line it came from, and the warnings.
 * Invariant: what it prints is the document the loader gets, and it fails (status 2) exactly
 * where a scenario naming the file would fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "expt/expt_import.h"
#include "retry/retry_json.h"

enum { O_FORMAT = CLI_LONG, O_STRICT };

static const struct option options[] = {
    {"format", required_argument, NULL, O_FORMAT},
    {"strict", no_argument, NULL, O_STRICT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct import_opts {
  bool json;   /* --format json */
  bool strict; /* --strict: a warning is an error */
} import_opts;

/* The loader's warnings, gathered into the result's list (no source positions: jansson keeps
 * none for the translated document, whose paths are the service config's). */
static void gather(void *ctx, const retry_error *w) {
  json_t *o = json_pack("{s:s, s:s, s:i, s:i, s:s}", "source", "service config", "path", w->path,
                        "line", -1, "column", -1, "message", w->message);
  if (o != NULL) json_array_append_new((json_t *)ctx, o);
}

/* The value at a path of the form $.a.b[2].c inside doc, NULL when there is none. */
static json_t *at_path(json_t *doc, const char *path) {
  const char *p = path + 1;
  json_t *v = doc;
  while (v != NULL && *p) {
    if (*p == '.') {
      size_t l = strcspn(p + 1, ".[");
      char key[128];
      snprintf(key, sizeof key, "%.*s", (int)l, p + 1);
      v = json_object_get(v, key);
      p += 1 + l;
    } else if (*p == '[') {
      char *end;
      v = json_array_get(v, (size_t)strtoul(p + 1, &end, 10));
      p = end + 1;
    } else {
      return NULL;
    }
  }
  return v;
}

static void print_text(const char *file, const expt_import_result *r) {
  printf("%s: %s, translated into this service config (docs/policy-formats.md):\n", file,
         expt_import_format_name(r->format));
  char *doc = json_dumps(r->config, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
  if (doc != NULL) printf("%s\n", doc);
  free(doc);
  printf("where each field comes from:\n");
  const char *out;
  json_t *o;
  json_object_foreach(r->origins, out, o) {
    json_t *v = at_path(r->config, out);
    char *value =
        v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15)) : NULL;
    const char *from = json_string_value(json_object_get(o, "from"));
    const char *note = json_string_value(json_object_get(o, "note"));
    int line = (int)json_integer_value(json_object_get(o, "line"));
    int col = (int)json_integer_value(json_object_get(o, "column"));
    printf("  %s = %s\n", out, value != NULL ? value : "(absent)");
    if (from != NULL && line > 0)
      printf("      from %s:%d:%d %s\n", file, line, col, from);
    else if (from != NULL)
      printf("      from %s %s\n", file, from);
    if (note != NULL) printf("      %s%s\n", from != NULL ? "" : "default: ", note);
    free(value);
  }
  size_t i;
  json_t *w;
  json_array_foreach(r->warnings, i, w) {
    int line = (int)json_integer_value(json_object_get(w, "line"));
    int col = (int)json_integer_value(json_object_get(w, "column"));
    const char *src = json_string_value(json_object_get(w, "source"));
    if (line > 0)
      printf("warning: %s:%d:%d: %s: %s\n", file, line, col,
             json_string_value(json_object_get(w, "path")),
             json_string_value(json_object_get(w, "message")));
    else
      printf("warning: %s%s%s: %s: %s\n", file, src ? " " : "", src ? src : "",
             json_string_value(json_object_get(w, "path")),
             json_string_value(json_object_get(w, "message")));
  }
}

static void print_json(const char *file, const expt_import_result *r) {
  json_t *o = json_pack("{s:s, s:s, s:O, s:O, s:O}", "file", file, "format",
                        expt_import_format_name(r->format), "config", r->config, "origins",
                        r->origins, "warnings", r->warnings);
  char *s = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
                      : NULL;
  if (s != NULL) printf("%s\n", s);
  free(s);
  json_decref(o);
}

/* One file: translated, loaded, printed. Returns an exit status. */
static int import_one(const char *file, const import_opts *o) {
  char *buf = NULL;
  size_t len = 0;
  retry_error err;
  retry_error_clear(&err);
  char msg[700];
  if (retry_json_read_file(file, NULL, &buf, &len, &err) != RETRY_OK) {
    retry_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "retrysim: %s\n", msg);
    return err.code == RETRY_ENOMEM ? EXPT_EXIT_RUNTIME : EXPT_EXIT_USAGE;
  }
  char *text0 = realloc(buf, len + 1); /* the loader takes a NUL-terminated text */
  if (text0 == NULL) return free(buf), cli_oom();
  buf = text0;
  buf[len] = '\0';
  size_t skip = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  expt_import_result r = {0};
  int rc = expt_import_text(buf + skip, len - skip, file, &r, &err);
  if (rc == 0) {
    /* Not a foreign format: the service config itself. */
    r.format = EXPT_IMPORT_NATIVE;
    r.config = json_loadb(buf + skip, len - skip, JSON_REJECT_DUPLICATES, NULL);
    r.origins = json_object();
    r.warnings = json_array();
    if (r.config == NULL) r.config = json_object(); /* the loader below reports the syntax */
  }
  int status = EXPT_EXIT_OK;
  if (rc < 0) {
    retry_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "retrysim: %s\n", msg);
    status = err.code == RETRY_ENOMEM ? EXPT_EXIT_RUNTIME : EXPT_EXIT_USAGE;
  } else {
    retry_config_opts lo = {.warn = gather, .warn_ctx = r.warnings, .strict = false};
    char *text = rc == 1 ? json_dumps(r.config, JSON_COMPACT) : NULL;
    retry_error_clear(&err);
    retry_config *cfg = rc == 1 ? retry_config_load_string(text, file, &lo, &err)
                                : retry_config_load_string(buf + skip, file, &lo, &err);
    free(text);
    if (cfg == NULL) {
      retry_error_format(&err, msg, sizeof msg);
      fprintf(stderr, "retrysim: %s\n", msg);
      status = EXPT_EXIT_USAGE;
    } else {
      if (o->json)
        print_json(file, &r);
      else
        print_text(file, &r);
      if (o->strict && json_array_size(r.warnings) > 0) {
        fprintf(stderr, "retrysim: %s: %zu warning%s, refused with --strict\n", file,
                json_array_size(r.warnings), json_array_size(r.warnings) == 1 ? "" : "s");
        status = EXPT_EXIT_USAGE;
      }
    }
    retry_config_destroy(cfg);
  }
  expt_import_result_close(&r);
  free(buf);
  return status;
}

int cmd_import_main(int argc, char **argv) {
  import_opts o = {false, false};
  const char **files = calloc((size_t)argc, sizeof *files);
  if (files == NULL) return cli_oom();
  size_t n = 0;
  cli_parser p;
  cli_parser_init(&p, argc, argv, "h", options, "");
  int status = EXPT_EXIT_OK;
  for (int c; status == EXPT_EXIT_OK && (c = cli_parser_next(&p)) != CLI_END;) {
    switch (c) {
      case CLI_ERROR: status = EXPT_EXIT_USAGE; break;
      case 'h': free(files); return cli_help();
      case CLI_ARG: files[n++] = p.value; break;
      case O_STRICT: o.strict = true; break;
      case O_FORMAT:
        if (strcmp(p.value, "json") == 0)
          o.json = true;
        else if (strcmp(p.value, "text") != 0)
          status = cli_usage("--format is text or json, not \"%s\"", p.value);
        break;
      default: break;
    }
  }
  if (status == EXPT_EXIT_OK && n == 0) status = cli_usage("%s", "import needs policy files");
  /* Every file is read, so one run shows every problem; the status is the worst one's. */
  for (size_t i = 0, bad = status != EXPT_EXIT_OK; !bad && i < n; i++) {
    int s = import_one(files[i], &o);
    if (s > status) status = s;
  }
  free(files);
  return status;
}
