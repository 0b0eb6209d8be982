/* fuzz-pipeline.c: libFuzzer harness for everything after loading: a graph
 * that loads (JSON or DOT) is analysed, planned with several option
 * combinations, checked by the independent verifier, written as plan JSON
 * and text, simulated, diagnosed and exported as a Chrome trace, which must
 * import again.
 *
 * A plan the verifier rejects is a planner bug and aborts like a crash; so
 * does a pin error on a graph without pins, a non-finite makespan, or a
 * trace export that planscope's own importer refuses. */
#include "fuzz-harness.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "ps-analysis.h"
#include "ps-device.h"
#include "ps-diagnose.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "ps-plan-output.h"
#include "ps-plan.h"
#include "ps-pool-peak.h"
#include "ps-sim.h"
#include "ps-timeline-output.h"
#include "ps-trace-export.h"
#include "ps-trace-import.h"
#include "ps-verify.h"

/* Bigger graphs are loaded but not planned, to keep executions fast. */
#define PIPELINE_MAX_NODES 4096

static const ps_device *
device (void)
{
  for (size_t i = 0; i < ps_device_builtin_count (); i++)
    if (strcmp (ps_device_builtin (i)->name, PS_DEVICE_DEFAULT) == 0)
      return ps_device_builtin (i);
  return ps_device_builtin (0);
}

static void
report (void *ctx, const char *message)
{
  (void) ctx;
  fprintf (stderr, "verify: %s\n", message);
}

static void
check_plan (const ps_plan *p, const ps_graph *g)
{
  FUZZ_CHECK (p->streams_used <= p->options.streams, "%u streams used, %u allowed",
              p->streams_used, p->options.streams);
  size_t bad = ps_plan_verify (p, report, NULL, 10);
  FUZZ_CHECK (bad == 0, "the verifier found %zu violations in a plan of %u nodes "
              "(streams %u, fusion %d)", bad, g->n_nodes, p->options.streams, p->options.fusion);
  for (uint32_t b = 0; b < g->n_buffers; b++)
    if (!(g->buffers[b].flags & PS_BUF_EXTERNAL))
      FUZZ_CHECK (p->offsets[b] <= p->pool_bytes && g->buffers[b].bytes
                  <= p->pool_bytes - p->offsets[b], "buffer %u outside the pool", b);
  ps_pool_peak pk;
  FUZZ_CHECK (ps_pool_peak_of (p, &pk) == 0, "no peak for a plan of %u nodes", g->n_nodes);
  FUZZ_CHECK (p->pool_bytes >= pk.bytes, "pool %llu under its peak %llu",
              (unsigned long long) p->pool_bytes, (unsigned long long) pk.bytes);
}

/* Simulates, diagnoses, writes the reports and the trace, and imports the
 * trace again. */
static void
simulate (const ps_plan *p)
{
  ps_sim s;
  ps_timeline tl;
  ps_diagnosis dg;
  memset (&dg, 0, sizeof dg);
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  int rc = ps_sim_init (&s, p, device ());
  FUZZ_CHECK (rc == 0 || rc == PS_ENOMEM, "ps_sim_init: %s", ps_strerror (rc));
  if (rc == 0) {
    double ms = -1;
    rc = ps_sim_run (&s, &tl, &ms);
    FUZZ_CHECK (rc == 0 || rc == PS_ENOMEM, "ps_sim_run: %s", ps_strerror (rc));
  }
  if (rc == 0) {
    fuzz_check_timeline (&tl);
    rc = ps_diagnose (&dg, &tl);
    FUZZ_CHECK (rc == 0 || rc == PS_ENOMEM, "ps_diagnose: %s", ps_strerror (rc));
  }
  if (rc == 0) {
    if (dg.n_critical) {
      uint32_t step = tl.spans[dg.critical[0]].step;
      double saved;
      if (step != PS_NONE)
        ps_sim_gain (&s, &step, 1, 0.5, tl.makespan_ns, &saved);
    }
    ps_timeline_write_json (&tl, &dg, ps_fuzz_devnull ());
    FUZZ_CHECK_TEXT_OUTPUT ("simulate text", ps_timeline_write_text (&tl, &dg, out));

    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream (&buf, &len);
    FUZZ_CHECK (mem != NULL, "open_memstream");
    rc = ps_trace_write (&tl, &dg, mem);
    FUZZ_CHECK (fclose (mem) == 0 && rc == 0, "ps_trace_write: %s", ps_strerror (rc));
    ps_timeline back;
    ps_timeline_init (&back, PS_TL_IMPORTED);
    ps_diag d;
    ps_diag_init (&d, "exported-trace.json");
    rc = ps_trace_import_mem (&back, buf, len, NULL, &d);
    if (rc != 0)
      ps_diag_print (&d, stderr);
    FUZZ_CHECK (rc == 0, "planscope cannot read its own trace: %s", ps_strerror (rc));
    fuzz_check_timeline (&back);
    ps_diag_free (&d);
    ps_timeline_free (&back);
    free (buf);
  }
  ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  ps_sim_free (&s);
}

