/* ps-replay.h: how well planscope's model reproduces a measured run.
 *
 * A trace is imported as the graph that replays it (ps-trace-graph.h),
 * planned with its recorded streams (each op on the stream it ran on, in
 * the order it ran, no fusion) and simulated; the simulated timeline is
 * then held against the measured one: the makespan (first GPU op's start
 * to the last one's end on the device), each stream's busy time, each
 * op's start, and the share of the makespan that only the measured delays
 * the trace could not explain account for. */
#ifndef PS_REPLAY_H
#define PS_REPLAY_H

#include "ps-device.h"
#include "ps-error.h"
#include "ps-plan.h"
#include "ps-trace-graph.h"

typedef struct ps_replay_stream {
  int64_t id; /* the trace's stream id */
  double measured_ns, replayed_ns; /* busy time */
} ps_replay_stream;

typedef struct ps_replay {
  int32_t device;
  uint32_t n_devices;
  uint32_t gpu_ops;
  double measured_makespan_ns, replayed_makespan_ns;
  double makespan_error;        /* (replayed - measured) / measured */
  /* When the last op ends, from the graph's time 0 (the first launch or
   * start): what a what-if that moves the first op's start is judged by. */
  double measured_end_ns, replayed_end_ns;
  double median_start_error_ns; /* of |replayed start - measured start| over the ops */
  uint32_t n_streams;
  ps_replay_stream *streams;
  uint32_t waits, inferred, dropped, launches;
  /* The part of the replayed makespan that measured delays make up: how
   * much shorter it is with them taken out, in all and by cause. */
  double unexplained_ns, unexplained_by[PS_IDLE__COUNT];
  double launch_latency_ns; /* the same for launch latency, which is not unexplained */
  uint32_t scaled;          /* kernels a what-if scale changed */
  uint32_t streams_used;    /* streams the replay's plan used */
  ps_et_links et;           /* what an execution trace linked */
  bool what_if;             /* o had changes: the replay is of the changed run */
} ps_replay;

void ps_replay_free (ps_replay *r);

/* The measured run of a trace as a measured timeline of plan p of its
 * graph g (made by ps_import_trace_graph with `trace` and `in`): each
 * node's span where and when the trace ran it (times from the graph's time
 * 0), on the stream p gave it, so that a view sets it against p's
 * prediction node by node.  out is initialised here (PS_TL_MEASURED, one
 * iteration) and finished. */
int ps_trace_measured_timeline (const ps_graph *g, const ps_timeline *trace,
                                const ps_trace_graph_info *in, const ps_plan *p,
                                ps_timeline *out);

/* What-if changes to a replay: kernels whose name matches a glob
 * (fnmatch) take factor times as long, and without launch overhead the
 * host no longer holds work back (what a CUDA graph of the whole run
 * would give: no launch times, no launch latency). */
#define PS_REPLAY_MAX_SCALES 16
typedef struct ps_replay_options {
  ps_trace_graph_options trace;
  struct {
    const char *glob;
    double factor;
  } scale[PS_REPLAY_MAX_SCALES];
  uint32_t n_scales;
  bool no_launch_overhead;
  /* What if the planner chose the streams, up to this many (0: the
   * recorded ones).  The recorded order on each stream stays a dependency
   * unless an execution trace (trace.et) says what the ops touch. */
  uint32_t streams;
} ps_replay_options;

void ps_replay_options_init (ps_replay_options *o);

/* Replays the trace in data (gzip or not) on device profile d (whose
 * overheads a measured graph does not use).  o may be NULL.  With
 * what-if changes in o the replay is of the changed run: its makespan
 * against the measured one says what the change would give, and
 * r->scaled counts the kernels changed. */
int ps_replay_trace (const char *data, size_t len, const char *path,
                     const ps_replay_options *o, const ps_device *d, ps_replay *r,
                     ps_diag *diag);

#endif
