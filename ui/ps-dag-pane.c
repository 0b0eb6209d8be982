/* ps-dag-pane.c: wires the DAG toolbar and search bar to the session. */
#include "ps-dag-pane.h"

#include "ps-dag-widget.h"
#include "ps-session.h"

struct _PsDagPane
{
  GtkWidget parent_instance;

  GtkToggleButton *search_toggle;
  GtkDropDown *color_by;
  GtkToggleButton *critical;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkLabel *match_label;
  PsDagWidget *view;

  PsSession *session;
  GArray *matches;
  guint current;
  GCancellable *search_cancel; /* the search running for the text typed, if any */
};

G_DEFINE_FINAL_TYPE (PsDagPane, ps_dag_pane, GTK_TYPE_WIDGET)

#define MAX_MATCHES 100000

/* Stops the search running on a worker thread, if any: its result is
 * dropped (on_found sees it cancelled). */
static void
cancel_search (PsDagPane *self)
{
  g_cancellable_cancel (self->search_cancel);
  g_clear_object (&self->search_cancel);
}

/* Shows matches (owned, or NULL) for text and selects the first. */
static guint
show_matches (PsDagPane *self, const char *text, GArray *matches)
{
  g_clear_pointer (&self->matches, g_array_unref);
  self->matches = matches;
  self->current = 0;
  ps_dag_widget_set_matches (self->view, self->matches);
  guint n = self->matches ? self->matches->len : 0;
  g_autofree char *label = !text || !*text ? g_strdup ("")
                           : n == 0 ? g_strdup ("No match")
                           : g_strdup_printf ("%u match%s", n, n == 1 ? "" : "es");
  gtk_label_set_text (self->match_label, label);
  if (n > 0)
    ps_session_select (self->session, PS_SELECTION_NODE, g_array_index (self->matches, guint, 0));
  return n;
}

guint
ps_dag_pane_search (PsDagPane *self, const char *text)
{
  g_return_val_if_fail (PS_IS_DAG_PANE (self), 0);
  cancel_search (self);
  GArray *found = self->session && text && *text
                    ? ps_session_find_nodes (self->session, text, MAX_MATCHES) : NULL;
  return show_matches (self, text, found);
}

static void
on_found (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  GArray *found = ps_session_find_nodes_finish (PS_SESSION (source), result, &error);
  if (!found)
    return; /* cancelled: a newer search or the pane's end replaced it */
  PsDagPane *self = data;
  g_clear_object (&self->search_cancel);
  show_matches (self, gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), found);
}

/* Typing searches on a worker thread; each change cancels the search
 * before it. */
static void
on_search_changed (PsDagPane *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  cancel_search (self);
  if (!self->session || !*text)
    {
      show_matches (self, text, NULL);
      return;
    }
  gtk_label_set_text (self->match_label, "Searching\u2026");
  self->search_cancel = g_cancellable_new ();
  ps_session_find_nodes_async (self->session, text, MAX_MATCHES, self->search_cancel, on_found,
                               self);
}

guint
ps_dag_pane_get_match_count (PsDagPane *self)
{
  g_return_val_if_fail (PS_IS_DAG_PANE (self), 0);
  return self->matches ? self->matches->len : 0;
}

static void
step_match (PsDagPane *self, int dir)
{
  if (!self->matches || self->matches->len == 0)
    return;
  guint n = self->matches->len;
  self->current = (self->current + n + dir) % n;
  guint node = g_array_index (self->matches, guint, self->current);
  ps_session_select (self->session, PS_SELECTION_NODE, node);
  g_autofree char *label = g_strdup_printf ("%u of %u", self->current + 1, n);
  gtk_label_set_text (self->match_label, label);
}

static void
on_next (PsDagPane *self)
{
  step_match (self, 1);
}

static void
on_previous (PsDagPane *self)
{
  step_match (self, -1);
}

