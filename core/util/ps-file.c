/* ps-file.c: the record of a run's inputs, and whole-file reads with a
 * size limit that never block on a pipe or a device nobody asked for (the
 * all-or-nothing writer is ps-file-write.c). */
/* statx (a file's birth time), realpath and F_DUPFD_CLOEXEC are beyond
 * the POSIX level the build asks for. */
#define _GNU_SOURCE

#include "ps-file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps-array.h"
#include "ps-file-private.h"
#include "ps-job.h"

/* ---- inputs ------------------------------------------------------------- */

/* Every input of the process, never forgotten: a run reads a handful of
 * files, the app at most thousands (kernel-cache entries), and a write
 * looks them up once. */
typedef struct {
  ps__file_id id;
  char *path; /* canonical path when read, or NULL (standard input) */
} input;

static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;
static input *inputs;
static uint32_t n_inputs, cap_inputs;

bool
ps__file_id_of (int dirfd, const char *path, int flags, ps__file_id *out)
{
  memset (out, 0, sizeof *out);
  struct statx sx;
  if (statx (dirfd, path, flags, STATX_TYPE | STATX_INO | STATX_CTIME | STATX_BTIME, &sx) == 0) {
    out->dev = ((uint64_t) sx.stx_dev_major << 32) | sx.stx_dev_minor;
    out->ino = sx.stx_ino;
    out->regular = S_ISREG (sx.stx_mode);
    /* Without a birth time the change time stands in: a new file that
     * got a freed inode was changed when it was made. */
    struct statx_timestamp t = (sx.stx_mask & STATX_BTIME) ? sx.stx_btime : sx.stx_ctime;
    out->birth_s = t.tv_sec;
    out->birth_ns = t.tv_nsec;
    return true;
  }
  if (errno != ENOSYS)
    return false;
  struct stat st;
  int r = (flags & AT_EMPTY_PATH) ? fstat (dirfd, &st) : fstatat (dirfd, path, &st, flags);
  if (r != 0)
    return false;
  out->dev = (uint64_t) st.st_dev;
  out->ino = (uint64_t) st.st_ino;
  out->regular = S_ISREG (st.st_mode);
  out->birth_s = (int64_t) st.st_ctim.tv_sec;
  out->birth_ns = (uint32_t) st.st_ctim.tv_nsec;
  return true;
}

bool
ps__file_id_same (const ps__file_id *a, const ps__file_id *b)
{
  return a->dev == b->dev && a->ino == b->ino && a->birth_s == b->birth_s
         && a->birth_ns == b->birth_ns;
}

/* The path a write to `path` lands on, made absolute and free of links,
 * even when the file does not exist yet (its folder must); NULL when it
 * cannot be worked out.  The caller frees it. */
static char *
canonical (const char *path)
{
  char *real = realpath (path, NULL);
  if (real)
    return real;
  const char *slash = strrchr (path, '/');
  char *dir = slash ? strndup (path, (size_t) (slash - path) + (slash == path)) : strdup (".");
  if (!dir)
    return NULL;
  char *rdir = realpath (dir, NULL);
  free (dir);
  if (!rdir)
    return NULL;
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen (rdir) + strlen (base) + 2;
  char *out = malloc (n);
  if (out)
    snprintf (out, n, "%s%s%s", rdir, strcmp (rdir, "/") ? "/" : "", base);
  free (rdir);
  return out;
}

/* Notes the regular file open as fd (named `path`, or NULL for standard
 * input): a pipe or a terminal is no file to keep. */
static void
note (int fd, const char *path)
{
  ps__file_id id;
  if (!ps__file_id_of (fd, "", AT_EMPTY_PATH, &id) || !id.regular)
    return;
  char *canon = path ? canonical (path) : NULL;
  pthread_mutex_lock (&inputs_lock);
  bool known = false;
  for (uint32_t i = 0; i < n_inputs && !known; i++)
    known = ps__file_id_same (&inputs[i].id, &id)
            && (!canon || (inputs[i].path && strcmp (inputs[i].path, canon) == 0));
  if (!known && PS_ARRAY_RESERVE (inputs, cap_inputs, (uint64_t) n_inputs + 1) == 0) {
    inputs[n_inputs++] = (input){ id, canon };
    canon = NULL;
  }
  pthread_mutex_unlock (&inputs_lock);
  free (canon);
}

