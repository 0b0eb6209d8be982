/* ps-durations.c: a CUDA-graph dump's kernel durations from a trace of
 * its replays (see ps-import.h).  One sort of the trace's kernel names,
 * one of the dump's kernels by function, and binary searches between. */
#include "ps-import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-demangle.h"

/* A name as compared: without the "void " that demanglers put before a
 * template function's name. */
static const char *
bare (const char *s)
{
  return strncmp (s, "void ", 5) == 0 ? s + 5 : s;
}

typedef struct {
  const char *key; /* bare trace name */
  uint32_t span;
} tname;

static int
cmp_tname (const void *a, const void *b)
{
  const tname *x = a, *y = b;
  int c = strcmp (x->key, y->key);
  if (c)
    return c;
  return x->span < y->span ? -1 : x->span > y->span;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The first of names[lo, n) whose key is `key`, or (prefix) starts with
 * key followed by its parameter list; n when none. */
static uint32_t
lookup (const tname *names, uint32_t n, const char *key, bool prefix)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (strcmp (names[mid].key, key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t kl = strlen (key);
  for (uint32_t i = lo; i < n && strncmp (names[i].key, key, kl) == 0; i++) {
    char next = names[i].key[kl];
    if (next == 0 || (prefix && next == '('))
      return i;
    if (!prefix)
      break;
  }
  return n;
}

static double
median (double *v, uint32_t n)
{
  ps_array_sort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
  const char *fn; /* kernel function */
  uint32_t node;
} knode;

static int
cmp_knode (const void *a, const void *b)
{
  const knode *x = a, *y = b;
  int c = strcmp (x->fn, y->fn);
  if (c)
    return c;
  return x->node < y->node ? -1 : x->node > y->node;
}

int
ps_graph_take_durations (ps_graph *g, const ps_timeline *tl, ps_durations_info *info,
                         ps_diag *diag)
{
  memset (info, 0, sizeof *info);
  uint32_t nt = 0, nk = 0;
  for (uint32_t i = 0; i < tl->n_spans; i++)
    nt += tl->spans[i].kind == PS_SPAN_KERNEL && tl->spans[i].name != PS_NONE;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    nk += g->nodes[v].op == PS_OP_KERNEL && g->nodes[v].aux < g->n_kernels;
  info->kernels = nk;
  if (nt == 0)
    return ps_diag_error (diag, 0, 0, "the durations trace has no kernels");
  tname *names = malloc ((size_t) nt * sizeof *names);
  knode *ks = malloc (((size_t) nk + 1) * sizeof *ks);
  double *d = malloc ((size_t) nt * sizeof *d);
  double *col = malloc ((size_t) nt * sizeof *col);
  if (!names || !ks || !d || !col) {
    free (names);
    free (ks);
    free (d);
    free (col);
    return PS_ENOMEM;
  }
  nt = 0;
  for (uint32_t i = 0; i < tl->n_spans; i++)
    if (tl->spans[i].kind == PS_SPAN_KERNEL && tl->spans[i].name != PS_NONE)
      names[nt++] = (tname) { bare (tl->strings + tl->spans[i].name), i };
  /* By name, then by span: the timeline's kernels are in start order. */
  ps_array_sort (names, nt, sizeof *names, cmp_tname);
  nk = 0;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (g->nodes[v].op == PS_OP_KERNEL && g->nodes[v].aux < g->n_kernels)
      ks[nk++] = (knode) { ps_graph_str (g, g->kernels[g->nodes[v].aux].function), v };
  ps_array_sort (ks, nk, sizeof *ks, cmp_knode);

  /* Per function: its nodes ks[a, b) in program order. */
  for (uint32_t a = 0, b; a < nk; a = b) {
    for (b = a + 1; b < nk && strcmp (ks[b].fn, ks[a].fn) == 0; b++)
      ;
    const char *fn = ks[a].fn;
    char full[4096], brief[4096];
    const char *df = bare (ps_demangle (fn, true, full, sizeof full));
    const char *db = bare (ps_demangle (fn, false, brief, sizeof brief));
    /* The trace names it mangled, demangled whole, or by its name and
     * template arguments with parameters that print differently. */
    uint32_t first = lookup (names, nt, fn, false);
    if (first == nt)
      first = lookup (names, nt, df, false);
    if (first == nt)
      first = lookup (names, nt, db, true);
    if (first == nt) {
      info->unmatched += b - a;
      continue;
    }
    const char *key = names[first].key;
    uint32_t c = 0;
    for (uint32_t i = first; i < nt && strcmp (names[i].key, key) == 0; i++)
      d[c++] = fmax (0, tl->spans[names[i].span].end_ns - tl->spans[names[i].span].start_ns);
    uint32_t per = b - a;
    if (c % per == 0) {
      /* Each replay launches the function's nodes in program order: node
       * j's launches are j, j + per, ...; its duration is their median. */
      uint32_t runs = c / per;
      for (uint32_t j = 0; j < per; j++) {
        for (uint32_t r = 0; r < runs; r++)
          col[r] = d[j + r * per];
        ps_node *nd = &g->nodes[ks[a + j].node];
        nd->cost_ns = median (col, runs);
        nd->flags |= PS_NODE_HAS_COST;
      }
      info->measured += per;
      info->replays = runs > info->replays ? runs : info->replays;
    } else {
      /* The launches do not divide among the nodes: each gets the median
       * of them all. */
      double m = median (d, c);
      for (uint32_t j = a; j < b; j++) {
        g->nodes[ks[j].node].cost_ns = m;
        g->nodes[ks[j].node].flags |= PS_NODE_HAS_COST;
      }
      info->by_name += per;
    }
  }
  free (names);
  free (ks);
  free (d);
  free (col);
  if (info->measured + info->by_name == 0)
    return ps_diag_error (diag, 0, 0,
                          "none of the dump's %u kernels is in the durations trace: is it a "
                          "trace of this graph's replay?",
                          nk);
  return 0;
}
