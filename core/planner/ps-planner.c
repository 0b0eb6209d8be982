/* ps-planner.c: ps_plan_build, the compile pipeline (see
 * ps-planner-private.h): runs the passes in order, times them, owns the
 * shared context, resolves the device of the cost model and searches the
 * variants of the streams pass.  The analyse pass lives here: a
 * topological order. */
#include "ps-planner-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-sim.h"

/* The variants the search tries, in order (ties keep the earlier one). */
static const ps__planner_variant variants[] = {
  { PS__ORDER_SHORTER, PS__RANK_BOUND, 0, 0 },
  { PS__ORDER_NONE, PS__RANK_BOUND, 0, 0 },
  { PS__ORDER_NONE, PS__RANK_BOUND, 1, 0 },
  { PS__ORDER_SHORTER, PS__RANK_PASS, 0, 0 },
  { PS__ORDER_NONE, PS__RANK_PASS, 0, 0 },
};
static const ps__planner_variant variant_large = { PS__ORDER_SHORTER, PS__RANK_BOUND, 0, 0 };

static void
planner_free (ps__planner *pl)
{
  free (pl->topo);
  free (pl->tpos);
  free (pl->node_group);
  free (pl->gm_off);
  free (pl->gm);
  free (pl->gcost);
  free (pl->gres);
  free (pl->gfrac);
  free (pl->gpin);
  free (pl->gfunc);
  free (pl->gsucc_off);
  free (pl->gsucc);
  free (pl->gpred_off);
  free (pl->gpred);
  free (pl->chain_next);
  free (pl->chain_in);
  free (pl->order);
  free (pl->gissue);
  free (pl->gstream);
  free (pl->gpos);
  free (pl->gstart);
  free (pl->gfinish);
  free (pl->gafter);
  free (pl->gevent);
  free (pl->uwait_of);
  free (pl->wait_off);
  free (pl->waits);
  free (pl->wait_dep);
  free (pl->snap_of);
  free (pl->snaps);
  memset (pl, 0, sizeof *pl);
}

/* The CSR arrays must be consistent before anything indexes with them. */
static bool
csr_ok (const ps_graph *g)
{
  uint32_t n = g->n_nodes;
  if (n > 0 && (!g->nodes || !g->succ_off || !g->pred_off))
    return false;
  if (n == 0)
    return true;
  if (g->succ_off[0] != 0 || g->pred_off[0] != 0 || g->succ_off[n] != g->pred_off[n])
    return false;
  for (uint32_t v = 0; v < n; v++)
    if (g->succ_off[v] > g->succ_off[v + 1] || g->pred_off[v] > g->pred_off[v + 1])
      return false;
  for (uint32_t e = 0; e < g->succ_off[n]; e++)
    if (g->succ[e] >= n || g->pred[e] >= n)
      return false;
  return true;
}

/* A topological order: the node ids themselves when every edge points
 * forward, as in loaded graphs, else Kahn's algorithm.  (Durations come
 * with the groups, in ps-fuse.c.) */
static int
analyse (ps__planner *pl)
{
  const ps_graph *g = pl->g;
  uint32_t n = pl->n, nn = n ? n : 1;
  pl->topo = malloc (nn * sizeof *pl->topo);
  pl->tpos = malloc (nn * sizeof *pl->tpos);
  if (!pl->topo || !pl->tpos)
    return ps__planner_nomem (pl);

  bool forward = true;
  for (uint32_t v = 0; v < n && forward; v++)
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
      if (g->succ[e] <= v) {
        forward = false;
        break;
      }
  if (forward) {
    for (uint32_t v = 0; v < n; v++)
      pl->topo[v] = pl->tpos[v] = v;
  } else {
    /* tpos doubles as the in-degree counter until a node is placed. */
    uint32_t head = 0, tail = 0;
    for (uint32_t v = 0; v < n; v++) {
      pl->tpos[v] = g->pred_off[v + 1] - g->pred_off[v];
      if (pl->tpos[v] == 0)
        pl->topo[tail++] = v;
    }
    while (head < tail) {
      uint32_t v = pl->topo[head++];
      for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
        if (--pl->tpos[g->succ[e]] == 0)
          pl->topo[tail++] = g->succ[e];
    }
    if (tail != n) {
      if (pl->diag)
        ps_diag_error (pl->diag, 0, 0, "cannot plan: the graph has a cycle");
      return PS_ECYCLE;
    }
    for (uint32_t i = 0; i < n; i++)
      pl->tpos[pl->topo[i]] = i;
  }
  return 0;
}

