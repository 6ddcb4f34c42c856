/* The HDF5 store without MPI: schema, rows round-trip, checksums, growth, the writer lock. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include <zlib.h>

#include "commsweep/engine.h"
#include "commsweep/store.h"
#include "store/store_format.h"
#include "test_support.h"

static char dir[256];
static char path[512];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/cs_check_store_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/s.h5", dir);
}

static void teardown(void) {
  char lock[600];
  snprintf(lock, sizeof lock, "%s.lock", path);
  unlink(path);
  unlink(lock);
  rmdir(dir);
}

static void fake_key(uint64_t i, char key[CS_STORE_KEY_LEN]) {
  char hex[CS_STORE_KEY_LEN + 1];
  snprintf(hex, sizeof hex, "%064llx", (unsigned long long)(i * 2654435761u + 7));
  memcpy(key, hex, CS_STORE_KEY_LEN);
}

static void fake_txns(uint64_t job, uint64_t n, cs_store_txn_row *t) {
  memset(t, 0, n * sizeof *t);
  for (uint64_t i = 0; i < n; i++) {
    cs_txn_record r;
    memset(&r, 0, sizeof r);
    r.request_id = i;
    r.step = (uint32_t)(i / 4);
    r.src = (int32_t)(i % 8);
    r.dst = (int32_t)((i + 1) % 8);
    r.d2d_src_node = -1;
    r.burst_length = 4;
    r.req_inject_tick = i;
    r.rsp_complete_tick = i * 10 + job;
    r.rn_wdb_block = (uint32_t)job;
    t[i].job = job;
    t[i].rec = r;
  }
}

static void fake_result(double t, cs_store_result_row *row) {
  cs_result r;
  memset(&r, 0, sizeof r);
  memset(row, 0, sizeof *row);
  r.total_time_us = t;
  r.bus_bw_gb_per_s = 1.0 / t;
  r.total_comm_bytes = 4096;
  r.algorithm_steps = 6;
  snprintf(r.engine, sizeof r.engine, "math");
  r.wall_time_s = 0.5;
  row->result = r;
  row->status = CS_STORE_DONE;
}

/* A file with `rows` rows; row i done with i+1 records when i is even, pending when odd. */
static void make_file(uint64_t rows) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  uint64_t txlog = 0;
  for (uint64_t i = 0; i < rows; i++) txlog += i + 1;
  ck_assert_int_eq(cs_store_grow(st, rows, txlog, &err), 0);
  cs_store_job_row *jobs = calloc(rows, sizeof *jobs);
  uint64_t off = 0;
  for (uint64_t i = 0; i < rows; i++) {
    fake_key(i, jobs[i].key);
    cs_store_set_text(jobs[i].sweep, sizeof jobs[i].sweep, "unit");
    jobs[i].txlog_reserved_offset = off;
    jobs[i].txlog_reserved_count = i + 1;
    off += i + 1;
  }
  ck_assert_int_eq(cs_store_write_jobs(st, 0, rows, jobs, &err), 0);
  for (uint64_t i = 0; i < rows; i += 2) {
    cs_store_txn_row t[64];
    fake_txns(i, i + 1, t);
    cs_store_result_row r;
    fake_result(1.0 + (double)i, &r);
    r.txlog_offset = jobs[i].txlog_reserved_offset;
    ck_assert_int_eq(cs_store_put_result(st, i, jobs[i].key, &r, t, i + 1, &err), 0);
  }
  free(jobs);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}

START_TEST(xxh64_matches_reference_vectors) {
  ck_assert_uint_eq(cs_store_xxh64("", 0, 0), 0xEF46DB3751D8E999ULL);
  ck_assert_uint_eq(cs_store_xxh64("a", 1, 0), 0xD24EC4F1A98C6E5BULL);
  ck_assert_uint_eq(cs_store_xxh64("abc", 3, 0), 0x44BC2CF5AD770999ULL);
  const char *fox = "The quick brown fox jumps over the lazy dog";
  ck_assert_uint_eq(cs_store_xxh64(fox, strlen(fox), 0), 0x0B242D361FDA71BCULL);
}
END_TEST

/* XXH64 over pieces equals it over the whole, wherever the cuts fall (inside a stripe, at its
 * edge, empty pieces), for lengths around the 32-byte stripe. */
START_TEST(xxh64_in_pieces_matches_the_whole) {
  unsigned char buf[300];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 37 + 11);
  const size_t lens[] = {0, 1, 31, 32, 33, 63, 64, 65, 299};
  for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
    for (size_t cut = 1; cut <= 40; cut += 13) {
      cs_store_xxh64_state x;
      cs_store_xxh64_begin(&x, 77);
      for (size_t at = 0; at < lens[l]; at += cut) {
        cs_store_xxh64_update(&x, buf + at, at + cut <= lens[l] ? cut : lens[l] - at);
        cs_store_xxh64_update(&x, buf, 0);
      }
      ck_assert_uint_eq(cs_store_xxh64_end(&x), cs_store_xxh64(buf, lens[l], 77));
    }
}
END_TEST

