/* ps-session-jobs.c: the work a session runs on worker threads: loading a
 * graph, planning and simulating it, laying out its DAG and running a plan
 * on the GPU.  Each body turns core/ results into the immutable structures
 * of ps-session-private.h; nothing here touches GTK. */
#include "ps-session-private.h"

#include <stdio.h>
#include <string.h>

#include "ps-file.h"
#include "ps-import.h"
#include "ps-pool-peak.h"
#include "ps-profiler.h"
#include "ps-replay.h"
#include "ps-sim.h"
#include "ps-timing.h"

/* The loader's messages, errors first, as the CLI prints them. */
static char *
diag_text (const ps_diag *diag)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (!f)
    return g_strdup ("out of memory");
  ps_diag_print (diag, f);
  fclose (f);
  g_strchomp (buf);
  char *out = g_strdup (*buf ? buf : "unknown error");
  free (buf);
  return out;
}

G_DEFINE_QUARK (ps-session-error-quark, ps_session_error)

PsDoc *
ps__doc_ref (PsDoc *doc)
{
  g_atomic_int_inc (&doc->ref);
  return doc;
}

void
ps__doc_unref (PsDoc *doc)
{
  if (!doc || !g_atomic_int_dec_and_test (&doc->ref))
    return;
  ps_graph_free (&doc->graph);
  if (doc->has_trace)
    {
      ps_timeline_free (&doc->trace);
      ps_trace_graph_info_free (&doc->trace_info);
    }
  g_clear_object (&doc->file);
  g_free (doc->title);
  g_free (doc);
}

/* What a measured run owns, but the state it belongs to. */
static void
measured_clear (PsMeasured *m)
{
  if (m->have_fig)
    ps_figures_free (&m->fig);
  if (m->have_dg)
    ps_diagnosis_free (&m->dg);
  ps_timeline_free (&m->tl);
  g_free (m->gpu_name);
}

PsPlanState *
ps__state_ref (PsPlanState *st)
{
  g_atomic_int_inc (&st->ref);
  return st;
}

void
ps__state_unref (PsPlanState *st)
{
  if (!st || !g_atomic_int_dec_and_test (&st->ref))
    return;
  ps_timeline_chart_free (st->chart);
  if (st->trace_measured)
    {
      /* Not taken by a session: it holds no state yet. */
      measured_clear (st->trace_measured);
      g_free (st->trace_measured);
    }
  if (st->have_mem)
    ps_memory_map_free (&st->mem);
  if (st->have_fig)
    ps_figures_free (&st->fig);
  if (st->have_dg)
    ps_diagnosis_free (&st->dg);
  ps_timeline_free (&st->tl);
  ps_plan_free (&st->plan);
  g_free (st->nodes);
  g_free (st->conds);
  g_free (st->error);
  ps__doc_unref (st->doc);
  g_free (st);
}

PsMeasured *
ps__measured_ref (PsMeasured *m)
{
  g_atomic_int_inc (&m->ref);
  return m;
}

void
ps__measured_unref (PsMeasured *m)
{
  if (!m || !g_atomic_int_dec_and_test (&m->ref))
    return;
  measured_clear (m);
  ps__state_unref (m->state);
  g_free (m);
}

void
ps__layout_unref (PsLayout *l)
{
  if (!l || !g_atomic_int_dec_and_test (&l->ref))
    return;
  ps_scene_free (&l->scene);
  ps__doc_unref (l->doc);
  g_free (l);
}

void
ps__state_input_free (PsPlanInput *in)
{
  if (!in)
    return;
  ps__doc_unref (in->doc);
  g_free (in->device);
  g_free (in->no_fuse);
  g_free (in->pin);
  g_free (in->assume);
  g_free (in);
}

/* What a load's ps_diag hook reports to: the job's cancellable, asked as
 * the file is read and parsed, and how far it is, as one fraction (the
 * read is the first fifth). */
typedef struct {
  GCancellable *cancellable;
  PsJobProgress progress;
  gpointer ctx;
} LoadProgress;

static bool
load_progress (void *ctx, const char *stage, double fraction)
{
  LoadProgress *lp = ctx;
  if (lp->progress)
    lp->progress (lp->ctx, strcmp (stage, "read") == 0 ? 0.2 * fraction : 0.2 + 0.8 * fraction);
  return !g_cancellable_is_cancelled (lp->cancellable);
}

