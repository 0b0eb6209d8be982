/* test-replay.c: traces as graphs and their replay.  A hand-made trace
 * becomes the graph it should (one node per GPU op with its measured
 * duration on its stream, stream order and the recorded wait as
 * dependencies, host launches as not-before times, unexplained idle as a
 * labelled delay, a wait the measurement contradicts dropped) and replays
 * to the nanosecond; every graph command takes a trace, gzip or not; files
 * that are not traces of GPU work say what they are.  With the
 * third-party data: every trace with GPU work in real/ and wild/ replays
 * within 1 % on average and 5 % at worst (the table is printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ps-exec-trace.h"
#include "ps-file.h"
#include "ps-import.h"
#include "ps-plan.h"
#include "ps-replay.h"
#include "ps-test-data.h"
#include "ps-test-trace.h"
#include "ps-trace-import.h"


static uint32_t
node_named (const ps_graph *g, const char *prefix)
{
  size_t n = strlen (prefix);
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (strncmp (ps_node_name (g, v), prefix, n) == 0 && ps_node_name (g, v)[n] == ' ')
      return v;
  fail_msg ("no node %s", prefix);
  return PS_NONE;
}

static uint32_t
node_named_exact (const ps_graph *g, const char *name)
{
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (strcmp (ps_node_name (g, v), name) == 0)
      return v;
  fail_msg ("no node %s", name);
  return PS_NONE;
}

static bool
has_edge (const ps_graph *g, uint32_t from, uint32_t to)
{
  for (uint32_t i = g->succ_off[from]; i < g->succ_off[from + 1]; i++)
    if (g->succ[i] == to)
      return true;
  return false;
}

static void
core_replay_trace_graph (void **state)
{
  (void) state;
  ps_graph g;
  ps_timeline tl;
  ps_trace_graph_info in;
  ps_diag d;
  ps_diag_init (&d, "t.json");
  int rc = ps_import_trace_graph (&g, ps_test_trace, strlen (ps_test_trace), "dir/t.json", NULL,
                                  &tl, &in, &d);
  if (rc != 0)
    ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  assert_string_equal (g.name, "t");
  assert_true (g.measured);
  assert_int_equal (g.n_nodes, 5);
  assert_int_equal (in.gpu_ops, 5);
  assert_int_equal (in.streams, 4);
  uint32_t a = node_named (&g, "a"), b = node_named (&g, "b"), c = node_named (&g, "c");
  uint32_t nc = node_named (&g, "ncclKernel_AllReduce");
  uint32_t cp = node_named (&g, "Memcpy DtoH (Device -> Pinned)");
  /* Durations, pins by stream id, kinds. */
  assert_float_equal (g.nodes[a].cost_ns, 100000, 1e-6);
  assert_float_equal (g.nodes[cp].cost_ns, 10000, 1e-6);
  assert_int_equal (g.nodes[a].stream, 0);
  assert_int_equal (g.nodes[c].stream, 1);
  assert_int_equal (g.nodes[nc].stream, 2);
  assert_int_equal (g.nodes[cp].stream, 3);
  assert_int_equal (g.nodes[cp].op, PS_OP_MEMCPY);
  assert_int_equal (g.nodes[cp].dir, PS_COPY_D2H);
  /* Stream order, the recorded wait; the contradicted one dropped. */
  assert_true (has_edge (&g, a, b));
  assert_true (has_edge (&g, a, c));
  assert_false (has_edge (&g, b, cp));
  assert_int_equal (in.waits, 1);
  assert_int_equal (in.dropped, 1);
  /* Time 0 is the first launch (the imported timeline's origin too); b
   * cannot start before its launch, 200 µs later. */
  assert_float_equal (in.t0_ns, 0, 1e-6);
  assert_float_equal (g.host_ns[b], 200000, 1e-6);
  assert_true (isnan (g.host_ns[nc]));
  /* b: 2 µs of launch latency; the NCCL kernel: 300 µs no record explains. */
  assert_float_equal (g.delay_ns[b], 7000, 1e-6);
  assert_int_equal (in.cause_of_node[b], PS_IDLE_LAUNCH_LATENCY);
  assert_float_equal (g.delay_ns[nc], 300000, 1e-6);
  assert_int_equal (in.cause_of_node[nc], PS_IDLE_NCCL);
  assert_float_equal (g.delay_ns[c], 0, 1e-6); /* started as soon as a ended */
  ps_timeline_free (&tl);
  ps_trace_graph_info_free (&in);
  ps_graph_free (&g);
  ps_diag_free (&d);

  /* The replay reproduces it. */
  ps_replay r;
  ps_diag_init (&d, "t.json");
  assert_int_equal (ps_replay_trace (ps_test_trace, strlen (ps_test_trace), "t.json", NULL,
                                     ps_device_builtin (0), &r, &d),
                    0);
  assert_float_equal (r.measured_makespan_ns, 314000, 1e-6);
  assert_float_equal (r.replayed_makespan_ns, r.measured_makespan_ns, 1e-6);
  assert_float_equal (r.median_start_error_ns, 0, 1e-6);
  assert_int_equal (r.n_streams, 4);
  assert_int_equal (r.streams[0].id, 7);
  assert_float_equal (r.streams[0].measured_ns, 150000, 1e-6);
  assert_float_equal (r.streams[0].replayed_ns, 150000, 1e-6);
  /* The NCCL kernel ends the run: its wait is part of the makespan. */
  assert_true (r.unexplained_by[PS_IDLE_NCCL] > 40000);
  assert_true (r.unexplained_ns >= r.unexplained_by[PS_IDLE_NCCL]);
  ps_replay_free (&r);
  ps_diag_free (&d);
}

