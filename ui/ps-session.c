/* ps-session.c: the session object: document, options, results,
 * selection and baseline, with the properties and signals views bind to.
 * The jobs that fill it run on worker threads (ps-session-jobs.c). */
#include "ps-session-private.h"

#include <math.h>
#include <string.h>

#include "ps-dag-view.h"


enum {
  PROP_0,
  PROP_STREAMS,
  PROP_FUSION,
  PROP_DEVICE,
  PROP_COLOR_BY,
  PROP_SHOW_CRITICAL,
  PROP_BUSY,
  PROP_PROGRESS,
  PROP_ACTIVITY,
  PROP_READY,
  PROP_TITLE,
  PROP_HAS_BASELINE,
  PROP_HAS_DOCUMENT,
  PROP_DARK,
  PROP_CAN_UNDO,
  N_PROPS
};

enum {
  DOCUMENT_CHANGED,
  PLAN_CHANGED,
  LAYOUT_CHANGED,
  MEASURED_CHANGED,
  SELECTION_CHANGED,
  TIME_VIEW_CHANGED,
  BASELINE_CHANGED,
  JOB_FAILED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PsSession, ps_session, G_TYPE_OBJECT)

static void start_plan (PsSession *self);
static void start_diff (PsSession *self);
static void start_layout (PsSession *self);
static void refresh_views (PsSession *self, gboolean rebuild);
static void drop_own_views (PsSession *self);

static void
notify_ready (PsSession *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

void
ps__session_busy_begin (PsSession *self, const char *what)
{
  self->jobs++;
  g_free (self->activity);
  self->activity = g_strdup (what);
  self->progress = -1;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ACTIVITY]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROGRESS]);
  if (self->jobs == 1)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
  notify_ready (self);
}

void
ps__session_busy_end (PsSession *self)
{
  g_return_if_fail (self->jobs > 0);
  self->jobs--;
  if (self->jobs == 0)
    {
      g_clear_pointer (&self->activity, g_free);
      self->progress = -1;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ACTIVITY]);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
    }
  notify_ready (self);
}

GCancellable *
ps__session_job_start (PsSession *self, PsJobKind kind)
{
  GCancellable *c = g_cancellable_new ();
  g_ptr_array_add (self->running[kind], c);
  return c;
}

void
ps__session_job_finished (PsSession *self, PsJobKind kind, GCancellable *cancellable)
{
  if (cancellable)
    g_ptr_array_remove (self->running[kind], cancellable);
}

void
ps__session_cancel_jobs (PsSession *self, guint kinds)
{
  for (guint k = 0; k < PS_JOB__COUNT; k++)
    if (kinds & (1u << k))
      for (guint i = 0; i < self->running[k]->len; i++)
        g_cancellable_cancel (g_ptr_array_index (self->running[k], i));
}

typedef struct {
  PsSession *self;
  double fraction;
} ProgressMsg;

static gboolean
progress_main (gpointer data)
{
  ProgressMsg *msg = data;
  if (msg->self->jobs > 0)
    {
      msg->self->progress = msg->fraction;
      g_object_notify_by_pspec (G_OBJECT (msg->self), properties[PROP_PROGRESS]);
    }
  g_object_unref (msg->self);
  g_free (msg);
  return G_SOURCE_REMOVE;
}

void
ps__session_post_progress (PsSession *self, double fraction)
{
  /* On the session's own main context, which need not be the default
   * one (a session made in another thread). */
  ProgressMsg *msg = g_new (ProgressMsg, 1);
  msg->self = g_object_ref (self);
  msg->fraction = CLAMP (fraction, 0, 1);
  GSource *src = g_idle_source_new ();
  g_source_set_callback (src, progress_main, msg, NULL);
  g_source_attach (src, self->context);
  g_source_unref (src);
}

/* ---- object ------------------------------------------------------------- */

static void
ps_session_dispose (GObject *object)
{
  PsSession *self = PS_SESSION (object);
  ps__session_cancel_jobs (self, PS_JOBS_ALL);
  G_OBJECT_CLASS (ps_session_parent_class)->dispose (object);
}

static void
ps_session_finalize (GObject *object)
{
  PsSession *self = PS_SESSION (object);
  drop_own_views (self);
  g_clear_pointer (&self->measured, ps__measured_unref);
  g_clear_pointer (&self->state, ps__state_unref);
  g_clear_pointer (&self->base, ps__state_unref);
  g_clear_pointer (&self->base_diff, ps__diff_free);
  g_clear_pointer (&self->layout, ps__layout_unref);
  g_clear_pointer (&self->doc, ps__doc_unref);
  g_free (self->layout_error);
  g_free (self->device);
  g_free (self->no_fuse);
  g_free (self->pin);
  g_free (self->assume);
  g_clear_pointer (&self->undo, g_array_unref);
  g_free (self->activity);
  for (guint k = 0; k < PS_JOB__COUNT; k++)
    g_ptr_array_unref (self->running[k]);
  g_main_context_unref (self->context);
  G_OBJECT_CLASS (ps_session_parent_class)->finalize (object);
}

