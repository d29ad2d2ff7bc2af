/*
 * retry_target.c: the shared state of one (client, target) pair and the hooks the call state
 * machine uses to consult and update it.
 *
 * A retry_target is one block holding the parts its configuration turns on (retry_int.h):
 * retry_target_create allocates it with a copy of the configuration, retry_target_init fills
 * the caller's storage and borrows the configuration; a breaker, when configured, is created
 * apart. Only create and init allocate. Every hook accepts t == NULL, meaning
 * "no shared state": nothing is counted and everything is allowed.
 */
#include "retry_int.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* {==================================================================
 * Configuration and lifecycle
 * =================================================================== */

void retry_target_config_init(retry_target_config *cfg) {
  assert(cfg != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->budget = RETRY_BUDGET_NONE;
}

/* Reports a bad field: code RETRY_ECONFIG, path = the field, message says what is allowed. */
#define BAD(err, path, ...)                                                   \
  do {                                                                        \
    retry_error_set((err), RETRY_ECONFIG, NULL, (path), -1, -1, __VA_ARGS__); \
    return RETRY_ECONFIG;                                                     \
  } while (0)

/* A6 retryThrottling: maxTokens in (0, 1000], tokenRatio > 0 (kept in thousandths). */
static int validate_throttle(const retry_throttle_config *c, retry_error *err) {
  if (c->max_milli_tokens <= 0 || c->max_milli_tokens > 1000000)
    BAD(err, "throttle.max_milli_tokens",
        "throttle.max_milli_tokens must be in (0, 1000000] (maxTokens in (0, 1000]), got %lld",
        (long long)c->max_milli_tokens);
  if (c->token_ratio_milli <= 0)
    BAD(err, "throttle.token_ratio_milli",
        "throttle.token_ratio_milli must be > 0 (tokenRatio >= 0.001), got %lld",
        (long long)c->token_ratio_milli);
  return RETRY_OK;
}

/* The SDK takes any uint; costs of 0 are refused here because retry_aws_quota_acquire returns
 * the cost taken and 0 already means "refused". */
static int validate_aws(const retry_aws_quota_config *c, retry_error *err) {
  if (c->capacity < 0)
    BAD(err, "aws.capacity", "aws.capacity must be >= 0 tokens, got %d", (int)c->capacity);
  if (c->retry_cost < 1)
    BAD(err, "aws.retry_cost", "aws.retry_cost must be >= 1 token, got %d", (int)c->retry_cost);
  if (c->timeout_cost < 1)
    BAD(err, "aws.timeout_cost", "aws.timeout_cost must be >= 1 token, got %d",
        (int)c->timeout_cost);
  if (c->no_retry_increment < 0)
    BAD(err, "aws.no_retry_increment", "aws.no_retry_increment must be >= 0 tokens, got %d",
        (int)c->no_retry_increment);
  return RETRY_OK;
}

/* RetryBudget.apply's require() checks, on ttl.inSeconds (truncated), so 60.5 s passes as
 * Finagle lets it; plus the Int range Finagle's reserve arithmetic silently assumes. */
static int validate_finagle(const retry_finagle_budget_config *c, retry_error *err) {
  int64_t ttl_s = c->ttl_ns / RETRY_NS_PER_S;
  if (ttl_s < 1 || ttl_s > 60)
    BAD(err, "finagle.ttl_ns", "finagle.ttl_ns must be in [1 s, 60 s] (whole seconds), got %lld ns",
        (long long)c->ttl_ns);
  if (c->min_retries_per_sec < 0)
    BAD(err, "finagle.min_retries_per_sec", "finagle.min_retries_per_sec must be >= 0, got %d",
        (int)c->min_retries_per_sec);
  if (!(c->percent_can_retry >= 0.0 && c->percent_can_retry <= 1000.0))
    BAD(err, "finagle.percent_can_retry",
        "finagle.percent_can_retry must be in [0, 1000] (0.2 = 20%%), got %g",
        c->percent_can_retry);
  retry_finagle_budget probe;
  retry_finagle_budget_init(&probe, c, 0);
  if (probe.reserve > INT32_MAX)
    BAD(err, "finagle.min_retries_per_sec",
        "finagle.min_retries_per_sec * ttl seconds * (int)(1000 / percent_can_retry), the "
        "reserve, must fit in 32 bits as in Finagle, got %lld",
        (long long)probe.reserve);
  return RETRY_OK;
}

/* budget_percent is an envoy.type.v3.Percent, whose value is validated to [0, 100];
 * min_retry_concurrency is a uint32 there. */
static int validate_envoy(const retry_envoy_budget_config *c, retry_error *err) {
  if (!(c->budget_percent >= 0.0 && c->budget_percent <= 100.0))
    BAD(err, "envoy.budget_percent", "envoy.budget_percent must be in [0, 100], got %g",
        c->budget_percent);
  if (c->min_retry_concurrency < 0)
    BAD(err, "envoy.min_retry_concurrency", "envoy.min_retry_concurrency must be >= 0, got %d",
        (int)c->min_retry_concurrency);
  return RETRY_OK;
}

/* K below 1 would reject requests even when the backend accepts every one of them; a window
 * shorter than one nanosecond per bin cannot be divided into RETRY_ADAPTIVE_BINS bins. */
static int validate_adaptive(const retry_adaptive_config *c, retry_error *err) {
  if (!(c->k >= 1.0) || isinf(c->k))
    BAD(err, "adaptive.k", "adaptive.k must be a finite number >= 1 (SRE: 2), got %g", c->k);
  if (c->window_ns < RETRY_ADAPTIVE_BINS)
    BAD(err, "adaptive.window_ns", "adaptive.window_ns must be >= %d ns (one ns per bin), got %lld",
        RETRY_ADAPTIVE_BINS, (long long)c->window_ns);
  if (!(c->padding >= 0.0) || isinf(c->padding))
    BAD(err, "adaptive.padding", "adaptive.padding must be a finite number >= 0 (SRE: 1), got %g",
        c->padding);
  return RETRY_OK;
}

/* The optional parts check their own fields; the message names the part and the field. */
static int validate_opt(const retry_target_config *cfg, retry_error *err) {
  const char *field = NULL;
  char path[64];
  if (cfg->budget == RETRY_BUDGET_TOKEN_BUCKET &&
      retry_token_bucket_config_check(&cfg->token_bucket, &field) != RETRY_OK) {
    snprintf(path, sizeof path, "token_bucket.%s", field);
    BAD(err, path,
        "token_bucket.%s is out of range (capacity > 0, initial in [0, capacity], earnings >= 0, "
        "retry_cost > 0, all finite)",
        field);
  }
  if (cfg->has_aws_adaptive && retry_aws_adaptive_config_check(&cfg->aws_adaptive, &field) != 0) {
    snprintf(path, sizeof path, "aws_adaptive.%s", field);
    BAD(err, path,
        "aws_adaptive.%s is out of range (0 < beta < 1, 0 < smoothing <= 1, the others finite and "
        "> 0)",
        field);
  }
  if (cfg->has_retry_breaker &&
      retry_only_breaker_config_check(&cfg->retry_breaker, &field) != RETRY_OK) {
    snprintf(path, sizeof path, "retry_breaker.%s", field);
    BAD(err, path,
        "retry_breaker.%s is out of range (max_ratio finite and >= 0, window_ns 0 or >= %d ns)",
        field, RETRY_ONLY_BREAKER_BINS);
  }
  if (cfg->has_limit) {
    if (retry_limit_config_check(&cfg->limit, &field) != RETRY_OK) {
      snprintf(path, sizeof path, "limit.%s", field);
      BAD(err, path, "limit.%s is out of range (see retry_limit_config_check)", field);
    }
    if (cfg->limit_reject_grpc < 1 || cfg->limit_reject_grpc >= RETRY_GRPC_N_CODES)
      BAD(err, "limit_reject_grpc", "limit_reject_grpc must be a gRPC code 1..16, got %d",
          (int)cfg->limit_reject_grpc);
    if (cfg->limit_reject_http < 300 || cfg->limit_reject_http > 599)
      BAD(err, "limit_reject_http", "limit_reject_http must be an HTTP status 300..599, got %d",
          (int)cfg->limit_reject_http);
  }
  return RETRY_OK;
}

static bool has_opt(const retry_target_config *cfg) {
  return cfg->budget == RETRY_BUDGET_TOKEN_BUCKET || cfg->has_aws_adaptive ||
         cfg->has_retry_breaker || cfg->has_limit;
}

void retry_target_config_set_limit(retry_target_config *cfg, retry_limit_kind kind) {
  assert(cfg != NULL);
  cfg->has_limit = true;
  retry_limit_config_init(&cfg->limit, kind);
  cfg->limit_reject_grpc = RETRY_GRPC_UNAVAILABLE;
  cfg->limit_reject_http = 503;
  retry_status_set_clear(&cfg->limit_drop_statuses);
  retry_status_set_add(&cfg->limit_drop_statuses, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);
  retry_status_set_add(&cfg->limit_drop_statuses, RETRY_SPACE_HTTP, 503);
}

bool retry_target_config_has_parts(const retry_target_config *cfg) {
  assert(cfg != NULL);
  return cfg->has_throttle || cfg->budget != RETRY_BUDGET_NONE || cfg->has_adaptive ||
         cfg->has_breaker || has_opt(cfg);
}

void retry_aws_throttle_statuses_init(retry_status_set *s) {
  assert(s != NULL);
  retry_status_set_clear(s);
  retry_status_set_add(s, RETRY_SPACE_GRPC, RETRY_GRPC_RESOURCE_EXHAUSTED);
  retry_status_set_add(s, RETRY_SPACE_HTTP, 429);
}

static int validate(const retry_target_config *cfg, retry_error *err) {
  if (cfg->has_throttle && validate_throttle(&cfg->throttle, err) != RETRY_OK) return RETRY_ECONFIG;
  switch (cfg->budget) {
    case RETRY_BUDGET_NONE: break;
    case RETRY_BUDGET_AWS:
      if (validate_aws(&cfg->aws, err) != RETRY_OK) return RETRY_ECONFIG;
      break;
    case RETRY_BUDGET_FINAGLE:
      if (validate_finagle(&cfg->finagle, err) != RETRY_OK) return RETRY_ECONFIG;
      break;
    case RETRY_BUDGET_ENVOY:
      if (validate_envoy(&cfg->envoy, err) != RETRY_OK) return RETRY_ECONFIG;
      break;
    case RETRY_BUDGET_TOKEN_BUCKET: break; /* validate_opt */
    default:
      BAD(err, "budget", "budget must be none, aws, finagle, envoy or token_bucket, got %d",
          (int)cfg->budget);
  }
  if (cfg->has_adaptive && validate_adaptive(&cfg->adaptive, err) != RETRY_OK) return RETRY_ECONFIG;
  return validate_opt(cfg, err);
}

#undef BAD

/* The block's layout for cfg: the header, then each part turned on, each aligned for its
 * type. Fills the offsets of t (when not NULL) and returns the bytes needed. */
#define ALIGN_UP(n, a) (((n) + (a)-1) / (a) * (a))
static size_t layout(const retry_target_config *cfg, retry_target *t) {
  size_t n = sizeof(retry_target);
  size_t off_throttle = 0, off_budget = 0, off_adaptive = 0;
  size_t off_aws_adaptive = 0, off_retry_breaker = 0, off_limit = 0;
  if (cfg->has_throttle) {
    off_throttle = n = ALIGN_UP(n, _Alignof(retry_throttle));
    n += sizeof(retry_throttle);
  }
  switch (cfg->budget) {
    case RETRY_BUDGET_AWS:
      off_budget = n = ALIGN_UP(n, _Alignof(retry_aws_quota));
      n += sizeof(retry_aws_quota);
      break;
    case RETRY_BUDGET_FINAGLE:
      off_budget = n = ALIGN_UP(n, _Alignof(retry_finagle_budget));
      n += sizeof(retry_finagle_budget);
      break;
    case RETRY_BUDGET_ENVOY:
      off_budget = n = ALIGN_UP(n, _Alignof(retry_envoy_budget));
      n += sizeof(retry_envoy_budget);
      break;
    case RETRY_BUDGET_TOKEN_BUCKET:
      off_budget = n = ALIGN_UP(n, _Alignof(retry_token_bucket));
      n += sizeof(retry_token_bucket);
      break;
    case RETRY_BUDGET_NONE: break;
  }
  if (cfg->has_adaptive) {
    off_adaptive = n = ALIGN_UP(n, _Alignof(retry_adaptive));
    n += sizeof(retry_adaptive);
  }
  if (cfg->has_aws_adaptive) {
    off_aws_adaptive = n = ALIGN_UP(n, _Alignof(retry_aws_adaptive));
    n += sizeof(retry_aws_adaptive);
  }
  if (cfg->has_retry_breaker) {
    off_retry_breaker = n = ALIGN_UP(n, _Alignof(retry_only_breaker));
    n += sizeof(retry_only_breaker);
  }
  if (cfg->has_limit) {
    off_limit = n = ALIGN_UP(n, _Alignof(retry_limit));
    n += sizeof(retry_limit);
  }
  n = ALIGN_UP(n, _Alignof(retry_target));
  /* The offsets are uint16_t: every part together stays far below 64 KiB (asserted), and the
   * throttle's below RETRY__THROTTLE_SHARED, its flag bit. */
  assert(n <= UINT16_MAX && off_throttle < RETRY__THROTTLE_SHARED);
  if (t != NULL) {
    t->off_throttle = (uint16_t)off_throttle;
    t->off_budget = (uint16_t)off_budget;
    t->off_adaptive = (uint16_t)off_adaptive;
    t->off_aws_adaptive = (uint16_t)off_aws_adaptive;
    t->off_retry_breaker = (uint16_t)off_retry_breaker;
    t->off_limit = (uint16_t)off_limit;
  }
  return n;
}

size_t retry_target_size(const retry_target_config *cfg) {
  assert(cfg != NULL);
  return layout(cfg, NULL);
}

/* Fills the block at t (layout(cfg) bytes at least) for cfg, which it borrows. Returns 0, or
 * RETRY_ECONFIG / RETRY_ENOMEM from the breaker (details in err). */
static int fill(retry_target *t, const retry_target_config *cfg, int64_t now_ns,
                const retry_allocator *alloc, retry_error *err) {
  /* Field by field: the parts' own inits set every field of theirs, so nothing is zeroed twice. */
  t->cfg = cfg;
  t->breaker = NULL;
  t->in_flight = 0;
  t->off_alloc = 0;
  t->owned = false;
  t->budget = (uint8_t)cfg->budget;
  (void)layout(cfg, t);
  if (cfg->has_throttle) retry_throttle_init(retry__target_throttle(t), &cfg->throttle);
  switch (cfg->budget) {
    case RETRY_BUDGET_AWS: retry_aws_quota_init(retry__target_budget(t), &cfg->aws); break;
    case RETRY_BUDGET_FINAGLE:
      retry_finagle_budget_init(retry__target_budget(t), &cfg->finagle, now_ns);
      break;
    case RETRY_BUDGET_ENVOY: retry_envoy_budget_init(retry__target_budget(t), &cfg->envoy); break;
    case RETRY_BUDGET_TOKEN_BUCKET:
      retry_token_bucket_init(retry__target_budget(t), &cfg->token_bucket);
      break;
    case RETRY_BUDGET_NONE: break;
  }
  if (cfg->has_adaptive) retry_adaptive_init(retry__target_adaptive(t), &cfg->adaptive, now_ns);
  if (cfg->has_aws_adaptive)
    retry_aws_adaptive_init(retry__target_aws_adaptive(t), &cfg->aws_adaptive, now_ns);
  if (cfg->has_retry_breaker)
    retry_only_breaker_init(retry__target_retry_breaker(t), &cfg->retry_breaker, now_ns);
  /* Vegas's first probe jitter is the middle of its range (0.75): a target has no random
   * stream of its own; later ones come from the calls' streams. */
  if (cfg->has_limit) retry_limit_init(retry__target_limit(t), &cfg->limit, 0.5);
  if (cfg->has_breaker) {
    /* The breaker validates its own fields; its error paths are relative to the breaker, so
     * they are reported again under "breaker." (the first error still wins in err). */
    retry_error local;
    retry_error_clear(&local);
    t->breaker = retry_breaker_create(&cfg->breaker, alloc, &local);
    if (t->breaker == NULL) {
      char path[sizeof local.path];
      if (local.path[0] != '\0')
        snprintf(path, sizeof path, "breaker.%.*s", (int)(sizeof path - 9), local.path);
      else
        path[0] = '\0';
      retry_error_set(err, local.code, NULL, path, -1, -1, "breaker.%s", local.message);
      return local.code != RETRY_OK ? local.code : RETRY_ENOMEM;
    }
  }
  return RETRY_OK;
}

retry_target *retry_target_init(void *storage, size_t size, const retry_target_config *cfg,
                                int64_t now_ns, const retry_allocator *alloc, retry_error *err) {
  assert(cfg != NULL && storage != NULL);
  assert((uintptr_t)storage % _Alignof(retry_target) == 0);
  if (validate(cfg, err) != RETRY_OK) return NULL;
  if (size < layout(cfg, NULL)) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1,
                    "a target needs %zu bytes (retry_target_size), got %zu", layout(cfg, NULL),
                    size);
    return NULL;
  }
  retry_target *t = storage;
  return fill(t, cfg, now_ns, alloc, err) == RETRY_OK ? t : NULL;
}

