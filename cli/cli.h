/*
 * cli.h: what the commands of `retrysim` share. The one option parser (getopt_long with the
 * program's one-line messages, cli_getopt.c), the usage error convention and the parsers of
 * option values; the options of `run`, which `validate` and `plan` take too, and the loading
 * of their scenario with its warnings (cli_runopts.c); and the commands themselves, one file
 * each (cmd_*.c), which retrysim.c lists in its table.
 * Invariant: a usage error is one line on stderr, "retrysim: ... (see retrysim --help)", and
 * exit status 2 (EXPT_EXIT_USAGE); running out of memory while reading the line is status 3.
 */
#ifndef CLI_H
#define CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expt/expt_report.h"
#include "expt/expt_run.h"
#include "expt/expt_scenario.h"
#include "expt/expt_sweep.h"

/* {==================================================================
 * The commands (retrysim.c holds their table)
 * =================================================================== */

/* Each command gets its own argument vector: argv[0] is the command's name ("run"), the rest
 * its arguments. Each returns the process exit status (docs/cli.md, "Exit status"). */
int cmd_run_main(int argc, char **argv);
int cmd_validate_main(int argc, char **argv);
int cmd_explain_main(int argc, char **argv);
int cmd_plan_main(int argc, char **argv);
int cmd_merge_main(int argc, char **argv);
int cmd_import_main(int argc, char **argv);

/* Prints the usage and the help on stdout; returns EXPT_EXIT_OK. For a command that meets an
 * abbreviated --help ("--he"); the exact forms are answered by main before any parsing. */
int cli_help(void);

/* }================================================================== */

/* {==================================================================
 * Messages (cli_getopt.c)
 * =================================================================== */

/* Prints "retrysim: MESSAGE (see retrysim --help)" on stderr, one line; returns
 * EXPT_EXIT_USAGE. fmt is a printf format. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "retrysim: out of memory"; returns EXPT_EXIT_RUNTIME (3, as docs/cli.md says for out
 * of memory, not the 2 of a usage mistake). */
int cli_oom(void);

/* }================================================================== */

/* {==================================================================
 * The option parser (cli_getopt.c)
 * =================================================================== */

/* What cli_parser_next returns besides an option's val (a letter, or CLI_LONG and above for an
 * option without a short form). */
enum {
  CLI_ARG = 1,    /* an argument that is not an option: p->value */
  CLI_END = -1,   /* nothing left */
  CLI_ERROR = -2, /* a usage error, already printed: exit with EXPT_EXIT_USAGE */
  CLI_HELP = -3,  /* returned by the commands' own parsers: --help was given */
  CLI_LONG = 256, /* the first val free for options with a long name only */
};

/* One pass over a command's arguments with getopt_long, in the order they come (options and
 * arguments mixed, as GNU tools take them; "--" ends the options). Caller's storage; the
 * fields after the first group are read-only for the caller. */
typedef struct cli_parser {
  /* public, set by cli_parser_init */
  int argc;                      /* the command's argument count */
  char **argv;                   /* the command's arguments; argv[0] is its name */
  const struct option *longopts; /* the command's options, ended by a zeroed entry */
  const char *prefix;            /* before every message of the parser: "" or "explain: " */
  /* read-only: the last option or argument returned */
  const char *value; /* the option's value or the argument; NULL for a flag */
  char name[48];     /* the option for messages: "--seed" (long, even when
                        abbreviated) or "-s" (written short) */
  int first, last;   /* argv indices the option and its value span */
  /* private */
  char shortopts[64]; /* "-:" and the command's short options */
  bool rest;          /* after "--": every argument is returned as CLI_ARG */
} cli_parser;

/* Starts a pass over argv[1 .. argc - 1]. shortopts lists the short options as getopt does
 * ("s:o:qh"); the parser adds its own leading "-:" (arguments in order, ':' for a missing
 * value). Every parser of the process restarts getopt (optind = 0, glibc's and musl's way of
 * starting over). Nothing is allocated. */
void cli_parser_init(cli_parser *p, int argc, char **argv, const char *shortopts,
                     const struct option *longopts, const char *prefix);

/* The next option (its val, with p->value, p->name, p->first and p->last set), CLI_ARG with
 * p->value the argument, CLI_END, or CLI_ERROR after printing one of: "unknown option '--x'",
 * "option '--s' is ambiguous: it could be --seed or --set", "option '--seed' needs a value",
 * "option '--check=yes' takes no value". A long option may be abbreviated to any prefix that
 * names one option (getopt_long's rule). */
int cli_parser_next(cli_parser *p);

/* }================================================================== */

/* {==================================================================
 * Values (cli_getopt.c)
 * =================================================================== */

/* A decimal uint64 with nothing around it (no sign, no blank). Returns 0 or -1; out of range
 * is an error rather than a clamp: two different seeds must never run the same. */
int cli_parse_u64(const char *s, uint64_t *out);

/* SIZE of --max-memory: a number (decimals allowed) with an optional binary unit B, K/KiB,
 * M/MiB, G/GiB, T/TiB (a bare number is bytes), or "none" (UINT64_MAX). Returns 0 or -1. */
