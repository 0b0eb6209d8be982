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
#include "ps-profiler.h"
#include "ps-test-cli.h"

static char examples[PS_TEST_MAX_EXAMPLES][128];
static size_t n_examples;

/* `kernels` writes a .cu and (with NVRTC) a .ptx for every kernel step of
 * every example, fused or not, and ptxas accepts every .ptx. */
static void
profiler_kernels_examples (void **state)
{
  (void) state;
  for (size_t e = 0; e < n_examples; e++)
    for (int fused = 0; fused < 2; fused++) {
      char *dir = make_temp_dir ();
      char args[8192], *out = NULL;
      snprintf (args, sizeof args, "kernels '%.3000s/data/examples/%.120s.json' %s -o '%.3000s/k'",
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
  for (size_t e = 0; e < n_examples; e++)
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
      assert_non_null (strstr (out, "\"missing\": 0"));
      assert_non_null (strstr (out, "\"versions\": {\"driver\": \"13.0\", \"cupti_api\": "));
      assert_non_null (strstr (out, "\"makespan_error\": "));

      /* One span per non-event step, and every kernel, copy and memset of
       * the plan was measured (the fake reports them all). */
      ps_graph g;
      ps_plan p;
      test_load_example (examples[e], &g, &p);
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

/* A block within every dimension's limit but over the kernel's threads is
 * refused before the launch, by the thread count the driver reports. */
static void
profiler_fake_block_over_kernel_limit (void **state)
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
         "   \"impl\": \"relu\", \"grid\": [1, 65535, 65535], \"block\": [1024, 1024, 64],\n"
         "   \"reads\": [\"x\"], \"writes\": [\"x\"]}]}\n",
         f);
  assert_int_equal (fclose (f), 0);
  snprintf (args, sizeof args, "profile '%s'", path);
  expect_cli ("PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA
              " XDG_CACHE_HOME=/nonexistent",
              args, 1,
              "a block of 67108864 threads is more than this kernel can have");
  remove_dir (dir);
}

static const char *fake_env =
  "PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA
  " XDG_CACHE_HOME=/nonexistent";

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  assert_int_equal (fclose (f), 0);
}

/* Never a silent empty result: records that never come, or come without
 * timestamps for a whole step, fail the run with the counts. */
static void
profiler_fake_records_missing (void **state)
{
  (void) state;
  char args[4600], ex[4200], env[4400];
  example_path (ex, sizeof ex, "copy-compute-overlap");
  snprintf (args, sizeof args, "profile %s --iterations 3", ex);
  snprintf (env, sizeof env, "%s PS_FAKE_ZERO_TS=1", fake_env);
  expect_cli (env, args, 1, "steps with work never timed, the first step ");
  expect_cli (env, args, 1, "CUPTI records do not match the run: 0 of ");
  snprintf (env, sizeof env, "%s PS_FAKE_DROP=7", fake_env);
  expect_cli (env, args, 1, " missing (");
  /* Untimed now and then (every 5th record) is no failure: those runs of
   * their steps are left out of the medians. */
  char *out = NULL;
  snprintf (env, sizeof env, "%s PS_FAKE_ZERO_TS=5", fake_env);
  snprintf (args, sizeof args, "profile %s --iterations 10 --json", ex);
  int rc = run_cli (env, args, &out);
  if (rc != 0)
    fail_msg ("exit %d\n%s", rc, out);
  assert_null (strstr (out, "\"untimed\": 0,"));
  assert_non_null (strstr (out, "\"missing\": 0"));
  assert_null (strstr (out, "e+18"));
  free (out);
}

/* cuFuncGetParamInfo (CUDA 12.4) is asked for at 12.4: args that do not
 * match a .ptx kernel's parameters are refused before any launch. */
static void
profiler_fake_user_args_checked (void **state)
{
  (void) state;
  char *dir = make_temp_dir ();
  char args[8800], ex[4200], *out = NULL;
  example_path (ex, sizeof ex, "user-module");
  snprintf (args, sizeof args, "kernels %s -o '%s/k'", ex, dir);
  int rc = run_cli (NULL, args, &out);
  if (rc != 0)
    fail_msg ("exit %d\n%s", rc, out);
  free (out);
  char pattern[4300];
  snprintf (pattern, sizeof pattern, "%s/k/step*-saxpy.ptx", dir);
  glob_t gl;
  assert_int_equal (glob (pattern, 0, NULL, &gl), 0);
  char cmd[9000];
  snprintf (cmd, sizeof cmd, "cp '%s' '%s/saxpy.ptx'", gl.gl_pathv[0], dir);
  globfree (&gl);
  assert_int_equal (system (cmd), 0);
  for (int bad = 0; bad < 3; bad++) {
    char path[4300];
    snprintf (path, sizeof path, "%s/g%d.json", dir, bad);
    char json[2000];
    snprintf (json, sizeof json,
              "{\"format\": \"planscope-graph\", \"version\": 1,\n"
              " \"buffers\": [{\"name\": \"x\", \"bytes\": 4096, \"external\": true},\n"
              "   {\"name\": \"y\", \"bytes\": 4096, \"external\": true}],\n"
              " \"nodes\": [{\"name\": \"saxpy\", \"op\": \"kernel\", \"function\": \"saxpy\",\n"
              "   \"module\": \"saxpy.ptx\", \"grid\": 4, \"block\": 256,\n"
              "   \"reads\": [\"x\", \"y\"], \"writes\": [\"y\"],\n"
              "   \"args\": [%s]}]}\n",
              bad == 0   ? "{\"i32\": 1024}, {\"f32\": 2.0}, {\"buffer\": \"x\"}, {\"buffer\": \"y\"}"
              : bad == 1 ? "{\"i32\": 1024}, {\"f32\": 2.0}, {\"buffer\": \"x\"}"
                         : "{\"i64\": 1024}, {\"f32\": 2.0}, {\"buffer\": \"x\"}, {\"buffer\": \"y\"}");
    write_file (path, json);
    snprintf (args, sizeof args, "profile '%s' --iterations 2", path);
    if (bad == 0)
      expect_cli (fake_env, args, 0, "records       ");
    else if (bad == 1)
      expect_cli (fake_env, args, 1, "the kernel has more parameters than the 3 args given");
    else
      expect_cli (fake_env, args, 1, "args[0] is 8 bytes but the kernel's parameter 0 is 4");
  }
  remove_dir (dir);
}

