/* The typed flag parser of the breakwater command (cli.h). */
#include "cli.h"

#include <string.h>

#include "breakwater/config.h"

/* The value parsers are the library's (breakwater/config.h), so a flag and
 * a configuration field read numbers the same way. */
int bw_cli_parse_i64(const char *s, int64_t *out) {
  return bw_config_parse_i64(s, out) == BW_OK ? 0 : -1;
}

int bw_cli_parse_double(const char *s, double *out) {
  return bw_config_parse_double(s, out) == BW_OK ? 0 : -1;
}

static bw_cli_flag_t *find(bw_cli_flag_t *flags, size_t n, const char *name,
                           size_t len) {
  size_t i;
  for (i = 0; i < n; i++)
    if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
      return &flags[i];
  return NULL;
}

/* Stores value into f's target, or explains why not. */
static int set_value(bw_cli_flag_t *f, const char *value, char *err,
                     size_t err_size) {
  int64_t i;
  double d;
  switch (f->type) {
  case BW_CLI_T_U32:
  case BW_CLI_T_I64:
    if (bw_cli_parse_i64(value, &i) != 0 || i < f->imin || i > f->imax) {
      snprintf(err, err_size,
               "--%s must be an integer in [%lld, %lld] (got '%s')", f->name,
               (long long)f->imin, (long long)f->imax, value);
      return BW_CLI_ERROR;
    }
    if (f->type == BW_CLI_T_U32)
      *(uint32_t *)f->target = (uint32_t)i;
    else
      *(int64_t *)f->target = i;
    return BW_CLI_OK;
  case BW_CLI_T_DOUBLE:
    if (bw_cli_parse_double(value, &d) != 0 || d < f->dmin || d > f->dmax) {
      snprintf(err, err_size, "--%s must be a number in [%g, %g] (got '%s')",
               f->name, f->dmin, f->dmax, value);
      return BW_CLI_ERROR;
    }
    *(double *)f->target = d;
    return BW_CLI_OK;
  case BW_CLI_T_STRING:
    if (value[0] == '\0') {
      snprintf(err, err_size, "--%s must not be empty", f->name);
      return BW_CLI_ERROR;
    }
    *(const char **)f->target = value;
    return BW_CLI_OK;
  case BW_CLI_T_BOOL:
    if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0) {
      *(bool *)f->target = true;
    } else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0) {
      *(bool *)f->target = false;
    } else {
      snprintf(err, err_size,
               "--%s is a switch: give it alone or as --%s=true|false "
               "(got '%s')",
               f->name, f->name, value);
      return BW_CLI_ERROR;
    }
    return BW_CLI_OK;
  }
  snprintf(err, err_size, "--%s has an unknown type", f->name);
  return BW_CLI_ERROR;
}

int bw_cli_parse(bw_cli_flag_t *flags, size_t nflags, int argc, char **argv,
                 const char **positional, size_t max_positional,
                 size_t *npositional, char *err, size_t err_size) {
  char scratch[8];
  size_t npos = 0;
  bool only_positional = false;
  int k;
  if (err == NULL || err_size == 0) {
    err = scratch;
    err_size = sizeof(scratch);
  }
  err[0] = '\0';
  if (npositional != NULL) *npositional = 0;
  if (flags == NULL) nflags = 0;
  for (k = 0; k < argc; k++) {
    const char *a = argv[k];
    const char *name, *eq, *value;
    size_t len;
    bw_cli_flag_t *f;
    if (a == NULL) continue;
    if (!only_positional && strcmp(a, "--") == 0) {
      only_positional = true;
      continue;
    }
    if (!only_positional && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0))
      return BW_CLI_HELP;
    if (only_positional || a[0] != '-' || a[1] == '\0') {
      if (positional == NULL || npos >= max_positional) {
        snprintf(err, err_size, "unexpected argument '%s'", a);
        return BW_CLI_ERROR;
      }
      positional[npos++] = a;
      if (npositional != NULL) *npositional = npos;
      continue;
    }
    if (a[1] != '-') {
      snprintf(err, err_size, "unknown flag '%s' (flags are long: --name)", a);
      return BW_CLI_ERROR;
    }
    name = a + 2;
    eq = strchr(name, '=');
    len = eq != NULL ? (size_t)(eq - name) : strlen(name);
    f = find(flags, nflags, name, len);
    if (f == NULL || len == 0) {
      snprintf(err, err_size, "unknown flag '--%.*s'",
               (int)(len > 64 ? 64 : len), name);
      return BW_CLI_ERROR;
    }
    if (eq != NULL) {
      value = eq + 1;
    } else if (f->type == BW_CLI_T_BOOL) {
      value = "true";
    } else if (k + 1 < argc && argv[k + 1] != NULL) {
      value = argv[++k];
    } else {
      snprintf(err, err_size, "--%s needs a value (%s)", f->name,
               f->metavar != NULL ? f->metavar : "VALUE");
      return BW_CLI_ERROR;
    }
    if (set_value(f, value, err, err_size) != BW_CLI_OK) return BW_CLI_ERROR;
    f->seen = true;
  }
  return BW_CLI_OK;
}

void bw_cli_print_flags(FILE *out, const bw_cli_flag_t *flags, size_t nflags) {
  size_t i;
  for (i = 0; i < nflags; i++) {
    const bw_cli_flag_t *f = &flags[i];
    char left[64];
    snprintf(left, sizeof(left), "--%s%s%s", f->name,
             f->type == BW_CLI_T_BOOL ? "" : " ",
             f->type == BW_CLI_T_BOOL
                 ? ""
                 : (f->metavar != NULL ? f->metavar : "V"));
    fprintf(out, "  %-24s %s", left, f->help != NULL ? f->help : "");
    if (f->type == BW_CLI_T_U32 || f->type == BW_CLI_T_I64)
      fprintf(out, " [%lld, %lld]", (long long)f->imin, (long long)f->imax);
    else if (f->type == BW_CLI_T_DOUBLE)
      fprintf(out, " [%g, %g]", f->dmin, f->dmax);
    fputc('\n', out);
  }
}
