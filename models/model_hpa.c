/*
 * model_hpa.c: the Horizontal Pod Autoscaler's decision (models/model_hpa.h has the contract
 * and the sources). It owns one block: the controller, its recommendation history and its
 * scale-up and scale-down event histories, each an array sized at creation from the longest
 * window over the sync period. Invariant: a sync touches only that block and allocates nothing.
 *
 * Floating point follows the Go code's operations one for one (the same products, the same
 * ceil and truncations on float64), so the rounding at the edges is the controller's.
 */
#include "models/model_hpa.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* {==================================================================
 * The object and its histories
 * =================================================================== */

typedef struct hpa_rec {
  int32_t replicas; /* an unstabilized recommendation */
  int64_t at_ns;    /* when it was made */
} hpa_rec;

typedef struct hpa_event {
  int32_t change; /* replicas added (up list) or removed (down list), > 0 */
  int64_t at_ns;  /* when the count was changed */
  bool outdated;  /* older than the direction's longest policy period at the last store */
} hpa_event;

/* A bounded list: Kubernetes appends unless a stale slot can be reused, and with syncs at
 * least sync_period_ns apart at most (window / period + 2) entries are ever live, so cap is
 * that plus one. Were the caller to sync faster, the oldest entry is overwritten instead of
 * growing (a documented deviation that a regular caller never reaches). */
typedef struct hpa_list {
  int32_t n, cap;
} hpa_list;

struct model_hpa {
  model_hpa_cfg cfg;
  retry_allocator alloc;
  int32_t replicas;  /* the target's spec.replicas */
  bool have_initial; /* the initial recommendation was recorded */
  hpa_list recs_n, ups_n, downs_n;
  hpa_rec *recs;
  hpa_event *ups, *downs;
  model_hpa_stats stats;
};

static int64_t longest_period_ns(const model_hpa_rules *r) {
  int64_t longest = 0;
  for (int32_t i = 0; i < r->n_policies; i++)
    if (r->policies[i].period_ns > longest) longest = r->policies[i].period_ns;
  return longest;
}

/* Entries a window of window_ns holds with syncs every period_ns, plus slack for the entry
 * being stored and one at the exact cutoff. */
static int32_t list_cap(int64_t window_ns, int64_t period_ns) {
  int64_t n = window_ns / period_ns + 3;
  return n > 1000000 ? 1000000 : (int32_t)n;
}

/* }================================================================== */

/* {==================================================================
 * Configuration
 * =================================================================== */

void model_hpa_cfg_default(model_hpa_cfg *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->min_replicas = 1;
  cfg->max_replicas = 10;
  cfg->target_pct = 80;
  cfg->sync_period_ns = MODEL_HPA_DEFAULT_SYNC_NS;
  cfg->tolerance_up = MODEL_HPA_DEFAULT_TOLERANCE;
  cfg->tolerance_down = MODEL_HPA_DEFAULT_TOLERANCE;
  cfg->legacy = false;
  cfg->legacy_down_window_ns = MODEL_HPA_DEFAULT_DOWN_WINDOW_NS;
  /* defaults.go: scale up by the larger of 4 pods and 100 % every 15 s, no window. */
  cfg->up.window_ns = 0;
  cfg->up.select = MODEL_HPA_SELECT_MAX;
  cfg->up.n_policies = 2;
  cfg->up.policies[0] = (model_hpa_policy){MODEL_HPA_PODS, 4, MODEL_HPA_DEFAULT_SYNC_NS};
  cfg->up.policies[1] = (model_hpa_policy){MODEL_HPA_PERCENT, 100, MODEL_HPA_DEFAULT_SYNC_NS};
  /* Scale down by up to 100 % every 15 s, after the controller's 300 s window. */
  cfg->down.window_ns = MODEL_HPA_DEFAULT_DOWN_WINDOW_NS;
  cfg->down.select = MODEL_HPA_SELECT_MAX;
  cfg->down.n_policies = 1;
  cfg->down.policies[0] = (model_hpa_policy){MODEL_HPA_PERCENT, 100, MODEL_HPA_DEFAULT_SYNC_NS};
}

