/*
 * expt_scenario_ctl.c: a service's replica control keys (models/model_ctl.h):
 * "outlier_detection" (Envoy's field names and defaults), "health_check", "self_eject",
 * "autoscaler" (Kubernetes HPA) and "scale" (replica counts by hand at given times). Called
 * once per service by parse_service after its calls and faults; fills svc->ctl (allocated here
 * only when one key is present) and refuses a value that could change nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario_int.h"

/* clang-format off */
static const char *const od_keys[] = {
    "interval", "base_ejection_time", "max_ejection_time", "max_ejection_time_jitter",
    "consecutive_5xx", "consecutive_gateway_failure", "consecutive_local_origin_failure",
    "max_ejection_percent", "always_eject_one_host", "enforcing_consecutive_5xx",
    "enforcing_consecutive_gateway_failure", "enforcing_consecutive_local_origin_failure",
    "enforcing_success_rate", "enforcing_local_origin_success_rate",
    "enforcing_failure_percentage", "enforcing_failure_percentage_local_origin",
    "success_rate_minimum_hosts", "success_rate_request_volume", "success_rate_stdev_factor",
    "failure_percentage_threshold", "failure_percentage_minimum_hosts",
    "failure_percentage_request_volume", "split_external_local_origin_errors"};
/* clang-format on */
static const char *const hc_keys[] = {"interval", "timeout", "unhealthy_threshold",
                                      "healthy_threshold"};
static const char *const se_keys[] = {"dependency", "after_failures", "return_after_successes",
                                      "probe_interval"};
static const char *const as_keys[] = {"target_utilization", "min",          "max",
                                      "sync_period",        "tolerance",    "scale_up",
                                      "scale_down",         "startup_delay"};
static const char *const rules_keys[] = {"stabilization_window", "select_policy", "policies"};
static const char *const select_names[] = {"Max", "Min", "Disabled"}; /* model_hpa_select */
static const char *const policy_keys[] = {"type", "value", "period"};
static const char *const policy_names[] = {"Pods", "Percent"}; /* model_hpa_policy_type */
static const char *const scale_keys[] = {"at", "replicas", "startup_delay"};

#define PCT "an integer in [0, 100]"
#define COUNT "an integer in [1, 1000000]"

static bool is_object(scn_ctx *c, json_t *v, const char *label, const char *what) {
  if (json_is_object(v)) return true;
  retry_json_fail_value(&c->j, label, what, v);
  return false;
}

/* {==================================================================
 * outlier_detection
 * =================================================================== */

static bool get_u32(scn_ctx *c, json_t *v, const char *key, int32_t lo, int32_t hi,
                    const char *what, uint32_t *out) {
  int32_t x = (int32_t)*out;
  if (retry_json_get_int32(&c->j, v, key, lo, hi, what, &x) < 0) return false;
  *out = (uint32_t)x;
  return true;
}

static bool parse_outlier_ints(scn_ctx *c, json_t *v, model_eject_cfg *e) {
  return get_u32(c, v, "consecutive_5xx", 1, 1000000, COUNT, &e->consecutive_5xx) &&
         get_u32(c, v, "consecutive_gateway_failure", 1, 1000000, COUNT, &e->consecutive_gateway) &&
         get_u32(c, v, "consecutive_local_origin_failure", 1, 1000000, COUNT,
                 &e->consecutive_local) &&
         get_u32(c, v, "max_ejection_percent", 0, 100, PCT, &e->max_ejection_pct) &&
         get_u32(c, v, "enforcing_consecutive_5xx", 0, 100, PCT, &e->enforcing_5xx) &&
         get_u32(c, v, "enforcing_consecutive_gateway_failure", 0, 100, PCT,
                 &e->enforcing_gateway) &&
         get_u32(c, v, "enforcing_consecutive_local_origin_failure", 0, 100, PCT,
                 &e->enforcing_local) &&
         get_u32(c, v, "enforcing_success_rate", 0, 100, PCT, &e->enforcing_sr) &&
         get_u32(c, v, "enforcing_local_origin_success_rate", 0, 100, PCT,
                 &e->enforcing_sr_local) &&
         get_u32(c, v, "enforcing_failure_percentage", 0, 100, PCT, &e->enforcing_fp) &&
         get_u32(c, v, "enforcing_failure_percentage_local_origin", 0, 100, PCT,
                 &e->enforcing_fp_local) &&
         get_u32(c, v, "success_rate_minimum_hosts", 1, 64, "an integer in [1, 64]",
                 &e->sr_min_hosts) &&
         get_u32(c, v, "success_rate_request_volume", 1, 1000000, COUNT, &e->sr_request_volume) &&
         get_u32(c, v, "success_rate_stdev_factor", 1, 1000000, COUNT, &e->sr_stdev_factor) &&
         get_u32(c, v, "failure_percentage_threshold", 0, 100, PCT, &e->fp_threshold) &&
         get_u32(c, v, "failure_percentage_minimum_hosts", 1, 64, "an integer in [1, 64]",
                 &e->fp_min_hosts) &&
         get_u32(c, v, "failure_percentage_request_volume", 1, 1000000, COUNT,
                 &e->fp_request_volume);
}