static void
ps_session_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  PsSession *self = PS_SESSION (object);
  switch (prop_id)
    {
    case PROP_STREAMS: g_value_set_uint (value, self->options.streams); break;
    case PROP_FUSION: g_value_set_boolean (value, self->options.fusion); break;
    case PROP_DEVICE: g_value_set_string (value, self->device); break;
    case PROP_COLOR_BY: g_value_set_int (value, self->color_by); break;
    case PROP_SHOW_CRITICAL: g_value_set_boolean (value, self->show_critical); break;
    case PROP_BUSY: g_value_set_boolean (value, self->jobs > 0); break;
    case PROP_PROGRESS: g_value_set_double (value, self->progress); break;
    case PROP_ACTIVITY: g_value_set_string (value, self->activity); break;
    case PROP_READY: g_value_set_boolean (value, ps_session_get_ready (self)); break;
    case PROP_TITLE: g_value_set_string (value, ps_session_get_title (self)); break;
    case PROP_HAS_BASELINE: g_value_set_boolean (value, self->base != NULL); break;
    case PROP_HAS_DOCUMENT: g_value_set_boolean (value, self->doc != NULL); break;
    case PROP_DARK: g_value_set_boolean (value, self->dark); break;
    case PROP_CAN_UNDO: g_value_set_boolean (value, ps_session_can_undo (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ps_session_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  PsSession *self = PS_SESSION (object);
  switch (prop_id)
    {
    case PROP_STREAMS: ps_session_set_streams (self, g_value_get_uint (value)); break;
    case PROP_FUSION: ps_session_set_fusion (self, g_value_get_boolean (value)); break;
    case PROP_DEVICE: ps_session_set_device (self, g_value_get_string (value)); break;
    case PROP_COLOR_BY: ps_session_set_color_by (self, g_value_get_int (value)); break;
    case PROP_SHOW_CRITICAL: ps_session_set_show_critical (self, g_value_get_boolean (value)); break;
    case PROP_DARK: ps_session_set_dark (self, g_value_get_boolean (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ps_session_class_init (PsSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = ps_session_dispose;
  object_class->finalize = ps_session_finalize;
  object_class->get_property = ps_session_get_property;
  object_class->set_property = ps_session_set_property;

  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  properties[PROP_STREAMS] = g_param_spec_uint ("streams", NULL, NULL, 1, PS_MAX_STREAMS, 4, rw);
  properties[PROP_FUSION] = g_param_spec_boolean ("fusion", NULL, NULL, TRUE, rw);
  properties[PROP_DEVICE] = g_param_spec_string ("device", NULL, NULL, PS_DEVICE_DEFAULT, rw);
  properties[PROP_COLOR_BY] = g_param_spec_int ("color-by", NULL, NULL, 0,
                                                PS_COLOR_BY__COUNT - 1, PS_COLOR_BY_STREAM, rw);
  properties[PROP_SHOW_CRITICAL] = g_param_spec_boolean ("show-critical", NULL, NULL, TRUE, rw);
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE, ro);
  properties[PROP_PROGRESS] = g_param_spec_double ("progress", NULL, NULL, -1, 1, -1, ro);
  properties[PROP_ACTIVITY] = g_param_spec_string ("activity", NULL, NULL, NULL, ro);
  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, FALSE, ro);
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL, ro);
  properties[PROP_HAS_BASELINE] = g_param_spec_boolean ("has-baseline", NULL, NULL, FALSE, ro);
  properties[PROP_HAS_DOCUMENT] = g_param_spec_boolean ("has-document", NULL, NULL, FALSE, ro);
  properties[PROP_DARK] = g_param_spec_boolean ("dark", NULL, NULL, FALSE, rw);
  properties[PROP_CAN_UNDO] = g_param_spec_boolean ("can-undo", NULL, NULL, FALSE, ro);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  for (int i = DOCUMENT_CHANGED; i <= BASELINE_CHANGED; i++)
    {
      static const char *const names[] = { "document-changed", "plan-changed", "layout-changed",
                                           "measured-changed", "selection-changed",
                                           "time-view-changed", "baseline-changed" };
      signals[i] = g_signal_new (names[i], G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                 NULL, NULL, NULL, G_TYPE_NONE, 0);
    }
  /* A background job failed: (what, message). */
  signals[JOB_FAILED] = g_signal_new ("job-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                      0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING,
                                      G_TYPE_STRING);
}

static void
ps_session_init (PsSession *self)
{
  ps_plan_options_init (&self->options);
  self->device = g_strdup (PS_DEVICE_DEFAULT);
  self->show_critical = TRUE;
  self->color_by = PS_COLOR_BY_STREAM;
  self->progress = -1;
  self->view_fitted = TRUE;
  self->view_t1 = 1000;
  self->undo = g_array_new (FALSE, FALSE, sizeof (PsWhatIf));
  for (guint k = 0; k < PS_JOB__COUNT; k++)
    self->running[k] = g_ptr_array_new_with_free_func (g_object_unref);
  self->context = g_main_context_ref_thread_default ();
  g_queue_init (&self->file_waiting);
}

/* ---- what the views draw ---------------------------------------------------- */

static const ps_figures *
current_figures (PsSession *self)
{
  if (self->measured && self->measured->have_fig)
    return &self->measured->fig;
  return self->state && self->state->have_fig ? &self->state->fig : NULL;
}

/* Writes the plan, figures and style into the DAG scene. */
static void
annotate_scene (PsSession *self)
{
  if (!self->layout)
    return;
  ps_view_options o;
  ps_view_options_init (&o);
  o.color = self->color_by;
  o.theme = self->dark ? PS_THEME_DARK : PS_THEME_LIGHT;
  o.hide_critical = !self->show_critical;
  o.figures = current_figures (self);
  const ps_plan *p = ps_session_get_plan (self);
  const ps_graph *g = p ? p->graph : &self->layout->doc->graph;
  ps_dag_view_annotate (&self->layout->scene, g, p, &o);
}

static double
run_length (PsSession *self)
{
  return self->chart ? ps_timeline_chart_length (self->chart) : 1000;
}

static void
drop_own_views (PsSession *self)
{
  g_clear_pointer (&self->own_chart, ps_timeline_chart_free);
  if (self->have_own_mem)
    ps_memory_map_free (&self->own_mem);
  self->have_own_mem = FALSE;
  self->chart = NULL;
  self->mem = NULL;
}

/* Points the views at the timeline chart and the memory map (rebuild):
 * the state's own, made on the worker, for a prediction alone; else ones
 * with the measured run over it and the baseline under it.  Annotates
 * the DAG scene and re-fits the visible time span when it follows the
 * run. */
static void
refresh_views (PsSession *self, gboolean rebuild)
{
  if (rebuild)
    {
      drop_own_views (self);
      PsPlanState *st = self->state;
      gboolean ghost = self->base && self->base->have_tl && self->base != st && st
                       && self->base->doc == st->doc
                       && self->base->graph.n_nodes == st->graph.n_nodes;
      if (st && st->have_tl && !self->measured && !ghost)
        {
          self->chart = st->chart;
          self->mem = st->have_mem ? &st->mem : NULL;
        }
      else if (st && st->have_tl)
        {
          ps_timeline_layers l = { &st->tl, st->have_dg ? &st->dg : NULL,
                                   self->measured ? &self->measured->tl : NULL,
                                   ghost ? &self->base->tl : NULL, current_figures (self),
                                   &st->plan };
          if (ps_timeline_chart_new (&self->own_chart, &l) == 0)
            self->chart = self->own_chart;
          const ps_figures *f = current_figures (self);
          if (f && ps_memory_map_build (&self->own_mem, &st->plan, f) == 0)
            {
              self->have_own_mem = TRUE;
              self->mem = &self->own_mem;
            }
        }
    }
  annotate_scene (self);
  if (self->view_fitted)
    {
      self->view_t0 = 0;
      self->view_t1 = run_length (self) * 1.02;
      g_signal_emit (self, signals[TIME_VIEW_CHANGED], 0);
    }
}

PsSession *
ps_session_new (void)
{
  return g_object_new (PS_TYPE_SESSION, NULL);
}

/* ---- the document -------------------------------------------------------- */

void
ps__session_set_document (PsSession *self, PsDoc *doc)
{
  /* What the old document's jobs would bring is of no use now; a file
   * being opened is not the old document's. */
  ps__session_cancel_jobs (self, PS_JOBS_OF_DOCUMENT);
  g_clear_pointer (&self->measured, ps__measured_unref);
  g_clear_pointer (&self->state, ps__state_unref);
  g_clear_pointer (&self->layout, ps__layout_unref);
  g_clear_pointer (&self->layout_error, g_free);
  g_clear_pointer (&self->doc, ps__doc_unref);
  g_clear_pointer (&self->no_fuse, g_free);
  g_clear_pointer (&self->pin, g_free);
  g_clear_pointer (&self->assume, g_free);
  g_array_set_size (self->undo, 0);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
  self->layout_failed = FALSE;
  self->plan_cancelled = self->layout_cancelled = FALSE;
  self->doc = doc;
  self->sel_kind = PS_SELECTION_NONE;
  ps_session_clear_baseline (self);
  self->view_fitted = TRUE;
  refresh_views (self, TRUE);
  if (doc->graph.device && *doc->graph.device && g_strcmp0 (doc->graph.device, self->device))
    {
      g_free (self->device);
      self->device = g_strdup (doc->graph.device);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEVICE]);
    }
  if (doc->graph.measured)
    {
      /* A trace: planned on the streams it ran on, unless asked otherwise. */
      guint streams = CLAMP (ps_graph_pinned_streams (&doc->graph), 1, PS_MAX_STREAMS);
      if (streams != self->options.streams)
        {
          self->options.streams = streams;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STREAMS]);
        }
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HAS_DOCUMENT]);
  g_signal_emit (self, signals[DOCUMENT_CHANGED], 0);
  g_signal_emit (self, signals[PLAN_CHANGED], 0);
  g_signal_emit (self, signals[LAYOUT_CHANGED], 0);
  g_signal_emit (self, signals[MEASURED_CHANGED], 0);
  g_signal_emit (self, signals[SELECTION_CHANGED], 0);
  start_plan (self);
  start_layout (self);
}

