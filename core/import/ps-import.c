/* ps-import.c: the front door for graph files (see ps-import.h): one read,
 * one decision on the format, one loader. */
#include "ps-import.h"

#include <stdlib.h>
#include <string.h>

#include "import/dot/ps-dot-import.h"
#include "import/dot/ps-dot-private.h"
#include "import/json/ps-json-load.h"
#include "ps-file.h"
#include "ps-trace-import.h"

/* What the first bytes of a file say about it being a Chrome trace. */
typedef enum {
  TRACE_NO,
  TRACE_YES,
  TRACE_NO_GRAPH, /* no: its "format" key says it is a planscope graph */
  TRACE_UNSURE,   /* the bytes given, the start of a file, do not tell */
} trace_verdict;

/* A Chrome trace: gzip data, a JSON array of events, or an object with a
 * "traceEvents" key (Kineto puts a few small keys before it).  `whole`:
 * data is the whole file (then the verdict is never TRACE_UNSURE), else
 * only its start. */
static trace_verdict
trace_of (const char *data, size_t len, bool whole)
{
  if (len >= 2 && (unsigned char) data[0] == 0x1f && (unsigned char) data[1] == 0x8b)
    return TRACE_YES;
  size_t i = 0;
  if (len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    i = 3;
  while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
    i++;
  if (i < len && data[i] == '[') {
    /* The array form: events, objects with a "ph" (phase) key. */
    size_t end = len - i < 1024 ? len : i + 1024;
    for (size_t k = i; k + 4 <= end; k++)
      if (memcmp (data + k, "\"ph\"", 4) == 0)
        return TRACE_YES;
    return whole ? TRACE_NO : TRACE_UNSURE;
  }
  if (i >= len)
    return whole ? TRACE_NO : TRACE_UNSURE;
  if (data[i] != '{')
    return TRACE_NO;
  size_t window = len - i < ((size_t) 4 << 20) ? len - i : ((size_t) 4 << 20);
  const char *key = "\"traceEvents\"", *end = data + i + window;
  /* A planscope graph has no traceEvents, and scanning its first 4 MiB for
   * one was a few percent of loading it: its "format" key ends the search
   * (a graph's comes first in every file planscope writes). */
  for (const char *p = data + i; p + 13 <= end; p++) {
    p = memchr (p, '"', (size_t) (end - 13 - p) + 1);
    if (!p)
      break;
    if (memcmp (p, "\"format\"", 8) == 0) {
      const char *q = p + 8;
      while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == ':'))
        q++;
      if (end - q >= 17 && memcmp (q, "\"planscope-graph\"", 17) == 0)
        return TRACE_NO_GRAPH;
    }
    if (memcmp (p, key, 13) != 0)
      continue;
    const char *q = p + 13;
    while (q < data + len && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
      q++;
    if (q < data + len && *q == ':')
      return TRACE_YES;
    if (q == data + len && !whole)
      return TRACE_UNSURE;
  }
  return whole ? TRACE_NO : TRACE_UNSURE;
}

static bool
is_trace (const char *data, size_t len)
{
  return trace_of (data, len, true) == TRACE_YES;
}

ps_graph_format
ps_import_detect (const char *data, size_t len)
{
  if (is_trace (data, len))
    return PS_GRAPH_FORMAT_TRACE;
  return ps__dot_starts_graph (data, len) ? PS_GRAPH_FORMAT_DOT : PS_GRAPH_FORMAT_JSON;
}

static int
execution_trace (ps_diag *diag)
{
  return ps_diag_error (diag, 0, 0,
                        "a PyTorch execution trace (ExecutionTraceObserver, Chakra schema): it "
                        "holds the CPU operators and their tensors, not when GPU work ran; open "
                        "the Kineto trace (torch.profiler) recorded with it, and pair the two "
                        "with `planscope-cli import KINETO --et THIS` (or `replay KINETO --et "
                        "THIS`) so that its tensors order the GPU work");
}

static int
nsys_report (ps_diag *diag)
{
  return ps_diag_error (diag, 0, 0,
                        "an Nsight Systems report (.nsys-rep): planscope reads neither it nor "
                        "its `nsys export --type sqlite` database; record the run with the "
                        "PyTorch profiler (torch.profiler) for a Chrome trace planscope reads");
}

