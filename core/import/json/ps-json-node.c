/* ps-json-node.c: reading and validating one node object of a graph file.
 *
 * Keys may come in any order, so values are first kept in the loader's
 * scratch node and checked against the node's op when the object ends;
 * then the node is appended to the graph's arrays. */
#include "ps-json-load.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

/* Names of node keys, indexed by PS__NK_*; each padded with NULs to 16
 * bytes, so that node_key compares a key in two words. */
#define KEY_PAD 16
static const char node_keys[PS__NK__COUNT][KEY_PAD] = {
  "name",     "op",     "reads",         "writes", "after",      "stream",
  "cost_ns",  "function", "grid",        "block",  "smem",       "fusible",
  "impl",     "params", "module",        "args",   "flops",      "traffic_bytes",
  "dir",      "src_device", "dst_device", "bytes", "value",      "label",
  "event",    "condition", "then",       "else",   "assume",
};

#define BIT(k) (1u << (k))
#define COMMON_KEYS                                                                          \
  (BIT (PS__NK_NAME) | BIT (PS__NK_OP) | BIT (PS__NK_READS) | BIT (PS__NK_WRITES) |           \
   BIT (PS__NK_AFTER) | BIT (PS__NK_STREAM) | BIT (PS__NK_COST_NS))

/* The keys each op allows, indexed by ps_op (the ops of the JSON format). */
static const uint32_t op_keys[PS_OP__FILE_COUNT] = {
  [PS_OP_KERNEL] = COMMON_KEYS | BIT (PS__NK_FUNCTION) | BIT (PS__NK_GRID) | BIT (PS__NK_BLOCK) |
                   BIT (PS__NK_SMEM) | BIT (PS__NK_FUSIBLE) | BIT (PS__NK_IMPL) |
                   BIT (PS__NK_PARAMS) | BIT (PS__NK_MODULE) | BIT (PS__NK_ARGS) |
                   BIT (PS__NK_FLOPS) | BIT (PS__NK_TRAFFIC_BYTES),
  [PS_OP_MEMCPY] = COMMON_KEYS | BIT (PS__NK_DIR) | BIT (PS__NK_SRC_DEVICE) |
                   BIT (PS__NK_DST_DEVICE) | BIT (PS__NK_BYTES),
  [PS_OP_MEMSET] = COMMON_KEYS | BIT (PS__NK_BYTES) | BIT (PS__NK_VALUE),
  [PS_OP_HOST] = COMMON_KEYS | BIT (PS__NK_LABEL),
  [PS_OP_EVENT_RECORD] = COMMON_KEYS | BIT (PS__NK_EVENT),
  [PS_OP_EVENT_WAIT] = COMMON_KEYS | BIT (PS__NK_EVENT),
  [PS_OP_BARRIER] = COMMON_KEYS,
  [PS_OP_CONDITIONAL] = COMMON_KEYS | BIT (PS__NK_CONDITION) | BIT (PS__NK_THEN) |
                        BIT (PS__NK_ELSE) | BIT (PS__NK_ASSUME),
};

static const char *const param_names[3] = { "alpha", "beta", "value" };
static const char *const karg_names[] = { "buffer", "i32", "i64", "f32", "f64" };

/* A node key's slot in the scratch's table of keys: a hash of its length
 * and first two bytes (a key's str has 16 readable bytes) that no two node
 * keys share, so that a key is found with one load and one compare, and no
 * branch on its letters: keys come in any order, which such branches
 * mispredict. */
static inline unsigned
key_slot (const char *s, size_t len)
{
  return ((unsigned) len * 2 + (unsigned) (unsigned char) s[0] * 8 + (unsigned char) s[1])
         & (PS__JSON_KEY_SLOTS - 1);
}

int
ps__json_scratch_new (ps__json_loader *ld)
{
  ps__json_node_scratch *ns = calloc (1, sizeof *ns);
  if (!ns)
    return PS_ENOMEM;
  memset (ns->key_of_slot, -1, sizeof ns->key_of_slot);
  for (int k = 0; k < PS__NK__COUNT; k++) {
    ns->key_len[k] = (uint8_t) strlen (node_keys[k]);
    unsigned slot = key_slot (node_keys[k], ns->key_len[k]);
    /* The hash is chosen so: tests load every key. */
    if (ns->key_of_slot[slot] >= 0)
      abort ();
    ns->key_of_slot[slot] = (int8_t) k;
  }
  ld->ns = ns;
  return 0;
}

void
ps__json_scratch_free (ps__json_loader *ld)
{
  ps__json_node_scratch *ns = ld->ns;
  if (!ns)
    return;
  free (ns->reads.v);
  free (ns->writes.v);
  free (ns->after.v);
  free (ns->then_.v);
  free (ns->else_.v);
  free (ns->args);
  free (ns);
  ld->ns = NULL;
}

/* Byte compare of short strings, inlined (memcmp would be a library call
 * per key, and keys are the most frequent tokens of a graph file). */
