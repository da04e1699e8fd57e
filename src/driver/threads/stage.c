/* The threads driver's stage runner (threads.h): a pool of workers that
 * pull from a stage and complete with the handler's result. The stage
 * decides what may run; the workers only wait. A worker that finds nothing
 * sleeps on the runner's own condition variable until the stage's notify
 * hook bumps the runner's epoch. Public API only. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "breakwater/threads.h"

#define BW__RUNNER_MAX_THREADS 256u

struct bw_runner_s {
  bw_stage_t *s;
  bw_stage_handler_fn handler;
  void *userdata;
  uint32_t threads; /* started */
  pthread_t *tids;
  pthread_mutex_t lock; /* guards epoch and stopping */
  pthread_cond_t wake;  /* workers wait here for work */
  uint64_t epoch;       /* notifies so far */
  bool stopping;
};

/* Fills err (may be NULL) and returns code. */
static int bw__thr_error(bw_error_t *err, int code, const char *field,
                         const char *fmt, ...) {
  if (err != NULL) {
    va_list ap;
    err->code = code;
    snprintf(err->field, sizeof(err->field), "%s", field);
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
  }
  return code;
}

static void bw__thr_error_clear(bw_error_t *err) {
  if (err != NULL) {
    err->code = BW_OK;
    err->field[0] = '\0';
    err->message[0] = '\0';
  }
}

/* Zeroed memory through the library's allocator hooks (bw_free frees it). */
static void *bw__thr_zalloc(size_t size) {
  void *p = bw_store_malloc(size);
  if (p != NULL) memset(p, 0, size);
  return p;
}

void bw_runner_config_init(bw_runner_config_t *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->threads = 1;
}

/* The stage's notify hook: runs under the stage's lock, so it only bumps
 * the epoch and wakes the workers (it never calls the stage). */
static void bw__thr_notify(bw_stage_t *s, void *userdata) {
  bw_runner_t *r = userdata;
  (void)s;
  pthread_mutex_lock(&r->lock);
  r->epoch++;
  pthread_cond_signal(&r->wake);
  pthread_mutex_unlock(&r->lock);
}

static void *bw__thr_worker(void *arg) {
  bw_runner_t *r = arg;
  for (;;) {
    bw_stage_item_t it;
    uint64_t epoch;
    int rc;
    pthread_mutex_lock(&r->lock);
    if (r->stopping) {
      pthread_mutex_unlock(&r->lock);
      return NULL;
    }
    epoch = r->epoch;
    pthread_mutex_unlock(&r->lock);
    rc = bw_stage_next(r->s, &it);
    if (rc == BW_OK) {
      bw_stage_outcome_t o = r->handler(&it, r->userdata);
      (void)bw_stage_done(r->s, &it, o);
      continue;
    }
    /* Nothing to take (empty, or every slot in flight): sleep until a
     * submit or a completion changes that. The epoch, read before next(),
     * closes the window between next() answering and the wait starting: a
     * notify in between has already moved it. */
    pthread_mutex_lock(&r->lock);
    while (!r->stopping && r->epoch == epoch)
      pthread_cond_wait(&r->wake, &r->lock);
    pthread_mutex_unlock(&r->lock);
  }
}

/* Stops and joins the started workers. */
static void bw__thr_stop(bw_runner_t *r) {
  pthread_mutex_lock(&r->lock);
  r->stopping = true;
  pthread_cond_broadcast(&r->wake);
  pthread_mutex_unlock(&r->lock);
  for (uint32_t i = 0; i < r->threads; i++)
    pthread_join(r->tids[i], NULL);
}

/* Frees what bw_stage_runner_new made (workers stopped, hook removed). */
static void bw__thr_runner_destroy(bw_runner_t *r) {
  pthread_cond_destroy(&r->wake);
  pthread_mutex_destroy(&r->lock);
  bw_free(r->tids);
  bw_free(r);
}

bw_runner_t *bw_stage_runner_new(bw_stage_t *s, const bw_runner_config_t *cfg,
                                 bw_error_t *err) {
  bw_runner_t *r;
  uint32_t started = 0;
  if (s == NULL || cfg == NULL) {
    bw__thr_error(err, BW_E_INVAL, "", "stage and config must not be NULL");
    return NULL;
  }
  if (cfg->threads < 1 || cfg->threads > BW__RUNNER_MAX_THREADS) {
    bw__thr_error(err, BW_E_INVAL, "threads",
                  "threads must be in [1, %u] (got %u)", BW__RUNNER_MAX_THREADS,
                  cfg->threads);
    return NULL;
  }
  if (cfg->handler == NULL) {
    bw__thr_error(err, BW_E_INVAL, "handler", "handler must not be NULL");
    return NULL;
  }
  if (!bw_stage_has_on_expired(s)) {
    bw__thr_error(err, BW_E_INVAL, "on_expired",
                  "on_expired must be set on stage \"%s\" to run it with a "
                  "runner (expired items must go somewhere)",
                  bw_stage_name(s));
    return NULL;
  }
  r = bw__thr_zalloc(sizeof(*r));
  if (r != NULL) r->tids = bw__thr_zalloc(cfg->threads * sizeof(pthread_t));
  if (r == NULL || r->tids == NULL) {
    if (r != NULL) bw_free(r);
    bw__thr_error(err, BW_E_NOMEM, "", "out of memory creating a runner");
    return NULL;
  }
  if (pthread_mutex_init(&r->lock, NULL) != 0) {
    bw_free(r->tids);
    bw_free(r);
    bw__thr_error(err, BW_E_NOMEM, "", "out of memory creating a runner");
    return NULL;
  }
  if (pthread_cond_init(&r->wake, NULL) != 0) {
    pthread_mutex_destroy(&r->lock);
    bw_free(r->tids);
    bw_free(r);
    bw__thr_error(err, BW_E_NOMEM, "", "out of memory creating a runner");
    return NULL;
  }
  r->s = s;
  r->handler = cfg->handler;
  r->userdata = cfg->userdata;
  /* Claims the stage: its one notify hook is the runner's. */
  if (bw_stage_set_notify(s, bw__thr_notify, r) != BW_OK) {
    bw__thr_runner_destroy(r);
    bw__thr_error(err, BW_E_INVAL, "", "stage \"%s\" already has a runner",
                  bw_stage_name(s));
    return NULL;
  }
  for (; started < cfg->threads; started++)
    if (pthread_create(&r->tids[started], NULL, bw__thr_worker, r) != 0) break;
  r->threads = started;
  if (started < cfg->threads) {
    bw_runner_free(r);
    bw__thr_error(err, BW_E_NOMEM, "", "could not start runner threads");
    return NULL;
  }
  bw__thr_error_clear(err);
  return r;
}

void bw_runner_free(bw_runner_t *r) {
  if (r == NULL) return;
  bw__thr_stop(r);
  /* A barrier: once it returns, no submit or completion is inside the hook,
   * so the runner may go. */
  (void)bw_stage_set_notify(r->s, NULL, NULL);
  bw__thr_runner_destroy(r);
}
