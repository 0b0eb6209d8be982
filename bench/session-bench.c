/* session-bench.c: how fast the app's views follow the plan, measured by
 * driving a PsSession headless and drawing its DAG and timeline through
 * the same render/ calls the widgets make, on image surfaces of a window's
 * size.
 *
 *   session-bench [--shape S] [--sizes N,N,...] [--repeat K] [--big N] [--file F]
 *                 [--frames F] [--zoom Z]
 *
 * For each size (default 1000,10000): a generated graph is opened, then
 * the stream count is changed K times (default 9); each change is timed
 * from the setter to the redrawn DAG and timeline (the plan and the
 * simulation on the worker thread, the session deriving figures, chart,
 * memory map and DAG annotation on the main thread, and both drawings).
 * Then a graph of --big nodes (default 1000000) is opened and the time to
 * its first complete picture (load, plan, simulation, layout, both
 * drawings) is reported (--file: of that graph instead), and F frames (default 60) of its timeline are
 * drawn while panning at 1x, 10x, 100x and 1000x (--zoom: that one only).  Figures: median, minimum, maximum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <glib/gstdio.h>

#include "ps-canvas.h"
#include "ps-draw.h"
#include "ps-gen.h"
#include "ps-session.h"
#include "ps-timeline-draw.h"
#include "ps-timing.h"

#define WIDTH 1400
#define DAG_H 470
#define TL_H 300

static gboolean
ready (PsSession *s)
{
  return ps_session_get_ready (s);
}

/* Runs the main loop until the session is ready. */
static void
wait_ready (PsSession *s)
{
  while (!ready (s))
    g_main_context_iteration (NULL, TRUE);
}

static void
on_loaded (GObject *source, GAsyncResult *res, gpointer data)
{
  GError *error = NULL;
  if (!ps_session_load_finish (PS_SESSION (source), res, &error)) {
    fprintf (stderr, "session-bench: %s\n", error->message);
    exit (1);
  }
  *(gboolean *) data = TRUE;
}

static void
open_file (PsSession *s, const char *path)
{
  gboolean done = FALSE;
  g_autoptr (GFile) file = g_file_new_for_path (path);
  ps_session_load_async (s, file, NULL, on_loaded, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  wait_ready (s);
}

/* The DAG as the widget draws it when fitted. */
static void
draw_dag (PsSession *s, cairo_surface_t *surf)
{
  const ps_scene *sc = ps_session_get_scene (s);
  cairo_t *cr = cairo_create (surf);
  ps_style st;
  ps_session_get_style (s, &st);
  uint32_t bg = st.pal->background;
  cairo_set_source_rgb (cr, (bg >> 16) / 255.0, ((bg >> 8) & 0xff) / 255.0, (bg & 0xff) / 255.0);
  cairo_paint (cr);
  if (sc && sc->laid_out) {
    double z = fmin ((WIDTH - 48) / fmax (sc->width, 1), (DAG_H - 48) / fmax (sc->height, 1));
    z = fmin (fmax (z, 1e-4), 2.0);
    ps_diagram_view v = { 0, 0, 0, 0, sc->width, sc->height, z, NULL };
    cairo_scale (cr, z, z);
    ps_canvas *c = ps_canvas_new_cairo (cr);
    ps_draw_diagram (sc, &v, c);
    ps_canvas_finish (c);
  }
  cairo_destroy (cr);
}

/* The timeline over the session's time span. */
static void
draw_timeline (PsSession *s, cairo_surface_t *surf, double t0, double t1)
{
  const ps_timeline_chart *ch = ps_session_get_chart (s);
  cairo_t *cr = cairo_create (surf);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  if (ch) {
    ps_style st;
    ps_session_get_style (s, &st);
    ps_timeline_view v;
    memset (&v, 0, sizeof v);
    v.x = 2;
    v.gutter = ps_timeline_chart_gutter (ch) + 4;
    v.width = WIDTH - 10;
    v.height = TL_H;
    v.t0 = t0;
    v.ns_per_pt = (t1 - t0) / (v.width - v.gutter);
    v.style = &st;
    ps_canvas *c = ps_canvas_new_cairo (cr);
    ps_timeline_chart_draw (ch, &v, c);
    ps_canvas_finish (c);
  }
  cairo_destroy (cr);
}

static void
draw_both (PsSession *s, cairo_surface_t *dag, cairo_surface_t *tl)
{
  double t0, t1;
  ps_session_get_time_view (s, &t0, &t1);
  draw_dag (s, dag);
  draw_timeline (s, tl, t0, t1);
  cairo_surface_flush (dag);
  cairo_surface_flush (tl);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static void
report (const char *what, double *v, int n, const char *unit, double scale)
{
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  printf ("  %-44s median %8.1f %s   min %8.1f   max %8.1f   (%d runs)\n", what,
          v[n / 2] * scale, unit, v[0] * scale, v[n - 1] * scale, n);
}

static char *
gen_file (ps_gen_shape shape, uint32_t nodes)
{
  char *path = g_strdup_printf ("%s/session-bench-%u.json", g_get_tmp_dir (), nodes);
  FILE *f = fopen (path, "w");
  if (!f) {
    perror (path);
    exit (1);
  }
  ps_gen_options o;
  ps_gen_options_init (&o);
  o.shape = shape;
  o.nodes = nodes;
  if (ps_gen_write (&o, f) != 0 || fclose (f) != 0) {
    fprintf (stderr, "session-bench: cannot write %s\n", path);
    exit (1);
  }
  return path;
}

static gboolean
plan_streams_are (PsSession *s, guint streams)
{
  const ps_plan *p = ps_session_get_plan (s);
  return ps_session_get_ready (s) && p && p->options.streams == streams;
}

static void
bench_replan (ps_gen_shape shape, uint32_t nodes, int repeat)
{
  g_autofree char *path = gen_file (shape, nodes);
  PsSession *s = ps_session_new ();
  double t = ps_clock_now ();
  open_file (s, path);
  printf ("%u nodes (%s): opened in %.2f s, %u DAG boxes, %u spans\n", nodes,
          ps_gen_shape_name (shape), ps_clock_now () - t, ps_session_get_scene (s)->n_nodes,
          ps_session_get_predicted (s)->n_spans);
  cairo_surface_t *dag = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, WIDTH, DAG_H);
  cairo_surface_t *tl = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, WIDTH, TL_H);
  double *total = g_new (double, repeat), *draw = g_new (double, repeat);
  for (int i = 0; i < repeat; i++) {
    guint streams = i % 2 ? 4 : 3;
    double t0 = ps_clock_now ();
    ps_session_set_streams (s, streams);
    while (!plan_streams_are (s, streams))
      g_main_context_iteration (NULL, TRUE);
    double t1 = ps_clock_now ();
    draw_both (s, dag, tl);
    double t2 = ps_clock_now ();
    total[i] = t2 - t0;
    draw[i] = t2 - t1;
  }
  report ("re-plan -> redrawn DAG and timeline", total, repeat, "ms", 1e3);
  report ("  of which drawing both", draw, repeat, "ms", 1e3);
  g_free (total);
  g_free (draw);
  cairo_surface_destroy (dag);
  cairo_surface_destroy (tl);
  g_object_unref (s);
  g_unlink (path);
}