int cli_parse_size(const char *s, uint64_t *out);

/* Whether a value looks like an option ("--out --quiet" would otherwise make a directory
 * called "--quiet"). A lone "-" is not one, and a name that starts with '-' can be written
 * "./-name". */
bool cli_looks_like_option(const char *value);

/* Adds "--set PATH=VALUE" to sets[*n] (the path copied, the value borrowed). The caller gives
 * room for one more. Returns 0, or a usage error / out of memory status, printed. */
int cli_add_set(expt_set *sets, size_t *n, const char *arg, const char *prefix);

/* An argument as a shell reads it back: as it is when it holds only letters, digits and
 * -_./=:, else in single quotes. Returns a new string; free with free(). NULL: out of memory. */
char *cli_quote_arg(const char *a);

/* The command line for report.md: "retrysim", the command and its arguments (argv[0 .. argc-1]
 * of a command), each quoted as cli_quote_arg does. Returns a new string; free with free().
 * NULL: out of memory. */
char *cli_join_args(int argc, char **argv);

/* }================================================================== */

/* {==================================================================
 * The options of run, validate and plan (cli_runopts.c)
 * =================================================================== */

/* At most this many --plot-metric: each is one more picture on the page. */
#define CLI_MAX_PLOT_METRICS EXPT_REPORT_MAX_PLOT_METRICS

/* The parsed command line of run, validate or plan. The --set paths are copied out of argv
 * (the loader wants them NUL-terminated); every other string points into argv. */
typedef struct cli_runopts {
  const char *command;   /* "run", "validate" or "plan" */
  const char *scenario;  /* the scenario file */
  expt_set *sets;        /* --set overrides, then --duration and --warmup; paths owned */
  size_t n_sets;         /* entries used; sets has room for argc + 2 */
  const char *duration;  /* --duration, or NULL */
  const char *warmup;    /* --warmup, or NULL */
  const char **variants; /* --variant names, borrowed from argv; room for argc */
  size_t n_variants;     /* entries used */
  const char *plot_metrics[CLI_MAX_PLOT_METRICS]; /* --plot-metric names, borrowed from argv */
  size_t n_plot_metrics;                          /* entries used */
  bool strict;           /* --strict: policy warnings are errors */
  size_t reps;           /* --reps, 0 when not given */
  double confidence;     /* --confidence, NaN when not given */
  const char *baseline;  /* --baseline, or NULL */
  bool holm;             /* --adjust holm */
  bool adjust_given;     /* --adjust was given */
  unsigned jobs;         /* -j, 0 when not given (the processors online) */
  unsigned shard_k;      /* --shard K/N; shard_n 0 when not given */
  unsigned shard_n;
  unsigned shards;     /* plan's --shards N, 0 when not given */
  expt_sweep sweep;    /* --sweep axes (expt_sweep.h), none when not given */
  uint64_t max_memory; /* --max-memory in bytes; UINT64_MAX: no limit */
  uint64_t max_runs;   /* --max-runs: the most runs of a study, sweep or search; 0: no limit */
  expt_run_opts opts;  /* for the run driver; out is stdout, err stderr */
  int *keep;           /* plan: what its shard commands keep of each argument (argc
                          entries): -1 all, 0 nothing (--shards, --out and their values),
                          n > 0 the first n bytes ("-q" of "-qo DIR"); NULL otherwise */
  char *command_line;  /* with --plot: the command line for report.md (owned) */
} cli_runopts;

/* Parses the arguments of run, validate or plan (argv[0] is the command). Returns
 * EXPT_EXIT_OK, CLI_HELP for --help, or the status of a printed error (2 usage, 3 out of
 * memory). Free o with cli_runopts_free in every case. */
int cli_runopts_parse(cli_runopts *o, int argc, char **argv);

/* Frees what cli_runopts_parse allocated; o may be half-filled. */
void cli_runopts_free(cli_runopts *o);

/* Loads and validates o's scenario with its overrides, prints its policy warnings (each once)
 * and chooses its variants. On failure prints the error, sets *status (2 bad input, 3 out of
 * memory) and returns NULL. Returns a new scenario; free with expt_scenario_destroy. */
expt_scenario *cli_runopts_load(const cli_runopts *o, int *status);

/* What run, validate and plan do with a loaded scenario: returns the exit status. argc and
 * argv are the command's own (plan repeats them). */
typedef int (*cli_runopts_action)(cli_runopts *o, expt_scenario *s, int argc, char **argv);

/* The body the three commands share: reads the options (--help prints the help), installs the
 * signal handlers that remove --out's and --junit's temporary files, loads the scenario and
 * hands it to act. Returns the exit status. */
int cli_runopts_command(int argc, char **argv, cli_runopts_action act);

/* }================================================================== */

/* The runs of a study, sweep or search of s at np points (cli_estimate.c): with out NULL,
 * refuses beyond o->max_runs (exit 2, one line on stderr naming the counts); with out, prints
 * the estimate line (runs, simulated requests, CPU time) on it. A plain run has neither:
 * returns 0. */
int cli_estimate_study(const cli_runopts *o, const expt_scenario *s, size_t np, FILE *out);

#endif /* CLI_H */
