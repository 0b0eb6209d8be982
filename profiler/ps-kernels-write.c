/* ps-kernels-write.c: `planscope-cli kernels`: the CUDA C and PTX of every
 * kernel step of a plan, written to a folder.  Needs NVRTC, not a GPU. */
#include "ps-kernel-src.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ps-profiler-private.h"

static int
make_dir (const char *dir, ps_gpu_error *err)
{
  if (mkdir (dir, 0777) == 0)
    return 0;
  int e = errno;
  struct stat st;
  if (e == EEXIST && stat (dir, &st) == 0 && S_ISDIR (st.st_mode))
    return 0;
  return ps_gpu_error_set (err, PS_GPU_IO, e, "cannot create folder %s: %s", dir,
                           e == EEXIST ? "a file of that name exists" : strerror (e));
}

/* Each file is written all or nothing (temporary file and rename), and
 * never over an input such as the user's own module. */
static int
write_part (const char *path, const char *data, size_t len, ps_gpu_error *err)
{
  char why[512];
  if (ps_file_write_bytes (path, data, len, why, sizeof why) != 0)
    return ps_gpu_error_set (err, PS_GPU_IO, 0, "%s", why);
  return 0;
}

/* Keeps the first error; later ones only go to the listing. */
static void
keep_first (int *first, ps_gpu_error *err, int rc, const ps_gpu_error *e)
{
  if (*first == 0 && rc != 0) {
    *first = rc;
    if (err)
      *err = *e;
  }
}

int
ps_kernels_write (const ps_plan *p, const char *dir, const char *arch, FILE *listing,
                  ps_gpu_error *err)
{
  const ps_graph *g = p->graph;
  if (!arch)
    arch = "compute_90";
  int rc = make_dir (dir, err);
  if (rc != 0)
    return rc;
  ps_ksrc_ctx ctx;
  if (ps_ksrc_ctx_init (&ctx, g) != 0)
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "no memory for the kernel generator");

  ps_gpu_error nverr;
  ps_gpu_error_clear (&nverr);
  bool have_nvrtc = ps__nvrtc_load (&nverr) == 0;
  int first = 0;
  size_t dl = strlen (dir);
  char *path = malloc (dl + 256);
  if (!path) {
    ps_ksrc_ctx_free (&ctx);
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  }

  for (uint32_t s = 0; s < p->n_steps; s++) {
    ps_ksrc k;
    ps_gpu_error e;
    ps_gpu_error_clear (&e);
    int r = ps_ksrc_build_step (&k, &ctx, p, s, &e);
    if (r != 0) {
      if (listing)
        fprintf (listing, "step %u: %s\n", s, e.message);
      keep_first (&first, err, r, &e);
      continue;
    }
    if (k.kind == PS_KSRC_NONE)
      continue;

    char base[200];
    snprintf (base, sizeof base, "step%03u-%.120s", s, k.function);
    for (char *c = base; *c; c++)
      if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '_' || *c == '-'))
        *c = '_';
    if (listing) {
      fprintf (listing, "step %u: ", s);
      for (uint32_t m = 0; m < k.n_nodes; m++)
        fprintf (listing, "%s%s", m ? " + " : "", ps_node_name (g, k.nodes[m]));
      fprintf (listing, " -> %s", base);
    }

    const char *src = NULL;
    size_t src_len = 0;
    ps__ksrc_buf text = { 0 };
    char *inc = NULL;
    switch ((ps_ksrc_kind) k.kind) {
    case PS_KSRC_GENERATED:
      ps__ksrc_printf (&text, "%s", k.header);
      if (k.note[0])
        ps__ksrc_printf (&text, "// %s\n", k.note);
      ps__ksrc_printf (&text, "%s", k.code);
      src = text.s;
      src_len = text.len;
      break;
    case PS_KSRC_USER_CU:
      src = k.code;
      src_len = k.code_len;
      inc = strdup (k.module_path);
      if (inc) {
        char *sl = strrchr (inc, '/');
        if (sl)
          *sl = '\0';
        else
          strcpy (inc, ".");
      }
      break;
    case PS_KSRC_USER_PTX:
      snprintf (path, dl + 256, "%s/%s.ptx", dir, base);
      r = write_part (path, k.code, k.code_len, &e);
      keep_first (&first, err, r, &e);
      if (listing)
        fprintf (listing, ".ptx (copy of %s)\n", k.module_path);
      break;
    case PS_KSRC_USER_CUBIN:
    default:
      if (listing)
        fprintf (listing, " (cubin %s, loaded as is; nothing written)\n", k.module_path);
      break;
    }

    if (src && text.oom) {
      keep_first (&first, err, ps_gpu_error_set (&e, PS_GPU_NO_MEMORY, 0, "out of memory"), &e);
    } else if (src) {
      snprintf (path, dl + 256, "%s/%s.cu", dir, base);
      r = write_part (path, src, src_len, &e);
      keep_first (&first, err, r, &e);
      if (r == 0 && have_nvrtc) {
        char *ptx = NULL, *log = NULL;
        size_t ptx_len = 0;
        r = ps__nvrtc_compile (k.kind == PS_KSRC_GENERATED ? k.code : src, base, arch, inc, false,
                               k.kind == PS_KSRC_USER_CU ? k.function : NULL, NULL, 0, &ptx,
                               &ptx_len, &log, &e);
        if (r == 0) {
          snprintf (path, dl + 256, "%s/%s.ptx", dir, base);
          r = write_part (path, ptx, ptx_len, &e);
        } else if (log && log[0]) {
          snprintf (path, dl + 256, "%s/%s.log", dir, base);
          ps_gpu_error log_err; /* the compiler's error is the one to report */
          write_part (path, log, strlen (log), &log_err);
        }
        keep_first (&first, err, r, &e);
        if (listing)
          fprintf (listing, ".cu%s%s%s%s\n", r == 0 ? ", .ptx" : " (", r == 0 ? "" : e.message,
                   r == 0 ? "" : ")", k.note[0] ? " [several launches]" : "");
        free (ptx);
        free (log);
      } else if (listing) {
        fprintf (listing, ".cu\n");
      }
    }
    free (inc);
    free (text.s);
    ps_ksrc_free (&k);
  }
  free (path);
  ps_ksrc_ctx_free (&ctx);
  if (!have_nvrtc && first == 0) {
    if (err)
      *err = nverr;
    return ps_gpu_status_code (nverr.status);
  }
  return first;
}
