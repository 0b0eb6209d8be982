/* ps-kernel-src.h: the CUDA C of a plan's kernel steps.
 *
 * Built-in element-wise kernels (every `impl` of graph-format.md, over the
 * dtypes of the buffers they touch), `fill`, `spin` and synthetic kernels
 * (a kernel with neither impl nor module streams its reads into its
 * writes) are generated as grid-stride loops.  A fused group becomes one
 * kernel whose loop body runs the members' bodies in order for element i;
 * a buffer a member writes is kept in a register for the members after it
 * and stored only when something outside the group reads it or it is
 * external.  That is only sound when every member that reads a buffer
 * written inside the group reads it at the element it is computing (no
 * cyclic read of a shorter buffer); otherwise the group runs as several
 * launches of one module, one member each, and `note` says why.
 *
 * Element-wise semantics (the same fused or not): element i of a write
 * buffer of n elements, for i < n, is computed from element i % len of each
 * read buffer (len its element count; a buffer of 0 elements reads as 0).
 * Values are computed in float; after every store, and for every value kept
 * in a register, they are rounded to the buffer's dtype, so a fused kernel
 * gives the same bits as the unfused ones (NVRTC is run with --fmad=false).
 * A synthetic kernel covers the largest of its buffers and writes the mean
 * of its reads (0 with none); a synthetic kernel with `cost_ns`, and
 * `spin`, busy-wait on %globaltimer until that long after they started
 * (such launches are capped at one wave of resident blocks).
 *
 * Every generated kernel has the parameters
 *   (T0 *b0, ps_u64 n0, T1 *b1, ps_u64 n1, ..., ps_u64 N, ps_u64 pad_ns, int sink)
 * for its part's buffers in order (pointer and element count), the elements
 * N the loop covers, the busy time and a flag that is always 0 (it keeps the
 * loads of read-only synthetic kernels from being optimised away). */
#ifndef PS_KERNEL_SRC_H
#define PS_KERNEL_SRC_H

#include "ps-profiler.h"

typedef enum ps_ksrc_kind {
  PS_KSRC_NONE = 0,  /* not a kernel step */
  PS_KSRC_GENERATED, /* built-in, synthetic, spin or fused: `code` */
  PS_KSRC_USER_CU,   /* a user .cu (its text in `code`), compiled with NVRTC */
  PS_KSRC_USER_PTX,  /* a user .ptx, loaded as is */
  PS_KSRC_USER_CUBIN,/* a user .cubin, loaded as is */
} ps_ksrc_kind;

/* One launch of a step. */
typedef struct ps_ksrc_part {
  uint32_t node;   /* grid, block and smem come from this node */
  uint32_t bufs_begin, bufs_count; /* its buffer parameters: ps_ksrc.bufs[begin ..] */
  uint64_t n;      /* N: elements the loop covers */
  uint64_t pad_ns; /* busy time (spin, synthetic cost_ns) */
  bool one_wave;   /* cap the grid at one wave of resident blocks */
} ps_ksrc_part;

typedef struct ps_ksrc {
  uint8_t kind;      /* ps_ksrc_kind */
  bool fused;        /* several nodes in one kernel */
  char *code;        /* the text NVRTC compiles; NULL for .ptx/.cubin */
  size_t code_len;
  char *header;      /* a comment naming the nodes, for files written by `kernels` */
  char function[128]; /* kernel name; part k of several is "<function>_p<k>" */
  char *module_path; /* user modules: the path, resolved against the graph file */
  uint32_t n_parts;
  ps_ksrc_part *parts;
  uint32_t n_bufs;
  uint32_t *bufs;    /* generated kernels: every part's buffer parameters, part after part */
  uint32_t *nodes;   /* the step's nodes in program order */
  uint32_t n_nodes;
  char note[256];
} ps_ksrc;

/* What the generator needs to know about a whole graph, computed once. */
typedef struct ps_ksrc_ctx {
  const ps_graph *g;
  uint32_t *readers; /* per buffer: read accesses by all nodes */
  uint32_t *param_of; /* scratch, PS_NONE between builds: one build at a time */
} ps_ksrc_ctx;

int ps_ksrc_ctx_init (ps_ksrc_ctx *c, const ps_graph *g);
void ps_ksrc_ctx_free (ps_ksrc_ctx *c);

/* The kernel for `nodes` (kernel nodes; a plan step's, in any order).
 * Returns 0, PS_ENOMEM, or PS_EINVAL / PS_EIO with err set (a module that
 * cannot be read, a group that contains a module kernel). */
int ps_ksrc_build (ps_ksrc *k, const ps_ksrc_ctx *c, const uint32_t *nodes, uint32_t n,
                   ps_gpu_error *err);
/* The same for a plan step; kind PS_KSRC_NONE for steps that are not kernels. */
int ps_ksrc_build_step (ps_ksrc *k, const ps_ksrc_ctx *c, const ps_plan *p, uint32_t step,
                        ps_gpu_error *err);
void ps_ksrc_free (ps_ksrc *k);

/* Elements of a buffer: its bytes over its dtype size. */
uint64_t ps_buffer_elements (const ps_graph *g, uint32_t b);

/* The support module: kernels ps_init_<dtype> (T *p, ps_u64 n, ps_u64 seed)
 * that fill a buffer with the deterministic input values below.  Static
 * text; do not free. */
const char *ps_ksrc_support_code (void);

/* The input value of element i of a buffer filled with `seed` (what the
 * support kernels write, before rounding to the dtype), and a seed from a
 * name. */
double ps_fill_value (ps_dtype dt, uint64_t seed, uint64_t i);
uint64_t ps_fill_seed (const char *name);

/* A 64-bit FNV-1a hash, for caches. */
uint64_t ps_hash64 (const void *data, size_t len, uint64_t h);
#define PS_HASH64_INIT 0xcbf29ce484222325ull

#endif
