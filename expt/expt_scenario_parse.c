/*
 * expt_scenario_parse.c: one scenario document into a model_config: the top level, services,
 * their downstream calls (with status maps) and faults, and the check that the call graph
 * has no cycle. Clients are in expt_scenario_client.c.
 *
 * Everything is validated before anything runs; the first error found, in a fixed order that
 * follows the document, is the one reported. A half-built config is always freed with
 * model_config_destroy, which is why every owned pointer is stored the moment it exists.
 */
#include "expt/expt_scenario_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {==================================================================
 * Shared helpers: the failure state, owned strings, service names
 * =================================================================== */

/* Whether an error was recorded (the walk then unwinds without further checks). */
static bool failed(const scn_ctx *c) { return retry_json_failed(&c->j); }

/* Out of memory is reported like any error, at the path being read, and unwinds the same
 * way; the half-built config is freed by whoever owns it (expt__scenario_build). */
static bool oom(scn_ctx *c) {
  retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory loading the scenario");
  return false;
}

/* An owned copy of s stored at *dst, or an out-of-memory error. The copy goes straight into
 * the config rather than being returned: the config owns it from the moment it exists, so a
 * failure later in the same function cannot leak it (model_config_destroy frees it). */
static bool dup_to(scn_ctx *c, char **dst, const char *s) {
  *dst = expt__scenario_strdup(s);
  return *dst != NULL || oom(c);
}

/* Services are looked up by name only while loading, and a scenario has a handful of
 * them, so a linear scan is simpler than an index and fast enough. The first pass of
 * parse_services fills every name before anything looks one up. */
/* By name through c->by_name once every service's name was read (a binary search), else a
 * scan: the services are being read. */
