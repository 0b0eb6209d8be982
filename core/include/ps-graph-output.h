/* ps-graph-output.h: a graph written as a planscope graph file
 * (spec/graph-format.md, version 1), as `planscope-cli import` does with
 * the graph of a trace.
 *
 * Nodes in their order with their stream pins and costs; kernels with
 * their function and launch; buffers as they are, and for a copy or
 * memset that has none (a trace's) a buffer of its own, external, so that
 * no hazard links it to other work; dependencies that no buffer gives
 * (`after`, imported edges) as `after`.  What the format cannot say is
 * left out: a measured graph's host launch times and measured delays
 * (ps-graph.h), which ps_graph_write_json counts in *dropped_ns (may be
 * NULL).  Conditionals, barriers, events and nodes of no file type make it
 * refuse with PS_EINVAL. */
#ifndef PS_GRAPH_OUTPUT_H
#define PS_GRAPH_OUTPUT_H

#include <stdio.h>

#include "ps-graph.h"

int ps_graph_write_json (const ps_graph *g, FILE *out, double *dropped_ns);

#endif
