/*
 * expt_scenario_work.c: a service's "work" object (model_work_cfg): the terms by which its
 * service time grows with its replica's state and with time. "per_busy" is the older
 * "slowdown_per_busy" under the object's roof; the service may give one or the other.
 */
#include <string.h>

#include "expt/expt_scenario_int.h"

static const char *const work_keys[] = {"per_busy", "per_queued", "size", "held_limit"};

/* "size": [[D, x], ...], 1 to 32 points of (time, multiplier > 0), times non-decreasing,
 * linear between the points, the first before and the last after, as a rate profile's
 * "points" are. A profile that is 1 everywhere changes nothing and is refused. */
static bool parse_size(scn_ctx *c, json_t *v, model_work_cfg *wk) {
  size_t n = json_is_array(v) ? json_array_size(v) : 0;
  if (n == 0 || n > SIM_PROFILE_MAX_POINTS) {
    retry_json_fail_value(&c->j, "\"size\"",
                          "an array of 1 to 32 points [time, multiplier], such as "
                          "[[\"0s\", 1], [\"60s\", 3]]",
                          v);
    return false;
  }
  bool all_one = true;
  for (size_t i = 0; i < n; i++) {
    json_t *pt = json_array_get(v, i);
    size_t mark = retry_json_path_push_index(&c->j, i);
    json_t *x = json_array_get(pt, 1);
    int64_t t_ns = 0;
    if (!json_is_array(pt) || json_array_size(pt) != 2) {
      retry_json_fail_value(&c->j, "each point of \"size\"",
                            "[time, multiplier] with a duration >= 0 and a number in (0, 1e9]", pt);
      return false;
    }
    /* A point of the right shape with a bad multiplier is named by its own path and value:
     * "got an array" would not say which of the two was wrong. */
    if (!json_is_number(x) || !(json_number_value(x) > 0) || json_number_value(x) > 1e9) {
      retry_json_path_push_index(&c->j, 1);
      retry_json_fail_value(&c->j, "a point's multiplier", "a number in (0, 1e9]", x);
      return false;
    }
    size_t m0 = retry_json_path_push_index(&c->j, 0);
    if (!expt__scenario_duration_value(c, json_array_get(pt, 0), "a point's time", 0, false,
                                       SCN_DUR_NONNEG, &t_ns))
      return false;
    retry_json_path_pop(&c->j, m0);
    if (i > 0 && t_ns < wk->size.t_ns[i - 1]) {
      retry_json_fail(&c->j, RETRY_ECONFIG, "the points of \"size\" must not go back in time");
      return false;
    }
    wk->size.t_ns[i] = t_ns;
    wk->size.rate[i] = json_number_value(x);
    if (wk->size.rate[i] != 1.0) all_one = false;
    retry_json_path_pop(&c->j, mark);
  }
  if (all_one) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"size\" is 1 everywhere and would change nothing: leave it out");
    return false;
  }
  wk->size.n_points = (int)n;
  wk->has_size = true;
  return true;
}

bool expt__scenario_parse_work(scn_ctx *c, json_t *v, model_service_cfg *svc) {
  if (!json_is_object(v) || json_object_size(v) == 0) {
    retry_json_fail_value(&c->j, "\"work\"",
                          "an object with at least one of \"per_busy\", \"per_queued\", "
                          "\"size\" or \"held_limit\"",
                          v);
    return false;
  }
  if (!retry_json_check_keys(&c->j, v, work_keys, SCN_N_OF(work_keys), NULL)) return false;
  model_work_cfg *wk = &svc->work;
  if (retry_json_field(v, "per_busy") != NULL && svc->slowdown_per_busy != 0) {
    size_t mark = retry_json_path_push_key(&c->j, "per_busy");
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "\"per_busy\" is \"slowdown_per_busy\" again: give one of them, not both");
    retry_json_path_pop(&c->j, mark);
    return false;
  }
  if (retry_json_get_number(&c->j, v, "per_busy", 0, true, 1e9, false, "a number in (0, 1e9]",
                            &svc->slowdown_per_busy) < 0 ||
      retry_json_get_number(&c->j, v, "per_queued", 0, true, 1e9, false, "a number in (0, 1e9]",
                            &wk->per_queued) < 0 ||
      retry_json_get_int(&c->j, v, "held_limit", 1, INT64_MAX, "an integer >= 1 (requests)",
                         &wk->held_limit) < 0)
    return false;
  json_t *size = retry_json_field(v, "size");
  if (size != NULL) {
    size_t mark = retry_json_path_push_key(&c->j, "size");
    if (!parse_size(c, size, wk)) return false;
    retry_json_path_pop(&c->j, mark);
  }
  /* Only per_busy given: the older term alone, with its own arithmetic (model_service.c). */
  wk->on = wk->per_queued > 0 || wk->has_size || wk->held_limit > 0;
  return true;
}
