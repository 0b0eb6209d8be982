/* ps-session-query.c: the questions views ask a session: its results,
 * the status line's text, per-node and per-span facts, search and
 * colours.  Everything here reads; nothing changes the session. */
#include "ps-session-private.h"

#include <math.h>
#include <string.h>

#include "ps-format.h"

guint
ps_session_node_box (PsSession *self, guint node)
{
  g_return_val_if_fail (PS_IS_SESSION (self), PS_NONE);
  const ps_scene *sc = self->layout ? &self->layout->scene : NULL;
  if (!sc || !sc->node_box || node >= sc->n_graph_nodes)
    return PS_NONE;
  return sc->node_box[node];
}

GArray *
ps_session_box_nodes (PsSession *self, guint box, guint max, guint *total)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  uint32_t n = 0;
  const uint32_t *members = self->layout ? ps_scene_box_members (&self->layout->scene, box, &n)
                                         : NULL;
  for (uint32_t i = 0; i < n && i < max; i++)
    g_array_append_val (out, members[i]);
  if (total)
    *total = n;
  return out;
}

guint
ps_session_box_node (PsSession *self, guint box)
{
  g_return_val_if_fail (PS_IS_SESSION (self), PS_NONE);
  uint32_t n = 0;
  const uint32_t *members = self->layout ? ps_scene_box_members (&self->layout->scene, box, &n)
                                         : NULL;
  return n ? members[0] : PS_NONE;
}

char *
ps_session_format_summary (PsSession *self)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  PsSummary sum;
  ps_session_get_summary (self, &sum);
  if (!sum.valid)
    {
      if (self->state && self->state->error)
        return g_strdup_printf ("No plan: %s", self->state->error);
      if (!self->doc)
        return g_strdup (self->jobs ? "Loading…" : "No graph open");
      if (self->plan_cancelled && !self->plan_running)
        return g_strdup ("Planning cancelled: press F5 to plan again");
      return g_strdup ("Planning…");
    }
  char a[PS_FORMAT_MAX], b[PS_FORMAT_MAX];
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "Makespan %s · streams %u of %u · kernels %u → %u · events %u · "
                          "pool %s",
                          ps_format_duration (sum.makespan_ns, a, sizeof a), sum.streams_used,
                          sum.streams_max, sum.kernels_before, sum.kernels_after, sum.events,
                          ps_format_bytes ((double) sum.pool_bytes, b, sizeof b));
  if (self->measured)
    g_string_append_printf (s, " · measured %s on %s",
                            ps_format_duration (self->measured->tl.makespan_ns, a, sizeof a),
                            self->measured->gpu_name ? self->measured->gpu_name : "the GPU");
  if (self->base)
    {
      const PsSummary *base = &self->base->summary;
      gint64 events = (gint64) sum.events - (gint64) base->events;
      g_string_append_printf (s, " · vs baseline: makespan %s, events %s%" G_GINT64_FORMAT,
                              ps_format_duration_delta (sum.makespan_ns - base->makespan_ns, a,
                                                        sizeof a),
                              events < 0 ? "−" : "+", events < 0 ? -events : events);
      g_string_append_printf (s, ", pool %s",
                              ps_format_bytes_delta ((double) sum.pool_bytes
                                                       - (double) base->pool_bytes,
                                                     b, sizeof b));
    }
  return g_string_free (s, FALSE);
}

gboolean
ps_session_trace_node (PsSession *self, guint node, ps_trace_node *out)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  PsDoc *doc = self->doc;
  if (!doc || !doc->has_trace)
    return FALSE;
  return ps_trace_node_get (&doc->graph, &doc->trace, &doc->trace_info, node, out);
}

guint
ps_session_node_span (PsSession *self, guint node, gboolean measured)
{
  g_return_val_if_fail (PS_IS_SESSION (self), PS_NONE);
  const ps_figures *f = NULL;
  if (measured)
    f = self->measured && self->measured->have_fig ? &self->measured->fig : NULL;
  else
    f = self->state && self->state->have_fig ? &self->state->fig : NULL;
  return f && node < f->n_nodes ? f->node_span[node] : PS_NONE;
}

gboolean
ps_session_node_changed (PsSession *self, guint node)
{
  g_return_val_if_fail (PS_IS_SESSION (self), FALSE);
  const ps_plan *p = ps_session_get_plan (self);
  /* Node by node only against a plan of the same file. */
  const ps_plan *b = self->base && self->base->doc == self->doc ? &self->base->plan : NULL;
  if (!b || !p || b == p || node >= p->graph->n_nodes || node >= b->graph->n_nodes
      || p->node_step[node] >= p->n_steps || b->node_step[node] >= b->n_steps)
    return FALSE;
  return b->steps[b->node_step[node]].stream != p->steps[p->node_step[node]].stream
         || ps__node_group_key (b, node) != ps__node_group_key (p, node);
}

