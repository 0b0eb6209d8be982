/* ps-planner-private.h: the compile pipeline of ps_plan_build
 * (ps-planner.c) and its passes.
 *
 * The passes share one ps__planner context of dense arrays:
 *
 *   analyse  (ps-planner.c)   a topological order;
 *   fuse     (ps-fuse.c)      convex element-wise groups, contracted into a
 *                             graph of groups with deduplicated CSR edges,
 *                             each group's duration and resource on the
 *                             device, and its upward rank;
 *   streams  (ps-search.c)    the schedule of the groups on at most
 *                             options.streams streams, pins honoured: for
 *                             graphs that are not too large, candidates of
 *                             several generators (list schedules,
 *                             ps-schedule.c; HEFT and round-robin,
 *                             ps-baseline.c) on every stream count,
 *                             simulated, the fastest kept and, on small
 *                             graphs, improved move by move;
 *   sync     (ps-sync.c)      the minimal event set by vector clocks, and
 *                             the plan's steps in issue order;
 *   memory   (ps-pool.c)      pool offsets that share bytes only across
 *                             happens-before (no waits added).
 *
 * Every pass is O((V + E) log V) or better (the streams pass times the
 * streams; the search a bounded number of times per stream count, on
 * graphs of at most PS__SEARCH_MAX_GROUPS groups).  ps-planner.c also
 * weighs whole plans against each other (fusion auto, --streams auto).
 * Not installed; core/ only. */
#ifndef PS_PLANNER_PRIVATE_H
#define PS_PLANNER_PRIVATE_H

#include <stdatomic.h>

#include "model/ps-plan-private.h"
#include "ps-cost.h"
#include "ps-timeline.h"

/* Fusion limits: a group holds at most this many kernels, and a merge
 * whose members have more edges than PS__FUSE_EDGE_BUDGET in all is not
 * attempted (a conservative refusal that bounds the work per node). */
#define PS__FUSE_MAX_GROUP 16u
#define PS__FUSE_EDGE_BUDGET 4096u
/* Fused group names list at most this many distinct function names, each
 * cut to PS__FUSE_NAME_PART bytes. */
#define PS__FUSE_NAME_PARTS 3u
#define PS__FUSE_NAME_PART 32u

/* Durations and resources come from the device cost model (ps-cost.h),
 * the same one the simulator uses, and the streams pass models the
 * simulator's timing rules (ps-sim.h): host issue time, launch latency,
 * the gap between work on one stream, event latencies, and first-come
 * sharing of the SMs, each copy direction's engine and the host thread. */

/* Variants of the list schedule (ps-schedule.c).  `key`: the priority
 * of a ready group: its upward rank alone (critical work first, as HEFT
 * ranks it), or the blend of its latest start with program order that
 * keeps buffers short-lived (priorities()).  `order`: what a group does
 * that would reach a busy resource before work placed earlier: nothing
 * (it goes first, as the hardware lets it), or wait for the last work on
 * the resource when that work is no longer than the group (shortest
 * first).  `rank`: the makespan the blended priorities rank against: the
 * lower bound, or the makespan of a first pass (which trusts the critical
 * path less and program order more when the resources stretch the
 * schedule). */
enum { PS__KEY_RANK, PS__KEY_BLEND };
enum { PS__ORDER_NONE, PS__ORDER_SHORTER };
enum { PS__RANK_BOUND, PS__RANK_PASS };
typedef struct ps__planner_variant {
  uint8_t key, order, rank;
  /* Serial list scheduling by priority alone, without resource profiles
   * or time order: the device's latencies but no sharing. */
  uint8_t untimed;
  uint16_t streams; /* streams to use, <= options.streams; 0: all */
} ps__planner_variant;

/* The search (ps-search.c): graphs of at most PS__SEARCH_MAX_GROUPS groups
 * get schedules from several generators (list schedules by rank and by
 * the blend, HEFT, round-robin) on every stream count from the pins' need
 * up to options.streams, each simulated (ps-sim.h), and the fastest is
 * kept; small ones are then improved move by move.  What a count tries
 * never depends on the counts above it, so that a plan for more streams
 * has every plan for fewer to choose from and is never slower.  Graphs
 * of up to ps__sim_max_groups groups (262,144; tests lower it) get three
 * schedules per count (the blend's list schedule, HEFT, round-robin), each
 * simulated, the fastest kept (the same promise, and fusion auto weighs
 * the fused plan against the unfused one); larger graphs get the blend's
 * list schedule on each count from the most down, each simulated, until
 * a count cannot beat the fastest (the same promise, but for HEFT and
 * round-robin), and their final run is made beside the memory pass. */
