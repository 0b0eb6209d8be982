/* ps-figures.c: the figures of a plan and its timeline (see ps-figures.h),
 * in one pass over the spans and one over the nodes. */
#include "ps-figures.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ps-array.h"
#include "ps-format.h"

const char *
ps_figure_source_name (ps_figure_source s)
{
#define PS__FIGURE_SOURCE_NAME(e, name) name,
  static const char *const names[] = { PS_FIGURE_SOURCE_MAP (PS__FIGURE_SOURCE_NAME) };
#undef PS__FIGURE_SOURCE_NAME
  return (unsigned) s < PS_FIGURE__COUNT ? names[s] : "?";
}

void
ps_figures_free (ps_figures *f)
{
  free (f->node_span);
  free (f->node_start);
  free (f->node_ns);
  free (f->node_source);
  free (f->node_stream);
  free (f->node_critical);
  free (f->critical);
  free (f->span_critical);
  free (f->buf_first);
  free (f->buf_last);
  free (f->buf_first_span);
  free (f->buf_last_span);
  memset (f, 0, sizeof *f);
}

static bool
is_work (ps_op op)
{
  return op == PS_OP_KERNEL || op == PS_OP_MEMCPY || op == PS_OP_MEMSET || op == PS_OP_HOST
         || op == PS_OP_OPAQUE;
}

