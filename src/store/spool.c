/* The write path of a finished row, and the log spool it takes on a parallel store: while jobs
 * run, each rank appends its finished rows with their transaction records to its own file,
 * "<path>.spool.<rank>", and gives the file the row alone; a structural step merges the spools
 * into the compressed /txlog (merge.c; store.h has why).  A serial store's rows and logs go
 * into the file through the layer below (file.c).
 *
 * An entry is a head (magic, row, counts and sizes of its parts, key), the finished result row
 * (checksums filled in), then the job's records in three parts: those before the first /txlog
 * chunk the job's slice fills whole, those whole chunks, and those after the last one; then the
 * per-step summaries.  Records and summaries outside whole chunks are byte-transposed (byte k of
 * every record together, as HDF5's shuffle filter does) and compressed as an LZ4 frame; a whole
 * chunk is stored as /txlog stores it (shuffled and deflated at the dataset's level), so the
 * merge writes it as it is and the deflating is done by the ranks that ran the jobs.  A job
 * whose slice fills no chunk, or a file whose /txlog filters are not exactly shuffle and deflate,
 * has all its records in the first part.
 * Entries are written whole at the spool's known end and a failed write is cut off again, so
 * only a kill can leave a torn entry, and only the last one: its checksums reject it (the row's
 * and the slice's, the same that protect the file; a job with whole chunks has one over its
 * parts instead of the slice's, which the merge cannot see whole).
 */
#define _GNU_SOURCE /* pwritev */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "store_spool.h"

/* The stored chunk at *z (its length, then its bytes): its bytes, *len of them; *z moves past it.
 * Only for chunk lists made here. */
static const unsigned char *chunk_next(const unsigned char **z, uint64_t *len) {
  memcpy(len, *z, sizeof *len);
  const unsigned char *bytes = *z + sizeof *len;
  *z = bytes + *len;
  return bytes;
}

/* What protects the records of an entry with whole chunks: xxh64 over the records before them
 * (seeded by the row), then each chunk's stored bytes, then the records after them, each hash
 * seeding the next.  z holds the chunks as the entry stores them. */
static uint64_t parts_checksum(uint64_t row, const cs_store_txn_row *first, uint64_t nfirst,
                               const unsigned char *z, uint64_t nchunks,
                               const cs_store_txn_row *last, uint64_t nlast) {
  uint64_t h = cs_store_xxh64(first, nfirst * sizeof *first, row);
  for (uint64_t c = 0, len; c < nchunks; c++) {
    const unsigned char *bytes = chunk_next(&z, &len);
    h = cs_store_xxh64(bytes, len, h);
  }
  return cs_store_xxh64(last, nlast * sizeof *last, h);
}

/* ---- naming ---------------------------------------------------------------------------- */

/* Splits path into its directory ("." when none) and file name. */
static void split_path(const char *path, char *dir, size_t dcap, const char **base) {
  const char *slash = strrchr(path, '/');
  *base = slash ? slash + 1 : path;
  if (!slash) snprintf(dir, dcap, ".");
  else if (slash == path) snprintf(dir, dcap, "/");
  else snprintf(dir, dcap, "%.*s", (int)(slash - path), path);
}

/* True when `name` is "<base>.spool.<digits>". */
static bool is_spool_of(const char *name, const char *base) {
  size_t len = strlen(base);
  if (strncmp(name, base, len) != 0 || strncmp(name + len, ".spool.", 7) != 0) return false;
  const char *d = name + len + 7;
  if (!*d) return false;
  for (; *d; d++)
    if (*d < '0' || *d > '9') return false;
  return true;
}

/* Calls fn(full path, ctx) for each spool file of path; returns how many there are. */
size_t cs_store_each_spool(const char *path, void (*fn)(const char *, void *), void *ctx) {
  char dir[4096];
  const char *base;
  split_path(path, dir, sizeof dir, &base);
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t count = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (is_spool_of(e->d_name, base)) {
      count++;
      if (fn) {
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        fn(full, ctx);
      }
    }
  closedir(d);
  return count;
}

bool cs_store_spool_exists(const char *path) { return cs_store_each_spool(path, NULL, NULL) > 0; }

