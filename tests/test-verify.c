/* test-verify.c: the simple planner's plans verify; the verifier rejects
 * deliberately broken plans with messages that name what is wrong, agrees
 * with a brute-force happens-before on random plans, and the plan's JSON
 * and text forms carry what cli.md promises. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>

#include "ps-gen.h"
#include "ps-import.h"
#include "ps-json.h"
#include "ps-plan-output.h"
#include "ps-pool-peak.h"
#include "ps-test-graph.h"
#include "ps-test-plan.h"

/* ---- plans built by hand ---- */

/* k1 writes A, k2 reads A: one RAW edge. */
static void
xfer_graph (tg *t)
{
  tg_init (t, "xfer");
  uint32_t a = tg_buf (t, "A", 1024, false), out = tg_buf (t, "out", 1024, true);
  uint32_t k1 = tg_kernel (t, "k1", "produce");
  tg_write (t, k1, a);
  uint32_t k2 = tg_kernel (t, "k2", "consume");
  tg_read (t, k2, a);
  tg_write (t, k2, out);
  tg_finish (t, true);
}

static void
core_verify_event_orders_streams (void **state)
{
  (void) state;
  tg t;
  xfer_graph (&t);
  ps_plan p;
  manual_begin (&p, &t.g, 2);
  put_step (&p, 0, 0);
  put_record (&p, 0, 0);
  put_wait (&p, 1, 0);
  put_step (&p, 1, 1);
  manual_end (&p);
  assert_verifies (&p);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_dropped_wait (void **state)
{
  (void) state;
  tg t;
  xfer_graph (&t);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 2);
  put_step (&p, 0, 0);
  put_record (&p, 0, 0);
  put_step (&p, 1, 1);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 1);
  assert_string_equal (r.msg[0], "dependency k1 -> k2 (RAW on buffer A) is not ordered: "
                                 "stream 0 step #0 and stream 1 step #2");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_dropped_record (void **state)
{
  (void) state;
  tg t;
  xfer_graph (&t);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 2);
  put_step (&p, 0, 0);
  put_wait (&p, 1, 0);
  put_step (&p, 1, 1);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 2);
  assert_reported (&r, "step #1: wait on event 0 that was never recorded before it");
  assert_reported (&r, "dependency k1 -> k2 (RAW on buffer A) is not ordered");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_wait_before_record (void **state)
{
  (void) state;
  tg t;
  xfer_graph (&t);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 2);
  put_step (&p, 0, 0);
  put_wait (&p, 1, 0);
  put_record (&p, 0, 0);
  put_step (&p, 1, 1);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 2);
  assert_reported (&r, "step #1: wait on event 0 that was never recorded before it");
  assert_reported (&r, "is not ordered: stream 0 step #0 and stream 1 step #3");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

/* A record captures only the work issued before it on its stream. */
static void
core_verify_record_before_producer (void **state)
{
  (void) state;
  tg t;
  xfer_graph (&t);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 2);
  put_record (&p, 0, 0);
  put_step (&p, 0, 0);
  put_wait (&p, 1, 0);
  put_step (&p, 1, 1);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 1);
  assert_reported (&r, "dependency k1 -> k2 (RAW on buffer A) is not ordered: stream 0 step #1 "
                       "and stream 1 step #3");
  reports_clear (&r);

  /* Re-recording the event after k1 fixes it: a wait uses the most recent
   * record issued before it. */
  ps_plan_free (&p);
  manual_begin (&p, &t.g, 2);
  put_record (&p, 0, 0);
  put_step (&p, 0, 0);
  put_record (&p, 0, 0);
  put_wait (&p, 1, 0);
  put_step (&p, 1, 1);
  manual_end (&p);
  assert_verifies (&p);
  ps_plan_free (&p);
  tg_free (&t);
}

/* Happens-before is transitive across streams: 0 -> 1 -> 2. */
static void
core_verify_transitive_through_third_stream (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "relay");
  uint32_t a = tg_buf (&t, "A", 512, false);
  uint32_t k1 = tg_kernel (&t, "k1", "f"), mid = tg_node (&t, "mid", PS_OP_HOST),
           k2 = tg_kernel (&t, "k2", "f");
  tg_write (&t, k1, a);
  tg_read (&t, k2, a);
  tg_finish (&t, true);
  ps_plan p;
  manual_begin (&p, &t.g, 3);
  put_step (&p, k1, 0);
  put_record (&p, 0, 0);
  put_wait (&p, 1, 0);
  put_step (&p, mid, 1);
  put_record (&p, 1, 1);
  put_wait (&p, 2, 1);
  put_step (&p, k2, 2);
  manual_end (&p);
  assert_verifies (&p);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_node_missing_or_twice (void **state)
{
  (void) state;
  tg t;
  xfer_graph (&t);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 1);
  put_step (&p, 0, 0);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 1);
  assert_string_equal (r.msg[0], "node \"k2\" is in no step");
  reports_clear (&r);
  ps_plan_free (&p);

  manual_begin (&p, &t.g, 1);
  put_step (&p, 0, 0);
  put_step (&p, 1, 0);
  put_step (&p, 1, 0);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 1);
  assert_string_equal (r.msg[0], "node \"k2\" is in two steps: #1 and #2");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_pins_and_stream_limit (void **state)
{
  (void) state;
  tg t;
  xfer_graph (&t);
  tg_pin (&t, 1, 1);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 2);
  put_step (&p, 0, 0);
  put_step (&p, 1, 0);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 1);
  assert_string_equal (r.msg[0],
                       "node \"k2\" is pinned to stream 1 but runs on stream 0 (step #1)");
  reports_clear (&r);
  ps_plan_free (&p);

  manual_begin (&p, &t.g, 2);
  put_step (&p, 0, 2);
  put_record (&p, 2, 0);
  put_wait (&p, 1, 0);
  put_step (&p, 1, 1);
  manual_end (&p);
  assert_int_equal (verify (&p, &r), 2);
  assert_reported (&r, "step #0: stream 2 is not below the stream count 2");
  assert_reported (&r, "step #1: stream 2 is not below the stream count 2");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

