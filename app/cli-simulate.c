/* cli-simulate.c: `planscope-cli simulate`: runs a plan on the modelled
 * GPU and reports the timeline, its stalls, critical path and what would
 * help; `--sweep-streams A..B` prints the makespan per stream count with
 * and without fusion instead. */
#include "cli-commands.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "ps-diagnose.h"
#include "ps-file.h"
#include "ps-format.h"
#include "ps-sim.h"
#include "ps-timeline-output.h"
#include "ps-trace-export.h"

static const char usage[] =
  "Usage: planscope-cli simulate FILE [PLAN-OPTIONS] [--device NAME] [--json] [--trace OUT]\n"
  "                              [--sweep-streams A..B]\n"
  "\n"
  "Runs the plan of FILE on a modelled GPU and reports the makespan, per-stream busy,\n"
  "stalled and idle time, every cross-stream stall with what it waited for and why,\n"
  "the critical path and what would help.\n"
  "\n"
  "  --streams N          use at most N streams (1-64, default 4); auto: the\n"
  "                       fewest, up to 8, within 1% of the fastest plan\n"
  "  --fusion F           auto (default): fuse element-wise kernels, keeping back\n"
  "                       groups the plan simulates faster without; all: every\n"
  "                       legal group; off: none\n"
  "  --no-fusion          do not fuse element-wise kernels (--fusion off)\n"
  "  --timing             per-pass wall time on stderr\n"
  "  --device NAME        device profile to plan for and simulate: h200, a100, rtx4090,\n"
  "                       or a .json profile; default: the graph's \"device\", else h200\n"
  "  --assume N=B         model branch B (then, else or both) of conditional N\n"
  "  --json               print the timeline document (planscope-timeline)\n"
  "  --trace OUT          also write a Chrome trace (opens in Perfetto)\n"
  "  --sweep-streams A..B print the makespan for A to B streams, with and without\n"
  "                       fusion (with --json: a planscope-sweep document); counts\n"
  "                       below what the graph's pins need are skipped\n";

static int
parse_range (const char *s, uint32_t *a, uint32_t *b)
{
  const char *dots = strstr (s, "..");
  char left[16];
  if (!dots || (size_t) (dots - s) >= sizeof left)
    return -1;
  memcpy (left, s, (size_t) (dots - s));
  left[dots - s] = 0;
  if (cli_parse_u32 (left, 1, PS_MAX_STREAMS, a) != 0
      || cli_parse_u32 (dots + 2, 1, PS_MAX_STREAMS, b) != 0 || *a > *b)
    return -1;
  return 0;
}

/* The makespan of g planned with o, on o's device, or a negative code
 * (reported, but for PS_EPIN: a count below what the pins need, which the
 * sweep skips). */
static int
sweep_point (const ps_graph *g, const ps_plan_options *o, double *ms)
{
  ps_plan p;
  ps_diag diag;
  ps_diag_init (&diag, g->path ? g->path : "<graph>");
  int rc = ps_plan_build (&p, g, o, &diag);
  if (rc < 0) {
    if (rc != PS_EPIN)
      ps_diag_print (&diag, stderr);
    ps_diag_free (&diag);
    return rc;
  }
  ps_diag_free (&diag);
  rc = ps_plan_makespan (&p, ms); /* the planner's own simulation, as a rule */
  ps_plan_free (&p);
  if (rc < 0)
    fprintf (stderr, "planscope-cli simulate: cannot simulate: %s\n", ps_strerror (rc));
  return rc;
}

/* The sweep: a row per stream count from lo to hi, fused (as the options
 * say, auto unless --fusion all) and unfused; counts below what the
 * graph's pins need are skipped and said so. */
static int
sweep (const ps_graph *g, const cli_plan_args *a, const ps_device *dev, uint32_t lo,
       uint32_t hi, bool json)
{
  double base = 0;
  uint32_t first = 0, skipped = 0;
  if (json)
    printf ("{\n  \"format\": \"planscope-sweep\", \"version\": 1, \"device\": \"%s\",\n"
            "  \"rows\": [", dev->name);
  else
    printf ("makespan on %s (%s)\n%-8s %14s %14s %10s\n", dev->name, dev->display_name,
            "streams", "fused", "unfused", "speed-up");
  for (uint32_t n = lo; n <= hi; n++) {
    double ms[2];
    int rc = 0;
    for (int f = 0; f < 2 && rc == 0; f++) {
      ps_plan_options o = a->options;
      o.streams = n;
      o.streams_auto = false;
      o.fusion = f == 0 && a->options.fusion;
      rc = sweep_point (g, &o, &ms[f]);
    }
    if (rc == PS_EPIN) {
      skipped++;
      continue;
    }
    if (rc < 0)
      return CLI_FAILED;
    if (!first)
      base = ms[0], first = n;
    double up = ms[0] > 0 ? base / ms[0] : 1;
    if (json)
      printf ("%s\n    {\"streams\": %u, \"fused_ns\": %.0f, \"unfused_ns\": %.0f, "
              "\"speedup\": %.3f}", n == first ? "" : ",", n, ms[0], ms[1], up);
    else {
      char f0[PS_FORMAT_MAX], f1[PS_FORMAT_MAX];
      printf ("%-8u ", n);
      ps_format_column (stdout, ps_format_duration (ms[0], f0, sizeof f0), 14);
      putchar (' ');
      ps_format_column (stdout, ps_format_duration (ms[1], f1, sizeof f1), 14);
      printf (" %9.2fx\n", up);
    }
  }
  if (json) {
    printf ("\n  ]");
    if (skipped) {
      printf (",\n  \"skipped\": [");
      for (uint32_t n = lo; n < lo + skipped; n++)
        printf ("%s%u", n == lo ? "" : ", ", n);
      printf ("]");
    }
    printf ("\n}\n");
  } else {
    if (skipped)
      printf ("%u to %u streams skipped: the graph pins nodes to streams up to %u\n", lo,
              lo + skipped - 1, ps_graph_pinned_streams (g) - 1);
    if (first)
      printf ("speed-up: fused makespan against %u stream%s\n", first, first == 1 ? "" : "s");
  }
  return CLI_OK;
}

