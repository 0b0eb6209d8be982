/* ps-json.c: the strict streaming RFC 8259 pull reader declared in ps-json.h.
 *
 * The scanner works on the bytes [p, end).  In memory mode that is the
 * caller's block; in stream mode it is our chunk buffer, refilled by fill(),
 * which keeps the unconsumed bytes from p on contiguous, so a number or a
 * literal can always be looked at whole.  Strings are decoded segment by
 * segment into sbuf (the only copy; it also gives the NUL terminator), so
 * they may straddle chunks.  Nothing recurses: open containers live on a
 * byte stack.
 *
 * ps_json_next first tries the usual tokens of a large document (a short
 * string, an integer, a bracket, a literal, after at most one space or an
 * indented line end) on a path with no calls, and hands everything else to
 * the general state machine, which starts over from the same byte (see
 * "the fast path" below).
 *
 * Columns count code points: the column of a byte q on the current line is
 * cur_col + (q - lstart), and lstart is moved forward by the continuation
 * bytes of every multi-byte character consumed, so that difference counts
 * characters rather than bytes. */
#include "ps-json.h"

#include "ps-error.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum {
  ST_BOM,          /* nothing read yet */
  ST_START,        /* the top-level value is expected */
  ST_VALUE,        /* a member value, after ':' */
  ST_ARRAY_FIRST,  /* after '[': a value or ']' */
  ST_ARRAY_VALUE,  /* after ',' in an array */
  ST_OBJECT_FIRST, /* after '{': a key or '}' */
  ST_KEY,          /* after ',' in an object */
  ST_COLON,        /* after a key */
  ST_AFTER,        /* after a value inside a container: ',' or the close */
  ST_END,          /* after the top-level value: only whitespace may follow */
  ST_DONE,         /* EOF or an error was returned */
};

#if defined(__GNUC__)
#define COLD __attribute__ ((cold, noinline))
/* Asking for the input a few hundred bytes ahead of the scan was measured
 * 5-10% faster on a 200 MB file.  (An integer sum, as the address may lie
 * past the end of the block; a prefetch never faults.) */
#define PREFETCH_AHEAD(p) __builtin_prefetch ((const void *) ((uintptr_t) (p) + 384))
#else
#define COLD
#define PREFETCH_AHEAD(p) ((void) 0)
#endif

#define CHUNK_SIZE (64 * 1024)
#define SBUF_INIT 256
#define STACK_INIT 32

static uint32_t
column (const ps_json_reader *r, const unsigned char *q)
{
  size_t c = (size_t) r->cur_col + (size_t) (q - r->lstart);
  return c > UINT32_MAX ? UINT32_MAX : (uint32_t) c;
}

/* Records q, the first byte of the token, as the token's position. */
static inline void
mark (ps_json_reader *r, const unsigned char *q)
{
  r->line = r->cur_line;
  r->col = column (r, q);
  r->offset = r->consumed + (uint64_t) (q - r->buf);
}

/* Records the first error; later ones (e.g. an end of input noticed after a
 * read error) are ignored.  Always returns PS_JSON_ERROR. */
static ps_json_token fail_lc (ps_json_reader *r, uint32_t line, uint32_t col, const char *fmt,
                              ...) COLD
#if defined(__GNUC__)
    __attribute__ ((format (printf, 4, 5)))
#endif
    ;

static ps_json_token
fail_lc (ps_json_reader *r, uint32_t line, uint32_t col, const char *fmt, ...)
{
  if (r->token == PS_JSON_ERROR)
    return PS_JSON_ERROR;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (r->error, sizeof r->error, fmt, ap);
  va_end (ap);
  r->token = PS_JSON_ERROR;
  r->state = ST_DONE;
  r->line = r->error_line = line;
  r->col = r->error_col = col;
  r->str = "";
  r->len = 0;
  r->escaped = false;
  return PS_JSON_ERROR;
}

#define fail_at(r, q, ...) fail_lc ((r), (r)->cur_line, column ((r), (q)), __VA_ARGS__)

/* Makes at least n bytes available at r->p, reading more input in stream
 * mode.  The bytes from r->p on are kept but may move, so callers re-read
 * r->p and r->end afterwards.  Returns false when the input ends (or fails,
 * which also sets the error) first; what there is stays available. */
static bool
fill (ps_json_reader *r, size_t n)
{
  size_t have = (size_t) (r->end - r->p);
  if (have >= n)
    return true;
  if (!r->read || r->eof_input || r->token == PS_JSON_ERROR)
    return false;

  size_t cc = (size_t) r->cur_col + (size_t) (r->p - r->lstart);
  r->cur_col = cc > UINT32_MAX ? UINT32_MAX : (uint32_t) cc;
  /* The bytes before r->p leave the chunk. */
  uint64_t dropped = (uint64_t) (r->p - r->buf);
  if (n > r->chunk_cap) {
    size_t cap = r->chunk_cap;
    while (cap < n)
      cap *= 2;
    unsigned char *c = malloc (cap);
    if (!c) {
      fail_at (r, r->p, "out of memory");
      return false;
    }
    memcpy (c, r->p, have);
    free (r->chunk);
    r->chunk = c;
    r->chunk_cap = cap;
  } else if (r->p != r->chunk) {
    memmove (r->chunk, r->p, have);
  }
  r->consumed += dropped;
  r->buf = r->p = r->lstart = r->chunk;
  r->end = r->chunk + have;

  while (have < n) {
    size_t room = r->chunk_cap - have;
    long got = r->read (r->read_ctx, (char *) r->chunk + have, room);
    if (got < 0 || (unsigned long) got > room) {
      fail_at (r, r->end, "error reading input");
      return false;
    }
    if (got == 0) {
      r->eof_input = true;
      break;
    }
    have += (size_t) got;
    r->end = r->chunk + have;
  }
  return have >= n;
}

/* The byte at r->p[i], or -1 when the input ends before it (or on an
 * error, which is then set).  May move the buffer (see fill). */
static COLD int
peek_slow (ps_json_reader *r, size_t i)
{
  if (!r->read)
    return -1;
  if (!fill (r, i + 1))
    return -1;
  return r->p[i];
}

