/*
 * expt_scenario_ops.c: the top-level "operators" (rules: when a time-series column holds a
 * condition for a while, do an action) and "events" (an action at a fixed time) of a
 * scenario, into the config's model_ops_cfg (models/model_ops.h). Runs after the clients are
 * read; every name is resolved here, and each rule's column is checked against the columns a
 * world built from this scenario has (a probe world without rules, see check_columns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario_int.h"
#include "models/model_ctl.h"
#include "models/model_ops.h"
#include "models/model_world.h"
#include "sim/sim_event.h"

#define SCN_MAX_OPS 1000 /* rules and events together */

static const char *const action_names[] = {"pause",    "resume", "restart", "flush", "capacity",
                                           "replicas", "shed",   "policy",  "rate"};
static const char *const rule_keys[] = {"name", "when", "do", "once"};
static const char *const when_keys[] = {"column", "above", "below", "for", "after"};
static const char *const init_keys[] = {"service", "method", "policy", "deadline", "network"};
static const char *const backoff_keys[] = {"initial", "max", "multiplier", "jitter", "reset"};
/* Each action's keys, "action" first (an event adds "at" and "name"). */
static const char *const pop_keys[] = {"action", "population", "at", "name"};
static const char *const restart_keys[] = {"action", "population",      "fraction", "spread",
                                           "init",   "restart_backoff", "at",       "name"};
static const char *const flush_keys[] = {"action", "service", "fraction", "at", "name"};
static const char *const capacity_keys[] = {"action", "service", "workers", "at", "name"};
static const char *const replicas_keys[] = {"action", "service", "replicas", "startup_delay",
                                            "at",     "name"};
static const char *const shed_keys[] = {"action", "service", "fraction", "status", "at", "name"};
static const char *const policy_keys[] = {"action", "edge", "policy", "delay", "at", "name"};
static const char *const rate_keys[] = {"action", "population", "factor", "at", "name"};

static bool fail(scn_ctx *c, const char *fmt, const char *a, const char *b) {
  retry_json_fail(&c->j, RETRY_ECONFIG, fmt, a, b);
  return false;
}

/* {==================================================================
 * Actions
 * =================================================================== */

