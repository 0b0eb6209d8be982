/* ps-exec-trace.c: reading a PyTorch execution trace (see ps-exec-trace.h).
 * One streaming pass; argument values are walked with an explicit stack,
 * so that nested lists cost no recursion. */
#include "ps-exec-trace.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-graph.h"
#include "ps-json.h"
#include "ps-trace-import.h"
#include "ps-trace-private.h"

/* Argument positions looked at per node; tensors per node kept. */
#define MAX_POS 4096
#define MAX_NODE_TENSORS 4096

typedef struct {
  uint32_t pos;
  bool output;
  int64_t storage;
  uint64_t bytes;
  int32_t device;
} arg_tensor;

/* One open array of an argument value: whether it may still be a tensor
 * ([int, int, int, int, int, "device"]) and its first five integers. */
typedef struct {
  uint8_t n;
  bool may_be_tensor;
  int32_t device;
  int64_t v[5];
} level;

typedef struct {
  ps_exec_trace *et;
  ps_json_reader *r;
  ps_diag *diag;
  const ps__read_stop *stop;
  level levels[PS_JSON_MAX_DEPTH + 2];
  arg_tensor *args;
  uint32_t n_args, args_cap;
  uint8_t in_types[MAX_POS], out_types[MAX_POS]; /* ps_dtype + 1; 0 when not said */
} reader;

static int
json_error (reader *rd)
{
  return ps__read_stop_report (rd->stop, rd->r, rd->diag);
}

static bool
key_is (const ps_json_reader *r, const char *k)
{
  size_t l = strlen (k);
  return r->len == l && memcmp (r->str, k, l) == 0;
}

static int64_t
int_value (const ps_json_reader *r, bool *ok)
{
  *ok = r->token == PS_JSON_NUMBER && r->is_int;
  return *ok ? r->i64 : 0;
}

/* "cuda:N" or "cuda" -> N (0); anything else -> -1. */
static int32_t
cuda_device (const char *s, size_t len)
{
  if (len < 4 || memcmp (s, "cuda", 4) != 0)
    return -1;
  if (len == 4)
    return 0;
  if (s[4] != ':' || len > 10)
    return -1;
  int32_t d = 0;
  for (size_t i = 5; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    d = d * 10 + (s[i] - '0');
  }
  return len > 5 ? d : -1;
}

/* The element type a type string names: "Tensor(float)",
 * "GenericList[Tensor(c10::Half),...]" -> its first tensor's. */
static uint8_t
type_code (const char *s, size_t len)
{
  const char *t = NULL;
  for (size_t i = 0; i + 7 <= len && !t; i++)
    if (memcmp (s + i, "Tensor(", 7) == 0)
      t = s + i + 7;
  if (!t)
    return 0;
  size_t rest = len - (size_t) (t - s);
  const char *end = memchr (t, ')', rest);
  size_t n = end ? (size_t) (end - t) : rest;
  static const struct {
    const char *name;
    ps_dtype dt;
  } names[] = { { "float", PS_DT_F32 },         { "c10::Half", PS_DT_F16 },
                { "c10::BFloat16", PS_DT_BF16 }, { "int", PS_DT_I32 } };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen (names[i].name) == n && memcmp (names[i].name, t, n) == 0)
      return (uint8_t) (names[i].dt + 1);
  return PS_DT_U8 + 1;
}

static int
push_arg (reader *rd, uint32_t pos, bool output, const level *l, int32_t device)
{
  /* [tensor id, storage id, offset, elements, element size, device] */
  int64_t storage = l->v[1], offset = l->v[2], numel = l->v[3], size = l->v[4];
  if (storage < 0 || offset < 0 || numel < 0 || size <= 0 || size > 64)
    return 0;
  double bytes = ((double) offset + (double) numel) * (double) size;
  if (!(bytes >= 1) || bytes > (double) PS_MAX_BUFFER_BYTES)
    return 0;
  if (rd->n_args >= MAX_NODE_TENSORS)
    return 0;
  if (PS_ARRAY_RESERVE (rd->args, rd->args_cap, (uint64_t) rd->n_args + 1) < 0)
    return PS_ENOMEM;
  rd->args[rd->n_args++] = (arg_tensor) { pos, output, storage, (uint64_t) bytes, device };
  return 0;
}

