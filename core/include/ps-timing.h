/* ps-timing.h: wall time of named stages, for --timing.
 *
 * A function that runs stages (loading, the planner's passes) fills a
 * ps_timing its caller owns, so that plans built on several threads at
 * once each keep their own figures:
 *
 *   double t = ps_clock_now ();
 *   ... stage ...;  ps_timing_mark (timing, "fuse", &t);
 *
 * records now - t under the stage name (added to what the stage has
 * when it ran before) and sets t to now.  Stage names must be string
 * literals. */
#ifndef PS_TIMING_H
#define PS_TIMING_H

#define PS_TIMING_MAX 16

typedef struct ps_timing {
  const char *stage[PS_TIMING_MAX];
  double seconds[PS_TIMING_MAX];
  int n;
} ps_timing;

/* Seconds on a monotonic clock. */
double ps_clock_now (void);
/* Empties t. */
void ps_timing_reset (ps_timing *t);
/* Does nothing but move *since when t is NULL or full. */
void ps_timing_mark (ps_timing *t, const char *stage, double *since);

#endif
