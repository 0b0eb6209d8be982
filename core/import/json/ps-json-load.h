/* ps-json-load.h: the state shared by the files of the JSON graph loader:
 * ps-json-load.c (messages and token helpers), ps-json-node.c (node
 * objects) and ps-json-graph.c (the document, buffers and name
 * resolution).  The edges are built by model/ps-graph-edges.c.  core/
 * only. */
#ifndef PS_JSON_LOAD_H
#define PS_JSON_LOAD_H

#include <float.h>
#include <stdatomic.h>

#include "model/ps-graph-private.h"
#include "ps-graph.h"
#include "ps-json.h"
#include "util/ps-strmap.h"

/* The loader stops after this many errors. */
#define PS__JSON_MAX_ERRORS 25
/* Distinct kernel function names kept once (ps-json-node.c). */
#define PS__JSON_MAX_FUNCTIONS 65536u

/* Node keys; a node's keys given are kept as a bit set. */
enum {
  PS__NK_NAME = 0,
  PS__NK_OP,
  PS__NK_READS,
  PS__NK_WRITES,
  PS__NK_AFTER,
  PS__NK_STREAM,
  PS__NK_COST_NS,
  PS__NK_FUNCTION,
  PS__NK_GRID,
  PS__NK_BLOCK,
  PS__NK_SMEM,
  PS__NK_FUSIBLE,
  PS__NK_IMPL,
  PS__NK_PARAMS,
  PS__NK_MODULE,
  PS__NK_ARGS,
  PS__NK_FLOPS,
  PS__NK_TRAFFIC_BYTES,
  PS__NK_DIR,
  PS__NK_SRC_DEVICE,
  PS__NK_DST_DEVICE,
  PS__NK_BYTES,
  PS__NK_VALUE,
  PS__NK_LABEL,
  PS__NK_EVENT,
  PS__NK_CONDITION,
  PS__NK_THEN,
  PS__NK_ELSE,
  PS__NK_ASSUME,
  PS__NK__COUNT
};

/* Where a name reference stands, for resolution and messages. */
enum {
  PS__FIELD_READS = 0,
  PS__FIELD_WRITES,
  PS__FIELD_CONDITION,
  PS__FIELD_ARGS,
  PS__FIELD_AFTER,
  PS__FIELD_THEN,
  PS__FIELD_ELSE,
};

/* Names are resolved once the whole document is read (nodes may come
 * before buffers), with the batch lookups of ps-strmap.h.  Until then
 * reads and writes (and a conditional's condition, kept as its last read)
 * stay in graph->access as access keys.  When the whole input is in memory
 * a name without escapes stands in it as it is, and its key is the input
 * offset of the name's first byte (its closing quote ends it, and its
 * token starts one byte before, which ps_json_locate turns into a position
 * when a message needs one).  Any other name (one with escapes, or any
 * name of an input read a piece at a time, which is gone by then) is
 * copied: its key is PS__JSON_POOLED and the offset of its decoded copy in
 * the refpool, which follows the line and column of its token (two
 * uint32_t).  The rarer kernel buffer arguments, `after`, then and else
 * names are refs: copies in the refpool, with their positions. */
#define PS__JSON_POOLED 0x80000000u

typedef struct ps__json_ref {
  uint32_t name; /* refpool offset */
  uint32_t line, col;
  uint32_t node;  /* index of the referring node in the nodes array */
  uint32_t index; /* position in its list */
  uint32_t id;    /* the resolved id, or PS_NONE */
  uint8_t field;  /* PS__FIELD_* */
} ps__json_ref;

typedef struct ps__json_u32vec {
  uint32_t *v;
  uint32_t n, cap;
} ps__json_u32vec;

/* A key that is not a node key, kept until the node's op is known so that
 * the suggestion comes from the keys that op allows. */
typedef struct ps__json_unknown_key {
  char text[72];
  uint32_t line, col;
} ps__json_unknown_key;

/* Slots of the node scratch's table of node keys (ps-json-node.c). */
#define PS__JSON_KEY_SLOTS 128

/* The node being read.  Values are kept here until the object ends, since
 * keys may come in any order (`op` last, say). */
