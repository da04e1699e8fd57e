/* The discrete-event scheduler: a 4-ary min-heap of (time, sequence, slot)
 * entries over a slot table with a free list.
 *
 * Why entries carry the key inline: the heap's comparisons then read one
 * contiguous array (no pointer chase per comparison), which is where a
 * scheduler spends its time. Why cancellation is lazy: a cancel bumps the
 * slot's generation and frees it at once (O(1)); the heap entry stays and is
 * dropped when it reaches the top (its generation no longer matches). When
 * dead entries outnumber live ones the heap is compacted and re-heapified in
 * O(n), so a cancel-heavy workload (timers reset over and over) cannot grow
 * the heap without bound. Handles are (generation << 32 | slot + 1), so a
 * handle from a fired or cancelled event never cancels a later one. */
#include <stdlib.h>
#include <string.h>

#include "breakwater/sim.h"
#include "breakwater/ext.h"

typedef struct {
  int64_t at_ns;
  uint64_t seq;
  uint32_t slot;
  uint32_t gen;
} sim_entry_t;

typedef struct {
  bw_sim_fn fn;
  void *user;
  uint32_t gen;  /* bumps when the event fires or is cancelled */
  uint32_t next; /* free list link (UINT32_MAX = end) */
} sim_slot_t;

#define SIM_NIL UINT32_MAX

struct bw_sim_s {
  bw_clock_t clock; /* first: the clock's data points back here */
  int64_t now_ns;
  uint64_t seq;
  uint64_t fired;
  sim_entry_t *heap;
  size_t heap_len, heap_cap;
  sim_slot_t *slots;
  uint32_t slot_cap;
  uint32_t free_head;
  size_t live;
  bool running;
  bool stop;
};

void bw_sim_config_init(bw_sim_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->start_ns = 0;
  cfg->initial_events = 1024;
}

static int64_t sim_clock_now(const bw_clock_t *clock) {
  return ((const bw_sim_t *)clock->data)->now_ns;
}

/* Threads slots [from, to) onto the free list, lowest index first. */
static void sim_thread_free(bw_sim_t *sim, uint32_t from, uint32_t to) {
  uint32_t i;
  for (i = to; i > from; i--) {
    sim->slots[i - 1].next = sim->free_head;
    sim->free_head = i - 1;
  }
}

