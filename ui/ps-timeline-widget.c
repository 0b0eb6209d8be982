/* ps-timeline-widget.c: draws the session's timelines lane by lane.
 *
 * Only what is visible is drawn: each lane's spans are found by binary
 * search in the timeline's per-stream index, and runs of spans narrower
 * than a pixel are merged into one bar per pixel column, so a million
 * spans cost at most a few thousand rectangles a frame. */
#include "ps-timeline-widget.h"

#include <math.h>

#include "ps-dag-view.h"
#include "ps-draw.h"
#include "ps-format.h"
#include "ps-plan.h"
#include "ps-session.h"

#define AXIS_H 26.0
#define GUTTER_W 96.0
#define LANE_H 34.0
#define LANE_GAP 6.0

struct _PsTimelineWidget
{
  GtkWidget parent_instance;

  PsSession *session;
  gulong handlers[4];

  double t0;        /* ns at the left edge of the plot */
  double ns_per_px; /* <= 0: fit on next draw */
  double y_offset;  /* lanes scrolled up, px */
  double drag_t0, drag_y0;
  double zoom_scale0;
  double zoom_anchor_t;
};

enum { PROP_0, PROP_SESSION, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (PsTimelineWidget, ps_timeline_widget, GTK_TYPE_WIDGET)

static const ps_timeline *
predicted (PsTimelineWidget *self)
{
  return self->session ? ps_session_get_predicted (self->session) : NULL;
}

static const ps_timeline *
measured (PsTimelineWidget *self)
{
  return self->session ? ps_session_get_measured (self->session) : NULL;
}

static double
plot_width (PsTimelineWidget *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - GUTTER_W - 8, 16);
}

static double
run_length (PsTimelineWidget *self)
{
  double len = 0;
  if (predicted (self))
    len = predicted (self)->makespan_ns;
  if (measured (self))
    len = MAX (len, measured (self)->makespan_ns);
  return len > 0 ? len : 1000;
}

static void
ensure_scale (PsTimelineWidget *self)
{
  if (self->ns_per_px <= 0)
    {
      self->t0 = 0;
      self->ns_per_px = run_length (self) * 1.02 / plot_width (self);
    }
}

static void
clamp_view (PsTimelineWidget *self)
{
  double len = run_length (self);
  double max_scale = len * 4 / plot_width (self);
  self->ns_per_px = CLAMP (self->ns_per_px, 1e-3, MAX (max_scale, 1e-3));
  double vis = self->ns_per_px * plot_width (self);
  self->t0 = CLAMP (self->t0, -vis * 0.5, MAX (len - vis * 0.5, -vis * 0.5));
  const ps_timeline *tl = predicted (self);
  double content = tl ? tl->n_streams * (LANE_H + LANE_GAP) : 0;
  double room = gtk_widget_get_height (GTK_WIDGET (self)) - AXIS_H;
  self->y_offset = CLAMP (self->y_offset, 0, MAX (content - room, 0));
}

static double
x_of (PsTimelineWidget *self, double t)
{
  return GUTTER_W + (t - self->t0) / self->ns_per_px;
}

static double
t_of (PsTimelineWidget *self, double x)
{
  return self->t0 + (x - GUTTER_W) * self->ns_per_px;
}

static double
lane_y (PsTimelineWidget *self, guint lane)
{
  return AXIS_H + LANE_GAP / 2 + lane * (LANE_H + LANE_GAP) - self->y_offset;
}

/* The predicted lane of a measured stream (matched by plan stream id). */
static guint
lane_of (const ps_timeline *pred, const ps_timeline *tl, guint stream)
{
  if (tl == pred)
    return stream;
  for (uint32_t i = 0; i < pred->n_streams; i++)
    if (pred->streams[i].id == tl->streams[stream].id)
      return i;
  return PS_NONE;
}