PsDoc *
ps__job_load (GFile *file, GCancellable *cancellable, PsJobProgress progress, gpointer ctx,
              GError **error)
{
  g_autofree char *path = g_file_get_path (file);
  if (!path)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_set_error (error, PS_SESSION_ERROR, PS_EIO, "%s: error: only local files can be opened",
                   uri);
      return NULL;
    }
  double t0 = ps_clock_now ();
  PsDoc *doc = g_new0 (PsDoc, 1);
  doc->ref = 1;
  doc->file = g_object_ref (file);
  ps_graph_init (&doc->graph);
  ps_diag diag;
  ps_diag_init (&diag, path);
  LoadProgress lp = { cancellable, progress, ctx };
  diag.progress = load_progress;
  diag.progress_ctx = &lp;
  ps_file_whole w;
  int r = ps_file_read_whole (path, (size_t) PS_MAX_FILE_BYTES, &w, &diag);
  if (r == 0 && ps_import_detect (w.data, w.len) == PS_GRAPH_FORMAT_TRACE)
    {
      /* A trace: kept beside its graph, for its measured run. */
      r = ps_import_trace_graph (&doc->graph, w.data, w.len, path, NULL, &doc->trace,
                                 &doc->trace_info, &diag);
      doc->has_trace = r == 0;
    }
  else if (r == 0)
    r = ps_import_graph_mem (&doc->graph, w.data, w.len, path, &diag);
  r = ps_file_whole_end (&w, r); /* cut short meanwhile: not loaded */
  if (r == PS_ECANCELED || (r < 0 && g_cancellable_is_cancelled (cancellable)))
    {
      ps_diag_free (&diag);
      ps__doc_unref (doc);
      g_cancellable_set_error_if_cancelled (cancellable, error);
      return NULL;
    }
  if (r < 0)
    {
      g_autofree char *text = diag_text (&diag);
      g_set_error_literal (error, PS_SESSION_ERROR, r, text);
      ps_diag_free (&diag);
      ps__doc_unref (doc);
      return NULL;
    }
  ps_diag_free (&diag);
  doc->load_seconds = ps_clock_now () - t0;
  if (doc->graph.name && *doc->graph.name)
    doc->title = g_strdup (doc->graph.name);
  else
    doc->title = g_path_get_basename (path);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      ps__doc_unref (doc);
      return NULL;
    }
  return doc;
}

PsPlanState *
ps__job_compare (GFile *file, const ps_plan_options *options, const char *device,
                 GCancellable *cancellable, PsJobProgress progress, gpointer ctx,
                 GError **error)
{
  g_autoptr (PsDoc) doc = ps__job_load (file, cancellable, progress, ctx, error);
  if (!doc)
    return NULL;
  PsPlanInput in = { 0 };
  in.doc = doc;
  in.options = *options;
  in.device = (char *) device;
  /* A trace is planned on the streams it ran on, as when it is opened. */
  if (doc->graph.measured)
    in.options.streams = CLAMP (ps_graph_pinned_streams (&doc->graph), 1, PS_MAX_STREAMS);
  PsPlanState *st = ps__job_plan (&in, cancellable, error);
  if (st && st->error)
    {
      g_set_error (error, PS_SESSION_ERROR, PS_EINVAL, "%s", st->error);
      g_clear_pointer (&st, ps__state_unref);
    }
  return st;
}

/* A state's run as `diff` takes it: a trace's as measured (its imported
 * timeline), a graph's as its plan simulates. */
static const ps_timeline *
run_of (const PsPlanState *st, ps_diagnosis *own, const ps_diagnosis **dg)
{
  if (st->doc->has_trace)
    {
      if (ps_diagnose (own, &st->doc->trace) < 0)
        return NULL;
      *dg = own;
      return &st->doc->trace;
    }
  if (!st->have_tl || !st->have_dg)
    return NULL;
  *dg = &st->dg;
  return &st->tl;
}

ps_diff *
ps__job_diff (const PsPlanState *a, const PsPlanState *b, GCancellable *cancellable,
              GError **error)
{
  ps_diagnosis da, db;
  memset (&da, 0, sizeof da);
  memset (&db, 0, sizeof db);
  const ps_diagnosis *pa = NULL, *pb = NULL;
  const ps_timeline *ta = run_of (a, &da, &pa), *tb = run_of (b, &db, &pb);
  ps_diff *d = g_new0 (ps_diff, 1);
  int rc = ta && tb ? ps_diff_runs (ta, pa, tb, pb, d) : PS_EINVAL;
  ps_diagnosis_free (&da);
  ps_diagnosis_free (&db);
  if (rc < 0)
    {
      g_set_error (error, PS_SESSION_ERROR, rc, "cannot compare the runs: %s", ps_strerror (rc));
      g_free (d);
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      ps__diff_free (d);
      return NULL;
    }
  return d;
}

