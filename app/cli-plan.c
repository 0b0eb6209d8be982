/* cli-plan.c: `planscope-cli plan` and `planscope-cli verify`. */
#include "cli-commands.h"
#include "cli.h"

#include <string.h>

#include "ps-plan-output.h"
#include "ps-verify.h"

static const char plan_usage[] =
  "Usage: planscope-cli plan FILE [--streams N|auto] [--fusion auto|all|off] [--no-fusion]\n"
  "                          [--device NAME] [--memory-budget BYTES] [--timing] [--json]\n"
  "\n"
  "Compile a graph (planscope JSON; FILE '-' reads standard input) into an\n"
  "execution plan and print it.  The summary sets the memory pool against its\n"
  "exact peak: the most bytes that must be live at once under the plan's order\n"
  "(no pool for these steps can be smaller); the pool adds no waits.\n"
  "\n"
  "  --streams N    use at most N streams (1-64, default 4); auto: the fewest, up to\n"
  "                 8, whose plan is within 1% of the fastest on any of those counts\n"
  "  --fusion F     auto (default): fuse element-wise kernels, keeping back groups the\n"
  "                 plan simulates faster without; all: every legal group; off: none\n"
  "  --no-fusion    do not fuse element-wise kernels (--fusion off)\n"
  "  --device NAME  schedule for this device profile: h200, a100, rtx4090 or a\n"
  "                 .json profile; default: the graph's \"device\", else h200\n"
  "  --assume N=B   model branch B (then, else or both) of conditional N\n"
  "  --memory-budget BYTES\n"
  "                 keep the pool within BYTES (K, M, G: KiB, MiB, GiB): over it, plan\n"
  "                 on the fewer streams whose plan is fastest with a pool that fits,\n"
  "                 and say what that costs; exit 1 when no count fits\n"
  "  --timing       print the wall time of every pass on stderr\n"
  "  --json         print the plan document of spec/cli.md instead of text\n"
  "  -h, --help     show this help\n";

static const char verify_usage[] =
  "Usage: planscope-cli verify FILE [--streams N|auto] [--fusion auto|all|off] [--no-fusion]\n"
  "                            [--device NAME] [--memory-budget BYTES] [--timing]\n"
  "\n"
  "Build the plan and check it independently of the planner: every dependency\n"
  "ordered by stream order or events, pins and the stream count honoured, and\n"
  "pooled buffers that share bytes used in disjoint phases.  Prints 'ok', or one\n"
  "violation a line and exits 1.\n"
  "\n"
  "  --streams N    use at most N streams (1-64, default 4); auto: the fewest, up to\n"
  "                 8, whose plan is within 1% of the fastest on any of those counts\n"
  "  --fusion F     auto (default): fuse element-wise kernels, keeping back groups the\n"
  "                 plan simulates faster without; all: every legal group; off: none\n"
  "  --no-fusion    do not fuse element-wise kernels (--fusion off)\n"
  "  --device NAME  schedule for this device profile: h200, a100, rtx4090 or a\n"
  "                 .json profile; default: the graph's \"device\", else h200\n"
  "  --assume N=B   model branch B (then, else or both) of conditional N\n"
  "  --memory-budget BYTES\n"
  "                 keep the pool within BYTES (see plan --help)\n"
  "  --timing       print the wall time of every pass on stderr\n"
  "  -h, --help     show this help\n";

/* Parses FILE, the plan options and (for plan) --json.  Returns -1 when
 * the arguments are fine, else the exit code. */
static int
parse_args (const char *cmd, const char *usage, int argc, char **argv, cli_plan_args *a,
            bool *json)
{
  cli_plan_args_init (a);
  const cli_opt opts[] = { { "--json", NULL, NULL, json } };
  return cli_parse_command (cmd, usage, argc, argv, a, opts, json ? 1 : 0);
}

int
cli_plan_main (int argc, char **argv)
{
  cli_plan_args a;
  bool json = false;
  int ret = parse_args ("plan", plan_usage, argc, argv, &a, &json);
  if (ret >= 0)
    return ret;
  a.options.find_peak = true; /* the summary sets the pool against it */

  double t0 = ps_clock_now ();
  ps_graph g;
  ps_plan p;
  ps_graph_init (&g);
  memset (&p, 0, sizeof p);
  ret = cli_load_and_plan (&g, &p, &a);
  if (ret == CLI_OK) {
    double t = ps_clock_now ();
    int r = json ? ps_plan_write_json (&p, stdout) : ps_plan_write_text (&p, stdout);
    ret = cli_finish_stdout ();
    if (ret == CLI_OK && r != 0) {
      fprintf (stderr, "planscope-cli: cannot write the plan: %s\n", ps_strerror (r));
      ret = CLI_FAILED;
    }
    if (a.timing) {
      cli_timing ("output", ps_clock_now () - t);
      cli_timing ("total", ps_clock_now () - t0);
    }
  }
  ps_plan_free (&p);
  ps_graph_free (&g);
  return ret;
}

typedef struct report_ctx {
  size_t printed;
} report_ctx;

static void
report_violation (void *ctx, const char *message)
{
  report_ctx *rc = ctx;
  rc->printed++;
  ps_put_printable (stdout, message);
  fputc ('\n', stdout);
}

/* Violations printed at most; the count of the rest goes to stderr. */
#define MAX_REPORTS 1000

int
cli_verify_main (int argc, char **argv)
{
  cli_plan_args a;
  int ret = parse_args ("verify", verify_usage, argc, argv, &a, NULL);
  if (ret >= 0)
    return ret;

  double t0 = ps_clock_now ();
  ps_graph g;
  ps_plan p;
  ps_graph_init (&g);
  memset (&p, 0, sizeof p);
  ret = cli_load_and_plan (&g, &p, &a);
  if (ret == CLI_OK) {
    double t = ps_clock_now ();
    report_ctx rc = { 0 };
    size_t n = ps_plan_verify (&p, report_violation, &rc, MAX_REPORTS);
    if (n == 0)
      fputs ("ok\n", stdout);
    ret = cli_finish_stdout ();
    if (n > rc.printed)
      fprintf (stderr, "planscope-cli: %zu more violations not shown\n", n - rc.printed);
    if (a.timing) {
      cli_timing ("verify", ps_clock_now () - t);
      cli_timing ("total", ps_clock_now () - t0);
    }
    if (n > 0)
      ret = CLI_FAILED;
  }
  ps_plan_free (&p);
  ps_graph_free (&g);
  return ret;
}
