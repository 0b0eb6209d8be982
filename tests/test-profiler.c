/* test-profiler.c: the profiler without a GPU, in process: generated
 * kernels (every built-in over every dtype, fused groups drawn at random,
 * long groups) compile with NVRTC and assemble with ptxas; fused kernels
 * keep intermediates in registers and fall back to several launches when
 * one loop would race; CUPTI records built in memory with CUDA 13's
 * layouts map to plan steps; measured timelines carry medians, stalls and
 * flows.  test-profiler-runs.c drives planscope-cli. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps-graph.h"
#include "ps-import.h"
#include "ps-inputs.h"
#include "ps-kernel-src.h"
#include "ps-measure.h"
#include "ps-plan.h"
#include "ps-profiler.h"
#include "ps-test-cli.h"
#ifdef PS_GPU_BACKEND
#include "ps-cuda.h"
#include "ps-cupti-map.h"
#endif


/* ---- helpers ------------------------------------------------------------ */

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
param_of (const ps_ksrc *k, const ps_graph *g, const char *buf)
{
  for (uint32_t j = 0; j < k->n_bufs; j++)
    if (strcmp (ps_buffer_name (g, k->bufs[j]), buf) == 0)
      return j;
  fail_msg ("buffer %s is not a parameter", buf);
  return PS_NONE;
}

/* Runs planscope-cli with extra environment assignments; returns its exit
 * status and (in *out, malloc'd) what it wrote to stdout and stderr. */
#ifdef PS_GPU_BACKEND
/* Compiles with NVRTC and, when ptxas was found at build time, assembles
 * the PTX for sm_90. */
static void
compile_ok (const char *code, const char *name, const char *function)
{
  char *ptx = NULL, *log = NULL;
  size_t len = 0;
  ps_gpu_error err;
  int rc = ps_nvrtc_compile_ptx (code, name, "compute_90", NULL, &ptx, &len, &log, &err);
  if (rc != 0)
    fail_msg ("%s: %s\n%s\n%s", name, err.message, log ? log : "", code);
  char entry[256];
  snprintf (entry, sizeof entry, ".entry %s(", function);
  if (!strstr (ptx, entry))
    fail_msg ("%s: no %s in the PTX", name, entry);
#ifdef PS_TEST_PTXAS
  char path[] = "/tmp/planscope-ptx-XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, ptx, len), (ssize_t) len);
  close (fd);
  char cmd[4200];
  snprintf (cmd, sizeof cmd, "'%s' -arch=sm_90 '%s' -o /dev/null", PS_TEST_PTXAS, path);
  int st = system (cmd);
  unlink (path);
  if (st != 0)
    fail_msg ("%s: ptxas rejected the PTX:\n%s", name, code);
#endif
  free (ptx);
  free (log);
}
#endif

/* ---- generated kernels -------------------------------------------------- */

static const char *dtypes[] = { "f32", "f16", "bf16", "i32", "u8" };

static void
builtin_graph (char *buf, size_t cap, ps_impl impl, const char *dt)
{
  int nr = ps_impl_reads (impl);
  bool spin = impl == PS_IMPL_SPIN;
  snprintf (buf, cap,
            "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
            "{\"name\": \"a\", \"bytes\": 4096, \"dtype\": \"%s\"},"
            "{\"name\": \"b\", \"bytes\": 1000, \"dtype\": \"%s\"},"
            "{\"name\": \"o\", \"bytes\": 4096, \"dtype\": \"%s\"}],"
            "\"nodes\": [{\"name\": \"k\", \"op\": \"kernel\", \"function\": \"f\", "
            "\"impl\": \"%s\", \"grid\": 4, \"block\": 128%s%s%s%s}]}",
            dt, dt, dt, ps_impl_name (impl), nr == 0 ? "" : nr == 1 ? ", \"reads\": [\"a\"]"
                                                                 : ", \"reads\": [\"a\", \"b\"]",
            spin ? "" : ", \"writes\": [\"o\"]", spin ? ", \"cost_ns\": 5000" : "",
            impl == PS_IMPL_FILL ? ", \"params\": {\"value\": 0.25}" : "");
}

static void
profiler_kernels_builtins_generate (void **state)
{
  (void) state;
  /* Plain text, in every build. */
  for (int impl = PS_IMPL_COPY; impl < PS_IMPL__COUNT; impl++)
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
      char json[2048];
      builtin_graph (json, sizeof json, (ps_impl) impl, dtypes[d]);
      ps_graph g;
      ps_graph_init (&g);
      load_string (&g, json);
      ps_ksrc_ctx c;
      assert_int_equal (ps_ksrc_ctx_init (&c, &g), 0);
      ps_ksrc k;
      uint32_t v = 0;
      assert_int_equal (ps_ksrc_build (&k, &c, &v, 1, NULL), 0);
      assert_int_equal (k.kind, PS_KSRC_GENERATED);
      assert_int_equal (k.n_parts, 1);
      char want[128];
      if (impl == PS_IMPL_SPIN) {
        snprintf (want, sizeof want, "ps_spin");
        assert_int_equal (k.parts[0].pad_ns, 5000);
        assert_true (k.parts[0].one_wave);
      } else {
        snprintf (want, sizeof want, "ps_%s_%s", ps_impl_name ((ps_impl) impl), dtypes[d]);
        assert_int_equal (k.parts[0].n, 4096 / ps_dtype_size ((ps_dtype) d));
      }
      assert_string_equal (k.function, want);
      char sig[160];
      snprintf (sig, sizeof sig, "extern \"C\" __global__ void\n%s (", want);
      assert_non_null (strstr (k.code, sig));
      assert_true ((strstr (k.code, "cuda_fp16.h") != NULL) == (d == PS_DT_F16 && impl != PS_IMPL_SPIN));
      assert_true ((strstr (k.code, "cuda_bf16.h") != NULL) == (d == PS_DT_BF16 && impl != PS_IMPL_SPIN));
      ps_ksrc_free (&k);
      ps_ksrc_ctx_free (&c);
      ps_graph_free (&g);
    }
}

