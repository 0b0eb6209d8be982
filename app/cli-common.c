/* cli-common.c: what every planscope-cli command shares (cli.h): usage
 * errors, option parsing, the PLAN-OPTIONS, loading and planning with
 * located diagnostics, timing, trace files and checked output. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ps-exec-trace.h"
#include "ps-file.h"
#include "ps-import.h"
#include "ps-trace-export.h"

int
cli_usage_error (const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fflush (stdout);
  fprintf (stderr, "planscope-cli%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fprintf (stderr, "\nTry 'planscope-cli%s%s --help'.\n", cmd ? " " : "", cmd ? cmd : "");
  return CLI_USAGE;
}

bool
cli_is_help (const char *arg)
{
  return strcmp (arg, "-h") == 0 || strcmp (arg, "--help") == 0;
}

int
cli_option_value (const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **val)
{
  const char *a = argv[*i];
  size_t n = strlen (name);
  if (strncmp (a, name, n) != 0)
    return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
  } else if (a[n] != '\0') {
    return 0;
  } else if (*i + 1 >= argc) {
    cli_usage_error (cmd, "option '%s' needs a value", name);
    return -1;
  } else {
    *val = argv[++*i];
  }
  /* No option takes an empty value: `-o ""` names no file, and `--device
   * ""` no device. */
  if (!**val) {
    cli_usage_error (cmd, "option '%s' needs a value, not an empty one", name);
    return -1;
  }
  return 1;
}

