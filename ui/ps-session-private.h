/* ps-session-private.h: what ps-session.c and the job code share: the
 * immutable results that worker threads produce and the main thread swaps
 * into the session. */
#ifndef PS_SESSION_PRIVATE_H
#define PS_SESSION_PRIVATE_H

#include "ps-session.h"
#include "ps-device.h"
#include "ps-diff.h"
#include "ps-figures.h"
#include "ps-memory-draw.h"
#include "ps-timeline-draw.h"
#include "ps-trace-graph.h"

G_BEGIN_DECLS

/* The kinds of job a session runs off the UI thread. */
typedef enum {
  PS_JOB_LOAD,
  PS_JOB_COMPARE,
  PS_JOB_PLAN,
  PS_JOB_LAYOUT,
  PS_JOB_GPU,
  PS_JOB_DIFF,
  PS_JOB__COUNT
} PsJobKind;

/* The jobs whose results belong to one document. */
#define PS_JOBS_OF_DOCUMENT                                                               \
  ((1u << PS_JOB_COMPARE) | (1u << PS_JOB_PLAN) | (1u << PS_JOB_LAYOUT) | (1u << PS_JOB_GPU) \
   | (1u << PS_JOB_DIFF))
#define PS_JOBS_ALL ((1u << PS_JOB__COUNT) - 1)

/* A loaded graph file.  Shared read-only between threads; refcounted. */
typedef struct {
  gint ref;
  GFile *file;
  char *title;
  ps_graph graph;
  double load_seconds;
  /* A trace: its imported timeline and how the graph was made of it, for
   * the measured run each plan of it is shown against. */
  gboolean has_trace;
  ps_timeline trace;
  ps_trace_graph_info trace_info;
} PsDoc;

/* One plan of a document with what the app derives from it. */
typedef struct {
  gint ref;
  PsDoc *doc;
  /* The graph as planned: a copy of the document's graph that shares every
   * array but the nodes, which carry the what-if choices. */
  ps_graph graph;
  ps_node *nodes; /* owned when the graph is a copy, else NULL */
  ps_cond *conds; /* owned when an assumption was changed, else NULL */
  ps_device device; /* the profile planned and simulated for (plan.options.device) */
  ps_plan plan;
  ps_timeline tl;
  ps_diagnosis dg;
  ps_figures fig;       /* of the predicted timeline */
  gboolean have_plan, have_tl, have_dg, have_fig;
  /* The chart and the memory map of the prediction alone, built on the
   * worker thread so that the main thread need not (NULL, FALSE: none). */
  ps_timeline_chart *chart;
  ps_memory_map mem;
  gboolean have_mem;
  char *error;          /* plan or simulation failure, or NULL */
  /* A trace's measured run against this plan, built on the worker thread;
   * the session takes it when the plan arrives (NULL: none). */
  struct PsMeasured_ *trace_measured;
  PsSummary summary;
  double plan_seconds, sim_seconds;
} PsPlanState;

/* A GPU run of one plan (or a trace's run set against it).  Shared
 * read-only between threads; refcounted. */
typedef struct PsMeasured_ {
  gint ref;
  PsPlanState *state;
  ps_timeline tl; /* moved out of the profiler's result */
  ps_diagnosis dg;
  ps_figures fig;
  gboolean have_dg, have_fig;
  char *gpu_name;
} PsMeasured;

/* The laid-out DAG of one document. */
typedef struct {
  gint ref;
  PsDoc *doc;
  ps_scene scene;    /* laid out; annotated by the session on the main thread */
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

  gint8 *assume;   /* per conditional of doc: ps_assume, or PS_ASSUME_AS_FILE; or NULL */
  GArray *undo;    /* PsWhatIf edits, oldest first */

  ps_color_by color_by;
  gboolean show_critical;
  gboolean dark;

  /* What the views draw: the state's own chart and memory map, or, with a
   * measured run or a baseline, ones derived on the main thread
   * (refresh_views in ps-session.c; own_views says they are the session's
   * to free). */
  const ps_timeline_chart *chart;
  const ps_memory_map *mem;
  gboolean own_views;
  ps_timeline_chart *own_chart;
  ps_memory_map own_mem;
  gboolean have_own_mem;

  /* The visible time span the timeline and the memory map share. */
  double view_t0, view_t1;
  gboolean view_fitted;

  PsSelectionKind sel_kind;
  guint sel_id;

  PsPlanState *base;    /* the baseline's plan, timeline and figures, or NULL */
  /* A baseline of another file (Compare with…): its run against the
   * current one, as `planscope-cli diff` compares them (NULL until the
   * job is done). */
  ps_diff *base_diff;
  gboolean diff_running, diff_pending;

  /* Jobs.  Each owns its cancellable, kept here by kind while it runs
   * (or waits, for a file job), so that cancelling one never stops
   * another and a new document cancels only what belonged to the old. */
  GPtrArray *running[PS_JOB__COUNT];
  GMainContext *context; /* where the session lives: jobs post progress here */
  /* Files are read one at a time (ps-session-files.c): the file job in
   * progress and those waiting for it. */
  gpointer file_job;
  GQueue file_waiting;
  guint jobs;            /* running */
  gboolean plan_running;
  gboolean plan_pending; /* options changed while a plan job ran */
  gboolean layout_running;
  gboolean plan_cancelled;   /* the last plan job was cancelled: no plan until asked */
  gboolean layout_cancelled;
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
  gint8 *assume;   /* per conditional, or NULL */
} PsPlanInput;

