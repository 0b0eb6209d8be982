/* ps-dot-private.h: the DOT reader's document, shared by the parser
 * (ps-dot-parse.c) and the CUDA-dump ps__dot_importer (ps-dot-import.c).
 *
 * The parser keeps what the ps__dot_importer needs and nothing else: every node
 * with the raw text of its label, shape and style attributes (spans of the
 * input, not copies, since verbose dumps carry long labels), every edge
 * between two nodes, and every cluster with its label and parent. */
#ifndef PS_DOT_PRIVATE_H
#define PS_DOT_PRIVATE_H

#include <stdint.h>

#include "ps-error.h"
#include "util/ps-strmap.h"

/* A span of the input: the text of a quoted string without its quotes
 * (escapes still in it), of a bare identifier or of an HTML string. */
typedef struct ps__dot_span {
  uint32_t off, len;
  uint8_t set;
} ps__dot_span;

typedef struct ps__dot_node {
  uint32_t id;      /* pool offset of the node's DOT id */
  uint32_t cluster; /* the innermost cluster it was first named in, or PS_NONE */
  ps__dot_span label, shape, style;
  uint32_t line, col;
} ps__dot_node;

typedef struct ps__dot_edge {
  uint32_t from, to; /* node indexes */
  uint32_t line, col;
} ps__dot_edge;

typedef struct ps__dot_cluster {
  uint32_t id;     /* pool offset of the subgraph id ("cluster_1") */
  uint32_t parent; /* enclosing cluster, or PS_NONE */
  ps__dot_span label;
  uint32_t line, col;
} ps__dot_cluster;

typedef struct ps__dot_doc {
  const char *data; /* the input the spans refer to */
  char *pool;       /* node and cluster ids, NUL-terminated */
  uint32_t pool_len, pool_cap;
  ps__dot_node *nodes;
  uint32_t n_nodes, cap_nodes;
  ps__dot_edge *edges;
  uint32_t n_edges, cap_edges;
  ps__dot_cluster *clusters;
  uint32_t n_clusters, cap_clusters;
  uint32_t graph_id; /* pool offset of the graph's id, or PS_NONE */
  ps_strmap node_map;
} ps__dot_doc;

/* Parses DOT text (a directed graph).  On a syntax error, records a
 * located error in diag and returns PS_ESYNTAX; limits give PS_ELIMIT. */
int ps__dot_parse (ps__dot_doc *d, const char *data, size_t len, ps_diag *diag);

/* True when the data is DOT text by its first token (after white space, a
 * UTF-8 byte order mark and comments, as the parser reads them):
 * `strict`, `digraph` or `graph`, so that an undirected graph gets the
 * parser's message rather than a JSON syntax error. */
bool ps__dot_starts_graph (const char *data, size_t len);
void ps__dot_doc_free (ps__dot_doc *d);

/* Unescapes a quoted-string span: \" becomes ", a backslash before a line
 * break joins the lines; other escapes are kept.  Writes at most cap - 1
 * bytes and a NUL to out; returns the length written. */
size_t ps__dot_span_text (const ps__dot_doc *d, ps__dot_span s, char *out, size_t cap);

#endif
