/* breakwater — a private redis-server for tests (not installed).
 *
 * bwt_redis_start() starts /usr/bin/redis-server (or $BW_REDIS_SERVER) on a
 * free loopback port in its own temporary directory (--bind 127.0.0.1,
 * --save '', --appendonly no, or appendonly yes + appendfsync always when
 * `persist` is set so a killed server comes back with its data, optional
 * --requirepass), and waits until PING answers (bounded). A missing
 * redis-server is a FAILURE with a clear message, never a silent skip.
 * Every server started here is killed at exit (atexit) even when an
 * assertion failed, and only by the process that started it (forked test
 * workers never kill their parent's servers). Waits are bounded; nothing
 * here asserts a timing. */
#ifndef BW_REDIS_FIXTURE_H
#define BW_REDIS_FIXTURE_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BWT_REDIS_MAX 8

typedef struct bwt_redis_s {
  pid_t pid; /* 0 when not running */
  int port;
  bool persist;
  char password[64];
  char dir[64];
  char error[256]; /* why the last start failed */
} bwt_redis_t;

static bwt_redis_t *bwt__redis_all[BWT_REDIS_MAX];
static pid_t bwt__redis_owner;

static inline void bwt__sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static inline const char *bwt_redis_server_path(void) {
  const char *p = getenv("BW_REDIS_SERVER");
  return p != NULL && p[0] != '\0' ? p : "/usr/bin/redis-server";
}

/* Waits for pid at most ~timeout_ms; true when it was reaped. */
static inline bool bwt__reap(pid_t pid, long timeout_ms) {
  long waited = 0;
  for (;;) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (waited >= timeout_ms) return false;
    bwt__sleep_ms(5);
    waited += 5;
  }
}

/* Stops the server: SIGTERM, then SIGKILL if it lingers (bounded). */
static inline void bwt_redis_stop(bwt_redis_t *r) {
  if (r == NULL || r->pid <= 0) return;
  kill(r->pid, SIGCONT);
  kill(r->pid, SIGTERM);
  if (!bwt__reap(r->pid, 5000)) {
    kill(r->pid, SIGKILL);
    (void)bwt__reap(r->pid, 5000);
  }
  r->pid = 0;
}

/* Kills the server without letting it save or say goodbye (a crash). */
static inline void bwt_redis_kill(bwt_redis_t *r) {
  if (r == NULL || r->pid <= 0) return;
  kill(r->pid, SIGKILL);
  (void)bwt__reap(r->pid, 5000);
  r->pid = 0;
}

/* Freezes / thaws the server (a slow or hung Redis). */
static inline void bwt_redis_pause(bwt_redis_t *r) {
  if (r != NULL && r->pid > 0) kill(r->pid, SIGSTOP);
}
static inline void bwt_redis_resume(bwt_redis_t *r) {
  if (r != NULL && r->pid > 0) kill(r->pid, SIGCONT);
}

static inline void bwt__rm_rf(const char *dir) {
  pid_t pid;
  if (dir[0] == '\0') return;
  pid = fork();
  if (pid == 0) {
    execlp("rm", "rm", "-rf", dir, (char *)NULL);
    _exit(127);
  }
  if (pid > 0) (void)bwt__reap(pid, 10000);
}

static inline void bwt__redis_atexit(void) {
  int i;
  if (getpid() != bwt__redis_owner) return;
  for (i = 0; i < BWT_REDIS_MAX; i++) {
    bwt_redis_t *r = bwt__redis_all[i];
    if (r == NULL) continue;
    bwt_redis_kill(r);
    bwt__rm_rf(r->dir);
    r->dir[0] = '\0';
    bwt__redis_all[i] = NULL;
  }
}