static void remove_one(const char *file, void *ctx) {
  (void)ctx;
  unlink(file);
}

void cs_store_spool_remove(const char *path) { cs_store_each_spool(path, remove_one, NULL); }

/* ---- writing ----------------------------------------------------------------------------- */

int cs_store_spool_log(cs_store *st, int rank, cs_err *err) {
  if (!st->parallel) return cs_err_set(err, CS_EINTERNAL, "only a parallel store spools its log");
  char file[sizeof st->final_path + 32];
  snprintf(file, sizeof file, "%s.spool.%d", st->final_path, rank);
  st->spool_fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (st->spool_fd < 0)
    return cs_err_set(err, CS_EIO, "cannot create the log spool '%s': %s", file, strerror(errno));
  /* without a compressor (out of memory) every record goes the LZ4 way */
  if (st->txlog_chunk_len && cs_store_planez_init(&st->spool_pz, (int)st->txlog_level))
    st->txlog_chunk_len = 0;
  return CS_OK;
}

/* n rows of `size` bytes, transposed (into plane) and compressed into z from byte `at` on, *zlen
 * bytes (none when n is 0). */
static int pack_rows(const void *rows, uint64_t n, size_t size, cs_store_buf *plane,
                        cs_store_buf *z, size_t at, size_t *zlen, cs_err *err) {
  *zlen = 0;
  if (!n) return CS_OK;
  size_t raw = (size_t)n * size;
  if (!cs_store_buf_grow(plane, raw)) goto nomem;
  cs_store_shuffle(rows, plane->p, n, size, false);
  if (cs_store_compress(plane->p, raw, z, at, zlen)) goto nomem;
  return CS_OK;
nomem:
  return cs_err_set(err, CS_ENOMEM, "spooling %llu rows of %zu B: out of memory",
                    (unsigned long long)n, size);
}

int cs_store_stored_chunk(cs_store_planez *pz, const cs_store_txn_row *rows, uint64_t len,
                          cs_store_buf *z, size_t at, size_t *zlen, const char *what,
                          cs_err *err) {
  size_t bound = cs_store_planez_bound(sizeof *rows, len);
  int rc = cs_store_buf_grow(z, at + bound) ? CS_OK : CS_ENOMEM;
  if (!rc)
    rc = cs_store_planez_pack_rows(pz, rows, len, sizeof *rows, (unsigned char *)z->p + at, bound,
                                   zlen);
  if (!rc) return CS_OK;
  return cs_err_set(err, rc, "%s: %s", what, rc == CS_ENOMEM ? "out of memory" : "deflate failed");
}

/* A whole chunk of the job's records appended to the entry's bytes at *at, after its length
 * (8 bytes); *at moves past it. */
static int pack_chunk(cs_store *st, const cs_store_txn_row *rows, size_t *at, cs_err *err) {
  size_t zlen;
  uint64_t len;
  int rc = cs_store_stored_chunk(&st->spool_pz, rows, st->txlog_chunk_len, &st->spool_z, *at + sizeof len,
                        &zlen, "spooling a /txlog chunk", err);
  if (rc) return rc;
  len = zlen;
  memcpy((unsigned char *)st->spool_z.p + *at, &len, sizeof len);
  *at += sizeof len + len;
  return CS_OK;
}

