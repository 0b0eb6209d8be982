/* ps-memory-widget.c: draws the pool as offset over time. */
#include "ps-memory-widget.h"

#include <math.h>

#include "ps-dag-view.h"
#include "ps-draw.h"
#include "ps-format.h"
#include "ps-session.h"

#define LEFT 84.0
#define TOP 26.0
#define PAD 10.0

struct _PsMemoryWidget
{
  GtkWidget parent_instance;
  PsSession *session;
};

G_DEFINE_FINAL_TYPE (PsMemoryWidget, ps_memory_widget, GTK_TYPE_WIDGET)

typedef struct {
  double x0, y0, w, h;
  double t_len;
  double pool;
} Frame;

static gboolean
frame (PsMemoryWidget *self, Frame *f)
{
  const ps_plan *p = self->session ? ps_session_get_plan (self->session) : NULL;
  const ps_timeline *tl = self->session ? ps_session_get_predicted (self->session) : NULL;
  if (!p || !tl || p->pool_bytes == 0)
    return FALSE;
  f->x0 = LEFT;
  f->y0 = TOP;
  f->w = MAX (gtk_widget_get_width (GTK_WIDGET (self)) - LEFT - PAD, 10);
  f->h = MAX (gtk_widget_get_height (GTK_WIDGET (self)) - TOP - PAD, 10);
  f->t_len = MAX (tl->makespan_ns, 1);
  f->pool = (double) p->pool_bytes;
  return TRUE;
}

static gboolean
buffer_rect (PsMemoryWidget *self, const Frame *f, guint b, double *x, double *y, double *w,
             double *h)
{
  const ps_plan *p = ps_session_get_plan (self->session);
  double t0, t1;
  if (p->offsets[b] == UINT64_MAX || !ps_session_buffer_live (self->session, b, &t0, &t1))
    return FALSE;
  *x = f->x0 + t0 / f->t_len * f->w;
  *w = MAX ((t1 - t0) / f->t_len * f->w, 2);
  *y = f->y0 + (double) p->offsets[b] / f->pool * f->h;
  *h = MAX ((double) p->graph->buffers[b].bytes / f->pool * f->h, 1.5);
  return TRUE;
}

static void
set_rgb (cairo_t *cr, guint32 rgb, double alpha)
{
  cairo_set_source_rgba (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                         (rgb & 0xff) / 255.0, alpha);
}

static void
draw (PsMemoryWidget *self, cairo_t *cr, double width, double height)
{
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  Frame f;
  if (!frame (self, &f))
    {
      pango_layout_set_text (layout, "No pooled buffers", -1);
      cairo_set_source_rgb (cr, 0.45, 0.45, 0.45);
      cairo_move_to (cr, 16, 16);
      pango_cairo_show_layout (cr, layout);
      g_object_unref (layout);
      return;
    }
  const ps_plan *p = ps_session_get_plan (self->session);
  const ps_graph *g = p->graph;
  cairo_set_source_rgb (cr, 0.97, 0.97, 0.98);
  cairo_rectangle (cr, f.x0, f.y0, f.w, f.h);
  cairo_fill (cr);
  /* Axes: time on top, offsets on the left. */
  char buf[32];
  cairo_set_line_width (cr, 1);
  for (int i = 0; i <= 4; i++)
    {
      double x = f.x0 + f.w * i / 4, y = f.y0 + f.h * i / 4;
      cairo_set_source_rgba (cr, 0, 0, 0, 0.1);
      cairo_move_to (cr, floor (x) + 0.5, f.y0);
      cairo_line_to (cr, floor (x) + 0.5, f.y0 + f.h);
      cairo_move_to (cr, f.x0, floor (y) + 0.5);
      cairo_line_to (cr, f.x0 + f.w, floor (y) + 0.5);
      cairo_stroke (cr);
      cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
      pango_layout_set_width (layout, -1);
      pango_layout_set_text (layout, ps_format_duration (f.t_len * i / 4, buf, sizeof buf), -1);
      int lw, lh;
      pango_layout_get_pixel_size (layout, &lw, &lh);
      cairo_move_to (cr, CLAMP (x - lw / 2.0, f.x0, width - lw - 2), 4);
      pango_cairo_show_layout (cr, layout);
      pango_layout_set_text (layout, ps_format_bytes (f.pool * i / 4, buf, sizeof buf), -1);
      pango_layout_get_pixel_size (layout, &lw, &lh);
      cairo_move_to (cr, f.x0 - lw - 6, CLAMP (y - lh / 2.0, f.y0, height - lh));
      pango_cairo_show_layout (cr, layout);
    }
  guint sel;
  PsSelectionKind kind = ps_session_get_selection (self->session, &sel);
  /* Buffers under two pixels wide or high go into one path, filled once:
   * a pool of 100,000 buffers is mostly such slivers, and one fill and
   * stroke each would make every frame slow. */
  for (uint32_t b = 0; b < g->n_buffers; b++)
    {
      double x, y, w, h;
      if (buffer_rect (self, &f, b, &x, &y, &w, &h) && (w < 2 || h < 2)
          && !(kind == PS_SELECTION_BUFFER && sel == b))
        cairo_rectangle (cr, x, y, MAX (w, 1), MAX (h, 1));
    }
  set_rgb (cr, 0x9fb7cc, 1);
  cairo_fill (cr);
  for (uint32_t b = 0; b < g->n_buffers; b++)
    {
      double x, y, w, h;
      if (!buffer_rect (self, &f, b, &x, &y, &w, &h))
        continue;
      if ((w < 2 || h < 2) && !(kind == PS_SELECTION_BUFFER && sel == b))
        continue;
      guint32 rgb = ps_color_stream ((int32_t) (b % 10));
      set_rgb (cr, rgb, 0.75);
      cairo_rectangle (cr, x, y, w, h);
      cairo_fill_preserve (cr);
      gboolean selected = kind == PS_SELECTION_BUFFER && sel == b;
      set_rgb (cr, selected ? 0x1a4de6 : ps_color_darker (rgb), 1);
      cairo_set_line_width (cr, selected ? 3 : 1);
      cairo_stroke (cr);
      if (w > 40 && h > 14)
        {
          pango_layout_set_width (layout, (int) ((w - 6) * PANGO_SCALE));
          pango_layout_set_text (layout, ps_buffer_name (g, b), -1);
          set_rgb (cr, ps_color_text_on (rgb), 1);
          cairo_move_to (cr, x + 3, y + 2);
          pango_cairo_show_layout (cr, layout);
        }
    }
  g_object_unref (layout);
}

