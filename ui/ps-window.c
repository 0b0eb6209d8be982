/* ps-window.c: builds the main window from its template and binds the
 * header controls and views to the session. */
#include "ps-window-private.h"

#include "ps-baseline-view.h"
#include "ps-dag-pane.h"
#include "ps-dag-widget.h"
#include "ps-inspector.h"
#include "ps-resources.h"
#include "ps-memory-widget.h"
#include "ps-session.h"
#include "ps-status-line.h"
#include "ps-timeline-widget.h"

G_DEFINE_FINAL_TYPE (PsWindow, ps_window, ADW_TYPE_APPLICATION_WINDOW)

PsSession *
ps_window_get_session (PsWindow *self)
{
  g_return_val_if_fail (PS_IS_WINDOW (self), NULL);
  return self->session;
}

const char *
ps_window_get_last_error (PsWindow *self)
{
  g_return_val_if_fail (PS_IS_WINDOW (self), NULL);
  return self->last_error;
}

GtkWidget *
ps_window_get_part (PsWindow *self, const char *name)
{
  g_return_val_if_fail (PS_IS_WINDOW (self) && name, NULL);
  static const struct { const char *name; gsize offset; } parts[] = {
    { "streams", G_STRUCT_OFFSET (PsWindow, streams) },
    { "fusion", G_STRUCT_OFFSET (PsWindow, fusion) },
    { "device", G_STRUCT_OFFSET (PsWindow, device) },
    { "gpu", G_STRUCT_OFFSET (PsWindow, gpu_button) },
    { "baseline", G_STRUCT_OFFSET (PsWindow, baseline) },
    { "dag-pane", G_STRUCT_OFFSET (PsWindow, dag_pane) },
    { "timeline", G_STRUCT_OFFSET (PsWindow, timeline) },
    { "memory", G_STRUCT_OFFSET (PsWindow, memory) },
    { "inspector", G_STRUCT_OFFSET (PsWindow, inspector) },
    { "status-line", G_STRUCT_OFFSET (PsWindow, status_line) },
    { "stack", G_STRUCT_OFFSET (PsWindow, stack) },
    { "baseline-view", G_STRUCT_OFFSET (PsWindow, baseline_view) },
    { "switcher-bar", G_STRUCT_OFFSET (PsWindow, switcher_bar) },
    { "switcher-title", G_STRUCT_OFFSET (PsWindow, switcher_title) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    if (g_str_equal (parts[i].name, name))
      return G_STRUCT_MEMBER (GtkWidget *, self, parts[i].offset);
  if (g_str_equal (name, "dag"))
    return GTK_WIDGET (ps_dag_pane_get_view (PS_DAG_PANE (self->dag_pane)));
  return NULL;
}

static void
on_title (PsWindow *self)
{
  const char *title = ps_session_get_title (self->session);
  g_autofree char *full = title ? g_strdup_printf ("%s — planscope", title) : NULL;
  gtk_window_set_title (GTK_WINDOW (self), full ? full : "planscope");
  adw_view_switcher_title_set_title (self->switcher_title, title ? title : "planscope");
  GFile *file = ps_session_get_file (self->session);
  g_autofree char *path = file ? g_file_get_path (file) : NULL;
  adw_view_switcher_title_set_subtitle (self->switcher_title, path ? path : "");
}

static void
on_device_selected (PsWindow *self)
{
  guint i = gtk_drop_down_get_selected (self->device);
  if (self->updating || !self->device_names || i == GTK_INVALID_LIST_POSITION
      || i >= g_strv_length (self->device_names))
    return;
  ps_session_set_device (self->session, self->device_names[i]);
}

static void
on_session_device (PsWindow *self)
{
  const char *dev = ps_session_get_device (self->session);
  for (guint i = 0; self->device_names && self->device_names[i]; i++)
    if (g_ascii_strcasecmp (self->device_names[i], dev) == 0)
      {
        self->updating = TRUE;
        gtk_drop_down_set_selected (self->device, i);
        self->updating = FALSE;
        return;
      }
  /* A profile named by the graph that is not in the list: add it. */
  guint n = g_strv_length (self->device_names);
  self->device_names = g_renew (char *, self->device_names, n + 2);
  self->device_names[n] = g_strdup (dev);
  self->device_names[n + 1] = NULL;
  self->updating = TRUE;
  gtk_string_list_append (GTK_STRING_LIST (gtk_drop_down_get_model (self->device)), dev);
  gtk_drop_down_set_selected (self->device, n);
  self->updating = FALSE;
}

static void
on_baseline_toggled (PsWindow *self)
{
  if (self->updating)
    return;
  if (gtk_toggle_button_get_active (self->baseline))
    ps_session_pin_baseline (self->session);
  else
    ps_session_clear_baseline (self->session);
}

static void
on_session_baseline (PsWindow *self)
{
  self->updating = TRUE;
  gboolean has = ps_session_has_baseline (self->session);
  gtk_toggle_button_set_active (self->baseline, has);
  self->updating = FALSE;
  /* The comparison shows as a page of its own while there is a baseline. */
  adw_view_stack_page_set_visible (self->baseline_page, has);
  if (has)
    adw_view_stack_set_visible_child_name (self->stack, "baseline");
  else if (g_strcmp0 (adw_view_stack_get_visible_child_name (self->stack), "baseline") == 0)
    adw_view_stack_set_visible_child_name (self->stack, "plan");
  ps__window_update_actions (self);
}

static void
on_job_failed (PsWindow *self, const char *what, const char *message)
{
  if (g_str_equal (what, "gpu"))
    ps__window_show_error (self, "The GPU run failed", message);
  else
    {
      AdwToast *toast = adw_toast_new (message);
      adw_toast_set_timeout (toast, 6);
      adw_toast_overlay_add_toast (self->toasts, toast);
    }
}

static void
on_measured (PsWindow *self)
{
  gboolean m = ps_session_get_measured (self->session) != NULL;
  gboolean b = ps_session_has_baseline (self->session);
  gtk_label_set_text (self->timeline_title,
                      m && b ? "Timeline — measured (top) over predicted, the baseline below"
                      : m    ? "Timeline — measured (top) over predicted (faded)"
                      : b    ? "Timeline — predicted, the baseline below (grey)"
                             : "Timeline — predicted");
}

/* The DAG takes three fifths of the height the first time the
 * window has one, whatever the window's size. */
static void
on_paned_max (PsWindow *self)
{
  int max = 0;
  g_object_get (self->main_paned, "max-position", &max, NULL);
  if (max > 100 && !self->paned_placed)
    {
      self->paned_placed = TRUE;
      gtk_paned_set_position (self->main_paned, max * 62 / 100);
    }
}

static void
gpu_probe_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  char *reason = NULL;
  gboolean ok = ps_session_gpu_available (&reason);
  g_task_set_task_data (task, reason, g_free);
  g_task_return_boolean (task, ok);
}

static void
gpu_probed (GObject *source, GAsyncResult *result, gpointer data)
{
  PsWindow *self = PS_WINDOW (source);
  self->gpu_ok = g_task_propagate_boolean (G_TASK (result), NULL);
  gtk_widget_set_tooltip_text (self->gpu_button, g_task_get_task_data (G_TASK (result)));
  ps__window_update_actions (self);
}

static void
ps_window_dispose (GObject *object)
{
  PsWindow *self = PS_WINDOW (object);
  if (self->session)
    {
      g_signal_handlers_disconnect_by_data (self->session, self);
      ps_session_cancel (self->session);
    }
  gtk_widget_dispose_template (GTK_WIDGET (self), PS_TYPE_WINDOW);
  g_clear_object (&self->session);
  G_OBJECT_CLASS (ps_window_parent_class)->dispose (object);
}

static void
ps_window_finalize (GObject *object)
{
  PsWindow *self = PS_WINDOW (object);
  g_strfreev (self->device_names);
  g_free (self->last_error);
  G_OBJECT_CLASS (ps_window_parent_class)->finalize (object);
}

static void
ps_window_class_init (PsWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = ps_window_dispose;
  object_class->finalize = ps_window_finalize;

  /* Referenced so that the linker keeps the resources of the static
   * library; they register themselves when loaded. */
  (void) ps_get_resource ();
  g_type_ensure (PS_TYPE_DAG_PANE);
  g_type_ensure (PS_TYPE_TIMELINE_WIDGET);
  g_type_ensure (PS_TYPE_MEMORY_WIDGET);
  g_type_ensure (PS_TYPE_INSPECTOR);
  g_type_ensure (PS_TYPE_STATUS_LINE);
  g_type_ensure (PS_TYPE_BASELINE_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/planscope/Planscope/ps-window.ui");
  gtk_widget_class_bind_template_child (widget_class, PsWindow, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, recent_button);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, streams);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, fusion);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, gpu_button);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, export_button);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, device);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, baseline);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, toasts);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, dag_pane);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, timeline);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, timeline_title);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, memory);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, baseline_view);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, baseline_page);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, switcher_bar);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, main_paned);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, inspector);
  gtk_widget_class_bind_template_child (widget_class, PsWindow, status_line);
  ps__window_class_init_actions (widget_class);
}

