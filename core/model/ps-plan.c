/* ps-plan.c: the plan's lifetime and the helpers every planner builds a
 * plan with (ps-plan-private.h). */
#include "ps-plan.h"

#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-graph-private.h"
#include "ps-plan-private.h"
#include "ps-timeline.h"

const char *
ps_wait_reason_name (ps_wait_reason r)
{
#define PS__WAIT_NAME(e, name) name,
  static const char *const names[] = { PS_WAIT_MAP (PS__WAIT_NAME) };
#undef PS__WAIT_NAME
  return (unsigned) r < PS_WAIT__COUNT ? names[r] : "?";
}

void
ps_plan_options_init (ps_plan_options *o)
{
  o->streams = 4;
  o->streams_auto = false;
  o->fusion = true;
  o->fusion_all = false;
  o->device = NULL;
  o->memory_budget = 0;
  o->find_peak = false;
}

void
ps_plan_free (ps_plan *p)
{
  if (!p)
    return;
  if (p->peak) {
    /* Stopped first: it reads the arrays freed below. */
    ps__plan_peak_stop (p->peak);
    free (p->peak);
  }
  free (p->steps);
  free (p->step_nodes);
  free (p->node_step);
  free (p->offsets);
  free (p->strings);
  if (p->run) {
    ps_timeline_free (p->run);
    free (p->run);
  }
  memset (p, 0, sizeof *p);
}

/* ---- construction helpers ---- */

void
ps__plan_keep_run (ps_plan *p, ps_timeline *tl)
{
  ps_timeline *kept = malloc (sizeof *kept);
  if (!kept) {
    ps_timeline_free (tl);
    return;
  }
  if (p->run) {
    ps_timeline_free (p->run);
    free (p->run);
  }
  *kept = *tl;
  kept->plan = NULL; /* set where it is read: the plan may move */
  memset (tl, 0, sizeof *tl);
  p->run = kept;
}

int
ps__plan_begin (ps_plan *p, const ps_graph *g, const ps_plan_options *o)
{
  memset (p, 0, sizeof *p);
  p->graph = g;
  p->options = *o;
  p->n_events = g->n_events;
  p->node_step = malloc ((g->n_nodes ? g->n_nodes : 1) * sizeof *p->node_step);
  p->offsets = malloc ((g->n_buffers ? g->n_buffers : 1) * sizeof *p->offsets);
  if (!p->node_step || !p->offsets)
    goto nomem;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    p->node_step[v] = PS_NONE;
  for (uint32_t b = 0; b < g->n_buffers; b++)
    p->offsets[b] = UINT64_MAX;
  if (PS_ARRAY_RESERVE (p->steps, p->steps_cap, g->n_nodes) < 0
      || PS_ARRAY_RESERVE (p->step_nodes, p->step_nodes_cap, g->n_nodes) < 0)
    goto nomem;
  return 0;
nomem:
  ps_plan_free (p);
  return PS_ENOMEM;
}

int
ps__plan_add_string (ps_plan *p, const char *s, uint32_t *off)
{
  size_t len = strlen (s) + 1;
  uint64_t need = (uint64_t) p->strings_len + len;
  int rc = PS_ARRAY_RESERVE (p->strings, p->strings_cap, need);
  if (rc < 0)
    return rc;
  memcpy (p->strings + p->strings_len, s, len);
  *off = p->strings_len;
  p->strings_len = (uint32_t) need;
  return 0;
}

int
ps__plan_add_step (ps_plan *p, ps_op op, uint32_t stream, const uint32_t *nodes,
                   uint32_t n_nodes, uint32_t event, uint32_t group, uint32_t function,
                   uint32_t *step_out)
{
  if (stream > UINT16_MAX)
    return PS_EINVAL;
  int rc = PS_ARRAY_RESERVE (p->steps, p->steps_cap, (uint64_t) p->n_steps + 1);
  if (rc == 0)
    rc = PS_ARRAY_RESERVE (p->step_nodes, p->step_nodes_cap, (uint64_t) p->n_step_nodes + n_nodes);
  if (rc < 0)
    return rc;
  uint32_t s = p->n_steps++;
  p->steps[s] = (ps_step){
    .op = (uint8_t) op,
    .synthetic = 0,
    .stream = (uint16_t) stream,
    .nodes_begin = p->n_step_nodes,
    .nodes_count = n_nodes,
    .event = event,
    .group = group,
    .function = function,
    .dep_node = PS_NONE,
  };
  for (uint32_t i = 0; i < n_nodes; i++) {
    p->step_nodes[p->n_step_nodes++] = nodes[i];
    if (nodes[i] < p->graph->n_nodes)
      p->node_step[nodes[i]] = s;
  }
  if (step_out)
    *step_out = s;
  return 0;
}

