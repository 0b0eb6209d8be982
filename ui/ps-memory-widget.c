/* ps-memory-widget.c: draws the session's memory map through the
 * renderer (render/ps-memory-draw.h) over the time span the timeline
 * shows, with the selected buffer outlined. */
#include "ps-memory-widget.h"

#include <math.h>

#include "ps-memory-draw.h"
#include "ps-session.h"

struct _PsMemoryWidget
{
  GtkWidget parent_instance;
  PsSession *session;
};

G_DEFINE_FINAL_TYPE (PsMemoryWidget, ps_memory_widget, GTK_TYPE_WIDGET)

static const ps_memory_map *
map (PsMemoryWidget *self)
{
  return self->session ? ps_session_get_memory_map (self->session) : NULL;
}

static void
make_view (PsMemoryWidget *self, const ps_memory_map *m, ps_memory_view *v, ps_style *st)
{
  memset (v, 0, sizeof *v);
  double t0 = 0, t1 = 1000;
  ps_session_get_time_view (self->session, &t0, &t1);
  ps_session_get_style (self->session, st);
  v->x = 8;
  v->y = 4;
  v->gutter = ps_memory_map_gutter (m);
  v->width = MAX (gtk_widget_get_width (GTK_WIDGET (self)) - 16, v->gutter + 16);
  v->height = MAX (gtk_widget_get_height (GTK_WIDGET (self)) - 12, 60);
  v->t0 = t0;
  v->ns_per_pt = MAX (t1 - t0, 1e-3) / (v->width - v->gutter);
  v->style = st;
  guint id;
  v->selected = ps_session_get_selection (self->session, &id) == PS_SELECTION_BUFFER ? id
                                                                                      : PS_NONE;
}

static void
ps_memory_widget_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  PsMemoryWidget *self = PS_MEMORY_WIDGET (widget);
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  if (w <= 0 || h <= 0)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  ps_style st;
  if (self->session)
    ps_session_get_style (self->session, &st);
  else
    ps_style_init (&st, PS_THEME_LIGHT, PS_COLOR_BY_STREAM);
  uint32_t bg = st.pal->background;
  cairo_set_source_rgb (cr, ((bg >> 16) & 0xff) / 255.0, ((bg >> 8) & 0xff) / 255.0,
                        (bg & 0xff) / 255.0);
  cairo_paint (cr);
  ps_canvas *c = ps_canvas_new_cairo (cr);
  const ps_memory_map *m = map (self);
  if (!m || m->n_buffers == 0)
    {
      ps_font f = { 11, false, false };
      ps_canvas_text (c, 16, 24, m ? "No buffers" : "No plan", &f, PS_ALIGN_LEFT,
                      st.pal->text_dim, w - 32);
    }
  else
    {
      ps_memory_view v;
      make_view (self, m, &v, &st);
      ps_memory_map_draw (m, &v, c);
    }
  ps_canvas_finish (c);
  cairo_destroy (cr);
}

guint
ps_memory_widget_buffer_at (PsMemoryWidget *self, double x, double y)
{
  g_return_val_if_fail (PS_IS_MEMORY_WIDGET (self), PS_NONE);
  const ps_memory_map *m = map (self);
  if (!m)
    return PS_NONE;
  ps_memory_view v;
  ps_style st;
  make_view (self, m, &v, &st);
  return ps_memory_map_hit (m, &v, x, y);
}

static gboolean
query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
               gpointer data)
{
  PsMemoryWidget *self = PS_MEMORY_WIDGET (widget);
  guint b = ps_memory_widget_buffer_at (self, x, y);
  if (b == PS_NONE)
    return FALSE;
  char text[512];
  gtk_tooltip_set_text (tooltip, ps_memory_map_buffer_text (map (self), b, text, sizeof text));
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

static gboolean
on_scroll (GtkEventControllerScroll *ctl, double dx, double dy, gpointer data)
{
  PsMemoryWidget *self = data;
  if (!self->session || !isfinite (dx) || !isfinite (dy))
    return FALSE;
  /* The time axis is the timeline's: Ctrl+scroll zooms it about the
   * middle, scroll pans it. */
  double t0, t1;
  ps_session_get_time_view (self->session, &t0, &t1);
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (ctl));
  if (mods & GDK_CONTROL_MASK)
    {
      double mid = (t0 + t1) / 2, half = (t1 - t0) / 2 / pow (1.15, -dy);
      ps_session_set_time_view (self->session, mid - half, mid + half);
    }
  else
    {
      double step = (dx != 0 ? dx : dy) * 0.05 * (t1 - t0);
      ps_session_set_time_view (self->session, t0 + step, t1 + step);
    }
  return TRUE;
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
      static const char *const signals[] = { "plan-changed", "measured-changed",
                                             "selection-changed", "time-view-changed",
                                             "notify::dark" };
      for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
        g_signal_connect_swapped (session, signals[i], G_CALLBACK (gtk_widget_queue_draw), self);
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
  GtkEventController *scroll = gtk_event_controller_scroll_new (
      GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);
}
