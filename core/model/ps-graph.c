/* ps-graph.c: the graph's lifetime, the names of its enums as written in
 * files, and its string pool. */
#include "ps-graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-demangle.h"
#include "ps-graph-private.h"

void
ps_graph_init (ps_graph *g)
{
  memset (g, 0, sizeof *g);
}

void
ps_graph_free (ps_graph *g)
{
  free (g->name);
  free (g->device);
  free (g->path);
  free (g->nodes);
  free (g->buffers);
  free (g->kernels);
  free (g->conds);
  free (g->event_names);
  free (g->access);
  free (g->kargs);
  free (g->cond_members);
  free (g->succ_off);
  free (g->succ);
  free (g->succ_kind);
  free (g->pred_off);
  free (g->pred);
  free (g->pred_kind);
  free (g->strings);
  free (g->host_ns);
  free (g->delay_ns);
  ps_graph_init (g);
}

/* The name tables, from the lists of ps-graph.h. */
#define PS__NAME(e, name, ...) name,
#define PS__LEN(e, name, ...) (uint8_t) (sizeof (name) - 1),
static const char *const op_name[] = { PS_OP_MAP (PS__NAME) };
static const uint8_t op_len[] = { PS_OP_MAP (PS__LEN) };
static const char *const impl_name[] = { PS_IMPL_MAP (PS__NAME) };
static const uint8_t impl_len[] = { PS_IMPL_MAP (PS__LEN) };
static const char *const dtype_name[] = { PS_DTYPE_MAP (PS__NAME) };
static const uint8_t dtype_len[] = { PS_DTYPE_MAP (PS__LEN) };
static const char *const dir_name[] = { PS_COPY_DIR_MAP (PS__NAME) };
static const uint8_t dir_len[] = { PS_COPY_DIR_MAP (PS__LEN) };
static const char *const assume_name[] = { PS_ASSUME_MAP (PS__NAME) };
static const uint8_t assume_len[] = { PS_ASSUME_MAP (PS__LEN) };
static const char *const cond_kind_name[] = { PS_COND_KIND_MAP (PS__NAME) };
static const uint8_t cond_kind_len[] = { PS_COND_KIND_MAP (PS__LEN) };
#undef PS__NAME
#undef PS__LEN

const ps_names ps_op_names = { op_name, op_len, PS_OP__COUNT };
const ps_names ps_impl_names = { impl_name, impl_len, PS_IMPL__COUNT };
const ps_names ps_dtype_names = { dtype_name, dtype_len, PS_DT__COUNT };
const ps_names ps_copy_dir_names = { dir_name, dir_len, PS_COPY__COUNT };
const ps_names ps_assume_names = { assume_name, assume_len, PS_ASSUME__COUNT };
const ps_names ps_cond_kind_names = { cond_kind_name, cond_kind_len, PS_COND__COUNT };

int
ps_names_find (const ps_names *t, uint32_t count, const char *s, size_t len)
{
  if (count > t->count)
    count = t->count;
  for (uint32_t i = 0; i < count; i++)
    if (t->len[i] == len && memcmp (t->name[i], s, len) == 0)
      return (int) i;
  return -1;
}

static const char *
name_of (const ps_names *t, unsigned v)
{
  return v < t->count ? t->name[v] : "?";
}

const char *
ps_op_name (ps_op op)
{
  return name_of (&ps_op_names, op);
}

const char *
ps_op_short_name (ps_op op)
{
#define PS__SHORT(e, name, short_name, span) short_name,
  static const char *const names[] = { PS_OP_MAP (PS__SHORT) };
#undef PS__SHORT
  return (unsigned) op < PS_OP__COUNT ? names[op] : "?";
}

const char *
ps_impl_name (ps_impl impl)
{
  return name_of (&ps_impl_names, impl);
}

const char *
ps_dtype_name (ps_dtype dt)
{
  return name_of (&ps_dtype_names, dt);
}

const char *
ps_copy_dir_name (ps_copy_dir dir)
{
  return name_of (&ps_copy_dir_names, dir);
}

const char *
ps_assume_name (ps_assume a)
{
  return name_of (&ps_assume_names, a);
}

const char *
ps_cond_kind_name (ps_cond_kind k)
{
  return name_of (&ps_cond_kind_names, k);
}

const char *
ps_cond_kind_model (ps_cond_kind k)
{
  switch (k) {
  case PS_COND_WHILE:
    return "a loop, modelled as one pass of its body (then) or none (else)";
  case PS_COND_SWITCH:
    return "one case of a switch: this case (then) or the cases after it (else)";
  default:
    return "";
  }
}

const char *
ps_cond_text (const ps_graph *g, uint32_t v, char *buf, size_t cap)
{
  if (cap == 0)
    return "";
  if (v >= g->n_nodes || g->nodes[v].op != PS_OP_CONDITIONAL || g->nodes[v].aux >= g->n_conds) {
    snprintf (buf, cap, "?");
    return buf;
  }
  const ps_cond *c = &g->conds[g->nodes[v].aux];
  const char *what = c->condition < g->n_buffers ? ps_buffer_name (g, c->condition) : "?";
  if (c->kind == PS_COND_SWITCH)
    snprintf (buf, cap, "switch %s case %u", what, c->case_index);
  else
    snprintf (buf, cap, "%s %s", ps_cond_kind_name ((ps_cond_kind) c->kind), what);
  return buf;
}

