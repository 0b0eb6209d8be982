/* ps-status-line.c: keeps the status line in step with the session. */
#include "ps-status-line.h"

#include "ps-session.h"

struct _PsStatusLine
{
  GtkWidget parent_instance;

  GtkLabel *summary;
  GtkLabel *activity;
  GtkProgressBar *progress;
  GtkWidget *cancel;

  PsSession *session;
  guint pulse_id;
};

G_DEFINE_FINAL_TYPE (PsStatusLine, ps_status_line, GTK_TYPE_WIDGET)

static void
update_summary (PsStatusLine *self)
{
  g_autofree char *text = self->session ? ps_session_format_summary (self->session)
                                        : g_strdup ("No graph open");
  gtk_label_set_text (self->summary, text);
}

static gboolean
pulse (gpointer data)
{
  PsStatusLine *self = data;
  gtk_progress_bar_pulse (self->progress);
  return G_SOURCE_CONTINUE;
}

static void
update_busy (PsStatusLine *self)
{
  gboolean busy = self->session && ps_session_get_busy (self->session);
  double fraction = busy ? ps_session_get_progress (self->session) : 0;
  gtk_widget_set_visible (GTK_WIDGET (self->activity), busy);
  gtk_widget_set_visible (GTK_WIDGET (self->progress), busy);
  gtk_widget_set_visible (self->cancel, busy);
  if (busy)
    {
      const char *what = ps_session_get_activity (self->session);
      g_autofree char *label = g_strdup_printf ("%s…", what ? what : "Working");
      gtk_label_set_text (self->activity, label);
      if (fraction >= 0)
        gtk_progress_bar_set_fraction (self->progress, fraction);
    }
  gboolean want_pulse = busy && fraction < 0;
  if (want_pulse && !self->pulse_id)
    self->pulse_id = g_timeout_add (120, pulse, self);
  else if (!want_pulse)
    g_clear_handle_id (&self->pulse_id, g_source_remove);
}

const char *
ps_status_line_get_text (PsStatusLine *self)
{
  g_return_val_if_fail (PS_IS_STATUS_LINE (self), NULL);
  return gtk_label_get_text (self->summary);
}

void
ps_status_line_set_session (PsStatusLine *self, PsSession *session)
{
  g_return_if_fail (PS_IS_STATUS_LINE (self));
  if (self->session)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session)
    {
      g_signal_connect_swapped (session, "plan-changed", G_CALLBACK (update_summary), self);
      g_signal_connect_swapped (session, "document-changed", G_CALLBACK (update_summary), self);
      g_signal_connect_swapped (session, "notify::has-baseline", G_CALLBACK (update_summary),
                                self);
      g_signal_connect_swapped (session, "notify::busy", G_CALLBACK (update_busy), self);
      g_signal_connect_swapped (session, "notify::progress", G_CALLBACK (update_busy), self);
      g_signal_connect_swapped (session, "notify::activity", G_CALLBACK (update_busy), self);
    }
  update_summary (self);
  update_busy (self);
}

static void
ps_status_line_dispose (GObject *object)
{
  PsStatusLine *self = PS_STATUS_LINE (object);
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  if (self->session)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_clear_object (&self->session);
  gtk_widget_dispose_template (GTK_WIDGET (self), PS_TYPE_STATUS_LINE);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (ps_status_line_parent_class)->dispose (object);
}

static void
ps_status_line_class_init (PsStatusLineClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = ps_status_line_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/planscope/Planscope/ps-status-line.ui");
  gtk_widget_class_bind_template_child (widget_class, PsStatusLine, summary);
  gtk_widget_class_bind_template_child (widget_class, PsStatusLine, activity);
  gtk_widget_class_bind_template_child (widget_class, PsStatusLine, progress);
  gtk_widget_class_bind_template_child (widget_class, PsStatusLine, cancel);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "statusline");
}

static void
ps_status_line_init (PsStatusLine *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
