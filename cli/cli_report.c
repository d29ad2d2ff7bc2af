/*
 * cli_report.c: the pictures and report.md of `retrysim run --plot`.
 *
 * The pictures are drawn by the gnuplot scripts of plots/, run as separate processes on the CSV
 * files already written: the scripts stay usable by hand on any run's files, and retrysim does
 * not link a plotting library. report.md is built from the run objects of the summary, so every
 * figure in it is the one summary.json holds.
 */
#include "cli/cli_report.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The environment, for posix_spawnp: gnuplot needs PATH, HOME, the locale. */
extern char **environ;

/* {==================================================================
 * Errors and small helpers
 * =================================================================== */

/* malloc'd printf; NULL when out of memory. */
static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (s == NULL) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* A member of the run object by a dotted path of at most three keys ("latency_ms.p99"). */
static const json_t *at(const json_t *o, const char *path) {
  char buf[96];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *key = buf, *dot; key != NULL && o != NULL; key = dot) {
    dot = strchr(key, '.');
    if (dot != NULL) *dot++ = '\0';
    o = json_object_get(o, key);
  }
  return o;
}

/* A number at path, NaN when absent or null. */
static double num(const json_t *o, const char *path) {
  const json_t *v = at(o, path);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* }================================================================== */

/* {==================================================================
 * Pictures
 * =================================================================== */

#ifndef RETRYSIM_PLOTS_DIR
#define RETRYSIM_PLOTS_DIR "plots"
#endif

const char *cli_report_plots_dir(void) {
  const char *env = getenv("RETRYSIM_PLOTS");
  if (env != NULL && env[0] != '\0') return env;
  /* The build's own tree when it still exists (a binary run from its checkout), else the
   * current directory's plots/, which is where a checkout's users stand. */
  if (access(RETRYSIM_PLOTS_DIR "/timeseries.gp", R_OK) == 0) return RETRYSIM_PLOTS_DIR;
  return "plots";
}

/* Runs `gnuplot -c script data out title` and waits for it. gnuplot's stdout is sent to
 * the log's descriptor like its stderr. Returns 0, or RETRY_EIO with err filled. */
static int gnuplot(const char *script, const char *data, const char *out, const char *title,
                   FILE *log, retry_error *err) {
  /* posix_spawnp takes char *const argv[] for historical reasons and does not write to it;
   * the literals are copied into arrays so that no const is cast away from a literal. */
  char prog[] = "gnuplot", dash_c[] = "-c";
  char *argv[] = {prog, dash_c, (char *)script, (char *)data, (char *)out, (char *)title, NULL};
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    cli_output_error(err, RETRY_ENOMEM, script, "out of memory");
    return RETRY_ENOMEM;
  }
  int logfd = fileno(log);
  fflush(log);
  if (logfd >= 0 && logfd != STDOUT_FILENO) posix_spawn_file_actions_adddup2(&fa, logfd, 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    cli_output_error(err, RETRY_EIO, script,
                     "cannot run gnuplot: %s (install gnuplot-nox, e.g. with `make deps`)",
                     strerror(rc));
    return RETRY_EIO;
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) {
      cli_output_error(err, RETRY_EIO, script, "cannot wait for gnuplot: %s", strerror(errno));
      return RETRY_EIO;
    }
  }
  /* Exit status 127 from a spawned child means the exec itself failed. */
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    cli_output_error(err, RETRY_EIO, script,
                     "cannot run gnuplot (install gnuplot-nox, `make deps`)");
    return RETRY_EIO;
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    cli_output_error(err, RETRY_EIO, script,
                     "gnuplot failed on %s (exit status %d): see its messages", data,
                     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return RETRY_EIO;
  }
  return 0;
}

/* Renders dir/stem.svg from dir/data_name with script NAME.gp of plots_dir: drawn as
 * stem.tmp.<pid>.svg (the script picks its terminal from the extension) and renamed. */
