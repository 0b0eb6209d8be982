/* ps-session.h: the state every view of the app binds to.
 *
 * A session holds one document (a loaded graph), the plan options and the
 * per-node what-if choices, the current plan with its predicted timeline
 * and diagnosis, the DAG layout, an optional measured timeline, the
 * selection and an optional baseline.  Loading, planning, simulating,
 * laying out and GPU runs happen on worker threads; results are swapped in
 * on the main thread and announced with signals, so a view only reads
 * plain data here and never calls core/ itself.  Pointers returned by the
 * getters stay valid until the next signal that replaces them
 * ("document-changed", "plan-changed", "layout-changed",
 * "measured-changed").
 *
 * Every figure a view shows comes from the session's ps_figures (the
 * measured run when there is one, else the prediction on the plan's
 * device): the DAG scene is annotated with them, the timeline chart and
 * the memory map are built from them, and the inspector and the status
 * line read them.  No view derives a duration, a stream, the critical
 * path or a lifetime of its own. */
#ifndef PS_SESSION_H
#define PS_SESSION_H

#include <gio/gio.h>

#include "ps-types.h"
#include "ps-diagnose.h"
#include "ps-figures.h"
#include "ps-graph.h"
#include "ps-memory-draw.h"
#include "ps-plan.h"
#include "ps-scene.h"
#include "ps-style.h"
#include "ps-timeline-draw.h"
#include "ps-trace-graph.h"
#include "ps-timeline.h"

G_BEGIN_DECLS

#define PS_TYPE_SESSION (ps_session_get_type ())
G_DECLARE_FINAL_TYPE (PsSession, ps_session, PS, SESSION, GObject)

#define PS_SESSION_ERROR (ps_session_error_quark ())
GQuark ps_session_error_quark (void);

/* Stream pin choices besides 0..63. */
#define PS_PIN_AS_FILE (-2) /* whatever the file says */
#define PS_PIN_NONE (-1)    /* let the planner choose */

PsSession *ps_session_new (void);

/* ---- document ----------------------------------------------------------- */

/* Loads a graph file off the main thread.  On failure the current document
 * stays and the error (PS_SESSION_ERROR) carries the loader's located
 * messages, `FILE:LINE:COL: error: ...`, one a line. */
void ps_session_load_async (PsSession *self, GFile *file, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data);
gboolean ps_session_load_finish (PsSession *self, GAsyncResult *result, GError **error);

GFile *ps_session_get_file (PsSession *self);
/* The title for the window: the graph's name or the file's basename. */
const char *ps_session_get_title (PsSession *self);
/* The graph as planned (with the what-if choices applied); NULL when none. */
const ps_graph *ps_session_get_graph (PsSession *self);

/* ---- plan options and what-if ------------------------------------------- */

guint ps_session_get_streams (PsSession *self);
void ps_session_set_streams (PsSession *self, guint streams);
gboolean ps_session_get_fusion (PsSession *self);
void ps_session_set_fusion (PsSession *self, gboolean fusion);
const char *ps_session_get_device (PsSession *self);
void ps_session_set_device (PsSession *self, const char *device);
/* Names of the device profiles: data/devices/NAME.json and the built-ins. */
GStrv ps_session_list_devices (void);

gboolean ps_session_get_node_no_fuse (PsSession *self, guint node);
void ps_session_set_node_no_fuse (PsSession *self, guint node, gboolean no_fuse);
/* PS_PIN_AS_FILE, PS_PIN_NONE or a stream number. */
int ps_session_get_node_pin (PsSession *self, guint node);
void ps_session_set_node_pin (PsSession *self, guint node, int pin);
/* Whether a node could be fused at all (a fusible element-wise kernel). */
gboolean ps_session_node_fusible (PsSession *self, guint node);

/* Which branch of conditional `cond` (an index into graph->conds) the
 * plan assumes: PS_ASSUME_AS_FILE (what the file says) or a ps_assume. */