static inline int
peek (ps_json_reader *r, size_t i)
{
  if (i < (size_t) (r->end - r->p))
    return r->p[i];
  return peek_slow (r, i);
}

/* peek() for numbers, which are held to max_string as strings are; this
 * also bounds how far fill() grows the chunk in stream mode. */
static COLD int
num_peek_slow (ps_json_reader *r, size_t i)
{
  if (i > r->max_string) {
    fail_at (r, r->p, "number longer than %zu bytes", r->max_string);
    return -1;
  }
  return peek_slow (r, i);
}

static inline int
num_peek (ps_json_reader *r, size_t i)
{
  if (i < (size_t) (r->end - r->p) && i <= r->max_string)
    return r->p[i];
  return num_peek_slow (r, i);
}

/* Skips whitespace and returns the next byte (not consumed), or -1 at the
 * end of input or on a read error. */
static inline int
skip_ws (ps_json_reader *r)
{
  const unsigned char *p = r->p, *end = r->end;
  for (;;) {
    while (p < end) {
      unsigned c = *p;
      if (c > ' ') {
        r->p = p;
        return (int) c;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        p++;
      } else if (c == '\n') {
        p++;
        if (r->cur_line < UINT32_MAX)
          r->cur_line++;
        r->cur_col = 1;
        r->lstart = p;
        /* Indentation comes in long runs of spaces. */
        uint64_t w;
        while (end - p >= 8 && (memcpy (&w, p, 8), w == 0x2020202020202020u))
          p += 8;
      } else {
        r->p = p;
        return (int) c;
      }
    }
    r->p = p;
    if (!fill (r, 1))
      return -1;
    p = r->p;
    end = r->end;
  }
}

/* --- strings ------------------------------------------------------------ */

static bool
append (ps_json_reader *r, size_t *len, const void *src, size_t n)
{
  if (n > r->max_string - *len) {
    fail_lc (r, r->line, r->col, "string longer than %zu bytes", r->max_string);
    return false;
  }
  size_t need = *len + n + 1;
  if (need > r->scap) {
    size_t cap = r->scap;
    while (cap < need)
      cap *= 2;
    char *s = realloc (r->sbuf, cap);
    if (!s) {
      fail_lc (r, r->line, r->col, "out of memory");
      return false;
    }
    r->sbuf = s;
    r->scap = cap;
  }
  memcpy (r->sbuf + *len, src, n);
  *len += n;
  return true;
}

/* The high bit of every byte of w that stops the string scan, exact up to
 * the lowest one set (the bit tricks may also flag bytes above a true
 * hit, which is harmless as only the lowest is used). */
static inline uint64_t
stop_mask (uint64_t w)
{
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  uint64_t q = w ^ (ones * '"');
  uint64_t b = w ^ (ones * '\\');
  return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & highs;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FIRST_STOP(m) ((size_t) __builtin_ctzll (m) >> 3)
#endif

/* The first byte in [p, end) that stops the string scan, or end. */
static inline const unsigned char *
find_stop (const unsigned char *p, const unsigned char *end)
{
  while (end - p >= 8) {
    uint64_t w;
    memcpy (&w, p, 8);
    uint64_t m = stop_mask (w);
    if (m) {
#ifdef FIRST_STOP
      return p + FIRST_STOP (m);
#else
      break;
#endif
    }
    p += 8;
  }
  while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80)
    p++;
  return p;
}

enum { U8_BAD_BYTE = 1, U8_OVERLONG, U8_SURROGATE, U8_TOO_BIG, U8_TRUNCATED };

/* Checks the UTF-8 sequence at p (p[0] >= 0x80), of which avail bytes are
 * available.  Returns its length, the negated U8_ problem, or 0 when it is
 * valid so far but needs more bytes than avail. */
static int
utf8_check (const unsigned char *p, size_t avail)
{
  unsigned c = p[0], lo = 0x80, hi = 0xbf;
  int n;
  if (c < 0xc2)
    return c < 0xc0 ? -U8_BAD_BYTE : -U8_OVERLONG;
  if (c < 0xe0) {
    n = 2;
  } else if (c < 0xf0) {
    n = 3;
    if (c == 0xe0)
      lo = 0xa0;
    else if (c == 0xed)
      hi = 0x9f;
  } else if (c < 0xf5) {
    n = 4;
    if (c == 0xf0)
      lo = 0x90;
    else if (c == 0xf4)
      hi = 0x8f;
  } else {
    return c < 0xf8 ? -U8_TOO_BIG : -U8_BAD_BYTE;
  }
  if (avail < 2)
    return 0;
  unsigned c1 = p[1];
  if ((c1 & 0xc0) != 0x80)
    return -U8_TRUNCATED;
  if (c1 < lo)
    return -U8_OVERLONG;
  if (c1 > hi)
    return c == 0xed ? -U8_SURROGATE : -U8_TOO_BIG;
  for (int i = 2; i < n; i++) {
    if ((size_t) i >= avail)
      return 0;
    if ((p[i] & 0xc0) != 0x80)
      return -U8_TRUNCATED;
  }
  return n;
}

static COLD ps_json_token
utf8_fail (ps_json_reader *r, const unsigned char *p, int problem)
{
  switch (problem) {
  case U8_OVERLONG:
    return fail_at (r, p, "overlong UTF-8 sequence");
  case U8_SURROGATE:
    return fail_at (r, p, "UTF-8 encoded surrogate (U+D800..U+DFFF)");
  case U8_TOO_BIG:
    return fail_at (r, p, "UTF-8 sequence above U+10FFFF");
  case U8_TRUNCATED:
    return fail_at (r, p, "truncated UTF-8 sequence");
  default:
    return fail_at (r, p, "invalid UTF-8 byte 0x%02x", p[0]);
  }
}

static int
hexval (unsigned c)
{
  if (c >= '0' && c <= '9')
    return (int) (c - '0');
  c |= 0x20;
  if (c >= 'a' && c <= 'f')
    return (int) (c - 'a' + 10);
  return -1;
}

/* The value of the four hex digits at p, or -1. */
static long
hex4 (const unsigned char *p)
{
  long v = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval (p[i]);
    if (h < 0)
      return -1;
    v = v * 16 + h;
  }
  return v;
}

