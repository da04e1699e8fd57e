/* A named registry of breakers: see include/breakwater/registry.h and
 * docs/registry.md.
 *
 * Layout. One mutex guards everything; lookups are not the hot path (callers
 * keep the pointer while they hold it), so a lock is simpler and safer than a
 * lock-free map. Each live object sits in three places at once:
 *   - by_name: a chained hash table keyed by SipHash-2-4 of the name with a
 *     per-registry random key, because per-key registries are often keyed by
 *     strings an outsider controls (hosts, tenants) and a fixed hash would
 *     let them pile every name into one chain;
 *   - by_ptr: a chained hash table keyed by the breaker pointer, so
 *     bw_registry_put never dereferences the pointer it is given (a stray
 *     extra put then is a no-op instead of a use-after-free);
 *   - the LRU list, most recently used at the head.
 * Per-name configurations live in a third table (configs), by name.
 *
 * Events and frees happen after the lock is dropped: a sink callback may then
 * read the registry without deadlocking, and freeing a breaker does not
 * lengthen the critical section. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "registry_collect.h"

/* Longest accepted name, in bytes (the header promises 200). */
#define BW__REG_NAME_MAX BW_NAME_MAX
/* Initial buckets per table; a power of two. */
#define BW__REG_MIN_BUCKETS 16u

#define BW__CONTAINER(ptr, type, member) \
  ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* ---- a small intrusive chained hash table ------------------------------ */

typedef struct bw__node_s {
  struct bw__node_s *chain;
  uint64_t hash;
} bw__node_t;

typedef struct bw__table_s {
  bw__node_t **buckets;
  size_t mask; /* bucket count - 1 */
  size_t count;
} bw__table_t;

static int bw__table_init(bw__table_t *t) {
  t->buckets = bw_calloc(BW__REG_MIN_BUCKETS, sizeof(*t->buckets));
  if (t->buckets == NULL) return BW_E_NOMEM;
  t->mask = BW__REG_MIN_BUCKETS - 1;
  t->count = 0;
  return BW_OK;
}

/* Doubles the bucket array. A failed allocation is not an error: chains just
 * get longer, and the lookup that triggered the growth still succeeds. */
static void bw__table_grow(bw__table_t *t) {
  size_t n = (t->mask + 1) * 2, i;
  bw__node_t **nb;
  if (n > SIZE_MAX / sizeof(*nb)) return;
  nb = bw_calloc(n, sizeof(*nb));
  if (nb == NULL) return;
  for (i = 0; i <= t->mask; i++) {
    bw__node_t *node = t->buckets[i];
    while (node != NULL) {
      bw__node_t *next = node->chain;
      size_t j = (size_t)node->hash & (n - 1);
      node->chain = nb[j];
      nb[j] = node;
      node = next;
    }
  }
  bw_free(t->buckets);
  t->buckets = nb;
  t->mask = n - 1;
}

static void bw__table_insert(bw__table_t *t, bw__node_t *node) {
  size_t i;
  if (t->count >= t->mask + 1) bw__table_grow(t); /* load factor 1 */
  i = (size_t)node->hash & t->mask;
  node->chain = t->buckets[i];
  t->buckets[i] = node;
  t->count++;
}

static void bw__table_remove(bw__table_t *t, bw__node_t *node) {
  bw__node_t **pp = &t->buckets[(size_t)node->hash & t->mask];
  while (*pp != NULL) {
    if (*pp == node) {
      *pp = node->chain;
      node->chain = NULL;
      t->count--;
      return;
    }
    pp = &(*pp)->chain;
  }
}

static bw__node_t *bw__table_chain(const bw__table_t *t, uint64_t hash) {
  return t->buckets[(size_t)hash & t->mask];
}

/* ---- hashing ----------------------------------------------------------- */

static uint64_t bw__rotl(uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

#define BW__SIPROUND(v0, v1, v2, v3) \
  do {                               \
    v0 += v1;                        \
    v1 = bw__rotl(v1, 13);           \
    v1 ^= v0;                        \
    v0 = bw__rotl(v0, 32);           \
    v2 += v3;                        \
    v3 = bw__rotl(v3, 16);           \
    v3 ^= v2;                        \
    v0 += v3;                        \
    v3 = bw__rotl(v3, 21);           \
    v3 ^= v0;                        \
    v2 += v1;                        \
    v1 = bw__rotl(v1, 17);           \
    v1 ^= v2;                        \
    v2 = bw__rotl(v2, 32);           \
  } while (0)

/* SipHash-2-4 of (p, n) under the key (k0, k1). Names are short and lookups
 * are not the hot path, so the keyed hash costs nothing that matters. */
static uint64_t bw__siphash(uint64_t k0, uint64_t k1, const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575);
  uint64_t v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
  uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261);
  uint64_t v3 = k1 ^ UINT64_C(0x7465646279746573);
  uint64_t m;
  size_t i, left = n;
  int r;
  while (left >= 8) {
    m = 0;
    for (i = 0; i < 8; i++)
      m |= (uint64_t)s[i] << (8 * i);
    v3 ^= m;
    for (r = 0; r < 2; r++)
      BW__SIPROUND(v0, v1, v2, v3);
    v0 ^= m;
    s += 8;
    left -= 8;
  }
  m = (uint64_t)(n & 0xff) << 56;
  for (i = 0; i < left; i++)
    m |= (uint64_t)s[i] << (8 * i);
  v3 ^= m;
  for (r = 0; r < 2; r++)
    BW__SIPROUND(v0, v1, v2, v3);
  v0 ^= m;
  v2 ^= 0xff;
  for (r = 0; r < 4; r++)
    BW__SIPROUND(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

/* Pointers are not chosen by outsiders: a cheap bit mixer (the splitmix64
 * finalizer) spreads them well enough. */
static uint64_t bw__ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

/* ---- registry ---------------------------------------------------------- */

typedef struct bw__obj_s {
  bw__node_t by_name;
  bw__node_t by_ptr;
  struct bw__obj_s *lru_prev; /* towards the most recently used */
  struct bw__obj_s *lru_next; /* towards the least recently used */
  bw_breaker_t *breaker;
  size_t holds;
  int64_t last_used_ns;
  /* The configured metrics_only: an object whose mode an operator flipped at
   * run time is not evicted, or the operator's choice would silently vanish
   * when the name comes back. */
  bool cfg_metrics_only;
  /* Filled when the object is detached, for the eviction event. */
  int64_t idle_ms;
  uint64_t final_calls;
  size_t name_len;
  char name[]; /* NUL-terminated */
} bw__obj_t;

/* An object of any other kind: never evicted, no holds. */
typedef struct bw__gobj_s {
  bw__node_t node;
  struct bw__gobj_s *next; /* every object, newest first */
  bw_registry_kind_t kind;
  void *obj;
  bool owned; /* created by the registry: freed with it */
  size_t name_len;
  char name[];
} bw__gobj_t;

typedef struct bw__cfg_s {
  bw__node_t node;
  bw_breaker_config_t cfg;
  size_t name_len;
  char name[];
} bw__cfg_t;

/* Any configuration the registry can create an object from. */
typedef union bw__any_cfg_u {
  bw_bulkhead_config_t bulkhead;
  bw_limiter_config_t limiter;
  bw_ratelimit_config_t ratelimit;
  bw_retry_config_t retry;
  bw_budget_config_t budget;
  bw_pipeline_config_t pipeline;
  bw_queue_config_t queue;
  bw_stage_config_t stage;
  bw_degrade_config_t degrade;
  bw_gauge_config_t gauge;
  bw_throttle_config_t throttle;
} bw__any_cfg_t;

/* A configuration registered in advance for (kind, name), a kind other
 * than the in-process breaker (those are bw__cfg_t). */
typedef struct bw__kcfg_s {
  bw__node_t node;
  bw_registry_kind_t kind;
  bw__any_cfg_t cfg; /* its name field NULL: the looked-up name goes in */
  size_t name_len;
  char name[];
} bw__kcfg_t;

struct bw_registry_s {
  pthread_mutex_t lock;
  const bw_clock_t *clock;
  bw_sink_t *sink;
  size_t max_objects;
  int64_t idle_evict_ms;
  bw_breaker_config_t default_cfg;
  uint64_t k0, k1; /* SipHash key, fixed at creation */
  bw__table_t by_name;
  bw__table_t by_ptr;
  bw__table_t configs;
  bw__obj_t *lru_head; /* most recently used */
  bw__obj_t *lru_tail; /* least recently used */
  uint64_t evictions;
  uint64_t limit_rejections;
  bw__table_t objects;  /* bw__gobj_t by (kind, name) */
  bw__table_t kconfigs; /* bw__kcfg_t by (kind, name) */
  bw__gobj_t *gobjs;
  size_t kind_count[BW_REGISTRY_KIND__COUNT];
  bw__collectors_t *collectors; /* registry_collect.c; NULL until the first */
};

/* Why an at-cap lookup found nothing to evict, for the error message. */
typedef struct bw__why_s {
  size_t held, recent, not_closed, failing;
} bw__why_t;

void bw_registry_config_init(bw_registry_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->max_objects = 0;
  cfg->idle_evict_ms = 60000;
  cfg->clock = bw_clock_monotonic();
  cfg->sink = NULL;
  cfg->default_breaker = NULL;
}

/* Checks a name; on success *len gets its length. */
static int bw__reg_check_name(const char *name, size_t *len, bw_error_t *err) {
  size_t n;
  *len = 0;
  if (name == NULL)
    return bw_error_set(err, BW_E_INVAL, "name", "name must not be NULL");
  n = strnlen(name, BW__REG_NAME_MAX + 1);
  if (n == 0)
    return bw_error_set(err, BW_E_INVAL, "name", "name must not be empty");
  if (n > BW__REG_NAME_MAX)
    return bw_error_set(err, BW_E_INVAL, "name",
                        "name must be at most %d bytes (got %zu or more)",
                        BW__REG_NAME_MAX, n);
  *len = n;
  return BW_OK;
}

static uint64_t bw__name_hash(const bw_registry_t *reg, const char *name,
                              size_t len) {
  return bw__siphash(reg->k0, reg->k1, name, len);
}

static bw__obj_t *bw__find_obj(const bw_registry_t *reg, const char *name,
                               size_t len, uint64_t h) {
  bw__node_t *n;
  for (n = bw__table_chain(&reg->by_name, h); n != NULL; n = n->chain) {
    bw__obj_t *o = BW__CONTAINER(n, bw__obj_t, by_name);
    if (n->hash == h && o->name_len == len && memcmp(o->name, name, len) == 0)
      return o;
  }
  return NULL;
}

static bw__obj_t *bw__find_obj_by_ptr(const bw_registry_t *reg,
                                      const bw_breaker_t *b) {
  uint64_t h = bw__ptr_hash(b);
  bw__node_t *n;
  for (n = bw__table_chain(&reg->by_ptr, h); n != NULL; n = n->chain) {
    bw__obj_t *o = BW__CONTAINER(n, bw__obj_t, by_ptr);
    if (o->breaker == b) return o;
  }
  return NULL;
}

static bw__cfg_t *bw__find_cfg(const bw_registry_t *reg, const char *name,
                               size_t len, uint64_t h) {
  bw__node_t *n;
  for (n = bw__table_chain(&reg->configs, h); n != NULL; n = n->chain) {
    bw__cfg_t *c = BW__CONTAINER(n, bw__cfg_t, node);
    if (n->hash == h && c->name_len == len && memcmp(c->name, name, len) == 0)
      return c;
  }
  return NULL;
}

static void bw__lru_unlink(bw_registry_t *reg, bw__obj_t *o) {
  if (o->lru_prev != NULL)
    o->lru_prev->lru_next = o->lru_next;
  else
    reg->lru_head = o->lru_next;
  if (o->lru_next != NULL)
    o->lru_next->lru_prev = o->lru_prev;
  else
    reg->lru_tail = o->lru_prev;
  o->lru_prev = o->lru_next = NULL;
}

static void bw__lru_push_front(bw_registry_t *reg, bw__obj_t *o) {
  o->lru_prev = NULL;
  o->lru_next = reg->lru_head;
  if (reg->lru_head != NULL)
    reg->lru_head->lru_prev = o;
  else
    reg->lru_tail = o;
  reg->lru_head = o;
}

/* Marks a use at `now`: the object becomes the most recently used. Because
 * `now` is read under the lock from a monotonic clock, last_used_ns never
 * increases from head to tail, which lets the eviction walks stop early. */
static void bw__touch(bw_registry_t *reg, bw__obj_t *o, int64_t now) {
  o->last_used_ns = now;
  if (reg->lru_head != o) {
    bw__lru_unlink(reg, o);
    bw__lru_push_front(reg, o);
  }
}

/* Whole milliseconds since the object was last used (0 if the clock went
 * backwards). Compared in ms, not ns, so a huge idle_evict_ms never
 * overflows a multiplication. */
static int64_t bw__idle_ms(const bw__obj_t *o, int64_t now) {
  int64_t d = now - o->last_used_ns;
  return d <= 0 ? 0 : d / BW_NS_PER_MS;
}

/* Can an idle, unheld object go? Only a CLOSED breaker with nothing counting
 * towards a trip and no operator change: evicting anything else would forget
 * that a dependency is sick (and the recreated breaker would hammer it). */
static bool bw__evictable_state(const bw__obj_t *o, bw__why_t *why,
                                uint64_t *calls) {
  bw_breaker_stats_t st;
  bw_breaker_stats(o->breaker, &st);
  if (st.state != BW_CLOSED || st.metrics_only != o->cfg_metrics_only) {
    if (why != NULL) why->not_closed++;
    return false;
  }
  if (st.consecutive_failures > 0 || st.window_failures > 0 ||
      st.window_slow > 0) {
    if (why != NULL) why->failing++;
    return false;
  }
  *calls = st.calls;
  return true;
}

/* Removes an object from the maps and the LRU list (not freed). */
static void bw__detach(bw_registry_t *reg, bw__obj_t *o) {
  bw__table_remove(&reg->by_name, &o->by_name);
  bw__table_remove(&reg->by_ptr, &o->by_ptr);
  bw__lru_unlink(reg, o);
}

static void bw__obj_destroy(bw__obj_t *o) {
  bw_breaker_free(o->breaker);
  bw_free(o);
}

/* The least recently used evictable object, or NULL (why filled). Walks from
 * the LRU end and stops at the first object used within idle_evict_ms: every
 * object after it was used even more recently. */
static bw__obj_t *bw__pick_victim(bw_registry_t *reg, int64_t now,
                                  bw__why_t *why) {
  size_t visited = 0;
  bw__obj_t *o;
  for (o = reg->lru_tail; o != NULL; o = o->lru_prev) {
    int64_t idle = bw__idle_ms(o, now);
    uint64_t calls = 0;
    if (idle < reg->idle_evict_ms) break;
    visited++;
    if (o->holds > 0) {
      why->held++;
      continue;
    }
    if (!bw__evictable_state(o, why, &calls)) continue;
    o->idle_ms = idle;
    o->final_calls = calls;
    return o;
  }
  why->recent = reg->by_name.count - visited;
  return NULL;
}

static void bw__emit_evicted(const bw_registry_t *reg, const bw__obj_t *o,
                             int64_t now, bool sweep) {
  char reason[160];
  bw_field_t f[5];
  if (reg->sink == NULL) return;
  if (sweep)
    snprintf(reason, sizeof(reason),
             "idle %" PRId64 " ms (idle_evict_ms %" PRId64
             "), evict_idle sweep",
             o->idle_ms, reg->idle_evict_ms);
  else
    snprintf(reason, sizeof(reason), "idle %" PRId64 " ms, registry at cap %zu",
             o->idle_ms, reg->max_objects);
  f[0] = bw_field_int("idle_ms", o->idle_ms);
  f[1] = bw_field_int("idle_evict_ms", reg->idle_evict_ms);
  f[2] = bw_field_uint("max_objects", (uint64_t)reg->max_objects);
  f[3] = bw_field_str("trigger", sweep ? "sweep" : "cap");
  f[4] = bw_field_uint("calls", o->final_calls);
  bw_event_emit(reg->sink, bw_clock_realtime(), now, BW_EV_REGISTRY_EVICTED,
                o->name, reason, f, sizeof(f) / sizeof(f[0]), NULL);
}

/* Frees everything a registry owns (for bw_registry_free and for a
 * half-built registry). */
static void bw__gobj_free(bw__gobj_t *g);

static void bw__registry_destroy(bw_registry_t *reg) {
  bw__obj_t *o = reg->lru_head;
  bw__gobj_t *g = reg->gobjs;
  size_t i;
  while (g != NULL) {
    bw__gobj_t *next = g->next;
    bw__gobj_free(g);
    g = next;
  }
  while (o != NULL) {
    bw__obj_t *next = o->lru_next;
    bw__obj_destroy(o);
    o = next;
  }
  if (reg->configs.buckets != NULL) {
    for (i = 0; i <= reg->configs.mask; i++) {
      bw__node_t *n = reg->configs.buckets[i];
      while (n != NULL) {
        bw__node_t *next = n->chain;
        bw_free(BW__CONTAINER(n, bw__cfg_t, node));
        n = next;
      }
    }
  }
  if (reg->kconfigs.buckets != NULL) {
    for (i = 0; i <= reg->kconfigs.mask; i++) {
      bw__node_t *n = reg->kconfigs.buckets[i];
      while (n != NULL) {
        bw__node_t *next = n->chain;
        bw_free(BW__CONTAINER(n, bw__kcfg_t, node));
        n = next;
      }
    }
  }
  bw_free(reg->by_name.buckets);
  bw_free(reg->by_ptr.buckets);
  bw_free(reg->configs.buckets);
  bw_free(reg->objects.buckets);
  bw_free(reg->kconfigs.buckets);
  bw_free(reg);
}

/* Validates a breaker configuration destined for the registry. The config's
 * own name is ignored (the looked-up name replaces it), so a placeholder
 * stands in for it during validation. */
static int bw__validate_breaker_cfg(const bw_breaker_config_t *in,
                                    const char *name, bw_breaker_config_t *out,
                                    bw_error_t *err) {
  *out = *in;
  out->name = name;
  return bw_breaker_config_validate(out, err);
}

bw_registry_t *bw_registry_new(const bw_registry_config_t *cfg,
                               bw_error_t *err) {
  bw_registry_config_t defaults;
  bw_registry_t *reg;
  bw_rand_t seed;
  if (cfg == NULL) {
    bw_registry_config_init(&defaults);
    cfg = &defaults;
  }
  if (cfg->idle_evict_ms < 0) {
    bw_error_set(err, BW_E_INVAL, "idle_evict_ms",
                 "idle_evict_ms must be >= 0 (got %" PRId64 ")",
                 cfg->idle_evict_ms);
    return NULL;
  }
  reg = bw_calloc(1, sizeof(*reg));
  if (reg == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating a registry");
    return NULL;
  }
  if (cfg->default_breaker != NULL) {
    bw_error_t e;
    bw_error_clear(&e);
    if (bw__validate_breaker_cfg(cfg->default_breaker, "default",
                                 &reg->default_cfg, &e) != BW_OK) {
      /* Say which configuration is at fault: the field alone would read as
       * a registry field. */
      static const char prefix[] = "default_breaker.";
      char field[sizeof(e.field)];
      snprintf(field, sizeof(field), "%s%.*s", prefix,
               (int)(sizeof(field) - sizeof(prefix)), e.field);
      bw_error_set(err, e.code, field, "default_breaker: %s", e.message);
      bw_free(reg);
      return NULL;
    }
  } else {
    bw_breaker_config_init(&reg->default_cfg);
    /* No explicit default: the registry's clock and sink apply. */
    reg->default_cfg.clock = NULL;
    reg->default_cfg.sink = NULL;
  }
  reg->default_cfg.name = NULL;
  reg->max_objects = cfg->max_objects;
  reg->idle_evict_ms = cfg->idle_evict_ms;
  reg->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  reg->sink = cfg->sink;
  bw_rand_seed(&seed, bw_rand_os_seed());
  reg->k0 = bw_rand_next(&seed);
  reg->k1 = bw_rand_next(&seed);
  if (bw__table_init(&reg->by_name) != BW_OK ||
      bw__table_init(&reg->by_ptr) != BW_OK ||
      bw__table_init(&reg->configs) != BW_OK ||
      bw__table_init(&reg->objects) != BW_OK ||
      bw__table_init(&reg->kconfigs) != BW_OK) {
    bw__registry_destroy(reg);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating a registry");
    return NULL;
  }
  if (pthread_mutex_init(&reg->lock, NULL) != 0) {
    bw__registry_destroy(reg);
    bw_error_set(err, BW_E_NOMEM, "",
                 "out of resources creating the registry mutex");
    return NULL;
  }
  bw_error_clear(err);
  return reg;
}

int bw_registry_set_breaker_config(bw_registry_t *reg, const char *name,
                                   const bw_breaker_config_t *cfg,
                                   bw_error_t *err) {
  bw_breaker_config_t copy;
  bw__cfg_t *c;
  size_t len;
  uint64_t h;
  int rc;
  if (reg == NULL)
    return bw_error_set(err, BW_E_INVAL, "reg", "reg must not be NULL");
  rc = bw__reg_check_name(name, &len, err);
  if (rc != BW_OK) return rc;
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "cfg", "cfg must not be NULL");
  rc = bw__validate_breaker_cfg(cfg, name, &copy, err);
  if (rc != BW_OK) return rc;
  copy.name = NULL;
  h = bw__name_hash(reg, name, len);
  pthread_mutex_lock(&reg->lock);
  c = bw__find_cfg(reg, name, len, h);
  if (c == NULL) {
    c = bw_malloc(sizeof(*c) + len + 1);
    if (c == NULL) {
      pthread_mutex_unlock(&reg->lock);
      return bw_error_set(err, BW_E_NOMEM, "",
                          "out of memory storing the config for \"%.64s\"",
                          name);
    }
    memset(c, 0, sizeof(*c));
    memcpy(c->name, name, len + 1);
    c->name_len = len;
    c->node.hash = h;
    bw__table_insert(&reg->configs, &c->node);
  }
  c->cfg = copy;
  pthread_mutex_unlock(&reg->lock);
  bw_error_clear(err);
  return BW_OK;
}

