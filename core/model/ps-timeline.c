/* ps-timeline.c: the timeline structure (see ps-timeline.h). */
#include "ps-timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-demangle.h"
#include "ps-format.h"

#define MAX_STRING 4096

void
ps_timeline_init (ps_timeline *tl, ps_timeline_source source)
{
  memset (tl, 0, sizeof *tl);
  tl->source = source;
}

void
ps_timeline_free (ps_timeline *tl)
{
  free (tl->streams);
  free (tl->spans);
  free (tl->span_nodes);
  free (tl->stalls);
  free (tl->flows);
  free (tl->host_waits);
  free (tl->cpu_ops);
  free (tl->launches);
  free (tl->strings);
  free (tl->stream_off);
  free (tl->by_stream);
  memset (tl, 0, sizeof *tl);
}

int
ps_timeline_add_stream (ps_timeline *tl, int64_t id, int32_t device, uint32_t *index_out)
{
  int rc = PS_ARRAY_RESERVE (tl->streams, tl->streams_cap, (uint64_t) tl->n_streams + 1);
  if (rc < 0)
    return rc;
  tl->streams[tl->n_streams] = (ps_tl_stream) { id, device };
  if (index_out)
    *index_out = tl->n_streams;
  tl->n_streams++;
  return 0;
}

int
ps_timeline_add_span (ps_timeline *tl, const ps_span *s, const uint32_t *nodes, uint32_t n_nodes,
                      uint32_t *index_out)
{
  int rc = PS_ARRAY_RESERVE (tl->spans, tl->spans_cap, (uint64_t) tl->n_spans + 1);
  if (rc < 0)
    return rc;
  rc = PS_ARRAY_RESERVE (tl->span_nodes, tl->span_nodes_cap, (uint64_t) tl->n_span_nodes + n_nodes);
  if (rc < 0)
    return rc;
  ps_span *d = &tl->spans[tl->n_spans];
  *d = *s;
  d->nodes_begin = tl->n_span_nodes;
  d->nodes_count = n_nodes;
  if (n_nodes)
    memcpy (tl->span_nodes + tl->n_span_nodes, nodes, n_nodes * sizeof *nodes);
  tl->n_span_nodes += n_nodes;
  if (index_out)
    *index_out = tl->n_spans;
  tl->n_spans++;
  return 0;
}

int
ps_timeline_add_stall (ps_timeline *tl, const ps_stall *s, uint32_t *index_out)
{
  int rc = PS_ARRAY_RESERVE (tl->stalls, tl->stalls_cap, (uint64_t) tl->n_stalls + 1);
  if (rc < 0)
    return rc;
  tl->stalls[tl->n_stalls] = *s;
  if (index_out)
    *index_out = tl->n_stalls;
  tl->n_stalls++;
  return 0;
}

int
ps_timeline_add_flow (ps_timeline *tl, const ps_flow *f, uint32_t *index_out)
{
  int rc = PS_ARRAY_RESERVE (tl->flows, tl->flows_cap, (uint64_t) tl->n_flows + 1);
  if (rc < 0)
    return rc;
  tl->flows[tl->n_flows] = *f;
  if (index_out)
    *index_out = tl->n_flows;
  tl->n_flows++;
  return 0;
}

int
ps_timeline_add_host_wait (ps_timeline *tl, const ps_host_wait *w)
{
  int rc = PS_ARRAY_RESERVE (tl->host_waits, tl->host_waits_cap, (uint64_t) tl->n_host_waits + 1);
  if (rc < 0)
    return rc;
  tl->host_waits[tl->n_host_waits++] = *w;
  return 0;
}

int
ps_timeline_add_cpu_op (ps_timeline *tl, const ps_tl_cpu_op *op, uint32_t *index_out)
{
  int rc = PS_ARRAY_RESERVE (tl->cpu_ops, tl->cpu_ops_cap, (uint64_t) tl->n_cpu_ops + 1);
  if (rc < 0)
    return rc;
  if (index_out)
    *index_out = tl->n_cpu_ops;
  tl->cpu_ops[tl->n_cpu_ops++] = *op;
  return 0;
}

int
ps_timeline_add_string (ps_timeline *tl, const char *s, size_t len, uint32_t *off)
{
  if (len > MAX_STRING) {
    len = MAX_STRING;
    /* Do not cut a UTF-8 sequence in half. */
    while (len > 0 && ((unsigned char) s[len] & 0xc0) == 0x80)
      len--;
  }
  int rc = PS_ARRAY_RESERVE (tl->strings, tl->strings_cap, (uint64_t) tl->strings_len + len + 1);
  if (rc < 0)
    return rc;
  memcpy (tl->strings + tl->strings_len, s, len);
  /* Embedded NUL bytes would cut the name short; replace them. */
  for (size_t i = 0; i < len; i++)
    if (tl->strings[tl->strings_len + i] == 0)
      tl->strings[tl->strings_len + i] = '?';
  tl->strings[tl->strings_len + len] = 0;
  *off = tl->strings_len;
  tl->strings_len += (uint32_t) len + 1;
  return 0;
}

