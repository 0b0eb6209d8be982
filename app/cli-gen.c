/* cli-gen.c: `planscope-cli gen`, synthetic graphs for benchmarks and tests. */
#include "cli-commands.h"
#include "cli.h"

#include <string.h>

#include "ps-file.h"
#include "ps-gen.h"

static const char gen_usage[] =
  "Usage: planscope-cli gen SHAPE --nodes N [--seed S] [-o FILE] [EXTRAS]\n"
  "\n"
  "Write a synthetic graph in the planscope format, to standard output or\n"
  "(all or nothing) to FILE.  The same arguments always give the same bytes.\n"
  "\n"
  "Shapes:\n"
  "  chain          one long dependent chain of mostly fusible kernels\n"
  "  fanout         one producer, many independent branches, a join tree\n"
  "  layered        layers of width ~sqrt(N) with edges to the last 1-3 layers\n"
  "  transformer    repeated transformer blocks (layernorm, Q/K/V, attention, MLP)\n"
  "\n"
  "  --nodes N          number of nodes (1-16777216)\n"
  "  --seed S           random seed (default 1)\n"
  "  -o, --output FILE  write FILE (all or nothing) instead of standard output\n"
  "Extras (off by default):\n"
  "  --events           user event record/wait pairs (names reused)\n"
  "  --barriers         barriers\n"
  "  --conditionals     conditionals with then/else branches\n"
  "  --pins             stream pins on some nodes\n"
  "  --pin-streams K    pins use streams below K (1-64, default 2)\n"
  "  --extras           all of the above\n"
  "  -h, --help         show this help\n";

typedef struct gen_ctx {
  ps_gen_options o;
} gen_ctx;

static int
write_graph (FILE *out, void *ctx)
{
  return ps_gen_write (&((gen_ctx *) ctx)->o, out);
}

int
cli_gen_main (int argc, char **argv)
{
  const char *cmd = "gen", *shape = NULL, *output = NULL, *val;
  bool have_nodes = false, opts_done = false;
  gen_ctx ctx;
  ps_gen_options *o = &ctx.o;
  ps_gen_options_init (o);
  o->events = o->barriers = o->conditionals = o->pins = false;

  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    int m;
    if (!opts_done && strcmp (arg, "--") == 0) {
      opts_done = true;
      continue;
    }
    if (opts_done || arg[0] != '-') {
      if (shape)
        return cli_usage_error (cmd, "unexpected argument '%s'", arg);
      shape = arg;
      continue;
    }
    if (cli_is_help (arg)) {
      fputs (gen_usage, stdout);
      return cli_finish_stdout ();
    }
    if ((m = cli_option_value (cmd, argc, argv, &i, "--nodes", &val)) != 0) {
      if (m < 0)
        return CLI_USAGE;
      if (cli_parse_u32 (val, 1, PS_MAX_NODES, &o->nodes) != 0)
        return cli_usage_error (cmd, "--nodes needs a whole number from 1 to %u, not '%s'",
                                PS_MAX_NODES, val);
      have_nodes = true;
    } else if ((m = cli_option_value (cmd, argc, argv, &i, "--seed", &val)) != 0) {
      if (m < 0)
        return CLI_USAGE;
      if (cli_parse_u64 (val, &o->seed) != 0)
        return cli_usage_error (cmd, "--seed needs a whole number, not '%s'", val);
    } else if ((m = cli_option_value (cmd, argc, argv, &i, "--pin-streams", &val)) != 0) {
      if (m < 0)
        return CLI_USAGE;
      if (cli_parse_u32 (val, 1, PS_MAX_STREAMS, &o->pin_streams) != 0)
        return cli_usage_error (cmd, "--pin-streams needs a whole number from 1 to %d, not '%s'",
                                PS_MAX_STREAMS, val);
    } else if ((m = cli_option_value (cmd, argc, argv, &i, "--output", &val)) != 0
               || (m = cli_option_value (cmd, argc, argv, &i, "-o", &val)) != 0) {
      if (m < 0)
        return CLI_USAGE;
      if (!*val)
        return cli_usage_error (cmd, "-o needs a file name");
      output = val;
    } else if (strcmp (arg, "--events") == 0) {
      o->events = true;
    } else if (strcmp (arg, "--barriers") == 0) {
      o->barriers = true;
    } else if (strcmp (arg, "--conditionals") == 0) {
      o->conditionals = true;
    } else if (strcmp (arg, "--pins") == 0) {
      o->pins = true;
    } else if (strcmp (arg, "--extras") == 0) {
      o->events = o->barriers = o->conditionals = o->pins = true;
    } else {
      return cli_usage_error (cmd, "unknown option '%s'", arg);
    }
  }
  if (!shape)
    return cli_usage_error (cmd, "missing SHAPE (chain, fanout, layered or transformer)");
  if (ps_gen_shape_parse (shape, &o->shape) != 0)
    return cli_usage_error (cmd, "unknown shape '%s' (chain, fanout, layered or transformer)",
                            shape);
  if (!have_nodes)
    return cli_usage_error (cmd, "missing --nodes N");

  if (output && strcmp (output, "-") != 0) {
    char err[256] = "";
    int r = ps_file_write_atomic (output, write_graph, &ctx, err, sizeof err);
    if (r != 0) {
      fprintf (stderr, "planscope-cli gen: %s\n", err);
      return CLI_FAILED;
    }
    return CLI_OK;
  }
  char err[256] = "";
  if (ps_file_write_stdout (write_graph, &ctx, err, sizeof err) != 0) {
    fprintf (stderr, "planscope-cli gen: error: %s\n", err);
    return CLI_FAILED;
  }
  return CLI_OK;
}
