/*
 * retry_config_ext.c: the "retrysim" block of a service config, for what gRPC has no field for.
 *
 * At the top level it holds channel-wide settings (maxAttemptsLimit, idempotentMethods,
 * budget, adaptiveThrottling, circuitBreaker) and default method options; in a methodConfig
 * entry, method options only. Unlike the standard part, every key here must be known.
 */
#include "retry_config_int.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The block is strict where the standard part is lenient (A21 ignores unknown fields so that
 * configs written for newer gRPC clients still load). Only libretry reads this block, so no
 * older reader has to skip keys it does not know, while a misspelled key would silently leave
 * a mechanism off: "cicuitBreaker" must be an error, not "no breaker". */

static const char *const method_keys[] = {
    "statusSpace",      "jitter",         "jitterFraction",  "capAfterJitter", "perAttemptTimeout",
    "retryBufferBytes", "retryStreaming", "honorRetryAfter", "waitForDeadline",
    "throttleInitialBackoff"};
static const char *const channel_keys[] = {
    "maxAttemptsLimit", "idempotentMethods", "budget",       "adaptiveThrottling", "circuitBreaker",
    "profile",          "retryMode",         "adaptiveMode", "retryBreaker"};
/* Every key of the top-level block. Channel-wide keys come first because a message that lists
 * them may be cut short, and a channel key is the likelier thing to be misspelled there. */
static const char *const top_keys[] = {
    "maxAttemptsLimit", "idempotentMethods", "budget",           "adaptiveThrottling",
    "circuitBreaker",   "statusSpace",       "jitter",           "jitterFraction",
    "capAfterJitter",   "perAttemptTimeout", "retryBufferBytes", "retryStreaming",
    "honorRetryAfter",  "waitForDeadline",   "profile",          "retryMode",
    "adaptiveMode",     "retryBreaker",      "concurrencyLimit", "throttleInitialBackoff"};

/* An unknown key of the block, at the current path (the caller pushed it): with a
 * did-you-mean when one of allowed is close (retry_json_suggest), which also says when only
 * the case differs; else retry_json_fail_unknown_key's list of the allowed keys. */
static void fail_unknown(load_ctx *c, const char *key, const char *const *allowed, size_t n) {
  bool case_only = false;
  const char *near = retry_json_suggest(key, allowed, n, &case_only);
  if (near == NULL) {
    retry_json_fail_unknown_key(&c->j, key, allowed, n, NULL);
    return;
  }
  char shown[48];
  retry_json_printable(shown, sizeof shown, key, 40);
  retry_json_fail(&c->j, RETRY_ECONFIG, "unknown key \"%s\"; did you mean \"%s\"?%s", shown, near,
                  case_only ? " (keys are case-sensitive)" : "");
}

/* retry_json_check_keys with fail_unknown's message: fails on the first key of obj, in
 * document order, that is not in allowed[0..n). */
