/* ps-trace-graph.c: an imported trace as a graph that replays it (see
 * ps-trace-graph.h).  Linear passes over the device's ops in start order,
 * plus one sort. */
#include "ps-trace-graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "model/ps-graph-private.h"
#include "ps-exec-trace.h"
#include "ps-plan.h"

/* Clock granularity: constraints this close to a start count as met. */
#define TOL_NS 1.0
/* A cross-stream wait the trace does not record (Kineto's runtime
 * cudaStreamWaitEvent carries no stream or event id) is inferred when an
 * op that nothing else explains starts within this long after work on
 * another stream ended: an event's wait takes a few microseconds. */
#define INFER_NS 3000.0

static const char *const idle_text[] = {
#define PS__IDLE_TEXT(e, text) text,
  PS_IDLE_CAUSE_MAP (PS__IDLE_TEXT)
#undef PS__IDLE_TEXT
};

const char *
ps_idle_cause_text (ps_idle_cause c)
{
  return (unsigned) c < PS_IDLE__COUNT ? idle_text[c] : "?";
}

void
ps_trace_graph_options_init (ps_trace_graph_options *o)
{
  memset (o, 0, sizeof *o);
  o->device = -1;
}

void
ps_trace_graph_info_free (ps_trace_graph_info *info)
{
  if (!info)
    return;
  free (info->span_of_node);
  free (info->cause_of_node);
  free (info->stream_of_pin);
  free (info->tl_stream_of_pin);
  memset (info, 0, sizeof *info);
}

bool
ps_trace_node_get (const ps_graph *g, const ps_timeline *tl, const ps_trace_graph_info *in,
                   uint32_t v, ps_trace_node *out)
{
  memset (out, 0, sizeof *out);
  if (!g || !tl || !in || !in->span_of_node || v >= g->n_nodes || v >= in->gpu_ops
      || in->span_of_node[v] >= tl->n_spans)
    return false;
  uint32_t sp = in->span_of_node[v];
  const ps_span *s = &tl->spans[sp];
  out->name = ps_timeline_span_name (tl, sp);
  out->stream = s->stream < tl->n_streams ? tl->streams[s->stream].id : -1;
  out->correlation = s->correlation;
  out->cpu_op_id = -1;
  if (s->cpu_op && s->cpu_op <= tl->n_cpu_ops) {
    const ps_tl_cpu_op *c = &tl->cpu_ops[s->cpu_op - 1];
    out->cpu_op = c->name != PS_NONE ? tl->strings + c->name : "";
    out->cpu_op_id = c->rf_id;
  }
  out->launch_ns = s->launch_ns >= 0 ? s->launch_ns - in->t0_ns : NAN;
  out->start_ns = s->start_ns - in->t0_ns;
  out->end_ns = s->end_ns - in->t0_ns;
  out->delay_ns = g->delay_ns ? g->delay_ns[v] : 0;
  out->cause = in->cause_of_node ? (ps_idle_cause) in->cause_of_node[v] : PS_IDLE_UNEXPLAINED;
  return true;
}

static bool
is_work (const ps_span *s)
{
  return s->kind == PS_SPAN_KERNEL || s->kind == PS_SPAN_MEMCPY || s->kind == PS_SPAN_MEMSET;
}

static const ps_timeline *sort_tl;

/* Start order; on one stream, the stream's own order. */
static int
cmp_start (const void *a, const void *b)
{
  const ps_span *x = &sort_tl->spans[*(const uint32_t *) a];
  const ps_span *y = &sort_tl->spans[*(const uint32_t *) b];
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  uint32_t i = *(const uint32_t *) a, j = *(const uint32_t *) b;
  return i < j ? -1 : i > j;
}

static bool
nccl_name (const char *s)
{
  for (; *s; s++)
    if ((s[0] | 32) == 'n' && (s[1] | 32) == 'c' && (s[2] | 32) == 'c' && (s[3] | 32) == 'l')
      return true;
  return false;
}

