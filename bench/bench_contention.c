/* bench_contention — the AWS "Exponential Backoff And Jitter" experiment, in
 * virtual time, with breakwater's own retry policies.
 *
 * N clients start at once and each wants to update one row guarded by
 * optimistic concurrency control: read the version, then write it back with
 * that version; the write succeeds only if nobody wrote in between. On a
 * failed write the client asks its retry iterator how long to wait, waits,
 * and reads again. The network adds |normal(10 ms, 2 ms)| to every message,
 * as in the original simulator (aws-samples/aws-arch-backoff-simulator).
 * Backoff base 5 ms (first retry 10 ms), cap 2 s. For each policy it prints
 * the mean over R runs of the write calls made and the time until the last
 * client finished.
 *
 *   build/bench/bench_contention [--clients N[,N...]] [--runs R] [--seed S]
 *
 * Everything is virtual: the same seed gives the same table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/breakwater.h"

#define NS_PER_MS 1000000.0

typedef enum { EV_READ, EV_READ_RSP, EV_WRITE, EV_WRITE_RSP } ev_kind_t;

typedef struct {
  double t_ms;
  uint64_t seq; /* deterministic tie-break */
  int client;
  ev_kind_t kind;
  uint64_t version; /* READ_RSP: version read; WRITE: version sent */
  int ok;           /* WRITE_RSP */
} ev_t;

/* A binary min-heap of events ordered by (time, seq). */
typedef struct {
  ev_t *v;
  size_t n, cap;
  uint64_t seq;
} heap_t;

static int ev_less(const ev_t *a, const ev_t *b) {
  return a->t_ms < b->t_ms || (a->t_ms == b->t_ms && a->seq < b->seq);
}

static void heap_push(heap_t *h, ev_t e) {
  size_t i;
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 256;
    h->v = realloc(h->v, h->cap * sizeof(ev_t));
    if (h->v == NULL) {
      fprintf(stderr, "bench_contention: out of memory\n");
      exit(1);
    }
  }
  e.seq = h->seq++;
  i = h->n++;
  while (i > 0 && ev_less(&e, &h->v[(i - 1) / 2])) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = e;
}

static ev_t heap_pop(heap_t *h) {
  ev_t top = h->v[0], last = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const ev_t *best = &last;
    if (l < h->n && ev_less(&h->v[l], best)) m = l, best = &h->v[l];
    if (r < h->n && ev_less(&h->v[r], best)) m = r;
    if (m == i) break;
    h->v[i] = h->v[m];
    i = m;
  }
  if (h->n > 0) h->v[i] = last;
  return top;
}

