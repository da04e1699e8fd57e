/* Shared-memory segments: create / attach / validate, the object table and
 * the lease words (see shm_internal.h for the layout). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shm_internal.h"

/* How long an attacher waits for a creator that has created the name but
 * not finished the header (bounded; then it reports the segment). */
#define BW__SHM_INIT_WAIT_MS 500
/* The allocation lease: creating an object takes microseconds. */
#define BW__SHM_ALLOC_LEASE_NS (2 * BW_NS_PER_S)

/* ---- lease words --------------------------------------------------------- */

static void bw__pause_short(int attempt) {
  if (attempt < 16) {
    sched_yield();
  } else {
    struct timespec ts = {0, 100000}; /* 0.1 ms */
    nanosleep(&ts, NULL);
  }
}

int64_t bw__shm_lease_lock(_Atomic int64_t *word, const bw_clock_t *clock,
                           int64_t lease_ns, int tries) {
  for (int i = 0; i < tries; i++) {
    int64_t now = bw_clock_now(clock);
    int64_t cur = atomic_load_explicit(word, memory_order_acquire);
    int64_t mine = now + lease_ns;
    if (mine == 0) mine = 1; /* 0 means free */
    if ((cur == 0 || cur <= now) &&
        atomic_compare_exchange_strong_explicit(
            word, &cur, mine, memory_order_acq_rel, memory_order_acquire))
      return mine;
    if (i + 1 < tries) bw__pause_short(i);
  }
  return 0;
}

void bw__shm_lease_unlock(_Atomic int64_t *word, int64_t mine) {
  /* A CAS, not a store: if our lease expired and was stolen, the word is the
   * thief's now. */
  int64_t expect = mine;
  atomic_compare_exchange_strong_explicit(
      word, &expect, 0, memory_order_release, memory_order_relaxed);
}

/* ---- counter stripes ----------------------------------------------------- */

_Atomic unsigned bw__shm_fork_epoch = 1;
_Thread_local unsigned bw__shm_tls_epoch;
_Thread_local unsigned bw__shm_tls_stripe;
static pthread_once_t bw__shm_atfork_once = PTHREAD_ONCE_INIT;

static void bw__shm_after_fork(void) {
  atomic_fetch_add_explicit(&bw__shm_fork_epoch, 1, memory_order_relaxed);
}

static void bw__shm_register_atfork(void) {
  pthread_atfork(NULL, NULL, bw__shm_after_fork);
}

unsigned bw__shm_stripe_slow(void) {
  unsigned pid;
  pthread_once(&bw__shm_atfork_once, bw__shm_register_atfork);
  /* Read the epoch before getpid: a fork in between bumps it again in the
   * child, which then recomputes. */
  bw__shm_tls_epoch =
      atomic_load_explicit(&bw__shm_fork_epoch, memory_order_relaxed);
  pid = (unsigned)getpid();
  bw__shm_tls_stripe =
      ((pid * 2654435761u) >> 16 ^ bw_stripe()) % BW__SHM_STRIPES;
  return bw__shm_tls_stripe;
}

/* ---- names --------------------------------------------------------------- */

/* "name" or "/name" -> "/name"; no other '/'. */
static int bw__shm_norm_name(const char *name, char *out, size_t size,
                             bw_error_t *err) {
  const char *n;
  if (bw_name_check(name, "name", err) != BW_OK) return BW_E_INVAL;
  n = name[0] == '/' ? name + 1 : name;
  if (n[0] == '\0')
    return bw_error_set(err, BW_E_INVAL, "name",
                        "name must have a character after '/' (got \"%s\")",
                        name);
  if (strchr(n, '/') != NULL)
    return bw_error_set(err, BW_E_INVAL, "name",
                        "name must not contain '/' after the first character "
                        "(got \"%s\")",
                        name);
  snprintf(out, size, "/%s", n);
  return BW_OK;
}

/* ---- open / attach ------------------------------------------------------- */