#define PS_ASSUME_AS_FILE (-1)
int ps_session_get_cond_assume (PsSession *self, guint cond);
void ps_session_set_cond_assume (PsSession *self, guint cond, int assume);

/* What-if edits (fusion, pins, assumptions) can be undone one by one, or
 * all at once ("can-undo" tells whether there is one). */
gboolean ps_session_can_undo (PsSession *self);
void ps_session_undo (PsSession *self);
void ps_session_reset_whatif (PsSession *self);

/* ---- results ------------------------------------------------------------ */

/* The current plan, its predicted timeline and diagnosis; NULL when none. */
const ps_plan *ps_session_get_plan (PsSession *self);
const ps_timeline *ps_session_get_predicted (PsSession *self);
const ps_diagnosis *ps_session_get_diagnosis (PsSession *self);
/* The measured timeline of the current plan; NULL when none. */
const ps_timeline *ps_session_get_measured (PsSession *self);
/* The figures every view shows: of the measured run when there is one,
 * else of the prediction; NULL when none.  The predicted ones always. */
const ps_figures *ps_session_get_figures (PsSession *self);
const ps_figures *ps_session_get_predicted_figures (PsSession *self);
/* The timeline chart (the predicted lanes, the measured run over them,
 * the baseline under them) and the memory map; NULL when none. */
const ps_timeline_chart *ps_session_get_chart (PsSession *self);
const ps_memory_map *ps_session_get_memory_map (PsSession *self);
/* The laid-out DAG, annotated with the current plan, figures and style;
 * NULL while none. */
const ps_scene *ps_session_get_scene (PsSession *self);
/* The scene box that shows a graph node, and the first node a box
 * shows; PS_NONE when none. */
guint ps_session_node_box (PsSession *self, guint node);
guint ps_session_box_node (PsSession *self, guint box);
/* The nodes a box shows, in node order, at most max; *total (may be NULL)
 * gets how many there are. */
GArray *ps_session_box_nodes (PsSession *self, guint box, guint max, guint *total);

/* Why the last plan failed (e.g. a pin that cannot be honoured), or NULL. */
const char *ps_session_get_plan_error (PsSession *self);

void ps_session_get_summary (PsSession *self, PsSummary *out);
/* The status line's text (also used by tests). */
char *ps_session_format_summary (PsSession *self);

/* Per node: the span of the predicted (or measured) timeline that ran it,
 * or PS_NONE. */
guint ps_session_node_span (PsSession *self, guint node, gboolean measured);
/* What the trace the document was made from says of a node (see
 * ps_trace_node_get); FALSE when the document is no trace. */
gboolean ps_session_trace_node (PsSession *self, guint node, ps_trace_node *out);
/* Whether the node's step differs from the baseline's (stream or group). */
gboolean ps_session_node_changed (PsSession *self, guint node);
/* The displayed label of a span ("a + b" for fused spans). */
char *ps_session_span_label (PsSession *self, const ps_timeline *tl, guint span);
char *ps_session_stream_label (PsSession *self, const ps_timeline *tl, guint stream);

/* Nodes whose name, kernel function or one of whose buffers' names contain
 * `text` (case-insensitive), in node order, at most `max`. */
GArray *ps_session_find_nodes (PsSession *self, const char *text, guint max);
/* The same on a worker thread, for typing: a million nodes take over
 * 0.1 s.  Cancelled searches fail with G_IO_ERROR_CANCELLED. */
void ps_session_find_nodes_async (PsSession *self, const char *text, guint max,
                                  GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data);
GArray *ps_session_find_nodes_finish (PsSession *self, GAsyncResult *result, GError **error);

/* ---- the style every view draws with ------------------------------------- */

ps_color_by ps_session_get_color_by (PsSession *self);
void ps_session_set_color_by (PsSession *self, ps_color_by color_by);
gboolean ps_session_get_show_critical (PsSession *self);
void ps_session_set_show_critical (PsSession *self, gboolean show);
/* Dark canvases (the window follows the desktop's style). */
gboolean ps_session_get_dark (PsSession *self);
void ps_session_set_dark (PsSession *self, gboolean dark);
void ps_session_get_style (PsSession *self, ps_style *out);

