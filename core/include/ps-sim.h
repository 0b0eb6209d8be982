/* ps-sim.h: a deterministic discrete-event simulator of a plan on a
 * modelled GPU.
 *
 * Semantics are CUDA's: each stream runs its steps in order; an
 * event_record completes when the work before it on its stream has; an
 * event_wait holds its stream until the most recent record of that event
 * issued before it has completed (a wait with no such record passes).  The
 * host issues the steps in plan order, spending host_launch_ns per launch
 * (event_record_ns per event call); work starts no earlier than its issue
 * plus launch_latency_ns, and dispatch_gap_ns after the previous work on
 * its stream.  A satisfied cross-stream wait adds event_wait_ns.
 *
 * Sharing: each part of the device (the SMs, the copy engine of each
 * direction, the peer link, the host callback thread) has a capacity of
 * one, handed out in the order work started, each piece taking the share
 * it requested (a kernel its fraction of the SMs, a copy or a callback the
 * whole engine or thread).  Work that gets less than it asked for runs
 * that much slower, and work that gets nothing waits: small kernels on
 * different streams run side by side, a kernel that fills the GPU slows or
 * holds back the kernels that come after it, copies in one direction queue
 * on their engine like CUDA's, and copies overlap with compute.  This is
 * how the hardware's block scheduler and DMA engines behave to first
 * order, and unlike even processor sharing it lets a copy -> compute ->
 * copy pipeline over several streams overlap.  Durations come
 * from the cost model (ps-cost.h). */
#ifndef PS_SIM_H
#define PS_SIM_H

#include "ps-cost.h"
#include "ps-device.h"
#include "ps-plan.h"
#include "ps-timeline.h"

typedef struct ps_sim {
  const ps_plan *plan;
  ps_device dev;
  /* Per step, from ps_cost_plan; a caller may change ns before
   * ps_sim_run to ask "what if this step were faster". */
  ps_cost *cost;
  /* Above 0: the run may stop as soon as its makespan is sure to be above
   * this (0 after ps_sim_init: never).  A part of the device gives out at
   * most its whole share, so the run cannot end before now plus the
   * share-time its work still needs on any one part (ps_cost_share_time);
   * once that passes stop_above (by more than rounding: a billionth),
   * ps_sim_run stops, gives it as the makespan and sets `stopped`.  For
   * callers that only need to know whether a plan beats a makespan (the
   * planner's search).  A run that records into a timeline, or of
   * measured durations, never stops. */
  double stop_above;
  bool stopped;

  /* Private: derived once from the plan, and scratch for runs. */
  uint32_t n_streams;
  uint32_t *wait_record; /* per step: the record a wait refers to, or PS_NONE */
  uint32_t *next_on_stream;
  double *submit;        /* host issue time per step */
  double *record_time;   /* per record step, < 0 until it completes */
  uint32_t *rec_span;    /* per record step: the last span before it */
  double *start;         /* per work step */
  double *ready;         /* per work step: when all but its resource let it start */
  uint8_t *bound;
  uint32_t *pred;
} ps_sim;

/* Prepares a simulation of p on d (costs computed with ps_cost_plan).
 * Returns PS_EINVAL when the plan is malformed (steps on streams >=
 * PS_MAX_STREAMS), PS_ENOMEM. */
int ps_sim_init (ps_sim *s, const ps_plan *p, const ps_device *d);
/* The same with the cost of every group of nodes given, by_group[g]
 * exactly as ps_cost_plan would compute a step of group g's nodes, and
 * the group of every node (node_group): for callers that simulate many
 * plans of one grouping and know the costs already (the planner).  A
 * step's cost is its first node's group's; steps without nodes cost
 * nothing. */
int ps_sim_init_groups (ps_sim *s, const ps_plan *p, const ps_device *d, const ps_cost *by_group,
                        const uint32_t *node_group);
void ps_sim_free (ps_sim *s);

/* Runs the simulation.  When tl is not NULL it must be freshly initialised
 * (ps_timeline_init with PS_TL_SIMULATED); it receives spans, stalls and
 * flows and is finished (ps_timeline_finish).  *makespan_ns (may be NULL)
 * receives the end of the last work, or, when the run stopped above
 * s->stop_above, the bound it stopped at. */
int ps_sim_run (ps_sim *s, ps_timeline *tl, double *makespan_ns);

/* One-call form: simulate p on d into tl. */
int ps_simulate (const ps_plan *p, const ps_device *d, ps_timeline *tl);

/* The plan's predicted run on its own device (p->device) into tl (freshly
 * initialised, as for ps_simulate): the planner's own simulation, moved
 * out of the plan (ps_plan.run) when it kept one, else simulated now.
 * Either way it is the run ps_simulate (p, &p->device, tl) gives. */
int ps_plan_take_run (ps_plan *p, ps_timeline *tl);

/* The plan's simulated makespan on its own device (p->device) into *ms:
 * the planner's (est_makespan_ns) when it simulated the plan, else
 * simulated now.  Either way it is the one ps_sim_run gives there. */
int ps_plan_makespan (const ps_plan *p, double *ms);

/* Makespan saved, against base_ns (the makespan of an unchanged run), if
 * the n given steps took `factor` of their modelled time: re-simulates
 * with that change (for "what would help"). */
int ps_sim_gain (ps_sim *s, const uint32_t *steps, uint32_t n, double factor, double base_ns,
                 double *saved_ns);

#endif