/* A row's log streamed into a serial store in pieces, started over once (a job that runs
 * again), reads back as the same records with the checksum of the whole slice. */
START_TEST(a_streamed_log_reads_back_as_its_records) {
  make_file(4); /* row 3 is pending, its slice 6..9 (4 records) */
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  cs_store_txn_row want[4];
  fake_txns(3, 4, want);
  cs_txn_record recs[4];
  for (int i = 0; i < 4; i++) recs[i] = want[i].rec;
  cs_store_log *lg;
  ck_assert_int_eq(cs_store_log_begin(st, 3, 6, 4, &lg, &err), 0);
  ck_assert_int_eq(cs_store_log_append(lg, recs, 3, &err), 0);
  ck_assert_int_eq(cs_store_log_restart(lg, &err), 0);
  recs[0].rsp_complete_tick += 1000; /* the first run's records are dropped */
  ck_assert_int_eq(cs_store_log_append(lg, recs, 1, &err), 0);
  ck_assert_int_eq(cs_store_log_restart(lg, &err), 0);
  recs[0].rsp_complete_tick -= 1000;
  ck_assert_int_eq(cs_store_log_append(lg, recs, 1, &err), 0);
  ck_assert_int_eq(cs_store_log_append(lg, recs + 1, 3, &err), 0);
  ck_assert_int_ne(cs_store_log_append(lg, recs, 1, &err), 0); /* past the slice */
  cs_store_result_row r;
  fake_result(7.0, &r);
  r.txlog_offset = 6;
  char key[CS_STORE_KEY_LEN];
  fake_key(3, key);
  ck_assert_msg(cs_store_put_result_log(st, 3, key, &r, lg, NULL, 0, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  cs_store_result_row res;
  ck_assert_int_eq(cs_store_read_results(st, 3, 1, &res, &err), 0);
  cs_store_txn_row got[4];
  ck_assert_int_eq(cs_store_read_txlog(st, 6, 4, got, &err), 0);
  ck_assert_int_eq(memcmp(got, want, sizeof want), 0);
  ck_assert_uint_eq(res.txlog_count, 4);
  ck_assert_uint_eq(res.txlog_checksum, cs_store_txlog_checksum(3, want, 4));
  ck_assert(cs_store_row_verifies(st, 3, key, &res));
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}
END_TEST

START_TEST(rows_round_trip_and_checksums_verify) {
  make_file(6);
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  ck_assert_uint_eq(cs_store_num_rows(st), 6);
  ck_assert_uint_eq(cs_store_txlog_len(st), 21);
  cs_store_job_row jobs[6];
  cs_store_result_row res[6];
  ck_assert_int_eq(cs_store_read_jobs(st, 0, 6, jobs, &err), 0);
  ck_assert_int_eq(cs_store_read_results(st, 0, 6, res, &err), 0);
  for (uint64_t i = 0; i < 6; i++) {
    char key[CS_STORE_KEY_LEN];
    fake_key(i, key);
    ck_assert(memcmp(key, jobs[i].key, CS_STORE_KEY_LEN) == 0);
    if (i % 2) {
      ck_assert_int_eq(res[i].status, CS_STORE_PENDING);
      ck_assert_uint_eq(res[i].checksum, 0);
      continue;
    }
    ck_assert_int_eq(res[i].status, CS_STORE_DONE);
    ck_assert_uint_eq(res[i].txlog_count, i + 1);
    ck_assert_double_eq(res[i].result.total_time_us, 1.0 + (double)i);
    cs_store_txn_row t[64];
    ck_assert_int_eq(cs_store_read_txlog(st, res[i].txlog_offset, res[i].txlog_count, t, &err), 0);
    ck_assert_uint_eq(t[i].job, i);
    ck_assert_uint_eq(cs_store_row_checksum(i, jobs[i].key, &res[i]), res[i].checksum);
    ck_assert_uint_eq(cs_store_txlog_checksum(i, t, i + 1), res[i].txlog_checksum);
    /* a flipped byte anywhere that matters changes a checksum */
    t[0].rec.rsp_complete_tick ^= 1;
    ck_assert_uint_ne(cs_store_txlog_checksum(i, t, i + 1), res[i].txlog_checksum);
    t[0].rec.rsp_complete_tick ^= 1;
    /* the error text counts in a failed row, where it means something; any other row's error
     * reads as empty whatever /errors holds */
    res[i].error[500] = 'x';
    ck_assert_uint_eq(cs_store_row_checksum(i, jobs[i].key, &res[i]), res[i].checksum);
    res[i].status = CS_STORE_FAILED;
    uint64_t failed = cs_store_row_checksum(i, jobs[i].key, &res[i]);
    res[i].error[500] = 0;
    ck_assert_uint_ne(cs_store_row_checksum(i, jobs[i].key, &res[i]), failed);
    res[i].status = CS_STORE_DONE;
    res[i].txlog_checksum ^= 4;
    ck_assert_uint_ne(cs_store_row_checksum(i, jobs[i].key, &res[i]), res[i].checksum);
    res[i].txlog_checksum ^= 4;
    ck_assert_uint_ne(cs_store_row_checksum(i + 1, jobs[i].key, &res[i]), res[i].checksum);
    /* wall time is outside the checksum */
    res[i].result.wall_time_s = 99;
    ck_assert_uint_eq(cs_store_row_checksum(i, jobs[i].key, &res[i]), res[i].checksum);
  }
  char sweep[40];
  cs_store_get_text(jobs[0].sweep, sizeof jobs[0].sweep, sweep, sizeof sweep);
  ck_assert_str_eq(sweep, "unit");
  ck_assert_int_ne(cs_store_read_results(st, 5, 2, res, &err), 0);
  ck_assert_int_eq(err.code, CS_EINVAL);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}
END_TEST

START_TEST(growing_keeps_rows_and_adds_pending_ones) {
  make_file(4);
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_store_grow(st, 700, 5000, &err), 0);
  ck_assert_int_eq(cs_store_note_sweep(st, "second", &err), 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  ck_assert_uint_eq(cs_store_num_rows(st), 700);
  ck_assert_uint_eq(cs_store_txlog_len(st), 5000);
  cs_store_result_row *res = malloc(700 * sizeof *res);
  ck_assert_int_eq(cs_store_read_results(st, 0, 700, res, &err), 0);
  ck_assert_int_eq(res[0].status, CS_STORE_DONE);
  ck_assert_int_eq(res[2].status, CS_STORE_DONE);
  for (int i = 4; i < 700; i++) ck_assert_int_eq(res[i].status, CS_STORE_PENDING);
  free(res);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}
END_TEST

START_TEST(cleared_row_reads_pending) {
  make_file(3);
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_store_clear_result(st, 2, &err), 0);
  cs_store_result_row r;
  ck_assert_int_eq(cs_store_read_results(st, 2, 1, &r, &err), 0);
  ck_assert_int_eq(r.status, CS_STORE_PENDING);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}
END_TEST

START_TEST(foreign_and_missing_files_are_refused) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), CS_ENOTFOUND);
  ck_assert_ptr_null(st);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "not a commsweep store"));
  unlink(path);
  FILE *t = fopen(path, "w");
  fputs("not hdf5", t);
  fclose(t);
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), CS_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, path));
}
END_TEST

