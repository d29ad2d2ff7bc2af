/*
 * expt_output.c: the summary document and the files of `--out DIR` (the text summary is in
 * expt_output_text.c, which reads the document through the public accessors).
 *
 * A expt_output owns a copy of what each run measured (run object, time series, latency
 * histogram). Invariant: every number is written from values rounded to EXPT_OUTPUT_DIGITS
 * significant digits, so equal results give byte-identical output on every platform we build on.
 */
#include "expt/expt_output.h"

#include "expt/expt_json.h"
#include "expt/expt_csv.h"
#include "expt/expt_window.h"
#include "retry/retry_json.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What is kept of one run. Copies, not pointers into the world: the driver frees each world as
 * soon as it ran, so a scenario with many variants never holds more than one world at a time.
 * The names in model_results are borrowed from the config, so they are copied too (into JSON
 * strings and ts names). The histogram lives on the heap: at about 58 KiB (7424 buckets) it
 * would make every realloc of the runs array copy far more than it needs to. */
typedef struct out_run {
  char *name;          /* the variant's name, or the scenario's without variants */
  json_t *obj;         /* run object (the document holds its own reference or copies) */
  model_timeseries ts; /* copy: names and values owned */
  sim_hist *latency;   /* copy of the latency of every finished call */
} out_run;

struct expt_output {
  char *scenario;    /* the scenario's name */
  char *sha256;      /* hex SHA-256 of the scenario file */
  uint64_t seed;     /* top-level seed */
  bool has_variants; /* runs go into "variants"; else one run, inline */
  json_t *doc;       /* the summary document */
  json_t *variants;  /* doc's "variants" array (own reference), or NULL */
  out_run *runs;     /* n_runs entries, grown by one per run */
  size_t n_runs;     /* runs added so far */
};

/* {==================================================================
 * Numbers and JSON values
 * =================================================================== */

/* Byte-stable numbers: a double is rounded to EXPT_OUTPUT_DIGITS significant digits before it
 * becomes a json_real, and the document is dumped with JSON_REAL_PRECISION(10). Printing a
 * 6-digit decimal with %.10g gives those same 6 digits back (trailing zeros dropped), so the text
 * depends only on the rounded value, not on the last bits of the computation that produced it
 * (which can differ between -O0 and -O2, or x87 and SSE). Jansson appends ".0" to a real that
 * prints like an integer, so a real stays a real ("1.0"). */

double expt_output_round(double x) {
  if (!isfinite(x)) return x;
  if (x == 0) return 0.0; /* -0 would print as "-0" */
  /* Printing and reading back is the simplest exact way to keep N significant digits: a
   * pow10-based round drifts by one ulp on some values, which would change the bytes. The C
   * locale is in force (retrysim never calls setlocale), so the decimal point is '.'. */
  char buf[40];
  snprintf(buf, sizeof buf, "%.*g", EXPT_OUTPUT_DIGITS, x);
  return strtod(buf, NULL);
}

void expt_output_value_text(const json_t *v, char *buf, size_t size) {
  if (size == 0) return;
  if (v == NULL) {
    snprintf(buf, size, "-");
  } else if (json_is_string(v)) {
    snprintf(buf, size, "%s", json_string_value(v));
  } else if (json_is_real(v) && isfinite(json_real_value(v))) {
    /* The shortest of %.1g .. %.17g that reads back exactly: what was written, when it was
     * a decimal of at most 17 digits. */
    double x = json_real_value(v);
    char t[40];
    for (int digits = 1; digits <= 17; digits++) {
      snprintf(t, sizeof t, "%.*g", digits, x);
      if (strtod(t, NULL) == x) break;
    }
    /* A real that is whole was written with a point: 2.0, as the loader's "got 2.0". */
    if (strspn(t, "-0123456789") == strlen(t)) strcat(t, ".0");
    snprintf(buf, size, "%s", t);
  } else {
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    snprintf(buf, size, "%s", t != NULL ? t : "?");
    free(t);
  }
}

/* Counters are int64 and json_int_t is long long: the cast loses nothing. */
static json_t *jint(int64_t v) { return json_integer((json_int_t)v); }

/* A double, rounded; null for NaN and infinities, which JSON cannot hold. */
static json_t *jreal(double v) {
  if (!isfinite(v)) return json_null();
  return json_real(expt_output_round(v));
}

/* 0 rather than a division by zero (or NaN, which jreal would write as null): see the note on
 * ratios below. */
static double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

/* Returns o when *ok, else releases it and returns NULL. With expt_json_put() this makes every builder
 * below one straight list of keys: an allocation failure anywhere only clears the flag, and the
 * partly built object is released once at the end. */
static json_t *done(json_t *o, bool ok) {
  if (ok) return o;
  json_decref(o);
  return NULL;
}

/* }================================================================== */

/* {==================================================================
 * The run object
 * =================================================================== */

/* Key order is part of the format (docs/cli.md): jansson keeps objects in insertion order, so
 * each builder adds its keys in the documented order. Ratios whose denominator is 0 (no calls,
 * no capacity, no duration) are written as 0 rather than null, so that scripts can compare
 * them without a special case. */

/* Non-zero statuses: gRPC names in code order, then HTTP statuses ("503") in numeric order. */
static json_t *status_json(const model_status_counts *s) {
  bool ok = true;
  json_t *o = json_object();
  for (int c = 0; c < RETRY_GRPC_N_CODES; c++)
    if (s->grpc[c] != 0) expt_json_put(o, retry_grpc_code_name(c), jint(s->grpc[c]), &ok);
  /* 600: model_status_counts.http is indexed by status. Walking the array gives numeric order
   * without a sort, the same on every run. */
  for (int h = 0; h < 600; h++) {
    if (s->http[h] == 0) continue;
    char key[8];
    snprintf(key, sizeof key, "%d", h);
    expt_json_put(o, key, jint(s->http[h]), &ok);
  }
  return done(o, ok);
}

/* Every stop reason but "none", zeros included, so expectations can name any of them; but
 * "cancelled" only where a call can be cancelled (an edge of a k-of-n fan-out that cancels
 * the calls it leaves: model_edge_stats.can_cancel), never for top-level calls. */
static json_t *stop_json(const int64_t *by_stop, bool can_cancel) {
  bool ok = true;
  json_t *o = json_object();
  for (int s = RETRY_STOP_NONE + 1; s < RETRY_STOP_N; s++)
    if (s != RETRY_STOP_CANCELLED || can_cancel)
      expt_json_put(o, retry_stop_name((retry_stop)s), jint(by_stop[s]), &ok);
  return done(o, ok);
}

/* The top-level calls (made by client populations) and how they ended. Every key is written
 * even when 0, so expectations and scripts never meet a missing key. */