static int spool_put(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                       const cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                       const cs_store_step_row *steps, uint64_t nsteps, cs_err *err) {
  spool_head head;
  memset(&head, 0, sizeof head);
  uint64_t c0;
  cs_store_whole_chunks(res->txlog_offset, n, st->txlog_chunk_len, &c0, &head.nchunks, &head.nfirst);
  uint64_t nlast = n - head.nfirst - head.nchunks * st->txlog_chunk_len;
  const cs_store_txn_row *last = nlast ? txns + (n - nlast) : txns;
  size_t zfirst = 0, zat, zlast = 0, zslen = 0;
  int rc = pack_rows(txns, head.nfirst, sizeof *txns, &st->spool_plane, &st->spool_z, 0, &zfirst,
                     err);
  zat = zfirst;
  for (uint64_t c = 0; c < head.nchunks && !rc; c++)
    rc = pack_chunk(st, txns + head.nfirst + c * st->txlog_chunk_len, &zat, err);
  if (!rc)
    rc = pack_rows(last, nlast, sizeof *txns, &st->spool_plane, &st->spool_z, zat, &zlast, err);
  if (!rc)
    rc = pack_rows(steps, nsteps, sizeof *steps, &st->spool_plane, &st->spool_z, zat + zlast,
                   &zslen, err);
  memcpy(head.magic, SPOOL_MAGIC, sizeof head.magic);
  head.row = row;
  head.n = n;
  head.zfirst = zfirst;
  head.zchunks = zat - zfirst;
  if (head.nchunks) {
    head.chunk_len = st->txlog_chunk_len;
    if (!rc)
      head.parts_sum = parts_checksum(row, txns, head.nfirst,
                                      (const unsigned char *)st->spool_z.p + zfirst, head.nchunks,
                                      last, nlast);
  }
  head.zlast = zlast;
  head.nsteps = nsteps;
  head.zsteps = zslen;
  memcpy(head.key, key, CS_STORE_KEY_LEN);
  size_t zlen = zat + zlast;
  off_t at = rc ? 0 : lseek(st->spool_fd, 0, SEEK_END);
  struct iovec iov[3] = {
      {&head, sizeof head}, {(void *)res, sizeof *res}, {st->spool_z.p, zlen + zslen}};
  size_t total = sizeof head + sizeof *res + zlen + zslen, done = 0;
  while (!rc && done < total) {
    /* skip what is written already */
    struct iovec part[3];
    int parts = 0;
    size_t skip = done;
    for (int i = 0; i < 3; i++) {
      if (skip >= iov[i].iov_len) {
        skip -= iov[i].iov_len;
        continue;
      }
      part[parts].iov_base = (char *)iov[i].iov_base + skip;
      part[parts++].iov_len = iov[i].iov_len - skip;
      skip = 0;
    }
    ssize_t put = pwritev(st->spool_fd, part, parts, at + (off_t)done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      rc = cs_err_set(err, CS_EIO, "writing the log spool of row %llu: %s",
                      (unsigned long long)row, put < 0 ? strerror(errno) : "nothing written");
      if (ftruncate(st->spool_fd, at) != 0) { /* a torn entry is rejected by its checksums */
      }
    } else {
      done += (size_t)put;
    }
  }
  return rc;
}

/* ---- a finished row (cs_store_put_result) ------------------------------------------------ */

/* Fills in the row's counts and checksums, then writes it: a spooling store spools the row
 * with its logs first and gives the file the row without them (txlog_detail none, as a
 * results-only row); any other store writes the logs into the file, then the row.  `spooled`:
 * the row's entry is in the spool already (cs_store_put_result_log), its sums filled in. */
static int put_row(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                   cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                   const cs_store_step_row *steps, uint64_t nsteps, bool spooled,
                   bool records_written, cs_err *err) {
  if (!st->writable) return cs_err_set(err, CS_EINTERNAL, "writing a row of a read-only store");
  if (cs_store_check_range("/results row", row, 1, st->rows, err) ||
      cs_store_check_range("/txlog slice", res->txlog_offset, n, st->txlog_len, err) ||
      cs_store_check_range("/steplog slice", res->steplog_offset, nsteps, st->steplog_len, err))
    return err->code;
  if (!spooled) {
    res->txlog_count = n;
    res->txlog_checksum = cs_store_txlog_checksum(row, txns, n);
    res->steplog_count = nsteps;
    res->steplog_checksum = cs_store_steplog_checksum(row, steps, nsteps);
    res->checksum = cs_store_row_checksum(row, key, res);
  }
  if (st->spool_fd < 0) return cs_store_write_row(st, row, res, txns, n, steps, nsteps,
                                                  records_written, err);
  if (!spooled && spool_put(st, row, key, res, txns, n, steps, nsteps, err)) return err->code;
  res->txlog_count = res->txlog_checksum = 0;
  res->steplog_count = res->steplog_checksum = 0;
  res->txlog_detail = CS_STORE_LOG_NONE;
  res->checksum = cs_store_row_checksum(row, key, res);
  return cs_store_write_row(st, row, res, NULL, 0, NULL, 0, false, err);
}