/* Replaces /txlog of the store at `path` by an empty one whose type lacks column `drop`, as a
 * file written before that column existed has it. */
static void drop_txlog_column(const char *drop) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, "txlog", H5P_DEFAULT);
  hid_t t = H5Dget_type(d), dcpl = H5Dget_create_plist(d);
  hid_t t2 = H5Tcreate(H5T_COMPOUND, H5Tget_size(t));
  for (int i = 0; i < H5Tget_nmembers(t); i++) {
    char *name = H5Tget_member_name(t, (unsigned)i);
    hid_t mt = H5Tget_member_type(t, (unsigned)i);
    if (strcmp(name, drop)) H5Tinsert(t2, name, H5Tget_member_offset(t, (unsigned)i), mt);
    H5Tclose(mt);
    H5free_memory(name);
  }
  ck_assert_int_eq(H5Tget_nmembers(t2), H5Tget_nmembers(t) - 1);
  H5Dclose(d);
  ck_assert_int_ge(H5Ldelete(f, "txlog", H5P_DEFAULT), 0);
  hsize_t dim = 0, maxdim = H5S_UNLIMITED;
  hid_t space = H5Screate_simple(1, &dim, &maxdim);
  d = H5Dcreate2(f, "txlog", t2, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ck_assert_int_ge(d, 0);
  H5Dclose(d);
  H5Sclose(space);
  H5Tclose(t2);
  H5Tclose(t);
  H5Pclose(dcpl);
  H5Fclose(f);
}

/* A file written before an engine had an extra column (here: the last one the registry lists,
 * taken out of /txlog's type) is opened, written and read back byte for byte, the slot of the
 * column it lacks included, and its rows verify; a file lacking a common column is refused. */
START_TEST(a_file_without_an_engines_new_column_is_read_and_written) {
  cs_col extra[CS_STORE_MAX_COLUMNS];
  size_t nextra =
      cs_engine_record_columns(CS_ENGINE_SET_ALL, offsetof(cs_store_txn_row, rec), extra, CS_STORE_MAX_COLUMNS);
  ck_assert_uint_gt(nextra, 0);
  const cs_col *lacked = &extra[nextra - 1];
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
  drop_txlog_column(lacked->name);

  ck_assert_msg(cs_store_open(path, CS_STORE_WRITE, &st, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(cs_store_grow(st, 1, 5, &err), 0);
  cs_store_job_row job;
  memset(&job, 0, sizeof job);
  fake_key(0, job.key);
  job.txlog_reserved_count = 5;
  ck_assert_int_eq(cs_store_write_jobs(st, 0, 1, &job, &err), 0);
  cs_store_txn_row t[5], back[5];
  fake_txns(0, 5, t);
  for (int i = 0; i < 5; i++) /* the lacked column's slot holds a value, as its engine's would */
    memcpy((unsigned char *)&t[i] + lacked->offset, &(int32_t){100 + i}, sizeof(int32_t));
  cs_store_result_row r;
  fake_result(2.0, &r);
  ck_assert_int_eq(cs_store_put_result(st, 0, job.key, &r, t, 5, &err), 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);

  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  cs_store_result_row res;
  ck_assert_int_eq(cs_store_read_results(st, 0, 1, &res, &err), 0);
  ck_assert_int_eq(cs_store_read_txlog(st, 0, 5, back, &err), 0);
  ck_assert(memcmp(back, t, sizeof t) == 0);
  ck_assert(cs_store_row_verifies(st, 0, job.key, &res));
  ck_assert_int_eq(cs_store_close(st, &err), 0);

  /* a common column is no engine's: a file without it is refused, naming it */
  unlink(path);
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
  drop_txlog_column("step");
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "/txlog.step is missing"));
}
END_TEST

