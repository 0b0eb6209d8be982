/* ps-graph-output.c: a graph as a planscope graph file (see
 * ps-graph-output.h). */
#include "ps-graph-output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-error.h"
#include "ps-jsonw.h"

static void
dims (FILE *out, const char *key, const uint32_t d[3])
{
  if (d[1] == 1 && d[2] == 1)
    fprintf (out, ", \"%s\": %u", key, d[0]);
  else
    fprintf (out, ", \"%s\": [%u, %u, %u]", key, d[0], d[1], d[2]);
}

static void
names (FILE *out, const char *key, const ps_graph *g, const uint32_t *ids, uint32_t n,
       bool buffers)
{
  if (n == 0)
    return;
  fprintf (out, ", \"%s\": [", key);
  for (uint32_t i = 0; i < n; i++) {
    if (i)
      fputs (", ", out);
    ps_jsonw_string (out, buffers ? ps_buffer_name (g, ids[i]) : ps_node_name (g, ids[i]));
  }
  fputs ("]", out);
}

/* The buffer a trace's copy or memset gets: "NODE (dst)" / "(src)". */
static void
own_buffer (FILE *out, const ps_graph *g, uint32_t v, const char *end, bool *first)
{
  char name[PS_MAX_NAME + 16];
  snprintf (name, sizeof name, "%.4000s (%s)", ps_node_name (g, v), end);
  fputs (*first ? "\n    {\"name\": " : ",\n    {\"name\": ", out);
  *first = false;
  ps_jsonw_string (out, name);
  fprintf (out, ", \"bytes\": %llu, \"external\": true}",
           (unsigned long long) (g->nodes[v].bytes ? g->nodes[v].bytes : 1));
}

static bool
needs_own (const ps_node *nd)
{
  return (nd->op == PS_OP_MEMCPY || nd->op == PS_OP_MEMSET) && nd->reads_count == 0 &&
         nd->writes_count == 0;
}

/* Whether the format can hold node v (a dump's empty nodes and node types
 * planscope does not model it cannot). */
static bool
written (const ps_node *nd)
{
  return nd->op != PS_OP_EMPTY && nd->op != PS_OP_OPAQUE;
}

static void
put_name (FILE *out, const ps_graph *g, uint32_t v, bool *first)
{
  fputs (*first ? "" : ", ", out);
  *first = false;
  ps_jsonw_string (out, ps_node_name (g, v));
}

/* v's "after": its predecessors whose order no buffer, event, barrier or
 * branch gives, and, through nodes the file leaves out, every written
 * node before them.  stamp (per node, v + 1 when seen for v) and stack
 * (room for every node) are scratch. */
static void
put_after (FILE *out, const ps_graph *g, uint32_t v, uint32_t *stamp, uint32_t *stack)
{
  uint32_t mark = v + 1, sp = 0;
  bool first = true, open = false;
  stack[sp++] = v;
  while (sp > 0) {
    uint32_t b = stack[--sp];
    for (uint32_t i = g->pred_off[b]; i < g->pred_off[b + 1]; i++) {
      uint32_t p = g->pred[i];
      bool w = written (&g->nodes[p]);
      /* v's own predecessors only where nothing else gives their order. */
      if (stamp[p] == mark
          || (b == v && w && !(g->pred_kind[i] & (PS_EDGE_AFTER | PS_EDGE_IMPORTED))))
        continue;
      stamp[p] = mark;
      if (!w) {
        stack[sp++] = p;
        continue;
      }
      if (!open)
        fputs (", \"after\": [", out);
      open = true;
      put_name (out, g, p, &first);
    }
  }
  if (open)
    fputs ("]", out);
}

/* A conditional's branch: the members the file holds. */
static void
put_branch (FILE *out, const ps_graph *g, const char *key, uint32_t begin, uint32_t count)
{
  bool first = true;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t m = g->cond_members[begin + i];
    if (!written (&g->nodes[m]))
      continue;
    if (first)
      fprintf (out, ", \"%s\": [", key);
    put_name (out, g, m, &first);
  }
  if (!first)
    fputs ("]", out);
}

/* What op-specific keys node v has. */
static void
put_op_keys (FILE *out, const ps_graph *g, uint32_t v)
{
  const ps_node *nd = &g->nodes[v];
  switch ((ps_op) nd->op) {
  case PS_OP_KERNEL:
    if (nd->aux < g->n_kernels) {
      const ps_kernel *k = &g->kernels[nd->aux];
      fputs (", \"function\": ", out);
      ps_jsonw_string (out, ps_graph_str (g, k->function));
      dims (out, "grid", k->grid);
      dims (out, "block", k->block);
      if (k->smem)
        fprintf (out, ", \"smem\": %u", k->smem);
    }
    break;
  case PS_OP_MEMCPY:
    fprintf (out, ", \"dir\": \"%s\"", ps_copy_dir_name ((ps_copy_dir) nd->dir));
    break;
  case PS_OP_MEMSET:
    if (nd->value)
      fprintf (out, ", \"value\": %u", nd->value);
    break;
  case PS_OP_HOST:
    if (nd->aux != PS_NONE && nd->aux < g->strings_len) {
      fputs (", \"label\": ", out);
      ps_jsonw_string (out, ps_graph_str (g, nd->aux));
    }
    break;
  case PS_OP_EVENT_RECORD:
  case PS_OP_EVENT_WAIT:
    if (nd->aux < g->n_events) {
      fputs (", \"event\": ", out);
      ps_jsonw_string (out, ps_graph_str (g, g->event_names[nd->aux]));
    }
    break;
  case PS_OP_CONDITIONAL:
    if (nd->aux < g->n_conds) {
      const ps_cond *c = &g->conds[nd->aux];
      if (c->condition < g->n_buffers) {
        fputs (", \"condition\": ", out);
        ps_jsonw_string (out, ps_buffer_name (g, c->condition));
      }
      put_branch (out, g, "then", c->then_begin, c->then_count);
      put_branch (out, g, "else", c->else_begin, c->else_count);
      if (c->assume != PS_ASSUME_BOTH)
        fprintf (out, ", \"assume\": \"%s\"", ps_assume_name ((ps_assume) c->assume));
    }
    break;
  default:
    break;
  }
}

