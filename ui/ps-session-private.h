/* ps-session-private.h: what ps-session.c and the job code share: the
 * immutable results that worker threads produce and the main thread swaps
 * into the session. */
#ifndef PS_SESSION_PRIVATE_H
#define PS_SESSION_PRIVATE_H

#include "ps-session.h"
#include "ps-device.h"

G_BEGIN_DECLS

/* A loaded graph file.  Shared read-only between threads; refcounted. */
typedef struct {
  gint ref;
  GFile *file;
  char *title;
  ps_graph graph;
  double load_seconds;
} PsDoc;

/* One plan of a document with what the app derives from it. */
typedef struct {
  gint ref;
  PsDoc *doc;
  /* The graph as planned: a copy of the document's graph that shares every
   * array but the nodes, which carry the what-if choices. */
  ps_graph graph;
  ps_node *nodes; /* owned when the graph is a copy, else NULL */
  ps_device device; /* the profile planned and simulated for (plan.options.device) */
  ps_plan plan;
  ps_timeline tl;
  ps_diagnosis dg;
  gboolean have_plan, have_tl, have_dg;
  guint32 *node_span;   /* per node: predicted span, or PS_NONE */
  guint8 *node_critical;
  double *buf_start, *buf_end; /* per buffer; start > end when unused */
  double max_duration_ns;
  char *error;          /* plan or simulation failure, or NULL */
  PsSummary summary;
  double plan_seconds, sim_seconds;
} PsPlanState;

/* A GPU run of one plan. */
typedef struct {
  PsPlanState *state;
  ps_timeline tl; /* moved out of the profiler's result */
  guint32 *node_span;
  double max_duration_ns;
  char *gpu_name;
} PsMeasured;

/* The laid-out DAG of one document. */
typedef struct {
  gint ref;
  PsDoc *doc;
  ps_scene scene;
  guint32 *node_box;  /* per graph node: the scene box showing it, or PS_NONE */
  guint32 *box_first; /* per scene box: a graph node it shows, or PS_NONE */
  double seconds;
} PsLayout;

/* The session's fields, shared by ps-session.c (state, jobs, signals)
 * and ps-session-query.c (read-only questions views ask). */
struct _PsSession
{
  GObject parent_instance;

  PsDoc *doc;
  PsPlanState *state;
  PsMeasured *measured;
  PsLayout *layout;
  gboolean layout_failed;
  char *layout_error;

  ps_plan_options options;
  char *device;
  guint8 *no_fuse; /* per node of doc, or NULL */
  gint32 *pin;     /* per node of doc, or NULL */

  PsColorMode color_by;
  gboolean show_critical;

  PsSelectionKind sel_kind;
  guint sel_id;

  gboolean has_baseline;
  PsSummary baseline;
  guint32 *base_stream; /* per node: stream in the baseline plan */
  guint32 *base_group;  /* per node: first node of its step */
  guint base_nodes;

  /* Jobs. */
  GCancellable *cancellable;
  guint jobs;            /* running */
  gboolean plan_running;
  gboolean plan_pending; /* options changed while a plan job ran */
  gboolean layout_running;
  double progress;
  char *activity;
};

/* What a plan job needs; copied so the worker sees a consistent picture. */
typedef struct {
  PsDoc *doc;
  ps_plan_options options;
  char *device;
  guint8 *no_fuse; /* per node, or NULL */
  gint32 *pin;     /* per node, or NULL */
} PsPlanInput;

PsDoc *ps__doc_ref (PsDoc *doc);
void ps__doc_unref (PsDoc *doc);
PsPlanState *ps__state_ref (PsPlanState *st);
void ps__state_unref (PsPlanState *st);
void ps__measured_free (PsMeasured *m);
void ps__layout_unref (PsLayout *l);
void ps__state_input_free (PsPlanInput *in);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PsDoc, ps__doc_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PsPlanState, ps__state_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PsLayout, ps__layout_unref)

/* Worker-thread bodies (ps-session-jobs.c); each checks `cancellable`
 * between stages. */
PsDoc *ps__job_load (GFile *file, GCancellable *cancellable, GError **error);
PsPlanState *ps__job_plan (const PsPlanInput *in, GCancellable *cancellable, GError **error);
PsLayout *ps__job_layout (PsDoc *doc, PsPlanState *state, GCancellable *cancellable,
                          GError **error);
PsMeasured *ps__job_gpu (PsPlanState *state, GCancellable *cancellable,
                         void (*progress) (gpointer ctx, double fraction), gpointer ctx,
                         GError **error);

/* The current plan state (NULL when none), for ps-session-export.c. */
PsPlanState *ps__session_get_state (PsSession *self);

/* Whether a GPU is usable; the reason when not (probed once). */
gboolean ps__job_gpu_probe (char **reason);

/* What identifies a node's step across plans: the first node of it
 * (ps-session-jobs.c). */
guint32 ps__node_group_key (const ps_plan *p, guint node);


/* Colours (ps-palette.c). */
guint32 ps__palette_stream (guint stream);
guint32 ps__palette_group (guint group);
guint32 ps__palette_kind (guint op);
guint32 ps__palette_duration (double ns, double max_ns);

G_END_DECLS

#endif