void bw_shm_config_init(bw_shm_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = NULL;
  cfg->mode = BW_SHM_OPEN_OR_CREATE;
  cfg->size = BW__SHM_DEFAULT_SIZE;
}

static void bw__sleep_ms(void) {
  struct timespec ts = {0, BW_NS_PER_MS};
  nanosleep(&ts, NULL);
}

static int bw__shm_io(bw_error_t *err, const char *what, const char *name,
                      int e) {
  return bw_error_set(err, BW_E_IO, "name",
                      "%s of shared-memory segment %s "
                      "failed: %s",
                      what, name, strerror(e));
}

static int bw__shm_create(bw_shm_t *s, int fd, const bw_shm_config_t *cfg,
                          bw_error_t *err) {
  bw__shm_header_t *h;
  size_t size = cfg->size;
  void *p;
  /* The group first, then the mode: the group bits open only once the
   * group is the named one. */
  if (cfg->allow_group && fchown(fd, (uid_t)-1, cfg->group) != 0)
    return bw_error_set(err, errno == EPERM ? BW_E_INVAL : BW_E_IO, "group",
                        "cannot give shared-memory segment %s to group %lu: "
                        "%s (the creator must be in the group, or root)",
                        s->name, (unsigned long)cfg->group, strerror(errno));
  if (fchmod(fd, cfg->allow_group ? 0660 : 0600) != 0)
    return bw__shm_io(err, "fchmod", s->name, errno);
  if (ftruncate(fd, (off_t)size) != 0)
    return bw__shm_io(err, "ftruncate", s->name, errno);
  p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return bw__shm_io(err, "mmap", s->name, errno);
  s->base = p;
  s->size = size;
  h = p;
  /* ftruncate zero-fills: only the non-zero fields need writing. */
  h->version = BW__SHM_VERSION;
  h->header_size = (uint32_t)sizeof(bw__shm_header_t);
  h->size = size;
  h->max_objects = BW_SHM_MAX_OBJECTS;
  atomic_store_explicit(&h->used, bw__shm_round(sizeof(bw__shm_header_t)),
                        memory_order_relaxed);
  atomic_store_explicit(&h->magic, BW__SHM_MAGIC, memory_order_release);
  return BW_OK;
}

/* Whether this configuration trusts a segment with this owner and mode
 * (see bw_shm_config_t): BW_OK, or BW_E_INVAL naming the owner, group,
 * mode and the rule. Another user who can open the segment can write any
 * state into it (isolate the breaker, drain the budget). */
static int bw__shm_trust(const bw_shm_t *s, const struct stat *st,
                         const bw_shm_config_t *cfg, bw_error_t *err) {
  unsigned mode = (unsigned)(st->st_mode & 07777);
  uid_t me = geteuid();
  if (st->st_uid == me && (mode & ~0600u) == 0) return BW_OK;
  if (cfg->allow_group && st->st_gid == cfg->group && (mode & ~0660u) == 0)
    return BW_OK;
  if (!cfg->allow_group)
    return bw_error_set(
        err, BW_E_INVAL, "name",
        "shared-memory segment %s has owner uid %lu, group %lu, mode 0%03o: "
        "refused, it must be euid %lu's and at most 0600 (allow_group and "
        "group share it with a group)",
        s->name, (unsigned long)st->st_uid, (unsigned long)st->st_gid, mode,
        (unsigned long)me);
  return bw_error_set(
      err, BW_E_INVAL, "group",
      "shared-memory segment %s has owner uid %lu, group %lu, mode 0%03o: "
      "refused, with allow_group it must be euid %lu's and at most 0600, "
      "or group %lu's and at most 0660",
      s->name, (unsigned long)st->st_uid, (unsigned long)st->st_gid, mode,
      (unsigned long)me, (unsigned long)cfg->group);
}

