/* cli.h: what the planscope-cli command files share (cli-common.c):
 * argument parsing, graph loading with diagnostics, timing, trace files
 * and checked output. */
#ifndef PS_CLI_H
#define PS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ps-diagnose.h"
#include "ps-graph.h"
#include "ps-plan.h"
#include "ps-timeline.h"
#include "ps-timing.h"
#include "ps-trace-graph.h"

/* Exit codes of spec/cli.md. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2, CLI_NO_GPU = 3 };

/* Prints "planscope-cli CMD: MESSAGE" and a hint to stderr; returns CLI_USAGE. */
int cli_usage_error (const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 2, 3)))
#endif
    ;

bool cli_is_help (const char *arg);

/* Matches argv[*i] against a value option `name` in the forms "--name V"
 * and "--name=V".  Returns 1 and sets *val (advancing *i past V) on a
 * match, 0 when argv[*i] is another argument, -1 (after a usage message)
 * when the value is missing. */
int cli_option_value (const char *cmd, int argc, char **argv, int *i, const char *name,
                      const char **val);

/* Strict decimal parsing: digits only, no sign, no spaces, in [min, max].
 * Return 0 or -1. */
int cli_parse_u32 (const char *s, uint32_t min, uint32_t max, uint32_t *out);
int cli_parse_u64 (const char *s, uint64_t *out);

/* How many --assume options a command takes. */
#define CLI_MAX_ASSUME 256
/* --streams auto weighs 1 to this many streams (more when pins need
 * them). */
#define CLI_AUTO_STREAMS 8

/* The plan options every planning command takes. */
typedef struct cli_plan_args {
  const char *file;
  ps_plan_options options;
  bool timing;
  const char *device_name; /* --device, or NULL */
  const char *assume[CLI_MAX_ASSUME]; /* --assume NODE=BRANCH, as given */
  uint32_t n_assume;
  ps_device device;        /* found by cli_load_and_plan; options.device points here */
} cli_plan_args;

void cli_plan_args_init (cli_plan_args *a);

/* A command's own option, for cli_parse_command: a flag sets *flag, an
 * option with a value ("--name V" or "--name=V") stores it in *value, or,
 * given more than once, appends it to many (*n_many of at most max_many);
 * checking the value is the command's business.  alias may be NULL. */
typedef struct cli_opt {
  const char *name, *alias;
  const char **value;
  bool *flag;
  const char **many;
  uint32_t *n_many, max_many;
} cli_opt;

/* Parses a planning command's arguments: one FILE, the PLAN-OPTIONS,
 * --help (prints usage), "--" (what follows is FILE) and the command's
 * own options.  Returns -1 when the command should go on, else its exit
 * code (0 after --help, CLI_USAGE after a usage message). */
int cli_parse_command (const char *cmd, const char *usage, int argc, char **argv, cli_plan_args *a,
                       const cli_opt *opts, size_t n_opts);
/* The same with two files: the first in a->file, the second in *second. */
int cli_parse_two_files (const char *cmd, const char *usage, int argc, char **argv,
                         cli_plan_args *a, const char **second, const cli_opt *opts,
                         size_t n_opts);
/* The same for a command on a trace: one TRACE into *file, no
 * PLAN-OPTIONS. */
int cli_parse_trace_command (const char *cmd, const char *usage, int argc, char **argv,
                             const char **file, const cli_opt *opts, size_t n_opts);

/* "timing: WHAT 0.123 s" on stderr, for --timing; cli_print_timing prints
 * every stage of t. */
void cli_timing (const char *what, double seconds);
void cli_print_timing (const ps_timing *t);

/* Loads FILE ("-" reads standard input), printing the loader's
 * diagnostics to stderr.  Returns CLI_OK or CLI_FAILED. */
int cli_load_graph (ps_graph *g, const char *file, bool timing);
/* Reads a PyTorch execution trace (--et), its diagnostics to stderr. */
struct ps_exec_trace;
int cli_load_exec_trace (struct ps_exec_trace *et, const char *file);
/* What an execution trace linked (ps_trace_graph_info), on stderr. */
void cli_et_summary (const char *file, uint32_t gpu_ops, const ps_et_links *links,
                     const struct ps_exec_trace *et);
/* Takes the branches --assume asks for into g's conditionals, then finds
 * the device to plan for (--device, else the graph's, else the default)
 * into a->device and points a->options.device at it. */
int cli_plan_device (cli_plan_args *a, ps_graph *g);
/* Loads, finds the device (cli_plan_device) and plans; on failure prints
 * why and returns CLI_FAILED. */
int cli_load_and_plan (ps_graph *g, ps_plan *p, cli_plan_args *a);

/* Writes a Chrome trace of tl (and dg, which may be NULL) to path, all or
 * nothing; on failure prints "planscope-cli CMD: why" and returns
 * CLI_FAILED. */
int cli_write_trace (const char *cmd, const char *path, const ps_timeline *tl,
                     const ps_diagnosis *dg);

/* Flushes stdout; on a write error prints why and returns CLI_FAILED. */
int cli_finish_stdout (void);

#endif
