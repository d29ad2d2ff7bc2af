/*
 * sim_event.c: the event set of sim_event.h: a pool of event slots, a flat 4-ary min-heap and
 * FIFO lanes.
 *
 * Owns the pool, the heap and the lanes' rings, each grown by doubling on its own and never
 * shrunk, so memory follows the largest number of pending events (the heap's: of those not in
 * a lane), not the number run. Every byte comes from the allocator given to sim_kernel_create
 * (libc's by default). Invariant: heap[i] holds the key of the event in slot
 * hent_slot(&heap[i]), and that slot's pos is i; except heap[0] while `stale` (the event being
 * dispatched, see sim_kernel_run).
 */
#include "sim/sim_event.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* {==================================================================
 * Data
 * =================================================================== */

/* Slot indices are 32 bits; this one marks the end of the free list. */
#define NO_SLOT UINT32_MAX
/* The pool stops growing at 2^31 slots, so renumbering (below) always frees 2^31 seqs, or
 * earlier where size_t could not count the bytes. */
#define MAX_CAPACITY (SIZE_MAX / 64 < ((size_t)1 << 31) ? SIZE_MAX / 64 : ((size_t)1 << 31))
/* Slots allocated by sim_kernel_create(0, ...). */
#define DEFAULT_CAPACITY 64
/* seqs are 32 bits in the heap; at this value the pending events are renumbered. */
#define SEQ_LIMIT ((uint64_t)1 << 32)

/* One event, or a free slot. 32 bytes: two per cache line. The key (time, seq) lives in the
 * heap entry instead, so sifting touches the pool only to update pos. */
typedef struct slot {
  sim_event_fn fn; /* the action; NULL once cancelled while its entry stays in a lane */
  void *obj;       /* its object (not owned) */
  uint64_t arg;    /* its argument */
  uint32_t gen;    /* generation, never 0; bumped when the slot is freed */
  uint32_t pos;    /* pending: heap index, or LANE_POS0 + lane; free: next free (or NO_SLOT) */
} slot;

/* A heap entry: the event's key and its slot, 16 bytes, so a node's four children fill one
 * 64-byte cache line. tie packs (seq << 32) | slot: comparing tie compares seq, because seqs
 * of pending events are distinct, and the slot comes along for free. A 32-bit seq would wrap
 * after 2^32 schedules; renumber() rewrites the pending seqs as 0 .. n-1 before it does. We
 * rejected a separate 64-bit seq field (24-byte entries: 15 % slower at 1e4 pending) and
 * unsigned __int128 keys (not C11). */
typedef struct hent {
  int64_t time_ns; /* when the event runs */
  uint64_t tie;    /* (seq << 32) | slot index; seq is the insertion order */
} hent;

/* A FIFO lane: a ring of entries whose times never decrease, because they were all scheduled
 * with the same delay from a clock that never goes back. Its head is its smallest key, and
 * never a cancelled event's (lane_purge runs wherever a head could become one). */
typedef struct lane {
  int64_t delay_ns; /* the delay this lane serves; -1 when the lane is unused */
  hent *buf;        /* cap entries, cap a power of two (indices wrap with a mask) */
  size_t cap, head, n;
} lane;

/* slot.pos of an event that lives in lane l rather than in the heap: LANE_POS0 + l, above
 * every heap index (< 2^31) and below NO_SLOT. */
#define LANE_POS0 (UINT32_MAX - 1 - SIM_N_LANES)

