/* ps-session-layout.c: the DAG scene of a document, built and laid out on
 * a worker thread with the renderer (render/ps-dag-view.h, ps-layout.h),
 * so the app draws the same Graphviz layout that `planscope-cli export
 * --view dag` writes. */
#include "ps-session-private.h"

#include "ps-dag-view.h"
#include "ps-layout.h"

#include <string.h>

/* Which graph nodes each box shows.  The renderer's boxes refer to one
 * node (ref) or are chains labelled "FIRST … LAST": a chain is followed
 * from its first node along single successors. */
static void
map_boxes (PsLayout *l)
{
  const ps_graph *g = &l->doc->graph;
  const ps_scene *s = &l->scene;
  l->node_box = g_new (guint32, MAX (g->n_nodes, 1));
  l->box_first = g_new (guint32, MAX (s->n_nodes, 1));
  for (uint32_t v = 0; v < g->n_nodes; v++)
    l->node_box[v] = PS_NONE;
  g_autoptr (GHashTable) by_name = NULL;
  for (uint32_t b = 0; b < s->n_nodes; b++)
    {
      const ps_scene_node *n = &s->nodes[b];
      l->box_first[b] = PS_NONE;
      if (n->count == 1 && n->ref < g->n_nodes)
        {
          l->node_box[n->ref] = b;
          l->box_first[b] = n->ref;
          continue;
        }
      const char *label = ps_scene_text (s, n->label);
      const char *dots = label ? strstr (label, " \u2026 ") : NULL;
      if (!dots)
        continue;
      if (!by_name)
        {
          by_name = g_hash_table_new (g_str_hash, g_str_equal);
          for (uint32_t v = 0; v < g->n_nodes; v++)
            g_hash_table_insert (by_name, (gpointer) ps_node_name (g, v), GUINT_TO_POINTER (v + 1));
        }
      g_autofree char *first = g_strndup (label, dots - label);
      const char *last = dots + strlen (" \u2026 ");
      guint v = GPOINTER_TO_UINT (g_hash_table_lookup (by_name, first));
      guint w = GPOINTER_TO_UINT (g_hash_table_lookup (by_name, last));
      if (!v)
        continue;
      v--;
      l->box_first[b] = v;
      for (uint32_t k = 0; k < n->count && v < g->n_nodes; k++)
        {
          if (l->node_box[v] == PS_NONE)
            l->node_box[v] = b;
          if (w && v == w - 1)
            break;
          uint32_t next = PS_NONE;
          for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (g->succ[e] > v && (next == PS_NONE || g->succ[e] < next))
              next = g->succ[e];
          v = next;
        }
    }
}

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
  map_boxes (l);
  l->seconds = g_get_monotonic_time () / 1e6 - t0;
  return g_steal_pointer (&l);
}
