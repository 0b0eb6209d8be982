/* ps-layout.c: the Graphviz wrapper of ps-layout.h.
 *
 * A scene becomes a cgraph graph of fixed-size, unlabelled nodes (the
 * labels are drawn by planscope, so Graphviz never measures text for
 * nodes), clusters as nested "cluster_N" subgraphs, and named edges; `dot`
 * lays it out, and the positions, splines and cluster boxes are copied back
 * with y flipped (Graphviz's y axis points up).  Graphviz reports errors
 * through a process-wide callback (agseterrf): it is installed for the
 * duration of a layout, under the same lock. */
#include "ps-layout.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <graphviz_version.h>
#include <gvc.h>

static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;
static GVC_t *gvc;
static char gv_error[512];

static int
capture_error (char *msg)
{
  size_t have = strlen (gv_error);
  if (have + 2 < sizeof gv_error) {
    snprintf (gv_error + have, sizeof gv_error - have, "%s%s", have ? " " : "", msg);
    /* Graphviz messages end with a line break; keep one line. */
    for (char *p = gv_error; *p; p++)
      if (*p == '\n')
        *p = ' ';
  }
  return 0;
}

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void
set (void *obj, Agsym_t *sym, const char *value)
{
  agxset (obj, sym, (char *) value);
}

/* Builds the cgraph graph; nodes[i] and edges[i] receive the objects. */
static int
build (const ps_scene *s, Agraph_t *g, Agnode_t **nodes, Agedge_t **edges, Agraph_t **clusters)
{
  char buf[64];
  agattr (g, AGRAPH, "rankdir", s->left_to_right ? "LR" : "TB");
  agattr (g, AGRAPH, "nodesep", s->left_to_right ? "0.3" : "0.25");
  agattr (g, AGRAPH, "ranksep", s->fast ? "0.3" : "0.35");
  agattr (g, AGRAPH, "fontname", "DejaVu Sans");
  agattr (g, AGRAPH, "fontsize", "11");
  agattr (g, AGRAPH, "labeljust", "l");
  agattr (g, AGRAPH, "labelloc", "t");
  /* Clusters keep a margin around their nodes; the whole drawing has none. */
  Agsym_t *margin = agattr (g, AGRAPH, "margin", "10");
  set (g, margin, "0");
  if (s->fast) {
    /* Fewer network-simplex and crossing-minimisation iterations, and
     * straight edges instead of routed splines. */
    agattr (g, AGRAPH, "splines", "line");
    agattr (g, AGRAPH, "nslimit", "2");
    agattr (g, AGRAPH, "nslimit1", "2");
    agattr (g, AGRAPH, "mclimit", "0.2");
    agattr (g, AGRAPH, "searchsize", "20");
  }
  Agsym_t *glabel = agattr (g, AGRAPH, "label", "");
  Agsym_t *shape = agattr (g, AGNODE, "shape", "box");
  agattr (g, AGNODE, "fixedsize", "true");
  agattr (g, AGNODE, "label", "");
  Agsym_t *width = agattr (g, AGNODE, "width", "0.75");
  Agsym_t *height = agattr (g, AGNODE, "height", "0.5");
  Agsym_t *group = agattr (g, AGNODE, "group", "");
  Agsym_t *constraint = agattr (g, AGEDGE, "constraint", "true");
  Agsym_t *weight = agattr (g, AGEDGE, "weight", "1");
  agattr (g, AGEDGE, "arrowsize", "0.7");

  for (uint32_t c = 0; c < s->n_clusters; c++) {
    uint32_t p = s->clusters[c].parent;
    Agraph_t *parent = p < c ? clusters[p] : g;
    snprintf (buf, sizeof buf, "cluster_%u", c);
    clusters[c] = agsubg (parent, buf, 1);
    if (!clusters[c])
      return PS_ENOMEM;
    const char *label = s->clusters[c].label != PS_NONE ? s->strings + s->clusters[c].label : "";
    set (clusters[c], glabel, label);
  }
  /* Ranks shared by a rank group: one "rank=same" subgraph each. */
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    const ps_scene_node *n = &s->nodes[i];
    snprintf (buf, sizeof buf, "n%u", i);
    Agnode_t *an = agnode (g, buf, 1);
    if (!an)
      return PS_ENOMEM;
    nodes[i] = an;
    set (an, shape, ps_shape_dot_name ((ps_shape) n->shape));
    snprintf (buf, sizeof buf, "%.3f", n->w / 72.0);
    set (an, width, buf);
    snprintf (buf, sizeof buf, "%.3f", n->h / 72.0);
    set (an, height, buf);
    if (n->cluster < s->n_clusters)
      agsubnode (clusters[n->cluster], an, 1);
    if (n->rank_group != PS_NONE) {
      snprintf (buf, sizeof buf, "g%u", n->rank_group);
      set (an, group, buf);
    }
  }
  for (uint32_t e = 0; e < s->n_edges; e++) {
    const ps_scene_edge *ed = &s->edges[e];
    if (ed->from >= s->n_nodes || ed->to >= s->n_nodes)
      return PS_EINVAL;
    if (ed->flags & PS_SCENE_DETACHED)
      continue;
    snprintf (buf, sizeof buf, "e%u", e);
    Agedge_t *ae = agedge (g, nodes[ed->from], nodes[ed->to], buf, 1);
    if (!ae)
      return PS_ENOMEM;
    edges[e] = ae;
    if (ed->flags & PS_SCENE_NO_CONSTRAINT)
      set (ae, constraint, "false");
    if (ed->flags & PS_SCENE_CRITICAL)
      set (ae, weight, "4");
  }
  return 0;
}

