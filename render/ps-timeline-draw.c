/* ps-timeline-draw.c: the timeline chart, its pictures and its pinned
 * DOT form (see ps-timeline-draw.h). */
#include "ps-timeline-draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-draw.h"
#include "ps-format.h"

#define TINY 1.0 /* spans narrower than this (points) are merged */
#define MAX_FLOWS 4000
#define LANE_PITCH (PS_TL_LANE_H + PS_TL_LANE_GAP)

/* One timeline of the chart, indexed by lane. */
#define BLOCK 64 /* positions per block maximum of ends */

typedef struct layer {
  const ps_timeline *tl;
  /* Per position of tl->by_stream: start time, the running maximum of
   * the ends within the stream, and the count of critical spans before
   * it (n + 1 entries per stream, from pcrit_off). */
  double *start, *end, *pmax;
  uint32_t *pcrit;
  double *bmax;          /* per block of BLOCK positions: the largest end in it */
  uint32_t *lane_stream; /* per lane: the stream of tl drawn there, or PS_NONE */
} layer;

struct ps_timeline_chart {
  ps_timeline_layers l;
  /* Lanes: tl's streams, then streams only the measured run or the
   * baseline has; per lane the timeline and stream that name it. */
  uint32_t n_lanes;
  const ps_timeline **lane_tl;
  uint32_t *lane_src;
  layer layers[3];
  /* The diagnosis's waits per lane, by start: wait_ids[wait_off[k] ..
   * wait_off[k + 1]), with starts and running maxima of ends. */
  uint32_t *wait_off, *wait_ids;
  double *wait_start, *wait_end, *wait_pmax, *wait_bmax;
  double gutter, length;
};

/* ---- building ------------------------------------------------------------ */

static int
layer_init (layer *ly, const ps_timeline *tl, const ps_timeline_chart *ch, const ps_figures *fig)
{
  memset (ly, 0, sizeof *ly);
  ly->tl = tl;
  if (!tl)
    return 0;
  if (!tl->stream_off || !tl->by_stream)
    return PS_EINVAL; /* needs ps_timeline_finish */
  size_t n = tl->n_spans;
  ly->start = malloc ((n + 1) * sizeof *ly->start);
  ly->end = malloc ((n + 1) * sizeof *ly->end);
  ly->pmax = malloc ((n + 1) * sizeof *ly->pmax);
  ly->pcrit = malloc ((n + tl->n_streams + 1) * sizeof *ly->pcrit);
  ly->lane_stream = malloc (((size_t) ch->n_lanes + 1) * sizeof *ly->lane_stream);
  ly->bmax = malloc ((n / BLOCK + 1) * sizeof *ly->bmax);
  if (!ly->start || !ly->end || !ly->pmax || !ly->pcrit || !ly->lane_stream || !ly->bmax)
    return PS_ENOMEM;
  for (size_t b = 0; b <= n / BLOCK; b++)
    ly->bmax[b] = -INFINITY;
  const uint8_t *crit = fig && fig->tl == tl ? fig->span_critical : NULL;
  for (uint32_t k = 0; k < tl->n_streams; k++) {
    double m = -INFINITY;
    uint32_t c = 0, base = tl->stream_off[k] + k;
    for (uint32_t j = tl->stream_off[k]; j < tl->stream_off[k + 1]; j++) {
      const ps_span *s = &tl->spans[tl->by_stream[j]];
      ly->start[j] = s->start_ns;
      ly->end[j] = s->end_ns;
      ly->bmax[j / BLOCK] = fmax (ly->bmax[j / BLOCK], s->end_ns);
      m = fmax (m, s->end_ns);
      ly->pmax[j] = m;
      ly->pcrit[base + (j - tl->stream_off[k])] = c;
      c += crit && crit[tl->by_stream[j]];
    }
    ly->pcrit[base + (tl->stream_off[k + 1] - tl->stream_off[k])] = c;
  }
  for (uint32_t lane = 0; lane < ch->n_lanes; lane++) {
    ly->lane_stream[lane] = PS_NONE;
    const ps_tl_stream *want = &ch->lane_tl[lane]->streams[ch->lane_src[lane]];
    if (tl == ch->lane_tl[lane]) {
      ly->lane_stream[lane] = ch->lane_src[lane];
      continue;
    }
    for (uint32_t k = 0; k < tl->n_streams; k++)
      if (tl->streams[k].id == want->id && tl->streams[k].device == want->device) {
        ly->lane_stream[lane] = k;
        break;
      }
  }
  return 0;
}

static void
layer_free (layer *ly)
{
  free (ly->start);
  free (ly->end);
  free (ly->pmax);
  free (ly->pcrit);
  free (ly->bmax);
  free (ly->lane_stream);
}

static int
cmp_wait (const void *a, const void *b, void *ctx)
{
  const ps_diagnosis *dg = ctx;
  const ps_wait *x = &dg->waits[*(const uint32_t *) a], *y = &dg->waits[*(const uint32_t *) b];
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  return *(const uint32_t *) a < *(const uint32_t *) b ? -1 : 1;
}

/* A merge sort of wait ids: C11's qsort takes no context. */
static void
sort_waits (uint32_t *ids, uint32_t *tmp, uint32_t n, const ps_diagnosis *dg)
{
  for (uint32_t width = 1; width < n; width *= 2) {
    for (uint32_t i = 0; i < n; i += 2 * width) {
      uint32_t mid = i + width < n ? i + width : n, end = i + 2 * width < n ? i + 2 * width : n;
      uint32_t a = i, b = mid, k = i;
      while (a < mid && b < end)
        tmp[k++] = cmp_wait (&ids[a], &ids[b], (void *) dg) <= 0 ? ids[a++] : ids[b++];
      while (a < mid)
        tmp[k++] = ids[a++];
      while (b < end)
        tmp[k++] = ids[b++];
    }
    memcpy (ids, tmp, (size_t) n * sizeof *ids);
  }
}

