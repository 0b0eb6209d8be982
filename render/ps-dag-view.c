/* ps-dag-view.c: the DAG view (see ps-dag-view.h).
 *
 * Every graph node is mapped to a box in one of three modes, chosen by
 * size: every node its own box (fused groups framed as clusters); fused
 * groups and straight chains as single boxes; or an overview with one box
 * per stream and band of levels.  Edges are then mapped to boxes, merged
 * and counted (ps-view.c). */
#include "ps-dag-view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-analysis.h"
#include "ps-array.h"
#include "ps-format.h"
#include "ps-view-private.h"

typedef enum mode { MODE_FULL = 0, MODE_COLLAPSED, MODE_OVERVIEW } mode;

typedef struct dag {
  const ps_graph *g;
  const ps_plan *p;
  const ps_view_options *o;
  ps_analysis a;
  double *ns;        /* per node */
  uint8_t *crit;     /* per node: on the critical path */
  uint32_t *crit_next; /* per node: the next node on the critical path, or PS_NONE */
  int32_t *stream;   /* per node */
  uint32_t *unit;    /* per node: its unit (the fused group's first node, or itself) */
  uint32_t *box;     /* per node: its box */
  uint32_t n_boxes;
  ps__view_box *boxes;
  uint32_t band;     /* overview: levels per band */
} dag;

static int32_t
node_stream (const dag *d, uint32_t v)
{
  if (!d->p || !d->p->node_step)
    return d->g->nodes[v].stream;
  return d->p->steps[d->p->node_step[v]].stream;
}

/* The fused group of v: its plan step when that step holds several nodes. */
static uint32_t
fused_step (const dag *d, uint32_t v)
{
  if (!d->p || !d->p->node_step)
    return PS_NONE;
  uint32_t st = d->p->node_step[v];
  return d->p->steps[st].nodes_count > 1 ? st : PS_NONE;
}

static int
prepare (dag *d)
{
  const ps_graph *g = d->g;
  uint32_t n = g->n_nodes;
  d->ns = malloc ((size_t) n * sizeof *d->ns);
  d->crit = calloc (n, 1);
  d->crit_next = malloc ((size_t) n * sizeof *d->crit_next);
  d->stream = malloc ((size_t) n * sizeof *d->stream);
  d->unit = malloc ((size_t) n * sizeof *d->unit);
  d->box = malloc ((size_t) n * sizeof *d->box);
  if (!d->ns || !d->crit || !d->crit_next || !d->stream || !d->unit || !d->box)
    return PS_ENOMEM;
  for (uint32_t v = 0; v < n; v++) {
    d->ns[v] = d->o->node_ns ? d->o->node_ns[v] : (g->nodes[v].flags & PS_NODE_HAS_COST)
                                                      ? g->nodes[v].cost_ns
                                                      : ps_node_cost_default (g, v);
    d->crit_next[v] = PS_NONE;
    d->stream[v] = node_stream (d, v);
    uint32_t st = fused_step (d, v);
    d->unit[v] = st == PS_NONE ? v : d->p->step_nodes[d->p->steps[st].nodes_begin];
  }
  /* The critical path weighs each work node with the gap it costs its
   * stream too, so that work the cost model cannot time (imported kernels
   * without sizes) still counts. */
  double *w = malloc ((size_t) n * sizeof *w);
  if (!w)
    return PS_ENOMEM;
  for (uint32_t v = 0; v < n; v++) {
    ps_op op = (ps_op) g->nodes[v].op;
    bool work = op == PS_OP_KERNEL || op == PS_OP_MEMCPY || op == PS_OP_MEMSET
                || op == PS_OP_HOST || op == PS_OP_OPAQUE;
    w[v] = d->ns[v] + (work ? d->o->gap_ns : 0);
  }
  int ret = ps_analysis_run (&d->a, g, w);
  free (w);
  if (ret < 0)
    return ret;
  for (uint32_t i = 0; i < d->a.n_critical; i++) {
    uint32_t v = d->a.critical[i];
    d->crit[v] = 1;
    if (i + 1 < d->a.n_critical)
      d->crit_next[v] = d->a.critical[i + 1];
  }
  return 0;
}

/* One box per unit (node, or fused group).  Returns the count. */
static uint32_t
map_units (dag *d)
{
  uint32_t n = d->g->n_nodes, nb = 0;
  for (uint32_t v = 0; v < n; v++)
    d->box[v] = d->unit[v] == v ? nb++ : PS_NONE;
  for (uint32_t v = 0; v < n; v++)
    if (d->unit[v] != v)
      d->box[v] = d->box[d->unit[v]];
  return nb;
}

