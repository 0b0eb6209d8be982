/* ps-graph-output.c: a graph as a planscope graph file (see
 * ps-graph-output.h). */
#include "ps-graph-output.h"

#include <math.h>
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

int
ps_graph_write_json (const ps_graph *g, FILE *out, double *dropped_ns)
{
  double dropped = 0;
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    ps_op op = (ps_op) g->nodes[v].op;
    if (op != PS_OP_KERNEL && op != PS_OP_MEMCPY && op != PS_OP_MEMSET && op != PS_OP_HOST)
      return PS_EINVAL;
    if (g->measured && g->delay_ns)
      dropped += g->delay_ns[v];
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
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *nd = &g->nodes[v];
    fputs (v ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
    ps_jsonw_string (out, ps_node_name (g, v));
    fprintf (out, ", \"op\": \"%s\"", ps_op_name ((ps_op) nd->op));
    if (nd->stream >= 0)
      fprintf (out, ", \"stream\": %d", nd->stream);
    if (nd->flags & PS_NODE_HAS_COST) {
      fputs (", \"cost_ns\": ", out);
      ps_jsonw_number (out, isfinite (nd->cost_ns) ? round (nd->cost_ns * 1000) / 1000 : 0);
    }
    if (nd->op == PS_OP_KERNEL && nd->aux < g->n_kernels) {
      const ps_kernel *k = &g->kernels[nd->aux];
      fputs (", \"function\": ", out);
      ps_jsonw_string (out, ps_graph_str (g, k->function));
      dims (out, "grid", k->grid);
      dims (out, "block", k->block);
      if (k->smem)
        fprintf (out, ", \"smem\": %u", k->smem);
    }
    if (nd->op == PS_OP_MEMCPY)
      fprintf (out, ", \"dir\": \"%s\"", ps_copy_dir_name ((ps_copy_dir) nd->dir));
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
    } else {
      if (nd->reads_count)
        names (out, "reads", g, g->access + nd->reads_begin, nd->reads_count, true);
      if (nd->writes_count)
        names (out, "writes", g, g->access + nd->writes_begin, nd->writes_count, true);
    }
    /* Dependencies no buffer gives. */
    uint32_t n_after = 0;
    for (uint32_t i = g->pred_off[v]; i < g->pred_off[v + 1]; i++)
      n_after += (g->pred_kind[i] & (PS_EDGE_AFTER | PS_EDGE_IMPORTED)) != 0;
    if (n_after) {
      fputs (", \"after\": [", out);
      bool f1 = true;
      for (uint32_t i = g->pred_off[v]; i < g->pred_off[v + 1]; i++) {
        if (!(g->pred_kind[i] & (PS_EDGE_AFTER | PS_EDGE_IMPORTED)))
          continue;
        if (!f1)
          fputs (", ", out);
        f1 = false;
        ps_jsonw_string (out, ps_node_name (g, g->pred[i]));
      }
      fputs ("]", out);
    }
    fputs ("}", out);
  }
  fputs ("\n  ]\n}\n", out);
  if (dropped_ns)
    *dropped_ns = dropped;
  return ferror (out) ? PS_EIO : 0;
}
