/* The cache lookup and the layout of a sweep in the file (rank 0, before any job runs).
 *
 * Every job of the sweep gets a row: the row already holding its key, or a new one appended.
 * An existing row is reused as a result only when its checksum holds and it is done holding at
 * least the log detail asked (none < per-step summaries < every record) or failed; otherwise
 * the job runs again into the same row.  Every job to run gets its /txlog and /steplog slices
 * now, so the file reaches its final size in one structural step and the ranks only ever write
 * raw bytes into places fixed here. */
#include <stdlib.h>
#include <string.h>

#include "commsweep/store.h"
#include "commsweep/sweep.h"
#include "keymap.h"
#include "sweep_int.h"

/* Costliest group first, a group's items together (one rank then runs them all, so the work
 * they share is done once), costliest first inside it. */
static int cmp_cost(const void *a, const void *b) {
  const cs_sweep_item *x = a, *y = b;
  if (x->group_cost != y->group_cost) return x->group_cost > y->group_cost ? -1 : 1;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

static int cmp_group(const void *a, const void *b) {
  const cs_sweep_item *x = a, *y = b;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

size_t cs_sweep_group_end(const cs_sweep_item *items, size_t n, size_t i) {
  size_t end = i + 1;
  while (items[i].group && end < n && items[end].group == items[i].group) end++;
  return end;
}

/* Each item's group_cost: the cost of all items of its group (group 0: its own). */
static void sum_groups(cs_sweep_item *items, size_t n) {
  qsort(items, n, sizeof *items, cmp_group);
  for (size_t i = 0, end; i < n; i = end) {
    end = cs_sweep_group_end(items, n, i);
    double sum = 0;
    for (size_t k = i; k < end; k++) sum += items[k].cost;
    for (size_t k = i; k < end; k++) items[k].group_cost = sum;
  }
}

static int alloc_plan(cs_sweep_plan *p, size_t n) {
  size_t m = n ? n : 1;
  p->job_rows = calloc(m, sizeof *p->job_rows);
  p->action = calloc(m, sizeof *p->action);
  p->reserved_offset = calloc(m, sizeof *p->reserved_offset);
  p->reserved_count = calloc(m, sizeof *p->reserved_count);
  p->step_reserved_offset = calloc(m, sizeof *p->step_reserved_offset);
  p->step_reserved_count = calloc(m, sizeof *p->step_reserved_count);
  p->items = calloc(m, sizeof *p->items);
  return p->job_rows && p->action && p->reserved_offset && p->reserved_count &&
                 p->step_reserved_offset && p->step_reserved_count && p->items
             ? 0
             : -1;
}

void cs_sweep_plan_free(cs_sweep_plan *p) {
  if (!p) return;
  free(p->job_rows);
  free(p->action);
  free(p->reserved_offset);
  free(p->reserved_count);
  free(p->step_reserved_offset);
  free(p->step_reserved_count);
  free(p->items);
  memset(p, 0, sizeof *p);
}

/* A job's slice of a log (/txlog or /steplog) of `len` entries before this sweep: the row's
 * old reservation when it has the size needed and lies inside the log, else new space at the
 * log's end (*end grows).  Returns true when an existing row gets a new slice (a reslice). */
static bool reserve(bool fresh, uint64_t old_offset, uint64_t old_count, uint64_t needed,
                    uint64_t len, uint64_t *end, uint64_t *offset) {
  if (!fresh && old_count == needed && old_offset + needed <= len) {
    *offset = old_offset;
    return false;
  }
  *offset = needed ? *end : 0;
  *end += needed;
  return !fresh;
}

cs_store_detail cs_sweep_detail(bool results_only, bool steps_only) {
  return results_only ? CS_STORE_LOG_NONE : steps_only ? CS_STORE_LOG_STEPS : CS_STORE_LOG_FULL;
}

/* The done row holds at least the detail asked, complete: every record and/or every step. */
static bool holds_detail(const cs_sweep_job *j, const cs_store_result_row *r,
                         cs_store_detail want) {
  if (r->txlog_detail < want) return false;
  if (want >= CS_STORE_LOG_STEPS && r->steplog_count != j->num_steps) return false;
  return want < CS_STORE_LOG_FULL || r->txlog_count == j->num_txns;
}

/* Decides reuse or rerun for job j whose key is at existing row `row` (verified: ok). */
static void judge_existing(const cs_sweep_job *j, const cs_store_result_row *r, bool ok,
                           const cs_sweep_plan_options *o, cs_sweep_plan *p, size_t idx) {
  cs_store_detail want = cs_sweep_detail(o->results_only, o->steps_only);
  bool finished = r->status == CS_STORE_DONE || r->status == CS_STORE_FAILED;
  if (ok && r->status == CS_STORE_FAILED && o->retry_failed) {
    p->retried++;
    p->action[idx] = CS_PLAN_CLEAR;
  } else if (ok && r->status == CS_STORE_FAILED) {
    p->cached_failed++;
    p->action[idx] = CS_PLAN_HIT;
  } else if (ok && (j->load_code || holds_detail(j, r, want))) {
    p->cached_done++;
    p->action[idx] = CS_PLAN_HIT;
  } else if (ok) {
    p->relog++;
  } else if (finished || r->status != CS_STORE_PENDING) {
    p->corrupt++;
    p->action[idx] = CS_PLAN_CLEAR;
  } else {
    p->pending++;
  }
}

int cs_sweep_plan_make(const cs_sweep *sw, cs_store *st, const cs_sweep_plan_options *o,
                       cs_sweep_plan *p, cs_err *err) {
  bool verify_log = o->verify_log;
  cs_store_detail detail = cs_sweep_detail(o->results_only, o->steps_only);
  memset(p, 0, sizeof *p);
  size_t n = sw->num_jobs;
  uint64_t file_rows = st ? cs_store_num_rows(st) : 0;
  p->jobs = n;
  p->file_rows = file_rows;
  p->txlog_before = p->txlog_after = st ? cs_store_txlog_len(st) : 0;
  p->steplog_before = p->steplog_after = st ? cs_store_steplog_len(st) : 0;
  cs_store_index_row *index = calloc(file_rows + n + 1, sizeof *index);
  cs_store_result_row *res = calloc(file_rows + 1, sizeof *res);
  uint64_t *check_rows = calloc(n + 1, sizeof *check_rows);
  size_t *check_job = calloc(n + 1, sizeof *check_job);
  uint8_t *ok = calloc(n + 1, 1), *claimed = calloc(file_rows + 1, 1);
  cs_keymap map = {0};
  int rc = CS_OK;
  if (!index || !res || !check_rows || !check_job || !ok || !claimed || alloc_plan(p, n) ||
      cs_keymap_init(&map, file_rows + n, index)) {
    rc = cs_err_set(err, CS_ENOMEM, "planning %zu jobs over %llu rows: out of memory", n,
                    (unsigned long long)file_rows);
    goto out;
  }
  if (file_rows && (cs_store_read_index(st, 0, file_rows, index, err) ||
                    cs_store_read_results(st, 0, file_rows, res, err))) {
    rc = err->code;
    goto out;
  }
  for (uint64_t r = 0; r < file_rows; r++) cs_keymap_add(&map, r);
  /* a spooled row as the merge will write it: verified there, so not here */
  for (size_t s = 0; s < o->num_spooled; s++) {
    const cs_store_spooled *sp = &o->spooled[s];
    if (sp->row >= file_rows) continue;
    cs_store_result_row *r = &res[sp->row];
    r->status = sp->status;
    r->txlog_detail = sp->txlog_detail;
    r->txlog_count = sp->txlog_count;
    r->steplog_count = sp->steplog_count;
    claimed[sp->row] = 2;
  }

  /* pass 1: rows */
  size_t nchk = 0;
  for (size_t i = 0; i < n; i++) {
    const cs_sweep_job *j = &sw->jobs[i];
    uint64_t row = cs_keymap_find(&map, j->key);
    if (row == UINT64_MAX) {
      row = file_rows + p->new_rows++;
      memcpy(index[row].key, j->key, CS_STORE_KEY_LEN);
      cs_keymap_add(&map, row);
      p->action[i] = CS_PLAN_NEW_ROW;
    } else if (row >= file_rows || (claimed[row] & 1)) {
      p->action[i] = CS_PLAN_DUP;
      p->duplicates++;
    } else {
      claimed[row] |= 1;
      check_rows[nchk] = row;
      check_job[nchk++] = i;
    }
    p->job_rows[i] = row;
  }
  /* pass 2: checksums of the existing rows the sweep wants */
  if (nchk && (rc = cs_store_verify_rows(st, check_rows, nchk, index, res, verify_log, ok, err))) goto out;
  for (size_t k = 0; k < nchk; k++) {
    if (claimed[check_rows[k]] & 2) {
      ok[k] = 1;
      p->spooled++;
    }
  }
  for (size_t k = 0; k < nchk; k++)
    judge_existing(&sw->jobs[check_job[k]], &res[check_rows[k]], ok[k], o, p,
                   check_job[k]);

  /* pass 3: slices and items for everything that runs */
  for (size_t i = 0; i < n; i++) {
    const cs_sweep_job *j = &sw->jobs[i];
    uint64_t row = p->job_rows[i];
    if (p->action[i] & (CS_PLAN_HIT | CS_PLAN_DUP)) continue;
    uint64_t needed = j->load_code || detail < CS_STORE_LOG_FULL ? 0 : j->num_txns;
    uint64_t steps = j->load_code || detail < CS_STORE_LOG_STEPS ? 0 : j->num_steps;
    bool fresh = p->action[i] & CS_PLAN_NEW_ROW;
    bool moved = reserve(fresh, index[row].txlog_reserved_offset,
                         index[row].txlog_reserved_count, needed, p->txlog_before,
                         &p->txlog_after, &p->reserved_offset[i]);
    moved |= reserve(fresh, index[row].steplog_reserved_offset,
                     index[row].steplog_reserved_count, steps, p->steplog_before,
                     &p->steplog_after, &p->step_reserved_offset[i]);
    if (moved) p->action[i] |= CS_PLAN_RESLICE;
    p->reserved_count[i] = needed;
    p->step_reserved_count[i] = steps;
    if (j->load_code) {
      p->action[i] |= CS_PLAN_FAIL_NOW;
      p->load_failed++;
      continue;
    }
    p->action[i] |= CS_PLAN_RUN;
    cs_sweep_item *it = &p->items[p->num_items++];
    it->job = i;
    it->row = row;
    it->txlog_offset = p->reserved_offset[i];
    it->txlog_count = needed;
    it->steplog_offset = p->step_reserved_offset[i];
    it->steplog_count = steps;
    it->detail = (uint8_t)detail;
    it->cost = j->cost;
    p->cost += j->cost;
    it->group = j->group;
    memcpy(it->key, j->key, CS_STORE_KEY_LEN);
    p->txlog_to_write += needed;
    p->steplog_to_write += steps;
  }
  sum_groups(p->items, p->num_items);
  qsort(p->items, p->num_items, sizeof *p->items, cmp_cost);
out:
  cs_keymap_free(&map);
  free(index);
  free(res);
  free(check_rows);
  free(check_job);
  free(ok);
  free(claimed);
  if (rc) cs_sweep_plan_free(p);
  return rc;
}