/* Merges straight chains of boxes on one stream: a box whose only
 * successor box has it as its only predecessor box joins that box.
 * Degrees are counted over distinct neighbour boxes (a stamp per box). */
static int
merge_chains (dag *d, uint32_t nb, uint32_t seg, uint32_t *out_boxes)
{
  const ps_graph *g = d->g;
  uint32_t n = g->n_nodes;
  uint32_t *succ = malloc ((size_t) nb * sizeof *succ);  /* the only successor, or NONE */
  uint32_t *npred = calloc (nb, sizeof *npred);
  uint32_t *nsucc = calloc (nb, sizeof *nsucc);
  uint32_t *stamp = malloc ((size_t) nb * sizeof *stamp);
  uint32_t *stamp2 = malloc ((size_t) nb * sizeof *stamp2);
  int32_t *bstream = malloc ((size_t) nb * sizeof *bstream);
  uint8_t *special = calloc (nb, 1);
  uint32_t *chain = malloc ((size_t) nb * sizeof *chain);
  int ret = 0;
  if (!succ || !npred || !nsucc || !stamp || !stamp2 || !bstream || !special || !chain) {
    ret = PS_ENOMEM;
    goto out;
  }
  for (uint32_t b = 0; b < nb; b++) {
    succ[b] = stamp[b] = stamp2[b] = PS_NONE;
    bstream[b] = -3;
  }
  for (uint32_t v = 0; v < n; v++) {
    uint32_t b = d->box[v];
    bstream[b] = bstream[b] == -3 || bstream[b] == d->stream[v] ? d->stream[v] : -2;
    ps_op op = (ps_op) g->nodes[v].op;
    if (op == PS_OP_BARRIER || op == PS_OP_CONDITIONAL)
      special[b] = 1;
  }
  /* Distinct successor boxes per box; distinct predecessor boxes per box. */
  for (uint32_t v = 0; v < n; v++) {
    uint32_t b = d->box[v];
    for (uint32_t i = g->succ_off[v]; i < g->succ_off[v + 1]; i++) {
      uint32_t c = d->box[g->succ[i]];
      if (c == b)
        continue;
      if (stamp[c] != b) {
        stamp[c] = b;
        if (nsucc[b]++ == 0)
          succ[b] = c;
      }
    }
    for (uint32_t i = g->pred_off[v]; i < g->pred_off[v + 1]; i++) {
      uint32_t c = d->box[g->pred[i]];
      if (c == b)
        continue;
      if (stamp2[c] != b) {
        stamp2[c] = b;
        npred[b]++;
      }
    }
  }
  /* Each box has at most one chain successor and one chain predecessor,
   * so chains are paths: number them from their heads. */
  uint8_t *has_pred = special; /* reused below: bit 1 = has a chain predecessor */
  for (uint32_t b = 0; b < nb; b++) {
    uint32_t c = succ[b];
    bool link = nsucc[b] == 1 && c != PS_NONE && npred[c] == 1 && bstream[b] == bstream[c]
                && bstream[b] >= -1 && !(special[b] & 1) && !(special[c] & 1);
    if (!link)
      succ[b] = PS_NONE;
  }
  for (uint32_t b = 0; b < nb; b++)
    if (succ[b] != PS_NONE)
      has_pred[succ[b]] |= 2;
  uint32_t nc = 0;
  for (uint32_t b = 0; b < nb; b++) {
    if (has_pred[b] & 2)
      continue;
    for (uint32_t c = b, k = 0; c != PS_NONE && k < nb; c = succ[c], k++) {
      if (k > 0 && k % seg == 0)
        nc++;
      chain[c] = nc;
    }
    nc++;
  }
  /* Boxes on a cycle of links cannot happen in a DAG; any box not reached
   * keeps a chain of its own. */
  for (uint32_t b = 0; b < nb; b++)
    if (has_pred[b] & 2 && chain[b] >= nc)
      chain[b] = nc++;
  for (uint32_t v = 0; v < n; v++)
    d->box[v] = chain[d->box[v]];
  *out_boxes = nc;

out:
  free (succ);
  free (npred);
  free (nsucc);
  free (stamp);
  free (stamp2);
  free (bstream);
  free (special);
  free (chain);
  return ret;
}

