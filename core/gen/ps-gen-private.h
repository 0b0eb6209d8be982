/* ps-gen-private.h: the generator's in-memory graph, shared by
 * ps-gen-build.c (nodes, buffers, extras), ps-gen-shapes.c (the shapes)
 * and ps-gen.c (the build and the output).  See ps-gen.c for the
 * design. */
#ifndef PS_GEN_PRIVATE_H
#define PS_GEN_PRIVATE_H

#include "ps-gen.h"

/* ---- random numbers ------------------------------------------------------ */

typedef struct ps__gen_rng {
  uint64_t s[4];
} ps__gen_rng;

static inline uint64_t
ps__gen_splitmix64 (uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t
ps__gen_rotl (uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static inline uint64_t
ps__gen_rng_next (ps__gen_rng *r)
{
  uint64_t *s = r->s;
  uint64_t result = ps__gen_rotl (s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = ps__gen_rotl (s[3], 45);
  return result;
}

static inline void
ps__gen_rng_seed (ps__gen_rng *r, uint64_t seed)
{
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = ps__gen_splitmix64 (&x);
}

/* A uniform integer in [0, n), n >= 1 (multiply-shift; the tiny bias is
 * irrelevant here and keeps it branch-free and portable). */
static inline uint32_t
ps__gen_rng_below (ps__gen_rng *r, uint32_t n)
{
  return (uint32_t) (((ps__gen_rng_next (r) >> 32) * (uint64_t) n) >> 32);
}

/* True with probability num/den. */
static inline bool
ps__gen_rng_chance (ps__gen_rng *r, uint32_t num, uint32_t den)
{
  return ps__gen_rng_below (r, den) < num;
}

/* Node kinds: the name prefix, the kernel function, the built-in and whether
 * the kernel is fusible. */
typedef struct ps__gen_kind {
  const char *prefix;
  const char *function;
  uint8_t op;
  uint8_t impl;
  bool fusible;
} ps__gen_kind;

enum {
  PS__GEN_K_GEMM,
  PS__GEN_K_Q_PROJ,
  PS__GEN_K_K_PROJ,
  PS__GEN_K_V_PROJ,
  PS__GEN_K_O_PROJ,
  PS__GEN_K_FC1,
  PS__GEN_K_FC2,
  PS__GEN_K_LAYERNORM,
  PS__GEN_K_ATTENTION,
  PS__GEN_K_SOFTMAX,
  PS__GEN_K_REDUCE,
  PS__GEN_K_EMBED,
  PS__GEN_K_JOIN,
  PS__GEN_K_RELU,
  PS__GEN_K_GELU,
  PS__GEN_K_SCALE,
  PS__GEN_K_ADD_SCALAR,
  PS__GEN_K_SIGMOID,
  PS__GEN_K_TANH,
  PS__GEN_K_NEG,
  PS__GEN_K_EXP,
  PS__GEN_K_ADD,
  PS__GEN_K_MUL,
  PS__GEN_K_SUB,
  PS__GEN_K_BIAS,
  PS__GEN_K_RESIDUAL,
  PS__GEN_K_COPY,
  PS__GEN_K_FILL,
  PS__GEN_K_UPLOAD,
  PS__GEN_K_DOWNLOAD,
  PS__GEN_K_RECORD,
  PS__GEN_K_WAIT,
  PS__GEN_K_BARRIER,
  PS__GEN_K_COND,
  PS__GEN_K__COUNT
};

extern const ps__gen_kind ps__gen_kinds[PS__GEN_K__COUNT];

/* Indices into ps-gen.c's table of built-in parameters ("key": value):
 * four alphas, three betas, two fill values; 0 is none. */
enum { PS__GEN_PARAM_ALPHA0 = 1, PS__GEN_PARAM_BETA0 = 5, PS__GEN_PARAM_VALUE0 = 8 };

/* User event names are reused round robin: "ev0" .. "ev7". */
#define PS__GEN_EVENT_NAMES 8

/* Buffer kinds: the name prefix (an external temporary is an output). */
enum {
  PS__GEN_B_TEMP,
  PS__GEN_B_INPUT,
  PS__GEN_B_WEIGHT,
  PS__GEN_B_BIAS,
  PS__GEN_B_FLAG,
  PS__GEN_B__COUNT
};

typedef struct ps__gen_buf {
  uint64_t bytes;
  uint8_t kind;
  uint8_t dtype;
  uint8_t external;
} ps__gen_buf;

typedef struct ps__gen_node {
  uint32_t after_begin, reads_begin; /* into refs */
  uint32_t write;                    /* buffer id or PS_NONE */
  uint32_t aux;                      /* event name; conditional index */
  uint32_t grid_x, grid_y;
  uint32_t cost_ns;                  /* 0: not given */
  uint64_t flops;                    /* 0: not given */
  uint16_t block;
  uint8_t kind, n_after, n_reads, dir, param;
  int8_t stream;                     /* -1: not pinned */
} ps__gen_node;

typedef struct ps__gen_cond {
  uint32_t flag;                     /* buffer id */
  uint32_t members_begin;            /* into members: then members, then else */
  uint8_t n_then, n_else, want_then, want_else, assume;
} ps__gen_cond;

typedef struct ps__gen_pending {
  uint32_t due;   /* plain index before which the wait is issued */
  uint32_t name;
} ps__gen_pending;

#define PS__GEN_MAX_PENDING 64

typedef struct ps__gen {
  const ps_gen_options *o;
  ps__gen_rng r;
  int err;

  ps__gen_node *nodes;
  uint32_t n_nodes, cap_nodes;
  ps__gen_buf *bufs;
  uint32_t n_bufs, cap_bufs;
  uint32_t *refs;
  uint32_t n_refs, cap_refs;
  ps__gen_cond *conds;
  uint32_t n_conds, cap_conds;
  uint32_t *members;                  /* conditional members, one run per conditional */
  uint32_t n_members, cap_members;

  /* Plain-node budget and extras. */
  uint32_t plain_total, plain;
  uint32_t last_plain;                /* node id of the latest plain node, or PS_NONE */
  uint32_t ev_left, ev_next, ev_step, ev_pairs;
  uint32_t bar_left, bar_next, bar_step;
  uint32_t cond_left, cond_next, cond_step;
  uint32_t active_cond;               /* conditional still collecting members, or PS_NONE */
  ps__gen_pending pending[PS__GEN_MAX_PENDING];
  uint32_t n_pending;
  uint32_t pending_after[PS__GEN_MAX_PENDING];
  uint32_t n_pending_after;
  uint32_t flags[4];
} ps__gen;

/* Node building (ps-gen-build.c).  ps__gen_node_begin issues the extras due and
 * starts the next plain node; its reads follow with ps__gen_node_read before
 * any other node is started. */
uint32_t ps__gen_buf_new (ps__gen *g, int kind, uint64_t bytes, ps_dtype dtype, bool external);
ps__gen_node *ps__gen_node_begin (ps__gen *g, int kind);
void ps__gen_node_read (ps__gen *g, ps__gen_node *n, uint32_t b);

/* The extras: their schedule, decided from the node count before a shape
 * runs, and those left over, issued after it so that the count is exact. */
void ps__gen_setup_extras (ps__gen *g);
void ps__gen_flush_extras (ps__gen *g);

/* The shapes (ps-gen-shapes.c): each emits exactly the plain budget. */
void ps__gen_shape_chain (ps__gen *g);
void ps__gen_shape_fanout (ps__gen *g);
void ps__gen_shape_layered (ps__gen *g);
void ps__gen_shape_transformer (ps__gen *g);

#endif
