/* planscope-cli.c: the command-line tool (spec/cli.md): command dispatch,
 * top-level usage, and the helpers every command shares.  The commands
 * themselves live in cli-*.c. */
#include "cli.h"
#include "cli-commands.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps-file.h"

#ifndef PS_VERSION
#define PS_VERSION "unknown"
#endif

static const char usage_text[] =
  "Usage: planscope-cli COMMAND [ARGS...]\n"
  "\n"
  "Compile graphs of GPU work into multi-stream execution plans and check them.\n"
  "\n"
  "Commands:\n"
  "  plan FILE [PLAN-OPTIONS] [--json]    print the execution plan\n"
  "  verify FILE [PLAN-OPTIONS]           build the plan and check it independently\n"
  "  gen SHAPE --nodes N [--seed S]       write a synthetic graph\n"
  "  simulate FILE [PLAN-OPTIONS] [--device NAME] [--json] [--trace OUT]\n"
  "                                       run the plan on a modelled GPU\n"
  "  analyze TRACE [--json]               analyse a Chrome/Kineto trace\n"
  "  profile FILE [PLAN-OPTIONS] [--mode streams|graph] [--iterations N] [--json]\n"
  "          [--trace OUT] [--check]      run the plan on a real GPU under CUPTI\n"
  "  kernels FILE [PLAN-OPTIONS] -o DIR   write the CUDA C and PTX of every kernel step\n"
  "  export FILE --view dag|plan|timeline|memory --format dot|svg|png|json|trace\n"
  "         -o OUT [PLAN-OPTIONS]         write a diagram or data file\n"
  "\n"
  "PLAN-OPTIONS: --streams N (1-64, default 4), --no-fusion, --timing\n"
  "\n"
  "Options:\n"
  "  -h, --help       show this help (also after any command)\n"
  "  --version        show the version\n"
  "\n"
  "Exit status: 0 success, 1 bad input or a failed check, 2 usage error,\n"
  "3 no usable GPU.\n";

/* Commands of spec/cli.md that later work implements: they are recognised,
 * answer --help, and otherwise say plainly that they do not exist yet. */
static const struct {
  const char *name;
  const char *usage;
} pending_commands[] = {
  { "export", "Usage: planscope-cli export FILE --view dag|plan|timeline|memory "
              "--format dot|svg|png|json|trace -o OUT [PLAN-OPTIONS]\n\nWrite diagrams and "
              "data.\n" },
};

/* ---- shared helpers ----------------------------------------------------- */

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
    return 1;
  }
  if (a[n] != '\0')
    return 0;
  if (*i + 1 >= argc) {
    cli_usage_error (cmd, "option '%s' needs a value", name);
    return -1;
  }
  *val = argv[++*i];
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

void
cli_plan_args_init (cli_plan_args *a)
{
  memset (a, 0, sizeof *a);
  ps_plan_options_init (&a->options);
}

int
cli_plan_option (const char *cmd, int argc, char **argv, int *i, cli_plan_args *a)
{
  const char *val;
  int m = cli_option_value (cmd, argc, argv, i, "--streams", &val);
  if (m < 0)
    return -1;
  if (m > 0) {
    if (cli_parse_u32 (val, 1, PS_MAX_STREAMS, &a->options.streams) != 0) {
      cli_usage_error (cmd, "--streams needs a whole number from 1 to %d, not '%s'",
                       PS_MAX_STREAMS, val);
      return -1;
    }
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
  if (strcmp (argv[*i], "--timing") == 0) {
    a->timing = true;
    return 1;
  }
  return 0;
}

int
cli_parse_command (const char *cmd, const char *usage, int argc, char **argv, cli_plan_args *a,
                   const cli_opt *opts, size_t n_opts)
{
  bool opts_done = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!opts_done && strcmp (arg, "--") == 0) {
      opts_done = true;
      continue;
    }
    if (opts_done || arg[0] != '-' || arg[1] == '\0') {
      if (a->file)
        return cli_usage_error (cmd, "one graph file at a time ('%s' and '%s')", a->file, arg);
      a->file = arg;
      continue;
    }
    if (cli_is_help (arg)) {
      fputs (usage, stdout);
      return cli_finish_stdout ();
    }
    int m = cli_plan_option (cmd, argc, argv, &i, a);
    for (size_t k = 0; k < n_opts && m == 0; k++) {
      const cli_opt *o = &opts[k];
      if (o->flag) {
        if (strcmp (arg, o->name) == 0 || (o->alias && strcmp (arg, o->alias) == 0)) {
          *o->flag = true;
          m = 1;
        }
      } else if ((m = cli_option_value (cmd, argc, argv, &i, o->name, o->value)) == 0
                 && o->alias) {
        m = cli_option_value (cmd, argc, argv, &i, o->alias, o->value);
      }
    }
    if (m < 0)
      return CLI_USAGE;
    if (m == 0)
      return cli_usage_error (cmd, "unknown option '%s'", arg);
  }
  if (!a->file)
    return cli_usage_error (cmd, "a graph FILE is required");
  return -1;
}

double
cli_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

void
cli_timing (const char *what, double seconds)
{
  fprintf (stderr, "timing: %s %.3f s\n", what, seconds);
}

