/* ps-dag-view.c: the DAG view (see ps-dag-view.h).
 *
 * Building maps every graph node to a box in one of three modes, chosen
 * by size: every node its own box (fused groups framed as clusters); fused
 * groups and straight chains as single boxes; or an overview with one box
 * per stream and band of levels.  Edges are mapped to boxes, merged and
 * counted (ps-view.c).  What changes with a plan and its timeline (the
 * durations, streams, colours, the critical path and fused groups) is
 * written by ps_dag_view_annotate, so that a laid-out scene follows every
 * re-plan without a new layout. */
#include "ps-dag-view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-analysis.h"
#include "ps-array.h"
#include "ps-demangle.h"
#include "ps-format.h"
#include "ps-layout.h"
#include "ps-view-private.h"

typedef enum mode { MODE_FULL = 0, MODE_COLLAPSED, MODE_OVERVIEW } mode;

typedef struct dag {
  const ps_graph *g;
  const ps_plan *p;
  const ps_view_options *o;
  ps_style style;
  ps_analysis a;     /* levels */
  int32_t *stream;   /* per node: its plan stream, else the file's */
  uint32_t *unit;    /* per node: its unit (the fused group's first node, or itself) */
  uint32_t *box;     /* per node: its box */
  uint32_t n_boxes;
  uint32_t *first;   /* per box: its first node */
  int32_t *bstream;  /* per box: the stream of all its nodes, or -1 */
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
fused_step (const ps_plan *p, uint32_t v)
{
  if (!p || !p->node_step || p->node_step[v] >= p->n_steps)
    return PS_NONE;
  uint32_t st = p->node_step[v];
  return p->steps[st].nodes_count > 1 ? st : PS_NONE;
}

static int
prepare (dag *d)
{
  const ps_graph *g = d->g;
  uint32_t n = g->n_nodes;
  d->stream = malloc ((size_t) n * sizeof *d->stream);
  d->unit = malloc ((size_t) n * sizeof *d->unit);
  d->box = malloc ((size_t) n * sizeof *d->box);
  if (!d->stream || !d->unit || !d->box)
    return PS_ENOMEM;
  for (uint32_t v = 0; v < n; v++) {
    d->stream[v] = node_stream (d, v);
    uint32_t st = fused_step (d->p, v);
    d->unit[v] = st == PS_NONE ? v : d->p->step_nodes[d->p->steps[st].nodes_begin];
  }
  return ps_analysis_run (&d->a, g, NULL);
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
    /* Titled by its kernel already: the detail is its name (an id). */
    if (ps_node_titled_by_kernel (g, v))
      return ps_node_name (g, v);
    return ps_demangle (ps_graph_str (g, g->kernels[nd->aux].function), false, buf, cap);
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
    return ps_cond_text (g, v, buf, cap);
  case PS_OP_OPAQUE:
    snprintf (buf, cap, "%s", nd->aux != PS_NONE ? ps_graph_str (g, nd->aux) : "opaque");
    return buf;
  default:
    (void) sym;
    return ps_op_name ((ps_op) nd->op);
  }
}

/* The launch configuration of a kernel: "<<<(8,8,1), 256, 0>>>". */
static void
launch_text (const ps_kernel *k, char *buf, size_t cap)
{
  char dims[2][40];
  const uint32_t *d3[2] = { k->grid, k->block };
  for (int q = 0; q < 2; q++)
    if (d3[q][1] == 1 && d3[q][2] == 1)
      snprintf (dims[q], sizeof dims[q], "%u", d3[q][0]);
    else
      snprintf (dims[q], sizeof dims[q], "(%u,%u,%u)", d3[q][0], d3[q][1], d3[q][2]);
  snprintf (buf, cap, "<<<%s, %s, %u>>>", dims[0], dims[1], k->smem);
}

/* The lines of box b that do not change with the plan: its name and what
 * it is.  The third line, the time and stream, is the annotation's; here
 * it gets text as wide as it may become, so that the layout leaves room. */
