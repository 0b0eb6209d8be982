/* ps-gen.c: seeded synthetic graphs for benchmarks and property tests.
 *
 * A generator first builds the graph in compact arrays (nodes, buffers and
 * one shared array of references), then serialises it, buffers first, one
 * node per line.  Building first is what lets every shape hit the requested
 * node count exactly and declare every buffer before the nodes that use it.
 *
 * Randomness: xoshiro256** (Blackman and Vigna) whose 256-bit state is
 * filled by four steps of ps__gen_splitmix64 from the 64-bit seed.  Both are fixed
 * here and part of the output's contract: the same options give the same
 * bytes on every platform (only integer arithmetic feeds the output).
 *
 * Node budget: the requested count N is split into "extras" (user events,
 * barriers, conditionals, decided up front from N) and P = N - extras plain
 * nodes that the shape (ps-gen-shapes.c) produces exactly.  Extras are
 * interleaved as the shape emits plain nodes (ps__gen_node_begin, in
 * ps-gen-build.c), so every shape gets them for free.  This file runs the
 * build and writes the result. */
#include "ps-gen-private.h"

#include <stdlib.h>
#include <string.h>

static int
build (ps__gen *g)
{
  ps__gen_setup_extras (g);
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
  ps__gen_flush_extras (g);
  if (g->err)
    return g->err;
  /* The shapes are written to produce exactly the plain budget. */
  if (g->plain != g->plain_total || g->n_nodes != g->o->nodes)
    return PS_EINVAL;
  return 0;
}

/* ---- output -------------------------------------------------------------- */

static const char *const params[] = {
  NULL,
  "\"alpha\": 0.5", "\"alpha\": 0.125", "\"alpha\": 2", "\"alpha\": 1.702",
  "\"beta\": 1", "\"beta\": -0.5", "\"beta\": 0.001",
  "\"value\": 0", "\"value\": 1",
};
static const char *const buffer_prefix[PS__GEN_B__COUNT] = { "t", "in", "w", "b", "flag" };

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
w_node_name (wbuf *w, const ps__gen *g, uint32_t v)
{
  W_LIT (w, "\"");
  w_str (w, ps__gen_kinds[g->nodes[v].kind].prefix);
  W_LIT (w, "_");
  w_u64 (w, v);
  W_LIT (w, "\"");
}

static void
w_buf_name (wbuf *w, const ps__gen *g, uint32_t b)
{
  const ps__gen_buf *bf = &g->bufs[b];
  w_name (w, bf->kind == PS__GEN_B_TEMP && bf->external ? "out" : buffer_prefix[bf->kind], b);
}

static void
w_list (wbuf *w, const ps__gen *g, const char *key, const uint32_t *ids, uint32_t n, bool nodes)
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
write_node (wbuf *w, const ps__gen *g, uint32_t v)
{
  const ps__gen_node *n = &g->nodes[v];
  const ps__gen_kind *k = &ps__gen_kinds[n->kind];
  W_LIT (w, "  {\"name\": ");
  w_node_name (w, g, v);
  w_key_str (w, "op", ps_op_name ((ps_op) k->op));
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
    w_key_str (w, "dir", ps_copy_dir_name ((ps_copy_dir) n->dir));
  } else if (k->op == PS_OP_EVENT_RECORD || k->op == PS_OP_EVENT_WAIT) {
    W_LIT (w, ", \"event\": ");
    w_name (w, "ev", n->aux);
  } else if (k->op == PS_OP_CONDITIONAL) {
    const ps__gen_cond *c = &g->conds[n->aux];
    W_LIT (w, ", \"condition\": ");
    w_buf_name (w, g, c->flag);
    w_list (w, g, "then", g->members + c->members_begin, c->n_then, true);
    w_list (w, g, "else", g->members + c->members_begin + c->n_then, c->n_else, true);
    if (c->assume != PS_ASSUME_BOTH)
      w_key_str (w, "assume", ps_assume_name ((ps_assume) c->assume));
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
write_graph (wbuf *w, const ps__gen *g)
{
  W_LIT (w, "{\n \"format\": \"planscope-graph\", \"version\": 1,\n \"name\": \"");
  w_str (w, ps_gen_shape_name (g->o->shape));
  W_LIT (w, "-");
  w_u64 (w, g->o->nodes);
  W_LIT (w, "-seed");
  w_u64 (w, g->o->seed);
  W_LIT (w, "\",\n \"buffers\": [\n");
  for (uint32_t b = 0; b < g->n_bufs && !w->err; b++) {
    const ps__gen_buf *bf = &g->bufs[b];
    W_LIT (w, "  {\"name\": ");
    w_buf_name (w, g, b);
    w_key_u64 (w, "bytes", bf->bytes);
    if (bf->dtype != PS_DT_F32)
      w_key_str (w, "dtype", ps_dtype_name ((ps_dtype) bf->dtype));
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
  ps__gen g;
  memset (&g, 0, sizeof g);
  g.o = o;
  ps__gen_rng_seed (&g.r, o->seed);
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
