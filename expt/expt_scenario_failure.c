/*
 * expt_scenario_failure.c: a downstream call's "on_failure" (model_on_failure_cfg): which
 * failures it takes (statuses, stop reasons), the slow error path, the cache key deleted and
 * the fallback call with its result. A fallback is a call object like any other, kept in the
 * service's calls after the ones listed (model_call_cfg.fallback_only), so its edge, policy,
 * channel state and counters are a call's.
 */
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario_int.h"

static const char *const on_failure_keys[] = {"statuses", "reasons", "extra_time",
                                              "fallback", "result",  "invalidate"};
/* In the order of model_fallback_result. */
static const char *const result_names[] = {"failure", "fallback", "ok"};

size_t expt__scenario_count_fallbacks(json_t *calls) {
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(calls); i++) {
    json_t *of = json_object_get(json_array_get(calls, i), "on_failure");
    if (json_is_object(of) && json_object_get(of, "fallback") != NULL) n++;
  }
  return n;
}

/* "statuses": a non-empty array of failure statuses in the handler's space (the call's status
 * as its gateway map gives it to the handler). */
static bool parse_statuses(scn_ctx *c, json_t *v, model_on_failure_cfg *of, retry_space space) {
  size_t n = json_is_array(v) ? json_array_size(v) : 0;
  if (n == 0 || n > MODEL_ON_FAILURE_STATUSES_MAX) {
    retry_json_fail_value(&c->j, "\"statuses\"",
                          "an array of 1 to 16 failure statuses of the calling service's space", v);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    size_t mark = retry_json_path_push_index(&c->j, i);
    if (!expt__scenario_status_value(c, json_array_get(v, i), "each status", space, false,
                                     &of->statuses[i]))
      return false;
    retry_json_path_pop(&c->j, mark);
  }
  of->n_statuses = (int)n;
  return true;
}

/* A reason that is no stop reason a failure can have, at the path of it: a misspelling of one
 * gets the nearest name ("max_attempt": did you mean "max_attempts"?), anything else (a
 * non-string, "ok", "cancelled") what is allowed. */
static void reason_error(scn_ctx *c, json_t *v) {
  const char *names[RETRY_STOP_N];
  size_t n = 0;
  for (int k = RETRY_STOP_NON_RETRYABLE_STATUS; k < RETRY_STOP_N; k++)
    if (k != RETRY_STOP_CANCELLED) names[n++] = retry_stop_name((retry_stop)k);
  const char *near =
      json_is_string(v) ? retry_json_suggest(json_string_value(v), names, n, NULL) : NULL;
  if (near == NULL) {
    retry_json_fail_value(&c->j, "each reason",
                          "a stop reason of a failed call, such as \"deadline\" (not \"ok\" "
                          "or \"cancelled\")",
                          v);
    return;
  }
  char shown[48];
  retry_json_printable(shown, sizeof shown, json_string_value(v), 40);
  retry_json_fail(&c->j, RETRY_ECONFIG, "\"%s\" is not a stop reason; did you mean \"%s\"?", shown,
                  near);
}

/* "reasons": a non-empty array of stop reasons (retry_stop_name) other than "ok", "none" and
 * "cancelled" (a call its own handler cancelled is never answered). */
static bool parse_reasons(scn_ctx *c, json_t *v, model_on_failure_cfg *of) {
  size_t n = json_is_array(v) ? json_array_size(v) : 0;
  if (n == 0) {
    retry_json_fail_value(&c->j, "\"reasons\"", "a non-empty array of stop reasons", v);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    const char *name = json_string_value(json_array_get(v, i));
    int r = RETRY_STOP_N;
    for (int k = RETRY_STOP_NON_RETRYABLE_STATUS; name != NULL && k < RETRY_STOP_N; k++)
      if (k != RETRY_STOP_CANCELLED && strcmp(retry_stop_name((retry_stop)k), name) == 0) r = k;
    if (r == RETRY_STOP_N) {
      size_t mark = retry_json_path_push_index(&c->j, i);
      reason_error(c, json_array_get(v, i));
      retry_json_path_pop(&c->j, mark);
      return false;
    }
    of->reasons |= UINT32_C(1) << r;
  }
  return true;
}

/* "fallback": a call object (expt__scenario_call) into svc->calls[slot], with none of the keys
 * that only the handler's own loop reads (a fallback is made once, after a failure). */
