/* ps-dot-parse.c: a small reader for the DOT language, enough for what
 * cudaGraphDebugDotPrint writes and for hand-edited dumps: `digraph`,
 * nested subgraphs and clusters, node, edge and attribute statements,
 * quoted, HTML and bare identifiers, ports, and comments.
 *
 * Subgraphs are tracked with an explicit stack (no recursion an input can
 * drive deep), and every error is located: FILE:LINE:COL. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-dot-private.h"
#include "ps-graph.h"

#define MAX_DEPTH 256

typedef enum tok_kind {
  T_EOF = 0,
  T_ID,   /* a bare identifier or a number */
  T_STR,  /* a quoted string; the span excludes the quotes */
  T_HTML, /* <...>; the span excludes the outer brackets */
  T_LBRACE,
  T_RBRACE,
  T_LBRACK,
  T_RBRACK,
  T_SEMI,
  T_COMMA,
  T_EQ,
  T_ARROW,
  T_DASH2,
  T_COLON,
  T_PLUS,
  T_ERROR,
} tok_kind;

typedef struct tok {
  tok_kind k;
  uint32_t off, len;
  uint32_t line, col;
} tok;

typedef struct parser {
  ps__dot_doc *d;
  ps_diag *diag;
  const char *s;
  size_t len, pos, line_start;
  uint32_t line;
  tok cur, next;
  bool has_next;
  bool failed; /* an error was recorded */
  char *scratch;
  size_t scratch_cap;
} parser;

static int
syntax (parser *p, uint32_t line, uint32_t col, const char *msg)
{
  if (!p->failed)
    ps_diag_error (p->diag, line, col, "%s", msg);
  p->failed = true;
  return PS_ESYNTAX;
}

