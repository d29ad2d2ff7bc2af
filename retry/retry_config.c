/*
 * retry_config.c: the gRPC service config loader: methodConfig, retryThrottling and lookup.
 *
 * Owns the load context; both halves of the loader walk the tree with retry_json.h (errors,
 * JSON paths, typed getters), and retry_config_ext.c reads the "retrysim" block. The JSON tree
 * lives only while loading: what comes out is plain retry_policy / retry_target_config structs.
 */
#include "retry_config_int.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Validation follows gRPC (A6, A21, service_config.md): any known field that fails makes the
 * whole config fail, unknown standard fields are ignored (with a warning, see Warnings). A21 asks
 * for both: a client keeps its previous config rather than run with part of a new one, and gRPC
 * keeps adding fields, so a config written for a newer client must still load.
 * docs/service-config.md is the user's view of the rules. */

/* {==================================================================
 * Helpers of both halves (the rest come from retry_json.h)
 * =================================================================== */

/* Calls parse(c, value) with the path at obj.key when the key is present (absent and null
 * are fine: every block this is used for is optional). */
bool retry__config_parse_sub(load_ctx *c, json_t *obj, const char *key,
                             bool (*parse)(load_ctx *c, json_t *v)) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, key);
  bool ok = parse(c, v);
  retry_json_path_pop(&c->j, mark);
  return ok;
}

/* }================================================================== */

/* {==================================================================
 * Warnings
 *
 * gRPC ignores fields it does not know (A21: a config written for a newer client must still
 * load), and so does this loader; but an ignored field is usually a typo, and a misspelt
 * "retryPolicy" or "methodConfig" silently turns retries off. Each ignored field is therefore
 * reported to the caller's sink, and strict makes it an error. Case gets its own words:
 * grpc-go decodes the service config with encoding/json into untagged structs, which matches
 * field names case-insensitively, so its own retry example's "MaxAttempts" works there, while
 * grpc-java (JsonUtil lookups by exact key) and C-core (its JSON object loader) do not see the
 * field at all and then refuse the policy for want of maxAttempts.
 * =================================================================== */

bool retry__config_warn(load_ctx *c, const char *fmt, ...) {
  if (retry_json_failed(&c->j)) return false;
  char msg[sizeof c->j.e.message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->strict) {
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s", msg);
    return false;
  }
  if (c->warn == NULL) return true;
  retry_error w;
  retry_error_clear(&w);
  retry_error_set(&w, RETRY_ECONFIG, c->j.source, c->j.path, -1, -1, "%s%s",
                  c->j.prefix != NULL ? c->j.prefix : "", msg);
  c->warn(c->warn_ctx, &w);
  return true;
}

/* The top-level keys of a retrysim scenario: a scenario given where a service config was
 * expected loads as a config with no retries at all, so the warning says what it is. */
static bool is_scenario_key(const char *key) {
  static const char *const keys[] = {"services", "clients", "duration", "variants", "expect"};
  return retry_json_key_in(key, keys, N_OF(keys));
}

/* Where a field of the service config belongs, for one written at the wrong level (a
 * retryPolicy at the top level, maxAttempts directly in an entry); NULL for other keys. */
static const char *home_of(const char *key) {
  static const struct {
    const char *key, *home;
  } homes[] = {
      {"name", "a methodConfig entry"},
      {"timeout", "a methodConfig entry"},
      {"retryPolicy", "a methodConfig entry"},
      {"hedgingPolicy", "a methodConfig entry"},
      {"waitForReady", "a methodConfig entry"},
      {"maxAttempts", "a retryPolicy or hedgingPolicy"},
      {"initialBackoff", "a retryPolicy"},
      {"maxBackoff", "a retryPolicy"},
      {"backoffMultiplier", "a retryPolicy"},
      {"retryableStatusCodes", "a retryPolicy"},
      {"hedgingDelay", "a hedgingPolicy"},
      {"nonFatalStatusCodes", "a hedgingPolicy"},
      {"maxTokens", "retryThrottling"},
      {"tokenRatio", "retryThrottling"},
      {"service", "a name object of a methodConfig entry"},
      {"method", "a name object of a methodConfig entry"},
      {"methodConfig", "the top level"},
      {"retryThrottling", "the top level"},
      {"budget", "the top-level retrysim block"},
      {"adaptiveThrottling", "the top-level retrysim block"},
      {"circuitBreaker", "the top-level retrysim block"},
      {"maxAttemptsLimit", "the top-level retrysim block"},
      {"idempotentMethods", "the top-level retrysim block"},
      {"jitter", "a retrysim block"},
      {"perAttemptTimeout", "a retrysim block"},
      {"statusSpace", "a retrysim block"},
  };
  for (size_t i = 0; i < N_OF(homes); i++)
    if (strcmp(key, homes[i].key) == 0) return homes[i].home;
  return NULL;
}