static inline bool
same (const char *a, const char *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

/* s[0, n) == pad[0, n) for n < KEY_PAD, where s and pad both have KEY_PAD
 * readable bytes (a key's str has 16, see ps-json.h): two words, masked to
 * n bytes. */
static inline bool
same_padded (const char *s, const char *pad, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t a[2], b[2];
  memcpy (a, s, 16);
  memcpy (b, pad, 16);
  uint64_t m0 = n >= 8 ? ~(uint64_t) 0 : ((uint64_t) 1 << (8 * n)) - 1;
  uint64_t m1 = n <= 8 ? 0 : ((uint64_t) 1 << (8 * (n - 8))) - 1;
  return (((a[0] ^ b[0]) & m0) | ((a[1] ^ b[1]) & m1)) == 0;
#else
  return same (s, pad, n);
#endif
}

static int
node_key (const ps__json_node_scratch *ns, const ps_json_reader *r)
{
  if (r->len < 2 || r->len >= KEY_PAD)
    return -1;
  int k = ns->key_of_slot[key_slot (r->str, r->len)];
  return k >= 0 && ns->key_len[k] == r->len && same_padded (r->str, node_keys[k], r->len) ? k : -1;
}

/* The value named by the current token among values [first, count) of a
 * name table; -1 when it is none of them. */
static int
enum_index (const ps_json_reader *r, const ps_names *t, uint32_t first, uint32_t count)
{
  for (uint32_t i = first; i < count; i++)
    if (t->len[i] == r->len && t->name[i][0] == r->str[0] && same (t->name[i], r->str, r->len))
      return (int) i;
  return -1;
}

static void
scratch_reset (ps__json_node_scratch *ns, uint32_t line, uint32_t col)
{
  ns->seen = 0;
  ns->line = line;
  ns->col = col;
  ns->op = ns->impl = ns->dir = -1;
  ns->assume = PS_ASSUME_BOTH;
  ns->fusible = false;
  ns->stream = ns->src_device = ns->dst_device = -1;
  ns->cost_ns = 0;
  ns->bytes = 0;
  ns->value = 0;
  ns->function = ns->module = ns->label = PS_NONE;
  for (int i = 0; i < 3; i++)
    ns->grid[i] = ns->block[i] = 1;
  ns->smem = 0;
  ns->param[0] = 1;
  ns->param[1] = 0;
  ns->param[2] = 0;
  ns->params_seen = 0;
  ns->flops = ns->traffic_bytes = -1;
  ns->condition = PS_NONE;
  ns->name = 0;
  ns->event_len = 0;
  ns->reads.n = ns->writes.n = ns->after.n = ns->then_.n = ns->else_.n = 0;
  ns->n_args = 0;
  ns->n_unknown = 0;
}

/* Values */

/* grid and block: an integer or an array of 1 to 3 integers, each >= 1
 * and within CUDA's limits for every GPU since compute capability 3.0:
 * so that a launch that cannot run is refused here, located, and not by
 * cuLaunchKernel. */
static const int64_t grid_max[3] = { PS_MAX_GRID_DIM, 65535, 65535 };
static const int64_t block_max[3] = { 1024, 1024, 64 };

static int
load_dim (ps__json_loader *ld, const char *key, const int64_t max[3], uint32_t out[3])
{
  ps_json_reader *r = &ld->r;
  int64_t v;
  int ok;
  if (r->token == PS_JSON_NUMBER) {
    ok = ps__json_get_int (ld, PS__JSON_KEY (key), 1, max[0], &v);
    if (ok > 0)
      out[0] = (uint32_t) v;
    return ok < 0 ? ok : 0;
  }
  if (r->token != PS_JSON_ARRAY_BEGIN) {
    ok = ps__json_type_error (ld, PS__JSON_KEY (key), "an integer or an array of 1 to 3 integers");
    return ok < 0 ? ok : 0;
  }
  uint32_t line = r->line, col = r->col;
  int t, i = 0;
  while ((t = ps__json_next (ld)) != PS_JSON_ARRAY_END) {
    if (t < 0)
      return t;
    if (i == 3 && (ok = ps__json_err (ld, r->line, r->col, PS__JSON_KEY (key),
                                      "has more than 3 components")) < 0)
      return ok;
    if (i >= 3) {
      if ((ok = ps__json_skip_current (ld)) < 0)
        return ok;
    } else {
      ok = ps__json_get_int (ld, &(ps__json_key){ key, i, NULL }, 1, max[i], &v);
      if (ok < 0)
        return ok;
      if (ok > 0)
        out[i] = (uint32_t) v;
    }
    i++;
  }
  if (i == 0 &&
      (ok = ps__json_err (ld, line, col, PS__JSON_KEY (key), "must have 1 to 3 components")) < 0)
    return ok;
  return 0;
}

/* Calls `item` for every element of an array (current token its `[`). */
static int
load_list (ps__json_loader *ld, const char *key,
           int (*item) (ps__json_loader *, const ps__json_key *, void *), void *ctx)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_ARRAY_BEGIN) {
    int ret = ps__json_type_error (ld, PS__JSON_KEY (key), "an array");
    return ret < 0 ? ret : 0;
  }
  int t, ret;
  uint32_t i = 0;
  while ((t = ps__json_next (ld)) != PS_JSON_ARRAY_END) {
    if (t < 0)
      return t;
    if ((ret = item (ld, &(ps__json_key){ key, i, NULL }, ctx)) < 0)
      return ret;
    if (ld->too_many)
      return PS_EINVAL;
    i++;
  }
  return 0;
}

static int
buffer_item (ps__json_loader *ld, const ps__json_key *key, void *ctx)
{
  ps__json_u32vec *vec = ctx;
  uint32_t ref;
  int ret = ps__json_buffer_ref (ld, key, &ref);
  if (ret < 0 || ref == PS_NONE)
    return ret;
  if (vec->n == vec->cap &&
      (ret = ps_array_grow (&vec->v, &vec->cap, (uint64_t) vec->n + 1, sizeof *vec->v,
                            PS_ARRAY_MAX)) < 0)
    return ret;
  vec->v[vec->n++] = ref;
  return 0;
}