START_TEST(second_writer_is_refused_and_stale_lock_taken_over) {
  cs_err err;
  ck_assert_int_eq(cs_store_lock(path, "first", false, &err), 0);
  ck_assert_int_eq(cs_store_lock(path, "second", false, &err), CS_EBUSY);
  ck_assert_ptr_nonnull(strstr(err.msg, "being written by another sweep"));
  ck_assert_ptr_nonnull(strstr(err.msg, "sweep=first"));
  char holder[256];
  ck_assert(cs_store_lock_holder(path, holder, sizeof holder));
  cs_store_unlock(path);
  ck_assert(!cs_store_lock_holder(path, holder, sizeof holder));
  /* a holder on this host that no longer exists */
  char lock[600], host[256] = "";
  gethostname(host, sizeof host - 1);
  snprintf(lock, sizeof lock, "%s.lock", path);
  FILE *f = fopen(lock, "w");
  fprintf(f, "pid=999999999 host=%s started=x sweep=dead\n", host);
  fclose(f);
  ck_assert_int_eq(cs_store_lock(path, "third", false, &err), 0);
  ck_assert(cs_store_lock_holder(path, holder, sizeof holder));
  ck_assert_ptr_nonnull(strstr(holder, "sweep=third"));
  /* another host: refused unless broken explicitly */
  f = fopen(lock, "w");
  fprintf(f, "pid=1 host=elsewhere-node started=x sweep=remote\n");
  fclose(f);
  ck_assert_int_eq(cs_store_lock(path, "fourth", false, &err), CS_EBUSY);
  ck_assert_int_eq(cs_store_lock(path, "fourth", true, &err), 0);
  cs_store_unlock(path);
}
END_TEST

START_TEST(text_columns_cut_visibly) {
  char col[8];
  cs_store_set_text(col, sizeof col, "abc");
  ck_assert_str_eq(col, "abc");
  ck_assert_int_eq(col[7], 0);
  cs_store_set_text(col, sizeof col, "abcdefghijk");
  ck_assert_str_eq(col, "abcd...");
  char out[4];
  cs_store_get_text("abcdefgh", 8, out, sizeof out);
  ck_assert_str_eq(out, "abc");
  ck_assert_str_eq(cs_store_status_name(CS_STORE_FAILED), "failed");
  ck_assert_str_eq(cs_store_status_name(7), "corrupt");
}
END_TEST

/* Every byte of every column: fills each column of a record with its own byte pattern. */
static void fill_columns(const cs_col *cols, void *row, unsigned seed) {
  for (const cs_col *c = cols; c->name; c++) {
    unsigned char *p = (unsigned char *)row + c->offset;
    size_t n = c->kind == CS_COL_STR ? c->size - 1 : c->size; /* strings keep a NUL */
    if (c->kind == CS_COL_STATUS) {
      *p = CS_STORE_DONE;
      continue;
    }
    for (size_t k = 0; k < n; k++)
      p[k] = c->kind == CS_COL_STR || c->kind == CS_COL_KEY ? (unsigned char)('a' + (seed + k) % 26)
                                                            : (unsigned char)(seed * 31 + k + 1);
    seed++;
  }
}

/* The store round trip: a record and a result row with every column filled (the engines' extra
 * columns included, and the text of /job_json and /errors) come back byte for byte, through the
 * HDF5 types the column tables generate.  A column missing from a type, or mapped to the wrong
 * place, fails here. */