/* p writes A on stream 0, q writes B on stream 1; readers after each. */
static void
phases_graph (tg *t)
{
  tg_init (t, "phases");
  uint32_t a = tg_buf (t, "A", 1024, false), b = tg_buf (t, "B", 1024, false);
  uint32_t o1 = tg_buf (t, "o1", 64, true), o2 = tg_buf (t, "o2", 64, true);
  uint32_t p = tg_kernel (t, "p", "f"), r = tg_kernel (t, "r", "f");
  uint32_t q = tg_kernel (t, "q", "f"), s = tg_kernel (t, "s", "f");
  tg_write (t, p, a);
  tg_read (t, r, a);
  tg_write (t, r, o1);
  tg_write (t, q, b);
  tg_read (t, s, b);
  tg_write (t, s, o2);
  tg_finish (t, true);
}

static void
phases_plan (ps_plan *p, const ps_graph *g, bool with_wait, uint64_t off_b)
{
  manual_begin (p, g, 2);
  put_step (p, 0, 0); /* p */
  put_step (p, 1, 0); /* r */
  put_record (p, 0, 0);
  if (with_wait)
    put_wait (p, 1, 0);
  put_step (p, 2, 1); /* q */
  put_step (p, 3, 1); /* s */
  manual_end (p);
  p->offsets[0] = 0;
  p->offsets[1] = off_b;
  p->pool_bytes = off_b + 1024;
}

static void
core_verify_shared_bytes_in_ordered_phases (void **state)
{
  (void) state;
  tg t;
  phases_graph (&t);
  ps_plan p;
  phases_plan (&p, &t.g, true, 0);
  assert_verifies (&p);
  ps_plan_free (&p);
  phases_plan (&p, &t.g, true, 512); /* partial overlap */
  assert_verifies (&p);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_shared_bytes_used_concurrently (void **state)
{
  (void) state;
  tg t;
  phases_graph (&t);
  ps_plan p;
  reports r = { 0 };
  phases_plan (&p, &t.g, false, 512);
  assert_int_equal (verify (&p, &r), 1);
  assert_string_equal (r.msg[0], "pooled buffers \"A\" and \"B\" share bytes [512, 1024) but their "
                                 "uses are not ordered: \"A\" at stream 0 step #1 and \"B\" at "
                                 "stream 1 step #3");
  reports_clear (&r);
  ps_plan_free (&p);

  /* Side by side is fine without the wait. */
  phases_plan (&p, &t.g, false, 1024);
  assert_verifies (&p);
  /* ... but not past the end of the pool. */
  p.pool_bytes = 1500;
  assert_int_equal (verify (&p, &r), 1);
  assert_reported (&r, "buffer \"B\" at offset 1024 (1024 bytes) lies outside the pool of 1500");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

/* Thousands of buffers take turns in the same bytes, phases alternating
 * between two streams and chained by events: valid, and one missing wait
 * is found and named. */
static void
core_verify_many_buffers_share_one_slot (void **state)
{
  (void) state;
  enum { PHASES = 5000 };
  tg t;
  tg_init (&t, "slot");
  char name[32];
  uint32_t out = tg_buf (&t, "out", 64, true);
  for (uint32_t i = 0; i < PHASES; i++) {
    snprintf (name, sizeof name, "B%u", i);
    uint32_t b = tg_buf (&t, name, 256, false);
    snprintf (name, sizeof name, "w%u", i);
    uint32_t w = tg_kernel (&t, name, "f");
    tg_write (&t, w, b);
    snprintf (name, sizeof name, "r%u", i);
    uint32_t r = tg_kernel (&t, name, "f");
    tg_read (&t, r, b);
    tg_write (&t, r, out);
  }
  tg_finish (&t, true); /* the r_i form a WAW chain on "out", ordered by the events too */
  for (uint32_t missing = 0; missing < 2; missing++) {
    ps_plan p;
    manual_begin (&p, &t.g, 2);
    for (uint32_t i = 0; i < PHASES; i++) {
      uint32_t s = i % 2;
      if (i > 0 && !(missing && i == PHASES / 2))
        put_wait (&p, s, i - 1);
      put_step (&p, 2 * i, s);
      put_step (&p, 2 * i + 1, s);
      put_record (&p, s, i);
    }
    manual_end (&p);
    for (uint32_t b = 1; b <= PHASES; b++)
      p.offsets[b] = 0;
    p.pool_bytes = 256;
    reports r = { 0 };
    size_t n = verify (&p, &r);
    if (!missing) {
      assert_int_equal (n, 0);
    } else {
      /* The WAW edge on "out" between r_{k-1} and r_k is unordered too. */
      assert_true (n >= 2);
      char want[96];
      snprintf (want, sizeof want, "\"B%u\" and \"B%u\" share bytes [0, 256)", PHASES / 2 - 1,
                PHASES / 2);
      assert_reported (&r, want);
    }
    reports_clear (&r);
    ps_plan_free (&p);
  }
  tg_free (&t);
}

/* One step using both buffers that share bytes is never disjoint. */
static void
core_verify_shared_bytes_same_step (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "alias");
  uint32_t a = tg_buf (&t, "A", 256, false), b = tg_buf (&t, "B", 256, false);
  uint32_t w = tg_kernel (&t, "w", "f"), k = tg_kernel (&t, "k", "f");
  tg_write (&t, w, a);
  tg_read (&t, k, a);
  tg_write (&t, k, b);
  tg_finish (&t, true);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 1);
  put_step (&p, w, 0);
  put_step (&p, k, 0);
  manual_end (&p);
  p.offsets[b] = 0;
  p.pool_bytes = 256;
  assert_int_equal (verify (&p, &r), 1);
  assert_reported (&r, "pooled buffers \"A\" and \"B\" share bytes [0, 256)");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_user_events_and_fusion (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "user");
  uint32_t h = tg_buf (&t, "h", 4096, false);
  uint32_t ev = tg_event (&t, "done");
  uint32_t a = tg_kernel (&t, "a", "gelu"), b = tg_kernel (&t, "b", "scale");
  tg_write (&t, a, h);
  tg_read (&t, b, h);
  tg_write (&t, b, h);
  uint32_t rn = tg_event_node (&t, "rec", PS_OP_EVENT_RECORD, ev);
  uint32_t wn = tg_event_node (&t, "wt", PS_OP_EVENT_WAIT, ev);
  tg_finish (&t, true);
  ps_plan p;
  reports r = { 0 };
  uint32_t fused[2] = { a, b }, fn;

  manual_begin (&p, &t.g, 2);
  assert_int_equal (ps__plan_add_string (&p, "fused_gelu_scale", &fn), 0);
  assert_int_equal (ps__plan_add_step (&p, PS_OP_KERNEL, 0, fused, 2, PS_NONE, 0, fn, NULL), 0);
  put_step (&p, rn, 0);
  put_step (&p, wn, 1);
  manual_end (&p);
  assert_int_equal (p.kernels_after, 1);
  assert_int_equal (p.kernels_before, 2);
  /* The user's own record/wait pair orders the two streams. */
  assert_verifies (&p);
  ps_plan_free (&p);

  /* A user event node in a step of another op, and a fused memcpy. */
  manual_begin (&p, &t.g, 2);
  assert_int_equal (ps__plan_add_step (&p, PS_OP_MEMCPY, 0, fused, 2, PS_NONE, 0, PS_NONE, NULL),
                    0);
  assert_int_equal (ps__plan_add_step (&p, PS_OP_KERNEL, 0, &rn, 1, PS_NONE, PS_NONE, PS_NONE,
                                       NULL), 0);
  put_step (&p, wn, 0);
  manual_end (&p);
  verify (&p, &r);
  assert_reported (&r, "step #0: a memcpy step holds 2 nodes; only kernels are fused");
  assert_reported (&r, "step #0: node \"a\" is a kernel but the step is a memcpy");
  assert_reported (&r, "step #1: node \"rec\" is an event_record but the step is a kernel");
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_counts_past_max_reports (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "many");
  char name[16];
  for (int i = 0; i < 10; i++) {
    snprintf (name, sizeof name, "n%d", i);
    tg_node (&t, name, PS_OP_HOST);
  }
  tg_finish (&t, false);
  ps_plan p;
  reports r = { 0 };
  manual_begin (&p, &t.g, 1);
  manual_end (&p);
  assert_int_equal (ps_plan_verify (&p, collect, &r, 3), 10);
  assert_int_equal (r.n, 3);
  reports_clear (&r);
  ps_plan_free (&p);
  tg_free (&t);
}

