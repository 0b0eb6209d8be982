/* test-sim.c: device profiles, the cost model, the simulator and the
 * diagnosis: schedules of generated graphs respect every dependency and
 * stream order, stall times add up, streams speed up independent work,
 * kernels share the SMs, copies overlap compute, and the timeline
 * document carries stalls with their causes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <math.h>

#include "planner/ps-planner-private.h"
#include "ps-cost.h"
#include "ps-import.h"
#include "ps-json.h"
#include "ps-test-sim.h"
#include "ps-timeline-output.h"

/* ---- device profiles ---- */

static void
core_sim_device_files_match_builtin (void **state)
{
  (void) state;
  for (size_t i = 0; i < ps_device_builtin_count (); i++) {
    const ps_device *b = ps_device_builtin (i);
    char path[4096];
    snprintf (path, sizeof path, "%s/data/devices/%s.json", ts_source_root (), b->name);
    ps_device d;
    ps_diag diag;
    ps_diag_init (&diag, path);
    int rc = ps_device_load_file (&d, path, &diag);
    ps_diag_print (&diag, stderr);
    ps_diag_free (&diag);
    assert_int_equal (rc, 0);
    assert_string_equal (d.name, b->name);
    assert_string_equal (d.display_name, b->display_name);
    assert_memory_equal (&d, b, sizeof d);
    /* The file says where its figures come from. */
    FILE *f = fopen (path, "r");
    assert_non_null (f);
    char buf[16384];
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf[n] = 0;
    assert_non_null (strstr (buf, "\"sources\""));
  }
  ps_device d;
  ps_diag diag;
  ps_diag_init (&diag, "x");
  assert_int_equal (ps_device_find (&d, "H200", &diag), 0);
  assert_string_equal (d.name, "h200");
  assert_int_equal (d.sm_count, 132);
  assert_int_equal (ps_device_find (&d, NULL, &diag), 0);
  assert_string_equal (d.name, PS_DEVICE_DEFAULT);
  assert_true (ps_device_find (&d, "tpu-v9", &diag) < 0);
  assert_int_equal (diag.errors, 1);
  assert_non_null (strstr (diag.entries[0].message, "rtx4090"));
  ps_diag_free (&diag);
}

static void
core_sim_device_errors_located (void **state)
{
  (void) state;
  static const char bad_key[] = "{\"format\": \"planscope-device\", \"version\": 1,\n"
                                "  \"name\": \"x\", \"sm_cont\": 4}";
  ps_device d;
  ps_diag diag;
  ps_diag_init (&diag, "bad.json");
  assert_true (ps_device_load_json (&d, bad_key, strlen (bad_key), "bad.json", &diag) < 0);
  assert_int_equal (diag.errors, 1);
  assert_int_equal (diag.entries[0].line, 2);
  assert_int_equal (diag.entries[0].col, 16);
  assert_non_null (strstr (diag.entries[0].message, "did you mean \"sm_count\""));
  ps_diag_free (&diag);

  static const char missing[] = "{\"format\": \"planscope-device\", \"version\": 1, \"name\": \"x\"}";
  ps_diag_init (&diag, "m.json");
  assert_true (ps_device_load_json (&d, missing, strlen (missing), "m.json", &diag) < 0);
  assert_non_null (strstr (diag.entries[0].message, "missing key \"sm_count\""));
  ps_diag_free (&diag);

  static const char neg[] = "{\"format\": \"planscope-device\", \"version\": 1, \"name\": \"x\", "
                            "\"mem_bandwidth_gbs\": -3}";
  ps_diag_init (&diag, "n.json");
  assert_true (ps_device_load_json (&d, neg, strlen (neg), "n.json", &diag) < 0);
  assert_non_null (strstr (diag.entries[0].message, "mem_bandwidth_gbs"));
  assert_int_equal (diag.entries[0].line, 1);
  ps_diag_free (&diag);

  static const char syntax[] = "{\"format\": \"planscope-device\",\n \"version\": 1,,}";
  ps_diag_init (&diag, "s.json");
  assert_true (ps_device_load_json (&d, syntax, strlen (syntax), "s.json", &diag) < 0);
  assert_int_equal (diag.entries[0].line, 2);
  ps_diag_free (&diag);
}

/* A profile names each key once, whole, as a graph file does: a second
 * "copy_engines" and a "sm_count\u0000garbage" standing for sm_count are
 * errors at the key, not a profile with other figures than it shows. */
