/* breakwater tool — `breakwater lab storm --seeds A..B`: each mode over a
 * range of seeds, reported per mode as the median and the worst case, with
 * each figure also as a ratio to the oracle of the same seed. */
#ifndef BREAKWATER_TOOLS_LAB_SEEDS_H
#define BREAKWATER_TOOLS_LAB_SEEDS_H

#include <stddef.h>
#include <stdint.h>

#include "storm_opts.h"

/* Parses "A..B" (or "N", meaning N..N): 1 <= A <= B, at most 10,000 seeds.
 * 0, or -1 with a sentence naming --seeds in err. */
int bw_lab_seeds_parse(const char *s, uint64_t *first, uint64_t *last,
                       char *err, size_t err_size);

/* Runs modes[0..nmodes) on each seed of [first, last] (the oracle too, for
 * the ratios, printed only if asked for) and prints the summary table.
 * The exit status: 0, or 1 if a run failed. */
int bw_lab_seeds_run(const bw_storm_opts_t *o, const bw_lab_mode_t *modes,
                     int nmodes, const bw_sim_partner_config_t *partner,
                     uint64_t first, uint64_t last);

#endif