/* The population named by obj["population"], into *out. */
static bool pop_ref(scn_ctx *c, json_t *obj, int *out) {
  const char *name = NULL;
  int rc = retry_json_get_string(&c->j, obj, "population", &name);
  if (retry_json_require(&c->j, rc, "population", "the name of a client population") != 1)
    return false;
  const model_config *cfg = c->cfg;
  for (size_t i = 0; i < cfg->n_clients; i++)
    if (strcmp(cfg->clients[i].name, name) == 0) {
      *out = (int)i;
      return true;
    }
  const char *names[64];
  size_t n = cfg->n_clients < 64 ? cfg->n_clients : 64;
  for (size_t i = 0; i < n; i++)
    names[i] = cfg->clients[i].name;
  const char *near = retry_json_suggest(name, names, n, NULL);
  char shown[48];
  retry_json_printable(shown, sizeof shown, name, 40);
  size_t mark = retry_json_path_push_key(&c->j, "population");
  if (near != NULL)
    retry_json_fail(&c->j, RETRY_ECONFIG, "no client population is named \"%s\"; did you mean \"%s\"?",
                    shown, near);
  else
    retry_json_fail(&c->j, RETRY_ECONFIG, "no client population is named \"%s\"", shown);
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* "restart_backoff": "crashloop", "none" or {"initial", "max", "multiplier", "jitter",
 * "reset"}. */
static bool parse_backoff(scn_ctx *c, json_t *v, model_backoff_cfg *b) {
  size_t mark = retry_json_path_push_key(&c->j, "restart_backoff");
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    if (strcmp(s, "crashloop") == 0 || strcmp(s, "none") == 0) {
      b->kind = s[0] == 'c' ? MODEL_BACKOFF_CRASHLOOP : MODEL_BACKOFF_NONE;
      retry_json_path_pop(&c->j, mark);
      return true;
    }
  }
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"restart_backoff\"",
                          "\"crashloop\" (Kubernetes: 10 s doubling to 5 min), \"none\" or "
                          "{\"initial\": \"1s\", \"max\": \"60s\", \"multiplier\": 2, \"jitter\": 1}",
                          v);
    return false;
  }
  *b = (model_backoff_cfg){MODEL_BACKOFF_CUSTOM, 0, 0, 2.0, 0.0, 600000000000LL};
  if (!retry_json_check_keys(&c->j, v, backoff_keys, SCN_N_OF(backoff_keys), NULL) ||
      retry_json_require(&c->j,
                         expt__scenario_get_duration(c, v, "initial", 0, true, SCN_DUR_POS,
                                                     &b->initial_ns),
                         "initial", SCN_DUR_POS) != 1)
    return false;
  b->max_ns = b->initial_ns;
  if (expt__scenario_get_duration(c, v, "max", 0, true, SCN_DUR_POS, &b->max_ns) < 0 ||
      retry_json_get_number(&c->j, v, "multiplier", 1, false, 1000, false,
                            "a number in [1, 1000]", &b->multiplier) < 0 ||
      retry_json_get_number(&c->j, v, "jitter", 0, false, 1, false,
                            "a number in [0, 1] (1: full jitter)", &b->jitter) < 0 ||
      expt__scenario_get_duration(c, v, "reset", 0, true, SCN_DUR_POS, &b->reset_ns) < 0)
    return false;
  if (b->max_ns < b->initial_ns) {
    retry_json_fail_field(&c->j, v, "max", "a duration >= \"initial\"");
    return false;
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* "init": the call a restarted client makes first. Its policy may not keep channel state:
 * the init call runs without a target (model_herd.c). */
static bool parse_init(scn_ctx *c, json_t *v, int pop, model_ops_cfg *oc, int *out) {
  size_t mark = retry_json_path_push_key(&c->j, "init");
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"init\"",
                          "an object {\"service\": ..., \"method\": \"/pkg.Service/Method\"}", v);
    return false;
  }
  if (!retry_json_check_keys(&c->j, v, init_keys, SCN_N_OF(init_keys), NULL)) return false;
  model_init_cfg *in = &oc->inits[oc->n_inits];
  memset(in, 0, sizeof *in);
  in->pop = pop;
  in->deadline_ns = RETRY_NEVER;
  in->network = c->cfg->clients[pop].network;
  const char *method = NULL;
  if (!expt__scenario_service_ref(c, v, "service", &in->service) ||
      retry_json_require(&c->j, expt__scenario_get_method(c, v, "method", &method), "method",
                         "a full method name \"/package.Service/Method\"") != 1)
    return false;
  in->method = expt__scenario_strdup(method);
  if (in->method == NULL) {
    retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory");
    return false;
  }
  oc->n_inits++; /* owned by oc from here on */
  json_t *pol = retry_json_field(v, "policy");
  if (pol != NULL) {
    size_t m2 = retry_json_path_push_key(&c->j, "policy");
    const char *methods[1] = {in->method};
    if (!expt__scenario_policy_value(c, pol, &in->policy) ||
        !expt__scenario_policy_check_space(c, in->policy, methods, 1, in->service))
      return false;
    if (retry_target_config_has_parts(retry_config_target(in->policy))) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "an init call's policy keeps no channel state: no retryThrottling, "
                      "budget, circuit breaker or limiter (a restarting process starts without "
                      "them)");
      return false;
    }
    retry_json_path_pop(&c->j, m2);
  }
  if (expt__scenario_get_duration(c, v, "deadline", 0, true, SCN_DUR_POS, &in->deadline_ns) < 0 ||
      expt__scenario_get_dist(c, v, "network", &in->network) < 0)
    return false;
  *out = (int)oc->n_inits - 1;
  retry_json_path_pop(&c->j, mark);
  return true;
}

