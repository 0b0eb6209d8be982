/* cli-import.c: `planscope-cli import`: a Chrome/Kineto trace as a
 * planscope graph file (spec/graph-format.md): one node per GPU op of the
 * device with its measured duration, its recorded stream as a pin (unless
 * --free-streams), and the dependencies the trace shows as `after`. */
#include "cli-commands.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "ps-file.h"
#include "ps-format.h"
#include "ps-graph-output.h"
#include "ps-import.h"

static const char usage[] =
  "Usage: planscope-cli import TRACE [--free-streams] [--gpu N] [-o OUT]\n"
  "\n"
  "Writes the planscope graph of a Chrome/Kineto trace (.json or .json.gz): each\n"
  "kernel, copy and memset of the device with its measured duration as cost_ns, on\n"
  "its recorded stream (a pin), after the op before it on that stream and the work\n"
  "each recorded cross-stream wait waited for.  The host's launch times and the idle\n"
  "time the trace does not explain are not part of the graph format: `plan`,\n"
  "`simulate` and `replay` of the trace itself keep them; the count is on stderr.\n"
  "\n"
  "  --free-streams  no pins: the planner chooses streams (each recorded stream's\n"
  "                  order stays a dependency)\n"
  "  --gpu N         the device to take (default: the one with the most GPU work)\n"
  "  -o, --output OUT  the graph file to write (default: standard output)\n"
  "  --et, --durations  (execution traces and CUDA-graph replays: not read by this\n"
  "                  planscope yet)\n";

typedef struct {
  const ps_graph *g;
  double dropped;
} write_ctx;

static int
write_graph (FILE *out, void *ctx)
{
  write_ctx *w = ctx;
  return ps_graph_write_json (w->g, out, &w->dropped);
}

int
cli_import_main (int argc, char **argv)
{
  const char *cmd = "import";
  const char *file = NULL, *out = NULL, *gpu = NULL;
  ps_trace_graph_options o;
  ps_trace_graph_options_init (&o);
  for (int i = 1; i < argc; i++) {
    const char *val;
    int m;
    if (cli_is_help (argv[i])) {
      fputs (usage, stdout);
      return cli_finish_stdout ();
    }
    if ((m = cli_option_value (cmd, argc, argv, &i, "--gpu", &val)) != 0) {
      if (m < 0)
        return CLI_USAGE;
      gpu = val;
    } else if ((m = cli_option_value (cmd, argc, argv, &i, "-o", &val)) != 0 ||
               (m = cli_option_value (cmd, argc, argv, &i, "--output", &val)) != 0) {
      if (m < 0)
        return CLI_USAGE;
      out = val;
    } else if (strcmp (argv[i], "--et") == 0 || strcmp (argv[i], "--durations") == 0 ||
               strncmp (argv[i], "--et=", 5) == 0 || strncmp (argv[i], "--durations=", 12) == 0) {
      return cli_usage_error (cmd, "%s: pairing a trace with an execution trace or a "
                                   "CUDA-graph dump is not supported by this planscope yet",
                              argv[i]);
    } else if (strcmp (argv[i], "--free-streams") == 0) {
      o.free_streams = true;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return cli_usage_error (cmd, "unknown option '%s'", argv[i]);
    } else if (file) {
      return cli_usage_error (cmd, "one trace at a time ('%s' and '%s')", file, argv[i]);
    } else {
      file = argv[i];
    }
  }
  if (!file)
    return cli_usage_error (cmd, "a TRACE file is required");
  uint32_t dev;
  if (gpu && cli_parse_u32 (gpu, 0, 1023, &dev) != 0)
    return cli_usage_error (cmd, "--gpu needs a device number from 0 to 1023, not '%s'", gpu);
  if (gpu)
    o.device = (int32_t) dev;

  ps_diag diag;
  ps_diag_init (&diag, file);
  char *data = NULL;
  size_t len = 0;
  ps_graph g;
  ps_graph_init (&g);
  int rc = ps_file_read_all (file, (size_t) 4 << 30, &data, &len, &diag);
  if (rc == 0)
    rc = ps_import_trace_graph (&g, data, len, file, &o, NULL, NULL, &diag);
  free (data);
  ps_diag_print (&diag, stderr);
  ps_diag_free (&diag);
  int ret = CLI_FAILED;
  if (rc == 0) {
    write_ctx w = { &g, 0 };
    if (!out || strcmp (out, "-") == 0) {
      rc = write_graph (stdout, &w);
      ret = rc == 0 ? cli_finish_stdout () : CLI_FAILED;
    } else {
      char err[512] = "";
      rc = ps_file_write_atomic (out, write_graph, &w, err, sizeof err);
      if (rc != 0)
        fprintf (stderr, "planscope-cli import: %s\n", err);
      ret = rc == 0 ? CLI_OK : CLI_FAILED;
    }
    if (ret == CLI_OK && w.dropped > 0) {
      char a[PS_FORMAT_MAX];
      fprintf (stderr,
               "%s: note: the graph leaves out the host's launch times and %s of measured "
               "delay, which the graph format cannot hold; plan, simulate or replay the trace "
               "itself to keep them\n",
               file, ps_format_duration (w.dropped, a, sizeof a));
    }
  }
  ps_graph_free (&g);
  return ret;
}
