/* breakwater_redis — the shared breaker synced by an event loop (libevent),
 * on hiredis's async API and its libevent adapter.
 *
 * One loop thread does everything here: a timer (`tick`) every
 * sync_interval_ms sends the sync script with the batch breaker.c builds
 * (the same script, the same (process, sequence) batch, the same adoption
 * of the reply as a blocking sync), a second timer (`deadline`) bounds a
 * connect or a reply (hiredis 0.14 has no per-command timeout), and after a
 * failure `tick` is armed for the reconnect backoff breaker.c computed.
 *
 * Lifetime rules with hiredis 0.14 (the delicate part):
 * - hiredis may call our reply callbacks (with a NULL reply) and the
 *   disconnect callback from inside redisAsyncFree, and frees the context
 *   by itself after a connect failure or a dropped connection. So every
 *   callback finds its state through ac->data, and whoever lets go of a
 *   context first clears ac->data and a->ac: a callback whose context is
 *   not a->ac (or whose data is NULL) does nothing.
 * - The context is freed by us only with redisAsyncFree, from a timer, from
 *   bw_redis_breaker_free, or from a reply callback (hiredis defers the free
 *   until the callback returns); never from the connect or disconnect
 *   callbacks (hiredis frees it itself right after those). */
#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
/* clang-format off */
#include <hiredis/adapters/libevent.h>
/* clang-format on */
#include <stdio.h>
#include <string.h>

#include "redis_internal.h"

typedef struct bw__rba_s {
  bw_redis_breaker_t *b;
  struct event_base *base;
  redisAsyncContext *ac; /* NULL while disconnected */
  struct event *tick;    /* next sync, or next reconnect attempt */
  struct event *deadline;
  bool busy;       /* a connect or a script is in flight */
  bool connecting; /* the connect has not completed yet */
  bool resent;     /* the batch in flight is a re-sent one */
  bool eval_sent;  /* NOSCRIPT: the body was sent for this batch */
  uint64_t pushed_before;
  const char *args[BW__RB_NARGS];
} bw__rba_t;

static void bw__rba_arm(struct event *ev, int64_t ms) {
  struct timeval tv;
  if (ms < 0) ms = 0;
  tv.tv_sec = (time_t)(ms / 1000);
  tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
  (void)evtimer_add(ev, &tv);
}

/* Lets go of the context (not from the connect/disconnect callbacks). */
static void bw__rba_drop(bw__rba_t *a) {
  redisAsyncContext *ac = a->ac;
  if (ac == NULL) return;
  a->ac = NULL;
  ac->data = NULL;
  redisAsyncFree(ac); /* deferred by hiredis inside a reply callback */
}

/* A sync, connect or reply failed: fall back (one event per outage) and
 * schedule the reconnect after the backoff. `why` (may be NULL: keep the
 * message already recorded) goes into the event's reason. */
static void bw__rba_failed(bw__rba_t *a, const char *why) {
  bw__rconn_t *c = bw__rb_conn(a->b);
  int64_t now = bw__rb_clock_now(a->b), wait_ns;
  if (why != NULL)
    snprintf(c->last_error, sizeof(c->last_error), "redis %.40s:%d: %.140s",
             c->host, c->port, why);
  (void)evtimer_del(a->deadline);
  a->busy = false;
  a->connecting = false;
  bw__rba_drop(a);
  bw__rb_fail(a->b, now);
  wait_ns = c->next_attempt_ns - now;
  bw__rba_arm(a->tick, bw_ns_to_ms_ceil(wait_ns));
}

/* A NULL reply: the connection broke, and hiredis frees the context
 * itself. */
static void bw__rba_lost(bw__rba_t *a, redisAsyncContext *ac) {
  char why[160];
  snprintf(why, sizeof(why), "connection lost: %.100s",
           ac->errstr != NULL && ac->errstr[0] ? ac->errstr : "I/O error");
  a->ac = NULL;
  ac->data = NULL;
  bw__rba_failed(a, why);
}

static void bw__rba_on_reply(redisAsyncContext *ac, void *reply, void *priv);

/* Sends the batch in a->args: EVALSHA, or EVAL with the body. */
static int bw__rba_send(bw__rba_t *a, bool body) {
  bw__rconn_t *c = bw__rb_conn(a->b);
  const char *av[BW__RB_NARGS + 3];
  int i;
  av[0] = body ? "EVAL" : "EVALSHA";
  av[1] = body ? c->scripts[0] : c->sha[0];
  av[2] = "3";
  for (i = 0; i < BW__RB_NARGS; i++)
    av[i + 3] = a->args[i];
  return redisAsyncCommandArgv(a->ac, bw__rba_on_reply, NULL, BW__RB_NARGS + 3,
                               av, NULL) == REDIS_OK
             ? BW_OK
             : BW_E_IO;
}

