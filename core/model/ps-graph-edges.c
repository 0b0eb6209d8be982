/* ps-graph-edges.c: the dependency edges of a loaded graph, per the
 * Dependencies section of spec/graph-format.md, built in one pass in
 * program order, then stored in CSR form both ways.
 *
 * Every edge found while visiting node v ends at v, so the raw edge list
 * comes out grouped by destination in increasing order; parallel edges are
 * merged on the fly (a stamp per source).  One counting pass by source then
 * gives successor lists sorted by node id, and walking those in source
 * order gives sorted predecessor lists: no comparison sort anywhere. */
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-graph-private.h"

typedef struct builder {
  uint32_t v;        /* the node being visited */
  uint32_t *stamp;   /* per source: the last destination it got an edge to */
  uint32_t *pos;     /* per source: that edge's index in src/kind */
  uint32_t *src;     /* raw edges: source, grouped by destination */
  uint8_t *kind;
  uint32_t n, cap, cap_kind;
  bool too_many;
} builder;

static int
add_edge (builder *b, uint32_t u, uint8_t kind)
{
  if (u == b->v || u == PS_NONE)
    return 0;
  if (b->stamp[u] == b->v) {
    b->kind[b->pos[u]] |= kind;
    return 0;
  }
  if (b->n == b->cap) {
    if (b->n >= PS_MAX_EDGES) {
      b->too_many = true;
      return PS_ELIMIT;
    }
    uint32_t cap_kind = b->cap_kind;
    int ret = ps_array_grow (&b->src, &b->cap, (uint64_t) b->n + 1, sizeof *b->src,
                             PS_MAX_EDGES);
    if (ret == 0)
      ret = ps_array_grow (&b->kind, &cap_kind, b->cap, 1, PS_MAX_EDGES);
    if (ret < 0) {
      b->too_many = ret == PS_ELIMIT;
      return ret;
    }
    b->cap_kind = cap_kind;
  }
  b->stamp[u] = b->v;
  b->pos[u] = b->n;
  b->src[b->n] = u;
  b->kind[b->n] = kind;
  b->n++;
  return 0;
}

/* For each node, the conditionals that list it in a branch, in increasing
 * order: off[n + 1] and ids into *out. */
static int
branch_index (const ps_graph *g, uint32_t **off_out, uint32_t **ids_out)
{
  uint32_t n = g->n_nodes;
  uint32_t *off = calloc ((size_t) n + 1, sizeof *off);
  uint32_t *ids = malloc (((size_t) g->n_cond_members + 1) * sizeof *ids);
  if (!off || !ids) {
    free (off);
    free (ids);
    return PS_ENOMEM;
  }
  for (uint32_t i = 0; i < g->n_cond_members; i++)
    off[g->cond_members[i] + 1]++;
  for (uint32_t v = 0; v < n; v++)
    off[v + 1] += off[v];
  uint32_t *fill = malloc ((size_t) n * sizeof *fill);
  if (!fill) {
    free (off);
    free (ids);
    return PS_ENOMEM;
  }
  memcpy (fill, off, (size_t) n * sizeof *fill);
  for (uint32_t c = 0; c < n; c++) {
    if (g->nodes[c].op != PS_OP_CONDITIONAL)
      continue;
    const ps_cond *cd = &g->conds[g->nodes[c].aux];
    uint32_t count = cd->then_count + cd->else_count;
    /* then and else ranges are adjacent in cond_members. */
    for (uint32_t i = 0; i < count; i++)
      ids[fill[g->cond_members[cd->then_begin + i]]++] = c;
  }
  free (fill);
  *off_out = off;
  *ids_out = ids;
  return 0;
}

