/*
 * expt_explain.c: the library part of `retrysim explain` (cli/cmd_explain.c reads its command
 * line). Runs one run of a scenario with a trace sink installed in the world
 * (models/model_trace.c), keeps the engine's records of one logical call and of every call made
 * below its attempts, and prints them as a timeline, one block per call, nested under the
 * attempt that made it. Picking "the first call that stopped for R" needs the run's end, so that
 * selector runs the world twice with the same seed: the first run finds the call's id, the
 * second keeps its records (the world is deterministic).
 * Invariant: tracing only reads; the run explained is the run `retrysim run` makes.
 */
#include "expt/expt_explain.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_run.h"
#include "expt/expt_scenario.h"
#include "expt/expt_scenario_origin.h"
#include "models/model_world.h"
#include "retry/retry.h"
#include "sim/sim_event.h"

/* The most records kept (about 300 bytes each); a call tree larger than this (a fan-out
 * storm) is cut, and says so. */
#define EX_MAX_RECS 100000
/* Pushback values kept per record, and bytes kept of each (the rest is cut, marked "..."). */
#define EX_MAX_VALUES 2
#define EX_VALUE_BYTES 40

/* {==================================================================
 * The selector
 * =================================================================== */

typedef enum ex_by { EX_BY_NONE = 0, EX_BY_ID, EX_BY_STOPPED, EX_BY_AFTER } ex_by;

/* How o picks its call: by id, else by stop reason (with or without a start time), else by
 * start time alone. */
static ex_by by_of(const expt_explain_opts *o) {
  if (o->call_id != 0) return EX_BY_ID;
  if (o->stopped != RETRY_STOP_NONE) return EX_BY_STOPPED;
  return o->has_after ? EX_BY_AFTER : EX_BY_NONE;
}

static int oom(FILE *err) {
  fputs("retrysim: out of memory\n", err);
  return EXPT_EXIT_RUNTIME;
}

/* }================================================================== */

/* {==================================================================
 * What the trace sink keeps
 * =================================================================== */

/* One engine record, copied out of the callback (its borrowed parts die with it). */
typedef struct ex_rec {
  uint64_t call_id;
  retry_trace_event event;
  int64_t now_ns;
  int32_t attempt, status;
  retry_pushback_kind pushback;
  int64_t pushback_ns;
  size_t n_values;                            /* pushback values received */
  char values[EX_MAX_VALUES][EX_VALUE_BYTES]; /* the first EX_MAX_VALUES of them */
  bool has_retry_after;
  char retry_after[EX_VALUE_BYTES];
  int64_t backoff_ns, backoff_nominal_ns;
  retry_delay_source source;
  bool has_target;
  retry_target_stats before, after;
  retry_decision d;
  size_t next; /* the call's next record, EX_NONE after its last */
} ex_rec;

#define EX_NONE SIZE_MAX

/* One call of the tree, from its first record. */
typedef struct ex_call {
  uint64_t id, parent_id;
  int32_t parent_attempt, depth;
  bool top;
  const char *from, *to, *method; /* borrowed from the scenario's config */
  int64_t start_ns, deadline_ns;
  retry_policy_kind kind;
  int32_t max_attempts;
  retry_space space;
  size_t first_rec, last_rec;     /* its records, in order (linked by ex_rec.next) */
  size_t first_child, last_child; /* the calls made below its attempts, in start order */
  size_t next_sibling;            /* the next call below the same parent, EX_NONE if none */
} ex_call;

typedef struct ex_state {
  const expt_explain_opts *o;
  const expt_scenario *sc; /* where the rules' sources are looked up */
  size_t run;              /* the run explained, by its index */
  ex_by by;           /* how o picks its call */
  bool finding;       /* first run of --stopped: look for the id only */
  uint64_t want_id;   /* the call to keep (--call, or found by the first run) */
  uint64_t chosen;    /* the root of the tree kept, 0 until picked */
  uint64_t found;     /* --stopped: the first call that stopped with the reason */
  uint64_t max_id;    /* the largest call id seen */
  int64_t candidates; /* calls that could have been picked (on the edge asked for) */
  ex_call *calls;
  size_t n_calls, cap_calls;
  ex_rec *recs;
  size_t n_recs, cap_recs;
  bool truncated; /* more than EX_MAX_RECS records */
  bool oom;
} ex_state;

static bool is_on_edge(const ex_state *s, const model_trace_call *c) {
  if (s->o->edge_from == NULL) return c->top;
  return strcmp(c->from, s->o->edge_from) == 0 && strcmp(c->to, s->o->edge_to) == 0;
}

/* A call --stopped and --after may pick: on the edge asked for, started late enough. */
static bool is_candidate(const ex_state *s, const model_trace_call *c) {
  return is_on_edge(s, c) && (!s->o->has_after || c->start_ns >= s->o->after_ns);
}

static bool sink_select(void *ctx, const model_trace_call *c) {
  ex_state *s = ctx;
  if (c->id > s->max_id) s->max_id = c->id;
  bool cand = is_candidate(s, c);
  if (is_on_edge(s, c)) s->candidates++;
  if (s->finding) return cand && s->found == 0;
  if (s->chosen != 0) return false;
  bool pick;
  switch (s->by) {
    case EX_BY_AFTER: pick = cand; break;
    default: pick = c->id == s->want_id; break;
  }
  if (pick) s->chosen = c->id;
  return pick;
}

static void copy_value(char *dst, const char *src) {
  size_t n = strlen(src);
  if (n < EX_VALUE_BYTES) {
    memcpy(dst, src, n + 1);
  } else {
    memcpy(dst, src, EX_VALUE_BYTES - 4);
    memcpy(dst + EX_VALUE_BYTES - 4, "...", 4);
  }
}

/* The calls are kept in the order of their first record, their start, which is the order of
 * their ids: a binary search finds one. */