static double only_zoom; /* --zoom: one zoom level only */

static void
bench_big (ps_gen_shape shape, uint32_t nodes, const char *file, int frames)
{
  g_autofree char *path = file ? g_strdup (file) : gen_file (shape, nodes);
  PsSession *s = ps_session_new ();
  cairo_surface_t *dag = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, WIDTH, DAG_H);
  cairo_surface_t *tl = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, WIDTH, TL_H);
  double t0 = ps_clock_now ();
  open_file (s, path);
  double t1 = ps_clock_now ();
  draw_both (s, dag, tl);
  double t2 = ps_clock_now ();
  const ps_timeline *pt = ps_session_get_predicted (s);
  printf ("%u nodes (%s): first complete picture in %.2f s (open %.2f s, drawing %.0f ms); "
          "%u spans, %u DAG boxes\n",
          ps_session_get_graph (s)->n_nodes, file ? file : ps_gen_shape_name (shape), t2 - t0,
          t1 - t0, (t2 - t1) * 1e3, pt->n_spans, ps_session_get_scene (s)->n_nodes);

  /* Pan and zoom: a frame per step, as a drag or a wheel would ask. */
  double len = pt->makespan_ns;
  static const double zooms[] = { 1, 10, 100, 1000 };
  for (size_t z = 0; z < sizeof zooms / sizeof zooms[0]; z++) {
    if (only_zoom > 0 && zooms[z] != only_zoom)
      continue;
    double *ft = g_new (double, frames);
    double span = len / zooms[z];
    for (int f = 0; f < frames; f++) {
      double start = (len - span) * f / (frames > 1 ? frames - 1 : 1);
      double a = ps_clock_now ();
      draw_timeline (s, tl, start, start + span);
      cairo_surface_flush (tl);
      ft[f] = ps_clock_now () - a;
    }
    char what[96];
    snprintf (what, sizeof what, "timeline frame, %gx zoom, panning", zooms[z]);
    qsort (ft, (size_t) frames, sizeof *ft, cmp_double);
    printf ("  %-44s median %8.1f ms   max %8.1f ms   = %.0f frames/s (slowest %.0f)\n", what,
            ft[frames / 2] * 1e3, ft[frames - 1] * 1e3, 1 / ft[frames / 2],
            1 / ft[frames - 1]);
    g_free (ft);
  }
  cairo_surface_destroy (dag);
  cairo_surface_destroy (tl);
  g_object_unref (s);
  if (!file)
    g_unlink (path);
}

int
main (int argc, char **argv)
{
  ps_gen_shape shape = PS_GEN_LAYERED;
  const char *sizes = "1000,10000";
  int repeat = 9, frames = 60;
  long big = 1000000;
  const char *file = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp (a, "--shape") && v && ps_gen_shape_parse (v, &shape) == 0)
      i++;
    else if (!strcmp (a, "--sizes") && v)
      sizes = argv[++i];
    else if (!strcmp (a, "--repeat") && v && atoi (v) > 0)
      repeat = atoi (argv[++i]);
    else if (!strcmp (a, "--frames") && v && atoi (v) > 0)
      frames = atoi (argv[++i]);
    else if (!strcmp (a, "--big") && v && atol (v) >= 0)
      big = atol (argv[++i]);
    else if (!strcmp (a, "--file") && v)
      file = argv[++i];
    else if (!strcmp (a, "--zoom") && v && atof (v) >= 1)
      only_zoom = atof (argv[++i]);
    else {
      fprintf (stderr, "usage: session-bench [--shape S] [--sizes N,N,...] [--repeat K] "
                       "[--big N] [--file FILE] [--frames F] [--zoom Z]\n");
      return 2;
    }
  }
  g_auto (GStrv) list = g_strsplit (sizes, ",", -1);
  for (guint i = 0; list[i]; i++)
    if (atol (list[i]) > 0)
      bench_replan (shape, (uint32_t) atol (list[i]), repeat);
  if (big > 0 || file)
    bench_big (shape, (uint32_t) big, file, frames);
  return 0;
}