int expt__scenario_service_index(const scn_ctx *c, const char *name) {
  if (c->by_name != NULL) {
    size_t lo = 0, hi = c->cfg->n_services;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      int cmp = strcmp(c->by_name[mid].name, name);
      if (cmp == 0) return c->by_name[mid].index;
      if (cmp < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    return -1;
  }
  for (size_t i = 0; i < c->cfg->n_services; i++)
    if (c->cfg->services[i].name != NULL && strcmp(c->cfg->services[i].name, name) == 0)
      return (int)i;
  return -1;
}

/* "api, db, cache" for messages, cut to fit: naming the services that exist turns "no such
 * service" into a one-glance fix for a typo. */
static void service_list(const scn_ctx *c, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  /* len + 4 < size keeps room for "..." and its NUL. A name that does not fit is replaced by
   * "..." at len, or over the list's tail when len is already within 4 bytes of the end. */
  for (size_t i = 0; i < c->cfg->n_services && len + 4 < size; i++) {
    int n = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", c->cfg->services[i].name);
    if (n < 0 || (size_t)n >= size - len) {
      snprintf(buf + (len < size - 4 ? len : size - 4), 4, "...");
      return;
    }
    len += (size_t)n;
  }
}

/* A client may not be a target (clients and services share a namespace, but only services
 * receive calls): naming one gets the same "no service" message with the list of services. */
bool expt__scenario_service_ref(scn_ctx *c, json_t *obj, const char *key, int *out) {
  const char *name = NULL;
  int rc = retry_json_get_string(&c->j, obj, key, &name);
  if (retry_json_require(&c->j, rc, key, "the name of a service") != 1) return false;
  /* A getter's type error was reported at the key already; only "no such service" is left,
   * and it is reported at the key too (pushed just for the message). */
  int idx = expt__scenario_service_index(c, name);
  if (idx < 0) {
    char shown[48], list[96];
    retry_json_printable(shown, sizeof shown, name, 40);
    service_list(c, list, sizeof list);
    size_t mark = retry_json_path_push_key(&c->j, key);
    retry_json_fail(&c->j, RETRY_ECONFIG, "no service is named \"%s\"; services: %s", shown, list);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  *out = idx;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Status maps (gateways)
 * =================================================================== */

/* A map key: a callee status as the map's JSON has to write it, a string. gRPC statuses go
 * by name; HTTP statuses as decimal strings ("503"), without sign or leading zero, so that
 * no two keys name one status. Returns the status or -1. The decimal form is also what the
 * summary prints, so map keys read like the report. atoi is safe once exactly three digits
 * were seen, and a first digit of 1..5 keeps the key in 100..599, the status codes. */
static int map_key_status(const char *key, retry_space callee) {
  int code = -1;
  if (callee == RETRY_SPACE_GRPC) return retry_grpc_code_parse(key, &code) == RETRY_OK ? code : -1;
  if (strlen(key) != 3 || key[0] < '1' || key[0] > '5') return -1;
  for (int i = 0; i < 3; i++)
    if (key[i] < '0' || key[i] > '9') return -1;
  return atoi(key);
}

/* "map": {callee status: caller status, ..., "default": caller status}. Without "default"
 * the statuses not listed take the canonical mapping between the spaces.
 *
 * A key is judged before its value, since the value's meaning depends on it: a bad key is
 * reported as such even when its value is bad too. Values may be successes (allow_ok): a
 * gateway with a fallback turns a callee's failure into OK for its caller. The map is a fixed
 * array in model_config (nothing allocated per call), hence MODEL_STATUS_MAP_MAX. */
static bool parse_map(scn_ctx *c, json_t *m, model_status_map *out, const model_service_cfg *callee,
                      retry_space caller) {
  if (!json_is_object(m)) {
    retry_json_fail_value(&c->j, "\"map\"", "an object {callee status: caller status, ...}", m);
    return false;
  }
  /* parse_call preset canonical; it is set again from has_default once the keys are read. */
  memset(out, 0, sizeof *out);
  for (void *it = json_object_iter(m); it != NULL; it = json_object_iter_next(m, it)) {
    const char *key = json_object_iter_key(it);
    json_t *v = json_object_iter_value(it);
    size_t mark = retry_json_path_push_key(&c->j, key);
    int32_t to = 0;
    bool is_default = strcmp(key, "default") == 0;
    int from = is_default ? 0 : map_key_status(key, callee->space);
    if (from >= 0 && !expt__scenario_status_value(c, v, "a map value", caller, true, &to))
      return false;
    if (is_default) {
      out->has_default = true;
      out->default_to = to;
    } else {
      if (from < 0) {
        char shown[48];
        retry_json_printable(shown, sizeof shown, key, 40);
        if (callee->space == RETRY_SPACE_GRPC)
          retry_json_fail(&c->j, RETRY_ECONFIG,
                          "map keys must be gRPC code names such as \"UNAVAILABLE\" (service "
                          "\"%s\" is grpc) or \"default\", got \"%s\"",
                          callee->name, shown);
        else
          retry_json_fail(&c->j, RETRY_ECONFIG,
                          "map keys must be HTTP statuses as strings such as \"503\" (service "
                          "\"%s\" is http) or \"default\", got \"%s\"",
                          callee->name, shown);
        return false;
      }
      if (out->n == MODEL_STATUS_MAP_MAX) {
        retry_json_fail(&c->j, RETRY_ECONFIG, "a map has at most %d entries besides \"default\"",
                        MODEL_STATUS_MAP_MAX);
        return false;
      }
      out->from[out->n] = from;
      out->to[out->n] = to;
      out->n++;
    }
    retry_json_path_pop(&c->j, mark);
  }
  out->canonical = !out->has_default;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Downstream calls
 * =================================================================== */

/* The keys a downstream call may have; anything else is refused with this list in the
 * message, so a typo such as "deadlline" cannot silently leave a default in force. */
static const char *const call_keys[] = {"service",      "method", "stream",   "request_bytes",
                                        "stream_items", "policy", "deadline", "propagate_deadline",
                                        "network",      "map",    "fanout",   "probability",
                                        "when_method",  "on_failure"};
static const char *const stream_names[] = {"unary", "client", "server", "bidi"};

/* The names are in the order of retry_stream_kind, so the index is the value. */
int expt__scenario_get_stream(scn_ctx *c, json_t *obj, retry_stream_kind *out) {
  int k = 0;
  int rc = retry_json_get_enum(&c->j, obj, "stream", stream_names, SCN_N_OF(stream_names), &k);
  if (rc == 1) *out = (retry_stream_kind)k;
  return rc;
}

/* One name of "when_method", at the path's current position: a full method name, copied. */
static bool parse_when_name(scn_ctx *c, json_t *v, char **out) {
  const char *s = json_string_value(v);
  if (s == NULL || !expt__scenario_method_is_valid(s)) {
    retry_json_fail_value(&c->j, "\"when_method\"", "a full method name \"/package.Service/Method\"",
                          v);
    return false;
  }
  return dup_to(c, out, s);
}

/* Branching: "probability" in (0, 1] (absent: 0 stored, read as 1, always) and "when_method",
 * a method name or a non-empty array of them (the route table: the call is made only for
 * requests of those methods). The names array is allocated at its final size and
 * n_when_method grows with each name copied, so destroy frees exactly what exists. */
static bool parse_branch(scn_ctx *c, json_t *v, model_call_cfg *call) {
  if (retry_json_get_number(&c->j, v, "probability", 0, true, 1, false, "a number in (0, 1]",
                            &call->probability) < 0)
    return false;
  json_t *wm = retry_json_field(v, "when_method");
  if (wm == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, "when_method");
  bool one = json_is_string(wm);
  size_t n = one ? 1 : json_array_size(wm);
  if (!one && n == 0) {
    retry_json_fail_value(&c->j, "\"when_method\"",
                          "a method name or a non-empty array of method names", wm);
    return false;
  }
  call->when_method = expt__scenario_calloc(n, sizeof *call->when_method);
  if (call->when_method == NULL) return oom(c);
  for (size_t i = 0; i < n; i++) {
    size_t m = one ? mark : retry_json_path_push_index(&c->j, i);
    if (!parse_when_name(c, one ? wm : json_array_get(wm, i), &call->when_method[i])) return false;
    call->n_when_method = i + 1;
    if (!one) retry_json_path_pop(&c->j, m);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* One downstream call. Defaults are set before anything is read so that a call abandoned
 * half-way by an error is still a well-formed struct for model_config_destroy. The policy
 * is checked against the callee's space (the statuses it judges are the callee's), the map
 * reads keys in the callee's space and values in the caller's. */
static bool parse_call(scn_ctx *c, json_t *v, model_call_cfg *call,
                       const model_service_cfg *caller) {
  call->deadline_ns = RETRY_NEVER;
  call->propagate_deadline = true;
  call->map.canonical = true;
  call->stream = RETRY_STREAM_UNARY;
  call->fanout = 1;
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "each call", "an object {\"service\": ..., \"method\": ...}", v);
    return false;
  }
  if (!retry_json_check_keys(&c->j, v, call_keys, SCN_N_OF(call_keys), NULL)) return false;
  /* "service" is read first: the policy's space check and the map below both need the callee.
   * The method name is copied into the call at once, so the config owns it on every path. */
  const char *method = NULL;
  if (!expt__scenario_service_ref(c, v, "service", &call->service) ||
      retry_json_require(&c->j, expt__scenario_get_method(c, v, "method", &method), "method",
                         "a full method name \"/package.Service/Method\"") != 1 ||
      !dup_to(c, &call->method, method))
    return false;
  /* "fanout": n copies of the call at once, which only a fan-out handler makes. */
  if (retry_json_get_int32(&c->j, v, "fanout", 1, SCN_MAX_FANOUT, "an integer in [1, 1000]",
                           &call->fanout) < 0)
    return false;
  if (call->fanout > 1 && caller->calls_mode != MODEL_CALLS_FANOUT) {
    retry_json_fail_field(&c->j, v, "fanout",
                          "1 in a sequential handler: a call made n times at once needs the "
                          "service's \"calls_mode\": \"fanout\"");
    return false;
  }
  if (expt__scenario_get_stream(c, v, &call->stream) < 0 ||
      retry_json_get_int(&c->j, v, "request_bytes", 0, INT64_MAX, "an integer >= 0",
                         &call->request_bytes) < 0 ||
      retry_json_get_int(&c->j, v, "stream_items", 0, INT64_MAX, "an integer >= 0",
                         &call->stream_items) < 0)
    return false;
  /* A call has one method, wrapped in a one-element array so the check that clients use for
   * their method lists serves here unchanged. */
  json_t *pol = retry_json_field(v, "policy");
  if (pol != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "policy");
    const char *methods[1] = {call->method};
    if (!expt__scenario_policy_value(c, pol, &call->policy) ||
        !expt__scenario_policy_check_space(c, call->policy, methods, 1, call->service))
      return false;
    retry_json_path_pop(&c->j, mark);
  }
  /* The deadline must be > 0 (lo_open): a zero deadline would expire every attempt before it
   * was sent. Absent, RETRY_NEVER (preset above) leaves the policy's timeout in charge. */
  if (expt__scenario_get_duration(c, v, "deadline", 0, true, SCN_DUR_POS, &call->deadline_ns) < 0 ||
      retry_json_get_bool(&c->j, v, "propagate_deadline", &call->propagate_deadline) < 0 ||
      expt__scenario_get_dist(c, v, "network", &call->network) < 0 || !parse_branch(c, v, call))
    return false;
  json_t *m = retry_json_field(v, "map");
  if (m != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "map");
    if (!parse_map(c, m, &call->map, &c->cfg->services[call->service], caller->space)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

bool expt__scenario_call(scn_ctx *c, json_t *v, model_call_cfg *call,
                         const model_service_cfg *caller) {
  return parse_call(c, v, call, caller);
}

/* "wait_for": k of the fan-out's n calls (each entry counted "fanout" times). Absent: 0, the
 * handler waits for every call (the rule before the key existed). "cancel_rest" (with
 * wait_for only; default true) cancels the calls left once the handler goes on. */
static bool parse_wait_for(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  json_t *k = retry_json_field(v, "wait_for");
  svc->cancel_rest = true;
  if (k == NULL && retry_json_field(v, "cancel_rest") != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "cancel_rest");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"cancel_rest\" needs \"wait_for\": only a k-of-n fan-out leaves calls "
                    "to cancel");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  if (k == NULL) return true;
  if (retry_json_get_bool(&c->j, v, "cancel_rest", &svc->cancel_rest) < 0) return false;
  int64_t n = 0;
  for (size_t i = 0; i < svc->n_calls; i++)
    n += svc->calls[i].fallback_only ? 0 : svc->calls[i].fanout;
  if (svc->calls_mode != MODEL_CALLS_FANOUT || n == 0) {
    size_t mark = retry_json_path_push_key(&c->j, "wait_for");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"wait_for\" needs a fan-out: \"calls_mode\": \"fanout\" and at least "
                    "one call");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  char what[64];
  snprintf(what, sizeof what, "an integer in [1, %lld] (the fan-out's calls)", (long long)n);
  return retry_json_get_int32(&c->j, v, "wait_for", 1, (int32_t)n, what, &svc->wait_for) >= 0;
}

/* "calls": the array is allocated once at its final size (zeroed), and n_calls grows with
 * each element started, so destroy frees exactly what exists at any point of failure. */
static bool parse_calls(scn_ctx *c, json_t *list, model_service_cfg *svc) {
  if (!json_is_array(list)) {
    retry_json_fail_value(&c->j, "\"calls\"", "an array of calls", list);
    return false;
  }
  /* An empty array means no calls: calls stays NULL, and nothing is allocated for it. */
  size_t n = json_array_size(list);
  if (n == 0) return true;
  /* Each fallback of an on_failure takes a place after the listed calls (fallback_only). */
  svc->calls = expt__scenario_calloc(n + expt__scenario_count_fallbacks(list), sizeof svc->calls[0]);
  if (svc->calls == NULL) return oom(c);
  for (size_t i = 0; i < n; i++) {
    size_t mark = retry_json_path_push_index(&c->j, i);
    svc->n_calls = i + 1; /* owned from here: destroy frees what parse_call stored */
    if (!parse_call(c, json_array_get(list, i), &svc->calls[i], svc)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  for (size_t i = 0, slot = n; i < n; i++) {
    json_t *of = retry_json_field(json_array_get(list, i), "on_failure");
    if (of == NULL) continue;
    size_t mark = retry_json_path_push_index(&c->j, i);
    retry_json_path_push_key(&c->j, "on_failure");
    if (!expt__scenario_parse_on_failure(c, of, svc, i, &slot)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Faults
 * =================================================================== */

/* Indexed like model_fault_kind, so the enum index read from "kind" is the value; fault_allowed
 * below follows the same order. Adding a kind means extending all three together. */
static const char *const fault_kinds[] = {"refuse", "fail",     "slowdown", "stall",
                                          "down",   "pushback", "capacity", "cache_flush",
                                          "cache_capacity", "cache_invalid"};

/* The keys of each kind: the common ones, then the kind's own. */
#define FAULT_COMMON "kind", "start", "end", "replicas", "attempts", "method", "count"
static const char *const fk_refuse[] = {FAULT_COMMON, "rate",     "status",
                                        "delay",      "pushback", "retry_after"};
static const char *const fk_fail[] = {FAULT_COMMON,    "rate",         "status",   "delay",
                                      "after_headers", "stream_items", "pushback", "retry_after"};
static const char *const fk_slowdown[] = {FAULT_COMMON, "factor"};
static const char *const fk_stall[] = {FAULT_COMMON, "rate", "delay"};
static const char *const fk_down[] = {FAULT_COMMON};
static const char *const fk_pushback[] = {FAULT_COMMON, "pushback", "retry_after"};
static const char *const fk_capacity[] = {FAULT_COMMON, "workers"};
/* A cache's faults hit the one cache in front of every replica, for every request: no
 * selectors. A flush is an instant (no "end"). */
static const char *const fk_cache_flush[] = {"kind", "start", "fraction"};
static const char *const fk_cache_capacity[] = {"kind", "start", "end", "capacity"};
/* The value cached reads as invalid while it lasts: every hit answers with "status". */
static const char *const fk_cache_invalid[] = {"kind", "start", "end", "status"};

/* One entry of fault_allowed: the keys a kind allows. */
typedef struct key_list {
  const char *const *keys; /* the allowed key names */
  size_t n;                /* entries in keys */
} key_list;

static const key_list fault_allowed[] = {
    {fk_refuse, SCN_N_OF(fk_refuse)},     {fk_fail, SCN_N_OF(fk_fail)},
    {fk_slowdown, SCN_N_OF(fk_slowdown)}, {fk_stall, SCN_N_OF(fk_stall)},
    {fk_down, SCN_N_OF(fk_down)},         {fk_pushback, SCN_N_OF(fk_pushback)},
    {fk_capacity, SCN_N_OF(fk_capacity)}, {fk_cache_flush, SCN_N_OF(fk_cache_flush)},
    {fk_cache_capacity, SCN_N_OF(fk_cache_capacity)}, {fk_cache_invalid, SCN_N_OF(fk_cache_invalid)},
};

/* "replicas" (indexes < the service's replicas) or "attempts" (1..32) into a bit mask: bit r
 * for replica r, bit a-1 for attempt a. An empty list is refused: it would select nothing,
 * which is never what a fault is written for. */
static bool parse_index_list(scn_ctx *c, json_t *obj, const char *key, int64_t lo, int64_t hi,
                             uint64_t *mask) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return true;
  char what[96];
  snprintf(what, sizeof what, "a non-empty array of integers in [%lld, %lld]", (long long)lo,
           (long long)hi);
  size_t mark = retry_json_path_push_key(&c->j, key);
  char label[32];
  snprintf(label, sizeof label, "\"%s\"", key);
  if (!json_is_array(v) || json_array_size(v) == 0) {
    retry_json_fail_value(&c->j, label, what, v);
    return false;
  }
  /* Duplicates are harmless (the bit is set twice). The range check keeps every shift below
   * 64: replicas are at most SCN_MAX_REPLICAS and attempts at most SCN_MAX_ATTEMPT_MASK. */
  uint64_t m = 0;
  for (size_t i = 0; i < json_array_size(v); i++) {
    json_t *el = json_array_get(v, i);
    if (!json_is_integer(el) || json_integer_value(el) < lo || json_integer_value(el) > hi) {
      retry_json_path_push_index(&c->j, i);
      snprintf(what, sizeof what, "an integer in [%lld, %lld]", (long long)lo, (long long)hi);
      snprintf(label, sizeof label, "each of \"%s\"", key);
      retry_json_fail_value(&c->j, label, what, el);
      return false;
    }
    /* Replicas count from 0 (bit r); attempts from 1, hence the shift by one (bit a-1). */
    m |= UINT64_C(1) << (json_integer_value(el) - (lo > 0 ? 1 : 0));
  }
  *mask = m;
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* "pushback" is gRPC metadata and "retry_after" an HTTP header: each only makes sense from a
 * service of its space, and sending the other would be silently ignored by every client, so
 * it is an error that names the right key. obj is a fault or "reject". */
static bool parse_pushback_strings(scn_ctx *c, json_t *obj, const model_service_cfg *svc,
                                   char **pushback, char **retry_after) {
  /* Both keys are read (and type-checked) before either is judged against the space, and the
   * strings are copied only once both checks passed, so nothing is half stored. */
  const char *pb = NULL, *ra = NULL;
  int rc_pb = retry_json_get_string(&c->j, obj, "pushback", &pb);
  if (rc_pb < 0) return false;
  int rc_ra = retry_json_get_string(&c->j, obj, "retry_after", &ra);
  if (rc_ra < 0) return false;
  if (rc_pb == 1 && svc->space != RETRY_SPACE_GRPC) {
    size_t mark = retry_json_path_push_key(&c->j, "pushback");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"pushback\" (grpc-retry-pushback-ms) needs a grpc service; \"%s\" is "
                    "http: use \"retry_after\"",
                    svc->name);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  if (rc_ra == 1 && svc->space != RETRY_SPACE_HTTP) {
    size_t mark = retry_json_path_push_key(&c->j, "retry_after");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"retry_after\" (Retry-After) needs an http service; \"%s\" is grpc: use "
                    "\"pushback\"",
                    svc->name);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return (rc_pb != 1 || dup_to(c, pushback, pb)) && (rc_ra != 1 || dup_to(c, retry_after, ra));
}

/* The fields every kind has: the window, the selection and the count. "end" defaults to
 * RETRY_NEVER (set by parse_fault), so a fault without it lasts to the end of the run; an
 * explicit window must hold time, since [t, t) would select nothing. */
static bool parse_fault_common(scn_ctx *c, json_t *v, model_fault_cfg *f,
                               const model_service_cfg *svc) {
  const char *method = NULL;
  if (expt__scenario_get_duration(c, v, "start", 0, false, SCN_DUR_NONNEG, &f->start_ns) < 0 ||
      expt__scenario_get_duration(c, v, "end", 0, false, SCN_DUR_NONNEG, &f->end_ns) < 0)
    return false;
  if (f->end_ns <= f->start_ns) {
    retry_json_fail_field(&c->j, v, "end", "after \"start\"");
    return false;
  }
  /* Replica indexes are bounded by this service's replicas, so a fault cannot name a replica
   * that does not exist. Attempts absent leave the mask 0, which the world reads as "every
   * attempt"; the 32-bit mask is why attempts stop at SCN_MAX_ATTEMPT_MASK. */
  uint64_t attempts = 0;
  if (!parse_index_list(c, v, "replicas", 0, svc->replicas - 1, &f->replica_mask) ||
      !parse_index_list(c, v, "attempts", 1, SCN_MAX_ATTEMPT_MASK, &attempts))
    return false;
  f->attempt_mask = (uint32_t)attempts;
  int rc = expt__scenario_get_method(c, v, "method", &method);
  if (rc < 0 || (rc == 1 && !dup_to(c, &f->method, method))) return false;
  /* "count" must be >= 1 when given: 0 is the config's internal "no limit", which leaving the
   * key out already means; accepting 0 would give it a second spelling that reads as "never". */
  return retry_json_get_int(&c->j, v, "count", 1, INT64_MAX, "an integer >= 1", &f->max_count) >= 0;
}

/* A cache's fault needs the service's cache (read before the faults). A flush happens at its
 * start: its window is that instant ([start, start + 1 ns), so the faults_active column marks
 * its bucket). A capacity cut holds entries in [0, the cache's capacity]. */
static bool parse_fault_cache(scn_ctx *c, json_t *v, model_fault_cfg *f,
                              const model_service_cfg *svc) {
  if (!svc->cache.on) {
    size_t mark = retry_json_path_push_key(&c->j, "kind");
    retry_json_fail(&c->j, RETRY_ECONFIG, "a \"%s\" fault needs a \"cache\" on service \"%s\"",
                    fault_kinds[f->kind], svc->name);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  if (f->kind == MODEL_FAULT_CACHE_FLUSH) {
    f->end_ns = f->start_ns + 1;
    f->fraction = 1;
    return retry_json_get_number(&c->j, v, "fraction", 0, true, 1, false,
                                 "a share of the entries in (0, 1]", &f->fraction) >= 0;
  }
  if (f->kind == MODEL_FAULT_CACHE_INVALID) {
    const char *what = svc->space == RETRY_SPACE_GRPC ? "a gRPC status such as \"DATA_LOSS\""
                                                      : "an HTTP status such as 500";
    return retry_json_require(
               &c->j, expt__scenario_get_status(c, v, "status", svc->space, false, &f->status),
               "status", what) == 1;
  }
  char what[64];
  snprintf(what, sizeof what, "an integer in [0, %lld] (the cache's capacity)",
           (long long)svc->cache.capacity);
  return retry_json_require(&c->j,
                            retry_json_get_int(&c->j, v, "capacity", 0, svc->cache.capacity, what,
                                               &f->cache_capacity),
                            "capacity", "the cache's entries while the fault lasts") == 1;
}

/* The kind's own fields; which ones exist was checked against fault_allowed already. */
static bool parse_fault_kind(scn_ctx *c, json_t *v, model_fault_cfg *f,
                             const model_service_cfg *svc) {
  /* "rate" is read for every kind, but fault_allowed lets it through only for the kinds that
   * use it (refuse, fail, stall). A rate of 0 would make a fault that never fires. */
  if (retry_json_get_number(&c->j, v, "rate", 0, true, 1, false, "a probability in (0, 1]",
                            &f->rate) < 0)
    return false;
  switch (f->kind) {
    case MODEL_FAULT_REFUSE:
    case MODEL_FAULT_FAIL: {
      const char *what = svc->space == RETRY_SPACE_GRPC ? "a gRPC status such as \"UNAVAILABLE\""
                                                        : "an HTTP status such as 503";
      if (retry_json_require(
              &c->j, expt__scenario_get_status(c, v, "status", svc->space, false, &f->status),
              "status", what) != 1 ||
          expt__scenario_get_duration(c, v, "delay", 0, false, SCN_DUR_NONNEG, &f->delay_ns) < 0 ||
          retry_json_get_bool(&c->j, v, "after_headers", &f->after_headers) < 0 ||
          retry_json_get_int(&c->j, v, "stream_items", 0, INT64_MAX, "an integer >= 0",
                             &f->stream_items) < 0)
        return false;
      /* Stream messages can only precede a failure that comes after the headers; a failure
       * before the headers has no stream to put them on. */
      if (f->stream_items > 0 && !f->after_headers) {
        size_t mark = retry_json_path_push_key(&c->j, "stream_items");
        retry_json_fail(&c->j, RETRY_ECONFIG,
                        "\"stream_items\" needs \"after_headers\": true (messages follow the "
                        "headers)");
        retry_json_path_pop(&c->j, mark);
        return false;
      }
      return parse_pushback_strings(c, v, svc, &f->pushback, &f->retry_after);
    }
    case MODEL_FAULT_SLOWDOWN:
      return retry_json_require(&c->j,
                                retry_json_get_number(&c->j, v, "factor", 0, true, 1e9, false,
                                                      "a number in (0, 1e9]", &f->factor),
                                "factor", "a number > 0 (2 doubles service times)") == 1;
    case MODEL_FAULT_STALL:
      return retry_json_require(
                 &c->j,
                 expt__scenario_get_duration(c, v, "delay", 0, true, SCN_DUR_POS, &f->delay_ns),
                 "delay", "how long to hold each reply, " SCN_DUR_POS) == 1;
    case MODEL_FAULT_DOWN: return true;
    /* A pushback fault exists only to send pushback: without a value it would do nothing.
     * The message asks for the key that fits the service's space. */
    case MODEL_FAULT_PUSHBACK:
      if (!parse_pushback_strings(c, v, svc, &f->pushback, &f->retry_after)) return false;
      if (f->pushback == NULL && f->retry_after == NULL) {
        if (svc->space == RETRY_SPACE_GRPC)
          return retry_json_require(&c->j, 0, "pushback",
                                    "the grpc-retry-pushback-ms value to send, such as \"100\"") ==
                 1;
        return retry_json_require(&c->j, 0, "retry_after",
                                  "the Retry-After value to send, such as \"2\"") == 1;
      }
      return true;
    case MODEL_FAULT_CAPACITY:
      return retry_json_require(&c->j,
                                retry_json_get_int32(&c->j, v, "workers", 0, SCN_MAX_WORKERS,
                                                     "an integer in [0, 1000000]", &f->workers),
                                "workers", "the workers per replica while the fault lasts") == 1;
    case MODEL_FAULT_CACHE_FLUSH:
    case MODEL_FAULT_CACHE_CAPACITY:
    case MODEL_FAULT_CACHE_INVALID: return parse_fault_cache(c, v, f, svc);
  }
  return true;
}

/* A fault that cannot change anything is refused (issue 23): a slowdown by a factor of 1, a
 * capacity fault that keeps the configured workers, or a cache_capacity fault that keeps the
 * cache's own capacity, is a typo or a leftover, and a run "with the fault" would silently be
 * the run without it. (A capacity above the configured workers is another question: it adds
 * capacity.) */
static bool fault_changes_something(scn_ctx *c, const model_fault_cfg *f,
                                    const model_service_cfg *svc) {
  const char *key = NULL, *why = NULL;
  if (f->kind == MODEL_FAULT_SLOWDOWN && f->factor == 1.0) {
    key = "factor";
    why = "a factor of 1 keeps every service time";
  } else if (f->kind == MODEL_FAULT_CAPACITY && f->workers == svc->workers) {
    key = "workers";
    why = "the service already has these workers";
  } else if (f->kind == MODEL_FAULT_CACHE_CAPACITY && f->cache_capacity == svc->cache.capacity) {
    key = "capacity";
    why = "the cache already holds this many entries";
  }
  if (key == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, key);
  retry_json_fail(&c->j, RETRY_ECONFIG,
                  "the fault would change nothing (%s): give another value or remove the fault",
                  why);
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* One fault. "kind" is read first because it decides which keys are allowed; the keys are
 * checked before any value so that a key of another kind ("factor" on a "fail" fault) is
 * reported as misplaced, with the kind's own list, rather than as a bad value. */
static bool parse_fault(scn_ctx *c, json_t *v, model_fault_cfg *f, const model_service_cfg *svc) {
  /* The defaults come first, before anything can fail, so an abandoned fault is well formed:
   * no end, every replica, probability 1. */
  f->end_ns = RETRY_NEVER;
  f->replica_mask = ~UINT64_C(0);
  f->rate = 1;
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "each fault", "an object {\"kind\": ..., ...}", v);
    return false;
  }
  int kind = 0;
  int rc = retry_json_get_enum(&c->j, v, "kind", fault_kinds, SCN_N_OF(fault_kinds), &kind);
  if (retry_json_require(&c->j, rc, "kind",
                         "\"refuse\", \"fail\", \"slowdown\", \"stall\", \"down\", "
                         "\"pushback\", \"capacity\", \"cache_flush\", \"cache_capacity\" or "
                         "\"cache_invalid\"") != 1)
    return false;
  /* The kind is stored before its keys are checked: the struct stays well formed for
   * model_config_destroy whatever fails next. */
  f->kind = (model_fault_kind)kind;
  char where[48];
  expt__scenario_kind_where(where, sizeof where, fault_kinds[kind], "fault");
  return retry_json_check_keys(&c->j, v, fault_allowed[kind].keys, fault_allowed[kind].n, where) &&
         parse_fault_common(c, v, f, svc) && parse_fault_kind(c, v, f, svc) &&
         fault_changes_something(c, f, svc);
}

/* "faults": same allocation discipline as "calls". n_faults grows before each parse_fault, so
 * model_config_destroy frees the method and pushback strings of the fault that failed as well as
 * those of the faults before it. */
static bool parse_faults(scn_ctx *c, json_t *list, model_service_cfg *svc) {
  if (!json_is_array(list)) {
    retry_json_fail_value(&c->j, "\"faults\"", "an array of faults", list);
    return false;
  }
  size_t n = json_array_size(list);
  if (n == 0) return true;
  if (n > MODEL_MAX_FAULTS) {
    retry_json_fail(&c->j, RETRY_ECONFIG, "a service has at most %d faults, got %zu",
                    MODEL_MAX_FAULTS, n);
    return false;
  }
  svc->faults = expt__scenario_calloc(n, sizeof svc->faults[0]);
  if (svc->faults == NULL) return oom(c);
  for (size_t i = 0; i < n; i++) {
    size_t mark = retry_json_path_push_index(&c->j, i);
    svc->n_faults = i + 1;
    if (!parse_fault(c, json_array_get(list, i), &svc->faults[i], svc)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Services
 * =================================================================== */

/* The key lists of a service and its parts. The enum name lists are indexed like the model's
 * enums (model_queue_kind, model_deadline_mode, model_lb_kind, ...), so the index read is the
 * value stored: keep each list in the order of its enum. */
/* clang-format off */
static const char *const service_keys[] = {
    "space", "replicas", "workers", "queue", "reject", "service_time", "slowdown_per_busy",
    "deadline", "lb", "side_effect", "dedup", "calls_mode", "wait_for", "cancel_rest", "calls", "faults", "contention",
    "admission", "codel", "adaptive_concurrency", "criticality", "shedding", "retry_budget", "cache",
    "work", "outlier_detection", "health_check", "self_eject", "autoscaler", "scale"};
/* clang-format on */
static const char *const space_names[] = {"grpc", "http"};
static const char *const queue_keys[] = {"capacity", "discipline"};
static const char *const queue_names[] = {"fifo", "lifo"};
static const char *const reject_keys[] = {"status", "pushback", "retry_after"};
static const char *const deadline_names[] = {"ignore", "drop", "waste"};
static const char *const lb_names[] = {"round_robin", "random", "p2c"};
static const char *const lb_keys[] = {"kind", "avoid_previous"};
static const char *const effect_names[] = {"none", "before", "after"};
static const char *const calls_mode_names[] = {"sequential", "fanout"};

/* "queue": {"capacity", "discipline"}, both optional; the defaults were set by the caller. */
static bool parse_queue(scn_ctx *c, json_t *q, model_service_cfg *svc) {
  int d = 0;
  if (!json_is_object(q)) {
    retry_json_fail_value(&c->j, "\"queue\"", "an object {\"capacity\": ..., \"discipline\": ...}",
                          q);
    return false;
  }
  /* A capacity of 0 is allowed: no waiting room, a request is rejected as soon as every
   * worker of the replica is busy. */
  if (!retry_json_check_keys(&c->j, q, queue_keys, SCN_N_OF(queue_keys), NULL) ||
      retry_json_get_int32(&c->j, q, "capacity", 0, SCN_MAX_QUEUE, "an integer in [0, 10000000]",
                           &svc->queue_capacity) < 0 ||
      retry_json_get_enum(&c->j, q, "discipline", queue_names, 2, &d) < 0)
    return false;
  svc->queue = (model_queue_kind)d;
  return true;
}

/* "reject": what a full queue answers. The status must be a failure of the service's own
 * space; the default (RESOURCE_EXHAUSTED or 503) was set from the space by the caller. */
static bool parse_reject(scn_ctx *c, json_t *r, model_service_cfg *svc) {
  if (!json_is_object(r)) {
    retry_json_fail_value(&c->j, "\"reject\"", "an object {\"status\": ..., ...}", r);
    return false;
  }
  /* allow_ok false: a full queue that answered OK would hide the overload it exists to show. */
  return retry_json_check_keys(&c->j, r, reject_keys, SCN_N_OF(reject_keys), NULL) &&
         expt__scenario_get_status(c, r, "status", svc->space, false, &svc->reject_status) >= 0 &&
         parse_pushback_strings(c, r, svc, &svc->reject_pushback, &svc->reject_retry_after);
}

static const char *const contention_keys[] = {"status"};
static const char *const admission_keys[] = {"rate", "burst", "status"};
static const char *const codel_keys[] = {"target", "interval", "adaptive_lifo", "status"};

/* "contention": {"status": S}: the service is a versioned row with conditional writes; a write
 * that lost the race answers S (default ABORTED, or 409 for HTTP). */
static bool parse_contention(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"contention\"", "an object {\"status\": ...}", v);
    return false;
  }
  svc->contention.on = true;
  svc->contention.status = svc->space == RETRY_SPACE_GRPC ? RETRY_GRPC_ABORTED : 409;
  return retry_json_check_keys(&c->j, v, contention_keys, SCN_N_OF(contention_keys), NULL) &&
         expt__scenario_get_status(c, v, "status", svc->space, false, &svc->contention.status) >= 0;
}

/* "admission": {"rate": R, "burst": B, "status": S}: a token bucket admitting R a second
 * (required), B at once (default 1), refusing with S (default RESOURCE_EXHAUSTED or 429). */
static bool parse_admission(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"admission\"", "an object {\"rate\": \"100/s\", ...}", v);
    return false;
  }
  model_admission_cfg *a = &svc->admission;
  a->on = true;
  a->burst = 1;
  a->status = svc->space == RETRY_SPACE_GRPC ? RETRY_GRPC_RESOURCE_EXHAUSTED : 429;
  return retry_json_check_keys(&c->j, v, admission_keys, SCN_N_OF(admission_keys), NULL) &&
         retry_json_require(&c->j, expt__scenario_get_rate(c, v, "rate", &a->rate), "rate",
                            "a rate > 0 such as \"100/s\"") == 1 &&
         retry_json_get_number(&c->j, v, "burst", 1, false, 1e9, false, "a number in [1, 1e9]",
                               &a->burst) >= 0 &&
         expt__scenario_get_status(c, v, "status", svc->space, false, &a->status) >= 0;
}

/* "codel": {"target": M, "interval": N, "adaptive_lifo": bool, "status": S}: Fail at Scale's
 * controlled delay, defaults 5 ms and 100 ms (the article's), adaptive LIFO on, and the
 * service's reject status (read before this). */
static bool parse_codel(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"codel\"", "an object {\"target\": \"5ms\", ...}", v);
    return false;
  }
  model_codel_cfg *q = &svc->codel;
  q->on = true;
  q->target_ns = 5000000;
  q->interval_ns = 100000000;
  q->adaptive_lifo = true;
  q->status = svc->reject_status;
  if (!retry_json_check_keys(&c->j, v, codel_keys, SCN_N_OF(codel_keys), NULL) ||
      expt__scenario_get_duration(c, v, "target", 0, true, SCN_DUR_POS, &q->target_ns) < 0 ||
      expt__scenario_get_duration(c, v, "interval", 0, true, SCN_DUR_POS, &q->interval_ns) < 0 ||
      retry_json_get_bool(&c->j, v, "adaptive_lifo", &q->adaptive_lifo) < 0 ||
      expt__scenario_get_status(c, v, "status", svc->space, false, &q->status) < 0)
    return false;
  if (q->interval_ns < q->target_ns) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"interval\" (%.3f ms) must be at least \"target\" (%.3f ms): the bound "
                    "under overload is the shorter one",
                    (double)q->interval_ns / 1e6, (double)q->target_ns / 1e6);
    return false;
  }
  return true;
}

static const char *const acc_keys[] = {"update_interval", "min_rtt_interval", "jitter",
                                       "request_count",   "percentile",       "min_concurrency",
                                       "max_concurrency", "buffer",           "status"};

/* "adaptive_concurrency": Envoy's filter with the gradient controller. Both intervals are
 * required (Envoy requires concurrency_update_interval and the minRTT interval); the rest
 * default to Envoy's values. Fractions are written as fractions (0.15), not percents. */
static bool parse_acc(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"adaptive_concurrency\"",
                          "an object {\"update_interval\": \"100ms\", \"min_rtt_interval\": "
                          "\"10s\", ...}",
                          v);
    return false;
  }
  model_acc_cfg *a = &svc->acc;
  a->on = true;
  a->jitter = 0.15;
  a->request_count = 50;
  a->percentile = 0.5;
  a->min_concurrency = 3;
  a->max_concurrency = 1000;
  a->buffer = 0.25;
  a->status = svc->space == RETRY_SPACE_GRPC ? RETRY_GRPC_UNAVAILABLE : 503;
  if (!retry_json_check_keys(&c->j, v, acc_keys, SCN_N_OF(acc_keys), NULL) ||
      retry_json_require(&c->j,
                         expt__scenario_get_duration(c, v, "update_interval", 0, true, SCN_DUR_POS,
                                                     &a->update_interval_ns),
                         "update_interval", SCN_DUR_POS) != 1 ||
      retry_json_require(&c->j,
                         expt__scenario_get_duration(c, v, "min_rtt_interval", 1000000, false,
                                                     "a duration >= 1ms", &a->min_rtt_interval_ns),
                         "min_rtt_interval", "a duration >= 1ms") != 1 ||
      retry_json_get_number(&c->j, v, "jitter", 0, false, 1, false, "a number in [0, 1]",
                            &a->jitter) < 0 ||
      retry_json_get_int32(&c->j, v, "request_count", 1, 1000000000, "an integer >= 1",
                           &a->request_count) < 0 ||
      retry_json_get_number(&c->j, v, "percentile", 0, true, 1, false, "a number in (0, 1]",
                            &a->percentile) < 0 ||
      retry_json_get_int32(&c->j, v, "min_concurrency", 1, 1000000000, "an integer >= 1",
                           &a->min_concurrency) < 0 ||
      retry_json_get_int32(&c->j, v, "max_concurrency", 1, 1000000000, "an integer >= 1",
                           &a->max_concurrency) < 0 ||
      retry_json_get_number(&c->j, v, "buffer", 0, false, 100, false, "a number in [0, 100]",
                            &a->buffer) < 0 ||
      expt__scenario_get_status(c, v, "status", svc->space, false, &a->status) < 0)
    return false;
  if (a->max_concurrency < a->min_concurrency) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"max_concurrency\" (%d) must be at least \"min_concurrency\" (%d)",
                    (int)a->max_concurrency, (int)a->min_concurrency);
    return false;
  }
  return true;
}

