/* test-ui.c: the desktop app under Xvfb: every example opens, the stream
 * count, fusion and per-node choices re-plan and the status line follows,
 * selection is linked and shown in the inspector, exports and screenshots
 * work, and a bad file keeps the current document. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "ps-application.h"
#include "ps-baseline-view.h"
#include "ps-memory-widget.h"
#include "ps-dag-pane.h"
#include "ps-diff.h"
#include "ps-format.h"
#include "ps-gen.h"
#include "ps-test-data.h"
#include "ps-test-trace.h"
#include "ps-json.h"
#include "ps-dag-widget.h"
#include "ps-inspector.h"
#include "ps-session.h"
#include "ps-status-line.h"
#include "ps-timeline-widget.h"
#include "ps-window.h"

static const char *
source_root (void)
{
  const char *root = g_getenv ("PS_SOURCE_ROOT");
#ifdef PS_TEST_SOURCE_ROOT
  if (!root)
    root = PS_TEST_SOURCE_ROOT;
#endif
  return root ? root : ".";
}

static char *
example (const char *name)
{
  return g_build_filename (source_root (), "data", "examples", name, NULL);
}

static char *tmpdir;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop for ms milliseconds, so that frames get drawn. */
static void
pump (guint ms)
{
  gboolean done = FALSE;
  g_timeout_add (ms, set_flag, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

/* Runs the main loop until cond (polled) or the time runs out. */
static gboolean
wait_for (gboolean (*cond) (gpointer), gpointer data, double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * 1e6);
  while (!cond (data))
    {
      if (g_get_monotonic_time () > end)
        return FALSE;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  pump (150);
  return TRUE;
}

static gboolean
session_ready (gpointer data)
{
  return ps_session_get_ready (data);
}

typedef struct {
  gboolean done, ok;
  GError *error;
} Result;

static void
on_opened (GObject *source, GAsyncResult *res, gpointer data)
{
  Result *r = data;
  r->ok = ps_window_open_finish (PS_WINDOW (source), res, &r->error);
  r->done = TRUE;
}

static void
on_exported (GObject *source, GAsyncResult *res, gpointer data)
{
  Result *r = data;
  r->ok = ps_window_export_finish (PS_WINDOW (source), res, &r->error);
  r->done = TRUE;
}

static gboolean
result_done (gpointer data)
{
  return ((Result *) data)->done;
}

static PsWindow *
new_window (void)
{
  PsWindow *win = ps_window_new (NULL);
  gtk_window_set_default_size (GTK_WINDOW (win), 1400, 860);
  gtk_window_present (GTK_WINDOW (win));
  return win;
}

static void
close_window (PsWindow *win)
{
  /* Let the jobs of the session finish before the window goes. */
  wait_for (session_ready, ps_window_get_session (win), 60);
  gtk_window_destroy (GTK_WINDOW (win));
  pump (20);
}

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  *(gboolean *) data = TRUE;
}

static gboolean
flag_set (gpointer data)
{
  return *(gboolean *) data;
}

/* Waits until the window has painted a frame: until then its widgets may
 * still be waiting for their size (slow under sanitizers). */
static void
wait_for_frame (PsWindow *win)
{
  gboolean painted = FALSE;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (win));
  assert_non_null (clock);
  gulong id = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &painted);
  gtk_widget_queue_draw (GTK_WIDGET (win));
  assert_true (wait_for (flag_set, &painted, 60));
  g_signal_handler_disconnect (clock, id);
}

/* Opens path in win and waits until every view is ready and drawn. */
static gboolean
open_and_wait (PsWindow *win, const char *path, GError **error)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  Result r = { 0 };
  ps_window_open (win, file, on_opened, &r);
  assert_true (wait_for (result_done, &r, 60));
  if (!r.ok)
    {
      g_propagate_error (error, r.error);
      return FALSE;
    }
  PsSession *s = ps_window_get_session (win);
  if (!wait_for (session_ready, s, 120))
    fail_msg ("%s never got ready: %s; busy %d (%s)", path, ps_session_format_summary (s),
              ps_session_get_busy (s), ps_session_get_activity (s));
  wait_for_frame (win);
  return TRUE;
}

static const char *
status_text (PsWindow *win)
{
  return ps_status_line_get_text (PS_STATUS_LINE (ps_window_get_part (win, "status-line")));
}

static PsWindow *
open_example (const char *name)
{
  PsWindow *win = new_window ();
  g_autofree char *path = example (name);
  g_autoptr (GError) error = NULL;
  if (!open_and_wait (win, path, &error))
    fail_msg ("%s: %s", name, error->message);
  return win;
}

/* A generated graph in the test folder: shape, nodes and seed, with the
 * events, barriers, conditionals and pins of the default options unless
 * plain.  Returns its path. */
static char *
gen_graph (const char *name, ps_gen_shape shape, uint32_t nodes, uint64_t seed, gboolean plain)
{
  char *path = tmp_path (name);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  ps_gen_options o;
  ps_gen_options_init (&o);
  o.shape = shape;
  o.nodes = nodes;
  o.seed = seed;
  if (plain)
    o.events = o.barriers = o.conditionals = o.pins = false;
  assert_int_equal (ps_gen_write (&o, f), 0);
  assert_int_equal (fclose (f), 0);
  return path;
}

/* Opens a graph file in a new window and waits for every view. */
static PsWindow *
open_path (const char *path)
{
  PsWindow *win = new_window ();
  g_autoptr (GError) error = NULL;
  if (!open_and_wait (win, path, &error))
    fail_msg ("%s: %s", path, error->message);
  return win;
}

/* ---- tests -------------------------------------------------------------- */

static void
ui_examples_open (void **state)
{
  g_autofree char *dir = g_build_filename (source_root (), "data", "examples", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  assert_non_null (d);
  const char *name;
  guint opened = 0;
  while ((name = g_dir_read_name (d)))
    {
      if (!g_str_has_suffix (name, ".json"))
        continue;
      PsWindow *win = open_example (name);
      PsSession *s = ps_window_get_session (win);
      const ps_plan *p = ps_session_get_plan (s);
      assert_non_null (p);
      assert_non_null (ps_session_get_predicted (s));
      const ps_scene *scene = ps_session_get_scene (s);
      assert_non_null (scene);
      assert_true (scene->n_nodes > 0);
      if (!strstr (status_text (win), "Makespan"))
        fail_msg ("%s: status line says %s", name, status_text (win));
      /* Every node of the example has a box to click on. */
      const ps_graph *g = ps_session_get_graph (s);
      for (uint32_t v = 0; v < g->n_nodes; v++)
        assert_int_not_equal (ps_session_node_box (s, v), PS_NONE);
      close_window (win);
      opened++;
    }
  assert_true (opened >= 5);
}

/* A trace opens like a graph: on the streams it ran on, the replay as
 * the prediction, reproducing what was measured. */
static void
ui_trace_opens (void **state)
{
  g_autofree char *path = tmp_path ("small-trace.json");
  assert_true (g_file_set_contents (path, ps_test_trace, -1, NULL));
  PsWindow *win = open_path (path);
  PsSession *s = ps_window_get_session (win);
  const ps_graph *g = ps_session_get_graph (s);
  assert_true (g->measured);
  assert_int_equal (g->n_nodes, 5);
  assert_int_equal (ps_session_get_streams (s), 4);
  const ps_timeline *tl = ps_session_get_predicted (s);
  assert_non_null (tl);
  /* The hand-made trace ran 314 µs from the first op's start to the
   * last one's end; the first op started 6 µs after its launch. */
  assert_float_equal (tl->makespan_ns, 320000, 1);
  assert_non_null (strstr (status_text (win), "streams 4 of 4"));
  /* The trace's own run is the measured one, node by node, and the
   * replay matches it. */
  const ps_timeline *m = ps_session_get_measured (s);
  assert_non_null (m);
  assert_int_equal (m->source, PS_TL_MEASURED);
  assert_int_equal (m->n_spans, 5);
  assert_float_equal (m->makespan_ns, tl->makespan_ns, 1);
  assert_non_null (strstr (status_text (win), "measured"));
  /* The inspector says what the trace recorded of a node. */
  PsInspector *insp = PS_INSPECTOR (ps_window_get_part (win, "inspector"));
  ps_session_select (s, PS_SELECTION_NODE, 0);
  g_autofree char *text = ps_inspector_get_text (insp);
  assert_non_null (strstr (text, "In the trace"));
  assert_non_null (strstr (text, "Stream 7 \xc2\xb7 correlation 1"));
  assert_non_null (strstr (text, "Launched by aten::mm"));
  assert_non_null (strstr (text, "Host launch at 0 ns"));
  assert_null (strstr (text, "Defined at line"));
  close_window (win);
}

/* At the fit the window opens with, the DAG of the bundled examples is
 * drawn with its labels (render draws text from 4.5 px on screen, a zoom
 * of 0.45): boxes sized for more text than they show would shrink the
 * fit below that. */
static void
ui_dag_labels_at_fit (void **state)
{
  static const char *const names[] = { "transformer-block.json", "copy-compute-overlap.json",
                                       "long-kernel-wait.json" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      PsWindow *win = open_example (names[i]);
      PsDagWidget *dag = PS_DAG_WIDGET (ps_window_get_part (win, "dag"));
      double zoom = ps_dag_widget_get_zoom (dag);
      if (!(zoom >= 0.45))
        fail_msg ("%s: the DAG fits at zoom %.3f, too small for its labels", names[i], zoom);
      close_window (win);
    }
}

static gboolean
plan_has_streams (gpointer data)
{
  PsSession *s = data;
  const ps_plan *p = ps_session_get_plan (s);
  return ps_session_get_ready (s) && p && p->options.streams == 1;
}

static void
ui_streams_replan (void **state)
{
  /* Four independent pipelines: the planner uses every stream it gets. */
  PsWindow *win = open_example ("copy-compute-overlap.json");
  PsSession *s = ps_window_get_session (win);
  g_autofree char *before = g_strdup (status_text (win));
  const ps_plan *p = ps_session_get_plan (s);
  assert_true (p->streams_used > 1);
  const ps_scene *layout_before = ps_session_get_scene (s);

  GtkSpinButton *spin = GTK_SPIN_BUTTON (ps_window_get_part (win, "streams"));
  gtk_spin_button_set_value (spin, 1);
  assert_true (wait_for (plan_has_streams, s, 60));
  p = ps_session_get_plan (s);
  assert_int_equal (p->streams_used, 1);
  assert_int_equal (p->n_event_pairs, 0);
  assert_string_not_equal (before, status_text (win));
  assert_non_null (strstr (status_text (win), "streams 1 of 1"));
  /* Same nodes: the DAG layout is kept. */
  assert_ptr_equal (layout_before, ps_session_get_scene (s));
  close_window (win);
}

static gboolean
fusion_off (gpointer data)
{
  PsSession *s = data;
  const ps_plan *p = ps_session_get_plan (s);
  return ps_session_get_ready (s) && p && !p->options.fusion;
}

static void
ui_fusion_toggle (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  const ps_plan *p = ps_session_get_plan (s);
  assert_true (p->kernels_after < p->kernels_before);
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (ps_window_get_part (win, "fusion")), FALSE);
  assert_true (wait_for (fusion_off, s, 60));
  p = ps_session_get_plan (s);
  assert_int_equal (p->kernels_after, p->kernels_before);
  g_autofree char *want = g_strdup_printf ("kernels %u → %u", p->kernels_before,
                                           p->kernels_before);
  assert_non_null (strstr (status_text (win), want));
  close_window (win);
}