static bool
id_start (unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool
id_char (unsigned char c)
{
  return id_start (c) || (c >= '0' && c <= '9');
}

/* Skips white space and comments; returns PS_ESYNTAX on an unterminated
 * comment. */
static int
skip_space (parser *p)
{
  while (p->pos < p->len) {
    char c = p->s[p->pos];
    if (c == '\n') {
      p->pos++;
      p->line++;
      p->line_start = p->pos;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      p->pos++;
    } else if (c == '#' && p->pos == p->line_start) {
      while (p->pos < p->len && p->s[p->pos] != '\n')
        p->pos++;
    } else if (c == '/' && p->pos + 1 < p->len && p->s[p->pos + 1] == '/') {
      while (p->pos < p->len && p->s[p->pos] != '\n')
        p->pos++;
    } else if (c == '/' && p->pos + 1 < p->len && p->s[p->pos + 1] == '*') {
      uint32_t line = p->line, col = (uint32_t) (p->pos - p->line_start + 1);
      p->pos += 2;
      for (;;) {
        if (p->pos + 1 >= p->len) {
          p->pos = p->len;
          return syntax (p, line, col, "unterminated comment");
        }
        if (p->s[p->pos] == '*' && p->s[p->pos + 1] == '/') {
          p->pos += 2;
          break;
        }
        if (p->s[p->pos] == '\n') {
          p->line++;
          p->line_start = p->pos + 1;
        }
        p->pos++;
      }
    } else {
      break;
    }
  }
  return 0;
}

static tok
lex (parser *p)
{
  tok t = { T_EOF, 0, 0, 0, 0 };
  if (skip_space (p) < 0) {
    t.k = T_ERROR;
    return t;
  }
  t.line = p->line;
  t.col = (uint32_t) (p->pos - p->line_start + 1);
  t.off = (uint32_t) p->pos;
  if (p->pos >= p->len)
    return t;
  unsigned char c = (unsigned char) p->s[p->pos];
  static const char punct[] = "{}[];,=:+";
  static const tok_kind punct_kind[] = { T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK, T_SEMI,
                                         T_COMMA,  T_EQ,     T_COLON,  T_PLUS };
  const char *pc = c ? strchr (punct, c) : NULL;
  if (pc) {
    t.k = punct_kind[pc - punct];
    t.len = 1;
    p->pos++;
    return t;
  }
  if (c == '-' && p->pos + 1 < p->len && (p->s[p->pos + 1] == '>' || p->s[p->pos + 1] == '-')) {
    t.k = p->s[p->pos + 1] == '>' ? T_ARROW : T_DASH2;
    t.len = 2;
    p->pos += 2;
    return t;
  }
  if (c == '"') {
    size_t i = p->pos + 1;
    uint32_t line = p->line;
    size_t line_start = p->line_start;
    while (i < p->len && p->s[i] != '"') {
      if (p->s[i] == '\\' && i + 1 < p->len)
        i++;
      if (p->s[i] == '\n') {
        line++;
        line_start = i + 1;
      }
      i++;
    }
    if (i >= p->len) {
      syntax (p, t.line, t.col, "unterminated quoted string");
      t.k = T_ERROR;
      return t;
    }
    t.k = T_STR;
    t.off = (uint32_t) (p->pos + 1);
    t.len = (uint32_t) (i - p->pos - 1);
    p->pos = i + 1;
    p->line = line;
    p->line_start = line_start;
    return t;
  }
  if (c == '<') {
    size_t i = p->pos + 1;
    int depth = 1;
    while (i < p->len && depth > 0) {
      if (p->s[i] == '<')
        depth++;
      else if (p->s[i] == '>')
        depth--;
      else if (p->s[i] == '\n') {
        p->line++;
        p->line_start = i + 1;
      }
      i++;
    }
    if (depth > 0) {
      syntax (p, t.line, t.col, "unterminated HTML string");
      t.k = T_ERROR;
      return t;
    }
    t.k = T_HTML;
    t.off = (uint32_t) (p->pos + 1);
    t.len = (uint32_t) (i - p->pos - 2);
    p->pos = i;
    return t;
  }
  if (c == '-' || c == '.' || (c >= '0' && c <= '9')) {
    size_t i = p->pos + (c == '-');
    bool digits = false, dot = false;
    while (i < p->len) {
      char ch = p->s[i];
      if (ch >= '0' && ch <= '9')
        digits = true;
      else if (ch == '.' && !dot)
        dot = true;
      else
        break;
      i++;
    }
    if (digits) {
      t.k = T_ID;
      t.len = (uint32_t) (i - p->pos);
      p->pos = i;
      return t;
    }
  } else if (id_start (c)) {
    size_t i = p->pos;
    while (i < p->len && id_char ((unsigned char) p->s[i]))
      i++;
    t.k = T_ID;
    t.len = (uint32_t) (i - p->pos);
    p->pos = i;
    return t;
  }
  char what[8], msg[48];
  ps_quote_text (what, sizeof what, p->s + p->pos, 1);
  snprintf (msg, sizeof msg, "unexpected character '%s'", what);
  syntax (p, t.line, t.col, msg);
  t.k = T_ERROR;
  return t;
}

static tok
next (parser *p)
{
  if (p->has_next) {
    p->has_next = false;
    p->cur = p->next;
  } else {
    p->cur = lex (p);
  }
  return p->cur;
}

static tok
peek (parser *p)
{
  if (!p->has_next) {
    p->next = lex (p);
    p->has_next = true;
  }
  return p->next;
}

static bool
is_keyword (const parser *p, tok t, const char *kw)
{
  size_t n = strlen (kw);
  if (t.k != T_ID || t.len != n)
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = p->s[t.off + i];
    if (c >= 'A' && c <= 'Z')
      c = (char) (c - 'A' + 'a');
    if (c != kw[i])
      return false;
  }
  return true;
}

static bool
is_value (tok t)
{
  return t.k == T_ID || t.k == T_STR || t.k == T_HTML;
}

/* "'x'" for messages. */
static const char *
describe (parser *p, tok t, char *buf, size_t cap)
{
  if (t.k == T_EOF)
    return "the end of the file";
  char q[48];
  ps_quote_text (q, sizeof q, p->s + t.off, t.len > 40 ? 40 : t.len);
  snprintf (buf, cap, "'%s%s'", q, t.len > 40 ? "..." : "");
  return buf;
}

static int
expected (parser *p, tok t, const char *what)
{
  if (t.k == T_ERROR)
    return PS_ESYNTAX;
  char buf[64], msg[160];
  snprintf (msg, sizeof msg, "expected %s, got %s", what, describe (p, t, buf, sizeof buf));
  return syntax (p, t.line, t.col, msg);
}

size_t
ps__dot_span_text (const ps__dot_doc *d, ps__dot_span s, char *out, size_t cap)
{
  size_t n = 0;
  if (cap == 0)
    return 0;
  const char *t = d->data + s.off;
  for (uint32_t i = 0; i < s.len && n + 1 < cap; i++) {
    if (t[i] == '\\' && i + 1 < s.len) {
      if (t[i + 1] == '"') {
        out[n++] = '"';
        i++;
        continue;
      }
      if (t[i + 1] == '\n') {
        i++;
        continue;
      }
      if (t[i + 1] == '\r' && i + 2 < s.len && t[i + 2] == '\n') {
        i += 2;
        continue;
      }
    }
    out[n++] = t[i];
  }
  out[n] = '\0';
  return n;
}

