/* test-trace.c: Chrome trace export and import: exported traces of
 * generated graphs are valid JSON with no overlapping slices on a thread
 * and bound flow arrows; every real trace in data/real imports with its
 * streams, GPU work and stream waits; the critical path of HTA's
 * simple_add trace agrees with HTA's own; planscope's traces read back;
 * broken input is reported, not crashed on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ps-exec-trace.h"
#include "ps-file.h"
#include "ps-import.h"
#include "ps-json.h"
#include "ps-test-data.h"
#include "ps-test-sim.h"
#include "ps-timeline-output.h"
#include "ps-trace-export.h"
#include "ps-trace-import.h"
#include "import/trace/ps-trace-private.h"

/* A file of ../shared/data/real (ps-test-data.h). */
static const char *
real_path (const char *rel)
{
  static char buf[4096];
  snprintf (buf, sizeof buf, "real/%s", rel);
  return ps_test_data (buf);
}

/* ---- export ---- */

typedef struct {
  double ts, end;
} slice;

typedef struct {
  long long pid, tid;
  slice *v;
  size_t n, cap;
} thread_slices;

typedef struct {
  thread_slices t[256];
  size_t n_threads;
  long long named[256][2];
  size_t n_named;
  struct {
    long long id, pid, tid;
    double ts;
    char ph;
  } flows[4096];
  size_t n_flows;
} trace_facts;

static thread_slices *
thread_of (trace_facts *f, long long pid, long long tid)
{
  for (size_t i = 0; i < f->n_threads; i++)
    if (f->t[i].pid == pid && f->t[i].tid == tid)
      return &f->t[i];
  assert_true (f->n_threads < 256);
  thread_slices *t = &f->t[f->n_threads++];
  memset (t, 0, sizeof *t);
  t->pid = pid;
  t->tid = tid;
  return t;
}