void
ps_graph_write_check (const ps_graph *g, ps_graph_write_info *info)
{
  ps_graph_write_info w = { 0, 0, 0, PS_NONE };
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *nd = &g->nodes[v];
    if (g->measured && g->delay_ns)
      w.dropped_ns += g->delay_ns[v];
    w.bridged += !written (nd);
    if (nd->op == PS_OP_KERNEL && nd->aux < g->n_kernels && g->kernels[nd->aux].launch_unknown
        && !(nd->flags & PS_NODE_HAS_COST) && w.no_launch++ == 0)
      w.first_no_launch = v;
  }
  *info = w;
}

int
ps_graph_write_json (const ps_graph *g, FILE *out, ps_graph_write_info *info)
{
  ps_graph_write_info w;
  ps_graph_write_check (g, &w);
  if (info)
    *info = w;
  if (w.no_launch)
    return PS_EINVAL;
  uint32_t *stamp = calloc ((size_t) g->n_nodes + 1, sizeof *stamp);
  uint32_t *stack = malloc (((size_t) g->n_nodes + 1) * sizeof *stack);
  if (!stamp || !stack) {
    free (stamp);
    free (stack);
    return PS_ENOMEM;
  }
  fputs ("{\n  \"format\": \"planscope-graph\", \"version\": 1, \"name\": ", out);
  ps_jsonw_string (out, g->name ? g->name : "");
  if (g->device) {
    fputs (", \"device\": ", out);
    ps_jsonw_string (out, g->device);
  }
  fputs (",\n  \"buffers\": [", out);
  bool first = true;
  for (uint32_t b = 0; b < g->n_buffers; b++) {
    const ps_buffer *bf = &g->buffers[b];
    fputs (first ? "\n    {\"name\": " : ",\n    {\"name\": ", out);
    first = false;
    ps_jsonw_string (out, ps_buffer_name (g, b));
    fprintf (out, ", \"bytes\": %llu%s, \"dtype\": \"%s\"}", (unsigned long long) bf->bytes,
             bf->flags & PS_BUF_EXTERNAL ? ", \"external\": true" : "",
             ps_dtype_name ((ps_dtype) bf->dtype));
  }
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *nd = &g->nodes[v];
    if (!needs_own (nd))
      continue;
    if (nd->op == PS_OP_MEMSET || nd->dir != PS_COPY_D2H)
      own_buffer (out, g, v, "dst", &first);
    if (nd->op == PS_OP_MEMCPY && nd->dir != PS_COPY_H2D)
      own_buffer (out, g, v, "src", &first);
  }
  fputs ("\n  ],\n  \"nodes\": [", out);
  first = true;
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *nd = &g->nodes[v];
    if (!written (nd))
      continue;
    fputs (first ? "\n    {\"name\": " : ",\n    {\"name\": ", out);
    first = false;
    ps_jsonw_string (out, ps_node_name (g, v));
    fprintf (out, ", \"op\": \"%s\"", ps_op_name ((ps_op) nd->op));
    if (nd->stream >= 0)
      fprintf (out, ", \"stream\": %d", nd->stream);
    if (nd->flags & PS_NODE_HAS_COST) {
      fputs (", \"cost_ns\": ", out);
      ps_jsonw_number (out, isfinite (nd->cost_ns) ? round (nd->cost_ns * 1000) / 1000 : 0);
    }
    put_op_keys (out, g, v);
    if (needs_own (nd)) {
      char name[PS_MAX_NAME + 16];
      if (nd->op == PS_OP_MEMCPY && nd->dir != PS_COPY_H2D) {
        snprintf (name, sizeof name, "%.4000s (src)", ps_node_name (g, v));
        fputs (", \"reads\": [", out);
        ps_jsonw_string (out, name);
        fputs ("]", out);
      }
      if (nd->op == PS_OP_MEMSET || nd->dir != PS_COPY_D2H) {
        snprintf (name, sizeof name, "%.4000s (dst)", ps_node_name (g, v));
        fputs (", \"writes\": [", out);
        ps_jsonw_string (out, name);
        fputs ("]", out);
      }
    } else if (nd->op != PS_OP_CONDITIONAL) {
      /* A conditional's one read is its condition. */
      if (nd->reads_count)
        names (out, "reads", g, g->access + nd->reads_begin, nd->reads_count, true);
      if (nd->writes_count)
        names (out, "writes", g, g->access + nd->writes_begin, nd->writes_count, true);
    }
    put_after (out, g, v, stamp, stack);
    fputs ("}", out);
  }
  fputs ("\n  ]\n}\n", out);
  free (stamp);
  free (stack);
  return ferror (out) ? PS_EIO : 0;
}