int cs_store_put_result(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                        cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                        cs_err *err) {
  return put_row(st, row, key, res, txns, n, NULL, 0, false, false, err);
}

int cs_store_put_result_steps(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                              cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                              const cs_store_step_row *steps, uint64_t nsteps, cs_err *err) {
  return put_row(st, row, key, res, txns, n, steps, nsteps, false, false, err);
}
/* ---- a log written while its job runs (cs_store_log) -------------------------------------- */

/* Where the records of a streamed log are in their entry. */
enum { LOG_FIRST, LOG_CHUNKS, LOG_LAST };

struct cs_store_log {
  cs_store *st;
  uint64_t row, offset, count, got; /* the slice, and the records appended so far */
  cs_store_xxh64_state slice;       /* txlog_checksum, over the rows as /txlog stores them */
  cs_store_txn_row *buf;            /* the part being gathered */
  uint64_t nbuf, cap;
  /* a spooled log: the entry at `at` (head and row written last), its parts after them */
  off_t at;
  int part;                      /* LOG_* */
  uint64_t nfirst, nchunks, done; /* records before the whole chunks, chunks, chunks written */
  uint64_t zfirst, zchunks, zbody; /* bytes of the parts written */
  uint64_t parts;                /* parts_checksum chained so far */
};

static int write_at(int fd, const void *p, size_t len, off_t at, uint64_t row, cs_err *err) {
  for (size_t done = 0; done < len;) {
    ssize_t put = pwrite(fd, (const char *)p + done, len - done, at + (off_t)done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0)
      return cs_err_set(err, CS_EIO, "writing the log spool of row %llu: %s",
                        (unsigned long long)row, put < 0 ? strerror(errno) : "nothing written");
    done += (size_t)put;
  }
  return CS_OK;
}

/* The body bytes at the spool's entry, after its head and row. */
static off_t body_at(const cs_store_log *lg) {
  return lg->at + (off_t)(sizeof(spool_head) + sizeof(cs_store_result_row) + lg->zbody);
}

/* Writes the gathered records as the entry's first part (LZ4 of their planes). */
static int log_first(cs_store_log *lg, cs_err *err) {
  cs_store *st = lg->st;
  size_t z = 0;
  int rc = pack_rows(lg->buf, lg->nbuf, sizeof *lg->buf, &st->spool_plane, &st->spool_z, 0, &z, err);
  if (!rc) rc = write_at(st->spool_fd, st->spool_z.p, z, body_at(lg), lg->row, err);
  if (rc) return rc;
  lg->parts = cs_store_xxh64(lg->buf, lg->nbuf * sizeof *lg->buf, lg->row);
  lg->zfirst = z;
  lg->zbody += z;
  lg->nbuf = 0;
  lg->part = lg->nchunks ? LOG_CHUNKS : LOG_LAST;
  return CS_OK;
}

/* Writes the gathered records, a whole /txlog chunk, as /txlog stores it. */
static int log_chunk(cs_store_log *lg, cs_err *err) {
  cs_store *st = lg->st;
  size_t at = 0;
  int rc = pack_chunk(st, lg->buf, &at, err);
  if (!rc) rc = write_at(st->spool_fd, st->spool_z.p, at, body_at(lg), lg->row, err);
  if (rc) return rc;
  lg->parts = cs_store_xxh64((const unsigned char *)st->spool_z.p + sizeof(uint64_t),
                             at - sizeof(uint64_t), lg->parts);
  lg->zchunks += at;
  lg->zbody += at;
  lg->nbuf = 0;
  if (++lg->done == lg->nchunks) lg->part = LOG_LAST;
  return CS_OK;
}

