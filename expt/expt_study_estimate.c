/*
 * expt_study_estimate.c: the memory a study will hold, from its scenario and its counts
 * alone (expt_study_estimate.h). Invariant: computed before any run starts, with saturating
 * arithmetic, so no count however large overflows into a small estimate.
 */
#include "expt/expt_study_estimate.h"

#include <stdio.h>

#include "expt/expt_error.h"
#include "expt/expt_study_runs.h"
#include "expt/expt_study_series.h"

#include "models/model_config.h"
#include "models/model_estimate.h"

/* a * b, saturating at UINT64_MAX. */
static uint64_t mul_sat(uint64_t a, uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

/* The figures were measured on quickstart (one client, one service, one edge: about 26 KiB a
 * record under -j 2, from the peak resident size of 1200 and 200 replications); a result's
 * size grows with the services, edges and clients it reports on, each with its counts,
 * statuses and latency quantiles. */
uint64_t expt_study_estimate_record_bytes(const expt_scenario *s, size_t v) {
  const model_config *cfg = expt_scenario_config(s, v);
  uint64_t edges = cfg->n_clients;
  for (size_t i = 0; i < cfg->n_services; i++)
    edges += cfg->services[i].n_calls;
  return 8192 + 6144 * (uint64_t)cfg->n_services + 6144 * edges + 4096 * (uint64_t)cfg->n_clients;
}

static void format_bytes(char *buf, size_t size, uint64_t b) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double x = (double)b;
  size_t u = 0;
  while (x >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
    x /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, size, "%llu bytes", (unsigned long long)b);
  else
    snprintf(buf, size, "%.1f %s", x, units[u]);
}

/* The check, with extra bytes held beside the records and worlds (the study's series). */
static int check_bytes(const expt_scenario *s, uint64_t n_records, unsigned jobs, uint64_t extra,
                       uint64_t max_bytes, const char *what, FILE *errf) {
  size_t nv = expt_scenario_n_runs(s);
  uint64_t record = 0, world = 0;
  for (size_t v = 0; v < nv; v++) {
    uint64_t r = expt_study_estimate_record_bytes(s, v),
             w = model_world_estimate_bytes(expt_scenario_config(s, v));
    record = add_sat(record, r);
    if (w > world) world = w;
  }
  record = nv > 0 ? record / nv : record;
  uint64_t at_once = n_records < jobs ? n_records : jobs;
  uint64_t need = add_sat(add_sat(mul_sat(n_records, record), mul_sat(at_once, world)), extra);
  if (need <= max_bytes) return 0;
  char got[32], limit[32], per[32];
  format_bytes(got, sizeof got, need);
  format_bytes(limit, sizeof limit, max_bytes);
  format_bytes(per, sizeof per, record);
  /* Printed here rather than in a retry_error, whose message has no room for the counts. */
  fprintf(errf,
          "retrysim: %s: %s holds %llu run records (about %s each) and needs about %s of "
          "memory, over the limit of %s: give fewer points or replications, split it with "
          "--shard K/N, or raise --max-memory SIZE\n",
          expt_scenario_source(s), what, (unsigned long long)n_records, per, got, limit);
  return RETRY_ERANGE;
}

int expt_study_estimate_check(const expt_scenario *s, uint64_t n_records, unsigned jobs,
                              uint64_t max_bytes, const char *what, FILE *errf) {
  return check_bytes(s, n_records, jobs, 0, max_bytes, what, errf);
}

int expt_study_estimate_refuse(const expt_scenario *s, size_t n_points, size_t reps,
                               unsigned shard_n, unsigned jobs, uint64_t max_bytes,
                               uint64_t max_runs, uint64_t series_runs, FILE *errf) {
  size_t nv = expt_scenario_n_runs(s);
  uint64_t n_runs = mul_sat(mul_sat(n_points, reps), nv);
  uint64_t mine = shard_n > 0 ? n_runs / shard_n + 1 : n_runs;
  char what[160];
  snprintf(what, sizeof what, "a study of %zu point%s x %zu replications x %zu variant%s%s",
           n_points, n_points == 1 ? "" : "s", reps, nv, nv == 1 ? "" : "s",
           shard_n > 0 ? " (this shard's part)" : "");
  /* The runs first: a count over the limit is refused whatever memory it would take. */
  if (expt_study_runs_check(s, mine, max_runs, what, NULL, errf) != EXPT_EXIT_OK)
    return EXPT_EXIT_USAGE;
  if (max_bytes == 0) return EXPT_EXIT_OK;
  uint64_t series = mul_sat(series_runs, sizeof(expt_study_series));
  return check_bytes(s, mine, jobs > 0 ? jobs : 1, series, max_bytes, what, errf) == 0
             ? EXPT_EXIT_OK
             : EXPT_EXIT_USAGE;
}