/* An error of model_eject_cfg_check or model_hpa_cfg_check at the field its path names after
 * the first dot ("outlier_detection.max_ejection_time"). */
static bool check_failed(scn_ctx *c, const retry_error *err) {
  const char *dot = strchr(err->path, '.');
  size_t mark = retry_json_path_push_key(&c->j, dot != NULL ? dot + 1 : err->path);
  retry_json_fail(&c->j, RETRY_ECONFIG, "%s", err->message);
  retry_json_path_pop(&c->j, mark);
  return false;
}

/* Whether some detector of e may eject: its enforcement percent is above 0. The local-origin
 * detectors see results only when local errors are split from the replies (model_eject.c);
 * Envoy's defaults enforce consecutive 5xx and success rate (100 %), not gateway failures or
 * failure percentage (0 %). */
static bool some_detector_enforces(const model_eject_cfg *e) {
  uint32_t any = e->enforcing_5xx | e->enforcing_gateway | e->enforcing_sr | e->enforcing_fp;
  if (e->split_local) any |= e->enforcing_local | e->enforcing_sr_local | e->enforcing_fp_local;
  return any != 0;
}

static bool parse_outlier(scn_ctx *c, json_t *v, model_ctl_cfg *k, int32_t max_hosts) {
  if (!is_object(c, v, "\"outlier_detection\"", "an object of Envoy's OutlierDetection fields"))
    return false;
  model_eject_cfg *e = &k->outlier;
  bool max_given = retry_json_field(v, "max_ejection_time") != NULL;
  if (!retry_json_check_keys(&c->j, v, od_keys, SCN_N_OF(od_keys), NULL) ||
      expt__scenario_get_duration(c, v, "interval", 0, true, SCN_DUR_POS, &e->interval_ns) < 0 ||
      expt__scenario_get_duration(c, v, "base_ejection_time", 0, true, SCN_DUR_POS,
                                  &e->base_ejection_ns) < 0 ||
      expt__scenario_get_duration(c, v, "max_ejection_time", 0, true, SCN_DUR_POS,
                                  &e->max_ejection_ns) < 0 ||
      expt__scenario_get_duration(c, v, "max_ejection_time_jitter", 0, false, SCN_DUR_NONNEG,
                                  &e->max_jitter_ns) < 0 ||
      !parse_outlier_ints(c, v, e) ||
      retry_json_get_bool(&c->j, v, "always_eject_one_host", &e->always_eject_one_host) < 0 ||
      retry_json_get_bool(&c->j, v, "split_external_local_origin_errors", &e->split_local) < 0)
    return false;
  /* Envoy: max_ejection_time defaults to max(300 s, base_ejection_time). */
  if (!max_given && e->max_ejection_ns < e->base_ejection_ns)
    e->max_ejection_ns = e->base_ejection_ns;
  retry_error err;
  memset(&err, 0, sizeof err);
  if (model_eject_cfg_check(e, &err) != RETRY_OK) return check_failed(c, &err);
  if (!some_detector_enforces(e)) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "each \"enforcing_*\" that applies is 0: no replica could ever be ejected "
                    "(Envoy's defaults enforce consecutive_5xx and success_rate at 100)");
    return false;
  }
  /* With fewer hosts than the percent allows one of, nothing is ever ejected. */
  if (!e->always_eject_one_host && 100 > (int64_t)e->max_ejection_pct * max_hosts) {
    size_t mark = retry_json_path_push_key(&c->j, "max_ejection_percent");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "%u %% of %d replicas is less than one: nothing would ever be ejected (raise "
                    "it to at least %d, or set \"always_eject_one_host\")",
                    (unsigned)e->max_ejection_pct, (int)max_hosts,
                    (int)((100 + max_hosts - 1) / max_hosts));
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  k->outlier_on = true;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * health_check, self_eject
 * =================================================================== */