/* True when the avail bytes at p could begin a "\uXXXX" escape. */
static bool
u_escape_prefix (const unsigned char *p, size_t avail)
{
  for (size_t i = 0; i < avail && i < 6; i++) {
    if ((i == 0 && p[i] != '\\') || (i == 1 && p[i] != 'u') || (i > 1 && hexval (p[i]) < 0))
      return false;
  }
  return true;
}

/* Decodes the escape at r->p (a backslash) into sbuf and moves r->p past
 * it.  Returns false after setting an error. */
static bool
read_escape (ps_json_reader *r, size_t *len)
{
  static const char eof_msg[] = "unexpected end of input inside string";
  if (!fill (r, 2)) {
    fail_at (r, r->end, eof_msg);
    return false;
  }
  const unsigned char *p = r->p;
  unsigned char out[4];
  size_t n = 1, used = 2;
  switch (p[1]) {
  case '"': out[0] = '"'; break;
  case '\\': out[0] = '\\'; break;
  case '/': out[0] = '/'; break;
  case 'b': out[0] = '\b'; break;
  case 'f': out[0] = '\f'; break;
  case 'n': out[0] = '\n'; break;
  case 'r': out[0] = '\r'; break;
  case 't': out[0] = '\t'; break;
  case 'u': {
    bool more = fill (r, 6);
    p = r->p;
    if (!more) {
      if (r->token != PS_JSON_ERROR && u_escape_prefix (p, (size_t) (r->end - p)))
        fail_at (r, r->end, eof_msg);
      else
        fail_at (r, p, "invalid \\u escape: expected four hex digits");
      return false;
    }
    long cp = hex4 (p + 2);
    if (cp < 0) {
      fail_at (r, p, "invalid \\u escape: expected four hex digits");
      return false;
    }
    used = 6;
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      fail_at (r, p, "unpaired surrogate \\u%04lx in string", cp);
      return false;
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      more = fill (r, 12);
      p = r->p;
      if (r->token == PS_JSON_ERROR)
        return false;
      size_t avail = (size_t) (r->end - p);
      if (!more && u_escape_prefix (p + 6, avail - 6)) {
        fail_at (r, r->end, eof_msg);
        return false;
      }
      long lo = -1;
      if (p[6] == '\\' && p[7] == 'u') {
        lo = hex4 (p + 8);
        if (lo < 0) {
          fail_at (r, p + 6, "invalid \\u escape: expected four hex digits");
          return false;
        }
      }
      if (lo < 0xdc00 || lo > 0xdfff) {
        fail_at (r, p, "unpaired surrogate \\u%04lx in string", cp);
        return false;
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      used = 12;
    }
    if (cp < 0x80) {
      out[0] = (unsigned char) cp;
    } else if (cp < 0x800) {
      out[0] = (unsigned char) (0xc0 | (cp >> 6));
      out[1] = (unsigned char) (0x80 | (cp & 0x3f));
      n = 2;
    } else if (cp < 0x10000) {
      out[0] = (unsigned char) (0xe0 | (cp >> 12));
      out[1] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f));
      out[2] = (unsigned char) (0x80 | (cp & 0x3f));
      n = 3;
    } else {
      out[0] = (unsigned char) (0xf0 | (cp >> 18));
      out[1] = (unsigned char) (0x80 | ((cp >> 12) & 0x3f));
      out[2] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f));
      out[3] = (unsigned char) (0x80 | (cp & 0x3f));
      n = 4;
    }
    break;
  }
  default:
    if (p[1] > 0x20 && p[1] < 0x7f)
      fail_at (r, p, "invalid escape '\\%c' in string", p[1]);
    else
      fail_at (r, p, "invalid escape: byte 0x%02x after '\\' in string", p[1]);
    return false;
  }
  if (!append (r, len, out, n))
    return false;
  r->p += used;
  return true;
}

/* The general string scanner: escapes, UTF-8, chunk ends.  The decoded
 * string so far is sbuf[0, len) and the scan goes on at p. */
static ps_json_token
scan_string_slow (ps_json_reader *r, ps_json_token kind, const unsigned char *p, size_t len)
{
  static const char eof_msg[] = "unexpected end of input inside string";
  const unsigned char *end = r->end, *s = p;

  for (;;) {
    p = find_stop (p, end);
    if (p == end) {
      if (!append (r, &len, s, (size_t) (p - s)))
        return PS_JSON_ERROR;
      r->p = p;
      if (!fill (r, 1))
        return fail_at (r, r->end, eof_msg);
      p = s = r->p;
      end = r->end;
      continue;
    }
    unsigned c = *p;
    if (c == '"') {
      if (!append (r, &len, s, (size_t) (p - s)))
        return PS_JSON_ERROR;
      r->p = p + 1;
      r->sbuf[len] = '\0';
      r->str = r->sbuf;
      r->len = len;
      return r->token = kind;
    }
    if (c == '\\') {
      if (!append (r, &len, s, (size_t) (p - s)))
        return PS_JSON_ERROR;
      r->p = p;
      r->escaped = true;
      if (!read_escape (r, &len))
        return PS_JSON_ERROR;
      p = s = r->p;
      end = r->end;
      continue;
    }
    if (c < 0x20)
      return fail_at (r, p, "control character 0x%02x in string (must be escaped)", c);
    int n = utf8_check (p, (size_t) (end - p));
    if (n == 0) {
      /* The sequence straddles the end of the chunk. */
      if (!append (r, &len, s, (size_t) (p - s)))
        return PS_JSON_ERROR;
      r->p = p;
      fill (r, 4);
      if (r->token == PS_JSON_ERROR)
        return PS_JSON_ERROR;
      p = s = r->p;
      end = r->end;
      n = utf8_check (p, (size_t) (end - p));
      if (n == 0)
        return fail_at (r, end, eof_msg);
    }
    if (n < 0)
      return utf8_fail (r, p, -n);
    p += n;
    r->lstart += n - 1;
  }
}

