/* ps-gen-shapes.c: the shapes of the synthetic graph generator.  Each
 * shape emits exactly the plain-node budget left(g) through the building
 * blocks below; extras are interleaved by ps__gen_node_begin. */
#include "ps-gen-private.h"

#include <math.h>
#include <stdlib.h>

/* ---- shape building blocks ----------------------------------------------- */

static uint32_t
left (const ps__gen *g)
{
  return g->plain_total - g->plain;
}

static uint32_t
ceil_div (uint64_t a, uint64_t b)
{
  uint64_t q = (a + b - 1) / b;
  return q == 0 ? 1 : q > PS_MAX_GRID_DIM ? PS_MAX_GRID_DIM : (uint32_t) q;
}

static uint64_t
elems_of (const ps__gen *g, uint32_t b)
{
  static const uint8_t size[PS_DT__COUNT] = { 4, 2, 2, 4, 1 };
  return g->bufs[b].bytes / size[g->bufs[b].dtype];
}

/* Reads of the generator's element-wise kinds: binary ones read two. */
static int
kind_reads (int kind)
{
  switch (ps__gen_kinds[kind].impl) {
  case PS_IMPL_ADD:
  case PS_IMPL_MUL:
  case PS_IMPL_SUB:
    return 2;
  case PS_IMPL_FILL:
  case PS_IMPL_SPIN:
    return 0;
  default:
    return 1;
  }
}

static void
emit_copy (ps__gen *g, int kind, uint32_t b)
{
  ps__gen_node *n = ps__gen_node_begin (g, kind);
  if (!n)
    return;
  if (kind == PS__GEN_K_UPLOAD) {
    n->dir = PS_COPY_H2D;
    n->write = b;
  } else {
    n->dir = PS_COPY_D2H;
    ps__gen_node_read (g, n, b);
  }
}

/* An element-wise built-in over `out`, reading in0 (and in1 for binary ones). */
static void
emit_ew (ps__gen *g, int kind, uint32_t in0, uint32_t in1, uint32_t out)
{
  ps__gen_node *n = ps__gen_node_begin (g, kind);
  if (!n)
    return;
  int nr = kind_reads (kind);
  if (nr >= 1)
    ps__gen_node_read (g, n, in0);
  if (nr >= 2)
    ps__gen_node_read (g, n, in1);
  n->write = out;
  uint64_t elems = elems_of (g, out);
  n->grid_x = ceil_div (elems, 1024);
  n->grid_y = 1;
  n->block = 256;
  uint64_t bytes = g->bufs[out].bytes * (uint64_t) (nr + 1);
  n->cost_ns = (uint32_t) (1800 + bytes / 2500 + ps__gen_rng_below (&g->r, 400));
  if (kind == PS__GEN_K_SCALE)
    n->param = (uint8_t) (PS__GEN_PARAM_ALPHA0 + ps__gen_rng_below (&g->r, 4));
  else if (kind == PS__GEN_K_ADD_SCALAR)
    n->param = (uint8_t) (PS__GEN_PARAM_BETA0 + ps__gen_rng_below (&g->r, 3));
  else if (kind == PS__GEN_K_FILL)
    n->param = (uint8_t) (PS__GEN_PARAM_VALUE0 + ps__gen_rng_below (&g->r, 2));
}

/* A matrix product out[m x n] = in[m x k] * w[k x n]. */
static void
emit_gemm (ps__gen *g, int kind, uint32_t in, uint32_t w, uint32_t out, uint64_t m, uint64_t nn,
           uint64_t k)
{
  ps__gen_node *n = ps__gen_node_begin (g, kind);
  if (!n)
    return;
  ps__gen_node_read (g, n, in);
  ps__gen_node_read (g, n, w);
  n->write = out;
  n->grid_x = ceil_div (nn, 128);
  n->grid_y = ceil_div (m, 128);
  n->block = 256;
  n->flops = 2 * m * nn * k;
}

/* A synthetic kernel (no built-in) reading `nr` buffers from reads[]. */
static void
emit_synth (ps__gen *g, int kind, const uint32_t *reads, uint32_t nr, uint32_t out, uint64_t flops)
{
  ps__gen_node *n = ps__gen_node_begin (g, kind);
  if (!n)
    return;
  uint64_t bytes = g->bufs[out].bytes;
  for (uint32_t i = 0; i < nr; i++) {
    ps__gen_node_read (g, n, reads[i]);
    bytes += g->bufs[reads[i]].bytes;
  }
  n->write = out;
  n->grid_x = ceil_div (elems_of (g, out), 2048);
  n->grid_y = 1;
  n->block = kind == PS__GEN_K_ATTENTION ? 128 : 256;
  if (flops)
    n->flops = flops;
  else
    n->cost_ns = (uint32_t) (2500 + bytes / 2000 + ps__gen_rng_below (&g->r, 800));
}