static ex_call *find_call(const ex_state *s, uint64_t id) {
  size_t lo = 0, hi = s->n_calls;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->calls[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < s->n_calls && s->calls[lo].id == id ? &s->calls[lo] : NULL;
}

static bool grow(void **arr, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return true;
  size_t nc = *cap ? *cap * 2 : 64;
  void *p = realloc(*arr, nc * size);
  if (p == NULL) return false;
  *arr = p;
  *cap = nc;
  return true;
}

static void sink_record(void *ctx, const model_trace_call *c, const retry_trace_rec *rec) {
  ex_state *s = ctx;
  if (s->finding) {
    if (s->found == 0 && is_candidate(s, c) && rec->decision != NULL &&
        rec->decision->action == RETRY_ACTION_DONE && rec->decision->reason == s->o->stopped)
      s->found = c->id;
    return;
  }
  if (s->oom) return;
  if (s->n_recs >= EX_MAX_RECS) {
    s->truncated = true;
    return;
  }
  ex_call *call = find_call(s, c->id);
  if (call == NULL) {
    if ((s->n_calls > 0 && s->calls[s->n_calls - 1].id > c->id) ||
        !grow((void **)&s->calls, &s->cap_calls, s->n_calls, sizeof *s->calls)) {
      s->oom = true; /* out of order cannot happen: ids grow with starts */
      return;
    }
    /* The parent is looked up before the new call joins the array it searches. */
    ex_call *parent = c->parent_id != 0 ? find_call(s, c->parent_id) : NULL;
    size_t ix = s->n_calls++;
    ex_call *e = &s->calls[ix];
    e->first_rec = e->last_rec = EX_NONE;
    e->first_child = e->last_child = e->next_sibling = EX_NONE;
    if (parent != NULL) {
      if (parent->last_child == EX_NONE)
        parent->first_child = ix;
      else
        s->calls[parent->last_child].next_sibling = ix;
      parent->last_child = ix;
    }
    e->id = c->id;
    e->parent_id = c->parent_id;
    e->parent_attempt = c->parent_attempt;
    e->depth = c->depth;
    e->top = c->top;
    e->from = c->from;
    e->to = c->to;
    e->method = c->method;
    e->start_ns = c->start_ns;
    e->deadline_ns = c->deadline_ns;
    e->kind = c->policy->kind;
    e->max_attempts = c->policy->max_attempts;
    e->space = c->policy->space;
    call = e;
  }
  if (!grow((void **)&s->recs, &s->cap_recs, s->n_recs, sizeof *s->recs)) {
    s->oom = true;
    return;
  }
  size_t rix = s->n_recs++;
  ex_rec *r = &s->recs[rix];
  memset(r, 0, sizeof *r);
  r->next = EX_NONE;
  if (call->last_rec == EX_NONE)
    call->first_rec = rix;
  else
    s->recs[call->last_rec].next = rix;
  call->last_rec = rix;
  r->call_id = c->id;
  r->event = rec->event;
  r->now_ns = rec->now_ns;
  r->attempt = rec->attempt;
  r->status = rec->status;
  r->pushback = rec->pushback;
  r->pushback_ns = rec->pushback_ns;
  r->n_values = rec->pushback_values != NULL ? rec->n_pushback_values : 0;
  for (size_t i = 0; i < r->n_values && i < EX_MAX_VALUES; i++)
    copy_value(r->values[i], rec->pushback_values[i] != NULL ? rec->pushback_values[i] : "");
  r->has_retry_after = rec->retry_after != NULL;
  if (r->has_retry_after) copy_value(r->retry_after, rec->retry_after);
  r->backoff_ns = rec->backoff_ns;
  r->backoff_nominal_ns = rec->backoff_nominal_ns;
  r->source = rec->delay_source;
  r->has_target = rec->has_target;
  r->before = rec->before;
  r->after = rec->after;
  r->d = *rec->decision;
}

/* }================================================================== */

/* {==================================================================
 * Running
 * =================================================================== */

/* What the run leaves for the header. */
typedef struct ex_run {
  const char *run_name;
  size_t run_index, n_runs;
  uint64_t seed;
  int64_t calls_started, attempts;
  const char *scenario_name;
} ex_run;

/* One run of cfg with the sink; fills the run's totals. Returns 0 or an exit status. */
static int run_world(const model_config *cfg, uint64_t seed, ex_state *st, ex_run *info,
                     FILE *err) {
  retry_error e;
  retry_error_clear(&e);
  sim_kernel *k = sim_kernel_create(0, NULL);
  if (k == NULL) return oom(err);
  model_world *w = model_world_create(cfg, k, seed, &e);
  int rc = w != NULL ? 0 : (e.code != RETRY_OK ? e.code : RETRY_ENOMEM);
  if (rc == 0) {
    model_trace_sink sink = {.select = sink_select, .record = sink_record, .ctx = st};
    model_world_set_trace(w, &sink);
    rc = model_world_run(w, NULL, NULL, &e);
  }
  if (rc == 0) {
    const model_results *res = model_world_results(w);
    info->calls_started = res->calls_started;
    info->attempts = res->attempts;
  }
  model_world_destroy(w);
  sim_kernel_destroy(k);
  if (rc != 0) {
    if (e.code == RETRY_OK) e.code = rc;
    expt_error_print(err, &e);
    return rc == RETRY_ENOMEM ? EXPT_EXIT_RUNTIME : EXPT_EXIT_USAGE;
  }
  if (st->oom) return oom(err);
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Words for people
 * =================================================================== */

/* A duration: "300 ms", "12.346 ms", "1.5 s" (at most three decimals, trailing zeros cut). */
static void fmt_dur(char *buf, size_t size, int64_t ns) {
  double v = ns >= 1000000000 ? (double)ns / 1e9 : (double)ns / 1e6;
  const char *unit = ns >= 1000000000 ? "s" : "ms";
  char num[48];
  snprintf(num, sizeof num, "%.3f", v);
  char *dot = strchr(num, '.');
  if (dot != NULL) {
    char *end = num + strlen(num);
    while (end > dot + 1 && end[-1] == '0')
      *--end = '\0';
    if (end == dot + 1) *dot = '\0';
  }
  snprintf(buf, size, "%s %s", num, unit);
}

/* A point in simulated time: "35.001234 s". */
static void fmt_time(char *buf, size_t size, int64_t ns) {
  if (ns == RETRY_NEVER)
    snprintf(buf, size, "never");
  else
    snprintf(buf, size, "%" PRId64 ".%06" PRId64 " s", ns / 1000000000, (ns % 1000000000) / 1000);
}

static void fmt_status(char *buf, size_t size, retry_space space, int32_t status) {
  if (space == RETRY_SPACE_GRPC) {
    const char *n = retry_grpc_code_name(status);
    if (n != NULL) {
      snprintf(buf, size, "%s", n);
      return;
    }
  }
  snprintf(buf, size, space == RETRY_SPACE_HTTP ? "HTTP %d" : "status %d", (int)status);
}

static const char *kind_name(retry_policy_kind k) {
  switch (k) {
    case RETRY_POLICY_NONE: return "none";
    case RETRY_POLICY_RETRY: return "retry";
    case RETRY_POLICY_HEDGE: return "hedge";
  }
  return "unknown";
}

/* What the printer knows of one call's past while walking its records. */
typedef struct ex_walk {
  int32_t sends;                                           /* attempts sent so far */
  retry_delay_source last_delay;                           /* where the last delay came from */
  int64_t attempt_deadline[RETRY_MAX_HEDGED_ATTEMPTS + 1]; /* per attempt, as sent */
  unsigned cited;                                          /* rules named so far (EX_RULE_*) */
} ex_walk;

/* Whether an outcome is the caller's own attempt timeout (no reply, the deadline passed). */
static bool is_timeout(const ex_walk *wk, const ex_call *c, const ex_rec *r) {
  if (r->event != RETRY_TRACE_OUTCOME || r->attempt < 1 || r->attempt > RETRY_MAX_HEDGED_ATTEMPTS)
    return false;
  int32_t dl = c->space == RETRY_SPACE_GRPC ? RETRY_GRPC_DEADLINE_EXCEEDED : 504;
  return r->status == dl && wk->attempt_deadline[r->attempt] == r->now_ns;
}

/* Why the engine decided as it did, in a sentence. */
static void fmt_reason(char *buf, size_t size, const ex_call *c, const ex_rec *r,
                       const ex_walk *wk) {
  const retry_decision *d = &r->d;
  char st[40], t[40], t2[40];
  fmt_status(st, sizeof st, c->space, r->status);
  switch (d->action) {
    case RETRY_ACTION_SEND:
      if (r->event == RETRY_TRACE_START)
        snprintf(buf, size, "the original attempt");
      else if (c->kind == RETRY_POLICY_HEDGE)
        snprintf(buf, size, "a hedge%s",
                 r->event == RETRY_TRACE_OUTCOME ? ": the failed attempt's status is non-fatal"
                                                 : ": the hedging delay is over");
      else if (wk->last_delay == RETRY_DELAY_PUSHBACK)
        snprintf(buf, size, "the pushback delay is over");
      else if (wk->last_delay == RETRY_DELAY_RETRY_AFTER)
        snprintf(buf, size, "the Retry-After delay is over");
      else
        snprintf(buf, size, "the backoff is over");
      return;
    case RETRY_ACTION_WAIT:
      if (r->event == RETRY_TRACE_OUTCOME && r->backoff_ns >= 0 && c->kind == RETRY_POLICY_RETRY)
        snprintf(buf, size, "%s is retryable; %d of %d attempts used", st, (int)wk->sends,
                 (int)c->max_attempts);
      else if (r->event == RETRY_TRACE_HEADERS && d->cancel_others)
        snprintf(buf, size, "headers commit the call to attempt %d", (int)d->attempt);
      else if (r->event == RETRY_TRACE_HEADERS)
        snprintf(buf, size, "headers arrived");
      else if (d->wake_ns == RETRY_NEVER)
        snprintf(buf, size, "attempts are in flight");
      else
        snprintf(buf, size, "the next attempt is not due yet");
      return;
    case RETRY_ACTION_DONE: break;
  }
  switch (d->reason) {
    case RETRY_STOP_OK: snprintf(buf, size, "the attempt succeeded"); return;
    case RETRY_STOP_NON_RETRYABLE_STATUS:
      snprintf(buf, size, "%s is not a %s status of the policy", st,
               c->kind == RETRY_POLICY_HEDGE ? "non-fatal" : "retryable");
      return;
    case RETRY_STOP_METHOD_NOT_IDEMPOTENT:
      snprintf(buf, size, "the method is not in the policy's idempotent allowlist");
      return;
    case RETRY_STOP_MAX_ATTEMPTS:
      if (c->kind == RETRY_POLICY_NONE)
        snprintf(buf, size, "no retry policy: one attempt");
      else
        snprintf(buf, size, "all %d attempts are used", (int)c->max_attempts);
      return;
    case RETRY_STOP_NO_RETRY_POLICY: snprintf(buf, size, "no retry policy: one attempt"); return;
    case RETRY_STOP_DEADLINE:
      fmt_time(t2, sizeof t2, c->deadline_ns);
      if (r->backoff_ns >= 0) {
        fmt_time(t, sizeof t, r->now_ns + r->backoff_ns);
        snprintf(buf, size, "the next attempt, due at %s, would start after the deadline (%s)", t,
                 t2);
      } else {
        snprintf(buf, size, "the deadline (%s) has come", t2);
      }
      return;
    case RETRY_STOP_PUSHBACK_STOP:
      snprintf(buf, size, "the server's pushback says not to retry");
      return;
    case RETRY_STOP_THROTTLED:
      if (r->event == RETRY_TRACE_OUTCOME && r->has_target && r->after.throttle_milli_tokens >= 0)
        snprintf(buf, size, "retry throttling: tokens are at or below half of maxTokens");
      else
        snprintf(buf, size, "throttled: the attempt was refused before it was sent");
      return;
    case RETRY_STOP_BUDGET_EXHAUSTED:
      snprintf(buf, size, "the retry budget has no room for another attempt");
      return;
    case RETRY_STOP_BREAKER_OPEN:
      snprintf(buf, size, "the circuit breaker refused the attempt");
      return;
    case RETRY_STOP_COMMITTED:
      snprintf(buf, size, "the call is committed (headers received or retry buffer exceeded)");
      return;
    case RETRY_STOP_STREAMING: snprintf(buf, size, "this stream may not be retried"); return;
    case RETRY_STOP_CANCELLED:
      snprintf(buf, size, "the caller cancelled the call (its fan-out had what it waited for)");
      return;
    case RETRY_STOP_NONE:
    case RETRY_STOP_N: break;
  }
  snprintf(buf, size, "%s", retry_stop_name(d->reason));
}

/* }================================================================== */

/* {==================================================================
 * Where each rule was written (a policy read from Envoy, Istio, ... : expt_scenario_origin.h)
 * =================================================================== */

/* The fields of the service config a decision can apply, as paths in one method's config or,
 * from "$.", in the whole document. */
static const char *const ex_rule_field[] = {
    "timeout",
    "retrysim.perAttemptTimeout",
    "retryPolicy.retryableStatusCodes",
    "retryPolicy.maxAttempts",
    "retryPolicy.initialBackoff",
    "retryPolicy.maxBackoff",
    "retryPolicy.backoffMultiplier",
    "retrysim.jitter",
    "retrysim.honorRetryAfter",
    "hedgingPolicy.maxAttempts",
    "hedgingPolicy.hedgingDelay",
    "hedgingPolicy.nonFatalStatusCodes",
    "$.retrysim.budget",
    "$.retryThrottling",
    "$.retrysim.retryMode",
    "$.retrysim.circuitBreaker",
};
enum {
  EX_RULE_TIMEOUT = 1u << 0,
  EX_RULE_PER_TRY = 1u << 1,
  EX_RULE_CODES = 1u << 2,
  EX_RULE_ATTEMPTS = 1u << 3,
  EX_RULE_BACKOFF = (1u << 4) | (1u << 5) | (1u << 6) | (1u << 7),
  EX_RULE_RETRY_AFTER = 1u << 8,
  EX_RULE_HEDGE_ATTEMPTS = 1u << 9,
  EX_RULE_HEDGE_DELAY = 1u << 10,
  EX_RULE_NON_FATAL = 1u << 11,
  EX_RULE_BUDGET = 1u << 12,
  EX_RULE_THROTTLING = 1u << 13,
  EX_RULE_MODE = 1u << 14,
  EX_RULE_BREAKER = 1u << 15,
};

/* The rules record r applied: what made it send, wait or stop. */
static unsigned rules_of(const ex_call *c, const ex_rec *r, const ex_walk *wk) {
  const retry_decision *d = &r->d;
  bool hedge = c->kind == RETRY_POLICY_HEDGE;
  unsigned m = 0;
  if (is_timeout(wk, c, r)) m |= EX_RULE_PER_TRY;
  /* A budget or a token bucket is a rule of the decisions that spend from it: a retry. */
  unsigned spent = 0;
  if (r->has_target && r->before.budget_available >= 0) spent |= EX_RULE_BUDGET;
  if (r->has_target && r->before.throttle_milli_tokens >= 0) spent |= EX_RULE_THROTTLING;
  switch (d->action) {
    case RETRY_ACTION_SEND:
      if (r->event == RETRY_TRACE_START && c->deadline_ns != RETRY_NEVER) m |= EX_RULE_TIMEOUT;
      if (d->attempt_deadline_ns != RETRY_NEVER && d->attempt_deadline_ns != c->deadline_ns)
        m |= EX_RULE_PER_TRY;
      if (hedge && r->event != RETRY_TRACE_START) m |= EX_RULE_HEDGE_ATTEMPTS;
      if (hedge && d->wake_ns != RETRY_NEVER) m |= EX_RULE_HEDGE_DELAY;
      return m;
    case RETRY_ACTION_WAIT:
      if (r->event == RETRY_TRACE_OUTCOME && r->backoff_ns >= 0 && !hedge) {
        m |= EX_RULE_CODES | EX_RULE_ATTEMPTS | spent;
        if (r->source == RETRY_DELAY_BACKOFF) m |= EX_RULE_BACKOFF;
        if (r->source == RETRY_DELAY_RETRY_AFTER) m |= EX_RULE_RETRY_AFTER;
      }
      return m;
    case RETRY_ACTION_DONE: break;
  }
  switch (d->reason) {
    case RETRY_STOP_NON_RETRYABLE_STATUS: return m | (hedge ? EX_RULE_NON_FATAL : EX_RULE_CODES);
    case RETRY_STOP_MAX_ATTEMPTS: return m | (hedge ? EX_RULE_HEDGE_ATTEMPTS : EX_RULE_ATTEMPTS);
    case RETRY_STOP_DEADLINE: return m | EX_RULE_TIMEOUT;
    case RETRY_STOP_THROTTLED: return m | EX_RULE_THROTTLING | EX_RULE_BUDGET | EX_RULE_MODE;
    case RETRY_STOP_BUDGET_EXHAUSTED: return m | EX_RULE_BUDGET;
    case RETRY_STOP_BREAKER_OPEN: return m | EX_RULE_BREAKER;
    default: return m;
  }
}

/* Where rule i of call c was written, false when its policy is not a foreign file's. */
static bool rule_source(const ex_state *s, const ex_call *c, size_t i, expt_rule_source *src) {
  return expt_scenario_rule_source(s->sc, s->run, c->top, c->from, c->to, c->method,
                                   ex_rule_field[i], src);
}

/* "orders.yaml:16:24, envoy $.route...num_retries", or the default's words, into buf. */
static void fmt_source(char *buf, size_t size, const expt_rule_source *src) {
  char at[300];
  if (src->line > 0)
    snprintf(at, sizeof at, "%s:%d:%d", src->file, src->line, src->column);
  else
    snprintf(at, sizeof at, "%s", src->file);
  if (src->from != NULL)
    snprintf(buf, size, "%s, %s %s", at, src->format, src->from);
  else
    snprintf(buf, size, "%s, %s default%s%s", at, src->format, src->note ? ": " : "",
             src->note ? src->note : "");
}

/* One line per rule of mask under its decision: each rule once per call, except that the
 * decision that ends the call names every rule it applied. */
static void print_rules(FILE *f, const ex_state *s, const ex_call *c, const ex_rec *r,
                        unsigned mask, ex_walk *wk, int indent) {
  if (r->d.action != RETRY_ACTION_DONE) mask &= ~wk->cited;
  for (size_t i = 0; i < sizeof ex_rule_field / sizeof ex_rule_field[0]; i++) {
    expt_rule_source src;
    if (!(mask & (1u << i)) || !rule_source(s, c, i, &src)) continue;
    wk->cited |= 1u << i;
    char from[600];
    fmt_source(from, sizeof from, &src);
    fprintf(f, "%*s  %12s     rule %s: %s%s\n", indent, "", "", src.field,
            src.overridden ? "overridden (--set or a variant's set); the file's value: " : "",
            from);
  }
}

/* The rules of mask as JSON objects, NULL when none has a source. */
static json_t *rules_json(const ex_state *s, const ex_call *c, unsigned mask) {
  json_t *a = NULL;
  for (size_t i = 0; i < sizeof ex_rule_field / sizeof ex_rule_field[0]; i++) {
    expt_rule_source src;
    if (!(mask & (1u << i)) || !rule_source(s, c, i, &src)) continue;
    if (a == NULL) a = json_array();
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:i, s:s?, s:s?, s:b}", "field", src.field, "file",
                          src.file, "format", src.format, "line", src.line, "column",
                          src.column, "from", src.from, "note", src.note, "overridden",
                          src.overridden);
    json_array_append_new(a, o);
  }
  return a;
}

