/*
 * retry_breaker.c: circuit breakers: consecutive failures, and resilience4j's count- and
 * time-based sliding windows, each with OPEN -> HALF_OPEN -> CLOSED/OPEN probing.
 *
 * A retry_breaker is one allocation made by create (the struct plus its rings); allow and
 * record never allocate. Invariant: rings only ever hold outcomes recorded in the state that
 * owns them (closed window in CLOSED, probe window in HALF_OPEN).
 */
#include "retry_int.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

/* Outcomes of the last `size` calls (resilience4j FixedSizeSlidingWindowMetrics): the number of
 * calls is min(recorded, size), failures are kept as a running total. */
typedef struct count_ring {
  uint8_t *v;    /* size slots: 1 = failure */
  int32_t size;  /* capacity, >= 1 */
  int32_t head;  /* next slot to write */
  int32_t n;     /* recorded, <= size */
  int32_t fails; /* failures among the n */
} count_ring;

/* One epoch second of resilience4j's SlidingTimeWindowMetrics. */
typedef struct time_bucket {
  int64_t epoch_s; /* the second this bucket aggregates */
  int32_t calls;
  int32_t fails;
} time_bucket;

struct retry_breaker {
  retry_breaker_config cfg; /* copy, validated */
  retry_allocator alloc;    /* how it was allocated */
  bool has_alloc;
  retry_breaker_state state;
  int64_t n_opened;         /* transitions to OPEN */
  int64_t open_until_ns;    /* OPEN: allow() moves to HALF_OPEN strictly after this time */
  int32_t consecutive;      /* CONSECUTIVE, CLOSED: failures in a row */
  int32_t probes_left;      /* HALF_OPEN: permits not handed out yet */
  int32_t probe_successes;  /* CONSECUTIVE, HALF_OPEN: successful probes recorded */
  int32_t closed_min_calls; /* minimum calls of the closed window (COUNT clamps it) */
  int32_t half_min_calls;   /* min(minimum_calls, half_open_calls) */
  count_ring closed;        /* COUNT_WINDOW, CLOSED */
  count_ring half;          /* window kinds, HALF_OPEN (always count-based) */
  time_bucket *buckets;     /* TIME_WINDOW: window_size buckets */
  int32_t bucket_head;      /* bucket of the latest second */
  bool bucket_started;      /* false until the first record after a reset */
  int64_t time_calls;       /* totals over the buckets (subtract on evict) */
  int64_t time_fails;
};

/* {==================================================================
 * Configuration
 * =================================================================== */

