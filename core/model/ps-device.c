/* ps-device.c: loading and finding device profiles (see ps-device.h). */
#include "ps-device.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps-file.h"
#include "ps-json.h"

/* The same figures as data/devices/NAME.json (tests/test-sim.c compares them);
 * the last ones are mem_efficiency and the gemm_efficiency points. */
static const ps_device builtin[] = {
  { "h200", "NVIDIA H200 SXM 141GB", 132, 2048, 32, 67, 989, 34, 4800, 64, 64, 450, 3,
    3000, 2000, 1000, 500, 1000, 10000, 2000, 0.895, 1, { 1099511627776.0 }, { 0.797 } },
  { "a100", "NVIDIA A100 SXM4 80GB", 108, 2048, 32, 19.5, 312, 9.7, 2039, 32, 32, 300, 3,
    3000, 2000, 1000, 500, 1000, 10000, 2000, 0.88, 1, { 463856467968.0 }, { 0.859 } },
  { "rtx4090", "NVIDIA GeForce RTX 4090", 128, 1536, 24, 82.6, 165.2, 1.3, 1008, 32, 32, 16, 2,
    3000, 2000, 1000, 500, 1000, 10000, 2000, 0.88, 1, { 463856467968.0 }, { 0.859 } },
};

size_t
ps_device_builtin_count (void)
{
  return sizeof builtin / sizeof builtin[0];
}

const ps_device *
ps_device_builtin (size_t i)
{
  return i < ps_device_builtin_count () ? &builtin[i] : NULL;
}

typedef enum { F_U32, F_DOUBLE } field_type;

/* A figure of a profile: its key, type, place and range.  Optional
 * figures (the achievable rates, which older profiles lack) take `def`
 * when the profile does not give them. */
typedef struct {
  const char *key;
  field_type type;
  size_t offset;
  double min, max;
  bool optional;
  double def;
} field;

#define FD(k, t, lo, hi) { #k, t, offsetof (ps_device, k), lo, hi }
static const field fields[] = {
  FD (sm_count, F_U32, 1, 100000),
  FD (max_threads_per_sm, F_U32, 32, 1 << 20),
  FD (max_blocks_per_sm, F_U32, 1, 1 << 20),
  FD (fp32_tflops, F_DOUBLE, 1e-6, 1e9),
  FD (tensor_tflops, F_DOUBLE, 1e-6, 1e9),
  FD (fp64_tflops, F_DOUBLE, 1e-6, 1e9),
  FD (mem_bandwidth_gbs, F_DOUBLE, 1e-6, 1e9),
  FD (h2d_gbs, F_DOUBLE, 1e-6, 1e9),
  FD (d2h_gbs, F_DOUBLE, 1e-6, 1e9),
  FD (p2p_gbs, F_DOUBLE, 1e-6, 1e9),
  FD (copy_engines, F_U32, 1, 64),
  FD (launch_latency_ns, F_DOUBLE, 0, 1e9),
  FD (host_launch_ns, F_DOUBLE, 0, 1e9),
  FD (dispatch_gap_ns, F_DOUBLE, 0, 1e9),
  FD (event_record_ns, F_DOUBLE, 0, 1e9),
  FD (event_wait_ns, F_DOUBLE, 0, 1e9),
  FD (host_callback_ns, F_DOUBLE, 0, 1e9),
  FD (copy_latency_ns, F_DOUBLE, 0, 1e9),
  { "mem_efficiency", F_DOUBLE, offsetof (ps_device, mem_efficiency), 0.01, 1, true, 1 },
};
#undef FD
#define N_FIELDS (sizeof fields / sizeof fields[0])

/* The keys a profile may have besides its figures. */
static const char *const extra[] = { "format", "version", "name", "display_name", "sources",
                                     "gemm_efficiency" };
#define N_EXTRA (sizeof extra / sizeof extra[0])

/* The index of a key among the figures and then the extras, or -1. */
static int
key_index (const char *key)
{
  for (size_t i = 0; i < N_FIELDS; i++)
    if (strcmp (key, fields[i].key) == 0)
      return (int) i;
  for (size_t i = 0; i < N_EXTRA; i++)
    if (strcmp (key, extra[i]) == 0)
      return (int) (N_FIELDS + i);
  return -1;
}