static bool parse_restart(scn_ctx *c, json_t *v, model_action_cfg *a, model_ops_cfg *oc) {
  a->backoff.kind = MODEL_BACKOFF_CRASHLOOP;
  if (retry_json_get_number(&c->j, v, "fraction", 0, true, 1, false, "a number in (0, 1]",
                            &a->fraction) < 0 ||
      expt__scenario_get_duration(c, v, "spread", 0, false, SCN_DUR_NONNEG, &a->spread_ns) < 0)
    return false;
  json_t *init = retry_json_field(v, "init");
  json_t *bo = retry_json_field(v, "restart_backoff");
  if (init != NULL && !parse_init(c, init, a->pop, oc, &a->init)) return false;
  if (bo != NULL && init == NULL) {
    retry_json_fail_field(&c->j, v, "restart_backoff",
                          "given only with \"init\": the backoff follows a failed init call");
    return false;
  }
  return bo == NULL || parse_backoff(c, bo, &a->backoff);
}

/* "replicas": the service runs that many replicas from then on; those added serve after
 * "startup_delay" (default: the service's, from its autoscaler, else 0). The service gets the
 * replica control's config if it had none (only its count changes), with the most replicas
 * the run may have allocated. */
static bool parse_replicas(scn_ctx *c, json_t *obj, model_action_cfg *a) {
  if (!expt__scenario_service_ref(c, obj, "service", &a->service) ||
      retry_json_require(&c->j,
                         retry_json_get_int32(&c->j, obj, "replicas", 1, MODEL_MAX_REPLICAS,
                                              "an integer in [1, 64]", &a->replicas),
                         "replicas", "the service's replica count from then on") != 1)
    return false;
  a->startup_delay_ns = -1;
  if (expt__scenario_get_duration(c, obj, "startup_delay", 0, false, SCN_DUR_NONNEG,
                                  &a->startup_delay_ns) < 0)
    return false;
  model_service_cfg *svc = &c->cfg->services[a->service];
  if (svc->ctl == NULL) {
    svc->ctl = calloc(1, sizeof *svc->ctl); /* freed with the service's config */
    if (svc->ctl == NULL) return fail(c, "out of memory%s%s", "", "");
    model_ctl_cfg_default(svc->ctl);
  }
  int32_t most = a->replicas > svc->replicas ? a->replicas : svc->replicas;
  if (most > svc->ctl->replicas_max) svc->ctl->replicas_max = most;
  return true;
}

/* "shed": the service refuses "fraction" of arriving requests (0 stops shedding) with
 * "status" (default RESOURCE_EXHAUSTED, or 429 for an HTTP service). */
static bool parse_shed(scn_ctx *c, json_t *obj, model_action_cfg *a) {
  if (!expt__scenario_service_ref(c, obj, "service", &a->service)) return false;
  const model_service_cfg *svc = &c->cfg->services[a->service];
  a->status = svc->space == RETRY_SPACE_GRPC ? RETRY_GRPC_RESOURCE_EXHAUSTED : 429;
  a->fraction = -1;
  if (retry_json_require(&c->j,
                         retry_json_get_number(&c->j, obj, "fraction", 0, false, 1, false,
                                               "a number in [0, 1] (0: shedding stops)",
                                               &a->fraction),
                         "fraction", "the share of arriving requests refused, in [0, 1]") != 1)
    return false;
  return expt__scenario_get_status(c, obj, "status", svc->space, false, &a->status) >= 0;
}

/* "edge": "CALLER->CALLEE", a population and its target or a service and one it calls, into
 * a->pop or (a->service, a->callee); *methods (n) receive the methods its calls name. */