static bool parse_fallback(scn_ctx *c, json_t *v, model_service_cfg *svc, size_t slot) {
  static const char *const loop_only[] = {"on_failure", "fanout", "probability", "when_method"};
  svc->n_calls = slot + 1; /* owned from here: destroy frees what the parse stored */
  model_call_cfg *fb = &svc->calls[slot];
  fb->on_failure.fallback = -1;
  if (!expt__scenario_call(c, v, fb, svc)) return false;
  for (size_t i = 0; i < SCN_N_OF(loop_only); i++) {
    if (retry_json_field(v, loop_only[i]) == NULL) continue;
    size_t mark = retry_json_path_push_key(&c->j, loop_only[i]);
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "a fallback is one call made after a failure: \"%s\" is not allowed here",
                    loop_only[i]);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  fb->fallback_only = true;
  return true;
}

bool expt__scenario_parse_on_failure(scn_ctx *c, json_t *v, model_service_cfg *svc, size_t j,
                                     size_t *next_slot) {
  model_on_failure_cfg *of = &svc->calls[j].on_failure;
  of->fallback = -1;
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"on_failure\"",
                          "an object {\"extra_time\", \"fallback\", \"result\", \"invalidate\", "
                          "\"statuses\", \"reasons\"}",
                          v);
    return false;
  }
  if (!retry_json_check_keys(&c->j, v, on_failure_keys, SCN_N_OF(on_failure_keys), NULL))
    return false;
  json_t *x;
  if ((x = retry_json_field(v, "statuses")) != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "statuses");
    if (!parse_statuses(c, x, of, svc->space)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  if ((x = retry_json_field(v, "reasons")) != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "reasons");
    if (!parse_reasons(c, x, of)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  if (expt__scenario_get_duration(c, v, "extra_time", 0, true, SCN_DUR_POS, &of->extra_ns) < 0 ||
      retry_json_get_bool(&c->j, v, "invalidate", &of->invalidate) < 0)
    return false;
  if ((x = retry_json_field(v, "fallback")) != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "fallback");
    of->fallback = (int32_t)*next_slot;
    if (!parse_fallback(c, x, svc, (*next_slot)++)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  int r = of->fallback >= 0 ? MODEL_FALLBACK_USE_FALLBACK : MODEL_FALLBACK_KEEP_FAILURE;
  if (retry_json_get_enum(&c->j, v, "result", result_names, SCN_N_OF(result_names), &r) < 0)
    return false;
  of->result = (model_fallback_result)r;
  if (of->result == MODEL_FALLBACK_USE_FALLBACK && of->fallback < 0) {
    retry_json_fail_field(&c->j, v, "result",
                          "\"failure\" or \"ok\" without a \"fallback\" (\"fallback\" takes the "
                          "fallback call's result)");
    return false;
  }
  /* An on_failure that neither waits, nor calls, nor answers OK, nor deletes changes nothing. */
  if (of->extra_ns == 0 && of->fallback < 0 && of->result == MODEL_FALLBACK_KEEP_FAILURE &&
      !of->invalidate) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"on_failure\" would change nothing: give \"extra_time\", \"fallback\", "
                    "\"invalidate\" or \"result\": \"ok\"");
    return false;
  }
  of->on = true;
  return true;
}

/* Whether a caller can delete a key from service t's cache: t has one, shared by every
 * replica (a caller reaches no replica's in-process cache). */
static bool shared_cache(const model_service_cfg *t) {
  return t->cache.on && t->cache.scope == MODEL_CACHE_SCOPE_SERVICE;
}

/* "invalidate" deletes keys from a cache: the failed call's callee (and the fallback's, when
 * it is called) must have one, of scope "service". Checked once every service is read (a
 * callee's cache may come after its caller in the file). */
bool expt__scenario_check_on_failure(scn_ctx *c) {
  const model_config *cfg = c->cfg;
  for (size_t s = 0; s < cfg->n_services; s++) {
    const model_service_cfg *svc = &cfg->services[s];
    for (size_t j = 0; j < svc->n_calls; j++) {
      const model_on_failure_cfg *of = &svc->calls[j].on_failure;
      if (!of->on || !of->invalidate) continue;
      const model_service_cfg *t = &cfg->services[svc->calls[j].service];
      if (shared_cache(t) &&
          (of->fallback < 0 || !cfg->services[svc->calls[of->fallback].service].cache.on ||
           shared_cache(&cfg->services[svc->calls[of->fallback].service])))
        continue;
      retry_json_path_push_key(&c->j, "services");
      retry_json_path_push_key(&c->j, svc->name);
      retry_json_path_push_key(&c->j, "calls");
      retry_json_path_push_index(&c->j, j);
      retry_json_path_push_key(&c->j, "on_failure");
      retry_json_path_push_key(&c->j, "invalidate");
      if (!t->cache.on)
        retry_json_fail(&c->j, RETRY_ECONFIG,
                        "\"invalidate\" deletes the call's key from its callee's cache, and "
                        "service \"%s\" has no \"cache\"",
                        t->name);
      else
        retry_json_fail(
            &c->j, RETRY_ECONFIG,
            "\"invalidate\" needs a cache its caller reaches: service \"%s\" has "
            "\"scope\": \"replica\" (a cache inside each replica); use \"service\"",
            shared_cache(t) ? cfg->services[svc->calls[of->fallback].service].name : t->name);
      return false;
    }
  }
  return true;
}

