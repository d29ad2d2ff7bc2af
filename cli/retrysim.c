/*
 * retrysim.c: main() of the retrysim command: `run`, `validate`, `--help`, `--version`. Parses
 * the command line, loads the scenario and hands it to the run driver (expt/expt_run.c).
 * Invariant: nothing runs and nothing is written unless the whole command line and scenario
 * are valid; every error ends in exit status 2 (usage, input) or 3 (run time).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retry/retry.h"
#include "expt/expt_explain.h"
#include "expt/expt_output.h"
#include "expt/expt_run.h"
#include "expt/expt_scenario.h"
#include "expt/expt_shard.h"
#include "expt/expt_study.h"
#include "expt/expt_sweep.h"

/* A prototype like every other non-static function's; the build uses -Wmissing-prototypes. */
int main(int argc, char **argv);

/* Kept apart from the help text: a usage error prints only these lines, on stderr, while
 * --help prints both on stdout. Keep both in step with docs/cli.md and with the options
 * parse_option accepts. */
static const char usage_text[] =
    "usage: retrysim run SCENARIO.json [--seed N] [--duration D] [--out DIR]\n"
    "                    [--format text|json] [--check] [--junit FILE] [--set PATH=VALUE]...\n"
    "                    [--variant NAME]... [--max-memory SIZE] [--quiet] [--plot]\n"
    "                    [--edges] [--strict] [--reps N] [--confidence L] [--baseline V]\n"
    "                    [--warmup D] [-j N] [--shard K/N] [--sweep PATH=VALUES]...\n"
    "       retrysim plan SCENARIO.json [run options] --shards N --out DIR\n"
    "       retrysim merge DIR... --out DIR [--quiet] [--check [--junit FILE]] [--plot]\n"
    "       retrysim validate SCENARIO.json [--set PATH=VALUE]... [--variant NAME]...\n"
    "                    [--duration D] [--warmup D] [--max-memory SIZE] [--strict]\n"
    "       retrysim explain SCENARIO.json (--call ID | --stopped REASON | --after T)\n"
    "                    [--edge FROM->TO] [--variant NAME] [--seed N] [--set PATH=VALUE]...\n"
    "                    [--format text|json]\n"
    "       retrysim --help | --version\n";

static const char help_text[] =
    "\n"
    "Simulates RPC clients, services and their retry policies from a JSON scenario.\n"
    "\n"
    "commands:\n"
    "  run        run the scenario (every variant) and print a summary\n"
    "  validate   load and check the scenario and every variant; print \"FILE: ok (N runs)\"\n"
    "  explain    run one variant and print the retry decisions of one call, layer by layer\n"
    "  plan       print one `retrysim run ... --shard K/N` command per shard, then the merge\n"
    "  merge      aggregate the shards' DIR/shard.json files into the files of one local run\n"
    "\n"
    "options:\n"
    "  -s, --seed N          seed of every run (0 .. 2^64-1), instead of the scenario's\n"
    "      --duration D      simulated duration (\"30s\", \"2m\"), as --set duration=D\n"
    "      --warmup D        leave calls started before D out of the summary's figures (the\n"
    "                        time series keeps them), as --set warmup=D\n"
    "  -o, --out DIR         write summary.json, timeseries.csv, latency.csv, variants.csv\n"
    "                        (and timeseries-VARIANT.csv) into DIR, created when missing\n"
    "      --plot            with --out: draw the plots (gnuplot, plots/*.gp) as SVG next to\n"
    "                        the CSV files and write report.md and report.html there\n"
    "      --edges           text summary of variants: add a table of every edge\n"
    "      --format FMT      text (default): a readable summary; json: summary.json on stdout\n"
    "      --check           check the scenario's \"expect\" values; exit 1 if one fails\n"
    "      --junit FILE      with --check: also write the results as JUnit XML to FILE\n"
    "      --variant NAME    run only this variant (repeatable; in the scenario's order)\n"
    "      --max-memory SIZE refuse a run whose world would need more (\"8GiB\", \"512MiB\",\n"
    "                        \"none\"); default 8GiB\n"
    "      --set PATH=VALUE  override a scenario value (repeatable): VALUE is JSON if it\n"
    "                        parses (5, true, null removes), else a string (\"250ms\")\n"
    "  -q, --quiet           no text summary, no progress line\n"
    "      --reps N          a study: run every variant N times (1 .. 100000) on seeds derived\n"
    "                        from the base seed, with means and confidence intervals\n"
    "      --confidence L    level of the study's intervals (0.5 .. 0.9999, default 0.95)\n"
    "      --baseline V      study: paired differences of every variant against variant V\n"
    "  -j, --jobs N          study: runs in parallel (default: the processors online)\n"
    "      --shard K/N       study: run only the K-th of N slices of the runs; writes\n"
    "                        DIR/shard.json for `retrysim merge`\n"
    "      --shards N        plan: the number of shards\n"
    "      --sweep PATH=VALUES  a study over a grid (repeatable: one axis each): VALUES is\n"
    "                        v1,v2,..., FROM:TO:N or FROM:TO:N:log (\"400/s:1200/s:5\");\n"
    "                        replaces the scenario's \"sweep\"\n"
    "      --strict          a warning about a policy (an ignored field, a probable unit\n"
    "                        mistake) is an error: exit 2\n"
    "  -h, --help            this help\n"
    "  -V, --version         print the version\n"
    "Options also take the form --name=value.\n"
    "\n"
    "exit status: 0 ok, 1 an expectation failed (--check), 2 bad command line or scenario,\n"
    "3 failure while running or writing (out of memory, I/O), 130 / 143 interrupted by\n"
    "SIGINT / SIGTERM (temporary files removed). See docs/cli.md.\n";

