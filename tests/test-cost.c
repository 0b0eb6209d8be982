/* test-cost.c: the achievable rates of device profiles and what the cost
 * model makes of them: the H200's GEMM and copy come within 5 % of what
 * the machine measures, profiles without the new keys load as before (at
 * the peaks), GEMM efficiency follows the size, and every bad figure is
 * refused with a located message; the least time a graph needs unfused
 * is a true bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "ps-cost.h"
#include "ps-test-sim.h"

/* What an 8192x8192x8192 bf16 GEMM and a 1 GiB device-to-device copy
 * take on the project's H200 (issue 16): 1.4 ms (788 TFLOP/s) and
 * 0.5 ms (4.3 TB/s counting the read and the write). */
#define GEMM_MEASURED_NS 1.4e6
#define COPY_MEASURED_NS 0.5e6

/* The GEMM as a graph gives it: three 128 MiB bf16 matrices, 2^40 flops,
 * a grid of 128x256 tiles; and the copy of one 1 GiB buffer into another. */
static const char gemm_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"gemm\",\n"
  " \"buffers\": [{\"name\": \"a\", \"bytes\": 134217728, \"dtype\": \"bf16\", \"external\": true},\n"
  "   {\"name\": \"b\", \"bytes\": 134217728, \"dtype\": \"bf16\", \"external\": true},\n"
  "   {\"name\": \"c\", \"bytes\": 134217728, \"dtype\": \"bf16\", \"external\": true}],\n"
  " \"nodes\": [{\"name\": \"gemm\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": [64, 32],\n"
  "   \"block\": 256, \"reads\": [\"a\", \"b\"], \"writes\": [\"c\"], \"flops\": 1099511627776}]}";

static const char copy_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"copy\",\n"
  " \"buffers\": [{\"name\": \"x\", \"bytes\": 1073741824, \"external\": true},\n"
  "   {\"name\": \"y\", \"bytes\": 1073741824, \"external\": true}],\n"
  " \"nodes\": [{\"name\": \"copy\", \"op\": \"memcpy\", \"dir\": \"d2d\", \"reads\": [\"x\"],\n"
  "   \"writes\": [\"y\"]}]}";

/* The duration the views show for the graph's one node on d, and the
 * makespan of its plan simulated on d (launch latency included). */
static void
predict (const char *json, const ps_device *d, double *node_ns, double *makespan_ns)
{
  ps_graph g;
  ts_load (&g, json);
  ps_cost c;
  ps_cost_node (d, &g, 0, &c);
  *node_ns = c.ns;
  ps_plan p;
  ts_plan (&p, &g, 1, false);
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  assert_int_equal (ps_simulate (&p, d, &tl), 0);
  *makespan_ns = tl.makespan_ns;
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* Reads a profile file of data/devices into memory (NUL-terminated). */
static char *
read_profile (const char *name)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/data/devices/%s.json", ts_source_root (), name);
  FILE *f = fopen (path, "r");
  assert_non_null (f);
  char *buf = calloc (1, 1 << 16);
  size_t n = fread (buf, 1, (1 << 16) - 1, f);
  fclose (f);
  buf[n] = 0;
  return buf;
}

/* Removes the line of `key` from a profile's text (the new keys each sit
 * on a line of their own in the shipped files). */
static void
drop_line (char *text, const char *key)
{
  char *k = strstr (text, key);
  assert_non_null (k);
  char *start = k;
  while (start > text && start[-1] != '\n')
    start--;
  char *end = strchr (k, '\n');
  assert_non_null (end);
  memmove (start, end + 1, strlen (end + 1) + 1);
}

static int
load_text (ps_device *d, const char *text, ps_diag *diag)
{
  return ps_device_load_json (d, text, strlen (text), "profile.json", diag);
}

