/*
 * model_ledger.c: pools and the ledger of side effects. An operation is one logical request of
 * a top-level caller (kept across user-level retries); every call and request working for it
 * holds a reference. When the last reference goes, its executions are folded into the totals:
 * the first execution per service is the operation, every further one a duplicate.
 */
#include <stdlib.h>
#include <assert.h>
#include <string.h>

#include "models/model_int.h"

/* {==================================================================
 * Pools
 * =================================================================== */

void model__pool_init(mw_pool *p, const retry_allocator *alloc, size_t obj_size, size_t per_chunk) {
  memset(p, 0, sizeof *p);
  p->alloc = alloc;
  /* Round up so every object keeps the alignment of a pointer and of int64_t. */
  size_t align = sizeof(int64_t) > sizeof(void *) ? sizeof(int64_t) : sizeof(void *);
  if (obj_size < sizeof(void *)) obj_size = sizeof(void *);
  p->obj_size = (obj_size + align - 1) / align * align;
  p->per_chunk = per_chunk;
}

/* Adds one chunk and threads its objects onto the free list, lowest address first. Chunks are
 * zeroed (calloc) so that ledger entries never handed out read as free (refs 0) when the
 * end of a run walks them. */
int model__pool_grow(mw_pool *p) {
  if (p->n_chunks == p->cap_chunks) {
    size_t cap = p->cap_chunks == 0 ? 16 : p->cap_chunks * 2;
    void **c = p->alloc->realloc_fn(p->chunks, cap * sizeof *c, p->alloc->ctx);
    if (c == NULL) return -1;
    p->chunks = c;
    p->cap_chunks = cap;
  }
  /* per_chunk x obj_size cannot overflow: both are small constants of the world. */
  char *chunk = p->alloc->malloc_fn(p->per_chunk * p->obj_size, p->alloc->ctx);
  if (chunk == NULL) return -1;
  memset(chunk, 0, p->per_chunk * p->obj_size);
  p->chunks[p->n_chunks++] = chunk;
  for (size_t i = p->per_chunk; i-- > 0;) {
    void *obj = chunk + i * p->obj_size;
    *(void **)obj = p->free_list;
    p->free_list = obj;
  }
  return 0;
}

void model__pool_free(mw_pool *p) {
  for (size_t i = 0; i < p->n_chunks; i++)
    p->alloc->free_fn(p->chunks[i], p->alloc->ctx);
  if (p->chunks != NULL) p->alloc->free_fn(p->chunks, p->alloc->ctx);
  memset(p, 0, sizeof *p);
}

/* }================================================================== */

/* {==================================================================
 * Operations
 * =================================================================== */

/* A new real operation (the ledger is on), zeroed, with one reference; NULL when out of
 * memory (the world has failed). Its branch word is the caller's to set. */
static mw_op *op_alloc(model_world *w) {
  mw_op *op = model__pool_get(&w->pools.ops);
  if (op == NULL) {
    model__fail(w, RETRY_ENOMEM, "out of memory for the side-effect ledger");
    return NULL;
  }
  /* An op is small and read by offset (executions, then children): zeroed whole. */
  memset(op, 0, w->pools.ops.obj_size);
  op->refs = 1;
  op->measured = sim_now_ns(w->k) >= w->cfg->warmup_ns;
  return op;
}

static void op_set_word(const model_world *w, mw_op *op, uint64_t word) {
  memcpy((char *)op + w->pools.op_branch_off, &word, sizeof word);
}

/* The splitmix64 finalizer. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

mw_op *model__op_new(model_world *w) {
  if (!model__ledger_on(w)) {
    w->pools.no_effect_op->refs++;
    return w->pools.no_effect_op;
  }
  mw_op *op = op_alloc(w);
  if (op != NULL && w->pools.branches) {
    /* The serial number of the top-level operation (a client's call, a herd's init call, a
     * population's fallback) hashed with the seed: unrelated words for consecutive ops, the
     * same ones in every run of the scenario and seed, whatever the fast paths. A handler's
     * calls' operations take theirs from their parent (model__op_child), so the serials
     * count top-level operations only, and what a handler's calls do (a branch taken or not)
     * moves no other request's word. */
    op_set_word(w, op, sim_rng_derive(w->seed, "branch", "op", w->pools.op_serial++));
  }
  return op;
}