/* A node name in after, then or else: resolved when the whole document is
 * read, since branch members come later (and an `after` naming a later
 * node deserves a better message than "unknown"). */
static int
node_item (ps__json_loader *ld, const ps__json_key *key, void *ctx)
{
  ps__json_u32vec *vec = ctx;
  ps__json_node_scratch *ns = ld->ns;
  int ok = ps__json_check_name (ld, key, "node");
  if (ok <= 0)
    return ok;
  uint8_t field = vec == &ns->after ? PS__FIELD_AFTER
                  : vec == &ns->then_ ? PS__FIELD_THEN
                                      : PS__FIELD_ELSE;
  uint32_t ref;
  int ret = ps__json_push_ref (ld, field, (uint32_t) key->index, &ref);
  if (ret < 0)
    return ret;
  return ps__json_u32vec_push (vec, ref);
}

static int
arg_item (ps__json_loader *ld, const ps__json_key *key, void *ctx)
{
  ps_json_reader *r = &ld->r;
  ps__json_node_scratch *ns = ld->ns;
  int ret;
  if (r->token != PS_JSON_OBJECT_BEGIN) {
    ret = ps__json_type_error (ld, key, "an object such as {\"buffer\": NAME} or {\"i32\": N}");
    return ret < 0 ? ret : 0;
  }
  uint32_t line = r->line, col = r->col;
  int t, n_keys = 0;
  while ((t = ps__json_next (ld)) == PS_JSON_KEY) {
    if (++n_keys > 1) {
      if (n_keys == 2 &&
          (ret = ps__json_err (ld, r->line, r->col, key, "an argument has exactly one key")) < 0)
        return ret;
      if (ps_json_skip_value (r) == PS_JSON_ERROR)
        return ps__json_syntax (ld);
      continue;
    }
    int kind = -1;
    for (int i = 0; i < 5; i++)
      if (strlen (karg_names[i]) == r->len && memcmp (karg_names[i], r->str, r->len) == 0)
        kind = i;
    if (kind < 0) {
      char text[80];
      ps_quote_text (text, sizeof text, r->str, r->len);
      if ((ret = ps__json_unknown (ld, r->line, r->col, "argument kind", text, karg_names, 5,
                                   key)) < 0)
        return ret;
      if (ps_json_skip_value (r) == PS_JSON_ERROR)
        return ps__json_syntax (ld);
      continue;
    }
    if ((t = ps__json_next (ld)) < 0)
      return t;
    ps__json_key sub = { key->name, key->index, karg_names[kind] };
    ps_karg a = { .kind = (uint8_t) kind };
    int64_t v;
    int ok = 0;
    switch (kind) {
    case PS_KARG_BUFFER:
      a.v.buffer = PS_NONE;
      ok = ps__json_check_name (ld, &sub, "buffer");
      if (ok > 0)
        ok = ps__json_push_ref (ld, PS__FIELD_ARGS, (uint32_t) key->index, &a.v.buffer);
      break;
    case PS_KARG_I32:
      ok = ps__json_get_int (ld, &sub, INT32_MIN, INT32_MAX, &v);
      a.v.i = v;
      break;
    case PS_KARG_I64:
      ok = ps__json_get_int (ld, &sub, INT64_MIN, INT64_MAX, &v);
      a.v.i = v;
      break;
    case PS_KARG_F32:
    case PS_KARG_F64:
      if (t != PS_JSON_NUMBER) {
        ok = ps__json_type_error (ld, &sub, "a number");
      } else if (kind == PS_KARG_F32 && fabs (r->num) > FLT_MAX) {
        ok = ps__json_err (ld, r->line, r->col, &sub, "%.17g is out of range for f32", r->num);
      } else {
        a.v.f = r->num;
      }
      break;
    }
    if (ok < 0)
      return ok;
    if (ns->n_args == ns->cap_args &&
        (ret = ps_array_grow (&ns->args, &ns->cap_args, (uint64_t) ns->n_args + 1,
                              sizeof *ns->args, PS_ARRAY_MAX)) < 0)
      return ret;
    ns->args[ns->n_args++] = a;
  }
  if (t < 0)
    return t;
  if (n_keys == 0)
    return ps__json_err (ld, line, col, key,
                         "an argument is one of {\"buffer\": NAME}, {\"i32\": N}, {\"i64\": N}, "
                         "{\"f32\": X} or {\"f64\": X}");
  return 0;
}

