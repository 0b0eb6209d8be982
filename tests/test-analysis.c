/* test-analysis.c: topological order, levels, ASAP/ALAP, slack, the
 * critical path and the default cost model, on hand-made graphs with exact
 * expected values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "ps-analysis.h"
#include "ps-test-graph.h"

/* Every edge goes from an earlier to a later position of a->topo. */
static void
assert_topological (const ps_graph *g, const ps_analysis *a)
{
  uint32_t *pos = malloc (g->n_nodes * sizeof *pos);
  uint8_t *seen = calloc (g->n_nodes, 1);
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    assert_true (a->topo[i] < g->n_nodes);
    assert_false (seen[a->topo[i]]);
    seen[a->topo[i]] = 1;
    pos[a->topo[i]] = i;
  }
  for (uint32_t u = 0; u < g->n_nodes; u++)
    for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++)
      assert_true (pos[u] < pos[g->succ[e]]);
  free (pos);
  free (seen);
}

static uint32_t
costed (tg *t, const char *name, double ns)
{
  uint32_t v = tg_node (t, name, PS_OP_HOST);
  tg_cost (t, v, ns);
  return v;
}

static void
core_analysis_diamond (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "diamond");
  uint32_t a = costed (&t, "a", 10), b = costed (&t, "b", 20), c = costed (&t, "c", 5),
           d = costed (&t, "d", 7);
  tg_edge (&t, a, b, PS_EDGE_AFTER);
  tg_edge (&t, a, c, PS_EDGE_AFTER);
  tg_edge (&t, b, d, PS_EDGE_AFTER);
  tg_edge (&t, c, d, PS_EDGE_AFTER);
  tg_finish (&t, false);

  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_topological (&t.g, &an);
  assert_int_equal (an.n_levels, 3);
  assert_int_equal (an.level[a], 0);
  assert_int_equal (an.level[b], 1);
  assert_int_equal (an.level[c], 1);
  assert_int_equal (an.level[d], 2);
  assert_true (an.asap[a] == 0 && an.asap[b] == 10 && an.asap[c] == 10 && an.asap[d] == 30);
  assert_true (an.alap[a] == 0 && an.alap[b] == 10 && an.alap[c] == 25 && an.alap[d] == 30);
  assert_true (an.slack[a] == 0 && an.slack[b] == 0 && an.slack[c] == 15 && an.slack[d] == 0);
  assert_true (an.length_ns == 37);
  assert_int_equal (an.n_critical, 3);
  assert_int_equal (an.critical[0], a);
  assert_int_equal (an.critical[1], b);
  assert_int_equal (an.critical[2], d);
  ps_analysis_free (&an);
  tg_free (&t);
}

static void
core_analysis_chain (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "chain");
  char name[8];
  for (uint32_t i = 0; i < 5; i++) {
    snprintf (name, sizeof name, "n%u", i);
    costed (&t, name, i + 1);
    if (i)
      tg_edge (&t, i - 1, i, PS_EDGE_RAW);
  }
  tg_finish (&t, false);
  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_true (an.length_ns == 15);
  assert_int_equal (an.n_levels, 5);
  assert_int_equal (an.n_critical, 5);
  double start = 0;
  for (uint32_t i = 0; i < 5; i++) {
    assert_int_equal (an.topo[i], i);
    assert_int_equal (an.critical[i], i);
    assert_true (an.asap[i] == start && an.alap[i] == start && an.slack[i] == 0);
    start += i + 1;
  }
  ps_analysis_free (&an);
  tg_free (&t);
}

static void
core_analysis_two_chains (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "two chains");
  /* Interleaved in program order: the long chain x, the short chain y. */
  uint32_t x1 = costed (&t, "x1", 10), y1 = costed (&t, "y1", 5), x2 = costed (&t, "x2", 10),
           y2 = costed (&t, "y2", 5);
  tg_edge (&t, x1, x2, PS_EDGE_AFTER);
  tg_edge (&t, y1, y2, PS_EDGE_AFTER);
  tg_finish (&t, false);
  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_topological (&t.g, &an);
  assert_true (an.length_ns == 20);
  assert_true (an.asap[y1] == 0 && an.asap[y2] == 5);
  assert_true (an.alap[y1] == 10 && an.alap[y2] == 15);
  assert_true (an.slack[y1] == 10 && an.slack[y2] == 10);
  assert_true (an.slack[x1] == 0 && an.slack[x2] == 0);
  assert_int_equal (an.n_critical, 2);
  assert_int_equal (an.critical[0], x1);
  assert_int_equal (an.critical[1], x2);
  assert_int_equal (an.n_levels, 2);
  ps_analysis_free (&an);
  tg_free (&t);
}