static int
label_box (dag *d, ps_scene *s, const ps__view_box *bx, ps_scene_node *sn, mode m,
           bool in_branch)
{
  const ps_graph *g = d->g;
  char buf[512], kinds[160];
  int ret;
  const char *room = in_branch ? "not run (assume: else) \xc2\xb7 streams 10\xe2\x80\x93" "15"
                               : "999 \xc2\xb5s + 99 unknown \xc2\xb7 stream 10";
  if (bx->count == 1) {
    uint32_t v = bx->first;
    char title[PS_MAX_NAME];
    ret = ps_scene_str (s, ps_node_title (g, v, title, sizeof title), &sn->label);
    if (ret == 0)
      ret = ps_scene_str (s, node_detail (g, v, buf, sizeof buf), &sn->detail);
    if (ret == 0)
      ret = ps_scene_str (s, in_branch ? "not run (assume: else) \xc2\xb7 stream 10"
                                       : "unknown \xc2\xb7 stream 10", &sn->detail2);
    sn->ref = v;
    return ret;
  }
  ps__view_box_kinds (bx, kinds, sizeof kinds);
  uint32_t st = fused_step (d->p, bx->first);
  bool fused = st != PS_NONE && d->unit[bx->last] == d->unit[bx->first] && m != MODE_OVERVIEW;
  if (m == MODE_OVERVIEW) {
    uint32_t l0 = d->a.level[bx->first] / d->band * d->band;
    if (d->p && bx->stream >= 0)
      ret = ps_scene_strf (s, &sn->label, "stream %d \xc2\xb7 levels %u\xe2\x80\x93%u",
                           bx->stream, l0, l0 + d->band - 1);
    else
      ret = ps_scene_strf (s, &sn->label, "levels %u\xe2\x80\x93%u", l0, l0 + d->band - 1);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->detail, "%u nodes: %s", bx->count, kinds);
    if (ret == 0)
      ret = ps_scene_str (s, room, &sn->detail2);
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
      ret = ps_scene_str (s, room, &sn->detail2);
    sn->ref = st;
    return ret;
  }
  ret = ps_scene_strf (s, &sn->label, "%s \xe2\x80\xa6 %s", ps_node_name (g, bx->first),
                       ps_node_name (g, bx->last));
  if (ret == 0)
    ret = ps_scene_strf (s, &sn->detail, "chain of %u: %s", bx->count, kinds);
  if (ret == 0)
    ret = ps_scene_str (s, room, &sn->detail2);
  return ret;
}

static void
free_dag (dag *d)
{
  ps_analysis_free (&d->a);
  free (d->stream);
  free (d->unit);
  free (d->box);
  free (d->first);
  free (d->bstream);
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
    uint32_t l = d->a.level[d->first[b]];
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
    int32_t st = d->bstream[b];
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
    int32_t st = d->bstream[b];
    int k = st >= 0 && st < PS_MAX_STREAMS ? st + 1 : 0;
    uint32_t row = d->a.level[d->first[b]] / d->band;
    s->nodes[b].x = lane_of[k] * (w + 48) + w / 2;
    s->nodes[b].y = row * (h + 36) + h / 2;
  }
  s->pinned = true;
}

typedef struct span_key {
  uint32_t span, edge;
} span_key;

static int
cmp_span_desc (const void *a, const void *b)
{
  const span_key *x = a, *y = b;
  if (x->span != y->span)
    return x->span > y->span ? -1 : 1;
  return x->edge < y->edge ? -1 : x->edge > y->edge;
}

/* Graphviz's dot gives an edge one virtual node per rank it crosses and
 * lays them all out: a few hundred edges across a hundred ranks each (a
 * barrier or a conditional early in a long chain) make a 300-node graph
 * take minutes.  The longest edges are laid out apart (drawn straight)
 * until the virtual nodes are a few per box. */