struct sim_kernel {
  sim__kernel_head head;   /* first: the virtual clock, read inline by sim_now_ns */
  uint64_t next_seq;       /* seq of the next event scheduled, <= SEQ_LIMIT */
  hent *heap;              /* n_heap entries, then sentinels; starts 3 entries into heap_mem */
  void *heap_mem;          /* the heap's allocation, 64-byte aligned by hand (heap_alloc) */
  size_t n_heap;           /* entries in the heap: its pending events, and the stale top */
  size_t heap_cap;         /* entries the heap has room for, doubled when n_heap reaches it */
  bool stale;              /* heap[0] is the dispatched event's entry, not a pending one */
  slot *slots;             /* capacity slots */
  size_t capacity;         /* slots allocated */
  size_t n_fresh;          /* slots ever used; those from n_fresh on were never written */
  uint32_t free_head;      /* first free slot among the used ones, NO_SLOT when none */
  uint64_t n_events;       /* actions run since create */
  lane lanes[SIM_N_LANES]; /* FIFO lanes, one per constant delay (sim_event_schedule_lane) */
  int lane_hi;             /* lanes[lane_hi ..] have never served a delay: scans stop there */
  int lane_best;           /* the lane with the earliest head of all, -1 when all are empty */
  size_t n_lane;           /* entries in all lanes, cancelled ones included */
  size_t n_lane_cancelled; /* lane entries whose event was cancelled, not yet dropped */
  bool running;            /* inside sim_kernel_run */
  bool stop;               /* sim_kernel_stop was called during this run */
  retry_allocator alloc;   /* where every allocation comes from (never NULL functions) */
};

/* GCC and clang: the rare paths stay out of line (so the hot ones save fewer registers) and
 * the sifts are inlined into their callers. Other compilers decide for themselves. */
#if defined(__GNUC__)
#define COLD __attribute__((noinline, cold))
#define NOINLINE __attribute__((noinline))
#define HOT_INLINE inline __attribute__((always_inline))
#else
#define COLD
#define NOINLINE
#define HOT_INLINE inline
#endif

/* Fills the heap past its last entry; compares greater than every real key (see key_less). */
static const hent SENTINEL = {-1, 0};

static inline uint32_t hent_slot(const hent *e) { return (uint32_t)(e->tie & UINT32_MAX); }

/* }================================================================== */

/* {==================================================================
 * The 4-ary heap
 * =================================================================== */

/* Four children per node halve the depth of a binary heap. Node i has children 4i+1 .. 4i+4
 * and parent (i-1)/4. The array starts 3 entries into a 64-byte aligned block, so every
 * group of four siblings is one cache line. Entries from n_heap up to the end of the last
 * group are SENTINEL, so finding the smallest child never checks how many children exist.
 * Sifts move a hole instead of swapping. At 1e4 pending the cost is the latency of one
 * cache line per level; the comparisons are written so that they compile without branches,
 * since random keys would mispredict half of them. */

/* Entries to allocate for a heap of cap: the 3 leading pad entries, cap entries, and the
 * sentinels of the last group, rounded up to whole cache lines. */
static size_t heap_alloc_entries(size_t cap) { return (3 + cap + 3 + 3) & ~(size_t)3; }

/* (time, tie) compared as one 128-bit number, in portable C: the borrow out of the low halves
 * (a->tie < b->tie) is added to the high half of b. The sum cannot wrap: real times lie in
 * [0, INT64_MAX] (the clock starts at 0 and nothing is scheduled before it), so as unsigned
 * they stay below 2^63. SENTINEL's time reads as 2^64 - 1 and its tie is 0, so no borrow is
 * ever added to it: a < SENTINEL for every real a, and SENTINEL < a never. The textbook
 * `t < t' || (t == t' && s < s')` costs 30 % more at 1e4 pending: its chain of flags sits on
 * the critical path of every level of the sift. */
static inline bool key_less(const hent *a, const hent *b) {
  return (uint64_t)a->time_ns < (uint64_t)b->time_ns + (uint64_t)(a->tie < b->tie);
}

/* key_less as 0 or 1, for index arithmetic (setcc and add instead of a branch). */
static inline size_t key_less01(const hent *a, const hent *b) { return (size_t)key_less(a, b); }

/* Returns the index of the smallest of h[c] .. h[c+3]: a two-round tournament. */
static inline size_t min4(const hent *h, size_t c) {
  size_t a = c + key_less01(&h[c + 1], &h[c]);
  size_t b = c + 2 + key_less01(&h[c + 3], &h[c + 2]);
  return a ^ ((a ^ b) & (0 - key_less01(&h[b], &h[a])));
}