/* An argument list ("inputs" or "outputs", or their "values"): the current
 * token opens it.  Every tensor in it, at any depth, is kept with the
 * position of the top-level argument it is in. */
static int
read_values (reader *rd, bool output)
{
  ps_json_reader *r = rd->r;
  if (r->token != PS_JSON_ARRAY_BEGIN)
    return ps_json_skip_current (r) < 0 ? json_error (rd) : 0;
  int base = r->depth;
  uint32_t pos = 0;
  int top = 0; /* levels[0 .. top) are the arrays open inside the list */
  for (;;) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (rd);
    if (r->depth < base)
      return 0; /* the list's own end */
    level *l = top > 0 ? &rd->levels[top - 1] : NULL;
    if (t == PS_JSON_ARRAY_BEGIN && top < PS_JSON_MAX_DEPTH) {
      if (l)
        l->may_be_tensor = false;
      rd->levels[top++] = (level) { 0, true, -1, { 0 } };
      continue;
    }
    if (t == PS_JSON_ARRAY_END) {
      if (l->may_be_tensor && l->n == 6 && l->device >= 0 && pos < MAX_POS) {
        int rc = push_arg (rd, pos, output, l, l->device);
        if (rc < 0)
          return rc;
      }
      top--;
      if (top == 0)
        pos++;
      else
        rd->levels[top - 1].n++;
      continue;
    }
    if (t == PS_JSON_OBJECT_BEGIN || t == PS_JSON_ARRAY_BEGIN) {
      if (ps_json_skip_current (r) < 0)
        return json_error (rd);
      if (l)
        l->may_be_tensor = false;
    } else if (l && l->n < 5) {
      bool ok;
      l->v[l->n] = int_value (r, &ok);
      l->may_be_tensor = l->may_be_tensor && ok;
    } else if (l && l->n == 5 && t == PS_JSON_STRING) {
      l->device = cuda_device (r->str, r->len);
    } else if (l) {
      l->may_be_tensor = false;
    }
    if (l)
      l->n = l->n < 7 ? l->n + 1 : 7;
    else
      pos++;
  }
}

/* "input_types" or "output_types" (or their "types"). */
static int
read_types (reader *rd, uint8_t *codes)
{
  ps_json_reader *r = rd->r;
  if (r->token != PS_JSON_ARRAY_BEGIN)
    return ps_json_skip_current (r) < 0 ? json_error (rd) : 0;
  for (uint32_t pos = 0;; pos++) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (rd);
    if (t == PS_JSON_ARRAY_END)
      return 0;
    if (t == PS_JSON_STRING && pos < MAX_POS)
      codes[pos] = type_code (r->str, r->len);
    if (ps_json_skip_current (r) < 0)
      return json_error (rd);
  }
}

/* "inputs": {"values": [...], "types": [...], ...} (schema 1.1). */
static int
read_arg_object (reader *rd, bool output)
{
  ps_json_reader *r = rd->r;
  for (;;) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (rd);
    if (t == PS_JSON_OBJECT_END)
      return 0;
    int which = key_is (r, "values") ? 1 : key_is (r, "types") ? 2 : 0;
    if (ps_json_next (r) == PS_JSON_ERROR)
      return json_error (rd);
    int rc = which == 1   ? read_values (rd, output)
             : which == 2 ? read_types (rd, output ? rd->out_types : rd->in_types)
                          : (ps_json_skip_current (r) < 0 ? json_error (rd) : 0);
    if (rc < 0)
      return rc;
  }
}

