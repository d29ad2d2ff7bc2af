/*
 * cli_runopts.c: the options of `run`, which `validate` and `plan` take too, read with the one
 * parser (cli_getopt.c) from one table, so that an abbreviation means the same in the three
 * commands; and the loading of their scenario, with the policy warnings printed once each.
 * Invariant: validate takes only what changes the scenario it checks, and refuses the rest by
 * name ("validate does not take '--seed'"): an option that would silently do nothing is worse
 * than an error.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "expt/expt_capacity.h"
#include "expt/expt_import.h"
#include "expt/expt_output.h"
#include "expt/expt_study.h"
#include "expt/expt_study_runs.h"
#include "retry/retry.h"

/* {==================================================================
 * The table
 * =================================================================== */

/* The options with a long name only; the others' val is their short letter. */
enum {
  O_DURATION = CLI_LONG,
  O_WARMUP,
  O_PLOT,
  O_EDGES,
  O_FORMAT,
  O_CHECK,
  O_JUNIT,
  O_VARIANT,
  O_MAX_MEMORY,
  O_MAX_RUNS,
  O_SET,
  O_REPS,
  O_CONFIDENCE,
  O_BASELINE,
  O_ADJUST,
  O_SHARD,
  O_SHARDS,
  O_SWEEP,
  O_STRICT,
  O_PLOT_METRIC,
};

/* In the order of the help, which is the order an ambiguous abbreviation lists them in. Keep
 * in step with the usage and help of retrysim.c and with docs/cli.md. */
static const struct option options[] = {
    {"seed", required_argument, NULL, 's'},
    {"duration", required_argument, NULL, O_DURATION},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"out", required_argument, NULL, 'o'},
    {"plot", no_argument, NULL, O_PLOT},
    {"plot-metric", required_argument, NULL, O_PLOT_METRIC},
    {"edges", no_argument, NULL, O_EDGES},
    {"format", required_argument, NULL, O_FORMAT},
    {"check", no_argument, NULL, O_CHECK},
    {"junit", required_argument, NULL, O_JUNIT},
    {"variant", required_argument, NULL, O_VARIANT},
    {"max-memory", required_argument, NULL, O_MAX_MEMORY},
    {"max-runs", required_argument, NULL, O_MAX_RUNS},
    {"set", required_argument, NULL, O_SET},
    {"quiet", no_argument, NULL, 'q'},
    {"reps", required_argument, NULL, O_REPS},
    {"confidence", required_argument, NULL, O_CONFIDENCE},
    {"baseline", required_argument, NULL, O_BASELINE},
    {"adjust", required_argument, NULL, O_ADJUST},
    {"jobs", required_argument, NULL, 'j'},
    {"shard", required_argument, NULL, O_SHARD},
    {"shards", required_argument, NULL, O_SHARDS},
    {"sweep", required_argument, NULL, O_SWEEP},
    {"strict", no_argument, NULL, O_STRICT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* }================================================================== */

/* {==================================================================
 * Applying one option
 * =================================================================== */

/* The options that change the scenario, which validate takes as run does. Returns 0 or an exit
 * status; 1 when c is not one of them. */
static int apply_scenario(cli_runopts *o, int c, const char *v) {
  switch (c) {
    case O_SET: return cli_add_set(o->sets, &o->n_sets, v, "");
    case O_DURATION: o->duration = v; return 0;
    case O_WARMUP: o->warmup = v; return 0;
    case O_STRICT: o->strict = true; return 0;
    case O_VARIANT:
      if (v[0] == '\0' || cli_looks_like_option(v))
        return cli_usage("--variant needs a variant's name, got '%s'", v);
      o->variants[o->n_variants++] = v; /* room: one per argument */
      return 0;
    case O_MAX_MEMORY:
      if (cli_parse_size(v, &o->max_memory) != 0)
        return cli_usage("--max-memory needs a size such as 8GiB, 512MiB, 1.5G or none, got '%s'",
                         v);
      return 0;
    case O_MAX_RUNS:
      /* 0 would refuse every study: "none" says no limit. */
      if (strcmp(v, "none") == 0)
        o->max_runs = 0;
      else if (cli_parse_u64(v, &o->max_runs) != 0 || o->max_runs == 0)
        return cli_usage("--max-runs needs a count of runs >= 1 or none, got '%s'", v);
      return 0;
    default: return 1;
  }
}