static ps_copy_dir
copy_dir (const char *name)
{
  if (strstr (name, "HtoD") || strstr (name, "H2D"))
    return PS_COPY_H2D;
  if (strstr (name, "DtoH") || strstr (name, "D2H"))
    return PS_COPY_D2H;
  if (strstr (name, "PtoP") || strstr (name, "Peer"))
    return PS_COPY_P2P;
  return PS_COPY_D2D;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Which device to take: o->device, else the one with the most work. */
static int
pick_device (const ps_timeline *tl, const ps_trace_graph_options *o, ps_trace_graph_info *in,
             ps_diag *diag)
{
  int32_t devs[64];
  uint32_t counts[64], n = 0;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    if (!is_work (&tl->spans[i]))
      continue;
    int32_t d = tl->streams[tl->spans[i].stream].device;
    uint32_t k = 0;
    while (k < n && devs[k] != d)
      k++;
    if (k == n) {
      if (n == 64)
        continue;
      devs[n] = d;
      counts[n++] = 0;
    }
    counts[k]++;
  }
  if (n == 0)
    return ps_diag_error (diag, 0, 0,
                          "the trace has no GPU work (kernels, copies or memsets) to make a "
                          "graph of");
  in->n_devices = n;
  uint32_t best = 0;
  for (uint32_t k = 0; k < n; k++) {
    if (o->device >= 0 ? devs[k] == o->device : counts[k] > counts[best])
      best = k;
  }
  if (o->device >= 0 && devs[best] != o->device)
    return ps_diag_error (diag, 0, 0, "the trace has no GPU work on device %d", o->device);
  in->device = devs[best];
  in->gpu_ops = counts[best];
  return 0;
}

typedef struct builder {
  const ps_timeline *tl;
  ps_graph *g;
  ps_trace_graph_info *in;
  uint32_t *ops;      /* span ids of the device's work, in start order */
  uint32_t *node_of;  /* per span: its node, or PS_NONE */
  int32_t *pin_of;    /* per timeline stream: its pin, or -1 */
  uint32_t *after;    /* (from, to) pairs */
  uint32_t n_after, after_cap;
  uint64_t *shared;   /* correlation ids more than one op has, sorted */
  uint32_t n_shared;
  const ps_trace_graph_options *o;
  bool *linked;       /* per node: the execution trace says what it touches */
} builder;

static int
add_after (builder *b, uint32_t from, uint32_t to)
{
  if (b->n_after + 2 > b->after_cap) {
    uint32_t cap = b->after_cap ? b->after_cap * 2 : 1024;
    uint32_t *p = realloc (b->after, (size_t) cap * sizeof *p);
    if (!p)
      return PS_ENOMEM;
    b->after = p;
    b->after_cap = cap;
  }
  b->after[b->n_after++] = from;
  b->after[b->n_after++] = to;
  return 0;
}

static bool
shared_launch (const builder *b, uint64_t corr)
{
  if (corr == 0)
    return false;
  uint32_t lo = 0, hi = b->n_shared;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (b->shared[mid] < corr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < b->n_shared && b->shared[lo] == corr;
}

/* Correlation ids that several ops share: the work of one graph launch. */
static int
find_shared (builder *b, uint32_t n)
{
  uint64_t *c = malloc (((size_t) n + 1) * sizeof *c);
  if (!c)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < n; i++)
    c[i] = b->tl->spans[b->ops[i]].correlation;
  ps_array_sort (c, n, sizeof *c, cmp_u64);
  uint32_t m = 0;
  for (uint32_t i = 1; i < n; i++)
    if (c[i] != 0 && c[i] == c[i - 1] && (m == 0 || c[m - 1] != c[i]))
      c[m++] = c[i];
  b->shared = c;
  b->n_shared = m;
  return 0;
}