static int
load_params (ps__json_loader *ld)
{
  ps_json_reader *r = &ld->r;
  ps__json_node_scratch *ns = ld->ns;
  int t, ret;
  if (r->token != PS_JSON_OBJECT_BEGIN) {
    ret = ps__json_type_error (ld, PS__JSON_KEY ("params"), "an object");
    return ret < 0 ? ret : 0;
  }
  while ((t = ps__json_next (ld)) == PS_JSON_KEY) {
    int p = -1;
    for (int i = 0; i < 3; i++)
      if (strlen (param_names[i]) == r->len && memcmp (param_names[i], r->str, r->len) == 0)
        p = i;
    if (p < 0) {
      char text[80];
      ps_quote_text (text, sizeof text, r->str, r->len);
      if ((ret = ps__json_unknown (ld, r->line, r->col, "parameter", text, param_names, 3,
                                   PS__JSON_KEY ("params"))) < 0)
        return ret;
      if (ps_json_skip_value (r) == PS_JSON_ERROR)
        return ps__json_syntax (ld);
      continue;
    }
    ps__json_key key = { "params", -1, param_names[p] };
    if (ns->params_seen & BIT (p)) {
      if ((ret = ps__json_err (ld, r->line, r->col, &key, "duplicate key")) < 0)
        return ret;
      if (ps_json_skip_value (r) == PS_JSON_ERROR)
        return ps__json_syntax (ld);
      continue;
    }
    ns->params_seen |= BIT (p);
    ns->pline[p] = r->line;
    ns->pcol[p] = r->col;
    if ((t = ps__json_next (ld)) < 0)
      return t;
    if (t != PS_JSON_NUMBER) {
      if ((ret = ps__json_type_error (ld, &key, "a number")) < 0)
        return ret;
      continue;
    }
    ns->param[p] = r->num;
  }
  return t < 0 ? t : 0;
}

static int
intern_value (ps__json_loader *ld, const char *key, bool nonempty, uint32_t *out)
{
  ps_json_reader *r = &ld->r;
  int ok = ps__json_check_string (ld, PS__JSON_KEY (key));
  if (ok <= 0)
    return ok;
  if (nonempty && r->len == 0)
    return ps__json_err (ld, r->line, r->col, PS__JSON_KEY (key), "must not be empty");
  return ps__graph_intern (ld->g, r->str, r->len, out);
}

/* Kernels run few functions many times: a function name is kept once,
 * for the first PS__JSON_MAX_FUNCTIONS distinct names (a graph of ever new
 * names would only fill the map), and its kernels share it. */
static int
intern_function (ps__json_loader *ld, uint32_t *out)
{
  ps_json_reader *r = &ld->r;
  int ok = ps__json_check_string (ld, PS__JSON_KEY ("function"));
  if (ok <= 0)
    return ok;
  if (r->len == 0)
    return ps__json_err (ld, r->line, r->col, PS__JSON_KEY ("function"), "must not be empty");
  uint32_t h = ps__strmap_hash (r->str, r->len);
  uint32_t off = ps__strmap_find (&ld->function_map, ld->g->strings, r->str, r->len, h);
  if (off != PS_NONE) {
    *out = off;
    return 0;
  }
  int ret = ps__graph_intern (ld->g, r->str, r->len, out);
  if (ret == 0 && ld->function_map.count < PS__JSON_MAX_FUNCTIONS)
    ret = ps__strmap_insert (&ld->function_map, *out, h, *out);
  return ret;
}