static int
cmp_slice (const void *a, const void *b)
{
  const slice *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Parses an exported trace with the strict reader and collects slices,
 * thread names and flow events. */
static void
read_trace (const char *text, size_t len, trace_facts *f)
{
  memset (f, 0, sizeof *f);
  ps_json_reader r;
  assert_int_equal (ps_json_init_mem (&r, text, len), 0);
  ps_json_token t;
  int depth_events = -1;
  while ((t = ps_json_next (&r)) != PS_JSON_EOF) {
    assert_int_not_equal (t, PS_JSON_ERROR);
    if (t == PS_JSON_KEY && !strcmp (r.str, "traceEvents"))
      depth_events = r.depth + 1;
    if (t != PS_JSON_OBJECT_BEGIN || r.depth != depth_events + 1)
      continue;
    char ph[4] = "", name[64] = "";
    long long pid = -1, tid = -1, id = -1;
    double ts = -1, dur = -1;
    while ((t = ps_json_next (&r)) != PS_JSON_OBJECT_END) {
      assert_int_equal (t, PS_JSON_KEY);
      char key[16];
      snprintf (key, sizeof key, "%s", r.str);
      t = ps_json_next (&r);
      assert_int_not_equal (t, PS_JSON_ERROR);
      if (!strcmp (key, "ph"))
        snprintf (ph, sizeof ph, "%s", r.str);
      else if (!strcmp (key, "name"))
        snprintf (name, sizeof name, "%s", r.str);
      else if (!strcmp (key, "pid"))
        pid = r.i64;
      else if (!strcmp (key, "tid"))
        tid = r.i64;
      else if (!strcmp (key, "id"))
        id = r.i64;
      else if (!strcmp (key, "ts"))
        ts = r.num;
      else if (!strcmp (key, "dur"))
        dur = r.num;
      assert_int_equal (ps_json_skip_current (&r), 0);
    }
    if (!strcmp (ph, "X")) {
      assert_true (ts >= 0 && dur >= 0);
      thread_slices *th = thread_of (f, pid, tid);
      if (th->n == th->cap) {
        th->cap = th->cap ? th->cap * 2 : 64;
        th->v = realloc (th->v, th->cap * sizeof *th->v);
      }
      th->v[th->n++] = (slice) { ts, ts + dur };
    } else if (!strcmp (ph, "M") && !strcmp (name, "thread_name")) {
      assert_true (f->n_named < 256);
      f->named[f->n_named][0] = pid;
      f->named[f->n_named][1] = tid;
      f->n_named++;
    } else if (!strcmp (ph, "s") || !strcmp (ph, "f")) {
      assert_true (f->n_flows < 4096);
      f->flows[f->n_flows].id = id;
      f->flows[f->n_flows].pid = pid;
      f->flows[f->n_flows].tid = tid;
      f->flows[f->n_flows].ts = ts;
      f->flows[f->n_flows].ph = ph[0];
      f->n_flows++;
    }
  }
  ps_json_close (&r);
}

static void
facts_free (trace_facts *f)
{
  for (size_t i = 0; i < f->n_threads; i++)
    free (f->t[i].v);
}

/* What Perfetto needs: named threads, no overlapping slices on a thread,
 * every flow a start and a finish, each inside a slice of its thread. */
static void
check_trace (trace_facts *f)
{
  for (size_t i = 0; i < f->n_threads; i++) {
    thread_slices *th = &f->t[i];
    bool named = false;
    for (size_t k = 0; k < f->n_named; k++)
      named |= f->named[k][0] == th->pid && f->named[k][1] == th->tid;
    assert_true (named);
    qsort (th->v, th->n, sizeof *th->v, cmp_slice);
    for (size_t k = 1; k < th->n; k++)
      if (th->v[k].ts < th->v[k - 1].end - 1e-9)
        fail_msg ("overlapping slices on tid %lld at %f", th->tid, th->v[k].ts);
  }
  for (size_t i = 0; i < f->n_flows; i++) {
    size_t starts = 0, ends = 0;
    for (size_t k = 0; k < f->n_flows; k++)
      if (f->flows[k].id == f->flows[i].id) {
        starts += f->flows[k].ph == 's';
        ends += f->flows[k].ph == 'f';
      }
    assert_int_equal (starts, 1);
    assert_int_equal (ends, 1);
    thread_slices *th = thread_of (f, f->flows[i].pid, f->flows[i].tid);
    bool inside = false;
    for (size_t k = 0; k < th->n; k++)
      inside |= th->v[k].ts <= f->flows[i].ts && f->flows[i].ts <= th->v[k].end;
    assert_true (inside);
  }
}

static char *
export_text (const ps_timeline *tl, const ps_diagnosis *dg, size_t *len)
{
  char *text = NULL;
  FILE *f = open_memstream (&text, len);
  assert_int_equal (ps_trace_write (tl, dg, f), 0);
  fclose (f);
  return text;
}

static void
core_trace_export_generated_is_valid (void **state)
{
  (void) state;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint32_t streams = 1; streams <= 4; streams *= 2) {
      ps_graph g;
      ts_gen (&g, (ps_gen_shape) shape, 250, 3, streams < 2 ? 1 : 2);
      ps_plan p;
      ps_timeline tl;
      ts_simulate (&g, streams, true, &p, &tl);
      ps_diagnosis dg;
      assert_int_equal (ps_diagnose (&dg, &tl), 0);
      size_t len;
      char *text = export_text (&tl, &dg, &len);
      trace_facts *f = malloc (sizeof *f);
      read_trace (text, len, f);
      check_trace (f);
      size_t slices = 0;
      for (size_t i = 0; i < f->n_threads; i++)
        slices += f->t[i].n;
      /* Every span and every stall is a slice; every flow with both ends
       * known is an arrow. */
      assert_int_equal (slices, tl.n_spans + tl.n_stalls);
      if (tl.n_stalls)
        assert_true (f->n_flows >= 2 * tl.n_stalls);
      assert_non_null (strstr (text, "\"critical\": 1"));
      facts_free (f);
      free (f);
      free (text);
      ps_diagnosis_free (&dg);
      ps_timeline_free (&tl);
      ps_plan_free (&p);
      ps_graph_free (&g);
    }
}

/* Every example's simulation exports a valid trace and timeline
 * document. */
