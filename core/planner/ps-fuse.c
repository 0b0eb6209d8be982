/* ps-fuse.c: the fusion pass: groups of element-wise kernels that become
 * one launch, and the contracted graph of groups.
 *
 * Kernels are visited in topological order; a fusible kernel v joins the
 * groups of its fusible predecessors (loop fusion as XLA does it, producer
 * into consumer), merging several groups through v when it can.  Members of
 * a group share an element count, a stream pin and a conditional branch,
 * and a group holds at most PS__FUSE_MAX_GROUP kernels.
 *
 * Legality is convexity of the contracted graph: contracting a group must
 * not create a cycle through the groups formed so far (node-level
 * convexity is not enough: two groups {a1, a2} and {b1, b2} with edges
 * a1 -> b2 and b1 -> a2 are each convex yet form a cycle once contracted).
 * The pass keeps a number t per group that increases along every edge of
 * the contracted graph (singletons start at their topological position).
 * Merging a set M through v is allowed when some T lies strictly between
 * the largest t of M's outside predecessors and the smallest t of its
 * outside successors; M then takes t = T and the numbering stays a
 * topological order, so no cycle can exist.  When the numbering leaves no
 * room, a bounded search decides exactly and renumbers locally (see
 * renumber(); a search may go further while the pass has visits to
 * spare).  Every check is bounded (PS__FUSE_EDGE_BUDGET edges, and
 * RENUMBER_VISITS groups and RENUMBER_EDGES edges for the search); past a
 * bound the merge is refused, which is conservative and never wrong. */
#include "ps-planner-private.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "util/ps-job.h"
#include "util/ps-strmap.h"
#include "util/ps-topo.h"

#define MAX_CANDIDATES 8
/* Groups renumber() may move, and edges it may scan, for one merge; a
 * merge may go further, up to RENUMBER_VISITS_MAX groups, while the pass
 * has visits to spare: one per node of the graph, RENUMBER_SPARE_MAX at
 * most, so that large graphs pay next to nothing for it. */
#define RENUMBER_VISITS 64
#define RENUMBER_EDGES 1024
#define RENUMBER_VISITS_MAX 1024
#define RENUMBER_SPARE_MAX 32768

/* What the pass keeps per node, together: a check reads several of these
 * for the same node (or its representative), and in a graph much larger
 * than the caches each array apart would cost a miss of its own. */
typedef struct fnode {
  double t;      /* the topological number, valid for representatives */
  uint32_t rep;  /* group representative (its newest member) */
  uint32_t mark;
  uint32_t seen; /* search marks of renumber() */
  uint32_t next; /* next member of the representative's list */
  uint8_t size;  /* members, valid for representatives */
} fnode;

/* What members of a group share, for a fusible kernel. */
typedef struct fkey {
  uint64_t elems; /* element count; 0 for every node that is no fusible kernel */
  uint64_t sig;   /* stream pin, conditional and branch */
} fkey;

typedef struct fuse {
  ps__planner *pl;
  const ps_graph *g;
  fnode *nd;       /* per node, when some node is fusible */
  fkey *key;       /* per node */
  uint32_t stamp;
  uint32_t seen_stamp;
  uint32_t *moved; /* renumber()'s groups to move, RENUMBER_VISITS_MAX of them */
  struct numbered *sorted;
  double spare;    /* renumber() visits beyond RENUMBER_VISITS left to the pass */
} fuse;

static bool
node_fusible (const ps_graph *g, const ps_node *n)
{
  if (n->op != PS_OP_KERNEL || !(n->flags & PS_NODE_FUSIBLE) || n->aux >= g->n_kernels)
    return false;
  if (g->kernels[n->aux].module != PS_NONE)
    return false;
  return n->impl == PS_IMPL_NONE || ps_impl_elementwise ((ps_impl) n->impl);
}

/* The element count a fused kernel runs over: that of the buffer a
 * built-in writes, or of the largest buffer a synthetic kernel writes. */
static uint64_t
node_elems (const ps_graph *g, const ps_node *n)
{
  uint64_t best = 0;
  uint64_t end = (uint64_t) n->writes_begin + n->writes_count;
  for (uint64_t i = n->writes_begin; i < end && i < g->n_access; i++) {
    uint32_t b = g->access[i];
    if (b >= g->n_buffers)
      continue;
    uint32_t sz = ps_dtype_size ((ps_dtype) g->buffers[b].dtype);
    uint64_t e = g->buffers[b].bytes / (sz ? sz : 1);
    if (n->impl != PS_IMPL_NONE)
      return e;
    if (e > best)
      best = e;
  }
  return best;
}

/* What members of a group must share besides the element count. */
static uint64_t
node_sig (const ps_node *n)
{
  const unsigned branch = PS_NODE_IN_THEN | PS_NODE_IN_ELSE;
  /* Pins are below PS_MAX_STREAMS here (ps__plan_check_options). */
  return (uint64_t) n->cond << 32 | (uint64_t) ((uint32_t) (n->stream + 1) & 0x3fffffffu) << 2
         | (n->flags & branch) >> 3;
}

bool
ps__fuse_key (const ps_graph *g, uint32_t v, uint64_t *elems, uint64_t *sig)
{
  const ps_node *n = &g->nodes[v];
  *sig = node_sig (n);
  *elems = node_fusible (g, n) ? node_elems (g, n) : 0;
  return *elems > 0;
}