/* ---- the simple planner ---- */

/* up -> fc1 -> act on stream 1, side on stream 2, join and down on 0. */
static void
pipeline_graph (tg *t)
{
  tg_init (t, "pipeline");
  uint32_t x = tg_buf (t, "x", 4 << 20, true), h = tg_buf (t, "h", 1 << 20, false);
  uint32_t h2 = tg_buf (t, "h2", 1 << 20, false), s = tg_buf (t, "s", 257, false);
  uint32_t y = tg_buf (t, "y", 4096, true);
  uint32_t up = tg_node (t, "up", PS_OP_MEMCPY);
  t->g.nodes[up].dir = PS_COPY_H2D;
  tg_write (t, up, x);
  uint32_t fc1 = tg_kernel (t, "fc1", "gemm");
  tg_read (t, fc1, x);
  tg_write (t, fc1, h);
  tg_pin (t, fc1, 1);
  uint32_t act = tg_kernel (t, "act", "gelu");
  tg_read (t, act, h);
  tg_write (t, act, h2);
  tg_pin (t, act, 1);
  uint32_t side = tg_kernel (t, "side", "sum");
  tg_read (t, side, x);
  tg_write (t, side, s);
  tg_pin (t, side, 2);
  uint32_t join = tg_kernel (t, "join", "add");
  tg_read (t, join, h2);
  tg_read (t, join, s);
  tg_write (t, join, y);
  uint32_t down = tg_node (t, "down", PS_OP_MEMCPY);
  t->g.nodes[down].dir = PS_COPY_D2H;
  tg_read (t, down, y);
  tg_finish (t, true);
}

