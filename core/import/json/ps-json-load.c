/* ps-json-load.c: what every part of the JSON graph loader reads values
 * with: located messages with the JSON path, the next token, typed values
 * (integers in a range, names, enums) and references to names that are
 * resolved once the whole document is read; and the sizing of the arrays
 * its objects fill. */
#include "ps-json-load.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

int
ps__json_err (ps__json_loader *ld, uint32_t line, uint32_t col, const ps__json_key *key,
              const char *fmt, ...)
{
  if (ld->too_many)
    return PS_EINVAL;
  if (ld->speculative) {
    ld->errors++;
    ld->too_many = true;
    return PS_EINVAL;
  }
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
  /* A node's index alone is hard to find in a large file: its name comes
   * too, once read (the node being read is in the scratch, the others in
   * the graph), except where the message is about the name itself. */
  char named[160] = "";
  uint32_t name = 0;
  const ps_graph *g = ld->g;
  if (ld->node_index != PS_NONE && !(key && key->name && strcmp (key->name, "name") == 0)) {
    if (ld->node_index < g->n_nodes)
      name = g->nodes[ld->node_index].name;
    else if (ld->node_index == g->n_nodes && ld->ns)
      name = ld->ns->name;
  }
  if (name) {
    char quoted[128];
    const char *text = g->strings + name;
    ps_quote_text (quoted, sizeof quoted, text, strlen (text));
    snprintf (named, sizeof named, " (node \"%s\")", quoted);
  }
  ps_diag_error (ld->diag, line, col, "%s%s%s%s", path, path[0] ? ": " : "", msg, named);
  ld->errors++;
  if (ld->errors >= PS__JSON_MAX_ERRORS) {
    ps_diag_error (ld->diag, 0, 0, "too many errors; stopped");
    ld->too_many = true;
    return PS_EINVAL;
  }
  return 0;
}

int
ps__json_syntax (ps__json_loader *ld)
{
  if (ld->speculative) {
    ld->errors++;
    ld->too_many = true;
  } else if (!ld->syntax_reported) {
    ld->syntax_reported = true;
    ps_diag_error (ld->diag, ld->r.error_line, ld->r.error_col, "%s", ld->r.error);
    ld->errors++;
  }
  return ps_json_error_status (&ld->r);
}


int
ps__json_skip_current (ps__json_loader *ld)
{
  if (ps_json_skip_current (&ld->r) < 0)
    return ps__json_syntax (ld);
  return 0;
}

/* A description of the current token for "expected X, got Y" messages. */
const char *
ps__json_token_desc (ps_json_token t)
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
ps__json_type_error (ps__json_loader *ld, const ps__json_key *key, const char *what)
{
  int ret = ps__json_err (ld, ld->r.line, ld->r.col, key, "expected %s, got %s", what,
                          ps__json_token_desc (ld->r.token));
  if (ret < 0)
    return ret;
  return ps__json_skip_current (ld);
}

int
ps__json_get_int_slow (ps__json_loader *ld, const ps__json_key *key, int64_t min, int64_t max,
                  int64_t *out)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_NUMBER) {
    int ret = ps__json_type_error (ld, key, "an integer");
    return ret < 0 ? ret : 0;
  }
  int64_t v;
  bool in_range;
  if (r->is_int) {
    v = r->i64;
    in_range = v >= min && v <= max;
  } else if (r->num != floor (r->num)) {
    int ret = ps__json_err (ld, r->line, r->col, key, "%.17g is not an integer", r->num);
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
    int ret = ps__json_err (ld, r->line, r->col, key, "%s is out of range (%lld to %lld)", lit,
                            (long long) min, (long long) max);
    return ret < 0 ? ret : 0;
  }
  *out = v;
  return 1;
}

int
ps__json_get_nonneg_slow (ps__json_loader *ld, const ps__json_key *key, double *out)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_NUMBER) {
    int ret = ps__json_type_error (ld, key, "a number");
    return ret < 0 ? ret : 0;
  }
  if (!(r->num >= 0) || !isfinite (r->num)) {
    int ret = ps__json_err (ld, r->line, r->col, key, "%.17g is negative; expected a number >= 0",
                            r->num);
    return ret < 0 ? ret : 0;
  }
  *out = r->num;
  return 1;
}

int
ps__json_check_string_slow (ps__json_loader *ld, const ps__json_key *key)
{
  ps_json_reader *r = &ld->r;
  if (r->token != PS_JSON_STRING) {
    int ret = ps__json_type_error (ld, key, "a string");
    return ret < 0 ? ret : 0;
  }
  if (r->escaped && memchr (r->str, '\0', r->len)) {
    int ret =
        ps__json_err (ld, r->line, r->col, key, "a NUL character (\\u0000) is not allowed here");
    return ret < 0 ? ret : 0;
  }
  return 1;
}

