/* breakwater — the subcommands of the breakwater command.
 *
 * A subcommand lives in its own file (tools/cmd_<name>.c) and exports two
 * functions: the command, which receives the arguments after its name
 * (argv[0] is the first of them, not the name) and returns the exit status
 * (0 ok, 1 failure, 2 usage error), and its help, which prints the usage
 * text. To add one: declare both here, add a row to the table in
 * tools/breakwater.c, add the file to the executable in
 * tools/CMakeLists.txt. */
#ifndef BREAKWATER_TOOLS_COMMANDS_H
#define BREAKWATER_TOOLS_COMMANDS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_cmd_s {
  const char *name;    /* "partner" */
  const char *summary; /* one line for `breakwater --help` */
  int (*run)(int argc, char **argv);
  void (*help)(FILE *out);
} bw_cmd_t;

/* The simulated payment partner of the Polly lab over HTTP (cmd_partner.c). */
int bw_cmd_partner(int argc, char **argv);
void bw_cmd_partner_help(FILE *out);

/* The Polly lab's retry storm over real HTTP (cmd_storm.c). */
int bw_cmd_storm(int argc, char **argv);
void bw_cmd_storm_help(FILE *out);

/* The lab: the storm in virtual time (cmd_lab.c). */
int bw_cmd_lab(int argc, char **argv);
void bw_cmd_lab_help(FILE *out);
/* `breakwater lab hedge` (cmd_lab_hedge.c). */
int bw_cmd_lab_hedge(int argc, char **argv);
void bw_cmd_lab_hedge_help(FILE *out);

/* An alert rule over a JSON event stream (cmd_alert.c). */
int bw_cmd_alert(int argc, char **argv);
void bw_cmd_alert_help(FILE *out);

/* The configuration kinds and their fields (cmd_config.c). */
int bw_cmd_config(int argc, char **argv);
void bw_cmd_config_help(FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_TOOLS_COMMANDS_H */
