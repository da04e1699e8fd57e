/* Installed-library check: a configuration file loaded into a registry
 * (breakwater-config). Exit 0 when the file's pipeline is found and a bad
 * file is refused with FILE:LINE: key: rule. */
#include <breakwater/config_file.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  static const char good[] =
      "[breaker.payment_api]\n"
      "failure_threshold = 3\n"
      "[retry.payment_api]\n"
      "max_attempts = 2\n"
      "[pipeline.payment_api]\n"
      "strategies = breaker.payment_api, "
      "retry.payment_api\n";
  static const char bad[] = "[breaker.x]\nfailure_threshold = 0\n";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_error_t err;
  bw_config_file_options_init(&opt);
  opt.env_prefix = NULL;
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  if (reg == NULL) return 1;
  bw_config_file_t *f =
      bw_config_file_parse(good, strlen(good), "good.ini", &opt, &d);
  if (f == NULL) return fprintf(stderr, "%s\n", d.message), 1;
  if (bw_config_file_apply(f, reg, &d) != BW_OK)
    return fprintf(stderr, "%s\n", d.message), 1;
  bw_config_file_free(f);
  if (bw_registry_pipeline(reg, "payment_api", NULL, &err) == NULL) return 1;
  if (bw_config_file_parse(bad, strlen(bad), "bad.ini", &opt, &d) != NULL ||
      strncmp(d.message, "bad.ini:2: breaker.x.failure_threshold: ", 40) != 0)
    return fprintf(stderr, "not refused: %s\n", d.message), 1;
  bw_registry_free(reg);
  puts("config: ok");
  return 0;
}