/* Scans the string whose opening quote is at r->p; r->line and r->col
 * already hold the quote's position.  The fast path copies eight bytes at a
 * time into sbuf while it looks for the closing quote; it hands anything
 * unusual to scan_string_slow.  Copying a few bytes too many this way was
 * measured faster than finding the end first and copying after (build with
 * -DPS_JSON_SCAN_THEN_COPY for that variant): 0.30 s against 0.37 s for the
 * 204 MB file of `json-bench gen 1000000` (bench/json-bench.c). */
static inline ps_json_token
scan_string (ps_json_reader *r, ps_json_token kind)
{
  const unsigned char *p = r->p + 1;
  size_t len = 0;
#if defined(FIRST_STOP) && !defined(PS_JSON_SCAN_THEN_COPY)
  const unsigned char *end = r->end;
  char *dst = r->sbuf;
  size_t room = r->scap < r->max_string ? r->scap : r->max_string;
  while (end - p >= 8 && len + 8 < room) {
    uint64_t w;
    memcpy (&w, p, 8);
    memcpy (dst + len, &w, 8);
    uint64_t m = stop_mask (w);
    if (m) {
      size_t k = FIRST_STOP (m);
      if (p[k] != '"')
        return scan_string_slow (r, kind, p + k, len + k);
      len += k;
      dst[len] = '\0';
      r->p = p + k + 1;
      r->str = dst;
      r->len = len;
      return r->token = kind;
    }
    p += 8;
    len += 8;
  }
#endif
  return scan_string_slow (r, kind, p, len);
}

/* --- numbers and literals ----------------------------------------------- */

static bool
is_digit (int c)
{
  return c >= '0' && c <= '9';
}

static bool
is_word (int c)
{
  return is_digit (c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
}

static COLD ps_json_token
number_fail (ps_json_reader *r, size_t i, int c, const char *what)
{
  if (r->token == PS_JSON_ERROR)
    return PS_JSON_ERROR;
  if (c < 0)
    return fail_at (r, r->p + i, "unexpected end of input in number");
  return fail_at (r, r->p + i, "%s", what);
}

/* Exactly representable powers of ten, for the fast path below. */
static const double pow10_exact[] = {
  1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The double nearest to the literal of len bytes at lit, with strtod on a
 * NUL-terminated copy; it may be infinite.  strtod reads the decimal point
 * of LC_NUMERIC, and a GTK program runs in the user's locale (a German one
 * writes "1,5"), so the literal's '.' is swapped for that point in the
 * copy.  In the C locale nothing changes. */
static bool
number_strtod (ps_json_reader *r, const unsigned char *lit, size_t len, double *out)
{
  const char *dp = localeconv ()->decimal_point;
  size_t dplen = dp && *dp && strcmp (dp, ".") != 0 ? strlen (dp) : 0;
  size_t need = len + dplen + 1;
  char small[64], *tmp = small;
  if (need > sizeof small) {
    if (need > r->scap) {
      char *s = realloc (r->sbuf, need);
      if (!s)
        return false;
      r->sbuf = s;
      r->scap = need;
    }
    tmp = r->sbuf;
  }
  const unsigned char *dot = dplen ? memchr (lit, '.', len) : NULL;
  if (dot) {
    size_t head = (size_t) (dot - lit);
    memcpy (tmp, lit, head);
    memcpy (tmp + head, dp, dplen);
    memcpy (tmp + head + dplen, dot + 1, len - head - 1);
    tmp[len - 1 + dplen] = '\0';
  } else {
    memcpy (tmp, lit, len);
    tmp[len] = '\0';
  }
  *out = strtod (tmp, NULL);
  return true;
}

/* Scans the number starting at r->p (a '-' or a digit). */
static ps_json_token
scan_number (ps_json_reader *r)
{
  size_t i = 0, ndigits = 0;
  bool neg = false, is_int = true;
  int c = r->p[0];
  if (c == '-') {
    neg = true;
    c = num_peek (r, ++i);
    if (!is_digit (c))
      return number_fail (r, i, c, "expected digit after '-'");
  }
  /* All digits of the integer part and the fraction go into u; it wraps
   * harmlessly when there are more than 19, and is not used then. */
  uint64_t u = 0;
  if (c == '0') {
    c = num_peek (r, ++i);
    ndigits = 1;
    if (is_digit (c))
      return fail_at (r, r->p + i, "leading zeros are not allowed in numbers");
  } else {
    size_t start = i;
    do {
      u = u * 10 + (uint64_t) (c - '0');
      c = num_peek (r, ++i);
    } while (is_digit (c));
    ndigits = i - start;
  }
  long exp10 = 0;
  if (c == '.') {
    is_int = false;
    c = num_peek (r, ++i);
    if (!is_digit (c))
      return number_fail (r, i, c, "expected digit after '.' in number");
    size_t start = i;
    do {
      u = u * 10 + (uint64_t) (c - '0');
      c = num_peek (r, ++i);
    } while (is_digit (c));
    ndigits += i - start;
    exp10 = -(long) (i - start);
  }
  if (c == 'e' || c == 'E') {
    is_int = false;
    bool eneg = false;
    c = num_peek (r, ++i);
    if (c == '+' || c == '-') {
      eneg = c == '-';
      c = num_peek (r, ++i);
    }
    if (!is_digit (c))
      return number_fail (r, i, c, "expected digit in exponent");
    long e = 0;
    do {
      if (e < 100000)
        e = e * 10 + (c - '0');
      c = num_peek (r, ++i);
    } while (is_digit (c));
    exp10 += eneg ? -e : e;
  }
  if (c < 0 && r->token == PS_JSON_ERROR)
    return PS_JSON_ERROR;
  if (is_word (c) || c == '.' || c == '+' || c == '-') {
    if (c > 0x20 && c < 0x7f)
      return fail_at (r, r->p + i, "unexpected character '%c' after number", c);
    return fail_at (r, r->p + i, "unexpected byte 0x%02x after number", (unsigned) c);
  }

  if (ndigits <= 19 && is_int) {
    /* The conversions from u to double round exactly as strtod would. */
    if (!neg) {
      r->is_int = u <= (uint64_t) INT64_MAX;
      r->i64 = r->is_int ? (int64_t) u : 0;
      r->num = (double) u;
    } else {
      r->is_int = u <= (uint64_t) INT64_MAX + 1;
      if (r->is_int)
        r->i64 = u == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) u;
      r->num = -(double) u;
    }
#if FLT_EVAL_METHOD == 0
  } else if (ndigits <= 19 && u <= (UINT64_C (1) << 53) && exp10 >= -22 && exp10 <= 22) {
    /* Clinger's fast path: u and 10^|exp10| are exact doubles, so one
     * multiplication or division rounds once, correctly, to the same value
     * strtod gives. */
    double v = (double) u;
    v = exp10 < 0 ? v / pow10_exact[-exp10] : v * pow10_exact[exp10];
    r->num = neg ? -v : v;
#endif
  } else {
    double v;
    if (!number_strtod (r, r->p, i, &v))
      return fail_at (r, r->p, "out of memory");
    if (!isfinite (v))
      return fail_at (r, r->p, "number out of range");
    r->num = v;
  }
  r->p += i;
  return r->token = PS_JSON_NUMBER;
}

