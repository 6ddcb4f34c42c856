/* The store's third layer, the log spool (spool.c), as far as the merge above it (merge.c) reads
 * it: the entry's head, the spool files of a store, and the whole /txlog chunks an entry holds
 * (made, as /txlog stores them, by the same function for both).  Above store_file.h. */
#ifndef CS_STORE_SPOOL_H
#define CS_STORE_SPOOL_H

#include "store_file.h"

#define SPOOL_MAGIC "CSSPOOL5"

/* An entry's head; the finished result row follows it, then its parts (spool.c has the layout). */
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

/* Calls fn(full path, ctx) for each spool file of path ("<path>.spool.<rank>"); returns how many
 * there are.  fn may be NULL. */
size_t cs_store_each_spool(const char *path, void (*fn)(const char *, void *), void *ctx);

/* The records [0, n) of a job whose slice starts at /txlog[off], in chunks of len records (0: no
 * whole chunks): the whole chunks among them, [*c0, *c0 + *nchunks), and how many records come
 * before them (*nfirst; all n when there are none). */
static inline void cs_store_whole_chunks(uint64_t off, uint64_t n, uint64_t len, uint64_t *c0,
                                         uint64_t *nchunks, uint64_t *nfirst) {
  uint64_t first = len ? (off + len - 1) / len : 0, end = len ? (off + n) / len : 0;
  *c0 = first;
  *nchunks = end > first ? end - first : 0;
  *nfirst = *nchunks ? first * len - off : n;
}

/* The len records at rows as /txlog stores a chunk (shuffled and deflated, planez.c), into z
 * from byte `at` on, growing z: *zlen bytes.  Both the spool and the merge make them here. */
int cs_store_stored_chunk(cs_store_planez *pz, const cs_store_txn_row *rows, uint64_t len,
                          cs_store_buf *z, size_t at, size_t *zlen, const char *what,
                          cs_err *err);

#endif