static int bw__shm_attach(bw_shm_t *s, int fd, const bw_shm_config_t *cfg,
                          bw_error_t *err) {
  struct stat st;
  const bw__shm_header_t *h;
  uint64_t magic = 0;
  void *p;
  int waited = 0;
  /* A creator may have made the name and not sized it yet: wait a little. */
  for (;;) {
    if (fstat(fd, &st) != 0) return bw__shm_io(err, "fstat", s->name, errno);
    /* Before anything is read or waited for: an untrusted segment is
     * refused whatever its contents. */
    if (bw__shm_trust(s, &st, cfg, err) != BW_OK) return BW_E_INVAL;
    if ((size_t)st.st_size >= sizeof(bw__shm_header_t) ||
        waited >= BW__SHM_INIT_WAIT_MS)
      break;
    bw__sleep_ms();
    waited++;
  }
  if ((size_t)st.st_size < sizeof(bw__shm_header_t))
    return bw_error_set(err, BW_E_INVAL, "size",
                        "shared-memory segment %s is %lld bytes, too small: "
                        "the size of a breakwater segment header is %zu "
                        "bytes",
                        s->name, (long long)st.st_size,
                        sizeof(bw__shm_header_t));
  p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return bw__shm_io(err, "mmap", s->name, errno);
  s->base = p;
  s->size = (size_t)st.st_size;
  h = p;
  for (;;) {
    magic = atomic_load_explicit(&h->magic, memory_order_acquire);
    if (magic != 0 || waited >= BW__SHM_INIT_WAIT_MS) break;
    bw__sleep_ms();
    waited++;
  }
  if (magic == 0)
    return bw_error_set(err, BW_E_INVAL, "name",
                        "shared-memory segment %s was never initialized "
                        "(magic is 0 after %d ms): its creator may have "
                        "died; unlink it and create it again",
                        s->name, BW__SHM_INIT_WAIT_MS);
  if (magic != BW__SHM_MAGIC)
    return bw_error_set(err, BW_E_INVAL, "name",
                        "shared-memory segment %s is not a breakwater "
                        "segment (magic 0x%016llx, expected 0x%016llx)",
                        s->name, (unsigned long long)magic,
                        (unsigned long long)BW__SHM_MAGIC);
  if (h->version != BW__SHM_VERSION)
    return bw_error_set(err, BW_E_INVAL, "version",
                        "shared-memory segment %s has layout version %u, "
                        "this library reads version %u",
                        s->name, h->version, BW__SHM_VERSION);
  if (h->header_size != sizeof(bw__shm_header_t))
    return bw_error_set(err, BW_E_INVAL, "header_size",
                        "shared-memory segment %s has a %u-byte header, "
                        "this library's is %zu bytes",
                        s->name, h->header_size, sizeof(bw__shm_header_t));
  if (h->size != (uint64_t)st.st_size)
    return bw_error_set(err, BW_E_INVAL, "size",
                        "shared-memory segment %s says it is %llu bytes "
                        "but is %lld bytes (resized since its creation: "
                        "processes mapping it get SIGBUS past the end; "
                        "unlink it and create it again)",
                        s->name, (unsigned long long)h->size,
                        (long long)st.st_size);
  if (h->max_objects != BW_SHM_MAX_OBJECTS ||
      atomic_load(&((bw__shm_header_t *)p)->count) > BW_SHM_MAX_OBJECTS ||
      atomic_load(&((bw__shm_header_t *)p)->used) > h->size)
    return bw_error_set(
        err, BW_E_INVAL, "name",
        "shared-memory segment %s has a corrupt object "
        "table (max_objects %u, count %u, used %llu of %llu)",
        s->name, h->max_objects, atomic_load(&((bw__shm_header_t *)p)->count),
        (unsigned long long)atomic_load(&((bw__shm_header_t *)p)->used),
        (unsigned long long)h->size);
  return BW_OK;
}

