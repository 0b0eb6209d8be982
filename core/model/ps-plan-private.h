/* ps-plan-private.h: helpers for code that builds a ps_plan.
 *
 * Every planner (the simple one of planner/ps-plan-simple.c, the full one
 * with fusion, stream assignment, minimal sync and pool packing) builds
 * its plan with these, so that plans come out the same way: steps appended in issue
 * order, node_step kept in step, function names copied into the plan's
 * string pool, arrays grown by doubling.  A typical builder:
 *
 *   ps__plan_begin (p, g, o);                 // arrays sized for g
 *   for each step in issue order:
 *     ps__plan_add_wait / ps__plan_add_node_step / ps__plan_add_step /
 *     ps__plan_add_record
 *   ps__plan_pool_end_to_end (p, diag) or own offsets
 *   ps__plan_finish (p);                      // counts
 *
 * and ps_plan_free on any failure.  Not installed; core/ only. */
#ifndef PS_PLAN_PRIVATE_H
#define PS_PLAN_PRIVATE_H

#include <stdatomic.h>

#include "ps-plan.h"
#include "ps-timeline.h"
#include "util/ps-job.h"

/* Pool offsets are multiples of this. */
#define PS_POOL_ALIGN 256u

/* Empties *p and prepares it for g and o: graph and options set, node_step
 * filled with PS_NONE, offsets with UINT64_MAX, n_events = g->n_events (user
 * events keep their graph ids; planner events are numbered after them),
 * room reserved for one step per node. */
int ps__plan_begin (ps_plan *p, const ps_graph *g, const ps_plan_options *o);

/* Copies s into the plan's string pool; *off receives its offset. */
int ps__plan_add_string (ps_plan *p, const char *s, uint32_t *off);

static inline const char *
ps__plan_str (const ps_plan *p, uint32_t off)
{
  return off == PS_NONE || off >= p->strings_len ? NULL : p->strings + off;
}

/* Appends a step with the given fields (synthetic = 0) and nodes; sets
 * node_step of each node.  `function` is a plan string offset or PS_NONE.
 * *step_out (may be NULL) receives the step's index. */
int ps__plan_add_step (ps_plan *p, ps_op op, uint32_t stream, const uint32_t *nodes,
                       uint32_t n_nodes, uint32_t event, uint32_t group, uint32_t function,
                       uint32_t *step_out);

/* Appends the step of a single node: its op, the user event id for an
 * event_record/event_wait node, the kernel function name for a kernel. */
int ps__plan_add_node_step (ps_plan *p, uint32_t node, uint32_t stream, uint32_t *step_out);

/* A fresh planner event id (n_events grows by one). */
uint32_t ps__plan_new_event (ps_plan *p);

/* Appends a planner-inserted (synthetic) event_record or event_wait step.
 * Each added wait counts as one record/wait pair in n_event_pairs; it says
 * why it is there and, for an ORDER or POOL wait, the last node on the
 * recorded stream the waiting work does depend on (or PS_NONE). */
int ps__plan_add_record (ps_plan *p, uint32_t stream, uint32_t event, uint32_t *step_out);
int ps__plan_add_wait (ps_plan *p, uint32_t stream, uint32_t event, ps_wait_reason reason,
                       uint32_t dep_node, uint32_t *step_out);

/* Lays every pooled (non-external) buffer end to end at PS_POOL_ALIGN
 * aligned offsets and sets pool_bytes.  PS_ELIMIT with a message in diag
 * when the pool would not fit in 64 bits. */
int ps__plan_pool_end_to_end (ps_plan *p, ps_diag *diag);

/* Fills the counts a plan reports: streams_used, kernels_before (kernel
 * nodes), kernels_after (kernel steps).  (The pool's peak is the
 * planner's to compute, with ps-pool-peak.h.) */
int ps__plan_finish (ps_plan *p);
/* The same, with the graph's kernel nodes counted by the caller
 * (ps__graph_kernel_nodes): the planner counts them once for the plans
 * of every stream count its search emits. */
void ps__plan_count (ps_plan *p, uint32_t kernel_nodes);

/* Checks 1 <= o->streams <= PS_MAX_STREAMS (PS_EUSAGE) and that every pin
 * of g is below o->streams (PS_EPIN, naming the first offending node at its
 * position).  Messages go to diag. */
int ps__plan_check_options (const ps_graph *g, const ps_plan_options *o, ps_diag *diag);
/* A measured graph (a trace) whose recorded streams do not fit in
 * `streams`: planned without its pins, their order kept by its edges. */
bool ps__plan_unpinned (const ps_graph *g, uint32_t streams);

/* A plan's exact pool peak sought on a second thread
 * (ps__peak_seek_start in ps-pool-peak.c): the plan's own (ps_plan.peak,
 * ps__plan_peak_start), or the plan output's while it writes the steps.
 * The thread reads `snap`, a copy of the plan's fields taken once its
 * steps were final (their arrays are the plan's: only the pool's offsets
 * change after, and the peak does not read them). */
struct ps__plan_peak {
  ps_plan snap;
  atomic_bool cancel;
  int rc; /* 0, PS_ECANCELED, or what ps_pool_peak_compute returns */
  uint64_t bytes;
  uint32_t n_buffers;
  bool exact;
  bool low; /* at the lowest priority: the planner's */
  ps__job job;
};

/* Tells a peak no longer wanted to give up at its next phase, without
 * waiting for it (ps__plan_peak_stop, or ps_plan_free with the plan's,
 * waits). */
static inline void
ps__plan_peak_cancel (struct ps__plan_peak *j)
{
  atomic_store (&j->cancel, true);
}

/* Stops a peak no longer wanted: it gives up at its next phase, and is
 * waited for (ps_plan_free does this with the plan's). */
static inline void
ps__plan_peak_stop (struct ps__plan_peak *j)
{
  atomic_store (&j->cancel, true);
  ps__job_drop (&j->job);
}

/* Keeps *tl, a simulation of p's steps on p->device exactly as ps_simulate
 * makes it, as the plan's run (ps_plan.run), taking what it owns (*tl is
 * left empty).  Without memory for it the run is let go (*tl freed): the
 * plan has none, and its views simulate it. */
void ps__plan_keep_run (ps_plan *p, ps_timeline *tl);

/* The plan's kept run, borrowed: *view shares its arrays (not to be freed,
 * valid while p is unchanged), its plan pointer set to p.  False when the
 * plan keeps none. */
static inline bool
ps__plan_run_view (const ps_plan *p, ps_timeline *view)
{
  if (!p->run)
    return false;
  *view = *p->run;
  view->plan = p;
  return true;
}

#endif
