/* fuzz-check.h: invariants the fuzz harnesses (and tests/test-regressions.c)
 * check on whatever a loader accepted.  A loader that returns 0 must hand
 * out a graph or timeline every later pass can index blindly: every id in
 * range, every string offset inside the pool, edges sorted, deduplicated
 * and pointing forward in both CSR directions.  A broken invariant aborts
 * with a message, so libFuzzer records the input as a crash. */
#ifndef PS_FUZZ_CHECK_H
#define PS_FUZZ_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ps-graph.h"
#include "ps-timeline.h"

#define FUZZ_CHECK(cond, ...)                                           \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf (stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf (stderr, __VA_ARGS__);                                    \
      fputc ('\n', stderr);                                             \
      abort ();                                                         \
    }                                                                   \
  } while (0)

static inline void
fuzz_check_str (const ps_graph *g, uint32_t off, const char *what)
{
  FUZZ_CHECK (off < g->strings_len, "%s: string offset %u outside the pool (%u bytes)", what,
              off, g->strings_len);
}

static inline void
fuzz_check_csr (uint32_t n, uint32_t n_edges, const uint32_t *off, const uint32_t *adj,
                int forward, const char *what)
{
  FUZZ_CHECK (off[0] == 0, "%s: first offset %u", what, off[0]);
  FUZZ_CHECK (off[n] == n_edges, "%s: last offset %u, %u edges", what, off[n], n_edges);
  for (uint32_t u = 0; u < n; u++) {
    FUZZ_CHECK (off[u] <= off[u + 1], "%s: offsets decrease at node %u", what, u);
    for (uint32_t i = off[u]; i < off[u + 1]; i++) {
      uint32_t v = adj[i];
      FUZZ_CHECK (v < n, "%s: node %u has neighbour %u of %u", what, u, v, n);
      FUZZ_CHECK (forward ? v > u : v < u, "%s: edge between %u and %u points the wrong way",
                  what, u, v);
      FUZZ_CHECK (i == off[u] || adj[i - 1] < v, "%s: neighbours of %u unsorted or repeated",
                  what, u);
    }
  }
}