static bool parse_health(scn_ctx *c, json_t *v, model_ctl_cfg *k) {
  if (!is_object(c, v, "\"health_check\"", "an object {\"interval\": \"10s\", ...}")) return false;
  model_health_cfg *h = &k->health;
  h->on = true;
  return retry_json_check_keys(&c->j, v, hc_keys, SCN_N_OF(hc_keys), NULL) &&
         expt__scenario_get_duration(c, v, "interval", 0, true, SCN_DUR_POS, &h->interval_ns) >=
             0 &&
         expt__scenario_get_duration(c, v, "timeout", 0, true, SCN_DUR_POS, &h->timeout_ns) >= 0 &&
         retry_json_get_int32(&c->j, v, "unhealthy_threshold", 1, 1000000, COUNT, &h->unhealthy) >=
             0 &&
         retry_json_get_int32(&c->j, v, "healthy_threshold", 1, 1000000, COUNT, &h->healthy) >= 0;
}

/* The dependency must be a service this one calls: its calls' failures are what it counts. */
static bool parse_self_eject(scn_ctx *c, json_t *v, model_ctl_cfg *k,
                             const model_service_cfg *svc) {
  if (!is_object(c, v, "\"self_eject\"", "an object {\"dependency\": \"SERVICE\", ...}"))
    return false;
  model_self_eject_cfg *se = &k->self_eject;
  int dep = -1;
  if (!retry_json_check_keys(&c->j, v, se_keys, SCN_N_OF(se_keys), NULL) ||
      !expt__scenario_service_ref(c, v, "dependency", &dep))
    return false;
  bool called = false;
  for (size_t j = 0; j < svc->n_calls; j++)
    called = called || svc->calls[j].service == dep;
  if (!called) {
    size_t mark = retry_json_path_push_key(&c->j, "dependency");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "service \"%s\" does not call \"%s\": a replica counts the failures of its own "
                    "calls to its dependency (name one of its \"calls\")",
                    svc->name, c->cfg->services[dep].name);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  se->dependency = dep;
  se->on = true;
  return retry_json_get_int32(&c->j, v, "after_failures", 1, 1000000, COUNT, &se->after_failures) >=
             0 &&
         retry_json_get_int32(&c->j, v, "return_after_successes", 1, 1000000, COUNT,
                              &se->return_after_successes) >= 0 &&
         expt__scenario_get_duration(c, v, "probe_interval", 0, true, SCN_DUR_POS,
                                     &se->probe_interval_ns) >= 0;
}

/* }================================================================== */

/* {==================================================================
 * autoscaler, scale
 * =================================================================== */

static bool parse_policy(scn_ctx *c, json_t *v, model_hpa_policy *p) {
  if (!is_object(c, v, "each policy",
                 "an object {\"type\": \"Pods\", \"value\": 4, \"period\": \"15s\"}"))
    return false;
  int t = 0;
  if (!retry_json_check_keys(&c->j, v, policy_keys, SCN_N_OF(policy_keys), NULL) ||
      retry_json_require(&c->j, retry_json_get_enum(&c->j, v, "type", policy_names, 2, &t), "type",
                         "\"Pods\" or \"Percent\"") != 1 ||
      retry_json_require(&c->j,
                         retry_json_get_int32(&c->j, v, "value", 1, 1000000, COUNT, &p->value),
                         "value", "replicas or percent per period, an integer >= 1") != 1 ||
      retry_json_require(
          &c->j, expt__scenario_get_duration(c, v, "period", 0, true, SCN_DUR_POS, &p->period_ns),
          "period", "a duration such as \"15s\"") != 1)
    return false;
  p->type = (model_hpa_policy_type)t;
  return true;
}

