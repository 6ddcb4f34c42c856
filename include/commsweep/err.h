/* Error codes and the error buffer that carries context up the stack.
 *
 * Every fallible function returns int: 0 on success, a negative CS_E* code on failure, and
 * writes a message into the caller's cs_err.  Callers prepend their own context with
 * cs_err_prefix() ("job 17: adapter config 'a.json': field 'num_dies': ..."), so the final
 * message reads from the outermost context to the innermost fault.
 */
#ifndef COMMSWEEP_ERR_H
#define COMMSWEEP_ERR_H

#include <stdarg.h>

/* X(name, value, description): the one list the enum, names and strings come from. */
#define CS_ERRNO_MAP(X)                                                   \
  X(OK, 0, "success")                                                     \
  X(EINVAL, -1, "invalid input")                                          \
  X(ENOMEM, -2, "out of memory")                                          \
  X(EIO, -3, "input/output error")                                        \
  X(EPARSE, -4, "malformed JSON")                                         \
  X(ECONSTRAINT, -5, "adapter constraint violated")                       \
  X(EDEADLOCK, -6, "simulation made no progress")                         \
  X(ENOTFOUND, -7, "not found")                                           \
  X(EINTERNAL, -8, "internal error")                                      \
  X(EBUSY, -9, "resource busy")                                           \
  X(ECORRUPT, -10, "corrupted data")                                      \
  X(ERETRY, -11, "run the job again without the engine's shared state")   \
  X(EINTR, -12, "interrupted by a signal")                                \
  X(ELIMIT, -13, "over a stated limit")

enum {
#define CS_ERR_ENUM_(name, value, text) CS_##name = value,
  CS_ERRNO_MAP(CS_ERR_ENUM_)
#undef CS_ERR_ENUM_
};

#define CS_ERR_MSG_MAX 1024

typedef struct cs_err {
  int code;                  /* last CS_E* code written, CS_OK when clear */
  char msg[CS_ERR_MSG_MAX];  /* human-readable, outermost context first */
} cs_err;

/* Resets the buffer to CS_OK and an empty message.  Accepts NULL. */
void cs_err_clear(cs_err *err);

/* Writes code and a formatted message; returns code so callers can `return cs_err_set(...)`.
 * err may be NULL (the message is then dropped). */
int cs_err_set(cs_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "<context>: " to the message and returns err->code.  Truncates at CS_ERR_MSG_MAX. */
int cs_err_prefix(cs_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True for failures that say nothing about the job itself (out of memory, I/O, a busy
 * resource): such a failure is never cached as a failed row; the next run tries again. */
static inline int cs_err_is_transient(int code) {
  return code == CS_ENOMEM || code == CS_EIO || code == CS_EBUSY;
}

/* "EINVAL" etc., and the one-line description; "EUNKNOWN"/"unknown error" for other values. */
const char *cs_err_name(int code);
const char *cs_strerror(int code);

#endif
