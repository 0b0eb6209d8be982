/* ps-dag-widget.h: the DAG of a session, drawn natively from the
 * renderer's Graphviz layout: zoom (ctrl+scroll, pinch, keyboard), pan
 * (drag, scroll), fit, hover tooltips, selection, search highlights,
 * colouring from the session, fused-group frames, the critical path and
 * the steps that changed against the baseline. */
#ifndef PS_DAG_WIDGET_H
#define PS_DAG_WIDGET_H

#include <gtk/gtk.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_DAG_WIDGET (ps_dag_widget_get_type ())
G_DECLARE_FINAL_TYPE (PsDagWidget, ps_dag_widget, PS, DAG_WIDGET, GtkWidget)

void ps_dag_widget_set_session (PsDagWidget *self, PsSession *session);
void ps_dag_widget_zoom_fit (PsDagWidget *self);
/* Multiplies the zoom by factor around the centre of the view. */
void ps_dag_widget_zoom (PsDagWidget *self, double factor);
double ps_dag_widget_get_zoom (PsDagWidget *self);
/* Nodes to highlight (search matches); NULL clears. */
void ps_dag_widget_set_matches (PsDagWidget *self, GArray *nodes);
/* Scrolls so that the box of `node` is in view. */
void ps_dag_widget_reveal_node (PsDagWidget *self, guint node);
/* The scene box at a widget point, or PS_NONE. */
guint ps_dag_widget_box_at (PsDagWidget *self, double x, double y);

G_END_DECLS

#endif