/* The closest key a profile may have to `key`, for "did you mean". */
static const char *
suggest (const char *key)
{
  const char *keys[N_FIELDS + N_EXTRA];
  for (size_t i = 0; i < N_FIELDS; i++)
    keys[i] = fields[i].key;
  for (size_t i = 0; i < N_EXTRA; i++)
    keys[N_FIELDS + i] = extra[i];
  return ps_suggest (key, strlen (key), keys, N_FIELDS + N_EXTRA);
}

static int
json_fail (ps_json_reader *r, ps_diag *diag)
{
  ps_diag_error (diag, r->error_line, r->error_col, "%s", r->error);
  return ps_json_error_status (r);
}

static int
copy_name (char *dst, const ps_json_reader *r, const char *key, ps_diag *diag)
{
  if (r->token != PS_JSON_STRING)
    return ps_diag_error (diag, r->line, r->col, "%s: expected a string, got %s", key,
                          ps_json_token_name (r->token));
  if (r->len == 0 || r->len >= PS_DEVICE_NAME_MAX || memchr (r->str, 0, r->len))
    return ps_diag_error (diag, r->line, r->col, "%s: must be 1 to %d characters", key,
                          PS_DEVICE_NAME_MAX - 1);
  memcpy (dst, r->str, r->len + 1);
  return 0;
}

/* The limits of a gemm_efficiency point: flops of one kernel, and the
 * share of the tensor-core peak it reaches. */
#define GEMM_FLOPS_MIN 1.0
#define GEMM_FLOPS_MAX 1e21
#define GEMM_SHARE_MIN 0.001
#define GEMM_SHARE_MAX 1.0

/* "gemm_efficiency": [[FLOPS, SHARE], ...], 1 to PS_DEVICE_GEMM_POINTS
 * points in increasing flops (the current token is the value's first). */
static int
parse_gemm (ps_device *d, ps_json_reader *r, ps_diag *diag)
{
  static const char key[] = "gemm_efficiency";
  if (r->token != PS_JSON_ARRAY_BEGIN)
    return ps_diag_error (diag, r->line, r->col,
                          "%s: expected an array of [flops, share] points, got %s", key,
                          ps_json_token_name (r->token));
  uint32_t line = r->line, col = r->col, n = 0;
  for (;;) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_fail (r, diag);
    if (t == PS_JSON_ARRAY_END)
      break;
    if (n == PS_DEVICE_GEMM_POINTS)
      return ps_diag_error (diag, r->line, r->col, "%s: more than %d points", key,
                            PS_DEVICE_GEMM_POINTS);
    if (t != PS_JSON_ARRAY_BEGIN)
      return ps_diag_error (diag, r->line, r->col, "%s[%u]: expected [flops, share], got %s",
                            key, n, ps_json_token_name (t));
    uint32_t pline = r->line, pcol = r->col;
    double v[2];
    for (int k = 0; k < 2; k++) {
      t = ps_json_next (r);
      if (t == PS_JSON_ERROR)
        return json_fail (r, diag);
      if (t != PS_JSON_NUMBER)
        return ps_diag_error (diag, r->line, r->col, "%s[%u]: expected [flops, share], got %s",
                              key, n, ps_json_token_name (t));
      double lo = k ? GEMM_SHARE_MIN : GEMM_FLOPS_MIN, hi = k ? GEMM_SHARE_MAX : GEMM_FLOPS_MAX;
      if (!(r->num >= lo && r->num <= hi))
        return ps_diag_error (diag, r->line, r->col, "%s[%u][%d]: %g is outside [%g, %g]", key,
                              n, k, r->num, lo, hi);
      v[k] = r->num;
    }
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_fail (r, diag);
    if (t != PS_JSON_ARRAY_END)
      return ps_diag_error (diag, pline, pcol, "%s[%u]: expected [flops, share], two numbers",
                            key, n);
    if (n > 0 && !(v[0] > d->gemm_flops[n - 1]))
      return ps_diag_error (diag, pline, pcol,
                            "%s[%u]: flops %g must be more than the previous point's %g", key, n,
                            v[0], d->gemm_flops[n - 1]);
    d->gemm_flops[n] = v[0];
    d->gemm_efficiency[n] = v[1];
    n++;
  }
  if (n == 0)
    return ps_diag_error (diag, line, col, "%s: needs at least one [flops, share] point", key);
  d->gemm_points = n;
  return 0;
}

