/* ps-dot-import.c: a cudaGraphDebugDotPrint dump as a planscope graph.
 *
 * Steps: parse the DOT text (ps-dot-parse.c); decide what every node is
 * from its label and shape (ps-dot-nodes.c, ps-dot-label.c); group nodes
 * by the CUDA graph (cluster) they belong to; expand child-graph nodes in
 * place, once per launch, and conditional nodes into the conditional
 * followed by its body graphs (its branches), without recursion: every
 * graph's expanded size,
 * and the relative positions of its first and last nodes (entries and
 * exits), are computed children first, so that each instance occupies a
 * contiguous range of node ids; then Kahn's algorithm gives the
 * topological order the graph is renumbered into, and the CSR edges are
 * built. */
#include "ps-dot-import.h"

#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-dot-import-private.h"

static uint32_t
sat_add (uint32_t a, uint32_t b)
{
  return a > PS__DOT_LIMIT - b ? PS__DOT_LIMIT : a + b;
}

static int
error_at (ps__dot_importer *im, uint32_t line, uint32_t col, const char *msg)
{
  im->errors++;
  ps_diag_error (im->diag, line, col, "%s", msg);
  return PS_EINVAL;
}

/* The graphs node `in` launches: a child graph, or a conditional's bodies. */
static uint32_t
launched (const ps__dot_importer *im, const ps__dot_info *in, const uint32_t **list)
{
  if (in->kind == PS__DOT_CHILD) {
    *list = &in->child;
    return 1;
  }
  if (in->kind == PS__DOT_COND && in->body_count > 0) {
    *list = im->bodies + in->body_begin;
    return in->body_count;
  }
  *list = NULL;
  return 0;
}

/* The planscope conditionals a CUDA conditional node becomes: one, but
 * one per case except the last for a SWITCH of more than two cases (case
 * k is the then branch of the k-th, the next one its else branch). */
static uint32_t
cond_nodes (const ps__dot_info *in)
{
  return in->ctype == PS_COND_SWITCH && in->body_count > 2 ? in->body_count - 1 : 1;
}

/* Which of the conditional's nodes (0-based) branches to body j, and
 * whether body j is its else branch. */
static uint32_t
body_owner (const ps__dot_info *in, uint32_t j, bool *is_else)
{
  uint32_t cn = cond_nodes (in);
  *is_else = in->ctype != PS_COND_WHILE && (cn == 1 ? j == 1 : j == in->body_count - 1);
  return cn == 1 ? 0 : j < cn ? j : cn - 1;
}

/* Marks graphs and assigns every node to one: the innermost enclosing
 * cluster that is a CUDA graph (top-level, or launched by a child or
 * conditional node). */
static void
assign_graphs (ps__dot_importer *im)
{
  ps__dot_doc *d = &im->doc;
  uint32_t top = d->n_clusters;
  for (uint32_t i = 0; i < d->n_nodes; i++) {
    const uint32_t *ls;
    uint32_t nl = launched (im, &im->info[i], &ls);
    for (uint32_t j = 0; j < nl; j++)
      im->graphs[ls[j]].referenced = true;
  }
  for (uint32_t c = 0; c < d->n_clusters; c++)
    im->graphs[c].is_graph = d->clusters[c].parent == PS_NONE || im->graphs[c].referenced;
  im->graphs[top].is_graph = true;
  for (uint32_t i = 0; i < d->n_nodes; i++) {
    uint32_t c = d->nodes[i].cluster;
    while (c != PS_NONE && !im->graphs[c].is_graph)
      c = d->clusters[c].parent;
    im->info[i].graph = c == PS_NONE ? top : c;
  }
}

/* Groups nodes and edges by graph (counting sort, order kept). */
static int
group_by_graph (ps__dot_importer *im)
{
  ps__dot_doc *d = &im->doc;
  uint32_t ng = im->n_graphs;
  im->gnodes = malloc (((size_t) d->n_nodes + 1) * sizeof *im->gnodes);
  im->gedges = malloc (((size_t) d->n_edges + 1) * sizeof *im->gedges);
  im->indeg = calloc ((size_t) d->n_nodes + 1, sizeof *im->indeg);
  im->outdeg = calloc ((size_t) d->n_nodes + 1, sizeof *im->outdeg);
  if (!im->gnodes || !im->gedges || !im->indeg || !im->outdeg)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < d->n_nodes; i++)
    im->graphs[im->info[i].graph].node_count++;
  uint32_t dropped = 0;
  const ps__dot_edge *first_dropped = NULL;
  for (uint32_t e = 0; e < d->n_edges; e++) {
    const ps__dot_edge *ed = &d->edges[e];
    uint32_t ga = im->info[ed->from].graph, gb = im->info[ed->to].graph;
    if (ga != gb) {
      if (!dropped++)
        first_dropped = ed;
      continue;
    }
    im->graphs[ga].edge_count++;
    im->outdeg[ed->from]++;
    im->indeg[ed->to]++;
  }
  if (dropped)
    ps_diag_warn (im->diag, first_dropped->line, first_dropped->col,
                  "edge \"%s\" -> \"%s\" joins nodes of two different CUDA graphs; ignored "
                  "(%u such edges in all)",
                  d->pool + d->nodes[first_dropped->from].id,
                  d->pool + d->nodes[first_dropped->to].id, dropped);
  uint32_t nb = 0, eb = 0;
  for (uint32_t gi = 0; gi < ng; gi++) {
    im->graphs[gi].node_begin = nb;
    im->graphs[gi].edge_begin = eb;
    nb += im->graphs[gi].node_count;
    eb += im->graphs[gi].edge_count;
    im->graphs[gi].node_count = im->graphs[gi].edge_count = 0;
  }
  for (uint32_t i = 0; i < d->n_nodes; i++) {
    ps__dot_graph *gr = &im->graphs[im->info[i].graph];
    im->gnodes[gr->node_begin + gr->node_count++] = i;
  }
  for (uint32_t e = 0; e < d->n_edges; e++) {
    uint32_t ga = im->info[d->edges[e].from].graph;
    if (ga != im->info[d->edges[e].to].graph)
      continue;
    ps__dot_graph *gr = &im->graphs[ga];
    im->gedges[gr->edge_begin + gr->edge_count++] = e;
  }
  return 0;
}

/* Graphs children first (depth-first post-order over child launches and
 * conditional bodies, with an explicit stack of (graph, node, launch)
 * frames); a graph that launches itself, directly or not, is an error. */