/* ---- the visible time span ------------------------------------------------- */

/* The time span the timeline and the memory map show, in ns.  While it is
 * fitted it follows the run's length through every re-plan; a zoom or a
 * pan ("set") stops that until the next fit.  "time-view-changed" tells. */
void ps_session_get_time_view (PsSession *self, double *t0, double *t1);
void ps_session_set_time_view (PsSession *self, double t0, double t1);
void ps_session_fit_time_view (PsSession *self);
gboolean ps_session_get_time_view_fitted (PsSession *self);

/* ---- selection ---------------------------------------------------------- */

PsSelectionKind ps_session_get_selection (PsSession *self, guint *id);
void ps_session_select (PsSession *self, PsSelectionKind kind, guint id);
/* Selects the span's first node. */
void ps_session_select_span (PsSession *self, const ps_timeline *tl, guint span);
/* Selects what a DAG box shows: its node, or the box when it stands for
 * several. */
void ps_session_select_box (PsSession *self, guint box);

/* ---- baseline ----------------------------------------------------------- */

void ps_session_pin_baseline (PsSession *self);
void ps_session_clear_baseline (PsSession *self);
gboolean ps_session_has_baseline (PsSession *self);
/* The baseline's plan, predicted timeline, figures and status numbers;
 * NULL (invalid) without one. */
const ps_plan *ps_session_get_baseline_plan (PsSession *self);
const ps_timeline *ps_session_get_baseline_timeline (PsSession *self);
const ps_figures *ps_session_get_baseline_figures (PsSession *self);
void ps_session_get_baseline_summary (PsSession *self, PsSummary *out);
/* Compare with…: another file (a graph or a trace) loaded and planned with
 * the current options (a trace on its own streams) as the baseline.  A
 * failure leaves the baseline as it was. */
void ps_session_compare_async (PsSession *self, GFile *file, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
gboolean ps_session_compare_finish (PsSession *self, GAsyncResult *result, GError **error);
/* The title of the baseline's file when it is another than the current
 * one, else NULL. */
const char *ps_session_get_baseline_other (PsSession *self);
/* That baseline's run against the current one, per kernel name, as
 * `planscope-cli diff BASELINE CURRENT` gives it (NULL while it is being
 * computed, or when the baseline is of this file).  "baseline-changed"
 * says when it (or the baseline) changes. */
struct ps_diff;
const struct ps_diff *ps_session_get_baseline_diff (PsSession *self);

/* ---- exports ------------------------------------------------------------ */

/* Writes a view ("dag", "plan", "timeline", "memory") in a format ("dot",
 * "svg", "png", "json", "trace") of the current plan to a file, off the
 * main thread, through the same code as `planscope-cli export`. */
void ps_session_export_async (PsSession *self, const char *view, const char *format,
                              GFile *file, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
gboolean ps_session_export_finish (PsSession *self, GAsyncResult *result, GError **error);

/* ---- jobs --------------------------------------------------------------- */

/* Re-plans and re-simulates now (also done by every option setter). */
void ps_session_replan (PsSession *self);
/* Runs the plan on the GPU; FALSE (with *reason) when no GPU is usable. */
gboolean ps_session_gpu_available (char **reason);
void ps_session_run_gpu (PsSession *self);
/* Cancels whatever runs. */
void ps_session_cancel (PsSession *self);
/* TRUE while a job runs; "progress" in [0, 1] or < 0 when unknown. */
gboolean ps_session_get_busy (PsSession *self);
double ps_session_get_progress (PsSession *self);
const char *ps_session_get_activity (PsSession *self);
/* TRUE when a document is loaded, planned, simulated and laid out, and no
 * job is pending: what `--screenshot` waits for. */
gboolean ps_session_get_ready (PsSession *self);

G_END_DECLS

#endif