/* The trace's run against a plan of its graph: each node where and when
 * it ran, on the plan's stream for it, so views compare node by node. */
static void
core_replay_measured_timeline (void **state)
{
  (void) state;
  ps_graph g;
  ps_timeline trace;
  ps_trace_graph_info in;
  ps_diag d;
  ps_diag_init (&d, "t.json");
  assert_int_equal (ps_import_trace_graph (&g, ps_test_trace, strlen (ps_test_trace), "t.json",
                                           NULL, &trace, &in, &d),
                    0);
  ps_plan_options o;
  ps_plan_options_init (&o);
  ps_plan p;
  assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
  ps_timeline m;
  assert_int_equal (ps_trace_measured_timeline (&g, &trace, &in, &p, &m), 0);
  assert_int_equal (m.source, PS_TL_MEASURED);
  assert_int_equal (m.n_spans, 5);
  for (uint32_t i = 0; i < m.n_spans; i++) {
    const ps_span *s = &m.spans[i];
    assert_int_equal (s->nodes_count, 1);
    uint32_t v = m.span_nodes[s->nodes_begin];
    const ps_span *t = &trace.spans[in.span_of_node[v]];
    assert_float_equal (s->start_ns, t->start_ns - in.t0_ns, 1e-6);
    assert_float_equal (s->end_ns - s->start_ns, g.nodes[v].cost_ns, 1e-6);
    assert_int_equal (s->stream, p.steps[p.node_step[v]].stream);
  }
  assert_float_equal (m.makespan_ns, 320000, 1e-6);
  ps_timeline_free (&m);
  ps_plan_free (&p);
  ps_timeline_free (&trace);
  ps_trace_graph_info_free (&in);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

/* What-if on a trace: a kernel twice as long, no launch overhead. */
static void
core_replay_what_if (void **state)
{
  (void) state;
  ps_replay_options o;
  ps_replay_options_init (&o);
  o.scale[0].glob = "[ab]";
  o.scale[0].factor = 2;
  o.n_scales = 1;
  ps_replay r;
  ps_diag d;
  ps_diag_init (&d, "t.json");
  assert_int_equal (ps_replay_trace (ps_test_trace, strlen (ps_test_trace), "t.json", &o,
                                     ps_device_builtin (0), &r, &d),
                    0);
  assert_true (r.what_if);
  assert_int_equal (r.scaled, 2);
  assert_float_equal (r.streams[0].replayed_ns, 300000, 1e-6);
  /* b, launched at 200 µs, now starts after a ends at 206 µs plus its
   * latency, and ends at 313 µs: the NCCL kernel still ends the run. */
  assert_float_equal (r.replayed_makespan_ns, r.measured_makespan_ns, 1e-6);
  ps_replay_free (&r);
  /* Without launch overhead, b follows a at once. */
  o.n_scales = 0;
  o.no_launch_overhead = true;
  assert_int_equal (ps_replay_trace (ps_test_trace, strlen (ps_test_trace), "t.json", &o,
                                     ps_device_builtin (0), &r, &d),
                    0);
  assert_int_equal (r.scaled, 0);
  assert_true (r.median_start_error_ns > 0);
  ps_replay_free (&r);
  ps_diag_free (&d);
}

/* No recorded waits (Kineto's runtime cudaStreamWaitEvent has no ids):
 * an op that starts 1 µs after work on another stream ended, long after
 * its launch, waits for that work; one 40 µs after it does not. */
static void
core_replay_inferred_waits (void **state)
{
  (void) state;
  static const char t[] =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 0,"
    " \"dur\": 1, \"args\": {\"correlation\": 1}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"producer\", \"ts\": 5, \"dur\": 50,"
    " \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 2,"
    " \"dur\": 1, \"args\": {\"correlation\": 2}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"consumer\", \"ts\": 56, \"dur\": 10,"
    " \"args\": {\"device\": 0, \"stream\": 8, \"correlation\": 2}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 3,"
    " \"dur\": 1, \"args\": {\"correlation\": 3}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"late\", \"ts\": 95, \"dur\": 5,"
    " \"args\": {\"device\": 0, \"stream\": 9, \"correlation\": 3}}\n"
    "]}\n";
  ps_graph g;
  ps_trace_graph_info in;
  ps_diag d;
  ps_diag_init (&d, "w.json");
  assert_int_equal (ps_import_trace_graph (&g, t, strlen (t), "w.json", NULL, NULL, &in, &d), 0);
  assert_int_equal (in.inferred, 1);
  uint32_t p = node_named (&g, "producer"), c = node_named (&g, "consumer");
  uint32_t late = node_named (&g, "late");
  assert_true (has_edge (&g, p, c));
  assert_false (has_edge (&g, p, late));
  assert_float_equal (g.delay_ns[c], 1000, 1e-6);
  assert_true (g.delay_ns[late] > 30000);
  ps_trace_graph_info_free (&in);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

/* The graph commands take a trace: gzip as well as plain, and plan it
 * with its pins. */
static void
core_replay_trace_is_a_graph_file (void **state)
{
  (void) state;
  char dir[] = "/tmp/planscope-replay-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char plain[4200], gz[4200];
  snprintf (plain, sizeof plain, "%s/t.json", dir);
  snprintf (gz, sizeof gz, "%s/t.json.gz", dir);
  FILE *f = fopen (plain, "w");
  assert_non_null (f);
  fputs (ps_test_trace, f);
  assert_int_equal (fclose (f), 0);
  gzFile z = gzopen (gz, "wb");
  assert_non_null (z);
  assert_int_equal (gzputs (z, ps_test_trace), (int) strlen (ps_test_trace));
  assert_int_equal (gzclose (z), Z_OK);
  const char *paths[] = { plain, gz };
  for (int i = 0; i < 2; i++) {
    ps_graph g;
    ps_diag d;
    ps_diag_init (&d, paths[i]);
    assert_int_equal (ps_import_graph_file (&g, paths[i], NULL, &d), 0);
    assert_int_equal (g.n_nodes, 5);
    ps_plan_options o;
    ps_plan_options_init (&o);
    o.streams = 4;
    o.fusion = false;
    ps_plan p;
    assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
    assert_int_equal (p.streams_used, 4);
    ps_plan_free (&p);
    ps_graph_free (&g);
    ps_diag_free (&d);
  }
  remove (plain);
  remove (gz);
  remove (dir);
}

static void
expect_message (const char *text, const char *want)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "x");
  assert_true (ps_import_graph_mem (&g, text, strlen (text), "x", &d) < 0);
  assert_true (d.errors >= 1);
  if (!strstr (d.entries[0].message, want))
    fail_msg ("wanted \"%s\", got \"%s\"", want, d.entries[0].message);
  ps_diag_free (&d);
}