/* The parsed command line. The --set paths are copied out of argv (the path is the part before
 * '='; the loader wants it NUL-terminated); values point into argv, which outlives the run. */
typedef struct cli {
  const char *command;   /* "run" or "validate" */
  const char *scenario;  /* the scenario file */
  expt_set *sets;         /* --set overrides, then --duration; paths owned */
  size_t n_sets;         /* entries used; sets has room for argc + 1 */
  const char *duration;  /* --duration, or NULL */
  const char *warmup;    /* --warmup, or NULL */
  const char **variants; /* --variant names, borrowed from argv; room for argc */
  size_t n_variants;     /* entries used */
  bool strict;           /* --strict: policy warnings are errors */
  size_t reps;           /* --reps, 0 when not given */
  double confidence;     /* --confidence, NaN when not given */
  const char *baseline;  /* --baseline, or NULL */
  unsigned jobs;         /* -j, 0 when not given (the processors online) */
  unsigned shard_k;      /* --shard K/N; shard_n 0 when not given */
  unsigned shard_n;
  unsigned shards;     /* plan --shards N, 0 when not given */
  expt_sweep sweep;     /* --sweep axes (expt_sweep.h), none when not given */
  uint64_t max_memory; /* --max-memory in bytes; UINT64_MAX: no limit */
  expt_run_opts opts;   /* for the run driver; out and err are set in main */
} cli;

/* {==================================================================
 * Parsing
 * =================================================================== */

/* Reports a usage error; returns EXPT_EXIT_USAGE. */
/* fmt takes exactly one %s; a message without an argument is passed as ("%s", text). Every
 * error is one line (docs/cli.md, "Standard streams"), so the hint to --help that users of
 * other command-line tools expect ends that line instead of making a second one: a script
 * that keeps the last line of stderr keeps the whole message. */
static int usage_error(const char *fmt, const char *arg) {
  fputs("retrysim: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs(" (see retrysim --help)\n", stderr);
  return EXPT_EXIT_USAGE;
}

/* Whether a value looks like an option: "--out --quiet" would otherwise make a directory
 * called "--quiet" and run. A lone "-" is not an option, and a name that really starts with
 * '-' can be written "./-name". */
static bool looks_like_option(const char *value) { return value[0] == '-' && value[1] != '\0'; }

/* Parses SIZE for --max-memory: a number (decimals allowed) with an optional binary unit
 * B, K/KiB, M/MiB, G/GiB, T/TiB (a bare number is bytes), or "none" for no limit. Returns 0
 * or -1. */
static int parse_size(const char *s, uint64_t *out) {
  if (strcmp(s, "none") == 0) {
    *out = UINT64_MAX;
    return 0;
  }
  if (*s < '0' || *s > '9') return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s) return -1;
  static const struct {
    const char *unit;
    double scale;
  } units[] = {{"", 1},
               {"B", 1},
               {"K", 1024.0},
               {"KiB", 1024.0},
               {"M", 1048576.0},
               {"MiB", 1048576.0},
               {"G", 1073741824.0},
               {"GiB", 1073741824.0},
               {"T", 1099511627776.0},
               {"TiB", 1099511627776.0}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(end, units[i].unit) != 0) continue;
    double b = v * units[i].scale;
    /* 2^64 is not representable as uint64; 1.8e19 bytes is no limit anyway. */
    if (!(b >= 1.0) || b >= 18446744073709551615.0) return -1;
    *out = (uint64_t)b;
    return 0;
  }
  return -1;
}