static const int unary_kinds[] = { PS__GEN_K_RELU,       PS__GEN_K_GELU,    PS__GEN_K_SCALE,
                                   PS__GEN_K_ADD_SCALAR, PS__GEN_K_SIGMOID, PS__GEN_K_TANH,
                                   PS__GEN_K_NEG,        PS__GEN_K_EXP,     PS__GEN_K_COPY };
static const int binary_kinds[] = { PS__GEN_K_ADD, PS__GEN_K_MUL, PS__GEN_K_SUB, PS__GEN_K_BIAS };

static int
pick_unary (ps__gen *g)
{
  return unary_kinds[ps__gen_rng_below (&g->r, sizeof unary_kinds / sizeof unary_kinds[0])];
}

static int
pick_binary (ps__gen *g)
{
  return binary_kinds[ps__gen_rng_below (&g->r, sizeof binary_kinds / sizeof binary_kinds[0])];
}

static uint64_t
pick_elems (ps__gen *g)
{
  static const uint64_t sizes[] = { 1u << 16, 1u << 18, 1u << 20, 1u << 22 };
  return sizes[ps__gen_rng_below (&g->r, 4)];
}

/* Makes the buffer a graph output (external) and downloads it. */
static void
finish_output (ps__gen *g, uint32_t b)
{
  if (b != PS_NONE)
    g->bufs[b].external = 1;
  emit_copy (g, PS__GEN_K_DOWNLOAD, b);
}

/* ---- shapes -------------------------------------------------------------- */

static uint32_t
new_temp (ps__gen *g, uint64_t elems, ps_dtype dt)
{
  return ps__gen_buf_new (g, PS__GEN_B_TEMP, elems * (dt == PS_DT_F16 ? 2 : 4), dt, false);
}

/* One long dependent chain: mostly fusible element-wise kernels, in place or
 * into a fresh buffer, with a non-fusible kernel every few steps. */
void
ps__gen_shape_chain (ps__gen *g)
{
  uint64_t elems = pick_elems (g);
  uint32_t x = ps__gen_buf_new (g, PS__GEN_B_INPUT, elems * 4, PS_DT_F32, true);
  emit_copy (g, PS__GEN_K_UPLOAD, x);
  if (left (g) == 0)
    return;
  uint32_t bias = ps__gen_buf_new (g, PS__GEN_B_BIAS, 4096 * 4, PS_DT_F32, true);
  uint32_t cur = x;
  uint32_t until_heavy = 3 + ps__gen_rng_below (&g->r, 10);
  while (left (g) > 1 && !g->err) {
    if (until_heavy-- == 0) {
      uint32_t out = new_temp (g, elems, PS_DT_F32);
      uint32_t r = ps__gen_rng_below (&g->r, 4);
      if (r == 0) {
        uint32_t w = ps__gen_buf_new (g, PS__GEN_B_WEIGHT, 1024 * 1024 * 4, PS_DT_F32, true);
        emit_gemm (g, PS__GEN_K_GEMM, cur, w, out, elems / 1024, 1024, 1024);
      } else {
        static const int heavy[] = { PS__GEN_K_SOFTMAX, PS__GEN_K_LAYERNORM, PS__GEN_K_REDUCE };
        emit_synth (g, heavy[r - 1], &cur, 1, out, 0);
      }
      cur = out;
      until_heavy = 3 + ps__gen_rng_below (&g->r, 10);
    } else {
      uint32_t out =
          cur != x && ps__gen_rng_chance (&g->r, 2, 5) ? cur : new_temp (g, elems, PS_DT_F32);
      if (left (g) > 2 && ps__gen_rng_chance (&g->r, 1, 16)) {
        /* A mask filled on the device, then applied. */
        uint32_t mask = new_temp (g, elems, PS_DT_F32);
        emit_ew (g, PS__GEN_K_FILL, PS_NONE, PS_NONE, mask);
        emit_ew (g, PS__GEN_K_MUL, cur, mask, out);
      } else if (ps__gen_rng_chance (&g->r, 1, 4)) {
        emit_ew (g, pick_binary (g), cur, bias, out);
      } else {
        emit_ew (g, pick_unary (g), cur, PS_NONE, out);
      }
      cur = out;
    }
  }
  finish_output (g, cur);
}

