/* cli-commands.h: the simulate and analyze commands of planscope-cli
 * (spec/cli.md).  Each takes the command's own argv (argv[0] is the
 * command name) and returns an exit code of spec/cli.md. */
#ifndef PS_CLI_COMMANDS_H
#define PS_CLI_COMMANDS_H

int ps_cli_simulate (int argc, char **argv);
int ps_cli_analyze (int argc, char **argv);

/* profile and kernels (app/cli-profile.c, app/cli-kernels.c). */
int ps_cli_profile (int argc, char **argv);
int ps_cli_kernels (int argc, char **argv);

/* export (app/cli-export.c). */
int ps_cli_export (int argc, char **argv);

#endif