static int bad(retry_error *err, const char *path, const char *msg) {
  retry_error_set(err, RETRY_ECONFIG, NULL, path, -1, -1, "%s", msg);
  return RETRY_ECONFIG;
}

static int check_rules(const model_hpa_rules *r, const char *path, retry_error *err) {
  if (r->window_ns < 0) return bad(err, path, "stabilization window must be >= 0");
  if (r->select != MODEL_HPA_SELECT_MAX && r->select != MODEL_HPA_SELECT_MIN &&
      r->select != MODEL_HPA_SELECT_DISABLED)
    return bad(err, path, "select must be Max, Min or Disabled");
  if (r->select == MODEL_HPA_SELECT_DISABLED) return RETRY_OK;
  if (r->n_policies < 1 || r->n_policies > MODEL_HPA_MAX_POLICIES)
    return bad(err, path, "between 1 and 4 policies");
  for (int32_t i = 0; i < r->n_policies; i++) {
    const model_hpa_policy *p = &r->policies[i];
    if ((p->type != MODEL_HPA_PODS && p->type != MODEL_HPA_PERCENT) || p->value <= 0 ||
        p->period_ns <= 0)
      return bad(err, path, "a policy needs a type, a value > 0 and a period > 0");
  }
  return RETRY_OK;
}

int model_hpa_cfg_check(const model_hpa_cfg *cfg, retry_error *err) {
  if (cfg->min_replicas < 1) return bad(err, "hpa.min_replicas", "must be >= 1");
  if (cfg->max_replicas < cfg->min_replicas)
    return bad(err, "hpa.max_replicas", "must be >= min_replicas");
  if (cfg->target_pct <= 0) return bad(err, "hpa.target_pct", "must be > 0 (percent)");
  if (cfg->sync_period_ns <= 0) return bad(err, "hpa.sync_period_ns", "must be > 0");
  if (!(cfg->tolerance_up >= 0) || !(cfg->tolerance_down >= 0))
    return bad(err, "hpa.tolerance", "must be >= 0");
  if (cfg->legacy)
    return cfg->legacy_down_window_ns >= 0 ? RETRY_OK
                                           : bad(err, "hpa.legacy_down_window_ns", "must be >= 0");
  int rc = check_rules(&cfg->up, "hpa.behavior.scaleUp", err);
  return rc != RETRY_OK ? rc : check_rules(&cfg->down, "hpa.behavior.scaleDown", err);
}

/* }================================================================== */

/* {==================================================================
 * Life cycle
 * =================================================================== */

model_hpa *model_hpa_create(const model_hpa_cfg *cfg, int32_t replicas,
                            const retry_allocator *alloc, retry_error *err) {
  if (model_hpa_cfg_check(cfg, err) != RETRY_OK) return NULL;
  retry_allocator a;
  retry_allocator_resolve(alloc, &a);
  int64_t rec_window =
      cfg->legacy
          ? cfg->legacy_down_window_ns
          : (cfg->up.window_ns > cfg->down.window_ns ? cfg->up.window_ns : cfg->down.window_ns);
  int32_t n_recs = list_cap(rec_window, cfg->sync_period_ns);
  int32_t n_ups = cfg->legacy ? 0 : list_cap(longest_period_ns(&cfg->up), cfg->sync_period_ns);
  int32_t n_downs = cfg->legacy ? 0 : list_cap(longest_period_ns(&cfg->down), cfg->sync_period_ns);
  size_t size = sizeof(model_hpa) + (size_t)n_recs * sizeof(hpa_rec) +
                (size_t)(n_ups + n_downs) * sizeof(hpa_event);
  model_hpa *h = a.malloc_fn(size, a.ctx);
  if (h == NULL) {
    retry_error_set(err, RETRY_ENOMEM, NULL, NULL, -1, -1, "out of memory creating an HPA");
    return NULL;
  }
  memset(h, 0, size);
  h->cfg = *cfg;
  h->alloc = a;
  h->replicas = replicas < 0 ? 0 : replicas;
  /* The arrays follow the struct; hpa_rec and hpa_event both align to int64_t, as does it. */
  h->recs = (hpa_rec *)(void *)(h + 1);
  h->ups = (hpa_event *)(void *)(h->recs + n_recs);
  h->downs = h->ups + n_ups;
  h->recs_n.cap = n_recs;
  h->ups_n.cap = n_ups;
  h->downs_n.cap = n_downs;
  h->stats.last_util_pct = -1;
  return h;
}