/* Where the log starts over: nothing appended, the spool cut back to the entry's start. */
static int log_reset(cs_store_log *lg, cs_err *err) {
  cs_store *st = lg->st;
  lg->got = lg->nbuf = lg->done = lg->zfirst = lg->zchunks = lg->zbody = lg->parts = 0;
  cs_store_xxh64_begin(&lg->slice, lg->row);
  if (st->spool_fd < 0) return CS_OK;
  if (ftruncate(st->spool_fd, lg->at) != 0)
    return cs_err_set(err, CS_EIO, "cutting the log spool back for row %llu: %s",
                      (unsigned long long)lg->row, strerror(errno));
  uint64_t c0;
  cs_store_whole_chunks(lg->offset, lg->count, st->txlog_chunk_len, &c0, &lg->nchunks, &lg->nfirst);
  lg->part = LOG_FIRST;
  return lg->nchunks && lg->nfirst == 0 ? log_first(lg, err) : CS_OK;
}

int cs_store_log_begin(cs_store *st, uint64_t row, uint64_t offset, uint64_t count,
                       cs_store_log **out, cs_err *err) {
  *out = NULL;
  if (!st->writable || (st->spool_fd < 0 && st->txlog < 0))
    return cs_err_set(err, CS_EINTERNAL, "a transaction log into a store that takes none");
  if (offset > st->txlog_len || count > st->txlog_len - offset)
    return cs_err_set(err, CS_EINTERNAL, "/txlog slice %llu..%llu outside its %llu records",
                      (unsigned long long)offset, (unsigned long long)(offset + count),
                      (unsigned long long)st->txlog_len);
  cs_store_log *lg = calloc(1, sizeof *lg);
  if (!lg) return cs_err_set(err, CS_ENOMEM, "a transaction log: out of memory");
  *lg = (cs_store_log){.st = st, .row = row, .offset = offset, .count = count};
  /* a spooled log holds a part at a time: a chunk, or what comes before and after the chunks;
   * a serial store's, a batch of rows on their way into /txlog */
  uint64_t c0, nchunks, nfirst;
  cs_store_whole_chunks(offset, count, st->txlog_chunk_len, &c0, &nchunks, &nfirst);
  lg->cap = st->spool_fd < 0 ? 4096 : nchunks ? st->txlog_chunk_len : count;
  lg->buf = malloc((lg->cap ? lg->cap : 1) * sizeof *lg->buf);
  lg->at = st->spool_fd >= 0 ? lseek(st->spool_fd, 0, SEEK_END) : 0;
  int rc = !lg->buf ? cs_err_set(err, CS_ENOMEM, "a transaction log of %llu records: out of memory",
                                 (unsigned long long)lg->cap)
           : lg->at < 0 ? cs_err_set(err, CS_EIO, "the log spool: %s", strerror(errno))
                        : log_reset(lg, err);
  if (rc) {
    cs_store_log_abort(lg);
    return rc;
  }
  *out = lg;
  return CS_OK;
}

int cs_store_log_restart(cs_store_log *lg, cs_err *err) { return log_reset(lg, err); }

void cs_store_log_abort(cs_store_log *lg) {
  if (!lg) return;
  if (lg->st->spool_fd >= 0 && lg->at >= 0 && ftruncate(lg->st->spool_fd, lg->at) != 0) {
    /* the torn entry is rejected by its checksums (it has no head) */
  }
  free(lg->buf);
  free(lg);
}

int cs_store_log_append(cs_store_log *lg, const cs_txn_record *recs, uint64_t n, cs_err *err) {
  cs_store *st = lg->st;
  if (n > lg->count - lg->got)
    return cs_err_set(err, CS_EINTERNAL, "row %llu: %llu transaction records for a slice of %llu",
                      (unsigned long long)lg->row, (unsigned long long)(lg->got + n),
                      (unsigned long long)lg->count);
  for (uint64_t i = 0; i < n; i++) {
    cs_store_txn_row *r = &lg->buf[lg->nbuf++];
    r->job = lg->row;
    memcpy(&r->rec, &recs[i], sizeof r->rec);
    cs_store_xxh64_update(&lg->slice, r, sizeof *r);
    lg->got++;
    int rc = CS_OK;
    if (st->spool_fd < 0) {
      if (lg->nbuf == lg->cap || lg->got == lg->count) {
        if (cs_store_slab_io(st, st->txlog, st->t_txn, lg->offset + lg->got - lg->nbuf, lg->nbuf,
                             lg->buf, true) < 0)
          rc = cs_store_h5_error(err, CS_EIO, "writing /txlog records of row %llu",
                                 (unsigned long long)lg->row);
        lg->nbuf = 0;
      }
    } else if (lg->part == LOG_FIRST && lg->nchunks && lg->nbuf == lg->nfirst) {
      rc = log_first(lg, err);
    } else if (lg->part == LOG_CHUNKS && lg->nbuf == st->txlog_chunk_len) {
      rc = log_chunk(lg, err);
    }
    if (rc) return rc;
  }
  return CS_OK;
}