int
ps_fuzz_pipeline (const uint8_t *data, size_t size)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "fuzz.json");
  int rc = ps_import_graph_mem (&g, (const char *) data, size, "fuzz.json", &d);
  ps_diag_free (&d);
  if (rc != 0)
    return 0;
  if (g.n_nodes > PIPELINE_MAX_NODES) {
    ps_graph_free (&g);
    return 0;
  }
  fuzz_check_graph (&g);
  int32_t max_pin = -1;
  for (uint32_t v = 0; v < g.n_nodes; v++)
    if (g.nodes[v].stream > max_pin)
      max_pin = g.nodes[v].stream;

  ps_analysis a;
  rc = ps_analysis_run (&a, &g, NULL);
  FUZZ_CHECK (rc == 0 || rc == PS_ENOMEM, "ps_analysis_run: %s", ps_strerror (rc));
  if (rc == 0) {
    FUZZ_CHECK (a.n_critical >= 1 && a.n_critical <= g.n_nodes, "critical path of %u nodes",
                a.n_critical);
    FUZZ_CHECK (isfinite (a.length_ns) && a.length_ns >= 0, "critical path length %g",
                a.length_ns);
    ps_analysis_free (&a);
  }

  /* Option combinations: the default, one stream unfused, and one picked
   * by the input's size. */
  uint32_t h = (uint32_t) size * 2654435761u;
  const ps_plan_options combos[] = {
    { .streams = 4, .fusion = true },
    { .streams = 1, .fusion = false },
    { .streams = 2 + (h >> 8) % (PS_MAX_STREAMS - 1), .fusion = (h >> 4) & 1 },
  };
  for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++) {
    ps_plan p;
    ps_diag_init (&d, "fuzz.json");
    rc = ps_plan_build (&p, &g, &combos[i], &d);
    /* The only refusal a loaded graph may get: a pin beyond the streams. */
    bool expected = rc == 0 || rc == PS_ENOMEM
                    || (rc == PS_EPIN && max_pin >= (int32_t) combos[i].streams);
    if (!expected)
      ps_diag_print (&d, stderr);
    FUZZ_CHECK (expected, "ps_plan_build (streams %u, fusion %d): %s", combos[i].streams,
                combos[i].fusion, ps_strerror (rc));
    FUZZ_CHECK (rc == 0 || d.errors > 0, "ps_plan_build failed without a message");
    ps_diag_free (&d);
    if (rc == 0) {
      check_plan (&p, &g);
      ps_plan_write_json (&p, ps_fuzz_devnull ());
      FUZZ_CHECK_TEXT_OUTPUT ("plan text", ps_plan_write_text (&p, out));
      simulate (&p);
    }
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
  return 0;
}

#ifndef PS_FUZZ_NO_MAIN
int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return ps_fuzz_pipeline (data, size);
}
#endif