static int
order_graphs (ps__dot_importer *im, uint32_t *order, uint32_t *n_order)
{
  uint32_t ng = im->n_graphs, n = 0;
  uint32_t *stack = malloc (((size_t) ng + 1) * 3 * sizeof *stack);
  if (!stack)
    return PS_ENOMEM;
  for (uint32_t root = 0; root < ng; root++) {
    if (im->graphs[root].mark || !im->graphs[root].is_graph)
      continue;
    uint32_t sp = 0;
    stack[sp++] = root;
    stack[sp++] = 0;
    stack[sp++] = 0;
    im->graphs[root].mark = 1;
    while (sp > 0) {
      uint32_t gi = stack[sp - 3], k = stack[sp - 2], j = stack[sp - 1];
      ps__dot_graph *gr = &im->graphs[gi];
      if (k >= gr->node_count) {
        gr->mark = 2;
        order[n++] = gi;
        sp -= 3;
        continue;
      }
      const ps__dot_info *in = &im->info[im->gnodes[gr->node_begin + k]];
      const uint32_t *ls;
      uint32_t nl = launched (im, in, &ls);
      if (j >= nl) {
        stack[sp - 2]++;
        stack[sp - 1] = 0;
        continue;
      }
      stack[sp - 1]++;
      uint32_t child = ls[j];
      ps__dot_graph *ch = &im->graphs[child];
      if (ch->mark == 1) {
        char msg[512];
        size_t len = (size_t) snprintf (msg, sizeof msg, "child graphs launch each other in a "
                                                         "cycle: %s",
                                        im->names + ch->name);
        bool on = false;
        for (uint32_t s = 0; s < sp && len < sizeof msg; s += 3) {
          on = on || stack[s] == child;
          if (on && stack[s] != child)
            len += (size_t) snprintf (msg + len, sizeof msg - len, " -> %s",
                                      im->names + im->graphs[stack[s]].name);
        }
        if (len < sizeof msg)
          snprintf (msg + len, sizeof msg - len, " -> %s", im->names + ch->name);
        const ps__dot_node *nd = &im->doc.nodes[im->gnodes[gr->node_begin + k]];
        free (stack);
        return error_at (im, nd->line, nd->col, msg);
      }
      if (ch->mark == 0) {
        ch->mark = 1;
        stack[sp++] = child;
        stack[sp++] = 0;
        stack[sp++] = 0;
      }
    }
  }
  free (stack);
  *n_order = n;
  return 0;
}

/* The error of node v, whose child graphs have too many entries or exits
 * to list. */
static int
too_many_ends (ps__dot_importer *im, uint32_t v)
{
  const ps__dot_node *nd = &im->doc.nodes[v];
  return error_at (im, nd->line, nd->col, "child graphs expand to too many first and last nodes");
}

static int
push_end (ps__dot_importer *im, uint32_t v)
{
  if (im->n_ends >= 4u * PS_MAX_NODES)
    return PS_ELIMIT;
  if (im->n_ends == im->cap_ends) {
    int ret = ps_array_grow (&im->ends, &im->cap_ends, (uint64_t) im->n_ends + 1,
                             sizeof *im->ends, 4u * PS_MAX_NODES);
    if (ret < 0)
      return ret;
  }
  im->ends[im->n_ends++] = v;
  return 0;
}

/* A local node expands to a child instance when it launches a non-empty
 * graph; otherwise it is one node (an empty child graph becomes an empty
 * node, which keeps the order it stood for).  A conditional is a unit of
 * its own (see unit_size). */
static bool
expands (const ps__dot_importer *im, const ps__dot_info *in)
{
  return in->kind == PS__DOT_CHILD && im->graphs[in->child].size > 0;
}

/* The nodes a local node stands for once expanded: a child instance, a
 * conditional's nodes followed by its bodies, or itself. */
static uint32_t
unit_size (const ps__dot_importer *im, const ps__dot_info *in)
{
  if (expands (im, in))
    return im->graphs[in->child].size;
  if (in->kind != PS__DOT_COND)
    return 1;
  uint32_t size = cond_nodes (in);
  for (uint32_t j = 0; j < in->body_count; j++)
    size = sat_add (size, im->graphs[im->bodies[in->body_begin + j]].size);
  return size;
}

/* The last nodes of a conditional's unit, relative to it: its bodies'
 * last nodes, and the conditional node of a branch whose body is empty. */
static int
cond_exits (ps__dot_importer *im, ps__dot_info *in)
{
  uint32_t begin = im->n_ends, off = cond_nodes (in);
  int ret = 0;
  for (uint32_t j = 0; j < in->body_count && ret == 0; j++) {
    const ps__dot_graph *b = &im->graphs[im->bodies[in->body_begin + j]];
    if (b->size == 0) {
      bool is_else;
      ret = push_end (im, body_owner (in, j, &is_else));
      continue;
    }
    for (uint32_t x = 0; x < b->exit_count && ret == 0; x++)
      ret = push_end (im, off + im->ends[b->exit_begin + x]);
    off = sat_add (off, b->size);
  }
  if (ret == 0 && im->n_ends == begin)
    ret = push_end (im, 0);
  in->exit_begin = begin;
  in->exit_count = im->n_ends - begin;
  return ret;
}

/* Sizes, relative offsets, entries and exits, children first. */
static int
measure_graphs (ps__dot_importer *im, const uint32_t *order, uint32_t n_order)
{
  for (uint32_t k = 0; k < n_order; k++) {
    ps__dot_graph *gr = &im->graphs[order[k]];
    uint32_t size = 0;
    for (uint32_t j = 0; j < gr->node_count; j++) {
      ps__dot_info *in = &im->info[im->gnodes[gr->node_begin + j]];
      in->loff = size;
      size = sat_add (size, unit_size (im, in));
    }
    gr->size = size;
    for (uint32_t j = 0; j < gr->node_count && size < PS__DOT_LIMIT; j++) {
      uint32_t v = im->gnodes[gr->node_begin + j];
      int ret = im->info[v].kind == PS__DOT_COND ? cond_exits (im, &im->info[v]) : 0;
      if (ret == PS_ENOMEM)
        return ret;
      if (ret < 0)
        return too_many_ends (im, v);
    }
    for (int pass = 0; pass < 2; pass++) {
      uint32_t begin = im->n_ends;
      for (uint32_t j = 0; j < gr->node_count && size < PS__DOT_LIMIT; j++) {
        uint32_t v = im->gnodes[gr->node_begin + j];
        const ps__dot_info *in = &im->info[v];
        if ((pass == 0 ? im->indeg[v] : im->outdeg[v]) != 0)
          continue;
        int ret = 0;
        if (expands (im, in)) {
          const ps__dot_graph *ch = &im->graphs[in->child];
          uint32_t b = pass == 0 ? ch->ent_begin : ch->exit_begin;
          uint32_t c = pass == 0 ? ch->ent_count : ch->exit_count;
          for (uint32_t x = 0; x < c && ret == 0; x++)
            ret = push_end (im, in->loff + im->ends[b + x]);
        } else if (pass == 1 && in->kind == PS__DOT_COND) {
          for (uint32_t x = 0; x < in->exit_count && ret == 0; x++)
            ret = push_end (im, in->loff + im->ends[in->exit_begin + x]);
        } else {
          ret = push_end (im, in->loff);
        }
        if (ret == PS_ENOMEM)
          return ret;
        if (ret < 0)
          return too_many_ends (im, v);
      }
      if (pass == 0) {
        gr->ent_begin = begin;
        gr->ent_count = im->n_ends - begin;
      } else {
        gr->exit_begin = begin;
        gr->exit_count = im->n_ends - begin;
      }
    }
  }
  return 0;
}

