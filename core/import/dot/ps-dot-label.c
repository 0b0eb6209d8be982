/* ps-dot-label.c: reading what a cudaGraphDebugDotPrint node label says.
 *
 * Verbose dumps write record labels ("{KERNEL | {ID | 0 (topoId: 1) |
 * name\<\<\<grid,block,smem\>\>\>} | ...}"), in which a key sits either
 * next to its value ({kind | DtoD}) or in a row of keys above a row of
 * values ({{ID | node handle} | {2 (topoId: 1) | 0x...}}); default dumps
 * write "ID\nPAYLOAD" with the node type in the shape.  The record is read
 * into a small tree so that both layouts can be searched by key. */
#include "ps-dot-label.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RECORD_DEPTH 64
#define MAX_FIELDS 4096

static int
lower (int c)
{
  return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool
is_space (char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool
text_eq (const char *a, size_t an, const char *b)
{
  size_t bn = strlen (b);
  if (an != bn)
    return false;
  for (size_t i = 0; i < an; i++)
    if (lower ((unsigned char) a[i]) != lower ((unsigned char) b[i]))
      return false;
  return true;
}

void
ps__label_free (ps__label *l)
{
  free (l->plain);
  free (l->text);
  free (l->fields);
  memset (l, 0, sizeof *l);
}

static uint32_t
add_field (ps__label *l, uint32_t parent, bool group, uint32_t off, uint32_t len)
{
  if (l->n_fields >= l->cap_fields)
    return PS_NONE;
  uint32_t i = l->n_fields++;
  ps__label_field *f = &l->fields[i];
  /* Trim the text. */
  while (len > 0 && is_space (l->text[off])) {
    off++;
    len--;
  }
  while (len > 0 && is_space (l->text[off + len - 1]))
    len--;
  f->parent = parent;
  f->first = f->last = f->next = PS_NONE;
  f->off = off;
  f->len = len;
  f->group = group;
  f->n_children = 0;
  if (parent != PS_NONE) {
    ps__label_field *p = &l->fields[parent];
    if (p->last == PS_NONE)
      p->first = i;
    else
      l->fields[p->last].next = i;
    p->last = i;
    p->n_children++;
  }
  return i;
}

/* Reads the record structure of raw label text (escapes still in it). */
static void
parse_record (ps__label *l, const char *raw, size_t n)
{
  uint32_t group = add_field (l, PS_NONE, true, 0, 0);
  uint32_t depth = 0;
  bool field_is_group = false;
  uint32_t start = l->text_len;
  for (size_t i = 0; i < n; i++) {
    char c = raw[i];
    if (c == '\\' && i + 1 < n) {
      char e = raw[++i];
      l->text[l->text_len++] = (e == 'n' || e == 'l' || e == 'r') ? '\n' : e;
      continue;
    }
    if (c == '{' && depth < MAX_RECORD_DEPTH) {
      uint32_t g = add_field (l, group, true, 0, 0);
      if (g == PS_NONE)
        return;
      group = g;
      depth++;
      field_is_group = false;
      start = l->text_len;
    } else if (c == '|' || c == '}') {
      if (!field_is_group && add_field (l, group, false, start, l->text_len - start) == PS_NONE)
        return;
      field_is_group = false;
      if (c == '}' && depth > 0) {
        group = l->fields[group].parent;
        depth--;
        field_is_group = true;
      }
      start = l->text_len;
    } else if (c == '<' && !field_is_group) {
      /* A port name <p>: not part of the text. */
      while (i < n && raw[i] != '>')
        i++;
    } else {
      l->text[l->text_len++] = c;
    }
  }
  if (!field_is_group)
    add_field (l, group, false, start, l->text_len - start);
}

int
ps__label_read (ps__label *l, const char *raw, size_t n)
{
  memset (l, 0, sizeof *l);
  l->plain = malloc (n + 1);
  l->text = malloc (n + 1);
  l->cap_fields = (uint32_t) (n / 2 + 2 < MAX_FIELDS ? n / 2 + 2 : MAX_FIELDS);
  l->fields = malloc ((size_t) l->cap_fields * sizeof *l->fields);
  if (!l->plain || !l->text || !l->fields) {
    ps__label_free (l);
    return PS_ENOMEM;
  }
  /* The plain text: every escape resolved, \n \l \r as line breaks. */
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char c = raw[i];
    if (c == '\\' && i + 1 < n) {
      char e = raw[++i];
      l->plain[k++] = (e == 'n' || e == 'l' || e == 'r') ? '\n' : e;
    } else {
      l->plain[k++] = c;
    }
  }
  l->plain[k] = '\0';
  l->plain_len = k;
  size_t s = 0;
  while (s < n && is_space (raw[s]))
    s++;
  l->record = s < n && raw[s] == '{';
  if (l->record)
    parse_record (l, raw, n);
  return 0;
}

const char *
ps__label_field_text (const ps__label *l, uint32_t f, size_t *len)
{
  *len = l->fields[f].len;
  return l->text + l->fields[f].off;
}

uint32_t
ps__label_first_leaf (const ps__label *l)
{
  for (uint32_t i = 0; i < l->n_fields; i++)
    if (!l->fields[i].group && l->fields[i].len > 0)
      return i;
  return PS_NONE;
}

static uint32_t
child_at (const ps__label *l, uint32_t group, uint32_t index)
{
  uint32_t c = l->fields[group].first;
  for (uint32_t i = 0; c != PS_NONE && i < index; i++)
    c = l->fields[c].next;
  return c;
}

static uint32_t
index_in_parent (const ps__label *l, uint32_t f)
{
  uint32_t p = l->fields[f].parent, i = 0;
  for (uint32_t c = l->fields[p].first; c != PS_NONE && c != f; c = l->fields[c].next)
    i++;
  return i;
}

/* The candidates for a key's value: [0] the field below it when the key
 * sits in a row of keys followed by a row of as many values, [1] the field
 * after it; PS_NONE where there is none. */
static void
candidates (const ps__label *l, const char *key, uint32_t out[2])
{
  out[0] = out[1] = PS_NONE;
  for (uint32_t f = 0; f < l->n_fields; f++) {
    const ps__label_field *lf = &l->fields[f];
    if (lf->group || !text_eq (l->text + lf->off, lf->len, key) || lf->parent == PS_NONE)
      continue;
    uint32_t p = lf->parent;
    uint32_t row = l->fields[p].next;
    if (l->fields[p].parent != PS_NONE && row != PS_NONE && l->fields[row].group
        && l->fields[row].n_children == l->fields[p].n_children) {
      uint32_t v = child_at (l, row, index_in_parent (l, f));
      if (v != PS_NONE && !l->fields[v].group)
        out[0] = v;
    }
    if (lf->next != PS_NONE && !l->fields[lf->next].group)
      out[1] = lf->next;
    return;
  }
}

uint32_t
ps__label_value (const ps__label *l, const char *key)
{
  uint32_t c[2];
  candidates (l, key, c);
  return c[0] != PS_NONE ? c[0] : c[1];
}

/* Strict decimal: digits with optional surrounding spaces. */
static bool
decimal_u64 (const char *s, size_t n, uint64_t *out)
{
  size_t i = 0;
  while (i < n && is_space (s[i]))
    i++;
  uint64_t v = 0;
  size_t digits = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
    unsigned d = (unsigned) (s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  while (i < n && is_space (s[i]))
    i++;
  if (digits == 0 || i != n)
    return false;
  *out = v;
  return true;
}

bool
ps__label_value_u64 (const ps__label *l, const char *key, uint64_t *out)
{
  uint32_t c[2];
  candidates (l, key, c);
  for (int i = 0; i < 2; i++) {
    if (c[i] == PS_NONE)
      continue;
    size_t n;
    const char *s = ps__label_field_text (l, c[i], &n);
    if (decimal_u64 (s, n, out))
      return true;
  }
  return false;
}

/* Reads "N", "{x,y,z}", "(x,y,z)" or "dim3(x,y,z)" into d[3]. */
static bool
parse_dim3 (const char *s, size_t n, uint32_t d[3])
{
  size_t i = 0, e = n;
  while (i < e && is_space (s[i]))
    i++;
  if (e - i >= 4 && memcmp (s + i, "dim3", 4) == 0)
    i += 4;
  while (i < e && (is_space (s[i]) || s[i] == '{' || s[i] == '('))
    i++;
  while (e > i && (is_space (s[e - 1]) || s[e - 1] == '}' || s[e - 1] == ')'))
    e--;
  d[0] = d[1] = d[2] = 1;
  int k = 0;
  while (i <= e && k < 3) {
    size_t j = i;
    while (j < e && s[j] != ',')
      j++;
    uint64_t v;
    if (!decimal_u64 (s + i, j - i, &v) || v < 1 || v > PS_MAX_GRID_DIM)
      return false;
    d[k++] = (uint32_t) v;
    if (j >= e)
      return true;
    i = j + 1;
  }
  return false;
}

int
ps__label_launch (const ps__label *l, const char **name_out, size_t *name_len, uint32_t grid[3],
                  uint32_t block[3], uint32_t *smem)
{
  const char *t = l->plain;
  const char *open = strstr (t, "<<<");
  if (!open)
    return 0;
  const char *close = strstr (open + 3, ">>>");
  /* The name runs back to the field or line it starts. */
  const char *b = open;
  while (b > t && b[-1] != '|' && b[-1] != '{' && b[-1] != '}' && b[-1] != '\n')
    b--;
  while (b < open && is_space (*b))
    b++;
  *name_out = b;
  *name_len = (size_t) (open - b);
  if (!close)
    return -1;
  const char *c = open + 3;
  size_t n = (size_t) (close - c);
  /* Split grid, block, smem at top-level commas. */
  size_t part[4] = { 0 }, np = 0;
  int depth = 0;
  part[np++] = 0;
  for (size_t i = 0; i < n; i++) {
    if (c[i] == '{' || c[i] == '(')
      depth++;
    else if (c[i] == '}' || c[i] == ')')
      depth--;
    else if (c[i] == ',' && depth == 0) {
      if (np == 3)
        return -1;
      part[np++] = i + 1;
    }
  }
  if (np < 2)
    return -1;
  part[np] = n + 1;
  if (!parse_dim3 (c + part[0], part[1] - part[0] - 1, grid)
      || !parse_dim3 (c + part[1], part[2] - part[1] - 1, block))
    return -1;
  *smem = 0;
  if (np == 3) {
    uint64_t v;
    if (!decimal_u64 (c + part[2], part[3] - part[2] - 1, &v) || v > UINT32_MAX)
      return -1;
    *smem = (uint32_t) v;
  }
  return 1;
}

bool
ps__label_line (const ps__label *l, uint32_t index, const char **s, size_t *n)
{
  const char *t = l->plain;
  const char *end = t + l->plain_len;
  for (uint32_t i = 0; i < index; i++) {
    const char *nl = memchr (t, '\n', (size_t) (end - t));
    if (!nl)
      return false;
    t = nl + 1;
  }
  const char *nl = memchr (t, '\n', (size_t) (end - t));
  const char *e = nl ? nl : end;
  while (t < e && is_space (*t))
    t++;
  while (e > t && is_space (e[-1]))
    e--;
  *s = t;
  *n = (size_t) (e - t);
  return true;
}
