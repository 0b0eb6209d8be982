/* ps-window-files.c: opening graphs (dialog, drag and drop, recent files,
 * the command line), error dialogs, and the export dialog. */
#include "ps-window-private.h"

#include "ps-session.h"

#define APP_NAME "planscope"

void
ps__window_show_error (PsWindow *self, const char *heading, const char *message)
{
  g_free (self->last_error);
  self->last_error = g_strdup (message);
  GtkWidget *dialog = adw_message_dialog_new (GTK_WINDOW (self), heading, NULL);
  g_autofree char *escaped = g_markup_escape_text (message, -1);
  g_autofree char *markup = g_strdup_printf ("<tt>%s</tt>", escaped);
  adw_message_dialog_set_body_use_markup (ADW_MESSAGE_DIALOG (dialog), TRUE);
  adw_message_dialog_set_body (ADW_MESSAGE_DIALOG (dialog), markup);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", "_Close");
  gtk_window_present (GTK_WINDOW (dialog));
}

/* ---- recent files ------------------------------------------------------- */

static int
compare_recent (gconstpointer a, gconstpointer b)
{
  GDateTime *ta = gtk_recent_info_get_modified ((GtkRecentInfo *) a);
  GDateTime *tb = gtk_recent_info_get_modified ((GtkRecentInfo *) b);
  return g_date_time_compare (tb, ta);
}

static void
update_recent (PsWindow *self)
{
  GtkRecentManager *manager = gtk_recent_manager_get_default ();
  GList *items = gtk_recent_manager_get_items (manager);
  GList *ours = NULL;
  for (GList *l = items; l; l = l->next)
    if (gtk_recent_info_has_application (l->data, APP_NAME) && gtk_recent_info_exists (l->data))
      ours = g_list_prepend (ours, l->data);
  ours = g_list_sort (ours, compare_recent);
  GMenu *menu = g_menu_new ();
  guint n = 0;
  for (GList *l = ours; l && n < 10; l = l->next, n++)
    {
      GtkRecentInfo *info = l->data;
      g_autofree char *action = g_strdup_printf ("window.open-recent");
      GMenuItem *item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target (item, action, "s", gtk_recent_info_get_uri (info));
      g_menu_append_item (menu, item);
      g_object_unref (item);
    }
  if (n == 0)
    {
      GMenuItem *item = g_menu_item_new ("No recent graphs", "window.none");
      g_menu_append_item (menu, item);
      g_object_unref (item);
    }
  gtk_menu_button_set_menu_model (self->recent_button, G_MENU_MODEL (menu));
  g_object_unref (menu);
  g_list_free (ours);
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

static void
remember (GFile *file)
{
  g_autofree char *uri = g_file_get_uri (file);
  GtkRecentData data = {
    .display_name = NULL,
    .description = NULL,
    .mime_type = (char *) "application/json",
    .app_name = (char *) APP_NAME,
    .app_exec = (char *) APP_NAME " %u",
    .groups = NULL,
    .is_private = FALSE,
  };
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}

/* ---- opening ------------------------------------------------------------ */

static void
open_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  PsWindow *self = g_task_get_source_object (task);
  g_autoptr (GError) error = NULL;
  GFile *file = g_task_get_task_data (task);
  if (!ps_session_load_finish (PS_SESSION (source), result, &error))
    {
      /* Cancelling is not an error worth a dialog. */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        ps__window_show_error (self, "The graph could not be opened", error->message);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  remember (file);
  g_task_return_boolean (task, TRUE);
}

void
ps_window_open (PsWindow *self, GFile *file, GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (PS_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));
  GTask *task = g_task_new (self, NULL, callback, user_data);
  g_task_set_task_data (task, g_object_ref (file), g_object_unref);
  ps_session_load_async (self->session, file, NULL, open_done, task);
}

gboolean
ps_window_open_finish (PsWindow *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
on_open_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  PsWindow *self = data;
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file)
        ps_window_open (self, file, NULL, NULL);
    }
  g_object_unref (dialog);
}

static GtkFileFilter *
filter_new (const char *name, const char *pattern, const char *pattern2)
{
  GtkFileFilter *f = gtk_file_filter_new ();
  gtk_file_filter_set_name (f, name);
  gtk_file_filter_add_pattern (f, pattern);
  if (pattern2)
    gtk_file_filter_add_pattern (f, pattern2);
  return f;
}

