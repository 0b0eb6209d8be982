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
 * finite as doubles and are read the same whatever LC_NUMERIC says.  One
 * JSON value per input, then only whitespace.
 *
 * Positions: lines are counted by LF ("\r\n" is one line end; a lone CR is
 * whitespace on the current line).  Columns count Unicode code points of the
 * UTF-8 source, so a multi-byte character is one column and an escape such
 * as \n or \u00e9 is as many columns as it has characters in the file; a tab
 * is one column.  A UTF-8 byte order mark at the very start is skipped and
 * not counted.
 *
 * Errors point at the first byte that cannot be accepted, with these
 * conventions: a bad escape is reported at its backslash, a bad UTF-8
 * sequence at its first byte, a string over max_string at its opening
 * quote, a number out of range or over max_string (numbers are held to that
 * limit too) at its first character, a trailing comma at the closing
 * bracket after it, too deep nesting at the bracket that opens one level
 * too many, and a premature end of input at the end of the input.  The
 * messages are short and name the problem ("expected ':' after object key",
 * "invalid escape '\q' in string", "unexpected end of input inside
 * string"); they carry no position, which is in error_line and error_col.
 *
 * Tokens other than KEY and STRING leave str = "" and len = 0 (and escaped
 * false); tokens other
 * than NUMBER leave num = 0, is_int = false, i64 = 0.  "-0" is an integer
 * (i64 = 0) whose num is -0.0. */
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
  uint64_t offset;     /* that byte's offset from the start of the input */
  const char *str;     /* decoded, NUL-terminated (may contain NUL bytes: use len);
                          a KEY or STRING's has at least 16 readable bytes */
  size_t len;
  bool escaped;        /* the string had escapes: only then can str hold a NUL byte,
                          or differ from the bytes between its quotes in the input */
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
  uint64_t consumed; /* bytes of the input before buf */
  bool eof_input;
  uint32_t cur_line, cur_col; /* cur_col is the column of lstart */
  const unsigned char *lstart;
  char *sbuf;
  size_t scap;
  uint8_t *stack; /* 'o' or 'a' per open container */
  int stack_cap;
  int level;
  int state;
  bool done;
} ps_json_reader;

/* Reads from a memory block that must outlive the reader.  Both inits
 * return 0, PS_EINVAL for a NULL argument or PS_ENOMEM; a failed init
 * holds no memory (ps_json_close is still safe to call). */
int ps_json_init_mem (ps_json_reader *r, const char *data, size_t len);
/* Reads through a callback, a chunk at a time.  The callback may return any
 * number of bytes per call (even one); tokens may straddle its chunks. */
int ps_json_init_stream (ps_json_reader *r, ps_json_read_fn read, void *ctx);
/* Reads the elements of an array from the middle of a memory block, for
 * a second thread that reads part of a long array while the first reads
 * the rest: the reader starts at byte `offset` of data (the first byte of
 * an element, right after a comma), at 1-based line and column (the
 * position there), inside the open containers `stack` (`level` of them,
 * 'o' or 'a', the last an array) of the reader that reads the block from
 * its start.  Its tokens and offsets are those that reader would give
 * from there on.  Returns as ps_json_init_mem does. */
int ps_json_init_mem_at (ps_json_reader *r, const char *data, size_t len, size_t offset,
                         uint32_t line, uint32_t col, const uint8_t *stack, int level);
/* Reader r (in memory mode) stands inside an array whose elements from
 * some element on `from` (made by ps_json_init_mem_at on the same block,
 * in the same array, at line 1, column 1) has read, up to the array's
 * end: r moves on to where `from` stands, its current token that end;
 * line and col are the true position of the byte `from` started at. */
void ps_json_resume (ps_json_reader *r, const ps_json_reader *from, uint32_t line,
                     uint32_t col);

/* Frees what the reader holds; the reader may then be initialised again. */
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

/* The position the reader gives the byte at `offset` of an input it read
 * (line and column as above), for messages about tokens whose offset was
 * kept instead of their position.  Queries in increasing order of offset
 * cost one pass over the input in all; an earlier offset starts over. */
typedef struct ps_json_locator {
  const unsigned char *data;
  size_t len, start;
  size_t pos, line_start; /* scanned up to pos; the line being scanned starts at line_start */
  size_t cont;            /* continuation bytes in [line_start, pos) */
  uint32_t line;
} ps_json_locator;

void ps_json_locator_init (ps_json_locator *l, const char *data, size_t len);
void ps_json_locate (ps_json_locator *l, uint64_t offset, uint32_t *line, uint32_t *col);

/* Human name of a token kind ("string", "number", "object", ...). */
const char *ps_json_token_name (ps_json_token t);

/* How far a reader of a memory block is into it, in bytes (0 for a
 * stream), so that a long load can say how far it got. */
size_t ps_json_offset (const ps_json_reader *r);

/* What a PS_JSON_ERROR was: PS_ENOMEM when the reader ran out of memory
 * (its error then says "out of memory"), else PS_ESYNTAX. */
int ps_json_error_status (const ps_json_reader *r);

#endif
