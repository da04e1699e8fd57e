/* Installed-library check: the threads driver (breakwater-threads) runs a
 * call that fails once through bw_retry_call, which sleeps the policy's
 * delay (at most 2 ms here) and succeeds on the second attempt. */
#include <breakwater/threads.h>
#include <stdio.h>

static bw_verdict_t flaky(void *userdata, uint32_t attempt,
                          int64_t *retry_after_ms) {
  (void)retry_after_ms;
  *(uint32_t *)userdata = attempt;
  return attempt == 1 ? BW_VERDICT_TRANSIENT : BW_VERDICT_OK;
}

int main(void) {
  bw_retry_config_t cfg;
  bw_retry_policy_t *p;
  bw_error_t err;
  bw_giveup_t why;
  uint32_t attempts = 0;
  bw_retry_config_init(&cfg);
  cfg.base_ms = 1;
  cfg.max_ms = 2;
  p = bw_retry_policy_new(&cfg, &err);
  if (p == NULL) return fprintf(stderr, "retry: %s\n", err.message), 1;
  if (bw_retry_call(p, flaky, &attempts, NULL, &why) != BW_OK ||
      attempts != 2 || why != BW_GIVEUP_NONE)
    return 1;
  bw_retry_policy_free(p);
  puts("threads: ok");
  return 0;
}
