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

/* A Chrome trace: gzip data, a JSON array of events, or an object with a
 * "traceEvents" key (Kineto puts a few small keys before it). */
static bool
is_trace (const char *data, size_t len)
{
  if (len >= 2 && (unsigned char) data[0] == 0x1f && (unsigned char) data[1] == 0x8b)
    return true;
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
        return true;
    return false;
  }
  if (i >= len || data[i] != '{')
    return false;
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
        return false;
    }
    if (memcmp (p, key, 13) != 0)
      continue;
    const char *q = p + 13;
    while (q < data + len && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
      q++;
    if (q < data + len && *q == ':')
      return true;
  }
  return false;
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
  return ps_diag_result (diag, errors, rc, "load the graph");
}

int
ps_import_graph_file (ps_graph *g, const char *path, ps_timing *timing, ps_diag *diag)
{
  ps_graph_init (g);
  double t = ps_clock_now ();
  char *data;
  size_t len;
  int ret = ps_file_read_all (path, (size_t) PS_MAX_FILE_BYTES, &data, &len, diag);
  ps_timing_mark (timing, "read", &t);
  if (ret < 0)
    return ret;
  ret = ps_import_graph_mem (g, data, len, strcmp (path, "-") == 0 ? "<stdin>" : path, diag);
  ps_timing_mark (timing, "parse", &t);
  free (data);
  return ret;
}