static int
add_string (ps_exec_trace *et, const char *s, size_t len, uint32_t *off)
{
  if (len > PS_MAX_NAME)
    len = PS_MAX_NAME;
  int rc = PS_ARRAY_RESERVE (et->strings, et->strings_cap, (uint64_t) et->strings_len + len + 1);
  if (rc < 0)
    return rc;
  *off = et->strings_len;
  memcpy (et->strings + et->strings_len, s, len);
  for (size_t i = 0; i < len; i++)
    if (et->strings[et->strings_len + i] == 0)
      et->strings[et->strings_len + i] = '?';
  et->strings[et->strings_len + len] = 0;
  et->strings_len += (uint32_t) len + 1;
  return 0;
}

static int
read_node (reader *rd)
{
  ps_json_reader *r = rd->r;
  ps_exec_trace *et = rd->et;
  rd->n_args = 0;
  memset (rd->in_types, 0, sizeof rd->in_types);
  memset (rd->out_types, 0, sizeof rd->out_types);
  ps_et_op op = { -1, PS_NONE, 0, 0 };
  bool has_rf = false;
  for (;;) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (rd);
    if (t == PS_JSON_OBJECT_END)
      break;
    int which = key_is (r, "name")           ? 1
                : key_is (r, "rf_id")        ? 2
                : key_is (r, "inputs")       ? 3
                : key_is (r, "outputs")      ? 4
                : key_is (r, "input_types")  ? 5
                : key_is (r, "output_types") ? 6
                                             : 0;
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (rd);
    int rc = 0;
    bool ok;
    switch (which) {
    case 1:
      if (t == PS_JSON_STRING)
        rc = add_string (et, r->str, r->len, &op.name);
      break;
    case 2:
      op.rf_id = int_value (r, &ok);
      has_rf = ok && op.rf_id >= 0;
      break;
    case 3:
    case 4:
      rc = t == PS_JSON_OBJECT_BEGIN ? read_arg_object (rd, which == 4)
                                     : read_values (rd, which == 4);
      continue;
    case 5:
    case 6:
      rc = read_types (rd, which == 6 ? rd->out_types : rd->in_types);
      if (rc < 0)
        return rc;
      continue;
    default:
      break;
    }
    if (rc < 0)
      return rc;
    if (ps_json_skip_current (r) < 0)
      return json_error (rd);
  }
  et->n_nodes++;
  if (!has_rf)
    return 0;
  if (op.name == PS_NONE && add_string (et, "", 0, &op.name) < 0)
    return PS_ENOMEM;
  op.tensors_begin = et->n_tensors;
  for (uint32_t i = 0; i < rd->n_args; i++) {
    const arg_tensor *a = &rd->args[i];
    uint8_t code = (a->output ? rd->out_types : rd->in_types)[a->pos];
    if (PS_ARRAY_RESERVE (et->tensors, et->tensors_cap, (uint64_t) et->n_tensors + 1) < 0)
      return PS_ENOMEM;
    et->tensors[et->n_tensors++] = (ps_et_tensor) {
      a->storage, a->bytes, a->device, (uint8_t) (code ? code - 1 : PS_DT_U8), a->output
    };
  }
  op.tensors_count = et->n_tensors - op.tensors_begin;
  if (PS_ARRAY_RESERVE (et->ops, et->ops_cap, (uint64_t) et->n_ops + 1) < 0)
    return PS_ENOMEM;
  et->ops[et->n_ops++] = op;
  return 0;
}