static int
parse (ps_device *d, ps_json_reader *r, ps_diag *diag)
{
  bool seen[N_FIELDS] = { false }, seen_key[N_FIELDS + N_EXTRA] = { false };
  bool have_format = false, have_version = false, have_name = false;
  ps_json_token t = ps_json_next (r);
  if (t == PS_JSON_ERROR)
    return json_fail (r, diag);
  if (t != PS_JSON_OBJECT_BEGIN)
    return ps_diag_error (diag, r->line, r->col, "a device profile must be a JSON object");
  uint32_t obj_line = r->line, obj_col = r->col;

  for (;;) {
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_fail (r, diag);
    if (t == PS_JSON_OBJECT_END)
      break;
    /* The key whole and printable: one with a NUL ("sm_count\u0000x") or
     * cut short is no key of a profile, and each key comes once, as in
     * graph files. */
    char key[64];
    ps_quote_text (key, sizeof key, r->str, r->len);
    uint32_t kl = r->line, kc = r->col;
    int ki = key_index (key);
    if (ki >= 0 && seen_key[ki])
      return ps_diag_error (diag, kl, kc, "duplicate key \"%s\"", key);
    if (ki >= 0)
      seen_key[ki] = true;
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_fail (r, diag);

    if (strcmp (key, "format") == 0) {
      if (t != PS_JSON_STRING || strcmp (r->str, "planscope-device") != 0)
        return ps_diag_error (diag, r->line, r->col, "format: expected \"planscope-device\"");
      have_format = true;
    } else if (strcmp (key, "version") == 0) {
      if (t != PS_JSON_NUMBER || !r->is_int)
        return ps_diag_error (diag, r->line, r->col, "version: expected an integer");
      if (r->i64 != 1)
        return ps_diag_error (diag, r->line, r->col, "unsupported version %lld",
                              (long long) r->i64);
      have_version = true;
    } else if (strcmp (key, "name") == 0) {
      if (copy_name (d->name, r, key, diag) < 0)
        return PS_EINVAL;
      have_name = true;
    } else if (strcmp (key, "display_name") == 0) {
      if (copy_name (d->display_name, r, key, diag) < 0)
        return PS_EINVAL;
    } else if (strcmp (key, "gemm_efficiency") == 0) {
      if (parse_gemm (d, r, diag) < 0)
        return PS_EINVAL;
    } else if (strcmp (key, "sources") == 0) {
      if (t != PS_JSON_OBJECT_BEGIN && t != PS_JSON_ARRAY_BEGIN && t != PS_JSON_STRING)
        return ps_diag_error (diag, r->line, r->col,
                              "sources: expected an object, an array or a string");
      if (ps_json_skip_current (r) < 0)
        return json_fail (r, diag);
    } else {
      size_t i;
      for (i = 0; i < N_FIELDS; i++)
        if (strcmp (key, fields[i].key) == 0)
          break;
      if (i == N_FIELDS) {
        const char *s = suggest (key);
        if (s)
          return ps_diag_error (diag, kl, kc, "unknown key \"%s\"; did you mean \"%s\"?", key, s);
        return ps_diag_error (diag, kl, kc, "unknown key \"%s\"", key);
      }
      const field *f = &fields[i];
      if (t != PS_JSON_NUMBER)
        return ps_diag_error (diag, r->line, r->col, "%s: expected a number, got %s", key,
                              ps_json_token_name (t));
      if (f->type == F_U32 && !r->is_int)
        return ps_diag_error (diag, r->line, r->col, "%s: expected an integer", key);
      if (!(r->num >= f->min && r->num <= f->max))
        return ps_diag_error (diag, r->line, r->col, "%s: %g is outside [%g, %g]", key, r->num,
                              f->min, f->max);
      if (f->type == F_U32)
        *(uint32_t *) ((char *) d + f->offset) = (uint32_t) r->i64;
      else
        *(double *) ((char *) d + f->offset) = r->num;
      seen[i] = true;
    }
  }
  t = ps_json_next (r);
  if (t == PS_JSON_ERROR)
    return json_fail (r, diag);

  if (!have_format)
    return ps_diag_error (diag, obj_line, obj_col, "missing key \"format\"");
  if (!have_version)
    return ps_diag_error (diag, obj_line, obj_col, "missing key \"version\"");
  if (!have_name)
    return ps_diag_error (diag, obj_line, obj_col, "missing key \"name\"");
  for (size_t i = 0; i < N_FIELDS; i++) {
    if (seen[i])
      continue;
    if (!fields[i].optional)
      return ps_diag_error (diag, obj_line, obj_col, "missing key \"%s\"", fields[i].key);
    *(double *) ((char *) d + fields[i].offset) = fields[i].def;
  }
  if (!d->display_name[0])
    memcpy (d->display_name, d->name, sizeof d->name);
  return 0;
}