static void
core_verify_simple_plan (void **state)
{
  (void) state;
  tg t;
  pipeline_graph (&t);
  ps_plan p;
  ps_plan_options o;
  ps_plan_options_init (&o);
  ps_diag d;
  ps_diag_init (&d, "pipeline.json");
  assert_int_equal (ps__plan_build_simple (&p, &t.g, &o, &d), 0);
  assert_verifies (&p);
  assert_int_equal (p.n_steps, 13); /* 6 nodes, 3 records, 4 waits */
  assert_int_equal (p.n_events, 3);
  assert_int_equal (p.n_event_pairs, 4);
  assert_int_equal (p.streams_used, 3);
  assert_int_equal (p.kernels_before, 4);
  assert_int_equal (p.kernels_after, 4);
  assert_int_equal (p.offsets[0], UINT64_MAX);
  assert_int_equal (p.offsets[1], 0);
  assert_int_equal (p.offsets[2], 1 << 20);
  assert_int_equal (p.offsets[3], 2 << 20);
  assert_int_equal (p.pool_bytes, (2 << 20) + 257);
  /* h and h2 are both used by act, and s on stream 2 is unordered with
   * both: the three need their own bytes. */
  assert_int_equal (ps_plan_find_peak (&p), 0);
  assert_int_equal (p.pool_peak, (2 << 20) + 257);
  for (uint32_t v = 0; v < t.g.n_nodes; v++) {
    const ps_step *st = &p.steps[p.node_step[v]];
    assert_int_equal (st->nodes_count, 1);
    assert_int_equal (p.step_nodes[st->nodes_begin], v);
    assert_int_equal (st->stream, t.g.nodes[v].stream < 0 ? 0 : t.g.nodes[v].stream);
  }
  assert_string_equal (ps__plan_str (&p, p.steps[p.node_step[1]].function), "gemm");
  assert_true (p.est_makespan_ns > 0);
  assert_true (p.timing.n >= 4);
  assert_string_equal (p.timing.stage[0], "analyse");
  ps_plan_free (&p);

  /* One stream: no events at all. */
  for (uint32_t v = 0; v < t.g.n_nodes; v++)
    t.g.nodes[v].stream = -1;
  o.streams = 1;
  assert_int_equal (ps__plan_build_simple (&p, &t.g, &o, &d), 0);
  assert_int_equal (p.n_steps, 6);
  assert_int_equal (p.n_events, 0);
  assert_int_equal (p.streams_used, 1);
  assert_verifies (&p);
  ps_plan_free (&p);
  assert_int_equal (d.count, 0);
  ps_diag_free (&d);
  tg_free (&t);
}

static void
core_verify_pin_error (void **state)
{
  (void) state;
  tg t;
  pipeline_graph (&t);
  tg_pin (&t, 3, 5);
  ps_plan p;
  ps_plan_options o;
  ps_plan_options_init (&o);
  ps_diag d;
  ps_diag_init (&d, "pipeline.json");
  assert_int_equal (ps__plan_build_simple (&p, &t.g, &o, &d), PS_EPIN);
  assert_int_equal (d.errors, 1);
  assert_string_equal (d.entries[0].message,
                       "nodes[3]: \"side\" is pinned to stream 5 but only 4 streams are allowed");
  assert_int_equal (d.entries[0].line, t.g.nodes[3].line);
  assert_int_equal (p.n_steps, 0);
  ps_plan_free (&p);
  assert_int_equal (ps_plan_build (&p, &t.g, &o, &d), PS_EPIN);
  assert_int_equal (d.errors, 2);
  assert_string_equal (d.entries[1].message, d.entries[0].message);
  ps_plan_free (&p);
  ps_diag_free (&d);
  tg_free (&t);
}

/* Cross-stream consumers of one producer share its record; a second
 * consumer on the same stream does not wait again. */
static void
core_verify_simple_plan_reuses_records (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "fan");
  uint32_t a = tg_buf (&t, "a", 64, false);
  uint32_t w = tg_kernel (&t, "w", "f");
  tg_write (&t, w, a);
  char name[8];
  for (int i = 0; i < 6; i++) {
    snprintf (name, sizeof name, "r%d", i);
    uint32_t v = tg_kernel (&t, name, "f");
    tg_read (&t, v, a);
    tg_pin (&t, v, 1 + i % 3);
  }
  tg_finish (&t, true);
  ps_plan p;
  ps_plan_options o;
  ps_plan_options_init (&o);
  assert_int_equal (ps__plan_build_simple (&p, &t.g, &o, NULL), 0);
  assert_verifies (&p);
  assert_int_equal (p.n_events, 1);
  assert_int_equal (p.n_event_pairs, 3);
  assert_int_equal (p.n_steps, 7 + 1 + 3);
  ps_plan_free (&p);
  tg_free (&t);
}

/* ---- random plans against a brute-force happens-before ---- */

static uint64_t rng_state;
static uint32_t
rnd (uint32_t n)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t) (rng_state % n);
}

#define RN 24
#define RMAX_STEPS 192

