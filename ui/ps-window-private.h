/* ps-window-private.h: the window's parts, shared by the files that
 * implement it (construction, actions, files and drag and drop). */
#ifndef PS_WINDOW_PRIVATE_H
#define PS_WINDOW_PRIVATE_H

#include "ps-window.h"

G_BEGIN_DECLS

struct _PsWindow
{
  AdwApplicationWindow parent_instance;

  /* Template children. */
  AdwViewSwitcherTitle *switcher_title;
  GtkMenuButton *recent_button;
  GtkSpinButton *streams;
  GtkToggleButton *fusion;
  GtkWidget *gpu_button;
  GtkMenuButton *export_button;
  GtkDropDown *device;
  GtkToggleButton *baseline;
  AdwToastOverlay *toasts;
  AdwViewStack *stack;
  GtkWidget *dag_pane;
  GtkWidget *timeline;
  GtkLabel *timeline_title;
  GtkWidget *memory;
  GtkWidget *baseline_view;
  AdwViewStackPage *baseline_page;
  AdwViewSwitcherBar *switcher_bar;
  GtkPaned *main_paned;
  gboolean paned_placed;
  GtkWidget *inspector;
  GtkWidget *status_line;

  PsSession *session;
  GStrv device_names;
  gboolean updating;
  gboolean gpu_ok; /* known once the GPU probe, run off the main thread, is back */
  char *last_error;
};

/* ps-window-actions.c */
void ps__window_class_init_actions (GtkWidgetClass *widget_class);
void ps__window_update_actions (PsWindow *self);

/* ps-window-files.c */
void ps__window_init_files (PsWindow *self);
void ps__window_show_error (PsWindow *self, const char *heading, const char *message);
void ps__window_open_dialog (PsWindow *self);
void ps__window_compare_dialog (PsWindow *self);
void ps__window_export_dialog (PsWindow *self, const char *view, const char *format);

G_END_DECLS

#endif
