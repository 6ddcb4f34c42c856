/* Checksum verification of finished rows, for the cache lookup.  Row checksums first; with the
 * log, the slices of each log (/txlog, /steplog) are then visited in offset order through a
 * sliding window of whole rows, so each log is read sequentially in large blocks, once. */
#include <stdlib.h>
#include <string.h>

#include "store_file.h"

#define WINDOW_BYTES (11u << 20)

typedef struct by_offset {
  uint64_t offset, count;
  size_t index; /* into rows[] */
} by_offset;

static int cmp_offset(const void *a, const void *b) {
  const by_offset *x = a, *y = b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* One of the two logs, as the verification sees it. */
typedef struct log_kind {
  size_t size; /* bytes of one row */
  uint64_t len;
  int (*read)(cs_store *st, uint64_t offset, uint64_t n, void *out, cs_err *err);
  uint64_t (*hash)(uint64_t row, const void *slice, uint64_t n);
} log_kind;

static int read_txlog(cs_store *st, uint64_t offset, uint64_t n, void *out, cs_err *err) {
  return cs_store_read_txlog(st, offset, n, out, err);
}
static uint64_t hash_txlog(uint64_t row, const void *slice, uint64_t n) {
  return cs_store_txlog_checksum(row, slice, n);
}
static int read_steplog(cs_store *st, uint64_t offset, uint64_t n, void *out, cs_err *err) {
  return cs_store_read_steplog(st, offset, n, out, err);
}
static uint64_t hash_steplog(uint64_t row, const void *slice, uint64_t n) {
  return cs_store_steplog_checksum(row, slice, n);
}

static bool in_log(uint64_t offset, uint64_t count, uint64_t len) {
  return offset <= len && count <= len - offset;
}

/* Hashes the m slices of order[] (sorted by offset) in log k: ok[index] stays 1 only when the
 * slice hashes to want[index]. */
static int hash_slices(cs_store *st, const log_kind *k, const by_offset *order, size_t m,
                       const uint64_t *rows, const uint64_t *want, uint8_t *ok, cs_err *err) {
  unsigned char *win = NULL;
  uint64_t win_start = 0, win_len = 0, win_cap = 0, window = WINDOW_BYTES / k->size;
  int rc = CS_OK;
  for (size_t i = 0; i < m && !rc; i++) {
    uint64_t off = order[i].offset, cnt = order[i].count;
    if (cnt && (off < win_start || off + cnt > win_start + win_len)) {
      uint64_t len = cnt > window ? cnt : window;
      if (len > k->len - off) len = k->len - off;
      if (len > win_cap) {
        unsigned char *grown = realloc(win, len * k->size);
        if (!grown) {
          rc = cs_err_set(err, CS_ENOMEM, "verifying: %llu log rows: out of memory",
                          (unsigned long long)len);
          break;
        }
        win = grown;
        win_cap = len;
      }
      if ((rc = k->read(st, off, len, win, err))) break;
      win_start = off;
      win_len = len;
    }
    size_t at = order[i].index;
    const void *slice = cnt ? win + (off - win_start) * k->size : NULL;
    if (k->hash(rows[at], slice, cnt) != want[at]) ok[at] = 0;
  }
  free(win);
  return rc;
}

int cs_store_verify_rows(cs_store *st, const uint64_t *rows, size_t n,
                         const cs_store_index_row *index, const cs_store_result_row *res,
                         bool with_log, uint8_t *ok, cs_err *err) {
  size_t cap = n ? n : 1;
  by_offset *tx = malloc(cap * sizeof *tx), *sp = malloc(cap * sizeof *sp);
  uint64_t *tx_want = malloc(cap * sizeof *tx_want), *sp_want = malloc(cap * sizeof *sp_want);
  int rc = CS_OK;
  if (!tx || !sp || !tx_want || !sp_want)
    rc = cs_err_set(err, CS_ENOMEM, "verifying %zu rows: out of memory", n);
  size_t mt = 0, ms = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const cs_store_result_row *r = &res[rows[i]];
    ok[i] = 0;
    bool finished = r->status == CS_STORE_DONE || r->status == CS_STORE_FAILED;
    bool in_range = in_log(r->txlog_offset, r->txlog_count, st->txlog_len) &&
                    in_log(r->steplog_offset, r->steplog_count, st->steplog_len);
    if (!finished || !in_range || cs_store_row_checksum(rows[i], index[rows[i]].key, r) != r->checksum)
      continue;
    ok[i] = 1;
    tx_want[i] = r->txlog_checksum;
    sp_want[i] = r->steplog_checksum;
    if (with_log) {
      tx[mt++] = (by_offset){r->txlog_offset, r->txlog_count, i};
      sp[ms++] = (by_offset){r->steplog_offset, r->steplog_count, i};
    }
  }
  const log_kind txlog = {sizeof(cs_store_txn_row), st->txlog_len, read_txlog, hash_txlog};
  const log_kind steplog = {sizeof(cs_store_step_row), st->steplog_len, read_steplog,
                            hash_steplog};
  if (!rc && with_log) {
    qsort(tx, mt, sizeof *tx, cmp_offset);
    qsort(sp, ms, sizeof *sp, cmp_offset);
    rc = hash_slices(st, &txlog, tx, mt, rows, tx_want, ok, err);
    if (!rc) rc = hash_slices(st, &steplog, sp, ms, rows, sp_want, ok, err);
  }
  if (rc) memset(ok, 0, n);
  free(tx);
  free(sp);
  free(tx_want);
  free(sp_want);
  return rc;
}

/* Reads a slice of log k and hashes it; false when it cannot be read or differs. */
static bool slice_verifies(cs_store *st, const log_kind *k, uint64_t row, uint64_t offset,
                           uint64_t count, uint64_t want) {
  if (!in_log(offset, count, k->len)) return false;
  if (!count) return want == 0;
  void *slice = malloc(count * k->size);
  cs_err err;
  bool ok = slice && !k->read(st, offset, count, slice, &err) && k->hash(row, slice, count) == want;
  free(slice);
  return ok;
}

bool cs_store_row_verifies(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                           const cs_store_result_row *r) {
  if (r->status != CS_STORE_DONE && r->status != CS_STORE_FAILED) return false;
  const log_kind txlog = {sizeof(cs_store_txn_row), st->txlog_len, read_txlog, hash_txlog};
  const log_kind steplog = {sizeof(cs_store_step_row), st->steplog_len, read_steplog,
                            hash_steplog};
  return cs_store_row_checksum(row, key, r) == r->checksum &&
         slice_verifies(st, &txlog, row, r->txlog_offset, r->txlog_count, r->txlog_checksum) &&
         slice_verifies(st, &steplog, row, r->steplog_offset, r->steplog_count,
                        r->steplog_checksum);
}