static int
detach_long_edges (dag *d, ps_scene *s, uint32_t nb)
{
  uint32_t *level = malloc (((size_t) nb + 1) * sizeof *level);
  span_key *k = malloc (((size_t) s->n_edges + 1) * sizeof *k);
  if (!level || !k) {
    free (level);
    free (k);
    return PS_ENOMEM;
  }
  for (uint32_t b = 0; b < nb; b++)
    level[b] = UINT32_MAX;
  for (uint32_t v = 0; v < d->g->n_nodes; v++)
    if (d->a.level[v] < level[d->box[v]])
      level[d->box[v]] = d->a.level[v];
  uint64_t virt = 0;
  for (uint32_t e = 0; e < s->n_edges; e++) {
    uint32_t a = level[s->edges[e].from], b = level[s->edges[e].to];
    k[e] = (span_key){ b > a ? b - a : a - b, e };
    virt += k[e].span > 1 ? k[e].span - 1 : 0;
  }
  uint64_t budget = 4 * (uint64_t) nb + 400;
  if (virt > budget) {
    ps_array_sort (k, s->n_edges, sizeof *k, cmp_span_desc);
    for (uint32_t i = 0; i < s->n_edges && virt > budget && k[i].span > 2; i++) {
      s->edges[k[i].edge].flags |= PS_SCENE_DETACHED;
      virt -= k[i].span - 1;
    }
  }
  free (level);
  free (k);
  return 0;
}

/* The membership arrays of the scene: box per graph node, nodes per box. */
static int
store_members (dag *d, ps_scene *s)
{
  uint32_t n = d->g->n_nodes, nb = d->n_boxes;
  s->n_graph_nodes = n;
  s->node_box = malloc (((size_t) n + 1) * sizeof *s->node_box);
  s->box_off = calloc ((size_t) nb + 2, sizeof *s->box_off);
  s->box_nodes = malloc (((size_t) n + 1) * sizeof *s->box_nodes);
  if (!s->node_box || !s->box_off || !s->box_nodes)
    return PS_ENOMEM;
  for (uint32_t v = 0; v < n; v++) {
    s->node_box[v] = d->box[v];
    s->box_off[d->box[v] + 2]++;
  }
  for (uint32_t b = 0; b < nb; b++)
    s->box_off[b + 2] += s->box_off[b + 1];
  for (uint32_t v = 0; v < n; v++)
    s->box_nodes[s->box_off[d->box[v] + 1]++] = v;
  return 0;
}