typedef struct ps__json_node_scratch {
  int8_t key_of_slot[PS__JSON_KEY_SLOTS]; /* node keys by hash (ps-json-node.c), or -1 */
  uint8_t key_len[PS__NK__COUNT];
  uint32_t seen;                    /* bit per PS__NK_* given */
  uint32_t kline[PS__NK__COUNT];    /* position of each key given */
  uint32_t kcol[PS__NK__COUNT];
  uint32_t vline[PS__NK__COUNT];    /* position of its value */
  uint32_t vcol[PS__NK__COUNT];
  uint32_t line, col;               /* the object's `{` */
  int op;                           /* ps_op, or -1 when missing or unknown */
  int impl, dir, assume;            /* -1 when missing or unknown */
  bool fusible;
  int32_t stream, src_device, dst_device;
  double cost_ns;
  uint64_t bytes;
  uint8_t value;
  uint32_t function, module, label; /* string pool offsets or PS_NONE */
  uint32_t grid[3], block[3], smem;
  double param[3];                 /* alpha, beta, value */
  uint32_t params_seen;            /* bit per parameter */
  uint32_t pline[3], pcol[3];
  double flops, traffic_bytes;
  uint32_t condition;               /* access key; PS_NONE when missing or bad */
  uint32_t name;                   /* string pool offset; 0 ("") when missing or bad */
  char event[PS_MAX_NAME + 1];
  size_t event_len;
  ps__json_u32vec reads, writes;     /* access keys */
  ps__json_u32vec after, then_, else_; /* ref indices */
  ps_karg *args;
  uint32_t n_args, cap_args;
  ps__json_unknown_key unknown[4];
  uint32_t n_unknown;
  size_t errors_before;
} ps__json_node_scratch;

typedef struct ps__json_loader {
  ps_graph *g;
  ps_diag *diag;
  ps_json_reader r;
  const char *data; /* the input, which access keys point into; NULL when it
                       is read a piece at a time */
  size_t data_len;  /* its length (a streamed input's, when known: progress) */
  size_t errors;  /* errors this load added */
  bool too_many;  /* PS__JSON_MAX_ERRORS reached: stop */
  bool syntax_reported;

  uint32_t cap_nodes, cap_buffers, cap_kernels, cap_conds, cap_events;
  uint32_t cap_access, cap_kargs, cap_members;
  ps_strmap buffer_map, node_map, event_map;
  ps_strmap function_map; /* function names kept, by themselves (ps-json-node.c) */

  uint32_t node_index; /* index of the node being read */
  uint32_t buffer_index;

  char *refpool; /* names referred to, until they are resolved */
  uint32_t refpool_len, refpool_cap;
  ps__json_ref *refs;
  uint32_t n_refs, cap_refs;
  /* (ref index, to) pairs of `after`, flattened; the ref index becomes the
   * node id when names are resolved. */
  uint32_t *after_pairs;
  uint32_t n_after, cap_after; /* in uint32_t values: twice the pairs */

  ps__json_node_scratch *ns;
  /* The second half of a long nodes array (ps-json-split.c): errors and
   * warnings stop it at once and say nothing. */
  bool speculative;
  struct ps__json_split *split; /* the second half being read, or NULL */
  uint64_t split_at;             /* its first byte; UINT64_MAX without one */
  bool split_tried;
} ps__json_loader;

/* Where a value sits inside the current object, for messages:
 * NAME[INDEX].SUB, each part optional (index < 0: none).  Formatted only
 * when an error is reported. */
typedef struct ps__json_key {
  const char *name;
  int64_t index;
  const char *sub;
} ps__json_key;
#define PS__JSON_KEY(name) (&(ps__json_key){ (name), -1, NULL })

int ps__json_u32vec_push (ps__json_u32vec *v, uint32_t x);

/* Records a located error: "PATH.KEY: MESSAGE", where PATH is the object
 * being read (`nodes[3]`), KEY may be NULL.  Returns PS_EINVAL once too
 * many errors were reported (then the load stops), else 0. */
