/* The store's crash safety and its defences against hostile files, without MPI: the staged
 * structural step (commit replaces the file, discard leaves it), batched result rows, the column
 * check on open, scalar attributes, the writer locks (live holders, own locks only, the same
 * file under another name). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "commsweep/store.h"
#include "test_support.h"

static char dir[256];
static char path[512], staged[600], lock[600];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/cs_check_safety_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/s.h5", dir);
  snprintf(staged, sizeof staged, "%s.staged", path);
  snprintf(lock, sizeof lock, "%s.lock", path);
}

static void teardown(void) {
  cs_store_unlock(path);
  char other[600];
  snprintf(other, sizeof other, "%s/link.h5", dir);
  unlink(other);
  unlink(path);
  unlink(staged);
  unlink(lock);
  rmdir(dir);
}

static void key_of(uint64_t i, char key[CS_STORE_KEY_LEN]) {
  char hex[CS_STORE_KEY_LEN + 1];
  snprintf(hex, sizeof hex, "%064llx", (unsigned long long)(i * 977 + 3));
  memcpy(key, hex, CS_STORE_KEY_LEN);
}

/* A store of `rows` rows through a staged open and commit; every row done. */
static void make_file(uint64_t rows) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_STAGE, &st, &err), 0);
  ck_assert_int_eq(cs_store_grow(st, rows, 0, &err), 0);
  cs_store_job_row *jobs = calloc(rows, sizeof *jobs);
  for (uint64_t i = 0; i < rows; i++) key_of(i, jobs[i].key);
  ck_assert_int_eq(cs_store_write_jobs(st, 0, rows, jobs, &err), 0);
  for (uint64_t i = 0; i < rows; i++) {
    cs_store_result_row r;
    memset(&r, 0, sizeof r);
    r.status = CS_STORE_DONE;
    r.result.total_time_us = 1.0 + (double)i;
    ck_assert_int_eq(cs_store_put_result(st, i, jobs[i].key, &r, NULL, 0, &err), 0);
  }
  free(jobs);
  ck_assert_int_eq(cs_store_commit(st, &err), 0);
}

static uint64_t rows_of(const char *p) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(p, CS_STORE_READ, &st, &err), 0);
  uint64_t n = cs_store_num_rows(st);
  cs_store_close(st, NULL);
  return n;
}

START_TEST(staged_changes_reach_the_file_only_on_commit) {
  make_file(3);
  ck_assert(access(staged, F_OK) != 0); /* renamed away */
  struct stat before;
  ck_assert_int_eq(stat(path, &before), 0);
  cs_err err;
  cs_store *st = NULL;
  /* discarded: the file keeps its 3 rows and its inode, the copy is gone */
  ck_assert_int_eq(cs_store_open(path, CS_STORE_STAGE, &st, &err), 0);
  ck_assert_int_eq(cs_store_num_rows(st), 3);
  ck_assert_int_eq(cs_store_grow(st, 10, 100, &err), 0);
  ck_assert(access(staged, F_OK) == 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
  ck_assert(access(staged, F_OK) != 0);
  ck_assert_int_eq(rows_of(path), 3);
  /* committed: 10 rows, a new inode, the 3 old rows unchanged */
  ck_assert_int_eq(cs_store_open(path, CS_STORE_STAGE, &st, &err), 0);
  ck_assert_int_eq(cs_store_grow(st, 10, 100, &err), 0);
  ck_assert_int_eq(cs_store_commit(st, &err), 0);
  struct stat after;
  ck_assert_int_eq(stat(path, &after), 0);
  ck_assert(after.st_ino != before.st_ino);
  ck_assert_int_eq(rows_of(path), 10);
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  cs_store_result_row r[10];
  ck_assert_int_eq(cs_store_read_results(st, 0, 10, r, &err), 0);
  for (int i = 0; i < 10; i++) {
    ck_assert_int_eq(r[i].status, i < 3 ? CS_STORE_DONE : CS_STORE_PENDING);
    if (i < 3) ck_assert(r[i].result.total_time_us == 1.0 + i); /* as written by make_file */
  }
  cs_store_close(st, NULL);
}
END_TEST

START_TEST(a_leftover_staged_copy_is_replaced) {
  make_file(2);
  FILE *f = fopen(staged, "w"); /* a dead sweep's */
  fputs("junk", f);
  fclose(f);
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_STAGE, &st, &err), 0);
  ck_assert_int_eq(cs_store_num_rows(st), 2);
  ck_assert_int_eq(cs_store_commit(st, &err), 0);
  ck_assert_int_eq(rows_of(path), 2);
}
END_TEST

