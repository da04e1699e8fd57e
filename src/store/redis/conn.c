/* breakwater_redis — the connection: options, connect with timeouts, AUTH,
 * SELECT, script loading, EVALSHA/EVAL, reconnect backoff with jitter. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "redis_internal.h"

void bw_redis_config_init(bw_redis_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->host = "127.0.0.1";
  cfg->port = 6379;
  cfg->connect_timeout_ms = 200;
  cfg->command_timeout_ms = 200;
  cfg->backoff_initial_ms = 50;
  cfg->backoff_max_ms = 5000;
  cfg->key_prefix = "bw:";
}

static char *bw__dup_or_null(const char *s, bool *oom) {
  char *d;
  if (s == NULL) return NULL;
  d = bw_strdup(s);
  if (d == NULL) *oom = true;
  return d;
}

int bw__rconn_init(bw__rconn_t *rc, const bw_redis_config_t *cfg,
                   const char *const *scripts, size_t nscripts, uint64_t seed,
                   bw_error_t *err) {
  bool oom = false;
  memset(rc, 0, sizeof(*rc));
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "redis", "redis config is NULL");
  if (cfg->host == NULL || cfg->host[0] == '\0')
    return bw_error_set(err, BW_E_INVAL, "redis.host",
                        "redis.host must be a non-empty host name or address");
  if (cfg->port < 1 || cfg->port > 65535)
    return bw_error_set(err, BW_E_INVAL, "redis.port",
                        "redis.port must be in 1..65535 (got %d)", cfg->port);
  if (cfg->db < 0)
    return bw_error_set(err, BW_E_INVAL, "redis.db",
                        "redis.db must be >= 0 (got %d)", cfg->db);
  if (cfg->tls)
    return bw_error_set(
        err, BW_E_INVAL, "redis.tls",
        "redis.tls is not supported: hiredis 0.14.1 on this system has no "
        "hiredis_ssl (use a TLS tunnel such as stunnel)");
  if (cfg->connect_timeout_ms < 1)
    return bw_error_set(err, BW_E_INVAL, "redis.connect_timeout_ms",
                        "redis.connect_timeout_ms must be >= 1 (got %lld)",
                        (long long)cfg->connect_timeout_ms);
  if (cfg->command_timeout_ms < 1)
    return bw_error_set(err, BW_E_INVAL, "redis.command_timeout_ms",
                        "redis.command_timeout_ms must be >= 1 (got %lld)",
                        (long long)cfg->command_timeout_ms);
  if (cfg->backoff_initial_ms < 1)
    return bw_error_set(err, BW_E_INVAL, "redis.backoff_initial_ms",
                        "redis.backoff_initial_ms must be >= 1 (got %lld)",
                        (long long)cfg->backoff_initial_ms);
  if (cfg->backoff_max_ms < cfg->backoff_initial_ms)
    return bw_error_set(
        err, BW_E_INVAL, "redis.backoff_max_ms",
        "redis.backoff_max_ms must be >= redis.backoff_initial_ms (got %lld < "
        "%lld)",
        (long long)cfg->backoff_max_ms, (long long)cfg->backoff_initial_ms);
  if (cfg->username != NULL && cfg->password == NULL)
    return bw_error_set(err, BW_E_INVAL, "redis.password",
                        "redis.password must be set when redis.username is");
  if (nscripts > BW__RCONN_MAX_SCRIPTS)
    return bw_error_set(err, BW_E_INVAL, "", "too many scripts");
  rc->host = bw__dup_or_null(cfg->host, &oom);
  rc->username = bw__dup_or_null(cfg->username, &oom);
  rc->password = bw__dup_or_null(cfg->password, &oom);
  rc->prefix =
      bw__dup_or_null(cfg->key_prefix != NULL ? cfg->key_prefix : "", &oom);
  if (oom) {
    bw__rconn_destroy(rc);
    return bw_error_set(err, BW_E_NOMEM, "", "out of memory");
  }
  rc->port = cfg->port;
  rc->db = cfg->db;
  rc->connect_timeout_ms = cfg->connect_timeout_ms;
  rc->command_timeout_ms = cfg->command_timeout_ms;
  rc->backoff_initial_ms = cfg->backoff_initial_ms;
  rc->backoff_max_ms = cfg->backoff_max_ms;
  rc->backoff_ms = cfg->backoff_initial_ms;
  rc->scripts = scripts;
  rc->nscripts = nscripts;
  bw_rand_seed(&rc->rng, seed != 0 ? seed : bw_rand_os_seed());
  return BW_OK;
}

static struct timeval bw__tv(int64_t ms) {
  struct timeval tv;
  tv.tv_sec = (time_t)(ms / 1000);
  tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
  return tv;
}

void bw__rconn_disconnect(bw__rconn_t *rc) {
  if (rc->c != NULL) redisFree(rc->c);
  rc->c = NULL;
}

void bw__rconn_destroy(bw__rconn_t *rc) {
  bw__rconn_disconnect(rc);
  bw_free(rc->host);
  bw_free(rc->username);
  bw_free(rc->password);
  bw_free(rc->prefix);
  rc->host = rc->username = rc->password = rc->prefix = NULL;
}

/* Records why something failed and closes the connection. */
static void bw__rconn_fail_msg(bw__rconn_t *rc, const char *what) {
  snprintf(rc->last_error, sizeof(rc->last_error), "redis %.40s:%d: %.140s",
           rc->host, rc->port, what);
  bw__rconn_disconnect(rc);
}

