/* breakwater_redis — the connection shared by the Redis objects (not
 * installed): options copied from bw_redis_config_t, connect with timeouts,
 * AUTH / SELECT / script loading, EVALSHA with an EVAL fallback, and the
 * reconnect backoff with jitter. A connection is not thread-safe: each object
 * serialises its own use. */
#ifndef BW_REDIS_INTERNAL_H
#define BW_REDIS_INTERNAL_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdlib.h>

#include <stdatomic.h>

#include "breakwater/ext.h"
#include "breakwater/store_redis.h"
#include "reply.h"

#define BW__LIKELY(x) __builtin_expect(!!(x), 1)
#define BW__UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Data that two threads write sits BW_ALIGN_APART bytes apart. */
#define BW__APART __attribute__((aligned(BW_ALIGN_APART)))

/* Adds 1 to a counter of stripe s (bw_stripe(), ext.h): an exclusive stripe
 * has one writer, so a plain load and store is enough; a shared one needs a
 * read-modify-write. */
static inline void bw__rb_bump(_Atomic uint64_t *c, unsigned s) {
  if (s < BW_STRIPES_EXCLUSIVE)
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  else
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

#define BW__RCONN_MAX_SCRIPTS 8

typedef struct bw__rconn_s {
  redisContext *c; /* NULL while disconnected */
  char *host;
  char *username;
  char *password;
  char *prefix;
  int port;
  int db;
  int64_t connect_timeout_ms;
  int64_t command_timeout_ms;
  int64_t backoff_initial_ms;
  int64_t backoff_max_ms;
  int64_t backoff_ms;      /* the next delay's upper bound */
  int64_t next_attempt_ns; /* no connect before this (object's clock) */
  bw_rand_t rng;
  const char *const *scripts;
  size_t nscripts;
  char sha[BW__RCONN_MAX_SCRIPTS][41];
  char last_error[200]; /* why the last operation failed */
  bool oom;             /* the last eval failed for want of memory */
  bool server_error;    /* the last call got an error reply (WRONGTYPE, OOM,
                           a script error): Redis is up, the connection kept */
} bw__rconn_t;

/* Checks and copies the options. BW_OK, BW_E_INVAL naming "redis.<field>",
 * BW_E_NOMEM. The scripts array must outlive the connection. */
int bw__rconn_init(bw__rconn_t *rc, const bw_redis_config_t *cfg,
                   const char *const *scripts, size_t nscripts, uint64_t seed,
                   bw_error_t *err);
/* Connects now (ignoring the backoff): BW_OK; BW_E_IO (unreachable, timed
 * out); BW_E_INVAL (AUTH refused or required, field redis.password). On
 * failure err (may be NULL) and last_error say why. */
int bw__rconn_connect(bw__rconn_t *rc, bw_error_t *err);
/* Connected, or connects when the backoff allows (now_ns on the object's
 * clock); a failure schedules the next attempt. BW_OK or the connect error
 * (BW_E_IO during the backoff without trying). */
int bw__rconn_ensure(bw__rconn_t *rc, int64_t now_ns);
/* Runs script `idx` (EVALSHA, EVAL when the server lost it). argv holds
 * KEYS then ARGV. Returns the reply (free with freeReplyObject) or NULL
 * after an I/O error, a timeout or an error reply (the connection is then
 * closed and last_error says why). */
redisReply *bw__rconn_eval(bw__rconn_t *rc, size_t idx, int nkeys, int argc,
                           const char **argv, const size_t *lens);
/* A reply that is not what `what` returns (reply.h said why): records
 * "unexpected reply to <what>: <why>" in last_error. Returns BW_E_IO. */
int bw__rconn_unexpected(bw__rconn_t *rc, const char *what, const char *why);
/* Runs one command; NULL as bw__rconn_eval. */
redisReply *bw__rconn_command(bw__rconn_t *rc, int argc, const char **argv,
                              const size_t *lens);
/* Marks a failure at now_ns: disconnects and schedules a reconnect. */
void bw__rconn_failed(bw__rconn_t *rc, int64_t now_ns);
void bw__rconn_disconnect(bw__rconn_t *rc);
void bw__rconn_destroy(bw__rconn_t *rc);
/* "prefix" + a + b + c into a new string (bw_malloc), NULL when out of
 * memory. */
char *bw__rconn_key(const bw__rconn_t *rc, const char *a, const char *b,
                    const char *c);
/* a then b in a new string (bw_free it); NULL when out of memory. */
char *bw__rcat(const char *a, const char *b);

/* A connection shared by the threads of one object, serialised by `mu`,
 * with outage reporting: one redis_unavailable event when it breaks, one
 * redis_restored when it works again. */
typedef struct bw__rclient_s {
  pthread_mutex_t mu;
  bw__rconn_t conn;
  bw_sink_t *sink;
  const bw_clock_t *wall;
  char *name;
  bool unavailable;
  _Atomic uint64_t errors;
} bw__rclient_t;

/* Checks `name` (naming `field`), copies the options, connects once.
 * BW_OK, or the error (err filled). Destroy even on failure. */
int bw__rcl_init(bw__rclient_t *cl, const bw_redis_config_t *rcfg,
                 const char *name, const char *field,
                 const char *const *scripts, size_t n, bw_error_t *err);
void bw__rcl_destroy(bw__rclient_t *cl);
/* With mu held: connected (reconnecting when the backoff allows), or
 * BW_E_IO. */
int bw__rcl_ready(bw__rclient_t *cl);
/* With mu held: a command failed: counts it, schedules the reconnect and
 * reports the outage once. Returns BW_E_IO, or BW_E_NOMEM (nothing else
 * done) when it failed for want of memory before reaching Redis. */
int bw__rcl_failed(bw__rclient_t *cl);
/* Emits an event named after the client. */
void bw__rcl_event(bw__rclient_t *cl, bw_event_type_t type, const char *reason,
                   const bw_field_t *f, size_t n);

/* ---- the shared breaker's event-loop mode (async.c drives, breaker.c
 * keeps the batch, the script and the state: one implementation of both) */

#define BW__RB_NARGS 27 /* the sync script's KEYS + ARGV */

/* Validates, builds, connects once and runs a first sync; starts no thread.
 * NULL with err. */
bw_redis_breaker_t *bw__rb_create(const bw_redis_breaker_config_t *cfg,
                                  bw_error_t *err);
/* Hands the breaker the loop's state; bw_redis_breaker_free calls
 * loop_free(loop) first, then makes one last blocking push. */
void bw__rb_attach_loop(bw_redis_breaker_t *b, void *loop,
                        void (*loop_free)(void *loop));
bw__rconn_t *bw__rb_conn(bw_redis_breaker_t *b);
int64_t bw__rb_clock_now(const bw_redis_breaker_t *b);
int64_t bw__rb_interval_ms(const bw_redis_breaker_t *b);
bool bw__rb_unavailable_now(const bw_redis_breaker_t *b);
uint64_t bw__rb_pushed_calls(const bw_redis_breaker_t *b);
/* The outstanding batch (a new one from the counters when none is) as the
 * script's arguments in argv[BW__RB_NARGS]; true when it is a re-send. */
bool bw__rb_next_batch(bw_redis_breaker_t *b, int64_t now, const char **argv);
/* Applies a script reply (not freed): BW_OK or BW_E_IO. */
int bw__rb_adopt(bw_redis_breaker_t *b, const redisReply *r, int64_t now);
/* A failed sync (conn.last_error says why): fallback, one unavailable event
 * per outage, next reconnect scheduled in conn.next_attempt_ns. */
void bw__rb_fail(bw_redis_breaker_t *b, int64_t now);
/* A sync succeeded after an outage: one redis_restored event. */
void bw__rb_restore(bw_redis_breaker_t *b, uint64_t pushed_before, int64_t now);

#endif /* BW_REDIS_INTERNAL_H */