static bool check_keys(load_ctx *c, json_t *obj, const char *const *allowed, size_t n) {
  for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it)) {
    const char *key = json_object_iter_key(it);
    if (retry_json_key_in(key, allowed, n)) continue;
    size_t mark = retry_json_path_push_key(&c->j, key);
    fail_unknown(c, key, allowed, n);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

/* {==================================================================
 * Method options
 * =================================================================== */

/* Reads the method options of an extension block (its keys were checked already). They
 * cover what gRPC fixes and other systems let one choose: the jitter (gRPC's +-20%, the full
 * jitter of AWS and Envoy, decorrelated jitter, Polly's V2), a per-attempt timeout (Envoy's
 * per_try_timeout; A6 has none), the retry buffer (a client setting in gRPC, 256 KiB per
 * RPC in grpc-go and C-core, not a config field) and HTTP's Retry-After. */
static bool parse_method_opts(load_ctx *c, json_t *ext, method_opts *mo) {
  /* The names in retry_space order: index 0 is gRPC, 1 is HTTP. */
  static const char *const spaces[] = {"grpc", "http"};
  int space = 0, rc = retry_json_get_enum(&c->j, ext, "statusSpace", spaces, N_OF(spaces), &space);
  if (rc < 0) return false;
  if (rc == 1) {
    mo->has_space = true;
    mo->space = space == 1 ? RETRY_SPACE_HTTP : RETRY_SPACE_GRPC;
  }
  /* The names retry_jitter_parse takes, each of which it maps to its retry_jitter. */
  static const char *const jitters[] = {"grpc",     "proportional", "full", "equal", "decorrelated",
                                        "polly-v2", "none",         "linkerd"};
  int jitter = 0;
  if ((rc = retry_json_get_enum(&c->j, ext, "jitter", jitters, N_OF(jitters), &jitter)) < 0)
    return false;
  if (rc == 1) {
    int prc = retry_jitter_parse(jitters[jitter], &mo->jitter);
    assert(prc == RETRY_OK);
    (void)prc;
    mo->has_jitter = true;
  }
  /* Each getter leaves its field alone when the key is absent; rc == 1 marks it as given. */
  if ((rc = retry_json_get_number(&c->j, ext, "jitterFraction", 0, false, 1, false,
                                  "a number in [0, 1]", &mo->jitter_fraction)) < 0)
    return false;
  mo->has_jitter_fraction |= rc == 1;
  if ((rc = retry_json_get_bool(&c->j, ext, "capAfterJitter", &mo->cap_after_jitter)) < 0)
    return false;
  mo->has_cap_after_jitter |= rc == 1;
  if ((rc = retry_json_get_duration(&c->j, ext, "perAttemptTimeout", 0, true, INT64_MAX, DUR_POS,
                                    &mo->per_attempt_timeout_ns)) < 0)
    return false;
  mo->has_per_attempt_timeout |= rc == 1;
  if ((rc = retry_json_get_duration(&c->j, ext, "throttleInitialBackoff", 0, true, INT64_MAX,
                                    DUR_POS, &mo->throttle_initial_ns)) < 0)
    return false;
  mo->has_throttle_initial |= rc == 1;
  int64_t bytes = 0;
  if ((rc = retry_json_get_int(&c->j, ext, "retryBufferBytes", 0, INT64_MAX,
                               "an integer >= 0 (0: unlimited)", &bytes)) < 0)
    return false;
  if (rc == 1) {
    mo->has_retry_buffer = true;
    mo->retry_buffer_bytes = bytes;
  }
  if ((rc = retry_json_get_bool(&c->j, ext, "retryStreaming", &mo->retry_streaming)) < 0)
    return false;
  mo->has_retry_streaming |= rc == 1;
  if ((rc = retry_json_get_bool(&c->j, ext, "honorRetryAfter", &mo->honor_retry_after)) < 0)
    return false;
  mo->has_honor_retry_after |= rc == 1;
  if ((rc = retry_json_get_bool(&c->j, ext, "waitForDeadline", &mo->wait_for_deadline)) < 0)
    return false;
  mo->has_wait_for_deadline |= rc == 1;
  return true;
}

/* dst takes every option that over sets: an entry's block over the top-level defaults. */
static void merge_opts(method_opts *dst, const method_opts *over) {
#define TAKE(flag, ...) \
  if (over->flag) {     \
    dst->flag = true;   \
    __VA_ARGS__;        \
  }
  TAKE(has_space, dst->space = over->space)
  TAKE(has_jitter, dst->jitter = over->jitter)
  TAKE(has_jitter_fraction, dst->jitter_fraction = over->jitter_fraction)
  TAKE(has_cap_after_jitter, dst->cap_after_jitter = over->cap_after_jitter)
  TAKE(has_per_attempt_timeout, dst->per_attempt_timeout_ns = over->per_attempt_timeout_ns)
  TAKE(has_retry_buffer, dst->retry_buffer_bytes = over->retry_buffer_bytes)
  TAKE(has_retry_streaming, dst->retry_streaming = over->retry_streaming)
  TAKE(has_honor_retry_after, dst->honor_retry_after = over->honor_retry_after)
  TAKE(has_wait_for_deadline, dst->wait_for_deadline = over->wait_for_deadline)
  TAKE(has_throttle_initial, dst->throttle_initial_ns = over->throttle_initial_ns)
#undef TAKE
}

/* Sets what the options override on a policy already filled from gRPC fields, plus what every
 * policy of the config shares (the allowlist). The space was chosen at retry_policy_init;
 * the local reject status follows it (UNAVAILABLE, or 503 for an HTTP layer) so a call
 * refused by the breaker ends with a status its own layer understands.
 * An option that no block sets keeps retry_policy_init's value, which is gRPC's behaviour:
 * +-20% proportional jitter, the cap applied before the jitter, a 256 KiB retry buffer, no
 * per-attempt timeout, no retries of streams. */
void retry__config_ext_apply(const retry_config *cfg, retry_policy *p, const method_opts *mo) {
  if (mo->profile != NULL) retry_profile_apply(mo->profile, p); /* explicit keys win below */
  if (mo->has_jitter) {
    /* A named jitter replaces the profile's whole rule, the first delay included: C-core's
     * exact first delay belongs to its one backoff (BackOff, a fixed 0.2 proportional jitter
     * from the second delay on), not to the jitters it lacks, so "full" is U[0, d) from the
     * first retry on, as docs/service-config.md ("profile") promises. */
    p->backoff.jitter = mo->jitter;
    p->backoff.first_delay_exact = false;
  }
  if (mo->has_jitter_fraction) p->backoff.jitter_fraction = mo->jitter_fraction;
  if (mo->has_cap_after_jitter) p->backoff.cap_after_jitter = mo->cap_after_jitter;
  if (mo->has_per_attempt_timeout) p->per_attempt_timeout_ns = mo->per_attempt_timeout_ns;
  if (mo->has_retry_buffer) p->retry_buffer_bytes = mo->retry_buffer_bytes;
  if (mo->has_retry_streaming) p->retry_streaming = mo->retry_streaming;
  if (mo->has_honor_retry_after) p->honor_retry_after = mo->honor_retry_after;
  if (mo->has_wait_for_deadline) p->wait_for_deadline = mo->wait_for_deadline;
  if (mo->has_throttle_initial) p->backoff.throttle_initial_ns = mo->throttle_initial_ns;
  p->local_reject_status = p->space == RETRY_SPACE_HTTP ? 503 : RETRY_GRPC_UNAVAILABLE;
  if (cfg->idempotent != NULL) {
    p->has_idempotent_allowlist = true;
    p->idempotent_methods = cfg->idempotent;
    p->n_idempotent_methods = cfg->n_idempotent;
  }
}

/* A methodConfig entry's block: method options only. A channel-wide key here gets its own
 * message, since the key is right and only its place is wrong. */
static bool parse_entry_ext(load_ctx *c, json_t *ext, method_opts *mo) {
  if (!json_is_object(ext)) {
    retry_json_fail_value(&c->j, "\"retrysim\"", "an object", ext);
    return false;
  }
  for (void *it = json_object_iter(ext); it != NULL; it = json_object_iter_next(ext, it)) {
    const char *key = json_object_iter_key(it);
    if (retry_json_key_in(key, method_keys, N_OF(method_keys))) continue;
    size_t mark = retry_json_path_push_key(&c->j, key);
    if (retry_json_key_in(key, channel_keys, N_OF(channel_keys)))
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "\"%s\" is channel-wide: set it in the top-level retrysim block", key);
    else
      fail_unknown(c, key, method_keys, N_OF(method_keys));
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return parse_method_opts(c, ext, mo);
}

/* The entry's own options are read into a zeroed struct first and merged afterwards, so
 * that has_ flags tell "set in this entry" apart from "inherited", and an entry without a
 * block gets exactly the top-level options. */
bool retry__config_ext_entry_opts(load_ctx *c, json_t *entry, method_opts *mo) {
  *mo = c->top;
  json_t *ext = retry_json_field(entry, "retrysim");
  if (ext == NULL) return true;
  method_opts own;
  memset(&own, 0, sizeof own);
  size_t mark = retry_json_path_push_key(&c->j, "retrysim");
  if (!parse_entry_ext(c, ext, &own)) return false; /* the path dies with the error */
  retry_json_path_pop(&c->j, mark);
  merge_opts(mo, &own);
  return true;
}

/* }================================================================== */

/* {==================================================================
 * idempotentMethods
 *
 * gRPC retries whatever method a policy names: knowing which methods are safe to repeat is
 * left to whoever writes the config, and a retried charge may be charged twice. The allowlist
 * names the methods that are safe to send more than once, for every policy of the channel.
 * =================================================================== */

/* Counts as measure() in retry_config.c does, on the raw tree before validation, so the
 * result can only overestimate: a non-string entry takes no room and fails later. */
void retry__config_ext_measure(json_t *root, config_sizes *s) {
  json_t *ext = retry_json_field(root, "retrysim");
  json_t *idem = json_is_object(ext) ? retry_json_field(ext, "idempotentMethods") : NULL;
  if (!json_is_array(idem)) return;
  s->has_idempotent = true;
  s->n_idempotent = json_array_size(idem);
  for (size_t i = 0; i < json_array_size(idem); i++) {
    json_t *v = json_array_get(idem, i);
    if (json_is_string(v)) s->string_bytes += json_string_length(v) + 1;
  }
}

/* "/service/Method": a leading '/', then two non-empty parts without '/'. That is the form a
 * call's method name takes on the wire (HTTP/2 :path), and the form retry_call_opts.method
 * is compared with, byte for byte. */
static bool is_full_method_name(const char *s) {
  if (s[0] != '/') return false;
  const char *slash = strchr(s + 1, '/');
  return slash != NULL && slash > s + 1 && slash[1] != '\0' && strchr(slash + 1, '/') == NULL;
}

/* "idempotentMethods": copied into the config, which every policy then points at. Repeated
 * names are harmless and kept. The config's array has room for one more pointer than there
 * are names (see retry_config.c), so even [] leaves it non-NULL: present but empty is an
 * allowlist that allows nothing, which is not the same as no allowlist. */
static bool parse_idempotent(load_ctx *c, json_t *list) {
  retry_config *cfg = c->cfg;
  static const char what[] = "an array of full method names such as \"/pkg.Service/Method\"";
  if (!json_is_array(list)) {
    retry_json_fail_value(&c->j, "\"idempotentMethods\"", what, list);
    return false;
  }
  for (size_t i = 0; i < json_array_size(list); i++) {
    json_t *item = json_array_get(list, i);
    if (!json_is_string(item) || !is_full_method_name(json_string_value(item))) {
      size_t mark = retry_json_path_push_index(&c->j, i);
      retry_json_fail_value(&c->j, "\"idempotentMethods\" entries",
                            "full method names \"/pkg.Service/Method\"", item);
      retry_json_path_pop(&c->j, mark);
      return false;
    }
    cfg->idempotent[cfg->n_idempotent++] =
        retry__config_copy_string(c, json_string_value(item), json_string_length(item));
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Shared state: budget, adaptive throttling, circuit breaker
 *
 * Each goes into cfg->target, which retry_target_create validates again (and alone checks
 * that Finagle's reserve fits in 32 bits); the checks here are there to name the JSON path.
 * Ranges follow the system each mechanism imitates.
 * =================================================================== */

/* Reads the "type" that selects a budget's or a breaker's kind, one of types (its index in
 * *kind); what names the block in messages, listed the types in the message for a missing
 * one. Returns false after an error. */
static bool block_type(load_ctx *c, json_t *b, const char *what, const char *const *types,
                       size_t n_types, const char *listed, int *kind) {
  if (!json_is_object(b)) {
    retry_json_fail_value(&c->j, what, "an object with a \"type\"", b);
    return false;
  }
  return retry_json_require(&c->j, retry_json_get_enum(&c->j, b, "type", types, n_types, kind),
                            "type", listed) == 1;
}

/* A legal value that is probably a unit mistake, at obj.key: `"key" <v> <why>`. Returns
 * false only when strict made it the load's error. */
static bool warn_unit(load_ctx *c, json_t *obj, const char *key, const char *why) {
  char got[64];
  retry_json_describe(json_object_get(obj, key), got, sizeof got);
  size_t mark = retry_json_path_push_key(&c->j, key);
  bool ok = retry__config_warn(c, "\"%s\" %s %s", key, got, why);
  retry_json_path_pop(&c->j, mark);
  return ok;
}

/* A Go duration (time.ParseDuration), the form Linkerd's ServiceProfile writes its ttl in:
 * one or more decimal numbers, each with a unit (ns, us, µs, μs, ms, s, m, h), such as
 * "10s", "1m30s", "1.5s", "500ms", or a bare "0". No sign: a ttl is never negative. Sets *ns
 * and returns true; false when s is not such a duration or exceeds int64 nanoseconds. */
static bool parse_go_duration(const char *s, int64_t *ns) {
  static const struct {
    const char *name;
    int64_t ns;
  } units[] = {{"ns", 1},
               {"us", 1000},
               {"\xC2\xB5s", 1000}, /* U+00B5 micro sign */
               {"\xCE\xBCs", 1000}, /* U+03BC Greek mu */
               {"ms", RETRY_NS_PER_MS},
               {"s", RETRY_NS_PER_S},
               {"m", 60 * RETRY_NS_PER_S},
               {"h", 3600 * RETRY_NS_PER_S}};
  if (strcmp(s, "0") == 0) {
    *ns = 0;
    return true;
  }
  if (*s == '\0') return false;
  double total = 0;
  while (*s) {
    /* digits [. digits], at least one digit in all */
    double v = 0, scale = 1;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++)
      v = v * 10 + (*s - '0');
    if (*s == '.') {
      for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
        scale /= 10;
        v += (*s - '0') * scale;
      }
    }
    if (digits == 0) return false;
    /* The longest unit that matches, so that "ms" is never read as "m" and a rest "s". */
    size_t best = N_OF(units);
    size_t best_len = 0;
    for (size_t i = 0; i < N_OF(units); i++) {
      size_t l = strlen(units[i].name);
      if (l > best_len && strncmp(s, units[i].name, l) == 0) {
        best = i;
        best_len = l;
      }
    }
    if (best == N_OF(units)) return false;
    total += v * (double)units[best].ns;
    s += best_len;
  }
  if (!(total < 9.2e18)) return false;
  *ns = (int64_t)llround(total);
  return true;
}

/* Linkerd's ttl: a Go duration (parse_go_duration) in [1 s, 60 s], the range tower's budget
 * asserts (its assertions are taken from Finagle's). Proto3 forms such as "10s" and "0.5s"
 * are Go durations too. */
static int get_linkerd_ttl(load_ctx *c, json_t *b, int64_t *out) {
  json_t *v = retry_json_field(b, "ttl");
  if (v == NULL || retry_json_failed(&c->j)) return retry_json_failed(&c->j) ? -1 : 0;
  int64_t ns = 0;
  if (!json_is_string(v) || !parse_go_duration(json_string_value(v), &ns) || ns < RETRY_NS_PER_S ||
      ns > 60 * RETRY_NS_PER_S)
    return retry_json_fail_field(&c->j, b, "ttl",
                                 "a Go duration in [1s, 60s] such as \"10s\" or \"1m\"");
  *out = ns;
  return 1;
}

/* Linkerd's retryRatio as the Finagle budget's percent_can_retry. The Linkerd proxy builds
 * tower's budget from it (an f32), and tower, unlike Finagle, scales a ratio of at most 1 by
 * 1 rather than 1000: a deposit adds 1 and a retry costs (int)(1 / ratio), so a ratio of 0.3
 * allows one retry per 3 requests (33 %) and 0.7 one per request. Above 1 it scales by 1000
 * as Finagle does. The Finagle budget here costs (int)(1000 / percent) per retry against
 * 1000 per request, so for a ratio of at most 1 the percent is 1 / k with k = (int)(1 / ratio)
 * (computed in f32 as tower does), nudged down until 1000 / percent truncates to exactly
 * 1000 k: every count is then tower's times 1000, and every decision the same. */
static double linkerd_percent(double ratio) {
  float r = (float)ratio;
  if (r == 0.0f || r > 1.0f) return (double)r;
  float inv = 1.0f / r;
  /* Past 2^31 deposits per retry both budgets saturate (tower's cast, the Finagle budget's
   * cap at INT32_MAX): nothing to match, and the nudging below would overflow. */
  if (!(inv < 2147483648.0f)) return (double)r;
  double k = floor((double)inv);
  double pct = 1.0 / k;
  while ((int64_t)(1000.0 / pct) < (int64_t)(1000.0 * k))
    pct = nextafter(pct, 0.0);
  return pct;
}

/* The keys of a budget of type type: a key of another type says whose it is, and Finagle's
 * and Linkerd's names for the same setting point at each other (percentCanRetry is Finagle's
 * retryRatio, minRetriesPerSec Linkerd's minRetriesPerSecond); the rest is check_keys. */
static bool check_budget_keys(load_ctx *c, json_t *b, const char *type, const char *const *own,
                              size_t n_own) {
  static const struct {
    const char *key, *type, *twin;
  } others[] = {{"capacity", "aws", NULL},
                {"retryCost", "aws", NULL},
                {"timeoutCost", "aws", NULL},
                {"noRetryIncrement", "aws", NULL},
                {"percentCanRetry", "finagle", "retryRatio"},
                {"minRetriesPerSec", "finagle", "minRetriesPerSecond"},
                {"retryRatio", "linkerd", "percentCanRetry"},
                {"minRetriesPerSecond", "linkerd", "minRetriesPerSec"},
                {"budgetPercent", "envoy", NULL},
                {"minRetryConcurrency", "envoy", NULL},
                {"initial", "tokenBucket", NULL},
                {"earnPerCall", "tokenBucket", NULL},
                {"earnPerSuccess", "tokenBucket", NULL},
                {"allowAtCost", "tokenBucket", NULL}};
  for (void *it = json_object_iter(b); it != NULL; it = json_object_iter_next(b, it)) {
    const char *key = json_object_iter_key(it);
    if (retry_json_key_in(key, own, n_own)) continue;
    for (size_t i = 0; i < N_OF(others); i++) {
      if (strcmp(key, others[i].key) != 0) continue;
      size_t mark = retry_json_path_push_key(&c->j, key);
      bool twin = others[i].twin != NULL && retry_json_key_in(others[i].twin, own, n_own);
      if (twin)
        retry_json_fail(&c->j, RETRY_ECONFIG,
                        "\"%s\" is a \"%s\" budget's name; this \"%s\" budget calls it \"%s\"", key,
                        others[i].type, type, others[i].twin);
      else
        retry_json_fail(&c->j, RETRY_ECONFIG,
                        "\"%s\" applies to \"%s\" budgets only; this one is \"%s\"", key,
                        others[i].type, type);
      retry_json_path_pop(&c->j, mark);
      return false;
    }
  }
  return check_keys(c, b, own, n_own);
}

/* "budget": {"type": ..., keys of that type}. Each type starts from the defaults of its
 * *_config_init function, so an omitted key means the documented default of the system
 * the budget imitates (AWS SDK, Finagle, Linkerd, Envoy). A key of another type is an unknown
 * key. The ranges are those systems' own: Finagle's RetryBudget takes a ttl in [1 s, 60 s] and
 * a percentCanRetry in [0, 1000] (a ratio, 0.2 meaning 20%); Linkerd's retryBudget is the same
 * budget under other names (retryRatio, minRetriesPerSecond, ttl) with tower's rounding and
 * ranges (linkerd_percent); Envoy's budget_percent is an envoy.type.v3.Percent in [0, 100].
 * The AWS SDK takes any uint as a cost, but 0 is refused since retry_aws_quota_acquire returns
 * the cost it took and 0 there means "refused". Legal values that read like the other unit
 * (percentCanRetry 20, budgetPercent 0.2) are loaded as written, with a warning. */
static bool parse_budget(load_ctx *c, json_t *b) {
  static const char *const aws_keys[] = {"type", "capacity", "retryCost", "timeoutCost",
                                         "noRetryIncrement", "throttleCost"};
  static const char *const finagle_keys[] = {"type", "ttl", "minRetriesPerSec", "percentCanRetry"};
  static const char *const linkerd_keys[] = {"type", "retryRatio", "minRetriesPerSecond", "ttl"};
  static const char *const envoy_keys[] = {"type", "budgetPercent", "minRetryConcurrency"};
  static const char *const bucket_keys[] = {
      "type", "capacity", "initial", "earnPerCall", "earnPerSuccess", "retryCost", "allowAtCost"};
  static const char *const types[] = {"aws", "finagle", "linkerd", "envoy", "tokenBucket"};
  retry_target_config *t = &c->cfg->target;
  int kind = 0;
  if (!block_type(c, b, "\"budget\"", types, N_OF(types),
                  "\"aws\", \"finagle\", \"linkerd\", \"envoy\" or \"tokenBucket\"", &kind))
    return false;
  const char *s = types[kind];
  /* t->budget is set before the keys are read; on an error the whole config is freed, so a
   * half-read budget is never seen. */
  if (strcmp(s, "aws") == 0) {
    t->budget = RETRY_BUDGET_AWS;
    retry_aws_quota_config_init(&t->aws);
    return check_budget_keys(c, b, "aws", aws_keys, N_OF(aws_keys)) &&
           retry_json_get_int32(&c->j, b, "capacity", 1, INT32_MAX, "an integer > 0",
                                &t->aws.capacity) >= 0 &&
           retry_json_get_int32(&c->j, b, "retryCost", 1, INT32_MAX, "an integer > 0",
                                &t->aws.retry_cost) >= 0 &&
           retry_json_get_int32(&c->j, b, "timeoutCost", 1, INT32_MAX, "an integer > 0",
                                &t->aws.timeout_cost) >= 0 &&
           retry_json_get_int32(&c->j, b, "noRetryIncrement", 0, INT32_MAX, "an integer >= 0",
                                &t->aws.no_retry_increment) >= 0 &&
           retry_json_get_int32(&c->j, b, "throttleCost", 1, INT32_MAX, "an integer > 0",
                                &t->aws.throttle_cost) >= 0;
  }
  if (strcmp(s, "finagle") == 0) {
    t->budget = RETRY_BUDGET_FINAGLE;
    retry_finagle_budget_config_init(&t->finagle);
    if (!(check_budget_keys(c, b, "finagle", finagle_keys, N_OF(finagle_keys)) &&
          retry_json_get_duration(&c->j, b, "ttl", RETRY_NS_PER_S, false, 60 * RETRY_NS_PER_S,
                                  "a duration in [1s, 60s]", &t->finagle.ttl_ns) >= 0 &&
          retry_json_get_int32(&c->j, b, "minRetriesPerSec", 0, INT32_MAX, "an integer >= 0",
                               &t->finagle.min_retries_per_sec) >= 0 &&
          retry_json_get_number(&c->j, b, "percentCanRetry", 0, false, 1000, false,
                                "a number in [0, 1000]", &t->finagle.percent_can_retry) >= 0))
      return false;
    if (t->finagle.percent_can_retry > 1)
      return warn_unit(c, b, "percentCanRetry",
                       "means that many retries per request: it is a fraction, 0.2 is 20 %");
    return true;
  }
  if (strcmp(s, "linkerd") == 0) {
    /* Linkerd's defaults (DefaultRetryBudget in linkerd2's controller) are Finagle's. */
    t->budget = RETRY_BUDGET_FINAGLE;
    retry_finagle_budget_config_init(&t->finagle);
    double ratio = t->finagle.percent_can_retry;
    if (!(check_budget_keys(c, b, "linkerd", linkerd_keys, N_OF(linkerd_keys)) &&
          get_linkerd_ttl(c, b, &t->finagle.ttl_ns) >= 0 &&
          retry_json_get_int32(&c->j, b, "minRetriesPerSecond", 0, INT32_MAX - 1,
                               "an integer in [0, 2147483646]",
                               &t->finagle.min_retries_per_sec) >= 0 &&
          retry_json_get_number(&c->j, b, "retryRatio", 0, false, 1000, false,
                                "a number in [0, 1000]", &ratio) >= 0))
      return false;
    t->finagle.percent_can_retry = linkerd_percent(ratio);
    if (ratio > 1)
      return warn_unit(c, b, "retryRatio",
                       "means that many retries per request: it is a ratio, 0.2 is 20 %");
    return true;
  }
  if (strcmp(s, "envoy") == 0) {
    t->budget = RETRY_BUDGET_ENVOY;
    retry_envoy_budget_config_init(&t->envoy);
    if (!(check_budget_keys(c, b, "envoy", envoy_keys, N_OF(envoy_keys)) &&
          retry_json_get_number(&c->j, b, "budgetPercent", 0, false, 100, false,
                                "a number in [0, 100]", &t->envoy.budget_percent) >= 0 &&
          retry_json_get_int32(&c->j, b, "minRetryConcurrency", 0, INT32_MAX, "an integer >= 0",
                               &t->envoy.min_retry_concurrency) >= 0))
      return false;
    if (t->envoy.budget_percent > 0 && t->envoy.budget_percent < 1)
      return warn_unit(c, b, "budgetPercent",
                       "is less than 1 % of active requests: it is a percent, 20 is 20 %");
    return true;
  }
  if (strcmp(s, "tokenBucket") == 0) {
    /* Brooker's retry token bucket: starts at "initial" (default: full), earns per call. The
     * capacity is read first so that "initial" defaults to it and is bounded by it. */
    t->budget = RETRY_BUDGET_TOKEN_BUCKET;
    retry_token_bucket_config *tb = &t->token_bucket;
    retry_token_bucket_config_init(tb);
    if (!(check_budget_keys(c, b, "tokenBucket", bucket_keys, N_OF(bucket_keys)) &&
          retry_json_get_number(&c->j, b, "capacity", 0, true, DBL_MAX, false, "a number > 0",
                                &tb->capacity) >= 0))
      return false;
    tb->initial = tb->capacity;
    char within[64];
    snprintf(within, sizeof within, "a number in [0, %g] (the capacity)", tb->capacity);
    return retry_json_get_number(&c->j, b, "initial", 0, false, tb->capacity, false, within,
                                 &tb->initial) >= 0 &&
           retry_json_get_number(&c->j, b, "earnPerCall", 0, false, DBL_MAX, false, "a number >= 0",
                                 &tb->earn_per_call) >= 0 &&
           retry_json_get_number(&c->j, b, "earnPerSuccess", 0, false, DBL_MAX, false,
                                 "a number >= 0", &tb->earn_per_success) >= 0 &&
           retry_json_get_number(&c->j, b, "retryCost", 0, true, DBL_MAX, false, "a number > 0",
                                 &tb->retry_cost) >= 0 &&
           retry_json_get_bool(&c->j, b, "allowAtCost", &tb->allow_at_cost) >= 0;
  }
  assert(0 && "a budget type without its branch");
  return false;
}

/* "adaptiveThrottling": the SRE client-side throttle. {} turns it on with the defaults.
 * k >= 1 because the rejection probability (requests - k * accepts) / (requests + padding)
 * is positive with k < 1 even when the backend accepts everything: the throttle would shed
 * load from a healthy server. The SRE book uses k = 2 over 2 minutes and padding 1; grpc-go's
 * RLS throttler uses k = 2 over 30 s and padding 8, hence both are settable. */
static bool parse_adaptive(load_ctx *c, json_t *a) {
  static const char *const keys[] = {"k", "window", "padding", "rejectStatusCodes"};
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(a)) {
    retry_json_fail_value(&c->j, "\"adaptiveThrottling\"", "an object", a);
    return false;
  }
  t->has_adaptive = true;
  retry_adaptive_config_init(&t->adaptive);
  return check_keys(c, a, keys, N_OF(keys)) &&
         retry_json_get_number(&c->j, a, "k", 1, false, DBL_MAX, false, "a number >= 1",
                               &t->adaptive.k) >= 0 &&
         retry_json_get_duration(&c->j, a, "window", 0, true, INT64_MAX, DUR_POS,
                                 &t->adaptive.window_ns) >= 0 &&
         retry_json_get_number(&c->j, a, "padding", 0, false, DBL_MAX, false, "a number >= 0",
                               &t->adaptive.padding) >= 0 &&
         retry__config_get_status_list(c, a, "rejectStatusCodes", LIST_MIXED, true,
                                       &t->adaptive.reject_statuses) >= 0;
}

/* "adaptiveMode": the options of the AWS SDKs' adaptive retry mode (retryMode "adaptive"),
 * named after aws-sdk-go-v2's AdaptiveModeOptions (failOnNoAttemptTokens, requestCost) and
 * botocore's constants (beta, scaleConstant, smoothing, minFillRate, maxRateAdjustScale), with
 * throttleStatusCodes standing for the SDKs' throttling error codes in a world of statuses. */
static bool parse_aws_adaptive(load_ctx *c, json_t *a) {
  static const char *const keys[] = {
      "failOnNoAttemptTokens", "requestCost",        "beta",
      "scaleConstant",         "smoothing",          "rateBucket",
      "minFillRate",           "maxRateAdjustScale", "throttleStatusCodes"};
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(a)) {
    retry_json_fail_value(&c->j, "\"adaptiveMode\"", "an object", a);
    return false;
  }
  retry_aws_adaptive_config *ac = &t->aws_adaptive;
  return check_keys(c, a, keys, N_OF(keys)) &&
         retry_json_get_bool(&c->j, a, "failOnNoAttemptTokens", &ac->fail_fast) >= 0 &&
         retry_json_get_number(&c->j, a, "requestCost", 0, true, DBL_MAX, false, "a number > 0",
                               &ac->request_cost) >= 0 &&
         retry_json_get_number(&c->j, a, "beta", 0, true, 1, true, "a number in (0, 1)",
                               &ac->beta) >= 0 &&
         retry_json_get_number(&c->j, a, "scaleConstant", 0, true, DBL_MAX, false, "a number > 0",
                               &ac->scale_constant) >= 0 &&
         retry_json_get_number(&c->j, a, "smoothing", 0, true, 1, false, "a number in (0, 1]",
                               &ac->smoothing) >= 0 &&
         retry_json_get_duration(&c->j, a, "rateBucket", 0, true, INT64_MAX, DUR_POS,
                                 &ac->rate_bucket_ns) >= 0 &&
         retry_json_get_number(&c->j, a, "minFillRate", 0, true, DBL_MAX, false, "a number > 0",
                               &ac->min_fill_rate) >= 0 &&
         retry_json_get_number(&c->j, a, "maxRateAdjustScale", 0, true, DBL_MAX, false,
                               "a number > 0", &ac->max_rate_adjust_scale) >= 0 &&
         retry__config_get_status_list(c, a, "throttleStatusCodes", LIST_MIXED, true,
                                       &t->aws_throttle_statuses) >= 0;
}

