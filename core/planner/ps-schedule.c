/* ps-schedule.c: the streams pass: list scheduling of the contracted
 * graph with streams as processors, timed by the device model.
 *
 * Timing follows the simulator's rules (ps-sim.h): the host issues steps
 * one after another (a launch, an event call), work starts no earlier
 * than its issue plus the launch latency, a dispatch gap after the
 * previous work of its stream and an event latency after a predecessor on
 * another stream, and then shares its resource (the SMs, a copy
 * direction's engine, the host thread) first come, first served with the
 * work that arrived before it.  Every resource keeps a profile of the
 * share the placed work holds over time, so a kernel that fills the GPU
 * delays the next one, copies queue per direction and overlap with
 * compute, and small kernels share the SMs.
 *
 * Groups are placed in time order (run_pass): at each decision time the
 * ready groups of a resource compete by priority, which comes from the
 * upward rank (cost plus the largest rank of the successors: critical
 * work first), alone or blended with program order (priorities()).
 * The group goes on the stream where it would finish earliest; ties go to
 * the stream of its latest-finishing predecessor (chains stay together),
 * then to fewer waits, then to the earliest arrival.  Pinned groups go on
 * their stream.
 *
 * First come, first served is arrival order, not placement order: a group
 * whose data was ready long ago may reach a busy resource before work
 * placed earlier.  Depending on the variant (ps-planner-private.h) it then
 * waits for the last work placed on the resource (gafter, an event like
 * any dependency) when that work is no longer than itself (shortest
 * first), or it simply goes first, as the hardware would let it.
 *
 * O((V + E) log V + V S (S + R)), R being the number of share changes a
 * group's run spans on its resource's profile. */
#include "ps-planner-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-heap.h"
#include "util/ps-rankset.h"

/* The priority of a group (smaller first).  PS__KEY_RANK: the upward
 * rank alone, so that the group with the longest path to the end goes
 * first, as HEFT orders its list.  PS__KEY_BLEND: the earlier of its
 * latest start (the makespan m less its upward rank) and the time it
 * would start if the groups ran in program order at full width (prefix
 * work / S); the second term keeps work with a lot of slack from being
 * deferred to the very end, which would keep its buffers alive for the
 * whole run, at the price of letting such work go ahead of critical work
 * now and then (the search weighs both).  m <= 0 stands for the lower
 * bound max (total work / S, critical path). */
static void
priorities (const ps__planner *pl, uint32_t S, double m, double *key)
{
  const double *rank = pl->grank;
  if (pl->var.key == PS__KEY_RANK) {
    for (uint32_t gi = 0; gi < pl->ng; gi++)
      key[gi] = -rank[gi];
    return;
  }
  double total = 0, cp = pl->grank_max;
  for (uint32_t gi = 0; gi < pl->ng; gi++)
    total += pl->gcost[gi];
  if (m <= 0)
    m = total / S > cp ? total / S : cp;
  double prefix = 0;
  for (uint32_t gi = 0; gi < pl->ng; gi++) {
    double latest = m - rank[gi], in_order = prefix / S;
    key[gi] = latest < in_order ? latest : in_order;
    prefix += pl->gcost[gi];
  }
}

/* ---- resource profiles ----
 *
 * A profile is the share of one resource held by the work scheduled on
 * it, piecewise constant over time: segment k covers [v[k].t, v[k + 1].t)
 * (the last one runs forever and is free), `used` is the share held and
 * `arr` the latest arrival of the work holding it.  Segments before `head`
 * are in the past of every stream and never read again. */
typedef struct seg {
  double t, used, arr;
} seg;

typedef struct profile {
  seg *v;
  uint32_t head, n, cap;
} profile;

#define SHARE_EPS 1e-9

static int
profile_init (profile *pr)
{
  pr->cap = 16;
  pr->v = malloc (pr->cap * sizeof *pr->v);
  if (!pr->v)
    return PS_ENOMEM;
  pr->v[0] = (seg) { 0, 0, -INFINITY };
  pr->head = 0;
  pr->n = 1;
  return 0;
}

/* The segment that holds time t >= v[head].t.  Most times asked for are
 * near the end, so the last few segments are tried first. */
