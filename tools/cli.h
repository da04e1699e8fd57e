/* breakwater — a small typed flag parser for the breakwater command's
 * subcommands (partner, storm, lab...).
 *
 * Long flags only: `--name value` or `--name=value`; a bool is a switch
 * (`--quiet`, or `--quiet=true|false|1|0`). `--` ends the flags. `-h` and
 * `--help` ask for help. Every value is checked against its type and range;
 * a failure names the flag and the rule:
 *   --capacity must be an integer in [1, 1000000] (got 'abc')
 * Nothing is clamped, nothing crashes on bad input. Usage errors are exit
 * status 2 by convention (BW_CLI_EXIT_USAGE).
 *
 *   uint32_t capacity = 400; bool quiet = false;
 *   bw_cli_flag_t flags[] = {
 *     BW_CLI_U32("capacity", &capacity, 1, 1000000, "N", "requests in flight"),
 *     BW_CLI_BOOL("quiet", &quiet, "print nothing but errors"),
 *   };
 *   int rc = bw_cli_parse(flags, 2, argc, argv, NULL, 0, NULL, err, sizeof
 * err);
 *
 * Not thread-sensitive: it only touches its arguments. */
#ifndef BREAKWATER_TOOLS_CLI_H
#define BREAKWATER_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BW_CLI_EXIT_USAGE 2

/* bw_cli_parse results. */
#define BW_CLI_OK 0
#define BW_CLI_HELP 1     /* -h/--help was given: print usage, exit 0 */
#define BW_CLI_ERROR (-1) /* a usage error: err holds the sentence */

typedef enum bw_cli_type_e {
  BW_CLI_T_U32 = 0,    /* uint32_t *, range [imin, imax] within [0, 2^32-1] */
  BW_CLI_T_I64 = 1,    /* int64_t *, range [imin, imax] */
  BW_CLI_T_DOUBLE = 2, /* double *, finite, range [dmin, dmax] */
  BW_CLI_T_STRING = 3, /* const char ** (points into argv), non-empty */
  BW_CLI_T_BOOL = 4    /* bool *, a switch */
} bw_cli_type_t;

typedef struct bw_cli_flag_s {
  const char *name; /* without the dashes: "capacity" */
  bw_cli_type_t type;
  void *target; /* written only when the flag is given and valid */
  int64_t imin, imax;
  double dmin, dmax;
  const char *metavar; /* "N", "MS", "HOST"...; for the usage text */
  const char *help;    /* one line */
  bool seen;           /* set by bw_cli_parse when the flag was given */
} bw_cli_flag_t;

#define BW_CLI_U32(n, t, lo, hi, mv, h) \
  { (n), BW_CLI_T_U32, (t), (lo), (hi), 0, 0, (mv), (h), false }
#define BW_CLI_I64(n, t, lo, hi, mv, h) \
  { (n), BW_CLI_T_I64, (t), (lo), (hi), 0, 0, (mv), (h), false }
#define BW_CLI_DOUBLE(n, t, lo, hi, mv, h) \
  { (n), BW_CLI_T_DOUBLE, (t), 0, 0, (lo), (hi), (mv), (h), false }
#define BW_CLI_STRING(n, t, mv, h) \
  { (n), BW_CLI_T_STRING, (t), 0, 0, 0, 0, (mv), (h), false }
#define BW_CLI_BOOL(n, t, h) \
  { (n), BW_CLI_T_BOOL, (t), 0, 0, 0, 0, NULL, (h), false }

/* Parses argv[0..argc-1] (pass the arguments after the subcommand's name).
 * Arguments that are not flags are stored in positional[] (at most
 * max_positional, count in *npositional; positional may be NULL when none is
 * accepted). Returns BW_CLI_OK, BW_CLI_HELP, or BW_CLI_ERROR with a sentence
 * in err (err_size bytes, NUL-terminated) naming the flag: an unknown flag,
 * a missing value, a value of the wrong type or out of range, an unexpected
 * argument. Targets of flags parsed before an error may have been written. */
int bw_cli_parse(bw_cli_flag_t *flags, size_t nflags, int argc, char **argv,
                 const char **positional, size_t max_positional,
                 size_t *npositional, char *err, size_t err_size);

/* Prints one line per flag: "  --name METAVAR  help (range)". */
void bw_cli_print_flags(FILE *out, const bw_cli_flag_t *flags, size_t nflags);

/* Parses a whole string as a decimal integer / a finite decimal double,
 * with no surrounding spaces, by the library's parsers
 * (bw_config_parse_i64 / bw_config_parse_double, breakwater/config.h).
 * 0 on success, -1 otherwise (*out untouched). */
int bw_cli_parse_i64(const char *s, int64_t *out);
int bw_cli_parse_double(const char *s, double *out);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_TOOLS_CLI_H */