static json_t *calls_json(const model_results *r) {
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "started", jint(r->calls_started), &ok);
  expt_json_put(o, "ok", jint(r->calls_ok), &ok);
  expt_json_put(o, "failed", jint(r->calls_failed), &ok);
  expt_json_put(o, "unfinished", jint(r->calls_unfinished), &ok);
  expt_json_put(o, "by_status", status_json(&r->by_status), &ok);
  expt_json_put(o, "by_stop_reason", stop_json(r->by_stop, false), &ok);
  expt_json_put(o, "attempts", jint(r->attempts), &ok);
  /* The front door's amplification: top-level attempts per top-level call. */
  expt_json_put(o, "attempts_per_call", jreal(ratio((double)r->attempts, (double)r->calls_started)), &ok);
  expt_json_put(o, "retries", jint(r->retries), &ok);
  expt_json_put(o, "hedges", jint(r->hedges), &ok);
  expt_json_put(o, "stream_items", jint(r->stream_items), &ok);
  expt_json_put(o, "stream_duplicates", jint(r->stream_duplicates), &ok);
  return done(o, ok);
}

/* The largest worst_case written: 2^53 - 1, the largest integer every JSON reader holds
 * exactly (RFC 8259 section 6, I-JSON RFC 7493). A product of max_attempts that reaches it
 * (six layers of 1000 attempts already do; seven saturate the engine's uint64) is written as this
 * integer, read "at least this many", never as a string or a rounded real. */
#define WORST_CASE_JSON_MAX UINT64_C(9007199254740991)

static json_t *jworst(uint64_t v) {
  return json_integer((json_int_t)(v < WORST_CASE_JSON_MAX ? v : WORST_CASE_JSON_MAX));
}

static json_t *latency_json(const sim_hist *h);

/* mean, min and max of one shared-state figure over the edge's holders. */
static json_t *spread_json(double mean, double min, double max) {
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "mean", jreal(mean), &ok);
  expt_json_put(o, "min", jreal(min), &ok);
  expt_json_put(o, "max", jreal(max), &ok);
  return done(o, ok);
}

/* The edge's shared state at the end of the run: null when its policy keeps none, else the
 * number of holders (clients or calling replicas, each with its own state) and one key per
 * configured mechanism only. */
static json_t *edge_state_json(const model_edge_state *st) {
  if (st->holders <= 0) return json_null();
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "holders", jint(st->holders), &ok);
  if (st->has_throttle)
    expt_json_put(o, "throttle_tokens", spread_json(st->tokens_mean, st->tokens_min, st->tokens_max), &ok);
  if (st->has_budget)
    expt_json_put(o, "budget_balance", spread_json(st->budget_mean, st->budget_min, st->budget_max), &ok);
  if (st->has_adaptive)
    expt_json_put(o, "adaptive_reject_p", spread_json(st->reject_p_mean, st->reject_p_min, st->reject_p_max),
        &ok);
  if (st->has_breaker) {
    json_t *b = json_object();
    expt_json_put(b, "closed", jint(st->breaker_closed), &ok);
    expt_json_put(b, "open", jint(st->breaker_open), &ok);
    expt_json_put(b, "half_open", jint(st->breaker_half_open), &ok);
    expt_json_put(b, "open_fraction",
        jreal(ratio((double)(st->breaker_open + st->breaker_half_open), (double)st->holders)), &ok);
    expt_json_put(b, "times_opened", jint(st->breaker_opened), &ok);
    expt_json_put(o, "breaker", b, &ok);
  }
  return done(o, ok);
}

/* One caller-to-callee edge. "" stands in for a missing name (a results struct built by
 * hand in a test), so the key stays a string. "amplification" and "attempts_per_call" are the
 * same figure (attempts sent on the edge per logical call on it): the first is kept for the
 * scripts that read it, the second names what it is. */
static json_t *edge_json(const model_edge_stats *e) {
  bool ok = true;
  json_t *o = json_object();
  double per_call = ratio((double)e->attempts, (double)e->calls);
  expt_json_put(o, "from", json_string(e->from ? e->from : ""), &ok);
  expt_json_put(o, "to", json_string(e->to ? e->to : ""), &ok);
  expt_json_put(o, "calls", jint(e->calls), &ok);
  if (e->has_branch) expt_json_put(o, "skipped", jint(e->skipped), &ok); /* only where a call branches */
  if (e->has_on_failure) { /* only where a call has an on_failure */
    expt_json_put(o, "on_failure", jint(e->on_failure), &ok);
    expt_json_put(o, "fallbacks", jint(e->fallbacks), &ok);
  }
  expt_json_put(o, "attempts", jint(e->attempts), &ok);
  expt_json_put(o, "amplification", jreal(per_call), &ok);
  expt_json_put(o, "attempts_per_call", jreal(per_call), &ok);
  expt_json_put(o, "worst_case", jworst(e->worst_case), &ok);
  expt_json_put(o, "max_attempts", jint(e->max_attempts), &ok);
  expt_json_put(o, "ok", jint(e->ok), &ok);
  expt_json_put(o, "failed", jint(e->failed), &ok);
  /* Only on an edge whose calls can be cancelled: the calls its caller cancelled (neither OK
   * nor failed), and their attempts the callee withdrew from its queue before any worker
   * took them (or dropped on arrival). */
  if (e->can_cancel) {
    expt_json_put(o, "cancelled", jint(e->cancelled), &ok);
    expt_json_put(o, "cancelled_unworked", jint(e->cancelled_unworked), &ok);
  }
  expt_json_put(o, "retries", jint(e->retries), &ok);
  expt_json_put(o, "hedges", jint(e->hedges), &ok);
  expt_json_put(o, "by_stop_reason", stop_json(e->by_stop, e->can_cancel), &ok);
  expt_json_put(o, "by_status", status_json(&e->by_status), &ok);
  expt_json_put(o, "latency_ms", latency_json(&e->latency), &ok);
  expt_json_put(o, "latency_ok_ms", latency_json(&e->latency_ok), &ok);
  expt_json_put(o, "shared_state", edge_state_json(&e->state), &ok);
  return done(o, ok);
}

/* Service arrivals per top-level call, one key per service, then the edges. Arrivals count every
 * attempt that reached the service, through any path, so a service two layers down shows the
 * product of the layers' retries: the figure users compare with the worst case. A service named
 * "edges" would be hidden by the edge array; the scenario loader is asked to refuse that name. */
static json_t *amplification_json(const model_results *r) {
  bool ok = true;
  json_t *o = json_object();
  for (size_t i = 0; i < r->n_services; i++) {
    const model_service_stats *s = &r->services[i];
    expt_json_put(o, s->name, jreal(ratio((double)s->arrivals, (double)r->calls_started)), &ok);
  }
  /* The edges follow the services, so "edges" is always the last key. The append loop stops
   * at the first failure; expt_json_put() then releases the partial array along with o. */
  json_t *edges = json_array();
  if (edges == NULL) ok = false;
  for (size_t i = 0; i < r->n_edges && ok; i++) {
    json_t *e = edge_json(&r->edges[i]);
    if (e == NULL || json_array_append_new(edges, e) != 0) ok = false;
  }
  expt_json_put(o, "edges", edges, &ok);
  return done(o, ok);
}