/* First index in the lane whose span may be visible at time t. */
static uint32_t
first_visible (const ps_timeline *tl, uint32_t stream, double t)
{
  uint32_t lo = tl->stream_off[stream], hi = tl->stream_off[stream + 1];
  while (lo < hi)
    {
      uint32_t mid = lo + (hi - lo) / 2;
      if (tl->spans[tl->by_stream[mid]].start_ns < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  /* Spans on a stream rarely overlap, so the one before may still run. */
  uint32_t first = tl->stream_off[stream];
  for (int back = 0; back < 4 && lo > first; back++)
    lo--;
  return lo;
}

static void
set_rgb (cairo_t *cr, guint32 rgb, double alpha)
{
  cairo_set_source_rgba (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                         (rgb & 0xff) / 255.0, alpha);
}

static void
draw_hatch (cairo_t *cr, double x, double y, double w, double h)
{
  cairo_save (cr);
  cairo_rectangle (cr, x, y, w, h);
  cairo_clip_preserve (cr);
  cairo_set_source_rgba (cr, 0.85, 0.3, 0.2, 0.12);
  cairo_fill (cr);
  cairo_set_source_rgba (cr, 0.8, 0.25, 0.15, 0.7);
  cairo_set_line_width (cr, 1);
  for (double d = -h; d < w; d += 6)
    {
      cairo_move_to (cr, x + d, y + h);
      cairo_line_to (cr, x + d + h, y);
    }
  cairo_stroke (cr);
  cairo_restore (cr);
}

typedef struct {
  cairo_t *cr;
  PangoLayout *layout;
  double width, height;
  double x_min, x_max;
  guint sel_node;
  gboolean has_sel;
} DrawCtx;

static gboolean
span_selected (PsTimelineWidget *self, const ps_timeline *tl, const ps_span *s, DrawCtx *dc)
{
  if (!dc->has_sel)
    return FALSE;
  for (uint32_t k = 0; k < s->nodes_count; k++)
    if (tl->span_nodes[s->nodes_begin + k] == dc->sel_node)
      return TRUE;
  return FALSE;
}

/* One timeline's spans in one lane, between y and y + h. */
static void
draw_lane_spans (PsTimelineWidget *self, DrawCtx *dc, const ps_timeline *tl, guint stream,
                 double y, double h, double alpha, gboolean labels)
{
  cairo_t *cr = dc->cr;
  double t_min = t_of (self, dc->x_min), t_max = t_of (self, dc->x_max);
  uint32_t end = tl->stream_off[stream + 1];
  /* A pending merged bar of sub-pixel spans, in a darker shade of the
   * colour of its first span. */
  double run_x0 = 0, run_x1 = -1;
  guint32 run_rgb = 0;
  gboolean show_crit = ps_session_get_show_critical (self->session);
  const ps_timeline *pred = predicted (self);
  for (uint32_t i = first_visible (tl, stream, t_min); i < end; i++)
    {
      uint32_t si = tl->by_stream[i];
      const ps_span *s = &tl->spans[si];
      if (s->start_ns > t_max)
        break;
      if (s->end_ns < t_min)
        continue;
      double x0 = x_of (self, s->start_ns), x1 = x_of (self, s->end_ns);
      x0 = MAX (x0, dc->x_min - 2);
      x1 = MIN (x1, dc->x_max + 2);
      if (x1 - x0 < 1.0)
        {
          if (run_x1 >= 0 && x0 <= run_x1 + 1.0)
            {
              run_x1 = MAX (run_x1, x1);
              continue;
            }
          if (run_x1 >= 0)
            {
              set_rgb (cr, run_rgb, alpha);
              cairo_rectangle (cr, floor (run_x0), y, MAX (ceil (run_x1) - floor (run_x0), 1), h);
              cairo_fill (cr);
            }
          run_x0 = x0;
          run_x1 = x1;
          run_rgb = ps_color_darker (ps_session_span_color (self->session, tl, si));
          continue;
        }
      guint32 rgb = ps_session_span_color (self->session, tl, si);
      set_rgb (cr, rgb, alpha);
      cairo_rectangle (cr, x0, y, x1 - x0, h);
      cairo_fill (cr);
      set_rgb (cr, ps_color_darker (rgb), MIN (1, alpha + 0.2));
      cairo_set_line_width (cr, 1);
      cairo_rectangle (cr, x0 + 0.5, y + 0.5, MAX (x1 - x0 - 1, 0), h - 1);
      cairo_stroke (cr);
      guint first_node = s->nodes_count ? tl->span_nodes[s->nodes_begin] : PS_NONE;
      if (tl == pred && first_node != PS_NONE && show_crit
          && ps_session_node_critical (self->session, first_node))
        {
          set_rgb (cr, PS_COLOR_CRITICAL, 1);
          cairo_rectangle (cr, x0, y + h - 3, x1 - x0, 3);
          cairo_fill (cr);
        }
      if (tl == pred && first_node != PS_NONE
          && ps_session_node_changed (self->session, first_node))
        {
          static const double dash[] = { 3, 2 };
          cairo_save (cr);
          cairo_set_dash (cr, dash, 2, 0);
          set_rgb (cr, PS_COLOR_CROSS, 1);
          cairo_set_line_width (cr, 2);
          cairo_rectangle (cr, x0 + 1, y + 1, MAX (x1 - x0 - 2, 0), h - 2);
          cairo_stroke (cr);
          cairo_restore (cr);
        }
      if (span_selected (self, tl, s, dc))
        {
          cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
          cairo_set_line_width (cr, 2.5);
          cairo_rectangle (cr, x0 - 1, y - 1, x1 - x0 + 2, h + 2);
          cairo_stroke (cr);
        }
      if (labels && x1 - x0 > 36)
        {
          g_autofree char *label = ps_session_span_label (self->session, tl, si);
          pango_layout_set_text (dc->layout, label, -1);
          pango_layout_set_width (dc->layout, (int) ((x1 - x0 - 6) * PANGO_SCALE));
          int lw, lh;
          pango_layout_get_pixel_size (dc->layout, &lw, &lh);
          set_rgb (cr, ps_color_text_on (rgb), 1);
          cairo_move_to (cr, x0 + 3, y + (h - lh) / 2);
          pango_cairo_show_layout (cr, dc->layout);
        }
    }
  if (run_x1 >= 0)
    {
      set_rgb (cr, run_rgb, alpha);
      cairo_rectangle (cr, floor (run_x0), y, MAX (ceil (run_x1) - floor (run_x0), 1), h);
      cairo_fill (cr);
    }
}

static double
nice_step (double raw)
{
  double p = pow (10, floor (log10 (raw)));
  double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void
draw_axis (PsTimelineWidget *self, DrawCtx *dc)
{
  cairo_t *cr = dc->cr;
  cairo_set_source_rgb (cr, 0.96, 0.96, 0.97);
  cairo_rectangle (cr, 0, 0, dc->width, AXIS_H);
  cairo_fill (cr);
  double step = nice_step (self->ns_per_px * 90);
  double t = floor (t_of (self, GUTTER_W) / step) * step;
  pango_layout_set_width (dc->layout, -1);
  cairo_set_line_width (cr, 1);
  for (; x_of (self, t) < dc->width; t += step)
    {
      double x = floor (x_of (self, t)) + 0.5;
      if (x < GUTTER_W)
        continue;
      cairo_set_source_rgba (cr, 0, 0, 0, 0.12);
      cairo_move_to (cr, x, AXIS_H - 6);
      cairo_line_to (cr, x, dc->height);
      cairo_stroke (cr);
      char buf[32];
      pango_layout_set_text (dc->layout, ps_format_duration (t, buf, sizeof buf), -1);
      cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
      cairo_move_to (cr, x + 3, 4);
      pango_cairo_show_layout (cr, dc->layout);
    }
}

static void
draw_flows (PsTimelineWidget *self, DrawCtx *dc, const ps_timeline *tl)
{
  cairo_t *cr = dc->cr;
  double t_min = t_of (self, dc->x_min), t_max = t_of (self, dc->x_max);
  /* Arrows only help while they can be told apart. */
  guint visible = 0, limit = (guint) MAX ((dc->x_max - dc->x_min) / 12, 8);
  for (uint32_t i = 0; i < tl->n_flows && visible <= limit; i++)
    visible += MAX (tl->flows[i].from_ns, tl->flows[i].to_ns) >= t_min
               && MIN (tl->flows[i].from_ns, tl->flows[i].to_ns) <= t_max;
  if (visible > limit)
    return;
  guint drawn = 0;
  set_rgb (cr, PS_COLOR_EVENT, 0.8);
  cairo_set_line_width (cr, 1.2);
  for (uint32_t i = 0; i < tl->n_flows && drawn < 4000; i++)
    {
      const ps_flow *f = &tl->flows[i];
      if (MAX (f->from_ns, f->to_ns) < t_min || MIN (f->from_ns, f->to_ns) > t_max
          || f->from_stream >= tl->n_streams || f->to_stream >= tl->n_streams)
        continue;
      double x0 = x_of (self, f->from_ns), x1 = x_of (self, f->to_ns);
      double y0 = lane_y (self, f->from_stream) + LANE_H / 2;
      double y1 = lane_y (self, f->to_stream) + LANE_H / 2;
      y1 += y1 > y0 ? -LANE_H / 2 : LANE_H / 2;
      cairo_move_to (cr, x0, y0);
      cairo_line_to (cr, x1, y1);
      cairo_stroke (cr);
      double a = atan2 (y1 - y0, x1 - x0);
      cairo_move_to (cr, x1, y1);
      cairo_line_to (cr, x1 - 7 * cos (a - 0.4), y1 - 7 * sin (a - 0.4));
      cairo_line_to (cr, x1 - 7 * cos (a + 0.4), y1 - 7 * sin (a + 0.4));
      cairo_close_path (cr);
      cairo_fill (cr);
      drawn++;
    }
}

static void
draw (PsTimelineWidget *self, cairo_t *cr, double width, double height)
{
  DrawCtx dc = { cr, gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL), width, height,
                 GUTTER_W, width, 0, FALSE };
  pango_layout_set_ellipsize (dc.layout, PANGO_ELLIPSIZE_END);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  const ps_timeline *tl = predicted (self);
  if (!tl || tl->n_streams == 0 || !tl->stream_off)
    {
      pango_layout_set_text (dc.layout, self->session && ps_session_get_busy (self->session)
                                            ? "Simulating…" : "No timeline", -1);
      cairo_set_source_rgb (cr, 0.5, 0.5, 0.5);
      cairo_move_to (cr, 16, 16);
      pango_cairo_show_layout (cr, dc.layout);
      g_object_unref (dc.layout);
      return;
    }
  ensure_scale (self);
  clamp_view (self);
  guint sel_id;
  dc.has_sel = ps_session_get_selection (self->session, &sel_id) == PS_SELECTION_NODE;
  dc.sel_node = sel_id;
  const ps_timeline *m = measured (self);

  draw_axis (self, &dc);
  cairo_save (cr);
  cairo_rectangle (cr, 0, AXIS_H, width, height - AXIS_H);
  cairo_clip (cr);
  for (uint32_t lane = 0; lane < tl->n_streams; lane++)
    {
      double y = lane_y (self, lane);
      if (y > height || y + LANE_H < AXIS_H)
        continue;
      cairo_set_source_rgba (cr, 0, 0, 0, lane % 2 ? 0.035 : 0.015);
      cairo_rectangle (cr, 0, y - LANE_GAP / 2, width, LANE_H + LANE_GAP);
      cairo_fill (cr);
    }
  cairo_save (cr);
  cairo_rectangle (cr, GUTTER_W, AXIS_H, width - GUTTER_W, height - AXIS_H);
  cairo_clip (cr);
  /* Stalls under the spans. */
  double t_min = t_of (self, GUTTER_W), t_max = t_of (self, width);
  /* Stalls that touch within a pixel are hatched as one run per lane. */
  double run0[PS_MAX_STREAMS], run1[PS_MAX_STREAMS];
  for (guint i = 0; i < PS_MAX_STREAMS; i++)
    run1[i] = -1;
  for (uint32_t i = 0; i < tl->n_stalls; i++)
    {
      const ps_stall *st = &tl->stalls[i];
      if (st->end_ns < t_min || st->start_ns > t_max || st->stream >= MIN (tl->n_streams, PS_MAX_STREAMS))
        continue;
      double x0 = MAX (x_of (self, st->start_ns), GUTTER_W - 2);
      double x1 = MAX (MIN (x_of (self, st->end_ns), width + 2), x0 + 1);
      guint lane = st->stream;
      if (run1[lane] >= 0 && x0 <= run1[lane] + 1 && x1 >= run0[lane] - 1)
        {
          run0[lane] = MIN (run0[lane], x0);
          run1[lane] = MAX (run1[lane], x1);
          continue;
        }
      if (run1[lane] >= 0)
        draw_hatch (cr, run0[lane], lane_y (self, lane) + 2, run1[lane] - run0[lane], LANE_H - 4);
      run0[lane] = x0;
      run1[lane] = x1;
    }
  for (guint lane = 0; lane < MIN (tl->n_streams, PS_MAX_STREAMS); lane++)
    if (run1[lane] >= 0)
      draw_hatch (cr, run0[lane], lane_y (self, lane) + 2, run1[lane] - run0[lane], LANE_H - 4);
  for (uint32_t lane = 0; lane < tl->n_streams; lane++)
    {
      double y = lane_y (self, lane);
      if (y > height || y + LANE_H < AXIS_H)
        continue;
      if (m)
        draw_lane_spans (self, &dc, tl, lane, y + LANE_H * 0.45, LANE_H * 0.55, 0.45, FALSE);
      else
        draw_lane_spans (self, &dc, tl, lane, y, LANE_H, 0.9, TRUE);
    }
  if (m && m->stream_off)
    for (uint32_t s = 0; s < m->n_streams; s++)
      {
        guint lane = lane_of (tl, m, s);
        if (lane == PS_NONE)
          continue;
        double y = lane_y (self, lane);
        if (y > height || y + LANE_H < AXIS_H)
          continue;
        draw_lane_spans (self, &dc, m, s, y, LANE_H * 0.55, 1.0, TRUE);
      }
  draw_flows (self, &dc, tl);
  cairo_restore (cr);

  /* Lane labels. */
  cairo_set_source_rgb (cr, 0.97, 0.97, 0.98);
  cairo_rectangle (cr, 0, AXIS_H, GUTTER_W - 4, height - AXIS_H);
  cairo_fill (cr);
  pango_layout_set_width (dc.layout, (int) ((GUTTER_W - 14) * PANGO_SCALE));
  for (uint32_t lane = 0; lane < tl->n_streams; lane++)
    {
      double y = lane_y (self, lane);
      if (y > height || y + LANE_H < AXIS_H)
        continue;
      g_autofree char *label = ps_session_stream_label (self->session, tl, lane);
      set_rgb (cr, ps_color_stream ((int32_t) tl->streams[lane].id), 1);
      cairo_rectangle (cr, 4, y + 4, 4, LANE_H - 8);
      cairo_fill (cr);
      pango_layout_set_text (dc.layout, label, -1);
      cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
      cairo_move_to (cr, 12, y + (m ? 2 : LANE_H / 2 - 8));
      pango_cairo_show_layout (cr, dc.layout);
      if (m)
        {
          pango_layout_set_text (dc.layout, "measured / predicted", -1);
          cairo_set_source_rgb (cr, 0.45, 0.45, 0.45);
          cairo_move_to (cr, 12, y + 17);
          pango_cairo_show_layout (cr, dc.layout);
        }
    }
  cairo_restore (cr);
  g_object_unref (dc.layout);
}

static void
ps_timeline_widget_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  if (w <= 0 || h <= 0)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  draw (PS_TIMELINE_WIDGET (widget), cr, w, h);
  cairo_destroy (cr);
}

static void
ps_timeline_widget_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                            int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  PsTimelineWidget *self = PS_TIMELINE_WIDGET (widget);
  const ps_timeline *tl = predicted (self);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 200;
      *natural = 600;
    }
  else
    {
      guint lanes = tl ? tl->n_streams : 2;
      *minimum = (int) (AXIS_H + LANE_H + LANE_GAP);
      *natural = (int) (AXIS_H + MIN (lanes, 8) * (LANE_H + LANE_GAP) + 4);
    }
}