int
cli_parse_u64 (const char *s, uint64_t *out)
{
  uint64_t v = 0;
  if (!s || !*s)
    return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return -1;
    unsigned d = (unsigned) (*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int
cli_parse_u32 (const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
  uint64_t v;
  if (cli_parse_u64 (s, &v) != 0 || v < min || v > max)
    return -1;
  *out = (uint32_t) v;
  return 0;
}

/* A size: a whole number of bytes above 0, optionally followed by K, M
 * or G (KiB, MiB or GiB; "KiB", "MiB" and "GiB" are taken too). */
static int
parse_bytes (const char *s, uint64_t *out)
{
  size_t n = strspn (s, "0123456789");
  char digits[24];
  if (n == 0 || n >= sizeof digits)
    return -1;
  memcpy (digits, s, n);
  digits[n] = '\0';
  uint64_t v, unit = 1;
  if (cli_parse_u64 (digits, &v) != 0 || v == 0)
    return -1;
  const char *u = s + n;
  if (*u) {
    unit = *u == 'K' || *u == 'k' ? (uint64_t) 1 << 10
           : *u == 'M'            ? (uint64_t) 1 << 20
           : *u == 'G'            ? (uint64_t) 1 << 30
                                  : 0;
    if (!unit || (u[1] && strcmp (u + 1, "iB") != 0))
      return -1;
  }
  if (v > UINT64_MAX / unit)
    return -1;
  *out = v * unit;
  return 0;
}

void
cli_plan_args_init (cli_plan_args *a)
{
  memset (a, 0, sizeof *a);
  ps_plan_options_init (&a->options);
}

/* Consumes a plan option (--streams N|auto, --fusion auto|all|off,
 * --no-fusion, --device NAME, --assume NODE=BRANCH, --memory-budget BYTES,
 * --timing) at argv[*i].
 * Returns 1 when consumed, 0 when argv[*i] is not one, -1 after a usage
 * error. */
static int
plan_option (const char *cmd, int argc, char **argv, int *i, cli_plan_args *a)
{
  const char *val;
  int m = cli_option_value (cmd, argc, argv, i, "--streams", &val);
  if (m < 0)
    return -1;
  if (m > 0) {
    a->options.streams_auto = strcmp (val, "auto") == 0;
    if (a->options.streams_auto) {
      a->options.streams = CLI_AUTO_STREAMS;
    } else if (cli_parse_u32 (val, 1, PS_MAX_STREAMS, &a->options.streams) != 0) {
      cli_usage_error (cmd, "--streams needs a whole number from 1 to %d or 'auto', not '%s'",
                       PS_MAX_STREAMS, val);
      return -1;
    }
    return 1;
  }
  if ((m = cli_option_value (cmd, argc, argv, i, "--fusion", &val)) != 0) {
    if (m < 0)
      return -1;
    if (strcmp (val, "auto") != 0 && strcmp (val, "all") != 0 && strcmp (val, "off") != 0) {
      cli_usage_error (cmd, "--fusion is auto, all or off, not '%s'", val);
      return -1;
    }
    a->options.fusion = strcmp (val, "off") != 0;
    a->options.fusion_all = strcmp (val, "all") == 0;
    return 1;
  }
  if (strcmp (argv[*i], "--no-fusion") == 0) {
    a->options.fusion = false;
    return 1;
  }
  if ((m = cli_option_value (cmd, argc, argv, i, "--device", &val)) != 0) {
    if (m < 0)
      return -1;
    a->device_name = val;
    return 1;
  }
  if ((m = cli_option_value (cmd, argc, argv, i, "--assume", &val)) != 0) {
    if (m < 0)
      return -1;
    const char *eq = strrchr (val, '=');
    if (!eq || eq == val || ps_names_find (&ps_assume_names, PS_ASSUME__COUNT, eq + 1,
                                           strlen (eq + 1)) < 0) {
      cli_usage_error (cmd, "--assume needs NODE=then, NODE=else or NODE=both, not '%s'", val);
      return -1;
    }
    if (a->n_assume >= CLI_MAX_ASSUME) {
      cli_usage_error (cmd, "--assume at most %d times", CLI_MAX_ASSUME);
      return -1;
    }
    a->assume[a->n_assume++] = val;
    return 1;
  }
  if ((m = cli_option_value (cmd, argc, argv, i, "--memory-budget", &val)) != 0) {
    if (m < 0)
      return -1;
    if (parse_bytes (val, &a->options.memory_budget) != 0) {
      cli_usage_error (cmd, "--memory-budget needs a size in bytes above 0 (with K, M or G for "
                       "KiB, MiB or GiB, as in 512M), not '%s'", val);
      return -1;
    }
    return 1;
  }
  if (strcmp (argv[*i], "--timing") == 0) {
    a->timing = true;
    return 1;
  }
  return 0;
}

/* One of the command's own options at argv[*i]: 1 when taken, 0 when
 * none matches, -1 after a usage message. */
static int
own_option (const char *cmd, int argc, char **argv, int *i, const cli_opt *opts, size_t n_opts)
{
  const char *arg = argv[*i];
  int m = 0;
  for (size_t k = 0; k < n_opts && m == 0; k++) {
    const cli_opt *o = &opts[k];
    if (o->flag) {
      if (strcmp (arg, o->name) == 0 || (o->alias && strcmp (arg, o->alias) == 0)) {
        *o->flag = true;
        m = 1;
      }
      continue;
    }
    const char *val = NULL;
    if ((m = cli_option_value (cmd, argc, argv, i, o->name, &val)) == 0 && o->alias)
      m = cli_option_value (cmd, argc, argv, i, o->alias, &val);
    if (m <= 0)
      continue;
    if (o->many) {
      if (*o->n_many >= o->max_many)
        return cli_usage_error (cmd, "%s at most %u times", o->name, o->max_many);
      o->many[(*o->n_many)++] = val;
    } else {
      *o->value = val;
    }
  }
  return m;
}

/* The loop of both parsers: a (NULL for a trace command) takes the
 * PLAN-OPTIONS and the FILE, else *file does. */
static int
parse_args (const char *cmd, const char *usage, int argc, char **argv, cli_plan_args *a,
            const char **file, const char **second, const cli_opt *opts, size_t n_opts)
{
  const char **dest = a ? &a->file : file;
  bool opts_done = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!opts_done && strcmp (arg, "--") == 0) {
      opts_done = true;
      continue;
    }
    if (opts_done || arg[0] != '-' || arg[1] == '\0') {
      if (*dest && second && !*second)
        *second = arg;
      else if (*dest)
        return cli_usage_error (cmd, "%s at a time ('%s' and '%s')",
                                second ? "two files" : a ? "one graph file" : "one trace",
                                second && *second ? *second : *dest, arg);
      else
        *dest = arg;
      continue;
    }
    if (cli_is_help (arg)) {
      fputs (usage, stdout);
      return cli_finish_stdout ();
    }
    int m = a ? plan_option (cmd, argc, argv, &i, a) : 0;
    if (m == 0)
      m = own_option (cmd, argc, argv, &i, opts, n_opts);
    if (m < 0)
      return CLI_USAGE;
    if (m == 0)
      return cli_usage_error (cmd, "unknown option '%s'", arg);
  }
  if (second && !*second)
    return cli_usage_error (cmd, "two files are required: A and B");
  if (!*dest)
    return cli_usage_error (cmd, a ? "a graph FILE is required" : "a TRACE file is required");
  return -1;
}