int ps__json_err (ps__json_loader *ld, uint32_t line, uint32_t col, const ps__json_key *key,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 5, 6)))
#endif
    ;
/* Reports the reader's error (once) and returns PS_ESYNTAX. */
int ps__json_syntax (ps__json_loader *ld);
/* The next token; PS_ESYNTAX after reporting a reader error.  (Inline:
 * the loader asks for every token of the document.) */
static inline int
ps__json_next (ps__json_loader *ld)
{
  ps_json_token t = ps_json_next (&ld->r);
  if (t == PS_JSON_ERROR)
    return ps__json_syntax (ld);
  return (int) t;
}
/* Skips the rest of the current value (a container the current token opens). */
int ps__json_skip_current (ps__json_loader *ld);

/* The checks of values below take their usual case inline (a document
 * has millions of values) and the rest, with every message, out of line. */
int ps__json_get_int_slow (ps__json_loader *ld, const ps__json_key *key, int64_t min,
                           int64_t max, int64_t *out);
int ps__json_get_nonneg_slow (ps__json_loader *ld, const ps__json_key *key, double *out);
int ps__json_check_name_slow (ps__json_loader *ld, const ps__json_key *key, const char *what);
int ps__json_check_string_slow (ps__json_loader *ld, const ps__json_key *key);

/* Checks that the current token is an integer in [min, max]; on success
 * stores it and returns 1; else records an error and returns 0 (or a
 * negative code to stop). */
static inline int
ps__json_get_int (ps__json_loader *ld, const ps__json_key *key, int64_t min, int64_t max,
                  int64_t *out)
{
  const ps_json_reader *r = &ld->r;
  if (r->token == PS_JSON_NUMBER && r->is_int && r->i64 >= min && r->i64 <= max) {
    *out = r->i64;
    return 1;
  }
  return ps__json_get_int_slow (ld, key, min, max, out);
}

/* Checks that the current token is a number >= 0. */
static inline int
ps__json_get_nonneg (ps__json_loader *ld, const ps__json_key *key, double *out)
{
  const ps_json_reader *r = &ld->r;
  if (r->token == PS_JSON_NUMBER && r->num >= 0 && r->num <= DBL_MAX) {
    *out = r->num;
    return 1;
  }
  return ps__json_get_nonneg_slow (ld, key, out);
}

/* Checks that the current token is a string without NUL bytes (only an
 * escape can make one). */
static inline int
ps__json_check_string (ps__json_loader *ld, const ps__json_key *key)
{
  if (ld->r.token == PS_JSON_STRING && !ld->r.escaped)
    return 1;
  return ps__json_check_string_slow (ld, key);
}

/* Checks that the current token is a valid name (a string, 1 to
 * PS_MAX_NAME bytes, no NUL). */
static inline int
ps__json_check_name (ps__json_loader *ld, const ps__json_key *key, const char *what)
{
  const ps_json_reader *r = &ld->r;
  if (r->token == PS_JSON_STRING && !r->escaped && r->len >= 1 && r->len <= PS_MAX_NAME)
    return 1;
  return ps__json_check_name_slow (ld, key, what);
}
/* Records "unknown WHAT "TEXT"; did you mean ...?" with the closest of
 * `allowed` (n names, NULL ones skipped; see ps_suggest). */
int ps__json_unknown (ps__json_loader *ld, uint32_t line, uint32_t col, const char *what,
                      const char *text, const char *const *allowed, size_t n,
                      const ps__json_key *key);
/* Reads an enum value (current token a string) among `names`; -1 with an
 * error recorded when it is not one. */
int ps__json_get_enum (ps__json_loader *ld, const ps__json_key *key, const char *what,
                       const char *const *names, size_t n, int *out);

/* "a string", "an array", ... for messages. */
const char *ps__json_token_desc (ps_json_token t);
/* Records "expected WHAT, got ..." for the current token and skips it. */
int ps__json_type_error (ps__json_loader *ld, const ps__json_key *key, const char *what);
/* Records "duplicate key" for the current key and skips its value. */
int ps__json_duplicate_key (ps__json_loader *ld, const char *key);
/* Records "unknown key ..." for the current key and skips its value. */
int ps__json_unknown_key_skip (ps__json_loader *ld, const char *const *allowed, size_t n);
/* The index of the current key among n keys, or -1. */
int ps__json_key_index (const ps_json_reader *r, const char *const *keys, size_t n);