int
ps__plan_add_node_step (ps_plan *p, uint32_t node, uint32_t stream, uint32_t *step_out)
{
  const ps_graph *g = p->graph;
  const ps_node *n = &g->nodes[node];
  uint32_t event = PS_NONE, function = PS_NONE;
  if (n->op == PS_OP_EVENT_RECORD || n->op == PS_OP_EVENT_WAIT)
    event = n->aux;
  if (n->op == PS_OP_KERNEL && n->aux < g->n_kernels) {
    const char *fn = ps_graph_str (g, g->kernels[n->aux].function);
    if (fn) {
      int rc = ps__plan_add_string (p, fn, &function);
      if (rc < 0)
        return rc;
    }
  }
  uint32_t s;
  int rc = ps__plan_add_step (p, (ps_op) n->op, stream, &node, 1, event, PS_NONE, function, &s);
  if (rc < 0)
    return rc;
  if (n->op == PS_OP_EVENT_WAIT)
    p->steps[s].wait = PS_WAIT_USER;
  if (step_out)
    *step_out = s;
  return 0;
}

uint32_t
ps__plan_new_event (ps_plan *p)
{
  return p->n_events++;
}

int
ps__plan_add_record (ps_plan *p, uint32_t stream, uint32_t event, uint32_t *step_out)
{
  uint32_t s;
  int rc = ps__plan_add_step (p, PS_OP_EVENT_RECORD, stream, NULL, 0, event, PS_NONE, PS_NONE,
                              &s);
  if (rc < 0)
    return rc;
  p->steps[s].synthetic = 1;
  if (step_out)
    *step_out = s;
  return 0;
}

int
ps__plan_add_wait (ps_plan *p, uint32_t stream, uint32_t event, ps_wait_reason reason,
                   uint32_t dep_node, uint32_t *step_out)
{
  uint32_t s;
  int rc = ps__plan_add_step (p, PS_OP_EVENT_WAIT, stream, NULL, 0, event, PS_NONE, PS_NONE,
                              &s);
  if (rc < 0)
    return rc;
  p->steps[s].synthetic = 1;
  p->steps[s].wait = (uint8_t) reason;
  p->steps[s].dep_node = dep_node;
  p->n_event_pairs++;
  if (step_out)
    *step_out = s;
  return 0;
}

int
ps__plan_pool_end_to_end (ps_plan *p, ps_diag *diag)
{
  const ps_graph *g = p->graph;
  uint64_t end = 0;
  for (uint32_t b = 0; b < g->n_buffers; b++) {
    if (g->buffers[b].flags & PS_BUF_EXTERNAL) {
      p->offsets[b] = UINT64_MAX;
      continue;
    }
    uint64_t bytes = g->buffers[b].bytes;
    if (end > UINT64_MAX - (PS_POOL_ALIGN - 1))
      goto too_big;
    uint64_t off = (end + PS_POOL_ALIGN - 1) & ~(uint64_t) (PS_POOL_ALIGN - 1);
    if (bytes > UINT64_MAX - off)
      goto too_big;
    p->offsets[b] = off;
    end = off + bytes;
  }
  p->pool_bytes = end;
  return 0;
too_big:
  if (diag)
    ps_diag_error (diag, 0, 0, "the buffers do not fit in a 64-bit memory pool");
  return PS_ELIMIT;
}

void
ps__plan_count (ps_plan *p, uint32_t kernel_nodes)
{
  uint32_t max_stream = 0, kernel_steps = 0;
  for (uint32_t s = 0; s < p->n_steps; s++) {
    if (p->steps[s].stream + 1u > max_stream)
      max_stream = p->steps[s].stream + 1u;
    if (p->steps[s].op == PS_OP_KERNEL)
      kernel_steps++;
  }
  p->streams_used = max_stream;
  p->kernels_before = kernel_nodes;
  p->kernels_after = kernel_steps;
}

int
ps__plan_finish (ps_plan *p)
{
  ps__plan_count (p, ps__graph_kernel_nodes (p->graph));
  return 0;
}

bool
ps__plan_unpinned (const ps_graph *g, uint32_t streams)
{
  return g->measured && ps_graph_pinned_streams (g) > streams;
}

int
ps__plan_check_options (const ps_graph *g, const ps_plan_options *o, ps_diag *diag)
{
  if (o->streams < 1 || o->streams > PS_MAX_STREAMS) {
    if (diag)
      ps_diag_error (diag, 0, 0, "the stream count must be between 1 and %u, not %u",
                     PS_MAX_STREAMS, o->streams);
    return PS_EUSAGE;
  }
  if (ps__plan_unpinned (g, o->streams)) {
    uint32_t pinned = ps_graph_pinned_streams (g);
    if (diag)
      ps_diag_warn (diag, 0, 0,
                    "the trace ran on %u streams; planned on at most %u, each recorded "
                    "stream's order kept as dependencies (--streams %u keeps its streams)",
                    pinned, o->streams, pinned);
    return 0;
  }
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    int32_t pin = g->nodes[v].stream;
    if (pin >= 0 && (uint32_t) pin >= o->streams) {
      if (diag)
        ps_diag_error (diag, g->nodes[v].line, g->nodes[v].col,
                       "nodes[%u]: \"%s\" is pinned to stream %d but only %u stream%s %s allowed",
                       v, ps_node_name (g, v), pin, o->streams, o->streams == 1 ? "" : "s",
                       o->streams == 1 ? "is" : "are");
      return PS_EPIN;
    }
  }
  return 0;
}