static bool parse_edge(scn_ctx *c, json_t *obj, model_action_cfg *a, const char **methods,
                       size_t *n) {
  const char *name = NULL;
  if (retry_json_require(&c->j, retry_json_get_string(&c->j, obj, "edge", &name), "edge",
                         "\"CALLER->CALLEE\": a client population or a service, and a "
                         "service it calls") != 1)
    return false;
  const char *arrow = strstr(name, "->");
  const model_config *cfg = c->cfg;
  size_t len = arrow != NULL ? (size_t)(arrow - name) : 0;
  int callee = -1;
  for (size_t i = 0; arrow != NULL && i < cfg->n_services; i++)
    if (strcmp(cfg->services[i].name, arrow + 2) == 0) callee = (int)i;
  *n = 0;
  for (size_t p = 0; callee >= 0 && p < cfg->n_clients; p++) {
    const model_client_cfg *cl = &cfg->clients[p];
    if (strlen(cl->name) != len || strncmp(cl->name, name, len) != 0 || cl->target != callee)
      continue;
    a->pop = (int)p;
    for (size_t j = 0; j < cl->n_methods && *n < 64; j++)
      methods[(*n)++] = cl->methods[j].name;
  }
  for (size_t s = 0; callee >= 0 && a->pop < 0 && s < cfg->n_services; s++) {
    const model_service_cfg *sv = &cfg->services[s];
    if (strlen(sv->name) != len || strncmp(sv->name, name, len) != 0) continue;
    for (size_t j = 0; j < sv->n_calls && *n < 64; j++)
      if (sv->calls[j].service == callee) {
        a->service = (int)s;
        methods[(*n)++] = sv->calls[j].method;
      }
  }
  a->callee = callee;
  if (*n > 0) return true;
  char shown[80];
  retry_json_printable(shown, sizeof shown, name, 64);
  size_t mark = retry_json_path_push_key(&c->j, "edge");
  retry_json_fail(&c->j, RETRY_ECONFIG,
                  "no edge \"%s\": give \"CALLER->CALLEE\", a client population and its target, "
                  "or a service and a service its handler calls",
                  shown);
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* "policy": the edge's calls started "delay" (default 0) after the action take this policy
 * (an object or a file's name, as any policy of the scenario). It may not carry channel state
 * (the channel keeps its own: model_operator.c). */
static bool parse_policy(scn_ctx *c, json_t *obj, model_action_cfg *a) {
  const char *methods[64];
  size_t n = 0;
  if (!parse_edge(c, obj, a, methods, &n)) return false;
  json_t *pol = retry_json_field(obj, "policy");
  if (pol == NULL)
    return retry_json_require(&c->j, 0, "policy", "the policy pushed to the edge") == 1;
  size_t mark = retry_json_path_push_key(&c->j, "policy");
  if (!expt__scenario_policy_value(c, pol, &a->policy) ||
      !expt__scenario_policy_check_space(c, a->policy, methods, n, a->callee))
    return false;
  if (retry_target_config_has_parts(retry_config_target(a->policy)))
    return fail(c, "a pushed policy changes the calls' method configs only: no "
                   "retryThrottling, budget, circuit breaker or limiter (the channel keeps its "
                   "own state and its own parameters)%s%s", "", "");
  retry_json_path_pop(&c->j, mark);
  return expt__scenario_get_duration(c, obj, "delay", 0, false, SCN_DUR_NONNEG, &a->delay_ns) >= 0;
}

/* "rate": an open-loop population's arrival rate is multiplied by "factor" in (0, 1] from
 * the next arrival on (1 restores it; a factor of 0 is a pause). A closed-loop or scripted
 * population is refused: its calls follow its own think times and replies, so a rate is not
 * its to lower (pause it, or restart it, instead). */
static bool parse_rate(scn_ctx *c, json_t *obj, model_action_cfg *a) {
  if (!pop_ref(c, obj, &a->pop)) return false;
  const model_client_cfg *cl = &c->cfg->clients[a->pop];
  if (cl->loop != MODEL_LOOP_OPEN) {
    retry_json_fail_field(&c->j, obj, "population",
                          "an open-loop population: a rate action scales arrivals, and a "
                          "closed-loop or scripted one has none (pause or restart it instead)");
    return false;
  }
  a->fraction = -1;
  return retry_json_require(&c->j,
                            retry_json_get_number(&c->j, obj, "factor", 0, true, 1, false,
                                                  "a number in (0, 1] (1: the rate restored; "
                                                  "for 0 use \"pause\")",
                                                  &a->fraction),
                            "factor", "the arrival rate's multiplier, in (0, 1]") == 1;
}

/* An action's keys in obj (a rule's "do", or an event itself: allow_event). */
static bool parse_action(scn_ctx *c, json_t *obj, bool event, model_action_cfg *a,
                         model_ops_cfg *oc) {
  memset(a, 0, sizeof *a);
  a->pop = a->service = a->init = -1;
  a->fraction = 1;
  int kind = 0;
  if (retry_json_require(&c->j,
                         retry_json_get_enum(&c->j, obj, "action", action_names,
                                             SCN_N_OF(action_names), &kind),
                         "action",
                         "one of \"pause\", \"resume\", \"restart\", \"flush\", \"capacity\", "
                         "\"replicas\", \"shed\", \"policy\", \"rate\"") != 1)
    return false;
  a->kind = (model_action_kind)kind;
  const char *const *keys = pop_keys;
  size_t n = SCN_N_OF(pop_keys);
  if (a->kind == MODEL_ACTION_RESTART) keys = restart_keys, n = SCN_N_OF(restart_keys);
  if (a->kind == MODEL_ACTION_FLUSH) keys = flush_keys, n = SCN_N_OF(flush_keys);
  if (a->kind == MODEL_ACTION_CAPACITY) keys = capacity_keys, n = SCN_N_OF(capacity_keys);
  if (a->kind == MODEL_ACTION_REPLICAS) keys = replicas_keys, n = SCN_N_OF(replicas_keys);
  if (a->kind == MODEL_ACTION_SHED) keys = shed_keys, n = SCN_N_OF(shed_keys);
  if (a->kind == MODEL_ACTION_POLICY) keys = policy_keys, n = SCN_N_OF(policy_keys);
  if (a->kind == MODEL_ACTION_RATE) keys = rate_keys, n = SCN_N_OF(rate_keys);
  if (!event) n -= 2; /* "at" and "name" belong to the rule, not its "do" */
  if (!retry_json_check_keys(&c->j, obj, keys, n, NULL)) return false;
  switch (a->kind) {
    case MODEL_ACTION_PAUSE:
    case MODEL_ACTION_RESUME: return pop_ref(c, obj, &a->pop);
    case MODEL_ACTION_RESTART: return pop_ref(c, obj, &a->pop) && parse_restart(c, obj, a, oc);
    case MODEL_ACTION_FLUSH:
      if (!expt__scenario_service_ref(c, obj, "service", &a->service)) return false;
      if (!c->cfg->services[a->service].cache.on)
        return fail(c, "service \"%s\" has no look-aside cache to flush%s",
                    c->cfg->services[a->service].name, "");
      return retry_json_get_number(&c->j, obj, "fraction", 0, true, 1, false,
                                   "a number in (0, 1]", &a->fraction) >= 0;
    case MODEL_ACTION_CAPACITY:
      return expt__scenario_service_ref(c, obj, "service", &a->service) &&
             retry_json_require(&c->j,
                                retry_json_get_int32(&c->j, obj, "workers", 1, SCN_MAX_WORKERS,
                                                     "an integer in [1, 1000000]", &a->workers),
                                "workers", "the workers per replica from then on") == 1;
    case MODEL_ACTION_REPLICAS: return parse_replicas(c, obj, a);
    case MODEL_ACTION_SHED: return parse_shed(c, obj, a);
    case MODEL_ACTION_POLICY: return parse_policy(c, obj, a);
    case MODEL_ACTION_RATE: return parse_rate(c, obj, a);
  }
  return false;
}

/* }================================================================== */

/* {==================================================================
 * Rules and events
 * =================================================================== */

static bool parse_when(scn_ctx *c, json_t *v, model_when_cfg *w) {
  size_t mark = retry_json_path_push_key(&c->j, "when");
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "\"when\"",
                          "an object {\"column\": \"api_queue\", \"above\": 100, \"for\": \"10s\"}",
                          v);
    return false;
  }
  const char *col = NULL;
  if (!retry_json_check_keys(&c->j, v, when_keys, SCN_N_OF(when_keys), NULL) ||
      retry_json_require(&c->j, retry_json_get_string(&c->j, v, "column", &col), "column",
                         "a column of timeseries.csv (\"api_queue\", \"goodput_rps\", ...)") != 1)
    return false;
  w->column = expt__scenario_strdup(col);
  if (w->column == NULL) return fail(c, "out of memory%s%s", "", "");
  bool has_above = retry_json_field(v, "above") != NULL;
  bool has_below = retry_json_field(v, "below") != NULL;
  if (has_above == has_below)
    return fail(c, "\"when\" needs exactly one of \"above\" and \"below\"%s%s", "", "");
  w->above = has_above;
  if (retry_json_get_number(&c->j, v, has_above ? "above" : "below", -1e300, false, 1e300, false,
                            "a number", &w->value) < 0 ||
      expt__scenario_get_duration(c, v, "for", 0, false, SCN_DUR_NONNEG, &w->for_ns) < 0 ||
      expt__scenario_get_duration(c, v, "after", 0, false, SCN_DUR_NONNEG, &w->after_ns) < 0)
    return false;
  /* Rules are read at every bucket's end up to the drain's, so a streak lasts at most
   * duration + drain: a longer "for" could never be met, and a rule that can never fire is
   * refused as any value that cannot change anything. (Written as a difference: no overflow.) */
  const model_config *cfg = c->cfg;
  if (w->for_ns > cfg->duration_ns && w->for_ns - cfg->duration_ns > cfg->drain_ns) {
    retry_json_fail_field(&c->j, v, "for",
                          "at most the run's length (duration + drain): the condition could "
                          "never hold that long, and the rule would never fire");
    return false;
  }
  /* The same for "after": a condition armed only after the run's last bucket never holds. */
  if (w->after_ns >= cfg->duration_ns && w->after_ns - cfg->duration_ns >= cfg->drain_ns) {
    retry_json_fail_field(&c->j, v, "after",
                          "before the run's end (duration + drain): from then on no bucket is "
                          "read, and the rule would never fire");
    return false;
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* A default name: "operators[i]" or "events[i]". */
static bool set_name(scn_ctx *c, json_t *v, const char *key, size_t i, char **out) {
  const char *name = NULL;
  if (retry_json_get_string(&c->j, v, "name", &name) < 0) return false;
  char buf[40];
  if (name == NULL) {
    snprintf(buf, sizeof buf, "%s[%zu]", key, i);
    name = buf;
  } else if (!expt__scenario_check_name(c, key[0] == 'o' ? "operator" : "event", name)) {
    return false;
  }
  *out = expt__scenario_strdup(name);
  return *out != NULL || fail(c, "out of memory%s%s", "", "");
}

static bool parse_rule(scn_ctx *c, json_t *v, size_t i, model_operator_cfg *op, model_ops_cfg *oc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "each operator",
                          "an object {\"when\": {...}, \"do\": {\"action\": ...}}", v);
    return false;
  }
  op->has_when = true;
  if (!retry_json_check_keys(&c->j, v, rule_keys, SCN_N_OF(rule_keys), NULL) ||
      !set_name(c, v, "operators", i, &op->name) ||
      retry_json_get_bool(&c->j, v, "once", &op->once) < 0)
    return false;
  json_t *when = retry_json_field(v, "when"), *act = retry_json_field(v, "do");
  if (when == NULL) return retry_json_require(&c->j, 0, "when", "the rule's condition") == 1;
  if (act == NULL) return retry_json_require(&c->j, 0, "do", "the rule's action") == 1;
  if (!parse_when(c, when, &op->when)) return false;
  size_t mark = retry_json_path_push_key(&c->j, "do");
  if (!json_is_object(act)) {
    retry_json_fail_value(&c->j, "\"do\"", "an object {\"action\": \"pause\", ...}", act);
    return false;
  }
  if (!parse_action(c, act, false, &op->action, oc)) return false;
  retry_json_path_pop(&c->j, mark);
  return true;
}

