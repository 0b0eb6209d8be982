/* ps-baseline-view.h: what changed since the baseline (Ctrl+B): the
 * makespan, events and pool before and after, and a table of the nodes
 * whose stream, start, duration or place on the critical path changed,
 * sortable by each change; undo and reset of the what-if edits. */
#ifndef PS_BASELINE_VIEW_H
#define PS_BASELINE_VIEW_H

#include <gtk/gtk.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_BASELINE_VIEW (ps_baseline_view_get_type ())
G_DECLARE_FINAL_TYPE (PsBaselineView, ps_baseline_view, PS, BASELINE_VIEW, GtkWidget)

void ps_baseline_view_set_session (PsBaselineView *self, PsSession *session);
/* The summary line and the rows as text, a line each (for tests). */
char *ps_baseline_view_get_text (PsBaselineView *self);
/* The rows shown (after sorting) and how many nodes changed in all. */
guint ps_baseline_view_get_n_rows (PsBaselineView *self, guint *changed);

G_END_DECLS

#endif