/* }================================================================== */

/* {==================================================================
 * Text
 * =================================================================== */

static void fmt_tokens(char *buf, size_t size, int64_t milli) {
  snprintf(buf, size, "%" PRId64 ".%03" PRId64, milli / 1000, milli % 1000);
}

/* The shared state as the event found and left it, only the parts the target has. */
static void print_state(FILE *f, const ex_rec *r) {
  if (!r->has_target) return;
  const retry_target_stats *b = &r->before, *a = &r->after;
  char x[32], y[32];
  if (b->throttle_milli_tokens >= 0) {
    fmt_tokens(x, sizeof x, b->throttle_milli_tokens);
    fmt_tokens(y, sizeof y, a->throttle_milli_tokens);
    fprintf(f, "  tokens %s -> %s", x, y);
  }
  if (b->budget_available >= 0)
    fprintf(f, "  budget %" PRId64 " -> %" PRId64, b->budget_available, a->budget_available);
  if (b->adaptive_reject_p >= 0)
    fprintf(f, "  reject p %.3f -> %.3f", b->adaptive_reject_p, a->adaptive_reject_p);
  if (b->breaker != RETRY_BREAKER_CLOSED || a->breaker != RETRY_BREAKER_CLOSED)
    fprintf(f, "  breaker %s -> %s", retry_breaker_state_name(b->breaker),
            retry_breaker_state_name(a->breaker));
}

