/* Fuzz harness: configuration by name (bw_config_set, bw_config_get and
 * the value parsers of breakwater/config.h).
 *
 * The input's first byte picks a kind (modulo the kinds, plus one in 16
 * inputs an unknown kind), the second a field of it (one in 32 an unknown
 * name), and the rest, up to a NUL, is the value. Invariants:
 * - the answer is BW_OK, BW_E_INVAL or BW_E_NOTFOUND, and the same twice;
 * - a refusal leaves the config byte for byte as it was and names the field
 *   (or "kind") in a non-empty message; a success clears the error;
 * - a success reads back (bw_config_get) as text that sets the same bytes
 *   again (strings: the same pointer), and only the field's bytes changed;
 * - each parser answers BW_OK, BW_E_INVAL or BW_E_RANGE, the same twice,
 *   and a duration that parses is a whole number of ms that a bare number
 *   gives back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/config.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef union any_u {
  long double ld;
  void *p;
  unsigned char bytes[1024];
} any_t;

static void check_parsers(const char *v) {
  int64_t i, i2;
  uint64_t u, a, b;
  double d;
  bool flag;
  int rc;
  rc = bw_config_parse_i64(v, &i);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  CHECK(bw_config_parse_i64(v, &i2) == rc);
  if (rc == BW_OK) CHECK(i == i2);
  rc = bw_config_parse_u64(v, &u);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  rc = bw_config_parse_double(v, &d);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  if (rc == BW_OK) CHECK(d == d && d - d == 0); /* finite */
  rc = bw_config_parse_ratio(v, &d);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  rc = bw_config_parse_bool(v, &flag);
  CHECK(rc == BW_OK || rc == BW_E_INVAL);
  rc = bw_config_parse_u64_range(v, &a, &b);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  rc = bw_config_parse_duration_ms(v, &i);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  if (rc == BW_OK) {
    char back[32];
    snprintf(back, sizeof back, "%lld", (long long)i);
    CHECK(bw_config_parse_duration_ms(back, &i2) == BW_OK);
    CHECK(i2 == i);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char value[256];
  size_t n, len;
  const bw_config_field_t *fields;
  const char *field;
  bw_config_kind_t kind;
  any_t cfg, before, again;
  bw_error_t err, err2;
  int rc;
  if (size < 2) return 0;
  kind = (bw_config_kind_t)(data[0] % 16 == 15 ? 40 + data[0]
                                               : data[0] % BW_CONFIG__COUNT);
  len = size - 2 < sizeof value - 1 ? size - 2 : sizeof value - 1;
  memcpy(value, data + 2, len);
  value[len] = '\0'; /* an embedded NUL ends the value early: fine */
  check_parsers(value);

  fields = bw_config_fields(kind, &n);
  field = fields != NULL && data[1] % 32 != 31 ? fields[data[1] % n].name
                                               : "no_such_field";
  /* a zeroed struct: bw_config_init would pull in every policy's code */
  memset(&cfg, 0, sizeof cfg);
  memcpy(&before, &cfg, sizeof cfg);
  rc = bw_config_set(kind, &cfg, field, value, &err);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_NOTFOUND);
  memcpy(&again, &before, sizeof again);
  CHECK(bw_config_set(kind, &again, field, value, &err2) == rc);
  CHECK(memcmp(&again, &cfg, sizeof cfg) == 0);
  if (rc != BW_OK) {
    CHECK(err.code == rc);
    CHECK(err.message[0] != '\0');
    CHECK(strcmp(err.field, fields == NULL ? "kind" : field) == 0 ||
          strncmp(err.field, field, sizeof err.field - 1) == 0);
    CHECK(memcmp(&cfg, &before, sizeof cfg) == 0);
    return 0;
  }
  CHECK(err.code == BW_OK && err.message[0] == '\0');
  {
    const bw_config_field_t *f = bw_config_field(kind, field);
    char text[256];
    CHECK(f != NULL && f->type != BW_CONFIG_T_POINTER);
    /* only the field's bytes moved */
    for (size_t i = 0; i < sizeof cfg; i++)
      if (i < f->offset || i >= f->offset + sizeof(double))
        CHECK(cfg.bytes[i] == before.bytes[i]);
    CHECK(bw_config_get(kind, &cfg, field, text, sizeof text, &err) == BW_OK);
    if (f->type == BW_CONFIG_T_STRING) return 0; /* keeps the pointer */
    memcpy(&again, &before, sizeof again);
    CHECK(bw_config_set(kind, &again, field, text, &err) == BW_OK);
    CHECK(memcmp(&again, &cfg, sizeof cfg) == 0);
  }
  return 0;
}
