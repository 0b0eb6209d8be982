/* ps-dot-import-private.h: the importer state shared by ps-dot-nodes.c
 * (what each DOT node is) and ps-dot-import.c (child graphs flattened,
 * topological order, the graph built). */
#ifndef PS_DOT_IMPORT_PRIVATE_H
#define PS_DOT_IMPORT_PRIVATE_H

#include "model/ps-graph-private.h"
#include "ps-dot-label.h"
#include "ps-dot-private.h"

/* What a DOT node is. */
enum {
  PS__DOT_KERNEL,
  PS__DOT_MEMCPY,
  PS__DOT_MEMSET,
  PS__DOT_HOST,
  PS__DOT_EMPTY,
  PS__DOT_RECORD,
  PS__DOT_WAIT,
  PS__DOT_CHILD,
  PS__DOT_COND,
  PS__DOT_OPAQUE
};

typedef struct ps__dot_info {
  uint8_t kind, dir, value;
  uint32_t graph;    /* the CUDA graph it belongs to */
  uint32_t child;    /* PS__DOT_CHILD: the graph it launches */
  uint32_t str;      /* kernel function, opaque type, host label or a conditional's
                      * handle (out pool), or PS_NONE */
  uint32_t event;    /* PS__DOT_RECORD / PS__DOT_WAIT: event id */
  uint32_t kernel[7]; /* grid[3], block[3], smem */
  bool launch;        /* the dump gave the launch configuration */
  uint64_t bytes;
  uint32_t loff;     /* offset inside its graph's instance */
  uint8_t ctype;     /* PS__DOT_COND: ps_cond_kind */
  uint32_t body_begin, body_count; /* PS__DOT_COND: its body graphs, into imp.bodies */
  uint32_t exit_begin, exit_count; /* PS__DOT_COND: its last nodes (relative), into imp.ends */
} ps__dot_info;

typedef struct ps__dot_graph {
  uint32_t name;       /* imp.names offset */
  bool is_graph;       /* a CUDA graph rather than a decorative cluster */
  bool referenced;
  uint32_t size;       /* nodes of one expanded instance (saturated) */
  uint32_t instances;  /* how many times it is launched (saturated) */
  uint32_t node_begin, node_count; /* into imp.gnodes */
  uint32_t edge_begin, edge_count; /* into imp.gedges */
  uint32_t ent_begin, ent_count;   /* into imp.ends */
  uint32_t exit_begin, exit_count;
  uint8_t mark;
} ps__dot_graph;

typedef struct ps__dot_importer {
  ps__dot_doc doc;
  ps_diag *diag;
  ps_graph *g; /* the graph being built (its pool receives strings) */
  ps__dot_info *info;
  uint32_t n_graphs; /* clusters + 1 (the top level) */
  ps__dot_graph *graphs;
  char *names;       /* graph names */
  uint32_t names_len, names_cap;
  ps_strmap name_map, event_map;
  uint32_t cap_events;
  uint32_t *gnodes;  /* DOT node ids grouped by graph */
  uint32_t *gedges;  /* DOT edge ids grouped by graph */
  uint32_t *indeg, *outdeg; /* local degrees per DOT node */
  uint32_t *ends;    /* entries and exits of all graphs */
  uint32_t n_ends, cap_ends;
  uint32_t *bodies;  /* the body graphs of conditionals */
  uint32_t n_bodies, cap_bodies;
  uint32_t unknown_types[16]; /* opaque type strings warned about */
  uint32_t n_unknown;
  size_t errors;
} ps__dot_importer;

#define PS__DOT_LIMIT (PS_MAX_NODES + 1u)

/* Names every cluster (its label, its id, and "graph_N" for "cluster_N")
 * and the top level. */
int ps__dot_name_graphs (ps__dot_importer *im);
/* Decides what DOT node i is from its label and shape; buf/cap is scratch
 * space the caller frees. */
int ps__dot_interpret (ps__dot_importer *im, uint32_t i, char **buf, size_t *cap);

#endif