/* Internal nodes of the join tree over b branch outputs (fan-in 16). */
static uint32_t
join_nodes (uint32_t b)
{
  uint32_t nodes = 0;
  while (b > 1) {
    b = (b + 15) / 16;
    nodes += b;
  }
  return nodes;
}

/* One producer, many independent branches, joined by a tree of kernels that
 * read up to 16 branch outputs each. */
void
ps__gen_shape_fanout (ps__gen *g)
{
  uint32_t P = left (g);
  if (P < 6) {
    ps__gen_shape_chain (g);
    return;
  }
  uint32_t used = 3; /* upload, producer, download */
  uint32_t *len = malloc ((size_t) P * sizeof *len);
  uint32_t *outs = malloc ((size_t) P * sizeof *outs);
  if (!len || !outs) {
    g->err = PS_ENOMEM;
    goto out;
  }
  uint32_t nb = 0, sum = 0;
  for (;;) {
    uint32_t l = 2 + ps__gen_rng_below (&g->r, 7);
    if (used + sum + l + join_nodes (nb + 1) > P)
      break;
    len[nb++] = l;
    sum += l;
  }
  if (nb == 0) {
    len[nb++] = P - used;
    sum = P - used;
  } else {
    len[nb - 1] += P - used - sum - join_nodes (nb);
  }

  uint64_t elems = pick_elems (g);
  uint32_t x = ps__gen_buf_new (g, PS__GEN_B_INPUT, elems * 4, PS_DT_F32, true);
  emit_copy (g, PS__GEN_K_UPLOAD, x);
  uint32_t s = new_temp (g, elems, PS_DT_F32);
  uint32_t w0 = ps__gen_buf_new (g, PS__GEN_B_WEIGHT, 1024 * 1024 * 4, PS_DT_F32, true);
  emit_gemm (g, PS__GEN_K_GEMM, x, w0, s, elems / 1024, 1024, 1024);
  uint32_t bias = ps__gen_buf_new (g, PS__GEN_B_BIAS, 4096 * 4, PS_DT_F32, true);

  for (uint32_t b = 0; b < nb && !g->err; b++) {
    uint32_t cur = new_temp (g, elems, PS_DT_F32);
    if (ps__gen_rng_chance (&g->r, 1, 3)) {
      uint32_t w = ps__gen_buf_new (g, PS__GEN_B_WEIGHT, 1024 * 1024 * 4, PS_DT_F32, true);
      emit_gemm (g, PS__GEN_K_GEMM, s, w, cur, elems / 1024, 1024, 1024);
    } else {
      emit_ew (g, pick_unary (g), s, PS_NONE, cur);
    }
    for (uint32_t i = 1; i < len[b]; i++) {
      uint32_t out = ps__gen_rng_chance (&g->r, 2, 3) ? cur : new_temp (g, elems, PS_DT_F32);
      if (ps__gen_rng_chance (&g->r, 1, 8))
        emit_synth (g, PS__GEN_K_SOFTMAX, &cur, 1, out, 0);
      else if (ps__gen_rng_chance (&g->r, 1, 4))
        emit_ew (g, pick_binary (g), cur, bias, out);
      else
        emit_ew (g, pick_unary (g), cur, PS_NONE, out);
      cur = out;
    }
    outs[b] = cur;
  }

  uint32_t count = nb;
  while (count > 1 && !g->err) {
    uint32_t next = 0;
    for (uint32_t i = 0; i < count; i += 16) {
      uint32_t k = count - i < 16 ? count - i : 16;
      uint32_t out = new_temp (g, elems, PS_DT_F32);
      emit_synth (g, PS__GEN_K_JOIN, &outs[i], k, out, 0);
      outs[next++] = out;
    }
    count = next;
  }
  finish_output (g, outs[0]);
out:
  free (len);
  free (outs);
}

/* Layers of width about sqrt(P): each node reads buffers of the previous
 * one to three layers and writes a fresh buffer (or, for some element-wise
 * kernels continuing their column, the same one in place). */