/* Folds a finished operation into the per-service and total counts: one operation per
 * service that executed it, every execution beyond the first a duplicate. */
static void op_settle(model_world *w, const mw_op *op) {
  if (!op->measured) return; /* made before the warmup */
  for (size_t i = 0; i < w->topo.n_services; i++) {
    mw_service *s = &w->topo.services[i];
    if (s->effect_slot < 0) continue;
    int32_t n = op->executions[s->effect_slot];
    if (n <= 0) continue;
    s->stats->operations++;
    w->res.operations++;
    w->res.duplicates += n - 1;
  }
}

/* The child pointers of op: after its executions, at w->pools.op_child_off (max_calls of them, only
 * when some service has a side effect or a cache, or some call branches: model__ledger_on). */
static mw_op **op_children(const model_world *w, mw_op *op) {
  return (mw_op **)(void *)((char *)op + w->pools.op_child_off);
}

mw_op *model__op_child(model_world *w, mw_op *op, int32_t j) {
  if (op == NULL || !model__ledger_on(w)) return op;
  mw_op **slot = &op_children(w, op)[j];
  if (*slot != NULL) return *slot;
  *slot = op_alloc(w); /* refs 1: the parent's */
  /* The child's word from its parent's and its call's place in the handler: the same child
   * of the same request gets the same word whatever other calls were made (a variant that
   * changes one branch leaves every other branch of every request as it was). The constants
   * keep the word apart from the u the parent's own branch j drew (model_fanout.c). */
  if (*slot != NULL && w->pools.branches)
    op_set_word(w, *slot,
                mix64((model__op_branch_word(w, op) ^ UINT64_C(0x243F6A8885A308D3)) +
                      ((uint64_t)j + 1) * UINT64_C(0xD1B54A32D192ED03)));
  return *slot;
}

/* Settled once no call or request works for it; its children go with the parent's reference
 * (they settle when their own holders are gone too). */
void model__op_release(model_world *w, mw_op *op) {
  assert(op != w->pools.no_effect_op); /* the world's reference keeps it above 0 */
  op_settle(w, op);
  op->refs = 0;
  if (model__ledger_on(w)) {
    mw_op **ch = op_children(w, op);
    for (size_t j = 0; j < w->pools.max_calls; j++)
      if (ch[j] != NULL) model__op_unref(w, ch[j]);
  }
  model__pool_put(&w->pools.ops, op);
}

void model__ops_settle_all(model_world *w) {
  /* Free objects have refs == 0 (set before they go back), live ones refs > 0; each is
   * settled once and then marked settled by clearing its executions. */
  for (size_t c = 0; c < w->pools.ops.n_chunks; c++) {
    char *chunk = w->pools.ops.chunks[c];
    for (size_t i = 0; i < w->pools.ops.per_chunk; i++) {
      mw_op *op = (mw_op *)(void *)(chunk + i * w->pools.ops.obj_size);
      if (op->refs <= 0) continue;
      op_settle(w, op);
      memset(op->executions, 0, (size_t)w->topo.n_effect_services * sizeof op->executions[0]);
    }
  }
}

bool model__op_execute(model_world *w, mw_service *s, mw_op *op) {
  if (s->effect_slot < 0 || op == NULL) return true;
  if (s->cfg->dedup && op->executions[s->effect_slot] > 0) {
    if (op->measured) s->stats->deduplicated++;
    return false;
  }
  op->executions[s->effect_slot]++;
  if (!op->measured) return true;
  s->stats->executions++;
  w->res.executions++;
  return true;
}

/* }================================================================== */