static void print_decision(FILE *f, const ex_call *c, const ex_rec *r) {
  const retry_decision *d = &r->d;
  char t[40], st[40];
  switch (d->action) {
    case RETRY_ACTION_SEND:
      fprintf(f, "send attempt %d", (int)d->attempt);
      if (d->attempt_deadline_ns != RETRY_NEVER) {
        fmt_time(t, sizeof t, d->attempt_deadline_ns);
        fprintf(f, " (gives up on it at %s)", t);
      }
      if (d->wake_ns != RETRY_NEVER) {
        fmt_time(t, sizeof t, d->wake_ns);
        fprintf(f, ", next hedge at %s", t);
      }
      break;
    case RETRY_ACTION_WAIT:
      fprintf(f, "wait");
      if (d->wake_ns != RETRY_NEVER) {
        fmt_time(t, sizeof t, d->wake_ns);
        fprintf(f, " until %s", t);
      }
      if (d->cancel_others) fprintf(f, ", cancel the other attempts");
      break;
    case RETRY_ACTION_DONE:
      fmt_status(st, sizeof st, c->space, d->status);
      fprintf(f, "done: %s, stop reason %s", st, retry_stop_name(d->reason));
      if (d->done_ns > r->now_ns) {
        fmt_time(t, sizeof t, d->done_ns);
        fprintf(f, " (the caller hears it at %s)", t);
      }
      if (d->cancel_others) fprintf(f, ", cancel the attempts in flight");
      break;
  }
}