static void
core_cost_h200_matches_measurements (void **state)
{
  (void) state;
  const ps_device *d = ts_h200 ();
  double gemm_ns, gemm_span, copy_ns, copy_span;
  predict (gemm_graph, d, &gemm_ns, &gemm_span);
  predict (copy_graph, d, &copy_ns, &copy_span);

  /* The same profile without its achievable rates: the spec sheet's peaks
   * (this is how profiles were before they had them). */
  char *text = read_profile ("h200");
  drop_line (text, "\"mem_efficiency\": 0");
  drop_line (text, "\"gemm_efficiency\": [");
  ps_device peak;
  ps_diag diag;
  ps_diag_init (&diag, "h200-peak.json");
  assert_int_equal (load_text (&peak, text, &diag), 0);
  ps_diag_free (&diag);
  free (text);
  double gemm_peak, gemm_peak_span, copy_peak, copy_peak_span;
  predict (gemm_graph, &peak, &gemm_peak, &gemm_peak_span);
  predict (copy_graph, &peak, &copy_peak, &copy_peak_span);

  printf ("%-28s %11s %11s %7s %11s %7s\n", "h200", "measured", "predicted", "error",
          "at peak", "error");
  printf ("%-28s %8.3f ms %8.3f ms %+6.1f%% %8.3f ms %+6.1f%%\n", "8192^3 bf16 GEMM",
          GEMM_MEASURED_NS / 1e6, gemm_span / 1e6, 100 * (gemm_span / GEMM_MEASURED_NS - 1),
          gemm_peak_span / 1e6, 100 * (gemm_peak_span / GEMM_MEASURED_NS - 1));
  printf ("%-28s %8.3f ms %8.3f ms %+6.1f%% %8.3f ms %+6.1f%%\n", "1 GiB device-to-device copy",
          COPY_MEASURED_NS / 1e6, copy_span / 1e6, 100 * (copy_span / COPY_MEASURED_NS - 1),
          copy_peak_span / 1e6, 100 * (copy_peak_span / COPY_MEASURED_NS - 1));

  /* Within 5 % of the measurements, both the node's duration and the
   * simulated run of it. */
  assert_true (fabs (gemm_ns / GEMM_MEASURED_NS - 1) < 0.05);
  assert_true (fabs (gemm_span / GEMM_MEASURED_NS - 1) < 0.05);
  assert_true (fabs (copy_ns / COPY_MEASURED_NS - 1) < 0.05);
  assert_true (fabs (copy_span / COPY_MEASURED_NS - 1) < 0.05);
  /* At the peaks the GEMM was 18 % short: the achievable rates are what
   * brings it in. */
  assert_true (gemm_peak_span < 0.9 * GEMM_MEASURED_NS);
  assert_true (copy_peak_span < copy_span);
}

/* A profile in the format before achievable rates: the keys are optional,
 * and without them every rate is the peak, as it was. */
static void
core_cost_old_profiles_load_at_peak (void **state)
{
  (void) state;
  static const char old[] =
    "{\"format\": \"planscope-device\", \"version\": 1, \"name\": \"old\",\n"
    " \"sm_count\": 100, \"max_threads_per_sm\": 2048, \"max_blocks_per_sm\": 32,\n"
    " \"fp32_tflops\": 50, \"tensor_tflops\": 500, \"fp64_tflops\": 25,\n"
    " \"mem_bandwidth_gbs\": 2000, \"h2d_gbs\": 25, \"d2h_gbs\": 25, \"p2p_gbs\": 100,\n"
    " \"copy_engines\": 2, \"launch_latency_ns\": 3000, \"host_launch_ns\": 2000,\n"
    " \"dispatch_gap_ns\": 1000, \"event_record_ns\": 500, \"event_wait_ns\": 1000,\n"
    " \"host_callback_ns\": 10000, \"copy_latency_ns\": 2000}";
  ps_device d;
  ps_diag diag;
  ps_diag_init (&diag, "old.json");
  assert_int_equal (load_text (&d, old, &diag), 0);
  assert_int_equal (diag.errors, 0);
  ps_diag_free (&diag);
  assert_true (d.mem_efficiency == 1.0);
  assert_int_equal (d.gemm_points, 0);
  assert_true (ps_cost_mem_gbs (&d) == 2000.0);
  assert_true (ps_cost_gemm_efficiency (&d, 1e12) == 1.0);

  /* The copy moves 2 GiB at the full 2000 GB/s, plus its latency. */
  double copy_ns, copy_span;
  predict (copy_graph, &d, &copy_ns, &copy_span);
  assert_true (fabs (copy_ns - (2.0 * 1073741824 / 2000 + 2000)) < 1);
  /* The GEMM runs at the full 500 TFLOP/s, over its grid's efficiency
   * (2048 blocks, 8 at a time on each of 100 SMs: three waves of 800). */
  double gemm_ns, gemm_span;
  predict (gemm_graph, &d, &gemm_ns, &gemm_span);
  double eff = 2048.0 / (3 * 800);
  assert_true (fabs (gemm_ns - 1099511627776.0 / 500e3 / eff) < 1);
}

