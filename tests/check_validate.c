/* Constraints C1-C11: each has a test that triggers it and checks the message names the
 * constraint, the value and the rule. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/job.h"
#include "commsweep/validate.h"
#include "test_support.h"

static cs_job job;
static cs_err err;

static void setup(void) {
  const int parts[] = {0, 1, 2, 3};
  cs_test_job(&job, "math", CS_PRIM_ALLREDUCE, 1 << 16, parts, 4);
  cs_err_clear(&err);
}

static void expect(int rc, const char *tag, const char *fragment) {
  ck_assert_int_eq(rc, CS_ECONSTRAINT);
  ck_assert_msg(strstr(err.msg, tag) != NULL, "missing '%s' in: %s", tag, err.msg);
  ck_assert_msg(strstr(err.msg, fragment) != NULL, "missing '%s' in: %s", fragment, err.msg);
}

START_TEST(valid_job_should_pass) { ck_assert_int_eq(cs_job_validate(&job, &err), CS_OK); }
END_TEST

START_TEST(c1_mode_other_than_dcin_should_fail) {
  /* C1 is the CrossRing adapter's: the dcin engine checks it, and names itself */
  snprintf(job.engine.name, sizeof job.engine.name, "dcin");
  snprintf(job.adapter.mode, sizeof job.adapter.mode, "kcin");
  expect(cs_job_validate(&job, &err), "C1", "\"kcin\"");
  ck_assert_ptr_nonnull(strstr(err.msg, "engine dcin"));
}
END_TEST

START_TEST(c2_inconsistent_triple_should_fail) {
  job.adapter.num_dies = 4;
  expect(cs_job_validate(&job, &err), "C2", "num_dies = 4");
  setup();
  snprintf(job.adapter.dcin_layout, sizeof job.adapter.dcin_layout, "3die");
  expect(cs_job_validate(&job, &err), "C2", "\"3die\"");
  ck_assert_ptr_nonnull(strstr(err.msg, "2die")); /* lists what ships */
  setup();
  snprintf(job.adapter.topology, sizeof job.adapter.topology, "8x8");
  expect(cs_job_validate(&job, &err), "C2", "\"8x8\"");
}
END_TEST

START_TEST(c3_scheme_and_endpoint_counts_should_match) {
  snprintf(job.adapter.endpoint_id_scheme, sizeof job.adapter.endpoint_id_scheme, "linear");
  expect(cs_job_validate(&job, &err), "C3", "\"linear\"");
  setup();
  job.adapter.num_initiators = 20;
  expect(cs_job_validate(&job, &err), "C3", "num_initiators = 20");
  ck_assert_ptr_nonnull(strstr(err.msg, "40"));
  setup();
  job.adapter.num_targets = 41;
  expect(cs_job_validate(&job, &err), "C3", "num_targets = 41");
}
END_TEST

START_TEST(c4_odd_outstanding_should_fail) {
  job.adapter.mst_rd_outstanding = 63;
  expect(cs_job_validate(&job, &err), "C4", "mst_rd_outstanding = 63");
  setup();
  job.adapter.mst_wr_outstanding = 7;
  expect(cs_job_validate(&job, &err), "C4", "mst_wr_outstanding = 7");
  ck_assert_ptr_nonnull(strstr(err.msg, "even"));
}
END_TEST

START_TEST(c5_duplicate_participants_should_fail) {
  job.spec.participants[3] = 1;
  expect(cs_job_validate(&job, &err), "C5", "participants[3] = 1");
  ck_assert_ptr_nonnull(strstr(err.msg, "distinct"));
}
END_TEST

START_TEST(c6_two_flows_to_one_target_should_fail) {
  cs_inject in[3] = {{0, 0, 5, 0, CS_PKT_REQ, 4}, {1, 0, 5, 0, CS_PKT_REQ, 4}, {2, 1, 5, 0, CS_PKT_REQ, 4}};
  uint32_t flow[3] = {0, 0, 1};
  ck_assert_int_eq(cs_validate_step_injects(in, flow, 2, 0, &err), CS_OK); /* one flow, many txns */
  ck_assert_int_eq(cs_validate_step_injects(in, flow, 3, 7, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "C6: step 7"));
  ck_assert_ptr_nonnull(strstr(err.msg, "DDR 5"));
}
END_TEST

START_TEST(c7_frequencies_should_be_positive_and_agree_with_chip_spec) {
  job.adapter.noc_frequency_ghz = 0;
  expect(cs_job_validate(&job, &err), "C7", "noc_frequency_ghz");
  setup();
  snprintf(job.spec.chip_spec_summary, sizeof job.spec.chip_spec_summary,
           "{\"ip_frequency_ghz\":1.5}");
  expect(cs_job_validate(&job, &err), "C7", "chip_spec_summary.ip_frequency_ghz = 1.5");
}
END_TEST

