/* ps-inspector.c: builds the inspector's text from the session. */
#include "ps-inspector.h"

#include <math.h>

#include "ps-format.h"
#include "ps-session.h"

struct _PsInspector
{
  GtkWidget parent_instance;

  GtkWidget *scroller;
  GtkLabel *title;
  GtkLabel *subtitle;
  GtkLabel *body;
  GtkWidget *whatif;
  GtkCheckButton *no_fuse;
  GtkDropDown *pin;
  GtkWidget *assume_row;
  GtkLabel *assume_label;
  GtkDropDown *assume;

  PsSession *session;
  guint node; /* the node the what-if controls act on */
  guint cond; /* the conditional its assumption control acts on, or PS_NONE */
  gboolean updating;
};

G_DEFINE_FINAL_TYPE (PsInspector, ps_inspector, GTK_TYPE_WIDGET)

static void
append_ns (GString *s, double ns)
{
  char buf[32];
  g_string_append (s, ps_format_duration (ns, buf, sizeof buf));
}

static void
append_bytes (GString *s, double b)
{
  char buf[32];
  g_string_append (s, ps_format_bytes (b, buf, sizeof buf));
}

static void
heading (GString *s, const char *text)
{
  g_string_append_printf (s, "\n<b>%s</b>\n", text);
}

static void
append_buffers (GString *s, const ps_graph *g, uint32_t begin, uint32_t count)
{
  for (uint32_t i = 0; i < count; i++)
    {
      uint32_t idx = begin + i;
      if (idx >= g->n_access || g->access[idx] >= g->n_buffers)
        continue;
      uint32_t b = g->access[idx];
      g_autofree char *name = g_markup_escape_text (ps_buffer_name (g, b), -1);
      g_string_append_printf (s, "  %s · ", name);
      append_bytes (s, (double) g->buffers[b].bytes);
      g_string_append_printf (s, " %s%s\n", ps_dtype_name ((ps_dtype) g->buffers[b].dtype),
                              g->buffers[b].flags & PS_BUF_EXTERNAL ? " · external" : "");
    }
}

/* A duration line: "Predicted: 17.4 µs, from 12.0 µs to 29.4 µs". */
static void
describe_times (GString *s, const ps_figures *f, const ps_graph *g, guint v, const char *what)
{
  if (!f || v >= f->n_nodes)
    return;
  char t[160];
  ps_figures_node_text (f, g, v, t, sizeof t);
  if (!t[0])
    return;
  g_string_append_printf (s, "%s: %s", what, t);
  if (!isnan (f->node_start[v]) && f->node_source[v] != PS_FIGURE_NOT_RUN)
    {
      g_string_append (s, ", from ");
      append_ns (s, f->node_start[v]);
      if (!isnan (f->node_ns[v]))
        {
          g_string_append (s, " to ");
          append_ns (s, f->node_start[v] + f->node_ns[v]);
        }
    }
  g_string_append_c (s, '\n');
}

static const char *
wait_kind_text (ps_wait_kind k)
{
  switch (k)
    {
    case PS_WAIT_KIND_EVENT: return "at an event";
    case PS_WAIT_KIND_RESOURCE: return "for the SMs or a copy engine";
    default: return "for the host";
    }
}

static void
describe_wait (GString *s, PsSession *session, guint w)
{
  const ps_timeline *tl = ps_session_get_predicted (session);
  const ps_diagnosis *dg = ps_session_get_diagnosis (session);
  if (!tl || !dg || w >= dg->n_waits)
    return;
  char text[1024];
  ps_diagnose_wait_text (tl, dg, w, text, sizeof text);
  g_autofree char *esc = g_markup_escape_text (text, -1);
  g_string_append_printf (s, "%s\n", esc);
  const ps_wait *wt = &dg->waits[w];
  g_string_append_printf (s, "<small>Cause: %s", ps_cause_name ((ps_cause) wt->cause));
  if (wt->cost_ns > 0)
    {
      g_string_append (s, " · costs ");
      append_ns (s, wt->cost_ns);
    }
  g_string_append (s, "</small>\n");
}

