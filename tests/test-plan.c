/* test-plan.c: the compile pipeline (fusion, streams, sync, memory pool):
 * property tests on generated graphs, and the hand cases that broke the
 * original design. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-cost.h"
#include "ps-gen.h"
#include "ps-import.h"
#include "ps-test-graph.h"
#include "ps-test-gen.h"
#include "ps-graph.h"
#include "ps-plan.h"
#include "ps-pool-peak.h"
#include "ps-sim.h"
#include "ps-verify.h"

/* ---- helpers ---- */

static void
print_report (void *ctx, const char *message)
{
  (void) ctx;
  fprintf (stderr, "  verify: %s\n", message);
}

static void
load_string (ps_graph *g, const char *json)
{
  ps_diag d;
  ps_diag_init (&d, "test.json");
  int rc = ps_import_graph_mem (g, json, strlen (json), "test.json", &d);
  if (rc < 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static int
plan (ps_plan *p, const ps_graph *g, uint32_t streams, bool fusion, ps_diag *d)
{
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.streams = streams;
  o.fusion = fusion;
  return ps_plan_build (p, g, &o, d);
}

static void
plan_ok (ps_plan *p, const ps_graph *g, uint32_t streams, bool fusion)
{
  ps_diag d;
  ps_diag_init (&d, "test.json");
  int rc = plan (p, g, streams, fusion, &d);
  if (rc < 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static uint32_t
node_id (const ps_graph *g, const char *name)
{
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (strcmp (ps_node_name (g, v), name) == 0)
      return v;
  fail_msg ("no node %s", name);
  return PS_NONE;
}

static uint32_t
buffer_id (const ps_graph *g, const char *name)
{
  for (uint32_t b = 0; b < g->n_buffers; b++)
    if (strcmp (ps_buffer_name (g, b), name) == 0)
      return b;
  fail_msg ("no buffer %s", name);
  return PS_NONE;
}

static uint32_t
step_of (const ps_plan *p, const char *name)
{
  return p->node_step[node_id (p->graph, name)];
}

/* Vector clocks of the emitted steps, by CUDA semantics (as the verifier
 * derives them): clk[i * S + t] is 1 + the last step of stream t that step
 * i is known to follow (its own stream: i + 1).  Also counts the planner
 * waits that are not needed: those that learn nothing new (implied by
 * earlier waits) and those implied by the other waits of the same run of
 * waits before a launch. */
static uint32_t *
step_clocks (const ps_plan *p, uint32_t *implied)
{
  uint32_t S = p->options.streams, n = p->n_steps;
  uint32_t *clk = calloc ((size_t) (n ? n : 1) * S, sizeof *clk);
  uint32_t *cur = calloc ((size_t) S * S, sizeof *cur);
  uint32_t *rec = malloc ((p->n_events ? p->n_events : 1) * sizeof *rec);
  uint32_t other[64];
  assert_non_null (clk);
  assert_non_null (cur);
  assert_non_null (rec);
  for (uint32_t e = 0; e < p->n_events; e++)
    rec[e] = PS_NONE;
  *implied = 0;
  for (uint32_t i = 0; i < n; i++) {
    const ps_step *st = &p->steps[i];
    uint32_t s = st->stream, *c = cur + (size_t) s * S;
    assert_true (s < S);
    if (st->op == PS_OP_EVENT_WAIT && st->synthetic
        && (i == 0 || !(p->steps[i - 1].op == PS_OP_EVENT_WAIT && p->steps[i - 1].synthetic
                        && p->steps[i - 1].stream == s))) {
      /* The first wait of a run: is any wait of the run implied by the
       * clock before the run and the run's other waits? */
      uint32_t j = i;
      while (j < n && p->steps[j].op == PS_OP_EVENT_WAIT && p->steps[j].synthetic
             && p->steps[j].stream == s)
        j++;
      for (uint32_t k = i; k < j; k++) {
        memcpy (other, c, S * sizeof *c);
        for (uint32_t m = i; m < j; m++) {
          uint32_t r = m == k || p->steps[m].event >= p->n_events ? PS_NONE
                                                                  : rec[p->steps[m].event];
          for (uint32_t t = 0; r != PS_NONE && t < S; t++)
            if (clk[(size_t) r * S + t] > other[t])
              other[t] = clk[(size_t) r * S + t];
        }
        uint32_t r = p->steps[k].event < p->n_events ? rec[p->steps[k].event] : PS_NONE;
        bool learns = false;
        for (uint32_t t = 0; r != PS_NONE && t < S; t++)
          learns |= clk[(size_t) r * S + t] > other[t];
        if (r != PS_NONE && !learns)
          (*implied)++;
      }
    }
    if (st->op == PS_OP_EVENT_WAIT) {
      assert_true (st->event < p->n_events);
      uint32_t r = rec[st->event];
      assert_int_not_equal (r, PS_NONE);
      for (uint32_t t = 0; t < S; t++)
        if (clk[(size_t) r * S + t] > c[t])
          c[t] = clk[(size_t) r * S + t];
    }
    c[s] = i + 1;
    memcpy (clk + (size_t) i * S, c, S * sizeof *c);
    if (st->op == PS_OP_EVENT_RECORD)
      rec[st->event] = i;
  }
  free (cur);
  free (rec);
  return clk;
}

static bool
happens_before (const ps_plan *p, const uint32_t *clk, uint32_t a, uint32_t b)
{
  uint32_t S = p->options.streams;
  return a < b && clk[(size_t) b * S + p->steps[a].stream] >= a + 1;
}

/* Everything a valid, minimal plan must satisfy. */
static void
check_plan (const ps_plan *p)
{
  size_t bad = ps_plan_verify (p, print_report, NULL, 5);
  assert_int_equal (bad, 0);
  uint32_t implied;
  free (step_clocks (p, &implied));
  assert_int_equal (implied, 0);
  ps_pool_peak pk;
  assert_int_equal (ps_pool_peak_of (p, &pk), 0);
  assert_true (p->pool_bytes >= pk.bytes);
  assert_true (p->streams_used <= p->options.streams);
  assert_true (p->kernels_after <= p->kernels_before);
  uint32_t fused_nodes = 0, kernel_steps = 0;
  for (uint32_t i = 0; i < p->n_steps; i++) {
    if (p->steps[i].op == PS_OP_KERNEL)
      kernel_steps++;
    if (p->steps[i].nodes_count > 1) {
      fused_nodes += p->steps[i].nodes_count;
      assert_true (p->steps[i].nodes_count <= 16);
      assert_non_null (p->strings);
      const char *fn = p->strings + p->steps[i].function;
      assert_true (strncmp (fn, "fused_", 6) == 0);
      assert_true (strlen (fn) < 160);
    }
  }
  assert_int_equal (kernel_steps, p->kernels_after);
  if (!p->options.fusion)
    assert_int_equal (fused_nodes, 0);
}

/* ---- property tests ---- */

/* Under ASan+UBSan the property tests run a third of the seeds and of the
 * large graphs: the same code, 3 to 5 times slower, and the normal build
 * runs them all. */
#if defined(__SANITIZE_ADDRESS__)
#define SEEDS(n) ((n) / 3)
#else
#define SEEDS(n) (n)
#endif

static void
property_run (ps_gen_shape shape, uint32_t seeds)
{
  uint32_t plans = 0, fused = 0;
  for (uint32_t seed = 1; seed <= seeds; seed++) {
    ps_gen_options go;
    ps_gen_options_init (&go);
    go.shape = shape;
    go.nodes = 10 + (seed * 37) % 291;
    go.seed = seed * 7919u + shape;
    go.pin_streams = 1 + seed % 3;
    ps_graph g;
    ps_graph_init (&g);
    assert_int_equal (pt_gen_graph (&g, &go), 0);
    int32_t max_pin = -1;
    for (uint32_t v = 0; v < g.n_nodes; v++)
      if (g.nodes[v].stream > max_pin)
        max_pin = g.nodes[v].stream;
    for (uint32_t streams = 1; streams <= 8; streams++)
      for (int fusion = 0; fusion < 2; fusion++) {
        ps_plan p;
        ps_diag d;
        ps_diag_init (&d, "gen.json");
        int rc = plan (&p, &g, streams, fusion, &d);
        ps_diag_free (&d);
        if (max_pin >= (int32_t) streams) {
          assert_int_equal (rc, PS_EPIN);
          continue;
        }
        assert_int_equal (rc, 0);
        check_plan (&p);
        plans++;
        fused += p.kernels_before - p.kernels_after;
        ps_plan_free (&p);
      }
    ps_graph_free (&g);
  }
  assert_true (plans > seeds * 8);
  if (shape != PS_GEN_FANOUT)
    assert_true (fused > 0); /* fusion really happens on these shapes */
}

/* Fewer, larger graphs: fusion and renumbering reach further there. */
static void
core_plan_property_large (void **state)
{
  (void) state;
  for (uint32_t seed = 1; seed <= SEEDS (24); seed++) {
    ps_gen_options go;
    ps_gen_options_init (&go);
    go.shape = (ps_gen_shape) (seed % PS_GEN__COUNT);
    go.nodes = 1000 + (seed * 997) % 4000;
    go.seed = seed * 104729u;
    go.pin_streams = 2;
    ps_graph g;
    ps_graph_init (&g);
    assert_int_equal (pt_gen_graph (&g, &go), 0);
    static const uint32_t streams[] = { 2, 3, 4, 8 };
    for (size_t k = 0; k < sizeof streams / sizeof streams[0]; k++)
      for (int fusion = 0; fusion < 2; fusion++) {
        ps_plan p;
        plan_ok (&p, &g, streams[k], fusion);
        check_plan (&p);
        ps_plan_free (&p);
      }
    ps_graph_free (&g);
  }
}

static void
core_plan_property_chain (void **state)
{
  (void) state;
  property_run (PS_GEN_CHAIN, SEEDS (300));
}

static void
core_plan_property_fanout (void **state)
{
  (void) state;
  property_run (PS_GEN_FANOUT, SEEDS (300));
}

static void
core_plan_property_layered (void **state)
{
  (void) state;
  property_run (PS_GEN_LAYERED, SEEDS (300));
}

static void
core_plan_property_transformer (void **state)
{
  (void) state;
  property_run (PS_GEN_TRANSFORMER, SEEDS (300));
}

/* ---- hand cases ---- */

#define HEADER "{\"format\": \"planscope-graph\", \"version\": 1, "

/* The spec's example: act (gelu) and scale fuse into fused_gelu_scale. */
static void
core_plan_spec_example (void **state)
{
  (void) state;
  static const char json[] = HEADER "\"name\": \"mlp\", \"buffers\": ["
    "{\"name\": \"x\", \"bytes\": 4194304, \"external\": true},"
    "{\"name\": \"h\", \"bytes\": 4194304},"
    "{\"name\": \"y\", \"bytes\": 4194304, \"external\": true}],"
    "\"nodes\": ["
    "{\"name\": \"upload\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"x\"]},"
    "{\"name\": \"fc1\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": [64,16],"
    " \"block\": 256, \"reads\": [\"x\"], \"writes\": [\"h\"], \"flops\": 2.1e9},"
    "{\"name\": \"act\", \"op\": \"kernel\", \"function\": \"gelu\", \"impl\": \"gelu\","
    " \"fusible\": true, \"grid\": 4096, \"block\": 256, \"reads\": [\"h\"], \"writes\": [\"h\"]},"
    "{\"name\": \"scale\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\","
    " \"fusible\": true, \"params\": {\"alpha\": 0.5}, \"grid\": 4096, \"block\": 256,"
    " \"reads\": [\"h\"], \"writes\": [\"y\"]},"
    "{\"name\": \"download\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"y\"]}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  for (uint32_t streams = 1; streams <= 4; streams++) {
    ps_plan p;
    plan_ok (&p, &g, streams, true);
    check_plan (&p);
    assert_int_equal (p.kernels_before, 3);
    assert_int_equal (p.kernels_after, 2);
    uint32_t s = step_of (&p, "act");
    assert_int_equal (s, step_of (&p, "scale"));
    assert_string_equal (p.strings + p.steps[s].function, "fused_gelu_scale");
    /* A chain needs no second stream and no event. */
    assert_int_equal (p.streams_used, 1);
    assert_int_equal (p.n_event_pairs, 0);
    ps_plan_free (&p);

    plan_ok (&p, &g, streams, false);
    check_plan (&p);
    assert_int_equal (p.kernels_after, 3);
    assert_int_not_equal (step_of (&p, "act"), step_of (&p, "scale"));
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
}

/* A fusible chain whose middle member also depends on a long kernel on
 * another stream: the wait must come before the fused launch. */
static void
core_plan_fused_chain_cross_stream (void **state)
{
  (void) state;
  static const char json[] = HEADER "\"buffers\": ["
    "{\"name\": \"a\", \"bytes\": 1048576, \"external\": true},"
    "{\"name\": \"x\", \"bytes\": 1048576},"
    "{\"name\": \"b\", \"bytes\": 1048576},"
    "{\"name\": \"c\", \"bytes\": 1048576},"
    "{\"name\": \"d\", \"bytes\": 1048576, \"external\": true}],"
    "\"nodes\": ["
    "{\"name\": \"long\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": 64, \"block\": 256,"
    " \"writes\": [\"x\"], \"cost_ns\": 100000, \"stream\": 1},"
    "{\"name\": \"e1\", \"op\": \"kernel\", \"function\": \"relu\", \"impl\": \"relu\","
    " \"fusible\": true, \"grid\": 1024, \"block\": 256, \"reads\": [\"a\"], \"writes\": [\"b\"],"
    " \"stream\": 0},"
    "{\"name\": \"e2\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\","
    " \"fusible\": true, \"grid\": 1024, \"block\": 256, \"reads\": [\"b\", \"x\"],"
    " \"writes\": [\"c\"], \"stream\": 0},"
    "{\"name\": \"e3\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\","
    " \"fusible\": true, \"grid\": 1024, \"block\": 256, \"reads\": [\"c\"], \"writes\": [\"d\"],"
    " \"stream\": 0}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  ps_plan p;
  plan_ok (&p, &g, 2, true);
  check_plan (&p);
  uint32_t fs = step_of (&p, "e2");
  assert_int_equal (step_of (&p, "e1"), fs);
  assert_int_equal (step_of (&p, "e3"), fs);
  assert_string_equal (p.strings + p.steps[fs].function, "fused_relu_add_scale");
  /* The step right before the fused launch is the wait on its stream. */
  assert_true (fs > 0);
  assert_int_equal (p.steps[fs - 1].op, PS_OP_EVENT_WAIT);
  assert_int_equal (p.steps[fs - 1].stream, 0);
  uint32_t implied;
  uint32_t *clk = step_clocks (&p, &implied);
  assert_true (happens_before (&p, clk, step_of (&p, "long"), fs));
  free (clk);
  assert_int_equal (p.n_event_pairs, 1);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* A diamond of fusible kernels with a non-fusible side branch: top and
 * join must not fuse around the side kernel. */
static void
core_plan_fusion_convex (void **state)
{
  (void) state;
  static const char json[] = HEADER "\"buffers\": ["
    "{\"name\": \"in\", \"bytes\": 65536, \"external\": true},"
    "{\"name\": \"p\", \"bytes\": 65536}, {\"name\": \"q\", \"bytes\": 65536},"
    "{\"name\": \"r\", \"bytes\": 65536},"
    "{\"name\": \"out\", \"bytes\": 65536, \"external\": true}],"
    "\"nodes\": ["
    "{\"name\": \"top\", \"op\": \"kernel\", \"function\": \"relu\", \"impl\": \"relu\","
    " \"fusible\": true, \"grid\": 64, \"block\": 256, \"reads\": [\"in\"], \"writes\": [\"p\"]},"
    "{\"name\": \"left\", \"op\": \"kernel\", \"function\": \"exp\", \"impl\": \"exp\","
    " \"fusible\": true, \"grid\": 64, \"block\": 256, \"reads\": [\"p\"], \"writes\": [\"q\"]},"
    "{\"name\": \"side\", \"op\": \"kernel\", \"function\": \"softmax\", \"grid\": 64,"
    " \"block\": 256, \"reads\": [\"p\"], \"writes\": [\"r\"]},"
    "{\"name\": \"join\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\","
    " \"fusible\": true, \"grid\": 64, \"block\": 256, \"reads\": [\"q\", \"r\"],"
    " \"writes\": [\"out\"]}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  for (uint32_t streams = 1; streams <= 3; streams++) {
    ps_plan p;
    plan_ok (&p, &g, streams, true);
    check_plan (&p);
    /* top and left fuse (left has only top before it); join cannot join them. */
    assert_int_equal (step_of (&p, "top"), step_of (&p, "left"));
    assert_int_not_equal (step_of (&p, "top"), step_of (&p, "join"));
    assert_true (step_of (&p, "side") < step_of (&p, "join"));
    assert_int_equal (p.kernels_after, 3);
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
}

/* Two groups that are each convex but would form a cycle once contracted:
 * a1 -> a2, b1 -> b2, a1 -> b2 and b1 -> a2 (the a and b kernels run over
 * different element counts, so only a1 + a2 and b1 + b2 can fuse). */
static void
core_plan_fusion_no_cycle (void **state)
{
  (void) state;
  static const char json[] = HEADER "\"buffers\": ["
    "{\"name\": \"x\", \"bytes\": 8192, \"external\": true},"
    "{\"name\": \"p\", \"bytes\": 4096}, {\"name\": \"q\", \"bytes\": 8192},"
    "{\"name\": \"r\", \"bytes\": 4096, \"external\": true},"
    "{\"name\": \"s\", \"bytes\": 8192, \"external\": true}],"
    "\"nodes\": ["
    "{\"name\": \"a1\", \"op\": \"kernel\", \"function\": \"neg\", \"impl\": \"neg\","
    " \"fusible\": true, \"grid\": 4, \"block\": 256, \"reads\": [\"x\"], \"writes\": [\"p\"]},"
    "{\"name\": \"b1\", \"op\": \"kernel\", \"function\": \"exp\", \"impl\": \"exp\","
    " \"fusible\": true, \"grid\": 8, \"block\": 256, \"reads\": [\"x\"], \"writes\": [\"q\"]},"
    "{\"name\": \"a2\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\","
    " \"fusible\": true, \"grid\": 4, \"block\": 256, \"reads\": [\"p\", \"q\"],"
    " \"writes\": [\"r\"]},"
    "{\"name\": \"b2\", \"op\": \"kernel\", \"function\": \"mul\", \"impl\": \"mul\","
    " \"fusible\": true, \"grid\": 8, \"block\": 256, \"reads\": [\"q\", \"p\"],"
    " \"writes\": [\"s\"]}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  for (uint32_t streams = 1; streams <= 2; streams++) {
    ps_plan p;
    plan_ok (&p, &g, streams, true);
    check_plan (&p);
    assert_int_equal (step_of (&p, "a1"), step_of (&p, "a2"));
    assert_int_not_equal (step_of (&p, "b1"), step_of (&p, "b2"));
    assert_int_equal (p.kernels_after, 3);
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
}

/* Write-after-read: two long readers on different streams, then an
 * overwrite that must wait for both. */
static void
core_plan_write_after_read (void **state)
{
  (void) state;
  static const char json[] = HEADER "\"buffers\": ["
    "{\"name\": \"h\", \"bytes\": 1048576},"
    "{\"name\": \"o1\", \"bytes\": 1048576, \"external\": true},"
    "{\"name\": \"o2\", \"bytes\": 1048576, \"external\": true}],"
    "\"nodes\": ["
    "{\"name\": \"w1\", \"op\": \"memset\", \"writes\": [\"h\"]},"
    "{\"name\": \"r1\", \"op\": \"kernel\", \"function\": \"k1\", \"grid\": 8, \"block\": 64,"
    " \"reads\": [\"h\"], \"writes\": [\"o1\"], \"cost_ns\": 50000, \"stream\": 1},"
    "{\"name\": \"r2\", \"op\": \"kernel\", \"function\": \"k2\", \"grid\": 8, \"block\": 64,"
    " \"reads\": [\"h\"], \"writes\": [\"o2\"], \"cost_ns\": 50000, \"stream\": 2},"
    "{\"name\": \"w2\", \"op\": \"memset\", \"value\": 1, \"writes\": [\"h\"], \"stream\": 0}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  ps_plan p;
  plan_ok (&p, &g, 3, true);
  check_plan (&p);
  uint32_t implied;
  uint32_t *clk = step_clocks (&p, &implied);
  assert_true (happens_before (&p, clk, step_of (&p, "r1"), step_of (&p, "w2")));
  assert_true (happens_before (&p, clk, step_of (&p, "r2"), step_of (&p, "w2")));
  free (clk);
  assert_int_equal (p.streams_used, 3);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

#define CHAINS_JSON(AFTER)                                                                   \
  HEADER "\"buffers\": ["                                                                   \
  "{\"name\": \"in\", \"bytes\": 1048576, \"external\": true},"                              \
  "{\"name\": \"ta\", \"bytes\": 1048576}, {\"name\": \"tb\", \"bytes\": 1048576},"          \
  "{\"name\": \"oa\", \"bytes\": 1048576, \"external\": true},"                              \
  "{\"name\": \"ob\", \"bytes\": 1048576, \"external\": true}],"                             \
  "\"nodes\": ["                                                                             \
  "{\"name\": \"a1\", \"op\": \"kernel\", \"function\": \"fa\", \"grid\": 8, \"block\": 64," \
  " \"reads\": [\"in\"], \"writes\": [\"ta\"], \"cost_ns\": 20000},"                         \
  "{\"name\": \"a2\", \"op\": \"kernel\", \"function\": \"ga\", \"grid\": 8, \"block\": 64," \
  " \"reads\": [\"ta\"], \"writes\": [\"oa\"], \"cost_ns\": 20000},"                         \
  "{\"name\": \"b1\", \"op\": \"kernel\", \"function\": \"fb\", \"grid\": 8, \"block\": 64," \
  " \"reads\": [\"in\"], \"writes\": [\"tb\"], \"cost_ns\": 20000" AFTER "},"                \
  "{\"name\": \"b2\", \"op\": \"kernel\", \"function\": \"gb\", \"grid\": 8, \"block\": 64," \
  " \"reads\": [\"tb\"], \"writes\": [\"ob\"], \"cost_ns\": 20000}]}"

static bool
overlap (const ps_plan *p, uint32_t a, uint32_t b)
{
  const ps_graph *g = p->graph;
  uint64_t oa = p->offsets[a], ob = p->offsets[b];
  return oa < ob + g->buffers[b].bytes && ob < oa + g->buffers[a].bytes;
}

/* Independent chains with temporaries: while both can run they must not
 * share pool bytes; strictly ordered, they do. */
static void
core_plan_pool_concurrent_chains (void **state)
{
  (void) state;
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, CHAINS_JSON (""));
  ps_plan p;
  plan_ok (&p, &g, 2, true);
  check_plan (&p);
  uint32_t ta = buffer_id (&g, "ta"), tb = buffer_id (&g, "tb");
  assert_int_not_equal (p.steps[step_of (&p, "a1")].stream, p.steps[step_of (&p, "b1")].stream);
  assert_false (overlap (&p, ta, tb));
  assert_int_equal (p.pool_bytes, 2 * 1048576);
  assert_int_equal (ps_plan_find_peak (&p), 0);
  assert_int_equal (p.pool_peak, 2 * 1048576);
  ps_plan_free (&p);
  ps_graph_free (&g);

  ps_graph_init (&g);
  load_string (&g, CHAINS_JSON (", \"after\": [\"a2\"]"));
  for (uint32_t streams = 1; streams <= 2; streams++) {
    plan_ok (&p, &g, streams, true);
    check_plan (&p);
    assert_true (overlap (&p, ta, tb));
    assert_int_equal (p.pool_bytes, 1048576);
    assert_int_equal (ps_plan_find_peak (&p), 0);
    assert_int_equal (p.pool_peak, 1048576);
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
}

/* One user event recorded and waited on three times across streams. */
static void
core_plan_user_events_reused (void **state)
{
  (void) state;
  static const char json[] = HEADER "\"buffers\": ["
    "{\"name\": \"x\", \"bytes\": 4096, \"external\": true},"
    "{\"name\": \"y\", \"bytes\": 4096, \"external\": true}],"
    "\"nodes\": ["
    "{\"name\": \"k1\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32,"
    " \"writes\": [\"x\"], \"stream\": 0, \"cost_ns\": 9000},"
    "{\"name\": \"r1\", \"op\": \"event_record\", \"event\": \"e\", \"stream\": 0},"
    "{\"name\": \"w1\", \"op\": \"event_wait\", \"event\": \"e\", \"stream\": 1},"
    "{\"name\": \"k2\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32,"
    " \"writes\": [\"y\"], \"stream\": 1, \"after\": [\"w1\"], \"cost_ns\": 3000},"
    "{\"name\": \"r2\", \"op\": \"event_record\", \"event\": \"e\", \"stream\": 1,"
    " \"after\": [\"k2\"]},"
    "{\"name\": \"w2\", \"op\": \"event_wait\", \"event\": \"e\", \"stream\": 0},"
    "{\"name\": \"k3\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32,"
    " \"reads\": [\"y\"], \"stream\": 0, \"after\": [\"w2\"], \"cost_ns\": 3000},"
    "{\"name\": \"r3\", \"op\": \"event_record\", \"event\": \"e\", \"stream\": 0},"
    "{\"name\": \"w3\", \"op\": \"event_wait\", \"event\": \"e\"},"
    "{\"name\": \"w3b\", \"op\": \"event_wait\", \"event\": \"e\", \"stream\": 2},"
    "{\"name\": \"k4\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32,"
    " \"reads\": [\"x\"], \"after\": [\"w3\", \"w3b\"], \"cost_ns\": 3000}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  static const char *const pairs[][2] = { { "r1", "w1" }, { "r2", "w2" }, { "r3", "w3" },
                                          { "r3", "w3b" } };
  for (uint32_t streams = 3; streams <= 5; streams++) {
    ps_plan p;
    plan_ok (&p, &g, streams, true);
    check_plan (&p);
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
      uint32_t r = step_of (&p, pairs[k][0]), w = step_of (&p, pairs[k][1]);
      assert_int_equal (p.steps[w].op, PS_OP_EVENT_WAIT);
      assert_int_equal (p.steps[w].event, p.steps[r].event);
      assert_int_equal (p.steps[w].synthetic, 0);
      /* The most recent record of the event before the wait is its pair. */
      uint32_t last = PS_NONE;
      for (uint32_t i = 0; i < w; i++)
        if (p.steps[i].op == PS_OP_EVENT_RECORD && p.steps[i].event == p.steps[w].event)
          last = i;
      assert_int_equal (last, r);
    }
    assert_true (p.n_events >= 1);
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
}

/* A pin beyond --streams is an error naming the node and its position. */
static void
core_plan_pin_beyond_streams (void **state)
{
  (void) state;
  static const char json[] = HEADER "\"nodes\": ["
    "{\"name\": \"first\", \"op\": \"host\"},\n"
    "{\"name\": \"pinned_far\", \"op\": \"host\", \"stream\": 3}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  ps_plan p;
  ps_diag d;
  ps_diag_init (&d, "test.json");
  assert_int_equal (plan (&p, &g, 2, true, &d), PS_EPIN);
  assert_true (d.errors >= 1);
  assert_non_null (strstr (d.entries[0].message, "pinned_far"));
  assert_int_equal (d.entries[0].line, 2);
  ps_diag_free (&d);
  ps_plan_free (&p);
  plan_ok (&p, &g, 4, true);
  check_plan (&p);
  assert_int_equal (p.steps[step_of (&p, "pinned_far")].stream, 3);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* Imported graphs need not number their nodes in topological order; the
 * plan still follows the edges, and a cycle is an error. */
static void
core_plan_imported_order (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "imported");
  uint32_t d = tg_kernel (&t, "d", "k");
  uint32_t c = tg_kernel (&t, "c", "k");
  uint32_t b = tg_kernel (&t, "b", "k");
  uint32_t a = tg_kernel (&t, "a", "k");
  uint32_t e = tg_kernel (&t, "e", "k");
  for (uint32_t v = 0; v < 5; v++)
    tg_cost (&t, v, 10000);
  tg_edge (&t, a, b, PS_EDGE_IMPORTED);
  tg_edge (&t, a, c, PS_EDGE_IMPORTED);
  tg_edge (&t, b, d, PS_EDGE_IMPORTED);
  tg_edge (&t, c, d, PS_EDGE_IMPORTED);
  tg_edge (&t, e, a, PS_EDGE_IMPORTED);
  tg_finish (&t, false);
  for (uint32_t streams = 1; streams <= 3; streams++) {
    ps_plan p;
    plan_ok (&p, &t.g, streams, true);
    check_plan (&p);
    assert_true (p.node_step[e] < p.node_step[a]);
    assert_true (p.node_step[a] < p.node_step[b] && p.node_step[a] < p.node_step[c]);
    ps_plan_free (&p);
  }
  tg_free (&t);

  tg_init (&t, "cycle");
  uint32_t x = tg_kernel (&t, "x", "k"), y = tg_kernel (&t, "y", "k");
  tg_edge (&t, x, y, PS_EDGE_IMPORTED);
  tg_edge (&t, y, x, PS_EDGE_IMPORTED);
  tg_finish (&t, false);
  ps_plan p;
  ps_diag dg;
  ps_diag_init (&dg, "cycle.dot");
  assert_int_equal (plan (&p, &t.g, 2, true, &dg), PS_ECYCLE);
  assert_true (dg.errors >= 1);
  ps_diag_free (&dg);
  ps_plan_free (&p);
  tg_free (&t);
}

/* The simulated makespan of p on the device it was planned for. */
static double
simulated_ns (const ps_plan *p)
{
  ps_sim s;
  double ms = -1;
  assert_int_equal (ps_sim_init (&s, p, &p->device), 0);
  assert_int_equal (ps_sim_run (&s, NULL, &ms), 0);
  ps_sim_free (&s);
  return ms;
}

/* The work of the busiest part of the device (SM work weighted by the
 * share of the SMs it asks for): no plan can finish before it. */
static double
resource_bound_ns (const ps_plan *p)
{
  ps_cost *c = calloc (p->n_steps + 1, sizeof *c);
  double work[PS_RES__COUNT] = { 0 }, bound = 0;
  assert_non_null (c);
  assert_int_equal (ps_cost_plan (&p->device, p, c), 0);
  for (uint32_t i = 0; i < p->n_steps; i++)
    if (c[i].ns > 0 && c[i].resource != PS_RES_NONE && c[i].resource < PS_RES__COUNT)
      work[c[i].resource] += c[i].ns * (c[i].resource == PS_RES_SM ? c[i].sm_fraction : 1);
  for (int r = 0; r < PS_RES__COUNT; r++)
    if (work[r] > bound)
      bound = work[r];
  free (c);
  return bound;
}

/* Layered graphs run well in parallel: 4 streams beat 1 clearly, within
 * 10% of what the device allows (most kernels fill the GPU, so the work
 * of the SMs bounds the makespan well above a quarter of one stream's),
 * and the pool stays within 10% of its peak. */
static void
core_plan_quality_layered (void **state)
{
  (void) state;
  for (uint32_t seed = 1; seed <= 4; seed++) {
    ps_gen_options go;
    ps_gen_options_init (&go);
    go.shape = PS_GEN_LAYERED;
    go.nodes = 3000;
    go.seed = seed;
    go.pins = false;
    ps_graph g;
    ps_graph_init (&g);
    assert_int_equal (pt_gen_graph (&g, &go), 0);
    ps_plan p1, p4;
    plan_ok (&p1, &g, 1, true);
    plan_ok (&p4, &g, 4, true);
    check_plan (&p1);
    check_plan (&p4);
    assert_true (p4.est_makespan_ns < 0.7 * p1.est_makespan_ns);
    assert_true (p4.est_makespan_ns < 1.1 * resource_bound_ns (&p4));
    assert_true (p4.streams_used == 4);
    assert_true (p4.kernels_after < p4.kernels_before);
    assert_int_equal (ps_plan_find_peak (&p1), 0);
    assert_int_equal (ps_plan_find_peak (&p4), 0);
    assert_true ((double) p1.pool_bytes <= 1.10 * (double) p1.pool_peak);
    assert_true ((double) p4.pool_bytes <= 1.10 * (double) p4.pool_peak);
    ps_plan_free (&p1);
    ps_plan_free (&p4);
    ps_graph_free (&g);
  }
}

/* The bundled examples plan and verify with every stream count. */
static void
core_plan_examples (void **state)
{
  (void) state;
  static const char *const names[] = { "copy-compute-overlap.json",
                                       "events-barrier-conditional.json",
                                       "long-kernel-wait.json", "transformer-block.json",
                                       "user-module.json" };
  const char *root = getenv ("PS_SOURCE_ROOT");
  if (!root)
    root = PS_TEST_SOURCE_ROOT;
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    char path[4096];
    snprintf (path, sizeof path, "%s/data/examples/%s", root, names[k]);
    ps_graph g;
    ps_graph_init (&g);
    ps_diag d;
    ps_diag_init (&d, path);
    int rc = ps_import_graph_file (&g, path, NULL, &d);
    if (rc < 0)
      ps_diag_print (&d, stderr);
    ps_diag_free (&d);
    assert_int_equal (rc, 0);
    for (uint32_t streams = 1; streams <= 8; streams++)
      for (int fusion = 0; fusion < 2; fusion++) {
        ps_plan p;
        ps_diag_init (&d, path);
        rc = plan (&p, &g, streams, fusion, &d);
        ps_diag_free (&d);
        if (rc == PS_EPIN)
          continue;
        assert_int_equal (rc, 0);
        check_plan (&p);
        ps_plan_free (&p);
      }
    ps_graph_free (&g);
  }
}

static void
load_example (ps_graph *g, const char *name)
{
  const char *root = getenv ("PS_SOURCE_ROOT");
  if (!root)
    root = PS_TEST_SOURCE_ROOT;
  char path[4096];
  snprintf (path, sizeof path, "%s/data/examples/%s", root, name);
  ps_graph_init (g);
  ps_diag d;
  ps_diag_init (&d, path);
  int rc = ps_import_graph_file (g, path, NULL, &d);
  if (rc < 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

/* The simulated makespans of g planned with 1..8 streams; each plan's own
 * estimate is that simulation. */
static void
sweep (const ps_graph *g, bool fusion, double *ms)
{
  for (uint32_t n = 1; n <= 8; n++) {
    ps_plan p;
    plan_ok (&p, g, n, fusion);
    ms[n] = simulated_ns (&p);
    assert_true (p.est_simulated);
    assert_true (fabs (p.est_makespan_ns - ms[n]) <= 1e-9 * ms[n]);
    ps_plan_free (&p);
  }
}

/* More streams never simulate slower, on every example with and without
 * fusion (the plan for more streams has every plan for fewer to choose
 * from), and fusion never slower than none; the examples with independent
 * work get clearly faster with 4 streams. */
static void
core_plan_streams_examples (void **state)
{
  (void) state;
  static const char *const names[] = { "copy-compute-overlap.json",
                                       "events-barrier-conditional.json",
                                       "long-kernel-wait.json", "moe-experts.json",
                                       "transformer-block.json", "user-module.json" };
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    ps_graph g;
    load_example (&g, names[k]);
    double unfused[9];
    sweep (&g, false, unfused);
    for (int fusion = 1; fusion >= 0; fusion--) {
      double ms[9];
      sweep (&g, fusion, ms);
      for (uint32_t n = 1; n <= 8; n++) {
        if (n > 1 && ms[n] > ms[n - 1] * (1 + 1e-9))
          fail_msg ("%s: %u streams %.0f ns, %u streams %.0f ns", names[k], n - 1, ms[n - 1],
                    n, ms[n]);
        if (ms[n] > unfused[n] * (1 + 1e-9))
          fail_msg ("%s: %u streams: fused %.0f ns, unfused %.0f ns", names[k], n, ms[n],
                    unfused[n]);
      }
      if (strcmp (names[k], "moe-experts.json") == 0)
        assert_true (ms[1] >= 1.6 * ms[4]);
      if (strcmp (names[k], "copy-compute-overlap.json") == 0) /* 4 chunks overlap */
        assert_true (ms[1] >= 1.5 * ms[4]);
    }
    ps_graph_free (&g);
  }
}

/* The same on generated graphs of every parallel shape. */
static void
core_plan_streams_generated (void **state)
{
  (void) state;
  static const ps_gen_shape shapes[] = { PS_GEN_LAYERED, PS_GEN_TRANSFORMER, PS_GEN_FANOUT };
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
    for (uint32_t seed = 1; seed <= 2; seed++) {
      ps_gen_options go;
      ps_gen_options_init (&go);
      go.shape = shapes[k];
      go.nodes = 400;
      go.seed = seed;
      go.pins = false;
      ps_graph g;
      ps_graph_init (&g);
      assert_int_equal (pt_gen_graph (&g, &go), 0);
      double ms[9];
      sweep (&g, true, ms);
      for (uint32_t n = 2; n <= 8; n++)
        if (ms[n] > ms[n - 1] * (1 + 1e-9))
          fail_msg ("shape %d seed %u: %u streams %.0f ns, %u streams %.0f ns", (int) shapes[k],
                    seed, n - 1, ms[n - 1], n, ms[n]);
      if (shapes[k] != PS_GEN_TRANSFORMER) /* a transformer block is one chain */
        assert_true (ms[4] < 0.9 * ms[1]);
      ps_graph_free (&g);
    }
}

/* The planner schedules for the device it is given, else the graph's. */
static void
core_plan_device (void **state)
{
  (void) state;
  ps_graph g;
  load_example (&g, "moe-experts.json");
  const ps_device *a100 = NULL;
  for (size_t i = 0; i < ps_device_builtin_count (); i++)
    if (strcmp (ps_device_builtin (i)->name, "a100") == 0)
      a100 = ps_device_builtin (i);
  assert_non_null (a100);
  ps_plan_options o;
  ps_plan_options_init (&o);
  assert_null (o.device);
  ps_plan ph, pa;
  ps_diag d;
  ps_diag_init (&d, "moe-experts.json");
  assert_int_equal (ps_plan_build (&ph, &g, &o, &d), 0);
  o.device = a100;
  assert_int_equal (ps_plan_build (&pa, &g, &o, &d), 0);
  assert_int_equal (d.warnings, 0);
  ps_diag_free (&d);
  assert_string_equal (ph.device.name, "h200"); /* the graph's "device" */
  assert_string_equal (pa.device.name, "a100");
  assert_true (pa.options.device == a100);
  check_plan (&pa);
  /* Each estimate is the simulation on its own device, and the slower
   * device takes longer. */
  assert_true (fabs (pa.est_makespan_ns - simulated_ns (&pa)) <= 1e-9 * pa.est_makespan_ns);
  assert_true (fabs (ph.est_makespan_ns - simulated_ns (&ph)) <= 1e-9 * ph.est_makespan_ns);
  assert_true (pa.est_makespan_ns > ph.est_makespan_ns);
  ps_plan_free (&ph);
  ps_plan_free (&pa);

  /* A graph naming a device nobody knows is planned for the default, with
   * a warning. */
  free (g.device);
  g.device = strdup ("no-such-gpu");
  assert_non_null (g.device);
  ps_plan_options_init (&o);
  ps_diag_init (&d, "moe-experts.json");
  assert_int_equal (ps_plan_build (&ph, &g, &o, &d), 0);
  assert_int_equal (d.warnings, 1);
  assert_non_null (strstr (d.entries[0].message, "no-such-gpu"));
  ps_diag_free (&d);
  assert_string_equal (ph.device.name, "h200");
  ps_plan_free (&ph);
  ps_graph_free (&g);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_plan_spec_example),
    cmocka_unit_test (core_plan_fused_chain_cross_stream),
    cmocka_unit_test (core_plan_fusion_convex),
    cmocka_unit_test (core_plan_fusion_no_cycle),
    cmocka_unit_test (core_plan_write_after_read),
    cmocka_unit_test (core_plan_pool_concurrent_chains),
    cmocka_unit_test (core_plan_user_events_reused),
    cmocka_unit_test (core_plan_pin_beyond_streams),
    cmocka_unit_test (core_plan_imported_order),
    cmocka_unit_test (core_plan_quality_layered),
    cmocka_unit_test (core_plan_examples),
    cmocka_unit_test (core_plan_streams_examples),
    cmocka_unit_test (core_plan_streams_generated),
    cmocka_unit_test (core_plan_device),
    cmocka_unit_test (core_plan_property_chain),
    cmocka_unit_test (core_plan_property_fanout),
    cmocka_unit_test (core_plan_property_layered),
    cmocka_unit_test (core_plan_property_transformer),
    cmocka_unit_test (core_plan_property_large),
  };
  return cmocka_run_group_tests_name ("/core/plan", tests, NULL, NULL);
}
