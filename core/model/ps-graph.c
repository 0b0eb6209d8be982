/* ps-graph.c: the graph's lifetime, the names of its enums as written in
 * files, and loading a graph from a file. */
#include "ps-graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps-file.h"
#include "import/json/ps-json-load.h"

void
ps_graph_init (ps_graph *g)
{
  memset (g, 0, sizeof *g);
}

void
ps_graph_free (ps_graph *g)
{
  free (g->name);
  free (g->device);
  free (g->path);
  free (g->nodes);
  free (g->buffers);
  free (g->kernels);
  free (g->conds);
  free (g->event_names);
  free (g->access);
  free (g->kargs);
  free (g->cond_members);
  free (g->succ_off);
  free (g->succ);
  free (g->succ_kind);
  free (g->pred_off);
  free (g->pred);
  free (g->pred_kind);
  free (g->strings);
  ps_graph_init (g);
}

/* A JSON graph file is streamed through the reader rather than read whole:
 * a 200 MB graph then needs no 200 MB buffer, and parsing overlaps the
 * reads.  The format is chosen by content: a file whose first byte (after
 * white space and a byte order mark) is not `{` is read whole and handed to
 * ps_graph_load_json, which recognises DOT dumps (and reports anything else
 * as a JSON error). */
#define HEAD_BYTES 65536

typedef struct file_src {
  int fd;
  const char *path;
  uint64_t total;
  const char *head; /* bytes read ahead to choose the format, served first */
  size_t head_len, head_pos;
  char failure[320];
} file_src;

static long
file_read (void *ctx, char *buf, size_t cap)
{
  file_src *f = ctx;
  if (f->head_pos < f->head_len) {
    size_t n = f->head_len - f->head_pos < cap ? f->head_len - f->head_pos : cap;
    memcpy (buf, f->head + f->head_pos, n);
    f->head_pos += n;
    return (long) n;
  }
  for (;;) {
    ssize_t n = read (f->fd, buf, cap);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      snprintf (f->failure, sizeof f->failure, "cannot read %s: %s", f->path, strerror (errno));
      return -1;
    }
    f->total += (uint64_t) n;
    if (f->total > PS_MAX_FILE_BYTES) {
      snprintf (f->failure, sizeof f->failure, "%s is too large (the limit is %llu bytes)",
                f->path, (unsigned long long) PS_MAX_FILE_BYTES);
      return -1;
    }
    return (long) n;
  }
}

static const char *
file_failure (void *ctx)
{
  file_src *f = ctx;
  return f->failure[0] ? f->failure : NULL;
}

/* Reads the rest of the file after the `n` bytes in `head`, into one
 * NUL-terminated buffer. */
static int
read_whole (file_src *f, const char *head, size_t n, char **data, size_t *len)
{
  size_t cap = n + HEAD_BYTES + 1, used = n;
  char *buf = malloc (cap);
  if (!buf)
    return PS_ENOMEM;
  memcpy (buf, head, n);
  for (;;) {
    if (used + 1 == cap) {
      char *nb = cap > SIZE_MAX / 2 ? NULL : realloc (buf, cap * 2);
      if (!nb) {
        free (buf);
        return PS_ENOMEM;
      }
      buf = nb;
      cap *= 2;
    }
    long got = file_read (f, buf + used, cap - 1 - used);
    if (got < 0) {
      free (buf);
      return f->total > PS_MAX_FILE_BYTES ? PS_ELIMIT : PS_EIO;
    }
    if (got == 0)
      break;
    used += (size_t) got;
  }
  buf[used] = '\0';
  *data = buf;
  *len = used;
  return 0;
}