/* ---- hit testing and tooltips ------------------------------------------- */

static guint
span_in_lane (const ps_timeline *tl, guint stream, double t, double slop)
{
  if (!tl->stream_off || stream >= tl->n_streams)
    return PS_NONE;
  uint32_t end = tl->stream_off[stream + 1];
  guint best = PS_NONE;
  for (uint32_t i = first_visible (tl, stream, t - slop); i < end; i++)
    {
      const ps_span *s = &tl->spans[tl->by_stream[i]];
      if (s->start_ns > t + slop)
        break;
      if (s->end_ns >= t - slop)
        {
          best = tl->by_stream[i];
          if (s->start_ns <= t && s->end_ns >= t)
            break;
        }
    }
  return best;
}

guint
ps_timeline_widget_span_at (PsTimelineWidget *self, double x, double y, gboolean *is_measured)
{
  g_return_val_if_fail (PS_IS_TIMELINE_WIDGET (self), PS_NONE);
  const ps_timeline *tl = predicted (self);
  if (is_measured)
    *is_measured = FALSE;
  if (!tl || x < GUTTER_W || y < AXIS_H || self->ns_per_px <= 0)
    return PS_NONE;
  double rel = y + self->y_offset - AXIS_H - LANE_GAP / 2;
  if (rel < 0)
    return PS_NONE;
  guint lane = (guint) (rel / (LANE_H + LANE_GAP));
  double in_lane = rel - lane * (LANE_H + LANE_GAP);
  if (lane >= tl->n_streams || in_lane > LANE_H)
    return PS_NONE;
  double t = t_of (self, x), slop = self->ns_per_px * 2;
  const ps_timeline *m = measured (self);
  if (m && in_lane < LANE_H * 0.55)
    {
      for (uint32_t s = 0; s < m->n_streams; s++)
        if (lane_of (tl, m, s) == lane)
          {
            guint hit = span_in_lane (m, s, t, slop);
            if (hit != PS_NONE && is_measured)
              *is_measured = TRUE;
            return hit;
          }
      return PS_NONE;
    }
  return span_in_lane (tl, lane, t, slop);
}