static void
show_node (PsInspector *self, guint v, GString *body)
{
  PsSession *session = self->session;
  const ps_graph *g = ps_session_get_graph (session);
  const ps_plan *p = ps_session_get_plan (session);
  const ps_figures *f = ps_session_get_figures (session);
  const ps_node *n = &g->nodes[v];
  char title[PS_MAX_NAME];
  gtk_label_set_text (self->title, ps_node_title (g, v, title, sizeof title));
  g_autofree char *sub = NULL;
  if (n->op == PS_OP_KERNEL && n->aux < g->n_kernels)
    {
      /* The kernel as named in the binary (mangled), and the node's own
       * name when the title is the kernel's. */
      const ps_kernel *k = &g->kernels[n->aux];
      g_autofree char *launch = k->launch_unknown
                                  ? g_strdup ("")
                                  : g_strdup_printf (" <<<(%u,%u,%u), (%u,%u,%u)>>>", k->grid[0],
                                                     k->grid[1], k->grid[2], k->block[0],
                                                     k->block[1], k->block[2]);
      sub = g_strdup_printf ("kernel %s%s%s%s", ps_graph_str (g, k->function) ?: "", launch,
                             ps_node_titled_by_kernel (g, v) ? " \xc2\xb7 node " : "",
                             ps_node_titled_by_kernel (g, v) ? ps_node_name (g, v) : "");
    }
  else if (n->op == PS_OP_CONDITIONAL && n->aux < g->n_conds)
    {
      char what[PS_MAX_NAME + 64];
      const char *model = ps_cond_kind_model ((ps_cond_kind) g->conds[n->aux].kind);
      sub = g_strdup_printf ("conditional: %s%s%s", ps_cond_text (g, v, what, sizeof what),
                             *model ? "; " : "", model);
    }
  else
    sub = g_strdup_printf ("%s%s%s", ps_op_name ((ps_op) n->op),
                           n->op == PS_OP_MEMCPY ? " " : "",
                           n->op == PS_OP_MEMCPY ? ps_copy_dir_name ((ps_copy_dir) n->dir) : "");
  gtk_label_set_text (self->subtitle, sub);

  heading (body, "Times");
  const ps_figures *pf = ps_session_get_predicted_figures (session);
  if (f && f != pf)
    describe_times (body, f, g, v, "Measured");
  describe_times (body, pf, g, v, "Predicted");
  if (f == pf)
    g_string_append (body, "Measured: no GPU run yet\n");
  if (f && v < f->n_nodes && f->node_critical[v])
    {
      char crit[200];
      g_string_append_printf (body,
                              "<span foreground=\"#d62728\">On the critical path</span> "
                              "<small>(%s)</small>\n",
                              ps_figures_critical_text (f, crit, sizeof crit));
    }

  /* A trace's node: what the trace itself recorded of it. */
  ps_trace_node tn;
  if (ps_session_trace_node (session, v, &tn))
    {
      heading (body, "In the trace");
      g_string_append_printf (body, "Stream %lld", (long long) tn.stream);
      if (tn.correlation)
        g_string_append_printf (body, " \xc2\xb7 correlation %llu",
                                (unsigned long long) tn.correlation);
      g_string_append_c (body, '\n');
      if (tn.cpu_op)
        {
          g_autofree char *esc = g_markup_escape_text (tn.cpu_op, -1);
          g_string_append_printf (body, "Launched by %s", esc);
          if (tn.cpu_op_id >= 0)
            g_string_append_printf (body, " <small>(op %lld)</small>", (long long) tn.cpu_op_id);
          g_string_append_c (body, '\n');
        }
      if (!isnan (tn.launch_ns))
        {
          g_string_append (body, "Host launch at ");
          append_ns (body, tn.launch_ns);
          g_string_append_c (body, '\n');
        }
      if (tn.delay_ns > 0)
        {
          g_string_append (body, "Measured delay ");
          append_ns (body, tn.delay_ns);
          g_string_append_printf (body, " before it started: %s\n",
                                  ps_idle_cause_text (tn.cause));
        }
    }

  if (p && v < p->graph->n_nodes && p->node_step[v] < p->n_steps)
    {
      uint32_t si = p->node_step[v];
      const ps_step *st = &p->steps[si];
      heading (body, "Plan");
      g_string_append_printf (body, "Step %u on stream %u\n", si, st->stream);
      if (st->nodes_count > 1)
        {
          g_string_append (body, "Fused group: ");
          for (uint32_t k = 0; k < st->nodes_count; k++)
            {
              g_autofree char *esc = g_markup_escape_text (
                  ps_node_name (g, p->step_nodes[st->nodes_begin + k]), -1);
              g_string_append_printf (body, "%s%s", k ? " + " : "", esc);
            }
          if (st->function != PS_NONE)
            g_string_append_printf (body, " as %s", p->strings + st->function);
          g_string_append_c (body, '\n');
        }
      /* The waits issued on this stream right before the step, and why
       * the plan has them. */
      guint waits = 0;
      for (uint32_t k = si; k-- > 0;)
        {
          const ps_step *w = &p->steps[k];
          if (w->stream != st->stream)
            continue;
          if (w->op != PS_OP_EVENT_WAIT)
            break;
          waits++;
          g_string_append_printf (body, "Waits on event %u (%s", w->event,
                                  ps_wait_reason_name ((ps_wait_reason) w->wait));
          if (w->dep_node < g->n_nodes)
            {
              g_autofree char *esc = g_markup_escape_text (ps_node_name (g, w->dep_node), -1);
              g_string_append_printf (body, ", depends on %s", esc);
            }
          else if (w->wait == PS_WAIT_ORDER)
            g_string_append (body, ", no dependency");
          g_string_append (body, ")\n");
        }
      if (!waits)
        g_string_append (body, "Waits on no events\n");
      if (ps_session_node_changed (session, v))
        g_string_append (body, "<span foreground=\"#e6850e\">Changed since the baseline</span>\n");
    }

  /* Why it started when it did: the waits of its predicted span. */
  const ps_diagnosis *dg = ps_session_get_diagnosis (session);
  guint span = ps_session_node_span (session, v, FALSE);
  if (dg && span != PS_NONE)
    {
      gboolean any = FALSE;
      for (uint32_t i = 0; i < dg->n_waits; i++)
        if (dg->waits[i].span == span)
          {
            if (!any)
              heading (body, "Before it started");
            any = TRUE;
            describe_wait (body, session, i);
          }
    }

  /* A large graph's DAG draws fused groups and chains as one box: say
   * which nodes share the box the selection is in. */
  const ps_scene *scene = ps_session_get_scene (session);
  guint box = ps_session_node_box (session, v);
  if (scene && box < scene->n_nodes && scene->nodes[box].count > 1)
    {
      guint total = 0;
      g_autoptr (GArray) members = ps_session_box_nodes (session, box, 12, &total);
      heading (body, "In the DAG");
      g_string_append_printf (body, "One box for %u nodes: ", total);
      for (guint k = 0; k < members->len; k++)
        {
          g_autofree char *esc = g_markup_escape_text (
              ps_node_name (g, g_array_index (members, guint, k)), -1);
          g_string_append_printf (body, "%s%s", k ? ", " : "", esc);
        }
      if (total > members->len)
        g_string_append_printf (body, " and %u more", total - members->len);
      g_string_append_c (body, '\n');
    }

  heading (body, "Reads");
  if (n->reads_count)
    append_buffers (body, g, n->reads_begin, n->reads_count);
  else
    g_string_append (body, "  nothing\n");
  heading (body, "Writes");
  if (n->writes_count)
    append_buffers (body, g, n->writes_begin, n->writes_count);
  else
    g_string_append (body, "  nothing\n");
  /* Nodes a trace or a dump import made have no place in a file. */
  if (n->line > 0)
    g_string_append_printf (body, "\n<small>Defined at line %u, column %u</small>", n->line,
                            n->col);
}