static int
node_value (ps__json_loader *ld, int k)
{
  ps_json_reader *r = &ld->r;
  ps__json_node_scratch *ns = ld->ns;
  const char *key = node_keys[k];
  int ok = 0;
  int64_t v;
  switch (k) {
  case PS__NK_NAME:
    ok = ps__json_check_name (ld, PS__JSON_KEY (key), "node");
    if (ok > 0)
      ok = ps__graph_intern (ld->g, r->str, r->len, &ns->name);
    break;
  case PS__NK_OP:
    /* The frequent enums take a fast path; errors go the general way. */
    if (r->token != PS_JSON_STRING ||
        (ns->op = enum_index (r, &ps_op_names, 0, PS_OP__FILE_COUNT)) < 0)
      ok = ps__json_get_enum (ld, PS__JSON_KEY (key), "op", ps_op_names.name, PS_OP__FILE_COUNT,
                              &ns->op);
    break;
  case PS__NK_READS:
    ok = load_list (ld, key, buffer_item, &ns->reads);
    break;
  case PS__NK_WRITES:
    ok = load_list (ld, key, buffer_item, &ns->writes);
    break;
  case PS__NK_AFTER:
    ok = load_list (ld, key, node_item, &ns->after);
    break;
  case PS__NK_THEN:
    ok = load_list (ld, key, node_item, &ns->then_);
    break;
  case PS__NK_ELSE:
    ok = load_list (ld, key, node_item, &ns->else_);
    break;
  case PS__NK_ARGS:
    ok = load_list (ld, key, arg_item, NULL);
    break;
  case PS__NK_PARAMS:
    ok = load_params (ld);
    break;
  case PS__NK_STREAM:
    /* PS_MAX_STREAMS of ps-plan.h. */
    if ((ok = ps__json_get_int (ld, PS__JSON_KEY (key), 0, 63, &v)) > 0)
      ns->stream = (int32_t) v;
    break;
  case PS__NK_COST_NS:
    ok = ps__json_get_nonneg (ld, PS__JSON_KEY (key), &ns->cost_ns);
    break;
  case PS__NK_FLOPS:
    ok = ps__json_get_nonneg (ld, PS__JSON_KEY (key), &ns->flops);
    break;
  case PS__NK_TRAFFIC_BYTES:
    ok = ps__json_get_nonneg (ld, PS__JSON_KEY (key), &ns->traffic_bytes);
    break;
  case PS__NK_FUNCTION:
    ok = intern_function (ld, &ns->function);
    break;
  case PS__NK_MODULE:
    ok = intern_value (ld, key, true, &ns->module);
    if (ok == 0 && ns->module != PS_NONE) {
      const char *m = ld->g->strings + ns->module;
      size_t n = strlen (m);
      if (!((n > 4 && strcmp (m + n - 4, ".ptx") == 0) ||
            (n > 6 && strcmp (m + n - 6, ".cubin") == 0) ||
            (n > 3 && strcmp (m + n - 3, ".cu") == 0)))
        ok = ps__json_err (ld, r->line, r->col, PS__JSON_KEY (key),
                           "a module is a .ptx, .cubin or .cu file, not \"%s\"", m);
    }
    break;
  case PS__NK_LABEL:
    ok = intern_value (ld, key, false, &ns->label);
    break;
  case PS__NK_GRID:
    ok = load_dim (ld, key, grid_max, ns->grid);
    break;
  case PS__NK_BLOCK:
    ok = load_dim (ld, key, block_max, ns->block);
    break;
  case PS__NK_SMEM:
    if ((ok = ps__json_get_int (ld, PS__JSON_KEY (key), 0, UINT32_MAX, &v)) > 0)
      ns->smem = (uint32_t) v;
    break;
  case PS__NK_FUSIBLE:
    if (r->token == PS_JSON_TRUE || r->token == PS_JSON_FALSE)
      ns->fusible = r->token == PS_JSON_TRUE;
    else
      ok = ps__json_type_error (ld, PS__JSON_KEY (key), "true or false");
    break;
  case PS__NK_IMPL:
    if (r->token != PS_JSON_STRING ||
        (ns->impl = enum_index (r, &ps_impl_names, 1, PS_IMPL__COUNT)) < 0) {
      /* "none" (value 0) is not a name a file may use. */
      ok = ps__json_get_enum (ld, PS__JSON_KEY (key), "impl", ps_impl_names.name + 1,
                              PS_IMPL__COUNT - 1, &ns->impl);
      if (ns->impl >= 0)
        ns->impl++;
    }
    break;
  case PS__NK_DIR:
    ok = ps__json_get_enum (ld, PS__JSON_KEY (key), "dir", ps_copy_dir_names.name, PS_COPY__COUNT,
                            &ns->dir);
    break;
  case PS__NK_ASSUME:
    ok = ps__json_get_enum (ld, PS__JSON_KEY (key), "assume", ps_assume_names.name,
                            PS_ASSUME__COUNT, &ns->assume);
    if (ns->assume < 0)
      ns->assume = PS_ASSUME_BOTH;
    break;
  case PS__NK_SRC_DEVICE:
  case PS__NK_DST_DEVICE:
    if ((ok = ps__json_get_int (ld, PS__JSON_KEY (key), 0, INT32_MAX, &v)) > 0)
      *(k == PS__NK_SRC_DEVICE ? &ns->src_device : &ns->dst_device) = (int32_t) v;
    break;
  case PS__NK_BYTES:
    if ((ok = ps__json_get_int (ld, PS__JSON_KEY (key), 1, (int64_t) PS_MAX_BUFFER_BYTES, &v)) > 0)
      ns->bytes = (uint64_t) v;
    break;
  case PS__NK_VALUE:
    if ((ok = ps__json_get_int (ld, PS__JSON_KEY (key), 0, 255, &v)) > 0)
      ns->value = (uint8_t) v;
    break;
  case PS__NK_EVENT:
    ok = ps__json_check_name (ld, PS__JSON_KEY (key), "event");
    if (ok > 0) {
      memcpy (ns->event, r->str, r->len);
      ns->event[r->len] = '\0';
      ns->event_len = r->len;
    }
    break;
  case PS__NK_CONDITION:
    ok = ps__json_buffer_ref (ld, PS__JSON_KEY (key), &ns->condition);
    break;
  }
  return ok < 0 ? ok : 0;
}

/* Checks at the end of the object */

/* Records "WHAT "NAME" needs N reads, got M" (or writes) when a count is
 * wrong; `name` may be NULL. */
static int
check_count (ps__json_loader *ld, const char *what, const char *name, uint32_t got, int want,
             int key, bool reads)
{
  if (want < 0 || got == (uint32_t) want)
    return 0;
  ps__json_node_scratch *ns = ld->ns;
  bool has_key = ns->seen & BIT (key);
  const char *noun = reads ? "read" : "write";
  return ps__json_err (ld, has_key ? ns->kline[key] : ns->line, has_key ? ns->kcol[key] : ns->col,
                       NULL, "%s%s%s%s needs %d %s%s, got %u", what, name ? " \"" : "",
                       name ? name : "", name ? "\"" : "", want, noun, want == 1 ? "" : "s", got);
}

static int
require (ps__json_loader *ld, int key)
{
  ps__json_node_scratch *ns = ld->ns;
  if (ns->seen & BIT (key))
    return 0;
  return ps__json_err (ld, ns->line, ns->col, NULL, "missing required key \"%s\"",
                       node_keys[key]);
}

