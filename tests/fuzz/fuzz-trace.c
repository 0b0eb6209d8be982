/* fuzz-trace.c: libFuzzer harness for the Chrome/Kineto trace importer
 * (ps-trace-import.h), plain and gzip-compressed, followed by what
 * `planscope-cli analyze` does with the timeline: diagnosis, the JSON and
 * text reports and the Chrome trace export.
 *
 * The first byte picks the way in (see fuzz-harness.h), so one corpus
 * covers the in-memory reader, files read through zlib as they are
 * (including corrupt gzip streams) and well-formed gzip files whose
 * content the fuzzer mutates.  An accepted trace must give a timeline that
 * satisfies ps-timeline.h's invariants; read from memory, it is also made
 * the graph that replays it, written as a graph file, and replayed, which
 * must fail only with a message.  Read from memory, the input is also read
 * as a PyTorch execution trace and, when accepted, paired with a fixed
 * Kineto trace whose CPU ops have record-function ids 0 to 5: the buffers
 * and accesses it gives must be consistent. */
#include "fuzz-harness.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz-check.h"
#include "ps-diagnose.h"
#include "ps-exec-trace.h"
#include "ps-graph-output.h"
#include "ps-import.h"
#include "ps-replay.h"
#include "ps-timeline-output.h"
#include "ps-trace-export.h"
#include "ps-trace-import.h"

static char tmp_path[64];

static void
remove_tmp (void)
{
  if (tmp_path[0])
    unlink (tmp_path);
}

/* Writes the input to this process's scratch file, compressed or not. */
static const char *
write_tmp (const uint8_t *data, size_t size, bool compress)
{
  if (!tmp_path[0]) {
    snprintf (tmp_path, sizeof tmp_path, "/tmp/ps-fuzz-trace-XXXXXX");
    int fd = mkstemp (tmp_path);
    FUZZ_CHECK (fd >= 0, "cannot create a scratch file");
    close (fd);
    atexit (remove_tmp);
  }
  if (compress) {
    gzFile z = gzopen (tmp_path, "wb1");
    FUZZ_CHECK (z != NULL, "gzopen");
    FUZZ_CHECK (size == 0 || gzwrite (z, data, (unsigned) size) == (int) size, "gzwrite");
    FUZZ_CHECK (gzclose (z) == Z_OK, "gzclose");
  } else {
    FILE *f = fopen (tmp_path, "wb");
    FUZZ_CHECK (f != NULL, "fopen");
    FUZZ_CHECK (size == 0 || fwrite (data, 1, size, f) == size, "fwrite");
    FUZZ_CHECK (fclose (f) == 0, "fclose");
  }
  return tmp_path;
}

/* The trace as the graph that replays it, as a graph file, and replayed. */
static void
replay (const uint8_t *data, size_t size, const ps_trace_stats *st)
{
  ps_diag d;
  ps_diag_init (&d, "fuzz-trace.json");
  ps_graph g;
  ps_trace_graph_info in;
  int rc = ps_import_trace_graph (&g, (const char *) data, size, "fuzz-trace.json", NULL, NULL,
                                  &in, &d);
  if (rc != 0) {
    FUZZ_CHECK (rc < 0 && d.errors > 0, "no graph (%d) without an error message", rc);
  } else {
    FUZZ_CHECK (g.n_nodes == in.gpu_ops && g.n_nodes > 0, "%u nodes for %u GPU ops", g.n_nodes,
                in.gpu_ops);
    FUZZ_CHECK (in.gpu_ops <= st->kernels + st->memcpys + st->memsets, "%u GPU ops of %u",
                in.gpu_ops, st->kernels + st->memcpys + st->memsets);
    for (uint32_t v = 0; v < g.n_nodes; v++)
      FUZZ_CHECK (g.delay_ns[v] >= 0 && isfinite (g.delay_ns[v]), "delay %g", g.delay_ns[v]);
    ps_graph_write_json (&g, ps_fuzz_devnull (), NULL);
    ps_trace_graph_info_free (&in);
    ps_graph_free (&g);
    ps_replay r;
    rc = ps_replay_trace ((const char *) data, size, "fuzz-trace.json", NULL,
                          ps_device_builtin (0), &r, &d);
    FUZZ_CHECK (rc == 0 || d.errors > 0, "replay failed (%d) without an error message", rc);
    if (rc == 0)
      FUZZ_CHECK (r.gpu_ops == in.gpu_ops || r.gpu_ops > 0, "replayed %u ops", r.gpu_ops);
    ps_replay_free (&r);
  }
  ps_diag_free (&d);
}

/* Op k (k = 0..5) on stream k, launched inside a CPU op with
 * record-function id k: four kernels, a copy and a memset. */
static const char et_pair[] =
  "{\"traceEvents\": ["
#define OP(k, kind, name)                                                                     \
  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op" #k "\", \"ts\": 2" #k "0,"        \
  " \"dur\": 5, \"pid\": 1, \"tid\": 1, \"args\": {\"Record function id\": " #k "}},"                \
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 2" #k "1,"  \
  " \"dur\": 1, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 1" #k "}},"                       \
  "{\"ph\": \"X\", \"cat\": \"" kind "\", \"name\": \"" name "\", \"ts\": 3" #k "0, \"dur\": 5,"   \
  " \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": " #k ", \"correlation\": 1" #k "}}"
  OP (0, "kernel", "k0") "," OP (1, "kernel", "k1") "," OP (2, "kernel", "k2") ","
  OP (3, "kernel", "k3") "," OP (4, "gpu_memcpy", "Memcpy DtoD") ","
  OP (5, "gpu_memset", "Memset (Device)")
#undef OP
  "]}";