#define PS__SEARCH_MAX_GROUPS 32768u
extern uint32_t ps__sim_max_groups;
/* Graphs of at least this many groups (2,048; tests change it) that the
 * local search leaves alone have their candidates tried two at a time,
 * on two threads (ps-search.c); ps__search_pairs_taken counts the pairs
 * (tests read it). */
extern uint32_t ps__search_pair_groups;
extern atomic_size_t ps__search_pairs_taken;
/* The candidates the search synced and simulated (tests read it). */
extern atomic_size_t ps__search_simulated;
/* The last counts search_down left running (ps__planner_search_settle),
 * and of those, the ones that won (the passes after the search made
 * again); tests set ps__search_leave_always to leave one even where it
 * likely ties the fastest plan and wins. */
extern atomic_size_t ps__search_tails_left, ps__search_tails_won;
/* The plans that kept the run the search recorded (ps__planner.want_run)
 * instead of simulating it again. */
extern atomic_size_t ps__search_runs_kept;
/* The candidates whose simulation stopped once they could no longer beat
 * the fastest (ps_sim.stop_above; tests read it), and, set by tests, no
 * simulation stops. */
extern atomic_size_t ps__search_stopped;
extern bool ps__search_never_stop;
/* The searches that simulated a candidate first for ps__planner.probed
 * (tests read it), and, set by tests, none does (the search then tells
 * INFINITY). */
extern atomic_size_t ps__search_probes;
extern bool ps__search_no_probe;
/* The plans without fusion made beside the fused plan that were stopped
 * when its search first told how fast it will be (ps-planner.c's
 * ahead_probed; tests read it). */
extern atomic_size_t ps__ahead_probe_stops;
/* The deferred plans without fusion started as the fused plan's search
 * paired its counts (ps-planner.c's ahead_paired), and those of them
 * stopped when the fused plan turned out faster than their least time
 * (tests read both); set by tests, none is started so. */
extern atomic_size_t ps__ahead_paired_starts, ps__ahead_paired_stops;
extern bool ps__ahead_no_paired;
/* The memory passes that took the lists of pooled buffers a pair's
 * second thread made (ps__planner.acc_off; tests read it). */
extern atomic_size_t ps__pool_accesses_beside;
/* Memory passes whose pool was at the issue-order bound, so the exact
 * peak was known without its search (for tests). */
extern atomic_size_t ps__pool_peak_at_bound;
extern bool ps__search_leave_always;
/* A ready queue of the list schedule holding this many groups (4,096;
 * tests change it) becomes a set of the groups' places in priority order
 * (ps-schedule.c); ps__schedule_sets counts those made (tests read it).
 * The baselines' issue orders of graphs of this many groups are made with
 * such a set from the start (ps-baseline.c). */
extern uint32_t ps__schedule_ready_big;
extern atomic_size_t ps__schedule_sets;
/* The groups ranked by (key, id), as the heaps order them: by_rank[r] is
 * the group at place r, rank[gi] the place of group gi (ng entries each;
 * the keys' bits sorted stably from the groups in id order).  0,
 * PS_ENOMEM, or 1 when some key is NaN. */
int ps__planner_rank_keys (const double *key, uint32_t ng, uint32_t *by_rank, uint32_t *rank);
/* When tests set it: search_down writes there, for k = 1 ..
 * PS_MAX_STREAMS, the least makespan it holds any schedule on k streams
 * to (so that they can check it against schedules' simulations). */
extern double *ps__search_least_out;