bool retry__config_check_fields(load_ctx *c, json_t *obj, const char *const *known, size_t n_known,
                                const char *const *quiet, size_t n_quiet) {
  const char *all[24];
  assert(n_known + n_quiet <= N_OF(all));
  size_t n_all = 0;
  for (size_t i = 0; i < n_known && n_all < N_OF(all); i++)
    all[n_all++] = known[i];
  for (size_t i = 0; i < n_quiet && n_all < N_OF(all); i++)
    all[n_all++] = quiet[i];
  for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it)) {
    const char *key = json_object_iter_key(it);
    if (retry_json_key_in(key, all, n_all)) continue;
    char shown[48];
    retry_json_printable(shown, sizeof shown, key, 40);
    bool case_only = false;
    const char *near = retry_json_suggest(key, all, n_all, &case_only);
    size_t mark = retry_json_path_push_key(&c->j, key);
    bool ok;
    if (near != NULL && case_only) {
      ok = retry__config_warn(c,
                              "field \"%s\" ignored: the field is \"%s\" (only the case differs; "
                              "grpc-go accepts that, grpc-java and C-core do not)",
                              shown, near);
    } else if (near != NULL) {
      ok = retry__config_warn(c, "unknown field \"%s\" ignored; did you mean \"%s\"?", shown, near);
    } else if (home_of(key) != NULL) {
      ok = retry__config_warn(c, "field \"%s\" ignored: it belongs in %s", shown, home_of(key));
    } else if (mark == 1 && is_scenario_key(key)) {
      ok = retry__config_warn(c,
                              "unknown field \"%s\" ignored: this looks like a retrysim scenario, "
                              "not a service config",
                              shown);
    } else {
      /* The known fields when they fit in a message, else the bare warning. */
      char list[sizeof c->j.e.message];
      size_t len = 0;
      for (size_t i = 0; i < n_known && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", known[i]);
      char probe[sizeof c->j.e.message];
      int need = snprintf(probe, sizeof probe, "unknown field \"%s\" ignored; known here: %s",
                          shown, list);
      if (len < sizeof list && need > 0 && (size_t)need < sizeof probe)
        ok = retry__config_warn(c, "%s", probe);
      else
        ok = retry__config_warn(c, "unknown field \"%s\" ignored", shown);
    }
    retry_json_path_pop(&c->j, mark);
    if (!ok) return false;
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Status lists
 *
 * gRPC lists hold code names or numbers. An HTTP layer's lists hold statuses and the tokens
 * of Envoy's retry_on ("5xx", "gateway-error", "retriable-4xx"), so a gateway's policy can
 * be written the way its Envoy route would say it. The numbering comes from list_space.
 * =================================================================== */

/* What a list may hold, for messages. Code 0 is left out although add_status recognises it:
 * it is OK, which no list may hold, and gets a message of its own. */
static const char *list_what(list_space sp) {
  switch (sp) {
    case LIST_GRPC: return "upper-case gRPC code names or integers in [1, 16]";
    case LIST_HTTP:
      return "HTTP statuses in [100, 599] or tokens such as \"5xx\", \"gateway-error\"";
    case LIST_MIXED: break;
  }
  return "gRPC codes (names or 1..16) or HTTP statuses (100..599, \"5xx\", \"gateway-error\")";
}

/* Any 2xx, not only 200: retry_status_is_ok counts the whole class as success. */
static bool has_http_success(const retry_status_set *s) {
  for (int st = 200; st <= 299; st++)
    if (retry_status_set_has(s, RETRY_SPACE_HTTP, st)) return true;
  return false;
}

/* Adds one list member to *s. Returns 1, 0 when v names no status, -1 when it names a
 * success (OK, 2xx), which no list may hold: grpc-java refuses OK in retryable codes, and a
 * success counted as a breaker failure or a throttling reject would be a config bug. The
 * token goes into a scratch set first so a refused token leaves *s unchanged.
 * Code names are upper case only: A6 calls them case-insensitive, but grpc-go
 * (codes.Code.UnmarshalJSON) and grpc-java (Status.Code.valueOf) accept nothing else, so a
 * config that loads here loads there too. */
static int add_status(retry_status_set *s, list_space sp, const json_t *v) {
  retry_status_set one;
  retry_status_set_clear(&one);
  if (json_is_integer(v)) {
    json_int_t n = json_integer_value(v);
    if (sp != LIST_HTTP && n >= 0 && n < RETRY_GRPC_N_CODES)
      retry_status_set_add(&one, RETRY_SPACE_GRPC, (int)n);
    else if (sp != LIST_GRPC && n >= 100 && n <= 599)
      retry_status_set_add(&one, RETRY_SPACE_HTTP, (int)n);
    else
      return 0;
  } else if (json_is_string(v)) {
    /* A name is tried as a gRPC code first, then as an HTTP token. The two vocabularies do
     * not overlap ("UNAVAILABLE" against "503", "5xx", "gateway-error"), so order is moot. */
    const char *tok = json_string_value(v);
    bool is_grpc =
        sp != LIST_HTTP && retry_status_set_add_token(&one, RETRY_SPACE_GRPC, tok) == RETRY_OK;
    if (!is_grpc &&
        (sp == LIST_GRPC || retry_status_set_add_token(&one, RETRY_SPACE_HTTP, tok) != RETRY_OK))
      return 0;
  } else {
    return 0;
  }
  if (retry_status_set_has(&one, RETRY_SPACE_GRPC, RETRY_GRPC_OK) || has_http_success(&one))
    return -1;
  s->grpc |= one.grpc;
  for (size_t i = 0; i < N_OF(s->http); i++)
    s->http[i] |= one.http[i];
  return 1;
}

/* Reads a status list into *out, replacing (not extending) the default it held: a list in
 * the config is the whole list. non_empty: [] is an error (A6 requires a non-empty
 * retryableStatusCodes; an empty breaker or reject list would switch the mechanism off). */
int retry__config_get_status_list(load_ctx *c, json_t *obj, const char *key, list_space sp,
                                  bool non_empty, retry_status_set *out) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return 0;
  size_t mark = retry_json_path_push_key(&c->j, key);
  char what[160], label[64];
  snprintf(what, sizeof what, "%sarray of %s", non_empty ? "a non-empty " : "an ", list_what(sp));
  retry_json_quote(label, sizeof label, key);
  if (!json_is_array(v) || (non_empty && json_array_size(v) == 0)) {
    retry_json_fail_value(&c->j, label, what, v);
    retry_json_path_pop(&c->j, mark);
    return -1;
  }
  retry_status_set_clear(out);
  for (size_t i = 0; i < json_array_size(v); i++) {
    json_t *item = json_array_get(v, i);
    int rc = add_status(out, sp, item);
    if (rc == 1) continue;
    char got[64];
    retry_json_describe(item, got, sizeof got);
    retry_json_path_push_index(&c->j, i); /* undone by the pop of the key below */
    if (rc == 0)
      retry_json_fail(&c->j, RETRY_ECONFIG, "%s entries must be %s, got %s", label, list_what(sp),
                      got);
    else
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "%s must not contain a success status (OK, 2xx), got %s", label, got);
    break;
  }
  retry_json_path_pop(&c->j, mark);
  return retry_json_failed(&c->j) ? -1 : 1;
}