bw_shm_t *bw_shm_open(const bw_shm_config_t *cfg, bw_error_t *err) {
  bw_shm_t *s;
  int fd = -1, rc;
  if (cfg == NULL) {
    bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
    return NULL;
  }
  if (cfg->mode != BW_SHM_CREATE && cfg->mode != BW_SHM_ATTACH &&
      cfg->mode != BW_SHM_OPEN_OR_CREATE) {
    bw_error_set(err, BW_E_INVAL, "mode",
                 "mode must be BW_SHM_CREATE, BW_SHM_ATTACH or "
                 "BW_SHM_OPEN_OR_CREATE (got %d)",
                 (int)cfg->mode);
    return NULL;
  }
  if (!cfg->allow_group && cfg->group != 0) {
    bw_error_set(err, BW_E_INVAL, "group",
                 "group is used only with allow_group (got group %lu and "
                 "allow_group false): set allow_group to share the segment "
                 "with the group, or leave group 0",
                 (unsigned long)cfg->group);
    return NULL;
  }
  if (cfg->allow_group && cfg->group == (gid_t)-1) {
    bw_error_set(err, BW_E_INVAL, "group",
                 "group must be a group id, not (gid_t)-1, when allow_group "
                 "is set");
    return NULL;
  }
  if (cfg->mode != BW_SHM_ATTACH &&
      (cfg->size < BW__SHM_MIN_SIZE || cfg->size > BW__SHM_MAX_SIZE)) {
    bw_error_set(err, BW_E_INVAL, "size",
                 "size must be in [%zu, %zu] bytes (got %zu)", BW__SHM_MIN_SIZE,
                 BW__SHM_MAX_SIZE, cfg->size);
    return NULL;
  }
  s = bw_calloc(1, sizeof(*s));
  if (s == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  s->fd = -1;
  if (bw__shm_norm_name(cfg->name, s->name, sizeof(s->name), err) != BW_OK) {
    bw_free(s);
    return NULL;
  }
  if (cfg->mode != BW_SHM_ATTACH) {
    fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
      s->created = true;
      rc = bw__shm_create(s, fd, cfg, err);
      if (rc != BW_OK) {
        close(fd);
        if (s->base != NULL) munmap(s->base, s->size);
        shm_unlink(s->name);
        bw_free(s);
        return NULL;
      }
      s->fd = fd;
      bw_error_clear(err);
      return s;
    }
    if (errno != EEXIST) {
      bw__shm_io(err, "shm_open (create)", s->name, errno);
      bw_free(s);
      return NULL;
    }
    if (cfg->mode == BW_SHM_CREATE) {
      bw_error_set(err, BW_E_INVAL, "name",
                   "the name %s is taken: the shared-memory segment "
                   "already exists (mode BW_SHM_CREATE creates only; "
                   "attach, or unlink it first)",
                   s->name);
      bw_free(s);
      return NULL;
    }
  }
  fd = shm_open(s->name, O_RDWR, 0);
  if (fd < 0) {
    if (errno == ENOENT)
      bw_error_set(err, BW_E_NOTFOUND, "name",
                   "shared-memory segment %s does not exist (mode "
                   "BW_SHM_ATTACH needs a segment created first)",
                   s->name);
    else
      bw__shm_io(err, "shm_open (attach)", s->name, errno);
    bw_free(s);
    return NULL;
  }
  rc = bw__shm_attach(s, fd, cfg, err);
  if (rc != BW_OK) {
    close(fd);
    if (s->base != NULL) munmap(s->base, s->size);
    bw_free(s);
    return NULL;
  }
  s->fd = fd;
  bw_error_clear(err);
  return s;
}

void bw_shm_close(bw_shm_t *shm) {
  if (shm == NULL) return;
  munmap(shm->base, shm->size);
  if (shm->fd >= 0) close(shm->fd);
  bw_free(shm);
}

int bw_shm_unlink(const char *name, bw_error_t *err) {
  char n[BW_NAME_MAX + 2];
  if (bw__shm_norm_name(name, n, sizeof(n), err) != BW_OK) return BW_E_INVAL;
  if (shm_unlink(n) != 0) {
    if (errno == ENOENT)
      return bw_error_set(err, BW_E_NOTFOUND, "name",
                          "shared-memory segment %s does not exist", n);
    return bw__shm_io(err, "shm_unlink", n, errno);
  }
  bw_error_clear(err);
  return BW_OK;
}