/* The flattened graph before renumbering. */
/* A branch of a conditional: nodes [start, start + len) of the flat
 * graph, which branch holds them and of which conditional node. */
typedef struct branch {
  uint32_t start, len, cond;
  uint8_t is_else;
} branch;

typedef struct flat {
  uint32_t n;
  uint32_t *dot;   /* per node: its DOT node */
  uint32_t *name;  /* per node: name offset in the graph's pool */
  uint32_t *src, *dst;
  uint32_t n_edges, cap_src, cap_dst;
  uint32_t *ccase;  /* per node: the case a switch's conditional node tests */
  branch *branches; /* nested or disjoint */
  uint32_t n_branches, cap_branches;
  uint32_t n_conds;  /* conditional nodes */
} flat;

typedef struct instance {
  uint32_t graph, base;
  uint32_t prefix, prefix_len; /* in the graph's pool */
} instance;

static int
flat_edge (flat *f, uint32_t a, uint32_t b)
{
  if (f->n_edges >= PS_MAX_EDGES)
    return PS_ELIMIT;
  if (f->n_edges == f->cap_src) {
    int ret = ps_array_grow (&f->src, &f->cap_src, (uint64_t) f->n_edges + 1,
                             sizeof *f->src, PS_MAX_EDGES);
    if (ret == 0)
      ret = ps_array_grow (&f->dst, &f->cap_dst, (uint64_t) f->n_edges + 1,
                           sizeof *f->dst, PS_MAX_EDGES);
    if (ret < 0)
      return ret;
  }
  f->src[f->n_edges] = a;
  f->dst[f->n_edges++] = b;
  return 0;
}

/* Instance counts, parents first (the reverse of `order`). */
static void
count_instances (ps__dot_importer *im, const uint32_t *order, uint32_t n_order)
{
  for (uint32_t k = n_order; k-- > 0;) {
    ps__dot_graph *gr = &im->graphs[order[k]];
    if (!gr->referenced)
      gr->instances = 1;
    for (uint32_t j = 0; j < gr->node_count; j++) {
      const uint32_t *ls;
      uint32_t nl = launched (im, &im->info[im->gnodes[gr->node_begin + j]], &ls);
      for (uint32_t x = 0; x < nl; x++)
        im->graphs[ls[x]].instances = sat_add (im->graphs[ls[x]].instances, gr->instances);
    }
  }
}

/* The nodes of the expanded dump: its top-level graphs' sizes
 * (saturated). */
static uint32_t
expanded_nodes (const ps__dot_importer *im)
{
  uint32_t total = 0;
  for (uint32_t gi = 0; gi < im->n_graphs; gi++)
    if (im->graphs[gi].is_graph && !im->graphs[gi].referenced)
      total = sat_add (total, im->graphs[gi].size);
  return total;
}

/* The node names of an expanded dump may take at most this many bytes: a
 * dump of a few kilobytes can launch child graphs millions of times, and
 * each instance's nodes are named with the ids of all its launches. */
#define MAX_EXPANDED_NAME_BYTES ((uint64_t) 1 << 30)

/* Checks, before anything is expanded, the bytes that expand() will intern:
 * per graph G expanded with an empty prefix, nb[G] bytes, of which pc[G]
 * strings also carry the prefix of an enclosing instance (the names of its
 * own nodes, and the prefixes and names of children launched more than
 * once; a child launched once starts again with an empty prefix).  Graphs
 * are visited children first (`order`). */
static int
check_name_bytes (ps__dot_importer *im, const uint32_t *order, uint32_t n_order)
{
  if (expanded_nodes (im) > PS_MAX_NODES)
    return 0; /* expand reports that */
  const uint64_t cap = MAX_EXPANDED_NAME_BYTES;
  uint64_t *nb = calloc ((size_t) im->n_graphs + 1, sizeof *nb);
  uint64_t *pc = calloc ((size_t) im->n_graphs + 1, sizeof *pc);
  if (!nb || !pc) {
    free (nb);
    free (pc);
    return PS_ENOMEM;
  }
  uint64_t total = 0;
  for (uint32_t k = 0; k < n_order; k++) {
    const ps__dot_graph *gr = &im->graphs[order[k]];
    uint64_t b = 0, c = 0;
    for (uint32_t j = 0; j < gr->node_count && b < cap; j++) {
      uint32_t v = im->gnodes[gr->node_begin + j];
      const ps__dot_info *in = &im->info[v];
      uint64_t idn = strlen (im->doc.pool + im->doc.nodes[v].id);
      const uint32_t *ls;
      uint32_t nl = launched (im, in, &ls);
      if (in->kind == PS__DOT_COND) {
        /* The conditional's own nodes: its id, then "ID/case_K" each. */
        uint64_t cn = cond_nodes (in);
        b += (idn + 1) + (cn - 1) * (idn + 17);
        c += cn;
      } else if (!expands (im, in)) {
        b += idn + 1;
        c++;
        nl = 0;
      }
      for (uint32_t x = 0; x < nl && b < cap; x++) {
        uint32_t ch = ls[x];
        if (im->graphs[ch].instances > 1) {
          /* Both stay below cap, so neither the product nor the sums wrap. */
          b += idn + 2 + nb[ch] + pc[ch] * (idn + 1);
          c += 1 + pc[ch];
        } else {
          b += nb[ch];
        }
      }
    }
    nb[order[k]] = b < cap ? b : cap;
    pc[order[k]] = c < cap ? c : cap;
    if (gr->is_graph && !gr->referenced && total < cap)
      total += nb[order[k]];
  }
  free (nb);
  free (pc);
  if (total >= cap)
    return error_at (im, 0, 0, "the dump launches its child graphs so many times that the names "
                     "of the expanded nodes exceed 1 GiB");
  return 0;
}

static int
add_branch (flat *f, uint32_t start, uint32_t len, uint32_t cond, bool is_else)
{
  int ret = ps_array_grow (&f->branches, &f->cap_branches, (uint64_t) f->n_branches + 1,
                           sizeof *f->branches, PS_MAX_NODES);
  if (ret == 0)
    f->branches[f->n_branches++] = (branch){ start, len, cond, is_else };
  return ret;
}

/* Conditional node v of instance `it` at flat id `at`: its own nodes
 * (named NAME, then NAME/case_K for a SWITCH's further cases), each
 * switch case node in the else branch of the one before it, and its
 * bodies, each an instance after them with the conditional that branches
 * to it joined to its first nodes.  Instances to expand go on the stack. */