/* What is no trace of GPU work says what it is. */
static void
core_replay_foreign_files (void **state)
{
  (void) state;
  expect_message ("NVIDIA Nsight Systems Profiler Report 2024\x01\x02",
                  "an Nsight Systems report (.nsys-rep)");
  expect_message ("{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": []}",
                  "a PyTorch execution trace");
  expect_message ("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\","
                  " \"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1}]}",
                  "a CPU-only trace: 1 CPU operators");
  expect_message ("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cuda_profiler_range\","
                  " \"name\": \"r\", \"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1}]}",
                  "a CUPTI range-profiler trace: 1 profiled ranges");
  /* A JSON array that holds no events is still read as a graph file. */
  expect_message ("[1, 2]", "must be a JSON object");
}


/* ---- execution traces ---- */

/* Host thread 1: aten::rand (around aten::uniform_, which launches w1 on
 * stream 7), aten::ones launching w2 on stream 7, aten::add launching
 * add on stream 8 after an event, and aten::mul launching mul on 7,
 * whose execution-trace entry has another name; x: a kernel launched
 * outside any CPU op. */
static const char et_kineto[] =
  "{\"traceEvents\": [\n"
  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::rand\", \"ts\": 100, \"dur\": 50,"
  " \"pid\": 1, \"tid\": 1, \"args\": {\"External id\": 10, \"Record function id\": 2}},\n"
  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::uniform_\", \"ts\": 110, \"dur\": 20,"
  " \"pid\": 1, \"tid\": 1, \"args\": {\"External id\": 11, \"Record function id\": 3}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 115,"
  " \"dur\": 5, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 1, \"External id\": 11}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"w1\", \"ts\": 200, \"dur\": 10, \"pid\": 0,"
  " \"tid\": 7, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1,"
  " \"grid\": [864, 2], \"block\": [256, 1, 1]}},\n"
  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::ones\", \"ts\": 160, \"dur\": 20,"
  " \"pid\": 1, \"tid\": 1, \"args\": {\"External id\": 12, \"Record function id\": 4}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 165,"
  " \"dur\": 5, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 2}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"w2\", \"ts\": 210, \"dur\": 10, \"pid\": 0,"
  " \"tid\": 7, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 2}},\n"
  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"ts\": 190, \"dur\": 20,"
  " \"pid\": 1, \"tid\": 1, \"args\": {\"External id\": 13, \"Record function id\": 5}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 195,"
  " \"dur\": 5, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 3}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"add\", \"ts\": 220, \"dur\": 10, \"pid\": 0,"
  " \"tid\": 8, \"args\": {\"device\": 0, \"stream\": 8, \"correlation\": 3}},\n"
  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"ts\": 212, \"dur\": 8,"
  " \"pid\": 1, \"tid\": 1, \"args\": {\"External id\": 14, \"Record function id\": 6}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 214,"
  " \"dur\": 2, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 4}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"mul\", \"ts\": 230, \"dur\": 10, \"pid\": 0,"
  " \"tid\": 7, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 4}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 221,"
  " \"dur\": 2, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 5}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"x\", \"ts\": 240, \"dur\": 10, \"pid\": 0,"
  " \"tid\": 7, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 5}}\n"
  "]}\n";

