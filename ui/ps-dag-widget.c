/* ps-dag-widget.c: draws the laid-out DAG scene with cairo inside a
 * GtkSnapshot, culled to the visible rectangle, with text only when boxes
 * are big enough on screen to read it. */
#include "ps-dag-widget.h"

#include <math.h>

#include "ps-dag-view.h"
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
  guint hover;       /* box under the pointer */
  guint8 *matched;   /* per graph node, or NULL */
  guint n_matched;
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

static double
fit_zoom (PsDagWidget *self, const ps_scene *s)
{
  double w = MAX (gtk_widget_get_width (GTK_WIDGET (self)) - 2 * MARGIN, 32);
  double h = MAX (gtk_widget_get_height (GTK_WIDGET (self)) - 2 * MARGIN, 32);
  double z = MIN (w / MAX (s->width, 1), h / MAX (s->height, 1));
  return CLAMP (z, 1e-4, 2.0);
}

static void
clamp_view (PsDagWidget *self, const ps_scene *s)
{
  double fz = fit_zoom (self, s);
  self->zoom = CLAMP (self->zoom, MIN (fz * 0.5, 0.05), 8.0);
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom;
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
  double vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom;
  self->ox = (s->width - vw) / 2;
  self->oy = (s->height - vh) / 2;
}

static void
set_rgb (cairo_t *cr, guint32 rgb, double alpha)
{
  cairo_set_source_rgba (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                         (rgb & 0xff) / 255.0, alpha);
}

static guint32
box_color (PsDagWidget *self, const ps_scene_node *n, guint box)
{
  guint node = ps_session_box_node (self->session, box);
  if (node == PS_NONE)
    return n->fill;
  return ps_session_node_color (self->session, node);
}

static gboolean
box_critical (PsDagWidget *self, const ps_scene_node *n, guint box)
{
  if (!ps_session_get_show_critical (self->session))
    return FALSE;
  guint node = ps_session_box_node (self->session, box);
  if (node == PS_NONE)
    return (n->flags & PS_SCENE_CRITICAL) != 0;
  return ps_session_node_critical (self->session, node);
}

