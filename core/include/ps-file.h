/* ps-file.h: whole-file reads and all-or-nothing writes. */
#ifndef PS_FILE_H
#define PS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ps-error.h"

/* Opens a file to read as an input: refuses folders and regular files
 * larger than max_bytes, and notes it (see "Inputs" below); "-" is
 * standard input.  Returns the descriptor (*st gets its status), or a
 * negative code after an error in diag (without position). */
int ps_file_open_input (const char *path, size_t max_bytes, struct stat *st, ps_diag *diag);

/* Reads a whole file (at most max_bytes; "-" is standard input) into a
 * NUL-terminated buffer the caller frees: the one whole-file reader of
 * planscope.  Errors go to diag (without position). */
int ps_file_read_all (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag);
/* The same for one of planscope's own files (its cache): a regular file
 * only (a FIFO or device put in its place is refused without blocking),
 * and not an input, so that it can be written again. */
int ps_file_read_own (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag);

/* Inputs.  Every regular file opened by ps_file_open_input (every reader
 * of planscope's, standard input included) is noted: its identity (device,
 * inode and birth time, so that a new file given a deleted input's inode
 * is not mistaken for it) and the canonical path it was read by.
 * ps_file_write_atomic refuses to write a file that has a noted identity,
 * under any of its names, or that lies at a noted path (an input an
 * editor replaced by rename), so that an output can never overwrite what
 * it was made from.  The record is process-wide, thread-safe, and forgets
 * nothing while the process runs. */
bool ps_file_is_input (const char *path);

/* Writes a file all or nothing: `write` writes to a temporary file in the
 * same folder, which is flushed, synced and renamed over `path` only when
 * write returns 0.  On failure the old file is untouched and errbuf says
 * why.  A path that names an input (see above) is refused with PS_EINVAL
 * before anything is written.  A symbolic link stays: the file it names is
 * replaced.  A device or a pipe (/dev/null, a FIFO) is written in place,
 * never replaced; a folder is an error. */
typedef int (*ps_file_writer) (FILE *out, void *ctx);
int ps_file_write_atomic (const char *path, ps_file_writer write, void *ctx, char *errbuf,
                          size_t errlen);
/* The same for a block of bytes already in memory. */
int ps_file_write_bytes (const char *path, const void *data, size_t len, char *errbuf,
                         size_t errlen);

#endif