/* Pins: the device's streams in the order of their trace ids. */
static int
assign_pins (builder *b, ps_diag *diag)
{
  const ps_timeline *tl = b->tl;
  ps_trace_graph_info *in = b->in;
  b->pin_of = malloc (((size_t) tl->n_streams + 1) * sizeof *b->pin_of);
  if (!b->pin_of)
    return PS_ENOMEM;
  /* The timeline's streams are sorted by (device, id) already. */
  uint32_t n = 0;
  for (uint32_t q = 0; q < tl->n_streams; q++) {
    b->pin_of[q] = -1;
    bool used = false;
    for (uint32_t k = tl->stream_off[q]; k < tl->stream_off[q + 1] && !used; k++)
      used = is_work (&tl->spans[tl->by_stream[k]]);
    if (used && tl->streams[q].device == in->device)
      b->pin_of[q] = (int32_t) n++;
  }
  if (n > PS_MAX_STREAMS)
    return ps_diag_error (diag, 0, 0,
                          "device %d of the trace has work on %u streams; planscope plans at "
                          "most %d",
                          in->device, n, PS_MAX_STREAMS);
  in->streams = n;
  in->stream_of_pin = malloc (((size_t) n + 1) * sizeof *in->stream_of_pin);
  in->tl_stream_of_pin = malloc (((size_t) n + 1) * sizeof *in->tl_stream_of_pin);
  if (!in->stream_of_pin || !in->tl_stream_of_pin)
    return PS_ENOMEM;
  for (uint32_t q = 0; q < tl->n_streams; q++)
    if (b->pin_of[q] >= 0) {
      in->stream_of_pin[b->pin_of[q]] = tl->streams[q].id;
      in->tl_stream_of_pin[b->pin_of[q]] = q;
    }
  return 0;
}

static int
make_nodes (builder *b)
{
  const ps_timeline *tl = b->tl;
  ps_graph *g = b->g;
  ps_trace_graph_info *in = b->in;
  uint32_t n = in->gpu_ops, n_kernels = 0;
  for (uint32_t i = 0; i < n; i++)
    n_kernels += tl->spans[b->ops[i]].kind == PS_SPAN_KERNEL;
  g->nodes = calloc ((size_t) n + 1, sizeof *g->nodes);
  g->kernels = calloc ((size_t) n_kernels + 1, sizeof *g->kernels);
  g->host_ns = malloc (((size_t) n + 1) * sizeof *g->host_ns);
  g->delay_ns = calloc ((size_t) n + 1, sizeof *g->delay_ns);
  in->span_of_node = malloc (((size_t) n + 1) * sizeof *in->span_of_node);
  in->cause_of_node = calloc ((size_t) n + 1, 1);
  if (!g->nodes || !g->kernels || !g->host_ns || !g->delay_ns || !in->span_of_node ||
      !in->cause_of_node)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t sp = b->ops[i];
    const ps_span *s = &tl->spans[sp];
    const char *label = ps_timeline_span_name (tl, sp);
    char name[PS_MAX_NAME];
    snprintf (name, sizeof name, "%.4000s #%u", label, i + 1);
    ps_node *nd = &g->nodes[i];
    int rc = ps__graph_intern (g, name, strlen (name), &nd->name);
    if (rc < 0)
      return rc;
    nd->stream = b->pin_of[s->stream];
    nd->src_device = nd->dst_device = -1;
    nd->aux = PS_NONE;
    nd->cond = PS_NONE;
    nd->cost_ns = fmax (0, s->end_ns - s->start_ns);
    nd->flags = PS_NODE_HAS_COST;
    switch ((ps_span_kind) s->kind) {
    case PS_SPAN_KERNEL: {
      nd->op = PS_OP_KERNEL;
      ps_kernel *k = &g->kernels[g->n_kernels];
      if ((rc = ps__graph_intern (g, label, strlen (label), &k->function)) < 0)
        return rc;
      /* The launch as the trace gives it; else unknown (grid and block 1). */
      const ps_tl_launch *l = tl->launches ? &tl->launches[sp] : NULL;
      k->launch_unknown = !l || !l->grid[0];
      for (int d = 0; d < 3; d++) {
        k->grid[d] = k->launch_unknown ? 1 : l->grid[d];
        k->block[d] = k->launch_unknown ? 1 : l->block[d];
      }
      k->module = PS_NONE;
      k->alpha = 1;
      k->flops = k->traffic_bytes = -1;
      nd->aux = g->n_kernels++;
      break;
    }
    case PS_SPAN_MEMCPY:
      nd->op = PS_OP_MEMCPY;
      nd->dir = (uint8_t) copy_dir (label);
      break;
    default:
      nd->op = PS_OP_MEMSET;
      break;
    }
    in->span_of_node[i] = sp;
    b->node_of[sp] = i;
  }
  g->n_nodes = n;
  return 0;
}

