/* Installed-library check: the libevent driver (breakwater-event) runs a
 * timer on the caller's event loop. */
#include <breakwater/driver_event.h>
#include <event2/event.h>
#include <stdio.h>

static int fired;

static void on_timer(void *userdata) {
  (void)userdata;
  fired++;
}

int main(void) {
  struct event_base *base = event_base_new();
  bw_ev_config_t cfg;
  bw_error_t err;
  bw_ev_t *drv;
  bw_ev_timer_t *t;
  if (base == NULL) return 1;
  bw_ev_config_init(&cfg);
  drv = bw_ev_new(base, &cfg, &err);
  if (drv == NULL) return fprintf(stderr, "event: %s\n", err.message), 1;
  t = bw_ev_timer_new(drv, on_timer, NULL);
  if (t == NULL || bw_ev_timer_start(t, 1) != BW_OK) return 1;
  event_base_dispatch(base);
  bw_ev_timer_free(t);
  bw_ev_free(drv);
  event_base_free(base);
  if (fired != 1) return 1;
  puts("event: ok");
  return 0;
}