GFile *
ps_session_get_file (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->doc ? self->doc->file : NULL;
}

const char *
ps_session_get_title (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->doc ? self->doc->title : NULL;
}

const ps_graph *
ps_session_get_graph (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  if (self->state)
    return &self->state->graph;
  return self->doc ? &self->doc->graph : NULL;
}

const ps_plan *
ps_session_get_plan (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->state && self->state->have_plan ? &self->state->plan : NULL;
}

const ps_timeline *
ps_session_get_predicted (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->state && self->state->have_tl ? &self->state->tl : NULL;
}

const ps_diagnosis *
ps_session_get_diagnosis (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->state && self->state->have_dg ? &self->state->dg : NULL;
}

const ps_timeline *
ps_session_get_measured (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->measured ? &self->measured->tl : NULL;
}

void
ps_session_get_summary (PsSession *self, PsSummary *out)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (self->state && self->state->summary.valid)
    *out = self->state->summary;
  else
    memset (out, 0, sizeof *out);
}

/* ---- planning ----------------------------------------------------------- */

static void
plan_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  PsPlanState *st = ps__job_plan (data, cancellable, &error);
  if (st)
    g_task_return_pointer (task, st, (GDestroyNotify) ps__state_unref);
  else
    g_task_return_error (task, error);
}