static bool parse_event(scn_ctx *c, json_t *v, size_t i, model_operator_cfg *op, model_ops_cfg *oc) {
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, "each event",
                          "an object {\"at\": \"30s\", \"action\": \"restart\", ...}", v);
    return false;
  }
  if (!set_name(c, v, "events", i, &op->name) ||
      retry_json_require(&c->j,
                         expt__scenario_get_duration(c, v, "at", 0, false, SCN_DUR_NONNEG, &op->at_ns),
                         "at", "when the action runs, a duration >= 0 such as \"30s\"") != 1)
    return false;
  if (op->at_ns >= c->cfg->duration_ns) {
    retry_json_fail_field(&c->j, v, "at", "a time before the scenario's duration");
    return false;
  }
  return parse_action(c, v, true, &op->action, oc);
}

/* Every operator's and event's entries of one top-level key into oc->ops[oc->n_ops ...]. */
static bool parse_list(scn_ctx *c, json_t *doc, const char *key, model_ops_cfg *oc, bool rules) {
  json_t *list = retry_json_field(doc, key);
  if (list == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, key);
  if (!json_is_array(list) || json_array_size(list) == 0 ||
      oc->n_ops + json_array_size(list) > SCN_MAX_OPS) {
    retry_json_fail_value(&c->j, key[0] == 'o' ? "\"operators\"" : "\"events\"",
                          "a non-empty array (at most 1000 operators and events)", list);
    return false;
  }
  for (size_t i = 0; i < json_array_size(list); i++) {
    size_t m2 = retry_json_path_push_index(&c->j, i);
    model_operator_cfg *op = &oc->ops[oc->n_ops++];
    bool ok = rules ? parse_rule(c, json_array_get(list, i), i, op, oc)
                    : parse_event(c, json_array_get(list, i), i, op, oc);
    if (!ok) return false;
    retry_json_path_pop(&c->j, m2);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Names the world resolves: init methods and rules' columns
 * =================================================================== */

/* An init call is named, like any call of a population, by a method slot of the population
 * (model__edge_method): its method's entry goes past the population's counted methods, so
 * nothing that walks the methods sees it. The entry borrows the init's name. */
static bool assign_slots(scn_ctx *c, model_ops_cfg *oc) {
  for (size_t p = 0; p < c->cfg->n_clients; p++) {
    model_client_cfg *cl = &c->cfg->clients[p];
    size_t extra = 0;
    for (size_t k = 0; k < oc->n_inits; k++)
      extra += oc->inits[k].pop == (int)p;
    if (extra == 0) continue;
    /* past the population's own fallback's slot, when it has one (expt_scenario_failure.c) */
    size_t base = cl->n_methods + (cl->on_failure != NULL && cl->on_failure->fallback != NULL);
    model_method_cfg *m = realloc(cl->methods, (base + extra) * sizeof *m);
    if (m == NULL) return fail(c, "out of memory%s%s", "", "");
    cl->methods = m;
    size_t j = base;
    for (size_t k = 0; k < oc->n_inits; k++) {
      if (oc->inits[k].pop != (int)p) continue;
      memset(&m[j], 0, sizeof m[j]);
      m[j].name = oc->inits[k].method;
      m[j].weight = 0;
      m[j].stream = RETRY_STREAM_UNARY;
      m[j].deadline_ns = RETRY_NEVER;
      oc->inits[k].slot = (int32_t)j++;
    }
  }
  return true;
}

/* Reports rule i's unknown column, with the nearest name. */
static bool column_error(scn_ctx *c, size_t i, const char *col, const char *const *names,
                         size_t n) {
  size_t m1 = retry_json_path_push_key(&c->j, "operators");
  size_t m2 = retry_json_path_push_index(&c->j, i);
  size_t m3 = retry_json_path_push_key(&c->j, "when");
  size_t m4 = retry_json_path_push_key(&c->j, "column");
  char shown[80];
  retry_json_printable(shown, sizeof shown, col, 64);
  const char *near = retry_json_suggest(col, names, n, NULL);
  if (near != NULL)
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "no time-series column is named \"%s\"; did you mean \"%s\"?", shown, near);
  else
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "no time-series column is named \"%s\" (the columns are timeseries.csv's: "
                    "goodput_rps, <service>_queue, ...)",
                    shown);
  retry_json_path_pop(&c->j, m4);
  retry_json_path_pop(&c->j, m3);
  retry_json_path_pop(&c->j, m2);
  retry_json_path_pop(&c->j, m1);
  return false;
}