static guint
stall_at (PsTimelineWidget *self, double x, double y)
{
  const ps_timeline *tl = predicted (self);
  if (!tl || x < GUTTER_W || y < AXIS_H)
    return PS_NONE;
  double rel = y + self->y_offset - AXIS_H - LANE_GAP / 2;
  guint lane = rel < 0 ? PS_NONE : (guint) (rel / (LANE_H + LANE_GAP));
  double t = t_of (self, x);
  for (uint32_t i = 0; i < tl->n_stalls; i++)
    if (tl->stalls[i].stream == lane && tl->stalls[i].start_ns <= t && tl->stalls[i].end_ns >= t)
      return i;
  return PS_NONE;
}

static gboolean
query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
               gpointer data)
{
  PsTimelineWidget *self = PS_TIMELINE_WIDGET (widget);
  gboolean is_m;
  guint span = ps_timeline_widget_span_at (self, x, y, &is_m);
  char a[32], b[32], c[32];
  if (span != PS_NONE)
    {
      const ps_timeline *tl = is_m ? measured (self) : predicted (self);
      const ps_span *s = &tl->spans[span];
      g_autofree char *label = ps_session_span_label (self->session, tl, span);
      g_autofree char *text = g_strdup_printf (
          "%s\n%s %s · %s → %s (%s)", label, is_m ? "measured" : "predicted",
          ps_span_kind_name ((ps_span_kind)s->kind), ps_format_duration (s->start_ns, a, sizeof a),
          ps_format_duration (s->end_ns, b, sizeof b),
          ps_format_duration (s->end_ns - s->start_ns, c, sizeof c));
      gtk_tooltip_set_text (tooltip, text);
      return TRUE;
    }
  guint stall = stall_at (self, x, y);
  if (stall != PS_NONE)
    {
      const ps_timeline *tl = predicted (self);
      const ps_stall *st = &tl->stalls[stall];
      g_autofree char *what = st->waiting_for != PS_NONE
          ? ps_session_span_label (self->session, tl, st->waiting_for) : g_strdup ("an event");
      g_autofree char *text = g_strdup_printf (
          "Stalled %s waiting for %s on stream %u",
          ps_format_duration (st->end_ns - st->start_ns, a, sizeof a), what, st->on_stream);
      gtk_tooltip_set_text (tooltip, text);
      return TRUE;
    }
  return FALSE;
}

