/* breakwater tool — the partner model's knobs as flags, shared by
 * `partner`, `storm`, `lab storm` and `lab hedge`. */
#ifndef BREAKWATER_TOOLS_PARTNER_FLAGS_H
#define BREAKWATER_TOOLS_PARTNER_FLAGS_H

#include <stddef.h>

#include "breakwater/sim.h"
#include "cli.h"

#define BW_PARTNER_KNOB_FLAGS 10

/* The upper bound of the tools' millisecond flags: a day. */
#define BW_TOOL_DAY_MS INT64_C(86400000)

/* --seed, the same range and message in every command (partner, storm, lab
 * storm): 1..INT64_MAX (0 is refused: the generators need a non-zero
 * seed). */
#define BW_SEED_FLAG(target, help) \
  BW_CLI_I64("seed", (target), 1, INT64_MAX, "N", (help))

/* The partner model's knobs as flags (--capacity, --ok-min-ms, --ok-max-ms,
 * --slow-min-ms, --slow-max-ms, --throttle-ratio, --retry-after-s,
 * --tail-ratio, --tail-ms, --error-ratio), shared
 * by `partner`, `storm`, `lab storm` and `lab hedge`; targets point into *p,
 * whose current values are the defaults. `prefix` starts each help line ("" or
 * "partner: "); help[] holds the texts (it must outlive the flags). Returns
 * the count, BW_PARTNER_KNOB_FLAGS. */
size_t bw_partner_knob_flags(bw_cli_flag_t *f, bw_sim_partner_config_t *p,
                             const char *prefix, char help[][96]);

/* The flag that sets a config field: "ok_min_ms" -> "--ok-min-ms", into out
 * (truncated to size; nothing written when size < 3). */
void bw_partner_flag_of(const char *field, char *out, size_t size);

#endif
