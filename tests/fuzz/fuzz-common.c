/* fuzz-common.c: helpers shared by the fuzz harnesses. */
#include "fuzz-harness.h"

#include "fuzz-check.h"

FILE *
ps_fuzz_devnull (void)
{
  static FILE *null;
  if (!null)
    null = fopen ("/dev/null", "w");
  FUZZ_CHECK (null != NULL, "cannot open /dev/null");
  return null;
}