static uint32_t
next_stamp (fuse *f)
{
  if (++f->stamp == 0) {
    for (uint32_t v = 0; v < f->pl->n; v++)
      f->nd[v].mark = 0;
    f->stamp = 1;
  }
  return f->stamp;
}

/* What the edges of a merge set M say about merging it. */
typedef struct scan {
  double lo, hi;   /* largest t of an outside predecessor, smallest of a visited successor */
  bool has_succ;   /* some outside successor was already visited */
  uint32_t budget; /* edges left to scan */
} scan;

/* Charges the edges of member m of the merge set to the budget: false
 * when it runs out. */
static inline bool
charge_member (const fuse *f, uint32_t m, scan *sc)
{
  const ps_graph *g = f->g;
  uint32_t deg = (g->pred_off[m + 1] - g->pred_off[m]) + (g->succ_off[m + 1] - g->succ_off[m]);
  if (deg > sc->budget)
    return false;
  sc->budget -= deg;
  return true;
}

/* The outside successors of member m (not v) already visited. */
static void
scan_succs (const fuse *f, uint32_t m, uint32_t v, uint32_t stamp, scan *sc)
{
  const ps_graph *g = f->g;
  const fnode *nd = f->nd;
  const uint32_t *tpos = f->pl->tpos, tv = tpos[v];
  for (uint32_t e = g->succ_off[m]; e < g->succ_off[m + 1]; e++) {
    uint32_t w = g->succ[e];
    if (tpos[w] >= tv)
      continue;
    const fnode *r = &nd[nd[w].rep];
    if (r->mark == stamp)
      continue;
    sc->has_succ = true;
    if (r->t < sc->hi)
      sc->hi = r->t;
  }
}

/* The outside predecessors of member m. */
static void
scan_preds (const fuse *f, uint32_t m, uint32_t stamp, scan *sc)
{
  const ps_graph *g = f->g;
  const fnode *nd = f->nd;
  for (uint32_t e = g->pred_off[m]; e < g->pred_off[m + 1]; e++) {
    const fnode *r = &nd[nd[g->pred[e]].rep];
    if (r->mark != stamp && r->t > sc->lo)
      sc->lo = r->t;
  }
}

/* Calls body for every member m of the group with representative r. */
#define FOR_MEMBERS(f, r, m, body)                                            \
  do {                                                                        \
    for (uint32_t m = (r); m != PS_NONE; m = (f)->nd[m].next) {               \
      body                                                                    \
    }                                                                         \
  } while (0)

/* User event nodes are also ordered by the issue-order chains of their
 * events (see contract()), which the search does not follow: they are
 * never moved. */
static inline bool
is_event (const ps_graph *g, uint32_t v)
{
  return g->nodes[v].op == PS_OP_EVENT_RECORD || g->nodes[v].op == PS_OP_EVENT_WAIT;
}

/* A group to move and its number, sorted by number (renumber()). */
typedef struct numbered {
  double t;
  uint32_t r;
} numbered;

static int
by_t (const void *x, const void *y)
{
  double a = ((const numbered *) x)->t, b = ((const numbered *) y)->t;
  return a < b ? -1 : a > b;
}

/* When the numbering leaves no room for M (an outside successor is
 * numbered below an outside predecessor), the merge may still be legal:
 * the groups reachable from M whose numbers are at most lo (the largest
 * number of an outside predecessor) are the only ones that could lead back
 * into M, since numbers grow along edges.  They are found by a bounded
 * search; if none leads into M, M and then those groups, in their old
 * order, are renumbered into the gap above lo, which keeps the numbering
 * topological (this is the local reordering of Pearce and Kelly's dynamic
 * topological order).  Refuses when the search outgrows its budget or the
 * gap is too narrow for distinct numbers. */
