/* ps-graph.h: the graph of GPU work, as loaded and validated.
 *
 * A graph is a set of dense arrays indexed by integer ids: nodes
 * [0, n_nodes) in program order, buffers [0, n_buffers), events
 * [0, n_events) (user event names), and the dependency edges in CSR form in
 * both directions.  Names and other strings live in one string pool and are
 * referred to by offset.  There are no per-node heap objects.
 *
 * Edges come only from the rules of spec/graph-format.md.  Because every
 * rule points forward in program order, node ids are a topological order
 * for graphs loaded from the JSON format; graphs imported from DOT are
 * renumbered into a topological order by the importer.  Barrier edges are
 * stored in reduced form with the same transitive closure: a barrier gets an
 * edge from every node since the previous barrier (and from that barrier),
 * and every node up to the next barrier (and that barrier) gets an edge from
 * it. */
#ifndef PS_GRAPH_H
#define PS_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ps-error.h"

#define PS_NONE UINT32_MAX

/* The enumerations of the graph format, each one list (libuv's
 * UV_ERRNO_MAP idiom) that gives the enum, the names as written in files,
 * their lengths and the name tables below.  Ops: ENUM, the name in files
 * and plan documents, the short name of the text plan, and the kind of
 * span the op's work is drawn as (ps_span_kind of ps-timeline.h).  The
 * first PS_OP__FILE_COUNT ops are those a JSON graph file may use; the
 * others come only from imported graphs. */
#define PS_OP_MAP(X)                                           \
  X (KERNEL, "kernel", "kernel", KERNEL)                       \
  X (MEMCPY, "memcpy", "memcpy", MEMCPY)                       \
  X (MEMSET, "memset", "memset", MEMSET)                       \
  X (HOST, "host", "host", HOST)                               \
  X (EVENT_RECORD, "event_record", "record", OTHER)            \
  X (EVENT_WAIT, "event_wait", "wait", OTHER)                  \
  X (BARRIER, "barrier", "barrier", OTHER)                     \
  X (CONDITIONAL, "conditional", "cond", OTHER)                \
  /* imported graphs only: a node with no work */              \
  X (EMPTY, "empty", "empty", OTHER)                           \
  /* imported graphs only: a node type planscope does not model */ \
  X (OPAQUE, "opaque", "opaque", OTHER)

typedef enum ps_op {
#define PS__OP_ENUM(e, name, short_name, span) PS_OP_##e,
  PS_OP_MAP (PS__OP_ENUM)
#undef PS__OP_ENUM
  PS_OP__COUNT,
  PS_OP__FILE_COUNT = PS_OP_EMPTY
} ps_op;

/* Built-in kernel implementations ("impl"): ENUM, name, buffers read, and
 * whether it is element-wise (one output element from the same element of
 * each input).  "none" (a synthetic kernel unless a module is given) is
 * not a name a file may use. */
#define PS_IMPL_MAP(X)                 \
  X (NONE, "none", 0, false)           \
  X (COPY, "copy", 1, true)            \
  X (SCALE, "scale", 1, true)          \
  X (ADD_SCALAR, "add_scalar", 1, true) \
  X (RELU, "relu", 1, true)            \
  X (GELU, "gelu", 1, true)            \
  X (SIGMOID, "sigmoid", 1, true)      \
  X (TANH, "tanh", 1, true)            \
  X (EXP, "exp", 1, true)              \
  X (NEG, "neg", 1, true)              \
  X (ADD, "add", 2, true)              \
  X (MUL, "mul", 2, true)              \
  X (SUB, "sub", 2, true)              \
  X (FILL, "fill", 0, true)            \
  X (SPIN, "spin", 0, false)

typedef enum ps_impl {
#define PS__IMPL_ENUM(e, name, reads, elementwise) PS_IMPL_##e,
  PS_IMPL_MAP (PS__IMPL_ENUM)
#undef PS__IMPL_ENUM
  PS_IMPL__COUNT
} ps_impl;

/* Element types: ENUM, name, bytes per element. */
#define PS_DTYPE_MAP(X) \
  X (F32, "f32", 4)     \
  X (F16, "f16", 2)     \
  X (BF16, "bf16", 2)   \
  X (I32, "i32", 4)     \
  X (U8, "u8", 1)

typedef enum ps_dtype {
#define PS__DTYPE_ENUM(e, name, size) PS_DT_##e,
  PS_DTYPE_MAP (PS__DTYPE_ENUM)
#undef PS__DTYPE_ENUM
  PS_DT__COUNT
} ps_dtype;

/* Copy directions: ENUM, name, buffers read and written. */
#define PS_COPY_DIR_MAP(X) \
  X (H2D, "h2d", 0, 1)     \
  X (D2H, "d2h", 1, 0)     \
  X (D2D, "d2d", 1, 1)     \
  X (P2P, "p2p", 1, 1)