/* Creates an object (not yet linked anywhere). */
static int bw__obj_create(bw_registry_t *reg, const char *name, size_t len,
                          uint64_t h, bw__obj_t **out, bw_error_t *err) {
  const bw__cfg_t *c = bw__find_cfg(reg, name, len, h);
  bw_breaker_config_t bc = c != NULL ? c->cfg : reg->default_cfg;
  bw_error_t e;
  bw__obj_t *o = bw_calloc(1, sizeof(*o) + len + 1);
  *out = NULL;
  if (o == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating \"%.64s\"", name);
    return BW_E_NOMEM;
  }
  memcpy(o->name, name, len + 1);
  o->name_len = len;
  bc.name = o->name;
  if (bc.clock == NULL) bc.clock = reg->clock;
  if (bc.sink == NULL) bc.sink = reg->sink;
  bw_error_clear(&e);
  o->breaker = bw_breaker_new(&bc, &e);
  if (o->breaker == NULL) {
    bw_free(o);
    if (err != NULL) *err = e;
    return e.code != BW_OK ? e.code : BW_E_NOMEM;
  }
  o->cfg_metrics_only = bc.metrics_only;
  o->by_name.hash = h;
  o->by_ptr.hash = bw__ptr_hash(o->breaker);
  *out = o;
  return BW_OK;
}

bw_breaker_t *bw_registry_breaker(bw_registry_t *reg, const char *name,
                                  bw_error_t *err) {
  bw__obj_t *o, *victim = NULL;
  bw_breaker_t *b;
  size_t len;
  uint64_t h;
  int64_t now;
  if (reg == NULL) {
    bw_error_set(err, BW_E_INVAL, "reg", "reg must not be NULL");
    return NULL;
  }
  if (bw__reg_check_name(name, &len, err) != BW_OK) return NULL;
  h = bw__name_hash(reg, name, len);
  pthread_mutex_lock(&reg->lock);
  now = bw__clock_now(reg->clock);
  o = bw__find_obj(reg, name, len, h);
  if (o != NULL) {
    o->holds++;
    bw__touch(reg, o, now);
    b = o->breaker;
    pthread_mutex_unlock(&reg->lock);
    bw_error_clear(err);
    return b;
  }
  if (reg->max_objects != 0 && reg->by_name.count >= reg->max_objects) {
    bw__why_t why = {0, 0, 0, 0};
    victim = bw__pick_victim(reg, now, &why);
    if (victim == NULL) {
      reg->limit_rejections++;
      pthread_mutex_unlock(&reg->lock);
      bw_error_set(err, BW_E_LIMIT, "max_objects",
                   "registry is at max_objects (%zu) and nothing can be "
                   "evicted: %zu held, %zu used within idle_evict_ms (%" PRId64
                   " ms), %zu not closed, %zu counting failures",
                   reg->max_objects, why.held, why.recent, reg->idle_evict_ms,
                   why.not_closed, why.failing);
      return NULL;
    }
  }
  /* Create before evicting: if creation fails, the victim stays. */
  if (bw__obj_create(reg, name, len, h, &o, err) != BW_OK) {
    pthread_mutex_unlock(&reg->lock);
    return NULL;
  }
  if (victim != NULL) {
    bw__detach(reg, victim);
    reg->evictions++;
  }
  o->holds = 1;
  o->last_used_ns = now;
  bw__table_insert(&reg->by_name, &o->by_name);
  bw__table_insert(&reg->by_ptr, &o->by_ptr);
  bw__lru_push_front(reg, o);
  b = o->breaker;
  pthread_mutex_unlock(&reg->lock);
  if (victim != NULL) {
    bw__emit_evicted(reg, victim, now, false);
    bw__obj_destroy(victim);
  }
  bw_error_clear(err);
  return b;
}

bw_breaker_t *bw_registry_find_breaker(bw_registry_t *reg, const char *name) {
  bw__obj_t *o;
  bw_breaker_t *b = NULL;
  size_t len;
  uint64_t h;
  if (reg == NULL || bw__reg_check_name(name, &len, NULL) != BW_OK) return NULL;
  h = bw__name_hash(reg, name, len);
  pthread_mutex_lock(&reg->lock);
  o = bw__find_obj(reg, name, len, h);
  if (o != NULL) {
    o->holds++;
    bw__touch(reg, o, bw__clock_now(reg->clock));
    b = o->breaker;
  }
  pthread_mutex_unlock(&reg->lock);
  return b;
}

void bw_registry_put(bw_registry_t *reg, bw_breaker_t *b) {
  bw__obj_t *o;
  if (reg == NULL || b == NULL) return;
  pthread_mutex_lock(&reg->lock);
  o = bw__find_obj_by_ptr(reg, b);
  /* A put without a matching hold is a caller bug; ignoring it keeps the
   * count from wrapping (which would pin the object forever). */
  if (o != NULL && o->holds > 0) {
    o->holds--;
    /* Holding is using: idle time counts from the end of the last hold, so
     * an object used for an hour under one hold is not idle the moment it
     * is put back. */
    bw__touch(reg, o, bw__clock_now(reg->clock));
  }
  pthread_mutex_unlock(&reg->lock);
}

