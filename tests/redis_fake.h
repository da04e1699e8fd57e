/* breakwater — a fake Redis server for tests (not installed): a thread on a
 * loopback port that speaks RESP and answers what the test scripted, so a
 * component under test parses real bytes with hiredis and meets replies a
 * real redis-server would never send (hostile or corrupted ones).
 *
 * The handshake is answered by itself: PING (+PONG), AUTH and SELECT (+OK),
 * SCRIPT LOAD (a 40-character digest). Every other command (EVALSHA, EVAL,
 * LLEN, LREM, LINDEX, SET, ...) takes the next scripted reply, raw RESP
 * bytes, in order; past the script it answers an error reply. One client at
 * a time (the component's single connection): a new client replaces it.
 * Nothing here sleeps for a timing: reads and accepts poll with a short
 * timeout only so the thread notices bwt_fake_stop. */
#ifndef BW_REDIS_FAKE_H
#define BW_REDIS_FAKE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define BWT_FAKE_MAX_REPLIES 16

typedef struct bwt_fake_s {
  int lfd;
  int port;
  pthread_t thread;
  atomic_bool stop;
  pthread_mutex_t mu;
  const char *replies[BWT_FAKE_MAX_REPLIES]; /* raw RESP, NUL-free lengths */
  size_t lens[BWT_FAKE_MAX_REPLIES];
  size_t nreplies, next;
  atomic_int served;  /* scripted commands answered */
  char last_cmd[256]; /* the last scripted command's name and first args */
} bwt_fake_t;

/* Queues one raw RESP reply (the string must outlive the server). */
static inline void bwt_fake_reply_n(bwt_fake_t *f, const char *resp,
                                    size_t len) {
  pthread_mutex_lock(&f->mu);
  if (f->nreplies < BWT_FAKE_MAX_REPLIES) {
    f->replies[f->nreplies] = resp;
    f->lens[f->nreplies] = len;
    f->nreplies++;
  }
  pthread_mutex_unlock(&f->mu);
}

static inline void bwt_fake_reply(bwt_fake_t *f, const char *resp) {
  bwt_fake_reply_n(f, resp, strlen(resp));
}

/* Forgets the scripted replies (consumed or not). */
static inline void bwt_fake_reset(bwt_fake_t *f) {
  pthread_mutex_lock(&f->mu);
  f->nreplies = 0;
  f->next = 0;
  pthread_mutex_unlock(&f->mu);
  atomic_store(&f->served, 0);
}

/* Scripted replies not yet consumed. */
static inline size_t bwt_fake_pending(bwt_fake_t *f) {
  size_t n;
  pthread_mutex_lock(&f->mu);
  n = f->nreplies - f->next;
  pthread_mutex_unlock(&f->mu);
  return n;
}