/* "retryMode": the AWS SDKs' retry_mode, "standard" or "adaptive" ("legacy" is not modelled).
 * "standard" adds nothing here (its retry quota is "budget": {"type": "aws"}); "adaptive"
 * adds the client-side rate limiter, whose options are "adaptiveMode" (allowed only then). */
static bool parse_retry_mode(load_ctx *c, json_t *ext) {
  static const char *const modes[] = {"standard", "adaptive"};
  int mode = 0, rc = retry_json_get_enum(&c->j, ext, "retryMode", modes, N_OF(modes), &mode);
  if (rc < 0) return false;
  retry_target_config *t = &c->cfg->target;
  json_t *opts = retry_json_field(ext, "adaptiveMode");
  if (rc == 1 && mode == 1) {
    t->has_aws_adaptive = true;
    retry_aws_adaptive_config_init(&t->aws_adaptive);
    retry_aws_throttle_statuses_init(&t->aws_throttle_statuses);
    return opts == NULL || retry__config_parse_sub(c, ext, "adaptiveMode", parse_aws_adaptive);
  }
  if (opts != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "adaptiveMode");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"adaptiveMode\" applies only with \"retryMode\": \"adaptive\"");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

/* "retryBreaker": Brooker's retry-only circuit breaker. {} is the article's simulation: retries
 * stop while failures / calls since the start exceed 0.1; "window" counts only the last window
 * instead (20 bins). */
