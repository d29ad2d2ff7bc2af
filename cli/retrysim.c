/*
 * retrysim.c: main() of the retrysim command: the table of commands (run, validate, explain,
 * plan, merge), --help and --version. Each command reads its own arguments with the one
 * option parser (cli_getopt.c) and drives the library of experiments (expt/); main only picks
 * the command, as lua.c does over Lua's library.
 * Invariant: nothing runs and nothing is written unless the whole command line and scenario
 * are valid; every error ends in exit status 2 (usage, input) or 3 (run time).
 */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "retry/retry.h"

/* A prototype like every other non-static function's; the build uses -Wmissing-prototypes. */
int main(int argc, char **argv);

/* One command: its name, its line of the help, and its main. */
typedef struct cli_command {
  const char *name;
  const char *help;
  int (*main)(int argc, char **argv);
} cli_command;

/* The commands, in the order of the help. A new command is a row here and its cmd_*.c. */
static const cli_command commands[] = {
    {"run", "run the scenario (every variant) and print a summary", cmd_run_main},
    {"validate", "load and check the scenario and every variant; print \"FILE: ok (N runs)\"",
     cmd_validate_main},
    {"explain", "run one variant and print the retry decisions of one call, layer by layer",
     cmd_explain_main},
    {"plan", "print one `retrysim run ... --shard K/N` command per shard, then the merge",
     cmd_plan_main},
    {"merge", "aggregate the shards' DIR/shard.json files into the files of one local run",
     cmd_merge_main},
    {"import",
     "print the service config retrysim runs for Envoy/Istio/... policy files, and "
     "where each field came from",
     cmd_import_main},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* {==================================================================
 * Help
 * =================================================================== */

/* The usage lines, then the help around the table's lines. Keep both in step with docs/cli.md
 * and with the options the commands' tables hold (cli_runopts.c, cmd_explain.c, cmd_merge.c). */
static const char usage_text[] =
    "usage: retrysim run SCENARIO.json [--seed N] [--duration D] [--out DIR]\n"
    "                    [--format text|json] [--check] [--junit FILE] [--set PATH=VALUE]...\n"
    "                    [--variant NAME]... [--max-memory SIZE] [--max-runs N] [--quiet]\n"
    "                    [--plot] [--edges] [--strict] [--reps N] [--confidence L]\n"
    "                    [--baseline V] [--adjust holm]\n"
    "                    [--warmup D] [-j N] [--shard K/N] [--sweep PATH=VALUES]...\n"
    "                    [--plot-metric NAME]...\n"
    "       retrysim plan SCENARIO.json [run options] --shards N --out DIR\n"
    "       retrysim merge DIR... --out DIR [--quiet] [--check [--junit FILE]] [--plot]\n"
    "       retrysim validate SCENARIO.json [--set PATH=VALUE]... [--variant NAME]...\n"
    "                    [--duration D] [--warmup D] [--max-memory SIZE] [--max-runs N]\n"
    "                    [--strict]\n"
    "       retrysim explain SCENARIO.json (--call ID | --stopped REASON | --after T)\n"
    "                    [--edge FROM->TO] [--variant NAME] [--seed N] [--set PATH=VALUE]...\n"
    "                    [--format text|json]\n"
    "       retrysim import FILE... [--format text|json] [--strict]\n"
    "       retrysim --help | --version\n";

static const char help_intro[] =
    "\n"
    "Simulates RPC clients, services and their retry policies from a JSON scenario.\n"
    "\n";

static const char help_options[] =
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
    "      --plot-metric NAME  a sweep: also draw metric NAME of points.csv against the first\n"
    "                        axis (repeatable, at most 16; implies --plot)\n"
    "      --edges           text summary of variants: add a table of every edge\n"
    "      --format FMT      text (default): a readable summary; json: summary.json on stdout\n"
    "      --check           check the scenario's \"expect\" values; exit 1 if one fails\n"
    "      --junit FILE      with --check: also write the results as JUnit XML to FILE\n"
    "      --variant NAME    run only this variant (repeatable; in the scenario's order)\n"
    "      --max-memory SIZE refuse a run whose world would need more (\"8GiB\", \"512MiB\",\n"
    "                        \"none\"); default 8GiB\n"
    "      --max-runs N      refuse a study, sweep or search of more runs (\"none\": no\n"
    "                        limit); default 1000000\n"
    "      --set PATH=VALUE  override a scenario value (repeatable): VALUE is JSON if it\n"
    "                        parses (5, true, null removes), else a string (\"250ms\")\n"
    "  -q, --quiet           no text summary, no progress line\n"
    "      --reps N          a study: run every variant N times (1 .. 100000) on seeds derived\n"
    "                        from the base seed, with means and confidence intervals\n"
    "      --confidence L    level of the study's intervals (0.5 .. 0.9999, default 0.95)\n"
    "      --baseline V      study: paired differences of every variant against variant V\n"
    "      --adjust holm     study: the paired flags by Holm's step-down over each variant's\n"
    "                        metrics (family error 1 - confidence); default none\n"
    "  -j, --jobs N          study: runs in parallel (default: the processors online)\n"
    "      --shard K/N       study: run only the K-th of N slices of the runs; writes\n"
    "                        DIR/shard.json for `retrysim merge`\n"
    "      --shards N        plan: the number of shards\n"
    "      --sweep PATH=VALUES  a study over a grid (repeatable: one axis each): VALUES is\n"
    "                        v1,v2,..., FROM:TO:N or FROM:TO:N:log (\"400/s:1200/s:5\");\n"
    "                        replaces the scenario's \"sweep\"; PATH1+PATH2=VALUES moves\n"
    "                        both paths together (one linked axis)\n"
    "      --strict          a warning about a policy (an ignored field, a probable unit\n"
    "                        mistake) is an error: exit 2\n"
    "  -h, --help            this help\n"
    "  -V, --version         print the version\n"
    "Long options take --name=value as well as --name value, and may be shortened to any\n"
    "prefix that names one option (--form json); \"--\" ends the options.\n"
    "\n"
    "exit status: 0 ok, 1 an expectation failed (--check), 2 bad command line or scenario,\n"
    "3 failure while running or writing (out of memory, I/O), 130 / 143 interrupted by\n"
    "SIGINT / SIGTERM (temporary files removed). See docs/cli.md.\n";

int cli_help(void) {
  fputs(usage_text, stdout);
  fputs(help_intro, stdout);
  fputs("commands:\n", stdout);
  for (size_t i = 0; i < N_COMMANDS; i++)
    printf("  %-10s %s\n", commands[i].name, commands[i].help);
  fputs(help_options, stdout);
  return EXPT_EXIT_OK;
}

/* }================================================================== */

/* {==================================================================
 * main
 * =================================================================== */

/* Whether any argument asks for help (so "retrysim run x --bogus --help" helps instead of
 * refusing the --bogus): the exact forms only, before any parsing. A shortened --help ("--he")
 * is read by the command's parser, which knows whether it is a value. */
static bool wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    /* After "--", "--help" would be a file's name, not a request for help. */
    if (strcmp(argv[i], "--") == 0) return false;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

/* The program's own options in front of a command (--help, --version, or a prefix of one, by
 * getopt_long's rule): 'h', 'V', or 0 for anything else. */
static int program_option(const char *arg) {
  static const struct option top[] = {
      {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
  if (strcmp(arg, "help") == 0) return 'h';
  if (strcmp(arg, "version") == 0) return 'V';
  if (arg[0] != '-') return 0;
  char *args[] = {(char *)"retrysim", (char *)arg, NULL};
  opterr = 0;
  optind = 0; /* restart getopt, and again for the command's parser */
  int c = getopt_long(2, args, "+hV", top, NULL);
  /* "-hV" and the like are not what anyone means: one option alone. */
  bool alone = optind == 2;
  optind = 0;
  return (c == 'h' || c == 'V') && alone ? c : 0;
}

/* --version and --help are answered before anything else is parsed, so they work whatever
 * else is on the line ("retrysim run x.json --bogus --help" helps). */
int main(int argc, char **argv) {
  /* GSL's default handler aborts; the models check GSL's return codes instead. */
  gsl_set_error_handler_off();
  const char *cmd = argc > 1 ? argv[1] : "";
  int top = program_option(cmd);
  if (top == 'V') {
    printf("retrysim %s\n", RETRY_VERSION);
    return EXPT_EXIT_OK;
  }
  if (top == 'h' || wants_help(argc, argv)) return cli_help();
  /* Each command reads its own vector: argv[1] (its name) is its argv[0]. */
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(cmd, commands[i].name) == 0) return commands[i].main(argc - 1, argv + 1);
  /* One line, like every other usage error. */
  if (cmd[0] == '\0')
    return cli_usage("no command given; the commands are run, validate, explain, plan and merge");
  return cli_usage("unknown command '%s'; the commands are run, validate, explain, plan and merge",
                   cmd);
}

/* }================================================================== */
