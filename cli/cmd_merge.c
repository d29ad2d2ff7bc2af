/*
 * cmd_merge.c: `retrysim merge DIR... --out DIR [--quiet] [--check [--junit FILE]] [--plot]`.
 * Reads the shards' DIR/shard.json and writes the files one local run of the study writes
 * (expt_shard.c does the work).
 * Invariant: the line is checked whole before any shard is read.
 */
#include <stdlib.h>

#include "cli/cli.h"
#include "expt/expt_output.h"
#include "expt/expt_shard.h"

enum { O_CHECK = CLI_LONG, O_JUNIT, O_PLOT };

static const struct option options[] = {
    {"out", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"check", no_argument, NULL, O_CHECK},
    {"junit", required_argument, NULL, O_JUNIT},
    {"plot", no_argument, NULL, O_PLOT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Reads the options into o and the shard directories into dirs (room for argc). Returns 0,
 * CLI_HELP or a usage error's status. */
static int parse(int argc, char **argv, expt_run_opts *o, const char **dirs, size_t *n) {
  cli_parser p;
  cli_parser_init(&p, argc, argv, "o:qh", options, "");
  for (int c; (c = cli_parser_next(&p)) != CLI_END;) {
    switch (c) {
      case CLI_ERROR: return EXPT_EXIT_USAGE;
      case 'h': return CLI_HELP;
      case CLI_ARG: dirs[(*n)++] = p.value; break;
      case 'o': o->out_dir = p.value; break;
      case O_JUNIT: o->junit = p.value; break;
      case 'q': o->quiet = true; break;
      case O_CHECK: o->check = true; break;
      case O_PLOT: o->plot = true; break;
      default: break;
    }
  }
  if (o->out_dir == NULL || o->out_dir[0] == '\0' || cli_looks_like_option(o->out_dir))
    return cli_usage("%s", "merge needs --out DIR");
  if (o->junit != NULL && (o->junit[0] == '\0' || cli_looks_like_option(o->junit)))
    return cli_usage("%s", "--junit needs a file name");
  if (o->junit != NULL && !o->check)
    return cli_usage("%s", "--junit needs --check: it records the checks' results");
  if (*n == 0) return cli_usage("%s", "merge needs the shard directories (DIR/shard.json)");
  return 0;
}

int cmd_merge_main(int argc, char **argv) {
  const char **dirs = calloc((size_t)argc, sizeof *dirs);
  if (dirs == NULL) return cli_oom();
  size_t n = 0;
  expt_run_opts o = {.format = EXPT_FORMAT_TEXT, .out = stdout, .err = stderr};
  int status = parse(argc, argv, &o, dirs, &n);
  char *command = NULL;
  if (status == CLI_HELP) {
    status = cli_help();
  } else if (status == EXPT_EXIT_OK) {
    /* The command line goes into report.md, as run's does. */
    command = cli_join_args(argc, argv);
    o.command = command;
    expt_output_signals_install();
    status = expt_shard_merge(dirs, n, &o);
  }
  free(command);
  free(dirs);
  return status;
}