/* Quantiles of a histogram of nanoseconds, in milliseconds. Quantiles carry the histogram's
 * bucket error (< 1 %); max is exact. "p999" is p99.9 (a key without a dot, so expectation paths
 * can name it). */
static json_t *latency_json(const sim_hist *h) {
  static const struct {
    const char *key;
    double q;
  } qs[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}};
  bool ok = true;
  json_t *o = json_object();
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
    expt_json_put(o, qs[i].key, jreal((double)sim_hist_quantile(h, qs[i].q) / 1e6), &ok);
  expt_json_put(o, "max", jreal(h->count ? (double)h->max / 1e6 : 0.0), &ok);
  expt_json_put(o, "mean", jreal(sim_hist_mean(h) / 1e6), &ok);
  /* sim_hist counts in uint64, hence ju64 here too. */
  expt_json_put(o, "count", expt_json_u64(h->count), &ok);
  return done(o, ok);
}

/* One service's counters. arrivals_per_call is the service's load factor: attempts that
 * reached it per top-level call (the same figure as amplification.<service>). utilization is
 * busy time (work still in progress at the end included) over capacity (replicas x workers x
 * time), 0 for a service that had none; wasted_work_s is worker time whose result nobody
 * used, the cost a retry storm imposes. */
static json_t *service_json(const model_service_stats *s, int64_t calls_started) {
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "arrivals", jint(s->arrivals), &ok);
  expt_json_put(o, "arrivals_per_call", jreal(ratio((double)s->arrivals, (double)calls_started)), &ok);
  expt_json_put(o, "served", jint(s->served), &ok);
  expt_json_put(o, "rejected", jint(s->rejected), &ok);
  expt_json_put(o, "expired", jint(s->expired), &ok);
  expt_json_put(o, "abandoned", jint(s->abandoned), &ok);
  expt_json_put(o, "wasted_work_s", jreal(s->wasted_work_s), &ok);
  expt_json_put(o, "utilization", jreal(ratio(s->busy_s, s->capacity_s)), &ok);
  expt_json_put(o, "queue_max", jint(s->queue_max), &ok);
  expt_json_put(o, "executions", jint(s->executions), &ok);
  expt_json_put(o, "operations", jint(s->operations), &ok);
  expt_json_put(o, "deduplicated", jint(s->deduplicated), &ok);
  /* The counters of a service's own overload rules, present only when the rule is set (so
   * that a service without them keeps its keys). */
  if (s->has_contention) expt_json_put(o, "conflicts", jint(s->conflicts), &ok);
  if (s->has_admission) expt_json_put(o, "admission_rejected", jint(s->admission_rejected), &ok);
  if (s->has_codel) expt_json_put(o, "codel_dropped", jint(s->codel_dropped), &ok);
  if (s->has_acc) {
    expt_json_put(o, "concurrency_rejected", jint(s->acc_rejected), &ok);
    expt_json_put(o, "concurrency_limit", jreal(s->acc_limit), &ok);
  }
  if (s->has_shedding) expt_json_put(o, "shed", jint(s->shed), &ok);
  if (s->has_retry_budget) {
    expt_json_put(o, "retries_rejected", jint(s->retries_rejected), &ok);
    expt_json_put(o, "dont_retry", jint(s->dont_retry), &ok);
  }
  /* Only on a service whose handlers make calls and can hear a k-of-n fan-out's cancel: the
   * requests whose handler the cancel cut short. */
  if (s->has_cancel) expt_json_put(o, "cancelled", jint(s->cancelled), &ok);
  if (s->has_cache) {
    json_t *c = json_object();
    expt_json_put(c, "hits", jint(s->cache_hits), &ok);
    expt_json_put(c, "misses", jint(s->cache_misses), &ok);
    expt_json_put(c, "hit_ratio", jreal(ratio((double)s->cache_hits,
                                    (double)(s->cache_hits + s->cache_misses))), &ok);
    expt_json_put(c, "coalesced", jint(s->cache_coalesced), &ok);
    expt_json_put(c, "fills", jint(s->cache_fills), &ok);
    expt_json_put(c, "evictions", jint(s->cache_evictions), &ok);
    expt_json_put(c, "expirations", jint(s->cache_expirations), &ok);
    expt_json_put(c, "flushed", jint(s->cache_flushed), &ok);
    if (s->has_invalidate) expt_json_put(c, "deleted", jint(s->cache_deleted), &ok);
    expt_json_put(o, "cache", done(c, ok), &ok);
  }
  return done(o, ok);
}

/* null without a trigger that ends while clients still send; recovery_s is null when the
 * run never recovered (and trigger_end_s cannot be: the trigger ended before the duration).
 * The keys up to final_ratio are the older ones; the criteria follow. */
static json_t *recovery_json(const expt_recovery *rc) {
  if (rc == NULL || !rc->has_trigger) return json_null();
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "trigger_start_s", jreal(rc->trigger_start_s), &ok);
  expt_json_put(o, "trigger_end_s", jreal(rc->trigger_end_s), &ok);
  expt_json_put(o, "baseline_ratio", jreal(rc->baseline_ratio), &ok);
  expt_json_put(o, "threshold", jreal(rc->threshold), &ok);
  expt_json_put(o, "hold_s", jreal(rc->hold_s), &ok);
  bool unjudged = !rc->recovered && rc->judged_until_s < 0;
  expt_json_put(o, "recovered", unjudged ? json_null() : json_boolean(rc->recovered), &ok);
  expt_json_put(o, "recovery_s", jreal(rc->recovery_s), &ok);
  /* Only when no span of the hold fits after the trigger: the run cannot tell recovered from
   * not. A flag rather than the censoring time, which every run not recovered has: a studies'
   * "recovery.*_s" metric is read as a recovery time (expt_agg.c), and that one is not. */
  if (unjudged) expt_json_put(o, "unjudged", json_true(), &ok);
  expt_json_put(o, "final_ratio", jreal(rc->final_ratio), &ok);
  expt_json_put(o, "trigger_source", json_string(rc->explicit_trigger ? "explicit" : "faults"), &ok);
  expt_json_put(o, "latency_column", json_string(rc->latency_column ? rc->latency_column : ""), &ok);
  expt_json_put(o, "baseline_latency_ms", jreal(rc->baseline_latency_ms), &ok);
  expt_json_put(o, "latency_factor", jreal(rc->latency_factor), &ok);
  expt_json_put(o, "queue_factor", jreal(rc->queue_factor), &ok);
  expt_json_put(o, "queue_slack", jreal(rc->queue_slack), &ok);
  json_t *crit = json_object();
  for (int c = 0; c < EXPT_RECOVERY_N; c++) {
    char key[32];
    snprintf(key, sizeof key, "%s_s", expt_recovery_criterion_name((expt_recovery_criterion)c));
    expt_json_put(crit, key, jreal(rc->criterion_s[c]), &ok);
  }
  expt_json_put(o, "criteria", crit, &ok);
  expt_json_put(o, "last_criterion", json_string(expt_recovery_criterion_name(rc->last_criterion)), &ok);
  expt_json_put(o, "queue_service", rc->queue_service ? json_string(rc->queue_service) : json_null(), &ok);
  return done(o, ok);
}

