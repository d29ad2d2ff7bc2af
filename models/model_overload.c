/*
 * model_overload.c: admission by token bucket, controlled delay with adaptive LIFO, and the
 * versioned row of optimistic concurrency (model_overload.h). No randomness and no allocation:
 * each rule is a function of its state and the time.
 */
#include "models/model_overload.h"

#include <math.h>
#include <string.h>

void model_bucket_init(model_bucket *b, const model_admission_cfg *cfg, int64_t now_ns) {
  b->tokens = cfg->burst;
  b->last_ns = now_ns;
}

bool model_bucket_admit(model_bucket *b, const model_admission_cfg *cfg, int64_t now_ns) {
  if (now_ns > b->last_ns) {
    b->tokens += cfg->rate * (double)(now_ns - b->last_ns) / 1e9;
    if (b->tokens > cfg->burst) b->tokens = cfg->burst;
    b->last_ns = now_ns;
  }
  /* A small tolerance: 1 / rate seconds later, rate x (1 / rate) may round just below 1. */
  if (b->tokens < 1.0 - 1e-9) return false;
  b->tokens -= 1.0;
  if (b->tokens < 0) b->tokens = 0;
  return true;
}

bool model_codel_overloaded(const model_codel_cfg *cfg, int64_t last_empty_ns, int64_t now_ns) {
  return now_ns - last_empty_ns > cfg->interval_ns;
}

int64_t model_codel_bound(const model_codel_cfg *cfg, int64_t last_empty_ns, int64_t now_ns) {
  return model_codel_overloaded(cfg, last_empty_ns, now_ns) ? cfg->target_ns : cfg->interval_ns;
}

bool model_codel_lifo(const model_codel_cfg *cfg, int64_t last_empty_ns, int64_t now_ns) {
  return cfg->adaptive_lifo && model_codel_overloaded(cfg, last_empty_ns, now_ns);
}

bool model_row_write(model_row *row, int64_t read_version) {
  if (read_version != row->version) return false;
  row->version++;
  return true;
}

int32_t model_criticality_of(const model_criticality_cfg *cfg, const char *method,
                             const char *caller) {
  for (int i = 0; method != NULL && i < cfg->n_methods; i++)
    if (strcmp(cfg->methods[i].name, method) == 0) return cfg->methods[i].crit;
  for (int i = 0; caller != NULL && i < cfg->n_callers; i++)
    if (strcmp(cfg->callers[i].name, caller) == 0) return cfg->callers[i].crit;
  return cfg->dflt;
}

bool model_shedding_refuses(const model_shedding_cfg *cfg, int32_t crit, int32_t queued) {
  if (crit <= MODEL_CRIT_UNSET || crit >= MODEL_CRIT_N) crit = MODEL_CRIT_CRITICAL;
  return queued >= cfg->threshold[crit];
}

void model_retry_share_add(model_retry_share *s, int64_t window_ns, int64_t now_ns, bool retry) {
  if (now_ns > s->last_ns) {
    double f = exp(-(double)(now_ns - s->last_ns) / (double)window_ns);
    s->all *= f;
    s->retries *= f;
    s->last_ns = now_ns;
  }
  s->all += 1.0;
  if (retry) s->retries += 1.0;
}

double model_retry_share_ratio(const model_retry_share *s) {
  return s->all > 0 ? s->retries / s->all : 0.0;
}