static guint
node_named (PsSession *s, const char *name)
{
  const ps_graph *g = ps_session_get_graph (s);
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (g_str_equal (ps_node_name (g, v), name))
      return v;
  fail_msg ("no node %s", name);
  return PS_NONE;
}

/* In a large graph's DAG a straight chain is one box: selecting a node in
 * it says which nodes share the box. */
static void
ui_inspector_box_members (void **state)
{
  g_autofree char *path = gen_graph ("chain.json", PS_GEN_CHAIN, 3000, 1, TRUE);
  PsWindow *win = open_path (path);
  PsSession *s = ps_window_get_session (win);
  const ps_scene *scene = ps_session_get_scene (s);
  assert_non_null (scene);
  guint box = ps_session_node_box (s, 10);
  assert_true (box < scene->n_nodes && scene->nodes[box].count > 1);
  ps_session_select (s, PS_SELECTION_NODE, 10);
  g_autofree char *text = ps_inspector_get_text (PS_INSPECTOR (ps_window_get_part (win,
                                                                                   "inspector")));
  g_autofree char *want = g_strdup_printf ("One box for %u nodes: ", scene->nodes[box].count);
  if (!strstr (text, want))
    fail_msg ("the inspector does not say '%s':\n%s", want, text);
  assert_non_null (strstr (text, ps_node_name (ps_session_get_graph (s), 10)));
  close_window (win);
}

static void
ui_select_inspector (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  PsInspector *insp = PS_INSPECTOR (ps_window_get_part (win, "inspector"));
  guint v = node_named (s, "attention");
  ps_session_select (s, PS_SELECTION_NODE, v);
  g_autofree char *text = ps_inspector_get_text (insp);
  assert_non_null (strstr (text, "attention"));
  assert_non_null (strstr (text, "Step "));
  assert_non_null (strstr (text, "on stream"));
  assert_non_null (strstr (text, "Predicted"));
  assert_non_null (strstr (text, "Reads"));

  /* Clicking the node's span in the timeline selects the node again:
   * select another node first, then click the span's middle. */
  PsTimelineWidget *tl = PS_TIMELINE_WIDGET (ps_window_get_part (win, "timeline"));
  guint span = ps_session_node_span (s, v, FALSE);
  assert_int_not_equal (span, PS_NONE);
  const ps_timeline *pred = ps_session_get_predicted (s);
  double t0, t1;
  ps_timeline_widget_get_range (tl, &t0, &t1);
  double mid = (pred->spans[span].start_ns + pred->spans[span].end_ns) / 2;
  gboolean found = FALSE;
  int width = gtk_widget_get_width (GTK_WIDGET (tl));
  int height = gtk_widget_get_height (GTK_WIDGET (tl));
  for (int y = 0; y < height && !found; y += 4)
    for (int x = 0; x < width && !found; x += 2)
      {
        gboolean m;
        if (ps_timeline_widget_span_at (tl, x, y, &m) == span)
          {
            ps_session_select_span (s, pred, span);
            found = TRUE;
          }
      }
  (void) mid;
  assert_true (found);
  guint sel;
  assert_int_equal (ps_session_get_selection (s, &sel), PS_SELECTION_NODE);
  assert_int_equal (sel, v);

  /* The DAG hit-tests the same node's box. */
  PsDagWidget *dag = PS_DAG_WIDGET (ps_window_get_part (win, "dag"));
  guint box = ps_session_node_box (s, v);
  found = FALSE;
  width = gtk_widget_get_width (GTK_WIDGET (dag));
  height = gtk_widget_get_height (GTK_WIDGET (dag));
  for (int y = 0; y < height && !found; y += 2)
    for (int x = 0; x < width && !found; x += 2)
      found = ps_dag_widget_box_at (dag, x, y) == box;
  assert_true (found);
  close_window (win);
}

static gboolean
node_on_stream1 (gpointer data)
{
  PsSession *s = data;
  const ps_plan *p = ps_session_get_plan (s);
  guint v = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (s), "node"));
  return ps_session_get_ready (s) && p && p->steps[p->node_step[v]].stream == 1;
}

/* Pins transformer-block's ln1_fwd (on stream 0) to stream 1 and waits
 * for the plan; returns the node. */
static guint
pin_ln1_fwd (PsSession *s)
{
  const ps_plan *p = ps_session_get_plan (s);
  guint v = node_named (s, "ln1_fwd");
  assert_int_equal (p->steps[p->node_step[v]].stream, 0);
  g_object_set_data (G_OBJECT (s), "node", GUINT_TO_POINTER (v));
  ps_session_set_node_pin (s, v, 1);
  assert_true (wait_for (node_on_stream1, s, 60));
  return v;
}

static void
ui_whatif_baseline (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  ps_session_pin_baseline (s);
  assert_true (ps_session_has_baseline (s));
  guint v = pin_ln1_fwd (s);
  assert_true (ps_session_node_changed (s, v));
  assert_non_null (strstr (status_text (win), "vs baseline"));

  /* "Do not fuse" splits a fused group. */
  guint q = node_named (s, "q_bias");
  const ps_plan *p = ps_session_get_plan (s);
  assert_true (p->steps[p->node_step[q]].nodes_count > 1);
  ps_session_set_node_no_fuse (s, q, TRUE);
  assert_true (wait_for (session_ready, s, 60));
  p = ps_session_get_plan (s);
  assert_int_equal (p->steps[p->node_step[q]].nodes_count, 1);
  close_window (win);
}

static void
ui_bad_file_keeps_document (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  g_autofree char *title = g_strdup (ps_session_get_title (s));
  g_autofree char *bad = tmp_path ("bad.json");
  const char *text = "{\n  \"format\": \"planscope-graph\",\n  \"version\": 1,\n  \"nodes\": [ 3 ]\n}\n";
  assert_true (g_file_set_contents (bad, text, -1, NULL));
  g_autoptr (GError) error = NULL;
  assert_false (open_and_wait (win, bad, &error));
  assert_non_null (error);
  g_autofree char *prefix = g_strdup_printf ("%s:", bad);
  assert_true (g_str_has_prefix (error->message, prefix));
  assert_non_null (strstr (error->message, ": error: "));
  assert_non_null (ps_window_get_last_error (win));
  assert_string_equal (title, ps_session_get_title (s));
  assert_non_null (ps_session_get_plan (s));
  close_window (win);
}

static void
export_and_check (PsWindow *win, const char *view, const char *format, const char *name,
                  const char *needle)
{
  g_autofree char *path = tmp_path (name);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  Result r = { 0 };
  ps_window_export (win, view, format, file, on_exported, &r);
  assert_true (wait_for (result_done, &r, 120));
  if (!r.ok)
    fail_msg ("export %s %s: %s", view, format, r.error->message);
  g_autofree char *data = NULL;
  gsize len = 0;
  assert_true (g_file_get_contents (path, &data, &len, NULL));
  assert_true (len > 100);
  if (!g_strstr_len (data, (gssize) MIN (len, 4096), needle))
    fail_msg ("%s does not contain %s", name, needle);
}

static void
ui_export (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  export_and_check (win, "dag", "svg", "dag.svg", "<svg");
  export_and_check (win, "plan", "json", "plan.json", "planscope-plan");
  export_and_check (win, "timeline", "png", "timeline.png", "PNG");
  export_and_check (win, "timeline", "trace", "trace.json", "traceEvents");
  export_and_check (win, "dag", "dot", "dag.dot", "digraph");
  close_window (win);
}

/* An export over the file the document came from is refused with the
 * reason, and the file stays as it was. */
static void
ui_export_never_over_input (void **state)
{
  g_autofree char *src = example ("transformer-block.json");
  g_autofree char *text = NULL;
  gsize len = 0;
  assert_true (g_file_get_contents (src, &text, &len, NULL));
  g_autofree char *path = tmp_path ("opened.json");
  assert_true (g_file_set_contents (path, text, (gssize) len, NULL));
  PsWindow *win = new_window ();
  g_autoptr (GError) error = NULL;
  if (!open_and_wait (win, path, &error))
    fail_msg ("%s: %s", path, error->message);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  Result r = { 0 };
  ps_window_export (win, "plan", "json", file, on_exported, &r);
  assert_true (wait_for (result_done, &r, 120));
  assert_false (r.ok);
  assert_non_null (r.error);
  assert_non_null (strstr (r.error->message, "refusing to write"));
  g_error_free (r.error);
  g_autofree char *after = NULL;
  gsize after_len = 0;
  assert_true (g_file_get_contents (path, &after, &after_len, NULL));
  assert_int_equal (after_len, len);
  assert_memory_equal (after, text, len);
  close_window (win);
}

/* Distinct colours of a PNG, and its size. */
static guint
png_colours (const char *path, int *width, int *height)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) tex = gdk_texture_new_from_filename (path, &error);
  if (!tex)
    fail_msg ("%s: %s", path, error->message);
  *width = gdk_texture_get_width (tex);
  *height = gdk_texture_get_height (tex);
  gsize stride = (gsize) *width * 4;
  g_autofree guchar *px = g_malloc (stride * (gsize) *height);
  gdk_texture_download (tex, px, stride);
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  for (gsize i = 0; i < stride * (gsize) *height; i += 4)
    {
      guint32 c = (guint32) px[i] << 16 | (guint32) px[i + 1] << 8 | px[i + 2];
      g_hash_table_add (seen, GUINT_TO_POINTER (c + 1));
    }
  return g_hash_table_size (seen);
}

static void
ui_screenshot_in_process (void **state)
{
  PsWindow *win = open_example ("copy-compute-overlap.json");
  g_autofree char *path = tmp_path ("window.png");
  g_autoptr (GError) error = NULL;
  /* A window still waiting for its size says so; the next frame has it. */
  for (int i = 0; i < 5 && !ps_window_save_png (win, path, &error); i++)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING))
        fail_msg ("%s", error->message);
      g_clear_error (&error);
      wait_for_frame (win);
    }
  assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  int w, h;
  guint colours = png_colours (path, &w, &h);
  assert_int_equal (w, gtk_widget_get_width (GTK_WIDGET (win)));
  assert_int_equal (h, gtk_widget_get_height (GTK_WIDGET (win)));
  assert_true (w >= 1000 && h >= 600);
  /* A window with a drawn DAG and timeline has many colours (text
   * anti-aliasing, stream colours); a blank one has a handful. */
  if (colours <= 100)
    {
      g_autofree char *keep = g_build_filename (g_get_current_dir (), "ui-blank-window.png", NULL);
      g_rename (path, keep);
      fail_msg ("only %u colours in the window (kept as %s)", colours, keep);
    }
  close_window (win);
}

static void
ui_screenshot_command (void **state)
{
  const char *app = g_getenv ("PS_PLANSCOPE");
  assert_non_null (app);
  g_autofree char *out = tmp_path ("cli-shot.png");
  g_autofree char *file = example ("transformer-block.json");
  const char *argv[] = { app, "--screenshot", out, file, NULL };
  int status = -1;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err,
                             &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    fail_msg ("planscope --screenshot failed: %s", err);
  int w, h;
  guint colours = png_colours (out, &w, &h);
  assert_true (w >= 1000 && h >= 600);
  assert_true (colours > 100);

  /* A bad file: exit 1 with the located error. */
  g_autofree char *bad = tmp_path ("bad2.json");
  assert_true (g_file_set_contents (bad, "{\"nodes\": [", -1, NULL));
  g_autofree char *out2 = tmp_path ("never.png");
  const char *argv2[] = { app, "--screenshot", out2, bad, NULL };
  g_free (err);
  err = NULL;
  assert_true (g_spawn_sync (NULL, (char **) argv2, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err,
                             &status, NULL));
  assert_false (g_spawn_check_wait_status (status, NULL));
  assert_non_null (strstr (err, bad));
  assert_false (g_file_test (out2, G_FILE_TEST_EXISTS));
}

