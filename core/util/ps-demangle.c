/* ps-demangle.c: C++ symbol names for people, by libiberty's demangler
 * (the one binutils and GDB use) when the build found it; without it,
 * names stay as they are. */
#include "ps-demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PS_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

const char *
ps_demangle (const char *sym, bool full, char *buf, size_t cap)
{
  if (!sym || cap == 0)
    return sym ? sym : "";
#ifdef PS_HAVE_LIBIBERTY
  if (strncmp (sym, "_Z", 2) == 0) {
    /* Without DMGL_PARAMS: the name with its template arguments, no
     * parameter list. */
    char *d = cplus_demangle (sym, DMGL_ANSI | (full ? DMGL_PARAMS | DMGL_TYPES : 0));
    if (d) {
      snprintf (buf, cap, "%s", d);
      free (d);
      return buf;
    }
  }
#else
  (void) full;
#endif
  return sym;
}

bool
ps_demangle_available (void)
{
#ifdef PS_HAVE_LIBIBERTY
  return true;
#else
  return false;
#endif
}
