/* ps-gen-build.c: the generator's in-memory graph (see ps-gen-private.h):
 * node kinds, buffers, nodes and their references, and the extras (user
 * events, barriers, conditionals, pins) interleaved as a shape emits its
 * plain nodes. */
#include "ps-gen-private.h"

#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

const ps__gen_kind ps__gen_kinds[PS__GEN_K__COUNT] = {
  [PS__GEN_K_GEMM] = { "gemm", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_Q_PROJ] = { "q_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_K_PROJ] = { "k_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_V_PROJ] = { "v_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_O_PROJ] = { "o_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_FC1] = { "fc1", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_FC2] = { "fc2", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_LAYERNORM] = { "layernorm", "layernorm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_ATTENTION] = { "attention", "flash_attention", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_SOFTMAX] = { "softmax", "softmax", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_REDUCE] = { "reduce", "reduce_sum", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_EMBED] = { "embed", "embedding", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_JOIN] = { "join", "concat_sum", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [PS__GEN_K_RELU] = { "relu", "relu", PS_OP_KERNEL, PS_IMPL_RELU, true },
  [PS__GEN_K_GELU] = { "gelu", "gelu", PS_OP_KERNEL, PS_IMPL_GELU, true },
  [PS__GEN_K_SCALE] = { "scale", "scale", PS_OP_KERNEL, PS_IMPL_SCALE, true },
  [PS__GEN_K_ADD_SCALAR] = { "shift", "add_scalar", PS_OP_KERNEL, PS_IMPL_ADD_SCALAR, true },
  [PS__GEN_K_SIGMOID] = { "sigmoid", "sigmoid", PS_OP_KERNEL, PS_IMPL_SIGMOID, true },
  [PS__GEN_K_TANH] = { "tanh", "tanh", PS_OP_KERNEL, PS_IMPL_TANH, true },
  [PS__GEN_K_NEG] = { "neg", "neg", PS_OP_KERNEL, PS_IMPL_NEG, true },
  [PS__GEN_K_EXP] = { "exp", "exp", PS_OP_KERNEL, PS_IMPL_EXP, true },
  [PS__GEN_K_ADD] = { "add", "add", PS_OP_KERNEL, PS_IMPL_ADD, true },
  [PS__GEN_K_MUL] = { "mul", "mul", PS_OP_KERNEL, PS_IMPL_MUL, true },
  [PS__GEN_K_SUB] = { "sub", "sub", PS_OP_KERNEL, PS_IMPL_SUB, true },
  [PS__GEN_K_BIAS] = { "bias", "add", PS_OP_KERNEL, PS_IMPL_ADD, true },
  [PS__GEN_K_RESIDUAL] = { "residual", "add", PS_OP_KERNEL, PS_IMPL_ADD, true },
  [PS__GEN_K_COPY] = { "copy", "copy", PS_OP_KERNEL, PS_IMPL_COPY, true },
  [PS__GEN_K_FILL] = { "fill", "fill", PS_OP_KERNEL, PS_IMPL_FILL, true },
  [PS__GEN_K_UPLOAD] = { "upload", NULL, PS_OP_MEMCPY, 0, false },
  [PS__GEN_K_DOWNLOAD] = { "download", NULL, PS_OP_MEMCPY, 0, false },
  [PS__GEN_K_RECORD] = { "record", NULL, PS_OP_EVENT_RECORD, 0, false },
  [PS__GEN_K_WAIT] = { "wait", NULL, PS_OP_EVENT_WAIT, 0, false },
  [PS__GEN_K_BARRIER] = { "barrier", NULL, PS_OP_BARRIER, 0, false },
  [PS__GEN_K_COND] = { "cond", NULL, PS_OP_CONDITIONAL, 0, false },
};

/* Room for one more element; on failure the generator's error is set. */
static bool
reserve (ps__gen *g, void *arrp, uint32_t *cap, uint32_t n, size_t elem)
{
  if (ps_array_grow (arrp, cap, (uint64_t) n + 1, elem, PS_ARRAY_MAX) == 0)
    return true;
  g->err = PS_ENOMEM;
  return false;
}

static bool
push_ref (ps__gen *g, uint32_t v)
{
  if (!reserve (g, &g->refs, &g->cap_refs, g->n_refs, sizeof *g->refs))
    return false;
  g->refs[g->n_refs++] = v;
  return true;
}

uint32_t
ps__gen_buf_new (ps__gen *g, int kind, uint64_t bytes, ps_dtype dtype, bool external)
{
  if (!reserve (g, &g->bufs, &g->cap_bufs, g->n_bufs, sizeof *g->bufs))
    return 0;
  if (bytes < 4)
    bytes = 4;
  g->bufs[g->n_bufs] = (ps__gen_buf){ bytes, (uint8_t) kind, (uint8_t) dtype, external };
  return g->n_bufs++;
}

/* Appends a node with no references yet.  Never called between
 * ps__gen_node_begin and the end of that node's reads. */
static ps__gen_node *
raw_node (ps__gen *g, int kind)
{
  if (g->err)
    return NULL;
  if (!reserve (g, &g->nodes, &g->cap_nodes, g->n_nodes, sizeof *g->nodes))
    return NULL;
  ps__gen_node *n = &g->nodes[g->n_nodes++];
  memset (n, 0, sizeof *n);
  n->kind = (uint8_t) kind;
  n->write = PS_NONE;
  n->aux = PS_NONE;
  n->stream = -1;
  n->after_begin = n->reads_begin = g->n_refs;
  return n;
}

static void
emit_record (ps__gen *g)
{
  uint32_t name = g->ev_pairs % PS__GEN_EVENT_NAMES;
  ps__gen_node *n = raw_node (g, PS__GEN_K_RECORD);
  if (!n)
    return;
  n->aux = name;
  if (g->last_plain != PS_NONE && push_ref (g, g->last_plain)) {
    n->n_after = 1;
    n->reads_begin = g->n_refs;
  }
  g->ev_pairs++;
  g->ev_left--;
  uint32_t due = g->plain + 1 + ps__gen_rng_below (&g->r, 16);
  if (g->n_pending < PS__GEN_MAX_PENDING)
    g->pending[g->n_pending++] = (ps__gen_pending){ due, name };
}

static void
emit_wait (ps__gen *g, uint32_t name)
{
  ps__gen_node *n = raw_node (g, PS__GEN_K_WAIT);
  if (!n)
    return;
  n->aux = name;
  if (g->n_pending_after < PS__GEN_MAX_PENDING)
    g->pending_after[g->n_pending_after++] = g->n_nodes - 1;
}

static void
emit_barrier (ps__gen *g)
{
  if (raw_node (g, PS__GEN_K_BARRIER))
    g->bar_left--;
}

static void
emit_conditional (ps__gen *g)
{
  uint32_t room = g->plain_total - g->plain;
  uint32_t want_then = 1 + ps__gen_rng_below (&g->r, 3);
  uint32_t want_else = ps__gen_rng_below (&g->r, 3);
  if (want_then > room)
    want_then = room;
  if (want_then + want_else > room)
    want_else = room - want_then;
  if (!reserve (g, &g->conds, &g->cap_conds, g->n_conds, sizeof *g->conds))
    return;
  ps__gen_node *n = raw_node (g, PS__GEN_K_COND);
  if (!n)
    return;
  n->aux = g->n_conds;
  uint32_t flag = g->flags[ps__gen_rng_below (&g->r, 4)];
  g->conds[g->n_conds] = (ps__gen_cond){ flag, g->n_members, 0, 0, (uint8_t) want_then,
                                  (uint8_t) want_else,
                                  (uint8_t) ps__gen_rng_below (&g->r, 3) };
  g->active_cond = g->n_conds++;
  g->cond_left--;
}

/* Issues the extras due before the next plain node, then starts that plain
 * node: pending waits become its `after`, and it may join the branch of the
 * active conditional and get a stream pin. */
ps__gen_node *
ps__gen_node_begin (ps__gen *g, int kind)
{
  uint32_t p = g->plain;
  if (g->ev_left > 0 && p >= g->ev_next && g->last_plain != PS_NONE
      && g->n_pending < PS__GEN_MAX_PENDING) {
    emit_record (g);
    g->ev_next += g->ev_step;
  }
  for (uint32_t i = 0; i < g->n_pending;) {
    if (g->pending[i].due <= p) {
      emit_wait (g, g->pending[i].name);
      g->pending[i] = g->pending[--g->n_pending];
    } else {
      i++;
    }
  }
  if (g->bar_left > 0 && p >= g->bar_next) {
    emit_barrier (g);
    g->bar_next += g->bar_step;
  }
  if (g->cond_left > 0 && p >= g->cond_next && g->active_cond == PS_NONE
      && g->plain_total - p >= 2) {
    emit_conditional (g);
    g->cond_next += g->cond_step;
  }

  ps__gen_node *n = raw_node (g, kind);
  if (!n)
    return NULL;
  uint32_t id = g->n_nodes - 1;
  for (uint32_t i = 0; i < g->n_pending_after; i++)
    if (push_ref (g, g->pending_after[i]))
      n->n_after++;
  g->n_pending_after = 0;
  n->reads_begin = g->n_refs;
  if (g->o->pins && g->o->pin_streams > 0 && ps__gen_rng_chance (&g->r, 1, 12))
    n->stream = (int8_t) ps__gen_rng_below (&g->r, g->o->pin_streams < 64 ? g->o->pin_streams : 64);

  if (g->active_cond != PS_NONE) {
    ps__gen_cond *c = &g->conds[g->active_cond];
    if (reserve (g, &g->members, &g->cap_members, g->n_members, sizeof *g->members)) {
      g->members[g->n_members++] = id;
      if (c->n_then < c->want_then)
        c->n_then++;
      else
        c->n_else++;
      if (c->n_then + c->n_else == c->want_then + c->want_else)
        g->active_cond = PS_NONE;
    }
  }
  g->plain++;
  g->last_plain = id;
  return n;
}

void
ps__gen_node_read (ps__gen *g, ps__gen_node *n, uint32_t b)
{
  if (push_ref (g, b))
    n->n_reads++;
}

/* ---- extras ------------------------------------------------------------- */

void
ps__gen_setup_extras (ps__gen *g)
{
  const ps_gen_options *o = g->o;
  uint32_t n = o->nodes;
  uint32_t pairs = 0, bars = 0, conds = 0;
  if (n >= 16) {
    if (o->events)
      pairs = n / 40 > 0 ? n / 40 : 1;
    if (o->barriers)
      bars = 1 + n / 2000;
    if (o->conditionals)
      conds = n / 80 > 0 ? n / 80 : 1;
  }
  g->plain_total = n - 2 * pairs - bars - conds;
  uint32_t P = g->plain_total;
  g->ev_left = pairs;
  g->ev_step = P / (pairs + 1) > 0 ? P / (pairs + 1) : 1;
  g->ev_next = g->ev_step;
  g->bar_left = bars;
  g->bar_step = P / (bars + 1) > 0 ? P / (bars + 1) : 1;
  g->bar_next = g->bar_step;
  g->cond_left = conds;
  g->cond_step = P / (conds + 1) > 0 ? P / (conds + 1) : 1;
  g->cond_next = g->cond_step;
  g->active_cond = PS_NONE;
  g->last_plain = PS_NONE;
  if (conds > 0)
    for (int i = 0; i < 4; i++)
      g->flags[i] = ps__gen_buf_new (g, PS__GEN_B_FLAG, 4, PS_DT_I32, true);
}

/* Issues what the schedule left over, so that the count is exact. */
void
ps__gen_flush_extras (ps__gen *g)
{
  for (uint32_t i = 0; i < g->n_pending; i++)
    emit_wait (g, g->pending[i].name);
  g->n_pending = 0;
  while (g->ev_left > 0 && !g->err) {
    emit_record (g);
    emit_wait (g, g->pending[--g->n_pending].name);
  }
  /* A conditional needs later nodes for its branches; any that found no
   * room become barriers instead. */
  g->bar_left += g->cond_left;
  g->cond_left = 0;
  while (g->bar_left > 0 && !g->err)
    emit_barrier (g);
}