/* Places e at i and records its position in its slot. */
static inline void heap_put(sim_kernel *k, size_t i, const hent *e) {
  k->heap[i] = *e;
  k->slots[hent_slot(e)].pos = (uint32_t)i;
}

/* Moves e up from the hole at i to its place. */
static HOT_INLINE void sift_up(sim_kernel *k, size_t i, hent e) {
  hent *h = k->heap;
  while (i > 0) {
    size_t p = (i - 1) >> 2;
    if (!key_less(&e, &h[p])) break;
    heap_put(k, i, &h[p]);
    i = p;
  }
  heap_put(k, i, &e);
}

/* Moves e down from the hole at i to its place. The tournament works on pointers into the
 * group of children, which saves the index arithmetic of min4 on every level. */
static HOT_INLINE void sift_down(sim_kernel *k, size_t i, hent e) {
  hent *h = k->heap;
  slot *sl = k->slots;
  size_t n = k->n_heap;
  for (;;) {
    size_t c = 4 * i + 1;
    if (c >= n) break;
    const hent *p = &h[c];
    const hent *a = p + key_less01(&p[1], &p[0]);
    const hent *b = p + 2 + key_less01(&p[3], &p[2]);
    const hent *m = key_less(b, a) ? b : a;
    if (!key_less(m, &e)) break;
    h[i] = *m;
    sl[hent_slot(m)].pos = (uint32_t)i;
    i = (size_t)(m - h);
  }
  h[i] = e;
  sl[hent_slot(&e)].pos = (uint32_t)i;
}

/* Removes the entry at i, filling the hole with the last entry. While the top is stale, i > 0
 * and the work stays below the root: the stale key is smaller than every pending key, so no
 * entry sifts up past it. */
static NOINLINE void heap_remove(sim_kernel *k, size_t i) {
  hent last = k->heap[--k->n_heap];
  k->heap[k->n_heap] = SENTINEL;
  if (i == k->n_heap) return;
  /* The last entry may belong above or below the hole. */
  if (i > 0 && key_less(&last, &k->heap[(i - 1) >> 2]))
    sift_up(k, i, last);
  else
    sift_down(k, i, last);
}

/* Removes the stale top: the dispatched event's action scheduled nothing into the heap. */
static void heap_drop_top(sim_kernel *k) {
  assert(k->stale && k->n_heap > 0);
  k->stale = false;
  size_t n = --k->n_heap;
  hent last = k->heap[n];
  k->heap[n] = SENTINEL;
  if (n > 0) sift_down(k, 0, last);
}

static int hent_cmp(const void *a, const void *b) {
  const hent *x = a, *y = b;
  return key_less(x, y) ? -1 : key_less(y, x) ? 1 : 0;
}

/* Gives the pending events the seqs 0 .. n-1 in their (time, seq) order, which keeps their
 * relative order and frees every seq from n up. Runs once per ~2^32 schedules; O(n log n).
 * A sorted array is a valid heap, so nothing needs sifting afterwards. */
static void renumber(sim_kernel *k) {
  assert(!k->stale); /* the stale top's slot is free: writing its pos would break the list */
  qsort(k->heap, k->n_heap, sizeof *k->heap, hent_cmp);
  for (size_t i = 0; i < k->n_heap; i++) {
    k->heap[i].tie = ((uint64_t)i << 32) | hent_slot(&k->heap[i]);
    k->slots[hent_slot(&k->heap[i])].pos = (uint32_t)i;
  }
  k->next_seq = k->n_heap;
}

/* }================================================================== */

/* {==================================================================
 * Handles and the pool
 * =================================================================== */

/* A handle is (generation << 32) | slot index. Generations start at 1 and skip 0 when they
 * wrap, so no handle is 0. A stale handle fails the generation check; it could only match
 * again after the same slot was reused 2^32 times, which we accept. */
static sim_event_handle handle_make(uint32_t idx, uint32_t gen) {
  return ((uint64_t)gen << 32) | idx;
}

