/* ps-pool-peak.h: the exact peak of a plan's memory pool, the figure every
 * view sets the pool against.
 *
 * Two pooled buffers may share bytes only when every use of one
 * happens-before every use of the other (stream order and events, as the
 * verifier reads them).  That relation orders the buffers partially; a set
 * of buffers none of which precedes another (an antichain) must lie at
 * pairwise disjoint bytes in any valid pool.  The peak is the heaviest such
 * set, counted in bytes: no pool for this plan's order can be smaller, and
 * it is what a pool could reach if buffers could be split.  It is found as
 * a minimum flow (Dilworth's theorem, weighted), whose minimum cut is the
 * antichain itself, so the figure comes with the buffers that make it,
 * and the two are checked against each other before it is given.  A
 * pooled buffer that nobody uses still needs its own bytes: the peak is at
 * least its size. */
#ifndef PS_POOL_PEAK_H
#define PS_POOL_PEAK_H

#include "ps-plan.h"

typedef struct ps_pool_peak {
  uint64_t bytes;     /* the peak */
  uint32_t n_buffers; /* pooled buffers in the heaviest antichain */
  /* False only when the plan is too large to search (see below): then
   * `bytes` is the weaker bound of buffers live over their span in issue
   * order, still a lower bound on any pool. */
  bool exact;
} ps_pool_peak;

/* Computes the peak of p (whose graph must be set).  When live is not
 * NULL it receives, per buffer of the graph, 1 for the buffers of the
 * heaviest antichain and 0 for the others.  0, PS_ENOMEM or PS_EINVAL (a
 * plan with no graph).
 *
 * Cost: the happens-before order is represented by a graph of stream
 * states (one per step and per wait that teaches its stream something),
 * each buffer joined to the state where it is first used and to the
 * earliest state on each stream after all its uses: O(steps + buffers x
 * streams) arcs, built in O(steps + accesses + streams^2 x (buffers +
 * waits)).  A greedy flow in issue order starts within a fraction of a
 * percent of the minimum on generated graphs (often at it); the rest is
 * found by blocking flows along the shortest augmenting paths, counted in
 * flow reductions: O(phases x arcs), where phases is the longest chain of
 * re-routings needed (0 to 4 on generated graphs), plus one search that
 * proves no path is left; the first level of each search, most of the
 * network, is known from the streams' frontiers without walking it, and
 * release arcs that free arcs imply are left out.  Measured on generated
 * layered graphs: 0.005 s at 10k nodes, 0.04 s at 100k, 0.5 s at 1M (the
 * order 0.21 s, the network 0.07 s, the greedy start 0.16 s, its
 * adjacency 0.1 s, then three phases, 0.04 s in all); fanout 0.25 s and
 * transformer 0.15 s at 1M.  Plans
 * with more than PS_POOL_PEAK_MAX_ARCS arcs get the issue-order bound
 * instead (exact = false). */
#define PS_POOL_PEAK_MAX_ARCS ((uint64_t) 1 << 30)
int ps_pool_peak_compute (const ps_plan *p, ps_pool_peak *out, uint8_t *live);

/* Finds p's peak once and keeps it in the plan (pool_peak, _exact,
 * _known): what every caller that shows the pool does first.  0 or the
 * codes of ps_pool_peak_compute.  A peak the planner started seeking
 * (below) is waited for. */
int ps_plan_find_peak (ps_plan *p);
/* The peak kept in p, or the one being sought for it (waited for), or,
 * when ps_plan_find_peak has not run, found now. */
int ps_pool_peak_of (const ps_plan *p, ps_pool_peak *out);

/* Private (the planner and the plan's outputs).  ps__peak_seek_start
 * starts seeking p's peak on a second thread into j (struct
 * ps__plan_peak, model/ps-plan-private.h), false when no thread starts
 * (j then holds nothing); ps__peak_seek_wait waits for it and gives what
 * ps_pool_peak_compute would (PS_ECANCELED once stopped:
 * ps__plan_peak_stop).  Plans with at least PS__PEAK_THREAD_MIN buffers
 * have their peak sought so by the output while it writes the steps;
 * plans with at least
 * ps__peak_early_min buffers, asked for it (ps_plan_options.find_peak),
 * by the planner from the moment their steps are final, when it expects
 * to keep the plan (ps__plan_peak_start: ps_plan.peak, a job that
 * outlives ps_plan_build).  At 1M nodes the peak takes about half a
 * second, which then runs beside the memory pass and the writing of the
 * plan, at the lowest priority (ps__job_lower_priority, `low`: it takes
 * the cores the planner leaves).  The output's own search runs at the
 * priority of the work beside it, which the summary waits for as much
 * (1M-node fanout: output 0.374 -> 0.312 s; the planner's at that
 * priority took the 1M-node layered plan's memory pass from 0.31 to
 * 0.42 s, and the whole run no faster);
 * below 262,144 buffers it takes under 0.2 s, which the writing hides,
 * and seeking it early would only hold its memory beside the planner's
 * (100k-node layered: 37 MiB more for no time).  ps__plan_peak_start
 * (min_buffers: ps__peak_early_min, or less for the memory pass, which
 * may weigh the pool against the peak) returns whether it started (not
 * when the plan has fewer buffers, its peak known or being sought, or no
 * thread starts). */
#define PS__PEAK_THREAD_MIN 50000u
extern uint32_t ps__peak_early_min; /* 262,144; tests lower it */
/* Whether the minimum flow finds its first level from the network's
 * shape instead of walking it (ps-pool-peak.c `lengths`; true), and how
 * many of its phases found a path (for tests). */
extern bool ps__peak_level_one_implicit;
extern uint64_t ps__peak_phases;
/* Whether the search stores every node's adjacency list instead of the
 * states' alone (ps-pool-peak.c build_adjacency; false: for tests). */
extern bool ps__peak_adjacency_whole;
struct ps__plan_peak;
bool ps__peak_seek_start (struct ps__plan_peak *j, const ps_plan *p, bool low);
int ps__peak_seek_wait (struct ps__plan_peak *j, ps_pool_peak *out);
bool ps__plan_peak_start (ps_plan *p, uint32_t min_buffers);
/* Stops and lets go the plan's own (ps_plan.peak, which must be set). */
void ps__plan_peak_drop (ps_plan *p);

/* The pool against its peak: pool_bytes / peak (1 when both are 0), and
 * that figure in words, for every view that shows the pool: "96 MiB,
 * 1.20x the peak of 80.1 MiB live at once" ("a lower bound of" when the
 * peak is not exact).  The text fits in PS_POOL_TEXT_MAX bytes. */
double ps_pool_ratio (const ps_plan *p, const ps_pool_peak *pk);
#define PS_POOL_TEXT_MAX 128
const char *ps_pool_text (const ps_plan *p, const ps_pool_peak *pk, char *buf, size_t cap);

#endif