/* Goodput is per second of the scenario's duration, not of sim_time_s: the drain after the
 * duration only finishes calls already started, and dividing by it would make a run that drains
 * longer look worse. */
json_t *expt_output_run_json(const model_results *r, const expt_recovery *rec) {
  assert(r != NULL);
  bool ok = true;
  json_t *o = json_object();
  expt_json_put(o, "sim_time_s", jreal((double)r->sim_time_ns / 1e9), &ok);
  expt_json_put(o, "events", expt_json_u64(r->events), &ok);
  expt_json_put(o, "calls", calls_json(r), &ok);
  expt_json_put(o, "amplification", amplification_json(r), &ok);
  double duration_s = (double)r->duration_ns / 1e9;
  expt_json_put(o, "goodput_per_s", jreal(ratio((double)r->calls_ok_in_deadline, duration_s)), &ok);
  expt_json_put(o, "latency_ms", latency_json(&r->latency), &ok);
  expt_json_put(o, "latency_ok_ms", latency_json(&r->latency_ok), &ok);
  /* Side effects over all services: duplicates are the executions beyond the first of an
   * operation, the figure idempotency keys are meant to bring to 0. A NULL fx (out of memory)
   * makes expt_json_put() clear ok; its own puts then fail harmlessly on a NULL object. */
  json_t *fx = json_object();
  expt_json_put(fx, "executions", jint(r->executions), &ok);
  expt_json_put(fx, "operations", jint(r->operations), &ok);
  expt_json_put(fx, "duplicates", jint(r->duplicates), &ok);
  expt_json_put(o, "side_effects", fx, &ok);
  json_t *svc = json_object();
  for (size_t i = 0; i < r->n_services; i++)
    expt_json_put(svc, r->services[i].name, service_json(&r->services[i], r->calls_started), &ok);
  /* Services keep the config's order (that of the scenario file), not an alphabetical one. */
  expt_json_put(o, "services", svc, &ok);
  expt_json_put(o, "recovery", recovery_json(rec), &ok);
  expt_output_ops_put(o, r, &ok); /* only with operators (expt_output_ops.c) */
  /* Only with a "windows" block, so that runs without one are written as before. */
  bool oom = false;
  json_t *win = expt_window_json(rec, r, expt_output_round, &oom);
  if (win != NULL) expt_json_put(o, "windows", win, &ok);
  ok = ok && !oom;
  return done(o, ok);
}

/* }================================================================== */

/* {==================================================================
 * The collector
 * =================================================================== */