START_TEST(every_byte_of_every_column_round_trips) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_store_grow(st, 1, 3, &err), 0);
  ck_assert_int_eq(cs_store_grow_steplog(st, 2, &err), 0);
  cs_store_job_row job;
  memset(&job, 0, sizeof job);
  cs_col cols[CS_STORE_MAX_COLUMNS];
  cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);
  fill_columns(cols, &job, 3);
  cs_store_job_json_columns(cols, CS_STORE_MAX_COLUMNS);
  fill_columns(cols, &job, 11);
  job.txlog_reserved_offset = 0;
  job.txlog_reserved_count = 3;
  job.steplog_reserved_offset = 0;
  job.steplog_reserved_count = 2;
  ck_assert_int_eq(cs_store_write_jobs(st, 0, 1, &job, &err), 0);
  cs_store_txn_row t[3];
  memset(t, 0, sizeof t);
  cs_store_txn_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
  for (unsigned i = 0; i < 3; i++) fill_columns(cols, &t[i], 7 * i + 1);
  cs_store_step_row steps[2];
  memset(steps, 0, sizeof steps);
  cs_store_step_columns(cols, CS_STORE_MAX_COLUMNS);
  for (unsigned i = 0; i < 2; i++) fill_columns(cols, &steps[i], 11 * i + 2);
  cs_store_result_row r;
  memset(&r, 0, sizeof r);
  size_t ncols = cs_store_result_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
  ck_assert_uint_ge(ncols, cs_cols_count(cs_result_cols) + 4);
  fill_columns(cols, &r, 5);
  cs_store_error_columns(cols, CS_STORE_MAX_COLUMNS);
  fill_columns(cols, &r, 13);
  r.status = CS_STORE_FAILED; /* the error of any other row reads as empty */
  r.txlog_offset = 0;
  r.steplog_offset = 0;
  ck_assert_int_eq(cs_store_put_result_steps(st, 0, job.key, &r, t, 3, steps, 2, &err), 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);

  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  cs_store_job_row job2;
  cs_store_result_row r2;
  cs_store_txn_row t2[3];
  cs_store_step_row steps2[2];
  memset(&job2, 0xee, sizeof job2); /* bytes the file does not fill would show */
  ck_assert_int_eq(cs_store_read_jobs(st, 0, 1, &job2, &err), 0);
  ck_assert_int_eq(cs_store_read_results(st, 0, 1, &r2, &err), 0);
  ck_assert_int_eq(cs_store_read_txlog(st, 0, 3, t2, &err), 0);
  ck_assert_int_eq(cs_store_read_steplog(st, 0, 2, steps2, &err), 0);
  ck_assert(cs_store_row_verifies(st, 0, job.key, &r));
  /* without the wide text: those members are left as they were, every other byte as written */
  static const char *const no_json[] = {"job_json", NULL}, *const no_error[] = {"error", NULL};
  cs_store_job_row job3, want_job = job;
  cs_store_result_row r3, want_r = r;
  memset(&job3, 0xee, sizeof job3);
  memset(&r3, 0xee, sizeof r3);
  memset(want_job.job_json, 0xee, sizeof want_job.job_json);
  memset(want_r.error, 0xee, sizeof want_r.error);
  ck_assert_int_eq(cs_store_read_rows_without(st, true, no_json, 0, 1, &job3, &err), 0);
  ck_assert_int_eq(cs_store_read_rows_without(st, false, no_error, 0, 1, &r3, &err), 0);
  ck_assert_int_eq(cs_store_read_rows_without(st, false, no_error, 0, 2, &r3, &err), CS_EINVAL);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
  ck_assert(memcmp(&job, &job2, offsetof(cs_store_job_row, pad_)) == 0);
  ck_assert(memcmp(t, t2, sizeof t) == 0);
  ck_assert(memcmp(steps, steps2, sizeof steps) == 0);
  ck_assert(memcmp(&r, &r2, sizeof r) == 0);
  ck_assert(memcmp(&want_job, &job3, offsetof(cs_store_job_row, pad_)) == 0);
  ck_assert(memcmp(&want_r, &r3, sizeof r3) == 0);
  /* and the tables cover the records: no byte outside a column but the explicit padding and
   * the engine slots no engine uses */
  size_t covered = 0;
  for (const cs_col *c = cs_txn_record_cols; c->name; c++) covered += c->size;
  ck_assert_uint_eq(covered + sizeof t[0].rec.engine_extra, offsetof(cs_txn_record, pad_));
  covered = 0;
  for (const cs_col *c = cs_step_summary_cols; c->name; c++) covered += c->size;
  ck_assert_uint_eq(covered, offsetof(cs_step_summary, pad_));
  cs_col extra[CS_TXN_EXTRA_SLOTS + 1];
  ck_assert_uint_eq(cs_engine_record_columns(cs_engine_set_in_every_file(), 0, extra,
                                             CS_TXN_EXTRA_SLOTS + 1),
                    cs_engine_record_slots());
}
END_TEST

START_TEST(one_lock_whatever_path_names_the_file) {
  cs_err err;
  FILE *f = fopen(path, "w");
  fclose(f);
  char link[600], rel[600], a[8192], b[8192];
  snprintf(link, sizeof link, "%s/alias.h5", dir);
  ck_assert_int_eq(symlink(path, link), 0);
  snprintf(rel, sizeof rel, "%s/./s.h5", dir);
  cs_store_lock_path(link, a, sizeof a);
  cs_store_lock_path(rel, b, sizeof b);
  ck_assert_str_eq(a, b);
  ck_assert_int_eq(cs_store_lock(link, "via-link", false, &err), 0);
  ck_assert_int_eq(cs_store_lock(path, "direct", false, &err), CS_EBUSY);
  cs_store_unlock(rel);
  ck_assert_int_eq(cs_store_lock(path, "direct", false, &err), 0);
  cs_store_unlock(path);
  unlink(link);
  /* a file not created yet is named by its directory */
  char fresh[600];
  snprintf(fresh, sizeof fresh, "%s/later.h5", dir);
  cs_store_lock_path(fresh, a, sizeof a);
  ck_assert_ptr_nonnull(strstr(a, "/later.h5.lock"));
}
END_TEST

