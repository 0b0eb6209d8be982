/* ps-test-graph.h: builds ps_graph structures directly in C for tests, so
 * that analysis, planning and verification can be tested on exact,
 * hand-made graphs without going through the loader.
 *
 *   tg t;  tg_init (&t, "diamond");
 *   uint32_t x = tg_buf (&t, "x", 1024, false);
 *   uint32_t a = tg_kernel (&t, "a", "gemm");  tg_write (&t, a, x);
 *   uint32_t b = tg_node (&t, "b", PS_OP_MEMCPY);  tg_read (&t, b, x);
 *   tg_finish (&t, true);    // true: derive RAW/WAW/WAR and event edges
 *   ... use t.g ...
 *   tg_free (&t);
 *
 * Explicit edges (tg_edge) are kept as given; tg_finish builds the CSR in
 * both directions, deduplicated with merged kinds, sorted by node id. */
#ifndef PS_TEST_GRAPH_H
#define PS_TEST_GRAPH_H

#include <stdlib.h>
#include <string.h>

#include "ps-graph.h"

typedef struct tg_access {
  uint32_t node, buf;
  uint8_t write;
} tg_access;

typedef struct tg_edge_rec {
  uint32_t u, v;
  uint8_t kind;
} tg_edge_rec;

typedef struct tg {
  ps_graph g;
  uint32_t nodes_cap, bufs_cap, kernels_cap, events_cap;
  tg_access *acc;
  uint32_t n_acc, acc_cap;
  tg_edge_rec *edges;
  uint32_t n_edges, edges_cap;
} tg;

static inline void *
tg__grow (void *p, uint32_t *cap, uint32_t need, size_t elem)
{
  if (need <= *cap)
    return p;
  uint32_t c = *cap ? *cap : 8;
  while (c < need)
    c *= 2;
  void *n = realloc (p, (size_t) c * elem);
  if (!n)
    abort ();
  *cap = c;
  return n;
}

static inline uint32_t
tg_str (tg *t, const char *s)
{
  size_t len = strlen (s) + 1;
  t->g.strings = tg__grow (t->g.strings, &t->g.strings_cap, t->g.strings_len + (uint32_t) len, 1);
  memcpy (t->g.strings + t->g.strings_len, s, len);
  uint32_t off = t->g.strings_len;
  t->g.strings_len += (uint32_t) len;
  return off;
}

static inline void
tg_init (tg *t, const char *name)
{
  memset (t, 0, sizeof *t);
  ps_graph_init (&t->g);
  t->g.name = strdup (name);
}

static inline uint32_t
tg_buf (tg *t, const char *name, uint64_t bytes, bool external)
{
  ps_graph *g = &t->g;
  g->buffers = tg__grow (g->buffers, &t->bufs_cap, g->n_buffers + 1, sizeof *g->buffers);
  ps_buffer *b = &g->buffers[g->n_buffers];
  memset (b, 0, sizeof *b);
  b->name = tg_str (t, name);
  b->bytes = bytes;
  b->flags = external ? PS_BUF_EXTERNAL : 0;
  return g->n_buffers++;
}

static inline uint32_t
tg_node (tg *t, const char *name, ps_op op)
{
  ps_graph *g = &t->g;
  g->nodes = tg__grow (g->nodes, &t->nodes_cap, g->n_nodes + 1, sizeof *g->nodes);
  ps_node *n = &g->nodes[g->n_nodes];
  memset (n, 0, sizeof *n);
  n->name = tg_str (t, name);
  n->op = (uint8_t) op;
  n->stream = -1;
  n->aux = PS_NONE;
  n->cond = PS_NONE;
  n->src_device = n->dst_device = -1;
  n->line = g->n_nodes + 2;
  n->col = 5;
  return g->n_nodes++;
}

