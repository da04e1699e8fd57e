/* breakwater — configuration by name: every core config struct's fields set
 * from text (an operator's environment, a language binding's keyword
 * arguments, the breakwater command), listed with their type, default,
 * range and help, and the value parsers behind it.
 *
 *   bw_breaker_config_t c;
 *   bw_error_t err;
 *   bw_breaker_config_init(&c);
 *   if (bw_config_set(BW_CONFIG_BREAKER, &c, "trip_rule", "time_window",
 *                     &err) != BW_OK ||
 *       bw_config_set(BW_CONFIG_BREAKER, &c, "break_ms", "30s", &err) != 0 ||
 *       bw_config_validate(BW_CONFIG_BREAKER, &c, &err) != BW_OK)
 *     fprintf(stderr, "%s\n", err.message);   // names the field and rule
 *
 * One generic entry point, keyed by a kind, rather than one setter per
 * struct: a binding, the environment loader, the command and the file
 * loader (breakwater/config_file.h) all walk the same table, and a new kind is
 * one table, not a new function in every one of them.
 *
 * Two moments of checking. bw_config_set checks what one value can tell on
 * its own: its syntax, its type and the field's own range (the range its
 * *_config_validate enforces for that field alone, whatever the other
 * fields say). The rules between fields (minimum_calls <= window_size,
 * max_break_ms 0 or >= break_ms, warn_rearm_threshold < warn_threshold,
 * a decorrelated jitter's backoff...) are checked by bw_config_validate,
 * which is the kind's own *_config_validate: so fields may be set in any
 * order (environment variables have none), and the last word is always
 * the same function that bw_*_new calls.
 *
 * Value syntax (docs/configuration.md):
 *   integers   decimal, optional sign: 20, -1; a gauge ceiling also "all"
 *   durations  a number and a unit ms, s, m, h or d: 250ms, 30s, 2m, 1h,
 *              1.5s; a bare number is milliseconds (every duration field is
 *              named *_ms); the result must be a whole number of ms
 *   numbers    decimal with optional fraction and exponent: 1.5, 2e-3 (no
 *              hex, inf or nan; the decimal point is '.', as in the C
 *              locale, which is the default of every program that does not
 *              call setlocale(LC_NUMERIC))
 *   ratios     0.5 or 50%
 *   percents   20 or 20% (budget_percent)
 *   booleans   true/false, on/off, yes/no, 1/0 (any case)
 *   enums      the value's name, as its *_name function prints it
 *              ("time_window", "decorrelated"); any case
 *   strings    names only; the config keeps the pointer (see bw_config_set)
 * Pointer fields (clocks, sinks, callbacks, objects) are listed but cannot
 * be set by name.
 *
 * Errors fill a bw_error_t whose field is the field's name and whose message
 * names the field and the rule, e.g.
 *   "failure_ratio must be a ratio in (0, 1], as 0.5 or 50% (got '1.5')".
 * BW_E_NOTFOUND for an unknown kind, field or environment variable;
 * BW_E_INVAL for everything else (bad syntax, wrong type, out of range, a
 * pointer field, NULL arguments) — the code *_config_validate uses.
 *
 * Thread-safety: every function here is thread-safe on distinct configs
 * (nothing global is written), except bw_config_from_env, which reads the
 * process environment: do not call setenv/unsetenv meanwhile. */
#ifndef BREAKWATER_CONFIG_H
#define BREAKWATER_CONFIG_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The config structs that can be set by name. The name in quotes is the
 * kind's name (bw_config_kind_name) and, upper-cased, its part of an
 * environment variable's name. */
