/* ps-dot-import.h: loading the DOT dumps of CUDA's cudaGraphDebugDotPrint
 * (default and verbose flags) as planscope graphs.
 *
 * Every CUDA graph of the dump is a `subgraph cluster_N`; its nodes become
 * graph nodes: kernels (name and <<<grid,block,smem>>> when the dump has
 * them), memcpy (kind and extent), memset, host, empty, event record and
 * wait.  A child-graph node is replaced by the nodes of the graph it names
 * (flattened in place, once per launch); node types planscope does not
 * model are kept as opaque nodes with a warning.  Edges are the dump's
 * edges; nodes are renumbered into a topological order, and a cycle is an
 * error that lists the nodes on it.  As for JSON graphs, an event wait
 * depends on the latest earlier record of its event; a wait that no
 * earlier node records becomes an empty node (with a warning).  Besides
 * the limits of ps-graph.h, the names of the expanded nodes (each
 * instance's nodes are named with the ids of all its launches) may take at
 * most 1 GiB, so that a small dump cannot expand into gigabytes. */
#ifndef PS_DOT_IMPORT_H
#define PS_DOT_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "ps-graph.h"

/* Loads a DOT dump from memory.  Same contract as ps_import_graph_mem: on
 * failure *g is left empty and diag holds at least one located error. */
int ps__dot_load_graph (ps_graph *g, const char *data, size_t len, const char *path,
                        ps_diag *diag);

#endif