/* The access key of the buffer name at the current token (see above);
 * *out is PS_NONE after an error. */
int ps__json_buffer_ref (ps__json_loader *ld, const ps__json_key *key, uint32_t *out);
/* The name an access key refers to, and its length. */
const char *ps__json_access_name (const ps__json_loader *ld, uint32_t key, size_t *len);
/* The position of the token of the name an access key refers to (loc:
 * a locator of the input, for keys into it). */
void ps__json_access_locate (const ps__json_loader *ld, uint32_t key, ps_json_locator *loc,
                             uint32_t *line, uint32_t *col);
/* Adds a ref for the name at the current token (a node or buffer name).
 * Returns 0 or a negative code; *out gets the ref's index. */
int ps__json_push_ref (ps__json_loader *ld, uint8_t field, uint32_t index, uint32_t *out);

/* The arrays buffer and node objects fill, counted where an array of
 * them (or the part of one a loader reads) begins, at byte `from` of the
 * input. */
typedef struct ps__json_counts {
  uint64_t from;
  uint32_t buffers, nodes, access, kernels, kargs, strings, refs, refpool, after;
} ps__json_counts;
/* Reads ld's counts into *at, at byte `from`. */
void ps__json_presize_begin (const ps__json_loader *ld, uint64_t from, ps__json_counts *at);
/* Once PS__JSON_PRESIZE_AT objects are read from *at: reserves the arrays
 * for as many more as the rest of the input holds at that rate (see
 * ps-json-load.c); best effort, a failure changes nothing. */
#define PS__JSON_PRESIZE_AT 1024u
void ps__json_presize (ps__json_loader *ld, const ps__json_counts *at);

/* Node objects (ps-json-node.c). */
int ps__json_scratch_new (ps__json_loader *ld);
void ps__json_scratch_free (ps__json_loader *ld);
/* Reads one node object (current token: its `{`) and appends it. */
int ps__json_load_node (ps__json_loader *ld);


/* The second half of a long nodes array, read on a second thread
 * (ps-json-split.c).  Inputs in memory with at least ps__json_split_min
 * bytes from the first array of the document on (tests lower it) get
 * one. */
typedef struct ps__json_split ps__json_split;
extern size_t ps__json_split_min;
/* Second halves taken so far (tests read it). */
extern atomic_size_t ps__json_splits_taken;
/* A second half of at least this many nodes is appended to the graph on
 * two threads (65,536; tests change it). */
extern uint32_t ps__json_land_thread_min;
/* At the first array of the document (the buffers or the nodes, its '['
 * the current token): starts reading the second half of the nodes on a
 * second thread (ld->split), when the input is long enough. */
void ps__json_split_start (ps__json_loader *ld);
/* In the nodes array, after an element whose '}' is the current token,
 * close to ld->split_at: 1 when the second half was taken (the current
 * token is then the array's ']'), else 0 (read on; the split may have
 * been dropped). */
int ps__json_split_check (ps__json_loader *ld);
/* Stops (waits for) and frees a second half not taken. */
void ps__json_split_end (ps__json_loader *ld);
/* The bytes before ld->split_at from which an element's end is checked:
 * a longer run of whitespace between two elements only drops the split. */
#define PS__JSON_SPLIT_WINDOW 4096u

/* Loads a graph in the JSON format of spec/graph-format.md from memory
 * (ps-json-graph.c); the contract of ps_import_graph_mem. */
int ps__json_load_graph (ps_graph *g, const char *data, size_t len, const char *path,
                         ps_diag *diag);
/* The same from a stream (see ps_json_init_stream) of about size_hint
 * bytes (0: unknown), for the progress reports. */
int ps__json_load_graph_stream (ps_graph *g, ps_json_read_fn read, void *ctx, size_t size_hint,
                                const char *path, ps_diag *diag);

#endif