/* Overview: one box per (stream, band of levels), numbered densely. */
static int
map_overview (dag *d, uint32_t max_boxes, uint32_t *out_boxes)
{
  uint32_t n = d->g->n_nodes;
  int32_t max_stream = -1;
  for (uint32_t v = 0; v < n; v++)
    if (d->stream[v] > max_stream)
      max_stream = d->stream[v];
  uint32_t lanes = (uint32_t) (max_stream + 2); /* lane 0: no stream */
  uint32_t levels = d->a.n_levels ? d->a.n_levels : 1;
  uint32_t bands = max_boxes / lanes;
  if (bands > 60)
    bands = 60; /* rows of the overview grid */
  if (bands < 4)
    bands = 4;
  if (bands > levels)
    bands = levels;
  d->band = (levels + bands - 1) / bands;
  bands = (levels + d->band - 1) / d->band;
  uint64_t cells = (uint64_t) lanes * bands;
  uint32_t *id = malloc (cells * sizeof *id);
  if (!id)
    return PS_ENOMEM;
  for (uint64_t i = 0; i < cells; i++)
    id[i] = PS_NONE;
  uint32_t nb = 0;
  /* Number boxes band by band so that box ids follow the levels. */
  for (uint32_t v = 0; v < n; v++) {
    uint32_t lvl = d->a.level[v] < levels ? d->a.level[v] : levels - 1;
    uint64_t cell = (uint64_t) (lvl / d->band) * lanes + (uint32_t) (d->stream[v] + 1);
    if (id[cell] == PS_NONE)
      id[cell] = 0; /* mark used */
  }
  for (uint64_t c = 0; c < cells; c++)
    if (id[c] != PS_NONE)
      id[c] = nb++;
  for (uint32_t v = 0; v < n; v++) {
    uint32_t lvl = d->a.level[v] < levels ? d->a.level[v] : levels - 1;
    d->box[v] = id[(uint64_t) (lvl / d->band) * lanes + (uint32_t) (d->stream[v] + 1)];
  }
  free (id);
  *out_boxes = nb;
  return 0;
}

static const char *
node_detail (const ps_graph *g, uint32_t v, char *buf, size_t cap)
{
  const ps_node *nd = &g->nodes[v];
  char b[32], sym[160];
  switch ((ps_op) nd->op) {
  case PS_OP_KERNEL:
    return ps_short_symbol (ps_graph_str (g, g->kernels[nd->aux].function), buf, cap);
  case PS_OP_MEMCPY:
    snprintf (buf, cap, "%s %s", ps_copy_dir_name ((ps_copy_dir) nd->dir),
              ps_format_bytes ((double) nd->bytes, b, sizeof b));
    return buf;
  case PS_OP_MEMSET:
    snprintf (buf, cap, "memset %s", ps_format_bytes ((double) nd->bytes, b, sizeof b));
    return buf;
  case PS_OP_HOST:
    return nd->aux != PS_NONE ? ps_graph_str (g, nd->aux) : "host callback";
  case PS_OP_EVENT_RECORD:
  case PS_OP_EVENT_WAIT:
    snprintf (buf, cap, "%s %s", nd->op == PS_OP_EVENT_RECORD ? "record" : "wait",
              nd->aux < g->n_events ? ps_graph_str (g, g->event_names[nd->aux]) : "?");
    return buf;
  case PS_OP_CONDITIONAL:
    snprintf (buf, cap, "if %s",
              nd->aux < g->n_conds && g->conds[nd->aux].condition < g->n_buffers
                ? ps_buffer_name (g, g->conds[nd->aux].condition) : "?");
    return buf;
  case PS_OP_OPAQUE:
    snprintf (buf, cap, "%s", nd->aux != PS_NONE ? ps_graph_str (g, nd->aux) : "opaque");
    return buf;
  default:
    (void) sym;
    return ps_op_name ((ps_op) nd->op);
  }
}