static ps_json_token
scan_literal (ps_json_reader *r, const char *word, size_t n, ps_json_token t)
{
  for (size_t i = 1; i <= n; i++) {
    int c = peek (r, i);
    if (i < n ? c != word[i] : is_word (c)) {
      if (c < 0 && r->token == PS_JSON_ERROR)
        return PS_JSON_ERROR;
      return fail_at (r, r->p + i, "invalid literal, expected '%s'", word);
    }
  }
  r->p += n;
  return r->token = t;
}

/* --- the state machine -------------------------------------------------- */

/* Sets the state after a value.  A ',' right behind the value is consumed
 * at once: that gives the same tokens and errors as reading it on the next
 * call, and saves a trip round the state machine per member. */
static inline void
after_value (ps_json_reader *r)
{
  if (r->level == 0) {
    r->state = ST_END;
  } else if (r->p < r->end && *r->p == ',') {
    r->p++;
    r->state = r->stack[r->level - 1] == 'a' ? ST_ARRAY_VALUE : ST_KEY;
  } else {
    r->state = ST_AFTER;
  }
}

static ps_json_token
open_container (ps_json_reader *r, uint8_t kind)
{
  if (r->level >= r->max_depth)
    return fail_at (r, r->p, "nesting deeper than %d levels", r->max_depth);
  if (r->level == r->stack_cap) {
    int cap = r->stack_cap * 2;
    uint8_t *s = realloc (r->stack, (size_t) cap);
    if (!s)
      return fail_at (r, r->p, "out of memory");
    r->stack = s;
    r->stack_cap = cap;
  }
  r->stack[r->level++] = kind;
  r->p++;
  r->state = kind == 'a' ? ST_ARRAY_FIRST : ST_OBJECT_FIRST;
  return r->token = kind == 'a' ? PS_JSON_ARRAY_BEGIN : PS_JSON_OBJECT_BEGIN;
}

static inline ps_json_token
close_container (ps_json_reader *r)
{
  r->level--;
  r->p++;
  after_value (r);
  return r->token = r->stack[r->level] == 'a' ? PS_JSON_ARRAY_END : PS_JSON_OBJECT_END;
}

static inline ps_json_token
scan_value (ps_json_reader *r, int c)
{
  ps_json_token t;
  switch (c) {
  case '{':
    return open_container (r, 'o');
  case '[':
    return open_container (r, 'a');
  case '"':
    t = scan_string (r, PS_JSON_STRING);
    break;
  case '-': case '0': case '1': case '2': case '3': case '4':
  case '5': case '6': case '7': case '8': case '9':
    t = scan_number (r);
    break;
  case 't':
    t = scan_literal (r, "true", 4, PS_JSON_TRUE);
    break;
  case 'f':
    t = scan_literal (r, "false", 5, PS_JSON_FALSE);
    break;
  case 'n':
    t = scan_literal (r, "null", 4, PS_JSON_NULL);
    break;
  case '+':
    return fail_at (r, r->p, "number must not start with '+'");
  case '.':
    return fail_at (r, r->p, "number must not start with '.'");
  case ']':
  case '}':
    return fail_at (r, r->p, "expected value, found '%c'", c);
  default:
    if (c > 0x20 && c < 0x7f)
      return fail_at (r, r->p, "unexpected character '%c'", c);
    return fail_at (r, r->p, "unexpected byte 0x%02x", (unsigned) c);
  }
  if (t != PS_JSON_ERROR)
    after_value (r);
  return t;
}

static COLD ps_json_token
eof_inside (ps_json_reader *r)
{
  if (r->token == PS_JSON_ERROR)
    return PS_JSON_ERROR;
  if (r->level == 0)
    return fail_at (r, r->end, "unexpected end of input");
  return fail_at (r, r->end, "unexpected end of input inside %s",
                  r->stack[r->level - 1] == 'a' ? "array" : "object");
}

/* The value fields of the token about to be read, cleared. */
static inline void
clear_token (ps_json_reader *r)
{
  r->str = "";
  r->len = 0;
  r->escaped = false;
  r->num = 0;
  r->is_int = false;
  r->i64 = 0;
}

/* ps_json_next outside a container: before the top-level value (a byte
 * order mark, then the value) and after it (only whitespace, then EOF).
 * Apart from the hot path below, so that the latter stays small. */
static COLD ps_json_token
next_outside (ps_json_reader *r)
{
  if (r->state == ST_DONE)
    return r->token;
  clear_token (r);

  for (;;) {
    int c = skip_ws (r);
    if (c < 0 && r->token == PS_JSON_ERROR)
      return PS_JSON_ERROR;
    mark (r, r->p);

    switch (r->state) {
    case ST_BOM:
      r->state = ST_START;
      if (c == 0xef && r->line == 1 && r->col == 1 && peek (r, 1) == 0xbb && peek (r, 2) == 0xbf) {
        r->p += 3;
        r->lstart = r->p;
        continue;
      }
      /* fall through */
    case ST_START:
      if (c < 0)
        return fail_at (r, r->p, "empty input");
      if (scan_value (r, c) == PS_JSON_ERROR)
        return PS_JSON_ERROR;
      break;

    case ST_END:
      if (c >= 0)
        return fail_at (r, r->p, "trailing data after the top-level value");
      r->state = ST_DONE;
      r->token = PS_JSON_EOF;
      break;

    default:
      return r->token;
    }
    r->depth = r->level;
    return r->token;
  }
}