static void
plan_done (GObject *source, GAsyncResult *result, gpointer data)
{
  PsSession *self = PS_SESSION (source);
  g_autoptr (GError) error = NULL;
  ps__session_job_finished (self, PS_JOB_PLAN, g_task_get_cancellable (G_TASK (result)));
  PsPlanState *st = g_task_propagate_pointer (G_TASK (result), &error);
  self->plan_running = FALSE;
  if (!st && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && !self->plan_pending)
    self->plan_cancelled = TRUE;
  if (st && (st->doc != self->doc || self->plan_pending))
    g_clear_pointer (&st, ps__state_unref);
  if (st)
    {
      g_clear_pointer (&self->measured, ps__measured_unref);
      g_clear_pointer (&self->state, ps__state_unref);
      self->state = st;
      /* A trace's run comes with each plan of it (the state gives it up:
       * the run holds the state, not the other way round). */
      if (st->trace_measured)
        {
          self->measured = g_steal_pointer (&st->trace_measured);
          self->measured->state = ps__state_ref (st);
        }
      refresh_views (self, TRUE);
      start_diff (self);
      if (st->error)
        g_signal_emit (self, signals[JOB_FAILED], 0, "plan", st->error);
      g_signal_emit (self, signals[PLAN_CHANGED], 0);
      g_signal_emit (self, signals[MEASURED_CHANGED], 0);
      /* The selection's span moved with the plan. */
      g_signal_emit (self, signals[SELECTION_CHANGED], 0);
    }
  if (self->plan_pending && self->doc)
    start_plan (self);
  else if (self->plan_cancelled)
    g_signal_emit (self, signals[PLAN_CHANGED], 0); /* views say it was cancelled */
  ps__session_busy_end (self);
  g_object_unref (self);
}

static void
start_plan (PsSession *self)
{
  if (!self->doc)
    return;
  if (self->plan_running)
    {
      self->plan_pending = TRUE;
      return;
    }
  self->plan_pending = FALSE;
  self->plan_cancelled = FALSE;
  PsPlanInput *in = g_new0 (PsPlanInput, 1);
  in->doc = ps__doc_ref (self->doc);
  in->options = self->options;
  in->device = g_strdup (self->device);
  guint n = self->doc->graph.n_nodes;
  if (self->no_fuse)
    in->no_fuse = g_memdup2 (self->no_fuse, MAX (n, 1));
  if (self->pin)
    in->pin = g_memdup2 (self->pin, sizeof (gint32) * MAX (n, 1));
  if (self->assume)
    in->assume = g_memdup2 (self->assume, MAX (self->doc->graph.n_conds, 1));
  self->plan_running = TRUE;
  ps__session_busy_begin (self, "Planning");
  g_autoptr (GTask) task = g_task_new (g_object_ref (self),
                                       ps__session_job_start (self, PS_JOB_PLAN), plan_done, NULL);
  g_task_set_task_data (task, in, (GDestroyNotify) ps__state_input_free);
  g_task_run_in_thread (task, plan_thread);
}

void
ps_session_replan (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  start_plan (self);
  if (self->doc && !self->layout && !self->layout_failed)
    start_layout (self);
}

/* ---- layout ------------------------------------------------------------- */

static void
layout_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  PsLayout *l = ps__job_layout (data, NULL, cancellable, &error);
  if (l)
    g_task_return_pointer (task, l, (GDestroyNotify) ps__layout_unref);
  else
    g_task_return_error (task, error);
}

static void
layout_done (GObject *source, GAsyncResult *result, gpointer data)
{
  PsSession *self = PS_SESSION (source);
  g_autoptr (GError) error = NULL;
  ps__session_job_finished (self, PS_JOB_LAYOUT, g_task_get_cancellable (G_TASK (result)));
  const PsDoc *of = g_task_get_task_data (G_TASK (result));
  PsLayout *l = g_task_propagate_pointer (G_TASK (result), &error);
  self->layout_running = FALSE;
  gboolean stopped = !l && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* Stopped because another document came is not cancelled by the user:
   * the new document gets its layout below. */
  gboolean cancelled = stopped && of == self->doc;
  if (l && l->doc == self->doc)
    {
      g_clear_pointer (&self->layout, ps__layout_unref);
      self->layout = l;
      annotate_scene (self);
      g_signal_emit (self, signals[LAYOUT_CHANGED], 0);
    }
  else if (l)
    ps__layout_unref (l);
  else if (cancelled)
    {
      self->layout_cancelled = TRUE;
      g_signal_emit (self, signals[LAYOUT_CHANGED], 0);
    }
  else if (!stopped)
    {
      self->layout_failed = TRUE;
      g_free (self->layout_error);
      self->layout_error = g_strdup (error->message);
      g_signal_emit (self, signals[JOB_FAILED], 0, "layout", error->message);
      g_signal_emit (self, signals[LAYOUT_CHANGED], 0);
    }
  /* A document opened while this layout ran needs its own. */
  if (self->doc && !self->layout && !self->layout_failed && !self->layout_cancelled)
    start_layout (self);
  ps__session_busy_end (self);
  g_object_unref (self);
}

