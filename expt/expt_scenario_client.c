/*
 * expt_scenario_client.c: the clients of a scenario (population, arrival process, method mix,
 * deadline) and the POLICY values that clients and downstream calls share: a gRPC service
 * config written inline or kept in a file, loaded by libretry's own loader.
 *
 * Services are converted before clients, so a client's target and its policy's status space
 * can be checked against the service it calls.
 */
#include "expt/expt_scenario_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The forms a POLICY value may take, for messages ("must be ..."). */
#define POLICY_WHAT "a service config object, the name of a service config file or null"

/* Reported at the current path like any error; the caller's config owns what was built. */
static bool oom(scn_ctx *c) {
  retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory loading the scenario");
  return false;
}

/* {==================================================================
 * Policies
 * =================================================================== */

/* A policy read from a file and not patched since is the file's, so its warnings name the file
 * and the path in it, as fail_inline does for its errors. */
static const scn_policy_file *policy_file_of(const scn_ctx *c, const json_t *v) {
  for (size_t i = 0; c->files != NULL && i < c->files->n; i++) {
    const scn_policy_file *pf = &c->files->files[i];
    if (json_equal(pf->content, v)) return pf;
  }
  return NULL;
}

/* A service config error, moved into the scenario: same code and message, at the policy's
 * path followed by the path inside the service config ("$.clients.web.policy" +
 * ".methodConfig[0].retryPolicy.maxAttempts"). The loader's "$" is dropped so the two paths
 * join. Its line and column are dropped too: they count in the text load_inline dumped, not
 * in the scenario file, and would point a user at the wrong place. A failed load always sets
 * a code; the RETRY_ECONFIG fallback only makes sure an error can never read as success. */
