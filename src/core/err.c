/* Error buffer: formatted messages with context prepended by each caller up the stack. */
#include "commsweep/err.h"

#include <stdio.h>
#include <string.h>

void cs_err_clear(cs_err *err) {
  if (!err) return;
  err->code = CS_OK;
  err->msg[0] = '\0';
}

int cs_err_set(cs_err *err, int code, const char *fmt, ...) {
  if (!err) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  err->code = code;
  return code;
}

int cs_err_prefix(cs_err *err, const char *fmt, ...) {
  if (!err) return CS_EINTERNAL;
  char ctx[CS_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx, sizeof ctx, fmt, ap);
  va_end(ap);
  /* Shift the message right by the context's length, truncating its tail if need be. */
  size_t c = strlen(ctx), m = strlen(err->msg), room = sizeof err->msg - 1;
  if (c + 2 > room) c = room - 2;
  size_t keep = m < room - c - 2 ? m : room - c - 2;
  memmove(err->msg + c + 2, err->msg, keep);
  memcpy(err->msg, ctx, c);
  err->msg[c] = ':';
  err->msg[c + 1] = ' ';
  err->msg[c + 2 + keep] = '\0';
  return err->code;
}

const char *cs_err_name(int code) {
  switch (code) {
#define CS_ERR_NAME_(name, value, text) \
  case value:                           \
    return #name;
    CS_ERRNO_MAP(CS_ERR_NAME_)
#undef CS_ERR_NAME_
  }
  return "EUNKNOWN";
}

const char *cs_strerror(int code) {
  switch (code) {
#define CS_ERR_TEXT_(name, value, text) \
  case value:                           \
    return text;
    CS_ERRNO_MAP(CS_ERR_TEXT_)
#undef CS_ERR_TEXT_
  }
  return "unknown error";
}
