/* ps-inputs.h: which buffers of a plan are its inputs, for a run to fill.
 *
 * A buffer is an input when the first step that touches it, in the plan's
 * step order (which every dependency follows), reads it: a kernel's reads
 * and a user kernel's buffer arguments (whose direction is unknown) count
 * as reads ahead of its writes, a download or device copy reads its
 * source, an upload and a memset only write.  Only inputs get the
 * deterministic values; filling the others too would be harmless for
 * buffers of their own, but pooled buffers share offsets, and a buffer
 * written first may lie where an input waits to be read.  Needs no CUDA. */
#ifndef PS_INPUTS_H
#define PS_INPUTS_H

#include "ps-plan.h"

/* input[b] = 1 for every input buffer b, else 0 (g->n_buffers entries). */
void ps_plan_inputs (const ps_plan *p, uint8_t *input);

#endif