static int
check_kernel (ps__json_loader *ld)
{
  ps__json_node_scratch *ns = ld->ns;
  int ret = 0;
  if ((ret = require (ld, PS__NK_FUNCTION)) < 0 || (ret = require (ld, PS__NK_GRID)) < 0 ||
      (ret = require (ld, PS__NK_BLOCK)) < 0)
    return ret;
  bool has_impl = ns->seen & BIT (PS__NK_IMPL);
  bool has_module = ns->seen & BIT (PS__NK_MODULE);
  if (has_impl && has_module &&
      (ret = ps__json_err (ld, ns->kline[PS__NK_MODULE], ns->kcol[PS__NK_MODULE], NULL,
                           "a kernel has either \"impl\" or \"module\", not both")) < 0)
    return ret;
  if ((ns->seen & BIT (PS__NK_ARGS)) && !has_module &&
      (ret = ps__json_err (ld, ns->kline[PS__NK_ARGS], ns->kcol[PS__NK_ARGS], NULL,
                           "\"args\" are the arguments of a \"module\" kernel; this kernel has no "
                           "module")) < 0)
    return ret;

  /* Parameters belong to one built-in each: scale alpha, add_scalar beta,
   * fill value. */
  if (ns->params_seen && !has_impl) {
    if ((ret = ps__json_err (ld, ns->kline[PS__NK_PARAMS], ns->kcol[PS__NK_PARAMS], NULL,
                        "\"params\" are for built-in kernels; this kernel has no \"impl\"")) < 0)
      return ret;
  } else if (ns->impl > 0) {
    int uses = ns->impl == PS_IMPL_SCALE        ? 0
               : ns->impl == PS_IMPL_ADD_SCALAR ? 1
               : ns->impl == PS_IMPL_FILL       ? 2
                                                : -1;
    for (int p = 0; p < 3; p++)
      if ((ns->params_seen & BIT (p)) && p != uses &&
          (ret = ps__json_err (ld, ns->pline[p], ns->pcol[p],
                               &(ps__json_key){ "params", -1, param_names[p] },
                          "impl \"%s\" has no parameter \"%s\"", ps_impl_name ((ps_impl) ns->impl),
                          param_names[p])) < 0)
        return ret;
  }

  if (ns->impl > 0) {
    const char *name = ps_impl_name ((ps_impl) ns->impl);
    int reads = ps_impl_reads ((ps_impl) ns->impl);
    int writes = ns->impl == PS_IMPL_SPIN ? 0 : 1;
    if ((ret = check_count (ld, "impl", name, ns->reads.n, reads, PS__NK_READS, true)) < 0 ||
        (ret = check_count (ld, "impl", name, ns->writes.n, writes, PS__NK_WRITES, false)) < 0)
      return ret;
    if (ns->impl == PS_IMPL_SPIN && !(ns->seen & BIT (PS__NK_COST_NS)) &&
        (ret = ps__json_err (ld, ns->line, ns->col, NULL,
                        "impl \"spin\" needs \"cost_ns\" (how long it keeps the GPU busy)")) < 0)
      return ret;
  }
  return 0;
}

static int
check_memcpy (ps__json_loader *ld)
{
  ps__json_node_scratch *ns = ld->ns;
  int ret;
  if ((ret = require (ld, PS__NK_DIR)) < 0 || ns->dir < 0)
    return ret;
  ps_copy_dir dir = (ps_copy_dir) ns->dir;
  const char *name = ps_copy_dir_name (dir);
  if ((ret = check_count (ld, "memcpy", name, ns->reads.n, ps_copy_dir_reads (dir), PS__NK_READS,
                          true)) < 0 ||
      (ret = check_count (ld, "memcpy", name, ns->writes.n, ps_copy_dir_writes (dir),
                          PS__NK_WRITES, false)) < 0)
    return ret;
  if (ns->dir == PS_COPY_P2P) {
    if ((ret = require (ld, PS__NK_SRC_DEVICE)) < 0 || (ret = require (ld, PS__NK_DST_DEVICE)) < 0)
      return ret;
  } else {
    for (int k = PS__NK_SRC_DEVICE; k <= PS__NK_DST_DEVICE; k++)
      if ((ns->seen & BIT (k)) &&
          (ret = ps__json_err (ld, ns->kline[k], ns->kcol[k], NULL,
                               "\"%s\" is only for \"p2p\" copies", node_keys[k])) < 0)
        return ret;
  }
  return 0;
}

static int
check_event (ps__json_loader *ld, uint32_t *event)
{
  ps__json_node_scratch *ns = ld->ns;
  ps_graph *g = ld->g;
  int ret;
  *event = PS_NONE;
  if ((ret = require (ld, PS__NK_EVENT)) < 0 || ns->event_len == 0)
    return ret;
  uint32_t h = ps__strmap_hash (ns->event, ns->event_len);
  uint32_t id = ps__strmap_find (&ld->event_map, g->strings, ns->event, ns->event_len, h);
  if (id != PS_NONE) {
    *event = id;
    return 0;
  }
  if (ns->op == PS_OP_EVENT_WAIT)
    return ps__json_err (ld, ns->vline[PS__NK_EVENT], ns->vcol[PS__NK_EVENT],
                         PS__JSON_KEY ("event"),
                         "waits for event \"%s\", which no earlier node records", ns->event);
  if (g->n_events == ld->cap_events &&
      (ret = ps_array_grow (&g->event_names, &ld->cap_events, (uint64_t) g->n_events + 1,
                            sizeof *g->event_names, PS_MAX_NODES)) < 0)
    return ret;
  uint32_t off;
  if ((ret = ps__graph_intern (g, ns->event, ns->event_len, &off)) < 0 ||
      (ret = ps__strmap_insert (&ld->event_map, off, h, g->n_events)) < 0)
    return ret;
  g->event_names[g->n_events] = off;
  *event = g->n_events++;
  return 0;
}