static int
expand_cond (ps__dot_importer *im, flat *f, uint32_t v, uint32_t at, char *name, size_t nn,
             instance *stack, uint32_t *sp)
{
  ps_graph *g = im->g;
  const ps__dot_info *in = &im->info[v];
  uint32_t cn = cond_nodes (in);
  int ret = 0;
  if (!f->ccase && !(f->ccase = malloc ((size_t) f->n * sizeof *f->ccase)))
    return PS_ENOMEM;
  for (uint32_t i = 0; i < cn && ret == 0; i++) {
    size_t k = nn;
    f->ccase[at + i] = i;
    if (i > 0)
      k += (size_t) snprintf (name + nn, 24, "/case_%u", i);
    f->dot[at + i] = v;
    ret = ps__graph_intern (g, name, k, &f->name[at + i]);
    if (ret == 0 && i > 0)
      ret = add_branch (f, at + i, 1, at + i - 1, true);
    if (ret == 0 && i > 0)
      ret = flat_edge (f, at + i - 1, at + i);
  }
  f->n_conds += cn;
  uint32_t off = at + cn;
  for (uint32_t j = 0; j < in->body_count && ret == 0; j++) {
    uint32_t gi = im->bodies[in->body_begin + j];
    const ps__dot_graph *b = &im->graphs[gi];
    if (b->size == 0)
      continue;
    bool is_else;
    uint32_t owner = at + body_owner (in, j, &is_else);
    instance ch = { gi, off, 0, 0 };
    if (b->instances > 1) {
      name[nn] = '/';
      ret = ps__graph_intern (g, name, nn + 1, &ch.prefix);
      ch.prefix_len = (uint32_t) nn + 1;
    }
    if (ret == 0)
      ret = add_branch (f, off, b->size, owner, is_else);
    for (uint32_t x = 0; x < b->ent_count && ret == 0; x++)
      ret = flat_edge (f, owner, off + im->ends[b->ent_begin + x]);
    stack[(*sp)++] = ch;
    off += b->size;
  }
  if (ret == PS_ELIMIT) {
    const ps__dot_node *nd = &im->doc.nodes[v];
    ret = error_at (im, nd->line, nd->col, "too many edges after expanding child graphs");
  }
  return ret;
}

/* The edges an expanded dump may have.  Every last node of a child graph
 * is joined to every first node of the next, so a small dump can ask for
 * hundreds of millions of edges (a 4,096-node child graph launched by a
 * chain of 17 nodes: 268 million); this bounds the memory the expansion
 * takes to about 1 GiB. */
#define MAX_EXPANDED_EDGES ((uint64_t) 1 << 25)

/* Counts, before anything is expanded, the edges expand() will make: per
 * graph, children first, its own edges (each joining the last nodes of
 * one unit to the first nodes of the next) and those of the instances it
 * launches (a conditional also joins itself to its bodies' first nodes
 * and its case nodes one to the next).  Too many is an error at the node
 * or edge of a top-level graph where the count passes the limit. */
static int
check_edges (ps__dot_importer *im, const uint32_t *order, uint32_t n_order)
{
  const uint64_t cap = MAX_EXPANDED_EDGES + 1;
  if (expanded_nodes (im) > PS_MAX_NODES)
    return 0; /* expand reports that */
  uint64_t *ne = calloc ((size_t) im->n_graphs + 1, sizeof *ne);
  if (!ne)
    return PS_ENOMEM;
  uint64_t total = 0;
  uint32_t line = 0, col = 0;
  for (uint32_t k = 0; k < n_order && total < cap; k++) {
    const ps__dot_graph *gr = &im->graphs[order[k]];
    bool root = gr->is_graph && !gr->referenced;
    uint64_t e = root ? total : 0;
    for (uint32_t j = 0; j < gr->node_count && e < cap; j++) {
      uint32_t v = im->gnodes[gr->node_begin + j];
      const ps__dot_info *in = &im->info[v];
      if (expands (im, in)) {
        e += ne[in->child];
      } else if (in->kind == PS__DOT_COND) {
        e += cond_nodes (in) - 1;
        for (uint32_t x = 0; x < in->body_count; x++) {
          const ps__dot_graph *b = &im->graphs[im->bodies[in->body_begin + x]];
          e += ne[im->bodies[in->body_begin + x]] + (b->size ? b->ent_count : 0);
        }
      }
      if (e >= cap) {
        line = im->doc.nodes[v].line;
        col = im->doc.nodes[v].col;
      }
    }
    for (uint32_t x = 0; x < gr->edge_count && e < cap; x++) {
      const ps__dot_edge *ed = &im->doc.edges[im->gedges[gr->edge_begin + x]];
      const ps__dot_info *a = &im->info[ed->from], *b = &im->info[ed->to];
      uint64_t na = expands (im, a) ? im->graphs[a->child].exit_count
                    : a->kind == PS__DOT_COND ? a->exit_count : 1;
      uint64_t nb = expands (im, b) ? im->graphs[b->child].ent_count : 1;
      e += na * nb; /* each below 4 * 2^24, so the product cannot wrap */
      if (e >= cap) {
        line = ed->line;
        col = ed->col;
      }
    }
    if (root)
      total = e;
    else
      ne[order[k]] = e < cap ? e : cap;
  }
  free (ne);
  if (total >= cap) {
    char msg[256];
    snprintf (msg, sizeof msg, "the dump's child graphs expand to more than %llu edges (every "
                               "last node of a child graph is joined to every first node of "
                               "the next)",
              (unsigned long long) MAX_EXPANDED_EDGES);
    return error_at (im, line, col, msg);
  }
  return 0;
}