static void print_pushback(FILE *f, const ex_call *c, const ex_rec *r) {
  char x[40];
  if (r->n_values > 0) {
    fprintf(f, "  pushback");
    for (size_t i = 0; i < r->n_values && i < EX_MAX_VALUES; i++)
      fprintf(f, "%s\"%s\"", i ? ", " : " ", r->values[i]);
    if (r->n_values > EX_MAX_VALUES) fprintf(f, ", ...");
    if (r->pushback == RETRY_PUSHBACK_DELAY) {
      fmt_dur(x, sizeof x, r->pushback_ns);
      fprintf(f, " = retry in %s", x);
    } else if (r->pushback == RETRY_PUSHBACK_STOP) {
      fprintf(f, " = do not retry");
    } else if (r->pushback == RETRY_PUSHBACK_INVALID) {
      fprintf(f, " = invalid: do not retry");
    } else if (r->pushback == RETRY_PUSHBACK_REPEATED) {
      fprintf(f, " = repeated: do not retry");
    } else {
      /* gRPC pushback is not read on an HTTP layer, nor for an attempt no longer in flight. */
      fprintf(f, c->space == RETRY_SPACE_HTTP ? " = not read (HTTP layer)" : " = not read");
    }
  }
  if (r->has_retry_after) fprintf(f, "  Retry-After \"%s\"", r->retry_after);
}

static void print_delay(FILE *f, const ex_rec *r) {
  if (r->backoff_ns < 0) return;
  char x[40], y[40];
  fmt_dur(x, sizeof x, r->backoff_ns);
  if (r->source == RETRY_DELAY_BACKOFF && r->backoff_nominal_ns >= 0) {
    fmt_dur(y, sizeof y, r->backoff_nominal_ns);
    fprintf(f, "  backoff drawn %s (nominal %s)", x, y);
  } else {
    fprintf(f, "  delay %s from %s", x,
            r->source == RETRY_DELAY_PUSHBACK ? "pushback" : "Retry-After");
  }
}

static void print_call(FILE *f, const ex_state *s, const ex_call *c, int indent);

/* The calls made while serving attempt `attempt` of call c, each nested one layer down. */
static void print_children(FILE *f, const ex_state *s, const ex_call *c, int32_t attempt,
                           int indent) {
  for (size_t i = c->first_child; i != EX_NONE; i = s->calls[i].next_sibling) {
    const ex_call *ch = &s->calls[i];
    if (ch->parent_attempt == attempt) print_call(f, s, ch, indent);
  }
}

