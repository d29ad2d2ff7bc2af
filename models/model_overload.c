/*
 * model_overload.c: admission by token bucket, controlled delay with adaptive LIFO, and the
 * versioned row of optimistic concurrency (model_overload.h). No randomness and no allocation:
 * each rule is a function of its state and the time.
 */
#include "models/model_overload.h"

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