typedef struct ps__planner {
  const ps_graph *g;
  ps_plan *p;
  ps_diag *diag;
  ps_device dev; /* the cost model's device */
  uint32_t n;    /* nodes */
  uint32_t S;    /* options.streams */
  bool fusion;
  const uint8_t *nofuse; /* per node: may not join a group (fusion auto's trials); or NULL */
  /* A trial of fusion auto: the search tries only this stream count (or
   * what the pins need), with fewer generators and no local search; 0:
   * the full search. */
  uint32_t quick_k;
  /* The search's fastest plan on at most k streams, k <= S (INFINITY where
   * none was simulated); NULL: not wanted. */
  double *at_most;
  /* Instead of the search, this one list schedule on S streams
   * (ps__plan_build_variant); NULL: the search. */
  const struct ps__planner_variant *only;
  /* Set by another thread when the plan is no longer wanted: the search
   * stops between candidates (PS_ECANCELED); NULL: never. */
  atomic_bool *cancel;
  /* The search tries its candidates one at a time (the plan is made on
   * a second thread already, or one is made beside it). */
  bool one_thread;
  /* Told once by the search, on the caller's thread, before it tries its
   * candidates: a makespan the plan will not be slower than (the first
   * generator's schedule on the most streams it tries, simulated, which it
   * takes in its turn), or INFINITY when it knows none.  The plan without
   * fusion made beside is stopped there when it cannot be faster
   * (ps-planner.c's ahead_probed), and one_thread then cleared.  NULL:
   * no one asks. */
  void (*probed) (struct ps__planner *pl, double ms);
  void *probed_ctx;
  /* Told by the search's second thread, on that thread, when the second
   * count of a pair is simulated (search_down), with its makespan: the
   * fastest plan is no slower.  ps-planner.c's ahead_paired starts the
   * plan without fusion there, on the core the pair leaves idle, when
   * that plan might be faster.  NULL: no one asks. */
  void (*paired) (struct ps__planner *pl, double ms);
  void *paired_ctx;
  /* Only a plan faster than this matters (the plan without fusion, weighed
   * against the fused plan's makespan): the search tries no candidate
   * past it to the end (stop_of), and on a graph past ps__sim_max_groups
   * no count that cannot beat it.  Set by another thread once it is known
   * (a plan without fusion made beside the fused plan from the start
   * learns it when the fused plan's search is done); NULL or 0: none. */
  _Atomic double *cutoff;
  /* Every candidate's makespan is wanted exactly, not only the fastest
   * (--streams auto reads the fastest on each count, at_most): no
   * simulation stops early. */
  bool exact_counts;
  /* Set by the caller: the plan gets a memory pass.  The search may then
   * leave the last stream count it tries running on a second thread while
   * the caller goes on with the fastest plan found before it (pl->tail,
   * ps__planner_search_settle), and its second thread may make the pass's
   * per-group lists of pooled buffers (ps__planner_pool_accesses: acc_off
   * and acc, or NULL when not made) while it waits for the first. */
  bool will_pool;
  uint32_t *acc_off, *acc;
  struct ps__search_tail *tail;
  /* The sync pass of the schedule in the arrays below is made (by
   * ps__planner_sync, until ps__planner_sync_undo), the plan's strings
   * having been synced_strings long before it. */
  bool synced;
  uint32_t synced_strings;
  /* Set by the caller: the search records the run of the schedule it
   * syncs and keeps (a graph past ps__sim_max_groups, whose plan is final
   * with its run), into `run`, which holds while the sync pass does (the
   * memory pass changes no step, so it is the plan's run then: no final
   * simulation).  NULL when none was recorded. */
  bool want_run;
  struct ps_timeline *run;

  /* analyse */
  uint32_t *topo; /* node ids in topological order */
  uint32_t *tpos; /* position of each node in topo */

  /* fuse: groups [0, ng), each a set of nodes that becomes one step */
  uint32_t ng;
  uint32_t *node_group;        /* per node */
  uint32_t *gm_off, *gm;       /* members of each group, in topological order */
  double *gcost;               /* duration (ps_cost_node, ps_cost_group) */
  double unfused_bound;        /* ps_cost_unfused_bound, from the same costs */
  ps_cost *gsim;               /* the whole cost, for simulating plans (ps__planner_simulate) */
  uint8_t *gres;               /* ps_resource, PS_RES_NONE for no device time */
  float *gfrac;                /* share of the resource requested, (0, 1] */
  int32_t *gpin;               /* the stream every member is pinned to, or -1 */
  /* The plan string offset of its step's function: a fused group's name,
   * a lone kernel's function (as ps__plan_add_node_step gives it, in the
   * plan's strings once per name), else PS_NONE; and its step's op (a
   * lone node's, PS_OP_KERNEL for a fused group).  The sync pass emits
   * steps from these, and ps__planner_event_op reads gop, without reading
   * the nodes. */
  uint32_t *gfunc;
  uint8_t *gop;
  uint32_t n_kernel_nodes;     /* the graph's kernel nodes (ps_plan.kernels_before) */
  uint32_t n_fused;            /* groups with more than one member */
  uint32_t *gsucc_off, *gsucc; /* contracted edges, deduplicated */
  uint32_t *gpred_off, *gpred;
  /* Each group's upward rank: its cost plus the largest rank of its
   * successors (the length of the critical path it starts), which the
   * list schedule's priorities, HEFT and the search's least makespan all
   * read; grank_max: the largest (the critical path of the graph). */
  double *grank;
  double grank_max;
  /* Issue-order-only constraints: the user event nodes of one event are
   * issued in program order, so that a wait always refers to the record it
   * was paired with.  chain_next: the next group of the chain or PS_NONE. */
  uint32_t *chain_next;
  uint8_t *chain_in;

  /* streams: the list schedule */
  ps__planner_variant var;
  uint32_t *order;   /* groups in issue order */
  uint32_t *gissue;  /* issue index of each group */
  uint16_t *gstream;
  uint32_t *gpos;    /* 1-based position among the groups of its stream */
  double *gstart, *gfinish; /* modelled arrival on the stream and end */
  /* Resource order: a group that must not start before this one on
   * another stream (it would take the resource first), or PS_NONE.  The
   * sync pass treats it as one more predecessor. */
  uint32_t *gafter;
  /* Round-robin's and HEFT's issue orders (ps__planner_baseline_orders),
   * or NULL: made by each call. */
  uint32_t *program_order, *rank_order;
  double makespan;
  uint32_t SC;       /* vector clock width: the highest stream used + 1 */

  /* sync */
  uint32_t *gevent;   /* planner event recorded right after the group, or PS_NONE */
  uint32_t *uwait_of; /* user event_wait group -> its record's group, else PS_NONE */
  uint32_t *wait_off, *waits; /* per issue index: groups whose records it waits for */
  uint32_t *wait_dep; /* per wait: the latest dependency on that stream, or PS_NONE */
  uint32_t *snap_of;  /* group -> snapshot index, or PS_NONE */
  uint32_t *snaps;    /* snapshots: the clock of a group's stream right after it */
} ps__planner;