/* GEMM efficiency follows the size: points joined on a log scale of the
 * flops, the end points' shares beyond them. */
static void
core_cost_gemm_efficiency_by_size (void **state)
{
  (void) state;
  ps_device d = *ts_h200 ();
  d.gemm_points = 3;
  const double flops[] = { 1e9, 1e11, 1e13 }, share[] = { 0.2, 0.6, 0.8 };
  memcpy (d.gemm_flops, flops, sizeof flops);
  memcpy (d.gemm_efficiency, share, sizeof share);
  assert_true (ps_cost_gemm_efficiency (&d, 1e6) == 0.2);
  assert_true (ps_cost_gemm_efficiency (&d, 1e9) == 0.2);
  assert_true (fabs (ps_cost_gemm_efficiency (&d, 1e10) - 0.4) < 1e-12);
  assert_true (fabs (ps_cost_gemm_efficiency (&d, 1e11) - 0.6) < 1e-12);
  assert_true (fabs (ps_cost_gemm_efficiency (&d, 1e12) - 0.7) < 1e-12);
  assert_true (ps_cost_gemm_efficiency (&d, 1e15) == 0.8);

  /* A small GEMM takes longer per flop than a large one: its node runs at
   * its own share of the peak.  (Both grids fill the GPU in whole waves, so
   * only the share differs.) */
  static const char two[] =
    "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"two\",\n"
    " \"buffers\": [{\"name\": \"s\", \"bytes\": 2048, \"dtype\": \"f16\"},\n"
    "   {\"name\": \"l\", \"bytes\": 2048, \"dtype\": \"f16\"}],\n"
    " \"nodes\": [{\"name\": \"small\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": 1056,\n"
    "   \"block\": 256, \"writes\": [\"s\"], \"flops\": 1e10},\n"
    "  {\"name\": \"large\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": 1056,\n"
    "   \"block\": 256, \"writes\": [\"l\"], \"flops\": 1e13}]}";
  ps_graph g;
  ts_load (&g, two);
  ps_cost small, large;
  ps_cost_node (&d, &g, 0, &small);
  ps_cost_node (&d, &g, 1, &large);
  assert_true (fabs (small.ns - 1e10 / (d.tensor_tflops * 1e3 * 0.4)) < 1e-6 * small.ns);
  assert_true (fabs (large.ns - 1e13 / (d.tensor_tflops * 1e3 * 0.8)) < 1e-6 * large.ns);
  /* Work that is not on the tensor cores keeps the FP32 peak. */
  g.buffers[0].dtype = PS_DT_F32;
  ps_cost_node (&d, &g, 0, &small);
  assert_true (fabs (small.ns - 1e10 / (d.fp32_tflops * 1e3)) < 1e-6 * small.ns);
  ps_graph_free (&g);
}