/* Visits the nodes in program order and collects the raw edges. */
static int
collect (ps_graph *g, builder *b, uint32_t *raw_off, const uint32_t *after_pairs,
         uint32_t n_after, const uint32_t *boff, const uint32_t *bids, ps_diag *diag)
{
  uint32_t n = g->n_nodes, nb = g->n_buffers;
  uint32_t n_reads = 0;
  for (uint32_t v = 0; v < n; v++)
    n_reads += g->nodes[v].reads_count;
  uint32_t *last_writer = malloc (((size_t) nb + 1) * sizeof *last_writer);
  uint32_t *head = malloc (((size_t) nb + 1) * sizeof *head);
  uint8_t *warned = calloc ((size_t) nb + 1, 1);
  uint32_t *rnode = malloc (((size_t) n_reads + 1) * sizeof *rnode);
  uint32_t *rnext = malloc (((size_t) n_reads + 1) * sizeof *rnext);
  uint32_t *last_record = malloc (((size_t) g->n_events + 1) * sizeof *last_record);
  int ret = 0;
  if (!last_writer || !head || !warned || !rnode || !rnext || !last_record) {
    ret = PS_ENOMEM;
    goto out;
  }
  for (uint32_t i = 0; i < nb; i++)
    last_writer[i] = head[i] = PS_NONE;
  for (uint32_t i = 0; i < g->n_events; i++)
    last_record[i] = PS_NONE;

  uint32_t n_rec = 0, ap = 0, barrier = PS_NONE;
  for (uint32_t v = 0; v < n && ret == 0; v++) {
    const ps_node *nd = &g->nodes[v];
    b->v = v;
    raw_off[v] = b->n;

    /* 1. Buffer hazards: reads first, so that a node that reads and writes
     * a buffer depends on the previous writer and not on itself. */
    for (uint32_t i = 0; i < nd->reads_count && ret == 0; i++) {
      uint32_t buf = g->access[nd->reads_begin + i];
      uint32_t w = last_writer[buf];
      if (w != PS_NONE) {
        ret = add_edge (b, w, PS_EDGE_RAW);
      } else if (!(g->buffers[buf].flags & PS_BUF_EXTERNAL) && !warned[buf]) {
        warned[buf] = 1;
        ps_diag_warn (diag, nd->line, nd->col,
                      "nodes[%u]: \"%s\" reads buffer \"%s\", which no earlier node writes "
                      "(uninitialised memory)",
                      v, ps_node_name (g, v), ps_buffer_name (g, buf));
      }
      if (head[buf] == PS_NONE || rnode[head[buf]] != v) {
        rnode[n_rec] = v;
        rnext[n_rec] = head[buf];
        head[buf] = n_rec++;
      }
    }
    for (uint32_t i = 0; i < nd->writes_count && ret == 0; i++) {
      uint32_t buf = g->access[nd->writes_begin + i];
      ret = add_edge (b, last_writer[buf], PS_EDGE_WAW);
      for (uint32_t r = head[buf]; r != PS_NONE && ret == 0; r = rnext[r])
        ret = add_edge (b, rnode[r], PS_EDGE_WAR);
      last_writer[buf] = v;
      head[buf] = PS_NONE;
    }

    /* 2. after: the pairs were recorded in program order of their target. */
    for (; ap < n_after && after_pairs[2 * ap + 1] == v && ret == 0; ap++)
      ret = add_edge (b, after_pairs[2 * ap], PS_EDGE_AFTER);

    /* 3. Events: a wait depends on the latest earlier record. */
    if (nd->op == PS_OP_EVENT_WAIT && nd->aux != PS_NONE && ret == 0)
      ret = add_edge (b, last_record[nd->aux], PS_EDGE_EVENT);
    else if (nd->op == PS_OP_EVENT_RECORD && nd->aux != PS_NONE)
      last_record[nd->aux] = v;

    /* 4. Barriers, reduced: see ps-graph.h. */
    if (nd->op == PS_OP_BARRIER) {
      for (uint32_t u = barrier == PS_NONE ? 0 : barrier; u < v && ret == 0; u++)
        ret = add_edge (b, u, PS_EDGE_BARRIER);
      barrier = v;
    } else if (barrier != PS_NONE && ret == 0) {
      ret = add_edge (b, barrier, PS_EDGE_BARRIER);
    }

    /* 5. Conditional -> branch member. */
    if (boff)
      for (uint32_t i = boff[v]; i < boff[v + 1] && ret == 0; i++)
        ret = add_edge (b, bids[i], PS_EDGE_BRANCH);
  }
  raw_off[n] = b->n;

out:
  free (last_writer);
  free (head);
  free (warned);
  free (rnode);
  free (rnext);
  free (last_record);
  return ret;
}

