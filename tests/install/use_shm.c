/* Installed-library check: a breaker in a shared-memory segment
 * (breakwater-shm). Exit 0 when it admits, records and trips as set up. */
#include <breakwater/shm.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  char name[64];
  bw_shm_config_t sc;
  bw_breaker_config_t bc;
  bw_error_t err;
  bw_permit_t p;
  bw_shm_t *shm;
  bw_shm_breaker_t *b;
  snprintf(name, sizeof name, "/bw-install-shm-%ld", (long)getpid());
  bw_shm_config_init(&sc);
  sc.name = name;
  shm = bw_shm_open(&sc, &err);
  if (shm == NULL) return fprintf(stderr, "shm: %s\n", err.message), 1;
  bw_breaker_config_init(&bc);
  bc.name = "payments";
  bc.failure_threshold = 1;
  b = bw_shm_breaker_new(shm, &bc, &err);
  if (b == NULL) return fprintf(stderr, "breaker: %s\n", err.message), 1;
  if (bw_shm_breaker_acquire(b, &p) != BW_OK) return 1;
  bw_shm_breaker_release(b, &p, BW_FAILURE);
  if (bw_shm_breaker_state(b) != BW_OPEN) return 1;
  bw_shm_breaker_free(b);
  bw_shm_close(shm);
  bw_shm_unlink(name, NULL);
  puts("shm: ok");
  return 0;
}
