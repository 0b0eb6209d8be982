/* ps-application.c: the application object and its command line.
 *
 * `--screenshot OUT.png FILE` opens FILE, waits until the session is ready
 * (loaded, planned, simulated, laid out) and a frame has been painted,
 * saves a PNG of the real window and quits; --select and --page choose
 * what it shows.  `--timing` prints the time to
 * the first complete picture and the time from a re-plan (one stream
 * fewer) to the next painted frame. */
#include "ps-application.h"

#include <stdio.h>

#include "ps-session.h"
#include "ps-window.h"

struct _PsApplication
{
  AdwApplication parent_instance;

  char *screenshot;
  int streams;
  gboolean no_fusion;
  char *device;
  char *select;
  char *compare;
  char *page;
  gboolean timing;
  int exit_status;
  gint64 t_start;

  /* Screenshot and timing state. */
  PsWindow *window;
  gulong ready_id, paint_id;
  guint timeout_id;
  int phase; /* 0 loading, 1 first picture, 2 re-planning */
  gint64 t_replan;
};

G_DEFINE_FINAL_TYPE (PsApplication, ps_application, ADW_TYPE_APPLICATION)

int
ps_application_get_exit_status (PsApplication *self)
{
  g_return_val_if_fail (PS_IS_APPLICATION (self), 1);
  return self->exit_status;
}

static void
finish (PsApplication *self, int status)
{
  self->exit_status = status;
  g_clear_handle_id (&self->timeout_id, g_source_remove);
  if (self->window)
    {
      GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (self->window));
      if (clock && self->paint_id)
        g_clear_signal_handler (&self->paint_id, clock);
      g_clear_signal_handler (&self->ready_id, ps_window_get_session (self->window));
    }
  g_application_quit (G_APPLICATION (self));
}

/* Seconds to draw a widget and render it into a texture, as a frame
 * would. */
static double
time_redraw (GtkWidget *w)
{
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  if (width <= 0 || height <= 0)
    return 0;
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (w));
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  if (node && renderer)
    {
      GdkTexture *tex = gsk_renderer_render_texture (renderer, node,
                                                     &GRAPHENE_RECT_INIT (0, 0, width, height));
      g_object_unref (tex);
    }
  g_clear_pointer (&node, gsk_render_node_unref);
  return (g_get_monotonic_time () - t0) / 1e6;
}

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  PsApplication *self = data;
  PsSession *session = ps_window_get_session (self->window);
  if (!ps_session_get_ready (session))
    return;
  double now = (g_get_monotonic_time () - self->t_start) / 1e6;
  if (self->phase == 1)
    {
      if (self->screenshot)
        {
          g_autoptr (GError) error = NULL;
          if (!ps_window_save_png (self->window, self->screenshot, &error)
              && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING))
            {
              /* Not drawn yet after all: try after the next frame. */
              gtk_widget_queue_draw (GTK_WIDGET (self->window));
              return;
            }
          if (error)
            {
              fprintf (stderr, "planscope: %s\n", error->message);
              finish (self, 1);
              return;
            }
        }
      if (self->timing)
        {
          fprintf (stderr, "planscope: first complete picture after %.3f s\n", now);
          /* One redraw of each view, rendered off screen. */
          static const char *const views[] = { "dag", "timeline" };
          for (guint i = 0; i < G_N_ELEMENTS (views); i++)
            fprintf (stderr, "planscope: redraw of the %s view %.1f ms\n", views[i],
                     time_redraw (ps_window_get_part (self->window, views[i])) * 1e3);
        }
      if (!self->timing)
        {
          finish (self, 0);
          return;
        }
      /* Time a re-plan: one stream fewer (or more, from one). */
      self->phase = 2;
      self->t_replan = g_get_monotonic_time ();
      guint s = ps_session_get_streams (session);
      ps_session_set_streams (session, s > 1 ? s - 1 : 2);
      gtk_widget_queue_draw (GTK_WIDGET (self->window));
      return;
    }
  if (self->phase == 2)
    {
      fprintf (stderr, "planscope: re-plan to redraw %.3f s\n",
               (g_get_monotonic_time () - self->t_replan) / 1e6);
      finish (self, 0);
    }
}

static void
on_ready (PsSession *session, GParamSpec *pspec, gpointer data)
{
  PsApplication *self = data;
  if (!ps_session_get_ready (session))
    return;
  if (self->phase == 0)
    self->phase = 1;
  /* Wait for the frame that shows the finished views. */
  gtk_widget_queue_draw (GTK_WIDGET (self->window));
  GtkWidget *dag = ps_window_get_part (self->window, "dag");
  gtk_widget_queue_draw (dag);
}