static inline uint32_t
tg_kernel (tg *t, const char *name, const char *function)
{
  ps_graph *g = &t->g;
  uint32_t v = tg_node (t, name, PS_OP_KERNEL);
  g->kernels = tg__grow (g->kernels, &t->kernels_cap, g->n_kernels + 1, sizeof *g->kernels);
  ps_kernel *k = &g->kernels[g->n_kernels];
  memset (k, 0, sizeof *k);
  k->function = tg_str (t, function);
  for (int i = 0; i < 3; i++)
    k->grid[i] = k->block[i] = 1;
  k->module = PS_NONE;
  k->alpha = 1;
  k->flops = -1;
  k->traffic_bytes = -1;
  g->nodes[v].aux = g->n_kernels++;
  return v;
}

static inline uint32_t
tg_event (tg *t, const char *name)
{
  ps_graph *g = &t->g;
  g->event_names = tg__grow (g->event_names, &t->events_cap, g->n_events + 1,
                             sizeof *g->event_names);
  g->event_names[g->n_events] = tg_str (t, name);
  return g->n_events++;
}

/* A user event_record or event_wait node of event ev. */
static inline uint32_t
tg_event_node (tg *t, const char *name, ps_op op, uint32_t ev)
{
  uint32_t v = tg_node (t, name, op);
  t->g.nodes[v].aux = ev;
  return v;
}

static inline void
tg_cost (tg *t, uint32_t v, double ns)
{
  t->g.nodes[v].cost_ns = ns;
  t->g.nodes[v].flags |= PS_NODE_HAS_COST;
}

static inline void
tg_pin (tg *t, uint32_t v, int32_t stream)
{
  t->g.nodes[v].stream = stream;
}

static inline void
tg__access (tg *t, uint32_t v, uint32_t b, uint8_t write)
{
  t->acc = tg__grow (t->acc, &t->acc_cap, t->n_acc + 1, sizeof *t->acc);
  t->acc[t->n_acc++] = (tg_access){ v, b, write };
}
static inline void
tg_read (tg *t, uint32_t v, uint32_t b)
{
  tg__access (t, v, b, 0);
}
static inline void
tg_write (tg *t, uint32_t v, uint32_t b)
{
  tg__access (t, v, b, 1);
}

static inline void
tg_edge (tg *t, uint32_t u, uint32_t v, uint8_t kind)
{
  t->edges = tg__grow (t->edges, &t->edges_cap, t->n_edges + 1, sizeof *t->edges);
  t->edges[t->n_edges++] = (tg_edge_rec){ u, v, kind };
}

static inline int
tg__cmp_edge (const void *a, const void *b)
{
  const tg_edge_rec *x = a, *y = b;
  if (x->u != y->u)
    return x->u < y->u ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v;
}

/* Fills access ranges, optionally derives the edges of graph-format.md's
 * buffer hazard and event rules (in program order), and builds the CSR. */
