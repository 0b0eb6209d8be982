/* ps-outbuf.h: long text output (a 1M-node plan's half million lines)
 * built in a buffer of its own and handed to its FILE a block at a time.
 * Through stdio, every field of a line is a call that takes the stream's
 * lock, and a number a format string parsed: the 1M-node layered plan's
 * 30 MB of text took 0.25 s that way.  Not installed; core/ only. */
#ifndef PS_OUTBUF_H
#define PS_OUTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PS_OUTBUF_CAP 16384u

typedef struct ps_outbuf {
  FILE *out;
  size_t n;
  char b[PS_OUTBUF_CAP];
} ps_outbuf;

static inline void
ps_outbuf_init (ps_outbuf *o, FILE *out)
{
  o->out = out;
  o->n = 0;
}

/* Hands what is buffered to the FILE (whose own errors ferror tells). */
void ps_outbuf_flush (ps_outbuf *o);
void ps_outbuf_mem (ps_outbuf *o, const char *s, size_t len);
void ps_outbuf_str (ps_outbuf *o, const char *s);

static inline void
ps_outbuf_char (ps_outbuf *o, char c)
{
  if (o->n == PS_OUTBUF_CAP)
    ps_outbuf_flush (o);
  o->b[o->n++] = c;
}

void ps_outbuf_spaces (ps_outbuf *o, size_t n);
/* printf's "%-*u": v, then spaces up to `width`.  (Text from an input
 * file: ps_put_printable_buf, ps-error.h; text padded to a column:
 * ps_format_column_buf, ps-format.h; JSON: ps-jsonw.h.) */
void ps_outbuf_uint_left (ps_outbuf *o, uint64_t v, int width);
/* write (o, s) straight to the FILE out, through a buffer on the stack:
 * the FILE forms of the _buf writers of text (one stdio call for s). */
void ps_outbuf_put (FILE *out, void (*write) (ps_outbuf *o, const char *s), const char *s);
void ps_outbuf_printf (ps_outbuf *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 2, 3)))
#endif
    ;

#endif