/* Measures "what would help" for simulated work: re-simulates with every
 * launch of each suggested work on the critical path at half its time. */
static void
refine_help (ps_sim *s, const ps_timeline *tl, ps_diagnosis *dg)
{
  uint32_t *steps = malloc (((size_t) dg->n_critical + 1) * sizeof *steps);
  if (!steps)
    return;
  for (uint32_t i = 0; i < dg->n_help; i++) {
    ps_help *h = &dg->help[i];
    if (h->kind != PS_HELP_SHORTEN || h->span >= tl->n_spans)
      continue;
    uint64_t key = ps_diagnose_work_key (tl, h->span);
    uint32_t n = 0;
    for (uint32_t k = 0; k < dg->n_critical; k++) {
      uint32_t x = dg->critical[k];
      if (tl->spans[x].step != PS_NONE && ps_diagnose_work_key (tl, x) == key)
        steps[n++] = tl->spans[x].step;
    }
    double saved;
    if (n && ps_sim_gain (s, steps, n, 0.5, tl->makespan_ns, &saved) == 0)
      h->gain_ns = saved > 0 ? saved : 0;
  }
  free (steps);
}

int
cli_simulate_main (int argc, char **argv)
{
  const char *cmd = "simulate";
  cli_plan_args a;
  cli_plan_args_init (&a);
  const char *trace = NULL, *range = NULL;
  bool json = false;
  const cli_opt opts[] = { { "--trace", NULL, &trace, NULL },
                           { "--sweep-streams", NULL, &range, NULL },
                           { "--json", NULL, NULL, &json } };
  int parsed = cli_parse_command (cmd, usage, argc, argv, &a, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  uint32_t lo = 0, hi = 0;
  if (range && trace)
    return cli_usage_error (cmd, "--trace writes one simulation; leave it out with --sweep-streams");
  if (range && parse_range (range, &lo, &hi) != 0)
    return cli_usage_error (cmd, "--sweep-streams needs A..B with 1 <= A <= B <= %d, not '%s'",
                            PS_MAX_STREAMS, range);

  ps_graph g;
  ps_graph_init (&g);
  ps_plan p;
  memset (&p, 0, sizeof p);
  int rc = CLI_FAILED;
  /* The planner schedules for the device simulated: --device, else the
   * graph's, else the default. */
  if (range) {
    if (cli_load_graph (&g, a.file, a.timing) != CLI_OK || cli_plan_device (&a, &g) != CLI_OK)
      goto out;
    rc = sweep (&g, &a, &a.device, lo, hi, json);
    if (rc == CLI_OK)
      rc = cli_finish_stdout ();
    goto out;
  }
  if (cli_load_and_plan (&g, &p, &a) != CLI_OK)
    goto out;
  const ps_device *dev = &a.device;

  double t0 = ps_clock_now ();
  ps_sim s;
  ps_timeline tl;
  ps_diagnosis dg;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  memset (&dg, 0, sizeof dg);
  /* The run is the planner's own (it planned for dev); the simulator is
   * still set up for what would help. */
  int r = ps_sim_init (&s, &p, dev);
  if (r == 0)
    r = ps_plan_take_run (&p, &tl);
  if (a.timing)
    cli_timing ("simulate", ps_clock_now () - t0);
  if (r == 0) {
    double t1 = ps_clock_now ();
    r = ps_diagnose (&dg, &tl);
    if (r == 0)
      refine_help (&s, &tl, &dg);
    if (a.timing)
      cli_timing ("diagnose", ps_clock_now () - t1);
  }
  if (r < 0) {
    fprintf (stderr, "%s: error: cannot simulate the plan: %s\n", a.file, ps_strerror (r));
  } else if (!trace || cli_write_trace ("simulate", trace, &tl, &dg) == CLI_OK) {
    if (json)
      ps_timeline_write_json (&tl, &dg, stdout);
    else
      ps_timeline_write_text (&tl, &dg, stdout);
    rc = cli_finish_stdout ();
  }
  ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  ps_sim_free (&s);
out:
  ps_plan_free (&p);
  ps_graph_free (&g);
  return rc;
}
