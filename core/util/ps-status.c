/* ps-status.c: the texts of the status codes (ps-status.h). */
#include "ps-status.h"

const char *
ps_strerror (int code)
{
  switch (code) {
  case PS_OK:
    return "success";
#define PS__ERR_CASE(name, c, text) \
  case PS_##name:                   \
    return text;
    PS_ERRNO_MAP (PS__ERR_CASE)
#undef PS__ERR_CASE
  default:
    return "unknown error";
  }
}
