/* ps-plan-view.c: the plan view (see ps-dag-view.h): steps clustered per
 * stream in issue order, stream order as grey edges, and an edge from
 * every event record to the waits that refer to it.
 *
 * Large plans: runs of steps between events on a stream become one box
 * (events stay visible, as they are the synchronisation); when even that is
 * too many, each stream is cut into a few dozen chunks of consecutive
 * steps, and the events between chunks are counted on the edges. */
#include "ps-plan-view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-demangle.h"
#include "ps-format.h"
#include "ps-view-private.h"

typedef enum mode { MODE_FULL = 0, MODE_COLLAPSED, MODE_OVERVIEW } mode;

static bool
is_event (const ps_step *st)
{
  return st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT;
}

/* Per step, from the figures of its timeline: the figure source and
 * duration of its span (through its first node), and whether it is on the
 * critical path. */
static void
step_facts (const ps_plan *p, const ps_figures *f, uint8_t *crit, uint8_t *src, double *ns)
{
  for (uint32_t s = 0; s < p->n_steps; s++) {
    const ps_step *st = &p->steps[s];
    crit[s] = 0;
    src[s] = PS_FIGURE_NONE;
    ns[s] = NAN;
    if (!f || st->nodes_count == 0)
      continue;
    uint32_t v = p->step_nodes[st->nodes_begin];
    if (v >= f->n_nodes)
      continue;
    src[s] = f->node_source[v];
    ns[s] = f->node_ns[v];
    for (uint32_t i = 0; i < st->nodes_count; i++)
      crit[s] |= f->node_critical[p->step_nodes[st->nodes_begin + i]];
  }
}

/* Assigns boxes; returns their count. */
static uint32_t
map_boxes (const ps_plan *p, mode m, uint32_t max_boxes, uint32_t *box, uint32_t *chunk)
{
  uint32_t ns = p->streams_used ? p->streams_used : 1;
  uint32_t *last_box = malloc ((size_t) ns * sizeof *last_box);
  uint32_t *len = calloc (ns, sizeof *len);
  uint32_t *pos = calloc (ns, sizeof *pos);
  uint8_t *run_open = calloc (ns, 1);
  if (!last_box || !len || !pos || !run_open) {
    free (last_box);
    free (len);
    free (pos);
    free (run_open);
    return PS_NONE;
  }
  for (uint32_t s = 0; s < p->n_steps; s++)
    len[p->steps[s].stream < ns ? p->steps[s].stream : 0]++;
  uint32_t per_stream = max_boxes / ns > 8 ? max_boxes / ns : 8;
  if (per_stream > 24)
    per_stream = 24; /* columns of the overview */
  *chunk = 1;
  for (uint32_t k = 0; k < ns; k++) {
    uint32_t c = (len[k] + per_stream - 1) / per_stream;
    if (c > *chunk)
      *chunk = c;
  }
  uint32_t run = p->n_steps / 40 > 16 ? (p->n_steps + 39) / 40 : 16;
  uint32_t nb = 0;
  for (uint32_t s = 0; s < p->n_steps; s++) {
    const ps_step *st = &p->steps[s];
    uint32_t k = st->stream < ns ? st->stream : 0;
    if (m == MODE_FULL) {
      box[s] = nb++;
    } else if (m == MODE_COLLAPSED) {
      if (is_event (st)) {
        box[s] = nb++;
        run_open[k] = 0;
      } else {
        /* Runs are cut every `run` steps, so that a plan without events
         * is not one box. */
        if (!run_open[k] || pos[k] % run == 0) {
          last_box[k] = nb++;
          run_open[k] = 1;
          pos[k] = 0;
        }
        pos[k]++;
        box[s] = last_box[k];
      }
    } else {
      if (pos[k] % *chunk == 0)
        last_box[k] = nb++;
      box[s] = last_box[k];
      pos[k]++;
    }
  }
  free (last_box);
  free (len);
  free (pos);
  free (run_open);
  return nb;
}

/* Above this many boxes the plan view is laid out in lanes by
 * planscope itself: Graphviz takes seconds on hundreds of boxes in
 * clusters. */
#define LANES_ABOVE 200
#define PLAN_BOXES 240

/* One lane per stream cluster; columns by the longest path of stream
 * order and event edges that go forward in box order (boxes are numbered
 * in issue order of their first step, so that is nearly all of them).
 * The overview (first != NULL) places boxes by issue order instead: a box
 * whose first step is step i sits at i / chunk columns; chunk consecutive
 * steps of one stream span at least chunk steps of the plan, so boxes of
 * one lane stay a column apart. */
