/* ps-baseline-view.c: the baseline comparison (see ps-baseline-view.h).
 * The changes come from ps_figures_diff over the baseline's and the
 * current plan's predicted figures; the table shows at most MAX_ROWS of
 * them, the largest change of finish time first.  A baseline of another
 * file is compared by kernel name instead (ps_session_get_baseline_diff). */
#include "ps-baseline-view.h"

#include <math.h>
#include <string.h>

#include "ps-diff.h"
#include "ps-figures.h"
#include "ps-format.h"
#include "ps-session.h"

#define MAX_ROWS 5000

/* ---- rows ------------------------------------------------------------------ */

#define PS_TYPE_BASELINE_ROW (ps_baseline_row_get_type ())
G_DECLARE_FINAL_TYPE (PsBaselineRow, ps_baseline_row, PS, BASELINE_ROW, GObject)

struct _PsBaselineRow
{
  GObject parent_instance;
  ps_figures_delta d;
  char *name;
};

G_DEFINE_FINAL_TYPE (PsBaselineRow, ps_baseline_row, G_TYPE_OBJECT)

static void
ps_baseline_row_finalize (GObject *object)
{
  g_free (PS_BASELINE_ROW (object)->name);
  G_OBJECT_CLASS (ps_baseline_row_parent_class)->finalize (object);
}

static void
ps_baseline_row_class_init (PsBaselineRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ps_baseline_row_finalize;
}

static void
ps_baseline_row_init (PsBaselineRow *self)
{
}

/* The columns: title, what a cell shows, and what sorting compares. */
typedef enum { COL_NODE, COL_STREAM, COL_START, COL_DURATION, COL_FINISH, COL_CRITICAL, N_COLS } Col;

static double
finish (const ps_figures_delta *d, int k)
{
  return d->start[k] + (isnan (d->ns[k]) ? 0 : d->ns[k]);
}

/* The sort key of a column: the change (after - before). */
static double
col_key (const PsBaselineRow *r, Col c)
{
  const ps_figures_delta *d = &r->d;
  switch (c)
    {
    case COL_STREAM: return d->stream[1];
    case COL_START: return d->start[1] - d->start[0];
    case COL_DURATION: return d->ns[1] - d->ns[0];
    case COL_FINISH: return finish (d, 1) - finish (d, 0);
    case COL_CRITICAL: return (double) d->critical[1] - (double) d->critical[0];
    default: return d->node;
    }
}

static void
pair_text (char *buf, size_t cap, double a, double b, gboolean delta)
{
  char x[PS_FORMAT_MAX], y[PS_FORMAT_MAX], z[PS_FORMAT_MAX];
  const char *sa = isnan (a) ? "–" : ps_format_duration (a, x, sizeof x);
  const char *sb = isnan (b) ? "–" : ps_format_duration (b, y, sizeof y);
  if (delta && !isnan (a) && !isnan (b))
    g_snprintf (buf, cap, "%s → %s (%s)", sa, sb, ps_format_duration_delta (b - a, z, sizeof z));
  else
    g_snprintf (buf, cap, "%s → %s", sa, sb);
}

static char *
cell_text (const PsBaselineRow *r, Col c)
{
  const ps_figures_delta *d = &r->d;
  char buf[160], z[PS_FORMAT_MAX];
  switch (c)
    {
    case COL_STREAM:
      if (d->stream[0] == d->stream[1])
        return g_strdup_printf ("%d", d->stream[1]);
      return g_strdup_printf ("%d → %d", d->stream[0], d->stream[1]);
    case COL_START:
      pair_text (buf, sizeof buf, d->start[0], d->start[1], TRUE);
      return g_strdup (buf);
    case COL_DURATION:
      pair_text (buf, sizeof buf, d->ns[0], d->ns[1], TRUE);
      return g_strdup (buf);
    case COL_FINISH:
      if (isnan (d->start[0]) || isnan (d->start[1]))
        return g_strdup ("–");
      return g_strdup (ps_format_duration_delta (finish (d, 1) - finish (d, 0), z, sizeof z));
    case COL_CRITICAL:
      if (d->critical[0] == d->critical[1])
        return g_strdup (d->critical[1] ? "yes" : "no");
      return g_strdup (d->critical[1] ? "joined" : "left");
    default:
      return g_strdup (r->name);
    }
}

/* ---- the view ----------------------------------------------------------------- */

struct _PsBaselineView
{
  GtkWidget parent_instance;
  PsSession *session;
  GtkLabel *summary;
  GtkLabel *note;
  GtkColumnView *table;
  GListStore *store;
  GtkSortListModel *sorted;
  guint changed;
};