/* Criticality names, indexed like model_criticality from 1. */
static const char *const crit_names[] = {"SHEDDABLE", "SHEDDABLE_PLUS", "CRITICAL",
                                         "CRITICAL_PLUS"};
#define CRIT_WHAT "\"SHEDDABLE\", \"SHEDDABLE_PLUS\", \"CRITICAL\" or \"CRITICAL_PLUS\""
static const char *const criticality_keys[] = {"default", "methods", "callers"};
static const char *const shedding_keys[] = {"SHEDDABLE", "SHEDDABLE_PLUS", "CRITICAL",
                                            "CRITICAL_PLUS", "status"};
static const char *const retry_budget_keys[] = {"queue",        "ratio",  "window",
                                                "retry_status", "status", "pushback"};

/* A criticality name at v (the path is at it). */
static bool crit_value(scn_ctx *c, json_t *v, const char *label, int32_t *out) {
  const char *name = json_is_string(v) ? json_string_value(v) : NULL;
  for (int i = 0; name != NULL && i < 4; i++)
    if (strcmp(name, crit_names[i]) == 0) {
      *out = i + 1;
      return true;
    }
  retry_json_fail_value(&c->j, label, CRIT_WHAT, v);
  return false;
}

/* "methods" or "callers": {"name": CRITICALITY, ...}, at most MODEL_CRIT_RULES_MAX. */
static bool crit_rules(scn_ctx *c, json_t *obj, const char *key, bool methods,
                       model_crit_rule *rules, int *n) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, key);
  if (!json_is_object(v) || json_object_size(v) > MODEL_CRIT_RULES_MAX) {
    retry_json_fail_value(&c->j, methods ? "\"methods\"" : "\"callers\"",
                          methods
                              ? "an object {\"/pkg.Service/Method\": CRITICALITY, ...} of at "
                                "most 32 entries"
                              : "an object {\"caller\": CRITICALITY, ...} of at most 32 entries",
                          v);
    return false;
  }
  const char *name;
  json_t *val;
  json_object_foreach(v, name, val) {
    size_t m2 = retry_json_path_push_key(&c->j, name);
    if (methods && !expt__scenario_method_is_valid(name)) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "each key of \"methods\" must be a full method name "
                      "\"/package.Service/Method\"");
      return false;
    }
    model_crit_rule *r = &rules[*n];
    if (!crit_value(c, val, "a criticality", &r->crit)) return false;
    if (!dup_to(c, &r->name, name)) return false;
    (*n)++;
    retry_json_path_pop(&c->j, m2);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* "criticality": how the service labels requests that arrive without one. */