/* Reports running out of memory while reading the arguments; returns EXPT_EXIT_RUNTIME (3),
 * the status docs/cli.md gives for out of memory, not the 2 of a usage mistake. */
static int out_of_memory(void) {
  fputs("retrysim: out of memory\n", stderr);
  return EXPT_EXIT_RUNTIME;
}

/* Parses a decimal uint64 with nothing else around it. Returns 0 or -1. Out of range is an
 * error rather than a clamp: two different seeds on the command line must never run the same. */
static int parse_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return -1; /* strtoull would accept " -1" as 2^64-1 */
  char *end;
  /* strtoull sets ERANGE on overflow but never clears errno, so it is cleared first. */
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return -1;
  *out = (uint64_t)v;
  return 0;
}

/* Adds "--set PATH=VALUE" (the path is copied, the value borrowed from argv). */
static int add_set(cli *c, const char *arg) {
  const char *eq = strchr(arg, '=');
  /* Room is guaranteed: sets holds argc + 1 entries, and each argument adds at most one.
   * The value is split at the first '=', so a value may hold '=' itself. */
  if (eq == NULL || eq == arg) return usage_error("--set needs PATH=VALUE, got '%s'", arg);
  size_t n = (size_t)(eq - arg);
  char *path = malloc(n + 1);
  if (path == NULL) return out_of_memory();
  memcpy(path, arg, n);
  path[n] = '\0';
  c->sets[c->n_sets].path = path;
  c->sets[c->n_sets++].value = eq + 1;
  return 0;
}

/* Applies an option that takes a value; arg is the option as written. validate accepts only
 * --set and --duration. */
static int set_option(cli *c, const char *name, const char *arg, const char *value) {
  /* validate runs nothing, so it takes only what changes the scenario (--set, --duration):
   * --seed or --out there would silently do nothing, which is worse than an error. */
  bool run = strcmp(c->command, "run") == 0 || strcmp(c->command, "plan") == 0;
  if (strcmp(name, "set") == 0) return add_set(c, value);
  if (strcmp(name, "duration") == 0) {
    c->duration = value;
    return 0;
  }
  if (strcmp(name, "warmup") == 0) {
    c->warmup = value;
    return 0;
  }
  if (strcmp(name, "variant") == 0) {
    if (value[0] == '\0' || looks_like_option(value))
      return usage_error("--variant needs a variant's name, got '%s'", value);
    c->variants[c->n_variants++] = value; /* room: one per argument */
    return 0;
  }
  if (strcmp(name, "max-memory") == 0) {
    if (parse_size(value, &c->max_memory) != 0)
      return usage_error("--max-memory needs a size such as 8GiB, 512MiB, 1.5G or none, got '%s'",
                         value);
    return 0;
  }
  if (!run) return usage_error("validate does not take '%s'", arg);
  if (strcmp(name, "reps") == 0) {
    uint64_t n;
    if (parse_u64(value, &n) != 0 || n < 1 || n > EXPT_STUDY_MAX_REPS)
      return usage_error("--reps needs an integer 1 .. 100000, got '%s'", value);
    c->reps = (size_t)n;
    return 0;
  }
  if (strcmp(name, "confidence") == 0) {
    char *end;
    errno = 0;
    double l = strtod(value, &end);
    if (errno != 0 || end == value || *end != '\0' || !(l >= EXPT_STUDY_MIN_CONFIDENCE) ||
        !(l <= EXPT_STUDY_MAX_CONFIDENCE))
      return usage_error("--confidence needs a level 0.5 .. 0.9999 (0.95 for 95 %%), got '%s'",
                         value);
    c->confidence = l;
    return 0;
  }
  if (strcmp(name, "baseline") == 0) {
    if (value[0] == '\0' || looks_like_option(value))
      return usage_error("--baseline needs a variant's name, got '%s'", value);
    c->baseline = value;
    return 0;
  }
  if (strcmp(name, "jobs") == 0 || strcmp(name, "j") == 0) {
    uint64_t n;
    if (parse_u64(value, &n) != 0 || n < 1 || n > 4096)
      return usage_error("-j needs a number of parallel runs 1 .. 4096, got '%s'", value);
    c->jobs = (unsigned)n;
    return 0;
  }
  if (strcmp(name, "shard") == 0) {
    unsigned k = 0, n = 0;
    char tail;
    if (sscanf(value, "%u/%u%c", &k, &n, &tail) != 2 || value[0] < '0' || value[0] > '9' || n < 1 ||
        n > 100000 || k < 1 || k > n)
      return usage_error("--shard needs K/N with 1 <= K <= N (such as 2/8), got '%s'", value);
    c->shard_k = k;
    c->shard_n = n;
    return 0;
  }
  if (strcmp(name, "sweep") == 0) {
    retry_error e;
    retry_error_clear(&e);
    if (expt_sweep_add_arg(&c->sweep, value, &e) != 0) {
      if (e.code == RETRY_ENOMEM) return out_of_memory();
      return usage_error("%s", e.message);
    }
    return 0;
  }
  if (strcmp(name, "shards") == 0) {
    uint64_t n;
    if (strcmp(c->command, "plan") != 0)
      return usage_error("'%s' belongs to `retrysim plan`; `run` takes --shard K/N", arg);
    if (parse_u64(value, &n) != 0 || n < 1 || n > 100000)
      return usage_error("--shards needs a number of shards 1 .. 100000, got '%s'", value);
    c->shards = (unsigned)n;
    return 0;
  }
  if (strcmp(name, "seed") == 0 || strcmp(name, "s") == 0) {
    c->opts.has_seed = true;
    if (parse_u64(value, &c->opts.seed) != 0)
      return usage_error("--seed needs an integer 0 .. 18446744073709551615, got '%s'", value);
  } else if (strcmp(name, "out") == 0 || strcmp(name, "o") == 0) {
    if (value[0] == '\0') return usage_error("%s", "--out needs a directory");
    if (looks_like_option(value))
      return usage_error(
          "--out needs a directory, got the option '%s' (write ./NAME for a "
          "directory whose name starts with '-')",
          value);
    c->opts.out_dir = value;
  } else if (strcmp(name, "junit") == 0) {
    if (value[0] == '\0') return usage_error("%s", "--junit needs a file name");
    if (looks_like_option(value))
      return usage_error(
          "--junit needs a file name, got the option '%s' (write ./NAME for a "
          "file whose name starts with '-')",
          value);
    c->opts.junit = value;
  } else if (strcmp(name, "format") == 0) {
    if (strcmp(value, "text") == 0)
      c->opts.format = EXPT_FORMAT_TEXT;
    else if (strcmp(value, "json") == 0)
      c->opts.format = EXPT_FORMAT_JSON;
    else
      return usage_error("--format is text or json, got '%s'", value);
  }
  return 0;
}