static void
core_sim_device_keys_whole_and_once (void **state)
{
  (void) state;
  static const struct {
    const char *file, *says;
    uint32_t line, col;
  } cases[] = {
    { "device-duplicate-key.json", "duplicate key \"copy_engines\"", 17, 3 },
    { "device-nul-key.json", "unknown key \"sm_count?garbage\"", 6, 3 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char path[4096];
    snprintf (path, sizeof path, "%s/tests/hostile/%s", ts_source_root (), cases[i].file);
    ps_device d;
    ps_diag diag;
    ps_diag_init (&diag, path);
    assert_true (ps_device_find (&d, path, &diag) < 0);
    assert_int_equal (diag.errors, 1);
    assert_non_null (strstr (diag.entries[0].message, cases[i].says));
    assert_int_equal (diag.entries[0].line, cases[i].line);
    assert_int_equal (diag.entries[0].col, cases[i].col);
    ps_diag_free (&diag);
  }
  /* An extra key twice, too. */
  static const char twice[] = "{\"format\": \"planscope-device\", \"version\": 1, \"name\": "
                              "\"x\", \"name\": \"y\"}";
  ps_device d;
  ps_diag diag;
  ps_diag_init (&diag, "twice.json");
  assert_true (ps_device_load_json (&d, twice, strlen (twice), "twice.json", &diag) < 0);
  assert_non_null (strstr (diag.entries[0].message, "duplicate key \"name\""));
  ps_diag_free (&diag);
}

/* ---- cost model ---- */

static const char cost_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"cost\",\n"
  " \"buffers\": [{\"name\": \"x\", \"bytes\": 67108864, \"external\": true},\n"
  "   {\"name\": \"h\", \"bytes\": 67108864}, {\"name\": \"y\", \"bytes\": 67108864, "
  "\"external\": true}],\n"
  " \"nodes\": [\n"
  "  {\"name\": \"up\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"x\"]},\n"
  "  {\"name\": \"big\", \"op\": \"kernel\", \"function\": \"g\", \"grid\": 4224, \"block\": 256,"
  "   \"reads\": [\"x\"], \"writes\": [\"h\"], \"flops\": 1e12},\n"
  "  {\"name\": \"tiny\", \"op\": \"kernel\", \"function\": \"g\", \"grid\": 1, \"block\": 256,"
  "   \"reads\": [\"x\"], \"writes\": [\"h\"], \"flops\": 1e12},\n"
  "  {\"name\": \"given\", \"op\": \"kernel\", \"function\": \"g\", \"grid\": 1, \"block\": 32,"
  "   \"cost_ns\": 1234},\n"
  "  {\"name\": \"a\", \"op\": \"kernel\", \"function\": \"relu\", \"impl\": \"relu\", "
  "\"fusible\": true, \"grid\": 67584, \"block\": 256, \"reads\": [\"h\"], \"writes\": [\"h\"]},\n"
  "  {\"name\": \"b\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\", "
  "\"fusible\": true, \"grid\": 67584, \"block\": 256, \"reads\": [\"h\"], \"writes\": [\"y\"]},\n"
  "  {\"name\": \"down\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"y\"]}\n"
  " ]}";

static void
core_sim_cost_model (void **state)
{
  (void) state;
  const ps_device *d = ts_h200 ();
  ps_graph g;
  ts_load (&g, cost_graph);
  ps_cost c[7];
  for (uint32_t v = 0; v < 7; v++)
    ps_cost_node (d, &g, v, &c[v]);
  /* Copies: bytes over the link plus a fixed latency, on the copy engine. */
  assert_int_equal (c[0].resource, PS_RES_H2D);
  assert_true (fabs (c[0].ns - (67108864.0 / d->h2d_gbs + d->copy_latency_ns)) < 1);
  assert_int_equal (c[6].resource, PS_RES_D2H);
  /* Roofline at full occupancy (4224 blocks of 256 threads are exactly four
   * waves of 132 SMs x 8 blocks): 1e12 flops at 67 TFLOPS. */
  assert_true (fabs (c[1].ns - 1e12 / (d->fp32_tflops * 1e3)) < 1);
  assert_true (c[1].sm_fraction == 1.0);
  /* One block uses one SM of 132: that much slower. */
  assert_true (fabs (c[2].ns / c[1].ns - d->sm_count) < 1e-6);
  assert_true (fabs (c[2].sm_fraction - 1.0 / d->sm_count) < 1e-12);
  assert_true (c[3].ns == 1234);
  /* Element-wise kernels are memory-bound: read + write of 64 MiB at the
   * bandwidth streaming work reaches. */
  double mem_gbs = d->mem_bandwidth_gbs * d->mem_efficiency;
  assert_true (fabs (c[4].ns - 2 * 67108864.0 / mem_gbs) < 1);

  /* Fused, a and b cost less than apart by the traffic of h in between. */
  ps_plan fused, apart;
  ts_plan (&fused, &g, 1, true);
  ts_plan (&apart, &g, 1, false);
  assert_true (fused.n_steps < apart.n_steps);
  ps_cost *cf = calloc (fused.n_steps, sizeof *cf), *ca = calloc (apart.n_steps, sizeof *ca);
  assert_int_equal (ps_cost_plan (d, &fused, cf), 0);
  assert_int_equal (ps_cost_plan (d, &apart, ca), 0);
  double sum_a = 0, sum_f = 0, group = 0;
  for (uint32_t s = 0; s < apart.n_steps; s++)
    sum_a += ca[s].ns;
  for (uint32_t s = 0; s < fused.n_steps; s++) {
    sum_f += cf[s].ns;
    if (fused.steps[s].nodes_count == 2)
      group = cf[s].ns;
  }
  assert_true (group > 0);
  /* b reads h from registers, and since nothing outside the group reads h
   * and the caller does not own it, a never stores it: 2 x 64 MiB less. */
  assert_true (fabs ((c[4].ns + c[5].ns - group) - 2 * 67108864.0 / mem_gbs) < 1);
  assert_true (sum_f < sum_a);
  free (cf);
  free (ca);
  ps_plan_free (&fused);
  ps_plan_free (&apart);
  ps_graph_free (&g);
}

/* ---- schedules of generated graphs ---- */

/* The span of each step (PS_NONE for event steps). */
static uint32_t *
step_spans (const ps_plan *p, const ps_timeline *tl)
{
  uint32_t *m = malloc ((p->n_steps + 1) * sizeof *m);
  for (uint32_t s = 0; s < p->n_steps; s++)
    m[s] = PS_NONE;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    uint32_t s = tl->spans[i].step;
    assert_true (s < p->n_steps);
    assert_int_equal (m[s], PS_NONE);
    m[s] = i;
  }
  for (uint32_t s = 0; s < p->n_steps; s++) {
    bool ev = p->steps[s].op == PS_OP_EVENT_RECORD || p->steps[s].op == PS_OP_EVENT_WAIT;
    assert_true (ev == (m[s] == PS_NONE));
  }
  return m;
}

static void
check_schedule (const ps_graph *g, const ps_plan *p, const ps_timeline *tl)
{
  const double eps = 1e-6;
  uint32_t *m = step_spans (p, tl);
  /* Dependencies: a node starts after every predecessor has finished.
   * Nodes without a span (events) finish no earlier than their
   * predecessors, which gives each node a lower bound to check against. */
  double *done = calloc (g->n_nodes + 1, sizeof *done);
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    double ready = 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
      uint32_t u = g->pred[e];
      assert_true (u < v);
      if (p->node_step[u] != p->node_step[v] && done[u] > ready)
        ready = done[u];
    }
    uint32_t sp = m[p->node_step[v]];
    if (sp != PS_NONE) {
      if (tl->spans[sp].start_ns + eps < ready)
        fail_msg ("%s starts at %f before its predecessors end at %f", ps_node_name (g, v),
                  tl->spans[sp].start_ns, ready);
      done[v] = tl->spans[sp].end_ns;
    } else {
      done[v] = ready;
    }
  }
  free (done);
  /* Stream order: each stream's spans follow the step order, one at a
   * time. */
  double last_end[PS_MAX_STREAMS];
  for (int q = 0; q < PS_MAX_STREAMS; q++)
    last_end[q] = 0;
  for (uint32_t s = 0; s < p->n_steps; s++) {
    uint32_t sp = m[s];
    if (sp == PS_NONE)
      continue;
    const ps_span *x = &tl->spans[sp];
    assert_int_equal (x->stream, p->steps[s].stream);
    assert_true (x->start_ns + eps >= last_end[x->stream]);
    assert_true (x->end_ns >= x->start_ns);
    last_end[x->stream] = x->end_ns;
  }
  free (m);

  /* Stalls add up: busy + stalled + idle is the makespan on every stream,
   * stalls never overlap work on their stream, and each ends no earlier
   * than the work it waited for. */
  ps_diagnosis dg;
  assert_int_equal (ps_diagnose (&dg, tl), 0);
  ts_check_path_diagnosis (tl, &dg);
  double *stall_sum = calloc (tl->n_streams + 1, sizeof *stall_sum);
  for (uint32_t i = 0; i < tl->n_stalls; i++) {
    const ps_stall *sl = &tl->stalls[i];
    assert_true (sl->end_ns > sl->start_ns);
    stall_sum[sl->stream] += sl->end_ns - sl->start_ns;
    if (sl->waiting_for != PS_NONE) {
      assert_true (sl->end_ns + eps >= tl->spans[sl->waiting_for].end_ns);
      assert_int_equal (tl->spans[sl->waiting_for].stream, sl->on_stream);
    }
    for (uint32_t k = tl->stream_off[sl->stream]; k < tl->stream_off[sl->stream + 1]; k++) {
      const ps_span *x = &tl->spans[tl->by_stream[k]];
      assert_true (x->end_ns <= sl->start_ns + eps || x->start_ns + eps >= sl->end_ns);
    }
    /* The chain of causes starts with the waited-for work. */
    if (sl->waiting_for != PS_NONE)
      assert_int_equal (dg.chain[dg.chain_off[i]], sl->waiting_for);
  }
  for (uint32_t q = 0; q < tl->n_streams; q++) {
    const ps_stream_stats *st = &dg.streams[q];
    double total = st->busy_ns + st->stalled_ns + st->idle_ns;
    assert_true (fabs (total - tl->makespan_ns) <= 1e-6 * tl->makespan_ns + eps);
    assert_true (fabs (st->stalled_ns - stall_sum[q]) <= 1e-6 * tl->makespan_ns + eps);
  }
  free (stall_sum);
  /* The critical path runs forward in time and ends with the last work. */
  assert_true (dg.n_critical > 0);
  assert_true (fabs (tl->spans[dg.critical[dg.n_critical - 1]].end_ns - tl->makespan_ns) < eps
               || tl->n_stalls > 0);
  for (uint32_t i = 1; i < dg.n_critical; i++)
    assert_true (tl->spans[dg.critical[i]].start_ns + eps
                 >= tl->spans[dg.critical[i - 1]].end_ns);
  ps_diagnosis_free (&dg);
}