static int
place_lanes (ps_scene *s, const ps__view_box *first, uint32_t chunk)
{
  uint32_t n = s->n_nodes, nc = s->n_clusters ? s->n_clusters : 1;
  uint32_t *rank = calloc (n, sizeof *rank);
  uint32_t *off = calloc ((size_t) n + 2, sizeof *off);
  uint32_t *in = malloc (((size_t) s->n_edges + 1) * sizeof *in);
  double *lane_h = calloc (nc, sizeof *lane_h);
  double *lane_y = calloc (nc, sizeof *lane_y);
  double *col_w = NULL, *col_x = NULL;
  int ret = rank && off && in && lane_h && lane_y ? 0 : PS_ENOMEM;
  uint32_t ranks = 0;
  if (ret == 0) {
    for (uint32_t e = 0; e < s->n_edges; e++)
      if (s->edges[e].from < s->edges[e].to)
        off[s->edges[e].to + 2]++;
    for (uint32_t v = 0; v < n; v++)
      off[v + 2] += off[v + 1];
    for (uint32_t e = 0; e < s->n_edges; e++)
      if (s->edges[e].from < s->edges[e].to)
        in[off[s->edges[e].to + 1]++] = s->edges[e].from;
    for (uint32_t v = 0; v < n; v++) {
      if (first) {
        rank[v] = first[v].first / (chunk ? chunk : 1);
      } else {
        for (uint32_t i = off[v]; i < off[v + 1]; i++)
          if (rank[in[i]] + 1 > rank[v])
            rank[v] = rank[in[i]] + 1;
      }
      if (rank[v] + 1 > ranks)
        ranks = rank[v] + 1;
    }
    col_w = calloc (ranks, sizeof *col_w);
    col_x = calloc (ranks, sizeof *col_x);
    if (!col_w || !col_x)
      ret = PS_ENOMEM;
  }
  if (ret == 0) {
    for (uint32_t v = 0; v < n; v++) {
      uint32_t lane = s->nodes[v].cluster < nc ? s->nodes[v].cluster : 0;
      col_w[rank[v]] = fmax (col_w[rank[v]], s->nodes[v].w);
      lane_h[lane] = fmax (lane_h[lane], s->nodes[v].h);
    }
    if (first) {
      /* Even columns, as wide as the widest box. */
      double w = 0;
      for (uint32_t r = 0; r < ranks; r++)
        w = fmax (w, col_w[r]);
      for (uint32_t r = 0; r < ranks; r++)
        col_x[r] = r * (w + 30);
    } else {
      for (uint32_t r = 1; r < ranks; r++)
        col_x[r] = col_x[r - 1] + col_w[r - 1] / 2 + 30 + col_w[r] / 2;
    }
    for (uint32_t k = 1; k < nc; k++)
      lane_y[k] = lane_y[k - 1] + lane_h[k - 1] / 2 + 60 + lane_h[k] / 2;
    for (uint32_t v = 0; v < n; v++) {
      uint32_t lane = s->nodes[v].cluster < nc ? s->nodes[v].cluster : 0;
      s->nodes[v].x = col_x[rank[v]];
      s->nodes[v].y = lane_y[lane];
    }
    s->pinned = true;
  }
  free (rank);
  free (off);
  free (in);
  free (lane_h);
  free (lane_y);
  free (col_w);
  free (col_x);
  return ret;
}

static const char *
step_name (const ps_plan *p, uint32_t s, char *buf, size_t cap)
{
  const ps_step *st = &p->steps[s];
  if (st->synthetic || st->nodes_count == 0) {
    snprintf (buf, cap, "%s e%u", st->op == PS_OP_EVENT_RECORD ? "record" : "wait", st->event);
    return buf;
  }
  if (st->nodes_count > 1 && st->function != PS_NONE)
    return p->strings + st->function;
  return ps_node_name (p->graph, p->step_nodes[st->nodes_begin]);
}