static void
start_layout (PsSession *self)
{
  if (!self->doc || self->layout_running)
    return;
  self->layout_running = TRUE;
  self->layout_cancelled = FALSE;
  ps__session_busy_begin (self, "Laying out");
  g_autoptr (GTask) task = g_task_new (g_object_ref (self),
                                       ps__session_job_start (self, PS_JOB_LAYOUT), layout_done,
                                       NULL);
  g_task_set_task_data (task, ps__doc_ref (self->doc), (GDestroyNotify) ps__doc_unref);
  g_task_run_in_thread (task, layout_thread);
}

const ps_scene *
ps_session_get_scene (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->layout ? &self->layout->scene : NULL;
}

/* ---- GPU runs ----------------------------------------------------------- */

static void
gpu_progress (gpointer ctx, double fraction)
{
  ps__session_post_progress (ctx, fraction);
}

static void
gpu_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  PsMeasured *m = ps__job_gpu (data, cancellable, gpu_progress, source, &error);
  if (m)
    g_task_return_pointer (task, m, (GDestroyNotify) ps__measured_unref);
  else
    g_task_return_error (task, error);
}

static void
gpu_done (GObject *source, GAsyncResult *result, gpointer data)
{
  PsSession *self = PS_SESSION (source);
  g_autoptr (GError) error = NULL;
  ps__session_job_finished (self, PS_JOB_GPU, g_task_get_cancellable (G_TASK (result)));
  PsMeasured *m = g_task_propagate_pointer (G_TASK (result), &error);
  if (m && m->state == self->state)
    {
      g_clear_pointer (&self->measured, ps__measured_unref);
      self->measured = m;
      refresh_views (self, TRUE);
      g_signal_emit (self, signals[MEASURED_CHANGED], 0);
    }
  else if (m)
    ps__measured_unref (m);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_signal_emit (self, signals[JOB_FAILED], 0, "gpu", error->message);
  ps__session_busy_end (self);
  g_object_unref (self);
}

gboolean
ps_session_gpu_available (char **reason)
{
  return ps__job_gpu_probe (reason);
}

void
ps_session_run_gpu (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!self->state || !self->state->have_plan)
    return;
  ps__session_busy_begin (self, "Running on the GPU");
  g_autoptr (GTask) task = g_task_new (g_object_ref (self), ps__session_job_start (self, PS_JOB_GPU),
                                       gpu_done, NULL);
  g_task_set_task_data (task, ps__state_ref (self->state),
                        (GDestroyNotify) ps__state_unref);
  g_task_run_in_thread (task, gpu_thread);
}

void
ps_session_cancel (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  ps__session_cancel_jobs (self, PS_JOBS_ALL);
}

gboolean
ps_session_get_busy (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->jobs > 0;
}

double
ps_session_get_progress (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), -1);
  return self->progress;
}

const char *
ps_session_get_activity (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->activity;
}

gboolean
ps_session_get_ready (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->doc && self->state && (self->layout || self->layout_failed) && self->jobs == 0;
}

const char *
ps_session_get_plan_error (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  if (self->state && self->state->error)
    return self->state->error;
  return self->layout_error;
}

/* ---- options and what-if ------------------------------------------------ */

guint
ps_session_get_streams (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), 0);
  return self->options.streams;
}

void
ps_session_set_streams (PsSession *self, guint streams)
{
  g_return_if_fail (PS_IS_SESSION (self));
  streams = CLAMP (streams, 1, PS_MAX_STREAMS);
  if (streams == self->options.streams)
    return;
  self->options.streams = streams;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STREAMS]);
  start_plan (self);
}

gboolean
ps_session_get_fusion (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->options.fusion;
}

void
ps_session_set_fusion (PsSession *self, gboolean fusion)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!fusion == !self->options.fusion)
    return;
  self->options.fusion = !!fusion;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FUSION]);
  start_plan (self);
}

const char *
ps_session_get_device (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->device;
}

void
ps_session_set_device (PsSession *self, const char *device)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!device || !*device)
    device = PS_DEVICE_DEFAULT;
  if (g_ascii_strcasecmp (device, self->device) == 0)
    return;
  g_free (self->device);
  self->device = g_strdup (device);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEVICE]);
  start_plan (self);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char **) a, *(char **) b);
}

static void
add_device_dir (GPtrArray *names, const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *entry;
  while (d && (entry = g_dir_read_name (d)))
    if (g_str_has_suffix (entry, ".json"))
      {
        g_autofree char *name = g_strndup (entry, strlen (entry) - 5);
        gboolean seen = FALSE;
        for (guint i = 0; i < names->len && !seen; i++)
          seen = g_ascii_strcasecmp (g_ptr_array_index (names, i), name) == 0;
        if (!seen)
          g_ptr_array_add (names, g_steal_pointer (&name));
      }
}