/* The device of the cost model: the one given, else the graph's, else
 * the default.  A graph's device that cannot be found is a warning: the
 * default profile is used instead. */
static void
resolve_device (ps__planner *pl, const ps_plan_options *o)
{
  if (o->device) {
    pl->dev = *o->device;
    return;
  }
  const char *name = pl->g->device && *pl->g->device ? pl->g->device : NULL;
  ps_diag d;
  ps_diag_init (&d, name ? name : PS_DEVICE_DEFAULT);
  int rc = ps_device_find (&pl->dev, name, &d);
  ps_diag_free (&d);
  if (rc == 0)
    return;
  if (pl->diag && name)
    ps_diag_warn (pl->diag, 0, 0, "cannot find the graph's device \"%s\"; planning for %s",
                  name, ps_device_builtin (0)->name);
  pl->dev = *ps_device_builtin (0);
}

/* The simulated makespan of the plan the sync pass has just emitted, or
 * INFINITY when it cannot be simulated.  Running out of memory says
 * nothing of the schedule: *rc is then PS_ENOMEM, which fails the plan. */
static double
simulated (ps__planner *pl, int *rc)
{
  ps_sim s;
  double ms = INFINITY;
  *rc = ps_sim_init (&s, pl->p, &pl->dev);
  if (*rc == PS_ENOMEM)
    return ms;
  int run = *rc == 0 ? ps_sim_run (&s, NULL, &ms) : 0;
  if (run != 0)
    ms = INFINITY;
  if (*rc == 0)
    ps_sim_free (&s);
  *rc = run == PS_ENOMEM ? PS_ENOMEM : 0;
  return ms;
}

/* A fingerprint of the schedule in pl: issue order, streams and
 * resource-order waits (FNV-1a over their values). */
static uint64_t
schedule_hash (const ps__planner *pl)
{
  uint64_t h = 1469598103934665603ull;
  for (uint32_t i = 0; i < pl->ng; i++) {
    uint32_t gi = pl->order[i];
    uint64_t x = ((uint64_t) gi << 32) ^ ((uint64_t) pl->gstream[gi] << 16) ^ pl->gafter[gi];
    h = (h ^ x) * 1099511628211ull;
  }
  return h;
}

/* The streams pass, and for graphs of at most PS__SEARCH_MAX_GROUPS groups
 * the search (ps-planner-private.h): each variant on each stream count
 * tried is scheduled, synchronised and simulated, and the fastest is
 * scheduled again (the pass is deterministic).  Schedules equal to one
 * already simulated are not simulated again.  *sim_ms: the simulated
 * makespan of the chosen schedule, or -1 when there was no search. */
