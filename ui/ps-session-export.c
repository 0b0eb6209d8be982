/* ps-session-export.c: exports from the app, through render/ps-export.h
 * (the code behind `planscope-cli export`), on a worker thread. */
#include "ps-session-private.h"

#include "ps-export.h"

typedef struct {
  PsPlanState *state;
  PsMeasured *measured; /* the run the figures come from, or NULL */
  ps_export_options options;
  char *device;
  char *path;
} ExportJob;

static void
export_job_free (ExportJob *job)
{
  ps__state_unref (job->state);
  ps__measured_unref (job->measured);
  g_free (job->device);
  g_free (job->path);
  g_free (job);
}

static void
export_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ExportJob *job = data;
  ps_device dev;
  ps_diag diag;
  ps_diag_init (&diag, job->device);
  if (ps_device_find (&dev, job->device, &diag) == 0)
    job->options.device = &dev;
  ps_diag_free (&diag);
  char err[1024] = "";
  int r = ps_export_write (&job->state->plan, &job->options, job->path, NULL, err, sizeof err);
  if (r < 0)
    g_task_return_new_error (task, PS_SESSION_ERROR, r, "%s", *err ? err : ps_strerror (r));
  else
    g_task_return_boolean (task, TRUE);
}

void
ps_session_export_async (PsSession *self, const char *view, const char *format, GFile *file,
                         GCancellable *cancellable, GAsyncReadyCallback callback,
                         gpointer user_data)
{
  g_return_if_fail (PS_IS_SESSION (self));
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, ps_session_export_async);
  PsPlanState *st = ps__session_get_state (self);
  g_autofree char *path = g_file_get_path (file);
  ExportJob *job = g_new0 (ExportJob, 1);
  ps_export_options_init (&job->options);
  if (!st || !st->have_plan)
    {
      g_free (job);
      g_task_return_new_error (task, PS_SESSION_ERROR, PS_EINVAL, "There is no plan to export");
      return;
    }
  if (!path || ps_export_view_parse (view, &job->options.view) < 0
      || ps_export_format_parse (format, &job->options.format) < 0)
    {
      g_free (job);
      g_task_return_new_error (task, PS_SESSION_ERROR, PS_EUSAGE, "Cannot export %s as %s to %s",
                               view, format, path ? path : "a non-local file");
      return;
    }
  job->options.view_options.color = ps_session_get_color_by (self);
  job->options.view_options.hide_critical = !ps_session_get_show_critical (self);
  job->state = ps__state_ref (st);
  PsMeasured *m = ps__session_get_measured (self);
  if (m && m->state == st)
    {
      job->measured = ps__measured_ref (m);
      job->options.timeline = &m->tl;
    }
  job->device = g_strdup (ps_session_get_device (self));
  job->path = g_steal_pointer (&path);
  g_task_set_task_data (task, job, (GDestroyNotify) export_job_free);
  g_task_run_in_thread (task, export_thread);
}

gboolean
ps_session_export_finish (PsSession *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