/* Interns the text of an id token in the document's pool. */
static int
intern_id (parser *p, tok t, uint32_t *off)
{
  if (t.len > PS_MAX_NAME) {
    char msg[96];
    snprintf (msg, sizeof msg, "identifier longer than %u bytes", (unsigned) PS_MAX_NAME);
    return syntax (p, t.line, t.col, msg);
  }
  ps__dot_span s = { t.off, t.len, 1 };
  size_t n = t.k == T_STR ? ps__dot_span_text (p->d, s, p->scratch, p->scratch_cap)
                          : (memcpy (p->scratch, p->s + t.off, t.len), t.len);
  if (memchr (p->scratch, '\0', n))
    return syntax (p, t.line, t.col, "identifier contains a NUL byte");
  uint64_t need = (uint64_t) p->d->pool_len + n + 1;
  if (need >= UINT32_MAX)
    return PS_ELIMIT;
  int ret = ps_array_grow (&p->d->pool, &p->d->pool_cap, need, 1, PS_ARRAY_MAX);
  if (ret < 0)
    return ret;
  memcpy (p->d->pool + p->d->pool_len, p->scratch, n);
  p->d->pool[p->d->pool_len + n] = '\0';
  *off = p->d->pool_len;
  p->d->pool_len += (uint32_t) n + 1;
  return 0;
}

/* The node named by token t, created in `cluster` when new. */
static int
node_ref (parser *p, tok t, uint32_t cluster, uint32_t *index)
{
  ps__dot_doc *d = p->d;
  uint32_t off;
  int ret = intern_id (p, t, &off);
  if (ret < 0)
    return ret;
  const char *name = d->pool + off;
  size_t n = strlen (name);
  uint32_t h = ps__strmap_hash (name, n);
  uint32_t found = ps__strmap_find (&d->node_map, d->pool, name, n, h);
  if (found != UINT32_MAX) {
    d->pool_len = off; /* drop the copy */
    *index = found;
    return 0;
  }
  if (d->n_nodes >= PS_MAX_NODES)
    return syntax (p, t.line, t.col, "too many nodes");
  ret = ps_array_grow (&d->nodes, &d->cap_nodes, (uint64_t) d->n_nodes + 1,
                       sizeof *d->nodes, PS_MAX_NODES);
  if (ret == 0)
    ret = ps__strmap_insert (&d->node_map, off, h, d->n_nodes);
  if (ret < 0)
    return ret;
  ps__dot_node *nd = &d->nodes[d->n_nodes];
  memset (nd, 0, sizeof *nd);
  nd->id = off;
  nd->cluster = cluster;
  nd->line = t.line;
  nd->col = t.col;
  *index = d->n_nodes++;
  return 0;
}

/* Skips ":port[:compass]" after a node id. */
static int
skip_port (parser *p)
{
  for (int i = 0; i < 2 && peek (p).k == T_COLON; i++) {
    next (p);
    tok t = next (p);
    if (!is_value (t))
      return expected (p, t, "a port name");
  }
  return 0;
}

typedef enum attr_target { AT_NONE, AT_NODE, AT_CLUSTER } attr_target;

/* Applies key=value to a node or cluster (the attributes the ps__dot_importer
 * reads); others are ignored. */
static void
apply_attr (parser *p, attr_target target, uint32_t index, tok key, tok val)
{
  ps__dot_span s = { val.off, val.len, 1 };
  if (target == AT_NODE) {
    ps__dot_node *nd = &p->d->nodes[index];
    if (is_keyword (p, key, "label"))
      nd->label = s;
    else if (is_keyword (p, key, "shape"))
      nd->shape = s;
    else if (is_keyword (p, key, "style"))
      nd->style = s;
  } else if (target == AT_CLUSTER && is_keyword (p, key, "label")) {
    p->d->clusters[index].label = s;
  }
}