/* A name given to --out or --junit: not empty, not an option. what is the message ("--out
 * needs a directory"), kind what it names ("directory"). */
static int apply_path(const char **dst, const char *what, const char *kind, const char *v) {
  if (v[0] == '\0') return cli_usage("%s", what);
  if (cli_looks_like_option(v))
    return cli_usage("%s, got the option '%s' (write ./NAME for a %s whose name starts with '-')",
                     what, v, kind);
  *dst = v;
  return 0;
}

/* The study's options. Returns 0 or an exit status; 1 when c is not one of them. */
static int apply_study(cli_runopts *o, int c, const char *v, const char *name) {
  uint64_t n;
  switch (c) {
    case O_REPS:
      if (cli_parse_u64(v, &n) != 0 || n < 1 || n > EXPT_STUDY_MAX_REPS)
        return cli_usage("--reps needs an integer 1 .. 100000, got '%s'", v);
      o->reps = (size_t)n;
      return 0;
    case O_CONFIDENCE: {
      char *end;
      errno = 0;
      /* Decimal only: strtod would also read "0x1p-1" as 0.5. */
      double l = strspn(v, "0123456789.eE+-") == strlen(v) ? strtod(v, &end) : NAN;
      if (isnan(l)) end = (char *)v;
      if (errno != 0 || end == v || *end != '\0' || !(l >= EXPT_STUDY_MIN_CONFIDENCE) ||
          !(l <= EXPT_STUDY_MAX_CONFIDENCE))
        return cli_usage("--confidence needs a level 0.5 .. 0.9999 (0.95 for 95 %%), got '%s'", v);
      o->confidence = l;
      return 0;
    }
    case O_BASELINE:
      if (v[0] == '\0' || cli_looks_like_option(v))
        return cli_usage("--baseline needs a variant's name, got '%s'", v);
      o->baseline = v;
      return 0;
    case O_ADJUST:
      /* Holm is the one adjustment offered: it holds for any dependence between the metrics,
       * which in one run are far from independent. "none" is the default, named so a script
       * can say it. */
      if (strcmp(v, "holm") != 0 && strcmp(v, "none") != 0)
        return cli_usage("--adjust needs holm or none, got '%s'", v);
      o->holm = strcmp(v, "holm") == 0;
      o->adjust_given = true;
      return 0;
    case 'j':
      if (cli_parse_u64(v, &n) != 0 || n < 1 || n > 4096)
        return cli_usage("-j needs a number of parallel runs 1 .. 4096, got '%s'", v);
      o->jobs = (unsigned)n;
      return 0;
    case O_SHARD: {
      /* Each side whole and in decimal: sscanf's %u would wrap 4294967297 to 1 and skip the
       * space in "1/ 2". */
      uint64_t k = 0, m = 0;
      const char *slash = strchr(v, '/');
      char left[24];
      size_t kl = slash != NULL ? (size_t)(slash - v) : 0;
      if (slash != NULL && kl < sizeof left) {
        memcpy(left, v, kl);
        left[kl] = '\0';
      }
      if (slash == NULL || kl == 0 || kl >= sizeof left || cli_parse_u64(left, &k) != 0 ||
          cli_parse_u64(slash + 1, &m) != 0 || m < 1 || m > 100000 || k < 1 || k > m)
        return cli_usage("--shard needs K/N with 1 <= K <= N <= 100000 (such as 2/8), got '%s'", v);
      o->shard_k = (unsigned)k;
      o->shard_n = (unsigned)m;
      return 0;
    }
    case O_SWEEP: {
      retry_error e;
      retry_error_clear(&e);
      if (expt_sweep_add_arg(&o->sweep, v, &e) == 0) return 0;
      return e.code == RETRY_ENOMEM ? cli_oom() : cli_usage("%s", e.message);
    }
    case O_SHARDS:
      if (strcmp(o->command, "plan") != 0)
        return cli_usage("'%s' belongs to `retrysim plan`; `run` takes --shard K/N", name);
      if (cli_parse_u64(v, &n) != 0 || n < 1 || n > 100000)
        return cli_usage("--shards needs a number of shards 1 .. 100000, got '%s'", v);
      o->shards = (unsigned)n;
      return 0;
    default: return 1;
  }
}