static void print_call(FILE *f, const ex_state *s, const ex_call *c, int indent) {
  char t[40], t2[40], st[40], why[200];
  fprintf(f, "%*scall %" PRIu64 "  %s -> %s  %s", indent, "", c->id, c->from, c->to, c->method);
  if (c->parent_id != 0)
    fprintf(f, "  (made while serving attempt %d of call %" PRIu64 ")", (int)c->parent_attempt,
            c->parent_id);
  fputc('\n', f);
  fmt_time(t, sizeof t, c->start_ns);
  if (c->depth >= 0)
    fprintf(f, "%*s  layer %d, ", indent, "", (int)c->depth);
  else
    fprintf(f, "%*s  layer not known (its caller is not traced), ", indent, "");
  fprintf(f, "policy %s, up to %d attempt%s, started %s", kind_name(c->kind), (int)c->max_attempts,
          c->max_attempts == 1 ? "" : "s", t);
  if (c->deadline_ns != RETRY_NEVER) {
    fmt_time(t2, sizeof t2, c->deadline_ns);
    fprintf(f, ", deadline %s", t2);
  } else {
    fprintf(f, ", no deadline");
  }
  fputc('\n', f);
  ex_walk wk;
  memset(&wk, 0, sizeof wk);
  const ex_rec *done = NULL;
  for (size_t i = c->first_rec; i != EX_NONE; i = s->recs[i].next) {
    const ex_rec *r = &s->recs[i];
    fmt_time(t, sizeof t, r->now_ns);
    fprintf(f, "%*s  %12s  ", indent, "", t);
    if (r->event == RETRY_TRACE_OUTCOME) {
      fmt_status(st, sizeof st, c->space, r->status);
      fprintf(f, "attempt %d: %s%s", (int)r->attempt, st,
              is_timeout(&wk, c, r) ? " (its attempt deadline passed)" : "");
    } else if (r->event == RETRY_TRACE_HEADERS) {
      fprintf(f, "attempt %d: headers", (int)r->attempt);
    } else {
      fprintf(f, "%s",
              r->event == RETRY_TRACE_START    ? "start"
              : r->event == RETRY_TRACE_CANCEL ? "cancelled by the caller"
                                               : "timer");
    }
    print_pushback(f, c, r);
    print_delay(f, r);
    print_state(f, r);
    if (r->d.action == RETRY_ACTION_SEND) {
      wk.sends = r->d.attempt;
      if (r->d.attempt >= 1 && r->d.attempt <= RETRY_MAX_HEDGED_ATTEMPTS)
        wk.attempt_deadline[r->d.attempt] = r->d.attempt_deadline_ns;
    }
    fmt_reason(why, sizeof why, c, r, &wk);
    unsigned rules = rules_of(c, r, &wk);
    if (r->backoff_ns >= 0) wk.last_delay = r->source;
    fputs("\n", f);
    fprintf(f, "%*s  %12s  => ", indent, "", "");
    print_decision(f, c, r);
    fprintf(f, ": %s\n", why);
    print_rules(f, s, c, r, rules, &wk, indent);
    if (r->d.action == RETRY_ACTION_DONE && done == NULL) done = r;
    if (r->d.action == RETRY_ACTION_SEND) print_children(f, s, c, r->d.attempt, indent + 4);
  }
  if (done != NULL) {
    fmt_status(st, sizeof st, c->space, done->d.status);
    fmt_time(t, sizeof t, done->d.done_ns);
    fmt_dur(t2, sizeof t2, done->d.done_ns - c->start_ns);
    fprintf(f, "%*s  ended %s after %s: %s, stop reason %s, %d attempt%s\n", indent, "", t, t2, st,
            retry_stop_name(done->d.reason), (int)wk.sends, wk.sends == 1 ? "" : "s");
  } else {
    fprintf(f, "%*s  not finished when the run ended\n", indent, "");
  }
}

static void selector_words(char *buf, size_t size, const expt_explain_opts *o, uint64_t root) {
  const char *where = o->edge != NULL ? o->edge : "a client's edge";
  switch (by_of(o)) {
    case EX_BY_ID: snprintf(buf, size, "call %" PRIu64 " (--call)", o->call_id); break;
    case EX_BY_STOPPED:
      if (o->has_after)
        snprintf(buf, size,
                 "call %" PRIu64 ", the first call on %s started at or after %s to stop with %s",
                 root, where, o->after, retry_stop_name(o->stopped));
      else
        snprintf(buf, size, "call %" PRIu64 ", the first call on %s to stop with %s", root, where,
                 retry_stop_name(o->stopped));
      break;
    case EX_BY_AFTER:
      snprintf(buf, size, "call %" PRIu64 ", the first call on %s started at or after %s", root,
               where, o->after);
      break;
    case EX_BY_NONE: buf[0] = '\0'; break;
  }
}

static void print_text(FILE *f, const expt_explain_opts *o, const ex_state *s, const ex_run *run) {
  char sel[200];
  selector_words(sel, sizeof sel, o, s->chosen);
  fprintf(f, "retrysim explain: %s, run %s (%zu of %zu), seed %" PRIu64 "\n", run->scenario_name,
          run->run_name, run->run_index + 1, run->n_runs, run->seed);
  fprintf(f, "the run: %" PRId64 " call%s started by clients, %" PRId64 " attempt%s\n",
          run->calls_started, run->calls_started == 1 ? "" : "s", run->attempts,
          run->attempts == 1 ? "" : "s");
  fprintf(f, "picked: %s\n", sel);
  fprintf(f, "%zu call%s in its tree, %zu decision%s\n\n", s->n_calls, s->n_calls == 1 ? "" : "s",
          s->n_recs, s->n_recs == 1 ? "" : "s");
  const ex_call *root = find_call(s, s->chosen);
  if (root != NULL) print_call(f, s, root, 0);
  if (s->truncated)
    fprintf(f, "\n(cut after %d decisions: the tree is larger than explain keeps)\n", EX_MAX_RECS);
}

/* }================================================================== */

/* {==================================================================
 * JSON
 * =================================================================== */

static json_t *stats_json(const retry_target_stats *st) {
  json_t *o = json_object();
  if (st->throttle_milli_tokens >= 0)
    json_object_set_new(o, "throttle_milli_tokens", json_integer(st->throttle_milli_tokens));
  if (st->budget_available >= 0)
    json_object_set_new(o, "budget_available", json_integer(st->budget_available));
  if (st->adaptive_reject_p >= 0)
    json_object_set_new(o, "adaptive_reject_p", json_real(st->adaptive_reject_p));
  json_object_set_new(o, "breaker", json_string(retry_breaker_state_name(st->breaker)));
  json_object_set_new(o, "in_flight", json_integer(st->in_flight));
  return o;
}

