/* breakwater config — the configuration kinds and their fields, from the
 * library's tables (breakwater/config.h, docs/configuration.md):
 *
 *   breakwater config show KIND     every field: type, default, range, help
 *   breakwater config check KIND [--prefix P] [--instance I] [FIELD=VALUE...]
 *                                   the defaults, then the environment
 *                                   (P_I_KIND_FIELD), then the arguments,
 *                                   validated; prints the result
 *   breakwater config check FILE [--prefix P | --no-env]
 *                                   an INI file (breakwater/config_file.h),
 *                                   validated; prints the effective
 *                                   configuration, or FILE:LINE: key: rule
 *                                   on stderr and exit 2 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "breakwater/config.h"
#ifdef BW_HAVE_CONFIG_FILE
#include "breakwater/config_file.h"
#endif
#include "cli.h"
#include "commands.h"

void bw_cmd_config_help(FILE *out) {
  fprintf(out,
          "usage: breakwater config show KIND\n"
          "       breakwater config check KIND [--prefix P] [--instance I] "
          "[FIELD=VALUE ...]\n"
          "       breakwater config check FILE [--prefix P | --no-env]\n\n"
          "show: every field of a configuration kind, with its type, "
          "default,\nrange and help.\n"
          "check KIND: the kind's defaults, then its environment variables "
          "(with\n--prefix: P_I_KIND_FIELD, docs/configuration.md), then "
          "FIELD=VALUE\narguments, validated as the library will; prints "
          "the result, or the\nerror naming the field and the rule (exit "
          "2).\n"
          "check FILE: an INI configuration file ([KIND.NAME] sections, "
          "docs/configuration.md),\nwith the environment's overrides "
          "(PREFIX_NAME_KIND_FIELD, --prefix, default\nBREAKWATER; --no-env: "
          "none); prints the effective configuration, or\nFILE:LINE: key: "
          "rule on stderr (exit 2).\n\n");
  fprintf(out, "kinds:");
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++)
    fprintf(out, " %s", bw_config_kind_name((bw_config_kind_t)k));
  fprintf(out, "\n");
}

static int kind_of(const char *name, bw_config_kind_t *kind) {
  bw_error_t err;
  if (bw_config_kind_parse(name, kind, &err) == BW_OK) return 0;
  fprintf(stderr, "breakwater config: %s\n", err.message);
  return -1;
}

static void column_widths(const bw_config_field_t *f, size_t n, int w[4]) {
  w[0] = (int)strlen("FIELD");
  w[1] = (int)strlen("TYPE");
  w[2] = (int)strlen("DEFAULT");
  w[3] = (int)strlen("RANGE");
  for (size_t i = 0; i < n; i++) {
    char range[160];
    int l[4];
    l[0] = (int)strlen(f[i].name);
    l[1] = (int)strlen(bw_config_type_name(f[i].type));
    l[2] = (int)strlen(f[i].default_value);
    l[3] = (int)bw_config_field_range(&f[i], range, sizeof range);
    for (int j = 0; j < 4; j++)
      if (l[j] > w[j]) w[j] = l[j];
  }
}

static int show(bw_config_kind_t kind) {
  size_t n;
  const bw_config_field_t *f = bw_config_fields(kind, &n);
  int w[4];
  column_widths(f, n, w);
  printf("%s (%s): %zu fields; pointers are set in code only\n",
         bw_config_kind_name(kind), bw_config_kind_type(kind), n);
  printf("  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], "FIELD", w[1], "TYPE", w[2],
         "DEFAULT", w[3], "RANGE", "HELP");
  for (size_t i = 0; i < n; i++) {
    char range[160];
    bw_config_field_range(&f[i], range, sizeof range);
    printf("  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], f[i].name, w[1],
           bw_config_type_name(f[i].type), w[2], f[i].default_value, w[3],
           range, f[i].help);
  }
  return 0;
}

/* The config, as big as any kind's and aligned for all. */
typedef union any_config_u {
  long double ld;
  void *p;
  unsigned char bytes[1024];
} any_config_t;

static int check(bw_config_kind_t kind, int argc, char **argv) {
  const char *prefix = NULL, *instance = NULL, *pos[64];
  size_t npos = 0, n;
  char msg[256];
  bw_cli_flag_t flags[] = {
      BW_CLI_STRING("prefix", &prefix, "P",
                    "read P_[I_]KIND_FIELD environment variables"),
      BW_CLI_STRING("instance", &instance, "I",
                    "the instance part of the variables' names"),
  };
  any_config_t cfg;
  bw_error_t err;
  const bw_config_field_t *f;
  int rc = bw_cli_parse(flags, 2, argc, argv, pos, 64, &npos, msg, sizeof msg);
  if (rc == BW_CLI_HELP) {
    bw_cmd_config_help(stdout);
    return 0;
  }
  if (rc != BW_CLI_OK) {
    fprintf(stderr, "breakwater config check: %s\n", msg);
    return BW_CLI_EXIT_USAGE;
  }
  if (bw_config_size(kind) > sizeof cfg) return 1;
  bw_config_init(kind, &cfg);
  if (prefix != NULL || instance != NULL) {
    if (bw_config_from_env(prefix, kind, instance, &cfg, &err) != BW_OK) {
      fprintf(stderr, "breakwater config check: %s\n", err.message);
      return BW_CLI_EXIT_USAGE;
    }
  }
  for (size_t i = 0; i < npos; i++) {
    char field[128];
    const char *eq = strchr(pos[i], '=');
    size_t len = eq != NULL ? (size_t)(eq - pos[i]) : 0;
    if (eq == NULL || len == 0 || len >= sizeof field) {
      fprintf(stderr,
              "breakwater config check: arguments are FIELD=VALUE (got "
              "'%s')\n",
              pos[i]);
      return BW_CLI_EXIT_USAGE;
    }
    memcpy(field, pos[i], len);
    field[len] = '\0';
    if (bw_config_set(kind, &cfg, field, eq + 1, &err) != BW_OK) {
      fprintf(stderr, "breakwater config check: %s\n", err.message);
      return BW_CLI_EXIT_USAGE;
    }
  }
  if (bw_config_validate(kind, &cfg, &err) != BW_OK) {
    fprintf(stderr, "breakwater config check: %s%s%s\n", err.field,
            err.field[0] != '\0' ? ": " : "", err.message);
    return BW_CLI_EXIT_USAGE;
  }
  f = bw_config_fields(kind, &n);
  printf("%s: valid\n", bw_config_kind_name(kind));
  for (size_t i = 0; i < n; i++) {
    char value[256];
    if (f[i].type == BW_CONFIG_T_POINTER) continue;
    bw_config_get(kind, &cfg, f[i].name, value, sizeof value, NULL);
    printf("  %s = %s\n", f[i].name, value);
  }
  return 0;
}

