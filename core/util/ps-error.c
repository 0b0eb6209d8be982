/* ps-error.c: status code texts and the diagnostic list. */
#include "ps-error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *
ps_strerror (int code)
{
  switch (code) {
  case PS_OK:
    return "success";
#define PS__ERR_CASE(name, c, text) \
  case PS_##name:                   \
    return text;
    PS_ERRNO_MAP (PS__ERR_CASE)
#undef PS__ERR_CASE
  default:
    return "unknown error";
  }
}

void
ps_diag_init (ps_diag *d, const char *file)
{
  memset (d, 0, sizeof *d);
  d->file = strdup (file ? file : "<input>");
  d->max_warnings = 1000;
}

void
ps_diag_free (ps_diag *d)
{
  for (size_t i = 0; i < d->count; i++)
    free (d->entries[i].message);
  free (d->entries);
  free (d->file);
  memset (d, 0, sizeof *d);
}

int
ps_diag_add (ps_diag *d, ps_severity sev, uint32_t line, uint32_t col, const char *fmt, ...)
{
  int ret = sev == PS_SEV_ERROR ? PS_EINVAL : 0;
  if (sev == PS_SEV_ERROR)
    d->errors++;
  else
    d->warnings++;
  /* Errors are always kept; warnings only up to a cap so that a hostile
   * file cannot make the list grow without bound. */
  if (sev == PS_SEV_WARNING && d->warnings > d->max_warnings)
    return ret;
  if (d->count == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 8;
    ps_diag_entry *e = realloc (d->entries, cap * sizeof *e);
    if (!e)
      return ret;
    d->entries = e;
    d->cap = cap;
  }
  va_list ap;
  va_start (ap, fmt);
  char buf[1024];
  vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  /* Messages quote names from input files: control characters (a line
   * break, or a terminal escape sequence) become '?', so that every message
   * stays one line and cannot drive the terminal it is printed on. */
  for (char *c = buf; *c; c++)
    if ((unsigned char) *c < 0x20 || *c == 0x7f)
      *c = '?';
  char *msg = strdup (buf);
  if (!msg)
    return ret;
  d->entries[d->count++] = (ps_diag_entry){ sev, line, col, msg };
  return ret;
}

void
ps_diag_print_entry (const ps_diag *d, const ps_diag_entry *e, FILE *stream)
{
  const char *kind = e->severity == PS_SEV_ERROR ? "error" : "warning";
  if (e->line > 0)
    fprintf (stream, "%s:%u:%u: %s: %s\n", d->file, e->line, e->col ? e->col : 1, kind,
             e->message);
  else
    fprintf (stream, "%s: %s: %s\n", d->file, kind, e->message);
}

void
ps_diag_print (const ps_diag *d, FILE *stream)
{
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < d->count; i++)
      if ((int) d->entries[i].severity == pass)
        ps_diag_print_entry (d, &d->entries[i], stream);
  if (d->warnings > d->max_warnings)
    fprintf (stream, "%s: warning: %zu more warnings not shown\n", d->file,
             d->warnings - d->max_warnings);
}

void
ps_put_printable (FILE *out, const char *s)
{
  for (const unsigned char *c = (const unsigned char *) s; *c; c++)
    fputc (*c < 0x20 || *c == 0x7f ? '?' : *c, out);
}
