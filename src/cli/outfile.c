/* Output files of the CLI (export -o, run --txlog): written under a temporary name beside the
 * target and renamed over it only when complete, so a failed command leaves an existing file
 * as it was; the input file itself is refused as output (same device and inode), and a path
 * that does not fit is refused instead of cut. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cs_cli_check_path(const char *what, const char *path, size_t suffix, cs_err *err) {
  const char *slash = strrchr(path, '/');
  size_t base = strlen(slash ? slash + 1 : path), len = strlen(path);
  if (len == 0) return cs_err_set(err, CS_EINVAL, "%s: empty path", what);
  if (len + suffix >= PATH_MAX || base + suffix > NAME_MAX)
    return cs_err_set(err, CS_EINVAL,
                      "%s: path of %zu characters (file name %zu): at most %d and %d fit", what,
                      len, base, PATH_MAX - 1 - (int)suffix, NAME_MAX - (int)suffix);
  return CS_OK;
}

int cs_cli_out_open(cs_cli_out *o, const char *path, const char *input, cs_err *err) {
  memset(o, 0, sizeof *o);
  snprintf(o->path, sizeof o->path, "%s", path);
  if (cs_cli_check_path("output", path, 16, err)) return err->code;
  struct stat out_sb, in_sb;
  bool exists = stat(path, &out_sb) == 0;
  if (exists && input && stat(input, &in_sb) == 0 && in_sb.st_dev == out_sb.st_dev &&
      in_sb.st_ino == out_sb.st_ino)
    return cs_err_set(err, CS_EINVAL, "output '%s' is the input file itself; refusing to overwrite it",
                      path);
  if (exists && !S_ISREG(out_sb.st_mode)) { /* /dev/stdout, a FIFO: written as it is */
    o->f = fopen(path, "w");
  } else {
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "w");
  }
  if (!o->f)
    return cs_err_set(err, CS_EIO, "cannot write '%s': %s", o->tmp[0] ? o->tmp : path,
                      strerror(errno));
  return CS_OK;
}

int cs_cli_out_close(cs_cli_out *o, bool keep, cs_err *err) {
  if (!o->f) return CS_OK;
  int rc = CS_OK;
  bool flushed = fflush(o->f) == 0 && !ferror(o->f);
  if (fclose(o->f) != 0 || !flushed) {
    if (keep) rc = cs_err_set(err, CS_EIO, "writing '%s' failed: %s", o->path, strerror(errno));
    keep = false;
  }
  o->f = NULL;
  if (!o->tmp[0]) return rc;
  if (keep && rename(o->tmp, o->path) != 0)
    rc = cs_err_set(err, CS_EIO, "renaming '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
  if (!keep || rc) unlink(o->tmp);
  return rc;
}