size_t bw_registry_evict_idle(bw_registry_t *reg) {
  bw__obj_t *o, *prev, *gone = NULL;
  size_t n = 0;
  int64_t now;
  if (reg == NULL) return 0;
  pthread_mutex_lock(&reg->lock);
  now = bw__clock_now(reg->clock);
  for (o = reg->lru_tail; o != NULL; o = prev) {
    int64_t idle = bw__idle_ms(o, now);
    uint64_t calls = 0;
    prev = o->lru_prev;
    if (idle < reg->idle_evict_ms) break; /* the rest are more recent */
    if (o->holds > 0 || !bw__evictable_state(o, NULL, &calls)) continue;
    o->idle_ms = idle;
    o->final_calls = calls;
    bw__detach(reg, o);
    /* Detached objects form a private list through lru_next, oldest last. */
    o->lru_next = gone;
    gone = o;
    n++;
  }
  reg->evictions += n;
  pthread_mutex_unlock(&reg->lock);
  /* Reverse once so events come out least recently used first. */
  prev = NULL;
  while (gone != NULL) {
    o = gone->lru_next;
    gone->lru_next = prev;
    prev = gone;
    gone = o;
  }
  while (prev != NULL) {
    o = prev->lru_next;
    bw__emit_evicted(reg, prev, now, true);
    bw__obj_destroy(prev);
    prev = o;
  }
  return n;
}

size_t bw_registry_size(const bw_registry_t *reg) {
  size_t n;
  pthread_mutex_t *m;
  if (reg == NULL) return 0;
  /* The object itself is never const (bw_registry_new allocates it), so
   * casting away const to lock its mutex is well defined. */
  m = (pthread_mutex_t *)&reg->lock;
  pthread_mutex_lock(m);
  n = reg->by_name.count;
  pthread_mutex_unlock(m);
  return n;
}

/* ---- objects of every kind --------------------------------------------- */

static const char *const bw__kind_names[BW_REGISTRY_KIND__COUNT] = {
    "breaker", "breaker_if",  "bulkhead", "limiter",    "ratelimit",
    "retry",   "budget",      "pipeline", "queue",      "stage",
    "degrade", "queue_store", "gauge",    "idem_store", "throttle"};

const char *bw_registry_kind_name(bw_registry_kind_t kind) {
  return (unsigned)kind < BW_REGISTRY_KIND__COUNT ? bw__kind_names[kind]
                                                  : "unknown";
}

/* Frees an object of `kind` that the registry made. */
static void bw__obj_free_kind(bw_registry_kind_t kind, void *obj) {
  {
    switch (kind) {
    case BW_REGISTRY_BULKHEAD:
      bw_bulkhead_free(obj);
      break;
    case BW_REGISTRY_LIMITER:
      bw_limiter_free(obj);
      break;
    case BW_REGISTRY_RATELIMIT:
      bw_ratelimit_free(obj);
      break;
    case BW_REGISTRY_RETRY:
      bw_retry_policy_free(obj);
      break;
    case BW_REGISTRY_BUDGET:
      bw_budget_free(obj);
      break;
    case BW_REGISTRY_PIPELINE:
      bw_pipeline_free(obj);
      break;
    case BW_REGISTRY_QUEUE:
      bw_queue_free(obj);
      break;
    case BW_REGISTRY_STAGE:
      bw_stage_free(obj);
      break;
    case BW_REGISTRY_DEGRADE:
      bw_degrade_free(obj);
      break;
    case BW_REGISTRY_GAUGE:
      bw_gauge_free(obj);
      break;
    case BW_REGISTRY_THROTTLE:
      bw_throttle_free(obj);
      break;
    default:
      break;
    }
  }
}

static void bw__gobj_free(bw__gobj_t *g) {
  if (g->owned) bw__obj_free_kind(g->kind, g->obj);
  bw_free(g);
}

/* The (kind, name) key: the keyed name hash, mixed with the kind. */
static uint64_t bw__gobj_hash(const bw_registry_t *reg, bw_registry_kind_t kind,
                              const char *name, size_t len) {
  return bw__name_hash(reg, name, len) ^
         ((uint64_t)kind * UINT64_C(0x9e3779b97f4a7c15));
}

static bw__gobj_t *bw__find_gobj(const bw_registry_t *reg,
                                 bw_registry_kind_t kind, const char *name,
                                 size_t len, uint64_t h) {
  bw__node_t *n;
  for (n = bw__table_chain(&reg->objects, h); n != NULL; n = n->chain) {
    bw__gobj_t *g = BW__CONTAINER(n, bw__gobj_t, node);
    if (n->hash == h && g->kind == kind && g->name_len == len &&
        memcmp(g->name, name, len) == 0)
      return g;
  }
  return NULL;
}

/* Creates the object of `kind` from its (complete) configuration. */
static void *bw__create(bw_registry_kind_t kind, const void *cfg,
                        bw_error_t *err) {
  switch (kind) {
  case BW_REGISTRY_BULKHEAD:
    return bw_bulkhead_new(cfg, err);
  case BW_REGISTRY_LIMITER:
    return bw_limiter_new(cfg, err);
  case BW_REGISTRY_RATELIMIT:
    return bw_ratelimit_new(cfg, err);
  case BW_REGISTRY_RETRY:
    return bw_retry_policy_new(cfg, err);
  case BW_REGISTRY_BUDGET:
    return bw_budget_new(cfg, err);
  case BW_REGISTRY_PIPELINE:
    return bw_pipeline_new(cfg, err);
  case BW_REGISTRY_QUEUE:
    return bw_queue_new(cfg, err);
  case BW_REGISTRY_STAGE:
    return bw_stage_new(cfg, err);
  case BW_REGISTRY_DEGRADE:
    return bw_degrade_new(cfg, err);
  case BW_REGISTRY_GAUGE:
    return bw_gauge_new(cfg, err);
  case BW_REGISTRY_THROTTLE:
    return bw_throttle_new(cfg, err);
  default:
    bw_error_set(err, BW_E_INVAL, "kind", "kind %d cannot be created here",
                 (int)kind);
    return NULL;
  }
}

/* Finds (kind, name), or inserts obj (put) or a new object made from cfg
 * (get-or-create; obj NULL). *found tells which. The object is made outside
 * the lock (a constructor may emit events, and a sink may read the
 * registry); if another thread added the name meanwhile, ours is freed and
 * theirs returned, so racing first lookups still get one object. */
static void *bw__get_or_insert(bw_registry_t *reg, bw_registry_kind_t kind,
                               const char *name, const void *cfg, void *obj,
                               bool *found, bw_error_t *err) {
  size_t len;
  uint64_t h;
  bw__gobj_t *g, *mine;
  bool owned = obj == NULL;
  *found = false;
  if (reg == NULL) {
    bw_error_set(err, BW_E_INVAL, "reg", "reg must not be NULL");
    return NULL;
  }
  if ((unsigned)kind >= BW_REGISTRY_KIND__COUNT ||
      kind == BW_REGISTRY_BREAKER) {
    bw_error_set(err, BW_E_INVAL, "kind",
                 "kind must be one of the non-breaker kinds (got %d)",
                 (int)kind);
    return NULL;
  }
  if (bw__reg_check_name(name, &len, err) != BW_OK) return NULL;
  h = bw__gobj_hash(reg, kind, name, len);
  pthread_mutex_lock(&reg->lock);
  g = bw__find_gobj(reg, kind, name, len, h);
  if (g != NULL) obj = g->obj;
  pthread_mutex_unlock(&reg->lock);
  if (g != NULL) {
    *found = true;
    bw_error_clear(err);
    return obj;
  }
  mine = bw_malloc(sizeof(*mine) + len + 1);
  if (mine == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory adding \"%.64s\"", name);
    return NULL;
  }
  memset(mine, 0, sizeof(*mine));
  if (owned) {
    obj = bw__create(kind, cfg, err);
    if (obj == NULL) {
      bw_free(mine);
      return NULL;
    }
  }
  mine->kind = kind;
  mine->obj = obj;
  mine->owned = owned;
  mine->name_len = len;
  memcpy(mine->name, name, len + 1);
  mine->node.hash = h;
  pthread_mutex_lock(&reg->lock);
  g = bw__find_gobj(reg, kind, name, len, h);
  if (g == NULL) {
    bw__table_insert(&reg->objects, &mine->node);
    mine->next = reg->gobjs;
    reg->gobjs = mine;
    reg->kind_count[kind]++;
  } else {
    obj = g->obj; /* another thread won: its object stays */
  }
  pthread_mutex_unlock(&reg->lock);
  if (g != NULL) {
    bw__gobj_free(mine); /* and ours goes, if we made it */
    *found = true;
  }
  bw_error_clear(err);
  return obj;
}

/* ---- configurations registered in advance, per (kind, name) ----------- */

/* The size of the configuration of a kind the registry creates; 0 for the
 * others (breakers have their own table; breaker interfaces and queue
 * stores are only put in). */
static size_t bw__kind_cfg_size(bw_registry_kind_t kind) {
  switch (kind) {
  case BW_REGISTRY_BULKHEAD:
    return sizeof(bw_bulkhead_config_t);
  case BW_REGISTRY_LIMITER:
    return sizeof(bw_limiter_config_t);
  case BW_REGISTRY_RATELIMIT:
    return sizeof(bw_ratelimit_config_t);
  case BW_REGISTRY_RETRY:
    return sizeof(bw_retry_config_t);
  case BW_REGISTRY_BUDGET:
    return sizeof(bw_budget_config_t);
  case BW_REGISTRY_PIPELINE:
    return sizeof(bw_pipeline_config_t);
  case BW_REGISTRY_QUEUE:
    return sizeof(bw_queue_config_t);
  case BW_REGISTRY_STAGE:
    return sizeof(bw_stage_config_t);
  case BW_REGISTRY_DEGRADE:
    return sizeof(bw_degrade_config_t);
  case BW_REGISTRY_GAUGE:
    return sizeof(bw_gauge_config_t);
  case BW_REGISTRY_THROTTLE:
    return sizeof(bw_throttle_config_t);
  default:
    return 0;
  }
}

/* Validates c (a copy of kind's configuration) under `name`, then clears
 * its name field (the looked-up name goes in at creation). */
static int bw__kind_cfg_check(bw_registry_kind_t kind, bw__any_cfg_t *c,
                              const char *name, bw_error_t *err) {
  int rc;
#define BW__CHECK(member, validate) \
  c->member.name = name;            \
  rc = validate(&c->member, err);   \
  c->member.name = NULL;            \
  return rc
  switch (kind) {
  case BW_REGISTRY_BULKHEAD:
    BW__CHECK(bulkhead, bw_bulkhead_config_validate);
  case BW_REGISTRY_LIMITER:
    BW__CHECK(limiter, bw_limiter_config_validate);
  case BW_REGISTRY_RATELIMIT:
    BW__CHECK(ratelimit, bw_ratelimit_config_validate);
  case BW_REGISTRY_RETRY:
    BW__CHECK(retry, bw_retry_config_validate);
  case BW_REGISTRY_BUDGET:
    BW__CHECK(budget, bw_budget_config_validate);
  case BW_REGISTRY_PIPELINE:
    BW__CHECK(pipeline, bw_pipeline_config_validate);
  case BW_REGISTRY_QUEUE:
    BW__CHECK(queue, bw_queue_config_validate);
  case BW_REGISTRY_STAGE:
    BW__CHECK(stage, bw_stage_config_validate);
  case BW_REGISTRY_DEGRADE:
    BW__CHECK(degrade, bw_degrade_config_validate);
  case BW_REGISTRY_GAUGE:
    BW__CHECK(gauge, bw_gauge_config_validate);
  case BW_REGISTRY_THROTTLE:
    BW__CHECK(throttle, bw_throttle_config_validate);
  default:
    return bw_error_set(err, BW_E_INVAL, "kind", "no configuration for kind %d",
                        (int)kind);
  }
#undef BW__CHECK
}

static bw__kcfg_t *bw__find_kcfg(const bw_registry_t *reg,
                                 bw_registry_kind_t kind, const char *name,
                                 size_t len, uint64_t h) {
  bw__node_t *n;
  for (n = bw__table_chain(&reg->kconfigs, h); n != NULL; n = n->chain) {
    bw__kcfg_t *k = BW__CONTAINER(n, bw__kcfg_t, node);
    if (n->hash == h && k->kind == kind && k->name_len == len &&
        memcmp(k->name, name, len) == 0)
      return k;
  }
  return NULL;
}

int bw_registry_set_config(bw_registry_t *reg, bw_registry_kind_t kind,
                           const char *name, const void *cfg, bw_error_t *err) {
  bw__any_cfg_t copy;
  bw__kcfg_t *k;
  size_t len, size;
  uint64_t h;
  int rc;
  if (reg == NULL)
    return bw_error_set(err, BW_E_INVAL, "reg", "reg must not be NULL");
  if (kind == BW_REGISTRY_BREAKER)
    return bw_registry_set_breaker_config(reg, name, cfg, err);
  size = (unsigned)kind < BW_REGISTRY_KIND__COUNT ? bw__kind_cfg_size(kind) : 0;
  if (size == 0)
    return bw_error_set(err, BW_E_INVAL, "kind",
                        "kind must be one the registry creates (breaker, "
                        "bulkhead, limiter, ratelimit, retry, budget, "
                        "pipeline, queue, stage, degrade, gauge, throttle); "
                        "got %s",
                        bw_registry_kind_name(kind));
  rc = bw__reg_check_name(name, &len, err);
  if (rc != BW_OK) return rc;
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "cfg", "cfg must not be NULL");
  memset(&copy, 0, sizeof(copy));
  memcpy(&copy, cfg, size);
  rc = bw__kind_cfg_check(kind, &copy, name, err);
  if (rc != BW_OK) return rc;
  h = bw__gobj_hash(reg, kind, name, len);
  pthread_mutex_lock(&reg->lock);
  k = bw__find_kcfg(reg, kind, name, len, h);
  if (k == NULL) {
    k = bw_malloc(sizeof(*k) + len + 1);
    if (k == NULL) {
      pthread_mutex_unlock(&reg->lock);
      return bw_error_set(err, BW_E_NOMEM, "",
                          "out of memory storing the config for \"%.64s\"",
                          name);
    }
    memset(k, 0, sizeof(*k));
    k->kind = kind;
    memcpy(k->name, name, len + 1);
    k->name_len = len;
    k->node.hash = h;
    bw__table_insert(&reg->kconfigs, &k->node);
  }
  k->cfg = copy;
  pthread_mutex_unlock(&reg->lock);
  bw_error_clear(err);
  return BW_OK;
}

