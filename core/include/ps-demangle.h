/* ps-demangle.h: C++ kernel names (_ZN3mlx4core2cu6copy_sIiijLi4EEEvPKT_PT0_T1_)
 * for display.  The mangled name stays the name; views show this. */
#ifndef PS_DEMANGLE_H
#define PS_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* The demangled name of sym in buf ("mlx::core::cu::copy_s<int, int,
 * unsigned int, 4>"; with full, its parameters too), or sym itself when it
 * is no mangled C++ name or cannot be demangled. */
const char *ps_demangle (const char *sym, bool full, char *buf, size_t cap);

/* Whether this build has a demangler (libiberty). */
bool ps_demangle_available (void);

#endif