/* Everything a successfully loaded graph promises (ps-graph.h). */
static inline void
fuzz_check_graph (const ps_graph *g)
{
  FUZZ_CHECK (g->n_nodes >= 1 && g->n_nodes <= PS_MAX_NODES, "%u nodes", g->n_nodes);
  FUZZ_CHECK (g->n_buffers <= PS_MAX_BUFFERS, "%u buffers", g->n_buffers);
  FUZZ_CHECK (g->n_edges <= PS_MAX_EDGES, "%u edges", g->n_edges);
  FUZZ_CHECK (g->name != NULL, "no graph name");
  FUZZ_CHECK (g->strings_len > 0 && g->strings_len <= g->strings_cap, "pool %u of %u",
              g->strings_len, g->strings_cap);
  FUZZ_CHECK (g->strings[g->strings_len - 1] == '\0', "string pool not terminated");

  for (uint32_t b = 0; b < g->n_buffers; b++) {
    const ps_buffer *bf = &g->buffers[b];
    fuzz_check_str (g, bf->name, "buffer name");
    FUZZ_CHECK (bf->bytes > 0 && bf->bytes <= PS_MAX_BUFFER_BYTES, "buffer %u: %llu bytes", b,
                (unsigned long long) bf->bytes);
    FUZZ_CHECK (bf->dtype < PS_DT__COUNT, "buffer %u: dtype %u", b, bf->dtype);
  }
  for (uint32_t e = 0; e < g->n_events; e++)
    fuzz_check_str (g, g->event_names[e], "event name");
  for (uint32_t i = 0; i < g->n_access; i++)
    FUZZ_CHECK (g->access[i] < g->n_buffers, "access %u: buffer %u", i, g->access[i]);
  for (uint32_t i = 0; i < g->n_cond_members; i++)
    FUZZ_CHECK (g->cond_members[i] < g->n_nodes, "branch member %u: node %u", i,
                g->cond_members[i]);
  for (uint32_t i = 0; i < g->n_kargs; i++) {
    FUZZ_CHECK (g->kargs[i].kind <= PS_KARG_F64, "karg %u: kind %u", i, g->kargs[i].kind);
    if (g->kargs[i].kind == PS_KARG_BUFFER)
      FUZZ_CHECK (g->kargs[i].v.buffer < g->n_buffers, "karg %u: buffer %u", i,
                  g->kargs[i].v.buffer);
  }
  for (uint32_t k = 0; k < g->n_kernels; k++) {
    const ps_kernel *kn = &g->kernels[k];
    fuzz_check_str (g, kn->function, "kernel function");
    if (kn->module != PS_NONE)
      fuzz_check_str (g, kn->module, "kernel module");
    for (int d = 0; d < 3; d++)
      FUZZ_CHECK (kn->grid[d] >= 1 && kn->block[d] >= 1, "kernel %u: zero launch dimension", k);
    FUZZ_CHECK (kn->args_begin <= g->n_kargs && kn->args_count <= g->n_kargs - kn->args_begin,
                "kernel %u: args [%u, +%u) of %u", k, kn->args_begin, kn->args_count, g->n_kargs);
  }
  for (uint32_t c = 0; c < g->n_conds; c++) {
    const ps_cond *cd = &g->conds[c];
    FUZZ_CHECK (cd->condition < g->n_buffers, "conditional %u: buffer %u", c, cd->condition);
    FUZZ_CHECK (cd->then_begin <= g->n_cond_members
                    && cd->then_count <= g->n_cond_members - cd->then_begin,
                "conditional %u: then branch out of range", c);
    FUZZ_CHECK (cd->else_begin <= g->n_cond_members
                    && cd->else_count <= g->n_cond_members - cd->else_begin,
                "conditional %u: else branch out of range", c);
  }
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *nd = &g->nodes[v];
    fuzz_check_str (g, nd->name, "node name");
    FUZZ_CHECK (nd->op < PS_OP__COUNT, "node %u: op %u", v, nd->op);
    FUZZ_CHECK (nd->impl < PS_IMPL__COUNT, "node %u: impl %u", v, nd->impl);
    FUZZ_CHECK (nd->stream >= -1, "node %u: stream %d", v, nd->stream);
    FUZZ_CHECK (nd->reads_begin <= g->n_access && nd->reads_count <= g->n_access - nd->reads_begin,
                "node %u: reads out of range", v);
    FUZZ_CHECK (nd->writes_begin <= g->n_access
                    && nd->writes_count <= g->n_access - nd->writes_begin,
                "node %u: writes out of range", v);
    FUZZ_CHECK (nd->cond == PS_NONE || nd->cond < v, "node %u: conditional %u", v, nd->cond);
    if (nd->flags & PS_NODE_HAS_COST)
      FUZZ_CHECK (isfinite (nd->cost_ns) && nd->cost_ns >= 0, "node %u: cost %g", v, nd->cost_ns);
    switch (nd->op) {
    case PS_OP_KERNEL:
      FUZZ_CHECK (nd->aux < g->n_kernels, "node %u: kernel %u", v, nd->aux);
      break;
    case PS_OP_EVENT_RECORD:
    case PS_OP_EVENT_WAIT:
      FUZZ_CHECK (nd->aux < g->n_events, "node %u: event %u", v, nd->aux);
      break;
    case PS_OP_CONDITIONAL:
      FUZZ_CHECK (nd->aux < g->n_conds, "node %u: conditional %u", v, nd->aux);
      break;
    case PS_OP_HOST:
    case PS_OP_OPAQUE:
      if (nd->aux != PS_NONE)
        fuzz_check_str (g, nd->aux, "node label");
      break;
    case PS_OP_MEMCPY:
      FUZZ_CHECK (nd->dir < PS_COPY__COUNT, "node %u: copy direction %u", v, nd->dir);
      break;
    default:
      break;
    }
  }
  fuzz_check_csr (g->n_nodes, g->n_edges, g->succ_off, g->succ, 1, "successors");
  fuzz_check_csr (g->n_nodes, g->n_edges, g->pred_off, g->pred, 0, "predecessors");
}

/* Every message is one line with no control characters: names quoted
 * from a hostile file must not break lines or drive a terminal. */
static inline void
fuzz_check_diag (const ps_diag *d)
{
  for (size_t i = 0; i < d->count; i++) {
    const char *m = d->entries[i].message;
    FUZZ_CHECK (m && *m, "message %zu is empty", i);
    for (const unsigned char *c = (const unsigned char *) m; *c; c++)
      FUZZ_CHECK (*c >= 0x20 && *c != 0x7f, "message %zu has control character 0x%02x: %s", i,
                  *c, m);
  }
}

/* Text for a terminal: lines of printable characters (and tabs). */
static inline void
fuzz_check_text (const char *text, size_t len, const char *what)
{
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char) text[i];
    FUZZ_CHECK (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f),
                "%s: control character 0x%02x at byte %zu", what, c, i);
  }
}

/* Runs write(ctx, stream) into memory and checks the text. */
#define FUZZ_CHECK_TEXT_OUTPUT(what, call)                                \
  do {                                                                    \
    char *text_ = NULL;                                                   \
    size_t len_ = 0;                                                      \
    FILE *mem_ = open_memstream (&text_, &len_);                          \
    FUZZ_CHECK (mem_ != NULL, "open_memstream");                          \
    FILE *out = mem_;                                                     \
    (void) (call);                                                        \
    FUZZ_CHECK (fclose (mem_) == 0, "fclose");                            \
    fuzz_check_text (text_, len_, what);                                  \
    free (text_);                                                         \
  } while (0)