int
ps_device_load_json (ps_device *d, const char *data, size_t len, const char *path, ps_diag *diag)
{
  (void) path;
  ps_json_reader r;
  ps_device tmp;
  memset (&tmp, 0, sizeof tmp);
  int rc = ps_json_init_mem (&r, data, len);
  if (rc < 0) {
    ps_diag_error (diag, 0, 0, "cannot read the profile: %s", ps_strerror (rc));
    return rc;
  }
  rc = parse (&tmp, &r, diag);
  ps_json_close (&r);
  if (rc == 0)
    *d = tmp;
  return rc;
}

int
ps_device_load_file (ps_device *d, const char *path, ps_diag *diag)
{
  char *data = NULL;
  size_t len = 0;
  int rc = ps_file_read_named (path, 1 << 20, &data, &len, diag);
  if (rc < 0)
    return rc;
  rc = ps_device_load_json (d, data, len, path, diag);
  free (data);
  return rc;
}

static bool
file_exists (const char *path)
{
  return access (path, R_OK) == 0;
}

/* Tries DIR/NAME.json; returns 1 when found (loaded or failed: *rc says),
 * 0 when there is no such file. */
static int
try_dir (ps_device *d, const char *dir, size_t dir_len, const char *lname, ps_diag *diag, int *rc)
{
  char path[PATH_MAX];
  int n = snprintf (path, sizeof path, "%.*s/%s.json", (int) dir_len, dir, lname);
  if (n < 0 || (size_t) n >= sizeof path || !file_exists (path))
    return 0;
  /* Messages about that file are located in it, so it becomes the FILE of
   * the caller's list. */
  char *f = strdup (path);
  if (f) {
    free (diag->file);
    diag->file = f;
  }
  *rc = ps_device_load_file (d, path, diag);
  return 1;
}

int
ps_device_find (ps_device *d, const char *name, ps_diag *diag)
{
  if (!name || !*name)
    name = PS_DEVICE_DEFAULT;
  size_t nl = strlen (name);
  if (strchr (name, '/') || (nl > 5 && strcmp (name + nl - 5, ".json") == 0))
    return ps_device_load_file (d, name, diag);

  char lname[PS_DEVICE_NAME_MAX];
  if (nl >= sizeof lname)
    return ps_diag_error (diag, 0, 0, "unknown device \"%s\"", name);
  for (size_t i = 0; i <= nl; i++)
    lname[i] = (char) tolower ((unsigned char) name[i]);
  for (size_t i = 0; i < nl; i++)
    if (!isalnum ((unsigned char) lname[i]) && lname[i] != '-' && lname[i] != '_')
      return ps_diag_error (diag, 0, 0, "unknown device \"%s\"", name);

  int rc = 0;
  const char *env = getenv ("PS_DEVICE_PATH");
  if (env) {
    const char *p = env;
    while (*p) {
      const char *q = strchr (p, ':');
      size_t l = q ? (size_t) (q - p) : strlen (p);
      if (l && try_dir (d, p, l, lname, diag, &rc))
        return rc;
      p += l + (q ? 1 : 0);
    }
  }
  char dir[PATH_MAX];
  const char *root = getenv ("PS_SOURCE_ROOT");
  if (root && snprintf (dir, sizeof dir, "%s/data/devices", root) < (int) sizeof dir
      && try_dir (d, dir, strlen (dir), lname, diag, &rc))
    return rc;

  char exe[PATH_MAX];
  ssize_t el = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (el > 0) {
    exe[el] = 0;
    char *slash = strrchr (exe, '/');
    if (slash) {
      *slash = 0;
      static const char *rel[] = { "../data/devices", "../../data/devices",
                                   "../share/planscope/devices" };
      for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        if (snprintf (dir, sizeof dir, "%s/%s", exe, rel[i]) < (int) sizeof dir
            && try_dir (d, dir, strlen (dir), lname, diag, &rc))
          return rc;
    }
  }
  for (size_t i = 0; i < ps_device_builtin_count (); i++)
    if (strcmp (builtin[i].name, lname) == 0) {
      *d = builtin[i];
      return 0;
    }
  char known[256] = "";
  for (size_t i = 0; i < ps_device_builtin_count (); i++) {
    strcat (known, i ? ", " : "");
    strcat (known, builtin[i].name);
  }
  return ps_diag_error (diag, 0, 0, "unknown device \"%s\" (known: %s, or a path to a .json profile)",
                        name, known);
}