typedef struct {
  double start, end;
  uint32_t idx;
} sort_key;

static int
cmp_start (const void *a, const void *b)
{
  const sort_key *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

uint32_t
ps_timeline_span_before (const ps_timeline *tl, uint32_t stream, double t)
{
  if (!tl->stream_off || stream >= tl->n_streams)
    return PS_NONE;
  uint32_t lo = tl->stream_off[stream], hi = tl->stream_off[stream + 1];
  /* The last span that starts at or before t. */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (tl->spans[tl->by_stream[mid]].start_ns <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == tl->stream_off[stream] ? PS_NONE : tl->by_stream[lo - 1];
}

int
ps_timeline_finish (ps_timeline *tl)
{
  free (tl->stream_off);
  free (tl->by_stream);
  tl->stream_off = calloc ((size_t) tl->n_streams + 1, sizeof *tl->stream_off);
  tl->by_stream = malloc (((size_t) tl->n_spans + 1) * sizeof *tl->by_stream);
  if (!tl->stream_off || !tl->by_stream)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    uint32_t s = tl->spans[i].stream;
    if (s < tl->n_streams)
      tl->stream_off[s + 1]++;
  }
  for (uint32_t s = 0; s < tl->n_streams; s++)
    tl->stream_off[s + 1] += tl->stream_off[s];
  uint32_t *fill = calloc ((size_t) tl->n_streams + 1, sizeof *fill);
  if (!fill)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    uint32_t s = tl->spans[i].stream;
    if (s < tl->n_streams)
      tl->by_stream[tl->stream_off[s] + fill[s]++] = i;
  }
  free (fill);
  /* Each stream's spans by start (then end, then index).  A simulated
   * run records them so already, stream by stream: only a stream found
   * out of order is sorted, through keys of its own. */
  for (uint32_t s = 0; s < tl->n_streams; s++) {
    uint32_t *ids = tl->by_stream + tl->stream_off[s],
             n = tl->stream_off[s + 1] - tl->stream_off[s];
    uint32_t i = 1;
    for (; i < n; i++) {
      const ps_span *a = &tl->spans[ids[i - 1]], *b = &tl->spans[ids[i]];
      sort_key x = { a->start_ns, a->end_ns, ids[i - 1] }, y = { b->start_ns, b->end_ns, ids[i] };
      if (cmp_start (&x, &y) > 0)
        break;
    }
    if (i >= n)
      continue;
    sort_key *keys = malloc ((size_t) n * sizeof *keys);
    if (!keys)
      return PS_ENOMEM;
    for (uint32_t k = 0; k < n; k++)
      keys[k] = (sort_key) { tl->spans[ids[k]].start_ns, tl->spans[ids[k]].end_ns, ids[k] };
    ps_array_sort (keys, n, sizeof *keys, cmp_start);
    for (uint32_t k = 0; k < n; k++)
      ids[k] = keys[k].idx;
    free (keys);
  }

  tl->multi_device = false;
  for (uint32_t i = 1; i < tl->n_streams; i++)
    if (tl->streams[i].device != tl->streams[0].device)
      tl->multi_device = true;

  double end = 0;
  for (uint32_t i = 0; i < tl->n_spans; i++)
    end = fmax (end, tl->spans[i].end_ns);
  for (uint32_t i = 0; i < tl->n_stalls; i++)
    end = fmax (end, tl->stalls[i].end_ns);
  tl->makespan_ns = end;

  /* Each flow's span: the first on its stream that starts at or after
   * to_ns.  A run records a stream's flows in time order, so a cursor per
   * stream finds them in one pass over its spans; a flow before its
   * stream's cursor is searched for instead. */
  uint32_t *at = malloc (((size_t) tl->n_streams + 1) * sizeof *at);
  if (!at)
    return PS_ENOMEM;
  memcpy (at, tl->stream_off, ((size_t) tl->n_streams + 1) * sizeof *at);
  for (uint32_t i = 0; i < tl->n_flows; i++) {
    ps_flow *f = &tl->flows[i];
    f->to_span = PS_NONE;
    if (f->to_stream >= tl->n_streams)
      continue;
    uint32_t s = f->to_stream, lo = tl->stream_off[s], last = tl->stream_off[s + 1], hi = last;
    if (at[s] > lo && tl->spans[tl->by_stream[at[s] - 1]].start_ns >= f->to_ns) {
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (tl->spans[tl->by_stream[mid]].start_ns < f->to_ns)
          lo = mid + 1;
        else
          hi = mid;
      }
    } else {
      lo = at[s];
      while (lo < hi && tl->spans[tl->by_stream[lo]].start_ns < f->to_ns)
        lo++;
      at[s] = lo;
    }
    if (lo < last)
      f->to_span = tl->by_stream[lo];
  }
  free (at);
  return 0;
}