/* ---- input -------------------------------------------------------------- */

static void
zoom_at (PsTimelineWidget *self, double x, double factor)
{
  ensure_scale (self);
  double t = t_of (self, x);
  self->ns_per_px /= factor;
  clamp_view (self);
  self->t0 = t - (x - GUTTER_W) * self->ns_per_px;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
on_scroll (GtkEventControllerScroll *ctl, double dx, double dy, gpointer data)
{
  PsTimelineWidget *self = data;
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (ctl));
  double x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, y;
  GdkEvent *ev = gtk_event_controller_get_current_event (GTK_EVENT_CONTROLLER (ctl));
  if (ev)
    gdk_event_get_position (ev, &x, &y);
  ensure_scale (self);
  if (mods & GDK_CONTROL_MASK)
    zoom_at (self, x, pow (1.15, -dy));
  else
    {
      const ps_timeline *tl = predicted (self);
      double content = tl ? tl->n_streams * (LANE_H + LANE_GAP) : 0;
      gboolean tall = content > gtk_widget_get_height (GTK_WIDGET (self)) - AXIS_H;
      if (tall && !(mods & GDK_SHIFT_MASK) && dx == 0)
        self->y_offset += dy * 30;
      else
        self->t0 += (dx != 0 ? dx : dy) * 40 * self->ns_per_px;
      clamp_view (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, gpointer data)
{
  PsTimelineWidget *self = data;
  self->drag_t0 = self->t0;
  self->drag_y0 = self->y_offset;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, gpointer data)
{
  PsTimelineWidget *self = data;
  self->t0 = self->drag_t0 - dx * self->ns_per_px;
  self->y_offset = self->drag_y0 - dy;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, gpointer data)
{
  PsTimelineWidget *self = data;
  if (fabs (dx) > 3 || fabs (dy) > 3 || !self->session)
    return;
  double x, y;
  gtk_gesture_drag_get_start_point (g, &x, &y);
  gboolean is_m;
  guint span = ps_timeline_widget_span_at (self, x, y, &is_m);
  if (span != PS_NONE)
    {
      ps_session_select_span (self->session, is_m ? measured (self) : predicted (self), span);
      return;
    }
  guint stall = stall_at (self, x, y);
  ps_session_select (self->session, stall != PS_NONE ? PS_SELECTION_STALL : PS_SELECTION_NONE,
                     stall);
}

static void
on_zoom_begin (GtkGesture *g, GdkEventSequence *seq, gpointer data)
{
  PsTimelineWidget *self = data;
  ensure_scale (self);
  self->zoom_scale0 = self->ns_per_px;
  double x, y;
  if (gtk_gesture_get_bounding_box_center (g, &x, &y))
    self->zoom_anchor_t = t_of (self, x);
}

static void
on_zoom_changed (GtkGestureZoom *g, double scale, gpointer data)
{
  PsTimelineWidget *self = data;
  double x, y;
  if (scale <= 0 || !gtk_gesture_get_bounding_box_center (GTK_GESTURE (g), &x, &y))
    return;
  self->ns_per_px = self->zoom_scale0 / scale;
  clamp_view (self);
  self->t0 = self->zoom_anchor_t - (x - GUTTER_W) * self->ns_per_px;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
action_zoom (GtkWidget *widget, const char *name, GVariant *param)
{
  PsTimelineWidget *self = PS_TIMELINE_WIDGET (widget);
  if (g_str_equal (name, "timeline.zoom-in"))
    ps_timeline_widget_zoom (self, 1.5);
  else if (g_str_equal (name, "timeline.zoom-out"))
    ps_timeline_widget_zoom (self, 1 / 1.5);
  else if (g_str_equal (name, "timeline.zoom-fit"))
    ps_timeline_widget_zoom_fit (self);
  else
    {
      ensure_scale (self);
      double step = plot_width (self) * self->ns_per_px * 0.2;
      self->t0 += g_str_equal (name, "timeline.pan-left") ? -step : step;
      clamp_view (self);
      gtk_widget_queue_draw (widget);
    }
}

/* ---- object ------------------------------------------------------------- */

static void
on_changed (PsTimelineWidget *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_plan_changed (PsTimelineWidget *self)
{
  /* Keep the zoom when the run length stays about the same (re-plans);
   * fit when it changes a lot or there was no timeline. */
  const ps_timeline *tl = predicted (self);
  if (!tl || self->ns_per_px <= 0
      || self->ns_per_px * plot_width (self) > tl->makespan_ns * 3)
    self->ns_per_px = 0;
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

static void
on_document_changed (PsTimelineWidget *self)
{
  self->ns_per_px = 0;
  self->y_offset = 0;
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

void
ps_timeline_widget_set_session (PsTimelineWidget *self, PsSession *session)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self));
  if (self->session == session)
    return;
  if (self->session)
    for (guint i = 0; i < G_N_ELEMENTS (self->handlers); i++)
      g_clear_signal_handler (&self->handlers[i], self->session);
  g_set_object (&self->session, session);
  if (session)
    {
      self->handlers[0] = g_signal_connect_swapped (session, "plan-changed",
                                                    G_CALLBACK (on_plan_changed), self);
      self->handlers[1] = g_signal_connect_swapped (session, "measured-changed",
                                                    G_CALLBACK (on_changed), self);
      self->handlers[2] = g_signal_connect_swapped (session, "selection-changed",
                                                    G_CALLBACK (on_changed), self);
      self->handlers[3] = g_signal_connect_swapped (session, "document-changed",
                                                    G_CALLBACK (on_document_changed), self);
      g_signal_connect_object (session, "notify::color-by", G_CALLBACK (on_changed), self,
                               G_CONNECT_SWAPPED);
      g_signal_connect_object (session, "notify::show-critical", G_CALLBACK (on_changed), self,
                               G_CONNECT_SWAPPED);
    }
  self->ns_per_px = 0;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION]);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

void
ps_timeline_widget_zoom_fit (PsTimelineWidget *self)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self));
  self->ns_per_px = 0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ps_timeline_widget_zoom (PsTimelineWidget *self, double factor)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self) && factor > 0);
  zoom_at (self, GUTTER_W + plot_width (self) / 2, factor);
}