void
ps__diff_free (ps_diff *d)
{
  if (!d)
    return;
  ps_diff_free (d);
  g_free (d);
}

PsPlanState *
ps__job_plan (const PsPlanInput *in, GCancellable *cancellable, GError **error)
{
  const ps_graph *src = &in->doc->graph;
  g_autoptr (PsPlanState) st = g_new0 (PsPlanState, 1);
  st->ref = 1;
  st->doc = ps__doc_ref (in->doc);
  st->graph = *src;
  if (in->no_fuse || in->pin)
    {
      st->nodes = g_memdup2 (src->nodes, sizeof (ps_node) * MAX (src->n_nodes, 1));
      for (uint32_t v = 0; v < src->n_nodes; v++)
        {
          if (in->no_fuse && in->no_fuse[v])
            st->nodes[v].flags &= ~PS_NODE_FUSIBLE;
          if (in->pin && in->pin[v] != PS_PIN_AS_FILE)
            st->nodes[v].stream = in->pin[v];
        }
      st->graph.nodes = st->nodes;
    }
  if (in->assume && src->n_conds)
    {
      st->conds = g_memdup2 (src->conds, sizeof (ps_cond) * src->n_conds);
      for (uint32_t c = 0; c < src->n_conds; c++)
        if (in->assume[c] != PS_ASSUME_AS_FILE)
          st->conds[c].assume = (uint8_t) in->assume[c];
      st->graph.conds = st->conds;
    }

  /* The device first: the planner schedules with its cost model. */
  ps_diag diag;
  ps_diag_init (&diag, in->device);
  int r = ps_device_find (&st->device, in->device, &diag);
  if (r < 0)
    {
      st->error = diag_text (&diag);
      ps_diag_free (&diag);
      return g_steal_pointer (&st);
    }
  ps_diag_free (&diag);

  const char *path = src->path ? src->path : "graph";
  ps_diag_init (&diag, path);
  ps_plan_options options = in->options;
  options.device = &st->device;
  options.find_peak = TRUE; /* found below, for the memory page and the summary */
  double t0 = ps_clock_now ();
  r = ps_plan_build (&st->plan, &st->graph, &options, &diag);
  st->plan_seconds = ps_clock_now () - t0;
  if (r < 0)
    {
      st->error = diag.errors ? diag_text (&diag) : g_strdup (ps_strerror (r));
      ps_diag_free (&diag);
      return g_steal_pointer (&st);
    }
  ps_diag_free (&diag);
  st->have_plan = TRUE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  /* The pool's peak, which the memory page and the summary show, here
   * off the UI thread. */
  r = ps_plan_find_peak (&st->plan);
  if (r < 0)
    {
      st->error = g_strdup_printf ("cannot find the pool's peak: %s", ps_strerror (r));
      return g_steal_pointer (&st);
    }

  t0 = ps_clock_now ();
  ps_timeline_init (&st->tl, PS_TL_SIMULATED);
  /* The planner's own run of the plan (the device is the plan's). */
  r = ps_plan_take_run (&st->plan, &st->tl);
  if (r < 0)
    {
      st->error = g_strdup_printf ("simulation failed: %s", ps_strerror (r));
      return g_steal_pointer (&st);
    }
  st->have_tl = TRUE;
  if (ps_diagnose (&st->dg, &st->tl) == 0)
    st->have_dg = TRUE;
  st->sim_seconds = ps_clock_now () - t0;

  if (st->have_dg && ps_figures_build (&st->fig, &st->plan, &st->tl, &st->dg) == 0)
    st->have_fig = TRUE;
  /* What the timeline and memory views draw of this prediction. */
  ps_timeline_layers layers = { &st->tl, st->have_dg ? &st->dg : NULL, NULL, NULL,
                                st->have_fig ? &st->fig : NULL, &st->plan };
  ps_timeline_chart_new (&st->chart, &layers);
  if (st->have_fig && ps_memory_map_build (&st->mem, &st->plan, &st->fig) == 0)
    st->have_mem = TRUE;
  /* A trace: its run, as measured, against this plan. */
  if (in->doc->has_trace)
    {
      PsMeasured *m = g_new0 (PsMeasured, 1);
      m->ref = 1;
      if (ps_trace_measured_timeline (&st->graph, &in->doc->trace, &in->doc->trace_info,
                                      &st->plan, &m->tl) == 0)
        {
          if (ps_diagnose (&m->dg, &m->tl) == 0)
            {
              m->have_dg = TRUE;
              m->have_fig = ps_figures_build (&m->fig, &st->plan, &m->tl, &m->dg) == 0;
            }
          m->gpu_name = g_strdup ("the trace");
          st->trace_measured = m;
        }
      else
        {
          ps_timeline_init (&m->tl, PS_TL_MEASURED);
          measured_clear (m);
          g_free (m);
        }
    }
  uint32_t n = st->graph.n_nodes;

  PsSummary *sum = &st->summary;
  sum->valid = TRUE;
  sum->makespan_ns = st->tl.makespan_ns;
  sum->streams_used = st->plan.streams_used;
  sum->streams_max = in->options.streams;
  sum->kernels_before = st->plan.kernels_before;
  sum->kernels_after = st->plan.kernels_after;
  sum->events = st->plan.n_events;
  sum->pool_bytes = st->plan.pool_bytes;
  sum->n_nodes = n;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  return g_steal_pointer (&st);
}

