/* ps-scene.c: building scenes, sizing their boxes to their text, and
 * writing them as Graphviz DOT and as layout JSON. */
#include "ps-scene.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ps-text.h"
#include "ps-array.h"
#include "ps-jsonw.h"

#define MAX_STRING 65536

void
ps_scene_init (ps_scene *s)
{
  memset (s, 0, sizeof *s);
  s->title = s->subtitle = PS_NONE;
}

void
ps_scene_free (ps_scene *s)
{
  free (s->nodes);
  free (s->edges);
  free (s->clusters);
  free (s->legend);
  free (s->pts);
  free (s->strings);
  free (s->node_box);
  free (s->box_off);
  free (s->box_nodes);
  ps_scene_init (s);
}

const uint32_t *
ps_scene_box_members (const ps_scene *s, uint32_t b, uint32_t *n)
{
  if (!s->box_off || b >= s->n_nodes) {
    *n = 0;
    return NULL;
  }
  *n = s->box_off[b + 1] - s->box_off[b];
  return s->box_nodes + s->box_off[b];
}

uint32_t
ps_scene_box_at (const ps_scene *s, double x, double y, double slop)
{
  if (!s->laid_out)
    return PS_NONE;
  /* Last drawn first: boxes are drawn in index order. */
  for (uint32_t i = s->n_nodes; i-- > 0;) {
    const ps_scene_node *n = &s->nodes[i];
    if (fabs (x - n->x) <= n->w / 2 + slop && fabs (y - n->y) <= n->h / 2 + slop)
      return i;
  }
  return PS_NONE;
}

int
ps_scene_str (ps_scene *s, const char *raw, uint32_t *off)
{
  /* Scene text is valid UTF-8 (names from imported dumps may not be). */
  char clean[4096];
  const char *text = raw;
  size_t n = strlen (raw);
  bool plain = true;
  for (size_t i = 0; i < n && plain; i++)
    plain = (unsigned char) raw[i] >= 0x20 && (unsigned char) raw[i] < 0x80;
  if (!plain) {
    n = ps_utf8_sanitize (raw, clean, sizeof clean);
    text = clean;
  }
  if (n > MAX_STRING) {
    n = MAX_STRING;
    while (n > 0 && ((unsigned char) text[n] & 0xc0) == 0x80)
      n--;
  }
  int ret = ps_array_grow (&s->strings, &s->strings_cap, (uint64_t) s->strings_len + n + 1, 1,
                           UINT32_MAX / 2);
  if (ret < 0)
    return ret;
  memcpy (s->strings + s->strings_len, text, n);
  s->strings[s->strings_len + n] = '\0';
  *off = s->strings_len;
  s->strings_len += (uint32_t) n + 1;
  return 0;
}

