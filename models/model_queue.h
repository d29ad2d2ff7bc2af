/*
 * model_queue.h: a replica's queue of requests waiting for a worker, and its discipline: which
 * request a free worker takes (FIFO, LIFO, CoDel's adaptive LIFO) and when one that waited is
 * refused unworked instead (CoDel's bound). The service (model_service.c) only puts, takes and
 * withdraws; a new discipline is a change to this file alone. Static inline: every request
 * that waits goes through a put and a take, on the hot path of a loaded service.
 *
 * The queue is doubly linked through mw_req.q_prev/q_next, which share their storage with the
 * reply's pushback (model_int.h, mw_req): a request is in the queue exactly while its state is
 * MW_REQ_QUEUED, and every way out (model__queue_take, model__queue_withdraw) clears both
 * links, so that out of the queue the pushback reads NULL until a reply sets it.
 */
#ifndef MODEL_QUEUE_H
#define MODEL_QUEUE_H

#include "models/model_int.h"

/* Whether rp's queue has a request waiting. */
static inline bool model__queue_has_waiting(const mw_replica *rp) { return rp->q_head != NULL; }

/* Puts r (at its replica rp of service s, in no queue) at the back of rp's queue at now;
 * the caller checked the capacity. With CoDel, r is given the time past which it is refused
 * unworked (model__queue_expired). */
static inline void model__queue_put(mw_service *s, mw_replica *rp, mw_req *r, int64_t now) {
  const model_codel_cfg *codel = &s->cfg->codel;
  MODEL_CHECK(r->state == MW_REQ_AT_SERVICE && r->q_prev == NULL && r->q_next == NULL);
  if (codel->on) {
    if (rp->queued == 0) rp->q_nonempty_since = now;
    r->codel_until = now + model_codel_bound(codel, rp->q_nonempty_since, now);
  }
  r->state = MW_REQ_QUEUED;
  r->q_prev = rp->q_tail;
  r->q_next = NULL;
  if (rp->q_tail != NULL)
    rp->q_tail->q_next = r;
  else
    rp->q_head = r;
  rp->q_tail = r;
  if (++rp->queued > s->stats->queue_max) s->stats->queue_max = rp->queued;
}

/* The bookkeeping of a request that left rp's queue at now: its links cleared (the pushback
 * reads NULL from now on), its state out of the queue, the count down. */
static inline void model__queue_left(mw_replica *rp, mw_req *r, int64_t now) {
  r->q_prev = r->q_next = NULL;
  r->state = MW_REQ_AT_SERVICE;
  rp->queued--;
  if (rp->queued == 0) rp->q_nonempty_since = now;
}

/* Takes the request a free worker of rp serves next (the queue is not empty), by s's
 * discipline: FIFO serves the oldest, LIFO the newest (whose callers are most likely still
 * waiting), CoDel's adaptive LIFO the newest while the queue has not been empty for an
 * interval. */
static inline mw_req *model__queue_take(const mw_service *s, mw_replica *rp, int64_t now) {
  const model_codel_cfg *codel = &s->cfg->codel;
  mw_req *r;
  if (s->cfg->queue == MODEL_QUEUE_LIFO ||
      (codel->on && model_codel_lifo(codel, rp->q_nonempty_since, now))) {
    r = rp->q_tail;
    rp->q_tail = r->q_prev;
    if (rp->q_tail != NULL)
      rp->q_tail->q_next = NULL;
    else
      rp->q_head = NULL;
  } else {
    r = rp->q_head;
    rp->q_head = r->q_next;
    if (rp->q_head != NULL)
      rp->q_head->q_prev = NULL;
    else
      rp->q_tail = NULL;
  }
  model__queue_left(rp, r, now);
  return r;
}

/* Whether r, just taken, waited past the bound CoDel set when it was queued: it is then
 * refused unworked. */
static inline bool model__queue_expired(const mw_service *s, const mw_req *r, int64_t now) {
  return s->cfg->codel.on && now > r->codel_until;
}

/* Takes r (state MW_REQ_QUEUED) out of the middle of rp's queue, as if it had never joined
 * (O(1): the links are doubly linked); its CoDel bound goes with it. */
static inline void model__queue_withdraw(mw_replica *rp, mw_req *r, int64_t now) {
  MODEL_CHECK(r->state == MW_REQ_QUEUED);
  if (r->q_prev != NULL)
    r->q_prev->q_next = r->q_next;
  else
    rp->q_head = r->q_next;
  if (r->q_next != NULL)
    r->q_next->q_prev = r->q_prev;
  else
    rp->q_tail = r->q_prev;
  model__queue_left(rp, r, now);
}

#endif /* MODEL_QUEUE_H */
