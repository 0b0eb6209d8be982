/* ps-sync.c: the sync pass: the minimal set of planner events, by vector
 * clocks, and the plan's steps in issue order.
 *
 * Each stream keeps a clock: per stream, the highest group position known
 * to have completed.  Groups are visited in issue order; a group on stream
 * s needs a wait for a predecessor u on another stream only when s's clock
 * does not already cover u's position.  Only the latest predecessor per
 * stream is considered, in descending issue order, because a later record
 * can imply an earlier one and never the reverse.  A wait merges the clock
 * of u's stream as it was right after u (a snapshot, kept only for groups
 * with a successor on another stream).  u's record goes right after u on
 * its stream, one record however many waits use it; a group's waits go
 * right before its launch.  A user event_wait merges its own record's
 * snapshot first, so planner waits it already implies are skipped.  The
 * streams pass's resource-order wait (gafter) counts as a predecessor. */
#include "ps-planner-private.h"

#include <stdlib.h>
#include <string.h>

static inline void
merge (uint32_t *c, const uint32_t *snap, uint32_t S)
{
  for (uint32_t t = 0; t < S; t++)
    if (snap[t] > c[t])
      c[t] = snap[t];
}

void
ps__planner_apply_waits (const ps__planner *pl, uint32_t i, uint32_t *clk)
{
  uint32_t S = pl->SC, gi = pl->order[i], s = pl->gstream[gi];
  uint32_t *c = clk + (size_t) s * S;
  for (uint32_t k = pl->wait_off[i]; k < pl->wait_off[i + 1]; k++)
    merge (c, pl->snaps + (size_t) pl->snap_of[pl->waits[k]] * S, S);
  uint32_t r = pl->uwait_of[gi];
  if (r != PS_NONE && pl->gstream[r] != s && pl->snap_of[r] != PS_NONE)
    merge (c, pl->snaps + (size_t) pl->snap_of[r] * S, S);
}

/* Decides the waits of every group and the groups that need a record. */
static int
decide (ps__planner *pl)
{
  uint32_t ng = pl->ng, S = pl->SC, n1 = ng ? ng : 1;
  uint32_t n_edges = pl->gsucc_off[ng];
  pl->gevent = malloc (n1 * sizeof *pl->gevent);
  pl->snap_of = malloc (n1 * sizeof *pl->snap_of);
  pl->wait_off = malloc (((size_t) ng + 1) * sizeof *pl->wait_off);
  pl->waits = malloc (((size_t) n_edges + ng + 1) * sizeof *pl->waits);
  pl->wait_dep = malloc (((size_t) n_edges + ng + 1) * sizeof *pl->wait_dep);
  uint32_t *clk = calloc ((size_t) S * S, sizeof *clk);
  if (!pl->gevent || !pl->snap_of || !pl->wait_off || !pl->waits || !pl->wait_dep || !clk) {
    free (clk);
    return ps__planner_nomem (pl);
  }

  /* Snapshots: groups with a successor on another stream, and records
   * that a user wait on another stream refers to. */
  for (uint32_t gi = 0; gi < ng; gi++)
    pl->snap_of[gi] = PS_NONE;
  uint32_t n_snaps = 0;
  for (uint32_t gi = 0; gi < ng; gi++) {
    pl->gevent[gi] = PS_NONE;
    for (uint32_t e = pl->gsucc_off[gi]; e < pl->gsucc_off[gi + 1]; e++)
      if (pl->gstream[pl->gsucc[e]] != pl->gstream[gi]) {
        pl->snap_of[gi] = 0;
        break;
      }
    uint32_t r = pl->uwait_of[gi];
    if (r != PS_NONE && pl->gstream[r] != pl->gstream[gi])
      pl->snap_of[r] = 0;
    r = pl->gafter[gi];
    if (r != PS_NONE && pl->gstream[r] != pl->gstream[gi])
      pl->snap_of[r] = 0;
  }
  for (uint32_t gi = 0; gi < ng; gi++)
    if (pl->snap_of[gi] != PS_NONE)
      pl->snap_of[gi] = n_snaps++;
  size_t n_words = (size_t) n_snaps * S;
  pl->snaps = malloc ((n_words ? n_words : 1) * sizeof *pl->snaps);
  if (!pl->snaps) {
    free (clk);
    return ps__planner_nomem (pl);
  }

  uint32_t best_pos[PS_MAX_STREAMS], best_g[PS_MAX_STREAMS], cand[PS_MAX_STREAMS];
  /* Per stream, the latest predecessor that is a dependency of the graph
   * (the resource-order one may be later). */
  uint32_t dep_pos[PS_MAX_STREAMS], dep_g[PS_MAX_STREAMS], cand_dep[PS_MAX_STREAMS];
  memset (best_pos, 0, sizeof best_pos);
  memset (dep_pos, 0, sizeof dep_pos);
  uint32_t nw = 0;
  for (uint32_t i = 0; i < ng; i++) {
    uint32_t gi = pl->order[i], s = pl->gstream[gi], nc = 0;
    uint32_t *c = clk + (size_t) s * S;
    pl->wait_off[i] = nw;
    uint32_t r = pl->uwait_of[gi];
    if (r != PS_NONE && pl->gstream[r] != s && pl->snap_of[r] != PS_NONE)
      merge (c, pl->snaps + (size_t) pl->snap_of[r] * S, S);

    /* The predecessors, and the resource-order wait as one more. */
    uint32_t e0 = pl->gpred_off[gi], e1 = pl->gpred_off[gi + 1];
    for (uint32_t e = e0; e <= e1; e++) {
      uint32_t u = e < e1 ? pl->gpred[e] : pl->gafter[gi];
      if (u == PS_NONE)
        continue;
      uint32_t t = pl->gstream[u];
      if (t == s)
        continue;
      if (e < e1 && pl->gpos[u] > dep_pos[t]) {
        dep_pos[t] = pl->gpos[u];
        dep_g[t] = u;
      }
      if (pl->gpos[u] <= best_pos[t])
        continue;
      if (best_pos[t] == 0)
        cand[nc++] = t;
      best_pos[t] = pl->gpos[u];
      best_g[t] = u;
    }
    for (uint32_t k = 0; k < nc; k++) {
      uint32_t t = cand[k];
      cand[k] = best_g[t];
      /* The dependency it stands for: itself, an earlier one, or none. */
      cand_dep[k] = dep_pos[t] ? dep_g[t] : PS_NONE;
      best_pos[t] = 0;
      dep_pos[t] = 0;
    }
    for (uint32_t k = 1; k < nc; k++) /* descending issue order */
      for (uint32_t j = k; j > 0 && pl->gissue[cand[j]] > pl->gissue[cand[j - 1]]; j--) {
        uint32_t x = cand[j], xd = cand_dep[j];
        cand[j] = cand[j - 1];
        cand_dep[j] = cand_dep[j - 1];
        cand[j - 1] = x;
        cand_dep[j - 1] = xd;
      }
    for (uint32_t k = 0; k < nc; k++) {
      uint32_t u = cand[k], t = pl->gstream[u];
      if (c[t] >= pl->gpos[u])
        continue;
      if (pl->gevent[u] == PS_NONE)
        pl->gevent[u] = ps__plan_new_event (pl->p);
      pl->wait_dep[nw] = cand_dep[k];
      pl->waits[nw++] = u;
      merge (c, pl->snaps + (size_t) pl->snap_of[u] * S, S);
    }
    c[s] = pl->gpos[gi];
    if (pl->snap_of[gi] != PS_NONE)
      memcpy (pl->snaps + (size_t) pl->snap_of[gi] * S, c, S * sizeof *c);
  }
  pl->wait_off[ng] = nw;
  free (clk);
  return 0;
}

