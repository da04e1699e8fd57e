/* Installed-library check: the libcurl driver (breakwater-curl) is created
 * on an event loop, a bad setting is refused naming its field, and its
 * registry collector writes its families. No request is sent. */
#include <breakwater/driver_curl.h>
#include <event2/event.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  struct event_base *base = event_base_new();
  bw_curl_config_t cfg;
  bw_error_t err;
  bw_curl_t *http;
  if (base == NULL) return 1;
  bw_curl_config_init(&cfg);
  http = bw_curl_new(base, &cfg, &err);
  if (http == NULL) return fprintf(stderr, "curl: %s\n", err.message), 1;
  {
    bw_registry_t *reg = bw_registry_new(NULL, &err);
    char *text;
    int ok;
    if (reg == NULL || bw_curl_put_registry(reg, "x", http, &err) != BW_OK)
      return fprintf(stderr, "curl: %s\n", err.message), 1;
    text = bw_registry_prometheus(reg, NULL);
    ok = text != NULL &&
         strstr(text, "breakwater_http_client_attempts_total{name=\"x\"} 0\n");
    bw_free(text);
    bw_registry_free(reg);
    if (!ok) return fprintf(stderr, "curl: no collector family\n"), 1;
  }
  bw_curl_free(http);
  cfg.connect_timeout_ms = 0;
  if (bw_curl_new(base, &cfg, &err) != NULL ||
      strcmp(err.field, "connect_timeout_ms") != 0)
    return 1;
  event_base_free(base);
  puts("curl: ok");
  return 0;
}