static void
core_verify_random_plans_match_brute_force (void **state)
{
  (void) state;
  rng_state = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 300; round++) {
    tg t;
    tg_init (&t, "random");
    char name[16];
    /* Sizes and densities vary so that both valid and invalid plans
     * occur often. */
    bool careful = round % 3 == 0;
    uint32_t nn = 4 + rnd (RN - 4), streams = 2 + rnd (2), skip_odds = careful ? 0 : rnd (3),
             noise_odds = careful ? 0 : rnd (3), events = round % 2 ? 4 : 64;
    for (uint32_t v = 0; v < nn; v++) {
      snprintf (name, sizeof name, "n%u", v);
      tg_node (&t, name, PS_OP_HOST);
      if (v > 0 && rnd (3))
        tg_edge (&t, v - 1 - rnd (v < 3 ? v : 3), v, PS_EDGE_AFTER);
    }
    tg_finish (&t, false);

    /* Nodes in id order on random streams, with random records (events
     * are re-recorded) and random waits in between. */
    /* Before a node, mostly a wait on the event recorded after each
     * cross-stream predecessor (sometimes skipped, sometimes since
     * re-recorded), plus a few waits on random events. */
    ps_plan p;
    manual_begin (&p, &t.g, 3);
    p.n_events = events;
    uint32_t stream_of[RN], event_of[RN];
    for (uint32_t v = 0; v < nn; v++) {
      uint32_t s = rnd (streams);
      stream_of[v] = s;
      for (uint32_t e = t.g.pred_off[v]; e < t.g.pred_off[v + 1]; e++) {
        uint32_t u = t.g.pred[e];
        if (stream_of[u] != s && event_of[u] != PS_NONE && rnd (8) >= skip_odds)
          put_wait (&p, s, event_of[u]);
      }
      if (rnd (8) < noise_odds)
        put_wait (&p, s, rnd (events));
      put_step (&p, v, s);
      event_of[v] = PS_NONE;
      if (careful || rnd (4)) {
        event_of[v] = rnd (events);
        put_record (&p, s, event_of[v]);
      }
    }
    manual_end (&p);
    assert_true (p.n_steps <= RMAX_STEPS);

    /* reach[i] has bit j when step i happens-before step j. */
    static uint64_t reach[RMAX_STEPS][RMAX_STEPS / 64];
    memset (reach, 0, sizeof reach);
    uint32_t last_rec[64];
    for (int e = 0; e < 64; e++)
      last_rec[e] = PS_NONE;
    uint32_t prev_on[3] = { PS_NONE, PS_NONE, PS_NONE };
    size_t bad_waits = 0;
    for (uint32_t j = 0; j < p.n_steps; j++) {
      const ps_step *st = &p.steps[j];
      uint32_t direct[2] = { prev_on[st->stream], PS_NONE };
      if (st->op == PS_OP_EVENT_WAIT) {
        direct[1] = last_rec[st->event];
        bad_waits += direct[1] == PS_NONE;
      }
      for (int k = 0; k < 2; k++) {
        uint32_t i = direct[k];
        if (i == PS_NONE)
          continue;
        for (uint32_t x = 0; x < RMAX_STEPS; x++)
          if (x == i || (reach[x][i / 64] >> (i % 64) & 1))
            reach[x][j / 64] |= (uint64_t) 1 << (j % 64);
      }
      if (st->op == PS_OP_EVENT_RECORD)
        last_rec[st->event] = j;
      prev_on[st->stream] = j;
    }
    size_t expected = bad_waits;
    for (uint32_t u = 0; u < nn; u++)
      for (uint32_t e = t.g.succ_off[u]; e < t.g.succ_off[u + 1]; e++) {
        uint32_t su = p.node_step[u], sv = p.node_step[t.g.succ[e]];
        expected += !(reach[su][sv / 64] >> (sv % 64) & 1);
      }
    assert_int_equal (ps_plan_verify (&p, NULL, NULL, 0), expected);
    ps_plan_free (&p);
    tg_free (&t);
  }
}

/* Random offsets for pooled buffers on random plans: verify reports a
 * sharing violation exactly when some overlapping pair is not in disjoint
 * phases by brute force. */
static void
core_verify_random_pools_match_brute_force (void **state)
{
  (void) state;
  rng_state = 0x2545f4914f6cdd1dull;
  for (int round = 0; round < 300; round++) {
    tg t;
    tg_init (&t, "pool");
    char name[16];
    enum { NB = 6, NN = 10, SLOTS = 16 };
    uint32_t streams = 1 + rnd (2);
    for (uint32_t b = 0; b < NB; b++) {
      snprintf (name, sizeof name, "b%u", b);
      tg_buf (&t, name, 256 * (1 + rnd (2)), false);
    }
    for (uint32_t v = 0; v < NN; v++) {
      snprintf (name, sizeof name, "n%u", v);
      tg_node (&t, name, PS_OP_HOST);
      tg_read (&t, v, rnd (NB));
      if (round % 2 && rnd (2))
        tg_write (&t, v, rnd (NB));
    }
    tg_finish (&t, false); /* no edges: only the pool is checked */

    ps_plan p;
    manual_begin (&p, &t.g, 2);
    p.n_events = 3;
    /* Event s is recorded on stream s; a step often waits for the other
     * stream first, and sometimes for a random event. */
    for (uint32_t v = 0; v < NN; v++) {
      uint32_t s = rnd (streams);
      if (streams > 1 && rnd (4))
        put_wait (&p, s, 1 - s);
      if (rnd (8) == 0)
        put_wait (&p, s, 2);
      put_step (&p, v, s);
      if (rnd (4))
        put_record (&p, s, rnd (8) ? s : 2);
    }
    manual_end (&p);
    /* Waits on never-recorded events are violations of their own; count
     * them so that the pool verdict can be separated. */
    size_t bad_waits = 0;
    {
      uint32_t last_rec[3] = { PS_NONE, PS_NONE, PS_NONE };
      for (uint32_t j = 0; j < p.n_steps; j++) {
        if (p.steps[j].op == PS_OP_EVENT_WAIT)
          bad_waits += last_rec[p.steps[j].event] == PS_NONE;
        if (p.steps[j].op == PS_OP_EVENT_RECORD)
          last_rec[p.steps[j].event] = j;
      }
    }
    p.pool_bytes = 256 * SLOTS;
    for (uint32_t b = 0; b < NB; b++)
      p.offsets[b] = 256 * rnd (SLOTS - (uint32_t) (t.g.buffers[b].bytes / 256) + 1);

    /* Brute force happens-before over steps. */
    static uint8_t hb[RMAX_STEPS][RMAX_STEPS];
    memset (hb, 0, sizeof hb);
    uint32_t last_rec[3] = { PS_NONE, PS_NONE, PS_NONE }, prev_on[2] = { PS_NONE, PS_NONE };
    for (uint32_t j = 0; j < p.n_steps; j++) {
      const ps_step *st = &p.steps[j];
      uint32_t direct[2] = { prev_on[st->stream],
                             st->op == PS_OP_EVENT_WAIT ? last_rec[st->event] : PS_NONE };
      for (int k = 0; k < 2; k++)
        if (direct[k] != PS_NONE)
          for (uint32_t x = 0; x < j; x++)
            if (x == direct[k] || hb[x][direct[k]])
              hb[x][j] = 1;
      if (st->op == PS_OP_EVENT_RECORD)
        last_rec[st->event] = j;
      prev_on[st->stream] = j;
    }
    bool conflict = false;
    for (uint32_t a = 0; a < NB; a++)
      for (uint32_t b = a + 1; b < NB; b++) {
        uint64_t ea = p.offsets[a] + t.g.buffers[a].bytes, eb = p.offsets[b] + t.g.buffers[b].bytes;
        if (p.offsets[a] >= eb || p.offsets[b] >= ea)
          continue;
        bool ab = true, ba = true, any_a = false, any_b = false;
        for (uint32_t x = 0; x < NN; x++)
          for (uint32_t y = 0; y < NN; y++) {
            const ps_node *nx = &t.g.nodes[x], *ny = &t.g.nodes[y];
            bool ux = false, uy = false;
            for (uint32_t i = 0; i < nx->reads_count + nx->writes_count; i++)
              ux |= t.g.access[nx->reads_begin + i] == a;
            for (uint32_t i = 0; i < ny->reads_count + ny->writes_count; i++)
              uy |= t.g.access[ny->reads_begin + i] == b;
            any_a |= ux;
            any_b |= uy;
            if (!ux || !uy)
              continue;
            ab &= hb[p.node_step[x]][p.node_step[y]];
            ba &= hb[p.node_step[y]][p.node_step[x]];
          }
        if (any_a && any_b && !ab && !ba)
          conflict = true;
      }
    size_t n = ps_plan_verify (&p, NULL, NULL, 0);
    assert_true (n >= bad_waits);
    assert_int_equal (n > bad_waits, conflict);
    ps_plan_free (&p);
    tg_free (&t);
  }
}

