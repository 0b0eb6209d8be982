/* ps-graph-load.c: the planscope JSON graph loader: one streaming pass over
 * the reader's tokens (no tree), the document and buffer objects, then name
 * resolution and the checks that need the whole document.  Node objects are
 * read in ps-graph-node.c, edges built in ps-graph-edges.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/dot/ps-dot-import.h"
#include "ps-json-load.h"

/* Diagnostics and token helpers */

int
ps__err (ps__loader *ld, uint32_t line, uint32_t col, const ps__key *key, const char *fmt, ...)
{
  if (ld->too_many)
    return PS_EINVAL;
  /* The JSON path: nodes[3].args[1].i32 (key names are short constants). */
  char path[160];
  if (ld->node_index != PS_NONE)
    snprintf (path, sizeof path, "nodes[%u]", ld->node_index);
  else if (ld->buffer_index != PS_NONE)
    snprintf (path, sizeof path, "buffers[%u]", ld->buffer_index);
  else
    path[0] = '\0';
  if (key) {
    size_t n = strlen (path);
    snprintf (path + n, sizeof path - n, "%s%s", n && key->name ? "." : "",
              key->name ? key->name : "");
    n = strlen (path);
    if (key->index >= 0)
      snprintf (path + n, sizeof path - n, "[%lld]", (long long) key->index);
    n = strlen (path);
    if (key->sub)
      snprintf (path + n, sizeof path - n, ".%s", key->sub);
  }
  char msg[768];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  ps_diag_error (ld->diag, line, col, "%s%s%s", path, path[0] ? ": " : "", msg);
  ld->errors++;
  if (ld->errors >= PS__MAX_ERRORS) {
    ps_diag_error (ld->diag, 0, 0, "too many errors; stopped");
    ld->too_many = true;
    return PS_EINVAL;
  }
  return 0;
}

int
ps__syntax (ps__loader *ld)
{
  if (!ld->syntax_reported) {
    ld->syntax_reported = true;
    const char *io = ld->io_failure ? ld->io_failure (ld->io_ctx) : NULL;
    if (io)
      ps_diag_error (ld->diag, 0, 0, "%s", io);
    else
      ps_diag_error (ld->diag, ld->r.error_line, ld->r.error_col, "%s", ld->r.error);
    ld->errors++;
  }
  return PS_ESYNTAX;
}

int
ps__next (ps__loader *ld)
{
  ps_json_token t = ps_json_next (&ld->r);
  if (t == PS_JSON_ERROR)
    return ps__syntax (ld);
  return (int) t;
}

int
ps__skip_current (ps__loader *ld)
{
  if (ps_json_skip_current (&ld->r) < 0)
    return ps__syntax (ld);
  return 0;
}

/* A description of the current token for "expected X, got Y" messages. */
const char *
ps__token_desc (ps_json_token t)
{
  switch (t) {
  case PS_JSON_OBJECT_BEGIN:
    return "an object";
  case PS_JSON_ARRAY_BEGIN:
    return "an array";
  case PS_JSON_STRING:
    return "a string";
  case PS_JSON_NUMBER:
    return "a number";
  case PS_JSON_TRUE:
  case PS_JSON_FALSE:
    return "a boolean";
  case PS_JSON_NULL:
    return "null";
  default:
    return "something else";
  }
}

/* Records "expected WHAT, got ..." for the current token and skips it. */
int
ps__type_error (ps__loader *ld, const ps__key *key, const char *what)
{
  int ret = ps__err (ld, ld->r.line, ld->r.col, key, "expected %s, got %s", what,
                     ps__token_desc (ld->r.token));
  if (ret < 0)
    return ret;
  return ps__skip_current (ld);
}