START_TEST(an_empty_file_is_laid_out_anew_but_not_read) {
  FILE *f = fopen(path, "w");
  fclose(f);
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "empty (0 bytes)"));
  ck_assert_int_eq(cs_store_open(path, CS_STORE_STAGE, &st, &err), 0);
  ck_assert_int_eq(cs_store_commit(st, &err), 0);
  ck_assert_int_eq(rows_of(path), 0);
}
END_TEST

START_TEST(batched_rows_reach_the_file_at_flush) {
  make_file(5);
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_store_batch_rows(st, 4, &err), 0);
  char key[CS_STORE_KEY_LEN];
  for (uint64_t i = 0; i < 3; i++) { /* rows 4, 2, 0: any order */
    cs_store_result_row r;
    memset(&r, 0, sizeof r);
    r.status = CS_STORE_FAILED;
    key_of(4 - 2 * i, key);
    ck_assert_int_eq(cs_store_put_result(st, 4 - 2 * i, key, &r, NULL, 0, &err), 0);
  }
  cs_store_result_row back[5];
  ck_assert_int_eq(cs_store_read_results(st, 0, 5, back, &err), 0);
  ck_assert_int_eq(back[4].status, CS_STORE_DONE); /* held back */
  uint64_t lost = 9;
  ck_assert_int_eq(cs_store_flush_rows(st, &lost, &err), 0);
  ck_assert_int_eq(lost, 0);
  ck_assert_int_eq(cs_store_read_results(st, 0, 5, back, &err), 0);
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(back[i].status, i % 2 == 0 ? CS_STORE_FAILED : CS_STORE_DONE);
    key_of((uint64_t)i, key);
    ck_assert_uint_eq(back[i].checksum, cs_store_row_checksum((uint64_t)i, key, &back[i]));
  }
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}
END_TEST

/* Rewrites /results with a column renamed (what another program might do). */
static void rename_column(const char *from, const char *to) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, "results", H5P_DEFAULT);
  hid_t t = H5Dget_type(d);
  hid_t copy = H5Tcreate(H5T_COMPOUND, H5Tget_size(t));
  for (int i = 0; i < H5Tget_nmembers(t); i++) {
    char *name = H5Tget_member_name(t, (unsigned)i);
    hid_t mt = H5Tget_member_type(t, (unsigned)i);
    H5Tinsert(copy, strcmp(name, from) ? name : to, H5Tget_member_offset(t, (unsigned)i), mt);
    H5Tclose(mt);
    H5free_memory(name);
  }
  H5Dclose(d);
  H5Ldelete(f, "results", H5P_DEFAULT);
  hsize_t dim = 1;
  hid_t s = H5Screate_simple(1, &dim, NULL);
  d = H5Dcreate2(f, "results", copy, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Sclose(s);
  H5Dclose(d);
  H5Tclose(copy);
  H5Tclose(t);
  H5Fclose(f);
}

START_TEST(a_renamed_column_is_named_on_open) {
  make_file(1);
  rename_column("bus_bw_gb_per_s", "bus_bw");
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "column /results.bus_bw_gb_per_s is missing"));
}
END_TEST

START_TEST(array_attributes_are_refused_not_overrun) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t n = 2000;
  hid_t s = H5Screate_simple(1, &n, NULL), t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  const char **v = calloc(n, sizeof *v);
  for (hsize_t i = 0; i < n; i++) v[i] = "commsweep";
  hid_t a = H5Acreate2(f, "format", t, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, v);
  H5Aclose(a);
  free(v);
  H5Tclose(t);
  H5Sclose(s);
  H5Fclose(f);
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "attribute 'format' is not a scalar string"));
}
END_TEST

