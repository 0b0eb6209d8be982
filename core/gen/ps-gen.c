/* ps-gen.c: seeded synthetic graphs for benchmarks and property tests.
 *
 * A generator first builds the graph in compact arrays (nodes, buffers and
 * one shared array of references), then serialises it, buffers first, one
 * node per line.  Building first is what lets every shape hit the requested
 * node count exactly and declare every buffer before the nodes that use it.
 *
 * Randomness: xoshiro256** (Blackman and Vigna) whose 256-bit state is
 * filled by four steps of splitmix64 from the 64-bit seed.  Both are fixed
 * here and part of the output's contract: the same options give the same
 * bytes on every platform (only integer arithmetic feeds the output).
 *
 * Node budget: the requested count N is split into "extras" (user events,
 * barriers, conditionals, decided up front from N) and P = N - extras plain
 * nodes that the shape (ps-gen-shapes.c) produces exactly.  Extras are
 * interleaved as the shape emits plain nodes (ps__gen_node_begin), so every
 * shape gets them for free. */
#include "ps-gen-private.h"

#include <stdlib.h>
#include <string.h>

/* ---- the in-memory graph ------------------------------------------------- */

const kind_info ps__gen_kinds[K__COUNT] = {
  [K_GEMM] = { "gemm", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_Q_PROJ] = { "q_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_K_PROJ] = { "k_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_V_PROJ] = { "v_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_O_PROJ] = { "o_proj", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_FC1] = { "fc1", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_FC2] = { "fc2", "gemm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_LAYERNORM] = { "layernorm", "layernorm", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_ATTENTION] = { "attention", "flash_attention", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_SOFTMAX] = { "softmax", "softmax", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_REDUCE] = { "reduce", "reduce_sum", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_EMBED] = { "embed", "embedding", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_JOIN] = { "join", "concat_sum", PS_OP_KERNEL, PS_IMPL_NONE, false },
  [K_RELU] = { "relu", "relu", PS_OP_KERNEL, PS_IMPL_RELU, true },
  [K_GELU] = { "gelu", "gelu", PS_OP_KERNEL, PS_IMPL_GELU, true },
  [K_SCALE] = { "scale", "scale", PS_OP_KERNEL, PS_IMPL_SCALE, true },
  [K_ADD_SCALAR] = { "shift", "add_scalar", PS_OP_KERNEL, PS_IMPL_ADD_SCALAR, true },
  [K_SIGMOID] = { "sigmoid", "sigmoid", PS_OP_KERNEL, PS_IMPL_SIGMOID, true },
  [K_TANH] = { "tanh", "tanh", PS_OP_KERNEL, PS_IMPL_TANH, true },
  [K_NEG] = { "neg", "neg", PS_OP_KERNEL, PS_IMPL_NEG, true },
  [K_EXP] = { "exp", "exp", PS_OP_KERNEL, PS_IMPL_EXP, true },
  [K_ADD] = { "add", "add", PS_OP_KERNEL, PS_IMPL_ADD, true },
  [K_MUL] = { "mul", "mul", PS_OP_KERNEL, PS_IMPL_MUL, true },
  [K_SUB] = { "sub", "sub", PS_OP_KERNEL, PS_IMPL_SUB, true },
  [K_BIAS] = { "bias", "add", PS_OP_KERNEL, PS_IMPL_ADD, true },
  [K_RESIDUAL] = { "residual", "add", PS_OP_KERNEL, PS_IMPL_ADD, true },
  [K_COPY] = { "copy", "copy", PS_OP_KERNEL, PS_IMPL_COPY, true },
  [K_FILL] = { "fill", "fill", PS_OP_KERNEL, PS_IMPL_FILL, true },
  [K_UPLOAD] = { "upload", NULL, PS_OP_MEMCPY, 0, false },
  [K_DOWNLOAD] = { "download", NULL, PS_OP_MEMCPY, 0, false },
  [K_RECORD] = { "record", NULL, PS_OP_EVENT_RECORD, 0, false },
  [K_WAIT] = { "wait", NULL, PS_OP_EVENT_WAIT, 0, false },
  [K_BARRIER] = { "barrier", NULL, PS_OP_BARRIER, 0, false },
  [K_COND] = { "cond", NULL, PS_OP_CONDITIONAL, 0, false },
};

