/* ps-inspector.h: the sidebar that describes the session's selection: a
 * node with its buffers, its plan step (stream, fused group, events waited
 * on), predicted and measured times, and the what-if choices for it; a
 * stall with what it waited for and why; or a buffer. */
#ifndef PS_INSPECTOR_H
#define PS_INSPECTOR_H

#include <gtk/gtk.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_INSPECTOR (ps_inspector_get_type ())
G_DECLARE_FINAL_TYPE (PsInspector, ps_inspector, PS, INSPECTOR, GtkWidget)

void ps_inspector_set_session (PsInspector *self, PsSession *session);
/* What the inspector shows, as plain text (title first). */
char *ps_inspector_get_text (PsInspector *self);

G_END_DECLS

#endif
