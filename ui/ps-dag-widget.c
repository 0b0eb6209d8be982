/* ps-dag-widget.c: draws the session's annotated DAG scene through the
 * renderer on a cairo canvas (ps_draw_diagram culls to the view and drops
 * text that would be too small to read), and lays hover, selection,
 * search matches and baseline changes over it as marks. */
#include "ps-dag-widget.h"

#include <math.h>
#include <string.h>

#include "ps-canvas.h"
#include "ps-draw.h"
#include "ps-format.h"
#include "ps-session.h"

#define MARGIN 24.0

struct _PsDagWidget
{
  GtkWidget parent_instance;

  PsSession *session;
  gulong handlers[4];

  double zoom;       /* pixels per point; <= 0: fit on next draw */
  gboolean fitted;   /* the view shows the whole graph: keep it so on resize */
  double ox, oy;     /* scene point at the widget's top left */
  double drag_ox, drag_oy;
  double zoom0, anchor_x, anchor_y;
  double pointer_x, pointer_y; /* where the last motion left the pointer; < 0: outside */
  guint hover;       /* box under the pointer */
  guint8 *matched;   /* per graph node, or NULL */
  guint n_matched;
  guint8 *marks;     /* per box, rebuilt each frame */
  guint n_marks;
};

enum { PROP_0, PROP_SESSION, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (PsDagWidget, ps_dag_widget, GTK_TYPE_WIDGET)

static const ps_scene *
scene (PsDagWidget *self)
{
  const ps_scene *s = self->session ? ps_session_get_scene (self->session) : NULL;
  return s && s->laid_out ? s : NULL;
}

/* The band below the diagram: the note (critical path) and the legend. */
static double
band_height (PsDagWidget *self, const ps_scene *s)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)) - 16;
  if (!s || w < 200)
    return 0;
  double h = ps_legend_height (s, w);
  if (s->subtitle != PS_NONE)
    h += 14;
  return h > 0 ? h + 10 : 0;
}

static double
view_height (PsDagWidget *self)
{
  return MAX (gtk_widget_get_height (GTK_WIDGET (self)) - band_height (self, scene (self)), 32);
}

static double
fit_zoom (PsDagWidget *self, const ps_scene *s)
{
  double w = MAX (gtk_widget_get_width (GTK_WIDGET (self)) - 2 * MARGIN, 32);
  double h = MAX (view_height (self) - 2 * MARGIN, 32);
  double z = MIN (w / MAX (s->width, 1), h / MAX (s->height, 1));
  return CLAMP (z, 1e-4, 2.0);
}

static void
clamp_view (PsDagWidget *self, const ps_scene *s)
{
  double fz = fit_zoom (self, s);
  self->zoom = CLAMP (self->zoom, MIN (fz * 0.5, 0.05), 8.0);
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = view_height (self) / self->zoom;
  /* Keep at least a quarter of the view on the diagram. */
  self->ox = CLAMP (self->ox, -vw * 0.75, MAX (s->width - vw * 0.25, -vw * 0.75));
  self->oy = CLAMP (self->oy, -vh * 0.75, MAX (s->height - vh * 0.25, -vh * 0.75));
}

static void
ensure_view (PsDagWidget *self, const ps_scene *s)
{
  if (self->zoom > 0)
    return;
  self->fitted = TRUE;
  self->zoom = fit_zoom (self, s);
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = view_height (self) / self->zoom;
  self->ox = (s->width - vw) / 2;
  self->oy = (s->height - vh) / 2;
}

static void
set_rgb (cairo_t *cr, guint32 rgb)
{
  cairo_set_source_rgb (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                        (rgb & 0xff) / 255.0);
}