/* Bytes that do not repeat (xorshift64), so no block of the shuffle can pass by luck. */
static void fill_noise(unsigned char *p, size_t len, uint64_t seed) {
  uint64_t x = seed | 1;
  for (size_t i = 0; i < len; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p[i] = (unsigned char)(x >> 24);
  }
}

/* The spool's shuffle against its definition (byte k of row i at k * n + i, HDF5's shuffle
 * filter), for row sizes of the spooled rows (208, 152) and others, and row counts around the
 * 8-row blocks and the 2048-row runs of the fast path: every byte checked, and back. */
START_TEST(shuffle_puts_byte_k_of_row_i_at_k_n_plus_i) {
  const size_t sizes[] = {8, 13, 152, 208};
  const uint64_t counts[] = {0, 1, 7, 8, 9, 63, 64, 65, 2047, 2048, 2049, 4103};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
      size_t size = sizes[s];
      uint64_t n = counts[c];
      size_t len = (size_t)n * size;
      unsigned char *in = malloc(len + 1), *out = malloc(len + 1), *back = malloc(len + 1);
      fill_noise(in, len, 7 * size + n);
      cs_store_shuffle(in, out, n, size, false);
      int wrong = 0;
      for (uint64_t i = 0; i < n; i++)
        for (size_t k = 0; k < size; k++) wrong += out[k * n + i] != in[i * size + k];
      ck_assert_msg(wrong == 0, "size %zu, %llu rows: %d bytes misplaced", size,
                    (unsigned long long)n, wrong);
      cs_store_shuffle(out, back, n, size, true);
      ck_assert_msg(memcmp(back, in, len) == 0, "size %zu, %llu rows: not restored", size,
                    (unsigned long long)n);
      free(in);
      free(out);
      free(back);
    }
}
END_TEST

/* The spool's codec round trips incompressible bytes (its bound must hold them) and runs of
 * zeros, appended after bytes already in the buffer, which stay; a cut, short or padded frame
 * fails; the decoder, kept from frame to frame, decodes whole frames again after failures. */
START_TEST(spool_codec_round_trips_and_rejects_damage) {
  const size_t len = (9 << 20) + 5; /* more than two 4 MiB blocks */
  unsigned char *noise = malloc(len), *zeros = calloc(1, len), *out = malloc(len);
  fill_noise(noise, len, 42);
  cs_store_buf z = {NULL, 0};
  size_t zn = 0, zz = 0;
  ck_assert_int_eq(cs_store_compress(noise, len, &z, 0, &zn), CS_OK);
  ck_assert_uint_ge(zn, len); /* nothing to gain in noise */
  ck_assert_int_eq(cs_store_compress(zeros, len, &z, zn, &zz), CS_OK);
  ck_assert_uint_lt(zz, len / 100);
  const unsigned char *zp = z.p;
  struct LZ4F_dctx_s *dctx = NULL;
  ck_assert(cs_store_decompress(&dctx, zp, zn, out, len));
  ck_assert_mem_eq(out, noise, len);
  memset(out, 1, len);
  ck_assert(cs_store_decompress(&dctx, zp + zn, zz, out, len));
  ck_assert_mem_eq(out, zeros, len);
  ck_assert(!cs_store_decompress(&dctx, zp + zn, zz - 1, out, len)); /* cut */
  ck_assert(!cs_store_decompress(&dctx, zp + zn, zz, out, len - 1)); /* longer than said */
  ck_assert(!cs_store_decompress(&dctx, zp, zn + zz, out, len));     /* trailing bytes */
  ck_assert(!cs_store_decompress(&dctx, zp + 1, zn - 1, out, len));  /* no frame */
  ck_assert(!cs_store_decompress(&dctx, zp, zn / 2, out, len));      /* cut mid-block */
  memset(out, 1, len);
  ck_assert(cs_store_decompress(&dctx, zp + zn, zz, out, len));
  ck_assert_mem_eq(out, zeros, len);
  ck_assert(cs_store_decompress(&dctx, zp, zn, out, len));
  ck_assert_mem_eq(out, noise, len);
  cs_store_decompress_end(dctx);
  free(z.p);
  free(noise);
  free(zeros);
  free(out);
}
END_TEST

/* Planes of plane_len bytes after `kinds`, one letter a plane: 'n' noise, 's' one value equal
 * to the byte before the plane (a run that goes on), 'c' one value different from it, 'r' runs
 * of 33 to 64 bytes (few enough to be coded as runs), 'p' a pattern of 7 bytes repeated. */
static size_t make_planes(unsigned char *p, const char *kinds, size_t plane_len, uint64_t seed) {
  size_t n = strlen(kinds);
  for (size_t k = 0; k < n; k++) {
    unsigned char *q = p + k * plane_len;
    int before = k ? q[-1] : 0;
    if (kinds[k] == 'n') {
      fill_noise(q, plane_len, seed + k);
    } else if (kinds[k] == 'p') {
      for (size_t i = 0; i < plane_len; i++) q[i] = (unsigned char)(i % 7 * 31);
    } else if (kinds[k] == 'r') {
      for (size_t i = 0, len; i < plane_len; i += len) {
        len = 33 + (seed + i) % 32;
        memset(q + i, (int)((i / 7 + seed) & 0xff), len < plane_len - i ? len : plane_len - i);
      }
    } else {
      memset(q, kinds[k] == 's' ? before : (before + 1 + (int)(seed % 254)) & 0xff, plane_len);
    }
  }
  return n;
}