static uint32_t
profile_find (const profile *pr, double t)
{
  uint32_t lo = pr->head, hi = pr->n - 1;
  for (uint32_t k = 0; k < 4 && hi > lo; k++, hi--)
    if (pr->v[hi].t <= t)
      return hi;
  if (pr->v[hi].t <= t)
    return hi;
  while (lo + 1 < hi) { /* v[lo].t <= t < v[hi].t */
    uint32_t mid = lo + (hi - lo) / 2;
    if (pr->v[mid].t <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* When work arriving at a (asking for share f, taking d ns alone) would
 * finish, given the work already on the profile.  *conflict: it would get
 * less than it asks for where work that arrived after it holds the
 * resource, so that in arrival order it would have gone first. */
static double
profile_eval (const profile *pr, double a, double f, double d, bool *conflict)
{
  if (a < pr->v[pr->head].t)
    a = pr->v[pr->head].t;
  uint32_t k = profile_find (pr, a);
  double t = a, rem = d;
  *conflict = false;
  for (;; k++) {
    double end = k + 1 < pr->n ? pr->v[k + 1].t : INFINITY;
    double left = 1 - pr->v[k].used, got = f < left ? f : left;
    if (got < SHARE_EPS)
      got = 0;
    if (got < f - SHARE_EPS && pr->v[k].arr > a)
      *conflict = true;
    if (got > 0) {
      double rate = got / f, need = rem / rate;
      if (t + need <= end)
        return t + need;
      rem -= (end - t) * rate;
    }
    t = end;
  }
}

/* Makes room for two more segments. */
static int
profile_reserve (profile *pr)
{
  if (pr->n + 2 <= pr->cap)
    return 0;
  if (pr->head >= pr->n / 2 && pr->head >= 2) {
    memmove (pr->v, pr->v + pr->head, (pr->n - pr->head) * sizeof *pr->v);
    pr->n -= pr->head;
    pr->head = 0;
    return 0;
  }
  return PS_ARRAY_RESERVE (pr->v, pr->cap, (uint64_t) pr->n + 2) < 0 ? PS_ENOMEM : 0;
}

/* Inserts a copy of segment k starting at t (v[k].t < t < v[k + 1].t);
 * profile_reserve made room. */
static void
profile_split (profile *pr, uint32_t k, double t)
{
  memmove (pr->v + k + 2, pr->v + k + 1, (pr->n - k - 1) * sizeof *pr->v);
  pr->v[k + 1] = pr->v[k];
  pr->v[k + 1].t = t;
  pr->n++;
}

/* Merges neighbouring segments of [lo, hi] that hold the same share: every
 * evaluation sees them as one (the later arrival is kept).  Work that
 * fills the resource for a long time thus stays one segment however many
 * pieces hold it, and the profile stays short. */
static void
profile_merge (profile *pr, uint32_t lo, uint32_t hi)
{
  if (lo <= pr->head)
    lo = pr->head + 1;
  if (hi >= pr->n)
    hi = pr->n - 1;
  if (lo > hi)
    return;
  uint32_t w = lo - 1;
  for (uint32_t k = lo; k <= hi; k++) {
    if (fabs (pr->v[k].used - pr->v[w].used) < SHARE_EPS) {
      if (pr->v[k].arr > pr->v[w].arr)
        pr->v[w].arr = pr->v[k].arr;
      continue;
    }
    pr->v[++w] = pr->v[k];
  }
  if (w < hi) {
    memmove (pr->v + w + 1, pr->v + hi + 1, (pr->n - hi - 1) * sizeof *pr->v);
    pr->n -= hi - w;
  }
}

/* Adds the work of profile_eval (a, f, d), which finishes at `fin`. */
static int
profile_add (profile *pr, double a, double f, double fin)
{
  if (profile_reserve (pr) < 0)
    return PS_ENOMEM;
  if (a < pr->v[pr->head].t)
    a = pr->v[pr->head].t;
  if (!(fin > a))
    return 0;
  uint32_t k = profile_find (pr, a);
  if (pr->v[k].t < a)
    profile_split (pr, k++, a);
  uint32_t first = k;
  for (; k < pr->n && pr->v[k].t < fin; k++) {
    if (k + 1 == pr->n || pr->v[k + 1].t > fin)
      profile_split (pr, k, fin);
    double left = 1 - pr->v[k].used, got = f < left ? f : left;
    if (got < SHARE_EPS)
      continue;
    pr->v[k].used += got;
    if (a > pr->v[k].arr)
      pr->v[k].arr = a;
  }
  profile_merge (pr, first, k);
  return 0;
}

/* Forgets the segments that end at or before t; true if any. */
static bool
profile_prune (profile *pr, double t)
{
  uint32_t head = pr->head;
  while (pr->head + 1 < pr->n && pr->v[pr->head + 1].t <= t)
    pr->head++;
  return pr->head != head;
}

/* The first time at or after t from which the resource has `share` free
 * for at least `span` ns (gaps shorter than that, such as the dispatch gap
 * between two kernels of one stream, do not count). */
static double
profile_next_free (const profile *pr, double t, double span, double share)
{
  if (t < pr->v[pr->head].t)
    t = pr->v[pr->head].t;
  double from = -1;
  for (uint32_t k = profile_find (pr, t); k < pr->n; k++) {
    double at = pr->v[k].t > t ? pr->v[k].t : t;
    if (pr->v[k].used > 1 - share + SHARE_EPS) {
      from = -1;
      continue;
    }
    if (from < 0)
      from = at;
    if (k + 1 == pr->n || pr->v[k + 1].t - from >= span)
      return from;
  }
  return t; /* not reached: the last segment is free */
}

/* ---- the list schedule ---- */

/* One candidate placement of a group. */
typedef struct place {
  double arrive, finish;
  uint32_t stream, waits, after; /* after: the resource-order wait, or PS_NONE */
} place;

typedef struct sched {
  ps__planner *pl;
  const ps_device *d;
  uint32_t S;
  double host;              /* issue time of the last step */
  double free_at[PS_MAX_STREAMS], last_end[PS_MAX_STREAMS];
  uint32_t count[PS_MAX_STREAMS];
  uint32_t *known;          /* [s * S + t]: latest position of stream t that s waited for */
  uint8_t *recorded;        /* per group: has an event record after it */
  profile prof[PS_RES__COUNT];
  uint64_t version[PS_RES__COUNT]; /* changes whenever its profile does */
  double last_arr[PS_RES__COUNT];
  uint32_t last_job[PS_RES__COUNT];
  /* The predecessors of the group being placed, per stream. */
  double fin_on[PS_MAX_STREAMS];
  uint32_t lat_on[PS_MAX_STREAMS], touched[PS_MAX_STREAMS], nt;
  uint32_t lat_pos[PS_MAX_STREAMS]; /* gpos and recorded of lat_on */
  uint8_t lat_rec[PS_MAX_STREAMS];
} sched;

/* Host time the waits (and the records they need) on stream s cost, and
 * their count. */
static uint32_t
count_waits (const sched *sc, uint32_t s, uint32_t *records)
{
  const uint32_t *known = sc->known + (size_t) s * sc->S;
  uint32_t k = 0, r = 0;
  for (uint32_t i = 0; i < sc->nt; i++) {
    uint32_t t = sc->touched[i];
    if (t == s || sc->lat_pos[t] <= known[t])
      continue;
    k++;
    r += !sc->lat_rec[t];
  }
  *records = r;
  return k;
}

/* When group gi would arrive on stream s, ready to take its resource, and
 * the host time of its issue. */
static void
arrive (const sched *sc, uint32_t gi, uint32_t s, double b1, uint32_t s1, double b2, place *out,
        double *submit_out)
{
  const ps_device *d = sc->d;
  bool evop = ps__planner_event_op (sc->pl, gi);
  uint32_t recs, waits = count_waits (sc, s, &recs);
  double ready = sc->free_at[s], other = s1 != s ? b1 : b2;
  if (other >= 0 && other + d->event_wait_ns > ready)
    ready = other + d->event_wait_ns;
  double submit = sc->host + (waits + recs) * d->event_record_ns
                  + (evop ? d->event_record_ns : d->host_launch_ns);
  out->stream = s;
  out->waits = waits;
  out->after = PS_NONE;
  out->finish = INFINITY;
  *submit_out = submit;
  if (evop) {
    out->arrive = ready > submit ? ready : submit;
    return;
  }
  if (sc->last_end[s] >= 0 && sc->last_end[s] + d->dispatch_gap_ns > ready)
    ready = sc->last_end[s] + d->dispatch_gap_ns;
  out->arrive = ready > submit + d->launch_latency_ns ? ready : submit + d->launch_latency_ns;
}

/* Recently evaluated arrivals on the profile of the group being placed. */
typedef struct eval_cache {
  double a[4], fin[4];
  bool conflict[4];
  uint32_t n;
} eval_cache;

static double
cached_eval (eval_cache *ec, const profile *pr, double a, double f, double d, bool *conflict)
{
  for (uint32_t i = 0; i < ec->n && i < 4; i++)
    if (ec->a[i] == a) {
      *conflict = ec->conflict[i];
      return ec->fin[i];
    }
  double fin = profile_eval (pr, a, f, d, conflict);
  uint32_t i = ec->n++ % 4;
  ec->a[i] = a;
  ec->fin[i] = fin;
  ec->conflict[i] = *conflict;
  return fin;
}

/* When group gi, arriving as c says, would finish: it shares its resource
 * with the work already placed; see the top of the file for the
 * resource-order wait. */
static void
finish (const sched *sc, uint32_t gi, double submit, eval_cache *ec, place *c)
{
  const ps__planner *pl = sc->pl;
  const ps_device *d = sc->d;
  uint8_t r = pl->gres[gi];
  double cost = pl->gcost[gi], a = c->arrive;
  bool evop = ps__planner_event_op (pl, gi);
  if (evop || r == PS_RES_NONE || r >= PS_RES__COUNT || !(cost > 0) || pl->var.untimed) {
    c->finish = a + (cost > 0 && !evop ? cost : 0);
    return;
  }
  const profile *pr = &sc->prof[r];
  bool conflict;
  c->finish = cached_eval (ec, pr, a, pl->gfrac[gi], cost, &conflict);
  uint32_t x = sc->last_job[r], s = c->stream;
  if (!conflict || x == PS_NONE || pl->gstream[x] == s || pl->var.order == PS__ORDER_NONE
      || pl->gcost[x] > cost)
    return;
  /* Arriving first would take the resource from work planned before it:
   * wait for the last work on the resource instead. */
  double extra = 0;
  if (pl->gpos[x] > sc->known[(size_t) s * sc->S + pl->gstream[x]])
    extra = d->event_record_ns * (sc->recorded[x] ? 1 : 2);
  double a2 = pl->gfinish[x] + d->event_wait_ns;
  if (submit + extra + d->launch_latency_ns > a2)
    a2 = submit + extra + d->launch_latency_ns;
  if (a > a2)
    a2 = a;
  c->arrive = a2;
  c->finish = cached_eval (ec, pr, a2, pl->gfrac[gi], cost, &conflict);
  c->after = x;
  c->waits += extra > 0;
}

/* Places group gi as chosen: stream state, host time, waits, resources. */
static int
commit (sched *sc, uint32_t gi, const place *c)
{
  ps__planner *pl = sc->pl;
  const ps_device *d = sc->d;
  uint32_t s = c->stream, S = sc->S;
  bool evop = ps__planner_event_op (pl, gi);
  for (uint32_t i = 0; i < sc->nt; i++) {
    uint32_t t = sc->touched[i], u = sc->lat_on[t];
    if (t == s || pl->gpos[u] <= sc->known[(size_t) s * S + t])
      continue;
    sc->known[(size_t) s * S + t] = pl->gpos[u];
    sc->host += d->event_record_ns * (sc->recorded[u] ? 1 : 2);
    sc->recorded[u] = 1;
  }
  uint32_t x = c->after;
  if (x != PS_NONE && pl->gpos[x] > sc->known[(size_t) s * S + pl->gstream[x]]) {
    sc->known[(size_t) s * S + pl->gstream[x]] = pl->gpos[x];
    sc->host += d->event_record_ns * (sc->recorded[x] ? 1 : 2);
    sc->recorded[x] = 1;
  }
  sc->host += evop ? d->event_record_ns : d->host_launch_ns;

  pl->gstream[gi] = (uint16_t) s;
  pl->gstart[gi] = c->arrive;
  pl->gfinish[gi] = c->finish;
  pl->gafter[gi] = x;
  pl->gpos[gi] = ++sc->count[s];
  sc->free_at[s] = evop ? c->arrive : c->finish;
  if (!evop)
    sc->last_end[s] = c->finish;

  uint8_t r = pl->gres[gi];
  if (!evop && r != PS_RES_NONE && r < PS_RES__COUNT && pl->gcost[gi] > 0 && !pl->var.untimed) {
    profile *pr = &sc->prof[r];
    if (profile_add (pr, c->arrive, pl->gfrac[gi], c->finish) < 0)
      return PS_ENOMEM;
    sc->version[r]++;
    if (c->arrive >= sc->last_arr[r]) {
      sc->last_arr[r] = c->arrive;
      sc->last_job[r] = gi;
    }
  }
  /* No later work arrives before the host has issued it, nor before its
   * stream is free: what lies before that is forgotten, now and then. */
  if ((sc->count[s] & 31) != 0)
    return 0;
  double horizon = sc->free_at[0];
  for (uint32_t t = 1; t < S; t++)
    if (sc->free_at[t] < horizon)
      horizon = sc->free_at[t];
  if (sc->host + d->launch_latency_ns > horizon)
    horizon = sc->host + d->launch_latency_ns;
  for (int k = 0; k < PS_RES__COUNT; k++)
    if (profile_prune (&sc->prof[k], horizon))
      sc->version[k]++;
  return 0;
}

/* Chooses the stream of group gi and places it there. */
static int
place_group (sched *sc, uint32_t gi)
{
  ps__planner *pl = sc->pl;
  uint32_t S = sc->S;
  /* Latest finish and latest position per predecessor stream, and the two
   * latest finishes on distinct streams. */
  sc->nt = 0;
  for (uint32_t e = pl->gpred_off[gi]; e < pl->gpred_off[gi + 1]; e++) {
    uint32_t u = pl->gpred[e], su = pl->gstream[u], pos = pl->gpos[u];
    if (sc->fin_on[su] < 0) {
      sc->touched[sc->nt++] = su;
      sc->lat_on[su] = u;
      sc->lat_pos[su] = pos;
    }
    if (pl->gfinish[u] > sc->fin_on[su])
      sc->fin_on[su] = pl->gfinish[u];
    if (pos > sc->lat_pos[su]) {
      sc->lat_on[su] = u;
      sc->lat_pos[su] = pos;
    }
  }
  for (uint32_t k = 0; k < sc->nt; k++)
    sc->lat_rec[sc->touched[k]] = sc->recorded[sc->lat_on[sc->touched[k]]];
  double b1 = -1, b2 = -1;
  uint32_t s1 = PS_NONE;
  for (uint32_t k = 0; k < sc->nt; k++) {
    double f = sc->fin_on[sc->touched[k]];
    if (f > b1) {
      b2 = b1;
      b1 = f;
      s1 = sc->touched[k];
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
  /* Arrivals first; the finish on the stream of the earliest arrival
   * then bounds the others: a group never finishes earlier than its
   * arrival plus its cost, so streams that cannot match it are skipped. */
  place cand[PS_MAX_STREAMS];
  double submit[PS_MAX_STREAMS];
  uint32_t n = 0, first = 0;
  bool fresh = false;
  for (uint32_t s = lo; s < hi; s++) {
    /* Unused streams are all alike: the lowest stands for them all. */
    if (sc->count[s] == 0) {
      if (fresh)
        continue;
      fresh = true;
    }
    arrive (sc, gi, s, b1, s1, b2, &cand[n], &submit[n]);
    if (cand[n].arrive < cand[first].arrive)
      first = n;
    n++;
  }
  if (n == 0) /* a pin beyond the streams: ps__plan_check_options refused it */
    return PS_EINVAL;
  /* When the host is behind (a stream sits idle waiting for it), the
   * event calls a stream's waits add delay all later work, not just this
   * group: they count against the stream. */
  bool evop = ps__planner_event_op (pl, gi);
  double cost = evop || !(pl->gcost[gi] > 0) ? 0 : pl->gcost[gi];
  double base = sc->host + (evop ? sc->d->event_record_ns : sc->d->host_launch_ns);
  bool host_bound = false;
  for (uint32_t s = 0; s < S && !host_bound; s++)
    host_bound = sc->free_at[s] <= base + sc->d->launch_latency_ns;
  eval_cache ec = { .n = 0 };
  place best = cand[first];
  finish (sc, gi, submit[first], &ec, &best);
  double best_key = best.finish + (host_bound ? submit[first] - base : 0);
  for (uint32_t k = 0; k < n; k++) {
    place c = cand[k];
    double pen = host_bound ? submit[k] - base : 0;
    double eps = 1e-9 * (best_key > 1 ? best_key : 1);
    if (k == first || c.arrive + cost + pen > best_key + eps)
      continue;
    finish (sc, gi, submit[k], &ec, &c);
    double key = c.finish + pen;
    if (key < best_key - eps || (key <= best_key + eps && best.stream != s1
                                 && (c.stream == s1 || c.waits < best.waits))) {
      best = c;
      best_key = key;
    }
  }
  int rc = commit (sc, gi, &best);
  for (uint32_t k = 0; k < sc->nt; k++)
    sc->fin_on[sc->touched[k]] = -1;
  return rc;
}

/* ---- ready queues ----
 *
 * The groups ready on a resource, first by key, then by id (as
 * ps__hent_before orders them).  A heap while it is small.  Past
 * ps__schedule_ready_big groups (the 1M-node fanout's hold 100,000 and
 * more, and a pop walked eight levels of a heap larger than the caches),
 * a set of places (ps-rankset): the groups are ranked once per pass in
 * (key, id) order by a radix sort of the keys' bits, so that adding a
 * group or taking the first is a few word operations.  Both give the
 * groups in the same order. */
uint32_t ps__schedule_ready_big = 4096u;
atomic_size_t ps__schedule_sets;

/* The queues of one pass: groups whose predecessors are all placed wait
 * in `pending` until their data can be ready (their latest predecessor
 * finishes), then in the `ready` queue of their resource, by priority. */
typedef struct queues {
  ps__heap pending;
  ps__heap ready[PS_RES__COUNT];
  double *ready_at;
  uint32_t ng;
  /* Past ps__schedule_ready_big: the groups by place and their places
   * (once per pass, `ranked`; `unranked`: no sets this pass, a key being
   * NaN or memory short), and the sets. */
  bool ranked, unranked;
  uint32_t *by_rank, *rank;
  bool big[PS_RES__COUNT];
  ps__rankqueue set[PS_RES__COUNT];
} queues;

/* A key as bits that compare as unsigned integers the way the keys
 * compare (-0 as 0, which compares equal to it). */
static inline uint64_t
key_bits (double x)
{
  x += 0.0;
  uint64_t u;
  memcpy (&u, &x, sizeof u);
  return u >> 63 ? ~u : u | (uint64_t) 1 << 63;
}

int
ps__planner_rank_keys (const double *key, uint32_t ng, uint32_t *by_rank, uint32_t *rank)
{
  ps__kv *v = malloc ((ng ? ng : 1) * sizeof *v);
  if (!v)
    return PS_ENOMEM;
  int rc = 1;
  for (uint32_t gi = 0; gi < ng; gi++) {
    if (isnan (key[gi]))
      goto out;
    v[gi] = (ps__kv) { key_bits (key[gi]), gi, 0 };
  }
  if ((rc = ps__radix_sort_kv (v, ng)) < 0)
    goto out;
  for (uint32_t r = 0; r < ng; r++) {
    by_rank[r] = v[r].a;
    rank[v[r].a] = r;
  }
out:
  free (v);
  return rc;
}

/* Ranks the groups by the pass's priorities (ps__planner_rank_keys). */
static int
rank_groups (queues *q, const double *key)
{
  uint32_t ng = q->ng, n1 = ng ? ng : 1;
  if (!q->by_rank && !(q->by_rank = malloc (n1 * sizeof *q->by_rank)))
    return PS_ENOMEM;
  if (!q->rank && !(q->rank = malloc (n1 * sizeof *q->rank)))
    return PS_ENOMEM;
  return ps__planner_rank_keys (key, ng, q->by_rank, q->rank);
}

/* Queue r becomes a set (its groups moved there); false when it cannot
 * (the groups cannot be ranked, or no memory for it: it stays a heap). */
static bool
ready_to_set (queues *q, int r)
{
  if (q->unranked)
    return false;
  if (!q->ranked) {
    if (rank_groups (q, q->ready[r].key) != 0) { /* the pass's priorities */
      q->unranked = true;
      return false;
    }
    q->ranked = true;
  }
  ps__rankqueue *st = &q->set[r];
  if (!st->s.lv[0] && ps__rankset_init (&st->s, q->ng) < 0) {
    ps__rankset_free (&st->s);
    q->unranked = true; /* no sets this pass */
    return false;
  }
  q->big[r] = true;
  ps__heap *h = &q->ready[r];
  for (uint32_t i = 0; i < h->n; i++)
    ps__rankqueue_push (st, q->rank[h->a[i].id]);
  h->n = 0;
  ps__schedule_sets++;
  return true;
}

static int
ready_push (queues *q, int r, uint32_t gi)
{
  if (q->big[r]) {
    ps__rankqueue_push (&q->set[r], q->rank[gi]);
    return 0;
  }
  if (ps__heap_push (&q->ready[r], gi) < 0)
    return PS_ENOMEM;
  if (q->ready[r].n >= ps__schedule_ready_big && q->ng > ps__schedule_ready_big)
    ready_to_set (q, r);
  return 0;
}

static inline uint32_t
ready_count (const queues *q, int r)
{
  return q->big[r] ? q->set[r].n : q->ready[r].n;
}

/* The first group of queue r, which is not empty. */
static inline uint32_t
ready_first (const queues *q, int r)
{
  return q->big[r] ? q->by_rank[q->set[r].first] : q->ready[r].a[0].id;
}

static uint32_t
ready_pop (queues *q, int r)
{
  if (!q->big[r])
    return ps__heap_pop (&q->ready[r]);
  return q->by_rank[ps__rankqueue_pop (&q->set[r])];
}

/* A new pass, with priorities `key`: every queue a heap again, empty (a
 * pass that ends takes every group, so the sets are empty). */
static void
ready_reset (queues *q, const double *key)
{
  q->ranked = q->unranked = false;
  for (int r = 0; r < PS_RES__COUNT; r++) {
    q->ready[r].n = 0;
    q->ready[r].key = key;
    q->big[r] = false;
  }
}

static void
queues_free (queues *q)
{
  free (q->pending.a);
  for (int r = 0; r < PS_RES__COUNT; r++) {
    free (q->ready[r].a);
    ps__rankset_free (&q->set[r].s);
  }
  free (q->ready_at);
  free (q->by_rank);
  free (q->rank);
}

/* One list schedule with the priorities in `key`; fills the schedule
 * arrays of pl and *makespan.
 *
 * Decisions are taken in time order, as a parallel schedule generation
 * scheme: at decision time T, a group whose data is ready competes with the
 * other ready groups of its resource, and the best by priority is placed
 * when some stream is free and the resource has a free share at T; else T
 * moves on to the next release, stream end or free share.  Groups are
 * still placed where they finish earliest, which may be before T (a group
 * issued to a stream that is free early); the resource profiles and the
 * resource-order wait keep that consistent with arrival order. */
static int
run_pass (ps__planner *pl, sched *sc, queues *q, const double *key, uint32_t *indeg,
          double *makespan)
{
  uint32_t ng = pl->ng, S = sc->S;
  int rc;
  sc->host = 0;
  for (uint32_t s = 0; s < S; s++) {
    sc->free_at[s] = 0;
    sc->last_end[s] = -1;
    sc->count[s] = 0;
    sc->fin_on[s] = -1;
  }
  memset (sc->known, 0, (size_t) S * S * sizeof *sc->known);
  memset (sc->recorded, 0, ng ? ng : 1);
  for (int k = 0; k < PS_RES__COUNT; k++) {
    profile *pr = &sc->prof[k];
    pr->v[0] = (seg) { 0, 0, -INFINITY };
    pr->head = 0;
    pr->n = 1;
    sc->last_arr[k] = -INFINITY;
    sc->last_job[k] = PS_NONE;
  }
  ready_reset (q, key);
  /* ready_at: the latest finish of the predecessors placed so far; a
   * group is pending once they all are. */
  q->pending.n = 0;
  q->pending.key = q->ready_at;
  for (uint32_t gi = 0; gi < ng; gi++) {
    q->ready_at[gi] = 0;
    indeg[gi] = pl->gpred_off[gi + 1] - pl->gpred_off[gi] + pl->chain_in[gi];
    if (indeg[gi] == 0 && ps__heap_push (&q->pending, gi) < 0)
      return ps__planner_nomem (pl);
  }

  uint32_t issued = 0;
  /* Per resource, the last answer of profile_next_free (at, for share,
   * asked at time, on profile version): it holds for later times up to
   * the answer while the profile is unchanged. */
  double nf_at[PS_RES__COUNT], nf_share[PS_RES__COUNT], nf_asked[PS_RES__COUNT];
  uint64_t nf_ver[PS_RES__COUNT];
  for (int r = 0; r < PS_RES__COUNT; r++) {
    nf_ver[r] = UINT64_MAX;
    nf_at[r] = nf_share[r] = nf_asked[r] = 0;
  }
  double ms = 0, T = pl->var.untimed ? INFINITY : 0;
  double span = sc->d->dispatch_gap_ns + sc->d->event_wait_ns;
  if (span < 1)
    span = 1;
  while (issued < ng) {
    while (q->pending.n > 0 && q->pending.a[0].key <= T) {
      uint32_t gi = ps__heap_pop (&q->pending);
      if (ready_push (q, pl->gres[gi], gi) < 0)
        return ps__planner_nomem (pl);
    }
    double min_free = sc->free_at[0];
    for (uint32_t s = 1; s < S; s++)
      if (sc->free_at[s] < min_free)
        min_free = sc->free_at[s];
    bool stream_free = min_free <= T;
    int best = -1;
    ps__hent best_first = { 0, 0 };
    double next = q->pending.n > 0 ? q->pending.a[0].key : INFINITY;
    for (int r = 0; r < PS_RES__COUNT; r++) {
      if (ready_count (q, r) == 0)
        continue;
      uint32_t first = ready_first (q, r);
      ps__hent head = { key[first], first };
      double t = T;
      if (r != PS_RES_NONE && !pl->var.untimed) {
        double share = 0.5 * pl->gfrac[first];
        if (nf_ver[r] == sc->version[r] && nf_share[r] == share && nf_asked[r] <= T
            && T <= nf_at[r]) {
          t = nf_at[r];
        } else {
          t = profile_next_free (&sc->prof[r], T, span, share);
          nf_ver[r] = sc->version[r];
          nf_share[r] = share;
          nf_asked[r] = T;
          nf_at[r] = t;
        }
      }
      if (t > T) {
        if (t < next)
          next = t;
      } else if (best < 0 || ps__hent_before (head, best_first)) {
        best = r;
        best_first = head;
      }
    }
    if (best < 0 || !stream_free) {
      if (!stream_free && min_free < next)
        next = min_free;
      if (!(next > T) || next == INFINITY) {
        if (best < 0) { /* nothing can ever become ready */
          if (pl->diag)
            ps_diag_error (pl->diag, 0, 0,
                           "internal error: the event order conflicts with the dependencies");
          return PS_ECYCLE;
        }
        next = T; /* place anyway */
      } else {
        T = next;
        continue;
      }
    }

    uint32_t gi = ready_pop (q, best);
    if ((rc = place_group (sc, gi)) < 0)
      return rc == PS_ENOMEM ? ps__planner_nomem (pl) : rc;
    if (pl->gfinish[gi] > ms)
      ms = pl->gfinish[gi];
    pl->gissue[gi] = issued;
    pl->order[issued++] = gi;
    double f = pl->gfinish[gi];
    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1]; e++) {
      uint32_t w = pl->gsucc[e];
      if (f > q->ready_at[w])
        q->ready_at[w] = f;
      if (--indeg[w] == 0 && ps__heap_push (&q->pending, w) < 0)
        return ps__planner_nomem (pl);
    }
    uint32_t c = pl->chain_next[gi];
    if (c != PS_NONE && --indeg[c] == 0 && ps__heap_push (&q->pending, c) < 0)
      return ps__planner_nomem (pl);
  }
  *makespan = ms;
  return 0;
}

int
ps__planner_schedule (ps__planner *pl)
{
  uint32_t ng = pl->ng, S = pl->var.streams ? pl->var.streams : pl->S, n1 = ng ? ng : 1;
  int rc = 0;
  sched *sc = calloc (1, sizeof *sc);
  queues q;
  memset (&q, 0, sizeof q);
  q.ng = ng;
  double *key = malloc (n1 * sizeof *key);
  uint32_t *indeg = malloc (n1 * sizeof *indeg);
  q.ready_at = malloc (n1 * sizeof *q.ready_at);
  free (pl->order);
  free (pl->gissue);
  free (pl->gstream);
  free (pl->gpos);
  free (pl->gstart);
  free (pl->gfinish);
  free (pl->gafter);
  pl->order = malloc (n1 * sizeof *pl->order);
  pl->gissue = malloc (n1 * sizeof *pl->gissue);
  pl->gstream = malloc (n1 * sizeof *pl->gstream);
  pl->gpos = malloc (n1 * sizeof *pl->gpos);
  pl->gstart = malloc (n1 * sizeof *pl->gstart);
  pl->gfinish = malloc (n1 * sizeof *pl->gfinish);
  pl->gafter = malloc (n1 * sizeof *pl->gafter);
  if (!sc || !key || !indeg || !q.ready_at || !pl->order || !pl->gissue || !pl->gstream || !pl->gpos
      || !pl->gstart || !pl->gfinish || !pl->gafter)
    goto nomem;
  sc->pl = pl;
  sc->d = &pl->dev;
  sc->S = S;
  sc->known = calloc ((size_t) S * S, sizeof *sc->known);
  sc->recorded = calloc (n1, 1);
  if (!sc->known || !sc->recorded)
    goto nomem;
  for (int k = 0; k < PS_RES__COUNT; k++)
    if (profile_init (&sc->prof[k]) < 0)
      goto nomem;
  double m1, m2;
  priorities (pl, S, 0, key);
  if ((rc = run_pass (pl, sc, &q, key, indeg, &m1)) < 0)
    goto out;
  pl->makespan = m1;
  if (pl->var.rank == PS__RANK_PASS && pl->var.key == PS__KEY_BLEND) {
    priorities (pl, S, m1, key);
    if ((rc = run_pass (pl, sc, &q, key, indeg, &m2)) < 0)
      goto out;
    pl->makespan = m2;
  }
  pl->SC = 1;
  for (uint32_t s = 0; s < S; s++)
    if (sc->count[s] > 0)
      pl->SC = s + 1;
  goto out;
nomem:
  rc = ps__planner_nomem (pl);
out:
  if (sc) {
    for (int k = 0; k < PS_RES__COUNT; k++)
      free (sc->prof[k].v);
    free (sc->known);
    free (sc->recorded);
    free (sc);
  }
  queues_free (&q);
  free (key);
  free (indeg);
  return rc;
}