/* The 1.0 layout for rand and uniform_, the 1.1 one for ones and add:
 * uniform_ writes storage 7, ones storage 9 (a list of one tensor), add
 * reads both and writes storage 11; a CPU tensor is left out. */
static const char et_json[] =
  "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [\n"
  "{\"name\": \"aten::rand\", \"id\": 4, \"rf_id\": 2, \"parent\": 1, \"inputs\": [[4, 4]],"
  " \"input_types\": [\"GenericList[Int,Int]\"], \"outputs\": [[6, 7, 0, 16, 4, \"cuda:0\"]],"
  " \"output_types\": [\"Tensor(float)\"]},\n"
  "{\"name\": \"aten::uniform_\", \"id\": 5, \"rf_id\": 3, \"parent\": 4,"
  " \"inputs\": [[6, 7, 0, 16, 4, \"cuda:0\"], 0.0, 1.0],"
  " \"input_types\": [\"Tensor(float)\", \"Double\", \"Double\"],"
  " \"outputs\": [[6, 7, 0, 16, 4, \"cuda:0\"]], \"output_types\": [\"Tensor(float)\"]},\n"
  "{\"name\": \"aten::ones\", \"id\": 6, \"rf_id\": 4, \"parent\": 1,"
  " \"inputs\": {\"values\": [[8, 20, 0, 4, 4, \"cpu\"]], \"types\": [\"Tensor(float)\"]},"
  " \"outputs\": {\"values\": [[[8, 9, 0, 16, 2, \"cuda:0\"]]],"
  " \"types\": [\"GenericList[Tensor(c10::Half)]\"]}},\n"
  "{\"name\": \"aten::add\", \"id\": 7, \"rf_id\": 5, \"parent\": 1,"
  " \"inputs\": {\"values\": [[6, 7, 0, 16, 4, \"cuda:0\"], [8, 9, 0, 16, 2, \"cuda:0\"], 1],"
  " \"types\": [\"Tensor(float)\", \"Tensor(c10::Half)\", \"Int\"]},"
  " \"outputs\": {\"values\": [[10, 11, 4, 16, 4, \"cuda:0\"]], \"types\": [\"Tensor(float)\"]}},\n"
  "{\"name\": \"aten::div\", \"id\": 8, \"rf_id\": 6, \"parent\": 1,"
  " \"inputs\": [[6, 7, 0, 16, 4, \"cuda:0\"]], \"input_types\": [\"Tensor(float)\"],"
  " \"outputs\": [[12, 13, 0, 16, 4, \"cuda:0\"]], \"output_types\": [\"Tensor(float)\"]}\n"
  "]}\n";