/* Creates the nodes and edges of every instance. */
static int
expand (ps__dot_importer *im, flat *f)
{
  ps_graph *g = im->g;
  uint32_t total = expanded_nodes (im);
  if (total > PS_MAX_NODES)
    return error_at (im, 0, 0, "the dump expands to more nodes than the limit (16777216)");
  if (total == 0)
    return error_at (im, 0, 0, "the dump has no nodes");
  f->n = total;
  f->dot = malloc ((size_t) total * sizeof *f->dot);
  f->name = malloc ((size_t) total * sizeof *f->name);
  instance *stack = malloc ((size_t) (total + 1) * sizeof *stack);
  if (!f->dot || !f->name || !stack) {
    free (stack);
    return PS_ENOMEM;
  }
  uint32_t sp = 0, base = 0;
  for (uint32_t gi = im->n_graphs; gi-- > 0;)
    if (im->graphs[gi].is_graph && !im->graphs[gi].referenced && im->graphs[gi].size > 0) {
      base += im->graphs[gi].size;
      stack[sp++] = (instance){ gi, total - base, 0, 0 };
    }
  /* Roots were pushed last first, so they pop in declaration order. */
  char *name = malloc (2 * (size_t) PS_MAX_NAME + 32);
  int ret = name ? 0 : PS_ENOMEM;
  while (sp > 0 && ret == 0) {
    instance it = stack[--sp];
    const ps__dot_graph *gr = &im->graphs[it.graph];
    /* Children are pushed in reverse so that ids stay in pre-order. */
    for (uint32_t j = gr->node_count; j-- > 0 && ret == 0;) {
      uint32_t v = im->gnodes[gr->node_begin + j];
      const ps__dot_info *in = &im->info[v];
      const char *id = im->doc.pool + im->doc.nodes[v].id;
      size_t idn = strlen (id);
      if (it.prefix_len + idn > PS_MAX_NAME) {
        const ps__dot_node *nd = &im->doc.nodes[v];
        ret = error_at (im, nd->line, nd->col,
                        "child graphs nest so deep that node names exceed 4096 bytes");
        break;
      }
      memcpy (name, g->strings + it.prefix, it.prefix_len);
      memcpy (name + it.prefix_len, id, idn);
      size_t nn = it.prefix_len + idn;
      uint32_t at = it.base + in->loff;
      if (in->kind == PS__DOT_COND) {
        ret = expand_cond (im, f, v, at, name, nn, stack, &sp);
      } else if (expands (im, in)) {
        instance ch = { in->child, at, 0, 0 };
        if (im->graphs[in->child].instances > 1) {
          name[nn++] = '/';
          ret = ps__graph_intern (g, name, nn, &ch.prefix);
          ch.prefix_len = (uint32_t) nn;
        }
        stack[sp++] = ch;
      } else {
        f->dot[at] = v;
        ret = ps__graph_intern (g, name, nn, &f->name[at]);
      }
    }
    for (uint32_t e = 0; e < gr->edge_count && ret == 0; e++) {
      const ps__dot_edge *ed = &im->doc.edges[im->gedges[gr->edge_begin + e]];
      const ps__dot_info *a = &im->info[ed->from], *b = &im->info[ed->to];
      uint32_t xa = 0, na = 1, xb = 0, nb = 1;
      const uint32_t *la = NULL, *lb = NULL;
      if (expands (im, a)) {
        la = im->ends + im->graphs[a->child].exit_begin;
        na = im->graphs[a->child].exit_count;
      } else if (a->kind == PS__DOT_COND) {
        la = im->ends + a->exit_begin;
        na = a->exit_count;
      }
      if (expands (im, b)) {
        lb = im->ends + im->graphs[b->child].ent_begin;
        nb = im->graphs[b->child].ent_count;
      }
      for (uint32_t i = 0; i < na && ret == 0; i++)
        for (uint32_t k = 0; k < nb && ret == 0; k++) {
          xa = la ? la[i] : 0;
          xb = lb ? lb[k] : 0;
          ret = flat_edge (f, it.base + a->loff + xa, it.base + b->loff + xb);
        }
      if (ret == PS_ELIMIT)
        ret = error_at (im, ed->line, ed->col, "too many edges after expanding child graphs");
    }
  }
  free (name);
  free (stack);
  return ret;
}

/* Every node Kahn left has a predecessor that is also left: walking
 * predecessors from one of them must repeat a node, and the walk from that
 * node's first visit is a cycle (backwards). */
static int
report_cycle (ps__dot_importer *im, const flat *f, const uint32_t *left)
{
  uint32_t n = f->n;
  uint32_t *poff = calloc ((size_t) n + 2, sizeof *poff);
  uint32_t *padj = malloc (((size_t) f->n_edges + 1) * sizeof *padj);
  uint32_t *stamp = malloc (((size_t) n + 1) * sizeof *stamp);
  uint32_t *walk = malloc (((size_t) n + 1) * sizeof *walk);
  if (!poff || !padj || !stamp || !walk) {
    free (poff);
    free (padj);
    free (stamp);
    free (walk);
    return PS_ENOMEM;
  }
  for (uint32_t e = 0; e < f->n_edges; e++)
    poff[f->dst[e] + 2]++;
  for (uint32_t v = 0; v < n; v++)
    poff[v + 2] += poff[v + 1];
  for (uint32_t e = 0; e < f->n_edges; e++)
    padj[poff[f->dst[e] + 1]++] = f->src[e];
  uint32_t v = 0;
  while (left[v] == 0)
    v++;
  for (uint32_t i = 0; i < n; i++)
    stamp[i] = PS_NONE;
  uint32_t steps = 0;
  while (stamp[v] == PS_NONE) {
    stamp[v] = steps;
    walk[steps++] = v;
    uint32_t next = PS_NONE;
    for (uint32_t i = poff[v]; i < poff[v + 1] && next == PS_NONE; i++)
      if (left[padj[i]] != 0)
        next = padj[i];
    if (next == PS_NONE)
      break; /* cannot happen: see above */
    v = next;
  }
  /* walk[k..steps) is the cycle backwards: walk[k] <- walk[k+1] <- ... */
  uint32_t k = stamp[v] == PS_NONE ? 0 : stamp[v];
  uint32_t count = steps - k;
  char msg[1024];
  size_t len = (size_t) snprintf (msg, sizeof msg, "the graph has a cycle: %s",
                                  im->g->strings + f->name[walk[k]]);
  for (uint32_t i = steps; i-- > k;) {
    const char *nm = im->g->strings + f->name[i > k ? walk[i] : walk[k]];
    if (len > 800) {
      snprintf (msg + len, sizeof msg - len, " -> ... (%u nodes on the cycle)", count);
      break;
    }
    len += (size_t) snprintf (msg + len, sizeof msg - len, " -> %s", nm);
  }
  const ps__dot_node *nd = &im->doc.nodes[f->dot[walk[k]]];
  error_at (im, nd->line, nd->col, msg);
  free (poff);
  free (padj);
  free (stamp);
  free (walk);
  return PS_ECYCLE;
}

/* Kahn's algorithm, smallest id first (a binary heap), so that the order
 * follows the dump where the edges allow.  On a cycle, reports the nodes
 * of one cycle. */
static int
topo_order (ps__dot_importer *im, const flat *f, uint32_t *off, uint32_t *adj, uint32_t *topo)
{
  uint32_t n = f->n;
  uint32_t *indeg = calloc ((size_t) n + 1, sizeof *indeg);
  uint32_t *heap = malloc (((size_t) n + 1) * sizeof *heap);
  if (!indeg || !heap) {
    free (indeg);
    free (heap);
    return PS_ENOMEM;
  }
  for (uint32_t e = 0; e < f->n_edges; e++)
    indeg[f->dst[e]]++;
  uint32_t hn = 0, done = 0;
  for (uint32_t v = 0; v < n; v++)
    if (indeg[v] == 0)
      heap[hn++] = v; /* ascending: already a heap */
  while (hn > 0) {
    uint32_t v = heap[0];
    heap[0] = heap[--hn];
    for (uint32_t i = 0;;) {
      uint32_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < hn && heap[l] < heap[m])
        m = l;
      if (r < hn && heap[r] < heap[m])
        m = r;
      if (m == i)
        break;
      uint32_t t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
    topo[done++] = v;
    for (uint32_t i = off[v]; i < off[v + 1]; i++) {
      uint32_t w = adj[i];
      if (--indeg[w] == 0) {
        uint32_t k = hn++;
        heap[k] = w;
        while (k > 0 && heap[(k - 1) / 2] > heap[k]) {
          uint32_t t = heap[k];
          heap[k] = heap[(k - 1) / 2];
          heap[(k - 1) / 2] = t;
          k = (k - 1) / 2;
        }
      }
    }
  }
  int ret = 0;
  if (done < n)
    ret = report_cycle (im, f, indeg);
  free (indeg);
  free (heap);
  return ret;
}