static void
core_trace_examples_export (void **state)
{
  (void) state;
  char dir[4096];
  snprintf (dir, sizeof dir, "%s/data/examples", ts_source_root ());
  DIR *d = opendir (dir);
  assert_non_null (d);
  struct dirent *e;
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
    assert_int_equal (ps_import_graph_file (&g, path, NULL, &diag), 0);
    ps_diag_free (&diag);
    ps_plan p;
    ps_timeline tl;
    ts_simulate (&g, 4, true, &p, &tl);
    ps_diagnosis dg;
    assert_int_equal (ps_diagnose (&dg, &tl), 0);
    size_t len;
    char *text = export_text (&tl, &dg, &len);
    trace_facts *f = malloc (sizeof *f);
    read_trace (text, len, f);
    check_trace (f);
    facts_free (f);
    free (f);
    free (text);
    text = NULL;
    FILE *out = open_memstream (&text, &len);
    assert_int_equal (ps_timeline_write_json (&tl, &dg, out), 0);
    fclose (out);
    ps_json_reader r;
    ps_json_init_mem (&r, text, len);
    ps_json_token t;
    while ((t = ps_json_next (&r)) != PS_JSON_EOF)
      assert_int_not_equal (t, PS_JSON_ERROR);
    ps_json_close (&r);
    free (text);
    ps_diagnosis_free (&dg);
    ps_timeline_free (&tl);
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
  closedir (d);
}

/* planscope's own trace reads back as the same timeline. */
static void
core_trace_roundtrip (void **state)
{
  (void) state;
  ps_graph g;
  ts_gen (&g, PS_GEN_LAYERED, 300, 5, 2);
  ps_plan p;
  ps_timeline tl;
  ts_simulate (&g, 4, true, &p, &tl);
  assert_true (tl.n_stalls > 0);
  size_t len;
  char *text = export_text (&tl, NULL, &len);
  ps_timeline back;
  ps_timeline_init (&back, PS_TL_IMPORTED);
  ps_diag d;
  ps_diag_init (&d, "own.json");
  ps_trace_stats st;
  assert_int_equal (ps_trace_import_mem (&back, text, len, &st, &d), 0);
  assert_int_equal (back.n_spans, tl.n_spans);
  assert_int_equal (back.n_streams, tl.n_streams);
  assert_int_equal (back.n_stalls, tl.n_stalls);
  assert_string_equal (back.device, "h200");
  /* Times come back to the nanosecond, shifted to the first work. */
  double first = INFINITY;
  for (uint32_t i = 0; i < tl.n_spans; i++)
    first = fmin (first, tl.spans[i].start_ns);
  assert_true (fabs (back.makespan_ns - (tl.makespan_ns - first)) < 2);
  for (uint32_t i = 0; i < back.n_stalls; i++)
    assert_true (back.stalls[i].waiting_for != PS_NONE);
  ps_diag_free (&d);
  ps_timeline_free (&back);
  free (text);
  ps_timeline_free (&tl);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* ---- import of real traces ---- */

typedef struct {
  const char *file;
  uint32_t kernels, memcpys, memsets, stream_waits, stalls;
  int64_t streams[4];
} expected;

static const expected real_traces[] = {
  { "hta/critical_path_cuda_event_sync_event_sync_trace.json.gz", 4, 1, 0, 0, 0, { 7, -1 } },
  { "hta/critical_path_cuda_event_sync_multi_stream_event_sync_trace.json.gz", 3, 0, 3, 1, 0,
    { 20, 24, 28, -1 } },
  { "hta/critical_path_end_to_end_simple_add_output_overlaid_critical_path_trace.json.gz", 79,
    16, 3, 20, 2, { 7, 20, -1 } },
  { "hta/critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz", 79, 16, 3,
    20, 2, { 7, 20, -1 } },
  { "hta/trace_compare_base_base.json.gz", 6, 6, 6, 0, 0, { 7, 16, -1 } },
  { "hta/trace_compare_test_test.json.gz", 5, 6, 6, 0, 0, { 7, 16, -1 } },
  { "hta/triton_example_triton_example.json.gz", 1, 0, 0, 0, 0, { 7, -1 } },
  { "kineto/after_fix_trace.json", 1, 0, 0, 1, 0, { 1, -1 } },
  { "kineto/before_fix_trace.json", 1, 0, 0, 1, 0, { 1, -1 } },
};

static void
core_trace_import_real (void **state)
{
  (void) state;
  for (size_t i = 0; i < sizeof real_traces / sizeof real_traces[0]; i++) {
    const expected *e = &real_traces[i];
    const char *path = real_path (e->file);
    ps_timeline tl;
    ps_timeline_init (&tl, PS_TL_IMPORTED);
    ps_diag d;
    ps_diag_init (&d, path);
    ps_trace_stats st;
    int rc = ps_trace_import_file (&tl, path, &st, &d);
    ps_diag_print (&d, stderr);
    assert_int_equal (rc, 0);
    assert_int_equal (st.kernels, e->kernels);
    assert_int_equal (st.memcpys, e->memcpys);
    assert_int_equal (st.memsets, e->memsets);
    assert_int_equal (st.stream_waits, e->stream_waits);
    assert_int_equal (tl.event_waits, e->stream_waits);
    assert_int_equal (tl.n_spans, e->kernels + e->memcpys + e->memsets);
    assert_int_equal (tl.n_stalls, e->stalls);
    assert_int_equal (tl.source, PS_TL_IMPORTED);
    /* Every stream with work is found; -1 and 4294967295 are not streams. */
    for (int k = 0; k < 4 && e->streams[k] >= 0; k++) {
      bool found = false;
      for (uint32_t q = 0; q < tl.n_streams; q++)
        found |= tl.streams[q].id == e->streams[k];
      assert_true (found);
    }
    for (uint32_t q = 0; q < tl.n_streams; q++)
      assert_true (tl.streams[q].id >= 0 && tl.streams[q].id != 4294967295LL);
    ps_diagnosis dg;
    assert_int_equal (ps_diagnose (&dg, &tl), 0);
    assert_true (dg.n_critical > 0);
    ts_check_path_diagnosis (&tl, &dg); /* bounds inferred from the trace */
    for (uint32_t q = 0; q < tl.n_streams; q++) {
      const ps_stream_stats *s = &dg.streams[q];
      assert_true (fabs (s->busy_ns + s->stalled_ns + s->idle_ns - tl.makespan_ns)
                   <= 1e-6 * tl.makespan_ns + 1e-6);
    }
    /* Its export is a valid trace too. */
    size_t len;
    char *text = export_text (&tl, &dg, &len);
    trace_facts *f = malloc (sizeof *f);
    read_trace (text, len, f);
    check_trace (f);
    facts_free (f);
    free (f);
    free (text);
    ps_diagnosis_free (&dg);
    ps_diag_free (&d);
    ps_timeline_free (&tl);
  }
}

/* simple_add: stream 7 waits on stream 20 twice, the first time 116 us
 * for the FFT that stream 20 was still running. */
static void
core_trace_stall_found (void **state)
{
  (void) state;
  const char *path = real_path (real_traces[3].file);
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps_trace_import_file (&tl, path, NULL, &d), 0);
  assert_int_equal (tl.n_stalls, 2);
  const ps_stall *s = &tl.stalls[0];
  if (s->start_ns > tl.stalls[1].start_ns)
    s = &tl.stalls[1];
  assert_int_equal (tl.streams[s->stream].id, 7);
  assert_int_equal (tl.streams[s->on_stream].id, 20);
  assert_true (fabs ((s->end_ns - s->start_ns) - 116000) < 1);
  assert_non_null (strstr (ps_timeline_span_name (&tl, s->waiting_for), "fft2d_c2r_32x32"));
  assert_int_equal (s->event, 1);
  ps_diag_free (&d);
  ps_timeline_free (&tl);
}