static void
ps_window_init (PsWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->session = ps_session_new ();

  ps_dag_pane_set_session (PS_DAG_PANE (self->dag_pane), self->session);
  ps_timeline_widget_set_session (PS_TIMELINE_WIDGET (self->timeline), self->session);
  ps_memory_widget_set_session (PS_MEMORY_WIDGET (self->memory), self->session);
  ps_inspector_set_session (PS_INSPECTOR (self->inspector), self->session);
  ps_status_line_set_session (PS_STATUS_LINE (self->status_line), self->session);
  ps_baseline_view_set_session (PS_BASELINE_VIEW (self->baseline_view), self->session);

  g_object_bind_property (self->session, "streams",
                          gtk_spin_button_get_adjustment (self->streams), "value",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->session, "fusion", self->fusion, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);

  self->device_names = ps_session_list_devices ();
  GtkStringList *devices = gtk_string_list_new ((const char *const *) self->device_names);
  gtk_drop_down_set_model (self->device, G_LIST_MODEL (devices));
  g_object_unref (devices);
  on_session_device (self);
  g_signal_connect_swapped (self->device, "notify::selected", G_CALLBACK (on_device_selected),
                            self);
  g_signal_connect_swapped (self->session, "notify::device", G_CALLBACK (on_session_device),
                            self);
  g_signal_connect_swapped (self->baseline, "toggled", G_CALLBACK (on_baseline_toggled), self);
  g_signal_connect_swapped (self->session, "notify::has-baseline",
                            G_CALLBACK (on_session_baseline), self);
  g_signal_connect_swapped (self->session, "notify::title", G_CALLBACK (on_title), self);
  g_signal_connect_swapped (self->session, "job-failed", G_CALLBACK (on_job_failed), self);
  g_signal_connect_swapped (self->session, "measured-changed", G_CALLBACK (on_measured), self);
  g_signal_connect_swapped (self->session, "notify::has-baseline", G_CALLBACK (on_measured),
                            self);
  g_signal_connect_swapped (self->main_paned, "notify::max-position", G_CALLBACK (on_paned_max),
                            self);
  g_signal_connect_swapped (self->session, "plan-changed",
                            G_CALLBACK (ps__window_update_actions), self);
  g_signal_connect_swapped (self->session, "notify::busy",
                            G_CALLBACK (ps__window_update_actions), self);
  g_signal_connect_swapped (self->session, "notify::can-undo",
                            G_CALLBACK (ps__window_update_actions), self);
  /* The canvases follow the desktop's light or dark style. */
  g_object_bind_property (adw_style_manager_get_default (), "dark", self->session, "dark",
                          G_BINDING_SYNC_CREATE);

  /* Probing loads the CUDA driver, which can take a while: off the main
   * thread, like every other job. */
  gtk_widget_set_tooltip_text (self->gpu_button, "Looking for a usable GPU…");
  g_autoptr (GTask) probe = g_task_new (self, NULL, gpu_probed, NULL);
  g_task_run_in_thread (probe, gpu_probe_thread);

  g_autoptr (GtkCssProvider) css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, "/io/github/planscope/Planscope/style.css");
  gtk_style_context_add_provider_for_display (gtk_widget_get_display (GTK_WIDGET (self)),
                                              GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  ps__window_init_files (self);
  on_measured (self);
  on_title (self);
  ps__window_update_actions (self);
}

PsWindow *
ps_window_new (GtkApplication *app)
{
  return g_object_new (PS_TYPE_WINDOW, "application", app, NULL);
}
