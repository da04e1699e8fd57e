/* Writes the Prometheus exposition of a registry holding one object of every
 * kind to the file named by the last argument (stdout without one), for
 * promtool and the Prometheus parser (check_prometheus.py); with
 * --openmetrics first, the OpenMetrics variant. */
#include <stdio.h>
#include <string.h>

#include "registry_all.h"

int main(int argc, char **argv) {
  reg_all_t a;
  FILE *fp = stdout;
  bool om = argc > 1 && strcmp(argv[1], "--openmetrics") == 0;
  int rc;
  if (om) {
    argc--;
    argv++;
  }
  reg_all_init(&a);
  bw_breaker_isolate(a.shared); /* the isolated case too */
  if (argc > 1) {
    fp = fopen(argv[1], "w");
    if (fp == NULL) {
      perror(argv[1]);
      return 1;
    }
  }
  rc = om ? bw_registry_write_openmetrics(a.reg, fp)
          : bw_registry_write_prometheus(a.reg, fp);
  if (fp != stdout && fclose(fp) != 0) rc = BW_E_IO;
  reg_all_free(&a);
  return rc == BW_OK ? 0 : 1;
}
