/* The merge, in a structural step: every rank's log spool written into the file.  Entries are
 * indexed, put in /txlog order, checked against the file (their checksums, their row's key and
 * reserved slices, the /txlog layout their whole chunks were made for) and written through the
 * file's row writer: records first, each whole chunk as stored, the row last.  An entry that
 * does not hold is dropped (its row stays pending and runs again); the spools are only read.
 */
#define _GNU_SOURCE /* pread */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lz4frame.h>

#include "store_spool.h"

#define MERGE_ROW_BATCH 256

typedef struct entry {
  uint64_t offset; /* /txlog offset of the slice, then the /steplog one: the merge order */
  uint64_t step_offset;
  uint64_t row;
  size_t file;     /* index into the open spools */
  off_t at;        /* of the head */
} entry;

typedef struct merge_ctx {
  int *fds;
  size_t nfds, cap;
  entry *entries;
  size_t n, ecap;
  uint64_t torn;
  int rc;
  cs_err *err;
} merge_ctx;

static int cmp_entry(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  if (x->step_offset != y->step_offset) return x->step_offset < y->step_offset ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

static bool read_at(int fd, void *buf, size_t len, off_t at) {
  for (size_t done = 0; done < len;) {
    ssize_t got = pread(fd, (char *)buf + done, len - done, at + (off_t)done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += (size_t)got;
  }
  return true;
}

/* Whether the parts of an entry fit in the `room` bytes after its result row. */
static bool body_fits(const spool_head *h, uint64_t room) {
  const uint64_t part[] = {h->zfirst, h->zchunks, h->zlast, h->zsteps};
  for (size_t i = 0; i < sizeof part / sizeof part[0]; i++) {
    if (part[i] > room) return false;
    room -= part[i];
  }
  return true;
}

/* Indexes the entries of one spool file; a torn tail ends it. */
static void scan_one(const char *file, void *vctx) {
  merge_ctx *c = vctx;
  if (c->rc) return;
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) {
    c->rc = cs_err_set(c->err, CS_EIO, "cannot read the log spool '%s': %s", file,
                       strerror(errno));
    if (fd >= 0) close(fd);
    return;
  }
  if (c->nfds == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 8;
    int *grown = realloc(c->fds, cap * sizeof *grown);
    if (!grown) {
      close(fd);
      c->rc = cs_err_set(c->err, CS_ENOMEM, "merging the log spools: out of memory");
      return;
    }
    c->fds = grown;
    c->cap = cap;
  }
  c->fds[c->nfds++] = fd;
  off_t at = 0, size = sb.st_size;
  const off_t fixed = (off_t)(sizeof(spool_head) + sizeof(cs_store_result_row));
  while (at < size) {
    spool_head head;
    cs_store_result_row res;
    if (size - at < fixed || !read_at(fd, &head, sizeof head, at) ||
        memcmp(head.magic, SPOOL_MAGIC, sizeof head.magic) != 0 ||
        !read_at(fd, &res, sizeof res, at + (off_t)sizeof head) ||
        !body_fits(&head, (uint64_t)(size - at - fixed))) {
      c->torn++;
      break;
    }
    if (c->n == c->ecap) {
      size_t cap = c->ecap ? 2 * c->ecap : 256;
      entry *grown = realloc(c->entries, cap * sizeof *grown);
      if (!grown) {
        c->rc = cs_err_set(c->err, CS_ENOMEM, "merging the log spools: out of memory");
        return;
      }
      c->entries = grown;
      c->ecap = cap;
    }
    c->entries[c->n++] = (entry){res.txlog_offset, res.steplog_offset, head.row, c->nfds - 1, at};
    at += fixed + (off_t)(head.zfirst + head.zchunks + head.zlast + head.zsteps);
  }
}

/* Rows of /jobs read for the merge's checks a block at a time: HDF5 allocates and clears a
 * conversion buffer of about a megabyte for every read of a few columns, whatever the rows. */
#define INDEX_BLOCK 4096

typedef struct merge_bufs {
  cs_store_buf z, plane, recs, steps;
  cs_store_buf chunks, last; /* an entry's whole chunks as stored, its records after them */
  LZ4F_dctx *lz4;
  cs_store_index_row *index; /* /jobs rows [index_first, index_first + index_n) */
  uint64_t index_first, index_n;
} merge_bufs;

/* The index row of `row` (< st->rows); NULL when it cannot be read or memory runs out. */
static const cs_store_index_row *index_of(cs_store *st, merge_bufs *b, uint64_t row) {
  if (row - b->index_first >= b->index_n) {
    b->index_n = 0;
    if (!b->index && !(b->index = malloc(INDEX_BLOCK * sizeof *b->index))) return NULL;
    uint64_t first = row - row % INDEX_BLOCK;
    uint64_t n = st->rows - first < INDEX_BLOCK ? st->rows - first : INDEX_BLOCK;
    cs_err ignore;
    if (cs_store_read_index(st, first, n, b->index, &ignore)) return NULL;
    b->index_first = first;
    b->index_n = n;
  }
  return &b->index[row - b->index_first];
}

/* Reads zlen compressed bytes at `at` and unpacks them into n rows of `size` bytes in *out:
 * CS_OK, CS_ECORRUPT (torn or damaged) or CS_ENOMEM. */
static int unpack_rows(int fd, off_t at, uint64_t zlen, uint64_t n, size_t size, merge_bufs *b,
                        cs_store_buf *out) {
  if (!n) return zlen ? CS_ECORRUPT : CS_OK;
  if (n > SIZE_MAX / size) return CS_ECORRUPT;
  size_t raw = (size_t)n * size;
  if (!cs_store_buf_grow(&b->z, zlen) || !cs_store_buf_grow(&b->plane, raw) ||
      !cs_store_buf_grow(out, raw))
    return CS_ENOMEM;
  if (!read_at(fd, b->z.p, zlen, at) ||
      !cs_store_decompress(&b->lz4, b->z.p, zlen, b->plane.p, raw))
    return CS_ECORRUPT;
  cs_store_shuffle(b->plane.p, out->p, n, size, true);
  return CS_OK;
}

/* ---- whole /txlog chunks ----------------------------------------------------------------- */

/* The merge writes /txlog in order.  A chunk that the merge fills completely (no record left
 * from before, none missing) is shuffled and deflated here and written as it is stored
 * (H5Dwrite_chunk): what HDF5's shuffle and deflate filters store (a zlib stream of the shuffled
 * bytes, planez.c), without HDF5's byte-by-byte shuffle (over a quarter of the merge's time on
 * the C2 study) and its chunk cache.  Any other chunk goes through H5Dwrite piece by piece,
 * which merges it with what is there. */
typedef struct chunk_writer {
  bool direct;          /* the pipeline is exactly shuffle + deflate, the type the row struct */
  cs_store_planez pz;   /* at the dataset's deflate level */
  uint64_t len;         /* records per chunk */
  uint64_t chunk;       /* the chunk being gathered; UINT64_MAX: none */
  uint64_t end;         /* records [chunk * len, end) given so far, in order */
  bool gap;             /* a record of the chunk was skipped or given twice */
  cs_store_buf recs, z;  /* the chunk's records, its stream */
  struct piece {        /* the pieces given, for the piecewise write */
    uint64_t first, n;
  } *pieces;
  size_t npieces, cap;
} chunk_writer;

/* The merge runs on a serial store, which reads /txlog's layout here (a parallel store reads it
 * at open, for its spool). */
static void chunk_writer_init(cs_store *st, chunk_writer *w) {
  memset(w, 0, sizeof *w);
  w->chunk = UINT64_MAX;
  unsigned level;
  w->direct = cs_store_txlog_direct(st, st->txlog, &w->len, &level);
  if (w->direct) w->direct = cs_store_planez_init(&w->pz, (int)level) == CS_OK;
}

static void chunk_writer_free(chunk_writer *w) {
  free(w->recs.p);
  free(w->z.p);
  free(w->pieces);
  cs_store_planez_end(&w->pz);
}

/* Writes the chunk gathered: whole and deflated here when the merge gave all its records,
 * else its pieces through H5Dwrite. */
static int chunk_flush(cs_store *st, chunk_writer *w, cs_err *err) {
  if (w->chunk == UINT64_MAX) return CS_OK;
  uint64_t first = w->chunk * w->len;
  uint64_t in_file = st->txlog_len - first < w->len ? st->txlog_len - first : w->len;
  cs_store_txn_row *recs = w->recs.p;
  int rc = CS_OK;
  if (!w->gap && w->end == first + in_file) {
    size_t zlen = 0;
    /* records past the dataset's end hold the fill value, zeros, as HDF5 stores them */
    memset(recs + in_file, 0, (w->len - in_file) * sizeof *recs);
    rc = cs_store_stored_chunk(&w->pz, recs, w->len, &w->z, 0, &zlen, "merging the log spools", err);
    hsize_t at = first;
    if (!rc && H5Dwrite_chunk(st->txlog, H5P_DEFAULT, 0, &at, zlen, w->z.p) < 0)
      rc = cs_store_h5_error(err, CS_EIO, "writing /txlog records %llu..%llu",
                             (unsigned long long)first, (unsigned long long)(first + in_file));
  } else {
    for (size_t i = 0; i < w->npieces && !rc; i++) {
      const struct piece *p = &w->pieces[i];
      if (cs_store_slab_io(st, st->txlog, st->t_txn, p->first, p->n, recs + (p->first - first),
                           true) < 0)
        rc = cs_store_h5_error(err, CS_EIO, "writing /txlog records %llu..%llu",
                               (unsigned long long)p->first, (unsigned long long)(p->first + p->n));
    }
  }
  w->chunk = UINT64_MAX;
  w->npieces = 0;
  return rc;
}

/* Gives the n records that belong at /txlog[first, first + n). */
static int chunk_put(cs_store *st, chunk_writer *w, uint64_t first, const cs_store_txn_row *recs,
                     uint64_t n, cs_err *err) {
  while (n) {
    uint64_t chunk = first / w->len, at = first - chunk * w->len;
    uint64_t k = w->len - at < n ? w->len - at : n;
    if (chunk != w->chunk) {
      int rc = chunk_flush(st, w, err);
      if (rc) return rc;
      if (!cs_store_buf_grow(&w->recs, w->len * sizeof *recs))
        return cs_err_set(err, CS_ENOMEM, "merging the log spools: out of memory");
      w->chunk = chunk;
      w->end = chunk * w->len;
      w->gap = false;
    }
    if (w->npieces == w->cap) {
      size_t cap = w->cap ? 2 * w->cap : 16;
      struct piece *grown = realloc(w->pieces, cap * sizeof *grown);
      if (!grown) return cs_err_set(err, CS_ENOMEM, "merging the log spools: out of memory");
      w->pieces = grown;
      w->cap = cap;
    }
    w->pieces[w->npieces++] = (struct piece){first, k};
    memcpy((cs_store_txn_row *)w->recs.p + at, recs, k * sizeof *recs);
    if (first != w->end) w->gap = true;
    w->end = first + k;
    first += k;
    recs += k;
    n -= k;
  }
  return CS_OK;
}

/* Walks the nchunks stored chunks of an entry, zchunks bytes at `at` (each its length, then its
 * bytes), one at a time through b->chunks: chains their hash onto *h, and with w writes each as
 * /txlog chunk c0, c0 + 1, ... (after the chunk gathered so far).  CS_ECORRUPT when the
 * bytes are not nchunks well-formed chunks or cannot be read. */
static int walk_chunks(cs_store *st, int fd, off_t at, uint64_t zchunks, uint64_t nchunks,
                       merge_bufs *b, uint64_t *h, chunk_writer *w, uint64_t c0, cs_err *err) {
  int rc = w ? chunk_flush(st, w, err) : CS_OK;
  for (uint64_t c = 0, len; c < nchunks && !rc; c++) {
    if (zchunks < sizeof len || !read_at(fd, &len, sizeof len, at) || len > zchunks - sizeof len)
      return CS_ECORRUPT;
    if (!cs_store_buf_grow(&b->chunks, len))
      return cs_err_set(err, CS_ENOMEM, "merging the log spools: out of memory");
    if (!read_at(fd, b->chunks.p, len, at + (off_t)sizeof len)) return CS_ECORRUPT;
    at += (off_t)(sizeof len + len);
    zchunks -= sizeof len + len;
    if (h) *h = cs_store_xxh64(b->chunks.p, len, *h);
    hsize_t first = (c0 + c) * (w ? w->len : 0);
    if (w && H5Dwrite_chunk(st->txlog, H5P_DEFAULT, 0, &first, len, b->chunks.p) < 0)
      rc = cs_store_h5_error(err, CS_EIO, "writing /txlog records %llu..%llu",
                             (unsigned long long)first, (unsigned long long)(first + w->len));
  }
  return rc ? rc : zchunks ? CS_ECORRUPT : CS_OK;
}

/* What check_entry found in an entry that holds: its head and row, and where its records go. */
typedef struct checked {
  spool_head head;
  cs_store_result_row res;
  uint64_t c0, nfirst, nlast; /* first whole chunk; records before and after the whole ones */
  off_t chunks_at;            /* where the whole chunks are in the spool */
} checked;

/* Reads entry e and checks it against the file (its checksums, its row's key and reservations,
 * the /txlog layout its whole chunks were made for): 1 when the merge would write it, 0 when it
 * is rejected (torn, not this file's, or made for another /txlog layout), or an error code. */
static int check_entry(cs_store *st, int fd, const entry *e, merge_bufs *b, const chunk_writer *w,
                       checked *out, cs_err *err) {
  spool_head *h = &out->head;
  cs_store_result_row *res = &out->res;
  if (!read_at(fd, h, sizeof *h, e->at) || !read_at(fd, res, sizeof *res, e->at + (off_t)sizeof *h))
    return 0;
  uint64_t n = h->n, ns = h->nsteps, row = h->row, nch = h->nchunks;
  if (row >= st->rows || n != res->txlog_count || res->txlog_offset > st->txlog_len ||
      n > st->txlog_len - res->txlog_offset || ns != res->steplog_count ||
      res->steplog_offset > st->steplog_len || ns > st->steplog_len - res->steplog_offset)
    return 0;
  uint64_t nch_expected = 0;
  out->c0 = 0;
  out->nfirst = n;
  if (nch) { /* whole chunks: only into chunks of the length they were made for (any deflate
              * level reads back; the level only sets how small they are) */
    if (!w->direct || h->chunk_len != w->len) return 0;
    cs_store_whole_chunks(res->txlog_offset, n, w->len, &out->c0, &nch_expected, &out->nfirst);
  }
  if (nch != nch_expected || h->nfirst != out->nfirst) return 0;
  uint64_t nfirst = out->nfirst, nlast = out->nlast = n - nfirst - nch * w->len;
  off_t at = e->at + (off_t)(sizeof *h + sizeof *res);
  int got = unpack_rows(fd, at, h->zfirst, nfirst, sizeof(cs_store_txn_row), b, &b->recs);
  at += (off_t)h->zfirst;
  out->chunks_at = at;
  /* the whole chunks pass twice, a chunk at a time: hashed now, written once all is checked */
  uint64_t parts = 0;
  if (!got && nch) {
    parts = cs_store_xxh64(b->recs.p, nfirst * sizeof(cs_store_txn_row), row);
    got = walk_chunks(st, fd, at, h->zchunks, nch, b, &parts, NULL, 0, err);
    if (got != CS_OK && got != CS_ECORRUPT) return got;
  } else if (!got && h->zchunks) {
    got = CS_ECORRUPT;
  }
  at += (off_t)h->zchunks;
  if (!got) got = unpack_rows(fd, at, h->zlast, nlast, sizeof(cs_store_txn_row), b, &b->last);
  at += (off_t)h->zlast;
  if (!got) got = unpack_rows(fd, at, h->zsteps, ns, sizeof(cs_store_step_row), b, &b->steps);
  if (got == CS_ENOMEM) return cs_err_set(err, CS_ENOMEM, "merging the log spools: out of memory");
  if (got) return 0;
  const cs_store_txn_row *recs = b->recs.p, *last = b->last.p;
  const cs_store_step_row *steps = b->steps.p;
  bool records_ok = nch ? cs_store_xxh64(last, nlast * sizeof *last, parts) == h->parts_sum
                        : cs_store_txlog_checksum(row, recs, n) == res->txlog_checksum;
  const cs_store_index_row *idx = NULL;
  if (!records_ok || cs_store_steplog_checksum(row, steps, ns) != res->steplog_checksum ||
      cs_store_row_checksum(row, h->key, res) != res->checksum || !(idx = index_of(st, b, row)) ||
      memcmp(idx->key, h->key, CS_STORE_KEY_LEN) != 0 ||
      (n && (idx->txlog_reserved_offset != res->txlog_offset || idx->txlog_reserved_count != n)) ||
      (ns && (idx->steplog_reserved_offset != res->steplog_offset ||
              idx->steplog_reserved_count != ns)))
    return 0;
  return 1;
}

/* Checks entry e and writes it: 1 written, 0 rejected, or an error code. */
static int merge_entry(cs_store *st, int fd, const entry *e, merge_bufs *b, chunk_writer *w,
                       cs_err *err) {
  checked c;
  int ok = check_entry(st, fd, e, b, w, &c, err);
  if (ok <= 0) return ok;
  uint64_t n = c.head.n;
  const cs_store_txn_row *recs = b->recs.p, *last = b->last.p;
  int rc = CS_OK;
  if (w->direct) {
    rc = chunk_put(st, w, c.res.txlog_offset, recs, c.nfirst, err);
    if (!rc && c.head.nchunks) {
      rc = walk_chunks(st, fd, c.chunks_at, c.head.zchunks, c.head.nchunks, b, NULL, w, c.c0, err);
      if (rc == CS_ECORRUPT)
        rc = cs_err_set(err, CS_ECORRUPT, "row %llu: its spooled chunks changed while merging",
                        (unsigned long long)c.head.row);
    }
    if (!rc) rc = chunk_put(st, w, c.res.txlog_offset + n - c.nlast, last, c.nlast, err);
  }
  /* the records are verified above: the row keeps the checksums it came with */
  if (!rc)
    rc = cs_store_write_row(st, c.head.row, &c.res, recs, n, b->steps.p, c.head.nsteps, w->direct,
                            err);
  return rc ? rc : 1;
}

static void bufs_free(merge_bufs *b) {
  free(b->z.p);
  free(b->plane.p);
  free(b->recs.p);
  free(b->steps.p);
  free(b->chunks.p);
  free(b->last.p);
  free(b->index);
  cs_store_decompress_end(b->lz4);
}

static void ctx_free(merge_ctx *c) {
  for (size_t i = 0; i < c->nfds; i++) close(c->fds[i]);
  free(c->fds);
  free(c->entries);
}

int cs_store_spool_peek(cs_store *st, const char *path, cs_store_spooled **out, size_t *n,
                        uint64_t *dropped, cs_err *err) {
  *out = NULL;
  *n = 0;
  *dropped = 0;
  if (st->parallel || st->txlog < 0 || st->steplog < 0)
    return cs_err_set(err, CS_EINTERNAL, "reading the log spools with a parallel store");
  merge_ctx c = {.err = err};
  cs_store_each_spool(path, scan_one, &c);
  int rc = c.rc;
  *dropped = c.torn;
  cs_store_spooled *rows = !rc && c.n ? malloc(c.n * sizeof *rows) : NULL;
  if (!rc && c.n && !rows) rc = cs_err_set(err, CS_ENOMEM, "reading the log spools: out of memory");
  merge_bufs buf;
  memset(&buf, 0, sizeof buf);
  chunk_writer w;
  chunk_writer_init(st, &w);
  for (size_t i = 0; i < c.n && !rc; i++) {
    checked k;
    int got = check_entry(st, c.fds[c.entries[i].file], &c.entries[i], &buf, &w, &k, err);
    if (got < 0) rc = got;
    else if (!got) (*dropped)++;
    else
      rows[(*n)++] = (cs_store_spooled){k.head.row, k.res.txlog_count, k.res.steplog_count,
                                        k.res.status, k.res.txlog_detail};
  }
  chunk_writer_free(&w);
  bufs_free(&buf);
  ctx_free(&c);
  if (rc) {
    free(rows);
    *n = 0;
    return cs_err_prefix(err, "reading the log spools of '%s'", path);
  }
  *out = rows;
  return CS_OK;
}

int cs_store_spool_merge(cs_store *st, const char *path, uint64_t *merged, uint64_t *dropped,
                         cs_err *err) {
  *merged = *dropped = 0;
  if (!st->writable || st->parallel || st->txlog < 0 || st->steplog < 0)
    return cs_err_set(err, CS_EINTERNAL, "merging the log spools into a %s store",
                      st->parallel ? "parallel" : "read-only");
  merge_ctx c = {.err = err};
  cs_store_each_spool(path, scan_one, &c);
  int rc = c.rc;
  *dropped = c.torn;
  if (!rc) qsort(c.entries, c.n, sizeof *c.entries, cmp_entry);
  if (!rc) rc = cs_store_batch_rows(st, MERGE_ROW_BATCH, err);
  merge_bufs buf;
  memset(&buf, 0, sizeof buf);
  chunk_writer w;
  chunk_writer_init(st, &w);
  for (size_t i = 0; i < c.n && !rc; i++) {
    int got = merge_entry(st, c.fds[c.entries[i].file], &c.entries[i], &buf, &w, err);
    if (got < 0) rc = got;
    else if (got) (*merged)++;
    else (*dropped)++;
  }
  if (!rc) rc = chunk_flush(st, &w, err);
  chunk_writer_free(&w);
  uint64_t lost = 0;
  if (!rc) rc = cs_store_flush_rows(st, &lost, err);
  cs_err ignore;
  cs_store_batch_rows(st, 0, &ignore);
  bufs_free(&buf);
  ctx_free(&c);
  if (rc) return cs_err_prefix(err, "merging the log spools of '%s'", path);
  return CS_OK;
}
