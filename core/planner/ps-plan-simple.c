/* ps-plan-simple.c: the simple planner, ps__plan_build_simple: every node
 * in program order on its pinned stream or stream 0, one event record after
 * a node that has successors on other streams, a wait before each
 * cross-stream consumer, no fusion and buffers laid end to end in the pool.
 * Always correct, never clever: the reference the tests hold the full
 * planner against. */
#include "ps-planner-private.h"

#include <stdlib.h>
#include <string.h>

#include "ps-analysis.h"

/* True when every edge points from a lower to a higher node id, i.e. ids
 * are a topological order (always so for loaded graphs). */
static bool
ids_are_topological (const ps_graph *g)
{
  for (uint32_t v = 0; v < g->n_nodes; v++)
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
      if (g->succ[e] <= v)
        return false;
  return true;
}

static int
build_simple (ps_plan *p, const ps_graph *g, const ps_analysis *a, ps_diag *diag,
              ps_timing *timing, double *t)
{
  uint32_t n = g->n_nodes, S = p->options.streams;
  int rc = 0;
  const uint32_t *order = ids_are_topological (g) ? NULL : a->topo;

  uint16_t *stream = malloc ((n ? n : 1) * sizeof *stream);
  uint32_t *rec_step = malloc ((n ? n : 1) * sizeof *rec_step);
  uint32_t *rec_event = malloc ((n ? n : 1) * sizeof *rec_event);
  /* known[s * S + t]: 1 + the step of the latest record on stream t that
   * stream s has waited for; records of one stream are issued in order, so
   * waiting for a later one covers every earlier one. */
  uint32_t *known = calloc ((size_t) S * S, sizeof *known);
  if (!stream || !rec_step || !rec_event || !known) {
    rc = PS_ENOMEM;
    goto out;
  }
  for (uint32_t v = 0; v < n; v++) {
    int32_t pin = g->nodes[v].stream;
    stream[v] = pin >= 0 ? (uint16_t) pin : 0;
  }
  ps_timing_mark (timing, "streams", t);

  for (uint32_t v = 0; v < n; v++) {
    rec_step[v] = PS_NONE;
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
      if (stream[g->succ[e]] != stream[v]) {
        rec_step[v] = 0; /* needs a record */
        break;
      }
  }
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = order ? order[i] : i;
    uint32_t s = stream[v];
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
      uint32_t u = g->pred[e], tu = stream[u];
      if (tu == s)
        continue;
      uint32_t *k = &known[s * S + tu];
      if (*k > rec_step[u])
        continue;
      if ((rc = ps__plan_add_wait (p, s, rec_event[u], PS_WAIT_DEPENDENCY, PS_NONE, NULL)) < 0)
        goto out;
      *k = rec_step[u] + 1;
    }
    if ((rc = ps__plan_add_node_step (p, v, s, NULL)) < 0)
      goto out;
    if (rec_step[v] != PS_NONE) {
      rec_event[v] = ps__plan_new_event (p);
      if ((rc = ps__plan_add_record (p, s, rec_event[v], &rec_step[v])) < 0)
        goto out;
    }
  }
  ps_timing_mark (timing, "sync", t);

  if ((rc = ps__plan_pool_end_to_end (p, diag)) < 0 || (rc = ps__plan_finish (p)) < 0)
    goto out;
  p->est_makespan_ns = a->length_ns;
  ps_timing_mark (timing, "memory", t);
out:
  if (rc == PS_ENOMEM && diag)
    ps_diag_error (diag, 0, 0, "out of memory while planning");
  free (stream);
  free (rec_step);
  free (rec_event);
  free (known);
  return rc;
}

int
ps__plan_build_simple (ps_plan *p, const ps_graph *g, const ps_plan_options *o, ps_diag *diag)
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
  ps_analysis a;
  rc = ps_analysis_run (&a, g, NULL);
  if (rc < 0) {
    if (diag)
      ps_diag_error (diag, 0, 0, "cannot plan: %s", ps_strerror (rc));
    return rc;
  }
  ps_timing_mark (&timing, "analyse", &t);

  rc = ps__plan_begin (p, g, o);
  if (rc == 0)
    rc = build_simple (p, g, &a, diag, &timing, &t);
  else if (diag)
    ps_diag_error (diag, 0, 0, "out of memory while planning");
  ps_analysis_free (&a);
  if (rc < 0)
    ps_plan_free (p);
  else
    p->timing = timing;
  return rc;
}
