/* ps-json-graph.c: the JSON graph loader (spec/graph-format.md): one pass
 * over the reader's tokens (no tree) reads the document and its buffer
 * objects (node objects in ps-json-node.c), then names are resolved and
 * the checks that need the whole document run; model/ps-graph-edges.c
 * builds the edges. */
#include "ps-json-load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "util/ps-job.h"

/* Buffers */

enum { BK_NAME, BK_BYTES, BK_EXTERNAL, BK_DTYPE, BK__COUNT };
static const char *const buffer_keys[BK__COUNT] = { "name", "bytes", "external", "dtype" };

/* The buffer key at the current token, or -1: the one candidate of its
 * length and first letter, then compared (there is one buffer object per
 * buffer of the graph). */
static int
buffer_key (const ps_json_reader *r)
{
  int k;
  switch (r->len) {
  case 4:
    k = BK_NAME;
    break;
  case 5:
    k = r->str[0] == 'b' ? BK_BYTES : BK_DTYPE;
    break;
  case 8:
    k = BK_EXTERNAL;
    break;
  default:
    return -1;
  }
  return memcmp (r->str, buffer_keys[k], r->len) == 0 ? k : -1;
}

static int
load_buffer (ps__json_loader *ld)
{
  ps_json_reader *r = &ld->r;
  ps_graph *g = ld->g;
  uint32_t line = r->line, col = r->col;
  uint32_t seen = 0;
  /* Name 0 is "": a buffer whose name is bad (reported) is kept under it,
   * so that buffer ids stay array indices. */
  ps_buffer b = { .name = 0, .dtype = PS_DT_F32, .bytes = 1, .line = line, .col = col };
  int t, ret;

  while ((t = ps__json_next (ld)) == PS_JSON_KEY) {
    int k = buffer_key (r);
    if (k < 0) {
      if ((ret = ps__json_unknown_key_skip (ld, buffer_keys, BK__COUNT)) < 0)
        return ret;
      continue;
    }
    if (seen & (1u << k)) {
      if ((ret = ps__json_duplicate_key (ld, buffer_keys[k])) < 0)
        return ret;
      continue;
    }
    seen |= 1u << k;
    if ((t = ps__json_next (ld)) < 0)
      return t;
    int ok = 0;
    int64_t v;
    switch (k) {
    case BK_NAME:
      ok = ps__json_check_name (ld, PS__JSON_KEY ("name"), "buffer");
      if (ok > 0)
        ok = ps__graph_intern (g, r->str, r->len, &b.name);
      break;
    case BK_BYTES:
      ok = ps__json_get_int (ld, PS__JSON_KEY ("bytes"), 1, (int64_t) PS_MAX_BUFFER_BYTES, &v);
      if (ok > 0)
        b.bytes = (uint64_t) v;
      break;
    case BK_EXTERNAL:
      if (t == PS_JSON_TRUE || t == PS_JSON_FALSE) {
        if (t == PS_JSON_TRUE)
          b.flags |= PS_BUF_EXTERNAL;
      } else {
        ok = ps__json_type_error (ld, PS__JSON_KEY ("external"), "true or false");
      }
      break;
    case BK_DTYPE: {
      int dt;
      ok = ps__json_get_enum (ld, PS__JSON_KEY ("dtype"), "dtype", ps_dtype_names.name,
                              PS_DT__COUNT, &dt);
      if (ok > 0)
        b.dtype = (uint8_t) dt;
      break;
    }
    }
    if (ok < 0)
      return ok;
  }
  if (t < 0)
    return t;

  if (!(seen & (1u << BK_NAME)) &&
      (ret = ps__json_err (ld, line, col, NULL, "missing required key \"name\"")) < 0)
    return ret;
  if (!(seen & (1u << BK_BYTES)) &&
      (ret = ps__json_err (ld, line, col, NULL, "missing required key \"bytes\"")) < 0)
    return ret;
  if (g->n_buffers >= PS_MAX_BUFFERS) {
    ps__json_err (ld, line, col, NULL, "too many buffers (limit %u)", (unsigned) PS_MAX_BUFFERS);
    return PS_ELIMIT;
  }
  if ((ret = ps_array_grow (&g->buffers, &ld->cap_buffers, (uint64_t) g->n_buffers + 1,
                            sizeof *g->buffers, PS_MAX_BUFFERS)) < 0)
    return ret;
  g->buffers[g->n_buffers++] = b;
  return 0;
}