int
ps__json_check_name_slow (ps__json_loader *ld, const ps__json_key *key, const char *what)
{
  int ok = ps__json_check_string (ld, key);
  if (ok <= 0)
    return ok;
  ps_json_reader *r = &ld->r;
  if (r->len == 0 || r->len > PS_MAX_NAME) {
    int ret = r->len == 0
                ? ps__json_err (ld, r->line, r->col, key, "a %s name must not be empty", what)
                : ps__json_err (ld, r->line, r->col, key, "a %s name is longer than %u bytes", what,
                                (unsigned) PS_MAX_NAME);
    return ret < 0 ? ret : 0;
  }
  return 1;
}

int
ps__json_unknown (ps__json_loader *ld, uint32_t line, uint32_t col, const char *what,
                  const char *text, const char *const *allowed, size_t n, const ps__json_key *key)
{
  const char *s = ps_suggest (text, strlen (text), allowed, n);
  if (s)
    return ps__json_err (ld, line, col, key, "unknown %s \"%s\"; did you mean \"%s\"?", what, text,
                         s);
  return ps__json_err (ld, line, col, key, "unknown %s \"%s\"", what, text);
}

int
ps__json_get_enum (ps__json_loader *ld, const ps__json_key *key, const char *what,
                   const char *const *names, size_t n, int *out)
{
  *out = -1;
  int ok = ps__json_check_string (ld, key);
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
  ps_quote_text (text, sizeof text, r->str, r->len);
  int ret = ps__json_unknown (ld, r->line, r->col, what, text, names, n, key);
  return ret < 0 ? ret : 0;
}

/* Copies the current token's string into the refpool, after `head`
 * bytes of room (0, or 8 for a position); *off is the string's offset.  Offsets stay below
 * PS__JSON_POOLED, the flag of access keys. */
static int
refpool_add (ps__json_loader *ld, uint32_t head, uint32_t *off)
{
  ps_json_reader *r = &ld->r;
  uint64_t need = (uint64_t) ld->refpool_len + head + r->len + 1;
  if (need >= PS__JSON_POOLED)
    return PS_ELIMIT;
  int ret = PS_ARRAY_RESERVE (ld->refpool, ld->refpool_cap, need);
  if (ret < 0)
    return ret;
  memcpy (ld->refpool + ld->refpool_len + head, r->str, r->len + 1);
  *off = ld->refpool_len + head;
  ld->refpool_len = (uint32_t) need;
  return 0;
}

int
ps__json_push_ref (ps__json_loader *ld, uint8_t field, uint32_t index, uint32_t *out)
{
  uint32_t line = ld->r.line, col = ld->r.col, name;
  int ret = refpool_add (ld, 0, &name);
  if (ret == 0)
    ret = PS_ARRAY_RESERVE (ld->refs, ld->cap_refs, (uint64_t) ld->n_refs + 1);
  if (ret < 0)
    return ret;
  ld->refs[ld->n_refs] = (ps__json_ref){ name, line, col, ld->node_index, index, PS_NONE, field };
  *out = ld->n_refs++;
  return 0;
}

int
ps__json_buffer_ref (ps__json_loader *ld, const ps__json_key *key, uint32_t *out)
{
  *out = PS_NONE;
  int ok = ps__json_check_name (ld, key, "buffer");
  if (ok <= 0)
    return ok;
  const ps_json_reader *r = &ld->r;
  /* The name as it stands in the input, one byte after its quote. */
  if (ld->data && !r->escaped && r->offset + 1 < PS__JSON_POOLED) {
    *out = (uint32_t) (r->offset + 1);
    return 0;
  }
  /* Decoded, after the position of its token. */
  uint32_t off;
  int ret = refpool_add (ld, 8, &off);
  if (ret < 0)
    return ret;
  uint32_t at[2] = { r->line, r->col };
  memcpy (ld->refpool + off - 8, at, 8);
  *out = PS__JSON_POOLED | off;
  return 0;
}

const char *
ps__json_access_name (const ps__json_loader *ld, uint32_t key, size_t *len)
{
  if (key & PS__JSON_POOLED) {
    const char *s = ld->refpool + (key & ~PS__JSON_POOLED);
    *len = strlen (s);
    return s;
  }
  /* The reader took the whole string, so its closing quote is there. */
  const char *s = ld->data + key;
  *len = (size_t) ((const char *) memchr (s, '"', ld->data_len - key) - s);
  return s;
}

void
ps__json_access_locate (const ps__json_loader *ld, uint32_t key, ps_json_locator *loc,
                        uint32_t *line, uint32_t *col)
{
  if (!(key & PS__JSON_POOLED)) {
    ps_json_locate (loc, (uint64_t) key - 1, line, col);
    return;
  }
  uint32_t at[2];
  memcpy (at, ld->refpool + (key & ~PS__JSON_POOLED) - 8, 8);
  *line = at[0];
  *col = at[1];
}