static int
streams (ps__planner *pl, double *sim_ms)
{
  *sim_ms = -1;
  if (pl->ng > PS__SEARCH_MAX_GROUPS) {
    pl->var = variant_large;
    return ps__planner_schedule (pl);
  }
  uint32_t n_var = sizeof variants / sizeof variants[0];
  if (pl->ng > PS__SEARCH_ALL_VARIANTS)
    n_var = PS__SEARCH_FEW_VARIANTS;
  uint32_t lo = (uint64_t) pl->ng * pl->S <= PS__SEARCH_ALL_STREAMS ? 1 : pl->S - (pl->S > 1);
  uint32_t floor = 1; /* pins need their stream */
  for (uint32_t gi = 0; gi < pl->ng; gi++)
    if (pl->gpin[gi] >= 0 && (uint32_t) pl->gpin[gi] + 1 > floor)
      floor = (uint32_t) pl->gpin[gi] + 1;

  uint32_t strings_len = pl->p->strings_len, n_seen = 0;
  uint64_t seen[PS_MAX_STREAMS * (sizeof variants / sizeof variants[0])];
  ps__planner_variant best = variants[0];
  double best_ms = INFINITY;
  int rc;
  bool improved = true;
  for (uint32_t S = pl->S; S >= floor && (S >= lo || improved); S--) {
    improved = false;
    for (uint32_t i = 0; i < n_var; i++) {
      pl->var = variants[i];
      pl->var.streams = (uint16_t) S;
      if ((rc = ps__planner_schedule (pl)) < 0)
        return rc;
      uint64_t h = schedule_hash (pl);
      bool dup = false;
      for (uint32_t k = 0; k < n_seen && !dup; k++)
        dup = seen[k] == h;
      if (dup)
        continue;
      seen[n_seen++] = h;
      if ((rc = ps__planner_sync (pl)) < 0)
        return rc;
      double ms = simulated (pl, &rc);
      ps__planner_sync_undo (pl, strings_len);
      if (rc < 0)
        return ps__planner_nomem (pl);
      if (ms < best_ms * (1 - 1e-9)) {
        best_ms = ms;
        best = pl->var;
        improved = S < pl->S;
      }
    }
  }
  pl->var = best;
  if ((rc = ps__planner_schedule (pl)) < 0)
    return rc;
  if (isfinite (best_ms))
    *sim_ms = best_ms;
  return 0;
}

int
ps_plan_build (ps_plan *p, const ps_graph *g, const ps_plan_options *o, ps_diag *diag)
{
  ps_plan_options defaults;
  if (!o) {
    ps_plan_options_init (&defaults);
    o = &defaults;
  }
  memset (p, 0, sizeof *p);
  ps_timing timing;
  ps_timing_reset (&timing);
  double t = ps_clock_now ();
  if (!g)
    return PS_EINVAL;
  int rc = ps__plan_check_options (g, o, diag);
  if (rc < 0)
    return rc;
  if (!csr_ok (g)) {
    if (diag)
      ps_diag_error (diag, 0, 0, "cannot plan: the graph's edge arrays are inconsistent");
    return PS_EINVAL;
  }

  ps__planner pl;
  double sim_ms = -1;
  memset (&pl, 0, sizeof pl);
  pl.g = g;
  pl.p = p;
  pl.diag = diag;
  pl.n = g->n_nodes;
  pl.S = o->streams;
  pl.fusion = o->fusion;
  resolve_device (&pl, o);

  if ((rc = ps__plan_begin (p, g, o)) < 0) {
    rc = ps__planner_nomem (&pl);
    goto out;
  }
  p->device = pl.dev;
  if ((rc = analyse (&pl)) < 0)
    goto out;
  ps_timing_mark (&timing, "analyse", &t);
  if ((rc = ps__planner_fuse (&pl)) < 0)
    goto out;
  ps_timing_mark (&timing, "fuse", &t);
  if ((rc = streams (&pl, &sim_ms)) < 0)
    goto out;
  ps_timing_mark (&timing, "streams", &t);
  if ((rc = ps__planner_sync (&pl)) < 0)
    goto out;
  ps_timing_mark (&timing, "sync", &t);
  if ((rc = ps__planner_pool (&pl)) < 0)
    goto out;
  p->est_makespan_ns = sim_ms >= 0 ? sim_ms : pl.makespan;
  p->est_simulated = sim_ms >= 0;
  ps_timing_mark (&timing, "memory", &t);
out:
  planner_free (&pl);
  if (rc < 0)
    ps_plan_free (p);
  else
    p->timing = timing;
  return rc;
}