static bool parse_criticality(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"criticality\"",
                          "an object {\"default\": ..., \"methods\": {...}, \"callers\": {...}}",
                          v);
    return false;
  }
  model_criticality_cfg *k = &svc->criticality;
  k->on = true;
  k->dflt = MODEL_CRIT_CRITICAL;
  if (!retry_json_check_keys(&c->j, v, criticality_keys, SCN_N_OF(criticality_keys), NULL))
    return false;
  json_t *d = retry_json_field(v, "default");
  if (d != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "default");
    if (!crit_value(c, d, "\"default\"", &k->dflt)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return crit_rules(c, v, "methods", true, k->methods, &k->n_methods) &&
         crit_rules(c, v, "callers", false, k->callers, &k->n_callers);
}

/* "shedding": a queue threshold per criticality, not decreasing with criticality. */
static bool parse_shedding(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"shedding\"", "an object {\"SHEDDABLE\": 10, ...}", v);
    return false;
  }
  model_shedding_cfg *sh = &svc->shedding;
  sh->on = true;
  sh->status = svc->reject_status;
  if (!retry_json_check_keys(&c->j, v, shedding_keys, SCN_N_OF(shedding_keys), NULL)) return false;
  bool given[MODEL_CRIT_N] = {false};
  for (int i = 0; i < MODEL_CRIT_N; i++)
    sh->threshold[i] = INT32_MAX;
  for (int i = 0; i < 4; i++) {
    int rc = retry_json_get_int32(&c->j, v, crit_names[i], 1, SCN_MAX_QUEUE,
                                  "an integer in [1, 10000000] (queued requests)",
                                  &sh->threshold[i + 1]);
    if (rc < 0) return false;
    given[i + 1] = rc == 1;
  }
  /* An absent criticality is shed with the next higher one given (never, above the last). */
  for (int i = MODEL_CRIT_N - 2; i >= 1; i--)
    if (!given[i]) sh->threshold[i] = sh->threshold[i + 1];
  for (int i = 2; i < MODEL_CRIT_N; i++)
    if (sh->threshold[i] < sh->threshold[i - 1]) {
      char lo[48], hi[24];
      snprintf(lo, sizeof lo, given[i] ? "%d" : "%d, absent: the next one's",
               (int)sh->threshold[i]);
      snprintf(hi, sizeof hi, "%d", (int)sh->threshold[i - 1]);
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "\"%s\" (%s) must be at least \"%s\" (%s): a criticality is shed only "
                      "while every lower one is",
                      crit_names[i - 1], lo, crit_names[i - 2], hi);
      return false;
    }
  return expt__scenario_get_status(c, v, "status", svc->space, false, &sh->status) >= 0;
}