/* A dialog that opens a graph or a trace, in the current file's folder. */
static GtkFileChooserNative *
file_dialog_new (PsWindow *self, const char *title, const char *accept)
{
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, accept, "_Cancel");
  g_autoptr (GtkFileFilter) graphs = filter_new ("Graphs and traces", "*.json", "*.dot");
  gtk_file_filter_add_pattern (graphs, "*.json.gz");
  g_autoptr (GtkFileFilter) all = filter_new ("All files", "*", NULL);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), graphs);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);
  GFile *current = ps_session_get_file (self->session);
  g_autoptr (GFile) folder = current ? g_file_get_parent (current) : NULL;
  if (folder)
    gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), folder, NULL);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  return dialog;
}

void
ps__window_open_dialog (PsWindow *self)
{
  GtkFileChooserNative *dialog = file_dialog_new (self, "Open a Graph or Trace", "_Open");
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ---- comparing --------------------------------------------------------- */

static void
compare_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (PsWindow) self = data;
  g_autoptr (GError) error = NULL;
  if (!ps_session_compare_finish (PS_SESSION (source), result, &error)
      && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    ps__window_show_error (self, "The file could not be compared", error->message);
}

void
ps_window_compare (PsWindow *self, GFile *file)
{
  g_return_if_fail (PS_IS_WINDOW (self));
  ps_session_compare_async (self->session, file, NULL, compare_done, g_object_ref (self));
}

static void
on_compare_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  PsWindow *self = data;
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file)
        ps_window_compare (self, file);
    }
  g_object_unref (dialog);
}

void
ps__window_compare_dialog (PsWindow *self)
{
  GtkFileChooserNative *dialog = file_dialog_new (self, "Compare With", "_Compare");
  g_signal_connect (dialog, "response", G_CALLBACK (on_compare_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, gpointer data)
{
  PsWindow *self = data;
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  GSList *files = g_value_get_boxed (value);
  if (!files)
    return FALSE;
  ps_window_open (self, G_FILE (files->data), NULL, NULL);
  return TRUE;
}

void
ps__window_init_files (PsWindow *self)
{
  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
  g_signal_connect_object (gtk_recent_manager_get_default (), "changed",
                           G_CALLBACK (update_recent), self, G_CONNECT_SWAPPED);
  update_recent (self);
}

/* ---- exports ------------------------------------------------------------ */

static void
export_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GTask) task = data;
  PsWindow *self = g_task_get_source_object (task);
  g_autoptr (GError) error = NULL;
  if (!ps_session_export_finish (PS_SESSION (source), result, &error))
    {
      ps__window_show_error (self, "The export failed", error->message);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  GFile *file = g_task_get_task_data (task);
  g_autofree char *name = g_file_get_basename (file);
  g_autofree char *msg = g_strdup_printf ("Exported %s", name);
  adw_toast_overlay_add_toast (self->toasts, adw_toast_new (msg));
  g_task_return_boolean (task, TRUE);
}

void
ps_window_export (PsWindow *self, const char *view, const char *format, GFile *file,
                  GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (PS_IS_WINDOW (self));
  GTask *task = g_task_new (self, NULL, callback, user_data);
  g_task_set_task_data (task, g_object_ref (file), g_object_unref);
  ps_session_export_async (self->session, view, format, file, NULL, export_done, task);
}

gboolean
ps_window_export_finish (PsWindow *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

typedef struct {
  PsWindow *self;
  char *view, *format;
} ExportDialog;

static void
on_export_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  ExportDialog *ed = data;
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file)
        ps_window_export (ed->self, ed->view, ed->format, file, NULL, NULL);
    }
  g_free (ed->view);
  g_free (ed->format);
  g_free (ed);
  g_object_unref (dialog);
}

void
ps__window_export_dialog (PsWindow *self, const char *view, const char *format)
{
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      "Export", GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  const char *title = ps_session_get_title (self->session);
  const char *ext = g_str_equal (format, "trace") ? "trace.json" : format;
  g_autofree char *name = g_strdup_printf ("%s-%s.%s", title ? title : "graph", view, ext);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  ExportDialog *ed = g_new0 (ExportDialog, 1);
  ed->self = self;
  ed->view = g_strdup (view);
  ed->format = g_strdup (format);
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), ed);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}
