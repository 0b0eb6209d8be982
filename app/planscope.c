/* planscope.c: the desktop app.  Everything lives in ui/; this only runs
 * the application object. */
#include "ps-application.h"
#include "ps-file.h"

int
main (int argc, char **argv)
{
  /* A kill or a closed session leaves no temporary file of an export in
   * progress behind. */
  ps_file_remove_temporaries_on_signals ();
  g_autoptr (PsApplication) app = ps_application_new ();
  int status = g_application_run (G_APPLICATION (app), argc, argv);
  int ours = ps_application_get_exit_status (app);
  return ours ? ours : status;
}
