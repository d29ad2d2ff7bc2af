/*
 * expt_plot.c: the pictures' plotter: runs a gnuplot script of plots/ as a separate process on
 * CSV files already written. The scripts stay usable by hand on any run's files, and retrysim
 * does not link a plotting library. Invariant: a picture is drawn under a temporary name and
 * renamed into place whole, or not at all.
 */
#include "expt/expt_plot.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expt/expt_output.h"

/* The environment, for posix_spawnp: gnuplot needs PATH, HOME, the locale. */
extern char **environ;

#ifndef RETRYSIM_PLOTS_DIR
#define RETRYSIM_PLOTS_DIR "plots"
#endif

const char *expt_plot_dir(void) {
  const char *env = getenv("RETRYSIM_PLOTS");
  if (env != NULL && env[0] != '\0') return env;
  /* The build's own tree when it still exists (a binary run from its checkout), else the
   * current directory's plots/, which is where a checkout's users stand. */
  if (access(RETRYSIM_PLOTS_DIR "/timeseries.gp", R_OK) == 0) return RETRYSIM_PLOTS_DIR;
  return "plots";
}

/* Runs `gnuplot [-e SET] -c script data out title` and waits for it (set: NULL or a gnuplot
 * command run first, e.g. "edge='a->b'"). gnuplot's stdout is sent to the log's descriptor like
 * its stderr. Returns 0, or RETRY_EIO with err filled. */
static int gnuplot(const char *set, const char *script, const char *data, const char *out,
                   const char *title, FILE *log, retry_error *err) {
  /* posix_spawnp takes char *const argv[] for historical reasons and does not write to it;
   * the literals are copied into arrays so that no const is cast away from a literal. */
  char prog[] = "gnuplot", dash_c[] = "-c", dash_e[] = "-e";
  char *argv[9] = {prog};
  size_t n = 1;
  if (set != NULL) {
    argv[n++] = dash_e;
    argv[n++] = (char *)set;
  }
  argv[n++] = dash_c;
  argv[n++] = (char *)script;
  argv[n++] = (char *)data;
  argv[n++] = (char *)out;
  argv[n++] = (char *)title;
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    expt_output_error(err, RETRY_ENOMEM, script, "out of memory");
    return RETRY_ENOMEM;
  }
  int logfd = fileno(log);
  fflush(log);
  if (logfd >= 0 && logfd != STDOUT_FILENO) posix_spawn_file_actions_adddup2(&fa, logfd, 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    expt_output_error(err, RETRY_EIO, script,
                      "cannot run gnuplot: %s (install gnuplot-nox, e.g. with `make deps`)",
                      strerror(rc));
    return RETRY_EIO;
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) {
      expt_output_error(err, RETRY_EIO, script, "cannot wait for gnuplot: %s", strerror(errno));
      return RETRY_EIO;
    }
  }
  /* Exit status 127 from a spawned child means the exec itself failed. */
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    expt_output_error(err, RETRY_EIO, script,
                      "cannot run gnuplot (install gnuplot-nox, `make deps`)");
    return RETRY_EIO;
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    expt_output_error(err, RETRY_EIO, script,
                      "gnuplot failed on %s (exit status %d): see its messages", data,
                      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return RETRY_EIO;
  }
  return 0;
}

int expt_plot_render(const char *plots_dir, const char *script, const char *set, const char *dir,
                     const char *data_name, const char *stem, const char *title, FILE *log,
                     retry_error *err) {
  char *gp = expt_output_printf("%s/%s.gp", plots_dir, script);
  char *data = expt_output_printf("%s/%s", dir, data_name);
  char *tmp = expt_output_printf("%s/%s.tmp.%ld.svg", dir, stem, (long)getpid());
  char *out = expt_output_printf("%s/%s.svg", dir, stem);
  int rc = 0;
  if (gp == NULL || data == NULL || tmp == NULL || out == NULL) {
    expt_output_error(err, RETRY_ENOMEM, dir, "out of memory");
    rc = RETRY_ENOMEM;
  } else if (access(gp, R_OK) != 0) {
    expt_output_error(
        err, RETRY_EIO, gp,
        "cannot read the plot script: %s (set RETRYSIM_PLOTS to the plots/ directory)",
        strerror(errno));
    rc = RETRY_EIO;
  } else {
    int slot = expt_output_tmp_register(tmp); /* removed on SIGINT / SIGTERM */
    rc = gnuplot(set, gp, data, tmp, title, log, err);
    if (rc == 0 && rename(tmp, out) != 0) {
      expt_output_error(err, RETRY_EIO, out, "cannot rename %s: %s", tmp, strerror(errno));
      rc = RETRY_EIO;
    }
    if (rc != 0) unlink(tmp);
    expt_output_tmp_forget(slot);
  }
  free(gp);
  free(data);
  free(tmp);
  free(out);
  return rc;
}