/* Correlation ids of the GPU work HTA marked critical ("critical" in
 * args) in its overlaid output. */
static size_t
hta_critical (const char *path, int64_t *out, size_t cap)
{
  gzFile gz = gzopen (path, "rb");
  assert_non_null (gz);
  size_t size = 0, cap_b = 1 << 20;
  char *buf = malloc (cap_b);
  int got;
  while ((got = gzread (gz, buf + size, (unsigned) (cap_b - size))) > 0) {
    size += (size_t) got;
    if (size == cap_b)
      buf = realloc (buf, cap_b *= 2);
  }
  gzclose (gz);
  ps_json_reader r;
  ps_json_init_mem (&r, buf, size);
  size_t n = 0;
  ps_json_token t;
  while ((t = ps_json_next (&r)) != PS_JSON_EOF) {
    assert_int_not_equal (t, PS_JSON_ERROR);
    if (t != PS_JSON_KEY || strcmp (r.str, "cat") != 0)
      continue;
    /* Events hold "cat" before "args" in these files. */
    ps_json_next (&r);
    bool gpu = !strcmp (r.str, "kernel") || !strcmp (r.str, "gpu_memcpy")
               || !strcmp (r.str, "gpu_memset");
    if (!gpu)
      continue;
    int64_t corr = -1;
    bool critical = false;
    int depth = r.depth;
    while ((t = ps_json_next (&r)) != PS_JSON_OBJECT_END || r.depth >= depth) {
      if (t == PS_JSON_KEY && !strcmp (r.str, "correlation")) {
        ps_json_next (&r);
        corr = r.i64;
      } else if (t == PS_JSON_KEY && !strcmp (r.str, "critical")) {
        ps_json_next (&r);
        critical = r.token == PS_JSON_TRUE || (r.token == PS_JSON_NUMBER && r.num != 0);
      }
    }
    if (critical && n < cap)
      out[n++] = corr;
  }
  ps_json_close (&r);
  free (buf);
  return n;
}

