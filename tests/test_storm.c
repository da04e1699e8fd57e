/* Specification tests: the storm, real and virtual (tools/storm_*.c).
 *
 * Real HTTP on loopback with a small, fast partner (100 clients, capacity
 * 50, latencies of a few ms): every logical request ends exactly one way,
 * and every network call that got a response is one the partner counted;
 * one that got none (a timeout) may have been abandoned before it reached
 * the partner, as happens on a loaded machine. Only counts are asserted,
 * never times. The virtual run is checked for
 * determinism: the same seed writes the same JSON, byte for byte. */
#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bw_test.h"
#include "partner_server.h"
#include "storm_metrics.h"
#include "storm_real.h"
#include "storm_report.h"

static bw_sim_partner_config_t small_partner(void) {
  bw_sim_partner_config_t p;
  bw_sim_partner_config_init(&p);
  p.capacity = 50;
  p.ok_min_ms = 2;
  p.ok_max_ms = 6;
  p.slow_min_ms = 20;
  p.slow_max_ms = 120;
  return p;
}

/* A storm of `clients` requests in `mode` against the small partner, seed
 * 4, each attempt timing out after attempt_timeout_ms, cut after
 * max_duration_ms. */
static bw_storm_real_config_t storm_config(bw_lab_mode_t mode, uint32_t clients,
                                           int64_t attempt_timeout_ms,
                                           uint32_t max_limit,
                                           int64_t max_duration_ms) {
  bw_storm_real_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.mode = mode;
  cfg.clients = clients;
  cfg.attempt_timeout_ms = attempt_timeout_ms;
  cfg.seed = 4;
  cfg.max_limit = max_limit;
  cfg.partner = small_partner();
  cfg.max_duration_ms = max_duration_ms;
  return cfg;
}

static void assert_row_conserved(const bw_storm_row_t *r, uint64_t clients) {
  uint64_t ended = r->successes;
  for (int k = 0; k < BW_STORM_F__COUNT; k++)
    ended += r->failures[k];
  assert_u64_eq(r->requests, clients);
  assert_u64_eq(ended, clients);
  /* The partner (/charges) counted every call that got a response, and
   * perhaps some that did not: never more than the client sent. */
  assert_true(r->partner_received <= r->network_calls);
  assert_true(r->network_calls - r->partner_received <= r->unanswered);
  assert_true(r->network_calls >= r->successes);
}

static void real_storm_conserves_counts_in_every_mode(void **state) {
  (void)state;
  for (int m = 0; m < BW_LAB__COUNT; m++) {
    bw_storm_real_config_t cfg;
    bw_storm_row_t row;
    bw_storm_timeline_t tl;
    char err[512];
    cfg = storm_config((bw_lab_mode_t)m, 100, 100, 1000, 60000);
    memset(&tl, 0, sizeof tl);
    cfg.sample_ms = 20;
    int rc = bw_storm_run_real(&cfg, &row, &tl, err, sizeof err);
    if (rc != 0) fail_msg("mode %s: %s", bw_lab_mode_name(cfg.mode), err);
    assert_row_conserved(&row, 100);
    assert_int_equal(row.mode, m);
    /* The partner saw at most the clients' attempts in flight, and each
     * call it answered was in flight there. (Not `>= 1` unconditionally:
     * on a loaded machine every 100 ms attempt may time out before the
     * partner accepts it, and then the partner rightly saw none.) */
    assert_true(row.partner_received >= row.successes);
    if (row.partner_received > 0)
      assert_true(row.partner_max_in_flight >= 1);
    else
      assert_u64_eq(row.partner_max_in_flight, 0);
    assert_true(row.partner_max_in_flight <= 3 * 100);
    /* The timeline has at least the final sample, ending with every
     * request completed. */
    assert_true(tl.count >= 1);
    assert_u64_eq(tl.entries[tl.count - 1].s.completed,
                  100 - row.failures[BW_STORM_F_OTHER]);
    bw_storm_timeline_free(&tl);
  }
}

