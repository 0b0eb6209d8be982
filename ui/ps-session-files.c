/* ps-session-files.c: opening a file and comparing with another.  Files
 * are read one at a time, so that two large loads never hold their memory
 * together: an Open asked for while another file job runs cancels it (it
 * stops early, inside its read or parse, and its result is dropped) and
 * waits for it to end; a newer Open supersedes any still waiting, and a
 * newer Compare with… a Compare.  Each job owns its cancellable, so a job
 * that ends never cancels another. */
#include "ps-session-private.h"

typedef struct {
  PsJobKind kind; /* PS_JOB_LOAD or PS_JOB_COMPARE */
  GFile *file;
  GTask *outer;               /* answers the caller */
  GCancellable *cancellable;  /* the job's own, kept by the session */
  GCancellable *caller;       /* the caller's, which cancels ours, or NULL */
  gulong caller_handler;
  ps_plan_options options;    /* a Compare's */
  char *device;
  double shown;               /* the progress last posted */
} FileJob;

static void
file_job_free (FileJob *j)
{
  if (j->caller)
    {
      g_cancellable_disconnect (j->caller, j->caller_handler);
      g_object_unref (j->caller);
    }
  g_object_unref (j->file);
  g_clear_object (&j->outer);
  g_free (j->device);
  g_free (j);
}

/* The job is over, one way or another: the session lets go of its
 * cancellable. */
static void
file_job_end (PsSession *self, FileJob *j)
{
  ps__session_job_finished (self, j->kind, j->cancellable);
  file_job_free (j);
}

static void
answer_superseded (FileJob *j)
{
  g_task_return_new_error (j->outer, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                           j->kind == PS_JOB_LOAD ? "Another file was opened"
                                                  : "Another file was compared with");
}

/* A load's progress, from its worker thread, shown once it moves a
 * percent (ps_diag's hook through ps__job_load). */
static void
file_progress (gpointer ctx, double fraction)
{
  FileJob *j = ctx;
  if (fraction < j->shown + 0.01 && fraction < 1)
    return;
  j->shown = fraction;
  ps__session_post_progress (g_task_get_source_object (j->outer), fraction);
}

static void
file_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  FileJob *j = data;
  GError *error = NULL;
  if (j->kind == PS_JOB_LOAD)
    {
      PsDoc *doc = ps__job_load (j->file, cancellable, file_progress, j, &error);
      if (doc)
        g_task_return_pointer (task, doc, (GDestroyNotify) ps__doc_unref);
      else
        g_task_return_error (task, error);
    }
  else
    {
      PsPlanState *st = ps__job_compare (j->file, &j->options, j->device, cancellable,
                                         file_progress, j, &error);
      if (st)
        g_task_return_pointer (task, st, (GDestroyNotify) ps__state_unref);
      else
        g_task_return_error (task, error);
    }
}

static void start_next (PsSession *self);

static void
file_done (GObject *source, GAsyncResult *result, gpointer data)
{
  PsSession *self = PS_SESSION (source);
  FileJob *j = data;
  GError *error = NULL;
  gpointer out = g_task_propagate_pointer (G_TASK (result), &error);
  self->file_job = NULL;
  ps__session_busy_end (self);
  /* A job cancelled even after its work was done (superseded, or a new
   * document came first) answers G_IO_ERROR_CANCELLED here: GTask drops
   * its result. */
  if (out && j->kind == PS_JOB_LOAD)
    {
      ps__session_set_document (self, out);
      g_task_return_boolean (j->outer, TRUE);
    }
  else if (out)
    {
      ps__session_set_other_baseline (self, out);
      g_task_return_boolean (j->outer, TRUE);
    }
  else
    {
      g_task_return_error (j->outer, error);
    }
  file_job_end (self, j);
  start_next (self);
}

/* Starts the first waiting job that is still wanted. */
static void
start_next (PsSession *self)
{
  FileJob *j;
  while (!self->file_job && (j = g_queue_pop_head (&self->file_waiting)))
    {
      if (g_cancellable_is_cancelled (j->cancellable))
        {
          g_task_return_new_error (j->outer, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                   "Operation was cancelled");
          file_job_end (self, j);
          continue;
        }
      self->file_job = j;
      ps__session_busy_begin (self, j->kind == PS_JOB_LOAD ? "Loading" : "Comparing");
      g_autoptr (GTask) task = g_task_new (self, j->cancellable, file_done, j);
      g_task_set_source_tag (task, start_next);
      g_task_set_task_data (task, j, NULL);
      g_task_run_in_thread (task, file_thread);
    }
}

static void
cancel_other (GCancellable *caller, gpointer ours)
{
  g_cancellable_cancel (ours);
}

/* Queues a file job: an Open supersedes every file job, a Compare every
 * Compare; the one running, if superseded, is cancelled and ends soon. */
static void
submit (PsSession *self, FileJob *j, GCancellable *caller)
{
  j->cancellable = ps__session_job_start (self, j->kind);
  if (caller)
    {
      j->caller = g_object_ref (caller);
      j->caller_handler = g_cancellable_connect (caller, G_CALLBACK (cancel_other),
                                                 j->cancellable, NULL);
    }
  for (GList *l = self->file_waiting.head; l;)
    {
      FileJob *w = l->data;
      GList *next = l->next;
      if (j->kind == PS_JOB_LOAD || w->kind == PS_JOB_COMPARE)
        {
          g_queue_delete_link (&self->file_waiting, l);
          answer_superseded (w);
          file_job_end (self, w);
        }
      l = next;
    }
  FileJob *running = self->file_job;
  if (running && (j->kind == PS_JOB_LOAD || running->kind == PS_JOB_COMPARE))
    g_cancellable_cancel (running->cancellable);
  g_queue_push_tail (&self->file_waiting, j);
  start_next (self);
}

void
ps_session_load_async (PsSession *self, GFile *file, GCancellable *cancellable,
                       GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (PS_IS_SESSION (self));
  g_return_if_fail (G_IS_FILE (file));
  FileJob *j = g_new0 (FileJob, 1);
  j->kind = PS_JOB_LOAD;
  j->file = g_object_ref (file);
  j->outer = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (j->outer, ps_session_load_async);
  submit (self, j, cancellable);
}

gboolean
ps_session_load_finish (PsSession *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

void
ps_session_compare_async (PsSession *self, GFile *file, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (PS_IS_SESSION (self));
  g_return_if_fail (G_IS_FILE (file));
  FileJob *j = g_new0 (FileJob, 1);
  j->kind = PS_JOB_COMPARE;
  j->file = g_object_ref (file);
  j->outer = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (j->outer, ps_session_compare_async);
  /* Planned with the options of the moment it was asked for. */
  j->options = self->options;
  j->device = g_strdup (self->device);
  submit (self, j, cancellable);
}

gboolean
ps_session_compare_finish (PsSession *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
