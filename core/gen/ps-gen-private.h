/* ps-gen-private.h: the generator's in-memory graph, shared by ps-gen.c
 * (extras, building, output) and ps-gen-shapes.c (the shapes).  See
 * ps-gen.c for the design. */
#ifndef PS_GEN_PRIVATE_H
#define PS_GEN_PRIVATE_H

#include "ps-gen.h"

/* ---- random numbers ------------------------------------------------------ */

typedef struct rng {
  uint64_t s[4];
} rng;

static inline uint64_t
splitmix64 (uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t
rotl (uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static inline uint64_t
rng_next (rng *r)
{
  uint64_t *s = r->s;
  uint64_t result = rotl (s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl (s[3], 45);
  return result;
}

static inline void
rng_seed (rng *r, uint64_t seed)
{
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64 (&x);
}

/* A uniform integer in [0, n), n >= 1 (multiply-shift; the tiny bias is
 * irrelevant here and keeps it branch-free and portable). */
static inline uint32_t
rng_below (rng *r, uint32_t n)
{
  return (uint32_t) (((rng_next (r) >> 32) * (uint64_t) n) >> 32);
}

/* True with probability num/den. */
static inline bool
rng_chance (rng *r, uint32_t num, uint32_t den)
{
  return rng_below (r, den) < num;
}

/* Node kinds: the name prefix, the kernel function, the built-in and whether
 * the kernel is fusible. */
typedef struct kind_info {
  const char *prefix;
  const char *function;
  uint8_t op;
  uint8_t impl;
  bool fusible;
} kind_info;

enum {
  K_GEMM, K_Q_PROJ, K_K_PROJ, K_V_PROJ, K_O_PROJ, K_FC1, K_FC2,
  K_LAYERNORM, K_ATTENTION, K_SOFTMAX, K_REDUCE, K_EMBED, K_JOIN,
  K_RELU, K_GELU, K_SCALE, K_ADD_SCALAR, K_SIGMOID, K_TANH, K_NEG, K_EXP,
  K_ADD, K_MUL, K_SUB, K_BIAS, K_RESIDUAL, K_COPY, K_FILL,
  K_UPLOAD, K_DOWNLOAD, K_RECORD, K_WAIT, K_BARRIER, K_COND,
  K__COUNT
};

extern const kind_info ps__gen_kinds[K__COUNT];

/* Indices into ps-gen.c's table of built-in parameters ("key": value):
 * four alphas, three betas, two fill values; 0 is none. */
enum { PARAM_ALPHA0 = 1, PARAM_BETA0 = 5, PARAM_VALUE0 = 8 };

/* User event names are reused round robin: "ev0" .. "ev7". */
#define N_EVENT_NAMES 8

/* Buffer kinds: the name prefix (an external temporary is an output). */
enum { B_TEMP, B_INPUT, B_WEIGHT, B_BIAS, B_FLAG, B__COUNT };

typedef struct gbuf {
  uint64_t bytes;
  uint8_t kind;
  uint8_t dtype;
  uint8_t external;
} gbuf;

typedef struct gnode {
  uint32_t after_begin, reads_begin; /* into refs */
  uint32_t write;                    /* buffer id or PS_NONE */
  uint32_t aux;                      /* event name; conditional index */
  uint32_t grid_x, grid_y;
  uint32_t cost_ns;                  /* 0: not given */
  uint64_t flops;                    /* 0: not given */
  uint16_t block;
  uint8_t kind, n_after, n_reads, dir, param;
  int8_t stream;                     /* -1: not pinned */
} gnode;

typedef struct gcond {
  uint32_t flag;                     /* buffer id */
  uint32_t members_begin;            /* into members: then members, then else */
  uint8_t n_then, n_else, want_then, want_else, assume;
} gcond;

typedef struct pending_wait {
  uint32_t due;   /* plain index before which the wait is issued */
  uint32_t name;
} pending_wait;

#define MAX_PENDING 64

typedef struct gen {
  const ps_gen_options *o;
  rng r;
  int err;

  gnode *nodes;
  uint32_t n_nodes, cap_nodes;
  gbuf *bufs;
  uint32_t n_bufs, cap_bufs;
  uint32_t *refs;
  uint32_t n_refs, cap_refs;
  gcond *conds;
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
  pending_wait pending[MAX_PENDING];
  uint32_t n_pending;
  uint32_t pending_after[MAX_PENDING];
  uint32_t n_pending_after;
  uint32_t flags[4];
} gen;

/* Node building (ps-gen.c).  ps__gen_node_begin issues the extras due and
 * starts the next plain node; its reads follow with ps__gen_node_read before
 * any other node is started. */
uint32_t ps__gen_buf_new (gen *g, int kind, uint64_t bytes, ps_dtype dtype, bool external);
gnode *ps__gen_node_begin (gen *g, int kind);
void ps__gen_node_read (gen *g, gnode *n, uint32_t b);

/* The shapes (ps-gen-shapes.c): each emits exactly the plain budget. */
void ps__gen_shape_chain (gen *g);
void ps__gen_shape_fanout (gen *g);
void ps__gen_shape_layered (gen *g);
void ps__gen_shape_transformer (gen *g);

#endif