/* Labels and tooltip of box b. */
static int
label_box (dag *d, ps_scene *s, uint32_t b, ps_scene_node *sn, mode m)
{
  const ps_graph *g = d->g;
  const ps__view_box *bx = &d->boxes[b];
  char buf[512], t1[32], t2[32], kinds[160];
  int ret;
  /* Durations the model cannot tell (0) are left out. */
  if (bx->ns > 0)
    ps_format_duration (bx->ns, t1, sizeof t1);
  else
    t1[0] = '\0';
  if (bx->stream >= 0)
    snprintf (t2, sizeof t2, "%sstream %d", t1[0] ? " \xc2\xb7 " : "", bx->stream);
  else
    t2[0] = '\0';
  if (bx->count == 1) {
    uint32_t v = bx->first;
    ret = ps_scene_str (s, ps_node_name (g, v), &sn->label);
    if (ret == 0)
      ret = ps_scene_str (s, node_detail (g, v, buf, sizeof buf), &sn->detail);
    if (ret == 0 && g->nodes[v].op == PS_OP_KERNEL && !t1[0]) {
      /* No duration (an imported kernel): its launch configuration. */
      const ps_kernel *k = &g->kernels[g->nodes[v].aux];
      char dims[2][48];
      const uint32_t *d3[2] = { k->grid, k->block };
      for (int q = 0; q < 2; q++)
        if (d3[q][1] == 1 && d3[q][2] == 1)
          snprintf (dims[q], sizeof dims[q], "%u", d3[q][0]);
        else
          snprintf (dims[q], sizeof dims[q], "(%u,%u,%u)", d3[q][0], d3[q][1], d3[q][2]);
      ret = ps_scene_strf (s, &sn->detail2, "<<<%s, %s, %u>>>%s%s", dims[0], dims[1], k->smem,
                           t2[0] ? " \xc2\xb7 " : "", t2);
    } else if (ret == 0) {
      ret = ps_scene_strf (s, &sn->detail2, "%s%s", t1, t2);
    }
    if (ret == 0 && g->nodes[v].op == PS_OP_KERNEL) {
      const ps_kernel *k = &g->kernels[g->nodes[v].aux];
      ret = ps_scene_strf (s, &sn->tooltip, "%s: %s <<<(%u,%u,%u), (%u,%u,%u), %u>>> %s%s",
                           ps_node_name (g, v), ps_graph_str (g, k->function), k->grid[0],
                           k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
                           k->smem, t1, t2);
    } else if (ret == 0) {
      ret = ps_scene_strf (s, &sn->tooltip, "%s: %s, %s%s", ps_node_name (g, v), buf, t1, t2);
    }
    sn->ref = v;
    return ret;
  }
  ps__view_box_kinds (bx, kinds, sizeof kinds);
  uint32_t st = fused_step (d, bx->first);
  bool fused = st != PS_NONE && d->unit[bx->last] == d->unit[bx->first] && m != MODE_OVERVIEW;
  if (m == MODE_OVERVIEW) {
    uint32_t l0 = d->a.level[bx->first] / d->band * d->band;
    if (bx->stream >= 0)
      ret = ps_scene_strf (s, &sn->label, "stream %d \xc2\xb7 levels %u\xe2\x80\x93%u",
                           bx->stream, l0, l0 + d->band - 1);
    else
      ret = ps_scene_strf (s, &sn->label, "levels %u\xe2\x80\x93%u", l0, l0 + d->band - 1);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->detail, "%u nodes%s%s", bx->count, t1[0] ? " \xc2\xb7 " : "",
                           t1);
    if (ret == 0 && bx->n_crit > 0)
      ret = bx->n_crit == 1
              ? ps_scene_strf (s, &sn->detail2, "critical: %s", ps_node_name (g, bx->crit_first))
              : ps_scene_strf (s, &sn->detail2, "critical: %s \xe2\x80\xa6 %s (%u)",
                               ps_node_name (g, bx->crit_first), ps_node_name (g, bx->crit_last),
                               bx->n_crit);
    else if (ret == 0)
      ret = ps_scene_str (s, kinds, &sn->detail2);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->tooltip, "%u nodes (%s), %s%s; first %s, last %s", bx->count,
                           kinds, t1, t2, ps_node_name (g, bx->first), ps_node_name (g, bx->last));
    return ret;
  }
  if (fused) {
    const char *fn = NULL;
    if (d->p->steps[st].function != PS_NONE)
      fn = d->p->strings + d->p->steps[st].function;
    ret = ps_scene_strf (s, &sn->label, "%s", fn ? fn : "fused group");
    size_t n = 0;
    buf[0] = '\0';
    const ps_step *sp = &d->p->steps[st];
    for (uint32_t i = 0; i < sp->nodes_count && n + 4 < sizeof buf; i++)
      n += (size_t) snprintf (buf + n, sizeof buf - n, "%s%s", i ? " + " : "",
                              ps_node_name (g, d->p->step_nodes[sp->nodes_begin + i]));
    if (ret == 0)
      ret = ps_scene_str (s, buf, &sn->detail);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->detail2, "fused, %u nodes \xc2\xb7 %s%s", bx->count, t1, t2);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->tooltip, "fused group %s: %s", fn ? fn : "", buf);
    sn->ref = st;
    return ret;
  }
  ret = ps_scene_strf (s, &sn->label, "%s \xe2\x80\xa6 %s", ps_node_name (g, bx->first),
                       ps_node_name (g, bx->last));
  if (ret == 0)
    ret = ps_scene_strf (s, &sn->detail, "chain of %u: %s", bx->count, kinds);
  if (ret == 0)
    ret = ps_scene_strf (s, &sn->detail2, "%s%s", t1, t2);
  if (ret == 0)
    ret = ps_scene_strf (s, &sn->tooltip, "chain of %u nodes from %s to %s (%s), %s", bx->count,
                         ps_node_name (g, bx->first), ps_node_name (g, bx->last), kinds, t1);
  return ret;
}