#ifdef PS_GPU_BACKEND
static void
profiler_kernels_builtins_compile (void **state)
{
  (void) state;
  for (int impl = PS_IMPL_COPY; impl < PS_IMPL__COUNT; impl++)
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
      char json[2048];
      builtin_graph (json, sizeof json, (ps_impl) impl, dtypes[d]);
      ps_graph g;
      ps_graph_init (&g);
      load_string (&g, json);
      ps_ksrc_ctx c;
      assert_int_equal (ps_ksrc_ctx_init (&c, &g), 0);
      ps_ksrc k;
      uint32_t v = 0;
      assert_int_equal (ps_ksrc_build (&k, &c, &v, 1, NULL), 0);
      compile_ok (k.code, k.function, k.function);
      ps_ksrc_free (&k);
      ps_ksrc_ctx_free (&c);
      ps_graph_free (&g);
    }
  compile_ok (ps_ksrc_support_code (), "support", "ps_init_bf16");
}
#endif

/* A chain of element-wise kernels drawn from a seed: node i reads t(i-1)
 * (and sometimes an input of another length), writes t(i); dtypes and
 * lengths vary, the last output is external. */
static uint32_t
rnd (uint64_t *s)
{
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t) (*s >> 33);
}

static void
random_chain (char *buf, size_t cap, uint32_t seed, uint32_t n)
{
  uint64_t s = seed * 2654435761u + 1;
#define RND() rnd (&s)
  size_t len = 0;
  len += (size_t) snprintf (buf + len, cap - len,
                            "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [");
  const uint32_t lens[] = { 4096, 2048, 8192, 1000 };
  for (uint32_t i = 0; i <= n; i++) {
    const char *dt = dtypes[RND () % 5];
    len += (size_t) snprintf (buf + len, cap - len,
                              "%s{\"name\": \"t%u\", \"bytes\": %u, \"dtype\": \"%s\"%s},"
                              "{\"name\": \"in%u\", \"bytes\": %u, \"dtype\": \"%s\"}",
                              i ? "," : "", i, lens[RND () % 4], dt,
                              i == n ? ", \"external\": true" : "", i, lens[RND () % 4],
                              dtypes[RND () % 5]);
  }
  len += (size_t) snprintf (buf + len, cap - len, "], \"nodes\": [");
  const char *unary[] = { "copy", "scale", "add_scalar", "relu", "gelu", "sigmoid", "tanh",
                          "exp", "neg" };
  const char *binary[] = { "add", "mul", "sub" };
  for (uint32_t i = 1; i <= n; i++) {
    uint32_t pick = RND () % 14;
    char reads[64];
    const char *impl;
    if (pick < 9) {
      impl = unary[pick];
      snprintf (reads, sizeof reads, "\"t%u\"", i - 1);
    } else if (pick < 12) {
      impl = binary[pick - 9];
      snprintf (reads, sizeof reads, "\"t%u\", \"in%u\"", i - 1, i);
    } else if (pick == 12) {
      impl = NULL; /* synthetic */
      snprintf (reads, sizeof reads, "\"t%u\", \"in%u\"", i - 1, i);
    } else {
      impl = "fill";
      reads[0] = '\0';
    }
    /* Each built-in takes its own parameter; synthetic kernels get a busy
     * time instead. */
    const char *extra = !impl                           ? "\"cost_ns\": 123, "
                        : strcmp (impl, "scale") == 0      ? "\"params\": {\"alpha\": 0.5}, "
                        : strcmp (impl, "add_scalar") == 0 ? "\"params\": {\"beta\": -1.25}, "
                        : strcmp (impl, "fill") == 0       ? "\"params\": {\"value\": 3}, "
                                                          : "";
    len += (size_t) snprintf (buf + len, cap - len,
                              "%s{\"name\": \"k%u\", \"op\": \"kernel\", \"function\": \"f%u\", "
                              "%s%s%s\"fusible\": true, \"grid\": [4, 2], \"block\": [64, 2], "
                              "%s\"reads\": [%s], \"writes\": [\"t%u\"]}",
                              i > 1 ? "," : "", i, i, impl ? "\"impl\": \"" : "", impl ? impl : "",
                              impl ? "\", " : "", extra, reads, i);
  }
  snprintf (buf + len, cap - len, "]}");
#undef RND
}

static void
profiler_kernels_fused_random (void **state)
{
  (void) state;
  uint32_t sound = 0, split = 0;
  for (uint32_t seed = 1; seed <= 40; seed++) {
    char json[16384];
    uint32_t n = 2 + seed % 6;
    random_chain (json, sizeof json, seed, n);
    ps_graph g;
    ps_graph_init (&g);
    load_string (&g, json);
    ps_ksrc_ctx c;
    assert_int_equal (ps_ksrc_ctx_init (&c, &g), 0);
    uint32_t nodes[16];
    for (uint32_t i = 0; i < n; i++)
      nodes[i] = n - 1 - i; /* any order: the generator sorts */
    ps_ksrc k;
    assert_int_equal (ps_ksrc_build (&k, &c, nodes, n, NULL), 0);
    assert_true (k.fused);
    assert_int_equal (k.n_nodes, n);
    for (uint32_t i = 0; i < n; i++)
      assert_int_equal (k.nodes[i], i);
    if (k.n_parts == 1) {
      sound++;
      assert_string_equal (k.note, "");
      /* t1 .. t(n-1) are only read inside the group: never stored; the
       * external output is. */
      for (uint32_t i = 1; i <= n; i++) {
        char name[16], st[64];
        snprintf (name, sizeof name, "t%u", i);
        uint32_t j = param_of (&k, &g, name);
        const char *dn = ps_dtype_name ((ps_dtype) g.buffers[k.bufs[j]].dtype);
        snprintf (st, sizeof st, "ps_st_%s (b%u, i, r%u);", dn, j, j);
        assert_true ((strstr (k.code, st) != NULL) == (i == n));
      }
    } else {
      split++;
      assert_int_equal (k.n_parts, n);
      assert_non_null (strstr (k.note, "cyclically"));
    }
    if (k.n_parts > 1) {
      char f[160];
      snprintf (f, sizeof f, "%s_p%u (", k.function, n - 1);
      assert_non_null (strstr (k.code, f));
    }
#ifdef PS_GPU_BACKEND
    char entry[160];
    snprintf (entry, sizeof entry, "%s%s", k.function, k.n_parts > 1 ? "_p0" : "");
    compile_ok (k.code, "fused", entry);
#endif
    ps_ksrc_free (&k);
    ps_ksrc_ctx_free (&c);
    ps_graph_free (&g);
  }
  /* The seeds cover both kinds of group. */
  assert_true (sound > 5);
  assert_true (split > 5);
}