static int
label_step_box (ps_scene *s, const ps_plan *p, const ps__view_box *b, ps_scene_node *sn, mode m,
                uint32_t chunk)
{
  const ps_graph *g = p->graph;
  char buf[512], n1[160], n2[160], t[96], kinds[160], sym[160];
  ps__view_box_time (b, t, sizeof t);
  if (!t[0])
    snprintf (t, sizeof t, "no time");
  int ret;
  if (b->count == 1) {
    uint32_t si = b->first;
    const ps_step *st = &p->steps[si];
    const char *nm = step_name (p, si, n1, sizeof n1);
    ret = ps_scene_str (s, nm, &sn->label);
    buf[0] = '\0';
    if (st->nodes_count > 1) {
      size_t k = 0;
      for (uint32_t i = 0; i < st->nodes_count && k + 4 < sizeof buf; i++)
        k += (size_t) snprintf (buf + k, sizeof buf - k, "%s%s", i ? " + " : "",
                                ps_node_name (g, p->step_nodes[st->nodes_begin + i]));
    } else if (st->nodes_count == 1) {
      uint32_t v = p->step_nodes[st->nodes_begin];
      const ps_node *nd = &g->nodes[v];
      char bb[32];
      if (nd->op == PS_OP_KERNEL)
        snprintf (buf, sizeof buf, "%s",
                  ps_demangle (ps_graph_str (g, g->kernels[nd->aux].function), false, sym,
                               sizeof sym));
      else if (nd->op == PS_OP_MEMCPY)
        snprintf (buf, sizeof buf, "%s %s", ps_copy_dir_name ((ps_copy_dir) nd->dir),
                  ps_format_bytes ((double) nd->bytes, bb, sizeof bb));
      else if (nd->op == PS_OP_MEMSET)
        snprintf (buf, sizeof buf, "memset %s", ps_format_bytes ((double) nd->bytes, bb,
                                                                 sizeof bb));
      else if (is_event (st))
        snprintf (buf, sizeof buf, "%s e%u", st->op == PS_OP_EVENT_RECORD ? "record" : "wait",
                  st->event);
      else
        snprintf (buf, sizeof buf, "%s", ps_op_name ((ps_op) nd->op));
    }
    if (ret == 0 && buf[0])
      ret = ps_scene_str (s, buf, &sn->detail);
    if (ret == 0)
      ret = is_event (st) && st->synthetic ? ps_scene_strf (s, &sn->detail2, "#%u", si)
                                            : ps_scene_strf (s, &sn->detail2, "#%u \xc2\xb7 %s",
                                                             si, t);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->tooltip, "step #%u on stream %d: %s%s%s, %s", si,
                           b->stream, nm, buf[0] ? " \xe2\x80\x94 " : "", buf, t);
    sn->ref = si;
    return ret;
  }
  ps__view_box_kinds (b, kinds, sizeof kinds);
  if (m == MODE_OVERVIEW) {
    ret = ps_scene_strf (s, &sn->label, "stream %d \xc2\xb7 steps #%u\xe2\x80\x93#%u", b->stream,
                         b->first, b->last);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->detail, "%u steps \xc2\xb7 %s", b->count, t);
    if (ret == 0)
      ret = ps_scene_str (s, kinds, &sn->detail2);
    if (ret == 0)
      ret = ps_scene_strf (s, &sn->tooltip, "stream %d, up to %u steps a box: %s (%s)",
                           b->stream, chunk, kinds, t);
    return ret;
  }
  ret = ps_scene_strf (s, &sn->label, "%s \xe2\x80\xa6 %s", step_name (p, b->first, n1, sizeof n1),
                       step_name (p, b->last, n2, sizeof n2));
  if (ret == 0)
    ret = ps_scene_strf (s, &sn->detail, "%u steps: %s", b->count, kinds);
  if (ret == 0)
    ret = ps_scene_strf (s, &sn->detail2, "#%u\xe2\x80\x93#%u \xc2\xb7 %s", b->first, b->last, t);
  if (ret == 0)
    ret = ps_scene_strf (s, &sn->tooltip, "steps #%u to #%u on stream %d: %s (%s)", b->first,
                         b->last, b->stream, kinds, t);
  return ret;
}