/* Copies the configuration registered for (kind, name) to out (size bytes)
 * and answers true, or answers false (none, or a bad name: the lookup
 * reports that). */
static bool bw__registered_cfg(bw_registry_t *reg, bw_registry_kind_t kind,
                               const char *name, void *out, size_t size) {
  size_t len;
  uint64_t h;
  const bw__kcfg_t *k;
  if (reg == NULL || bw__reg_check_name(name, &len, NULL) != BW_OK)
    return false;
  h = bw__gobj_hash(reg, kind, name, len);
  pthread_mutex_lock(&reg->lock);
  k = bw__find_kcfg(reg, kind, name, len, h);
  if (k != NULL) memcpy(out, &k->cfg, size);
  pthread_mutex_unlock(&reg->lock);
  return k != NULL;
}

/* One get-or-create per kind: copy the configuration (the caller's, else
 * the one registered for the name, else the defaults), name it, let NULL
 * clocks and sinks inherit the registry's. */
#define BW__REG_GETTER(fn, kind, T, CT, init, fixup)                       \
  T *fn(bw_registry_t *reg, const char *name, const CT *cfg,               \
        bw_error_t *err) {                                                 \
    CT c;                                                                  \
    bool found;                                                            \
    if (cfg != NULL)                                                       \
      c = *cfg;                                                            \
    else if (!bw__registered_cfg(reg, kind, name, &c, sizeof(c)))          \
      init(&c);                                                            \
    c.name = name;                                                         \
    if (reg != NULL) {                                                     \
      fixup;                                                               \
    }                                                                      \
    return (T *)bw__get_or_insert(reg, kind, name, &c, NULL, &found, err); \
  }

#define BW__CLOCK (c.clock = c.clock != NULL ? c.clock : reg->clock)
#define BW__SINK (c.sink = c.sink != NULL ? c.sink : reg->sink)

BW__REG_GETTER(bw_registry_bulkhead, BW_REGISTRY_BULKHEAD, bw_bulkhead_t,
               bw_bulkhead_config_t, bw_bulkhead_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_limiter, BW_REGISTRY_LIMITER, bw_limiter_t,
               bw_limiter_config_t, bw_limiter_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_ratelimit, BW_REGISTRY_RATELIMIT, bw_ratelimit_t,
               bw_ratelimit_config_t, bw_ratelimit_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_retry, BW_REGISTRY_RETRY, bw_retry_policy_t,
               bw_retry_config_t, bw_retry_config_init, BW__SINK)
BW__REG_GETTER(bw_registry_budget, BW_REGISTRY_BUDGET, bw_budget_t,
               bw_budget_config_t, bw_budget_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_pipeline, BW_REGISTRY_PIPELINE, bw_pipeline_t,
               bw_pipeline_config_t, bw_pipeline_config_init, BW__SINK)
BW__REG_GETTER(bw_registry_queue, BW_REGISTRY_QUEUE, bw_queue_t,
               bw_queue_config_t, bw_queue_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_stage, BW_REGISTRY_STAGE, bw_stage_t,
               bw_stage_config_t, bw_stage_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_degrade, BW_REGISTRY_DEGRADE, bw_degrade_t,
               bw_degrade_config_t, bw_degrade_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_gauge, BW_REGISTRY_GAUGE, bw_gauge_t,
               bw_gauge_config_t, bw_gauge_config_init, BW__CLOCK;
               BW__SINK)
BW__REG_GETTER(bw_registry_throttle, BW_REGISTRY_THROTTLE, bw_throttle_t,
               bw_throttle_config_t, bw_throttle_config_init, BW__CLOCK;
               BW__SINK)

int bw_registry_put_object(bw_registry_t *reg, bw_registry_kind_t kind,
                           const char *name, void *obj, bw_error_t *err) {
  bool found;
  bw_error_t e;
  if (obj == NULL)
    return bw_error_set(err, BW_E_INVAL, "obj", "obj must not be NULL");
  if (bw__get_or_insert(reg, kind, name, NULL, obj, &found, &e) == NULL) {
    if (err != NULL) *err = e;
    return e.code;
  }
  if (found)
    return bw_error_set(err, BW_E_INVAL, "name",
                        "a %s named \"%.64s\" is already in the registry",
                        bw_registry_kind_name(kind), name);
  bw_error_clear(err);
  return BW_OK;
}

void *bw_registry_find(bw_registry_t *reg, bw_registry_kind_t kind,
                       const char *name) {
  size_t len;
  uint64_t h;
  bw__gobj_t *g;
  void *obj = NULL;
  if (kind == BW_REGISTRY_BREAKER) return bw_registry_find_breaker(reg, name);
  if (reg == NULL || (unsigned)kind >= BW_REGISTRY_KIND__COUNT ||
      bw__reg_check_name(name, &len, NULL) != BW_OK)
    return NULL;
  h = bw__gobj_hash(reg, kind, name, len);
  pthread_mutex_lock(&reg->lock);
  g = bw__find_gobj(reg, kind, name, len, h);
  if (g != NULL) obj = g->obj;
  pthread_mutex_unlock(&reg->lock);
  return obj;
}

size_t bw_registry_count(bw_registry_t *reg, bw_registry_kind_t kind) {
  size_t n;
  if (reg == NULL || (unsigned)kind >= BW_REGISTRY_KIND__COUNT) return 0;
  pthread_mutex_lock(&reg->lock);
  n = kind == BW_REGISTRY_BREAKER ? reg->by_name.count : reg->kind_count[kind];
  pthread_mutex_unlock(&reg->lock);
  return n;
}

/* ---- ordered walks ----------------------------------------------------- */

static int bw__cmp_obj_name(const void *a, const void *b) {
  const bw__obj_t *x = *(const bw__obj_t *const *)a;
  const bw__obj_t *y = *(const bw__obj_t *const *)b;
  return strcmp(x->name, y->name);
}

void bw_registry_foreach_breaker(bw_registry_t *reg, bw_registry_breaker_cb cb,
                                 void *userdata) {
  bw__obj_t **v, *o;
  bw_breaker_stats_t st;
  size_t n, i;
  if (reg == NULL || cb == NULL) return;
  pthread_mutex_lock(&reg->lock);
  n = reg->by_name.count;
  v = n > 0 ? bw_malloc(n * sizeof(*v)) : NULL;
  if (v != NULL) {
    for (i = 0, o = reg->lru_head; o != NULL; o = o->lru_next)
      v[i++] = o;
    qsort(v, n, sizeof(*v), bw__cmp_obj_name);
    for (i = 0; i < n; i++) {
      bw_breaker_stats(v[i]->breaker, &st);
      cb(v[i]->name, &st, userdata);
    }
    bw_free(v);
  } else {
    /* Out of memory (or empty): this function cannot fail, so walk in name
     * order without a buffer, picking the next larger name each time.
     * Quadratic, but only on this rare path. */
    const char *last = NULL;
    for (i = 0; i < n; i++) {
      const bw__obj_t *next = NULL;
      for (o = reg->lru_head; o != NULL; o = o->lru_next)
        if ((last == NULL || strcmp(o->name, last) > 0) &&
            (next == NULL || strcmp(o->name, next->name) < 0))
          next = o;
      if (next == NULL) break;
      bw_breaker_stats(next->breaker, &st);
      cb(next->name, &st, userdata);
      last = next->name;
    }
  }
  pthread_mutex_unlock(&reg->lock);
}

/* ---- Prometheus text exposition (format 0.0.4) -------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid.
 * Prometheus rejects a scrape with an invalid label value, so a single odd
 * name must not take every other metric down with it. */
static size_t bw__utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t need, i;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    need = 1;
  else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0; /* no overlong forms */
    if (c == 0xED) hi = 0x9F; /* no surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F; /* <= U+10FFFF */
  } else
    return 0;
  if (n < need + 1) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (i = 2; i <= need; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return need + 1;
}

/* Escapes a label value: backslash, double quote and newline as the format
 * requires, and invalid UTF-8 bytes as U+FFFD. With out == NULL only
 * measures. Returns the escaped length (without NUL). */
size_t bw__escape_label(const char *in, size_t n, char *out) {
  const unsigned char *s = (const unsigned char *)in;
  size_t i = 0, w = 0;
  while (i < n) {
    const char *rep = NULL;
    size_t k;
    if (s[i] == '\\')
      rep = "\\\\";
    else if (s[i] == '"')
      rep = "\\\"";
    else if (s[i] == '\n')
      rep = "\\n";
    if (rep != NULL) {
      if (out != NULL) memcpy(out + w, rep, 2);
      w += 2;
      i++;
      continue;
    }
    k = bw__utf8_len(s + i, n - i);
    if (k == 0) {
      if (out != NULL) memcpy(out + w, "\xEF\xBF\xBD", 3);
      w += 3;
      i++;
      continue;
    }
    if (out != NULL) memcpy(out + w, s + i, k);
    w += k;
    i += k;
  }
  if (out != NULL) out[w] = '\0';
  return w;
}

typedef struct bw__snap_s {
  const char *name;  /* raw, for sorting */
  const char *label; /* escaped */
  bw_breaker_stats_t st;
} bw__snap_t;

typedef struct bw__gsnap_s bw__gsnap_t;

typedef struct bw__snapshot_s {
  bw__snap_t *v; /* one block: the array, then the strings */
  size_t n;
  bw__gsnap_t *g; /* the other kinds: one block likewise */
  size_t ng;
  size_t kind_count[BW_REGISTRY_KIND__COUNT];
  size_t objects;
  size_t max_objects;
  uint64_t evictions;
  uint64_t limit_rejections;
  char *collected; /* the collectors' families (registry_collect.c) */
  size_t collected_len;
} bw__snapshot_t;

static int bw__cmp_snap(const void *a, const void *b) {
  return strcmp(((const bw__snap_t *)a)->name, ((const bw__snap_t *)b)->name);
}

/* Copies every object's name and stats under the lock, then sorts and
 * formats outside it: a slow scrape target never stalls lookups. */
static int bw__snapshot(bw_registry_t *reg, bw__snapshot_t *s) {
  size_t bytes, i;
  bw__obj_t *o;
  char *p;
  memset(s, 0, sizeof(*s));
  pthread_mutex_lock(&reg->lock);
  s->n = reg->by_name.count;
  s->objects = s->n;
  s->max_objects = reg->max_objects;
  s->evictions = reg->evictions;
  s->limit_rejections = reg->limit_rejections;
  memcpy(s->kind_count, reg->kind_count, sizeof(s->kind_count));
  s->kind_count[BW_REGISTRY_BREAKER] = s->n;
  bytes = s->n * sizeof(bw__snap_t);
  for (o = reg->lru_head; o != NULL; o = o->lru_next)
    bytes += o->name_len + 1 + bw__escape_label(o->name, o->name_len, NULL) + 1;
  s->v = bw_malloc(bytes);
  if (s->v == NULL) {
    pthread_mutex_unlock(&reg->lock);
    return BW_E_NOMEM;
  }
  p = (char *)(s->v + s->n);
  for (i = 0, o = reg->lru_head; o != NULL; o = o->lru_next, i++) {
    bw__snap_t *e = &s->v[i];
    memcpy(p, o->name, o->name_len + 1);
    e->name = p;
    p += o->name_len + 1;
    e->label = p;
    p += bw__escape_label(o->name, o->name_len, p) + 1;
    bw_breaker_stats(o->breaker, &e->st);
  }
  pthread_mutex_unlock(&reg->lock);
  qsort(s->v, s->n, sizeof(*s->v), bw__cmp_snap);
  return BW_OK;
}

/* Output to a FILE or to a growing buffer. The first failure sticks. */
typedef struct bw__out_s {
  FILE *fp; /* NULL: buffer */
  char *buf;
  size_t len, cap;
  int rc;
  bool om; /* OpenMetrics 1.0 instead of the text format 0.0.4 */
} bw__out_t;

static void bw__out(bw__out_t *o, const char *s, size_t n) {
  if (o->rc != BW_OK || n == 0) return;
  if (o->fp != NULL) {
    if (fwrite(s, 1, n, o->fp) != n) o->rc = BW_E_IO;
    return;
  }
  if (o->cap - o->len < n + 1) {
    size_t cap = o->cap != 0 ? o->cap : 4096;
    char *nb;
    while (cap - o->len < n + 1) {
      if (cap > SIZE_MAX / 2) {
        o->rc = BW_E_NOMEM;
        return;
      }
      cap *= 2;
    }
    nb = bw_realloc(o->buf, cap);
    if (nb == NULL) {
      o->rc = BW_E_NOMEM;
      return;
    }
    o->buf = nb;
    o->cap = cap;
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
  o->buf[o->len] = '\0';
}

static void bw__outs(bw__out_t *o, const char *s) {
  bw__out(o, s, strlen(s));
}

/* Shortest of %.15g..%.17g that reads back as the same double, with the
 * decimal point forced to '.': printf follows LC_NUMERIC, and a program
 * running under a decimal-comma locale must still produce parseable text. */
void bw__fmt_double(double d, char *buf, size_t size) {
  int prec;
  char *p;
  if (isnan(d)) {
    snprintf(buf, size, "NaN");
    return;
  }
  if (isinf(d)) {
    snprintf(buf, size, "%s", d > 0 ? "+Inf" : "-Inf");
    return;
  }
  for (prec = 15; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) break; /* same locale both ways */
  }
  for (p = buf; *p != '\0'; p++)
    if (!(*p >= '0' && *p <= '9') && *p != '-' && *p != '+' && *p != 'e')
      *p = '.';
}

/* Milliseconds as seconds, exactly (no binary rounding): 1500 -> "1.5". */
static void bw__fmt_ms_as_s(int64_t ms, char *buf, size_t size) {
  uint64_t u = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
  uint64_t whole = u / 1000, frac = u % 1000;
  const char *sign = ms < 0 ? "-" : "";
  if (frac == 0)
    snprintf(buf, size, "%s%" PRIu64, sign, whole);
  else if (frac % 100 == 0)
    snprintf(buf, size, "%s%" PRIu64 ".%" PRIu64, sign, whole, frac / 100);
  else if (frac % 10 == 0)
    snprintf(buf, size, "%s%" PRIu64 ".%02" PRIu64, sign, whole, frac / 10);
  else
    snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64, sign, whole, frac);
}

