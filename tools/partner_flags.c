/* breakwater tool — the partner model's knobs as flags (partner_flags.h). */
#include "partner_flags.h"

#include <stdio.h>
#include <string.h>

size_t bw_partner_knob_flags(bw_cli_flag_t *f, bw_sim_partner_config_t *p,
                             const char *prefix, char help[][96]) {
  snprintf(help[0], 96, "%srequests in flight served normally (default %u)",
           prefix, (unsigned)p->capacity);
  snprintf(help[1], 96, "%slatency under capacity, low end (default %lld)",
           prefix, (long long)p->ok_min_ms);
  snprintf(help[2], 96, "%slatency under capacity, high end (default %lld)",
           prefix, (long long)p->ok_max_ms);
  snprintf(help[3], 96, "%slatency above capacity, low end (default %lld)",
           prefix, (long long)p->slow_min_ms);
  snprintf(help[4], 96, "%slatency above capacity, high end (default %lld)",
           prefix, (long long)p->slow_max_ms);
  snprintf(help[5], 96, "%sshare of 429 above capacity (default %g)", prefix,
           p->throttle_ratio);
  snprintf(help[6], 96,
           "%sRetry-After of a 429 in seconds, -1 = none (default %lld)",
           prefix, (long long)p->retry_after_s);
  snprintf(help[7], 96,
           "%sshare of answers under capacity that take tail-ms (default %g)",
           prefix, p->tail_ratio);
  snprintf(help[8], 96, "%sthe slow tail's latency (default %lld)", prefix,
           (long long)p->tail_ms);
  snprintf(help[9], 96,
           "%sshare of answers under capacity that are 500s (default %g)",
           prefix, p->error_ratio);
  bw_cli_flag_t knobs[BW_PARTNER_KNOB_FLAGS] = {
      BW_CLI_U32("capacity", &p->capacity, 1, 1000000, "N", help[0]),
      BW_CLI_I64("ok-min-ms", &p->ok_min_ms, 0, BW_TOOL_DAY_MS, "MS", help[1]),
      BW_CLI_I64("ok-max-ms", &p->ok_max_ms, 0, BW_TOOL_DAY_MS, "MS", help[2]),
      BW_CLI_I64("slow-min-ms", &p->slow_min_ms, 0, BW_TOOL_DAY_MS, "MS",
                 help[3]),
      BW_CLI_I64("slow-max-ms", &p->slow_max_ms, 0, BW_TOOL_DAY_MS, "MS",
                 help[4]),
      BW_CLI_DOUBLE("throttle-ratio", &p->throttle_ratio, 0.0, 1.0, "R",
                    help[5]),
      BW_CLI_I64("retry-after-s", &p->retry_after_s, -1, 86400, "S", help[6]),
      BW_CLI_DOUBLE("tail-ratio", &p->tail_ratio, 0.0, 1.0, "R", help[7]),
      BW_CLI_I64("tail-ms", &p->tail_ms, 0, BW_TOOL_DAY_MS, "MS", help[8]),
      BW_CLI_DOUBLE("error-ratio", &p->error_ratio, 0.0, 1.0, "R", help[9]),
  };
  memcpy(f, knobs, sizeof knobs);
  return BW_PARTNER_KNOB_FLAGS;
}

void bw_partner_flag_of(const char *field, char *out, size_t size) {
  size_t i, j = 0;
  if (size < 3) return;
  out[j++] = '-';
  out[j++] = '-';
  for (i = 0; field[i] != '\0' && j + 1 < size; i++)
    out[j++] = field[i] == '_' ? '-' : field[i];
  out[j] = '\0';
}
