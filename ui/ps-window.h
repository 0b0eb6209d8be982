/* ps-window.h: the main window: header bar (open, streams, fusion, device
 * profile, simulate, GPU run, export, baseline, primary menu), the DAG and
 * timeline in a paned view, the memory map tab, the inspector and the
 * status line, all bound to one PsSession. */
#ifndef PS_WINDOW_H
#define PS_WINDOW_H

#include <adwaita.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_WINDOW (ps_window_get_type ())
G_DECLARE_FINAL_TYPE (PsWindow, ps_window, PS, WINDOW, AdwApplicationWindow)

PsWindow *ps_window_new (GtkApplication *app);
PsSession *ps_window_get_session (PsWindow *self);
/* Opens a graph; a bad file shows the loader's located error in a dialog
 * (unless `quiet`) and keeps the current document.  The callback (may be
 * NULL) gets ps_window_open_finish's result. */
/* Compare with…: file (a graph or a trace) as the baseline; a failure is
 * shown and leaves the baseline as it was. */
void ps_window_compare (PsWindow *self, GFile *file);
void ps_window_open (PsWindow *self, GFile *file, GAsyncReadyCallback callback,
                     gpointer user_data);
gboolean ps_window_open_finish (PsWindow *self, GAsyncResult *result, GError **error);
/* Exports a view to a file (what the export menu does after its dialog). */
void ps_window_export (PsWindow *self, const char *view, const char *format, GFile *file,
                       GAsyncReadyCallback callback, gpointer user_data);
gboolean ps_window_export_finish (PsWindow *self, GAsyncResult *result, GError **error);
/* Saves a PNG of the window as it is on screen. */
gboolean ps_window_save_png (PsWindow *self, const char *path, GError **error);
/* The last error shown in a dialog (for tests), or NULL. */
const char *ps_window_get_last_error (PsWindow *self);

/* Parts, for tests. */
GtkWidget *ps_window_get_part (PsWindow *self, const char *name);

G_END_DECLS

#endif