static bool fail_inline(scn_ctx *c, json_t *v, const retry_error *pe) {
  /* A policy read from a file and not patched since is the file's: its error names the file
   * and the path in it, as loading the file alone would (a name too long for the error's
   * source falls back to the scenario's path). */
  const scn_policy_file *pf = policy_file_of(c, v);
  if (pf != NULL) {
    /* retry_error_set keeps the end of a source too long for the error (the file's name). */
    retry_error e;
    retry_error_clear(&e);
    retry_error_set(&e, pe->code != RETRY_OK ? pe->code : RETRY_ECONFIG, pf->path, pe->path, -1, -1,
                    "%s", pe->message);
    retry_json_fail_error(&c->j, &e);
    return false;
  }
  size_t mark = retry_json_path_push_raw(&c->j, pe->path[0] == '$' ? pe->path + 1 : "");
  retry_json_fail(&c->j, pe->code != RETRY_OK ? pe->code : RETRY_ECONFIG, "%s", pe->message);
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* The warning sink of every policy load (expt_scenario_set_warn); NULL: none. */
static const expt_scenario_warn *warn_sink;

void expt_scenario_set_warn(const expt_scenario_warn *w) { warn_sink = w; }

/* Carries a load's warnings to the sink: those of an inline policy move into the scenario
 * the way fail_inline moves its errors (the policy's path, then the path inside it). */
typedef struct warn_relay {
  scn_ctx *c;
  json_t *v; /* the policy object loaded */
} warn_relay;

/* The file named at the current path, if any: a policy read from a file and then patched (by a
 * variant's set or a --set) no longer equals the file, but its warnings are still the file's. */
static const scn_policy_file *policy_file_named_here(const scn_ctx *c) {
  for (size_t i = 0; c->files != NULL && i < c->files->n; i++) {
    const scn_policy_file *pf = &c->files->files[i];
    for (size_t k = 0; k < json_array_size(pf->named_at); k++)
      if (strcmp(json_string_value(json_array_get(pf->named_at, k)), c->j.path) == 0) return pf;
  }
  return NULL;
}

/* A policy from a file, patched or not, warns as the file: "FILE: $.path.in.it: message", so a
 * variant that patches the file does not repeat the file's warnings under the scenario's name
 * (print_warning prints each line once, whatever the variant). */
static void relay_warning(void *ctx, const retry_error *w) {
  const warn_relay *r = ctx;
  const scn_policy_file *pf = policy_file_of(r->c, r->v);
  /* A patched file's warning is the file's only when the file holds what it is about: a key
   * misspelt in a variant's "set" (or a --set) is the scenario's, at its path there, so the
   * user is sent to the patch rather than to a file that is right (issue 23). */
  if (pf == NULL) {
    pf = policy_file_named_here(r->c);
    if (pf != NULL && w->path[0] == '$' && w->path[1] == '.' &&
        expt_scenario_path_get(pf->content, w->path + 2, NULL) == NULL)
      pf = NULL;
  }
  if (pf != NULL) {
    retry_error moved;
    retry_error_clear(&moved);
    retry_error_set(&moved, w->code, pf->path, w->path, -1, -1, "%s", w->message);
    warn_sink->fn(warn_sink->ctx, r->c->variant, &moved);
    return;
  }
  char path[sizeof r->c->j.path];
  snprintf(path, sizeof path, "%s%s", r->c->j.path, w->path[0] == '$' ? w->path + 1 : "");
  retry_error moved;
  retry_error_clear(&moved);
  retry_error_set(&moved, w->code, r->c->j.source, path, -1, -1, "%s", w->message);
  warn_sink->fn(warn_sink->ctx, r->c->variant, &moved);
}

/* The loader's options: the default cap on maxAttempts, the test hook's allocator, and the
 * warnings relayed through r (when a sink is set). */
static retry_config_opts policy_opts(warn_relay *r) {
  retry_config_opts opts = {.max_attempts_limit = 0, .alloc = expt__scenario_retry_alloc()};
  if (warn_sink != NULL) {
    opts.warn = warn_sink->fn != NULL ? relay_warning : NULL;
    opts.warn_ctx = r;
    opts.strict = warn_sink->strict;
  }
  return opts;
}

/* The object is handed to retry_config_load_string as text: the service config loader reads
 * text or files only, and keeping one loader means an inline policy and the same policy in a
 * file behave identically, to the message. Jansson keeps the keys in document order, so the
 * loader's "first error" is the one the user sees first. */
static bool load_inline(scn_ctx *c, json_t *v, retry_config **out) {
  /* The text comes from jansson's allocator, which tests may replace (json_set_alloc_funcs),
   * so it is released with jansson's free function rather than free(). */
  char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (text == NULL) return oom(c);
  /* 0: libretry's default cap on maxAttempts. The allocator is NULL except under the tests'
   * failure hook. Errors name the scenario (c->j.source): an inline policy lives in it. */
  warn_relay relay = {c, v};
  retry_config_opts opts = policy_opts(&relay);
  retry_error pe;
  retry_error_clear(&pe);
  *out = retry_config_load_string(text, c->j.source, &opts, &pe);
  json_free_t free_fn = NULL;
  json_get_alloc_funcs(NULL, &free_fn);
  free_fn(text);
  return *out != NULL || fail_inline(c, v, &pe);
}

/* A POLICY value: an object is a service config, written inline or read from a file when the
 * scenario was loaded (expt__scenario_expand_policies leaves no file name behind, except ""),
 * JSON null never reaches here (the caller's getter reads it as "no policy"). */
bool expt__scenario_policy_value(scn_ctx *c, json_t *v, retry_config **out) {
  *out = NULL;
  if (json_is_object(v)) return load_inline(c, v, out);
  retry_json_fail_value(&c->j, "\"policy\"", POLICY_WHAT, v);
  return false;
}

/* A policy judges the statuses its target sends: an HTTP policy in front of a gRPC service
 * would never match a retryable status (or, worse, match the wrong one by number), so the
 * spaces must agree wherever the policy retries or hedges. */
bool expt__scenario_policy_check_space(scn_ctx *c, const retry_config *policy,
                                       const char *const *methods, size_t n, int target) {
  /* retry_config_lookup never returns NULL: a method no methodConfig names gets an empty
   * config whose policy kind is RETRY_POLICY_NONE, which has no statuses to disagree on. */
  if (policy == NULL) return true;
  const model_service_cfg *svc = &c->cfg->services[target];
  for (size_t i = 0; i < n; i++) {
    const retry_method_config *mc = retry_config_lookup(policy, methods[i]);
    if (mc->policy.kind == RETRY_POLICY_NONE || mc->policy.space == svc->space) continue;
    char m[48];
    retry_json_printable(m, sizeof m, methods[i], 40);
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "the policy of \"%s\" uses %s statuses but service \"%s\" replies with %s "
                    "statuses",
                    m, expt__scenario_space_name(mc->policy.space), svc->name,
                    expt__scenario_space_name(svc->space));
    return false;
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Arrivals
 * =================================================================== */

/* Indexed like model_loop_kind, so the index read from "kind" is the loop stored. Each kind
 * has its own key list; "kind" is in all three because check_keys sees the whole object. */
static const char *const arrival_kinds[] = {"open", "closed", "script"};
static const char *const keys_open[] = {"kind", "rate"};
static const char *const keys_closed[] = {"kind", "think", "user_retries", "user_retry_delay"};
static const char *const keys_script[] = {"kind", "at"};

/* "at": the call times of every client of a script population. */
static bool parse_script(scn_ctx *c, json_t *arr, model_client_cfg *cl, int64_t duration_ns) {
  const char *what = "a non-empty array of at most 256 times such as [\"0s\", \"1.5s\"]";
  /* The limit is MODEL_SCRIPT_MAX: script times live in a fixed array of the client config. */
  if (retry_json_require(&c->j, arr != NULL, "at", what) != 1) return false;
  size_t mark = retry_json_path_push_key(&c->j, "at");
  if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > MODEL_SCRIPT_MAX) {
    retry_json_fail_value(&c->j, "\"at\"", what, arr);
    return false;
  }
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *t = json_array_get(arr, i);
    int64_t ns = 0;
    size_t mi = retry_json_path_push_index(&c->j, i);
    if (!expt__scenario_duration_value(c, t, "each time", 0, false, SCN_DUR_NONNEG, &ns))
      return false;
    char got[64];
    retry_json_describe(t, got, sizeof got);
    /* Times must not decrease: the world walks the script in order, and two equal times are
     * fine (two calls at once). Each time must fall inside the run, or it would never fire. */
    if (i > 0 && ns < cl->script_ns[i - 1]) {
      char prev[64];
      retry_json_describe(json_array_get(arr, i - 1), prev, sizeof prev);
      retry_json_fail(&c->j, RETRY_ECONFIG, "times must not decrease: %s comes after %s", got,
                      prev);
      return false;
    }
    if (ns >= duration_ns) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "each time must be before the end of \"duration\", got %s", got);
      return false;
    }
    cl->script_ns[i] = ns;
    /* Grown as each time is accepted, so n_script never counts a time that was not stored. */
    cl->n_script = (int)i + 1;
    retry_json_path_pop(&c->j, mi);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* "arrival": the kind first, since it decides the keys allowed, then the kind's fields. */