static void
show_box (PsInspector *self, guint box, GString *body)
{
  PsSession *session = self->session;
  const ps_graph *g = ps_session_get_graph (session);
  const ps_scene *scene = ps_session_get_scene (session);
  const ps_figures *f = ps_session_get_figures (session);
  const ps_scene_node *sn = &scene->nodes[box];
  gtk_label_set_text (self->title, ps_scene_text (scene, sn->label) ?: "Box");
  g_autofree char *sub = g_strdup_printf ("one box of the DAG for %u nodes", sn->count);
  gtk_label_set_text (self->subtitle, sub);
  if (sn->detail2 != PS_NONE)
    {
      g_autofree char *esc = g_markup_escape_text (ps_scene_text (scene, sn->detail2), -1);
      g_string_append_printf (body, "%s\n", esc);
    }
  guint total = 0;
  g_autoptr (GArray) members = ps_session_box_nodes (session, box, 200, &total);
  heading (body, "Nodes");
  for (guint k = 0; k < members->len; k++)
    {
      guint v = g_array_index (members, guint, k);
      char t[160];
      ps_figures_node_text (f, g, v, t, sizeof t);
      g_autofree char *esc = g_markup_escape_text (ps_node_name (g, v), -1);
      g_string_append_printf (body, "  %s%s%s%s\n", esc, t[0] ? " · " : "", t,
                              f && v < f->n_nodes && f->node_critical[v] ? " · critical" : "");
    }
  if (total > members->len)
    g_string_append_printf (body, "  … and %u more (search to find one)\n",
                            total - members->len);
}