static void
on_stop (PsDagPane *self)
{
  cancel_search (self);
  gtk_search_bar_set_search_mode (self->search_bar, FALSE);
  ps_dag_widget_set_matches (self->view, NULL);
}

void
ps_dag_pane_start_search (PsDagPane *self)
{
  g_return_if_fail (PS_IS_DAG_PANE (self));
  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
on_color_selected (PsDagPane *self)
{
  if (self->session)
    ps_session_set_color_by (self->session, gtk_drop_down_get_selected (self->color_by));
}

static void
on_session_color (PsDagPane *self)
{
  gtk_drop_down_set_selected (self->color_by, ps_session_get_color_by (self->session));
}

void
ps_dag_pane_set_session (PsDagPane *self, PsSession *session)
{
  g_return_if_fail (PS_IS_DAG_PANE (self));
  if (self->session)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  ps_dag_widget_set_session (self->view, session);
  if (session)
    {
      g_object_bind_property (session, "show-critical", self->critical, "active",
                              G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
      g_signal_connect_swapped (session, "notify::color-by", G_CALLBACK (on_session_color), self);
      on_session_color (self);
      g_signal_connect_swapped (session, "document-changed", G_CALLBACK (on_stop), self);
    }
}

PsDagWidget *
ps_dag_pane_get_view (PsDagPane *self)
{
  g_return_val_if_fail (PS_IS_DAG_PANE (self), NULL);
  return self->view;
}

/* The toolbar's zoom buttons act on the view below them. */
static void
action_zoom (GtkWidget *widget, const char *name, GVariant *param)
{
  PsDagPane *self = PS_DAG_PANE (widget);
  if (g_str_equal (name, "dag.zoom-in"))
    ps_dag_widget_zoom (self->view, 1.25);
  else if (g_str_equal (name, "dag.zoom-out"))
    ps_dag_widget_zoom (self->view, 0.8);
  else
    ps_dag_widget_zoom_fit (self->view);
}

static void
ps_dag_pane_dispose (GObject *object)
{
  PsDagPane *self = PS_DAG_PANE (object);
  if (self->session)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_clear_object (&self->session);
  cancel_search (self);
  g_clear_pointer (&self->matches, g_array_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), PS_TYPE_DAG_PANE);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (ps_dag_pane_parent_class)->dispose (object);
}

static void
ps_dag_pane_class_init (PsDagPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = ps_dag_pane_dispose;
  g_type_ensure (PS_TYPE_DAG_WIDGET);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/planscope/Planscope/ps-dag-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, PsDagPane, search_toggle);
  gtk_widget_class_bind_template_child (widget_class, PsDagPane, color_by);
  gtk_widget_class_bind_template_child (widget_class, PsDagPane, critical);
  gtk_widget_class_bind_template_child (widget_class, PsDagPane, search_bar);
  gtk_widget_class_bind_template_child (widget_class, PsDagPane, search_entry);
  gtk_widget_class_bind_template_child (widget_class, PsDagPane, match_label);
  gtk_widget_class_bind_template_child (widget_class, PsDagPane, view);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_install_action (widget_class, "dag.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "dag.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "dag.zoom-fit", NULL, action_zoom);
}

static void
ps_dag_pane_init (PsDagPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));
  g_object_bind_property (self->search_toggle, "active", self->search_bar, "search-mode-enabled",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_signal_connect_swapped (self->search_entry, "search-changed", G_CALLBACK (on_search_changed),
                            self);
  g_signal_connect_swapped (self->search_entry, "activate", G_CALLBACK (on_next), self);
  g_signal_connect_swapped (self->search_entry, "next-match", G_CALLBACK (on_next), self);
  g_signal_connect_swapped (self->search_entry, "previous-match", G_CALLBACK (on_previous), self);
  g_signal_connect_swapped (self->search_entry, "stop-search", G_CALLBACK (on_stop), self);
  g_signal_connect_swapped (self->color_by, "notify::selected", G_CALLBACK (on_color_selected),
                            self);
}
