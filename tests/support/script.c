/*
 * script.c: the scripted virtual-time driver of script.h. A tiny event loop: the next event
 * is the earliest of the engine's wake time, an in-flight attempt's headers, outcome or
 * abandonment; ties go to outcomes first, then headers, then the timer.
 */
#include "tests/support/script.h"

#include <string.h>

uint64_t test_rng_next(void *ctx) {
  test_rng *r = ctx;
  uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

retry_rng test_rng_make(test_rng *r, uint64_t seed) {
  r->s = seed;
  retry_rng g = {test_rng_next, r};
  return g;
}

script_attempt script_step(int64_t duration_ms, int32_t status) {
  script_attempt a;
  memset(&a, 0, sizeof a);
  a.duration_ns = duration_ms * RETRY_NS_PER_MS;
  a.status = status;
  a.side_effect_at_ns = -1;
  a.headers_at_ns = -1;
  return a;
}

typedef struct flight {
  bool live;
  int64_t sent_ns, end_ns, deadline_ns, headers_ns, effect_ns;
  bool headers_done, effect_done;
  const script_attempt *step;
} flight;

retry_call_ext *script_ext(void) {
  static retry_call_ext ring[16];
  static unsigned next;
  return &ring[next++ % 16];
}

int script_run(const retry_policy *p, retry_target *t, const retry_call_opts *o, int64_t start_ns,
               const script_attempt *steps, size_t n, script_result *r) {
  memset(r, 0, sizeof *r);
  flight fl[SCRIPT_MAX + 1];
  memset(fl, 0, sizeof fl);
  retry_call *c = &r->call;
  retry_decision d;
  int64_t now = start_ns;
  int64_t wake = RETRY_NEVER;
  retry_call_opts opts = *o;
  for (size_t i = 0; i < n; i++)
    if (steps[i].stream_items > 0) opts.stream_items = true; /* counted in an ext */
  if (opts.ext == NULL && retry_call_ext_needed(p, t, &opts)) opts.ext = &r->ext;
  retry_call_start(c, p, t, &opts, now, &d);
  for (int guard = 0; guard < 10000; guard++) {
    if (d.cancel_others) {
      for (int k = 1; k <= SCRIPT_MAX; k++) {
        if (fl[k].live && (d.action == RETRY_ACTION_DONE || k != d.attempt)) {
          fl[k].live = false;
          r->cancelled++;
        }
      }
    }
    if (d.action == RETRY_ACTION_DONE) {
      r->status = d.status;
      r->reason = d.reason;
      r->end_ns = d.done_ns;
      r->stream_items = retry_call_stream_items(c);
      r->stream_duplicates = retry_call_stream_duplicates(c);
      /* Side effects of attempts abandoned at the end that had already happened count. */
      return 0;
    }
    if (d.action == RETRY_ACTION_SEND) {
      int k = d.attempt;
      if (k < 1 || k > SCRIPT_MAX) return -1;
      const script_attempt *s = &steps[(size_t)k <= n ? (size_t)k - 1 : n - 1];
      fl[k].live = true;
      fl[k].step = s;
      fl[k].sent_ns = now;
      fl[k].end_ns = now + s->duration_ns;
      fl[k].deadline_ns = d.attempt_deadline_ns;
      fl[k].headers_ns = s->headers_at_ns >= 0 ? now + s->headers_at_ns : RETRY_NEVER;
      fl[k].effect_ns = s->side_effect_at_ns >= 0 ? now + s->side_effect_at_ns : RETRY_NEVER;
      fl[k].headers_done = fl[k].effect_done = false;
      r->send_ns[k - 1] = now;
      r->attempts = k > r->attempts ? k : r->attempts;
    }
    wake = d.wake_ns;
    /* Find the next event. */
    int64_t best = RETRY_NEVER;
    int best_k = 0, best_kind = 0; /* 1 outcome, 2 headers, 3 timer */
    for (int k = 1; k <= SCRIPT_MAX; k++) {
      if (!fl[k].live) continue;
      /* Side effects happen on their own; they need no engine event. */
      int64_t end = fl[k].end_ns < fl[k].deadline_ns ? fl[k].end_ns : fl[k].deadline_ns;
      if (end < best || (end == best && best_kind > 1)) {
        best = end;
        best_k = k;
        best_kind = 1;
      }
      if (!fl[k].headers_done && fl[k].headers_ns < end &&
          (fl[k].headers_ns < best || (fl[k].headers_ns == best && best_kind > 2))) {
        best = fl[k].headers_ns;
        best_k = k;
        best_kind = 2;
      }
    }
    if (wake != RETRY_NEVER && wake < best) {
      best = wake;
      best_kind = 3;
    }
    if (best == RETRY_NEVER) return -1; /* the engine waits for nothing */
    if (best < now) return -1;
    /* Side effects up to the event time. */
    for (int k = 1; k <= SCRIPT_MAX; k++) {
      if (fl[k].live && !fl[k].effect_done && fl[k].effect_ns <= best &&
          fl[k].effect_ns < fl[k].deadline_ns) {
        fl[k].effect_done = true;
        r->side_effects++;
      }
    }
    now = best;
    if (best_kind == 3) {
      retry_call_wake(c, now, &d);
    } else if (best_kind == 2) {
      fl[best_k].headers_done = true;
      retry_call_on_headers(c, best_k, now, &d);
    } else {
      flight *f = &fl[best_k];
      f->live = false;
      retry_outcome out;
      const char *pb[1] = {f->step->pushback};
      if (f->end_ns <= f->deadline_ns) {
        retry_outcome_init(&out, f->step->status);
        if (f->step->pushback != NULL) {
          out.pushback = pb;
          out.n_pushback = 1;
        }
        out.retry_after = f->step->retry_after;
        out.stream_items = f->step->stream_items;
      } else {
        retry_outcome_init(&out, p->space == RETRY_SPACE_GRPC ? RETRY_GRPC_DEADLINE_EXCEEDED : 504);
      }
      out.headers_received = f->headers_done;
      retry_call_on_outcome(c, best_k, &out, now, &d);
    }
  }
  return -1;
}