/* zlib inflates the stream to exactly the planes, its checksum holds, and no byte follows it. */
static void assert_inflates_to(const unsigned char *z, size_t zlen, const unsigned char *planes,
                               size_t len, const char *what) {
  unsigned char *back = malloc(len + 1);
  uLongf got = len;
  uLong used = zlen;
  int rc = uncompress2(back, &got, z, &used);
  ck_assert_msg(rc == Z_OK, "%s: zlib says %d", what, rc);
  ck_assert_msg(got == len && used == zlen, "%s: %lu of %zu bytes from %lu of %zu", what,
                (unsigned long)got, len, (unsigned long)used, zlen);
  ck_assert_msg(!len || memcmp(back, planes, len) == 0, "%s: other bytes", what);
  free(back);
}

/* Packs the planes within the bound and checks that they inflate back. */
static void assert_round_trip(cs_store_planez *pz, const unsigned char *planes, size_t np,
                              size_t pl, const char *what) {
  size_t bound = cs_store_planez_bound(np, pl);
  unsigned char *z = malloc(bound);
  size_t zlen = cs_store_planez_pack(pz, planes, np, pl, z, bound);
  ck_assert_msg(zlen > 0, "%s: not packed", what);
  assert_inflates_to(z, zlen, planes, np * pl, what);
  free(z);
}

/* /txlog chunks are written as zlib streams made by planez.c; every mix of constant planes
 * (continuing the byte before them or not), planes of long runs and noise planes, plane lengths
 * around the match lengths deflate can code (3..258) and its longest, and zlib levels from
 * stored to best, must inflate back exactly within the bound (40 alternating planes: a block
 * header per plane); one compressor serves them all, as in a sweep. */
START_TEST(planez_streams_inflate_to_their_planes) {
  const size_t lens[] = {1, 2, 3, 4, 5, 257, 258, 259, 260, 261, 262, 516, 517, 519, 8192};
  const char *mixes[] = {"", "n", "c", "s", "r", "ss", "cs", "ccc", "nnn", "nc", "cn", "ncn",
                         "cnc", "rnr", "scsnnsccn", "nnccsnrscr",
                         "cncncncncncncncncncncncncncncncncncncncn"};
  const int levels[] = {0, 1, 4, 9};
  cs_store_planez pz;
  for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
    ck_assert_int_eq(cs_store_planez_init(&pz, levels[l]), CS_OK);
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
      for (size_t m = 0; m < sizeof mixes / sizeof *mixes; m++) {
        size_t pl = lens[i], np = strlen(mixes[m]);
        unsigned char *planes = malloc(np * pl + 1);
        make_planes(planes, mixes[m], pl, 31 * i + m + 7 * l);
        char what[96];
        snprintf(what, sizeof what, "level %d, planes '%s' of %zu B", levels[l], mixes[m], pl);
        assert_round_trip(&pz, planes, np, pl, what);
        free(planes);
      }
    cs_store_planez_end(&pz);
  }
}
END_TEST

/* Random planes made of runs of random lengths (1 to 300 bytes, so every split of a run into
 * literals and matches occurs, across plane boundaries too) and random values from a small
 * alphabet (so runs often continue the byte before them), with noise planes among them; plane
 * counts 0-40, lengths 1-3000, levels 0-9, from a fixed seed: every stream inflates back. */
START_TEST(planez_random_runs_inflate_to_their_planes) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  cs_store_planez pz;
  int level = -1;
  for (int iter = 0; iter < 400; iter++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    if (iter % 40 == 0) {
      if (level >= 0) cs_store_planez_end(&pz);
      level = (int)(x % 10);
      ck_assert_int_eq(cs_store_planez_init(&pz, level), CS_OK);
    }
    size_t np = (size_t)(x >> 8) % 41, pl = 1 + (size_t)(x >> 20) % 3000;
    unsigned alphabet = 1 + (unsigned)(x >> 40) % 4;
    unsigned char *planes = malloc(np * pl + 1);
    for (size_t k = 0; k < np; k++) {
      unsigned char *q = planes + k * pl;
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      if (x % 5 == 0) {
        fill_noise(q, pl, x);
        continue;
      }
      for (size_t i = 0, len; i < pl; i += len) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        len = 1 + (size_t)(x % 300);
        if (len > pl - i) len = pl - i;
        memset(q + i, (int)((x >> 32) % alphabet * 85), len);
      }
    }
    char what[96];
    snprintf(what, sizeof what, "case %d: level %d, %zu planes of %zu B", iter, level, np, pl);
    assert_round_trip(&pz, planes, np, pl, what);
    free(planes);
  }
  cs_store_planez_end(&pz);
}
END_TEST