G_DEFINE_FINAL_TYPE (PsBaselineView, ps_baseline_view, GTK_TYPE_WIDGET)

static void
setup_cell (GtkSignalListItemFactory *f, GtkListItem *item, gpointer data)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), GPOINTER_TO_INT (data) == COL_NODE ? 0 : 1);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *f, GtkListItem *item, gpointer data)
{
  PsBaselineRow *r = gtk_list_item_get_item (item);
  g_autofree char *text = cell_text (r, GPOINTER_TO_INT (data));
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static int
compare_rows (gconstpointer a, gconstpointer b, gpointer data)
{
  Col c = GPOINTER_TO_INT (data);
  const PsBaselineRow *x = a, *y = b;
  if (c == COL_NODE)
    return g_utf8_collate (x->name, y->name);
  double kx = col_key (x, c), ky = col_key (y, c);
  if (isnan (kx) || isnan (ky))
    return isnan (kx) - isnan (ky);
  return kx < ky ? -1 : kx > ky ? 1 : 0;
}

/* A baseline of another file: the two runs by kernel name, as `diff`
 * gives them. */
static void
update_other (PsBaselineView *self, const char *title)
{
  const ps_diff *d = ps_session_get_baseline_diff (self->session);
  if (!d)
    {
      g_autofree char *sum = g_strdup_printf ("Comparing with %s…", title);
      gtk_label_set_text (self->summary, sum);
      gtk_label_set_text (self->note, "");
      return;
    }
  char a[PS_FORMAT_MAX], b[PS_FORMAT_MAX], c[PS_FORMAT_MAX];
  g_autofree char *sum = g_strdup_printf (
      "Baseline %s · makespan %s → %s (%s) · GPU ops %u → %u · critical path: %u kernels "
      "joined it, %u left it",
      title, ps_format_duration (d->makespan_ns[0], a, sizeof a),
      ps_format_duration (d->makespan_ns[1], b, sizeof b),
      ps_format_duration_delta (d->makespan_ns[1] - d->makespan_ns[0], c, sizeof c), d->ops[0],
      d->ops[1], d->joined, d->left);
  gtk_label_set_text (self->summary, sum);
  GString *note = g_string_new ("Kernels, most changed first (count, then total time, baseline "
                                "→ this run):\n");
  guint shown = MIN (d->n_names, 20);
  for (guint i = 0; i < shown; i++)
    {
      const ps_diff_name *n = &d->names[i];
      char name[96];
      ps_quote_text (name, sizeof name, n->name, strlen (n->name));
      const char *cp = ps_diff_name_critical_text (n);
      g_string_append_printf (note, "  %s: %u → %u, %s → %s (%s)%s%s\n", name, n->count[0],
                              n->count[1], ps_format_duration (n->total_ns[0], a, sizeof a),
                              ps_format_duration (n->total_ns[1], b, sizeof b),
                              ps_format_duration_delta (n->total_ns[1] - n->total_ns[0], c,
                                                        sizeof c),
                              *cp ? " · critical path: " : "", cp);
    }
  if (d->n_names > shown)
    g_string_append_printf (note, "  … and %u more (planscope-cli diff lists them all)\n",
                            d->n_names - shown);
  g_string_append (note, "Streams (busy time):");
  for (guint i = 0; i < d->n_streams; i++)
    {
      const ps_diff_stream *st = &d->streams[i];
      g_string_append_printf (note, "%s %lld %s → %s", i ? "," : "", (long long) st->id,
                              st->busy_ns[0] >= 0 ? ps_format_duration (st->busy_ns[0], a, sizeof a)
                                                  : "-",
                              st->busy_ns[1] >= 0 ? ps_format_duration (st->busy_ns[1], b, sizeof b)
                                                  : "-");
    }
  gtk_label_set_text (self->note, note->str);
  g_string_free (note, TRUE);
}

static void
update (PsBaselineView *self)
{
  g_list_store_remove_all (self->store);
  self->changed = 0;
  const char *other = self->session ? ps_session_get_baseline_other (self->session) : NULL;
  /* Node by node only against a plan of the same file. */
  gtk_widget_set_visible (gtk_widget_get_parent (GTK_WIDGET (self->table)), !other);
  if (other)
    {
      update_other (self, other);
      return;
    }
  const ps_figures *a = self->session ? ps_session_get_baseline_figures (self->session) : NULL;
  const ps_figures *b = self->session ? ps_session_get_predicted_figures (self->session) : NULL;
  if (!a || !b)
    {
      gtk_label_set_text (self->summary, "No baseline: press Ctrl+B to pin the current plan, "
                                         "then change streams, fusion or a node and compare.");
      gtk_label_set_text (self->note, "");
      return;
    }
  PsSummary before, after;
  ps_session_get_baseline_summary (self->session, &before);
  ps_session_get_summary (self->session, &after);
  char m0[PS_FORMAT_MAX], m1[PS_FORMAT_MAX], md[PS_FORMAT_MAX], p0[PS_FORMAT_MAX],
      p1[PS_FORMAT_MAX], pd[PS_FORMAT_MAX];
  gint64 ev = (gint64) after.events - (gint64) before.events;
  g_autofree char *sum = g_strdup_printf (
      "Makespan %s → %s (%s) · events %u → %u (%s%" G_GINT64_FORMAT ") · pool %s → %s (%s)",
      ps_format_duration (before.makespan_ns, m0, sizeof m0),
      ps_format_duration (after.makespan_ns, m1, sizeof m1),
      ps_format_duration_delta (after.makespan_ns - before.makespan_ns, md, sizeof md),
      before.events, after.events, ev < 0 ? "−" : "+", ev < 0 ? -ev : ev,
      ps_format_bytes ((double) before.pool_bytes, p0, sizeof p0),
      ps_format_bytes ((double) after.pool_bytes, p1, sizeof p1),
      ps_format_bytes_delta ((double) after.pool_bytes - (double) before.pool_bytes, pd,
                             sizeof pd));
  gtk_label_set_text (self->summary, sum);
  ps_figures_delta *d = NULL;
  uint32_t n = 0;
  const ps_graph *g = ps_session_get_graph (self->session);
  if (!g || ps_figures_diff (a, b, &d, &n) < 0)
    {
      gtk_label_set_text (self->note, "The baseline is of another graph.");
      return;
    }
  self->changed = n;
  guint shown = MIN (n, MAX_ROWS);
  GPtrArray *rows = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < shown; i++)
    {
      PsBaselineRow *r = g_object_new (PS_TYPE_BASELINE_ROW, NULL);
      r->d = d[i];
      r->name = g_strdup (ps_node_name (g, d[i].node));
      g_ptr_array_add (rows, r);
    }
  g_list_store_splice (self->store, 0, 0, rows->pdata, rows->len);
  g_ptr_array_unref (rows);
  free (d);
  g_autofree char *note = NULL;
  if (n == 0)
    note = g_strdup ("No node changed its stream, start, duration or place on the critical path.");
  else if (n > shown)
    note = g_strdup_printf ("%u nodes changed; the %u with the largest change of finish time "
                            "are listed.  Click a column to sort by it.", n, shown);
  else
    note = g_strdup_printf ("%u node%s changed.  Click a column to sort by it; a row selects its "
                            "node.", n, n == 1 ? "" : "s");
  gtk_label_set_text (self->note, note);
}

