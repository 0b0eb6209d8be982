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

typedef enum ps_op {
  PS_OP_KERNEL = 0,
  PS_OP_MEMCPY,
  PS_OP_MEMSET,
  PS_OP_HOST,
  PS_OP_EVENT_RECORD,
  PS_OP_EVENT_WAIT,
  PS_OP_BARRIER,
  PS_OP_CONDITIONAL,
  PS_OP_EMPTY,  /* imported graphs only: a node with no work */
  PS_OP_OPAQUE, /* imported graphs only: a node type planscope does not model */
  PS_OP__COUNT
} ps_op;

/* Built-in kernel implementations ("impl"). */
typedef enum ps_impl {
  PS_IMPL_NONE = 0, /* synthetic unless a module is given */
  PS_IMPL_COPY,
  PS_IMPL_SCALE,
  PS_IMPL_ADD_SCALAR,
  PS_IMPL_RELU,
  PS_IMPL_GELU,
  PS_IMPL_SIGMOID,
  PS_IMPL_TANH,
  PS_IMPL_EXP,
  PS_IMPL_NEG,
  PS_IMPL_ADD,
  PS_IMPL_MUL,
  PS_IMPL_SUB,
  PS_IMPL_FILL,
  PS_IMPL_SPIN,
  PS_IMPL__COUNT
} ps_impl;

typedef enum ps_dtype { PS_DT_F32 = 0, PS_DT_F16, PS_DT_BF16, PS_DT_I32, PS_DT_U8, PS_DT__COUNT } ps_dtype;
typedef enum ps_copy_dir { PS_COPY_H2D = 0, PS_COPY_D2H, PS_COPY_D2D, PS_COPY_P2P, PS_COPY__COUNT } ps_copy_dir;
typedef enum ps_assume { PS_ASSUME_BOTH = 0, PS_ASSUME_THEN, PS_ASSUME_ELSE } ps_assume;

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
} ps_cond;

typedef struct ps_node {
  uint32_t name;  /* string pool offset */
  uint8_t op;     /* ps_op */
  uint8_t flags;  /* PS_NODE_* */
  uint8_t impl;   /* ps_impl (kernels) */
  uint8_t dir;    /* ps_copy_dir (memcpy) */
  int32_t stream; /* pinned stream, or -1 */
  uint32_t line, col; /* position of the node's object in the file */
  double cost_ns;     /* valid when PS_NODE_HAS_COST */
  uint32_t reads_begin, reads_count;   /* into graph->access */
  uint32_t writes_begin, writes_count; /* into graph->access */
  /* Per op: kernel -> index into kernels; event_record/event_wait -> event
   * id; conditional -> index into conds; host -> label string offset (or
   * PS_NONE); opaque -> type string offset; otherwise PS_NONE. */
  uint32_t aux;
  uint64_t bytes;     /* memcpy/memset: bytes moved or set */
  uint8_t value;      /* memset byte value */
  int32_t src_device, dst_device; /* p2p copies; -1 otherwise */
  /* Node id of the conditional whose branch holds this node (the latest
   * such conditional, i.e. the innermost when they nest), or PS_NONE. */
  uint32_t cond;
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

void ps_graph_init (ps_graph *g);
void ps_graph_free (ps_graph *g);

/* Loads a graph file: the planscope JSON format, or a cudaGraphDebugDotPrint
 * DOT dump, chosen by content.  On failure returns a negative code, leaves
 * *g empty (as after ps_graph_init) and puts at least one error in diag
 * (located wherever the problem has a place in the file).  Warnings go to
 * diag on success too.  *g is overwritten, not freed: free a previous
 * graph first.  The file is streamed, at most PS_MAX_FILE_BYTES. */
int ps_graph_load_file (ps_graph *g, const char *path, ps_diag *diag);
/* The same from memory; `path` is used for messages and relative paths. */
int ps_graph_load_json (ps_graph *g, const char *data, size_t len, const char *path,
                        ps_diag *diag);

/* Names of enum values as written in files. */
const char *ps_op_name (ps_op op);
const char *ps_impl_name (ps_impl impl);
const char *ps_dtype_name (ps_dtype dt);
const char *ps_copy_dir_name (ps_copy_dir dir);
uint32_t ps_dtype_size (ps_dtype dt);
/* Element-wise built-ins: unary (1 read), binary (2 reads), fill/spin (0). */
int ps_impl_reads (ps_impl impl);
bool ps_impl_elementwise (ps_impl impl);

/* Total threads of a kernel launch (grid product times block product), saturated. */
uint64_t ps_kernel_threads (const ps_kernel *k);

#endif
