/* test-dot-import.c: importing cudaGraphDebugDotPrint dumps: the three
 * real dumps of ../shared/data/real/cudagraph_dot (kernel names, launch
 * configurations, child graphs flattened in place), every node type of the
 * verbose and default flags, child graphs launched twice, cycles, located
 * syntax errors, detection by content, hostile input (every truncation of
 * a real dump), conditional nodes (IF, WHILE, SWITCH) with their body
 * graphs as branches, and that imported graphs plan and verify. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/dot/ps-dot-import.h"
#include "ps-file.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "ps-device.h"
#include "ps-demangle.h"
#include "ps-cost.h"
#include "ps-plan.h"
#include "ps-sim.h"
#include "ps-timeline.h"
#include "ps-test-data.h"
#include "ps-verify.h"

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

static const char *
source_root (void)
{
  const char *s = getenv ("PS_SOURCE_ROOT");
  return s && *s ? s : PS_TEST_SOURCE_ROOT;
}

static int
load_real (ps_graph *g, ps_diag *d, const char *name)
{
  char path[1024];
  snprintf (path, sizeof path, "%s", ps_test_data_dump (name));
  ps_diag_init (d, path);
  int rc = ps_import_graph_file (g, path, NULL, d);
  if (rc != 0)
    ps_diag_print (d, stderr);
  return rc;
}

static int
load_text (ps_graph *g, ps_diag *d, const char *text)
{
  ps_diag_init (d, "test.dot");
  return ps_import_graph_mem (g, text, strlen (text), "test.dot", d);
}

static uint32_t
node_id (const ps_graph *g, const char *name)
{
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (strcmp (ps_node_name (g, v), name) == 0)
      return v;
  fail_msg ("no node \"%s\"", name);
  return PS_NONE;
}

static bool
has_edge (const ps_graph *g, uint32_t u, uint32_t v)
{
  for (uint32_t i = g->succ_off[u]; i < g->succ_off[u + 1]; i++)
    if (g->succ[i] == v)
      return true;
  return false;
}

static const ps_kernel *
kernel_of (const ps_graph *g, const char *name)
{
  uint32_t v = node_id (g, name);
  assert_int_equal (g->nodes[v].op, PS_OP_KERNEL);
  return &g->kernels[g->nodes[v].aux];
}

/* Node ids are a topological order, the CSR is consistent both ways, and
 * every edge is imported. */
static void
check_shape (const ps_graph *g)
{
  uint32_t m = 0;
  for (uint32_t u = 0; u < g->n_nodes; u++)
    for (uint32_t i = g->succ_off[u]; i < g->succ_off[u + 1]; i++, m++) {
      assert_true (g->succ[i] > u);
      if (i > g->succ_off[u])
        assert_true (g->succ[i] > g->succ[i - 1]);
      /* Every edge is the dump's, but a conditional's to its branch. */
      if (g->nodes[g->succ[i]].cond == u)
        assert_int_equal (g->succ_kind[i], PS_EDGE_BRANCH);
      else
        assert_int_equal (g->succ_kind[i], PS_EDGE_IMPORTED);
    }
  assert_int_equal (m, g->n_edges);
  assert_int_equal (g->pred_off[g->n_nodes], g->n_edges);
  for (uint32_t v = 0; v < g->n_nodes; v++)
    for (uint32_t i = g->pred_off[v]; i < g->pred_off[v + 1]; i++)
      assert_true (has_edge (g, g->pred[i], v));
}