/* Marks per box: selection, hover, search matches, baseline changes. */
static const guint8 *
build_marks (PsDagWidget *self, const ps_scene *s)
{
  if (self->n_marks < s->n_nodes)
    {
      g_free (self->marks);
      self->marks = g_new (guint8, s->n_nodes);
      self->n_marks = s->n_nodes;
    }
  memset (self->marks, 0, s->n_nodes);
  guint id = 0;
  PsSelectionKind kind = ps_session_get_selection (self->session, &id);
  guint sel = kind == PS_SELECTION_NODE  ? ps_session_node_box (self->session, id)
              : kind == PS_SELECTION_BOX ? id
                                         : PS_NONE;
  if (sel < s->n_nodes)
    self->marks[sel] |= PS_MARK_SELECTED;
  if (self->hover < s->n_nodes)
    self->marks[self->hover] |= PS_MARK_HOVER;
  if (self->matched)
    for (uint32_t v = 0; v < s->n_graph_nodes; v++)
      if (self->matched[v] && s->node_box[v] < s->n_nodes)
        self->marks[s->node_box[v]] |= PS_MARK_MATCH;
  if (ps_session_has_baseline (self->session))
    for (uint32_t v = 0; v < s->n_graph_nodes; v++)
      if (s->node_box[v] < s->n_nodes && ps_session_node_changed (self->session, v))
        self->marks[s->node_box[v]] |= PS_MARK_CHANGED;
  return self->marks;
}

static void
draw_message (PsDagWidget *self, cairo_t *cr, const ps_style *st)
{
  const char *msg = "No graph open";
  if (self->session && ps_session_get_title (self->session))
    msg = ps_session_get_busy (self->session) ? "Laying out the graph…"
          : ps_session_get_plan_error (self->session) ?: "No layout: press F5 to lay it out";
  ps_canvas *c = ps_canvas_new_cairo (cr);
  ps_font f = { 11, false, false };
  ps_canvas_text (c, 16, 24, msg, &f, PS_ALIGN_LEFT, st->pal->text_dim,
                  gtk_widget_get_width (GTK_WIDGET (self)) - 32);
  ps_canvas_finish (c);
}

static void
draw (PsDagWidget *self, cairo_t *cr, double width, double height)
{
  ps_style st;
  if (self->session)
    ps_session_get_style (self->session, &st);
  else
    ps_style_init (&st, PS_THEME_LIGHT, PS_COLOR_BY_STREAM);
  set_rgb (cr, st.pal->background);
  cairo_paint (cr);
  const ps_scene *s = scene (self);
  if (!s)
    {
      draw_message (self, cr, &st);
      return;
    }
  ensure_view (self, s);
  clamp_view (self, s);
  double band = band_height (self, s), vh = height - band;
  ps_diagram_view v = { 0, 0, self->ox, self->oy, self->ox + width / self->zoom,
                        self->oy + vh / self->zoom, self->zoom, build_marks (self, s) };
  cairo_save (cr);
  cairo_rectangle (cr, 0, 0, width, vh);
  cairo_clip (cr);
  cairo_scale (cr, self->zoom, self->zoom);
  cairo_translate (cr, -self->ox, -self->oy);
  ps_canvas *c = ps_canvas_new_cairo (cr);
  ps_draw_diagram (s, &v, c);
  ps_canvas_finish (c);
  cairo_restore (cr);
  if (band > 0)
    {
      set_rgb (cr, st.pal->surface);
      cairo_rectangle (cr, 0, vh, width, band);
      cairo_fill (cr);
      c = ps_canvas_new_cairo (cr);
      double y = vh + 5;
      if (s->subtitle != PS_NONE)
        {
          ps_font f = { 9, false, false };
          ps_canvas_text (c, 8, y + 10, ps_scene_text (s, s->subtitle), &f, PS_ALIGN_LEFT,
                          st.pal->text_dim, width - 16);
          y += 14;
        }
      ps_draw_legend (s, 8, y, width - 16, c);
      ps_canvas_finish (c);
    }
}

static void
ps_dag_widget_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  if (w <= 0 || h <= 0)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  draw (PS_DAG_WIDGET (widget), cr, w, h);
  cairo_destroy (cr);
}

static void
ps_dag_widget_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *min,
                       int *nat, int *min_baseline, int *nat_baseline)
{
  *min = 120;
  *nat = orientation == GTK_ORIENTATION_HORIZONTAL ? 640 : 360;
}

static void
ps_dag_widget_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  PsDagWidget *self = PS_DAG_WIDGET (widget);
  /* A window that is resized keeps showing the whole graph while the user
   * has not zoomed. */
  if (self->fitted)
    self->zoom = 0;
}

/* ---- hit testing -------------------------------------------------------- */