/* With free streams, what orders two ops the execution trace links is
 * their data: no stream order or recorded wait between them is kept. */
static bool
both_linked (const builder *b, uint32_t u, uint32_t v)
{
  return b->linked && b->o->free_streams && b->linked[u] && b->linked[v];
}

typedef struct {
  int64_t device, storage;
} storage_key;

static int
cmp_storage (const void *a, const void *b)
{
  const storage_key *x = a, *y = b;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  return x->storage < y->storage ? -1 : x->storage > y->storage;
}

static uint32_t
find_storage (const storage_key *keys, uint32_t n, int64_t device, int64_t storage)
{
  storage_key k = { device, storage };
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cmp_storage (&keys[mid], &k) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && cmp_storage (&keys[lo], &k) == 0 ? lo : PS_NONE;
}

/* The execution-trace operator of node v, or NULL (counted). */
static const ps_et_op *
et_op_of (builder *b, uint32_t v)
{
  const ps_timeline *tl = b->tl;
  const ps_span *s = &tl->spans[b->in->span_of_node[v]];
  if (s->cpu_op == 0 || s->cpu_op > tl->n_cpu_ops) {
    b->in->et.no_cpu_op++;
    return NULL;
  }
  const ps_tl_cpu_op *c = &tl->cpu_ops[s->cpu_op - 1];
  const ps_et_op *op = ps_exec_trace_find (b->o->et, c->rf_id);
  const char *name = c->name != PS_NONE ? tl->strings + c->name : "";
  if (!op || strcmp (ps_et_op_name (b->o->et, op), name) != 0) {
    b->in->et.unmatched++;
    return NULL;
  }
  return op;
}

/* Which of op's tensors node v reads (out = false) or writes: a kernel
 * reads every input and writes every output; a copy or memset touches
 * what its direction lets it, or is left unlinked (returns false). */
static bool
et_accesses (const ps_exec_trace *et, const ps_et_op *op, const ps_node *nd, uint32_t *reads,
             uint32_t *n_reads, uint32_t *writes, uint32_t *n_writes)
{
  *n_reads = *n_writes = 0;
  uint32_t first_in = PS_NONE, first_out = PS_NONE;
  for (uint32_t k = 0; k < op->tensors_count; k++) {
    uint32_t t = op->tensors_begin + k;
    if (et->tensors[t].output) {
      if (first_out == PS_NONE)
        first_out = t;
      if (nd->op == PS_OP_KERNEL)
        writes[(*n_writes)++] = t;
    } else {
      if (first_in == PS_NONE)
        first_in = t;
      if (nd->op == PS_OP_KERNEL)
        reads[(*n_reads)++] = t;
    }
  }
  if (nd->op == PS_OP_KERNEL)
    return *n_reads + *n_writes > 0;
  /* copy_ (self, src) and the like: the output is self, the first input. */
  uint32_t dst = first_out != PS_NONE ? first_out : first_in;
  if (nd->op == PS_OP_MEMSET || (nd->op == PS_OP_MEMCPY && nd->dir == PS_COPY_H2D)) {
    if (dst == PS_NONE)
      return false;
    writes[(*n_writes)++] = dst;
    return true;
  }
  if (nd->dir == PS_COPY_D2H) {
    if (first_in == PS_NONE)
      return false;
    reads[(*n_reads)++] = first_in;
    return true;
  }
  /* Device to device: a source that is not the destination's storage. */
  uint32_t src = PS_NONE;
  for (uint32_t k = 0; k < op->tensors_count && src == PS_NONE; k++) {
    const ps_et_tensor *t = &et->tensors[op->tensors_begin + k];
    if (!t->output && dst != PS_NONE && t->storage != et->tensors[dst].storage)
      src = op->tensors_begin + k;
  }
  if (dst == PS_NONE || src == PS_NONE)
    return false;
  reads[(*n_reads)++] = src;
  writes[(*n_writes)++] = dst;
  return true;
}

