/* ps-schedule.c: the streams pass: HEFT-like list scheduling of the
 * contracted graph, with streams as processors.
 *
 * A group's priority comes from its upward rank (its cost plus the
 * largest rank of its successors), so the critical path goes first, but
 * work never falls far behind program order (see priorities()).  Ready
 * groups leave a binary heap in priority order; each goes on the stream where it would
 * finish earliest, where a predecessor on another stream costs
 * PS__SYNC_NS extra, ties going to the stream of its latest-finishing
 * predecessor (chains stay together), then to the lowest stream.  Groups
 * are only appended, so issue order is scheduling order, which is
 * topological; pinned groups go on their stream.  O((V + E) log V + V S). */
#include "ps-planner-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct heap {
  uint32_t *a;
  uint32_t n;
  const double *key; /* smaller first */
} heap;

/* Groups are numbered in topological order of their first member, so the
 * id breaks ties in program order. */
static inline bool
heap_before (const heap *h, uint32_t x, uint32_t y)
{
  if (h->key[x] != h->key[y])
    return h->key[x] < h->key[y];
  return x < y;
}

static void
heap_push (heap *h, uint32_t x)
{
  uint32_t i = h->n++;
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!heap_before (h, x, h->a[parent]))
      break;
    h->a[i] = h->a[parent];
    i = parent;
  }
  h->a[i] = x;
}

static uint32_t
heap_pop (heap *h)
{
  uint32_t top = h->a[0], x = h->a[--h->n], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && heap_before (h, h->a[c + 1], h->a[c]))
      c++;
    if (!heap_before (h, h->a[c], x))
      break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (h->n > 0)
    h->a[i] = x;
  return top;
}

/* Upward ranks, from a topological order of the contracted graph. */
static int
upward_ranks (ps__planner *pl, double *rank, uint32_t *tmp)
{
  uint32_t ng = pl->ng, head = 0, tail = 0;
  uint32_t *indeg = malloc ((ng ? ng : 1) * sizeof *indeg);
  if (!indeg)
    return ps__planner_nomem (pl);
  for (uint32_t gi = 0; gi < ng; gi++) {
    indeg[gi] = pl->gpred_off[gi + 1] - pl->gpred_off[gi];
    if (indeg[gi] == 0)
      tmp[tail++] = gi;
  }
  while (head < tail) {
    uint32_t gi = tmp[head++];
    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1]; e++)
      if (--indeg[pl->gsucc[e]] == 0)
        tmp[tail++] = pl->gsucc[e];
  }
  free (indeg);
  if (tail != ng)
    goto cycle;
  for (uint32_t i = ng; i-- > 0;) {
    uint32_t gi = tmp[i];
    double best = 0;
    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1]; e++)
      if (rank[pl->gsucc[e]] > best)
        best = rank[pl->gsucc[e]];
    rank[gi] = pl->gcost[gi] + best;
  }
  return 0;
cycle:
  if (pl->diag)
    ps_diag_error (pl->diag, 0, 0, "internal error: the contracted graph has a cycle");
  return PS_ECYCLE;
}

/* The priority of a group: the earlier of its latest start (the makespan
 * estimate M less its upward rank: critical work first) and the time it
 * would start if the groups ran in program order at full width (prefix
 * work / S).  The second term keeps work with a lot of slack from being
 * deferred to the very end, which would keep its buffers alive for the
 * whole run; it never delays work on the critical path. */
static void
priorities (const ps__planner *pl, const double *rank, double *key)
{
  double total = 0, cp = 0;
  for (uint32_t gi = 0; gi < pl->ng; gi++) {
    total += pl->gcost[gi];
    if (rank[gi] > cp)
      cp = rank[gi];
  }
  double m = total / pl->S > cp ? total / pl->S : cp, prefix = 0;
  for (uint32_t gi = 0; gi < pl->ng; gi++) {
    double latest = m - rank[gi], in_order = prefix / pl->S;
    key[gi] = latest < in_order ? latest : in_order;
    prefix += pl->gcost[gi];
  }
}

