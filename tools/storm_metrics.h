/* The storm's reader of the partner's metrics text (GET /metrics, the
 * Prometheus text exposition format): the one parser of outside input in
 * `breakwater storm --url`. No dependency; fuzzed by fuzz/fuzz_storm_metrics.c.
 */
#ifndef BW_TOOLS_STORM_METRICS_H
#define BW_TOOLS_STORM_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Reads the unlabelled sample `name` from `len` bytes of metrics text (need
 * not be NUL-terminated; exactly len bytes are read). A sample is a line
 * "name value" or "name value timestamp" (spaces or tabs between, a
 * trailing CR allowed); '#' lines are comments; other metrics' lines, and
 * `name{labels} ...`, are skipped. The value must be a whole number in
 * [0, UINT64_MAX] written in digits (the partner writes its counters so).
 * Returns 1 with *out set; 0 when there is no such sample (*out untouched);
 * -1 with a message in err (always NUL-terminated when err_size > 0) naming
 * the metric and the rule when its value is malformed or out of range, when
 * the line has anything else after it, or when the sample appears twice. */
int bw_storm_metric(const char *text, size_t len, const char *name,
                    uint64_t *out, char *err, size_t err_size);

#endif
