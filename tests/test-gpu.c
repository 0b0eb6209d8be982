/* test-gpu.c: the profiler on a real GPU (suite "gpu": it needs one, so the
 * default test command leaves it out; build-aux/gpu-check.sh runs it).
 * Built-in kernels compute what graph-format.md says for every float
 * dtype; fused and unfused plans of random chains give the same outputs in
 * both modes; every example profiles in both modes with every kernel, copy
 * and memset step measured and no CUPTI record left unmatched; a spin
 * kernel lasts its cost_ns; and `planscope-cli profile --check` passes on
 * every example. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ps-graph.h"
#include "ps-import.h"
#include "ps-kernel-src.h"
#include "ps-plan.h"
#include "ps-profiler.h"
#include "ps-test-cli.h"

static ps_gpu *gpu;
static char examples[PS_TEST_MAX_EXAMPLES][128];
static size_t n_examples;

static int
open_gpu (void **state)
{
  (void) state;
  ps_gpu_error err;
  if (ps_gpu_open (&gpu, &err) != 0) {
    fprintf (stderr, "test-gpu needs a GPU: %s\n", err.message);
    return -1;
  }
  const ps_gpu_info *in = ps_gpu_get_info (gpu);
  fprintf (stderr,
           "GPU: %s, compute capability %d.%d, %u SMs, driver %d, CUPTI API %u, NVRTC %d.%d\n",
           in->name, in->cc_major, in->cc_minor, in->sm_count, in->driver_version,
           in->cupti_api, in->nvrtc_major, in->nvrtc_minor);
  n_examples = test_examples (examples);
  return 0;
}

static int
close_gpu (void **state)
{
  (void) state;
  ps_gpu_close (gpu);
  gpu = NULL;
  return 0;
}

static void
load (ps_graph *g, const char *json, const char *path)
{
  ps_diag d;
  ps_diag_init (&d, path);
  int rc = json ? ps_import_graph_mem (g, json, strlen (json), path, &d)
                : ps_import_graph_file (g, path, NULL, &d);
  if (rc < 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static void
plan (ps_plan *p, const ps_graph *g, bool fusion)
{
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.fusion = fusion;
  ps_diag d;
  ps_diag_init (&d, "plan");
  int rc = ps_plan_build (p, g, &o, &d);
  if (rc != 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static void
must (int rc, const ps_gpu_error *err)
{
  if (rc != 0)
    fail_msg ("%s", err->message);
}

/* ---- built-ins compute what the format says ----------------------------- */

static double
reference (ps_impl impl, double a, double b, const ps_kernel *k)
{
  switch (impl) {
  case PS_IMPL_COPY:
    return a;
  case PS_IMPL_SCALE:
    return (float) k->alpha * a;
  case PS_IMPL_ADD_SCALAR:
    return a + (float) k->beta;
  case PS_IMPL_RELU:
    return a > 0 ? a : 0;
  case PS_IMPL_GELU:
    return 0.5 * a * (1 + erf (a / sqrt (2)));
  case PS_IMPL_SIGMOID:
    return 1 / (1 + exp (-a));
  case PS_IMPL_TANH:
    return tanh (a);
  case PS_IMPL_EXP:
    return exp (a);
  case PS_IMPL_NEG:
    return -a;
  case PS_IMPL_ADD:
    return a + b;
  case PS_IMPL_MUL:
    return a * b;
  case PS_IMPL_SUB:
    return a - b;
  case PS_IMPL_FILL:
  default:
    return (float) k->value;
  }
}