typedef struct {
  PsDagPane *pane;
  guint want;
} MatchWait;

static gboolean
match_count_is (gpointer data)
{
  MatchWait *mw = data;
  return ps_dag_pane_get_match_count (mw->pane) == mw->want;
}

/* The first widget of type t below w, depth first. */
static GtkWidget *
find_descendant (GtkWidget *w, GType t)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (w, t))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_descendant (c, t);
      if (found)
        return found;
    }
  return NULL;
}

static void
ui_search (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsDagPane *pane = PS_DAG_PANE (ps_window_get_part (win, "dag-pane"));
  PsSession *s = ps_window_get_session (win);
  /* By node name, by kernel function, by buffer name. */
  assert_true (ps_dag_pane_search (pane, "fc1") >= 2);
  guint sel;
  assert_int_equal (ps_session_get_selection (s, &sel), PS_SELECTION_NODE);
  assert_non_null (strstr (ps_node_name (ps_session_get_graph (s), sel), "fc1"));
  assert_true (ps_dag_pane_search (pane, "flash_attn") >= 1);
  const ps_graph *g = ps_session_get_graph (s);
  assert_true (ps_dag_pane_search (pane, ps_buffer_name (g, 0)) >= 1);
  assert_int_equal (ps_dag_pane_search (pane, "no-such-thing-anywhere"), 0);

  /* Typing searches on a worker thread, ignoring case; the matches land
   * when it ends, and a newer text replaces an older one. */
  guint want = ps_dag_pane_search (pane, "fc1");
  ps_dag_pane_search (pane, "");
  ps_dag_pane_start_search (pane);
  /* The entry of the search bar (a drop-down's popover has one too). */
  GtkWidget *bar = find_descendant (GTK_WIDGET (pane), GTK_TYPE_SEARCH_BAR);
  assert_non_null (bar);
  GtkWidget *entry = find_descendant (bar, GTK_TYPE_SEARCH_ENTRY);
  assert_non_null (entry);
  /* search-changed comes after GtkSearchEntry's typing delay; emitting it
   * at once is what the delay ends in. */
  gtk_editable_set_text (GTK_EDITABLE (entry), "no-such");
  g_signal_emit_by_name (entry, "search-changed");
  gtk_editable_set_text (GTK_EDITABLE (entry), "FC1");
  g_signal_emit_by_name (entry, "search-changed");
  MatchWait mw = { pane, want };
  assert_true (wait_for (match_count_is, &mw, 30));
  pump (20); /* nothing late may replace it */
  assert_int_equal (ps_dag_pane_get_match_count (pane), want);
  close_window (win);
}

static void
ui_zoom_keeps_range (void **state)
{
  PsWindow *win = open_example ("long-kernel-wait.json");
  PsTimelineWidget *tl = PS_TIMELINE_WIDGET (ps_window_get_part (win, "timeline"));
  double a0, a1, b0, b1;
  ps_timeline_widget_get_range (tl, &a0, &a1);
  ps_timeline_widget_zoom (tl, 4);
  ps_timeline_widget_get_range (tl, &b0, &b1);
  assert_true ((b1 - b0) < (a1 - a0) / 3);
  /* The keyboard's actions: "0" shows the whole run again, "+" zooms. */
  assert_true (gtk_widget_activate_action (GTK_WIDGET (tl), "timeline.zoom-fit", NULL));
  ps_timeline_widget_get_range (tl, &b0, &b1);
  assert_true (fabs ((b1 - b0) - (a1 - a0)) < (a1 - a0) * 1e-6);
  assert_true (gtk_widget_activate_action (GTK_WIDGET (tl), "timeline.zoom-in", NULL));
  ps_timeline_widget_get_range (tl, &b0, &b1);
  assert_true ((b1 - b0) < (a1 - a0) * 0.9);

  PsDagWidget *dag = PS_DAG_WIDGET (ps_window_get_part (win, "dag"));
  double z = ps_dag_widget_get_zoom (dag);
  assert_true (z > 0);
  ps_dag_widget_zoom (dag, 2);
  assert_true (ps_dag_widget_get_zoom (dag) > z * 1.5);
  assert_true (gtk_widget_activate_action (GTK_WIDGET (dag), "dag.zoom-fit", NULL));
  pump (100);
  assert_true (fabs (ps_dag_widget_get_zoom (dag) - z) < z * 1e-6);
  close_window (win);
}

/* ---- views that follow the plan -------------------------------------- */

/* The first event controller of type t on widget w. */
static GtkEventController *
controller_of (GtkWidget *w, GType t)
{
  g_autoptr (GListModel) list = gtk_widget_observe_controllers (w);
  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr (GtkEventController) c = g_list_model_get_item (list, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, t))
        return c;
    }
  fail_msg ("no %s on the widget", g_type_name (t));
  return NULL;
}

/* Whether a label below w says text. */
static gboolean
has_label (GtkWidget *w, const char *text)
{
  if (GTK_IS_LABEL (w) && g_str_equal (gtk_label_get_text (GTK_LABEL (w)), text))
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    if (has_label (c, text))
      return TRUE;
  return FALSE;
}

/* The toggle button below w whose label says text. */
static GtkWidget *
toggle_labelled (GtkWidget *w, const char *text)
{
  if (GTK_IS_TOGGLE_BUTTON (w) && has_label (w, text))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = toggle_labelled (c, text);
      if (found)
        return found;
    }
  return NULL;
}

/* A box whose centre is on screen, and where. */
static guint
visible_box (PsDagWidget *dag, const ps_scene *s, double *wx, double *wy)
{
  int width = gtk_widget_get_width (GTK_WIDGET (dag));
  int height = gtk_widget_get_height (GTK_WIDGET (dag));
  for (int y = 4; y < height; y += 3)
    for (int x = 4; x < width; x += 3)
      {
        guint b = ps_dag_widget_box_at (dag, x, y);
        if (b != PS_NONE)
          {
            *wx = x;
            *wy = y;
            return b;
          }
      }
  return PS_NONE;
}

/* Ctrl+wheel zooms about the pointer, where the motion controller left
 * it (GTK 4.8's scroll events have no position): the diagram point and
 * the box under the pointer stay, and the view still shows the graph.
 * The timeline keeps the time under the pointer the same way. */
static void
ui_ctrl_wheel_zoom (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  PsDagWidget *dag = PS_DAG_WIDGET (ps_window_get_part (win, "dag"));
  const ps_scene *scene = ps_session_get_scene (s);
  double x = 0, y = 0;
  guint box = visible_box (dag, scene, &x, &y);
  assert_int_not_equal (box, PS_NONE);
  /* The box's centre, off the widget's centre, so that zooming about the
   * middle would move it. */
  const ps_scene_node *n = &scene->nodes[box];
  double ox, oy, zoom0 = ps_dag_widget_get_zoom (dag);
  ps_dag_widget_to_diagram (dag, 0, 0, &ox, &oy);
  x = (n->x - ox) * zoom0;
  y = (n->y - oy) * zoom0;
  assert_int_equal (ps_dag_widget_box_at (dag, x, y), box);
  g_signal_emit_by_name (controller_of (GTK_WIDGET (dag), GTK_TYPE_EVENT_CONTROLLER_MOTION),
                         "motion", x, y);
  double dx0, dy0, dx1, dy1;
  ps_dag_widget_to_diagram (dag, x, y, &dx0, &dy0);
  double z = ps_dag_widget_get_zoom (dag);
  for (int i = 0; i < 3; i++)
    ps_dag_widget_scroll (dag, 0, -1, GDK_CONTROL_MASK);
  assert_true (ps_dag_widget_get_zoom (dag) > z * 1.4);
  ps_dag_widget_to_diagram (dag, x, y, &dx1, &dy1);
  assert_true (fabs (dx1 - dx0) < 0.5 && fabs (dy1 - dy0) < 0.5);
  assert_int_equal (ps_dag_widget_box_at (dag, x, y), box);
  double vx0, vy0, vx1, vy1;
  ps_dag_widget_get_visible (dag, &vx0, &vy0, &vx1, &vy1);
  assert_true (vx0 < n->x && n->x < vx1 && vy0 < n->y && n->y < vy1);
  /* The scroll controller itself, without modifiers, pans and keeps
   * numbers finite. */
  gboolean handled = FALSE;
  g_signal_emit_by_name (controller_of (GTK_WIDGET (dag), GTK_TYPE_EVENT_CONTROLLER_SCROLL),
                         "scroll", 0.0, 1.0, &handled);
  ps_dag_widget_get_visible (dag, &vx0, &vy0, &vx1, &vy1);
  assert_true (isfinite (vx0) && isfinite (vy1) && vx1 > vx0 && vy1 > vy0);
  wait_for_frame (win);

  PsTimelineWidget *tl = PS_TIMELINE_WIDGET (ps_window_get_part (win, "timeline"));
  int w = gtk_widget_get_width (GTK_WIDGET (tl));
  double px = w * 0.7;
  g_signal_emit_by_name (controller_of (GTK_WIDGET (tl), GTK_TYPE_EVENT_CONTROLLER_MOTION),
                         "motion", px, 40.0);
  double t_before = ps_timeline_widget_time_at (tl, px), a0, a1, b0, b1;
  ps_timeline_widget_get_range (tl, &a0, &a1);
  ps_timeline_widget_scroll (tl, 0, -2, GDK_CONTROL_MASK);
  ps_timeline_widget_get_range (tl, &b0, &b1);
  assert_true (b1 - b0 < (a1 - a0) * 0.8);
  assert_true (fabs (ps_timeline_widget_time_at (tl, px) - t_before) < (b1 - b0) * 1e-3);
  assert_false (ps_session_get_time_view_fitted (s));
  close_window (win);
}

static gboolean
device_is (gpointer data)
{
  PsSession *s = data;
  const ps_plan *p = ps_session_get_plan (s);
  const char *want = g_object_get_data (G_OBJECT (s), "want-device");
  return ps_session_get_ready (s) && p && p->options.device
         && g_ascii_strcasecmp (p->options.device->name, want) == 0;
}

static gboolean
streams_are (gpointer data)
{
  PsSession *s = data;
  const ps_plan *p = ps_session_get_plan (s);
  guint want = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (s), "want-streams"));
  return ps_session_get_ready (s) && p && p->options.streams == want;
}

/* The timeline shows the whole run after a device change (the makespan
 * changes), and keeps a zoom the user made through a re-plan. */
