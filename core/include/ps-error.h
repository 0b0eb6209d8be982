/* ps-error.h: located diagnostics for planscope's core.
 *
 * Every core function that can fail returns 0 or one of the negative
 * codes of ps-status.h.  Problems in input files are also described by a
 * ps_diag, which carries the file, line, column and a message that names
 * the JSON path. */
#ifndef PS_ERROR_H
#define PS_ERROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ps-status.h"

typedef enum ps_severity { PS_SEV_ERROR = 0, PS_SEV_WARNING = 1 } ps_severity;

/* One located message.  line and col are 1-based; 0 means unknown. */
typedef struct ps_diag_entry {
  ps_severity severity;
  uint32_t line;
  uint32_t col;
  char *message;
} ps_diag_entry;

/* A list of diagnostics for one input file.  The caller owns it:
 * ps_diag_init before use, ps_diag_free after. */
typedef struct ps_diag {
  char *file; /* as given by the user; used as the FILE: prefix */
  ps_diag_entry *entries;
  size_t count;
  uint32_t cap;
  size_t errors;
  size_t warnings;
  size_t max_warnings; /* further warnings are counted but not stored */
  /* Set by a caller that may want to stop a long load (the app, when the
   * user cancels or opens another file); NULL, as ps_diag_init leaves it,
   * never stops anything.  Loads call it now and then (ps_diag_progress)
   * with the stage ("read", "parse") and how far into it they are, from
   * 0 to 1 (0 where that is unknown, as in a pipe); returning false stops
   * the load, which then fails with PS_ECANCELED. */
  bool (*progress) (void *ctx, const char *stage, double fraction);
  void *progress_ctx;
} ps_diag;

void ps_diag_init(ps_diag *d, const char *file);
void ps_diag_free(ps_diag *d);
/* Adds a formatted message.  Returns PS_EINVAL for errors (so a caller can
 * write `return ps_diag_error(...)`) and 0 for warnings. */
int ps_diag_add(ps_diag *d, ps_severity sev, uint32_t line, uint32_t col,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define ps_diag_error(d, line, col, ...) \
  ps_diag_add((d), PS_SEV_ERROR, (line), (col), __VA_ARGS__)
#define ps_diag_warn(d, line, col, ...) \
  ps_diag_add((d), PS_SEV_WARNING, (line), (col), __VA_ARGS__)

/* Returns rc, the result of a load into d, after making sure that a
 * failure left at least one error in d since it had errors_before: what
 * failed for want of memory has no words of its own, and a caller must
 * never be left with a failure and nothing to say.  The fallback message
 * is "cannot WHAT: REASON" (ps_strerror). */
int ps_diag_result (ps_diag *d, size_t errors_before, int rc, const char *what);

/* A point in d's list, and d taken back to it: what was added since is
 * dropped (messages about input that turned out not to be the file's). */
typedef struct ps_diag_mark {
  size_t count, errors, warnings;
} ps_diag_mark;
ps_diag_mark ps_diag_mark_now(const ps_diag *d);
void ps_diag_rewind(ps_diag *d, ps_diag_mark m);

/* Asks d's progress hook (when there is one) whether to go on: 0, or
 * PS_ECANCELED when the caller stopped the load. */
int ps_diag_progress (ps_diag *d, const char *stage, double fraction);

/* Writes one entry as `FILE:LINE:COL: error: MESSAGE\n` (or `FILE: ...` when
 * the position is unknown). */
void ps_diag_print_entry(const ps_diag *d, const ps_diag_entry *e, FILE *stream);
/* Prints errors first, then warnings, each on one line. */
void ps_diag_print(const ps_diag *d, FILE *stream);

/* Prints text from an input file (a name, a message quoting names) with
 * control characters replaced by '?', so that it stays on its line and
 * cannot drive the terminal it is printed on. */
void ps_put_printable (FILE *out, const char *s);
/* The same into a ps_outbuf (util/ps-outbuf.h), which core's long outputs
 * are written through. */
struct ps_outbuf;
void ps_put_printable_buf (struct ps_outbuf *out, const char *s);

/* Copies len bytes of s into out (cap bytes, NUL included) for a message:
 * control characters become '?', and text that does not fit is cut at a
 * UTF-8 boundary and ends with "...". */
void ps_quote_text (char *out, size_t cap, const char *s, size_t len);

/* "Did you mean": the name among allowed[0..n) (NULL entries are skipped)
 * closest to text[0..len) in edits and adjacent transpositions, if it is
 * at most two away; else NULL. */
const char *ps_suggest (const char *text, size_t len, const char *const *allowed, size_t n);

#endif