static gboolean
on_timeout (gpointer data)
{
  PsApplication *self = data;
  self->timeout_id = 0;
  fprintf (stderr, "planscope: the views were not ready in time\n");
  finish (self, 1);
  return G_SOURCE_REMOVE;
}

static void
on_opened (GObject *source, GAsyncResult *result, gpointer data)
{
  PsApplication *self = data;
  g_autoptr (GError) error = NULL;
  if (!ps_window_open_finish (PS_WINDOW (source), result, &error))
    {
      if (self->screenshot || self->timing)
        {
          fprintf (stderr, "%s\n", error->message);
          finish (self, 1);
        }
    }
  else
    {
      if (self->compare)
        {
          g_autoptr (GFile) other = g_file_new_for_commandline_arg (self->compare);
          ps_window_compare (PS_WINDOW (source), other);
        }
      if (self->select)
        {
          PsSession *session = ps_window_get_session (PS_WINDOW (source));
          const ps_graph *g = ps_session_get_graph (session);
          g_autoptr (GArray) hits = ps_session_find_nodes (session, self->select, G_MAXUINT);
          for (guint i = 0; i < hits->len; i++)
            if (g_str_equal (ps_node_name (g, g_array_index (hits, guint, i)), self->select))
              ps_session_select (session, PS_SELECTION_NODE, g_array_index (hits, guint, i));
        }
    }
  g_application_release (G_APPLICATION (self));
}

static PsWindow *
new_window (PsApplication *self)
{
  PsWindow *win = ps_window_new (GTK_APPLICATION (self));
  PsSession *session = ps_window_get_session (win);
  if (self->streams > 0)
    ps_session_set_streams (session, (guint) self->streams);
  if (self->no_fusion)
    ps_session_set_fusion (session, FALSE);
  if (self->device)
    ps_session_set_device (session, self->device);
  return win;
}

static void
ps_application_activate (GApplication *app)
{
  PsApplication *self = PS_APPLICATION (app);
  GtkWindow *win = gtk_application_get_active_window (GTK_APPLICATION (app));
  if (!win)
    win = GTK_WINDOW (new_window (self));
  gtk_window_present (win);
  if (self->screenshot || self->timing)
    {
      fprintf (stderr, "planscope: --screenshot and --timing need a FILE\n");
      self->exit_status = 2;
      g_application_quit (app);
    }
}

static void
ps_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  PsApplication *self = PS_APPLICATION (app);
  for (int i = 0; i < n_files; i++)
    {
      PsWindow *win = new_window (self);
      if (i == 0 && (self->screenshot || self->timing))
        {
          self->window = win;
          PsSession *session = ps_window_get_session (win);
          self->ready_id = g_signal_connect (session, "notify::ready", G_CALLBACK (on_ready), self);
          gtk_window_set_default_size (GTK_WINDOW (win), 1400, 860);
          gtk_widget_realize (GTK_WIDGET (win));
          self->paint_id = g_signal_connect (gtk_widget_get_frame_clock (GTK_WIDGET (win)),
                                             "after-paint", G_CALLBACK (on_after_paint), self);
          const char *limit = g_getenv ("PS_SCREENSHOT_TIMEOUT");
          self->timeout_id = g_timeout_add_seconds (limit ? (guint) atoi (limit) : 300,
                                                    on_timeout, self);
        }
      if (self->page)
        adw_view_stack_set_visible_child_name (ADW_VIEW_STACK (ps_window_get_part (win, "stack")),
                                               self->page);
      gtk_window_present (GTK_WINDOW (win));
      g_application_hold (app);
      ps_window_open (win, files[i], on_opened, self);
    }
}