/* Buffers and accesses from the execution trace (o->et), one buffer per
 * CUDA storage its linked operators touch. */
static int
attach_et (builder *b)
{
  const ps_exec_trace *et = b->o->et;
  if (!et)
    return 0;
  ps_graph *g = b->g;
  ps_trace_graph_info *in = b->in;
  uint32_t n = g->n_nodes;
  const ps_et_op **op_of = calloc ((size_t) n + 1, sizeof *op_of);
  b->linked = calloc ((size_t) n + 1, sizeof *b->linked);
  uint32_t max_t = 1;
  for (uint32_t k = 0; k < et->n_ops; k++)
    max_t = et->ops[k].tensors_count > max_t ? et->ops[k].tensors_count : max_t;
  uint32_t *reads = malloc ((size_t) max_t * sizeof *reads);
  uint32_t *writes = malloc ((size_t) max_t * sizeof *writes);
  storage_key *keys = NULL;
  int rc = op_of && b->linked && reads && writes ? 0 : PS_ENOMEM;
  /* Pass 1: which nodes link, and the storages they touch. */
  uint64_t n_access = 0, n_keys = 0;
  for (uint32_t v = 0; v < n && rc == 0; v++) {
    const ps_et_op *op = et_op_of (b, v);
    uint32_t nr, nw;
    if (!op)
      continue;
    if (!et_accesses (et, op, &g->nodes[v], reads, &nr, writes, &nw)) {
      in->et.no_tensors++;
      continue;
    }
    op_of[v] = op;
    b->linked[v] = true;
    n_access += nr + nw;
    n_keys += nr + nw;
    in->et.linked++;
  }
  if (rc == 0 && n_access > UINT32_MAX / 2)
    rc = PS_ELIMIT;
  if (rc == 0 && !(keys = malloc ((size_t) (n_keys + 1) * sizeof *keys)))
    rc = PS_ENOMEM;
  uint32_t nk = 0;
  /* Only the storages the ops touch: a copy uses two of its tensors. */
  for (uint32_t v = 0; v < n && rc == 0; v++) {
    uint32_t nr, nw;
    if (!op_of[v])
      continue;
    et_accesses (et, op_of[v], &g->nodes[v], reads, &nr, writes, &nw);
    for (uint32_t k = 0; k < nr + nw; k++) {
      const ps_et_tensor *t = &et->tensors[k < nr ? reads[k] : writes[k - nr]];
      keys[nk++] = (storage_key) { t->device, t->storage };
    }
  }
  if (rc == 0) {
    ps_array_sort (keys, nk, sizeof *keys, cmp_storage);
    uint32_t u = 0;
    for (uint32_t i = 0; i < nk; i++)
      if (u == 0 || cmp_storage (&keys[u - 1], &keys[i]) != 0)
        keys[u++] = keys[i];
    nk = u;
    if (nk > PS_MAX_BUFFERS)
      rc = PS_ELIMIT;
  }
  if (rc == 0) {
    g->buffers = calloc ((size_t) nk + 1, sizeof *g->buffers);
    g->access = malloc (((size_t) n_access + 1) * sizeof *g->access);
    if (!g->buffers || !g->access)
      rc = PS_ENOMEM;
  }
  bool multi_device = nk > 0 && keys[0].device != keys[nk - 1].device;
  for (uint32_t i = 0; i < nk && rc == 0; i++) {
    char name[96];
    if (multi_device)
      snprintf (name, sizeof name, "storage %lld (cuda:%lld)", (long long) keys[i].storage,
                (long long) keys[i].device);
    else
      snprintf (name, sizeof name, "storage %lld", (long long) keys[i].storage);
    ps_buffer *bf = &g->buffers[i];
    rc = ps__graph_intern (g, name, strlen (name), &bf->name);
    bf->dtype = 0xff; /* not yet seen */
  }
  g->n_buffers = rc == 0 ? nk : 0;
  /* Pass 2: the accesses, and each storage's extent and element type.
   * stamp[2 * id + w]: the last node + 1 that read (w = 0) or wrote it. */
  uint32_t *stamp = rc == 0 ? calloc (2 * (size_t) nk + 1, sizeof *stamp) : NULL;
  if (rc == 0 && !stamp)
    rc = PS_ENOMEM;
  for (uint32_t v = 0; v < n && rc == 0; v++) {
    ps_node *nd = &g->nodes[v];
    nd->reads_begin = nd->writes_begin = g->n_access;
    if (!op_of[v])
      continue;
    uint32_t nr, nw;
    et_accesses (et, op_of[v], nd, reads, &nr, writes, &nw);
    for (int w = 0; w < 2; w++) {
      const uint32_t *list = w ? writes : reads;
      uint32_t cnt = w ? nw : nr;
      if (w)
        nd->writes_begin = g->n_access;
      for (uint32_t k = 0; k < cnt; k++) {
        const ps_et_tensor *t = &et->tensors[list[k]];
        uint32_t id = find_storage (keys, nk, t->device, t->storage);
        if (stamp[2 * id + w] == v + 1)
          continue;
        bool seen = stamp[2 * id] || stamp[2 * id + 1];
        stamp[2 * id + w] = v + 1;
        g->access[g->n_access++] = id;
        ps_buffer *bf = &g->buffers[id];
        if (t->bytes > bf->bytes)
          bf->bytes = t->bytes;
        bf->dtype = bf->dtype == 0xff || bf->dtype == t->dtype ? t->dtype : PS_DT_U8;
        /* Written before the run when its first use reads it. */
        if (!seen && !w)
          bf->flags |= PS_BUF_EXTERNAL;
      }
      if (w)
        nd->writes_count = g->n_access - nd->writes_begin;
      else
        nd->reads_count = g->n_access - nd->reads_begin;
    }
  }
  for (uint32_t i = 0; i < g->n_buffers; i++)
    if (g->buffers[i].dtype == 0xff)
      g->buffers[i].dtype = PS_DT_U8;
  in->et.buffers = g->n_buffers;
  free (stamp);
  free (keys);
  free (reads);
  free (writes);
  free (op_of);
  return rc;
}

