/*
 * retry_backoff.c: the delay before a retry, for every common jitter.
 *
 * The nominal delay d(n) = min(initial * multiplier^(n-1), max) is grown step by step in
 * retry_backoff_state (as C-core's BackOff does), so a large n never overflows; a pushback
 * restarts n at 1. Randomness comes from the caller's retry_rng only.
 */
#include "retry_int.h"

#include <assert.h>
#include <math.h>
#include <string.h>

double retry_rng_uniform(const retry_rng *rng) {
  /* The top 53 bits make every double in [0, 1) on a 2^-53 grid equally likely. */
  return (double)(rng->next(rng->ctx) >> 11) * 0x1.0p-53;
}

static const struct {
  const char *name;
  retry_jitter jitter;
} jitter_names[] = {
    {"grpc", RETRY_JITTER_PROPORTIONAL},
    {"proportional", RETRY_JITTER_PROPORTIONAL},
    {"full", RETRY_JITTER_FULL},
    {"equal", RETRY_JITTER_EQUAL},
    {"decorrelated", RETRY_JITTER_DECORRELATED},
    {"polly-v2", RETRY_JITTER_POLLY_V2},
    {"none", RETRY_JITTER_NONE},
    {"linkerd", RETRY_JITTER_LINKERD},
};

const char *retry_jitter_name(retry_jitter j) {
  switch (j) {
    case RETRY_JITTER_PROPORTIONAL: return "grpc";
    case RETRY_JITTER_FULL: return "full";
    case RETRY_JITTER_EQUAL: return "equal";
    case RETRY_JITTER_DECORRELATED: return "decorrelated";
    case RETRY_JITTER_POLLY_V2: return "polly-v2";
    case RETRY_JITTER_NONE: return "none";
    case RETRY_JITTER_LINKERD: return "linkerd";
  }
  return "unknown";
}

int retry_jitter_parse(const char *name, retry_jitter *out) {
  if (name == NULL) return RETRY_EINVAL;
  for (size_t i = 0; i < sizeof jitter_names / sizeof jitter_names[0]; i++) {
    if (strcmp(name, jitter_names[i].name) == 0) {
      *out = jitter_names[i].jitter;
      return RETRY_OK;
    }
  }
  return RETRY_EINVAL;
}

void retry_backoff_state_reset(retry_backoff_state *st) { memset(st, 0, sizeof *st); }

/* Converts a non-negative delay in double ns to int64, saturating. */
static int64_t to_ns(double x) {
  if (!(x > 0)) return 0; /* also catches NaN */
  if (x >= 9.2e18) return INT64_MAX;
  return (int64_t)x;
}

/* Polly v8 DecorrelatedJitterBackoffV2 (Polly.Core/Retry/RetryHelper.cs): with t = a + U,
 * f(t) = 2^t * tanh(sqrt(4 t)), the delay is (f(t) - f_prev) / 1.4 * base. Its medians sit
 * near base, 2 base, 4 base, ... without the clustering of plain decorrelated jitter. */
static double polly_v2(retry_backoff_state *st, int attempt0, double base_ns, double u) {
  double t = (double)attempt0 + u;
  double next = pow(2.0, t) * tanh(sqrt(4.0 * t));
  double delay = (next - st->prev_ns) * (1.0 / 1.4) * base_ns;
  st->prev_ns = next;
  return delay;
}

/* d(1) = min(initial, max); d(n) = min(d(n-1) * multiplier, max): the one place that grows
 * the nominal delay, so that retry__backoff_nominal repeats retry_backoff_next bit for bit. */
static double nominal_step(const retry_backoff *b, int n, double prev_nominal) {
  double initial = (double)b->initial_ns;
  double max = (double)b->max_ns;
  return n == 1 ? (initial < max ? initial : max) : fmin(prev_nominal * b->multiplier, max);
}

