/* ps-dag-widget.h: the DAG of a session, drawn through the renderer
 * (render/ps-draw.h) from its Graphviz layout, as the exports draw it:
 * zoom (Ctrl+scroll about the pointer, pinch, keyboard), pan (drag,
 * scroll), fit, tooltips, selection, search highlights and the steps that
 * changed against the baseline, with the legend and the critical path's
 * figures below. */
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
/* What a scroll of (dx, dy) steps with modifiers does: with Ctrl, zooms
 * about the pointer (where the last motion left it); else pans. */
void ps_dag_widget_scroll (PsDagWidget *self, double dx, double dy, GdkModifierType mods);
/* The diagram point at a widget point, and the part of the diagram in
 * view (diagram points). */
void ps_dag_widget_to_diagram (PsDagWidget *self, double x, double y, double *dx, double *dy);
void ps_dag_widget_get_visible (PsDagWidget *self, double *x0, double *y0, double *x1,
                                double *y1);
/* Nodes to highlight (search matches); NULL clears. */
void ps_dag_widget_set_matches (PsDagWidget *self, GArray *nodes);
/* Scrolls so that the box of `node` is in view. */
void ps_dag_widget_reveal_node (PsDagWidget *self, guint node);
/* The scene box at a widget point, or PS_NONE. */
guint ps_dag_widget_box_at (PsDagWidget *self, double x, double y);

G_END_DECLS

#endif