static int
build_scene (dag *d, ps_scene *s, mode m, uint32_t nb)
{
  const ps_graph *g = d->g;
  const ps_view_options *o = d->o;
  uint32_t n = g->n_nodes;
  ps__view_edge *edges = NULL;
  uint32_t *cluster_of_step = NULL;
  ps__view_box *boxes = NULL;
  uint8_t *in_branch = NULL;
  int ret = 0;

  /* Boxes: what they stand for, without durations. */
  boxes = malloc ((size_t) nb * sizeof *boxes);
  d->first = malloc ((size_t) nb * sizeof *d->first);
  d->bstream = malloc ((size_t) nb * sizeof *d->bstream);
  if (!boxes || !d->first || !d->bstream) {
    ret = PS_ENOMEM;
    goto out;
  }
  d->n_boxes = nb;
  for (uint32_t b = 0; b < nb; b++)
    ps__view_box_init (&boxes[b]);
  for (uint32_t v = 0; v < n; v++)
    ps__view_box_add (&boxes[d->box[v]], v, (ps_op) g->nodes[v].op, d->stream[v], PS_FIGURE_NONE,
                      NAN, false);
  in_branch = calloc ((size_t) nb + 1, 1);
  if (!in_branch) {
    ret = PS_ENOMEM;
    goto out;
  }
  for (uint32_t v = 0; v < n; v++)
    in_branch[d->box[v]] |= g->nodes[v].cond != PS_NONE;
  for (uint32_t b = 0; b < nb; b++) {
    d->first[b] = boxes[b].first;
    d->bstream[b] = boxes[b].stream >= 0 ? boxes[b].stream : -1;
  }

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
    ps__view_style_node (sn, &boxes[b], &d->style, d->style.pal->background);
    if (m == MODE_OVERVIEW)
      sn->rank_group = (uint32_t) (boxes[b].stream + 1);
    ret = label_box (d, s, &boxes[b], sn, m, in_branch[b]);
    if (ret == 0 && cluster_of_step) {
      uint32_t st = fused_step (d->p, boxes[b].first);
      if (st != PS_NONE) {
        if (cluster_of_step[st] == PS_NONE) {
          uint32_t c;
          ret = ps_scene_add_cluster (s, &c);
          if (ret == 0) {
            const char *fn = d->p->steps[st].function != PS_NONE
                               ? d->p->strings + d->p->steps[st].function : "fused";
            ret = ps_scene_str (s, fn, &s->clusters[c].label);
            s->clusters[c].flags |= PS_SCENE_DASHED;
            cluster_of_step[st] = c;
          }
        }
        s->nodes[idx].cluster = cluster_of_step[st];
      }
    }
  }
  if (ret < 0)
    goto out;

  /* Edges between boxes; their kinds and the critical path are the
   * annotation's. */
  uint32_t ne = 0, cap = 0;
  for (uint32_t v = 0; v < n && ret == 0; v++)
    for (uint32_t i = g->succ_off[v]; i < g->succ_off[v + 1]; i++) {
      uint32_t w = g->succ[i];
      if (d->box[v] == d->box[w])
        continue;
      ret = PS_ARRAY_RESERVE (edges, cap, (uint64_t) ne + 1);
      if (ret < 0)
        break;
      edges[ne++] = (ps__view_edge){ d->box[v], d->box[w], PS_EDGE_VIEW_DEP, 0 };
    }
  if (ret == 0)
    ret = ps__view_add_edges (s, edges, ne, &d->style);
  if (ret < 0)
    goto out;
  if (m == MODE_OVERVIEW)
    for (uint32_t e = 0; e < s->n_edges; e++)
      s->edges[e].label = PS_NONE; /* many edges: widths tell the counts */
  else
    ret = detach_long_edges (d, s, nb);
  if (ret < 0)
    goto out;
  s->fast = nb > o->fast_boxes;
  ret = store_members (d, s);
  if (ret == 0) {
    ps_scene_size_nodes (s);
    if (m == MODE_OVERVIEW)
      place_grid (d, s);
    else
      ret = choose_direction (d, s);
  }
  /* What the annotation writes comes after this. */
  s->strings_mark = s->strings_len;
  s->clusters_mark = s->n_clusters;
  s->edges_mark = s->n_edges;
  s->dag_mode = (uint8_t) m;
  s->dag_band = d->band;

out:
  free (edges);
  free (cluster_of_step);
  free (boxes);
  free (in_branch);
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
  ps_view_options_style (o, &d.style);
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
    free (d.first);
    free (d.bstream);
    d.first = NULL;
    d.bstream = NULL;
    m = m == MODE_FULL ? MODE_COLLAPSED : MODE_OVERVIEW;
  }
  s->dag_planned = d.p != NULL;
  free_dag (&d);
  if (ret == 0)
    ret = ps_dag_view_annotate (s, g, p, o);
  return ret;
}

/* ---- annotation ------------------------------------------------------------- */

/* The scene edge from box a to box b (edges are in (from, to) order), or
 * PS_NONE. */
static uint32_t
find_edge (const ps_scene *s, uint32_t a, uint32_t b)
{
  uint32_t lo = 0, hi = s->edges_mark;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const ps_scene_edge *e = &s->edges[mid];
    if (e->from < a || (e->from == a && e->to < b))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < s->edges_mark && s->edges[lo].from == a && s->edges[lo].to == b ? lo : PS_NONE;
}