/* "retry_budget": the server-side retry budget and its "overloaded; don't retry" reply. For
 * gRPC the reply defaults to RESOURCE_EXHAUSTED with pushback "-1", which gRPC clients never
 * retry (A6); HTTP has no such signal, so an HTTP service must name its status. */
static bool parse_retry_budget(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"retry_budget\"", "an object {\"queue\": 10, ...}", v);
    return false;
  }
  model_retry_budget_cfg *rb = &svc->retry_budget;
  rb->on = true;
  rb->ratio = 0.1;
  rb->window_ns = INT64_C(10000000000);
  rb->retry_status = svc->reject_status;
  rb->status = svc->space == RETRY_SPACE_GRPC ? RETRY_GRPC_RESOURCE_EXHAUSTED : 0;
  if (!retry_json_check_keys(&c->j, v, retry_budget_keys, SCN_N_OF(retry_budget_keys), NULL) ||
      retry_json_require(&c->j,
                         retry_json_get_int32(&c->j, v, "queue", 0, SCN_MAX_QUEUE,
                                              "an integer in [0, 10000000]", &rb->queue),
                         "queue", "an integer in [0, 10000000] (queued requests)") != 1 ||
      retry_json_get_number(&c->j, v, "ratio", 0, false, 1, false, "a number in [0, 1]",
                            &rb->ratio) < 0 ||
      expt__scenario_get_duration(c, v, "window", 0, true, SCN_DUR_POS, &rb->window_ns) < 0 ||
      expt__scenario_get_status(c, v, "retry_status", svc->space, false, &rb->retry_status) < 0)
    return false;
  int rc = expt__scenario_get_status(c, v, "status", svc->space, false, &rb->status);
  if (rc < 0) return false;
  if (rc == 0 && svc->space == RETRY_SPACE_HTTP) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"status\" is required for an http service: HTTP has no \"don't retry\" "
                    "signal, so name a status your clients' policies do not retry (such as 400)");
    return false;
  }
  char *retry_after = NULL;
  if (!parse_pushback_strings(c, v, svc, &rb->pushback, &retry_after)) return false;
  free(retry_after);
  if (svc->space == RETRY_SPACE_GRPC && retry_json_field(v, "pushback") == NULL &&
      !dup_to(c, &rb->pushback, "-1"))
    return false;
  return true;
}