static const char fusion_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
  "{\"name\": \"x\", \"bytes\": 4096, \"external\": true},"
  "{\"name\": \"h\", \"bytes\": 4096, \"dtype\": \"f16\"},"
  "{\"name\": \"short\", \"bytes\": 1024},"
  "{\"name\": \"y\", \"bytes\": 4096, \"external\": true}],"
  "\"nodes\": ["
  "{\"name\": \"a\", \"op\": \"kernel\", \"function\": \"gelu\", \"impl\": \"gelu\", \"fusible\": true,"
  " \"grid\": 8, \"block\": 128, \"reads\": [\"x\"], \"writes\": [\"h\"]},"
  "{\"name\": \"b\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\", \"fusible\": true,"
  " \"params\": {\"alpha\": 0.5}, \"grid\": 16, \"block\": 128, \"reads\": [\"h\"], \"writes\": [\"y\"]},"
  "{\"name\": \"c\", \"op\": \"kernel\", \"function\": \"copy\", \"impl\": \"copy\", \"fusible\": true,"
  " \"grid\": 8, \"block\": 128, \"reads\": [\"x\"], \"writes\": [\"short\"]},"
  "{\"name\": \"d\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\", \"fusible\": true,"
  " \"grid\": 8, \"block\": 128, \"reads\": [\"x\", \"short\"], \"writes\": [\"y\"]},"
  "{\"name\": \"down\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"h\"]}"
  "]}";

static void
profiler_kernels_fusion_registers (void **state)
{
  (void) state;
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, fusion_graph);
  ps_ksrc_ctx c;
  assert_int_equal (ps_ksrc_ctx_init (&c, &g), 0);

  /* a + b: h goes from a to b in a register, and is still stored because
   * the download reads it; y is external. */
  uint32_t ab[] = { node_id (&g, "a"), node_id (&g, "b") };
  ps_ksrc k;
  assert_int_equal (ps_ksrc_build (&k, &c, ab, 2, NULL), 0);
  assert_int_equal (k.n_parts, 1);
  uint32_t h = param_of (&k, &g, "h"), y = param_of (&k, &g, "y");
  char s[128];
  snprintf (s, sizeof s, "const float a0 = r%u;", h);
  assert_non_null (strstr (k.code, s));
  snprintf (s, sizeof s, "ps_st_f16 (b%u, i, r%u);", h, h);
  assert_non_null (strstr (k.code, s));
  snprintf (s, sizeof s, "ps_st_f32 (b%u, i, r%u);", y, y);
  assert_non_null (strstr (k.code, s));
  /* The launch covers the larger grid of the two. */
  assert_int_equal (k.parts[0].node, ab[1]);
  assert_int_equal (k.parts[0].n, 2048);
  ps_ksrc_free (&k);

  /* c + d: d reads `short` (256 floats) cyclically for 1024 elements, and
   * c writes it in the same group: one loop would race, so two launches. */
  uint32_t cd[] = { node_id (&g, "c"), node_id (&g, "d") };
  assert_int_equal (ps_ksrc_build (&k, &c, cd, 2, NULL), 0);
  assert_int_equal (k.n_parts, 2);
  assert_non_null (strstr (k.note, "\"d\" reads \"short\" cyclically"));
  assert_non_null (strstr (k.code, "ps_fused_copy_add_p0 ("));
  assert_non_null (strstr (k.code, "ps_fused_copy_add_p1 ("));
  assert_int_equal (k.parts[0].n, 256);
  assert_int_equal (k.parts[1].n, 1024);
#ifdef PS_GPU_BACKEND
  compile_ok (k.code, "split", "ps_fused_copy_add_p1");
#endif
  ps_ksrc_free (&k);
  ps_ksrc_ctx_free (&c);
  ps_graph_free (&g);
}

/* A long chain fused into one group runs as launches of 32 members; a
 * value that crosses from one launch to the next goes through memory. */