char *
ps_session_span_label (PsSession *self, const ps_timeline *tl, guint span)
{
  g_return_val_if_fail (tl && span < tl->n_spans, NULL);
  char buf[512];
  ps_timeline_span_label (tl, span, buf, sizeof buf);
  return g_strdup (buf);
}

char *
ps_session_stream_label (PsSession *self, const ps_timeline *tl, guint stream)
{
  g_return_val_if_fail (tl && stream < tl->n_streams, NULL);
  char buf[128];
  ps_timeline_stream_label (tl, stream, buf, sizeof buf);
  return g_strdup (buf);
}

/* Whether name contains needle, ignoring case.  needle is casefolded.
 * ASCII names (nearly all) are compared in place, without the allocation
 * g_utf8_casefold makes, so that a search of a million nodes takes tens
 * of milliseconds on each keystroke. */
static gboolean
name_matches (const char *name, const char *needle, gboolean needle_ascii)
{
  if (!name)
    return FALSE;
  gboolean ascii = TRUE;
  for (const char *c = name; *c && ascii; c++)
    ascii = (guchar) *c < 0x80;
  if (!ascii || !needle_ascii)
    {
      g_autofree char *folded = g_utf8_casefold (name, -1);
      return strstr (folded, needle) != NULL;
    }
  size_t nl = strlen (needle);
  for (const char *c = name; *c; c++)
    {
      size_t k = 0;
      while (k < nl && c[k] && g_ascii_tolower (c[k]) == needle[k])
        k++;
      if (k == nl)
        return TRUE;
    }
  return FALSE;
}

/* The search itself, on any thread: g is read only.  Returns NULL when
 * cancelled. */
static GArray *
find_in_graph (const ps_graph *g, const char *text, guint max, GCancellable *cancellable)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  if (!g || !text || !*text)
    return out;
  g_autofree char *needle = g_utf8_casefold (text, -1);
  gboolean needle_ascii = TRUE;
  for (const char *c = needle; *c && needle_ascii; c++)
    needle_ascii = (guchar) *c < 0x80;
  /* Buffers first, so that a node matches through any of its buffers
   * without searching every buffer name once per node. */
  g_autofree guint8 *buf_hit = g_new0 (guint8, MAX (g->n_buffers, 1));
  for (uint32_t b = 0; b < g->n_buffers; b++)
    buf_hit[b] = name_matches (ps_buffer_name (g, b), needle, needle_ascii);
  for (uint32_t v = 0; v < g->n_nodes && out->len < max; v++)
    {
      if ((v & 0xffff) == 0 && g_cancellable_is_cancelled (cancellable))
        {
          g_array_unref (out);
          return NULL;
        }
      const ps_node *n = &g->nodes[v];
      gboolean hit = name_matches (ps_node_name (g, v), needle, needle_ascii);
      if (!hit && n->op == PS_OP_KERNEL && n->aux < g->n_kernels)
        hit = name_matches (ps_graph_str (g, g->kernels[n->aux].function), needle, needle_ascii);
      for (uint32_t a = 0; !hit && a < n->reads_count + n->writes_count; a++)
        {
          uint32_t idx = ps_node_access (n, a);
          hit = idx < g->n_access && g->access[idx] < g->n_buffers && buf_hit[g->access[idx]];
        }
      if (hit)
        g_array_append_val (out, v);
    }
  return out;
}

GArray *
ps_session_find_nodes (PsSession *self, const char *text, guint max)
{
  g_return_val_if_fail (PS_IS_SESSION (self), NULL);
  return find_in_graph (ps_session_get_graph (self), text, max, NULL);
}

typedef struct {
  PsDoc *doc;
  char *text;
  guint max;
} FindJob;

static void
find_job_free (FindJob *job)
{
  if (job->doc)
    ps__doc_unref (job->doc);
  g_free (job->text);
  g_free (job);
}

static void
find_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  FindJob *job = data;
  GArray *found = find_in_graph (job->doc ? &job->doc->graph : NULL, job->text, job->max,
                                 cancellable);
  if (!found)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The search was cancelled");
  else
    g_task_return_pointer (task, found, (GDestroyNotify) g_array_unref);
}

void
ps_session_find_nodes_async (PsSession *self, const char *text, guint max,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  g_return_if_fail (PS_IS_SESSION (self));
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, ps_session_find_nodes_async);
  g_task_set_return_on_cancel (task, FALSE);
  FindJob *job = g_new0 (FindJob, 1);
  job->doc = self->doc ? ps__doc_ref (self->doc) : NULL;
  job->text = g_strdup (text ? text : "");
  job->max = max;
  g_task_set_task_data (task, job, (GDestroyNotify) find_job_free);
  g_task_run_in_thread (task, find_thread);
}

GArray *
ps_session_find_nodes_finish (PsSession *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