GStrv
ps_session_list_devices (void)
{
  GPtrArray *names = g_ptr_array_new ();
  for (size_t i = 0; i < ps_device_builtin_count (); i++)
    g_ptr_array_add (names, g_strdup (ps_device_builtin (i)->name));
  const char *root = g_getenv ("PS_SOURCE_ROOT");
  if (root)
    {
      g_autofree char *dir = g_build_filename (root, "data", "devices", NULL);
      add_device_dir (names, dir);
    }
#ifdef PS_DATADIR
  add_device_dir (names, PS_DATADIR "/devices");
#endif
  g_ptr_array_sort (names, compare_strings);
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_free (names, FALSE);
}

static guint
doc_nodes (PsSession *self)
{
  return self->doc ? self->doc->graph.n_nodes : 0;
}

static void
push_undo (PsSession *self, PsWhatIfKind kind, guint id, gint old)
{
  PsWhatIf w = { kind, id, old };
  g_array_append_val (self->undo, w);
  if (self->undo->len == 1)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
}

gboolean
ps_session_get_node_no_fuse (PsSession *self, guint node)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->no_fuse && node < doc_nodes (self) && self->no_fuse[node];
}

static void
set_no_fuse (PsSession *self, guint node, gboolean no_fuse)
{
  if (!self->no_fuse)
    self->no_fuse = g_new0 (guint8, MAX (doc_nodes (self), 1));
  self->no_fuse[node] = !!no_fuse;
}

void
ps_session_set_node_no_fuse (PsSession *self, guint node, gboolean no_fuse)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (node >= doc_nodes (self) || ps_session_get_node_no_fuse (self, node) == !!no_fuse)
    return;
  push_undo (self, PS_WHATIF_NO_FUSE, node, ps_session_get_node_no_fuse (self, node));
  set_no_fuse (self, node, no_fuse);
  start_plan (self);
}

int
ps_session_get_node_pin (PsSession *self, guint node)
{
  g_return_val_if_fail (PS_IS_SESSION (self), PS_PIN_AS_FILE);
  if (!self->pin || node >= doc_nodes (self))
    return PS_PIN_AS_FILE;
  return self->pin[node];
}

static void
set_pin (PsSession *self, guint node, int pin)
{
  if (!self->pin)
    {
      self->pin = g_new (gint32, MAX (doc_nodes (self), 1));
      for (guint i = 0; i < doc_nodes (self); i++)
        self->pin[i] = PS_PIN_AS_FILE;
    }
  self->pin[node] = pin;
}

void
ps_session_set_node_pin (PsSession *self, guint node, int pin)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (node >= doc_nodes (self) || pin < PS_PIN_AS_FILE || pin >= PS_MAX_STREAMS
      || ps_session_get_node_pin (self, node) == pin)
    return;
  push_undo (self, PS_WHATIF_PIN, node, ps_session_get_node_pin (self, node));
  set_pin (self, node, pin);
  start_plan (self);
}

gboolean
ps_session_node_fusible (PsSession *self, guint node)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return node < doc_nodes (self) && (self->doc->graph.nodes[node].flags & PS_NODE_FUSIBLE);
}

static guint
doc_conds (PsSession *self)
{
  return self->doc ? self->doc->graph.n_conds : 0;
}

int
ps_session_get_cond_assume (PsSession *self, guint cond)
{
  g_return_val_if_fail (PS_IS_SESSION (self), PS_ASSUME_AS_FILE);
  if (!self->assume || cond >= doc_conds (self))
    return PS_ASSUME_AS_FILE;
  return self->assume[cond];
}

static void
set_assume (PsSession *self, guint cond, int assume)
{
  if (!self->assume)
    {
      self->assume = g_new (gint8, MAX (doc_conds (self), 1));
      memset (self->assume, PS_ASSUME_AS_FILE, MAX (doc_conds (self), 1));
    }
  self->assume[cond] = (gint8) assume;
}

void
ps_session_set_cond_assume (PsSession *self, guint cond, int assume)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (cond >= doc_conds (self) || assume < PS_ASSUME_AS_FILE || assume >= PS_ASSUME__COUNT
      || ps_session_get_cond_assume (self, cond) == assume)
    return;
  push_undo (self, PS_WHATIF_ASSUME, cond, ps_session_get_cond_assume (self, cond));
  set_assume (self, cond, assume);
  start_plan (self);
}

gboolean
ps_session_can_undo (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->undo->len > 0;
}

void
ps_session_undo (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (self->undo->len == 0)
    return;
  PsWhatIf w = g_array_index (self->undo, PsWhatIf, self->undo->len - 1);
  g_array_set_size (self->undo, self->undo->len - 1);
  switch (w.kind)
    {
    case PS_WHATIF_NO_FUSE: set_no_fuse (self, w.id, w.old); break;
    case PS_WHATIF_PIN: set_pin (self, w.id, w.old); break;
    case PS_WHATIF_ASSUME: set_assume (self, w.id, w.old); break;
    }
  if (self->undo->len == 0)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
  start_plan (self);
}