static void
profiler_kernels_large_group (void **state)
{
  (void) state;
  enum { N = 70 };
  size_t cap = 64 * 1024, len = 0;
  char *json = malloc (cap);
  assert_non_null (json);
  len += (size_t) snprintf (json + len, cap - len,
                            "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [");
  for (int i = 0; i <= N; i++)
    len += (size_t) snprintf (json + len, cap - len, "%s{\"name\": \"t%d\", \"bytes\": 4096%s}",
                              i ? "," : "", i, i == N ? ", \"external\": true" : "");
  len += (size_t) snprintf (json + len, cap - len, "], \"nodes\": [");
  for (int i = 1; i <= N; i++)
    len += (size_t) snprintf (json + len, cap - len,
                              "%s{\"name\": \"k%d\", \"op\": \"kernel\", \"function\": \"neg\", "
                              "\"impl\": \"neg\", \"fusible\": true, \"grid\": 4, \"block\": 256, "
                              "\"reads\": [\"t%d\"], \"writes\": [\"t%d\"]}",
                              i > 1 ? "," : "", i, i - 1, i);
  snprintf (json + len, cap - len, "]}");
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  free (json);
  ps_ksrc_ctx c;
  assert_int_equal (ps_ksrc_ctx_init (&c, &g), 0);
  uint32_t nodes[N];
  for (uint32_t i = 0; i < N; i++)
    nodes[i] = i;
  ps_ksrc k;
  assert_int_equal (ps_ksrc_build (&k, &c, nodes, N, NULL), 0);
  assert_int_equal (k.n_parts, 3);
  assert_non_null (strstr (k.note, "runs as 3 launches"));
  assert_int_equal (k.parts[0].bufs_count, 33);
  assert_int_equal (k.parts[2].bufs_count, 7);
  /* t32, the last output of the first launch, is stored (the second reads
   * it); t31 is not. */
  assert_int_equal (k.bufs[k.parts[0].bufs_begin + 32], 32);
  assert_non_null (strstr (k.code, "ps_st_f32 (b32, i, r32);"));
  assert_null (strstr (k.code, "ps_st_f32 (b31, i, r31);"));
  assert_non_null (strstr (k.code, "ps_fused_neg_neg_neg"));
#ifdef PS_GPU_BACKEND
  char entry[200];
  snprintf (entry, sizeof entry, "%s_p2", k.function);
  compile_ok (k.code, "large", entry);
#endif
  ps_ksrc_free (&k);
  ps_ksrc_ctx_free (&c);
  ps_graph_free (&g);
}

static void
profiler_kernels_user_module (void **state)
{
  (void) state;
  ps_graph g;
  test_load_example ("user-module", &g, NULL);
  ps_ksrc_ctx c;
  assert_int_equal (ps_ksrc_ctx_init (&c, &g), 0);
  uint32_t v = node_id (&g, "saxpy");
  ps_ksrc k;
  assert_int_equal (ps_ksrc_build (&k, &c, &v, 1, NULL), 0);
  assert_int_equal (k.kind, PS_KSRC_USER_CU);
  assert_string_equal (k.function, "saxpy");
  assert_non_null (strstr (k.module_path, "data/examples/saxpy.cu"));
  assert_non_null (strstr (k.code, "saxpy (int n, float a"));
  ps_ksrc_free (&k);

  /* A module that is not there is reported with its resolved path. */
  g.strings[g.kernels[g.nodes[v].aux].module] = 'X';
  ps_gpu_error err;
  assert_int_equal (ps_ksrc_build (&k, &c, &v, 1, &err), PS_EINVAL);
  assert_int_equal (err.status, PS_GPU_BAD_MODULE);
  assert_non_null (strstr (err.message, "data/examples/Xaxpy.cu"));
  ps_ksrc_ctx_free (&c);
  ps_graph_free (&g);
}

/* ---- measured timelines ------------------------------------------------- */

/* Two streams: x is uploaded and scaled on one, y on the other, and the
 * add waits for both. */
static const char two_streams_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
  "{\"name\": \"x\", \"bytes\": 1048576}, {\"name\": \"y\", \"bytes\": 1048576},"
  "{\"name\": \"z\", \"bytes\": 1048576, \"external\": true}],"
  "\"nodes\": ["
  "{\"name\": \"ux\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"x\"]},"
  "{\"name\": \"uy\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"y\"]},"
  "{\"name\": \"sx\", \"op\": \"kernel\", \"function\": \"s\", \"impl\": \"scale\", \"grid\": 64,"
  " \"block\": 256, \"reads\": [\"x\"], \"writes\": [\"x\"]},"
  "{\"name\": \"sy\", \"op\": \"kernel\", \"function\": \"s\", \"impl\": \"scale\", \"grid\": 64,"
  " \"block\": 256, \"reads\": [\"y\"], \"writes\": [\"y\"]},"
  "{\"name\": \"add\", \"op\": \"kernel\", \"function\": \"a\", \"impl\": \"add\", \"grid\": 64,"
  " \"block\": 256, \"reads\": [\"x\", \"y\"], \"writes\": [\"z\"]},"
  "{\"name\": \"fence\", \"op\": \"barrier\"}"
  "]}";

