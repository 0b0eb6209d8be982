/* cli-replay.c: `planscope-cli replay`: imports a trace as the graph that
 * replays it, simulates it with its recorded streams and holds the result
 * against what was measured (the replay document of spec/cli.md). */
#include "cli-commands.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-device.h"
#include "ps-exec-trace.h"
#include "ps-file.h"
#include "ps-format.h"
#include "ps-jsonw.h"
#include "ps-replay.h"

static const char usage[] =
  "Usage: planscope-cli replay TRACE [--json] [--gpu N] [--et ET] [--streams N]\n"
  "                            [--scale GLOB=FACTOR]... [--no-launch-overhead] [--timing]\n"
  "\n"
  "Imports a Chrome/Kineto trace (.json or .json.gz) as the graph that replays it\n"
  "(each GPU op with its measured duration, on its recorded stream, after what the\n"
  "trace says it waited for and not before its host launch), simulates it with its\n"
  "recorded streams, and compares with what was measured: the makespan error, each\n"
  "stream's busy time, the median error of the ops' starts, and the idle time no\n"
  "recorded dependency or launch explains, which the replay keeps as measured delay,\n"
  "by likely cause.\n"
  "\n"
  "  --json      print the replay document (planscope-replay)\n"
  "  --gpu N     the device of the trace to replay (default: the one with the most\n"
  "              GPU work)\n"
  "  --et ET     a PyTorch execution trace of the same run: the ops it links read and\n"
  "              write their operators' tensors (see `import --et`)\n"
  "  --streams N what if the planner chose the streams, up to N: each recorded\n"
  "              stream's order stays a dependency, except between ops --et links\n"
  "  --scale GLOB=FACTOR\n"
  "              what if kernels whose name matches GLOB (fnmatch) took FACTOR times\n"
  "              as long (up to 16, the first that matches counts)\n"
  "  --no-launch-overhead\n"
  "              what if the host held nothing back (no launch times, no launch\n"
  "              latency: what one CUDA graph of the whole run would give)\n"
  "With a what-if option the replay is of the changed run, and its makespan against\n"
  "the measured one says what the change would give.\n"
  "  --timing    wall time of the replay on stderr\n";

static void
write_json (const char *file, const ps_replay *r, bool no_launch, uint32_t streams, FILE *out)
{
  const char *base = strrchr (file, '/');
  base = base ? base + 1 : file;
  size_t n = strcspn (base, ".");
  char name[512];
  snprintf (name, sizeof name, "%.*s", (int) (n ? n : strlen (base)), base);
  fputs ("{\n  \"format\": \"planscope-replay\", \"version\": 1, \"trace\": ", out);
  ps_jsonw_string (out, name);
  fprintf (out, ", \"device\": %d,\n  \"gpu_ops\": %u, \"streams\": %u,\n", r->device,
           r->gpu_ops, r->n_streams);
  fputs ("  \"measured_makespan_ns\": ", out);
  ps_jsonw_number (out, round (r->measured_makespan_ns));
  fputs (", \"replayed_makespan_ns\": ", out);
  ps_jsonw_number (out, round (r->replayed_makespan_ns));
  fputs (",\n  \"makespan_error\": ", out);
  ps_jsonw_number (out, round (r->makespan_error * 1e7) / 1e7);
  fputs (",\n  \"streams_busy\": [", out);
  for (uint32_t i = 0; i < r->n_streams; i++) {
    fprintf (out, "%s{\"stream\": %lld, \"measured_ns\": ", i ? ", " : "",
             (long long) r->streams[i].id);
    ps_jsonw_number (out, round (r->streams[i].measured_ns));
    fputs (", \"replayed_ns\": ", out);
    ps_jsonw_number (out, round (r->streams[i].replayed_ns));
    fputs ("}", out);
  }
  fputs ("],\n  \"median_start_error_ns\": ", out);
  ps_jsonw_number (out, round (r->median_start_error_ns));
  fputs (",\n  \"unexplained_ns\": ", out);
  ps_jsonw_number (out, round (r->unexplained_ns));
  fputs (",\n  \"unexplained\": [", out);
  for (int c = 0; c < PS_IDLE_LAUNCH_LATENCY; c++) {
    fputs (c ? ", {\"cause\": " : "{\"cause\": ", out);
    ps_jsonw_string (out, ps_idle_cause_text ((ps_idle_cause) c));
    fputs (", \"ns\": ", out);
    ps_jsonw_number (out, round (r->unexplained_by[c]));
    fputs ("}", out);
  }
  fputs ("],\n  \"launch_latency_ns\": ", out);
  ps_jsonw_number (out, round (r->launch_latency_ns));
  if (r->what_if) {
    fprintf (out, ",\n  \"what_if\": {\"scaled_kernels\": %u, \"no_launch_overhead\": %s",
             r->scaled, no_launch ? "true" : "false");
    if (streams)
      fprintf (out, ", \"streams\": %u, \"streams_used\": %u, \"data_ordered_ops\": %u",
               streams, r->streams_used, r->et.linked);
    fputs (", \"measured_end_ns\": ", out);
    ps_jsonw_number (out, round (r->measured_end_ns));
    fputs (", \"what_if_end_ns\": ", out);
    ps_jsonw_number (out, round (r->replayed_end_ns));
    fputs ("}", out);
  }
  fputs ("\n}\n", out);
}