static void
show_buffer (PsInspector *self, guint b, GString *body)
{
  const ps_plan *p = ps_session_get_plan (self->session);
  const ps_graph *g = ps_session_get_graph (self->session);
  const ps_figures *f = ps_session_get_figures (self->session);
  gtk_label_set_text (self->title, ps_buffer_name (g, b));
  g_autofree char *sub = g_strdup_printf ("buffer · %s%s",
                                          ps_dtype_name ((ps_dtype) g->buffers[b].dtype),
                                          g->buffers[b].flags & PS_BUF_EXTERNAL ? " · external" : "");
  gtk_label_set_text (self->subtitle, sub);
  g_string_append (body, "Size: ");
  append_bytes (body, (double) g->buffers[b].bytes);
  g_string_append_c (body, '\n');
  if (p && p->offsets[b] != UINT64_MAX)
    {
      g_string_append (body, "Pool offset: ");
      append_bytes (body, (double) p->offsets[b]);
      g_string_append_c (body, '\n');
    }
  if (f && b < f->n_buffers && !isnan (f->buf_first[b]))
    {
      g_string_append (body, "In use: ");
      append_ns (body, f->buf_first[b]);
      g_string_append (body, " → ");
      append_ns (body, f->buf_last[b]);
      g_string_append_printf (body, " (%s)\n",
                              f->tl && f->tl->source == PS_TL_MEASURED ? "measured" : "predicted");
    }
  else
    g_string_append (body, "Not used in this run\n");
  heading (body, "Used by");
  guint shown = 0;
  for (uint32_t v = 0; v < g->n_nodes && shown < 50; v++)
    {
      const ps_node *n = &g->nodes[v];
      for (uint32_t a = 0; a < n->reads_count + n->writes_count; a++)
        {
          gboolean write = a >= n->reads_count;
          uint32_t idx = write ? n->writes_begin + (a - n->reads_count) : n->reads_begin + a;
          if (idx < g->n_access && g->access[idx] == b)
            {
              g_autofree char *esc = g_markup_escape_text (ps_node_name (g, v), -1);
              g_string_append_printf (body, "  %s (%s)\n", esc, write ? "writes" : "reads");
              shown++;
              break;
            }
        }
    }
}

static void
update_pin_model (PsInspector *self)
{
  guint streams = self->session ? ps_session_get_streams (self->session) : 4;
  GtkStringList *list = gtk_string_list_new (NULL);
  gtk_string_list_append (list, "As in the file");
  gtk_string_list_append (list, "Any (planner decides)");
  for (guint i = 0; i < streams; i++)
    {
      g_autofree char *s = g_strdup_printf ("Stream %u", i);
      gtk_string_list_append (list, s);
    }
  gtk_drop_down_set_model (self->pin, G_LIST_MODEL (list));
  g_object_unref (list);
}