static void
free_dag (dag *d)
{
  ps_analysis_free (&d->a);
  free (d->ns);
  free (d->crit);
  free (d->crit_next);
  free (d->stream);
  free (d->unit);
  free (d->box);
  free (d->boxes);
}

/* Top to bottom, unless the graph is so much wider than deep (few levels
 * of many nodes) that left to right gives a picture closer to square. */
static int
choose_direction (dag *d, ps_scene *s)
{
  uint32_t levels = d->a.n_levels ? d->a.n_levels : 1;
  uint32_t *count = calloc (levels, sizeof *count);
  if (!count)
    return PS_ENOMEM;
  uint32_t widest = 1;
  double w = 0, h = 0;
  for (uint32_t b = 0; b < s->n_nodes; b++) {
    uint32_t l = d->a.level[d->boxes[b].first];
    if (l < levels && ++count[l] > widest)
      widest = count[l];
    w += s->nodes[b].w;
    h += s->nodes[b].h;
  }
  free (count);
  w = w / s->n_nodes;
  h = h / s->n_nodes;
  double tb_w = widest * (w + 18), tb_h = levels * (h + 25);
  double lr_w = levels * (w + 25), lr_h = widest * (h + 18);
  double tb = fmax (tb_w, tb_h) / fmin (tb_w, tb_h), lr = fmax (lr_w, lr_h) / fmin (lr_w, lr_h);
  s->left_to_right = lr * 1.5 < tb;
  return 0;
}

/* Places overview boxes on a grid: a column per stream, a row per band
 * of levels. */
static void
place_grid (dag *d, ps_scene *s)
{
  int32_t lane_of[PS_MAX_STREAMS + 1];
  for (int i = 0; i <= PS_MAX_STREAMS; i++)
    lane_of[i] = -1;
  double w = 0, h = 0;
  for (uint32_t b = 0; b < s->n_nodes; b++) {
    int32_t st = d->boxes[b].stream;
    int k = st >= 0 && st < PS_MAX_STREAMS ? st + 1 : 0;
    lane_of[k] = 0;
    w = fmax (w, s->nodes[b].w);
    h = fmax (h, s->nodes[b].h);
  }
  int32_t lanes = 0;
  for (int i = 0; i <= PS_MAX_STREAMS; i++)
    if (lane_of[i] == 0)
      lane_of[i] = lanes++;
  for (uint32_t b = 0; b < s->n_nodes; b++) {
    int32_t st = d->boxes[b].stream;
    int k = st >= 0 && st < PS_MAX_STREAMS ? st + 1 : 0;
    uint32_t row = d->a.level[d->boxes[b].first] / d->band;
    s->nodes[b].x = lane_of[k] * (w + 48) + w / 2;
    s->nodes[b].y = row * (h + 36) + h / 2;
  }
  s->pinned = true;
}

