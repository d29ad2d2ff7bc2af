/*
 * cli_getopt.c: the one option parser of the retrysim command, getopt_long with the program's
 * messages, and the parsers of the values the commands share. getopt_long gives the GNU
 * conventions a user expects (--opt=value and --opt value, unambiguous abbreviations, -j2,
 * clustered short flags, "--" ends the options); this file turns its '?' and ':' into one
 * clear line that names the option, since getopt's own messages (opterr) are two-part, do not
 * end with the hint to --help, and name no candidates when opterr is off.
 * Invariant: every error printed here is one line and returns EXPT_EXIT_USAGE, or
 * EXPT_EXIT_RUNTIME for out of memory.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* {==================================================================
 * Messages
 * =================================================================== */

/* Every error is one line (docs/cli.md, "Standard streams"), so the hint to --help that users
 * of other command-line tools expect ends that line instead of making a second one: a script
 * that keeps the last line of stderr keeps the whole message. */
int cli_usage(const char *fmt, ...) {
  va_list ap;
  fputs("retrysim: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs(" (see retrysim --help)\n", stderr);
  return EXPT_EXIT_USAGE;
}

int cli_oom(void) {
  fputs("retrysim: out of memory\n", stderr);
  return EXPT_EXIT_RUNTIME;
}

/* }================================================================== */

/* {==================================================================
 * The parser
 * =================================================================== */

void cli_parser_init(cli_parser *p, int argc, char **argv, const char *shortopts,
                     const struct option *longopts, const char *prefix) {
  memset(p, 0, sizeof *p);
  p->argc = argc;
  p->argv = argv;
  p->longopts = longopts;
  p->prefix = prefix;
  /* '-': arguments come back in order (code 1), as the hand-written parsers took them, and
   * whatever POSIXLY_CORRECT says; so the first error stops the parse where it is, and plan
   * knows which arguments an option spans. ':': a missing value is ':', told from '?'. */
  snprintf(p->shortopts, sizeof p->shortopts, "-:%s", shortopts);
  /* The messages are ours (below). optind = 0 restarts getopt on a new vector; glibc and musl
   * both read it so, and each process parses one command line, so this is belt and braces. */
  opterr = 0;
  optind = 0;
}

/* The long option whose val is val, or NULL (a short option without a long name). */
static const struct option *by_val(const cli_parser *p, int val) {
  for (const struct option *o = p->longopts; o->name != NULL; o++)
    if (o->val == val) return o;
  return NULL;
}

/* "--name" of a long option written arg (up to its '='), or the candidates it abbreviates:
 * getopt_long says only '?' for both, and a user who typed "--s" wants to hear which. */
static int unknown_long(const cli_parser *p, const char *arg) {
  const char *name = arg + 2;
  int n = (int)strcspn(name, "=");
  const char *cand[64];
  size_t k = 0;
  for (const struct option *o = p->longopts; o->name != NULL && k < 64; o++)
    if (n > 0 && strncmp(o->name, name, (size_t)n) == 0) cand[k++] = o->name;
  if (k < 2) return cli_usage("%sunknown option '--%.*s'", p->prefix, n, name);
  char list[800];
  size_t used = 0;
  for (size_t i = 0; i < k && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s",
                             i == 0 ? "" : (i + 1 == k ? " or " : ", "), cand[i]);
  return cli_usage("%soption '--%.*s' is ambiguous: it could be %s", p->prefix, n, name, list);
}

/* Turns getopt_long's '?' and ':' into one line naming the option. arg is the argument being
 * read (arguments come in order, so it is argv[first] whether the option is long or one of a
 * cluster of short ones). */
static void report(const cli_parser *p, int c, const char *arg) {
  bool is_long = strncmp(arg, "--", 2) == 0;
  if (c == ':') {
    const struct option *o = by_val(p, optopt);
    if (is_long && o != NULL)
      cli_usage("%soption '--%s' needs a value", p->prefix, o->name);
    else
      cli_usage("%soption '-%c' needs a value", p->prefix, optopt);
  } else if (is_long && optopt != 0) { /* a value given to a flag ("--check=yes") */
    cli_usage("%soption '%s' takes no value", p->prefix, arg);
  } else if (is_long) {
    unknown_long(p, arg);
  } else {
    cli_usage("%sunknown option '-%c'", p->prefix, optopt);
  }
}

int cli_parser_next(cli_parser *p) {
  p->value = NULL;
  p->name[0] = '\0';
  if (p->rest) { /* after "--": every argument is one, "-x" too */
    if (optind >= p->argc) return CLI_END;
    p->first = p->last = optind;
    p->value = p->argv[optind++];
    return CLI_ARG;
  }
  /* optind 0 (a fresh start) reads argv[1] first. */
  int before = optind > 0 ? optind : 1;
  int index = -1;
  int c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, &index);
  p->first = before;
  p->last = optind > before ? optind - 1 : before;
  if (c == -1) {
    /* The end, or "--" with arguments after it (getopt leaves optind on the first). */
    if (optind >= p->argc) return CLI_END;
    p->rest = true;
    return cli_parser_next(p);
  }
  if (c == '?' || c == ':') {
    report(p, c, p->argv[before]);
    return CLI_ERROR;
  }
  p->value = optarg;
  if (c == 1) return CLI_ARG;
  if (index >= 0)
    snprintf(p->name, sizeof p->name, "--%s", p->longopts[index].name);
  else
    snprintf(p->name, sizeof p->name, "-%c", c);
  return c;
}