/* The errors of the states inside a container (cold). */
static COLD ps_json_token
key_error (ps_json_reader *r, int state, int c)
{
  if (c == '}')
    return fail_at (r, r->p, "trailing comma before '}'");
  (void) state;
  return fail_at (r, r->p, "expected string as object key");
}

static COLD ps_json_token
after_error (ps_json_reader *r, bool in_array)
{
  return fail_at (r, r->p, in_array ? "expected ',' or ']' after array element"
                                    : "expected ',' or '}' after object member");
}

/* The general path of ps_json_next: every state, every token, chunk ends.
 * Inside a container the state machine needs one test of the state per
 * token; the rare paths (errors, the ends of the input, the top level) are
 * cold functions. */
static ps_json_token
next_general (ps_json_reader *r)
{
  int state = r->state;
  if (state < ST_VALUE || state > ST_AFTER)
    return next_outside (r);
  clear_token (r);

  for (;;) {
    PREFETCH_AHEAD (r->p);
    int c = skip_ws (r);
    if (c < 0)
      return eof_inside (r);
    mark (r, r->p);

    ps_json_token t;
    if (state == ST_KEY || state == ST_OBJECT_FIRST) {
      if (c != '"') {
        if (c == '}' && state == ST_OBJECT_FIRST) {
          t = close_container (r);
        } else {
          return key_error (r, state, c);
        }
      } else {
        t = scan_string (r, PS_JSON_KEY);
        if (t == PS_JSON_ERROR)
          return t;
        /* As in after_value, for the ':'. */
        if (r->p < r->end && *r->p == ':') {
          r->p++;
          r->state = ST_VALUE;
        } else {
          r->state = ST_COLON;
        }
      }
    } else if (state == ST_AFTER) {
      bool in_array = r->stack[r->level - 1] == 'a';
      if (c == ',') {
        r->p++;
        state = r->state = in_array ? ST_ARRAY_VALUE : ST_KEY;
        continue;
      }
      if (c != (in_array ? ']' : '}'))
        return after_error (r, in_array);
      t = close_container (r);
    } else if (state == ST_COLON) {
      if (c != ':')
        return fail_at (r, r->p, "expected ':' after object key");
      r->p++;
      state = r->state = ST_VALUE;
      continue;
    } else if (c == ']' && state != ST_VALUE) {
      /* ST_ARRAY_FIRST or ST_ARRAY_VALUE */
      if (state == ST_ARRAY_VALUE)
        return fail_at (r, r->p, "trailing comma before ']'");
      t = close_container (r);
    } else {
      t = scan_value (r, c);
      if (t == PS_JSON_ERROR)
        return t;
    }
    r->depth = r->level;
    return t;
  }
}

/* --- the fast path ------------------------------------------------------ */

/* Most tokens of a large document are short keys, names and integers a
 * single space after the ':' or ',' before them.  ps_json_next first tries
 * those with no calls at all (a call anywhere on the path made the
 * compiler save and restore registers for every token, a sixth of the
 * instructions): the token must lie within FAST_WINDOW bytes of r->p, and
 * nothing in r but sbuf changes unless the token is taken (line ends and
 * indentation before it are consumed for good, with the line count), so
 * that the general path can start over from r->p for anything else (an
 * escape, a fraction, an error, the end of a chunk). */
#define FAST_WINDOW 64

#if defined(__SSE2__)
#define FAST_BLOCK 16
typedef unsigned fast_mask;
/* Bit i set: byte i of the 16 at p stops the fast scan of a string (a
 * quote, a backslash, a control byte, or a byte >= 0x80, which is below
 * 0x20 as a signed byte). */
static inline unsigned
fast_stops (const unsigned char *p, char *dst)
{
  __m128i v = _mm_loadu_si128 ((const __m128i *) (const void *) p);
  _mm_storeu_si128 ((__m128i *) (void *) dst, v);
  __m128i q = _mm_cmpeq_epi8 (v, _mm_set1_epi8 ('"'));
  __m128i b = _mm_cmpeq_epi8 (v, _mm_set1_epi8 ('\\'));
  __m128i lo = _mm_cmplt_epi8 (v, _mm_set1_epi8 (0x20));
  return (unsigned) _mm_movemask_epi8 (_mm_or_si128 (_mm_or_si128 (q, b), lo));
}
#define FAST_FIRST(m) ((size_t) __builtin_ctz (m))
#elif defined(FIRST_STOP)
#define FAST_BLOCK 8
typedef uint64_t fast_mask;
static inline uint64_t
fast_stops (const unsigned char *p, char *dst)
{
  uint64_t w;
  memcpy (&w, p, 8);
  memcpy (dst, &w, 8);
  return stop_mask (w);
}
#define FAST_FIRST(m) FIRST_STOP (m)
#endif

/* After a value taken by the fast path at `after` (inside a container):
 * a ',' right behind it is consumed, as after_value does. */
static inline void
fast_after_value (ps_json_reader *r, const unsigned char *after)
{
  if (*after == ',') {
    r->p = after + 1;
    r->state = r->stack[r->level - 1] == 'a' ? ST_ARRAY_VALUE : ST_KEY;
  } else {
    r->p = after;
    r->state = ST_AFTER;
  }
}