/* An error code planscope's table does not know is named by the driver. */
static void
profiler_fake_unknown_error_named (void **state)
{
  (void) state;
  char args[4600], ex[4200], env[4400];
  example_path (ex, sizeof ex, "transformer-block");
  snprintf (args, sizeof args, "profile %s --iterations 1", ex);
  snprintf (env, sizeof env, "%s PS_FAKE_LAUNCH_ERROR=912", fake_env);
  expect_cli (env, args, 1, "CUDA_ERROR_FAKE_FROM_THE_DRIVER (an error only the driver can name)");
}

/* A cached image the driver refuses is compiled again and the cache mended. */
static void
profiler_fake_bad_cache_recompiled (void **state)
{
  (void) state;
  char *cache = make_temp_dir ();
  char env[4600], args[4600], ex[4200], cmd[9000];
  snprintf (env, sizeof env,
            "PLANSCOPE_LIBCUDA=" PS_TEST_FAKE_CUDA " PLANSCOPE_LIBCUPTI=" PS_TEST_FAKE_CUDA
            " XDG_CACHE_HOME='%s'", cache);
  example_path (ex, sizeof ex, "transformer-block");
  snprintf (args, sizeof args, "profile %s --iterations 2", ex);
  expect_cli (env, args, 0, "records       ");
  /* Every cached cubin cut to a few bytes of nonsense. */
  snprintf (cmd, sizeof cmd,
            "n=0; for f in '%s'/planscope/*.cubin; do printf 'junk' > \"$f\"; n=$((n+1)); done; "
            "test $n -gt 3", cache);
  assert_int_equal (system (cmd), 0);
  expect_cli (env, args, 0, "records       ");
  snprintf (cmd, sizeof cmd,
            "for f in '%s'/planscope/*.cubin; do test $(wc -c < \"$f\") -gt 100 || exit 1; done",
            cache);
  assert_int_equal (system (cmd), 0);
  remove_dir (cache);
}

/* One process, several CUPTI sessions, graph mode: after the first, the
 * fake (as CUPTI before 13.1 Update 1) gives graph launches' work wrong
 * correlation ids, and the records are still all placed. */
static void
profiler_fake_graph_sessions (void **state)
{
  (void) state;
  setenv ("PLANSCOPE_LIBCUDA", PS_TEST_FAKE_CUDA, 1);
  setenv ("PLANSCOPE_LIBCUPTI", PS_TEST_FAKE_CUDA, 1);
  setenv ("XDG_CACHE_HOME", "/nonexistent", 1);
  ps_graph g;
  ps_plan p;
  test_load_example ("transformer-block", &g, &p);
  ps_gpu *gpu;
  ps_gpu_error err;
  if (ps_gpu_open (&gpu, &err) != 0)
    fail_msg ("%s", err.message);
  assert_true (ps_gpu_get_info (gpu)->cupti_api > 0);
  for (int session = 0; session < 3; session++) {
    ps_profile_options o;
    ps_profile_options_init (&o);
    o.mode = PS_PROFILE_GRAPH;
    o.iterations = 4;
    ps_profile_result r;
    if (ps_gpu_profile (gpu, &p, &o, &r, &err) != 0)
      fail_msg ("session %d: %s", session, err.message);
    assert_int_equal (r.unmatched, 0);
    assert_int_equal (r.missing, 0);
    assert_true (r.expected > 0 && r.records + r.untimed == r.expected);
    ps_profile_result_free (&r);
  }
  ps_gpu_close (gpu);
  ps_plan_free (&p);
  ps_graph_free (&g);
}
#endif

static int
setup (void **state)
{
  (void) state;
  n_examples = test_examples (examples);
  return 0;
}

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
    cmocka_unit_test (profiler_fake_block_over_kernel_limit),
    cmocka_unit_test (profiler_fake_records_missing),
    cmocka_unit_test (profiler_fake_user_args_checked),
    cmocka_unit_test (profiler_fake_unknown_error_named),
    cmocka_unit_test (profiler_fake_bad_cache_recompiled),
    /* Last: it loads the fake into this process. */
    cmocka_unit_test (profiler_fake_graph_sessions),
#endif
  };
  return cmocka_run_group_tests_name ("/profiler/runs", tests, setup, NULL);
}
