/* ps-trace-export.c: Chrome trace export (see ps-trace-export.h). */
#include "ps-trace-export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-file.h"
#include "ps-jsonw.h"
#include "util/ps-outbuf.h"

/* Times are rounded to whole nanoseconds first, so that a slice's ts + dur
 * is exactly the next slice's ts when they touch. */
static long long
ins (double t)
{
  if (!(t > 0))
    return 0;
  if (t > 9e15)
    return 9000000000000000LL;
  return llround (t);
}

/* ns >= 0: every time written went through ins (), and durations are
 * clamped to be no shorter than 0. */
static void
us (ps_outbuf *out, long long ns)
{
  ps_outbuf_uint_left (out, (uint64_t) ns / 1000, 0);
  char frac[4]
      = { '.', (char) ('0' + ns / 100 % 10), (char) ('0' + ns / 10 % 10), (char) ('0' + ns % 10) };
  ps_outbuf_mem (out, frac, sizeof frac);
}

static const char *
span_cat (uint8_t kind)
{
  switch (kind) {
  case PS_SPAN_KERNEL:
    return "kernel";
  case PS_SPAN_MEMCPY:
    return "gpu_memcpy";
  case PS_SPAN_MEMSET:
    return "gpu_memset";
  case PS_SPAN_HOST:
    return "gpu_host_callback";
  default:
    return "gpu_other";
  }
}

typedef struct {
  const ps_timeline *tl;
  ps_outbuf *out;
  long long wait_base;
  long long *span_ts, *span_end; /* as written, after clamping */
  long long *stall_ts, *stall_end;
  bool first;
} writer;

static int
pid_of (const ps_timeline *tl, uint32_t q)
{
  return q < tl->n_streams && tl->streams[q].device >= 0 ? tl->streams[q].device : 0;
}

static void
sep (writer *w)
{
  ps_outbuf_str (w->out, w->first ? "\n" : ",\n");
  w->first = false;
}

static void
thread_meta (writer *w, int pid, long long tid, const char *name, long long sort)
{
  sep (w);
  ps_outbuf_printf (w->out,
                    "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %lld, "
                    "\"args\": {\"name\": ",
                    pid, tid);
  ps_jsonw_string_buf (w->out, name);
  ps_outbuf_str (w->out, "}},\n");
  ps_outbuf_printf (w->out,
                    "{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, \"tid\": %lld, "
                    "\"args\": {\"sort_index\": %lld}}",
                    pid, tid, sort);
}

typedef struct {
  double start;
  uint32_t idx;
} skey;

static int
cmp_skey (const void *a, const void *b)
{
  const skey *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
cmp_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return x < y ? -1 : x > y;
}

static void
write_spans (writer *w, const uint8_t *critical)
{
  const ps_timeline *tl = w->tl;
  char label[1024];
  for (uint32_t q = 0; q < tl->n_streams; q++) {
    long long prev = 0;
    /* What every slice of the stream says alike, formatted once. */
    char where[96], args[96];
    snprintf (where, sizeof where, ", \"pid\": %d, \"tid\": %lld, \"ts\": ", pid_of (tl, q),
              (long long) tl->streams[q].id);
    int len = snprintf (args, sizeof args, ", \"args\": {\"stream\": %lld",
                        (long long) tl->streams[q].id);
    if (tl->streams[q].device >= 0)
      snprintf (args + len, sizeof args - (size_t) len, ", \"device\": %d", tl->streams[q].device);
    for (uint32_t k = tl->stream_off[q]; k < tl->stream_off[q + 1]; k++) {
      uint32_t x = tl->by_stream[k];
      const ps_span *s = &tl->spans[x];
      long long a = ins (s->start_ns), b = ins (s->end_ns);
      if (a < prev)
        a = prev;
      if (b < a)
        b = a;
      prev = b;
      w->span_ts[x] = a;
      w->span_end[x] = b;
      sep (w);
      ps_timeline_span_label (tl, x, label, sizeof label);
      ps_outbuf_str (w->out, "{\"ph\": \"X\", \"cat\": \"");
      ps_outbuf_str (w->out, span_cat (s->kind));
      ps_outbuf_str (w->out, "\", \"name\": ");
      ps_jsonw_string_buf (w->out, label);
      ps_outbuf_str (w->out, where);
      us (w->out, a);
      ps_outbuf_str (w->out, ", \"dur\": ");
      us (w->out, b - a);
      ps_outbuf_str (w->out, args);
      if (s->step != PS_NONE) {
        ps_outbuf_str (w->out, ", \"step\": ");
        ps_outbuf_uint_left (w->out, s->step, 0);
      }
      if (s->correlation) {
        ps_outbuf_str (w->out, ", \"correlation\": ");
        ps_outbuf_uint_left (w->out, s->correlation, 0);
      }
      if (critical && critical[x])
        ps_outbuf_str (w->out, ", \"critical\": 1");
      ps_outbuf_str (w->out, "}}");
    }
  }
}