static int render(const char *plots_dir, const char *script, const char *dir, const char *data_name,
                  const char *stem, const char *title, FILE *log, retry_error *err) {
  char *gp = str_printf("%s/%s.gp", plots_dir, script);
  char *data = str_printf("%s/%s", dir, data_name);
  char *tmp = str_printf("%s/%s.tmp.%ld.svg", dir, stem, (long)getpid());
  char *out = str_printf("%s/%s.svg", dir, stem);
  int rc = 0;
  if (gp == NULL || data == NULL || tmp == NULL || out == NULL) {
    cli_output_error(err, RETRY_ENOMEM, dir, "out of memory");
    rc = RETRY_ENOMEM;
  } else if (access(gp, R_OK) != 0) {
    cli_output_error(err, RETRY_EIO, gp,
                     "cannot read the plot script: %s (set RETRYSIM_PLOTS to the plots/ directory)",
                     strerror(errno));
    rc = RETRY_EIO;
  } else {
    int slot = cli_output_tmp_register(tmp); /* removed on SIGINT / SIGTERM */
    rc = gnuplot(gp, data, tmp, title, log, err);
    if (rc == 0 && rename(tmp, out) != 0) {
      cli_output_error(err, RETRY_EIO, out, "cannot rename %s: %s", tmp, strerror(errno));
      rc = RETRY_EIO;
    }
    if (rc != 0) unlink(tmp);
    cli_output_tmp_forget(slot);
  }
  free(gp);
  free(data);
  free(tmp);
  free(out);
  return rc;
}