static void
exec_trace (const uint8_t *data, size_t size)
{
  ps_diag d;
  ps_diag_init (&d, "fuzz-et.json");
  ps_exec_trace et;
  int rc = ps_exec_trace_read (&et, (const char *) data, size, &d);
  fuzz_check_diag (&d);
  if (rc != 0) {
    FUZZ_CHECK (rc < 0 && d.errors > 0, "execution trace refused (%d) without a message", rc);
    ps_diag_free (&d);
    return;
  }
  for (uint32_t i = 0; i < et.n_ops; i++) {
    const ps_et_op *op = &et.ops[i];
    FUZZ_CHECK (i == 0 || et.ops[i - 1].rf_id <= op->rf_id, "operators out of order");
    FUZZ_CHECK (op->name < et.strings_len, "name offset %u of %u", op->name, et.strings_len);
    FUZZ_CHECK ((uint64_t) op->tensors_begin + op->tensors_count <= et.n_tensors,
                "tensors %u+%u of %u", op->tensors_begin, op->tensors_count, et.n_tensors);
    FUZZ_CHECK (ps_exec_trace_find (&et, op->rf_id) != NULL, "rf_id %lld not found",
                (long long) op->rf_id);
  }
  for (uint32_t t = 0; t < et.n_tensors; t++)
    FUZZ_CHECK (et.tensors[t].bytes >= 1 && et.tensors[t].bytes <= PS_MAX_BUFFER_BYTES
                  && et.tensors[t].dtype < PS_DT__COUNT && et.tensors[t].device >= 0,
                "tensor %u", t);
  for (int free_streams = 0; free_streams < 2; free_streams++) {
    ps_trace_graph_options o;
    ps_trace_graph_options_init (&o);
    o.et = &et;
    o.free_streams = free_streams;
    ps_graph g;
    ps_trace_graph_info in;
    rc = ps_import_trace_graph (&g, et_pair, sizeof et_pair - 1, "pair.json", &o, NULL, &in, &d);
    FUZZ_CHECK (rc == 0, "the fixed trace failed with an execution trace (%d)", rc);
    FUZZ_CHECK (in.et.linked + in.et.no_tensors + in.et.unmatched + in.et.no_cpu_op
                  == g.n_nodes,
                "%u + %u + %u + %u links of %u nodes", in.et.linked, in.et.no_tensors,
                in.et.unmatched, in.et.no_cpu_op, g.n_nodes);
    FUZZ_CHECK (g.n_buffers == in.et.buffers, "%u buffers, said %u", g.n_buffers,
                in.et.buffers);
    for (uint32_t a = 0; a < g.n_access; a++)
      FUZZ_CHECK (g.access[a] < g.n_buffers, "access %u to buffer %u", a, g.access[a]);
    for (uint32_t b = 0; b < g.n_buffers; b++)
      FUZZ_CHECK (g.buffers[b].bytes >= 1, "buffer %u of %llu bytes", b,
                  (unsigned long long) g.buffers[b].bytes);
    for (uint32_t v = 0; v < g.n_nodes; v++) {
      const ps_node *n = &g.nodes[v];
      FUZZ_CHECK ((uint64_t) n->reads_begin + n->reads_count <= g.n_access
                    && (uint64_t) n->writes_begin + n->writes_count <= g.n_access,
                  "node %u accesses", v);
      if (n->op == PS_OP_MEMSET)
        FUZZ_CHECK (n->reads_count == 0 && n->writes_count <= 1, "memset accesses");
    }
    ps_graph_write_json (&g, ps_fuzz_devnull (), NULL);
    ps_trace_graph_info_free (&in);
    ps_graph_free (&g);
  }
  ps_exec_trace_free (&et);
  ps_diag_free (&d);
}

int
ps_fuzz_trace (const uint8_t *data, size_t size)
{
  if (size == 0 || size > (64u << 20))
    return 0;
  int mode = data[0] % 3;
  data++;
  size--;

  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_trace_stats st;
  ps_diag d;
  ps_diag_init (&d, "fuzz-trace.json");
  int rc;
  if (mode == 0)
    rc = ps_trace_import_mem (&tl, (const char *) data, size, &st, &d);
  else
    rc = ps_trace_import_file (&tl, write_tmp (data, size, mode == 2), &st, &d);
  fuzz_check_diag (&d);
  ps_diag_print (&d, ps_fuzz_devnull ());
  if (rc != 0) {
    FUZZ_CHECK (rc < 0 && d.errors > 0, "failed (%d) without an error message", rc);
  } else {
    FUZZ_CHECK (d.errors == 0, "imported with %zu errors", d.errors);
    fuzz_check_timeline (&tl);
    ps_diagnosis dg;
    memset (&dg, 0, sizeof dg);
    if (ps_diagnose (&dg, &tl) == 0) {
      FUZZ_CHECK (dg.n_critical <= tl.n_spans, "critical path of %u spans out of %u",
                  dg.n_critical, tl.n_spans);
      for (uint32_t i = 0; i < dg.n_critical; i++)
        FUZZ_CHECK (dg.critical[i] < tl.n_spans, "critical span %u", dg.critical[i]);
      ps_timeline_write_json (&tl, &dg, ps_fuzz_devnull ());
      FUZZ_CHECK_TEXT_OUTPUT ("analyze text", ps_timeline_write_text (&tl, &dg, out));
      ps_trace_write (&tl, &dg, ps_fuzz_devnull ());
    }
    ps_diagnosis_free (&dg);
    if (mode == 0)
      replay (data, size, &st);
  }
  if (mode == 0)
    exec_trace (data, size);
  ps_timeline_free (&tl);
  ps_diag_free (&d);
  return 0;
}

#ifndef PS_FUZZ_NO_MAIN
int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return ps_fuzz_trace (data, size);
}
#endif
