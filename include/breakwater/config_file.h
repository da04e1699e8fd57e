/* Component config: library libbreakwater_config, pkg-config module
 * breakwater-config, CMake target breakwater::config. */
/* breakwater — configuration files: named policies and pipelines in an INI
 * file (read with inih), loaded into a registry (docs/configuration.md).
 *
 *   ; agents.ini
 *   [breaker.default]              ; every breaker of the file starts here
 *   break_ms = 30s
 *   [breaker.payment_api]          ; one breaker, overriding the defaults
 *   failure_threshold = 3
 *   [retry.payment_api]
 *   max_attempts = 2
 *   [pipeline.payment_api]         ; outermost first
 *   strategies = deadline 10s, breaker.payment_api, retry.payment_api
 *
 *   bw_error_t err;
 *   if (bw_registry_load_file(reg, "agents.ini", &err) != BW_OK)
 *     fprintf(stderr, "%s\n", err.message);  // agents.ini:3: key: rule
 *   bw_pipeline_t *pl = bw_registry_pipeline(reg, "payment_api", NULL, &err);
 *
 * A section is [KIND.NAME]: KIND one of breaker, retry, budget, bulkhead,
 * limiter, ratelimit, throttle, priority_queue, stage, degrade, http,
 * pipeline; NAME letters,
 * digits, '_' and '-' (at most 40 bytes). [KIND.default] holds the defaults
 * of every KIND section of the file (resilience4j's configs.default) and
 * makes no object. Keys are the field names of breakwater/config.h, values
 * its text values; a retry's `budget` names a [budget.NAME] of the file; a
 * pipeline has one key, `strategies` (the grammar is in
 * docs/configuration.md). An [http.NAME] is the standard HTTP pipeline
 * (http_standard.h), its parts' keys dotted (breaker.failure_ratio = 0.2):
 * its limiter, breaker, retry, budget and pipeline are made as registry
 * objects, all named NAME.
 *
 * An object's value is, last word first: the environment
 * (PREFIX_NAME_KIND_FIELD, bw_config_from_env's rule, prefix BREAKWATER by
 * default), its own section, the [KIND.default] section, the kind's _init.
 * A variable PREFIX_X_KIND_FIELD for which the file has no [kind.x] is an
 * error, as is one that names no field.
 *
 * Every error names the file, the line, the key and the rule:
 *   agents.ini:12: breaker.payment_api.failure_threshold: failure_threshold
 *   must be an integer in [1, 4294967295] (got '0')
 * Unknown sections, kinds and keys, duplicate sections and keys, malformed
 * and out-of-range values, rules between fields, dangling references and a
 * file that is not INI are all errors; nothing is defaulted silently.
 *
 * Thread-safety: a parsed file (bw_config_file_t) is immutable and may be
 * read from many threads; loading into a registry is as thread-safe as the
 * registry. The environment is read while parsing: do not call setenv from
 * another thread meanwhile. */
#ifndef BREAKWATER_CONFIG_FILE_H
#define BREAKWATER_CONFIG_FILE_H

#include <stdio.h>

#include "common.h"
#include "config.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a file is read. */
typedef struct bw_config_file_options_s {
  /* The environment variables' prefix (bw_config_from_env): default
   * "BREAKWATER", so BREAKWATER_PAYMENT_API_BREAKER_BREAK_MS=2m overrides
   * [breaker.payment_api] break_ms. NULL: the environment is not read. */
  const char *env_prefix;
} bw_config_file_options_t;

BW_EXTERN void bw_config_file_options_init(bw_config_file_options_t *opt);

/* What went wrong, in full (bw_error_t's message may be truncated). */
typedef struct bw_config_diag_s {
  int code;          /* BW_E_INVAL, BW_E_NOTFOUND, BW_E_IO, BW_E_NOMEM... */
  unsigned line;     /* 1-based; 0 when the error is about no line (the
                        file cannot be read, the environment) */
  char key[128];     /* "breaker.payment_api.failure_threshold", a section
                        "[breaker.x]", an environment variable, or "" */
  char rule[512];    /* the rule, as the library words it */
  char message[896]; /* "FILE:LINE: KEY: RULE" (FILE: KEY: RULE without a
                        line; FILE: RULE without a key) */
} bw_config_diag_t;

/* A parsed, fully validated file: the effective configuration of every
 * object it defines (after defaults and environment). */
typedef struct bw_config_file_s bw_config_file_t;

/* Reads and validates `path` (at most 1 MiB of text). NULL on any error,
 * with diag (may be NULL) filled. */
BW_EXTERN bw_config_file_t *bw_config_file_read(
    const char *path, const bw_config_file_options_t *opt,
    bw_config_diag_t *diag);
/* The same from text in memory; `name` stands for the file in messages. */
BW_EXTERN bw_config_file_t *bw_config_file_parse(
    const char *text, size_t len, const char *name,
    const bw_config_file_options_t *opt, bw_config_diag_t *diag);
BW_EXTERN void bw_config_file_free(bw_config_file_t *f);

/* The objects it defines ([KIND.default] sections excluded), in file order. */
BW_EXTERN size_t bw_config_file_count(const bw_config_file_t *f);
/* Object i: its section's kind ("breaker", ..., "pipeline") and name; BW_OK,
 * or BW_E_RANGE past the end, BW_E_INVAL for NULL. */
BW_EXTERN int bw_config_file_object(const bw_config_file_t *f, size_t i,
                                    const char **kind, const char **name);
