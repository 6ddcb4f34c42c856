/* The log spool: while jobs run, each rank appends its finished rows with their transaction
 * records to its own file, "<path>.spool.<rank>"; a structural step merges the spools into the
 * compressed /txlog (store.h has why).
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
#include <lz4frame.h>

#include "store_int.h"

#define SPOOL_MAGIC "CSSPOOL5"
#define MERGE_ROW_BATCH 256

typedef struct spool_head {
  char magic[8];
  uint64_t row;
  uint64_t n;         /* records */
  uint64_t nfirst;    /* of them before the whole chunks (all n when there are none) */
  uint64_t zfirst;    /* bytes of those, compressed, after the result row */
  uint64_t nchunks;   /* whole /txlog chunks, each as its length (8 bytes) and its bytes */
  uint64_t zchunks;   /* bytes of them all */
  uint64_t chunk_len; /* records per chunk they were made for */
  uint64_t zlast;     /* bytes of the records after the whole chunks, compressed */
  uint64_t nsteps;    /* per-step summaries */
  uint64_t zsteps;    /* bytes of them, compressed, last */
  uint64_t parts_sum; /* with whole chunks: xxh64 over the parts (parts_checksum) */
  char key[CS_STORE_KEY_LEN];
} spool_head;

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
static size_t each_spool(const char *path, void (*fn)(const char *, void *), void *ctx) {
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

bool cs_store_spool_exists(const char *path) { return each_spool(path, NULL, NULL) > 0; }

static void remove_one(const char *file, void *ctx) {
  (void)ctx;
  unlink(file);
}

void cs_store_spool_remove(const char *path) { each_spool(path, remove_one, NULL); }

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

bool cs_store_buf_grow(cs_store_buf *b, size_t len) {
  if (len <= b->cap) return true;
  void *p = realloc(b->p, len);
  if (!p) return false;
  b->p = p;
  b->cap = len;
  return true;
}

/* Swaps the bytes of x and y selected by mask << shift in x and by mask in y. */
#define SWAP_BYTES(x, y, mask, shift)                                                           \
  do {                                                                                          \
    uint64_t t_ = (((x) >> (shift)) ^ (y)) & (mask);                                            \
    (y) ^= t_;                                                                                  \
    (x) ^= t_ << (shift);                                                                       \
  } while (0)

/* Transposes the 8 x 8 bytes of x: byte c of x[r] <-> byte r of x[c], in three rounds that swap
 * blocks of 4, 2 and 1 bytes across the diagonal. */
static inline void transpose8x8(uint64_t x[8]) {
  uint64_t a = x[0], b = x[1], c = x[2], d = x[3], e = x[4], f = x[5], g = x[6], h = x[7];
  const uint64_t m4 = 0x00000000FFFFFFFFull, m2 = 0x0000FFFF0000FFFFull,
                 m1 = 0x00FF00FF00FF00FFull;
  SWAP_BYTES(a, e, m4, 32);
  SWAP_BYTES(b, f, m4, 32);
  SWAP_BYTES(c, g, m4, 32);
  SWAP_BYTES(d, h, m4, 32);
  SWAP_BYTES(a, c, m2, 16);
  SWAP_BYTES(b, d, m2, 16);
  SWAP_BYTES(e, g, m2, 16);
  SWAP_BYTES(f, h, m2, 16);
  SWAP_BYTES(a, b, m1, 8);
  SWAP_BYTES(c, d, m1, 8);
  SWAP_BYTES(e, f, m1, 8);
  SWAP_BYTES(g, h, m1, 8);
  x[0] = a, x[1] = b, x[2] = c, x[3] = d, x[4] = e, x[5] = f, x[6] = g, x[7] = h;
}

/* byte k of record i -> out[k * n + i] (each of the `size` planes together, as HDF5's shuffle
 * filter lays them out), or back.  Blocks of 8 records x 8 bytes are transposed in registers
 * where bytes sit in a 64-bit word in memory order; the rest goes byte by byte.  The records go
 * in runs of TRANSPOSE_RUN that stay in the second-level cache, plane group by plane group, so
 * each plane is written (or read) in runs of that many bytes rather than 8 at a time, which
 * would touch `size` pages per 8 records. */
#define TRANSPOSE_RUN 2048
void cs_store_shuffle(const unsigned char *in, unsigned char *out, uint64_t n, size_t size,
                      bool back) {
  uint64_t done = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (size % 8 == 0) {
    done = n - n % 8;
    for (uint64_t run = 0; run < done; run += TRANSPOSE_RUN) {
      uint64_t end = done - run < TRANSPOSE_RUN ? done : run + TRANSPOSE_RUN;
      for (size_t k = 0; k < size; k += 8)
        for (uint64_t i = run; i < end; i += 8) {
          uint64_t x[8];
          for (int r = 0; r < 8; r++)
            memcpy(&x[r], back ? in + (k + r) * n + i : in + (i + r) * size + k, 8);
          transpose8x8(x);
          for (int r = 0; r < 8; r++)
            memcpy(back ? out + (i + r) * size + k : out + (k + r) * n + i, &x[r], 8);
        }
    }
  }
#endif
  for (uint64_t i = done; i < n; i++)
    for (size_t k = 0; k < size; k++) {
      if (back) out[i * size + k] = in[k * n + i];
      else out[k * n + i] = in[i * size + k];
    }
}

/* The spool's codec: LZ4 at its fastest level, in linked 4 MiB blocks without LZ4's own
 * checksums (the row's checksums protect the records).  On the shuffled planes of the C2
 * study's records it packs as tightly as raw deflate at level 1 (72 against 70 to 1) and
 * compresses 2.8 times as fast (2.0 against 0.71 GB/s); the merge compresses again, for the
 * file. */
static LZ4F_preferences_t spool_prefs(size_t n) {
  LZ4F_preferences_t p;
  memset(&p, 0, sizeof p);
  p.frameInfo.blockSizeID = LZ4F_max4MB;
  p.frameInfo.blockMode = LZ4F_blockLinked;
  p.frameInfo.contentSize = n;
  return p;
}

int cs_store_compress(const unsigned char *src, size_t n, cs_store_buf *z, size_t at,
                      size_t *len) {
  LZ4F_preferences_t prefs = spool_prefs(n);
  size_t cap = LZ4F_compressFrameBound(n, &prefs);
  if (!cs_store_buf_grow(z, at + cap)) return CS_ENOMEM;
  size_t got = LZ4F_compressFrame((unsigned char *)z->p + at, cap, src, n, &prefs);
  if (LZ4F_isError(got)) return CS_ENOMEM;
  *len = got;
  return CS_OK;
}

bool cs_store_decompress(struct LZ4F_dctx_s **ctx, const unsigned char *src, size_t n,
                         unsigned char *dst, size_t cap) {
  if (!*ctx && LZ4F_isError(LZ4F_createDecompressionContext(ctx, LZ4F_VERSION))) return false;
  LZ4F_dctx *dctx = *ctx;
  LZ4F_resetDecompressionContext(dctx); /* after a frame that ended early */
  /* dst is one block of memory: the decoder may refer back into it instead of keeping a copy */
  LZ4F_decompressOptions_t opts = {.stableDst = 1};
  size_t in = 0, out = 0, hint = 1;
  /* hint 0: the frame ended; a call that takes and gives nothing would never end */
  while (hint && in < n) {
    size_t in_part = n - in, out_part = cap - out;
    hint = LZ4F_decompress(dctx, dst + out, &out_part, src + in, &in_part, &opts);
    if (LZ4F_isError(hint) || (!in_part && !out_part)) break;
    in += in_part;
    out += out_part;
  }
  return hint == 0 && in == n && out == cap;
}

void cs_store_decompress_end(struct LZ4F_dctx_s *ctx) {
  if (ctx) LZ4F_freeDecompressionContext(ctx);
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

/* The records [0, n) of a job whose slice starts at /txlog[off], in chunks of len records (0: no
 * whole chunks): the whole chunks among them, [*c0, *c0 + *nchunks), and how many records come
 * before them (*nfirst; all n when there are none). */
static void whole_chunks(uint64_t off, uint64_t n, uint64_t len, uint64_t *c0, uint64_t *nchunks,
                         uint64_t *nfirst) {
  uint64_t first = len ? (off + len - 1) / len : 0, end = len ? (off + n) / len : 0;
  *c0 = first;
  *nchunks = end > first ? end - first : 0;
  *nfirst = *nchunks ? first * len - off : n;
}

/* The len records at rows as /txlog stores a chunk (shuffled and deflated, planez.c), into z
 * from byte `at` on, growing z: *zlen bytes.  Both the spool and the merge make them here. */
static int stored_chunk(cs_store_planez *pz, const cs_store_txn_row *rows, uint64_t len,
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
  int rc = stored_chunk(&st->spool_pz, rows, st->txlog_chunk_len, &st->spool_z, *at + sizeof len,
                        &zlen, "spooling a /txlog chunk", err);
  if (rc) return rc;
  len = zlen;
  memcpy((unsigned char *)st->spool_z.p + *at, &len, sizeof len);
  *at += sizeof len + len;
  return CS_OK;
}

int cs_store_spool_put(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                       const cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                       const cs_store_step_row *steps, uint64_t nsteps, cs_err *err) {
  spool_head head;
  memset(&head, 0, sizeof head);
  uint64_t c0;
  whole_chunks(res->txlog_offset, n, st->txlog_chunk_len, &c0, &head.nchunks, &head.nfirst);
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
  whole_chunks(lg->offset, lg->count, st->txlog_chunk_len, &c0, &lg->nchunks, &lg->nfirst);
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
  whole_chunks(offset, count, st->txlog_chunk_len, &c0, &nchunks, &nfirst);
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
    rc = cs_store_put_row(st, row, key, res, NULL, lg->count, steps, nsteps,
                          CS_PUT_SUMS_GIVEN | CS_PUT_RECORDS_WRITTEN | CS_PUT_SPOOLED, err);
  cs_store_log_abort(lg);
  return rc;
}

/* ---- merging ----------------------------------------------------------------------------- */

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

/* Whether the fill value of dcpl (of type `type`, the row struct's) is all zero bytes. */
static bool fill_is_zero(hid_t dcpl, hid_t type) {
  static const cs_store_txn_row zero;
  cs_store_txn_row fill;
  H5D_fill_value_t defined;
  return H5Pfill_value_defined(dcpl, &defined) >= 0 && defined == H5D_FILL_VALUE_USER_DEFINED &&
         H5Pget_fill_value(dcpl, type, &fill) >= 0 && !memcmp(&fill, &zero, sizeof fill);
}

bool cs_store_txlog_direct(cs_store *st, hid_t txlog, uint64_t *len, unsigned *level) {
  hid_t dcpl = H5Dget_create_plist(txlog), ftype = H5Dget_type(txlog);
  hsize_t dim = 0;
  unsigned flags, cd[8];
  size_t ncd = 8;
  bool direct = dcpl >= 0 && ftype >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
                H5Pget_chunk(dcpl, 1, &dim) == 1 && dim > 0 && H5Pget_nfilters(dcpl) == 2 &&
                H5Pget_filter2(dcpl, 0, &flags, &(size_t){0}, NULL, 0, NULL, NULL) ==
                    H5Z_FILTER_SHUFFLE &&
                H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE &&
                ncd == 1 && cd[0] <= 9 && H5Tequal(ftype, st->t_txn) > 0 &&
                H5Tget_size(ftype) == sizeof(cs_store_txn_row) && fill_is_zero(dcpl, st->t_txn);
  *len = direct ? dim : 0;
  *level = direct ? cd[0] : 0;
  if (dcpl >= 0) H5Pclose(dcpl);
  if (ftype >= 0) H5Tclose(ftype);
  return direct;
}

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
    rc = stored_chunk(&w->pz, recs, w->len, &w->z, 0, &zlen, "merging the log spools", err);
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
    whole_chunks(res->txlog_offset, n, w->len, &out->c0, &nch_expected, &out->nfirst);
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
    rc = cs_store_put_row(st, c.head.row, c.head.key, &c.res, recs, n, b->steps.p,
                          c.head.nsteps, CS_PUT_SUMS_GIVEN | (w->direct ? CS_PUT_RECORDS_WRITTEN : 0),
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
  each_spool(path, scan_one, &c);
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
  each_spool(path, scan_one, &c);
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