static int
ps_application_handle_local_options (GApplication *app, GVariantDict *options)
{
  PsApplication *self = PS_APPLICATION (app);
  if (g_variant_dict_contains (options, "version"))
    {
      printf ("planscope %s\n", PS_VERSION);
      return 0;
    }
  g_variant_dict_lookup (options, "screenshot", "^ay", &self->screenshot);
  g_variant_dict_lookup (options, "streams", "i", &self->streams);
  g_variant_dict_lookup (options, "device", "s", &self->device);
  g_variant_dict_lookup (options, "select", "s", &self->select);
  g_variant_dict_lookup (options, "compare", "^ay", &self->compare);
  g_variant_dict_lookup (options, "page", "s", &self->page);
  if (self->page && !g_str_equal (self->page, "plan") && !g_str_equal (self->page, "memory"))
    {
      fprintf (stderr, "planscope: --page must be plan or memory\n");
      return 2;
    }
  self->no_fusion = g_variant_dict_contains (options, "no-fusion");
  self->timing = g_variant_dict_contains (options, "timing");
  if (self->streams < 0 || self->streams > 64)
    {
      fprintf (stderr, "planscope: --streams must be 1..64\n");
      return 2;
    }
  /* A screenshot or timing run is its own instance, never handed to a
   * running one. */
  if (self->screenshot || self->timing)
    g_application_set_flags (app, g_application_get_flags (app) | G_APPLICATION_NON_UNIQUE);
  return -1;
}

static void
action_about (GSimpleAction *action, GVariant *param, gpointer data)
{
  GtkApplication *app = data;
  const char *developers[] = { "The planscope authors", NULL };
  GtkWidget *about = adw_about_window_new ();
  g_object_set (about, "transient-for", gtk_application_get_active_window (app),
                "application-name", "planscope", "application-icon",
                "io.github.planscope.Planscope", "version", PS_VERSION, "developers", developers,
                "license-type", GTK_LICENSE_MIT_X11, "comments",
                "Plan, simulate and profile multi-stream GPU work: see the DAG and per-stream "
                "timeline, tune fusion and stream counts, and find out why a stream stalled.",
                NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
action_quit (GSimpleAction *action, GVariant *param, gpointer data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (data));
  while (windows)
    {
      GList *next = windows->next;
      gtk_window_destroy (windows->data);
      windows = next;
    }
  g_application_quit (G_APPLICATION (data));
}

static void
ps_application_startup (GApplication *app)
{
  G_APPLICATION_CLASS (ps_application_parent_class)->startup (app);
  static const GActionEntry entries[] = {
    { "about", action_about, NULL, NULL, NULL, { 0 } },
    { "quit", action_quit, NULL, NULL, NULL, { 0 } },
  };
  g_action_map_add_action_entries (G_ACTION_MAP (app), entries, G_N_ELEMENTS (entries), app);
  const char *quit[] = { "<Control>q", NULL };
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit);
}

static void
ps_application_finalize (GObject *object)
{
  PsApplication *self = PS_APPLICATION (object);
  g_free (self->screenshot);
  g_free (self->device);
  g_free (self->select);
  g_free (self->compare);
  g_free (self->page);
  G_OBJECT_CLASS (ps_application_parent_class)->finalize (object);
}

static void
ps_application_class_init (PsApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);
  G_OBJECT_CLASS (klass)->finalize = ps_application_finalize;
  app_class->activate = ps_application_activate;
  app_class->open = ps_application_open;
  app_class->startup = ps_application_startup;
  app_class->handle_local_options = ps_application_handle_local_options;
}

static void
ps_application_init (PsApplication *self)
{
  self->t_start = g_get_monotonic_time ();
  static const GOptionEntry options[] = {
    { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, NULL,
      "Open FILE, wait until every view is ready, save a PNG of the window and exit",
      "OUT.png" },
    { "streams", 's', 0, G_OPTION_ARG_INT, NULL, "Maximum streams (1..64, default 4)", "N" },
    { "no-fusion", 0, 0, G_OPTION_ARG_NONE, NULL, "Start with fusion off", NULL },
    { "device", 'd', 0, G_OPTION_ARG_STRING, NULL, "Device profile (default h200)", "NAME" },
    { "select", 0, 0, G_OPTION_ARG_STRING, NULL, "Select the node named NAME once loaded",
      "NAME" },
    { "compare", 0, 0, G_OPTION_ARG_FILENAME, NULL,
      "Compare with FILE (a graph or a trace) as the baseline once loaded", "FILE" },
    { "page", 0, 0, G_OPTION_ARG_STRING, NULL, "Show the plan or the memory page", "PAGE" },
    { "timing", 0, 0, G_OPTION_ARG_NONE, NULL,
      "Print the time to the first picture and of one re-plan, then exit", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the version and exit", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_application_add_main_option_entries (G_APPLICATION (self), options);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), "[FILE…]");
}

PsApplication *
ps_application_new (void)
{
  return g_object_new (PS_TYPE_APPLICATION, "application-id", "io.github.planscope.Planscope",
                       "flags", G_APPLICATION_HANDLES_OPEN, "resource-base-path",
                       "/io/github/planscope/Planscope", NULL);
}