static bool
renumber (fuse *f, uint32_t v, const uint32_t *parts, uint32_t np, uint32_t stamp, double lo,
          double *T)
{
  const ps_graph *g = f->g;
  fnode *nd = f->nd;
  uint32_t tv = f->pl->tpos[v], *moved = f->moved, n_moved = 0;
  uint32_t limit = RENUMBER_VISITS;
  if (f->spare >= 1)
    limit += f->spare < RENUMBER_VISITS_MAX - RENUMBER_VISITS ? (uint32_t) f->spare
                                                               : RENUMBER_VISITS_MAX - RENUMBER_VISITS;
  uint32_t seen = ++f->seen_stamp, edges = RENUMBER_EDGES / RENUMBER_VISITS * limit;
  if (seen == 0) {
    for (uint32_t x = 0; x < f->pl->n; x++)
      nd[x].seen = 0;
    seen = f->seen_stamp = 1;
  }
  double hi = (double) tv + 1.0;
  bool ok = true;
  /* Visits the successors of member m: into M is a cycle, numbers at most
   * lo join `moved`, larger ones bound the gap. */
#define VISIT_SUCCS(m)                                                        \
  do {                                                                        \
    uint32_t deg_ = g->succ_off[(m) + 1] - g->succ_off[m];                     \
    if (deg_ > edges) {                                                       \
      ok = false;                                                             \
      break;                                                                  \
    }                                                                         \
    edges -= deg_;                                                            \
    for (uint32_t e_ = g->succ_off[m]; e_ < g->succ_off[(m) + 1] && ok; e_++) { \
      uint32_t w_ = g->succ[e_], r_ = nd[w_].rep;                              \
      if (nd[r_].mark == stamp) { /* back into M: a cycle unless from M */   \
        ok = in_m;                                                            \
        continue;                                                             \
      }                                                                       \
      if (f->pl->tpos[w_] >= tv || nd[r_].seen == seen)                       \
        continue;                                                             \
      if (nd[r_].t > lo) {                                                    \
        if (nd[r_].t < hi)                                                    \
          hi = nd[r_].t;                                                      \
        continue;                                                             \
      }                                                                       \
      if (n_moved == limit || is_event (g, r_)) {                            \
        ok = false;                                                           \
        break;                                                                \
      }                                                                       \
      nd[r_].seen = seen;                                                     \
      moved[n_moved++] = r_;                                                  \
    }                                                                         \
  } while (0)

  bool in_m = true;
  VISIT_SUCCS (v);
  for (uint32_t k = 0; k < np && ok; k++)
    FOR_MEMBERS (f, parts[k], m, {
      if (ok)
        VISIT_SUCCS (m);
    });
  in_m = false;
  for (uint32_t i = 0; i < n_moved && ok; i++)
    FOR_MEMBERS (f, moved[i], m, {
      if (ok)
        VISIT_SUCCS (m);
    });
#undef VISIT_SUCCS
  if (n_moved > RENUMBER_VISITS)
    f->spare -= n_moved - RENUMBER_VISITS;
  if (!ok || !(lo < hi))
    return false;

  /* M first, then the moved groups in their old order, evenly in (lo, hi). */
  if (n_moved <= RENUMBER_VISITS) {
    for (uint32_t k = 1; k < n_moved; k++)
      for (uint32_t j = k; j > 0 && nd[moved[j]].t < nd[moved[j - 1]].t; j--) {
        uint32_t x = moved[j];
        moved[j] = moved[j - 1];
        moved[j - 1] = x;
      }
  } else {
    for (uint32_t i = 0; i < n_moved; i++)
      f->sorted[i] = (numbered) { nd[moved[i]].t, moved[i] };
    ps_array_sort (f->sorted, n_moved, sizeof *f->sorted, by_t);
    for (uint32_t i = 0; i < n_moved; i++)
      moved[i] = f->sorted[i].r;
  }
  double step = (hi - lo) / (n_moved + 2), prev = lo;
  for (uint32_t i = 0; i <= n_moved; i++) {
    double x = lo + step * (i + 1);
    if (!(x > prev && x < hi))
      return false;
    prev = x;
  }
  *T = lo + step;
  for (uint32_t i = 0; i < n_moved; i++)
    nd[moved[i]].t = lo + step * (i + 2);
  return true;
}

/* Tries to merge v (a singleton) with the groups parts[0..np).  Returns
 * true and performs the merge when it keeps the contracted graph acyclic. */
static bool
try_merge (fuse *f, uint32_t v, const uint32_t *parts, uint32_t np)
{
  fnode *nd = f->nd;
  uint32_t stamp = next_stamp (f);
  uint32_t total = 1;
  nd[v].mark = stamp;
  for (uint32_t k = 0; k < np; k++) {
    nd[parts[k]].mark = stamp;
    total += nd[parts[k]].size;
  }
  if (total > PS__FUSE_MAX_GROUP)
    return false;
  /* The successors first (v's are all still unvisited): without a visited
   * one outside M, M takes v's position, which is above the number of
   * every group visited so far (each is numbered below the position of the
   * node visited after it), so the predecessors need not be read (1M-node
   * layered: 229k of the 531k merges tried; the pass 0.42 -> 0.41 s). */
  scan sc = { -INFINITY, (double) f->pl->tpos[v] + 1.0, false, PS__FUSE_EDGE_BUDGET };
  if (!charge_member (f, v, &sc))
    return false;
  for (uint32_t k = 0; k < np; k++)
    for (uint32_t m = parts[k]; m != PS_NONE; m = nd[m].next) {
      if (!charge_member (f, m, &sc))
        return false;
      scan_succs (f, m, v, stamp, &sc);
    }
  if (sc.has_succ) {
    scan_preds (f, v, stamp, &sc);
    for (uint32_t k = 0; k < np; k++)
      for (uint32_t m = parts[k]; m != PS_NONE; m = nd[m].next)
        scan_preds (f, m, stamp, &sc);
  }
  double T = (double) f->pl->tpos[v], lo = sc.lo, hi = sc.hi;
  if (sc.has_succ)
    T = isinf (lo) ? hi - 1.0 : lo + (hi - lo) / 2;
  if (!(lo < T && T < hi) && !renumber (f, v, parts, np, stamp, lo, &T))
    return false;

  /* v becomes the representative: its list is v followed by every part's. */
  uint32_t tail = v;
  for (uint32_t k = 0; k < np; k++) {
    nd[tail].next = parts[k];
    for (uint32_t m = parts[k]; m != PS_NONE; m = nd[m].next) {
      nd[m].rep = v;
      tail = m;
    }
  }
  nd[v].size = (uint8_t) total;
  nd[v].t = T;
  return true;
}

