/* test-profiler-runs.c: planscope-cli's `kernels` and `profile` without a
 * GPU: `kernels` writes PTX that ptxas accepts for every example, fused or
 * not; every way a GPU can be unavailable (no driver, the stub driver, no
 * device, an unsupported one, an old driver, NVRTC or CUPTI missing, CUPTI
 * failing, a build without the backend) makes `profile` exit 3 with its
 * reason, a fake libcuda/libcupti (fake-cuda.c) standing in for the
 * driver; and on the fake's "working" GPU every example profiles in both
 * modes, passes --check, and a --check that sees different outputs fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-graph.h"
#include "ps-import.h"
#include "ps-plan.h"
#include "ps-test-cli.h"

static const char *examples[] = {
  "copy-compute-overlap", "events-barrier-conditional", "long-kernel-wait",
  "transformer-block",    "user-module",
};
#define N_EXAMPLES (sizeof examples / sizeof examples[0])

/* `kernels` writes a .cu and (with NVRTC) a .ptx for every kernel step of
 * every example, fused or not, and ptxas accepts every .ptx. */
static void
profiler_kernels_examples (void **state)
{
  (void) state;
  for (size_t e = 0; e < N_EXAMPLES; e++)
    for (int fused = 0; fused < 2; fused++) {
      char *dir = make_temp_dir ();
      char args[8192], *out = NULL;
      snprintf (args, sizeof args, "kernels '%s/data/examples/%s.json' %s -o '%s/k'",
                source_root (), examples[e], fused ? "" : "--no-fusion", dir);
      int rc = run_cli (NULL, args, &out);
#ifdef PS_GPU_BACKEND
      if (rc != 0)
        fail_msg ("%s: exit %d\n%s", args, rc, out);
      /* One listing line per kernel step, each with its PTX. */
      size_t lines = 0, with_ptx = 0;
      for (char *p = out; (p = strstr (p, "step ")) != NULL; p++) {
        lines++;
        char *eol = strchr (p, '\n');
        char *ptx = strstr (p, ".ptx");
        if (eol && ptx && ptx < eol)
          with_ptx++;
      }
      assert_true (lines > 0);
      assert_int_equal (lines, with_ptx);
      if (fused && strcmp (examples[e], "transformer-block") == 0)
        assert_non_null (strstr (out, "fc1_bias + fc1_gelu -> "));
#ifdef PS_TEST_PTXAS
      char cmd[8192];
      snprintf (cmd, sizeof cmd,
                "n=0; for f in '%s'/k/*.ptx; do '%s' -arch=sm_90 \"$f\" -o /dev/null || exit 1; "
                "n=$((n+1)); done; test $n -eq %zu",
                dir, PS_TEST_PTXAS, lines);
      if (system (cmd) != 0)
        fail_msg ("ptxas rejected the PTX of %s (%s)", examples[e], dir);
#endif
#else
      /* No NVRTC in this build: the sources are written, then exit 3. */
      assert_int_equal (rc, 3);
      assert_non_null (strstr (out, "GPU backend not built"));
      assert_non_null (strstr (out, ".cu"));
#endif
      free (out);
      remove_dir (dir);
    }
}

/* ---- unavailable GPUs --------------------------------------------------- */