static const builder *sort_b;

static int
cmp_end (const void *a, const void *b)
{
  const ps_span *x = &sort_b->tl->spans[sort_b->in->span_of_node[*(const uint32_t *) a]];
  const ps_span *y = &sort_b->tl->spans[sort_b->in->span_of_node[*(const uint32_t *) b]];
  if (x->end_ns != y->end_ns)
    return x->end_ns < y->end_ns ? -1 : 1;
  uint32_t i = *(const uint32_t *) a, j = *(const uint32_t *) b;
  return i < j ? -1 : i > j;
}

/* The node on another stream than pin whose work ended last in
 * (start - INFER_NS, start], or PS_NONE: by_end holds the nodes sorted by
 * their end. */
static uint32_t
inferred_wait (const builder *b, const uint32_t *by_end, uint32_t n, uint32_t v, double start_abs,
               int32_t pin)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (b->tl->spans[b->in->span_of_node[by_end[mid]]].end_ns <= start_abs + TOL_NS)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (uint32_t k = lo; k-- > 0;) {
    uint32_t u = by_end[k];
    if (b->tl->spans[b->in->span_of_node[u]].end_ns < start_abs - INFER_NS)
      break;
    if (u < v && b->g->nodes[u].stream != pin)
      return u;
  }
  return PS_NONE;
}