typedef enum ps_copy_dir {
#define PS__COPY_DIR_ENUM(e, name, reads, writes) PS_COPY_##e,
  PS_COPY_DIR_MAP (PS__COPY_DIR_ENUM)
#undef PS__COPY_DIR_ENUM
  PS_COPY__COUNT
} ps_copy_dir;

/* Which branch of a conditional the model takes ("assume"). */
#define PS_ASSUME_MAP(X) \
  X (BOTH, "both")       \
  X (THEN, "then")       \
  X (ELSE, "else")

typedef enum ps_assume {
#define PS__ASSUME_ENUM(e, name) PS_ASSUME_##e,
  PS_ASSUME_MAP (PS__ASSUME_ENUM)
#undef PS__ASSUME_ENUM
  PS_ASSUME__COUNT
} ps_assume;

/* What a conditional node stands for.  A planscope graph's conditionals
 * are IFs.  A CUDA-graph dump also holds WHILE loops, modelled as one pass
 * of the body (the then branch; "else" is the loop not entered), and
 * SWITCHes, modelled as a chain with one conditional per case: case k is
 * the then branch of the k-th, and the rest of the switch its else. */
#define PS_COND_KIND_MAP(X) \
  X (IF, "if")              \
  X (WHILE, "while")        \
  X (SWITCH, "switch")

typedef enum ps_cond_kind {
#define PS__COND_KIND_ENUM(e, name) PS_COND_##e,
  PS_COND_KIND_MAP (PS__COND_KIND_ENUM)
#undef PS__COND_KIND_ENUM
  PS_COND__COUNT
} ps_cond_kind;

/* A name table: the names of an enumeration, indexed by value, with their
 * lengths. */
typedef struct ps_names {
  const char *const *name;
  const uint8_t *len;
  uint32_t count;
} ps_names;

extern const ps_names ps_op_names, ps_impl_names, ps_dtype_names, ps_copy_dir_names,
  ps_assume_names, ps_cond_kind_names;

/* The value named s[0..len) among the first `count` of t (at most
 * t->count), or -1. */
int ps_names_find (const ps_names *t, uint32_t count, const char *s, size_t len);

/* Edge kinds, as bits: an edge found by several rules has several bits. */
enum {
  PS_EDGE_RAW = 1u << 0,
  PS_EDGE_WAW = 1u << 1,
  PS_EDGE_WAR = 1u << 2,
  PS_EDGE_AFTER = 1u << 3,
  PS_EDGE_EVENT = 1u << 4,
  PS_EDGE_BARRIER = 1u << 5,
  PS_EDGE_BRANCH = 1u << 6,
  PS_EDGE_IMPORTED = 1u << 7, /* an edge of an imported DOT graph */
};

/* Node flags. */
enum {
  PS_NODE_FUSIBLE = 1u << 0,         /* "fusible": true and the implementation allows it */
  PS_NODE_FUSIBLE_IGNORED = 1u << 1, /* "fusible": true on a kernel that cannot fuse */
  PS_NODE_HAS_COST = 1u << 2,        /* cost_ns was given */
  PS_NODE_IN_THEN = 1u << 3,         /* member of some conditional's then branch */
  PS_NODE_IN_ELSE = 1u << 4,         /* member of some conditional's else branch */
};

/* Buffer flags. */
enum {
  PS_BUF_EXTERNAL = 1u << 0,
};

typedef struct ps_buffer {
  uint32_t name;  /* string pool offset */
  uint8_t flags;  /* PS_BUF_* */
  uint8_t dtype;  /* ps_dtype */
  uint64_t bytes; /* > 0, <= 2^48 */
  uint32_t line, col;
} ps_buffer;

/* Kernel-only attributes; ps_node.aux indexes graph->kernels. */
typedef struct ps_kernel {
  uint32_t function;   /* string pool offset */
  uint32_t grid[3];    /* each >= 1 */
  uint32_t block[3];   /* each >= 1 */
  uint32_t smem;
  uint32_t module;     /* string pool offset of the path as written, or PS_NONE */
  uint32_t args_begin; /* into graph->kargs */
  uint32_t args_count;
  bool launch_unknown;       /* grid and block are not known (a default-flag DOT dump) */
  /* The doubles last, so that the struct has no hole: 88 bytes, a
   * million of them in a large graph. */
  double alpha, beta, value; /* built-in params: defaults 1, 0, 0 */
  double flops;              /* < 0: not given */
  double traffic_bytes;      /* < 0: not given */
} ps_kernel;