/* Applies a flag without a value; arg is the flag as written, for messages. */
static int set_flag(cli *c, const char *name, const char *arg) {
  bool check = strcmp(name, "check") == 0;
  bool quiet = strcmp(name, "quiet") == 0 || strcmp(name, "q") == 0;
  bool plot = strcmp(name, "plot") == 0;
  if (strcmp(name, "strict") == 0) { /* run and validate alike: it changes what loads */
    c->strict = true;
    return 0;
  }
  bool edges = strcmp(name, "edges") == 0;
  if (!check && !quiet && !plot && !edges) return usage_error("unknown option '%s'", arg);
  if (strcmp(c->command, "validate") == 0) return usage_error("validate does not take '%s'", arg);
  if (check)
    c->opts.check = true;
  else if (plot)
    c->opts.plot = true;
  else if (edges)
    c->opts.edges = true;
  else
    c->opts.quiet = true;
  return 0;
}

/* Whether an option name (without dashes) takes a value. */
/* This list decides whether the next argument is consumed as a value; set_option must handle
 * every name in it. */
static bool takes_value(const char *name) {
  static const char *const with_value[] = {
      "seed",    "s",          "duration",   "out",   "o",     "format", "set",
      "variant", "junit",      "max-memory", "reps",  "jobs",  "j",      "shard",
      "shards",  "confidence", "baseline",   "sweep", "warmup"};
  for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
    if (strcmp(name, with_value[i]) == 0) return true;
  return false;
}

/* Parses one option at argv[*i] ("--name", "--name=value", "-x"), taking its value from the next
 * argument when needed. Returns 0, EXPT_EXIT_USAGE or EXPT_EXIT_RUNTIME. */