int
ps_figures_build (ps_figures *f, const ps_plan *p, const ps_timeline *tl,
                  const ps_diagnosis *dg)
{
  memset (f, 0, sizeof *f);
  const ps_graph *g = tl->graph ? tl->graph : p ? p->graph : NULL;
  if (!g)
    return PS_EINVAL;
  uint32_t n = g->n_nodes, nb = g->n_buffers;
  f->plan = p;
  f->tl = tl;
  f->dg = dg;
  f->n_nodes = n;
  f->n_buffers = nb;
  f->makespan_ns = tl->makespan_ns;
  size_t n1 = (size_t) n + 1, b1 = (size_t) nb + 1;
  f->node_span = malloc (n1 * sizeof *f->node_span);
  f->node_start = malloc (n1 * sizeof *f->node_start);
  f->node_ns = malloc (n1 * sizeof *f->node_ns);
  f->node_source = calloc (n1, 1);
  f->node_stream = malloc (n1 * sizeof *f->node_stream);
  f->node_critical = calloc (n1, 1);
  f->buf_first = malloc (b1 * sizeof *f->buf_first);
  f->buf_last = malloc (b1 * sizeof *f->buf_last);
  f->span_critical = calloc ((size_t) tl->n_spans + 1, 1);
  f->buf_first_span = malloc (b1 * sizeof *f->buf_first_span);
  f->buf_last_span = malloc (b1 * sizeof *f->buf_last_span);
  if (!f->span_critical || !f->buf_first_span || !f->buf_last_span || !f->node_span || !f->node_start || !f->node_ns || !f->node_source || !f->node_stream
      || !f->node_critical || !f->buf_first || !f->buf_last) {
    ps_figures_free (f);
    return PS_ENOMEM;
  }
  for (uint32_t v = 0; v < n; v++) {
    f->node_span[v] = PS_NONE;
    f->node_start[v] = f->node_ns[v] = NAN;
    f->node_stream[v] = -1;
    if (p && p->node_step && p->node_step[v] < p->n_steps)
      f->node_stream[v] = p->steps[p->node_step[v]].stream;
  }
  for (uint32_t b = 0; b < nb; b++) {
    f->buf_first[b] = f->buf_last[b] = NAN;
    f->buf_first_span[b] = f->buf_last_span[b] = PS_NONE;
  }

  /* Spans: each names the nodes it ran. */
  ps_figure_source ran = tl->source == PS_TL_MEASURED ? PS_FIGURE_MEASURED : PS_FIGURE_PREDICTED;
  for (uint32_t x = 0; x < tl->n_spans; x++) {
    const ps_span *s = &tl->spans[x];
    ps_figure_source src = (s->flags & PS_SPAN_F_NOT_RUN)   ? PS_FIGURE_NOT_RUN
                           : (s->flags & PS_SPAN_F_UNKNOWN) ? PS_FIGURE_UNKNOWN
                           : (s->flags & PS_SPAN_F_ESTIMATED) && ran == PS_FIGURE_PREDICTED
                             ? PS_FIGURE_ESTIMATED
                             : ran;
    for (uint32_t k = 0; k < s->nodes_count; k++) {
      uint32_t at = s->nodes_begin + k, v = tl->span_nodes[at];
      ps_node_prefetch (g, tl->span_nodes, tl->n_span_nodes, at, f->buf_first,
                        sizeof *f->buf_first, f->buf_last, sizeof *f->buf_last);
      if (v >= n || f->node_span[v] != PS_NONE)
        continue;
      f->node_span[v] = x;
      f->node_start[v] = s->start_ns;
      f->node_source[v] = (uint8_t) src;
      bool timed = src == ran || src == PS_FIGURE_ESTIMATED;
      f->node_ns[v] = timed ? s->end_ns - s->start_ns : NAN;
      if (timed && f->node_ns[v] > f->max_node_ns)
        f->max_node_ns = f->node_ns[v];
      if (src == PS_FIGURE_NOT_RUN)
        continue;
      const ps_node *nd = &g->nodes[v];
      for (uint32_t i = 0; i < nd->reads_count + nd->writes_count; i++) {
        uint32_t a = ps_node_access (nd, i);
        if (a >= g->n_access)
          break;
        uint32_t b = g->access[a];
        if (b >= nb)
          continue;
        if (isnan (f->buf_first[b]) || s->start_ns < f->buf_first[b]) {
          f->buf_first[b] = s->start_ns;
          f->buf_first_span[b] = x;
        }
        if (isnan (f->buf_last[b]) || s->end_ns > f->buf_last[b]) {
          f->buf_last[b] = s->end_ns;
          f->buf_last_span[b] = x;
        }
      }
    }
  }
  /* Nodes no span ran: work of a branch the run leaves out, or no work. */
  for (uint32_t v = 0; v < n; v++)
    if (f->node_span[v] == PS_NONE)
      f->node_source[v] = ps_node_not_run (g, v, NULL) && is_work ((ps_op) g->nodes[v].op)
                            ? PS_FIGURE_NOT_RUN : PS_FIGURE_NONE;

  /* The critical path: the nodes of the diagnosis's spans. */
  if (dg && dg->critical) {
    uint32_t total = 0;
    for (uint32_t i = 0; i < dg->n_critical; i++)
      if (dg->critical[i] < tl->n_spans)
        total += tl->spans[dg->critical[i]].nodes_count;
    f->critical = malloc (((size_t) total + 1) * sizeof *f->critical);
    if (!f->critical) {
      ps_figures_free (f);
      return PS_ENOMEM;
    }
    for (uint32_t i = 0; i < dg->n_critical; i++) {
      uint32_t x = dg->critical[i];
      if (x >= tl->n_spans)
        continue;
      const ps_span *s = &tl->spans[x];
      f->span_critical[x] = 1;
      for (uint32_t k = 0; k < s->nodes_count; k++) {
        uint32_t v = tl->span_nodes[s->nodes_begin + k];
        if (v < n && !f->node_critical[v]) {
          f->node_critical[v] = 1;
          f->critical[f->n_critical++] = v;
        }
      }
    }
    f->critical_work_ns = dg->critical_work_ns;
  }
  return 0;
}

const char *
ps_figures_node_text (const ps_figures *f, const ps_graph *g, uint32_t v, char *buf, size_t cap)
{
  if (cap == 0)
    return "";
  buf[0] = '\0';
  if (!f || v >= f->n_nodes)
    return buf;
  switch ((ps_figure_source) f->node_source[v]) {
  case PS_FIGURE_MEASURED:
  case PS_FIGURE_PREDICTED:
    return ps_format_duration (f->node_ns[v], buf, cap);
  case PS_FIGURE_UNKNOWN:
    snprintf (buf, cap, "unknown");
    return buf;
  case PS_FIGURE_ESTIMATED:
    return ps_format_duration_marked (f->node_ns[v], true, buf, cap);
  case PS_FIGURE_NOT_RUN: {
    uint32_t c = PS_NONE;
    const char *assume = "?";
    if (g && ps_node_not_run (g, v, &c) && c < g->n_nodes && g->nodes[c].aux < g->n_conds)
      assume = ps_assume_name ((ps_assume) g->conds[g->nodes[c].aux].assume);
    snprintf (buf, cap, "not run (assume: %s)", assume);
    return buf;
  }
  default:
    return buf;
  }
}

