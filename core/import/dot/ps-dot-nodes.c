/* ps-dot-nodes.c: what each node of a cudaGraphDebugDotPrint dump is:
 * kernels with their names and launch configurations, copies (kind and
 * extent), memsets, host callbacks, empty nodes, event records and waits
 * (events paired by handle), child-graph launches, conditionals (IF,
 * WHILE, SWITCH) with the body graphs they name, and node types planscope
 * does not model (kept as opaque nodes, one warning per type).
 * The labels are read by ps-dot-label.c. */
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-dot-import-private.h"

static int
name_intern (ps__dot_importer *im, const char *s, size_t n, uint32_t *off)
{
  uint64_t need = (uint64_t) im->names_len + n + 1;
  if (need >= UINT32_MAX)
    return PS_ELIMIT;
  int ret = ps_array_grow (&im->names, &im->names_cap, need, 1, PS_ARRAY_MAX);
  if (ret < 0)
    return ret;
  memcpy (im->names + im->names_len, s, n);
  im->names[im->names_len + n] = '\0';
  *off = im->names_len;
  im->names_len += (uint32_t) n + 1;
  return 0;
}

/* Registers `name` for graph index gi unless a graph has it already. */
static int
name_add (ps__dot_importer *im, const char *s, size_t n, uint32_t gi)
{
  if (n == 0 || memchr (s, '\0', n))
    return 0;
  uint32_t h = ps__strmap_hash (s, n);
  if (ps__strmap_find (&im->name_map, im->names, s, n, h) != UINT32_MAX)
    return 0;
  uint32_t off;
  int ret = name_intern (im, s, n, &off);
  return ret < 0 ? ret : ps__strmap_insert (&im->name_map, off, h, gi);
}

static uint32_t
graph_by_name (const ps__dot_importer *im, const char *s, size_t n)
{
  return ps__strmap_find (&im->name_map, im->names, s, n, ps__strmap_hash (s, n));
}

/* Names every cluster: its label, its id, and "graph_N" for "cluster_N". */
int
ps__dot_name_graphs (ps__dot_importer *im)
{
  ps__dot_doc *d = &im->doc;
  char buf[PS_MAX_NAME + 16];
  for (uint32_t c = 0; c < d->n_clusters; c++) {
    const ps__dot_cluster *cl = &d->clusters[c];
    const char *id = d->pool + cl->id;
    size_t n = 0;
    if (cl->label.set && cl->label.len <= PS_MAX_NAME) {
      n = ps__dot_span_text (d, cl->label, buf, sizeof buf);
      while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\n'))
        n--;
    }
    if (n == 0) {
      n = strlen (id);
      memcpy (buf, id, n);
    }
    int ret = name_intern (im, buf, n, &im->graphs[c].name);
    if (ret == 0)
      ret = name_add (im, buf, n, c);
    if (ret == 0)
      ret = name_add (im, id, strlen (id), c);
    if (ret == 0 && strncmp (id, "cluster_", 8) == 0) {
      int k = snprintf (buf, sizeof buf, "graph_%s", id + 8);
      ret = name_add (im, buf, (size_t) k < sizeof buf ? (size_t) k : 0, c);
    }
    if (ret < 0)
      return ret;
  }
  return name_intern (im, "(top level)", 11, &im->graphs[d->n_clusters].name);
}

static int
event_id (ps__dot_importer *im, const char *s, size_t n, uint32_t *out)
{
  ps_graph *g = im->g;
  uint32_t off;
  int ret = ps__graph_intern (g, s, n, &off);
  if (ret < 0)
    return ret;
  uint32_t h = ps__strmap_hash (s, n);
  uint32_t found = ps__strmap_find (&im->event_map, g->strings, s, n, h);
  if (found != UINT32_MAX) {
    g->strings_len = off; /* drop the copy */
    *out = found;
    return 0;
  }
  ret = ps_array_grow (&g->event_names, &im->cap_events, (uint64_t) g->n_events + 1,
                       sizeof *g->event_names, PS_MAX_NODES);
  if (ret == 0)
    ret = ps__strmap_insert (&im->event_map, off, h, g->n_events);
  if (ret < 0)
    return ret;
  g->event_names[g->n_events] = off;
  *out = g->n_events++;
  return 0;
}