/* Returns the slot a handle names while its event is pending, else NULL. */
static slot *handle_slot(const sim_kernel *k, sim_event_handle h) {
  uint32_t idx = (uint32_t)(h & UINT32_MAX);
  uint32_t gen = (uint32_t)(h >> 32);
  if (h == SIM_EVENT_NONE || idx >= k->n_fresh) return NULL;
  slot *s = &k->slots[idx];
  return s->gen == gen ? s : NULL;
}

/* Returns a slot to the free list. Bumping the generation here is what makes every handle to
 * the old event stale, including the handle of an event whose action is about to run. LIFO
 * reuse keeps the slot just freed by a dispatch hot for the schedule its action makes. */
static void slot_free(sim_kernel *k, uint32_t idx) {
  slot *s = &k->slots[idx];
  s->gen = s->gen == UINT32_MAX ? 1 : s->gen + 1;
  s->pos = k->free_head;
  k->free_head = idx;
}

/* {==================================================================
 * Memory
 * =================================================================== */

/* libc's allocator behind the retry_allocator interface, the default. */
static void *k_malloc(sim_kernel *k, size_t size) { return k->alloc.malloc_fn(size, k->alloc.ctx); }
static void k_free(sim_kernel *k, void *ptr) {
  if (ptr != NULL) k->alloc.free_fn(ptr, k->alloc.ctx);
}

/* Returns a new heap block for cap entries, every entry SENTINEL, and its allocation in *mem;
 * NULL when out of memory. A custom allocator promises no more than malloc's alignment, so
 * the block is over-allocated by 63 bytes and aligned here (aligned_alloc cannot go through
 * a retry_allocator). */
static hent *heap_alloc(sim_kernel *k, size_t cap, void **mem) {
  size_t n = heap_alloc_entries(cap);
  unsigned char *raw = k_malloc(k, n * sizeof(hent) + 63);
  if (raw == NULL) return NULL;
  hent *h = (hent *)(void *)(raw + ((64 - (uintptr_t)raw % 64) % 64));
  for (size_t i = 0; i < n; i++)
    h[i] = SENTINEL;
  *mem = raw;
  return h + 3;
}

/* Doubles the pool. Returns 0, or -1 when out of memory (nothing changed). The heap grows on
 * its own (heap_reserve): an event in a FIFO lane needs a slot but no heap entry. */
static int pool_grow(sim_kernel *k) {
  size_t cap = k->capacity * 2;
  if (cap > MAX_CAPACITY) cap = MAX_CAPACITY;
  if (cap <= k->capacity) return -1;
  slot *s = k->alloc.realloc_fn(k->slots, cap * sizeof *s, k->alloc.ctx);
  if (s == NULL) return -1;
  k->slots = s;
  k->capacity = cap;
  return 0;
}

/* Puts a slot on the empty free list: the first never used, growing the pool when every slot
 * was. Returns 0, or -1 when out of memory. Slots are written only when first used, so the
 * pages of a pool's unused half are never touched (they cost no resident memory); the order
 * slots are handed out in is the same as if the new ones had been linked into the free list,
 * lowest index first, when the pool grew. */
static COLD int slot_refill(sim_kernel *k) {
  if (k->n_fresh == k->capacity && pool_grow(k) != 0) return -1;
  slot *s = &k->slots[k->n_fresh];
  s->gen = 1;
  s->pos = NO_SLOT;
  k->free_head = (uint32_t)k->n_fresh++;
  return 0;
}

/* Makes room in the heap for need entries, doubling its capacity as often as that takes.
 * Returns 0, or -1 when out of memory (nothing changed). need never exceeds the pool's
 * capacity plus one (each entry has its slot; the stale top's may have been reused), and
 * MAX_CAPACITY leaves room for that. The heap cannot use realloc (it would lose the
 * alignment), so it is copied, the stale top included. */
