/* planscope-cli.c: the command-line tool (spec/cli.md): the table of
 * commands, the top-level usage and the dispatch.  The commands live in
 * cli-COMMAND.c, what they share in cli-common.c. */
#include <limits.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli-commands.h"
#include "cli.h"
#include "ps-file.h"

#ifndef PS_VERSION
#define PS_VERSION "unknown"
#endif

/* Every command: its name, entry point, usage (its --help) and the line
 * the top-level usage gives it. */
static const struct {
  const char *name;
  int (*main) (int argc, char **argv);
  const char *synopsis, *summary;
} commands[] = {
  { "plan", cli_plan_main, "FILE [PLAN-OPTIONS] [--json]", "print the execution plan" },
  { "verify", cli_verify_main, "FILE [PLAN-OPTIONS]",
    "build the plan and check it independently" },
  { "gen", cli_gen_main, "SHAPE --nodes N [--seed S]", "write a synthetic graph" },
  { "simulate", cli_simulate_main, "FILE [PLAN-OPTIONS] [--json] [--trace OUT]",
    "run the plan on a modelled GPU" },
  { "analyze", cli_analyze_main, "TRACE [--json]", "analyse a Chrome/Kineto trace" },
  { "import", cli_import_main, "TRACE [--free-streams] [-o OUT]",
    "write a trace as a planscope graph" },
  { "replay", cli_replay_main, "TRACE [--json]",
    "replay a trace on the model and compare with what was measured" },
  { "diff", cli_diff_main, "A B [--json]", "compare two runs (traces or plans)" },
  { "profile", cli_profile_main, "FILE [PLAN-OPTIONS] [--mode streams|graph] [--check]",
    "run the plan on a real GPU under CUPTI" },
  { "kernels", cli_kernels_main, "FILE [PLAN-OPTIONS] -o DIR",
    "write the CUDA C and PTX of every kernel step" },
  { "export", cli_export_main, "FILE --view VIEW --format FORMAT -o OUT [PLAN-OPTIONS]",
    "write a view (dag, plan, timeline, memory)" },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void
print_usage (FILE *out)
{
  fputs ("Usage: planscope-cli COMMAND [ARGS...]\n"
         "\n"
         "Compile graphs of GPU work into multi-stream execution plans and check them.\n"
         "\n"
         "Commands:\n",
         out);
  for (size_t k = 0; k < N_COMMANDS; k++) {
    int n = fprintf (out, "  %s %s", commands[k].name, commands[k].synopsis);
    if (n > 0 && n < 40)
      fprintf (out, "%*s%s\n", 40 - n, "", commands[k].summary);
    else
      fprintf (out, "\n%40s%s\n", "", commands[k].summary);
  }
  fputs ("\n"
         "PLAN-OPTIONS: --streams N|auto (1-64, default 4), --fusion auto|all|off, --no-fusion,\n"
         "              --device NAME, --assume NODE=then|else|both, --memory-budget BYTES,\n"
         "              --timing\n"
         "\n"
         "Options:\n"
         "  -h, --help       show this help (also after any command)\n"
         "  --version        show the version\n"
         "\n"
         "Exit status: 0 success, 1 bad input or a failed check, 2 usage error,\n"
         "3 no usable GPU.\n",
         out);
}

/* A command runs once and exits, and its passes hand large arrays from
 * one to the next, often from one thread to another: memory freed is
 * kept for the next allocation rather than given back to the system and
 * asked for again, each page faulted in anew (slow on a virtual machine:
 * about 2.5 GB/s).  One arena, so that what one thread frees another
 * reuses; every block from the heap, none mapped on its own (glibc maps
 * blocks past M_MMAP_THRESHOLD, 32 MiB at most, and unmaps them when
 * freed, which also stops the other thread to flush its TLB); no
 * trimming.  A 1M-node plan then faults 240-255k pages instead of
 * 300-370k, and peaks lower; keeping blocks past 32 MiB too: 189-209k
 * instead of 227-272k, load + compile 1.545 -> 1.504 s (layered),
 * 1.510 -> 1.465 s (fanout), 1.136 -> 1.066 s (transformer), for 14-34
 * MiB more at the peak (medians of 7). */
static void
keep_freed_memory (void)
{
#ifdef M_ARENA_MAX
  mallopt (M_ARENA_MAX, 1);
  mallopt (M_MMAP_MAX, 0);
  mallopt (M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int
main (int argc, char **argv)
{
  keep_freed_memory ();
  /* One large buffer: plans and generated graphs can be hundreds of MB. */
  static char out_buf[1 << 20];
  setvbuf (stdout, out_buf, _IOFBF, sizeof out_buf);
  /* Ctrl+C, a terminal that goes away or a kill leaves no temporary file
   * of a write in progress behind. */
  ps_file_remove_temporaries_on_signals ();

  if (argc < 2) {
    print_usage (stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (cli_is_help (cmd)) {
    print_usage (stdout);
    return cli_finish_stdout ();
  }
  if (strcmp (cmd, "--version") == 0) {
    fputs ("planscope-cli " PS_VERSION "\n", stdout);
    return cli_finish_stdout ();
  }
  /* Commands see argv[0] = their name. */
  for (size_t k = 0; k < N_COMMANDS; k++)
    if (strcmp (cmd, commands[k].name) == 0)
      return commands[k].main (argc - 1, argv + 1);
  if (cmd[0] == '-')
    return cli_usage_error (NULL, "unknown option '%s'", cmd);
  return cli_usage_error (NULL, "unknown command '%s'", cmd);
}