static int
warn_unknown_type (ps__dot_importer *im, const ps__dot_node *nd, const char *type, size_t n)
{
  ps_graph *g = im->g;
  for (uint32_t i = 0; i < im->n_unknown; i++)
    if (strlen (g->strings + im->unknown_types[i]) == n
        && memcmp (g->strings + im->unknown_types[i], type, n) == 0)
      return 0;
  char q[80];
  ps_quote_text (q, sizeof q, type, n);
  ps_diag_warn (im->diag, nd->line, nd->col,
                "node \"%s\": node type \"%s\" is not modelled; kept as an opaque node "
                "(further nodes of this type are not reported)",
                im->doc.pool + nd->id, q);
  if (im->n_unknown < 16)
    return ps__graph_intern (g, type, n, &im->unknown_types[im->n_unknown++]);
  return 0;
}

static bool
is_type (const char *s, size_t n, const char *t)
{
  return strlen (t) == n && memcmp (s, t, n) == 0;
}

static void
memcpy_dir (const ps__label *l, ps__dot_info *in)
{
  uint32_t f = ps__label_value (l, "kind");
  const char *s = l->plain;
  size_t n = l->plain_len;
  if (f != PS_NONE)
    s = ps__label_field_text (l, f, &n);
  char buf[256];
  size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
  memcpy (buf, s, k);
  buf[k] = '\0';
  if (strstr (buf, "HtoD") || strstr (buf, "HostToDevice"))
    in->dir = PS_COPY_H2D;
  else if (strstr (buf, "DtoH") || strstr (buf, "DeviceToHost"))
    in->dir = PS_COPY_D2H;
  else if (strstr (buf, "PtoP") || strstr (buf, "Peer"))
    in->dir = PS_COPY_P2P;
  else
    in->dir = PS_COPY_D2D;
  uint64_t w = 0, h = 1, dpt = 1;
  if (!ps__label_value_u64 (l, "Width", &w) && !ps__label_value_u64 (l, "bytes", &w))
    w = 0;
  if (!ps__label_value_u64 (l, "Height", &h) || h == 0)
    h = 1;
  if (!ps__label_value_u64 (l, "Depth", &dpt) || dpt == 0)
    dpt = 1;
  uint64_t bytes = w;
  bytes = h && bytes > PS_MAX_BUFFER_BYTES / h ? PS_MAX_BUFFER_BYTES : bytes * h;
  bytes = bytes > PS_MAX_BUFFER_BYTES / dpt ? PS_MAX_BUFFER_BYTES : bytes * dpt;
  in->bytes = bytes;
}

static void
memset_params (const ps__label *l, ps__dot_info *in)
{
  uint64_t w = 0, h = 1, es = 1, v = 0;
  if (!ps__label_value_u64 (l, "width", &w))
    w = 0;
  if (!ps__label_value_u64 (l, "height", &h) || h == 0)
    h = 1;
  if (!ps__label_value_u64 (l, "elementSize", &es) || es == 0)
    es = 1;
  if (ps__label_value_u64 (l, "value", &v))
    in->value = (uint8_t) (v & 0xff);
  uint64_t bytes = w > PS_MAX_BUFFER_BYTES / es ? PS_MAX_BUFFER_BYTES : w * es;
  in->bytes = bytes > PS_MAX_BUFFER_BYTES / h ? PS_MAX_BUFFER_BYTES : bytes * h;
}

static int
kernel_params (ps__dot_importer *im, const ps__dot_node *nd, const ps__label *l, ps__dot_info *in,
               const char *fallback, size_t fallback_len)
{
  const char *name = fallback;
  size_t n = fallback_len;
  uint32_t *k = in->kernel;
  k[0] = k[1] = k[2] = k[3] = k[4] = k[5] = 1;
  k[6] = 0;
  const char *lname;
  size_t lname_len;
  int r = ps__label_launch (l, &lname, &lname_len, k, k + 3, k + 6);
  in->launch = r > 0;
  if (r != 0 && lname_len > 0) {
    name = lname;
    n = lname_len;
  }
  if (r < 0) {
    k[0] = k[1] = k[2] = k[3] = k[4] = k[5] = 1;
    k[6] = 0;
    ps_diag_warn (im->diag, nd->line, nd->col,
                  "node \"%s\": cannot read the launch configuration <<<grid,block,smem>>>; "
                  "using <<<1,1,0>>>",
                  im->doc.pool + nd->id);
  }
  if (n == 0) {
    name = "kernel";
    n = 6;
  }
  if (n > PS_MAX_NAME)
    n = PS_MAX_NAME;
  return ps__graph_intern (im->g, name, n, &in->str);
}