static inline int
fuzz_time_ok (double t)
{
  return isfinite (t) && t >= 0;
}

/* Everything a finished timeline promises (ps-timeline.h). */
static inline void
fuzz_check_timeline (const ps_timeline *tl)
{
  FUZZ_CHECK (fuzz_time_ok (tl->makespan_ns), "makespan %g", tl->makespan_ns);
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    const ps_span *s = &tl->spans[i];
    FUZZ_CHECK (s->stream < tl->n_streams, "span %u: stream %u of %u", i, s->stream,
                tl->n_streams);
    FUZZ_CHECK (fuzz_time_ok (s->start_ns) && isfinite (s->end_ns) && s->end_ns >= s->start_ns,
                "span %u: [%g, %g]", i, s->start_ns, s->end_ns);
    FUZZ_CHECK (s->end_ns <= tl->makespan_ns, "span %u ends at %g after the makespan %g", i,
                s->end_ns, tl->makespan_ns);
    FUZZ_CHECK (s->nodes_begin <= tl->n_span_nodes
                    && s->nodes_count <= tl->n_span_nodes - s->nodes_begin,
                "span %u: nodes out of range", i);
    FUZZ_CHECK (s->name == PS_NONE || s->name < tl->strings_len, "span %u: name %u", i, s->name);
    FUZZ_CHECK (s->pred == PS_NONE || s->pred < tl->n_spans, "span %u: pred %u", i, s->pred);
    FUZZ_CHECK (s->kind < PS_SPAN__COUNT, "span %u: kind %u", i, s->kind);
    if (tl->graph)
      for (uint32_t k = 0; k < s->nodes_count; k++)
        FUZZ_CHECK (tl->span_nodes[s->nodes_begin + k] < tl->graph->n_nodes,
                    "span %u: node out of range", i);
  }
  for (uint32_t i = 0; i < tl->n_stalls; i++) {
    const ps_stall *s = &tl->stalls[i];
    FUZZ_CHECK (s->stream < tl->n_streams, "stall %u: stream %u", i, s->stream);
    FUZZ_CHECK (s->on_stream == PS_NONE || s->on_stream < tl->n_streams, "stall %u: on %u", i,
                s->on_stream);
    FUZZ_CHECK (s->waiting_for == PS_NONE || s->waiting_for < tl->n_spans,
                "stall %u: waiting for %u", i, s->waiting_for);
    FUZZ_CHECK (fuzz_time_ok (s->start_ns) && isfinite (s->end_ns) && s->end_ns >= s->start_ns,
                "stall %u: [%g, %g]", i, s->start_ns, s->end_ns);
  }
  for (uint32_t i = 0; i < tl->n_flows; i++) {
    const ps_flow *f = &tl->flows[i];
    FUZZ_CHECK (f->from_stream < tl->n_streams && f->to_stream < tl->n_streams,
                "flow %u: streams %u -> %u", i, f->from_stream, f->to_stream);
    FUZZ_CHECK (f->from_span == PS_NONE || f->from_span < tl->n_spans, "flow %u: from %u", i,
                f->from_span);
    FUZZ_CHECK (f->to_span == PS_NONE || f->to_span < tl->n_spans, "flow %u: to %u", i,
                f->to_span);
    FUZZ_CHECK (f->stall == PS_NONE || f->stall < tl->n_stalls, "flow %u: stall %u", i, f->stall);
    FUZZ_CHECK (isfinite (f->from_ns) && isfinite (f->to_ns), "flow %u: times", i);
  }
  for (uint32_t i = 0; i < tl->n_host_waits; i++)
    FUZZ_CHECK (tl->host_waits[i].span < tl->n_spans, "host wait %u: span %u", i,
                tl->host_waits[i].span);
  if (tl->n_streams) {
    FUZZ_CHECK (tl->stream_off != NULL, "timeline not finished");
    FUZZ_CHECK (tl->stream_off[0] == 0 && tl->stream_off[tl->n_streams] == tl->n_spans,
                "per-stream index does not cover the spans");
    for (uint32_t st = 0; st < tl->n_streams; st++)
      for (uint32_t k = tl->stream_off[st]; k < tl->stream_off[st + 1]; k++) {
        uint32_t sp = tl->by_stream[k];
        FUZZ_CHECK (sp < tl->n_spans && tl->spans[sp].stream == st,
                    "per-stream index: span %u on the wrong stream", sp);
        FUZZ_CHECK (k == tl->stream_off[st]
                        || tl->spans[tl->by_stream[k - 1]].start_ns <= tl->spans[sp].start_ns,
                    "per-stream index of stream %u not sorted by start", st);
      }
  }
}

#endif