static void
on_activate (GtkColumnView *view, guint position, gpointer data)
{
  PsBaselineView *self = data;
  g_autoptr (PsBaselineRow) r = g_list_model_get_item (G_LIST_MODEL (self->sorted), position);
  if (r && self->session)
    ps_session_select (self->session, PS_SELECTION_NODE, r->d.node);
}

void
ps_baseline_view_set_session (PsBaselineView *self, PsSession *session)
{
  g_return_if_fail (PS_IS_BASELINE_VIEW (self));
  if (self->session)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session)
    {
      g_signal_connect_swapped (session, "plan-changed", G_CALLBACK (update), self);
      g_signal_connect_swapped (session, "notify::has-baseline", G_CALLBACK (update), self);
      g_signal_connect_swapped (session, "baseline-changed", G_CALLBACK (update), self);
    }
  update (self);
}

char *
ps_baseline_view_get_text (PsBaselineView *self)
{
  g_return_val_if_fail (PS_IS_BASELINE_VIEW (self), NULL);
  GString *s = g_string_new (gtk_label_get_text (self->summary));
  g_string_append_c (s, '\n');
  GListModel *m = G_LIST_MODEL (self->sorted);
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    {
      g_autoptr (PsBaselineRow) r = g_list_model_get_item (m, i);
      for (int c = 0; c < N_COLS; c++)
        {
          g_autofree char *t = cell_text (r, c);
          g_string_append_printf (s, "%s%s", c ? " | " : "", t);
        }
      g_string_append_c (s, '\n');
    }
  g_string_append (s, gtk_label_get_text (self->note));
  return g_string_free (s, FALSE);
}