/* Dependencies, host times and measured delays, in start order. */
static int
constrain (builder *b)
{
  const ps_timeline *tl = b->tl;
  ps_graph *g = b->g;
  ps_trace_graph_info *in = b->in;
  uint32_t n = in->gpu_ops;
  const double t0 = in->t0_ns;
  /* Per span: the flows that end at it, as a linked list over flows. */
  uint32_t *first = malloc (((size_t) tl->n_spans + 1) * sizeof *first);
  uint32_t *next = malloc (((size_t) tl->n_flows + 1) * sizeof *next);
  if (!first || !next) {
    free (first);
    free (next);
    return PS_ENOMEM;
  }
  for (uint32_t i = 0; i < tl->n_spans; i++)
    first[i] = PS_NONE;
  for (uint32_t f = 0; f < tl->n_flows; f++) {
    uint32_t to = tl->flows[f].to_span;
    next[f] = PS_NONE;
    if (to < tl->n_spans) {
      next[f] = first[to];
      first[to] = f;
    }
  }
  int rc = 0;
  uint32_t last_on[PS_MAX_STREAMS];
  for (uint32_t p = 0; p < PS_MAX_STREAMS; p++)
    last_on[p] = PS_NONE;
  bool *nccl_stream = calloc (PS_MAX_STREAMS, sizeof *nccl_stream);
  if (!nccl_stream)
    rc = PS_ENOMEM;
  for (uint32_t v = 0; v < n && rc == 0; v++)
    if (nccl_name (ps_timeline_span_name (tl, in->span_of_node[v])))
      nccl_stream[g->nodes[v].stream] = true;
  /* Without recorded waits, waits are inferred from the timing. */
  uint32_t *by_end = NULL;
  if (rc == 0 && tl->n_flows == 0 && in->streams > 1) {
    by_end = malloc (((size_t) n + 1) * sizeof *by_end);
    if (!by_end)
      rc = PS_ENOMEM;
    for (uint32_t v = 0; by_end && v < n; v++)
      by_end[v] = v;
    if (by_end) {
      sort_b = b;
      ps_array_sort (by_end, n, sizeof *by_end, cmp_end);
      sort_b = NULL;
    }
  }

  for (uint32_t v = 0; v < n && rc == 0; v++) {
    uint32_t sp = in->span_of_node[v];
    const ps_span *s = &tl->spans[sp];
    double start = s->start_ns - t0;
    int32_t pin = g->nodes[v].stream;
    double explained = 0;
    bool host_bound = false;
    uint32_t prev = last_on[pin];
    if (prev != PS_NONE) {
      if (!both_linked (b, prev, v))
        rc = add_after (b, prev, v);
      explained = fmax (explained, tl->spans[in->span_of_node[prev]].end_ns - t0);
    }
    last_on[pin] = v;
    for (uint32_t f = first[sp]; f != PS_NONE && rc == 0; f = next[f]) {
      uint32_t from = tl->flows[f].from_span;
      uint32_t u = from < tl->n_spans ? b->node_of[from] : PS_NONE;
      if (u == PS_NONE || u >= v || g->nodes[u].stream == pin)
        continue;
      double end = tl->spans[from].end_ns - t0;
      if (end > start + TOL_NS) {
        in->dropped++; /* it started before the work it would wait for ended */
        continue;
      }
      if (!both_linked (b, u, v))
        rc = add_after (b, u, v);
      explained = fmax (explained, end);
      in->waits++;
    }
    /* The host: it cannot start before its launch (a launch logged after
     * the start is clock skew, and counts as at the start). */
    g->host_ns[v] = NAN;
    if (s->launch_ns >= 0) {
      g->host_ns[v] = fmin (s->launch_ns - t0, start);
      host_bound = g->host_ns[v] >= explained;
      explained = fmax (explained, g->host_ns[v]);
      in->launches++;
    }
    double idle = start - explained;
    uint32_t w = idle > TOL_NS && by_end ? inferred_wait (b, by_end, n, v, s->start_ns, pin)
                                         : PS_NONE;
    if (w != PS_NONE) {
      double end = tl->spans[in->span_of_node[w]].end_ns - t0;
      if (end > explained) {
        if (!both_linked (b, w, v))
          rc = add_after (b, w, v);
        explained = end;
        host_bound = false;
        in->inferred++;
        idle = start - explained;
      }
    }
    if (idle > TOL_NS) {
      ps_idle_cause c = nccl_stream[pin]                    ? PS_IDLE_NCCL
                        : shared_launch (b, s->correlation) ? PS_IDLE_GRAPH_LAUNCH
                        : host_bound                        ? PS_IDLE_LAUNCH_LATENCY
                                                            : PS_IDLE_UNEXPLAINED;
      g->delay_ns[v] = idle;
      in->cause_of_node[v] = (uint8_t) c;
      in->delays++;
      in->delay_ns += idle;
      in->delay_by[c] += idle;
    }
  }
  free (nccl_stream);
  free (by_end);
  free (first);
  free (next);
  return rc;
}