void
ps_session_reset_whatif (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  gboolean any = self->no_fuse || self->pin || self->assume;
  g_clear_pointer (&self->no_fuse, g_free);
  g_clear_pointer (&self->pin, g_free);
  g_clear_pointer (&self->assume, g_free);
  if (self->undo->len)
    {
      g_array_set_size (self->undo, 0);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
    }
  if (any)
    start_plan (self);
}

/* ---- results ------------------------------------------------------------ */

PsPlanState *
ps__session_get_state (PsSession *self)
{
  return self->state;
}

PsMeasured *
ps__session_get_measured (PsSession *self)
{
  return self->measured;
}

const ps_figures *
ps_session_get_figures (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return current_figures (self);
}

const ps_figures *
ps_session_get_predicted_figures (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->state && self->state->have_fig ? &self->state->fig : NULL;
}

const ps_timeline_chart *
ps_session_get_chart (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->chart;
}

const ps_memory_map *
ps_session_get_memory_map (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->mem;
}

/* ---- style -------------------------------------------------------------- */

ps_color_by
ps_session_get_color_by (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), PS_COLOR_BY_STREAM);
  return self->color_by;
}

void
ps_session_set_color_by (PsSession *self, ps_color_by color_by)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (color_by == self->color_by || (unsigned) color_by >= PS_COLOR_BY__COUNT)
    return;
  self->color_by = color_by;
  annotate_scene (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLOR_BY]);
}

gboolean
ps_session_get_show_critical (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->show_critical;
}

void
ps_session_set_show_critical (PsSession *self, gboolean show)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!show == !self->show_critical)
    return;
  self->show_critical = !!show;
  annotate_scene (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOW_CRITICAL]);
}

gboolean
ps_session_get_dark (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->dark;
}

void
ps_session_set_dark (PsSession *self, gboolean dark)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!dark == !self->dark)
    return;
  self->dark = !!dark;
  annotate_scene (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DARK]);
}

void
ps_session_get_style (PsSession *self, ps_style *out)
{
  g_return_if_fail (PS_IS_SESSION (self));
  ps_style_init (out, self->dark ? PS_THEME_DARK : PS_THEME_LIGHT, self->color_by);
  out->show_critical = self->show_critical;
}

/* ---- the visible time span ------------------------------------------------ */

void
ps_session_get_time_view (PsSession *self, double *t0, double *t1)
{
  g_return_if_fail (PS_IS_SESSION (self));
  *t0 = self->view_t0;
  *t1 = self->view_t1;
}

void
ps_session_set_time_view (PsSession *self, double t0, double t1)
{
  g_return_if_fail (PS_IS_SESSION (self));
  double len = run_length (self);
  /* At least a nanosecond, at most four runs, and some of the run in view. */
  double span = CLAMP (t1 - t0, 1, len * 4);
  if (!isfinite (t0) || !isfinite (span))
    return;
  t0 = CLAMP (t0, -span * 0.5, MAX (len - span * 0.5, -span * 0.5));
  if (t0 == self->view_t0 && t0 + span == self->view_t1 && !self->view_fitted)
    return;
  self->view_t0 = t0;
  self->view_t1 = t0 + span;
  self->view_fitted = FALSE;
  g_signal_emit (self, signals[TIME_VIEW_CHANGED], 0);
}

void
ps_session_fit_time_view (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  self->view_fitted = TRUE;
  self->view_t0 = 0;
  self->view_t1 = run_length (self) * 1.02;
  g_signal_emit (self, signals[TIME_VIEW_CHANGED], 0);
}

gboolean
ps_session_get_time_view_fitted (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), TRUE);
  return self->view_fitted;
}

/* ---- selection ---------------------------------------------------------- */

PsSelectionKind
ps_session_get_selection (PsSession *self, guint *id)
{
  g_return_val_if_fail (PS_IS_SESSION (self), PS_SELECTION_NONE);
  if (id)
    *id = self->sel_id;
  return self->sel_kind;
}

void
ps_session_select (PsSession *self, PsSelectionKind kind, guint id)
{
  g_return_if_fail (PS_IS_SESSION (self));
  const ps_graph *g = ps_session_get_graph (self);
  const ps_diagnosis *dg = ps_session_get_diagnosis (self);
  const ps_scene *sc = ps_session_get_scene (self);
  if ((kind == PS_SELECTION_NODE && (!g || id >= g->n_nodes))
      || (kind == PS_SELECTION_BUFFER && (!g || id >= g->n_buffers))
      || (kind == PS_SELECTION_WAIT && (!dg || id >= dg->n_waits))
      || (kind == PS_SELECTION_BOX && (!sc || id >= sc->n_nodes)))
    kind = PS_SELECTION_NONE;
  if (kind == PS_SELECTION_NONE)
    id = 0;
  if (kind == self->sel_kind && id == self->sel_id)
    return;
  self->sel_kind = kind;
  self->sel_id = id;
  g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

void
ps_session_select_span (PsSession *self, const ps_timeline *tl, guint span)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!tl || span >= tl->n_spans || tl->spans[span].nodes_count == 0)
    {
      ps_session_select (self, PS_SELECTION_NONE, 0);
      return;
    }
  ps_session_select (self, PS_SELECTION_NODE, tl->span_nodes[tl->spans[span].nodes_begin]);
}