/* check FILE: the file's effective configuration, or its first error. */
static int check_file(const char *path, int argc, char **argv) {
#ifdef BW_HAVE_CONFIG_FILE
  const char *prefix = "BREAKWATER";
  bool no_env = false;
  char msg[256];
  bw_cli_flag_t flags[] = {
      BW_CLI_STRING("prefix", &prefix, "P",
                    "environment overrides are P_NAME_KIND_FIELD (default "
                    "BREAKWATER)"),
      BW_CLI_BOOL("no-env", &no_env, "ignore the environment"),
  };
  bw_config_file_options_t opt;
  bw_config_diag_t diag;
  int rc = bw_cli_parse(flags, 2, argc, argv, NULL, 0, NULL, msg, sizeof msg);
  if (rc == BW_CLI_HELP) {
    bw_cmd_config_help(stdout);
    return 0;
  }
  if (rc != BW_CLI_OK) {
    fprintf(stderr, "breakwater config check: %s\n", msg);
    return BW_CLI_EXIT_USAGE;
  }
  bw_config_file_options_init(&opt);
  opt.env_prefix = no_env ? NULL : prefix;
  bw_config_file_t *f = bw_config_file_read(path, &opt, &diag);
  if (f == NULL) {
    fprintf(stderr, "%s\n", diag.message);
    return BW_CLI_EXIT_USAGE;
  }
  printf("; %s: valid, %zu objects; effective values (environment: %s)\n\n",
         path, bw_config_file_count(f),
         opt.env_prefix != NULL ? opt.env_prefix : "not read");
  rc = bw_config_file_write(f, stdout) == BW_OK ? 0 : 1;
  bw_config_file_free(f);
  return rc;
#else
  (void)argc;
  (void)argv;
  fprintf(stderr,
          "breakwater config check: '%s' is not a kind, and this build "
          "reads no files (the config component needs inih, libinih-dev)\n",
          path);
  return BW_CLI_EXIT_USAGE;
#endif
}

static void list_kinds(FILE *out) {
  fprintf(out, "kinds:");
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++)
    fprintf(out, " %s", bw_config_kind_name((bw_config_kind_t)k));
  fprintf(out, "\n");
}

int bw_cmd_config(int argc, char **argv) {
  bw_config_kind_t kind;
  if (argc >= 1 &&
      (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)) {
    bw_cmd_config_help(stdout);
    return 0;
  }
  if (argc < 1) {
    fprintf(stderr,
            "breakwater config: a subcommand is needed: show KIND, "
            "check KIND or check FILE\n");
    return BW_CLI_EXIT_USAGE;
  }
  if (strcmp(argv[0], "show") != 0 && strcmp(argv[0], "check") != 0) {
    fprintf(stderr,
            "breakwater config: unknown subcommand '%s' (show or check)\n",
            argv[0]);
    return BW_CLI_EXIT_USAGE;
  }
  if (argc < 2) {
    fprintf(stderr, "breakwater config %s: a kind is needed\n", argv[0]);
    list_kinds(stderr);
    return BW_CLI_EXIT_USAGE;
  }
  /* check ARG: a kind's name, else a file. */
  if (strcmp(argv[0], "check") == 0 &&
      bw_config_kind_parse(argv[1], &kind, NULL) != BW_OK) {
    if (access(argv[1], F_OK) == 0 || strchr(argv[1], '.') != NULL ||
        strchr(argv[1], '/') != NULL)
      return check_file(argv[1], argc - 2, argv + 2);
  }
  if (kind_of(argv[1], &kind) != 0) {
    if (strcmp(argv[0], "check") == 0)
      fprintf(stderr, "breakwater config check: nor is '%s' a file\n", argv[1]);
    return BW_CLI_EXIT_USAGE;
  }
  if (strcmp(argv[0], "show") == 0) {
    if (argc > 2) {
      fprintf(stderr, "breakwater config show: unexpected argument '%s'\n",
              argv[2]);
      return BW_CLI_EXIT_USAGE;
    }
    return show(kind);
  }
  return check(kind, argc - 2, argv + 2);
}
