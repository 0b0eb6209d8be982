/* cli-commands.h: the commands of planscope-cli (spec/cli.md), one file
 * each (cli-COMMAND.c), for the dispatcher's table in planscope-cli.c.
 * Each takes the command's own argv (argv[0] is the command name) and
 * returns an exit code of spec/cli.md. */
#ifndef PS_CLI_COMMANDS_H
#define PS_CLI_COMMANDS_H

int cli_plan_main (int argc, char **argv);
int cli_verify_main (int argc, char **argv);
int cli_gen_main (int argc, char **argv);
int cli_simulate_main (int argc, char **argv);
int cli_analyze_main (int argc, char **argv);
int cli_profile_main (int argc, char **argv);
int cli_kernels_main (int argc, char **argv);
int cli_export_main (int argc, char **argv);
int cli_replay_main (int argc, char **argv);
int cli_diff_main (int argc, char **argv);
int cli_import_main (int argc, char **argv);

#endif