void
ps_session_select_box (PsSession *self, guint box)
{
  g_return_if_fail (PS_IS_SESSION (self));
  const ps_scene *sc = ps_session_get_scene (self);
  uint32_t n = 0;
  const uint32_t *members = sc ? ps_scene_box_members (sc, box, &n) : NULL;
  if (n == 1)
    ps_session_select (self, PS_SELECTION_NODE, members[0]);
  else if (n > 1)
    ps_session_select (self, PS_SELECTION_BOX, box);
  else
    ps_session_select (self, PS_SELECTION_NONE, 0);
}

/* ---- baseline ----------------------------------------------------------- */

void
ps_session_pin_baseline (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!self->state || !self->state->have_plan || !self->state->summary.valid)
    return;
  g_clear_pointer (&self->base, ps__state_unref);
  g_clear_pointer (&self->base_diff, ps__diff_free);
  self->base = ps__state_ref (self->state);
  refresh_views (self, TRUE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HAS_BASELINE]);
  g_signal_emit (self, signals[PLAN_CHANGED], 0);
  g_signal_emit (self, signals[BASELINE_CHANGED], 0);
}

void
ps_session_clear_baseline (PsSession *self)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (!self->base)
    return;
  g_clear_pointer (&self->base, ps__state_unref);
  g_clear_pointer (&self->base_diff, ps__diff_free);
  refresh_views (self, TRUE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HAS_BASELINE]);
  g_signal_emit (self, signals[PLAN_CHANGED], 0);
  g_signal_emit (self, signals[BASELINE_CHANGED], 0);
}

/* ---- comparing with another file ----------------------------------------- */

typedef struct {
  PsPlanState *a, *b;
} DiffJob;

static void
diff_job_free (DiffJob *j)
{
  ps__state_unref (j->a);
  ps__state_unref (j->b);
  g_free (j);
}

static void
diff_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  DiffJob *j = data;
  GError *error = NULL;
  ps_diff *d = ps__job_diff (j->a, j->b, cancellable, &error);
  if (d)
    g_task_return_pointer (task, d, (GDestroyNotify) ps__diff_free);
  else
    g_task_return_error (task, error);
}

static void
diff_done (GObject *source, GAsyncResult *result, gpointer data)
{
  PsSession *self = PS_SESSION (source);
  g_autoptr (GError) error = NULL;
  ps__session_job_finished (self, PS_JOB_DIFF, g_task_get_cancellable (G_TASK (result)));
  DiffJob *j = g_task_get_task_data (G_TASK (result));
  ps_diff *d = g_task_propagate_pointer (G_TASK (result), &error);
  self->diff_running = FALSE;
  /* Kept only while it still compares the baseline with the current run. */
  if (d && j->a == self->base && j->b == self->state)
    {
      g_clear_pointer (&self->base_diff, ps__diff_free);
      self->base_diff = d;
      g_signal_emit (self, signals[BASELINE_CHANGED], 0);
    }
  else
    g_clear_pointer (&d, ps__diff_free);
  if (error && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_signal_emit (self, signals[JOB_FAILED], 0, "compare", error->message);
  ps__session_busy_end (self);
  if (self->diff_pending)
    start_diff (self);
  g_object_unref (self);
}

/* The diff of a baseline from another file against the current run. */
static void
start_diff (PsSession *self)
{
  if (!self->base || !self->state || self->base->doc == self->state->doc)
    return;
  if (self->diff_running)
    {
      self->diff_pending = TRUE;
      return;
    }
  self->diff_pending = FALSE;
  self->diff_running = TRUE;
  DiffJob *j = g_new0 (DiffJob, 1);
  j->a = ps__state_ref (self->base);
  j->b = ps__state_ref (self->state);
  ps__session_busy_begin (self, "Comparing");
  g_autoptr (GTask) task = g_task_new (g_object_ref (self),
                                       ps__session_job_start (self, PS_JOB_DIFF), diff_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) diff_job_free);
  g_task_run_in_thread (task, diff_thread);
}

void
ps__session_set_other_baseline (PsSession *self, PsPlanState *st)
{
  g_clear_pointer (&self->base, ps__state_unref);
  g_clear_pointer (&self->base_diff, ps__diff_free);
  self->base = st;
  refresh_views (self, TRUE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HAS_BASELINE]);
  g_signal_emit (self, signals[PLAN_CHANGED], 0);
  g_signal_emit (self, signals[BASELINE_CHANGED], 0);
  start_diff (self);
}

const char *
ps_session_get_baseline_other (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->base && self->base->doc != self->doc ? self->base->doc->title : NULL;
}

const ps_diff *
ps_session_get_baseline_diff (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->base && self->base->doc != self->doc ? self->base_diff : NULL;
}

gboolean
ps_session_has_baseline (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  return self->base != NULL;
}

const ps_plan *
ps_session_get_baseline_plan (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->base ? &self->base->plan : NULL;
}

const ps_timeline *
ps_session_get_baseline_timeline (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->base && self->base->have_tl ? &self->base->tl : NULL;
}

const ps_figures *
ps_session_get_baseline_figures (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return self->base && self->base->have_fig ? &self->base->fig : NULL;
}

void
ps_session_get_baseline_summary (PsSession *self, PsSummary *out)
{
  g_return_if_fail (PS_IS_SESSION (self));
  if (self->base)
    *out = self->base->summary;
  else
    memset (out, 0, sizeof *out);
}
