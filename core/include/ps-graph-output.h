/* ps-graph-output.h: a graph written as a planscope graph file
 * (spec/graph-format.md, version 1), as `planscope-cli import` does with
 * the graph of a trace or of a CUDA-graph dump.
 *
 * Nodes in their order with their stream pins and costs; kernels with
 * their function and launch; copies, memsets, host callbacks, events,
 * barriers and conditionals (condition, branches, assumption) as the
 * format has them; buffers as they are, and for a copy or memset that has
 * none (a trace's, a dump's) a buffer of its own, external, so that no
 * hazard links it to other work; dependencies that no buffer, event,
 * barrier or branch gives (`after`, imported edges) as `after`.
 *
 * What the format cannot say is left out and counted in the info:
 * a measured graph's host launch times and measured delays
 * (ps-graph.h); a dump's empty nodes and node types planscope does not
 * model, whose order is kept (their successors come `after` their
 * predecessors).  A kernel known neither by its launch nor by a duration
 * (a default-flag dump not timed by a trace) cannot be written: the
 * format needs one or the other, and writing <<<1,1>>> would make it a
 * one-thread kernel; ps_graph_write_json then writes nothing and returns
 * PS_EINVAL with info->no_launch > 0. */
#ifndef PS_GRAPH_OUTPUT_H
#define PS_GRAPH_OUTPUT_H

#include <stdio.h>

#include "ps-graph.h"

typedef struct ps_graph_write_info {
  double dropped_ns;        /* measured delay left out */
  uint32_t bridged;         /* empty and opaque nodes left out, order kept */
  uint32_t no_launch;       /* kernels with neither launch nor duration */
  uint32_t first_no_launch; /* the first of them, or PS_NONE */
} ps_graph_write_info;

/* What writing g would leave out, without writing it. */
void ps_graph_write_check (const ps_graph *g, ps_graph_write_info *info);
/* Writes g to out; info (may be NULL) says what was left out. */
int ps_graph_write_json (const ps_graph *g, FILE *out, ps_graph_write_info *info);

#endif