static inline void
tg_finish (tg *t, bool hazards)
{
  ps_graph *g = &t->g;
  uint32_t n = g->n_nodes, B = g->n_buffers;
  g->access = malloc ((t->n_acc ? t->n_acc : 1) * sizeof *g->access);
  g->n_access = t->n_acc;
  /* Counting sort of the accesses by (node, read before write). */
  uint32_t *start = calloc ((size_t) 2 * n + 1, sizeof *start);
  for (uint32_t i = 0; i < t->n_acc; i++)
    start[2 * t->acc[i].node + t->acc[i].write + 1]++;
  for (uint32_t k = 0; k < 2 * n; k++)
    start[k + 1] += start[k];
  for (uint32_t v = 0; v < n; v++) {
    g->nodes[v].reads_begin = start[2 * v];
    g->nodes[v].reads_count = start[2 * v + 1] - start[2 * v];
    g->nodes[v].writes_begin = start[2 * v + 1];
    g->nodes[v].writes_count = start[2 * v + 2] - start[2 * v + 1];
  }
  for (uint32_t i = 0; i < t->n_acc; i++)
    g->access[start[2 * t->acc[i].node + t->acc[i].write]++] = t->acc[i].buf;
  free (start);
  if (hazards) {
    uint32_t *last_writer = malloc ((B ? B : 1) * sizeof *last_writer);
    uint32_t *last_record = malloc ((g->n_events ? g->n_events : 1) * sizeof *last_record);
    /* Readers since the last write of each buffer, as linked lists. */
    uint32_t *readers = malloc ((B ? B : 1) * sizeof *readers);
    uint32_t *rnode = malloc ((t->n_acc ? t->n_acc : 1) * sizeof *rnode);
    uint32_t *rnext = malloc ((t->n_acc ? t->n_acc : 1) * sizeof *rnext);
    uint32_t n_r = 0;
    for (uint32_t b = 0; b < B; b++)
      last_writer[b] = readers[b] = PS_NONE;
    for (uint32_t e = 0; e < g->n_events; e++)
      last_record[e] = PS_NONE;
    for (uint32_t v = 0; v < n; v++) {
      const ps_node *nv = &g->nodes[v];
      for (uint32_t i = 0; i < nv->reads_count; i++) {
        uint32_t b = g->access[nv->reads_begin + i];
        if (last_writer[b] != PS_NONE && last_writer[b] != v)
          tg_edge (t, last_writer[b], v, PS_EDGE_RAW);
        rnode[n_r] = v;
        rnext[n_r] = readers[b];
        readers[b] = n_r++;
      }
      for (uint32_t i = 0; i < nv->writes_count; i++) {
        uint32_t b = g->access[nv->writes_begin + i];
        if (last_writer[b] != PS_NONE && last_writer[b] != v)
          tg_edge (t, last_writer[b], v, PS_EDGE_WAW);
        for (uint32_t r = readers[b]; r != PS_NONE; r = rnext[r])
          if (rnode[r] != v)
            tg_edge (t, rnode[r], v, PS_EDGE_WAR);
        readers[b] = PS_NONE;
        last_writer[b] = v;
      }
      if (nv->op == PS_OP_EVENT_RECORD)
        last_record[nv->aux] = v;
      else if (nv->op == PS_OP_EVENT_WAIT && last_record[nv->aux] != PS_NONE)
        tg_edge (t, last_record[nv->aux], v, PS_EDGE_EVENT);
    }
    free (last_writer);
    free (last_record);
    free (readers);
    free (rnode);
    free (rnext);
  }
  if (t->n_edges > 0)
    qsort (t->edges, t->n_edges, sizeof *t->edges, tg__cmp_edge);
  uint32_t m = 0;
  for (uint32_t i = 0; i < t->n_edges; i++) {
    if (m > 0 && t->edges[m - 1].u == t->edges[i].u && t->edges[m - 1].v == t->edges[i].v)
      t->edges[m - 1].kind |= t->edges[i].kind;
    else
      t->edges[m++] = t->edges[i];
  }
  g->n_edges = m;
  g->succ_off = calloc (n + 1, sizeof *g->succ_off);
  g->pred_off = calloc (n + 1, sizeof *g->pred_off);
  g->succ = malloc ((m ? m : 1) * sizeof *g->succ);
  g->pred = malloc ((m ? m : 1) * sizeof *g->pred);
  g->succ_kind = malloc (m ? m : 1);
  g->pred_kind = malloc (m ? m : 1);
  for (uint32_t i = 0; i < m; i++) {
    g->succ_off[t->edges[i].u + 1]++;
    g->pred_off[t->edges[i].v + 1]++;
  }
  for (uint32_t v = 0; v < n; v++) {
    g->succ_off[v + 1] += g->succ_off[v];
    g->pred_off[v + 1] += g->pred_off[v];
  }
  /* Edges are sorted by (u, v), so successor lists come out sorted; the
   * predecessor lists are filled in u order, so they are sorted too. */
  uint32_t *fill = calloc (n + 1, sizeof *fill);
  for (uint32_t i = 0; i < m; i++) {
    g->succ[i] = t->edges[i].v;
    g->succ_kind[i] = t->edges[i].kind;
    uint32_t v = t->edges[i].v, at = g->pred_off[v] + fill[v]++;
    g->pred[at] = t->edges[i].u;
    g->pred_kind[at] = t->edges[i].kind;
  }
  free (fill);
}

static inline void
tg_free (tg *t)
{
  ps_graph_free (&t->g);
  free (t->acc);
  free (t->edges);
  memset (t, 0, sizeof *t);
}

#endif