static void
plan_of (ps_graph *g, ps_plan *p, const char *json, bool fusion)
{
  ps_graph_init (g);
  load_string (g, json);
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.fusion = fusion;
  ps_diag d;
  ps_diag_init (&d, "test.json");
  int rc = ps_plan_build (p, g, &o, &d);
  if (rc != 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static uint32_t
step_of (const ps_plan *p, const ps_graph *g, const char *node)
{
  return p->node_step[node_id (g, node)];
}

/* The wait on the other stream that orders `node` after work elsewhere. */
static uint32_t
wait_before (const ps_plan *p, uint32_t step)
{
  for (uint32_t s = step; s-- > 0;)
    if (p->steps[s].stream == p->steps[step].stream && p->steps[s].op == PS_OP_EVENT_WAIT)
      return s;
  return PS_NONE;
}

static void
profiler_measured_timeline (void **state)
{
  (void) state;
  ps_graph g;
  ps_plan p;
  plan_of (&g, &p, two_streams_graph, false);
  assert_true (p.streams_used >= 2);
  uint32_t s_ux = step_of (&p, &g, "ux"), s_uy = step_of (&p, &g, "uy");
  uint32_t s_sx = step_of (&p, &g, "sx"), s_sy = step_of (&p, &g, "sy");
  uint32_t s_add = step_of (&p, &g, "add");
  /* Whichever scale shares the add's stream, the other one is waited for. */
  uint32_t s_other = p.steps[s_sx].stream == p.steps[s_add].stream ? s_sy : s_sx;
  uint32_t s_mine = s_other == s_sx ? s_sy : s_sx;
  uint32_t s_up_other = s_other == s_sx ? s_ux : s_uy, s_up_mine = s_other == s_sx ? s_uy : s_ux;
  assert_int_not_equal (wait_before (&p, s_add), PS_NONE);

  ps_step_times t;
  assert_int_equal (ps_step_times_init (&t, p.n_steps, 3), 0);
  for (uint32_t i = 0; i < 3; i++) {
    double j = i * 100.0; /* jitter between iterations */
    ps_step_times_add (&t, i, s_up_mine, 1000 + j, 2000 + j);
    ps_step_times_add (&t, i, s_up_other, 1000, 2000);
    ps_step_times_add (&t, i, s_mine, 2100, 3100 + j);
    /* The other stream's scale ends late: the add's stream stalls. */
    ps_step_times_add (&t, i, s_other, 2100, 9000 + j);
    /* Two records for one step (several launches): the span covers both. */
    ps_step_times_add (&t, i, s_add, 9500, 9800);
    ps_step_times_add (&t, i, s_add, 9700, 10500 + 3 * j);
  }
  ps_timeline tl;
  double step_ns[64];
  assert_true (p.n_steps <= 64);
  assert_int_equal (ps_measured_timeline (&p, &t, "Test GPU", &tl, step_ns), 0);
  assert_int_equal (tl.source, PS_TL_MEASURED);
  assert_int_equal (tl.iterations, 3);
  assert_string_equal (tl.device, "Test GPU");

  uint32_t work = 0;
  for (uint32_t s = 0; s < p.n_steps; s++)
    work += p.steps[s].op != PS_OP_EVENT_RECORD && p.steps[s].op != PS_OP_EVENT_WAIT;
  assert_int_equal (tl.n_spans, work);
  /* Medians: start and duration of each step over the iterations. */
  assert_float_equal (step_ns[s_up_mine], 1000, 1e-9);
  assert_float_equal (step_ns[s_mine], 1100, 1e-9);
  assert_float_equal (step_ns[s_other], 7000, 1e-9);
  assert_float_equal (step_ns[s_add], 1300, 1e-9);
  for (uint32_t x = 0; x < tl.n_spans; x++) {
    const ps_span *sp = &tl.spans[x];
    if (sp->step == s_add) {
      assert_float_equal (sp->start_ns, 9500, 1e-9);
      assert_float_equal (sp->end_ns, 10800, 1e-9);
      assert_int_equal (sp->kind, PS_SPAN_KERNEL);
    }
    if (p.steps[sp->step].op == PS_OP_BARRIER) {
      assert_float_equal (sp->start_ns, sp->end_ns, 1e-9);
      assert_int_equal (sp->kind, PS_SPAN_OTHER);
    }
  }
  /* The add's stream sat at its wait from the end of its own scale to the
   * end of the other scale, and the flow says so. */
  bool found = false;
  for (uint32_t i = 0; i < tl.n_stalls; i++) {
    const ps_stall *sl = &tl.stalls[i];
    if (sl->step != wait_before (&p, s_add))
      continue;
    found = true;
    assert_float_equal (sl->start_ns, 3200, 1e-9);
    assert_float_equal (sl->end_ns, 9100, 1e-9);
    assert_int_equal (tl.spans[sl->waiting_for].step, s_other);
    assert_int_equal (sl->on_stream, p.steps[s_other].stream);
  }
  assert_true (found);
  assert_true (tl.n_flows >= 1);
  assert_float_equal (tl.makespan_ns, 10800, 1e-9);
  ps_timeline_free (&tl);

  /* A step measured in no iteration gets an empty span where its stream
   * was, and a duration of -1. */
  ps_step_times_free (&t);
  assert_int_equal (ps_step_times_init (&t, p.n_steps, 2), 0);
  ps_step_times_add (&t, 0, s_up_mine, 10, 20);
  assert_int_equal (ps_measured_timeline (&p, &t, "x", &tl, step_ns), 0);
  assert_float_equal (step_ns[s_up_mine], 10, 1e-9);
  assert_true (step_ns[s_mine] < 0);
  ps_timeline_free (&tl);
  ps_step_times_free (&t);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

#ifdef PS_GPU_BACKEND
/* ---- CUPTI records ------------------------------------------------------ */

static CUpti_ActivityKernel10
kernel_rec (uint32_t corr, uint64_t start, uint64_t end, uint64_t node)
{
  CUpti_ActivityKernel10 k;
  memset (&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.correlationId = corr;
  k.graphNodeId = node;
  k.streamId = 7;
  k.gridX = 64;
  k.blockX = 256;
  return k;
}

static CUpti_ActivityExternalCorrelation
ext_rec (uint32_t corr, uint64_t id)
{
  CUpti_ActivityExternalCorrelation e;
  memset (&e, 0, sizeof e);
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  e.externalId = id;
  e.correlationId = corr;
  return e;
}

static void
profiler_cupti_streams_records (void **state)
{
  (void) state;
  ps_graph g;
  ps_plan p;
  plan_of (&g, &p, two_streams_graph, false);
  uint32_t s_ux = step_of (&p, &g, "ux"), s_sx = step_of (&p, &g, "sx");
  uint32_t s_add = step_of (&p, &g, "add");

  ps_cupti_map m;
  assert_int_equal (ps_cupti_map_init (&m, PS_PROFILE_STREAMS, p.n_steps, 2), 0);
  ps_cupti_map_origin (&m, 0, 1000000);
  ps_cupti_map_origin (&m, 1, 2000000);
  ps_cupti_map_expect (&m, s_ux, 1, PS_CUPTI_MEMCPY);
  ps_cupti_map_expect (&m, s_sx, 1, PS_CUPTI_KERNEL);
  ps_cupti_map_expect (&m, s_add, 2, PS_CUPTI_KERNEL); /* two launches */

  /* Records in the order CUPTI may deliver them: work before the external
   * correlation records that name it, iterations interleaved. */
  CUpti_ActivityMemcpy6 cp;
  memset (&cp, 0, sizeof cp);
  cp.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  cp.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  cp.bytes = 1048576;
  cp.start = 1000500;
  cp.end = 1001500;
  cp.correlationId = 11;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &cp), 0);
  cp.start = 2000400;
  cp.end = 2001500;
  cp.correlationId = 31;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &cp), 0);

  CUpti_ActivityKernel10 k = kernel_rec (12, 1002000, 1003000, 0);
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (13, 1005000, 1006000, 0); /* add, first launch */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (14, 1006000, 1006500, 0); /* add, second launch */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (32, 2002000, 2003400, 0);
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (99, 5, 6, 0); /* no external id: not ours (input fill) */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (50, 7, 8, 0); /* a traced warm-up run: iteration 2 of 2 */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  /* CUPTI could not time this one (start = end = 0): it must not make the
   * step start 2 ms before its iteration. */
  k = kernel_rec (33, 0, 0, 0);
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);

  CUpti_ActivityMemset4 ms;
  memset (&ms, 0, sizeof ms);
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.correlationId = 98;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &ms), 0);
  CUpti_ActivitySynchronization2 sy;
  memset (&sy, 0, sizeof sy);
  sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sy.correlationId = 15;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &sy), 0);

  const struct {
    uint32_t corr;
    uint32_t iter, step;
  } ext[] = { { 11, 0, s_ux }, { 12, 0, s_sx }, { 13, 0, s_add }, { 14, 0, s_add },
              { 31, 1, s_ux }, { 32, 1, s_sx }, { 50, 2, s_sx }, { 33, 1, s_add } };
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    CUpti_ActivityExternalCorrelation e =
      ext_rec (ext[i].corr, ps_cupti_external_id (ext[i].iter, ext[i].step));
    assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &e), 0);
  }
  /* Another tool's external ids are not ours. */
  CUpti_ActivityExternalCorrelation other = ext_rec (98, 1);
  other.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &other), 0);

  ps_step_times t;
  assert_int_equal (ps_step_times_init (&t, p.n_steps, 2), 0);
  assert_int_equal (ps_cupti_map_finish (&m, &t), 0);
  assert_int_equal (m.matched, 6);
  assert_int_equal (m.unmatched, 2); /* the fill kernel and the memset */
  assert_int_equal (m.unmatched_by[PS_CUPTI_KERNEL], 1);
  assert_int_equal (m.unmatched_by[PS_CUPTI_MEMSET], 1);
  assert_int_equal (m.sync_records, 1);
  assert_int_equal (m.warmup, 1);
  assert_int_equal (m.untimed, 1);
  /* Iteration 1 of add: one launch untimed, the other never came. */
  assert_int_equal (m.expected, 8);
  assert_int_equal (m.missing, 1);
  assert_int_equal (m.missing_by[PS_CUPTI_KERNEL], 1);
  assert_int_equal (m.unmeasured, 0);
  size_t n = p.n_steps;
  assert_float_equal (t.start[s_ux], 500, 1e-9);
  assert_float_equal (t.end[s_ux], 1500, 1e-9);
  assert_float_equal (t.start[n + s_ux], 400, 1e-9);
  assert_float_equal (t.start[s_add], 5000, 1e-9);
  assert_float_equal (t.end[s_add], 6500, 1e-9);
  assert_float_equal (t.end[n + s_sx], 3400, 1e-9);
  assert_true (isnan (t.start[n + s_add]));

  ps_timeline tl;
  double step_ns[64];
  assert_int_equal (ps_measured_timeline (&p, &t, "Test GPU", &tl, step_ns), 0);
  assert_float_equal (step_ns[s_ux], 1050, 1e-9);
  assert_float_equal (step_ns[s_sx], 1200, 1e-9);
  assert_float_equal (step_ns[s_add], 1500, 1e-9);
  ps_timeline_free (&tl);
  ps_step_times_free (&t);
  ps_cupti_map_free (&m);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

