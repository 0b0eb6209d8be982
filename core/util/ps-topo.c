/* ps-topo.c: Kahn's topological order (ps-topo.h). */
#include "ps-topo.h"

uint32_t
ps__topo_order (uint32_t n, const uint32_t *pred_off, const uint32_t *succ_off,
                const uint32_t *succ, uint32_t *order, uint32_t *indeg)
{
  uint32_t head = 0, tail = 0;
  for (uint32_t v = 0; v < n; v++) {
    indeg[v] = pred_off[v + 1] - pred_off[v];
    if (indeg[v] == 0)
      order[tail++] = v;
  }
  while (head < tail) {
    uint32_t u = order[head++];
    for (uint32_t e = succ_off[u]; e < succ_off[u + 1]; e++)
      if (--indeg[succ[e]] == 0)
        order[tail++] = succ[e];
  }
  return tail;
}