static json_t *time_json(int64_t ns) { return ns == RETRY_NEVER ? json_null() : json_integer(ns); }

static json_t *status_json(const ex_call *c, int32_t status) {
  char st[40];
  fmt_status(st, sizeof st, c->space, status);
  json_t *o = json_object();
  json_object_set_new(o, "code", json_integer(status));
  json_object_set_new(o, "name", json_string(st));
  return o;
}

static json_t *rec_json(const ex_state *s, const ex_call *c, const ex_rec *r, ex_walk *wk) {
  char why[200];
  json_t *e = json_object();
  json_object_set_new(e, "t_ns", json_integer(r->now_ns));
  json_object_set_new(e, "event", json_string(retry_trace_event_name(r->event)));
  if (r->attempt > 0) json_object_set_new(e, "attempt", json_integer(r->attempt));
  if (r->status >= 0) {
    json_object_set_new(e, "status", status_json(c, r->status));
    json_object_set_new(e, "attempt_timed_out", json_boolean(is_timeout(wk, c, r)));
  }
  if (r->n_values > 0 || r->pushback != RETRY_PUSHBACK_NONE) {
    json_t *p = json_object(), *raw = json_array();
    for (size_t i = 0; i < r->n_values && i < EX_MAX_VALUES; i++)
      json_array_append_new(raw, json_string(r->values[i]));
    json_object_set_new(p, "raw", raw);
    json_object_set_new(p, "parsed", json_string(retry_pushback_kind_name(r->pushback)));
    if (r->pushback == RETRY_PUSHBACK_DELAY)
      json_object_set_new(p, "delay_ns", json_integer(r->pushback_ns));
    json_object_set_new(e, "pushback", p);
  }
  if (r->has_retry_after) json_object_set_new(e, "retry_after_raw", json_string(r->retry_after));
  if (r->backoff_ns >= 0) {
    json_t *d = json_object();
    json_object_set_new(d, "ns", json_integer(r->backoff_ns));
    json_object_set_new(d, "source", json_string(retry_delay_source_name(r->source)));
    if (r->backoff_nominal_ns >= 0)
      json_object_set_new(d, "nominal_ns", json_integer(r->backoff_nominal_ns));
    json_object_set_new(e, "delay", d);
  }
  if (r->has_target) {
    json_object_set_new(e, "before", stats_json(&r->before));
    json_object_set_new(e, "after", stats_json(&r->after));
  }
  if (r->d.action == RETRY_ACTION_SEND) {
    wk->sends = r->d.attempt;
    if (r->d.attempt >= 1 && r->d.attempt <= RETRY_MAX_HEDGED_ATTEMPTS)
      wk->attempt_deadline[r->d.attempt] = r->d.attempt_deadline_ns;
  }
  json_t *d = json_object();
  json_object_set_new(d, "action", json_string(retry_action_name(r->d.action)));
  switch (r->d.action) {
    case RETRY_ACTION_SEND:
      json_object_set_new(d, "attempt", json_integer(r->d.attempt));
      json_object_set_new(d, "attempt_deadline_ns", time_json(r->d.attempt_deadline_ns));
      break;
    case RETRY_ACTION_WAIT: break;
    case RETRY_ACTION_DONE:
      json_object_set_new(d, "status", status_json(c, r->d.status));
      json_object_set_new(d, "stop_reason", json_string(retry_stop_name(r->d.reason)));
      json_object_set_new(d, "done_ns", json_integer(r->d.done_ns));
      break;
  }
  if (r->d.action != RETRY_ACTION_DONE) json_object_set_new(d, "wake_ns", time_json(r->d.wake_ns));
  json_object_set_new(d, "cancel_others", json_boolean(r->d.cancel_others));
  json_object_set_new(e, "decision", d);
  fmt_reason(why, sizeof why, c, r, wk);
  json_t *rules = rules_json(s, c, rules_of(c, r, wk));
  if (r->backoff_ns >= 0) wk->last_delay = r->source;
  json_object_set_new(e, "reason", json_string(why));
  if (rules != NULL) json_object_set_new(e, "rules", rules);
  return e;
}

static json_t *call_json(const ex_state *s, const ex_call *c) {
  json_t *o = json_object();
  json_object_set_new(o, "id", json_integer((json_int_t)c->id));
  json_object_set_new(o, "from", json_string(c->from));
  json_object_set_new(o, "to", json_string(c->to));
  json_object_set_new(o, "method", json_string(c->method));
  json_object_set_new(o, "layer", c->depth >= 0 ? json_integer(c->depth) : json_null());
  json_object_set_new(o, "parent_call",
                      c->parent_id != 0 ? json_integer((json_int_t)c->parent_id) : json_null());
  json_object_set_new(o, "parent_attempt",
                      c->parent_id != 0 ? json_integer(c->parent_attempt) : json_null());
  json_object_set_new(o, "start_ns", json_integer(c->start_ns));
  json_object_set_new(o, "deadline_ns", time_json(c->deadline_ns));
  json_t *p = json_object();
  json_object_set_new(p, "kind", json_string(kind_name(c->kind)));
  json_object_set_new(p, "max_attempts", json_integer(c->max_attempts));
  json_object_set_new(o, "policy", p);
  json_t *events = json_array();
  json_t *end = json_null();
  ex_walk wk;
  memset(&wk, 0, sizeof wk);
  for (size_t i = c->first_rec; i != EX_NONE; i = s->recs[i].next) {
    const ex_rec *r = &s->recs[i];
    json_array_append_new(events, rec_json(s, c, r, &wk));
    if (r->d.action == RETRY_ACTION_DONE && json_is_null(end)) {
      end = json_object();
      json_object_set_new(end, "done_ns", json_integer(r->d.done_ns));
      json_object_set_new(end, "status", status_json(c, r->d.status));
      json_object_set_new(end, "stop_reason", json_string(retry_stop_name(r->d.reason)));
    }
  }
  if (json_is_object(end)) json_object_set_new(end, "attempts", json_integer(wk.sends));
  json_object_set_new(o, "result", end);
  json_object_set_new(o, "events", events);
  json_t *calls = json_array();
  for (size_t i = c->first_child; i != EX_NONE; i = s->calls[i].next_sibling)
    json_array_append_new(calls, call_json(s, &s->calls[i]));
  json_object_set_new(o, "calls", calls);
  return o;
}