/* }================================================================== */

/* {==================================================================
 * methodConfig
 *
 * Entry i fills cfg->methods[i] and adds its names to cfg->keys. Its policy is built in
 * layers: retry_policy_init in the entry's status space, then the gRPC fields, then the
 * extension's method options, and last the engine's own validation of the result.
 * =================================================================== */

/* Reads an entry's name list into cfg->keys. The rules are gRPC's (service_config.md, A21):
 * each name is an object whose "service" and "method" are strings (or null / absent); a
 * method without a service is invalid, since it could never be looked up. Unknown keys in a
 * name object are ignored like any unknown standard field. Duplicates are found later, across
 * every entry, by sort_names(). */
static bool parse_names(load_ctx *c, json_t *names, size_t entry) {
  retry_config *cfg = c->cfg;
  if (!json_is_array(names)) {
    retry_json_fail_value(&c->j, "\"name\"",
                          "an array of {\"service\": ..., \"method\": ...} objects", names);
    return false;
  }
  for (size_t j = 0; j < json_array_size(names); j++) {
    json_t *n = json_array_get(names, j);
    size_t mark = retry_json_path_push_index(&c->j, j);
    if (!json_is_object(n)) {
      retry_json_fail_value(&c->j, "\"name\" entries",
                            "objects such as {\"service\": \"pkg.Service\"}", n);
      return false;
    }
    static const char *const name_fields[] = {"service", "method"};
    if (!retry__config_check_fields(c, n, name_fields, N_OF(name_fields), NULL, 0)) return false;
    json_t *parts[2] = {retry_json_field(n, "service"), retry_json_field(n, "method")};
    static const char *const part_keys[2] = {"service", "method"};
    for (int k = 0; k < 2; k++) {
      if (parts[k] != NULL && !json_is_string(parts[k])) {
        retry_json_path_push_key(&c->j, part_keys[k]); /* no pop: the path dies with the error */
        retry_json_fail_value(&c->j, k == 0 ? "\"service\"" : "\"method\"", "a string", parts[k]);
        return false;
      }
    }
    /* measure() counted every name object, so cfg->keys has room for this one. */
    name_key *key = &cfg->keys[cfg->n_keys];
    key->service_len = parts[0] ? json_string_length(parts[0]) : 0;
    key->method_len = parts[1] ? json_string_length(parts[1]) : 0;
    if (key->method_len > 0 && key->service_len == 0) {
      char m[48];
      retry_json_printable(m, sizeof m, json_string_value(parts[1]), 40);
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "method \"%s\" needs a service: a name is {\"service\": s} or "
                      "{\"service\": s, \"method\": m}",
                      m);
      return false;
    }
    key->service =
        parts[0] ? retry__config_copy_string(c, json_string_value(parts[0]), key->service_len) : "";
    key->method =
        parts[1] ? retry__config_copy_string(c, json_string_value(parts[1]), key->method_len) : "";
    key->entry = entry;
    key->index = j;
    cfg->n_keys++;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* Reads maxAttempts (> 1; clamped to the client limit without error, as gRPC does: grpc-go
 * takes min(json, WithMaxCallAttempts), grpc-java min(json, maxRetryAttempts), C-core clamps
 * to MAX_MAX_RETRY_ATTEMPTS and only logs it). The policy keeps the configured value too. */
static bool parse_max_attempts(load_ctx *c, json_t *obj, retry_policy *p) {
  int64_t n = 0;
  if (retry_json_require(
          &c->j, retry_json_get_int(&c->j, obj, "maxAttempts", 2, INT64_MAX, "an integer > 1", &n),
          "maxAttempts", "an integer > 1") < 0)
    return false;
  /* A value past int32 saturates rather than wraps, so it still counts as above the cap. */
  retry_policy_set_max_attempts(p, n > INT32_MAX ? INT32_MAX : (int32_t)n,
                                c->cfg->max_attempts_limit);
  return true;
}

/* retryPolicy (A6): every field required, as grpc-go's isValidRetryPolicy checks them
 * (maxAttempts > 1, both backoffs and the multiplier > 0, a non-empty code list). Fields of
 * newer gRPC releases that we do not model (perAttemptRecvTimeout) are ignored like any
 * unknown field. Java and C-core allow an empty retryableStatusCodes when
 * perAttemptRecvTimeout is set; without that field modelled, an empty list is always an error
 * here. */
static bool parse_retry_policy(load_ctx *c, json_t *rp, retry_policy *p, list_space sp) {
  if (!json_is_object(rp)) {
    retry_json_fail_value(&c->j, "\"retryPolicy\"", "an object", rp);
    return false;
  }
  static const char *const fields[] = {"maxAttempts", "initialBackoff", "maxBackoff",
                                       "backoffMultiplier", "retryableStatusCodes"};
  static const char *const quiet[] = {"perAttemptRecvTimeout"}; /* warned about below */
  if (!retry__config_check_fields(c, rp, fields, N_OF(fields), quiet, N_OF(quiet))) return false;
  if (retry_json_field(rp, "perAttemptRecvTimeout") != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "perAttemptRecvTimeout");
    bool ok = retry__config_warn(c,
                                 "\"perAttemptRecvTimeout\" is not modelled and is ignored; "
                                 "retrysim.perAttemptTimeout is the nearest option");
    retry_json_path_pop(&c->j, mark);
    if (!ok) return false;
  }
  p->kind = RETRY_POLICY_RETRY;
  return parse_max_attempts(c, rp, p) &&
         retry_json_require(&c->j,
                            retry_json_get_duration(&c->j, rp, "initialBackoff", 0, true, INT64_MAX,
                                                    DUR_POS, &p->backoff.initial_ns),
                            "initialBackoff", DUR_POS) >= 0 &&
         retry_json_require(&c->j,
                            retry_json_get_duration(&c->j, rp, "maxBackoff", 0, true, INT64_MAX,
                                                    DUR_POS, &p->backoff.max_ns),
                            "maxBackoff", DUR_POS) >= 0 &&
         retry_json_require(&c->j,
                            retry_json_get_number(&c->j, rp, "backoffMultiplier", 0, true, DBL_MAX,
                                                  false, "a number > 0", &p->backoff.multiplier),
                            "backoffMultiplier", "a number > 0") >= 0 &&
         retry_json_require(
             &c->j,
             retry__config_get_status_list(c, rp, "retryableStatusCodes", sp, true, &p->retryable),
             "retryableStatusCodes", "a non-empty array of status codes") >= 0;
}