static void
fuse_node (fuse *f, uint32_t v)
{
  const ps_graph *g = f->g;
  fnode *nd = f->nd;
  const fkey kv = f->key[v];
  uint32_t cand[MAX_CANDIDATES], nc = 0;
  uint32_t stamp = next_stamp (f);
  for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
    uint32_t u = g->pred[e];
    if (f->key[u].elems != kv.elems || f->key[u].sig != kv.sig)
      continue;
    uint32_t r = nd[u].rep;
    if (nd[r].mark == stamp || nd[r].size + 1u > PS__FUSE_MAX_GROUP)
      continue;
    nd[r].mark = stamp;
    if (nc < MAX_CANDIDATES) {
      cand[nc++] = r;
    } else {
      /* Keep the most recent groups: they are the likeliest producers. */
      uint32_t lo = 0;
      for (uint32_t k = 1; k < nc; k++)
        if (nd[cand[k]].t < nd[cand[lo]].t)
          lo = k;
      if (nd[r].t > nd[cand[lo]].t)
        cand[lo] = r;
    }
  }
  if (nc == 0)
    return;
  for (uint32_t k = 1; k < nc; k++) /* most recent first */
    for (uint32_t j = k; j > 0 && nd[cand[j]].t > nd[cand[j - 1]].t; j--) {
      uint32_t x = cand[j];
      cand[j] = cand[j - 1];
      cand[j - 1] = x;
    }

  /* First every group that fits together, then each group alone. */
  uint32_t parts[MAX_CANDIDATES], np = 0, total = 1;
  for (uint32_t k = 0; k < nc; k++)
    if (total + nd[cand[k]].size <= PS__FUSE_MAX_GROUP) {
      parts[np++] = cand[k];
      total += nd[cand[k]].size;
    }
  if (np >= 2 && try_merge (f, v, parts, np))
    return;
  for (uint32_t k = 0; k < nc; k++)
    if (try_merge (f, v, &cand[k], 1))
      return;
}

/* The name of a fused kernel: "fused_" and the first distinct function
 * names of its members, then "_x<members>" when some are not listed; at
 * most NAME_MAX_BYTES with its NUL. */
#define NAME_MAX_BYTES (5 + PS__FUSE_NAME_PARTS * (PS__FUSE_NAME_PART + 1) + 2 + 10 + 1)

static int
group_name (ps__planner *pl, uint32_t gi, uint32_t *off)
{
  const ps_graph *g = pl->g;
  const char *names[PS__FUSE_NAME_PARTS];
  uint32_t nn = 0, count = pl->gm_off[gi + 1] - pl->gm_off[gi];
  for (uint32_t k = pl->gm_off[gi]; k < pl->gm_off[gi + 1] && nn < PS__FUSE_NAME_PARTS; k++) {
    const ps_node *n = &g->nodes[pl->gm[k]];
    const char *fn = n->aux < g->n_kernels ? ps_graph_str (g, g->kernels[n->aux].function) : NULL;
    if (!fn || !*fn)
      fn = "kernel";
    bool seen = false;
    for (uint32_t j = 0; j < nn && !seen; j++)
      seen = strcmp (names[j], fn) == 0;
    if (!seen)
      names[nn++] = fn;
  }
  char buf[NAME_MAX_BYTES];
  size_t at = 5;
  memcpy (buf, "fused", 5);
  for (uint32_t j = 0; j < nn; j++) {
    size_t len = strlen (names[j]);
    if (len > PS__FUSE_NAME_PART)
      len = PS__FUSE_NAME_PART;
    buf[at++] = '_';
    memcpy (buf + at, names[j], len);
    at += len;
  }
  if (count > nn) {
    /* "_x" and the member count (at most PS__FUSE_MAX_GROUP), written by
     * hand: a million groups spend real time in snprintf. */
    char digits[10];
    uint32_t nd = 0;
    for (uint32_t c = count; c > 0 || nd == 0; c /= 10)
      digits[nd++] = (char) ('0' + c % 10);
    buf[at++] = '_';
    buf[at++] = 'x';
    while (nd > 0)
      buf[at++] = digits[--nd];
  }
  buf[at] = 0;
  return ps__plan_add_string (pl->p, buf, off);
}

/* Group costs and fused names: what the simulator charges for each step
 * (ps_cost_node, or ps_cost_group for a fused one, which runs on the SMs),
 * computed here once per node rather than per node and again per group,
 * and kept whole for the search's simulations.  Also each group's stream
 * pin, which its members share: its first member's, read while that node
 * is at hand (-1 for all when `unpinned`).  Plans of COSTS_THREAD_MIN
 * groups or more cost their second half of groups on a second thread
 * (the groups' members are scattered over the graph: 1M-node layered,
 * 0.19 s in one go, about 0.1 s so). */
#define COSTS_THREAD_MIN 65536u

/* Where work over n items splits between the caller and a second thread:
 * n (no second thread) below COSTS_THREAD_MIN. */
static uint32_t
split_at (uint32_t n)
{
  return n >= COSTS_THREAD_MIN ? n / 2 : n;
}