int
ps__get_int (ps__loader *ld, const ps__key *key, int64_t min, int64_t max, int64_t *out)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_NUMBER) {
    int ret = ps__type_error (ld, key, "an integer");
    return ret < 0 ? ret : 0;
  }
  int64_t v;
  bool in_range;
  if (r->is_int) {
    v = r->i64;
    in_range = v >= min && v <= max;
  } else if (r->num != floor (r->num)) {
    int ret = ps__err (ld, r->line, r->col, key, "%.17g is not an integer", r->num);
    return ret < 0 ? ret : 0;
  } else {
    /* An integral number written with a fraction or exponent (1e3, 4.0). */
    in_range = r->num >= (double) min && r->num <= (double) max && fabs (r->num) < 9.2e18;
    v = in_range ? (int64_t) r->num : 0;
  }
  if (!in_range) {
    char lit[40];
    if (r->is_int)
      snprintf (lit, sizeof lit, "%lld", (long long) r->i64);
    else
      snprintf (lit, sizeof lit, "%.17g", r->num);
    int ret = ps__err (ld, r->line, r->col, key, "%s is out of range (%lld to %lld)", lit,
                       (long long) min, (long long) max);
    return ret < 0 ? ret : 0;
  }
  *out = v;
  return 1;
}

int
ps__get_nonneg (ps__loader *ld, const ps__key *key, double *out)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_NUMBER) {
    int ret = ps__type_error (ld, key, "a number");
    return ret < 0 ? ret : 0;
  }
  if (!(r->num >= 0) || !isfinite (r->num)) {
    int ret = ps__err (ld, r->line, r->col, key, "%.17g is negative; expected a number >= 0",
                       r->num);
    return ret < 0 ? ret : 0;
  }
  *out = r->num;
  return 1;
}

int
ps__check_string (ps__loader *ld, const ps__key *key)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_STRING) {
    int ret = ps__type_error (ld, key, "a string");
    return ret < 0 ? ret : 0;
  }
  if (memchr (r->str, '\0', r->len)) {
    int ret = ps__err (ld, r->line, r->col, key, "a NUL character (\\u0000) is not allowed here");
    return ret < 0 ? ret : 0;
  }
  return 1;
}

int
ps__check_name (ps__loader *ld, const ps__key *key, const char *what)
{
  int ok = ps__check_string (ld, key);
  if (ok <= 0)
    return ok;
  ps_json_reader *r = &ld->r;
  if (r->len == 0 || r->len > PS_MAX_NAME) {
    int ret = r->len == 0
                ? ps__err (ld, r->line, r->col, key, "a %s name must not be empty", what)
                : ps__err (ld, r->line, r->col, key, "a %s name is longer than %u bytes", what,
                           (unsigned) PS_MAX_NAME);
    return ret < 0 ? ret : 0;
  }
  return 1;
}

/* Optimal string alignment distance (edits and adjacent transpositions),
 * giving up early at 3: only distances up to 2 matter. */
static int
edit_distance (const char *a, size_t la, const char *b, size_t lb)
{
  if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) > 2)
    return 3;
  int d[65][65];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = (int) i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = (int) j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int cost = a[i - 1] != b[j - 1];
      int v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v)
        v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v)
        v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

const char *
ps__suggest (const char *text, size_t len, const char *const *allowed, size_t n)
{
  const char *best = NULL;
  int best_d = 3;
  for (size_t i = 0; i < n; i++) {
    if (!allowed[i])
      continue;
    int d = edit_distance (text, len, allowed[i], strlen (allowed[i]));
    if (d < best_d) {
      best_d = d;
      best = allowed[i];
    }
  }
  return best;
}

/* Copies a JSON string into `out` for a message, escaping what would spoil
 * a one-line message and truncating long strings. */