static void
profiler_cupti_graph_records (void **state)
{
  (void) state;
  ps_cupti_map m;
  assert_int_equal (ps_cupti_map_init (&m, PS_PROFILE_GRAPH, 4, 2), 0);
  /* Capture made nodes 10..12 for steps 0, 2 and 3; instantiation cloned
   * them as 110..112, and a second one cloned those clones as 210..212
   * (clones of clones, reported in any order). */
  assert_int_equal (ps_cupti_map_node (&m, 12, 3), 0);
  assert_int_equal (ps_cupti_map_node (&m, 10, 0), 0);
  assert_int_equal (ps_cupti_map_node (&m, 11, 2), 0);
  for (uint64_t i = 0; i < 3; i++)
    assert_int_equal (ps_cupti_map_clone (&m, 110 + i, 210 + i), 0);
  for (uint64_t i = 0; i < 3; i++)
    assert_int_equal (ps_cupti_map_clone (&m, 10 + i, 110 + i), 0);
  ps_cupti_map_expect (&m, 0, 1, PS_CUPTI_KERNEL);
  ps_cupti_map_expect (&m, 2, 1, PS_CUPTI_MEMSET);
  ps_cupti_map_expect (&m, 3, 1, PS_CUPTI_MEMCPY);
  /* The traced warm-up run (iteration 2) ran first, then 0 and 1. */
  ps_cupti_map_origin (&m, 2, 50);
  ps_cupti_map_until (&m, 2, 90);
  ps_cupti_map_origin (&m, 0, 100);
  ps_cupti_map_until (&m, 0, 10000);
  ps_cupti_map_origin (&m, 1, 10100);
  ps_cupti_map_until (&m, 1, 20000);
  /* Correlation ids of graph launches are not to be trusted (CUPTI before
   * 13.1 Update 1 got them wrong after the first session): every record
   * here has iteration 0's, and iterations come from the windows. */
  CUpti_ActivityExternalCorrelation e0 = ext_rec (7, ps_cupti_external_graph_id (0));
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &e0), 0);
  CUpti_ActivityKernel10 k = kernel_rec (7, 200, 300, 210);
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  CUpti_ActivityMemset4 ms;
  memset (&ms, 0, sizeof ms);
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.start = 300;
  ms.end = 350;
  ms.correlationId = 7;
  ms.graphNodeId = 111;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &ms), 0);
  CUpti_ActivityMemcpy6 cp;
  memset (&cp, 0, sizeof cp);
  cp.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  cp.start = 10400;
  cp.end = 10900;
  cp.correlationId = 7;
  cp.graphNodeId = 212;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &cp), 0);
  k = kernel_rec (7, 10150, 10170, 210); /* iteration 1's kernel */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  ms.start = 10200; /* iteration 1's memset, and iteration 0's copy never came */
  ms.end = 10260;
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &ms), 0);
  k = kernel_rec (7, 60, 70, 110); /* the warm-up's */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (7, 10150, 10170, 999); /* a node planscope did not make */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (7, 20500, 20600, 110); /* after every window */
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);

  ps_step_times t;
  assert_int_equal (ps_step_times_init (&t, 4, 2), 0);
  assert_int_equal (ps_cupti_map_finish (&m, &t), 0);
  assert_int_equal (m.matched, 5);
  assert_int_equal (m.warmup, 1);
  assert_int_equal (m.unmatched, 2);
  assert_int_equal (m.expected, 6);
  assert_int_equal (m.missing, 1);
  assert_int_equal (m.missing_by[PS_CUPTI_MEMCPY], 1);
  assert_int_equal (m.unmeasured, 0);
  assert_float_equal (t.start[0], 100, 1e-9);
  assert_float_equal (t.end[0], 200, 1e-9);
  assert_float_equal (t.start[2], 200, 1e-9);
  assert_float_equal (t.start[4 + 0], 50, 1e-9);
  assert_float_equal (t.start[4 + 2], 100, 1e-9);
  assert_float_equal (t.start[4 + 3], 300, 1e-9);
  assert_float_equal (t.end[4 + 3], 800, 1e-9);
  assert_true (isnan (t.start[3]));
  assert_true (isnan (t.start[1]));
  ps_step_times_free (&t);
  ps_cupti_map_free (&m);
}