retry_target *retry_target_create(const retry_target_config *cfg, int64_t now_ns,
                                  const retry_allocator *alloc, retry_error *err) {
  assert(cfg != NULL);
  if (validate(cfg, err) != RETRY_OK) return NULL;
  size_t parts = layout(cfg, NULL);
  size_t off_cfg = ALIGN_UP(parts, _Alignof(retry_target_config));
  size_t off_alloc = ALIGN_UP(off_cfg + sizeof *cfg, _Alignof(retry_allocator));
  size_t total = off_alloc + (alloc != NULL ? sizeof *alloc : 0);
  retry_target *t = retry__malloc(alloc, total);
  if (t == NULL) {
    retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory creating a target");
    return NULL;
  }
  retry_target_config *copy = (retry_target_config *)(void *)((char *)t + off_cfg);
  *copy = *cfg;
  if (fill(t, copy, now_ns, alloc, err) != RETRY_OK) {
    retry__free(alloc, t);
    return NULL;
  }
  t->owned = true;
  if (alloc != NULL) {
    t->off_alloc = (uint16_t)off_alloc;
    *(retry_allocator *)(void *)((char *)t + off_alloc) = *alloc;
  }
  return t;
}

void retry_target_destroy(retry_target *t) {
  if (t == NULL) return;
  retry_breaker_destroy(t->breaker);
  t->breaker = NULL;
  if (!t->owned) return;
  const retry_allocator *alloc =
      t->off_alloc ? (const retry_allocator *)(const void *)((char *)t + t->off_alloc) : NULL;
  if (alloc != NULL) {
    retry_allocator a = *alloc; /* read before the block it lives in is freed */
    retry__free(&a, t);
  } else {
    retry__free(NULL, t);
  }
}