static bool
is_alnum (char c)
{
  return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9');
}

/* Whether word w (upper case) is in s[0..n), in any case, ending a word
 * and either starting one or following "TYPE": "{type | WHILE}",
 * "CU_GRAPH_COND_TYPE_WHILE" and "cudaGraphCondTypeWhile" count, "AWHILE"
 * does not. */
static bool
has_word (const char *s, size_t n, const char *w)
{
  size_t wn = strlen (w);
  for (size_t i = 0; i + wn <= n; i++) {
    size_t k = 0;
    while (k < wn && (s[i + k] & ~0x20) == w[k])
      k++;
    if (k < wn || (i + wn < n && is_alnum (s[i + wn])))
      continue;
    if (i == 0 || !is_alnum (s[i - 1]))
      return true;
    if (i >= 4 && (s[i - 4] & ~0x20) == 'T' && (s[i - 3] & ~0x20) == 'Y'
        && (s[i - 2] & ~0x20) == 'P' && (s[i - 1] & ~0x20) == 'E')
      return true;
  }
  return false;
}

static int
add_body (ps__dot_importer *im, uint32_t gi)
{
  int ret = ps_array_grow (&im->bodies, &im->cap_bodies, (uint64_t) im->n_bodies + 1,
                           sizeof *im->bodies, PS__DOT_LIMIT);
  if (ret == 0)
    im->bodies[im->n_bodies++] = gi;
  return ret;
}

/* A conditional node: its type (IF, WHILE or SWITCH: the "type" field of a
 * verbose dump, else the word in its label), its handle (the condition it
 * tests), and its body graphs, named in its label as child graphs are
 * ("graph_N"), in order: an IF's then and else, a SWITCH's cases. */
static int
conditional_params (ps__dot_importer *im, const ps__dot_node *nd, const ps__label *l,
                    ps__dot_info *in)
{
  const char *id = im->doc.pool + nd->id;
  in->kind = PS__DOT_COND;
  const char *t = l->plain;
  size_t tn = l->plain_len;
  uint32_t f = ps__label_value (l, "type");
  if (f != PS_NONE)
    t = ps__label_field_text (l, f, &tn);
  if (has_word (t, tn, "WHILE"))
    in->ctype = PS_COND_WHILE;
  else if (has_word (t, tn, "SWITCH"))
    in->ctype = PS_COND_SWITCH;
  else if (has_word (t, tn, "IF"))
    in->ctype = PS_COND_IF;
  else {
    in->ctype = PS_COND_IF;
    ps_diag_warn (im->diag, nd->line, nd->col,
                  "conditional node \"%s\": its type (IF, WHILE or SWITCH) is not in the dump; "
                  "modelled as IF",
                  id);
  }

  static const char *const handle_keys[] = { "handle", "conditional handle", "condition handle",
                                              "cond handle" };
  in->str = PS_NONE;
  for (size_t k = 0; k < sizeof handle_keys / sizeof handle_keys[0] && in->str == PS_NONE; k++) {
    f = ps__label_value (l, handle_keys[k]);
    size_t hn;
    const char *h = f != PS_NONE ? ps__label_field_text (l, f, &hn) : NULL;
    if (h && hn > 0 && hn <= 64 && !memchr (h, '\0', hn)) {
      char name[80];
      int k2 = snprintf (name, sizeof name, "handle %.*s", (int) hn, h);
      int ret = ps__graph_intern (im->g, name, (size_t) k2, &in->str);
      if (ret < 0)
        return ret;
    }
  }

  /* The body graphs: every "graph_N" the label names (not "graph_N_node_M"). */
  in->body_begin = im->n_bodies;
  for (const char *s = strstr (l->plain, "graph_"); s; s = strstr (s + 6, "graph_")) {
    size_t k = 6;
    while (s[k] >= '0' && s[k] <= '9')
      k++;
    if (k == 6 || s[k] == '_' || (s > l->plain && (s[-1] == '_' || is_alnum (s[-1]))))
      continue;
    uint32_t gi = graph_by_name (im, s, k);
    if (gi == PS_NONE)
      continue;
    for (uint32_t b = in->body_begin; b < im->n_bodies; b++)
      if (im->bodies[b] == gi) {
        char msg[160];
        snprintf (msg, sizeof msg, "conditional node \"%.64s\" names body graph %.*s twice", id,
                  (int) k, s);
        im->errors++;
        ps_diag_error (im->diag, nd->line, nd->col, "%s", msg);
        return PS_EINVAL;
      }
    int ret = add_body (im, gi);
    if (ret < 0)
      return ret;
  }
  in->body_count = im->n_bodies - in->body_begin;

  uint64_t size = 0;
  bool sized = ps__label_value_u64 (l, "size", &size);
  uint32_t most = in->ctype == PS_COND_WHILE ? 1 : in->ctype == PS_COND_IF ? 2 : UINT32_MAX;
  if (in->body_count == 0)
    ps_diag_warn (im->diag, nd->line, nd->col,
                  "conditional node \"%s\" names no body graph of the dump; its body is "
                  "modelled as empty",
                  id);
  else if (in->body_count > most) {
    ps_diag_warn (im->diag, nd->line, nd->col,
                  "conditional node \"%s\": %s names %u body graphs; the first %u kept", id,
                  in->ctype == PS_COND_WHILE ? "a WHILE" : "an IF", in->body_count, most);
    im->n_bodies = in->body_begin + most;
    in->body_count = most;
  } else if (sized && size != in->body_count)
    ps_diag_warn (im->diag, nd->line, nd->col,
                  "conditional node \"%s\" has %llu body graphs and the dump names %u; the "
                  "others are modelled as empty",
                  id, (unsigned long long) size, in->body_count);
  return 0;
}

