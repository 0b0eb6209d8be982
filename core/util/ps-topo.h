/* ps-topo.h: Kahn's topological order of a graph in CSR form, the one
 * the analysis, the planner (nodes) and the fusion pass (groups) all
 * take.  Not installed; core/ only. */
#ifndef PS_TOPO_H
#define PS_TOPO_H

#include <stdint.h>

/* The n nodes of the graph whose predecessors are counted by pred_off
 * (n + 1 offsets) and whose successors are succ[succ_off[v] ..
 * succ_off[v + 1]) into order: the sources in id order, then each node
 * once its last predecessor is placed, first placed first, so the order
 * is deterministic.  indeg: n entries of scratch.  Returns the number of
 * nodes placed: n, or fewer when the graph has a cycle. */
uint32_t ps__topo_order (uint32_t n, const uint32_t *pred_off, const uint32_t *succ_off,
                         const uint32_t *succ, uint32_t *order, uint32_t *indeg);

#endif