int
ps_graph_load_file (ps_graph *g, const char *path, ps_diag *diag)
{
  ps_graph_init (g);
  size_t errors0 = diag->errors;
  struct stat st;
  file_src f = { .fd = ps_file_open_input (path, PS_MAX_FILE_BYTES, &st, diag), .path = path };
  if (f.fd < 0)
    return f.fd;
  int ret = 0;
  char *head = malloc (HEAD_BYTES);
  if (!head)
    ret = PS_ENOMEM;

  /* Read ahead (up to HEAD_BYTES) to see what the file holds. */
  size_t n = 0;
  while (ret == 0 && n < HEAD_BYTES) {
    long got = file_read (&f, head + n, HEAD_BYTES - n);
    if (got < 0)
      ret = PS_EIO;
    else if (got == 0)
      break;
    else
      n += (size_t) got;
  }
  if (ret == PS_EIO && f.failure[0])
    ps_diag_error (diag, 0, 0, "%s", f.failure);

  size_t i = n >= 3 && memcmp (head, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
    i++;
  if (ret == 0 && i < n && head[i] == '{') {
    f.head = head;
    f.head_len = n;
    ret = ps__graph_load_stream (g, file_read, &f, file_failure, path, diag);
  } else if (ret == 0) {
    char *data;
    size_t len;
    ret = read_whole (&f, head, n, &data, &len);
    if (ret == 0) {
      ret = ps_graph_load_json (g, data, len, path, diag);
      free (data);
    } else if (f.failure[0]) {
      ps_diag_error (diag, 0, 0, "%s", f.failure);
    }
  }
  if (ret == PS_ENOMEM && diag->errors == errors0)
    ps_diag_error (diag, 0, 0, "cannot read %s: out of memory", path);
  free (head);
  close (f.fd);
  return ret;
}

static const char *const op_names[PS_OP__COUNT] = {
  "kernel", "memcpy", "memset", "host", "event_record", "event_wait",
  "barrier", "conditional", "empty", "opaque",
};
static const char *const impl_names[PS_IMPL__COUNT] = {
  "none", "copy", "scale", "add_scalar", "relu", "gelu", "sigmoid", "tanh",
  "exp", "neg", "add", "mul", "sub", "fill", "spin",
};
static const char *const dtype_names[PS_DT__COUNT] = { "f32", "f16", "bf16", "i32", "u8" };
static const char *const dir_names[PS_COPY__COUNT] = { "h2d", "d2h", "d2d", "p2p" };

const char *
ps_op_name (ps_op op)
{
  return (unsigned) op < PS_OP__COUNT ? op_names[op] : "?";
}

const char *
ps_impl_name (ps_impl impl)
{
  return (unsigned) impl < PS_IMPL__COUNT ? impl_names[impl] : "?";
}

const char *
ps_dtype_name (ps_dtype dt)
{
  return (unsigned) dt < PS_DT__COUNT ? dtype_names[dt] : "?";
}

const char *
ps_copy_dir_name (ps_copy_dir dir)
{
  return (unsigned) dir < PS_COPY__COUNT ? dir_names[dir] : "?";
}

uint32_t
ps_dtype_size (ps_dtype dt)
{
  switch (dt) {
  case PS_DT_F32:
  case PS_DT_I32:
    return 4;
  case PS_DT_F16:
  case PS_DT_BF16:
    return 2;
  case PS_DT_U8:
    return 1;
  default:
    return 0;
  }
}

int
ps_impl_reads (ps_impl impl)
{
  switch (impl) {
  case PS_IMPL_COPY:
  case PS_IMPL_SCALE:
  case PS_IMPL_ADD_SCALAR:
  case PS_IMPL_RELU:
  case PS_IMPL_GELU:
  case PS_IMPL_SIGMOID:
  case PS_IMPL_TANH:
  case PS_IMPL_EXP:
  case PS_IMPL_NEG:
    return 1;
  case PS_IMPL_ADD:
  case PS_IMPL_MUL:
  case PS_IMPL_SUB:
    return 2;
  default:
    return 0;
  }
}

bool
ps_impl_elementwise (ps_impl impl)
{
  return impl > PS_IMPL_NONE && impl <= PS_IMPL_FILL;
}

static uint64_t
sat_mul (uint64_t a, uint64_t b)
{
  if (a != 0 && b > UINT64_MAX / a)
    return UINT64_MAX;
  return a * b;
}

uint64_t
ps_kernel_threads (const ps_kernel *k)
{
  uint64_t t = 1;
  for (int i = 0; i < 3; i++) {
    t = sat_mul (t, k->grid[i]);
    t = sat_mul (t, k->block[i]);
  }
  return t;
}

int
ps__grow (void **p, uint32_t *cap, uint64_t need, size_t elem, uint64_t limit)
{
  if (need <= *cap)
    return 0;
  if (need > limit || need > UINT32_MAX)
    return PS_ELIMIT;
  uint64_t c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  if (c > limit)
    c = limit;
  if (c > UINT32_MAX)
    c = UINT32_MAX;
  if (c > SIZE_MAX / elem)
    return PS_ENOMEM;
  void *np = realloc (*p, (size_t) c * elem);
  if (!np)
    return PS_ENOMEM;
  *p = np;
  *cap = (uint32_t) c;
  return 0;
}

int
ps__u32vec_push (ps__u32vec *v, uint32_t x)
{
  if (v->n == v->cap) {
    int ret = ps__grow ((void **) &v->v, &v->cap, (uint64_t) v->n + 1, sizeof *v->v,
                        UINT32_MAX - 1);
    if (ret < 0)
      return ret;
  }
  v->v[v->n++] = x;
  return 0;
}

int
ps__graph_intern (ps_graph *g, const char *s, size_t len, uint32_t *off)
{
  /* Offsets stay below UINT32_MAX, which is PS_NONE. */
  uint64_t need = (uint64_t) g->strings_len + len + 1;
  if (need >= UINT32_MAX)
    return PS_ELIMIT;
  if (need > g->strings_cap) {
    int ret = ps__grow ((void **) &g->strings, &g->strings_cap, need, 1, UINT32_MAX - 1);
    if (ret < 0)
      return ret;
  }
  memcpy (g->strings + g->strings_len, s, len);
  g->strings[g->strings_len + len] = '\0';
  *off = g->strings_len;
  g->strings_len += (uint32_t) len + 1;
  return 0;
}
