/* ps-timeline.h: what ran when: spans per stream, stalls at event waits,
 * and event record -> wait flows.
 *
 * One structure serves simulated timelines (ps-sim.h), imported traces
 * (ps-trace-import.h) and measured runs.  Everything lives in dense arrays;
 * spans refer to streams, plan steps and graph nodes by index, and names of
 * imported work live in the timeline's string pool.  Times are nanoseconds
 * from the start of the run.  Spans may be added in any order;
 * ps_timeline_finish builds a per-stream index sorted by start time, which
 * the diagnosis and the exporters use. */
#ifndef PS_TIMELINE_H
#define PS_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ps-error.h"
#include "ps-graph.h"

typedef enum ps_timeline_source {
  PS_TL_SIMULATED = 0,
  PS_TL_IMPORTED,
  PS_TL_MEASURED,
} ps_timeline_source;

typedef enum ps_span_kind {
  PS_SPAN_KERNEL = 0,
  PS_SPAN_MEMCPY,
  PS_SPAN_MEMSET,
  PS_SPAN_HOST,  /* a host callback on a stream */
  PS_SPAN_OTHER, /* barriers, conditionals, empty or opaque work */
  PS_SPAN__COUNT
} ps_span_kind;

/* Why a span started when it did, as far as its producer knows. */
typedef enum ps_bound {
  PS_BOUND_UNKNOWN = 0, /* the diagnosis infers it */
  PS_BOUND_START,       /* nothing before it: it started with the run */
  PS_BOUND_STREAM,      /* the previous work on its stream (pred) */
  PS_BOUND_EVENT,       /* an event wait on the work pred on another stream */
  PS_BOUND_HOST,        /* the host issued it late (launch-bound) */
  PS_BOUND_HOST_WAIT,   /* the host issued it after blocking on pred */
  PS_BOUND_RESOURCE,    /* it waited for SMs or a copy engine that pred held */
} ps_bound;

typedef struct ps_tl_stream {
  int64_t id;     /* plan stream, or the CUDA stream id of a trace */
  int32_t device; /* device ordinal, or -1 */
} ps_tl_stream;

/* Span flags. */
enum {
  PS_SPAN_F_UNKNOWN = 1u << 0, /* no model or measurement tells its duration */
  PS_SPAN_F_NOT_RUN = 1u << 1, /* in a conditional branch the run does not take */
  PS_SPAN_F_ESTIMATED = 1u << 2, /* its duration is estimated from its launch alone */
};

typedef struct ps_span {
  double start_ns, end_ns;
  double launch_ns;     /* when the host issued it; < 0 when unknown */
  /* When everything but a shared resource let it start (its stream, its
   * events, the host): start_ns - ready_ns is the time it queued for the
   * SMs or a copy engine.  < 0 when unknown. */
  double ready_ns;
  uint32_t stream;      /* index into streams */
  uint32_t step;        /* plan step, or PS_NONE */
  uint32_t nodes_begin, nodes_count; /* graph node ids in span_nodes */
  uint32_t name;        /* string offset (imported work), or PS_NONE */
  uint32_t pred;        /* the span that bound its start, or PS_NONE */
  uint64_t correlation; /* CUPTI correlation id of imported work, or 0 */
  /* Imported work: 1 + the index in cpu_ops of the CPU op whose runtime
   * call launched it (the innermost one around the call on its thread);
   * 0 when the trace has none. */
  uint32_t cpu_op;
  uint8_t kind;         /* ps_span_kind */
  uint8_t bound;        /* ps_bound */
  uint8_t flags;        /* PS_SPAN_F_* */
} ps_span;

/* Time a stream sat at an event wait before the event completed. */
typedef struct ps_stall {
  double start_ns, end_ns;
  uint32_t stream;      /* the waiting stream (index) */
  uint32_t step;        /* the event_wait step, or PS_NONE */
  uint32_t on_stream;   /* the stream that recorded the event, or PS_NONE */
  uint32_t waiting_for; /* the last span the recorded event covered, or PS_NONE */
  int64_t event;        /* plan event id or CUDA event id; -1 when unknown */
} ps_stall;

/* An event record on one stream and a wait for it on another. */
typedef struct ps_flow {
  double from_ns, to_ns;
  uint32_t from_stream, to_stream;
  uint32_t from_span; /* the recorded work, or PS_NONE */
  uint32_t to_span;   /* the first span on to_stream at or after to_ns (set by finish) */
  uint32_t stall;     /* the stall the wait caused, or PS_NONE */
  int64_t event;
} ps_flow;

/* Imported traces: the host blocked until `span` finished (a stream,
 * event or context synchronisation, or a synchronous copy). */
typedef struct ps_host_wait {
  double start_ns, end_ns;
  uint32_t span;
} ps_host_wait;

/* Imported traces: a CPU op (a framework operator, Kineto's cpu_op) that
 * launched GPU work. */