int
ps__graph_build_edges (ps_graph *g, const uint32_t *after_pairs, uint32_t n_after,
                       ps_diag *diag)
{
  uint32_t n = g->n_nodes;
  builder b = { 0 };
  uint32_t *boff = NULL, *bids = NULL;
  uint32_t *raw_off = malloc (((size_t) n + 1) * sizeof *raw_off);
  b.stamp = malloc (((size_t) n + 1) * sizeof *b.stamp);
  b.pos = malloc (((size_t) n + 1) * sizeof *b.pos);
  int ret = 0;
  if (!raw_off || !b.stamp || !b.pos) {
    ret = PS_ENOMEM;
    goto fail;
  }
  for (uint32_t v = 0; v < n; v++)
    b.stamp[v] = PS_NONE;
  if (g->n_conds && (ret = branch_index (g, &boff, &bids)) < 0)
    goto fail;
  ret = collect (g, &b, raw_off, after_pairs, n_after, boff, bids, diag);
  free (boff);
  free (bids);
  boff = bids = NULL;
  if (ret < 0) {
    if (b.too_many)
      ps_diag_error (diag, 0, 0, "too many edges (limit %u)", (unsigned) PS_MAX_EDGES);
    goto fail;
  }

  /* Successors: count per source, then place in destination order. */
  uint32_t m = b.n;
  uint32_t *succ_off = calloc ((size_t) n + 1, sizeof *succ_off);
  uint32_t *succ = malloc (((size_t) m + 1) * sizeof *succ);
  uint8_t *succ_kind = malloc ((size_t) m + 1);
  if (!succ_off || !succ || !succ_kind) {
    free (succ_off);
    free (succ);
    free (succ_kind);
    ret = PS_ENOMEM;
    goto fail;
  }
  for (uint32_t e = 0; e < m; e++)
    succ_off[b.src[e] + 1]++;
  for (uint32_t v = 0; v < n; v++)
    succ_off[v + 1] += succ_off[v];
  uint32_t *fill = b.stamp; /* reused: n entries */
  memcpy (fill, succ_off, (size_t) n * sizeof *fill);
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t e = raw_off[v]; e < raw_off[v + 1]; e++) {
      uint32_t p = fill[b.src[e]]++;
      succ[p] = v;
      succ_kind[p] = b.kind[e];
    }

  /* Predecessors: same counts as the raw lists; walking the successors in
   * source order fills each list sorted.  The raw arrays are reused. */
  uint32_t *pred = b.src, *pfill = b.pos;
  uint8_t *pred_kind = b.kind;
  memcpy (pfill, raw_off, (size_t) n * sizeof *pfill);
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t i = succ_off[u]; i < succ_off[u + 1]; i++) {
      uint32_t p = pfill[succ[i]]++;
      pred[p] = u;
      pred_kind[p] = succ_kind[i];
    }
  if (m > 0) {
    uint32_t *np = realloc (pred, (size_t) m * sizeof *pred);
    uint8_t *nk = realloc (pred_kind, m);
    pred = np ? np : pred;
    pred_kind = nk ? nk : pred_kind;
  }

  g->n_edges = m;
  g->succ_off = succ_off;
  g->succ = succ;
  g->succ_kind = succ_kind;
  g->pred_off = raw_off;
  g->pred = pred;
  g->pred_kind = pred_kind;
  free (b.stamp);
  free (b.pos);
  return 0;

fail:
  free (boff);
  free (bids);
  free (raw_off);
  free (b.stamp);
  free (b.pos);
  free (b.src);
  free (b.kind);
  return ret;
}