/* behavior.scaleUp / scaleDown: what is absent keeps Kubernetes' default. */
static bool parse_rules(scn_ctx *c, json_t *v, model_hpa_rules *r) {
  if (!is_object(c, v, "\"scale_up\" or \"scale_down\"",
                 "an object {\"stabilization_window\": ...}"))
    return false;
  int sel = (int)r->select;
  if (!retry_json_check_keys(&c->j, v, rules_keys, SCN_N_OF(rules_keys), NULL) ||
      expt__scenario_get_duration(c, v, "stabilization_window", 0, false, SCN_DUR_NONNEG,
                                  &r->window_ns) < 0 ||
      retry_json_get_enum(&c->j, v, "select_policy", select_names, 3, &sel) < 0)
    return false;
  r->select = (model_hpa_select)sel;
  json_t *list = retry_json_field(v, "policies");
  if (list == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, "policies");
  if (!json_is_array(list) || json_array_size(list) < 1 ||
      json_array_size(list) > MODEL_HPA_MAX_POLICIES) {
    retry_json_fail_value(&c->j, "\"policies\"", "a list of 1 to 4 policies", list);
    return false;
  }
  r->n_policies = (int32_t)json_array_size(list);
  for (size_t i = 0; i < json_array_size(list); i++) {
    size_t m = retry_json_path_push_index(&c->j, i);
    if (!parse_policy(c, json_array_get(list, i), &r->policies[i])) return false;
    retry_json_path_pop(&c->j, m);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

static bool sub_rules(scn_ctx *c, json_t *v, const char *key, model_hpa_rules *r) {
  json_t *x = retry_json_field(v, key);
  if (x == NULL) return true;
  size_t mark = retry_json_path_push_key(&c->j, key);
  if (!parse_rules(c, x, r)) return false;
  retry_json_path_pop(&c->j, mark);
  return true;
}

static bool parse_autoscaler(scn_ctx *c, json_t *v, model_ctl_cfg *k,
                             const model_service_cfg *svc) {
  (void)svc;
  if (!is_object(c, v, "\"autoscaler\"", "an object {\"target_utilization\": 0.6, ...}"))
    return false;
  model_hpa_cfg *h = &k->hpa;
  double target = 0.8, tol = h->tolerance_up;
  if (!retry_json_check_keys(&c->j, v, as_keys, SCN_N_OF(as_keys), NULL) ||
      retry_json_get_number(&c->j, v, "target_utilization", 0, true, 1, false,
                            "a number in (0, 1] (busy workers over workers)", &target) < 0 ||
      retry_json_get_int32(&c->j, v, "min", 1, MODEL_MAX_REPLICAS, "an integer in [1, 64]",
                           &h->min_replicas) < 0 ||
      retry_json_require(&c->j,
                         retry_json_get_int32(&c->j, v, "max", 1, MODEL_MAX_REPLICAS,
                                              "an integer in [1, 64]", &h->max_replicas),
                         "max", "the most replicas, an integer in [1, 64]") != 1 ||
      expt__scenario_get_duration(c, v, "sync_period", 0, true, SCN_DUR_POS, &h->sync_period_ns) <
          0 ||
      retry_json_get_number(&c->j, v, "tolerance", 0, false, 1, true, "a number in [0, 1)", &tol) <
          0 ||
      !sub_rules(c, v, "scale_up", &h->up) || !sub_rules(c, v, "scale_down", &h->down) ||
      expt__scenario_get_duration(c, v, "startup_delay", 0, false, SCN_DUR_NONNEG,
                                  &k->startup_delay_ns) < 0)
    return false;
  if (h->min_replicas > h->max_replicas) {
    size_t mark = retry_json_path_push_key(&c->j, "min");
    retry_json_fail(&c->j, RETRY_ECONFIG, "\"min\" (%d) is above \"max\" (%d)",
                    (int)h->min_replicas, (int)h->max_replicas);
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  h->target_pct = (int32_t)lround(target * 100);
  if (h->target_pct < 1) h->target_pct = 1;
  h->tolerance_up = h->tolerance_down = tol;
  retry_error err;
  memset(&err, 0, sizeof err);
  if (model_hpa_cfg_check(h, &err) != RETRY_OK) return check_failed(c, &err);
  k->autoscaler_on = true;
  if (h->max_replicas > k->replicas_max) k->replicas_max = h->max_replicas;
  return true;
}

/* "scale": [{"at": "60s", "replicas": 8}, ...], in time order, within the run. */
static bool parse_scale(scn_ctx *c, json_t *list, model_ctl_cfg *k) {
  if (!json_is_array(list) || json_array_size(list) < 1 ||
      json_array_size(list) > MODEL_MAX_SCALE_EVENTS) {
    retry_json_fail_value(&c->j, "\"scale\"",
                          "a list of 1 to 16 events {\"at\": \"60s\", \"replicas\": 8}", list);
    return false;
  }
  for (size_t i = 0; i < json_array_size(list); i++) {
    json_t *v = json_array_get(list, i);
    size_t m = retry_json_path_push_index(&c->j, i);
    model_scale_event *e = &k->scale[i];
    if (!is_object(c, v, "each scale event", "an object {\"at\": \"60s\", \"replicas\": 8}") ||
        !retry_json_check_keys(&c->j, v, scale_keys, SCN_N_OF(scale_keys), NULL) ||
        retry_json_require(
            &c->j, expt__scenario_get_duration(c, v, "at", 0, false, SCN_DUR_NONNEG, &e->at_ns),
            "at", "when, a duration from the start such as \"60s\"") != 1 ||
        retry_json_require(&c->j,
                           retry_json_get_int32(&c->j, v, "replicas", 1, MODEL_MAX_REPLICAS,
                                                "an integer in [1, 64]", &e->replicas),
                           "replicas", "the count from then on, an integer in [1, 64]") != 1)
      return false;
    e->startup_delay_ns = -1;
    if (expt__scenario_get_duration(c, v, "startup_delay", 0, false, SCN_DUR_NONNEG,
                                    &e->startup_delay_ns) < 0)
      return false;
    if ((i > 0 && e->at_ns < k->scale[i - 1].at_ns) || e->at_ns >= c->cfg->duration_ns) {
      size_t mk = retry_json_path_push_key(&c->j, "at");
      retry_json_fail(&c->j, RETRY_ECONFIG, "%s",
                      e->at_ns >= c->cfg->duration_ns
                          ? "a scale event after the run's duration could change nothing"
                          : "scale events must be in time order");
      retry_json_path_pop(&c->j, mk);
      return false;
    }
    if (e->replicas > k->replicas_max) k->replicas_max = e->replicas;
    retry_json_path_pop(&c->j, m);
  }
  k->n_scale = (int32_t)json_array_size(list);
  return true;
}

/* }================================================================== */

typedef bool (*part_fn)(scn_ctx *c, json_t *v, model_ctl_cfg *k, const model_service_cfg *svc);

static bool p_outlier(scn_ctx *c, json_t *v, model_ctl_cfg *k, const model_service_cfg *svc) {
  int32_t hosts = k->replicas_max > svc->replicas ? k->replicas_max : svc->replicas;
  return parse_outlier(c, v, k, hosts);
}
static bool p_health(scn_ctx *c, json_t *v, model_ctl_cfg *k, const model_service_cfg *svc) {
  (void)svc;
  return parse_health(c, v, k);
}
static bool p_scale(scn_ctx *c, json_t *v, model_ctl_cfg *k, const model_service_cfg *svc) {
  (void)svc;
  return parse_scale(c, v, k);
}

/* Reads svc's control keys of v (the service's object). The count-changing keys first, so
 * that the outlier detector's percent is judged against the most replicas the run may have. */
bool expt__scenario_parse_ctl(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  static const char *const keys[] = {"autoscaler", "scale", "outlier_detection", "health_check",
                                     "self_eject"};
  static const part_fn parts[] = {parse_autoscaler, p_scale, p_outlier, p_health, parse_self_eject};
  bool any = false;
  for (size_t i = 0; i < SCN_N_OF(keys); i++)
    any = any || retry_json_field(v, keys[i]) != NULL;
  if (!any) return true;
  svc->ctl = calloc(1, sizeof *svc->ctl);
  if (svc->ctl == NULL) {
    retry_json_fail(&c->j, RETRY_ENOMEM, "out of memory");
    return false;
  }
  model_ctl_cfg_default(svc->ctl);
  for (size_t i = 0; i < SCN_N_OF(keys); i++) {
    json_t *x = retry_json_field(v, keys[i]);
    if (x == NULL) continue;
    size_t mark = retry_json_path_push_key(&c->j, keys[i]);
    if (!parts[i](c, x, svc->ctl, svc)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  /* Where the count changes, the replicas configured are the count at the start. */
  if (svc->ctl->replicas_max > 0 && svc->ctl->replicas_max < svc->replicas)
    svc->ctl->replicas_max = svc->replicas;
  return true;
}