int
ps_scene_strf (ps_scene *s, uint32_t *off, const char *fmt, ...)
{
  char buf[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  return ps_scene_str (s, buf, off);
}

int
ps_scene_add_node (ps_scene *s, uint32_t *index)
{
  int ret = PS_ARRAY_RESERVE (s->nodes, s->cap_nodes, (uint64_t) s->n_nodes + 1);
  if (ret < 0)
    return ret;
  ps_scene_node *n = &s->nodes[s->n_nodes];
  memset (n, 0, sizeof *n);
  n->label = n->detail = n->detail2 = n->tooltip = n->ref = n->cluster = PS_NONE;
  n->rank_group = PS_NONE;
  n->stream = -1;
  n->count = 1;
  n->fill = 0xffffff;
  n->pen = 1;
  n->kind = PS_OP__COUNT;
  n->poly_begin = 0;
  *index = s->n_nodes++;
  return 0;
}

int
ps_scene_add_edge (ps_scene *s, uint32_t from, uint32_t to, uint32_t *index)
{
  int ret = PS_ARRAY_RESERVE (s->edges, s->cap_edges, (uint64_t) s->n_edges + 1);
  if (ret < 0)
    return ret;
  ps_scene_edge *e = &s->edges[s->n_edges];
  memset (e, 0, sizeof *e);
  e->from = from;
  e->to = to;
  e->label = PS_NONE;
  e->color = 0x555555;
  e->pen = 1;
  e->count = 1;
  if (index)
    *index = s->n_edges;
  s->n_edges++;
  return 0;
}

int
ps_scene_add_cluster (ps_scene *s, uint32_t *index)
{
  int ret = PS_ARRAY_RESERVE (s->clusters, s->cap_clusters, (uint64_t) s->n_clusters + 1);
  if (ret < 0)
    return ret;
  ps_scene_cluster *c = &s->clusters[s->n_clusters];
  memset (c, 0, sizeof *c);
  c->label = c->parent = PS_NONE;
  c->fill = 0xf7f7f7;
  c->stroke = 0xaaaaaa;
  *index = s->n_clusters++;
  return 0;
}

int
ps_scene_add_legend (ps_scene *s, ps_legend_kind kind, const char *label, uint32_t fill,
                     uint32_t stroke, uint8_t shape_or_flags)
{
  int ret = PS_ARRAY_RESERVE (s->legend, s->cap_legend, (uint64_t) s->n_legend + 1);
  if (ret < 0)
    return ret;
  ps_legend_item *l = &s->legend[s->n_legend];
  memset (l, 0, sizeof *l);
  ret = ps_scene_str (s, label, &l->label);
  if (ret < 0)
    return ret;
  l->kind = (uint8_t) kind;
  l->fill = fill;
  l->stroke = stroke;
  l->pen = 1;
  if (kind == PS_LEGEND_LINE)
    l->flags = shape_or_flags;
  else
    l->shape = shape_or_flags;
  s->n_legend++;
  return 0;
}

int
ps_scene_add_points (ps_scene *s, const ps_pt *pts, uint32_t n, uint32_t *begin)
{
  int ret = ps_array_grow (&s->pts, &s->cap_pts, (uint64_t) s->n_pts + n, sizeof *s->pts,
                           UINT32_MAX / 2);
  if (ret < 0)
    return ret;
  memcpy (s->pts + s->n_pts, pts, (size_t) n * sizeof *pts);
  *begin = s->n_pts;
  s->n_pts += n;
  return 0;
}

/* Widest text line a box shows; labels are cut at this width. */
#define MAX_LABEL_WIDTH 220.0

void
ps_scene_size_nodes (ps_scene *s)
{
  ps_font title = { 10, true, false }, detail = { 8.5, false, false };
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    ps_scene_node *n = &s->nodes[i];
    ps_font tf = title;
    double w = 0, h = 0;
    if (n->label != PS_NONE) {
      w = fmin (MAX_LABEL_WIDTH, ps_text_width (s->strings + n->label, &tf));
      h += 13;
    }
    uint32_t lines[2] = { n->detail, n->detail2 };
    for (int k = 0; k < 2; k++)
      if (lines[k] != PS_NONE) {
        w = fmax (w, fmin (MAX_LABEL_WIDTH, ps_text_width (s->strings + lines[k], &detail)));
        h += 11;
      }
    w += 14;
    h += 8;
    switch ((ps_shape) n->shape) {
    case PS_SHAPE_PARALLELOGRAM:
      w += h * 0.9;
      break;
    case PS_SHAPE_HEXAGON:
    case PS_SHAPE_OCTAGON:
      w += h * 0.6;
      break;
    case PS_SHAPE_HOUSE:
      h *= 1.45;
      break;
    case PS_SHAPE_ELLIPSE:
      w *= 1.3;
      h *= 1.4;
      break;
    case PS_SHAPE_DIAMOND:
      w *= 1.7;
      h *= 1.8;
      break;
    case PS_SHAPE_CIRCLE:
      w = h = fmax (w, h) * 1.1;
      break;
    case PS_SHAPE_STACK:
      w += 6;
      h += 6;
      break;
    default:
      break;
    }
    n->w = fmax (w, 30);
    n->h = fmax (h, 22);
  }
}

/* ---- DOT ------------------------------------------------------------------ */

static const char *const shape_dot[PS_SHAPE__COUNT] = {
  "box", "box", "parallelogram", "hexagon", "house", "ellipse",
  "diamond", "octagon", "box", "circle", "box3d",
};

const char *
ps_shape_dot_name (ps_shape shape)
{
  return (unsigned) shape < PS_SHAPE__COUNT ? shape_dot[shape] : "box";
}