/* ---- output ---- */

static void
core_verify_plan_json (void **state)
{
  (void) state;
  tg t;
  pipeline_graph (&t);
  ps_plan p;
  assert_int_equal (ps__plan_build_simple (&p, &t.g, NULL, NULL), 0);
  char *doc = capture (ps_plan_write_json, &p);

  ps_json_reader r;
  assert_int_equal (ps_json_init_mem (&r, doc, strlen (doc)), 0);
  assert_int_equal (ps_json_next (&r), PS_JSON_OBJECT_BEGIN);
  const char *want[] = { "format", "version", "graph", "options", "streams", "pool_bytes",
                         "kernels_before", "kernels_after", "events", "buffers", "steps",
                         "pool_peak", "pool_peak_exact", "pool_ratio", "estimated_makespan_ns" };
  bool seen[15] = { false };
  uint32_t node_seen[6] = { 0 }, n_steps = 0, n_offsets = 0;
  ps_json_token tok;
  while ((tok = ps_json_next (&r)) == PS_JSON_KEY) {
    char key[64];
    snprintf (key, sizeof key, "%s", r.str);
    for (int i = 0; i < 13; i++)
      if (!strcmp (key, want[i]))
        seen[i] = true;
    if (!strcmp (key, "format")) {
      assert_int_equal (ps_json_next (&r), PS_JSON_STRING);
      assert_string_equal (r.str, "planscope-plan");
    } else if (!strcmp (key, "graph")) {
      assert_int_equal (ps_json_next (&r), PS_JSON_STRING);
      assert_string_equal (r.str, "pipeline");
    } else if (!strcmp (key, "streams") || !strcmp (key, "events")) {
      assert_int_equal (ps_json_next (&r), PS_JSON_NUMBER);
      assert_int_equal (r.i64, 3);
    } else if (!strcmp (key, "steps") || !strcmp (key, "buffers")) {
      bool steps = !strcmp (key, "steps");
      assert_int_equal (ps_json_next (&r), PS_JSON_ARRAY_BEGIN);
      while ((tok = ps_json_next (&r)) == PS_JSON_OBJECT_BEGIN) {
        n_steps += steps;
        while ((tok = ps_json_next (&r)) == PS_JSON_KEY) {
          if (steps && !strcmp (r.str, "nodes")) {
            assert_int_equal (ps_json_next (&r), PS_JSON_ARRAY_BEGIN);
            while ((tok = ps_json_next (&r)) == PS_JSON_STRING) {
              bool found = false;
              for (uint32_t v = 0; v < t.g.n_nodes; v++)
                if (!strcmp (r.str, ps_node_name (&t.g, v))) {
                  node_seen[v]++;
                  found = true;
                }
              assert_true (found);
            }
            assert_int_equal (tok, PS_JSON_ARRAY_END);
          } else {
            n_offsets += !steps && !strcmp (r.str, "offset");
            assert_int_not_equal (ps_json_skip_value (&r), PS_JSON_ERROR);
          }
        }
        assert_int_equal (tok, PS_JSON_OBJECT_END);
      }
      assert_int_equal (tok, PS_JSON_ARRAY_END);
    } else {
      assert_int_not_equal (ps_json_skip_value (&r), PS_JSON_ERROR);
    }
  }
  assert_int_equal (tok, PS_JSON_OBJECT_END);
  assert_int_equal (ps_json_next (&r), PS_JSON_EOF);
  for (int i = 0; i < 13; i++)
    if (!seen[i])
      fail_msg ("key \"%s\" missing", want[i]);
  for (uint32_t v = 0; v < t.g.n_nodes; v++)
    assert_int_equal (node_seen[v], 1);
  assert_int_equal (n_steps, p.n_steps);
  assert_int_equal (n_offsets, 3); /* pooled buffers only */
  ps_json_close (&r);
  assert_non_null (strstr (doc, "{\"op\": \"kernel\", \"stream\": 1, \"nodes\": [\"fc1\"], "
                                "\"function\": \"gemm\"}"));
  assert_non_null (strstr (doc, "{\"op\": \"event_wait\", \"stream\": 1, \"event\": 0, "
                                "\"why\": \"dependency\"}"));
  assert_non_null (strstr (doc, "{\"name\": \"x\", \"bytes\": 4194304, \"external\": true}"));
  free (doc);
  ps_plan_free (&p);
  tg_free (&t);
}