static void an_unreachable_or_remote_url_is_refused(void **state) {
  (void)state;
  bw_storm_real_config_t cfg;
  bw_storm_row_t row;
  char err[512];
  cfg = storm_config(BW_LAB_NAIVE, 10, 100, 100, 10000);
  cfg.url = "http://127.0.0.1:1"; /* nothing listens on port 1 */
  assert_int_equal(bw_storm_run_real(&cfg, &row, NULL, err, sizeof err), -1);
  assert_contains(err, "cannot reach the partner at http://127.0.0.1:1");
  cfg.url = "http://example.invalid";
  assert_int_equal(bw_storm_run_real(&cfg, &row, NULL, err, sizeof err), -1);
  assert_contains(err, "loopback only");
}

/* The --url rule on libcurl's own parse: names under .invalid and loopback
 * addresses only, so nothing is sent anywhere even if the check regresses. */
static void the_url_is_parsed_and_pinned_to_loopback(void **state) {
  (void)state;
  static const struct {
    const char *url, *base;
  } ok[] = {
      {"http://127.0.0.1:1", "http://127.0.0.1:1"},
      {"http://127.0.0.1:8404/", "http://127.0.0.1:8404"},
      {"http://127.9.8.7:5/p/", "http://127.9.8.7:5/p"},
      {"http://localhost:1", "http://127.0.0.1:1"},
      {"http://LOCALHOST", "http://127.0.0.1:80"},
      {"http://[::1]:1", "http://[::1]:1"},
  };
  static const struct {
    const char *url, *why;
  } bad[] = {
      {"http://127.0.0.1:1@x.invalid:80", "user name or password"},
      {"http://u:p@127.0.0.1:1", "user name or password"},
      {"http://127.0.0.1.x.invalid", "numeric loopback"},
      {"http://x.invalid", "numeric loopback"},
      {"http://127.0.0.1.x.invalid:1/", "numeric loopback"},
      {"http://localhost.x.invalid:1", "numeric loopback"},
      {"https://127.0.0.1:1", "scheme must be http"},
      {"ftp://127.0.0.1:1", "scheme must be http"},
      {"http://127.0.0.1:1/?a=b", "no query"},
      {"127.0.0.1:1", "not a URL"},
      {"", "not a URL"},
  };
  char base[256], err[512];
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    if (bw_storm_check_url(ok[i].url, base, sizeof base, err, sizeof err) != 0)
      fail_msg("%s: %s", ok[i].url, err);
    assert_string_equal(base, ok[i].base);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    if (bw_storm_check_url(bad[i].url, base, sizeof base, err, sizeof err) !=
        -1)
      fail_msg("%s was accepted as %s", bad[i].url, base);
    assert_contains(err, "--url must be");
    assert_contains(err, bad[i].why);
  }
}

/* --max-duration-s is honoured: a storm whose partner answers after 5 s is
 * cut after 0.8 s, requests submitted in small batches so the cut can fire
 * between them; the row still accounts for every request (the cancelled
 * and the never-submitted as "other"). The cut came before the first
 * answer: all 300 were open at it, and every one ended as "other" — none
 * answered, none timed out (20 s), none failed any other way. */
static void the_duration_cut_is_honoured(void **state) {
  (void)state;
  bw_storm_real_config_t cfg;
  bw_storm_row_t row;
  char err[512];
  cfg = storm_config(BW_LAB_NAIVE, 300, 20000, 1000, 800);
  cfg.partner.capacity = 1000;
  cfg.partner.ok_min_ms = 5000;
  cfg.partner.ok_max_ms = 5000;
  cfg.submit_batch = 16;
  assert_int_equal(bw_storm_run_real(&cfg, &row, NULL, err, sizeof err), -2);
  assert_contains(err, "mode naive cut after 800 ms with 300 of 300");
  assert_row_conserved(&row, 300);
  assert_u64_eq(row.successes, 0);
  assert_u64_eq(row.failures[BW_STORM_F_OTHER], 300);
  assert_u64_eq(row.failures[BW_STORM_F_TIMEOUT], 0);
}