static inline void bwt__redis_register(bwt_redis_t *r) {
  static bool registered;
  int i, free_slot = -1;
  if (!registered) {
    bwt__redis_owner = getpid();
    atexit(bwt__redis_atexit);
    registered = true;
  }
  for (i = 0; i < BWT_REDIS_MAX; i++) {
    if (bwt__redis_all[i] == r) return;
    if (bwt__redis_all[i] == NULL && free_slot < 0) free_slot = i;
  }
  if (free_slot >= 0) bwt__redis_all[free_slot] = r;
}

/* A loopback port nobody listens on right now. */
static inline int bwt__free_port(void) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  int port = -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

/* A connection to the fixture (authenticated when it has a password); NULL
 * when it does not answer. Free with redisFree. */
static inline redisContext *bwt_redis_connect(const bwt_redis_t *r) {
  struct timeval tv = {0, 200000};
  redisContext *c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
  if (c == NULL) return NULL;
  if (c->err) {
    redisFree(c);
    return NULL;
  }
  redisSetTimeout(c, tv);
  if (r->password[0] != '\0') {
    redisReply *rep = redisCommand(c, "AUTH %s", r->password);
    bool ok = rep != NULL && rep->type != REDIS_REPLY_ERROR;
    if (rep != NULL) freeReplyObject(rep);
    if (!ok) {
      redisFree(c);
      return NULL;
    }
  }
  return c;
}

static inline bool bwt__redis_pings(const bwt_redis_t *r) {
  redisContext *c = bwt_redis_connect(r);
  redisReply *rep;
  bool ok;
  if (c == NULL) return false;
  rep = redisCommand(c, "PING");
  ok = rep != NULL && rep->type == REDIS_REPLY_STATUS &&
       strcmp(rep->str, "PONG") == 0;
  if (rep != NULL) freeReplyObject(rep);
  redisFree(c);
  return ok;
}

/* Spawns redis-server on r->port; waits (bounded) for PING. 0 or -1. */
static inline int bwt__redis_spawn(bwt_redis_t *r) {
  const char *server = bwt_redis_server_path();
  char port[16], log[128];
  const char *argv[24];
  int argc = 0, i;
  pid_t pid;
  snprintf(port, sizeof(port), "%d", r->port);
  snprintf(log, sizeof(log), "%s/redis.log", r->dir);
  argv[argc++] = server;
  argv[argc++] = "--port";
  argv[argc++] = port;
  argv[argc++] = "--bind";
  argv[argc++] = "127.0.0.1";
  argv[argc++] = "--save";
  argv[argc++] = "";
  argv[argc++] = "--dir";
  argv[argc++] = r->dir;
  argv[argc++] = "--daemonize";
  argv[argc++] = "no";
  argv[argc++] = "--appendonly";
  argv[argc++] = r->persist ? "yes" : "no";
  if (r->persist) {
    argv[argc++] = "--appendfsync";
    argv[argc++] = "always";
  }
  argv[argc++] = "--logfile";
  argv[argc++] = log;
  if (r->password[0] != '\0') {
    argv[argc++] = "--requirepass";
    argv[argc++] = r->password;
  }
  argv[argc] = NULL;
  pid = fork();
  if (pid < 0) {
    snprintf(r->error, sizeof(r->error), "fork failed: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
      dup2(fd, 0);
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(server, (char *const *)argv);
    _exit(127);
  }
  r->pid = pid;
  bwt__redis_register(r);
  /* Bounded: at most ~10 s for the server to answer. */
  for (i = 0; i < 1000; i++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      r->pid = 0;
      snprintf(r->error, sizeof(r->error),
               "%s exited during start-up (status %d; see %s)", server,
               WIFEXITED(status) ? WEXITSTATUS(status) : -1, log);
      return -1;
    }
    if (bwt__redis_pings(r)) return 0;
    bwt__sleep_ms(10);
  }
  snprintf(r->error, sizeof(r->error),
           "%s on port %d did not answer PING within 10 s", server, r->port);
  bwt_redis_kill(r);
  return -1;
}

/* Starts a private server. 0, or -1 with r->error saying why (a missing
 * redis-server is an error: the test must fail, not skip). */