static int parse_option(cli *c, int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  char name[32];
  const char *value = NULL;
  const char *body = arg[1] == '-' ? arg + 2 : arg + 1;
  size_t n = strcspn(body, "=");
  /* Short names take one dash ("-s 5"), long ones two ("--seed 5", "--seed=5"). */
  bool short_form = arg[1] != '-';
  /* No option name is 32 bytes long, so a longer one is unknown without a lookup. A short
   * option is one letter (-s), a long one at least two (--set). */
  /* "-j2" as make takes it: a short option that takes a value may have it attached. */
  if (short_form && n > 1 && (body[0] == 'j' || body[0] == 's' || body[0] == 'o')) {
    name[0] = body[0];
    name[1] = '\0';
    return set_option(c, name, arg, body + 1);
  }
  if (n >= sizeof name || (short_form ? n != 1 : n < 2))
    return usage_error("unknown option '%s'", arg);
  memcpy(name, body, n);
  name[n] = '\0';
  if (body[n] == '=') value = body + n + 1;
  if (!takes_value(name)) {
    if (value != NULL) return usage_error("option '%s' takes no value", arg);
    return set_flag(c, name, arg);
  }
  if (value == NULL) {
    if (*i + 1 >= argc) return usage_error("option '%s' needs a value", arg);
    /* Taken as it is, even when it starts with '-': "--duration -5s" is then refused by the
     * loader as a bad duration, rather than here as an unknown option "-5s". */
    value = argv[++*i];
  }
  return set_option(c, name, arg, value);
}

/* Parses the arguments after the command. Returns 0, EXPT_EXIT_USAGE or EXPT_EXIT_RUNTIME. Options
 * and the scenario may come in any order; "--" ends the options, for a scenario file whose name
 * starts with '-'. The first error stops parsing: one clear message beats a cascade. */
static int parse_args(cli *c, int argc, char **argv) {
  bool options = true;
  /* argv[1] is the command. A lone "-" is not an option; it is taken as the scenario's
   * name like any other argument. */
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i];
    int rc = 0;
    if (options && strcmp(arg, "--") == 0)
      options = false;
    else if (options && arg[0] == '-' && arg[1] != '\0')
      rc = parse_option(c, argc, argv, &i);
    else if (c->scenario == NULL)
      c->scenario = arg;
    else
      rc = usage_error("unexpected argument '%s'", arg);
    if (rc != 0) return rc;
  }
  if (c->scenario == NULL) return usage_error("%s: which scenario file?", c->command);
  if (c->opts.plot && c->opts.out_dir == NULL)
    return usage_error("%s", "--plot needs --out DIR: the pictures are drawn from its files");
  if (c->opts.junit != NULL && !c->opts.check)
    return usage_error("%s", "--junit needs --check: it records the checks' results");
  if (c->shard_n > 0 && c->opts.out_dir == NULL)
    return usage_error("%s", "--shard needs --out DIR: the shard's runs go to DIR/shard.json");
  if (c->shard_n > 0 && (c->opts.plot || c->opts.check))
    return usage_error("%s",
                       "--shard writes raw runs only: give --plot and --check to the merge "
                       "(retrysim merge DIR... --out DIR --check), or run locally");
  if (strcmp(c->command, "plan") == 0 && (c->shards == 0 || c->opts.out_dir == NULL))
    return usage_error("%s", "plan needs --shards N and --out DIR");
  if (strcmp(c->command, "plan") == 0 && c->shard_n > 0)
    return usage_error("%s", "plan writes the --shard options itself: give --shards N only");
  /* --duration and --warmup go last, so they win over a --set of the same key. */
  const char *last[2][2] = {{"duration", c->duration}, {"warmup", c->warmup}};
  for (size_t i = 0; i < 2; i++) {
    if (last[i][1] == NULL) continue;
    size_t n = strlen(last[i][0]) + 1;
    char *path = malloc(n);
    if (path == NULL) return out_of_memory();
    memcpy(path, last[i][0], n);
    c->sets[c->n_sets].path = path;
    c->sets[c->n_sets++].value = last[i][1];
  }
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Commands
 * =================================================================== */

/* Whether any argument asks for help (so "retrysim run x --help" helps instead of running). */
static bool wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    /* After "--", "--help" would be a file's name, not a request for help. */
    if (strcmp(argv[i], "--") == 0) return false;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

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

/* Loads and validates the scenario; prints the error and sets *status on failure. The loader
 * checks everything it converts; expt_run_validate adds the shape of the expectations, so that
 * `validate` refuses exactly what `run` would. */