/* Copies positions back, flipping y against the bounding box. */
static int
read_back (ps_scene *s, Agraph_t *g, Agnode_t **nodes, Agedge_t **edges, Agraph_t **clusters)
{
  boxf bb = GD_bb (g);
  double top = bb.UR.y, left = bb.LL.x;
  s->width = bb.UR.x - bb.LL.x;
  s->height = bb.UR.y - bb.LL.y;
  s->n_pts = 0;
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    ps_scene_node *n = &s->nodes[i];
    Agnode_t *an = nodes[i];
    n->x = ND_coord (an).x - left;
    n->y = top - ND_coord (an).y;
    n->w = ND_width (an) * 72.0;
    n->h = ND_height (an) * 72.0;
    n->poly_count = 0;
    polygon_t *poly = (polygon_t *) ND_shape_info (an);
    bool polygonal = n->shape != PS_SHAPE_ELLIPSE && n->shape != PS_SHAPE_CIRCLE
                     && n->shape != PS_SHAPE_BOX && n->shape != PS_SHAPE_ROUNDED
                     && n->shape != PS_SHAPE_BAR && n->shape != PS_SHAPE_STACK;
    if (polygonal && poly && poly->sides >= 3 && poly->sides <= 64 && poly->vertices) {
      ps_pt pts[64];
      for (int k = 0; k < poly->sides; k++) {
        pts[k].x = n->x + poly->vertices[k].x;
        pts[k].y = n->y - poly->vertices[k].y;
      }
      int ret = ps_scene_add_points (s, pts, (uint32_t) poly->sides, &n->poly_begin);
      if (ret < 0)
        return ret;
      n->poly_count = (uint32_t) poly->sides;
    }
  }
  for (uint32_t e = 0; e < s->n_edges; e++) {
    ps_scene_edge *ed = &s->edges[e];
    ed->pts_count = 0;
    ed->has_tip = false;
    if (!edges[e])
      continue; /* detached: drawn straight afterwards */
    splines *spl = ED_spl (edges[e]);
    if (!spl || spl->size < 1 || spl->list[0].size < 1)
      continue;
    const bezier *bz = &spl->list[0];
    uint32_t np = (uint32_t) bz->size;
    ps_pt *pts = malloc ((size_t) np * sizeof *pts);
    if (!pts)
      return PS_ENOMEM;
    for (uint32_t k = 0; k < np; k++) {
      pts[k].x = bz->list[k].x - left;
      pts[k].y = top - bz->list[k].y;
    }
    int ret = ps_scene_add_points (s, pts, np, &ed->pts_begin);
    free (pts);
    if (ret < 0)
      return ret;
    ed->pts_count = np;
    const bezier *last = &spl->list[spl->size - 1];
    if (last->eflag) {
      ed->has_tip = true;
      ed->tip.x = last->ep.x - left;
      ed->tip.y = top - last->ep.y;
    }
    const ps_pt *mid = &s->pts[ed->pts_begin + np / 2];
    ed->label_pos = *mid;
  }
  for (uint32_t c = 0; c < s->n_clusters; c++) {
    ps_scene_cluster *cl = &s->clusters[c];
    boxf cb = GD_bb (clusters[c]);
    cl->x0 = cb.LL.x - left;
    cl->x1 = cb.UR.x - left;
    cl->y0 = top - cb.UR.y;
    cl->y1 = top - cb.LL.y;
    cl->label_pos.x = cl->x0 + 6;
    cl->label_pos.y = cl->y0 + 4;
  }
  return 0;
}

