/* ps-jsonw.h: small helpers for writing JSON text. */
#ifndef PS_JSONW_H
#define PS_JSONW_H

#include <stdio.h>

/* Writes s as a JSON string literal, quotes included, escaping as needed. */
void ps_jsonw_string (FILE *out, const char *s);
/* Writes a finite number compactly (integers without a fraction). */
void ps_jsonw_number (FILE *out, double v);

#endif
