/* ps-job.h: one piece of work run on a second thread while the caller
 * goes on, or, when no thread can start, in line when its result is
 * needed.  Every job is joined (ps__job_finish or ps__job_drop) before
 * the function that holds it returns, so no thread outlives the call
 * that made it, with one exception: the search for a plan's pool peak
 * that the planner starts (ps_plan.peak, ps-pool-peak.h), which the plan
 * owns and which is joined when the peak is asked for or the plan freed.
 * Not installed; core/ only. */
#ifndef PS_JOB_H
#define PS_JOB_H

#include <pthread.h>
#include <stdbool.h>

typedef struct ps__job {
  void (*fn) (void *arg);
  void *arg;
  bool pending; /* started and not yet finished or dropped */
  bool threaded;
  pthread_t thread;
} ps__job;

/* Starts fn (arg) on a second thread when `wanted`, else only records
 * that there is no job (finish and drop are then no-ops). */
void ps__job_start (ps__job *j, void (*fn) (void *arg), void *arg, bool wanted);
/* Called on a job's thread: its work may wait while the caller's threads
 * have work (on Linux, the thread's nice value is raised to 19; elsewhere
 * nothing, as the nice value there is the whole process's).  For work
 * whose result is wanted late and that would otherwise take a core from
 * work the caller waits for first. */
void ps__job_lower_priority (void);
/* Whether j was wanted and is not finished or dropped yet. */
static inline bool
ps__job_pending (const ps__job *j)
{
  return j->pending;
}
/* The work done: waits for the thread, or runs fn now when no thread
 * started.  Returns false when there was no job. */
bool ps__job_finish (ps__job *j);
/* The work no longer wanted: waits for a thread that runs it and returns
 * true when fn ran (its result is the caller's to release), false when
 * it did not (it is not run now). */
bool ps__job_drop (ps__job *j);

#endif