static expt_scenario *load(const cli *c, int *status) {
  retry_error err;
  retry_error_clear(&err);
  warn_log *log = calloc(1, sizeof *log);
  expt_scenario_warn sink = {print_warning, log, c->strict};
  /* Without memory for the log, warnings are dropped, but --strict still holds. */
  expt_scenario_warn strict_only = {NULL, NULL, c->strict};
  expt_scenario_set_warn(log != NULL ? &sink : &strict_only);
  expt_scenario *s = expt_scenario_load(c->scenario, c->sets, c->n_sets, &err);
  expt_scenario_set_warn(NULL);
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
  if (s != NULL && (expt_scenario_select(s, c->variants, c->n_variants, &err) != 0 ||
                    expt_run_validate(s, c->scenario, &err) != 0 ||
                    expt_scenario_check_memory(s, c->max_memory, &err) != 0)) {
    expt_scenario_destroy(s);
    s = NULL;
  }
  if (s == NULL) {
    char buf[800];
    retry_error_format(&err, buf, sizeof buf);
    fprintf(stderr, "retrysim: %s\n", buf);
    /* Out of memory exits with 3; every other loading error is bad input, 2. */
    *status = expt_run_exit_status(err.code);
  }
  return s;
}

/* One argument as a shell reads it back: as it is when it holds only letters, digits and
 * -_./=:, else in single quotes. Returns a malloc'd string, NULL when out of memory. */