static int
read_top (reader *rd)
{
  ps_json_reader *r = rd->r;
  ps_json_token t = ps_json_next (r);
  if (t == PS_JSON_ERROR)
    return json_error (rd);
  if (t != PS_JSON_OBJECT_BEGIN)
    return ps_diag_error (rd->diag, r->line, r->col,
                          "an execution trace is a JSON object with \"schema\" and \"nodes\", "
                          "not %s", ps_json_token_name (t));
  bool nodes = false;
  for (;;) {
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (rd);
    if (t == PS_JSON_OBJECT_END)
      break;
    int which = key_is (r, "schema") ? 1 : key_is (r, "nodes") ? 2 : 0;
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (rd);
    if (which == 1 && t == PS_JSON_STRING && r->len < sizeof rd->et->schema) {
      memcpy (rd->et->schema, r->str, r->len);
      rd->et->schema[r->len] = 0;
    } else if (which == 2 && t == PS_JSON_ARRAY_BEGIN) {
      nodes = true;
      for (;;) {
        t = ps_json_next (r);
        if (t == PS_JSON_ERROR)
          return json_error (rd);
        if (t == PS_JSON_ARRAY_END)
          break;
        int rc = t == PS_JSON_OBJECT_BEGIN ? read_node (rd)
                                           : (ps_json_skip_current (r) < 0 ? json_error (rd) : 0);
        if (rc < 0)
          return rc;
      }
      continue;
    }
    if (ps_json_skip_current (r) < 0)
      return json_error (rd);
  }
  if (ps_json_next (r) == PS_JSON_ERROR)
    return json_error (rd);
  if (!nodes || !rd->et->schema[0])
    return ps_diag_error (rd->diag, 1, 1,
                          "not an execution trace: a PyTorch execution trace has \"schema\" "
                          "and \"nodes\"");
  return 0;
}

static int
cmp_op (const void *a, const void *b)
{
  const ps_et_op *x = a, *y = b;
  return x->rf_id < y->rf_id ? -1 : x->rf_id > y->rf_id;
}

static int
read_exec_trace (ps_exec_trace *et, const char *data, size_t len, ps_diag *diag)
{
  memset (et, 0, sizeof *et);
  reader *rd = calloc (1, sizeof *rd);
  if (!rd)
    return PS_ENOMEM;
  ps_json_reader r;
  ps__zmem m;
  bool gz = len >= 2 && (unsigned char) data[0] == 0x1f && (unsigned char) data[1] == 0x8b;
  int rc = 0;
  if (gz) {
    rc = ps__zmem_init (&m, data, len, PS_TRACE_MAX_TEXT);
    if (rc == 0 && (rc = ps_json_init_stream (&r, ps__zmem_pull, &m)) < 0)
      ps__zmem_end (&m);
  } else if (len > PS_TRACE_MAX_TEXT) {
    rc = ps_diag_error (diag, 0, 0, "the execution trace is larger than %llu bytes (the limit)",
                        (unsigned long long) PS_TRACE_MAX_TEXT);
  } else {
    rc = ps_json_init_mem (&r, data, len);
  }
  if (rc < 0) {
    free (rd);
    return rc;
  }
  rd->et = et;
  rd->r = &r;
  rd->diag = diag;
  rd->stop = gz ? &m.stop : NULL;
  rc = read_top (rd);
  ps_json_close (&r);
  if (gz)
    ps__zmem_end (&m);
  free (rd->args);
  free (rd);
  if (rc == 0 && et->n_ops > 1)
    ps_array_sort (et->ops, et->n_ops, sizeof *et->ops, cmp_op);
  if (rc < 0)
    ps_exec_trace_free (et);
  return rc;
}

int
ps_exec_trace_read (ps_exec_trace *et, const char *data, size_t len, ps_diag *diag)
{
  size_t errors = diag->errors;
  return ps_diag_result (diag, errors, read_exec_trace (et, data, len, diag),
                         "read the execution trace");
}

void
ps_exec_trace_free (ps_exec_trace *et)
{
  if (!et)
    return;
  free (et->ops);
  free (et->tensors);
  free (et->strings);
  memset (et, 0, sizeof *et);
}

const ps_et_op *
ps_exec_trace_find (const ps_exec_trace *et, int64_t rf_id)
{
  if (!et || rf_id < 0)
    return NULL;
  uint32_t lo = 0, hi = et->n_ops;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (et->ops[mid].rf_id < rf_id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < et->n_ops && et->ops[lo].rf_id == rf_id ? &et->ops[lo] : NULL;
}