/* }================================================================== */

/* {==================================================================
 * Values
 * =================================================================== */

int cli_parse_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return -1; /* strtoull would accept " -1" as 2^64-1 */
  char *end;
  /* strtoull sets ERANGE on overflow but never clears errno, so it is cleared first. */
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return -1;
  *out = (uint64_t)v;
  return 0;
}

int cli_parse_size(const char *s, uint64_t *out) {
  if (strcmp(s, "none") == 0) {
    *out = UINT64_MAX;
    return 0;
  }
  if (*s < '0' || *s > '9') return -1;
  /* Decimal only: strtod would also read "0x10" as 16. */
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return -1;
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

bool cli_looks_like_option(const char *value) { return value[0] == '-' && value[1] != '\0'; }

int cli_add_set(expt_set *sets, size_t *n, const char *arg, const char *prefix) {
  /* The value is split at the first '=', so a value may hold '=' itself. */
  const char *eq = strchr(arg, '=');
  if (eq == NULL || eq == arg) return cli_usage("%s--set needs PATH=VALUE, got '%s'", prefix, arg);
  size_t len = (size_t)(eq - arg);
  char *path = malloc(len + 1);
  if (path == NULL) return cli_oom();
  memcpy(path, arg, len);
  path[len] = '\0';
  sets[*n].path = path;
  sets[(*n)++].value = eq + 1;
  return 0;
}

char *cli_quote_arg(const char *a) {
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
      memcpy(p, "'\\''", 4); /* close, escaped quote, reopen */
      p += 4;
    } else {
      *p++ = *a;
    }
  }
  *p++ = '\'';
  *p = '\0';
  return s;
}

char *cli_join_args(int argc, char **argv) {
  size_t n = sizeof "retrysim";
  for (int i = 0; i < argc; i++)
    n += 4 * strlen(argv[i]) + 3;
  char *s = malloc(n);
  if (s == NULL) return NULL;
  char *p = s + sprintf(s, "retrysim");
  for (int i = 0; i < argc; i++) {
    char *q = cli_quote_arg(argv[i]);
    if (q == NULL) {
      free(s);
      return NULL;
    }
    p += sprintf(p, " %s", q);
    free(q);
  }
  return s;
}

/* }================================================================== */
