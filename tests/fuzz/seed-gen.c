/* seed-gen.c: writes the generated seeds of the fuzz corpora.
 *
 *   seed-gen GRAPHDIR TRACEDIR [GRAPH...]
 *
 * GRAPHDIR receives graphs of every shape of ps-gen.h (the generator behind
 * `planscope-cli gen`) at a few small sizes and seeds, with and without
 * the extras (events, barriers, conditionals, pins).  TRACEDIR receives
 * planscope's own Chrome traces (what `simulate --trace` writes) of the
 * smaller generated graphs and of every GRAPH given, each prefixed with the
 * mode byte of the trace harness (0: read from memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-device.h"
#include "ps-diagnose.h"
#include "ps-gen.h"
#include "ps-import.h"
#include "ps-plan.h"
#include "ps-sim.h"
#include "ps-trace-export.h"

static int
write_trace (const ps_graph *g, const char *path)
{
  ps_device dev = *ps_device_builtin (0);
  ps_plan p;
  ps_diag d;
  ps_diag_init (&d, path);
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.streams = 8;
  int rc = ps_plan_build (&p, g, &o, &d);
  ps_diag_free (&d);
  if (rc != 0)
    return 0; /* e.g. a pin that 8 streams cannot honour: no seed */
  ps_timeline tl;
  ps_diagnosis dg;
  memset (&dg, 0, sizeof dg);
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  rc = ps_simulate (&p, &dev, &tl);
  if (rc == 0)
    rc = ps_diagnose (&dg, &tl);
  if (rc == 0) {
    FILE *f = fopen (path, "wb");
    if (!f || fputc (0, f) == EOF || ps_trace_write (&tl, &dg, f) != 0 || fclose (f) != 0)
      rc = PS_EIO;
  }
  ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  return rc;
}

static int
load_and_trace (const char *graph_path, const char *trace_path)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, graph_path);
  int rc = ps_import_graph_file (&g, graph_path, NULL, &d);
  ps_diag_free (&d);
  if (rc != 0)
    return 0; /* not a loadable graph: no seed */
  rc = write_trace (&g, trace_path);
  ps_graph_free (&g);
  return rc;
}

int
main (int argc, char **argv)
{
  if (argc < 3) {
    fprintf (stderr, "usage: seed-gen GRAPHDIR TRACEDIR [GRAPH...]\n");
    return 2;
  }
  static const uint32_t sizes[] = { 1, 7, 24, 60, 150 };
  char path[4096], tpath[4096];
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
      for (int extras = 0; extras < 2; extras++) {
        ps_gen_options o;
        ps_gen_options_init (&o);
        o.shape = (ps_gen_shape) shape;
        o.nodes = sizes[i];
        o.seed = 1 + i + (uint64_t) extras * 100;
        o.events = o.barriers = o.conditionals = o.pins = extras != 0;
        const char *name = ps_gen_shape_name (o.shape);
        snprintf (path, sizeof path, "%s/gen-%s-%u%s.json", argv[1], name, o.nodes,
                  extras ? "-extras" : "");
        FILE *f = fopen (path, "w");
        if (!f || ps_gen_write (&o, f) != 0 || fclose (f) != 0) {
          fprintf (stderr, "seed-gen: cannot write %s\n", path);
          return 1;
        }
        snprintf (tpath, sizeof tpath, "%s/gen-%s-%u%s.trace", argv[2], name, o.nodes,
                  extras ? "-extras" : "");
        if (o.nodes <= 60 && load_and_trace (path, tpath) != 0) {
          fprintf (stderr, "seed-gen: cannot write %s\n", tpath);
          return 1;
        }
      }
  for (int i = 3; i < argc; i++) {
    const char *base = strrchr (argv[i], '/');
    snprintf (tpath, sizeof tpath, "%s/%s.trace", argv[2], base ? base + 1 : argv[i]);
    if (load_and_trace (argv[i], tpath) != 0) {
      fprintf (stderr, "seed-gen: cannot write %s\n", tpath);
      return 1;
    }
  }
  return 0;
}