static char *quote_arg(const char *a) {
  char *s = malloc(4 * strlen(a) + 3);
  if (s == NULL) return NULL;
  bool plain = a[0] != '\0' && strspn(a,
                                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789-_./=:,") == strlen(a);
  if (plain) return strcpy(s, a);
  char *p = s;
  *p++ = '\'';
  for (; *a; a++) {
    if (*a == '\'') {
      memcpy(p, "'\\''", 4);
      p += 4;
    } else {
      *p++ = *a;
    }
  }
  *p++ = '\'';
  *p = '\0';
  return s;
}

/* `retrysim plan`: one run command per shard (the plan's own arguments, without --shards and
 * --out, plus --shard K/N --out DIR/shard-K), then the merge. The scenario was loaded and
 * validated first, so every printed command would start. */
static int print_plan(const cli *c, int argc, char **argv) {
  for (unsigned k = 1; k <= c->shards; k++) {
    fputs("retrysim run", stdout);
    for (int i = 2; i < argc; i++) {
      const char *a = argv[i];
      if (strcmp(a, "--shards") == 0 || strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0) {
        i++;
        continue;
      }
      if (strncmp(a, "--shards=", 9) == 0 || strncmp(a, "--out=", 6) == 0) continue;
      char *q = quote_arg(a);
      if (q == NULL) return out_of_memory();
      printf(" %s", q);
      free(q);
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/shard-%u", c->opts.out_dir, k);
    char *q = quote_arg(dir);
    if (q == NULL) return out_of_memory();
    printf(" --shard %u/%u --out %s\n", k, c->shards, q);
    free(q);
  }
  fputs("retrysim merge", stdout);
  for (unsigned k = 1; k <= c->shards; k++) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/shard-%u", c->opts.out_dir, k);
    char *q = quote_arg(dir);
    if (q == NULL) return out_of_memory();
    printf(" %s", q);
    free(q);
  }
  char *q = quote_arg(c->opts.out_dir);
  if (q == NULL) return out_of_memory();
  printf(" --out %s\n", q);
  free(q);
  return fflush(stdout) == 0 ? EXPT_EXIT_OK : EXPT_EXIT_RUNTIME;
}

/* A study when any of its keys or options asks for more than one plain run. */
static int run_study_or_plain(cli *c, expt_scenario *s) {
  size_t reps = c->reps > 0 ? c->reps : expt_scenario_replications(s);
  if (reps == 0) reps = 1;
  double level = !isnan(c->confidence) ? c->confidence : expt_scenario_confidence(s);
  if (isnan(level)) level = EXPT_STUDY_DEFAULT_CONFIDENCE;
  const char *baseline = c->baseline != NULL ? c->baseline : expt_scenario_baseline(s);
  bool study = reps > 1 || c->shard_n > 0 || expt_sweep_wanted(s, &c->sweep);
  if (!study) {
    if (c->baseline != NULL || !isnan(c->confidence))
      return usage_error("%s",
                         "--baseline and --confidence apply to a study: add --reps N with "
                         "N >= 2 (or \"replications\" in the scenario)");
    return expt_run_scenario(s, &c->opts);
  }
  if (c->opts.plot && c->shard_n > 0)
    return usage_error("%s", "--plot draws a whole study: merge the shards first");
  /* What a study would silently not do is refused (review 11 item 11). */
  if (c->opts.edges)
    return usage_error("%s",
                       "--edges adds the edge table of a plain run; a study's edges are in its "
                       "points.csv (amplification.edges[FROM->TO]...)");
  if (c->shard_n > 0 && c->opts.format == EXPT_FORMAT_JSON)
    return usage_error("%s",
                       "--format json prints a summary, which a shard does not have: merge the "
                       "shards for it");
  const expt_scenario *scenarios[1] = {s};
  expt_study_spec spec = {.source = c->scenario,
                         .base = s,
                         .points = NULL,
                         .n_points = 0,
                         .scenarios = scenarios,
                         .reps = reps,
                         .confidence = level,
                         .baseline = baseline,
                         .warmup_s = (double)expt_scenario_config(s, 0)->warmup_ns / 1e9,
                         .jobs = c->jobs > 0 ? c->jobs : expt_study_default_jobs(),
                         .shard_k = c->shard_k,
                         .shard_n = c->shard_n,
                         .search = NULL};
  if (expt_sweep_wanted(s, &c->sweep))
    return expt_sweep_run_study(s, &c->sweep, &spec, c->max_memory, &c->opts);
  return expt_study_run(&spec, &c->opts);
}

static int run_command(cli *c, int argc, char **argv) {
  int status = EXPT_EXIT_OK;
  expt_scenario *s = load(c, &status);
  if (s == NULL) return status;
  size_t np = 1;
  if (strcmp(c->command, "plan") == 0) {
    status = expt_sweep_check_study(s, &c->sweep, c->max_memory, true, &np, stderr);
    if (status == EXPT_EXIT_OK) status = print_plan(c, argc, argv);
  } else if (strcmp(c->command, "validate") == 0) {
    /* Both commands share load(), so validate refuses exactly the files run would; a sweep's
     * points are checked as run checks them (expt_sweep_check_study). */
    /* A run per variant and replication ("replications" in the file), at each point. */
    size_t reps = expt_scenario_replications(s);
    size_t n = expt_scenario_n_runs(s) * (reps > 0 ? reps : 1);
    status = expt_sweep_check_study(s, NULL, c->max_memory, false, &np, stderr);
    if (status == EXPT_EXIT_OK && expt_scenario_sweep_block(s) != NULL)
      printf("%s: ok (%zu run%s at each of %zu sweep points)\n", c->scenario, n, n == 1 ? "" : "s",
             np);
    else if (status == EXPT_EXIT_OK)
      printf("%s: ok (%zu run%s)\n", c->scenario, n, n == 1 ? "" : "s");
  } else {
    status = run_study_or_plain(c, s);
  }
  expt_scenario_destroy(s);
  return status;
}

/* The command line as one string for report.md: "retrysim" and the arguments, each in single
 * quotes when it holds anything but letters, digits and -_./=:, (a shell would read it back
 * the same). Returns a malloc'd string, NULL when out of memory. */
static char *join_args(int argc, char **argv) {
  size_t n = sizeof "retrysim";
  for (int i = 1; i < argc; i++)
    n += 4 * strlen(argv[i]) + 3;
  char *s = malloc(n);
  if (s == NULL) return NULL;
  char *p = s + sprintf(s, "retrysim");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool plain = a[0] != '\0' && strspn(a,
                                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,") == strlen(a);
    *p++ = ' ';
    if (plain) {
      p += sprintf(p, "%s", a);
      continue;
    }
    *p++ = '\'';
    for (; *a; a++) {
      if (*a == '\'') {
        memcpy(p, "'\\''", 4); /* close, escaped quote, reopen */
        p += 4;
      } else {
        *p++ = *a;
      }
    }
    *p++ = '\'';
    *p = '\0';
  }
  return s;
}

/* `retrysim merge DIR... --out DIR [--quiet] [--check [--junit FILE]] [--plot]`. */
static int merge_main(int argc, char **argv) {
  const char **dirs = calloc((size_t)argc, sizeof *dirs);
  if (dirs == NULL) return out_of_memory();
  size_t n = 0;
  expt_run_opts o = {.format = EXPT_FORMAT_TEXT, .out = stdout, .err = stderr};
  int status = EXPT_EXIT_OK;
  for (int i = 2; i < argc && status == EXPT_EXIT_OK; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--junit") == 0) {
      if (i + 1 >= argc)
        status = usage_error("option '%s' needs a value", a);
      else if (strcmp(a, "--junit") == 0)
        o.junit = argv[++i];
      else
        o.out_dir = argv[++i];
    } else if (strncmp(a, "--out=", 6) == 0) {
      o.out_dir = a + 6;
    } else if (strncmp(a, "--junit=", 8) == 0) {
      o.junit = a + 8;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      o.quiet = true;
    } else if (strcmp(a, "--check") == 0) {
      o.check = true;
    } else if (strcmp(a, "--plot") == 0) {
      o.plot = true;
    } else if (looks_like_option(a)) {
      status = usage_error(
          "merge takes shard directories, --out DIR, --quiet, --check, "
          "--junit FILE and --plot, not '%s'",
          a);
    } else {
      dirs[n++] = a;
    }
  }
  if (status == EXPT_EXIT_OK &&
      (o.out_dir == NULL || o.out_dir[0] == '\0' || looks_like_option(o.out_dir)))
    status = usage_error("%s", "merge needs --out DIR");
  if (status == EXPT_EXIT_OK && o.junit != NULL &&
      (o.junit[0] == '\0' || looks_like_option(o.junit)))
    status = usage_error("%s", "--junit needs a file name");
  if (status == EXPT_EXIT_OK && o.junit != NULL && !o.check)
    status = usage_error("%s", "--junit needs --check: it records the checks' results");
  if (status == EXPT_EXIT_OK && n == 0)
    status = usage_error("%s", "merge needs the shard directories (DIR/shard.json)");
  char *command = NULL;
  if (status == EXPT_EXIT_OK) {
    command = join_args(argc, argv);
    o.command = command;
    expt_output_signals_install();
    status = expt_shard_merge(dirs, n, &o);
  }
  free(command);
  free(dirs);
  return status;
}