void
ps__gen_shape_layered (ps__gen *g)
{
  uint32_t P = left (g);
  if (P < 8) {
    ps__gen_shape_chain (g);
    return;
  }
  uint32_t W = (uint32_t) sqrt ((double) P);
  while ((uint64_t) W * W > P)
    W--;
  while ((uint64_t) (W + 1) * (W + 1) <= P)
    W++;
  if (W < 2)
    W = 2;
  uint32_t n_in = W < 8 ? W : 8, n_out = W < 4 ? W : 4;
  uint32_t *ring = malloc ((size_t) 4 * W * sizeof *ring);
  uint32_t *elems = malloc ((size_t) W * sizeof *elems);
  uint32_t last[4] = { 0 };
  uint32_t n_last = 0, n_w = W < 64 ? W : 64, w_base, cnt[4] = { 0 };
  if (!ring || !elems) {
    g->err = PS_ENOMEM;
    goto out;
  }
  for (uint32_t j = 0; j < W; j++)
    elems[j] = (uint32_t) pick_elems (g);
  for (uint32_t i = 0; i < n_in; i++) {
    ring[i] = ps__gen_buf_new (g, PS__GEN_B_INPUT, (uint64_t) elems[i] * 4, PS_DT_F32, true);
    emit_copy (g, PS__GEN_K_UPLOAD, ring[i]);
  }
  cnt[0] = n_in;
  w_base = g->n_bufs;
  for (uint32_t i = 0; i < n_w; i++)
    ps__gen_buf_new (g, PS__GEN_B_WEIGHT, (uint64_t) 1024 * 1024 * 2, PS_DT_F16, true);

  for (uint32_t l = 1; left (g) > n_out && !g->err; l++) {
    uint32_t *cur = ring + (size_t) (l % 4) * W;
    cnt[l % 4] = 0;
    for (uint32_t j = 0; j < W && left (g) > n_out && !g->err; j++) {
      uint32_t back = l < 3 ? l : 3;
      uint32_t d = 1 + ps__gen_rng_below (&g->r, back);
      const uint32_t *src_l = ring + (size_t) ((l - d) % 4) * W;
      uint32_t src_n = cnt[(l - d) % 4];
      bool column = d == 1 && j < src_n && ps__gen_rng_chance (&g->r, 3, 5);
      uint32_t src = column ? src_l[j] : src_l[ps__gen_rng_below (&g->r, src_n)];
      uint32_t r = ps__gen_rng_below (&g->r, 100), out;
      if (r < 25) {
        out = new_temp (g, elems[j], PS_DT_F32);
        emit_gemm (g, PS__GEN_K_GEMM, src, w_base + ps__gen_rng_below (&g->r, n_w), out,
                   (elems[j] + 1023) / 1024, 1024, 1024);
      } else if (r < 80) {
        bool inplace =
            column && g->bufs[src].kind == PS__GEN_B_TEMP && ps__gen_rng_chance (&g->r, 1, 5);
        out = inplace ? src : new_temp (g, elems_of (g, src), PS_DT_F32);
        emit_ew (g, pick_unary (g), src, PS_NONE, out);
      } else {
        uint32_t e = 1 + ps__gen_rng_below (&g->r, back);
        const uint32_t *l2 = ring + (size_t) ((l - e) % 4) * W;
        uint32_t src2 = l2[ps__gen_rng_below (&g->r, cnt[(l - e) % 4])];
        out = new_temp (g, elems_of (g, src), PS_DT_F32);
        emit_ew (g, pick_binary (g), src, src2, out);
      }
      cur[cnt[l % 4]++] = out;
      last[n_last++ % 4] = out;
    }
  }
  for (uint32_t i = 0; i < n_out && !g->err; i++) {
    /* Before any layer ran (tiny graphs) the inputs are the outputs. */
    uint32_t b = n_last > 0 ? last[(n_last - 1 - i % (n_last < 4 ? n_last : 4)) % 4]
                            : ring[i % n_in];
    finish_output (g, b);
  }
out:
  free (ring);
  free (elems);
}

/* A model parameter: an external f16 weight or bias. */
static uint32_t
param (ps__gen *g, int kind, uint64_t bytes)
{
  return ps__gen_buf_new (g, kind, bytes, PS_DT_F16, true);
}

/* Transformer blocks: layernorm, parallel Q/K/V projections, attention,
 * output projection with a bias, residual add, layernorm, MLP with fusible
 * bias + gelu and bias + scale epilogues, residual add.  The block is a
 * small state machine so that it can stop after any node. */