static void
ui_timeline_refits (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  PsTimelineWidget *tl = PS_TIMELINE_WIDGET (ps_window_get_part (win, "timeline"));
  double t0, t1;
  ps_timeline_widget_get_range (tl, &t0, &t1);
  double before = ps_session_get_predicted (s)->makespan_ns;
  assert_true (t0 == 0 && fabs (t1 - before * 1.02) < 1);
  g_object_set_data (G_OBJECT (s), "want-device", (gpointer) "a100");
  ps_session_set_device (s, "a100");
  assert_true (wait_for (device_is, s, 60));
  double after = ps_session_get_predicted (s)->makespan_ns;
  assert_true (fabs (after - before) > before * 0.1);
  ps_timeline_widget_get_range (tl, &t0, &t1);
  assert_true (t0 == 0 && fabs (t1 - after * 1.02) < 1);
  /* The last span ends at the plot's right edge: the whole width. */
  int w = gtk_widget_get_width (GTK_WIDGET (tl));
  assert_true (fabs (ps_timeline_widget_time_at (tl, w - 8) - t1) < (t1 - t0) * 0.01);
  /* A zoom survives a re-plan; "whole run" fits again. */
  ps_timeline_widget_zoom (tl, 3);
  ps_timeline_widget_get_range (tl, &t0, &t1);
  g_object_set_data (G_OBJECT (s), "want-streams", GUINT_TO_POINTER (2));
  ps_session_set_streams (s, 2);
  assert_true (wait_for (streams_are, s, 60));
  double z0, z1;
  ps_timeline_widget_get_range (tl, &z0, &z1);
  assert_true (fabs (z0 - t0) < 1 && fabs (z1 - t1) < 1);
  ps_timeline_widget_zoom_fit (tl);
  ps_timeline_widget_get_range (tl, &z0, &z1);
  assert_true (fabs (z1 - ps_session_get_predicted (s)->makespan_ns * 1.02) < 1);
  close_window (win);
}

/* The mean luminance (0..255) of a widget as drawn. */
static double
widget_luma (PsWindow *win, GtkWidget *w)
{
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  assert_true (width > 0 && height > 0);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *snap = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snap, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node (snap);
  assert_non_null (node);
  GskRenderer *r = gtk_native_get_renderer (GTK_NATIVE (win));
  g_autoptr (GdkTexture) tex = gsk_renderer_render_texture (r, node,
                                                            &GRAPHENE_RECT_INIT (0, 0, width,
                                                                                 height));
  gsk_render_node_unref (node);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *px = g_malloc (stride * (gsize) height);
  gdk_texture_download (tex, px, stride);
  double sum = 0;
  for (gsize i = 0; i < stride * (gsize) height; i += 4)
    sum += 0.299 * px[i + 2] + 0.587 * px[i + 1] + 0.114 * px[i];
  return sum / ((double) width * height);
}

/* In dark mode the DAG, the timeline and the memory map are dark. */
static void
ui_dark_canvases (void **state)
{
  AdwStyleManager *sm = adw_style_manager_get_default ();
  PsWindow *win = open_example ("copy-compute-overlap.json");
  PsSession *s = ps_window_get_session (win);
  GtkWidget *parts[3] = { ps_window_get_part (win, "dag"), ps_window_get_part (win, "timeline"),
                          ps_window_get_part (win, "memory") };
  AdwViewStack *stack = ADW_VIEW_STACK (ps_window_get_part (win, "stack"));
  double light[3], dark[3];
  for (int pass = 0; pass < 2; pass++)
    {
      adw_style_manager_set_color_scheme (sm, pass ? ADW_COLOR_SCHEME_FORCE_DARK
                                                   : ADW_COLOR_SCHEME_FORCE_LIGHT);
      pump (50);
      assert_int_equal (ps_session_get_dark (s), pass);
      for (int i = 0; i < 3; i++)
        {
          adw_view_stack_set_visible_child_name (stack, i == 2 ? "memory" : "plan");
          wait_for_frame (win);
          (pass ? dark : light)[i] = widget_luma (win, parts[i]);
        }
    }
  adw_style_manager_set_color_scheme (sm, ADW_COLOR_SCHEME_DEFAULT);
  for (int i = 0; i < 3; i++)
    if (!(light[i] > 180 && dark[i] < 90))
      fail_msg ("canvas %d: luminance %.0f light, %.0f dark", i, light[i], dark[i]);
  close_window (win);
}

/* At 1024x700 the window fits, and the Memory page can be reached: the
 * switcher moves from the header to the bottom bar. */
static void
ui_narrow_window (void **state)
{
  PsWindow *win = ps_window_new (NULL);
  gtk_window_set_default_size (GTK_WINDOW (win), 1024, 700);
  gtk_window_present (GTK_WINDOW (win));
  g_autofree char *path = example ("transformer-block.json");
  g_autoptr (GError) error = NULL;
  if (!open_and_wait (win, path, &error))
    fail_msg ("%s", error->message);
  pump (200);
  assert_true (gtk_widget_get_width (GTK_WIDGET (win)) <= 1024);
  assert_true (gtk_widget_get_height (GTK_WIDGET (win)) <= 700);
  GtkWidget *bar = ps_window_get_part (win, "switcher-bar");
  GtkWidget *title = ps_window_get_part (win, "switcher-title");
  gboolean in_header = !adw_view_switcher_title_get_title_visible (ADW_VIEW_SWITCHER_TITLE (title));
  gboolean in_bar = adw_view_switcher_bar_get_reveal (ADW_VIEW_SWITCHER_BAR (bar));
  assert_true (in_header || in_bar);
  /* Press the switcher's Memory button, wherever it is. */
  GtkWidget *button = toggle_labelled (in_bar ? bar : title, "Memory");
  assert_non_null (button);
  assert_true (gtk_widget_is_drawable (button));
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (button), TRUE);
  pump (100);
  AdwViewStack *stack = ADW_VIEW_STACK (ps_window_get_part (win, "stack"));
  assert_string_equal (adw_view_stack_get_visible_child_name (stack), "memory");
  GtkWidget *mem = ps_window_get_part (win, "memory");
  assert_true (gtk_widget_get_width (mem) > 300 && gtk_widget_get_height (mem) > 200);
  close_window (win);
}

static gboolean
plan_cancelled (gpointer data)
{
  return !ps_session_get_busy (data);
}

/* Esc during planning: the status says planning was cancelled, not
 * "Planning…" for ever, and F5 plans again. */
static void
ui_cancel_status (void **state)
{
  PsWindow *win = new_window ();
  PsSession *s = ps_window_get_session (win);
  g_autofree char *big = gen_graph ("cancel-plan.json", PS_GEN_LAYERED, 100000, 1, FALSE);
  g_autoptr (GFile) file = g_file_new_for_path (big);
  Result r = { 0 };
  ps_window_open (win, file, on_opened, &r);
  assert_true (wait_for (result_done, &r, 120));
  assert_true (r.ok);
  /* Loaded; planning and layout run now. */
  assert_true (ps_session_get_busy (s));
  ps_session_cancel (s);
  assert_true (wait_for (plan_cancelled, s, 120));
  if (!ps_session_get_plan (s))
    {
      g_autofree char *text = ps_session_format_summary (s);
      if (!strstr (text, "cancelled"))
        fail_msg ("after cancelling the status says: %s", text);
      assert_null (strstr (text, "Planning…"));
    }
  assert_true (gtk_widget_activate_action (GTK_WIDGET (win), "window.simulate", NULL));
  assert_true (wait_for (session_ready, s, 300));
  assert_non_null (ps_session_get_plan (s));
  assert_non_null (strstr (status_text (win), "Makespan"));
  close_window (win);
}

/* Each kind of wait says its cause in the inspector and the tooltip
 * text, as the CLI does. */
static void
ui_wait_causes (void **state)
{
  /* Each on the stream count (and fusion) whose plan has such a wait.  (A record
   * later than the dependency needs, which plans of the examples no longer
   * have, is /core/sim's core_cause_late_record.) */
  static const struct {
    const char *example, *who, *says;
    guint streams;
    gboolean no_fusion;
  } cases[] = {
    { "transformer-block.json", "k_proj", "the work it depends on, which runs", 0, FALSE },
    { "copy-compute-overlap.json", "filter1", "which it does not depend on", 3, TRUE },
    { "copy-compute-overlap.json", "upload1", "for the copy engine held by upload0", 2, FALSE },
    { "transformer-block.json", "q_bias + q_scale", "for the SMs held by", 0, FALSE },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      PsWindow *win = open_example (cases[c].example);
      PsSession *s = ps_window_get_session (win);
      /* Fusion off before the stream count, so that the plan with that
       * count is the unfused one. */
      if (cases[c].no_fusion)
        ps_session_set_fusion (s, FALSE);
      if (cases[c].streams)
        {
          g_object_set_data (G_OBJECT (s), "want-streams", GUINT_TO_POINTER (cases[c].streams));
          ps_session_set_streams (s, cases[c].streams);
          assert_true (wait_for (streams_are, s, 300));
        }
      const ps_timeline *tl = ps_session_get_predicted (s);
      const ps_diagnosis *dg = ps_session_get_diagnosis (s);
      guint found = PS_NONE;
      for (uint32_t i = 0; i < dg->n_waits && found == PS_NONE; i++)
        {
          char label[256];
          if (dg->waits[i].span >= tl->n_spans)
            continue;
          ps_timeline_span_label (tl, dg->waits[i].span, label, sizeof label);
          if (g_str_equal (label, cases[c].who))
            found = i;
        }
      if (found == PS_NONE)
        fail_msg ("%s: no wait of %s", cases[c].example, cases[c].who);
      ps_session_select (s, PS_SELECTION_WAIT, found);
      g_autofree char *text = ps_inspector_get_text (PS_INSPECTOR (ps_window_get_part (win,
                                                                                       "inspector")));
      if (!strstr (text, cases[c].says))
        fail_msg ("%s %s: the inspector says\n%s", cases[c].example, cases[c].who, text);
      /* The same sentence is the timeline's tooltip. */
      const ps_timeline_chart *ch = ps_session_get_chart (s);
      ps_timeline_hit h = { false, 0, found };
      char tip[1024];
      ps_timeline_chart_hit_text (ch, h, tip, sizeof tip);
      assert_non_null (strstr (text, tip));
      /* Waits are drawn where the pointer finds them. */
      PsTimelineWidget *tw = PS_TIMELINE_WIDGET (ps_window_get_part (win, "timeline"));
      gboolean hit = FALSE;
      int width = gtk_widget_get_width (GTK_WIDGET (tw)), height = gtk_widget_get_height (GTK_WIDGET (tw));
      for (int y = 0; y < height && !hit; y += 2)
        for (int x = 0; x < width && !hit; x += 1)
          hit = ps_timeline_widget_wait_at (tw, x, y) == found;
      assert_true (hit);
      close_window (win);
    }
}

/* After Ctrl+B and a what-if change: the baseline page lists the node
 * with its stream before and after, the ghost of the baseline is in the
 * chart, and undo brings the plan back. */
static void
ui_baseline_table (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  assert_true (gtk_widget_activate_action (GTK_WIDGET (win), "window.pin-baseline", NULL));
  AdwViewStack *stack = ADW_VIEW_STACK (ps_window_get_part (win, "stack"));
  assert_string_equal (adw_view_stack_get_visible_child_name (stack), "baseline");
  guint v = pin_ln1_fwd (s);
  PsBaselineView *bv = PS_BASELINE_VIEW (ps_window_get_part (win, "baseline-view"));
  guint changed = 0;
  assert_true (ps_baseline_view_get_n_rows (bv, &changed) > 0);
  g_autofree char *text = ps_baseline_view_get_text (bv);
  assert_non_null (strstr (text, "Makespan "));
  assert_non_null (strstr (text, "ln1_fwd | 0 → 1 |"));
  assert_non_null (ps_timeline_chart_layers (ps_session_get_chart (s))->ghost);
  /* Undo: the pin goes, the plan is the baseline's again. */
  assert_true (ps_session_can_undo (s));
  assert_true (gtk_widget_activate_action (GTK_WIDGET (win), "window.undo-whatif", NULL));
  assert_true (wait_for (session_ready, s, 60));
  const ps_plan *p = ps_session_get_plan (s);
  assert_int_equal (p->steps[p->node_step[v]].stream, 0);
  assert_false (ps_session_can_undo (s));
  assert_int_equal (ps_baseline_view_get_n_rows (bv, &changed), 0);
  close_window (win);
}

