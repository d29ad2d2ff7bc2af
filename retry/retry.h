/*
 * retry.h: the public API of libretry, the retry engine of retrysim.
 *
 * A library a real client can link unchanged: it decides, for one logical call, whether and
 * when to make another attempt. It needs libc (and libm) only; the JSON loader alone uses
 * jansson. It never reads a clock and never owns a random number generator: time comes in as
 * int64_t nanoseconds on the caller's clock (any monotonic origin), randomness comes in as a
 * caller-supplied function. The decision path never allocates.
 *
 * Two kinds of object:
 *   - retry_call: one logical call, caller-owned, fixed size (retry_call_start and friends);
 *   - retry_target: state shared by every call to one target, the way a channel holds it
 *     (gRPC throttle, retry budgets, adaptive throttling, circuit breaker).
 * This header is what an embedding client needs. retry_parts.h adds the target's parts one by
 * one (their state and operations); retry_realtime.h runs calls on a real clock.
 * docs/engine.md explains every rule with its source.
 */
#ifndef RETRY_H
#define RETRY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "retry_aws_adaptive.h" /* the AWS adaptive-mode limiter's config (retry_target_config) */
#include "retry_brooker.h"      /* Brooker's retry breaker and token bucket configs */
#include "retry_limit.h"        /* Netflix concurrency-limits' limit algorithms */