/* --version and --help are answered before anything else is parsed, so they work whatever else
 * is on the line ("retrysim run x.json --bogus --help" helps). */
int main(int argc, char **argv) {
  /* GSL's default handler aborts; the models check GSL's return codes instead. */
  gsl_set_error_handler_off();
  const char *cmd = argc > 1 ? argv[1] : "";
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 || strcmp(cmd, "version") == 0) {
    printf("retrysim %s\n", RETRY_VERSION);
    return EXPT_EXIT_OK;
  }
  if (strcmp(cmd, "help") == 0 || wants_help(argc, argv)) {
    fputs(usage_text, stdout);
    fputs(help_text, stdout);
    return EXPT_EXIT_OK;
  }
  if (strcmp(cmd, "explain") == 0) return expt_explain_main(argc, argv, stdout, stderr);
  if (strcmp(cmd, "merge") == 0) return merge_main(argc, argv);
  if (strcmp(cmd, "run") != 0 && strcmp(cmd, "validate") != 0 && strcmp(cmd, "plan") != 0) {
    /* One line, like every other usage error. */
    if (cmd[0] == '\0')
      return usage_error(
          "no command given%s; the commands are run, validate, explain, plan and merge", "");
    return usage_error(
        "unknown command '%s'; the commands are run, validate, explain, plan and merge", cmd);
  }
  /* At most one set per argument, plus --duration and --warmup. */
  /* c.sets == NULL is out of memory before anything ran: exit 3. The loop below frees the
   * paths that add_set and parse_args allocated; the cast drops the const that expt_set
   * carries for the loader's sake. */
  cli c = {.command = cmd,
           .sets = calloc((size_t)argc + 1, sizeof(expt_set)),
           .variants = calloc((size_t)argc + 1, sizeof(const char *)),
           .max_memory = EXPT_SCENARIO_MAX_MEMORY_DEFAULT,
           .confidence = NAN};
  c.opts.out = stdout;
  c.opts.err = stderr;
  int status = c.sets == NULL || c.variants == NULL ? out_of_memory() : parse_args(&c, argc, argv);
  char *command = NULL;
  if (status == EXPT_EXIT_OK && c.opts.plot) {
    command = join_args(argc, argv);
    if (command == NULL) status = out_of_memory();
    c.opts.command = command;
  }
  /* From here on a signal removes the temporary files of --out and --junit. */
  expt_output_signals_install();
  if (status == EXPT_EXIT_OK) status = run_command(&c, argc, argv);
  for (size_t i = 0; i < c.n_sets; i++)
    free((char *)c.sets[i].path);
  free(c.sets);
  free(c.variants);
  expt_sweep_free(&c.sweep);
  free(command);
  return status;
}

/* }================================================================== */