typedef enum ps_karg_kind { PS_KARG_BUFFER = 0, PS_KARG_I32, PS_KARG_I64, PS_KARG_F32, PS_KARG_F64 } ps_karg_kind;
typedef struct ps_karg {
  uint8_t kind; /* ps_karg_kind */
  union {
    uint32_t buffer;
    int64_t i;
    double f;
  } v;
} ps_karg;

/* Conditional-only attributes; ps_node.aux indexes graph->conds. */
typedef struct ps_cond {
  uint32_t condition; /* buffer id; also the conditional node's last read */
  uint32_t then_begin, then_count; /* into graph->cond_members */
  uint32_t else_begin, else_count;
  uint8_t assume; /* ps_assume */
  uint8_t kind;   /* ps_cond_kind */
  uint32_t case_index; /* PS_COND_SWITCH: the case its then branch is */
} ps_cond;

typedef struct ps_node {
  uint32_t name;  /* string pool offset */
  uint8_t op;     /* ps_op */
  uint8_t flags;  /* PS_NODE_* */
  uint8_t impl;   /* ps_impl (kernels) */
  uint8_t dir;    /* ps_copy_dir (memcpy) */
  int32_t stream; /* pinned stream, or -1 */
  uint32_t line, col; /* position of the node's object in the file */
  uint32_t reads_begin, reads_count;   /* into graph->access */
  uint32_t writes_begin, writes_count; /* into graph->access */
  /* Per op: kernel -> index into kernels; event_record/event_wait -> event
   * id; conditional -> index into conds; host -> label string offset (or
   * PS_NONE); opaque -> type string offset; otherwise PS_NONE. */
  uint32_t aux;
  /* Node id of the conditional whose branch holds this node (the latest
   * such conditional, i.e. the innermost when they nest), or PS_NONE. */
  uint32_t cond;
  int32_t src_device, dst_device; /* p2p copies; -1 otherwise */
  uint8_t value;      /* memset byte value */
  /* The 8-byte fields last, so that the struct has no hole: 72 bytes. */
  double cost_ns;     /* valid when PS_NODE_HAS_COST */
  uint64_t bytes;     /* memcpy/memset: bytes moved or set */
} ps_node;

typedef struct ps_graph {
  char *name;   /* NUL-terminated; "" when not given */
  char *device; /* default device profile name, or NULL */
  char *path;   /* the file it was loaded from (for relative module paths) */

  uint32_t n_nodes, n_buffers, n_events, n_kernels, n_conds;
  ps_node *nodes;
  ps_buffer *buffers;
  ps_kernel *kernels;
  ps_cond *conds;
  uint32_t *event_names;   /* string pool offsets, one per event id */
  uint32_t *access;        /* buffer ids of reads and writes */
  uint32_t n_access;
  ps_karg *kargs;
  uint32_t n_kargs;
  uint32_t *cond_members;  /* node ids of conditional branches */
  uint32_t n_cond_members;

  /* Edges, deduplicated, each adjacency list sorted by node id.
   * Successors of v: succ[succ_off[v] .. succ_off[v+1]), with kinds in
   * succ_kind; predecessors likewise. */
  uint32_t n_edges;
  uint32_t *succ_off, *succ;
  uint8_t *succ_kind;
  uint32_t *pred_off, *pred;
  uint8_t *pred_kind;

  /* The string pool: NUL-terminated strings, referred to by offset. */
  char *strings;
  uint32_t strings_len, strings_cap;

  /* A graph made from a measured run (a trace, ps-trace-graph.h): every
   * cost_ns is a duration measured under the run's own contention and
   * overheads, so the simulator adds none of its own (no dispatch gap, no
   * launch or event latency, no slowdown for shared SMs or copy engines),
   * and host_ns (per node; NAN where none) is when the host issued the
   * node, which it cannot start before, and delay_ns (per node, >= 0) the
   * measured idle time that nothing recorded explains, which it starts
   * after once everything else let it.  Not part of the file format. */
  bool measured;
  /* A dump of a CUDA graph (cudaGraphDebugDotPrint): the host launches it
   * once, and the GPU runs its nodes without a launch each. */
  bool cuda_graph;
  double *host_ns;
  double *delay_ns;
} ps_graph;

/* Limits, checked by every loader (see README "Limits"). */
#define PS_MAX_FILE_BYTES ((uint64_t) 2 << 30)
#define PS_MAX_NODES (16u << 20)
#define PS_MAX_BUFFERS (16u << 20)
#define PS_MAX_EDGES (256u << 20)
#define PS_MAX_NAME 4096
#define PS_MAX_BUFFER_BYTES ((uint64_t) 1 << 48)
#define PS_MAX_GRID_DIM 0x7fffffffu

