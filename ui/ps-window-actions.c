/* ps-window-actions.c: the window's actions, their shortcuts, and the one
 * function that decides which are enabled. */
#include "ps-window-private.h"

#include "ps-dag-pane.h"
#include "ps-session.h"
#include "ps-timeline-widget.h"

void
ps__window_update_actions (PsWindow *self)
{
  GtkWidget *w = GTK_WIDGET (self);
  PsSession *s = self->session;
  gboolean plan = s && ps_session_get_plan (s) != NULL;
  gboolean gpu = self->gpu_ok;
  gboolean busy = s && ps_session_get_busy (s);
  gboolean doc = s && ps_session_get_title (s) != NULL;
  gtk_widget_action_set_enabled (w, "window.export", plan);
  gtk_widget_action_set_enabled (w, "window.simulate", doc);
  gtk_widget_action_set_enabled (w, "window.run-gpu", plan && gpu && !busy);
  gtk_widget_action_set_enabled (w, "window.cancel", busy);
  gtk_widget_action_set_enabled (w, "window.pin-baseline", plan);
  gtk_widget_action_set_enabled (w, "window.compare", plan);
  gtk_widget_action_set_enabled (w, "window.clear-baseline", s && ps_session_has_baseline (s));
  gtk_widget_action_set_enabled (w, "window.find", doc);
  gtk_widget_action_set_enabled (w, "window.undo-whatif", s && ps_session_can_undo (s));
  gtk_widget_action_set_enabled (w, "window.reset-whatif", s && ps_session_can_undo (s));
  gtk_widget_set_sensitive (GTK_WIDGET (self->baseline), plan || (s && ps_session_has_baseline (s)));
  gtk_widget_set_sensitive (GTK_WIDGET (self->export_button), plan);
}

static void
action_open (GtkWidget *widget, const char *name, GVariant *param)
{
  ps__window_open_dialog (PS_WINDOW (widget));
}

static void
action_compare (GtkWidget *widget, const char *name, GVariant *param)
{
  ps__window_compare_dialog (PS_WINDOW (widget));
}

static void
action_open_recent (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (param, NULL));
  ps_window_open (PS_WINDOW (widget), file, NULL, NULL);
}

static void
action_export (GtkWidget *widget, const char *name, GVariant *param)
{
  const char *target = g_variant_get_string (param, NULL);
  g_auto (GStrv) parts = g_strsplit (target, ":", 2);
  if (g_strv_length (parts) == 2)
    ps__window_export_dialog (PS_WINDOW (widget), parts[0], parts[1]);
}

static void
action_session (GtkWidget *widget, const char *name, GVariant *param)
{
  PsWindow *self = PS_WINDOW (widget);
  PsSession *s = self->session;
  if (g_str_equal (name, "window.simulate"))
    ps_session_replan (s);
  else if (g_str_equal (name, "window.run-gpu"))
    ps_session_run_gpu (s);
  else if (g_str_equal (name, "window.cancel"))
    ps_session_cancel (s);
  else if (g_str_equal (name, "window.pin-baseline"))
    ps_session_pin_baseline (s);
  else if (g_str_equal (name, "window.clear-baseline"))
    ps_session_clear_baseline (s);
  else if (g_str_equal (name, "window.more-streams"))
    ps_session_set_streams (s, ps_session_get_streams (s) + 1);
  else if (g_str_equal (name, "window.fewer-streams"))
    ps_session_set_streams (s, MAX (ps_session_get_streams (s), 2) - 1);
  else if (g_str_equal (name, "window.toggle-fusion"))
    ps_session_set_fusion (s, !ps_session_get_fusion (s));
  else if (g_str_equal (name, "window.undo-whatif"))
    ps_session_undo (s);
  else if (g_str_equal (name, "window.reset-whatif"))
    ps_session_reset_whatif (s);
}

static void
action_view (GtkWidget *widget, const char *name, GVariant *param)
{
  PsWindow *self = PS_WINDOW (widget);
  PsTimelineWidget *tl = PS_TIMELINE_WIDGET (self->timeline);
  if (g_str_equal (name, "window.find"))
    {
      adw_view_stack_set_visible_child_name (self->stack, "plan");
      ps_dag_pane_start_search (PS_DAG_PANE (self->dag_pane));
    }
  else if (g_str_equal (name, "window.timeline-zoom-in"))
    ps_timeline_widget_zoom (tl, 1.5);
  else if (g_str_equal (name, "window.timeline-zoom-out"))
    ps_timeline_widget_zoom (tl, 1 / 1.5);
  else if (g_str_equal (name, "window.timeline-zoom-fit"))
    ps_timeline_widget_zoom_fit (tl);
  else if (g_str_equal (name, "window.close"))
    gtk_window_close (GTK_WINDOW (self));
}

void
ps__window_class_init_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "window.open", NULL, action_open);
  gtk_widget_class_install_action (widget_class, "window.open-recent", "s", action_open_recent);
  gtk_widget_class_install_action (widget_class, "window.compare", NULL, action_compare);
  gtk_widget_class_install_action (widget_class, "window.export", "s", action_export);
  static const char *const session_actions[] = {
    "window.simulate", "window.run-gpu", "window.cancel", "window.pin-baseline",
    "window.clear-baseline", "window.more-streams", "window.fewer-streams",
    "window.toggle-fusion", "window.undo-whatif", "window.reset-whatif",
  };
  for (guint i = 0; i < G_N_ELEMENTS (session_actions); i++)
    gtk_widget_class_install_action (widget_class, session_actions[i], NULL, action_session);
  static const char *const view_actions[] = {
    "window.find", "window.timeline-zoom-in", "window.timeline-zoom-out",
    "window.timeline-zoom-fit", "window.close",
  };
  for (guint i = 0; i < G_N_ELEMENTS (view_actions); i++)
    gtk_widget_class_install_action (widget_class, view_actions[i], NULL, action_view);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "window.open",
                                       NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "window.export",
                                       "s", "dag:svg");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close",
                                       NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F5, 0, "window.simulate", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.cancel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, GDK_CONTROL_MASK, "window.find",
                                       NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_b, GDK_CONTROL_MASK,
                                       "window.pin-baseline", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_bracketright, GDK_CONTROL_MASK,
                                       "window.more-streams", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_bracketleft, GDK_CONTROL_MASK,
                                       "window.fewer-streams", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_u, GDK_CONTROL_MASK,
                                       "window.toggle-fusion", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_z, GDK_CONTROL_MASK,
                                       "window.undo-whatif", NULL);
}
