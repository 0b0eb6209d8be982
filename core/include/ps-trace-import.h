/* ps-trace-import.h: reads Chrome / Kineto traces (PyTorch profiler output,
 * or planscope's own --trace files) into a timeline.
 *
 * The file (.json, or gzip-compressed .json.gz, told apart by content) is
 * streamed through zlib and the core JSON reader; no tree is built, so
 * traces of hundreds of megabytes take memory in proportion to the GPU
 * events they hold, not to their size.  What is read:
 *
 *  - GPU work: complete ("X") events of category kernel, gpu_memcpy,
 *    gpu_memset (also Kernel, Memcpy, Memset of older Kineto versions, and
 *    planscope's gpu_host_callback / gpu_other), one span each, on the
 *    stream args.stream (else tid) of device args.device (else pid);
 *  - cuda_sync records: "Stream Wait Event" (a stream waiting for an event
 *    recorded on args.wait_on_stream) becomes a stall when the recorded
 *    work was still running, and a flow; "Stream Sync", "Context Sync" and
 *    "Event Sync" are host synchronisations;
 *  - cuda_runtime / cuda_driver calls, matched to GPU work by
 *    args.correlation: the work's launch time, the time of the
 *    cudaEventRecord a wait refers to (wait_on_cuda_event_record_corr_id),
 *    and calls that return only after their work ends (synchronous copies);
 *  - planscope's own "stall" events.
 *
 * Stream ids of -1 or 4294967295 mean "no stream" (context-wide
 * synchronisation).  Missing fields are tolerated: an event without a
 * usable time or stream is skipped.  Times are rebased to the earliest
 * GPU or synchronisation event. */
#ifndef PS_TRACE_IMPORT_H
#define PS_TRACE_IMPORT_H

#include <stddef.h>

#include "ps-error.h"
#include "ps-timeline.h"

/* Limits: the JSON text, after decompression, and each kind of record
 * kept (GPU operations, synchronisation records, runtime calls). */
#define PS_TRACE_MAX_TEXT ((uint64_t) 2 << 30)
#define PS_TRACE_MAX_RECORDS (16u << 20)

/* What an import found, besides the timeline itself. */
typedef struct ps_trace_stats {
  uint64_t events;       /* trace events read */
  uint32_t kernels, memcpys, memsets, others;
  uint32_t stream_waits; /* "Stream Wait Event" records */
  /* Of those, the ones that name the stream or the event record they wait
   * on (Kineto wrote -1 for both before it was fixed). */
  uint32_t stream_waits_named;
  uint32_t host_syncs;   /* stream, event and context synchronisations */
  uint32_t runtime_calls;
  /* What a trace without GPU work holds instead. */
  uint32_t cpu_ops;         /* cpu_op events */
  uint32_t profiler_ranges; /* cuda_profiler_range events (CUPTI's range profiler) */
  uint32_t other_device;    /* work of another accelerator (mtia_* events) */
  uint8_t et_keys;          /* 3: top-level "schema" and "nodes", an execution trace */
} ps_trace_stats;

/* tl must be freshly initialised (any source: it becomes
 * PS_TL_IMPORTED); it is finished on success.  Errors are located
 * (FILE:LINE:COL) for malformed JSON.  stats may be NULL. */
int ps_trace_import_file (ps_timeline *tl, const char *path, ps_trace_stats *stats, ps_diag *diag);
int ps_trace_import_mem (ps_timeline *tl, const char *data, size_t len, ps_trace_stats *stats,
                         ps_diag *diag);

#endif