typedef enum bw_config_kind_e {
  BW_CONFIG_BREAKER = 0,        /* "breaker": bw_breaker_config_t */
  BW_CONFIG_RETRY = 1,          /* "retry": bw_retry_config_t */
  BW_CONFIG_BUDGET = 2,         /* "budget": bw_budget_config_t */
  BW_CONFIG_BULKHEAD = 3,       /* "bulkhead": bw_bulkhead_config_t */
  BW_CONFIG_LIMITER = 4,        /* "limiter": bw_limiter_config_t */
  BW_CONFIG_RATELIMIT = 5,      /* "ratelimit": bw_ratelimit_config_t */
  BW_CONFIG_QUEUE = 6,          /* "queue": bw_queue_store_config_t, the
                                   guarded work queue of every store
                                   (store.h; the reference toolkit's
                                   RECOVERY_QUEUE_MAX_SIZE) */
  BW_CONFIG_PRIORITY_QUEUE = 7, /* "priority_queue": bw_queue_config_t,
                                   the bounded priority queue (queue.h) */
  BW_CONFIG_IDEMPOTENCY = 8,    /* "idempotency": bw_idem_config_t */
  BW_CONFIG_GAUGE = 9,          /* "gauge": bw_gauge_config_t */
  BW_CONFIG_STAGE = 10,         /* "stage": bw_stage_config_t */
  BW_CONFIG_BATCH = 11,         /* "batch": bw_batch_config_t */
  BW_CONFIG_DEGRADE = 12,       /* "degrade": bw_degrade_config_t */
  BW_CONFIG_REGISTRY = 13,      /* "registry": bw_registry_config_t */
  BW_CONFIG_REPROCESSOR = 14,   /* "reprocessor":
                                   bw_reprocessor_config_t */
  BW_CONFIG_HEDGE = 15,         /* "hedge": bw_hedge_config_t */
  BW_CONFIG_HTTP = 16,          /* "http": bw_http_standard_config_t, the
                                   standard HTTP pipeline preset; its
                                   parts' fields as "breaker.failure_ratio",
                                   "limiter.max_limit", "retry.base_ms",
                                   "budget.budget_percent" */
  BW_CONFIG_THROTTLE = 17,      /* "throttle": bw_throttle_config_t */
  BW_CONFIG__COUNT = 18
} bw_config_kind_t;

/* How a field's text is read. */
typedef enum bw_config_type_e {
  BW_CONFIG_T_STRING = 0,   /* const char *: a name (borrowed) */
  BW_CONFIG_T_BOOL = 1,     /* bool */
  BW_CONFIG_T_U32 = 2,      /* uint32_t */
  BW_CONFIG_T_U64 = 3,      /* uint64_t (seeds): digits only */
  BW_CONFIG_T_SIZE = 4,     /* size_t */
  BW_CONFIG_T_DURATION = 5, /* int64_t milliseconds, units accepted */
  BW_CONFIG_T_DOUBLE = 6,   /* double, finite */
  BW_CONFIG_T_RATIO = 7,    /* double: 0.5 or 50% */
  BW_CONFIG_T_PERCENT = 8,  /* double in percent: 20 or 20% */
  BW_CONFIG_T_ENUM = 9,     /* a C enum, by name (choices) */
  BW_CONFIG_T_POINTER = 10  /* a pointer: listed, never settable by name */
} bw_config_type_t;

/* Range flags of bw_config_field_t. */
#define BW_CONFIG_MIN_OPEN 1u /* min itself is excluded: (min, ... */
#define BW_CONFIG_MAX_OPEN 2u /* max itself is excluded: ..., max) */
#define BW_CONFIG_OR_ZERO 4u  /* 0 is accepted too (0 = off) */
#define BW_CONFIG_ALL 8u      /* U32: "all" means UINT32_MAX */

/* One settable (or listed) field of a kind. Static, owned by the library. */
typedef struct bw_config_field_s {
  const char *name;           /* "failure_ratio", "gauge.degraded_at",
                                 "ceiling[normal]": the field name that
                                 *_config_validate's errors use */
  bw_config_type_t type;      /* how its text is read */
  const char *default_value;  /* what bw_config_get prints after the kind's
                                 init (a test keeps the two equal) */
  const char *help;           /* one line; rules between fields in words */
  const char *const *choices; /* ENUM: names indexed by value, NULL-ended;
                                 NULL otherwise */
  double min, max;            /* the field's own range (ms for durations,
                                 percent for percents; +-INFINITY: none);
                                 unused for STRING, BOOL, ENUM, POINTER and
                                 U64 */
  unsigned flags;             /* BW_CONFIG_MIN_OPEN | ... */
  size_t offset;              /* private: where it lives in the struct */
} bw_config_field_t;

/* ---- kinds ---------------------------------------------------------------
 */

