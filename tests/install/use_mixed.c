/* Installed-library check: one program on the shared core and two
 * components (shm and curl). There must be one core: the allocator this
 * program installs with bw_replace_allocator is the one both components
 * allocate through, and an error raised inside a component names its field
 * in the bw_error_t the program reads. */
#include <breakwater/driver_curl.h>
#include <breakwater/shm.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long allocations;
static void *count_malloc(size_t n) {
  allocations++;
  return malloc(n);
}
static void *count_realloc(void *p, size_t n) {
  allocations++;
  return realloc(p, n);
}
static void *count_calloc(size_t c, size_t n) {
  allocations++;
  return calloc(c, n);
}

int main(void) {
  char name[64];
  bw_shm_config_t sc;
  bw_breaker_config_t bc;
  bw_curl_config_t cc;
  bw_error_t err;
  bw_shm_t *shm;
  bw_shm_breaker_t *b;
  bw_curl_t *http;
  struct event_base *base;
  long before;
  if (bw_replace_allocator(count_malloc, count_realloc, count_calloc, free) !=
      BW_OK)
    return 1;
  snprintf(name, sizeof name, "/bw-install-mixed-%ld", (long)getpid());
  bw_shm_config_init(&sc);
  sc.name = name;
  before = allocations;
  shm = bw_shm_open(&sc, &err);
  if (shm == NULL) return fprintf(stderr, "shm: %s\n", err.message), 1;
  if (allocations == before)
    return fprintf(stderr, "shm bypassed the allocator\n"), 1;

  bw_breaker_config_init(&bc);
  bc.name = "payments";
  bc.failure_threshold = 0; /* refused: the component must name the field */
  if (bw_shm_breaker_new(shm, &bc, &err) != NULL) return 1;
  if (err.code != BW_E_INVAL || strcmp(err.field, "failure_threshold") != 0)
    return fprintf(stderr, "shm error names '%s': %s\n", err.field,
                   err.message),
           1;
  bc.failure_threshold = 3;
  b = bw_shm_breaker_new(shm, &bc, &err);
  if (b == NULL) return fprintf(stderr, "breaker: %s\n", err.message), 1;

  base = event_base_new();
  bw_curl_config_init(&cc);
  before = allocations;
  http = bw_curl_new(base, &cc, &err);
  if (http == NULL) return fprintf(stderr, "curl: %s\n", err.message), 1;
  if (allocations == before)
    return fprintf(stderr, "curl bypassed the allocator\n"), 1;
  cc.max_body = UINT32_MAX; /* refused, naming the field */
  if (bw_curl_new(base, &cc, &err) != NULL ||
      strcmp(err.field, "max_body") != 0)
    return fprintf(stderr, "curl error names '%s': %s\n", err.field,
                   err.message),
           1;

  bw_curl_free(http);
  event_base_free(base);
  bw_shm_breaker_free(b);
  bw_shm_close(shm);
  bw_shm_unlink(name, NULL);
  printf("mixed: ok (%ld allocations through the program's allocator)\n",
         allocations);
  return 0;
}