void
ps_dag_widget_to_diagram (PsDagWidget *self, double x, double y, double *dx, double *dy)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self));
  const ps_scene *s = scene (self);
  if (s)
    ensure_view (self, s);
  double z = self->zoom > 0 ? self->zoom : 1;
  *dx = self->ox + x / z;
  *dy = self->oy + y / z;
}

void
ps_dag_widget_get_visible (PsDagWidget *self, double *x0, double *y0, double *x1, double *y1)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self));
  ps_dag_widget_to_diagram (self, 0, 0, x0, y0);
  ps_dag_widget_to_diagram (self, gtk_widget_get_width (GTK_WIDGET (self)), view_height (self),
                            x1, y1);
}

guint
ps_dag_widget_box_at (PsDagWidget *self, double x, double y)
{
  g_return_val_if_fail (PS_IS_DAG_WIDGET (self), PS_NONE);
  const ps_scene *s = scene (self);
  if (!s || self->zoom <= 0 || y > view_height (self))
    return PS_NONE;
  return ps_scene_box_at (s, self->ox + x / self->zoom, self->oy + y / self->zoom,
                          2 / self->zoom);
}

static gboolean
query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
               gpointer data)
{
  PsDagWidget *self = PS_DAG_WIDGET (widget);
  guint b = ps_dag_widget_box_at (self, x, y);
  const ps_scene *s = scene (self);
  if (b == PS_NONE || !s)
    return FALSE;
  const ps_scene_node *n = &s->nodes[b];
  GString *text = g_string_new (ps_scene_text (s, n->tooltip) ?: ps_scene_text (s, n->label));
  guint node = n->count == 1 ? ps_session_box_node (self->session, b) : PS_NONE;
  const ps_plan *p = ps_session_get_plan (self->session);
  if (node != PS_NONE && p && node < p->graph->n_nodes && p->node_step[node] < p->n_steps)
    {
      const ps_step *st = &p->steps[p->node_step[node]];
      g_string_append_printf (text, "\nplan: step %u on stream %u", p->node_step[node],
                              st->stream);
      if (st->nodes_count > 1)
        g_string_append_printf (text, ", fused with %u other node%s", st->nodes_count - 1,
                                st->nodes_count > 2 ? "s" : "");
      if (ps_session_node_changed (self->session, node))
        g_string_append (text, "\nchanged since the baseline");
    }
  else if (n->count > 1)
    g_string_append (text, "\nclick to list its nodes in the inspector");
  gtk_tooltip_set_text (tooltip, text->str);
  g_string_free (text, TRUE);
  return TRUE;
}

/* ---- input -------------------------------------------------------------- */

static void
zoom_at (PsDagWidget *self, double x, double y, double factor)
{
  const ps_scene *s = scene (self);
  if (!s)
    return;
  ensure_view (self, s);
  self->fitted = FALSE;
  double sx = self->ox + x / self->zoom, sy = self->oy + y / self->zoom;
  self->zoom *= factor;
  clamp_view (self, s);
  self->ox = sx - x / self->zoom;
  self->oy = sy - y / self->zoom;
  clamp_view (self, s);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ps_dag_widget_scroll (PsDagWidget *self, double dx, double dy, GdkModifierType mods)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self));
  const ps_scene *s = scene (self);
  if (!s || !isfinite (dx) || !isfinite (dy))
    return;
  ensure_view (self, s);
  if (mods & GDK_CONTROL_MASK)
    {
      /* GTK 4.8 gives scroll events no position: the motion controller
       * tracks the pointer. */
      double x = self->pointer_x, y = self->pointer_y;
      if (x < 0 || y < 0)
        {
          x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
          y = view_height (self) / 2.0;
        }
      zoom_at (self, x, y, pow (1.15, -dy));
      return;
    }
  if (mods & GDK_SHIFT_MASK)
    {
      double t = dx;
      dx = dy;
      dy = t;
    }
  self->fitted = FALSE;
  self->ox += dx * 40 / self->zoom;
  self->oy += dy * 40 / self->zoom;
  clamp_view (self, s);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