/* Where the segment from a box's centre towards `to` leaves the box. */
static ps_pt
box_exit (const ps_scene_node *n, ps_pt to)
{
  double dx = to.x - n->x, dy = to.y - n->y;
  double hw = n->w / 2, hh = n->h / 2;
  double t = 1;
  if (fabs (dx) * hh > fabs (dy) * hw)
    t = dx != 0 ? hw / fabs (dx) : 1;
  else
    t = dy != 0 ? hh / fabs (dy) : 1;
  if (t > 1)
    t = 1;
  return (ps_pt){ n->x + dx * t, n->y + dy * t };
}

/* A straight edge from border to border, as a cubic spline (the shape
 * Graphviz results have). */
int
ps_layout_route_straight (ps_scene *s, uint32_t e)
{
  ps_scene_edge *ed = &s->edges[e];
  if (ed->from >= s->n_nodes || ed->to >= s->n_nodes)
    return PS_EINVAL;
  const ps_scene_node *a = &s->nodes[ed->from], *b = &s->nodes[ed->to];
  ps_pt p0 = box_exit (a, (ps_pt){ b->x, b->y });
  ps_pt p3 = box_exit (b, (ps_pt){ a->x, a->y });
  ps_pt pts[4] = { p0,
                   { p0.x + (p3.x - p0.x) / 3, p0.y + (p3.y - p0.y) / 3 },
                   { p0.x + (p3.x - p0.x) * 2 / 3, p0.y + (p3.y - p0.y) * 2 / 3 },
                   p3 };
  /* The line stops short of the box; the arrow head fills the rest. */
  double len = hypot (p3.x - p0.x, p3.y - p0.y);
  if (len > 12) {
    double k = (len - 8) / len;
    pts[3] = (ps_pt){ p0.x + (p3.x - p0.x) * k, p0.y + (p3.y - p0.y) * k };
    pts[2] = (ps_pt){ p0.x + (pts[3].x - p0.x) * 2 / 3, p0.y + (pts[3].y - p0.y) * 2 / 3 };
    pts[1] = (ps_pt){ p0.x + (pts[3].x - p0.x) / 3, p0.y + (pts[3].y - p0.y) / 3 };
  }
  int ret = ps_scene_add_points (s, pts, 4, &ed->pts_begin);
  if (ret < 0)
    return ret;
  ed->pts_count = 4;
  ed->has_tip = true;
  ed->tip = p3;
  ed->label_pos = (ps_pt){ (p0.x + p3.x) / 2, (p0.y + p3.y) / 2 };
  return 0;
}

/* Pinned scenes: straight edges, and the bounding box. */
static int
layout_pinned (ps_scene *s)
{
  /* Clusters frame their nodes (and child clusters) with a margin and
   * room for the label on top; children have higher indexes. */
  for (uint32_t c = 0; c < s->n_clusters; c++) {
    ps_scene_cluster *cl = &s->clusters[c];
    cl->x0 = cl->y0 = INFINITY;
    cl->x1 = cl->y1 = -INFINITY;
  }
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    const ps_scene_node *n = &s->nodes[i];
    if (n->cluster >= s->n_clusters)
      continue;
    ps_scene_cluster *cl = &s->clusters[n->cluster];
    cl->x0 = fmin (cl->x0, n->x - n->w / 2 - 10);
    cl->x1 = fmax (cl->x1, n->x + n->w / 2 + 10);
    cl->y0 = fmin (cl->y0, n->y - n->h / 2 - 28);
    cl->y1 = fmax (cl->y1, n->y + n->h / 2 + 10);
  }
  for (uint32_t c = s->n_clusters; c-- > 0;) {
    ps_scene_cluster *cl = &s->clusters[c];
    if (cl->parent < c && isfinite (cl->x0)) {
      ps_scene_cluster *p = &s->clusters[cl->parent];
      p->x0 = fmin (p->x0, cl->x0 - 10);
      p->x1 = fmax (p->x1, cl->x1 + 10);
      p->y0 = fmin (p->y0, cl->y0 - 28);
      p->y1 = fmax (p->y1, cl->y1 + 10);
    }
  }
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    const ps_scene_node *n = &s->nodes[i];
    x0 = fmin (x0, n->x - n->w / 2);
    y0 = fmin (y0, n->y - n->h / 2);
    x1 = fmax (x1, n->x + n->w / 2);
    y1 = fmax (y1, n->y + n->h / 2);
  }
  for (uint32_t c = 0; c < s->n_clusters; c++) {
    ps_scene_cluster *cl = &s->clusters[c];
    if (!isfinite (cl->x0)) {
      cl->x0 = cl->x1 = cl->y0 = cl->y1 = 0;
      continue;
    }
    x0 = fmin (x0, cl->x0);
    y0 = fmin (y0, cl->y0);
    x1 = fmax (x1, cl->x1);
    y1 = fmax (y1, cl->y1);
  }
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    s->nodes[i].x -= x0;
    s->nodes[i].y -= y0;
    s->nodes[i].poly_count = 0;
  }
  for (uint32_t c = 0; c < s->n_clusters; c++) {
    ps_scene_cluster *cl = &s->clusters[c];
    if (cl->x1 <= cl->x0)
      continue;
    cl->x0 -= x0;
    cl->x1 -= x0;
    cl->y0 -= y0;
    cl->y1 -= y0;
    cl->label_pos = (ps_pt){ cl->x0 + 6, cl->y0 + 4 };
  }
  s->width = x1 - x0;
  s->height = y1 - y0;
  s->n_pts = 0;
  for (uint32_t e = 0; e < s->n_edges; e++) {
    int ret = ps_layout_route_straight (s, e);
    if (ret < 0)
      return ret;
  }
  s->laid_out = true;
  return 0;
}

