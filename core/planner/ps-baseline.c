/* ps-baseline.c: the two textbook schedules the search always tries
 * (ps-search.c), so that no plan is slower than either: round-robin and
 * HEFT.
 *
 * Both issue the groups in an order that keeps every dependency and the
 * issue-order chains of user events (ps-planner-private.h), honour pins,
 * and add no resource-order waits.  Round-robin takes the groups in
 * program order (the lowest group id first among those ready) and puts
 * each on the next stream in turn.  HEFT (Topcuoglu, Hariri and Wu, 2002)
 * takes the ready group with the largest upward rank (its duration plus
 * the largest rank of its successors) and puts it on the stream where it
 * would finish earliest; streams run their work in issue order, so there
 * is nothing to insert into.  Its timing is the device's without sharing:
 * the host issues one step after another, work starts a launch latency
 * after its issue, a dispatch gap after the previous work of its stream
 * and an event latency after a predecessor on another stream.  Ties go to
 * the lower stream.  O((V + E) log V + V S). */
#include "ps-planner-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-heap.h"
#include "util/ps-rankset.h"

/* The groups none of whose predecessors is left, the least first: a heap
 * by key (no key: by id), or past ps__schedule_ready_big groups a queue
 * of their places in that order (as the list schedule's big queues), each
 * step a few word operations where a heap of a fanout's 100,000 ready
 * groups walked eight levels.  Both give the same order. */
typedef struct ready {
  ps__heap h;
  bool places;
  ps__rankqueue q;
  uint32_t *by_rank, *rank; /* with a key: the groups by place, their places */
} ready;

/* Places when the graph is that large and they can be made (no key is
 * NaN, memory for them), else the heap. */
static void
ready_init (ready *r, const ps__planner *pl, const double *key)
{
  memset (r, 0, sizeof *r);
  r->h.key = key;
  uint32_t ng = pl->ng, n1 = ng ? ng : 1;
  if (ng < ps__schedule_ready_big)
    return;
  if (key) {
    r->by_rank = malloc (n1 * sizeof *r->by_rank);
    r->rank = malloc (n1 * sizeof *r->rank);
    if (!r->by_rank || !r->rank || ps__planner_rank_keys (key, ng, r->by_rank, r->rank) != 0)
      return;
  }
  r->places = ps__rankset_init (&r->q.s, n1) == 0;
}

static void
ready_free (ready *r)
{
  free (r->h.a);
  ps__rankset_free (&r->q.s);
  free (r->by_rank);
  free (r->rank);
}

static int
ready_push (ready *r, uint32_t gi)
{
  if (!r->places)
    return ps__heap_push (&r->h, gi);
  ps__rankqueue_push (&r->q, r->rank ? r->rank[gi] : gi);
  return 0;
}

static uint32_t
ready_count (const ready *r)
{
  return r->places ? r->q.n : r->h.n;
}

static uint32_t
ready_pop (ready *r)
{
  if (!r->places)
    return ps__heap_pop (&r->h);
  uint32_t at = ps__rankqueue_pop (&r->q);
  return r->by_rank ? r->by_rank[at] : at;
}

/* Fills pl->order with the groups in list order: the ready group with the
 * smallest `key` (NULL: program order) after the other, ties to the lower
 * id.  indeg: ng entries of scratch. */
static int
list_order (ps__planner *pl, const double *key, uint32_t *indeg)
{
  ready r;
  ready_init (&r, pl, key);
  int rc = 0;
  for (uint32_t gi = 0; gi < pl->ng && rc == 0; gi++) {
    indeg[gi] = pl->gpred_off[gi + 1] - pl->gpred_off[gi] + pl->chain_in[gi];
    if (indeg[gi] == 0)
      rc = ready_push (&r, gi);
  }
  uint32_t k = 0;
  while (ready_count (&r) > 0 && rc == 0) {
    uint32_t gi = ready_pop (&r);
    pl->order[k++] = gi;
    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1] && rc == 0; e++)
      if (--indeg[pl->gsucc[e]] == 0)
        rc = ready_push (&r, pl->gsucc[e]);
    uint32_t c = pl->chain_next[gi];
    if (rc == 0 && c != PS_NONE && --indeg[c] == 0)
      rc = ready_push (&r, c);
  }
  ready_free (&r);
  return rc < 0 ? ps__planner_nomem (pl) : 0;
}

void
ps__planner_positions (ps__planner *pl)
{
  uint32_t count[PS_MAX_STREAMS] = { 0 };
  pl->SC = 1;
  for (uint32_t i = 0; i < pl->ng; i++) {
    uint32_t gi = pl->order[i], s = pl->gstream[gi];
    pl->gissue[gi] = i;
    pl->gpos[gi] = ++count[s];
    if (s + 1 > pl->SC)
      pl->SC = s + 1;
  }
}