ps_json_token
ps_json_next (ps_json_reader *r)
{
  uint64_t w8;
  const unsigned char *p = r->p;
  int state = r->state;
  if (r->end - p < FAST_WINDOW || state < ST_VALUE || state > ST_AFTER || state == ST_COLON)
    return next_general (r);
  PREFETCH_AHEAD (p);
  if (*p == ' ') {
    p++;
  } else if (*p == '\n') {
    /* Line ends and indentation are taken for good (r->p moves past them),
     * whatever becomes of the token. */
    uint32_t line = r->cur_line;
    const unsigned char *lstart;
    do {
      lstart = ++p;
      if (line < UINT32_MAX)
        line++;
      while (r->end - p >= 8 && (memcpy (&w8, p, 8), w8 == 0x2020202020202020u))
        p += 8;
      while (p < r->end && *p == ' ')
        p++;
    } while (p < r->end && *p == '\n');
    r->cur_line = line;
    r->cur_col = 1;
    r->lstart = lstart;
    r->p = p;
    if (r->end - p < FAST_WINDOW)
      return next_general (r);
  }
  unsigned c = *p;
  ps_json_token t;

  if (state == ST_AFTER) {
    /* A container closes, inside another. */
    uint8_t top = r->stack[r->level - 1];
    if (c != (top == 'a' ? ']' : '}') || r->level < 2)
      return next_general (r);
    mark (r, p);
    clear_token (r);
    r->level--;
    r->depth = r->level;
    fast_after_value (r, p + 1);
    return r->token = top == 'a' ? PS_JSON_ARRAY_END : PS_JSON_OBJECT_END;
  }

#ifdef FAST_BLOCK
  if (c == '"') {
    /* Fits: sbuf takes the blocks, max_string the string. */
    if (r->scap < FAST_WINDOW + FAST_BLOCK || r->max_string < FAST_WINDOW)
      return next_general (r);
    const unsigned char *s = p + 1;
    size_t len = 0;
    for (;;) {
      /* The block and the byte after the closing quote stay within the
       * window: s is p + 1 + len. */
      if (len + FAST_BLOCK + 2 > FAST_WINDOW)
        return next_general (r);
      fast_mask m = fast_stops (s, r->sbuf + len);
      if (m) {
        size_t k = FAST_FIRST (m);
        if (s[k] != '"')
          return next_general (r);
        len += k;
        s += k + 1;
        break;
      }
      s += FAST_BLOCK;
      len += FAST_BLOCK;
    }
    r->sbuf[len] = '\0';
    mark (r, p);
    r->str = r->sbuf;
    r->len = len;
    r->escaped = false;
    r->num = 0;
    r->is_int = false;
    r->i64 = 0;
    r->depth = r->level;
    if (state >= ST_OBJECT_FIRST) {
      if (*s == ':') {
        r->p = s + 1;
        r->state = ST_VALUE;
      } else {
        r->p = s;
        r->state = ST_COLON;
      }
      return r->token = PS_JSON_KEY;
    }
    fast_after_value (r, s);
    return r->token = PS_JSON_STRING;
  }
#endif
  if (state >= ST_OBJECT_FIRST)
    return next_general (r);

  if (is_digit ((int) c) || c == '-') {
    /* An integer of at most 18 digits, which u holds exactly. */
    const unsigned char *q = p;
    bool neg = c == '-';
    if (neg)
      q++;
    if (!is_digit (q[0]) || (q[0] == '0' && is_digit (q[1])))
      return next_general (r);
    uint64_t u = 0;
    size_t n = 0;
    while (is_digit (q[n]) && n < 19) {
      u = u * 10 + (uint64_t) (q[n] - '0');
      n++;
    }
    q += n;
    c = *q;
    if (n > 18 || is_word ((int) c) || c == '.' || c == '+' || c == '-')
      return next_general (r);
    mark (r, p);
    r->str = "";
    r->len = 0;
    r->escaped = false;
    r->is_int = true;
    r->i64 = neg ? -(int64_t) u : (int64_t) u;
    r->num = neg ? -(double) u : (double) u;
    r->depth = r->level;
    fast_after_value (r, q);
    return r->token = PS_JSON_NUMBER;
  }

  if (c == '{' || c == '[') {
    if (r->level >= r->max_depth || r->level >= r->stack_cap)
      return next_general (r);
    uint8_t kind = c == '[' ? 'a' : 'o';
    mark (r, p);
    clear_token (r);
    r->stack[r->level++] = kind;
    r->depth = r->level;
    r->p = p + 1;
    r->state = kind == 'a' ? ST_ARRAY_FIRST : ST_OBJECT_FIRST;
    return r->token = kind == 'a' ? PS_JSON_ARRAY_BEGIN : PS_JSON_OBJECT_BEGIN;
  }

  size_t n;
  if (c == 't' && memcmp (p, "true", 4) == 0) {
    t = PS_JSON_TRUE;
    n = 4;
  } else if (c == 'f' && memcmp (p, "false", 5) == 0) {
    t = PS_JSON_FALSE;
    n = 5;
  } else if (c == 'n' && memcmp (p, "null", 4) == 0) {
    t = PS_JSON_NULL;
    n = 4;
  } else {
    return next_general (r);
  }
  if (is_word (p[n]))
    return next_general (r);
  mark (r, p);
  clear_token (r);
  r->depth = r->level;
  fast_after_value (r, p + n);
  return r->token = t;
}

ps_json_token
ps_json_skip_value (ps_json_reader *r)
{
  ps_json_token t = ps_json_next (r);
  if ((t == PS_JSON_OBJECT_BEGIN || t == PS_JSON_ARRAY_BEGIN) && ps_json_skip_current (r) < 0)
    return PS_JSON_ERROR;
  return t;
}

int
ps_json_skip_current (ps_json_reader *r)
{
  if (r->token == PS_JSON_ERROR)
    return PS_JSON_ERROR;
  if (r->token != PS_JSON_OBJECT_BEGIN && r->token != PS_JSON_ARRAY_BEGIN)
    return 0;
  int target = r->level - 1;
  while (r->level > target)
    if (ps_json_next (r) == PS_JSON_ERROR)
      return PS_JSON_ERROR;
  return 0;
}

const char *
ps_json_token_name (ps_json_token t)
{
  switch (t) {
  case PS_JSON_ERROR: return "error";
  case PS_JSON_EOF: return "end of input";
  case PS_JSON_OBJECT_BEGIN: return "object";
  case PS_JSON_OBJECT_END: return "end of object";
  case PS_JSON_ARRAY_BEGIN: return "array";
  case PS_JSON_ARRAY_END: return "end of array";
  case PS_JSON_KEY: return "key";
  case PS_JSON_STRING: return "string";
  case PS_JSON_NUMBER: return "number";
  case PS_JSON_TRUE: return "true";
  case PS_JSON_FALSE: return "false";
  case PS_JSON_NULL: return "null";
  default: return "unknown token";
  }
}