/* A copy of s, "" for NULL; plain malloc, as expt_output has no allocator hook. */
static char *dup_str(const char *s) {
  if (s == NULL) s = "";
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

/* The name and hash are copied, so the output does not depend on the scenario's lifetime. Any
 * allocation failure leads to one destroy at the end: every member is NULL or valid. */
expt_output *expt_output_create(const char *scenario, const char *sha256, uint64_t seed,
                              bool has_variants) {
  expt_output *o = calloc(1, sizeof *o);
  if (o == NULL) return NULL;
  o->seed = seed;
  o->has_variants = has_variants;
  o->scenario = dup_str(scenario);
  o->sha256 = dup_str(sha256);
  bool ok = o->scenario != NULL && o->sha256 != NULL;
  /* The provenance keys come first; the run keys (or "variants") follow as runs are added. */
  o->doc = json_object();
  expt_json_put(o->doc, "scenario", json_string(o->scenario ? o->scenario : ""), &ok);
  expt_json_put(o->doc, "version", json_string(RETRY_VERSION), &ok);
  expt_json_put(o->doc, "scenario_sha256", json_string(o->sha256 ? o->sha256 : ""), &ok);
  expt_json_put(o->doc, "seed", expt_json_u64(seed), &ok);
  if (has_variants) {
    o->variants = json_array();
    /* o->variants holds its own reference (released in destroy), so the pointer stays valid
     * even if the set below fails and the document never takes the array. */
    json_incref(o->variants);
    expt_json_put(o->doc, "variants", o->variants, &ok);
  } else {
    /* "variant": null keeps the key set of a run object the same with and without variants. */
    expt_json_put(o->doc, "variant", json_null(), &ok);
  }
  if (!ok) {
    expt_output_destroy(o);
    return NULL;
  }
  return o;
}

/* The document is rebuilt with the provenance keys after "seed", so that every key keeps its
 * documented place; the values are deep copies, so the output does not depend on the
 * scenario's lifetime. Allowed only before the first run, whose keys would follow. */
int expt_output_set_provenance(expt_output *o, const json_t *inputs, const json_t *overrides,
                              const json_t *document) {
  assert(o != NULL && o->n_runs == 0);
  json_t *doc = json_object();
  bool ok = doc != NULL;
  for (void *it = json_object_iter(o->doc); ok && it != NULL;
       it = json_object_iter_next(o->doc, it)) {
    const char *key = json_object_iter_key(it);
    ok = json_object_set(doc, key, json_object_iter_value(it)) == 0;
    if (ok && strcmp(key, "seed") == 0) {
      expt_json_put(doc, "inputs", inputs != NULL ? json_deep_copy(inputs) : json_array(), &ok);
      expt_json_put(doc, "overrides", overrides != NULL ? json_deep_copy(overrides) : json_array(), &ok);
      expt_json_put(doc, "document", document != NULL ? json_deep_copy(document) : json_null(), &ok);
    }
  }
  if (!ok) {
    json_decref(doc);
    return RETRY_ENOMEM;
  }
  json_decref(o->doc);
  o->doc = doc;
  return 0;
}

/* Releases everything add_run stored; a run is only counted in n_runs once complete, so
 * every entry below n_runs is fully built. */
void expt_output_destroy(expt_output *o) {
  if (o == NULL) return;
  for (size_t i = 0; i < o->n_runs; i++) {
    out_run *r = &o->runs[i];
    free(r->name);
    json_decref(r->obj);
    free(r->ts.names);
    free(r->ts.values);
    free(r->latency);
  }
  free(o->runs);
  json_decref(o->variants);
  json_decref(o->doc);
  free(o->scenario);
  free(o->sha256);
  free(o);
}

/* Copies the time series src into dst (names and values owned by dst). Returns 0 or -1. The
 * copy is small (buckets x columns doubles, bounded by the loader's bucket limit) and keeps the
 * writers independent of the world's lifetime. Names are cut at the array's size defensively. */
static int ts_copy(model_timeseries *dst, const model_timeseries *src) {
  *dst = *src;
  dst->names = NULL;
  dst->values = NULL;
  size_t nc = src->n_columns, nb = src->n_buckets;
  if (nc == 0) {
    dst->n_buckets = nb;
    return 0;
  }
  if (nb > SIZE_MAX / sizeof(double) / nc) return -1;
  /* The size check above keeps nb * nc * sizeof(double) from wrapping. */
  dst->names = malloc(nc * sizeof *dst->names);
  dst->values = malloc(nb * nc * sizeof(double) + 1); /* + 1: never malloc(0) */
  if (dst->names == NULL || dst->values == NULL) {
    free(dst->names);
    free(dst->values);
    dst->names = NULL;
    dst->values = NULL;
    return -1;
  }
  memcpy(dst->names, src->names, nc * sizeof *dst->names);
  /* Cut at MODEL_TS_NAME_MAX - 1 in case the world ever filled a name to the brim. */
  for (size_t c = 0; c < nc; c++)
    dst->names[c][MODEL_TS_NAME_MAX - 1] = '\0';
  if (nb > 0) memcpy(dst->values, src->values, nb * nc * sizeof(double));
  return 0;
}

/* Builds the stored object of a run: "variant" (and "seed" when it differs) then the run keys.
 * json_object_update adds body's keys after the ones already set and in body's order, and
 * shares the values rather than copying them. */
static json_t *stored_object(const expt_output *o, const char *name, uint64_t seed,
                             const model_results *r, const expt_recovery *rec) {
  json_t *body = expt_output_run_json(r, rec);
  if (!o->has_variants || body == NULL) return body;
  bool ok = true;
  json_t *obj = json_object();
  expt_json_put(obj, "variant", json_string(name ? name : ""), &ok);
  if (seed != o->seed) expt_json_put(obj, "seed", expt_json_u64(seed), &ok);
  if (ok && json_object_update(obj, body) != 0) ok = false;
  json_decref(body);
  return done(obj, ok);
}

/* The runs array grows by one per run: variants are few (tens), so doubling would buy nothing.
 * It is grown first, so that once everything else is built, nothing can fail after the run
 * was attached to the document. */
int expt_output_add_run(expt_output *o, const char *name, uint64_t seed, const model_results *r,
                       const expt_recovery *rec) {
  assert(o != NULL && r != NULL);
  if (!o->has_variants && o->n_runs > 0) return RETRY_EINVAL;
  out_run *runs = realloc(o->runs, (o->n_runs + 1) * sizeof *runs);
  if (runs == NULL) return RETRY_ENOMEM;
  o->runs = runs;
  out_run run = {0};
  run.name = dup_str(name);
  run.obj = stored_object(o, name, seed, r, rec);
  run.latency = malloc(sizeof *run.latency);
  bool ok =
      run.name != NULL && run.obj != NULL && run.latency != NULL && ts_copy(&run.ts, &r->ts) == 0;
  /* A sim_hist has no pointers, so a struct copy is a full copy. */
  if (ok) *run.latency = r->latency;
  /* Attach to the document last, so a failure leaves the document as it was. */
  if (ok && o->has_variants) ok = json_array_append(o->variants, run.obj) == 0;
  /* Without variants the run's keys join the top level after the provenance keys; the
   * object still holds its own reference to each value, so run i stays readable. */
  if (ok && !o->has_variants) ok = json_object_update(o->doc, run.obj) == 0;
  if (!ok) {
    free(run.name);
    json_decref(run.obj);
    free(run.latency);
    free(run.ts.names);
    free(run.ts.values);
    return RETRY_ENOMEM;
  }
  /* Counted only now, complete: destroy never sees a half-built run. */
  o->runs[o->n_runs++] = run;
  return 0;
}

int expt_output_run_put(expt_output *o, size_t i, const char *key, json_t *v) {
  assert(i < o->n_runs);
  if (v == NULL) return RETRY_ENOMEM;
  bool ok = json_object_set(o->runs[i].obj, key, v) == 0;
  if (ok && !o->has_variants) ok = json_object_set(o->doc, key, v) == 0;
  json_decref(v);
  return ok ? 0 : RETRY_ENOMEM;
}

size_t expt_output_n_runs(const expt_output *o) { return o->n_runs; }

const json_t *expt_output_run(const expt_output *o, size_t i) {
  assert(i < o->n_runs);
  return o->runs[i].obj;
}

const json_t *expt_output_summary(const expt_output *o) { return o->doc; }

/* Dumped to a string first rather than with json_dumpf, so that an allocation failure is told
 * apart from a write error and nothing is written half. */
int expt_output_write_json(const expt_output *o, FILE *f) {
  char *s = json_dumps(o->doc, EXPT_OUTPUT_JSON_FLAGS);
  if (s == NULL) return -1;
  int rc = (fputs(s, f) < 0 || fputc('\n', f) == EOF) ? -1 : 0;
  free(s);
  return rc;
}

/* }================================================================== */

/* {==================================================================
 * CSV files
 * =================================================================== */

/* The CSV files are wide, for gnuplot (`set datafile separator comma`, columns by header name):
 * one row per time bucket or histogram bucket. Write errors are not checked call by call: the
 * stream's error flag is tested once, after a flush, when the file is closed (write_temp). */

/* Formats a double for CSV: EXPT_OUTPUT_DIGITS significant digits; empty for NaN and infinities
 * (gnuplot reads an empty field as missing data). */
static void fmt_num(char *buf, size_t size, double x) {
  if (!isfinite(x)) {
    buf[0] = '\0';
    return;
  }
  /* Rounded first, like the JSON reals, so a CSV value and the same figure in summary.json
   * agree to the digit. */
  snprintf(buf, size, "%.*g", EXPT_OUTPUT_DIGITS, expt_output_round(x));
}

/* Formats ns >= 0 as exact decimal seconds without trailing zeros ("1.25", "3"). Integer
 * arithmetic, not %g on a double: bucket starts stay exact at any run length (t = 123456.5 s
 * would print as 123457 with six digits), so rows of different files line up on t_s. */
static void fmt_seconds(char *buf, size_t size, int64_t ns) {
  if (ns < 0) ns = 0;
  int64_t s = ns / 1000000000, frac = ns % 1000000000;
  if (frac == 0) {
    snprintf(buf, size, "%" PRId64, s);
    return;
  }
  snprintf(buf, size, "%" PRId64 ".%09" PRId64, s, frac);
  size_t n = strlen(buf);
  while (n > 0 && buf[n - 1] == '0')
    buf[--n] = '\0';
}

/* Writes the rows of one run. With a name, each row starts with it (the variant column). map[j]
 * is the run's column printed as output column j, or -1 when the run has no such column. */
static void ts_rows(FILE *f, const out_run *run, const char *name, const long *map, size_t n_map) {
  const model_timeseries *ts = &run->ts;
  char buf[48];
  /* values is row-major (bucket b, column c at b * n_columns + c). A column the run lacks
   * (map[j] < 0) gets an empty field, which gnuplot reads as missing data. */
  for (size_t b = 0; b < ts->n_buckets; b++) {
    if (name != NULL) {
      expt_csv_text(f, name);
      fputc(',', f);
    }
    fmt_seconds(buf, sizeof buf, (int64_t)b * ts->bucket_ns);
    fputs(buf, f);
    for (size_t j = 0; j < n_map; j++) {
      buf[0] = '\0';
      if (map[j] >= 0) fmt_num(buf, sizeof buf, ts->values[b * ts->n_columns + (size_t)map[j]]);
      fputc(',', f);
      fputs(buf, f);
    }
    fputc('\n', f);
  }
}

/* One run's own time series: "t_s,<its columns>". */
/* Every writer has out_file's signature (the output, a run index, the stream); those that
 * cover all runs ignore the index. They return 0, RETRY_ENOMEM or RETRY_EIO, and leave write
 * errors to write_temp. The "+ 1" in the allocations below avoids malloc(0). */
static int write_ts_one(const expt_output *o, size_t i, FILE *f) {
  const out_run *run = &o->runs[i];
  size_t nc = run->ts.n_columns;
  long *map = malloc((nc + 1) * sizeof *map);
  if (map == NULL) return RETRY_ENOMEM;
  fputs("t_s", f);
  for (size_t c = 0; c < nc; c++) {
    fputc(',', f);
    expt_csv_text(f, run->ts.names[c]);
    map[c] = (long)c;
  }
  fputc('\n', f);
  ts_rows(f, run, NULL, map, nc);
  free(map);
  return 0;
}

/* All runs in one file: "variant,t_s,<columns>". Variants may differ in their columns (a variant
 * can add a service), so the header is the union of every run's columns in order of first
 * appearance, and a run leaves the columns it does not have empty. */
static int write_ts_all(const expt_output *o, size_t unused, FILE *f) {
  (void)unused;
  if (!o->has_variants) return write_ts_one(o, 0, f);
  size_t total = 0;
  for (size_t i = 0; i < o->n_runs; i++)
    total += o->runs[i].ts.n_columns;
  const char **cols = malloc((total + 1) * sizeof *cols);
  long *map = malloc((total + 1) * sizeof *map);
  if (cols == NULL || map == NULL) {
    free(cols);
    free(map);
    return RETRY_ENOMEM;
  }
  /* The union by linear search: columns and runs are both tens, so a hash would buy nothing.
   * cols borrows the runs' names; nothing is copied. */
  size_t n = 0;
  for (size_t i = 0; i < o->n_runs; i++)
    for (size_t c = 0; c < o->runs[i].ts.n_columns; c++) {
      const char *name = o->runs[i].ts.names[c];
      size_t j = 0;
      while (j < n && strcmp(cols[j], name) != 0)
        j++;
      if (j == n) cols[n++] = name;
    }
  fputs("variant,t_s", f);
  for (size_t j = 0; j < n; j++) {
    fputc(',', f);
    expt_csv_text(f, cols[j]);
  }
  fputc('\n', f);
  for (size_t i = 0; i < o->n_runs; i++) {
    const out_run *run = &o->runs[i];
    for (size_t j = 0; j < n; j++) {
      map[j] = -1;
      for (size_t c = 0; c < run->ts.n_columns && map[j] < 0; c++)
        if (strcmp(run->ts.names[c], cols[j]) == 0) map[j] = (long)c;
    }
    ts_rows(f, run, run->name, map, n);
  }
  free(cols);
  free(map);
  return 0;
}

/* The latency histogram of every run: "variant,lo_ms,hi_ms,count,cumulative_fraction". */
static int write_latency(const expt_output *o, size_t unused, FILE *f) {
  (void)unused;
  fputs("variant,lo_ms,hi_ms,count,cumulative_fraction\n", f);
  for (size_t i = 0; i < o->n_runs; i++) {
    const char *name = o->runs[i].name;
    /* The prefix is the name as a CSV field: at most twice its length plus quotes and comma. */
    /* Built by hand rather than with csv_string: sim_hist_write_csv writes a prefix string
     * verbatim at the start of each row, so the quoting must be done beforehand. */
    char *prefix = malloc(2 * strlen(name) + 4);
    if (prefix == NULL) return RETRY_ENOMEM;
    char *p = prefix;
    bool quote = strpbrk(name, ",\"\r\n") != NULL;
    if (quote) *p++ = '"';
    for (const char *s = name; *s; s++) {
      if (*s == '"') *p++ = '"';
      *p++ = *s;
    }
    if (quote) *p++ = '"';
    *p++ = ',';
    *p = '\0';
    int rc = sim_hist_write_csv(o->runs[i].latency, f, prefix, 1e6);
    free(prefix);
    if (rc != 0) return RETRY_EIO;
  }
  return 0;
}

/* A number of the run object (dotted key pairs), NaN when absent or null. */
static double run_num(const json_t *run, const char *k1, const char *k2) {
  const json_t *v = json_object_get(run, k1);
  if (k2 != NULL) v = json_object_get(v, k2);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One row per run, the figures a comparison plot needs (plots/variants.gp), read from the run
 * objects so they agree with summary.json to the digit. amplification is top-level attempts
 * per call; recovered is 1/0, empty (with recovery_s) when the run had no trigger that ended. */
static int write_variants(const expt_output *o, size_t unused, FILE *f) {
  (void)unused;
  fputs(
      "variant,calls,ok,failed,success_ratio,attempts,amplification,goodput_per_s,"
      "latency_p50_ms,latency_p99_ms,latency_p999_ms,duplicates,wasted_work_s,recovered,"
      "recovery_s\n",
      f);
  for (size_t i = 0; i < o->n_runs; i++) {
    const json_t *run = o->runs[i].obj;
    double calls = run_num(run, "calls", "started"), attempts = run_num(run, "calls", "attempts");
    double wasted = 0;
    const char *key;
    json_t *svc;
    json_object_foreach(json_object_get(run, "services"), key, svc) {
      wasted += run_num(svc, "wasted_work_s", NULL);
    }
    const json_t *rec = json_object_get(run, "recovery");
    double recovered =
        json_is_object(rec) ? (json_is_true(json_object_get(rec, "recovered")) ? 1 : 0) : NAN;
    double values[] = {calls,
                       run_num(run, "calls", "ok"),
                       run_num(run, "calls", "failed"),
                       ratio(run_num(run, "calls", "ok"), calls),
                       attempts,
                       ratio(attempts, calls),
                       run_num(run, "goodput_per_s", NULL),
                       run_num(run, "latency_ms", "p50"),
                       run_num(run, "latency_ms", "p99"),
                       run_num(run, "latency_ms", "p999"),
                       run_num(run, "side_effects", "duplicates"),
                       wasted,
                       recovered,
                       json_is_object(rec) ? run_num(rec, "recovery_s", NULL) : NAN};
    expt_csv_text(f, o->runs[i].name);
    char buf[48];
    for (size_t j = 0; j < sizeof values / sizeof values[0]; j++) {
      fmt_num(buf, sizeof buf, values[j]);
      fputc(',', f);
      fputs(buf, f);
    }
    fputc('\n', f);
  }
  return 0;
}

/* The same bytes as `--format json` writes to stdout. */
static int write_summary(const expt_output *o, size_t unused, FILE *f) {
  (void)unused;
  return expt_output_write_json(o, f) == 0 ? 0 : RETRY_EIO;
}

/* }================================================================== */

/* {==================================================================
 * Writing a directory atomically
 * =================================================================== */

/* A reader (a plot script, a sweep collecting results) must never see half a file, nor a
 * summary.json from one run next to CSVs from another. Each file is written whole under a
 * temporary name in the same directory (rename is atomic only within a file system) and the
 * renames happen only after every file was written and closed. The pid in the temporary name
 * keeps two retrysim processes writing into one directory from clobbering each other's
 * halves; the last to rename wins, file by file. Rejected: writing into a temporary directory
 * and renaming it over DIR, which would delete files the user keeps in DIR. */

typedef struct out_file {
  int (*write)(const expt_output *o, size_t run, FILE *f); /* fills the file */
  size_t run;                                             /* the run, for per-variant files */
  char *path;                                             /* DIR/NAME */
  char *tmp;                                              /* DIR/NAME.tmp.<pid> */
  bool made; /* the temporary file exists (we created it) */
  int slot;  /* its entry in the signal handler's list, -1 when none */
} out_file;

/* {==================================================================
 * Temporary files and signals
 * =================================================================== */

/* A SIGINT or SIGTERM while the files are written would leave NAME.tmp.<pid> files (tens of
 * megabytes for a long time series) behind (issue 10, defect 2). The handler can call only
 * async-signal-safe functions, so it walks a fixed array of pointers to the temporary names
 * and unlinks each: no allocation, no lock, no stdio. A name is published only once its string
 * is complete and withdrawn before it is freed; the signal fences keep the compiler from
 * moving those stores across the writes of the string (the handler runs on this thread). The
 * array is static (the one global state of the program besides the loader's test hook): a
 * signal handler has no context argument. */
#define TMP_SLOTS 1024
static const char *volatile tmp_slots[TMP_SLOTS];

int expt_output_tmp_register(const char *path) {
  for (int i = 0; i < TMP_SLOTS; i++) {
    if (tmp_slots[i] != NULL) continue;
    atomic_signal_fence(memory_order_seq_cst);
    tmp_slots[i] = path;
    atomic_signal_fence(memory_order_seq_cst);
    return i;
  }
  return -1; /* full: the file is still written, only not removed on a signal */
}

void expt_output_tmp_forget(int slot) {
  if (slot < 0 || slot >= TMP_SLOTS) return;
  atomic_signal_fence(memory_order_seq_cst);
  tmp_slots[slot] = NULL;
  atomic_signal_fence(memory_order_seq_cst);
}

int expt_output_write_atomic(const char *path, int (*fill)(void *ctx, FILE *f), void *ctx,
                            retry_error *err) {
  size_t n = strlen(path) + 32;
  char *tmp = malloc(n);
  if (tmp == NULL) {
    expt_output_error(err, RETRY_ENOMEM, path, "out of memory");
    return RETRY_ENOMEM;
  }
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  int slot = expt_output_tmp_register(tmp); /* removed on SIGINT / SIGTERM */
  int rc = 0;
  FILE *f = fopen(tmp, "w");
  if (f == NULL) {
    expt_output_error(err, RETRY_EIO, path, "cannot create (writing %s): %s", tmp, strerror(errno));
    rc = RETRY_EIO;
  } else {
    int e = 0;
    if (fill(ctx, f) != 0 || fflush(f) != 0 || ferror(f)) e = errno ? errno : EIO;
    if (fclose(f) != 0 && e == 0) e = errno;
    if (e == 0 && rename(tmp, path) != 0) e = errno;
    if (e != 0) {
      expt_output_error(err, RETRY_EIO, path, "cannot write: %s", strerror(e));
      unlink(tmp);
      rc = RETRY_EIO;
    }
  }
  expt_output_tmp_forget(slot);
  free(tmp);
  return rc;
}

/* Removes every temporary file, then dies of the signal itself (its default action), so that
 * the parent sees the signal: a shell reports 128 + 2 = 130 for SIGINT, 143 for SIGTERM. errno
 * is not restored: the process does not return to the code it interrupted. */
static void on_signal(int sig) {
  for (int i = 0; i < TMP_SLOTS; i++) {
    const char *p = tmp_slots[i];
    if (p != NULL) unlink(p);
  }
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  raise(sig); /* delivered as soon as the handler returns: the signal is blocked in it */
}

/* SIGINT ignored on entry (a background job of a non-interactive shell) stays ignored, as
 * for every well-behaved program: ^C in the terminal of such a script must not stop it.
 * SIGXFSZ (a file over the size limit, ulimit -f) is ignored, so that the write fails with
 * EFBIG instead of the process dumping core: the ordinary error path then removes the
 * temporary files and the exit status is 3. */
void expt_output_signals_install(void) {
  static const int sigs[] = {SIGINT, SIGTERM};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* Both signals are blocked while the handler runs, so a second one waits. */
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(sigs[i], &sa, NULL);
  }
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGXFSZ, &ign, NULL);
}

