/* The writer lock: "<file>.lock" next to the file's canonical path, created with O_EXCL, holding "pid=<pid> host=<host>
 * started=<utc> sweep=<name>".  At most one sweep writes a store at a time; a second one fails
 * with the holder named.  A lock whose holder was on this host and is gone (kill -9) is stale and
 * is taken over; a lock from another host cannot be checked and needs --break-lock. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "commsweep/store.h"

/* "<canonical path>.lock": the same lock whatever path (relative, via a symlink) names the
 * file.  A file that does not exist yet is named by its canonical directory. */
void cs_store_lock_path(const char *path, char *buf, size_t cap) {
  char real[PATH_MAX], dir[PATH_MAX];
  const char *base = "";
  size_t n = strlen(path);
  if (!realpath(path, real)) {
    const char *slash = strrchr(path, '/');
    base = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    if (dlen >= sizeof dir) dlen = sizeof dir - 1;
    memcpy(dir, slash ? path : ".", slash ? dlen : 1);
    dir[slash ? dlen : 1] = '\0';
    if (slash == path) strcpy(dir, "/");
    if (!realpath(dir, real)) {
      if (n + 6 > cap) n = cap - 6;
      memcpy(buf, path, n);
      memcpy(buf + n, ".lock", 6);
      return;
    }
    if (strcmp(real, "/") != 0 && strlen(real) + 1 < sizeof real) strcat(real, "/");
  }
  size_t r = strlen(real), b = strlen(base);
  if (r + b + 6 > cap) r = b = 0; /* cannot happen with cap >= 2 * PATH_MAX */
  memcpy(buf, real, r);
  memcpy(buf + r, base, b);
  memcpy(buf + r + b, ".lock", 6);
}

static bool read_holder(const char *lpath, char *buf, size_t cap) {
  FILE *f = fopen(lpath, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = '\0';
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
  return true;
}

bool cs_store_lock_holder(const char *path, char *buf, size_t cap) {
  char lpath[2 * PATH_MAX];
  cs_store_lock_path(path, lpath, sizeof lpath);
  buf[0] = '\0';
  return read_holder(lpath, buf, cap);
}

/* True when pid is gone or a zombie (exited, not yet reaped: it will never write again). */
static bool process_gone(long pid) {
  if (kill((pid_t)pid, 0) != 0) return errno == ESRCH;
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *close_paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
  return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

/* True when the holder line names a process of this host that no longer runs. */
static bool stale(const char *holder) {
  long pid = 0;
  char host[256] = "", me[256] = "";
  const char *p = strstr(holder, "pid="), *h = strstr(holder, "host=");
  if (!p || !h || sscanf(p, "pid=%ld", &pid) != 1 || sscanf(h, "host=%255s", host) != 1) return false;
  if (gethostname(me, sizeof me - 1) != 0 || strcmp(me, host) != 0) return false;
  return pid > 0 && process_gone(pid);
}

/* "pid=<pid> host=<host> " : how a holder line of this process starts. */
static void own_prefix(char *buf, size_t cap) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  snprintf(buf, cap, "pid=%ld host=%s ", (long)getpid(), host);
}

static bool held_by_me(const char *holder) {
  char mine[300];
  own_prefix(mine, sizeof mine);
  return strncmp(holder, mine, strlen(mine)) == 0;
}

/* True when the holder line names a live process of this host (not this one). */
static bool alive_here(const char *holder) {
  long pid = 0;
  char host[256] = "", me[256] = "";
  const char *p = strstr(holder, "pid="), *h = strstr(holder, "host=");
  if (!p || !h || sscanf(p, "pid=%ld", &pid) != 1 || sscanf(h, "host=%255s", host) != 1) return false;
  if (gethostname(me, sizeof me - 1) != 0 || strcmp(me, host) != 0) return false;
  return pid > 0 && !process_gone(pid);
}

/* Creates lpath with O_EXCL holding our holder line.  CS_EBUSY (holder in `holder`) when a
 * live or unknown holder has it; a stale one is taken over. */
static int take(const char *lpath, const char *sweep_name, char *holder, size_t hcap,
                cs_err *err) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  for (int attempt = 0; attempt < 3; attempt++) {
    int fd = open(lpath, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      char now[32], line[512];
      time_t t = time(NULL);
      struct tm tm;
      gmtime_r(&t, &tm);
      strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
      int n = snprintf(line, sizeof line, "pid=%ld host=%s started=%s sweep=%s\n", (long)getpid(),
                       host, now, sweep_name);
      bool ok = write(fd, line, (size_t)n) == n;
      close(fd);
      if (!ok) {
        unlink(lpath);
        return cs_err_set(err, CS_EIO, "lock file '%s': write failed", lpath);
      }
      return CS_OK;
    }
    if (errno != EEXIST)
      return cs_err_set(err, CS_EIO, "lock file '%s': %s", lpath, strerror(errno));
    if (!read_holder(lpath, holder, hcap)) continue; /* vanished: retry */
    if (!stale(holder)) return CS_EBUSY;
    fprintf(stderr, "commsweep: taking over stale lock '%s' (%s)\n", lpath, holder);
    unlink(lpath);
  }
  if (!read_holder(lpath, holder, hcap)) snprintf(holder, hcap, "unknown");
  return CS_EBUSY;
}