on_scroll (GtkEventControllerScroll *ctl, double dx, double dy, gpointer data)
{
  PsDagWidget *self = data;
  if (!scene (self))
    return FALSE;
  ps_dag_widget_scroll (self, dx, dy,
                        gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (ctl)));
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, gpointer data)
{
  PsDagWidget *self = data;
  self->drag_ox = self->ox;
  self->drag_oy = self->oy;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, gpointer data)
{
  PsDagWidget *self = data;
  const ps_scene *s = scene (self);
  if (!s || self->zoom <= 0)
    return;
  self->fitted = FALSE;
  self->ox = self->drag_ox - dx / self->zoom;
  self->oy = self->drag_oy - dy / self->zoom;
  clamp_view (self, s);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, gpointer data)
{
  PsDagWidget *self = data;
  if (fabs (dx) > 3 || fabs (dy) > 3 || !self->session)
    return;
  double x, y;
  gtk_gesture_drag_get_start_point (g, &x, &y);
  ps_session_select_box (self->session, ps_dag_widget_box_at (self, x, y));
}

static void
on_motion (GtkEventControllerMotion *m, double x, double y, gpointer data)
{
  PsDagWidget *self = data;
  self->pointer_x = x;
  self->pointer_y = y;
  guint b = ps_dag_widget_box_at (self, x, y);
  if (b != self->hover)
    {
      self->hover = b;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_leave (GtkEventControllerMotion *m, gpointer data)
{
  PsDagWidget *self = data;
  self->hover = PS_NONE;
  self->pointer_x = self->pointer_y = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_zoom_begin (GtkGesture *g, GdkEventSequence *seq, gpointer data)
{
  PsDagWidget *self = data;
  const ps_scene *s = scene (self);
  if (!s)
    return;
  ensure_view (self, s);
  self->zoom0 = self->zoom;
  double x, y;
  if (gtk_gesture_get_bounding_box_center (g, &x, &y))
    {
      self->anchor_x = self->ox + x / self->zoom;
      self->anchor_y = self->oy + y / self->zoom;
    }
}

static void
on_zoom_changed (GtkGestureZoom *g, double scale, gpointer data)
{
  PsDagWidget *self = data;
  const ps_scene *s = scene (self);
  double x, y;
  if (!s || scale <= 0 || !gtk_gesture_get_bounding_box_center (GTK_GESTURE (g), &x, &y))
    return;
  self->fitted = FALSE;
  self->zoom = self->zoom0 * scale;
  clamp_view (self, s);
  self->ox = self->anchor_x - x / self->zoom;
  self->oy = self->anchor_y - y / self->zoom;
  clamp_view (self, s);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
action_view (GtkWidget *widget, const char *name, GVariant *param)
{
  PsDagWidget *self = PS_DAG_WIDGET (widget);
  if (g_str_equal (name, "dag.zoom-in"))
    ps_dag_widget_zoom (self, 1.25);
  else if (g_str_equal (name, "dag.zoom-out"))
    ps_dag_widget_zoom (self, 0.8);
  else
    ps_dag_widget_zoom_fit (self);
}

/* ---- public ------------------------------------------------------------- */

static void
on_redraw (PsDagWidget *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_layout_changed (PsDagWidget *self)
{
  self->zoom = 0;
  self->hover = PS_NONE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_selection_changed (PsDagWidget *self)
{
  guint id;
  if (ps_session_get_selection (self->session, &id) == PS_SELECTION_NODE)
    ps_dag_widget_reveal_node (self, id);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ps_dag_widget_set_session (PsDagWidget *self, PsSession *session)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self));
  if (self->session == session)
    return;
  if (self->session)
    for (guint i = 0; i < G_N_ELEMENTS (self->handlers); i++)
      g_clear_signal_handler (&self->handlers[i], self->session);
  g_set_object (&self->session, session);
  if (session)
    {
      self->handlers[0] = g_signal_connect_swapped (session, "layout-changed",
                                                    G_CALLBACK (on_layout_changed), self);
      self->handlers[1] = g_signal_connect_swapped (session, "plan-changed",
                                                    G_CALLBACK (on_redraw), self);
      self->handlers[2] = g_signal_connect_swapped (session, "selection-changed",
                                                    G_CALLBACK (on_selection_changed), self);
      self->handlers[3] = g_signal_connect_swapped (session, "measured-changed",
                                                    G_CALLBACK (on_redraw), self);
      g_signal_connect_object (session, "notify::color-by", G_CALLBACK (on_redraw), self,
                               G_CONNECT_SWAPPED);
      g_signal_connect_object (session, "notify::show-critical", G_CALLBACK (on_redraw), self,
                               G_CONNECT_SWAPPED);
      g_signal_connect_object (session, "notify::dark", G_CALLBACK (on_redraw), self,
                               G_CONNECT_SWAPPED);
    }
  self->zoom = 0;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION]);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ps_dag_widget_zoom_fit (PsDagWidget *self)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self));
  self->zoom = 0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ps_dag_widget_zoom (PsDagWidget *self, double factor)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self) && factor > 0);
  zoom_at (self, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, view_height (self) / 2.0,
           factor);
}