static bool parse_retry_breaker(load_ctx *c, json_t *b) {
  static const char *const keys[] = {"maxRatio", "window"};
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(b)) {
    retry_json_fail_value(&c->j, "\"retryBreaker\"", "an object", b);
    return false;
  }
  t->has_retry_breaker = true;
  retry_only_breaker_config_init(&t->retry_breaker);
  return check_keys(c, b, keys, N_OF(keys)) &&
         retry_json_get_number(&c->j, b, "maxRatio", 0, false, DBL_MAX, false, "a number >= 0",
                               &t->retry_breaker.max_ratio) >= 0 &&
         retry_json_get_duration(&c->j, b, "window", RETRY_ONLY_BREAKER_BINS, false, INT64_MAX,
                                 "a duration >= 20ns", &t->retry_breaker.window_ns) >= 0;
}

/* "concurrencyLimit": a Netflix concurrency-limits limiter on the channel's logical calls,
 * {"type": "aimd"|"vegas"|"gradient2", ...} with the Builders' names; each type takes its own
 * keys (plus the common ones) and starts from retry_limit_config_init for it. */
static bool parse_limit(load_ctx *c, json_t *b) {
  static const char *const aimd_keys[] = {
      "type",     "initialLimit", "maxLimit", "rejectStatus", "dropStatusCodes",
      "minLimit", "backoffRatio", "timeout",  "blocking",     "blockingTimeout"};
  static const char *const vegas_keys[] = {
      "type",  "initialLimit", "maxLimit",        "rejectStatus", "dropStatusCodes", "smoothing",
      "alpha", "beta",         "probeMultiplier", "blocking",     "blockingTimeout"};
  static const char *const gradient_keys[] = {"type",         "initialLimit",    "maxLimit",
                                              "rejectStatus", "dropStatusCodes", "minLimit",
                                              "smoothing",    "queueSize",       "longWindow",
                                              "rttTolerance", "blocking",        "blockingTimeout"};
  static const char *const types[] = {"aimd", "vegas", "gradient2"};
  static const retry_limit_kind kinds[] = {RETRY_LIMIT_AIMD, RETRY_LIMIT_VEGAS,
                                           RETRY_LIMIT_GRADIENT2};
  int index = 0;
  if (!block_type(c, b, "\"concurrencyLimit\"", types, N_OF(types),
                  "\"aimd\", \"vegas\" or \"gradient2\"", &index))
    return false;
  const char *const *own = index == 0 ? aimd_keys : index == 1 ? vegas_keys : gradient_keys;
  size_t n_own = index == 0 ? N_OF(aimd_keys) : index == 1 ? N_OF(vegas_keys) : N_OF(gradient_keys);
  if (!check_keys(c, b, own, n_own)) return false;
  retry_target_config *t = &c->cfg->target;
  retry_target_config_set_limit(t, kinds[index]);
  retry_limit_config *l = &t->limit;
  if (!(retry_json_get_int32(&c->j, b, "initialLimit", 1, INT32_MAX, "an integer >= 1",
                             &l->initial_limit) >= 0 &&
        retry_json_get_int32(&c->j, b, "maxLimit", 1, INT32_MAX, "an integer >= 1",
                             &l->max_limit) >= 0 &&
        retry_json_get_int32(&c->j, b, "minLimit", 0, INT32_MAX, "an integer >= 0",
                             &l->min_limit) >= 0 &&
        retry_json_get_number(&c->j, b, "backoffRatio", 0.5, false, 1, true, "a number in [0.5, 1)",
                              &l->backoff_ratio) >= 0 &&
        retry_json_get_duration(&c->j, b, "timeout", 0, true, INT64_MAX, DUR_POS, &l->timeout_ns) >=
            0 &&
        retry_json_get_number(&c->j, b, "smoothing", 0, true, 1, false, "a number in (0, 1]",
                              &l->smoothing) >= 0 &&
        retry_json_get_int32(&c->j, b, "alpha", 1, INT32_MAX, "an integer >= 1", &l->alpha) >= 0 &&
        retry_json_get_int32(&c->j, b, "beta", 1, INT32_MAX, "an integer >= 1", &l->beta) >= 0 &&
        retry_json_get_int32(&c->j, b, "probeMultiplier", 1, INT32_MAX, "an integer >= 1",
                             &l->probe_multiplier) >= 0 &&
        retry_json_get_int32(&c->j, b, "queueSize", 0, INT32_MAX, "an integer >= 0",
                             &l->queue_size) >= 0 &&
        retry_json_get_int32(&c->j, b, "longWindow", 1, INT32_MAX, "an integer >= 1",
                             &l->long_window) >= 0 &&
        retry_json_get_number(&c->j, b, "rttTolerance", 1, false, DBL_MAX, false, "a number >= 1",
                              &l->rtt_tolerance) >= 0 &&
        retry__config_get_status_list(c, b, "dropStatusCodes", LIST_MIXED, true,
                                      &t->limit_drop_statuses) >= 0 &&
        retry_json_get_bool(&c->j, b, "blocking", &l->blocking) >= 0 &&
        retry_json_get_duration(&c->j, b, "blockingTimeout", 0, true, INT64_MAX, DUR_POS,
                                &l->block_timeout_ns) >= 0))
    return false;
  if (!l->blocking && retry_json_field(b, "blockingTimeout") != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "blockingTimeout");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"blockingTimeout\" needs \"blocking\": true (a limiter that refuses at once "
                    "waits for nothing)");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  if (l->min_limit > l->max_limit) {
    size_t mark = retry_json_path_push_key(&c->j, "minLimit");
    retry_json_fail(&c->j, RETRY_ECONFIG, "\"minLimit\" (%d) must not exceed \"maxLimit\" (%d)",
                    (int)l->min_limit, (int)l->max_limit);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  /* "rejectStatus": a list of at most one status per space; a gRPC code sets the gRPC-space
   * status, an HTTP one the HTTP status (the other keeps its default). */
  json_t *rs = retry_json_field(b, "rejectStatus");
  if (rs == NULL) return true;
  retry_status_set one;
  retry_status_set_clear(&one);
  if (retry__config_get_status_list(c, b, "rejectStatus", LIST_MIXED, true, &one) < 0) return false;
  int n_grpc = 0, n_http = 0;
  for (int g = 1; g < RETRY_GRPC_N_CODES; g++)
    if (retry_status_set_has(&one, RETRY_SPACE_GRPC, g)) {
      t->limit_reject_grpc = g;
      n_grpc++;
    }
  for (int h = 300; h < 600; h++)
    if (retry_status_set_has(&one, RETRY_SPACE_HTTP, h)) {
      t->limit_reject_http = h;
      n_http++;
    }
  if (n_grpc > 1 || n_http > 1 || (n_grpc == 0 && n_http == 0)) {
    size_t mark = retry_json_path_push_key(&c->j, "rejectStatus");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"rejectStatus\" takes at most one gRPC code and one HTTP status in 300..599, "
                    "such as [\"RESOURCE_EXHAUSTED\", 429]");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

/* Fails on the first key of b that belongs to the other kind of breaker, with a message that
 * says so: "failureThreshold" on a "count" breaker is a known key in the wrong place, and
 * "unknown key" would send the user looking for a typo. */
static bool check_breaker_kind(load_ctx *c, json_t *b, const char *type, bool consecutive,
                               const char *const *own, size_t n_own, const char *const *other,
                               size_t n_other) {
  for (void *it = json_object_iter(b); it != NULL; it = json_object_iter_next(b, it)) {
    const char *key = json_object_iter_key(it);
    if (retry_json_key_in(key, own, n_own) || !retry_json_key_in(key, other, n_other)) continue;
    size_t mark = retry_json_path_push_key(&c->j, key);
    retry_json_fail(&c->j, RETRY_ECONFIG, "\"%s\" applies to %s breakers only; this one is \"%s\"",
                    key, consecutive ? "\"count\" and \"time\"" : "\"consecutive\"", type);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

/* "circuitBreaker": {"type": "consecutive"|"count"|"time", ...}, key names after
 * resilience4j's. The type decides which keys make sense; the rest start from
 * retry_breaker_config_init for that type. The lower bounds are resilience4j's
 * (CircuitBreakerConfig): a rate threshold in (0, 100], window, minimum calls and half-open
 * permits of at least 1. Its open wait must be >= 1 ms; ours need only be > 0. As there,
 * slidingWindowSize counts calls for "count" and seconds (one bucket each) for "time". */
static bool parse_breaker(load_ctx *c, json_t *b) {
  static const char *const consecutive_keys[] = {
      "type", "failureThreshold", "waitDurationInOpenState",
      "permittedNumberOfCallsInHalfOpenState", "failureStatusCodes"};
  static const char *const window_keys[] = {"type",
                                            "failureRateThreshold",
                                            "slidingWindowSize",
                                            "minimumNumberOfCalls",
                                            "waitDurationInOpenState",
                                            "permittedNumberOfCallsInHalfOpenState",
                                            "failureStatusCodes"};
  /* In retry_breaker_kind order. */
  static const char *const types[] = {"consecutive", "count", "time"};
  retry_target_config *t = &c->cfg->target;
  int index = 0;
  if (!block_type(c, b, "\"circuitBreaker\"", types, N_OF(types),
                  "\"consecutive\", \"count\" or \"time\"", &index))
    return false;
  static const retry_breaker_kind kinds[] = {RETRY_BREAKER_CONSECUTIVE, RETRY_BREAKER_COUNT_WINDOW,
                                             RETRY_BREAKER_TIME_WINDOW};
  retry_breaker_kind kind = kinds[index];
  bool consecutive = kind == RETRY_BREAKER_CONSECUTIVE;
  const char *const *own = consecutive ? consecutive_keys : window_keys;
  const char *const *other = consecutive ? window_keys : consecutive_keys;
  size_t n_own = consecutive ? N_OF(consecutive_keys) : N_OF(window_keys);
  size_t n_other = consecutive ? N_OF(window_keys) : N_OF(consecutive_keys);
  if (!check_breaker_kind(c, b, types[index], consecutive, own, n_own, other, n_other) ||
      !check_keys(c, b, own, n_own))
    return false;
  t->has_breaker = true;
  retry_breaker_config_init(&t->breaker, kind);
  retry_breaker_config *bc = &t->breaker;
  return retry_json_get_int32(&c->j, b, "failureThreshold", 1, INT32_MAX, "an integer >= 1",
                              &bc->failure_threshold) >= 0 &&
         retry_json_get_number(&c->j, b, "failureRateThreshold", 0, true, 100, false,
                               "a number in (0, 100]", &bc->failure_rate_threshold) >= 0 &&
         retry_json_get_int32(&c->j, b, "slidingWindowSize", 1, INT32_MAX, "an integer >= 1",
                              &bc->window_size) >= 0 &&
         retry_json_get_int32(&c->j, b, "minimumNumberOfCalls", 1, INT32_MAX, "an integer >= 1",
                              &bc->minimum_calls) >= 0 &&
         retry_json_get_duration(&c->j, b, "waitDurationInOpenState", 0, true, INT64_MAX, DUR_POS,
                                 &bc->open_duration_ns) >= 0 &&
         retry_json_get_int32(&c->j, b, "permittedNumberOfCallsInHalfOpenState", 1, INT32_MAX,
                              "an integer >= 1", &bc->half_open_calls) >= 0 &&
         retry__config_get_status_list(c, b, "failureStatusCodes", LIST_MIXED, true,
                                       &bc->failure_statuses) >= 0 &&
         (retry_json_field(b, "failureRateThreshold") == NULL ||
          !(bc->failure_rate_threshold < 1) ||
          warn_unit(c, b, "failureRateThreshold",
                    "opens the breaker at under 1 % failures: it is a percent, 50 is 50 %"));
}

/* }================================================================== */

/* {==================================================================
 * The top-level block
 * =================================================================== */

/* The top-level block: channel-wide settings and the default method options. Read before
 * methodConfig because its maxAttemptsLimit, idempotentMethods and statusSpace shape every
 * policy built there. maxAttemptsLimit replaces the client's cap (gRPC's 5, A6) so a study
 * can see what a config asking for 10 attempts would really do. */
bool retry__config_ext_parse(load_ctx *c, json_t *ext) {
  if (!json_is_object(ext)) {
    retry_json_fail_value(&c->j, "\"retrysim\"", "an object", ext);
    return false;
  }
  if (!check_keys(c, ext, top_keys, N_OF(top_keys)) || !parse_method_opts(c, ext, &c->top))
    return false;
  if (retry_json_get_int32(&c->j, ext, "maxAttemptsLimit", 1, 1000, "an integer in [1, 1000]",
                           &c->cfg->max_attempts_limit) < 0)
    return false;
  /* "profile": the implementation the policy models (retry_profile.c), one of its names. */
  const char *profiles[8];
  size_t n_profiles = 0;
  while (n_profiles < N_OF(profiles) && retry_profile_at(n_profiles) != NULL) {
    profiles[n_profiles] = retry_profile_at(n_profiles)->name;
    n_profiles++;
  }
  int which = 0, prc = retry_json_get_enum(&c->j, ext, "profile", profiles, n_profiles, &which);
  if (prc < 0) return false;
  if (prc == 1) c->top.profile = retry_profile_at((size_t)which);
  /* The throttle's scope is the profile's (the default one keeps it per channel). */
  c->cfg->target.throttle_per_process =
      (prc == 1 ? c->top.profile : retry_profile_default())->throttle_per_process;
  return retry__config_parse_sub(c, ext, "idempotentMethods", parse_idempotent) &&
         retry__config_parse_sub(c, ext, "budget", parse_budget) &&
         retry__config_parse_sub(c, ext, "adaptiveThrottling", parse_adaptive) &&
         retry__config_parse_sub(c, ext, "circuitBreaker", parse_breaker) &&
         parse_retry_mode(c, ext) &&
         retry__config_parse_sub(c, ext, "retryBreaker", parse_retry_breaker) &&
         retry__config_parse_sub(c, ext, "concurrencyLimit", parse_limit);
}

/* }================================================================== */