static int
index_waits (ps_timeline_chart *ch)
{
  const ps_diagnosis *dg = ch->l.dg;
  uint32_t lanes = ch->n_lanes, n = dg ? dg->n_waits : 0;
  ch->wait_off = calloc ((size_t) lanes + 1, sizeof *ch->wait_off);
  ch->wait_ids = malloc (((size_t) n + 1) * sizeof *ch->wait_ids);
  ch->wait_start = malloc (((size_t) n + 1) * sizeof *ch->wait_start);
  ch->wait_pmax = malloc (((size_t) n + 1) * sizeof *ch->wait_pmax);
  ch->wait_end = malloc (((size_t) n + 1) * sizeof *ch->wait_end);
  ch->wait_bmax = malloc (((size_t) n / BLOCK + 1) * sizeof *ch->wait_bmax);
  uint32_t *tmp = malloc (((size_t) n + 1) * sizeof *tmp);
  if (!ch->wait_off || !ch->wait_ids || !ch->wait_start || !ch->wait_end || !ch->wait_pmax
      || !ch->wait_bmax || !tmp) {
    free (tmp);
    return PS_ENOMEM;
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (dg->waits[i].stream < lanes && dg->waits[i].end_ns > dg->waits[i].start_ns)
      ch->wait_ids[m++] = i;
  sort_waits (ch->wait_ids, tmp, m, dg);
  free (tmp);
  for (uint32_t b = 0; b <= n / BLOCK; b++)
    ch->wait_bmax[b] = -INFINITY;
  uint32_t j = 0;
  for (uint32_t k = 0; k < lanes; k++) {
    ch->wait_off[k] = j;
    double mx = -INFINITY;
    for (; j < m && dg->waits[ch->wait_ids[j]].stream == k; j++) {
      const ps_wait *w = &dg->waits[ch->wait_ids[j]];
      ch->wait_start[j] = w->start_ns;
      ch->wait_end[j] = w->end_ns;
      ch->wait_bmax[j / BLOCK] = fmax (ch->wait_bmax[j / BLOCK], w->end_ns);
      mx = fmax (mx, w->end_ns);
      ch->wait_pmax[j] = mx;
    }
  }
  ch->wait_off[lanes] = j;
  return 0;
}

/* The lanes: tl's streams, then those of the measured run and the
 * baseline that tl has not (matched by stream id and device). */
static int
make_lanes (ps_timeline_chart *ch)
{
  const ps_timeline *tls[3] = { ch->l.tl, ch->l.measured, ch->l.ghost };
  size_t most = 0;
  for (int i = 0; i < 3; i++)
    most += tls[i] ? tls[i]->n_streams : 0;
  ch->lane_tl = malloc ((most + 1) * sizeof *ch->lane_tl);
  ch->lane_src = malloc ((most + 1) * sizeof *ch->lane_src);
  if (!ch->lane_tl || !ch->lane_src)
    return PS_ENOMEM;
  uint32_t n = 0;
  for (int i = 0; i < 3; i++) {
    const ps_timeline *t = tls[i];
    for (uint32_t k = 0; t && k < t->n_streams; k++) {
      bool seen = false;
      for (uint32_t j = 0; j < n && !seen && i > 0; j++) {
        const ps_tl_stream *a = &ch->lane_tl[j]->streams[ch->lane_src[j]];
        seen = a->id == t->streams[k].id && a->device == t->streams[k].device;
      }
      if (seen)
        continue;
      ch->lane_tl[n] = t;
      ch->lane_src[n++] = k;
    }
  }
  ch->n_lanes = n;
  return 0;
}

static const ps_font lane_font = { 9.5, true, false };
static const ps_font stat_font = { 7.5, false, false };
static const ps_font span_font = { 8.5, false, false };

int
ps_timeline_chart_new (ps_timeline_chart **out, const ps_timeline_layers *l)
{
  *out = NULL;
  if (!l->tl || !l->tl->stream_off)
    return PS_EINVAL;
  ps_timeline_chart *ch = calloc (1, sizeof *ch);
  if (!ch)
    return PS_ENOMEM;
  ch->l = *l;
  if (ch->l.dg && ch->l.dg->n_streams != l->tl->n_streams)
    ch->l.dg = NULL;
  int ret = make_lanes (ch);
  if (ret == 0)
    ret = layer_init (&ch->layers[PS_TL_LAYER_TL], l->tl, ch, l->fig);
  if (ret == 0)
    ret = layer_init (&ch->layers[PS_TL_LAYER_MEASURED], l->measured, ch, l->fig);
  if (ret == 0)
    ret = layer_init (&ch->layers[PS_TL_LAYER_GHOST], l->ghost, ch, NULL);
  if (ret == 0)
    ret = index_waits (ch);
  if (ret < 0) {
    ps_timeline_chart_free (ch);
    return ret;
  }
  ch->length = l->tl->makespan_ns;
  if (l->measured)
    ch->length = fmax (ch->length, l->measured->makespan_ns);
  if (l->ghost)
    ch->length = fmax (ch->length, l->ghost->makespan_ns);
  if (!(ch->length > 0))
    ch->length = 1000;
  ch->gutter = ch->l.dg ? ps_text_width ("busy 100%, stalled 100%", &stat_font) + 10 : 70;
  for (uint32_t k = 0; k < ch->n_lanes && k < 256; k++) {
    char name[64];
    ps_timeline_stream_label (ch->lane_tl[k], ch->lane_src[k], name, sizeof name);
    ch->gutter = fmax (ch->gutter, ps_text_width (name, &lane_font) + 14);
  }
  ch->gutter = fmin (ch->gutter, 220);
  *out = ch;
  return 0;
}

void
ps_timeline_chart_free (ps_timeline_chart *ch)
{
  if (!ch)
    return;
  for (int i = 0; i < 3; i++)
    layer_free (&ch->layers[i]);
  free (ch->wait_off);
  free (ch->wait_ids);
  free (ch->wait_start);
  free (ch->wait_pmax);
  free (ch->wait_end);
  free (ch->wait_bmax);
  free (ch->lane_tl);
  free (ch->lane_src);
  free (ch);
}

const ps_timeline_layers *
ps_timeline_chart_layers (const ps_timeline_chart *ch)
{
  return &ch->l;
}

double
ps_timeline_chart_gutter (const ps_timeline_chart *ch)
{
  return ch->gutter;
}

double
ps_timeline_chart_height (const ps_timeline_chart *ch)
{
  return PS_TL_AXIS_H + ch->n_lanes * LANE_PITCH + 4;
}

double
ps_timeline_chart_length (const ps_timeline_chart *ch)
{
  return ch->length;
}

void
ps_timeline_view_fit (ps_timeline_view *v, const ps_timeline_chart *ch, double plot_w)
{
  v->gutter = ch->gutter;
  v->t0 = 0;
  v->ns_per_pt = ch->length / (plot_w > 1 ? plot_w : 1);
  v->y_offset = 0;
}

/* ---- geometry ------------------------------------------------------------- */

static double
plot_x (const ps_timeline_view *v)
{
  return v->x + v->gutter;
}

static double
tx (const ps_timeline_view *v, double t)
{
  return plot_x (v) + (t - v->t0) / v->ns_per_pt;
}

static double
tt (const ps_timeline_view *v, double x)
{
  return v->t0 + (x - plot_x (v)) * v->ns_per_pt;
}

static double
lane_top (const ps_timeline_view *v, uint32_t lane)
{
  return v->y + PS_TL_AXIS_H + lane * LANE_PITCH - v->y_offset;
}

/* The rows of a lane: where each layer's spans go. */
static void
lane_rows (const ps_timeline_chart *ch, double y, double ry[3], double rh[3])
{
  double top = y + 3, bottom = y + PS_TL_LANE_H - 3;
  ry[0] = ry[1] = ry[2] = rh[0] = rh[1] = rh[2] = 0;
  if (ch->l.ghost) {
    ry[PS_TL_LAYER_GHOST] = bottom - 5;
    rh[PS_TL_LAYER_GHOST] = 5;
    bottom -= 7;
  }
  if (ch->l.measured) {
    double mid = top + (bottom - top) * 0.58;
    ry[PS_TL_LAYER_MEASURED] = top;
    rh[PS_TL_LAYER_MEASURED] = mid - top;
    ry[PS_TL_LAYER_TL] = mid + 1.5;
    rh[PS_TL_LAYER_TL] = bottom - mid - 1.5;
  } else {
    ry[PS_TL_LAYER_TL] = top;
    rh[PS_TL_LAYER_TL] = bottom - top;
  }
}

/* First position in [lo, hi) of a non-decreasing array at or above t:
 * with starts, the first item starting at or after t; with running
 * maxima of ends, the first that may reach t. */
static uint32_t
first_at_least (const double *a, uint32_t lo, uint32_t hi, double t)
{
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* ---- walking the visible items of a lane ------------------------------------ */

/* Calls item() for every visible item at least TINY wide and run() for
 * each run of narrower ones, merged while they are less than TINY apart;
 * runs whose items all start within a point are skipped over by binary
 * search. */
typedef struct walker {
  const double *start, *end, *pmax, *bmax;
  uint32_t lo, hi;
  void (*item) (void *ctx, uint32_t pos, double x0, double x1);
  void (*run) (void *ctx, uint32_t pos0, uint32_t pos1, double x0, double x1);
  void *ctx;
} walker;

/* The first position in [lo, hi) whose end passes t, or hi: whole blocks
 * whose largest end does not are skipped. */
static uint32_t
first_ending_after (const walker *w, uint32_t lo, uint32_t hi, double t)
{
  uint32_t j = lo;
  while (j < hi) {
    if (j % BLOCK == 0 && j + BLOCK <= hi && w->bmax[j / BLOCK] <= t) {
      j += BLOCK;
      continue;
    }
    if (w->end[j] > t)
      return j;
    j++;
  }
  return hi;
}

static void
walk (const walker *w, const ps_timeline_view *v, double x_min, double x_max)
{
  double t_min = tt (v, x_min), t_max = tt (v, x_max);
  uint32_t j = first_at_least (w->pmax, w->lo, w->hi, t_min);
  bool on = false;
  double rx0 = 0, rx1 = 0;
  uint32_t rj0 = 0, rj1 = 0;
  while (j < w->hi && w->start[j] <= t_max) {
    double x0 = tx (v, w->start[j]), x1 = tx (v, w->end[j]);
    if (x1 - x0 >= TINY) {
      if (on)
        w->run (w->ctx, rj0, rj1, rx0, rx1);
      on = false;
      w->item (w->ctx, j, fmax (x0, x_min - 2), fmin (x1, x_max + 2));
      j++;
      continue;
    }
    if (on && x0 <= rx1 + TINY) {
      rx1 = fmax (rx1, x1);
    } else {
      if (on)
        w->run (w->ctx, rj0, rj1, rx0, rx1);
      on = true;
      rx0 = x0;
      rx1 = fmax (x0, x1);
      rj0 = j;
    }
    rj1 = j + 1;
    /* Everything that starts within a point of the run and ends there
     * joins it without being looked at one by one. */
    double t_next = tt (v, rx1 + TINY);
    uint32_t j2 = first_at_least (w->start, j + 1, w->hi, t_next);
    uint32_t k = j2 > j + 1 ? first_ending_after (w, j + 1, j2, t_next) : j + 1;
    if (k > j + 1) {
      rx1 = fmax (rx1, fmin (tx (v, w->pmax[k - 1]), rx1 + TINY));
      rj1 = k;
    }
    j = k;
  }
  if (on)
    w->run (w->ctx, rj0, rj1, rx0, rx1);
}

/* ---- drawing ---------------------------------------------------------------- */

typedef struct draw_ctx {
  const ps_timeline_chart *ch;
  const ps_timeline_view *v;
  ps_canvas *c;
  const ps_style *st;
  int layer;
  uint32_t stream; /* of the layer's timeline */
  double y, h;     /* the row */
  double alpha;
  bool titles;
} draw_ctx;

static bool
span_critical (const draw_ctx *d, uint32_t i)
{
  const ps_figures *f = d->ch->l.fig;
  return d->st->show_critical && f && f->tl == d->ch->layers[d->layer].tl && f->span_critical
         && f->span_critical[i];
}

static uint8_t
span_mark (const draw_ctx *d, const ps_timeline *tl, const ps_span *s)
{
  const uint8_t *marks = d->v->node_marks;
  if (!marks || !tl->graph)
    return 0;
  uint8_t m = 0;
  for (uint32_t k = 0; k < s->nodes_count && k < 64; k++) {
    uint32_t v = tl->span_nodes[s->nodes_begin + k];
    if (v < tl->graph->n_nodes)
      m |= marks[v];
  }
  return m;
}

/* What a span is, for its tooltip: label, source, times and more. */
static const char *
span_text (const ps_timeline_chart *ch, int layer_i, uint32_t i, bool critical, char *buf,
           size_t cap)
{
  const ps_timeline *tl = ch->layers[layer_i].tl;
  const ps_span *s = &tl->spans[i];
  char label[256], a[PS_FORMAT_MAX], b[PS_FORMAT_MAX], d[PS_FORMAT_MAX];
  ps_timeline_span_label (tl, i, label, sizeof label);
  const char *src = layer_i == PS_TL_LAYER_GHOST ? "baseline"
                                                 : ps_timeline_source_name (tl->source);
  const char *len = ps_timeline_span_duration_text (tl, i, d, sizeof d);
  /* Titled by its kernel: its own name (an id) as well. */
  uint32_t v = s->nodes_count == 1 ? tl->span_nodes[s->nodes_begin] : PS_NONE;
  bool named = tl->graph && ps_node_titled_by_kernel (tl->graph, v);
  snprintf (buf, cap, "%s%s%s\n%s %s \xc2\xb7 %s \xe2\x86\x92 %s (%s)%s", label,
            named ? "\nnode " : "", named ? ps_node_name (tl->graph, v) : "", src,
            ps_span_kind_name ((ps_span_kind) s->kind),
            ps_format_duration (s->start_ns, a, sizeof a),
            ps_format_duration (s->end_ns, b, sizeof b), len,
            critical ? "\non the critical path" : "");
  return buf;
}

static void
draw_span_item (void *ctx, uint32_t pos, double x0, double x1)
{
  draw_ctx *d = ctx;
  const ps_timeline *tl = d->ch->layers[d->layer].tl;
  uint32_t i = tl->by_stream[pos];
  const ps_span *s = &tl->spans[i];
  const ps_style *st = d->st;
  uint32_t fill = d->layer == PS_TL_LAYER_GHOST
                    ? st->pal->ghost
                    : ps_style_span_fill (st, tl, d->ch->l.plan, d->ch->l.fig, i);
  bool crit = d->layer != PS_TL_LAYER_GHOST && span_critical (d, i);
  ps_paint pt = ps_paint_both (fill, ps_style_outline (st, fill), 0.6);
  pt.fill_alpha = d->alpha;
  if (s->flags & (PS_SPAN_F_UNKNOWN | PS_SPAN_F_NOT_RUN))
    pt.dash = 1;
  if (crit) {
    pt.stroke_rgb = st->pal->critical;
    pt.width = 1.6;
  }
  char title[600];
  if (d->titles)
    span_text (d->ch, d->layer, i, crit, title, sizeof title);
  ps_canvas_begin_group (d->c, "span", d->titles ? title : NULL);
  /* Rounded corners only where they show: arcs cost a cairo fill much. */
  ps_canvas_rect (d->c, x0, d->y, fmax (x1 - x0, TINY), d->h, x1 - x0 > 12 ? 1.5 : 0, &pt);
  uint8_t mark = d->layer == PS_TL_LAYER_GHOST ? 0 : span_mark (d, tl, s);
  if (mark & PS_MARK_CHANGED) {
    ps_paint m = ps_paint_stroke (st->pal->changed, 2);
    m.dash = 1;
    ps_canvas_rect (d->c, x0 + 1, d->y + 1, fmax (x1 - x0 - 2, 0), d->h - 2, 0, &m);
  }
  if (mark & (PS_MARK_SELECTED | PS_MARK_HOVER)) {
    ps_paint m = ps_paint_stroke (mark & PS_MARK_SELECTED ? st->pal->selection : st->pal->hover,
                                  2.2);
    ps_canvas_rect (d->c, x0 - 1, d->y - 1, x1 - x0 + 2, d->h + 2, 0, &m);
  }
  if (x1 - x0 > 24 && d->h >= 11) {
    char label[256];
    ps_timeline_span_label (tl, i, label, sizeof label);
    ps_font f = span_font;
    f.bold = crit;
    ps_canvas_text (d->c, x0 + 3, d->y + d->h / 2 + 3, label, &f, PS_ALIGN_LEFT,
                    ps_color_text_on (fill), x1 - x0 - 6);
  }
  ps_canvas_end_group (d->c);
}

/* Whether a run of merged spans has a colour of its own (the legend's
 * "merged short spans"): not when coloured by stream, where a run is of
 * its row's stream and has its colour (the merged colour there read as
 * another stream's: stream 0's is all but the same); else its spans'
 * colours may differ. */
static bool
run_colored (const ps_style *st)
{
  return st->color != PS_COLOR_BY_STREAM;
}

static void
draw_span_run (void *ctx, uint32_t pos0, uint32_t pos1, double x0, double x1)
{
  draw_ctx *d = ctx;
  const layer *ly = &d->ch->layers[d->layer];
  const ps_timeline *tl = ly->tl;
  const ps_style *st = d->st;
  uint32_t base = tl->stream_off[d->stream] + d->stream, off = tl->stream_off[d->stream];
  bool crit = d->layer != PS_TL_LAYER_GHOST && st->show_critical
              && ly->pcrit[base + (pos1 - off)] > ly->pcrit[base + (pos0 - off)];
  uint32_t fill = d->layer == PS_TL_LAYER_GHOST ? st->pal->ghost
                  : run_colored (st)
                      ? st->pal->merged_fill
                      : ps_style_stream_color (st, (int32_t) tl->streams[d->stream].id);
  ps_paint pt = ps_paint_both (fill, d->layer == PS_TL_LAYER_GHOST ? fill : st->pal->merged_stroke,
                               0.4);
  pt.fill_alpha = d->alpha;
  if (crit) {
    pt.stroke_rgb = st->pal->critical;
    pt.width = 1.2;
  }
  char title[1024];
  if (d->titles) {
    uint32_t n = pos1 - pos0;
    char label[256];
    size_t k = (size_t) snprintf (title, sizeof title, "%u short span%s:", n, n == 1 ? "" : "s");
    for (uint32_t i = 0; i < n && i < 12 && k < sizeof title; i++) {
      ps_timeline_span_label (tl, tl->by_stream[pos0 + i], label, sizeof label);
      k += (size_t) snprintf (title + k, sizeof title - k, "%s %s", i ? "," : "", label);
    }
    if (n > 12 && k < sizeof title)
      k += (size_t) snprintf (title + k, sizeof title - k, " and %u more", n - 12);
    uint32_t nc = ly->pcrit[base + (pos1 - off)] - ly->pcrit[base + (pos0 - off)];
    if (crit && k < sizeof title)
      snprintf (title + k, sizeof title - k, "\non the critical path: %u of them", nc);
  }
  ps_canvas_begin_group (d->c, "spans", d->titles ? title : NULL);
  ps_canvas_rect (d->c, floor (x0), d->y, fmax (ceil (x1) - floor (x0), TINY), d->h, 0, &pt);
  ps_canvas_end_group (d->c);
}

static void
hatch_wait (draw_ctx *d, uint8_t kind, double x0, double x1, const char *title)
{
  const ps_palette *pal = d->st->pal;
  kind = kind < 3 ? kind : 0;
  ps_canvas_begin_group (d->c, "wait", title);
  ps_paint fill = ps_paint_both (pal->wait_fill[kind], pal->wait_stroke[kind], 0.6);
  fill.stroke_alpha = 0.6;
  double y = d->y, h = d->h;
  ps_canvas_rect (d->c, x0, y, fmax (x1 - x0, 0.5), h, 0, &fill);
  ps_canvas_hatch (d->c, x0, y, x1 - x0, h, 5, pal->wait_stroke[kind], 0.7);
  ps_canvas_end_group (d->c);
}

static void
draw_wait_item (void *ctx, uint32_t pos, double x0, double x1)
{
  draw_ctx *d = ctx;
  uint32_t wi = d->ch->wait_ids[pos];
  const ps_wait *w = &d->ch->l.dg->waits[wi];
  char title[600];
  if (d->titles)
    ps_diagnose_wait_text (d->ch->l.tl, d->ch->l.dg, wi, title, sizeof title);
  hatch_wait (d, w->kind, x0, x1, d->titles ? title : NULL);
  if (x1 - x0 > 60 && w->culprit < d->ch->l.tl->n_spans) {
    ps_font f = { 8, false, false };
    char label[300];
    snprintf (label, sizeof label, "waits for %s", ps_timeline_span_name (d->ch->l.tl, w->culprit));
    ps_canvas_text (d->c, x0 + 3, d->y + d->h / 2 + 3, label, &f, PS_ALIGN_LEFT,
                    d->st->pal->text, x1 - x0 - 6);
  }
}

static void
draw_wait_run (void *ctx, uint32_t pos0, uint32_t pos1, double x0, double x1)
{
  draw_ctx *d = ctx;
  const ps_wait *w = &d->ch->l.dg->waits[d->ch->wait_ids[pos0]];
  char title[128];
  if (d->titles)
    snprintf (title, sizeof title, "%u short waits", pos1 - pos0);
  hatch_wait (d, w->kind, x0, fmax (x1, x0 + TINY), d->titles ? title : NULL);
}

/* Lane names and their figures. */
static void
draw_gutter (const ps_timeline_chart *ch, const ps_timeline_view *v, ps_canvas *c,
             uint32_t k0, uint32_t k1)
{
  const ps_palette *pal = v->style->pal;
  const ps_timeline *tl = ch->l.tl;
  const ps_diagnosis *dg = ch->l.dg;
  double len = tl->makespan_ns;
  for (uint32_t k = k0; k < k1; k++) {
    double y = lane_top (v, k);
    char name[64], stats[96];
    ps_timeline_stream_label (ch->lane_tl[k], ch->lane_src[k], name, sizeof name);
    ps_canvas_text (c, v->x + 2, y + 13, name, &lane_font, PS_ALIGN_LEFT, pal->text,
                    v->gutter - 6);
    if (ch->lane_tl[k] != tl) {
      ps_canvas_text (c, v->x + 2, y + 24,
                      ch->lane_tl[k] == ch->l.ghost ? "baseline only" : "measured only",
                      &stat_font, PS_ALIGN_LEFT, pal->text_dim, v->gutter - 6);
      continue;
    }
    if (dg && len > 0) {
      int n = snprintf (stats, sizeof stats, "busy %.0f%%", 100 * dg->streams[k].busy_ns / len);
      if (dg->streams[k].stalled_ns > 0 && n > 0)
        snprintf (stats + n, sizeof stats - (size_t) n, ", stalled %.0f%%",
                  100 * dg->streams[k].stalled_ns / len);
      ps_canvas_text (c, v->x + 2, y + 24, stats, &stat_font, PS_ALIGN_LEFT, pal->text_dim,
                      v->gutter - 6);
    }
  }
}

static void
draw_flows (const ps_timeline_chart *ch, const ps_timeline_view *v, ps_canvas *c, double x_min,
            double x_max)
{
  const ps_timeline *tl = ch->l.tl;
  const ps_palette *pal = v->style->pal;
  double t_min = tt (v, x_min), t_max = tt (v, x_max);
  /* Arrows only help while they can be told apart: a few per 12 points. */
  uint32_t visible = 0, limit = (uint32_t) fmax ((x_max - x_min) / 12, 8);
  if (limit > MAX_FLOWS)
    limit = MAX_FLOWS;
  for (uint32_t i = 0; i < tl->n_flows && visible <= limit; i++)
    visible += fmax (tl->flows[i].from_ns, tl->flows[i].to_ns) >= t_min
               && fmin (tl->flows[i].from_ns, tl->flows[i].to_ns) <= t_max;
  bool stalled_only = visible > limit;
  ps_canvas_begin_group (c, "events", NULL);
  uint32_t drawn = 0;
  for (uint32_t i = 0; i < tl->n_flows && drawn < MAX_FLOWS; i++) {
    const ps_flow *f = &tl->flows[i];
    if (f->from_stream >= tl->n_streams || f->to_stream >= tl->n_streams
        || f->from_stream == f->to_stream || fmax (f->from_ns, f->to_ns) < t_min
        || fmin (f->from_ns, f->to_ns) > t_max)
      continue;
    if (stalled_only && f->stall == PS_NONE)
      continue; /* too many to draw: keep those that stalled */
    double x0 = tx (v, f->from_ns), x1 = tx (v, f->to_ns);
    double y0 = lane_top (v, f->from_stream) + PS_TL_LANE_H / 2;
    double y1 = lane_top (v, f->to_stream) + (f->to_stream > f->from_stream ? 3 : PS_TL_LANE_H - 3);
    ps_paint pt = ps_paint_stroke (pal->event, 1.0);
    pt.stroke_alpha = 0.85;
    ps_canvas_line (c, x0, y0, x1, y1, &pt);
    double dx = x1 - x0, dy = y1 - y0, len = hypot (dx, dy);
    if (len > 1) {
      dx /= len;
      dy /= len;
      ps_pt tri[3] = { { x1, y1 },
                       { x1 - dx * 6 - dy * 2.6, y1 - dy * 6 + dx * 2.6 },
                       { x1 - dx * 6 + dy * 2.6, y1 - dy * 6 - dx * 2.6 } };
      ps_paint ap = ps_paint_fill (pal->event);
      ps_canvas_path (c, tri, 3, true, false, &ap);
    }
    drawn++;
  }
  ps_canvas_end_group (c);
}

double
ps_nice_step (double span, int target)
{
  if (!(span > 0) || !isfinite (span))
    return 1;
  double raw = span / (target > 0 ? target : 8);
  double p = pow (10, floor (log10 (raw)));
  double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

void
ps_draw_time_axis (ps_canvas *c, const ps_palette *pal, double x0, double y, double width,
                   double t0, double t1, double grid_bottom)
{
  if (!(t1 > t0) || !(width > 0))
    return;
  ps_font f = { 8.5, false, false };
  double step = ps_nice_step (t1 - t0, (int) (width / 110) > 2 ? (int) (width / 110) : 2);
  /* One unit for the whole axis, chosen by its largest value; as many
   * decimals as the step needs. */
  double top = fmax (fabs (t0), fabs (t1));
  double div = top >= 1e9 ? 1e9 : top >= 1e6 ? 1e6 : top >= 1e3 ? 1e3 : 1;
  const char *unit = div == 1e9 ? "s" : div == 1e6 ? "ms" : div == 1e3 ? "\xc2\xb5s" : "ns";
  double rel = step / div;
  int decimals = rel >= 1 ? 0 : (int) ceil (-log10 (rel) - 1e-9);
  if (decimals > 6)
    decimals = 6;
  ps_paint axis = ps_paint_stroke (pal->axis, 0.8);
  ps_paint grid = ps_paint_stroke (pal->grid, 0.6);
  ps_canvas_line (c, x0, y, x0 + width, y, &axis);
  double first = ceil (t0 / step - 1e-9) * step;
  for (int i = 0; i < 1000; i++) {
    double t = first + i * step;
    if (t > t1 + step * 1e-6)
      break;
    double x = x0 + (t - t0) / (t1 - t0) * width;
    ps_canvas_line (c, x, y, x, y - 4, &axis);
    if (grid_bottom > y)
      ps_canvas_line (c, x, y, x, grid_bottom, &grid);
    char buf[48];
    if (fabs (t) < step * 1e-6)
      snprintf (buf, sizeof buf, "0");
    else
      snprintf (buf, sizeof buf, "%.*f %s", decimals, t / div, unit);
    ps_align al = x - x0 < 20 ? PS_ALIGN_LEFT : x0 + width - x < 20 ? PS_ALIGN_RIGHT
                                                                   : PS_ALIGN_CENTER;
    ps_canvas_text (c, x, y - 7, buf, &f, al, pal->text_dim, 0);
  }
}

void
ps_timeline_chart_draw (const ps_timeline_chart *ch, const ps_timeline_view *v, ps_canvas *c)
{
  const ps_style *st = v->style;
  const ps_palette *pal = st->pal;
  double px = plot_x (v), pw = v->x + v->width - px;
  double lanes_top = v->y + PS_TL_AXIS_H, lanes_bottom = v->y + v->height;
  if (pw <= 0 || !(v->ns_per_pt > 0))
    return;
  /* The lanes that show. */
  uint32_t k0 = 0, k1 = ch->n_lanes;
  while (k0 < k1 && lane_top (v, k0) + PS_TL_LANE_H < lanes_top)
    k0++;
  while (k1 > k0 && lane_top (v, k1 - 1) > lanes_bottom)
    k1--;
  double content_bottom = fmin (lanes_bottom, lane_top (v, ch->n_lanes));

  ps_paint surface = ps_paint_fill (pal->surface);
  ps_canvas_rect (c, v->x, v->y, v->width, PS_TL_AXIS_H, 0, &surface);
  ps_canvas_clip_push (c, v->x, lanes_top, v->width, lanes_bottom - lanes_top);
  for (uint32_t k = k0; k < k1; k++) {
    ps_paint lane = ps_paint_fill (pal->lane[k % 2]);
    ps_canvas_rect (c, px, lane_top (v, k), pw, PS_TL_LANE_H, 0, &lane);
  }
  draw_gutter (ch, v, c, k0, k1);
  ps_canvas_clip_pop (c);

  ps_draw_time_axis (c, pal, px, v->y + PS_TL_AXIS_H - 4, pw, v->t0, tt (v, px + pw),
                     content_bottom);

  ps_canvas_clip_push (c, px, lanes_top, pw, lanes_bottom - lanes_top);
  draw_ctx d = { ch, v, c, st, PS_TL_LAYER_TL, 0, 0, 0, 1, ps_canvas_has_titles (c) };
  double ry[3], rh[3];
  /* Waits under the spans, hatched across the lane's rows. */
  ps_canvas_begin_group (c, "waits", NULL);
  if (ch->l.dg)
    for (uint32_t k = k0; k < k1; k++) {
      double y = lane_top (v, k);
      d.y = y + 2;
      d.h = PS_TL_LANE_H - 4;
      walker w = { ch->wait_start, ch->wait_end, ch->wait_pmax, ch->wait_bmax, ch->wait_off[k],
                   ch->wait_off[k + 1], draw_wait_item, draw_wait_run, &d };
      walk (&w, v, px, px + pw);
    }
  ps_canvas_end_group (c);
  ps_canvas_begin_group (c, "spans", NULL);
  for (uint32_t k = k0; k < k1; k++) {
    lane_rows (ch, lane_top (v, k), ry, rh);
    static const int order[3] = { PS_TL_LAYER_GHOST, PS_TL_LAYER_TL, PS_TL_LAYER_MEASURED };
    for (int oi = 0; oi < 3; oi++) {
      int li = order[oi];
      const layer *ly = &ch->layers[li];
      if (!ly->tl || rh[li] <= 0 || ly->lane_stream[k] == PS_NONE)
        continue;
      uint32_t sk = ly->lane_stream[k];
      d.layer = li;
      d.stream = sk;
      d.y = ry[li];
      d.h = rh[li];
      d.alpha = li == PS_TL_LAYER_GHOST ? 0.55 : li == PS_TL_LAYER_TL && ch->l.measured ? 0.5 : 1;
      walker w = { ly->start, ly->end, ly->pmax, ly->bmax, ly->tl->stream_off[sk],
                   ly->tl->stream_off[sk + 1], draw_span_item, draw_span_run, &d };
      walk (&w, v, px, px + pw);
    }
  }
  ps_canvas_end_group (c);
  draw_flows (ch, v, c, px, px + pw);
  ps_canvas_clip_pop (c);
}

/* ---- hit testing ------------------------------------------------------------- */

/* The item of [lo, hi) under time t, within slop: one that contains t,
 * else the nearest. */
static uint32_t
hit_in (const double *start, const double *end, const double *pmax, uint32_t lo, uint32_t hi,
        double t, double slop)
{
  uint32_t best = PS_NONE;
  double best_d = INFINITY;
  for (uint32_t j = first_at_least (pmax, lo, hi, t - slop); j < hi && start[j] <= t + slop;
       j++) {
    double s = start[j], e = end[j];
    if (e < t - slop)
      continue;
    double dist = t < s ? s - t : t > e ? t - e : 0;
    if (dist < best_d) {
      best_d = dist;
      best = j;
      if (dist == 0 && e - s > slop)
        break;
    }
  }
  return best;
}

ps_timeline_hit
ps_timeline_chart_hit (const ps_timeline_chart *ch, const ps_timeline_view *v, double x, double y)
{
  ps_timeline_hit h = { false, 0, PS_NONE };
  double px = plot_x (v);
  if (x < px || x > v->x + v->width || y < v->y + PS_TL_AXIS_H || y > v->y + v->height)
    return h;
  double rel = y - (v->y + PS_TL_AXIS_H) + v->y_offset;
  if (rel < 0)
    return h;
  uint32_t lane = (uint32_t) (rel / LANE_PITCH);
  if (lane >= ch->n_lanes)
    return h;
  double t = tt (v, x), slop = v->ns_per_pt * 2;
  double ry[3], rh[3];
  lane_rows (ch, lane_top (v, lane), ry, rh);
  for (int li = 0; li < 3; li++) {
    const layer *ly = &ch->layers[li];
    if (!ly->tl || rh[li] <= 0 || y < ry[li] - 1 || y > ry[li] + rh[li] + 1
        || ly->lane_stream[lane] == PS_NONE)
      continue;
    uint32_t sk = ly->lane_stream[lane];
    uint32_t pos = hit_in (ly->start, ly->end, ly->pmax, ly->tl->stream_off[sk],
                           ly->tl->stream_off[sk + 1], t, slop);
    if (pos != PS_NONE) {
      h.span = true;
      h.layer = (uint8_t) li;
      h.index = ly->tl->by_stream[pos];
      return h;
    }
  }
  if (ch->l.dg) {
    uint32_t pos = hit_in (ch->wait_start, ch->wait_end, ch->wait_pmax, ch->wait_off[lane],
                           ch->wait_off[lane + 1], t, slop);
    if (pos != PS_NONE)
      h.index = ch->wait_ids[pos];
  }
  return h;
}

const char *
ps_timeline_chart_hit_text (const ps_timeline_chart *ch, ps_timeline_hit h, char *buf, size_t cap)
{
  if (cap == 0)
    return "";
  buf[0] = '\0';
  if (h.index == PS_NONE)
    return buf;
  if (h.span) {
    const ps_timeline *tl = ch->layers[h.layer < 3 ? h.layer : 0].tl;
    if (!tl || h.index >= tl->n_spans)
      return buf;
    const ps_figures *f = ch->l.fig;
    bool crit = h.layer != PS_TL_LAYER_GHOST && f && f->tl == tl && f->span_critical
                && f->span_critical[h.index];
    return span_text (ch, h.layer, h.index, crit, buf, cap);
  }
  if (ch->l.dg && h.index < ch->l.dg->n_waits)
    return ps_diagnose_wait_text (ch->l.tl, ch->l.dg, h.index, buf, cap);
  return buf;
}

/* ---- pictures ------------------------------------------------------------------ */

void
ps_timeline_picture_options_init (ps_timeline_picture_options *o)
{
  memset (o, 0, sizeof *o);
  o->color = PS_COLOR_BY_KIND;
}

typedef struct tl_pic {
  ps_timeline_chart *ch;
  ps_style style;
  ps_scene deco; /* title, note and legend */
  ps_frame frame;
  ps_timeline_view view;
} tl_pic;

static void
draw_picture (ps_canvas *c, void *ctx)
{
  tl_pic *p = ctx;
  ps_draw_frame (&p->deco, &p->frame, c);
  ps_timeline_chart_draw (p->ch, &p->view, c);
}

static int
add_swatch (ps_scene *s, const ps_style *st, const char *label, uint32_t fill, uint8_t flags)
{
  int ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, label, fill, ps_style_outline (st, fill), 0);
  if (ret == 0)
    s->legend[s->n_legend - 1].flags = flags;
  return ret;
}

static int
picture_legend (tl_pic *p)
{
  const ps_timeline_layers *l = &p->ch->l;
  const ps_timeline *tl = l->tl;
  const ps_style *st = &p->style;
  const ps_palette *pal = st->pal;
  ps_scene *s = &p->deco;
  int ret = 0;
  bool unknown = false, not_run = false, merged = false;
  bool present[PS_SPAN__COUNT] = { false };
  double plot_w = p->view.width - p->view.gutter;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    const ps_span *sp = &tl->spans[i];
    if (sp->kind < PS_SPAN__COUNT)
      present[sp->kind] = true;
    unknown |= (sp->flags & PS_SPAN_F_UNKNOWN) != 0;
    not_run |= (sp->flags & PS_SPAN_F_NOT_RUN) != 0;
    merged |= (sp->end_ns - sp->start_ns) / p->view.ns_per_pt < TINY;
  }
  (void) plot_w;
  switch (st->color) {
  case PS_COLOR_BY_STREAM:
    for (uint32_t k = 0; k < tl->n_streams && k < 12 && ret == 0; k++) {
      char name[64];
      ps_timeline_stream_label (tl, k, name, sizeof name);
      ret = add_swatch (s, st, name, ps_style_stream_color (st, (int32_t) tl->streams[k].id), 0);
    }
    break;
  case PS_COLOR_BY_DURATION:
    ret = ps_style_add_duration_legend (s, st, l->fig ? l->fig->max_node_ns : 0, unknown);
    unknown = false;
    break;
  case PS_COLOR_BY_GROUP:
    ret = add_swatch (s, st, "fused group (one colour each)", ps_style_group_color (st, 0), 0);
    if (ret == 0)
      ret = add_swatch (s, st, "not fused", pal->unknown, 0);
    break;
  default: {
    static const ps_span_kind kinds[] = { PS_SPAN_KERNEL, PS_SPAN_MEMCPY, PS_SPAN_MEMSET,
                                          PS_SPAN_HOST, PS_SPAN_OTHER };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && ret == 0; i++)
      if (present[kinds[i]])
        ret = add_swatch (s, st, ps_span_kind_name (kinds[i]),
                          ps_style_span_kind_color (st, kinds[i]), 0);
    break;
  }
  }
  if (ret == 0 && unknown)
    ret = add_swatch (s, st, "duration unknown", pal->unknown, 0);
  if (ret == 0 && not_run)
    ret = add_swatch (s, st, "not run", pal->not_run, 0);
  if (ret == 0 && merged && run_colored (st))
    ret = add_swatch (s, st, "merged short spans", pal->merged_fill, 0);
  if (ret == 0 && l->measured)
    ret = add_swatch (s, st, "measured (top), predicted (below)", pal->surface, 0);
  if (ret == 0 && l->ghost)
    ret = add_swatch (s, st, "baseline (bottom strip)", pal->ghost, 0);
  bool kinds_present[3] = { false, false, false };
  for (uint32_t i = 0; l->dg && i < l->dg->n_waits; i++)
    if (l->dg->waits[i].kind < 3)
      kinds_present[l->dg->waits[i].kind] = true;
  static const char *const wait_names[3] = { "stall at an event wait", "waiting for SMs or a copy engine",
                                             "waiting for the host" };
  for (int k = 0; k < 3 && ret == 0; k++)
    if (kinds_present[k]) {
      ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, wait_names[k], pal->wait_fill[k],
                                 pal->wait_stroke[k], 0);
      if (ret == 0)
        s->legend[s->n_legend - 1].flags = PS_SCENE_DASHED; /* drawn hatched */
    }
  if (ret == 0 && tl->n_flows)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE, "event record \xe2\x86\x92 wait", 0, pal->event,
                               0);
  if (ret == 0 && l->fig && l->fig->n_critical && st->show_critical)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE, PS_CRITICAL_LEGEND, 0, pal->critical,
                               PS_SCENE_CRITICAL);
  return ret;
}

