/*
 * retry_config_int.h: what the two halves of the service config loader share; private to them.
 *
 * retry_config.c reads the standard gRPC part and owns the load context and the lifecycle;
 * retry_config_ext.c reads the "retrysim" extension block. Both walk the tree with retry_json.h.
 * Only these two files include this header: tools/test/check-deps.sh fails on jansson outside them
 * and retry_json.o.
 */
#ifndef RETRY_CONFIG_INT_H
#define RETRY_CONFIG_INT_H

#include "retry_int.h"
#include "retry_json.h"

#include <jansson.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The "what" of duration fields in messages. */
#define DUR_POS "a duration > 0 such as \"0.1s\""
#define DUR_NONNEG "a duration >= 0 such as \"0.1s\""

/* {==================================================================
 * The config and the load context
 * =================================================================== */

/* One name of a methodConfig entry. An empty method is service-wide; an empty service (and
 * method) is the default. Strings point into retry_config.strings, not NUL-terminated here. */
typedef struct name_key {
  const char *service; /* "" for the default */
  size_t service_len;
  const char *method; /* "" for a service-wide name */
  size_t method_len;
  size_t entry; /* index of the methodConfig entry (and of retry_config.methods) */
  size_t index; /* index in that entry's name list, for error messages */
} name_key;

/* Everything a config points to lives in the four arrays below, each one allocation sized
 * before parsing and never reallocated; retry_config_destroy frees exactly these four and the
 * struct. The policies handed out by retry_config_lookup borrow idempotent and the strings,
 * which is why a config must outlive every call that uses one of its policies. */
struct retry_config {
  retry_allocator alloc;         /* how the config was allocated (a copy: the caller's may go) */
  bool has_alloc;                /* false: libc */
  retry_target_config target;    /* retryThrottling plus the extension's shared state */
  retry_method_config unmatched; /* answer of a lookup that matches nothing */
  retry_method_config *methods;  /* one per methodConfig entry */
  size_t n_methods;
  name_key *keys; /* every name, sorted by (service, method) */
  size_t n_keys;
  const char **idempotent; /* the extension's idempotentMethods, NULL when absent */
  size_t n_idempotent;
  char *strings; /* one arena for every string above */
  size_t strings_size;
  int32_t max_attempts_limit; /* the client cap on maxAttempts; <= 0 means none */
};

/* The extension's method options, each with a flag saying whether it was given. The flags
 * let an entry's block override only what it sets and inherit the rest from the top level. */
typedef struct method_opts {
  bool has_space, has_jitter, has_jitter_fraction, has_cap_after_jitter;
  bool has_per_attempt_timeout, has_retry_buffer, has_retry_streaming;
  bool has_honor_retry_after, has_wait_for_deadline, has_throttle_initial;
  retry_space space;              /* statusSpace */
  retry_jitter jitter;            /* jitter */
  double jitter_fraction;         /* jitterFraction, in [0, 1] */
  bool cap_after_jitter;          /* capAfterJitter */
  int64_t per_attempt_timeout_ns; /* perAttemptTimeout, > 0 */
  int64_t throttle_initial_ns;    /* throttleInitialBackoff, > 0 */
  int64_t retry_buffer_bytes;     /* retryBufferBytes, >= 0 (0: unlimited) */
  bool retry_streaming, honor_retry_after, wait_for_deadline;
  const retry_profile
      *profile; /* the top-level block's profile, NULL when none (retry_profile.c) */
} method_opts;

/* The state of one load, on the loader's stack. The retry_json context comes first and is
 * embedded, not pointed to: it has the load's lifetime, and &c->j is all the shared getters
 * need (its invariants are retry_json_ctx's: once j.e.code is set, nothing else is read). */
typedef struct load_ctx {
  retry_json_ctx j;          /* source, JSON path and the first error */
  retry_config *cfg;         /* being filled */
  retry_config_warn_fn warn; /* the caller's warning sink, NULL: warnings are dropped */
  void *warn_ctx;            /* passed to warn */
  bool strict;               /* a warning is recorded as the load's error instead */
  size_t strings_used;       /* bytes of cfg->strings handed out, <= cfg->strings_size */
  method_opts top;           /* method options of the top-level extension block */
} load_ctx;