/* Compare with… another file: its run against the current one by kernel
 * name, the same figures `diff` prints; nothing compared node by node; a
 * file that does not load leaves the baseline as it was. */
static gboolean
compare_done (gpointer data)
{
  PsSession *s = data;
  return ps_session_get_ready (s) && ps_session_get_baseline_diff (s) != NULL;
}

static void
ui_compare_with (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  g_autofree char *other = example ("copy-compute-overlap.json");
  g_autoptr (GFile) file = g_file_new_for_path (other);
  ps_window_compare (win, file);
  assert_true (wait_for (compare_done, s, 120));
  assert_string_equal (ps_session_get_baseline_other (s), "copy-compute-overlap");
  const ps_diff *d = ps_session_get_baseline_diff (s);
  /* B is this run: its makespan and op count are the prediction's. */
  const ps_timeline *tl = ps_session_get_predicted (s);
  assert_float_equal (d->makespan_ns[1], tl->makespan_ns, 1e-6);
  const ps_timeline *base = ps_session_get_baseline_timeline (s);
  assert_float_equal (d->makespan_ns[0], base->makespan_ns, 1e-6);
  assert_true (d->n_names > 0);
  for (guint v = 0; v < ps_session_get_graph (s)->n_nodes; v++)
    assert_false (ps_session_node_changed (s, v));
  AdwViewStack *stack = ADW_VIEW_STACK (ps_window_get_part (win, "stack"));
  assert_string_equal (adw_view_stack_get_visible_child_name (stack), "baseline");
  PsBaselineView *bv = PS_BASELINE_VIEW (ps_window_get_part (win, "baseline-view"));
  g_autofree char *text = ps_baseline_view_get_text (bv);
  assert_non_null (strstr (text, "Baseline copy-compute-overlap · makespan "));
  g_autofree char *first = g_strdup_printf ("  %s: %u → %u", d->names[0].name,
                                            d->names[0].count[0], d->names[0].count[1]);
  assert_non_null (strstr (text, first));
  guint changed = 0;
  assert_int_equal (ps_baseline_view_get_n_rows (bv, &changed), 0);
  /* A re-plan of this file is compared again. */
  ps_session_set_streams (s, 1);
  assert_true (wait_for (session_ready, s, 60));
  assert_true (wait_for (compare_done, s, 60));
  d = ps_session_get_baseline_diff (s);
  assert_float_equal (d->makespan_ns[1], ps_session_get_predicted (s)->makespan_ns, 1e-6);
  /* A bad file: an error, the baseline stays. */
  g_autofree char *bad = tmp_path ("bad-compare.json");
  assert_true (g_file_set_contents (bad, "{\"nodes\": 3}", -1, NULL));
  g_autoptr (GFile) badf = g_file_new_for_path (bad);
  ps_window_compare (win, badf);
  assert_true (wait_for (session_ready, s, 60));
  pump (50);
  assert_non_null (ps_window_get_last_error (win));
  assert_string_equal (ps_session_get_baseline_other (s), "copy-compute-overlap");
  close_window (win);
}

/* An aggregate box of a large graph's overview lists its nodes. */
static void
ui_aggregate_box (void **state)
{
  g_autofree char *path = gen_graph ("layered.json", PS_GEN_LAYERED, 20000, 1, FALSE);
  PsWindow *win = open_path (path);
  PsSession *s = ps_window_get_session (win);
  const ps_scene *scene = ps_session_get_scene (s);
  guint box = PS_NONE;
  for (uint32_t b = 0; b < scene->n_nodes && box == PS_NONE; b++)
    if (scene->nodes[b].count > 20)
      box = b;
  assert_int_not_equal (box, PS_NONE);
  ps_session_select_box (s, box);
  guint id;
  assert_int_equal (ps_session_get_selection (s, &id), PS_SELECTION_BOX);
  g_autofree char *text = ps_inspector_get_text (PS_INSPECTOR (ps_window_get_part (win,
                                                                                   "inspector")));
  if (strstr (text, "Nothing selected"))
    fail_msg ("%s", text);
  g_autofree char *want = g_strdup_printf ("one box of the DAG for %u nodes",
                                           scene->nodes[box].count);
  assert_non_null (strstr (text, want));
  uint32_t n;
  const uint32_t *members = ps_scene_box_members (scene, box, &n);
  assert_non_null (strstr (text, ps_node_name (ps_session_get_graph (s), members[0])));
  close_window (win);
}

/* ---- one truth on every screen ---------------------------------------- */

/* A small JSON tree for reading exports back. */
typedef struct Jv {
  ps_json_token t;
  double num;
  char *str;
  GPtrArray *keys;  /* objects */
  GPtrArray *items; /* objects and arrays: struct Jv * */
} Jv;

static void
jv_free (Jv *v)
{
  if (!v)
    return;
  g_free (v->str);
  if (v->keys)
    g_ptr_array_unref (v->keys);
  if (v->items)
    g_ptr_array_unref (v->items);
  g_free (v);
}

static Jv *
jv_read (ps_json_reader *r, ps_json_token t)
{
  Jv *v = g_new0 (Jv, 1);
  v->t = t;
  if (t == PS_JSON_STRING)
    v->str = g_strndup (r->str, r->len);
  else if (t == PS_JSON_NUMBER)
    v->num = r->num;
  else if (t == PS_JSON_OBJECT_BEGIN || t == PS_JSON_ARRAY_BEGIN)
    {
      v->items = g_ptr_array_new_with_free_func ((GDestroyNotify) jv_free);
      if (t == PS_JSON_OBJECT_BEGIN)
        v->keys = g_ptr_array_new_with_free_func (g_free);
      for (;;)
        {
          ps_json_token k = ps_json_next (r);
          if (k == PS_JSON_OBJECT_END || k == PS_JSON_ARRAY_END)
            break;
          assert_int_not_equal (k, PS_JSON_ERROR);
          if (k == PS_JSON_KEY)
            {
              g_ptr_array_add (v->keys, g_strndup (r->str, r->len));
              k = ps_json_next (r);
            }
          g_ptr_array_add (v->items, jv_read (r, k));
        }
    }
  return v;
}

static Jv *
jv_parse_file (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  assert_true (g_file_get_contents (path, &data, &len, NULL));
  ps_json_reader r;
  assert_int_equal (ps_json_init_mem (&r, data, len), 0);
  Jv *v = jv_read (&r, ps_json_next (&r));
  ps_json_close (&r);
  return v;
}

static const Jv *
jv_get (const Jv *o, const char *key)
{
  for (guint i = 0; o && o->keys && i < o->keys->len; i++)
    if (g_str_equal (g_ptr_array_index (o->keys, i), key))
      return g_ptr_array_index (o->items, i);
  return NULL;
}

static const Jv *
jv_at (const Jv *a, guint i)
{
  return a && a->items && i < a->items->len ? g_ptr_array_index (a->items, i) : NULL;
}

static guint
jv_len (const Jv *a)
{
  return a && a->items ? a->items->len : 0;
}

static char *
export_to (PsWindow *win, const char *view, const char *format, const char *name)
{
  char *path = tmp_path (name);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  Result r = { 0 };
  ps_window_export (win, view, format, file, on_exported, &r);
  assert_true (wait_for (result_done, &r, 120));
  if (!r.ok)
    fail_msg ("export %s %s: %s", view, format, r.error->message);
  return path;
}

static guint
node_by_name (GHashTable *names, const char *name)
{
  gpointer v = g_hash_table_lookup (names, name);
  if (!v)
    fail_msg ("no node %s", name);
  return GPOINTER_TO_UINT (v) - 1;
}

/* Every view, the inspector, the status line and every export say the
 * same of every node: its time (ps_figures_node_text), its stream and
 * whether it is on the critical path; buffers' lifetimes agree too. */
