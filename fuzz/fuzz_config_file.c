/* Fuzz harness: configuration files (breakwater/config_file.h): the INI
 * reader (inih under our line-counting reader), the section and key rules,
 * the pipeline grammar, defaults and references.
 *
 * The input is the file's text (NUL bytes included: they must be refused).
 * Invariants:
 * - the answer is the same twice;
 * - a refusal has a code (BW_E_INVAL or BW_E_NOTFOUND), a message that
 *   starts with the file's name and, when it has a line, "fuzz.ini:LINE: "
 *   with a line within the text;
 * - an accepted file writes out (bw_config_file_write) as text that is
 *   accepted again and writes out the same, and every object it defines
 *   can be made in a fresh registry (what the file checked is what the
 *   constructors check). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/config_file.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *write_out(const bw_config_file_t *f, size_t *n) {
  char *buf = NULL;
  FILE *m = open_memstream(&buf, n);
  CHECK(m != NULL);
  CHECK(bw_config_file_write(f, m) == BW_OK);
  fclose(m);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bw_config_file_options_t opt;
  bw_config_diag_t d1, d2;
  const char *text = (const char *)data;
  bw_config_file_options_init(&opt);
  opt.env_prefix = NULL; /* the environment is not the input */
  bw_config_file_t *f = bw_config_file_parse(text, size, "fuzz.ini", &opt, &d1);
  bw_config_file_t *g = bw_config_file_parse(text, size, "fuzz.ini", &opt, &d2);
  CHECK((f == NULL) == (g == NULL));
  if (f == NULL) {
    unsigned lines = 1;
    for (size_t i = 0; i < size; i++)
      lines += data[i] == '\n';
    CHECK(d1.code == BW_E_INVAL || d1.code == BW_E_NOTFOUND);
    CHECK(d1.code == d2.code && d1.line == d2.line);
    CHECK(strcmp(d1.message, d2.message) == 0);
    CHECK(strncmp(d1.message, "fuzz.ini", 8) == 0);
    CHECK(d1.rule[0] != '\0');
    CHECK(d1.line <= lines);
    if (d1.line > 0) {
      char where[32];
      snprintf(where, sizeof where, "fuzz.ini:%u: ", d1.line);
      CHECK(strncmp(d1.message, where, strlen(where)) == 0);
    }
    return 0;
  }
  CHECK(bw_config_file_count(f) == bw_config_file_count(g));
  size_t n1, n2;
  char *one = write_out(f, &n1);
  bw_config_file_t *h = bw_config_file_parse(one, n1, "written", &opt, &d2);
  if (h == NULL) fprintf(stderr, "written back: %s\n%s", d2.message, one);
  CHECK(h != NULL);
  char *two = write_out(h, &n2);
  CHECK(n1 == n2 && memcmp(one, two, n1) == 0);
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_registry_config_t rc;
  bw_registry_config_init(&rc);
  rc.clock = clock;
  bw_registry_t *reg = bw_registry_new(&rc, NULL);
  CHECK(reg != NULL);
  if (bw_config_file_apply(f, reg, &d2) != BW_OK)
    fprintf(stderr, "apply: %s\n", d2.message);
  CHECK(d2.code == BW_OK);
  bw_registry_free(reg);
  bw_clock_free(clock);
  free(one);
  free(two);
  bw_config_file_free(h);
  bw_config_file_free(g);
  bw_config_file_free(f);
  return 0;
}