/* Sends the next batch (the outstanding one first). */
static int bw__rba_push(bw__rba_t *a) {
  a->resent = bw__rb_next_batch(a->b, bw__rb_clock_now(a->b), a->args);
  a->eval_sent = false;
  return bw__rba_send(a, false);
}

static void bw__rba_start_sync(bw__rba_t *a) {
  a->pushed_before = bw__rb_pushed_calls(a->b);
  if (bw__rba_push(a) != BW_OK) {
    bw__rba_failed(a, "cannot send the sync script");
    return;
  }
  a->busy = true;
  bw__rba_arm(a->deadline, bw__rb_conn(a->b)->command_timeout_ms);
}

static void bw__rba_on_reply(redisAsyncContext *ac, void *reply, void *priv) {
  bw__rba_t *a = ac->data;
  const redisReply *r = reply;
  bw__rconn_t *c;
  int64_t now;
  char why[160];
  (void)priv;
  if (a == NULL || a->ac != ac) return; /* being freed: not ours any more */
  c = bw__rb_conn(a->b);
  if (r == NULL) {
    bw__rba_lost(a, ac);
    return;
  }
  if (r->type == REDIS_REPLY_ERROR && !a->eval_sent &&
      strncmp(r->str, "NOSCRIPT", 8) == 0) {
    /* The server lost its script cache (restart, SCRIPT FLUSH). */
    a->eval_sent = true;
    if (bw__rba_send(a, true) != BW_OK)
      bw__rba_failed(a, "cannot send the sync script");
    return;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    snprintf(why, sizeof(why), "script failed: %.120s", r->str);
    bw__rba_failed(a, why);
    return;
  }
  now = bw__rb_clock_now(a->b);
  if (bw__rb_adopt(a->b, r, now) != BW_OK) {
    bw__rba_failed(a, NULL);
    return;
  }
  c->backoff_ms = c->backoff_initial_ms;
  if (a->resent) {
    /* The re-sent batch is confirmed: now the counts since, at once. */
    if (bw__rba_push(a) != BW_OK) {
      bw__rba_failed(a, "cannot send the sync script");
      return;
    }
    bw__rba_arm(a->deadline, c->command_timeout_ms);
    return;
  }
  (void)evtimer_del(a->deadline);
  a->busy = false;
  if (bw__rb_unavailable_now(a->b)) bw__rb_restore(a->b, a->pushed_before, now);
  bw__rba_arm(a->tick, bw__rb_interval_ms(a->b));
}

/* AUTH / SELECT: an error reply makes the connection unusable. */
static void bw__rba_on_setup(redisAsyncContext *ac, void *reply, void *priv) {
  bw__rba_t *a = ac->data;
  const redisReply *r = reply;
  char why[180];
  if (a == NULL || a->ac != ac) return;
  if (r == NULL) {
    bw__rba_lost(a, ac);
    return;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    snprintf(why, sizeof(why), "%s failed: %.120s", (const char *)priv, r->str);
    bw__rba_failed(a, why);
  }
}

static void bw__rba_on_connect(const redisAsyncContext *cac, int status) {
  redisAsyncContext *ac = (redisAsyncContext *)(uintptr_t)cac;
  bw__rba_t *a = ac->data;
  char why[160];
  if (a == NULL || a->ac != ac) return;
  if (status == REDIS_OK) {
    a->connecting = false;
    return;
  }
  /* hiredis frees the context right after this callback. */
  snprintf(why, sizeof(why), "cannot connect: %.100s",
           ac->errstr != NULL && ac->errstr[0] ? ac->errstr : "error");
  a->ac = NULL;
  ac->data = NULL;
  bw__rba_failed(a, why);
}

static void bw__rba_on_disconnect(const redisAsyncContext *cac, int status) {
  redisAsyncContext *ac = (redisAsyncContext *)(uintptr_t)cac;
  bw__rba_t *a = ac->data;
  char why[160];
  (void)status;
  if (a == NULL || a->ac != ac) return;
  /* Closed while idle (server gone); hiredis frees the context. */
  snprintf(why, sizeof(why), "connection closed: %.100s",
           ac->errstr != NULL && ac->errstr[0] ? ac->errstr : "by the server");
  a->ac = NULL;
  ac->data = NULL;
  bw__rba_failed(a, why);
}