/* The fill of a box of several nodes. */
static uint32_t
box_fill (const ps_style *st, const ps__view_box *bx, const ps_plan *p, double max_ns)
{
  switch (st->color) {
  case PS_COLOR_BY_STREAM:
    return ps_style_stream_color (st, bx->stream >= 0 ? bx->stream : -1);
  case PS_COLOR_BY_GROUP: {
    uint32_t a = fused_step (p, bx->first), b = fused_step (p, bx->last);
    return a != PS_NONE && a == b ? ps_style_group_color (st, p->steps[a].group) : st->pal->unknown;
  }
  case PS_COLOR_BY_DURATION:
    return bx->n_timed ? ps_style_duration_color (st, bx->ns, max_ns) : st->pal->unknown;
  default: {
    ps_op k = ps__view_box_kind (bx);
    return k < PS_OP__COUNT ? ps_style_kind_color (st, k) : st->pal->surface;
  }
  }
}

/* The third line and the tooltip of box b. */
static int
annotate_text (ps_scene *s, const ps_graph *g, const ps_figures *f, const ps__view_box *bx,
               ps_scene_node *sn)
{
  char t[160], str[48], buf[640];
  ps__view_box_streams (bx, str, sizeof str);
  int ret;
  if (bx->count == 1) {
    uint32_t v = bx->first;
    ps_figures_node_text (f, g, v, t, sizeof t);
    ret = ps_scene_strf (s, &sn->detail2, "%s%s%s", t, t[0] && str[0] ? " \xc2\xb7 " : "", str);
    const char *what = sn->detail != PS_NONE ? s->strings + sn->detail : "";
    int k = snprintf (buf, sizeof buf, "%s: %s", ps_node_name (g, v), what);
    if (g->nodes[v].op == PS_OP_KERNEL && g->nodes[v].aux < g->n_kernels && k > 0
        && (size_t) k < sizeof buf) {
      char launch[128];
      launch_text (&g->kernels[g->nodes[v].aux], launch, sizeof launch);
      k += snprintf (buf + k, sizeof buf - (size_t) k, " %s", launch);
    }
    if (k > 0 && (size_t) k < sizeof buf && t[0])
      k += snprintf (buf + k, sizeof buf - (size_t) k, "; %s %s",
                     ps_figure_source_name ((ps_figure_source) f->node_source[v]), t);
    if (k > 0 && (size_t) k < sizeof buf && str[0])
      k += snprintf (buf + k, sizeof buf - (size_t) k, "; %s", str);
    if (k > 0 && (size_t) k < sizeof buf && bx->n_crit)
      snprintf (buf + k, sizeof buf - (size_t) k, "; on the critical path");
  } else {
    ps__view_box_time (bx, t, sizeof t);
    ret = ps_scene_strf (s, &sn->detail2, "%s%s%s", t, t[0] && str[0] ? " \xc2\xb7 " : "", str);
    char kinds[160];
    ps__view_box_kinds (bx, kinds, sizeof kinds);
    int k = snprintf (buf, sizeof buf, "%u nodes (%s) from %s to %s", bx->count, kinds,
                      ps_node_name (g, bx->first), ps_node_name (g, bx->last));
    if (k > 0 && (size_t) k < sizeof buf && t[0])
      k += snprintf (buf + k, sizeof buf - (size_t) k, "; %s", t);
    if (k > 0 && (size_t) k < sizeof buf && str[0])
      k += snprintf (buf + k, sizeof buf - (size_t) k, "; %s", str);
    if (k > 0 && (size_t) k < sizeof buf && bx->n_crit == 1)
      snprintf (buf + k, sizeof buf - (size_t) k, "; critical: %s",
                ps_node_name (g, bx->crit_first));
    else if (k > 0 && (size_t) k < sizeof buf && bx->n_crit > 1)
      snprintf (buf + k, sizeof buf - (size_t) k, "; critical: %s \xe2\x80\xa6 %s (%u nodes)",
                ps_node_name (g, bx->crit_first), ps_node_name (g, bx->crit_last), bx->n_crit);
  }
  if (ret == 0)
    ret = ps_scene_str (s, buf, &sn->tooltip);
  return ret;
}