static int
write_stalls (writer *w)
{
  const ps_timeline *tl = w->tl;
  skey *k = malloc (((size_t) tl->n_stalls + 1) * sizeof *k);
  if (!k)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < tl->n_stalls; i++)
    k[i] = (skey) { tl->stalls[i].start_ns, i };
  ps_array_sort (k, tl->n_stalls, sizeof *k, cmp_skey);
  long long *prev = calloc ((size_t) tl->n_streams + 1, sizeof *prev);
  if (!prev) {
    free (k);
    return PS_ENOMEM;
  }
  char label[1200];
  for (uint32_t j = 0; j < tl->n_stalls; j++) {
    uint32_t i = k[j].idx;
    const ps_stall *sl = &tl->stalls[i];
    w->stall_ts[i] = w->stall_end[i] = -1;
    if (sl->stream >= tl->n_streams)
      continue;
    long long a = ins (sl->start_ns), b = ins (sl->end_ns);
    if (a < prev[sl->stream])
      a = prev[sl->stream];
    if (b < a)
      b = a;
    prev[sl->stream] = b;
    w->stall_ts[i] = a;
    w->stall_end[i] = b;
    char what[1024] = "event";
    if (sl->waiting_for < tl->n_spans)
      ps_timeline_span_label (tl, sl->waiting_for, what, sizeof what);
    snprintf (label, sizeof label, "wait for %s", what);
    sep (w);
    ps_outbuf_str (w->out, "{\"ph\": \"X\", \"cat\": \"stall\", \"name\": ");
    ps_jsonw_string_buf (w->out, label);
    ps_outbuf_printf (w->out, ", \"pid\": %d, \"tid\": %lld, \"ts\": ", pid_of (tl, sl->stream),
                      w->wait_base + sl->stream);
    us (w->out, a);
    ps_outbuf_str (w->out, ", \"dur\": ");
    us (w->out, b - a);
    ps_outbuf_printf (w->out, ", \"args\": {\"stream\": %lld",
                      (long long) tl->streams[sl->stream].id);
    if (sl->on_stream < tl->n_streams)
      ps_outbuf_printf (w->out, ", \"on_stream\": %lld", (long long) tl->streams[sl->on_stream].id);
    if (sl->waiting_for < tl->n_spans) {
      ps_outbuf_str (w->out, ", \"waiting_for\": ");
      ps_jsonw_string_buf (w->out, what);
    }
    if (sl->event >= 0)
      ps_outbuf_printf (w->out, ", \"event\": %lld", (long long) sl->event);
    if (sl->step != PS_NONE)
      ps_outbuf_printf (w->out, ", \"step\": %u", sl->step);
    ps_outbuf_str (w->out, "}}");
  }
  free (prev);
  free (k);
  return 0;
}

/* A point strictly inside [a, b] when the slice has room for one. */
static long long
inside (long long a, long long b)
{
  return a + (b - a) / 2;
}

static void
write_flows (writer *w)
{
  const ps_timeline *tl = w->tl;
  uint32_t id = 0;
  for (uint32_t i = 0; i < tl->n_flows; i++) {
    const ps_flow *f = &tl->flows[i];
    if (f->from_span >= tl->n_spans || f->to_stream >= tl->n_streams)
      continue;
    long long to_tid, to_ts;
    if (f->stall < tl->n_stalls && w->stall_ts[f->stall] >= 0) {
      to_tid = w->wait_base + f->to_stream;
      to_ts = inside (w->stall_ts[f->stall], w->stall_end[f->stall]);
    } else if (f->to_span < tl->n_spans) {
      to_tid = tl->streams[f->to_stream].id;
      to_ts = inside (w->span_ts[f->to_span], w->span_end[f->to_span]);
    } else {
      continue;
    }
    uint32_t from_q = tl->spans[f->from_span].stream;
    long long from_ts = inside (w->span_ts[f->from_span], w->span_end[f->from_span]);
    char name[48];
    if (f->event >= 0)
      snprintf (name, sizeof name, "event %lld", (long long) f->event);
    else
      snprintf (name, sizeof name, "event");
    sep (w);
    ps_outbuf_printf (w->out,
                      "{\"ph\": \"s\", \"cat\": \"event\", \"name\": \"%s\", \"id\": %u, "
                      "\"pid\": %d, \"tid\": %lld, \"ts\": ",
                      name, id, pid_of (tl, from_q), (long long) tl->streams[from_q].id);
    us (w->out, from_ts);
    ps_outbuf_str (w->out, "},\n");
    ps_outbuf_printf (w->out,
                      "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"event\", \"name\": \"%s\", "
                      "\"id\": %u, \"pid\": %d, \"tid\": %lld, \"ts\": ",
                      name, id, pid_of (tl, f->to_stream), to_tid);
    us (w->out, to_ts);
    ps_outbuf_str (w->out, "}");
    id++;
  }
}