/* }================================================================== */

/* {==================================================================
 * Snapshot and accessors
 * =================================================================== */

/* Not const: the Finagle and adaptive reads are taken after advancing their windows to now_ns,
 * which is what their next decision would do first, so the snapshot cannot change one. */
void retry_target_stats_get(const retry_target *t, int64_t now_ns, retry_target_stats *s) {
  assert(s != NULL);
  memset(s, 0, sizeof *s);
  s->throttle_milli_tokens = -1;
  s->budget_available = -1;
  s->adaptive_reject_p = -1.0;
  s->breaker = RETRY_BREAKER_CLOSED;
  s->aws_fill_rate = -1.0;
  s->limit = -1;
  if (t == NULL) return;
  const retry_throttle *th = retry__target_throttle(t);
  if (th != NULL) s->throttle_milli_tokens = th->milli_tokens;
  int64_t avail = -1;
  const void *budget = retry__target_budget(t);
  switch ((retry_budget_kind)t->budget) {
    case RETRY_BUDGET_AWS: avail = ((const retry_aws_quota *)budget)->available; break;
    case RETRY_BUDGET_FINAGLE: avail = retry__finagle_balance_at(budget, now_ns); break;
    case RETRY_BUDGET_ENVOY: {
      const retry_envoy_budget *e = budget;
      avail = retry__envoy_budget_max(e) - e->active_retries;
      break;
    }
    case RETRY_BUDGET_TOKEN_BUCKET:
      avail = (int64_t)floor(((const retry_token_bucket *)budget)->balance);
      break;
    case RETRY_BUDGET_NONE: break;
  }
  /* A Finagle sum can dip below zero once deposits expire behind later withdrawals, and an
   * Envoy limit can fall below the retries already holding slots; "available" is then 0, so
   * that -1 keeps meaning "no budget". */
  if (t->budget != RETRY_BUDGET_NONE && avail < 0) avail = 0;
  s->budget_available = avail;
  const retry_adaptive *ad = retry__target_adaptive(t);
  if (ad != NULL) s->adaptive_reject_p = retry__adaptive_probability_at(ad, now_ns);
  if (t->breaker != NULL) {
    s->breaker = retry_breaker_state_get(t->breaker);
    s->breaker_opened = retry_breaker_n_opened(t->breaker);
  }
  s->in_flight = t->in_flight;
  const retry_aws_adaptive *aa = retry__target_aws_adaptive(t);
  if (aa != NULL) s->aws_fill_rate = aa->enabled ? aa->bucket.fill_rate : 0.0;
  const retry_limit *lim = retry__target_limit(t);
  if (lim != NULL) {
    s->limit = lim->limit;
    s->limit_in_flight = lim->in_flight;
  }
  /* The breaker's window is advanced by the check (expired bins are cleared), which is what its
   * next decision does first: a copy is asked, so the read changes nothing. */
  const retry_only_breaker *rb = retry__target_retry_breaker(t);
  if (rb != NULL) {
    retry_only_breaker probe = *rb;
    s->retry_breaker_open = !retry_only_breaker_is_allowed(&probe, now_ns);
  }
}