static int heap_reserve(sim_kernel *k, size_t need) {
  if (need <= k->heap_cap) return 0;
  size_t cap = k->heap_cap;
  while (cap < need)
    cap *= 2;
  void *mem;
  hent *h = heap_alloc(k, cap, &mem);
  if (h == NULL) return -1;
  memcpy(h, k->heap, k->n_heap * sizeof *h);
  k_free(k, k->heap_mem);
  k->heap = h;
  k->heap_mem = mem;
  k->heap_cap = cap;
  return 0;
}

/* }================================================================== */

/* {==================================================================
 * FIFO lanes
 * =================================================================== */

/* Events scheduled with the same delay come due in the order they were scheduled, so a lane
 * keeps them in a ring at O(1) per schedule and pop instead of O(log n) heap sifts. The
 * attempt deadlines of a client population are the typical tenants: one per call, nearly all
 * cancelled when the reply comes back. The run loop takes the smallest (time, seq) among the
 * heap's top and the lanes' heads, so the order of events is exactly the heap-only order. */

/* Doubles ln's ring. Returns 0, or -1 when out of memory (nothing changed). */
static COLD int lane_grow(sim_kernel *k, lane *ln) {
  size_t cap = ln->cap == 0 ? 64 : ln->cap * 2;
  hent *b = k_malloc(k, cap * sizeof *b);
  if (b == NULL) return -1;
  for (size_t i = 0; i < ln->n; i++)
    b[i] = ln->buf[(ln->head + i) & (ln->cap - 1)];
  k_free(k, ln->buf);
  ln->buf = b;
  ln->cap = cap;
  ln->head = 0;
  return 0;
}

/* Removes ln's head. */
static void lane_pop(sim_kernel *k, lane *ln) {
  ln->head = (ln->head + 1) & (ln->cap - 1);
  ln->n--;
  k->n_lane--;
}

/* Drops the cancelled entries at the head of ln, freeing their slots: after a pop, and after a
 * cancel of the head's event, so that a head is always live. */
static NOINLINE void lane_purge(sim_kernel *k, lane *ln) {
  while (ln->n > 0) {
    uint32_t idx = hent_slot(&ln->buf[ln->head]);
    if (k->slots[idx].fn != NULL) return;
    lane_pop(k, ln);
    slot_free(k, idx);
    k->n_lane_cancelled--;
  }
}

/* Finds lane_best again, after the head of the best lane went. */
static void lane_best_find(sim_kernel *k) {
  int best = -1;
  for (int l = 0; l < k->lane_hi; l++) {
    const lane *ln = &k->lanes[l];
    if (ln->n > 0 &&
        (best < 0 || key_less(&ln->buf[ln->head], &k->lanes[best].buf[k->lanes[best].head])))
      best = l;
  }
  k->lane_best = best;
}

/* Removes the head of ln (the best lane's), about to run, and the cancelled entries behind
 * it. */
static NOINLINE void lane_take(sim_kernel *k, lane *ln) {
  lane_pop(k, ln);
  if (ln->n > 0 && k->slots[hent_slot(&ln->buf[ln->head])].fn == NULL) lane_purge(k, ln);
  lane_best_find(k);
}

/* Finds the next event: its entry in *e and its source, a lane index or SIM_N_LANES for the
 * heap; -1 when nothing is pending. */
static int next_source(sim_kernel *k, hent *e) {
  assert(!k->stale);
  int from = -1;
  if (k->n_heap > 0) {
    *e = k->heap[0];
    from = SIM_N_LANES;
  }
  if (k->lane_best < 0) return from;
  const lane *ln = &k->lanes[k->lane_best];
  const hent *h = &ln->buf[ln->head];
  if (from < 0 || key_less(h, e)) {
    *e = *h;
    from = k->lane_best;
  }
  return from;
}

/* Moves every live lane entry into the heap (before seqs are renumbered). */
static void lanes_to_heap(sim_kernel *k) {
  for (int l = 0; l < SIM_N_LANES; l++) {
    lane *ln = &k->lanes[l];
    while (ln->n > 0) {
      hent e = ln->buf[ln->head];
      lane_pop(k, ln);
      uint32_t idx = hent_slot(&e);
      if (k->slots[idx].fn == NULL) {
        slot_free(k, idx);
        k->n_lane_cancelled--;
      } else {
        sift_up(k, k->n_heap++, e);
      }
    }
    ln->delay_ns = -1;
  }
  k->lane_hi = 0;
  k->lane_best = -1;
}

