/* ps-timing.c: stage timing (see ps-timing.h). */
#include "ps-timing.h"

#include <string.h>
#include <time.h>

double
ps_clock_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

void
ps_timing_reset (ps_timing *t)
{
  if (t)
    memset (t, 0, sizeof *t);
}

void
ps_timing_mark (ps_timing *t, const char *stage, double *since)
{
  double now = ps_clock_now ();
  for (int i = 0; t && i < t->n; i++)
    if (strcmp (t->stage[i], stage) == 0) {
      t->seconds[i] += now - *since;
      *since = now;
      return;
    }
  if (t && t->n < PS_TIMING_MAX) {
    t->stage[t->n] = stage;
    t->seconds[t->n] = now - *since;
    t->n++;
  }
  *since = now;
}
