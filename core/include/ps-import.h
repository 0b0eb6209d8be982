/* ps-import.h: the front door for every graph file planscope reads.
 *
 * A graph file is the planscope JSON format (spec/graph-format.md) or a
 * DOT dump of CUDA's cudaGraphDebugDotPrint; which one is decided once,
 * from the content, never from the name: a file whose first byte (after
 * white space and a UTF-8 byte order mark) is `{` is JSON, one whose
 * first token is `digraph`, `strict` or `graph` is DOT (an undirected
 * `graph` is then refused as such), and anything else is read as JSON,
 * so that the error says what was expected.  The file is read
 * once: whole, and parsed from memory, but for a large planscope graph
 * (one whose first 64 KiB hold its "format" key), which the JSON loader
 * reads a piece at a time (ps_import_graph_file).  A Chrome/Kineto trace (gzip
 * data, a JSON array, or an object with a "traceEvents" key) is a graph
 * file too: it comes in as the graph that replays it (ps-trace-graph.h),
 * so every command and the app take traces where they take graphs. */
#ifndef PS_IMPORT_H
#define PS_IMPORT_H

#include <stddef.h>

#include "ps-error.h"
#include "ps-graph.h"
#include "ps-timing.h"
#include "ps-trace-graph.h"

typedef enum ps_graph_format {
  PS_GRAPH_FORMAT_JSON = 0,
  PS_GRAPH_FORMAT_DOT,
  PS_GRAPH_FORMAT_TRACE,
} ps_graph_format;

/* The format of a graph file from its first bytes (see above). */
ps_graph_format ps_import_detect (const char *data, size_t len);

/* Loads a graph from memory; `path` names it in messages and is the base
 * of relative module paths.  On failure returns a negative code, leaves
 * *g empty (as after ps_graph_init) and puts at least one error in diag,
 * located wherever the problem has a place in the file.  Warnings go to
 * diag on success too.  *g is overwritten, not freed: free a previous
 * graph first. */
int ps_import_graph_mem (ps_graph *g, const char *data, size_t len, const char *path,
                         ps_diag *diag);

/* A Chrome/Kineto trace (gzip or not) as a graph that replays it
 * (ps-trace-graph.h); o and info may be NULL.  When measured is not NULL
 * it receives the imported timeline (free it with ps_timeline_free). */
int ps_import_trace_graph (ps_graph *g, const char *data, size_t len, const char *path,
                           const ps_trace_graph_options *o, ps_timeline *measured,
                           ps_trace_graph_info *info, ps_diag *diag);

/* The same from a file of at most PS_MAX_FILE_BYTES; "-" reads standard
 * input.  timing (may be NULL) gets the stages "read" and "parse". */
int ps_import_graph_file (ps_graph *g, const char *path, ps_timing *timing, ps_diag *diag);

/* A CUDA-graph dump's kernel durations from a trace of its replays (tl,
 * an imported Kineto trace): the trace's kernels are matched to the dump's
 * by function (mangled, demangled, or by name and template arguments when
 * the parameters print differently), and within a function by order: a
 * replay launches the function's nodes in program order, so with R
 * replays node j has launches j, j + n, ..., and takes their median as
 * its measured cost_ns.  When a function's launches do not divide among
 * its nodes, each takes the median of them all (counted in by_name).
 * Kernels the trace does not have stay estimated from their launch.  An
 * error when no kernel matches. */
typedef struct ps_durations_info {
  uint32_t kernels;   /* kernel nodes of the graph */
  uint32_t measured;  /* given their own median */
  uint32_t by_name;   /* given their function's median */
  uint32_t unmatched; /* not in the trace */
  uint32_t replays;   /* the most replays a function's launches make */
} ps_durations_info;

int ps_graph_take_durations (ps_graph *g, const ps_timeline *tl, ps_durations_info *info,
                             ps_diag *diag);

#endif
