/* ps-graph-private.h: what the builders of a ps_graph (the JSON loader,
 * the DOT importer) share: the string pool and the dependency edges of
 * spec/graph-format.md.  core/ only. */
#ifndef PS_GRAPH_PRIVATE_H
#define PS_GRAPH_PRIVATE_H

#include <stdatomic.h>

#include "ps-graph.h"

/* Copies a string into the pool.  Returns 0, PS_ENOMEM or PS_ELIMIT. */
int ps__graph_intern (ps_graph *g, const char *s, size_t len, uint32_t *off);
/* Its kernel nodes (ps_plan.kernels_before). */
uint32_t ps__graph_kernel_nodes (const ps_graph *g);

/* Edges and CSR from the loaded, resolved nodes (ps-graph-edges.c):
 * after_pairs holds n_after (from, to) pairs of `after` edges. */
int ps__graph_build_edges (ps_graph *g, const uint32_t *after_pairs, uint32_t n_after,
                           ps_diag *diag);
/* Graphs of at least this many nodes visit the second half of their nodes
 * for edges on a second thread (65,536; tests change it); the visits
 * whose second half was taken, so far (tests read it). */
extern uint32_t ps__graph_edges_halves_min;
extern atomic_size_t ps__graph_edges_halves_taken;

#endif