/* }================================================================== */

/* First error wins, through the one setter every loader uses (retry_json.h). */
char *expt_output_printf(const char *fmt, ...) {
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

void expt_output_error(retry_error *err, int code, const char *source, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  retry_error_vset(err, code, source, "", -1, -1, fmt, ap);
  va_end(ap);
}

/* mkdir -p: creates dir and its missing parents. Returns 0 or RETRY_EIO. */
static int make_dirs(const char *dir, retry_error *err) {
  if (dir[0] == '\0') {
    expt_output_error(err, RETRY_EIO, dir, "cannot create directory: empty name");
    return RETRY_EIO;
  }
  /* Each prefix that ends before a '/' is created in turn, from the top down, and EEXIST is
   * fine for any of them. Starting at p + 1 skips the root of an absolute path. The mode is
   * filtered by the umask, as with mkdir -p. */
  char *p = dup_str(dir);
  if (p == NULL) return RETRY_ENOMEM;
  int e = 0; /* the first errno that matters */
  for (char *s = p + 1; *s && e == 0; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) e = errno;
    *s = '/';
  }
  if (e == 0 && mkdir(p, 0777) != 0 && errno != EEXIST) e = errno;
  /* EEXIST also covers a file of that name: only stat tells a directory apart. */
  struct stat st;
  if (e == 0 && stat(p, &st) != 0) e = errno;
  if (e == 0 && !S_ISDIR(st.st_mode)) e = ENOTDIR;
  if (e != 0) expt_output_error(err, RETRY_EIO, dir, "cannot create directory: %s", strerror(e));
  free(p);
  return e == 0 ? 0 : RETRY_EIO;
}