typedef struct ps_tl_cpu_op {
  double start_ns, end_ns;
  uint32_t name;  /* string offset */
  int64_t rf_id;  /* its "Record function id", else its "External id"; -1 when neither */
} ps_tl_cpu_op;

/* Imported traces: a kernel's launch configuration, where the trace gives
 * it (all 0 where not). */
typedef struct ps_tl_launch {
  uint32_t grid[3], block[3];
} ps_tl_launch;

typedef struct ps_timeline {
  ps_timeline_source source;
  char device[64];          /* device profile or GPU name */
  const ps_graph *graph;    /* names of span nodes; may be NULL */
  /* The plan the spans' steps belong to (simulated and measured
   * timelines); NULL for imported traces.  The diagnosis reads why each
   * wait of the plan is there from it. */
  const struct ps_plan *plan;
  uint32_t iterations;      /* measured timelines */
  uint32_t event_waits;     /* cross-stream event waits seen, stalled or not */
  double makespan_ns;       /* set by ps_timeline_finish */

  uint32_t n_streams, streams_cap;
  ps_tl_stream *streams;
  uint32_t n_spans, spans_cap;
  ps_span *spans;
  uint32_t n_span_nodes, span_nodes_cap;
  uint32_t *span_nodes;
  uint32_t n_stalls, stalls_cap;
  ps_stall *stalls;
  uint32_t n_flows, flows_cap;
  ps_flow *flows;
  uint32_t n_host_waits, host_waits_cap;
  ps_host_wait *host_waits;
  uint32_t n_cpu_ops, cpu_ops_cap;
  ps_tl_cpu_op *cpu_ops;
  /* Per span, or NULL when the trace gives no launch configurations. */
  ps_tl_launch *launches;

  char *strings;
  uint32_t strings_len, strings_cap;

  /* Built by ps_timeline_finish: span ids by stream, sorted by start:
   * stream i has by_stream[stream_off[i] .. stream_off[i + 1]). */
  uint32_t *stream_off;
  uint32_t *by_stream;
  bool multi_device;        /* streams of more than one device */
} ps_timeline;

void ps_timeline_init (ps_timeline *tl, ps_timeline_source source);
void ps_timeline_free (ps_timeline *tl);

/* Appends; *index_out (may be NULL) receives the new element's index. */
int ps_timeline_add_stream (ps_timeline *tl, int64_t id, int32_t device, uint32_t *index_out);
int ps_timeline_add_span (ps_timeline *tl, const ps_span *s, const uint32_t *nodes,
                          uint32_t n_nodes, uint32_t *index_out);
int ps_timeline_add_stall (ps_timeline *tl, const ps_stall *s, uint32_t *index_out);
int ps_timeline_add_flow (ps_timeline *tl, const ps_flow *f, uint32_t *index_out);
int ps_timeline_add_host_wait (ps_timeline *tl, const ps_host_wait *w);
int ps_timeline_add_cpu_op (ps_timeline *tl, const ps_tl_cpu_op *op, uint32_t *index_out);
/* Copies a string of len bytes into the pool; *off receives its offset.
 * Strings longer than 4096 bytes are cut at a UTF-8 boundary. */
int ps_timeline_add_string (ps_timeline *tl, const char *s, size_t len, uint32_t *off);

/* Builds the per-stream index, fills flows' to_span and sets makespan_ns.
 * Call after the last add and before diagnosis or export. */
int ps_timeline_finish (ps_timeline *tl);

/* A span's display name: its name, else its first node's name (with " +N"
 * for fused groups written by ps_timeline_span_label), else its kind. */
const char *ps_timeline_span_name (const ps_timeline *tl, uint32_t span);
/* What a span's duration reads as everywhere: "17.4 µs", "17.4 µs
 * (estimated)", "unknown" or "not run". */
const char *ps_timeline_span_duration_text (const ps_timeline *tl, uint32_t span, char *buf,
                                            size_t cap);
/* Writes "a + b + c" for a fused span (at most cap bytes, NUL-terminated). */
void ps_timeline_span_label (const ps_timeline *tl, uint32_t span, char *buf, size_t cap);
/* The kernel function a single-kernel span runs (from the graph), or NULL. */
const char *ps_timeline_span_function (const ps_timeline *tl, uint32_t span);
const char *ps_span_kind_name (ps_span_kind k);
/* The kind of span an op's work is (the span column of PS_OP_MAP). */
ps_span_kind ps_span_kind_of_op (ps_op op);
const char *ps_timeline_source_name (ps_timeline_source s);

/* The stream's label for people: "stream 3" (plan) or "stream 7" (CUDA id),
 * with "dev 1 " in front when the trace has several devices. */
void ps_timeline_stream_label (const ps_timeline *tl, uint32_t stream, char *buf, size_t cap);

/* The span on `stream` that is running at time t, or the last one that
 * ended before t; PS_NONE if none.  Needs ps_timeline_finish. */
uint32_t ps_timeline_span_before (const ps_timeline *tl, uint32_t stream, double t);

#endif
