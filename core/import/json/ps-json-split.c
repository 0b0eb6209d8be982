/* ps-json-split.c: the second half of a long "nodes" array read on a
 * second thread (ps-json-load.h).
 *
 * Where the nodes array opens, the loader guesses an element boundary
 * halfway through the rest of the input (a '}', a comma and a '{', the
 * '{' at byte `at`) and a second loader reads the elements from `at` to
 * the array's end into a graph of its own, while the first reads on from
 * the array's start.  The guess is only taken when the first loader, at
 * the end of an element, finds that the next element starts exactly at
 * `at`: then the tokens the second loader read are the ones the first
 * would have read, and its nodes are appended to the graph (names and
 * indices moved to where they land) and the reader skips to the array's
 * end.  Anything else (the guess inside a string or an argument list,
 * past the array, an error or a warning in either half, an event or a
 * conditional in the second, which refer across the halves) drops the
 * second half and the first loader reads everything itself, so messages
 * and graphs are those of one loader reading alone.
 *
 * The graph is the same but for its string pool's layout: the second
 * half's strings come after the first's, and a kernel function name used
 * in both halves is kept twice (once per half; nothing compares function
 * names by offset). */
#include "ps-json-load.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "util/ps-job.h"

size_t ps__json_split_min = (size_t) 8 << 20;
atomic_size_t ps__json_splits_taken;

struct ps__json_split {
  const ps__json_loader *first; /* read only by the second thread: data, data_len */
  uint64_t at;                  /* the guessed first byte of an element */
  uint8_t stack[PS_JSON_MAX_DEPTH];
  int level;
  ps__json_loader ld; /* the second half's loader and graph */
  ps_graph g;
  bool ok;            /* the second half was read to the array's end, cleanly */
  atomic_bool cancel; /* the first loader no longer wants it */
  ps__job job;
};

static bool
is_ws (unsigned char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Whether the object at p (its '{') opens with a key that only kernel
 * arguments have: such a '{' starts an element of an "args" array, not
 * a node. */
static bool
opens_argument (const char *p, const char *end)
{
  static const char *const keys[] = { "\"buffer\"", "\"i32\"", "\"i64\"", "\"f32\"",
                                      "\"f64\"" };
  p++;
  while (p < end && is_ws ((unsigned char) *p))
    p++;
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    size_t n = strlen (keys[i]);
    if ((size_t) (end - p) >= n && memcmp (p, keys[i], n) == 0)
      return true;
  }
  return false;
}

/* The offset of the first '{' at or after `from` that follows a '}', a
 * comma and whitespace only, and does not open a kernel argument; one
 * whose whitespace holds a line end first (one element per line, as
 * files are usually written), when there is one in the next
 * BOUNDARY_LOOK bytes.  0 when there is none. */
#define BOUNDARY_LOOK (1u << 20)
static uint64_t
guess_boundary (const char *data, size_t len, size_t from)
{
  const char *p = data + from, *end = data + len, *any = NULL;
  while (p < end && (p = memchr (p, '}', (size_t) (end - p)))) {
    const char *q = p + 1;
    bool line_end = false;
    while (q < end && is_ws ((unsigned char) *q))
      line_end |= *q++ == '\n';
    if (q < end && *q == ',') {
      q++;
      while (q < end && is_ws ((unsigned char) *q))
        line_end |= *q++ == '\n';
      if (q < end && *q == '{' && !opens_argument (q, end)) {
        if (line_end)
          return (uint64_t) (q - data);
        if (!any)
          any = q;
      }
    }
    if (any && p - any > BOUNDARY_LOOK)
      break;
    p++;
  }
  return any ? (uint64_t) (any - data) : 0;
}