static void
write_text (const char *file, const ps_replay *r, bool no_launch, uint32_t streams, FILE *out)
{
  char a[PS_FORMAT_MAX], b[PS_FORMAT_MAX], c[PS_FORMAT_MAX];
  fprintf (out, "replay of %s (device %d", file, r->device);
  if (r->n_devices > 1)
    fprintf (out, " of %u", r->n_devices);
  fprintf (out, "): %u GPU ops on %u streams, %u cross-stream waits (%u inferred from the "
                "timing), %u with a host launch\n",
           r->gpu_ops, r->n_streams, r->waits + r->inferred, r->inferred, r->launches);
  if (r->what_if)
    fprintf (out, "  what-if       %u kernels scaled%s\n", r->scaled,
             no_launch ? ", no launch overhead" : "");
  if (streams)
    fprintf (out,
             "  streams       planned on up to %u (%u used); %u of %u ops ordered by their "
             "data, the rest by their recorded stream's order%s\n",
             streams, r->streams_used, r->et.linked, r->gpu_ops,
             r->et.linked ? "" : " (give --et to say which ops are independent)");
  fprintf (out, "  makespan      measured %s   %s %s   %s %+.3f%%\n",
           ps_format_duration (r->measured_makespan_ns, a, sizeof a),
           r->what_if ? "what-if" : "replayed",
           ps_format_duration (r->replayed_makespan_ns, b, sizeof b),
           r->what_if ? "change" : "error", 100 * r->makespan_error);
  if (r->what_if)
    fprintf (out, "  last op ends  measured %s   what-if %s after the first launch\n",
             ps_format_duration (r->measured_end_ns, a, sizeof a),
             ps_format_duration (r->replayed_end_ns, b, sizeof b));
  fprintf (out, "  op starts     median %s %s\n", r->what_if ? "shift" : "error",
           ps_format_duration (r->median_start_error_ns, a, sizeof a));
  double share = r->measured_makespan_ns > 0 ? r->unexplained_ns / r->measured_makespan_ns : 0;
  fprintf (out, "  unexplained   %s (%.1f%% of the makespan), kept as measured delay\n",
           ps_format_duration (r->unexplained_ns, a, sizeof a), 100 * share);
  for (int k = 0; k < PS_IDLE_LAUNCH_LATENCY; k++)
    if (r->unexplained_by[k] > 0)
      fprintf (out, "    %-30s %s\n", ps_idle_cause_text ((ps_idle_cause) k),
               ps_format_duration (r->unexplained_by[k], a, sizeof a));
  if (r->launch_latency_ns > 0)
    fprintf (out, "  launch latency %s of the makespan: the GPU starting launched work\n",
             ps_format_duration (r->launch_latency_ns, a, sizeof a));
  if (r->dropped)
    fprintf (out, "  %u recorded waits the measurement contradicts were left out\n", r->dropped);
  fprintf (out, "\n  %-12s %14s %14s %9s\n", "stream", "busy measured", "replayed", "error");
  for (uint32_t i = 0; i < r->n_streams; i++) {
    const ps_replay_stream *s = &r->streams[i];
    double e = s->measured_ns > 0 ? (s->replayed_ns - s->measured_ns) / s->measured_ns : 0;
    snprintf (c, sizeof c, "%lld", (long long) s->id);
    fprintf (out, "  %-12s %14s %14s %+8.3f%%\n", c,
             ps_format_duration (s->measured_ns, a, sizeof a),
             ps_format_duration (s->replayed_ns, b, sizeof b), 100 * e);
  }
}