void model_hpa_destroy(model_hpa *h) {
  if (h != NULL) h->alloc.free_fn(h, h->alloc.ctx);
}

void model_hpa_set_replicas(model_hpa *h, int32_t replicas) {
  assert(h != NULL);
  h->replicas = replicas < 0 ? 0 : replicas;
}

int32_t model_hpa_replicas(const model_hpa *h) { return h->replicas; }

const model_hpa_stats *model_hpa_get_stats(const model_hpa *h) { return &h->stats; }

/* }================================================================== */

/* {==================================================================
 * The replica calculator (replica_calculator.go, GetResourceReplicas)
 * =================================================================== */

static bool within(const model_hpa_cfg *cfg, double ratio) {
  return 1.0 - cfg->tolerance_down <= ratio && ratio <= 1.0 + cfg->tolerance_up;
}

/* Kubernetes sums integer milli-values and divides: int32(total * 100 / requests). A tiny
 * epsilon keeps 0.1 + 0.2 busy from truncating to 29 % where the integers give 30 %. */
static int32_t util_pct_of(double busy_sum, int32_t n) {
  double pct = floor(100.0 * busy_sum / (double)n + 1e-9);
  return pct > 2e9 ? 2000000000 : (int32_t)pct;
}

int32_t model_hpa_recommend(const model_hpa_cfg *cfg, int32_t current, const model_hpa_sample *s,
                            int32_t *util_pct) {
  if (util_pct != NULL) *util_pct = -1;
  if (s->n_ready <= 0) /* "did not receive metrics for any ready pods": no decision */
    return current;
  int32_t util = util_pct_of(s->busy_sum, s->n_ready);
  if (util_pct != NULL) *util_pct = util;
  double ratio = (double)util / (double)cfg->target_pct;
  bool up_with_unready = s->n_unready > 0 && ratio > 1.0;
  if (!up_with_unready && s->n_missing == 0) {
    if (within(cfg, ratio)) return current;
    return (int32_t)ceil(ratio * (double)s->n_ready);
  }
  /* The conservative re-run: missing replicas at max(100 %, target) when shrinking and 0 %
   * when growing; starting replicas at 0 % when growing (they were left out otherwise). */
  double busy = s->busy_sum;
  int32_t n = s->n_ready;
  if (s->n_missing > 0 && ratio != 1.0) {
    if (ratio < 1.0) {
      int32_t fallback = cfg->target_pct > 100 ? cfg->target_pct : 100;
      busy += (double)s->n_missing * (double)fallback / 100.0;
    }
    n += s->n_missing;
  }
  if (up_with_unready) n += s->n_unready;
  double new_ratio = (double)util_pct_of(busy, n) / (double)cfg->target_pct;
  if (within(cfg, new_ratio) || (ratio < 1.0 && new_ratio > 1.0) ||
      (ratio > 1.0 && new_ratio < 1.0))
    return current; /* too small a change, or the re-run flips the direction */
  int32_t proposed = (int32_t)ceil(new_ratio * (double)n);
  if ((new_ratio < 1.0 && proposed > current) || (new_ratio > 1.0 && proposed < current))
    return current; /* counting more replicas would flip the direction */
  return proposed;
}

/* }================================================================== */

/* {==================================================================
 * Stabilization (horizontal.go, stabilizeRecommendation[WithBehaviors])
 * =================================================================== */

/* Stores recommendation r at now: in the slot `stale` (an entry outside every window) when
 * there is one, else appended, else over the oldest entry. */
static void rec_store(model_hpa *h, int32_t stale, int32_t r, int64_t now_ns) {
  int32_t slot = stale;
  if (slot < 0 && h->recs_n.n < h->recs_n.cap) slot = h->recs_n.n++;
  if (slot < 0) { /* only when syncs come faster than sync_period_ns */
    slot = 0;
    for (int32_t i = 1; i < h->recs_n.n; i++)
      if (h->recs[i].at_ns < h->recs[slot].at_ns) slot = i;
  }
  h->recs[slot] = (hpa_rec){r, now_ns};
}