static inline const char *
ps_graph_str (const ps_graph *g, uint32_t off)
{
  return off == PS_NONE ? NULL : g->strings + off;
}
static inline const char *
ps_node_name (const ps_graph *g, uint32_t v)
{
  return g->strings + g->nodes[v].name;
}
static inline const char *
ps_buffer_name (const ps_graph *g, uint32_t b)
{
  return g->strings + g->buffers[b].name;
}
/* Where the i-th of node n's accesses (its reads, then its writes; i
 * below reads_count + writes_count) lies in the graph's access array. */
static inline uint32_t
ps_node_access (const ps_node *n, uint32_t i)
{
  return i < n->reads_count ? n->reads_begin + i : n->writes_begin + (i - n->reads_count);
}
/* For passes over the nodes listed in ids[0, n) (a plan's steps' or a
 * run's spans' nodes, in issue order), scattered over a graph much larger
 * than the caches: asks for the record of the node PS_NODE_AHEAD places
 * past `at`, and for the entries of two per-buffer arrays x and y
 * (elements of xs and ys bytes) of the first four accesses of the node
 * half as far on, whose record is here by then. */
#define PS_NODE_AHEAD 16u
static inline void
ps_node_prefetch (const ps_graph *g, const uint32_t *ids, uint64_t n, uint64_t at, const void *x,
                  size_t xs, const void *y, size_t ys)
{
  if (at + PS_NODE_AHEAD < n && ids[at + PS_NODE_AHEAD] < g->n_nodes)
    __builtin_prefetch (&g->nodes[ids[at + PS_NODE_AHEAD]]);
  if (at + PS_NODE_AHEAD / 2 < n && ids[at + PS_NODE_AHEAD / 2] < g->n_nodes) {
    const ps_node *nx = &g->nodes[ids[at + PS_NODE_AHEAD / 2]];
    uint32_t na = nx->reads_count + nx->writes_count;
    for (uint32_t i = 0; i < na && i < 4; i++) {
      uint32_t a = ps_node_access (nx, i);
      if (a < g->n_access && g->access[a] < g->n_buffers) {
        __builtin_prefetch ((const char *) x + (size_t) g->access[a] * xs);
        __builtin_prefetch ((const char *) y + (size_t) g->access[a] * ys);
      }
    }
  }
}

void ps_graph_init (ps_graph *g);
void ps_graph_free (ps_graph *g);

/* Names of enum values as written in files ("?" when out of range). */
/* What views title node v with: its name, except for a kernel of a
 * CUDA-graph dump or a trace, whose names are ids ("graph_1_node_0") or
 * mangled: the demangled kernel name ("mlx::core::cu::copy_s<int, ...>"),
 * with the trace's "#N" kept.  In buf, or the name itself. */
const char *ps_node_title (const ps_graph *g, uint32_t v, char *buf, size_t cap);
/* The streams the pins ask for: the highest pin + 1, 0 when none. */
uint32_t ps_graph_pinned_streams (const ps_graph *g);
/* Whether ps_node_title titles v by its kernel rather than its name. */
bool ps_node_titled_by_kernel (const ps_graph *g, uint32_t v);

const char *ps_op_name (ps_op op);
/* The short name of the text plan ("record", "cond"). */
const char *ps_op_short_name (ps_op op);
const char *ps_impl_name (ps_impl impl);
const char *ps_dtype_name (ps_dtype dt);
const char *ps_copy_dir_name (ps_copy_dir dir);
const char *ps_assume_name (ps_assume a);
const char *ps_cond_kind_name (ps_cond_kind k);
/* What conditional node v tests, for views: "if flag", "while handle
 * 0x5a0" or "switch handle 0x5a8 case 2".  In buf. */
const char *ps_cond_text (const ps_graph *g, uint32_t v, char *buf, size_t cap);
/* How the model runs a conditional of that kind, for views: "" for an IF;
 * "a loop, modelled as one pass of its body (then) or none (else)" ... */
const char *ps_cond_kind_model (ps_cond_kind k);
uint32_t ps_dtype_size (ps_dtype dt);
/* Buffers a built-in reads: unary 1, binary 2, fill and spin 0. */
int ps_impl_reads (ps_impl impl);
bool ps_impl_elementwise (ps_impl impl);
/* Buffers a copy in that direction reads and writes. */
int ps_copy_dir_reads (ps_copy_dir dir);
int ps_copy_dir_writes (ps_copy_dir dir);

/* Whether node v is in a conditional branch that the graph's `assume`
 * leaves out (the model does not run it); *cond (may be NULL) gets the
 * conditional whose assumption does. */
bool ps_node_not_run (const ps_graph *g, uint32_t v, uint32_t *cond);

/* Total threads of a kernel launch (grid product times block product), saturated. */
uint64_t ps_kernel_threads (const ps_kernel *k);

#endif
