/*
 * expt_run.c: the run driver: one kernel and one world per run, results copied into a
 * expt_output, then files, summary and expectations. Invariant: the results depend only on the
 * scenario and the seed; the wall clock read here drives the progress line and nothing else.
 */
#include "expt/expt_run.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "models/model_world.h"
#include "sim/sim_event.h"
#include "expt/expt_capacity.h"
#include "expt/expt_expect.h"
#include "expt/expt_output.h"
#include "expt/expt_plot.h"
#include "expt/expt_report.h"

/* {==================================================================
 * Progress line
 * =================================================================== */

/* The only clock sim/ reads. It is monotonic, so a clock step never hides or floods the line,
 * and its value never reaches the simulation: the world only calls us back. */
static double wall_s(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct progress {
  FILE *f;            /* stderr */
  bool enabled;       /* f is a terminal and not --quiet */
  double start_s;     /* wall time when the first run started */
  double last_s;      /* wall time of the last line drawn, < 0 before the first */
  int width;          /* characters on the line now, to blank it */
  const char *name;   /* the run going on */
  size_t run, n_runs; /* index of the run going on; runs in all */
} progress;

/* Redraws the line at most 4 times a second, once the runs have lasted more than a second. */
static void progress_update(void *ctx, int64_t now_ns, int64_t end_ns) {
  /* The world calls this at the end of every time-series bucket; it touches the terminal and
   * never the simulation. The first second stays silent, so short runs (tests, sweeps) never
   * draw a line. The percentage is of duration + drain, and a drain that ends early leaves
   * the line short of 100 %. */
  progress *p = ctx;
  double t = wall_s();
  if (t - p->start_s <= 1.0 || (p->last_s >= 0 && t - p->last_s < 0.25)) return;
  p->last_s = t;
  double pct = end_ns > 0 ? 100.0 * (double)now_ns / (double)end_ns : 0.0;
  int n = fprintf(p->f, "\rretrysim: %s (run %zu of %zu): %.1f s of %.1f s simulated (%.0f %%)",
                  p->name, p->run + 1, p->n_runs, (double)now_ns / 1e9, (double)end_ns / 1e9, pct);
  /* Blank what is left of a longer previous line. */
  if (n > 0 && n < p->width) fprintf(p->f, "%*s", p->width - n, "");
  if (n > p->width) p->width = n;
  fflush(p->f);
}

/* Removes the line, if one was drawn. */
/* Called after every run, so errors and the summary start on a clean line. */
static void progress_clear(progress *p) {
  if (p->width <= 0) return;
  fprintf(p->f, "\r%*s\r", p->width, "");
  fflush(p->f);
  p->width = 0;
}

/* }================================================================== */

/* {==================================================================
 * Runs
 * =================================================================== */

/* Only out of memory is a run-time failure; a missing or unreadable file (RETRY_EIO) is bad
 * input like a wrong value. */
int expt_run_exit_status(int code) {
  return code == RETRY_ENOMEM ? EXPT_EXIT_RUNTIME : EXPT_EXIT_USAGE;
}

/* Status for an error while running: a config the world refuses is bad input the loader missed;
 * anything else (out of memory, mostly) is a run-time failure. */
static int run_status(int code) {
  if (code == RETRY_ECONFIG || code == RETRY_EINVAL || code == RETRY_ERANGE) return EXPT_EXIT_USAGE;
  return EXPT_EXIT_RUNTIME;
}

/* Runs run i of s and adds its results to out. Returns 0 or a negative RETRY code, err filled.
 * Each run gets a fresh kernel and world: nothing carries over between variants but the seed,
 * so variant i's results do not depend on which variants ran before it (common random numbers
 * come from the seed, not from shared state). */
static int run_one(const expt_scenario *s, size_t i, const expt_run_opts *o, expt_output *out,
                   progress *prog, retry_error *err) {
  const model_config *cfg = expt_scenario_config(s, i);
  uint64_t seed = o->has_seed ? o->seed : cfg->seed;
  const char *name = expt_scenario_run_name(s, i);
  /* 0: the kernel's default capacity, grown as needed. */
  sim_kernel *k = sim_kernel_create(0, NULL);
  if (k == NULL) {
    /* The kernel reports no error of its own, so the message is filled here. */
    retry_error_clear(err);
    err->code = RETRY_ENOMEM;
    snprintf(err->message, sizeof err->message, "out of memory creating the kernel");
    return RETRY_ENOMEM;
  }
  /* cfg is borrowed by the world and owned by the scenario, which outlives every run. A world
   * that fails without filling err is taken to have run out of memory. */
  model_world *w = model_world_create(cfg, k, seed, err);
  int rc = w != NULL ? 0 : (err->code != RETRY_OK ? err->code : RETRY_ENOMEM);
  prog->name = name;
  prog->run = i;
  /* With the line off (no terminal, or --quiet) the callback is NULL: no calls at all. */
  if (rc == 0) rc = model_world_run(w, prog->enabled ? progress_update : NULL, prog, err);
  progress_clear(prog);
  if (rc == 0) {
    /* add_run copies the results, which is what lets the world go right after. */
    const model_results *res = model_world_results(w);
    expt_recovery rec;
    rc = expt_recovery_of_run(expt_scenario_recovery(s, i), cfg, res, &rec);
    if (rc == 0) rc = expt_output_add_run(out, name, seed, res, &rec);
    /* The capacity table (issue 23 item 6) rides with the run's results in summary.json. */
    if (rc == 0)
      rc = expt_output_run_put(out, expt_output_n_runs(out) - 1, "capacity",
                               expt_capacity_json(cfg));
    if (rc != 0 && err->code == RETRY_OK) {
      err->code = rc;
      snprintf(err->message, sizeof err->message, "out of memory keeping the results");
    }
  }
  /* The world cancels its events on the way out, so it goes before the kernel. */
  model_world_destroy(w);
  sim_kernel_destroy(k);
  /* An error without a source (out of memory keeping the results) is named after the run. */
  if (rc != 0 && err->source[0] == '\0') snprintf(err->source, sizeof err->source, "%s", name);
  return rc;
}

/* Checks every run's expectations; reports on o->err, and with --junit into that file.
 * Returns the number that failed; *junit_failed is set when the JUnit file could not be
 * written (the error is printed). */
static int check_all(const expt_scenario *s, const expt_output *out, const expt_run_opts *o,
                     bool *junit_failed) {
  /* In text mode only failures and the count are reported; with --format json every
   * expectation gets its PASS or FAIL line, for logs next to the machine-read document. */
  bool verbose = o->format == EXPT_FORMAT_JSON && !o->quiet;
  size_t total = 0;
  int failed = 0;
  expt_junit *junit = o->junit != NULL ? expt_junit_create(expt_scenario_name(s)) : NULL;
  *junit_failed = false;
  if (o->junit != NULL && junit == NULL) {
    fprintf(o->err, "retrysim: %s: out of memory\n", o->junit);
    *junit_failed = true;
  }
  size_t skipped = 0; /* expectations of a search ("search..."): no search ran */
  for (size_t i = 0; i < expt_scenario_n_runs(s); i++) {
    size_t other = 0;
    json_t *expect = expt_expect_part(expt_scenario_expect(s, i), false, &other);
    skipped += other;
    total += json_object_size(expect);
    failed += expt_expect_check_to(expect, expt_output_run(out, i), expt_scenario_run_name(s, i),
                                  o->err, verbose, junit != NULL ? expt_junit_add : NULL, junit);
    json_decref(expect);
  }
  if (expt_junit_finish(junit, o->junit, true, o->err) != 0) *junit_failed = true;
  /* json_object_size(NULL) is 0, so runs without expectations count nothing. The count line
   * is printed even with --quiet once something failed: a failure is never silent. */
  char note[96] = "";
  if (skipped > 0)
    snprintf(note, sizeof note, " (%zu expectation%s of a search not checked)", skipped,
             skipped == 1 ? "" : "s");
  if (total == 0 && !o->quiet)
    fprintf(o->err, "retrysim: check: the scenario has no expectations%s\n", note);
  else if (!o->quiet || failed > 0)
    fprintf(o->err, "retrysim: check: %zu passed, %d failed%s\n", total - (size_t)failed, failed,
            note);
  return failed;
}

/* After every run: files, summary, expectations. Returns the exit status. Files come first so
 * that a full disk is reported before the summary scrolls it away; a failure to write them does
 * not stop the summary or the checks (the results are valid), but the status says 3. */
static int finish(const expt_scenario *s, const expt_output *out, const expt_run_opts *o) {
  int status = EXPT_EXIT_OK;
  if (o->out_dir != NULL) {
    retry_error e;
    retry_error_clear(&e);
    if (expt_output_write_dir(out, o->out_dir, &e) != 0) {
      expt_error_print(o->err, &e);
      status = EXPT_EXIT_RUNTIME;
    }
    /* The pictures read the files just written; the report links them, so it comes last and
     * is written even when a picture failed (it then says nothing of pictures). */
    if (status == EXPT_EXIT_OK && o->plot) {
      int prc = expt_report_plots(out, s, o->out_dir, expt_plot_dir(), o->err, &e);
      if (prc != 0) expt_error_print(o->err, &e);
      retry_error_clear(&e);
      if (expt_report_write(out, s, o->out_dir, o->command, prc == 0, &e) != 0 || prc != 0) {
        if (e.code != RETRY_OK) expt_error_print(o->err, &e);
        status = EXPT_EXIT_RUNTIME;
      }
    }
  }
  int rc = 0;
  if (o->format == EXPT_FORMAT_JSON)
    rc = expt_output_write_json(out, o->out);
  else if (!o->quiet)
    rc = expt_output_print_text(out, o->out);
  /* One run's block lists its edges already; --edges adds the table for variants. */
  if (rc == 0 && o->edges && o->format == EXPT_FORMAT_TEXT && !o->quiet &&
      expt_scenario_has_variants(s))
    rc = expt_output_print_edges(out, o->out);
  if (rc == 0 && fflush(o->out) != 0) rc = -1;
  if (rc != 0) {
    fprintf(o->err, "retrysim: cannot write the summary to standard output\n");
    status = EXPT_EXIT_RUNTIME;
  }
  /* 1 only when nothing worse happened: a write failure (3) outranks a failed check. */
  bool junit_failed = false;
  if (o->check && check_all(s, out, o, &junit_failed) > 0 && status == EXPT_EXIT_OK)
    status = EXPT_EXIT_CHECK;
  /* An unwritten --junit file is a write failure, which outranks a failed check. */
  if (junit_failed) status = EXPT_EXIT_RUNTIME;
  return status;
}

/* The loader checked these shapes with its own code; running expt_expect's parser too makes
 * sure the checker reads every expectation the loader let through, as the two are separate
 * code. The path is "$.expect" whatever the run: expt_expect's message names the bad key. */
int expt_run_validate(const expt_scenario *s, const char *source, retry_error *err) {
  for (size_t i = 0; i < expt_scenario_n_runs(s); i++) {
    const json_t *expect = expt_scenario_expect(s, i);
    retry_error e;
    retry_error_clear(&e);
    if (expect == NULL || expt_expect_validate(expect, &e) == 0) continue;
    const char *msg = e.message;
    if (err != NULL && err->code == RETRY_OK) {
      retry_error_clear(err);
      err->code = RETRY_ECONFIG;
      snprintf(err->source, sizeof err->source, "%s", source ? source : "<string>");
      snprintf(err->path, sizeof err->path, "$.expect");
      if (expt_scenario_has_variants(s))
        /* Both parts are cut so the whole fits the 160-byte message. */
        snprintf(err->message, sizeof err->message, "%.100s (variant %.40s)", msg,
                 expt_scenario_run_name(s, i));
      else
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return RETRY_ECONFIG;
  }
  /* A baseline must be one of the runs: without variants there is nothing to compare, and a
   * --variant that leaves it out would make every paired difference silently vanish. */
  const char *baseline = expt_scenario_baseline(s);
  if (baseline == NULL) return 0;
  for (size_t i = 0; i < expt_scenario_n_runs(s) && expt_scenario_has_variants(s); i++)
    if (strcmp(expt_scenario_run_name(s, i), baseline) == 0) return 0;
  if (err != NULL && err->code == RETRY_OK) {
    retry_error_clear(err);
    err->code = RETRY_ECONFIG;
    snprintf(err->source, sizeof err->source, "%s", source ? source : "<string>");
    snprintf(err->path, sizeof err->path, "$.baseline");
    snprintf(err->message, sizeof err->message,
             expt_scenario_has_variants(s)
                 ? "\"%.60s\" is not a variant being run (a baseline names a variant; with "
                   "--variant, choose it too)"
                 : "\"%.60s\": a baseline needs variants to compare",
             baseline);
  }
  return RETRY_ECONFIG;
}

/* The top-level seed of summary.json is --seed, else the first run's: variants normally share
 * the scenario's seed (their comparison is paired), and one that sets its own is marked in its
 * run object by expt_output. */
int expt_run_scenario(const expt_scenario *s, const expt_run_opts *o) {
  size_t n = expt_scenario_n_runs(s);
  retry_error err;
  retry_error_clear(&err);
  if (expt_run_validate(s, NULL, &err) != 0) {
    /* The file name is not known here; the scenario's name stands in for it. */
    snprintf(err.source, sizeof err.source, "%s", expt_scenario_name(s));
    expt_error_print(o->err, &err);
    return EXPT_EXIT_USAGE;
  }
  /* An --out naming an existing file would only fail after every run: refuse it now. */
  struct stat st;
  if (o->out_dir != NULL && stat(o->out_dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
    fprintf(o->err, "retrysim: %s: --out must name a directory, this is a file\n", o->out_dir);
    return EXPT_EXIT_USAGE;
  }
  uint64_t top_seed = o->has_seed ? o->seed : expt_scenario_config(s, 0)->seed;
  expt_output *out = expt_output_create(expt_scenario_name(s), expt_scenario_sha256(s), top_seed,
                                      expt_scenario_has_variants(s));
  if (out == NULL ||
      expt_output_set_provenance(out, expt_scenario_inputs(s), expt_scenario_overrides(s),
                                expt_scenario_base_document(s)) != 0) {
    expt_output_destroy(out);
    fprintf(o->err, "retrysim: out of memory\n");
    return EXPT_EXIT_RUNTIME;
  }
  progress prog = {.f = o->err, .start_s = wall_s(), .last_s = -1, .n_runs = n};
  prog.enabled = !o->quiet && isatty(fileno(o->err));
  int status = EXPT_EXIT_OK;
  /* The first failed run stops the rest: files need every run, so later results would be
   * written nowhere. */
  for (size_t i = 0; i < n && status == EXPT_EXIT_OK; i++) {
    int rc = run_one(s, i, o, out, &prog, &err);
    if (rc != 0) {
      expt_error_print(o->err, &err);
      status = run_status(rc);
    }
  }
  if (status == EXPT_EXIT_OK) status = finish(s, out, o);
  expt_output_destroy(out);
  return status;
}

/* }================================================================== */
