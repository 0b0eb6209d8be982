/* cli-import.c: `planscope-cli import`: a Chrome/Kineto trace as a
 * planscope graph file (spec/graph-format.md): one node per GPU op of the
 * device with its measured duration, its recorded stream as a pin (unless
 * --free-streams), and the dependencies the trace shows as `after`. */
#include "cli-commands.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "ps-exec-trace.h"
#include "ps-file.h"
#include "ps-format.h"
#include "ps-graph-output.h"
#include "ps-import.h"
#include "ps-trace-import.h"

static const char usage[] =
  "Usage: planscope-cli import TRACE [--et ET] [--free-streams] [--gpu N] [-o OUT]\n"
  "       planscope-cli import DUMP.dot [--durations TRACE] [-o OUT]\n"
  "\n"
  "Writes the planscope graph of a Chrome/Kineto trace (.json or .json.gz): each\n"
  "kernel, copy and memset of the device with its measured duration as cost_ns, on\n"
  "its recorded stream (a pin), after the op before it on that stream and the work\n"
  "each recorded cross-stream wait waited for.  The host's launch times and the idle\n"
  "time the trace does not explain are not part of the graph format: `plan`,\n"
  "`simulate` and `replay` of the trace itself keep them; the count is on stderr.\n"
  "\n"
  "  --et ET        a PyTorch execution trace of the same run (.json or .json.gz):\n"
  "                  each op its CPU operator is linked to reads and writes that\n"
  "                  operator's CUDA tensors (one buffer per storage)\n"
  "  --free-streams  no pins: the planner chooses streams (each recorded stream's\n"
  "                  order stays a dependency, except between two ops --et links:\n"
  "                  their data orders them)\n"
  "  --gpu N         the device to take (default: the one with the most GPU work)\n"
  "  -o, --output OUT  the graph file to write (default: standard output)\n"
  "  --durations TRACE  a CUDA-graph dump's kernel durations from a Kineto trace of\n"
  "                  its replays (matched by kernel name and order, the median over\n"
  "                  replays); kernels the trace does not have stay estimated\n"
  "\n"
  "A CUDA-graph dump (cudaGraphDebugDotPrint) is written as its planscope graph:\n"
  "child graphs expanded, conditionals with their bodies as branches (a WHILE as\n"
  "one pass of its body, a SWITCH as one conditional per case), empty and\n"
  "unmodelled nodes left out with the order they gave kept.  Its kernels need\n"
  "their launch (a verbose dump) or a duration (--durations).\n";

typedef struct {
  const ps_graph *g;
  ps_graph_write_info info;
} write_ctx;

static int
write_graph (FILE *out, void *ctx)
{
  write_ctx *w = ctx;
  return ps_graph_write_json (w->g, out, &w->info);
}

/* --durations: the dump's kernels timed by a trace of its replays. */
static int
take_durations (ps_graph *g, const char *file, const char *trace)
{
  ps_diag diag;
  ps_diag_init (&diag, trace);
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_durations_info di;
  ps_file_whole w;
  int rc = ps_file_read_whole (trace, (size_t) 4 << 30, &w, &diag);
  if (rc == 0)
    rc = ps_trace_import_mem (&tl, w.data, w.len, NULL, &diag);
  rc = ps_file_whole_end (&w, rc);
  if (rc == 0)
    rc = ps_graph_take_durations (g, &tl, &di, &diag);
  ps_diag_print (&diag, stderr);
  ps_diag_free (&diag);
  ps_timeline_free (&tl);
  if (rc == 0) {
    fprintf (stderr, "%s: note: %u of %u kernels timed by %s", file, di.measured + di.by_name,
             di.kernels, trace);
    if (di.replays)
      fprintf (stderr, " (median of %u replays)", di.replays);
    if (di.by_name)
      fprintf (stderr, ", %u by their function's median (its launches do not divide among "
                       "its nodes)", di.by_name);
    if (di.unmatched)
      fprintf (stderr, "; %u not in the trace stay estimated", di.unmatched);
    fputc ('\n', stderr);
  }
  return rc;
}

