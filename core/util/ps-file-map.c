/* ps-file-map.c: a large regular input mapped rather than copied, and
 * what happens when it is cut short while it is read.
 *
 * Read into a buffer of its own, a file costs that buffer's pages (the
 * kernel zeroes each on first touch, then copies the file into it): a
 * 226 MB graph from the page cache took 0.08 s of two threads and 0.13 s
 * of CPU before its first byte was parsed.  Mapped, the loader reads the
 * page cache's own pages (the kernel maps them 16 at a time as they are
 * touched), which costs next to nothing: 1M-node layered graph, read and
 * parse 0.48 -> 0.44 s, the whole `plan` run 0.1 s less CPU.
 *
 * A mapping is only safe to read while the file keeps its length: when
 * another process truncates it, touching a page past the new end raises
 * SIGBUS, which would kill the process.  So each mapping makes sure that
 * SIGBUS has this file's handler, which looks the fault's address up in
 * the mappings in use (a list that only grows and is never freed, so that
 * the handler can walk it at any moment without a lock): inside one, it
 * maps zero pages over the rest of that mapping and marks it cut, and the
 * read goes on over zeros (no graph format has them: the loaders stop at
 * the first with an error).  The caller then throws away what it made of
 * them and reports that the file was cut short (ps_file_whole_end).
 * Any other SIGBUS goes where it went before (the previous handler, or
 * the default action: the fault comes again with the handler reset).
 * mmap is not on POSIX's list of async-signal-safe functions, but on
 * Linux it is the system call alone, which is; elsewhere nothing is
 * mapped and inputs are read as before. */
#define _GNU_SOURCE

#include "ps-file.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ps-file-private.h"

/* Mapped only from this size on: below it the copy costs little, and a
 * loader reads small files a piece at a time anyway.  Tests lower it. */
size_t ps__file_map_min = (size_t) 8 << 20;

#if defined(__linux__) && defined(MAP_ANONYMOUS) && defined(MAP_FIXED) && defined(SA_SIGINFO)
#define HAVE_MAP 1
#endif

struct ps_file_mapping {
  /* The mapping's pages; start 0 when the slot is free, 1 while it is
   * taken without pages the handler may look at. */
  atomic_uintptr_t start, end;
  atomic_bool cut; /* the file was cut short under it */
  struct ps_file_mapping *next;
};

#ifdef HAVE_MAP
static _Atomic (ps_file_mapping *) mappings;
static struct sigaction previous;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t page_size; /* set before the handler is installed */

static void
on_sigbus (int sig, siginfo_t *info, void *uc)
{
  uintptr_t a = (uintptr_t) info->si_addr;
  if (info->si_code == BUS_ADRERR) {
    for (ps_file_mapping *m = atomic_load (&mappings); m; m = m->next) {
      uintptr_t b = atomic_load (&m->start), e = atomic_load (&m->end);
      if (b <= 1 || a < b || a >= e)
        continue;
      int saved = errno;
      uintptr_t page = a & ~(page_size - 1);
      void *z = mmap ((void *) page, e - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                      -1, 0);
      errno = saved;
      if (z == MAP_FAILED)
        break;
      atomic_store (&m->cut, true);
      return; /* the read is made again, of a zero byte */
    }
  }
  /* Not a mapped input's: what it would have done without this handler. */
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
    previous.sa_sigaction (sig, info, uc);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler (sig);
  } else {
    struct sigaction dfl;
    memset (&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset (&dfl.sa_mask);
    sigaction (SIGBUS, &dfl, NULL); /* the fault comes again and ends the process */
  }
}

/* Whether the handler is SIGBUS's: installed (again, should a program
 * have put its own in its place since: that one is passed on to) before
 * each mapping. */
static bool
install_handler (void)
{
  pthread_mutex_lock (&handler_lock);
  if (!page_size)
    page_size = (uintptr_t) sysconf (_SC_PAGESIZE);
  struct sigaction cur;
  bool ok = sigaction (SIGBUS, NULL, &cur) == 0;
  if (ok && !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus)) {
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset (&sa.sa_mask);
    previous = cur;
    ok = sigaction (SIGBUS, &sa, NULL) == 0;
  }
  pthread_mutex_unlock (&handler_lock);
  return ok;
}

