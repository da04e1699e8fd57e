/* breaker_flaky — a circuit breaker protecting a flaky function.
 *
 * The "dependency" is healthy, then fails every call for a while (an outage),
 * then recovers. Watch the breaker open after 5 consecutive failures, reject
 * calls fast without touching the dependency, probe after the break (a failed
 * probe re-opens it with a longer break), and close once two probes succeed.
 * Every event is printed as a JSON line on stdout; a final stats line follows.
 *
 * Runs in real time (about 1.5 s) with the monotonic clock. With --virtual it
 * runs the same scenario on a manual clock: instant and identical every run.
 *
 *   breaker_flaky [--virtual] [--seed N]
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakwater/breakwater.h"

#define CALL_EVERY_MS 5
#define RUN_MS 1500
#define OUTAGE_FROM_MS 300
#define OUTAGE_TO_MS 800

/* The flaky dependency: 2% failures when healthy, all failures in the
 * outage. Returns the outcome the caller reports. */
static bw_outcome_t flaky_call(int64_t t_ms, bw_rand_t *r,
                               long *dependency_calls) {
  (*dependency_calls)++;
  if (t_ms >= OUTAGE_FROM_MS && t_ms < OUTAGE_TO_MS) return BW_FAILURE;
  return bw_rand_double(r) < 0.02 ? BW_FAILURE : BW_SUCCESS;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
  int virtual_time = 0;
  uint64_t seed = 7;
  bw_clock_t *manual = NULL;
  const bw_clock_t *clock = bw_clock_monotonic();
  bw_breaker_config_t cfg;
  bw_breaker_stats_t st;
  bw_error_t err;
  bw_sink_t *sink;
  bw_breaker_t *b;
  bw_rand_t r;
  int64_t t0;
  long calls = 0, dependency_calls = 0, ok = 0, failed = 0, rejected = 0;
  char line[1024];

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--virtual") == 0) {
      virtual_time = 1;
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      char *end;
      seed = strtoull(argv[++i], &end, 10);
      if (*end != '\0') {
        fprintf(stderr,
                "breaker_flaky: --seed must be a whole number (got '%s')\n",
                argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr,
              "breaker_flaky: unknown flag '%s' (flags: --virtual, --seed N)\n",
              argv[i]);
      return 2;
    }
  }
  if (virtual_time) {
    manual = bw_clock_manual_new(0);
    if (manual == NULL) {
      fprintf(stderr, "breaker_flaky: %s\n", bw_strerror(BW_E_NOMEM));
      return 1;
    }
    clock = manual;
  }
  bw_rand_seed(&r, seed);

  sink = bw_sink_json_new(stdout, &err);
  if (sink == NULL) {
    fprintf(stderr, "breaker_flaky: %s\n", err.message);
    return 1;
  }
  bw_breaker_config_init(&cfg);
  cfg.name = "flaky_api";
  cfg.failure_threshold = 5;
  cfg.break_ms = 200;
  cfg.break_multiplier = 2.0;
  cfg.max_break_ms = 1000;
  cfg.success_threshold = 2;
  cfg.clock = clock;
  cfg.sink = sink;
  b = bw_breaker_new(&cfg, &err);
  if (b == NULL) {
    fprintf(stderr, "breaker_flaky: %s\n", err.message);
    return 1;
  }

  t0 = bw_clock_now(clock);
  for (;;) {
    int64_t t_ms = (bw_clock_now(clock) - t0) / BW_NS_PER_MS;
    bw_permit_t p;
    char request_id[32];
    bw_kv_t kv[1];
    bw_context_t ctx;
    if (t_ms >= RUN_MS) break;
    /* Each call carries its request id into any event it causes. */
    snprintf(request_id, sizeof(request_id), "req-%05ld", calls);
    kv[0].key = "request_id";
    kv[0].value = request_id;
    ctx.items = kv;
    ctx.count = 1;
    bw_context_set(&ctx);
    calls++;
    if (bw_breaker_acquire(b, &p) != BW_OK) {
      rejected++; /* fast: the dependency is not touched */
    } else {
      bw_outcome_t o = flaky_call(t_ms, &r, &dependency_calls);
      if (o == BW_SUCCESS)
        ok++;
      else
        failed++;
      bw_breaker_release(b, &p, o);
    }
    bw_context_set(NULL);
    if (virtual_time)
      bw_clock_manual_advance(manual, CALL_EVERY_MS * BW_NS_PER_MS);
    else
      sleep_ms(CALL_EVERY_MS);
  }

  bw_breaker_stats(b, &st);
  snprintf(line, sizeof(line),
           "{\"event\":\"summary\",\"name\":\"flaky_api\",\"state\":\"%s\","
           "\"calls\":%ld,\"dependency_calls\":%ld,\"succeeded\":%ld,"
           "\"failed\":%ld,\"rejected_fast\":%ld,\"opens\":%llu,"
           "\"half_opens\":%llu,\"closes\":%llu,\"ms_closed\":%lld,"
           "\"ms_open\":%lld,\"ms_half_open\":%lld}\n",
           bw_state_name(st.state), calls, dependency_calls, ok, failed,
           rejected, (unsigned long long)st.opens,
           (unsigned long long)st.half_opens, (unsigned long long)st.closes,
           (long long)st.time_in_state_ms[BW_CLOSED],
           (long long)st.time_in_state_ms[BW_OPEN],
           (long long)st.time_in_state_ms[BW_HALF_OPEN]);
  fputs(line, stdout);
  bw_breaker_free(b);
  bw_sink_free(sink);
  bw_clock_free(manual);
  /* The scenario must end closed, with calls rejected during the outage. */
  return (st.state == BW_CLOSED && rejected > 0 && st.opens >= 1) ? 0 : 1;
}