static void
core_verify_plan_text (void **state)
{
  (void) state;
  tg t;
  pipeline_graph (&t);
  ps_plan p;
  assert_int_equal (ps__plan_build_simple (&p, &t.g, NULL, NULL), 0);
  char *text = capture (ps_plan_write_text, &p);
  const char *want[] = {
    "plan for \"pipeline\": 6 nodes, 5 buffers, 13 steps (--streams 4, fusion on)\n",
    "\nstream 0 (6 steps)\n  #0   memcpy  up [h2d]\n  #1   record  e0\n",
    "\nstream 1 (4 steps)\n  #2   wait    e0 (from stream 0: after up)\n"
    "  #3   kernel  fc1 [gemm]\n",
    "  #10  wait    e2 (from stream 2: after side)\n",
    "  streams used    3 of 4\n",
    "  kernels         4 -> 4 after fusion\n",
    "  events          3 (0 user, 3 inserted; 4 cross-stream waits)\n",
    "  pool            2.00 MiB, 1.00x the peak of 2.00 MiB live at once\n",
    "  critical path   up -> fc1 -> act -> join -> down (5 nodes, ",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr (text, want[i]))
      fail_msg ("text plan lacks \"%s\":\n%s", want[i], text);
  free (text);
  ps_plan_free (&p);
  tg_free (&t);
}

/* A large layered graph with pins on four streams: the simple plan is
 * built and verified without violations. */
static void
core_verify_large_layered_plan (void **state)
{
  (void) state;
  tg t;
  tg_init (&t, "large");
  rng_state = 0x1234567ull;
  uint32_t n = 100000, width = 64;
  char name[24];
  for (uint32_t i = 0; i < width; i++) {
    snprintf (name, sizeof name, "b%u", i);
    tg_buf (&t, name, 4096, false);
  }
  for (uint32_t v = 0; v < n; v++) {
    snprintf (name, sizeof name, "k%u", v);
    tg_kernel (&t, name, "f");
    tg_read (&t, v, rnd (width));
    tg_write (&t, v, rnd (width));
    if (rnd (4) == 0)
      tg_pin (&t, v, (int32_t) rnd (4));
  }
  tg_finish (&t, true);
  ps_plan p;
  assert_int_equal (ps__plan_build_simple (&p, &t.g, NULL, NULL), 0);
  assert_true (p.n_event_pairs > 1000);
  assert_verifies (&p);
  ps_plan_free (&p);
  /* Whatever ps_plan_build does, its plan must verify too. */
  assert_int_equal (ps_plan_build (&p, &t.g, NULL, NULL), 0);
  assert_verifies (&p);
  ps_plan_free (&p);
  tg_free (&t);
}

/* ---- graphs from JSON ---- */