static void
check_one_truth (PsWindow *win, const char *what)
{
  PsSession *s = ps_window_get_session (win);
  const ps_figures *f = ps_session_get_figures (s);
  const ps_graph *g = ps_session_get_graph (s);
  const ps_plan *p = ps_session_get_plan (s);
  const ps_scene *scene = ps_session_get_scene (s);
  const ps_timeline_chart *ch = ps_session_get_chart (s);
  assert_non_null (f);
  assert_non_null (scene);
  assert_non_null (ch);
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  for (uint32_t v = 0; v < g->n_nodes; v++)
    g_hash_table_insert (names, (gpointer) ps_node_name (g, v), GUINT_TO_POINTER (v + 1));
  char text[160], want[200];

  /* The DAG scene and the timeline chart. */
  const ps_timeline *tl = ps_timeline_chart_layers (ch)->tl;
  assert_ptr_equal (f->tl, tl);
  for (uint32_t v = 0; v < g->n_nodes; v++)
    {
      ps_figures_node_text (f, g, v, text, sizeof text);
      uint32_t box = ps_session_node_box (s, v), n = 0;
      ps_scene_box_members (scene, box, &n);
      if (n == 1)
        {
          const ps_scene_node *sn = &scene->nodes[box];
          const char *d2 = ps_scene_text (scene, sn->detail2);
          if (text[0] && (!d2 || !g_str_has_prefix (d2, text)))
            fail_msg ("%s: %s: the DAG says '%s', the figures '%s'", what, ps_node_name (g, v),
                      d2, text);
          g_snprintf (want, sizeof want, "stream %d", f->node_stream[v]);
          if (f->node_stream[v] >= 0 && !strstr (d2, want))
            fail_msg ("%s: %s: the DAG says '%s', not %s", what, ps_node_name (g, v), d2, want);
          if (!!(sn->flags & PS_SCENE_CRITICAL) != !!f->node_critical[v])
            fail_msg ("%s: %s: critical in the DAG %d, in the figures %d", what,
                      ps_node_name (g, v), !!(sn->flags & PS_SCENE_CRITICAL),
                      f->node_critical[v]);
        }
      uint32_t x = f->node_span[v];
      if (x == PS_NONE)
        continue;
      const ps_span *sp = &tl->spans[x];
      char d[PS_FORMAT_MAX];
      if (f->node_source[v] == PS_FIGURE_PREDICTED)
        assert_string_equal (ps_format_duration (sp->end_ns - sp->start_ns, d, sizeof d), text);
      assert_int_equal (f->span_critical[x], f->node_critical[v]);
      assert_int_equal (tl->streams[sp->stream].id, f->node_stream[v]);
    }

  /* The inspector, for a sample of nodes. */
  PsInspector *insp = PS_INSPECTOR (ps_window_get_part (win, "inspector"));
  for (uint32_t v = 0; v < g->n_nodes; v += 1 + g->n_nodes / 25)
    {
      ps_session_select (s, PS_SELECTION_NODE, v);
      g_autofree char *it = ps_inspector_get_text (insp);
      ps_figures_node_text (f, g, v, text, sizeof text);
      g_snprintf (want, sizeof want, "Predicted: %s", text);
      if (text[0] && !strstr (it, want))
        fail_msg ("%s: the inspector of %s does not say '%s':\n%s", what, ps_node_name (g, v),
                  want, it);
      if (!!strstr (it, "On the critical path") != !!f->node_critical[v])
        fail_msg ("%s: the inspector of %s is wrong about the critical path", what,
                  ps_node_name (g, v));
      g_snprintf (want, sizeof want, "on stream %d\n", f->node_stream[v]);
      if (f->node_stream[v] >= 0 && !strstr (it, want))
        fail_msg ("%s: the inspector of %s does not say '%s'", what, ps_node_name (g, v), want);
    }
  ps_session_select (s, PS_SELECTION_NONE, 0);

  /* The status line. */
  char m[PS_FORMAT_MAX];
  g_snprintf (want, sizeof want, "Makespan %s ", ps_format_duration (f->makespan_ns, m, sizeof m));
  if (!strstr (status_text (win), want))
    fail_msg ("%s: the status line says '%s', not '%s'", what, status_text (win), want);

  /* The DAG as JSON, DOT and SVG. */
  g_autofree char *dag_json = export_to (win, "dag", "json", "c-dag.json");
  Jv *doc = jv_parse_file (dag_json);
  const Jv *nodes = jv_get (doc, "nodes");
  guint single = 0;
  for (guint i = 0; i < jv_len (nodes); i++)
    {
      const Jv *n = jv_at (nodes, i);
      if (jv_get (n, "count")->num != 1)
        continue;
      single++;
      guint v = node_by_name (names, jv_get (n, "label")->str);
      uint32_t box = ps_session_node_box (s, v);
      const char *d2 = ps_scene_text (scene, scene->nodes[box].detail2);
      const Jv *time = jv_get (n, "time");
      if (!time || !time->str || g_strcmp0 (time->str, d2))
        fail_msg ("%s: %s: the DAG export says '%s', the app '%s'", what, ps_node_name (g, v),
                  time && time->str ? time->str : "?", d2);
      assert_int_equal ((int) jv_get (n, "stream")->num, f->node_stream[v]);
      assert_int_equal (jv_get (n, "critical")->t == PS_JSON_TRUE, !!f->node_critical[v]);
    }
  assert_true (single > 0);
  jv_free (doc);
  g_autofree char *dot_path = export_to (win, "dag", "dot", "c-dag.dot");
  g_autofree char *svg_path = export_to (win, "dag", "svg", "c-dag.svg");
  g_autofree char *dot = NULL, *svg = NULL;
  assert_true (g_file_get_contents (dot_path, &dot, NULL, NULL));
  assert_true (g_file_get_contents (svg_path, &svg, NULL, NULL));
  for (uint32_t v = 0; v < g->n_nodes; v++)
    {
      uint32_t box = ps_session_node_box (s, v), n = 0;
      ps_scene_box_members (scene, box, &n);
      if (n != 1)
        continue;
      const char *d2 = ps_scene_text (scene, scene->nodes[box].detail2);
      const char *tip = ps_scene_text (scene, scene->nodes[box].tooltip);
      if (d2 && !strstr (dot, d2))
        fail_msg ("%s: the DOT export lacks '%s'", what, d2);
      if (tip && !strpbrk (tip, "&<>\"") && !strstr (svg, tip))
        fail_msg ("%s: the SVG export lacks '%s'", what, tip);
    }

  /* The plan document: streams. */
  g_autofree char *plan_path = export_to (win, "plan", "json", "c-plan.json");
  doc = jv_parse_file (plan_path);
  const Jv *steps = jv_get (doc, "steps");
  for (guint i = 0; i < jv_len (steps); i++)
    {
      const Jv *st = jv_at (steps, i), *ns = jv_get (st, "nodes");
      for (guint k = 0; k < jv_len (ns); k++)
        assert_int_equal ((int) jv_get (st, "stream")->num,
                          f->node_stream[node_by_name (names, jv_at (ns, k)->str)]);
    }
  jv_free (doc);

  /* The timeline document: times, streams and the critical path. */
  g_autofree char *tl_path = export_to (win, "timeline", "json", "c-timeline.json");
  doc = jv_parse_file (tl_path);
  const Jv *spans = jv_get (doc, "spans");
  for (guint i = 0; i < jv_len (spans); i++)
    {
      const Jv *sp = jv_at (spans, i), *ns = jv_get (sp, "nodes");
      if (!jv_len (ns))
        continue;
      guint v = node_by_name (names, jv_at (ns, 0)->str);
      assert_true (fabs (jv_get (sp, "start_ns")->num - f->node_start[v]) < 0.51);
      if (!isnan (f->node_ns[v]))
        assert_true (fabs (jv_get (sp, "end_ns")->num - jv_get (sp, "start_ns")->num
                           - f->node_ns[v]) < 1.01);
      assert_int_equal ((int) jv_get (sp, "stream")->num, f->node_stream[v]);
    }
  const Jv *crit = jv_get (doc, "critical_path");
  assert_int_equal (jv_len (crit), f->n_critical);
  for (guint i = 0; i < jv_len (crit); i++)
    assert_true (f->node_critical[node_by_name (names, jv_at (crit, i)->str)]);
  jv_free (doc);

  /* The timeline picture: every span's duration, the critical ones. */
  g_autofree char *tsvg_path = export_to (win, "timeline", "svg", "c-timeline.svg");
  g_autofree char *tsvg = NULL;
  assert_true (g_file_get_contents (tsvg_path, &tsvg, NULL, NULL));
  guint crit_spans = 0, said = 0;
  for (uint32_t x = 0; x < tl->n_spans; x++)
    crit_spans += f->span_critical[x];
  /* A span's tooltip says it; merged short spans say how many. */
  const char *mark = "\non the critical path";
  for (const char *c = tsvg; (c = strstr (c, mark)); c++)
    said += g_str_has_prefix (c + strlen (mark), ": ")
              ? (guint) g_ascii_strtoull (c + strlen (mark) + 2, NULL, 10) : 1;
  if (said != crit_spans)
    fail_msg ("%s: the timeline SVG marks %u spans critical, the figures %u", what, said,
              crit_spans);

  /* The Chrome trace: span durations. */
  g_autofree char *trace_path = export_to (win, "timeline", "trace", "c-trace.json");
  doc = jv_parse_file (trace_path);
  const Jv *events = jv_get (doc, "traceEvents");
  guint slices = 0;
  for (guint i = 0; i < jv_len (events); i++)
    {
      const Jv *e = jv_at (events, i), *ph = jv_get (e, "ph"), *args = jv_get (e, "args");
      const Jv *cat = jv_get (e, "cat");
      if (!ph || g_strcmp0 (ph->str, "X") || !cat || g_str_equal (cat->str, "stall"))
        continue;
      /* A slice is named by its span's label: "a + b" for a fused group. */
      g_auto (GStrv) parts = g_strsplit (jv_get (e, "name")->str, " + ", 2);
      if (!g_hash_table_contains (names, parts[0]))
        continue;
      guint v = node_by_name (names, parts[0]);
      if (isnan (f->node_ns[v]))
        continue;
      slices++;
      assert_true (fabs (jv_get (e, "dur")->num * 1000 - f->node_ns[v]) < 1.01);
      const Jv *c = args ? jv_get (args, "critical") : NULL;
      assert_int_equal (c && c->num != 0, !!f->node_critical[v]);
    }
  assert_true (slices > 0);
  jv_free (doc);

  /* The memory document: lifetimes. */
  g_autofree char *mem_path = export_to (win, "memory", "json", "c-memory.json");
  doc = jv_parse_file (mem_path);
  const Jv *bufs = jv_get (doc, "buffers");
  assert_int_equal (jv_len (bufs), g->n_buffers);
  for (guint b = 0; b < jv_len (bufs); b++)
    {
      const Jv *first = jv_get (jv_at (bufs, b), "first_ns");
      if (isnan (f->buf_first[b]))
        assert_int_equal (first->t, PS_JSON_NULL);
      else
        assert_true (fabs (first->num - f->buf_first[b]) < 0.51
                     && fabs (jv_get (jv_at (bufs, b), "last_ns")->num - f->buf_last[b]) < 0.51);
    }
  jv_free (doc);
  (void) p;
}

static void
consistency_run (const char *path, const char *what)
{
  PsWindow *win = open_path (path);
  PsSession *s = ps_window_get_session (win);
  g_autofree char *a = g_strdup_printf ("%s on %s", what, ps_session_get_device (s));
  check_one_truth (win, a);
  g_object_set_data (G_OBJECT (s), "want-device", (gpointer) "a100");
  ps_session_set_device (s, "a100");
  assert_true (wait_for (device_is, s, 60));
  g_autofree char *b = g_strdup_printf ("%s on a100", what);
  check_one_truth (win, b);
  g_object_set_data (G_OBJECT (s), "want-streams", GUINT_TO_POINTER (2));
  ps_session_set_streams (s, 2);
  assert_true (wait_for (streams_are, s, 60));
  g_autofree char *c = g_strdup_printf ("%s on a100 with 2 streams", what);
  check_one_truth (win, c);
  close_window (win);
}

static void
ui_one_truth (void **state)
{
  g_autofree char *dir = g_build_filename (source_root (), "data", "examples", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint runs = 0;
  while ((name = g_dir_read_name (d)))
    if (g_str_has_suffix (name, ".json"))
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        consistency_run (path, name);
        runs++;
      }
  static const ps_gen_shape shapes[] = { PS_GEN_CHAIN, PS_GEN_FANOUT, PS_GEN_LAYERED,
                                         PS_GEN_TRANSFORMER };
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      g_autofree char *name2 = g_strdup_printf ("shape-%u.json", i);
      g_autofree char *path = gen_graph (name2, shapes[i], 300, 7 + i, FALSE);
      consistency_run (path, name2);
      runs++;
    }
  assert_true (runs >= 10);
}

