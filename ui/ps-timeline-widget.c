/* ps-timeline-widget.c: draws the session's timeline chart through the
 * renderer (render/ps-timeline-draw.h) on a cairo canvas, over the time
 * span the session holds (shared with the memory map); zoom about the
 * pointer, pan, tooltips and selection.  The chart culls to the view and
 * merges spans narrower than a pixel, so a million spans draw fast. */
#include "ps-timeline-widget.h"

#include <math.h>

#include "ps-draw.h"
#include "ps-session.h"
#include "ps-timeline-draw.h"

struct _PsTimelineWidget
{
  GtkWidget parent_instance;

  PsSession *session;
  gulong handlers[5];

  double y_offset;  /* lanes scrolled up, px */
  double drag_t0, drag_y0;
  double zoom_span0, zoom_anchor_t;
  double pointer_x; /* where the last motion left the pointer; < 0: outside */
  guint8 *marks;    /* per graph node, rebuilt each frame */
  guint n_marks;
};

enum { PROP_0, PROP_SESSION, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (PsTimelineWidget, ps_timeline_widget, GTK_TYPE_WIDGET)

static const ps_timeline_chart *
chart (PsTimelineWidget *self)
{
  return self->session ? ps_session_get_chart (self->session) : NULL;
}

static double
gutter (PsTimelineWidget *self)
{
  const ps_timeline_chart *ch = chart (self);
  return ch ? ps_timeline_chart_gutter (ch) + 6 : 96;
}

static double
plot_width (PsTimelineWidget *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - gutter (self) - 8, 16);
}

static void
clamp_scroll (PsTimelineWidget *self)
{
  const ps_timeline_chart *ch = chart (self);
  double content = ch ? ps_timeline_chart_height (ch) : 0;
  double room = gtk_widget_get_height (GTK_WIDGET (self));
  self->y_offset = CLAMP (self->y_offset, 0, MAX (content - room, 0));
}

/* The view the session's time span gives at the widget's size. */
static void
make_view (PsTimelineWidget *self, ps_timeline_view *v, ps_style *st)
{
  memset (v, 0, sizeof *v);
  double t0 = 0, t1 = 1000;
  if (self->session)
    {
      ps_session_get_time_view (self->session, &t0, &t1);
      ps_session_get_style (self->session, st);
    }
  else
    ps_style_init (st, PS_THEME_LIGHT, PS_COLOR_BY_STREAM);
  v->x = 2;
  v->y = 0;
  v->gutter = gutter (self) - 2;
  v->width = v->gutter + plot_width (self);
  v->height = gtk_widget_get_height (GTK_WIDGET (self));
  v->t0 = t0;
  v->ns_per_pt = MAX (t1 - t0, 1e-3) / plot_width (self);
  v->y_offset = self->y_offset;
  v->style = st;
}

static double
t_of (PsTimelineWidget *self, double x)
{
  ps_timeline_view v;
  ps_style st;
  make_view (self, &v, &st);
  return v.t0 + (x - v.x - v.gutter) * v.ns_per_pt;
}

static void
set_rgb (cairo_t *cr, guint32 rgb)
{
  cairo_set_source_rgb (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                        (rgb & 0xff) / 255.0);
}

/* Marks per graph node: the selected node and baseline changes. */
static const guint8 *
build_marks (PsTimelineWidget *self)
{
  const ps_graph *g = ps_session_get_graph (self->session);
  if (!g)
    return NULL;
  if (self->n_marks < g->n_nodes)
    {
      g_free (self->marks);
      self->marks = g_new (guint8, MAX (g->n_nodes, 1));
      self->n_marks = g->n_nodes;
    }
  memset (self->marks, 0, g->n_nodes);
  guint id;
  if (ps_session_get_selection (self->session, &id) == PS_SELECTION_NODE && id < g->n_nodes)
    self->marks[id] |= PS_MARK_SELECTED;
  if (ps_session_has_baseline (self->session))
    for (uint32_t v = 0; v < g->n_nodes; v++)
      if (ps_session_node_changed (self->session, v))
        self->marks[v] |= PS_MARK_CHANGED;
  return self->marks;
}

static void
draw (PsTimelineWidget *self, cairo_t *cr, double width, double height)
{
  ps_timeline_view v;
  ps_style st;
  make_view (self, &v, &st);
  set_rgb (cr, st.pal->background);
  cairo_paint (cr);
  const ps_timeline_chart *ch = chart (self);
  ps_canvas *c = ps_canvas_new_cairo (cr);
  if (!ch)
    {
      ps_font f = { 11, false, false };
      const char *msg = self->session && ps_session_get_busy (self->session) ? "Simulating…"
                                                                             : "No timeline";
      ps_canvas_text (c, 16, 24, msg, &f, PS_ALIGN_LEFT, st.pal->text_dim, width - 32);
      ps_canvas_finish (c);
      return;
    }
  v.node_marks = build_marks (self);
  ps_timeline_chart_draw (ch, &v, c);
  ps_canvas_finish (c);
}