/* An Nsight Systems report: a binary file nothing here reads. */
static bool
is_nsys_report (const char *data, size_t len)
{
  static const char tag[] = "Profiler Report";
  size_t window = len < 64 ? len : 64;
  if (window < 6 || memcmp (data, "NVIDIA", 6) != 0)
    return false;
  for (size_t i = 0; i + sizeof tag - 1 <= window; i++)
    if (memcmp (data + i, tag, sizeof tag - 1) == 0)
      return true;
  return false;
}

/* An execution trace as plain JSON: "schema" and "nodes" near the start
 * and no "format" key of a planscope graph. */
static bool
is_execution_trace (const char *data, size_t len)
{
  size_t window = len < 4096 ? len : 4096;
  bool schema = false, nodes = false;
  for (size_t i = 0; i + 9 <= window; i++) {
    if (data[i] != '"')
      continue;
    schema |= memcmp (data + i, "\"schema\"", 8) == 0;
    nodes |= memcmp (data + i, "\"nodes\"", 7) == 0;
    if (memcmp (data + i, "\"format\"", 8) == 0)
      return false;
  }
  return schema && nodes;
}

/* A trace with no GPU work to replay: say what it holds instead. */
static int
no_gpu_work (const ps_trace_stats *st, ps_diag *diag)
{
  if (st->et_keys == 3)
    return execution_trace (diag);
  if (st->profiler_ranges)
    return ps_diag_error (diag, 0, 0,
                          "a CUPTI range-profiler trace: %u profiled ranges "
                          "(cuda_profiler_range) with their counters, and no GPU kernels, "
                          "copies or memsets to replay; profile without the range profiler to "
                          "get them",
                          st->profiler_ranges);
  if (st->other_device)
    return ps_diag_error (diag, 0, 0,
                          "the trace's device work is another accelerator's (%u MTIA events); "
                          "planscope models CUDA GPUs, and the trace has no CUDA kernels, "
                          "copies or memsets",
                          st->other_device);
  if (st->cpu_ops)
    return ps_diag_error (diag, 0, 0,
                          "a CPU-only trace: %u CPU operators and no GPU kernels, copies or "
                          "memsets (record it with ProfilerActivity.CUDA)",
                          st->cpu_ops);
  return ps_diag_error (diag, 0, 0,
                        "the trace has no GPU work (kernels, copies or memsets) to make a graph "
                        "of");
}

int
ps_import_trace_graph (ps_graph *g, const char *data, size_t len, const char *path,
                       const ps_trace_graph_options *o, ps_timeline *measured,
                       ps_trace_graph_info *info, ps_diag *diag)
{
  size_t errors = diag->errors;
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_graph_init (g);
  if (is_nsys_report (data, len)) {
    ps_timeline_free (&tl);
    return nsys_report (diag);
  }
  ps_trace_stats st;
  int rc = ps_trace_import_mem (&tl, data, len, &st, diag);
  ps_trace_graph_info local;
  ps_trace_graph_info *in = info ? info : &local;
  memset (in, 0, sizeof *in);
  if (rc == 0 && st.kernels + st.memcpys + st.memsets == 0)
    rc = no_gpu_work (&st, diag);
  if (rc == 0)
    rc = ps_trace_graph_build (g, &tl, o, in, diag);
  if (rc == 0 && in->n_devices > 1)
    ps_diag_warn (diag, 0, 0,
                  "the trace has GPU work on %u devices; the graph is device %d's (%u ops)",
                  in->n_devices, in->device, in->gpu_ops);
  if (rc == 0) {
    /* Titled by the file's name, without its folder and extensions. */
    const char *base = strrchr (path, '/');
    base = base ? base + 1 : path;
    size_t n = strcspn (base, ".");
    char *name = strndup (base, n ? n : strlen (base));
    if (!name) {
      rc = PS_ENOMEM;
    } else {
      free (g->name);
      g->name = name;
      g->path = strdup (path);
      rc = g->path ? 0 : PS_ENOMEM;
    }
  }
  if (rc != 0)
    ps_graph_free (g);
  if (!info)
    ps_trace_graph_info_free (&local);
  if (rc == 0 && measured)
    *measured = tl;
  else
    ps_timeline_free (&tl);
  return ps_diag_result (diag, errors, rc, "import the trace");
}

/* The message a failed graph load ends with, as ps_import_graph_mem and
 * ps_import_graph_file say it. */
static int
graph_result (ps_diag *diag, size_t errors, int rc)
{
  return ps_diag_result (diag, errors, rc, "load the graph");
}