/* Frames around the boxes of each fused group of p, for a scene laid out
 * without the plan. */
static int
frame_groups (ps_scene *s, const ps_plan *p, const ps_style *st)
{
  int ret = 0;
  for (uint32_t i = 0; i < p->n_steps && ret == 0; i++) {
    const ps_step *sp = &p->steps[i];
    if (sp->nodes_count < 2)
      continue;
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    uint32_t boxes = 0, last = PS_NONE;
    for (uint32_t k = 0; k < sp->nodes_count; k++) {
      uint32_t v = p->step_nodes[sp->nodes_begin + k];
      uint32_t b = v < s->n_graph_nodes ? s->node_box[v] : PS_NONE;
      if (b == PS_NONE || b == last)
        continue;
      const ps_scene_node *n = &s->nodes[b];
      x0 = fmin (x0, n->x - n->w / 2);
      x1 = fmax (x1, n->x + n->w / 2);
      y0 = fmin (y0, n->y - n->h / 2);
      y1 = fmax (y1, n->y + n->h / 2);
      boxes += last == PS_NONE || b != last;
      last = b;
    }
    if (boxes < 2)
      continue;
    uint32_t c;
    ret = ps_scene_add_cluster (s, &c);
    if (ret < 0)
      break;
    ps_scene_cluster *cl = &s->clusters[c];
    cl->x0 = x0 - 8;
    cl->y0 = y0 - 18;
    cl->x1 = x1 + 8;
    cl->y1 = y1 + 8;
    cl->label_pos = (ps_pt){ cl->x0 + 5, cl->y0 + 2 };
    cl->flags |= PS_SCENE_DASHED;
    ret = ps_scene_str (s, sp->function != PS_NONE ? p->strings + sp->function : "fused group",
                        &cl->label);
  }
  (void) st;
  return ret;
}

