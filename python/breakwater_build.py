"""cffi API-mode builder for breakwater's Python binding.

Compiles ``breakwater._bw``, a real CPython extension, against the installed
headers and links the installed shared libraries found through pkg-config
(modules ``breakwater`` and ``breakwater-shm``). The library directory is
recorded as an rpath, so the extension finds libbreakwater at run time
without LD_LIBRARY_PATH.
"""
import breakwater_pkgconfig

MODULES = ["breakwater", "breakwater-shm"]


CDEF = r"""
typedef struct { int64_t start_ns; uint64_t generation; int64_t deadline_ns;
                 uint32_t kind; uint32_t lease_slot;
                 uint32_t inflight_at_acquire; uint32_t limit_at_acquire;
                 uint32_t flags; ...; } bw_permit_t;
typedef struct { int code; char field[48]; char message[208]; } bw_error_t;
const char *bw_strerror(int code);
const char *bw_version(void);

#define BW_OK 0
#define BW_E_INVAL -1
#define BW_E_NOMEM -2
#define BW_E_OPEN -3
#define BW_E_FULL -4
#define BW_E_TIMEOUT -5
#define BW_E_NOTFOUND -6
#define BW_E_STALE -9
#define BW_E_DEADLINE -12
#define BW_E_IO ...
#define BW_E_LIMIT ...
void bw_free(void *ptr);
typedef enum { BW_SUCCESS = 0, BW_FAILURE = 1, BW_IGNORED = 2,
               BW_TIMED_OUT = 3 } bw_outcome_t;

/* clocks */
typedef struct bw_clock_s bw_clock_t;
int64_t bw_clock_now(const bw_clock_t *clock);
const bw_clock_t *bw_clock_monotonic(void);
bw_clock_t *bw_clock_manual_new(int64_t start_ns);
void bw_clock_manual_advance(bw_clock_t *clock, int64_t delta_ns);
void bw_clock_manual_set(bw_clock_t *clock, int64_t now_ns);
void bw_clock_free(bw_clock_t *clock);

/* configuration by name */
typedef enum { BW_CONFIG_BREAKER = 0, BW_CONFIG_RETRY = 1,
               BW_CONFIG_BUDGET = 2, BW_CONFIG_BULKHEAD = 3,
               BW_CONFIG_LIMITER = 4, BW_CONFIG_RATELIMIT = 5,
               BW_CONFIG_THROTTLE = 17, ... }
  bw_config_kind_t;
int bw_config_set(bw_config_kind_t kind, void *cfg, const char *field,
                  const char *value, bw_error_t *err);
int bw_config_validate(bw_config_kind_t kind, const void *cfg,
                       bw_error_t *err);
int bw_config_get(bw_config_kind_t kind, const void *cfg, const char *field,
                  char *buf, size_t size, bw_error_t *err);

/* deadline */
typedef struct { int64_t at_ns; } bw_deadline_t;
bw_deadline_t bw_deadline_set(bw_deadline_t d);
bw_deadline_t bw_deadline_current(void);
int bw_deadline_header_format(int64_t remaining_ms, char *buf, size_t size);
int bw_deadline_header_parse(const char *value, size_t len,
                             int64_t *remaining_ms);
#define BW_DEADLINE_NONE_NS ...

/* breaker */
typedef enum { BW_CLOSED, BW_OPEN, BW_HALF_OPEN, BW_ISOLATED, BW_DISABLED,
               ... } bw_state_t;
const char *bw_state_name(bw_state_t state);
typedef struct bw_sink_s bw_sink_t;
typedef struct { const bw_clock_t *clock; bw_sink_t *sink; ...; } bw_breaker_config_t;
typedef struct { bw_state_t state; uint64_t generation;
  uint32_t consecutive_failures; uint64_t calls; uint64_t successes;
  uint64_t failures; uint64_t ignored; uint64_t stale; uint64_t admitted;
  uint64_t rejected; uint64_t opens; uint64_t half_opens; uint64_t closes;
  int64_t retry_in_ms; ...; } bw_breaker_stats_t;
typedef struct bw_breaker_s bw_breaker_t;
void bw_breaker_config_init(bw_breaker_config_t *cfg);
bw_breaker_t *bw_breaker_new(const bw_breaker_config_t *cfg, bw_error_t *err);
int bw_breaker_acquire(bw_breaker_t *b, bw_permit_t *p);
int bw_breaker_release(bw_breaker_t *b, const bw_permit_t *p, bw_outcome_t outcome);
bw_state_t bw_breaker_state(const bw_breaker_t *b);
int64_t bw_breaker_retry_in_ms(const bw_breaker_t *b);
void bw_breaker_poll(bw_breaker_t *b);
void bw_breaker_isolate(bw_breaker_t *b);
void bw_breaker_reset(bw_breaker_t *b);
const char *bw_breaker_name(const bw_breaker_t *b);
void bw_breaker_stats(const bw_breaker_t *b, bw_breaker_stats_t *out);
void bw_breaker_free(bw_breaker_t *b);

/* shared memory */
typedef enum { BW_SHM_CREATE = 1, BW_SHM_ATTACH = 2,
               BW_SHM_OPEN_OR_CREATE = 3 } bw_shm_mode_t;
typedef struct { const char *name; bw_shm_mode_t mode; size_t size; ...; }
  bw_shm_config_t;
typedef struct bw_shm_s bw_shm_t;
typedef struct bw_shm_breaker_s bw_shm_breaker_t;
void bw_shm_config_init(bw_shm_config_t *cfg);
bw_shm_t *bw_shm_open(const bw_shm_config_t *cfg, bw_error_t *err);
void bw_shm_close(bw_shm_t *shm);
int bw_shm_unlink(const char *name, bw_error_t *err);
bw_shm_breaker_t *bw_shm_breaker_new(bw_shm_t *shm,
                                     const bw_breaker_config_t *cfg,
                                     bw_error_t *err);
int bw_shm_breaker_acquire(bw_shm_breaker_t *b, bw_permit_t *p);
int bw_shm_breaker_release(bw_shm_breaker_t *b, const bw_permit_t *p,
                           bw_outcome_t outcome);
bw_state_t bw_shm_breaker_state(const bw_shm_breaker_t *b);
int64_t bw_shm_breaker_retry_in_ms(const bw_shm_breaker_t *b);
void bw_shm_breaker_poll(bw_shm_breaker_t *b);
void bw_shm_breaker_isolate(bw_shm_breaker_t *b);
void bw_shm_breaker_reset(bw_shm_breaker_t *b);
void bw_shm_breaker_stats(const bw_shm_breaker_t *b, bw_breaker_stats_t *out);
const char *bw_shm_breaker_name(const bw_shm_breaker_t *b);
void bw_shm_breaker_free(bw_shm_breaker_t *b);

/* retry */
typedef struct bw_budget_s bw_budget_t;
typedef struct { bw_budget_t *budget; bw_sink_t *sink; ...; } bw_retry_config_t;
typedef struct bw_retry_policy_s bw_retry_policy_t;
typedef struct { uint32_t attempts; ...; } bw_retry_t;
#define BW_RETRY_DONE 0
#define BW_RETRY 1
#define BW_RETRY_GIVE_UP 2
#define BW_RETRY_AFTER_NONE -1
typedef enum { BW_VERDICT_OK = 0, BW_VERDICT_TRANSIENT = 1,
  BW_VERDICT_NOT_SENT = 2, BW_VERDICT_PERMANENT = 3,
  BW_VERDICT_REJECTED = 4 } bw_verdict_t;
typedef enum { BW_GIVEUP_NONE = 0, BW_GIVEUP_EXHAUSTED, BW_GIVEUP_ELAPSED,
  BW_GIVEUP_PERMANENT, BW_GIVEUP_REJECTED, BW_GIVEUP_NOT_IDEMPOTENT,
  BW_GIVEUP_BUDGET, BW_GIVEUP_DEADLINE, BW_GIVEUP_RETRY_AFTER_TOO_LONG,
  BW_GIVEUP_PUSHBACK, ... } bw_giveup_t;
const char *bw_giveup_name(bw_giveup_t g);
void bw_retry_config_init(bw_retry_config_t *cfg);
int bw_retry_config_preset(bw_retry_config_t *cfg, const char *preset);
bw_retry_policy_t *bw_retry_policy_new(const bw_retry_config_t *cfg,
                                       bw_error_t *err);
void bw_retry_policy_free(bw_retry_policy_t *p);
const char *bw_retry_policy_name(const bw_retry_policy_t *p);
int bw_retry_start(bw_retry_t *r, const bw_retry_policy_t *p, int64_t now_ns);
void bw_retry_set_deadline(bw_retry_t *r, bw_deadline_t d);
int bw_retry_next(bw_retry_t *r, bw_verdict_t v, int64_t retry_after_ms,
                  int64_t now_ns, int64_t *delay_ms);
int bw_retry_check_deadline(bw_retry_t *r, bw_verdict_t last, int64_t now_ns);
bw_giveup_t bw_retry_reason(const bw_retry_t *r);
uint32_t bw_retry_attempts(const bw_retry_t *r);

/* budget */
typedef struct { const bw_clock_t *clock; bw_sink_t *sink; ...; } bw_budget_config_t;
typedef struct { uint64_t requests; uint64_t successes; uint64_t failures;
  uint64_t allowed; uint64_t denied; double tokens; uint64_t window_requests;
  uint64_t window_retries; } bw_budget_stats_t;
void bw_budget_config_init(bw_budget_config_t *cfg);
void bw_budget_config_of(const bw_budget_t *b, bw_budget_config_t *cfg);
bw_budget_t *bw_budget_new(const bw_budget_config_t *cfg, bw_error_t *err);
void bw_budget_on_request(bw_budget_t *b);
void bw_budget_on_success(bw_budget_t *b);
void bw_budget_on_failure(bw_budget_t *b);
int bw_budget_try_retry_ex(bw_budget_t *b);
void bw_budget_stats(const bw_budget_t *b, bw_budget_stats_t *out);
void bw_budget_free(bw_budget_t *b);
const char *bw_budget_name(const bw_budget_t *b);

/* bulkhead */
typedef struct { const bw_clock_t *clock; bw_sink_t *sink; int64_t max_wait_ms; ...; } bw_bulkhead_config_t;
typedef struct bw_bulkhead_s bw_bulkhead_t;
typedef struct bw_bulkhead_waiter_s { ...; } bw_bulkhead_waiter_t;
typedef void (*bw_bulkhead_grant_cb)(bw_bulkhead_waiter_t *w,
                                     const bw_permit_t *p, void *userdata);
typedef struct { uint32_t max_concurrent; uint32_t available;
  uint32_t in_use; uint32_t waiting; uint64_t admitted;
  uint64_t admitted_after_wait; uint64_t rejected_full;
  uint64_t wait_timeouts; uint64_t rejected_deadline; uint64_t cancelled;
  uint64_t released; uint64_t timeouts; } bw_bulkhead_stats_t;
#define BW_BULKHEAD_QUEUED 1
void bw_bulkhead_config_init(bw_bulkhead_config_t *cfg);
void bw_bulkhead_config_of(const bw_bulkhead_t *bh, bw_bulkhead_config_t *cfg);
bw_bulkhead_t *bw_bulkhead_new(const bw_bulkhead_config_t *cfg,
                               bw_error_t *err);
int bw_bulkhead_try_acquire(bw_bulkhead_t *bh, bw_permit_t *p);
int bw_bulkhead_acquire_timed(bw_bulkhead_t *bh, bw_permit_t *p,
                              bw_bulkhead_waiter_t *w, bw_bulkhead_grant_cb cb,
                              void *userdata, int64_t *wait_ms);
int bw_bulkhead_cancel_timeout(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w);
int bw_bulkhead_cancel(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w);
int bw_bulkhead_release(bw_bulkhead_t *bh, const bw_permit_t *p);
void bw_bulkhead_stats(const bw_bulkhead_t *bh, bw_bulkhead_stats_t *out);
void bw_bulkhead_free(bw_bulkhead_t *bh);
const char *bw_bulkhead_name(const bw_bulkhead_t *bh);
extern "Python" void _bw_py_bulkhead_grant(bw_bulkhead_waiter_t *w,
                                          const bw_permit_t *p,
                                          void *userdata);

/* adaptive limiter */
typedef struct { const bw_clock_t *clock; bw_sink_t *sink; ...; } bw_limiter_config_t;
typedef struct bw_limiter_s bw_limiter_t;
typedef struct { uint32_t limit; double estimate; uint32_t in_flight;
  uint64_t admitted; uint64_t rejected; uint64_t successes; uint64_t drops;
  uint64_t ignored; uint64_t timed_out; uint32_t held; uint32_t proven;
  uint64_t stuck; bool startup; uint64_t stuck_timeouts;
  uint64_t tolerated_drops; ...; }
  bw_limiter_stats_t;
void bw_limiter_config_init(bw_limiter_config_t *cfg);
void bw_limiter_config_of(const bw_limiter_t *lim, bw_limiter_config_t *cfg);
bw_limiter_t *bw_limiter_new(const bw_limiter_config_t *cfg, bw_error_t *err);
int bw_limiter_try_acquire(bw_limiter_t *lim, bw_permit_t *p);
int bw_limiter_release(bw_limiter_t *lim, const bw_permit_t *p, bw_outcome_t outcome);
uint32_t bw_limiter_limit(const bw_limiter_t *lim);
void bw_limiter_stats(const bw_limiter_t *lim, bw_limiter_stats_t *out);
void bw_limiter_free(bw_limiter_t *lim);
const char *bw_limiter_name(const bw_limiter_t *lim);

/* GCRA rate limiter */
typedef struct { const bw_clock_t *clock; bw_sink_t *sink; ...; } bw_ratelimit_config_t;
typedef struct bw_ratelimit_s bw_ratelimit_t;
typedef struct { uint64_t admitted; uint64_t limited; uint64_t reserved;
  uint64_t reserved_waiting; } bw_ratelimit_stats_t;
void bw_ratelimit_config_init(bw_ratelimit_config_t *cfg);
void bw_ratelimit_config_of(const bw_ratelimit_t *rl, bw_ratelimit_config_t *cfg);
bw_ratelimit_t *bw_ratelimit_new(const bw_ratelimit_config_t *cfg,
                                 bw_error_t *err);
int bw_ratelimit_try_acquire(bw_ratelimit_t *rl, int64_t *wait_ms);
int64_t bw_ratelimit_reserve_ns(bw_ratelimit_t *rl);
void bw_ratelimit_stats(const bw_ratelimit_t *rl, bw_ratelimit_stats_t *out);
void bw_ratelimit_free(bw_ratelimit_t *rl);
const char *bw_ratelimit_name(const bw_ratelimit_t *rl);

/* interfaces a pipeline takes */
typedef struct bw_limit_s bw_limit_t;
typedef struct bw_breaker_if_s bw_breaker_if_t;
bw_limit_t *bw_bulkhead_as_limit(bw_bulkhead_t *bh);
bw_limit_t *bw_limiter_as_limit(bw_limiter_t *lim);
bw_breaker_if_t *bw_breaker_iface(bw_breaker_t *b);
bw_breaker_if_t *bw_shm_breaker_iface(bw_shm_breaker_t *b);
const char *bw_breaker_if_name(const bw_breaker_if_t *b);
const char *bw_limit_name(const bw_limit_t *l);

/* pipeline */
typedef enum { BW_FAILURE_NONE = 0, BW_FAILURE_BREAKER = 1,
  BW_FAILURE_LIMIT = 2, BW_FAILURE_RATELIMIT = 3, BW_FAILURE_BUDGET = 4,
  BW_FAILURE_EXHAUSTED = 5, BW_FAILURE_PERMANENT = 6,
  BW_FAILURE_DEADLINE = 7, BW_FAILURE_RETRY_AFTER = 8,
  BW_FAILURE_NOT_IDEMPOTENT = 9, BW_FAILURE_ELAPSED = 10,
  BW_FAILURE__COUNT = 11 } bw_failure_t;
const char *bw_failure_name(bw_failure_t f);
typedef struct bw_pipeline_s bw_pipeline_t;
typedef struct { uint32_t attempt; int64_t delay_ms;
  int64_t attempt_timeout_ms; bw_deadline_t deadline; bw_failure_t failure;
  bw_verdict_t last_verdict; int fallback_rc; bool fallback_ran;
  const void *user; uint8_t index; ...; } bw_pipeline_call_t;
typedef int (*bw_fallback_fn)(void *userdata, bw_failure_t why,
                              const bw_pipeline_call_t *call);
typedef struct { const char *name; bw_sink_t *sink; bw_fallback_fn fallback;
                 void *fallback_userdata; int64_t min_attempt_ms; ...; }
  bw_pipeline_config_t;
typedef struct { uint64_t calls; uint64_t attempts; uint64_t successes;
  uint64_t failures[11]; uint64_t cancelled; ...; } bw_pipeline_stats_t;
#define BW_STEP_ATTEMPT 0
#define BW_STEP_WAIT 1
#define BW_STEP_DONE 2
#define BW_PIPELINE_MAX_STRATEGIES 8
void bw_pipeline_config_init(bw_pipeline_config_t *cfg);
int bw_pipeline_add_deadline(bw_pipeline_config_t *cfg, int64_t ms);
int bw_pipeline_add_ratelimit(bw_pipeline_config_t *cfg, bw_ratelimit_t *rl,
                              int64_t max_wait_ms);
int bw_pipeline_add_limit(bw_pipeline_config_t *cfg, bw_limit_t *l,
                          int64_t max_wait_ms);
int bw_pipeline_add_breaker_if(bw_pipeline_config_t *cfg, bw_breaker_if_t *b);
int bw_pipeline_add_retry(bw_pipeline_config_t *cfg, const bw_retry_policy_t *p);
int bw_pipeline_add_timeout(bw_pipeline_config_t *cfg, int64_t ms);
int bw_pipeline_config_validate(const bw_pipeline_config_t *cfg, bw_error_t *err);
bw_pipeline_t *bw_pipeline_new(const bw_pipeline_config_t *cfg, bw_error_t *err);
void bw_pipeline_free(bw_pipeline_t *pl);
const char *bw_pipeline_name(const bw_pipeline_t *pl);
typedef enum { BW_STRATEGY_DEADLINE = 0, BW_STRATEGY_RATELIMIT = 1,
  BW_STRATEGY_LIMIT = 2, BW_STRATEGY_BREAKER = 3, BW_STRATEGY_RETRY = 4,
  BW_STRATEGY_TIMEOUT = 5, BW_STRATEGY_CUSTOM = 6 } bw_strategy_kind_t;
typedef struct { bw_strategy_kind_t kind; void *object; int64_t ms;
  int64_t max_wait_ms; int64_t poll_ms; } bw_strategy_t;
const char *bw_strategy_kind_name(bw_strategy_kind_t k);
uint32_t bw_pipeline_strategy_count(const bw_pipeline_t *pl);
int bw_pipeline_strategy_at(const bw_pipeline_t *pl, uint32_t i,
                            bw_strategy_t *out);
int bw_pipeline_begin_at(const bw_pipeline_t *pl, bw_pipeline_call_t *c,
                         bw_deadline_t outer, int64_t now_ns);
int bw_pipeline_report(bw_pipeline_call_t *c, bw_verdict_t v,
                       int64_t retry_after_ms, int64_t now_ns);
int bw_pipeline_report_timeout(bw_pipeline_call_t *c, int64_t now_ns);
int bw_pipeline_resume(bw_pipeline_call_t *c, int64_t now_ns);
void bw_pipeline_cancel(bw_pipeline_call_t *c);
void bw_pipeline_stats(const bw_pipeline_t *pl, bw_pipeline_stats_t *out);

/* the strategy interface (strategy.h): opaque here */
typedef struct bw_strategy_if_s bw_strategy_if_t;
int bw_pipeline_add_strategy(bw_pipeline_config_t *cfg, bw_strategy_if_t *s,
                             int64_t max_wait_ms);

/* client-side adaptive throttle (throttle.h) */
typedef struct { const char *name; double k; int64_t window_ms;
  uint32_t buckets; uint64_t seed; const bw_clock_t *clock; bw_sink_t *sink;
  ...; } bw_throttle_config_t;
typedef struct bw_throttle_s bw_throttle_t;
typedef struct { uint64_t requests; uint64_t accepts; uint64_t rejected;
  uint64_t throttled; uint64_t withdrawn; uint64_t window_requests;
  uint64_t window_accepts; double probability; ...; } bw_throttle_stats_t;
void bw_throttle_config_init(bw_throttle_config_t *cfg);
int bw_throttle_config_validate(const bw_throttle_config_t *cfg,
                                bw_error_t *err);
bw_throttle_t *bw_throttle_new(const bw_throttle_config_t *cfg,
                               bw_error_t *err);
void bw_throttle_free(bw_throttle_t *t);
double bw_throttle_probability(const bw_throttle_t *t);
void bw_throttle_stats(const bw_throttle_t *t, bw_throttle_stats_t *out);
const char *bw_throttle_name(const bw_throttle_t *t);
bw_strategy_if_t *bw_throttle_strategy(bw_throttle_t *t);
void bw_throttle_config_of(const bw_throttle_t *t, bw_throttle_config_t *cfg);
const char *bw_strategy_if_name(const bw_strategy_if_t *s);
const char *bw_strategy_if_kind(const bw_strategy_if_t *s);
/* `with throttle:` (the C below) */
int bw_py_throttle_enter(bw_throttle_t *t, const bw_clock_t *clock,
                         bw_permit_t *p);
void bw_py_throttle_leave(bw_throttle_t *t, bw_permit_t *p, bw_outcome_t o,
                          bool sent);

/* the seeded generator (rand.h): the throttle tests replay its draws */
typedef struct bw_rand_s { ...; } bw_rand_t;
void bw_rand_seed(bw_rand_t *r, uint64_t seed);
double bw_rand_double(bw_rand_t *r);

/* events */
typedef enum { BW_FIELD_INT = 0, BW_FIELD_UINT = 1, BW_FIELD_DOUBLE = 2,
  BW_FIELD_STR = 3, BW_FIELD_BOOL = 4 } bw_field_type_t;
typedef struct bw_event_s bw_event_t;
typedef void (*bw_event_cb)(const bw_event_t *event, void *userdata);
bw_sink_t *bw_sink_callback_new(bw_event_cb cb, void *userdata, bw_error_t *err);
void bw_sink_free(bw_sink_t *sink);
size_t bw_event_format_json(const bw_event_t *event, char *buf, size_t size);
extern "Python" void _bw_py_event(const bw_event_t *event, void *userdata);

/* registry */
typedef struct bw_registry_s bw_registry_t;
typedef struct { size_t max_objects; int64_t idle_evict_ms;
  const bw_clock_t *clock; bw_sink_t *sink; ...; } bw_registry_config_t;
typedef enum { BW_REGISTRY_BREAKER = 0, BW_REGISTRY_BREAKER_IF = 1,
  BW_REGISTRY_BULKHEAD = 2, BW_REGISTRY_LIMITER = 3,
  BW_REGISTRY_RATELIMIT = 4, BW_REGISTRY_RETRY = 5, BW_REGISTRY_BUDGET = 6,
  BW_REGISTRY_PIPELINE = 7, BW_REGISTRY_QUEUE_STORE = 11,
  BW_REGISTRY_THROTTLE = 14, ... }
  bw_registry_kind_t;
void bw_registry_config_init(bw_registry_config_t *cfg);
bw_registry_t *bw_registry_new(const bw_registry_config_t *cfg, bw_error_t *err);
int bw_registry_set_breaker_config(bw_registry_t *reg, const char *name,
                                   const bw_breaker_config_t *cfg,
                                   bw_error_t *err);
bw_breaker_t *bw_registry_breaker(bw_registry_t *reg, const char *name,
                                  bw_error_t *err);
bw_breaker_t *bw_registry_find_breaker(bw_registry_t *reg, const char *name);
void *bw_registry_find(bw_registry_t *reg, bw_registry_kind_t kind,
                        const char *name);
void bw_registry_put(bw_registry_t *reg, bw_breaker_t *b);
bw_bulkhead_t *bw_registry_bulkhead(bw_registry_t *reg, const char *name,
                                    const bw_bulkhead_config_t *cfg,
                                    bw_error_t *err);
bw_limiter_t *bw_registry_limiter(bw_registry_t *reg, const char *name,
                                  const bw_limiter_config_t *cfg,
                                  bw_error_t *err);
bw_ratelimit_t *bw_registry_ratelimit(bw_registry_t *reg, const char *name,
                                      const bw_ratelimit_config_t *cfg,
                                      bw_error_t *err);
bw_retry_policy_t *bw_registry_retry(bw_registry_t *reg, const char *name,
                                     const bw_retry_config_t *cfg,
                                     bw_error_t *err);
bw_budget_t *bw_registry_budget(bw_registry_t *reg, const char *name,
                                const bw_budget_config_t *cfg, bw_error_t *err);
bw_throttle_t *bw_registry_throttle(bw_registry_t *reg, const char *name,
                                    const bw_throttle_config_t *cfg,
                                    bw_error_t *err);
int bw_registry_put_object(bw_registry_t *reg, bw_registry_kind_t kind,
                           const char *name, void *obj, bw_error_t *err);
size_t bw_registry_count(bw_registry_t *reg, bw_registry_kind_t kind);
char *bw_registry_prometheus(bw_registry_t *reg, size_t *len);
void bw_registry_free(bw_registry_t *reg);

/* stores: the memory queue, parking and the reprocessor (store.h) */
typedef struct { uint64_t id; uint64_t receipt; uint32_t deliveries;
  int64_t enqueued_ns; int64_t lease_until_ns; void *payload; size_t len; }
  bw_stored_item_t;
typedef struct { uint64_t id; uint64_t item_id; uint32_t deliveries;
  int64_t time_ns; char reason[32]; char error[160]; void *payload;
  size_t len; } bw_dlq_record_t;
typedef struct { const char *name; uint32_t max_size; double warn_threshold;
  double warn_rearm_threshold; uint32_t max_deliveries; uint32_t dlq_max;
  const bw_clock_t *clock; const bw_clock_t *wall_clock; bw_sink_t *sink; }
  bw_queue_store_config_t;
typedef struct { uint64_t depth; uint64_t in_flight; uint64_t dlq_depth;
  uint32_t max_size; double fill; bool warning; uint64_t enqueued;
  uint64_t refused_full; uint64_t claimed; uint64_t acked; uint64_t nacked;
  uint64_t dead_lettered; uint64_t requeued; uint64_t dlq_dropped;
  uint64_t stale; uint64_t warnings; } bw_queue_store_stats_t;
typedef struct bw_queue_store_s bw_queue_store_t;
void bw_queue_store_config_init(bw_queue_store_config_t *cfg);
bw_queue_store_t *bw_mem_queue_new(const bw_queue_store_config_t *cfg,
                                   bw_error_t *err);
int bw_queue_store_enqueue(bw_queue_store_t *q, const void *data, size_t len,
                           uint64_t *id);
int bw_queue_store_dlq_list(bw_queue_store_t *q, uint64_t after_id,
                            size_t max, bw_dlq_record_t *out, size_t *n);
int bw_queue_store_dlq_requeue(bw_queue_store_t *q, uint64_t dlq_id,
                               uint64_t *new_id);
int bw_queue_store_dlq_delete(bw_queue_store_t *q, uint64_t dlq_id);
int bw_queue_store_stats(bw_queue_store_t *q, bw_queue_store_stats_t *out);
const char *bw_queue_store_name(const bw_queue_store_t *q);
const char *bw_queue_store_kind(const bw_queue_store_t *q);
void bw_queue_store_free(bw_queue_store_t *q);
void bw_dlq_records_clear(bw_dlq_record_t *recs, size_t n);
typedef struct { const void *data; size_t len; } bw_park_work_t;
int bw_park_fallback(void *userdata, bw_failure_t why,
                     const bw_pipeline_call_t *call);
typedef int (*bw_reprocess_fn)(void *userdata, const bw_stored_item_t *item);
typedef struct { const char *name; bw_queue_store_t *queue;
  bw_breaker_t *breaker; bw_reprocess_fn fn; void *userdata; uint32_t batch;
  int64_t visibility_ms; int64_t retry_delay_ms; } bw_reprocessor_config_t;
typedef struct { uint64_t backlog; uint64_t dlq_depth; uint64_t processed;
  uint64_t failed; uint64_t rejected; uint64_t paused; }
  bw_reprocessor_stats_t;
typedef struct bw_reprocessor_s bw_reprocessor_t;
void bw_reprocessor_config_init(bw_reprocessor_config_t *cfg);
bw_reprocessor_t *bw_reprocessor_new(const bw_reprocessor_config_t *cfg,
                                     bw_error_t *err);
int bw_reprocessor_step(bw_reprocessor_t *rp, size_t *done);
int bw_reprocessor_stats(bw_reprocessor_t *rp, bw_reprocessor_stats_t *out);
void bw_reprocessor_free(bw_reprocessor_t *rp);
extern "Python" int _bw_py_reprocess(void *userdata,
                                     const bw_stored_item_t *item);
"""

