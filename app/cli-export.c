/* cli-export.c: `planscope-cli export`: writes a view of a graph's plan
 * (DAG, plan, timeline, memory map) as DOT, SVG, PNG, JSON or a Chrome
 * trace; the work is in render/ps-export.c. */
#include "cli-commands.h"
#include "cli.h"

#include <string.h>

#include "ps-export.h"

static const char usage[] =
  "Usage: planscope-cli export FILE --view dag|plan|timeline|memory\n"
  "                            --format dot|svg|png|json|trace -o OUT [PLAN-OPTIONS]\n"
  "\n"
  "Writes a view of FILE's plan (planscope JSON or a cudaGraphDebugDotPrint dump).\n"
  "OUT is written completely or not at all; '-o -' writes to standard output.\n"
  "\n"
  "  --view V       dag (default): the graph, coloured, fused groups framed, critical\n"
  "                 path in red; plan: steps per stream with event edges; timeline:\n"
  "                 the simulated run per stream, every wait hatched with its cause;\n"
  "                 memory: pool offsets over time.  Durations, streams and the\n"
  "                 critical path are those of the simulated run in every view\n"
  "  --format F     dot, svg, png, json (dag: layout, plan: plan document, timeline:\n"
  "                 timeline document, memory: buffers and lifetimes) or trace (Chrome\n"
  "                 trace of the simulated run); default: from OUT's extension\n"
  "  -o, --output OUT  the file to write\n"
  "  --color C      dag, plan and timeline: kind (default), stream, group (fused\n"
  "                 groups) or duration\n"
  "  --theme T      light (default) or dark pictures\n"
  "  --device NAME  device profile to plan for, and for durations and the\n"
  "                 simulation (default: the graph's \"device\", else h200)\n"
  "  --assume N=B   model branch B (then, else or both) of conditional N\n"
  "  --max-boxes N  dag and plan: above N boxes draw an overview (default 800)\n"
  "  --streams N    use at most N streams (1-64, default 4); auto: the fewest, up to\n"
  "                 8, whose plan is within 1% of the fastest on any of those counts\n"
  "  --fusion F     auto (default): fuse element-wise kernels, keeping back groups the\n"
  "                 plan simulates faster without; all: every legal group; off: none\n"
  "  --no-fusion    do not fuse element-wise kernels (--fusion off)\n"
  "  --timing       wall time of each stage on stderr\n"
  "  -h, --help     show this help\n"
  "\n"
  "Large graphs: above 1000 nodes, fused groups and straight chains are drawn as one\n"
  "box each; above --max-boxes boxes, one box per stream and band of levels.\n";

int
cli_export_main (int argc, char **argv)
{
  const char *cmd = "export";
  cli_plan_args a;
  cli_plan_args_init (&a);
  ps_export_options eo;
  ps_export_options_init (&eo);
  const char *view = NULL, *format = NULL, *out = NULL, *color = NULL;
  const char *max_boxes = NULL, *theme = NULL;
  const cli_opt opts[] = { { "--view", NULL, &view, NULL },    { "--format", NULL, &format, NULL },
                           { "-o", "--output", &out, NULL },    { "--color", NULL, &color, NULL },
                           { "--max-boxes", NULL, &max_boxes, NULL },
                           { "--theme", NULL, &theme, NULL } };
  int parsed = cli_parse_command (cmd, usage, argc, argv, &a, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (!out)
    return cli_usage_error (cmd, "missing -o OUT");
  if (view && ps_export_view_parse (view, &eo.view) < 0)
    return cli_usage_error (cmd, "--view must be dag, plan, timeline or memory, not '%s'", view);
  if (format) {
    if (ps_export_format_parse (format, &eo.format) < 0)
      return cli_usage_error (cmd, "--format must be dot, svg, png, json or trace, not '%s'",
                              format);
  } else if (ps_export_format_from_path (out, &eo.format) < 0) {
    return cli_usage_error (cmd, "missing --format (and '%s' does not say which)", out);
  }
  if (color && ps_color_by_parse (color, &eo.view_options.color) < 0)
    return cli_usage_error (cmd, "--color must be kind, stream, group or duration, not '%s'",
                            color);
  if (theme && strcmp (theme, "light") != 0 && strcmp (theme, "dark") != 0)
    return cli_usage_error (cmd, "--theme must be light or dark, not '%s'", theme);
  if (theme)
    eo.view_options.theme = strcmp (theme, "dark") == 0 ? PS_THEME_DARK : PS_THEME_LIGHT;
  if (max_boxes && cli_parse_u32 (max_boxes, 16, 1000000, &eo.view_options.max_boxes) != 0)
    return cli_usage_error (cmd, "--max-boxes needs a whole number from 16 to 1000000, not '%s'",
                            max_boxes);
  if (max_boxes && eo.view_options.detail_boxes > eo.view_options.max_boxes)
    eo.view_options.detail_boxes = eo.view_options.max_boxes;

  ps_graph g;
  ps_plan p;
  ps_graph_init (&g);
  memset (&p, 0, sizeof p);
  if (cli_load_and_plan (&g, &p, &a) != CLI_OK) {
    ps_plan_free (&p);
    ps_graph_free (&g);
    return CLI_FAILED;
  }
  eo.device = &a.device;
  char err[512];
  ps_export_stats st;
  double t0 = ps_clock_now ();
  int rc = ps_export_write (&p, &eo, out, &st, err, sizeof err);
  if (a.timing) {
    if (st.simulate_s > 0)
      cli_timing ("simulate", st.simulate_s);
    if (st.build_s > 0)
      cli_timing ("view", st.build_s);
    if (st.layout_s > 0)
      cli_timing ("layout", st.layout_s);
    cli_timing ("write", st.write_s);
    cli_timing ("export", ps_clock_now () - t0);
    if (st.boxes)
      fprintf (stderr, "timing: %u boxes\n", st.boxes);
  }
  if (rc < 0)
    fprintf (stderr, "planscope-cli export: %s\n", err[0] ? err : ps_strerror (rc));
  ps_plan_free (&p);
  ps_graph_free (&g);
  return rc < 0 ? CLI_FAILED : CLI_OK;
}
