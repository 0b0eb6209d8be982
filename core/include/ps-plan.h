/* ps-plan.h: an execution plan: steps in issue order, each on one stream,
 * with the event record/wait steps that order work across streams, and the
 * pool offset of every non-external buffer.  See spec/cli.md for the plan
 * document and its execution semantics (CUDA's). */
#ifndef PS_PLAN_H
#define PS_PLAN_H

#include "ps-device.h"
#include "ps-graph.h"
#include "ps-timing.h"

#define PS_MAX_STREAMS 64

typedef struct ps_plan_options {
  uint32_t streams; /* maximum streams, 1..PS_MAX_STREAMS; default 4 */
  /* Plan on the fewest streams, up to `streams`, whose plan simulates
   * within 1% of the fastest plan on any of those counts (the plan says
   * how it chose: auto_streams_max, auto_best_ns).  Default false. */
  bool streams_auto;
  bool fusion;      /* default true */
  /* With fusion: keep every legal fused group.  Default false (fusion
   * auto): groups the simulator finds the plan faster without are kept
   * back, and the plan is never slower than the plan without fusion
   * (for graphs the planner's search takes, see ps-planner.c). */
  bool fusion_all;
  /* The device whose cost model (ps-cost.h) the planner schedules for;
   * NULL (the default): the graph's "device", else PS_DEVICE_DEFAULT, as
   * ps_device_find finds them.  ps_plan_build copies the profile into the
   * plan's `device`; the plan's options keep this pointer as given. */
  const ps_device *device;
  /* The most bytes the memory pool may take; 0 (the default): no budget.
   * The pool never adds waits of its own, so a plan over the budget
   * trades time for memory by streams: it moves to the fastest plan on
   * fewer streams whose pool fits (fewer streams order more work, so more
   * buffers may share bytes), and the plan records what it gave up
   * (budget_*).  When no count fits, ps_plan_build fails with PS_ELIMIT
   * and says the smallest pool it found. */
  uint64_t memory_budget;
  /* For callers that show the pool against its exact peak
   * (ps-pool-peak.h): a large plan (262,144 buffers or more) that
   * ps_plan_build is going to return has its peak sought from the moment
   * its steps are final, on a second thread, beside the passes that
   * follow; ps_plan_find_peak then waits for it.  Changes nothing in the
   * plan.  Default false. */
  bool find_peak;
} ps_plan_options;

void ps_plan_options_init (ps_plan_options *o);

/* Why a wait step is in the plan: ENUM and the name the plan document
 * gives it ("why").  NONE: not a wait.  USER: a user's event_wait node.
 * DEPENDENCY: an edge of the graph crosses streams.  ORDER: no edge; the
 * streams pass keeps the waiting work from taking the SMs or a copy
 * engine ahead of the recorded work (resource order).  The memory pool
 * adds no waits of its own: it only shares bytes between buffers whose
 * uses these waits already order (the diagnosis says when it relies on
 * an ORDER wait). */
#define PS_WAIT_MAP(X)           \
  X (NONE, "none")               \
  X (USER, "user")               \
  X (DEPENDENCY, "dependency")   \
  X (ORDER, "order")

typedef enum ps_wait_reason {
#define PS__WAIT_ENUM(e, name) PS_WAIT_##e,
  PS_WAIT_MAP (PS__WAIT_ENUM)
#undef PS__WAIT_ENUM
  PS_WAIT__COUNT
} ps_wait_reason;

const char *ps_wait_reason_name (ps_wait_reason r);

typedef struct ps_step {
  uint8_t op;        /* ps_op; PS_OP_EVENT_RECORD / _WAIT also for planner events */
  uint8_t synthetic; /* 1: an event step the planner inserted (no nodes) */
  uint8_t wait;      /* ps_wait_reason of an event_wait step */
  uint16_t stream;
  uint32_t nodes_begin, nodes_count; /* into plan->step_nodes */
  uint32_t event;    /* plan event id for record/wait steps, else PS_NONE */
  uint32_t group;    /* fused group id when nodes_count > 1, else PS_NONE */
  uint32_t function; /* plan string offset of the kernel function, or PS_NONE */
  /* A PS_WAIT_ORDER wait: the last node on the recorded
   * stream that the waiting work does depend on, or PS_NONE (none). */
  uint32_t dep_node;
} ps_step;

