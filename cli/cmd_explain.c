/*
 * cmd_explain.c: `retrysim explain SCENARIO.json (--call ID | --stopped REASON | --after T)
 * [--edge FROM->TO] [--variant NAME] [--seed N] [--set PATH=VALUE]... [--duration D]
 * [--format text|json]`. Reads the line into an expt_explain_opts; expt/expt_explain.c runs
 * the world with the trace sink and prints the explanation.
 * Invariant: every usage error is one line starting "retrysim: explain: ", exit status 2.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "expt/expt_explain.h"

enum { O_CALL = CLI_LONG, O_STOPPED, O_AFTER, O_EDGE, O_VARIANT, O_FORMAT, O_DURATION, O_SET };

static const struct option options[] = {
    {"call", required_argument, NULL, O_CALL},
    {"stopped", required_argument, NULL, O_STOPPED},
    {"after", required_argument, NULL, O_AFTER},
    {"edge", required_argument, NULL, O_EDGE},
    {"variant", required_argument, NULL, O_VARIANT},
    {"seed", required_argument, NULL, 's'},
    {"set", required_argument, NULL, O_SET},
    {"duration", required_argument, NULL, O_DURATION},
    {"format", required_argument, NULL, O_FORMAT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The line as read: the library's options and what this file owns for them. */
typedef struct ex_line {
  expt_explain_opts o;
  expt_set *sets;       /* --set, then --duration; paths owned; room for argc + 1 */
  const char *duration; /* --duration, or NULL */
  char *edge_from;      /* --edge's two names (owned), NULL without --edge */
  char *edge_to;
  bool has_call, has_stopped; /* which selectors were given (has_after is in o) */
} ex_line;

/* {==================================================================
 * Values
 * =================================================================== */

/* A copy of s[0..n) without the blanks at either end; NULL when out of memory. */
static char *dup_trimmed(const char *s, size_t n) {
  while (n > 0 && *s == ' ')
    s++, n--;
  while (n > 0 && s[n - 1] == ' ')
    n--;
  return strndup(s, n);
}

/* --call names one call and takes no other selector; --stopped and --after may go together
 * ("the first call started at or after T that stopped with R"); none may be given twice. */
static int set_selector(ex_line *l, int c, const char *name) {
  bool any = l->has_call || l->has_stopped || l->o.has_after;
  bool ok = c == O_CALL      ? !any
            : c == O_STOPPED ? !l->has_call && !l->has_stopped
                             : !l->has_call && !l->o.has_after;
  if (!ok)
    return cli_usage(
        "explain: give --call alone, or --stopped and --after at most once each, not '%s' as "
        "well",
        name);
  l->has_call |= c == O_CALL;
  l->has_stopped |= c == O_STOPPED;
  l->o.has_after |= c == O_AFTER;
  return 0;
}

/* --stopped NAME: the names come from the engine, so a reason added there is listed here. */
static int set_stopped(ex_line *l, const char *v) {
  for (int r = RETRY_STOP_NONE + 1; r < RETRY_STOP_N; r++)
    if (strcmp(v, retry_stop_name((retry_stop)r)) == 0) l->o.stopped = (retry_stop)r;
  if (l->o.stopped != RETRY_STOP_NONE) return 0;
  char names[512] = "";
  size_t used = 0;
  for (int r = RETRY_STOP_NONE + 1; r < RETRY_STOP_N && used < sizeof names; r++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                             r > RETRY_STOP_NONE + 1 ? ", " : "", retry_stop_name((retry_stop)r));
  return cli_usage("explain: --stopped needs a stop reason (%s), got '%s'", names, v);
}