/* A step whose every record is untimed is not measured at all. */
static void
profiler_cupti_untimed_step (void **state)
{
  (void) state;
  ps_cupti_map m;
  assert_int_equal (ps_cupti_map_init (&m, PS_PROFILE_GRAPH, 2, 2), 0);
  assert_int_equal (ps_cupti_map_node (&m, 10, 0), 0);
  assert_int_equal (ps_cupti_map_node (&m, 11, 1), 0);
  ps_cupti_map_expect (&m, 0, 1, PS_CUPTI_KERNEL);
  ps_cupti_map_expect (&m, 1, 1, PS_CUPTI_KERNEL);
  ps_cupti_map_origin (&m, 0, 100);
  ps_cupti_map_until (&m, 0, 1000);
  ps_cupti_map_origin (&m, 1, 1100);
  ps_cupti_map_until (&m, 1, 2000);
  CUpti_ActivityKernel10 k = kernel_rec (1, 200, 300, 10);
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  k = kernel_rec (2, 1200, 1300, 10);
  assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  for (int i = 0; i < 2; i++) {
    k = kernel_rec (3, 0, 0, 11);
    assert_int_equal (ps_cupti_map_record (&m, (CUpti_Activity *) &k), 0);
  }
  ps_step_times t;
  assert_int_equal (ps_step_times_init (&t, 2, 2), 0);
  assert_int_equal (ps_cupti_map_finish (&m, &t), 0);
  assert_int_equal (m.matched, 2);
  assert_int_equal (m.untimed, 2);
  assert_int_equal (m.missing, 0);
  assert_int_equal (m.unmatched, 0);
  assert_int_equal (m.unmeasured, 1);
  assert_int_equal (m.first_unmeasured, 1);
  assert_true (isnan (t.start[1]) && isnan (t.start[3]));
  ps_step_times_free (&t);
  ps_cupti_map_free (&m);
}

/* CUPTI is looked for in the toolkit's extras/CUPTI/lib64 (libcupti.so.13
 * there too) and in the copy a PyTorch wheel installs beside the python3
 * on PATH (a virtual environment: bin/python3, lib/python3.X/...). */
static void
profiler_cupti_candidates (void **state)
{
  (void) state;
  char *dir = make_temp_dir ();
  char cmd[8800];
  snprintf (cmd, sizeof cmd,
            "mkdir -p '%s/bin' '%s/lib/python3.12/site-packages/nvidia/cu13/lib' && "
            "printf '#!/bin/sh\\n' > '%s/bin/python3' && chmod +x '%s/bin/python3' && "
            ": > '%s/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13'",
            dir, dir, dir, dir, dir);
  assert_int_equal (system (cmd), 0);
  const char *old_path = getenv ("PATH");
  char *saved = strdup (old_path ? old_path : "");
  char path[8800];
  snprintf (path, sizeof path, "%s/bin:%s", dir, saved);
  setenv ("PATH", path, 1);
  unsetenv ("PLANSCOPE_LIBCUPTI");
  char list[PS__MAX_CANDS_TEXT];
  size_t n = ps__lib_candidates (PS__LIB_CUPTI, list, sizeof list);
  setenv ("PATH", saved, 1);
  free (saved);
  assert_true (n >= 4);
  char want[4400];
  snprintf (want, sizeof want, "%s/bin/../lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13",
            dir);
  if (!strstr (list, want))
    fail_msg ("no %s in:\n%s", want, list);
  char root[4096];
  if (ps__toolkit_root (root, sizeof root)) {
    snprintf (want, sizeof want, "%s/extras/CUPTI/lib64/libcupti.so.13", root);
    if (!strstr (list, want))
      fail_msg ("no %s in:\n%s", want, list);
  }
  setenv ("PLANSCOPE_LIBCUPTI", "/x/libcupti.so", 1);
  assert_int_equal (ps__lib_candidates (PS__LIB_CUPTI, list, sizeof list), 1);
  assert_string_equal (list, "/x/libcupti.so");
  unsetenv ("PLANSCOPE_LIBCUPTI");
  remove_dir (dir);
}
#endif

