/* cli-kernels.c: `planscope-cli kernels`: writes the CUDA C and the
 * NVRTC-compiled PTX of every kernel step of the plan.  Needs NVRTC, not a
 * GPU. */
#include "cli-commands.h"
#include "cli.h"

#include <string.h>

#include "ps-profiler.h"

static const char usage[] =
  "Usage: planscope-cli kernels FILE [PLAN-OPTIONS] -o DIR [--arch ARCH]\n"
  "\n"
  "Writes DIR/stepNNN-FUNCTION.cu, the CUDA C of every kernel step of the plan\n"
  "(built-in, synthetic, fused and user .cu kernels), and DIR/stepNNN-FUNCTION.ptx,\n"
  "the PTX NVRTC compiles from it; a user .ptx module is copied.  Works without a\n"
  "GPU.  One line per kernel step goes to standard output.\n"
  "\n"
  "  --streams N    use at most N streams (1-64, default 4); auto: the fewest, up to\n"
  "                 8, whose plan is within 1% of the fastest on any of those counts\n"
  "  --fusion F     auto (default): fuse element-wise kernels, keeping back groups the\n"
  "                 plan simulates faster without; all: every legal group; off: none\n"
  "  --no-fusion    do not fuse element-wise kernels (--fusion off)\n"
  "  --device NAME  device profile to plan for (default: the graph's, else h200)\n"
  "  --assume N=B   model branch B (then, else or both) of conditional N\n"
  "  --timing       per-pass wall time on stderr\n"
  "  -o DIR         the folder to write (created when missing)\n"
  "  --arch ARCH    the virtual architecture to compile for (default compute_90)\n"
  "\n"
  "Exit status: 0 success, 1 bad input or a kernel that does not compile, 2 usage\n"
  "error, 3 NVRTC unavailable (the .cu files are written anyway).\n";

int
cli_kernels_main (int argc, char **argv)
{
  const char *cmd = "kernels";
  cli_plan_args a;
  cli_plan_args_init (&a);
  const char *dir = NULL, *arch = NULL;
  const cli_opt opts[] = { { "-o", "--output", &dir, NULL }, { "--arch", NULL, &arch, NULL } };
  int parsed = cli_parse_command (cmd, usage, argc, argv, &a, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (arch && (strncmp (arch, "compute_", 8) != 0 || strlen (arch) < 10 || strlen (arch) > 16))
    return cli_usage_error (cmd, "--arch needs a virtual architecture like compute_90, not '%s'",
                            arch);
  if (!dir || !dir[0])
    return cli_usage_error (cmd, "-o DIR is required");

  ps_graph g;
  ps_plan p;
  ps_graph_init (&g);
  memset (&p, 0, sizeof p);
  int rc = cli_load_and_plan (&g, &p, &a);
  if (rc == CLI_OK) {
    double t0 = ps_clock_now ();
    ps_gpu_error err;
    ps_gpu_error_clear (&err);
    int r = ps_kernels_write (&p, dir, arch, stdout, &err);
    if (a.timing)
      cli_timing ("kernels", ps_clock_now () - t0);
    rc = cli_finish_stdout ();
    if (r != 0) {
      fprintf (stderr, "planscope-cli kernels: %s\n", err.message);
      rc = ps_gpu_status_unavailable (err.status) ? CLI_NO_GPU : CLI_FAILED;
    }
  }
  ps_plan_free (&p);
  ps_graph_free (&g);
  return rc;
}