int ps__planner_fuse (ps__planner *pl);
/* The search (see above): fills the schedule arrays of pl with the
 * fastest schedule found; *sim_ms receives its simulated makespan, or -1
 * for a graph too large to search (pl->makespan is then the list
 * schedule's estimate).  The plan's steps are left empty. */
/* Simulates plan p on d into tl (may be NULL), with the fusion pass's
 * group costs gsim (by node_group) when not NULL, else the costs the
 * simulator finds itself, as `simulate` does: *ms, INFINITY when the plan
 * cannot be simulated.  Returns PS_ENOMEM when the simulation ran out of
 * memory, which says nothing of the schedule and must fail the plan,
 * else 0. */
int ps__planner_simulate (const ps_plan *p, const ps_device *d, const ps_cost *gsim,
                          const uint32_t *node_group, ps_timeline *tl, double stop_above,
                          double *ms);
/* Whether another thread no longer wants the plan (pl->cancel set). */
static inline bool
ps__planner_cancelled (const ps__planner *pl)
{
  return pl->cancel && atomic_load_explicit (pl->cancel, memory_order_relaxed);
}
int ps__planner_search (ps__planner *pl, double *sim_ms);
/* When the search left its last count running (pl->tail, only with
 * pl->will_pool): waits for it, and when it is the fastest (or ties the
 * fastest: fewer streams) loads its schedule into pl, *sim_ms its
 * makespan, and sets *changed (the sync and memory passes made since are
 * then to be made again); fills pl->at_most.  Nothing when none was left. */
int ps__planner_search_settle (ps__planner *pl, double *sim_ms, bool *changed);
/* The count left running, no longer wanted: waited for and let go. */
void ps__planner_search_drop (ps__planner *pl);
/* Baseline schedules (ps-baseline.c) on `streams` streams, pins
 * honoured: round-robin (groups in program order, one stream after the
 * other) and HEFT (groups by decreasing upward rank, each where it would
 * finish earliest, timed without sharing).  Both fill pl->order, gstream
 * and gafter (no resource-order waits); ps__planner_positions the rest. */
