/* Small HDF5 helpers: scalar attributes (variable-length UTF-8 strings and integers, which read
 * as str and int in h5py and as char and double in MATLAB) and translation of the HDF5 error
 * stack into a cs_err message naming the innermost failure.  The bottom of the store: nothing
 * here knows the handle. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_format.h"

/* HDF5's exit handler closes files left open; after a close that failed (a full disk at its
 * last write) HDF5 1.10 keeps a dangling file and that handler crashes.  Every store is closed
 * explicitly, so the handler is not needed: it is switched off before the library starts. */
void cs_store_library_init(void) {
  H5dont_atexit();
  H5open();
}

void cs_store_h5_quiet(void) {
  H5dont_atexit();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

typedef struct innermost {
  char text[256];
  bool seen;
} innermost;

static herr_t take_innermost(unsigned n, const H5E_error2_t *e, void *data) {
  innermost *in = data;
  if (n == 0 && !in->seen) {
    snprintf(in->text, sizeof in->text, "%s (in %s)", e->desc ? e->desc : "unknown",
             e->func_name ? e->func_name : "?");
    in->seen = true;
  }
  return 0;
}

int cs_store_h5_error(cs_err *err, int code, const char *fmt, ...) {
  innermost in = {.text = "", .seen = false};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_innermost, &in);
  H5Eclear2(H5E_DEFAULT);
  char ctx[CS_ERR_MSG_MAX / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx, sizeof ctx, fmt, ap);
  va_end(ap);
  if (in.seen) return cs_err_set(err, code, "%s: HDF5: %s", ctx, in.text);
  return cs_err_set(err, code, "%s", ctx);
}

int cs_store_attr_text(hid_t obj, const char *name, const char *value, cs_err *err) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, &value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(s);
  H5Tclose(t);
  if (rc < 0) return cs_store_h5_error(err, CS_EIO, "writing attribute '%s'", name);
  return CS_OK;
}

int cs_store_attr_int(hid_t obj, const char *name, long long value, cs_err *err) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_LLONG, &value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(s);
  if (rc < 0) return cs_store_h5_error(err, CS_EIO, "writing attribute '%s'", name);
  return CS_OK;
}

/* True when the attribute holds one value (a scalar, or a 1-element array): reading it into
 * one value must not write past it. */
int cs_store_attr_utc_now(hid_t obj, const char *name, cs_err *err) {
  char now[32];
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return cs_store_attr_text(obj, name, now, err);
}

static bool single_value(hid_t a) {
  hid_t s = H5Aget_space(a);
  if (s < 0) return false;
  H5S_class_t c = H5Sget_simple_extent_type(s);
  hssize_t n = H5Sget_simple_extent_npoints(s);
  H5Sclose(s);
  return c == H5S_SCALAR || (c == H5S_SIMPLE && n == 1);
}

int cs_store_attr_read_text(hid_t obj, const char *name, char *buf, size_t cap, cs_err *err) {
  buf[0] = '\0';
  if (H5Aexists(obj, name) <= 0)
    return cs_err_set(err, CS_ENOTFOUND, "attribute '%s' is missing", name);
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ft = a < 0 ? -1 : H5Aget_type(a);
  int rc = CS_OK;
  if (ft < 0 || H5Tget_class(ft) != H5T_STRING || !single_value(a)) {
    rc = cs_err_set(err, CS_EINVAL, "attribute '%s' is not a scalar string", name);
  } else if (H5Tis_variable_str(ft) > 0) {
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5Tget_cset(ft));
    char *v = NULL;
    if (H5Aread(a, mt, &v) < 0) rc = cs_store_h5_error(err, CS_EIO, "reading attribute '%s'", name);
    else snprintf(buf, cap, "%s", v ? v : "");
    if (v) H5free_memory(v);
    H5Tclose(mt);
  } else {
    size_t n = H5Tget_size(ft);
    char *v = calloc(n + 1, 1);
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, n + 1);
    H5Tset_cset(mt, H5Tget_cset(ft));
    if (!v) rc = cs_err_set(err, CS_ENOMEM, "reading attribute '%s'", name);
    else if (H5Aread(a, mt, v) < 0)
      rc = cs_store_h5_error(err, CS_EIO, "reading attribute '%s'", name);
    else snprintf(buf, cap, "%s", v);
    free(v);
    H5Tclose(mt);
  }
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  return rc;
}

int cs_store_attr_read_int(hid_t obj, const char *name, long long *out, cs_err *err) {
  if (H5Aexists(obj, name) <= 0)
    return cs_err_set(err, CS_ENOTFOUND, "attribute '%s' is missing", name);
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ft = a < 0 ? -1 : H5Aget_type(a);
  bool integer = ft >= 0 && H5Tget_class(ft) == H5T_INTEGER && single_value(a);
  if (ft >= 0) H5Tclose(ft);
  herr_t rc = a < 0 || !integer ? -1 : H5Aread(a, H5T_NATIVE_LLONG, out);
  if (a >= 0) H5Aclose(a);
  if (a >= 0 && !integer) {
    H5Eclear2(H5E_DEFAULT);
    return cs_err_set(err, CS_EINVAL, "attribute '%s' is not a scalar integer", name);
  }
  if (rc < 0) return cs_store_h5_error(err, CS_EIO, "reading attribute '%s'", name);
  return CS_OK;
}
