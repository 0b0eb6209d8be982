/* ps-inputs.c: a plan's input buffers (see ps-inputs.h). */
#include "ps-inputs.h"

#include <string.h>

enum { UNTOUCHED = 0, READ_FIRST, WRITTEN_FIRST };

static void
touch (uint8_t *first, uint32_t buffer, uint32_t n_buffers, uint8_t how)
{
  if (buffer < n_buffers && first[buffer] == UNTOUCHED)
    first[buffer] = how;
}

void
ps_plan_inputs (const ps_plan *p, uint8_t *input)
{
  const ps_graph *g = p->graph;
  uint32_t nb = g->n_buffers;
  memset (input, UNTOUCHED, nb);
  for (uint32_t s = 0; s < p->n_steps; s++) {
    const ps_step *st = &p->steps[s];
    for (uint32_t i = 0; i < st->nodes_count; i++) {
      const ps_node *nd = &g->nodes[p->step_nodes[st->nodes_begin + i]];
      for (uint32_t r = 0; r < nd->reads_count; r++)
        touch (input, g->access[nd->reads_begin + r], nb, READ_FIRST);
      if (nd->op == PS_OP_KERNEL && nd->aux < g->n_kernels) {
        const ps_kernel *k = &g->kernels[nd->aux];
        for (uint32_t a = 0; a < k->args_count; a++)
          if (g->kargs[k->args_begin + a].kind == PS_KARG_BUFFER)
            touch (input, g->kargs[k->args_begin + a].v.buffer, nb, READ_FIRST);
      }
      for (uint32_t w = 0; w < nd->writes_count; w++)
        touch (input, g->access[nd->writes_begin + w], nb, WRITTEN_FIRST);
    }
  }
  for (uint32_t b = 0; b < nb; b++)
    input[b] = input[b] == READ_FIRST;
}
