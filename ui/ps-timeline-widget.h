/* ps-timeline-widget.h: the per-stream timeline of a session, drawn by
 * the renderer's timeline chart (render/ps-timeline-draw.h) as the exports
 * draw it: lanes of spans over a time axis, every wait hatched with its
 * cause, event arrows, the measured run over the prediction and the
 * baseline under it; zoom about the pointer and pan with mouse, touchpad
 * and keyboard over the time span the session holds. */
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
/* The wait (of the predicted diagnosis) at a widget point, or PS_NONE. */
guint ps_timeline_widget_wait_at (PsTimelineWidget *self, double x, double y);
/* The time at a widget x. */
double ps_timeline_widget_time_at (PsTimelineWidget *self, double x);
/* What a scroll of (dx, dy) steps with modifiers does: with Ctrl, zooms
 * about the pointer (where the last motion left it); else pans. */
void ps_timeline_widget_scroll (PsTimelineWidget *self, double dx, double dy,
                                GdkModifierType mods);

G_END_DECLS

#endif