void
ps_timeline_widget_get_range (PsTimelineWidget *self, double *t0, double *t1)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self));
  ensure_scale (self);
  *t0 = self->t0;
  *t1 = self->t0 + plot_width (self) * self->ns_per_px;
}

static void
ps_timeline_widget_dispose (GObject *object)
{
  ps_timeline_widget_set_session (PS_TIMELINE_WIDGET (object), NULL);
  G_OBJECT_CLASS (ps_timeline_widget_parent_class)->dispose (object);
}

static void
ps_timeline_widget_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  if (id == PROP_SESSION)
    g_value_set_object (value, PS_TIMELINE_WIDGET (object)->session);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
}

static void
ps_timeline_widget_set_property (GObject *object, guint id, const GValue *value,
                                 GParamSpec *pspec)
{
  if (id == PROP_SESSION)
    ps_timeline_widget_set_session (PS_TIMELINE_WIDGET (object), g_value_get_object (value));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
}

static void
ps_timeline_widget_class_init (PsTimelineWidgetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = ps_timeline_widget_dispose;
  object_class->get_property = ps_timeline_widget_get_property;
  object_class->set_property = ps_timeline_widget_set_property;
  widget_class->snapshot = ps_timeline_widget_snapshot;
  widget_class->measure = ps_timeline_widget_measure;

  properties[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, PS_TYPE_SESSION,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY
                                                      | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  static const char *const actions[] = { "timeline.zoom-in", "timeline.zoom-out",
                                         "timeline.zoom-fit", "timeline.pan-left",
                                         "timeline.pan-right" };
  for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
    gtk_widget_class_install_action (widget_class, actions[i], NULL, action_zoom);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "timeline.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0,
                                       "timeline.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "timeline.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, 0, "timeline.pan-left", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, 0, "timeline.pan-right",
                                       NULL);
  gtk_widget_class_set_css_name (widget_class, "timeline");
}

static void
ps_timeline_widget_init (PsTimelineWidget *self)
{
  GtkWidget *w = GTK_WIDGET (self);
  gtk_widget_set_focusable (w, TRUE);
  gtk_widget_set_focus_on_click (w, TRUE);
  gtk_widget_set_has_tooltip (w, TRUE);
  gtk_widget_set_overflow (w, GTK_OVERFLOW_HIDDEN);
  g_signal_connect (w, "query-tooltip", G_CALLBACK (query_tooltip), NULL);

  GtkEventController *scroll = gtk_event_controller_scroll_new (
      GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (w, scroll);

  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (drag));

  GtkGesture *zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (on_zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (on_zoom_changed), self);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (zoom));
}
