/* ps-test-sim.h: helpers shared by test-sim.c and test-trace.c: graphs from
 * JSON text or the generator, planned and simulated in one call. */
#ifndef PS_TEST_SIM_H
#define PS_TEST_SIM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-diagnose.h"
#include "ps-gen.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "ps-plan.h"
#include "ps-sim.h"
#include "ps-test-gen.h"

static inline const char *
ts_source_root (void)
{
  const char *r = getenv ("PS_SOURCE_ROOT");
  return r && *r ? r : PS_TEST_SOURCE_ROOT;
}

/* The summary's path-only diagnosis of tl (ps_diagnose_path) agrees with
 * the whole one, dg, on every span's bound and predecessor and on the
 * critical path: the plan summary and every view show the same path. */
static inline void
ts_check_path_diagnosis (const ps_timeline *tl, const ps_diagnosis *dg)
{
  ps_diagnosis path;
  assert_int_equal (ps_diagnose_path (&path, tl), 0);
  for (uint32_t x = 0; x < tl->n_spans; x++) {
    assert_int_equal (path.bound[x], dg->bound[x]);
    assert_int_equal (path.pred[x], dg->pred[x]);
  }
  assert_int_equal (path.n_critical, dg->n_critical);
  if (dg->n_critical)
    assert_memory_equal (path.critical, dg->critical, dg->n_critical * sizeof *dg->critical);
  assert_true (path.critical_work_ns == dg->critical_work_ns);
  assert_true (path.host_bound_ns == dg->host_bound_ns);
  assert_int_equal (path.n_waits, 0);
  assert_int_equal (path.n_help, 0);
  ps_diagnosis_free (&path);
}

/* Loads a graph from JSON text; fails the test on any error. */
static inline void
ts_load (ps_graph *g, const char *json)
{
  ps_diag d;
  ps_diag_init (&d, "test.json");
  ps_graph_init (g);
  int rc = ps_import_graph_mem (g, json, strlen (json), "test.json", &d);
  if (rc != 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

/* Loads a generated graph (pins below pin_streams, 0: no pins). */
static inline void
ts_gen (ps_graph *g, ps_gen_shape shape, uint32_t nodes, uint64_t seed, uint32_t pin_streams)
{
  ps_gen_options o;
  ps_gen_options_init (&o);
  o.shape = shape;
  o.nodes = nodes;
  o.seed = seed;
  o.pins = pin_streams > 0;
  o.pin_streams = pin_streams ? pin_streams : 1;
  assert_int_equal (pt_gen_graph (g, &o), 0);
}

static inline void
ts_plan (ps_plan *p, const ps_graph *g, uint32_t streams, bool fusion)
{
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.streams = streams;
  o.fusion = fusion;
  ps_diag d;
  ps_diag_init (&d, "test.json");
  int rc = ps_plan_build (p, g, &o, &d);
  if (rc != 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static inline const ps_device *
ts_h200 (void)
{
  return ps_device_builtin (0);
}

/* Plans and simulates; tl is initialised and finished. */
static inline double
ts_simulate (const ps_graph *g, uint32_t streams, bool fusion, ps_plan *p, ps_timeline *tl)
{
  ts_plan (p, g, streams, fusion);
  ps_timeline_init (tl, PS_TL_SIMULATED);
  assert_int_equal (ps_simulate (p, ts_h200 (), tl), 0);
  return tl->makespan_ns;
}

static inline double
ts_makespan (const ps_graph *g, uint32_t streams, bool fusion)
{
  ps_plan p;
  ps_timeline tl;
  double ms = ts_simulate (g, streams, fusion, &p, &tl);
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  return ms;
}

#endif