void retry_breaker_config_init(retry_breaker_config *cfg, retry_breaker_kind kind) {
  assert(cfg != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->kind = kind;
  /* resilience4j CircuitBreakerConfig defaults: failureRateThreshold 50, slidingWindowSize 100,
   * minimumNumberOfCalls 100, waitDurationInOpenState 60 s,
   * permittedNumberOfCallsInHalfOpenState 10. */
  cfg->failure_threshold = 5;
  cfg->failure_rate_threshold = 50.0;
  cfg->window_size = 100;
  cfg->minimum_calls = 100;
  cfg->open_duration_ns = 60 * RETRY_NS_PER_S;
  cfg->half_open_calls = 10;
  if (kind == RETRY_BREAKER_CONSECUTIVE) {
    /* A classic consecutive-failure breaker: 5 failures in a row, 30 s open, one probe. */
    cfg->open_duration_ns = 30 * RETRY_NS_PER_S;
    cfg->half_open_calls = 1;
  }
  /* Server-side failures: statuses that say the server (not the request) is unwell. */
  retry_status_set_clear(&cfg->failure_statuses);
  static const int grpc_failures[] = {
      RETRY_GRPC_UNKNOWN,  RETRY_GRPC_DEADLINE_EXCEEDED, RETRY_GRPC_RESOURCE_EXHAUSTED,
      RETRY_GRPC_INTERNAL, RETRY_GRPC_UNAVAILABLE,       RETRY_GRPC_DATA_LOSS};
  for (size_t i = 0; i < sizeof grpc_failures / sizeof grpc_failures[0]; i++)
    retry_status_set_add(&cfg->failure_statuses, RETRY_SPACE_GRPC, grpc_failures[i]);
  retry_status_set_add_token(&cfg->failure_statuses, RETRY_SPACE_HTTP, "5xx");
}

/* Checks the fields the kind uses. Paths are field names of retry_breaker_config. */
static int validate(const retry_breaker_config *cfg, retry_error *err) {
  if ((int)cfg->kind < (int)RETRY_BREAKER_CONSECUTIVE || cfg->kind > RETRY_BREAKER_TIME_WINDOW) {
    retry_error_set(err, RETRY_ECONFIG, NULL, "kind", -1, -1,
                    "kind must be consecutive, count_window or time_window (got %d)",
                    (int)cfg->kind);
    return RETRY_ECONFIG;
  }
  if (cfg->kind == RETRY_BREAKER_CONSECUTIVE) {
    if (cfg->failure_threshold < 1) {
      retry_error_set(err, RETRY_ECONFIG, NULL, "failure_threshold", -1, -1,
                      "failure_threshold must be >= 1 (got %d)", (int)cfg->failure_threshold);
      return RETRY_ECONFIG;
    }
  } else {
    /* NaN fails both comparisons, so it is refused too. */
    if (!(cfg->failure_rate_threshold > 0.0 && cfg->failure_rate_threshold <= 100.0)) {
      retry_error_set(err, RETRY_ECONFIG, NULL, "failure_rate_threshold", -1, -1,
                      "failure_rate_threshold must be a percent in (0, 100] (got %g)",
                      cfg->failure_rate_threshold);
      return RETRY_ECONFIG;
    }
    if (cfg->window_size < 1) {
      retry_error_set(
          err, RETRY_ECONFIG, NULL, "window_size", -1, -1, "window_size must be >= 1 %s (got %d)",
          cfg->kind == RETRY_BREAKER_COUNT_WINDOW ? "call" : "second", (int)cfg->window_size);
      return RETRY_ECONFIG;
    }
    if (cfg->minimum_calls < 1) {
      retry_error_set(err, RETRY_ECONFIG, NULL, "minimum_calls", -1, -1,
                      "minimum_calls must be >= 1 (got %d)", (int)cfg->minimum_calls);
      return RETRY_ECONFIG;
    }
  }
  if (cfg->open_duration_ns <= 0) {
    retry_error_set(err, RETRY_ECONFIG, NULL, "open_duration_ns", -1, -1,
                    "open_duration_ns must be > 0 ns (got %lld)", (long long)cfg->open_duration_ns);
    return RETRY_ECONFIG;
  }
  if (cfg->half_open_calls < 1) {
    retry_error_set(err, RETRY_ECONFIG, NULL, "half_open_calls", -1, -1,
                    "half_open_calls must be >= 1 (got %d)", (int)cfg->half_open_calls);
    return RETRY_ECONFIG;
  }
  return RETRY_OK;
}

/* }================================================================== */

/* {==================================================================
 * Windows
 * =================================================================== */

/* Forgets every outcome; the storage stays (the windows are sized once, in create). */
static void ring_reset(count_ring *r) {
  r->head = 0;
  r->n = 0;
  r->fails = 0;
}

/* Adds one outcome, evicting the oldest once the ring is full, so that the failure count is
 * always exact for the calls in the window without rescanning it. */
static void ring_add(count_ring *r, bool failure) {
  if (r->n == r->size)
    r->fails -= r->v[r->head]; /* the oldest outcome leaves the window */
  else
    r->n++;
  r->v[r->head] = failure ? 1 : 0;
  r->fails += failure ? 1 : 0;
  r->head = (r->head + 1) % r->size;
}

/* Empties the time window; the head bucket is labelled again on the next record. */
static void buckets_reset(retry_breaker *b) {
  if (b->buckets != NULL) memset(b->buckets, 0, (size_t)b->cfg.window_size * sizeof b->buckets[0]);
  b->bucket_head = 0;
  b->bucket_started = false;
  b->time_calls = 0;
  b->time_fails = 0;
}

/* Epoch second of a time on the caller's clock (floor, also before the origin). */
static int64_t epoch_second(int64_t now_ns) {
  int64_t s = now_ns / RETRY_NS_PER_S;
  if (now_ns % RETRY_NS_PER_S < 0) s--;
  return s;
}

/* SlidingTimeWindowMetrics.moveWindowToCurrentEpochSecond: advances the head by the seconds
 * elapsed since the latest bucket (at most window_size), evicting each bucket it reuses.
 * Resilience4j labels its empty buckets from the creation time; starting on the first record
 * instead is the same, since empty buckets count nothing. */
static time_bucket *move_window(retry_breaker *b, int64_t now_ns) {
  int64_t now_s = epoch_second(now_ns);
  time_bucket *head = &b->buckets[b->bucket_head];
  if (!b->bucket_started) {
    b->bucket_started = true;
    head->epoch_s = now_s;
    return head;
  }
  int64_t diff = now_s - head->epoch_s;
  if (diff <= 0) return head; /* same second (or a clock step back): the latest bucket */
  int64_t steps = diff < b->cfg.window_size ? diff : b->cfg.window_size;
  do {
    steps--;
    b->bucket_head = (b->bucket_head + 1) % b->cfg.window_size;
    head = &b->buckets[b->bucket_head];
    b->time_calls -= head->calls;
    b->time_fails -= head->fails;
    head->calls = 0;
    head->fails = 0;
    head->epoch_s = now_s - steps;
  } while (steps > 0);
  return head;
}

/* CircuitBreakerMetrics.checkIfThresholdsExceeded for the failure rate alone: no decision
 * (0) below the minimum number of calls, else 1 when the rate reaches the threshold and -1
 * when it does not. The rate is computed in float, as SnapshotImpl.getFailureRate does
 * (failed * 100.0f / total), so borderline thresholds compare exactly as in Java. */
static int rate_verdict(int64_t calls, int64_t fails, int32_t min_calls, double threshold) {
  if (calls == 0 || calls < min_calls) return 0;
  float rate = (float)fails * 100.0f / (float)calls;
  return rate >= (float)threshold ? 1 : -1;
}

/* }================================================================== */

/* {==================================================================
 * Lifecycle and transitions
 * =================================================================== */

retry_breaker *retry_breaker_create(const retry_breaker_config *cfg, const retry_allocator *alloc,
                                    retry_error *err) {
  assert(cfg != NULL);
  if (validate(cfg, err) != RETRY_OK) return NULL;
  size_t n_buckets = cfg->kind == RETRY_BREAKER_TIME_WINDOW ? (size_t)cfg->window_size : 0;
  size_t n_closed = cfg->kind == RETRY_BREAKER_COUNT_WINDOW ? (size_t)cfg->window_size : 0;
  size_t n_half = cfg->kind != RETRY_BREAKER_CONSECUTIVE ? (size_t)cfg->half_open_calls : 0;
  /* One block: struct, buckets (8-byte aligned like the struct), then the byte rings. */
  size_t size = sizeof(retry_breaker);
  if (n_buckets > (SIZE_MAX - size) / sizeof(time_bucket)) goto nomem;
  size += n_buckets * sizeof(time_bucket);
  if (n_closed > SIZE_MAX - size || n_half > SIZE_MAX - size - n_closed) goto nomem;
  size += n_closed + n_half;
  retry_breaker *b = retry__malloc(alloc, size);
  if (b == NULL) goto nomem;
  memset(b, 0, size);
  b->cfg = *cfg;
  if (alloc != NULL) {
    b->alloc = *alloc;
    b->has_alloc = true;
  }
  unsigned char *p = (unsigned char *)(b + 1);
  if (n_buckets > 0) b->buckets = (time_bucket *)(void *)p;
  p += n_buckets * sizeof(time_bucket);
  b->closed.v = n_closed > 0 ? p : NULL;
  b->closed.size = (int32_t)n_closed;
  p += n_closed;
  b->half.v = n_half > 0 ? p : NULL;
  b->half.size = (int32_t)n_half;
  /* COUNT_BASED clamps the minimum to the window size (CircuitBreakerMetrics constructor);
   * TIME_BASED does not, so a minimum above what the window can hold never opens it. The
   * half-open window is count-based with size half_open_calls, hence its minimum. */
  b->closed_min_calls = cfg->minimum_calls;
  if (cfg->kind == RETRY_BREAKER_COUNT_WINDOW && cfg->window_size < b->closed_min_calls)
    b->closed_min_calls = cfg->window_size;
  b->half_min_calls =
      cfg->minimum_calls < cfg->half_open_calls ? cfg->minimum_calls : cfg->half_open_calls;
  b->state = RETRY_BREAKER_CLOSED;
  return b;

nomem:
  retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory creating a breaker");
  return NULL;
}

void retry_breaker_destroy(retry_breaker *b) {
  if (b == NULL) return;
  retry__free(b->has_alloc ? &b->alloc : NULL, b);
}

/* Every way into OPEN: from CLOSED on a verdict, from HALF_OPEN on a failed probe. The wait
 * restarts from now each time, as resilience4j's OpenState computes retryAfterWaitDuration
 * when it is entered; outstanding probe permits are dropped with the half-open state. */
static void to_open(retry_breaker *b, int64_t now_ns) {
  b->state = RETRY_BREAKER_OPEN;
  b->n_opened++;
  b->open_until_ns = retry__add_ns(now_ns, b->cfg.open_duration_ns);
  b->probes_left = 0;
}

/* Entered lazily from allow(), never on a timer: a breaker nobody asks stays OPEN. */
static void to_half_open(retry_breaker *b) {
  b->state = RETRY_BREAKER_HALF_OPEN;
  b->probes_left = b->cfg.half_open_calls;
  b->probe_successes = 0;
  ring_reset(&b->half); /* CircuitBreakerMetrics.forHalfOpen: fresh metrics */
}

/* Entering CLOSED starts from empty metrics (resilience4j CircuitBreakerMetrics.forClosed). */
static void to_closed(retry_breaker *b) {
  b->state = RETRY_BREAKER_CLOSED;
  b->consecutive = 0;
  ring_reset(&b->closed);
  buckets_reset(b);
}

bool retry_breaker_allow(retry_breaker *b, int64_t now_ns) {
  assert(b != NULL);
  switch (b->state) {
    case RETRY_BREAKER_CLOSED: return true;
    case RETRY_BREAKER_OPEN:
      /* resilience4j OpenState.tryAcquirePermission: `clock.instant().isAfter(retryAfter)`,
       * strictly after, and lazily on this call (automatic transition is off by default). */
      if (now_ns <= b->open_until_ns) return false;
      to_half_open(b);
      break;
    case RETRY_BREAKER_HALF_OPEN: break;
  }
  /* HalfOpenState.tryAcquirePermission: a counter of permits that only goes down; the rest
   * wait for the probes' results to move the state. */
  if (b->probes_left <= 0) return false;
  b->probes_left--;
  return true;
}

void retry__breaker_release(retry_breaker *b) {
  if (b == NULL || b->state != RETRY_BREAKER_HALF_OPEN) return;
  if (b->probes_left < b->cfg.half_open_calls) b->probes_left++;
}

/* Consecutive kind. In HALF_OPEN every recorded result counts as a probe result, including a
 * late one from an attempt admitted while CLOSED: like resilience4j, the breaker records into
 * the state it is in, not the one the attempt was admitted in. */
static void record_consecutive(retry_breaker *b, int64_t now_ns, bool failure) {
  if (b->state == RETRY_BREAKER_CLOSED) {
    if (!failure) {
      b->consecutive = 0; /* a success breaks the run */
      return;
    }
    if (++b->consecutive >= b->cfg.failure_threshold) to_open(b, now_ns);
    return;
  }
  /* HALF_OPEN: one failed probe reopens; half_open_calls successes close. */
  if (failure)
    to_open(b, now_ns);
  else if (++b->probe_successes >= b->cfg.half_open_calls)
    to_closed(b);
}

/* Window kinds: the verdict is taken after every record, as CircuitBreakerMetrics.onError /
 * onSuccess return checkIfThresholdsExceeded; in CLOSED only "open" is acted on. */
static void record_window(retry_breaker *b, int64_t now_ns, bool failure) {
  if (b->state == RETRY_BREAKER_HALF_OPEN) {
    ring_add(&b->half, failure);
    int v =
        rate_verdict(b->half.n, b->half.fails, b->half_min_calls, b->cfg.failure_rate_threshold);
    if (v > 0)
      to_open(b, now_ns);
    else if (v < 0)
      to_closed(b);
    return;
  }
  int64_t calls, fails;
  if (b->cfg.kind == RETRY_BREAKER_COUNT_WINDOW) {
    ring_add(&b->closed, failure);
    calls = b->closed.n;
    fails = b->closed.fails;
  } else {
    time_bucket *h = move_window(b, now_ns);
    h->calls++;
    h->fails += failure ? 1 : 0;
    b->time_calls++;
    b->time_fails += failure ? 1 : 0;
    calls = b->time_calls;
    fails = b->time_fails;
  }
  if (rate_verdict(calls, fails, b->closed_min_calls, b->cfg.failure_rate_threshold) > 0)
    to_open(b, now_ns);
}

void retry_breaker_record(retry_breaker *b, int64_t now_ns, bool failure) {
  assert(b != NULL);
  /* A result that arrives while OPEN belongs to an attempt admitted before the breaker opened.
   * Resilience4j adds it to metrics that are dropped on the way to HALF_OPEN; ignoring it is
   * the same. */
  if (b->state == RETRY_BREAKER_OPEN) return;
  if (b->cfg.kind == RETRY_BREAKER_CONSECUTIVE)
    record_consecutive(b, now_ns, failure);
  else
    record_window(b, now_ns, failure);
}

retry_breaker_state retry_breaker_state_get(const retry_breaker *b) {
  assert(b != NULL);
  return b->state;
}

int64_t retry_breaker_n_opened(const retry_breaker *b) {
  assert(b != NULL);
  return b->n_opened;
}

/* }================================================================== */