/* Every bad achievable rate is refused where it stands, with its key. */
static void
core_cost_profile_errors_located (void **state)
{
  (void) state;
  static const struct {
    const char *insert; /* added after the "name" member of the h200 file */
    uint32_t line, col; /* of the error, counted in `insert` (line 1: its line) */
    const char *message;
  } cases[] = {
    { "\"mem_efficiency\": 0,", 1, 19, "mem_efficiency: 0 is outside [0.01, 1]" },
    { "\"mem_efficiency\": 1.5,", 1, 19, "mem_efficiency: 1.5 is outside [0.01, 1]" },
    { "\"mem_efficiency\": \"high\",", 1, 19, "mem_efficiency: expected a number, got string" },
    { "\"gemm_efficiency\": 0.8,", 1, 20, "gemm_efficiency: expected an array of [flops, share]" },
    { "\"gemm_efficiency\": [],", 1, 20, "gemm_efficiency: needs at least one [flops, share] point" },
    { "\"gemm_efficiency\": [0.8],", 1, 21, "gemm_efficiency[0]: expected [flops, share], got number" },
    { "\"gemm_efficiency\": [[1e12]],", 1, 26, "gemm_efficiency[0]: expected [flops, share], got end of array" },
    { "\"gemm_efficiency\": [[1e12, 0.8, 1]],", 1, 21, "gemm_efficiency[0]: expected [flops, share], two numbers" },
    { "\"gemm_efficiency\": [[1e12, 0]],", 1, 28, "gemm_efficiency[0][1]: 0 is outside [0.001, 1]" },
    { "\"gemm_efficiency\": [[1e12, 1.2]],", 1, 28, "gemm_efficiency[0][1]: 1.2 is outside [0.001, 1]" },
    { "\"gemm_efficiency\": [[-5, 0.5]],", 1, 22, "gemm_efficiency[0][0]: -5 is outside [1, 1e+21]" },
    { "\"gemm_efficiency\": [[1e12, 0.5],\n  [1e9, 0.3]],", 2, 3,
      "gemm_efficiency[1]: flops 1e+09 must be more than the previous point's 1e+12" },
    { "\"gemm_efficiency\": [[1e12, 0.5], [1e12, 0.6]],", 1, 34,
      "gemm_efficiency[1]: flops 1e+12 must be more than the previous point's 1e+12" },
    { "\"gemm_efficiency\": [[1e9, 0.5]],\n \"gemm_efficiency\": [[1e10, 0.5]],", 2, 2,
      "duplicate key \"gemm_efficiency\"" },
    { "\"gemm_eficiency\": [[1e9, 0.5]],", 1, 1,
      "unknown key \"gemm_eficiency\"; did you mean \"gemm_efficiency\"?" },
    { "\"gemm_efficiency\": [[1e9, 0.5],", 0, 0, "" }, /* a syntax error: located too */
  };
  char *base = read_profile ("h200");
  /* The shipped file's own keys go, so that each case gives them once. */
  drop_line (base, "\"mem_efficiency\": 0");
  drop_line (base, "\"gemm_efficiency\": [");
  char *name = strstr (base, "\"name\": \"h200\",");
  assert_non_null (name);
  name += strlen ("\"name\": \"h200\",");
  uint32_t base_line = 1;
  for (const char *q = base; q < name; q++)
    base_line += *q == '\n';
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n = strlen (base) + strlen (cases[i].insert) + 8;
    char *text = malloc (n);
    /* The insert starts on a line of its own, at column 1. */
    snprintf (text, n, "%.*s\n%s%s", (int) (name - base), base, cases[i].insert, name);
    ps_device d;
    ps_diag diag;
    ps_diag_init (&diag, "profile.json");
    assert_true (load_text (&d, text, &diag) < 0);
    assert_int_equal (diag.errors, 1);
    if (cases[i].message[0]) {
      if (!strstr (diag.entries[0].message, cases[i].message))
        fail_msg ("case %zu: \"%s\" does not say \"%s\"", i, diag.entries[0].message,
                  cases[i].message);
      if (diag.entries[0].line != base_line + cases[i].line || diag.entries[0].col != cases[i].col)
        fail_msg ("case %zu: at %u:%u, not %u:%u", i, diag.entries[0].line, diag.entries[0].col,
                  base_line + cases[i].line, cases[i].col);
    } else {
      assert_true (diag.entries[0].line > base_line);
    }
    ps_diag_free (&diag);
    free (text);
  }
  free (base);
}

/* The least time a graph's nodes need unfused (what lets fusion auto skip
 * the plan without fusion of a large graph) is never more than the
 * simulated makespan of a plan without fusion, on any stream count, and
 * is all of it but the launch for one GEMM that fills the device. */
static void
core_cost_unfused_bound_holds (void **state)
{
  (void) state;
  const ps_gen_shape shapes[] = { PS_GEN_CHAIN, PS_GEN_FANOUT, PS_GEN_LAYERED,
                                  PS_GEN_TRANSFORMER };
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
    for (uint64_t seed = 1; seed <= 3; seed++)
      for (uint32_t n = 60; n <= 600; n *= 10) {
        ps_graph g;
        ts_gen (&g, shapes[k], n, seed, 0);
        double bound = ps_cost_unfused_bound (ts_h200 (), &g);
        assert_true (bound > 0);
        for (uint32_t streams = 1; streams <= 4; streams++) {
          double ms = ts_makespan (&g, streams, false);
          if (!(ms >= bound * (1 - 1e-12)))
            fail_msg ("shape %zu seed %llu, %u nodes, %u streams: makespan %.6g below the "
                      "bound %.6g", k, (unsigned long long) seed, n, streams, ms, bound);
        }
        ps_graph_free (&g);
      }
  ps_graph g;
  ts_load (&g, gemm_graph);
  double node_ns, ms, bound = ps_cost_unfused_bound (ts_h200 (), &g);
  predict (gemm_graph, ts_h200 (), &node_ns, &ms);
  assert_true (bound <= ms && bound >= 0.99 * ms);
  ps_graph_free (&g);
}