/* Without behavior: the highest recommendation not older than the window (an entry exactly
 * at the cutoff still counts: Kubernetes tests Before(cutoff) for staleness). */
static int32_t stabilize_legacy(model_hpa *h, int32_t raw, int64_t now_ns) {
  int64_t cutoff = now_ns - h->cfg.legacy_down_window_ns;
  int32_t best = raw, stale = -1;
  for (int32_t i = 0; i < h->recs_n.n; i++) {
    if (h->recs[i].at_ns < cutoff)
      stale = i;
    else if (h->recs[i].replicas > best)
      best = h->recs[i].replicas;
  }
  rec_store(h, stale, raw, now_ns);
  return best;
}

/* With behavior: the current count brought within [lowest recommendation of the scale-up
 * window, highest of the scale-down window]; windows are open at the cutoff (After). */
static int32_t stabilize_behavior(model_hpa *h, int32_t current, int32_t raw, int64_t now_ns) {
  int64_t up_cut = now_ns - h->cfg.up.window_ns, down_cut = now_ns - h->cfg.down.window_ns;
  int32_t up = raw, down = raw, stale = -1;
  for (int32_t i = 0; i < h->recs_n.n; i++) {
    const hpa_rec *r = &h->recs[i];
    if (r->at_ns > up_cut && r->replicas < up) up = r->replicas;
    if (r->at_ns > down_cut && r->replicas > down) down = r->replicas;
    if (r->at_ns < up_cut && r->at_ns < down_cut) stale = i;
  }
  int32_t out = current;
  if (out < up) out = up;
  if (out > down) out = down;
  rec_store(h, stale, raw, now_ns);
  return out;
}

/* }================================================================== */

/* {==================================================================
 * Rate limits (convertDesiredReplicasWith{Rules,BehaviorRate})
 * =================================================================== */

/* Replicas changed by the events of list ev newer than now - period (After: open cutoff). */
static int64_t changed_within(const hpa_event *ev, int32_t n, int64_t period_ns, int64_t now_ns) {
  int64_t sum = 0, cutoff = now_ns - period_ns;
  for (int32_t i = 0; i < n; i++)
    if (ev[i].at_ns > cutoff) sum += ev[i].change;
  return sum;
}