static const char mlp_json[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"mlp\",\n"
  " \"buffers\": [{\"name\": \"x\", \"bytes\": 4194304, \"external\": true},\n"
  "  {\"name\": \"h\", \"bytes\": 4194304}, {\"name\": \"y\", \"bytes\": 4194304, "
  "\"external\": true}],\n"
  " \"nodes\": [\n"
  "  {\"name\": \"upload\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"x\"]},\n"
  "  {\"name\": \"fc1\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": [64,16], "
  "\"block\": 256, \"reads\": [\"x\"], \"writes\": [\"h\"], \"flops\": 2.1e9, \"stream\": 1},\n"
  "  {\"name\": \"act\", \"op\": \"kernel\", \"function\": \"gelu\", \"impl\": \"gelu\", "
  "\"fusible\": true, \"grid\": 4096, \"block\": 256, \"reads\": [\"h\"], \"writes\": [\"h\"]},\n"
  "  {\"name\": \"scale\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\", "
  "\"fusible\": true, \"params\": {\"alpha\": 0.5}, \"grid\": 4096, \"block\": 256, "
  "\"reads\": [\"h\"], \"writes\": [\"y\"]},\n"
  "  {\"name\": \"download\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"y\"]}]}\n";

static void
load (ps_graph *g, const char *text, size_t len, const char *path)
{
  ps_diag d;
  ps_diag_init (&d, path);
  int rc = ps_import_graph_mem (g, text, len, path, &d);
  if (rc < 0 || d.errors)
    ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  ps_diag_free (&d);
}

/* Both planners' plans verify at every stream count, and both outputs are
 * written in full; the JSON parses to its end. */
static void
plan_and_check (const ps_graph *g, uint32_t min_streams)
{
  for (int full = 0; full < 2; full++)
    for (uint32_t s = min_streams; s <= 4; s++) {
      ps_plan p;
      ps_plan_options o;
      ps_plan_options_init (&o);
      o.streams = s;
      o.fusion = s % 2;
      int rc = full ? ps_plan_build (&p, g, &o, NULL) : ps__plan_build_simple (&p, g, &o, NULL);
      assert_int_equal (rc, 0);
      assert_verifies (&p);
      char *text = capture (ps_plan_write_text, &p), *doc = capture (ps_plan_write_json, &p);
      assert_non_null (strstr (text, "\nsummary\n"));
      ps_json_reader r;
      assert_int_equal (ps_json_init_mem (&r, doc, strlen (doc)), 0);
      ps_json_token tok;
      while ((tok = ps_json_next (&r)) > PS_JSON_EOF)
        ;
      assert_int_equal (tok, PS_JSON_EOF);
      ps_json_close (&r);
      free (text);
      free (doc);
      ps_plan_free (&p);
    }
}

static void
core_verify_loaded_mlp (void **state)
{
  (void) state;
  ps_graph g;
  load (&g, mlp_json, strlen (mlp_json), "mlp.json");
  ps_plan p;
  assert_int_equal (ps__plan_build_simple (&p, &g, NULL, NULL), 0);
  assert_verifies (&p);
  /* upload, record, wait, fc1, record, wait, act, scale, download */
  assert_int_equal (p.n_steps, 9);
  assert_int_equal (p.streams_used, 2);
  assert_int_equal (p.pool_bytes, 4194304);
  assert_int_equal (ps_plan_find_peak (&p), 0);
  assert_int_equal (p.pool_peak, 4194304);
  ps_plan_free (&p);
  plan_and_check (&g, 2);
  ps_graph_free (&g);
}

static void
core_verify_examples (void **state)
{
  (void) state;
  const char *root = getenv ("PS_SOURCE_ROOT");
  char dir[4096], path[4096 + 256];
  snprintf (dir, sizeof dir, "%s/data/examples", root ? root : PS_TEST_SOURCE_ROOT);
  DIR *dh = opendir (dir);
  assert_non_null (dh);
  int n = 0;
  struct dirent *de;
  while ((de = readdir (dh))) {
    size_t len = strlen (de->d_name);
    if (len < 6 || strcmp (de->d_name + len - 5, ".json"))
      continue;
    snprintf (path, sizeof path, "%s/%s", dir, de->d_name);
    ps_graph g;
    ps_diag d;
    ps_diag_init (&d, path);
    int rc = ps_import_graph_file (&g, path, NULL, &d);
    if (rc < 0)
      ps_diag_print (&d, stderr);
    assert_int_equal (rc, 0);
    ps_diag_free (&d);
    uint32_t pins = 1;
    for (uint32_t v = 0; v < g.n_nodes; v++)
      if (g.nodes[v].stream >= (int32_t) pins)
        pins = (uint32_t) g.nodes[v].stream + 1;
    plan_and_check (&g, pins);
    ps_graph_free (&g);
    n++;
  }
  closedir (dh);
  assert_true (n >= 3);
}

/* Generated graphs with events, barriers, conditionals and pins. */
static void
core_verify_generated_graphs (void **state)
{
  (void) state;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint64_t seed = 1; seed <= 2; seed++) {
      ps_gen_options o;
      ps_gen_options_init (&o);
      o.shape = (ps_gen_shape) shape;
      o.nodes = 1500;
      o.seed = seed;
      o.events = o.barriers = o.conditionals = o.pins = true;
      o.pin_streams = 2;
      char *text = NULL;
      size_t len = 0;
      FILE *f = open_memstream (&text, &len);
      assert_non_null (f);
      assert_int_equal (ps_gen_write (&o, f), 0);
      fclose (f);
      ps_graph g;
      load (&g, text, len, "gen.json");
      free (text);
      plan_and_check (&g, 2);
      ps_graph_free (&g);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_verify_event_orders_streams),
    cmocka_unit_test (core_verify_dropped_wait),
    cmocka_unit_test (core_verify_dropped_record),
    cmocka_unit_test (core_verify_wait_before_record),
    cmocka_unit_test (core_verify_record_before_producer),
    cmocka_unit_test (core_verify_transitive_through_third_stream),
    cmocka_unit_test (core_verify_node_missing_or_twice),
    cmocka_unit_test (core_verify_pins_and_stream_limit),
    cmocka_unit_test (core_verify_shared_bytes_in_ordered_phases),
    cmocka_unit_test (core_verify_shared_bytes_used_concurrently),
    cmocka_unit_test (core_verify_shared_bytes_same_step),
    cmocka_unit_test (core_verify_many_buffers_share_one_slot),
    cmocka_unit_test (core_verify_user_events_and_fusion),
    cmocka_unit_test (core_verify_counts_past_max_reports),
    cmocka_unit_test (core_verify_simple_plan),
    cmocka_unit_test (core_verify_pin_error),
    cmocka_unit_test (core_verify_simple_plan_reuses_records),
    cmocka_unit_test (core_verify_random_plans_match_brute_force),
    cmocka_unit_test (core_verify_random_pools_match_brute_force),
    cmocka_unit_test (core_verify_plan_json),
    cmocka_unit_test (core_verify_plan_text),
    cmocka_unit_test (core_verify_large_layered_plan),
    cmocka_unit_test (core_verify_loaded_mlp),
    cmocka_unit_test (core_verify_examples),
    cmocka_unit_test (core_verify_generated_graphs),
  };
  return cmocka_run_group_tests_name ("/core/verify", tests, NULL, NULL);
}