typedef struct ps_plan {
  const ps_graph *graph;
  ps_plan_options options;

  uint32_t n_steps;
  ps_step *steps;
  uint32_t *step_nodes; /* node ids, grouped per step */
  uint32_t *node_step;  /* step of each node */

  uint32_t streams_used; /* highest stream of any step + 1: the streams to create */
  uint32_t n_events;    /* distinct event ids: user events first, then planner events */
  uint32_t n_event_pairs; /* planner-inserted record/wait pairs */
  uint32_t kernels_before, kernels_after;

  uint64_t *offsets;    /* per buffer: pool offset, UINT64_MAX when external */
  uint64_t pool_bytes;
  /* The exact peak of simultaneously live pooled bytes under the plan's
   * happens-before order, once ps_plan_find_peak (ps-pool-peak.h) has
   * found it (pool_peak_known): no valid pool for these steps is smaller.
   * pool_peak_exact is false only for plans too large to search, where it
   * is a weaker lower bound.  ps_plan_build leaves it unknown: it costs
   * more than the pool itself, so it is found where it is shown (for a
   * large plan, sought since its steps were final: `peak` below). */
  uint64_t pool_peak;
  bool pool_peak_exact, pool_peak_known;
  double est_makespan_ns;    /* on `device`: simulated, or the schedule's estimate */
  /* Fusion auto: fused groups the plan leaves unfused because it simulates
   * faster without them. */
  uint32_t fusion_kept_back;
  /* --streams auto: the most streams it weighed (0: not auto) and the
   * fastest plan it found on any count up to that. */
  uint32_t auto_streams_max;
  double auto_best_ns;
  /* With a memory budget the plan was over on its stream count: that
   * count, its pool and its simulated makespan (budget_streams_from 0:
   * the plan was within the budget as planned). */
  uint32_t budget_streams_from;
  uint64_t budget_pool_from;
  double budget_makespan_from_ns;
  bool est_simulated;        /* est_makespan_ns is this plan's simulated makespan (ps-sim.h) */
  ps_device device;          /* the profile the plan was scheduled for */

  char *strings;        /* fused kernel names etc. */
  uint32_t strings_len, strings_cap;

  ps_timing timing;      /* wall time of each pass of ps_plan_build, for --timing */

  /* The planner's own simulation of these steps on `device`, the one its
   * est_makespan_ns comes from, kept so that no view simulates the plan
   * again: taken with ps_plan_take_run (ps-sim.h), read by the plan's
   * outputs.  NULL when the planner did not simulate it (or it was
   * taken).  Private. */
  struct ps_timeline *run;
  /* The exact pool peak being sought on a second thread since the
   * planner fixed the steps (large plans the planner expects to keep; see
   * ps-pool-peak.h): ps_plan_find_peak and ps_pool_peak_of wait for it,
   * ps_plan_free stops it.  NULL when none is.  Private. */
  struct ps__plan_peak *peak;

  uint32_t n_step_nodes; /* length of step_nodes */
  /* Private to the plan builders (core/ps-plan-private.h): capacities. */
  uint32_t steps_cap, step_nodes_cap;
} ps_plan;

/* Compiles g into a plan.  *p need not be initialised; on failure it is
 * left empty (safe to ps_plan_free) and diag says why (PS_EPIN names the
 * pinned node).  The plan keeps a pointer to g, which must outlive it. */
int ps_plan_build (ps_plan *p, const ps_graph *g, const ps_plan_options *o, ps_diag *diag);
/* Frees what the plan owns and zeroes it; safe on a zeroed plan. */
void ps_plan_free (ps_plan *p);


#endif