const char *bw_shm_name(const bw_shm_t *shm) {
  return shm == NULL ? "" : shm->name;
}

void bw_shm_stats(const bw_shm_t *shm, bw_shm_stats_t *out) {
  const bw__shm_header_t *h;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (shm == NULL) return;
  h = (const bw__shm_header_t *)shm->base;
  out->size = shm->size;
  out->used = (size_t)atomic_load_explicit(&h->used, memory_order_relaxed);
  out->objects = atomic_load_explicit(&h->count, memory_order_acquire);
  out->created = shm->created;
}

/* ---- objects ------------------------------------------------------------- */

int bw__shm_mismatch(bw_error_t *err, const char *kind, const char *seg,
                     const char *field, const char *was, const char *now) {
  return bw_error_set(err, BW_E_INVAL, field,
                      "%s in shared-memory segment %s was created with %s "
                      "%s; this configuration has %s (every process must "
                      "use the same configuration)",
                      kind, seg, field, was, now);
}

int bw__shm_mismatch_u(bw_error_t *err, const char *kind, const char *seg,
                       const char *field, uint64_t was, uint64_t now) {
  char a[24], b[24];
  snprintf(a, sizeof(a), "%llu", (unsigned long long)was);
  snprintf(b, sizeof(b), "%llu", (unsigned long long)now);
  return bw__shm_mismatch(err, kind, seg, field, a, b);
}

int bw__shm_mismatch_i(bw_error_t *err, const char *kind, const char *seg,
                       const char *field, int64_t was, int64_t now) {
  char a[24], b[24];
  snprintf(a, sizeof(a), "%lld", (long long)was);
  snprintf(b, sizeof(b), "%lld", (long long)now);
  return bw__shm_mismatch(err, kind, seg, field, a, b);
}

int bw__shm_mismatch_g(bw_error_t *err, const char *kind, const char *seg,
                       const char *field, double was, double now) {
  char a[32], b[32];
  snprintf(a, sizeof(a), "%g", was);
  snprintf(b, sizeof(b), "%g", now);
  return bw__shm_mismatch(err, kind, seg, field, a, b);
}

static const char *bw__kind_name(uint32_t kind) {
  static const char *const names[] = {"object", "breaker", "budget", "limit"};
  return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "object";
}

/* Checks a published entry and returns its block, or NULL (err set). */
static void *bw__shm_entry_block(bw_shm_t *shm, const bw__shm_entry_t *e,
                                 uint32_t kind, size_t min_size,
                                 bw_error_t *err) {
  const bw__shm_obj_t *o;
  if (e->kind != kind) {
    bw_error_set(err, BW_E_INVAL, "name",
                 "name \"%s\" in shared-memory segment %s is a %s, not a %s",
                 e->name, shm->name, bw__kind_name(e->kind),
                 bw__kind_name(kind));
    return NULL;
  }
  if (e->offset % BW__SHM_ALIGN != 0 || e->offset > shm->size ||
      e->size > shm->size - e->offset || e->size < min_size) {
    bw_error_set(err, BW_E_INVAL, "name",
                 "\"%s\" in shared-memory segment %s has a corrupt entry "
                 "(offset %llu, size %llu, segment %zu bytes)",
                 e->name, shm->name, (unsigned long long)e->offset,
                 (unsigned long long)e->size, shm->size);
    return NULL;
  }
  o = (const bw__shm_obj_t *)(shm->base + e->offset);
  if (o->magic != BW__SHM_OBJ_MAGIC || o->kind != kind) {
    bw_error_set(err, BW_E_INVAL, "name",
                 "\"%s\" in shared-memory segment %s is corrupt (bad block "
                 "magic or kind)",
                 e->name, shm->name);
    return NULL;
  }
  return shm->base + e->offset;
}

