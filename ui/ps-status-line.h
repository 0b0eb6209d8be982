/* ps-status-line.h: the line under the views: makespan, streams used,
 * kernels before -> after fusion, events and pool bytes (with deltas
 * against the baseline), and the progress of background jobs with a
 * cancel button. */
#ifndef PS_STATUS_LINE_H
#define PS_STATUS_LINE_H

#include <gtk/gtk.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_STATUS_LINE (ps_status_line_get_type ())
G_DECLARE_FINAL_TYPE (PsStatusLine, ps_status_line, PS, STATUS_LINE, GtkWidget)

void ps_status_line_set_session (PsStatusLine *self, PsSession *session);
const char *ps_status_line_get_text (PsStatusLine *self);

G_END_DECLS

#endif