/* The host-wide lock of a file's device and inode: a second name for the same file (a hard
 * link) has another lock file beside it, but the same inode.  Kept where every process of
 * the host sees it; a hard link on another host is not detected (docs/hdf5-schema.md). */
static bool inode_lock_path(const char *path, char *buf, size_t cap) {
  struct stat sb, dir;
  if (stat(path, &sb) != 0) return false;
  const char *base = stat("/dev/shm", &dir) == 0 && S_ISDIR(dir.st_mode) ? "/dev/shm" : "/tmp";
  snprintf(buf, cap, "%s/commsweep-%llx-%llx.lock", base, (unsigned long long)sb.st_dev,
           (unsigned long long)sb.st_ino);
  return true;
}

/* Removes the inode locks of dead processes of this host (a sweep killed with -9 leaves its
 * lock; the file it names may be gone, so no later sweep would take that lock over). */
static void sweep_stale_inode_locks(const char *ipath) {
  char dirname[PATH_MAX], entry[PATH_MAX + 256], holder[512];
  snprintf(dirname, sizeof dirname, "%s", ipath);
  char *slash = strrchr(dirname, '/');
  if (!slash) return;
  *slash = '\0';
  DIR *d = opendir(dirname);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (strncmp(e->d_name, "commsweep-", 10) != 0 || n < 5 || strcmp(e->d_name + n - 5, ".lock"))
      continue;
    snprintf(entry, sizeof entry, "%s/%s", dirname, e->d_name);
    if (read_holder(entry, holder, sizeof holder) && stale(holder)) unlink(entry);
  }
  closedir(d);
}

int cs_store_lock_inode(const char *path, const char *sweep_name, cs_err *err) {
  char ipath[PATH_MAX], holder[512];
  if (!inode_lock_path(path, ipath, sizeof ipath)) return CS_OK; /* no file yet */
  sweep_stale_inode_locks(ipath);
  int rc = take(ipath, sweep_name, holder, sizeof holder, err);
  if (rc == CS_EBUSY) {
    struct stat sb;
    stat(path, &sb);
    return cs_err_set(err, CS_EBUSY,
                      "file '%s' (device %llu, inode %llu) is being written by another sweep "
                      "under another name, a hard link (%s)",
                      path, (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino, holder);
  }
  return rc;
}

void cs_store_unlock_inode(const char *path) {
  char ipath[PATH_MAX], holder[512];
  if (inode_lock_path(path, ipath, sizeof ipath) && read_holder(ipath, holder, sizeof holder) &&
      held_by_me(holder))
    unlink(ipath);
}

bool cs_store_lock_cannot_write(const char *path) {
  char lpath[2 * PATH_MAX];
  cs_store_lock_path(path, lpath, sizeof lpath);
  char *slash = strrchr(lpath, '/');
  if (slash == lpath) slash++; /* "/x.h5.lock": the root directory */
  if (slash) *slash = '\0';
  const char *dir = slash ? lpath : ".";
  return access(dir, W_OK) != 0 && (errno == EROFS || errno == EACCES);
}

int cs_store_lock(const char *path, const char *sweep_name, bool break_lock, cs_err *err) {
  char lpath[2 * PATH_MAX], holder[512];
  cs_store_lock_path(path, lpath, sizeof lpath);
  if (break_lock && read_holder(lpath, holder, sizeof holder)) {
    if (alive_here(holder))
      return cs_err_set(err, CS_EBUSY,
                        "file '%s': --break-lock refused: the sweep holding '%s' is alive on this "
                        "host (%s)",
                        path, lpath, holder);
    fprintf(stderr, "commsweep: --break-lock: removing '%s' (%s)\n", lpath, holder);
    unlink(lpath);
  }
  int rc = take(lpath, sweep_name, holder, sizeof holder, err);
  if (rc == CS_EBUSY)
    return cs_err_set(err, CS_EBUSY,
                      "file '%s' is being written by another sweep (%s); wait for it to finish, "
                      "or if it is dead remove '%s' (or pass --break-lock)",
                      path, holder, lpath);
  if (rc) return rc;
  if ((rc = cs_store_lock_inode(path, sweep_name, err))) unlink(lpath);
  return rc;
}

void cs_store_unlock(const char *path) {
  char lpath[2 * PATH_MAX], holder[512];
  cs_store_lock_path(path, lpath, sizeof lpath);
  cs_store_unlock_inode(path);
  /* only our own: after a --break-lock elsewhere the lock may be another sweep's */
  if (read_holder(lpath, holder, sizeof holder) && held_by_me(holder)) unlink(lpath);
}