/* The second thread: node objects from `at` to the array's end. */
static void
second_half (void *arg)
{
  ps__json_split *sp = arg;
  ps__json_loader *ld = &sp->ld;
  uint32_t empty;
  ld->data = sp->first->data;
  ld->data_len = sp->first->data_len;
  ld->g = &sp->g;
  ld->speculative = true;
  ld->node_index = PS_NONE;
  ld->buffer_index = PS_NONE;
  /* Positions count from line 1, column 1 at `at`; they move to where
   * they are in the file when the half is taken. */
  if (ps_json_init_mem_at (&ld->r, ld->data, ld->data_len, sp->at, 1, 1, sp->stack, sp->level) < 0)
    return;
  if (ps__graph_intern (ld->g, "", 0, &empty) < 0 || ps__json_scratch_new (ld) < 0 ||
      ps__strmap_init (&ld->function_map, 64) < 0 || ps__strmap_init (&ld->event_map, 64) < 0)
    return;
  ps__json_counts at;
  ps__json_presize_begin (ld, sp->at, &at);
  int t;
  while ((t = ps__json_next (ld)) == PS_JSON_OBJECT_BEGIN) {
    ld->node_index = sp->g.n_nodes;
    if (ps__json_load_node (ld) < 0 || ld->errors || sp->g.n_events || sp->g.n_conds ||
        atomic_load_explicit (&sp->cancel, memory_order_relaxed))
      return;
    if (sp->g.n_nodes == PS__JSON_PRESIZE_AT)
      ps__json_presize (ld, &at);
  }
  sp->ok = t == PS_JSON_ARRAY_END && !ld->errors;
}

static void
split_free (ps__json_split *sp)
{
  ps__json_loader *ld = &sp->ld;
  ps_json_close (&ld->r);
  ps__json_scratch_free (ld);
  ps__strmap_free (&ld->function_map);
  ps__strmap_free (&ld->event_map);
  free (ld->refs);
  free (ld->refpool);
  free (ld->after_pairs);
  ps_graph_free (&sp->g);
  free (sp);
}

void
ps__json_split_start (ps__json_loader *ld)
{
  const ps_json_reader *r = &ld->r;
  if (ld->split_tried)
    return;
  ld->split_tried = true;
  if (!ld->data || ld->speculative || r->token != PS_JSON_ARRAY_BEGIN ||
      ld->data_len - r->offset < ps__json_split_min || ld->data_len - r->offset < 2)
    return;
  uint64_t mid = r->offset + (ld->data_len - r->offset) / 2;
  uint64_t at = guess_boundary (ld->data, ld->data_len, (size_t) mid);
  if (at == 0 || at >= PS__JSON_POOLED)
    return;
  ps__json_split *sp = calloc (1, sizeof *sp);
  if (!sp)
    return;
  sp->first = ld;
  sp->at = at;
  sp->level = r->level;
  memcpy (sp->stack, r->stack, (size_t) r->level);
  ps_graph_init (&sp->g);
  atomic_init (&sp->cancel, false);
  ps__job_start (&sp->job, second_half, sp, true);
  ld->split = sp;
  ld->split_at = at;
}

void
ps__json_split_end (ps__json_loader *ld)
{
  ps__json_split *sp = ld->split;
  if (!sp)
    return;
  atomic_store (&sp->cancel, true);
  ps__job_drop (&sp->job);
  split_free (sp);
  ld->split = NULL;
  ld->split_at = UINT64_MAX;
}

/* Where the second half lands in the first loader's graph: the counts
 * of the first half, and the position the second half starts at. */
typedef struct landing {
  ps__json_loader *ld;
  ps__json_split *sp;
  uint32_t line, col;
  uint32_t n0, a0, k0, ka0, r0, p0, s0;
} landing;

/* Strings: the second pool but its leading "" (offset 0, which stays
 * 0: a kernel without a function name). */
#define MOVE_STR(x) ((x) == 0 || (x) == PS_NONE ? (x) : (x) + (to->s0 - 1))
/* Positions: lines after the first, columns on the first line. */
#define MOVE_POS(l, c) \
  do { \
    if ((l) == 1) \
      (c) += to->col - 1; \
    (l) += to->line - 1; \
  } while (0)

/* A part of the second half's nodes, kernels and kernel arguments,
 * moved: those from `from` of `parts` equal parts of each. */
typedef struct landing_part {
  const landing *to;
  uint32_t from, parts;
  ps__job job;
} landing_part;

static inline uint32_t
part_start (uint32_t n, uint32_t k, uint32_t parts)
{
  return (uint32_t) ((uint64_t) n * k / parts);
}