static void
ps_memory_widget_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  if (w <= 0 || h <= 0)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  draw (PS_MEMORY_WIDGET (widget), cr, w, h);
  cairo_destroy (cr);
}

guint
ps_memory_widget_buffer_at (PsMemoryWidget *self, double px, double py)
{
  g_return_val_if_fail (PS_IS_MEMORY_WIDGET (self), PS_NONE);
  Frame f;
  if (!frame (self, &f))
    return PS_NONE;
  const ps_graph *g = ps_session_get_plan (self->session)->graph;
  for (uint32_t b = 0; b < g->n_buffers; b++)
    {
      double x, y, w, h;
      if (buffer_rect (self, &f, b, &x, &y, &w, &h) && px >= x && px <= x + w && py >= y
          && py <= y + h)
        return b;
    }
  return PS_NONE;
}

static gboolean
query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
               gpointer data)
{
  PsMemoryWidget *self = PS_MEMORY_WIDGET (widget);
  guint b = ps_memory_widget_buffer_at (self, x, y);
  if (b == PS_NONE)
    return FALSE;
  const ps_plan *p = ps_session_get_plan (self->session);
  double t0, t1;
  ps_session_buffer_live (self->session, b, &t0, &t1);
  char a[32], o[32], s0[32], s1[32];
  g_autofree char *text = g_strdup_printf (
      "%s\n%s at offset %s\nlive %s → %s", ps_buffer_name (p->graph, b),
      ps_format_bytes ((double) p->graph->buffers[b].bytes, a, sizeof a),
      ps_format_bytes ((double) p->offsets[b], o, sizeof o), ps_format_duration (t0, s0, sizeof s0),
      ps_format_duration (t1, s1, sizeof s1));
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
on_pressed (GtkGestureClick *g, int n, double x, double y, gpointer data)
{
  PsMemoryWidget *self = data;
  if (!self->session)
    return;
  guint b = ps_memory_widget_buffer_at (self, x, y);
  ps_session_select (self->session, b == PS_NONE ? PS_SELECTION_NONE : PS_SELECTION_BUFFER, b);
}

void
ps_memory_widget_set_session (PsMemoryWidget *self, PsSession *session)
{
  g_return_if_fail (PS_IS_MEMORY_WIDGET (self));
  if (self->session)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session)
    {
      g_signal_connect_swapped (session, "plan-changed", G_CALLBACK (gtk_widget_queue_draw), self);
      g_signal_connect_swapped (session, "selection-changed", G_CALLBACK (gtk_widget_queue_draw),
                                self);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
ps_memory_widget_dispose (GObject *object)
{
  ps_memory_widget_set_session (PS_MEMORY_WIDGET (object), NULL);
  G_OBJECT_CLASS (ps_memory_widget_parent_class)->dispose (object);
}

static void
ps_memory_widget_class_init (PsMemoryWidgetClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ps_memory_widget_dispose;
  GTK_WIDGET_CLASS (klass)->snapshot = ps_memory_widget_snapshot;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "memorymap");
}

static void
ps_memory_widget_init (PsMemoryWidget *self)
{
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (query_tooltip), NULL);
  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (on_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
}
