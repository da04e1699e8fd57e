/* Private to the core: the glue between the registry (registry.c) and its
 * collectors (registry_collect.c). */
#ifndef BW_CORE_REGISTRY_COLLECT_H
#define BW_CORE_REGISTRY_COLLECT_H

#include <stdbool.h>
#include <stddef.h>

#include "breakwater/registry.h"

typedef struct bw__collectors_s bw__collectors_t;

/* registry.c: the exposition's label escaping and number formatting, so
 * that a collector's samples read exactly as the built-in ones. */
size_t bw__escape_label(const char *in, size_t n, char *out);
void bw__fmt_double(double d, char *buf, size_t size);
/* registry.c: the registry's collector set (created on first use when
 * create is true; NULL when there is none). */
bw__collectors_t *bw__registry_collectors(bw_registry_t *reg, bool create);
/* registry.c: calls cb for every built-in family (name as in its TYPE line
 * of the Prometheus text, type "counter", "gauge" or "histogram"). */
void bw__registry_foreach_family(void (*cb)(void *ud, const char *metric,
                                            const char *type),
                                 void *ud);

/* registry_collect.c */
bw__collectors_t *bw__collectors_new(void);
void bw__collectors_free(bw__collectors_t *c);
/* Runs every collector and formats their families (OpenMetrics when om) in
 * a buffer the caller frees with bw_free (*text NULL, *len 0 with no
 * collector). BW_OK or BW_E_NOMEM. c may be NULL. */
int bw__collectors_render(bw__collectors_t *c, bool om, char **text,
                          size_t *len);

#endif