static bool parse_arrival(scn_ctx *c, json_t *v, model_client_cfg *cl) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"arrival\"",
                          "an object {\"kind\": \"open\" | \"closed\" | \"script\", ...}", v);
    return false;
  }
  int kind = 0;
  if (retry_json_require(&c->j, retry_json_get_enum(&c->j, v, "kind", arrival_kinds, 3, &kind),
                         "kind", "\"open\", \"closed\" or \"script\"") != 1)
    return false;
  cl->loop = (model_loop_kind)kind;
  /* Closed and script populations have no rate; a single point at 0 keeps the profile's
   * invariant (n_points >= 1) for code that reads it regardless of the loop. */
  cl->rate.n_points = 1;
  const char *const *keys = kind == 0 ? keys_open : kind == 1 ? keys_closed : keys_script;
  size_t n = kind == 0   ? SCN_N_OF(keys_open)
             : kind == 1 ? SCN_N_OF(keys_closed)
                         : SCN_N_OF(keys_script);
  char where[48];
  expt__scenario_kind_where(where, sizeof where, arrival_kinds[kind], "arrival");
  if (!retry_json_check_keys(&c->j, v, keys, n, where)) return false;
  /* Each case returns: the keys were checked above, so only the kind's own values remain. */
  switch (cl->loop) {
    case MODEL_LOOP_OPEN: {
      json_t *r = retry_json_field(v, "rate");
      if (retry_json_require(&c->j, r != NULL, "rate",
                             "calls per second of the population, such as \"800/s\"") != 1)
        return false;
      size_t mark = retry_json_path_push_key(&c->j, "rate");
      if (!expt__scenario_profile_value(c, r, "\"rate\"", &cl->rate)) return false;
      retry_json_path_pop(&c->j, mark);
      return true;
    }
    case MODEL_LOOP_CLOSED:
      return retry_json_require(&c->j, expt__scenario_get_dist(c, v, "think", &cl->think), "think",
                                "the pause between calls, a duration or a distribution") == 1 &&
             retry_json_get_int32(&c->j, v, "user_retries", 0, SCN_MAX_USER_RETRIES,
                                  "an integer in [0, 1000]", &cl->user_retries) >= 0 &&
             expt__scenario_get_dist(c, v, "user_retry_delay", &cl->user_retry_delay) >= 0;
    case MODEL_LOOP_SCRIPT:
      return parse_script(c, retry_json_field(v, "at"), cl, c->cfg->duration_ns);
  }
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Methods
 * =================================================================== */