/* Every rule's column against the columns of a world built from the scenario: a probe with
 * one client a population and caches of one entry (columns do not depend on either), without
 * the rules themselves; the herds' <pop>_clients_up columns are the events' and the rules'
 * populations' (a probe without rules may not have them all). Costs one small world a load. */
static bool check_columns(scn_ctx *c, model_ops_cfg *oc) {
  if (oc->n_rules == 0) return true;
  const model_config *cfg = c->cfg;
  model_config probe = *cfg;
  model_ops_cfg po = *oc;
  po.ops = oc->ops + oc->n_rules;
  po.n_ops = oc->n_ops - oc->n_rules;
  po.n_rules = 0;
  probe.ops = po.n_ops > 0 ? &po : NULL;
  model_client_cfg *cls = malloc(cfg->n_clients * sizeof *cls);
  model_service_cfg *svs = malloc(cfg->n_services * sizeof *svs);
  sim_kernel *k = sim_kernel_create(64, NULL);
  model_world *w = NULL;
  const char **names = NULL;
  bool ok = false;
  if (cls == NULL || svs == NULL || k == NULL) goto done;
  memcpy(cls, cfg->clients, cfg->n_clients * sizeof *cls);
  memcpy(svs, cfg->services, cfg->n_services * sizeof *svs);
  for (size_t i = 0; i < cfg->n_clients; i++)
    cls[i].count = 1;
  for (size_t i = 0; i < cfg->n_services; i++)
    if (svs[i].cache.on) svs[i].cache.capacity = 1;
  probe.clients = cls;
  probe.services = svs;
  retry_error err;
  w = model_world_create(&probe, k, 1, &err);
  if (w == NULL) goto done;
  const model_timeseries *ts = &model_world_results(w)->ts;
  size_t n = ts->n_columns;
  names = malloc((n + cfg->n_clients + 1) * sizeof *names);
  if (names == NULL) goto done;
  for (size_t i = 0; i < n; i++)
    names[i] = ts->names[i];
  char(*up)[SCN_NAME_MAX + 16] = malloc((cfg->n_clients + 1) * sizeof *up);
  if (up == NULL) goto done;
  for (size_t p = 0; p < cfg->n_clients; p++) {
    bool herded = false;
    for (size_t i = 0; i < oc->n_ops; i++)
      herded |=
          oc->ops[i].action.pop == (int)p && (oc->ops[i].action.kind <= MODEL_ACTION_RESTART ||
                                              oc->ops[i].action.kind == MODEL_ACTION_RATE);
    if (!herded) continue;
    snprintf(up[p], sizeof up[p], "%s_clients_up", cfg->clients[p].name);
    names[n++] = up[p];
  }
  ok = true;
  for (size_t i = 0; ok && i < oc->n_rules; i++) {
    const char *col = oc->ops[i].when.column;
    bool found = false;
    for (size_t j = 0; j < n && !found; j++)
      found = strcmp(names[j], col) == 0;
    if (!found) ok = column_error(c, i, col, names, n);
  }
  free(up);
done:
  if (!ok && !retry_json_failed(&c->j)) fail(c, "out of memory checking the operators%s%s", "", "");
  free(names);
  model_world_destroy(w);
  sim_kernel_destroy(k);
  free(cls);
  free(svs);
  return ok;
}

/* }================================================================== */

bool expt__scenario_parse_ops(scn_ctx *c, json_t *doc) {
  json_t *rules = retry_json_field(doc, "operators"), *events = retry_json_field(doc, "events");
  if (rules == NULL && events == NULL) return true;
  size_t total = json_array_size(rules) + json_array_size(events);
  if (total > SCN_MAX_OPS) total = SCN_MAX_OPS; /* parse_list refuses more before writing */
  model_ops_cfg *oc = expt__scenario_calloc(1, sizeof *oc);
  if (oc == NULL) return fail(c, "out of memory%s%s", "", "");
  c->cfg->ops = oc; /* the config owns it from here on, on every path */
  oc->ops = expt__scenario_calloc(total + 1, sizeof *oc->ops);
  oc->inits = expt__scenario_calloc(total + 1, sizeof *oc->inits);
  if (oc->ops == NULL || oc->inits == NULL) return fail(c, "out of memory%s%s", "", "");
  if (!parse_list(c, doc, "operators", oc, true)) return false;
  oc->n_rules = oc->n_ops;
  return parse_list(c, doc, "events", oc, false) && assign_slots(c, oc) && check_columns(c, oc);
}