/* Reads one or more [ a=b, c=d ] lists; the current token is the first '['. */
static int
attr_lists (parser *p, attr_target target, uint32_t index)
{
  while (p->cur.k == T_LBRACK) {
    for (;;) {
      tok key = next (p);
      if (key.k == T_RBRACK)
        break;
      if (key.k == T_SEMI || key.k == T_COMMA)
        continue;
      if (!is_value (key))
        return expected (p, key, "an attribute name or ']'");
      tok eq = next (p);
      if (eq.k != T_EQ)
        return expected (p, eq, "'='");
      tok val = next (p);
      if (!is_value (val))
        return expected (p, val, "an attribute value");
      if (peek (p).k == T_PLUS)
        return syntax (p, p->next.line, p->next.col,
                       "string concatenation with '+' is not supported");
      apply_attr (p, target, index, key, val);
    }
    if (peek (p).k != T_LBRACK)
      break;
    next (p);
  }
  return 0;
}

static int
add_edge (parser *p, uint32_t from, uint32_t to, tok at)
{
  ps__dot_doc *d = p->d;
  if (d->n_edges >= PS_MAX_EDGES)
    return syntax (p, at.line, at.col, "too many edges");
  int ret = ps_array_grow (&d->edges, &d->cap_edges, (uint64_t) d->n_edges + 1,
                           sizeof *d->edges, PS_MAX_EDGES);
  if (ret < 0)
    return ret;
  d->edges[d->n_edges++] = (ps__dot_edge){ from, to, at.line, at.col };
  return 0;
}

static int
open_subgraph (parser *p, tok at, tok id, bool has_id, uint32_t *cluster)
{
  ps__dot_doc *d = p->d;
  if (!has_id || id.len < 7 || strncmp (p->s + id.off, "cluster", 7) != 0)
    return 0; /* not a cluster: its nodes belong to the enclosing one */
  uint32_t off;
  int ret = intern_id (p, id, &off);
  if (ret == 0)
    ret = ps_array_grow (&d->clusters, &d->cap_clusters, (uint64_t) d->n_clusters + 1,
                         sizeof *d->clusters, PS_MAX_NODES);
  if (ret < 0)
    return ret;
  ps__dot_cluster *c = &d->clusters[d->n_clusters];
  memset (c, 0, sizeof *c);
  c->id = off;
  c->parent = *cluster;
  c->line = at.line;
  c->col = at.col;
  *cluster = d->n_clusters++;
  return 0;
}

static int
parse_body (parser *p)
{
  /* stack[i]: the cluster nodes named at depth i belong to. */
  uint32_t stack[MAX_DEPTH];
  int depth = 0;
  stack[0] = PS_NONE;
  for (uint32_t statements = 1;; statements++) {
    /* A long parse can be stopped by its caller between statements. */
    if (statements % 4096 == 0) {
      int ret = ps_diag_progress (p->diag, "parse", (double) p->pos / (double) p->len);
      if (ret < 0)
        return ret;
    }
    tok t = next (p);
    uint32_t cluster = stack[depth];
    if (t.k == T_ERROR)
      return PS_ESYNTAX;
    if (t.k == T_EOF)
      return expected (p, t, "'}'");
    if (t.k == T_SEMI || t.k == T_COMMA)
      continue;
    if (t.k == T_RBRACE) {
      if (depth == 0)
        break;
      depth--;
      if (peek (p).k == T_ARROW || p->next.k == T_DASH2)
        return syntax (p, p->next.line, p->next.col,
                       "edges from or to a subgraph are not supported");
      continue;
    }
    if (is_keyword (p, t, "subgraph") || t.k == T_LBRACE) {
      tok id = t;
      bool has_id = false;
      if (t.k != T_LBRACE) {
        tok n = next (p);
        if (is_value (n)) {
          id = n;
          has_id = true;
          n = next (p);
        }
        if (n.k != T_LBRACE) {
          if (n.k == T_SEMI)
            continue; /* `subgraph x;` names a subgraph without a body */
          return expected (p, n, "'{'");
        }
      }
      if (depth + 1 >= MAX_DEPTH)
        return syntax (p, t.line, t.col, "subgraphs nested more than 256 deep");
      uint32_t c = cluster;
      int ret = open_subgraph (p, t, id, has_id, &c);
      if (ret < 0)
        return ret;
      stack[++depth] = c;
      continue;
    }
    if (is_keyword (p, t, "graph") || is_keyword (p, t, "node") || is_keyword (p, t, "edge")) {
      bool graph = is_keyword (p, t, "graph");
      tok b = next (p);
      if (b.k != T_LBRACK)
        return expected (p, b, "'['");
      int ret = attr_lists (p, graph && cluster != PS_NONE ? AT_CLUSTER : AT_NONE, cluster);
      if (ret < 0)
        return ret;
      continue;
    }
    if (!is_value (t))
      return expected (p, t, "a statement");
    if (peek (p).k == T_EQ) {
      next (p);
      tok val = next (p);
      if (!is_value (val))
        return expected (p, val, "a value");
      apply_attr (p, cluster != PS_NONE ? AT_CLUSTER : AT_NONE, cluster, t, val);
      continue;
    }
    uint32_t from;
    int ret = node_ref (p, t, cluster, &from);
    if (ret == 0)
      ret = skip_port (p);
    if (ret < 0)
      return ret;
    if (peek (p).k == T_DASH2)
      return syntax (p, p->next.line, p->next.col,
                     "'--' is an undirected edge; a CUDA graph dump is a digraph");
    if (peek (p).k != T_ARROW) {
      if (peek (p).k == T_LBRACK) {
        next (p);
        ret = attr_lists (p, AT_NODE, from);
      }
      if (ret < 0)
        return ret;
      continue;
    }
    while (peek (p).k == T_ARROW) {
      tok arrow = next (p);
      tok to_t = next (p);
      if (is_keyword (p, to_t, "subgraph") || to_t.k == T_LBRACE)
        return syntax (p, to_t.line, to_t.col, "edges from or to a subgraph are not supported");
      if (!is_value (to_t))
        return expected (p, to_t, "a node name");
      uint32_t to;
      ret = node_ref (p, to_t, cluster, &to);
      if (ret == 0)
        ret = skip_port (p);
      if (ret == 0)
        ret = add_edge (p, from, to, arrow);
      if (ret < 0)
        return ret;
      from = to;
    }
    if (peek (p).k == T_LBRACK) {
      next (p);
      ret = attr_lists (p, AT_NONE, 0);
      if (ret < 0)
        return ret;
    }
  }
  tok end = next (p);
  if (end.k != T_EOF)
    return expected (p, end, "the end of the file after the graph");
  return 0;
}