int
ps_trace_graph_build (ps_graph *g, const ps_timeline *tl, const ps_trace_graph_options *o,
                      ps_trace_graph_info *info, ps_diag *diag)
{
  ps_graph_init (g);
  ps_trace_graph_info local;
  ps_trace_graph_info *in = info ? info : &local;
  memset (in, 0, sizeof *in);
  ps_trace_graph_options defaults;
  if (!o) {
    ps_trace_graph_options_init (&defaults);
    o = &defaults;
  }
  int rc = pick_device (tl, o, in, diag);
  if (rc < 0)
    return rc;
  if (in->gpu_ops > PS_MAX_NODES)
    return ps_diag_error (diag, 0, 0, "the trace has %u GPU ops on device %d (limit %u)",
                          in->gpu_ops, in->device, (unsigned) PS_MAX_NODES);
  builder b = { tl, g, in, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, o, NULL };
  b.ops = malloc (((size_t) in->gpu_ops + 1) * sizeof *b.ops);
  b.node_of = malloc (((size_t) tl->n_spans + 1) * sizeof *b.node_of);
  if (!b.ops || !b.node_of) {
    rc = PS_ENOMEM;
    goto out;
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    b.node_of[i] = PS_NONE;
    if (is_work (&tl->spans[i]) && tl->streams[tl->spans[i].stream].device == in->device)
      b.ops[n++] = i;
  }
  sort_tl = tl;
  ps_array_sort (b.ops, n, sizeof *b.ops, cmp_start);
  sort_tl = NULL;
  /* Time 0: the first op's start, or the launch before it. */
  double t0 = INFINITY;
  for (uint32_t i = 0; i < n; i++) {
    const ps_span *s = &tl->spans[b.ops[i]];
    t0 = fmin (t0, s->launch_ns >= 0 ? fmin (s->launch_ns, s->start_ns) : s->start_ns);
  }
  in->t0_ns = isfinite (t0) ? t0 : 0;
  if ((rc = assign_pins (&b, diag)) < 0 || (rc = find_shared (&b, n)) < 0 ||
      (rc = make_nodes (&b)) < 0 || (rc = attach_et (&b)) < 0 || (rc = constrain (&b)) < 0)
    goto out;
  if (o->free_streams)
    for (uint32_t v = 0; v < g->n_nodes; v++)
      g->nodes[v].stream = -1;
  g->measured = true;
  g->name = strdup ("trace");
  if (!g->name) {
    rc = PS_ENOMEM;
    goto out;
  }
  rc = ps__graph_build_edges (g, b.after, b.n_after / 2, diag);
out:
  free (b.ops);
  free (b.node_of);
  free (b.pin_of);
  free (b.after);
  free (b.shared);
  free (b.linked);
  if (rc < 0) {
    ps_graph_free (g);
    ps_trace_graph_info_free (in);
  } else if (!info) {
    ps_trace_graph_info_free (&local);
  }
  return rc;
}