/* --- positions of offsets ----------------------------------------------- */

void
ps_json_locator_init (ps_json_locator *l, const char *data, size_t len)
{
  l->data = (const unsigned char *) data;
  l->len = len;
  /* A byte order mark is not counted, as the reader skips it. */
  l->start = len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  l->pos = l->line_start = l->start;
  l->cont = 0;
  l->line = 1;
}

void
ps_json_locate (ps_json_locator *l, uint64_t offset, uint32_t *line, uint32_t *col)
{
  if (offset > l->len)
    offset = l->len;
  if (offset < l->pos) {
    l->pos = l->line_start = l->start;
    l->cont = 0;
    l->line = 1;
  }
  /* Lines end at LF; a column counts the code points before it on its
   * line (bytes that are not UTF-8 continuation bytes), as the reader's do. */
  while (l->pos < offset) {
    const unsigned char *nl = memchr (l->data + l->pos, '\n', (size_t) (offset - l->pos));
    size_t stop = nl ? (size_t) (nl - l->data) : (size_t) offset;
    for (size_t i = l->pos; i < stop; i++)
      l->cont += (l->data[i] & 0xc0) == 0x80;
    l->pos = stop;
    if (nl) {
      if (l->line < UINT32_MAX)
        l->line++;
      l->pos = l->line_start = stop + 1;
      l->cont = 0;
    }
  }
  uint64_t c = 1 + (offset - l->line_start) - l->cont;
  *line = l->line;
  *col = c > UINT32_MAX ? UINT32_MAX : (uint32_t) c;
}

/* --- setup -------------------------------------------------------------- */

static int
init_common (ps_json_reader *r)
{
  r->token = PS_JSON_EOF;
  r->str = "";
  r->max_depth = PS_JSON_MAX_DEPTH;
  r->max_string = PS_JSON_MAX_STRING;
  r->cur_line = 1;
  r->cur_col = 1;
  r->state = ST_BOM;
  /* Zeroed, so that every byte of its first SBUF_INIT is defined: callers
   * may compare a short key a word at a time. */
  r->sbuf = calloc (1, SBUF_INIT);
  r->stack = malloc (STACK_INIT);
  if (!r->sbuf || !r->stack) {
    /* A failed init holds nothing, so that callers need not close it. */
    free (r->sbuf);
    free (r->stack);
    free (r->chunk);
    r->sbuf = NULL;
    r->stack = NULL;
    r->chunk = NULL;
    fail_lc (r, 1, 1, "out of memory");
    return PS_ENOMEM;
  }
  r->sbuf[0] = '\0';
  r->scap = SBUF_INIT;
  r->stack_cap = STACK_INIT;
  return 0;
}

int
ps_json_init_mem (ps_json_reader *r, const char *data, size_t len)
{
  if (!r)
    return PS_EINVAL;
  memset (r, 0, sizeof *r);
  if (!data && len > 0)
    return PS_EINVAL;
  static const unsigned char empty[1];
  r->buf = data ? (const unsigned char *) data : empty;
  r->p = r->lstart = r->buf;
  r->end = r->buf + len;
  return init_common (r);
}

int
ps_json_init_mem_at (ps_json_reader *r, const char *data, size_t len, size_t offset,
                     uint32_t line, uint32_t col, const uint8_t *stack, int level)
{
  if (offset > len || level < 1 || level > PS_JSON_MAX_DEPTH || stack[level - 1] != 'a')
    return PS_EINVAL;
  int ret = ps_json_init_mem (r, data, len);
  if (ret < 0)
    return ret;
  if (level > r->stack_cap) {
    uint8_t *st = realloc (r->stack, (size_t) level);
    if (!st) {
      ps_json_close (r);
      return PS_ENOMEM;
    }
    r->stack = st;
    r->stack_cap = level;
  }
  memcpy (r->stack, stack, (size_t) level);
  r->level = r->depth = level;
  r->p = r->lstart = r->buf + offset;
  r->cur_line = line;
  r->cur_col = col;
  r->state = ST_ARRAY_VALUE;
  return 0;
}

void
ps_json_resume (ps_json_reader *r, const ps_json_reader *from, uint32_t line, uint32_t col)
{
  r->p = from->p;
  r->lstart = from->lstart;
  r->cur_line = from->cur_line + line - 1;
  r->cur_col = from->cur_line == 1 ? from->cur_col + col - 1 : from->cur_col;
  r->level = from->level;
  r->state = from->state;
  r->token = from->token;
  r->line = from->line + line - 1;
  r->col = from->line == 1 ? from->col + col - 1 : from->col;
  r->offset = from->offset;
  r->depth = from->depth;
  r->str = "";
  r->len = 0;
  r->escaped = false;
}

int
ps_json_init_stream (ps_json_reader *r, ps_json_read_fn read, void *ctx)
{
  if (!r)
    return PS_EINVAL;
  memset (r, 0, sizeof *r);
  if (!read)
    return PS_EINVAL;
  r->read = read;
  r->read_ctx = ctx;
  r->chunk = malloc (CHUNK_SIZE);
  if (!r->chunk) {
    fail_lc (r, 1, 1, "out of memory");
    return PS_ENOMEM;
  }
  r->chunk_cap = CHUNK_SIZE;
  r->buf = r->p = r->end = r->lstart = r->chunk;
  return init_common (r);
}

void
ps_json_close (ps_json_reader *r)
{
  if (!r)
    return;
  free (r->chunk);
  free (r->sbuf);
  free (r->stack);
  memset (r, 0, sizeof *r);
}

size_t
ps_json_offset (const ps_json_reader *r)
{
  /* In memory mode buf is the caller's block; a stream's chunk is not. */
  return r->read ? 0 : (size_t) (r->p - r->buf);
}

int
ps_json_error_status (const ps_json_reader *r)
{
  return strcmp (r->error, "out of memory") == 0 ? PS_ENOMEM : PS_ESYNTAX;
}