/* "breaker", "priority_queue"...; "unknown" for anything else. */
BW_EXTERN const char *bw_config_kind_name(bw_config_kind_t kind);
/* The C type of a kind's struct ("bw_breaker_config_t"), "" when unknown. */
BW_EXTERN const char *bw_config_kind_type(bw_config_kind_t kind);
/* Finds a kind by name (exact, lower case). BW_OK and *kind, or
 * BW_E_NOTFOUND with err listing the kinds; BW_E_INVAL for NULL. */
BW_EXTERN int bw_config_kind_parse(const char *name, bw_config_kind_t *kind,
                                   bw_error_t *err);
/* sizeof the kind's struct; 0 when unknown. */
BW_EXTERN size_t bw_config_size(bw_config_kind_t kind);
/* The kind's *_config_init on cfg (a struct of the kind's type). BW_OK, or
 * BW_E_INVAL for an unknown kind or NULL cfg. */
BW_EXTERN int bw_config_init(bw_config_kind_t kind, void *cfg);
/* The kind's *_config_validate (every rule, between fields too): BW_OK or
 * BW_E_INVAL with err naming the field and the rule. The registry and the
 * reprocessor have no validate function of their own: this checks what
 * bw_registry_new / bw_reprocessor_new check of their settable fields, with
 * the same messages (the reprocessor's required queue and fn are left to
 * bw_reprocessor_new). */
BW_EXTERN int bw_config_validate(bw_config_kind_t kind, const void *cfg,
                                 bw_error_t *err);

/* ---- fields --------------------------------------------------------------
 */

/* The kind's fields in struct order, *n their count (pointer fields
 * included, type BW_CONFIG_T_POINTER). NULL and *n = 0 for an unknown kind.
 * n may be NULL. The table is static: never free it. */
BW_EXTERN const bw_config_field_t *bw_config_fields(bw_config_kind_t kind,
                                                    size_t *n);
/* The field named `field` of a kind, or NULL. */
BW_EXTERN const bw_config_field_t *bw_config_field(bw_config_kind_t kind,
                                                   const char *field);
/* A field's type as a word: "string", "bool", "u32", "u64", "size",
 * "duration", "number", "ratio", "percent", "enum", "pointer". */
BW_EXTERN const char *bw_config_type_name(bw_config_type_t type);
/* Writes a field's accepted values in words into buf (NUL-terminated,
 * truncated to size): "(0, 1]", "[1, 4294967295]", "0 or [1, 100]",
 * "[1, 86400000] ms", "consecutive|count_window|time_window", "1..200
 * bytes", "true|false", "set in code". Returns the length it needed
 * (snprintf's rule); 0 and "" for NULL f. */
BW_EXTERN size_t bw_config_field_range(const bw_config_field_t *f, char *buf,
                                       size_t size);

/* Sets one field of cfg (a struct of the kind's type) from text, after
 * checking the value's syntax, type and the field's own range (see the top
 * of this file). On any error cfg is untouched. A STRING field keeps the
 * pointer `value` itself: it must stay valid until the object is created
 * (every constructor copies its name) — a binding passes a string it keeps,
 * bw_config_from_env a pointer into the environment. Errors: BW_E_NOTFOUND
 * (unknown kind or field: err suggests the nearest field name), BW_E_INVAL
 * (NULL cfg, field or value; bad value; a pointer field). */
BW_EXTERN int bw_config_set(bw_config_kind_t kind, void *cfg, const char *field,
                            const char *value, bw_error_t *err);
/* Writes a field's current value as text that bw_config_set reads back to
 * the same value: integers and durations (in ms) in decimal, numbers in
 * the shortest form that reads back exactly, enums by name, booleans as
 * true/false, a ceiling of UINT32_MAX as "all", strings as they are
 * ("(null)" for NULL), pointers as "null" or "set". BW_OK; BW_E_NOTFOUND
 * (unknown kind or field); BW_E_INVAL (NULL argument, or an enum value
 * with no name); BW_E_RANGE when buf is too small (it then holds as much as
 * fits). */
BW_EXTERN int bw_config_get(bw_config_kind_t kind, const void *cfg,
                            const char *field, char *buf, size_t size,
                            bw_error_t *err);