static void bw__fmt_u64(uint64_t v, char *buf, size_t size) {
  snprintf(buf, size, "%" PRIu64, v);
}

/* One sample line: metric{name="label"<extra>} value */
static void bw__sample(bw__out_t *o, const char *metric, const char *label,
                       const char *extra, const char *value) {
  bw__outs(o, metric);
  if (label != NULL) {
    bw__outs(o, "{name=\"");
    bw__outs(o, label);
    bw__outs(o, "\"");
    bw__outs(o, extra);
    bw__outs(o, "}");
  }
  bw__outs(o, " ");
  bw__outs(o, value);
  bw__outs(o, "\n");
}

static void bw__sample_u64(bw__out_t *o, const char *metric, const char *label,
                           const char *extra, uint64_t value) {
  char v[32];
  bw__fmt_u64(value, v, sizeof(v));
  bw__sample(o, metric, label, extra, v);
}

/* True when s ends with suffix. */
static bool bw__ends_with(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* The HELP and TYPE lines of a family. In OpenMetrics a counter family is
 * named without its samples' `_total` suffix, a family in a base unit gets
 * a UNIT line (its name ends in `_<unit>`), and HELP escapes the double
 * quote too (our texts have none to escape otherwise). */
static void bw__family_head(bw__out_t *o, const char *metric, const char *type,
                            const char *help) {
  size_t n = strlen(metric);
  const char *unit = NULL;
  if (o->om) {
    if (strcmp(type, "counter") == 0 && bw__ends_with(metric, n, "_total"))
      n -= strlen("_total");
    if (bw__ends_with(metric, n, "_seconds"))
      unit = "seconds";
    else if (bw__ends_with(metric, n, "_ratio"))
      unit = "ratio";
  }
  bw__outs(o, "# HELP ");
  bw__out(o, metric, n);
  bw__outs(o, " ");
  if (o->om) {
    const char *p = help, *q;
    while ((q = strpbrk(p, "\\\"")) != NULL) {
      bw__out(o, p, (size_t)(q - p));
      bw__outs(o, *q == '"' ? "\\\"" : "\\\\");
      p = q + 1;
    }
    bw__outs(o, p);
  } else {
    bw__outs(o, help);
  }
  bw__outs(o, "\n# TYPE ");
  bw__out(o, metric, n);
  bw__outs(o, " ");
  bw__outs(o, type);
  bw__outs(o, "\n");
  if (unit != NULL) {
    bw__outs(o, "# UNIT ");
    bw__out(o, metric, n);
    bw__outs(o, " ");
    bw__outs(o, unit);
    bw__outs(o, "\n");
  }
}

/* The per-breaker families, in output order. */
typedef enum bw__fam_e {
  BW__F_STATE,
  BW__F_IN_STATE,
  BW__F_METRICS_ONLY,
  BW__F_CALLS,
  BW__F_SLOW,
  BW__F_STALE,
  BW__F_ADMITTED,
  BW__F_REJECTED,
  BW__F_SHADOW,
  BW__F_TRANSITIONS,
  BW__F_CONSEC,
  BW__F_WIN_CALLS,
  BW__F_WIN_FAILURES,
  BW__F_WIN_SLOW,
  BW__F_WIN_FAIL_RATIO,
  BW__F_WIN_SLOW_RATIO,
  BW__F_HALF_OPEN,
  BW__F_TIME_IN_STATE,
  BW__F_ISOLATED,
  BW__F_RETRY_IN,
  BW__F_BREAK,
  BW__F__COUNT
} bw__fam_t;

typedef struct bw__family_s {
  const char *metric;
  const char *type;
  const char *help;
} bw__family_t;

static const bw__family_t bw__families[BW__F__COUNT] = {
    {"breakwater_breaker_state", "gauge",
     "Circuit state: 0 closed, 1 open, 2 half_open, 3 isolated, 4 disabled."},
    {"breakwater_breaker_in_state", "gauge",
     "1 for the state the circuit is in, 0 for the others."},
    {"breakwater_breaker_metrics_only", "gauge",
     "1 when the breaker only watches (never rejects), else 0."},
    {"breakwater_breaker_calls_total", "counter",
     "Calls whose outcome was reported, by outcome."},
    {"breakwater_breaker_slow_calls_total", "counter",
     "Calls slower than slow_call_ms."},
    {"breakwater_breaker_stale_total", "counter",
     "Outcomes of permits from an earlier state generation (counted, decided "
     "nothing)."},
    {"breakwater_breaker_admitted_total", "counter",
     "Acquisitions that were admitted."},
    {"breakwater_breaker_rejected_total", "counter",
     "Acquisitions that were rejected."},
    {"breakwater_breaker_shadow_rejected_total", "counter",
     "Acquisitions that would have been rejected (metrics-only mode)."},
    {"breakwater_breaker_transitions_total", "counter",
     "State transitions, by the state entered."},
    {"breakwater_breaker_consecutive_failures", "gauge",
     "Consecutive failures counted towards a trip (consecutive rule)."},
    {"breakwater_breaker_window_calls", "gauge",
     "Calls in the current window."},
    {"breakwater_breaker_window_failures", "gauge",
     "Failures in the current window."},
    {"breakwater_breaker_window_slow_calls", "gauge",
     "Slow calls in the current window."},
    {"breakwater_breaker_window_failure_ratio", "gauge",
     "Failure ratio in the current window (0 when it is empty)."},
    {"breakwater_breaker_window_slow_call_ratio", "gauge",
     "Slow-call ratio in the current window (0 when it is empty)."},
    {"breakwater_breaker_half_open_in_flight", "gauge",
     "Half-open probe calls in flight."},
    {"breakwater_breaker_time_in_state_seconds_total", "counter",
     "Time spent in each state, in seconds."},
    {"breakwater_breaker_isolated", "gauge",
     "1 while the breaker is isolated (until an operator resets), else 0."},
    {"breakwater_breaker_retry_in_seconds", "gauge",
     "Seconds until a call may be admitted (0 now); absent while isolated."},
    {"breakwater_breaker_break_seconds", "gauge",
     "The open duration now in force (or next), in seconds."},
};

/* Label values for the states, in bw_state_t order; the breaker's own names
 * (bw_state_name) are the same words, but a fixed table keeps the exposition
 * stable whatever that function returns for future states. */
static const char *const bw__state_labels[BW_STATE__COUNT] = {
    ",state=\"closed\"", ",state=\"open\"", ",state=\"half_open\"",
    ",state=\"isolated\"", ",state=\"disabled\""};

static void bw__write_family(bw__out_t *o, bw__fam_t f, const bw__snap_t *e) {
  const char *m = bw__families[f].metric;
  const bw_breaker_stats_t *st = &e->st;
  char v[48];
  int i;
  switch (f) {
  case BW__F_STATE:
    bw__sample_u64(o, m, e->label, "", (uint64_t)st->state);
    break;
  case BW__F_IN_STATE:
    for (i = 0; i < BW_STATE__COUNT; i++)
      bw__sample(o, m, e->label, bw__state_labels[i],
                 (int)st->state == i ? "1" : "0");
    break;
  case BW__F_METRICS_ONLY:
    bw__sample(o, m, e->label, "", st->metrics_only ? "1" : "0");
    break;
  case BW__F_CALLS:
    bw__fmt_u64(st->successes, v, sizeof(v));
    bw__sample(o, m, e->label, ",outcome=\"success\"", v);
    bw__fmt_u64(st->failures, v, sizeof(v));
    bw__sample(o, m, e->label, ",outcome=\"failure\"", v);
    bw__fmt_u64(st->ignored, v, sizeof(v));
    bw__sample(o, m, e->label, ",outcome=\"ignored\"", v);
    break;
  case BW__F_SLOW:
    bw__sample_u64(o, m, e->label, "", st->slow);
    break;
  case BW__F_STALE:
    bw__sample_u64(o, m, e->label, "", st->stale);
    break;
  case BW__F_ADMITTED:
    bw__sample_u64(o, m, e->label, "", st->admitted);
    break;
  case BW__F_REJECTED:
    bw__sample_u64(o, m, e->label, "", st->rejected);
    break;
  case BW__F_SHADOW:
    bw__sample_u64(o, m, e->label, "", st->shadow_rejected);
    break;
  case BW__F_TRANSITIONS:
    bw__fmt_u64(st->opens, v, sizeof(v));
    bw__sample(o, m, e->label, ",to=\"open\"", v);
    bw__fmt_u64(st->half_opens, v, sizeof(v));
    bw__sample(o, m, e->label, ",to=\"half_open\"", v);
    bw__fmt_u64(st->closes, v, sizeof(v));
    bw__sample(o, m, e->label, ",to=\"closed\"", v);
    break;
  case BW__F_CONSEC:
    bw__sample_u64(o, m, e->label, "", st->consecutive_failures);
    break;
  case BW__F_WIN_CALLS:
    bw__sample_u64(o, m, e->label, "", st->window_calls);
    break;
  case BW__F_WIN_FAILURES:
    bw__sample_u64(o, m, e->label, "", st->window_failures);
    break;
  case BW__F_WIN_SLOW:
    bw__sample_u64(o, m, e->label, "", st->window_slow);
    break;
  case BW__F_WIN_FAIL_RATIO:
    bw__fmt_double(st->window_failure_ratio, v, sizeof(v));
    bw__sample(o, m, e->label, "", v);
    break;
  case BW__F_WIN_SLOW_RATIO:
    bw__fmt_double(st->window_slow_ratio, v, sizeof(v));
    bw__sample(o, m, e->label, "", v);
    break;
  case BW__F_HALF_OPEN:
    bw__sample_u64(o, m, e->label, "", st->half_open_in_flight);
    break;
  case BW__F_TIME_IN_STATE:
    for (i = 0; i < BW_STATE__COUNT; i++) {
      bw__fmt_ms_as_s(st->time_in_state_ms[i], v, sizeof(v));
      bw__sample(o, m, e->label, bw__state_labels[i], v);
    }
    break;
  case BW__F_ISOLATED:
    bw__sample(o, m, e->label, "", st->state == BW_ISOLATED ? "1" : "0");
    break;
  case BW__F_RETRY_IN:
    /* retry_in_ms -1 means "until an operator resets": no number of seconds
     * says that, so the sample is left out and the isolated gauge says it. */
    if (st->retry_in_ms >= 0) {
      bw__fmt_ms_as_s(st->retry_in_ms, v, sizeof(v));
      bw__sample(o, m, e->label, "", v);
    }
    break;
  case BW__F_BREAK:
    bw__fmt_ms_as_s(st->current_break_ms, v, sizeof(v));
    bw__sample(o, m, e->label, "", v);
    break;
  case BW__F__COUNT:
    break;
  }
}

/* ---- the other kinds' exposition --------------------------------------- */

struct bw__gsnap_s {
  bw_registry_kind_t kind;
  const char *name;  /* raw, for sorting */
  const char *label; /* escaped */
  void *obj;
  union {
    bw_bulkhead_stats_t bh;
    bw_limiter_stats_t lim;
    bw_ratelimit_stats_t rl;
    bw_budget_stats_t bu;
    bw_pipeline_stats_t pl;
    bw_queue_stats_t q;
    bw_stage_stats_t st;
    bw_degrade_stats_t dg;
    bw_gauge_stats_t ga;
    bw_throttle_stats_t th;
    struct {
      bool ok; /* the stats call succeeded (a durable store may fail) */
      char backend[200];
      bw_queue_store_stats_t st;
    } qs;
    struct {
      bool ok; /* as qs */
      char backend[200];
      bw_idem_stats_t st;
    } is;
    struct {
      bw_state_t state;
      int64_t retry_in_ms;
      char backend[200]; /* escaped bw_breaker_if_kind */
      bool inproc;       /* an in-process breaker: st is filled */
      bw_breaker_stats_t st;
    } bi;
  } u;
};

static int bw__cmp_gsnap(const void *a, const void *b) {
  const bw__gsnap_t *x = a, *y = b;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Copies the objects' names under the lock; reads their stats outside it
 * (objects of these kinds live until bw_registry_free). */
static int bw__gsnapshot(bw_registry_t *reg, bw__gsnap_t **out, size_t *n) {
  size_t bytes, i, count;
  bw__gobj_t *g;
  bw__gsnap_t *v;
  char *p;
  *out = NULL;
  *n = 0;
  pthread_mutex_lock(&reg->lock);
  count = reg->objects.count;
  bytes = count * sizeof(bw__gsnap_t);
  for (g = reg->gobjs; g != NULL; g = g->next)
    bytes += g->name_len + 1 + bw__escape_label(g->name, g->name_len, NULL) + 1;
  v = bw_malloc(bytes != 0 ? bytes : 1);
  if (v == NULL) {
    pthread_mutex_unlock(&reg->lock);
    return BW_E_NOMEM;
  }
  p = (char *)(v + count);
  for (i = 0, g = reg->gobjs; g != NULL; g = g->next, i++) {
    bw__gsnap_t *e = &v[i];
    e->kind = g->kind;
    e->obj = g->obj;
    memcpy(p, g->name, g->name_len + 1);
    e->name = p;
    p += g->name_len + 1;
    e->label = p;
    p += bw__escape_label(g->name, g->name_len, p) + 1;
  }
  pthread_mutex_unlock(&reg->lock);
  for (i = 0; i < count; i++) {
    bw__gsnap_t *e = &v[i];
    switch (e->kind) {
    case BW_REGISTRY_BREAKER_IF: {
      const char *k = bw_breaker_if_kind(e->obj);
      size_t kl = strnlen(k, 64);
      e->u.bi.state = bw_breaker_if_state(e->obj);
      e->u.bi.retry_in_ms = bw_breaker_if_retry_in_ms(e->obj);
      /* bw_breaker_iface(b) == b: the interface heads the breaker. */
      e->u.bi.inproc = ((const bw_breaker_if_t *)e->obj)->vt == &bw__breaker_vt;
      if (e->u.bi.inproc) bw_breaker_stats(e->obj, &e->u.bi.st);
      bw__escape_label(k, kl, e->u.bi.backend);
      break;
    }
    case BW_REGISTRY_BULKHEAD:
      bw_bulkhead_stats(e->obj, &e->u.bh);
      break;
    case BW_REGISTRY_LIMITER:
      bw_limiter_stats(e->obj, &e->u.lim);
      break;
    case BW_REGISTRY_RATELIMIT:
      bw_ratelimit_stats(e->obj, &e->u.rl);
      break;
    case BW_REGISTRY_BUDGET:
      bw_budget_stats(e->obj, &e->u.bu);
      break;
    case BW_REGISTRY_PIPELINE:
      bw_pipeline_stats(e->obj, &e->u.pl);
      break;
    case BW_REGISTRY_QUEUE:
      bw_queue_stats(e->obj, &e->u.q);
      break;
    case BW_REGISTRY_STAGE:
      bw_stage_stats(e->obj, &e->u.st);
      break;
    case BW_REGISTRY_DEGRADE:
      bw_degrade_stats(e->obj, &e->u.dg);
      break;
    case BW_REGISTRY_QUEUE_STORE: {
      const char *k = bw_queue_store_kind(e->obj);
      e->u.qs.ok = bw_queue_store_stats(e->obj, &e->u.qs.st) == BW_OK;
      bw__escape_label(k, strnlen(k, 64), e->u.qs.backend);
      break;
    }
    case BW_REGISTRY_GAUGE:
      bw_gauge_stats(e->obj, &e->u.ga);
      break;
    case BW_REGISTRY_THROTTLE:
      bw_throttle_stats(e->obj, &e->u.th);
      break;
    case BW_REGISTRY_IDEM_STORE: {
      const char *k = bw_idem_store_kind(e->obj);
      e->u.is.ok = bw_idem_stats(e->obj, &e->u.is.st) == BW_OK;
      bw__escape_label(k, strnlen(k, 64), e->u.is.backend);
      break;
    }
    default:
      break;
    }
  }
  qsort(v, count, sizeof(*v), bw__cmp_gsnap);
  *out = v;
  *n = count;
  return BW_OK;
}

/* Nanoseconds as seconds, exactly: 1500000 -> "0.0015". */
static void bw__fmt_ns_as_s(int64_t ns, char *buf, size_t size) {
  uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  uint64_t whole = u / 1000000000u, frac = u % 1000000000u;
  int digits = 9;
  if (frac == 0) {
    snprintf(buf, size, "%s%" PRIu64, ns < 0 ? "-" : "", whole);
    return;
  }
  while (frac % 10 == 0) {
    frac /= 10;
    digits--;
  }
  snprintf(buf, size, "%s%" PRIu64 ".%0*" PRIu64, ns < 0 ? "-" : "", whole,
           digits, frac);
}

static void bw__sample_s(bw__out_t *o, const char *m, const char *label,
                         const char *extra, int64_t ns) {
  char v[48];
  bw__fmt_ns_as_s(ns, v, sizeof(v));
  bw__sample(o, m, label, extra, v);
}

static void bw__sample_d(bw__out_t *o, const char *m, const char *label,
                         const char *extra, double d) {
  char v[48];
  bw__fmt_double(d, v, sizeof(v));
  bw__sample(o, m, label, extra, v);
}

/* A kind's families: the writer gets the family's index. */
typedef void (*bw__gwrite_fn)(bw__out_t *o, int f, const char *m,
                              const bw__gsnap_t *e);

typedef struct bw__kindexp_s {
  const bw__family_t *fams;
  int nfams;
  bw__gwrite_fn write;
} bw__kindexp_t;

#define BW__NF(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define BW__S(extra, v) bw__sample_u64(o, m, e->label, (extra), (v))

static const bw__family_t bw__bi_fams[] = {
    {"breakwater_breaker_if_state", "gauge",
     "Circuit state of a breaker put into the registry through its interface "
     "(shm, Redis, in-process, a user's): 0 closed, 1 open, 2 half_open, 3 "
     "isolated, 4 disabled."},
    {"breakwater_breaker_if_isolated", "gauge",
     "1 while the breaker is isolated (until an operator resets), else 0."},
    {"breakwater_breaker_if_retry_in_seconds", "gauge",
     "Seconds until a call may be admitted; absent while isolated."},
    {"breakwater_breaker_if_calls_total", "counter",
     "In-process breakers: calls whose outcome was reported, by outcome."},
    {"breakwater_breaker_if_rejected_total", "counter",
     "In-process breakers: acquisitions that were rejected."},
    {"breakwater_breaker_if_transitions_total", "counter",
     "In-process breakers: state transitions, by the state entered."},
};

static void bw__bi_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  char extra[256];
  snprintf(extra, sizeof(extra), ",backend=\"%s\"", e->u.bi.backend);
  if (f == 0) BW__S(extra, (uint64_t)e->u.bi.state);
  if (f == 1) BW__S(extra, e->u.bi.state == BW_ISOLATED ? 1u : 0u);
  if (f == 2 && e->u.bi.retry_in_ms >= 0)
    bw__sample_s(o, m, e->label, extra, e->u.bi.retry_in_ms * BW_NS_PER_MS);
  if (!e->u.bi.inproc) return;
  if (f == 3) {
    char x[300];
    snprintf(x, sizeof(x), "%s,outcome=\"success\"", extra);
    BW__S(x, e->u.bi.st.successes);
    snprintf(x, sizeof(x), "%s,outcome=\"failure\"", extra);
    BW__S(x, e->u.bi.st.failures);
    snprintf(x, sizeof(x), "%s,outcome=\"ignored\"", extra);
    BW__S(x, e->u.bi.st.ignored);
  }
  if (f == 4) BW__S(extra, e->u.bi.st.rejected);
  if (f == 5) {
    char x[300];
    snprintf(x, sizeof(x), "%s,to=\"open\"", extra);
    BW__S(x, e->u.bi.st.opens);
    snprintf(x, sizeof(x), "%s,to=\"half_open\"", extra);
    BW__S(x, e->u.bi.st.half_opens);
    snprintf(x, sizeof(x), "%s,to=\"closed\"", extra);
    BW__S(x, e->u.bi.st.closes);
  }
}

static const bw__family_t bw__bh_fams[] = {
    {"breakwater_bulkhead_max_concurrent", "gauge", "Slots in all."},
    {"breakwater_bulkhead_in_use", "gauge",
     "Slots held now, including ones handed to waiters."},
    {"breakwater_bulkhead_waiting", "gauge", "Callers queued now."},
    {"breakwater_bulkhead_admitted_total", "counter",
     "Admissions, by whether the caller queued first."},
    {"breakwater_bulkhead_rejected_total", "counter",
     "Refusals, by reason: full (no slot, no wait), wait_timeout, deadline."},
    {"breakwater_bulkhead_cancelled_total", "counter",
     "Queued callbacks cancelled."},
    {"breakwater_bulkhead_released_total", "counter", "Slots released."},
    {"breakwater_bulkhead_timeouts_total", "counter",
     "Releases after the execution deadline."},
};

static void bw__bh_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_bulkhead_stats_t *s = &e->u.bh;
  switch (f) {
  case 0:
    BW__S("", s->max_concurrent);
    break;
  case 1:
    BW__S("", s->in_use);
    break;
  case 2:
    BW__S("", s->waiting);
    break;
  case 3:
    BW__S(",waited=\"false\"", s->admitted - s->admitted_after_wait);
    BW__S(",waited=\"true\"", s->admitted_after_wait);
    break;
  case 4:
    BW__S(",reason=\"full\"", s->rejected_full);
    BW__S(",reason=\"wait_timeout\"", s->wait_timeouts);
    BW__S(",reason=\"deadline\"", s->rejected_deadline);
    break;
  case 5:
    BW__S("", s->cancelled);
    break;
  case 6:
    BW__S("", s->released);
    break;
  default:
    BW__S("", s->timeouts);
    break;
  }
}