static const char *
cpu_op_name (const ps_timeline *tl, uint32_t span)
{
  uint32_t k = tl->spans[span].cpu_op;
  return k ? tl->strings + tl->cpu_ops[k - 1].name : NULL;
}

static void
core_replay_exec_trace (void **state)
{
  (void) state;
  ps_exec_trace et;
  ps_diag d;
  ps_diag_init (&d, "et.json");
  assert_int_equal (ps_exec_trace_read (&et, et_json, strlen (et_json), &d), 0);
  assert_string_equal (et.schema, "1.0.1");
  assert_int_equal (et.n_nodes, 5);
  const ps_et_op *add = ps_exec_trace_find (&et, 5);
  assert_non_null (add);
  assert_string_equal (ps_et_op_name (&et, add), "aten::add");
  assert_int_equal (add->tensors_count, 3);
  assert_int_equal (ps_exec_trace_find (&et, 4)->tensors_count, 1); /* the CPU input left out */
  assert_null (ps_exec_trace_find (&et, 99));

  for (int free_streams = 0; free_streams < 2; free_streams++) {
    ps_trace_graph_options o;
    ps_trace_graph_options_init (&o);
    o.et = &et;
    o.free_streams = free_streams;
    ps_graph g;
    ps_timeline tl;
    ps_trace_graph_info in;
    assert_int_equal (ps_import_trace_graph (&g, et_kineto, strlen (et_kineto), "k.json", &o, &tl,
                                             &in, &d),
                      0);
    uint32_t w1 = node_named (&g, "w1"), w2 = node_named (&g, "w2"), ad = node_named (&g, "add");
    uint32_t mul = node_named (&g, "mul"), x = node_named (&g, "x");
    /* Each kernel's CPU op: the innermost one around its launch. */
    assert_string_equal (cpu_op_name (&tl, in.span_of_node[w1]), "aten::uniform_");
    assert_string_equal (cpu_op_name (&tl, in.span_of_node[ad]), "aten::add");
    assert_null (cpu_op_name (&tl, in.span_of_node[x]));
    /* The launch where the trace gives it ("grid": [864, 2]: z is 1). */
    const ps_kernel *k1 = &g.kernels[g.nodes[w1].aux];
    assert_false (k1->launch_unknown);
    assert_int_equal (k1->grid[0], 864);
    assert_int_equal (k1->grid[1], 2);
    assert_int_equal (k1->grid[2], 1);
    assert_int_equal (k1->block[0], 256);
    assert_true (g.kernels[g.nodes[x].aux].launch_unknown);
    assert_int_equal (in.et.linked, 3);
    assert_int_equal (in.et.unmatched, 1); /* mul's entry is aten::div */
    assert_int_equal (in.et.no_cpu_op, 1);
    assert_int_equal (in.et.no_tensors, 0);
    /* One buffer per storage, as far as its tensors reach. */
    assert_int_equal (g.n_buffers, 3);
    assert_int_equal (in.et.buffers, 3);
    const ps_node *n = &g.nodes[ad];
    assert_int_equal (n->reads_count, 2);
    assert_int_equal (n->writes_count, 1);
    const ps_buffer *out = &g.buffers[g.access[n->writes_begin]];
    assert_string_equal (ps_buffer_name (&g, g.access[n->writes_begin]), "storage 11");
    assert_int_equal (out->bytes, (4 + 16) * 4);
    assert_int_equal (out->dtype, PS_DT_F32);
    assert_false (out->flags & PS_BUF_EXTERNAL);
    uint32_t s9 = g.access[g.nodes[w2].writes_begin];
    assert_int_equal (g.buffers[s9].dtype, PS_DT_F16);
    assert_int_equal (g.buffers[s9].bytes, 32);
    /* uniform_ reads its storage first: it was there before the run. */
    assert_true (g.buffers[g.access[g.nodes[w1].reads_begin]].flags & PS_BUF_EXTERNAL);
    /* Data orders add after both writers. */
    assert_true (has_edge (&g, w1, ad));
    assert_true (has_edge (&g, w2, ad));
    /* Between two linked ops on one stream the recorded order stays only
     * while the streams are pinned; an unlinked op keeps it either way. */
    assert_int_equal (has_edge (&g, w1, w2), !free_streams);
    assert_true (has_edge (&g, w2, mul));
    assert_true (has_edge (&g, mul, x));
    ps_timeline_free (&tl);
    ps_trace_graph_info_free (&in);
    ps_graph_free (&g);
  }

  /* Re-planned on 2 streams with the data known: w1 and w2 may overlap,
   * and nothing ends later than measured. */
  ps_replay_options ro;
  ps_replay_options_init (&ro);
  ro.trace.et = &et;
  ro.streams = 2;
  ps_replay r;
  assert_int_equal (ps_replay_trace (et_kineto, strlen (et_kineto), "k.json", &ro,
                                     ps_device_builtin (0), &r, &d),
                    0);
  assert_true (r.what_if);
  assert_int_equal (r.et.linked, 3);
  assert_true (r.replayed_end_ns <= r.measured_end_ns + 1);
  ps_replay_free (&r);
  ps_exec_trace_free (&et);

  /* Not an execution trace, or a broken one: located errors. */
  ps_diag_free (&d);
  ps_diag_init (&d, "et.json");
  assert_true (ps_exec_trace_read (&et, "{\"traceEvents\": []}", 19, &d) < 0);
  assert_non_null (strstr (d.entries[0].message, "not an execution trace"));
  ps_diag_free (&d);
  ps_diag_init (&d, "et.json");
  assert_true (ps_exec_trace_read (&et, "{\"schema\": \"1.0.1\", \"nodes\": [{\"rf_id\": }]}", 43,
                                   &d) < 0);
  assert_int_equal (d.entries[0].line, 1);
  assert_int_equal (d.entries[0].col, 41);
  ps_diag_free (&d);
}