static void bw__rba_connect(bw__rba_t *a) {
  bw__rconn_t *c = bw__rb_conn(a->b);
  redisAsyncContext *ac = redisAsyncConnect(c->host, c->port);
  char why[160];
  if (ac == NULL) {
    bw__rba_failed(a, "cannot allocate a hiredis async context");
    return;
  }
  if (ac->err) {
    snprintf(why, sizeof(why), "cannot connect: %.100s", ac->errstr);
    redisAsyncFree(ac);
    bw__rba_failed(a, why);
    return;
  }
  if (redisLibeventAttach(ac, a->base) != REDIS_OK) {
    redisAsyncFree(ac);
    bw__rba_failed(a, "cannot attach to the event loop");
    return;
  }
  ac->data = a;
  a->ac = ac;
  a->connecting = true;
  (void)redisAsyncSetConnectCallback(ac, bw__rba_on_connect);
  (void)redisAsyncSetDisconnectCallback(ac, bw__rba_on_disconnect);
  /* Pipelined behind the connect: AUTH, SELECT, then the sync itself. */
  if (c->password != NULL) {
    const char *av[3];
    int n = 0;
    av[n++] = "AUTH";
    if (c->username != NULL) av[n++] = c->username;
    av[n++] = c->password;
    if (redisAsyncCommandArgv(ac, bw__rba_on_setup, (void *)(uintptr_t) "AUTH",
                              n, av, NULL) != REDIS_OK) {
      bw__rba_failed(a, "cannot send AUTH");
      return;
    }
  }
  if (c->db != 0) {
    char db[16];
    const char *av[2];
    snprintf(db, sizeof(db), "%d", c->db);
    av[0] = "SELECT";
    av[1] = db;
    if (redisAsyncCommandArgv(ac, bw__rba_on_setup,
                              (void *)(uintptr_t) "SELECT", 2, av,
                              NULL) != REDIS_OK) {
      bw__rba_failed(a, "cannot send SELECT");
      return;
    }
  }
  bw__rba_start_sync(a);
  if (a->busy)
    bw__rba_arm(a->deadline, c->connect_timeout_ms + c->command_timeout_ms);
}

static void bw__rba_on_tick(evutil_socket_t fd, short what, void *arg) {
  bw__rba_t *a = arg;
  (void)fd;
  (void)what;
  if (a->busy) return; /* the reply (or its deadline) re-arms the tick */
  if (a->ac == NULL)
    bw__rba_connect(a);
  else
    bw__rba_start_sync(a);
}

static void bw__rba_on_deadline(evutil_socket_t fd, short what, void *arg) {
  bw__rba_t *a = arg;
  bw__rconn_t *c = bw__rb_conn(a->b);
  char why[120];
  (void)fd;
  (void)what;
  if (a->connecting)
    snprintf(why, sizeof(why),
             "connect timed out after %lld ms (connect_timeout_ms)",
             (long long)c->connect_timeout_ms);
  else
    snprintf(why, sizeof(why), "no reply within %lld ms (command_timeout_ms)",
             (long long)c->command_timeout_ms);
  bw__rba_failed(a, why);
}

static void bw__rba_free(void *p) {
  bw__rba_t *a = p;
  if (a == NULL) return;
  if (a->tick != NULL) event_free(a->tick);
  if (a->deadline != NULL) event_free(a->deadline);
  bw__rba_drop(a); /* pending callbacks run now and find no state */
  bw_free(a);
}

bw_redis_breaker_t *bw_redis_breaker_new_async(
    const bw_redis_breaker_config_t *cfg, struct event_base *base,
    bw_error_t *err) {
  bw_redis_breaker_t *b;
  bw__rba_t *a;
  bw__rconn_t *c;
  if (cfg == NULL) {
    bw_error_set(err, BW_E_INVAL, "", "config is NULL");
    return NULL;
  }
  if (cfg->sync_thread) {
    bw_error_set(err, BW_E_INVAL, "sync_thread",
                 "sync_thread must be false for a breaker synced by an event "
                 "loop (bw_redis_breaker_new_async): one sync driver only");
    return NULL;
  }
  if (base == NULL) {
    bw_error_set(err, BW_E_INVAL, "base",
                 "base must be the libevent event_base that syncs the "
                 "breaker (got NULL)");
    return NULL;
  }
  b = bw__rb_create(cfg, err);
  if (b == NULL) return NULL;
  a = bw_calloc(1, sizeof(*a));
  if (a != NULL) {
    a->b = b;
    a->base = base;
    a->tick = evtimer_new(base, bw__rba_on_tick, a);
    a->deadline = evtimer_new(base, bw__rba_on_deadline, a);
  }
  if (a == NULL || a->tick == NULL || a->deadline == NULL) {
    bw__rba_free(a);
    bw_redis_breaker_free(b);
    bw_error_set(err, BW_E_NOMEM, "",
                 "out of memory creating the event-loop redis breaker");
    return NULL;
  }
  bw__rb_attach_loop(b, a, bw__rba_free);
  /* One connection: the loop's. The first sync ran; the next is a tick
   * away, or the reconnect backoff away when Redis was unreachable. */
  c = bw__rb_conn(b);
  bw__rconn_disconnect(c);
  if (bw__rb_unavailable_now(b)) {
    int64_t wait_ns = c->next_attempt_ns - bw__rb_clock_now(b);
    bw__rba_arm(a->tick, bw_ns_to_ms_ceil(wait_ns));
  } else {
    bw__rba_arm(a->tick, bw__rb_interval_ms(b));
  }
  bw_error_clear(err);
  return b;
}