static const char *const params[] = {
  NULL,
  "\"alpha\": 0.5", "\"alpha\": 0.125", "\"alpha\": 2", "\"alpha\": 1.702",
  "\"beta\": 1", "\"beta\": -0.5", "\"beta\": 0.001",
  "\"value\": 0", "\"value\": 1",
};
static const char *const buffer_prefix[B__COUNT] = { "t", "in", "w", "b", "flag" };


static void *
grow (void *p, uint32_t *cap, uint32_t need, size_t elem, int *err)
{
  if (need <= *cap)
    return p;
  uint64_t c = *cap ? *cap : 64;
  while (c < need)
    c *= 2;
  if (c > UINT32_MAX || c * elem > SIZE_MAX / 2) {
    *err = PS_ENOMEM;
    return NULL;
  }
  void *q = realloc (p, (size_t) c * elem);
  if (!q) {
    *err = PS_ENOMEM;
    return NULL;
  }
  *cap = (uint32_t) c;
  return q;
}

static bool
push_ref (gen *g, uint32_t v)
{
  uint32_t *p = grow (g->refs, &g->cap_refs, g->n_refs + 1, sizeof *p, &g->err);
  if (!p)
    return false;
  g->refs = p;
  g->refs[g->n_refs++] = v;
  return true;
}

uint32_t
ps__gen_buf_new (gen *g, int kind, uint64_t bytes, ps_dtype dtype, bool external)
{
  gbuf *p = grow (g->bufs, &g->cap_bufs, g->n_bufs + 1, sizeof *p, &g->err);
  if (!p)
    return 0;
  g->bufs = p;
  if (bytes < 4)
    bytes = 4;
  g->bufs[g->n_bufs] = (gbuf){ bytes, (uint8_t) kind, (uint8_t) dtype, external };
  return g->n_bufs++;
}

/* Appends a node with no references yet.  Never called between
 * ps__gen_node_begin and the end of that node's reads. */
static gnode *
raw_node (gen *g, int kind)
{
  if (g->err)
    return NULL;
  gnode *p = grow (g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *p, &g->err);
  if (!p)
    return NULL;
  g->nodes = p;
  gnode *n = &g->nodes[g->n_nodes++];
  memset (n, 0, sizeof *n);
  n->kind = (uint8_t) kind;
  n->write = PS_NONE;
  n->aux = PS_NONE;
  n->stream = -1;
  n->after_begin = n->reads_begin = g->n_refs;
  return n;
}

static void
emit_record (gen *g)
{
  uint32_t name = g->ev_pairs % N_EVENT_NAMES;
  gnode *n = raw_node (g, K_RECORD);
  if (!n)
    return;
  n->aux = name;
  if (g->last_plain != PS_NONE && push_ref (g, g->last_plain)) {
    n->n_after = 1;
    n->reads_begin = g->n_refs;
  }
  g->ev_pairs++;
  g->ev_left--;
  uint32_t due = g->plain + 1 + rng_below (&g->r, 16);
  if (g->n_pending < MAX_PENDING)
    g->pending[g->n_pending++] = (pending_wait){ due, name };
}

static void
emit_wait (gen *g, uint32_t name)
{
  gnode *n = raw_node (g, K_WAIT);
  if (!n)
    return;
  n->aux = name;
  if (g->n_pending_after < MAX_PENDING)
    g->pending_after[g->n_pending_after++] = g->n_nodes - 1;
}

static void
emit_barrier (gen *g)
{
  if (raw_node (g, K_BARRIER))
    g->bar_left--;
}

static void
emit_conditional (gen *g)
{
  uint32_t room = g->plain_total - g->plain;
  uint32_t want_then = 1 + rng_below (&g->r, 3);
  uint32_t want_else = rng_below (&g->r, 3);
  if (want_then > room)
    want_then = room;
  if (want_then + want_else > room)
    want_else = room - want_then;
  gcond *c = grow (g->conds, &g->cap_conds, g->n_conds + 1, sizeof *c, &g->err);
  if (!c)
    return;
  g->conds = c;
  gnode *n = raw_node (g, K_COND);
  if (!n)
    return;
  n->aux = g->n_conds;
  uint32_t flag = g->flags[rng_below (&g->r, 4)];
  g->conds[g->n_conds] = (gcond){ flag, g->n_members, 0, 0, (uint8_t) want_then,
                                  (uint8_t) want_else,
                                  (uint8_t) rng_below (&g->r, 3) };
  g->active_cond = g->n_conds++;
  g->cond_left--;
}