/* Two equally long branches: the critical path takes the lower id, and a
 * cost array overrides the graph's costs. */
static void
core_analysis_tie_break_and_cost_array (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "tie");
  uint32_t a = costed (&t, "a", 1), c = costed (&t, "c", 4), b = costed (&t, "b", 4),
           d = costed (&t, "d", 1);
  tg_edge (&t, a, b, PS_EDGE_AFTER);
  tg_edge (&t, a, c, PS_EDGE_AFTER);
  tg_edge (&t, b, d, PS_EDGE_AFTER);
  tg_edge (&t, c, d, PS_EDGE_AFTER);
  tg_finish (&t, false);
  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_int_equal (an.n_critical, 3);
  assert_int_equal (an.critical[1], c); /* c has the lower id */
  ps_analysis_free (&an);

  double cost[4];
  cost[a] = 1;
  cost[b] = 9;
  cost[c] = 4;
  cost[d] = 1;
  assert_int_equal (ps_analysis_run (&an, &t.g, cost), 0);
  assert_true (an.length_ns == 11);
  assert_int_equal (an.critical[1], b);
  assert_true (an.slack[c] == 5);
  ps_analysis_free (&an);
  tg_free (&t);
}

/* Node ids need not be a topological order. */
static void
core_analysis_ids_not_topological (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "reversed");
  uint32_t z = costed (&t, "z", 3), y = costed (&t, "y", 2), x = costed (&t, "x", 1);
  tg_edge (&t, x, y, PS_EDGE_IMPORTED);
  tg_edge (&t, y, z, PS_EDGE_IMPORTED);
  tg_finish (&t, false);
  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_int_equal (an.topo[0], x);
  assert_int_equal (an.topo[2], z);
  assert_true (an.asap[z] == 3 && an.length_ns == 6);
  assert_int_equal (an.n_critical, 3);
  assert_int_equal (an.critical[0], x);
  assert_int_equal (an.critical[2], z);
  ps_analysis_free (&an);
  tg_free (&t);
}

static void
core_analysis_cycle (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "cycle");
  uint32_t a = costed (&t, "a", 1), b = costed (&t, "b", 1), c = costed (&t, "c", 1);
  tg_edge (&t, a, b, PS_EDGE_IMPORTED);
  tg_edge (&t, b, c, PS_EDGE_IMPORTED);
  tg_edge (&t, c, b, PS_EDGE_IMPORTED);
  tg_finish (&t, false);
  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), PS_ECYCLE);
  assert_null (an.topo);
  ps_analysis_free (&an);
  tg_free (&t);
}

static void
core_analysis_default_costs (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "costs");
  uint32_t big = tg_buf (&t, "big", 3000000, false);      /* 1 us at 3 TB/s */
  uint32_t host_in = tg_buf (&t, "in", 50000000, true);   /* 1 ms at 50 GB/s */
  uint32_t gemm = tg_kernel (&t, "gemm", "gemm");
  t.g.kernels[t.g.nodes[gemm].aux].flops = 5e10; /* 1 ms at 50 TFLOP/s */
  tg_read (&t, gemm, big);
  uint32_t stream_k = tg_kernel (&t, "copy", "copy");
  tg_read (&t, stream_k, big);
  tg_write (&t, stream_k, big);
  uint32_t up = tg_node (&t, "up", PS_OP_MEMCPY);
  t.g.nodes[up].dir = PS_COPY_H2D;
  tg_write (&t, up, host_in);
  uint32_t d2d = tg_node (&t, "d2d", PS_OP_MEMCPY);
  t.g.nodes[d2d].dir = PS_COPY_D2D;
  t.g.nodes[d2d].bytes = 1500000; /* 1 us at 1.5 TB/s */
  uint32_t cb = tg_node (&t, "cb", PS_OP_HOST);
  uint32_t ev = tg_event (&t, "e");
  uint32_t rec = tg_event_node (&t, "rec", PS_OP_EVENT_RECORD, ev);
  uint32_t given = tg_kernel (&t, "given", "f");
  tg_cost (&t, given, 123);
  tg_finish (&t, true);

  assert_true (fabs (ps_node_cost_default (&t.g, gemm) - 1002000) < 1e-6);
  assert_true (fabs (ps_node_cost_default (&t.g, stream_k) - 4000) < 1e-6);
  assert_true (fabs (ps_node_cost_default (&t.g, up) - 1002000) < 1e-6);
  assert_true (fabs (ps_node_cost_default (&t.g, d2d) - 3000) < 1e-6);
  assert_true (ps_node_cost_default (&t.g, cb) == 5000);
  assert_true (ps_node_cost_default (&t.g, rec) == 500);

  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_true (an.cost[given] == 123); /* cost_ns wins over the model */
  assert_true (fabs (an.cost[gemm] - 1002000) < 1e-6);
  ps_analysis_free (&an);
  tg_free (&t);
}