/* Standard input, read whole (graphs are loaded from memory anyway). */
static int
read_stdin (char **data, size_t *len)
{
  size_t cap = 1 << 20, n = 0;
  char *buf = malloc (cap + 1);
  if (!buf)
    return PS_ENOMEM;
  for (;;) {
    if (n == cap) {
      if (cap >= PS_MAX_FILE_BYTES) {
        free (buf);
        return PS_ELIMIT;
      }
      char *p = realloc (buf, cap * 2 + 1);
      if (!p) {
        free (buf);
        return PS_ENOMEM;
      }
      buf = p;
      cap *= 2;
    }
    size_t got = fread (buf + n, 1, cap - n, stdin);
    n += got;
    if (got == 0) {
      if (ferror (stdin)) {
        free (buf);
        return PS_EIO;
      }
      break;
    }
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return 0;
}

/* True when the text starts like a JSON object (after an optional BOM and
 * white space); anything else goes to ps_graph_load_file, which chooses the
 * format by content. */
static bool
looks_like_json (const char *data, size_t len)
{
  size_t i = len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
    i++;
  return i < len && data[i] == '{';
}

int
cli_find_device (ps_device *dev, const char *name, const ps_graph *g)
{
  if (!name && g && g->device && *g->device)
    name = g->device;
  ps_diag diag;
  ps_diag_init (&diag, name ? name : PS_DEVICE_DEFAULT);
  int rc = ps_device_find (dev, name, &diag);
  ps_diag_print (&diag, stderr);
  if (rc < 0 && diag.errors == 0)
    fprintf (stderr, "%s: error: %s\n", diag.file, ps_strerror (rc));
  ps_diag_free (&diag);
  return rc;
}

int
cli_load_graph (ps_graph *g, const char *file, bool timing)
{
  bool from_stdin = strcmp (file, "-") == 0;
  const char *name = from_stdin ? "<stdin>" : file;
  ps_diag diag;
  ps_diag_init (&diag, name);
  double t0 = cli_now ();
  char *data = NULL;
  size_t len = 0;
  int r;
  /* The file is read here rather than by ps_graph_load_file so that
   * --timing can tell reading from parsing. */
  if (from_stdin) {
    r = read_stdin (&data, &len);
    if (r != 0)
      ps_diag_error (&diag, 0, 0, "cannot read standard input: %s", ps_strerror (r));
  } else {
    r = ps_file_read_all (file, (size_t) PS_MAX_FILE_BYTES, &data, &len, &diag);
  }
  if (timing)
    cli_timing ("read", cli_now () - t0);
  if (r == 0) {
    double t1 = cli_now ();
    if (from_stdin || looks_like_json (data, len))
      r = ps_graph_load_json (g, data, len, name, &diag);
    else
      r = ps_graph_load_file (g, file, &diag);
    if (timing)
      cli_timing ("parse", cli_now () - t1);
  }
  free (data);
  ps_diag_print (&diag, stderr);
  if (r != 0 && diag.errors == 0)
    fprintf (stderr, "%s: error: %s\n", diag.file, ps_strerror (r));
  ps_diag_free (&diag);
  return r == 0 ? CLI_OK : CLI_FAILED;
}

int
cli_plan_device (cli_plan_args *a, const ps_graph *g)
{
  if (cli_find_device (&a->device, a->device_name, g) < 0)
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
  ps_diag_init (&diag, strcmp (a->file, "-") == 0 ? "<stdin>" : a->file);
  int r = ps_plan_build (p, g, &a->options, &diag);
  if (a->timing)
    for (int i = 0; i < ps_plan_last_timing.n && i < 16; i++)
      cli_timing (ps_plan_last_timing.pass[i], ps_plan_last_timing.seconds[i]);
  ps_diag_print (&diag, stderr);
  if (r != 0 && diag.errors == 0)
    fprintf (stderr, "%s: error: %s\n", diag.file, ps_strerror (r));
  ps_diag_free (&diag);
  return r == 0 ? CLI_OK : CLI_FAILED;
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

/* ---- dispatch ----------------------------------------------------------- */

static int
pending_main (int k, int argc, char **argv)
{
  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (cli_is_help (argv[i])) {
      fputs (pending_commands[k].usage, stdout);
      return cli_finish_stdout ();
    }
  fprintf (stderr, "planscope-cli: '%s' is not implemented yet\n", pending_commands[k].name);
  return CLI_USAGE;
}

int
main (int argc, char **argv)
{
  /* One large buffer: plans and generated graphs can be hundreds of MB. */
  static char out_buf[1 << 20];
  setvbuf (stdout, out_buf, _IOFBF, sizeof out_buf);

  if (argc < 2) {
    fputs (usage_text, stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (cli_is_help (cmd)) {
    fputs (usage_text, stdout);
    return cli_finish_stdout ();
  }
  if (strcmp (cmd, "--version") == 0) {
    fputs ("planscope-cli " PS_VERSION "\n", stdout);
    return cli_finish_stdout ();
  }
  /* Commands see argv[0] = their name. */
  if (strcmp (cmd, "plan") == 0)
    return cli_plan_main (argc - 1, argv + 1);
  if (strcmp (cmd, "verify") == 0)
    return cli_verify_main (argc - 1, argv + 1);
  if (strcmp (cmd, "gen") == 0)
    return cli_gen_main (argc - 1, argv + 1);
  if (strcmp (cmd, "simulate") == 0)
    return ps_cli_simulate (argc - 1, argv + 1);
  if (strcmp (cmd, "analyze") == 0)
    return ps_cli_analyze (argc - 1, argv + 1);
  if (strcmp (cmd, "profile") == 0)
    return ps_cli_profile (argc - 1, argv + 1);
  if (strcmp (cmd, "kernels") == 0)
    return ps_cli_kernels (argc - 1, argv + 1);
  if (strcmp (cmd, "export") == 0)
    return ps_cli_export (argc - 1, argv + 1);
  for (int k = 0; k < (int) (sizeof pending_commands / sizeof pending_commands[0]); k++)
    if (strcmp (cmd, pending_commands[k].name) == 0)
      return pending_main (k, argc - 1, argv + 1);
  if (cmd[0] == '-')
    return cli_usage_error (NULL, "unknown option '%s'", cmd);
  return cli_usage_error (NULL, "unknown command '%s'", cmd);
}