const char *
ps_figures_critical_text (const ps_figures *f, char *buf, size_t cap)
{
  char w[PS_FORMAT_MAX], m[PS_FORMAT_MAX];
  if (cap == 0)
    return "";
  buf[0] = '\0';
  if (!f || f->n_critical == 0)
    return buf;
  /* Work the model only estimated, or cannot tell, says so. */
  uint32_t estimated = 0, unknown = 0;
  for (uint32_t k = 0; k < f->n_critical; k++) {
    uint32_t v = f->critical[k];
    estimated += v < f->n_nodes && f->node_source[v] == PS_FIGURE_ESTIMATED;
    unknown += v < f->n_nodes && f->node_source[v] == PS_FIGURE_UNKNOWN;
  }
  char u[64] = "";
  if (unknown)
    snprintf (u, sizeof u, " and %u of unknown duration", unknown);
  snprintf (buf, cap, "%u node%s, %s of work%s in the %s %s run", f->n_critical,
            f->n_critical == 1 ? "" : "s",
            ps_format_duration_marked (f->critical_work_ns, estimated > 0, w, sizeof w), u,
            ps_format_duration (f->makespan_ns, m, sizeof m),
            f->tl && f->tl->source == PS_TL_MEASURED   ? "measured"
            : f->tl && f->tl->source == PS_TL_IMPORTED ? "imported"
                                                       : "predicted");
  return buf;
}

static double
finish (const ps_figures_delta *d, int k)
{
  return isnan (d->start[k]) || isnan (d->ns[k]) ? d->start[k] : d->start[k] + d->ns[k];
}

static double
change (const ps_figures_delta *d)
{
  double a = finish (d, 0), b = finish (d, 1);
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b) ? 0 : INFINITY;
  return fabs (b - a);
}

static int
cmp_delta (const void *x, const void *y)
{
  const ps_figures_delta *a = x, *b = y;
  double ca = change (a), cb = change (b);
  if (ca != cb)
    return ca > cb ? -1 : 1;
  return a->node < b->node ? -1 : a->node > b->node;
}

static bool
differs (double a, double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) != isnan (b);
  return fabs (a - b) > 0.5;
}

int
ps_figures_diff (const ps_figures *a, const ps_figures *b, ps_figures_delta **out, uint32_t *n)
{
  *out = NULL;
  *n = 0;
  if (a->n_nodes != b->n_nodes)
    return PS_EINVAL;
  uint32_t m = 0;
  for (uint32_t v = 0; v < a->n_nodes; v++)
    m += a->node_stream[v] != b->node_stream[v] || differs (a->node_start[v], b->node_start[v])
         || differs (a->node_ns[v], b->node_ns[v]) || a->node_critical[v] != b->node_critical[v];
  ps_figures_delta *d = malloc (((size_t) m + 1) * sizeof *d);
  if (!d)
    return PS_ENOMEM;
  uint32_t k = 0;
  for (uint32_t v = 0; v < a->n_nodes && k < m; v++) {
    if (!(a->node_stream[v] != b->node_stream[v] || differs (a->node_start[v], b->node_start[v])
          || differs (a->node_ns[v], b->node_ns[v])
          || a->node_critical[v] != b->node_critical[v]))
      continue;
    const ps_figures *f[2] = { a, b };
    ps_figures_delta *e = &d[k++];
    e->node = v;
    for (int i = 0; i < 2; i++) {
      e->stream[i] = f[i]->node_stream[v];
      e->start[i] = f[i]->node_start[v];
      e->ns[i] = f[i]->node_ns[v];
      e->source[i] = f[i]->node_source[v];
      e->critical[i] = f[i]->node_critical[v] != 0;
    }
  }
  ps_array_sort (d, k, sizeof *d, cmp_delta);
  *out = d;
  *n = k;
  return 0;
}