static void
ps_timeline_widget_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  if (w <= 0 || h <= 0)
    return;
  PsTimelineWidget *self = PS_TIMELINE_WIDGET (widget);
  clamp_scroll (self);
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  draw (self, cr, w, h);
  cairo_destroy (cr);
}

static void
ps_timeline_widget_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                            int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  PsTimelineWidget *self = PS_TIMELINE_WIDGET (widget);
  const ps_timeline_chart *ch = chart (self);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 200;
      *natural = 600;
    }
  else
    {
      double lane = PS_TL_LANE_H + PS_TL_LANE_GAP;
      double content = ch ? ps_timeline_chart_height (ch) : PS_TL_AXIS_H + 2 * lane;
      *minimum = (int) (PS_TL_AXIS_H + lane);
      *natural = (int) MIN (content, PS_TL_AXIS_H + 8 * lane + 4);
    }
}

/* ---- hit testing and tooltips ------------------------------------------- */

static ps_timeline_hit
hit_at (PsTimelineWidget *self, double x, double y)
{
  ps_timeline_hit none = { false, 0, PS_NONE };
  const ps_timeline_chart *ch = chart (self);
  if (!ch)
    return none;
  ps_timeline_view v;
  ps_style st;
  make_view (self, &v, &st);
  return ps_timeline_chart_hit (ch, &v, x, y);
}

guint
ps_timeline_widget_span_at (PsTimelineWidget *self, double x, double y, gboolean *is_measured)
{
  g_return_val_if_fail (PS_IS_TIMELINE_WIDGET (self), PS_NONE);
  ps_timeline_hit h = hit_at (self, x, y);
  if (is_measured)
    *is_measured = h.span && h.layer == PS_TL_LAYER_MEASURED;
  return h.span && h.layer != PS_TL_LAYER_GHOST ? h.index : PS_NONE;
}

guint
ps_timeline_widget_wait_at (PsTimelineWidget *self, double x, double y)
{
  g_return_val_if_fail (PS_IS_TIMELINE_WIDGET (self), PS_NONE);
  ps_timeline_hit h = hit_at (self, x, y);
  return h.span ? PS_NONE : h.index;
}