/* What to allocate, counted on the raw tree before validation (wrong types count nothing). */
typedef struct config_sizes {
  size_t n_entries;    /* methodConfig entries */
  size_t n_names;      /* name objects */
  size_t n_idempotent; /* idempotentMethods entries */
  bool has_idempotent; /* idempotentMethods present */
  size_t string_bytes; /* every string to copy, NULs included */
} config_sizes;

/* How the members of a status list are read. A policy's list uses the policy's space; the
 * shared state (adaptive throttling, breaker) may serve a gRPC layer and an HTTP gateway at
 * once, so its lists take both spaces and rely on the ranges not overlapping. */
typedef enum list_space {
  LIST_GRPC, /* gRPC code names (upper case) or integers 0..16 */
  LIST_HTTP, /* HTTP statuses 100..599 or tokens ("5xx", "gateway-error", "503") */
  LIST_MIXED /* either: 0..16 and names are gRPC, 100..599 and tokens are HTTP */
} list_space;

/* }================================================================== */

/* {==================================================================
 * retry_config.c: what retry_json.h has no getter for
 *
 * The getters follow retry_json.h's contract: 1 set, 0 absent (or null), -1 after recording
 * an error; *out is left alone unless the field is valid.
 * =================================================================== */

/* A status list read in space sp; replaces what *out held. non_empty: [] is an error. */
int retry__config_get_status_list(load_ctx *c, json_t *obj, const char *key, list_space sp,
                                  bool non_empty, retry_status_set *out);

/* Copies s (len bytes) into the config's string arena. Returns a pointer owned by the config,
 * valid until retry_config_destroy. The arena was sized by the measure pass: copy only what
 * was counted there. */
const char *retry__config_copy_string(load_ctx *c, const char *s, size_t len);

/* A warning at the current path: a printf-style message handed to the caller's sink as a
 * retry_error (code RETRY_ECONFIG). Under strict it is recorded as the load's error instead
 * and false is returned; true otherwise. Allocates nothing. */
bool retry__config_warn(load_ctx *c, const char *fmt, ...) RETRY_PRINTF(2, 3);

/* Warns about every key of obj, in document order, that is in neither known[0..n_known) nor
 * quiet[0..n_quiet) (standard fields the loader ignores without a word, such as
 * loadBalancingConfig): `unknown field "k" ignored` with a did-you-mean over both lists, or
 * the note that the key differs from a field only by case (which grpc-go accepts and
 * grpc-java and C-core do not). Returns false when strict turned a warning into the error. */
bool retry__config_check_fields(load_ctx *c, json_t *obj, const char *const *known, size_t n_known,
                                const char *const *quiet, size_t n_quiet);

/* Calls parse(c, obj[key]) with the path at obj.key; true when the key is absent or null. */
bool retry__config_parse_sub(load_ctx *c, json_t *obj, const char *key,
                             bool (*parse)(load_ctx *c, json_t *v));

/* }================================================================== */

/* {==================================================================
 * retry_config_ext.c: the "retrysim" extension block
 * =================================================================== */

/* Adds to *s what the top-level block will copy into the config (idempotentMethods). */
void retry__config_ext_measure(json_t *root, config_sizes *s);

/* Reads the top-level block (root.retrysim): channel-wide settings into c->cfg and the
 * default method options into c->top. Runs before methodConfig, which depends on both. */
bool retry__config_ext_parse(load_ctx *c, json_t *ext);

/* The method options of a methodConfig entry: c->top overridden by what the entry's own
 * block (entry.retrysim, when present) sets. */
bool retry__config_ext_entry_opts(load_ctx *c, json_t *entry, method_opts *mo);

/* Applies mo to a policy already filled from the gRPC fields, plus the config-wide allowlist,
 * which p then borrows from cfg. */
void retry__config_ext_apply(const retry_config *cfg, retry_policy *p, const method_opts *mo);

/* }================================================================== */

#endif /* RETRY_CONFIG_INT_H */
