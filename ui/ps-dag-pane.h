/* ps-dag-pane.h: the DAG view with its toolbar: search (ctrl+F) by node,
 * kernel or buffer name, colour by stream, fusion group, kind or
 * duration, the critical path toggle and zoom buttons. */
#ifndef PS_DAG_PANE_H
#define PS_DAG_PANE_H

#include <gtk/gtk.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_DAG_PANE (ps_dag_pane_get_type ())
G_DECLARE_FINAL_TYPE (PsDagPane, ps_dag_pane, PS, DAG_PANE, GtkWidget)

void ps_dag_pane_set_session (PsDagPane *self, PsSession *session);
PsDagWidget *ps_dag_pane_get_view (PsDagPane *self);
/* Opens the search bar and focuses it. */
void ps_dag_pane_start_search (PsDagPane *self);
/* Searches for text (as typed in the search bar); returns the matches. */
guint ps_dag_pane_search (PsDagPane *self, const char *text);
/* How many nodes the last search found (typed searches run on a worker
 * thread and land later). */
guint ps_dag_pane_get_match_count (PsDagPane *self);

G_END_DECLS

#endif