/* What a run prints and writes. Returns 0 or an exit status. */
static int apply_run(cli_runopts *o, int c, const char *v) {
  switch (c) {
    case 's':
      o->opts.has_seed = true;
      if (cli_parse_u64(v, &o->opts.seed) != 0)
        return cli_usage("--seed needs an integer 0 .. 18446744073709551615, got '%s'", v);
      return 0;
    case 'o': return apply_path(&o->opts.out_dir, "--out needs a directory", "directory", v);
    case O_JUNIT: return apply_path(&o->opts.junit, "--junit needs a file name", "file", v);
    case O_FORMAT:
      if (strcmp(v, "text") == 0)
        o->opts.format = EXPT_FORMAT_TEXT;
      else if (strcmp(v, "json") == 0)
        o->opts.format = EXPT_FORMAT_JSON;
      else
        return cli_usage("--format is text or json, got '%s'", v);
      return 0;
    case O_CHECK: o->opts.check = true; return 0;
    case O_PLOT: o->opts.plot = true; return 0;
    case O_PLOT_METRIC:
      /* A picture of a metric is a picture: --plot-metric implies --plot. */
      if (v[0] == '\0' || cli_looks_like_option(v))
        return cli_usage("--plot-metric needs a metric of points.csv, such as "
                         "amplification.api, got '%s'",
                         v);
      if (o->n_plot_metrics >= CLI_MAX_PLOT_METRICS)
        return cli_usage("--plot-metric: at most %d metrics", CLI_MAX_PLOT_METRICS);
      o->plot_metrics[o->n_plot_metrics++] = v;
      o->opts.plot_metrics = o->plot_metrics;
      o->opts.n_plot_metrics = o->n_plot_metrics;
      o->opts.plot = true;
      return 0;
    case O_EDGES: o->opts.edges = true; return 0;
    case 'q': o->opts.quiet = true; return 0;
    default: return 0; /* every val of the table is handled above or by the callers */
  }
}

/* plan: its shard commands leave out --out and --shards with their values. An -o at the end
 * of a cluster of short flags ("-qo DIR", "-qoDIR") leaves the flags before it. */
static void mark_plan_skip(cli_runopts *o, const cli_parser *p, int c) {
  if (o->keep == NULL || (c != 'o' && c != O_SHARDS)) return;
  const char *a = p->argv[p->first];
  for (int i = p->first; i <= p->last; i++)
    o->keep[i] = 0;
  if (c == 'o' && a[1] != '-' && a[1] != 'o') {
    /* The value is attached when the option spans one argument ("-qoDIR"). */
    size_t tail = p->last == p->first ? strlen(p->value) : 0;
    o->keep[p->first] = (int)(strlen(a) - tail - 1);
  }
}

/* }================================================================== */

/* {==================================================================
 * The whole line
 * =================================================================== */

/* What the options say together, once all are read. */
static int check_together(const cli_runopts *o) {
  bool plan = strcmp(o->command, "plan") == 0;
  if (o->scenario == NULL) return cli_usage("%s: which scenario file?", o->command);
  if (o->opts.plot && o->opts.out_dir == NULL)
    return cli_usage("%s", o->n_plot_metrics > 0
                               ? "--plot-metric needs --out DIR: the pictures are drawn from "
                                 "its points.csv"
                               : "--plot needs --out DIR: the pictures are drawn from its files");
  if (o->opts.junit != NULL && !o->opts.check)
    return cli_usage("%s", "--junit needs --check: it records the checks' results");
  if (o->shard_n > 0 && o->opts.out_dir == NULL)
    return cli_usage("%s", "--shard needs --out DIR: the shard's runs go to DIR/shard.json");
  if (o->shard_n > 0 && (o->opts.plot || o->opts.check))
    return cli_usage("%s",
                     "--shard writes raw runs only: give --plot and --check to the merge "
                     "(retrysim merge DIR... --out DIR --check), or run locally");
  if (plan && (o->shards == 0 || o->opts.out_dir == NULL))
    return cli_usage("%s", "plan needs --shards N and --out DIR");
  if (plan && o->shard_n > 0)
    return cli_usage("%s", "plan writes the --shard options itself: give --shards N only");
  return 0;
}

