/* ps-dot-import-private.h: the importer state shared by ps-dot-nodes.c
 * (what each DOT node is) and ps-dot-import.c (child graphs flattened,
 * topological order, the graph built). */
#ifndef PS_DOT_IMPORT_PRIVATE_H
#define PS_DOT_IMPORT_PRIVATE_H

#include "ps-dot-label.h"
#include "ps-dot-private.h"
#include "import/json/ps-json-load.h"

/* What a DOT node is. */
enum { K_KERNEL, K_MEMCPY, K_MEMSET, K_HOST, K_EMPTY, K_RECORD, K_WAIT, K_CHILD, K_OPAQUE };

typedef struct info {
  uint8_t kind, dir, value;
  uint32_t graph;    /* the CUDA graph it belongs to */
  uint32_t child;    /* K_CHILD: the graph it launches */
  uint32_t str;      /* kernel function, opaque type or host label (out pool), or PS_NONE */
  uint32_t event;    /* K_RECORD / K_WAIT: event id */
  uint32_t kernel[7]; /* grid[3], block[3], smem */
  uint64_t bytes;
  uint32_t loff;     /* offset inside its graph's instance */
} info;

typedef struct graph_info {
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
} graph_info;

typedef struct importer {
  ps__dot_doc doc;
  ps_diag *diag;
  ps_graph *g; /* the graph being built (its pool receives strings) */
  info *info;
  uint32_t n_graphs; /* clusters + 1 (the top level) */
  graph_info *graphs;
  char *names;       /* graph names */
  uint32_t names_len, names_cap;
  ps_strmap name_map, event_map;
  uint32_t cap_events;
  uint32_t *gnodes;  /* DOT node ids grouped by graph */
  uint32_t *gedges;  /* DOT edge ids grouped by graph */
  uint32_t *indeg, *outdeg; /* local degrees per DOT node */
  uint32_t *ends;    /* entries and exits of all graphs */
  uint32_t n_ends, cap_ends;
  uint32_t unknown_types[16]; /* opaque type strings warned about */
  uint32_t n_unknown;
  size_t errors;
} importer;

#define LIMIT (PS_MAX_NODES + 1u)

/* Names every cluster (its label, its id, and "graph_N" for "cluster_N")
 * and the top level. */
int ps__dot_name_graphs (importer *im);
/* Decides what DOT node i is from its label and shape; buf/cap is scratch
 * space the caller frees. */
int ps__dot_interpret (importer *im, uint32_t i, char **buf, size_t *cap);

#endif