static void
core_sim_generated_schedules (void **state)
{
  (void) state;
  static const uint32_t streams[] = { 1, 2, 4 };
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint64_t seed = 1; seed <= 3; seed++)
      for (int si = 0; si < 3; si++)
        for (int fusion = 0; fusion < 2; fusion++) {
          ps_graph g;
          ts_gen (&g, (ps_gen_shape) shape, 300, seed, streams[si] < 2 ? streams[si] : 2);
          ps_plan p;
          ps_timeline tl;
          ts_simulate (&g, streams[si], fusion, &p, &tl);
          check_schedule (&g, &p, &tl);
          ps_timeline_free (&tl);
          ps_plan_free (&p);
          ps_graph_free (&g);
        }
}

/* Every example graph simulates with 1 and 4 streams, with and without
 * fusion, into a schedule that keeps its dependencies. */
static void
core_sim_examples (void **state)
{
  (void) state;
  char dir[4096];
  snprintf (dir, sizeof dir, "%s/data/examples", ts_source_root ());
  DIR *d = opendir (dir);
  assert_non_null (d);
  struct dirent *e;
  int n = 0;
  while ((e = readdir (d))) {
    size_t l = strlen (e->d_name);
    if (l < 6 || strcmp (e->d_name + l - 5, ".json") != 0)
      continue;
    char path[8192];
    snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
    ps_graph g;
    ps_graph_init (&g);
    ps_diag diag;
    ps_diag_init (&diag, path);
    int rc = ps_import_graph_file (&g, path, NULL, &diag);
    ps_diag_print (&diag, stderr);
    ps_diag_free (&diag);
    assert_int_equal (rc, 0);
    for (uint32_t streams = 1; streams <= 4; streams *= 4)
      for (int fusion = 0; fusion < 2; fusion++) {
        ps_plan p;
        ps_timeline tl;
        ts_simulate (&g, streams, fusion, &p, &tl);
        assert_true (tl.makespan_ns > 0);
        check_schedule (&g, &p, &tl);
        ps_timeline_free (&tl);
        ps_plan_free (&p);
      }
    ps_graph_free (&g);
    n++;
  }
  closedir (d);
  assert_true (n >= 1);
}

/* A run told to stop above a makespan (ps_sim.stop_above) stops only when
 * it cannot end at or below it, and then gives a bound that is above it
 * and no later than the run's own end: at or above the run's makespan it
 * never stops and gives that makespan; well below, it stops.  On every
 * generated shape, with and without fusion, on 1 and 4 streams. */
static void
core_sim_stop_above (void **state)
{
  (void) state;
  static const double at[] = { 0.3, 0.6, 0.9, 0.97, 0.999, 1.0, 1.001, 1.5 };
  uint32_t stopped_low = 0, runs_low = 0;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint32_t streams = 1; streams <= 4; streams *= 4)
      for (int fusion = 0; fusion < 2; fusion++) {
        ps_graph g;
        ts_gen (&g, (ps_gen_shape) shape, 2000, 5, 0);
        ps_plan p;
        ts_plan (&p, &g, streams, fusion);
        ps_sim s;
        assert_int_equal (ps_sim_init (&s, &p, ts_h200 ()), 0);
        double whole;
        assert_int_equal (ps_sim_run (&s, NULL, &whole), 0);
        assert_false (s.stopped);
        for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
          double ms = -1;
          s.stop_above = whole * at[i];
          assert_int_equal (ps_sim_run (&s, NULL, &ms), 0);
          if (at[i] >= 1) {
            assert_false (s.stopped);
            assert_true (ms == whole);
            continue;
          }
          if (s.stopped) {
            assert_true (ms > s.stop_above);
            assert_true (ms <= whole * (1 + 1e-12));
          } else {
            assert_true (ms == whole);
          }
          if (at[i] <= 0.6) {
            runs_low++;
            stopped_low += s.stopped;
          }
        }
        /* Recording a timeline, it runs to its end. */
        ps_timeline tl;
        ps_timeline_init (&tl, PS_TL_SIMULATED);
        double ms;
        s.stop_above = whole * 0.3;
        assert_int_equal (ps_sim_run (&s, &tl, &ms), 0);
        assert_false (s.stopped);
        assert_true (ms == whole);
        ps_timeline_free (&tl);
        ps_sim_free (&s);
        ps_plan_free (&p);
        ps_graph_free (&g);
      }
  /* Well below the makespan, the work left alone is more than the time
   * left on most of these plans. */
  assert_true (stopped_low * 2 > runs_low);
}

static void
core_sim_deterministic (void **state)
{
  (void) state;
  ps_graph g;
  ts_gen (&g, PS_GEN_TRANSFORMER, 500, 7, 2);
  ps_plan p1, p2;
  ps_timeline a, b;
  ts_simulate (&g, 4, true, &p1, &a);
  ts_simulate (&g, 4, true, &p2, &b);
  assert_int_equal (a.n_spans, b.n_spans);
  assert_int_equal (a.n_stalls, b.n_stalls);
  assert_memory_equal (a.spans, b.spans, a.n_spans * sizeof *a.spans);
  assert_memory_equal (a.stalls, b.stalls, a.n_stalls * sizeof *a.stalls);
  ps_timeline_free (&a);
  ps_timeline_free (&b);
  ps_plan_free (&p1);
  ps_plan_free (&p2);
  ps_graph_free (&g);
}

