/* ps-application.h: the desktop application: command line (FILE,
 * --screenshot OUT.png, --streams, --no-fusion, --device, --timing), the
 * about dialog and quit. */
#ifndef PS_APPLICATION_H
#define PS_APPLICATION_H

#include <adwaita.h>

#include "ps-types.h"

G_BEGIN_DECLS

#define PS_TYPE_APPLICATION (ps_application_get_type ())
G_DECLARE_FINAL_TYPE (PsApplication, ps_application, PS, APPLICATION, AdwApplication)

PsApplication *ps_application_new (void);
/* The status `planscope` exits with (non-zero when --screenshot failed). */
int ps_application_get_exit_status (PsApplication *self);

G_END_DECLS

#endif