/* --edge FROM->TO, at most once. */
static int set_edge(ex_line *l, const char *v) {
  const char *arrow = strstr(v, "->");
  if (arrow == NULL || l->o.edge != NULL)
    return cli_usage("explain: --edge needs one FROM->TO (\"web->api\"), got '%s'", v);
  l->o.edge = v;
  l->o.edge_from = l->edge_from = dup_trimmed(v, (size_t)(arrow - v));
  l->o.edge_to = l->edge_to = dup_trimmed(arrow + 2, strlen(arrow + 2));
  if (l->edge_from == NULL || l->edge_to == NULL) return cli_oom();
  if (l->edge_from[0] == '\0' || l->edge_to[0] == '\0')
    return cli_usage("explain: --edge needs one FROM->TO (\"web->api\"), got '%s'", v);
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * The line
 * =================================================================== */

/* Applies one option with its value; returns 0 or an exit status. */
static int apply(ex_line *l, int c, const char *v, const char *name) {
  expt_explain_opts *o = &l->o;
  int rc = c == O_CALL || c == O_STOPPED || c == O_AFTER ? set_selector(l, c, name) : 0;
  if (rc != 0) return rc;
  switch (c) {
    case O_CALL:
      if (cli_parse_u64(v, &o->call_id) != 0 || o->call_id == 0)
        return cli_usage("explain: --call needs a call id 1 .. 18446744073709551615, got '%s'", v);
      return 0;
    case O_STOPPED: return set_stopped(l, v);
    case O_AFTER:
      if (expt_duration_parse(v, &o->after_ns) != 0 || o->after_ns < 0)
        return cli_usage(
            "explain: --after needs a time with a unit (\"30s\", \"1500ms\"), got '%s'", v);
      o->after = v;
      return 0;
    case O_EDGE: return set_edge(l, v);
    case O_VARIANT:
      if (o->variant != NULL)
        return cli_usage("explain: explain takes one --variant, not '%s' as well", v);
      o->variant = v;
      return 0;
    case 's':
      o->has_seed = true;
      if (cli_parse_u64(v, &o->seed) != 0)
        return cli_usage("explain: --seed needs an integer 0 .. 18446744073709551615, got '%s'", v);
      return 0;
    case O_FORMAT:
      if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0)
        return cli_usage("explain: --format is text or json, got '%s'", v);
      o->json = strcmp(v, "json") == 0;
      return 0;
    case O_DURATION: l->duration = v; return 0;
    case O_SET: return cli_add_set(l->sets, &o->n_sets, v, "explain: ");
    default: return 0;
  }
}

/* Reads the whole line; returns 0, CLI_HELP or an exit status. */
static int parse(ex_line *l, int argc, char **argv) {
  cli_parser p;
  cli_parser_init(&p, argc, argv, "s:h", options, "explain: ");
  for (int c; (c = cli_parser_next(&p)) != CLI_END;) {
    if (c == CLI_ERROR) return EXPT_EXIT_USAGE;
    if (c == 'h') return CLI_HELP;
    int rc = 0;
    if (c != CLI_ARG)
      rc = apply(l, c, p.value, p.name);
    else if (l->o.scenario != NULL)
      rc = cli_usage("explain: unexpected argument '%s'", p.value);
    else
      l->o.scenario = p.value;
    if (rc != 0) return rc;
  }
  if (l->o.scenario == NULL) return cli_usage("%s", "explain: which scenario file?");
  if (!l->has_call && !l->has_stopped && !l->o.has_after)
    return cli_usage("%s", "explain: which call? give --call ID, --stopped REASON or --after TIME");
  if (l->has_call && l->o.edge != NULL)
    return cli_usage("%s",
                     "explain: --edge picks among calls by --stopped or --after; --call names one");
  /* --duration goes last, so it wins over a --set of the same key. */
  if (l->duration != NULL) {
    char *path = strdup("duration");
    if (path == NULL) return cli_oom();
    l->sets[l->o.n_sets].path = path;
    l->sets[l->o.n_sets++].value = l->duration;
  }
  return 0;
}

int cmd_explain_main(int argc, char **argv) {
  ex_line l;
  memset(&l, 0, sizeof l);
  l.o.stopped = RETRY_STOP_NONE;
  l.sets = calloc((size_t)argc + 1, sizeof *l.sets);
  l.o.sets = l.sets;
  int status = l.sets == NULL ? cli_oom() : parse(&l, argc, argv);
  if (status == CLI_HELP)
    status = cli_help();
  else if (status == 0)
    status = expt_explain_run(&l.o, stdout, stderr);
  for (size_t i = 0; l.sets != NULL && i < l.o.n_sets; i++)
    free((char *)l.sets[i].path);
  free(l.sets);
  free(l.edge_from);
  free(l.edge_to);
  return status;
}

/* }================================================================== */
