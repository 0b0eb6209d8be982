/* cli-analyze.c: `planscope-cli analyze`: reads a Chrome/Kineto trace and
 * reports per-stream busy, stalled and idle time, stream waits and stalls
 * with what they waited for, the critical path and what would help. */
#include "cli-commands.h"
#include "cli.h"

#include <string.h>

#include "ps-diagnose.h"
#include "ps-file.h"
#include "ps-timeline-output.h"
#include "ps-trace-export.h"
#include "ps-trace-import.h"

static const char usage[] =
  "Usage: planscope-cli analyze TRACE [--json] [--trace OUT] [--timing]\n"
  "\n"
  "Reads a Chrome/Kineto trace (PyTorch profiler output or planscope's own --trace\n"
  "output; .json or .json.gz) and reports per-stream busy, stalled and idle time, the\n"
  "cross-stream stalls with what they waited for, the critical path and what would\n"
  "help.\n"
  "\n"
  "  --json        print the timeline document (planscope-timeline, source imported)\n"
  "  --trace OUT   also write the analysed timeline as a Chrome trace, critical path\n"
  "                marked\n"
  "  --timing      wall time of reading and analysing on stderr\n";

int
cli_analyze_main (int argc, char **argv)
{
  const char *cmd = "analyze";
  const char *file = NULL, *trace = NULL;
  bool json = false, timing = false;
  const cli_opt opts[] = { { "--trace", NULL, &trace, NULL },
                           { "--json", NULL, NULL, &json },
                           { "--timing", NULL, NULL, &timing } };
  int parsed = cli_parse_trace_command (cmd, usage, argc, argv, &file, opts,
                                        sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;

  ps_timeline tl;
  ps_diagnosis dg;
  ps_trace_stats st;
  ps_diag diag;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  memset (&dg, 0, sizeof dg);
  ps_diag_init (&diag, file);
  int rc = CLI_FAILED;
  double t0 = ps_clock_now ();
  int r = ps_trace_import_file (&tl, file, &st, &diag);
  if (timing)
    cli_timing ("import", ps_clock_now () - t0);
  ps_diag_print (&diag, stderr);
  if (r < 0) {
    if (diag.errors == 0)
      fprintf (stderr, "%s: error: %s\n", file, ps_strerror (r));
    goto out;
  }
  if (tl.n_spans == 0)
    fprintf (stderr, "%s: warning: no GPU work (kernel, gpu_memcpy, gpu_memset events) found\n",
             file);
  double t1 = ps_clock_now ();
  r = ps_diagnose (&dg, &tl);
  if (timing)
    cli_timing ("diagnose", ps_clock_now () - t1);
  if (r < 0) {
    fprintf (stderr, "%s: error: cannot analyse the trace: %s\n", file, ps_strerror (r));
    goto out;
  }
  if (trace && cli_write_trace (cmd, trace, &tl, &dg) != CLI_OK)
    goto out;
  if (json) {
    ps_timeline_write_json (&tl, &dg, stdout);
  } else {
    printf ("%s: %llu events; GPU work: %u kernels, %u memcpys, %u memsets, %u other; "
            "%u stream waits, %u host synchronisations\n",
            file, (unsigned long long) st.events, st.kernels, st.memcpys, st.memsets, st.others,
            st.stream_waits, st.host_syncs);
    ps_timeline_write_text (&tl, &dg, stdout);
  }
  rc = cli_finish_stdout ();
out:
  ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  ps_diag_free (&diag);
  return rc;
}