#ifdef __cplusplus
extern "C" {
#endif

#define RETRY_VERSION "0.1.0"

/* {==================================================================
 * Time, randomness, allocation
 * =================================================================== */

#define RETRY_NS_PER_MS INT64_C(1000000)
#define RETRY_NS_PER_S INT64_C(1000000000)
/* The one "no such time" value of the API: no deadline, no timer, no Retry-After time, call not
 * ended. Later than every real time, so comparisons need no special case. Every other int64
 * (0 and negative values included) is an ordinary time on the caller's clock. */
#define RETRY_NEVER INT64_MAX

/* A source of uniform 64-bit values. The engine never seeds it or keeps its state. */
typedef struct retry_rng {
  uint64_t (*next)(void *ctx); /* returns a uniform value in [0, 2^64) */
  void *ctx;                   /* passed to next; owned by the caller */
} retry_rng;

/* Returns a uniform double in [0, 1) drawn from rng (53 random bits). */
double retry_rng_uniform(const retry_rng *rng);

/* Optional allocator for the functions that allocate (*_create, config loading), so tests
 * can inject failures. A NULL retry_allocator pointer means malloc/realloc/free, and so does a
 * NULL field for that one function (a realloc-less allocator gets libc's realloc). */
typedef struct retry_allocator {
  void *(*malloc_fn)(size_t size, void *ctx);
  void *(*realloc_fn)(void *ptr, size_t size, void *ctx);
  void (*free_fn)(void *ptr, void *ctx);
  void *ctx;
} retry_allocator;

/* Fills *out with a copy of a in which every NULL function is libc's (malloc, realloc, free);
 * a NULL a gives libc's three with a NULL ctx. For code built on libretry that takes a
 * retry_allocator too (the simulator's kernel), so that one allocator means the same
 * everywhere. No pointer to a is kept. */
void retry_allocator_resolve(const retry_allocator *a, retry_allocator *out);

/* }================================================================== */

/* {==================================================================
 * Errors
 * =================================================================== */

/* Lets GCC and clang check the format strings of the printf-style functions below. */
#if defined(__GNUC__)
#define RETRY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RETRY_PRINTF(f, a)
#endif

/* Error codes: 0 is success, negative values are errors. Codes are only ever added. */
#define RETRY_ERRNO_MAP(X)                \
  X(OK, 0, "success")                     \
  X(EINVAL, -1, "invalid argument")       \
  X(ENOMEM, -2, "out of memory")          \
  X(EIO, -3, "cannot read input")         \
  X(ESYNTAX, -4, "malformed JSON")        \
  X(ECONFIG, -5, "invalid configuration") \
  X(ERANGE, -6, "value out of range")     \
  X(ENOENT, -7, "not found")

typedef enum retry_errno {
#define RETRY_ERRNO_GEN(name, val, msg) RETRY_##name = (val),
  RETRY_ERRNO_MAP(RETRY_ERRNO_GEN)
#undef RETRY_ERRNO_GEN
} retry_errno;

/* Returns the symbolic name ("RETRY_ECONFIG") of an error code; a static string. */
const char *retry_err_name(int code);
/* Returns a one-line description of an error code; a static string. */
const char *retry_strerror(int code);

/* Details of an error, filled by fallible calls when the pointer is not NULL.
 * The first error wins: a filled retry_error is never overwritten (clear it to reuse it). */
typedef struct retry_error {
  int code;          /* a RETRY_* error code, RETRY_OK when nothing failed */
  char message[160]; /* what was wrong and what is allowed */
  char source[256];  /* file name, or "<string>"; a longer name keeps its end: "..." + tail */
  char path[160];    /* JSON path of the bad value, "$.methodConfig[0].timeout"; "" if none */
  int line;          /* 1-based line from a JSON syntax error, -1 when unknown */
  int column;        /* 1-based column from a JSON syntax error, -1 when unknown */
} retry_error;

/* Sets e, when e is not NULL and still holds no error (code RETRY_OK), to code with a
 * printf-style message; does nothing otherwise, so a later, derived error never hides the
 * cause. source and path may be NULL (stored as ""); line and column are -1 when unknown.
 * Every field is cut to its fixed size, never overflowed; a source (a file name) too long for
 * its field keeps its end, which names the file, behind "...". Allocates nothing, so it can report
 * running out of memory. No pointer is kept. */
void retry_error_set(retry_error *e, int code, const char *source, const char *path, int line,
                     int column, const char *fmt, ...) RETRY_PRINTF(7, 8);
/* retry_error_set with a va_list, for callers that wrap it in their own printf-style function. */
void retry_error_vset(retry_error *e, int code, const char *source, const char *path, int line,
                      int column, const char *fmt, va_list ap) RETRY_PRINTF(7, 0);

/* Resets e to "no error" (code RETRY_OK, line and column -1). e may be NULL. */
void retry_error_clear(retry_error *e);

/* Formats e as "source:line:column: path: message" into buf (size bytes, NUL-terminated when
 * size > 0). An unknown line, column or path is left out; an empty source reads "<input>".
 * Returns the length snprintf would have written. */
int retry_error_format(const retry_error *e, char *buf, size_t size);

/* }================================================================== */

/* {==================================================================
 * Statuses
 * =================================================================== */

/* Which numbering a policy's statuses use: gRPC codes (0..16) or HTTP statuses (100..599),
 * the latter for gateway layers that see HTTP. */
typedef enum retry_space { RETRY_SPACE_GRPC = 0, RETRY_SPACE_HTTP = 1 } retry_space;

/* gRPC status codes (grpc/grpc-proto status/code.proto). */
#define RETRY_GRPC_CODE_MAP(X) \
  X(OK, 0)                     \
  X(CANCELLED, 1)              \
  X(UNKNOWN, 2)                \
  X(INVALID_ARGUMENT, 3)       \
  X(DEADLINE_EXCEEDED, 4)      \
  X(NOT_FOUND, 5)              \
  X(ALREADY_EXISTS, 6)         \
  X(PERMISSION_DENIED, 7)      \
  X(RESOURCE_EXHAUSTED, 8)     \
  X(FAILED_PRECONDITION, 9)    \
  X(ABORTED, 10)               \
  X(OUT_OF_RANGE, 11)          \
  X(UNIMPLEMENTED, 12)         \
  X(INTERNAL, 13)              \
  X(UNAVAILABLE, 14)           \
  X(DATA_LOSS, 15)             \
  X(UNAUTHENTICATED, 16)

typedef enum retry_grpc_code {
#define RETRY_GRPC_GEN(name, val) RETRY_GRPC_##name = (val),
  RETRY_GRPC_CODE_MAP(RETRY_GRPC_GEN)
#undef RETRY_GRPC_GEN
      RETRY_GRPC_N_CODES = 17
} retry_grpc_code;

/* Returns the canonical upper-case name of a gRPC code, or NULL when code is not 0..16. */
const char *retry_grpc_code_name(int code);
/* Parses an upper-case gRPC code name ("UNAVAILABLE"). Returns 0 and sets *code, or
 * RETRY_EINVAL. Names are case-sensitive, as grpc-go and grpc-java accept them. */
int retry_grpc_code_parse(const char *name, int *code);

/* A set of statuses: gRPC codes as a bit mask, HTTP statuses 100..599 as a bitmap. */
typedef struct retry_status_set {
  uint32_t grpc;    /* bit c set: gRPC code c is a member */
  uint64_t http[8]; /* bit (s - 100) set: HTTP status s is a member */
} retry_status_set;

/* Empties s. */
void retry_status_set_clear(retry_status_set *s);
/* Adds one status of the given space. Returns 0, or RETRY_ERANGE when it is out of range. */
int retry_status_set_add(retry_status_set *s, retry_space space, int status);
/* Adds statuses named by a token: for gRPC a code name ("UNAVAILABLE"); for HTTP a number
 * ("503"), a class ("5xx", "4xx", ...), "gateway-error" (502, 503, 504) or "retriable-4xx" (409).
 * Returns 0, or RETRY_EINVAL when the token names nothing in that space. */
int retry_status_set_add_token(retry_status_set *s, retry_space space, const char *token);
/* Returns whether status is a member. */
bool retry_status_set_has(const retry_status_set *s, retry_space space, int status);
/* Returns whether the set has no member in the given space. */
bool retry_status_set_is_empty(const retry_status_set *s, retry_space space);
/* Returns whether status means success in its space: gRPC OK (0), or any HTTP 2xx. Inline:
 * the simulator asks it several times for every call. */
static inline bool retry_status_is_ok(retry_space space, int status) {
  return space == RETRY_SPACE_GRPC ? status == RETRY_GRPC_OK : status >= 200 && status <= 299;
}

/* }================================================================== */

/* {==================================================================
 * Backoff and jitter
 * =================================================================== */

/* How a retry's delay is drawn from the nominal exponential delay
 * d(n) = min(initial * multiplier^(n-1), max) for the n-th retry since the last pushback. */
typedef enum retry_jitter {
  RETRY_JITTER_PROPORTIONAL = 0, /* d * U[1-f, 1+f); gRPC today with f = 0.2 (A6, 2024) */
  RETRY_JITTER_FULL,             /* U[0, d); gRPC before 2024, AWS, Envoy */
  RETRY_JITTER_EQUAL,            /* d/2 + U[0, d/2) (AWS blog 2015) */
  RETRY_JITTER_DECORRELATED,     /* s = min(max, U[initial, 3*s_prev)), s_0 = initial (AWS blog) */
  RETRY_JITTER_POLLY_V2,         /* Polly v8 DecorrelatedJitterBackoffV2, median delay ~ d */
  RETRY_JITTER_NONE,             /* exactly d */
  RETRY_JITTER_LINKERD           /* min(d + U[0, d), max): Linkerd's proxy (exp-backoff, jitter
                                    ratio 1), whose jitter is added above d */
} retry_jitter;

/* Returns the jitter's configuration name ("grpc", "full", ...); a static string. */
const char *retry_jitter_name(retry_jitter j);
/* Parses a jitter name: "grpc" or "proportional", "full", "equal", "decorrelated",
 * "polly-v2", "none", "linkerd". Returns 0, or RETRY_EINVAL. */
int retry_jitter_parse(const char *name, retry_jitter *out);

typedef struct retry_backoff {
  int64_t initial_ns;     /* first retry's nominal delay, > 0 */
  int64_t max_ns;         /* cap on the nominal delay, > 0 */
  double multiplier;      /* growth per retry, > 0 */
  retry_jitter jitter;    /* how the delay is drawn */
  double jitter_fraction; /* f of RETRY_JITTER_PROPORTIONAL, in [0, 1]; gRPC 0.2 */
  bool cap_after_jitter;  /* false: cap d before jitter (gRPC, may exceed max by f);
                             true: also clamp the jittered delay to max (resilience4j, Polly) */
  bool first_delay_exact; /* true: the first delay after the start or a pushback is exactly
                             d(1), unjittered (C-core 1.51's BackOff); later ones are jittered */
  int64_t throttle_initial_ns; /* 0: one initial_ns for every failure; > 0: d(1) after a
                                  throttling status instead (AWS SDKs' 2026 behaviour: 1 s for
                                  throttling, 50 ms else); never with a jitter that carries its
                                  last delay (decorrelated, polly-v2) */
} retry_backoff;

/* Per-call backoff state. Zero it with retry_backoff_state_reset. */
typedef struct retry_backoff_state {
  int n_since_reset; /* retries drawn since the start or the last pushback */
  double cur_ns;     /* nominal delay of the last retry (0 before the first) */
  double prev_ns;    /* decorrelated: last delay; Polly v2: last formula value */
} retry_backoff_state;

/* Restarts the exponent at initial_ns (at call start and after a pushback). */
void retry_backoff_state_reset(retry_backoff_state *st);

/* Draws the delay before the next retry and advances st. Uses rng for every jitter but
 * RETRY_JITTER_NONE. Returns the delay in ns, clamped to [0, INT64_MAX]; never allocates.
 * nominal_ns, when not NULL, receives d(n) before jitter. */
int64_t retry_backoff_next(const retry_backoff *b, retry_backoff_state *st, const retry_rng *rng,
                           int64_t *nominal_ns);

/* }================================================================== */

/* {==================================================================
 * Server pushback: grpc-retry-pushback-ms and Retry-After
 * =================================================================== */

typedef enum retry_pushback_kind {
  RETRY_PUSHBACK_NONE = 0, /* no pushback metadata */
  RETRY_PUSHBACK_DELAY,    /* a valid value >= 0: retry after exactly that delay */
  RETRY_PUSHBACK_STOP,     /* a valid negative value: do not retry */
  RETRY_PUSHBACK_INVALID,  /* unparseable: do not retry */
  RETRY_PUSHBACK_REPEATED  /* more than one value: do not retry */
} retry_pushback_kind;

/* Returns "none", "delay", "stop", "invalid" or "repeated"; a static string. */
const char *retry_pushback_kind_name(retry_pushback_kind k);

/* Parses grpc-retry-pushback-ms values as received (n_values of them, each NUL-terminated).
 * Strict (A6): an ASCII signed 32-bit decimal with no sign other than a leading '-', no
 * unnecessary leading zeros (so "-0", "007", "+5", " 5" are invalid), no other characters.
 * Returns the kind; *delay_ns receives the delay for RETRY_PUSHBACK_DELAY, else 0. */
retry_pushback_kind retry_pushback_parse(const char *const *values, size_t n_values,
                                         int64_t *delay_ns);

/* Parses an HTTP Retry-After value in delta-seconds form ("120"): digits only. Returns 0 and
 * sets *delay_ns, RETRY_EINVAL (an HTTP-date is not parsed here, see below), or RETRY_ERANGE
 * when the delay does not fit in int64 nanoseconds. */
int retry_pushback_parse_retry_after(const char *value, int64_t *delay_ns);

/* Parses an HTTP-date into nanoseconds since the Unix epoch: IMF-fixdate ("Sun, 06 Nov 1994
 * 08:49:37 GMT") and the obsolete RFC 850 and asctime forms RFC 9110 says to accept. Pure
 * computation, no clock. Returns 0 and sets *epoch_ns, or RETRY_EINVAL. A real client moves it
 * to its own clock (its now + epoch_ns - its wall clock's now) and passes that as
 * retry_outcome.retry_after_at_ns. */
int retry_pushback_parse_http_date(const char *value, int64_t *epoch_ns);

/* }================================================================== */

/* {==================================================================
 * Shared per-target state: what a client configures
 *
 * A retry_target holds every part a (client, target) pair shares: the gRPC throttle, one
 * retry budget, adaptive throttling and a circuit breaker. A client fills a
 * retry_target_config (or takes one from retry_config_target) and lets retry_call drive the
 * parts. The parts' own state types and operations (retry_throttle_*, retry_aws_quota_*,
 * retry_finagle_budget_*, retry_envoy_budget_*, retry_adaptive_*, retry_breaker_* beyond its
 * config and state name) are in retry_parts.h, for code that runs or inspects a part by hand.
 * =================================================================== */

/* gRPC retry throttling (A6 retryThrottling), in milli-tokens as grpc-java and C-core keep it.
 * No defaults to fill: A6 has none, both fields come from the service config. */
typedef struct retry_throttle_config {
  int64_t max_milli_tokens;  /* maxTokens * 1000; maxTokens in (0, 1000] */
  int64_t token_ratio_milli; /* tokenRatio * 1000, truncated to 3 decimals; > 0 */
} retry_throttle_config;

/* AWS SDK retry quota (standard mode, aws-sdk-go-v2 defaults before 2026). */
typedef struct retry_aws_quota_config {
  int32_t capacity;           /* bucket size and start value, >= 0; default 500 */
  int32_t retry_cost;         /* taken for a retry, >= 1; default 5 */
  int32_t timeout_cost;       /* taken for a retry after a timeout, >= 1; default 10 */
  int32_t no_retry_increment; /* added when a first attempt succeeds, >= 0; default 1 */
  int32_t throttle_cost;      /* taken for a retry after a throttling status, >= 1; 0: none,
                                 retry_cost applies (before 2026; 5 in the 2026 behaviour) */
  retry_status_set
      timeout_statuses; /* which statuses are timeouts (default DEADLINE_EXCEEDED, 504) */
} retry_aws_quota_config;

/* Fills cfg with the AWS standard-mode defaults above. */
void retry_aws_quota_config_init(retry_aws_quota_config *cfg);

/* Finagle / Linkerd ratio retry budget: percent of recent requests plus a reserve per second. */
typedef struct retry_finagle_budget_config {
  int64_t ttl_ns;              /* how long a deposit counts, in [1 s, 60 s]; default 10 s */
  int32_t min_retries_per_sec; /* reserve, >= 0; default 10 */
  double percent_can_retry;    /* retries per request, in [0, 1000] (0.2 = 20 %); default 0.2 */
} retry_finagle_budget_config;

/* Fills cfg with Finagle's RetryBudget() defaults above. */
void retry_finagle_budget_config_init(retry_finagle_budget_config *cfg);

/* Envoy retry budget: concurrent retries limited to a percent of active requests. */
typedef struct retry_envoy_budget_config {
  double budget_percent;         /* percent of active requests, in [0, 100]; default 20.0 */
  int32_t min_retry_concurrency; /* floor, >= 0; default 3 */
} retry_envoy_budget_config;

/* Fills cfg with Envoy's RetryBudget defaults above. */
void retry_envoy_budget_config_init(retry_envoy_budget_config *cfg);

/* Client-side adaptive throttling (Google SRE book, "Handling Overload"). */
typedef struct retry_adaptive_config {
  double k;          /* accepts multiplier K, finite and >= 1; default 2.0 */
  int64_t window_ns; /* history length, >= 100 ns (one per bin); default 120 s */
  double padding;    /* denominator padding, >= 0: requests + padding; SRE 1, grpc-go RLS 8 */
  retry_status_set reject_statuses; /* responses that count as "not accepted" (default
                                       RESOURCE_EXHAUSTED, UNAVAILABLE, 429, 503) */
} retry_adaptive_config;

/* Fills cfg with the SRE book's defaults above. */
void retry_adaptive_config_init(retry_adaptive_config *cfg);

/* Circuit breakers. */
typedef enum retry_breaker_kind {
  RETRY_BREAKER_CONSECUTIVE = 0, /* open after failure_threshold failures in a row */
  RETRY_BREAKER_COUNT_WINDOW,    /* failure rate over the last window_size calls */
  RETRY_BREAKER_TIME_WINDOW      /* failure rate over the last window_size seconds */
} retry_breaker_kind;

typedef enum retry_breaker_state {
  RETRY_BREAKER_CLOSED = 0,
  RETRY_BREAKER_OPEN,
  RETRY_BREAKER_HALF_OPEN
} retry_breaker_state;

/* Returns "closed", "open", "half_open"; a static string. */
const char *retry_breaker_state_name(retry_breaker_state s);

typedef struct retry_breaker_config {
  retry_breaker_kind kind;
  int32_t failure_threshold;     /* consecutive: failures in a row that open it, >= 1 */
  double failure_rate_threshold; /* windows: percent in (0, 100] that opens it; default 50 */
  int32_t window_size;           /* windows: calls (count) or seconds (time), >= 1; default 100 */
  int32_t minimum_calls;         /* windows: no decision below this many calls, >= 1 */
  int64_t open_duration_ns;      /* time spent open before half-open, > 0 */
  int32_t half_open_calls;       /* probes permitted in half-open, >= 1 */
  retry_status_set failure_statuses; /* which statuses count as failures */
} retry_breaker_config;

/* Fills cfg with the defaults of a breaker of the given kind: for the window kinds
 * resilience4j's (rate 50 %, window 100, minimum 100 calls, 60 s open, 10 probes), for
 * CONSECUTIVE 5 failures in a row, 30 s open, 1 probe; failures are UNKNOWN,
 * DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE, DATA_LOSS and HTTP 5xx. */
void retry_breaker_config_init(retry_breaker_config *cfg, retry_breaker_kind kind);

/* Which retry budget a target carries (at most one). */
typedef enum retry_budget_kind {
  RETRY_BUDGET_NONE = 0,
  RETRY_BUDGET_AWS,
  RETRY_BUDGET_FINAGLE,
  RETRY_BUDGET_ENVOY,
  RETRY_BUDGET_TOKEN_BUCKET /* Brooker's retry token bucket, earning per call */
} retry_budget_kind;

/* Returns "none", "aws", "finagle", "envoy", "token_bucket"; a static string. */
const char *retry_budget_kind_name(retry_budget_kind k);

/* The shared state of one (client, target) pair: any combination of the parts. */
typedef struct retry_target_config {
  bool has_throttle;
  bool throttle_per_process;           /* the profile keeps one throttle per server name for the
                                          whole process (retry_profile.throttle_per_process):
                                          a program holding several targets toward one server
                                          shares one bucket among them
                                          (retry_target_share_throttle); the engine itself
                                          never reads it */
  retry_throttle_config throttle;      /* when has_throttle */
  retry_budget_kind budget;            /* which of the next three applies */
  retry_aws_quota_config aws;          /* when budget is RETRY_BUDGET_AWS */
  retry_finagle_budget_config finagle; /* when budget is RETRY_BUDGET_FINAGLE */
  retry_envoy_budget_config envoy;     /* when budget is RETRY_BUDGET_ENVOY */
  bool has_adaptive;
  retry_adaptive_config adaptive; /* when has_adaptive */
  bool has_breaker;
  retry_breaker_config breaker; /* when has_breaker */
  /* The parts below live in one block the target allocates only when one of them is on, so a
   * target without them stays as small as before. */
  retry_token_bucket_config token_bucket;  /* when budget is RETRY_BUDGET_TOKEN_BUCKET */
  bool has_aws_adaptive;                   /* AWS SDKs' retry_mode = adaptive rate limiter */
  retry_aws_adaptive_config aws_adaptive;  /* when has_aws_adaptive */
  retry_status_set aws_throttle_statuses;  /* responses it counts as throttles (the SDKs' error
                                              codes, mapped to statuses: default
                                              RESOURCE_EXHAUSTED and 429) */
  bool has_retry_breaker;                  /* Brooker's retry-only circuit breaker */
  retry_only_breaker_config retry_breaker; /* when has_retry_breaker */
  bool has_limit;                          /* a concurrency limiter on the logical calls */
  retry_limit_config limit;                /* when has_limit */
  int32_t limit_reject_grpc;               /* status of a call the limiter refuses, gRPC
                                              space: UNAVAILABLE (the library's interceptor) */
  int32_t limit_reject_http;               /* the same in the HTTP space: 503 */
  retry_status_set limit_drop_statuses;    /* final statuses that are drops (onDropped):
                                              UNAVAILABLE and 503; OK is a success, any other
                                              status is ignored (onIgnore) */
} retry_target_config;

typedef struct retry_target retry_target;

/* Zeroes cfg: no throttle, no budget, no adaptive throttling, no breaker. The parts' configs
 * are zeroed too, not defaulted: fill the ones you turn on with their *_config_init. */
void retry_target_config_init(retry_target_config *cfg);
/* Validates cfg and creates the parts it turns on, their clocks starting at now_ns. Copies
 * cfg. alloc may be NULL. NULL on bad config (RETRY_ECONFIG, path "breaker.window_size" and the
 * like) or no memory (RETRY_ENOMEM), details in err. Returns a new target state; free with
 * retry_target_destroy. A target holds only the parts cfg turns on. */
retry_target *retry_target_create(const retry_target_config *cfg, int64_t now_ns,
                                  const retry_allocator *alloc, retry_error *err);
/* Returns the bytes of storage retry_target_init needs for cfg: a header and the parts cfg
 * turns on (64 bytes with a gRPC throttle alone), a multiple of 8. */
size_t retry_target_size(const retry_target_config *cfg);
/* retry_target_create in the caller's storage, for many targets sharing one config (a fleet
 * of clients): storage holds size >= retry_target_size(cfg) bytes aligned for int64_t and
 * double (any malloc'd block, or an array of blocks each a multiple of the size), and cfg is
 * borrowed, not copied: it must outlive the target. Only a breaker (when cfg has one) is
 * allocated, through alloc. Returns storage as a target, or NULL: bad config (RETRY_ECONFIG),
 * size too small (RETRY_EINVAL) or no memory for the breaker (RETRY_ENOMEM), details in err.
 * Release it with retry_target_destroy, which then frees the breaker and leaves the storage
 * to the caller. */
retry_target *retry_target_init(void *storage, size_t size, const retry_target_config *cfg,
                                int64_t now_ns, const retry_allocator *alloc, retry_error *err);
/* Frees t (made by retry_target_create), or what t holds (made by retry_target_init); NULL is
 * a no-op. No call may still use it. */
void retry_target_destroy(retry_target *t);
/* Returns whether cfg turns on any part, i.e. whether a call needs a target at all (a caller
 * may run calls of a config without parts with a NULL target). */
bool retry_target_config_has_parts(const retry_target_config *cfg);
/* Fills s with the statuses the AWS adaptive limiter counts as throttles unless told
 * otherwise: gRPC RESOURCE_EXHAUSTED and HTTP 429 (docs/shared-state.md, "Throttling in a
 * simulated world"). */
void retry_aws_throttle_statuses_init(retry_status_set *s);
/* Turns cfg's concurrency limiter on with kind's defaults: retry_limit_config_init, reject
 * statuses UNAVAILABLE and 503, drop statuses UNAVAILABLE and 503. */
void retry_target_config_set_limit(retry_target_config *cfg, retry_limit_kind kind);

/* A snapshot for time series and logs. */
typedef struct retry_target_stats {
  int64_t throttle_milli_tokens; /* -1 without throttle */
  int64_t budget_available;    /* AWS tokens, Finagle balance, Envoy free slots, >= 0; -1 without */
  double adaptive_reject_p;    /* -1 without adaptive throttling */
  retry_breaker_state breaker; /* CLOSED without breaker; an expired OPEN still reads OPEN */
  int64_t breaker_opened;      /* times opened */
  int64_t in_flight;           /* attempts in flight through this target */
  double aws_fill_rate;        /* AWS adaptive limiter: its bucket's fill rate, sends per s,
                                  while enabled; 0 before the first throttle; -1 without */
  bool retry_breaker_open;     /* Brooker's retry breaker refuses retries now (false without) */
  int32_t limit;               /* the concurrency limit, -1 without a limiter */
  int64_t limit_in_flight;     /* calls holding a permit of it (0 without) */
} retry_target_stats;

/* Fills s with the target's state as its next decision at now_ns would see it: the Finagle
 * budget's balance and the adaptive throttler's probability over their windows as of now_ns
 * (slices and bins that have expired by then left out). A pure read: t is not changed, so
 * sampling a target (a time series every second, a log line) never changes a later decision.
 * It does not move an expired OPEN breaker to HALF_OPEN (only an attempt does). t may be NULL
 * (every part absent). */
void retry_target_stats_get(const retry_target *t, int64_t now_ns, retry_target_stats *s);

/* The earliest time after now_ns at which retry_target_stats_get may report another Finagle
 * balance or adaptive reject probability though no call touched t in between (a slice or bin
 * that holds deposits or requests expires then); RETRY_NEVER when neither can change (t NULL,
 * neither part, or nothing left to expire). Every other figure changes only in calls on t. A
 * sampler can thus read again only the targets called since its last read and those whose
 * time has come (models/: the time series' gauges). */
int64_t retry_target_stats_next_change(const retry_target *t, int64_t now_ns);

/* }================================================================== */

/* {==================================================================
 * Policies
 * =================================================================== */

typedef enum retry_policy_kind {
  RETRY_POLICY_NONE = 0, /* one attempt */
  RETRY_POLICY_RETRY,    /* A6 retryPolicy */
  RETRY_POLICY_HEDGE     /* A6 hedgingPolicy */
} retry_policy_kind;

typedef enum retry_stream_kind {
  RETRY_STREAM_UNARY = 0,
  RETRY_STREAM_CLIENT, /* client streaming: never retried */
  RETRY_STREAM_SERVER, /* server streaming: retried only with retry_streaming + allowlist */
  RETRY_STREAM_BIDI    /* never retried */
} retry_stream_kind;

/* gRPC's default cap on maxAttempts (grpc-go, grpc-java, C-core). */
#define RETRY_GRPC_MAX_ATTEMPTS_LIMIT 5
/* Hedges in flight are tracked in a 64-bit mask. */
#define RETRY_MAX_HEDGED_ATTEMPTS 64
/* gRPC's default per-RPC retry buffer (grpc-go, C-core): 256 KiB. */
#define RETRY_DEFAULT_BUFFER_BYTES (256 * 1024)

/* What a method may do. A plain struct: clients may fill it by hand or load it from a gRPC
 * service config (retry_config_load_*). Strings are borrowed, not copied. */
typedef struct retry_policy {
  retry_policy_kind kind;
  retry_space space;               /* numbering of all statuses below and in outcomes */
  int32_t max_attempts;            /* effective attempts including the original, >= 1 (a
                                      call sends at most RETRY_CALL_MAX_ATTEMPTS) */
  int32_t max_attempts_configured; /* as written, before the clamp */
  retry_backoff backoff;           /* retry policies */
  retry_status_set retryable;      /* retry: retryableStatusCodes; hedge: nonFatalStatusCodes */
  int64_t hedging_delay_ns;        /* hedge: delay between hedges, 0 = all at once */
  int64_t per_attempt_timeout_ns;  /* 0 = none: each attempt gets what is left of the deadline */
  int64_t retry_buffer_bytes;      /* commit once the request exceeds this; 0 = unlimited */
  bool retry_streaming;            /* opt-in: retry server streams (with the allowlist) */
  bool honor_retry_after;          /* HTTP: a valid Retry-After replaces the backoff */
  bool wait_for_deadline;          /* true (default): when the next attempt cannot start
                                      before the deadline, end the call at the deadline with
                                      DEADLINE_EXCEEDED, as C-core, grpc-go and grpc-java do;
                                      false: stop at once with the last status */
  const char *const *idempotent_methods; /* allowlist of full method names ("/svc/Method") */
  size_t n_idempotent_methods;
  bool has_idempotent_allowlist; /* true: methods not in the list are never retried */
  int32_t local_reject_status;   /* status of calls refused locally (breaker, adaptive
                                    throttling); default UNAVAILABLE / 503 */
  bool hedging_ignored;          /* set by a profile whose implementation ignores hedgingPolicy: the
                                    config had one, the policy makes one attempt (kind NONE) */
} retry_policy;

/* Fills p with "no retries" in the given space: kind NONE, one attempt, no statuses, gRPC's
 * example backoff (100 ms, x2, capped at 1 s before a 0.2 proportional jitter), 256 KiB retry
 * buffer, Retry-After honoured, local rejections UNAVAILABLE (gRPC) or 503 (HTTP), the call
 * ending at its deadline when no attempt fits (wait_for_deadline), no allowlist, no
 * per-attempt timeout, no hedging delay: the "grpc" profile's rules. */
void retry_policy_init(retry_policy *p, retry_space space);

/* Sets max_attempts from a configured value and a client cap (gRPC: 5). Values above the
 * cap are silently clamped, as gRPC does; limit <= 0 means no cap. Either way the result is at
 * most RETRY_CALL_MAX_ATTEMPTS (32767), the most attempts the engine sends in one call. */
void retry_policy_set_max_attempts(retry_policy *p, int32_t configured, int32_t limit);

/* Checks p as gRPC validates a retry or hedging policy plus the engine's own rules. Returns 0
 * or RETRY_ECONFIG with details in err (path relative to the policy, e.g. "maxAttempts"). */
int retry_policy_validate(const retry_policy *p, retry_error *err);

/* Returns whether method is in p's idempotent allowlist (true when p has no allowlist). */
bool retry_policy_is_idempotent(const retry_policy *p, const char *method);

/* Worst-case attempts at the bottom of a chain of layers, each running its own policy:
 * the product of every layer's max_attempts (3 x 3 x 3 = 27). Saturates at UINT64_MAX.
 * chain[i] may be NULL (a layer without retries counts 1). */
uint64_t retry_policy_layers_worst_case(const retry_policy *const *chain, size_t n);

/* }================================================================== */

/* {==================================================================
 * Implementation profiles (retry_profile.c)
 *
 * What a given gRPC implementation actually does where implementations differ, so that a
 * policy can name the client it models ("retrysim": {"profile": "grpc-core-1.51"}). A profile
 * sets defaults on a policy; the extension block's explicit keys still win over it (a "jitter"
 * key replaces the profile's whole jitter rule: first_delay_exact is cleared with it).
 * docs/service-config.md lists each rule with the source it was read from.
 * =================================================================== */

typedef struct retry_profile {
  const char *name;          /* "grpc" (the default), "grpc-core-1.51", "grpc-go-1.85", ... */
  const char *description;   /* one line: what it models and where its rules come from */
  bool first_delay_jittered; /* false: retry_backoff.first_delay_exact */
  bool wait_for_deadline;    /* retry_policy.wait_for_deadline */
  bool hedging_supported;    /* false: a hedgingPolicy is ignored (one attempt, a warning) */
  bool throttle_per_process; /* the implementation keeps one throttle per server name for the
                                whole process (copied to retry_target_config, which the
                                simulator follows); else one per channel */
  retry_jitter jitter;       /* its jitter and fraction */
  double jitter_fraction;
} retry_profile;

/* The default profile ("grpc"): the rules gRPC implementations agree on. */
const retry_profile *retry_profile_default(void);
/* Returns the profile of that name, or NULL. */
const retry_profile *retry_profile_find(const char *name);
/* Returns the i-th profile (0 is the default), or NULL past the last; for listings. */
const retry_profile *retry_profile_at(size_t i);
/* Applies pr's rules to p (filled from a service config, before the extension's explicit
 * options): the jitter, first_delay_exact, wait_for_deadline, and for an implementation
 * without hedging a hedgingPolicy becomes one attempt with hedging_ignored set. */
void retry_profile_apply(const retry_profile *pr, retry_policy *p);

/* }================================================================== */

/* {==================================================================
 * A logical call
 * =================================================================== */

/* Why a call stopped: exactly one per logical call. */
#define RETRY_STOP_MAP(X)                                                           \
  X(NONE, "none") /* not stopped yet */                                             \
  X(OK, "ok")                                                                       \
  X(NON_RETRYABLE_STATUS, "non_retryable_status")                                   \
  X(METHOD_NOT_IDEMPOTENT, "method_not_idempotent")                                 \
  X(MAX_ATTEMPTS, "max_attempts")                                                   \
  X(DEADLINE, "deadline")                                                           \
  X(PUSHBACK_STOP, "pushback_stop")                                                 \
  X(THROTTLED, "throttled")                                                         \
  X(BUDGET_EXHAUSTED, "budget_exhausted")                                           \
  X(BREAKER_OPEN, "breaker_open")                                                   \
  X(COMMITTED, "committed")                                                         \
  X(STREAMING, "streaming")                                                         \
  X(NO_RETRY_POLICY, "no_retry_policy") /* a failure where no policy could retry */ \
  X(CANCELLED, "cancelled")             /* the caller cancelled it (retry_call_cancel) */

typedef enum retry_stop {
#define RETRY_STOP_GEN(name, str) RETRY_STOP_##name,
  RETRY_STOP_MAP(RETRY_STOP_GEN)
#undef RETRY_STOP_GEN
      RETRY_STOP_N
} retry_stop;

/* Returns the stop reason's name ("max_attempts"); a static string. */
const char *retry_stop_name(retry_stop s);

/* What the caller must do next. */
typedef enum retry_action {
  RETRY_ACTION_SEND = 0, /* send attempt `attempt` now; give up on it at attempt_deadline_ns */
  RETRY_ACTION_WAIT,     /* nothing to send now: call retry_call_wake at wake_ns (if not
                            RETRY_NEVER) and report outcomes of attempts in flight */
  RETRY_ACTION_DONE      /* the call is over: deliver status at done_ns */
} retry_action;

/* Returns "send", "wait", "done"; a static string. */
const char *retry_action_name(retry_action a);

/* One decision. Each decision's wake_ns replaces the timer of the one before. */
typedef struct retry_decision {
  retry_action action;
  int32_t attempt;             /* SEND: 1-based number of the attempt to send; WAIT after
                                  retry_call_on_headers: the attempt committed to */
  int64_t attempt_deadline_ns; /* SEND: abandon the attempt at this time (deadline or
                                  per-attempt timeout), RETRY_NEVER if none */
  int64_t wake_ns;             /* SEND and WAIT: call retry_call_wake at this time, or
                                  RETRY_NEVER (wait for outcomes only) */
  bool cancel_others;          /* WAIT after retry_call_on_headers: cancel every attempt in
                                  flight except `attempt`; DONE: cancel every one in flight */
  int32_t status;              /* DONE: the call's final status */
  retry_stop reason;           /* DONE: why it stopped */
  int64_t done_ns;             /* DONE: when the call ends (now, or the deadline) */
} retry_decision;

/* The outcome of one attempt, as the transport saw it. */
typedef struct retry_outcome {
  int32_t status;              /* in the policy's space; DEADLINE_EXCEEDED / 504 when the
                                  caller abandoned the attempt at its deadline */
  const char *const *pushback; /* grpc-retry-pushback-ms values as received, or NULL */
  size_t n_pushback;           /* how many values */
  const char *retry_after;     /* HTTP Retry-After as received, or NULL */
  int64_t retry_after_at_ns;   /* an HTTP-date Retry-After already converted to the
                                  caller's clock (any time, 0 included; one in the past
                                  means retry now), or RETRY_NEVER for none */
  bool headers_received;       /* response headers arrived: the call is committed */
  int64_t request_bytes;       /* request bytes sent in this attempt (commit past buffer) */
  int64_t stream_items;        /* server streaming: messages received in this attempt */
} retry_outcome;

/* Fills o for an attempt that ended with status: no pushback, no Retry-After (retry_after
 * NULL, retry_after_at_ns RETRY_NEVER), no headers, no bytes, no stream items. Start every
 * outcome with it: a zeroed retry_outcome carries a Retry-After time of 0. */
void retry_outcome_init(retry_outcome *o, int32_t status);

/* What the engine traces: one record per decision. */
typedef enum retry_trace_event {
  RETRY_TRACE_START = 0,
  RETRY_TRACE_OUTCOME,
  RETRY_TRACE_WAKE,
  RETRY_TRACE_HEADERS,
  RETRY_TRACE_CANCEL /* the caller cancelled the call (retry_call_cancel) */
} retry_trace_event;

/* Where the delay before the next attempt (retry_trace_rec.backoff_ns) came from. */
typedef enum retry_delay_source {
  RETRY_DELAY_NONE = 0,   /* no delay chosen by this event */
  RETRY_DELAY_BACKOFF,    /* drawn from the policy's backoff (jitter included) */
  RETRY_DELAY_PUSHBACK,   /* a valid grpc-retry-pushback-ms value, used as it is */
  RETRY_DELAY_RETRY_AFTER /* an HTTP Retry-After (seconds or date), used as it is */
} retry_delay_source;

/* Returns "none", "backoff", "pushback", "retry_after"; a static string. */
const char *retry_delay_source_name(retry_delay_source s);
/* "start", "outcome", "wake", "headers" or "cancel": the event's name in traces. */
const char *retry_trace_event_name(retry_trace_event e);

/* A record is filled only when the call has a trace function: a call without one pays a NULL
 * test or two per event (its ext, then the function) and nothing else. Everything borrowed is
 * valid in the callback only. */
typedef struct retry_trace_rec {
  uint64_t call_id;
  retry_trace_event event;            /* what the engine was told */
  int64_t now_ns;                     /* when */
  int32_t attempt;                    /* attempt the event is about (outcome, headers), else 0 */
  int32_t status;                     /* outcome's status, -1 if none */
  retry_pushback_kind pushback;       /* pushback parsed from the outcome (gRPC space only) */
  int64_t pushback_ns;                /* its delay for RETRY_PUSHBACK_DELAY */
  const char *const *pushback_values; /* outcome: grpc-retry-pushback-ms values as received
                                         (borrowed), NULL if none */
  size_t n_pushback_values;           /* how many */
  const char *retry_after;            /* outcome: HTTP Retry-After as received, or NULL */
  int64_t backoff_ns;                 /* delay chosen before the next attempt, -1 if none */
  int64_t backoff_nominal_ns;         /* RETRY_DELAY_BACKOFF: the delay before jitter, else -1 */
  retry_delay_source delay_source;    /* where backoff_ns came from */
  int64_t throttle_milli_tokens;      /* after the event, -1 without throttle */
  bool has_target;                    /* the call has shared state; before and after valid */
  retry_target_stats before;          /* the target as the event found it */
  retry_target_stats after;           /* the target as the event left it */
  const retry_decision *decision;     /* what the engine answered (borrowed) */
} retry_trace_rec;

typedef void (*retry_trace_fn)(void *ctx, const retry_trace_rec *rec);

/* Formats a record as one JSON object without a newline. Returns the length snprintf would
 * have written. */
int retry_trace_format(const retry_trace_rec *rec, char *buf, size_t size);

/* The state only some calls use (hedging, the Envoy and AWS retry budgets, a concurrency
 * limiter, the AWS adaptive limiter, tracing, stream messages), kept apart so that a call
 * without them holds none of it: caller-owned like the call, handed to retry_call_start
 * through retry_call_opts.ext when retry_call_ext_needed says so (it may be given to any
 * call), and borrowed for the life of the call. Every field is private: read the stream
 * counts with retry_call_stream_items and retry_call_stream_duplicates. */
typedef struct retry_call_ext {
  uint64_t id;               /* from the options: for traces */
  int64_t stream_items;      /* messages delivered, replays included */
  int64_t stream_duplicates; /* messages delivered again by a replayed stream */
  int64_t stream_items_prev; /* messages received by earlier attempts */
  retry_trace_fn trace;      /* from the options, or NULL */
  void *trace_ctx;
  uint64_t in_flight;               /* hedging: bit k-1, attempt k in flight */
  uint64_t budget_held;             /* Envoy: bit k-1 (hedging), bit 0 (the one attempt in
                                       flight of a retry policy) holds a budget slot */
  int64_t limit_in_flight_at_start; /* the limiter's in-flight count its acquire left */
  int32_t aws_paid_attempt;         /* the last attempt sent with an AWS cost taken, 0 if none */
  int32_t aws_paid_cost;            /* the cost aws_paid_attempt took (refunded if it succeeds) */
  int32_t pending_aws_cost;         /* AWS cost granted for the retry or hedge not yet sent */
  int32_t last_status;              /* hedging: the status of the last attempt reported */
  bool pending_slot;                /* an Envoy slot granted for the retry or hedge not yet sent */
  bool send_delayed; /* the AWS adaptive limiter held the next attempt back: the wake at
                        next_send_ns sends it (its budget grant already taken) */
  bool limit_held;   /* the call holds a permit of the target's concurrency limiter */
  uint8_t blocked;   /* retry_stop, hedging: why no more hedges may be sent */
} retry_call_ext;

/* How a call starts. */
typedef struct retry_call_opts {
  uint64_t call_id;         /* for traces */
  const char *method;       /* "/service/Method" for the idempotent allowlist, or NULL */
  retry_stream_kind stream; /* unary by default */
  int64_t deadline_ns;      /* absolute deadline of the whole call, or RETRY_NEVER */
  retry_rng rng;            /* randomness for jitter and adaptive throttling */
  retry_trace_fn trace;     /* called on every decision, or NULL */
  void *trace_ctx;
  bool stream_items;   /* its outcomes may report stream_items > 0 (any stream kind but unary
                          may, whatever this says): such a call needs an ext to count them */
  retry_call_ext *ext; /* storage for the optional state: required when retry_call_ext_needed
                          is true, else may be NULL */
} retry_call_opts;

/* Whether a call of policy p on target t (NULL: none) started with o needs a retry_call_ext:
 * true for a hedging policy, a traced call (o->trace set), a stream (o->stream not unary) or
 * a call whose outcomes may carry stream messages (o->stream_items), and a target with an
 * Envoy or AWS retry budget, a concurrency limiter or the AWS adaptive limiter; false
 * otherwise (a unary retry policy with a throttle, a breaker, adaptive throttling, a Finagle
 * or Brooker budget). An outcome of a call without an ext must report no stream messages. */
bool retry_call_ext_needed(const retry_policy *p, const retry_target *t, const retry_call_opts *o);

/* The most attempts one call sends, the original included: a policy allowing more stops
 * there, with reason max_attempts (retry_policy_set_max_attempts clamps to it). */
#define RETRY_CALL_MAX_ATTEMPTS INT16_MAX

/* One logical call: caller-owned, fixed size (88 bytes on LP64), no allocation. Fields are
 * grouped as read-only (valid at any time, but status: once done) and private. The state only
 * some calls use is in its retry_call_ext. */
typedef struct retry_call {
  /* read-only */
  const retry_policy *policy; /* borrowed at the start */
  retry_target *target;       /* borrowed at the start, or NULL */
  retry_call_ext *ext;        /* the options' ext, or NULL */
  retry_rng rng;              /* the options': jitter and adaptive throttling */
  int64_t start_ns;           /* when retry_call_start ran */
  int64_t deadline_ns;        /* absolute deadline of the call, RETRY_NEVER if none */
  int64_t backoff_total_ns;   /* time spent waiting between attempts */
  int16_t n_attempts;         /* attempts sent, the original included, at most
                                 RETRY_CALL_MAX_ATTEMPTS (retry_call_retries and
                                 retry_call_hedges say how many of them were which) */
  uint8_t n_in_flight;        /* attempts sent and not yet reported (at most 64 hedges) */
  uint8_t reason;             /* retry_stop: stop reason once done */
  bool done;
  /* private: ordered by size so that nothing pads (a call in flight is held by the
   * thousand; of retry_call_opts only what decisions read is kept, the rest in ext). A retry
   * policy has at most one attempt in flight, the last one sent; a hedging policy's are the
   * bits of ext->in_flight. The backoff state is packed (retry_backoff_state's n_since_reset,
   * and of cur_ns and prev_ns the one the policy's jitter carries) and its storage holds the
   * final status once the call is done, when no backoff is drawn any more. */
  bool idempotent : 1;
  bool committed : 1;
  unsigned stream : 2; /* retry_stream_kind, from the options */
  uint16_t backoff_n;  /* backoff draws since the start or the last pushback */
  union {
    double backoff_carried; /* until done: cur_ns, or prev_ns (decorrelated, Polly v2) */
    int32_t status;         /* read-only, once done: the final status (retry_call_status) */
  };
  union {
    int64_t next_send_ns; /* until done: pending attempt or hedge time, RETRY_NEVER if none */
    int64_t end_ns;       /* once done: the final decision's done_ns (retry_call_end_ns) */
  };
} retry_call;

/* The final status once the call is done; -1 until then. */
static inline int32_t retry_call_status(const retry_call *c) { return c->done ? c->status : -1; }

/* The final decision's done_ns; RETRY_NEVER until the call is done. */
static inline int64_t retry_call_end_ns(const retry_call *c) {
  return c->done ? c->end_ns : RETRY_NEVER;
}

/* Attempts sent after a failure (a retry policy's attempts past the first), and attempts sent
 * as hedges (a hedging policy's past the first). */
static inline int32_t retry_call_retries(const retry_call *c) {
  return c->n_attempts > 1 && c->policy->kind == RETRY_POLICY_RETRY ? c->n_attempts - 1 : 0;
}
static inline int32_t retry_call_hedges(const retry_call *c) {
  return c->n_attempts > 1 && c->policy->kind == RETRY_POLICY_HEDGE ? c->n_attempts - 1 : 0;
}
/* Server streaming: messages delivered, replays included, and messages delivered again by a
 * replayed stream (0 for a call without an ext, whose outcomes carry none). */
static inline int64_t retry_call_stream_items(const retry_call *c) {
  return c->ext != NULL ? c->ext->stream_items : 0;
}
static inline int64_t retry_call_stream_duplicates(const retry_call *c) {
  return c->ext != NULL ? c->ext->stream_duplicates : 0;
}

/* Starts a logical call at now_ns and returns the first decision in d: SEND attempt 1, or
 * DONE when it is refused locally (breaker_open, throttled by adaptive throttling) or the
 * deadline has passed. p and t are borrowed for the life of the call (t may be NULL), and so
 * is o->ext (NULL only when retry_call_ext_needed(p, t, o) is false); they must outlive it.
 * Never allocates. */
void retry_call_start(retry_call *c, const retry_policy *p, retry_target *t,
                      const retry_call_opts *o, int64_t now_ns, retry_decision *d);

/* Reports the outcome of attempt `attempt` at now_ns and returns the next decision. o is
 * read during the call only. The outcome of an attempt that is not in flight (cancelled, or
 * reported before) changes nothing. */
void retry_call_on_outcome(retry_call *c, int32_t attempt, const retry_outcome *o, int64_t now_ns,
                           retry_decision *d);

/* Reports that the timer of the last decision fired (a backoff ended, or a hedge is due). */
void retry_call_wake(retry_call *c, int64_t now_ns, retry_decision *d);

/* Reports that response headers of attempt `attempt` arrived at now_ns: the call commits to it
 * (no more retries or hedges) and the WAIT decision asks to cancel the other attempts in
 * flight. Headers of an opted-in server stream do not commit (the stream is replayed from
 * its start instead); headers of an unknown attempt change nothing. */
void retry_call_on_headers(retry_call *c, int32_t attempt, int64_t now_ns, retry_decision *d);

/* The status of a cancelled call: CANCELLED in the gRPC space, 499 ("client closed request",
 * the status grpc-gateway maps CANCELLED to) in the HTTP space. */
#define RETRY_HTTP_CANCELLED 499

/* The caller cancels the call at now_ns (it no longer wants the result: a k-of-n fan-out
 * reached k, a parent gave up). The answer is DONE at now_ns with reason
 * RETRY_STOP_CANCELLED, status CANCELLED (or RETRY_HTTP_CANCELLED in the HTTP space) and
 * cancel_others set when attempts were in flight: the caller stops waiting for them. Everything
 * the call holds is given back as when any call ends: the attempts in flight leave the
 * target's in-flight count, their Envoy budget slots, a breaker probe permit; a pending retry's
 * or hedge's budget grant is dropped; the concurrency limiter's permit is released with the
 * final status CANCELLED, which the library counts as neither a success nor a drop (onIgnore)
 * unless limit_drop_statuses names it. No attempt in flight is recorded as a success or a
 * failure anywhere: a cancel takes no retry-throttling token (A6 counts only statuses a
 * server returned: grpc-go's clientStream.finish credits only a nil error and shouldRetry,
 * the one place a token is taken, returns at once for a finished stream), refunds no AWS
 * retry cost (only a success does) and feeds no breaker, adaptive throttler or AWS rate
 * (aws-sdk-go-v2 does count an attempt its context cancelled as a non-throttling response in
 * its measured send rate; botocore has no cancel; this engine leaves such an attempt out). A
 * call whose end was decided for a later time (it waits out its deadline) ends now,
 * cancelled, having given everything back when that end was decided; a call already ended is
 * unchanged and d repeats its result. Never allocates. */
void retry_call_cancel(retry_call *c, int64_t now_ns, retry_decision *d);

/* }================================================================== */

/* {==================================================================
 * gRPC service config (retry_config.c, retry_config_ext.c; with retry_json.c the only files
 * that use jansson)
 * =================================================================== */

/* A loaded service config: methodConfig entries with their policies, retryThrottling, and the
 * "retrysim" extension block. Owns every string its policies point to. */
typedef struct retry_config retry_config;

/* Receives one warning of a load: w->source and w->path locate it, w->message says what was
 * ignored or doubtful and what was probably meant; w->code is RETRY_ECONFIG, the code the same
 * warning gets as an error under strict. w is valid only during the call. */
typedef void (*retry_config_warn_fn)(void *ctx, const retry_error *w);

typedef struct retry_config_opts {
  int32_t max_attempts_limit;   /* the client's cap, default 5 (0 = take the default); the
                                   extension block's maxAttemptsLimit overrides it */
  const retry_allocator *alloc; /* may be NULL */
  /* Warnings (docs/service-config.md, "Warnings"): a standard field the loader ignores (gRPC
   * ignores unknown fields, so does the loader, but a misspelt one silently turns a mechanism
   * off), and a legal value that is probably a unit mistake (percentCanRetry: 20). Each goes
   * to warn(warn_ctx, w) in document order; warn NULL drops them. */
  retry_config_warn_fn warn;
  void *warn_ctx;
  bool strict; /* a warning fails the load instead: the same message, as an error */
} retry_config_opts;

/* What applies to one method. */
typedef struct retry_method_config {
  retry_policy policy; /* kind NONE when the methodConfig has no retry or hedging policy */
  int64_t timeout_ns;  /* methodConfig timeout, RETRY_NEVER when absent */
  bool matched;        /* false: no methodConfig matched (defaults apply) */
} retry_method_config;

/* Loads a service config from a file. Returns a new config; free with retry_config_destroy.
 * NULL on error, with err naming the file, the JSON path and (for syntax errors) line and
 * column. opts may be NULL. */
retry_config *retry_config_load_file(const char *path, const retry_config_opts *opts,
                                     retry_error *err);
/* Same from a NUL-terminated string; source names it in errors (NULL: "<string>"). */
retry_config *retry_config_load_string(const char *json, const char *source,
                                       const retry_config_opts *opts, retry_error *err);
/* Frees cfg; NULL is a no-op. */
void retry_config_destroy(retry_config *cfg);

/* Looks up the config of a method by full name "/service/method" with gRPC precedence:
 * exact method, then service-wide, then the default. Returns a borrowed pointer valid until
 * retry_config_destroy; never NULL (an empty method config when nothing matched). */
const retry_method_config *retry_config_lookup(const retry_config *cfg, const char *method);

/* The shared-state configuration (retryThrottling plus the extension's budget, adaptive
 * throttling and breaker), ready for retry_target_create. Returns a borrowed pointer valid
 * until retry_config_destroy. */
const retry_target_config *retry_config_target(const retry_config *cfg);

/* Parses a proto3 JSON Duration ("0.1s", "-1.5s", at most 9 fraction digits, "s" required).
 * Returns 0 and sets *ns, or RETRY_EINVAL / RETRY_ERANGE. */
int retry_duration_parse(const char *s, int64_t *ns);

/* }================================================================== */

#ifdef __cplusplus
}
#endif

#endif /* RETRY_H */
