/* ps-timeline-widget.h: the per-stream timeline of a session: lanes of
 * spans over a time axis, stalls hatched, event arrows, measured spans
 * over predicted ones; zoom and pan with mouse, touchpad and keyboard. */
#ifndef PS_TIMELINE_WIDGET_H
#define PS_TIMELINE_WIDGET_H

#include <gtk/gtk.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_TIMELINE_WIDGET (ps_timeline_widget_get_type ())
G_DECLARE_FINAL_TYPE (PsTimelineWidget, ps_timeline_widget, PS, TIMELINE_WIDGET, GtkWidget)

void ps_timeline_widget_set_session (PsTimelineWidget *self, PsSession *session);
/* Shows the whole run. */
void ps_timeline_widget_zoom_fit (PsTimelineWidget *self);
/* Multiplies the time scale by factor (> 1 zooms in) around the centre. */
void ps_timeline_widget_zoom (PsTimelineWidget *self, double factor);
/* The visible time range, in ns. */
void ps_timeline_widget_get_range (PsTimelineWidget *self, double *t0, double *t1);
/* The span (predicted, or measured when `measured`) at a widget point. */
guint ps_timeline_widget_span_at (PsTimelineWidget *self, double x, double y,
                                  gboolean *measured);

G_END_DECLS

#endif