static void
core_trace_critical_path_agrees_with_hta (void **state)
{
  (void) state;
  int64_t hta[256];
  size_t n_hta = hta_critical (real_path (real_traces[2].file), hta, 256);
  assert_true (n_hta >= 10);

  /* Ours, from the trace HTA analysed. */
  const char *path = real_path (real_traces[3].file);
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps_trace_import_file (&tl, path, NULL, &d), 0);
  ps_diagnosis dg;
  assert_int_equal (ps_diagnose (&dg, &tl), 0);
  size_t both = 0;
  for (size_t i = 0; i < n_hta; i++)
    for (uint32_t k = 0; k < dg.n_critical; k++)
      if (tl.spans[dg.critical[k]].correlation == (uint64_t) hta[i]) {
        both++;
        break;
      }
  double recall = (double) both / (double) n_hta;
  double precision = dg.n_critical ? (double) both / dg.n_critical : 0;
  printf ("critical path vs HTA (simple_add): %zu of HTA's %zu critical GPU events on ours "
          "(%.0f%%); %zu of our %u are HTA's (%.0f%%)\n",
          both, n_hta, 100 * recall, both, dg.n_critical, 100 * precision);
  assert_true (recall >= 0.9);
  assert_true (precision >= 0.9);
  ps_diagnosis_free (&dg);
  ps_diag_free (&d);
  ps_timeline_free (&tl);
}

/* ---- hostile and odd input ---- */

static int
import_text (const char *text, ps_timeline *tl, ps_diag *d)
{
  ps_timeline_init (tl, PS_TL_IMPORTED);
  ps_diag_init (d, "odd.json");
  return ps_trace_import_mem (tl, text, strlen (text), NULL, d);
}

static void
core_trace_import_odd_input (void **state)
{
  (void) state;
  ps_timeline tl;
  ps_diag d;
  /* A bare array of events; missing fields; streams given as -1 and
   * 4294967295; tid standing in for a missing args.stream; strings where
   * numbers belong. */
  static const char odd[] =
    "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 10, \"dur\": 5, "
    "\"pid\": 0, \"tid\": 3},\n"
    " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no time\", \"pid\": 0, \"tid\": 3},\n"
    " {\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 20, \"args\": {\"stream\": -1}},\n"
    " {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"ts\": 20, \"args\": {\"stream\": 4294967295}},\n"
    " {\"ph\": \"X\", \"cat\": \"Memcpy\", \"ts\": \"soon\", \"tid\": 3},\n"
    " {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"ts\": 30, \"dur\": -4, \"pid\": \"GPU\", "
    "\"args\": {\"stream\": 3, \"device\": 1, \"Input Dims\": [[1, 2], []]}},\n"
    " {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"ts\": 25, \"args\": {\"cuda_sync_kind\": "
    "\"Stream Wait Event\", \"stream\": 3, \"wait_on_stream\": 9}},\n"
    " {\"ph\": \"i\", \"name\": \"marker\", \"ts\": 1}, 17, \"text\", null]";
  assert_int_equal (import_text (odd, &tl, &d), 0);
  assert_int_equal (tl.n_spans, 2);
  assert_int_equal (tl.event_waits, 1);
  for (uint32_t q = 0; q < tl.n_streams; q++)
    assert_true (tl.streams[q].id == 3 || tl.streams[q].id == 9);
  ps_diagnosis dg;
  assert_int_equal (ps_diagnose (&dg, &tl), 0);
  ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  ps_diag_free (&d);

  /* Broken JSON: a located error. */
  static const char broken[] = "{\"traceEvents\": [\n  {\"ph\": \"X\",, }]}";
  assert_true (import_text (broken, &tl, &d) < 0);
  assert_true (d.errors >= 1);
  assert_int_equal (d.entries[0].line, 2);
  assert_true (d.entries[0].col > 0);
  ps_timeline_free (&tl);
  ps_diag_free (&d);

  assert_true (import_text ("42", &tl, &d) < 0);
  assert_non_null (strstr (d.entries[0].message, "traceEvents"));
  ps_timeline_free (&tl);
  ps_diag_free (&d);

  /* Deep nesting inside args is refused by the reader, not recursed. */
  size_t deep = 100000;
  char *nest = malloc (2 * deep + 64);
  size_t n = (size_t) sprintf (nest, "[{\"args\": ");
  for (size_t i = 0; i < deep; i++)
    nest[n++] = '[';
  for (size_t i = 0; i < deep; i++)
    nest[n++] = ']';
  strcpy (nest + n, "}]");
  assert_true (import_text (nest, &tl, &d) < 0);
  free (nest);
  ps_timeline_free (&tl);
  ps_diag_free (&d);
}

