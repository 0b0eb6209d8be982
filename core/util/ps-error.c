/* ps-error.c: the diagnostic list, and the pieces of messages: printable
 * names, quoted text and "did you mean". */
#include "ps-error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-outbuf.h"

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
  if (PS_ARRAY_RESERVE (d->entries, d->cap, (uint64_t) d->count + 1) < 0)
    return ret;
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

ps_diag_mark
ps_diag_mark_now (const ps_diag *d)
{
  return (ps_diag_mark){ d->count, d->errors, d->warnings };
}

void
ps_diag_rewind (ps_diag *d, ps_diag_mark m)
{
  for (size_t i = m.count; i < d->count; i++)
    free (d->entries[i].message);
  if (m.count < d->count)
    d->count = m.count;
  d->errors = m.errors;
  d->warnings = m.warnings;
}

int
ps_diag_result (ps_diag *d, size_t errors_before, int rc, const char *what)
{
  if (rc < 0 && d->errors == errors_before)
    ps_diag_error (d, 0, 0, "cannot %s: %s", what, ps_strerror (rc));
  return rc;
}

int
ps_diag_progress (ps_diag *d, const char *stage, double fraction)
{
  if (!d->progress || d->progress (d->progress_ctx, stage, fraction))
    return 0;
  return PS_ECANCELED;
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
  size_t kept = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < d->count; i++)
      if ((int) d->entries[i].severity == pass) {
        ps_diag_print_entry (d, &d->entries[i], stream);
        kept += pass == PS_SEV_ERROR;
      }
  /* An error whose text could not be stored for want of memory is still
   * an error, and the user is told so much. */
  if (d->errors > kept)
    fprintf (stream, "%s: error: out of memory: %zu error message%s could not be kept\n",
             d->file, d->errors - kept, d->errors - kept == 1 ? "" : "s");
  if (d->warnings > d->max_warnings)
    fprintf (stream, "%s: warning: %zu more warnings not shown\n", d->file,
             d->warnings - d->max_warnings);
}

void
ps_put_printable_buf (ps_outbuf *out, const char *s)
{
  /* Runs of printable bytes go out whole. */
  while (*s) {
    const char *run = s;
    while ((unsigned char) *s >= 0x20 && *s != 0x7f)
      s++;
    ps_outbuf_mem (out, run, (size_t) (s - run));
    if (*s) {
      ps_outbuf_char (out, '?');
      s++;
    }
  }
}

void
ps_put_printable (FILE *out, const char *s)
{
  ps_outbuf_put (out, ps_put_printable_buf, s);
}

void
ps_quote_text (char *out, size_t cap, const char *s, size_t len)
{
  size_t o = 0;
  for (size_t i = 0; i < len && o + 5 < cap; i++) {
    unsigned char c = (unsigned char) s[i];
    if (c < 0x20 || c == 0x7f)
      out[o++] = '?';
    else
      out[o++] = (char) c;
  }
  if (o + 5 >= cap && len > 0) {
    /* Drop the last bytes of an incomplete UTF-8 sequence, then mark the cut. */
    while (o > 0 && ((unsigned char) out[o - 1] & 0xc0) == 0x80)
      o--;
    if (o > 0 && ((unsigned char) out[o - 1] & 0x80))
      o--;
    memcpy (out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
}

/* Optimal string alignment distance (edits and adjacent transpositions),
 * giving up early at 3: only distances up to 2 matter. */
static int
edit_distance (const char *a, size_t la, const char *b, size_t lb)
{
  if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) > 2)
    return 3;
  int d[65][65];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = (int) i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = (int) j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int cost = a[i - 1] != b[j - 1];
      int v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v)
        v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v)
        v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

const char *
ps_suggest (const char *text, size_t len, const char *const *allowed, size_t n)
{
  const char *best = NULL;
  int best_d = 3;
  for (size_t i = 0; i < n; i++) {
    if (!allowed[i])
      continue;
    int d = edit_distance (text, len, allowed[i], strlen (allowed[i]));
    if (d < best_d) {
      best_d = d;
      best = allowed[i];
    }
  }
  return best;
}