/* Reads an array of objects, calling `one` for each object; with
 * `split`, a long array's second half on a second thread
 * (ps-json-split.c). */
static int
load_array (ps__json_loader *ld, const ps__json_key *key, uint32_t *index,
            int (*one) (ps__json_loader *), bool split)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_ARRAY_BEGIN) {
    int ret = ps__json_type_error (ld, key, "an array");
    return ret < 0 ? ret : 0;
  }
  if (split)
    ps__json_split_start (ld);
  ps__json_counts at;
  ps__json_presize_begin (ld, r->offset, &at);
  int t, ret = 0;
  uint32_t i = 0;
  while ((t = ps__json_next (ld)) != PS_JSON_ARRAY_END) {
    if (t < 0) {
      ret = t;
      break;
    }
    *index = i;
    if (t != PS_JSON_OBJECT_BEGIN) {
      ret = ps__json_err (ld, r->line, r->col, NULL, "expected an object, got %s",
                          ps__json_token_desc (t));
      if (ret < 0 || (ret = ps__json_skip_current (ld)) < 0)
        break;
    } else if ((ret = one (ld)) < 0) {
      break;
    }
    if (ld->too_many) {
      ret = PS_EINVAL;
      break;
    }
    *index = PS_NONE;
    i++;
    if (i == PS__JSON_PRESIZE_AT)
      ps__json_presize (ld, &at);
    /* The rest of the array read by the second thread. */
    if (split && r->offset + PS__JSON_SPLIT_WINDOW >= ld->split_at && ld->split &&
        ps__json_split_check (ld) > 0)
      break;
    /* A long load can be stopped by its caller between objects. */
    if (i % 4096 == 0 && ld->data_len) {
      ret = ps_diag_progress (ld->diag, "parse", (double) r->offset / (double) ld->data_len);
      if (ret < 0)
        break;
    }
  }
  if (split)
    ps__json_split_end (ld);
  return ret < 0 ? ret : 0;
}

/* Resolution and whole-document checks */

static const char *
field_name (uint8_t field)
{
  static const char *const names[] = { "reads", "writes", "condition", "args", "after", "then",
                                       "else" };
  return names[field];
}