/* Appends the steps in issue order. */
static int
emit (ps__planner *pl)
{
  ps_plan *p = pl->p;
  uint32_t fused = 0;
  int rc = 0;
  for (uint32_t i = 0; i < pl->ng && rc == 0; i++) {
    uint32_t gi = pl->order[i], s = pl->gstream[gi];
    for (uint32_t k = pl->wait_off[i]; k < pl->wait_off[i + 1] && rc == 0; k++) {
      /* A wait for a predecessor of the graph, or for the resource-order
       * one, with the dependency it covers besides. */
      uint32_t u = pl->waits[k], dep = pl->wait_dep[k];
      bool is_dep = dep == u;
      uint32_t dep_node = dep != PS_NONE && !is_dep ? pl->gm[pl->gm_off[dep + 1] - 1] : PS_NONE;
      rc = ps__plan_add_wait (p, s, pl->gevent[u], is_dep ? PS_WAIT_DEPENDENCY : PS_WAIT_ORDER,
                              dep_node, NULL);
    }
    if (rc < 0)
      break;
    uint32_t b0 = pl->gm_off[gi], count = pl->gm_off[gi + 1] - b0;
    if (ps__planner_event_op (pl, gi))
      rc = ps__plan_add_node_step (p, pl->gm[b0], s, NULL); /* with its event */
    else if (count == 1)
      rc = ps__plan_add_step (p, (ps_op) pl->gop[gi], s, pl->gm + b0, 1, PS_NONE, PS_NONE,
                              pl->gfunc[gi], NULL);
    else
      rc = ps__plan_add_step (p, PS_OP_KERNEL, s, pl->gm + b0, count, PS_NONE, fused++,
                              pl->gfunc[gi], NULL);
    if (rc == 0 && pl->gevent[gi] != PS_NONE)
      rc = ps__plan_add_record (p, s, pl->gevent[gi], NULL);
  }
  if (rc == PS_ENOMEM)
    return ps__planner_nomem (pl);
  if (rc < 0) {
    if (pl->diag)
      ps_diag_error (pl->diag, 0, 0, "the plan exceeds a documented limit");
    return rc;
  }
  ps__plan_count (p, pl->n_kernel_nodes);
  return 0;
}

int
ps__planner_sync (ps__planner *pl)
{
  pl->synced_strings = pl->p->strings_len;
  int rc = decide (pl);
  if (rc == 0)
    rc = emit (pl);
  pl->synced = true; /* in part, on a failure: undone all the same */
  return rc;
}

void
ps__planner_sync_undo (ps__planner *pl)
{
  uint32_t strings_len = pl->synced_strings;
  pl->synced = false;
  if (pl->run) {
    ps_timeline_free (pl->run);
    free (pl->run);
    pl->run = NULL;
  }
  free (pl->gevent);
  free (pl->snap_of);
  free (pl->wait_off);
  free (pl->waits);
  free (pl->wait_dep);
  free (pl->snaps);
  pl->gevent = pl->snap_of = pl->wait_off = pl->waits = pl->wait_dep = pl->snaps = NULL;
  ps_plan *p = pl->p;
  for (uint32_t i = 0; i < p->n_step_nodes; i++)
    if (p->step_nodes[i] < pl->n)
      p->node_step[p->step_nodes[i]] = PS_NONE;
  p->n_steps = 0;
  p->n_step_nodes = 0;
  p->n_events = pl->g->n_events;
  p->n_event_pairs = 0;
  p->strings_len = strings_len;
}
