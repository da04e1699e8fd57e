/* The shape of a language binding: a shared object (-shared -fPIC) that
 * links breakwater-shm and creates a breaker. plugin_run returns the
 * breaker's state after one failure at a threshold of 1 (BW_OPEN), or -1. */
#include <breakwater/shm.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((visibility("default"))) int plugin_run(void);

int plugin_run(void) {
  char name[64];
  bw_shm_config_t sc;
  bw_breaker_config_t bc;
  bw_permit_t p;
  bw_shm_t *shm;
  bw_shm_breaker_t *b;
  int state;
  snprintf(name, sizeof name, "/bw-install-plugin-%ld", (long)getpid());
  bw_shm_config_init(&sc);
  sc.name = name;
  if ((shm = bw_shm_open(&sc, NULL)) == NULL) return -1;
  bw_breaker_config_init(&bc);
  bc.name = "plugin";
  bc.failure_threshold = 1;
  if ((b = bw_shm_breaker_new(shm, &bc, NULL)) == NULL) return -1;
  if (bw_shm_breaker_acquire(b, &p) != BW_OK) return -1;
  bw_shm_breaker_release(b, &p, BW_FAILURE);
  state = (int)bw_shm_breaker_state(b);
  bw_shm_breaker_free(b);
  bw_shm_close(shm);
  bw_shm_unlink(name, NULL);
  return state;
}