int
cli_parse_command (const char *cmd, const char *usage, int argc, char **argv, cli_plan_args *a,
                   const cli_opt *opts, size_t n_opts)
{
  return parse_args (cmd, usage, argc, argv, a, NULL, NULL, opts, n_opts);
}

int
cli_parse_two_files (const char *cmd, const char *usage, int argc, char **argv,
                     cli_plan_args *a, const char **second, const cli_opt *opts, size_t n_opts)
{
  *second = NULL;
  return parse_args (cmd, usage, argc, argv, a, NULL, second, opts, n_opts);
}

int
cli_parse_trace_command (const char *cmd, const char *usage, int argc, char **argv,
                         const char **file, const cli_opt *opts, size_t n_opts)
{
  *file = NULL;
  return parse_args (cmd, usage, argc, argv, NULL, file, NULL, opts, n_opts);
}

void
cli_timing (const char *what, double seconds)
{
  fprintf (stderr, "timing: %s %.3f s\n", what, seconds);
}

void
cli_print_timing (const ps_timing *t)
{
  for (int i = 0; i < t->n; i++)
    cli_timing (t->stage[i], t->seconds[i]);
}

int
cli_write_trace (const char *cmd, const char *path, const ps_timeline *tl,
                 const ps_diagnosis *dg)
{
  char err[512] = "";
  if (ps_trace_write_file (path, tl, dg, err, sizeof err) == 0)
    return CLI_OK;
  fprintf (stderr, "planscope-cli %s: %s\n", cmd, err);
  return CLI_FAILED;
}

/* The name messages give a graph FILE. */
static const char *
shown (const char *file)
{
  return strcmp (file, "-") == 0 ? "<stdin>" : file;
}

/* Prints diag to stderr (and, when rc says something failed that diag
 * does not, why), frees it and returns rc. */
static int
report (ps_diag *diag, int rc)
{
  ps_diag_print (diag, stderr);
  if (rc < 0 && diag->errors == 0)
    fprintf (stderr, "%s: error: %s\n", diag->file, ps_strerror (rc));
  ps_diag_free (diag);
  return rc;
}

/* Finds a device profile: `name` when given, else the graph's "device"
 * (when g is not NULL), else the default.  Problems go to stderr. */
static int
find_device (ps_device *dev, const char *name, const ps_graph *g)
{
  if (!name && g && g->device && *g->device)
    name = g->device;
  ps_diag diag;
  ps_diag_init (&diag, name ? name : PS_DEVICE_DEFAULT);
  return report (&diag, ps_device_find (dev, name, &diag));
}

int
cli_load_graph (ps_graph *g, const char *file, bool timing)
{
  ps_diag diag;
  ps_diag_init (&diag, shown (file));
  ps_timing t;
  ps_timing_reset (&t);
  int r = ps_import_graph_file (g, file, &t, &diag);
  if (timing)
    cli_print_timing (&t);
  return report (&diag, r) == 0 ? CLI_OK : CLI_FAILED;
}