/* The end of a spooled log: its last part and the summaries, then its head and row at its start
 * (so only an entry written whole has a head). */
static int log_spool_end(cs_store_log *lg, const char key[CS_STORE_KEY_LEN],
                         const cs_store_result_row *res, const cs_store_step_row *steps,
                         uint64_t nsteps, cs_err *err) {
  cs_store *st = lg->st;
  spool_head head;
  memset(&head, 0, sizeof head);
  if (lg->part == LOG_FIRST) { /* no whole chunk: every record in the first part */
    int rc = log_first(lg, err);
    if (rc) return rc;
  }
  size_t zlast = 0, zsteps = 0;
  int rc = pack_rows(lg->buf, lg->nbuf, sizeof *lg->buf, &st->spool_plane, &st->spool_z, 0, &zlast, err);
  if (!rc) rc = pack_rows(steps, nsteps, sizeof *steps, &st->spool_plane, &st->spool_z, zlast, &zsteps, err);
  if (!rc) rc = write_at(st->spool_fd, st->spool_z.p, zlast + zsteps, body_at(lg), lg->row, err);
  if (rc) return rc;
  memcpy(head.magic, SPOOL_MAGIC, sizeof head.magic);
  head.row = lg->row;
  head.n = lg->count;
  head.nfirst = lg->nchunks ? lg->nfirst : lg->count;
  head.zfirst = lg->zfirst;
  head.nchunks = lg->nchunks;
  head.zchunks = lg->zchunks;
  head.chunk_len = lg->nchunks ? st->txlog_chunk_len : 0;
  head.zlast = zlast;
  head.nsteps = nsteps;
  head.zsteps = zsteps;
  if (lg->nchunks) head.parts_sum = cs_store_xxh64(lg->buf, lg->nbuf * sizeof *lg->buf, lg->parts);
  memcpy(head.key, key, CS_STORE_KEY_LEN);
  rc = write_at(st->spool_fd, res, sizeof *res, lg->at + (off_t)sizeof head, lg->row, err);
  return rc ? rc : write_at(st->spool_fd, &head, sizeof head, lg->at, lg->row, err);
}

int cs_store_put_result_log(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                            cs_store_result_row *res, cs_store_log *lg,
                            const cs_store_step_row *steps, uint64_t nsteps, cs_err *err) {
  int rc = CS_OK;
  if (lg->st != st || lg->row != row || lg->got != lg->count || res->txlog_offset != lg->offset)
    rc = cs_err_set(err, CS_EINTERNAL, "row %llu: a log of %llu of %llu records at %llu for row %llu at %llu",
                    (unsigned long long)lg->row, (unsigned long long)lg->got,
                    (unsigned long long)lg->count, (unsigned long long)lg->offset,
                    (unsigned long long)row, (unsigned long long)res->txlog_offset);
  if (!rc) {
    res->txlog_count = lg->count;
    res->txlog_checksum = lg->count ? cs_store_xxh64_end(&lg->slice) : 0;
    res->steplog_count = nsteps;
    res->steplog_checksum = cs_store_steplog_checksum(row, steps, nsteps);
    res->checksum = cs_store_row_checksum(row, key, res);
  }
  if (!rc && st->spool_fd >= 0 && !(rc = log_spool_end(lg, key, res, steps, nsteps, err)))
    lg->at = -1; /* the entry is whole: it stays, whatever becomes of the row */
  if (!rc)
    rc = put_row(st, row, key, res, NULL, lg->count, steps, nsteps, true, true, err);
  cs_store_log_abort(lg);
  return rc;
}