int
ps__json_key_index (const ps_json_reader *r, const char *const *keys, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (keys[i][0] == r->str[0] && strlen (keys[i]) == r->len &&
        memcmp (keys[i], r->str, r->len) == 0)
      return (int) i;
  return -1;
}

int
ps__json_duplicate_key (ps__json_loader *ld, const char *key)
{
  int ret = ps__json_err (ld, ld->r.line, ld->r.col, NULL, "duplicate key \"%s\"", key);
  if (ret < 0)
    return ret;
  if (ps_json_skip_value (&ld->r) == PS_JSON_ERROR)
    return ps__json_syntax (ld);
  return 0;
}

int
ps__json_unknown_key_skip (ps__json_loader *ld, const char *const *allowed, size_t n)
{
  char text[80];
  ps_quote_text (text, sizeof text, ld->r.str, ld->r.len);
  int ret = ps__json_unknown (ld, ld->r.line, ld->r.col, "key", text, allowed, n, NULL);
  if (ret < 0)
    return ret;
  if (ps_json_skip_value (&ld->r) == PS_JSON_ERROR)
    return ps__json_syntax (ld);
  return 0;
}

int
ps__json_u32vec_push (ps__json_u32vec *v, uint32_t x)
{
  int ret = PS_ARRAY_RESERVE (v->v, v->cap, (uint64_t) v->n + 1);
  if (ret < 0)
    return ret;
  v->v[v->n++] = x;
  return 0;
}

/* Presizing.  The arrays buffer and node objects fill grow by doubling,
 * and each doubling the allocator cannot make in place (below glibc's
 * mapping threshold, or at any size where mapping is off, as in the CLI)
 * copies the array into memory never touched before, a page fault a page
 * (the 1M-node layered graph: 42k of its load's 100k faults, 0.1 s of
 * CPU).
 * After PS__JSON_PRESIZE_AT objects each array is reserved for as many
 * elements as the rest of the input would add at the rate read so far,
 * PRESIZE_SLACK more: one copy of a small array, then room that the
 * system backs only where it is written (the load gives back the slack as
 * before).  A wrong guess costs no more than doubling would: an array
 * that outgrows it doubles on, and one reserved too large (the buffers
 * array's, which counts the nodes after it as buffers) is shrunk. */
#define PRESIZE_SLACK 1.125

void
ps__json_presize_begin (const ps__json_loader *ld, uint64_t from, ps__json_counts *at)
{
  const ps_graph *g = ld->g;
  *at = (ps__json_counts) { .from = from, .buffers = g->n_buffers, .nodes = g->n_nodes,
                            .access = g->n_access, .kernels = g->n_kernels, .kargs = g->n_kargs,
                            .strings = g->strings_len, .refs = ld->n_refs,
                            .refpool = ld->refpool_len, .after = ld->n_after };
}

/* Room for `now` elements and (now - then) x scale more. */
static void
presize (void *arrp, uint32_t *cap, uint32_t now, uint32_t then, double scale, size_t elem,
         uint64_t limit)
{
  double want = (double) now + (double) (now - then) * scale;
  if (now <= then || !(want < (double) limit))
    return;
  (void) ps__array_reserve (arrp, cap, (uint64_t) want, elem, limit);
}

void
ps__json_presize (ps__json_loader *ld, const ps__json_counts *at)
{
  ps_graph *g = ld->g;
  uint64_t off = ld->r.offset;
  if (!ld->data || off <= at->from || off >= ld->data_len)
    return;
  double scale = (double) (ld->data_len - off) / (double) (off - at->from) * PRESIZE_SLACK;
  presize (&g->buffers, &ld->cap_buffers, g->n_buffers, at->buffers, scale, sizeof *g->buffers,
           PS_MAX_BUFFERS);
  presize (&g->nodes, &ld->cap_nodes, g->n_nodes, at->nodes, scale, sizeof *g->nodes,
           PS_MAX_NODES);
  presize (&g->access, &ld->cap_access, g->n_access, at->access, scale, sizeof *g->access,
           PS_ARRAY_MAX);
  presize (&g->kernels, &ld->cap_kernels, g->n_kernels, at->kernels, scale, sizeof *g->kernels,
           PS_MAX_NODES);
  presize (&g->kargs, &ld->cap_kargs, g->n_kargs, at->kargs, scale, sizeof *g->kargs,
           PS_ARRAY_MAX);
  presize (&g->strings, &g->strings_cap, g->strings_len, at->strings, scale, 1, PS_ARRAY_MAX);
  presize (&ld->refs, &ld->cap_refs, ld->n_refs, at->refs, scale, sizeof *ld->refs,
           PS_ARRAY_MAX);
  presize (&ld->refpool, &ld->refpool_cap, ld->refpool_len, at->refpool, scale, 1,
           PS_ARRAY_MAX);
  presize (&ld->after_pairs, &ld->cap_after, ld->n_after, at->after, scale,
           sizeof *ld->after_pairs, PS_ARRAY_MAX);
}
