/* ps-jsonw.h: small helpers for writing JSON text. */
#ifndef PS_JSONW_H
#define PS_JSONW_H

#include <stdio.h>

/* Writes s as a JSON string literal, quotes included, escaping '"', '\\'
 * and control characters.  Valid UTF-8 is written unchanged; a byte that
 * does not start a valid UTF-8 sequence is written as \ufffd, so the output
 * is always valid JSON.  NULL is written as null. */
void ps_jsonw_string (FILE *out, const char *s);
/* Writes a finite number compactly: an integral value below 2^53 in
 * magnitude as an integer (-0 as 0), any other with the fewest of 15, 16 or
 * 17 significant digits that read back as the same double, with a '.'
 * whatever the locale.  Callers must not pass NaN or an infinity; 0 is
 * written if they do. */
void ps_jsonw_number (FILE *out, double v);

/* The same into a ps_outbuf (util/ps-outbuf.h), which core's long outputs
 * are written through. */
struct ps_outbuf;
void ps_jsonw_string_buf (struct ps_outbuf *out, const char *s);
void ps_jsonw_number_buf (struct ps_outbuf *out, double v);

#endif
