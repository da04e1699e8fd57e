/* breakwater — the field tables of configuration by name, and setting and
 * reading one field (config.h).
 *
 * One table per kind, in struct order. Each row carries the field's own
 * range, the same as its *_config_validate checks for it alone; the rules
 * between fields stay in the validators (config.h, "Two moments of
 * checking"). The default texts are checked against each kind's init by
 * tests/test_config.c, and docs/configuration.md is generated from these
 * tables (the same test compares them), so neither can drift.
 *
 * This file calls nothing of the core but the error helpers, so the fuzz
 * harness (fuzz/fuzz_config_value.c) links it with config_parse.c and
 * error.c alone. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/breaker.h"
#include "breakwater/budget.h"
#include "breakwater/bulkhead.h"
#include "breakwater/config.h"
#include "breakwater/degrade.h"
#include "breakwater/ext.h"
#include "breakwater/gauge.h"
#include "breakwater/hedge.h"
#include "breakwater/http_standard.h"
#include "breakwater/limiter.h"
#include "breakwater/queue.h"
#include "breakwater/ratelimit.h"
#include "breakwater/registry.h"
#include "breakwater/retry.h"
#include "breakwater/stage.h"
#include "breakwater/store.h"
#include "breakwater/throttle.h"

/* The longest duration most policies accept: a quarter of what fits in
 * int64 nanoseconds (about 73 years), as breaker.c and retry.c cap. */
#define MAX_MS 2305843009213.0
#define DAY_MS 86400000.0
#define STORE_MAX_MS (86400000.0 * 366) /* store.c: a (leap) year */
#define NS_MAX_MS 9223372036854.0       /* INT64_MAX / 1e6 */
#define U32_MAX 4294967295.0
#define INF INFINITY

#define ROW(nm, ty, off, def, help, ch, lo, hi, fl) \
  { (nm), (ty), (def), (help), (ch), (lo), (hi), (fl), (off) }