static void
shape_path (cairo_t *cr, const ps_scene *s, const ps_scene_node *n)
{
  double x = n->x - n->w / 2, y = n->y - n->h / 2;
  if (n->poly_count >= 3 && n->poly_begin + n->poly_count <= s->n_pts)
    {
      const ps_pt *p = &s->pts[n->poly_begin];
      cairo_move_to (cr, p[0].x, p[0].y);
      for (uint32_t i = 1; i < n->poly_count; i++)
        cairo_line_to (cr, p[i].x, p[i].y);
      cairo_close_path (cr);
      return;
    }
  switch (n->shape)
    {
    case PS_SHAPE_ELLIPSE:
    case PS_SHAPE_CIRCLE:
      cairo_save (cr);
      cairo_translate (cr, n->x, n->y);
      cairo_scale (cr, n->w / 2, n->h / 2);
      cairo_new_sub_path (cr);
      cairo_arc (cr, 0, 0, 1, 0, 2 * G_PI);
      cairo_restore (cr);
      break;
    case PS_SHAPE_DIAMOND:
      cairo_move_to (cr, n->x, y);
      cairo_line_to (cr, x + n->w, n->y);
      cairo_line_to (cr, n->x, y + n->h);
      cairo_line_to (cr, x, n->y);
      cairo_close_path (cr);
      break;
    case PS_SHAPE_PARALLELOGRAM:
      cairo_move_to (cr, x + n->h * 0.3, y);
      cairo_line_to (cr, x + n->w, y);
      cairo_line_to (cr, x + n->w - n->h * 0.3, y + n->h);
      cairo_line_to (cr, x, y + n->h);
      cairo_close_path (cr);
      break;
    case PS_SHAPE_ROUNDED:
    case PS_SHAPE_STACK:
      {
        double r = MIN (6, MIN (n->w, n->h) / 3);
        cairo_new_sub_path (cr);
        cairo_arc (cr, x + n->w - r, y + r, r, -G_PI / 2, 0);
        cairo_arc (cr, x + n->w - r, y + n->h - r, r, 0, G_PI / 2);
        cairo_arc (cr, x + r, y + n->h - r, r, G_PI / 2, G_PI);
        cairo_arc (cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
        cairo_close_path (cr);
        break;
      }
    default:
      cairo_rectangle (cr, x, y, n->w, n->h);
    }
}

static void
draw_labels (PsDagWidget *self, cairo_t *cr, PangoLayout *layout, PangoFontDescription **fonts,
             const ps_scene *s, const ps_scene_node *n, guint32 fill)
{
  const char *lines[3] = { ps_scene_text (s, n->label), ps_scene_text (s, n->detail),
                           ps_scene_text (s, n->detail2) };
  int count = 0;
  for (int i = 0; i < 3; i++)
    count += lines[i] != NULL;
  double line_h = 12.5;
  double y = n->y - count * line_h / 2;
  set_rgb (cr, ps_color_text_on (fill), 1);
  pango_layout_set_width (layout, (int) (MAX (n->w - 8, 8) * PANGO_SCALE));
  for (int i = 0; i < 3; i++)
    {
      if (!lines[i])
        continue;
      pango_layout_set_font_description (layout, i == 0 ? fonts[0] : fonts[1]);
      pango_layout_set_text (layout, lines[i], -1);
      int lw, lh;
      pango_layout_get_pixel_size (layout, &lw, &lh);
      cairo_move_to (cr, n->x - MIN (lw, n->w - 8) / 2.0, y + (line_h - lh) / 2);
      pango_cairo_show_layout (cr, layout);
      y += line_h;
    }
}

/* Edge styles, drawn as one path each: cairo strokes one long path much
 * faster than thousands of short ones. */
enum { EDGE_PLAIN, EDGE_CROSS, EDGE_CRITICAL, EDGE_N_STYLES, EDGE_HIDDEN = 255 };

static guint8
edge_style (PsDagWidget *self, const ps_scene *s, const ps_scene_edge *e, const ps_plan *p,
            gboolean crit, double vx0, double vy0, double vx1, double vy1)
{
  if (e->pts_count < 4 || e->pts_begin + e->pts_count > s->n_pts)
    return EDGE_HIDDEN;
  const ps_pt *pt = &s->pts[e->pts_begin];
  double bx0 = pt[0].x, by0 = pt[0].y, bx1 = bx0, by1 = by0;
  for (uint32_t k = 1; k < e->pts_count; k++)
    {
      bx0 = MIN (bx0, pt[k].x);
      bx1 = MAX (bx1, pt[k].x);
      by0 = MIN (by0, pt[k].y);
      by1 = MAX (by1, pt[k].y);
    }
  if (e->has_tip)
    {
      bx0 = MIN (bx0, e->tip.x), bx1 = MAX (bx1, e->tip.x);
      by0 = MIN (by0, e->tip.y), by1 = MAX (by1, e->tip.y);
    }
  if (bx1 < vx0 || bx0 > vx1 || by1 < vy0 || by0 > vy1)
    return EDGE_HIDDEN;
  guint a = ps_session_box_node (self->session, e->from);
  guint b = ps_session_box_node (self->session, e->to);
  if (crit && a != PS_NONE && b != PS_NONE && ps_session_node_critical (self->session, a)
      && ps_session_node_critical (self->session, b))
    return EDGE_CRITICAL;
  if (p && a != PS_NONE && b != PS_NONE && a < p->graph->n_nodes && b < p->graph->n_nodes
      && p->node_step[a] < p->n_steps && p->node_step[b] < p->n_steps
      && p->steps[p->node_step[a]].stream != p->steps[p->node_step[b]].stream)
    return EDGE_CROSS;
  return EDGE_PLAIN;
}

static void
draw_edges (PsDagWidget *self, cairo_t *cr, const ps_scene *s, double vx0, double vy0,
            double vx1, double vy1)
{
  const ps_plan *p = ps_session_get_plan (self->session);
  gboolean crit = ps_session_get_show_critical (self->session);
  g_autofree guint8 *style = g_new (guint8, MAX (s->n_edges, 1));
  for (uint32_t i = 0; i < s->n_edges; i++)
    style[i] = edge_style (self, s, &s->edges[i], p, crit, vx0, vy0, vx1, vy1);
  static const guint32 colors[EDGE_N_STYLES] = { 0x606060, PS_COLOR_CROSS, PS_COLOR_CRITICAL };
  static const double widths[EDGE_N_STYLES] = { 1.0, 1.0, 2.2 };
  for (guint8 st = 0; st < EDGE_N_STYLES; st++)
    {
      cairo_new_path (cr);
      gboolean any = FALSE;
      for (uint32_t i = 0; i < s->n_edges; i++)
        {
          if (style[i] != st)
            continue;
          const ps_scene_edge *e = &s->edges[i];
          const ps_pt *pt = &s->pts[e->pts_begin];
          cairo_move_to (cr, pt[0].x, pt[0].y);
          for (uint32_t k = 1; k + 2 < e->pts_count; k += 3)
            cairo_curve_to (cr, pt[k].x, pt[k].y, pt[k + 1].x, pt[k + 1].y, pt[k + 2].x,
                            pt[k + 2].y);
          any = TRUE;
        }
      if (!any)
        continue;
      set_rgb (cr, colors[st], st == EDGE_CRITICAL ? 0.95 : 0.75);
      cairo_set_line_width (cr, MAX (widths[st], 0.6 / self->zoom));
      if (st == EDGE_CROSS)
        {
          double dash[] = { 5, 3 };
          cairo_set_dash (cr, dash, 2, 0);
        }
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      /* The arrowheads of the same style. */
      for (uint32_t i = 0; i < s->n_edges; i++)
        {
          const ps_scene_edge *e = &s->edges[i];
          if (style[i] != st || !e->has_tip)
            continue;
          ps_pt end = s->pts[e->pts_begin + e->pts_count - 1];
          double ang = atan2 (e->tip.y - end.y, e->tip.x - end.x);
          double len = MAX (hypot (e->tip.x - end.x, e->tip.y - end.y), 6);
          cairo_move_to (cr, e->tip.x, e->tip.y);
          cairo_line_to (cr, e->tip.x - len * cos (ang - 0.35), e->tip.y - len * sin (ang - 0.35));
          cairo_line_to (cr, e->tip.x - len * cos (ang + 0.35), e->tip.y - len * sin (ang + 0.35));
          cairo_close_path (cr);
        }
      cairo_fill (cr);
    }
}

/* Dashed frames around the boxes of each fused group of the current plan. */
static void
draw_group_frames (PsDagWidget *self, cairo_t *cr, const ps_scene *s)
{
  const ps_plan *p = ps_session_get_plan (self->session);
  if (!p)
    return;
  double dash[] = { 4, 3 };
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, 1.5);
  for (uint32_t st = 0; st < p->n_steps; st++)
    {
      const ps_step *step = &p->steps[st];
      if (step->nodes_count < 2)
        continue;
      double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
      guint boxes = 0, last_box = PS_NONE;
      for (uint32_t k = 0; k < step->nodes_count; k++)
        {
          guint b = ps_session_node_box (self->session, p->step_nodes[step->nodes_begin + k]);
          if (b == PS_NONE || b == last_box)
            continue;
          const ps_scene_node *n = &s->nodes[b];
          x0 = MIN (x0, n->x - n->w / 2);
          x1 = MAX (x1, n->x + n->w / 2);
          y0 = MIN (y0, n->y - n->h / 2);
          y1 = MAX (y1, n->y + n->h / 2);
          boxes++;
          last_box = b;
        }
      if (boxes < 2)
        continue;
      set_rgb (cr, 0x444444, 0.8);
      cairo_rectangle (cr, x0 - 6, y0 - 6, x1 - x0 + 12, y1 - y0 + 12);
      cairo_stroke (cr);
    }
  cairo_set_dash (cr, NULL, 0, 0);
}

