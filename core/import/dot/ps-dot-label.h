/* ps-dot-label.h: reading the labels of cudaGraphDebugDotPrint nodes
 * (ps-dot-label.c); private to the DOT ps__dot_importer. */
#ifndef PS_DOT_LABEL_H
#define PS_DOT_LABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ps-graph.h"

typedef struct ps__label_field {
  uint32_t parent, first, last, next; /* PS_NONE when absent */
  uint32_t off, len;                  /* trimmed text in ps__label.text */
  uint32_t n_children;
  bool group; /* a {...} of fields */
} ps__label_field;

typedef struct ps__label {
  char *plain; /* every escape resolved; \n \l \r as line breaks */
  size_t plain_len;
  bool record; /* the label is a record ("{...}") */
  char *text;  /* field texts */
  uint32_t text_len;
  ps__label_field *fields; /* record fields, depth first; 0 is the root */
  uint32_t n_fields, cap_fields;
} ps__label;

/* Reads a label (a DOT string with its escapes).  Returns 0 or PS_ENOMEM. */
int ps__label_read (ps__label *l, const char *raw, size_t n);
void ps__label_free (ps__label *l);

/* The first non-empty leaf field (a record's node type), or PS_NONE. */
uint32_t ps__label_first_leaf (const ps__label *l);
const char *ps__label_field_text (const ps__label *l, uint32_t f, size_t *len);
/* The value field of a key (case-insensitive), or PS_NONE. */
uint32_t ps__label_value (const ps__label *l, const char *key);
bool ps__label_value_u64 (const ps__label *l, const char *key, uint64_t *out);

/* Finds NAME<<<grid,block,smem>>> in the plain text.  Returns 0 when there
 * is none, 1 when read (name points into the plain text), -1 when the
 * launch configuration cannot be read (name is still set). */
int ps__label_launch (const ps__label *l, const char **name_out, size_t *name_len,
                      uint32_t grid[3], uint32_t block[3], uint32_t *smem);

/* Line `index` of the plain text, trimmed; false when there is none. */
bool ps__label_line (const ps__label *l, uint32_t index, const char **s, size_t *n);

#endif