static ps_file_mapping *
slot_take (void)
{
  for (ps_file_mapping *m = atomic_load (&mappings); m; m = m->next) {
    uintptr_t expect = 0;
    /* Taken by a start of 1 until the pages are there. */
    if (atomic_compare_exchange_strong (&m->start, &expect, 1))
      return m;
  }
  ps_file_mapping *m = calloc (1, sizeof *m);
  if (!m)
    return NULL;
  atomic_init (&m->start, 1);
  atomic_init (&m->end, 0);
  atomic_init (&m->cut, false);
  m->next = atomic_load (&mappings);
  while (!atomic_compare_exchange_weak (&mappings, &m->next, m))
    ;
  return m;
}
#endif

int
ps_file_input_map (ps_file_input *in, const char **data, size_t *len, ps_file_mapping **out)
{
  *data = NULL;
  *len = 0;
  *out = NULL;
#ifdef HAVE_MAP
  /* Only an input read from its first byte (standard input may have been
   * read into before it came). */
  if (!in->regular || in->size < ps__file_map_min || in->size < 1
      || lseek (in->fd, 0, SEEK_CUR) != (off_t) in->got)
    return 0;
  if (!install_handler ())
    return 0;
  ps_file_mapping *m = slot_take ();
  if (!m)
    return 0;
  /* The file's pages, then at least one page of zeros: the bytes after
   * its end read as NUL, as a buffer read whole is terminated. */
  size_t span = (in->size / page_size + 2) * page_size;
  char *base = mmap (NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    atomic_store (&m->start, 0);
    return 0;
  }
  if (mmap (base, in->size, PROT_READ, MAP_PRIVATE | MAP_FIXED, in->fd, 0) == MAP_FAILED) {
    munmap (base, span);
    atomic_store (&m->start, 0);
    return 0;
  }
  /* Read from start to end, once: the kernel may read ahead. */
  madvise (base, in->size, MADV_WILLNEED);
  atomic_store (&m->cut, false);
  atomic_store (&m->end, (uintptr_t) base + span);
  atomic_store (&m->start, (uintptr_t) base);
  in->got = in->size;
  *data = base;
  *len = in->size;
  *out = m;
  return 1;
#else
  (void) in;
  return 0;
#endif
}

bool
ps_file_mapping_cut (const ps_file_mapping *m)
{
  return m && atomic_load (&m->cut);
}

void
ps_file_mapping_free (ps_file_mapping *m)
{
#ifdef HAVE_MAP
  if (!m)
    return;
  uintptr_t b = atomic_load (&m->start), e = atomic_load (&m->end);
  /* Out of the handler's sight before the pages go. */
  atomic_store (&m->start, 1);
  atomic_store (&m->end, 0);
  munmap ((void *) b, e - b);
  atomic_store (&m->start, 0); /* the slot is free for the next mapping */
#else
  (void) m;
#endif
}

int
ps_file_input_whole (ps_file_input *in, char *head, size_t len, ps_file_whole *w)
{
  memset (w, 0, sizeof *w);
  if (in->status == 0 && ps_file_input_map (in, &w->data, &w->len, &w->map) > 0) {
    free (head); /* read again where it lies */
  } else {
    int rc = ps_file_input_read_rest (in, &head, &len);
    if (rc < 0)
      return rc;
    w->data = w->buf = head;
    w->len = len;
  }
  w->diag = in->diag;
  w->read = ps_diag_mark_now (in->diag);
  return 0;
}

int
ps_file_read_whole (const char *path, size_t max_bytes, ps_file_whole *w, ps_diag *diag)
{
  memset (w, 0, sizeof *w);
  ps_file_input in;
  int rc = ps_file_input_open (&in, path, max_bytes, diag);
  if (rc < 0)
    return rc;
  rc = ps_file_input_whole (&in, NULL, 0, w);
  ps_file_input_close (&in);
  return rc;
}

int
ps_file_whole_end (ps_file_whole *w, int rc)
{
  if (ps_file_mapping_cut (w->map)) {
    ps_diag_rewind (w->diag, w->read);
    ps_diag_error (w->diag, 0, 0, "the file was cut short while it was read (it had %zu bytes)",
                   w->len);
    rc = PS_EIO;
  }
  ps_file_whole_free (w);
  return rc;
}

void
ps_file_whole_free (ps_file_whole *w)
{
  ps_file_mapping_free (w->map);
  free (w->buf);
  memset (w, 0, sizeof *w);
}