/* Issues the extras due before the next plain node, then starts that plain
 * node: pending waits become its `after`, and it may join the branch of the
 * active conditional and get a stream pin. */
gnode *
ps__gen_node_begin (gen *g, int kind)
{
  uint32_t p = g->plain;
  if (g->ev_left > 0 && p >= g->ev_next && g->last_plain != PS_NONE
      && g->n_pending < MAX_PENDING) {
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

  gnode *n = raw_node (g, kind);
  if (!n)
    return NULL;
  uint32_t id = g->n_nodes - 1;
  for (uint32_t i = 0; i < g->n_pending_after; i++)
    if (push_ref (g, g->pending_after[i]))
      n->n_after++;
  g->n_pending_after = 0;
  n->reads_begin = g->n_refs;
  if (g->o->pins && g->o->pin_streams > 0 && rng_chance (&g->r, 1, 12))
    n->stream = (int8_t) rng_below (&g->r, g->o->pin_streams < 64 ? g->o->pin_streams : 64);

  if (g->active_cond != PS_NONE) {
    gcond *c = &g->conds[g->active_cond];
    uint32_t *m = grow (g->members, &g->cap_members, g->n_members + 1, sizeof *m, &g->err);
    if (m) {
      g->members = m;
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
ps__gen_node_read (gen *g, gnode *n, uint32_t b)
{
  if (push_ref (g, b))
    n->n_reads++;
}

/* ---- extras and the whole build ------------------------------------------ */

static void
setup_extras (gen *g)
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
      g->flags[i] = ps__gen_buf_new (g, B_FLAG, 4, PS_DT_I32, true);
}

/* Issues what the schedule left over, so that the count is exact. */
static void
flush_extras (gen *g)
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

static int
build (gen *g)
{
  setup_extras (g);
  switch (g->o->shape) {
  case PS_GEN_CHAIN:
    ps__gen_shape_chain (g);
    break;
  case PS_GEN_FANOUT:
    ps__gen_shape_fanout (g);
    break;
  case PS_GEN_LAYERED:
    ps__gen_shape_layered (g);
    break;
  case PS_GEN_TRANSFORMER:
  default:
    ps__gen_shape_transformer (g);
    break;
  }
  flush_extras (g);
  if (g->err)
    return g->err;
  /* The shapes are written to produce exactly the plain budget. */
  if (g->plain != g->plain_total || g->n_nodes != g->o->nodes)
    return PS_EINVAL;
  return 0;
}

/* ---- output -------------------------------------------------------------- */

/* Output goes through one large buffer, formatted by hand: a 1M-node graph
 * is about 200 MB of text, and printf per field would dominate. */
typedef struct wbuf {
  FILE *out;
  char *buf;
  size_t len, cap;
  int err;
} wbuf;

static void
w_flush (wbuf *w)
{
  if (w->len > 0 && fwrite (w->buf, 1, w->len, w->out) != w->len)
    w->err = PS_EIO;
  w->len = 0;
}

static inline void
w_mem (wbuf *w, const char *s, size_t n)
{
  if (w->len + n > w->cap) {
    w_flush (w);
    if (n > w->cap) {
      if (fwrite (s, 1, n, w->out) != n)
        w->err = PS_EIO;
      return;
    }
  }
  memcpy (w->buf + w->len, s, n);
  w->len += n;
}

#define W_LIT(w, s) w_mem ((w), "" s, sizeof (s) - 1)

static inline void
w_str (wbuf *w, const char *s)
{
  w_mem (w, s, strlen (s));
}

static inline void
w_u64 (wbuf *w, uint64_t v)
{
  char tmp[24];
  int i = sizeof tmp;
  do {
    tmp[--i] = (char) ('0' + v % 10);
    v /= 10;
  } while (v);
  w_mem (w, tmp + i, sizeof tmp - (size_t) i);
}

/* `, "key": "value"` and `, "key": N`; names and values here never need
 * escaping. */
static void
w_key_str (wbuf *w, const char *key, const char *value)
{
  W_LIT (w, ", \"");
  w_str (w, key);
  W_LIT (w, "\": \"");
  w_str (w, value);
  W_LIT (w, "\"");
}

static void
w_key_u64 (wbuf *w, const char *key, uint64_t v)
{
  W_LIT (w, ", \"");
  w_str (w, key);
  W_LIT (w, "\": ");
  w_u64 (w, v);
}

/* A node or buffer name: prefix and id, quoted. */
static void
w_name (wbuf *w, const char *prefix, uint32_t id)
{
  W_LIT (w, "\"");
  w_str (w, prefix);
  w_u64 (w, id);
  W_LIT (w, "\"");
}

static void
w_node_name (wbuf *w, const gen *g, uint32_t v)
{
  W_LIT (w, "\"");
  w_str (w, ps__gen_kinds[g->nodes[v].kind].prefix);
  W_LIT (w, "_");
  w_u64 (w, v);
  W_LIT (w, "\"");
}

static void
w_buf_name (wbuf *w, const gen *g, uint32_t b)
{
  const gbuf *bf = &g->bufs[b];
  w_name (w, bf->kind == B_TEMP && bf->external ? "out" : buffer_prefix[bf->kind], b);
}

static void
w_list (wbuf *w, const gen *g, const char *key, const uint32_t *ids, uint32_t n, bool nodes)
{
  W_LIT (w, ", \"");
  w_str (w, key);
  W_LIT (w, "\": [");
  for (uint32_t i = 0; i < n; i++) {
    if (i)
      W_LIT (w, ", ");
    if (nodes)
      w_node_name (w, g, ids[i]);
    else
      w_buf_name (w, g, ids[i]);
  }
  W_LIT (w, "]");
}

static void
write_node (wbuf *w, const gen *g, uint32_t v)
{
  static const char *const dirs[] = { "h2d", "d2h", "d2d", "p2p" };
  static const char *const assume[] = { "both", "then", "else" };
  static const char *const ops[] = { "kernel", "memcpy", "memset", "host", "event_record",
                                     "event_wait", "barrier", "conditional" };
  const gnode *n = &g->nodes[v];
  const kind_info *k = &ps__gen_kinds[n->kind];
  W_LIT (w, "  {\"name\": ");
  w_node_name (w, g, v);
  w_key_str (w, "op", ops[k->op]);
  if (k->op == PS_OP_KERNEL) {
    w_key_str (w, "function", k->function);
    if (k->impl != PS_IMPL_NONE)
      w_key_str (w, "impl", k->function);
    if (k->fusible)
      W_LIT (w, ", \"fusible\": true");
    if (n->param) {
      W_LIT (w, ", \"params\": {");
      w_str (w, params[n->param]);
      W_LIT (w, "}");
    }
    W_LIT (w, ", \"grid\": ");
    if (n->grid_y > 1) {
      W_LIT (w, "[");
      w_u64 (w, n->grid_x);
      W_LIT (w, ", ");
      w_u64 (w, n->grid_y);
      W_LIT (w, "]");
    } else {
      w_u64 (w, n->grid_x);
    }
    w_key_u64 (w, "block", n->block);
  } else if (k->op == PS_OP_MEMCPY) {
    w_key_str (w, "dir", dirs[n->dir]);
  } else if (k->op == PS_OP_EVENT_RECORD || k->op == PS_OP_EVENT_WAIT) {
    W_LIT (w, ", \"event\": ");
    w_name (w, "ev", n->aux);
  } else if (k->op == PS_OP_CONDITIONAL) {
    const gcond *c = &g->conds[n->aux];
    W_LIT (w, ", \"condition\": ");
    w_buf_name (w, g, c->flag);
    w_list (w, g, "then", g->members + c->members_begin, c->n_then, true);
    w_list (w, g, "else", g->members + c->members_begin + c->n_then, c->n_else, true);
    if (c->assume != PS_ASSUME_BOTH)
      w_key_str (w, "assume", assume[c->assume]);
  }
  if (n->n_reads)
    w_list (w, g, "reads", g->refs + n->reads_begin, n->n_reads, false);
  if (n->write != PS_NONE)
    w_list (w, g, "writes", &n->write, 1, false);
  if (n->n_after)
    w_list (w, g, "after", g->refs + n->after_begin, n->n_after, true);
  if (n->stream >= 0)
    w_key_u64 (w, "stream", (uint64_t) n->stream);
  if (n->cost_ns)
    w_key_u64 (w, "cost_ns", n->cost_ns);
  if (n->flops)
    w_key_u64 (w, "flops", n->flops);
  W_LIT (w, "}");
}

static void
write_graph (wbuf *w, const gen *g)
{
  static const char *const dtypes[] = { "f32", "f16", "bf16", "i32", "u8" };
  W_LIT (w, "{\n \"format\": \"planscope-graph\", \"version\": 1,\n \"name\": \"");
  w_str (w, ps_gen_shape_name (g->o->shape));
  W_LIT (w, "-");
  w_u64 (w, g->o->nodes);
  W_LIT (w, "-seed");
  w_u64 (w, g->o->seed);
  W_LIT (w, "\",\n \"buffers\": [\n");
  for (uint32_t b = 0; b < g->n_bufs && !w->err; b++) {
    const gbuf *bf = &g->bufs[b];
    W_LIT (w, "  {\"name\": ");
    w_buf_name (w, g, b);
    w_key_u64 (w, "bytes", bf->bytes);
    if (bf->dtype != PS_DT_F32)
      w_key_str (w, "dtype", dtypes[bf->dtype]);
    if (bf->external)
      W_LIT (w, ", \"external\": true");
    if (b + 1 < g->n_bufs)
      W_LIT (w, "},\n");
    else
      W_LIT (w, "}\n");
  }
  W_LIT (w, " ],\n \"nodes\": [\n");
  for (uint32_t v = 0; v < g->n_nodes && !w->err; v++) {
    write_node (w, g, v);
    if (v + 1 < g->n_nodes)
      W_LIT (w, ",\n");
    else
      W_LIT (w, "\n");
  }
  W_LIT (w, " ]\n}\n");
}

/* ---- public -------------------------------------------------------------- */

void
ps_gen_options_init (ps_gen_options *o)
{
  memset (o, 0, sizeof *o);
  o->shape = PS_GEN_LAYERED;
  o->nodes = 1000;
  o->seed = 1;
  o->events = o->barriers = o->conditionals = o->pins = true;
  o->pin_streams = 2;
}

static const char *const shape_names[PS_GEN__COUNT] = { "chain", "fanout", "layered",
                                                        "transformer" };

int
ps_gen_shape_parse (const char *name, ps_gen_shape *out)
{
  for (int i = 0; i < PS_GEN__COUNT; i++)
    if (name && strcmp (name, shape_names[i]) == 0) {
      *out = (ps_gen_shape) i;
      return 0;
    }
  return PS_EINVAL;
}

const char *
ps_gen_shape_name (ps_gen_shape s)
{
  return (unsigned) s < PS_GEN__COUNT ? shape_names[s] : "unknown";
}

int
ps_gen_write (const ps_gen_options *o, FILE *out)
{
  if (!o || !out || (unsigned) o->shape >= PS_GEN__COUNT || o->nodes < 1
      || o->nodes > PS_MAX_NODES)
    return PS_EINVAL;
  gen g;
  memset (&g, 0, sizeof g);
  g.o = o;
  rng_seed (&g.r, o->seed);
  /* Rough sizes up front so that the arrays rarely grow. */
  g.nodes = malloc ((size_t) o->nodes * sizeof *g.nodes);
  g.cap_nodes = o->nodes;
  /* Never NULL, so that a shape that keeps going for a moment after an
   * allocation failed (ids fall back to 0) reads valid memory. */
  g.bufs = calloc (64, sizeof *g.bufs);
  g.cap_bufs = 64;
  int ret = g.nodes && g.bufs ? build (&g) : PS_ENOMEM;
  if (ret == 0) {
    wbuf w = { out, malloc (1u << 20), 0, 1u << 20, 0 };
    if (!w.buf) {
      ret = PS_ENOMEM;
    } else {
      write_graph (&w, &g);
      w_flush (&w);
      if (!w.err && (fflush (out) != 0 || ferror (out)))
        w.err = PS_EIO;
      ret = w.err;
      free (w.buf);
    }
  }
  free (g.nodes);
  free (g.bufs);
  free (g.refs);
  free (g.conds);
  free (g.members);
  return ret;
}