int
cli_import_main (int argc, char **argv)
{
  const char *cmd = "import";
  const char *file = NULL, *out = NULL, *gpu = NULL;
  const char *et = NULL, *durations = NULL;
  ps_trace_graph_options o;
  ps_trace_graph_options_init (&o);
  const cli_opt opts[] = { { "--gpu", NULL, &gpu, NULL },
                           { "-o", "--output", &out, NULL },
                           { "--free-streams", NULL, NULL, &o.free_streams },
                           { "--et", NULL, &et, NULL },
                           { "--durations", NULL, &durations, NULL } };
  int parsed = cli_parse_trace_command (cmd, usage, argc, argv, &file, opts,
                                        sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  uint32_t dev;
  if (gpu && cli_parse_u32 (gpu, 0, 1023, &dev) != 0)
    return cli_usage_error (cmd, "--gpu needs a device number from 0 to 1023, not '%s'", gpu);
  if (gpu)
    o.device = (int32_t) dev;

  ps_exec_trace exec;
  memset (&exec, 0, sizeof exec);
  if (et) {
    if (cli_load_exec_trace (&exec, et) != CLI_OK)
      return CLI_FAILED;
    o.et = &exec;
  }
  ps_trace_graph_info info;
  memset (&info, 0, sizeof info);
  ps_diag diag;
  ps_diag_init (&diag, file);
  ps_graph g;
  ps_graph_init (&g);
  ps_file_whole in;
  int rc = ps_file_read_whole (file, (size_t) 4 << 30, &in, &diag);
  bool dump = rc == 0 && ps_import_detect (in.data, in.len) == PS_GRAPH_FORMAT_DOT;
  if (rc == 0 && !dump && durations) {
    ps_file_whole_free (&in);
    ps_diag_free (&diag);
    ps_exec_trace_free (&exec);
    return cli_usage_error (cmd, "--durations is for a CUDA-graph dump; %s is not one", file);
  }
  if (rc == 0 && dump && (et || o.free_streams || gpu)) {
    ps_file_whole_free (&in);
    ps_diag_free (&diag);
    ps_exec_trace_free (&exec);
    return cli_usage_error (cmd, "%s is for a trace; %s is a CUDA-graph dump",
                            et ? "--et" : o.free_streams ? "--free-streams" : "--gpu", file);
  }
  if (rc == 0 && dump)
    rc = ps_import_graph_mem (&g, in.data, in.len, file, &diag);
  else if (rc == 0)
    rc = ps_import_trace_graph (&g, in.data, in.len, file, &o, NULL, &info, &diag);
  rc = ps_file_whole_end (&in, rc);
  if (rc == 0 && durations)
    rc = take_durations (&g, file, durations);
  if (rc == 0 && et)
    cli_et_summary (et, info.gpu_ops, &info.et, &exec);
  ps_exec_trace_free (&exec);
  ps_diag_print (&diag, stderr);
  ps_diag_free (&diag);
  int ret = CLI_FAILED;
  ps_graph_write_info wi;
  if (rc == 0)
    ps_graph_write_check (&g, &wi);
  if (rc == 0 && wi.no_launch) {
    const ps_node *nd = &g.nodes[wi.first_no_launch];
    fprintf (stderr, "%s:%u:%u: error: %u kernels (the first: node \"%s\") have neither a launch "
                     "configuration (a dump made without cudaGraphDebugDotFlagsVerbose) nor a "
                     "measured duration, and a graph file needs one or the other: dump with "
                     "the verbose flag, or give --durations TRACE\n",
             file, nd->line, nd->col, wi.no_launch, ps_node_name (&g, wi.first_no_launch));
    rc = PS_EINVAL;
  }
  if (rc == 0) {
    write_ctx w = { &g, { 0, 0, 0, PS_NONE } };
    char err[512] = "";
    if (!out || strcmp (out, "-") == 0)
      rc = ps_file_write_stdout (write_graph, &w, err, sizeof err);
    else
      rc = ps_file_write_atomic (out, write_graph, &w, err, sizeof err);
    if (rc != 0)
      fprintf (stderr, "planscope-cli import: %s\n", err);
    ret = rc == 0 ? CLI_OK : CLI_FAILED;
    if (ret == CLI_OK && w.info.dropped_ns > 0) {
      char a[PS_FORMAT_MAX];
      fprintf (stderr,
               "%s: note: the graph leaves out the host's launch times and %s of measured "
               "delay, which the graph format cannot hold; plan, simulate or replay the trace "
               "itself to keep them\n",
               file, ps_format_duration (w.info.dropped_ns, a, sizeof a));
    }
    if (ret == CLI_OK && w.info.bridged > 0)
      fprintf (stderr,
               "%s: note: the graph leaves out %u empty or unmodelled nodes, which the graph "
               "format cannot hold; the order they gave is kept\n",
               file, w.info.bridged);
  }
  ps_trace_graph_info_free (&info);
  ps_graph_free (&g);
  return ret;
}