static const char branch_graph[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"branch\",\n"
  " \"buffers\": [{\"name\": \"flag\", \"bytes\": 4, \"dtype\": \"i32\", \"external\": true},\n"
  "  {\"name\": \"x\", \"bytes\": 1048576, \"external\": true}],\n"
  " \"nodes\": [\n"
  "  {\"name\": \"check\", \"op\": \"conditional\", \"condition\": \"flag\",\n"
  "   \"then\": [\"fast_path\"], \"else\": [\"slow_path\"], \"assume\": \"then\"},\n"
  "  {\"name\": \"fast_path\", \"op\": \"kernel\", \"function\": \"fast\", \"grid\": 64,\n"
  "   \"block\": 128, \"writes\": [\"x\"], \"cost_ns\": 2000},\n"
  "  {\"name\": \"slow_path\", \"op\": \"kernel\", \"function\": \"slow\", \"grid\": 64,\n"
  "   \"block\": 128, \"writes\": [\"x\"], \"cost_ns\": 90000},\n"
  "  {\"name\": \"opaque_kernel\", \"op\": \"kernel\", \"function\": \"imported\", \"grid\": 8,\n"
  "   \"block\": 32}]}\n";

static gboolean
assume_is_both (gpointer data)
{
  PsSession *s = data;
  const ps_graph *g = ps_session_get_graph (s);
  return ps_session_get_ready (s) && g && g->conds[0].assume == PS_ASSUME_BOTH;
}

/* The inspector's assumption control: the drop-down whose list says
 * "Both branches". */
static GtkDropDown *
assume_control (PsInspector *insp)
{
  GtkDropDown *assume = NULL;
  g_autoptr (GPtrArray) drops = g_ptr_array_new ();
  GtkWidget *stack[256];
  int top = 0;
  stack[top++] = GTK_WIDGET (insp);
  while (top > 0)
    {
      GtkWidget *w = stack[--top];
      if (GTK_IS_DROP_DOWN (w))
        g_ptr_array_add (drops, w);
      for (GtkWidget *c = gtk_widget_get_first_child (w); c && top < 256;
           c = gtk_widget_get_next_sibling (c))
        stack[top++] = c;
    }
  for (guint i = 0; i < drops->len && !assume; i++)
    {
      GListModel *m = gtk_drop_down_get_model (g_ptr_array_index (drops, i));
      if (m && GTK_IS_STRING_LIST (m) && g_list_model_get_n_items (m) == 4
          && g_str_equal (gtk_string_list_get_string (GTK_STRING_LIST (m), 1), "Both branches"))
        assume = g_ptr_array_index (drops, i);
    }
  return assume;
}

/* A branch `assume` leaves out says "not run (assume: then)" in the DAG
 * and the inspector, never 0 ns, and the inspector's control flips the
 * assumption; a kernel known only by its launch says "(estimated)"; undo
 * flips it back. */
static void
ui_not_run_and_unknown (void **state)
{
  g_autofree char *path = tmp_path ("branch.json");
  assert_true (g_file_set_contents (path, branch_graph, -1, NULL));
  PsWindow *win = open_path (path);
  PsSession *s = ps_window_get_session (win);
  const ps_scene *scene = ps_session_get_scene (s);
  guint slow = node_named (s, "slow_path"), opaque = node_named (s, "opaque_kernel");
  const char *d2 = ps_scene_text (scene, scene->nodes[ps_session_node_box (s, slow)].detail2);
  assert_true (g_str_has_prefix (d2, "not run (assume: then)"));
  /* Known by its launch alone: estimated from it, and said so. */
  d2 = ps_scene_text (scene, scene->nodes[ps_session_node_box (s, opaque)].detail2);
  assert_non_null (strstr (d2, " (estimated)"));
  PsInspector *insp = PS_INSPECTOR (ps_window_get_part (win, "inspector"));
  ps_session_select (s, PS_SELECTION_NODE, opaque);
  g_autofree char *t1 = ps_inspector_get_text (insp);
  assert_non_null (strstr (t1, "Predicted: "));
  assert_non_null (strstr (t1, " (estimated)"));
  ps_session_select (s, PS_SELECTION_NODE, slow);
  g_autofree char *t2 = ps_inspector_get_text (insp);
  assert_non_null (strstr (t2, "Predicted: not run (assume: then)"));
  /* Its own times: not run, never 0 ns (the critical path it may end
   * holds 0 ns of work, which is another figure). */
  g_auto (GStrv) lines = g_strsplit (t2, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], "Predicted:") || g_str_has_prefix (lines[i], "Measured:"))
      assert_null (strstr (lines[i], "0 ns"));
  /* The assumption control: both branches. */
  GtkDropDown *assume = assume_control (insp);
  assert_non_null (assume);
  assert_true (gtk_widget_get_visible (GTK_WIDGET (assume)));
  gtk_drop_down_set_selected (assume, 1 + PS_ASSUME_BOTH);
  assert_true (wait_for (assume_is_both, s, 60));
  const ps_figures *f = ps_session_get_figures (s);
  assert_int_equal (f->node_source[slow], PS_FIGURE_PREDICTED);
  scene = ps_session_get_scene (s);
  d2 = ps_scene_text (scene, scene->nodes[ps_session_node_box (s, slow)].detail2);
  assert_true (g_str_has_prefix (d2, "90.0 \xc2\xb5s"));
  ps_session_undo (s);
  assert_true (wait_for (session_ready, s, 60));
  f = ps_session_get_figures (s);
  assert_int_equal (f->node_source[slow], PS_FIGURE_NOT_RUN);
  close_window (win);
}

/* A WHILE loop of a CUDA-graph dump: its body graph is its branch, the
 * inspector says how the loop is modelled, and "the else branch" (the
 * loop not entered) takes the body out of the run. */
static const char while_dump[] =
  "digraph dot {\n"
  "subgraph cluster_1 { label=\"graph_1\";\n"
  "\"graph_1_node_0\"[shape=\"record\" label=\"{KERNEL | {ID | 0 | _Z4initPi\\<\\<\\<1024,256,0\\>\\>\\>}}\"];\n"
  "\"graph_1_node_1\"[shape=\"record\" label=\"{CONDITIONAL | {{type | handle} | {WHILE | 0x1}} | "
  "{body | graph_2}}\"];\n"
  "\"graph_1_node_2\"[shape=\"record\" label=\"{KERNEL | {ID | 2 | _Z6finishPi\\<\\<\\<1024,256,0\\>\\>\\>}}\"];\n"
  "\"graph_1_node_0\" -> \"graph_1_node_1\"; \"graph_1_node_1\" -> \"graph_1_node_2\";\n"
  "}\n"
  "subgraph cluster_2 { label=\"graph_2\";\n"
  "\"graph_2_node_0\"[shape=\"record\" label=\"{KERNEL | {ID | 0 | _Z4stepPi\\<\\<\\<65536,256,0\\>\\>\\>}}\"];\n"
  "}\n"
  "}\n";

static gboolean
assume_is_else (gpointer data)
{
  PsSession *s = data;
  const ps_graph *g = ps_session_get_graph (s);
  return ps_session_get_ready (s) && g && g->conds[0].assume == PS_ASSUME_ELSE;
}

static void
ui_dump_while_loop (void **state)
{
  g_autofree char *path = tmp_path ("loop.dot");
  assert_true (g_file_set_contents (path, while_dump, -1, NULL));
  PsWindow *win = open_path (path);
  PsSession *s = ps_window_get_session (win);
  guint loop = node_named (s, "graph_1_node_1"), step = node_named (s, "graph_2_node_0");
  assert_int_equal (ps_session_get_graph (s)->nodes[step].cond, loop);
  PsInspector *insp = PS_INSPECTOR (ps_window_get_part (win, "inspector"));
  ps_session_select (s, PS_SELECTION_NODE, loop);
  g_autofree char *t = ps_inspector_get_text (insp);
  assert_non_null (strstr (t, "while handle 0x1; a loop, modelled as one pass of its body"));
  double once = ps_session_get_figures (s)->makespan_ns;
  GtkDropDown *assume = assume_control (insp);
  assert_non_null (assume);
  assert_true (gtk_widget_get_visible (GTK_WIDGET (assume)));
  gtk_drop_down_set_selected (assume, 1 + PS_ASSUME_ELSE);
  assert_true (wait_for (assume_is_else, s, 60));
  const ps_figures *f = ps_session_get_figures (s);
  assert_int_equal (f->node_source[step], PS_FIGURE_NOT_RUN);
  assert_true (f->makespan_ns + 10000 < once);
  close_window (win);
}

static gboolean
recent_has (gpointer data)
{
  return gtk_recent_manager_has_item (gtk_recent_manager_get_default (), data);
}

static void
ui_recent_files (void **state)
{
  PsWindow *win = open_example ("long-kernel-wait.json");
  g_autofree char *path = example ("long-kernel-wait.json");
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *uri = g_file_get_uri (file);
  assert_true (wait_for (recent_has, uri, 10));
  GtkRecentInfo *info = gtk_recent_manager_lookup_item (gtk_recent_manager_get_default (), uri,
                                                        NULL);
  assert_non_null (info);
  assert_true (gtk_recent_info_has_application (info, "planscope"));
  gtk_recent_info_unref (info);
  close_window (win);
}

/* A big graph loads off the main thread: the window answers at once, and
 * cancelling keeps the current document without an error dialog. */