static int
ref_error (ps__json_loader *ld, const ps__json_ref *rf, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

static int
ref_error (ps__json_loader *ld, const ps__json_ref *rf, const char *fmt, ...)
{
  ps__json_key key = { field_name (rf->field), rf->index, NULL };
  if (rf->field == PS__FIELD_CONDITION)
    key.index = -1;
  else if (rf->field == PS__FIELD_ARGS)
    key.sub = "buffer";
  char msg[600];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  uint32_t saved = ld->node_index;
  ld->node_index = rf->node;
  int ret = ps__json_err (ld, rf->line, rf->col, &key, "%s", msg);
  ld->node_index = saved;
  return ret;
}

static int
duplicate_buffer (void *ctx, uint32_t i, uint32_t first)
{
  ps__json_loader *ld = ctx;
  const ps_graph *g = ld->g;
  ld->buffer_index = i;
  int ret = ps__json_err (ld, g->buffers[i].line, g->buffers[i].col, PS__JSON_KEY ("name"),
                          "duplicate buffer name \"%s\" (first at buffers[%u], line %u)",
                          ps_buffer_name (g, i), first, g->buffers[first].line);
  ld->buffer_index = PS_NONE;
  return ret;
}

static int
duplicate_node (void *ctx, uint32_t i, uint32_t first)
{
  ps__json_loader *ld = ctx;
  const ps_graph *g = ld->g;
  ld->node_index = i;
  int ret = ps__json_err (ld, g->nodes[i].line, g->nodes[i].col, PS__JSON_KEY ("name"),
                          "duplicate node name \"%s\" (first at nodes[%u], line %u)",
                          ps_node_name (g, i), first, g->nodes[first].line);
  ld->node_index = PS_NONE;
  return ret;
}

/* Reports the reads and writes that name no buffer, where they stand. */
static int
access_errors (ps__json_loader *ld, const uint32_t *ids)
{
  const ps_graph *g = ld->g;
  ps_json_locator loc;
  /* Only keys into an input in memory are located from their offset. */
  ps_json_locator_init (&loc, ld->data ? ld->data : "", ld->data ? ld->data_len : 0);
  int ret = 0;
  for (uint32_t v = 0; v < g->n_nodes && ret == 0; v++) {
    const ps_node *n = &g->nodes[v];
    uint32_t cond = n->op == PS_OP_CONDITIONAL ? g->conds[n->aux].condition : PS_NONE;
    ld->node_index = v;
    for (int w = 0; w < 2 && ret == 0; w++) {
      uint32_t begin = w ? n->writes_begin : n->reads_begin;
      uint32_t count = w ? n->writes_count : n->reads_count;
      for (uint32_t j = begin; j < begin + count && ret == 0; j++) {
        if (ids[j] != PS_NONE)
          continue;
        ps__json_key key = { w ? "writes" : "reads", j - begin, NULL };
        if (j == cond)
          key = (ps__json_key){ "condition", -1, NULL };
        uint32_t line, col;
        ps__json_access_locate (ld, g->access[j], &loc, &line, &col);
        size_t len;
        const char *name = ps__json_access_name (ld, g->access[j], &len);
        ret = ps__json_err (ld, line, col, &key, "unknown buffer \"%.*s\"", (int) len, name);
      }
    }
  }
  ld->node_index = PS_NONE;
  return ret;
}

/* Graphs of at least RESOLVE_THREAD_MIN nodes build their node map on a
 * second thread while the buffer map is built, each in a table of its
 * own, and look up the second half of their reads and writes there while
 * the first half is looked up (1M-node layered graph: names resolved in
 * 0.13 s in turn, 0.09 s so). */
#define RESOLVE_THREAD_MIN 65536u

/* The node map, built on a second thread; its duplicates are kept to be
 * reported, in order, after the buffers'. */
typedef struct node_map_job {
  const ps_graph *g;
  ps_strmap map;
  uint32_t *dups; /* (index, first) pairs */
  uint32_t n_dups, cap_dups;
  int rc;
  ps__job job;
} node_map_job;

static int
keep_duplicate (void *ctx, uint32_t i, uint32_t first)
{
  node_map_job *j = ctx;
  /* More than a load reports stop the build, as reporting them would. */
  if (j->n_dups / 2 >= PS__JSON_MAX_ERRORS)
    return PS_EINVAL;
  if (PS_ARRAY_RESERVE (j->dups, j->cap_dups, (uint64_t) j->n_dups + 2) < 0)
    return PS_ENOMEM;
  j->dups[j->n_dups++] = i;
  j->dups[j->n_dups++] = first;
  return 0;
}

static void
node_map_main (void *arg)
{
  node_map_job *j = arg;
  const ps_graph *g = j->g;
  j->rc = ps__strmap_build (&j->map, g->strings, &g->nodes[0].name, sizeof *g->nodes,
                            g->n_nodes, 0, keep_duplicate, j);
}

/* Lookups of access keys on a second thread. */
typedef struct find_job {
  const ps__json_loader *ld;
  const uint32_t *keys;
  size_t n;
  uint32_t *out;
  ps__job job;
} find_job;

static void
find_main (void *arg)
{
  find_job *j = arg;
  const ps__json_loader *ld = j->ld;
  ps__strmap_find_many (&ld->buffer_map, ld->g->strings, ld->data, ld->refpool, PS__JSON_POOLED,
                        j->keys, j->n, j->out);
}

/* Resolves every name: the maps of buffer and node names are built (which
 * finds duplicates), the reads and writes looked up in one batch, then the
 * refs.  Slots that held refpool offsets or ref indices get ids.
 *
 * The two maps share one table, the largest scratch of a load: buffer
 * names are looked up first (the kernel buffer arguments' too, to report
 * later), then the node map is built in the same table.  Messages come in
 * the same order all the same: duplicate buffers, duplicate nodes, unknown
 * buffers of reads and writes, then the refs' in file order. */
static int
resolve_names (ps__json_loader *ld)
{
  ps_graph *g = ld->g;
  const uint32_t *bkeys = g->buffers ? &g->buffers[0].name : NULL;
  const uint32_t *nkeys = g->nodes ? &g->nodes[0].name : NULL;
  uint32_t most = g->n_buffers > g->n_nodes ? g->n_buffers : g->n_nodes;
  bool threads = g->n_nodes >= RESOLVE_THREAD_MIN;
  node_map_job nj;
  memset (&nj, 0, sizeof nj);
  nj.g = g;
  ps__job_start (&nj.job, node_map_main, &nj, threads);
  int ret = ps__strmap_reset (&ld->buffer_map, threads ? g->n_buffers : most);
  if (ret == 0)
    ret = ps__strmap_build (&ld->buffer_map, g->strings, bkeys, sizeof *g->buffers,
                            g->n_buffers, 0, duplicate_buffer, ld);
  uint32_t *ids = NULL;
  if (ret == 0 && !(ids = malloc (((size_t) g->n_access + 1) * sizeof *ids)))
    ret = PS_ENOMEM;
  if (ret < 0) {
    ps__job_finish (&nj.job);
    ps__strmap_free (&nj.map);
    free (nj.dups);
    return ret;
  }
  size_t half = threads ? g->n_access / 2 : g->n_access;
  find_job fj = { ld, NULL, g->n_access - half, ids + half, { 0 } };
  if (threads)
    fj.keys = g->access + half;
  ps__job_start (&fj.job, find_main, &fj, threads);
  ps__strmap_find_many (&ld->buffer_map, g->strings, ld->data, ld->refpool, PS__JSON_POOLED,
                        g->access, half, ids);
  ps__job_finish (&fj.job);
  for (uint32_t i = 0; i < ld->n_refs; i++) {
    ps__json_ref *rf = &ld->refs[i];
    if (rf->field == PS__FIELD_ARGS) {
      const char *name = ld->refpool + rf->name;
      size_t len = strlen (name);
      rf->id = ps__strmap_find (&ld->buffer_map, g->strings, name, len,
                                ps__strmap_hash (name, len));
    }
  }
  if (ps__job_finish (&nj.job)) {
    /* Its duplicates said now, after the buffers'. */
    ld->node_map = nj.map;
    ret = nj.rc == PS_ENOMEM ? PS_ENOMEM : 0;
    for (uint32_t i = 0; i < nj.n_dups && ret == 0; i += 2)
      ret = duplicate_node (ld, nj.dups[i], nj.dups[i + 1]);
    if (ret == 0 && nj.rc < 0)
      ret = nj.rc;
    free (nj.dups);
  } else {
    ld->node_map = ld->buffer_map;
    memset (&ld->buffer_map, 0, sizeof ld->buffer_map);
    ret = ps__strmap_build (&ld->node_map, g->strings, nkeys, sizeof *g->nodes, g->n_nodes, 0,
                            duplicate_node, ld);
  }
  if (ret < 0) {
    free (ids);
    return ret;
  }

  bool unknown = false;
  for (uint32_t j = 0; j < g->n_access; j++)
    unknown |= ids[j] == PS_NONE;
  if (unknown && (ret = access_errors (ld, ids)) < 0) {
    free (ids);
    return ret;
  }
  free (g->access);
  g->access = ids;
  ld->cap_access = g->n_access + 1;

  for (uint32_t i = 0; i < ld->n_refs; i++) {
    ps__json_ref *rf = &ld->refs[i];
    const char *name = ld->refpool + rf->name;
    if (rf->field == PS__FIELD_ARGS) {
      if (rf->id == PS_NONE && (ret = ref_error (ld, rf, "unknown buffer \"%s\"", name)) < 0)
        return ret;
      continue;
    }
    size_t len = strlen (name);
    uint32_t id = ps__strmap_find (&ld->node_map, g->strings, name, len,
                                   ps__strmap_hash (name, len));
    ret = 0;
    if (id == PS_NONE)
      ret = ref_error (ld, rf, "unknown node \"%s\"", name);
    else if (rf->field == PS__FIELD_AFTER && id == rf->node)
      ret = ref_error (ld, rf, "node \"%s\" cannot come after itself", name);
    else if (rf->field == PS__FIELD_AFTER && id > rf->node)
      ret = ref_error (ld, rf,
                       "\"%s\" is a later node; \"after\" must name a node that appears "
                       "earlier in \"nodes\"",
                       name);
    else if (rf->field != PS__FIELD_AFTER && id == rf->node)
      ret = ref_error (ld, rf, "conditional \"%s\" cannot be its own branch member", name);
    else if (rf->field != PS__FIELD_AFTER && id < rf->node)
      ret = ref_error (ld, rf,
                       "branch member \"%s\" is listed before its conditional; branch members "
                       "must appear later in \"nodes\"",
                       name);
    else
      rf->id = id;
    if (ret < 0)
      return ret;
  }
  if (ld->errors)
    return 0;

  for (uint32_t c = 0; c < g->n_conds; c++)
    if (g->conds[c].condition != PS_NONE)
      g->conds[c].condition = g->access[g->conds[c].condition];
  for (uint32_t i = 0; i < g->n_kargs; i++)
    if (g->kargs[i].kind == PS_KARG_BUFFER)
      g->kargs[i].v.buffer = ld->refs[g->kargs[i].v.buffer].id;
  for (uint32_t i = 0; i < g->n_cond_members; i++)
    g->cond_members[i] = ld->refs[g->cond_members[i]].id;
  for (uint32_t i = 0; i < ld->n_after; i += 2)
    ld->after_pairs[i] = ld->refs[ld->after_pairs[i]].id;
  return 0;
}

/* Marks branch members (ps_node.cond and the IN_THEN/IN_ELSE flags) and
 * rejects a node listed twice by one conditional. */
static int
mark_branches (ps__json_loader *ld)
{
  ps_graph *g = ld->g;
  if (g->n_conds == 0)
    return 0;
  uint32_t *mark = malloc ((size_t) g->n_nodes * sizeof *mark);
  if (!mark)
    return PS_ENOMEM;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    mark[v] = PS_NONE;
  int ret = 0;
  for (uint32_t v = 0; v < g->n_nodes && ret == 0; v++) {
    if (g->nodes[v].op != PS_OP_CONDITIONAL)
      continue;
    const ps_cond *c = &g->conds[g->nodes[v].aux];
    for (int branch = 0; branch < 2 && ret == 0; branch++) {
      uint32_t begin = branch ? c->else_begin : c->then_begin;
      uint32_t count = branch ? c->else_count : c->then_count;
      for (uint32_t i = 0; i < count && ret == 0; i++) {
        uint32_t m = g->cond_members[begin + i];
        ps_node *n = &g->nodes[m];
        ld->node_index = v;
        if (mark[m] == 2 * (uint64_t) g->nodes[v].aux + (uint32_t) branch)
          ret = ps__json_err (ld, g->nodes[v].line, g->nodes[v].col,
                              PS__JSON_KEY (branch ? "else" : "then"), "\"%s\" is listed twice",
                              ps_node_name (g, m));
        else if (branch && mark[m] == 2 * g->nodes[v].aux)
          ret = ps__json_err (ld, g->nodes[v].line, g->nodes[v].col, PS__JSON_KEY ("else"),
                         "\"%s\" is in both the then and the else branch", ps_node_name (g, m));
        mark[m] = 2 * g->nodes[v].aux + (uint32_t) branch;
        n->flags |= branch ? PS_NODE_IN_ELSE : PS_NODE_IN_THEN;
        n->cond = v;
      }
    }
  }
  ld->node_index = PS_NONE;
  free (mark);
  return ret;
}

/* Byte counts of copies and sets, which need the buffer sizes. */
static int
check_sizes (ps__json_loader *ld)
{
  ps_graph *g = ld->g;
  int ret = 0;
  for (uint32_t v = 0; v < g->n_nodes && ret == 0; v++) {
    ps_node *n = &g->nodes[v];
    if (n->op != PS_OP_MEMCPY && n->op != PS_OP_MEMSET)
      continue;
    uint32_t src = n->reads_count ? g->access[n->reads_begin] : PS_NONE;
    uint32_t dst = n->writes_count ? g->access[n->writes_begin] : PS_NONE;
    uint64_t src_bytes = src != PS_NONE ? g->buffers[src].bytes : UINT64_MAX;
    uint64_t dst_bytes = dst != PS_NONE ? g->buffers[dst].bytes : UINT64_MAX;
    ld->node_index = v;
    if (n->bytes == 0) {
      n->bytes = src != PS_NONE ? src_bytes : dst_bytes;
      if (n->bytes > dst_bytes)
        ret = ps__json_err (ld, n->line, n->col, NULL,
                            "copies all %llu bytes of \"%s\" into \"%s\" of %llu bytes; give "
                            "\"bytes\"",
                            (unsigned long long) src_bytes, ps_buffer_name (g, src),
                            ps_buffer_name (g, dst), (unsigned long long) dst_bytes);
    } else if (n->bytes > src_bytes) {
      ret = ps__json_err (ld, n->line, n->col, PS__JSON_KEY ("bytes"),
                          "%llu is more than the %llu bytes of \"%s\"",
                          (unsigned long long) n->bytes, (unsigned long long) src_bytes,
                          ps_buffer_name (g, src));
    } else if (n->bytes > dst_bytes) {
      ret = ps__json_err (ld, n->line, n->col, PS__JSON_KEY ("bytes"),
                          "%llu is more than the %llu bytes of \"%s\"",
                          (unsigned long long) n->bytes, (unsigned long long) dst_bytes,
                          ps_buffer_name (g, dst));
    }
  }
  ld->node_index = PS_NONE;
  return ret;
}

/* Gives back the slack of arrays grown by doubling. */
static void
shrink (void **p, size_t n, size_t elem)
{
  if (n == 0)
    return;
  void *np = realloc (*p, n * elem);
  if (np)
    *p = np;
}

/* The document */

enum { TK_FORMAT, TK_VERSION, TK_NAME, TK_DEVICE, TK_BUFFERS, TK_NODES, TK__COUNT };
static const char *const top_keys[TK__COUNT] = { "format", "version", "name",
                                                 "device", "buffers", "nodes" };

static int
load_node_cb (ps__json_loader *ld)
{
  return ps__json_load_node (ld);
}

static int
load_document (ps__json_loader *ld)
{
  ps_json_reader *r = &ld->r;
  ps_graph *g = ld->g;
  int t = ps__json_next (ld), ret;
  if (t < 0)
    return t;
  if (t != PS_JSON_OBJECT_BEGIN) {
    ps__json_err (ld, r->line, r->col, NULL,
             "a graph file must be a JSON object ({\"format\": \"planscope-graph\", ...}), not %s",
             ps__json_token_desc ((ps_json_token) t));
    return PS_EINVAL;
  }
  uint32_t line = r->line, col = r->col;
  uint32_t seen = 0;
  while ((t = ps__json_next (ld)) == PS_JSON_KEY) {
    int k = ps__json_key_index (r, top_keys, TK__COUNT);
    if (k < 0) {
      if ((ret = ps__json_unknown_key_skip (ld, top_keys, TK__COUNT)) < 0)
        return ret;
      continue;
    }
    if (seen & (1u << k)) {
      if ((ret = ps__json_duplicate_key (ld, top_keys[k])) < 0)
        return ret;
      continue;
    }
    seen |= 1u << k;
    if ((t = ps__json_next (ld)) < 0)
      return t;
    int ok = 0;
    switch (k) {
    case TK_FORMAT:
      ok = ps__json_check_string (ld, PS__JSON_KEY ("format"));
      if (ok > 0 && !(r->len == 15 && memcmp (r->str, "planscope-graph", 15) == 0)) {
        char text[80];
        ps_quote_text (text, sizeof text, r->str, r->len);
        ps__json_err (ld, r->line, r->col, PS__JSON_KEY ("format"),
                      "expected \"planscope-graph\", got \"%s\"", text);
        return PS_EINVAL;
      }
      if (ok == 0)
        return PS_EINVAL;
      break;
    case TK_VERSION:
      if (t != PS_JSON_NUMBER) {
        ps__json_type_error (ld, PS__JSON_KEY ("version"), "the integer 1");
        return PS_EINVAL;
      }
      if (!(r->num == 1)) {
        if (r->is_int)
          ps__json_err (ld, r->line, r->col, PS__JSON_KEY ("version"), "unsupported version %lld",
                        (long long) r->i64);
        else
          ps__json_err (ld, r->line, r->col, PS__JSON_KEY ("version"), "unsupported version %.17g",
                        r->num);
        return PS_EINVAL;
      }
      break;
    case TK_NAME:
    case TK_DEVICE:
      ok = ps__json_check_string (ld, PS__JSON_KEY (top_keys[k]));
      if (ok > 0) {
        char *s = malloc (r->len + 1);
        if (!s)
          return PS_ENOMEM;
        memcpy (s, r->str, r->len + 1);
        s[r->len] = '\0';
        if (k == TK_NAME) {
          free (g->name);
          g->name = s;
        } else {
          free (g->device);
          g->device = s;
        }
      }
      break;
    case TK_BUFFERS:
      ps__json_split_start (ld);
      ok = load_array (ld, PS__JSON_KEY ("buffers"), &ld->buffer_index, load_buffer, false);
      break;
    case TK_NODES: {
      uint32_t vline = r->line, vcol = r->col;
      ok = load_array (ld, PS__JSON_KEY ("nodes"), &ld->node_index, load_node_cb, true);
      if (ok == 0 && g->n_nodes == 0 && ld->errors == 0)
        ok = ps__json_err (ld, vline, vcol, PS__JSON_KEY ("nodes"),
                           "a graph needs at least one node");
      break;
    }
    }
    if (ok < 0)
      return ok;
  }
  if (t < 0)
    return t;
  if ((t = ps__json_next (ld)) < 0)
    return t;

  static const int required[] = { TK_FORMAT, TK_VERSION, TK_NODES };
  for (size_t i = 0; i < sizeof required / sizeof *required; i++)
    if (!(seen & (1u << required[i])) &&
        (ret = ps__json_err (ld, line, col, NULL, "missing required key \"%s\"",
                             top_keys[required[i]])) < 0)
      return ret;
  return 0;
}

/* Loads from ld->r, which `ret` says was set up or not; closes it. */
static int
load (ps_graph *g, ps__json_loader *ld, int ret, const char *path, ps_diag *diag)
{
  ps_graph tmp;
  ps_graph_init (&tmp);
  ld->g = &tmp;
  ld->diag = diag;
  ld->node_index = PS_NONE;
  ld->buffer_index = PS_NONE;
  ld->split_at = UINT64_MAX;
  bool reader = ret == 0;

  /* Offset 0 of the pool is "", the name of a node whose name is bad. */
  uint32_t empty;
  if (ret == 0)
    ret = ps__graph_intern (&tmp, "", 0, &empty);
  if (ret == 0)
    ret = ps__json_scratch_new (ld);
  if (ret == 0)
    ret = ps__strmap_init (&ld->event_map, 64);
  if (ret == 0)
    ret = ps__strmap_init (&ld->function_map, 64);
  if (ret == 0)
    ret = load_document (ld);
  ps__json_split_end (ld);
  /* Name references are resolved even after other errors, to report them
   * too; nothing is built from them then.  The maps go at once, before the
   * edges are built: they are the loader's largest scratch. */
  if (ret == 0)
    ret = resolve_names (ld);
  ps__strmap_free (&ld->buffer_map);
  ps__strmap_free (&ld->node_map);
  if (ret == 0 && !ld->errors)
    ret = mark_branches (ld);
  if (ret == 0 && !ld->errors)
    ret = check_sizes (ld);
  if (ret == 0 && !ld->errors) {
    shrink ((void **) &tmp.nodes, tmp.n_nodes, sizeof *tmp.nodes);
    shrink ((void **) &tmp.buffers, tmp.n_buffers, sizeof *tmp.buffers);
    shrink ((void **) &tmp.kernels, tmp.n_kernels, sizeof *tmp.kernels);
    shrink ((void **) &tmp.access, tmp.n_access, sizeof *tmp.access);
    ret = ps__graph_build_edges (&tmp, ld->after_pairs, ld->n_after / 2, diag);
  }
  if (ret == 0 && !ld->errors) {
    if (!tmp.name)
      tmp.name = strdup ("");
    tmp.path = strdup (path ? path : "");
    if (!tmp.name || !tmp.path)
      ret = PS_ENOMEM;
  }

  /* The reader's own message already says it ran out of memory. */
  bool reader_said = ld->syntax_reported && ps_json_error_status (&ld->r) == PS_ENOMEM;
  if (reader)
    ps_json_close (&ld->r);
  ps__json_scratch_free (ld);
  ps__strmap_free (&ld->buffer_map);
  ps__strmap_free (&ld->node_map);
  ps__strmap_free (&ld->event_map);
  ps__strmap_free (&ld->function_map);
  free (ld->refs);
  free (ld->refpool);
  free (ld->after_pairs);

  if (ret == 0 && ld->errors)
    ret = PS_EINVAL;
  /* Out of memory is said even after errors in the file: those are not
   * why the load stopped. */
  if (ret == PS_ENOMEM && !reader_said)
    ps_diag_error (diag, 0, 0, "out of memory while loading the graph");
  else if (ret < 0 && !ld->errors)
    ps_diag_error (diag, 0, 0, "%s", ps_strerror (ret));
  if (ret < 0) {
    ps_graph_free (&tmp);
    ps_graph_init (g);
    return ret;
  }
  *g = tmp;
  return 0;
}

int
ps__json_load_graph_stream (ps_graph *g, ps_json_read_fn read, void *ctx, size_t size_hint,
                            const char *path, ps_diag *diag)
{
  ps__json_loader ld;
  memset (&ld, 0, sizeof ld);
  ld.data_len = size_hint;
  int ret = ps_json_init_stream (&ld.r, read, ctx);
  return load (g, &ld, ret, path, diag);
}

int
ps__json_load_graph (ps_graph *g, const char *data, size_t len, const char *path, ps_diag *diag)
{
  ps__json_loader ld;
  memset (&ld, 0, sizeof ld);
  ld.data = data ? data : "";
  ld.data_len = data ? len : 0;
  int ret = ps_json_init_mem (&ld.r, ld.data, ld.data_len);
  return load (g, &ld, ret, path, diag);
}