static void
core_dot_real_einsummable (void **state)
{
  (void) state;
  ps_graph g;
  ps_diag d;
  assert_int_equal (load_real (&g, &d, "einsummable_cuda_graph.dot"), 0);
  assert_int_equal (g.n_nodes, 2);
  assert_int_equal (g.n_kernels, 2);
  assert_int_equal (g.n_edges, 1);
  assert_string_equal (g.name, "einsummable_cuda_graph");
  const ps_kernel *exp = kernel_of (&g, "graph_1_node_0");
  assert_string_equal (ps_graph_str (&g, exp->function), "_Z10exp_kernelPKfPfi");
  assert_int_equal (exp->grid[0], 390625);
  assert_int_equal (exp->grid[1], 1);
  assert_int_equal (exp->block[0], 256);
  assert_int_equal (exp->smem, 0);
  const ps_kernel *relu = kernel_of (&g, "graph_1_node_1");
  assert_string_equal (ps_graph_str (&g, relu->function), "_Z11relu_kernelPKfPfi");
  assert_int_equal (relu->grid[0], 390625);
  assert_int_equal (relu->block[0], 256);
  /* The dump's edge: exp runs before relu. */
  assert_true (has_edge (&g, node_id (&g, "graph_1_node_0"), node_id (&g, "graph_1_node_1")));
  check_shape (&g);
  /* Known by their launch alone: 100M threads each, an estimated 167 µs
   * on an H200 (8 bytes a thread at 4.8 TB/s), never 0 ns; titled by
   * their kernel. */
  assert_true (g.cuda_graph);
  ps_cost c;
  ps_cost_node (ps_device_builtin (0), &g, node_id (&g, "graph_1_node_0"), &c);
  assert_true (c.estimated);
  assert_false (c.unknown);
  assert_true (c.ns > 150000 && c.ns < 200000);
  char title[256];
  if (ps_demangle_available ())
    assert_string_equal (ps_node_title (&g, node_id (&g, "graph_1_node_0"), title, sizeof title),
                         "exp_kernel");
  ps_graph_free (&g);
  ps_diag_free (&d);

  assert_int_equal (load_real (&g, &d, "einsummable_cuda_graph_km.dot"), 0);
  assert_int_equal (g.n_kernels, 2);
  for (uint32_t k = 0; k < 2; k++) {
    const char *fn = ps_graph_str (&g, g.kernels[k].function);
    assert_string_equal (fn, "_ZN27cutensor_internal_namespace14tensor_permuteILi61EfffL18cutensor"
                             "Operator_t126ELS1_126ELS1_126ELi64ELi2ELi1ELi4EEEvT2_PKT0_S2_PKT1_PS"
                             "6_"
                             "NS_13PermuteParamsE");
    assert_int_equal (g.kernels[k].grid[0], 1);
    assert_int_equal (g.kernels[k].block[0], 64);
    assert_int_equal (g.kernels[k].smem, 0);
  }
  check_shape (&g);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static void
core_dot_real_nested (void **state)
{
  (void) state;
  ps_graph g;
  ps_diag d;
  assert_int_equal (load_real (&g, &d, "gputrace_mlx_nested_graph.dot"), 0);
  /* graph_130 has 12 nodes, one of which launches graph_131, whose only
   * node launches graph_132 (one kernel): 11 + 1 kernels, no child node. */
  assert_int_equal (g.n_nodes, 12);
  assert_int_equal (g.n_kernels, 12);
  assert_int_equal (g.n_edges, 11);
  assert_int_equal (d.warnings, 0);
  uint32_t sdpa = node_id (&g, "graph_132_node_0");
  const ps_kernel *k = kernel_of (&g, "graph_132_node_0");
  assert_string_equal (ps_graph_str (&g, k->function),
                       "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_1_64x64x12"
                       "8_"
                       "4x1x1_cga1x1x1_kernel0_0");
  /* Flattened in place of graph_130_node_4: between nodes 3 and 5. */
  assert_true (has_edge (&g, node_id (&g, "graph_130_node_3"), sdpa));
  assert_true (has_edge (&g, sdpa, node_id (&g, "graph_130_node_5")));
  /* The fork and join, and the isolated copy kernel. */
  uint32_t n7 = node_id (&g, "graph_130_node_7"), n10 = node_id (&g, "graph_130_node_10");
  assert_true (has_edge (&g, n7, node_id (&g, "graph_130_node_8")));
  assert_true (has_edge (&g, n7, node_id (&g, "graph_130_node_9")));
  assert_true (has_edge (&g, node_id (&g, "graph_130_node_8"), n10));
  assert_true (has_edge (&g, node_id (&g, "graph_130_node_9"), n10));
  uint32_t n0 = node_id (&g, "graph_130_node_0");
  assert_int_equal (g.succ_off[n0 + 1] - g.succ_off[n0], 0);
  assert_int_equal (g.pred_off[n0 + 1] - g.pred_off[n0], 0);
  assert_string_equal (ps_graph_str (&g, kernel_of (&g, "graph_130_node_0")->function),
                       "_ZN3mlx4core2cu6copy_sIiijLi4EEEvPKT_PT0_T1_");
  /* Default flags carry no launch configuration. */
  assert_int_equal (k->grid[0], 1);
  assert_int_equal (k->block[0], 1);
  check_shape (&g);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static const char verbose_dump[] =
  "digraph dot {\n"
  "subgraph cluster_1 {\n"
  "label=\"graph_1\" graph[style=\"dashed\"];\n"
  "\"graph_1_node_0\"[style=\"solid\" shape=\"record\" label=\"{\n"
  "MEMCPY\n"
  "| {{ID | node handle} | {0 (topoId: 5) | 0x000055E7277A6AC0}}\n"
  "| {kind | HtoD (HOST to DEVICE)}\n"
  "| {{srcPos | {{x | 0} | {y | 0} | {z | 0}}} | {dstPos | {{x | 0} | {y | 0} | {z | 0}}} | "
  "{Extent | {{Width | 4096} | {Height | 2} | {Depth | 1}}}}\n"
  "}\"];\n"
  "\"graph_1_node_1\"[style=\"bold\" shape=\"record\" label=\"{KERNEL\n"
  "| {ID | 1 (topoId: 4) | _Z4gemmPfS_\\<\\<\\<\\{64,16,1\\},\\{256,1,1\\},49152\\>\\>\\>}\n"
  "}\"];\n"
  "\"graph_1_node_2\"[shape=\"record\" label=\"{MEMSET\n"
  "| {{ID | node handle} | {2 (topoId: 3) | 0x1}}\n"
  "| {{dptr | pitch | value | elementSize | width | height} | {0x7f | 0 | 7 | 4 | 1024 | 2}}\n"
  "}\"];\n"
  "\"graph_1_node_3\"[shape=\"record\" label=\"{EVENT_RECORD | {{ID | event handle} | {3 | "
  "0xABC}}}\"];\n"
  "\"graph_1_node_4\"[shape=\"record\" label=\"{WAIT_EVENT | {{ID | event handle} | {4 | "
  "0xABC}}}\"];\n"
  "\"graph_1_node_5\"[shape=\"record\" label=\"{HOST | {ID | 5}}\"];\n"
  "\"graph_1_node_6\"[shape=\"record\" label=\"{MEM_ALLOC | {ID | 6}}\"];\n"
  "\"graph_1_node_7\"[shape=\"record\" label=\"{MEMCPY | {kind | DtoH} | {{Width | Height | "
  "Depth} | {100 | 3 | 1}}}\"];\n"
  "\"graph_1_node_8\"[shape=\"rectangle\" label=\"8\ngraph_2\n\"];\n"
  "\"graph_1_node_9\"[shape=\"rectangle\" label=\"9\ngraph_2\n\"];\n"
  "\"graph_1_node_0\" -> \"graph_1_node_1\" [headlabel=0];\n"
  "\"graph_1_node_1\" -> \"graph_1_node_2\";\n"
  "\"graph_1_node_2\" -> \"graph_1_node_3\" -> \"graph_1_node_4\" -> \"graph_1_node_5\";\n"
  "\"graph_1_node_5\" -> \"graph_1_node_8\" -> \"graph_1_node_9\" -> \"graph_1_node_6\";\n"
  "\"graph_1_node_6\" -> \"graph_1_node_7\";\n"
  "}\n"
  "subgraph cluster_2 {\n"
  "label=\"graph_2\";\n"
  "\"graph_2_node_0\"[shape=\"record\" label=\"{EMPTY | {ID | 0}}\"];\n"
  "\"graph_2_node_1\"[shape=\"octagon\" label=\"1\n_Z3fooi\n\"];\n"
  "\"graph_2_node_2\"[shape=\"octagon\" label=\"2\n_Z3bari\n\"];\n"
  "\"graph_2_node_0\" -> \"graph_2_node_1\";\n"
  "\"graph_2_node_0\" -> \"graph_2_node_2\";\n"
  "}\n"
  "}\n";

static void
core_dot_verbose_types (void **state)
{
  (void) state;
  ps_graph g;
  ps_diag d;
  int rc = load_text (&g, &d, verbose_dump);
  ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  /* 8 own nodes + graph_2 (3 nodes) launched twice. */
  assert_int_equal (g.n_nodes, 14);
  uint32_t cp = node_id (&g, "graph_1_node_0");
  assert_int_equal (g.nodes[cp].op, PS_OP_MEMCPY);
  assert_int_equal (g.nodes[cp].dir, PS_COPY_H2D);
  assert_int_equal (g.nodes[cp].bytes, 8192);
  uint32_t cp2 = node_id (&g, "graph_1_node_7");
  assert_int_equal (g.nodes[cp2].dir, PS_COPY_D2H);
  assert_int_equal (g.nodes[cp2].bytes, 300);
  const ps_kernel *k = kernel_of (&g, "graph_1_node_1");
  assert_string_equal (ps_graph_str (&g, k->function), "_Z4gemmPfS_");
  assert_int_equal (k->grid[0], 64);
  assert_int_equal (k->grid[1], 16);
  assert_int_equal (k->grid[2], 1);
  assert_int_equal (k->block[0], 256);
  assert_int_equal (k->smem, 49152);
  uint32_t ms = node_id (&g, "graph_1_node_2");
  assert_int_equal (g.nodes[ms].op, PS_OP_MEMSET);
  assert_int_equal (g.nodes[ms].bytes, 1024 * 4 * 2);
  assert_int_equal (g.nodes[ms].value, 7);
  uint32_t rec = node_id (&g, "graph_1_node_3"), wait = node_id (&g, "graph_1_node_4");
  assert_int_equal (g.nodes[rec].op, PS_OP_EVENT_RECORD);
  assert_int_equal (g.nodes[wait].op, PS_OP_EVENT_WAIT);
  assert_int_equal (g.nodes[rec].aux, g.nodes[wait].aux); /* one event, paired by handle */
  assert_int_equal (g.n_events, 1);
  assert_string_equal (ps_graph_str (&g, g.event_names[0]), "0xABC");
  assert_int_equal (g.nodes[node_id (&g, "graph_1_node_5")].op, PS_OP_HOST);
  uint32_t al = node_id (&g, "graph_1_node_6");
  assert_int_equal (g.nodes[al].op, PS_OP_OPAQUE);
  assert_string_equal (ps_graph_str (&g, g.nodes[al].aux), "MEM_ALLOC");
  /* One warning for the unknown type, however many nodes have it. */
  assert_int_equal (d.warnings, 1);
  /* graph_2 twice, named by the launching node. */
  uint32_t e1 = node_id (&g, "graph_1_node_8/graph_2_node_0");
  uint32_t f1 = node_id (&g, "graph_1_node_8/graph_2_node_1");
  uint32_t b1 = node_id (&g, "graph_1_node_8/graph_2_node_2");
  uint32_t e2 = node_id (&g, "graph_1_node_9/graph_2_node_0");
  assert_int_equal (g.nodes[e1].op, PS_OP_EMPTY);
  assert_int_equal (g.nodes[f1].op, PS_OP_KERNEL);
  /* The launching node's edges go to the child's first and from its last
   * nodes. */
  assert_true (has_edge (&g, node_id (&g, "graph_1_node_5"), e1));
  assert_true (has_edge (&g, f1, e2));
  assert_true (has_edge (&g, b1, e2));
  assert_true (has_edge (&g, node_id (&g, "graph_1_node_9/graph_2_node_1"), al));
  assert_true (has_edge (&g, node_id (&g, "graph_1_node_9/graph_2_node_2"), al));
  check_shape (&g);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static void
core_dot_default_flags (void **state)
{
  (void) state;
  static const char dump[] =
    "digraph dot {\n"
    "subgraph cluster_7 {\n"
    "label=\"graph_7\" graph[style=\"dashed\"];\n"
    "\"graph_7_node_0\"[style=\"bold\" shape=\"octagon\" label=\"0\n_Z5fill1Pf\n\"];\n"
    "\"graph_7_node_1\"[style=\"solid\" shape=\"trapezium\" label=\"1\nMEMCPY\n\"];\n"
    "\"graph_7_node_2\"[style=\"solid\" shape=\"invtrapezium\" label=\"2\nMEMSET\n\"];\n"
    "\"graph_7_node_3\"[style=\"solid\" shape=\"ellipse\" label=\"3\nEMPTY\n\"];\n"
    "\"graph_7_node_4\"[style=\"solid\" shape=\"diamond\" label=\"4\nCONDITIONAL\n\"];\n"
    "\"graph_7_node_5\"[style=\"solid\" shape=\"rectangle\" label=\"5\ngraph_8\n\"];\n"
    "\"graph_7_node_0\" -> \"graph_7_node_5\";\n"
    "\"graph_7_node_1\" -> \"graph_7_node_5\" -> \"graph_7_node_3\";\n"
    "}\n"
    "subgraph cluster_8 {\n"
    "label=\"graph_8\";\n"
    "}\n"
    "}\n";
  ps_graph g;
  ps_diag d;
  assert_int_equal (load_text (&g, &d, dump), 0);
  assert_int_equal (g.n_nodes, 6);
  assert_int_equal (g.nodes[node_id (&g, "graph_7_node_0")].op, PS_OP_KERNEL);
  assert_int_equal (g.nodes[node_id (&g, "graph_7_node_1")].op, PS_OP_MEMCPY);
  assert_int_equal (g.nodes[node_id (&g, "graph_7_node_2")].op, PS_OP_MEMSET);
  assert_int_equal (g.nodes[node_id (&g, "graph_7_node_3")].op, PS_OP_EMPTY);
  /* A conditional whose type and bodies the dump does not give: an IF
   * with nothing in its branches, and a warning for each. */
  uint32_t c = node_id (&g, "graph_7_node_4");
  assert_int_equal (g.nodes[c].op, PS_OP_CONDITIONAL);
  assert_int_equal (g.conds[g.nodes[c].aux].kind, PS_COND_IF);
  assert_int_equal (g.conds[g.nodes[c].aux].then_count, 0);
  assert_int_equal (d.warnings, 2);
  /* A default-flag dump gives no launch: nothing can time the kernel. */
  ps_cost kc;
  ps_cost_node (ps_device_builtin (0), &g, node_id (&g, "graph_7_node_0"), &kc);
  assert_true (kc.unknown);
  assert_false (kc.estimated);
  /* An empty child graph keeps its place as an empty node. */
  uint32_t ch = node_id (&g, "graph_7_node_5");
  assert_int_equal (g.nodes[ch].op, PS_OP_EMPTY);
  assert_true (has_edge (&g, node_id (&g, "graph_7_node_0"), ch));
  assert_true (has_edge (&g, ch, node_id (&g, "graph_7_node_3")));
  check_shape (&g);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static void
expect_error (const char *text, int code, const char *where, const char *words)
{
  ps_graph g;
  ps_diag d;
  int rc = load_text (&g, &d, text);
  assert_int_equal (rc, code);
  assert_int_equal (g.n_nodes, 0);
  assert_true (d.errors >= 1);
  char buf[2048] = "";
  FILE *f = fmemopen (buf, sizeof buf - 1, "w");
  assert_non_null (f);
  ps_diag_print (&d, f);
  fclose (f);
  if (!strstr (buf, where) || !strstr (buf, words))
    fail_msg ("expected \"%s\" and \"%s\" in: %s", where, words, buf);
  ps_diag_free (&d);
}

static void
core_dot_errors (void **state)
{
  (void) state;
  /* A cycle names its nodes, in order, at the first node's position. */
  expect_error ("digraph dot {\n a [label=\"0\n_Z1av\" shape=\"octagon\"];\n"
                " b [shape=octagon label=\"1\n_Z1bv\"];\n c [shape=octagon label=\"2\nk\"];\n"
                " a -> b -> c -> a;\n}\n",
                PS_ECYCLE, "test.dot:2:2: error:", "cycle: a -> b -> c -> a");
  expect_error ("digraph { x [shape=octagon label=\"0\nk\"]; x -> x; }", PS_ECYCLE, "test.dot:1:11",
                "x -> x");
  /* Syntax errors are located. */
  expect_error ("digraph dot {\n  a -> b [x=1\n}\n", PS_ESYNTAX, "test.dot:3:1: error:",
                "expected an attribute name or ']'");
  expect_error ("// c\nstrict digraph { x [label=\"open]; }\n", PS_ESYNTAX, "test.dot:2:27: error:",
                "unterminated quoted string");
  expect_error ("digraph { a -> b", PS_ESYNTAX, "test.dot:1:17: error:", "expected '}'");
  expect_error ("digraph { a -- b }", PS_ESYNTAX, "test.dot:1:13:", "undirected");
  expect_error ("digraph { } extra", PS_ESYNTAX, "test.dot:1:13:", "end of the file");
  expect_error ("digraph { a -> { b c } }", PS_ESYNTAX, "test.dot:1:16:", "subgraph");
  expect_error ("digraph { /* never closed", PS_ESYNTAX, "test.dot:1:11:", "unterminated comment");
  expect_error ("digraph { }", PS_EINVAL, "test.dot: error:", "no nodes");
  /* Child graphs that launch each other. */
  expect_error ("digraph { subgraph cluster_1 { label=graph_1; n [shape=rectangle "
                "label=\"0\ngraph_2\"] }\n subgraph cluster_2 { label=graph_2; m "
                "[shape=rectangle label=\"0\ngraph_1\"] } }",
                PS_EINVAL, "test.dot:", "cycle: graph_1 -> graph_2 -> graph_1");
}

static bool
is_dot (const char *text)
{
  return ps_import_detect (text, strlen (text)) == PS_GRAPH_FORMAT_DOT;
}

static void
core_dot_detection (void **state)
{
  (void) state;
  assert_true (is_dot ("digraph dot {}"));
  assert_true (is_dot ("\xef\xbb\xbf  // x\n/* y */\n# z\nstrict digraph"));
  assert_true (is_dot ("DiGraph {"));
  assert_false (is_dot ("digraphs {"));
  assert_false (is_dot ("{\"format\": \"planscope-graph\"}"));
  assert_false (is_dot (""));
  /* An undirected graph is DOT too, so that it is refused as what it is
   * rather than as JSON that starts with 'g'. */
  assert_true (is_dot ("graph { a -- b }"));
  assert_true (is_dot ("strict graph {}"));
  char path[4096];
  snprintf (path, sizeof path, "%s/tests/hostile/undirected.dot", source_root ());
  ps_graph ug;
  ps_diag ud;
  ps_diag_init (&ud, path);
  assert_int_equal (ps_import_graph_file (&ug, path, NULL, &ud), PS_ESYNTAX);
  assert_int_equal (ud.errors, 1);
  assert_int_equal (ud.entries[0].line, 2);
  assert_int_equal (ud.entries[0].col, 1);
  assert_non_null (strstr (ud.entries[0].message, "an undirected graph"));
  ps_diag_free (&ud);
  ps_diag_init (&ud, "short.dot");
  assert_int_equal (ps_import_graph_mem (&ug, "graph {}", 8, "short.dot", &ud), PS_ESYNTAX);
  assert_non_null (strstr (ud.entries[0].message, "an undirected graph"));
  ps_diag_free (&ud);
  /* The JSON loader hands DOT over, so every command accepts dumps. */
  ps_graph g;
  ps_diag d;
  assert_int_equal (load_text (&g, &d, "  digraph { k [shape=octagon label=\"0\n_Z1kv\"]; }"), 0);
  assert_int_equal (g.n_kernels, 1);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

/* Every prefix of a real dump loads or fails with an error; never a
 * crash, and never a partial graph. */
static void
core_dot_truncations (void **state)
{
  (void) state;
  char path[1024], *data;
  size_t len;
  ps_diag fd;
  ps_diag_init (&fd, "read");
  snprintf (path, sizeof path, "%s", ps_test_data_dump ("gputrace_mlx_nested_graph.dot"));
  assert_int_equal (ps_file_read_all (path, 1 << 20, &data, &len, &fd), 0);
  ps_diag_free (&fd);
  size_t ok = 0;
  for (size_t n = 0; n <= len; n++) {
    char *copy = malloc (n + 1);
    assert_non_null (copy);
    memcpy (copy, data, n);
    copy[n] = '\0';
    ps_graph g;
    ps_diag d;
    ps_diag_init (&d, "cut.dot");
    int rc = ps__dot_load_graph (&g, copy, n, "cut.dot", &d);
    if (rc == 0) {
      ok++;
      check_shape (&g);
    } else {
      assert_true (d.errors >= 1);
      assert_int_equal (g.n_nodes, 0);
    }
    ps_graph_free (&g);
    ps_diag_free (&d);
    free (copy);
  }
  /* Only cuts in the trailing white space keep the whole graph. */
  assert_true (ok >= 1 && ok <= 2);
  /* Bytes flipped with a fixed seed: the same guarantee. */
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 400; round++) {
    char *copy = malloc (len + 1);
    assert_non_null (copy);
    memcpy (copy, data, len + 1);
    for (int k = 0; k < 3; k++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      copy[x % len] = (char) (x >> 32);
    }
    ps_graph g;
    ps_diag d;
    ps_diag_init (&d, "flip.dot");
    if (ps__dot_load_graph (&g, copy, len, "flip.dot", &d) == 0)
      check_shape (&g);
    else
      assert_int_equal (g.n_nodes, 0);
    ps_graph_free (&g);
    ps_diag_free (&d);
    free (copy);
  }
  free (data);
}

/* Deep child-graph chains and wide fan-outs stay linear (no recursion). */
static void
core_dot_deep_children (void **state)
{
  (void) state;
  size_t cap = 4 << 20, n = 0;
  char *buf = malloc (cap);
  assert_non_null (buf);
  const uint32_t depth = 20000;
  n += (size_t) snprintf (buf + n, cap - n, "digraph dot {\n");
  for (uint32_t i = 0; i < depth; i++)
    n += (size_t) snprintf (buf + n, cap - n,
                            "subgraph cluster_%u { label=\"graph_%u\"; \"g%u_k\" [shape=octagon "
                            "label=\"0\n_Z1kv\"]; \"g%u_c\" [shape=rectangle "
                            "label=\"1\ngraph_%u\"]; \"g%u_k\" -> \"g%u_c\"; }\n",
                            i, i, i, i, i + 1, i, i);
  n += (size_t) snprintf (buf + n, cap - n, "subgraph cluster_%u { label=\"graph_%u\"; "
                                            "last [shape=octagon label=\"0\n_Z4lastv\"]; }\n}\n",
                          depth, depth);
  assert_true (n < cap);
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "deep.dot");
  int rc = ps__dot_load_graph (&g, buf, n, "deep.dot", &d);
  ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  assert_int_equal (g.n_nodes, depth + 1);
  assert_int_equal (g.n_edges, depth);
  check_shape (&g);
  ps_graph_free (&g);
  ps_diag_free (&d);
  free (buf);
}

/* A chain of `launches` nodes each launching one child graph of `width`
 * unconnected kernels: every kernel of one launch precedes every kernel of
 * the next, width^2 edges a link. */
static char *
chained_children (uint32_t launches, uint32_t width, size_t *len)
{
  size_t cap = 64 + (size_t) launches * 96 + (size_t) width * 64, n = 0;
  char *buf = malloc (cap);
  assert_non_null (buf);
  n += (size_t) snprintf (buf + n, cap - n, "digraph dot {\nsubgraph cluster_1 { label=graph_1;\n");
  for (uint32_t i = 0; i < launches; i++) {
    n += (size_t) snprintf (buf + n, cap - n, "n%u [shape=rectangle label=\"%u\ngraph_2\"];\n", i,
                            i);
    if (i)
      n += (size_t) snprintf (buf + n, cap - n, "n%u -> n%u;\n", i - 1, i);
  }
  n += (size_t) snprintf (buf + n, cap - n, "}\nsubgraph cluster_2 { label=graph_2;\n");
  for (uint32_t k = 0; k < width; k++)
    n += (size_t) snprintf (buf + n, cap - n, "k%u [shape=octagon label=\"%u\n_Z1kv\"];\n", k, k);
  n += (size_t) snprintf (buf + n, cap - n, "}\n}\n");
  assert_true (n < cap);
  *len = n;
  return buf;
}

/* Expansion limits count edges as well as nodes: a 167 KB dump that joins
 * 17 launches of a 4,096-kernel graph (268 million edges) is refused at
 * once; a smaller one expands to exactly the edges it asks for. */
static void
core_dot_edge_limit (void **state)
{
  (void) state;
  size_t len;
  char *bomb = chained_children (17, 4096, &len);
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "bomb.dot");
  assert_int_not_equal (ps__dot_load_graph (&g, bomb, len, "bomb.dot", &d), 0);
  assert_int_equal (d.errors, 1);
  assert_non_null (strstr (d.entries[0].message, "more than 33554432 edges"));
  ps_diag_free (&d);
  free (bomb);

  char *ok = chained_children (17, 64, &len);
  ps_diag_init (&d, "ok.dot");
  assert_int_equal (ps__dot_load_graph (&g, ok, len, "ok.dot", &d), 0);
  assert_int_equal (g.n_nodes, 17 * 64);
  assert_int_equal (g.n_edges, 16 * 64 * 64);
  ps_graph_free (&g);
  ps_diag_free (&d);
  free (ok);
}

static void
keep_first (void *ctx, const char *message)
{
  snprintf (ctx, 512, "%s", message);
}

/* A verbose dump: init, a WHILE loop over graph_2 (step, check), finish. */
static const char while_dump[] =
  "digraph dot {\n"
  "subgraph cluster_1 {\n"
  "label=\"graph_1\" graph[style=\"dashed\"];\n"
  "\"graph_1_node_0\"[style=\"bold\" shape=\"record\" label=\"{KERNEL\n"
  "| {ID | 0 (topoId: 2) | _Z4initPi\\<\\<\\<1024,256,0\\>\\>\\>}\n}\"];\n"
  "\"graph_1_node_1\"[style=\"solid\" shape=\"record\" label=\"{CONDITIONAL\n"
  "| {{ID | node handle | type | size | handle} | {1 (topoId: 1) | 0x55D0F0C0 | WHILE | 1 | "
  "0x0000000000000001}}\n"
  "| {body graphs | graph_2}\n}\"];\n"
  "\"graph_1_node_2\"[style=\"bold\" shape=\"record\" label=\"{KERNEL\n"
  "| {ID | 2 (topoId: 0) | _Z6finishPi\\<\\<\\<1024,256,0\\>\\>\\>}\n}\"];\n"
  "\"graph_1_node_0\" -> \"graph_1_node_1\" [headlabel=0];\n"
  "\"graph_1_node_1\" -> \"graph_1_node_2\" [headlabel=0];\n"
  "}\n"
  "subgraph cluster_2 {\n"
  "label=\"graph_2\" graph[style=\"dashed\"];\n"
  "\"graph_2_node_0\"[style=\"bold\" shape=\"record\" label=\"{KERNEL\n"
  "| {ID | 0 (topoId: 1) | _Z4stepPi\\<\\<\\<65536,256,0\\>\\>\\>}\n}\"];\n"
  "\"graph_2_node_1\"[style=\"bold\" shape=\"record\" label=\"{KERNEL\n"
  "| {ID | 1 (topoId: 0) | _Z5checkPiy\\<\\<\\<1,32,0\\>\\>\\>}\n}\"];\n"
  "\"graph_2_node_0\" -> \"graph_2_node_1\" [headlabel=0];\n"
  "}\n"
  "}\n";

/* Plans a graph on 4 streams, verifies the plan and simulates it on h200. */
static double
plan_verify_makespan (const ps_graph *g)
{
  ps_plan_options o;
  ps_plan_options_init (&o);
  ps_plan p;
  ps_diag d;
  ps_diag_init (&d, "test.dot");
  int rc = ps_plan_build (&p, g, &o, &d);
  ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  char first[512] = "";
  size_t bad = ps_plan_verify (&p, keep_first, first, 1);
  if (bad != 0)
    fail_msg ("%zu violations, first: %s", bad, first);
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  assert_int_equal (ps_simulate (&p, ps_device_builtin (0), &tl), 0);
  double ms = tl.makespan_ns;
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  ps_diag_free (&d);
  return ms;
}

static void
core_dot_cond_while (void **state)
{
  (void) state;
  ps_graph g;
  ps_diag d;
  int rc = load_text (&g, &d, while_dump);
  ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  assert_int_equal (d.warnings, 0);
  /* The body is not a graph of its own any more: 3 + 2 nodes. */
  assert_int_equal (g.n_nodes, 5);
  uint32_t c = node_id (&g, "graph_1_node_1"), step = node_id (&g, "graph_2_node_0"),
           check = node_id (&g, "graph_2_node_1"), fin = node_id (&g, "graph_1_node_2");
  assert_int_equal (g.nodes[c].op, PS_OP_CONDITIONAL);
  const ps_cond *cd = &g.conds[g.nodes[c].aux];
  assert_int_equal (cd->kind, PS_COND_WHILE);
  assert_int_equal (cd->then_count, 2);
  assert_int_equal (cd->else_count, 0);
  assert_int_equal (cd->assume, PS_ASSUME_BOTH);
  char buf[128];
  assert_string_equal (ps_cond_text (&g, c, buf, sizeof buf), "while handle 0x0000000000000001");
  /* The condition is a buffer the conditional reads. */
  assert_int_equal (g.nodes[c].reads_count, 1);
  assert_int_equal (g.access[g.nodes[c].reads_begin], cd->condition);
  assert_true (g.buffers[cd->condition].flags & PS_BUF_EXTERNAL);
  /* The body runs after the conditional and before what follows it. */
  assert_int_equal (g.nodes[step].cond, c);
  assert_int_equal (g.nodes[check].cond, c);
  assert_true (g.nodes[step].flags & PS_NODE_IN_THEN);
  assert_true (has_edge (&g, c, step));
  assert_true (has_edge (&g, check, fin));
  assert_false (has_edge (&g, c, fin));
  check_shape (&g);
  /* One pass of the loop, or none: the body is left out of the run. */
  double once = plan_verify_makespan (&g);
  g.conds[g.nodes[c].aux].assume = PS_ASSUME_ELSE;
  assert_true (ps_node_not_run (&g, step, NULL));
  assert_true (ps_node_not_run (&g, check, NULL));
  assert_false (ps_node_not_run (&g, fin, NULL));
  double none = plan_verify_makespan (&g);
  assert_true (none + 10000 < once);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

/* An IF with then and else bodies, a SWITCH of three cases, both in the
 * default flags' form (the type and the bodies on lines of the label),
 * the SWITCH in a child graph launched twice, and a nested IF inside the
 * SWITCH's second case; two conditionals share a handle. */
static const char branches_dump[] =
  "digraph dot {\n"
  "subgraph cluster_1 { label=\"graph_1\";\n"
  "\"graph_1_node_0\"[shape=\"octagon\" label=\"0\n_Z4prepv\n\"];\n"
  "\"graph_1_node_1\"[shape=\"diamond\" label=\"1\nCONDITIONAL\nIF\ngraph_2\ngraph_3\n\"];\n"
  "\"graph_1_node_2\"[shape=\"rectangle\" label=\"2\ngraph_4\n\"];\n"
  "\"graph_1_node_3\"[shape=\"rectangle\" label=\"3\ngraph_4\n\"];\n"
  "\"graph_1_node_0\" -> \"graph_1_node_1\";\n"
  "\"graph_1_node_1\" -> \"graph_1_node_2\";\n"
  "\"graph_1_node_2\" -> \"graph_1_node_3\";\n"
  "}\n"
  "subgraph cluster_2 { label=\"graph_2\"; \"graph_2_node_0\"[shape=\"octagon\" "
  "label=\"0\n_Z4thenv\n\"]; }\n"
  "subgraph cluster_3 { label=\"graph_3\"; \"graph_3_node_0\"[shape=\"octagon\" "
  "label=\"0\n_Z4elsev\n\"]; \"graph_3_node_1\"[shape=\"octagon\" label=\"1\n_Z5else2v\n\"]; "
  "\"graph_3_node_0\" -> \"graph_3_node_1\"; }\n"
  "subgraph cluster_4 { label=\"graph_4\";\n"
  "\"graph_4_node_0\"[shape=\"diamond\" label=\"0\nCONDITIONAL\nSWITCH\ngraph_5\ngraph_6\n"
  "graph_7\n\"];\n"
  "\"graph_4_node_1\"[shape=\"octagon\" label=\"1\n_Z5afterv\n\"];\n"
  "\"graph_4_node_0\" -> \"graph_4_node_1\";\n"
  "}\n"
  "subgraph cluster_5 { label=\"graph_5\"; \"graph_5_node_0\"[shape=\"octagon\" "
  "label=\"0\n_Z5case0v\n\"]; }\n"
  "subgraph cluster_6 { label=\"graph_6\"; \"graph_6_node_0\"[shape=\"diamond\" "
  "label=\"0\nCONDITIONAL\nIF\ngraph_8\n\"]; }\n"
  "subgraph cluster_7 { label=\"graph_7\"; \"graph_7_node_0\"[shape=\"octagon\" "
  "label=\"0\n_Z5case2v\n\"]; }\n"
  "subgraph cluster_8 { label=\"graph_8\"; \"graph_8_node_0\"[shape=\"octagon\" "
  "label=\"0\n_Z6nestedv\n\"]; }\n"
  "}\n";

static const ps_cond *
cond_of (const ps_graph *g, const char *name)
{
  uint32_t v = node_id (g, name);
  assert_int_equal (g->nodes[v].op, PS_OP_CONDITIONAL);
  return &g->conds[g->nodes[v].aux];
}

static bool
member (const ps_graph *g, const ps_cond *c, bool in_else, const char *name)
{
  uint32_t v = node_id (g, name);
  uint32_t b = in_else ? c->else_begin : c->then_begin;
  uint32_t n = in_else ? c->else_count : c->then_count;
  for (uint32_t i = 0; i < n; i++)
    if (g->cond_members[b + i] == v)
      return true;
  return false;
}

static void
core_dot_cond_branches (void **state)
{
  (void) state;
  ps_graph g;
  ps_diag d;
  int rc = load_text (&g, &d, branches_dump);
  ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  assert_int_equal (d.warnings, 0);
  /* prep, the IF and its 1 + 2 body nodes; graph_4 twice: the SWITCH as
   * two conditionals, case 0 (1), case 1 (a nested IF and its body), case
   * 2 (1) and after. */
  assert_int_equal (g.n_nodes, 1 + 1 + 3 + 2 * (2 + 1 + 2 + 1 + 1));
  const ps_cond *iff = cond_of (&g, "graph_1_node_1");
  assert_int_equal (iff->kind, PS_COND_IF);
  assert_int_equal (iff->then_count, 1);
  assert_int_equal (iff->else_count, 2);
  assert_true (member (&g, iff, false, "graph_2_node_0"));
  assert_true (member (&g, iff, true, "graph_3_node_0"));
  assert_true (member (&g, iff, true, "graph_3_node_1"));
  /* What follows the IF waits for both branches' last nodes. */
  uint32_t sw = node_id (&g, "graph_1_node_2/graph_4_node_0");
  assert_true (has_edge (&g, node_id (&g, "graph_2_node_0"), sw));
  assert_true (has_edge (&g, node_id (&g, "graph_3_node_1"), sw));
  /* The SWITCH: case 0 | rest, then case 1 | case 2. */
  for (int launch = 0; launch < 2; launch++) {
    const char *pre = launch ? "graph_1_node_3/" : "graph_1_node_2/";
    char n0[64], n1[64], b0[64], b1[64], b2[64], nested[64], nb[64], after[64];
    snprintf (n0, sizeof n0, "%sgraph_4_node_0", pre);
    snprintf (n1, sizeof n1, "%sgraph_4_node_0/case_1", pre);
    snprintf (b0, sizeof b0, "%sgraph_4_node_0/graph_5_node_0", pre);
    snprintf (b1, sizeof b1, "%sgraph_4_node_0/graph_6_node_0", pre);
    snprintf (b2, sizeof b2, "%sgraph_4_node_0/graph_7_node_0", pre);
    snprintf (nested, sizeof nested, "%s", b1);
    snprintf (nb, sizeof nb, "%sgraph_4_node_0/graph_6_node_0/graph_8_node_0", pre);
    snprintf (after, sizeof after, "%sgraph_4_node_1", pre);
    const ps_cond *c0 = cond_of (&g, n0), *c1 = cond_of (&g, n1);
    assert_int_equal (c0->kind, PS_COND_SWITCH);
    assert_int_equal (c0->case_index, 0);
    assert_int_equal (c1->case_index, 1);
    assert_true (member (&g, c0, false, b0));
    assert_true (member (&g, c0, true, n1));
    assert_true (member (&g, c1, false, nested));
    assert_true (member (&g, c1, true, b2));
    assert_int_equal (c0->then_count + c0->else_count, 2);
    /* The nested IF's body belongs to it, not to the case. */
    assert_false (member (&g, c1, false, nb));
    const ps_cond *in = cond_of (&g, nested);
    assert_true (member (&g, in, false, nb));
    assert_true (has_edge (&g, node_id (&g, b2), node_id (&g, after)));
    assert_true (has_edge (&g, node_id (&g, nb), node_id (&g, after)));
    /* Taking case 0 leaves the other cases, and what nests in them, out. */
    g.conds[g.nodes[node_id (&g, n0)].aux].assume = PS_ASSUME_THEN;
    assert_false (ps_node_not_run (&g, node_id (&g, b0), NULL));
    assert_true (ps_node_not_run (&g, node_id (&g, b2), NULL));
    assert_true (ps_node_not_run (&g, node_id (&g, nb), NULL));
    assert_false (ps_node_not_run (&g, node_id (&g, after), NULL));
  }
  char buf[128];
  assert_string_equal (ps_cond_text (&g, node_id (&g, "graph_1_node_3/graph_4_node_0/case_1"),
                                     buf, sizeof buf),
                       "switch graph_1_node_3/graph_4_node_0 condition case 1");
  /* Each SWITCH's cases test one condition. */
  assert_int_equal (cond_of (&g, "graph_1_node_3/graph_4_node_0")->condition,
                    cond_of (&g, "graph_1_node_3/graph_4_node_0/case_1")->condition);
  /* Conditionals without a handle test a condition of their own. */
  assert_int_equal (g.n_buffers, 1 + 2 * 2);
  check_shape (&g);
  plan_verify_makespan (&g);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static void
core_dot_cond_errors (void **state)
{
  (void) state;
  ps_graph g;
  ps_diag d;
  /* A body named twice. */
  assert_int_not_equal (load_text (&g, &d, "digraph { subgraph cluster_1 { label=graph_1; "
                                           "c [label=\"0\nCONDITIONAL\nSWITCH\ngraph_2\ngraph_2\"] }\n"
                                           "subgraph cluster_2 { label=graph_2; "
                                           "k [shape=octagon label=\"0\n_Z1kv\"] } }"),
                        0);
  assert_int_equal (d.errors, 1);
  assert_int_equal (d.entries[0].line, 1);
  assert_non_null (strstr (d.entries[0].message, "names body graph graph_2 twice"));
  ps_diag_free (&d);
  /* A loop whose body holds the loop. */
  assert_int_not_equal (load_text (&g, &d, "digraph { subgraph cluster_1 { label=graph_1; "
                                           "c [label=\"0\nCONDITIONAL\nWHILE\ngraph_2\"] }\n"
                                           "subgraph cluster_2 { label=graph_2; "
                                           "w [label=\"0\nCONDITIONAL\nWHILE\ngraph_2\"] } }"),
                        0);
  assert_int_equal (d.errors, 1);
  ps_diag_free (&d);
  /* Two handles, one condition: conditionals testing the same handle read
   * one buffer. */
  assert_int_equal (load_text (&g, &d, "digraph { subgraph cluster_1 { label=graph_1; "
                                       "a [label=\"{CONDITIONAL | {{type | handle} | {IF | 0x9}}}\"]; "
                                       "b [label=\"{CONDITIONAL | {{type | handle} | {IF | 0x9}}}\"]; "
                                       "a -> b } }"),
                    0);
  assert_int_equal (g.n_buffers, 1);
  assert_string_equal (ps_buffer_name (&g, 0), "handle 0x9");
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static void
core_dot_plan_and_verify (void **state)
{
  (void) state;
  static const char *const dumps[] = { "einsummable_cuda_graph.dot",
                                       "einsummable_cuda_graph_km.dot",
                                       "gputrace_mlx_nested_graph.dot" };
  for (size_t i = 0; i < 3; i++) {
    ps_graph g;
    ps_diag d;
    assert_int_equal (load_real (&g, &d, dumps[i]), 0);
    ps_plan_options o;
    ps_plan_options_init (&o);
    ps_plan p;
    int rc = ps_plan_build (&p, &g, &o, &d);
    ps_diag_print (&d, stderr);
    assert_int_equal (rc, 0);
    assert_int_equal (p.kernels_before, g.n_kernels);
    char first[512] = "";
    size_t bad = ps_plan_verify (&p, keep_first, first, 1);
    if (bad != 0)
      fail_msg ("%s: %zu violations, first: %s", dumps[i], bad, first);
    ps_plan_free (&p);
    ps_graph_free (&g);
    ps_diag_free (&d);
  }
}

int
main (int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_dot_verbose_types),
    cmocka_unit_test (core_dot_default_flags),
    cmocka_unit_test (core_dot_errors),
    cmocka_unit_test (core_dot_detection),
    cmocka_unit_test (core_dot_deep_children),
    cmocka_unit_test (core_dot_cond_while),
    cmocka_unit_test (core_dot_cond_branches),
    cmocka_unit_test (core_dot_cond_errors),
    cmocka_unit_test (core_dot_edge_limit),
  };
  /* The real dumps of ../shared/data/real/cudagraph_dot. */
  const struct CMUnitTest data_tests[] = {
    cmocka_unit_test (core_dot_real_einsummable),
    cmocka_unit_test (core_dot_real_nested),
    cmocka_unit_test (core_dot_truncations),
    cmocka_unit_test (core_dot_plan_and_verify),
  };
  PS_TEST_MAIN_WITH_DATA (argc, argv, "/core/dot-import", tests, data_tests, NULL, NULL);
}