static void
draw (PsDagWidget *self, cairo_t *cr, double width, double height)
{
  cairo_set_source_rgb (cr, 0.985, 0.985, 0.99);
  cairo_paint (cr);
  const ps_scene *s = scene (self);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  if (!s)
    {
      const char *msg = "No graph open";
      if (self->session && ps_session_get_title (self->session))
        msg = ps_session_get_busy (self->session) ? "Laying out the graph…"
              : ps_session_get_plan_error (self->session) ?: "No layout";
      pango_layout_set_text (layout, msg, -1);
      cairo_set_source_rgb (cr, 0.45, 0.45, 0.45);
      cairo_move_to (cr, 16, 16);
      pango_cairo_show_layout (cr, layout);
      g_object_unref (layout);
      return;
    }
  ensure_view (self, s);
  clamp_view (self, s);
  double vx0 = self->ox, vy0 = self->oy;
  double vx1 = vx0 + width / self->zoom, vy1 = vy0 + height / self->zoom;

  cairo_save (cr);
  cairo_scale (cr, self->zoom, self->zoom);
  cairo_translate (cr, -self->ox, -self->oy);
  for (uint32_t i = 0; i < s->n_clusters; i++)
    {
      const ps_scene_cluster *c = &s->clusters[i];
      if (c->x1 < vx0 || c->x0 > vx1 || c->y1 < vy0 || c->y0 > vy1)
        continue;
      set_rgb (cr, c->fill, 0.35);
      cairo_rectangle (cr, c->x0, c->y0, c->x1 - c->x0, c->y1 - c->y0);
      cairo_fill_preserve (cr);
      set_rgb (cr, c->stroke, 0.8);
      cairo_set_line_width (cr, 1);
      cairo_stroke (cr);
    }
  draw_edges (self, cr, s, vx0, vy0, vx1, vy1);
  draw_group_frames (self, cr, s);

  guint sel_id = 0, sel_box = PS_NONE;
  if (self->session && ps_session_get_selection (self->session, &sel_id) == PS_SELECTION_NODE)
    sel_box = ps_session_node_box (self->session, sel_id);
  gboolean text = self->zoom >= 0.45;
  /* Label fonts in diagram points, so that they scale with the zoom. */
  PangoFontDescription *fonts[2] = { pango_font_description_from_string ("Sans Bold"),
                                     pango_font_description_from_string ("Sans") };
  pango_font_description_set_absolute_size (fonts[0], 10 * PANGO_SCALE);
  pango_font_description_set_absolute_size (fonts[1], 8.5 * PANGO_SCALE);
  for (uint32_t i = 0; i < s->n_nodes; i++)
    {
      const ps_scene_node *n = &s->nodes[i];
      if (n->x + n->w / 2 < vx0 || n->x - n->w / 2 > vx1 || n->y + n->h / 2 < vy0
          || n->y - n->h / 2 > vy1)
        continue;
      guint32 fill = box_color (self, n, i);
      guint node = ps_session_box_node (self->session, i);
      if (n->shape == PS_SHAPE_STACK || n->count > 1)
        {
          cairo_save (cr);
          cairo_translate (cr, 3, 3);
          shape_path (cr, s, n);
          set_rgb (cr, ps_color_darker (fill), 0.5);
          cairo_fill (cr);
          cairo_restore (cr);
        }
      shape_path (cr, s, n);
      set_rgb (cr, fill, 1);
      cairo_fill_preserve (cr);
      gboolean crit = box_critical (self, n, i);
      set_rgb (cr, crit ? PS_COLOR_CRITICAL : ps_color_darker (fill), 1);
      cairo_set_line_width (cr, crit ? 2.5 : 1.0);
      cairo_stroke (cr);
      if (node != PS_NONE && ps_session_node_changed (self->session, node))
        {
          double dash[] = { 4, 2 };
          cairo_set_dash (cr, dash, 2, 0);
          shape_path (cr, s, n);
          set_rgb (cr, PS_COLOR_CROSS, 1);
          cairo_set_line_width (cr, 3);
          cairo_stroke (cr);
          cairo_set_dash (cr, NULL, 0, 0);
        }
      if (self->matched && node != PS_NONE && self->matched[node])
        {
          cairo_rectangle (cr, n->x - n->w / 2 - 5, n->y - n->h / 2 - 5, n->w + 10, n->h + 10);
          cairo_set_source_rgba (cr, 1.0, 0.8, 0.0, 0.9);
          cairo_set_line_width (cr, MAX (4, 3 / self->zoom));
          cairo_stroke (cr);
        }
      if (i == sel_box || i == self->hover)
        {
          cairo_rectangle (cr, n->x - n->w / 2 - 3, n->y - n->h / 2 - 3, n->w + 6, n->h + 6);
          cairo_set_source_rgba (cr, 0.1, 0.3, 0.9, i == sel_box ? 1 : 0.45);
          cairo_set_line_width (cr, MAX (i == sel_box ? 3 : 2, 2 / self->zoom));
          cairo_stroke (cr);
        }
      if (text && n->h * self->zoom >= 14)
        draw_labels (self, cr, layout, fonts, s, n, fill);
    }
  pango_font_description_free (fonts[0]);
  pango_font_description_free (fonts[1]);
  cairo_restore (cr);
  g_object_unref (layout);
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

guint
ps_dag_widget_box_at (PsDagWidget *self, double x, double y)
{
  g_return_val_if_fail (PS_IS_DAG_WIDGET (self), PS_NONE);
  const ps_scene *s = scene (self);
  if (!s || self->zoom <= 0)
    return PS_NONE;
  double sx = self->ox + x / self->zoom, sy = self->oy + y / self->zoom;
  double slop = 2 / self->zoom;
  for (uint32_t i = 0; i < s->n_nodes; i++)
    {
      const ps_scene_node *n = &s->nodes[i];
      if (fabs (sx - n->x) <= n->w / 2 + slop && fabs (sy - n->y) <= n->h / 2 + slop)
        return i;
    }
  return PS_NONE;
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
  guint node = ps_session_box_node (self->session, b);
  const ps_plan *p = ps_session_get_plan (self->session);
  if (node != PS_NONE && p && node < p->graph->n_nodes && p->node_step[node] < p->n_steps)
    {
      const ps_step *st = &p->steps[p->node_step[node]];
      g_string_append_printf (text, "\nplan: step %u on stream %u", p->node_step[node],
                              st->stream);
      if (st->nodes_count > 1)
        g_string_append_printf (text, ", fused with %u other node%s", st->nodes_count - 1,
                                st->nodes_count > 2 ? "s" : "");
      double d = ps_session_node_duration (self->session, node);
      char buf[32];
      if (d >= 0)
        g_string_append_printf (text, "\n%s %s",
                                ps_session_get_measured (self->session) ? "measured"
                                                                        : "predicted",
                                ps_format_duration (d, buf, sizeof buf));
      if (ps_session_node_critical (self->session, node))
        g_string_append (text, "\non the critical path");
      if (ps_session_node_changed (self->session, node))
        g_string_append (text, "\nchanged since the baseline");
    }
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

static gboolean
on_scroll (GtkEventControllerScroll *ctl, double dx, double dy, gpointer data)
{
  PsDagWidget *self = data;
  const ps_scene *s = scene (self);
  if (!s)
    return FALSE;
  ensure_view (self, s);
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (ctl));
  double x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
  double y = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;
  GdkEvent *ev = gtk_event_controller_get_current_event (GTK_EVENT_CONTROLLER (ctl));
  if (ev)
    gdk_event_get_position (ev, &x, &y);
  if (mods & GDK_CONTROL_MASK)
    zoom_at (self, x, y, pow (1.15, -dy));
  else
    {
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
  guint b = ps_dag_widget_box_at (self, x, y);
  guint node = b == PS_NONE ? PS_NONE : ps_session_box_node (self->session, b);
  ps_session_select (self->session, node == PS_NONE ? PS_SELECTION_NONE : PS_SELECTION_NODE,
                     node);
}

static void
on_motion (GtkEventControllerMotion *m, double x, double y, gpointer data)
{
  PsDagWidget *self = data;
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
  zoom_at (self, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
           gtk_widget_get_height (GTK_WIDGET (self)) / 2.0, factor);
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
  double vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom;
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