typedef struct cost_range {
  ps__planner *pl;
  const ps_cost_part *parts; /* by node, costed ahead; or NULL */
  const ps_cost_scratch *base; /* whose readers the range's scratch reads, or NULL */
  uint32_t from, to;
  bool unpinned;
  int rc;
  double busy[PS_RES__COUNT]; /* the share-time of the range's nodes (ps_cost_share_time) */
  ps__job job;
} cost_range;

/* The costs of groups [from, to): 0 or PS_ENOMEM. */
static void
cost_groups (void *arg)
{
  cost_range *cr = arg;
  ps__planner *pl = cr->pl;
  const ps_graph *g = pl->g;
  ps_cost_scratch sc;
  memset (&sc, 0, sizeof sc);
  cr->rc = 0;
  memset (cr->busy, 0, sizeof cr->busy);
  for (uint32_t gi = cr->from; gi < cr->to; gi++) {
    uint32_t b0 = pl->gm_off[gi], b1 = pl->gm_off[gi + 1];
    const ps_node *first = &g->nodes[pl->gm[b0]];
    pl->gfunc[gi] = PS_NONE;
    pl->gop[gi] = b1 - b0 == 1 ? first->op : PS_OP_KERNEL;
    pl->gpin[gi] = cr->unpinned ? -1 : first->stream;
    /* A lone kernel's function, as the graph's string offset for now
     * (kernel_names). */
    if (b1 - b0 == 1 && first->op == PS_OP_KERNEL && first->aux < g->n_kernels)
      pl->gfunc[gi] = g->kernels[first->aux].function;
    ps_cost c;
    if (b1 - b0 == 1) {
      if (cr->parts)
        c = cr->parts[pl->gm[b0]].c;
      else
        ps_cost_node (&pl->dev, g, pl->gm[b0], &c);
      ps_cost_share_time (&c, cr->busy);
      pl->gres[gi] = c.ns > 0 && c.resource < PS_RES__COUNT ? c.resource : PS_RES_NONE;
    } else {
      if (!sc.readers
          && (cr->base ? ps_cost_scratch_init_shared (&sc, g, cr->base)
                       : ps_cost_scratch_init (&sc, g))
                 < 0) {
        cr->rc = PS_ENOMEM;
        break;
      }
      sc.parts = cr->parts;
      ps_cost_group (&pl->dev, g, pl->gm + b0, b1 - b0, &sc, &c);
      pl->gres[gi] = c.ns > 0 ? PS_RES_SM : PS_RES_NONE;
    }
    pl->gfrac[gi] = (float) ps_cost_share (&c);
    pl->gsim[gi] = c;
    pl->gcost[gi] = c.ns;
  }
  for (int r = 0; r < PS_RES__COUNT; r++)
    cr->busy[r] += sc.busy[r]; /* the members of fused groups */
  ps_cost_scratch_free (&sc);
}

static int
group_costs (ps__planner *pl, bool unpinned, const ps_cost_part *parts, const ps_cost_scratch *base)
{
  /* Every simulation of the plan's schedules reads these costs: the
   * search's, and the one simulation of a plan too large for the search,
   * whose steps would otherwise be costed again (1M-node layered: 0.43 ->
   * 0.17 s, for 25 MiB more at the peak, 60 MiB with the plan without
   * fusion made beside). */
  free (pl->gsim);
  if (!(pl->gsim = malloc (((size_t) pl->ng + 1) * sizeof *pl->gsim)))
    return ps__planner_nomem (pl);
  uint32_t half = split_at (pl->ng);
  cost_range second = {
    .pl = pl, .parts = parts, .base = base, .from = half, .to = pl->ng, .unpinned = unpinned
  };
  ps__job_start (&second.job, cost_groups, &second, half < pl->ng);
  cost_range first
      = { .pl = pl, .parts = parts, .base = base, .from = 0, .to = half, .unpinned = unpinned };
  cost_groups (&first);
  ps__job_finish (&second.job);
  int rc = first.rc < 0 ? first.rc : second.rc;
  /* Every node was costed once, alone or in its group: the least time
   * the graph needs without fusion (ps_cost_unfused_bound), for fusion
   * auto. */
  for (int r = 0; r < PS_RES__COUNT; r++)
    first.busy[r] += second.busy[r];
  pl->unfused_bound = pl->g->measured ? 0 : ps_cost_busiest (first.busy);
  return rc == PS_ENOMEM ? ps__planner_nomem (pl) : rc;
}

/* The lone kernels' functions in the plan's strings, once per name:
 * cost_groups left each one's offset in the graph's strings in gfunc,
 * which becomes the plan's.  The sync pass emits them for every stream
 * count the search tries; reading each kernel's record and copying its
 * name there took 0.05 s per count at 1M nodes. */
static int
kernel_names (ps__planner *pl)
{
  const ps_graph *g = pl->g;
  ps_plan *p = pl->p;
  ps_strmap names; /* the plan's copies, by name */
  int rc = ps__strmap_init (&names, 64);
  for (uint32_t gi = 0; gi < pl->ng && rc == 0; gi++) {
    if (pl->gfunc[gi] == PS_NONE || pl->gm_off[gi + 1] - pl->gm_off[gi] != 1)
      continue;
    const char *fn = ps_graph_str (g, pl->gfunc[gi]);
    size_t len = strlen (fn);
    uint32_t h = ps__strmap_hash (fn, len), at = ps__strmap_find (&names, p->strings, fn, len, h);
    if (at == UINT32_MAX && (rc = ps__plan_add_string (p, fn, &at)) == 0)
      rc = ps__strmap_insert (&names, at, h, at);
    pl->gfunc[gi] = at;
  }
  ps__strmap_free (&names);
  return rc == PS_ENOMEM ? ps__planner_nomem (pl) : rc;
}