/* The real storm refuses what it cannot serve, with the numbers. */
static void the_fd_budget_is_checked(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(bw_storm_fd_budget(100, true, err, sizeof err), 0);
  assert_int_equal(
      bw_storm_fd_budget(BW_STORM_REAL_MAX_CLIENTS + 1, false, err, sizeof err),
      -1);
  assert_contains(err, "above the real storm's ceiling of 10000");
  struct rlimit old, low;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
  low = old;
  low.rlim_cur = 200;
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  /* raises the soft limit back to the hard one first */
  assert_int_equal(bw_storm_fd_budget(100, true, err, sizeof err), 0);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/* A partner on its own thread, as `breakwater partner` would be. */
typedef struct side_partner_s {
  struct event_base *base;
  bw_partner_server_t *srv;
  struct event *tick;
  pthread_t th;
  atomic_bool stop;
} side_partner_t;

static void side_tick(evutil_socket_t fd, short what, void *arg) {
  side_partner_t *p = arg;
  (void)fd;
  (void)what;
  if (atomic_load(&p->stop)) event_base_loopbreak(p->base);
}

static void *side_main(void *arg) {
  event_base_dispatch(((side_partner_t *)arg)->base);
  return NULL;
}

/* storm --url against a partner still busy with a request a proxy (here: a
 * client that sent it and hung up) abandoned: POST /reset answers 409 until
 * it finishes; the storm waits (bounded) instead of failing. */
static void a_busy_partner_is_waited_for(void **state) {
  (void)state;
  side_partner_t sp;
  bw_partner_server_config_t pc;
  bw_error_t e;
  memset(&sp, 0, sizeof sp);
  atomic_init(&sp.stop, false);
  bw_partner_server_config_init(&pc);
  pc.partner = small_partner();
  pc.partner.ok_min_ms = 1200;
  pc.partner.ok_max_ms = 1200;
  sp.base = event_base_new();
  assert_non_null(sp.base);
  sp.srv = bw_partner_server_new(sp.base, &pc, &e);
  assert_non_null(sp.srv);
  sp.tick = event_new(sp.base, -1, EV_PERSIST, side_tick, &sp);
  struct timeval tv = {0, 10000};
  evtimer_add(sp.tick, &tv);
  uint16_t port = bw_partner_server_port(sp.srv);
  assert_int_equal(pthread_create(&sp.th, NULL, side_main, &sp), 0);

  /* The abandoned request: sent, then the client closes (a FIN: the
   * partner keeps it in flight for its 1.2 s). */
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  static const char post[] =
      "POST /charges HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
  assert_int_equal(send(fd, post, sizeof post - 1, MSG_NOSIGNAL),
                   (ssize_t)sizeof post - 1);
  struct timespec ts = {0, 100000000};
  nanosleep(&ts, NULL); /* it is admitted */
  close(fd);

  bw_storm_real_config_t cfg;
  bw_storm_row_t row;
  char url[64], err[512];
  snprintf(url, sizeof url, "http://127.0.0.1:%u", (unsigned)port);
  cfg = storm_config(BW_LAB_BREAKWATER, 5, 5000, 100, 20000);
  cfg.idle_wait_ms = 10000;
  cfg.url = url;
  int rc = bw_storm_run_real(&cfg, &row, NULL, err, sizeof err);
  atomic_store(&sp.stop, true);
  pthread_join(sp.th, NULL);
  bw_partner_server_free(sp.srv);
  event_free(sp.tick);
  event_base_free(sp.base);
  if (rc != 0) fail_msg("%s", err);
  assert_u64_eq(row.successes, 5);
  assert_u64_eq(row.partner_received, 5); /* after the reset */
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *buf = calloc(1, 1 << 16);
  if (buf != NULL && fread(buf, 1, (1 << 16) - 1, f) == 0) buf[0] = '\0';
  fclose(f);
  return buf;
}

static void lab_json_is_deterministic(void **state) {
  (void)state;
  char p1[] = "/tmp/bw-lab-a-XXXXXX", p2[] = "/tmp/bw-lab-b-XXXXXX";
  int f1 = mkstemp(p1), f2 = mkstemp(p2);
  assert_true(f1 >= 0 && f2 >= 0);
  close(f1);
  close(f2);
  const char *paths[2] = {p1, p2};
  for (int k = 0; k < 2; k++) {
    bw_storm_row_t rows[BW_LAB__COUNT];
    for (int m = 0; m < BW_LAB__COUNT; m++) {
      bw_lab_run_config_t cfg;
      bw_lab_results_t r;
      bw_lab_run_config_init(&cfg);
      cfg.mode = (bw_lab_mode_t)m;
      assert_status(bw_lab_run_virtual(&cfg, &r, NULL), BW_OK);
      bw_storm_row_from_lab(&rows[m], cfg.mode, &r);
      assert_row_conserved(&rows[m], 800);
    }
    bw_storm_meta_t meta = {true, 4, 800, 400, 2000, NULL};
    char err[256];
    assert_int_equal(bw_storm_write_json(paths[k], &meta, rows, BW_LAB__COUNT,
                                         err, sizeof err),
                     0);
  }
  char *a = slurp(p1), *b = slurp(p2);
  assert_non_null(a);
  assert_non_null(b);
  assert_string_equal(a, b);
  assert_contains(a, "\"virtual\": true");
  assert_contains(a, "\"mode\": \"breakwater\"");
  free(a);
  free(b);
  unlink(p1);
  unlink(p2);
  char err[256];
  bw_storm_meta_t meta = {true, 4, 800, 400, 2000, NULL};
  assert_int_equal(bw_storm_write_json("/nonexistent-dir/x.json", &meta, NULL,
                                       0, err, sizeof err),
                   -1);
  assert_contains(err, "cannot write '/nonexistent-dir/x.json'");
}

/* The metrics text `storm --url` reads from the partner: exact answers. */
static int metric(const char *text, const char *name, uint64_t *v, char *err) {
  *v = 777;
  return bw_storm_metric(text, strlen(text), name, v, err, 256);
}

static void the_partners_metrics_text_is_read_strictly(void **state) {
  char err[256];
  uint64_t v;
  (void)state;
  const char *ok =
      "# HELP c_total calls\n"
      "# TYPE c_total counter\n"
      "c_total 42\n"
      "c_total_other 9\n"
      "c{kind=\"x\"} 5\n"
      "g\t7 1700000000000\r\n"
      "m 18446744073709551615";
  assert_int_equal(metric(ok, "c_total", &v, err), 1);
  assert_u64_eq(v, 42);
  assert_string_equal(err, "");
  assert_int_equal(metric(ok, "g", &v, err), 1);
  assert_u64_eq(v, 7);
  assert_int_equal(metric(ok, "m", &v, err), 1);
  assert_u64_eq(v, UINT64_MAX);
  /* absent: 0, nothing written (a labelled sample is not the sample) */
  assert_int_equal(metric(ok, "c", &v, err), 0);
  assert_u64_eq(v, 777);
  assert_int_equal(metric(ok, "HELP", &v, err), 0);
  /* malformed: -1, naming the metric and the rule */
  assert_int_equal(metric("c -5\n", "c", &v, err), -1);
  assert_string_equal(err,
                      "partner metric c: value must be a whole number "
                      "of digits, optionally followed by a timestamp "
                      "(got \"-5\")");
  assert_u64_eq(v, 777);
  assert_int_equal(metric("c 1.5e3\n", "c", &v, err), -1);
  assert_contains(err, "(got \"1.5e3\")");
  assert_int_equal(metric("c \n", "c", &v, err), -1);
  assert_contains(err, "(got \"\")");
  assert_int_equal(metric("c 12abc\n", "c", &v, err), -1);
  assert_contains(err, "(got \"12abc\")");
  assert_int_equal(metric("c 18446744073709551616\n", "c", &v, err), -1);
  assert_string_equal(err,
                      "partner metric c: value must be at most "
                      "18446744073709551615 (got "
                      "\"18446744073709551616\")");
  assert_int_equal(metric("c 1\nc 2\n", "c", &v, err), -1);
  assert_string_equal(err,
                      "partner metric c: the sample appears twice (a "
                      "metric has one unlabelled sample)");
  assert_u64_eq(v, 777);
  /* only len bytes are read: "c 12" of "c 123" */
  assert_int_equal(bw_storm_metric("c 123", 4, "c", &v, err, sizeof err), 1);
  assert_u64_eq(v, 12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(real_storm_conserves_counts_in_every_mode),
      cmocka_unit_test(an_unreachable_or_remote_url_is_refused),
      cmocka_unit_test(the_url_is_parsed_and_pinned_to_loopback),
      cmocka_unit_test(the_duration_cut_is_honoured),
      cmocka_unit_test(the_fd_budget_is_checked),
      cmocka_unit_test(a_busy_partner_is_waited_for),
      cmocka_unit_test(lab_json_is_deterministic),
      cmocka_unit_test(the_partners_metrics_text_is_read_strictly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