/* --duration and --warmup go last, so they win over a --set of the same key. */
static int add_last_sets(cli_runopts *o) {
  const char *last[2][2] = {{"duration", o->duration}, {"warmup", o->warmup}};
  for (size_t i = 0; i < 2; i++) {
    if (last[i][1] == NULL) continue;
    size_t n = strlen(last[i][0]) + 1;
    char *path = malloc(n);
    if (path == NULL) return cli_oom();
    memcpy(path, last[i][0], n);
    o->sets[o->n_sets].path = path;
    o->sets[o->n_sets++].value = last[i][1];
  }
  return 0;
}

/* One option or argument; returns 0 or an exit status. */
static int apply(cli_runopts *o, const cli_parser *p, int c) {
  if (c == CLI_ARG) {
    if (o->scenario != NULL) return cli_usage("unexpected argument '%s'", p->value);
    o->scenario = p->value;
    return 0;
  }
  int rc = apply_scenario(o, c, p->value);
  if (rc != 1) return rc;
  /* validate runs nothing: --seed or --out there would silently do nothing. */
  if (strcmp(o->command, "validate") == 0) return cli_usage("validate does not take '%s'", p->name);
  mark_plan_skip(o, p, c);
  rc = apply_study(o, c, p->value, p->name);
  if (rc != 1) return rc;
  return apply_run(o, c, p->value);
}

int cli_runopts_parse(cli_runopts *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->command = argv[0];
  o->max_memory = EXPT_SCENARIO_MAX_MEMORY_DEFAULT;
  o->max_runs = EXPT_STUDY_MAX_RUNS_DEFAULT;
  o->confidence = NAN;
  o->opts.out = stdout;
  o->opts.err = stderr;
  /* At most one set per argument, plus --duration and --warmup. */
  o->sets = calloc((size_t)argc + 2, sizeof *o->sets);
  o->variants = calloc((size_t)argc + 1, sizeof *o->variants);
  if (strcmp(o->command, "plan") == 0) {
    o->keep = malloc((size_t)argc * sizeof *o->keep);
    if (o->keep == NULL) return cli_oom();
    for (int i = 0; i < argc; i++)
      o->keep[i] = -1;
  }
  if (o->sets == NULL || o->variants == NULL) return cli_oom();
  cli_parser p;
  cli_parser_init(&p, argc, argv, "s:o:qj:h", options, "");
  /* The first error stops the parse: one clear message beats a cascade. */
  for (int c; (c = cli_parser_next(&p)) != CLI_END;) {
    if (c == CLI_ERROR) return EXPT_EXIT_USAGE;
    if (c == 'h') return CLI_HELP;
    int rc = apply(o, &p, c);
    if (rc != 0) return rc;
  }
  int rc = check_together(o);
  if (rc == 0) rc = add_last_sets(o);
  if (rc == 0 && o->opts.plot) {
    o->command_line = cli_join_args(argc, argv);
    if (o->command_line == NULL) return cli_oom();
    o->opts.command = o->command_line;
  }
  return rc;
}

void cli_runopts_free(cli_runopts *o) {
  /* The cast drops the const that expt_set carries for the loader's sake. */
  for (size_t i = 0; o->sets != NULL && i < o->n_sets; i++)
    free((char *)o->sets[i].path);
  free(o->sets);
  free(o->variants);
  free(o->keep);
  free(o->command_line);
  expt_sweep_free(&o->sweep);
}

/* }================================================================== */

/* {==================================================================
 * Loading the scenario
 * =================================================================== */

/* The policy warnings printed so far. A policy shared by the variants is loaded once per
 * variant: each warning is printed once, with the variant of its first load. The first
 * WARN_KEEP distinct ones are remembered; past them, warnings are counted, not printed. */
