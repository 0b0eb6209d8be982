/* ps-file.h: whole-file reads and all-or-nothing writes. */
#ifndef PS_FILE_H
#define PS_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "ps-error.h"

/* Reads a whole file (at most max_bytes) into a NUL-terminated buffer the
 * caller frees.  Errors go to diag (without position). */
int ps_file_read_all (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag);

/* Writes a file all or nothing: `write` writes to a temporary file in the
 * same folder, which is flushed, synced and renamed over `path` only when
 * write returns 0.  On failure the old file is untouched and errbuf says
 * why. */
typedef int (*ps_file_writer) (FILE *out, void *ctx);
int ps_file_write_atomic (const char *path, ps_file_writer write, void *ctx, char *errbuf,
                          size_t errlen);

#endif