const char *
ps_scene_edge_kind_name (ps_scene_edge_kind k)
{
  static const char *const names[PS_EDGE_VIEW__COUNT] = { "dependency", "cross-stream",
                                                          "stream-order", "event" };
  return (unsigned) k < PS_EDGE_VIEW__COUNT ? names[k] : "?";
}

/* A DOT quoted string: quotes and backslashes escaped, line breaks as \n,
 * other control characters dropped. */
void
ps_dot_write_string (FILE *out, const char *s)
{
  fputc ('"', out);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\')
      fputc ('\\', out), fputc (c, out);
    else if (c == '\n')
      fputs ("\\n", out);
    else if (c >= 0x20)
      fputc (c, out);
  }
  fputc ('"', out);
}

static void
dot_label (FILE *out, const ps_scene *s, const ps_scene_node *n)
{
  fputc ('"', out);
  uint32_t parts[3] = { n->label, n->detail, n->detail2 };
  bool first = true;
  for (int k = 0; k < 3; k++) {
    if (parts[k] == PS_NONE)
      continue;
    if (!first)
      fputs ("\\n", out);
    first = false;
    for (const char *p = s->strings + parts[k]; *p; p++) {
      unsigned char c = (unsigned char) *p;
      if (c == '"' || c == '\\')
        fputc ('\\', out), fputc (c, out);
      else if (c == '\n')
        fputs ("\\n", out);
      else if (c >= 0x20)
        fputc (c, out);
    }
  }
  fputc ('"', out);
}

/* For pinned scenes: the top of the drawing, to flip y (DOT's y points
 * up). */
static double
pinned_top (const ps_scene *s)
{
  double top = 0;
  for (uint32_t i = 0; i < s->n_nodes; i++)
    if (s->nodes[i].y + s->nodes[i].h / 2 > top)
      top = s->nodes[i].y + s->nodes[i].h / 2;
  return top;
}

static void
dot_node (FILE *out, const ps_scene *s, uint32_t i, const char *indent, double top)
{
  const ps_scene_node *n = &s->nodes[i];
  fprintf (out, "%sn%u [label=", indent, i);
  dot_label (out, s, n);
  fprintf (out, ", shape=%s, style=\"filled%s%s%s\", fillcolor=\"#%06x\", color=\"#%06x\"",
           ps_shape_dot_name ((ps_shape) n->shape),
           n->shape == PS_SHAPE_ROUNDED ? ",rounded" : "",
           n->flags & PS_SCENE_DASHED ? ",dashed" : "", n->flags & PS_SCENE_BOLD ? ",bold" : "",
           n->fill, n->stroke);
  if (n->text)
    fprintf (out, ", fontcolor=\"#%06x\"", n->text);
  if (n->pen != 1)
    fprintf (out, ", penwidth=%.1f", (double) n->pen);
  if (n->shape == PS_SHAPE_BAR)
    fputs (", height=0.25", out);
  if (n->tooltip != PS_NONE) {
    fputs (", tooltip=", out);
    ps_dot_write_string (out, s->strings + n->tooltip);
  }
  if (n->rank_group != PS_NONE)
    fprintf (out, ", group=g%u", n->rank_group);
  if (s->pinned)
    fprintf (out, ", pos=\"%.1f,%.1f!\"", n->x, top - n->y);
  fputs ("];\n", out);
}