static void
land_nodes (void *arg)
{
  const landing_part *lp = arg;
  const landing *to = lp->to;
  ps_graph *g = to->ld->g;
  const ps_graph *h = &to->sp->g;
  uint32_t k = lp->from, m = lp->parts;
  for (uint32_t v = part_start (h->n_nodes, k, m), e = part_start (h->n_nodes, k + 1, m); v < e;
       v++) {
    ps_node n = h->nodes[v];
    n.name = MOVE_STR (n.name);
    MOVE_POS (n.line, n.col);
    n.reads_begin += to->a0;
    n.writes_begin += to->a0;
    if (n.op == PS_OP_KERNEL)
      n.aux += to->k0;
    else if (n.op == PS_OP_HOST)
      n.aux = MOVE_STR (n.aux);
    g->nodes[to->n0 + v] = n;
  }
  for (uint32_t i = part_start (h->n_kernels, k, m), e = part_start (h->n_kernels, k + 1, m); i < e;
       i++) {
    ps_kernel kn = h->kernels[i];
    kn.function = MOVE_STR (kn.function);
    kn.module = MOVE_STR (kn.module);
    kn.args_begin += to->ka0;
    g->kernels[to->k0 + i] = kn;
  }
  for (uint32_t i = part_start (h->n_kargs, k, m), e = part_start (h->n_kargs, k + 1, m); i < e;
       i++) {
    ps_karg a = h->kargs[i];
    if (a.kind == PS_KARG_BUFFER)
      a.v.buffer += to->r0;
    g->kargs[to->ka0 + i] = a;
  }
}

/* The strings, accesses, refs and `after` pairs of the second half,
 * moved. */
static void
land_names (const landing *to)
{
  ps__json_loader *ld = to->ld;
  const ps__json_loader *two = &to->sp->ld;
  ps_graph *g = ld->g;
  const ps_graph *h = &to->sp->g;
  if (h->strings_len > 1)
    memcpy (g->strings + to->s0, h->strings + 1, h->strings_len - 1);
  if (two->refpool_len)
    memcpy (ld->refpool + to->p0, two->refpool, two->refpool_len);
  for (uint32_t j = 0; j < h->n_access; j++) {
    uint32_t key = h->access[j];
    if (key & PS__JSON_POOLED) {
      /* A decoded name, after its token's position. */
      key = PS__JSON_POOLED | ((key & ~PS__JSON_POOLED) + to->p0);
      uint32_t at[2];
      char *head = ld->refpool + (key & ~PS__JSON_POOLED) - 8;
      memcpy (at, head, 8);
      MOVE_POS (at[0], at[1]);
      memcpy (head, at, 8);
    }
    g->access[to->a0 + j] = key;
  }
  for (uint32_t i = 0; i < two->n_refs; i++) {
    ps__json_ref rf = two->refs[i];
    rf.name += to->p0;
    rf.node += to->n0;
    MOVE_POS (rf.line, rf.col);
    ld->refs[to->r0 + i] = rf;
  }
  uint32_t after0 = ld->n_after;
  for (uint32_t i = 0; i < two->n_after; i += 2) {
    ld->after_pairs[after0 + i] = two->after_pairs[i] + to->r0;
    ld->after_pairs[after0 + i + 1] = two->after_pairs[i + 1] + to->n0;
  }
}
#undef MOVE_STR
#undef MOVE_POS

/* Second halves of at least this many nodes are moved on two threads:
 * the copy touches fresh memory, which is slow to come by on a virtual
 * machine (1M nodes: 0.07 s on one thread; 0.055 s with the names on
 * the other, 0.03 s with half the nodes there too). */
uint32_t ps__json_land_thread_min = 65536u;

/* The second half's nodes appended to the first loader's graph, with
 * their names, accesses, kernels, arguments, refs and `after` pairs moved
 * to where they land.  0, or <0 when it does not fit (nothing is changed
 * that the first loader would read differently then: the counts stay). */