/* Rule 3 of graph-format.md, as for JSON graphs: a wait depends on the
 * latest earlier record of its event (in the topological order `topo`).
 * A dump need not join its record and wait nodes by edges, since CUDA
 * pairs them when the graph runs; without these edges the planner could
 * issue a wait before its record.  A wait with no earlier record waits for
 * work outside the dump, which nothing in the graph orders: recorded[i]
 * (by new id) says which waits have a record. */
static int
event_edges (ps__dot_importer *im, flat *f, const uint32_t *topo, uint8_t **recorded)
{
  uint32_t n_events = im->g->n_events;
  uint32_t *last = malloc (((size_t) n_events + 1) * sizeof *last);
  *recorded = calloc ((size_t) f->n + 1, 1);
  if (!last || !*recorded) {
    free (last);
    return PS_ENOMEM;
  }
  for (uint32_t e = 0; e < n_events; e++)
    last[e] = PS_NONE;
  int ret = 0;
  for (uint32_t i = 0; i < f->n && ret == 0; i++) {
    const ps__dot_info *in = &im->info[f->dot[topo[i]]];
    if (in->kind == PS__DOT_RECORD) {
      last[in->event] = topo[i];
    } else if (in->kind == PS__DOT_WAIT && last[in->event] != PS_NONE) {
      (*recorded)[i] = 1;
      ret = flat_edge (f, last[in->event], topo[i]);
    }
  }
  free (last);
  return ret;
}

/* The innermost branch holding each flat node: owner[x] is the flat id of
 * its conditional (PS_NONE outside every branch) and is_else[x] the
 * branch.  Branches nest or are disjoint: sorted by start (longest
 * first), a stack of the open ones gives each node once. */
static int
branch_owners (const flat *f, uint32_t *owner, uint8_t *is_else)
{
  for (uint32_t x = 0; x < f->n; x++)
    owner[x] = PS_NONE;
  uint32_t nb = f->n_branches;
  if (nb == 0)
    return 0;
  uint32_t *ord = malloc ((size_t) nb * sizeof *ord);
  uint32_t *tmp = malloc ((size_t) nb * sizeof *tmp);
  uint32_t *open = malloc ((size_t) nb * sizeof *open);
  if (!ord || !tmp || !open) {
    free (ord);
    free (tmp);
    free (open);
    return PS_ENOMEM;
  }
  for (uint32_t i = 0; i < nb; i++)
    ord[i] = i;
  /* Bottom-up merge sort: start ascending, then length descending. */
  const branch *br = f->branches;
  for (uint32_t w = 1; w < nb; w *= 2) {
    for (uint32_t lo = 0; lo < nb; lo += 2 * w) {
      uint32_t mid = lo + w < nb ? lo + w : nb, hi = lo + 2 * w < nb ? lo + 2 * w : nb;
      uint32_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        const branch *a = &br[ord[i]], *b = &br[ord[j]];
        bool take_b = b->start < a->start || (b->start == a->start && b->len > a->len);
        tmp[k++] = take_b ? ord[j++] : ord[i++];
      }
      while (i < mid)
        tmp[k++] = ord[i++];
      while (j < hi)
        tmp[k++] = ord[j++];
    }
    memcpy (ord, tmp, (size_t) nb * sizeof *ord);
  }
  uint32_t top = 0, pos = 0;
  for (uint32_t i = 0; i <= nb; i++) {
    uint32_t until = i < nb ? br[ord[i]].start : f->n;
    while (pos < until) {
      while (top > 0 && br[open[top - 1]].start + br[open[top - 1]].len <= pos)
        top--;
      if (top == 0) {
        pos = until;
        break;
      }
      const branch *b = &br[open[top - 1]];
      uint32_t end = b->start + b->len < until ? b->start + b->len : until;
      for (; pos < end; pos++) {
        owner[pos] = b->cond;
        is_else[pos] = b->is_else;
      }
    }
    if (i < nb)
      open[top++] = ord[i];
  }
  free (ord);
  free (tmp);
  free (open);
  return 0;
}

/* The conditionals of the renumbered graph: each conditional node's
 * branch members (then, then else, by id), the node each member belongs
 * to and its branch flag, and the condition each tests: one 4-byte buffer
 * per conditional handle of the dump (a conditional without one gets its
 * own), which the conditional reads. */
static int
build_conds (ps__dot_importer *im, const flat *f, const uint32_t *topo, const uint32_t *newid)
{
  ps_graph *g = im->g;
  uint32_t n = f->n, nc = f->n_conds;
  if (nc == 0)
    return 0;
  uint32_t *owner = malloc ((size_t) n * sizeof *owner);
  uint8_t *is_else = malloc ((size_t) n);
  uint32_t *cidx = malloc ((size_t) n * sizeof *cidx);
  uint32_t *cnt = calloc ((size_t) 2 * nc + 1, sizeof *cnt);
  g->conds = calloc (nc, sizeof *g->conds);
  g->buffers = calloc (nc, sizeof *g->buffers);
  g->access = malloc ((size_t) nc * sizeof *g->access);
  ps_strmap handles;
  memset (&handles, 0, sizeof handles);
  int ret = 0;
  if (!owner || !is_else || !cidx || !cnt || !g->conds || !g->buffers || !g->access)
    ret = PS_ENOMEM;
  if (ret == 0)
    ret = ps__strmap_init (&handles, nc * 2 + 16);
  if (ret == 0)
    ret = branch_owners (f, owner, is_else);
  /* Conditionals, in the new order. */
  for (uint32_t i = 0; i < n && ret == 0; i++) {
    uint32_t old = topo[i];
    const ps__dot_info *in = &im->info[f->dot[old]];
    ps_node *nd = &g->nodes[i];
    if (in->kind != PS__DOT_COND)
      continue;
    uint32_t c = g->n_conds++;
    cidx[i] = c;
    nd->aux = c;
    ps_cond *cd = &g->conds[c];
    cd->kind = in->ctype;
    cd->assume = PS_ASSUME_BOTH;
    cd->case_index = f->ccase[old];
    /* The condition: the handle's buffer, or one of the conditional's
     * own (named after its first node, which its cases share). */
    char own[PS_MAX_NAME + 16];
    const char *hs;
    size_t hn;
    if (in->str != PS_NONE) {
      hs = g->strings + in->str;
      hn = strlen (hs);
    } else {
      const char *nm = g->strings + f->name[old - cd->case_index];
      int k = snprintf (own, sizeof own, "%.4000s condition", nm);
      hs = own;
      hn = (size_t) k < sizeof own ? (size_t) k : sizeof own - 1;
    }
    uint32_t h = ps__strmap_hash (hs, hn);
    uint32_t b = ps__strmap_find (&handles, g->strings, hs, hn, h);
    if (b == PS_NONE) {
      /* The handle is in the pool already; an own name is not (and hs
       * must not point into the pool that interning may move). */
      uint32_t off = in->str;
      if (in->str == PS_NONE)
        ret = ps__graph_intern (g, hs, hn, &off);
      if (ret == 0)
        ret = ps__strmap_insert (&handles, off, h, g->n_buffers);
      if (ret < 0)
        break;
      b = g->n_buffers++;
      g->buffers[b] = (ps_buffer){ .name = off, .flags = PS_BUF_EXTERNAL, .dtype = PS_DT_I32,
                                   .bytes = 4, .line = nd->line, .col = nd->col };
    }
    cd->condition = b;
    nd->reads_begin = g->n_access;
    nd->reads_count = 1;
    g->access[g->n_access++] = b;
  }
  /* Members: counted per (conditional, branch), then placed in id order. */
  uint32_t members = 0;
  for (uint32_t i = 0; i < n && ret == 0; i++) {
    uint32_t o = owner[topo[i]];
    if (o == PS_NONE)
      continue;
    cnt[2 * cidx[newid[o]] + is_else[topo[i]] + 1]++;
    members++;
  }
  if (ret == 0) {
    g->cond_members = malloc (((size_t) members + 1) * sizeof *g->cond_members);
    if (!g->cond_members)
      ret = PS_ENOMEM;
  }
  if (ret == 0) {
    for (uint32_t k = 0; k < 2 * nc; k++)
      cnt[k + 1] += cnt[k];
    for (uint32_t c = 0; c < nc; c++) {
      g->conds[c].then_begin = cnt[2 * c];
      g->conds[c].then_count = cnt[2 * c + 1] - cnt[2 * c];
      g->conds[c].else_begin = cnt[2 * c + 1];
      g->conds[c].else_count = cnt[2 * c + 2] - cnt[2 * c + 1];
    }
    for (uint32_t i = 0; i < n; i++) {
      uint32_t o = owner[topo[i]];
      if (o == PS_NONE)
        continue;
      uint32_t e = is_else[topo[i]];
      g->cond_members[cnt[2 * cidx[newid[o]] + e]++] = i;
      g->nodes[i].cond = newid[o];
      g->nodes[i].flags |= e ? PS_NODE_IN_ELSE : PS_NODE_IN_THEN;
    }
    g->n_cond_members = members;
  }
  ps__strmap_free (&handles);
  free (owner);
  free (is_else);
  free (cidx);
  free (cnt);
  return ret;
}