guint
ps_baseline_view_get_n_rows (PsBaselineView *self, guint *changed)
{
  g_return_val_if_fail (PS_IS_BASELINE_VIEW (self), 0);
  if (changed)
    *changed = self->changed;
  return g_list_model_get_n_items (G_LIST_MODEL (self->sorted));
}

static void
ps_baseline_view_dispose (GObject *object)
{
  PsBaselineView *self = PS_BASELINE_VIEW (object);
  ps_baseline_view_set_session (self, NULL);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  g_clear_object (&self->store);
  G_OBJECT_CLASS (ps_baseline_view_parent_class)->dispose (object);
}

static void
ps_baseline_view_class_init (PsBaselineViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ps_baseline_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "baseline");
}

static GtkWidget *
button (const char *label, const char *action, const char *tooltip)
{
  GtkWidget *b = gtk_button_new_with_mnemonic (label);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (b), action);
  gtk_widget_set_tooltip_text (b, tooltip);
  return b;
}

static void
ps_baseline_view_init (PsBaselineView *self)
{
  GtkWidget *w = GTK_WIDGET (self);
  gtk_orientable_set_orientation (GTK_ORIENTABLE (gtk_widget_get_layout_manager (w)),
                                  GTK_ORIENTATION_VERTICAL);
  GtkWidget *head = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start (head, 12);
  gtk_widget_set_margin_end (head, 12);
  gtk_widget_set_margin_top (head, 8);
  self->summary = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->summary, 0);
  gtk_label_set_wrap (self->summary, TRUE);
  gtk_label_set_selectable (self->summary, TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->summary), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->summary), "heading");
  gtk_box_append (GTK_BOX (head), GTK_WIDGET (self->summary));
  gtk_box_append (GTK_BOX (head), button ("_Undo", "window.undo-whatif",
                                          "Undo the last what-if change (Ctrl+Z)"));
  gtk_box_append (GTK_BOX (head), button ("_Reset", "window.reset-whatif",
                                          "Undo every what-if change"));
  gtk_box_append (GTK_BOX (head), button ("_Clear Baseline", "window.clear-baseline",
                                          "Stop comparing with the baseline"));
  gtk_widget_set_parent (head, w);
  self->note = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->note, 0);
  gtk_label_set_wrap (self->note, TRUE);
  gtk_widget_set_margin_start (GTK_WIDGET (self->note), 12);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->note), 6);
  gtk_widget_add_css_class (GTK_WIDGET (self->note), "dim-label");
  gtk_widget_set_parent (GTK_WIDGET (self->note), w);

  self->store = g_list_store_new (PS_TYPE_BASELINE_ROW);
  self->table = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));
  static const char *const titles[N_COLS] = { "Node", "Stream", "Start", "Duration",
                                              "Finish moved", "Critical path" };
  GtkColumnViewColumn *by_finish = NULL;
  for (int c = 0; c < N_COLS; c++)
    {
      GtkListItemFactory *f = gtk_signal_list_item_factory_new ();
      g_signal_connect (f, "setup", G_CALLBACK (setup_cell), GINT_TO_POINTER (c));
      g_signal_connect (f, "bind", G_CALLBACK (bind_cell), GINT_TO_POINTER (c));
      GtkColumnViewColumn *col = gtk_column_view_column_new (titles[c], f);
      GtkSorter *sorter = GTK_SORTER (gtk_custom_sorter_new (compare_rows, GINT_TO_POINTER (c),
                                                             NULL));
      gtk_column_view_column_set_sorter (col, sorter);
      g_object_unref (sorter);
      gtk_column_view_column_set_resizable (col, TRUE);
      gtk_column_view_column_set_expand (col, c == COL_NODE);
      gtk_column_view_append_column (self->table, col);
      if (c == COL_FINISH)
        by_finish = col;
      g_object_unref (col);
    }
  self->sorted = gtk_sort_list_model_new (G_LIST_MODEL (g_object_ref (self->store)),
                                          g_object_ref (gtk_column_view_get_sorter (self->table)));
  GtkSelectionModel *sel = GTK_SELECTION_MODEL (gtk_single_selection_new (
      G_LIST_MODEL (self->sorted)));
  gtk_column_view_set_model (self->table, sel);
  g_object_unref (sel);
  gtk_column_view_set_single_click_activate (self->table, TRUE);
  g_signal_connect (self->table, "activate", G_CALLBACK (on_activate), self);
  /* The list comes largest change first; the Finish column says so. */
  gtk_column_view_sort_by_column (self->table, by_finish, GTK_SORT_DESCENDING);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  gtk_widget_set_vexpand (scroller, TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), GTK_WIDGET (self->table));
  gtk_widget_set_parent (scroller, w);
}