static void
core_trace_import_truncated_gzip (void **state)
{
  (void) state;
  /* A trace of planscope's own: a generated graph, simulated. */
  ps_graph g;
  ts_gen (&g, PS_GEN_LAYERED, 400, 7, 0);
  ps_plan p;
  ps_timeline tl0;
  ts_simulate (&g, 4, true, &p, &tl0);
  size_t text_len;
  char *text = export_text (&tl0, NULL, &text_len);
  ps_timeline_free (&tl0);
  ps_plan_free (&p);
  ps_graph_free (&g);
  static char buf[1 << 16];
  int got = (int) (text_len < sizeof buf ? text_len : sizeof buf);
  memcpy (buf, text, (size_t) got);
  free (text);
  assert_true (got > 1000);
  char path[] = "/tmp/ps-trace-XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  close (fd);
  /* Compress the first 64 KiB, then cut the compressed file in half. */
  gzFile out = gzopen (path, "wb");
  gzwrite (out, buf, (unsigned) got);
  gzclose (out);
  FILE *f = fopen (path, "rb");
  char *z = malloc (1 << 17);
  size_t zn = fread (z, 1, 1 << 17, f);
  fclose (f);
  f = fopen (path, "wb");
  fwrite (z, 1, zn / 2, f);
  fclose (f);
  free (z);
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag d;
  ps_diag_init (&d, path);
  assert_true (ps_trace_import_file (&tl, path, NULL, &d) < 0);
  assert_true (d.errors >= 1);
  ps_diag_free (&d);
  ps_timeline_free (&tl);
  unlink (path);

  ps_diag_init (&d, "missing.json");
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  assert_int_equal (ps_trace_import_file (&tl, "/nonexistent/trace.json", NULL, &d), PS_EIO);
  ps_diag_free (&d);
  ps_timeline_free (&tl);
}

/* A .gz trace cut short before its CRC and length, or whose CRC is wrong,
 * is refused by every reader of traces (the file reader, the one of data
 * in memory, the graph front door, the execution-trace reader) with one
 * message that says why, not a syntax error at some position first. */
static void
core_trace_import_damaged_gzip (void **state)
{
  (void) state;
  static const struct {
    const char *name, *says;
  } cases[] = {
    { "trace-no-trailer.json.gz", "cannot decompress: the data ends before the end of the gzip "
                                  "stream" },
    { "trace-bad-crc.json.gz", "cannot decompress: incorrect data check" },
  };
  char path[4096];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf (path, sizeof path, "%s/tests/hostile/%s", ts_source_root (), cases[i].name);
    char *data;
    size_t len;
    ps_diag d;
    ps_diag_init (&d, path);
    assert_int_equal (ps_file_read_all (path, 1 << 20, &data, &len, &d), 0);
    ps_diag_free (&d);
    for (int way = 0; way < 4; way++) {
      ps_diag_init (&d, path);
      int rc;
      if (way < 2) {
        ps_timeline tl;
        ps_timeline_init (&tl, PS_TL_IMPORTED);
        rc = way == 0 ? ps_trace_import_file (&tl, path, NULL, &d)
                      : ps_trace_import_mem (&tl, data, len, NULL, &d);
        ps_timeline_free (&tl);
      } else if (way == 2) {
        ps_graph g;
        rc = ps_import_graph_mem (&g, data, len, path, &d);
        ps_graph_free (&g);
      } else {
        ps_exec_trace et;
        rc = ps_exec_trace_read (&et, data, len, &d);
        ps_exec_trace_free (&et);
      }
      if (d.errors != 1 || !strstr (d.entries[0].message, cases[i].says))
        ps_diag_print (&d, stderr);
      assert_int_equal (rc, PS_EIO);
      assert_int_equal (d.errors, 1);
      assert_non_null (strstr (d.entries[0].message, cases[i].says));
      assert_int_equal (d.entries[0].line, 0);
      ps_diag_free (&d);
    }
    free (data);
  }
  /* The same trace intact loads. */
  snprintf (path, sizeof path, "%s/tests/hostile/trace-intact.json.gz", ts_source_root ());
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps_trace_import_file (&tl, path, NULL, &d), 0);
  assert_int_equal (tl.n_spans, 2);
  ps_timeline_free (&tl);
  ps_diag_free (&d);
}

