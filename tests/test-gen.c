/* test-gen.c: the synthetic graph generator (/core/gen): every shape loads
 * cleanly at every size, hits the requested node count, is deterministic,
 * and carries the extras that were asked for. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-gen.h"
#include "ps-graph.h"
#include "ps-import.h"

static char *
generate (const ps_gen_options *o, size_t *len)
{
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream (&text, &n);
  assert_non_null (f);
  assert_int_equal (ps_gen_write (o, f), 0);
  assert_int_equal (fclose (f), 0);
  *len = n;
  return text;
}

/* Generates and loads; fails the test on any error or warning. */
static void
generate_and_load (const ps_gen_options *o, ps_graph *g)
{
  size_t len;
  char *text = generate (o, &len);
  ps_diag d;
  ps_diag_init (&d, "gen.json");
  ps_graph_init (g);
  int r = ps_import_graph_mem (g, text, len, "gen.json", &d);
  if (r != 0 || d.errors || d.warnings) {
    fprintf (stderr, "%s, %u nodes, seed %llu:\n", ps_gen_shape_name (o->shape), o->nodes,
             (unsigned long long) o->seed);
    ps_diag_print (&d, stderr);
  }
  assert_int_equal (r, 0);
  assert_int_equal (d.errors, 0);
  assert_int_equal (d.warnings, 0);
  ps_diag_free (&d);
  free (text);
}

static void
assert_count_close (uint32_t got, uint32_t want)
{
  uint32_t tol = want / 33; /* 3 % */
  assert_true (got >= 1);
  assert_true (got + tol >= want && got <= want + tol);
}

static void
core_gen_shapes_load (void **state)
{
  static const uint32_t sizes[] = { 1, 2, 3, 5, 8, 13, 16, 40, 100, 777, 5000, 30000 };
  for (int s = 0; s < PS_GEN__COUNT; s++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
      for (int extras = 0; extras < 2; extras++) {
        ps_gen_options o;
        ps_gen_options_init (&o);
        o.shape = (ps_gen_shape) s;
        o.nodes = sizes[i];
        o.seed = 1000 + i;
        o.events = o.barriers = o.conditionals = o.pins = extras;
        ps_graph g;
        generate_and_load (&o, &g);
        assert_count_close (g.n_nodes, sizes[i]);
        ps_graph_free (&g);
      }
}

static void
core_gen_many_seeds (void **state)
{
  for (int s = 0; s < PS_GEN__COUNT; s++)
    for (uint64_t seed = 0; seed < 40; seed++) {
      ps_gen_options o;
      ps_gen_options_init (&o);
      o.shape = (ps_gen_shape) s;
      o.nodes = 50 + (uint32_t) (seed * 37 % 400);
      o.seed = seed;
      o.pin_streams = 1 + (uint32_t) (seed % 4);
      ps_graph g;
      generate_and_load (&o, &g);
      assert_count_close (g.n_nodes, o.nodes);
      ps_graph_free (&g);
    }
}

static void
core_gen_deterministic (void **state)
{
  for (int s = 0; s < PS_GEN__COUNT; s++) {
    ps_gen_options o;
    ps_gen_options_init (&o);
    o.shape = (ps_gen_shape) s;
    o.nodes = 3000;
    o.seed = 42;
    size_t la, lb, lc;
    char *a = generate (&o, &la);
    char *b = generate (&o, &lb);
    o.seed = 43;
    char *c = generate (&o, &lc);
    assert_int_equal (la, lb);
    assert_memory_equal (a, b, la);
    assert_true (la != lc || memcmp (a, c, la) != 0);
    free (a);
    free (b);
    free (c);
  }
}

typedef struct op_counts {
  uint32_t op[PS_OP__COUNT];
  uint32_t pinned, bad_pin, waits_paired;
} op_counts;

static op_counts
count_ops (const ps_graph *g, uint32_t pin_streams)
{
  op_counts c;
  memset (&c, 0, sizeof c);
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *n = &g->nodes[v];
    c.op[n->op]++;
    if (n->stream >= 0) {
      c.pinned++;
      if ((uint32_t) n->stream >= pin_streams)
        c.bad_pin++;
    }
    if (n->op == PS_OP_EVENT_WAIT)
      for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        if (g->pred_kind[e] & PS_EDGE_EVENT) {
          c.waits_paired++;
          break;
        }
  }
  return c;
}

static void
core_gen_extras (void **state)
{
  for (int s = 0; s < PS_GEN__COUNT; s++) {
    ps_gen_options o;
    ps_gen_options_init (&o);
    o.shape = (ps_gen_shape) s;
    o.nodes = 2000;
    o.pin_streams = 3;
    ps_graph g;
    generate_and_load (&o, &g);
    op_counts c = count_ops (&g, 3);
    assert_true (c.op[PS_OP_EVENT_RECORD] >= 10);
    assert_int_equal (c.op[PS_OP_EVENT_WAIT], c.op[PS_OP_EVENT_RECORD]);
    assert_int_equal (c.waits_paired, c.op[PS_OP_EVENT_WAIT]);
    /* Event names are reused: far fewer names than records. */
    assert_true (g.n_events >= 1 && g.n_events < c.op[PS_OP_EVENT_RECORD]);
    assert_true (c.op[PS_OP_BARRIER] >= 1);
    assert_true (c.op[PS_OP_CONDITIONAL] >= 5);
    assert_int_equal (g.n_conds, c.op[PS_OP_CONDITIONAL]);
    assert_true (g.n_cond_members >= g.n_conds);
    assert_true (c.pinned >= 20);
    assert_int_equal (c.bad_pin, 0);
    ps_graph_free (&g);

    /* Each extra alone, and none. */
    for (int only = 0; only < 5; only++) {
      o.events = only == 0;
      o.barriers = only == 1;
      o.conditionals = only == 2;
      o.pins = only == 3;
      generate_and_load (&o, &g);
      c = count_ops (&g, 3);
      assert_int_equal (c.op[PS_OP_EVENT_RECORD] > 0, only == 0);
      assert_int_equal (c.op[PS_OP_BARRIER] > 0, only == 1);
      assert_int_equal (c.op[PS_OP_CONDITIONAL] > 0, only == 2);
      assert_int_equal (c.pinned > 0, only == 3);
      assert_int_equal (g.n_nodes, 2000);
      ps_graph_free (&g);
    }
  }
}