/* The fused groups' names (ps_cost_group leaves their gfunc PS_NONE):
 * on a second thread while the groups' edges and ranks are made, which
 * read none of it (1M-node layered: 108,433 names, 0.04 s).  The plan's
 * string table is grown for the longest names first (names_reserve), so
 * that the thread allocates nothing: a table grown there moved to the
 * thread's own heap, and the 1M-node layered `plan` peaked 50 MiB
 * higher. */
static int
names_reserve (ps__planner *pl)
{
  ps_plan *p = pl->p;
  return PS_ARRAY_RESERVE (p->strings, p->strings_cap,
                           (uint64_t) p->strings_len + (uint64_t) pl->n_fused * NAME_MAX_BYTES);
}

typedef struct names_job {
  ps__planner *pl;
  int rc;
  ps__job job;
} names_job;

static void
names_main (void *arg)
{
  names_job *j = arg;
  ps__planner *pl = j->pl;
  j->rc = 0;
  for (uint32_t gi = 0; gi < pl->ng && j->rc == 0; gi++)
    if (pl->gm_off[gi + 1] - pl->gm_off[gi] > 1)
      j->rc = group_name (pl, gi, &pl->gfunc[gi]);
}

/* Every node's cost, ahead of the groups: on a second thread while the
 * pass groups the nodes of a large graph, which reads none of it
 * (1M-node layered: the pass 0.51 -> 0.47 s, `plan` 2.96 -> 2.91 s,
 * medians of 5; the group costs then read each node's, ps_cost_scratch.parts). */
typedef struct parts_job {
  const ps__planner *pl;
  ps_cost_part *parts;
  /* Also each buffer's readers, which the fused groups' costs read
   * (ps_cost_scratch.readers): counted once here, not by each of the two
   * threads that cost the groups (1M-node layered: 0.013-0.018 s each);
   * scratch_rc < 0 when they could not be. */
  ps_cost_scratch scratch;
  int scratch_rc;
  /* The nodes are costed PARTS_CHUNK at a time, from `next` on, by the
   * thread and by the caller once it has grouped the nodes (parts_take):
   * where grouping is quick, the caller would otherwise wait for the
   * thread (1M-node fanout and transformer: 0.04 s). */
  _Atomic uint64_t next;
  ps__job job;
} parts_job;

#define PARTS_CHUNK 4096u

static void
parts_take (parts_job *j)
{
  uint32_t n = j->pl->n;
  for (;;) {
    uint64_t from = atomic_fetch_add_explicit (&j->next, PARTS_CHUNK, memory_order_relaxed);
    if (from >= n)
      return;
    uint32_t to = n - from < PARTS_CHUNK ? n : (uint32_t) from + PARTS_CHUNK;
    for (uint32_t v = (uint32_t) from; v < to; v++)
      ps_cost_node_part (&j->pl->dev, j->pl->g, v, &j->parts[v]);
  }
}

static void
parts_main (void *arg)
{
  parts_job *j = arg;
  parts_take (j);
  j->scratch_rc = ps_cost_scratch_init (&j->scratch, j->pl->g);
}

/* The fusion keys, or the pass's per-node state, of nodes [from, to):
 * large graphs make each half on a second thread (1M-node layered: the
 * keys 0.021 s in one go, the state 0.013 s). */
typedef struct key_range {
  fuse *f;
  uint32_t from, to;
  bool any; /* some node of the range may fuse */
  ps__job job;
} key_range;

static void
keys_main (void *arg)
{
  key_range *k = arg;
  fuse *f = k->f;
  const ps__planner *pl = f->pl;
  const ps_graph *g = f->g;
  bool any = false;
  for (uint32_t v = k->from; v < k->to; v++) {
    const ps_node *nd = &g->nodes[v];
    f->key[v].sig = node_sig (nd);
    f->key[v].elems
        = node_fusible (g, nd) && !(pl->nofuse && pl->nofuse[v]) ? node_elems (g, nd) : 0;
    any |= f->key[v].elems > 0;
  }
  k->any = any;
}

static void
nodes_main (void *arg)
{
  key_range *k = arg;
  fuse *f = k->f;
  for (uint32_t v = k->from; v < k->to; v++)
    f->nd[v] = (fnode){ .t = (double) f->pl->tpos[v], .rep = v, .next = PS_NONE, .size = 1 };
}

/* fn over nodes [0, n): the second half on a second thread when the
 * graph is large.  Returns whether some range set `any`. */
static bool
by_halves (fuse *f, void (*fn) (void *), uint32_t n)
{
  uint32_t half = split_at (n);
  key_range second = { .f = f, .from = half, .to = n }, first = { .f = f, .from = 0, .to = half };
  ps__job_start (&second.job, fn, &second, half < n);
  fn (&first);
  ps__job_finish (&second.job);
  return first.any || second.any;
}

