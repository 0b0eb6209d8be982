/* ps-session-layout.c: the DAG scene of a document, built and laid out on
 * a worker thread with the renderer (render/ps-dag-view.h, ps-layout.h),
 * so the app draws the same Graphviz layout that `planscope-cli export
 * --view dag` writes.  The scene says which nodes each box shows; the
 * session annotates it with each plan (ps_dag_view_annotate). */
#include "ps-session-private.h"

#include "ps-dag-view.h"
#include "ps-layout.h"


PsLayout *
ps__job_layout (PsDoc *doc, PsPlanState *state, GCancellable *cancellable, GError **error)
{
  double t0 = g_get_monotonic_time () / 1e6;
  g_autoptr (PsLayout) l = g_new0 (PsLayout, 1);
  l->ref = 1;
  l->doc = ps__doc_ref (doc);
  ps_scene_init (&l->scene);
  /* Built without a plan, so that the layout depends on the node set only
   * and survives every re-plan; the views colour and frame by plan. */
  ps_view_options o;
  ps_view_options_init (&o);
  int r = ps_dag_view_build (&l->scene, &doc->graph, NULL, &o);
  if (r < 0)
    {
      g_set_error (error, PS_SESSION_ERROR, r, "DAG view: %s", ps_strerror (r));
      return NULL;
    }
  /* The DAG pane is wide and short: left to right fits it best. */
  l->scene.left_to_right = TRUE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  char err[512] = "";
  r = ps_layout_scene (&l->scene, err, sizeof err);
  if (r < 0)
    {
      g_set_error (error, PS_SESSION_ERROR, r, "DAG layout failed: %s",
                   *err ? err : ps_strerror (r));
      return NULL;
    }
  l->seconds = g_get_monotonic_time () / 1e6 - t0;
  return g_steal_pointer (&l);
}