static const char *const method_keys[] = {"name",          "weight",       "stream",
                                          "request_bytes", "stream_items", "deadline"};

/* One entry of "methods": a plain name (weight 1, unary, the client's deadline) or an
 * object. Defaults are set first so an abandoned entry is well-formed for destroy. */
static bool parse_method(scn_ctx *c, json_t *v, model_method_cfg *m) {
  /* A weight is relative to the other methods of the client; 1 for all gives a uniform mix. */
  m->weight = 1;
  m->deadline_ns = RETRY_NEVER;
  m->stream = RETRY_STREAM_UNARY;
  const char *name = NULL;
  if (json_is_string(v)) {
    if (!expt__scenario_method_is_valid(json_string_value(v))) {
      retry_json_fail_value(&c->j, "each method", "a full method name \"/package.Service/Method\"",
                            v);
      return false;
    }
    name = json_string_value(v);
  } else if (json_is_object(v)) {
    if (!retry_json_check_keys(&c->j, v, method_keys, SCN_N_OF(method_keys), NULL) ||
        retry_json_require(&c->j, expt__scenario_get_method(c, v, "name", &name), "name",
                           "a full method name \"/package.Service/Method\"") != 1 ||
        retry_json_get_number(&c->j, v, "weight", 0, true, 1e12, false, "a number > 0",
                              &m->weight) < 0 ||
        expt__scenario_get_stream(c, v, &m->stream) < 0 ||
        retry_json_get_int(&c->j, v, "request_bytes", 0, INT64_MAX, "an integer >= 0",
                           &m->request_bytes) < 0 ||
        retry_json_get_int(&c->j, v, "stream_items", 0, INT64_MAX, "an integer >= 0",
                           &m->stream_items) < 0 ||
        expt__scenario_get_duration(c, v, "deadline", 0, true, SCN_DUR_POS, &m->deadline_ns) < 0)
      return false;
  } else {
    retry_json_fail_value(&c->j, "each method",
                          "a method name \"/package.Service/Method\" or an object {\"name\": ...}",
                          v);
    return false;
  }
  /* Copied last, once everything else is valid. Until then the name points into the
   * document; the config must own its strings, since it is used (and freed by
   * model_config_destroy) without the document. */
  m->name = expt__scenario_strdup(name);
  return m->name != NULL || oom(c);
}