/* Decides what DOT node i is. */
int
ps__dot_interpret (ps__dot_importer *im, uint32_t i, char **buf, size_t *cap)
{
  const ps__dot_node *nd = &im->doc.nodes[i];
  ps__dot_info *in = &im->info[i];
  in->kind = PS__DOT_OPAQUE;
  in->str = PS_NONE;
  in->child = PS_NONE;
  in->event = PS_NONE;
  in->body_begin = in->body_count = 0;
  size_t need = (size_t) nd->label.len + 1;
  if (need > *cap) {
    char *nb = realloc (*buf, need);
    if (!nb)
      return PS_ENOMEM;
    *buf = nb;
    *cap = need;
  }
  size_t n = nd->label.set ? ps__dot_span_text (&im->doc, nd->label, *buf, *cap) : 0;
  (*buf)[n] = '\0';
  char shape[32] = "";
  if (nd->shape.set && nd->shape.len < sizeof shape)
    ps__dot_span_text (&im->doc, nd->shape, shape, sizeof shape);

  ps__label l;
  int ret = ps__label_read (&l, *buf, n);
  if (ret < 0)
    return ret;
  const char *type = NULL, *payload = "";
  size_t type_len = 0, payload_len = 0;
  if (l.record) {
    uint32_t f = ps__label_first_leaf (&l);
    if (f != PS_NONE)
      type = ps__label_field_text (&l, f, &type_len);
  } else {
    /* "ID\nPAYLOAD": a node type named on a line of its own wins over the
     * shape. */
    ps__label_line (&l, 1, &payload, &payload_len);
    const char *s;
    size_t sn;
    for (uint32_t k = 0; k < 4 && ps__label_line (&l, k, &s, &sn); k++) {
      static const char *const kw[] = { "KERNEL",      "MEMCPY",     "MEMSET", "HOST",
                                         "EMPTY",       "EVENT_RECORD", "WAIT_EVENT",
                                         "EVENT_WAIT",  "GRAPH",      "CHILD_GRAPH",
                                         "CONDITIONAL" };
      for (size_t j = 0; j < sizeof kw / sizeof kw[0]; j++)
        if (is_type (s, sn, kw[j])) {
          type = s;
          type_len = sn;
        }
      if (type)
        break;
    }
  }

  if (!type) {
    uint32_t gi = payload_len ? graph_by_name (im, payload, payload_len) : PS_NONE;
    if ((strcmp (shape, "rectangle") == 0 || strcmp (shape, "box") == 0
         || strcmp (shape, "rect") == 0) && gi != PS_NONE) {
      in->kind = PS__DOT_CHILD;
      in->child = gi;
    } else if (strcmp (shape, "octagon") == 0 || strstr (l.plain, "<<<")) {
      in->kind = PS__DOT_KERNEL;
      ret = kernel_params (im, nd, &l, in, payload, payload_len);
    } else {
      const char *t = payload_len ? payload : shape[0] ? shape : "unknown";
      size_t tn = payload_len ? payload_len : strlen (t);
      if (tn > 64)
        tn = 64;
      ret = warn_unknown_type (im, nd, t, tn);
      if (ret == 0)
        ret = ps__graph_intern (im->g, t, tn, &in->str);
    }
  } else if (is_type (type, type_len, "KERNEL")) {
    in->kind = PS__DOT_KERNEL;
    /* Without a launch configuration, the name is the field after the
     * "N (topoId: M)" one, or the line after the type. */
    const char *fb = payload;
    size_t fbn = payload_len;
    uint32_t idf = ps__label_value (&l, "ID");
    if (l.record && idf != PS_NONE && l.fields[idf].next != PS_NONE
        && !l.fields[l.fields[idf].next].group)
      fb = ps__label_field_text (&l, l.fields[idf].next, &fbn);
    else if (!l.record && payload == type)
      ps__label_line (&l, 2, &fb, &fbn);
    ret = kernel_params (im, nd, &l, in, fb, fbn);
  } else if (is_type (type, type_len, "MEMCPY")) {
    in->kind = PS__DOT_MEMCPY;
    memcpy_dir (&l, in);
  } else if (is_type (type, type_len, "MEMSET")) {
    in->kind = PS__DOT_MEMSET;
    memset_params (&l, in);
  } else if (is_type (type, type_len, "HOST")) {
    in->kind = PS__DOT_HOST;
  } else if (is_type (type, type_len, "EMPTY")) {
    in->kind = PS__DOT_EMPTY;
  } else if (is_type (type, type_len, "EVENT_RECORD") || is_type (type, type_len, "WAIT_EVENT")
             || is_type (type, type_len, "EVENT_WAIT")) {
    in->kind = type[0] == 'E' && type[6] == 'R' ? PS__DOT_RECORD : PS__DOT_WAIT;
    uint32_t f = ps__label_value (&l, "event");
    if (f == PS_NONE)
      f = ps__label_value (&l, "event handle");
    size_t en;
    const char *e;
    char own[PS_MAX_NAME + 16];
    if (f != PS_NONE) {
      e = ps__label_field_text (&l, f, &en);
    } else {
      /* No handle in the dump: an event of this node alone. */
      int k = snprintf (own, sizeof own, "%s", im->doc.pool + nd->id);
      e = own;
      en = (size_t) k < sizeof own ? (size_t) k : sizeof own - 1;
    }
    ret = event_id (im, e, en > PS_MAX_NAME ? PS_MAX_NAME : en, &in->event);
  } else if (is_type (type, type_len, "GRAPH") || is_type (type, type_len, "CHILD_GRAPH")) {
    /* The child graph is named somewhere in the label. */
    const char *s = strstr (l.plain, "graph_");
    while (s) {
      size_t k = 6;
      while (s[k] >= '0' && s[k] <= '9')
        k++;
      uint32_t gi = graph_by_name (im, s, k);
      if (gi != PS_NONE) {
        in->kind = PS__DOT_CHILD;
        in->child = gi;
        break;
      }
      s = strstr (s + 6, "graph_");
    }
    if (in->kind != PS__DOT_CHILD) {
      ret = warn_unknown_type (im, nd, "GRAPH (child graph not in the dump)", 35);
      if (ret == 0)
        ret = ps__graph_intern (im->g, "GRAPH", 5, &in->str);
    }
  } else if (is_type (type, type_len, "CONDITIONAL")) {
    ret = conditional_params (im, nd, &l, in);
  } else {
    size_t tn = type_len > 64 ? 64 : type_len;
    ret = warn_unknown_type (im, nd, type, tn);
    if (ret == 0)
      ret = ps__graph_intern (im->g, type, tn, &in->str);
  }
  ps__label_free (&l);
  return ret;
}