/* }================================================================== */

/* {==================================================================
 * Public API
 * =================================================================== */

sim_kernel *sim_kernel_create(size_t initial_capacity, const retry_allocator *alloc) {
  retry_allocator a;
  retry_allocator_resolve(alloc, &a);
  alloc = &a;
  size_t cap = initial_capacity == 0 ? DEFAULT_CAPACITY : initial_capacity;
  if (cap > MAX_CAPACITY) cap = MAX_CAPACITY;
  sim_kernel *k = alloc->malloc_fn(sizeof *k, alloc->ctx);
  if (k == NULL) return NULL;
  memset(k, 0, sizeof *k);
  k->alloc = *alloc;
  k->slots = k_malloc(k, cap * sizeof *k->slots);
  k->heap = k->slots != NULL ? heap_alloc(k, cap, &k->heap_mem) : NULL;
  if (k->slots == NULL || k->heap == NULL) {
    sim_kernel_destroy(k);
    return NULL;
  }
  k->capacity = cap;
  k->heap_cap = cap;
  k->free_head = NO_SLOT; /* slot_refill takes the fresh ones */
  for (int l = 0; l < SIM_N_LANES; l++)
    k->lanes[l].delay_ns = -1;
  k->lane_best = -1;
  return k;
}

void sim_kernel_destroy(sim_kernel *k) {
  if (k == NULL) return;
  for (int l = 0; l < SIM_N_LANES; l++)
    k_free(k, k->lanes[l].buf);
  k_free(k, k->slots);
  k_free(k, k->heap_mem);
  retry_allocator a = k->alloc;
  a.free_fn(k, a.ctx);
}

const retry_allocator *sim_kernel_allocator(const sim_kernel *k) {
  assert(k != NULL);
  return &k->alloc;
}

/* The rare work before a heap schedule, out of its way: a slot when the pool is full, room
 * in the heap when it is full and has no stale top to replace, and the renumbering of seqs at
 * SEQ_LIMIT (which first drops a stale top and moves the lanes' events into the heap). Returns
 * 0, or -1 when out of memory, the pending events as they were. */
static COLD int schedule_prepare(sim_kernel *k) {
  if (k->free_head == NO_SLOT && slot_refill(k) != 0) return -1;
  if (k->next_seq == SEQ_LIMIT) {
    if (k->stale) heap_drop_top(k);
    size_t live_lane = k->n_lane - k->n_lane_cancelled;
    if (heap_reserve(k, k->n_heap + live_lane + 1) != 0) return -1;
    lanes_to_heap(k);
    renumber(k);
  }
  if (!k->stale && heap_reserve(k, k->n_heap + 1) != 0) return -1;
  return 0;
}

sim_event_handle sim_event_schedule(sim_kernel *k, int64_t at_ns, sim_event_fn fn, void *obj,
                                    uint64_t arg) {
  assert(k != NULL && fn != NULL);
  assert(at_ns >= k->head.now_ns); /* scheduling in the past is a bug in the model */
  if ((k->free_head == NO_SLOT || k->next_seq == SEQ_LIMIT ||
       (!k->stale && k->n_heap == k->heap_cap)) &&
      schedule_prepare(k) != 0)
    return SIM_EVENT_NONE;
  uint32_t idx = k->free_head;
  slot *s = &k->slots[idx];
  k->free_head = s->pos;
  s->fn = fn;
  s->obj = obj;
  s->arg = arg;
  hent e = {at_ns, (k->next_seq++ << 32) | idx};
  if (k->stale) {
    /* Replace-top: the new key is larger than the stale one (same time or later, larger seq),
     * so it may take the root and sift down; this saves the stale top's removal (a sift down
     * of the last entry) and the new entry's sift up. */
    k->stale = false;
    sift_down(k, 0, e);
  } else {
    sift_up(k, k->n_heap++, e);
  }
  return handle_make(idx, s->gen);
}