/* "methods": at least one, each name once (two weights for one method would be summed or
 * one ignored, and either reading could surprise). n_methods grows with each entry started,
 * so destroy frees exactly the names that exist. */
static bool parse_methods(scn_ctx *c, json_t *list, model_client_cfg *cl) {
  const char *what = "a non-empty array of method names or {\"name\": ...} objects";
  if (retry_json_require(&c->j, list != NULL, "methods", what) != 1) return false;
  size_t mark = retry_json_path_push_key(&c->j, "methods");
  size_t n = json_is_array(list) ? json_array_size(list) : 0;
  if (n == 0) {
    retry_json_fail_value(&c->j, "\"methods\"", what, list);
    return false;
  }
  cl->methods = expt__scenario_calloc(n, sizeof cl->methods[0]);
  if (cl->methods == NULL) return oom(c);
  for (size_t i = 0; i < n; i++) {
    size_t mi = retry_json_path_push_index(&c->j, i);
    cl->n_methods = i + 1;
    if (!parse_method(c, json_array_get(list, i), &cl->methods[i])) return false;
    /* Quadratic, like every duplicate check here: a client lists a handful of methods. */
    for (size_t j = 0; j < i; j++) {
      if (strcmp(cl->methods[j].name, cl->methods[i].name) != 0) continue;
      char shown[48];
      retry_json_printable(shown, sizeof shown, cl->methods[i].name, 40);
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "method \"%s\" is listed twice (first at [%zu]); give it one weight", shown,
                      j);
      return false;
    }
    retry_json_path_pop(&c->j, mi);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Clients
 * =================================================================== */

static const char *const client_keys[] = {"count",   "target",   "arrival", "start",
                                          "stop",    "methods",  "deadline", "policy",
                                          "network", "on_failure"};

/* start < stop <= duration: new calls only inside the run, and a window that holds time. */
static bool parse_window(scn_ctx *c, json_t *v, model_client_cfg *cl) {
  /* The top level was read before clients, so duration_ns is known. stop is only compared
   * when given (rc == 1); absent, the client stops with the run, RETRY_NEVER below. */
  int64_t duration = c->cfg->duration_ns, stop = duration;
  int rc;
  if (expt__scenario_get_duration(c, v, "start", 0, false, SCN_DUR_NONNEG, &cl->start_ns) < 0 ||
      (rc = expt__scenario_get_duration(c, v, "stop", 0, true, SCN_DUR_POS, &stop)) < 0)
    return false;
  const char *bad = NULL, *why = NULL;
  if (cl->start_ns >= duration) {
    bad = "start";
    why = "\"start\" must be before the end of \"duration\"";
  } else if (rc == 1 && stop > duration) {
    bad = "stop";
    why = "\"stop\" must be at most \"duration\"";
  } else if (rc == 1 && stop <= cl->start_ns) {
    bad = "stop";
    why = "\"stop\" must be after \"start\"";
  }
  if (bad != NULL) {
    char got[64];
    retry_json_describe(json_object_get(v, bad), got, sizeof got);
    size_t mark = retry_json_path_push_key(&c->j, bad);
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s, got %s", why, got);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  cl->stop_ns = rc == 1 ? stop : RETRY_NEVER;
  return true;
}

/* One client population. The policy is read after the methods, because its status space
 * is checked for each of them against the target's space. */
static bool parse_client(scn_ctx *c, json_t *v, model_client_cfg *cl) {
  /* Defaults first, for destroy's sake: one client, no deadline, sending until the end. The
   * count is capped (SCN_MAX_COUNT) because every client keeps its own channel state
   * (throttle, budget, breaker), so the count is paid for in memory. */
  cl->count = 1;
  cl->deadline_ns = RETRY_NEVER;
  cl->stop_ns = RETRY_NEVER;
  if (!retry_json_check_keys(&c->j, v, client_keys, SCN_N_OF(client_keys), NULL) ||
      retry_json_get_int32(&c->j, v, "count", 1, SCN_MAX_COUNT, "an integer in [1, 100000000]",
                           &cl->count) < 0)
    return false;
  /* The target is read early: the policy's space check below needs the service it calls. */
  if (!expt__scenario_service_ref(c, v, "target", &cl->target)) return false;
  json_t *arrival = retry_json_field(v, "arrival");
  if (retry_json_require(&c->j, arrival != NULL, "arrival",
                         "{\"kind\": \"open\" | \"closed\" | \"script\", ...}") != 1)
    return false;
  size_t mark = retry_json_path_push_key(&c->j, "arrival");
  if (!parse_arrival(c, arrival, cl)) return false;
  retry_json_path_pop(&c->j, mark);
  if (!parse_window(c, v, cl) || !parse_methods(c, retry_json_field(v, "methods"), cl) ||
      expt__scenario_get_duration(c, v, "deadline", 0, true, SCN_DUR_POS, &cl->deadline_ns) < 0)
    return false;
  json_t *pol = retry_json_field(v, "policy");
  if (pol != NULL) {
    mark = retry_json_path_push_key(&c->j, "policy");
    /* The method names are gathered into a temporary array (borrowed pointers, freed here)
     * to share the space check with downstream calls, which have a single method. */
    const char **names = expt__scenario_calloc(cl->n_methods, sizeof *names);
    if (names == NULL) return oom(c);
    for (size_t i = 0; i < cl->n_methods; i++)
      names[i] = cl->methods[i].name;
    bool ok = expt__scenario_policy_value(c, pol, &cl->policy) &&
              expt__scenario_policy_check_space(c, cl->policy, names, cl->n_methods, cl->target);
    free(names);
    if (!ok) return false;
    retry_json_path_pop(&c->j, mark);
  }
  if (expt__scenario_get_dist(c, v, "network", &cl->network) < 0) return false;
  json_t *of = retry_json_field(v, "on_failure");
  if (of == NULL) return true;
  mark = retry_json_path_push_key(&c->j, "on_failure");
  if (!expt__scenario_client_on_failure(c, of, cl)) return false;
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* "clients": at least one, in document order, names shared with the services. */
bool expt__scenario_parse_clients(scn_ctx *c, json_t *clients) {
  model_config *cfg = c->cfg;
  size_t n = json_is_object(clients) ? json_object_size(clients) : 0;
  if (n == 0) {
    retry_json_fail_value(&c->j, "\"clients\"", "a non-empty object {\"name\": {...}, ...}",
                          clients);
    return false;
  }
  /* Allocated zeroed at its final size; clients are converted in document order, so the
   * error reported is the first one in the file. */
  cfg->clients = expt__scenario_calloc(n, sizeof cfg->clients[0]);
  if (cfg->clients == NULL) return oom(c);
  size_t i = 0;
  for (void *it = json_object_iter(clients); it != NULL;
       it = json_object_iter_next(clients, it), i++) {
    const char *name = json_object_iter_key(it);
    json_t *v = json_object_iter_value(it);
    model_client_cfg *cl = &cfg->clients[i];
    /* Counted before the client is filled, so model_config_destroy frees whatever this
     * client got before a failure. */
    cfg->n_clients = i + 1;
    size_t mark = retry_json_path_push_key(&c->j, name);
    if (!expt__scenario_check_name(c, "client", name)) return false;
    /* One namespace, because a name stands alone in summaries, CSV headers and edges
     * ("web -> api"): expt_output_text.c even tells a client's edges from a service's by
     * looking the name up among the services. */
    if (expt__scenario_service_index(c, name) >= 0) {
      char shown[72];
      retry_json_printable(shown, sizeof shown, name, SCN_NAME_MAX);
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "\"%s\" is already a service's name; services and clients share one "
                      "namespace",
                      shown);
      return false;
    }
    if (!json_is_object(v)) {
      retry_json_fail_value(&c->j, "a client", "an object {\"target\": ..., ...}", v);
      return false;
    }
    cl->name = expt__scenario_strdup(name);
    if (cl->name == NULL) return oom(c);
    if (!parse_client(c, v, cl)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  return true;
}

/* }================================================================== */