static const bw__family_t bw__lim_fams[] = {
    {"breakwater_limiter_limit", "gauge", "The whole-number limit in force."},
    {"breakwater_limiter_estimate", "gauge",
     "The algorithm's fractional limit estimate."},
    {"breakwater_limiter_in_flight", "gauge",
     "Calls admitted and not yet released, plus held slots."},
    {"breakwater_limiter_held", "gauge", "Slots held now for timed-out calls."},
    {"breakwater_limiter_startup", "gauge",
     "1 while no congestion signal has been seen yet, else 0."},
    {"breakwater_limiter_admitted_total", "counter", "Admissions."},
    {"breakwater_limiter_rejected_total", "counter", "Refusals."},
    {"breakwater_limiter_releases_total", "counter",
     "Releases, by outcome: success, dropped, ignored."},
    {"breakwater_limiter_timed_out_total", "counter",
     "Releases of calls that timed out (also counted as dropped)."},
    {"breakwater_limiter_limit_changes_total", "counter",
     "Changes of the whole-number limit."},
    {"breakwater_limiter_stuck_total", "counter",
     "Stuck probes and stuck-call events that cut the limit (stuck_ratio)."},
    {"breakwater_limiter_stuck_timeouts_total", "counter",
     "Attempts cut to the stuck age that timed out (stuck_timeout)."},
    {"breakwater_limiter_tolerated_drops_total", "counter",
     "Drops within drop_tolerance: no congestion signal (also dropped)."},
    {"breakwater_limiter_rtt_seconds", "gauge",
     "Round-trip times, by which: last, min (no-load), long (long-term "
     "average); absent before the first sample."},
};

static void bw__lim_write(bw__out_t *o, int f, const char *m,
                          const bw__gsnap_t *e) {
  const bw_limiter_stats_t *s = &e->u.lim;
  switch (f) {
  case 0:
    BW__S("", s->limit);
    break;
  case 1:
    bw__sample_d(o, m, e->label, "", s->estimate);
    break;
  case 2:
    BW__S("", s->in_flight);
    break;
  case 3:
    BW__S("", s->held);
    break;
  case 4:
    BW__S("", s->startup ? 1u : 0u);
    break;
  case 5:
    BW__S("", s->admitted);
    break;
  case 6:
    BW__S("", s->rejected);
    break;
  case 7:
    BW__S(",outcome=\"success\"", s->successes);
    BW__S(",outcome=\"dropped\"", s->drops);
    BW__S(",outcome=\"ignored\"", s->ignored);
    break;
  case 8:
    BW__S("", s->timed_out);
    break;
  case 9:
    BW__S("", s->limit_changes);
    break;
  case 10:
    BW__S("", s->stuck);
    break;
  case 11:
    BW__S("", s->stuck_timeouts);
    break;
  case 12:
    BW__S("", s->tolerated_drops);
    break;
  default:
    if (s->last_rtt_ns > 0)
      bw__sample_s(o, m, e->label, ",which=\"last\"", s->last_rtt_ns);
    if (s->min_rtt_ns > 0)
      bw__sample_s(o, m, e->label, ",which=\"min\"", s->min_rtt_ns);
    if (s->long_rtt_ns > 0)
      bw__sample_s(o, m, e->label, ",which=\"long\"", s->long_rtt_ns);
    break;
  }
}

static const bw__family_t bw__rl_fams[] = {
    {"breakwater_ratelimit_admitted_total", "counter",
     "try_acquire calls admitted."},
    {"breakwater_ratelimit_limited_total", "counter",
     "try_acquire calls refused."},
    {"breakwater_ratelimit_reserved_total", "counter",
     "reserve calls, by whether they had to wait."},
};

static void bw__rl_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_ratelimit_stats_t *s = &e->u.rl;
  if (f == 0) BW__S("", s->admitted);
  if (f == 1) BW__S("", s->limited);
  if (f == 2) {
    BW__S(",waited=\"false\"", s->reserved - s->reserved_waiting);
    BW__S(",waited=\"true\"", s->reserved_waiting);
  }
}

static const bw__family_t bw__retry_fams[] = {
    {"breakwater_retry_policy_info", "gauge",
     "1 for every retry policy in the registry (its counters are its "
     "pipelines' and budget's)."},
};

static void bw__retry_write(bw__out_t *o, int f, const char *m,
                            const bw__gsnap_t *e) {
  (void)f;
  BW__S("", 1u);
}

static const bw__family_t bw__bu_fams[] = {
    {"breakwater_budget_requests_total", "counter", "First attempts reported."},
    {"breakwater_budget_results_total", "counter",
     "Attempt results reported, by outcome: success, failure."},
    {"breakwater_budget_retries_total", "counter",
     "Retry requests, by decision: allowed, denied."},
    {"breakwater_budget_tokens", "gauge",
     "Token-bucket budgets: tokens now (ratio budgets: 0)."},
    {"breakwater_budget_window_requests", "gauge",
     "Ratio budgets: requests in the current window (token buckets: 0)."},
    {"breakwater_budget_window_retries", "gauge",
     "Ratio budgets: retries allowed in the current window (token buckets: "
     "0)."},
};

static void bw__bu_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_budget_stats_t *s = &e->u.bu;
  switch (f) {
  case 0:
    BW__S("", s->requests);
    break;
  case 1:
    BW__S(",outcome=\"success\"", s->successes);
    BW__S(",outcome=\"failure\"", s->failures);
    break;
  case 2:
    BW__S(",decision=\"allowed\"", s->allowed);
    BW__S(",decision=\"denied\"", s->denied);
    break;
  case 3:
    bw__sample_d(o, m, e->label, "", s->tokens);
    break;
  case 4:
    BW__S("", s->window_requests);
    break;
  default:
    BW__S("", s->window_retries);
    break;
  }
}

static const bw__family_t bw__pl_fams[] = {
    {"breakwater_pipeline_calls_total", "counter", "Calls begun."},
    {"breakwater_pipeline_attempts_total", "counter", "Attempts made."},
    {"breakwater_pipeline_outcomes_total", "counter",
     "Finished calls, by outcome: success or the failure kind (breaker, "
     "limit, ratelimit, budget, exhausted, permanent, deadline, retry_after, "
     "not_idempotent, elapsed)."},
    {"breakwater_pipeline_cancelled_total", "counter",
     "Calls abandoned with bw_pipeline_cancel."},
    {"breakwater_pipeline_call_duration_seconds", "histogram",
     "Duration of each finished call, begin to done, in seconds."},
};