static void
update (PsInspector *self)
{
  self->updating = TRUE;
  GString *body = g_string_new (NULL);
  guint id = 0;
  PsSelectionKind kind = self->session ? ps_session_get_selection (self->session, &id)
                                       : PS_SELECTION_NONE;
  gtk_widget_set_visible (self->whatif, FALSE);
  self->node = PS_NONE;
  self->cond = PS_NONE;
  if (kind == PS_SELECTION_NODE)
    {
      show_node (self, id, body);
      self->node = id;
      gtk_widget_set_visible (self->whatif, TRUE);
      gtk_widget_set_sensitive (GTK_WIDGET (self->no_fuse),
                                ps_session_node_fusible (self->session, id));
      gtk_check_button_set_active (self->no_fuse,
                                   ps_session_get_node_no_fuse (self->session, id));
      update_pin_model (self);
      int pin = ps_session_get_node_pin (self->session, id);
      gtk_drop_down_set_selected (self->pin, (guint) (pin + 2));
      /* A node in a conditional branch, or the conditional itself: which
       * branch the plan runs. */
      const ps_graph *g = ps_session_get_graph (self->session);
      const ps_node *n = &g->nodes[id];
      uint32_t cnode = n->op == PS_OP_CONDITIONAL ? id : n->cond;
      self->cond = cnode < g->n_nodes && g->nodes[cnode].op == PS_OP_CONDITIONAL
                     && g->nodes[cnode].aux < g->n_conds
                     ? g->nodes[cnode].aux : PS_NONE;
      gtk_widget_set_visible (self->assume_row, self->cond != PS_NONE);
      if (self->cond != PS_NONE)
        {
          /* The conditional itself says what it tests in its subtitle. */
          char what[PS_MAX_NAME + 64];
          g_autofree char *label
            = cnode == id ? g_strdup ("Branch")
                          : g_strdup_printf ("Branch of %s (%s)", ps_node_name (g, cnode),
                                             ps_cond_text (g, cnode, what, sizeof what));
          gtk_label_set_text (self->assume_label, label);
          int a = ps_session_get_cond_assume (self->session, self->cond);
          gtk_drop_down_set_selected (self->assume, (guint) (a + 1));
        }
    }
  else if (kind == PS_SELECTION_WAIT)
    {
      const ps_diagnosis *dg = ps_session_get_diagnosis (self->session);
      const ps_wait *w = &dg->waits[id];
      g_autofree char *title = g_strdup_printf ("Wait on stream %u", w->stream);
      gtk_label_set_text (self->title, title);
      g_autofree char *sub = g_strdup_printf ("time work waited %s",
                                              wait_kind_text ((ps_wait_kind) w->kind));
      gtk_label_set_text (self->subtitle, sub);
      describe_wait (body, self->session, id);
    }
  else if (kind == PS_SELECTION_BUFFER)
    show_buffer (self, id, body);
  else if (kind == PS_SELECTION_BOX)
    show_box (self, id, body);
  else
    {
      gtk_label_set_text (self->title, "Nothing selected");
      gtk_label_set_text (self->subtitle, "Click a node, a span, a wait or a buffer.");
    }
  gtk_label_set_markup (self->body, body->str);
  g_string_free (body, TRUE);
  self->updating = FALSE;
}

static void
on_no_fuse_toggled (PsInspector *self)
{
  if (!self->updating && self->node != PS_NONE)
    ps_session_set_node_no_fuse (self->session, self->node,
                                 gtk_check_button_get_active (self->no_fuse));
}

static void
on_pin_selected (PsInspector *self)
{
  guint sel = gtk_drop_down_get_selected (self->pin);
  if (!self->updating && self->node != PS_NONE && sel != GTK_INVALID_LIST_POSITION)
    ps_session_set_node_pin (self->session, self->node, (int) sel - 2);
}

static void
on_assume_selected (PsInspector *self)
{
  guint sel = gtk_drop_down_get_selected (self->assume);
  if (!self->updating && self->cond != PS_NONE && sel != GTK_INVALID_LIST_POSITION)
    ps_session_set_cond_assume (self->session, self->cond, (int) sel - 1);
}

char *
ps_inspector_get_text (PsInspector *self)
{
  g_return_val_if_fail (PS_IS_INSPECTOR (self), NULL);
  return g_strdup_printf ("%s\n%s\n%s", gtk_label_get_text (self->title),
                          gtk_label_get_text (self->subtitle), gtk_label_get_text (self->body));
}

void
ps_inspector_set_session (PsInspector *self, PsSession *session)
{
  g_return_if_fail (PS_IS_INSPECTOR (self));
  if (self->session)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session)
    {
      g_signal_connect_swapped (session, "selection-changed", G_CALLBACK (update), self);
      g_signal_connect_swapped (session, "plan-changed", G_CALLBACK (update), self);
      g_signal_connect_swapped (session, "measured-changed", G_CALLBACK (update), self);
    }
  update (self);
}

static void
ps_inspector_dispose (GObject *object)
{
  PsInspector *self = PS_INSPECTOR (object);
  ps_inspector_set_session (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), PS_TYPE_INSPECTOR);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (ps_inspector_parent_class)->dispose (object);
}

static void
ps_inspector_class_init (PsInspectorClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = ps_inspector_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/planscope/Planscope/ps-inspector.ui");
  gtk_widget_class_bind_template_child (widget_class, PsInspector, scroller);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, title);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, subtitle);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, body);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, whatif);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, no_fuse);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, pin);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, assume_row);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, assume_label);
  gtk_widget_class_bind_template_child (widget_class, PsInspector, assume);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "inspector");
}

static void
ps_inspector_init (PsInspector *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->node = PS_NONE;
  self->cond = PS_NONE;
  update_pin_model (self);
  g_signal_connect_swapped (self->no_fuse, "toggled", G_CALLBACK (on_no_fuse_toggled), self);
  g_signal_connect_swapped (self->pin, "notify::selected", G_CALLBACK (on_pin_selected), self);
  g_signal_connect_swapped (self->assume, "notify::selected", G_CALLBACK (on_assume_selected),
                            self);
}