static inline int bwt_redis_start(bwt_redis_t *r, const char *password,
                                  bool persist) {
  const char *server = bwt_redis_server_path();
  int attempt;
  memset(r, 0, sizeof(*r));
  r->persist = persist;
  if (password != NULL)
    snprintf(r->password, sizeof(r->password), "%s", password);
  if (access(server, X_OK) != 0) {
    snprintf(r->error, sizeof(r->error),
             "%s not found or not executable: install redis-server (Debian "
             "package redis-server) or set BW_REDIS_SERVER",
             server);
    return -1;
  }
  snprintf(r->dir, sizeof(r->dir), "/tmp/bw-redis-XXXXXX");
  if (mkdtemp(r->dir) == NULL) {
    snprintf(r->error, sizeof(r->error), "mkdtemp failed: %s", strerror(errno));
    r->dir[0] = '\0';
    return -1;
  }
  bwt__redis_register(r);
  /* A free port can be taken between the probe and the start: retry a few
   * times with fresh ports. */
  for (attempt = 0; attempt < 5; attempt++) {
    r->port = bwt__free_port();
    if (r->port > 0 && bwt__redis_spawn(r) == 0) return 0;
  }
  return -1;
}

/* Starts the server again on the same port and directory (after stop or
 * kill). 0 or -1 with r->error. */
static inline int bwt_redis_restart(bwt_redis_t *r) {
  int attempt;
  if (r->pid > 0) bwt_redis_stop(r);
  /* The port may linger briefly after a kill: a few bounded attempts. */
  for (attempt = 0; attempt < 20; attempt++) {
    if (bwt__redis_spawn(r) == 0) return 0;
    bwt__sleep_ms(50);
  }
  return -1;
}

/* Stops the server and removes its directory. */
static inline void bwt_redis_cleanup(bwt_redis_t *r) {
  int i;
  if (r == NULL) return;
  bwt_redis_stop(r);
  bwt__rm_rf(r->dir);
  r->dir[0] = '\0';
  for (i = 0; i < BWT_REDIS_MAX; i++)
    if (bwt__redis_all[i] == r) bwt__redis_all[i] = NULL;
}

/* An integer field of a hash in database `db` (0 when missing); -1 when
 * Redis does not answer. */
static inline long long bwt_redis_hget_ll_db(const bwt_redis_t *r, int db,
                                             const char *key,
                                             const char *field) {
  redisContext *c = bwt_redis_connect(r);
  redisReply *rep = NULL;
  long long v = -1;
  if (c == NULL) return -1;
  if (db != 0) {
    rep = redisCommand(c, "SELECT %d", db);
    if (rep == NULL || rep->type != REDIS_REPLY_STATUS) {
      if (rep != NULL) freeReplyObject(rep);
      redisFree(c);
      return -1;
    }
    freeReplyObject(rep);
  }
  rep = redisCommand(c, "HGET %s %s", key, field);
  if (rep != NULL) {
    if (rep->type == REDIS_REPLY_STRING)
      v = strtoll(rep->str, NULL, 10);
    else if (rep->type == REDIS_REPLY_NIL)
      v = 0;
    freeReplyObject(rep);
  }
  redisFree(c);
  return v;
}

/* The same in database 0. */
static inline long long bwt_redis_hget_ll(const bwt_redis_t *r, const char *key,
                                          const char *field) {
  return bwt_redis_hget_ll_db(r, 0, key, field);
}

/* Runs FLUSHALL; 0 or -1. */
static inline int bwt_redis_flushall(const bwt_redis_t *r) {
  redisContext *c = bwt_redis_connect(r);
  redisReply *rep;
  int rc = -1;
  if (c == NULL) return -1;
  rep = redisCommand(c, "FLUSHALL");
  if (rep != NULL) {
    rc = rep->type == REDIS_REPLY_STATUS ? 0 : -1;
    freeReplyObject(rep);
  }
  redisFree(c);
  return rc;
}

#endif /* BW_REDIS_FIXTURE_H */
