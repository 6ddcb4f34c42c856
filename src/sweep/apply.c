/* The structural step of a sweep (rank 0, serial store): grow the datasets to their final
 * size, write the /jobs rows of new jobs, re-reserve slices, clear corrupt rows, write the
 * failed rows of jobs that could not be loaded, and flush.  After this nothing but raw row
 * bytes changes until the next sweep. */
#include <stdlib.h>
#include <string.h>

#include "commsweep/engine.h"
#include "commsweep/store.h"
#include "commsweep/sweep.h"
#include "run_int.h"

#define JOB_BLOCK 256

int cs_sweep_job_row(const cs_sweep *sw, const cs_sweep_job *j, uint64_t reserved_offset,
                     uint64_t reserved_count, cs_store_job_row *row) {
  memset(row, 0, sizeof *row);
  cs_job job;
  cs_err err;
  if (!j->load_code && !cs_sweep_job_get(j, &job, &err)) {
    cs_store_job_from(&job, row);
    char network[CS_STORE_NETWORK_LEN * 2];
    cs_engine_network(&job, network, sizeof network);
    cs_store_set_text(row->network, sizeof row->network, network);
    row->expected_transactions = j->num_txns;
    row->num_steps = (int32_t)j->num_steps;
  }
  memcpy(row->key, j->key, CS_STORE_KEY_LEN);
  cs_store_set_text(row->sweep, sizeof row->sweep, sw->name);
  char *json = cs_sweep_job_json(sw, j);
  if (!json) return CS_ENOMEM;
  cs_store_set_text(row->job_json, sizeof row->job_json, json);
  free(json);
  row->txlog_reserved_offset = reserved_offset;
  row->txlog_reserved_count = reserved_count;
  return CS_OK;
}

static int write_new_rows(const cs_sweep *sw, cs_store *st, const cs_sweep_plan *p, cs_err *err) {
  cs_store_job_row *block = malloc(JOB_BLOCK * sizeof *block);
  if (!block) return cs_err_set(err, CS_ENOMEM, "writing /jobs: out of memory");
  size_t fill = 0;
  uint64_t first = p->file_rows;
  int rc = CS_OK;
  for (size_t i = 0; i < sw->num_jobs && !rc; i++) {
    if (!(p->action[i] & CS_PLAN_NEW_ROW)) continue;
    if (cs_sweep_job_row(sw, &sw->jobs[i], p->reserved_offset[i], p->reserved_count[i],
                         &block[fill])) {
      rc = cs_err_set(err, CS_ENOMEM, "writing /jobs: out of memory");
      break;
    }
    block[fill].steplog_reserved_offset = p->step_reserved_offset[i];
    block[fill++].steplog_reserved_count = p->step_reserved_count[i];
    if (fill == JOB_BLOCK) {
      rc = cs_store_write_jobs(st, first, fill, block, err);
      first += fill;
      fill = 0;
    }
  }
  if (!rc && fill) rc = cs_store_write_jobs(st, first, fill, block, err);
  free(block);
  return rc;
}

static int reslice(cs_store *st, const cs_sweep_plan *p, size_t i, cs_err *err) {
  static const char *const no_json[] = {"job_json", NULL};
  cs_store_job_row row;
  if (cs_store_read_rows_without(st, true, no_json, p->job_rows[i], 1, &row, err)) return err->code;
  row.txlog_reserved_offset = p->reserved_offset[i];
  row.txlog_reserved_count = p->reserved_count[i];
  row.steplog_reserved_offset = p->step_reserved_offset[i];
  row.steplog_reserved_count = p->step_reserved_count[i];
  return cs_store_write_jobs_without_json(st, p->job_rows[i], 1, &row, err);
}

static int fail_now(cs_store *st, const cs_sweep_job *j, uint64_t row, cs_err *err) {
  cs_store_result_row res;
  memset(&res, 0, sizeof res);
  res.status = CS_STORE_FAILED;
  cs_store_set_text(res.error, sizeof res.error, j->error ? j->error : "could not be loaded");
  char key[CS_STORE_KEY_LEN];
  memcpy(key, j->key, CS_STORE_KEY_LEN);
  return cs_store_put_result(st, row, key, &res, NULL, 0, err);
}

/* Row writes into existing space only: clear corrupt rows, write the failed rows of jobs that
 * could not be loaded.  Raw bytes, no metadata: safe in place. */
static int apply_rows(const cs_sweep *sw, cs_store *st, const cs_sweep_plan *p, cs_err *err) {
  for (size_t i = 0; i < sw->num_jobs; i++) {
    uint8_t a = p->action[i];
    if ((a & CS_PLAN_CLEAR) && cs_store_clear_result(st, p->job_rows[i], err))
      return cs_err_prefix(err, "structural step");
    if ((a & CS_PLAN_FAIL_NOW) && fail_now(st, &sw->jobs[i], p->job_rows[i], err))
      return cs_err_prefix(err, "structural step");
  }
  return CS_OK;
}

int cs_sweep_plan_changes(const cs_sweep *sw, const cs_sweep_plan *p) {
  int changes = 0;
  if (p->new_rows || p->txlog_after > p->txlog_before || p->steplog_after > p->steplog_before)
    changes |= CS_PLAN_CHANGES_LAYOUT;
  for (size_t i = 0; i < sw->num_jobs; i++) {
    if (p->action[i] & CS_PLAN_RESLICE) changes |= CS_PLAN_CHANGES_LAYOUT;
    if (p->action[i] & (CS_PLAN_CLEAR | CS_PLAN_FAIL_NOW)) changes |= CS_PLAN_CHANGES_ROWS;
  }
  return changes;
}

int cs_sweep_plan_apply_rows(const cs_sweep *sw, cs_store *st, const cs_sweep_plan *p,
                             cs_err *err) {
  if (apply_rows(sw, st, p, err) || cs_store_flush(st, err)) return err->code;
  return CS_OK;
}

int cs_sweep_plan_apply(const cs_sweep *sw, cs_store *st, const cs_sweep_plan *p, cs_err *err) {
  if (cs_store_grow(st, p->file_rows + p->new_rows, p->txlog_after, err) ||
      cs_store_grow_steplog(st, p->steplog_after, err) || write_new_rows(sw, st, p, err))
    return cs_err_prefix(err, "structural step");
  for (size_t i = 0; i < sw->num_jobs; i++)
    if ((p->action[i] & CS_PLAN_RESLICE) && reslice(st, p, i, err))
      return cs_err_prefix(err, "structural step");
  if (apply_rows(sw, st, p, err)) return err->code;
  if (cs_store_note_sweep(st, sw->name, err) || cs_store_flush(st, err))
    return cs_err_prefix(err, "structural step");
  return CS_OK;
}