#define WARN_KEEP 1000
typedef struct warn_log {
  char *seen[WARN_KEEP];
  size_t n_seen;
  size_t n_dropped;
} warn_log;

/* "retrysim: warning: FILE: PATH: MESSAGE" on stderr, as an error line reads with
 * "warning: " after the program's name; in a variant the message starts `in variant "v": `. */
static void print_warning(void *ctx, const char *variant, const retry_error *w) {
  warn_log *log = ctx;
  char key[800];
  retry_error_format(w, key, sizeof key);
  for (size_t i = 0; i < log->n_seen; i++)
    if (strcmp(log->seen[i], key) == 0) return;
  if (log->n_seen == WARN_KEEP) {
    log->n_dropped++;
    return;
  }
  /* Out of memory only costs the deduplication of this one line. */
  char *copy = malloc(strlen(key) + 1);
  if (copy != NULL) log->seen[log->n_seen++] = strcpy(copy, key);
  const char *src = w->source[0] ? w->source : "<input>";
  fprintf(stderr, "retrysim: warning: %s: %s%s%s%s%s%s\n", src, w->path, w->path[0] ? ": " : "",
          variant != NULL ? "in variant \"" : "", variant != NULL ? variant : "",
          variant != NULL ? "\": " : "", w->message);
}

/* The loader checks everything it converts; expt_run_validate adds the shape of the
 * expectations, so that `validate` refuses exactly what `run` would. */
expt_scenario *cli_runopts_load(const cli_runopts *o, int *status) {
  retry_error err;
  retry_error_clear(&err);
  warn_log *log = calloc(1, sizeof *log);
  expt_scenario_warn sink = {print_warning, log, o->strict};
  /* Without memory for the log, warnings are dropped, but --strict still holds. */
  expt_scenario_warn strict_only = {NULL, NULL, o->strict};
  expt_scenario_set_warn(log != NULL ? &sink : &strict_only);
  expt_import_set_warn(log != NULL ? &sink : &strict_only); /* foreign policy files' warnings */
  expt_scenario *s = expt_scenario_load(o->scenario, o->sets, o->n_sets, &err);
  expt_scenario_set_warn(NULL);
  expt_import_set_warn(NULL);
  if (log != NULL) {
    if (log->n_dropped > 0)
      fprintf(stderr, "retrysim: warning: %zu more warnings not shown\n", log->n_dropped);
    for (size_t i = 0; i < log->n_seen; i++)
      free(log->seen[i]);
    free(log);
  }
  /* The variants are chosen after the whole file was validated (every variant, chosen or
   * not), so that --variant never hides a broken one; the memory estimate is of the runs
   * that will run. */
  if (s != NULL && (expt_scenario_select(s, o->variants, o->n_variants, &err) != 0 ||
                    expt_run_validate(s, o->scenario, &err) != 0 ||
                    expt_scenario_check_memory(s, o->max_memory, &err) != 0)) {
    expt_scenario_destroy(s);
    s = NULL;
  }
  if (s != NULL) {
    expt_scenario_warn_identical(s, stderr);
    expt_scenario_warn_unjudged(s, stderr);
    expt_capacity_warn(s, stderr);
  }
  if (s == NULL) {
    expt_error_print(stderr, &err);
    /* Out of memory exits with 3; every other loading error is bad input, 2. */
    *status = expt_run_exit_status(err.code);
  }
  return s;
}

/* }================================================================== */

int cli_runopts_command(int argc, char **argv, cli_runopts_action act) {
  cli_runopts o;
  int status = cli_runopts_parse(&o, argc, argv);
  if (status == CLI_HELP) {
    cli_runopts_free(&o);
    return cli_help();
  }
  /* From here on a signal removes the temporary files of --out and --junit. */
  expt_output_signals_install();
  if (status == EXPT_EXIT_OK) {
    expt_scenario *s = cli_runopts_load(&o, &status);
    if (s != NULL) status = act(&o, s, argc, argv);
    expt_scenario_destroy(s);
  }
  cli_runopts_free(&o);
  return status;
}