static int
build_scene (dag *d, ps_scene *s, mode m, uint32_t nb)
{
  const ps_graph *g = d->g;
  const ps_view_options *o = d->o;
  uint32_t n = g->n_nodes;
  ps__view_edge *edges = NULL;
  uint32_t *cluster_of_step = NULL;
  int ret = 0;

  /* Boxes. */
  d->boxes = malloc ((size_t) nb * sizeof *d->boxes);
  if (!d->boxes) {
    ret = PS_ENOMEM;
    goto out;
  }
  d->n_boxes = nb;
  for (uint32_t b = 0; b < nb; b++)
    ps__view_box_init (&d->boxes[b]);
  uint64_t streams = 0;
  uint32_t ops = 0;
  for (uint32_t v = 0; v < n; v++) {
    ps__view_box_add (&d->boxes[d->box[v]], v, (ps_op) g->nodes[v].op, d->stream[v], d->ns[v],
                      d->crit[v]);
    if (d->stream[v] >= 0 && d->stream[v] < 64)
      streams |= 1ull << d->stream[v];
  }
  double max_ns = 0;
  for (uint32_t b = 0; b < nb; b++)
    max_ns = fmax (max_ns, d->boxes[b].ns);

  /* Fused groups as clusters when every node has its own box. */
  if (m == MODE_FULL && d->p) {
    cluster_of_step = malloc ((size_t) d->p->n_steps * sizeof *cluster_of_step);
    if (!cluster_of_step) {
      ret = PS_ENOMEM;
      goto out;
    }
    for (uint32_t st = 0; st < d->p->n_steps; st++)
      cluster_of_step[st] = PS_NONE;
  }
  for (uint32_t b = 0; b < nb && ret == 0; b++) {
    uint32_t idx;
    ret = ps_scene_add_node (s, &idx);
    if (ret < 0)
      break;
    ps_scene_node *sn = &s->nodes[idx];
    ps__view_style_node (sn, &d->boxes[b], o->color, max_ns);
    ops |= 1u << (sn->shape == PS_SHAPE_STACK ? PS_OP__COUNT : sn->kind);
    if (m == MODE_OVERVIEW)
      sn->rank_group = (uint32_t) (d->boxes[b].stream + 1);
    ret = label_box (d, s, b, &s->nodes[idx], m);
    if (ret == 0 && cluster_of_step) {
      uint32_t st = fused_step (d, d->boxes[b].first);
      if (st != PS_NONE) {
        if (cluster_of_step[st] == PS_NONE) {
          uint32_t c;
          ret = ps_scene_add_cluster (s, &c);
          if (ret == 0) {
            const char *fn = d->p->steps[st].function != PS_NONE
                               ? d->p->strings + d->p->steps[st].function : "fused";
            ret = ps_scene_str (s, fn, &s->clusters[c].label);
            s->clusters[c].flags |= PS_SCENE_DASHED;
            s->clusters[c].fill = 0xfbfbf0;
            s->clusters[c].stroke = 0x8a8a5c;
            cluster_of_step[st] = c;
          }
        }
        s->nodes[idx].cluster = cluster_of_step[st];
      }
    }
  }
  if (ret < 0)
    goto out;

  /* Edges between boxes. */
  uint32_t ne = 0, cap = 0;
  uint32_t kinds = 0;
  for (uint32_t v = 0; v < n && ret == 0; v++)
    for (uint32_t i = g->succ_off[v]; i < g->succ_off[v + 1]; i++) {
      uint32_t w = g->succ[i];
      if (d->box[v] == d->box[w])
        continue;
      ret = PS_ARRAY_RESERVE (edges, cap, (uint64_t) ne + 1);
      if (ret < 0)
        break;
      bool cross = d->stream[v] >= 0 && d->stream[w] >= 0 && d->stream[v] != d->stream[w];
      uint8_t kind = cross ? PS_EDGE_VIEW_CROSS : PS_EDGE_VIEW_DEP;
      uint8_t flags = d->crit_next[v] == w ? PS_SCENE_CRITICAL : 0;
      edges[ne++] = (ps__view_edge){ d->box[v], d->box[w], kind, flags };
      kinds |= 1u << kind | (flags ? 1u << 7 : 0);
    }
  if (ret == 0)
    ret = ps__view_add_edges (s, edges, ne);
  if (ret < 0)
    goto out;
  if (m == MODE_OVERVIEW)
    for (uint32_t e = 0; e < s->n_edges; e++) {
      /* Many edges: widths tell the counts, and cross-stream ones recede. */
      ps_scene_edge *se = &s->edges[e];
      se->label = PS_NONE;
      if (se->kind == PS_EDGE_VIEW_CROSS && !(se->flags & PS_SCENE_CRITICAL)) {
        se->color = 0xf2c894;
        se->pen = fminf (se->pen, 1.8f);
      }
    }

  /* Titles and legend. */
  char t[32];
  ps_format_duration (d->a.length_ns, t, sizeof t);
  char title[512];
  int tk = snprintf (title, sizeof title, "%s \xe2\x80\x94 DAG: %u node%s, %u edge%s",
                     g->name && *g->name ? g->name : "graph", n, n == 1 ? "" : "s", g->n_edges,
                     g->n_edges == 1 ? "" : "s");
  if (d->p && tk > 0 && (size_t) tk < sizeof title)
    snprintf (title + tk, sizeof title - (size_t) tk, ", %u stream%s", d->p->streams_used,
              d->p->streams_used == 1 ? "" : "s");
  ret = ps_scene_str (s, title, &s->title);
  if (ret == 0) {
    char note[400];
    int k = snprintf (note, sizeof note, "critical path %s over %u nodes (red)", t,
                      d->a.n_critical);
    if (m == MODE_COLLAPSED)
      snprintf (note + k, sizeof note - (size_t) k,
                "; %u nodes shown as %u boxes: fused groups and straight chains collapsed", n, nb);
    else if (m == MODE_OVERVIEW)
      snprintf (note + k, sizeof note - (size_t) k,
                "; overview: %u nodes in %u boxes, one per stream and band of %u level%s", n, nb,
                d->band, d->band == 1 ? "" : "s");
    ret = ps_scene_str (s, note, &s->subtitle);
  }
  if (ret == 0)
    ret = ps__view_legend (s, o->color, streams, ops, kinds, max_ns);
  s->fast = nb > o->fast_boxes;
  if (ret == 0) {
    ps_scene_size_nodes (s);
    if (m == MODE_OVERVIEW)
      place_grid (d, s);
    else
      ret = choose_direction (d, s);
  }

out:
  free (edges);
  free (cluster_of_step);
  return ret;
}