/* A summary naming an infinite frequency (1e400 in the input) is an error naming the field,
 * like 5.0 is, not a summary that C7 cannot read and so lets through. */
START_TEST(c7_non_finite_number_in_chip_spec_should_fail) {
  const char *texts[] = {"{\"noc_frequency_ghz\":1e999}", "{\"noc_frequency_ghz\":5.0}",
                         "{\"other\":{\"x\":-1e999}}", "{\"a\":1,\"a\":2}", "{broken"};
  const char *names[] = {"chip_spec_summary.noc_frequency_ghz", "chip_spec_summary.noc_frequency_ghz",
                         "chip_spec_summary.other.x", "chip_spec_summary.a", "not JSON"};
  for (int i = 0; i < 5; i++) {
    setup();
    snprintf(job.spec.chip_spec_summary, sizeof job.spec.chip_spec_summary, "%s", texts[i]);
    ck_assert_int_ne(cs_job_validate(&job, &err), CS_OK);
    ck_assert_msg(strstr(err.msg, "C7") && strstr(err.msg, names[i]), "%s", err.msg);
  }
}
END_TEST

START_TEST(c8_disabled_transaction_log_should_fail) {
  job.adapter.enable_transaction_log = false;
  expect(cs_job_validate(&job, &err), "C8", "enable_transaction_log = false");
}
END_TEST

START_TEST(c9_data_packets_should_be_refused) {
  cs_inject in = {0, 0, 5, 0, CS_PKT_DATA, 4};
  uint32_t flow = 0;
  ck_assert_int_eq(cs_validate_step_injects(&in, &flow, 1, 2, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "C9"));
  ck_assert_ptr_nonnull(strstr(err.msg, "data"));
}
END_TEST

START_TEST(c10_rsp_must_reverse_its_req) {
  cs_inject req = {9, 3, 7, 0, CS_PKT_REQ, 4};
  cs_inject good = {9, 7, 3, 0, CS_PKT_RSP, 4};
  cs_inject wrong_id = {8, 7, 3, 0, CS_PKT_RSP, 4};
  cs_inject not_reversed = {9, 3, 7, 0, CS_PKT_RSP, 4};
  ck_assert_int_eq(cs_validate_rsp(&req, &good, &err), CS_OK);
  ck_assert_int_eq(cs_validate_rsp(&req, &wrong_id, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "C10"));
  ck_assert_int_eq(cs_validate_rsp(&req, &not_reversed, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "C10"));
}
END_TEST

START_TEST(c11_unsupported_algorithm_should_fail) {
  job.spec.algorithm = CS_ALGO_PAIRWISE;
  expect(cs_job_validate(&job, &err), "C11", "\"pairwise\" for allreduce");
  setup();
  job.spec.primitive = CS_PRIM_ALLTOALL; /* ring for alltoall */
  expect(cs_job_validate(&job, &err), "C11", "\"ring\" for alltoall");
}
END_TEST

START_TEST(spec_rules_should_reject_bad_participant_sets_and_sizes) {
  job.spec.num_participants = 1;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "at least 2"));
  setup();
  job.spec.num_participants = 0;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_EINVAL);
  setup();
  job.spec.participants[2] = 40;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "participants[2] = 40"));
  setup();
  job.spec.msg_size_bytes = 3;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "msg_size_bytes = 3"));
  setup();
  job.spec.primitive = CS_PRIM_P2P;
  job.spec.algorithm = CS_ALGO_DIRECT;
  job.spec.p2p_op = CS_P2P_READ;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_EINVAL); /* p2p with 4 participants */
  ck_assert_ptr_nonnull(strstr(err.msg, "exactly 2"));
  job.spec.num_participants = 2;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_OK);
}
END_TEST

int main(void) {
  Suite *s = suite_create("validate");
  TCase *tc = tcase_create("constraints");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, valid_job_should_pass);
  tcase_add_test(tc, c1_mode_other_than_dcin_should_fail);
  tcase_add_test(tc, c2_inconsistent_triple_should_fail);
  tcase_add_test(tc, c3_scheme_and_endpoint_counts_should_match);
  tcase_add_test(tc, c4_odd_outstanding_should_fail);
  tcase_add_test(tc, c5_duplicate_participants_should_fail);
  tcase_add_test(tc, c6_two_flows_to_one_target_should_fail);
  tcase_add_test(tc, c7_frequencies_should_be_positive_and_agree_with_chip_spec);
  tcase_add_test(tc, c7_non_finite_number_in_chip_spec_should_fail);
  tcase_add_test(tc, c8_disabled_transaction_log_should_fail);
  tcase_add_test(tc, c9_data_packets_should_be_refused);
  tcase_add_test(tc, c10_rsp_must_reverse_its_req);
  tcase_add_test(tc, c11_unsupported_algorithm_should_fail);
  tcase_add_test(tc, spec_rules_should_reject_bad_participant_sets_and_sizes);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
