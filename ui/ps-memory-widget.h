/* ps-memory-widget.h: the memory map: every pooled buffer as a box from
 * its first to its last use (x, time of the predicted run) at its pool
 * offset (y), so reuse of bytes across time is visible. */
#ifndef PS_MEMORY_WIDGET_H
#define PS_MEMORY_WIDGET_H

#include <gtk/gtk.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_MEMORY_WIDGET (ps_memory_widget_get_type ())
G_DECLARE_FINAL_TYPE (PsMemoryWidget, ps_memory_widget, PS, MEMORY_WIDGET, GtkWidget)

void ps_memory_widget_set_session (PsMemoryWidget *self, PsSession *session);
/* The buffer drawn at a widget point, or PS_NONE. */
guint ps_memory_widget_buffer_at (PsMemoryWidget *self, double x, double y);

G_END_DECLS

#endif