/* |normal(mean, sd)| by Box-Muller. */
static double net_delay(bw_rand_t *r) {
  double u1 = bw_rand_double(r), u2 = bw_rand_double(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return fabs(10.0 + 2.0 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

typedef enum {
  P_NONE,   /* retry at once */
  P_EXPO,   /* exponential, no jitter */
  P_FULL,   /* exponential, full jitter */
  P_EQUAL,  /* exponential, equal jitter */
  P_DECORR, /* breakwater's decorrelated jitter (Polly v8 V2) */
  P_BROOKER /* the blog's decorrelated formula, for reference */
} policy_kind_t;

static const char *const policy_names[] = {
    "no backoff",
    "exponential, no jitter",
    "full jitter",
    "equal jitter",
    "decorrelated (breakwater: Polly V2)",
    "decorrelated (blog formula)"};

typedef struct {
  bw_retry_t it;
  uint32_t attempt;
  double brooker_sleep;
  bw_rand_t rng;
} client_t;

static bw_retry_policy_t *make_policy(policy_kind_t k, uint64_t seed) {
  bw_retry_config_t cfg;
  bw_error_t err;
  bw_retry_policy_t *p;
  bw_retry_config_init(&cfg);
  cfg.name = policy_names[k];
  cfg.max_attempts = 1000000; /* the experiment retries until it succeeds */
  cfg.backoff = BW_BACKOFF_EXPONENTIAL;
  cfg.base_ms = 10; /* n-th retry: 10 * 2^(n-1) = 5 * 2^n, as in the blog */
  cfg.multiplier = 2.0;
  cfg.max_ms = 2000;
  cfg.seed = seed;
  cfg.jitter = k == P_FULL     ? BW_JITTER_FULL
               : k == P_EQUAL  ? BW_JITTER_EQUAL
               : k == P_DECORR ? BW_JITTER_DECORRELATED
                               : BW_JITTER_NONE;
  p = bw_retry_policy_new(&cfg, &err);
  if (p == NULL) {
    fprintf(stderr, "bench_contention: %s\n", err.message);
    exit(1);
  }
  return p;
}

/* One run: returns the completion time in ms; adds write calls to *calls. */
static double run_once(policy_kind_t k, const bw_retry_policy_t *policy,
                       int nclients, uint64_t seed, uint64_t *calls) {
  heap_t h = {0};
  bw_rand_t net;
  client_t *c = calloc((size_t)nclients, sizeof(client_t));
  uint64_t version = 0;
  double now = 0;
  if (c == NULL) {
    fprintf(stderr, "bench_contention: out of memory\n");
    exit(1);
  }
  bw_rand_seed(&net, seed);
  for (int i = 0; i < nclients; i++) {
    ev_t e = {0};
    bw_retry_begin(&c[i].it, policy, 0);
    bw_rand_seed(&c[i].rng, seed * 7919 + (uint64_t)i + 1);
    c[i].brooker_sleep = 5.0;
    e.t_ms = net_delay(&net);
    e.client = i;
    e.kind = EV_READ;
    heap_push(&h, e);
  }
  while (h.n > 0) {
    ev_t e = heap_pop(&h), out = {0};
    client_t *cl = &c[e.client];
    now = e.t_ms;
    out.client = e.client;
    switch (e.kind) {
    case EV_READ: /* at the server */
      out.kind = EV_READ_RSP;
      out.version = version;
      out.t_ms = now + net_delay(&net);
      heap_push(&h, out);
      break;
    case EV_READ_RSP: /* at the client: send the write */
      out.kind = EV_WRITE;
      out.version = e.version;
      out.t_ms = now + net_delay(&net);
      heap_push(&h, out);
      break;
    case EV_WRITE: /* at the server */
      (*calls)++;
      out.kind = EV_WRITE_RSP;
      out.ok = e.version == version;
      if (out.ok) version++;
      out.t_ms = now + net_delay(&net);
      heap_push(&h, out);
      break;
    case EV_WRITE_RSP: { /* at the client */
      double wait = 0;
      if (e.ok) break; /* done */
      cl->attempt++;
      if (k == P_BROOKER) {
        double hi = cl->brooker_sleep * 3.0;
        double s = 5.0 + (hi - 5.0) * bw_rand_double(&cl->rng);
        cl->brooker_sleep = s < 2000.0 ? s : 2000.0;
        wait = cl->brooker_sleep;
      } else if (k != P_NONE) {
        int64_t delay_ms = 0;
        int d =
            bw_retry_next(&cl->it, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE,
                          (int64_t)(now * NS_PER_MS), &delay_ms);
        if (d != BW_RETRY) {
          fprintf(stderr, "bench_contention: policy gave up (%s)\n",
                  bw_giveup_name(bw_retry_reason(&cl->it)));
          exit(1);
        }
        wait = (double)delay_ms;
      }
      out.kind = EV_READ;
      out.t_ms = now + net_delay(&net) + wait;
      heap_push(&h, out);
      break;
    }
    }
  }
  free(h.v);
  free(c);
  return now;
}

int main(int argc, char **argv) {
  int clients[8] = {50, 100};
  int nclients = 2, runs = 100;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--clients") == 0 && i + 1 < argc) {
      char *s = argv[++i], *end;
      nclients = 0;
      while (*s && nclients < 8) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 100000 || (*end != ',' && *end != '\0')) {
          fprintf(stderr,
                  "bench_contention: --clients takes numbers 1..100000 "
                  "separated by commas (got '%s')\n",
                  argv[i]);
          return 2;
        }
        clients[nclients++] = (int)v;
        s = *end == ',' ? end + 1 : end;
      }
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
      if (runs < 1 || runs > 10000) {
        fprintf(stderr, "bench_contention: --runs must be in 1..10000\n");
        return 2;
      }
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else {
      fprintf(stderr,
              "bench_contention: unknown flag '%s' (flags: --clients N[,N], "
              "--runs R, --seed S)\n",
              argv[i]);
      return 2;
    }
  }
  printf("# OCC contention in virtual time: mean of %d runs, seed %llu\n\n",
         runs, (unsigned long long)seed);
  printf("| clients | policy | write calls | completion (ms) |\n");
  printf("|---:|---|---:|---:|\n");
  for (int ci = 0; ci < nclients; ci++) {
    for (int k = P_NONE; k <= P_BROOKER; k++) {
      uint64_t calls = 0;
      double total_ms = 0;
      for (int r = 0; r < runs; r++) {
        uint64_t s = seed * 1000003u + (uint64_t)r;
        bw_retry_policy_t *p = make_policy((policy_kind_t)k, s + 17);
        total_ms += run_once((policy_kind_t)k, p, clients[ci], s, &calls);
        bw_retry_policy_free(p);
      }
      printf("| %d | %s | %.0f | %.1f |\n", clients[ci], policy_names[k],
             (double)calls / runs, total_ms / runs);
    }
  }
  return 0;
}