/* HTA's pair: a Kineto trace and the execution trace of the same run. */
static void
core_replay_exec_trace_pair (void **state)
{
  (void) state;
  const char *kp = ps_test_data ("wild/kineto/hta_execution_trace_simple_add_kineto.json.gz");
  char *kdata, *edata;
  size_t klen, elen;
  ps_diag d;
  ps_diag_init (&d, kp);
  assert_int_equal (ps_file_read_all (kp, (size_t) 1 << 30, &kdata, &klen, &d), 0);
  const char *ep = ps_test_data ("wild/other/hta_execution_trace_simple_add_et.json.gz");
  assert_int_equal (ps_file_read_all (ep, (size_t) 1 << 30, &edata, &elen, &d), 0);
  ps_exec_trace et;
  assert_int_equal (ps_exec_trace_read (&et, edata, elen, &d), 0);
  assert_int_equal (et.n_nodes, 38);
  ps_trace_graph_options o;
  ps_trace_graph_options_init (&o);
  o.et = &et;
  o.free_streams = true;
  ps_graph g;
  ps_trace_graph_info in;
  assert_int_equal (ps_import_trace_graph (&g, kdata, klen, kp, &o, NULL, &in, &d), 0);
  /* Two uniform_ kernels fill the two inputs, two adds read them. */
  assert_int_equal (g.n_nodes, 4);
  assert_int_equal (in.et.linked, 4);
  assert_int_equal (g.n_buffers, 4);
  for (uint32_t v = 2; v < 4; v++) {
    assert_int_equal (g.nodes[v].reads_count, 2);
    assert_true (has_edge (&g, 0, v) && has_edge (&g, 1, v));
  }
  assert_int_equal (g.pred_off[2] - g.pred_off[1], 0); /* the second fill waits for nothing */
  assert_int_equal (g.buffers[g.access[g.nodes[3].writes_begin]].bytes, 256 * 256 * 4);
  ps_trace_graph_info_free (&in);
  ps_graph_free (&g);
  /* With its recorded stream the pair still replays exactly. */
  ps_replay_options ro;
  ps_replay_options_init (&ro);
  ro.trace.et = &et;
  ps_replay r;
  assert_int_equal (ps_replay_trace (kdata, klen, kp, &ro, ps_device_builtin (0), &r, &d), 0);
  assert_true (fabs (r.makespan_error) < 1e-6);
  ps_replay_free (&r);
  ps_exec_trace_free (&et);
  free (kdata);
  free (edata);
  ps_diag_free (&d);
}