int64_t retry_backoff_next(const retry_backoff *b, retry_backoff_state *st, const retry_rng *rng,
                           int64_t *nominal_ns) {
  double initial = (double)b->initial_ns;
  double max = (double)b->max_ns;
  st->n_since_reset++;
  st->cur_ns = nominal_step(b, st->n_since_reset, st->cur_ns);
  double d = st->cur_ns;
  if (nominal_ns != NULL) *nominal_ns = to_ns(d);

  double delay;
  /* C-core 1.51's BackOff: its first NextAttemptTime after a Reset is the initial backoff
   * itself; only the later ones are jittered (src/core/lib/backoff/backoff.cc). */
  if (b->first_delay_exact && st->n_since_reset == 1) return to_ns(d);
  switch (b->jitter) {
    case RETRY_JITTER_PROPORTIONAL: {
      double f = b->jitter_fraction;
      delay = d * (1.0 - f + 2.0 * f * retry_rng_uniform(rng));
      break;
    }
    case RETRY_JITTER_FULL: delay = d * retry_rng_uniform(rng); break;
    case RETRY_JITTER_EQUAL: delay = d / 2.0 + d / 2.0 * retry_rng_uniform(rng); break;
    case RETRY_JITTER_DECORRELATED: {
      /* sleep = min(cap, random_between(base, sleep * 3)), sleep_0 = base (AWS blog, 2015). */
      double prev = st->n_since_reset == 1 || st->prev_ns <= 0 ? initial : st->prev_ns;
      double hi = prev * 3.0;
      delay = fmin(max, initial + (hi - initial) * retry_rng_uniform(rng));
      st->prev_ns = delay;
      break;
    }
    case RETRY_JITTER_POLLY_V2:
      if (st->n_since_reset == 1) st->prev_ns = 0;
      delay = fmin(max, polly_v2(st, st->n_since_reset - 1, initial, retry_rng_uniform(rng)));
      break;
    case RETRY_JITTER_LINKERD:
      /* exp-backoff's base + min(U * base, max - base): at the cap there is no room left. */
      delay = d + fmin(d * retry_rng_uniform(rng), fmax(max - d, 0.0));
      break;
    case RETRY_JITTER_NONE:
    default: delay = d; break;
  }
  if (b->cap_after_jitter) delay = fmin(delay, max);
  return to_ns(delay);
}

/* {==================================================================
 * The packed state of a retry_call (retry_int.h)
 * =================================================================== */

/* Decorrelated jitter and Polly v2 carry their last delay (or formula value) from draw to draw
 * and read the nominal delay only to report it; the other jitters carry the nominal delay and
 * never read prev_ns. */
static bool jitter_carries_prev(retry_jitter j) {
  return j == RETRY_JITTER_DECORRELATED || j == RETRY_JITTER_POLLY_V2;
}

double retry__backoff_nominal(const retry_backoff *b, int n) {
  double cur = 0.0;
  double max = (double)b->max_ns;
  for (int k = 1; k <= n; k++) {
    cur = nominal_step(b, k, cur);
    /* At max with a multiplier >= 1 it stays there: fmin(max * m, max) is max. */
    if (cur == max && max >= 0.0 && b->multiplier >= 1.0) break;
  }
  return cur;
}

int64_t retry__backoff_next_packed(const retry_backoff *b, uint16_t *n, double *carried,
                                   const retry_rng *rng, int64_t *nominal_ns) {
  retry_backoff_state st;
  st.n_since_reset = *n;
  if (jitter_carries_prev(b->jitter)) {
    st.prev_ns = *carried;
    /* cur_ns only makes the reported nominal delay here (and d(1), which it does not read):
     * rebuilt only when it is asked for. */
    st.cur_ns = nominal_ns != NULL ? retry__backoff_nominal(b, *n) : 0.0;
  } else {
    st.cur_ns = *carried;
    st.prev_ns = 0.0; /* never read by these jitters */
  }
  int64_t delay = retry_backoff_next(b, &st, rng, nominal_ns);
  assert(st.n_since_reset <= UINT16_MAX);
  *n = (uint16_t)st.n_since_reset;
  *carried = jitter_carries_prev(b->jitter) ? st.prev_ns : st.cur_ns;
  return delay;
}

int64_t retry__backoff_next_throttled(const retry_backoff *b, uint16_t *n, double *carried,
                                      const retry_rng *rng, int64_t *nominal_ns) {
  /* The config refuses a second base with a jitter that carries its last delay, so carried is
   * the nominal delay and can be rebuilt for either base from n alone. */
  assert(!jitter_carries_prev(b->jitter));
  retry_backoff t = *b;
  t.initial_ns = b->throttle_initial_ns;
  double cur = retry__backoff_nominal(&t, *n);
  int64_t delay = retry__backoff_next_packed(&t, n, &cur, rng, nominal_ns);
  *carried = retry__backoff_nominal(b, *n);
  return delay;
}

/* }================================================================== */