/* Longest path in edges; node ids are a topological order. */
static uint32_t
depth (const ps_graph *g, uint32_t *max_out_degree)
{
  uint32_t *d = calloc (g->n_nodes, sizeof *d), best = 0, deg = 0;
  assert_non_null (d);
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
      if (d[g->pred[e]] + 1 > d[v])
        d[v] = d[g->pred[e]] + 1;
    if (d[v] > best)
      best = d[v];
    if (g->succ_off[v + 1] - g->succ_off[v] > deg)
      deg = g->succ_off[v + 1] - g->succ_off[v];
  }
  free (d);
  *max_out_degree = deg;
  return best;
}

static void
core_gen_shape_structure (void **state)
{
  ps_gen_options o;
  ps_gen_options_init (&o);
  o.events = o.barriers = o.conditionals = o.pins = false;
  o.nodes = 4000;
  ps_graph g;
  uint32_t deg, dep;

  o.shape = PS_GEN_CHAIN; /* one dependent chain through nearly every node */
  generate_and_load (&o, &g);
  dep = depth (&g, &deg);
  assert_true (dep >= g.n_nodes * 9 / 10 && dep < g.n_nodes);
  uint32_t fusible = 0;
  for (uint32_t v = 0; v < g.n_nodes; v++)
    fusible += (g.nodes[v].flags & PS_NODE_FUSIBLE) != 0;
  assert_true (fusible > g.n_nodes / 2 && fusible < g.n_nodes);
  ps_graph_free (&g);

  o.shape = PS_GEN_FANOUT; /* wide and shallow */
  generate_and_load (&o, &g);
  dep = depth (&g, &deg);
  assert_true (deg >= 300);
  assert_true (dep < 40);
  ps_graph_free (&g);

  o.shape = PS_GEN_LAYERED; /* about sqrt(N) layers */
  generate_and_load (&o, &g);
  dep = depth (&g, &deg);
  assert_true (dep >= 20 && dep <= 200);
  ps_graph_free (&g);

  o.shape = PS_GEN_TRANSFORMER; /* 16-node blocks, Q/K/V in parallel */
  generate_and_load (&o, &g);
  dep = depth (&g, &deg);
  assert_true (dep > 4000 / 16 * 10 && dep < 4000 / 16 * 16);
  uint32_t gemms = 0;
  for (uint32_t v = 0; v < g.n_nodes; v++)
    if (g.nodes[v].op == PS_OP_KERNEL
        && strcmp (ps_graph_str (&g, g.kernels[g.nodes[v].aux].function), "gemm") == 0)
      gemms++;
  assert_true (gemms >= 4000 / 16 * 6 - 6);
  ps_graph_free (&g);
}

static void
core_gen_shape_names (void **state)
{
  for (int s = 0; s < PS_GEN__COUNT; s++) {
    ps_gen_shape back;
    assert_int_equal (ps_gen_shape_parse (ps_gen_shape_name ((ps_gen_shape) s), &back), 0);
    assert_int_equal (back, s);
  }
  ps_gen_shape x = PS_GEN_CHAIN;
  assert_int_equal (ps_gen_shape_parse ("ring", &x), PS_EINVAL);
  assert_int_equal (ps_gen_shape_parse ("", &x), PS_EINVAL);
  assert_int_equal (ps_gen_shape_parse ("Chain", &x), PS_EINVAL);
}

static void
core_gen_bad_options (void **state)
{
  ps_gen_options o;
  ps_gen_options_init (&o);
  FILE *f = fopen ("/dev/null", "w");
  assert_non_null (f);
  o.nodes = 0;
  assert_int_equal (ps_gen_write (&o, f), PS_EINVAL);
  o.nodes = PS_MAX_NODES + 1;
  assert_int_equal (ps_gen_write (&o, f), PS_EINVAL);
  o.nodes = 10;
  o.shape = PS_GEN__COUNT;
  assert_int_equal (ps_gen_write (&o, f), PS_EINVAL);
  fclose (f);

  /* A stream that cannot be written is an I/O error, not silence. */
  f = fopen ("/dev/null", "r");
  assert_non_null (f);
  o.shape = PS_GEN_LAYERED;
  o.nodes = 5000;
  assert_int_equal (ps_gen_write (&o, f), PS_EIO);
  fclose (f);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_gen_shapes_load),
    cmocka_unit_test (core_gen_many_seeds),
    cmocka_unit_test (core_gen_deterministic),
    cmocka_unit_test (core_gen_extras),
    cmocka_unit_test (core_gen_shape_structure),
    cmocka_unit_test (core_gen_shape_names),
    cmocka_unit_test (core_gen_bad_options),
  };
  return cmocka_run_group_tests_name ("/core/gen", tests, NULL, NULL);
}