int ps__planner_round_robin (ps__planner *pl, uint32_t streams);
int ps__planner_heft (ps__planner *pl, uint32_t streams);
/* Their issue orders, which no stream count changes, made once into
 * pl->program_order and pl->rank_order for the counts the search tries
 * (each was a topological sort by heap per count and baseline: 11% of
 * the CPU time of a 100k-node layered plan).  0 or PS_ENOMEM. */
int ps__planner_baseline_orders (ps__planner *pl);
/* From pl->order and gstream: gissue, gpos and SC, as the streams pass
 * leaves them for the sync pass. */
void ps__planner_positions (ps__planner *pl);
/* Whether node v of g may be fused, and what the members of its group
 * must share: the element count (*elems, 0 when v may not be fused) and
 * the stream pin, conditional and branch (*sig).  For checks of the
 * fusion pass's coverage. */
bool ps__fuse_key (const ps_graph *g, uint32_t v, uint64_t *elems, uint64_t *sig);
int ps__planner_schedule (ps__planner *pl);
int ps__planner_sync (ps__planner *pl);
int ps__planner_pool (ps__planner *pl);
/* The pooled buffers each group touches, for the memory pass, into
 * pl->acc_off and pl->acc: they depend on the groups alone.  Reads pl's
 * graph and groups only, so it may run beside the search.  0, PS_ENOMEM
 * or PS_ELIMIT (too many accesses; nothing set either way). */
int ps__planner_pool_accesses (ps__planner *pl);

/* Undoes ps__planner_sync: frees its arrays and empties the plan's steps and
 * events, and its strings back to what they were before it, for another
 * schedule. */
void ps__planner_sync_undo (ps__planner *pl);

/* Replays the vector clock of the group at issue index i: applies its
 * waits (planner waits, then a user wait's own record) to the clock of its
 * stream, c = clk + stream * S.  Used by ps__planner_sync and ps__planner_pool alike. */
void ps__planner_apply_waits (const ps__planner *pl, uint32_t i, uint32_t *clk);

/* True for a group that is a user event_record or event_wait: the host
 * issues it as an event call, and it takes no device time nor dispatch
 * gap. */
static inline bool
ps__planner_event_op (const ps__planner *pl, uint32_t gi)
{
  return pl->gop[gi] == PS_OP_EVENT_RECORD || pl->gop[gi] == PS_OP_EVENT_WAIT;
}

/* What every pass does when an allocation fails: says so, once, and
 * returns PS_ENOMEM. */
static inline int
ps__planner_nomem (ps__planner *pl)
{
  if (pl->diag)
    ps_diag_error (pl->diag, 0, 0, "out of memory while planning");
  return PS_ENOMEM;
}

/* A plan of g with the schedule given instead of searched: order[i] is the
 * node issued i-th (a topological order of every node), stream[v] the
 * stream of node v (below o->streams, its pin if it has one).  No fusion
 * (o->fusion must be false: PS_EINVAL); the sync and memory passes as
 * ps_plan_build runs them, and est_makespan_ns simulated.  What the tests
 * build the plans of their reference schedules with (the optimum, HEFT,
 * round-robin).  PS_EINVAL, with a message, for a schedule that is not
 * one. */
int ps__plan_build_schedule (ps_plan *p, const ps_graph *g, const ps_plan_options *o,
                             const uint32_t *order, const uint16_t *stream, ps_diag *diag);

/* A plan of g whose streams pass is one list schedule of variant v on
 * o->streams streams instead of the search (fusion as o says, every group
 * kept; est_makespan_ns simulated): for tests of what the other passes and
 * the diagnosis make of a given kind of schedule. */
int ps__plan_build_variant (ps_plan *p, const ps_graph *g, const ps_plan_options *o,
                            const ps__planner_variant *v, ps_diag *diag);

/* The simple planner (ps-plan-simple.c): every node in program order (ids,
 * or a topological order when ids are not one) on its pinned stream or
 * stream 0; after a node with successors on other streams one record of a
 * fresh event, and before a node one wait per cross-stream predecessor
 * unless its stream already waited for that record or a later one of the
 * same stream; no fusion; buffers end to end.  Always correct, never
 * clever: a reference for tests. */
int ps__plan_build_simple (ps_plan *p, const ps_graph *g, const ps_plan_options *o,
                           ps_diag *diag);

#endif
