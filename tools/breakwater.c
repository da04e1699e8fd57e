/* breakwater — the command-line tool: `breakwater <command> [flags]`.
 * Subcommands are rows of the table below (see commands.h to add one). */
#include <stdio.h>
#include <string.h>

#include "breakwater/common.h"
#include "cli.h"
#include "commands.h"

static const bw_cmd_t commands[] = {
#ifdef BW_HAVE_STORM
    {"storm", "the payment partner storm over real HTTP, mode by mode",
     bw_cmd_storm, bw_cmd_storm_help},
    {"lab",
     "virtual time: the storm (lab storm), hedging a slow tail (lab hedge)",
     bw_cmd_lab, bw_cmd_lab_help},
#endif
    {"partner", "run the simulated payment partner as an HTTP server",
     bw_cmd_partner, bw_cmd_partner_help},
    {"config", "configuration: show KIND, check KIND, check FILE",
     bw_cmd_config, bw_cmd_config_help},
    {"alert", "an alert rule over a JSON event stream: --rule RULE < events",
     bw_cmd_alert, bw_cmd_alert_help},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const bw_cmd_t *lookup(const char *name) {
  size_t i;
  for (i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

static void list_commands(FILE *out) {
  size_t i;
  fprintf(out, "commands:\n");
  for (i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: breakwater <command> [flags]\n"
          "       breakwater help <command>\n"
          "       breakwater --version\n\n");
  list_commands(out);
  fprintf(out, "\nRun 'breakwater help <command>' for its flags.\n");
}

static int unknown(const char *name) {
  fprintf(stderr, "breakwater: unknown command '%s'\n", name);
  list_commands(stderr);
  return BW_CLI_EXIT_USAGE;
}

int main(int argc, char **argv) {
  const bw_cmd_t *cmd;
  const char *name;
  if (argc < 2) {
    usage(stderr);
    return BW_CLI_EXIT_USAGE;
  }
  name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("breakwater %s\n", bw_version());
    return 0;
  }
  if (strcmp(name, "help") == 0) {
    if (argc < 3) {
      usage(stdout);
      return 0;
    }
    cmd = lookup(argv[2]);
    if (cmd == NULL) return unknown(argv[2]);
    cmd->help(stdout);
    return 0;
  }
  cmd = lookup(name);
  if (cmd == NULL) return unknown(name);
  return cmd->run(argc - 2, argv + 2);
}