typedef struct {
  GCancellable *cancellable;
  PsJobProgress progress;
  gpointer ctx;
} GpuProgress;

static bool
gpu_progress (void *ctx, const char *what, double fraction)
{
  GpuProgress *p = ctx;
  if (p->progress)
    p->progress (p->ctx, fraction);
  return !g_cancellable_is_cancelled (p->cancellable);
}

PsMeasured *
ps__job_gpu (PsPlanState *state, GCancellable *cancellable, PsJobProgress progress,
             gpointer ctx, GError **error)
{
  ps_gpu_error err;
  ps_gpu_error_clear (&err);
  ps_gpu *gpu = NULL;
  int r = ps_gpu_open (&gpu, &err);
  if (r < 0)
    {
      g_set_error_literal (error, PS_SESSION_ERROR, r, err.message);
      return NULL;
    }
  GpuProgress gp = { cancellable, progress, ctx };
  ps_profile_options o;
  ps_profile_options_init (&o);
  o.progress = gpu_progress;
  o.progress_ctx = &gp;
  ps_profile_result res;
  memset (&res, 0, sizeof res);
  r = ps_gpu_profile (gpu, &state->plan, &o, &res, &err);
  char *name = g_strdup (ps_gpu_get_info (gpu)->name);
  ps_gpu_close (gpu);
  if (r < 0)
    {
      g_free (name);
      ps_profile_result_free (&res);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      g_set_error_literal (error, PS_SESSION_ERROR, r, err.message);
      return NULL;
    }
  PsMeasured *m = g_new0 (PsMeasured, 1);
  m->ref = 1;
  m->state = ps__state_ref (state);
  m->tl = res.timeline;
  ps_timeline_init (&res.timeline, PS_TL_MEASURED);
  ps_profile_result_free (&res);
  m->tl.plan = &state->plan;
  if (ps_diagnose (&m->dg, &m->tl) == 0)
    {
      m->have_dg = TRUE;
      m->have_fig = ps_figures_build (&m->fig, &state->plan, &m->tl, &m->dg) == 0;
    }
  m->gpu_name = name;
  return m;
}

gboolean
ps__job_gpu_probe (char **reason)
{
  static gsize once = 0;
  static gboolean ok;
  static char *why;
  if (g_once_init_enter (&once))
    {
      ps_gpu_info info;
      ps_gpu_error err;
      ps_gpu_error_clear (&err);
      const char *force = g_getenv ("PS_NO_GPU");
      if (force && *force)
        {
          ok = FALSE;
          why = g_strdup ("GPU runs turned off by PS_NO_GPU");
        }
      else
        {
          ok = ps_gpu_probe (&info, &err) == 0;
          why = ok ? g_strdup_printf ("Run on %s", info.name) : g_strdup (err.message);
        }
      g_once_init_leave (&once, 1);
    }
  if (reason)
    *reason = g_strdup (why);
  return ok;
}

guint32
ps__node_group_key (const ps_plan *p, guint node)
{
  const ps_step *st = &p->steps[p->node_step[node]];
  return p->step_nodes[st->nodes_begin];
}