/* Renumbers into topological order and fills the graph. */
static int
build (ps__dot_importer *im, flat *f)
{
  ps_graph *g = im->g;
  uint32_t n = f->n, m = f->n_edges;
  uint32_t *off = calloc ((size_t) n + 2, sizeof *off);
  uint32_t *adj = malloc (((size_t) m + 1) * sizeof *adj);
  uint32_t *topo = malloc (((size_t) n + 1) * sizeof *topo);
  uint32_t *newid = malloc (((size_t) n + 1) * sizeof *newid);
  uint8_t *recorded = NULL;
  int ret = 0;
  if (!off || !adj || !topo || !newid) {
    ret = PS_ENOMEM;
    goto out;
  }
  for (uint32_t e = 0; e < m; e++)
    off[f->src[e] + 2]++;
  for (uint32_t v = 0; v < n; v++)
    off[v + 2] += off[v + 1];
  for (uint32_t e = 0; e < m; e++)
    adj[off[f->src[e] + 1]++] = f->dst[e];
  ret = topo_order (im, f, off, adj, topo);
  if (ret < 0)
    goto out;
  for (uint32_t i = 0; i < n; i++)
    newid[topo[i]] = i;
  ret = event_edges (im, f, topo, &recorded);
  if (ret < 0)
    goto out;
  m = f->n_edges;

  /* Nodes. */
  uint32_t n_kernels = 0;
  for (uint32_t i = 0; i < n; i++)
    n_kernels += im->info[f->dot[i]].kind == PS__DOT_KERNEL;
  g->nodes = calloc (n, sizeof *g->nodes);
  g->kernels = calloc ((size_t) n_kernels + 1, sizeof *g->kernels);
  if (!g->nodes || !g->kernels) {
    ret = PS_ENOMEM;
    goto out;
  }
  static const uint8_t op_of[] = { PS_OP_KERNEL,     PS_OP_MEMCPY, PS_OP_MEMSET,
                                   PS_OP_HOST,       PS_OP_EMPTY,  PS_OP_EVENT_RECORD,
                                   PS_OP_EVENT_WAIT, PS_OP_EMPTY,  PS_OP_CONDITIONAL,
                                   PS_OP_OPAQUE };
  for (uint32_t i = 0; i < n; i++) {
    uint32_t old = topo[i], d = f->dot[old];
    const ps__dot_info *in = &im->info[d];
    ps_node *nd = &g->nodes[i];
    nd->name = f->name[old];
    nd->op = op_of[in->kind];
    nd->stream = -1;
    nd->src_device = nd->dst_device = -1;
    nd->line = im->doc.nodes[d].line;
    nd->col = im->doc.nodes[d].col;
    nd->aux = PS_NONE;
    nd->cond = PS_NONE;
    switch (in->kind) {
    case PS__DOT_KERNEL: {
      ps_kernel *k = &g->kernels[g->n_kernels];
      k->function = in->str;
      memcpy (k->grid, in->kernel, sizeof k->grid);
      memcpy (k->block, in->kernel + 3, sizeof k->block);
      k->smem = in->kernel[6];
      k->launch_unknown = !in->launch;
      k->module = PS_NONE;
      k->alpha = 1;
      k->flops = k->traffic_bytes = -1;
      nd->aux = g->n_kernels++;
      break;
    }
    case PS__DOT_MEMCPY:
      nd->dir = in->dir;
      nd->bytes = in->bytes;
      break;
    case PS__DOT_MEMSET:
      nd->bytes = in->bytes;
      nd->value = in->value;
      break;
    case PS__DOT_RECORD:
      nd->aux = in->event;
      break;
    case PS__DOT_WAIT:
      if (recorded[i]) {
        nd->aux = in->event;
      } else {
        nd->op = PS_OP_EMPTY;
        ps_diag_warn (im->diag, nd->line, nd->col,
                      "node \"%s\" waits for event \"%s\", which no earlier node of the dump "
                      "records; imported as an empty node",
                      g->strings + nd->name, g->strings + g->event_names[in->event]);
      }
      break;
    case PS__DOT_OPAQUE:
      nd->aux = in->str;
      break;
    default:
      break;
    }
  }

  ret = build_conds (im, f, topo, newid);
  if (ret < 0)
    goto out;

  /* Edges: bucket by destination, then by source (stable), so that each
   * successor list comes out sorted; duplicates are then adjacent. */
  uint32_t *by_dst = malloc (((size_t) m + 1) * sizeof *by_dst);
  uint32_t *cnt = calloc ((size_t) n + 2, sizeof *cnt);
  g->succ_off = calloc ((size_t) n + 2, sizeof *g->succ_off);
  g->succ = malloc (((size_t) m + 1) * sizeof *g->succ);
  g->pred_off = calloc ((size_t) n + 2, sizeof *g->pred_off);
  g->pred = malloc (((size_t) m + 1) * sizeof *g->pred);
  if (!by_dst || !cnt || !g->succ_off || !g->succ || !g->pred_off || !g->pred) {
    free (by_dst);
    free (cnt);
    ret = PS_ENOMEM;
    goto out;
  }
  for (uint32_t e = 0; e < m; e++)
    cnt[newid[f->dst[e]] + 2]++;
  for (uint32_t v = 0; v < n; v++)
    cnt[v + 2] += cnt[v + 1];
  for (uint32_t e = 0; e < m; e++)
    by_dst[cnt[newid[f->dst[e]] + 1]++] = e;
  uint32_t *so = g->succ_off;
  for (uint32_t e = 0; e < m; e++)
    so[newid[f->src[e]] + 2]++;
  for (uint32_t v = 0; v < n; v++)
    so[v + 2] += so[v + 1];
  for (uint32_t k = 0; k < m; k++) {
    uint32_t e = by_dst[k];
    g->succ[so[newid[f->src[e]] + 1]++] = newid[f->dst[e]];
  }
  /* Now so[v] .. so[v + 1] is v's list; drop duplicates in place. */
  uint32_t w = 0, begin = 0;
  for (uint32_t v = 0; v < n; v++) {
    uint32_t end = so[v + 1];
    so[v] = w;
    for (uint32_t i = begin; i < end; i++)
      if (i == begin || g->succ[i] != g->succ[i - 1])
        g->succ[w++] = g->succ[i];
    begin = end;
  }
  so[n] = w;
  m = w;
  free (by_dst);
  free (cnt);
  g->n_edges = m;
  g->succ_kind = malloc ((size_t) m + 1);
  g->pred_kind = malloc ((size_t) m + 1);
  if (!g->succ_kind || !g->pred_kind) {
    ret = PS_ENOMEM;
    goto out;
  }
  /* Every edge is the dump's, but a conditional's to its branch members. */
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t i = so[u]; i < so[u + 1]; i++)
      g->succ_kind[i] = g->nodes[g->succ[i]].cond == u ? PS_EDGE_BRANCH : PS_EDGE_IMPORTED;
  uint32_t *po = g->pred_off;
  for (uint32_t i = 0; i < m; i++)
    po[g->succ[i] + 2]++;
  for (uint32_t v = 0; v < n; v++)
    po[v + 2] += po[v + 1];
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t i = so[u]; i < so[u + 1]; i++) {
      g->pred_kind[po[g->succ[i] + 1]] = g->succ_kind[i];
      g->pred[po[g->succ[i] + 1]++] = u;
    }
  g->n_nodes = n;
  g->cuda_graph = true;

