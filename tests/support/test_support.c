/* Helpers shared by the Check suites. */
#include "test_support.h"

#include "test_dcin.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commsweep/config.h"

void cs_test_write_temp(const char *text, char *path_out, unsigned long cap) {
  snprintf(path_out, cap, "/tmp/cs_test_XXXXXX");
  int fd = mkstemp(path_out);
  if (fd < 0) {
    perror("mkstemp");
    abort();
  }
  size_t n = strlen(text);
  if (write(fd, text, n) != (ssize_t)n) abort();
  close(fd);
}

void cs_test_job(cs_job *job, const char *engine, cs_primitive prim, unsigned long long msg,
                 const int *participants, int n) {
  memset(job, 0, sizeof *job);
  cs_adapter_config *a = &job->adapter;
  snprintf(a->mode, sizeof a->mode, "dcin");
  snprintf(a->topology, sizeof a->topology, "2261_5x4");
  a->num_dies = 2;
  snprintf(a->dcin_layout, sizeof a->dcin_layout, "2die");
  snprintf(a->endpoint_id_scheme, sizeof a->endpoint_id_scheme, "mvp");
  a->num_initiators = a->num_targets = 40;
  a->driver_cycle_frequency_ghz = 1.0;
  a->ip_frequency_ghz = 1.0;
  a->noc_frequency_ghz = 2.0;
  a->mst_rd_outstanding = a->mst_wr_outstanding = 128;
  a->slv_rd_outstanding = a->slv_wr_outstanding = 64;
  a->burst_length = 4;
  a->bw_bytes = 128;
  a->enable_transaction_log = true;
  snprintf(a->transaction_log_path, sizeof a->transaction_log_path, "/tmp/cs_{key}.jsonl");

  cs_spec *s = &job->spec;
  s->primitive = prim;
  s->algorithm = prim == CS_PRIM_ALLTOALL ? CS_ALGO_PAIRWISE
                 : prim == CS_PRIM_P2P    ? CS_ALGO_DIRECT
                                          : CS_ALGO_RING;
  s->msg_size_bytes = msg;
  s->num_participants = n;
  for (int i = 0; i < n; i++) s->participants[i] = participants[i];
  snprintf(s->dtype, sizeof s->dtype, "bf16");
  snprintf(s->chip_spec_summary, sizeof s->chip_spec_summary, "{\"chip\":\"test\"}");
  s->p2p_op = prim == CS_PRIM_P2P ? CS_P2P_WRITE : CS_P2P_NONE;

  snprintf(job->engine.name, sizeof job->engine.name, "%s", engine);
  job->engine.deadlock_guard_ticks = CS_DEFAULT_DEADLOCK_GUARD;
  cs_test_math_params(job, cs_math_default_params());
}

void cs_test_math_params(cs_job *job, cs_math_params p) {
  memcpy(job->engine.params.bytes, &p, sizeof p);
  job->engine.has_options = true;
}

cs_math_params *cs_test_math(cs_job *job) { return (cs_math_params *)job->engine.params.bytes; }

bool cs_test_quick(void) { return getenv("CS_TEST_QUICK") != NULL; }

int cs_test_run(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void cs_test_dcin_adapter(cs_adapter_config *a, int mst, int slv) {
  memset(a, 0, sizeof *a);
  a->driver_cycle_frequency_ghz = 1.0;
  a->ip_frequency_ghz = 1.0;
  a->noc_frequency_ghz = 2.0;
  a->mst_rd_outstanding = a->mst_wr_outstanding = mst;
  a->slv_rd_outstanding = a->slv_wr_outstanding = slv;
  a->burst_length = 4;
  a->bw_bytes = 128;
}

dcin_sim *cs_test_dcin_sim(const char *die, const char *layout, int mst, int slv, bool yx,
                           bool check) {
  cs_die_params p;
  cs_layout l;
  cs_adapter_config a;
  cs_err err;
  cs_err_clear(&err);
  ck_assert_int_eq(cs_topo_die(die, &p, &err), 0);
  ck_assert_int_eq(cs_topo_layout(layout, &l, &err), 0);
  p.routing_yx = yx;
  cs_test_dcin_adapter(&a, mst, slv);
  dcin_sim *s = NULL;
  int rc = dcin_sim_create(&p, &l, &a, &s, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
  s->check_each_cycle = check;
  return s;
}