int
ps_dag_view_annotate (ps_scene *s, const ps_graph *g, const ps_plan *p, const ps_view_options *o)
{
  ps_view_options defaults;
  if (!o) {
    ps_view_options_init (&defaults);
    o = &defaults;
  }
  if (!s->node_box || s->n_graph_nodes != g->n_nodes)
    return PS_EINVAL;
  if (p && (p->graph->n_nodes != g->n_nodes || !p->node_step))
    p = NULL;
  const ps_figures *f = o->figures && o->figures->n_nodes == g->n_nodes ? o->figures : NULL;
  ps_style st;
  ps_view_options_style (o, &st);
  uint32_t n = g->n_nodes, nb = s->n_nodes;
  s->strings_len = s->strings_mark;
  s->n_clusters = s->clusters_mark;
  s->n_edges = s->edges_mark;
  if (s->laid_out)
    s->n_pts = s->pts_mark;
  s->n_legend = 0;
  s->title = s->subtitle = PS_NONE;
  s->theme = (uint8_t) st.theme;

  ps__view_box *boxes = malloc (((size_t) nb + 1) * sizeof *boxes);
  int32_t *stream = malloc (((size_t) n + 1) * sizeof *stream);
  uint32_t *crit_next = malloc (((size_t) n + 1) * sizeof *crit_next);
  uint8_t *cross = calloc ((size_t) s->edges_mark + 1, 1);
  int ret = boxes && stream && crit_next && cross ? 0 : PS_ENOMEM;
  if (ret < 0)
    goto out;
  for (uint32_t b = 0; b < nb; b++)
    ps__view_box_init (&boxes[b]);
  for (uint32_t v = 0; v < n; v++) {
    crit_next[v] = PS_NONE;
    stream[v] = f                                      ? f->node_stream[v]
                : p && p->node_step[v] < p->n_steps ? p->steps[p->node_step[v]].stream
                                                       : g->nodes[v].stream;
  }
  if (f)
    for (uint32_t i = 0; i + 1 < f->n_critical; i++)
      if (f->critical[i] < n)
        crit_next[f->critical[i]] = f->critical[i + 1];

  /* Boxes: a fused group's span counts once in a box of several nodes. */
  uint64_t streams = 0;
  bool unknown = false, not_run = false;
  for (uint32_t v = 0; v < n; v++) {
    uint32_t b = s->node_box[v];
    if (b >= nb)
      continue;
    uint8_t src = f ? f->node_source[v] : PS_FIGURE_NONE;
    double ns = f ? f->node_ns[v] : NAN;
    if (f && f->node_span[v] != PS_NONE && s->box_off[b + 1] - s->box_off[b] > 1) {
      const ps_span *sp = &f->tl->spans[f->node_span[v]];
      if (f->tl->span_nodes[sp->nodes_begin] != v)
        ns = 0;
    }
    ps__view_box_add (&boxes[b], v, (ps_op) g->nodes[v].op, stream[v], src, ns,
                      f && f->node_critical[v]);
    if (stream[v] >= 0 && stream[v] < 64)
      streams |= 1ull << stream[v];
    unknown |= src == PS_FIGURE_UNKNOWN;
    not_run |= src == PS_FIGURE_NOT_RUN;
  }
  double max_ns = 0;
  for (uint32_t b = 0; b < nb; b++)
    max_ns = fmax (max_ns, boxes[b].count == 1 && f ? f->max_node_ns : boxes[b].ns);
  uint32_t ops = 0;
  for (uint32_t b = 0; b < nb && ret == 0; b++) {
    ps_scene_node *sn = &s->nodes[b];
    const ps__view_box *bx = &boxes[b];
    uint32_t fill = bx->count == 1 ? ps_style_node_fill (&st, g, p, f, bx->first)
                                   : box_fill (&st, bx, p, max_ns);
    uint8_t shape = sn->shape;
    ps__view_style_node (sn, bx, &st, fill);
    sn->shape = shape; /* the layout's */
    ops |= 1u << (sn->shape == PS_SHAPE_STACK ? PS_OP__COUNT : sn->kind);
    ret = annotate_text (s, g, f, bx, sn);
  }

  /* Edges: across streams when any of theirs is, critical when they link
   * two nodes in a row of the critical path. */
  uint32_t kinds = 0;
  uint8_t *crit_edge = cross; /* bit 1: cross, bit 2: critical */
  for (uint32_t v = 0; v < n && ret == 0; v++) {
    uint32_t a = s->node_box[v];
    for (uint32_t i = g->succ_off[v]; i < g->succ_off[v + 1]; i++) {
      uint32_t w = g->succ[i], b = s->node_box[w];
      if (a == b || a >= nb || b >= nb)
        continue;
      uint32_t e = find_edge (s, a, b);
      if (e == PS_NONE)
        continue;
      if (stream[v] >= 0 && stream[w] >= 0 && stream[v] != stream[w])
        crit_edge[e] |= 1;
      if (crit_next[v] == w)
        crit_edge[e] |= 2;
    }
  }
  for (uint32_t e = 0; e < s->edges_mark; e++) {
    ps_scene_edge *se = &s->edges[e];
    uint8_t kind = crit_edge[e] & 1 ? PS_EDGE_VIEW_CROSS : PS_EDGE_VIEW_DEP;
    ps__view_style_edge (se, kind, crit_edge[e] & 2 ? PS_SCENE_CRITICAL : 0, &st);
    if (s->dag_mode == MODE_OVERVIEW && kind == PS_EDGE_VIEW_CROSS
        && !(se->flags & PS_SCENE_CRITICAL)) {
      /* Many edges: cross-stream ones recede. */
      se->color = ps_color_mix (se->color, st.pal->background, 0.5);
      se->pen = fminf (se->pen, 1.8f);
    }
    kinds |= 1u << kind | (se->flags & PS_SCENE_CRITICAL ? 1u << 7 : 0);
  }

  /* Links of the critical path that are no edge of the graph (stream or
   * event order): dotted, laid out apart. */
  bool order_links = false;
  for (uint32_t i = 0; f && st.show_critical && i + 1 < f->n_critical && ret == 0; i++) {
    uint32_t a = s->node_box[f->critical[i]], b = s->node_box[f->critical[i + 1]];
    if (a == b || a >= nb || b >= nb || find_edge (s, a, b) != PS_NONE)
      continue;
    if (s->n_edges > s->edges_mark && s->edges[s->n_edges - 1].from == a
        && s->edges[s->n_edges - 1].to == b)
      continue;
    uint32_t e;
    ret = ps_scene_add_edge (s, a, b, &e);
    if (ret < 0)
      break;
    ps_scene_edge *se = &s->edges[e];
    se->kind = PS_EDGE_VIEW_ORDER;
    se->flags = PS_SCENE_DETACHED | PS_SCENE_CRITICAL | PS_SCENE_DOTTED;
    se->color = st.pal->critical;
    se->pen = 2;
    order_links = true;
    if (s->laid_out)
      ret = ps_layout_route_straight (s, e);
  }

  /* Fused groups: the layout's clusters, or frames around their boxes. */
  if (ret == 0 && p && !s->dag_planned && s->laid_out && s->dag_mode == MODE_FULL)
    ret = frame_groups (s, p, &st);
  for (uint32_t c = 0; c < s->n_clusters; c++) {
    s->clusters[c].fill = st.pal->cluster_fill;
    s->clusters[c].stroke = st.pal->cluster_stroke;
  }

  /* Titles and legend. */
  if (ret == 0) {
    char title[512];
    int tk = snprintf (title, sizeof title, "%s \xe2\x80\x94 DAG: %u node%s, %u edge%s",
                       g->name && *g->name ? g->name : "graph", n, n == 1 ? "" : "s",
                       g->n_edges, g->n_edges == 1 ? "" : "s");
    if (p && tk > 0 && (size_t) tk < sizeof title)
      snprintf (title + tk, sizeof title - (size_t) tk, ", %u stream%s", p->streams_used,
                p->streams_used == 1 ? "" : "s");
    ret = ps_scene_str (s, title, &s->title);
  }
  if (ret == 0) {
    char note[600], crit[200];
    int k = 0;
    if (f && f->n_critical && st.show_critical)
      k = snprintf (note, sizeof note, "critical path (red): %s",
                    ps_figures_critical_text (f, crit, sizeof crit));
    else
      note[0] = '\0';
    if (k < 0)
      k = 0;
    const char *sep = k ? "; " : "";
    if (s->dag_mode == MODE_COLLAPSED)
      snprintf (note + k, sizeof note - (size_t) k,
                "%s%u nodes shown as %u boxes: fused groups and straight chains collapsed", sep,
                n, nb);
    else if (s->dag_mode == MODE_OVERVIEW)
      snprintf (note + k, sizeof note - (size_t) k,
                "%soverview: %u nodes in %u boxes, one per stream and band of %u level%s", sep,
                n, nb, s->dag_band, s->dag_band == 1 ? "" : "s");
    uint32_t detached = 0;
    for (uint32_t e = 0; e < s->edges_mark; e++)
      detached += (s->edges[e].flags & PS_SCENE_DETACHED) != 0;
    size_t len = strlen (note);
    if (detached && len < sizeof note)
      snprintf (note + len, sizeof note - len, "%s%u long edge%s drawn straight", len ? "; " : "",
                detached, detached == 1 ? "" : "s");
    if (note[0])
      ret = ps_scene_str (s, note, &s->subtitle);
  }
  if (ret == 0)
    ret = ps__view_legend (s, &st, streams, ops, kinds, max_ns, unknown, not_run);
  if (ret == 0 && order_links)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE,
                               "critical path through stream, event or resource order (no dependency)", 0,
                               st.pal->critical, PS_SCENE_DOTTED);

out:
  free (boxes);
  free (stream);
  free (crit_next);
  free (cross);
  return ret;
}
