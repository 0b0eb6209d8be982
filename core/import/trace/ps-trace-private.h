/* ps-trace-private.h: what the trace importer's reading pass hands to its
 * resolving pass (ps-trace-resolve.c).  Not installed; core/ only. */
#ifndef PS_TRACE_PRIVATE_H
#define PS_TRACE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "ps-timeline.h"

#define PS__TRACE_NO_ID INT64_MIN

/* Stream ids of -1 and 4294967295 mean "no stream"; ids must also be
 * exact in a JSON number (below 2^53). */
static inline bool
ps__trace_valid_stream (int64_t s)
{
  return s >= 0 && s != 4294967295LL && s < ((int64_t) 1 << 53);
}

/* Kinds of ps__trace_sync. */
enum {
  PS__TRACE_SY_WAIT_EVENT,
  PS__TRACE_SY_STREAM,
  PS__TRACE_SY_CONTEXT,
  PS__TRACE_SY_EVENT,
  PS__TRACE_SY_OWN_STALL
};

typedef struct {
  double ts, dur; /* microseconds, as in the file */
  int64_t stream;
  int64_t device;
  uint64_t corr;
  uint32_t name;
  uint32_t grid[3], block[3]; /* a kernel's launch, as its "grid" and "block" say; 0: not said */
  uint8_t kind; /* ps_span_kind */
} ps__trace_op;

typedef struct {
  double ts, dur;
  int64_t stream, device, other_stream, event, rec_corr;
  uint8_t kind;
} ps__trace_sync;

typedef struct {
  uint64_t corr;
  double ts, dur;
  int64_t pid, tid;
} ps__trace_call;

/* A cpu_op event: a framework operator on a host thread. */
typedef struct {
  double ts, dur;
  int64_t pid, tid;
  int64_t rf_id; /* "Record function id", else "External id", else -1 */
  uint32_t name;
} ps__trace_cpu;

/* The importer with its limits as parameters; ps_trace_import_file and
 * _mem pass PS_TRACE_MAX_TEXT and PS_TRACE_MAX_RECORDS.  Tests reach the
 * limits with small inputs through these. */
typedef struct {
  uint64_t max_text;    /* bytes of JSON text, after decompression */
  uint32_t max_records; /* of each kind kept */
} ps__trace_limits;

struct ps_diag;
/* Why the reader under a ps_json_reader gave up: code is PS_ELIMIT (the
 * text grew past its limit) or PS_EIO (the compressed data is corrupt or
 * cut short), 0 while it has not; `why` is the message.  The importers
 * report it in place of the JSON reader's own error, which would only say
 * that the input stopped. */
typedef struct {
  int code;
  char why[160];
} ps__read_stop;

/* The message of a JSON reader's error, or of the reader beneath it when
 * that gave up (stop may be NULL): a size limit where the text stopped,
 * a decompression failure without position (it has none in the text). */
struct ps_json_reader;
int ps__read_stop_report (const ps__read_stop *stop, const struct ps_json_reader *r,
                          struct ps_diag *diag);

/* gzip data in memory, inflated as a ps_json_reader pulls
 * (ps_json_init_stream (r, ps__zmem_pull, m)): at most max bytes of text,
 * every member whole, its CRC and length checked; else the pull fails
 * with stop saying why. */
typedef struct {
  z_stream z;
  const char *next; /* input not yet handed to zlib */
  size_t left;
  bool in_member, done;
  uint64_t total, max;
  ps__read_stop stop;
} ps__zmem;

int ps__zmem_init (ps__zmem *m, const char *data, size_t len, uint64_t max);
long ps__zmem_pull (void *ctx, char *buf, size_t cap);
void ps__zmem_end (ps__zmem *m);

struct ps_trace_stats;
struct ps_diag;
int ps__trace_import_file (ps_timeline *tl, const char *path, const ps__trace_limits *lim,
                           struct ps_trace_stats *stats, struct ps_diag *diag);
int ps__trace_import_mem (ps_timeline *tl, const char *data, size_t len,
                          const ps__trace_limits *lim, struct ps_trace_stats *stats,
                          struct ps_diag *diag);

/* Builds the timeline from what was read (rts is sorted in place). */
int ps__trace_resolve (ps_timeline *tl, const ps__trace_op *ops, size_t n_ops,
                       const ps__trace_sync *syncs, size_t n_syncs, ps__trace_call *rts,
                       size_t n_rts, ps__trace_cpu *cpus, size_t n_cpus);

#endif
