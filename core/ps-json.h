/* ps-json.h: a strict, streaming RFC 8259 pull reader that knows where it is.
 *
 * The reader hands out one token at a time and keeps the 1-based line and
 * column of the token's first character, so that every semantic error in a
 * graph or trace file can be located.  It never builds a tree: strings are
 * decoded into one reusable buffer, so memory stays flat however large the
 * input is.  Input comes either from one memory block or from a pull
 * callback (used for gzip-compressed traces).
 *
 * Strictness: full RFC 8259 (no comments, no trailing commas, no NaN, no
 * leading zeros, no control characters in strings); UTF-8 is validated
 * (overlong forms, surrogates encoded in UTF-8 and code points above
 * U+10FFFF are rejected); \u escapes are decoded, surrogate pairs joined and
 * lone surrogates rejected; nesting is limited (PS_JSON_MAX_DEPTH by
 * default); strings longer than max_string are rejected; numbers must be
 * finite as doubles.  One JSON value per input, then only whitespace. */
#ifndef PS_JSON_H
#define PS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PS_JSON_MAX_DEPTH 256
#define PS_JSON_MAX_STRING (1u << 20)

typedef enum ps_json_token {
  PS_JSON_ERROR = -1, /* see ps_json_reader.error; sticky */
  PS_JSON_EOF = 0,    /* the single top-level value and trailing space are done */
  PS_JSON_OBJECT_BEGIN,
  PS_JSON_OBJECT_END,
  PS_JSON_ARRAY_BEGIN,
  PS_JSON_ARRAY_END,
  PS_JSON_KEY,        /* an object member name; str/len hold it */
  PS_JSON_STRING,     /* str/len hold the decoded value */
  PS_JSON_NUMBER,     /* num holds it; is_int and i64 when it is an integer */
  PS_JSON_TRUE,
  PS_JSON_FALSE,
  PS_JSON_NULL,
} ps_json_token;

/* Fills buf with up to cap bytes; returns the count, 0 at end of input, or
 * a negative value on a read error. */
typedef long (*ps_json_read_fn) (void *ctx, char *buf, size_t cap);

typedef struct ps_json_reader {
  /* Of the current token (valid until the next call to ps_json_next). */
  ps_json_token token;
  uint32_t line, col;  /* 1-based position of the token's first byte */
  const char *str;     /* decoded, NUL-terminated (may contain NUL bytes: use len) */
  size_t len;
  double num;
  bool is_int;         /* the literal had no fraction or exponent and fits int64 */
  int64_t i64;
  int depth;           /* open containers after this token */

  /* Set when token == PS_JSON_ERROR: a message without position, and the
   * position of the offending byte. */
  char error[160];
  uint32_t error_line, error_col;

  /* Limits, set by init to the defaults above; may be lowered after init. */
  int max_depth;
  size_t max_string;

  /* Private. */
  const unsigned char *buf, *p, *end;
  ps_json_read_fn read;
  void *read_ctx;
  unsigned char *chunk;
  size_t chunk_cap;
  bool eof_input;
  uint32_t cur_line, cur_col;
  char *sbuf;
  size_t scap;
  uint8_t *stack; /* 'o' or 'a' per open container */
  int state;
  bool done;
} ps_json_reader;

/* Reads from a memory block that must outlive the reader. */
int ps_json_init_mem (ps_json_reader *r, const char *data, size_t len);
/* Reads through a callback, a chunk at a time. */
int ps_json_init_stream (ps_json_reader *r, ps_json_read_fn read, void *ctx);
void ps_json_close (ps_json_reader *r);

/* The next token.  After PS_JSON_ERROR or PS_JSON_EOF it keeps returning the
 * same. */
ps_json_token ps_json_next (ps_json_reader *r);

/* Pulls the next value whole (a scalar, or a container up to its matching
 * end) and discards it; call it where a value is expected, e.g. right after
 * a KEY.  Returns the value's first token, or PS_JSON_ERROR. */
ps_json_token ps_json_skip_value (ps_json_reader *r);
/* When the current token opens a container, pulls tokens up to and
 * including its matching end; otherwise does nothing.  Returns 0 or
 * PS_JSON_ERROR. */
int ps_json_skip_current (ps_json_reader *r);

/* Human name of a token kind ("string", "number", "object", ...). */
const char *ps_json_token_name (ps_json_token t);

#endif