void
ps__gen_shape_transformer (ps__gen *g)
{
  if (left (g) < 8) {
    ps__gen_shape_chain (g);
    return;
  }
  static const uint64_t dims[] = { 1024, 2048, 4096 };
  static const uint64_t toks[] = { 512, 1024, 2048 };
  uint64_t d = dims[ps__gen_rng_below (&g->r, 3)], T = toks[ps__gen_rng_below (&g->r, 3)];
  uint64_t act = T * d, mlp = T * 4 * d;
  ps_dtype h = PS_DT_F16;

  uint32_t ids = ps__gen_buf_new (g, PS__GEN_B_INPUT, T * 4, PS_DT_I32, true);
  emit_copy (g, PS__GEN_K_UPLOAD, ids);
  uint32_t emb = param (g, PS__GEN_B_WEIGHT, 32000 * d * 2);
  uint32_t x = new_temp (g, act, h), rd[3];
  rd[0] = ids;
  rd[1] = emb;
  emit_synth (g, PS__GEN_K_EMBED, rd, 2, x, 0);

  uint32_t last = x, ln = 0, q = 0, k = 0, v = 0, a = 0, o = 0, x2 = 0, hh = 0, y = 0;
  for (int step = 0; left (g) > 1 && !g->err; step = (step + 1) % 16) {
    switch (step) {
    case 0:
    case 8:
      rd[0] = step == 0 ? x : x2;
      rd[1] = param (g, PS__GEN_B_WEIGHT, d * 2 * 2);
      last = ln = new_temp (g, act, h);
      emit_synth (g, PS__GEN_K_LAYERNORM, rd, 2, ln, 0);
      break;
    case 1:
      last = q = new_temp (g, act, h);
      emit_gemm (g, PS__GEN_K_Q_PROJ, ln, param (g, PS__GEN_B_WEIGHT, d * d * 2), q, T, d, d);
      break;
    case 2:
      last = k = new_temp (g, act, h);
      emit_gemm (g, PS__GEN_K_K_PROJ, ln, param (g, PS__GEN_B_WEIGHT, d * d * 2), k, T, d, d);
      break;
    case 3:
      last = v = new_temp (g, act, h);
      emit_gemm (g, PS__GEN_K_V_PROJ, ln, param (g, PS__GEN_B_WEIGHT, d * d * 2), v, T, d, d);
      break;
    case 4:
      rd[0] = q;
      rd[1] = k;
      rd[2] = v;
      last = a = new_temp (g, act, h);
      emit_synth (g, PS__GEN_K_ATTENTION, rd, 3, a, 4 * T * T * d);
      break;
    case 5:
      last = o = new_temp (g, act, h);
      emit_gemm (g, PS__GEN_K_O_PROJ, a, param (g, PS__GEN_B_WEIGHT, d * d * 2), o, T, d, d);
      break;
    case 6:
      emit_ew (g, PS__GEN_K_BIAS, o, param (g, PS__GEN_B_BIAS, d * 2), o);
      break;
    case 7:
      last = x2 = new_temp (g, act, h);
      emit_ew (g, PS__GEN_K_RESIDUAL, x, o, x2);
      break;
    case 9:
      last = hh = new_temp (g, mlp, h);
      emit_gemm (g, PS__GEN_K_FC1, ln, param (g, PS__GEN_B_WEIGHT, d * 4 * d * 2), hh, T, 4 * d, d);
      break;
    case 10:
      emit_ew (g, PS__GEN_K_BIAS, hh, param (g, PS__GEN_B_BIAS, 4 * d * 2), hh);
      break;
    case 11:
      emit_ew (g, PS__GEN_K_GELU, hh, PS_NONE, hh);
      break;
    case 12:
      last = y = new_temp (g, act, h);
      emit_gemm (g, PS__GEN_K_FC2, hh, param (g, PS__GEN_B_WEIGHT, d * 4 * d * 2), y, T, d, 4 * d);
      break;
    case 13:
      emit_ew (g, PS__GEN_K_BIAS, y, param (g, PS__GEN_B_BIAS, d * 2), y);
      break;
    case 14:
      emit_ew (g, PS__GEN_K_SCALE, y, PS_NONE, y);
      break;
    case 15:
      last = x = new_temp (g, act, h);
      emit_ew (g, PS__GEN_K_RESIDUAL, x2, y, x);
      break;
    }
  }
  finish_output (g, last);
}