static void
profiler_errors_exit_3 (void **state)
{
  (void) state;
  char args[4600], ex[4200];
  example_path (ex, sizeof ex, "user-module");
  snprintf (args, sizeof args, "profile %s", ex);
#ifdef PS_GPU_BACKEND
  /* No driver at all (forced, so that this also holds on a GPU machine). */
  expect_cli ("PLANSCOPE_LIBCUDA=/nonexistent/libcuda.so.1", args, 3,
              "no NVIDIA driver: /nonexistent/libcuda.so.1 could not be loaded (");
#ifdef PS_TEST_STUB_CUDA
  expect_cli ("PLANSCOPE_LIBCUDA=" PS_TEST_STUB_CUDA, args, 3,
              "is the CUDA toolkit's stub library, not a driver (CUDA_ERROR_STUB_LIBRARY)");
#endif
#ifdef PS_TEST_FAKE_CUDA
  const char *fake = "PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA;
  char env[4096];
  snprintf (env, sizeof env, "%s PS_FAKE_CUDA=nodevice", fake);
  expect_cli (env, args, 3, "no GPU: the NVIDIA driver (CUDA 13.0) sees no GPU");
  snprintf (env, sizeof env, "%s PS_FAKE_CUDA=oldgpu", fake);
  expect_cli (env, args, 3, "unsupported GPU: Fake GPU has compute capability 6.1; NVRTC");
  snprintf (env, sizeof env, "%s PS_FAKE_CUDA=olddriver", fake);
  expect_cli (env, args, 3,
              "the NVIDIA driver cannot be used: the driver supports CUDA 11.8; planscope "
              "needs 12.0 or newer");
  snprintf (env, sizeof env, "%s PS_FAKE_CUDA=initfail", fake);
  expect_cli (env, args, 3, "cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
  snprintf (env, sizeof env, "PLANSCOPE_LIBCUDA=%s PLANSCOPE_LIBNVRTC=/nonexistent/libnvrtc.so",
            PS_TEST_FAKE_CUDA);
  expect_cli (env, args, 3, "NVRTC missing: libnvrtc could not be loaded (tried /nonexistent");
  snprintf (env, sizeof env, "PLANSCOPE_LIBCUDA=%s PLANSCOPE_LIBCUPTI=/nonexistent/libcupti.so",
            PS_TEST_FAKE_CUDA);
  expect_cli (env, args, 3, "CUPTI missing: libcupti could not be loaded (tried /nonexistent");
  snprintf (env, sizeof env, "%s PS_FAKE_CUPTI=fail", fake);
  expect_cli (env, args, 3, "CUPTI failed: cuptiSubscribe (is another profiler attached?) "
                            "failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
#endif
#else
  expect_cli (NULL, args, 3, "GPU backend not built: ");
#endif
  /* Bad input is exit 1, not 3, even without a GPU. */
  expect_cli ("PLANSCOPE_LIBCUDA=/nonexistent/libcuda.so.1", "profile /nonexistent.json", 1, NULL);
  expect_cli (NULL, "profile --mode bogus x.json", 2, "--mode is streams or graph");
}

static void
profiler_errors_kernels_without_nvrtc (void **state)
{
  (void) state;
  char *dir = make_temp_dir ();
  char args[8192], ex[4200];
  example_path (ex, sizeof ex, "copy-compute-overlap");
  snprintf (args, sizeof args, "kernels %s -o '%s/k'", ex, dir);
#ifdef PS_GPU_BACKEND
  expect_cli ("PLANSCOPE_LIBNVRTC=/nonexistent/libnvrtc.so", args, 3, "NVRTC missing: ");
#else
  expect_cli (NULL, args, 3, "GPU backend not built: ");
#endif
  /* The CUDA C is written anyway: four fused gain + clip kernels. */
  char pattern[4300];
  snprintf (pattern, sizeof pattern, "%s/k/step*-ps_fused_scale_tanh.cu", dir);
  glob_t gl;
  assert_int_equal (glob (pattern, 0, NULL, &gl), 0);
  assert_int_equal (gl.gl_pathc, 4);
  globfree (&gl);
  remove_dir (dir);
}

#ifdef PS_TEST_FAKE_CUDA
/* ---- whole runs on the fake driver -------------------------------------- */

static size_t
count (const char *s, const char *needle)
{
  size_t n = 0;
  for (const char *p = s; (p = strstr (p, needle)) != NULL; p += strlen (needle))
    n++;
  return n;
}

static void
profiler_fake_profile_examples (void **state)
{
  (void) state;
  /* Compiled modules are cached on disk, shared by the runs below. */
  char *cache = make_temp_dir ();
  char env[4400];
  snprintf (env, sizeof env,
            "PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA
            " XDG_CACHE_HOME='%s'", cache);
  for (size_t e = 0; e < N_EXAMPLES; e++)
    for (int mode = 0; mode < 2; mode++) {
      char args[4600], ex[4200], *out = NULL;
      example_path (ex, sizeof ex, examples[e]);
      snprintf (args, sizeof args, "profile %s --mode %s --iterations 3 --check --json", ex,
                mode ? "graph" : "streams");
      int rc = run_cli (env, args, &out);
      if (rc != 0)
        fail_msg ("%s: exit %d\n%s", args, rc, out);
      assert_non_null (strstr (out, "\"source\": \"measured\""));
      assert_non_null (strstr (out, "\"iterations\": 3"));
      assert_non_null (strstr (out, "\"check\": {\"equal\": true"));
      assert_non_null (strstr (out, "\"unmatched\": 0"));
      assert_non_null (strstr (out, "\"makespan_error\": "));

      /* One span per non-event step, and every kernel, copy and memset of
       * the plan was measured (the fake reports them all). */
      ps_graph g;
      ps_plan p;
      char path[4300];
      snprintf (path, sizeof path, "%s/data/examples/%s.json", source_root (), examples[e]);
      ps_graph_init (&g);
      ps_diag d;
      ps_diag_init (&d, path);
      assert_int_equal (ps_import_graph_file (&g, path, NULL, &d), 0);
      ps_diag_free (&d);
      ps_plan_options o;
      ps_plan_options_init (&o);
      ps_diag_init (&d, path);
      assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
      ps_diag_free (&d);
      size_t work = 0;
      for (uint32_t s = 0; s < p.n_steps; s++)
        work += p.steps[s].op != PS_OP_EVENT_RECORD && p.steps[s].op != PS_OP_EVENT_WAIT;
      const char *spans = strstr (out, "\"spans\": [");
      const char *stalls = strstr (out, "\"stalls\": [");
      assert_non_null (spans);
      assert_non_null (stalls);
      char *sp = strndup (spans, (size_t) (stalls - spans));
      assert_int_equal (count (sp, "\"start_ns\""), work);
      free (sp);
      const char *st = strstr (out, "\"step_times\": [");
      assert_non_null (st);
      assert_true (count (st, "\"measured_ns\"") >= 1);
      ps_plan_free (&p);
      ps_graph_free (&g);
      free (out);
    }
  char pattern[4300];
  snprintf (pattern, sizeof pattern, "%s/planscope/*.cubin", cache);
  glob_t gl;
  assert_int_equal (glob (pattern, 0, NULL, &gl), 0);
  assert_true (gl.gl_pathc > 5);
  globfree (&gl);
  remove_dir (cache);
}

static void
profiler_fake_check_catches_differences (void **state)
{
  (void) state;
  char args[4600], ex[4200];
  example_path (ex, sizeof ex, "user-module");
  snprintf (args, sizeof args, "profile %s --check --iterations 1", ex);
  expect_cli ("PS_FAKE_CORRUPT=1 PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA
              " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA " XDG_CACHE_HOME=/nonexistent",
              args, 1, "check failed: fused and unfused outputs differ (buffer \"out\"[0]");
}

static void
profiler_fake_text_report (void **state)
{
  (void) state;
  char *dir = make_temp_dir ();
  char args[8800], ex[4200], *out = NULL;
  example_path (ex, sizeof ex, "events-barrier-conditional");
  snprintf (args, sizeof args, "profile %s --mode graph --iterations 2 --trace '%s/t.json'", ex,
            dir);
  int rc = run_cli ("PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA
                    " XDG_CACHE_HOME=/nonexistent",
                    args, &out);
  if (rc != 0)
    fail_msg ("exit %d\n%s", rc, out);
  assert_non_null (strstr (out, "on Fake GPU (graph mode, median of 2 runs"));
  assert_non_null (strstr (out, "predicted"));
  assert_non_null (strstr (out, "CUPTI         a run takes"));
  assert_non_null (strstr (out, "compute_grad"));
  free (out);
  char path[4300];
  snprintf (path, sizeof path, "%s/t.json", dir);
  FILE *f = fopen (path, "r");
  assert_non_null (f);
  fclose (f);
  remove_dir (dir);
}

/* A block of 2^22 x 2^21 x 2^21 threads is 2^64: a wrapping product would
 * make it 0 threads, within the kernel's 1024, and launch it. */
static void
profiler_fake_block_product_saturates (void **state)
{
  (void) state;
  char *dir = make_temp_dir ();
  char path[4300], args[4400];
  snprintf (path, sizeof path, "%s/wrap.json", dir);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs ("{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"wrap\",\n"
         " \"buffers\": [{\"name\": \"x\", \"bytes\": 4096, \"external\": true}],\n"
         " \"nodes\": [{\"name\": \"k\", \"op\": \"kernel\", \"function\": \"relu\",\n"
         "   \"impl\": \"relu\", \"grid\": 1, \"block\": [4194304, 2097152, 2097152],\n"
         "   \"reads\": [\"x\"], \"writes\": [\"x\"]}]}\n",
         f);
  assert_int_equal (fclose (f), 0);
  snprintf (args, sizeof args, "profile '%s'", path);
  expect_cli ("PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA
              " XDG_CACHE_HOME=/nonexistent",
              args, 1,
              "a block of 18446744073709551615 threads is more than this kernel can have");
  remove_dir (dir);
}
#endif

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (profiler_kernels_examples),
    cmocka_unit_test (profiler_errors_exit_3),
    cmocka_unit_test (profiler_errors_kernels_without_nvrtc),
#ifdef PS_TEST_FAKE_CUDA
    cmocka_unit_test (profiler_fake_profile_examples),
    cmocka_unit_test (profiler_fake_check_catches_differences),
    cmocka_unit_test (profiler_fake_text_report),
    cmocka_unit_test (profiler_fake_block_product_saturates),
#endif
  };
  return cmocka_run_group_tests_name ("/profiler/runs", tests, NULL, NULL);
}