/* Chooses the boxes for mode m; returns their count in *nb. */
static int
map_mode (dag *d, mode m, uint32_t *nb)
{
  uint32_t n = d->g->n_nodes;
  if (m == MODE_FULL) {
    for (uint32_t v = 0; v < n; v++)
      d->box[v] = v;
    *nb = n;
    return 0;
  }
  if (m == MODE_OVERVIEW)
    return map_overview (d, d->o->max_boxes / 4 > 64 ? d->o->max_boxes / 4 : 64, nb);
  /* A graph that is mostly one long chain would become a handful of
   * boxes: then chains are cut into segments of `seg` boxes, so that the
   * picture still shows where along them the time goes. */
  uint32_t units = map_units (d);
  int ret = merge_chains (d, units, UINT32_MAX, nb);
  if (ret == 0 && *nb < 40 && units > 40) {
    uint32_t seg = units / 200 > 4 ? (units + 199) / 200 : 4;
    units = map_units (d);
    ret = merge_chains (d, units, seg, nb);
  }
  return ret;
}

int
ps_dag_view_build (ps_scene *s, const ps_graph *g, const ps_plan *p, const ps_view_options *o)
{
  ps_view_options defaults;
  if (!o) {
    ps_view_options_init (&defaults);
    o = &defaults;
  }
  dag d;
  memset (&d, 0, sizeof d);
  d.g = g;
  d.p = p && p->graph == g ? p : NULL;
  d.o = o;
  int ret = g->n_nodes ? prepare (&d) : PS_EINVAL;
  if (ret < 0) {
    free_dag (&d);
    return ret;
  }
  /* Every node a box while they are few; else chains and fused groups
   * collapsed; else (too many boxes, or too many edges for Graphviz to
   * lay out quickly) the overview. */
  mode m = g->n_nodes > o->detail_boxes ? MODE_COLLAPSED : MODE_FULL;
  for (;;) {
    uint32_t nb = 0;
    ret = map_mode (&d, m, &nb);
    if (ret == 0 && m == MODE_COLLAPSED && nb > o->max_boxes) {
      m = MODE_OVERVIEW;
      continue;
    }
    if (ret == 0)
      ret = build_scene (&d, s, m, nb);
    if (ret < 0 || m == MODE_OVERVIEW || s->n_edges <= o->max_edges)
      break;
    ps_scene_free (s);
    ps_scene_init (s);
    free (d.boxes);
    d.boxes = NULL;
    m = m == MODE_FULL ? MODE_COLLAPSED : MODE_OVERVIEW;
  }
  free_dag (&d);
  return ret;
}