static void bw__pl_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_pipeline_stats_t *s = &e->u.pl;
  char extra[64], name[96];
  uint64_t cum = 0;
  uint32_t b;
  int k;
  switch (f) {
  case 0:
    BW__S("", s->calls);
    break;
  case 1:
    BW__S("", s->attempts);
    break;
  case 2:
    BW__S(",outcome=\"success\"", s->successes);
    for (k = 1; k < BW_FAILURE__COUNT; k++) {
      snprintf(extra, sizeof(extra), ",outcome=\"%s\"",
               bw_failure_name((bw_failure_t)k));
      BW__S(extra, s->failures[k]);
    }
    break;
  case 3:
    BW__S("", s->cancelled);
    break;
  default:
    snprintf(name, sizeof(name), "%s_bucket", m);
    for (b = 0; b < s->latency_bucket_count; b++) {
      char le[48];
      cum += s->latency_counts[b];
      bw__fmt_ns_as_s(s->latency_buckets_us[b] * 1000, le, sizeof(le));
      snprintf(extra, sizeof(extra), ",le=\"%s\"", le);
      bw__sample_u64(o, name, e->label, extra, cum);
    }
    cum += s->latency_counts[s->latency_bucket_count];
    bw__sample_u64(o, name, e->label, ",le=\"+Inf\"", cum);
    snprintf(name, sizeof(name), "%s_sum", m);
    bw__sample_s(o, name, e->label, "", (int64_t)s->latency_sum_ns);
    snprintf(name, sizeof(name), "%s_count", m);
    bw__sample_u64(o, name, e->label, "", cum);
    break;
  }
}

static const bw__family_t bw__q_fams[] = {
    {"breakwater_queue_size", "gauge", "Items queued now."},
    {"breakwater_queue_max_size", "gauge", "The bound."},
    {"breakwater_queue_max_size_seen", "gauge", "The most items ever queued."},
    {"breakwater_queue_enqueued_total", "counter",
     "Enqueue calls that reached a decision."},
    {"breakwater_queue_admitted_total", "counter", "Items admitted."},
    {"breakwater_queue_rejected_total", "counter", "Items refused."},
    {"breakwater_queue_shed_total", "counter",
     "Admitted items later dropped to make room."},
    {"breakwater_queue_expired_total", "counter",
     "Admitted items dropped at dequeue, past their deadline."},
    {"breakwater_queue_dequeued_total", "counter",
     "Items returned for processing."},
};

static void bw__q_write(bw__out_t *o, int f, const char *m,
                        const bw__gsnap_t *e) {
  const bw_queue_stats_t *s = &e->u.q;
  const uint64_t v[] = {s->size,     s->max_size, s->max_size_seen,
                        s->enqueued, s->admitted, s->rejected,
                        s->shed,     s->expired,  s->dequeued};
  BW__S("", v[f]);
}

static const bw__family_t bw__st_fams[] = {
    {"breakwater_stage_queued", "gauge", "Items queued now."},
    {"breakwater_stage_in_flight", "gauge", "Items being processed now."},
    {"breakwater_stage_max_queue_seen", "gauge", "The longest queue seen."},
    {"breakwater_stage_max_in_flight_seen", "gauge",
     "The most items in flight seen."},
    {"breakwater_stage_submitted_total", "counter", "Items submitted."},
    {"breakwater_stage_admitted_total", "counter", "Items admitted."},
    {"breakwater_stage_rejected_total", "counter",
     "Items refused, by reason: ceiling, full."},
    {"breakwater_stage_shed_total", "counter",
     "Admitted items dropped to make room."},
    {"breakwater_stage_expired_total", "counter",
     "Admitted items dropped at next(), past their deadline."},
    {"breakwater_stage_completions_total", "counter",
     "Completions, by outcome: processed, failed."},
    {"breakwater_stage_stale_total", "counter",
     "Completions at or after their deadline."},
    {"breakwater_stage_in_regime", "gauge",
     "1 for the regime the stage is in, 0 for the others."},
    {"breakwater_stage_pressure", "gauge",
     "Pressure now, by which: own, effective (max of own and downstream)."},
    {"breakwater_stage_service_rate", "gauge",
     "Completions per second (EWMA); absent until measured."},
    {"breakwater_stage_time_in_regime_seconds_total", "counter",
     "Time spent in each regime, in seconds."},
    {"breakwater_stage_regime_transitions_total", "counter", "Regime changes."},
};

static void bw__st_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_stage_stats_t *s = &e->u.st;
  char extra[48];
  int r;
  switch (f) {
  case 0:
    BW__S("", s->queued);
    break;
  case 1:
    BW__S("", s->in_flight);
    break;
  case 2:
    BW__S("", s->max_queue_seen);
    break;
  case 3:
    BW__S("", s->max_in_flight_seen);
    break;
  case 4:
    BW__S("", s->submitted);
    break;
  case 5:
    BW__S("", s->admitted);
    break;
  case 6:
    BW__S(",reason=\"ceiling\"", s->rejected_ceiling);
    BW__S(",reason=\"full\"", s->rejected_full);
    break;
  case 7:
    BW__S("", s->shed);
    break;
  case 8:
    BW__S("", s->expired);
    break;
  case 9:
    BW__S(",outcome=\"processed\"", s->processed);
    BW__S(",outcome=\"failed\"", s->failed);
    break;
  case 10:
    BW__S("", s->stale);
    break;
  case 11:
    for (r = 0; r < BW_REGIME__COUNT; r++) {
      snprintf(extra, sizeof(extra), ",regime=\"%s\"",
               bw_regime_name((bw_regime_t)r));
      BW__S(extra, (int)s->regime == r ? 1u : 0u);
    }
    break;
  case 12:
    bw__sample_d(o, m, e->label, ",which=\"own\"", s->pressure);
    bw__sample_d(o, m, e->label, ",which=\"effective\"", s->effective_pressure);
    break;
  case 13:
    if (s->rate_measured) bw__sample_d(o, m, e->label, "", s->service_rate);
    break;
  case 14:
    for (r = 0; r < BW_REGIME__COUNT; r++) {
      snprintf(extra, sizeof(extra), ",regime=\"%s\"",
               bw_regime_name((bw_regime_t)r));
      bw__sample_s(o, m, e->label, extra, s->time_in_regime_ns[r]);
    }
    break;
  default:
    BW__S("", s->transitions);
    break;
  }
}

static const bw__family_t bw__dg_fams[] = {
    {"breakwater_degrade_level", "gauge",
     "The current level (0 = full service)."},
    {"breakwater_degrade_at_level", "gauge",
     "1 for the level served now, 0 for the others."},
    {"breakwater_degrade_probing", "gauge",
     "1 when min_dwell_ms has passed and probes are sent, else 0."},
    {"breakwater_degrade_consecutive_failures", "gauge",
     "The failure streak towards degrading."},
    {"breakwater_degrade_changes_total", "counter",
     "Level changes, by direction: down, up."},
    {"breakwater_degrade_picks_total", "counter", "Requests served, by level."},
    {"breakwater_degrade_probes_total", "counter", "Probes sent."},
    {"breakwater_degrade_reports_total", "counter",
     "Reports, by outcome: success, failure, ignored."},
    {"breakwater_degrade_stale_total", "counter",
     "Reports from an earlier generation."},
    {"breakwater_degrade_time_at_level_seconds_total", "counter",
     "Time spent at each level, in seconds."},
};

static void bw__dg_extra(const bw__gsnap_t *e, uint32_t l, char *buf,
                         size_t size) {
  const char *ln = bw_degrade_level_name(e->obj, l);
  char esc[3 * 64 + 1];
  if (ln == NULL) ln = "";
  bw__escape_label(ln, strnlen(ln, 64), esc);
  snprintf(buf, size, ",level=\"%s\"", esc);
}

static void bw__dg_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_degrade_stats_t *s = &e->u.dg;
  char extra[256];
  uint32_t l;
  switch (f) {
  case 0:
    BW__S("", s->level);
    break;
  case 1:
    for (l = 0; l < s->level_count; l++) {
      bw__dg_extra(e, l, extra, sizeof(extra));
      BW__S(extra, s->level == l ? 1u : 0u);
    }
    break;
  case 2:
    BW__S("", s->probing ? 1u : 0u);
    break;
  case 3:
    BW__S("", s->consecutive_failures);
    break;
  case 4:
    BW__S(",direction=\"down\"", s->downs);
    BW__S(",direction=\"up\"", s->ups);
    break;
  case 5:
    for (l = 0; l < s->level_count; l++) {
      bw__dg_extra(e, l, extra, sizeof(extra));
      BW__S(extra, s->picks_at[l]);
    }
    break;
  case 6:
    BW__S("", s->probes);
    break;
  case 7:
    BW__S(",outcome=\"success\"", s->successes);
    BW__S(",outcome=\"failure\"", s->failures);
    BW__S(",outcome=\"ignored\"", s->ignored);
    break;
  case 8:
    BW__S("", s->stale);
    break;
  default:
    for (l = 0; l < s->level_count; l++) {
      int64_t ms = s->time_at_ms[l]; /* the current stay included */
      char v[48];
      bw__dg_extra(e, l, extra, sizeof(extra));
      bw__fmt_ms_as_s(ms, v, sizeof(v));
      bw__sample(o, m, e->label, extra, v);
    }
    break;
  }
}

static const bw__family_t bw__qs_fams[] = {
    {"breakwater_queue_store_up", "gauge",
     "1 when the store answered the stats read, 0 when it failed (its other "
     "samples are then absent)."},
    {"breakwater_queue_store_depth", "gauge",
     "Ready, delayed and claimed items."},
    {"breakwater_queue_store_in_flight", "gauge",
     "Claimed items whose lease has not expired."},
    {"breakwater_queue_store_dlq_depth", "gauge", "Dead-letter records."},
    {"breakwater_queue_store_max_size", "gauge", "The guard's bound."},
    {"breakwater_queue_store_fill_ratio", "gauge", "depth / max_size."},
    {"breakwater_queue_store_warning", "gauge",
     "1 while warned and not yet re-armed, else 0."},
    {"breakwater_queue_store_enqueued_total", "counter",
     "Items accepted into the queue."},
    {"breakwater_queue_store_refused_full_total", "counter",
     "Items refused by the guard (sent to the dead-letter queue)."},
    {"breakwater_queue_store_claimed_total", "counter",
     "Deliveries handed out."},
    {"breakwater_queue_store_settled_total", "counter",
     "Deliveries settled, by result: acked, nacked."},
    {"breakwater_queue_store_dead_lettered_total", "counter",
     "Moves to the dead-letter queue, every reason."},
    {"breakwater_queue_store_requeued_total", "counter",
     "Dead-letter records put back."},
    {"breakwater_queue_store_dlq_dropped_total", "counter",
     "Oldest dead-letter records dropped past dlq_max."},
    {"breakwater_queue_store_stale_total", "counter",
     "Acks, nacks and rejects refused as stale."},
    {"breakwater_queue_store_warnings_total", "counter",
     "queue_warning events."},
};

static void bw__qs_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_queue_store_stats_t *s = &e->u.qs.st;
  char extra[256], x[300];
  snprintf(extra, sizeof(extra), ",backend=\"%s\"", e->u.qs.backend);
  if (f == 0) {
    BW__S(extra, e->u.qs.ok ? 1u : 0u);
    return;
  }
  if (!e->u.qs.ok) return;
  switch (f) {
  case 1:
    BW__S(extra, s->depth);
    break;
  case 2:
    BW__S(extra, s->in_flight);
    break;
  case 3:
    BW__S(extra, s->dlq_depth);
    break;
  case 4:
    BW__S(extra, s->max_size);
    break;
  case 5:
    bw__sample_d(o, m, e->label, extra, s->fill);
    break;
  case 6:
    BW__S(extra, s->warning ? 1u : 0u);
    break;
  case 7:
    BW__S(extra, s->enqueued);
    break;
  case 8:
    BW__S(extra, s->refused_full);
    break;
  case 9:
    BW__S(extra, s->claimed);
    break;
  case 10:
    snprintf(x, sizeof(x), "%s,result=\"acked\"", extra);
    BW__S(x, s->acked);
    snprintf(x, sizeof(x), "%s,result=\"nacked\"", extra);
    BW__S(x, s->nacked);
    break;
  case 11:
    BW__S(extra, s->dead_lettered);
    break;
  case 12:
    BW__S(extra, s->requeued);
    break;
  case 13:
    BW__S(extra, s->dlq_dropped);
    break;
  case 14:
    BW__S(extra, s->stale);
    break;
  default:
    BW__S(extra, s->warnings);
    break;
  }
}

static const bw__family_t bw__ga_fams[] = {
    {"breakwater_pressure_reading", "gauge",
     "The last pressure reading accepted (0 before any)."},
    {"breakwater_pressure_in_regime", "gauge",
     "1 for the regime the gauge is in, 0 for the others."},
    {"breakwater_pressure_admits_all", "gauge",
     "1 when the current regime admits every priority, else 0."},
    {"breakwater_pressure_ceiling", "gauge",
     "The largest priority the current regime admits; absent when it "
     "admits every priority."},
    {"breakwater_pressure_updates_total", "counter",
     "Pressure readings accepted."},
    {"breakwater_pressure_transitions_total", "counter",
     "Regime changes, by the regime entered."},
    {"breakwater_pressure_time_in_regime_seconds_total", "counter",
     "Time spent in each regime, in seconds."},
};