/* Finds the lane for delay_ns: the lane of this delay, else the first free one (lanes from
 * lane_hi on are all free), which it then gives that delay. Returns its index, or SIM_N_LANES
 * when every lane serves another delay. */
static int lane_for(sim_kernel *k, int64_t delay_ns) {
  int l = 0, free_l = -1;
  for (; l < k->lane_hi; l++) {
    const lane *c = &k->lanes[l];
    if (c->delay_ns == delay_ns) return l;
    if (free_l < 0 && (c->delay_ns < 0 || c->n == 0)) free_l = l;
  }
  l = free_l >= 0 ? free_l : k->lane_hi;
  if (l == SIM_N_LANES) return l;
  k->lanes[l].delay_ns = delay_ns;
  if (l >= k->lane_hi) k->lane_hi = l + 1;
  return l;
}

/* What sim_event_schedule_lane does when the pool has no free slot or the lane's ring is
 * full: both grown first, then the same schedule. */
static COLD sim_event_handle schedule_lane_slow(sim_kernel *k, int l, int64_t delay_ns,
                                                sim_event_fn fn, void *obj, uint64_t arg) {
  lane *ln = &k->lanes[l];
  if (k->free_head == NO_SLOT && slot_refill(k) != 0) return SIM_EVENT_NONE;
  if (ln->n == ln->cap && lane_grow(k, ln) != 0) return SIM_EVENT_NONE;
  return sim_event_schedule_lane(k, delay_ns, fn, obj, arg);
}

sim_event_handle sim_event_schedule_lane(sim_kernel *k, int64_t delay_ns, sim_event_fn fn,
                                         void *obj, uint64_t arg) {
  assert(k != NULL && fn != NULL && delay_ns >= 0);
  int l = lane_for(k, delay_ns);
  if (l == SIM_N_LANES || delay_ns > INT64_MAX - 1 - k->head.now_ns || k->next_seq == SEQ_LIMIT)
    return sim_event_schedule_in(k, delay_ns, fn, obj, arg);
  lane *ln = &k->lanes[l];
  if (k->free_head == NO_SLOT || ln->n == ln->cap)
    return schedule_lane_slow(k, l, delay_ns, fn, obj, arg);
  uint32_t idx = k->free_head;
  slot *s = &k->slots[idx];
  hent *e = &ln->buf[(ln->head + ln->n++) & (ln->cap - 1)];
  *e = (hent){k->head.now_ns + delay_ns, (k->next_seq++ << 32) | idx};
  /* Only a lane that was empty gets a new head; it may be the earliest of all. */
  if (ln->n == 1 &&
      (k->lane_best < 0 || key_less(e, &k->lanes[k->lane_best].buf[k->lanes[k->lane_best].head])))
    k->lane_best = l;
  k->n_lane++;
  k->free_head = s->pos;
  s->fn = fn;
  s->obj = obj;
  s->arg = arg;
  s->pos = LANE_POS0 + (uint32_t)l;
  return handle_make(idx, s->gen);
}

bool sim__event_cancel(sim_kernel *k, sim_event_handle h) {
  assert(k != NULL);
  slot *s = handle_slot(k, h);
  if (s == NULL) return false;
  uint32_t idx = (uint32_t)(h & UINT32_MAX);
  if (s->pos >= LANE_POS0) {
    /* A lane entry stays where it is (its slot with it) until it reaches the lane's head. */
    int l = (int)(s->pos - LANE_POS0);
    lane *ln = &k->lanes[l];
    s->fn = NULL;
    s->obj = NULL;
    s->gen = s->gen == UINT32_MAX ? 1 : s->gen + 1;
    k->n_lane_cancelled++;
    if (hent_slot(&ln->buf[ln->head]) == idx) {
      lane_purge(k, ln);
      /* Another lane's head becomes the earliest only if this one was. */
      if (k->lane_best == l) lane_best_find(k);
    }
    return true;
  }
  assert(s->pos < k->n_heap && hent_slot(&k->heap[s->pos]) == idx);
  assert(!k->stale || s->pos > 0); /* the stale top's handle is stale: it never gets here */
  heap_remove(k, s->pos);
  slot_free(k, idx);
  return true;
}