static int
merge (ps__json_loader *ld, ps__json_split *sp, uint32_t line, uint32_t col)
{
  ps_graph *g = ld->g, *h = &sp->g;
  ps__json_loader *two = &sp->ld;
  if ((uint64_t) g->n_nodes + h->n_nodes > PS_MAX_NODES ||
      (uint64_t) g->strings_len + h->strings_len >= UINT32_MAX ||
      (uint64_t) ld->refpool_len + two->refpool_len >= PS__JSON_POOLED)
    return PS_ELIMIT;
  landing to = { .ld = ld, .sp = sp, .line = line, .col = col, .n0 = g->n_nodes,
                 .a0 = g->n_access, .k0 = g->n_kernels, .ka0 = g->n_kargs, .r0 = ld->n_refs,
                 .p0 = ld->refpool_len, .s0 = g->strings_len };
  uint32_t after0 = ld->n_after;
  /* Reserve everything first, so that a failure leaves the counts. */
  int ret = 0;
  if ((ret = ps__array_reserve (&g->nodes, &ld->cap_nodes, (uint64_t) to.n0 + h->n_nodes,
                                sizeof *g->nodes, PS_MAX_NODES)) < 0 ||
      (ret = ps__array_reserve (&g->access, &ld->cap_access, (uint64_t) to.a0 + h->n_access,
                                sizeof *g->access, PS_ARRAY_MAX)) < 0 ||
      (ret = ps__array_reserve (&g->kernels, &ld->cap_kernels, (uint64_t) to.k0 + h->n_kernels,
                                sizeof *g->kernels, PS_MAX_NODES)) < 0 ||
      (ret = ps__array_reserve (&g->kargs, &ld->cap_kargs, (uint64_t) to.ka0 + h->n_kargs,
                                sizeof *g->kargs, PS_ARRAY_MAX)) < 0 ||
      (ret = ps__array_reserve (&ld->refs, &ld->cap_refs, (uint64_t) to.r0 + two->n_refs,
                                sizeof *ld->refs, PS_ARRAY_MAX)) < 0 ||
      (ret = ps__array_reserve (&ld->refpool, &ld->refpool_cap,
                                (uint64_t) to.p0 + two->refpool_len, 1, PS_ARRAY_MAX)) < 0 ||
      (ret = ps__array_reserve (&ld->after_pairs, &ld->cap_after,
                                (uint64_t) after0 + two->n_after, sizeof *ld->after_pairs,
                                PS_ARRAY_MAX)) < 0 ||
      (ret = ps__array_reserve (&g->strings, &g->strings_cap,
                                (uint64_t) to.s0 + h->strings_len, 1, PS_ARRAY_MAX)) < 0)
    return ret;
  /* The nodes are most of the work (1M nodes: 0.055 s, the names 0.005 s
   * beside them): half of them on a second thread, the rest with the
   * names. */
  landing_part second = { &to, 1, 2, { 0 } }, first = { &to, 0, 2, { 0 } };
  bool split = h->n_nodes >= ps__json_land_thread_min;
  if (!split)
    first.parts = 1;
  ps__job_start (&second.job, land_nodes, &second, split);
  land_names (&to);
  land_nodes (&first);
  ps__job_finish (&second.job); /* in line when no thread could start */
  g->n_nodes += h->n_nodes;
  g->n_kernels += h->n_kernels;
  g->n_kargs += h->n_kargs;
  g->n_access += h->n_access;
  g->strings_len += h->strings_len - 1;
  ld->refpool_len += two->refpool_len;
  ld->n_refs += two->n_refs;
  ld->n_after += two->n_after;
  return 0;
}

int
ps__json_split_check (ps__json_loader *ld)
{
  ps__json_split *sp = ld->split;
  const ps_json_reader *r = &ld->r;
  /* From this element's '}': whitespace, a comma, whitespace, and the
   * position of the byte after them. */
  uint64_t q = r->offset + 1;
  uint32_t line = r->line, col = r->col + 1;
  bool comma = false;
  if (q > sp->at || r->token != PS_JSON_OBJECT_END || ld->errors)
    goto drop;
  for (; q < ld->data_len && q < sp->at; q++) {
    char c = ld->data[q];
    if (c == '\n') {
      line++;
      col = 1;
      continue;
    }
    if (c == ',' && !comma)
      comma = true;
    else if (!is_ws ((unsigned char) c))
      return 0; /* the array's end, or an error the reader will report: read on */
    col++;
  }
  if (q < sp->at)
    return 0;
  if (!comma)
    goto drop;
  ps__job_finish (&sp->job);
  if (!sp->ok || merge (ld, sp, line, col) < 0)
    goto drop;
  ps_json_resume (&ld->r, &sp->ld.r, line, col);
  ps__json_splits_taken++;
  split_free (sp);
  ld->split = NULL;
  ld->split_at = UINT64_MAX;
  return 1;
drop:
  ps__json_split_end (ld);
  return 0;
}