static int
tl_pic_init (tl_pic *p, const ps_timeline_layers *l, const ps_timeline_picture_options *o)
{
  memset (p, 0, sizeof *p);
  ps_scene_init (&p->deco);
  ps_timeline_picture_options defaults;
  if (!o) {
    ps_timeline_picture_options_init (&defaults);
    o = &defaults;
  }
  ps_style_init (&p->style, o->theme, o->color);
  int ret = ps_timeline_chart_new (&p->ch, l);
  if (ret < 0)
    return ret;
  const ps_timeline *tl = l->tl;
  double plot_w = o->width > 0 ? o->width : 1100;
  ps_timeline_view *v = &p->view;
  ps_timeline_view_fit (v, p->ch, plot_w);
  v->width = v->gutter + plot_w;
  v->height = ps_timeline_chart_height (p->ch);
  v->style = &p->style;
  ps_scene *s = &p->deco;
  s->theme = (uint8_t) p->style.theme;
  char t[PS_FORMAT_MAX], crit[200];
  const char *gname = tl->graph && tl->graph->name && *tl->graph->name ? tl->graph->name
                                                                        : "trace";
  if (o->title)
    ret = ps_scene_str (s, o->title, &s->title);
  else
    ret = ps_scene_strf (s, &s->title, "%s \xe2\x80\x94 timeline (%s%s%s)", gname,
                         ps_timeline_source_name (tl->source), tl->device[0] ? " on " : "",
                         tl->device);
  const ps_diagnosis *dg = p->ch->l.dg;
  if (ret == 0)
    ret = ps_scene_strf (s, &s->subtitle,
                         "makespan %s; %u span%s on %u stream%s, %u wait%s, %u event arrow%s%s%s",
                         ps_format_duration (tl->makespan_ns, t, sizeof t), tl->n_spans,
                         tl->n_spans == 1 ? "" : "s", tl->n_streams, tl->n_streams == 1 ? "" : "s",
                         dg ? dg->n_waits : 0, dg && dg->n_waits == 1 ? "" : "s", tl->n_flows,
                         tl->n_flows == 1 ? "" : "s",
                         l->fig && l->fig->n_critical ? "; critical path: " : "",
                         l->fig && l->fig->n_critical
                           ? ps_figures_critical_text (l->fig, crit, sizeof crit) : "");
  if (ret == 0)
    ret = picture_legend (p);
  ps_frame_compute (s, v->width + 8, v->height, &p->frame);
  v->x = p->frame.diagram_x;
  v->y = p->frame.diagram_y;
  return ret;
}

