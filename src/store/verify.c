/* Checksum verification of finished rows, for the cache lookup.  Row checksums first; with the
 * log, slices are then visited in /txlog offset order through a sliding window of whole
 * records, so the log is read sequentially in large blocks, once. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define WINDOW_RECORDS 65536u /* ~11 MiB */

typedef struct by_offset {
  uint64_t offset, count;
  size_t index; /* into rows[] */
} by_offset;

static int cmp_offset(const void *a, const void *b) {
  const by_offset *x = a, *y = b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

int cs_store_verify_rows(cs_store *st, const uint64_t *rows, size_t n,
                         const cs_store_index_row *index, const cs_store_result_row *res,
                         bool with_log, uint8_t *ok, cs_err *err) {
  by_offset *order = malloc((n ? n : 1) * sizeof *order);
  if (!order) return cs_err_set(err, CS_ENOMEM, "verifying %zu rows: out of memory", n);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    const cs_store_result_row *r = &res[rows[i]];
    ok[i] = 0;
    bool finished = r->status == CS_STORE_DONE || r->status == CS_STORE_FAILED;
    bool in_range = r->txlog_offset <= st->txlog_len &&
                    r->txlog_count <= st->txlog_len - r->txlog_offset;
    if (!finished || !in_range || cs_store_row_checksum(rows[i], index[rows[i]].key, r) != r->checksum)
      continue;
    if (with_log) order[m++] = (by_offset){r->txlog_offset, r->txlog_count, i};
    else ok[i] = 1;
  }
  qsort(order, m, sizeof *order, cmp_offset);
  cs_store_txn_row *win = NULL;
  uint64_t win_start = 0, win_len = 0, win_cap = 0;
  int rc = CS_OK;
  for (size_t k = 0; k < m && !rc; k++) {
    uint64_t off = order[k].offset, cnt = order[k].count;
    if (cnt && (off < win_start || off + cnt > win_start + win_len)) {
      uint64_t want = cnt > WINDOW_RECORDS ? cnt : WINDOW_RECORDS;
      if (want > st->txlog_len - off) want = st->txlog_len - off;
      if (want > win_cap) {
        cs_store_txn_row *grown = realloc(win, want * sizeof *win);
        if (!grown) {
          rc = cs_err_set(err, CS_ENOMEM, "verifying: %llu records: out of memory",
                          (unsigned long long)want);
          break;
        }
        win = grown;
        win_cap = want;
      }
      if ((rc = cs_store_read_txlog(st, off, want, win, err))) break;
      win_start = off;
      win_len = want;
    }
    uint64_t row = rows[order[k].index];
    const cs_store_txn_row *slice = cnt ? win + (off - win_start) : NULL;
    ok[order[k].index] = cs_store_txlog_checksum(row, slice, cnt) == res[row].txlog_checksum;
  }
  free(win);
  free(order);
  return rc;
}