int64_t retry_target_stats_next_change(const retry_target *t, int64_t now_ns) {
  if (t == NULL) return RETRY_NEVER;
  int64_t next = RETRY_NEVER;
  if ((retry_budget_kind)t->budget == RETRY_BUDGET_FINAGLE)
    next = retry__finagle_next_change(retry__target_budget(t), now_ns);
  const retry_adaptive *ad = retry__target_adaptive(t);
  if (ad != NULL) {
    int64_t a = retry__adaptive_next_change(ad, now_ns);
    if (a < next) next = a;
  }
  return next;
}

retry_throttle *retry_target_throttle(retry_target *t) {
  return t != NULL ? retry__target_throttle(t) : NULL;
}

retry_breaker *retry_target_breaker(retry_target *t) { return t != NULL ? t->breaker : NULL; }

int retry_target_share_throttle(retry_target *t, retry_throttle *shared) {
  if (t == NULL || !t->off_throttle) return RETRY_EINVAL;
  uint16_t off = (uint16_t)(t->off_throttle & ~RETRY__THROTTLE_SHARED);
  void *slot = (char *)t + off;
  if (shared == NULL) {
    /* Its own again, full, as a new target's would be. */
    t->off_throttle = off;
    retry_throttle_init(slot, &t->cfg->throttle);
    return 0;
  }
  /* The slot (a retry_throttle's worth, aligned for one) holds the pointer instead. */
  _Static_assert(sizeof(retry_throttle *) <= sizeof(retry_throttle), "a pointer fits the slot");
  memcpy(slot, &shared, sizeof shared);
  t->off_throttle = (uint16_t)(off | RETRY__THROTTLE_SHARED);
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * Hooks for retry_call.c
 * =================================================================== */

retry_stop retry__target_admit(retry_target *t, int64_t now_ns, const retry_rng *rng) {
  if (t == NULL) return RETRY_STOP_NONE;
  /* Adaptive throttling comes first: it models the client refusing to send at all, and an
   * attempt it refuses must not take a breaker probe. The uniform is drawn only when it can
   * matter (P > 0), so a run without overload consumes no randomness here and keeps the same
   * jitter sequence as a run without adaptive throttling. With P == 0, u = 1 can never be
   * below P: the attempt is only counted. */
  retry_adaptive *ad = retry__target_adaptive(t);
  if (ad != NULL) {
    retry_adaptive_advance(ad, now_ns);
    double p = retry_adaptive_reject_probability(ad);
    double u = 1.0;
    if (p > 0.0) {
      assert(rng != NULL && rng->next != NULL);
      u = retry_rng_uniform(rng);
    }
    if (retry_adaptive_should_reject(ad, now_ns, u)) return RETRY_STOP_THROTTLED;
  }
  if (t->breaker != NULL && !retry_breaker_allow(t->breaker, now_ns))
    return RETRY_STOP_BREAKER_OPEN;
  return RETRY_STOP_NONE;
}

retry_aws_send retry__target_rate_limit(retry_target *t, int64_t now_ns, int64_t *wait_ns) {
  retry_aws_adaptive *aa = t != NULL ? retry__target_aws_adaptive(t) : NULL;
  if (aa == NULL) return RETRY_AWS_SEND_OK;
  return retry_aws_adaptive_before_send(aa, now_ns, wait_ns);
}

bool retry__target_limit_acquire(retry_target *t, bool *held, int64_t *in_flight_at_start) {
  *held = false;
  *in_flight_at_start = 0;
  retry_limit *lim = t != NULL ? retry__target_limit(t) : NULL;
  if (lim == NULL) return true;
  if (!retry_limit_try_acquire(lim)) return false;
  *held = true;
  *in_flight_at_start = lim->in_flight;
  return true;
}

void retry__target_limit_release(retry_target *t, retry_space space, int32_t status, int64_t rtt_ns,
                                 int64_t in_flight_at_start, double u) {
  retry_limit *lim = t != NULL ? retry__target_limit(t) : NULL;
  if (lim == NULL) return;
  bool ok = retry_status_is_ok(space, status);
  bool drop = !ok && retry_status_set_has(&t->cfg->limit_drop_statuses, space, status);
  retry_limit_release(lim, ok || drop, rtt_ns, in_flight_at_start, drop, u);
}

int32_t retry__target_limit_reject_status(const retry_target *t, retry_space space) {
  return space == RETRY_SPACE_HTTP ? t->cfg->limit_reject_http : t->cfg->limit_reject_grpc;
}

bool retry__target_retry_allowed(retry_target *t, int64_t now_ns) {
  retry_only_breaker *rb = t != NULL ? retry__target_retry_breaker(t) : NULL;
  return rb == NULL || retry_only_breaker_is_allowed(rb, now_ns);
}

void retry__target_call_started(retry_target *t, int64_t now_ns) {
  if (t == NULL) return;
  /* Finagle's RetryFilter deposits once per request, the retries of it deposit nothing. */
  if (t->budget == RETRY_BUDGET_FINAGLE)
    retry_finagle_budget_deposit(retry__target_budget(t), now_ns);
  /* Brooker's simulator counts a call and earns per call as the call begins (retry_strategy.py:
   * the bucket fills in the factory's per-call constructor, the breaker counts calls there). */
  if (t->budget == RETRY_BUDGET_TOKEN_BUCKET)
    retry_token_bucket_record_call(retry__target_budget(t));
  retry_only_breaker *rb = retry__target_retry_breaker(t);
  if (rb != NULL) retry_only_breaker_record_call(rb, now_ns);
}

void retry__target_attempt_sent(retry_target *t, int64_t now_ns) {
  (void)now_ns;
  if (t == NULL) return;
  t->in_flight++;
  if (t->budget == RETRY_BUDGET_ENVOY) retry_envoy_budget_request_start(retry__target_budget(t));
}

void retry__target_attempt_done(retry_target *t, int64_t now_ns, retry_space space, int32_t status,
                                int32_t aws_cost) {
  if (t == NULL) return;
  /* Qualifying throttle failures are not recorded here: only the call engine knows whether a
   * status was retryable (or a pushback said stop), which is what A6 counts. Cancelled attempts
   * never come here either; retry_call.c gives back what they hold. */
  assert(t->in_flight > 0);
  if (t->in_flight > 0) t->in_flight--;
  if (t->budget == RETRY_BUDGET_ENVOY) retry_envoy_budget_request_end(retry__target_budget(t));
  bool ok = retry_status_is_ok(space, status);
  if (t->breaker != NULL) {
    if (retry_status_set_has(&t->cfg->breaker.failure_statuses, space, status))
      retry_breaker_record(t->breaker, now_ns, true);
    else if (ok)
      retry_breaker_record(t->breaker, now_ns, false);
    else
      retry__breaker_release(t->breaker); /* neither: a probe permit goes back */
  }
  retry_adaptive *ad = retry__target_adaptive(t);
  if (ad != NULL)
    retry_adaptive_record_response(
        ad, now_ns, !retry_status_set_has(&t->cfg->adaptive.reject_statuses, space, status));
  if (ok) {
    retry_throttle *th = retry__target_throttle(t);
    if (th != NULL) retry_throttle_record_success(th);
    if (t->budget == RETRY_BUDGET_AWS) retry_aws_quota_release(retry__target_budget(t), aws_cost);
    if (t->budget == RETRY_BUDGET_TOKEN_BUCKET)
      retry_token_bucket_record_success(retry__target_budget(t));
  }
  /* Every response, whatever it was, feeds the AWS limiter's measured rate (botocore's
   * on_receiving_response; aws-sdk-go-v2's Update). */
  retry_aws_adaptive *aa = retry__target_aws_adaptive(t);
  if (aa != NULL)
    retry_aws_adaptive_on_response(
        aa, now_ns, retry_status_set_has(&t->cfg->aws_throttle_statuses, space, status));
  /* Brooker's breaker counts every failed attempt, before and whatever the retry decision. */
  retry_only_breaker *rb = retry__target_retry_breaker(t);
  if (rb != NULL && !ok) (void)retry_only_breaker_record_failure(rb, now_ns);
}

bool retry__target_budget_acquire(retry_target *t, int64_t now_ns, int aws_kind,
                                  int32_t *aws_cost, bool *holds_slot) {
  if (aws_cost != NULL) *aws_cost = 0;
  if (holds_slot != NULL) *holds_slot = false;
  if (t == NULL) return true;
  void *budget = retry__target_budget(t);
  switch ((retry_budget_kind)t->budget) {
    case RETRY_BUDGET_NONE: return true;
    case RETRY_BUDGET_AWS: {
      /* The cost goes back to the caller, which hands it to attempt_done for the attempt it
       * pays for: only that attempt's success refunds it. */
      int32_t cost = aws_kind == RETRY__AWS_THROTTLE
                         ? retry_aws_quota_acquire_throttled(budget)
                         : retry_aws_quota_acquire(budget, aws_kind == RETRY__AWS_TIMEOUT);
      if (cost == 0) return false;
      if (aws_cost != NULL) *aws_cost = cost;
      return true;
    }
    case RETRY_BUDGET_FINAGLE:
      /* Nothing to give back later: a Finagle withdrawal is a debit that expires with its slice. */
      return retry_finagle_budget_try_withdraw(budget, now_ns);
    case RETRY_BUDGET_ENVOY:
      /* The slot is held from this decision until the retried attempt ends (or is never
       * sent), as Envoy's router holds retries() from shouldRetry to resetRetry. */
      assert(holds_slot != NULL); /* a slot nobody knows about could never be released */
      if (!retry_envoy_budget_try_acquire(budget)) return false;
      if (holds_slot != NULL) *holds_slot = true;
      return true;
    case RETRY_BUDGET_TOKEN_BUCKET: return retry_token_bucket_try_retry(budget);
  }
  return true;
}

void retry__target_budget_release(retry_target *t) {
  if (t == NULL) return;
  if (t->budget == RETRY_BUDGET_ENVOY) retry_envoy_budget_release(retry__target_budget(t));
}

/* }================================================================== */