# A Throttle used on its own (`with throttle:`, its decorator) drives the
# throttle's strategy (strategy.h) as a one-strategy pipeline would: enter
# before the call, leave once after it. The context is built here, in C,
# so that a call costs two plain C calls from Python instead of the struct
# set-up and two calls through function pointers. The throttle keeps its
# per-call state in the permit; it neither reads nor narrows the deadline
# or the attempt's time limit, given as "none". `sent` is whether the call
# went out: an attempt was made since enter, else it is withdrawn.
THROTTLE_SOURCE = r"""
static int bw_py_throttle_enter(bw_throttle_t *t, const bw_clock_t *clock,
                                bw_permit_t *p) {
  bw_strategy_if_t *s = bw_throttle_strategy(t);
  bw_deadline_t none = {BW_DEADLINE_NONE_NS};
  int64_t timeout_ms = -1;
  int64_t now = bw_clock_now(clock);
  bw_strategy_ctx_t ctx = {p, &none, &timeout_ms, now, 0, 0, false};
  bw_refusal_t r = {BW_FAILURE_LIMIT, -1, false};
  return s->vt->enter(s, &ctx, now, &r);
}

static void bw_py_throttle_leave(bw_throttle_t *t, bw_permit_t *p,
                                 bw_outcome_t o, bool sent) {
  bw_strategy_if_t *s = bw_throttle_strategy(t);
  bw_deadline_t none = {BW_DEADLINE_NONE_NS};
  int64_t timeout_ms = -1;
  bw_strategy_ctx_t ctx = {p,           &none,        &timeout_ms,
                           p->start_ns, sent ? 1u : 0u, 0,
                           false};
  s->vt->leave(s, &ctx, o);
}
"""

ffibuilder = breakwater_pkgconfig.ffi_builder(
    CDEF, "breakwater._bw",
    "#include <breakwater/breakwater.h>\n#include <breakwater/shm.h>\n"
    "#include <breakwater/pipeline.h>\n#include <breakwater/registry.h>\n"
    "#include <breakwater/event.h>\n#include <breakwater/store.h>\n"
    + THROTTLE_SOURCE,
    MODULES)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