int
ps_plan_view_build (ps_scene *s, const ps_plan *p, const ps_view_options *o)
{
  ps_view_options defaults;
  if (!o) {
    ps_view_options_init (&defaults);
    o = &defaults;
  }
  uint32_t n = p->n_steps;
  if (n == 0 || !p->graph)
    return PS_EINVAL;
  uint8_t *crit = calloc (n, 1), *src = calloc (n, 1);
  double *ns = malloc ((size_t) n * sizeof *ns);
  uint32_t *box = malloc ((size_t) n * sizeof *box);
  uint32_t *last_rec = malloc (((size_t) p->n_events + 1) * sizeof *last_rec);
  uint32_t *prev_on_stream = malloc (PS_MAX_STREAMS * sizeof *prev_on_stream);
  uint32_t *cluster = malloc (PS_MAX_STREAMS * sizeof *cluster);
  ps__view_box *boxes = NULL;
  ps__view_edge *edges = NULL;
  uint32_t chunk = 1;
  ps_style style;
  ps_view_options_style (o, &style);
  const ps_figures *f = o->figures && o->figures->n_nodes == p->graph->n_nodes ? o->figures : NULL;
  int ret = crit && src && ns && box && last_rec && prev_on_stream && cluster ? 0 : PS_ENOMEM;
  if (ret < 0)
    goto out;
  step_facts (p, f, crit, src, ns);

  /* A plan reads along its streams, so a picture much wider than a
   * screen helps nobody: at most PLAN_BOXES boxes, else the overview. */
  uint32_t most = o->max_boxes < PLAN_BOXES ? o->max_boxes : PLAN_BOXES;
  mode m = n > most ? MODE_COLLAPSED : MODE_FULL;
  uint32_t nb = map_boxes (p, m, most, box, &chunk);
  if (nb != PS_NONE && m == MODE_COLLAPSED && nb > most) {
    m = MODE_OVERVIEW;
    nb = map_boxes (p, m, most, box, &chunk);
  }
  if (nb == PS_NONE) {
    ret = PS_ENOMEM;
    goto out;
  }
  boxes = malloc ((size_t) nb * sizeof *boxes);
  if (!boxes) {
    ret = PS_ENOMEM;
    goto out;
  }
  for (uint32_t b = 0; b < nb; b++)
    ps__view_box_init (&boxes[b]);
  for (uint32_t i = 0; i < n; i++) {
    const ps_step *st = &p->steps[i];
    ps__view_box_add (&boxes[box[i]], i, (ps_op) st->op, st->stream,
                      is_event (st) ? PS_FIGURE_NONE : src[i], ns[i], crit[i]);
  }
  double max_ns = 0;
  bool unknown = false, not_run = false;
  for (uint32_t b = 0; b < nb; b++) {
    max_ns = fmax (max_ns, boxes[b].ns);
    unknown |= boxes[b].n_unknown > 0;
    not_run |= boxes[b].n_not_run > 0;
  }

  /* One cluster per stream, in stream order. */
  for (uint32_t k = 0; k < PS_MAX_STREAMS; k++)
    cluster[k] = PS_NONE;
  uint64_t streams = 0;
  for (uint32_t i = 0; i < n; i++)
    if (p->steps[i].stream < PS_MAX_STREAMS)
      streams |= 1ull << p->steps[i].stream;
  for (uint32_t k = 0; k < PS_MAX_STREAMS && ret == 0; k++) {
    if (!(streams >> k & 1))
      continue;
    uint32_t c;
    ret = ps_scene_add_cluster (s, &c);
    if (ret == 0)
      ret = ps_scene_strf (s, &s->clusters[c].label, "stream %u", k);
    uint32_t tint = ps_style_stream_color (&style, (int32_t) k);
    /* A pale tint of the stream's colour. */
    s->clusters[c].fill = o->color == PS_COLOR_BY_STREAM
                            ? style.pal->surface
                            : ps_color_mix (tint, style.pal->background, 0.6);
    s->clusters[c].stroke = ps_style_outline (&style, tint);
    cluster[k] = c;
  }
  uint32_t ops = 0;
  for (uint32_t b = 0; b < nb && ret == 0; b++) {
    uint32_t idx;
    ret = ps_scene_add_node (s, &idx);
    if (ret < 0)
      break;
    ps_scene_node *sn = &s->nodes[idx];
    const ps__view_box *bx = &boxes[b];
    uint32_t fill;
    if (o->color == PS_COLOR_BY_STREAM)
      fill = ps_style_stream_color (&style, bx->stream >= 0 ? bx->stream : -1);
    else if (o->color == PS_COLOR_BY_DURATION)
      fill = bx->n_timed ? ps_style_duration_color (&style, bx->ns, max_ns) : style.pal->unknown;
    else if (o->color == PS_COLOR_BY_GROUP)
      fill = bx->count == 1 && p->steps[bx->first].nodes_count > 1
               ? ps_style_group_color (&style, p->steps[bx->first].group) : style.pal->unknown;
    else
      fill = ps__view_box_kind (bx) < PS_OP__COUNT
               ? ps_style_kind_color (&style, ps__view_box_kind (bx)) : style.pal->surface;
    ps__view_style_node (sn, bx, &style, fill);
    const ps_step *st = &p->steps[boxes[b].first];
    if (boxes[b].count == 1 && st->nodes_count > 1)
      sn->shape = PS_SHAPE_STACK;
    ops |= 1u << (sn->shape == PS_SHAPE_STACK ? PS_OP__COUNT : sn->kind);
    sn->cluster = st->stream < PS_MAX_STREAMS ? cluster[st->stream] : PS_NONE;
    ret = label_step_box (s, p, &boxes[b], sn, m, chunk);
  }
  if (ret < 0)
    goto out;

  /* Stream order and event edges. */
  uint32_t ne = 0, cap = 0;
  uint32_t kinds = 0;
  for (uint32_t k = 0; k < PS_MAX_STREAMS; k++)
    prev_on_stream[k] = PS_NONE;
  for (uint32_t e = 0; e < p->n_events; e++)
    last_rec[e] = PS_NONE;
  for (uint32_t i = 0; i < n && ret == 0; i++) {
    const ps_step *st = &p->steps[i];
    uint32_t k = st->stream < PS_MAX_STREAMS ? st->stream : 0;
    uint32_t prev = prev_on_stream[k];
    ret = PS_ARRAY_RESERVE (edges, cap, (uint64_t) ne + 2);
    if (ret < 0)
      break;
    if (prev != PS_NONE && box[prev] != box[i]) {
      uint8_t flags = crit[prev] && crit[i] ? PS_SCENE_CRITICAL : 0;
      edges[ne++] = (ps__view_edge){ box[prev], box[i], PS_EDGE_VIEW_ORDER, flags };
      kinds |= 1u << PS_EDGE_VIEW_ORDER | (flags ? 1u << 7 : 0);
    }
    prev_on_stream[k] = i;
    if (st->op == PS_OP_EVENT_RECORD && st->event < p->n_events) {
      last_rec[st->event] = i;
    } else if (st->op == PS_OP_EVENT_WAIT && st->event < p->n_events
               && last_rec[st->event] != PS_NONE) {
      uint32_t r = last_rec[st->event];
      edges[ne++] = (ps__view_edge){ box[r], box[i], PS_EDGE_VIEW_EVENT, 0 };
      kinds |= 1u << PS_EDGE_VIEW_EVENT;
    }
  }
  if (ret == 0)
    ret = ps__view_add_edges (s, edges, ne, &style);
  if (ret < 0)
    goto out;
  if (m == MODE_OVERVIEW)
    for (uint32_t e = 0; e < s->n_edges; e++)
      s->edges[e].label = PS_NONE; /* widths tell the counts */

  char t2[32], note[400];
  const ps_graph *g = p->graph;
  ret = ps_scene_strf (s, &s->title,
                       "%s \xe2\x80\x94 plan: %u step%s on %u stream%s, %u event%s, pool %s",
                       g->name && *g->name ? g->name : "graph", n, n == 1 ? "" : "s",
                       p->streams_used, p->streams_used == 1 ? "" : "s", p->n_events,
                       p->n_events == 1 ? "" : "s",
                       ps_format_bytes ((double) p->pool_bytes, t2, sizeof t2));
  char ct[200];
  int k = snprintf (note, sizeof note, "issue order left to right%s%s",
                    f && f->n_critical ? "; critical path (red): " : "",
                    f && f->n_critical ? ps_figures_critical_text (f, ct, sizeof ct) : "");
  if (m == MODE_COLLAPSED)
    snprintf (note + k, sizeof note - (size_t) k,
              "; runs of steps between events shown as one box (%u boxes)", nb);
  else if (m == MODE_OVERVIEW)
    snprintf (note + k, sizeof note - (size_t) k,
              "; overview: up to %u consecutive steps of a stream per box", chunk);
  if (ret == 0)
    ret = ps_scene_str (s, note, &s->subtitle);
  if (ret == 0)
    ret = ps__view_legend (s, &style, o->color == PS_COLOR_BY_STREAM ? streams : 0, ops, kinds,
                           max_ns, unknown, not_run);
  s->left_to_right = true;
  s->fast = nb > o->fast_boxes;
  if (ret == 0)
    ps_scene_size_nodes (s);
  if (ret == 0 && (nb > LANES_ABOVE || m == MODE_OVERVIEW))
    ret = place_lanes (s, m == MODE_OVERVIEW ? boxes : NULL, chunk);

out:
  free (crit);
  free (src);
  free (ns);
  free (box);
  free (last_rec);
  free (prev_on_stream);
  free (cluster);
  free (boxes);
  free (edges);
  return ret;
}