/* Contracted edges (deduplicated, without self loops) and the issue-order
 * chains of user events; *forward: every edge goes to a higher group id. */
static int
contract (ps__planner *pl, uint32_t *mark, bool *forward)
{
  const ps_graph *g = pl->g;
  uint32_t ng = pl->ng, E = g->succ_off[pl->n];
  pl->gsucc_off = malloc (((size_t) ng + 1) * sizeof *pl->gsucc_off);
  pl->gpred_off = calloc ((size_t) ng + 2, sizeof *pl->gpred_off);
  pl->gsucc = malloc ((E ? E : 1) * sizeof *pl->gsucc);
  pl->chain_next = malloc ((ng ? ng : 1) * sizeof *pl->chain_next);
  pl->chain_in = calloc (ng ? ng : 1, 1);
  if (!pl->gsucc_off || !pl->gpred_off || !pl->gsucc || !pl->chain_next || !pl->chain_in)
    return ps__planner_nomem (pl);
  for (uint32_t gi = 0; gi < ng; gi++)
    mark[gi] = PS_NONE;
  uint32_t cnt = 0;
  bool fwd = true;
  for (uint32_t gi = 0; gi < ng; gi++) {
    pl->gsucc_off[gi] = cnt;
    for (uint32_t k = pl->gm_off[gi]; k < pl->gm_off[gi + 1]; k++) {
      uint32_t m = pl->gm[k];
      for (uint32_t e = g->succ_off[m]; e < g->succ_off[m + 1]; e++) {
        uint32_t gj = pl->node_group[g->succ[e]];
        if (gj == gi || mark[gj] == gi)
          continue;
        mark[gj] = gi;
        fwd &= gj > gi;
        pl->gsucc[cnt++] = gj;
        pl->gpred_off[gj + 2]++;
      }
    }
  }
  pl->gsucc_off[ng] = cnt;
  *forward = fwd;
  pl->gpred = malloc ((cnt ? cnt : 1) * sizeof *pl->gpred);
  if (!pl->gpred)
    return ps__planner_nomem (pl);
  for (uint32_t gi = 0; gi < ng; gi++)
    pl->gpred_off[gi + 2] += pl->gpred_off[gi + 1];
  for (uint32_t gi = 0; gi < ng; gi++)
    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1]; e++)
      pl->gpred[pl->gpred_off[pl->gsucc[e] + 1]++] = gi;

  /* Per event: the group of its latest node and of its latest record. */
  uint32_t ne = g->n_events;
  uint32_t *last = malloc ((ne ? 2 * (size_t) ne : 1) * sizeof *last);
  pl->uwait_of = malloc ((ng ? ng : 1) * sizeof *pl->uwait_of);
  if (!last || !pl->uwait_of) {
    free (last);
    return ps__planner_nomem (pl);
  }
  uint32_t *last_rec = last + ne;
  for (uint32_t e = 0; e < 2 * ne; e++)
    last[e] = PS_NONE;
  for (uint32_t gi = 0; gi < ng; gi++)
    pl->chain_next[gi] = pl->uwait_of[gi] = PS_NONE;
  for (uint32_t i = 0; i < pl->n && ne > 0; i++) {
    uint32_t v = pl->topo[i];
    const ps_node *n = &g->nodes[v];
    if ((n->op != PS_OP_EVENT_RECORD && n->op != PS_OP_EVENT_WAIT) || n->aux >= ne)
      continue;
    uint32_t gv = pl->node_group[v];
    if (last[n->aux] != PS_NONE && last[n->aux] != gv) {
      pl->chain_next[last[n->aux]] = gv;
      pl->chain_in[gv] = 1;
    }
    last[n->aux] = gv;
    if (n->op == PS_OP_EVENT_RECORD)
      last_rec[n->aux] = gv;
    else
      pl->uwait_of[gv] = last_rec[n->aux];
  }
  free (last);
  return 0;
}

/* Each group's upward rank (pl->grank) and the largest (grank_max), by
 * the groups in reverse topological order of the contracted graph: their
 * ids' when every edge goes forward (`forward`: always without fusion),
 * else one found (ps-topo.h; order: ng entries of scratch). */
static int
upward_ranks (ps__planner *pl, uint32_t *order, bool forward)
{
  uint32_t ng = pl->ng;
  pl->grank = malloc ((ng ? ng : 1) * sizeof *pl->grank);
  if (!pl->grank)
    return ps__planner_nomem (pl);
  if (!forward) {
    uint32_t *indeg = malloc ((ng ? ng : 1) * sizeof *indeg);
    if (!indeg)
      return ps__planner_nomem (pl);
    uint32_t placed = ps__topo_order (ng, pl->gpred_off, pl->gsucc_off, pl->gsucc, order, indeg);
    free (indeg);
    if (placed != ng) {
      if (pl->diag)
        ps_diag_error (pl->diag, 0, 0, "internal error: the contracted graph has a cycle");
      return PS_ECYCLE;
    }
  }
  double *rank = pl->grank, top = 0;
  for (uint32_t i = ng; i-- > 0;) {
    uint32_t gi = forward ? i : order[i];
    double best = 0;
    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1]; e++)
      if (rank[pl->gsucc[e]] > best)
        best = rank[pl->gsucc[e]];
    rank[gi] = pl->gcost[gi] + best;
    if (rank[gi] > top)
      top = rank[gi];
  }
  pl->grank_max = top;
  return 0;
}

