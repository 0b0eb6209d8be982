/* ps-job.c: a piece of work on a second thread (ps-job.h). */
#include "ps-job.h"

#include <stddef.h>
#ifdef __linux__
#include <sys/resource.h>
#endif

static void *
job_main (void *arg)
{
  ps__job *j = arg;
  j->fn (j->arg);
  return NULL;
}

void
ps__job_start (ps__job *j, void (*fn) (void *arg), void *arg, bool wanted)
{
  j->fn = fn;
  j->arg = arg;
  j->pending = wanted;
  j->threaded = wanted && pthread_create (&j->thread, NULL, job_main, j) == 0;
}

bool
ps__job_finish (ps__job *j)
{
  if (!j->pending)
    return false;
  if (j->threaded)
    pthread_join (j->thread, NULL);
  else
    j->fn (j->arg);
  j->pending = j->threaded = false;
  return true;
}

bool
ps__job_drop (ps__job *j)
{
  bool ran = j->pending && j->threaded;
  if (ran)
    pthread_join (j->thread, NULL);
  j->pending = j->threaded = false;
  return ran;
}

void
ps__job_lower_priority (void)
{
#ifdef __linux__
  /* Linux keeps a nice value per thread, and who 0 is the calling one
   * (setpriority(2)); raising it needs no privilege.  A failure leaves the
   * thread as it was. */
  (void) setpriority (PRIO_PROCESS, 0, 19);
#endif
}