/* HEFT's list order: the largest upward rank first (the heap takes the
 * smallest key). */
static int
rank_order (ps__planner *pl)
{
  uint32_t ng = pl->ng;
  double *rank = malloc ((ng ? ng : 1) * sizeof *rank);
  if (!rank)
    return ps__planner_nomem (pl);
  for (uint32_t gi = 0; gi < ng; gi++)
    rank[gi] = -pl->grank[gi];
  int rc = list_order (pl, rank, pl->gpos);
  free (rank);
  return rc;
}

/* The order of `kind` (0: program order, 1: rank) into pl->order: the one
 * ps__planner_baseline_orders made, else made now.  The schedule arrays
 * double as scratch until they are filled. */
static int
baseline_order (ps__planner *pl, int kind)
{
  const uint32_t *made = kind ? pl->rank_order : pl->program_order;
  if (made) {
    memcpy (pl->order, made, pl->ng * sizeof *pl->order);
    return 0;
  }
  return kind ? rank_order (pl) : list_order (pl, NULL, pl->gpos);
}

int
ps__planner_baseline_orders (ps__planner *pl)
{
  uint32_t n1 = pl->ng ? pl->ng : 1;
  free (pl->program_order);
  free (pl->rank_order);
  pl->program_order = pl->rank_order = NULL;
  uint32_t *program = malloc (n1 * sizeof *program);
  uint32_t *rank = malloc (n1 * sizeof *rank);
  int rc = program && rank ? 0 : ps__planner_nomem (pl);
  if (rc == 0 && (rc = list_order (pl, NULL, pl->gpos)) == 0)
    memcpy (program, pl->order, pl->ng * sizeof *program);
  if (rc == 0 && (rc = rank_order (pl)) == 0)
    memcpy (rank, pl->order, pl->ng * sizeof *rank);
  if (rc < 0) {
    free (program);
    free (rank);
    return rc;
  }
  pl->program_order = program;
  pl->rank_order = rank;
  return 0;
}

int
ps__planner_round_robin (ps__planner *pl, uint32_t streams)
{
  int rc = baseline_order (pl, 0);
  if (rc < 0)
    return rc;
  uint32_t next = 0;
  for (uint32_t i = 0; i < pl->ng; i++) {
    uint32_t gi = pl->order[i];
    int32_t pin = pl->gpin[gi];
    if (pin >= 0 && (uint32_t) pin < streams) {
      pl->gstream[gi] = (uint16_t) pin;
    } else {
      pl->gstream[gi] = (uint16_t) next;
      next = next + 1 == streams ? 0 : next + 1;
    }
    pl->gafter[gi] = PS_NONE;
    pl->gstart[gi] = pl->gfinish[gi] = 0;
  }
  ps__planner_positions (pl);
  return 0;
}

int
ps__planner_heft (ps__planner *pl, uint32_t streams)
{
  const ps_device *d = &pl->dev;
  uint32_t ng = pl->ng;
  int rc = baseline_order (pl, 1);
  if (rc < 0)
    return rc;
  double avail[PS_MAX_STREAMS], host = 0;
  for (uint32_t s = 0; s < streams; s++)
    avail[s] = -1;
  for (uint32_t i = 0; i < ng; i++) {
    uint32_t gi = pl->order[i], lo = 0, hi = streams, best_s = 0;
    int32_t pin = pl->gpin[gi];
    if (pin >= 0 && (uint32_t) pin < streams) {
      lo = (uint32_t) pin;
      hi = lo + 1;
    }
    double best = INFINITY;
    host += d->host_launch_ns;
    for (uint32_t s = lo; s < hi; s++) {
      double est = host + d->launch_latency_ns;
      if (avail[s] >= 0 && avail[s] + d->dispatch_gap_ns > est)
        est = avail[s] + d->dispatch_gap_ns;
      for (uint32_t e = pl->gpred_off[gi]; e < pl->gpred_off[gi + 1]; e++) {
        uint32_t u = pl->gpred[e];
        double t = pl->gfinish[u] + (pl->gstream[u] != s ? d->event_wait_ns : 0);
        if (t > est)
          est = t;
      }
      if (est + pl->gcost[gi] < best) {
        best = est + pl->gcost[gi];
        best_s = s;
      }
    }
    pl->gstream[gi] = (uint16_t) best_s;
    pl->gstart[gi] = best - pl->gcost[gi];
    pl->gfinish[gi] = best;
    pl->gafter[gi] = PS_NONE;
    avail[best_s] = best;
  }
  ps__planner_positions (pl);
  return 0;
}