static int
check_op (ps__json_loader *ld, uint32_t *aux_event)
{
  ps__json_node_scratch *ns = ld->ns;
  int ret = 0;
  switch (ns->op) {
  case PS_OP_KERNEL:
    ret = check_kernel (ld);
    break;
  case PS_OP_MEMCPY:
    ret = check_memcpy (ld);
    break;
  case PS_OP_MEMSET:
    if ((ret = check_count (ld, "memset", NULL, ns->reads.n, 0, PS__NK_READS, true)) == 0)
      ret = check_count (ld, "memset", NULL, ns->writes.n, 1, PS__NK_WRITES, false);
    break;
  case PS_OP_EVENT_RECORD:
  case PS_OP_EVENT_WAIT:
  case PS_OP_BARRIER: {
    const char *what = ps_op_name ((ps_op) ns->op);
    if ((ret = check_count (ld, what, NULL, ns->reads.n, 0, PS__NK_READS, true)) == 0)
      ret = check_count (ld, what, NULL, ns->writes.n, 0, PS__NK_WRITES, false);
    if (ret == 0 && ns->op != PS_OP_BARRIER)
      ret = check_event (ld, aux_event);
    break;
  }
  case PS_OP_CONDITIONAL:
    if ((ret = require (ld, PS__NK_CONDITION)) == 0)
      ret = check_count (ld, "conditional", NULL, ns->writes.n, 0, PS__NK_WRITES, false);
    break;
  default:
    break;
  }
  return ret;
}

/* Appends n values to one of the graph's uint32_t arrays. */
static int
append_u32 (uint32_t **arr, uint32_t *len, uint32_t *cap, const uint32_t *v, uint32_t n)
{
  if (n == 0)
    return 0;
  int ret = ps__array_reserve (arr, cap, (uint64_t) *len + n, sizeof **arr, PS_ARRAY_MAX);
  if (ret < 0)
    return ret;
  memcpy (*arr + *len, v, (size_t) n * sizeof *v);
  *len += n;
  return 0;
}

/* Appends access keys (resolved to buffer ids once the document is read)
 * to graph->access. */
static int
append_access (ps__json_loader *ld, const uint32_t *keys, uint32_t n)
{
  ps_graph *g = ld->g;
  return append_u32 (&g->access, &g->n_access, &ld->cap_access, keys, n);
}

static int
commit_node (ps__json_loader *ld, uint32_t event)
{
  ps__json_node_scratch *ns = ld->ns;
  ps_graph *g = ld->g;
  uint32_t id = g->n_nodes;
  int ret;
  if (id >= PS_MAX_NODES) {
    ps__json_err (ld, ns->line, ns->col, NULL, "too many nodes (limit %u)", (unsigned)PS_MAX_NODES);
    return PS_ELIMIT;
  }
  if (id == ld->cap_nodes &&
      (ret = ps_array_grow (&g->nodes, &ld->cap_nodes, (uint64_t) id + 1, sizeof *g->nodes,
                            PS_MAX_NODES)) < 0)
    return ret;

  ps_node n = {
    .name = 0, /* "" until the name is known to be good */
    .op = (uint8_t) (ns->op < 0 ? PS_OP_HOST : ns->op),
    .impl = (uint8_t) (ns->impl > 0 ? ns->impl : PS_IMPL_NONE),
    .dir = (uint8_t) (ns->dir > 0 ? ns->dir : 0),
    .stream = ns->stream,
    .line = ns->line,
    .col = ns->col,
    .cost_ns = ns->cost_ns,
    .aux = PS_NONE,
    .bytes = ns->bytes,
    .value = ns->value,
    .src_device = ns->src_device,
    .dst_device = ns->dst_device,
    .cond = PS_NONE,
  };
  if (ns->seen & BIT (PS__NK_COST_NS))
    n.flags |= PS_NODE_HAS_COST;

  n.name = ns->name;

  n.reads_begin = g->n_access;
  if ((ret = append_access (ld, ns->reads.v, ns->reads.n)) < 0)
    return ret;
  /* A conditional reads its condition buffer: its last read. */
  uint32_t condition = PS_NONE;
  if (n.op == PS_OP_CONDITIONAL && ns->condition != PS_NONE) {
    condition = g->n_access;
    if ((ret = append_access (ld, &ns->condition, 1)) < 0)
      return ret;
  }
  n.reads_count = g->n_access - n.reads_begin;
  n.writes_begin = g->n_access;
  if ((ret = append_access (ld, ns->writes.v, ns->writes.n)) < 0)
    return ret;
  n.writes_count = ns->writes.n;

  for (uint32_t i = 0; i < ns->after.n; i++) {
    uint32_t pair[2] = { ns->after.v[i], id };
    if ((ret = append_u32 (&ld->after_pairs, &ld->n_after, &ld->cap_after, pair, 2)) < 0)
      return ret;
  }

  switch (ns->op) {
  case PS_OP_KERNEL: {
    if (g->n_kernels == ld->cap_kernels &&
        (ret = ps_array_grow (&g->kernels, &ld->cap_kernels, (uint64_t) g->n_kernels + 1,
                              sizeof *g->kernels, PS_MAX_NODES)) < 0)
      return ret;
    ps_kernel k = {
      .function = ns->function,
      .smem = ns->smem,
      .module = ns->module,
      .args_begin = g->n_kargs,
      .args_count = ns->n_args,
      .alpha = ns->param[0],
      .beta = ns->param[1],
      .value = ns->param[2],
      .flops = ns->flops,
      .traffic_bytes = ns->traffic_bytes,
    };
    if (k.function == PS_NONE)
      k.function = 0;
    memcpy (k.grid, ns->grid, sizeof k.grid);
    memcpy (k.block, ns->block, sizeof k.block);
    if (ns->n_args) {
      if ((ret = ps_array_grow (&g->kargs, &ld->cap_kargs, (uint64_t) g->n_kargs + ns->n_args,
                                sizeof *g->kargs, PS_ARRAY_MAX)) < 0)
        return ret;
      memcpy (g->kargs + g->n_kargs, ns->args, (size_t) ns->n_args * sizeof *ns->args);
      g->n_kargs += ns->n_args;
    }
    n.aux = g->n_kernels;
    g->kernels[g->n_kernels++] = k;
    if (ns->fusible) {
      bool can_fuse = ns->module == PS_NONE && ns->impl != PS_IMPL_SPIN;
      if (can_fuse) {
        n.flags |= PS_NODE_FUSIBLE;
      } else {
        n.flags |= PS_NODE_FUSIBLE_IGNORED;
        if (ld->speculative)
          return PS_EINVAL; /* the warning is the first loader's to give */
        ps_diag_warn (ld->diag, ns->kline[PS__NK_FUSIBLE], ns->kcol[PS__NK_FUSIBLE],
                      "nodes[%u].fusible: ignored: kernel \"%s\" %s; only element-wise "
                      "built-ins and synthetic kernels can be fused",
                      id, g->strings + ns->name,
                      ns->module != PS_NONE ? "runs a module" : "is a spin kernel");
      }
    }
    break;
  }
  case PS_OP_CONDITIONAL: {
    if (g->n_conds == ld->cap_conds &&
        (ret = ps_array_grow (&g->conds, &ld->cap_conds, (uint64_t) g->n_conds + 1,
                              sizeof *g->conds, PS_MAX_NODES)) < 0)
      return ret;
    ps_cond c = { .condition = condition, .assume = (uint8_t) ns->assume };
    c.then_begin = g->n_cond_members;
    c.then_count = ns->then_.n;
    if ((ret = append_u32 (&g->cond_members, &g->n_cond_members, &ld->cap_members, ns->then_.v,
                           ns->then_.n)) < 0)
      return ret;
    c.else_begin = g->n_cond_members;
    c.else_count = ns->else_.n;
    if ((ret = append_u32 (&g->cond_members, &g->n_cond_members, &ld->cap_members, ns->else_.v,
                           ns->else_.n)) < 0)
      return ret;
    n.aux = g->n_conds;
    g->conds[g->n_conds++] = c;
    break;
  }
  case PS_OP_EVENT_RECORD:
  case PS_OP_EVENT_WAIT:
    n.aux = event;
    break;
  case PS_OP_HOST:
    n.aux = ns->label;
    break;
  default:
    break;
  }
  g->nodes[g->n_nodes++] = n;
  return 0;
}