int
ps__schedule (ps__planner *pl)
{
  uint32_t ng = pl->ng, S = pl->S, n1 = ng ? ng : 1;
  int rc = 0;
  double *rank = malloc (n1 * sizeof *rank);
  double *key = malloc (n1 * sizeof *key);
  uint32_t *indeg = malloc (n1 * sizeof *indeg);
  heap h = { malloc (n1 * sizeof (uint32_t)), 0, key };
  pl->order = malloc (n1 * sizeof *pl->order);
  pl->gissue = malloc (n1 * sizeof *pl->gissue);
  pl->gstream = malloc (n1 * sizeof *pl->gstream);
  pl->gpos = malloc (n1 * sizeof *pl->gpos);
  pl->gstart = malloc (n1 * sizeof *pl->gstart);
  pl->gfinish = malloc (n1 * sizeof *pl->gfinish);
  if (!rank || !key || !indeg || !h.a || !pl->order || !pl->gissue || !pl->gstream || !pl->gpos
      || !pl->gstart || !pl->gfinish) {
    rc = ps__planner_nomem (pl);
    goto out;
  }
  if ((rc = upward_ranks (pl, rank, pl->order)) < 0)
    goto out;

  double avail[PS_MAX_STREAMS], fin_on[PS_MAX_STREAMS];
  uint32_t count[PS_MAX_STREAMS], touched[PS_MAX_STREAMS];
  for (uint32_t s = 0; s < S; s++) {
    avail[s] = 0;
    fin_on[s] = -1;
    count[s] = 0;
  }
  priorities (pl, rank, key);
  for (uint32_t gi = 0; gi < ng; gi++) {
    indeg[gi] = pl->gpred_off[gi + 1] - pl->gpred_off[gi] + pl->chain_in[gi];
    if (indeg[gi] == 0)
      heap_push (&h, gi);
  }

  uint32_t issued = 0;
  double makespan = 0;
  while (h.n > 0) {
    uint32_t gi = heap_pop (&h), nt = 0;
    /* Latest finish per predecessor stream, and the two latest overall on
     * distinct streams. */
    double b1 = -1, b2 = -1;
    uint32_t s1 = PS_NONE;
    for (uint32_t e = pl->gpred_off[gi]; e < pl->gpred_off[gi + 1]; e++) {
      uint32_t u = pl->gpred[e], su = pl->gstream[u];
      if (fin_on[su] < 0)
        touched[nt++] = su;
      if (pl->gfinish[u] > fin_on[su])
        fin_on[su] = pl->gfinish[u];
    }
    for (uint32_t k = 0; k < nt; k++) {
      double f = fin_on[touched[k]];
      if (f > b1) {
        b2 = b1;
        b1 = f;
        s1 = touched[k];
      } else if (f > b2) {
        b2 = f;
      }
    }

    int32_t pin = pl->gpin[gi];
    uint32_t lo = 0, hi = S;
    if (pin >= 0 && (uint32_t) pin < S) {
      lo = (uint32_t) pin;
      hi = lo + 1;
    }
    double cost = pl->gcost[gi], best_eft = INFINITY, best_est = 0;
    uint32_t best = lo;
    for (uint32_t s = lo; s < hi; s++) {
      double other = s1 != s ? b1 : b2;
      double ready = fin_on[s] > 0 ? fin_on[s] : 0;
      if (other >= 0 && other + PS__SYNC_NS > ready)
        ready = other + PS__SYNC_NS;
      double est = avail[s] > ready ? avail[s] : ready, eft = est + cost;
      double eps = 1e-9 * (eft > 1 ? eft : 1);
      if (eft < best_eft - eps || (eft <= best_eft + eps && s == s1 && best != s1)) {
        best_eft = eft;
        best_est = est;
        best = s;
      }
    }
    for (uint32_t k = 0; k < nt; k++)
      fin_on[touched[k]] = -1;

    pl->gstream[gi] = (uint16_t) best;
    pl->gstart[gi] = best_est;
    pl->gfinish[gi] = best_eft;
    pl->gpos[gi] = ++count[best];
    avail[best] = best_eft;
    if (best_eft > makespan)
      makespan = best_eft;
    pl->gissue[gi] = issued;
    pl->order[issued++] = gi;

    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1]; e++)
      if (--indeg[pl->gsucc[e]] == 0)
        heap_push (&h, pl->gsucc[e]);
    uint32_t c = pl->chain_next[gi];
    if (c != PS_NONE && --indeg[c] == 0)
      heap_push (&h, c);
  }
  if (issued != ng) {
    if (pl->diag)
      ps_diag_error (pl->diag, 0, 0,
                     "internal error: the event order conflicts with the dependencies");
    rc = PS_ECYCLE;
    goto out;
  }
  pl->makespan = makespan;
  pl->SC = 1;
  for (uint32_t s = 0; s < S; s++)
    if (count[s] > 0)
      pl->SC = s + 1;
out:
  free (rank);
  free (key);
  free (indeg);
  free (h.a);
  return rc;
}