/* ---- a CUDA-graph dump timed by a trace of its replays ---- */

static const char dump_dot[] =
  "digraph dot {\n"
  "subgraph cluster_1 {\n"
  "label=\"graph_1\" graph[style=\"dashed\"];\n"
  "\"graph_1_node_0\"[style=\"bold\" shape=\"octagon\" label=\"0\n_Z10exp_kernelPKfPfi\n\"];\n"
  "\"graph_1_node_1\"[style=\"bold\" shape=\"octagon\" label=\"1\n_Z11relu_kernelPKfPfi\n\"];\n"
  "\"graph_1_node_2\"[style=\"bold\" shape=\"octagon\" label=\"2\n_Z10exp_kernelPKfPfi\n\"];\n"
  "\"graph_1_node_3\"[style=\"bold\" shape=\"octagon\" label=\"3\n_Z4tailv\n\"];\n"
  "\"graph_1_node_0\" -> \"graph_1_node_1\";\n"
  "\"graph_1_node_1\" -> \"graph_1_node_2\";\n"
  "\"graph_1_node_2\" -> \"graph_1_node_3\";\n"
  "}\n}\n";

/* A trace of n_runs replays: exp launched twice per replay (durations
 * 10 + r and 30 + r µs), relu once (20 µs), tail never; with odd, one
 * exp launch too many. */
static char *
replay_trace (int n_runs, bool odd, bool mangled)
{
  char *buf = malloc (65536);
  size_t n = (size_t) snprintf (buf, 65536, "{\"traceEvents\": [\n");
  double t = 0;
  const char *ex = mangled ? "_Z10exp_kernelPKfPfi" : "exp_kernel(float const*, float*, int)";
  for (int r = 0; r < n_runs; r++) {
    const struct {
      const char *name;
      double dur;
    } k[3] = { { ex, 10 + r }, { "relu_kernel(float const*, float*, int)", 20 }, { ex, 30 + r } };
    for (int i = 0; i < 3; i++) {
      n += (size_t) snprintf (buf + n, 65536 - n,
                              "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"ts\": %.0f,"
                              " \"dur\": %.0f, \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": 7}}\n",
                              r || i ? "," : "", k[i].name, t, k[i].dur);
      t += k[i].dur + 1;
    }
  }
  if (odd)
    n += (size_t) snprintf (buf + n, 65536 - n,
                            ",{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"ts\": %.0f,"
                            " \"dur\": 40, \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": 7}}\n", ex, t);
  snprintf (buf + n, 65536 - n, "]}\n");
  return buf;
}

static int
take (ps_graph *g, const char *trace, ps_durations_info *di, ps_diag *d)
{
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  int rc = ps_trace_import_mem (&tl, trace, strlen (trace), NULL, d);
  if (rc == 0)
    rc = ps_graph_take_durations (g, &tl, di, d);
  ps_timeline_free (&tl);
  return rc;
}

static void
core_replay_dump_durations (void **state)
{
  (void) state;
  for (int mangled = 0; mangled < 2; mangled++) {
    ps_graph g;
    ps_diag d;
    ps_diag_init (&d, "dump.dot");
    assert_int_equal (ps_import_graph_mem (&g, dump_dot, strlen (dump_dot), "dump.dot", &d), 0);
    char *tr = replay_trace (3, false, mangled);
    ps_durations_info di;
    assert_int_equal (take (&g, tr, &di, &d), 0);
    free (tr);
    assert_int_equal (di.kernels, 4);
    assert_int_equal (di.measured, 3);
    assert_int_equal (di.unmatched, 1);
    assert_int_equal (di.replays, 3);
    /* The first exp node: launches of 10, 11, 12 µs; the second 30-32. */
    uint32_t e0 = node_named_exact (&g, "graph_1_node_0");
    uint32_t e1 = node_named_exact (&g, "graph_1_node_2");
    uint32_t tail = node_named_exact (&g, "graph_1_node_3");
    assert_float_equal (g.nodes[e0].cost_ns, 11000, 1e-6);
    assert_float_equal (g.nodes[e1].cost_ns, 31000, 1e-6);
    assert_true (g.nodes[e0].flags & PS_NODE_HAS_COST);
    assert_false (g.nodes[tail].flags & PS_NODE_HAS_COST); /* stays estimated */
    ps_graph_free (&g);
    ps_diag_free (&d);
  }
  /* Launches that do not divide among the nodes: the function's median. */
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "dump.dot");
  assert_int_equal (ps_import_graph_mem (&g, dump_dot, strlen (dump_dot), "dump.dot", &d), 0);
  char *tr = replay_trace (2, true, false);
  ps_durations_info di;
  assert_int_equal (take (&g, tr, &di, &d), 0);
  free (tr);
  assert_int_equal (di.by_name, 2);
  assert_int_equal (di.measured, 1); /* relu: one launch a replay */
  /* exp: the median of 10, 30, 11, 31 and 40 µs, for both nodes. */
  assert_float_equal (g.nodes[node_named_exact (&g, "graph_1_node_0")].cost_ns, 30000, 1e-6);
  assert_float_equal (g.nodes[node_named_exact (&g, "graph_1_node_2")].cost_ns, 30000, 1e-6);
  /* A trace of something else: an error that says so. */
  static const char other[] =
    "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 1,"
    " \"dur\": 2, \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": 7}}]}";
  assert_true (take (&g, other, &di, &d) < 0);
  assert_non_null (strstr (d.entries[d.count - 1].message, "none of the dump's 4 kernels"));
  ps_graph_free (&g);
  ps_diag_free (&d);
}