/* The fallback is named, as a herd's init call is, by a method slot of the population
 * (model__edge_method) past its counted methods, so nothing that walks the methods sees it;
 * the entry borrows the fallback's name. A herd's init slots come after it
 * (expt_scenario_ops.c). */
static bool fallback_slot(scn_ctx *c, model_client_cfg *cl) {
  model_method_cfg *m = realloc(cl->methods, (cl->n_methods + 1) * sizeof *m);
  if (m == NULL) {
    retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory");
    return false;
  }
  cl->methods = m;
  memset(&m[cl->n_methods], 0, sizeof m[0]);
  m[cl->n_methods].name = cl->on_failure->fallback->method;
  m[cl->n_methods].stream = RETRY_STREAM_UNARY;
  m[cl->n_methods].deadline_ns = RETRY_NEVER;
  cl->on_failure->slot = (int32_t)cl->n_methods;
  return true;
}

/* A client population's "on_failure" (model_client_fallback_cfg): read as a handler's, for a
 * stand-in caller in the population's target's status space, whose one call is the
 * population's call and whose fallback takes the next place; the fallback then moves to the
 * population. "invalidate" is refused: a population has no cache key of its own to delete. */
bool expt__scenario_client_on_failure(scn_ctx *c, json_t *v, model_client_cfg *cl) {
  if (json_is_object(v) && retry_json_field(v, "invalidate") != NULL) {
    retry_json_fail_field(&c->j, v, "invalidate",
                          "absent for a client population: only a service's call looks up a "
                          "cache key another call may delete");
    return false;
  }
  cl->on_failure = expt__scenario_calloc(1, sizeof *cl->on_failure);
  model_service_cfg tmp = {.name = cl->name, .space = c->cfg->services[cl->target].space};
  tmp.calls = expt__scenario_calloc(2, sizeof *tmp.calls);
  if (cl->on_failure == NULL || tmp.calls == NULL) {
    free(tmp.calls);
    retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory");
    return false;
  }
  tmp.n_calls = 1;
  size_t slot = 1;
  bool ok = expt__scenario_parse_on_failure(c, v, &tmp, 0, &slot);
  cl->on_failure->on_failure = tmp.calls[0].on_failure;
  if (tmp.n_calls > 1) { /* the fallback's owned parts move to the population */
    cl->on_failure->fallback = expt__scenario_calloc(1, sizeof *cl->on_failure->fallback);
    if (cl->on_failure->fallback == NULL) {
      free(tmp.calls[1].method);
      retry_config_destroy(tmp.calls[1].policy);
      free(tmp.calls);
      retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory");
      return false;
    }
    *cl->on_failure->fallback = tmp.calls[1];
    cl->on_failure->on_failure.fallback = 0;
  }
  free(tmp.calls);
  if (!ok) return false;
  const model_call_cfg *fb = cl->on_failure->fallback;
  if (fb != NULL && fb->policy != NULL &&
      retry_target_config_has_parts(retry_config_target(fb->policy))) {
    retry_json_path_push_key(&c->j, "fallback");
    retry_json_path_push_key(&c->j, "policy");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "a client's fallback has no channel state: its policy may give attempts, "
                    "hedges and timeouts, not a throttle, budget, breaker or limiter");
    return false;
  }
  /* A call waiting for a blocking limiter's permit waits in its client's queue for the
   * population's edge (model_call.c, waitq_of), which a fallback's call would share. */
  const retry_target_config *tc = cl->policy != NULL ? retry_config_target(cl->policy) : NULL;
  if (fb != NULL && tc != NULL && tc->has_limit && tc->limit.blocking) {
    retry_json_path_push_key(&c->j, "fallback");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "not modelled with a blocking concurrency limiter in the client's policy: "
                    "its calls' queue would hold the fallback's too");
    return false;
  }
  return fb == NULL || fallback_slot(c, cl);
}