/* hedgingPolicy (A6): maxAttempts required, hedgingDelay and nonFatalStatusCodes optional
 * (grpc-java insists on hedgingDelay; A6 does not). grpc-java is the only gRPC client that
 * implements hedging (grpc-go ignores the field as unknown). The engine tracks hedges in
 * flight in a 64-bit mask, so after the clamp at most 64 attempts fit; with gRPC's cap of 5
 * that limit is only reachable once maxAttemptsLimit lifts the cap. */
static bool parse_hedging_policy(load_ctx *c, json_t *hp, retry_policy *p, list_space sp) {
  if (!json_is_object(hp)) {
    retry_json_fail_value(&c->j, "\"hedgingPolicy\"", "an object", hp);
    return false;
  }
  static const char *const fields[] = {"maxAttempts", "hedgingDelay", "nonFatalStatusCodes"};
  if (!retry__config_check_fields(c, hp, fields, N_OF(fields), NULL, 0)) return false;
  p->kind = RETRY_POLICY_HEDGE;
  if (!parse_max_attempts(c, hp, p)) return false;
  if (p->max_attempts > RETRY_MAX_HEDGED_ATTEMPTS) {
    size_t mark = retry_json_path_push_key(&c->j, "maxAttempts");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "hedging \"maxAttempts\" must be at most %d after the client limit, got %d",
                    RETRY_MAX_HEDGED_ATTEMPTS, (int)p->max_attempts);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  p->hedging_delay_ns = 0; /* absent: send every hedge at once */
  /* nonFatalStatusCodes share p->retryable: for a hedge they are the statuses that send the
   * next hedge at once instead of ending the call (A6). */
  return retry_json_get_duration(&c->j, hp, "hedgingDelay", 0, false, INT64_MAX, DUR_NONNEG,
                                 &p->hedging_delay_ns) >= 0 &&
         retry__config_get_status_list(c, hp, "nonFatalStatusCodes", sp, false, &p->retryable) >= 0;
}

/* Whether a path from retry_policy_validate names a field of retryPolicy / hedgingPolicy. */
static bool is_policy_field(const char *rel) {
  static const char *const fields[] = {"maxAttempts",        "initialBackoff",       "maxBackoff",
                                       "backoffMultiplier",  "retryableStatusCodes", "hedgingDelay",
                                       "nonFatalStatusCodes"};
  return retry_json_key_in(rel, fields, N_OF(fields));
}

/* Runs the engine's own checks and reports them under the entry's path. Most of them were
 * made field by field already; this pass guarantees that the loader never hands out a policy
 * retry_policy_validate would refuse. Its paths are field names relative to the policy, or
 * to the entry for the extension's options, hence the prefix chosen here. */