int
ps_trace_write (const ps_timeline *tl, const ps_diagnosis *dg, FILE *file)
{
  if (!tl->stream_off)
    return PS_EINVAL;
  ps_outbuf *out = malloc (sizeof *out);
  if (!out)
    return PS_ENOMEM;
  ps_outbuf_init (out, file);
  writer w = { tl, out, 1000, NULL, NULL, NULL, NULL, true };
  size_t ns = (size_t) tl->n_spans + 1, nst = (size_t) tl->n_stalls + 1;
  w.span_ts = malloc (ns * sizeof *w.span_ts);
  w.span_end = malloc (ns * sizeof *w.span_end);
  w.stall_ts = malloc (nst * sizeof *w.stall_ts);
  w.stall_end = malloc (nst * sizeof *w.stall_end);
  uint8_t *critical = dg ? calloc (ns, 1) : NULL;
  int rc = PS_ENOMEM;
  if (!w.span_ts || !w.span_end || !w.stall_ts || !w.stall_end || (dg && !critical))
    goto out;
  if (dg)
    for (uint32_t i = 0; i < dg->n_critical; i++)
      if (dg->critical[i] < tl->n_spans)
        critical[dg->critical[i]] = 1;

  /* Stall threads get ids above every stream id. */
  long long max_id = 0;
  for (uint32_t q = 0; q < tl->n_streams; q++)
    if (tl->streams[q].id > max_id)
      max_id = tl->streams[q].id;
  if (max_id >= 1000)
    w.wait_base = (max_id / 1000 + 1) * 1000;

  ps_outbuf_str (out, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"producer\": \"planscope\", "
                      "\"source\": ");
  ps_jsonw_string_buf (out, ps_timeline_source_name (tl->source));
  ps_outbuf_str (out, ", \"device\": ");
  ps_jsonw_string_buf (out, tl->device);
  ps_outbuf_str (out, "},\n\"traceEvents\": [");

  /* One process per device. */
  int *pids = malloc (((size_t) tl->n_streams + 1) * sizeof *pids);
  if (!pids)
    goto out;
  for (uint32_t q = 0; q < tl->n_streams; q++)
    pids[q] = pid_of (tl, q);
  ps_array_sort (pids, tl->n_streams, sizeof *pids, cmp_int);
  for (uint32_t q = 0; q < tl->n_streams; q++) {
    if (q && pids[q] == pids[q - 1])
      continue;
    char name[128];
    snprintf (name, sizeof name, "%s GPU %d (%s)", ps_timeline_source_name (tl->source), pids[q],
              tl->device[0] ? tl->device : "?");
    sep (&w);
    ps_outbuf_printf (out,
                      "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, "
                      "\"args\": {\"name\": ",
                      pids[q]);
    ps_jsonw_string_buf (out, name);
    ps_outbuf_str (out, "}}");
  }
  free (pids);
  for (uint32_t q = 0; q < tl->n_streams; q++) {
    char label[96], wl[112];
    ps_timeline_stream_label (tl, q, label, sizeof label);
    snprintf (wl, sizeof wl, "%s waits", label);
    thread_meta (&w, pid_of (tl, q), tl->streams[q].id, label, 2 * (long long) q);
    thread_meta (&w, pid_of (tl, q), w.wait_base + q, wl, 2 * (long long) q + 1);
  }
  write_spans (&w, critical);
  rc = write_stalls (&w);
  if (rc < 0)
    goto out;
  write_flows (&w);
  ps_outbuf_str (out, "\n]}\n");
out:
  ps_outbuf_flush (out);
  free (out);
  if (rc == 0 && ferror (file))
    rc = PS_EIO;
  free (w.span_ts);
  free (w.span_end);
  free (w.stall_ts);
  free (w.stall_end);
  free (critical);
  return rc;
}

typedef struct {
  const ps_timeline *tl;
  const ps_diagnosis *dg;
} trace_job;

static int
write_job (FILE *out, void *ctx)
{
  const trace_job *j = ctx;
  return ps_trace_write (j->tl, j->dg, out);
}

int
ps_trace_write_file (const char *path, const ps_timeline *tl, const ps_diagnosis *dg,
                     char *errbuf, size_t errlen)
{
  trace_job j = { tl, dg };
  return ps_file_write_atomic (path, write_job, &j, errbuf, errlen);
}