static void
ui_cancel_load (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  g_autofree char *big = gen_graph ("big.json", PS_GEN_LAYERED, 60000, 1, FALSE);
  g_autoptr (GFile) file = g_file_new_for_path (big);
  Result r = { 0 };
  ps_window_open (win, file, on_opened, &r);
  /* ps_window_open returned while the load still runs. */
  assert_true (ps_session_get_busy (s));
  assert_false (r.done);
  ps_session_cancel (s);
  assert_true (wait_for (result_done, &r, 120));
  assert_false (r.ok);
  assert_true (g_error_matches (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
  g_clear_error (&r.error);
  assert_null (ps_window_get_last_error (win));
  assert_string_equal (ps_session_get_title (s), "transformer-block");
  close_window (win);
}

/* Open A, then B at once: B is what the window shows, whichever load
 * would finish first, and A ends as cancelled (it is not shown, nor is its
 * error).  A small file before a large one (A would finish first and, when
 * the jobs shared one cancellable, cancelled B), and a large one before a
 * small one (A is stopped early).  B gets its own plan and DAG. */
static void
ui_open_supersedes (void **state)
{
  g_autofree char *big = gen_graph ("supersede-big.json", PS_GEN_LAYERED, 60000, 3, FALSE);
  g_autofree char *small = example ("moe-experts.json");
  const char *orders[2][2] = { { small, big }, { big, small } };
  const char *titles[2] = { "layered-60000", "moe-experts" };
  for (int o = 0; o < 2; o++)
    {
      PsWindow *win = open_example ("transformer-block.json");
      PsSession *s = ps_window_get_session (win);
      g_autoptr (GFile) a = g_file_new_for_path (orders[o][0]);
      g_autoptr (GFile) b = g_file_new_for_path (orders[o][1]);
      Result ra = { 0 }, rb = { 0 };
      ps_window_open (win, a, on_opened, &ra);
      ps_window_open (win, b, on_opened, &rb);
      assert_true (wait_for (result_done, &rb, 300));
      assert_true (wait_for (result_done, &ra, 300));
      if (!rb.ok)
        fail_msg ("B was dropped: %s", rb.error->message);
      assert_false (ra.ok);
      assert_true (g_error_matches (ra.error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
      g_clear_error (&ra.error);
      assert_true (wait_for (session_ready, s, 300));
      g_autoptr (GFile) shown = g_object_ref (ps_session_get_file (s));
      assert_true (g_file_equal (shown, b));
      const char *title = ps_session_get_title (s);
      if (!g_str_has_prefix (title, titles[o]))
        fail_msg ("the window shows \"%s\", not B", title);
      assert_non_null (ps_session_get_plan (s));
      assert_non_null (ps_session_get_scene (s));
      assert_null (ps_window_get_last_error (win));
      close_window (win);
    }
}

/* A graph with no edges opens with its DAG laid out (the layout job sorts
 * no empty array: UBSan's qsort (NULL, 0) in the ASan build). */
static void
ui_one_node_graph (void **state)
{
  g_autofree char *path = g_build_filename (source_root (), "tests", "hostile", "one-node.json",
                                            NULL);
  PsWindow *win = open_path (path);
  PsSession *s = ps_window_get_session (win);
  assert_non_null (ps_session_get_scene (s));
  assert_int_equal (ps_session_get_graph (s)->n_nodes, 1);
  close_window (win);
}

#ifdef PS_TEST_FAKE_CUDA
/* A session made in a thread of its own, with that thread's main context:
 * its jobs answer there, and so does the progress of a GPU run, never on
 * the default main context (the main thread's). */
typedef struct {
  const char *path;
  GThread *thread;
  guint progress_here, progress_elsewhere;
  gboolean measured;
  char *error;
} ThreadRun;

static void
on_progress (GObject *obj, GParamSpec *pspec, gpointer data)
{
  ThreadRun *t = data;
  /* A fraction a job posted (a job's start says -1, "unknown"). */
  if (ps_session_get_progress (PS_SESSION (obj)) < 0)
    return;
  if (g_thread_self () == t->thread)
    t->progress_here++;
  else
    t->progress_elsewhere++;
}

static void
on_loaded_in_thread (GObject *source, GAsyncResult *res, gpointer data)
{
  ThreadRun *t = data;
  g_autoptr (GError) error = NULL;
  if (!ps_session_load_finish (PS_SESSION (source), res, &error))
    t->error = g_strdup (error->message);
}

static gpointer
session_thread (gpointer data)
{
  ThreadRun *t = data;
  t->thread = g_thread_self ();
  GMainContext *ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  PsSession *s = ps_session_new ();
  g_signal_connect (s, "notify::progress", G_CALLBACK (on_progress), t);
  g_autoptr (GFile) file = g_file_new_for_path (t->path);
  ps_session_load_async (s, file, NULL, on_loaded_in_thread, t);
  gint64 end = g_get_monotonic_time () + 300 * G_USEC_PER_SEC;
  while (!t->error && !(ps_session_get_ready (s) && ps_session_get_plan (s))
         && g_get_monotonic_time () < end)
    g_main_context_iteration (ctx, TRUE);
  if (!t->error && ps_session_get_plan (s))
    {
      ps_session_run_gpu (s);
      while (!ps_session_get_measured (s) && ps_session_get_busy (s)
             && g_get_monotonic_time () < end)
        g_main_context_iteration (ctx, TRUE);
      t->measured = ps_session_get_measured (s) != NULL;
      /* What is still queued runs here, before the session goes. */
      while (g_main_context_iteration (ctx, FALSE))
        ;
    }
  g_signal_handlers_disconnect_by_data (s, t);
  g_object_unref (s);
  while (g_main_context_iteration (ctx, FALSE))
    ;
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  return NULL;
}

static void
ui_gpu_progress_in_session_context (void **state)
{
  g_autofree char *path = example ("transformer-block.json");
  ThreadRun t = { path, NULL, 0, 0, FALSE, NULL };
  GThread *th = g_thread_new ("session", session_thread, &t);
  g_thread_join (th);
  /* Whatever was posted to the default context would show up now. */
  pump (100);
  if (t.error)
    fail_msg ("%s", t.error);
  assert_true (t.measured);
  assert_true (t.progress_here > 0);
  assert_int_equal (t.progress_elsewhere, 0);
}
#endif

/* The application's own window has the shortcuts window and the about
 * dialog. */
static void
ui_app_window (void **state)
{
  g_autoptr (PsApplication) app = ps_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN
                                                    | G_APPLICATION_NON_UNIQUE);
  assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  PsWindow *win = ps_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (g_action_group_has_action (G_ACTION_GROUP (win), "show-help-overlay"));
  assert_non_null (gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (win)));
  assert_true (g_action_group_has_action (G_ACTION_GROUP (app), "about"));
  g_action_group_activate_action (G_ACTION_GROUP (app), "about", NULL);
  pump (50);
  GtkWindow *about = NULL;
  GListModel *tops = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (tops) && !about; i++)
    {
      g_autoptr (GObject) w = g_list_model_get_item (tops, i);
      if (ADW_IS_ABOUT_WINDOW (w))
        about = GTK_WINDOW (w);
    }
  assert_non_null (about);
  assert_ptr_equal (gtk_window_get_transient_for (about), GTK_WINDOW (win));
  gtk_window_destroy (about);
  gtk_window_destroy (GTK_WINDOW (win));
  pump (50);
}

#ifdef PS_TEST_FAKE_CUDA
static gboolean
gpu_button_ready (gpointer data)
{
  PsWindow *win = data;
  return gtk_widget_get_sensitive (ps_window_get_part (win, "gpu"));
}

static gboolean
measured_ready (gpointer data)
{
  PsSession *s = data;
  return ps_session_get_measured (s) != NULL && ps_session_get_ready (s);
}

/* "Run on GPU" with the fake driver of tests/fake-cuda.c: the measured
 * timeline arrives, the timeline says so, and the inspector shows the
 * measured time next to the predicted one. */
static void
ui_gpu_measured (void **state)
{
  PsWindow *win = open_example ("transformer-block.json");
  PsSession *s = ps_window_get_session (win);
  assert_true (wait_for (gpu_button_ready, win, 30));
  assert_true (gtk_widget_activate_action (GTK_WIDGET (win), "window.run-gpu", NULL));
  if (!wait_for (measured_ready, s, 300))
    fail_msg ("no measured timeline: %s", ps_window_get_last_error (win));
  const ps_timeline *m = ps_session_get_measured (s);
  assert_int_equal (m->source, PS_TL_MEASURED);
  guint v = node_named (s, "attention");
  assert_int_not_equal (ps_session_node_span (s, v, TRUE), PS_NONE);
  ps_session_select (s, PS_SELECTION_NODE, v);
  g_autofree char *text = ps_inspector_get_text (PS_INSPECTOR (ps_window_get_part (win,
                                                                                   "inspector")));
  assert_non_null (strstr (text, "Measured: "));
  assert_null (strstr (text, "no GPU run yet"));
  /* A re-plan makes the measurement stale: it goes. */
  ps_session_set_streams (s, 2);
  assert_true (wait_for (session_ready, s, 60));
  assert_null (ps_session_get_measured (s));
  close_window (win);
}
#endif

/* ---- the third-party files (run with the argument "real-data") ---------- */

/* Every Chrome/Kineto trace and CUDA-graph dump of ../shared/data opens in
 * the app: a trace on the streams it ran on, its replay as the
 * prediction within 1 % of its own run as the measured timeline, a dump
 * planned and drawn; the files that are no trace of CUDA work are
 * refused with the reason and leave the window as it was. */
static void
ui_real_files_open (void **state)
{
  static const char *const dirs[] = { "real/kineto", "real/hta", "real/cudagraph_dot",
                                       "wild/kineto", "wild/other" };
  guint traces = 0, dumps = 0, refused = 0;
  for (guint k = 0; k < G_N_ELEMENTS (dirs); k++)
    {
      g_autofree char *dir = g_strdup (ps_test_data (dirs[k]));
      g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
      assert_non_null (d);
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      const char *name;
      while ((name = g_dir_read_name (d)))
        g_ptr_array_add (names, g_strdup (name));
      g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
      for (guint i = 0; i < names->len; i++)
        {
          name = g_ptr_array_index (names, i);
          g_autofree char *path = g_build_filename (dir, name, NULL);
          PsWindow *win = new_window ();
          g_autoptr (GError) error = NULL;
          if (!open_and_wait (win, path, &error))
            {
              /* Only the files that hold no CUDA GPU work are refused. */
              if (!strstr (error->message, "no GPU kernels")
                  && !strstr (error->message, "execution trace")
                  && !strstr (error->message, "Nsight Systems")
                  && !strstr (error->message, "another accelerator"))
                fail_msg ("%s: %s", name, error->message);
              refused++;
              close_window (win);
              continue;
            }
          PsSession *s = ps_window_get_session (win);
          const ps_graph *g = ps_session_get_graph (s);
          const ps_timeline *tl = ps_session_get_predicted (s);
          assert_non_null (tl);
          assert_non_null (ps_session_get_scene (s));
          if (g->measured)
            {
              const ps_timeline *m = ps_session_get_measured (s);
              assert_non_null (m);
              assert_true (ps_session_get_streams (s) >= ps_graph_pinned_streams (g));
              if (!(fabs (tl->makespan_ns - m->makespan_ns) <= 0.01 * m->makespan_ns))
                fail_msg ("%s: replayed %.0f ns, measured %.0f ns", name, tl->makespan_ns,
                          m->makespan_ns);
              traces++;
            }
          else
            {
              assert_true (g->cuda_graph);
              dumps++;
            }
          close_window (win);
        }
    }
  g_print ("opened %u traces and %u dumps; %u files without CUDA GPU work refused\n", traces,
           dumps, refused);
  assert_true (traces >= 25 && dumps >= 3 && refused >= 4);
}

int
main (int argc, char **argv)
{
  g_setenv ("GTK_A11Y", "none", FALSE);
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
#ifdef PS_TEST_FAKE_CUDA
  /* GPU runs go to the fake driver, never to a real GPU. */
  g_setenv ("PLANSCOPE_LIBCUDA", PS_TEST_FAKE_CUDA, TRUE);
  g_setenv ("PLANSCOPE_LIBCUPTI", PS_TEST_FAKE_CUDA, TRUE);
  g_unsetenv ("PS_NO_GPU");
#else
  g_setenv ("PS_NO_GPU", "1", TRUE);
#endif
  gtk_init ();
  adw_init ();
  tmpdir = g_dir_make_tmp ("planscope-ui-XXXXXX", NULL);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (ui_examples_open),
    cmocka_unit_test (ui_trace_opens),
    cmocka_unit_test (ui_dag_labels_at_fit),
    cmocka_unit_test (ui_streams_replan),
    cmocka_unit_test (ui_fusion_toggle),
    cmocka_unit_test (ui_select_inspector),
    cmocka_unit_test (ui_inspector_box_members),
    cmocka_unit_test (ui_whatif_baseline),
    cmocka_unit_test (ui_bad_file_keeps_document),
    cmocka_unit_test (ui_export),
    cmocka_unit_test (ui_export_never_over_input),
    cmocka_unit_test (ui_screenshot_in_process),
    cmocka_unit_test (ui_screenshot_command),
    cmocka_unit_test (ui_search),
    cmocka_unit_test (ui_zoom_keeps_range),
    cmocka_unit_test (ui_recent_files),
    cmocka_unit_test (ui_cancel_load),
    cmocka_unit_test (ui_open_supersedes),
    cmocka_unit_test (ui_one_node_graph),
    cmocka_unit_test (ui_app_window),
    cmocka_unit_test (ui_ctrl_wheel_zoom),
    cmocka_unit_test (ui_timeline_refits),
    cmocka_unit_test (ui_dark_canvases),
    cmocka_unit_test (ui_narrow_window),
    cmocka_unit_test (ui_cancel_status),
    cmocka_unit_test (ui_wait_causes),
    cmocka_unit_test (ui_baseline_table),
    cmocka_unit_test (ui_compare_with),
    cmocka_unit_test (ui_aggregate_box),
    cmocka_unit_test (ui_one_truth),
    cmocka_unit_test (ui_not_run_and_unknown),
    cmocka_unit_test (ui_dump_while_loop),
#ifdef PS_TEST_FAKE_CUDA
    cmocka_unit_test (ui_gpu_measured),
    cmocka_unit_test (ui_gpu_progress_in_session_context),
#endif
  };
  const struct CMUnitTest data_tests[] = {
    cmocka_unit_test (ui_real_files_open),
  };
  if (g_getenv ("PS_UI_TEST_FILTER"))
    cmocka_set_test_filter (g_getenv ("PS_UI_TEST_FILTER"));
  int r;
  if (argc > 1 && strcmp (argv[1], "real-data") == 0)
    r = ps_test_data_root () ? cmocka_run_group_tests_name ("/ui/real-data", data_tests, NULL, NULL)
                             : (fprintf (stderr, "the third-party data is missing\n"), 1);
  else
    r = cmocka_run_group_tests_name ("/ui", tests, NULL, NULL);
  /* Leave no files behind. */
  g_autoptr (GDir) d = g_dir_open (tmpdir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (tmpdir, name, NULL);
      g_unlink (p);
    }
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return r;
}