#define STR(T, f, def, help) \
  ROW(#f, BW_CONFIG_T_STRING, offsetof(T, f), def, help, NULL, 0, 0, 0)
#define BOOL_(T, f, def, help) \
  ROW(#f, BW_CONFIG_T_BOOL, offsetof(T, f), def, help, NULL, 0, 0, 0)
#define U32(T, f, lo, hi, fl, def, help) \
  ROW(#f, BW_CONFIG_T_U32, offsetof(T, f), def, help, NULL, lo, hi, fl)
#define U64(T, f, def, help) \
  ROW(#f, BW_CONFIG_T_U64, offsetof(T, f), def, help, NULL, 0, 0, 0)
#define MS(T, f, lo, hi, fl, def, help) \
  ROW(#f, BW_CONFIG_T_DURATION, offsetof(T, f), def, help, NULL, lo, hi, fl)
#define DBL(T, f, lo, hi, fl, def, help) \
  ROW(#f, BW_CONFIG_T_DOUBLE, offsetof(T, f), def, help, NULL, lo, hi, fl)
#define RATIO(T, f, lo, hi, fl, def, help) \
  ROW(#f, BW_CONFIG_T_RATIO, offsetof(T, f), def, help, NULL, lo, hi, fl)
#define ENUM(T, f, ch, def, help) \
  ROW(#f, BW_CONFIG_T_ENUM, offsetof(T, f), def, help, ch, 0, 0, 0)
#define PTR(T, f, def, help) \
  ROW(#f, BW_CONFIG_T_POINTER, offsetof(T, f), def, help, NULL, 0, 0, 0)

/* ---- enums, by value ------------------------------------------------------
 */
static const char *const trip_rules[] = {"consecutive", "count_window",
                                         "time_window", NULL};
static const char *const backoffs[] = {"constant", "linear", "exponential",
                                       NULL};
static const char *const jitters[] = {"none",         "full",     "equal",
                                      "decorrelated", "additive", NULL};
static const char *const budget_kinds[] = {"token_bucket", "ratio", NULL};
static const char *const algorithms[] = {"aimd", "gradient2", "vegas", NULL};
static const char *const queue_policies[] = {"reject", "drop_oldest",
                                             "drop_lowest", NULL};
static const char *const hedge_delays[] = {"fixed", "quantile", NULL};

/* ---- the tables -----------------------------------------------------------
 */
#define T bw_breaker_config_t
static const bw_config_field_t breaker_fields[] = {
    STR(T, name, "breaker", "names the breaker in events and metrics"),
    ENUM(T, trip_rule, trip_rules, "consecutive",
         "what opens it: N failures in a row, or a failure ratio over the "
         "last calls or the last window_ms"),
    U32(T, failure_threshold, 1, U32_MAX, 0, "5",
        "consecutive rule: failures in a row that open it"),
    RATIO(T, failure_ratio, 0, 1, BW_CONFIG_MIN_OPEN, "0.5",
          "window rules: the failure ratio that opens it"),
    U32(T, window_size, 1, 1000000, 0, "100",
        "count window: the last N calls counted"),
    MS(T, window_ms, 1, MAX_MS, 0, "10000", "time window: its length"),
    U32(T, window_buckets, 1, 1000, 0, "10",
        "time window: its buckets; <= window_ms"),
    U32(T, minimum_calls, 1, U32_MAX, 0, "20",
        "window rules: calls in the window before it may open; <= "
        "window_size for the count window"),
    MS(T, slow_call_ms, 0, MAX_MS, 0, "0",
       "a call slower than this counts as slow; 0 = off; window rules only"),
    RATIO(T, slow_call_ratio, 0, 1, BW_CONFIG_MIN_OPEN, "1",
          "the slow-call ratio that opens it (with slow_call_ms)"),
    MS(T, break_ms, 1, MAX_MS, 0, "30000",
       "how long it stays open before a probe"),
    DBL(T, break_multiplier, 1, INF, 0, "1",
        "growth of the break on consecutive re-opens; 1 = none"),
    MS(T, max_break_ms, 0, MAX_MS, 0, "0",
       "cap of the grown break; 0 = break_ms, else >= break_ms"),
    U32(T, half_open_max_calls, 1, U32_MAX, 0, "1",
        "probes in flight while half-open"),
    U32(T, success_threshold, 1, U32_MAX, 0, "1",
        "probe successes that close it"),
    MS(T, half_open_timeout_ms, 1, MAX_MS, 0, "60000",
       "a half-open state with every probe stuck this long reopens"),
    BOOL_(T, metrics_only, "false",
          "run the state machine and emit events, but never reject"),
    PTR(T, clock, "null", "monotonic clock; null = bw_clock_monotonic()"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    PTR(T, sink, "null", "events; null = none"),
    PTR(T, listener, "null", "per-call listener; null = none"),
    PTR(T, listener_userdata, "null", "for listener"),
};
#undef T

#define T bw_retry_config_t
static const bw_config_field_t retry_fields[] = {
    STR(T, name, "retry", "names the policy's events"),
    U32(T, max_attempts, 0, U32_MAX, 0, "3",
        "attempts in all, the first included; 0 = no cap (then "
        "max_elapsed_ms > 0)"),
    MS(T, max_elapsed_ms, 0, MAX_MS, 0, "0",
       "no retry once this long since the first attempt; 0 = no limit"),
    BOOL_(T, stop_before, "false",
          "give up instead of a delay that would end past max_elapsed_ms "
          "(needs it)"),
    ENUM(T, backoff, backoffs, "exponential", "the delay curve"),
    MS(T, base_ms, 0, MAX_MS, 0, "200",
       "the first delay; >= 1 unless backoff is constant"),
    DBL(T, multiplier, 1, INF, 0, "2",
        "exponential growth; 2 with decorrelated jitter"),
    MS(T, min_ms, 0, MAX_MS, 0, "0", "every delay is at least this"),
    MS(T, max_ms, 0, MAX_MS, 0, "30000",
       "every delay is at most this, jitter included; >= max(base_ms, "
       "min_ms)"),
    ENUM(T, jitter, jitters, "full",
         "randomness on the delay; decorrelated needs backoff exponential"),
    MS(T, jitter_ms, 0, MAX_MS, 0, "1000", "additive jitter's range"),
    BOOL_(T, idempotent, "true",
          "false: retry only calls that were never sent, unless keyed"),
    BOOL_(T, honor_retry_after, "true",
          "a Retry-After hint is the minimum delay (capped by max_ms)"),
    PTR(T, budget, "null", "a shared retry budget; null = none"),
    U64(T, seed, "0", "jitter seed; 0 = unpredictable"),
    PTR(T, sink, "null", "events; null = none"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
};
#undef T

#define T bw_budget_config_t
static const bw_config_field_t budget_fields[] = {
    STR(T, name, "budget", "names the budget"),
    ENUM(T, kind, budget_kinds, "token_bucket",
         "token_bucket (gRPC) or ratio (Envoy)"),
    DBL(T, max_tokens, 0, 1e6, BW_CONFIG_MIN_OPEN, "10",
        "token bucket: its size; a multiple of 0.001"),
    DBL(T, token_ratio, 0, 1e6, BW_CONFIG_MIN_OPEN, "0.1",
        "token bucket: tokens a success adds; <= max_tokens, a multiple of "
        "0.001"),
    ROW("budget_percent", BW_CONFIG_T_PERCENT, offsetof(T, budget_percent),
        "20", "ratio: retries at most this percent of requests", NULL, 0, 100,
        0),
    DBL(T, min_retries_per_sec, 0, 1e9, 0, "3",
        "ratio: retries always allowed per second of window"),
    MS(T, window_ms, 10, DAY_MS, 0, "10000", "ratio: the sliding window"),
    PTR(T, clock, "null", "the ratio window's clock; null = monotonic"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    PTR(T, sink, "null", "retries_refused summaries; null = none"),
};
#undef T

#define T bw_bulkhead_config_t
static const bw_config_field_t bulkhead_fields[] = {
    STR(T, name, "bulkhead", "names the bulkhead"),
    U32(T, max_concurrent, 1, 1000000, 0, "10", "calls at once"),
    MS(T, max_wait_ms, 0, DAY_MS, 0, "2000",
       "a blocking acquire's wait; 0 = never wait"),
    MS(T, timeout_ms, 0, DAY_MS, 0, "30000",
       "execution deadline after admission; 0 = none of its own"),
    U32(T, max_waiting, 0, 1000000, 0, "1000",
        "waiters queued at once; 0 = no queue"),
    PTR(T, clock, "null", "null = coarse or precise monotonic (bulkhead.h)"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    PTR(T, sink, "null", "bulkhead_rejected summaries; null = none"),
};
#undef T

#define T bw_limiter_config_t
static const bw_config_field_t limiter_fields[] = {
    STR(T, name, "limiter", "names the limiter"),
    ENUM(T, algorithm, algorithms, "aimd", "how samples move the limit"),
    U32(T, initial_limit, 1, 1000000, 0, "20",
        "the limit at creation; in [min_limit, max_limit]"),
    U32(T, min_limit, 1, 1000000, 0, "1", "the limit never goes below"),
    U32(T, max_limit, 1, 1000000, 0, "200",
        "the limit never goes above; >= min_limit"),
    RATIO(T, backoff_ratio, 0.5, 1, BW_CONFIG_MAX_OPEN, "0.9",
          "a drop multiplies the limit by this"),
    MS(T, aimd_timeout_ms, 0, DAY_MS, 0, "5000",
       "AIMD: a success slower than this counts as a drop; 0 = off"),
    DBL(T, gradient2_tolerance, 1, INF, 0, "1.5",
        "GRADIENT2: RTT growth tolerated"),
    RATIO(T, gradient2_smoothing, 0, 1, BW_CONFIG_MIN_OPEN, "0.2",
          "GRADIENT2: smoothing of the limit"),
    U32(T, gradient2_long_window, 1, 100000, 0, "600",
        "GRADIENT2: samples in the long-term RTT average"),
    U32(T, gradient2_warmup, 0, 100000, 0, "10",
        "GRADIENT2: first samples averaged plainly; <= "
        "gradient2_long_window"),
    U32(T, gradient2_queue_size, 0, 1000000, 0, "4",
        "GRADIENT2: the queue allowance; <= max_limit"),
    DBL(T, vegas_alpha, 0, INF, BW_CONFIG_MIN_OPEN, "3",
        "VEGAS: grow while the queue is below alpha x log10(limit)"),
    DBL(T, vegas_beta, 0, INF, BW_CONFIG_MIN_OPEN, "6",
        "VEGAS: shrink above beta x log10(limit); > vegas_alpha"),
    RATIO(T, vegas_smoothing, 0, 1, BW_CONFIG_MIN_OPEN, "1",
          "VEGAS: smoothing; 1 = none"),
    U32(T, vegas_probe_multiplier, 0, 1000, 0, "30",
        "VEGAS: re-learn the no-load RTT after N x limit samples; 0 = "
        "never"),
    PTR(T, clock, "null", "null = bw_clock_monotonic()"),
    PTR(T, on_change, "null", "limit change callback"),
    PTR(T, userdata, "null", "for on_change"),
    MS(T, change_interval_ms, 0, DAY_MS, 0, "0",
       "at most one change report per interval; 0 = every change"),
    PTR(T, sink, "null",
        "limit_changed events, limiter_rejected summaries; null = none"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    DBL(T, timeout_hold_ratio, 0, 10, 0, "0.5",
        "a timed-out call keeps its slot this x its RTT; 0 = free at once"),
    RATIO(T, probe_headroom, 0, 1, 0, "0.125",
          "growth stops this much above the proven in-flight level; 0 = "
          "off"),
    MS(T, overload_memory_ms, 0, DAY_MS, 0, "60000",
       "how long a drop near the limit stops growth; 0 = off"),
    DBL(T, startup_headroom, 0, 4, 0, "0",
        "growth above the proven level until the first congestion signal "
        "(each success raises the limit to it at once); 0 = off"),
    DBL(T, stuck_ratio, 1, 100, BW_CONFIG_OR_ZERO, "0",
        "a probe unproven after this x the smoothed RTT, or a call in flight "
        "longer than this x the slowest good answer, is stuck; 0 = off"),
    U32(T, rtt_sample_every, 1, 1024, 0, "1", "time one call in N"),
    U32(T, startup_max_step, 0, 1000000, 0, "0",
        "during startup, growth at most this many calls above the proven "
        "level; 0 = no bound"),
    BOOL_(T, stuck_timeout, "false",
          "cut an attempt admitted above the proven level to the stuck age "
          "(needs stuck_ratio)"),
    RATIO(T, drop_tolerance, 0, 0.5, 0, "0",
          "drops up to this x the limit per round are no congestion; 0 = "
          "every drop counts"),
};
#undef T

#define T bw_ratelimit_config_t
static const bw_config_field_t ratelimit_fields[] = {
    STR(T, name, "ratelimit", "names the limiter"),
    DBL(T, rate_per_sec, 1e-6, 1e9, 0, "100", "calls a second on average"),
    U32(T, burst, 1, U32_MAX, 0, "1",
        "calls at once; burst / rate_per_sec at most a year"),
    PTR(T, clock, "null", "null = bw_clock_monotonic()"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    PTR(T, sink, "null", "rate_limited summaries; null = none"),
};
#undef T

#define T bw_throttle_config_t
static const bw_config_field_t throttle_fields[] = {
    STR(T, name, "throttle", "names the throttle"),
    DBL(T, k, 1, 10, 0, "2",
        "the multiplier K: it lets out about K x the requests the partner "
        "accepts and refuses the rest"),
    MS(T, window_ms, 10, DAY_MS, 0, "60000",
       "the sliding window of requests and accepts"),
    U32(T, buckets, 1, 1000, 0, "60",
        "the window's buckets; divides window_ms in whole nanoseconds"),
    U64(T, seed, "0", "the refusal draws; 0 = from the operating system"),
    PTR(T, clock, "null", "null = bw_clock_monotonic()"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    PTR(T, sink, "null", "throttle_refused summaries; null = none"),
};
#undef T

#define T bw_queue_store_config_t
static const bw_config_field_t queue_fields[] = {
    STR(T, name, "queue", "the queue's identity inside a shared store"),
    U32(T, max_size, 1, U32_MAX, 0, "10000",
        "the guard: items beyond it go to the dead-letter queue"),
    RATIO(T, warn_threshold, 0, 1, BW_CONFIG_MIN_OPEN, "0.7",
          "warn once the depth reaches this share of max_size"),
    RATIO(T, warn_rearm_threshold, 0, 1, BW_CONFIG_MAX_OPEN, "0.6",
          "warn again after falling below this; < warn_threshold"),
    U32(T, max_deliveries, 1, U32_MAX, 0, "5",
        "deliveries before an item goes to the dead-letter queue"),
    U32(T, dlq_max, 1, U32_MAX, 0, "10000",
        "dead-letter records kept (the oldest dropped)"),
    PTR(T, clock, "null", "null = monotonic (memory) or realtime (durable)"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    PTR(T, sink, "null", "events; null = none"),
};
#undef T

#define T bw_queue_config_t
static const bw_config_field_t priority_queue_fields[] = {
    STR(T, name, "queue", "names the queue"),
    U32(T, max_size, 1, BW_QUEUE_MAX_SIZE, 0, "0",
        "required: the bound (no default)"),
    ENUM(T, policy, queue_policies, "reject", "what a full queue loses"),
    U32(T, priority_levels, 1, BW_QUEUE_MAX_LEVELS, 0, "256",
        "priorities are [0, levels)"),
    PTR(T, clock, "null", "deadlines; null = bw_clock_monotonic()"),
    PTR(T, on_expired, "null", "expired-item callback"),
    PTR(T, userdata, "null", "for on_expired"),
    PTR(T, sink, "null", "queue_dropped summaries; null = none"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
};
#undef T

#define T bw_idem_config_t
static const bw_config_field_t idem_fields[] = {
    STR(T, name, "idempotency", "names the store"),
    MS(T, lease_ms, 1, STORE_MAX_MS, 0, "30000",
       "an in-progress marker's life (a crashed runner frees the key)"),
    MS(T, ttl_ms, 1, STORE_MAX_MS, 0, "86400000", "a stored result's life"),
    U32(T, max_keys, 1, U32_MAX, 0, "100000", "memory store: keys kept"),
    PTR(T, clock, "null", "null = the store's default"),
};
#undef T

#define T bw_gauge_config_t
#define CEILING(i, nm, def, help)                                        \
  ROW("ceiling[" nm "]", BW_CONFIG_T_U32,                                \
      offsetof(T, ceiling) + (i) * sizeof(uint32_t), def, help, NULL, 0, \
      U32_MAX, BW_CONFIG_ALL)
static const bw_config_field_t gauge_fields[] = {
    STR(T, name, "gauge", "names the gauge"),
    RATIO(T, degraded_at, 0, 1, BW_CONFIG_MIN_OPEN, "0.6",
          "pressure that enters degraded; < critical_at"),
    RATIO(T, critical_at, 0, 1, BW_CONFIG_MIN_OPEN, "0.85",
          "pressure that enters critical"),
    RATIO(T, hysteresis, 0, 1, 0, "0.1",
          "a regime is left this far below its threshold; < degraded_at"),
    CEILING(BW_REGIME_NORMAL, "normal", "all",
            "largest priority admitted in normal"),
    CEILING(BW_REGIME_DEGRADED, "degraded", "5",
            "in degraded; <= ceiling[normal]"),
    CEILING(BW_REGIME_CRITICAL, "critical", "1",
            "in critical; <= ceiling[degraded]"),
    PTR(T, clock, "null", "null = bw_clock_monotonic()"),
    PTR(T, on_change, "null", "regime change callback"),
    PTR(T, userdata, "null", "for on_change"),
    PTR(T, sink, "null", "regime_changed events; null = none"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
};
#undef CEILING
#undef T

#define T bw_stage_config_t
#define G(f) offsetof(T, gauge) + offsetof(bw_gauge_config_t, f)
#define GCEIL(i, nm, def, help)                                         \
  ROW("gauge.ceiling[" nm "]", BW_CONFIG_T_U32,                         \
      G(ceiling) + (i) * sizeof(uint32_t), def, help, NULL, 0, U32_MAX, \
      BW_CONFIG_ALL)
static const bw_config_field_t stage_fields[] = {
    STR(T, name, "stage", "names the stage"),
    U32(T, queue_size, 1, BW_QUEUE_MAX_SIZE, 0, "0",
        "required: the queue's bound (no default)"),
    ENUM(T, policy, queue_policies, "reject", "what a full queue loses"),
    U32(T, priority_levels, 1, BW_QUEUE_MAX_LEVELS, 0, "256",
        "priorities are [0, levels)"),
    U32(T, concurrency, 1, BW_STAGE_MAX_CONCURRENCY, 0, "1",
        "items in flight at most"),
    ROW("gauge.degraded_at", BW_CONFIG_T_RATIO, G(degraded_at), "0.6",
        "pressure that enters degraded; < gauge.critical_at", NULL, 0, 1,
        BW_CONFIG_MIN_OPEN),
    ROW("gauge.critical_at", BW_CONFIG_T_RATIO, G(critical_at), "0.85",
        "pressure that enters critical", NULL, 0, 1, BW_CONFIG_MIN_OPEN),
    ROW("gauge.hysteresis", BW_CONFIG_T_RATIO, G(hysteresis), "0.1",
        "a regime is left this far below its threshold", NULL, 0, 1, 0),
    GCEIL(BW_REGIME_NORMAL, "normal", "all",
          "largest priority admitted in normal"),
    GCEIL(BW_REGIME_DEGRADED, "degraded", "5", "in degraded"),
    GCEIL(BW_REGIME_CRITICAL, "critical", "1", "in critical"),
    MS(T, rate_window_ms, 1, NS_MAX_MS, 0, "1000", "service-rate window"),
    RATIO(T, rate_alpha, 0, 1, BW_CONFIG_MIN_OPEN, "0.5",
          "EWMA weight of a new window"),
    MS(T, min_retry_after_ms, 1, MAX_MS, 0, "1",
       "the shortest wait a refusal carries"),
    MS(T, max_retry_after_ms, 1, MAX_MS, 0, "30000",
       "the longest; >= min_retry_after_ms"),
    RATIO(T, retry_jitter, 0, 1, 0, "0",
          "adds up to this share of the wait, seeded"),
    U64(T, seed, "0", "for the jitter"),
    PTR(T, next, "null", "the downstream stage"),
    PTR(T, clock, "null", "null = bw_clock_monotonic()"),
    PTR(T, on_expired, "null", "expired-item callback"),
    PTR(T, userdata, "null", "for on_expired"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
    PTR(T, sink, "null",
        "stage_dropped summaries, stage_regime_changed; null = none"),
};
#undef GCEIL
#undef G
#undef T

#define T bw_batch_config_t
static const bw_config_field_t batch_fields[] = {
    U32(T, chunk_size, 1, U32_MAX, 0, "100", "the normal chunk"),
    RATIO(T, degraded_fraction, 0, 1, BW_CONFIG_MIN_OPEN, "0.25",
          "the chunk's share in degraded"),
};
#undef T

#define T bw_degrade_config_t
static const bw_config_field_t degrade_fields[] = {
    STR(T, name, "degrade", "names the machine"),
    U32(T, level_count, 2, BW_DEGRADE_MAX_LEVELS, 0, "4", "levels"),
    PTR(T, level_names, "null",
        "a list of names: set in code; null = full, reduced, router, "
        "message"),
    MS(T, min_dwell_ms, 0, NS_MAX_MS, 0, "60000",
       "time at a level before any probe"),
    U32(T, probe_every, 1, U32_MAX, 0, "20",
        "every Nth eligible pick is a probe"),
    RATIO(T, probe_ratio, 0, 1, 0, "0",
          "share of eligible picks sent as probes; 0 = use probe_every"),
    U32(T, probe_successes_to_recover, 1, U32_MAX, 0, "20",
        "probe successes that climb one level"),
    U32(T, failures_to_degrade, 1, U32_MAX, 0, "5",
        "failures in a row that drop one level"),
    PTR(T, clock, "null", "null = bw_clock_monotonic()"),
    PTR(T, on_change, "null", "level change callback"),
    PTR(T, on_change_userdata, "null", "for on_change"),
    PTR(T, sink, "null", "degrade_level_changed events; null = none"),
    PTR(T, wall_clock, "null", "event timestamps; null = realtime"),
};
#undef T

#define T bw_registry_config_t
static const bw_config_field_t registry_fields[] = {
    ROW("max_objects", BW_CONFIG_T_SIZE, offsetof(T, max_objects), "0",
        "objects kept at most (idle ones evicted); 0 = unbounded", NULL, 0,
        (double)SIZE_MAX, 0),
    MS(T, idle_evict_ms, 0, NS_MAX_MS, 0, "60000",
       "idle time before an object may be evicted"),
    PTR(T, clock, "set", "default bw_clock_monotonic()"),
    PTR(T, sink, "null", "registry events and objects' default sink"),
    PTR(T, default_breaker, "null",
        "breaker config for names without one; null = the defaults"),
};
#undef T

#define T bw_reprocessor_config_t
static const bw_config_field_t reprocessor_fields[] = {
    STR(T, name, "reprocessor", "names the reprocessor"),
    PTR(T, queue, "null", "required: the queue it drains"),
    PTR(T, breaker, "null", "drain only while this breaker is closed"),
    PTR(T, fn, "null", "required: replays one item"),
    PTR(T, userdata, "null", "for fn"),
    U32(T, batch, 1, U32_MAX, 0, "16", "items per step"),
    MS(T, visibility_ms, 1, STORE_MAX_MS, 0, "30000", "each item's lease"),
    MS(T, retry_delay_ms, 0, STORE_MAX_MS, 0, "1000",
       "nack delay after a failed replay"),
};
#undef T

#define T bw_hedge_config_t
static const bw_config_field_t hedge_fields[] = {
    STR(T, name, "hedge", "names the policy"),
    ENUM(T, delay, hedge_delays, "quantile",
         "fixed: delay_ms always; quantile: of recent latencies"),
    MS(T, delay_ms, 1, DAY_MS, 0, "200",
       "fixed: the delay; quantile: the delay until min_samples"),
    RATIO(T, quantile, 0, 1, BW_CONFIG_MIN_OPEN | BW_CONFIG_MAX_OPEN, "0.95",
          "quantile: which one of the recent latencies"),
    U32(T, window, 1, BW_HEDGE_MAX_WINDOW, 0, "200",
        "quantile: latencies kept"),
    U32(T, min_samples, 1, BW_HEDGE_MAX_WINDOW, 0, "20",
        "quantile: latencies before the quantile is used; <= window"),
    MS(T, min_delay_ms, 1, DAY_MS, 0, "1", "quantile: the delay's floor"),
    MS(T, max_delay_ms, 1, DAY_MS, 0, "10000",
       "quantile: the delay's ceiling; >= min_delay_ms"),
    U32(T, max_hedges, 1, BW_HEDGE_MAX_HEDGES, 0, "1", "extra copies per call"),
    BOOL_(T, non_idempotent, "false",
          "hedge non-idempotent calls too (send an Idempotency-Key)"),
    PTR(T, budget, "null", "every hedge asks it; null = none"),
    BOOL_(T, budget_requests, "false",
          "the budget is the hedge's own: begin reports each request"),
};
#undef T

/* ---- the standard HTTP preset: its own fields, then its parts' ------------
 * The parts' rows are the breaker's, limiter's, retry's and budget's own
 * tables, prefixed ("breaker.failure_ratio") and moved to the part's place
 * in bw_http_standard_config_t, so a part's table has one definition and a
 * field added to it reaches the preset too. Left out: the parts' names
 * (the preset names them) and pointers (its clock and sink replace
 * theirs). The defaults that bw_http_standard_config_init changes are
 * listed here (tests/test_config.c checks every default against it). The
 * table is composed once, on first use. */
#define T bw_http_standard_config_t
static const bw_config_field_t http_own[] = {
    STR(T, name, "http", "names the pipeline (and, from a file, its parts)"),
    MS(T, deadline_ms, 0, DAY_MS, 0, "30000",
       "the whole call, retries and waits included; 0 = none"),
    BOOL_(T, use_limiter, "true", "an adaptive concurrency limiter"),
    MS(T, limit_wait_ms, 0, DAY_MS, 0, "1000",
       "a call's wait for a limiter slot; 0 = refuse at once"),
    BOOL_(T, use_breaker, "true", "a circuit breaker outside the retry"),
    BOOL_(T, use_retry, "true", "retries, with the HTTP classification"),
    BOOL_(T, use_budget, "true", "a retry budget; needs use_retry"),
    MS(T, attempt_timeout_ms, 0, DAY_MS, 0, "10000",
       "each attempt's time; 0 = none"),
    PTR(T, clock, "null", "set: every part reads it; null = their own"),
    PTR(T, sink, "null", "set: every part emits to it; null = none"),
    BOOL_(T, limit_per_attempt, "false",
          "the limiter inside the retry: a slot per attempt (for "
          "limiter.stuck_timeout)"),
    MS(T, min_attempt_ms, 0, DAY_MS, 0, "0",
       "no attempt with less of the deadline left; 0 = off"),
};

static const struct {
  const char *field, *value;
} http_defaults[] = {
    {"limiter.max_limit", "1000"},    {"breaker.trip_rule", "time_window"},
    {"breaker.failure_ratio", "0.1"}, {"breaker.window_ms", "30000"},
    {"breaker.minimum_calls", "100"}, {"breaker.break_ms", "5000"},
    {"retry.max_attempts", "4"},      {"retry.base_ms", "2000"},
    {"retry.jitter", "decorrelated"}, {"budget.kind", "ratio"},
};

#define HTTP_MAX_ROWS 160
#define HTTP_NAMES_BYTES 6144
static bw_config_field_t http_fields[HTTP_MAX_ROWS];
static size_t http_n;
static char http_names[HTTP_NAMES_BYTES];
static pthread_once_t http_once = PTHREAD_ONCE_INIT;

static void http_row(const bw_config_field_t *f) {
  if (http_n < HTTP_MAX_ROWS) http_fields[http_n++] = *f;
}

/* Appends a part's rows, prefixed and moved by `at`. */
static void http_part(const char *part, size_t at,
                      const bw_config_field_t *rows, size_t n, size_t *used) {
  for (size_t i = 0; i < n; i++) {
    bw_config_field_t f = rows[i];
    size_t len = strlen(part) + 1 + strlen(f.name) + 1;
    if (f.type == BW_CONFIG_T_POINTER || strcmp(f.name, "name") == 0) continue;
    if (*used + len > HTTP_NAMES_BYTES)
      return; /* sized with room: a test
                 checks every row is here */
    snprintf(http_names + *used, len, "%s.%s", part, f.name);
    f.name = http_names + *used;
    *used += len;
    f.offset += at;
    for (size_t d = 0; d < sizeof http_defaults / sizeof http_defaults[0]; d++)
      if (strcmp(http_defaults[d].field, f.name) == 0)
        f.default_value = http_defaults[d].value;
    http_row(&f);
  }
}

#define HTTP_PART(part, rows) \
  http_part(#part, offsetof(T, part), rows, sizeof rows / sizeof rows[0], &used)
static void http_build(void) {
  size_t used = 0;
  /* In struct order: name, deadline, the limiter, the breaker, the retry,
   * the budget, the attempt timeout, clock, sink, then limit_per_attempt
   * and min_attempt_ms (appended last in the struct). */
  http_row(&http_own[0]);
  http_row(&http_own[1]);
  http_row(&http_own[2]);
  HTTP_PART(limiter, limiter_fields);
  http_row(&http_own[3]);
  http_row(&http_own[4]);
  HTTP_PART(breaker, breaker_fields);
  http_row(&http_own[5]);
  HTTP_PART(retry, retry_fields);
  http_row(&http_own[6]);
  HTTP_PART(budget, budget_fields);
  http_row(&http_own[7]);
  http_row(&http_own[8]);
  http_row(&http_own[9]);
  http_row(&http_own[10]);
  http_row(&http_own[11]);
}
#undef HTTP_PART
#undef T

#define N(a) (sizeof(a) / sizeof((a)[0]))
static const struct {
  const char *name;
  const char *type;
  const bw_config_field_t *fields;
  size_t n;
} kinds[BW_CONFIG__COUNT] = {
    {"breaker", "bw_breaker_config_t", breaker_fields, N(breaker_fields)},
    {"retry", "bw_retry_config_t", retry_fields, N(retry_fields)},
    {"budget", "bw_budget_config_t", budget_fields, N(budget_fields)},
    {"bulkhead", "bw_bulkhead_config_t", bulkhead_fields, N(bulkhead_fields)},
    {"limiter", "bw_limiter_config_t", limiter_fields, N(limiter_fields)},
    {"ratelimit", "bw_ratelimit_config_t", ratelimit_fields,
     N(ratelimit_fields)},
    {"queue", "bw_queue_store_config_t", queue_fields, N(queue_fields)},
    {"priority_queue", "bw_queue_config_t", priority_queue_fields,
     N(priority_queue_fields)},
    {"idempotency", "bw_idem_config_t", idem_fields, N(idem_fields)},
    {"gauge", "bw_gauge_config_t", gauge_fields, N(gauge_fields)},
    {"stage", "bw_stage_config_t", stage_fields, N(stage_fields)},
    {"batch", "bw_batch_config_t", batch_fields, N(batch_fields)},
    {"degrade", "bw_degrade_config_t", degrade_fields, N(degrade_fields)},
    {"registry", "bw_registry_config_t", registry_fields, N(registry_fields)},
    {"reprocessor", "bw_reprocessor_config_t", reprocessor_fields,
     N(reprocessor_fields)},
    {"hedge", "bw_hedge_config_t", hedge_fields, N(hedge_fields)},
    {"http", "bw_http_standard_config_t", NULL, 0}, /* composed: table() */
    {"throttle", "bw_throttle_config_t", throttle_fields, N(throttle_fields)},
};

/* A kind's rows and their count (the preset's composed on first use). */
static const bw_config_field_t *table(bw_config_kind_t kind, size_t *n) {
  if (kind == BW_CONFIG_HTTP) {
    pthread_once(&http_once, http_build);
    *n = http_n;
    return http_fields;
  }
  *n = kinds[kind].n;
  return kinds[kind].fields;
}

static int kind_ok(bw_config_kind_t kind) {
  return (unsigned)kind < (unsigned)BW_CONFIG__COUNT;
}

const char *bw_config_kind_name(bw_config_kind_t kind) {
  return kind_ok(kind) ? kinds[kind].name : "unknown";
}

const char *bw_config_kind_type(bw_config_kind_t kind) {
  return kind_ok(kind) ? kinds[kind].type : "";
}

int bw_config_kind_parse(const char *name, bw_config_kind_t *kind,
                         bw_error_t *err) {
  char list[192];
  size_t len = 0;
  if (name == NULL || kind == NULL)
    return bw_error_set(err, BW_E_INVAL, "kind", "kind must not be NULL");
  for (unsigned i = 0; i < BW_CONFIG__COUNT; i++)
    if (strcmp(name, kinds[i].name) == 0) {
      *kind = (bw_config_kind_t)i;
      bw_error_clear(err);
      return BW_OK;
    }
  list[0] = '\0';
  for (unsigned i = 0; i < BW_CONFIG__COUNT && len < sizeof list; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                            i ? ", " : "", kinds[i].name);
  return bw_error_set(err, BW_E_NOTFOUND, "kind",
                      "unknown kind '%.24s' (kinds: %s)", name, list);
}

const bw_config_field_t *bw_config_fields(bw_config_kind_t kind, size_t *n) {
  if (!kind_ok(kind)) {
    if (n != NULL) *n = 0;
    return NULL;
  }
  size_t count;
  const bw_config_field_t *rows = table(kind, &count);
  if (n != NULL) *n = count;
  return rows;
}

const bw_config_field_t *bw_config_field(bw_config_kind_t kind,
                                         const char *field) {
  size_t n;
  const bw_config_field_t *rows;
  if (!kind_ok(kind) || field == NULL) return NULL;
  rows = table(kind, &n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].name, field) == 0) return &rows[i];
  return NULL;
}

const char *bw_config_type_name(bw_config_type_t type) {
  static const char *const names[] = {"string",  "bool",     "u32",    "u64",
                                      "size",    "duration", "number", "ratio",
                                      "percent", "enum",     "pointer"};
  return (unsigned)type < N(names) ? names[type] : "unknown";
}

/* ---- ranges in words ------------------------------------------------------
 */

/* A bound as text: integers exactly, others in %g, infinities as inf. */
static void bound(char *buf, size_t size, double v, int integer) {
  if (isinf(v))
    snprintf(buf, size, "%sinf", v < 0 ? "-" : "");
  else if (integer && v == (double)SIZE_MAX)
    snprintf(buf, size, "%zu", (size_t)SIZE_MAX);
  else if (integer)
    snprintf(buf, size, "%.0f", v);
  else
    snprintf(buf, size, "%g", v);
}

static int is_integer(bw_config_type_t t) {
  return t == BW_CONFIG_T_U32 || t == BW_CONFIG_T_SIZE ||
         t == BW_CONFIG_T_DURATION;
}

size_t bw_config_field_range(const bw_config_field_t *f, char *buf,
                             size_t size) {
  char lo[32], hi[32], tmp[8];
  int n;
  if (buf == NULL || size == 0) {
    buf = tmp;
    size = sizeof tmp;
  }
  buf[0] = '\0';
  if (f == NULL) return 0;
  switch (f->type) {
  case BW_CONFIG_T_STRING:
    n = snprintf(buf, size, "1..%d bytes", BW_NAME_MAX);
    break;
  case BW_CONFIG_T_BOOL:
    n = snprintf(buf, size, "true|false");
    break;
  case BW_CONFIG_T_U64:
    n = snprintf(buf, size, "[0, 18446744073709551615]");
    break;
  case BW_CONFIG_T_POINTER:
    n = snprintf(buf, size, "set in code");
    break;
  case BW_CONFIG_T_ENUM: {
    size_t len = 0;
    for (size_t i = 0; f->choices != NULL && f->choices[i] != NULL; i++) {
      n = snprintf(len < size ? buf + len : tmp, len < size ? size - len : 1,
                   "%s%s", i ? "|" : "", f->choices[i]);
      len += (size_t)n;
    }
    return len;
  }
  default:
    bound(lo, sizeof lo, f->min, is_integer(f->type));
    bound(hi, sizeof hi, f->max, is_integer(f->type));
    n = snprintf(buf, size, "%s%s%s, %s%s%s%s",
                 (f->flags & BW_CONFIG_OR_ZERO) ? "0 or " : "",
                 (f->flags & BW_CONFIG_MIN_OPEN) ? "(" : "[", lo, hi,
                 (f->flags & BW_CONFIG_MAX_OPEN) || isinf(f->max) ? ")" : "]",
                 f->type == BW_CONFIG_T_DURATION ? " ms" : "",
                 f->type == BW_CONFIG_T_PERCENT ? " %" : "");
    break;
  }
  return n < 0 ? 0 : (size_t)n;
}

/* ---- set ------------------------------------------------------------------
 */

/* The value as an error message shows it: at most 40 bytes, anything not
 * printable ASCII as '?'. */
static void shown(const char *v, char out[48]) {
  size_t i;
  for (i = 0; i < 40 && v[i] != '\0'; i++)
    out[i] = v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?';
  if (v[i] != '\0') {
    memcpy(out + i, "...", 3);
    i += 3;
  }
  out[i] = '\0';
}

static int in_range(const bw_config_field_t *f, double v) {
  if ((f->flags & BW_CONFIG_OR_ZERO) && v == 0) return 1;
  if ((f->flags & BW_CONFIG_MIN_OPEN) ? !(v > f->min) : !(v >= f->min))
    return 0;
  if ((f->flags & BW_CONFIG_MAX_OPEN) ? !(v < f->max) : !(v <= f->max))
    return 0;
  return 1;
}

/* The edit distance of a and b, capped at 3 (enough to suggest). */
static unsigned distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  unsigned row[64], prev, cur;
  if (la >= 63 || lb >= 63) return 3;
  for (size_t j = 0; j <= lb; j++)
    row[j] = (unsigned)j;
  for (size_t i = 1; i <= la; i++) {
    prev = row[0];
    row[0] = (unsigned)i;
    for (size_t j = 1; j <= lb; j++) {
      unsigned sub = prev + (a[i - 1] != b[j - 1]);
      unsigned del = row[j] + 1, ins = row[j - 1] + 1;
      cur = sub < del ? sub : del;
      cur = cur < ins ? cur : ins;
      prev = row[j];
      row[j] = cur;
    }
  }
  return row[lb] < 3 ? row[lb] : 3;
}

static int unknown_field(bw_config_kind_t kind, const char *field,
                         bw_error_t *err) {
  const char *best = NULL;
  unsigned best_d = 3;
  char v[48];
  size_t n;
  const bw_config_field_t *rows = table(kind, &n);
  for (size_t i = 0; i < n; i++) {
    unsigned d = distance(field, rows[i].name);
    if (d < best_d) {
      best_d = d;
      best = rows[i].name;
    }
  }
  shown(field, v);
  if (best != NULL)
    return bw_error_set(err, BW_E_NOTFOUND, field,
                        "%s has no field '%s' (did you mean %s?)",
                        kinds[kind].name, v, best);
  return bw_error_set(err, BW_E_NOTFOUND, field,
                      "%s has no field '%s' (breakwater config show %s "
                      "lists them)",
                      kinds[kind].name, v, kinds[kind].name);
}

static int bad(const bw_config_field_t *f, const char *value, bw_error_t *err) {
  char r[96], v[48];
  bw_config_field_range(f, r, sizeof r);
  shown(value, v);
  switch (f->type) {
  case BW_CONFIG_T_BOOL:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s must be true or false (also on/off, yes/no, "
                        "1/0) (got '%s')",
                        f->name, v);
  case BW_CONFIG_T_U32:
  case BW_CONFIG_T_U64:
  case BW_CONFIG_T_SIZE:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s must be an integer in %s%s (got '%s')", f->name, r,
                        (f->flags & BW_CONFIG_ALL) ? ", or all" : "", v);
  case BW_CONFIG_T_DURATION:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s must be a duration in %s, as 250ms, 30s, 2m or "
                        "1h (a bare number is ms) (got '%s')",
                        f->name, r, v);
  case BW_CONFIG_T_DOUBLE:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s must be a number in %s (got '%s')", f->name, r, v);
  case BW_CONFIG_T_RATIO:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s must be a ratio in %s, as 0.5 or 50%% (got '%s')",
                        f->name, r, v);
  case BW_CONFIG_T_PERCENT:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s must be a percentage in [%g, %g], as 20 or 20%% "
                        "(got '%s')",
                        f->name, f->min, f->max, v);
  case BW_CONFIG_T_ENUM: {
    char list[160];
    size_t len = 0, k = 0;
    list[0] = '\0';
    while (f->choices[k] != NULL)
      k++;
    for (size_t i = 0; i < k && len < sizeof list; i++)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                              i == 0 ? "" : (i + 1 == k ? " or " : ", "),
                              f->choices[i]);
    return bw_error_set(err, BW_E_INVAL, f->name, "%s must be %s (got '%s')",
                        f->name, list, v);
  }
  default:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s has a value it cannot take (got '%s')", f->name, v);
  }
}

static int eq_nocase(const char *a, const char *b) {
  for (; *a != '\0' && *b != '\0'; a++, b++) {
    char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
    if (x != *b) return 0;
  }
  return *a == *b;
}

int bw_config_set(bw_config_kind_t kind, void *cfg, const char *field,
                  const char *value, bw_error_t *err) {
  const bw_config_field_t *f;
  char *p;
  if (!kind_ok(kind))
    return bw_error_set(err, BW_E_NOTFOUND, "kind",
                        "kind must be a bw_config_kind_t below %d (got %d)",
                        (int)BW_CONFIG__COUNT, (int)kind);
  if (field == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "field must not be NULL");
  f = bw_config_field(kind, field);
  if (f == NULL) return unknown_field(kind, field, err);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, f->name, "config must not be NULL");
  if (value == NULL)
    return bw_error_set(err, BW_E_INVAL, f->name, "%s needs a value (got NULL)",
                        f->name);
  p = (char *)cfg + f->offset;
  switch (f->type) {
  case BW_CONFIG_T_STRING:
    if (bw_name_check(value, f->name, err) != BW_OK) return BW_E_INVAL;
    *(const char **)(void *)p = value;
    break;
  case BW_CONFIG_T_BOOL: {
    bool b;
    if (bw_config_parse_bool(value, &b) != BW_OK) return bad(f, value, err);
    *(bool *)(void *)p = b;
    break;
  }
  case BW_CONFIG_T_U32:
  case BW_CONFIG_T_SIZE: {
    int64_t i;
    uint64_t u;
    if ((f->flags & BW_CONFIG_ALL) && eq_nocase(value, "all")) {
      u = UINT32_MAX;
    } else if (f->type == BW_CONFIG_T_SIZE) {
      if (bw_config_parse_u64(value, &u) != BW_OK || u > SIZE_MAX ||
          !in_range(f, (double)u))
        return bad(f, value, err);
    } else {
      if (bw_config_parse_i64(value, &i) != BW_OK || i < 0 ||
          !in_range(f, (double)i))
        return bad(f, value, err);
      u = (uint64_t)i;
    }
    if (f->type == BW_CONFIG_T_SIZE)
      *(size_t *)(void *)p = (size_t)u;
    else
      *(uint32_t *)(void *)p = (uint32_t)u;
    break;
  }
  case BW_CONFIG_T_U64: {
    uint64_t u;
    if (bw_config_parse_u64(value, &u) != BW_OK) return bad(f, value, err);
    *(uint64_t *)(void *)p = u;
    break;
  }
  case BW_CONFIG_T_DURATION: {
    int64_t ms;
    if (bw_config_parse_duration_ms(value, &ms) != BW_OK ||
        !in_range(f, (double)ms))
      return bad(f, value, err);
    *(int64_t *)(void *)p = ms;
    break;
  }
  case BW_CONFIG_T_DOUBLE:
  case BW_CONFIG_T_RATIO:
  case BW_CONFIG_T_PERCENT: {
    double d;
    int rc;
    if (f->type == BW_CONFIG_T_PERCENT) {
      /* "20%" and "20" are both 20, read without a division */
      char num[64];
      size_t n = strlen(value);
      if (n > 0 && n < sizeof num && value[n - 1] == '%') {
        memcpy(num, value, n - 1);
        num[n - 1] = '\0';
        rc = bw_config_parse_double(num, &d);
      } else {
        rc = bw_config_parse_double(value, &d);
      }
    } else if (f->type == BW_CONFIG_T_RATIO) {
      rc = bw_config_parse_ratio(value, &d);
    } else {
      rc = bw_config_parse_double(value, &d);
    }
    if (rc != BW_OK || !in_range(f, d)) return bad(f, value, err);
    *(double *)(void *)p = d;
    break;
  }
  case BW_CONFIG_T_ENUM: {
    size_t i;
    for (i = 0; f->choices[i] != NULL; i++)
      if (eq_nocase(value, f->choices[i])) break;
    if (f->choices[i] == NULL) return bad(f, value, err);
    /* every enum of the core is int-sized */
    *(int *)(void *)p = (int)i;
    break;
  }
  case BW_CONFIG_T_POINTER:
  default:
    return bw_error_set(err, BW_E_INVAL, f->name,
                        "%s is a pointer (a clock, sink, callback or "
                        "object): it cannot be set by name, only in code",
                        f->name);
  }
  bw_error_clear(err);
  return BW_OK;
}

/* ---- get ------------------------------------------------------------------
 */

/* The shortest %g form that reads back to exactly d. */
static void format_double(double d, char out[40]) {
  if (d == floor(d) && fabs(d) < 1e15) { /* whole: 10, not 1e+01 */
    snprintf(out, 40, "%.0f", d);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, 40, "%.*g", prec, d);
    if (strtod(out, NULL) == d) return;
  }
}

int bw_config_get(bw_config_kind_t kind, const void *cfg, const char *field,
                  char *buf, size_t size, bw_error_t *err) {
  const bw_config_field_t *f;
  const char *p;
  char text[48];
  const char *out = text;
  size_t len;
  if (!kind_ok(kind))
    return bw_error_set(err, BW_E_NOTFOUND, "kind",
                        "kind must be a bw_config_kind_t below %d (got %d)",
                        (int)BW_CONFIG__COUNT, (int)kind);
  if (field == NULL || buf == NULL || size == 0)
    return bw_error_set(err, BW_E_INVAL, "",
                        "field and buf must not be NULL, size not 0");
  f = bw_config_field(kind, field);
  if (f == NULL) return unknown_field(kind, field, err);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, f->name, "config must not be NULL");
  p = (const char *)cfg + f->offset;
  switch (f->type) {
  case BW_CONFIG_T_STRING:
    out = *(const char *const *)(const void *)p;
    if (out == NULL) out = "(null)";
    break;
  case BW_CONFIG_T_BOOL:
    out = *(const bool *)(const void *)p ? "true" : "false";
    break;
  case BW_CONFIG_T_U32: {
    uint32_t u = *(const uint32_t *)(const void *)p;
    if ((f->flags & BW_CONFIG_ALL) && u == UINT32_MAX)
      out = "all";
    else
      snprintf(text, sizeof text, "%lu", (unsigned long)u);
    break;
  }
  case BW_CONFIG_T_U64:
    snprintf(text, sizeof text, "%llu",
             (unsigned long long)*(const uint64_t *)(const void *)p);
    break;
  case BW_CONFIG_T_SIZE:
    snprintf(text, sizeof text, "%zu", *(const size_t *)(const void *)p);
    break;
  case BW_CONFIG_T_DURATION:
    snprintf(text, sizeof text, "%lld",
             (long long)*(const int64_t *)(const void *)p);
    break;
  case BW_CONFIG_T_DOUBLE:
  case BW_CONFIG_T_RATIO:
  case BW_CONFIG_T_PERCENT:
    format_double(*(const double *)(const void *)p, text);
    break;
  case BW_CONFIG_T_ENUM: {
    int v = *(const int *)(const void *)p;
    size_t k = 0;
    while (f->choices[k] != NULL)
      k++;
    if (v < 0 || (size_t)v >= k)
      return bw_error_set(err, BW_E_INVAL, f->name,
                          "%s holds %d, which has no name", f->name, v);
    out = f->choices[v];
    break;
  }
  case BW_CONFIG_T_POINTER:
  default:
    out = *(const void *const *)(const void *)p != NULL ? "set" : "null";
    break;
  }
  len = strlen(out);
  if (len >= size) {
    memcpy(buf, out, size - 1);
    buf[size - 1] = '\0';
    return bw_error_set(err, BW_E_RANGE, f->name,
                        "%s's value needs %zu bytes (buf has %zu)", f->name,
                        len + 1, size);
  }
  memcpy(buf, out, len + 1);
  bw_error_clear(err);
  return BW_OK;
}