/* ---- the third-party traces ---- */

static void
core_replay_real_traces (void **state)
{
  (void) state;
  static const char *const patterns[] = { "real/hta/*.json*", "real/kineto/*.json*",
                                          "wild/kineto/*.json*", "wild/other/*.json*" };
  double sum = 0, worst = 0;
  unsigned n = 0, refused = 0;
  printf ("%-62s %7s %16s %16s %10s %8s\n", "trace", "GPU ops", "measured ns", "replayed ns",
          "error", "unexpl.");
  for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
    glob_t gl;
    if (glob (ps_test_data (patterns[k]), 0, NULL, &gl) != 0)
      continue;
    for (size_t i = 0; i < gl.gl_pathc; i++) {
      const char *path = gl.gl_pathv[i];
      char *data;
      size_t len;
      ps_diag d;
      ps_diag_init (&d, path);
      assert_int_equal (ps_file_read_all (path, (size_t) 1 << 30, &data, &len, &d), 0);
      ps_replay r;
      int rc = ps_replay_trace (data, len, path, NULL, ps_device_builtin (0), &r, &d);
      free (data);
      const char *base = strrchr (path, '/') + 1;
      if (rc != 0) {
        /* Only traces without GPU work may be refused, and they say why. */
        assert_true (d.errors >= 1);
        const char *m = d.entries[0].message;
        if (!strstr (m, "CPU-only") && !strstr (m, "range-profiler") &&
            !strstr (m, "execution trace") && !strstr (m, "another accelerator"))
          fail_msg ("%s: %s", base, m);
        printf ("%-62s %s\n", base, m);
        refused++;
        ps_diag_free (&d);
        continue;
      }
      double e = fabs (r.makespan_error);
      printf ("%-62s %7u %16.0f %16.0f %+9.4f%% %7.1f%%\n", base, r.gpu_ops,
              r.measured_makespan_ns, r.replayed_makespan_ns, 100 * r.makespan_error,
              r.measured_makespan_ns > 0 ? 100 * r.unexplained_ns / r.measured_makespan_ns : 0);
      sum += e;
      worst = fmax (worst, e);
      n++;
      ps_replay_free (&r);
      ps_diag_free (&d);
    }
    globfree (&gl);
  }
  printf ("%u traces replayed: mean |makespan error| %.4f%%, worst %.4f%%; %u without GPU work "
          "refused with their reason\n",
          n, n ? 100 * sum / n : 0, 100 * worst, refused);
  assert_true (n >= 20);
  assert_true (sum / n <= 0.01);
  assert_true (worst <= 0.05);
}

int
main (int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_replay_trace_graph),
    cmocka_unit_test (core_replay_what_if),
    cmocka_unit_test (core_replay_measured_timeline),
    cmocka_unit_test (core_replay_inferred_waits),
    cmocka_unit_test (core_replay_trace_is_a_graph_file),
    cmocka_unit_test (core_replay_foreign_files),
    cmocka_unit_test (core_replay_exec_trace),
    cmocka_unit_test (core_replay_dump_durations),
  };
  const struct CMUnitTest data_tests[] = {
    cmocka_unit_test (core_replay_real_traces),
    cmocka_unit_test (core_replay_exec_trace_pair),
  };
  PS_TEST_MAIN_WITH_DATA (argc, argv, "/core/replay", tests, data_tests, NULL, NULL);
}