bool
ps_file_is_input (const char *path)
{
  ps__file_id id;
  bool have_id = ps__file_id_of (AT_FDCWD, path, 0, &id) && id.regular;
  char *canon = canonical (path);
  bool found = false;
  pthread_mutex_lock (&inputs_lock);
  for (uint32_t i = 0; i < n_inputs && !found; i++)
    found = (have_id && ps__file_id_same (&inputs[i].id, &id))
            || (canon && inputs[i].path && strcmp (inputs[i].path, canon) == 0);
  pthread_mutex_unlock (&inputs_lock);
  free (canon);
  return found;
}

/* ---- reading ------------------------------------------------------------ */

/* How an input is opened: every kind without blocking, so that a FIFO or
 * a device put where a file was expected is refused, never waited on. */
typedef enum {
  /* A file the user named (on the command line, in the app's Open
   * dialog): "-" (standard input), a regular file, or a pipe, which the
   * user asked for and which is then read once, when its writer comes. */
  INPUT_MAIN,
  /* A path named inside a file (a graph's device, a kernel's module): a
   * regular file only. */
  INPUT_NAMED,
  /* One of planscope's own files (its cache): a regular file only, and
   * not noted as an input, so that it can be written again. */
  INPUT_OWN,
} input_kind;

/* What a file that is neither regular nor a folder is, for messages. */
static const char *
kind_of (mode_t mode)
{
  if (S_ISFIFO (mode))
    return "a pipe";
  if (S_ISSOCK (mode))
    return "a socket";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISBLK (mode))
    return "a block device";
  return "not a regular file";
}

/* Reading is a stage of a load that the caller may stop (ps_diag's
 * progress hook): the message says so, once. */
static int
progress (ps_diag *diag, const char *shown, double fraction)
{
  int r = ps_diag_progress (diag, "read", fraction);
  if (r < 0)
    ps_diag_error (diag, 0, 0, "reading %s was cancelled", shown);
  return r;
}

/* Waits until a pipe opened without blocking has data or its writer came
 * and went (Linux reports neither before a writer opens it), asking the
 * caller now and then whether to go on. */
static int
wait_for_writer (int fd, const char *shown, ps_diag *diag)
{
  for (;;) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int n = poll (&p, 1, 200);
    if (n > 0)
      return 0;
    if (n < 0 && errno != EINTR) {
      ps_diag_error (diag, 0, 0, "cannot read %s: %s", shown, strerror (errno));
      return PS_EIO;
    }
    int r = progress (diag, shown, 0);
    if (r < 0)
      return r;
  }
}

