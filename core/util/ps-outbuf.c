/* ps-outbuf.c: text output through a buffer of its own (ps-outbuf.h). */
#include "ps-outbuf.h"

#include <stdarg.h>
#include <string.h>

void
ps_outbuf_flush (ps_outbuf *o)
{
  if (o->n)
    fwrite (o->b, 1, o->n, o->out);
  o->n = 0;
}

void
ps_outbuf_mem (ps_outbuf *o, const char *s, size_t len)
{
  if (len > PS_OUTBUF_CAP - o->n) {
    ps_outbuf_flush (o);
    if (len > PS_OUTBUF_CAP) {
      fwrite (s, 1, len, o->out);
      return;
    }
  }
  memcpy (o->b + o->n, s, len);
  o->n += len;
}

void
ps_outbuf_str (ps_outbuf *o, const char *s)
{
  ps_outbuf_mem (o, s, strlen (s));
}

void
ps_outbuf_spaces (ps_outbuf *o, size_t n)
{
  while (n-- > 0)
    ps_outbuf_char (o, ' ');
}

void
ps_outbuf_uint_left (ps_outbuf *o, uint64_t v, int width)
{
  char d[20];
  size_t len = 0;
  do {
    d[sizeof d - ++len] = (char) ('0' + v % 10);
    v /= 10;
  } while (v);
  ps_outbuf_mem (o, d + sizeof d - len, len);
  if (width > 0 && (size_t) width > len)
    ps_outbuf_spaces (o, (size_t) width - len);
}

void
ps_outbuf_put (FILE *out, void (*write) (ps_outbuf *o, const char *s), const char *s)
{
  ps_outbuf o;
  ps_outbuf_init (&o, out);
  write (&o, s);
  ps_outbuf_flush (&o);
}

void
ps_outbuf_printf (ps_outbuf *o, const char *fmt, ...)
{
  va_list ap;
  size_t room = PS_OUTBUF_CAP - o->n;
  va_start (ap, fmt);
  int len = vsnprintf (o->b + o->n, room, fmt, ap);
  va_end (ap);
  if (len < 0)
    return;
  if ((size_t) len < room) {
    o->n += (size_t) len;
    return;
  }
  /* It did not fit: flushed, and written again (to the FILE when even an
   * empty buffer is too small). */
  ps_outbuf_flush (o);
  va_start (ap, fmt);
  if ((size_t) len < PS_OUTBUF_CAP)
    o->n = (size_t) vsnprintf (o->b, PS_OUTBUF_CAP, fmt, ap);
  else
    vfprintf (o->out, fmt, ap);
  va_end (ap);
}