uint32_t
ps_dtype_size (ps_dtype dt)
{
#define PS__SIZE(e, name, size) size,
  static const uint8_t sizes[] = { PS_DTYPE_MAP (PS__SIZE) };
#undef PS__SIZE
  return (unsigned) dt < PS_DT__COUNT ? sizes[dt] : 0;
}

int
ps_impl_reads (ps_impl impl)
{
#define PS__READS(e, name, reads, elementwise) reads,
  static const uint8_t reads[] = { PS_IMPL_MAP (PS__READS) };
#undef PS__READS
  return (unsigned) impl < PS_IMPL__COUNT ? reads[impl] : 0;
}

bool
ps_impl_elementwise (ps_impl impl)
{
#define PS__ELEMENTWISE(e, name, reads, elementwise) elementwise,
  static const bool ew[] = { PS_IMPL_MAP (PS__ELEMENTWISE) };
#undef PS__ELEMENTWISE
  return (unsigned) impl < PS_IMPL__COUNT && ew[impl];
}

#define PS__DIR_READS(e, name, reads, writes) reads,
#define PS__DIR_WRITES(e, name, reads, writes) writes,
static const uint8_t dir_reads[] = { PS_COPY_DIR_MAP (PS__DIR_READS) };
static const uint8_t dir_writes[] = { PS_COPY_DIR_MAP (PS__DIR_WRITES) };
#undef PS__DIR_READS
#undef PS__DIR_WRITES

int
ps_copy_dir_reads (ps_copy_dir dir)
{
  return (unsigned) dir < PS_COPY__COUNT ? dir_reads[dir] : 0;
}

int
ps_copy_dir_writes (ps_copy_dir dir)
{
  return (unsigned) dir < PS_COPY__COUNT ? dir_writes[dir] : 0;
}

bool
ps_node_not_run (const ps_graph *g, uint32_t v, uint32_t *cond)
{
  uint32_t x = v;
  /* Bounded walk: branches nest, and a malformed chain must not loop. */
  for (int depth = 0; depth < 64 && x < g->n_nodes; depth++) {
    const ps_node *n = &g->nodes[x];
    uint32_t c = n->cond;
    if (c == PS_NONE || c >= g->n_nodes)
      return false;
    const ps_node *cn = &g->nodes[c];
    if (cn->op == PS_OP_CONDITIONAL && cn->aux < g->n_conds) {
      uint8_t assume = g->conds[cn->aux].assume;
      bool in_then = n->flags & PS_NODE_IN_THEN, in_else = n->flags & PS_NODE_IN_ELSE;
      if ((assume == PS_ASSUME_THEN && in_else && !in_then)
          || (assume == PS_ASSUME_ELSE && in_then && !in_else)) {
        if (cond)
          *cond = c;
        return true;
      }
    }
    x = c;
  }
  return false;
}

static uint64_t
sat_mul (uint64_t a, uint64_t b)
{
  if (a != 0 && b > UINT64_MAX / a)
    return UINT64_MAX;
  return a * b;
}

uint64_t
ps_kernel_threads (const ps_kernel *k)
{
  uint64_t t = 1;
  for (int i = 0; i < 3; i++) {
    t = sat_mul (t, k->grid[i]);
    t = sat_mul (t, k->block[i]);
  }
  return t;
}

int
ps__graph_intern (ps_graph *g, const char *s, size_t len, uint32_t *off)
{
  /* Offsets stay below UINT32_MAX, which is PS_NONE. */
  uint64_t need = (uint64_t) g->strings_len + len + 1;
  if (need >= UINT32_MAX)
    return PS_ELIMIT;
  int ret = ps__array_reserve (&g->strings, &g->strings_cap, need, 1, PS_ARRAY_MAX);
  if (ret < 0)
    return ret;
  memcpy (g->strings + g->strings_len, s, len);
  g->strings[g->strings_len + len] = '\0';
  *off = g->strings_len;
  g->strings_len += (uint32_t) len + 1;
  return 0;
}

bool
ps_node_titled_by_kernel (const ps_graph *g, uint32_t v)
{
  return v < g->n_nodes && (g->cuda_graph || g->measured) && g->nodes[v].op == PS_OP_KERNEL &&
         g->nodes[v].aux < g->n_kernels;
}

const char *
ps_node_title (const ps_graph *g, uint32_t v, char *buf, size_t cap)
{
  if (v >= g->n_nodes)
    return "?";
  if (!ps_node_titled_by_kernel (g, v) || cap == 0)
    return ps_node_name (g, v);
  const char *fn = ps_graph_str (g, g->kernels[g->nodes[v].aux].function);
  const char *d = ps_demangle (fn, false, buf, cap);
  /* A trace's node: "NAME #N", keep the number. */
  const char *hash = g->measured ? strrchr (ps_node_name (g, v), '#') : NULL;
  if (d != buf)
    snprintf (buf, cap, "%s", fn);
  if (hash) {
    size_t n = strlen (buf);
    snprintf (buf + n, cap > n ? cap - n : 0, " %s", hash);
  }
  return buf;
}

uint32_t
ps__graph_kernel_nodes (const ps_graph *g)
{
  uint32_t n = 0;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    n += g->nodes[v].op == PS_OP_KERNEL;
  return n;
}

uint32_t
ps_graph_pinned_streams (const ps_graph *g)
{
  int32_t most = -1;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    most = g->nodes[v].stream > most ? g->nodes[v].stream : most;
  return (uint32_t) (most + 1);
}