int
ps_scene_write_dot (const ps_scene *s, FILE *out)
{
  double top = s->pinned ? pinned_top (s) : 0;
  if (s->pinned)
    fputs ("// An overview with positions pinned: neato -n2 draws it as planscope does;\n"
           "// dot lays it out anew.\n",
           out);
  fputs ("digraph planscope {\n  graph [", out);
  if (s->title != PS_NONE) {
    fputs ("label=", out);
    ps_dot_write_string (out, s->strings + s->title);
    fputs (", labelloc=t, fontsize=14, ", out);
  }
  fprintf (out, "rankdir=%s, fontname=\"DejaVu Sans\", nodesep=0.25, ranksep=0.35%s];\n",
           s->left_to_right ? "LR" : "TB",
           s->fast ? ", splines=line, nslimit=2, nslimit1=2, mclimit=0.2, searchsize=20" : "");
  fputs ("  node [fontname=\"DejaVu Sans\", fontsize=10, margin=\"0.08,0.04\"];\n"
         "  edge [arrowsize=0.7];\n",
         out);

  /* Clusters nest: each is written with its nodes and its child clusters
   * inside, depth first with an explicit stack of (cluster, next child). */
  uint32_t nc = s->n_clusters;
  uint32_t *first = malloc (((size_t) nc + 1) * sizeof *first);
  uint32_t *next = malloc (((size_t) nc + 1) * sizeof *next);
  uint32_t *nfirst = malloc (((size_t) nc + 1) * sizeof *nfirst);
  uint32_t *nnext = malloc (((size_t) s->n_nodes + 1) * sizeof *nnext);
  uint32_t *stack = malloc (((size_t) nc + 1) * 2 * sizeof *stack);
  if (!first || !next || !nfirst || !nnext || !stack) {
    free (first);
    free (next);
    free (nfirst);
    free (nnext);
    free (stack);
    return PS_ENOMEM;
  }
  for (uint32_t c = 0; c <= nc; c++)
    first[c] = nfirst[c] = PS_NONE;
  for (uint32_t c = nc; c-- > 0;) {
    uint32_t p = s->clusters[c].parent < c ? s->clusters[c].parent : nc;
    next[c] = first[p];
    first[p] = c;
  }
  for (uint32_t i = s->n_nodes; i-- > 0;) {
    uint32_t c = s->nodes[i].cluster < nc ? s->nodes[i].cluster : nc;
    nnext[i] = nfirst[c];
    nfirst[c] = i;
  }
  for (uint32_t i = nfirst[nc]; i != PS_NONE; i = nnext[i])
    dot_node (out, s, i, "  ", top);
  uint32_t sp = 0;
  stack[sp++] = nc;
  stack[sp++] = first[nc];
  while (sp > 0) {
    uint32_t k = stack[sp - 1];
    int ind = (int) sp; /* two spaces per level */
    if (k == PS_NONE) {
      sp -= 2;
      if (sp > 0)
        fprintf (out, "%*s}\n", ind - 2, "");
      continue;
    }
    stack[sp - 1] = next[k];
    const ps_scene_cluster *cl = &s->clusters[k];
    fprintf (out, "%*ssubgraph cluster_%u {\n%*slabel=", ind, "", k, ind + 2, "");
    ps_dot_write_string (out, cl->label != PS_NONE ? s->strings + cl->label : "");
    fprintf (out, "; style=\"rounded,filled%s\"; fillcolor=\"#%06x\"; color=\"#%06x\"; "
                  "fontsize=11;\n",
             cl->flags & PS_SCENE_DASHED ? ",dashed" : "", cl->fill, cl->stroke);
    char indent[160];
    snprintf (indent, sizeof indent, "%*s", ind + 2 < 150 ? ind + 2 : 150, "");
    for (uint32_t i = nfirst[k]; i != PS_NONE; i = nnext[i])
      dot_node (out, s, i, indent, top);
    stack[sp++] = k;
    stack[sp++] = first[k];
  }

  /* Edges. */
  for (uint32_t e = 0; e < s->n_edges; e++) {
    const ps_scene_edge *ed = &s->edges[e];
    fprintf (out, "  n%u -> n%u [color=\"#%06x\"", ed->from, ed->to, ed->color);
    if (ed->pen != 1)
      fprintf (out, ", penwidth=%.1f", (double) ed->pen);
    if (ed->flags & PS_SCENE_DASHED)
      fputs (", style=dashed", out);
    else if (ed->flags & PS_SCENE_DOTTED)
      fputs (", style=dotted", out);
    if (ed->flags & (PS_SCENE_NO_CONSTRAINT | PS_SCENE_DETACHED))
      fputs (", constraint=false", out);
    if (ed->label != PS_NONE) {
      fputs (", label=", out);
      ps_dot_write_string (out, s->strings + ed->label);
      fputs (", fontsize=8", out);
    }
    fputs ("];\n", out);
  }
  fputs ("}\n", out);
  free (first);
  free (next);
  free (nfirst);
  free (nnext);
  free (stack);
  return ferror (out) ? PS_EIO : 0;
}

/* ---- layout JSON ------------------------------------------------------------ */