static int print_json(FILE *f, const expt_explain_opts *o, const ex_state *s, const ex_run *run) {
  json_t *doc = json_object();
  json_object_set_new(doc, "scenario", json_string(run->scenario_name));
  json_object_set_new(doc, "run", json_string(run->run_name));
  json_object_set_new(doc, "seed", json_integer((json_int_t)run->seed));
  json_t *sel = json_object();
  static const char *const by[] = {"none", "call", "stopped", "after"};
  json_object_set_new(sel, "by", json_string(by[by_of(o)]));
  if (by_of(o) == EX_BY_ID) json_object_set_new(sel, "call", json_integer((json_int_t)o->call_id));
  if (by_of(o) == EX_BY_STOPPED)
    json_object_set_new(sel, "stop_reason", json_string(retry_stop_name(o->stopped)));
  if (o->has_after) json_object_set_new(sel, "after_ns", json_integer(o->after_ns));
  json_object_set_new(sel, "edge", o->edge != NULL ? json_string(o->edge) : json_null());
  json_object_set_new(doc, "selector", sel);
  json_t *totals = json_object();
  json_object_set_new(totals, "calls_started", json_integer(run->calls_started));
  json_object_set_new(totals, "attempts", json_integer(run->attempts));
  json_object_set_new(doc, "totals", totals);
  json_object_set_new(doc, "calls_in_tree", json_integer((json_int_t)s->n_calls));
  json_object_set_new(doc, "truncated", json_boolean(s->truncated));
  const ex_call *root = find_call(s, s->chosen);
  json_object_set_new(doc, "call", root != NULL ? call_json(s, root) : json_null());
  char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(doc);
  if (text == NULL) return -1;
  fputs(text, f);
  fputc('\n', f);
  free(text);
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * The command
 * =================================================================== */

/* Says why nothing matched; returns EXPT_EXIT_USAGE. */
static int no_match(FILE *err, const expt_explain_opts *o, const ex_state *s, const ex_run *run) {
  const char *where = o->edge != NULL ? o->edge : "a client's edge";
  if (o->edge != NULL && s->candidates == 0) {
    fprintf(err, "retrysim: explain: no call ran on edge '%s' in run %s\n", o->edge, run->run_name);
  } else if (by_of(o) == EX_BY_ID) {
    fprintf(err,
            "retrysim: explain: no call %" PRIu64 " in run %s: its calls are 1 .. %" PRIu64 "\n",
            o->call_id, run->run_name, s->max_id);
  } else if (by_of(o) == EX_BY_STOPPED) {
    fprintf(err,
            "retrysim: explain: no call on %s%s%s stopped with %s in run %s (seed %" PRIu64 ")\n",
            where, o->has_after ? " started at or after " : "", o->has_after ? o->after : "",
            retry_stop_name(o->stopped), run->run_name, run->seed);
  } else {
    fprintf(err, "retrysim: explain: no call on %s started at or after %s in run %s\n", where,
            o->after, run->run_name);
  }
  return EXPT_EXIT_USAGE;
}

static int explain(const expt_explain_opts *o, FILE *out, FILE *err) {
  retry_error e;
  retry_error_clear(&e);
  expt_scenario *sc = expt_scenario_load(o->scenario, o->sets, o->n_sets, &e);
  if (sc != NULL && expt_run_validate(sc, o->scenario, &e) != 0) {
    expt_scenario_destroy(sc);
    sc = NULL;
  }
  if (sc == NULL) {
    expt_error_print(err, &e);
    return expt_run_exit_status(e.code);
  }
  ex_run run = {.n_runs = expt_scenario_n_runs(sc), .scenario_name = expt_scenario_name(sc)};
  int status = 0;
  if (o->variant != NULL) {
    run.run_index = run.n_runs;
    for (size_t i = 0; i < run.n_runs; i++)
      if (strcmp(expt_scenario_run_name(sc, i), o->variant) == 0) run.run_index = i;
    if (run.run_index == run.n_runs) {
      fprintf(err, "retrysim: explain: %s has no variant '%s'; its runs:", o->scenario, o->variant);
      for (size_t i = 0; i < run.n_runs; i++)
        fprintf(err, "%s%s", i ? ", " : " ", expt_scenario_run_name(sc, i));
      fputc('\n', err);
      status = EXPT_EXIT_USAGE;
    }
  }
  ex_state st;
  memset(&st, 0, sizeof st);
  st.o = o;
  st.sc = sc;
  st.by = by_of(o);
  st.want_id = o->call_id;
  if (status == 0) {
    const model_config *cfg = expt_scenario_config(sc, run.run_index);
    run.run_name = expt_scenario_run_name(sc, run.run_index);
    st.run = run.run_index;
    run.seed = o->has_seed ? o->seed : cfg->seed;
    if (by_of(o) == EX_BY_STOPPED) {
      st.finding = true;
      status = run_world(cfg, run.seed, &st, &run, err);
      st.finding = false;
      st.want_id = st.found;
    }
    if (status == 0 && (by_of(o) != EX_BY_STOPPED || st.found != 0))
      status = run_world(cfg, run.seed, &st, &run, err);
    if (status == 0 && st.chosen == 0) status = no_match(err, o, &st, &run);
    if (status == 0) {
      if (o->json) {
        if (print_json(out, o, &st, &run) != 0) status = oom(err);
      } else {
        print_text(out, o, &st, &run);
      }
    }
  }
  free(st.calls);
  free(st.recs);
  expt_scenario_destroy(sc);
  return status;
}

int expt_explain_run(const expt_explain_opts *o, FILE *out, FILE *err) {
  /* The command refuses a line without a selector; a caller of the library may not. */
  if (by_of(o) == EX_BY_NONE) {
    fputs("retrysim: explain: which call? give --call ID, --stopped REASON or --after TIME\n", err);
    return EXPT_EXIT_USAGE;
  }
  return explain(o, out, err);
}

/* }================================================================== */