static int
open_file (const char *path, size_t max_bytes, struct stat *st, input_kind kind, ps_diag *diag)
{
  bool std_in = kind == INPUT_MAIN && strcmp (path, "-") == 0;
  const char *shown = std_in ? "standard input" : path;
  /* Standard input is the caller's descriptor: its flags are shared with
   * whoever gave it, so they stay as they are. */
  int fd = std_in ? fcntl (STDIN_FILENO, F_DUPFD_CLOEXEC, 3)
                  : open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    ps_diag_error (diag, 0, 0, "cannot open %s: %s", shown, strerror (e));
    return e == ENOMEM ? PS_ENOMEM : PS_EIO;
  }
  int ret = 0;
  bool pipe_like = false;
  if (fstat (fd, st) < 0) {
    ps_diag_error (diag, 0, 0, "cannot read %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  } else if (S_ISDIR (st->st_mode)) {
    ps_diag_error (diag, 0, 0, "cannot read %s: it is a folder", shown);
    ret = PS_EIO;
  } else if (S_ISREG (st->st_mode)) {
    if ((uint64_t) st->st_size > max_bytes) {
      ps_diag_error (diag, 0, 0, "%s is too large (%llu bytes; the limit is %zu)", shown,
                     (unsigned long long) st->st_size, max_bytes);
      ret = PS_ELIMIT;
    }
  } else if (kind == INPUT_MAIN
             && (S_ISFIFO (st->st_mode) || S_ISSOCK (st->st_mode)
                 || (std_in && S_ISCHR (st->st_mode) && isatty (fd)))) {
    pipe_like = !std_in;
  } else {
    /* A device could be endless (/dev/zero) or act on being opened; a
     * pipe named inside a file would wait for a writer that never comes. */
    ps_diag_error (diag, 0, 0, "cannot read %s: it is %s, not a regular file%s", shown,
                   kind_of (st->st_mode), kind == INPUT_MAIN ? " or a pipe" : "");
    ret = PS_EIO;
  }
  if (ret == 0 && pipe_like)
    ret = wait_for_writer (fd, shown, diag);
  /* From here on reads may block: a regular file's never do, and a pipe
   * has its writer. */
  if (ret == 0 && !std_in && fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK) < 0) {
    ps_diag_error (diag, 0, 0, "cannot read %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  }
  if (ret < 0) {
    close (fd);
    return ret;
  }
  if (kind != INPUT_OWN)
    note (fd, std_in ? NULL : path);
  return fd;
}

int
ps_file_open_input (const char *path, size_t max_bytes, struct stat *st, ps_diag *diag)
{
  return open_file (path, max_bytes, st, INPUT_MAIN, diag);
}

/* What ps_file_input_open and the whole-file readers share: the file
 * opened as `kind` says, its size and the limit. */
static int
input_open (ps_file_input *in, const char *path, size_t max_bytes, input_kind kind,
            ps_diag *diag)
{
  memset (in, 0, sizeof *in);
  in->fd = -1;
  struct stat st;
  int fd = open_file (path, max_bytes, &st, kind, diag);
  if (fd < 0)
    return fd;
  in->fd = fd;
  in->max_bytes = max_bytes;
  in->regular = S_ISREG (st.st_mode);
  in->size = in->regular ? (size_t) st.st_size : 0;
  in->shown = kind == INPUT_MAIN && strcmp (path, "-") == 0 ? "standard input" : path;
  in->diag = diag;
  return 0;
}

int
ps_file_input_open (ps_file_input *in, const char *path, size_t max_bytes, ps_diag *diag)
{
  return input_open (in, path, max_bytes, INPUT_MAIN, diag);
}

long
ps_file_input_read (ps_file_input *in, char *buf, size_t cap)
{
  if (in->status < 0)
    return in->status;
  /* One byte more than the limit leaves says that the file is over it. */
  size_t room = in->max_bytes - in->got + 1;
  if (cap > room)
    cap = room;
  if (cap > LONG_MAX)
    cap = LONG_MAX;
  ssize_t got;
  do
    got = read (in->fd, buf, cap);
  while (got < 0 && errno == EINTR);
  if (got < 0) {
    ps_diag_error (in->diag, 0, 0, "cannot read %s: %s", in->shown, strerror (errno));
    return in->status = PS_EIO;
  }
  in->got += (size_t) got;
  if (in->got > in->max_bytes) {
    ps_diag_error (in->diag, 0, 0, "%s is too large (the limit is %zu bytes)", in->shown,
                   in->max_bytes);
    return in->status = PS_ELIMIT;
  }
  return (long) got;
}

void
ps_file_input_close (ps_file_input *in)
{
  if (in->fd >= 0)
    close (in->fd);
  in->fd = -1;
}

/* Regular files are read a piece at a time so that a long read can be
 * stopped; pieces this large cost nothing in speed. */
#define READ_PIECE ((size_t) 8 << 20)
/* Regular files of at least PARALLEL_MIN bytes have their second half
 * read with pread on a second thread while the first half is read
 * (226 MB from the page cache: 0.115 s in one go, 0.066 s so).  Reading
 * then goes on from the end as usual, so a file that grew is read to its
 * end; one that shrank or failed meanwhile is read on in order from the
 * middle instead, as if the second thread had not been. */
#define PARALLEL_MIN ((size_t) 8 << 20)

typedef struct pread_job {
  int fd;
  char *buf;
  size_t from, to, got;
  bool failed;
  ps__job job;
} pread_job;

static void
pread_main (void *arg)
{
  pread_job *j = arg;
  while (j->from + j->got < j->to) {
    size_t want = j->to - j->from - j->got;
    ssize_t r = pread (j->fd, j->buf + j->from + j->got, want > READ_PIECE ? READ_PIECE : want,
                       (off_t) (j->from + j->got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      j->failed = true;
      break;
    }
    j->got += (size_t) r;
  }
}

int
ps_file_input_read_rest (ps_file_input *in, char **data, size_t *len)
{
  /* Regular files are read in one buffer of their size, with room for
   * the terminating NUL and for the one byte whose absence says that the
   * file ends there; pipes and other streams grow the buffer by doubling.
   * Either way the size limit is enforced on what is actually read, since
   * a file can grow meanwhile. */
  size_t n = *len, cap = in->regular ? in->size + 2 : 65536;
  if (cap > in->max_bytes + 2)
    cap = in->max_bytes + 2;
  if (cap < n + 2)
    cap = n + 2;
  char *buf = realloc (*data, cap);
  int ret = 0;
  if (!buf) {
    ps_diag_error (in->diag, 0, 0, "cannot read %s: out of memory", in->shown);
    ret = PS_ENOMEM;
  } else {
    *data = buf;
  }
  pread_job pj = { 0 };
  if (ret == 0 && in->regular && in->size >= PARALLEL_MIN && in->size + 2 <= cap &&
      n < in->size / 2) {
    pj = (pread_job){ in->fd, buf, n + (in->size - n) / 2, in->size, 0, false, { 0 } };
    ps__job_start (&pj.job, pread_main, &pj, true);
  }
  while (ret == 0) {
    if (ps__job_pending (&pj.job) && n == pj.from) {
      /* The first half read: the second, if it is all there, and on
       * from the end (or from here). */
      ps__job_finish (&pj.job);
      bool whole = !pj.failed && pj.got == pj.to - pj.from;
      off_t at = (off_t) (whole ? pj.to : n);
      if (lseek (in->fd, at, SEEK_SET) != at) {
        ps_diag_error (in->diag, 0, 0, "cannot read %s: %s", in->shown, strerror (errno));
        ret = in->status = PS_EIO;
        break;
      }
      if (whole) {
        in->got += pj.got;
        n = pj.to;
      }
    }
    if (n + 1 >= cap) {
      /* At most one byte over the limit, which ps_file_input_read
       * reports. */
      size_t ncap = cap * 2 > in->max_bytes + 2 ? in->max_bytes + 2 : cap * 2;
      char *nb = realloc (buf, ncap);
      if (!nb) {
        ps_diag_error (in->diag, 0, 0, "cannot read %s: out of memory", in->shown);
        ret = PS_ENOMEM;
        break;
      }
      *data = buf = nb;
      cap = ncap;
    }
    size_t room = (ps__job_pending (&pj.job) ? pj.from : cap - 1) - n;
    size_t want = room < READ_PIECE ? room : READ_PIECE;
    long got = ps_file_input_read (in, buf + n, want);
    if (got < 0) {
      ret = (int) got;
      break;
    }
    if (got == 0)
      break;
    n += (size_t) got;
    ret = progress (in->diag, in->shown,
                    in->size > 0 ? (double) n / (double) in->size : 0);
  }
  ps__job_finish (&pj.job); /* a file that ended early, or an error */
  if (ret < 0) {
    free (*data);
    *data = NULL;
    *len = 0;
    return ret;
  }
  buf[n] = '\0';
  *len = n;
  return 0;
}

static int
read_all (const char *path, size_t max_bytes, input_kind kind, char **data, size_t *len,
          ps_diag *diag)
{
  *data = NULL;
  *len = 0;
  ps_file_input in;
  int ret = input_open (&in, path, max_bytes, kind, diag);
  if (ret < 0)
    return ret;
  ret = ps_file_input_read_rest (&in, data, len);
  ps_file_input_close (&in);
  return ret;
}

int
ps_file_read_all (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag)
{
  return read_all (path, max_bytes, INPUT_MAIN, data, len, diag);
}

int
ps_file_read_named (const char *path, size_t max_bytes, char **data, size_t *len,
                    ps_diag *diag)
{
  return read_all (path, max_bytes, INPUT_NAMED, data, len, diag);
}

int
ps_file_read_own (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag)
{
  return read_all (path, max_bytes, INPUT_OWN, data, len, diag);
}