/* ---- device sharing ---- */

/* Eight independent chains of four small kernels (16 blocks each). */
static char *
chains_graph (int chains, uint32_t grid, double cost)
{
  size_t cap = 1 << 16, n = 0;
  char *s = malloc (cap);
  n += (size_t) snprintf (s + n, cap - n, "{\"format\": \"planscope-graph\", \"version\": 1, "
                          "\"buffers\": [");
  for (int c = 0; c < chains; c++)
    for (int k = 0; k <= 4; k++)
      n += (size_t) snprintf (s + n, cap - n, "%s{\"name\": \"b%d_%d\", \"bytes\": 4096}",
                              c || k ? ", " : "", c, k);
  n += (size_t) snprintf (s + n, cap - n, "], \"nodes\": [");
  for (int c = 0; c < chains; c++)
    for (int k = 0; k < 4; k++)
      n += (size_t) snprintf (s + n, cap - n,
                              "%s{\"name\": \"k%d_%d\", \"op\": \"kernel\", \"function\": \"f\", "
                              "\"grid\": %u, \"block\": 128, \"reads\": [\"b%d_%d\"], "
                              "\"writes\": [\"b%d_%d\"], \"cost_ns\": %g}\n",
                              c || k ? ", " : "", c, k, grid, c, k, c, k + 1, cost);
  snprintf (s + n, cap - n, "]}");
  return s;
}

static void
core_sim_streams_speed_up_independent_work (void **state)
{
  (void) state;
  char *text = chains_graph (8, 16, 50000);
  ps_graph g;
  ts_load (&g, text);
  free (text);
  double one = ts_makespan (&g, 1, true), four = ts_makespan (&g, 4, true);
  assert_true (one / four >= 1.6);
  assert_true (one / four <= 4.01);
  ps_graph_free (&g);

  /* The same holds for a generated fan-out graph. */
  ts_gen (&g, PS_GEN_FANOUT, 400, 1, 0);
  one = ts_makespan (&g, 1, true);
  four = ts_makespan (&g, 4, true);
  assert_true (one / four >= 1.6);
  ps_graph_free (&g);
}