static bool validate_policy(load_ctx *c, const retry_policy *p) {
  retry_error ve;
  retry_error_clear(&ve);
  if (retry_policy_validate(p, &ve) == RETRY_OK) return true;
  size_t mark = c->j.path_len;
  if (ve.path[0] != '\0' && is_policy_field(ve.path))
    retry_json_path_push_key(&c->j,
                             p->kind == RETRY_POLICY_HEDGE ? "hedgingPolicy" : "retryPolicy");
  if (ve.path[0] != '\0') retry_json_path_push_key(&c->j, ve.path);
  retry_json_fail(&c->j, ve.code != RETRY_OK ? ve.code : RETRY_ECONFIG, "%s",
                  ve.message[0] ? ve.message : "invalid policy");
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* One methodConfig entry, in a fixed order so the first error is predictable: names, the
 * entry's extension block (its statusSpace decides how status lists read), plain fields,
 * then the policy. An entry without names is read and validated all the same, as C-core does:
 * A21 makes any invalid known field fatal, wherever it sits; it just selects no method.
 * waitForReady and the message size limits are validated and dropped: libretry has no use
 * for them, but A21 still makes a malformed one fatal. timeout goes to the caller in
 * timeout_ns: gRPC makes min(timeout, the application's deadline) the call's deadline, which
 * spans every attempt. A negative timeout is refused: it would fail every call at once. */
static bool parse_entry(load_ctx *c, json_t *entry, size_t i) {
  retry_config *cfg = c->cfg;
  retry_method_config *mc = &cfg->methods[i];
  if (!json_is_object(entry)) {
    retry_json_fail_value(&c->j, "\"methodConfig\" entries", "objects", entry);
    return false;
  }
  static const char *const fields[] = {"name",
                                       "timeout",
                                       "retryPolicy",
                                       "hedgingPolicy",
                                       "waitForReady",
                                       "maxRequestMessageBytes",
                                       "maxResponseMessageBytes",
                                       "retrysim"};
  if (!retry__config_check_fields(c, entry, fields, N_OF(fields), NULL, 0)) return false;
  json_t *names = retry_json_field(entry, "name");
  if (names != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "name");
    if (!parse_names(c, names, i)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  method_opts mo;
  if (!retry__config_ext_entry_opts(c, entry, &mo)) return false;
  retry_space space = mo.has_space ? mo.space : RETRY_SPACE_GRPC;
  retry_policy_init(&mc->policy, space);
  mc->timeout_ns = RETRY_NEVER;
  mc->matched = true;
  bool b;
  int64_t n;
  if (retry_json_get_duration(&c->j, entry, "timeout", 0, false, INT64_MAX, DUR_NONNEG,
                              &mc->timeout_ns) < 0 ||
      retry_json_get_bool(&c->j, entry, "waitForReady", &b) < 0 ||
      retry_json_get_int(&c->j, entry, "maxRequestMessageBytes", 0, INT64_MAX, "an integer >= 0",
                         &n) < 0 ||
      retry_json_get_int(&c->j, entry, "maxResponseMessageBytes", 0, INT64_MAX, "an integer >= 0",
                         &n) < 0)
    return false;
  json_t *rp = retry_json_field(entry, "retryPolicy");
  json_t *hp = retry_json_field(entry, "hedgingPolicy");
  /* A policy's own lists are never mixed: the outcomes it judges all come in its space. */
  list_space sp = space == RETRY_SPACE_HTTP ? LIST_HTTP : LIST_GRPC;
  if (rp != NULL && hp != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "hedgingPolicy");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"retryPolicy\" and \"hedgingPolicy\" are exclusive: a methodConfig "
                    "may have one of them, not both");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  if (rp != NULL || hp != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, rp != NULL ? "retryPolicy" : "hedgingPolicy");
    bool ok = rp != NULL ? parse_retry_policy(c, rp, &mc->policy, sp)
                         : parse_hedging_policy(c, hp, &mc->policy, sp);
    if (!ok) return false;
    retry_json_path_pop(&c->j, mark);
  }
  retry__config_ext_apply(cfg, &mc->policy, &mo);
  if (mc->policy.hedging_ignored) {
    /* The profile's implementation accepts a hedgingPolicy and ignores it (C-core 1.51 sends
     * one attempt): the scenario then models what that client does, and says so. */
    size_t mark = retry_json_path_push_key(&c->j, "hedgingPolicy");
    bool ok = retry__config_warn(c,
                                 "\"hedgingPolicy\" ignored: profile \"%s\" does not hedge, so "
                                 "each call makes one attempt (as that implementation does)",
                                 mo.profile != NULL ? mo.profile->name : "?");
    retry_json_path_pop(&c->j, mark);
    if (!ok) return false;
  }
  return validate_policy(c, &mc->policy);
}

/* Orders names by (service, method), then by position in the document. The tie-break makes
 * the order total, so qsort's instability cannot change which duplicate is reported.
 * Comparison is bytewise, like gRPC's map lookups: "Svc" and "svc" are two names. */
static int cmp_part(const char *a, size_t a_len, const char *b, size_t b_len) {
  size_t n = a_len < b_len ? a_len : b_len;
  int r = n > 0 ? memcmp(a, b, n) : 0;
  if (r != 0) return r;
  return a_len < b_len ? -1 : a_len > b_len;
}

static int cmp_key(const void *pa, const void *pb) {
  const name_key *a = pa, *b = pb;
  int r = cmp_part(a->service, a->service_len, b->service, b->service_len);
  if (r == 0) r = cmp_part(a->method, a->method_len, b->method, b->method_len);
  if (r == 0)
    r = a->entry != b->entry ? (a->entry < b->entry ? -1 : 1)
                             : (a->index < b->index ? -1 : a->index > b->index);
  return r;
}

static bool same_name(const name_key *a, const name_key *b) {
  return cmp_part(a->service, a->service_len, b->service, b->service_len) == 0 &&
         cmp_part(a->method, a->method_len, b->method, b->method_len) == 0;
}

/* Sorts the names and rejects duplicates, reporting the one that comes first in the document
 * among those that repeat an earlier name. service_config.md requires each name to be
 * "unique across the entire service config" and gRPC clients reject a repeat, since which
 * entry applies would otherwise be anyone's guess. This runs last, after every entry was
 * read, because a duplicate can span two entries. */
static bool sort_names(load_ctx *c) {
  retry_config *cfg = c->cfg;
  if (cfg->n_keys == 0) return true;
  qsort(cfg->keys, cfg->n_keys, sizeof cfg->keys[0], cmp_key);
  const name_key *dup = NULL, *first = NULL, *group = &cfg->keys[0];
  for (size_t k = 1; k < cfg->n_keys; k++) {
    const name_key *cur = &cfg->keys[k];
    if (!same_name(cur, group)) {
      group = cur;
      continue;
    }
    bool earlier = dup == NULL || cur->entry < dup->entry ||
                   (cur->entry == dup->entry && cur->index < dup->index);
    if (earlier) {
      dup = cur;
      first = group;
    }
  }
  if (dup == NULL) return true;
  /* dup is the repeat that comes first in the document; first is where its name first was. */
  retry_json_path_pop(&c->j, 1); /* back to "$": the names were sorted out of the walk */
  retry_json_path_push_key(&c->j, "methodConfig");
  retry_json_path_push_index(&c->j, dup->entry);
  retry_json_path_push_key(&c->j, "name");
  retry_json_path_push_index(&c->j, dup->index);
  char svc[48], m[48];
  retry_json_printable(svc, sizeof svc, dup->service, 40);
  retry_json_printable(m, sizeof m, dup->method, 40);
  if (dup->service_len == 0)
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "duplicate default name, first at $.methodConfig[%zu].name[%zu]; "
                    "only one default is allowed",
                    first->entry, first->index);
  else if (dup->method_len == 0)
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "duplicate name for service \"%s\", first at $.methodConfig[%zu]"
                    ".name[%zu]; a name may appear once",
                    svc, first->entry, first->index);
  else
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "duplicate name \"/%s/%s\", first at $.methodConfig[%zu].name[%zu]; "
                    "a name may appear once",
                    svc, m, first->entry, first->index);
  return false;
}