static gboolean
query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
               gpointer data)
{
  PsTimelineWidget *self = PS_TIMELINE_WIDGET (widget);
  ps_timeline_hit h = hit_at (self, x, y);
  if (h.index == PS_NONE)
    return FALSE;
  char text[1024];
  ps_timeline_chart_hit_text (chart (self), h, text, sizeof text);
  if (!text[0])
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* ---- input -------------------------------------------------------------- */

static void
set_span (PsTimelineWidget *self, double t0, double span)
{
  if (self->session)
    ps_session_set_time_view (self->session, t0, t0 + span);
}

static void
zoom_at (PsTimelineWidget *self, double x, double factor)
{
  if (!self->session || !(factor > 0))
    return;
  double t0, t1;
  ps_session_get_time_view (self->session, &t0, &t1);
  double t = t_of (self, x), span = (t1 - t0) / factor;
  double frac = (x - gutter (self)) / plot_width (self);
  set_span (self, t - frac * span, span);
  /* The clamp may have moved the span: keep t under the pointer if it can. */
}

void
ps_timeline_widget_scroll (PsTimelineWidget *self, double dx, double dy, GdkModifierType mods)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self));
  if (!self->session || !isfinite (dx) || !isfinite (dy))
    return;
  if (mods & GDK_CONTROL_MASK)
    {
      /* GTK 4.8 gives scroll events no position: the motion controller
       * tracks the pointer. */
      double x = self->pointer_x >= 0 ? self->pointer_x : gutter (self) + plot_width (self) / 2;
      zoom_at (self, x, pow (1.15, -dy));
      return;
    }
  const ps_timeline_chart *ch = chart (self);
  double content = ch ? ps_timeline_chart_height (ch) : 0;
  gboolean tall = content > gtk_widget_get_height (GTK_WIDGET (self));
  if (tall && !(mods & GDK_SHIFT_MASK) && dx == 0)
    {
      self->y_offset += dy * 30;
      clamp_scroll (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
  double t0, t1;
  ps_session_get_time_view (self->session, &t0, &t1);
  double step = (dx != 0 ? dx : dy) * 40 * (t1 - t0) / plot_width (self);
  set_span (self, t0 + step, t1 - t0);
}

static gboolean
on_scroll (GtkEventControllerScroll *ctl, double dx, double dy, gpointer data)
{
  ps_timeline_widget_scroll (data, dx, dy,
                             gtk_event_controller_get_current_event_state (
                                 GTK_EVENT_CONTROLLER (ctl)));
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *m, double x, double y, gpointer data)
{
  PsTimelineWidget *self = data;
  self->pointer_x = x;
}

static void
on_leave (GtkEventControllerMotion *m, gpointer data)
{
  PsTimelineWidget *self = data;
  self->pointer_x = -1;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, gpointer data)
{
  PsTimelineWidget *self = data;
  double t1;
  self->drag_t0 = 0;
  if (self->session)
    ps_session_get_time_view (self->session, &self->drag_t0, &t1);
  self->drag_y0 = self->y_offset;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, gpointer data)
{
  PsTimelineWidget *self = data;
  if (!self->session || (fabs (dx) < 3 && fabs (dy) < 3))
    return;
  double t0, t1;
  ps_session_get_time_view (self->session, &t0, &t1);
  set_span (self, self->drag_t0 - dx * (t1 - t0) / plot_width (self), t1 - t0);
  self->y_offset = self->drag_y0 - dy;
  clamp_scroll (self);
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
  ps_timeline_hit h = hit_at (self, x, y);
  const ps_timeline_chart *ch = chart (self);
  if (h.span && h.layer != PS_TL_LAYER_GHOST)
    {
      const ps_timeline_layers *l = ps_timeline_chart_layers (ch);
      ps_session_select_span (self->session, h.layer == PS_TL_LAYER_MEASURED ? l->measured : l->tl,
                              h.index);
      return;
    }
  ps_session_select (self->session,
                     !h.span && h.index != PS_NONE ? PS_SELECTION_WAIT : PS_SELECTION_NONE,
                     h.index);
}

static void
on_zoom_begin (GtkGesture *g, GdkEventSequence *seq, gpointer data)
{
  PsTimelineWidget *self = data;
  double t0 = 0, t1 = 1;
  if (self->session)
    ps_session_get_time_view (self->session, &t0, &t1);
  self->zoom_span0 = t1 - t0;
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
  double span = self->zoom_span0 / scale;
  double frac = (x - gutter (self)) / plot_width (self);
  set_span (self, self->zoom_anchor_t - frac * span, span);
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
  else if (self->session)
    {
      double t0, t1;
      ps_session_get_time_view (self->session, &t0, &t1);
      double step = (t1 - t0) * 0.2;
      set_span (self, t0 + (g_str_equal (name, "timeline.pan-left") ? -step : step), t1 - t0);
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
  /* Lanes may have come or gone. */
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

static void
on_document_changed (PsTimelineWidget *self)
{
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
                                                    G_CALLBACK (on_plan_changed), self);
      self->handlers[2] = g_signal_connect_swapped (session, "selection-changed",
                                                    G_CALLBACK (on_changed), self);
      self->handlers[3] = g_signal_connect_swapped (session, "document-changed",
                                                    G_CALLBACK (on_document_changed), self);
      self->handlers[4] = g_signal_connect_swapped (session, "time-view-changed",
                                                    G_CALLBACK (on_changed), self);
      g_signal_connect_object (session, "notify::color-by", G_CALLBACK (on_changed), self,
                               G_CONNECT_SWAPPED);
      g_signal_connect_object (session, "notify::show-critical", G_CALLBACK (on_changed), self,
                               G_CONNECT_SWAPPED);
      g_signal_connect_object (session, "notify::dark", G_CALLBACK (on_changed), self,
                               G_CONNECT_SWAPPED);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION]);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

void
ps_timeline_widget_zoom_fit (PsTimelineWidget *self)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self));
  if (self->session)
    ps_session_fit_time_view (self->session);
}

void
ps_timeline_widget_zoom (PsTimelineWidget *self, double factor)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self) && factor > 0);
  zoom_at (self, gutter (self) + plot_width (self) / 2, factor);
}

void
ps_timeline_widget_get_range (PsTimelineWidget *self, double *t0, double *t1)
{
  g_return_if_fail (PS_IS_TIMELINE_WIDGET (self));
  *t0 = 0;
  *t1 = 0;
  if (self->session)
    ps_session_get_time_view (self->session, t0, t1);
}

double
ps_timeline_widget_time_at (PsTimelineWidget *self, double x)
{
  g_return_val_if_fail (PS_IS_TIMELINE_WIDGET (self), 0);
  return t_of (self, x);
}

static void
ps_timeline_widget_dispose (GObject *object)
{
  PsTimelineWidget *self = PS_TIMELINE_WIDGET (object);
  ps_timeline_widget_set_session (self, NULL);
  g_clear_pointer (&self->marks, g_free);
  self->n_marks = 0;
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
  self->pointer_x = -1;
  gtk_widget_set_focusable (w, TRUE);
  gtk_widget_set_focus_on_click (w, TRUE);
  gtk_widget_set_has_tooltip (w, TRUE);
  gtk_widget_set_overflow (w, GTK_OVERFLOW_HIDDEN);
  g_signal_connect (w, "query-tooltip", G_CALLBACK (query_tooltip), NULL);

  GtkEventController *scroll = gtk_event_controller_scroll_new (
      GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (w, scroll);

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (w, motion);

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