int
cli_replay_main (int argc, char **argv)
{
  const char *cmd = "replay";
  const char *file = NULL, *gpu = NULL, *et = NULL, *streams = NULL;
  bool json = false, timing = false, no_launch = false;
  ps_replay_options o;
  ps_replay_options_init (&o);
  const char *scales[PS_REPLAY_MAX_SCALES];
  uint32_t n_scales = 0;
  const cli_opt opts[] = {
    { "--gpu", NULL, &gpu, NULL },
    { "--scale", NULL, NULL, NULL, scales, &n_scales, PS_REPLAY_MAX_SCALES },
    { "--no-launch-overhead", NULL, NULL, &no_launch },
    { "--json", NULL, NULL, &json },
    { "--timing", NULL, NULL, &timing },
    { "--et", NULL, &et, NULL },
    { "--streams", NULL, &streams, NULL },
  };
  int parsed = cli_parse_trace_command (cmd, usage, argc, argv, &file, opts,
                                        sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  o.no_launch_overhead = no_launch;
  for (uint32_t k = 0; k < n_scales; k++) {
    const char *val = scales[k], *eq = strrchr (val, '=');
    char *end = NULL;
    double f = eq ? strtod (eq + 1, &end) : NAN;
    if (!eq || eq == val || !end || *end || !(f >= 0 && f <= 1e6)) {
      for (uint32_t j = 0; j < o.n_scales; j++)
        free ((char *) o.scale[j].glob);
      return cli_usage_error (cmd, "--scale needs GLOB=FACTOR with FACTOR from 0 to 1e6, "
                                   "not '%s'", val);
    }
    char *glob = strndup (val, (size_t) (eq - val));
    if (!glob)
      return CLI_FAILED;
    o.scale[o.n_scales].glob = glob;
    o.scale[o.n_scales++].factor = f;
  }
  uint32_t dev;
  if (gpu && cli_parse_u32 (gpu, 0, 1023, &dev) != 0)
    return cli_usage_error (cmd, "--gpu needs a device number from 0 to 1023, not '%s'", gpu);
  if (gpu)
    o.trace.device = (int32_t) dev;
  if (streams && cli_parse_u32 (streams, 1, PS_MAX_STREAMS, &o.streams) != 0) {
    for (uint32_t k = 0; k < o.n_scales; k++)
      free ((char *) o.scale[k].glob);
    return cli_usage_error (cmd, "--streams needs a count from 1 to %d, not '%s'",
                            PS_MAX_STREAMS, streams);
  }
  ps_exec_trace exec;
  memset (&exec, 0, sizeof exec);
  if (et && cli_load_exec_trace (&exec, et) != CLI_OK) {
    for (uint32_t k = 0; k < o.n_scales; k++)
      free ((char *) o.scale[k].glob);
    return CLI_FAILED;
  }
  if (et)
    o.trace.et = &exec;

  ps_diag diag;
  ps_diag_init (&diag, file);
  double t0 = ps_clock_now ();
  ps_file_whole w;
  int rc = ps_file_read_whole (file, (size_t) 4 << 30, &w, &diag);
  ps_replay r;
  memset (&r, 0, sizeof r);
  if (rc == 0)
    rc = ps_replay_trace (w.data, w.len, file, &o, ps_device_builtin (0), &r, &diag);
  rc = ps_file_whole_end (&w, rc);
  if (rc == 0 && et)
    cli_et_summary (et, r.gpu_ops, &r.et, &exec);
  ps_exec_trace_free (&exec);
  if (timing)
    cli_timing ("replay", ps_clock_now () - t0);
  ps_diag_print (&diag, stderr);
  ps_diag_free (&diag);
  int ret = CLI_FAILED;
  if (rc == 0) {
    if (json)
      write_json (file, &r, o.no_launch_overhead, o.streams, stdout);
    else
      write_text (file, &r, o.no_launch_overhead, o.streams, stdout);
    ret = cli_finish_stdout ();
  }
  ps_replay_free (&r);
  for (uint32_t k = 0; k < o.n_scales; k++)
    free ((char *) o.scale[k].glob);
  return ret;
}