/* "lb": a kind name, or {"kind": ..., "avoid_previous": bool}. */
static bool parse_lb(scn_ctx *c, json_t *obj, model_service_cfg *svc) {
  json_t *v = retry_json_field(obj, "lb");
  if (v == NULL) return true;
  int k = 0;
  /* The object form is needed only for avoid_previous; "kind" is then required, since
   * an object without it would silently mean round_robin. */
  if (json_is_object(v)) {
    size_t mark = retry_json_path_push_key(&c->j, "lb");
    if (!retry_json_check_keys(&c->j, v, lb_keys, SCN_N_OF(lb_keys), NULL) ||
        retry_json_require(&c->j, retry_json_get_enum(&c->j, v, "kind", lb_names, 3, &k), "kind",
                           "\"round_robin\", \"random\" or \"p2c\"") != 1 ||
        retry_json_get_bool(&c->j, v, "avoid_previous", &svc->lb_avoid_previous) < 0)
      return false;
    retry_json_path_pop(&c->j, mark);
  } else if (retry_json_get_enum(&c->j, obj, "lb", lb_names, 3, &k) < 0) {
    return false;
  }
  svc->lb = (model_lb_kind)k;
  return true;
}

/* Calls the parser of an optional sub-value with the path at obj.key. The mark is popped only on
 * success: after an error the path must keep pointing at the value that failed, and the error has
 * already copied it anyway. */
static bool sub(scn_ctx *c, json_t *obj, const char *key, model_service_cfg *svc,
                bool (*parse)(scn_ctx *, json_t *, model_service_cfg *)) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, key);
  if (!parse(c, v, svc)) return false;
  retry_json_path_pop(&c->j, mark);
  return true;
}

static const char *const cache_keys[] = {"keys",     "capacity", "ttl",
                                         "hit_time", "coalesce", "scope"};
static const char *const cache_key_keys[] = {"dist", "n", "s"};
static const char *const cache_dist_names[] = {"uniform", "zipf"}; /* sim_keys_kind's order */
static const char *const cache_scope_names[] = {"service", "replica"}; /* model_cache_scope's */

/* "keys": {"dist": "zipf", "s": 1.1, "n": 1000000} or {"dist": "uniform", "n": N}. "s" only
 * with Zipf, where it is required; the exponent's bounds are sim_keys'. */
static bool parse_cache_keys(scn_ctx *c, json_t *v, model_cache_cfg *k) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"keys\"",
                          "an object {\"dist\": \"zipf\", \"s\": 1.1, \"n\": 1000000}", v);
    return false;
  }
  int d = 0;
  int64_t n = 0;
  if (!retry_json_check_keys(&c->j, v, cache_key_keys, SCN_N_OF(cache_key_keys), NULL) ||
      retry_json_require(&c->j,
                         retry_json_get_enum(&c->j, v, "dist", cache_dist_names, 2, &d), "dist",
                         "\"uniform\" or \"zipf\"") != 1 ||
      retry_json_require(&c->j,
                         retry_json_get_int(&c->j, v, "n", 1, (int64_t)SIM_KEYS_MAX_N,
                                            "an integer in [1, 2^53]", &n),
                         "n", "the number of keys, an integer >= 1") != 1)
    return false;
  k->keys = (sim_keys_kind)d;
  k->n_keys = (uint64_t)n;
  if (k->keys == SIM_KEYS_UNIFORM) {
    if (retry_json_field(v, "s") == NULL) return true;
    size_t mark = retry_json_path_push_key(&c->j, "s");
    retry_json_fail(&c->j, RETRY_ECONFIG, "\"s\" is the Zipf exponent: uniform keys have none");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return retry_json_require(&c->j,
                            retry_json_get_number(&c->j, v, "s", 0, true, SIM_KEYS_MAX_S, false,
                                                  "a number in (0, 1000]", &k->s),
                            "s", "the Zipf exponent, a number > 0 such as 1.1") == 1;
}

/* "scope": "service" (one cache in front of every replica) or "replica" (one in each). */
static bool parse_cache_scope(scn_ctx *c, json_t *v, model_cache_cfg *k) {
  int sc = MODEL_CACHE_SCOPE_SERVICE;
  if (retry_json_get_enum(&c->j, v, "scope", cache_scope_names, SCN_N_OF(cache_scope_names),
                          &sc) < 0)
    return false;
  k->scope = (model_cache_scope)sc;
  return true;
}

/* "cache": {"keys": {...}, "capacity": entries, "ttl": "60s", "hit_time": "0.5ms",
 * "coalesce": bool, "scope": "service" | "replica"}: a look-aside cache in front of the
 * service, or one in each replica (model_config.h). keys and capacity are required; no TTL, a
 * hit time of 0, no coalescing and one cache for the service by default. */
static bool parse_cache(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"cache\"",
                          "an object {\"keys\": {...}, \"capacity\": 100000, ...}", v);
    return false;
  }
  model_cache_cfg *k = &svc->cache;
  memset(k, 0, sizeof *k); /* hit_time: constant 0 */
  k->on = true;
  if (!retry_json_check_keys(&c->j, v, cache_keys, SCN_N_OF(cache_keys), NULL)) return false;
  json_t *keys = retry_json_field(v, "keys");
  if (keys == NULL)
    return retry_json_require(&c->j, 0, "keys",
                              "{\"dist\": \"zipf\", \"s\": 1.1, \"n\": 1000000} or "
                              "{\"dist\": \"uniform\", \"n\": N}") == 1;
  size_t mark = retry_json_path_push_key(&c->j, "keys");
  if (!parse_cache_keys(c, keys, k)) return false;
  retry_json_path_pop(&c->j, mark);
  return retry_json_require(&c->j,
                            retry_json_get_int(&c->j, v, "capacity", 1, SCN_MAX_CACHE,
                                               "an integer in [1, 100000000]", &k->capacity),
                            "capacity", "the entries the cache holds, an integer >= 1") == 1 &&
         expt__scenario_get_duration(c, v, "ttl", 0, true, SCN_DUR_POS, &k->ttl_ns) >= 0 &&
         expt__scenario_get_dist(c, v, "hit_time", &k->hit_time) >= 0 &&
         retry_json_get_bool(&c->j, v, "coalesce", &k->coalesce) >= 0 && parse_cache_scope(c, v, k);
}

/* One service, its name and space already read by the first pass. The defaults come first
 * (they are model_config.h's), then the keys in the order of the documentation, which is
 * the order the first error is looked for. */
static bool parse_service(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  int e = 0, d = 0, m = 0;
  svc->replicas = 1;
  svc->workers = 1;
  svc->queue_capacity = 1000;
  /* The queue's default reject status depends on the space, which the first pass read. */
  svc->reject_status = svc->space == RETRY_SPACE_GRPC ? RETRY_GRPC_RESOURCE_EXHAUSTED : 503;
  /* service_time is the one required key of a service: without it there is no work to
   * simulate, and no default would be a sensible guess. */
  if (!retry_json_check_keys(&c->j, v, service_keys, SCN_N_OF(service_keys), NULL) ||
      retry_json_get_int32(&c->j, v, "replicas", 1, SCN_MAX_REPLICAS, "an integer in [1, 64]",
                           &svc->replicas) < 0 ||
      retry_json_get_int32(&c->j, v, "workers", 1, SCN_MAX_WORKERS, "an integer in [1, 1000000]",
                           &svc->workers) < 0 ||
      !sub(c, v, "queue", svc, parse_queue) || !sub(c, v, "reject", svc, parse_reject) ||
      retry_json_require(&c->j, expt__scenario_get_dist(c, v, "service_time", &svc->service_time),
                         "service_time", "a duration such as \"10ms\" or a distribution") != 1 ||
      retry_json_get_number(&c->j, v, "slowdown_per_busy", 0, false, 1e9, false,
                            "a number in [0, 1e9]", &svc->slowdown_per_busy) < 0 ||
      !sub(c, v, "work", svc, expt__scenario_parse_work) ||
      retry_json_get_enum(&c->j, v, "deadline", deadline_names, 3, &d) < 0 ||
      !parse_lb(c, v, svc) ||
      retry_json_get_enum(&c->j, v, "side_effect", effect_names, 3, &e) < 0 ||
      retry_json_get_bool(&c->j, v, "dedup", &svc->dedup) < 0 ||
      retry_json_get_enum(&c->j, v, "calls_mode", calls_mode_names, 2, &m) < 0 ||
      !sub(c, v, "contention", svc, parse_contention) ||
      !sub(c, v, "admission", svc, parse_admission) || !sub(c, v, "codel", svc, parse_codel) ||
      !sub(c, v, "adaptive_concurrency", svc, parse_acc) ||
      !sub(c, v, "criticality", svc, parse_criticality) ||
      !sub(c, v, "shedding", svc, parse_shedding) ||
      !sub(c, v, "retry_budget", svc, parse_retry_budget) || !sub(c, v, "cache", svc, parse_cache))
    return false;
  /* The enum indexes are stored only once every getter succeeded; absent keys leave 0, which
   * is each enum's default (ignore, none, sequential). */
  svc->deadline = (model_deadline_mode)d;
  svc->effect = (model_effect_point)e;
  svc->calls_mode = (model_fanout_kind)m;
  /* Calls and faults come last, as in the documentation; a fault's "replicas" list is checked
   * against the service's replicas, read above. */
  json_t *calls = retry_json_field(v, "calls");
  if (calls != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "calls");
    if (!parse_calls(c, calls, svc)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  if (!parse_wait_for(c, v, svc)) return false;
  json_t *faults = retry_json_field(v, "faults");
  if (faults != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "faults");
    if (!parse_faults(c, faults, svc)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return expt__scenario_parse_ctl(c, v, svc); /* expt_scenario_ctl.c */
}

/* Every caller a service's "criticality" names must be a client or a service (checked once
 * both are read). */
static bool check_criticality_callers(scn_ctx *c) {
  const model_config *cfg = c->cfg;
  for (size_t i = 0; i < cfg->n_services; i++) {
    const model_criticality_cfg *k = &cfg->services[i].criticality;
    for (int j = 0; j < k->n_callers; j++) {
      const char *name = k->callers[j].name;
      bool found = expt__scenario_service_index(c, name) >= 0;
      for (size_t m = 0; !found && m < cfg->n_clients; m++)
        found = cfg->clients[m].name != NULL && strcmp(cfg->clients[m].name, name) == 0;
      if (found) continue;
      size_t mark = retry_json_path_push_key(&c->j, "services");
      retry_json_path_push_key(&c->j, cfg->services[i].name);
      retry_json_path_push_key(&c->j, "criticality");
      retry_json_path_push_key(&c->j, "callers");
      retry_json_path_push_key(&c->j, name);
      char shown[48];
      retry_json_printable(shown, sizeof shown, name, 40);
      retry_json_fail(&c->j, RETRY_ECONFIG, "\"%s\" is neither a client nor a service", shown);
      (void)mark;
      return false;
    }
  }
  return true;
}

/* A service or client name (the path is at it). Uniqueness among services is jansson's
 * (duplicate keys are refused); between clients and services it is checked with the clients. */
bool expt__scenario_check_name(scn_ctx *c, const char *kind, const char *name) {
  if (!expt__scenario_name_is_valid(name)) {
    char shown[48];
    retry_json_printable(shown, sizeof shown, name, 40);
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s names must be %s, got \"%s\"", kind, SCN_NAME_WHAT,
                    shown);
    return false;
  }
  /* summary.json keeps "amplification": {<service>: x, ..., "edges": [...]}, so a service
   * called "edges" would collide with the list of edges. Only services: clients do not appear
   * among amplification's keys. */
  if (strcmp(kind, "service") == 0 && strcmp(name, "edges") == 0) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"edges\" is reserved (summary.json's amplification.edges); choose another "
                    "service name");
    return false;
  }
  return true;
}