/* What the runs are for: a /txlog chunk's 208 planes of 8,192 bytes, each of one value, code in
 * about ten bytes a plane (one literal where the value changes, 32 matches of 258 bytes at two
 * bits each with their distance, one shorter match: under 96 bits), against some 35 bytes a plane
 * from a general deflate at level 4; planes of runs of 33-64 bytes in at most 3.3 bytes a run
 * (a literal and a match, 26 bits at most), a tenth of their size; the bounds allow for headers.
 * Planes of a short repeated pattern, one run a byte, are zlib's: a match at distance 7 codes
 * them in a few bytes, runs would take a byte a byte. */
START_TEST(planez_codes_runs_compactly) {
  const size_t np = 208, pl = 8192;
  char kinds[209];
  unsigned char *planes = malloc(np * pl), *z = malloc(cs_store_planez_bound(np, pl));
  cs_store_planez pz;
  ck_assert_int_eq(cs_store_planez_init(&pz, 4), CS_OK);
  const char *what[] = {"208 constant planes", "208 planes of runs", "208 patterned planes"};
  const size_t most[] = {np * 12 + 600, np * pl / 10 + 600, np * pl / 100};
  for (int pass = 0; pass < 3; pass++) {
    for (size_t k = 0; k < np; k++) kinds[k] = "crp"[pass] == 'c' && k % 3 ? 's' : "crp"[pass];
    kinds[np] = 0;
    make_planes(planes, kinds, pl, 5);
    size_t zlen = cs_store_planez_pack(&pz, planes, np, pl, z, cs_store_planez_bound(np, pl));
    ck_assert_msg(zlen > 0 && zlen <= most[pass], "%s: %zu B", what[pass], zlen);
    assert_inflates_to(z, zlen, planes, np * pl, what[pass]);
  }
  cs_store_planez_end(&pz);
  free(planes);
  free(z);
}
END_TEST

/* A buffer too short for the stream gives 0 and no byte written past it (ASan checks the exact
 * allocations), for a cut in the middle of a run block, of a zlib segment and of the checksum;
 * the exact length gives the same stream again. */
START_TEST(planez_refuses_a_short_buffer) {
  const size_t pl = 4096;
  const char *kinds = "ccnscnnc";
  size_t np = strlen(kinds);
  unsigned char *planes = malloc(np * pl), *full = malloc(cs_store_planez_bound(np, pl));
  make_planes(planes, kinds, pl, 11);
  cs_store_planez pz;
  ck_assert_int_eq(cs_store_planez_init(&pz, 4), CS_OK);
  size_t zlen = cs_store_planez_pack(&pz, planes, np, pl, full, cs_store_planez_bound(np, pl));
  ck_assert_uint_gt(zlen, 20);
  const size_t caps[] = {0, 1, 5, 6, 7, 20, zlen / 2, zlen - 5, zlen - 1};
  for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
    unsigned char *z = malloc(caps[i] ? caps[i] : 1);
    ck_assert_msg(cs_store_planez_pack(&pz, planes, np, pl, z, caps[i]) == 0, "cap %zu", caps[i]);
    free(z);
  }
  unsigned char *z = malloc(zlen);
  ck_assert_uint_eq(cs_store_planez_pack(&pz, planes, np, pl, z, zlen), zlen);
  ck_assert_mem_eq(z, full, zlen);
  cs_store_planez_end(&pz);
  free(z);
  free(full);
  free(planes);
}
END_TEST

static Suite *store_suite(void) {
  Suite *s = suite_create("store");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_add_test(core, xxh64_matches_reference_vectors);
  tcase_add_test(core, shuffle_puts_byte_k_of_row_i_at_k_n_plus_i);
  tcase_add_test(core, spool_codec_round_trips_and_rejects_damage);
  tcase_add_test(core, planez_streams_inflate_to_their_planes);
  tcase_add_test(core, planez_random_runs_inflate_to_their_planes);
  tcase_add_test(core, planez_codes_runs_compactly);
  tcase_add_test(core, planez_refuses_a_short_buffer);
  tcase_add_test(core, rows_round_trip_and_checksums_verify);
  tcase_add_test(core, xxh64_in_pieces_matches_the_whole);
  tcase_add_test(core, a_streamed_log_reads_back_as_its_records);
  tcase_add_test(core, growing_keeps_rows_and_adds_pending_ones);
  tcase_add_test(core, cleared_row_reads_pending);
  tcase_add_test(core, foreign_and_missing_files_are_refused);
  tcase_add_test(core, text_columns_cut_visibly);
  tcase_add_test(core, every_byte_of_every_column_round_trips);
  tcase_add_test(core, a_file_without_an_engines_new_column_is_read_and_written);
  suite_add_tcase(s, core);
  TCase *lock = tcase_create("lock");
  tcase_add_checked_fixture(lock, setup, teardown);
  tcase_add_test(lock, second_writer_is_refused_and_stale_lock_taken_over);
  tcase_add_test(lock, one_lock_whatever_path_names_the_file);
  suite_add_tcase(s, lock);
  return s;
}

int main(void) { return cs_test_run(store_suite()); }
