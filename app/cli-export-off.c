/* cli-export-off.c: `planscope-cli export` in a build without render/
 * (-Drender=disabled, or Graphviz, cairo or Pango missing at build time):
 * it says so, and which build has it, instead of being an unknown command.
 * The JSON documents of the other views stay available from `plan --json`
 * and `simulate --json`. */
#include "cli-commands.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
  "Usage: planscope-cli export FILE --view dag|plan|timeline|memory\n"
  "                            --format dot|svg|png|json|trace -o OUT [PLAN-OPTIONS]\n"
  "\n"
  "This planscope-cli was built without render/ (Graphviz, cairo and Pango), so it\n"
  "cannot export.  Rebuild with those libraries (meson -Drender=enabled).  The plan\n"
  "and the simulated timeline are still available as documents: `plan --json`,\n"
  "`simulate --json` and `simulate --trace OUT`.\n";

int
cli_export_main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0) {
      fputs (usage, stdout);
      return cli_finish_stdout ();
    }
  fprintf (stderr,
           "planscope-cli export: not built: this planscope-cli was built without render/ "
           "(Graphviz, cairo and Pango; meson -Drender=enabled); use plan --json or "
           "simulate --json/--trace for the documents\n");
  return CLI_FAILED;
}