static bool
same_cost (const ps_cost *a, const ps_cost *b)
{
  return a->ns == b->ns && a->sm_fraction == b->sm_fraction && a->flops == b->flops
         && a->bytes == b->bytes && a->resource == b->resource && a->skipped == b->skipped
         && a->unknown == b->unknown && a->estimated == b->estimated;
}

/* The planner sums the bound from the costs its fusion pass finds (a
 * node alone, or the members of a fused group as ps_cost_group costs
 * them): over the steps of any fused plan, the same bound.  And a group
 * costed from its members' parts computed ahead (ps_cost_node_part, as
 * the fusion pass does on large graphs), with a scratch that reads
 * another's readers (ps_cost_scratch_init_shared, as its second thread
 * does), costs exactly the same. */
static void
core_cost_bound_from_group_costs (void **state)
{
  (void) state;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint64_t seed = 1; seed <= 3; seed++) {
      ps_graph g;
      ps_plan p;
      ts_gen (&g, (ps_gen_shape) shape, 900, seed, 0);
      ts_plan (&p, &g, 3, true);
      ps_cost_scratch sc, base, pre;
      assert_int_equal (ps_cost_scratch_init (&sc, &g), 0);
      assert_int_equal (ps_cost_scratch_init (&base, &g), 0);
      assert_int_equal (ps_cost_scratch_init_shared (&pre, &g, &base), 0);
      assert_ptr_equal (pre.readers, base.readers);
      ps_cost_part *parts = malloc (g.n_nodes * sizeof *parts);
      assert_non_null (parts);
      for (uint32_t v = 0; v < g.n_nodes; v++)
        ps_cost_node_part (ts_h200 (), &g, v, &parts[v]);
      pre.parts = parts;
      double busy[PS_RES__COUNT] = { 0 };
      uint32_t fused = 0;
      for (uint32_t s = 0; s < p.n_steps; s++) {
        const ps_step *st = &p.steps[s];
        const uint32_t *nodes = p.step_nodes + st->nodes_begin;
        ps_cost c;
        if (st->nodes_count == 1) {
          ps_cost_node (ts_h200 (), &g, nodes[0], &c);
          ps_cost_share_time (&c, busy);
          assert_true (same_cost (&c, &parts[nodes[0]].c));
        } else if (st->nodes_count > 1) {
          ps_cost_group (ts_h200 (), &g, nodes, st->nodes_count, &sc, &c);
          ps_cost from_parts;
          ps_cost_group (ts_h200 (), &g, nodes, st->nodes_count, &pre, &from_parts);
          assert_true (same_cost (&c, &from_parts));
          fused++;
        }
      }
      assert_memory_equal (sc.busy, pre.busy, sizeof sc.busy);
      for (int r = 0; r < PS_RES__COUNT; r++)
        busy[r] += sc.busy[r];
      double want = ps_cost_unfused_bound (ts_h200 (), &g), got = ps_cost_busiest (busy);
      if (!(fabs (got - want) <= 1e-12 * want))
        fail_msg ("shape %d seed %llu: %.17g from group costs, %.17g node by node", shape,
                  (unsigned long long) seed, got, want);
      assert_true (fused > 0 || shape == PS_GEN_CHAIN);
      ps_cost_scratch_free (&sc);
      ps_cost_scratch_free (&pre);
      ps_cost_scratch_free (&base);
      free (parts);
      ps_plan_free (&p);
      ps_graph_free (&g);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_cost_h200_matches_measurements),
    cmocka_unit_test (core_cost_old_profiles_load_at_peak),
    cmocka_unit_test (core_cost_gemm_efficiency_by_size),
    cmocka_unit_test (core_cost_profile_errors_located),
    cmocka_unit_test (core_cost_unfused_bound_holds),
    cmocka_unit_test (core_cost_bound_from_group_costs),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