out:
  free (off);
  free (adj);
  free (topo);
  free (newid);
  free (recorded);
  return ret;
}

/* The graph's name: the DOT graph's id unless it is CUDA's generic "dot",
 * else the file name without folder and extension. */
static char *
graph_name (const ps__dot_importer *im, const char *path)
{
  const char *id = im->doc.graph_id != PS_NONE ? im->doc.pool + im->doc.graph_id : "";
  if (*id && strcmp (id, "dot") != 0 && strcmp (id, "G") != 0)
    return strdup (id);
  const char *base = path ? strrchr (path, '/') : NULL;
  base = base ? base + 1 : path ? path : "";
  size_t n = strlen (base);
  const char *dot = strrchr (base, '.');
  if (dot && dot != base)
    n = (size_t) (dot - base);
  char *s = malloc (n + 1);
  if (s) {
    memcpy (s, base, n);
    s[n] = '\0';
  }
  return s;
}

int
ps__dot_load_graph (ps_graph *g, const char *data, size_t len, const char *path,
                    ps_diag *diag)
{
  ps_graph tmp;
  ps_graph_init (&tmp);
  ps__dot_importer im;
  memset (&im, 0, sizeof im);
  im.g = &tmp;
  im.diag = diag;
  flat f;
  memset (&f, 0, sizeof f);
  uint32_t *order = NULL, n_order = 0;
  char *buf = NULL;
  size_t cap = 0;
  size_t errors_before = diag->errors;

  uint32_t empty;
  int ret = ps__graph_intern (&tmp, "", 0, &empty);
  if (ret == 0)
    ret = ps__dot_parse (&im.doc, data, len, diag);
  if (ret == 0 && im.doc.n_nodes == 0)
    ret = error_at (&im, 0, 0, "the dump has no nodes");
  if (ret < 0)
    goto out;
  im.n_graphs = im.doc.n_clusters + 1;
  im.graphs = calloc (im.n_graphs, sizeof *im.graphs);
  im.info = calloc (im.doc.n_nodes, sizeof *im.info);
  order = malloc ((size_t) im.n_graphs * sizeof *order);
  if (!im.graphs || !im.info || !order) {
    ret = PS_ENOMEM;
    goto out;
  }
  ret = ps__strmap_init (&im.name_map, im.n_graphs * 3 + 16);
  if (ret == 0)
    ret = ps__strmap_init (&im.event_map, 64);
  if (ret == 0)
    ret = ps__dot_name_graphs (&im);
  for (uint32_t i = 0; i < im.doc.n_nodes && ret == 0; i++)
    ret = ps__dot_interpret (&im, i, &buf, &cap);
  if (ret < 0)
    goto out;
  assign_graphs (&im);
  ret = group_by_graph (&im);
  if (ret == 0)
    ret = order_graphs (&im, order, &n_order);
  if (ret == 0)
    ret = measure_graphs (&im, order, n_order);
  if (ret == 0) {
    count_instances (&im, order, n_order);
    ret = check_name_bytes (&im, order, n_order);
  }
  if (ret == 0)
    ret = check_edges (&im, order, n_order);
  if (ret == 0)
    ret = expand (&im, &f);
  if (ret == 0)
    ret = build (&im, &f);
  if (ret == 0) {
    tmp.name = graph_name (&im, path);
    tmp.path = strdup (path ? path : "");
    if (!tmp.name || !tmp.path)
      ret = PS_ENOMEM;
  }

out:
  if (ret < 0 && diag->errors == errors_before) {
    if (ret == PS_ENOMEM)
      ps_diag_error (diag, 0, 0, "out of memory while loading the graph");
    else
      ps_diag_error (diag, 0, 0, "%s", ps_strerror (ret));
  }
  free (buf);
  free (order);
  free (f.dot);
  free (f.name);
  free (f.src);
  free (f.dst);
  free (f.branches);
  free (f.ccase);
  free (im.info);
  free (im.graphs);
  free (im.names);
  free (im.gnodes);
  free (im.gedges);
  free (im.indeg);
  free (im.outdeg);
  free (im.ends);
  free (im.bodies);
  ps__strmap_free (&im.name_map);
  ps__strmap_free (&im.event_map);
  ps__dot_doc_free (&im.doc);
  if (ret < 0) {
    ps_graph_free (&tmp);
    ps_graph_init (g);
    return ret;
  }
  *g = tmp;
  return 0;
}