#define SHARING_FMT \
  "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": [\n" \
  " {\"name\": \"a\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": %u, \"block\": 256," \
  "  \"cost_ns\": 100000, \"stream\": 0},\n" \
  " {\"name\": \"b\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": %u, \"block\": 256," \
  "  \"cost_ns\": 100000, \"stream\": 1}]}"

static void
core_sim_kernels_share_sms (void **state)
{
  (void) state;
  char text[1024];
  ps_graph g;
  /* Two kernels that each fill the GPU cannot overlap: together they take
   * as long as one after the other. */
  snprintf (text, sizeof text, SHARING_FMT, 4096, 4096);
  ts_load (&g, text);
  double full = ts_makespan (&g, 2, true);
  assert_true (full >= 200000);
  ps_graph_free (&g);
  /* Two kernels of 16 blocks run side by side. */
  snprintf (text, sizeof text, SHARING_FMT, 16, 16);
  ts_load (&g, text);
  double small = ts_makespan (&g, 2, true);
  assert_true (small < 120000);
  ps_graph_free (&g);
  /* A small kernel next to one that takes 90% of the SMs is slowed down. */
  snprintf (text, sizeof text, SHARING_FMT, 119, 40);
  ts_load (&g, text);
  ps_plan p;
  ps_timeline tl;
  ts_simulate (&g, 2, true, &p, &tl);
  double longest = 0;
  for (uint32_t i = 0; i < tl.n_spans; i++)
    longest = fmax (longest, tl.spans[i].end_ns - tl.spans[i].start_ns);
  assert_true (longest > 120000);
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

static void
core_sim_copies_overlap_compute (void **state)
{
  (void) state;
  static const char text[] =
    "{\"format\": \"planscope-graph\", \"version\": 1,\n"
    " \"buffers\": [{\"name\": \"x\", \"bytes\": 64000000, \"external\": true},\n"
    "              {\"name\": \"y\", \"bytes\": 64000000, \"external\": true}],\n"
    " \"nodes\": [\n"
    "  {\"name\": \"up\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"x\"], \"stream\": 0},\n"
    "  {\"name\": \"down\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"y\"], \"stream\": 1},\n"
    "  {\"name\": \"k\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 4096, \"block\": 256,"
    "   \"cost_ns\": 1000000, \"stream\": 2}]}";
  ps_graph g;
  ts_load (&g, text);
  double ms = ts_makespan (&g, 3, true);
  /* All three take about 1 ms alone and overlap: one upload engine, one
   * download engine, the SMs. */
  assert_true (ms < 1200000);
  assert_true (ms > 1000000);
  ps_graph_free (&g);
}

/* ---- stalls, the document, what would help ---- */

/* A chain on one stream, every span on the critical path: "what would
 * help" groups the spans by the function they run, counts and sums each
 * group, names it by its first span, and ranks the groups by their time. */
static const char helps_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"helps\",\n"
  " \"buffers\": [{\"name\": \"x\", \"bytes\": 4096}, {\"name\": \"y\", \"bytes\": 4096},"
  " {\"name\": \"z\", \"bytes\": 4096}, {\"name\": \"w\", \"bytes\": 4096},"
  " {\"name\": \"o\", \"bytes\": 4096, \"external\": true}],\n"
  " \"nodes\": [\n"
  "  {\"name\": \"g1\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": 8, \"block\": 64,"
  "   \"writes\": [\"x\"], \"cost_ns\": 30000},\n"
  "  {\"name\": \"n1\", \"op\": \"kernel\", \"function\": \"norm\", \"grid\": 8, \"block\": 64,"
  "   \"reads\": [\"x\"], \"writes\": [\"y\"], \"cost_ns\": 50000},\n"
  "  {\"name\": \"g2\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": 8, \"block\": 64,"
  "   \"reads\": [\"y\"], \"writes\": [\"z\"], \"cost_ns\": 40000},\n"
  "  {\"name\": \"s1\", \"op\": \"kernel\", \"function\": \"softmax\", \"grid\": 8, \"block\": 64,"
  "   \"reads\": [\"z\"], \"writes\": [\"w\"], \"cost_ns\": 10000},\n"
  "  {\"name\": \"g3\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": 8, \"block\": 64,"
  "   \"reads\": [\"w\"], \"writes\": [\"o\"], \"cost_ns\": 20000}]}";

static void
core_sim_helps_group_by_function (void **state)
{
  (void) state;
  ps_graph g;
  ts_load (&g, helps_graph);
  ps_plan p;
  ps_timeline tl;
  ts_simulate (&g, 1, true, &p, &tl);
  ps_diagnosis dg;
  assert_int_equal (ps_diagnose (&dg, &tl), 0);
  assert_int_equal (dg.n_critical, 5);
  /* gemm (3 spans, 90 us), norm (50 us), softmax (10 us), in that order. */
  uint32_t n_shorten = 0;
  const char *names[3] = { "g1", "n1", "s1" };
  uint32_t counts[3] = { 3, 1, 1 };
  for (uint32_t i = 0; i < dg.n_help; i++) {
    const ps_help *h = &dg.help[i];
    if (h->kind != PS_HELP_SHORTEN)
      continue;
    assert_true (n_shorten < 3);
    assert_int_equal (h->count, counts[n_shorten]);
    double sum = 0;
    for (uint32_t k = 0; k < dg.n_critical; k++)
      if (ps_diagnose_work_key (&tl, dg.critical[k]) == ps_diagnose_work_key (&tl, h->span))
        sum += tl.spans[dg.critical[k]].end_ns - tl.spans[dg.critical[k]].start_ns;
    assert_true (fabs (h->ns - sum) < 1e-6);
    /* Named by the first of its spans. */
    for (uint32_t s = 0; s < h->span; s++)
      assert_true (ps_diagnose_work_key (&tl, s) != ps_diagnose_work_key (&tl, h->span));
    assert_string_equal (ps_timeline_span_name (&tl, h->span), names[n_shorten]);
    n_shorten++;
  }
  assert_int_equal (n_shorten, 3);
  ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  ps_graph_free (&g);
}


static const char stall_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"stall\",\n"
  " \"buffers\": [{\"name\": \"h\", \"bytes\": 4096}, {\"name\": \"o\", \"bytes\": 4096, "
  "\"external\": true}],\n"
  " \"nodes\": [\n"
  "  {\"name\": \"slow\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 8, \"block\": 64,"
  "   \"writes\": [\"h\"], \"cost_ns\": 500000, \"stream\": 0},\n"
  "  {\"name\": \"quick\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 8, \"block\": 64,"
  "   \"cost_ns\": 1000, \"stream\": 1},\n"
  "  {\"name\": \"use\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 8, \"block\": 64,"
  "   \"reads\": [\"h\"], \"writes\": [\"o\"], \"cost_ns\": 1000, \"stream\": 1}]}";

static void
core_sim_stall_waits_for_producer (void **state)
{
  (void) state;
  ps_graph g;
  ts_load (&g, stall_graph);
  ps_plan p;
  ps_timeline tl;
  ts_simulate (&g, 2, true, &p, &tl);
  assert_int_equal (tl.n_stalls, 1);
  const ps_stall *sl = &tl.stalls[0];
  assert_int_equal (sl->stream, 1);
  assert_int_equal (sl->on_stream, 0);
  assert_string_equal (ps_timeline_span_name (&tl, sl->waiting_for), "slow");
  assert_true (sl->end_ns - sl->start_ns > 400000);
  assert_int_equal (tl.event_waits, 1);
  assert_int_equal (tl.n_flows, 1);

  ps_diagnosis dg;
  assert_int_equal (ps_diagnose (&dg, &tl), 0);
  /* slow -> use is the critical path; stream 1 stalls most of the run. */
  assert_int_equal (dg.n_critical, 2);
  assert_string_equal (ps_timeline_span_name (&tl, dg.critical[0]), "slow");
  assert_string_equal (ps_timeline_span_name (&tl, dg.critical[1]), "use");
  assert_int_equal (dg.bound[dg.critical[1]], PS_BOUND_EVENT);
  bool stalls_help = false;
  for (uint32_t i = 0; i < dg.n_help; i++)
    if (dg.help[i].kind == PS_HELP_STALLS && dg.help[i].stream == 1)
      stalls_help = dg.help[i].on_stream == 0;
  assert_true (stalls_help);
  assert_int_equal (dg.help[0].kind, PS_HELP_SHORTEN);
  assert_string_equal (ps_timeline_span_name (&tl, dg.help[0].span), "slow");

  /* Halving "slow" saves about half of it; halving "quick" nothing. */
  ps_sim s;
  assert_int_equal (ps_sim_init (&s, &p, ts_h200 ()), 0);
  double saved;
  uint32_t step = tl.spans[dg.critical[0]].step;
  assert_int_equal (ps_sim_gain (&s, &step, 1, 0.5, tl.makespan_ns, &saved), 0);
  assert_true (fabs (saved - 250000) < 1);
  for (uint32_t i = 0; i < tl.n_spans; i++)
    if (!strcmp (ps_timeline_span_name (&tl, i), "quick")) {
      step = tl.spans[i].step;
      assert_int_equal (ps_sim_gain (&s, &step, 1, 0.5, tl.makespan_ns, &saved), 0);
      assert_true (fabs (saved) < 1e-6);
    }
  ps_sim_free (&s);

  /* The document: valid JSON with the stall and what it waited for. */
  char *doc = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&doc, &len);
  assert_int_equal (ps_timeline_write_json (&tl, &dg, f), 0);
  fclose (f);
  ps_json_reader r;
  ps_json_init_mem (&r, doc, len);
  ps_json_token t;
  int waiting_for = 0, critical = 0;
  while ((t = ps_json_next (&r)) != PS_JSON_EOF) {
    assert_int_not_equal (t, PS_JSON_ERROR);
    if (t == PS_JSON_KEY && !strcmp (r.str, "waiting_for")) {
      assert_int_equal (ps_json_next (&r), PS_JSON_STRING);
      assert_string_equal (r.str, "slow");
      waiting_for++;
    }
    if (t == PS_JSON_KEY && !strcmp (r.str, "critical_path"))
      critical++;
  }
  ps_json_close (&r);
  assert_int_equal (waiting_for, 1);
  assert_int_equal (critical, 1);
  assert_non_null (strstr (doc, "\"format\": \"planscope-timeline\""));
  assert_non_null (strstr (doc, "\"source\": \"simulated\""));
  assert_non_null (strstr (doc, "\"critical_path\": [\"slow\", \"use\"]"));
  free (doc);

  doc = NULL;
  f = open_memstream (&doc, &len);
  assert_int_equal (ps_timeline_write_text (&tl, &dg, f), 0);
  fclose (f);
  assert_non_null (strstr (doc, "stream 1 at "));
  assert_non_null (strstr (doc, "for slow on stream 0, the work it depends on, which runs "));
  assert_non_null (strstr (doc, "what would help"));
  free (doc);

  ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* ps_timeline_finish on spans and flows that come in no order (an
 * imported trace's may not), and in order (a simulated run's): each
 * stream's spans by start, then end, then index, and each flow's span the
 * first on its stream that starts at or after the flow arrives, as a
 * search of all of them finds it. */
static void
core_timeline_finish_orders (void **state)
{
  (void) state;
  for (int ordered = 0; ordered < 2; ordered++) {
    ps_timeline tl;
    ps_timeline_init (&tl, ordered ? PS_TL_SIMULATED : PS_TL_IMPORTED);
    for (int s = 0; s < 3; s++)
      assert_int_equal (ps_timeline_add_stream (&tl, s, 0, NULL), 0);
    uint64_t x = 12345;
    double next[3] = { 0, 0, 0 };
    for (uint32_t i = 0; i < 600; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      ps_span sp = { 0 };
      sp.stream = (uint32_t) (x >> 33) % 3;
      /* In order: one after the other on each stream, some of no length;
       * else anywhere, often at the same start. */
      double len = (double) ((x >> 20) % 4) * 10;
      sp.start_ns = ordered ? next[sp.stream] : (double) ((x >> 40) % 50) * 10;
      sp.end_ns = sp.start_ns + len;
      next[sp.stream] = sp.end_ns;
      sp.step = sp.pred = sp.name = PS_NONE;
      assert_int_equal (ps_timeline_add_span (&tl, &sp, NULL, 0, NULL), 0);
    }
    double at[3] = { 0, 0, 0 };
    for (uint32_t i = 0; i < 300; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      uint32_t s = (uint32_t) (x >> 33) % 3;
      /* In order: later and later on each stream, now and then past its
       * last span; else anywhere. */
      at[s] += (double) ((x >> 20) % 40);
      ps_flow f
          = { 0, ordered ? at[s] : (double) ((x >> 40) % 600), 0, s, PS_NONE, 0, PS_NONE, -1 };
      assert_int_equal (ps_timeline_add_flow (&tl, &f, NULL), 0);
    }
    assert_int_equal (ps_timeline_finish (&tl), 0);
    uint32_t listed = 0;
    for (uint32_t s = 0; s < 3; s++)
      for (uint32_t k = tl.stream_off[s]; k < tl.stream_off[s + 1]; k++, listed++) {
        const ps_span *b = &tl.spans[tl.by_stream[k]];
        assert_int_equal (b->stream, s);
        if (k == tl.stream_off[s])
          continue;
        const ps_span *a = &tl.spans[tl.by_stream[k - 1]];
        assert_true (
            a->start_ns < b->start_ns
            || (a->start_ns == b->start_ns
                && (a->end_ns < b->end_ns
                    || (a->end_ns == b->end_ns && tl.by_stream[k - 1] < tl.by_stream[k]))));
      }
    assert_int_equal (listed, tl.n_spans);
    for (uint32_t i = 0; i < tl.n_flows; i++) {
      const ps_flow *f = &tl.flows[i];
      uint32_t want = PS_NONE;
      for (uint32_t k = tl.stream_off[f->to_stream]; k < tl.stream_off[f->to_stream + 1]; k++)
        if (tl.spans[tl.by_stream[k]].start_ns >= f->to_ns) {
          want = tl.by_stream[k];
          break;
        }
      assert_int_equal (f->to_span, want);
    }
    ps_timeline_free (&tl);
  }
}

/* ---- the plan's own run ---------------------------------------------------- */

/* Two simulated timelines are the same run: every span, stall and flow. */
static void
expect_same_run (const ps_timeline *a, const ps_timeline *b)
{
  assert_int_equal (a->n_streams, b->n_streams);
  assert_int_equal (a->n_spans, b->n_spans);
  assert_int_equal (a->n_span_nodes, b->n_span_nodes);
  assert_int_equal (a->n_stalls, b->n_stalls);
  assert_int_equal (a->n_flows, b->n_flows);
  assert_int_equal (a->event_waits, b->event_waits);
  assert_true (a->makespan_ns == b->makespan_ns);
  assert_memory_equal (a->span_nodes, b->span_nodes, (size_t) a->n_span_nodes * sizeof (uint32_t));
  for (uint32_t i = 0; i < a->n_spans; i++) {
    const ps_span *x = &a->spans[i], *y = &b->spans[i];
    assert_true (x->start_ns == y->start_ns && x->end_ns == y->end_ns);
    assert_true (x->launch_ns == y->launch_ns && x->ready_ns == y->ready_ns);
    assert_int_equal (x->stream, y->stream);
    assert_int_equal (x->step, y->step);
    assert_int_equal (x->nodes_begin, y->nodes_begin);
    assert_int_equal (x->nodes_count, y->nodes_count);
    assert_int_equal (x->pred, y->pred);
    assert_int_equal (x->kind, y->kind);
    assert_int_equal (x->bound, y->bound);
    assert_int_equal (x->flags, y->flags);
  }
  for (uint32_t i = 0; i < a->n_stalls; i++) {
    const ps_stall *x = &a->stalls[i], *y = &b->stalls[i];
    assert_true (x->start_ns == y->start_ns && x->end_ns == y->end_ns);
    assert_int_equal (x->step, y->step);
    assert_int_equal (x->waiting_for, y->waiting_for);
  }
  for (uint32_t i = 0; i < a->n_flows; i++) {
    const ps_flow *x = &a->flows[i], *y = &b->flows[i];
    assert_true (x->from_ns == y->from_ns && x->to_ns == y->to_ns);
    assert_int_equal (x->from_span, y->from_span);
    assert_int_equal (x->to_span, y->to_span);
    assert_int_equal (x->stall, y->stall);
  }
}

/* The run a plan keeps from planning is the one the simulator gives it:
 * the views that read it (the plan's critical path, the app's timeline,
 * `simulate`, `profile`) show what a simulation would.  Graphs the search
 * simulates, and past it (ps__sim_max_groups lowered, and one chain of
 * more groups than it), where the run is the one the search recorded for
 * the schedule it kept synced, or simulated once the plan is final when
 * another won (a count on the second thread; one left running while the
 * later passes are made, which often wins with leave_always). */
static void
core_sim_plan_keeps_its_run (void **state)
{
  (void) state;
  static const uint32_t sizes[] = { 40, 600, 3000 };
  uint32_t sim_max = ps__sim_max_groups, pair_groups = ps__search_pair_groups;
  size_t kept_before = ps__search_runs_kept;
  for (int past = 0; past < 3; past++)
    for (int shape = 0; shape < PS_GEN__COUNT; shape++)
      for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (uint32_t streams = 1; streams <= 4; streams += 3)
          for (int fusion = 0; fusion <= 1; fusion++) {
            ps__sim_max_groups = past ? 100 : sim_max;
            ps__search_pair_groups = past ? 0 : pair_groups;
            ps__search_leave_always = past == 2;
            ps_graph g;
            ps_plan p;
            ts_gen (&g, (ps_gen_shape) shape, sizes[z], 7 + z, 0);
            ts_plan (&p, &g, streams, fusion);
            ps__sim_max_groups = sim_max;
            ps__search_pair_groups = pair_groups;
            ps__search_leave_always = false;
            assert_non_null (p.run);
            assert_true (p.est_simulated);
            ps_timeline fresh, kept;
            ps_timeline_init (&fresh, PS_TL_SIMULATED);
            assert_int_equal (ps_simulate (&p, &p.device, &fresh), 0);
            assert_true (fresh.makespan_ns == p.est_makespan_ns);
            ps_timeline_init (&kept, PS_TL_SIMULATED);
            assert_int_equal (ps_plan_take_run (&p, &kept), 0);
            assert_null (p.run);
            assert_ptr_equal (kept.plan, &p);
            expect_same_run (&kept, &fresh);
            ps_timeline_free (&kept);
            /* Taken: the next one is simulated. */
            ps_timeline_init (&kept, PS_TL_SIMULATED);
            assert_int_equal (ps_plan_take_run (&p, &kept), 0);
            expect_same_run (&kept, &fresh);
            ps_timeline_free (&kept);
            ps_timeline_free (&fresh);
            ps_plan_free (&p);
            ps_graph_free (&g);
          }

  /* Most runs past the search (50 of its 64 plans) were the ones it
   * recorded. */
  assert_true (ps__search_runs_kept >= kept_before + 40);

  /* Past the search: a chain of more groups than it simulates. */
  ps_graph g;
  ps_plan p;
  ts_gen (&g, PS_GEN_CHAIN, ps__sim_max_groups + 2000, 3, 0);
  ts_plan (&p, &g, 2, false);
  assert_non_null (p.run);
  ps_timeline fresh;
  ps_timeline_init (&fresh, PS_TL_SIMULATED);
  assert_int_equal (ps_simulate (&p, &p.device, &fresh), 0);
  assert_true (fresh.makespan_ns == p.est_makespan_ns);
  /* Moved plans keep it (the planner moves the faster of two). */
  ps_plan moved = p;
  memset (&p, 0, sizeof p);
  ps_timeline kept;
  ps_timeline_init (&kept, PS_TL_SIMULATED);
  assert_int_equal (ps_plan_take_run (&moved, &kept), 0);
  assert_ptr_equal (kept.plan, &moved);
  expect_same_run (&kept, &fresh);
  ps_timeline_free (&kept);
  ps_timeline_free (&fresh);
  ps_plan_free (&moved);
  ps_graph_free (&g);
}

/* ---- stall causes: each kind from a hand-made graph --------------------- */

/* The sentence and cause of the first wait on work named `who`. */
typedef struct cause_case {
  ps_graph g;
  ps_plan p;
  ps_timeline tl;
  ps_diagnosis dg;
} cause_case;

static void
cause_load (cause_case *c, const char *json, const char *example, uint32_t streams)
{
  memset (c, 0, sizeof *c);
  if (json) {
    ts_load (&c->g, json);
  } else {
    char path[1024];
    snprintf (path, sizeof path, "%s/data/examples/%s", ts_source_root (), example);
    ps_diag d;
    ps_diag_init (&d, path);
    ps_graph_init (&c->g);
    int rc = ps_import_graph_file (&c->g, path, NULL, &d);
    ps_diag_free (&d);
    assert_int_equal (rc, 0);
  }
  /* One kind of schedule, whatever the planner's search would prefer:
   * each case below is a situation that schedule runs into. */
  static const ps__planner_variant blend = { PS__KEY_BLEND, PS__ORDER_SHORTER, PS__RANK_BOUND,
                                             0, 0 };
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.streams = streams;
  assert_int_equal (ps__plan_build_variant (&c->p, &c->g, &o, &blend, NULL), 0);
  ps_timeline_init (&c->tl, PS_TL_SIMULATED);
  assert_int_equal (ps_simulate (&c->p, ts_h200 (), &c->tl), 0);
  assert_int_equal (ps_diagnose (&c->dg, &c->tl), 0);
}

static const ps_wait *
cause_find (cause_case *c, const char *who, ps_wait_kind kind, char *text, size_t cap)
{
  for (uint32_t i = 0; i < c->dg.n_waits; i++) {
    const ps_wait *w = &c->dg.waits[i];
    if (w->kind == kind && w->span < c->tl.n_spans
        && strcmp (ps_timeline_span_name (&c->tl, w->span), who) == 0) {
      ps_diagnose_wait_text (&c->tl, &c->dg, i, text, cap);
      return w;
    }
  }
  fail_msg ("no wait of %s", who);
  return NULL;
}

static void
cause_free (cause_case *c)
{
  ps_diagnosis_free (&c->dg);
  ps_timeline_free (&c->tl);
  ps_plan_free (&c->p);
  ps_graph_free (&c->g);
}

static void
expect_text (const char *text, const char *needle)
{
  if (!strstr (text, needle))
    fail_msg ("'%s' does not say '%s'", text, needle);
}

static const char cause_producer_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
  " {\"name\": \"a\", \"bytes\": 1048576, \"external\": true}, {\"name\": \"b\", \"bytes\": 1048576}],"
  " \"nodes\": ["
  "  {\"name\": \"upload\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"a\"], \"stream\": 0},"
  "  {\"name\": \"long\", \"op\": \"kernel\", \"function\": \"slow\", \"grid\": 64, \"block\": 128,"
  "   \"reads\": [\"a\"], \"writes\": [\"b\"], \"cost_ns\": 50000, \"stream\": 0},"
  "  {\"name\": \"use\", \"op\": \"kernel\", \"function\": \"fast\", \"grid\": 64, \"block\": 128,"
  "   \"reads\": [\"b\"], \"cost_ns\": 1000, \"stream\": 1}]}";

/* The work waited for ran long: it is named, with its duration. */
static void
core_cause_producer (void **state)
{
  (void) state;
  cause_case c;
  cause_load (&c, cause_producer_graph, NULL, 2);
  char text[1024];
  const ps_wait *w = cause_find (&c, "use", PS_WAIT_KIND_EVENT, text, sizeof text);
  assert_int_equal (w->cause, PS_CAUSE_PRODUCER);
  assert_string_equal (ps_timeline_span_name (&c.tl, w->culprit), "long");
  expect_text (text, "use waits ");
  expect_text (text, "for long on stream 0, the work it depends on, which runs 50.0 \xc2\xb5s");
  assert_null (strstr (text, "host"));
  cause_free (&c);
}

static const char cause_resource_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
  " {\"name\": \"x\", \"bytes\": 1048576, \"external\": true}, {\"name\": \"b\", \"bytes\": 1048576},"
  " {\"name\": \"y\", \"bytes\": 1048576, \"external\": true}],"
  " \"nodes\": ["
  "  {\"name\": \"hog\", \"op\": \"kernel\", \"function\": \"hog\", \"grid\": 100000, \"block\": 1024,"
  "   \"writes\": [\"x\"], \"cost_ns\": 40000, \"stream\": 0},"
  "  {\"name\": \"prod\", \"op\": \"kernel\", \"function\": \"prod\", \"grid\": 100000, \"block\": 1024,"
  "   \"writes\": [\"b\"], \"cost_ns\": 10000, \"stream\": 1},"
  "  {\"name\": \"use\", \"op\": \"kernel\", \"function\": \"use\", \"grid\": 64, \"block\": 128,"
  "   \"reads\": [\"b\"], \"writes\": [\"y\"], \"cost_ns\": 1000, \"stream\": 2}]}";

/* The work waited for was itself held up by SMs another kernel filled:
 * the stall names both, and the SM wait is a wait of its own. */
static void
core_cause_resource (void **state)
{
  (void) state;
  cause_case c;
  cause_load (&c, cause_resource_graph, NULL, 3);
  char text[1024];
  const ps_wait *w = cause_find (&c, "use", PS_WAIT_KIND_EVENT, text, sizeof text);
  assert_int_equal (w->cause, PS_CAUSE_RESOURCE);
  assert_string_equal (ps_timeline_span_name (&c.tl, w->culprit), "hog");
  expect_text (text, "use waits ");
  expect_text (text, "for prod on stream 1: prod waited for the SMs held by hog (40.0 \xc2\xb5s)");
  w = cause_find (&c, "prod", PS_WAIT_KIND_RESOURCE, text, sizeof text);
  assert_string_equal (ps_timeline_span_name (&c.tl, w->culprit), "hog");
  expect_text (text, "prod waits ");
  expect_text (text, "for the SMs held by hog (40.0 \xc2\xb5s)");
  cause_free (&c);
}

/* A copy engine held by another copy. */
static void
core_cause_copy_engine (void **state)
{
  (void) state;
  cause_case c;
  cause_load (&c, NULL, "long-kernel-wait.json", 4);
  char text[1024];
  const ps_wait *w = cause_find (&c, "upload_query", PS_WAIT_KIND_RESOURCE, text, sizeof text);
  assert_int_equal (w->cause, PS_CAUSE_RESOURCE);
  expect_text (text, "upload_query waits ");
  expect_text (text, "for the copy engine held by upload_features");
  cause_free (&c);
}

/* A wait the plan added for resource order, which the pool relies on:
 * no dependency, the cost, and the buffers that share bytes. */
static void
core_cause_order_and_pool (void **state)
{
  (void) state;
  cause_case c;
  cause_load (&c, NULL, "copy-compute-overlap.json", 4);
  char text[1024];
  const ps_wait *w = cause_find (&c, "filter1", PS_WAIT_KIND_EVENT, text, sizeof text);
  assert_int_equal (w->cause, PS_CAUSE_ORDER);
  assert_int_equal (w->dep, PS_NONE);
  expect_text (text, "filter1 waits ");
  expect_text (text, "which it does not depend on: the plan keeps it from taking the SMs first "
                     "(resource order), costing ");
  expect_text (text, "the pool gives mid1 the bytes of mid0, which relies on this wait");
  assert_true (w->cost_ns > 0);
  cause_free (&c);
}

/* The event was recorded later than the dependency needs. */
static void
core_cause_late_record (void **state)
{
  (void) state;
  cause_case c;
  cause_load (&c, NULL, "long-kernel-wait.json", 4);
  char text[1024];
  const ps_wait *w = cause_find (&c, "score_topk", PS_WAIT_KIND_EVENT, text, sizeof text);
  assert_int_equal (w->cause, PS_CAUSE_LATE_RECORD);
  assert_string_equal (ps_timeline_span_name (&c.tl, w->dep), "big_gemm");
  expect_text (text, "score_topk waits ");
  expect_text (text, "for softmax on stream 0: the event is recorded after softmax, but it "
                     "depends only on big_gemm, which ends ");
  /* The wait costs what lies between the dependency and the record. */
  const ps_span *dep = &c.tl.spans[w->dep], *cul = &c.tl.spans[w->culprit];
  assert_true (fabs (w->cost_ns - (cul->end_ns - dep->end_ns)) < 1);
  cause_free (&c);
}

/* The host fell behind issuing a hundred tiny kernels: the stream that
 * had its inputs sits idle until the host issues its work. */
static void
core_cause_host (void **state)
{
  (void) state;
  char json[32768];
  size_t n = (size_t) snprintf (json, sizeof json,
                                "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": ["
                                "{\"name\": \"o\", \"bytes\": 4096, \"external\": true}],"
                                " \"nodes\": [{\"name\": \"first\", \"op\": \"kernel\", "
                                "\"function\": \"k0\", \"grid\": 64, \"block\": 128, "
                                "\"cost_ns\": 1000, \"stream\": 1}");
  for (int i = 0; i < 100; i++)
    n += (size_t) snprintf (json + n, sizeof json - n,
                            ", {\"name\": \"tiny%d\", \"op\": \"kernel\", \"function\": \"tiny\", "
                            "\"grid\": 1, \"block\": 32, \"cost_ns\": 200, \"stream\": 0}", i);
  snprintf (json + n, sizeof json - n,
            ", {\"name\": \"late\", \"op\": \"kernel\", \"function\": \"k1\", \"grid\": 64, "
            "\"block\": 128, \"writes\": [\"o\"], \"cost_ns\": 1000, \"stream\": 1}]}");
  cause_case c;
  cause_load (&c, json, NULL, 2);
  char text[1024];
  const ps_wait *w = cause_find (&c, "late", PS_WAIT_KIND_HOST, text, sizeof text);
  assert_int_equal (w->cause, PS_CAUSE_HOST);
  expect_text (text, "late waits ");
  expect_text (text, "for the host to issue it: launch-bound");
  /* Its inputs were ready long before: the stream was free. */
  const ps_span *late = &c.tl.spans[w->span];
  assert_true (late->start_ns - w->start_ns > 100000);
  /* Work that did not wait for the host is not said to. */
  for (uint32_t i = 0; i < c.dg.n_waits; i++)
    if (c.dg.waits[i].kind == PS_WAIT_KIND_HOST)
      assert_true (c.dg.waits[i].end_ns - c.dg.waits[i].start_ns > 0);
  cause_free (&c);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_sim_device_files_match_builtin),
    cmocka_unit_test (core_sim_device_errors_located),
    cmocka_unit_test (core_sim_device_keys_whole_and_once),
    cmocka_unit_test (core_sim_cost_model),
    cmocka_unit_test (core_sim_generated_schedules),
    cmocka_unit_test (core_sim_examples),
    cmocka_unit_test (core_sim_deterministic),
    cmocka_unit_test (core_sim_stop_above),
    cmocka_unit_test (core_sim_streams_speed_up_independent_work),
    cmocka_unit_test (core_sim_kernels_share_sms),
    cmocka_unit_test (core_sim_copies_overlap_compute),
    cmocka_unit_test (core_sim_helps_group_by_function),
    cmocka_unit_test (core_sim_stall_waits_for_producer),
    cmocka_unit_test (core_sim_plan_keeps_its_run),
    cmocka_unit_test (core_cause_producer),
    cmocka_unit_test (core_cause_resource),
    cmocka_unit_test (core_cause_copy_engine),
    cmocka_unit_test (core_cause_order_and_pool),
    cmocka_unit_test (core_cause_late_record),
    cmocka_unit_test (core_cause_host),
    cmocka_unit_test (core_timeline_finish_orders),
  };
  return cmocka_run_group_tests_name ("/core/sim", tests, NULL, NULL);
}