static void write_lock(const char *line) {
  FILE *f = fopen(lock, "w");
  fputs(line, f);
  fclose(f);
}

START_TEST(break_lock_refuses_a_live_holder_and_unlock_only_its_own) {
  make_file(1);
  char host[256] = "", line[512];
  gethostname(host, sizeof host - 1);
  /* pid 1 lives on every Linux host: a live holder that is not this process */
  snprintf(line, sizeof line, "pid=1 host=%s started=x sweep=other\n", host);
  write_lock(line);
  cs_err err;
  ck_assert_int_eq(cs_store_lock(path, "me", true, &err), CS_EBUSY);
  ck_assert_ptr_nonnull(strstr(err.msg, "--break-lock refused"));
  cs_store_unlock(path); /* not ours: stays */
  ck_assert(access(lock, F_OK) == 0);
  /* a holder on another host cannot be checked: --break-lock removes it */
  write_lock("pid=1 host=elsewhere.invalid started=x sweep=other\n");
  ck_assert_int_eq(cs_store_lock(path, "me", false, &err), CS_EBUSY);
  ck_assert_int_eq(cs_store_lock(path, "me", true, &err), 0);
  cs_store_unlock(path);
  ck_assert(access(lock, F_OK) != 0);
}
END_TEST

START_TEST(a_hard_link_is_the_same_file) {
  make_file(1);
  char other[600];
  snprintf(other, sizeof other, "%s/link.h5", dir);
  ck_assert_int_eq(link(path, other), 0);
  cs_err err;
  ck_assert_int_eq(cs_store_lock(path, "first", false, &err), 0);
  /* another process would be refused; this one holds the inode lock, so fake another holder */
  char ipath[256];
  struct stat sb;
  stat(path, &sb);
  snprintf(ipath, sizeof ipath, "/dev/shm/commsweep-%llx-%llx.lock",
           (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
  if (access("/dev/shm", F_OK) != 0)
    snprintf(ipath, sizeof ipath, "/tmp/commsweep-%llx-%llx.lock",
             (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
  ck_assert(access(ipath, F_OK) == 0);
  char host[256] = "", line[512];
  gethostname(host, sizeof host - 1);
  snprintf(line, sizeof line, "pid=1 host=%s started=x sweep=first\n", host);
  FILE *f = fopen(ipath, "w");
  fputs(line, f);
  fclose(f);
  ck_assert_int_eq(cs_store_lock(other, "second", false, &err), CS_EBUSY);
  ck_assert_ptr_nonnull(strstr(err.msg, "under another name, a hard link (pid=1 "));
  char other_lock[700];
  snprintf(other_lock, sizeof other_lock, "%s.lock", other);
  ck_assert(access(other_lock, F_OK) != 0); /* its own path lock given back */
  unlink(ipath);
  cs_store_unlock(path);
}
END_TEST

int main(void) {
  Suite *s = suite_create("store_safety");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_add_test(core, staged_changes_reach_the_file_only_on_commit);
  tcase_add_test(core, a_leftover_staged_copy_is_replaced);
  tcase_add_test(core, an_empty_file_is_laid_out_anew_but_not_read);
  tcase_add_test(core, batched_rows_reach_the_file_at_flush);
  tcase_add_test(core, a_renamed_column_is_named_on_open);
  tcase_add_test(core, array_attributes_are_refused_not_overrun);
  suite_add_tcase(s, core);
  TCase *locks = tcase_create("locks");
  tcase_add_checked_fixture(locks, setup, teardown);
  tcase_add_test(locks, break_lock_refuses_a_live_holder_and_unlock_only_its_own);
  tcase_add_test(locks, a_hard_link_is_the_same_file);
  suite_add_tcase(s, locks);
  return cs_test_run(s);
}