/* One what-if edit, for undo: what it changed and the value before. */
typedef enum { PS_WHATIF_NO_FUSE, PS_WHATIF_PIN, PS_WHATIF_ASSUME } PsWhatIfKind;
typedef struct {
  PsWhatIfKind kind;
  guint id;  /* node, or conditional index */
  gint old;
} PsWhatIf;

PsDoc *ps__doc_ref (PsDoc *doc);
void ps__doc_unref (PsDoc *doc);
PsPlanState *ps__state_ref (PsPlanState *st);
void ps__state_unref (PsPlanState *st);
PsMeasured *ps__measured_ref (PsMeasured *m);
void ps__measured_unref (PsMeasured *m);
void ps__layout_unref (PsLayout *l);
void ps__state_input_free (PsPlanInput *in);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PsDoc, ps__doc_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PsPlanState, ps__state_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PsLayout, ps__layout_unref)

/* How far a job is (0 to 1), from its worker thread. */
typedef void (*PsJobProgress) (gpointer ctx, double fraction);

/* Worker-thread bodies (ps-session-jobs.c); each checks `cancellable`
 * between stages, and a load also inside them (as it reads and parses),
 * so that a cancelled load of a large file stops early.  progress may be
 * NULL. */
PsDoc *ps__job_load (GFile *file, GCancellable *cancellable, PsJobProgress progress,
                     gpointer ctx, GError **error);
PsPlanState *ps__job_plan (const PsPlanInput *in, GCancellable *cancellable, GError **error);
/* Loads file and plans it with options on device (a trace on the streams
 * it ran on): the state of a baseline from another file. */
PsPlanState *ps__job_compare (GFile *file, const ps_plan_options *options, const char *device,
                              GCancellable *cancellable, PsJobProgress progress, gpointer ctx,
                              GError **error);
/* Run a against run b (see ps-diff.h); free with ps__diff_free. */
ps_diff *ps__job_diff (const PsPlanState *a, const PsPlanState *b, GCancellable *cancellable,
                       GError **error);
void ps__diff_free (ps_diff *d);
PsLayout *ps__job_layout (PsDoc *doc, PsPlanState *state, GCancellable *cancellable,
                          GError **error);
PsMeasured *ps__job_gpu (PsPlanState *state, GCancellable *cancellable, PsJobProgress progress,
                         gpointer ctx, GError **error);

/* Job bookkeeping (ps-session.c), for the session's files.  begin and
 * end count a job that shows as busy with `what`; start makes a job's own
 * cancellable and keeps it until finished; cancel stops the jobs of the
 * kinds in a mask of 1 << PsJobKind; post_progress may be called from any
 * thread and shows on the session's main context. */
void ps__session_busy_begin (PsSession *self, const char *what);
void ps__session_busy_end (PsSession *self);
GCancellable *ps__session_job_start (PsSession *self, PsJobKind kind);
void ps__session_job_finished (PsSession *self, PsJobKind kind, GCancellable *cancellable);
void ps__session_cancel_jobs (PsSession *self, guint kinds);
void ps__session_post_progress (PsSession *self, double fraction);
/* What an Open and a Compare with… end in, on the main thread: a new
 * document, a baseline from another file. */
void ps__session_set_document (PsSession *self, PsDoc *doc);
void ps__session_set_other_baseline (PsSession *self, PsPlanState *st);

/* The current plan state (NULL when none), for ps-session-export.c. */
PsPlanState *ps__session_get_state (PsSession *self);
PsMeasured *ps__session_get_measured (PsSession *self);

/* Whether a GPU is usable; the reason when not (probed once). */
gboolean ps__job_gpu_probe (char **reason);

/* What identifies a node's step across plans: the first node of it
 * (ps-session-jobs.c). */
guint32 ps__node_group_key (const ps_plan *p, guint node);


G_END_DECLS

#endif