int expt_output_make_dirs(const char *dir, retry_error *err) { return make_dirs(dir, err); }

/* Replaces every character of a variant name that is unsafe in a file name with '_'. Names the
 * loader accepts ([A-Za-z0-9_.-]) are unchanged; this only guards against a '/' reaching the
 * path. Two names that differ only in such characters would share a file. */
void expt_output_safe_name(char *s) {
  for (; *s; s++) {
    char c = *s;
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '_' || c == '.';
    if (!keep) *s = '_';
  }
}

/* Sets the paths of f: dir/name and dir/name.tmp.<pid>. Returns 0 or RETRY_ENOMEM. */
static int file_paths(out_file *f, const char *dir, const char *name) {
  /* 40 bytes cover '/', ".tmp.", a pid of up to 20 digits and the NUL. On a failure either
   * path may be set; the caller frees both whatever happened. */
  size_t n = strlen(dir) + strlen(name) + 40;
  f->path = malloc(n);
  f->tmp = malloc(n);
  if (f->path == NULL || f->tmp == NULL) return RETRY_ENOMEM;
  snprintf(f->path, n, "%s/%s", dir, name);
  snprintf(f->tmp, n, "%s/%s.tmp.%ld", dir, name, (long)getpid());
  f->slot = expt_output_tmp_register(f->tmp);
  return 0;
}