/* ---- the environment -----------------------------------------------------
 *
 * One naming rule: a field is read from the variable
 *   PREFIX_INSTANCE_KIND_FIELD
 * where an empty or NULL prefix or instance is left out (with its '_'),
 * KIND is the kind's name, and every part is upper-cased with each run of
 * characters other than letters and digits turned into one '_', none at
 * either end ("gauge.degraded_at" -> GAUGE_DEGRADED_AT, "ceiling[normal]"
 * -> CEILING_NORMAL, instance "eu-west.1" -> EU_WEST_1). Examples:
 * PAYMENTS_BREAKER_FAILURE_THRESHOLD=3 (prefix PAYMENTS),
 * APP_PAYMENTS_BREAKER_BREAK_MS=30s (prefix APP, instance payments),
 * RECOVERY_QUEUE_MAX_SIZE=100 (prefix RECOVERY, kind queue).
 *
 * Every variable that starts with PREFIX_INSTANCE_KIND_ must name a field:
 * an unknown one is an error (BW_E_NOTFOUND naming the variable), never
 * ignored, so a typo cannot silently leave a default in force. */

/* Reads a kind's fields from the environment into cfg (a struct of the
 * kind's type, already initialised: variables override what it holds),
 * then validates the whole struct (bw_config_validate). All or nothing: on
 * any error cfg is untouched and err names the variable, the field and the
 * rule. String values point into the environment (see bw_config_set): they
 * stay valid until that variable is changed. BW_OK (also when no variable
 * is set); BW_E_NOTFOUND (unknown variable or kind); BW_E_INVAL (a bad
 * value, a pointer field, the validation, NULL cfg, a name longer than 255
 * bytes). Not thread-safe against setenv/unsetenv. */
BW_EXTERN int bw_config_from_env(const char *prefix, bw_config_kind_t kind,
                                 const char *instance, void *cfg,
                                 bw_error_t *err);
/* The variable a field is read from, by the rule above, into buf
 * (NUL-terminated). BW_OK; BW_E_NOTFOUND (unknown kind or field);
 * BW_E_RANGE (buf too small); BW_E_INVAL (NULL buf or field). */
BW_EXTERN int bw_config_env_name(const char *prefix, bw_config_kind_t kind,
                                 const char *instance, const char *field,
                                 char *buf, size_t size);

/* ---- value parsers -------------------------------------------------------
 * The parsers behind bw_config_set, also used by the breakwater command's
 * flags. Each reads the whole string (no surrounding spaces, nothing
 * after), never reads the locale except strtod's decimal point, and leaves
 * *out untouched on error. BW_OK, BW_E_INVAL (not of that form, or NULL),
 * BW_E_RANGE (of that form but too large for the type). Thread-safe. */

/* A decimal integer with an optional sign: "-12", "+7". */
BW_EXTERN int bw_config_parse_i64(const char *s, int64_t *out);
/* Decimal digits only (no sign): "18446744073709551615". */
BW_EXTERN int bw_config_parse_u64(const char *s, uint64_t *out);
/* A finite decimal number: "1.5", "-2e-3", ".5", "7." (no hex, inf, nan). */
BW_EXTERN int bw_config_parse_double(const char *s, double *out);
/* A duration in whole milliseconds: a number (fraction allowed) followed by
 * ms, s, m, h or d, or a bare number of ms: "250ms", "30s", "1.5s", "2m",
 * "1h", "250". BW_E_INVAL also for a result that is not a whole number of
 * ms ("0.5ms"). */
BW_EXTERN int bw_config_parse_duration_ms(const char *s, int64_t *ms);
/* A ratio: a number ("0.5") or a percentage ("50%", read as 0.5). */
BW_EXTERN int bw_config_parse_ratio(const char *s, double *out);
/* true/false, on/off, yes/no, 1/0, in any case. */
BW_EXTERN int bw_config_parse_bool(const char *s, bool *out);
/* A range of unsigned integers "A..B" (digits only), or one integer "N"
 * (then *first = *last = N). The order is not checked: *last < *first is
 * returned as given, for the caller to refuse as an empty range. */
BW_EXTERN int bw_config_parse_u64_range(const char *s, uint64_t *first,
                                        uint64_t *last);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_CONFIG_H */