static double
read_elem (const unsigned char *d, ps_dtype dt, size_t i)
{
  uint16_t h;
  uint32_t u;
  float f;
  switch (dt) {
  case PS_DT_F16: {
    memcpy (&h, d + 2 * i, 2);
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp (m, -24) : e == 31 ? INFINITY : ldexp (m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
  }
  case PS_DT_BF16:
    memcpy (&h, d + 2 * i, 2);
    u = (uint32_t) h << 16;
    memcpy (&f, &u, 4);
    return f;
  default:
    memcpy (&f, d + 4 * i, 4);
    return f;
  }
}

static void
gpu_builtins_values (void **state)
{
  (void) state;
  const char *dts[] = { "f32", "f16", "bf16" };
  const double tol[] = { 1e-5, 4e-3, 3e-2 };
  for (int impl = PS_IMPL_COPY; impl <= PS_IMPL_FILL; impl++)
    for (int d = 0; d < 3; d++) {
      int nr = ps_impl_reads ((ps_impl) impl);
      char json[2048];
      snprintf (json, sizeof json,
                "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
                "{\"name\": \"x\", \"bytes\": 6000, \"dtype\": \"%s\", \"external\": true},"
                "{\"name\": \"b\", \"bytes\": 1000, \"dtype\": \"%s\", \"external\": true},"
                "{\"name\": \"y\", \"bytes\": 6000, \"dtype\": \"%s\", \"external\": true}],"
                "\"nodes\": [{\"name\": \"k\", \"op\": \"kernel\", \"function\": \"f\", "
                "\"impl\": \"%s\", \"grid\": 3, \"block\": 64%s%s, \"writes\": [\"y\"]}]}",
                dts[d], dts[d], dts[d], ps_impl_name ((ps_impl) impl),
                nr == 0 ? "" : nr == 1 ? ", \"reads\": [\"x\"]" : ", \"reads\": [\"x\", \"b\"]",
                impl == PS_IMPL_SCALE        ? ", \"params\": {\"alpha\": -1.5}"
                : impl == PS_IMPL_ADD_SCALAR ? ", \"params\": {\"beta\": 0.75}"
                : impl == PS_IMPL_FILL       ? ", \"params\": {\"value\": 2.5}"
                                             : "");
      ps_graph g;
      ps_graph_init (&g);
      load (&g, json, "builtin.json");
      ps_plan p;
      plan (&p, &g, true);
      ps_dtype dt = (ps_dtype) g.buffers[2].dtype;
      size_t n = 6000 / ps_dtype_size (dt), nb = 1000 / ps_dtype_size (dt);
      unsigned char *out = malloc (6000);
      ps_gpu_error err;
      must (ps_gpu_read_buffer (gpu, &p, PS_PROFILE_STREAMS, 2, out, 6000, &err), &err);
      uint64_t sx = ps_fill_seed ("x"), sb = ps_fill_seed ("b");
      for (size_t i = 0; i < n; i++) {
        double a = ps_fill_value (dt, sx, i), b = ps_fill_value (dt, sb, i % nb);
        double want = reference ((ps_impl) impl, a, b, &g.kernels[0]);
        double got = read_elem (out, dt, i);
        if (fabs (got - want) > tol[d] * (1 + fabs (want)))
          fail_msg ("%s over %s: y[%zu] = %.9g, expected %.9g (x = %.9g, b = %.9g)",
                    ps_impl_name ((ps_impl) impl), dts[d], i, got, want, a, b);
      }
      free (out);
      ps_plan_free (&p);
      ps_graph_free (&g);
    }
}

/* ---- fused and unfused agree -------------------------------------------- */

static void
gpu_fused_equals_unfused (void **state)
{
  (void) state;
  const char *impls[] = { "scale", "gelu", "add", "tanh", "mul", "relu", "sigmoid", "sub" };
  /* The planner fuses kernels over the same element count: a chain mixes
   * dtypes of one size (f32 and i32, or f16 and bf16). */
  const char *wide[] = { "f32", "i32", "f32" }, *narrow[] = { "f16", "bf16", "f16" };
  for (uint32_t seed = 0; seed < 12; seed++) {
    char json[16384];
    size_t len = (size_t) snprintf (json, sizeof json, "{\"format\": \"planscope-graph\", "
                                                       "\"version\": 1, \"buffers\": [");
    uint32_t n = 3 + seed % 4;
    bool two = seed % 2;
    for (uint32_t i = 0; i <= n; i++)
      len += (size_t) snprintf (json + len, sizeof json - len,
                                "%s{\"name\": \"t%u\", \"bytes\": %u, \"dtype\": \"%s\"%s},"
                                "{\"name\": \"in%u\", \"bytes\": %u, \"external\": true}",
                                i ? "," : "", i, two ? 32768 : 65536,
                                (two ? narrow : wide)[(seed + i) % 3],
                                i == n || i == 0 ? ", \"external\": true" : "", i, 1024 + 512 * i);
    len += (size_t) snprintf (json + len, sizeof json - len, "], \"nodes\": [");
    for (uint32_t i = 1; i <= n; i++) {
      const char *impl = impls[(seed * 7 + i) % 8];
      bool bin = !strcmp (impl, "add") || !strcmp (impl, "mul") || !strcmp (impl, "sub");
      char reads[64];
      if (bin)
        snprintf (reads, sizeof reads, "\"t%u\", \"in%u\"", i - 1, i);
      else
        snprintf (reads, sizeof reads, "\"t%u\"", i - 1);
      len += (size_t) snprintf (json + len, sizeof json - len,
                                "%s{\"name\": \"k%u\", \"op\": \"kernel\", \"function\": \"%s\", "
                                "\"impl\": \"%s\", \"fusible\": true, \"grid\": %u, "
                                "\"block\": 128%s,"
                                " \"reads\": [%s], \"writes\": [\"t%u\"]}",
                                i > 1 ? "," : "", i, impl, impl, 8 + i,
                                !strcmp (impl, "scale") ? ", \"params\": {\"alpha\": 0.75}" : "",
                                reads, i);
    }
    snprintf (json + len, sizeof json - len,
              ", {\"name\": \"down\", \"op\": \"memcpy\", \"dir\": \"d2h\", "
              "\"reads\": [\"t%u\"]}]}",
              n);
    ps_graph g;
    ps_graph_init (&g);
    load (&g, json, "chain.json");
    ps_plan pf, pu;
    plan (&pf, &g, true);
    plan (&pu, &g, false);
    assert_true (pf.kernels_after < pu.kernels_after);
    for (int mode = 0; mode < 2; mode++) {
      ps_check_result cr;
      ps_gpu_error err;
      must (ps_gpu_check (gpu, &pf, &pu, (ps_profile_mode) mode, &cr, &err), &err);
      if (!cr.equal)
        fail_msg ("seed %u, %s mode: %s", seed, mode ? "graph" : "streams", cr.first_mismatch);
      assert_true (cr.outputs >= 2);
    }
    ps_plan_free (&pf);
    ps_plan_free (&pu);
    ps_graph_free (&g);
  }
}

/* ---- profiling ---------------------------------------------------------- */

static void
gpu_profile_examples (void **state)
{
  (void) state;
  for (size_t e = 0; e < n_examples; e++)
    for (int mode = 0; mode < 2; mode++) {
      char path[4096];
      snprintf (path, sizeof path, "%.3000s/data/examples/%.120s.json", source_root (), examples[e]);
      ps_graph g;
      ps_graph_init (&g);
      load (&g, NULL, path);
      ps_plan p;
      plan (&p, &g, true);
      ps_profile_options o;
      ps_profile_options_init (&o);
      o.mode = (ps_profile_mode) mode;
      o.iterations = 5;
      ps_profile_result r;
      ps_gpu_error err;
      must (ps_gpu_profile (gpu, &p, &o, &r, &err), &err);
      assert_int_equal (r.iterations, 5);
      assert_true (r.timeline.makespan_ns > 0);
      assert_int_equal (r.dropped, 0);
      /* Every profile is a CUPTI session of its own: graph mode past the
       * first is where CUPTI before 13.1 Update 1 mixed correlation ids. */
      if (r.unmatched || r.missing)
        fail_msg ("%s (%s): %llu CUPTI records matched no step, %llu missing", examples[e],
                  mode ? "graph" : "streams", (unsigned long long) r.unmatched,
                  (unsigned long long) r.missing);
      assert_true (r.records + r.untimed == r.expected);
      assert_true (r.wall_traced_ns > 0 && r.wall_untraced_ns > 0);
      for (uint32_t s = 0; s < p.n_steps; s++) {
        const ps_step *st = &p.steps[s];
        bool work = st->op == PS_OP_KERNEL || st->op == PS_OP_MEMCPY || st->op == PS_OP_MEMSET;
        /* The excluded branch of the conditional runs nothing. */
        bool skipped = false;
        for (uint32_t i = 0; i < st->nodes_count; i++) {
          const ps_node *nd = &g.nodes[p.step_nodes[st->nodes_begin + i]];
          skipped |= nd->flags & PS_NODE_IN_THEN;
        }
        if (work && !skipped && !(r.step_ns[s] > 0))
          fail_msg ("%s (%s): step %u (%s) was not measured", examples[e],
                    mode ? "graph" : "streams", s,
                    ps_node_name (&g, p.step_nodes[st->nodes_begin]));
      }
      ps_profile_result_free (&r);
      ps_plan_free (&p);
      ps_graph_free (&g);
    }
}

static void
gpu_spin_lasts_its_cost (void **state)
{
  (void) state;
  static const char json[] =
    "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": ["
    "{\"name\": \"busy\", \"op\": \"kernel\", \"function\": \"spin\", \"impl\": \"spin\","
    " \"grid\": 100000, \"block\": 256, \"cost_ns\": 200000}]}";
  ps_graph g;
  ps_graph_init (&g);
  load (&g, json, "spin.json");
  ps_plan p;
  plan (&p, &g, true);
  ps_profile_options o;
  ps_profile_options_init (&o);
  o.iterations = 5;
  o.overhead = false;
  ps_profile_result r;
  ps_gpu_error err;
  must (ps_gpu_profile (gpu, &p, &o, &r, &err), &err);
  /* One wave of blocks: the kernel lasts its cost, not a multiple. */
  if (!(r.step_ns[0] >= 190000 && r.step_ns[0] < 400000))
    fail_msg ("spin of 200 us measured %.0f ns", r.step_ns[0]);
  ps_profile_result_free (&r);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

static void
gpu_cli_check_examples (void **state)
{
  (void) state;
  for (size_t e = 0; e < n_examples; e++)
    for (int mode = 0; mode < 2; mode++) {
      char args[8192], ex[4200];
      example_path (ex, sizeof ex, examples[e]);
      snprintf (args, sizeof args, "profile %s --mode %s --check --iterations 3 --json", ex,
                mode ? "graph" : "streams");
      expect_cli (NULL, args, 0, "\"check\": {\"equal\": true");
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (gpu_builtins_values),
    cmocka_unit_test (gpu_fused_equals_unfused),
    cmocka_unit_test (gpu_profile_examples),
    cmocka_unit_test (gpu_spin_lasts_its_cost),
    cmocka_unit_test (gpu_cli_check_examples),
  };
  return cmocka_run_group_tests_name ("/gpu", tests, open_gpu, close_gpu);
}