void
ps__quote_text (char *out, size_t cap, const char *s, size_t len)
{
  size_t o = 0;
  for (size_t i = 0; i < len && o + 5 < cap; i++) {
    unsigned char c = (unsigned char) s[i];
    if (c < 0x20 || c == 0x7f)
      out[o++] = '?';
    else
      out[o++] = (char) c;
  }
  if (o + 5 >= cap && len > 0) {
    /* Drop the last bytes of an incomplete UTF-8 sequence, then mark the cut. */
    while (o > 0 && ((unsigned char) out[o - 1] & 0xc0) == 0x80)
      o--;
    if (o > 0 && ((unsigned char) out[o - 1] & 0x80))
      o--;
    memcpy (out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
}

int
ps__unknown (ps__loader *ld, uint32_t line, uint32_t col, const char *what, const char *text,
             const char *const *allowed, size_t n, const ps__key *key)
{
  const char *s = ps__suggest (text, strlen (text), allowed, n);
  if (s)
    return ps__err (ld, line, col, key, "unknown %s \"%s\"; did you mean \"%s\"?", what, text, s);
  return ps__err (ld, line, col, key, "unknown %s \"%s\"", what, text);
}

int
ps__get_enum (ps__loader *ld, const ps__key *key, const char *what, const char *const *names,
              size_t n, int *out)
{
  *out = -1;
  int ok = ps__check_string (ld, key);
  if (ok <= 0)
    return ok;
  ps_json_reader *r = &ld->r;
  for (size_t i = 0; i < n; i++)
    if (names[i] && names[i][0] == r->str[0] && strlen (names[i]) == r->len &&
        memcmp (names[i], r->str, r->len) == 0) {
      *out = (int) i;
      return 1;
    }
  char text[80];
  ps__quote_text (text, sizeof text, r->str, r->len);
  int ret = ps__unknown (ld, r->line, r->col, what, text, names, n, key);
  return ret < 0 ? ret : 0;
}

/* Copies the current token's string into the refpool. */
static int
refpool_add (ps__loader *ld, uint32_t *off)
{
  ps_json_reader *r = &ld->r;
  uint64_t need = (uint64_t) ld->refpool_len + r->len + 1;
  if (need >= UINT32_MAX)
    return PS_ELIMIT;
  if (need > ld->refpool_cap) {
    int ret = ps__grow ((void **) &ld->refpool, &ld->refpool_cap, need, 1, UINT32_MAX - 1);
    if (ret < 0)
      return ret;
  }
  memcpy (ld->refpool + ld->refpool_len, r->str, r->len + 1);
  *off = ld->refpool_len;
  ld->refpool_len += (uint32_t) r->len + 1;
  return 0;
}

int
ps__push_ref_at (ps__loader *ld, uint8_t field, uint32_t index, const ps__nref *name,
                 uint32_t *out)
{
  if (ld->n_refs == ld->cap_refs) {
    int ret = ps__grow ((void **) &ld->refs, &ld->cap_refs, (uint64_t) ld->n_refs + 1,
                        sizeof *ld->refs, UINT32_MAX - 1);
    if (ret < 0)
      return ret;
  }
  ld->refs[ld->n_refs] =
    (ps__ref){ name->name, name->line, name->col, ld->node_index, index, PS_NONE, field };
  *out = ld->n_refs++;
  return 0;
}

int
ps__push_ref (ps__loader *ld, uint8_t field, uint32_t index, uint32_t *out)
{
  ps__nref name = { 0, ld->r.line, ld->r.col };
  int ret = refpool_add (ld, &name.name);
  if (ret < 0)
    return ret;
  return ps__push_ref_at (ld, field, index, &name, out);
}

int
ps__buffer_ref (ps__loader *ld, const ps__key *key, ps__nref *out)
{
  out->name = PS_NONE;
  out->line = ld->r.line;
  out->col = ld->r.col;
  int ok = ps__check_name (ld, key, "buffer");
  if (ok <= 0)
    return ok;
  return refpool_add (ld, &out->name);
}

/* Buffers */

enum { BK_NAME, BK_BYTES, BK_EXTERNAL, BK_DTYPE, BK__COUNT };
static const char *const buffer_keys[BK__COUNT] = { "name", "bytes", "external", "dtype" };
static const char *const dtype_names[PS_DT__COUNT] = { "f32", "f16", "bf16", "i32", "u8" };

static int
key_index (const ps_json_reader *r, const char *const *keys, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (keys[i][0] == r->str[0] && strlen (keys[i]) == r->len &&
        memcmp (keys[i], r->str, r->len) == 0)
      return (int) i;
  return -1;
}

/* Records "duplicate key" for the current key and skips its value. */
int
ps__duplicate_key (ps__loader *ld, const char *key)
{
  int ret = ps__err (ld, ld->r.line, ld->r.col, NULL, "duplicate key \"%s\"", key);
  if (ret < 0)
    return ret;
  if (ps_json_skip_value (&ld->r) == PS_JSON_ERROR)
    return ps__syntax (ld);
  return 0;
}

static int
unknown_key_skip (ps__loader *ld, const char *const *allowed, size_t n)
{
  char text[80];
  ps__quote_text (text, sizeof text, ld->r.str, ld->r.len);
  int ret = ps__unknown (ld, ld->r.line, ld->r.col, "key", text, allowed, n, NULL);
  if (ret < 0)
    return ret;
  if (ps_json_skip_value (&ld->r) == PS_JSON_ERROR)
    return ps__syntax (ld);
  return 0;
}

static int
load_buffer (ps__loader *ld)
{
  ps_json_reader *r = &ld->r;
  ps_graph *g = ld->g;
  uint32_t line = r->line, col = r->col;
  uint32_t seen = 0;
  /* Name 0 is "": a buffer whose name is bad (reported) is kept under it,
   * so that buffer ids stay array indices. */
  ps_buffer b = { .name = 0, .dtype = PS_DT_F32, .bytes = 1, .line = line, .col = col };
  int t, ret;

  while ((t = ps__next (ld)) == PS_JSON_KEY) {
    int k = key_index (r, buffer_keys, BK__COUNT);
    if (k < 0) {
      if ((ret = unknown_key_skip (ld, buffer_keys, BK__COUNT)) < 0)
        return ret;
      continue;
    }
    if (seen & (1u << k)) {
      if ((ret = ps__duplicate_key (ld, buffer_keys[k])) < 0)
        return ret;
      continue;
    }
    seen |= 1u << k;
    if ((t = ps__next (ld)) < 0)
      return t;
    int ok = 0;
    int64_t v;
    switch (k) {
    case BK_NAME:
      ok = ps__check_name (ld, PS__KEY ("name"), "buffer");
      if (ok > 0)
        ok = ps__graph_intern (g, r->str, r->len, &b.name);
      break;
    case BK_BYTES:
      ok = ps__get_int (ld, PS__KEY ("bytes"), 1, (int64_t) PS_MAX_BUFFER_BYTES, &v);
      if (ok > 0)
        b.bytes = (uint64_t) v;
      break;
    case BK_EXTERNAL:
      if (t == PS_JSON_TRUE || t == PS_JSON_FALSE) {
        if (t == PS_JSON_TRUE)
          b.flags |= PS_BUF_EXTERNAL;
      } else {
        ok = ps__type_error (ld, PS__KEY ("external"), "true or false");
      }
      break;
    case BK_DTYPE: {
      int dt;
      ok = ps__get_enum (ld, PS__KEY ("dtype"), "dtype", dtype_names, PS_DT__COUNT, &dt);
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
      (ret = ps__err (ld, line, col, NULL, "missing required key \"name\"")) < 0)
    return ret;
  if (!(seen & (1u << BK_BYTES)) &&
      (ret = ps__err (ld, line, col, NULL, "missing required key \"bytes\"")) < 0)
    return ret;
  if (g->n_buffers >= PS_MAX_BUFFERS) {
    ps__err (ld, line, col, NULL, "too many buffers (limit %u)", (unsigned) PS_MAX_BUFFERS);
    return PS_ELIMIT;
  }
  if (g->n_buffers == ld->cap_buffers &&
      (ret = ps__grow ((void **) &g->buffers, &ld->cap_buffers, (uint64_t) g->n_buffers + 1,
                       sizeof *g->buffers, PS_MAX_BUFFERS)) < 0)
    return ret;
  g->buffers[g->n_buffers++] = b;
  return 0;
}

/* Reads an array of objects, calling `one` for each object. */
static int
load_array (ps__loader *ld, const ps__key *key, uint32_t *index, int (*one) (ps__loader *))
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_ARRAY_BEGIN) {
    int ret = ps__type_error (ld, key, "an array");
    return ret < 0 ? ret : 0;
  }
  int t, ret;
  uint32_t i = 0;
  while ((t = ps__next (ld)) != PS_JSON_ARRAY_END) {
    if (t < 0)
      return t;
    *index = i;
    if (t != PS_JSON_OBJECT_BEGIN) {
      ret = ps__err (ld, r->line, r->col, NULL, "expected an object, got %s", ps__token_desc (t));
      if (ret < 0 || (ret = ps__skip_current (ld)) < 0)
        return ret;
    } else if ((ret = one (ld)) < 0) {
      return ret;
    }
    if (ld->too_many)
      return PS_EINVAL;
    *index = PS_NONE;
    i++;
  }
  return 0;
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
ref_error (ps__loader *ld, const ps__ref *rf, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

static int
ref_error (ps__loader *ld, const ps__ref *rf, const char *fmt, ...)
{
  ps__key key = { field_name (rf->field), rf->index, NULL };
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
  int ret = ps__err (ld, rf->line, rf->col, &key, "%s", msg);
  ld->node_index = saved;
  return ret;
}

static int
duplicate_buffer (void *ctx, uint32_t i, uint32_t first)
{
  ps__loader *ld = ctx;
  const ps_graph *g = ld->g;
  ld->buffer_index = i;
  int ret = ps__err (ld, g->buffers[i].line, g->buffers[i].col, PS__KEY ("name"),
                     "duplicate buffer name \"%s\" (first at buffers[%u], line %u)",
                     ps_buffer_name (g, i), first, g->buffers[first].line);
  ld->buffer_index = PS_NONE;
  return ret;
}

static int
duplicate_node (void *ctx, uint32_t i, uint32_t first)
{
  ps__loader *ld = ctx;
  const ps_graph *g = ld->g;
  ld->node_index = i;
  int ret = ps__err (ld, g->nodes[i].line, g->nodes[i].col, PS__KEY ("name"),
                     "duplicate node name \"%s\" (first at nodes[%u], line %u)",
                     ps_node_name (g, i), first, g->nodes[first].line);
  ld->node_index = PS_NONE;
  return ret;
}

/* Reports the reads and writes that name no buffer. */
static int
access_errors (ps__loader *ld, const uint32_t *ids)
{
  const ps_graph *g = ld->g;
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
        ps__key key = { w ? "writes" : "reads", j - begin, NULL };
        if (j == cond)
          key = (ps__key){ "condition", -1, NULL };
        ret = ps__err (ld, ld->acc_line[j], ld->acc_col[j], &key, "unknown buffer \"%s\"",
                       ld->refpool + g->access[j]);
      }
    }
  }
  ld->node_index = PS_NONE;
  return ret;
}

/* Resolves every name: the maps of buffer and node names are built (which
 * finds duplicates), the reads and writes looked up in one batch, then the
 * refs.  Slots that held refpool offsets or ref indices get ids. */
static int
resolve_names (ps__loader *ld)
{
  ps_graph *g = ld->g;
  const uint32_t *bkeys = g->buffers ? &g->buffers[0].name : NULL;
  const uint32_t *nkeys = g->nodes ? &g->nodes[0].name : NULL;
  int ret = ps__strmap_build (&ld->buffer_map, g->strings, bkeys, sizeof *g->buffers,
                              g->n_buffers, 0, duplicate_buffer, ld);
  if (ret == 0)
    ret = ps__strmap_build (&ld->node_map, g->strings, nkeys, sizeof *g->nodes, g->n_nodes, 0,
                            duplicate_node, ld);
  if (ret < 0)
    return ret;

  uint32_t *ids = malloc (((size_t) g->n_access + 1) * sizeof *ids);
  if (!ids)
    return PS_ENOMEM;
  ps__strmap_find_many (&ld->buffer_map, g->strings, ld->refpool, g->access, g->n_access, ids);
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
    ps__ref *rf = &ld->refs[i];
    const char *name = ld->refpool + rf->name;
    size_t len = strlen (name);
    uint32_t h = ps__strmap_hash (name, len);
    if (rf->field == PS__FIELD_ARGS) {
      rf->id = ps__strmap_find (&ld->buffer_map, g->strings, name, len, h);
      if (rf->id == PS_NONE && (ret = ref_error (ld, rf, "unknown buffer \"%s\"", name)) < 0)
        return ret;
      continue;
    }
    uint32_t id = ps__strmap_find (&ld->node_map, g->strings, name, len, h);
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
mark_branches (ps__loader *ld)
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
          ret = ps__err (ld, g->nodes[v].line, g->nodes[v].col,
                         PS__KEY (branch ? "else" : "then"), "\"%s\" is listed twice",
                         ps_node_name (g, m));
        else if (branch && mark[m] == 2 * g->nodes[v].aux)
          ret = ps__err (ld, g->nodes[v].line, g->nodes[v].col, PS__KEY ("else"),
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
check_sizes (ps__loader *ld)
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
        ret = ps__err (ld, n->line, n->col, NULL,
                       "copies all %llu bytes of \"%s\" into \"%s\" of %llu bytes; give "
                       "\"bytes\"",
                       (unsigned long long) src_bytes, ps_buffer_name (g, src),
                       ps_buffer_name (g, dst), (unsigned long long) dst_bytes);
    } else if (n->bytes > src_bytes) {
      ret = ps__err (ld, n->line, n->col, PS__KEY ("bytes"),
                     "%llu is more than the %llu bytes of \"%s\"",
                     (unsigned long long) n->bytes, (unsigned long long) src_bytes,
                     ps_buffer_name (g, src));
    } else if (n->bytes > dst_bytes) {
      ret = ps__err (ld, n->line, n->col, PS__KEY ("bytes"),
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
load_node_cb (ps__loader *ld)
{
  return ps__load_node (ld);
}

static int
load_document (ps__loader *ld)
{
  ps_json_reader *r = &ld->r;
  ps_graph *g = ld->g;
  int t = ps__next (ld), ret;
  if (t < 0)
    return t;
  if (t != PS_JSON_OBJECT_BEGIN) {
    ps__err (ld, r->line, r->col, NULL,
             "a graph file must be a JSON object ({\"format\": \"planscope-graph\", ...}), not %s",
             ps__token_desc ((ps_json_token) t));
    return PS_EINVAL;
  }
  uint32_t line = r->line, col = r->col;
  uint32_t seen = 0;
  while ((t = ps__next (ld)) == PS_JSON_KEY) {
    int k = key_index (r, top_keys, TK__COUNT);
    if (k < 0) {
      if ((ret = unknown_key_skip (ld, top_keys, TK__COUNT)) < 0)
        return ret;
      continue;
    }
    if (seen & (1u << k)) {
      if ((ret = ps__duplicate_key (ld, top_keys[k])) < 0)
        return ret;
      continue;
    }
    seen |= 1u << k;
    if ((t = ps__next (ld)) < 0)
      return t;
    int ok = 0;
    switch (k) {
    case TK_FORMAT:
      ok = ps__check_string (ld, PS__KEY ("format"));
      if (ok > 0 && !(r->len == 15 && memcmp (r->str, "planscope-graph", 15) == 0)) {
        char text[80];
        ps__quote_text (text, sizeof text, r->str, r->len);
        ps__err (ld, r->line, r->col, PS__KEY ("format"),
                 "expected \"planscope-graph\", got \"%s\"", text);
        return PS_EINVAL;
      }
      if (ok == 0)
        return PS_EINVAL;
      break;
    case TK_VERSION:
      if (t != PS_JSON_NUMBER) {
        ps__type_error (ld, PS__KEY ("version"), "the integer 1");
        return PS_EINVAL;
      }
      if (!(r->num == 1)) {
        if (r->is_int)
          ps__err (ld, r->line, r->col, PS__KEY ("version"), "unsupported version %lld",
                   (long long) r->i64);
        else
          ps__err (ld, r->line, r->col, PS__KEY ("version"), "unsupported version %.17g", r->num);
        return PS_EINVAL;
      }
      break;
    case TK_NAME:
    case TK_DEVICE:
      ok = ps__check_string (ld, PS__KEY (top_keys[k]));
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
      ok = load_array (ld, PS__KEY ("buffers"), &ld->buffer_index, load_buffer);
      break;
    case TK_NODES: {
      uint32_t vline = r->line, vcol = r->col;
      ok = load_array (ld, PS__KEY ("nodes"), &ld->node_index, load_node_cb);
      if (ok == 0 && g->n_nodes == 0 && ld->errors == 0)
        ok = ps__err (ld, vline, vcol, PS__KEY ("nodes"), "a graph needs at least one node");
      break;
    }
    }
    if (ok < 0)
      return ok;
  }
  if (t < 0)
    return t;
  if ((t = ps__next (ld)) < 0)
    return t;

  static const int required[] = { TK_FORMAT, TK_VERSION, TK_NODES };
  for (size_t i = 0; i < sizeof required / sizeof *required; i++)
    if (!(seen & (1u << required[i])) &&
        (ret = ps__err (ld, line, col, NULL, "missing required key \"%s\"",
                        top_keys[required[i]])) < 0)
      return ret;
  return 0;
}

/* Loads from ld->r, which `ret` says was set up or not; closes it. */
static int
load (ps_graph *g, ps__loader *ld, int ret, const char *path, ps_diag *diag)
{
  ps_graph tmp;
  ps_graph_init (&tmp);
  ld->g = &tmp;
  ld->diag = diag;
  ld->node_index = PS_NONE;
  ld->buffer_index = PS_NONE;
  bool reader = ret == 0;

  /* Offset 0 of the pool is "", the name of a node whose name is bad. */
  uint32_t empty;
  if (ret == 0)
    ret = ps__graph_intern (&tmp, "", 0, &empty);
  if (ret == 0)
    ret = ps__scratch_new (ld);
  if (ret == 0)
    ret = ps__strmap_init (&ld->event_map, 64);
  if (ret == 0)
    ret = load_document (ld);
  /* Name references are resolved even after other errors, to report them
   * too; nothing is built from them then. */
  if (ret == 0)
    ret = resolve_names (ld);
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

  if (reader)
    ps_json_close (&ld->r);
  ps__scratch_free (ld);
  ps__strmap_free (&ld->buffer_map);
  ps__strmap_free (&ld->node_map);
  ps__strmap_free (&ld->event_map);
  free (ld->refs);
  free (ld->refpool);
  free (ld->acc_line);
  free (ld->acc_col);
  free (ld->after_pairs);

  if (ret == 0 && ld->errors)
    ret = PS_EINVAL;
  if (ret == PS_ENOMEM && !ld->errors)
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
ps_graph_load_json (ps_graph *g, const char *data, size_t len, const char *path, ps_diag *diag)
{
  /* A cudaGraphDebugDotPrint dump is recognised by its content. */
  if (ps__graph_is_dot (data, len))
    return ps__graph_load_dot (g, data, len, path, diag);
  ps__loader ld;
  memset (&ld, 0, sizeof ld);
  int ret = ps_json_init_mem (&ld.r, data ? data : "", data ? len : 0);
  return load (g, &ld, ret, path, diag);
}

int
ps__graph_load_stream (ps_graph *g, ps_json_read_fn read, void *ctx,
                       const char *(*failure) (void *ctx), const char *path, ps_diag *diag)
{
  ps__loader ld;
  memset (&ld, 0, sizeof ld);
  ld.io_failure = failure;
  ld.io_ctx = ctx;
  int ret = ps_json_init_stream (&ld.r, read, ctx);
  return load (g, &ld, ret, path, diag);
}