int bw__shm_object(bw_shm_t *shm, const char *name, uint32_t kind, size_t size,
                   bw__shm_init_fn init, bw__shm_check_fn check,
                   const void *arg, void **out, bw_error_t *err) {
  bw__shm_header_t *h = (bw__shm_header_t *)shm->base;
  int64_t mine;
  uint32_t n;
  uint64_t used;
  bw__shm_entry_t *e;
  size_t need = bw__shm_round(size);
  struct stat st;
  *out = NULL;
  /* Truncated while mapped, the header itself may be past the end (SIGBUS
   * at the first read): check the size before touching anything. */
  if (fstat(shm->fd, &st) != 0)
    return bw__shm_io(err, "fstat", shm->name, errno);
  if ((uint64_t)st.st_size != (uint64_t)shm->size)
    return bw_error_set(err, BW_E_INVAL, "size",
                        "shared-memory segment %s is %lld bytes but %zu "
                        "were mapped (resized while mapped: SIGBUS past the "
                        "new end); unlink it and create it again",
                        shm->name, (long long)st.st_size, shm->size);
  /* The lease outlives a dead holder by 2 s; waiting up to ~3 s lets the
   * next caller steal it. */
  mine = bw__shm_lease_lock(&h->lock, bw_clock_monotonic(),
                            BW__SHM_ALLOC_LEASE_NS, 30000);
  if (mine == 0)
    return bw_error_set(err, BW_E_TIMEOUT, "name",
                        "shared-memory segment %s: the object table stayed "
                        "locked by another process",
                        shm->name);
  n = atomic_load_explicit(&h->count, memory_order_acquire);
  if (n > BW_SHM_MAX_OBJECTS) n = BW_SHM_MAX_OBJECTS;
  for (uint32_t i = 0; i < n; i++) {
    void *blk;
    e = &h->entries[i];
    if (strncmp(e->name, name, sizeof(e->name)) != 0) continue;
    blk = bw__shm_entry_block(shm, e, kind, sizeof(bw__shm_obj_t), err);
    bw__shm_lease_unlock(&h->lock, mine);
    if (blk == NULL) return BW_E_INVAL;
    if (check != NULL) {
      int rc = check(blk, arg, shm->name, err);
      if (rc != BW_OK) return rc;
    }
    /* The same configuration needs the same size. */
    if (e->size < need)
      return bw_error_set(err, BW_E_INVAL, "name",
                          "name \"%s\" in shared-memory segment %s has a "
                          "corrupt entry (%llu bytes, %zu expected)",
                          name, shm->name, (unsigned long long)e->size, need);
    *out = blk;
    return BW_OK;
  }
  if (n >= BW_SHM_MAX_OBJECTS) {
    bw__shm_lease_unlock(&h->lock, mine);
    return bw_error_set(err, BW_E_LIMIT, "name",
                        "shared-memory segment %s already holds %u objects "
                        "(BW_SHM_MAX_OBJECTS); \"%s\" cannot be added",
                        shm->name, BW_SHM_MAX_OBJECTS, name);
  }
  used = atomic_load_explicit(&h->used, memory_order_relaxed);
  if (used > shm->size || need > shm->size - used) {
    bw__shm_lease_unlock(&h->lock, mine);
    return bw_error_set(
        err, BW_E_LIMIT, "size",
        "shared-memory segment %s is full: the %s \"%s\" "
        "needs %zu bytes, %llu of %zu are free",
        shm->name, bw__kind_name(kind), name, need,
        (unsigned long long)(used > shm->size ? 0 : shm->size - used),
        shm->size);
  }
  {
    void *blk = shm->base + used;
    bw__shm_obj_t *o = blk;
    /* A previous holder may have died mid-initialization here: start from
     * zero. Nothing is visible until count is published. */
    memset(blk, 0, need);
    o->magic = BW__SHM_OBJ_MAGIC;
    o->kind = kind;
    if (init != NULL) init(blk, arg);
    e = &h->entries[n];
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->offset = used;
    e->size = need;
    snprintf(e->name, sizeof(e->name), "%s", name);
    atomic_store_explicit(&h->used, used + need, memory_order_relaxed);
    atomic_store_explicit(&h->count, n + 1, memory_order_release);
    *out = blk;
  }
  bw__shm_lease_unlock(&h->lock, mine);
  return BW_OK;
}