int
ps_import_graph_mem (ps_graph *g, const char *data, size_t len, const char *path, ps_diag *diag)
{
  ps_graph_init (g);
  if (data && is_nsys_report (data, len))
    return nsys_report (diag);
  if (data && is_execution_trace (data, len))
    return execution_trace (diag);
  ps_graph_format f = data ? ps_import_detect (data, len) : PS_GRAPH_FORMAT_JSON;
  if (f == PS_GRAPH_FORMAT_TRACE)
    return ps_import_trace_graph (g, data, len, path, NULL, NULL, NULL, diag);
  size_t errors = diag->errors;
  int rc = f == PS_GRAPH_FORMAT_DOT ? ps__dot_load_graph (g, data, len, path, diag)
                                    : ps__json_load_graph (g, data, len, path, diag);
  return graph_result (diag, errors, rc);
}

/* A file is read whole unless its first HEAD_BYTES say that it is a
 * planscope graph and it goes on after them: then the JSON loader reads it
 * a piece at a time (it needs no more of it at once), which spares the
 * memory of a copy of the file, and the time to fill it (the pages of a
 * large new block cost more than reading into the same small one again).
 * A regular file of ps__json_split_min bytes or more is read whole all
 * the same: in memory the loader reads the second half of its nodes on a
 * second thread, which more than pays for the copy (1M-node layered
 * graph, 226 MB: 0.75 s a piece at a time, 0.11 s to read and 0.57 s to
 * load whole; the copy is freed before planning).
 * The first bytes decide as they would for the whole file: the checks
 * above look at most 4 KiB into it, but for the scan for "traceEvents",
 * which ends at a graph's "format" key (TRACE_NO_GRAPH). */
#define HEAD_BYTES ((size_t) 64 << 10)

typedef struct head_then_file {
  const char *head;
  size_t len, pos;
  ps_file_input *in;
} head_then_file;

/* A ps_json_read_fn: the head, then the rest of the file. */
static long
read_head_then_file (void *ctx, char *buf, size_t cap)
{
  head_then_file *h = ctx;
  if (h->pos < h->len) {
    size_t n = h->len - h->pos < cap ? h->len - h->pos : cap;
    memcpy (buf, h->head + h->pos, n);
    h->pos += n;
    return (long) n;
  }
  return ps_file_input_read (h->in, buf, cap);
}

int
ps_import_graph_file (ps_graph *g, const char *path, ps_timing *timing, ps_diag *diag)
{
  ps_graph_init (g);
  double t = ps_clock_now ();
  const char *shown = strcmp (path, "-") == 0 ? "<stdin>" : path;
  ps_file_input in;
  int ret = ps_file_input_open (&in, path, (size_t) PS_MAX_FILE_BYTES, diag);
  if (ret < 0) {
    ps_timing_mark (timing, "read", &t);
    return ret;
  }
  size_t len = 0;
  char *data = malloc (HEAD_BYTES);
  if (!data) {
    ps_diag_error (diag, 0, 0, "cannot read %s: out of memory", in.shown);
    ret = PS_ENOMEM;
  }
  while (ret == 0 && len < HEAD_BYTES) {
    long got = ps_file_input_read (&in, data + len, HEAD_BYTES - len);
    if (got < 0)
      ret = (int) got;
    if (got <= 0)
      break;
    len += (size_t) got;
  }
  bool split = in.regular && in.size >= ps__json_split_min;
  if (ret == 0 && len == HEAD_BYTES && !split && !is_nsys_report (data, len)
      && !is_execution_trace (data, len) && trace_of (data, len, false) == TRACE_NO_GRAPH) {
    ps_timing_mark (timing, "read", &t);
    head_then_file h = { data, len, 0, &in };
    size_t errors = diag->errors;
    ret = graph_result (diag, errors,
                        ps__json_load_graph_stream (g, read_head_then_file, &h, in.size, shown,
                                                    diag));
    ps_timing_mark (timing, "parse", &t);
  } else {
    ps_file_whole w = { 0 };
    if (ret == 0)
      ret = ps_file_input_whole (&in, data, len, &w);
    else
      free (data);
    data = NULL;
    ps_timing_mark (timing, "read", &t);
    if (ret == 0)
      ret = ps_import_graph_mem (g, w.data, w.len, shown, diag);
    if ((ret = ps_file_whole_end (&w, ret)) < 0)
      ps_graph_free (g); /* cut short: made of zeros that were not the file's */
    ps_timing_mark (timing, "parse", &t);
  }
  ps_file_input_close (&in);
  free (data);
  return ret;
}