int
ps__dot_parse (ps__dot_doc *d, const char *data, size_t len, ps_diag *diag)
{
  memset (d, 0, sizeof *d);
  d->data = data;
  d->graph_id = PS_NONE;
  if (len >= UINT32_MAX) {
    ps_diag_error (diag, 0, 0, "the file is too large for a DOT graph (4 GiB at most)");
    return PS_ELIMIT;
  }
  parser p = { 0 };
  p.d = d;
  p.diag = diag;
  p.s = data;
  p.len = len;
  p.line = 1;
  if (len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    p.pos = p.line_start = 3;
  p.scratch_cap = PS_MAX_NAME * 2 + 2;
  p.scratch = malloc (p.scratch_cap);
  int ret = p.scratch ? ps__strmap_init (&d->node_map, 1024) : PS_ENOMEM;
  if (ret < 0)
    goto out;

  tok t = next (&p);
  if (is_keyword (&p, t, "strict"))
    t = next (&p);
  if (is_keyword (&p, t, "graph")) {
    ret = syntax (&p, t.line, t.col, "an undirected graph; a CUDA graph dump is a 'digraph'");
    goto out;
  }
  if (!is_keyword (&p, t, "digraph")) {
    ret = expected (&p, t, "'digraph'");
    goto out;
  }
  t = next (&p);
  if (is_value (t)) {
    ret = intern_id (&p, t, &d->graph_id);
    if (ret < 0)
      goto out;
    t = next (&p);
  }
  if (t.k != T_LBRACE) {
    ret = expected (&p, t, "'{'");
    goto out;
  }
  ret = parse_body (&p);

out:
  free (p.scratch);
  if (ret < 0 && !p.failed)
    ps_diag_error (diag, 0, 0, "cannot read the DOT graph: %s", ps_strerror (ret));
  if (ret < 0)
    ps__dot_doc_free (d);
  return ret;
}

bool
ps__dot_starts_graph (const char *data, size_t len)
{
  /* The parser's own lexer, recording nothing (failed is set from the
   * start): only the first token is read. */
  parser p = { 0 };
  p.s = data;
  p.len = len;
  p.line = 1;
  p.failed = true;
  if (len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    p.pos = p.line_start = 3;
  tok t = next (&p);
  return is_keyword (&p, t, "strict") || is_keyword (&p, t, "digraph")
         || is_keyword (&p, t, "graph");
}

void
ps__dot_doc_free (ps__dot_doc *d)
{
  free (d->pool);
  free (d->nodes);
  free (d->edges);
  free (d->clusters);
  ps__strmap_free (&d->node_map);
  const char *data = d->data;
  memset (d, 0, sizeof *d);
  d->data = data;
  d->graph_id = PS_NONE;
}