/* Names are unique (object keys), so the order is total and the sort deterministic. */
static int by_name_cmp(const void *a, const void *b) {
  return strcmp(((const scn_name_index *)a)->name, ((const scn_name_index *)b)->name);
}

/* "services": at least one. Two passes: the first reads every name and space, since a call may name
 * a service written after its caller and its status map reads the callee's space; the second reads
 * the rest in document order. */
static bool parse_services(scn_ctx *c, json_t *services) {
  model_config *cfg = c->cfg;
  size_t n = json_is_object(services) ? json_object_size(services) : 0;
  if (n == 0) {
    retry_json_fail_value(&c->j, "\"services\"", "a non-empty object {\"name\": {...}, ...}",
                          services);
    return false;
  }
  cfg->services = expt__scenario_calloc(n, sizeof cfg->services[0]);
  if (cfg->services == NULL) return oom(c);
  /* n_services is set before any name is stored: every slot is zeroed, and destroy and
   * service_index both skip a NULL name, so a failure half-way through is safe. */
  cfg->n_services = n;
  size_t i = 0;
  for (void *it = json_object_iter(services); it != NULL;
       it = json_object_iter_next(services, it), i++) {
    const char *name = json_object_iter_key(it);
    json_t *v = json_object_iter_value(it);
    model_service_cfg *svc = &cfg->services[i];
    size_t mark = retry_json_path_push_key(&c->j, name);
    if (!expt__scenario_check_name(c, "service", name)) return false;
    if (!json_is_object(v)) {
      retry_json_fail_value(&c->j, "a service", "an object {\"service_time\": ..., ...}", v);
      return false;
    }
    int sp = 0;
    if (!dup_to(c, &svc->name, name) ||
        retry_json_get_enum(&c->j, v, "space", space_names, 2, &sp) < 0)
      return false;
    /* sp stays 0 when "space" is absent: gRPC is the default space. */
    svc->space = (retry_space)sp;
    retry_json_path_pop(&c->j, mark);
  }
  /* The index by name, for the calls and clients that name services. */
  c->by_name = expt__scenario_calloc(n, sizeof *c->by_name);
  if (c->by_name == NULL) return oom(c);
  for (i = 0; i < n; i++) {
    c->by_name[i].name = cfg->services[i].name;
    c->by_name[i].index = (int)i;
  }
  qsort(c->by_name, n, sizeof *c->by_name, by_name_cmp);
  /* Second pass. Jansson iterates an object in insertion order, so both passes see the
   * services in the same order and index i names the same service in each. */
  i = 0;
  for (void *it = json_object_iter(services); it != NULL;
       it = json_object_iter_next(services, it), i++) {
    size_t mark = retry_json_path_push_key(&c->j, json_object_iter_key(it));
    if (!parse_service(c, json_object_iter_value(it), &cfg->services[i])) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * The call graph has no cycle
 * =================================================================== */

/* A cycle would make every request recurse without end, so it is refused, naming the cycle
 * and the call that closes it. The search is an iterative depth-first walk (a file may hold
 * thousands of services; recursion depth would follow them), in document order so that the
 * cycle reported does not depend on anything but the file. */
static bool report_cycle(scn_ctx *c, const int *stack, size_t depth, size_t from, size_t call) {
  const model_config *cfg = c->cfg;
  char text[sizeof c->j.e.message], shown[48];
  size_t len = 0;
  /* The cycle is printed from its first service back to it ("a -> b -> a"). Names are cut to
   * 24 bytes so a cycle of several services fits the message; on a truncated snprintf len
   * jumps to the buffer's size, which ends the loop. */
  for (size_t k = from; k <= depth && len < sizeof text; k++) {
    int s = k < depth ? stack[k] : stack[from];
    retry_json_printable(shown, sizeof shown, cfg->services[s].name, 24);
    int n = snprintf(text + len, sizeof text - len, "%s%s", k > from ? " -> " : "", shown);
    len = n < 0 ? sizeof text : len + (size_t)n;
  }
  int u = stack[depth - 1];
  /* The error points at the "service" key of the call that closes the cycle, the line a user
   * edits to break it. A fallback call is kept past the listed calls (calls[] has no entry of
   * the file at its index), so its path is the on_failure.fallback of the call that names it.
   * One pop with the first mark undoes every push. */
  const model_service_cfg *sv = &cfg->services[u];
  size_t owner = call;
  if (sv->calls[call].fallback_only)
    for (size_t i = 0; i < sv->n_calls; i++)
      if (sv->calls[i].on_failure.on && sv->calls[i].on_failure.fallback == (int32_t)call)
        owner = i;
  size_t mark = retry_json_path_push_key(&c->j, "services");
  retry_json_path_push_key(&c->j, sv->name);
  retry_json_path_push_key(&c->j, "calls");
  retry_json_path_push_index(&c->j, owner);
  if (owner != call) {
    retry_json_path_push_key(&c->j, "on_failure");
    retry_json_path_push_key(&c->j, "fallback");
  }
  retry_json_path_push_key(&c->j, "service");
  retry_json_fail(&c->j, RETRY_ECONFIG, "the calls form a cycle: %s", text);
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* Colors: 0 not seen, 1 on the current path (a call to such a service closes a cycle),
 * 2 finished (everything below it is known to be acyclic). stack and next hold the current
 * path and, per depth, the next call to follow: O(services + calls) in all. The three arrays are
 * sized by the number of services: the stack never holds a service twice (one on the stack is color
 * 1, and following it again closes a cycle instead of pushing). On out of memory the error is
 * recorded and the loop does not run; free(NULL) is fine. */
static bool check_cycles(scn_ctx *c) {
  const model_config *cfg = c->cfg;
  size_t n = cfg->n_services;
  unsigned char *color = expt__scenario_calloc(n, 1); /* 0 new, 1 on the stack, 2 done */
  int *stack = expt__scenario_calloc(n, sizeof *stack);
  size_t *next = expt__scenario_calloc(n, sizeof *next); /* next call to follow, per depth */
  bool ok = color != NULL && stack != NULL && next != NULL;
  if (!ok) oom(c);
  /* Roots in document order: the cycle reported is the first one a depth-first walk of the
   * file meets, the same on every run. */
  for (size_t root = 0; ok && root < n; root++) {
    if (color[root] != 0) continue;
    size_t depth = 0;
    stack[depth] = (int)root;
    next[depth++] = 0;
    color[root] = 1;
    while (ok && depth > 0) {
      const model_service_cfg *u = &cfg->services[stack[depth - 1]];
      size_t j = next[depth - 1]++;
      if (j == u->n_calls) {
        color[stack[--depth]] = 2;
        continue;
      }
      int v = u->calls[j].service;
      /* A back edge: the cycle is the stack from v's position up, closed by call j. */
      if (color[v] == 1) {
        size_t from = 0;
        while (stack[from] != v)
          from++;
        ok = report_cycle(c, stack, depth, from, j);
      } else if (color[v] == 0) {
        color[v] = 1;
        stack[depth] = v;
        next[depth++] = 0;
      }
    }
  }
  free(color);
  free(stack);
  free(next);
  return ok;
}

/* }================================================================== */

/* {==================================================================
 * The top level
 * =================================================================== */

static const char *const top_keys[] = {
    "name",         "description", "seed",     "duration", "drain",  "bucket",
    "recovery",     "services",    "clients",  "variants", "expect", "warmup",
    "replications", "confidence",  "baseline", "sweep",    "search", "operators", "events"};

/* "name": given, it follows the rule of every other name; absent, the file's base name is
 * used as it is (a file name may hold characters a name may not, and that is not the
 * user's mistake in this file). */
static bool parse_name(scn_ctx *c, json_t *doc, const char *default_name) {
  const char *name = default_name;
  int rc = retry_json_get_string(&c->j, doc, "name", &name);
  if (rc < 0) return false;
  if (rc == 1 && !expt__scenario_name_is_valid(name)) {
    size_t mark = retry_json_path_push_key(&c->j, "name");
    retry_json_fail_value(&c->j, "\"name\"", SCN_NAME_WHAT, json_object_get(doc, "name"));
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return dup_to(c, &c->cfg->name, name);
}

/* "warmup": calls started before it are left out of the summary's figures (models/ says
 * which); 0 by default, and less than the duration, so that some calls are measured. */
static bool parse_warmup(scn_ctx *c, json_t *doc) {
  model_config *cfg = c->cfg;
  cfg->warmup_ns = 0;
  if (expt__scenario_get_duration(c, doc, "warmup", 0, false, SCN_DUR_NONNEG, &cfg->warmup_ns) < 0)
    return false;
  if (cfg->warmup_ns < cfg->duration_ns) return true;
  size_t mark = retry_json_path_push_key(&c->j, "warmup");
  char got[64];
  retry_json_describe(json_object_get(doc, "warmup"), got, sizeof got);
  retry_json_fail(&c->j, RETRY_ECONFIG,
                  "\"warmup\" must be less than the duration: a duration >= 0 and < \"duration\", "
                  "got %s",
                  got);
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* "seed", "duration", "drain" and "bucket". The seed is a JSON integer, so at most
 * INT64_MAX here: jansson refuses larger integers as a syntax error. The command line's
 * --seed covers the rest of the uint64 range. The defaults: drain 60 s, bucket 1 s, seed 1.
 * "duration" has no default: how long the clients send is the one figure every scenario must state.
 */
static bool parse_times(scn_ctx *c, json_t *doc) {
  model_config *cfg = c->cfg;
  int64_t seed = 1;
  cfg->drain_ns = 60 * RETRY_NS_PER_S;
  cfg->bucket_ns = RETRY_NS_PER_S;
  expt_recovery_cfg_init(&c->recovery);
  if (retry_json_get_int(&c->j, doc, "seed", 0, INT64_MAX, "an integer >= 0", &seed) < 0 ||
      retry_json_require(
          &c->j,
          expt__scenario_get_duration(c, doc, "duration", 0, true, SCN_DUR_POS, &cfg->duration_ns),
          "duration", "how long clients send calls, " SCN_DUR_POS) != 1 ||
      expt__scenario_get_duration(c, doc, "drain", 0, false, SCN_DUR_NONNEG, &cfg->drain_ns) < 0 ||
      expt__scenario_get_duration(c, doc, "bucket", 0, true, SCN_DUR_POS, &cfg->bucket_ns) < 0)
    return false;
  cfg->seed = (uint64_t)seed;
  /* The time series holds duration / bucket rows: a million is plenty for any plot and keeps
   * a typo such as "1ns" from asking for gigabytes. */
  /* The first test avoids overflow in bucket * SCN_MAX_BUCKETS; a bucket that large cannot
   * give too many rows anyway, since the duration is an int64 too. The "got" falls back to the
   * default "1s" when the limit is hit without an explicit "bucket". */
  if (cfg->bucket_ns <= INT64_MAX / SCN_MAX_BUCKETS &&
      cfg->duration_ns > cfg->bucket_ns * SCN_MAX_BUCKETS) {
    size_t mark = retry_json_path_push_key(&c->j, "bucket");
    /* Without an explicit "bucket" there is nothing to describe: the default is named. */
    json_t *given = json_object_get(doc, "bucket");
    char got[64] = "\"1s\"";
    if (given != NULL) retry_json_describe(given, got, sizeof got);
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"bucket\" is too small: duration / bucket must be at most %d, got %s",
                    SCN_MAX_BUCKETS, got);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return parse_warmup(c, doc);
}

/* The study's keys (docs/cli.md, "Studies"): "replications" 1..100000, "confidence" 0.5..0.9999,
 * "baseline" a variant's name. Only their shapes are checked here; that the baseline names a
 * variant being run is checked by the runner (expt_run_validate), after --variant. */
static bool parse_study_keys(scn_ctx *c, json_t *doc) {
  int64_t reps = 1;
  double level = 0.95;
  const char *baseline = NULL;
  if (retry_json_get_int(&c->j, doc, "replications", 1, 100000, "an integer 1 .. 100000", &reps) <
          0 ||
      retry_json_get_number(&c->j, doc, "confidence", 0.5, false, 0.9999, false,
                            "a number 0.5 .. 0.9999 (0.95 for 95 %)", &level) < 0)
    return false;
  int rc = retry_json_get_string(&c->j, doc, "baseline", &baseline);
  if (rc < 0) return false;
  if (rc == 1 && baseline[0] == '\0') {
    size_t mark = retry_json_path_push_key(&c->j, "baseline");
    retry_json_fail_value(&c->j, "\"baseline\"", "the name of a variant",
                          json_object_get(doc, "baseline"));
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  return true;
}

static const char *const recovery_keys[] = {"threshold",   "hold",           "warmup",
                                            "latency",     "latency_factor", "queue_factor",
                                            "queue_slack", "trigger",        "windows"};
static const char *const recovery_trigger_keys[] = {"start", "end"};
static const char *const recovery_latency_names[] = {"p50", "p99"};

/* "recovery.trigger": the trigger window given explicitly (a load spike has no fault). */
static bool parse_recovery_trigger(scn_ctx *c, json_t *v) {
  expt_recovery_cfg *r = &c->recovery;
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"trigger\"", "an object {\"start\": \"30s\", \"end\": \"45s\"}",
                          v);
    return false;
  }
  if (!retry_json_check_keys(&c->j, v, recovery_trigger_keys, SCN_N_OF(recovery_trigger_keys),
                             NULL) ||
      retry_json_require(&c->j,
                         expt__scenario_get_duration(c, v, "start", 0, false, SCN_DUR_NONNEG,
                                                     &r->trigger_start_ns),
                         "start", "the trigger's start, a duration") != 1 ||
      retry_json_require(
          &c->j,
          expt__scenario_get_duration(c, v, "end", 0, false, SCN_DUR_NONNEG, &r->trigger_end_ns),
          "end", "the trigger's end, a duration") != 1)
    return false;
  if (r->trigger_end_ns <= r->trigger_start_ns) {
    retry_json_fail_field(&c->j, v, "end", "after \"start\"");
    return false;
  }
  r->explicit_trigger = true;
  return true;
}

/* "recovery": how the summary judges recovery after the trigger (expt_recovery_cfg). The
 * defaults are set before, so that a scenario without the key gets them too. */
static bool parse_recovery(scn_ctx *c, json_t *v) {
  expt_recovery_cfg *r = &c->recovery;
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"recovery\"",
                          "an object {\"threshold\": 0.9, \"hold\": \"10s\", \"warmup\": \"5s\"}",
                          v);
    return false;
  }
  int latency = r->latency_q == 0.5 ? 0 : 1;
  bool ok =
      retry_json_check_keys(&c->j, v, recovery_keys, SCN_N_OF(recovery_keys), NULL) &&
      retry_json_get_number(&c->j, v, "threshold", 0, true, 1, false,
                            "a fraction of the baseline in (0, 1]", &r->threshold) >= 0 &&
      expt__scenario_get_duration(c, v, "hold", 0, true, SCN_DUR_POS, &r->hold_ns) >= 0 &&
      expt__scenario_get_duration(c, v, "warmup", 0, false, SCN_DUR_NONNEG, &r->warmup_ns) >= 0 &&
      retry_json_get_enum(&c->j, v, "latency", recovery_latency_names,
                          SCN_N_OF(recovery_latency_names), &latency) >= 0 &&
      retry_json_get_number(&c->j, v, "latency_factor", 1, false, 1e9, false,
                            "a factor of the baseline latency, >= 1", &r->latency_factor) >= 0 &&
      retry_json_get_number(&c->j, v, "queue_factor", 1, false, 1e9, false,
                            "a factor of the baseline queue, >= 1", &r->queue_factor) >= 0 &&
      retry_json_get_number(&c->j, v, "queue_slack", 0, false, 1e9, false,
                            "requests per worker, >= 0", &r->queue_slack) >= 0;
  if (!ok) return false;
  r->latency_q = latency == 0 ? 0.5 : 0.99;
  json_t *t = retry_json_field(v, "trigger");
  if (t != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "trigger");
    if (!parse_recovery_trigger(c, t)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  /* The windows whose figures each run reports (expt_scenario_windows.c). */
  json_t *w = retry_json_field(v, "windows");
  if (w == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, "windows");
  if (!expt__scenario_parse_windows(c, w)) return false;
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* A top-level member, parsed with the path at it. what == NULL makes the member optional (variants,
 * expect); otherwise its absence is reported as `"key" is required: what`. */
static bool top_sub(scn_ctx *c, json_t *doc, const char *key, const char *what,
                    bool (*parse)(scn_ctx *, json_t *)) {
  json_t *v = retry_json_field(doc, key);
  if (v == NULL) {
    if (what == NULL) return true;
    return retry_json_require(&c->j, 0, key, what) == 1;
  }
  size_t mark = retry_json_path_push_key(&c->j, key);
  if (!parse(c, v)) return false;
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* The order of the checks is the order of the documentation: top-level keys, the scalars,
 * services (then the call graph), clients (which need the services), and last the shapes of
 * variants and expectations. The config is owned here until it is returned, so every exit
 * after an error frees it, whatever was filled. */
model_config *expt__scenario_build(scn_ctx *c, json_t *doc, const char *default_name) {
  if (!json_is_object(doc)) {
    retry_json_fail_value(&c->j, "a scenario", "a JSON object", doc);
    return NULL;
  }
  /* The config hangs off the context so every parser can reach the services converted so
   * far; the context never owns it, and it is detached below before being returned. */
  c->cfg = expt__scenario_calloc(1, sizeof *c->cfg);
  if (c->cfg == NULL) {
    oom(c);
    return NULL;
  }
  const char *desc = NULL;
  bool ok =
      expt__scenario_check_keys(c, doc, top_keys, SCN_N_OF(top_keys), NULL) &&
      parse_name(c, doc, default_name) &&
      retry_json_get_string(&c->j, doc, "description", &desc) >= 0 && parse_times(c, doc) &&
      parse_study_keys(c, doc) && top_sub(c, doc, "recovery", NULL, parse_recovery) &&
      top_sub(c, doc, "services", "an object of services {\"name\": {...}}", parse_services) &&
      check_cycles(c) && expt__scenario_check_on_failure(c) &&
      top_sub(c, doc, "clients", "an object of clients {\"name\": {...}}",
              expt__scenario_parse_clients) &&
      check_criticality_callers(c) && expt__scenario_parse_ops(c, doc) &&
      expt__scenario_check_inert(c, doc) &&
      top_sub(c, doc, "variants", NULL, expt__scenario_check_variants) &&
      top_sub(c, doc, "expect", NULL, expt__scenario_check_expect) &&
      top_sub(c, doc, "sweep", NULL, expt__scenario_check_sweep) &&
      top_sub(c, doc, "search", NULL, expt__scenario_check_search) &&
      expt__scenario_check_study_pair(c, doc);
  /* failed(c) as well as ok: a parser that recorded an error but returned success (an
   * out-of-memory report inside a helper, say) must still not let the config through. */
  model_config *cfg = c->cfg;
  c->cfg = NULL;
  free(c->by_name); /* its names are cfg's */
  c->by_name = NULL;
  if (!ok || failed(c)) {
    model_config_destroy(cfg);
    return NULL;
  }
  return cfg;
}

/* }================================================================== */