static inline bool bwt__fake_write(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* Parses one command (a multibulk of bulk strings) at buf[0..len): the
 * number of bytes it takes, 0 when incomplete, -1 when malformed. argv gets
 * up to 3 arguments (pointers into buf, lengths in al). */
static inline long bwt__fake_parse(const char *buf, size_t len, int *argc,
                                   const char **argv, size_t *al) {
  size_t pos = 0;
  long n, i;
  char *end;
  const char *nl;
  if (len < 1) return 0;
  if (buf[0] != '*') return -1;
  nl = memchr(buf, '\n', len);
  if (nl == NULL) return 0;
  n = strtol(buf + 1, &end, 10);
  if (n < 1 || n > 100000) return -1;
  pos = (size_t)(nl - buf) + 1;
  *argc = (int)n;
  for (i = 0; i < n; i++) {
    long blen;
    if (pos >= len) return 0;
    if (buf[pos] != '$') return -1;
    nl = memchr(buf + pos, '\n', len - pos);
    if (nl == NULL) return 0;
    blen = strtol(buf + pos + 1, &end, 10);
    if (blen < 0) return -1;
    pos = (size_t)(nl - buf) + 1;
    if (len - pos < (size_t)blen + 2) return 0;
    if (i < 3) {
      argv[i] = buf + pos;
      al[i] = (size_t)blen;
    }
    pos += (size_t)blen + 2;
  }
  return (long)pos;
}

static inline bool bwt__fake_is(const char *a, size_t al, const char *name) {
  return al == strlen(name) && strncasecmp(a, name, al) == 0;
}

/* Answers one command; false when the connection should close. */
static inline bool bwt__fake_answer(bwt_fake_t *f, int fd, int argc,
                                    const char **argv, const size_t *al) {
  const char *resp;
  size_t rlen;
  if (bwt__fake_is(argv[0], al[0], "PING"))
    return bwt__fake_write(fd, "+PONG\r\n", 7);
  if (bwt__fake_is(argv[0], al[0], "AUTH") ||
      bwt__fake_is(argv[0], al[0], "SELECT"))
    return bwt__fake_write(fd, "+OK\r\n", 5);
  if (bwt__fake_is(argv[0], al[0], "SCRIPT"))
    return bwt__fake_write(
        fd, "$40\r\n0123456789abcdef0123456789abcdef01234567\r\n", 47);
  pthread_mutex_lock(&f->mu);
  snprintf(f->last_cmd, sizeof(f->last_cmd), "%.*s %.*s", (int)al[0], argv[0],
           argc > 1 ? (int)(al[1] < 60 ? al[1] : 60) : 0,
           argc > 1 ? argv[1] : "");
  if (f->next < f->nreplies) {
    resp = f->replies[f->next];
    rlen = f->lens[f->next];
    f->next++;
  } else {
    resp = "-ERR fake: no scripted reply\r\n";
    rlen = strlen(resp);
  }
  pthread_mutex_unlock(&f->mu);
  atomic_fetch_add(&f->served, 1);
  return bwt__fake_write(fd, resp, rlen);
}

static inline void bwt__fake_serve(bwt_fake_t *f, int fd) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return;
  while (!atomic_load(&f->stop)) {
    struct pollfd p[2] = {{fd, POLLIN, 0}, {f->lfd, POLLIN, 0}};
    ssize_t r;
    long used;
    if (poll(p, 2, 20) <= 0) continue;
    /* A new client (an object left over by a failed test still holds the
     * old connection): serve the newcomer. */
    if (p[1].revents & POLLIN) break;
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (len == cap) {
      char *nb = realloc(buf, cap * 2);
      if (nb == NULL) break;
      buf = nb;
      cap *= 2;
    }
    r = recv(fd, buf + len, cap - len, 0);
    if (r <= 0) break;
    len += (size_t)r;
    for (;;) {
      int argc = 0;
      const char *argv[3] = {"", "", ""};
      size_t al[3] = {0, 0, 0};
      used = bwt__fake_parse(buf, len, &argc, argv, al);
      if (used < 0) goto done;
      if (used == 0) break;
      if (!bwt__fake_answer(f, fd, argc, argv, al)) goto done;
      memmove(buf, buf + used, len - (size_t)used);
      len -= (size_t)used;
    }
  }
done:
  free(buf);
}

static inline void *bwt__fake_main(void *arg) {
  bwt_fake_t *f = arg;
  while (!atomic_load(&f->stop)) {
    struct pollfd p = {f->lfd, POLLIN, 0};
    int fd;
    if (poll(&p, 1, 20) <= 0) continue;
    fd = accept(f->lfd, NULL, NULL);
    if (fd < 0) continue;
    bwt__fake_serve(f, fd);
    close(fd);
  }
  return NULL;
}

/* Listens on a free loopback port and starts the thread. 0 or -1. */
static inline int bwt_fake_start(bwt_fake_t *f) {
  struct sockaddr_in a;
  socklen_t alen = sizeof(a);
  int one = 1;
  memset(f, 0, sizeof(*f));
  pthread_mutex_init(&f->mu, NULL);
  f->lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (f->lfd < 0) return -1;
  (void)setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
      listen(f->lfd, 8) != 0 ||
      getsockname(f->lfd, (struct sockaddr *)&a, &alen) != 0) {
    close(f->lfd);
    return -1;
  }
  f->port = ntohs(a.sin_port);
  if (pthread_create(&f->thread, NULL, bwt__fake_main, f) != 0) {
    close(f->lfd);
    return -1;
  }
  return 0;
}

static inline void bwt_fake_stop(bwt_fake_t *f) {
  atomic_store(&f->stop, true);
  pthread_join(f->thread, NULL);
  close(f->lfd);
  pthread_mutex_destroy(&f->mu);
}

#endif /* BW_REDIS_FAKE_H */