int
cli_load_exec_trace (ps_exec_trace *et, const char *file)
{
  ps_diag diag;
  ps_diag_init (&diag, shown (file));
  memset (et, 0, sizeof *et);
  ps_file_whole w;
  int r = ps_file_read_whole (file, (size_t) PS_MAX_FILE_BYTES, &w, &diag);
  if (r == 0)
    r = ps_exec_trace_read (et, w.data, w.len, &diag);
  r = ps_file_whole_end (&w, r);
  return report (&diag, r) == 0 ? CLI_OK : CLI_FAILED;
}

void
cli_et_summary (const char *file, uint32_t gpu_ops, const ps_et_links *in,
                const ps_exec_trace *et)
{
  fprintf (stderr, "%s: %s %u of %u GPU ops to its operators (schema %s, %u nodes), %u "
                   "buffers (CUDA storages)",
           shown (file), in->linked ? "note: linked" : "warning: linked", in->linked, gpu_ops,
           et->schema, et->n_nodes, in->buffers);
  if (in->no_tensors || in->unmatched || in->no_cpu_op)
    fprintf (stderr, "; %u whose operator has no CUDA tensors to tie them to, %u launched by "
                     "a CPU op it does not list, %u by none (these keep their streams' "
                     "recorded order)",
             in->no_tensors, in->unmatched, in->no_cpu_op);
  fputs (in->linked ? "\n" : ": is it of the same run as the trace?\n", stderr);
}

/* --assume NODE=BRANCH: the branch the model takes at conditional NODE,
 * in place of the graph's own "assume". */
static int
apply_assume (const cli_plan_args *a, ps_graph *g)
{
  for (uint32_t k = 0; k < a->n_assume; k++) {
    const char *val = a->assume[k], *eq = strrchr (val, '=');
    size_t n = (size_t) (eq - val);
    uint32_t v = PS_NONE;
    for (uint32_t u = 0; u < g->n_nodes && v == PS_NONE; u++) {
      const char *name = ps_node_name (g, u);
      if (strlen (name) == n && memcmp (name, val, n) == 0)
        v = u;
    }
    if (v == PS_NONE || g->nodes[v].op != PS_OP_CONDITIONAL || g->nodes[v].aux >= g->n_conds) {
      fprintf (stderr, "%s: error: --assume: ", shown (a->file));
      if (v == PS_NONE)
        fprintf (stderr, "the graph has no node named \"%.*s\"\n", (int) (n > 200 ? 200 : n),
                 val);
      else
        fprintf (stderr, "node \"%.*s\" is a %s, not a conditional\n",
                 (int) (n > 200 ? 200 : n), val, ps_op_name ((ps_op) g->nodes[v].op));
      return CLI_FAILED;
    }
    g->conds[g->nodes[v].aux].assume = (uint8_t) ps_names_find (&ps_assume_names,
                                                                PS_ASSUME__COUNT, eq + 1,
                                                                strlen (eq + 1));
  }
  return CLI_OK;
}

int
cli_plan_device (cli_plan_args *a, ps_graph *g)
{
  if (g && apply_assume (a, g) != CLI_OK)
    return CLI_FAILED;
  if (find_device (&a->device, a->device_name, g) < 0)
    return CLI_FAILED;
  a->options.device = &a->device;
  return CLI_OK;
}

int
cli_load_and_plan (ps_graph *g, ps_plan *p, cli_plan_args *a)
{
  if (cli_load_graph (g, a->file, a->timing) != CLI_OK || cli_plan_device (a, g) != CLI_OK)
    return CLI_FAILED;
  ps_diag diag;
  ps_diag_init (&diag, shown (a->file));
  int r = ps_plan_build (p, g, &a->options, &diag);
  if (a->timing)
    cli_print_timing (&p->timing);
  return report (&diag, r) == 0 ? CLI_OK : CLI_FAILED;
}

int
cli_finish_stdout (void)
{
  errno = 0;
  if (fflush (stdout) != 0 || ferror (stdout)) {
    fprintf (stderr, "planscope-cli: error writing to standard output: %s\n",
             errno ? strerror (errno) : "write failed");
    return CLI_FAILED;
  }
  return CLI_OK;
}