/* The files to write, summary.json last so that a summary.json is never newer than its CSVs.
 * Returns the number of entries filled in files (sized 4 + n_runs), or -1 when out of memory. */
static long plan_files(const expt_output *o, const char *dir, out_file *files) {
  size_t n = 0;
  /* RETRY_ENOMEM is negative: or-ing it into rc keeps rc non-zero, which is all that is
   * tested. If a name cannot be allocated, -1 goes back with some entries filled; the caller
   * frees every slot (zeroed by calloc), filled or not. */
  int rc = 0;
  files[n].write = write_ts_all;
  rc |= file_paths(&files[n++], dir, "timeseries.csv");
  files[n].write = write_latency;
  rc |= file_paths(&files[n++], dir, "latency.csv");
  files[n].write = write_variants;
  rc |= file_paths(&files[n++], dir, "variants.csv");
  for (size_t i = 0; o->has_variants && i < o->n_runs && rc == 0; i++) {
    /* 32 bytes cover "timeseries-", ".csv" and the NUL. */
    size_t len = strlen(o->runs[i].name) + 32;
    char *name = malloc(len);
    if (name == NULL) return -1;
    snprintf(name, len, "timeseries-%s", o->runs[i].name);
    expt_output_safe_name(name);
    strcat(name, ".csv");
    files[n].write = write_ts_one;
    files[n].run = i;
    rc |= file_paths(&files[n++], dir, name);
    free(name);
  }
  files[n].write = write_summary;
  rc |= file_paths(&files[n++], dir, "summary.json");
  return rc == 0 ? (long)n : -1;
}

/* Writes one temporary file. Returns 0 or a negative RETRY code with err filled. */
static int write_temp(const expt_output *o, out_file *file, retry_error *err) {
  FILE *f = fopen(file->tmp, "w");
  if (f == NULL) {
    expt_output_error(err, RETRY_EIO, file->path, "cannot create (writing %s): %s", file->tmp,
                     strerror(errno));
    return RETRY_EIO;
  }
  /* Set as soon as the file exists, so any later failure removes it. */
  file->made = true;
  /* The stream is closed even after a failure, to release it; the first errno found is the
   * one reported. Out of memory keeps its code, every other failure becomes RETRY_EIO. */
  int rc = file->write(o, file->run, f);
  /* A full disk usually shows only when the buffer is flushed, so flush before judging. */
  int e = 0;
  if (fflush(f) != 0) e = errno;
  if (e == 0 && ferror(f)) e = EIO;
  if (fclose(f) != 0 && e == 0) e = errno;
  if (rc == RETRY_ENOMEM) {
    expt_output_error(err, rc, file->tmp, "out of memory");
  } else if (rc != 0 || e != 0) {
    expt_output_error(err, RETRY_EIO, file->tmp, "cannot write: %s", strerror(e ? e : EIO));
    rc = RETRY_EIO;
  }
  return rc;
}

int expt_output_write_dir(const expt_output *o, const char *dir, retry_error *err) {
  assert(o != NULL && dir != NULL);
  int rc = make_dirs(dir, err);
  if (rc != 0) return rc;
  out_file *files = calloc(4 + o->n_runs, sizeof *files);
  if (files == NULL) {
    expt_output_error(err, RETRY_ENOMEM, dir, "out of memory writing the files");
    return RETRY_ENOMEM;
  }
  for (size_t i = 0; i < 4 + o->n_runs; i++)
    files[i].slot = -1;
  /* When planning failed, every slot is walked for cleanup: they are zeroed or partly set. */
  long planned = plan_files(o, dir, files);
  size_t n = planned < 0 ? 4 + o->n_runs : (size_t)planned;
  if (planned < 0) {
    expt_output_error(err, RETRY_ENOMEM, dir, "out of memory");
    rc = RETRY_ENOMEM;
  }
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = write_temp(o, &files[i], err);
  /* Every file is complete before the first rename; a rename failure (rare: the name is a
   * directory, the disk went read-only) keeps the files already renamed and removes the rest. */
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (rename(files[i].tmp, files[i].path) != 0) {
      expt_output_error(err, RETRY_EIO, files[i].path, "cannot rename %s: %s", files[i].tmp,
                       strerror(errno));
      rc = RETRY_EIO;
    } else {
      files[i].made = false;
      expt_output_tmp_forget(files[i].slot);
      files[i].slot = -1;
    }
  }
  /* Whatever is still marked made was not renamed: all files after a write error, the
   * remaining ones after a rename error. unlink's result is ignored: the error that matters
   * was reported already. */
  for (size_t i = 0; i < n; i++) {
    if (files[i].made) unlink(files[i].tmp);
    expt_output_tmp_forget(files[i].slot);
    free(files[i].path);
    free(files[i].tmp);
  }
  free(files);
  return rc;
}

/* }================================================================== */