static void
tl_pic_free (tl_pic *p)
{
  ps_scene_free (&p->deco);
  ps_timeline_chart_free (p->ch);
}

int
ps_timeline_write_svg (const ps_timeline_layers *l, const ps_timeline_picture_options *o,
                       FILE *out)
{
  tl_pic p;
  int ret = tl_pic_init (&p, l, o);
  if (ret == 0)
    ret = ps_picture_write_svg (p.frame.width, p.frame.height, draw_picture, &p, out);
  tl_pic_free (&p);
  return ret;
}

int
ps_timeline_write_png (const ps_timeline_layers *l, const ps_timeline_picture_options *o,
                       FILE *out)
{
  tl_pic p;
  int ret = tl_pic_init (&p, l, o);
  if (ret == 0)
    ret = ps_picture_write_png (p.frame.width, p.frame.height, draw_picture, &p, out);
  tl_pic_free (&p);
  return ret;
}


int
ps_timeline_write_dot (const ps_timeline_layers *l, FILE *out)
{
  tl_pic p;
  int ret = tl_pic_init (&p, l, NULL);
  if (ret < 0) {
    tl_pic_free (&p);
    return ret;
  }
  const ps_timeline *tl = l->tl;
  const ps_timeline_view *v = &p.view;
  const ps_style *st = &p.style;
  /* Graphviz's y axis points up: flip against the picture's height. */
  double H = p.frame.height;
  fputs ("// planscope timeline: positions are pinned; draw it as laid out with\n"
         "//   neato -n2 -Tsvg timeline.dot > timeline.svg\n"
         "digraph timeline {\n  graph [label=",
         out);
  ps_dot_write_string (out, p.deco.strings + p.deco.title);
  fprintf (out,
           ", labelloc=t, fontname=\"DejaVu Sans\", splines=line, outputorder=edgesfirst];\n"
           "  node [shape=box, style=filled, fixedsize=true, fontname=\"DejaVu Sans\", "
           "fontsize=8, penwidth=0.6];\n  edge [color=\"#%06x\", arrowsize=0.5];\n",
           st->pal->event);
  for (uint32_t k = 0; k < tl->n_streams; k++) {
    char name[64];
    ps_timeline_stream_label (tl, k, name, sizeof name);
    fprintf (out, "  lane%u [shape=plaintext, style=\"\", fixedsize=false, label=", k);
    ps_dot_write_string (out, name);
    fprintf (out, ", pos=\"%.2f,%.2f!\"];\n", v->x + v->gutter / 2,
             H - (lane_top (v, k) + PS_TL_LANE_H / 2));
  }
  const ps_figures *f = l->fig && l->fig->tl == tl ? l->fig : NULL;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    const ps_span *s = &tl->spans[i];
    if (s->stream >= tl->n_streams)
      continue;
    double x0 = tx (v, s->start_ns), x1 = tx (v, s->end_ns);
    double w = fmax (x1 - x0, 0.5);
    char label[256];
    ps_timeline_span_label (tl, i, label, sizeof label);
    uint32_t fill = ps_style_span_fill (st, tl, l->plan, l->fig, i);
    /* Labels cut to the box, as in the pictures (8 pt in the DOT too). */
    ps_font f8 = { 8, false, false };
    char fit[300];
    fprintf (out, "  s%u [label=", i);
    ps_dot_write_string (out, w > 24 ? ps_text_fit (label, &f8, w - 8, fit, sizeof fit) : "");
    fputs (", tooltip=", out);
    ps_dot_write_string (out, label);
    bool crit = f && f->span_critical[i];
    fprintf (out, ", pos=\"%.2f,%.2f!\", width=%.4f, height=%.4f, fillcolor=\"#%06x\"", x0 + w / 2,
             H - (lane_top (v, s->stream) + PS_TL_LANE_H / 2), w / 72, (PS_TL_LANE_H - 6) / 72,
             fill);
    if (crit)
      fprintf (out, ", color=\"#%06x\", penwidth=1.6", st->pal->critical);
    fputs ("];\n", out);
  }
  for (uint32_t i = 0; l->dg && i < l->dg->n_waits; i++) {
    const ps_wait *wt = &l->dg->waits[i];
    if (wt->stream >= tl->n_streams || !(wt->end_ns > wt->start_ns))
      continue;
    double x0 = tx (v, wt->start_ns), x1 = tx (v, wt->end_ns);
    double w = fmax (x1 - x0, 0.5);
    char why[600];
    ps_diagnose_wait_text (tl, l->dg, i, why, sizeof why);
    uint8_t k = wt->kind < 3 ? wt->kind : 0;
    fprintf (out, "  wait%u [label=\"\", tooltip=", i);
    ps_dot_write_string (out, why);
    fprintf (out,
             ", style=\"filled,dashed\", fillcolor=\"#%06x\", color=\"#%06x\", "
             "pos=\"%.2f,%.2f!\", width=%.4f, height=%.4f];\n",
             st->pal->wait_fill[k], st->pal->wait_stroke[k], x0 + w / 2,
             H - (lane_top (v, wt->stream) + PS_TL_LANE_H / 2), w / 72, (PS_TL_LANE_H - 6) / 72);
  }
  for (uint32_t i = 0; i < tl->n_flows; i++) {
    const ps_flow *fl = &tl->flows[i];
    if (fl->from_span < tl->n_spans && fl->to_span < tl->n_spans && fl->from_span != fl->to_span)
      fprintf (out, "  s%u -> s%u [constraint=false];\n", fl->from_span, fl->to_span);
  }
  fputs ("}\n", out);
  tl_pic_free (&p);
  return ferror (out) ? PS_EIO : 0;
}