const char *
ps_span_kind_name (ps_span_kind k)
{
  static const char *names[] = { "kernel", "memcpy", "memset", "host", "other" };
  return (unsigned) k < PS_SPAN__COUNT ? names[k] : "other";
}

ps_span_kind
ps_span_kind_of_op (ps_op op)
{
#define PS__SPAN_OF(e, name, short_name, span) PS_SPAN_##span,
  static const uint8_t kinds[] = { PS_OP_MAP (PS__SPAN_OF) };
#undef PS__SPAN_OF
  return (unsigned) op < PS_OP__COUNT ? (ps_span_kind) kinds[op] : PS_SPAN_OTHER;
}

const char *
ps_timeline_source_name (ps_timeline_source s)
{
  switch (s) {
  case PS_TL_IMPORTED:
    return "imported";
  case PS_TL_MEASURED:
    return "measured";
  case PS_TL_SIMULATED:
  default:
    return "simulated";
  }
}

const char *
ps_timeline_span_name (const ps_timeline *tl, uint32_t span)
{
  if (span >= tl->n_spans)
    return "?";
  const ps_span *s = &tl->spans[span];
  if (s->name != PS_NONE && s->name < tl->strings_len)
    return tl->strings + s->name;
  if (s->nodes_count && tl->graph) {
    uint32_t v = tl->span_nodes[s->nodes_begin];
    if (v < tl->graph->n_nodes)
      return ps_node_name (tl->graph, v);
  }
  return ps_span_kind_name ((ps_span_kind) s->kind);
}

const char *
ps_timeline_span_function (const ps_timeline *tl, uint32_t span)
{
  if (span >= tl->n_spans || !tl->graph)
    return NULL;
  const ps_span *s = &tl->spans[span];
  if (s->nodes_count != 1)
    return NULL;
  const ps_graph *g = tl->graph;
  uint32_t v = tl->span_nodes[s->nodes_begin];
  if (v >= g->n_nodes || g->nodes[v].op != PS_OP_KERNEL || g->nodes[v].aux >= g->n_kernels)
    return NULL;
  return ps_graph_str (g, g->kernels[g->nodes[v].aux].function);
}

void
ps_timeline_span_label (const ps_timeline *tl, uint32_t span, char *buf, size_t cap)
{
  if (!cap)
    return;
  buf[0] = 0;
  if (span >= tl->n_spans)
    return;
  const ps_span *s = &tl->spans[span];
  if (s->nodes_count == 1 && tl->graph && tl->span_nodes[s->nodes_begin] < tl->graph->n_nodes) {
    char t[PS_MAX_NAME];
    snprintf (buf, cap, "%s", ps_node_title (tl->graph, tl->span_nodes[s->nodes_begin], t, sizeof t));
    return;
  }
  if (s->nodes_count <= 1 || !tl->graph) {
    /* An imported op's kernel name, demangled for people. */
    char t[PS_MAX_NAME];
    snprintf (buf, cap, "%s", ps_demangle (ps_timeline_span_name (tl, span), false, t, sizeof t));
    return;
  }
  size_t used = 0;
  for (uint32_t i = 0; i < s->nodes_count && used + 1 < cap; i++) {
    uint32_t v = tl->span_nodes[s->nodes_begin + i];
    const char *n = v < tl->graph->n_nodes ? ps_node_name (tl->graph, v) : "?";
    int w = snprintf (buf + used, cap - used, "%s%s", i ? " + " : "", n);
    if (w < 0)
      break;
    used += (size_t) w;
  }
}

void
ps_timeline_stream_label (const ps_timeline *tl, uint32_t stream, char *buf, size_t cap)
{
  if (stream >= tl->n_streams) {
    snprintf (buf, cap, "stream ?");
    return;
  }
  const ps_tl_stream *s = &tl->streams[stream];
  if (tl->multi_device && s->device >= 0)
    snprintf (buf, cap, "dev %d stream %lld", s->device, (long long) s->id);
  else
    snprintf (buf, cap, "stream %lld", (long long) s->id);
}

const char *
ps_timeline_span_duration_text (const ps_timeline *tl, uint32_t span, char *buf, size_t cap)
{
  if (cap == 0)
    return "";
  if (span >= tl->n_spans) {
    buf[0] = '\0';
    return buf;
  }
  const ps_span *s = &tl->spans[span];
  if (s->flags & PS_SPAN_F_NOT_RUN)
    snprintf (buf, cap, "not run");
  else if (s->flags & PS_SPAN_F_UNKNOWN)
    snprintf (buf, cap, "unknown");
  else
    ps_format_duration_marked (s->end_ns - s->start_ns, s->flags & PS_SPAN_F_ESTIMATED, buf,
                               cap);
  return buf;
}