double
ps_dag_widget_get_zoom (PsDagWidget *self)
{
  g_return_val_if_fail (PS_IS_DAG_WIDGET (self), 0);
  return self->zoom;
}

void
ps_dag_widget_set_matches (PsDagWidget *self, GArray *nodes)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self));
  g_clear_pointer (&self->matched, g_free);
  self->n_matched = 0;
  const ps_graph *g = self->session ? ps_session_get_graph (self->session) : NULL;
  if (nodes && nodes->len && g)
    {
      self->matched = g_new0 (guint8, MAX (g->n_nodes, 1));
      for (guint i = 0; i < nodes->len; i++)
        if (g_array_index (nodes, guint, i) < g->n_nodes)
          self->matched[g_array_index (nodes, guint, i)] = 1;
      self->n_matched = nodes->len;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ps_dag_widget_reveal_node (PsDagWidget *self, guint node)
{
  g_return_if_fail (PS_IS_DAG_WIDGET (self));
  const ps_scene *s = scene (self);
  guint b = self->session ? ps_session_node_box (self->session, node) : PS_NONE;
  if (!s || b == PS_NONE || b >= s->n_nodes)
    return;
  ensure_view (self, s);
  const ps_scene_node *n = &s->nodes[b];
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = view_height (self) / self->zoom;
  if (n->x - n->w / 2 < self->ox || n->x + n->w / 2 > self->ox + vw
      || n->y - n->h / 2 < self->oy || n->y + n->h / 2 > self->oy + vh)
    {
      self->fitted = FALSE;
      self->ox = n->x - vw / 2;
      self->oy = n->y - vh / 2;
      clamp_view (self, s);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
ps_dag_widget_dispose (GObject *object)
{
  PsDagWidget *self = PS_DAG_WIDGET (object);
  ps_dag_widget_set_session (self, NULL);
  g_clear_pointer (&self->matched, g_free);
  g_clear_pointer (&self->marks, g_free);
  self->n_marks = 0;
  G_OBJECT_CLASS (ps_dag_widget_parent_class)->dispose (object);
}

static void
ps_dag_widget_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  if (id == PROP_SESSION)
    g_value_set_object (value, PS_DAG_WIDGET (object)->session);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
}

static void
ps_dag_widget_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  if (id == PROP_SESSION)
    ps_dag_widget_set_session (PS_DAG_WIDGET (object), g_value_get_object (value));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
}

static void
ps_dag_widget_class_init (PsDagWidgetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = ps_dag_widget_dispose;
  object_class->get_property = ps_dag_widget_get_property;
  object_class->set_property = ps_dag_widget_set_property;
  widget_class->snapshot = ps_dag_widget_snapshot;
  widget_class->measure = ps_dag_widget_measure;
  widget_class->size_allocate = ps_dag_widget_size_allocate;

  properties[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, PS_TYPE_SESSION,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY
                                                      | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_install_action (widget_class, "dag.zoom-in", NULL, action_view);
  gtk_widget_class_install_action (widget_class, "dag.zoom-out", NULL, action_view);
  gtk_widget_class_install_action (widget_class, "dag.zoom-fit", NULL, action_view);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "dag.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "dag.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "dag.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "dag.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "dag.zoom-out",
                                       NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "dag.zoom-fit", NULL);
  gtk_widget_class_set_css_name (widget_class, "dagview");
}

static void
ps_dag_widget_init (PsDagWidget *self)
{
  GtkWidget *w = GTK_WIDGET (self);
  self->hover = PS_NONE;
  self->pointer_x = self->pointer_y = -1;
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

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (w, motion);

  GtkGesture *zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (on_zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (on_zoom_changed), self);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (zoom));
}