/* "methodConfig": entry i of the array fills cfg->methods[i]. */
static bool parse_method_configs(load_ctx *c, json_t *list) {
  if (!json_is_array(list)) {
    retry_json_fail_value(&c->j, "\"methodConfig\"", "an array of objects", list);
    return false;
  }
  for (size_t i = 0; i < json_array_size(list); i++) {
    json_t *entry = json_array_get(list, i);
    size_t mark = retry_json_path_push_index(&c->j, i);
    if (!parse_entry(c, entry, i)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * retryThrottling
 *
 * A6's token bucket: every qualifying failure takes a token, every success gives back
 * tokenRatio, and retries and hedges stop while the bucket holds maxTokens / 2 or less. Its
 * scope differs between implementations (per channel in grpc-go and grpc-java, per server
 * name in C-core); here it is the retry_target built from cfg->target.
 * =================================================================== */

/* retryThrottling (A6): both fields required. maxTokens must be an integer as A6 and C-core
 * say (grpc-go also takes 4.5, grpc-java anything > 0). The bucket itself, and the rule that
 * retries stop while it holds at most half of maxTokens, are in retry_throttle.c. */
static bool parse_throttling(load_ctx *c, json_t *rt) {
  retry_target_config *t = &c->cfg->target;
  if (!json_is_object(rt)) {
    retry_json_fail_value(&c->j, "\"retryThrottling\"", "an object", rt);
    return false;
  }
  static const char *const fields[] = {"maxTokens", "tokenRatio"};
  if (!retry__config_check_fields(c, rt, fields, N_OF(fields), NULL, 0)) return false;
  int64_t max_tokens = 0;
  double ratio = 0;
  if (retry_json_require(&c->j,
                         retry_json_get_int(&c->j, rt, "maxTokens", 1, 1000,
                                            "an integer in (0, 1000]", &max_tokens),
                         "maxTokens", "an integer in (0, 1000]") < 0 ||
      retry_json_require(&c->j,
                         retry_json_get_number(&c->j, rt, "tokenRatio", 0, true, DBL_MAX, false,
                                               "a number > 0", &ratio),
                         "tokenRatio", "a number > 0") < 0)
    return false;
  /* Three decimals are kept, the rest truncated (0.5466 -> 546), as grpc-java and C-core do.
   * The epsilon absorbs binary rounding: 1.001 * 1000 is 1000.9999999999999. A ratio above
   * 1e12 is as good as infinite for a bucket of at most 1e6 milli-tokens. */
  double milli = ratio > 1e12 ? 1e15 : ratio * 1000 + 1e-9;
  if (milli < 1) {
    size_t mark = retry_json_path_push_key(&c->j, "tokenRatio");
    char got[64]; /* a real: an integer in (0, 0.001) does not exist */
    retry_json_describe(json_object_get(rt, "tokenRatio"), got, sizeof got);
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"tokenRatio\" must be a number >= 0.001 (3 decimals are kept), got %s", got);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  t->has_throttle = true;
  t->throttle.max_milli_tokens = (int64_t)max_tokens * 1000;
  t->throttle.token_ratio_milli = (int64_t)milli;
  /* Legal (A6 asks only for > 0) but a success that gives back more than the token a failure
   * takes keeps the bucket full in any mix of results that is not mostly failures: a
   * percentage (10 for 10 %) is the likely mistake. */
  if (ratio > 1) {
    char got[64];
    retry_json_describe(json_object_get(rt, "tokenRatio"), got, sizeof got);
    size_t mark = retry_json_path_push_key(&c->j, "tokenRatio");
    bool ok =
        retry__config_warn(c,
                           "\"tokenRatio\" %s gives back more than a failure takes (1 token); "
                           "it is tokens per success, not a percent: 0.1 is one per ten",
                           got);
    retry_json_path_pop(&c->j, mark);
    return ok;
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Sizing: every array of the config is allocated once, before parsing
 * =================================================================== */

/* Counting first gives every array its final size up front: no realloc while pointers into
 * the arrays are being handed out, and a handful of allocations per config whatever its size,
 * which keeps the chaos-allocator test short. The count is taken on the raw tree, before
 * validation, so it may only overestimate: a wrong type counts nothing here and fails later. */

static size_t string_bytes(json_t *v) { return json_is_string(v) ? json_string_length(v) + 1 : 0; }

static void measure(json_t *root, config_sizes *s) {
  memset(s, 0, sizeof *s);
  json_t *list = retry_json_field(root, "methodConfig");
  if (json_is_array(list)) {
    s->n_entries = json_array_size(list);
    for (size_t i = 0; i < json_array_size(list); i++) {
      json_t *entry = json_array_get(list, i);
      json_t *names = json_is_object(entry) ? retry_json_field(entry, "name") : NULL;
      if (!json_is_array(names)) continue;
      for (size_t j = 0; j < json_array_size(names); j++) {
        json_t *n = json_array_get(names, j);
        if (!json_is_object(n)) continue;
        s->n_names++;
        s->string_bytes += string_bytes(retry_json_field(n, "service")) +
                           string_bytes(retry_json_field(n, "method"));
      }
    }
  }
  retry__config_ext_measure(root, s);
}

static const retry_allocator *config_alloc(const retry_config *cfg) {
  return cfg->has_alloc ? &cfg->alloc : NULL;
}

/* Allocates n elements of size bytes (NULL for n == 0, or on overflow / no memory). Only a
 * failure clears *ok, so several arrays can be allocated before one check. */
static void *alloc_array(const retry_config *cfg, size_t n, size_t size, bool *ok) {
  if (n == 0) return NULL;
  void *p = n > SIZE_MAX / size ? NULL : retry__malloc(config_alloc(cfg), n * size);
  if (p == NULL) *ok = false;
  return p;
}

/* Hands out len + 1 bytes of the arena (sized by measure()) holding a copy of s. The arena
 * never moves, so the pointers handed out stay valid for the life of the config; an empty
 * string points at a literal and takes no room. */
const char *retry__config_copy_string(load_ctx *c, const char *s, size_t len) {
  if (len == 0) return "";
  retry_config *cfg = c->cfg;
  assert(c->strings_used + len + 1 <= cfg->strings_size);
  char *dst = cfg->strings + c->strings_used;
  memcpy(dst, s, len);
  dst[len] = '\0';
  c->strings_used += len + 1;
  return dst;
}

/* }================================================================== */

/* {==================================================================
 * Loading, lookup, destruction
 * =================================================================== */

void retry_config_destroy(retry_config *cfg) {
  if (cfg == NULL) return;
  /* Copy the allocator out first: the last free releases the struct that holds it. */
  retry_allocator a = cfg->alloc;
  const retry_allocator *ap = cfg->has_alloc ? &a : NULL;
  retry__free(ap, cfg->methods);
  retry__free(ap, cfg->keys);
  retry__free(ap, (void *)cfg->idempotent);
  retry__free(ap, cfg->strings);
  retry__free(ap, cfg);
}

/* Builds a config from a parsed document. Returns a new config, or NULL with err set.
 * Errors are collected in the context's own retry_error and copied to err once at the end,
 * so a NULL err needs no special case and a partly built config is always freed. */
static retry_config *load_root(json_t *root, const char *source, const retry_config_opts *opts,
                               retry_error *err) {
  const retry_allocator *alloc = opts != NULL ? opts->alloc : NULL;
  load_ctx c;
  memset(&c, 0, sizeof c);
  retry_json_ctx_init(&c.j, source);
  if (opts != NULL) {
    c.warn = opts->warn;
    c.warn_ctx = opts->warn_ctx;
    c.strict = opts->strict;
  }
  if (!json_is_object(root)) {
    retry_json_fail_value(&c.j, "a service config", "a JSON object", root);
    retry_error_set(err, c.j.e.code, source, c.j.e.path, -1, -1, "%s", c.j.e.message);
    return NULL;
  }
  retry_config *cfg = retry__malloc(alloc, sizeof *cfg);
  if (cfg == NULL) {
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the config");
    return NULL;
  }
  memset(cfg, 0, sizeof *cfg);
  if (alloc != NULL) {
    cfg->alloc = *alloc;
    cfg->has_alloc = true;
  }
  c.cfg = cfg;
  config_sizes sz;
  measure(root, &sz);
  bool ok = true;
  cfg->methods = alloc_array(cfg, sz.n_entries, sizeof cfg->methods[0], &ok);
  cfg->n_methods = sz.n_entries;
  cfg->keys = alloc_array(cfg, sz.n_names, sizeof cfg->keys[0], &ok);
  /* Never NULL when present, even empty: an allowlist that allows nothing. */
  cfg->idempotent = sz.has_idempotent
                        ? alloc_array(cfg, sz.n_idempotent + 1, sizeof cfg->idempotent[0], &ok)
                        : NULL;
  cfg->strings = alloc_array(cfg, sz.string_bytes, 1, &ok);
  cfg->strings_size = sz.string_bytes;
  if (!ok) {
    retry_config_destroy(cfg);
    retry_error_set(err, RETRY_ENOMEM, source, "", -1, -1, "out of memory loading the config");
    return NULL;
  }
  /* 0 asks for gRPC's default cap of 5; a negative limit means no cap at all. The
   * extension's maxAttemptsLimit, read next, overrides either. */
  int32_t limit = opts != NULL ? opts->max_attempts_limit : 0;
  cfg->max_attempts_limit = limit == 0 ? RETRY_GRPC_MAX_ATTEMPTS_LIMIT : limit;
  retry_target_config_init(&cfg->target);

  /* The extension first: its limit, allowlist and status space shape every methodConfig.
   * Each step stops at its first error, so c.e holds exactly one, and the walk ends there. */
  /* loadBalancingPolicy, loadBalancingConfig and healthCheckConfig are gRPC's and bear on
   * no retry decision: ignored without a warning. */
  static const char *const fields[] = {"methodConfig", "retryThrottling", "retrysim"};
  static const char *const quiet[] = {"loadBalancingPolicy", "loadBalancingConfig",
                                      "healthCheckConfig"};
  if (!retry__config_check_fields(&c, root, fields, N_OF(fields), quiet, N_OF(quiet)) ||
      !retry__config_parse_sub(&c, root, "retrysim", retry__config_ext_parse) ||
      !retry__config_parse_sub(&c, root, "methodConfig", parse_method_configs) ||
      !retry__config_parse_sub(&c, root, "retryThrottling", parse_throttling) || !sort_names(&c)) {
    retry_error_set(err, c.j.e.code, c.j.e.source, c.j.e.path, -1, -1, "%s", c.j.e.message);
    retry_config_destroy(cfg);
    return NULL;
  }
  /* What a lookup that matches nothing returns: no retries, but the top-level options and
   * allowlist, so a method no entry names still behaves as the channel was configured. */
  retry_method_config *um = &cfg->unmatched;
  retry_policy_init(&um->policy, c.top.has_space ? c.top.space : RETRY_SPACE_GRPC);
  retry__config_ext_apply(cfg, &um->policy, &c.top);
  um->timeout_ns = RETRY_NEVER;
  um->matched = false;
  return cfg;
}

/* Parser flags: duplicate keys are an error (which value would win is up to each gRPC
 * implementation: Go and Java keep the last, C-core rejects the document); any top-level
 * value is parsed so that a non-object gets our own message with a path. JSON_ALLOW_NUL is
 * not set, so every string is a proper C string. */
#define JSON_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

retry_config *retry_config_load_string(const char *json, const char *source,
                                       const retry_config_opts *opts, retry_error *err) {
  assert(json != NULL);
  if (source == NULL) source = "<string>";
  json_error_t je;
  memset(&je, 0, sizeof je); /* jansson leaves parts of it unset on some failures */
  json_t *root = json_loads(json, JSON_FLAGS, &je);
  if (root == NULL) {
    retry_json_error_syntax(err, source, &je);
    return NULL;
  }
  retry_config *cfg = load_root(root, source, opts, err);
  json_decref(root);
  return cfg;
}

retry_config *retry_config_load_file(const char *path, const retry_config_opts *opts,
                                     retry_error *err) {
  assert(path != NULL);
  const retry_allocator *alloc = opts != NULL ? opts->alloc : NULL;
  char *buf = NULL;
  size_t len = 0;
  if (retry_json_read_file(path, alloc, &buf, &len, err) != RETRY_OK) return NULL;
  json_error_t je;
  memset(&je, 0, sizeof je); /* jansson leaves parts of it unset on some failures */
  json_t *root = json_loadb(buf, len, JSON_FLAGS, &je);
  retry__free(alloc, buf); /* the tree holds copies of its strings: the text can go now */
  if (root == NULL) {
    retry_json_error_syntax(err, path, &je);
    return NULL;
  }
  retry_config *cfg = load_root(root, path, opts, err);
  json_decref(root);
  return cfg;
}

/* Bisects the sorted names for an exact (service, method). O(log n) and no allocation: this
 * runs once per call. The names are length-delimited, so the caller's method string is
 * compared in place without being split into copies. */
static const retry_method_config *find(const retry_config *cfg, const char *svc, size_t svc_len,
                                       const char *m, size_t m_len) {
  size_t lo = 0, hi = cfg->n_keys;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const name_key *k = &cfg->keys[mid];
    int r = cmp_part(k->service, k->service_len, svc, svc_len);
    if (r == 0) r = cmp_part(k->method, k->method_len, m, m_len);
    if (r == 0) return &cfg->methods[k->entry];
    if (r < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* "/svc/m" splits at its last '/', as grpc-go does; a name without one matches only the
 * default. NULL (a call without a method name) also gets the default. Precedence is gRPC's:
 * the exact name, then the service-wide name, then the default, then the unmatched config
 * (kind NONE), which keeps the answer non-NULL so callers need no branch. The same three
 * probes are grpc-go's getMethodConfig ("/svc/m", "/svc/", ""), and grpc-java's
 * serviceMethodMap, serviceMap and default. */
const retry_method_config *retry_config_lookup(const retry_config *cfg, const char *method) {
  assert(cfg != NULL);
  const retry_method_config *mc = NULL;
  if (method != NULL) {
    /* The leading '/' of the wire form is optional: "svc/m" finds the same config. */
    const char *s = method[0] == '/' ? method + 1 : method;
    const char *slash = strrchr(s, '/');
    if (slash != NULL && slash > s) {
      size_t svc_len = (size_t)(slash - s), m_len = strlen(slash + 1);
      if (m_len > 0) mc = find(cfg, s, svc_len, slash + 1, m_len);
      if (mc == NULL) mc = find(cfg, s, svc_len, "", 0);
    }
  }
  if (mc == NULL) mc = find(cfg, "", 0, "", 0);
  return mc != NULL ? mc : &cfg->unmatched;
}

const retry_target_config *retry_config_target(const retry_config *cfg) {
  assert(cfg != NULL);
  return &cfg->target;
}

/* }================================================================== */