/* The effective configuration struct of the object of config kind `kind`
 * named `name` (a bw_breaker_config_t * for BW_CONFIG_BREAKER...), or NULL.
 * Borrowed until bw_config_file_free. A retry's budget pointer is NULL
 * here (it is set when the objects are made). */
BW_EXTERN const void *bw_config_file_config(const bw_config_file_t *f,
                                            bw_config_kind_t kind,
                                            const char *name);
/* Writes the effective configuration as an INI file that reads back to the
 * same objects: every settable field of every object, pipelines with their
 * strategies. BW_OK, BW_E_IO, BW_E_INVAL (NULL). */
BW_EXTERN int bw_config_file_write(const bw_config_file_t *f, FILE *out);

/* Makes every object of f in reg: budgets, then retry policies, breakers,
 * bulkheads, limiters, rate limiters, priority queues, stages, degradation
 * machines, then pipelines over them. Breakers stay held by the registry
 * (never evicted: pipelines point at them). Before anything is made, every
 * name is checked to be new in its kind; if one exists, nothing is made
 * (BW_E_INVAL, diag naming the section). Only an allocation failure or a
 * capped registry that is full (BW_E_NOMEM, BW_E_LIMIT) can stop it
 * half-way; the objects made until then stay (a registry has no removal).
 * NULL f or reg: BW_E_INVAL. */
BW_EXTERN int bw_config_file_apply(const bw_config_file_t *f,
                                   bw_registry_t *reg, bw_config_diag_t *diag);

/* bw_config_file_read with the default options, then bw_config_file_apply.
 * err (may be NULL): the code, field = the key (truncated), message =
 * diag's (truncated to bw_error_t's size). */
BW_EXTERN int bw_registry_load_file(bw_registry_t *reg, const char *path,
                                    bw_error_t *err);
/* The same with options and the full diagnostic. */
BW_EXTERN int bw_registry_load_file_ex(bw_registry_t *reg, const char *path,
                                       const bw_config_file_options_t *opt,
                                       bw_config_diag_t *diag);

/* ---- reload --------------------------------------------------------------
 *
 * What bw_registry_reload did. report holds one line per event, each ending
 * in '\n' (NULL when there was none):
 *   breaker.payment_api.failure_threshold: 3 -> 5: applied
 *   breaker.payment_api.window_size: 100 -> 200: not applied: fixed at
 *     creation (restart to apply)
 *   bulkhead.payment_agent.max_concurrent: 5 -> 8: applied
 *   retry.payment_api: kept as made: a live retry is not reconfigured
 *     (restart to apply a change)
 *   retry.geo_api: created
 * Release with bw_config_reload_clear. */
typedef struct bw_config_reload_s {
  size_t created;     /* objects new in the file, made */
  size_t applied;     /* field changes applied to live objects */
  size_t not_applied; /* field changes a live object cannot take */
  size_t kept;        /* live objects of kinds without a live setter */
  char *report;
} bw_config_reload_t;

/* Frees report and zeroes r (NULL is fine). */
BW_EXTERN void bw_config_reload_clear(bw_config_reload_t *r);

/* Reads and validates `path` again (default options) and brings the
 * registry to it, all or nothing: on any error in the file nothing
 * changes (diag / err as bw_registry_load_file). Then:
 * - an object the registry does not have is made (as bw_config_file_apply;
 *   a new pipeline may stack live objects of the file's names);
 * - a live breaker is reconfigured (bw_breaker_reconfigure): every changed
 *   threshold is applied, and every changed field fixed at creation
 *   (trip_rule, window_size, window_ms, window_buckets, slow_call_ms on or
 *   off) is reported not applied; if the file's values cannot be taken
 *   together by that breaker (a rule between fields, with its fixed ones),
 *   none of its changes is applied and each is reported with the reason;
 * - a live bulkhead, rate limiter, adaptive limiter, ratio budget or
 *   throttle takes its changed limits (bw_bulkhead_set_max_concurrent:
 *   max_concurrent; bw_ratelimit_set_rate: rate_per_sec, burst;
 *   bw_limiter_set_bounds: min_limit, max_limit, inside the creation range;
 *   bw_budget_set_ratio: budget_percent, min_retries_per_sec;
 *   bw_throttle_set_k: k), every other changed field is
 *   reported not applied (a limiter's initial_limit: used only at
 *   creation); if the new values cannot stand together (the kind's rules
 *   between fields with the object's fixed ones, a limiter's creation
 *   range), none of that object's changes is applied, each with the reason;
 * - a live [http.NAME] (its pipeline exists): its breaker, limiter and
 *   budget as above (their lines name breaker.NAME...), a changed use_*
 *   not applied, its pipeline and retry policy kept (one line);
 * - a live object of any other kind (retry, queue, stage, degrade,
 *   pipeline) is kept as it was made and reported (no live setter);
 * - objects of the registry that the file does not name are left alone.
 * Only an allocation failure or a full capped registry can stop it
 * half-way, as for bw_config_file_apply (then no live object was changed
 * yet: every change is planned and checked first, applied last).
 * report (may be NULL) is filled also on error (with nothing in it). */
BW_EXTERN int bw_registry_reload(bw_registry_t *reg, const char *path,
                                 bw_config_reload_t *report, bw_error_t *err);
/* The same with options and the full diagnostic. */
BW_EXTERN int bw_registry_reload_ex(bw_registry_t *reg, const char *path,
                                    const bw_config_file_options_t *opt,
                                    bw_config_reload_t *report,
                                    bw_config_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_CONFIG_FILE_H */