static void
jnum (FILE *out, double v)
{
  ps_jsonw_number (out, isfinite (v) ? round (v * 100) / 100 : 0);
}

static void
jstr (FILE *out, const ps_scene *s, uint32_t off)
{
  if (off == PS_NONE)
    fputs ("null", out);
  else
    ps_jsonw_string (out, s->strings + off);
}

int
ps_scene_write_json (const ps_scene *s, const char *view, const char *graph_name, FILE *out)
{
  fputs ("{\"format\": \"planscope-layout\", \"version\": 1, \"view\": ", out);
  ps_jsonw_string (out, view);
  fputs (", \"graph\": ", out);
  ps_jsonw_string (out, graph_name ? graph_name : "");
  fputs (", \"title\": ", out);
  jstr (out, s, s->title);
  fputs (", \"note\": ", out);
  jstr (out, s, s->subtitle);
  fputs (",\n \"width\": ", out);
  jnum (out, s->width);
  fputs (", \"height\": ", out);
  jnum (out, s->height);
  fputs (", \"units\": \"pt\",\n \"nodes\": [", out);
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    const ps_scene_node *n = &s->nodes[i];
    fprintf (out, "%s\n  {\"id\": %u, \"label\": ", i ? "," : "", i);
    jstr (out, s, n->label);
    fputs (", \"detail\": ", out);
    jstr (out, s, n->detail);
    fputs (", \"time\": ", out);
    jstr (out, s, n->detail2);
    fputs (", \"kind\": ", out);
    ps_jsonw_string (out, n->kind < PS_OP__COUNT ? ps_op_name ((ps_op) n->kind) : "mixed");
    fprintf (out, ", \"count\": %u, \"stream\": %d, \"critical\": %s", n->count, n->stream,
             n->flags & PS_SCENE_CRITICAL ? "true" : "false");
    if (n->cluster != PS_NONE)
      fprintf (out, ", \"cluster\": %u", n->cluster);
    if (n->ref != PS_NONE)
      fprintf (out, ", \"ref\": %u", n->ref);
    fprintf (out, ", \"shape\": \"%s\", \"fill\": \"#%06x\", \"x\": ",
             ps_shape_dot_name ((ps_shape) n->shape), n->fill);
    jnum (out, n->x);
    fputs (", \"y\": ", out);
    jnum (out, n->y);
    fputs (", \"w\": ", out);
    jnum (out, n->w);
    fputs (", \"h\": ", out);
    jnum (out, n->h);
    fputc ('}', out);
  }
  fputs ("],\n \"edges\": [", out);
  for (uint32_t e = 0; e < s->n_edges; e++) {
    const ps_scene_edge *ed = &s->edges[e];
    fprintf (out, "%s\n  {\"from\": %u, \"to\": %u, \"kind\": \"%s\", \"count\": %u, "
                  "\"critical\": %s, \"points\": [",
             e ? "," : "", ed->from, ed->to,
             ps_scene_edge_kind_name ((ps_scene_edge_kind) ed->kind), ed->count,
             ed->flags & PS_SCENE_CRITICAL ? "true" : "false");
    for (uint32_t k = 0; k < ed->pts_count; k++) {
      fputs (k ? ", [" : "[", out);
      jnum (out, s->pts[ed->pts_begin + k].x);
      fputs (", ", out);
      jnum (out, s->pts[ed->pts_begin + k].y);
      fputc (']', out);
    }
    fputs ("]}", out);
  }
  fputs ("],\n \"clusters\": [", out);
  for (uint32_t c = 0; c < s->n_clusters; c++) {
    const ps_scene_cluster *cl = &s->clusters[c];
    fprintf (out, "%s\n  {\"id\": %u, \"label\": ", c ? "," : "", c);
    jstr (out, s, cl->label);
    if (cl->parent != PS_NONE)
      fprintf (out, ", \"parent\": %u", cl->parent);
    fputs (", \"x0\": ", out);
    jnum (out, cl->x0);
    fputs (", \"y0\": ", out);
    jnum (out, cl->y0);
    fputs (", \"x1\": ", out);
    jnum (out, cl->x1);
    fputs (", \"y1\": ", out);
    jnum (out, cl->y1);
    fputc ('}', out);
  }
  fputs ("]}\n", out);
  return ferror (out) ? PS_EIO : 0;
}