static redisReply *bw__rconn_raw(bw__rconn_t *rc, int argc, const char **argv,
                                 const size_t *lens) {
  redisReply *r;
  if (rc->c == NULL) {
    snprintf(rc->last_error, sizeof(rc->last_error),
             "redis %.40s:%d: not connected", rc->host, rc->port);
    return NULL;
  }
  r = redisCommandArgv(rc->c, argc, argv, lens);
  if (r == NULL) {
    char msg[128];
    snprintf(msg, sizeof(msg), "%s",
             rc->c->errstr[0] ? rc->c->errstr : "I/O error");
    /* hiredis reports an expired SO_RCVTIMEO as EAGAIN. */
    if (strstr(msg, "temporarily unavailable") != NULL)
      snprintf(msg, sizeof(msg), "command timed out after %lld ms",
               (long long)rc->command_timeout_ms);
    bw__rconn_fail_msg(rc, msg);
  }
  return r;
}

int bw__rconn_connect(bw__rconn_t *rc, bw_error_t *err) {
  redisReply *r;
  size_t i;
  bw__rconn_disconnect(rc);
  rc->c = redisConnectWithTimeout(rc->host, rc->port,
                                  bw__tv(rc->connect_timeout_ms));
  if (rc->c == NULL) {
    bw__rconn_fail_msg(rc, "cannot allocate a hiredis context");
    return bw_error_set(err, BW_E_NOMEM, "", "%s", rc->last_error);
  }
  if (rc->c->err) {
    char msg[140];
    snprintf(msg, sizeof(msg), "cannot connect: %.100s", rc->c->errstr);
    bw__rconn_fail_msg(rc, msg);
    return bw_error_set(err, BW_E_IO, "redis.host", "%s", rc->last_error);
  }
  if (redisSetTimeout(rc->c, bw__tv(rc->command_timeout_ms)) != REDIS_OK) {
    bw__rconn_fail_msg(rc, "cannot set the command timeout");
    return bw_error_set(err, BW_E_IO, "", "%s", rc->last_error);
  }
  if (rc->password != NULL) {
    const char *argv[3];
    size_t lens[3];
    int argc = 0;
    argv[argc] = "AUTH";
    lens[argc++] = 4;
    if (rc->username != NULL) {
      argv[argc] = rc->username;
      lens[argc++] = strlen(rc->username);
    }
    argv[argc] = rc->password;
    lens[argc++] = strlen(rc->password);
    r = bw__rconn_raw(rc, argc, argv, lens);
    if (r == NULL) return bw_error_set(err, BW_E_IO, "", "%s", rc->last_error);
    if (r->type == REDIS_REPLY_ERROR) {
      char msg[140];
      snprintf(msg, sizeof(msg), "%.130s", r->str);
      freeReplyObject(r);
      snprintf(rc->last_error, sizeof(rc->last_error),
               "redis AUTH failed for %.40s:%d: %.80s (check redis.password%s)",
               rc->host, rc->port, msg,
               rc->username != NULL ? " and redis.username" : "");
      bw__rconn_disconnect(rc);
      return bw_error_set(err, BW_E_INVAL, "redis.password", "%s",
                          rc->last_error);
    }
    freeReplyObject(r);
  }
  {
    const char *argv[1] = {"PING"};
    size_t lens[1] = {4};
    r = bw__rconn_raw(rc, 1, argv, lens);
    if (r == NULL) return bw_error_set(err, BW_E_IO, "", "%s", rc->last_error);
    if (r->type == REDIS_REPLY_ERROR) {
      bool noauth = strncmp(r->str, "NOAUTH", 6) == 0;
      char msg[140];
      snprintf(msg, sizeof(msg), "%.130s", r->str);
      freeReplyObject(r);
      snprintf(rc->last_error, sizeof(rc->last_error),
               "redis %.40s:%d refused PING: %.60s%s", rc->host, rc->port, msg,
               noauth ? " (the server requires a password: set redis.password)"
                      : "");
      bw__rconn_disconnect(rc);
      return bw_error_set(err, noauth ? BW_E_INVAL : BW_E_IO,
                          noauth ? "redis.password" : "", "%s", rc->last_error);
    }
    freeReplyObject(r);
  }
  if (rc->db != 0) {
    char db[16];
    const char *argv[2];
    size_t lens[2];
    snprintf(db, sizeof(db), "%d", rc->db);
    argv[0] = "SELECT";
    lens[0] = 6;
    argv[1] = db;
    lens[1] = strlen(db);
    r = bw__rconn_raw(rc, 2, argv, lens);
    if (r == NULL) return bw_error_set(err, BW_E_IO, "", "%s", rc->last_error);
    if (r->type == REDIS_REPLY_ERROR) {
      snprintf(rc->last_error, sizeof(rc->last_error),
               "redis %.40s:%d: SELECT %d failed: %.100s", rc->host, rc->port,
               rc->db, r->str);
      freeReplyObject(r);
      bw__rconn_disconnect(rc);
      return bw_error_set(err, BW_E_INVAL, "redis.db", "%s", rc->last_error);
    }
    freeReplyObject(r);
  }
  for (i = 0; i < rc->nscripts; i++) {
    const char *argv[3] = {"SCRIPT", "LOAD", rc->scripts[i]};
    size_t lens[3] = {6, 4, strlen(rc->scripts[i])};
    r = bw__rconn_raw(rc, 3, argv, lens);
    if (r == NULL) return bw_error_set(err, BW_E_IO, "", "%s", rc->last_error);
    if (r->type != REDIS_REPLY_STRING || r->len != 40) {
      snprintf(rc->last_error, sizeof(rc->last_error),
               "redis %.40s:%d: SCRIPT LOAD failed: %.100s", rc->host, rc->port,
               r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
      freeReplyObject(r);
      bw__rconn_disconnect(rc);
      return bw_error_set(err, BW_E_IO, "", "%s", rc->last_error);
    }
    memcpy(rc->sha[i], r->str, 40);
    rc->sha[i][40] = '\0';
    freeReplyObject(r);
  }
  rc->backoff_ms = rc->backoff_initial_ms;
  rc->last_error[0] = '\0';
  return BW_OK;
}

void bw__rconn_failed(bw__rconn_t *rc, int64_t now_ns) {
  int64_t hi = rc->backoff_ms, delay;
  bw__rconn_disconnect(rc);
  /* "Equal jitter": somewhere in [half, all] of the current step, so a fleet
   * that lost Redis together does not reconnect in lock-step. */
  delay = bw_rand_range(&rc->rng, hi / 2, hi);
  rc->next_attempt_ns = now_ns + delay * BW_NS_PER_MS;
  rc->backoff_ms = hi > rc->backoff_max_ms / 2 ? rc->backoff_max_ms : hi * 2;
}

int bw__rconn_ensure(bw__rconn_t *rc, int64_t now_ns) {
  int st;
  if (rc->c != NULL) return BW_OK;
  if (now_ns < rc->next_attempt_ns) return BW_E_IO;
  st = bw__rconn_connect(rc, NULL);
  if (st != BW_OK) bw__rconn_failed(rc, now_ns);
  return st;
}

redisReply *bw__rconn_command(bw__rconn_t *rc, int argc, const char **argv,
                              const size_t *lens) {
  redisReply *r = bw__rconn_raw(rc, argc, argv, lens);
  rc->server_error = false;
  if (r != NULL && r->type == REDIS_REPLY_ERROR) {
    /* Redis answered: the command failed, the connection did not. */
    snprintf(rc->last_error, sizeof(rc->last_error),
             "redis %.40s:%d: %.20s: %.110s", rc->host, rc->port, argv[0],
             r->str);
    freeReplyObject(r);
    rc->server_error = true;
    return NULL;
  }
  return r;
}

redisReply *bw__rconn_eval(bw__rconn_t *rc, size_t idx, int nkeys, int argc,
                           const char **argv, const size_t *lens) {
  enum { BW__STACK_ARGS = 40 };
  const char *av_stack[BW__STACK_ARGS];
  size_t al_stack[BW__STACK_ARGS];
  const char **av = av_stack;
  size_t *al = al_stack;
  char nk[16];
  redisReply *r;
  int i;
  rc->oom = false;
  if (idx >= rc->nscripts || argc < 0) {
    snprintf(rc->last_error, sizeof(rc->last_error), "bad script call");
    return NULL;
  }
  /* The common calls fit on the stack: a periodic sync allocates nothing
   * through the hooks (hiredis allocates with its own allocator). */
  if (argc + 3 > BW__STACK_ARGS) {
    av = bw_malloc(sizeof(*av) * (size_t)(argc + 3));
    al = bw_malloc(sizeof(*al) * (size_t)(argc + 3));
    if (av == NULL || al == NULL) {
      bw_free(av);
      bw_free(al);
      snprintf(rc->last_error, sizeof(rc->last_error), "out of memory");
      rc->oom = true;
      return NULL;
    }
  }
  snprintf(nk, sizeof(nk), "%d", nkeys);
  av[0] = "EVALSHA";
  al[0] = 7;
  av[1] = rc->sha[idx];
  al[1] = 40;
  av[2] = nk;
  al[2] = strlen(nk);
  for (i = 0; i < argc; i++) {
    av[i + 3] = argv[i];
    al[i + 3] = lens != NULL ? lens[i] : strlen(argv[i]);
  }
  r = bw__rconn_raw(rc, argc + 3, av, al);
  if (r != NULL && r->type == REDIS_REPLY_ERROR &&
      strncmp(r->str, "NOSCRIPT", 8) == 0) {
    /* The server lost its script cache (restart, SCRIPT FLUSH): send the
     * body once; the server caches it again. */
    freeReplyObject(r);
    av[0] = "EVAL";
    al[0] = 4;
    av[1] = rc->scripts[idx];
    al[1] = strlen(rc->scripts[idx]);
    r = bw__rconn_raw(rc, argc + 3, av, al);
  }
  if (av != av_stack) {
    bw_free(av);
    bw_free(al);
  }
  rc->server_error = false;
  if (r != NULL && r->type == REDIS_REPLY_ERROR) {
    /* Redis answered (a script error, OOM under maxmemory, WRONGTYPE):
     * the call failed, the connection did not. */
    snprintf(rc->last_error, sizeof(rc->last_error),
             "redis %.40s:%d: script failed: %.120s", rc->host, rc->port,
             r->str);
    freeReplyObject(r);
    rc->server_error = true;
    return NULL;
  }
  return r;
}

int bw__rconn_unexpected(bw__rconn_t *rc, const char *what, const char *why) {
  snprintf(rc->last_error, sizeof(rc->last_error),
           "redis %.40s:%d: unexpected reply to %.30s: %.90s", rc->host,
           rc->port, what, why != NULL ? why : "");
  return BW_E_IO;
}

char *bw__rconn_key(const bw__rconn_t *rc, const char *a, const char *b,
                    const char *c) {
  size_t n = strlen(rc->prefix) + strlen(a) + strlen(b) + strlen(c) + 1;
  char *k = bw_malloc(n);
  if (k != NULL) snprintf(k, n, "%s%s%s%s", rc->prefix, a, b, c);
  return k;
}

char *bw__rcat(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 1;
  char *k = bw_malloc(n);
  if (k != NULL) snprintf(k, n, "%s%s", a, b);
  return k;
}

/* ---- a serialised client (shared by the queue and the idempotency store)
 */

void bw__rcl_event(bw__rclient_t *cl, bw_event_type_t type, const char *reason,
                   const bw_field_t *f, size_t n) {
  bw_event_emit(cl->sink, cl->wall, bw_clock_now(bw_clock_monotonic()), type,
                cl->name, reason, f, n, NULL);
}

/* Counts an error and, on the first one of an outage, reports the outage. */
static void bw__rcl_down(bw__rclient_t *cl) {
  atomic_fetch_add_explicit(&cl->errors, 1, memory_order_relaxed);
  if (!cl->unavailable) {
    cl->unavailable = true;
    bw__rcl_event(cl, BW_EV_REDIS_UNAVAILABLE, cl->conn.last_error, NULL, 0);
  }
}

/* With cl->mu held: connected (or BW_E_IO). Emits redis_restored once when
 * an outage ends. */
int bw__rcl_ready(bw__rclient_t *cl) {
  if (cl->conn.c == NULL &&
      bw__rconn_ensure(&cl->conn, bw_clock_now(bw_clock_monotonic())) !=
          BW_OK) {
    bw__rcl_down(cl);
    return BW_E_IO;
  }
  if (cl->unavailable) {
    cl->unavailable = false;
    bw__rcl_event(cl, BW_EV_REDIS_RESTORED, "redis is reachable again", NULL,
                  0);
  }
  return BW_OK;
}

/* With cl->mu held: a command or script failed (connection closed). */
int bw__rcl_failed(bw__rclient_t *cl) {
  if (cl->conn.oom) {
    cl->conn.oom = false;
    return BW_E_NOMEM;
  }
  if (cl->conn.server_error) {
    /* Redis is up and said no: this call fails, nothing else does (no
     * reconnect backoff, no redis_unavailable). */
    atomic_fetch_add_explicit(&cl->errors, 1, memory_order_relaxed);
    cl->conn.server_error = false;
    return BW_E_IO;
  }
  bw__rconn_failed(&cl->conn, bw_clock_now(bw_clock_monotonic()));
  bw__rcl_down(cl);
  return BW_E_IO;
}

int bw__rcl_init(bw__rclient_t *cl, const bw_redis_config_t *rcfg,
                 const char *name, const char *field,
                 const char *const *scripts, size_t n, bw_error_t *err) {
  int st;
  pthread_mutex_init(&cl->mu, NULL);
  if (bw_name_check(name, field, err) != BW_OK) return BW_E_INVAL;
  st = bw__rconn_init(&cl->conn, rcfg, scripts, n, 0, err);
  if (st != BW_OK) return st;
  cl->name = bw_strdup(name);
  if (cl->name == NULL)
    return bw_error_set(err, BW_E_NOMEM, "", "out of memory");
  cl->wall = bw_clock_realtime();
  return bw__rconn_connect(&cl->conn, err);
}

void bw__rcl_destroy(bw__rclient_t *cl) {
  bw__rconn_destroy(&cl->conn);
  bw_free(cl->name);
  pthread_mutex_destroy(&cl->mu);
}
