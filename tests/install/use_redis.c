/* Installed-library check: the Redis component (breakwater-redis) links and
 * validates its configuration, naming the field. No server is needed: the
 * bad port is refused before any connection. */
#include <breakwater/store_redis.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  bw_redis_breaker_config_t cfg;
  bw_error_t err;
  bw_redis_breaker_config_init(&cfg);
  cfg.breaker.name = "payments";
  cfg.redis.port = 0;
  if (bw_redis_breaker_new(&cfg, &err) != NULL) return 1;
  if (err.code != BW_E_INVAL || strstr(err.field, "port") == NULL) {
    fprintf(stderr, "redis: unexpected error '%s' (field '%s')\n", err.message,
            err.field);
    return 1;
  }
  puts("redis: ok");
  return 0;
}