/* A small .gz file that expands past the text limit stops with a located
 * error at the limit, and a trace with more records of a kind than the
 * limit names the kind; the real limits (2 GiB, 16M) are reached the same
 * way through ps__trace_import_file with smaller figures. */
static void
core_trace_import_limits (void **state)
{
  (void) state;
  char path[] = "/tmp/ps-trace-XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  close (fd);
  gzFile out = gzopen (path, "wb9");
  gzputs (out, "{\"traceEvents\": [");
  static char spaces[1 << 16];
  memset (spaces, ' ', sizeof spaces);
  for (int i = 0; i < 64; i++) /* 4 MiB of white space */
    gzwrite (out, spaces, sizeof spaces);
  gzputs (out, "]}");
  gzclose (out);

  ps__trace_limits lim = { 1u << 20, 1000 };
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps__trace_import_file (&tl, path, &lim, NULL, &d), PS_ELIMIT);
  assert_int_equal (d.errors, 1);
  assert_true (d.entries[0].line >= 1);
  assert_non_null (strstr (d.entries[0].message, "larger than 1048576 bytes"));
  ps_diag_free (&d);
  ps_timeline_free (&tl);
  /* Under the limit, the same file is read. */
  lim.max_text = 8u << 20;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag_init (&d, path);
  assert_int_equal (ps__trace_import_file (&tl, path, &lim, NULL, &d), 0);
  ps_diag_free (&d);
  ps_timeline_free (&tl);
  unlink (path);

  /* 1,001 kernels against a limit of 1,000. */
  size_t cap = 200 * 1024, n = 0;
  char *doc = malloc (cap);
  assert_non_null (doc);
  n += (size_t) snprintf (doc + n, cap - n, "{\"traceEvents\": [\n");
  for (int i = 0; i <= 1000; i++)
    n += (size_t) snprintf (doc + n, cap - n,
                            "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                            "\"ts\": %d, \"dur\": 1, \"pid\": 0, \"tid\": 7}\n",
                            i ? "," : "", i * 2);
  n += (size_t) snprintf (doc + n, cap - n, "]}");
  assert_true (n < cap - 1);
  lim.max_records = 1000;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag_init (&d, "many.json");
  assert_int_equal (ps__trace_import_mem (&tl, doc, n, &lim, NULL, &d), PS_ELIMIT);
  assert_int_equal (d.errors, 1);
  assert_int_equal (d.entries[0].line, 1002);
  assert_non_null (strstr (d.entries[0].message, "more than 1000 GPU operations"));
  ps_diag_free (&d);
  ps_timeline_free (&tl);
  lim.max_records = 1001;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag_init (&d, "many.json");
  assert_int_equal (ps__trace_import_mem (&tl, doc, n, &lim, NULL, &d), 0);
  assert_int_equal (tl.n_spans, 1001);
  ps_diag_free (&d);
  ps_timeline_free (&tl);
  free (doc);
}

int
main (int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_trace_export_generated_is_valid),
    cmocka_unit_test (core_trace_examples_export),
    cmocka_unit_test (core_trace_roundtrip),
    cmocka_unit_test (core_trace_import_odd_input),
    cmocka_unit_test (core_trace_import_truncated_gzip),
    cmocka_unit_test (core_trace_import_damaged_gzip),
    cmocka_unit_test (core_trace_import_limits),
  };
  /* Traces of real runs (../shared/data/real). */
  const struct CMUnitTest data_tests[] = {
    cmocka_unit_test (core_trace_import_real),
    cmocka_unit_test (core_trace_stall_found),
    cmocka_unit_test (core_trace_critical_path_agrees_with_hta),
  };
  PS_TEST_MAIN_WITH_DATA (argc, argv, "/core/trace", tests, data_tests, NULL, NULL);
}