static int32_t clamp32(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* The most replicas the up rules allow now (up = true), or the fewest the down rules allow.
 * Each policy counts from the count at its period's start: current minus what was added plus
 * what was removed within it. Max picks the largest change, Min the smallest. */
static int32_t rate_limit(const model_hpa *h, bool up, int32_t current, int64_t now_ns) {
  const model_hpa_rules *r = up ? &h->cfg.up : &h->cfg.down;
  if (r->select == MODEL_HPA_SELECT_DISABLED) return current;
  bool want_high = (up == (r->select == MODEL_HPA_SELECT_MAX));
  int64_t result = want_high ? INT64_MIN : INT64_MAX;
  for (int32_t i = 0; i < r->n_policies; i++) {
    const model_hpa_policy *p = &r->policies[i];
    int64_t start = (int64_t)current - changed_within(h->ups, h->ups_n.n, p->period_ns, now_ns) +
                    changed_within(h->downs, h->downs_n.n, p->period_ns, now_ns);
    int64_t proposed;
    if (p->type == MODEL_HPA_PODS)
      proposed = up ? start + p->value : start - p->value;
    else if (up) /* rounded up, or a small count could never grow */
      proposed = (int64_t)ceil((double)start * (1.0 + (double)p->value / 100.0));
    else /* truncated toward zero, as Go's int32() */
      proposed = (int64_t)((double)start * (1.0 - (double)p->value / 100.0));
    if (want_high ? proposed > result : proposed < result) result = proposed;
  }
  return clamp32(result);
}

static int32_t limit_behavior(const model_hpa *h, int32_t current, int32_t want, int64_t now_ns) {
  if (want > current) {
    int32_t limit = rate_limit(h, true, current, now_ns);
    if (limit < current) limit = current; /* no growth until old events leave the period */
    int32_t most = h->cfg.max_replicas < limit ? h->cfg.max_replicas : limit;
    return want > most ? most : want;
  }
  if (want < current) {
    int32_t limit = rate_limit(h, false, current, now_ns);
    if (limit > current) limit = current;
    int32_t least = h->cfg.min_replicas > limit ? h->cfg.min_replicas : limit;
    return want < least ? least : want;
  }
  return want;
}

/* Without behavior: min/max and a scale-up of at most max(2 x current, 4) per sync. */
static int32_t limit_legacy(const model_hpa *h, int32_t current, int32_t want) {
  double doubled = 2.0 * (double)current;
  int32_t up_limit = clamp32((int64_t)(doubled > 4.0 ? doubled : 4.0));
  int32_t most = h->cfg.max_replicas > up_limit ? up_limit : h->cfg.max_replicas;
  if (want < h->cfg.min_replicas) return h->cfg.min_replicas;
  return want > most ? most : want;
}

/* storeScaleEvent: reuse the last slot outdated for the direction's longest period, else
 * append, else (faster syncs than configured) overwrite the oldest. */
static void event_store(model_hpa *h, bool up, int32_t change, int64_t now_ns) {
  hpa_event *ev = up ? h->ups : h->downs;
  hpa_list *l = up ? &h->ups_n : &h->downs_n;
  int64_t cutoff = now_ns - longest_period_ns(up ? &h->cfg.up : &h->cfg.down);
  int32_t slot = -1;
  for (int32_t i = 0; i < l->n; i++) {
    if (ev[i].at_ns < cutoff) ev[i].outdated = true;
    if (ev[i].outdated) slot = i;
  }
  if (slot < 0 && l->n < l->cap) slot = l->n++;
  if (slot < 0) {
    slot = 0;
    for (int32_t i = 1; i < l->n; i++)
      if (ev[i].at_ns < ev[slot].at_ns) slot = i;
  }
  if (l->cap > 0) ev[slot] = (hpa_event){change, now_ns, false};
}

/* }================================================================== */

/* {==================================================================
 * One sync (reconcileAutoscaler)
 * =================================================================== */

/* The count the metrics ask for after stabilization and limits; returns current when there
 * were no metrics (Kubernetes stops the reconcile with an error then). */
static int32_t desired_from_metrics(model_hpa *h, const model_hpa_sample *s, int32_t current,
                                    int64_t now_ns) {
  int32_t util;
  int32_t raw = model_hpa_recommend(&h->cfg, current, s, &util);
  if (util < 0) {
    h->stats.n_no_metrics++;
    return current;
  }
  h->stats.last_util_pct = util;
  h->stats.last_raw = raw;
  int32_t stabilized, out;
  if (h->cfg.legacy) {
    stabilized = stabilize_legacy(h, raw, now_ns);
    out = limit_legacy(h, current, stabilized);
  } else {
    stabilized = stabilize_behavior(h, current, raw, now_ns);
    out = limit_behavior(h, current, stabilized, now_ns);
  }
  if (out != stabilized) h->stats.n_limited++;
  return out;
}

int32_t model_hpa_sync(model_hpa *h, const model_hpa_sample *s, int64_t now_ns) {
  assert(h != NULL && s != NULL);
  h->stats.n_syncs++;
  int32_t current = h->replicas, desired;
  if (!h->have_initial) { /* recordInitialRecommendation */
    rec_store(h, -1, current, now_ns);
    h->have_initial = true;
  }
  if (current == 0) return 0; /* scaled to zero by hand: autoscaling is off (min >= 1 here) */
  if (current > h->cfg.max_replicas)
    desired = h->cfg.max_replicas;
  else if (current < h->cfg.min_replicas)
    desired = h->cfg.min_replicas;
  else
    desired = desired_from_metrics(h, s, current, now_ns);
  if (desired == current) return current;
  if (!h->cfg.legacy)
    event_store(h, desired > current, desired > current ? desired - current : current - desired,
                now_ns);
  if (desired > current)
    h->stats.n_scale_ups++;
  else
    h->stats.n_scale_downs++;
  h->replicas = desired;
  return desired;
}

/* }================================================================== */