bw_sim_t *bw_sim_new(const bw_sim_config_t *cfg, bw_error_t *err) {
  bw_sim_config_t def;
  bw_sim_t *sim;
  bw_error_clear(err);
  if (cfg == NULL) {
    bw_sim_config_init(&def);
    cfg = &def;
  }
  if (cfg->start_ns < 0) {
    bw_error_set(err, BW_E_INVAL, "start_ns",
                 "start_ns must be >= 0 (got %lld)", (long long)cfg->start_ns);
    return NULL;
  }
  if (cfg->initial_events < 1 || cfg->initial_events > (UINT32_MAX >> 2)) {
    bw_error_set(err, BW_E_INVAL, "initial_events",
                 "initial_events must be in [1, %u] (got %u)",
                 (unsigned)(UINT32_MAX >> 2), (unsigned)cfg->initial_events);
    return NULL;
  }
  sim = bw_calloc(1, sizeof(*sim));
  if (sim == NULL) goto nomem;
  sim->slots = bw_malloc((size_t)cfg->initial_events * sizeof(sim_slot_t));
  sim->heap = bw_malloc((size_t)cfg->initial_events * sizeof(sim_entry_t));
  if (sim->slots == NULL || sim->heap == NULL) goto nomem;
  sim->clock.now_ns = sim_clock_now;
  sim->clock.data = sim;
  sim->now_ns = cfg->start_ns;
  sim->slot_cap = cfg->initial_events;
  sim->heap_cap = cfg->initial_events;
  sim->free_head = SIM_NIL;
  memset(sim->slots, 0, (size_t)sim->slot_cap * sizeof(sim_slot_t));
  sim_thread_free(sim, 0, sim->slot_cap);
  return sim;
nomem:
  if (sim != NULL) {
    bw_free(sim->slots);
    bw_free(sim->heap);
    bw_free(sim);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the simulator");
  return NULL;
}

void bw_sim_free(bw_sim_t *sim) {
  if (sim == NULL) return;
  bw_free(sim->slots);
  bw_free(sim->heap);
  bw_free(sim);
}

const bw_clock_t *bw_sim_clock(const bw_sim_t *sim) {
  return sim != NULL ? &sim->clock : NULL;
}

int64_t bw_sim_now_ns(const bw_sim_t *sim) {
  return sim != NULL ? sim->now_ns : 0;
}

size_t bw_sim_pending(const bw_sim_t *sim) {
  return sim != NULL ? sim->live : 0;
}

uint64_t bw_sim_fired(const bw_sim_t *sim) {
  return sim != NULL ? sim->fired : 0;
}

static inline bool entry_less(const sim_entry_t *a, const sim_entry_t *b) {
  return a->at_ns < b->at_ns || (a->at_ns == b->at_ns && a->seq < b->seq);
}

static inline bool entry_dead(const bw_sim_t *sim, const sim_entry_t *e) {
  return sim->slots[e->slot].gen != e->gen;
}

/* A 4-ary heap: half the depth of a binary one, and a node's four children
 * share one or two cache lines — the textbook choice for large heaps. The
 * choice is not settled by measurement: -DSIM_ARITY=2 builds the binary heap
 * for an A/B comparison with bench_sim. */
#ifndef SIM_ARITY
#define SIM_ARITY 4
#endif

static void sift_up(sim_entry_t *h, size_t i, sim_entry_t e) {
  while (i > 0) {
    size_t p = (i - 1) / SIM_ARITY;
    if (!entry_less(&e, &h[p])) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = e;
}

static void sift_down(sim_entry_t *h, size_t n, size_t i, sim_entry_t e) {
  for (;;) {
    size_t l = SIM_ARITY * i + 1, m, k, end;
    if (l >= n) break;
    m = l;
    end = l + SIM_ARITY < n ? l + SIM_ARITY : n;
    for (k = l + 1; k < end; k++)
      if (entry_less(&h[k], &h[m])) m = k;
    if (!entry_less(&h[m], &e)) break;
    h[i] = h[m];
    i = m;
  }
  h[i] = e;
}

/* Removes the top entry. */
static void heap_pop(bw_sim_t *sim) {
  sim_entry_t last = sim->heap[--sim->heap_len];
  if (sim->heap_len > 0) sift_down(sim->heap, sim->heap_len, 0, last);
}

/* Drops dead entries and rebuilds the heap (Floyd, O(n)). */
static void heap_compact(bw_sim_t *sim) {
  size_t i, n = 0;
  for (i = 0; i < sim->heap_len; i++)
    if (!entry_dead(sim, &sim->heap[i])) sim->heap[n++] = sim->heap[i];
  sim->heap_len = n;
  for (i = n / 2; i-- > 0;)
    sift_down(sim->heap, n, i, sim->heap[i]);
}

/* Drops dead entries from the top; true when a live one is there. */
static bool heap_settle(bw_sim_t *sim) {
  while (sim->heap_len > 0 && entry_dead(sim, &sim->heap[0]))
    heap_pop(sim);
  return sim->heap_len > 0;
}

static int sim_grow(bw_sim_t *sim) {
  if (sim->free_head == SIM_NIL) {
    uint32_t old = sim->slot_cap, cap;
    sim_slot_t *s;
    if (old > (UINT32_MAX >> 2)) return BW_E_NOMEM;
    cap = old * 2;
    s = bw_realloc(sim->slots, (size_t)cap * sizeof(sim_slot_t));
    if (s == NULL) return BW_E_NOMEM;
    memset(s + old, 0, (size_t)(cap - old) * sizeof(sim_slot_t));
    sim->slots = s;
    sim->slot_cap = cap;
    sim_thread_free(sim, old, cap);
  }
  if (sim->heap_len == sim->heap_cap) {
    sim_entry_t *h;
    size_t cap;
    /* Cheaper than growing when most entries are dead. */
    if (sim->heap_len > 2 * sim->live + 16) {
      heap_compact(sim);
      if (sim->heap_len < sim->heap_cap) return BW_OK;
    }
    cap = sim->heap_cap * 2;
    h = bw_realloc(sim->heap, cap * sizeof(sim_entry_t));
    if (h == NULL) return BW_E_NOMEM;
    sim->heap = h;
    sim->heap_cap = cap;
  }
  return BW_OK;
}

int bw_sim_schedule_at(bw_sim_t *sim, int64_t at_ns, bw_sim_fn fn, void *user,
                       bw_sim_event_id_t *id) {
  sim_entry_t e;
  sim_slot_t *s;
  uint32_t slot;
  if (sim == NULL || fn == NULL || at_ns < sim->now_ns) return BW_E_INVAL;
  if (sim->free_head == SIM_NIL || sim->heap_len == sim->heap_cap) {
    int rc = sim_grow(sim);
    if (rc != BW_OK) return rc;
  }
  slot = sim->free_head;
  s = &sim->slots[slot];
  sim->free_head = s->next;
  s->fn = fn;
  s->user = user;
  e.at_ns = at_ns;
  e.seq = sim->seq++;
  e.slot = slot;
  e.gen = s->gen;
  sift_up(sim->heap, sim->heap_len++, e);
  sim->live++;
  if (id != NULL) *id = ((uint64_t)s->gen << 32) | ((uint64_t)slot + 1);
  return BW_OK;
}

int bw_sim_schedule_in(bw_sim_t *sim, int64_t delay_ns, bw_sim_fn fn,
                       void *user, bw_sim_event_id_t *id) {
  if (sim == NULL || delay_ns < 0 || delay_ns > INT64_MAX - sim->now_ns)
    return BW_E_INVAL;
  return bw_sim_schedule_at(sim, sim->now_ns + delay_ns, fn, user, id);
}

/* Retires a slot: stale handles and heap entries stop matching it. */
static inline void slot_release(bw_sim_t *sim, uint32_t slot) {
  sim_slot_t *s = &sim->slots[slot];
  s->gen++;
  s->fn = NULL;
  s->user = NULL;
  s->next = sim->free_head;
  sim->free_head = slot;
  sim->live--;
}

int bw_sim_cancel(bw_sim_t *sim, bw_sim_event_id_t id) {
  uint64_t low;
  uint32_t slot, gen;
  if (sim == NULL) return BW_E_INVAL;
  low = id & 0xffffffffu;
  if (low == 0 || low > sim->slot_cap) return BW_E_NOTFOUND;
  slot = (uint32_t)(low - 1);
  gen = (uint32_t)(id >> 32);
  if (sim->slots[slot].gen != gen || sim->slots[slot].fn == NULL)
    return BW_E_NOTFOUND;
  slot_release(sim, slot);
  if (sim->heap_len > 64 && sim->heap_len > 2 * sim->live) heap_compact(sim);
  return BW_OK;
}

int64_t bw_sim_next_ns(bw_sim_t *sim) {
  if (sim == NULL || !heap_settle(sim)) return -1;
  return sim->heap[0].at_ns;
}

/* Fires up to max events with time <= until_ns. */
static uint64_t sim_run(bw_sim_t *sim, int64_t until_ns, uint64_t max) {
  uint64_t n = 0;
  if (sim == NULL || sim->running) return 0;
  sim->running = true;
  sim->stop = false;
  while (n < max && !sim->stop && heap_settle(sim)) {
    sim_entry_t top = sim->heap[0];
    bw_sim_fn fn;
    void *user;
    if (top.at_ns > until_ns) break;
    heap_pop(sim);
    fn = sim->slots[top.slot].fn;
    user = sim->slots[top.slot].user;
    slot_release(sim, top.slot);
    sim->now_ns = top.at_ns;
    sim->fired++;
    n++;
    fn(sim, user);
  }
  sim->running = false;
  return n;
}

uint64_t bw_sim_run(bw_sim_t *sim) {
  return sim_run(sim, INT64_MAX, UINT64_MAX);
}

uint64_t bw_sim_run_until(bw_sim_t *sim, int64_t until_ns) {
  uint64_t n;
  if (sim == NULL || sim->running) return 0;
  n = sim_run(sim, until_ns, UINT64_MAX);
  if (!sim->stop && until_ns > sim->now_ns) sim->now_ns = until_ns;
  return n;
}

uint64_t bw_sim_run_for(bw_sim_t *sim, uint64_t n) {
  return sim_run(sim, INT64_MAX, n);
}

void bw_sim_stop(bw_sim_t *sim) {
  if (sim != NULL) sim->stop = true;
}
