/* fuzz-device.c: libFuzzer harness for device profiles (--device FILE.json,
 * ps_device_load_json).  A profile is one more file users pass around, and
 * its figures divide and multiply everything the cost model and the
 * simulator compute.
 *
 * A profile that loads must have every figure in the loader's ranges; then
 * a fixed graph with every kind of work (a kernel with the largest grid,
 * fusible kernels, copies in each direction, a memset, host callbacks, an
 * event) is planned for it, verified and simulated on it, and the timeline
 * must keep its invariants with a finite makespan.  A profile that fails
 * leaves at least one located error. */
#include "fuzz-harness.h"

#include <math.h>
#include <string.h>

#include "fuzz-check.h"
#include "ps-cost.h"
#include "ps-device.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "ps-plan.h"
#include "ps-sim.h"
#include "ps-verify.h"

static const char graph_text[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"device-fuzz\",\n"
  " \"buffers\": [{\"name\": \"a\", \"bytes\": 67108864, \"external\": true}, {\"name\": \"b\", \"bytes\": 67108864},\n"
  "  {\"name\": \"c\", \"bytes\": 4096}, {\"name\": \"d\", \"bytes\": 67108864}, {\"name\": \"h\", \"bytes\": 1048576, \"external\": true}],\n"
  " \"nodes\": [\n"
  "  {\"name\": \"up\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"a\"]},\n"
  "  {\"name\": \"zero\", \"op\": \"memset\", \"writes\": [\"c\"]},\n"
  "  {\"name\": \"gemm\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": [2147483647, 65535, 1], \"block\": [1024, 1, 1], \"smem\": 49152, \"flops\": 1e15, \"reads\": [\"a\"], \"writes\": [\"b\"]},\n"
  "  {\"name\": \"scale\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\", \"fusible\": true, \"params\": {\"alpha\": 2}, \"grid\": 65536, \"block\": 256, \"reads\": [\"b\"], \"writes\": [\"d\"]},\n"
  "  {\"name\": \"relu\", \"op\": \"kernel\", \"function\": \"relu\", \"impl\": \"relu\", \"fusible\": true, \"grid\": 65536, \"block\": 256, \"reads\": [\"d\"], \"writes\": [\"d\"]},\n"
  "  {\"name\": \"side\", \"op\": \"kernel\", \"function\": \"side\", \"grid\": 1, \"block\": 32, \"cost_ns\": 5000, \"reads\": [\"c\"], \"writes\": [\"c\"]},\n"
  "  {\"name\": \"rec\", \"op\": \"event_record\", \"event\": \"e\", \"after\": [\"side\"]},\n"
  "  {\"name\": \"wait\", \"op\": \"event_wait\", \"event\": \"e\", \"after\": [\"relu\"]},\n"
  "  {\"name\": \"peer\", \"op\": \"memcpy\", \"dir\": \"d2d\", \"reads\": [\"d\"], \"writes\": [\"b\"], \"after\": [\"wait\"]},\n"
  "  {\"name\": \"cb\", \"op\": \"host\", \"after\": [\"peer\"]},\n"
  "  {\"name\": \"cb2\", \"op\": \"host\", \"cost_ns\": 20000, \"after\": [\"peer\"]},\n"
  "  {\"name\": \"down\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"b\"], \"after\": [\"cb\", \"cb2\"]}\n"
  " ]}\n";

static void
check_device (const ps_device *d)
{
  FUZZ_CHECK (d->name[0] != '\0', "a profile without a name");
  FUZZ_CHECK (d->sm_count >= 1 && d->max_threads_per_sm >= 32 && d->max_blocks_per_sm >= 1
                  && d->copy_engines >= 1 && d->copy_engines <= 64,
              "integer figures out of range");
  const double rates[] = { d->fp32_tflops, d->tensor_tflops, d->fp64_tflops,
                           d->mem_bandwidth_gbs, d->h2d_gbs, d->d2h_gbs, d->p2p_gbs };
  for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
    FUZZ_CHECK (isfinite (rates[i]) && rates[i] > 0, "rate %zu is %g", i, rates[i]);
  const double times[] = { d->launch_latency_ns, d->host_launch_ns, d->dispatch_gap_ns,
                           d->event_record_ns, d->event_wait_ns, d->host_callback_ns,
                           d->copy_latency_ns };
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
    FUZZ_CHECK (isfinite (times[i]) && times[i] >= 0, "latency %zu is %g", i, times[i]);
  FUZZ_CHECK (d->mem_efficiency > 0 && d->mem_efficiency <= 1, "mem_efficiency %g",
              d->mem_efficiency);
  FUZZ_CHECK (d->gemm_points <= PS_DEVICE_GEMM_POINTS, "%u gemm points", d->gemm_points);
  for (uint32_t i = 0; i < d->gemm_points; i++) {
    FUZZ_CHECK (d->gemm_efficiency[i] > 0 && d->gemm_efficiency[i] <= 1, "gemm share %g",
                d->gemm_efficiency[i]);
    FUZZ_CHECK (isfinite (d->gemm_flops[i]) && (i == 0 || d->gemm_flops[i] > d->gemm_flops[i - 1]),
                "gemm point %u at %g flops", i, d->gemm_flops[i]);
  }
  /* The share the cost model takes stays a share at every size. */
  const double sizes[] = { 0, 1, 1e9, 1e12, 1e30, NAN };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    double e = ps_cost_gemm_efficiency (d, sizes[i]);
    FUZZ_CHECK (e > 0 && e <= 1, "gemm efficiency %g at %g flops", e, sizes[i]);
  }
}

