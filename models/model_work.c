/*
 * model_work.c: work that grows with the state of its replica and with time (model_work_cfg):
 * one multiplier of the service time, (1 + k (busy - 1) + q queued) x size(t) x gc(held), of
 * which the per-busy term is the older slowdown_per_busy. A service without a term beyond
 * that one never comes here: model_service.c keeps its own arithmetic for it, so its times
 * stay bit for bit what they were.
 */
#include "models/model_int.h"

/* The collector's term: a heap holding `held` requests of a heap that fits held_limit. The
 * time a copying collector spends per unit of work grows like live / (heap - live) (each
 * collection copies the live data, and collections come as often as the free space fills),
 * so the work a request costs grows like 1 / (1 - live / heap). Bounded at live / heap = 0.99
 * (100 times), so that a full heap slows the work to a crawl without stopping it. */
static double gc_term(const model_work_cfg *wk, double held) {
  if (wk->held_limit <= 0) return 1.0;
  double f = held / (double)wk->held_limit;
  if (f > 0.99) f = 0.99;
  return 1.0 / (1.0 - f);
}

double model__work_factor(const model_service_cfg *cfg, double busy_others, double queued,
                          int64_t now) {
  const model_work_cfg *wk = &cfg->work;
  double f = 1.0 + cfg->slowdown_per_busy * busy_others + wk->per_queued * queued;
  if (wk->has_size) f *= sim_profile_rate(&wk->size, now);
  return f * gc_term(wk, busy_others + 1.0 + queued);
}

int model__work_columns(model_world *w,
                        int (*column)(model_world *, const char *, const char *, bool)) {
  w->ts.col_work0 = -1;
  for (size_t i = 0; i < w->topo.n_services; i++) {
    if (!w->cfg->services[i].work.on) continue;
    int col = column(w, w->cfg->services[i].name, "work_factor", false);
    if (col < 0) return -1;
    if (w->ts.col_work0 < 0) w->ts.col_work0 = col;
  }
  return 0;
}

/* The multiplier a request that one of its replicas' workers took now would get, averaged
 * over the replicas: the state the time series shows beside the queue and the busy workers. */
void model__work_sample(model_world *w, double *row) {
  int col = w->ts.col_work0;
  int64_t now = sim_now_ns(w->k);
  for (size_t i = 0; i < w->topo.n_services; i++) {
    const mw_service *s = &w->topo.services[i];
    if (!s->cfg->work.on) continue;
    double sum = 0;
    for (int32_t r = 0; r < s->cfg->replicas; r++)
      sum += model__work_factor(s->cfg, (double)s->replicas[r].busy, (double)s->replicas[r].queued,
                                now);
    row[col++] = sum / (double)s->cfg->replicas;
  }
}
