/* ps-measure.h: from measured times of plan steps to a measured timeline.
 *
 * A run records, per iteration, when each plan step's work started and
 * ended (CUPTI activity records, or the host for callbacks), relative to
 * the moment the host began issuing that iteration.  The timeline has one
 * span per non-event step at the median start and the median duration
 * over the iterations that measured it (a span never starts before the
 * previous span on its stream ends: a stream runs in order).  Steps that
 * run nothing on the GPU (barriers, conditionals, work of a branch the
 * graph's `assume` excludes) get an empty span where their stream was.
 * Stalls and flows follow the plan: an event_wait stalls its stream from
 * the end of its previous work until the end of the work the matching
 * record covered, when that is later.  Needs no CUDA. */
#ifndef PS_MEASURE_H
#define PS_MEASURE_H

#include "ps-plan.h"
#include "ps-timeline.h"

typedef struct ps_step_times {
  uint32_t n_steps, n_iterations;
  double *start, *end; /* [iteration * n_steps + step], ns; NAN when not measured */
} ps_step_times;

int ps_step_times_init (ps_step_times *t, uint32_t n_steps, uint32_t n_iterations);
void ps_step_times_free (ps_step_times *t);
/* Widens the interval of (iteration, step) to cover [start, end]
 * (several records of one step: fused launches run as parts, host work). */
void ps_step_times_add (ps_step_times *t, uint32_t iteration, uint32_t step, double start,
                        double end);

/* Builds the measured timeline of p into tl (initialised here with source
 * PS_TL_MEASURED, finished).  step_ns (n_steps entries, may be NULL)
 * receives each step's median duration, or -1.  gpu_name goes into the
 * timeline's device. */
int ps_measured_timeline (const ps_plan *p, const ps_step_times *t, const char *gpu_name,
                          ps_timeline *tl, double *step_ns);

/* The median of n values (sorts them); NAN when n is 0. */
double ps_median (double *v, uint32_t n);

#endif
