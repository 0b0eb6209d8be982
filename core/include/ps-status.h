/* ps-status.h: the status codes of planscope's core.
 *
 * Every core function that can fail returns 0 or one of the negative
 * codes below, all from one list that also gives their texts (libuv's
 * UV_ERRNO_MAP idiom). */
#ifndef PS_STATUS_H
#define PS_STATUS_H

#define PS_ERRNO_MAP(X)                                           \
  X (ENOMEM, -1, "out of memory")                                 \
  X (EIO, -2, "input/output error")                               \
  X (ESYNTAX, -3, "syntax error")                                 \
  X (EINVAL, -4, "invalid input")                                 \
  X (ELIMIT, -5, "a documented limit was exceeded")               \
  X (ECYCLE, -6, "the graph has a cycle")                         \
  X (EPIN, -7, "a stream pin cannot be honoured")                 \
  X (EVERIFY, -8, "the plan failed verification")                 \
  X (EUSAGE, -9, "bad arguments")                                 \
  X (ENOGPU, -10, "no usable GPU")                                \
  X (ECANCELED, -11, "operation cancelled")

enum {
  PS_OK = 0,
#define PS__ERR_ENUM(name, code, text) PS_##name = (code),
  PS_ERRNO_MAP (PS__ERR_ENUM)
#undef PS__ERR_ENUM
};

/* The text of a status code; never NULL. */
const char *ps_strerror (int code);

#endif