int cli_report_plots(const cli_output *o, const cli_scenario *s, const char *dir,
                     const char *plots_dir, FILE *log, retry_error *err) {
  const char *name = cli_scenario_name(s);
  char title[200];
  int rc = 0;
  if (!cli_scenario_has_variants(s)) {
    snprintf(title, sizeof title, "%s", name);
    rc = render(plots_dir, "timeseries", dir, "timeseries.csv", "timeseries", title, log, err);
  } else {
    /* One picture per variant, from the variant's own wide file, then the comparisons. */
    for (size_t i = 0; i < cli_output_n_runs(o) && rc == 0; i++) {
      char stem[128];
      snprintf(stem, sizeof stem, "timeseries-%s", cli_scenario_run_name(s, i));
      cli_output_safe_name(stem);
      char data[140];
      snprintf(data, sizeof data, "%s.csv", stem);
      snprintf(title, sizeof title, "%s: %s", name, cli_scenario_run_name(s, i));
      rc = render(plots_dir, "timeseries", dir, data, stem, title, log, err);
    }
    snprintf(title, sizeof title, "%s: goodput and attempts per variant", name);
    if (rc == 0)
      rc = render(plots_dir, "compare", dir, "timeseries.csv", "compare", title, log, err);
    snprintf(title, sizeof title, "%s: variants side by side", name);
    if (rc == 0)
      rc = render(plots_dir, "variants", dir, "variants.csv", "variants", title, log, err);
  }
  snprintf(title, sizeof title, "%s: latency of finished calls", name);
  if (rc == 0)
    rc = render(plots_dir, "latency-cdf", dir, "latency.csv", "latency-cdf", title, log, err);
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * report.md
 * =================================================================== */

/* "after 3 s", "never", or "-" for a run without a trigger that ended. */
static void recovery_text(const json_t *run, char *buf, size_t size) {
  const json_t *rc = at(run, "recovery");
  if (!json_is_object(rc))
    snprintf(buf, size, "-");
  else if (json_is_true(at(rc, "recovered")))
    snprintf(buf, size, "after %g s", num(rc, "recovery_s"));
  else
    snprintf(buf, size, "never");
}

/* Worker time whose result nobody used, over every service. */
static double wasted_s(const json_t *run) {
  double w = 0;
  const char *key;
  const json_t *svc;
  json_object_foreach((json_t *)at(run, "services"), key, svc) { w += num(svc, "wasted_work_s"); }
  return w;
}

/* The largest counts of an object of counts (stop reasons, statuses), most first, ties in the
 * document's order, skipping key skip and zeros: "deadline 1234, max_attempts 56". At most
 * four; "none" when there is nothing. */
static void top_counts(const json_t *counts, const char *skip, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  /* A selection sort over a few dozen keys. taken[] marks keys already printed by their
   * position in the object, so equal counts keep the document's (enum or numeric) order. */
  bool taken[64] = {false};
  for (int k = 0; k < 4; k++) {
    const char *best = NULL, *key;
    long long most = 0;
    size_t best_i = 0, i = 0;
    const json_t *v;
    json_object_foreach((json_t *)counts, key, v) {
      long long n = json_integer_value(v);
      /* Skipping "OK" skips the HTTP successes ("200" .. "299") too. */
      bool ok_http = strcmp(skip, "OK") == 0 && key[0] == '2' && strlen(key) == 3;
      if (i < 64 && !taken[i] && strcmp(key, skip) != 0 && !ok_http && n > most) {
        most = n;
        best = key;
        best_i = i;
      }
      i++;
    }
    if (best == NULL) break;
    taken[best_i] = true;
    int n = snprintf(buf + used, size - used, "%s%s %lld", used ? ", " : "", best, most);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
  if (used == 0) snprintf(buf, size, "none");
}

/* Index of the run with the largest (most) or smallest value at path; ties go to the first. */
static size_t extreme(const cli_output *o, const char *path, bool most) {
  size_t best = 0;
  for (size_t i = 1; i < cli_output_n_runs(o); i++) {
    double v = num(cli_output_run(o, i), path), b = num(cli_output_run(o, best), path);
    if (most ? v > b : v < b) best = i;
  }
  return best;
}

/* Attempts per call of run i (top-level). */
static double per_call(const cli_output *o, size_t i) {
  const json_t *run = cli_output_run(o, i);
  double calls = num(run, "calls.started");
  return calls > 0 ? num(run, "calls.attempts") / calls : 0.0;
}

/* "In short": the comparison in a few sentences, for a scenario with variants. Which runs came
 * back after the faults and which never did, then the extremes of goodput, load, tail and
 * duplicates, each with its variant. */
static void report_short(FILE *f, const cli_output *o, const cli_scenario *s) {
  size_t n = cli_output_n_runs(o);
  fputs("## In short\n\n", f);
  /* Two passes over the runs: those that recovered, then those that never did. */
  for (int pass = 0; pass < 2; pass++) {
    bool any = false;
    for (size_t i = 0; i < n; i++) {
      const json_t *rc = at(cli_output_run(o, i), "recovery");
      if (!json_is_object(rc) || json_is_true(at(rc, "recovered")) != (pass == 0)) continue;
      fprintf(f, "%s%s",
              any ? ", "
                  : (pass == 0 ? "- Back to normal after the faults: "
                               : "- **Never back to normal** within the run: "),
              cli_scenario_run_name(s, i));
      if (pass == 0) fprintf(f, " (after %g s)", num(rc, "recovery_s"));
      any = true;
    }
    if (any) fputs(".\n", f);
  }
  size_t hi = extreme(o, "goodput_per_s", true), lo = extreme(o, "goodput_per_s", false);
  fprintf(f, "- Most goodput: %s, %.4g calls/s; least: %s, %.4g calls/s.\n",
          cli_scenario_run_name(s, hi), num(cli_output_run(o, hi), "goodput_per_s"),
          cli_scenario_run_name(s, lo), num(cli_output_run(o, lo), "goodput_per_s"));
  size_t amp = 0;
  for (size_t i = 1; i < n; i++)
    if (per_call(o, i) > per_call(o, amp)) amp = i;
  fprintf(f, "- Most load from retries and hedges: %s, %.3g attempts per call.\n",
          cli_scenario_run_name(s, amp), per_call(o, amp));
  size_t tail = extreme(o, "latency_ms.p99", true), fast = extreme(o, "latency_ms.p99", false);
  fprintf(f, "- Slowest p99: %s, %.4g ms; fastest: %s, %.4g ms.\n", cli_scenario_run_name(s, tail),
          num(cli_output_run(o, tail), "latency_ms.p99"), cli_scenario_run_name(s, fast),
          num(cli_output_run(o, fast), "latency_ms.p99"));
  size_t dup = extreme(o, "side_effects.duplicates", true);
  if (num(cli_output_run(o, dup), "side_effects.duplicates") > 0)
    fprintf(f, "- Most duplicate side effects: %s, %.0f.\n", cli_scenario_run_name(s, dup),
            num(cli_output_run(o, dup), "side_effects.duplicates"));
  fputc('\n', f);
}

/* Writes the report body to f. The pictures are linked by their file names: report.md sits
 * next to them in dir. */
static void report_body(FILE *f, const cli_output *o, const cli_scenario *s, const char *command,
                        bool pictures) {
  const json_t *doc = cli_output_summary(o);
  bool variants = cli_scenario_has_variants(s);
  const char *desc = cli_scenario_description(s);
  fprintf(f, "# %s\n\n", cli_scenario_name(s));
  if (desc != NULL) fprintf(f, "%s\n\n", desc);
  /* The experiment's own page, when the run is one of experiments/ seen from the checkout. */
  char page[160];
  snprintf(page, sizeof page, "docs/experiments/%s.md", cli_scenario_name(s));
  if (access(page, R_OK) == 0) fprintf(f, "What happens and why, in words: `%s`.\n\n", page);
  if (command != NULL)
    fprintf(f, "Produced by `%s`", command);
  else
    fputs("Produced by retrysim", f);
  /* The seed is an integer, or a decimal string past INT64_MAX (cli_output's ju64). */
  const json_t *seed = at(doc, "seed");
  char seed_text[24];
  if (json_is_integer(seed))
    snprintf(seed_text, sizeof seed_text, "%lld", (long long)json_integer_value(seed));
  else
    snprintf(seed_text, sizeof seed_text, "%s", json_string_value(seed));
  fprintf(f,
          " (retrysim %s, seed %s, scenario SHA-256 `%.12s`). The same command gives the same "
          "files, byte for byte.\n\n",
          json_string_value(at(doc, "version")), seed_text,
          json_string_value(at(doc, "scenario_sha256")));
  if (variants) report_short(f, o, s);
  fputs("## Results\n\n", f);
  fputs(
      "| variant | calls | ok % | goodput (calls/s) | attempts per call | p50 ms | p99 ms | "
      "p99.9 ms | duplicate side effects | wasted work (worker-s) | recovered |\n",
      f);
  fputs("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n", f);
  size_t n = cli_output_n_runs(o);
  for (size_t i = 0; i < n; i++) {
    const json_t *run = cli_output_run(o, i);
    double calls = num(run, "calls.started"), ok = num(run, "calls.ok");
    char rec[64];
    recovery_text(run, rec, sizeof rec);
    fprintf(f, "| %s | %.0f | %.2f | %.4g | %.3f | %.4g | %.4g | %.4g | %.0f | %.4g | %s |\n",
            cli_scenario_run_name(s, i), calls, calls > 0 ? 100 * ok / calls : 0.0,
            num(run, "goodput_per_s"), calls > 0 ? num(run, "calls.attempts") / calls : 0.0,
            num(run, "latency_ms.p50"), num(run, "latency_ms.p99"), num(run, "latency_ms.p999"),
            num(run, "side_effects.duplicates"), wasted_s(run), rec);
  }
  fputs(
      "\n*goodput*: calls that ended OK within their deadline, per second of the run; "
      "*attempts per call*: attempts sent by the clients per call they started; *recovered*: "
      "how long after the last fault ended the share of offered calls that succeed came "
      "back near its level before the faults and held there (the summary's `recovery` "
      "rule), `never` if it did not within the run.\n\n",
      f);
  if (pictures && variants) {
    fputs(
        "## Over time\n\n![Goodput and attempts per second of every variant; the shaded "
        "band is the fault window](compare.svg)\n\n",
        f);
    fputs(
        "## Side by side\n\n![Attempts per call, goodput, p99 latency and success ratio "
        "per variant](variants.svg)\n\n",
        f);
  }
  if (pictures)
    fputs(
        "## Latency\n\n![Latency distribution of finished calls: the CDF, and its tail as "
        "1 - F on a log scale](latency-cdf.svg)\n\n",
        f);
  fputs(variants ? "## Each variant\n\n" : "## The run\n\n", f);
  for (size_t i = 0; i < n; i++) {
    const json_t *run = cli_output_run(o, i);
    const char *name = cli_scenario_run_name(s, i);
    const char *vdesc = cli_scenario_run_description(s, i);
    if (variants) fprintf(f, "### %s\n\n%s%s", name, vdesc ? vdesc : "", vdesc ? "\n\n" : "");
    double calls = num(run, "calls.started"), attempts = num(run, "calls.attempts");
    char stops[200], statuses[200];
    top_counts(at(run, "calls.by_stop_reason"), "ok", stops, sizeof stops);
    top_counts(at(run, "calls.by_status"), "OK", statuses, sizeof statuses);
    fprintf(f,
            "- %.0f calls sent %.0f attempts (%.3g per call: %.0f retries, %.0f hedges); "
            "%.0f ended OK, %.0f failed.\n",
            calls, attempts, calls > 0 ? attempts / calls : 0.0, num(run, "calls.retries"),
            num(run, "calls.hedges"), num(run, "calls.ok"), num(run, "calls.failed"));
    fprintf(f, "- Why the failed calls stopped: %s; the statuses they ended with: %s.\n", stops,
            statuses);
    const json_t *rc = at(run, "recovery");
    if (json_is_object(rc)) {
      fprintf(f, "- Faults from %g s to %g s. Before them %.1f %% of offered calls succeeded",
              num(rc, "trigger_start_s"), num(rc, "trigger_end_s"),
              100 * num(rc, "baseline_ratio"));
      if (json_is_true(at(rc, "recovered")))
        fprintf(f,
                "; %g s after they ended it was back to at least %g %% of that level, and "
                "held for %g s.\n",
                num(rc, "recovery_s"), 100 * num(rc, "threshold"), num(rc, "hold_s"));
      else
        fprintf(f, "; it never came back: over the last %g s, %.1f %% did.\n", num(rc, "hold_s"),
                100 * num(rc, "final_ratio"));
    }
    double wasted = wasted_s(run), dups = num(run, "side_effects.duplicates");
    if (wasted > 0)
      fprintf(f, "- Servers spent %.4g worker-seconds on attempts whose caller had given up.\n",
              wasted);
    if (dups > 0)
      fprintf(f, "- %.0f side effects were executed more than once (of %.0f operations).\n", dups,
              num(run, "side_effects.operations"));
    if (pictures) {
      char stem[128];
      snprintf(stem, sizeof stem, variants ? "timeseries-%s" : "timeseries", name);
      cli_output_safe_name(stem);
      fprintf(f, "\n![%s over time: load, queues, latency%s](%s.svg)\n", name,
              ", shared retry state", stem);
    }
    fputc('\n', f);
  }
}

int cli_report_write(const cli_output *o, const cli_scenario *s, const char *dir,
                     const char *command, bool pictures, retry_error *err) {
  char *path = str_printf("%s/report.md", dir);
  char *tmp = str_printf("%s/report.md.tmp.%ld", dir, (long)getpid());
  int rc = 0;
  if (path == NULL || tmp == NULL) {
    cli_output_error(err, RETRY_ENOMEM, dir, "out of memory");
    rc = RETRY_ENOMEM;
  }
  int slot = rc == 0 ? cli_output_tmp_register(tmp) : -1; /* removed on SIGINT / SIGTERM */
  FILE *f = rc == 0 ? fopen(tmp, "w") : NULL;
  if (rc == 0 && f == NULL) {
    cli_output_error(err, RETRY_EIO, tmp, "cannot create: %s", strerror(errno));
    rc = RETRY_EIO;
  }
  if (f != NULL) {
    report_body(f, o, s, command, pictures);
    int e = 0;
    if (fflush(f) != 0 || ferror(f)) e = errno ? errno : EIO;
    if (fclose(f) != 0 && e == 0) e = errno;
    if (e == 0 && rename(tmp, path) != 0) e = errno;
    if (e != 0) {
      cli_output_error(err, RETRY_EIO, path, "cannot write: %s", strerror(e));
      unlink(tmp);
      rc = RETRY_EIO;
    }
  }
  cli_output_tmp_forget(slot);
  free(path);
  free(tmp);
  return rc;
}

/* }================================================================== */