bool sim_event_is_pending(const sim_kernel *k, sim_event_handle h) {
  assert(k != NULL);
  return handle_slot(k, h) != NULL;
}

int64_t sim_kernel_next_ns(const sim_kernel *k) {
  assert(k != NULL);
  /* Under a stale top the earliest heap event is the smallest of the root's children. */
  int64_t t = INT64_MAX;
  if (k->n_heap > (size_t)k->stale) t = k->heap[k->stale ? min4(k->heap, 1) : 0].time_ns;
  if (k->lane_best >= 0) {
    const lane *ln = &k->lanes[k->lane_best]; /* its head is live */
    if (ln->buf[ln->head].time_ns < t) t = ln->buf[ln->head].time_ns;
  }
  return t;
}

uint64_t sim_kernel_run(sim_kernel *k, int64_t until_ns) {
  assert(k != NULL && !k->running); /* run is not reentrant */
  k->running = true;
  k->stop = false;
  uint64_t n0 = k->n_events; /* the events this run ran: n_events - n0 */
  for (;;) {
    /* The dispatched heap event's entry stays at the root, stale, while its action runs: it
     * is <= every pending key, so the heap is still valid, and the action's first heap
     * schedule replaces it (sim_event_schedule). Only when the action scheduled nothing into
     * the heap is it removed, here. Nothing outside sim_kernel_run ever sees a stale top.
     * Rejected: keeping it stale across dispatches from lanes, until the heap's own next
     * event is due (bench/reference.json: 0.7 % more instructions, the smallest child of the
     * root computed on every dispatch costing more than the removals it saved). */
    if (k->stale) heap_drop_top(k);
    if (k->stop) break;
    hent top;
    int from = next_source(k, &top);
    if (from < 0 || top.time_ns > until_ns) break;
    if (from == SIM_N_LANES) {
      k->stale = true;
    } else {
      lane_take(k, &k->lanes[from]);
    }
    /* Copy the action out and free the slot before running it: the action may schedule into
     * this very slot, and cancelling the running event's own handle must find it stale. */
    uint32_t idx = hent_slot(&top);
    slot *s = &k->slots[idx];
    sim_event_fn fn = s->fn;
    void *obj = s->obj;
    uint64_t arg = s->arg;
    slot_free(k, idx);
    k->head.now_ns = top.time_ns;
    k->n_events++;
    fn(k, obj, arg);
  }
  /* Advance to until_ns only when every event up to it ran: after a stop the clock stays at
   * the last event. INT64_MAX means "drain", not a time to reach; never move backwards. */
  bool drained = sim_kernel_next_ns(k) > until_ns;
  if (!k->stop && drained && until_ns != INT64_MAX && until_ns > k->head.now_ns)
    k->head.now_ns = until_ns;
  k->stop = false;
  k->running = false;
  return k->n_events - n0;
}

void sim_kernel_stop(sim_kernel *k) {
  assert(k != NULL);
  /* Outside a run this does nothing: run clears the flag when it starts. */
  if (k->running) k->stop = true;
}

uint64_t sim_kernel_n_events(const sim_kernel *k) {
  assert(k != NULL);
  return k->n_events;
}

size_t sim_kernel_n_pending(const sim_kernel *k) {
  assert(k != NULL);
  return k->n_heap - (size_t)k->stale + k->n_lane - k->n_lane_cancelled;
}

size_t sim_kernel_pool_capacity(const sim_kernel *k) {
  assert(k != NULL);
  return k->capacity;
}

void sim__kernel_set_next_seq(sim_kernel *k, uint64_t next_seq) {
  /* Only forward: the pending events keep smaller seqs, so their order and FIFO ties hold. */
  assert(k != NULL && next_seq >= k->next_seq && next_seq <= SEQ_LIMIT);
  k->next_seq = next_seq;
}

/* }================================================================== */