int
ps__json_load_node (ps__json_loader *ld)
{
  ps_json_reader *r = &ld->r;
  ps__json_node_scratch *ns = ld->ns;
  int t, ret;
  scratch_reset (ns, r->line, r->col);
  while ((t = ps__json_next (ld)) == PS_JSON_KEY) {
    int k = node_key (ns, r);
    if (k < 0) {
      if (ns->n_unknown < 4) {
        ps__json_unknown_key *u = &ns->unknown[ns->n_unknown++];
        ps_quote_text (u->text, sizeof u->text, r->str, r->len);
        u->line = r->line;
        u->col = r->col;
      }
      if (ps_json_skip_value (r) == PS_JSON_ERROR)
        return ps__json_syntax (ld);
      continue;
    }
    if (ns->seen & BIT (k)) {
      if ((ret = ps__json_duplicate_key (ld, node_keys[k])) < 0)
        return ret;
      continue;
    }
    ns->seen |= BIT (k);
    ns->kline[k] = r->line;
    ns->kcol[k] = r->col;
    if ((t = ps__json_next (ld)) < 0)
      return t;
    ns->vline[k] = r->line;
    ns->vcol[k] = r->col;
    if ((ret = node_value (ld, k)) < 0)
      return ret;
  }
  if (t < 0)
    return t;

  /* Keys: unknown ones get a suggestion among those the op allows. */
  uint32_t allowed = ns->op >= 0 ? op_keys[ns->op] : ~0u;
  if (ns->n_unknown) {
    const char *names[PS__NK__COUNT];
    for (int k = 0; k < PS__NK__COUNT; k++)
      names[k] = (allowed & BIT (k)) ? node_keys[k] : NULL;
    for (uint32_t i = 0; i < ns->n_unknown; i++)
      if ((ret = ps__json_unknown (ld, ns->unknown[i].line, ns->unknown[i].col, "key",
                                   ns->unknown[i].text, names, PS__NK__COUNT, NULL)) < 0)
        return ret;
  }
  uint32_t extra = ns->seen & ~allowed;
  for (int k = 0; extra && k < PS__NK__COUNT; k++)
    if ((extra & BIT (k)) &&
        (ret = ps__json_err (ld, ns->kline[k], ns->kcol[k], NULL,
                             "key \"%s\" does not apply to a %s node", node_keys[k],
                             ps_op_name ((ps_op) ns->op))) < 0)
      return ret;
  if ((ret = require (ld, PS__NK_NAME)) < 0 || (ret = require (ld, PS__NK_OP)) < 0)
    return ret;

  uint32_t event = PS_NONE;
  if (ns->op >= 0 && (ret = check_op (ld, &event)) < 0)
    return ret;
  return commit_node (ld, event);
}
