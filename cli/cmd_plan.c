/*
 * cmd_plan.c: `retrysim plan SCENARIO.json [run options] --shards N --out DIR`. Loads and
 * checks the scenario as run would (every point of a sweep), then prints one `retrysim run`
 * command per shard and last the `retrysim merge` that joins them (docs/scaling-out.md).
 * Invariant: every printed command would start: the scenario was validated first; the plan's
 * own arguments are echoed as written, less --shards and --out (cli_runopts.keep).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "expt/expt_output.h"

/* Prints " ARG" quoted for a shell; returns 0 or -1 (out of memory). */
static int print_quoted(const char *a) {
  char *q = cli_quote_arg(a);
  if (q == NULL) return -1;
  printf(" %s", q);
  free(q);
  return 0;
}

/* Prints the plan's own arguments as its run commands take them. */
static int print_args(const cli_runopts *o, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (o->keep[i] == 0) continue;
    /* keep[i] > 0: the "-q" of "-qo DIR". */
    char *a = strndup(argv[i], o->keep[i] > 0 ? (size_t)o->keep[i] : strlen(argv[i]));
    int rc = a != NULL ? print_quoted(a) : -1;
    free(a);
    if (rc != 0) return -1;
  }
  return 0;
}

/* Prints " DIR/shard-K" for shard k, or " DIR" for k == 0. */
static int print_dir(const cli_runopts *o, unsigned k) {
  char dir[4200];
  if (k == 0)
    snprintf(dir, sizeof dir, "%s", o->opts.out_dir);
  else
    snprintf(dir, sizeof dir, "%s/shard-%u", o->opts.out_dir, k);
  return print_quoted(dir);
}

/* One run command per shard (the plan's own arguments, then --shard K/N --out DIR/shard-K),
 * then the merge. */
static int print_plan(const cli_runopts *o, int argc, char **argv) {
  for (unsigned k = 1; k <= o->shards; k++) {
    fputs("retrysim run", stdout);
    if (print_args(o, argc, argv) != 0) return cli_oom();
    printf(" --shard %u/%u --out", k, o->shards);
    if (print_dir(o, k) != 0) return cli_oom();
    putchar('\n');
  }
  fputs("retrysim merge", stdout);
  for (unsigned k = 1; k <= o->shards; k++)
    if (print_dir(o, k) != 0) return cli_oom();
  fputs(" --out", stdout);
  if (print_dir(o, 0) != 0) return cli_oom();
  putchar('\n');
  return fflush(stdout) == 0 ? EXPT_EXIT_OK : EXPT_EXIT_RUNTIME;
}

static int plan_action(cli_runopts *o, expt_scenario *s, int argc, char **argv) {
  size_t np = 1;
  int status = expt_sweep_check_study(s, &o->sweep, o->max_memory, true, &np, stderr);
  if (status == EXPT_EXIT_OK) status = cli_estimate_study(o, s, np, NULL);
  if (status != EXPT_EXIT_OK) return status;
  /* The estimate goes to stderr: stdout is the commands, which scripts run as they are. */
  if (!o->opts.quiet) cli_estimate_study(o, s, np, stderr);
  return print_plan(o, argc, argv);
}

int cmd_plan_main(int argc, char **argv) { return cli_runopts_command(argc, argv, plan_action); }