static void bw__ga_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_gauge_stats_t *s = &e->u.ga;
  char extra[48];
  int r;
  switch (f) {
  case 0:
    bw__sample_d(o, m, e->label, "", s->pressure);
    break;
  case 1:
    for (r = 0; r < BW_REGIME__COUNT; r++) {
      snprintf(extra, sizeof(extra), ",regime=\"%s\"",
               bw_regime_name((bw_regime_t)r));
      BW__S(extra, (int)s->regime == r ? 1u : 0u);
    }
    break;
  case 2:
    BW__S("", s->ceiling == BW_GAUGE_ADMIT_ALL ? 1u : 0u);
    break;
  case 3:
    if (s->ceiling != BW_GAUGE_ADMIT_ALL) BW__S("", s->ceiling);
    break;
  case 4:
    BW__S("", s->updates);
    break;
  case 5:
    for (r = 0; r < BW_REGIME__COUNT; r++) {
      snprintf(extra, sizeof(extra), ",to=\"%s\"",
               bw_regime_name((bw_regime_t)r));
      BW__S(extra, s->entered[r]);
    }
    break;
  default:
    for (r = 0; r < BW_REGIME__COUNT; r++) {
      snprintf(extra, sizeof(extra), ",regime=\"%s\"",
               bw_regime_name((bw_regime_t)r));
      bw__sample_s(o, m, e->label, extra, s->time_in_regime_ns[r]);
    }
    break;
  }
}

static const bw__family_t bw__is_fams[] = {
    {"breakwater_idem_store_up", "gauge",
     "1 when the store's stats could be read, else 0 (the other samples are "
     "then absent)."},
    {"breakwater_idem_store_keys", "gauge",
     "Records stored now (expired ones may count until swept)."},
    {"breakwater_idem_store_begins_total", "counter",
     "Begins, by result: new (the caller runs the operation), in_progress, "
     "done (a stored result was returned)."},
    {"breakwater_idem_store_completed_total", "counter", "Results stored."},
    {"breakwater_idem_store_abandoned_total", "counter",
     "Markers removed after a failed operation."},
    {"breakwater_idem_store_stale_total", "counter",
     "Completes and abandons with a token no longer held."},
};

static void bw__is_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_idem_stats_t *s = &e->u.is.st;
  char extra[256], x[300];
  snprintf(extra, sizeof(extra), ",backend=\"%s\"", e->u.is.backend);
  if (f == 0) {
    BW__S(extra, e->u.is.ok ? 1u : 0u);
    return;
  }
  if (!e->u.is.ok) return;
  switch (f) {
  case 1:
    BW__S(extra, s->keys);
    break;
  case 2:
    snprintf(x, sizeof(x), "%s,result=\"new\"", extra);
    BW__S(x, s->began);
    snprintf(x, sizeof(x), "%s,result=\"in_progress\"", extra);
    BW__S(x, s->in_progress);
    snprintf(x, sizeof(x), "%s,result=\"done\"", extra);
    BW__S(x, s->hits);
    break;
  case 3:
    BW__S(extra, s->completed);
    break;
  case 4:
    BW__S(extra, s->abandoned);
    break;
  default:
    BW__S(extra, s->stale);
    break;
  }
}

static const bw__family_t bw__th_fams[] = {
    {"breakwater_throttle_requests_total", "counter",
     "Requests entered, refused here or let out."},
    {"breakwater_throttle_accepts_total", "counter",
     "Requests the partner accepted (a success, or a 4xx answer)."},
    {"breakwater_throttle_rejected_total", "counter",
     "Requests the partner shed (a failure or a timeout)."},
    {"breakwater_throttle_throttled_total", "counter",
     "Requests refused here, before going out."},
    {"breakwater_throttle_withdrawn_total", "counter",
     "Requests admitted that never went out (refused further in, or "
     "cancelled)."},
    {"breakwater_throttle_window_requests", "gauge",
     "Requests counted in the sliding window now."},
    {"breakwater_throttle_window_accepts", "gauge",
     "Accepts counted in the sliding window now."},
    {"breakwater_throttle_refusal_probability", "gauge",
     "The probability, in [0, 1), that a new request is refused now: "
     "max(0, (requests - K * accepts) / (requests + 1)) over the window."},
};

static void bw__th_write(bw__out_t *o, int f, const char *m,
                         const bw__gsnap_t *e) {
  const bw_throttle_stats_t *s = &e->u.th;
  switch (f) {
  case 0:
    BW__S("", s->requests);
    break;
  case 1:
    BW__S("", s->accepts);
    break;
  case 2:
    BW__S("", s->rejected);
    break;
  case 3:
    BW__S("", s->throttled);
    break;
  case 4:
    BW__S("", s->withdrawn);
    break;
  case 5:
    BW__S("", s->window_requests);
    break;
  case 6:
    BW__S("", s->window_accepts);
    break;
  default:
    bw__sample_d(o, m, e->label, "", s->probability);
    break;
  }
}

static const bw__kindexp_t bw__kindexp[BW_REGISTRY_KIND__COUNT] = {
    [BW_REGISTRY_BREAKER_IF] = {bw__bi_fams, BW__NF(bw__bi_fams), bw__bi_write},
    [BW_REGISTRY_BULKHEAD] = {bw__bh_fams, BW__NF(bw__bh_fams), bw__bh_write},
    [BW_REGISTRY_LIMITER] = {bw__lim_fams, BW__NF(bw__lim_fams), bw__lim_write},
    [BW_REGISTRY_RATELIMIT] = {bw__rl_fams, BW__NF(bw__rl_fams), bw__rl_write},
    [BW_REGISTRY_RETRY] = {bw__retry_fams, BW__NF(bw__retry_fams),
                           bw__retry_write},
    [BW_REGISTRY_BUDGET] = {bw__bu_fams, BW__NF(bw__bu_fams), bw__bu_write},
    [BW_REGISTRY_PIPELINE] = {bw__pl_fams, BW__NF(bw__pl_fams), bw__pl_write},
    [BW_REGISTRY_QUEUE] = {bw__q_fams, BW__NF(bw__q_fams), bw__q_write},
    [BW_REGISTRY_STAGE] = {bw__st_fams, BW__NF(bw__st_fams), bw__st_write},
    [BW_REGISTRY_DEGRADE] = {bw__dg_fams, BW__NF(bw__dg_fams), bw__dg_write},
    [BW_REGISTRY_QUEUE_STORE] = {bw__qs_fams, BW__NF(bw__qs_fams),
                                 bw__qs_write},
    [BW_REGISTRY_GAUGE] = {bw__ga_fams, BW__NF(bw__ga_fams), bw__ga_write},
    [BW_REGISTRY_IDEM_STORE] = {bw__is_fams, BW__NF(bw__is_fams), bw__is_write},
    [BW_REGISTRY_THROTTLE] = {bw__th_fams, BW__NF(bw__th_fams), bw__th_write},
};

/* Every kind with at least one object: its families in table order, each
 * with all of the kind's objects in name order (the snapshot is sorted by
 * kind, then name). */
static void bw__write_kinds(bw__out_t *o, const bw__gsnap_t *v, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    const bw__kindexp_t *k = &bw__kindexp[v[i].kind];
    int f;
    while (j < n && v[j].kind == v[i].kind)
      j++;
    for (f = 0; k->write != NULL && f < k->nfams; f++) {
      size_t x;
      bw__family_head(o, k->fams[f].metric, k->fams[f].type, k->fams[f].help);
      for (x = i; x < j; x++)
        k->write(o, f, k->fams[f].metric, &v[x]);
    }
    i = j;
  }
}

static void bw__write_exposition(bw__out_t *o, const bw__snapshot_t *s) {
  char v[48];
  size_t i;
  int f;
  /* One HELP/TYPE per family and all of its samples together, as the
   * format requires; names in byte order within each family. */
  for (f = 0; f < BW__F__COUNT; f++) {
    bw__family_head(o, bw__families[f].metric, bw__families[f].type,
                    bw__families[f].help);
    for (i = 0; i < s->n; i++)
      bw__write_family(o, (bw__fam_t)f, &s->v[i]);
  }
  bw__write_kinds(o, s->g, s->ng);
  bw__family_head(o, "breakwater_registry_kind_objects", "gauge",
                  "Live objects in the registry, by kind.");
  for (i = 0; i < BW_REGISTRY_KIND__COUNT; i++) {
    char extra[48];
    snprintf(extra, sizeof(extra), "kind=\"%s\"",
             bw_registry_kind_name((bw_registry_kind_t)i));
    bw__outs(o, "breakwater_registry_kind_objects{");
    bw__outs(o, extra);
    bw__fmt_u64((uint64_t)s->kind_count[i], v, sizeof(v));
    bw__outs(o, "} ");
    bw__outs(o, v);
    bw__outs(o, "\n");
  }
  bw__family_head(o, "breakwater_registry_objects", "gauge",
                  "Live in-process breakers in the registry (the objects of "
                  "kind breaker, which max_objects caps).");
  bw__fmt_u64((uint64_t)s->objects, v, sizeof(v));
  bw__sample(o, "breakwater_registry_objects", NULL, NULL, v);
  bw__family_head(o, "breakwater_registry_max_objects", "gauge",
                  "The registry's object cap (0 = unbounded).");
  bw__fmt_u64((uint64_t)s->max_objects, v, sizeof(v));
  bw__sample(o, "breakwater_registry_max_objects", NULL, NULL, v);
  bw__family_head(o, "breakwater_registry_evictions_total", "counter",
                  "Idle objects evicted.");
  bw__fmt_u64(s->evictions, v, sizeof(v));
  bw__sample(o, "breakwater_registry_evictions_total", NULL, NULL, v);
  bw__family_head(o, "breakwater_registry_limit_rejections_total", "counter",
                  "Lookups refused at the cap with nothing evictable.");
  bw__fmt_u64(s->limit_rejections, v, sizeof(v));
  bw__sample(o, "breakwater_registry_limit_rejections_total", NULL, NULL, v);
  bw__out(o, s->collected, s->collected_len);
  if (o->om) bw__outs(o, "# EOF\n");
}

static int bw__write_to(bw_registry_t *reg, FILE *fp, bool om) {
  bw__snapshot_t s;
  bw__out_t o;
  int rc;
  if (reg == NULL || fp == NULL) return BW_E_INVAL;
  rc = bw__snapshot(reg, &s);
  if (rc != BW_OK) return rc;
  rc = bw__gsnapshot(reg, &s.g, &s.ng);
  if (rc == BW_OK)
    rc = bw__collectors_render(bw__registry_collectors(reg, false), om,
                               &s.collected, &s.collected_len);
  if (rc != BW_OK) {
    bw_free(s.v);
    bw_free(s.g);
    return rc;
  }
  memset(&o, 0, sizeof(o));
  o.fp = fp;
  o.rc = BW_OK;
  o.om = om;
  bw__write_exposition(&o, &s);
  bw_free(s.v);
  bw_free(s.g);
  bw_free(s.collected);
  /* Flush so a write error (a full disk, a closed pipe) is reported here and
   * not lost in stdio's buffer. */
  if (o.rc == BW_OK && (fflush(fp) != 0 || ferror(fp))) o.rc = BW_E_IO;
  return o.rc;
}

int bw_registry_write_prometheus(bw_registry_t *reg, FILE *fp) {
  return bw__write_to(reg, fp, false);
}

int bw_registry_write_openmetrics(bw_registry_t *reg, FILE *fp) {
  return bw__write_to(reg, fp, true);
}

static char *bw__text(bw_registry_t *reg, size_t *len, bool om) {
  bw__snapshot_t s;
  bw__out_t o;
  if (len != NULL) *len = 0;
  if (reg == NULL) return NULL;
  if (bw__snapshot(reg, &s) != BW_OK) return NULL;
  if (bw__gsnapshot(reg, &s.g, &s.ng) != BW_OK) {
    bw_free(s.v);
    return NULL;
  }
  if (bw__collectors_render(bw__registry_collectors(reg, false), om,
                            &s.collected, &s.collected_len) != BW_OK) {
    bw_free(s.v);
    bw_free(s.g);
    return NULL;
  }
  memset(&o, 0, sizeof(o));
  o.rc = BW_OK;
  o.om = om;
  bw__write_exposition(&o, &s);
  bw_free(s.v);
  bw_free(s.g);
  bw_free(s.collected);
  if (o.rc != BW_OK) {
    bw_free(o.buf);
    return NULL;
  }
  if (len != NULL) *len = o.len;
  return o.buf;
}

char *bw_registry_prometheus(bw_registry_t *reg, size_t *len) {
  return bw__text(reg, len, false);
}

char *bw_registry_openmetrics(bw_registry_t *reg, size_t *len) {
  return bw__text(reg, len, true);
}

void bw_registry_free(bw_registry_t *reg) {
  if (reg == NULL) return;
  bw__collectors_free(reg->collectors);
  pthread_mutex_destroy(&reg->lock);
  bw__registry_destroy(reg);
}

/* ---- for the collectors (registry_collect.c) ---------------------------- */

bw__collectors_t *bw__registry_collectors(bw_registry_t *reg, bool create) {
  bw__collectors_t *c;
  pthread_mutex_lock(&reg->lock);
  if (reg->collectors == NULL && create) reg->collectors = bw__collectors_new();
  c = reg->collectors;
  pthread_mutex_unlock(&reg->lock);
  return c;
}

void bw__registry_foreach_family(void (*cb)(void *ud, const char *metric,
                                            const char *type),
                                 void *ud) {
  static const char *const own[][2] = {
      {"breakwater_registry_kind_objects", "gauge"},
      {"breakwater_registry_objects", "gauge"},
      {"breakwater_registry_max_objects", "gauge"},
      {"breakwater_registry_evictions_total", "counter"},
      {"breakwater_registry_limit_rejections_total", "counter"}};
  int f, k;
  for (f = 0; f < BW__F__COUNT; f++)
    cb(ud, bw__families[f].metric, bw__families[f].type);
  for (k = 0; k < BW_REGISTRY_KIND__COUNT; k++)
    for (f = 0; f < bw__kindexp[k].nfams; f++)
      cb(ud, bw__kindexp[k].fams[f].metric, bw__kindexp[k].fams[f].type);
  for (f = 0; f < BW__NF(own); f++)
    cb(ud, own[f][0], own[f][1]);
}
