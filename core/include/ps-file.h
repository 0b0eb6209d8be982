/* ps-file.h: whole-file reads and all-or-nothing writes. */
#ifndef PS_FILE_H
#define PS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ps-error.h"

/* Inputs are opened without blocking, and what is neither a regular file
 * nor, where the user named it, a pipe is refused at once: a device could
 * be endless (/dev/zero) or act when opened, and a FIFO named inside a
 * file would wait for a writer that never comes.
 *
 * Opens a file the user named (on the command line, in the app) to read:
 * "-" (standard input, whatever it is but a device other than a
 * terminal), a regular file of at most max_bytes, or a pipe (a FIFO,
 * /dev/stdin, <(...)), which is then waited on until its writer comes
 * (asking diag's progress hook now and then) and read once.  Folders and
 * devices are refused.  The file is noted (see "Inputs" below).  Returns
 * a blocking descriptor (*st gets its status), or a negative code after
 * an error in diag (without position). */
int ps_file_open_input (const char *path, size_t max_bytes, struct stat *st, ps_diag *diag);

/* A file the user named (as ps_file_open_input takes it), read a piece at
 * a time: for a reader that needs no more of it at once than a piece
 * (the JSON graph loader streams a large graph this way).  The whole-file
 * readers below are built on it. */
typedef struct ps_file_input {
  int fd;
  bool regular;     /* a regular file, whose size is `size` */
  size_t size;      /* 0 when not regular */
  size_t got;       /* bytes read so far */
  size_t max_bytes; /* reading more is an error */
  int status;       /* 0, or the error that ended the reading (said in diag) */
  const char *shown; /* the file as messages name it */
  ps_diag *diag;
} ps_file_input;

/* Opens the file as ps_file_open_input does.  0, or a negative code after
 * an error in diag; the input needs closing only after success. */
int ps_file_input_open (ps_file_input *in, const char *path, size_t max_bytes, ps_diag *diag);
/* Reads up to cap bytes into buf: the count, 0 at the end of the file, or
 * a negative code after an error in diag (a read error, or more than
 * max_bytes in all), which every later call returns too. */
long ps_file_input_read (ps_file_input *in, char *buf, size_t cap);
/* Reads the rest of the file after the *len bytes of *data (a malloc'd
 * block, or NULL with *len 0) into *data, which it reallocates, and
 * NUL-terminates it; asks diag's progress hook (stage "read") whether to
 * go on.  On failure *data is freed and NULL, and the error is in diag. */
int ps_file_input_read_rest (ps_file_input *in, char **data, size_t *len);
void ps_file_input_close (ps_file_input *in);

/* A large regular input mapped rather than copied (ps-file-map.c), from
 * its first byte whatever was read of it: 1 with *data its *len bytes
 * (its size when opened) followed by zero bytes, until
 * ps_file_mapping_free (*m); 0 when it is not mapped (too small, not
 * regular, or the system would not), and it is to be read.  Should
 * another process cut the file short meanwhile, the bytes it lost read as
 * zeros and ps_file_mapping_cut says so: whatever was made of them is to
 * be thrown away. */
typedef struct ps_file_mapping ps_file_mapping;
int ps_file_input_map (ps_file_input *in, const char **data, size_t *len, ps_file_mapping **m);
bool ps_file_mapping_cut (const ps_file_mapping *m);
void ps_file_mapping_free (ps_file_mapping *m);

/* A whole input, NUL-terminated: mapped where ps_file_input_map maps it,
 * else read into a buffer of its own; for a reader that is done with it
 * once it has made something of it. */
typedef struct ps_file_whole {
  const char *data;
  size_t len;
  char *buf;            /* read: the buffer */
  ps_file_mapping *map; /* mapped */
  ps_diag *diag;        /* the input's, and its messages up to the reading */
  ps_diag_mark read;
} ps_file_whole;
/* The whole of in, of which the len bytes of head (a malloc'd block that
 * it takes, or NULL) were read already.  0, or a negative code after an
 * error in in's diag (and *w holds nothing). */
int ps_file_input_whole (ps_file_input *in, char *head, size_t len, ps_file_whole *w);
/* The same for a file the user named (as ps_file_read_all reads it). */
int ps_file_read_whole (const char *path, size_t max_bytes, ps_file_whole *w, ps_diag *diag);
/* Frees w and returns rc, the result of reading it into something, unless
 * the file was cut short under its mapping meanwhile: then the messages
 * added to its diag since it was read (about bytes that were not the
 * file's) give way to one that says so, and the result is PS_EIO, and
 * what was made of it is to be thrown away. */
int ps_file_whole_end (ps_file_whole *w, int rc);
/* Frees w, whatever became of the file. */
void ps_file_whole_free (ps_file_whole *w);

/* Reads a whole file the user named (as ps_file_open_input takes it; at
 * most max_bytes) into a NUL-terminated buffer the caller frees and may
 * keep (a reader done with it once it is parsed takes ps_file_read_whole,
 * which maps a large file instead).  A long read asks diag's progress hook
 * (stage "read") whether to go on.  Errors go to diag (without
 * position). */
int ps_file_read_all (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag);
/* The same for a path named inside a file (a graph's device profile, a
 * kernel's module): a regular file only, and "-" is a file of that name. */
int ps_file_read_named (const char *path, size_t max_bytes, char **data, size_t *len,
                        ps_diag *diag);
/* The same for one of planscope's own files (its cache): a regular file
 * only, and not an input, so that it can be written again. */
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
 * same folder that has no name (O_TMPFILE) until it is complete, flushed
 * and synced; it then gets a short temporary name and is renamed over
 * `path`.  On failure the old file is untouched, nothing is left beside
 * it, and errbuf says why, with the system's reason when there is one
 * ("No space left on device").  A path that names an input (see above)
 * is refused with PS_EINVAL before anything is written, as is "".
 *
 * A new file gets mode 0666 less the umask; a replaced file keeps its
 * permissions (without setuid and setgid bits) and, where allowed, its
 * owner; a file without any write permission (mode 0444) is refused, not
 * replaced.  A symbolic link stays: the file it names is replaced (or
 * created, when a single link names nothing yet); a loop of links, or a
 * chain of links that ends nowhere, is an error.  A device or a pipe
 * (/dev/null, a FIFO) is written in place, never replaced; a folder is an
 * error.  Where the file system has no unnamed files, the temporary file
 * is named from the start and ps_file_remove_temporaries_on_signals
 * removes it on SIGINT, SIGTERM and SIGHUP. */
typedef int (*ps_file_writer) (FILE *out, void *ctx);
int ps_file_write_atomic (const char *path, ps_file_writer write, void *ctx, char *errbuf,
                          size_t errlen);
/* The same for a block of bytes already in memory. */
int ps_file_write_bytes (const char *path, const void *data, size_t len, char *errbuf,
                         size_t errlen);
/* Runs `write` into standard output (after what stdout holds), with the
 * same messages: "cannot write to standard output: REASON". */
int ps_file_write_stdout (ps_file_writer write, void *ctx, char *errbuf, size_t errlen);

/* Installs handlers for SIGINT, SIGTERM and SIGHUP (those not already
 * handled or ignored) that remove every named temporary file of writes in
 * progress, then let the signal do what it would have done.  Programs
 * call it once at start. */
void ps_file_remove_temporaries_on_signals (void);

#endif