/* Hostile costs stay finite: huge values are clamped, NaN and negatives
 * count as 0. */
static void
core_analysis_hostile_costs (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "hostile");
  uint32_t a = costed (&t, "a", 1e308), b = costed (&t, "b", 1e308), c = costed (&t, "c", 1);
  tg_edge (&t, a, b, PS_EDGE_AFTER);
  tg_edge (&t, b, c, PS_EDGE_AFTER);
  tg_finish (&t, false);
  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_true (isfinite (an.length_ns));
  for (uint32_t v = 0; v < 3; v++)
    assert_true (isfinite (an.alap[v]) && isfinite (an.slack[v]));
  assert_int_equal (an.n_critical, 3);
  ps_analysis_free (&an);
  double cost[3] = { NAN, -5, 2 };
  assert_int_equal (ps_analysis_run (&an, &t.g, cost), 0);
  assert_true (an.length_ns == 2);
  ps_analysis_free (&an);
  tg_free (&t);
}

/* A wide, deep random DAG: slack is never negative, nodes on the critical
 * path have zero slack, consecutive ones are joined by tight edges, and
 * the path's costs add up to the length. */
static void
core_analysis_random_dag_properties (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "random");
  uint32_t n = 20000;
  uint64_t x = 88172645463325252ull;
  char name[16];
  for (uint32_t v = 0; v < n; v++) {
    snprintf (name, sizeof name, "n%u", v);
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    costed (&t, name, (double) (x % 1000));
    for (int k = 0; k < 3 && v > 0; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      uint32_t span = v < 50 ? v : 50;
      tg_edge (&t, v - 1 - (uint32_t) (x % span), v, PS_EDGE_AFTER);
    }
  }
  tg_finish (&t, false);
  ps_analysis an;
  assert_int_equal (ps_analysis_run (&an, &t.g, NULL), 0);
  assert_topological (&t.g, &an);
  double sum = 0;
  for (uint32_t v = 0; v < n; v++)
    assert_true (an.slack[v] >= 0 && an.asap[v] + an.cost[v] <= an.length_ns);
  assert_true (an.n_critical > 0);
  assert_true (t.g.pred_off[an.critical[0] + 1] == t.g.pred_off[an.critical[0]]);
  uint32_t last = an.critical[an.n_critical - 1];
  assert_true (t.g.succ_off[last + 1] == t.g.succ_off[last]);
  for (uint32_t i = 0; i < an.n_critical; i++) {
    uint32_t v = an.critical[i];
    assert_true (an.slack[v] == 0);
    sum += an.cost[v];
    if (i + 1 < an.n_critical)
      assert_true (an.asap[an.critical[i + 1]] == an.asap[v] + an.cost[v]);
  }
  assert_true (sum == an.length_ns);
  ps_analysis_free (&an);
  tg_free (&t);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_analysis_diamond),
    cmocka_unit_test (core_analysis_chain),
    cmocka_unit_test (core_analysis_two_chains),
    cmocka_unit_test (core_analysis_tie_break_and_cost_array),
    cmocka_unit_test (core_analysis_ids_not_topological),
    cmocka_unit_test (core_analysis_cycle),
    cmocka_unit_test (core_analysis_default_costs),
    cmocka_unit_test (core_analysis_hostile_costs),
    cmocka_unit_test (core_analysis_random_dag_properties),
  };
  return cmocka_run_group_tests_name ("/core/analysis", tests, NULL, NULL);
}