static void
report (void *ctx, const char *message)
{
  (void) ctx;
  fprintf (stderr, "verify: %s\n", message);
}

static void
run_on (const ps_graph *g, const ps_device *d, uint32_t streams, bool fusion)
{
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.streams = streams;
  o.fusion = fusion;
  o.device = d;
  ps_plan p;
  ps_diag diag;
  ps_diag_init (&diag, "device-fuzz.json");
  int rc = ps_plan_build (&p, g, &o, &diag);
  FUZZ_CHECK (rc == 0 || rc == PS_ENOMEM, "planning for the profile failed: %s",
              ps_strerror (rc));
  ps_diag_free (&diag);
  if (rc != 0)
    return;
  FUZZ_CHECK (isfinite (p.est_makespan_ns) && p.est_makespan_ns >= 0,
              "estimated makespan %g", p.est_makespan_ns);
  size_t bad = ps_plan_verify (&p, report, NULL, 10);
  FUZZ_CHECK (bad == 0, "the verifier found %zu violations", bad);
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  rc = ps_simulate (&p, d, &tl);
  FUZZ_CHECK (rc == 0 || rc == PS_ENOMEM, "ps_simulate: %s", ps_strerror (rc));
  if (rc == 0) {
    fuzz_check_timeline (&tl);
    FUZZ_CHECK (isfinite (tl.makespan_ns) && tl.makespan_ns >= 0, "makespan %g",
                tl.makespan_ns);
  }
  ps_timeline_free (&tl);
  ps_plan_free (&p);
}

int
ps_fuzz_device (const uint8_t *data, size_t size)
{
  static ps_graph g;
  static bool loaded;
  if (!loaded) {
    ps_diag diag;
    ps_diag_init (&diag, "device-fuzz.json");
    int rc = ps_import_graph_mem (&g, graph_text, sizeof graph_text - 1, "device-fuzz.json",
                                 &diag);
    ps_diag_print (&diag, stderr);
    FUZZ_CHECK (rc == 0, "the harness's own graph does not load");
    ps_diag_free (&diag);
    loaded = true;
  }
  ps_device d;
  ps_diag diag;
  ps_diag_init (&diag, "fuzz-device.json");
  int rc = ps_device_load_json (&d, (const char *) data, size, "fuzz-device.json", &diag);
  if (rc == 0) {
    FUZZ_CHECK (diag.errors == 0, "loaded with %zu errors", diag.errors);
    check_device (&d);
    run_on (&g, &d, 1, false);
    run_on (&g, &d, 4, true);
  } else {
    FUZZ_CHECK (rc < 0 && diag.errors > 0, "failed (%d) without an error message", rc);
  }
  fuzz_check_diag (&diag);
  ps_diag_print (&diag, ps_fuzz_devnull ());
  ps_diag_free (&diag);
  return 0;
}

#ifndef PS_FUZZ_NO_MAIN
int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return ps_fuzz_device (data, size);
}
#endif
