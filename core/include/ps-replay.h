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
  double median_start_error_ns; /* of |replayed start - measured start| over the ops */
  uint32_t n_streams;
  ps_replay_stream *streams;
  uint32_t waits, dropped, launches;
  /* The part of the replayed makespan that measured delays make up: how
   * much shorter it is with them taken out, in all and by cause. */
  double unexplained_ns, unexplained_by[PS_IDLE__COUNT];
  double launch_latency_ns; /* the same for launch latency, which is not unexplained */
} ps_replay;

void ps_replay_free (ps_replay *r);

/* Replays the trace in data (gzip or not) on device profile d (whose
 * overheads a measured graph does not use).  o may be NULL. */
int ps_replay_trace (const char *data, size_t len, const char *path,
                     const ps_trace_graph_options *o, const ps_device *d, ps_replay *r,
                     ps_diag *diag);

#endif
