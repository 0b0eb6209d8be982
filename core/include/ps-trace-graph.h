/* ps-trace-graph.h: a measured run (an imported trace) as a graph that
 * replays it.
 *
 * One device of the trace is taken (the one with the most GPU work unless
 * asked).  Each of its kernels, copies and memsets becomes a node whose
 * cost_ns is its measured duration, pinned to its recorded stream (pins
 * are dense, 0 .. streams - 1, in the order of the trace's stream ids).
 * Dependencies are what the trace shows: each stream's recorded order (an
 * `after` edge to the previous op on the stream, so that the planner keeps
 * it), and each cross-stream wait the trace records (a "Stream Wait Event"
 * of cuda_sync, tied to the work the waited-for cudaEventRecord covered).
 * The host is there too: each op's launch time, when the trace has its
 * runtime call, goes into g->host_ns (the op cannot start before it), so a
 * launch-bound trace replays launch-bound, and host synchronisations need
 * no node of their own (the launches after them come later).  A trace
 * that records no cross-stream waits (Kineto's runtime cudaStreamWaitEvent
 * says neither stream nor event) gets them inferred from the timing: an op
 * that starts within 3 µs of the end of work on another stream, later than
 * everything else lets it, waits for that work.
 *
 * What none of that explains, the idle time between an op's latest
 * constraint and its measured start, is kept as that op's measured delay
 * (g->delay_ns), labelled with its likely cause and counted, never hidden:
 * waits on other ranks inside NCCL's streams, time inside a
 * cudaGraphLaunch (ops sharing one launch's correlation id), or the trace
 * does not say; when the launch was the latest constraint, the delay is
 * the launch's latency, which the trace does explain.  A recorded dependency that the measurement contradicts
 * (the op started before the work it would wait for ended) is dropped and
 * counted.  The graph is marked measured (ps-graph.h): the simulator adds
 * no overheads of its own, so simulating it with its recorded streams
 * reproduces the measured timeline. */
#ifndef PS_TRACE_GRAPH_H
#define PS_TRACE_GRAPH_H

#include "ps-error.h"
#include "ps-graph.h"
#include "ps-timeline.h"

/* Why an op started later than everything recorded let it.  The last is
 * no mystery: the trace has the launch, the GPU took that long to start
 * it; it is measured delay too, but not unexplained. */
#define PS_IDLE_CAUSE_MAP(X)                                  \
  X (PS_IDLE_NCCL, "waits on other ranks (NCCL)")             \
  X (PS_IDLE_GRAPH_LAUNCH, "inside cudaGraphLaunch")          \
  X (PS_IDLE_UNEXPLAINED, "not explained by the trace")       \
  X (PS_IDLE_LAUNCH_LATENCY, "launch latency")

typedef enum ps_idle_cause {
#define PS__IDLE_ENUM(e, text) e,
  PS_IDLE_CAUSE_MAP (PS__IDLE_ENUM)
#undef PS__IDLE_ENUM
  PS_IDLE__COUNT
} ps_idle_cause;

const char *ps_idle_cause_text (ps_idle_cause c);

struct ps_exec_trace;

/* With an execution trace: ops linked to one of its operators, ops whose
 * operator it lists without CUDA tensors the op can be said to touch (a
 * copy needs a source and a destination), ops with a CPU op it does not
 * list (or lists under another name), ops with no CPU op at all (the four
 * add up to the GPU ops), and the buffers (storages) made. */
typedef struct ps_et_links {
  uint32_t linked, no_tensors, unmatched, no_cpu_op, buffers;
} ps_et_links;

typedef struct ps_trace_graph_options {
  int32_t device;    /* the device to take; -1: the one with the most GPU work */
  /* No pins: the planner chooses.  Each recorded stream's order stays a
   * dependency, except between two ops the execution trace links. */
  bool free_streams;
  /* An execution trace of the same run (may be NULL): each op whose CPU op
   * it lists (by record-function id, with the same name) reads and writes
   * that operator's CUDA tensors, one buffer per storage, so that data
   * hazards order it.  With free_streams, two linked ops need nothing
   * more: neither their streams' recorded order nor the recorded waits
   * between them stay, and re-planning their streams is real. */
  const struct ps_exec_trace *et;
} ps_trace_graph_options;

void ps_trace_graph_options_init (ps_trace_graph_options *o);

typedef struct ps_trace_graph_info {
  int32_t device;     /* the device taken */
  uint32_t n_devices; /* devices with GPU work in the trace */
  uint32_t gpu_ops;   /* nodes: one per kernel, copy and memset of the device */
  uint32_t streams;   /* the device's streams (pins 0 .. streams - 1) */
  uint32_t waits;     /* cross-stream waits kept as dependencies */
  uint32_t inferred;  /* waits inferred from the timing (none recorded) */
  uint32_t dropped;   /* recorded waits the measurement contradicts */
  uint32_t launches;  /* ops with a host launch time */
  uint32_t delays;    /* ops with a measured delay */
  ps_et_links et;     /* what the execution trace linked */
  double t0_ns;       /* the trace time of the graph's time 0 */
  double delay_ns, delay_by[PS_IDLE__COUNT]; /* every op's delay, summed */
  uint32_t *span_of_node;  /* per node: the trace span it was made from */
  uint8_t *cause_of_node;  /* per node: ps_idle_cause of its delay */
  int64_t *stream_of_pin;  /* per pin: the trace's stream id */
  uint32_t *tl_stream_of_pin; /* per pin: the timeline's stream index */
} ps_trace_graph_info;

void ps_trace_graph_info_free (ps_trace_graph_info *info);

/* What the trace says of node v of a graph built from it: where and when
 * it ran, what launched it and the delay it was given.  Times are from
 * the graph's time 0; NAN where the trace has none. */
typedef struct ps_trace_node {
  const char *name;      /* as the trace names it */
  int64_t stream;        /* the trace's stream id */
  uint64_t correlation;  /* 0 when none */
  const char *cpu_op;    /* the CPU op whose runtime call launched it, or NULL */
  int64_t cpu_op_id;     /* its record-function (or external) id; -1 when none */
  double launch_ns, start_ns, end_ns;
  double delay_ns;       /* the measured delay kept for it (g->delay_ns) */
  ps_idle_cause cause;   /* of that delay */
} ps_trace_node;

/* Fills *out for node v; false when v was not made from the trace. */
bool ps_trace_node_get (const ps_graph *g, const ps_timeline *tl, const ps_trace_graph_info *in,
                        uint32_t v, ps_trace_node *out);

/* Builds g (initialised here) from tl, an imported trace (ps_trace_import_*);
 * info (may be NULL) says what was taken.  Errors (no GPU work, a device
 * with more streams than planscope plans) go to diag. */
int ps_trace_graph_build (ps_graph *g, const ps_timeline *tl, const ps_trace_graph_options *o,
                          ps_trace_graph_info *info, ps_diag *diag);

#endif