/* Only what is read before it is written is filled: an upload's
 * destination, a kernel's output and a memset's target are not inputs,
 * however the pool places them. */
static void
profiler_plan_inputs (void **state)
{
  (void) state;
  static const char json[] =
    "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
    "{\"name\": \"up\", \"bytes\": 4096}, {\"name\": \"w\", \"bytes\": 4096},"
    "{\"name\": \"h\", \"bytes\": 4096}, {\"name\": \"z\", \"bytes\": 4096},"
    "{\"name\": \"acc\", \"bytes\": 4096}, {\"name\": \"out\", \"bytes\": 4096, \"external\": true}],"
    "\"nodes\": ["
    "{\"name\": \"upload\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"up\"]},"
    "{\"name\": \"clear\", \"op\": \"memset\", \"writes\": [\"z\"]},"
    "{\"name\": \"k1\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\", \"grid\": 4,"
    " \"block\": 256, \"reads\": [\"up\", \"w\"], \"writes\": [\"h\"]},"
    "{\"name\": \"k2\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\", \"grid\": 4,"
    " \"block\": 256, \"reads\": [\"h\", \"acc\"], \"writes\": [\"acc\"]},"
    "{\"name\": \"k3\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\", \"grid\": 4,"
    " \"block\": 256, \"reads\": [\"acc\", \"z\"], \"writes\": [\"out\"]}]}";
  for (int fusion = 0; fusion < 2; fusion++) {
    ps_graph g;
    ps_plan p;
    plan_of (&g, &p, json, fusion);
    uint8_t input[8];
    ps_plan_inputs (&p, input);
    const char *inputs[] = { "w", "acc" };
    for (uint32_t b = 0; b < g.n_buffers; b++) {
      bool want = false;
      for (size_t i = 0; i < 2; i++)
        want |= strcmp (ps_buffer_name (&g, b), inputs[i]) == 0;
      if (input[b] != want)
        fail_msg ("fusion %d: buffer %s %s an input", fusion, ps_buffer_name (&g, b),
                  want ? "is" : "is not");
    }
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
}

/* A synthetic kernel alone that reads a buffer it writes, with fewer
 * elements than it computes, reads only the element each thread writes
 * there: no thread reads what another one writes. */
static void
profiler_kernels_synthetic_in_place (void **state)
{
  (void) state;
  static const char json[] =
    "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
    "{\"name\": \"small\", \"bytes\": 400}, {\"name\": \"big\", \"bytes\": 40000},"
    "{\"name\": \"side\", \"bytes\": 40}],"
    "\"nodes\": [{\"name\": \"k\", \"op\": \"kernel\", \"function\": \"opaque\", \"grid\": 40,"
    " \"block\": 256, \"reads\": [\"small\", \"side\"], \"writes\": [\"small\", \"big\"]}]}";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  ps_ksrc_ctx c;
  assert_int_equal (ps_ksrc_ctx_init (&c, &g), 0);
  ps_ksrc k;
  uint32_t v = 0;
  assert_int_equal (ps_ksrc_build (&k, &c, &v, 1, NULL), 0);
  uint32_t js = param_of (&k, &g, "small"), jd = param_of (&k, &g, "side");
  char own[128], cyclic[128];
  snprintf (own, sizeof own, "acc += (i < n%u ? ps_ld_f32 (b%u, i, n%u) : 0.0f);", js, js, js);
  snprintf (cyclic, sizeof cyclic, "acc += ps_ld_f32 (b%u, i, n%u);", jd, jd);
  if (!strstr (k.code, own) || !strstr (k.code, cyclic))
    fail_msg ("wanted \"%s\" and \"%s\" in:\n%s", own, cyclic, k.code);
#ifdef PS_GPU_BACKEND
  compile_ok (k.code, "synthetic.cu", k.function);
#endif
  ps_ksrc_free (&k);
  ps_ksrc_ctx_free (&c);
  ps_graph_free (&g);
}



int
main (void)
{
  const struct CMUnitTest kernels[] = {
    cmocka_unit_test (profiler_kernels_builtins_generate),
#ifdef PS_GPU_BACKEND
    cmocka_unit_test (profiler_kernels_builtins_compile),
#endif
    cmocka_unit_test (profiler_kernels_fused_random),
    cmocka_unit_test (profiler_kernels_fusion_registers),
    cmocka_unit_test (profiler_kernels_large_group),
    cmocka_unit_test (profiler_kernels_user_module),
    cmocka_unit_test (profiler_kernels_synthetic_in_place),
  };
  const struct CMUnitTest measure[] = {
    cmocka_unit_test (profiler_measured_timeline),
#ifdef PS_GPU_BACKEND
    cmocka_unit_test (profiler_cupti_streams_records),
    cmocka_unit_test (profiler_cupti_graph_records),
    cmocka_unit_test (profiler_cupti_untimed_step),
    cmocka_unit_test (profiler_cupti_candidates),
#endif
    cmocka_unit_test (profiler_plan_inputs),
  };
  int failed = cmocka_run_group_tests_name ("/profiler/kernels", kernels, NULL, NULL);
  failed += cmocka_run_group_tests_name ("/profiler/measured", measure, NULL, NULL);
  return failed ? 1 : 0;
}