int
ps__planner_fuse (ps__planner *pl)
{
  const ps_graph *g = pl->g;
  uint32_t n = pl->n, nn = n ? n : 1;
  int rc = 0;
  fuse f;
  memset (&f, 0, sizeof f);
  f.pl = pl;
  f.g = g;
  parts_job pj = { .pl = pl };
  /* Group ids by representative, then contract()'s marks by group. */
  uint32_t *gid = malloc (nn * sizeof *gid);
  pl->node_group = malloc (nn * sizeof *pl->node_group);
  if (!gid || !pl->node_group) {
    rc = ps__planner_nomem (pl);
    goto out;
  }

  bool any = false;
  if (pl->fusion) {
    f.key = malloc (nn * sizeof *f.key);
    if (!f.key) {
      rc = ps__planner_nomem (pl);
      goto out;
    }
    any = by_halves (&f, keys_main, n);
  }
  if (any) {
    f.nd = malloc (nn * sizeof *f.nd);
    f.moved = malloc (RENUMBER_VISITS_MAX * sizeof *f.moved);
    f.sorted = malloc (RENUMBER_VISITS_MAX * sizeof *f.sorted);
    f.spare = n < RENUMBER_SPARE_MAX ? n : RENUMBER_SPARE_MAX;
    if (!f.nd || !f.moved || !f.sorted) {
      rc = ps__planner_nomem (pl);
      goto out;
    }
    by_halves (&f, nodes_main, n);
    if (n >= COSTS_THREAD_MIN && (pj.parts = malloc (nn * sizeof *pj.parts)))
      ps__job_start (&pj.job, parts_main, &pj, true);
    for (uint32_t i = 0; i < n; i++)
      if (f.key[pl->topo[i]].elems > 0)
        fuse_node (&f, pl->topo[i]);
  }

  /* Number the groups in topological order of their first member and list
   * their members in topological order.  Without fusion every node is a
   * group of its own. */
  for (uint32_t v = 0; v < n; v++)
    gid[v] = PS_NONE;
  uint32_t ng = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = pl->topo[i], r = f.nd ? f.nd[v].rep : v;
    if (gid[r] == PS_NONE)
      gid[r] = ng++;
    pl->node_group[v] = gid[r];
  }
  pl->ng = ng;
  pl->gm_off = calloc ((size_t) ng + 2, sizeof *pl->gm_off);
  pl->gm = malloc (nn * sizeof *pl->gm);
  pl->gcost = malloc ((ng ? ng : 1) * sizeof *pl->gcost);
  pl->gfunc = malloc ((ng ? ng : 1) * sizeof *pl->gfunc);
  pl->gop = malloc (ng ? ng : 1);
  pl->gpin = malloc ((ng ? ng : 1) * sizeof *pl->gpin);
  pl->gres = malloc (ng ? ng : 1);
  pl->gfrac = malloc ((ng ? ng : 1) * sizeof *pl->gfrac);
  if (!pl->gm_off || !pl->gm || !pl->gcost || !pl->gfunc || !pl->gop || !pl->gpin || !pl->gres
      || !pl->gfrac) {
    rc = ps__planner_nomem (pl);
    goto out;
  }
  for (uint32_t v = 0; v < n; v++)
    pl->gm_off[pl->node_group[v] + 2]++;
  for (uint32_t gi = 0; gi < ng; gi++) {
    pl->n_fused += pl->gm_off[gi + 2] > 1; /* group gi's members, still */
    pl->gm_off[gi + 2] += pl->gm_off[gi + 1];
  }
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = pl->topo[i];
    pl->gm[pl->gm_off[pl->node_group[v] + 1]++] = v;
  }
  /* The nodes' costs the thread has not taken yet, then its readers. */
  if (pj.parts) {
    parts_take (&pj);
    if (!ps__job_finish (&pj.job))
      parts_main (&pj);
  }
  /* A measured run on more streams than asked for: its recorded streams
   * are no pins then, only their order (ps__plan_check_options). */
  if ((rc = group_costs (pl, ps__plan_unpinned (g, pl->S), pj.parts,
                         pj.parts && pj.scratch_rc == 0 ? &pj.scratch : NULL))
      < 0)
    goto out;
  names_job nj = { .pl = pl };
  bool beside = ng >= COSTS_THREAD_MIN && pl->n_fused > 0 && names_reserve (pl) == 0;
  ps__job_start (&nj.job, names_main, &nj, beside);
  bool forward = false;
  if ((rc = contract (pl, gid, &forward)) == 0)
    rc = upward_ranks (pl, gid, forward);
  if (!ps__job_finish (&nj.job))
    names_main (&nj);
  if (rc == 0 && nj.rc < 0)
    rc = nj.rc == PS_ENOMEM ? ps__planner_nomem (pl) : nj.rc;
  if (rc == 0)
    rc = kernel_names (pl);
out:
  ps__job_drop (&pj.job);
  ps_cost_scratch_free (&pj.scratch);
  free (pj.parts);
  free (f.key);
  free (f.nd);
  free (f.moved);
  free (f.sorted);
  free (gid);
  return rc;
}