int
ps_layout_scene (ps_scene *s, char *err, size_t errlen)
{
  if (s->pinned) {
    if (errlen)
      err[0] = '\0';
    double t0 = now ();
    int ret = layout_pinned (s);
    s->pts_mark = s->n_pts;
    s->layout_seconds = now () - t0;
    if (ret < 0 && errlen)
      snprintf (err, errlen, "layout failed: %s", ps_strerror (ret));
    return ret;
  }
  if (errlen)
    err[0] = '\0';
  if (s->n_nodes == 0) {
    s->width = s->height = 0;
    s->laid_out = true;
    return 0;
  }
  Agnode_t **nodes = calloc (s->n_nodes, sizeof *nodes);
  Agedge_t **edges = calloc ((size_t) s->n_edges + 1, sizeof *edges);
  Agraph_t **clusters = calloc ((size_t) s->n_clusters + 1, sizeof *clusters);
  if (!nodes || !edges || !clusters) {
    free (nodes);
    free (edges);
    free (clusters);
    return PS_ENOMEM;
  }
  double t0 = now ();
  pthread_mutex_lock (&layout_lock);
  gv_error[0] = '\0';
  agusererrf old_errf = agseterrf (capture_error);
  agerrlevel_t old_level = agseterr (AGERR);
  int ret = 0;
  if (!gvc)
    gvc = gvContext ();
  Agraph_t *g = gvc ? agopen ((char *) "planscope", Agdirected, NULL) : NULL;
  if (!g)
    ret = PS_ENOMEM;
  if (ret == 0)
    ret = build (s, g, nodes, edges, clusters);
  bool laid = false;
  if (ret == 0) {
    if (gvLayout (gvc, g, "dot") != 0)
      ret = PS_EINVAL;
    else
      laid = true;
  }
  if (ret == 0)
    ret = read_back (s, g, nodes, edges, clusters);
  for (uint32_t e = 0; e < s->n_edges && ret == 0; e++)
    if (s->edges[e].flags & PS_SCENE_DETACHED)
      ret = ps_layout_route_straight (s, e);
  if (laid)
    gvFreeLayout (gvc, g);
  if (g)
    agclose (g);
  if (ret < 0 && errlen)
    snprintf (err, errlen, "Graphviz layout failed%s%s", gv_error[0] ? ": " : "", gv_error);
  agseterr (old_level);
  agseterrf (old_errf);
  pthread_mutex_unlock (&layout_lock);
  free (nodes);
  free (edges);
  free (clusters);
  s->laid_out = ret == 0;
  s->pts_mark = s->n_pts;
  s->layout_seconds = now () - t0;
  return ret;
}

int
ps_layout_dot_text (const char *text, const char *engine, double *width, double *height,
                    char *err, size_t errlen)
{
  if (errlen)
    err[0] = '\0';
  pthread_mutex_lock (&layout_lock);
  gv_error[0] = '\0';
  agusererrf old_errf = agseterrf (capture_error);
  agerrlevel_t old_level = agseterr (AGERR);
  int ret = 0;
  if (!gvc)
    gvc = gvContext ();
  Agraph_t *g = gvc ? agmemread (text) : NULL;
  if (!g) {
    ret = PS_ESYNTAX;
  } else if (gvLayout (gvc, g, engine) != 0) {
    ret = PS_EINVAL;
  } else {
    boxf bb = GD_bb (g);
    *width = bb.UR.x - bb.LL.x;
    *height = bb.UR.y - bb.LL.y;
    gvFreeLayout (gvc, g);
  }
  if (g)
    agclose (g);
  if (ret < 0 && errlen)
    snprintf (err, errlen, "Graphviz %s: %s", ret == PS_ESYNTAX ? "cannot read the DOT text"
                                                              : "layout failed",
              gv_error[0] ? gv_error : "no message");
  agseterr (old_level);
  agseterrf (old_errf);
  pthread_mutex_unlock (&layout_lock);
  return ret;
}
