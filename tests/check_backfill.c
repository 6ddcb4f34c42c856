/* L3 back-fill (seed tbl-cr-09) on hand-written transaction records: every EngineResult field
 * and every trace_meta summary against values worked out by hand in the comments, for even and
 * odd sender counts, a participant that sends nothing, and an empty (zero-time) job. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/backfill.h"
#include "test_support.h"

/* Six transactions of four senders (logical GDMAs 1, 3, 5, 9) on two dies, driver at 2 GHz
 * (0.5 ns per tick), 128-byte flits.
 *
 *   rec src die  burst  req inject->complete  rsp inject->complete  retry rn  sn  d2d
 *    0   1  0->0   4        0 -> 100            100 -> 140            1   1   0   0
 *    1   3  0->1   4        0 -> 120            120 -> 200            0   2   1   3
 *    2   5  1->1   2        0 ->  80             80 -> 100            2   0   4   0
 *    3   9  1->0   4        0 ->  90             90 -> 400            0   0   0   5
 *    4   1  0->0   1      140 -> 150            150 -> 160            3   0   0   0
 *    5   3  0->1   4      200 -> 210            210 -> 300            0   1   1   1
 *
 * (rn, sn and d2d are spread over the side's counters below; the sums are what count.) */
#define NREC 6
static const struct {
  int32_t src;
  int16_t src_die, dst_die;
  uint16_t burst;
  uint64_t t[4];
  uint32_t retry, rn, sn, d2d;
} table[NREC] = {
    {1, 0, 0, 4, {0, 100, 100, 140}, 1, 1, 0, 0},   {3, 0, 1, 4, {0, 120, 120, 200}, 0, 2, 1, 3},
    {5, 1, 1, 2, {0, 80, 80, 100}, 2, 0, 4, 0},     {9, 1, 0, 4, {0, 90, 90, 400}, 0, 0, 0, 5},
    {1, 0, 0, 1, {140, 150, 150, 160}, 3, 0, 0, 0}, {3, 0, 1, 4, {200, 210, 210, 300}, 0, 1, 1, 1}};

static cs_job job;
static cs_plan plan;
static cs_txn_record recs[NREC];

/* The job's participants (any order: back-fill ranks them itself). */
static void setup_with(const int *parts, int n) {
  cs_test_job(&job, "math", CS_PRIM_ALLREDUCE, 4096, parts, n);
  job.adapter.driver_cycle_frequency_ghz = 2.0;
  job.adapter.bw_bytes = 128;
  memset(&plan, 0, sizeof plan);
  plan.num_txns = NREC;
  plan.num_steps = 6;
  plan.total_comm_bytes = 6144; /* tbl-cr-06, allreduce: 2 (N-1)/N M = 2 * 3/4 * 4096 */
  memset(recs, 0, sizeof recs);
  for (int i = 0; i < NREC; i++) {
    cs_txn_record *r = &recs[i];
    r->request_id = (uint64_t)i;
    r->src = table[i].src;
    r->dst = 20 + i;
    r->src_die = table[i].src_die;
    r->dst_die = table[i].dst_die;
    r->burst_length = table[i].burst;
    r->req_inject_tick = table[i].t[0];
    r->req_complete_tick = table[i].t[1];
    r->rsp_inject_tick = table[i].t[2];
    r->rsp_complete_tick = table[i].t[3];
    r->retry_count = table[i].retry;
    /* spread each side's sum over its counters so that every counter is summed */
    r->rn_rd_block = table[i].rn > 0, r->rn_wr_block = table[i].rn > 1;
    r->rn_rdb_block = table[i].rn > 2 ? table[i].rn - 2 : 0;
    r->sn_ro_block = table[i].sn > 0, r->sn_share_block = table[i].sn > 1;
    r->sn_wdb_block = table[i].sn > 2 ? table[i].sn - 2 : 0;
    r->d2d_ro_block = table[i].d2d > 0, r->d2d_share_block = table[i].d2d > 1;
    r->d2d_wdb_block = table[i].d2d > 2 ? table[i].d2d - 2 : 0;
    r->eject_retries = (uint32_t)i;
  }
}

static void setup(void) {
  const int parts[] = {9, 3, 5, 1};
  setup_with(parts, 4);
}

static void backfill(cs_result *r, const cs_engine_stats *stats) {
  cs_err err;
  ck_assert_int_eq(cs_backfill(&job, &plan, recs, stats, "math", r, &err), CS_OK);
}

START_TEST(time_metrics_should_follow_tbl_cr09) {
  cs_result r;
  backfill(&r, NULL);
  /* total: the latest final completion, tick 400 = 200 ns */
  ck_assert_double_eq_tol(r.total_time_us, 0.200, 1e-15);
  ck_assert_uint_eq(r.total_ticks, 400);
  /* req phases 100 + 120 + 80 + 90 + 10 + 10 = 410 ticks = 205 ns */
  ck_assert_double_eq_tol(r.req_phase_us, 0.205, 1e-15);
  /* rsp phases 40 + 80 + 20 + 310 + 10 + 90 = 550 ticks = 275 ns */
  ck_assert_double_eq_tol(r.rsp_phase_us, 0.275, 1e-15);
  /* bus bandwidth: 6144 B / 200 ns */
  ck_assert_double_eq_tol(r.bus_bw_gb_per_s, 30.72, 1e-12);
  ck_assert_uint_eq(r.total_comm_bytes, 6144);
  ck_assert_uint_eq(r.algorithm_steps, 6);
  ck_assert_uint_eq(r.num_transactions, NREC);
  ck_assert_str_eq(r.engine, "math");
  ck_assert_uint_eq(r.sim_cycles, 0); /* no engine stats given */
  ck_assert_uint_eq(r.flit_hops, 0);
  ck_assert_double_eq(r.wall_time_s, 0);
}
END_TEST

/* T_i, the last final completion of each sender: GDMA 1: 160, 3: 300, 5: 100, 9: 400 ticks.
 * Sorted 100, 160, 300, 400: an even count, median (160 + 300) / 2 = 230; max 400 = 200 ns. */
START_TEST(straggler_ratio_should_use_the_mean_of_the_middle_two_for_an_even_count) {
  cs_result r;
  backfill(&r, NULL);
  ck_assert_double_eq_tol(r.max_chip_latency_us, 0.200, 1e-15);
  ck_assert_double_eq_tol(r.straggler_ratio, 400.0 / 230.0, 1e-15);
}
END_TEST

/* Without GDMA 9 (record 3 then counts for nobody, its participant is not in the job):
 * T = 100, 160, 300, an odd count, median 160; max 300 = 150 ns.  The job's end is still the
 * last completion of any record, tick 400. */
START_TEST(straggler_ratio_should_use_the_middle_value_for_an_odd_count) {
  const int parts[] = {5, 1, 3};
  setup_with(parts, 3);
  cs_result r;
  backfill(&r, NULL);
  ck_assert_double_eq_tol(r.max_chip_latency_us, 0.150, 1e-15);
  ck_assert_double_eq_tol(r.straggler_ratio, 300.0 / 160.0, 1e-15);
  ck_assert_double_eq_tol(r.total_time_us, 0.200, 1e-15);
}
END_TEST

/* A participant that sends nothing (GDMA 7) is not a sender: the median is over the four that
 * send, as in the even case. */
START_TEST(straggler_ratio_should_ignore_participants_that_send_nothing) {
  const int parts[] = {7, 9, 3, 5, 1};
  setup_with(parts, 5);
  cs_result r;
  backfill(&r, NULL);
  ck_assert_double_eq_tol(r.straggler_ratio, 400.0 / 230.0, 1e-15);
  ck_assert_double_eq_tol(r.max_chip_latency_us, 0.200, 1e-15);
}
END_TEST

/* retries 1 + 2 + 3 = 6; rn 1 + 2 + 1 = 4; sn 1 + 4 + 1 = 6; d2d 3 + 5 + 1 = 9; cross-die:
 * records 1, 3 and 5, 4 + 4 + 4 flits of 128 B = 1536 B.  Engine stats pass through. */
START_TEST(summaries_should_sum_every_counter) {
  cs_engine_stats st = {.sim_cycles = 777, .skipped_cycles = 7, .flit_hops = 4242};
  cs_result r;
  backfill(&r, &st);
  ck_assert_uint_eq(r.retries, 6);
  ck_assert_uint_eq(r.block_rn, 4);
  ck_assert_uint_eq(r.block_sn, 6);
  ck_assert_uint_eq(r.block_d2d, 9);
  ck_assert_uint_eq(r.cross_die_transactions, 3);
  ck_assert_uint_eq(r.cross_die_bytes, 1536);
  ck_assert_uint_eq(r.sim_cycles, 777);
  ck_assert_uint_eq(r.flit_hops, 4242);
}
END_TEST

/* Per counter and per ordered die pair: 0->0 records 0 and 4 (5 flits), 0->1 records 1 and 5
 * (8 flits), 1->1 record 2 (2 flits), 1->0 record 3 (4 flits); eject retries 0+1+...+5 = 15. */
/* A counter of the trace_meta by its record column's name (the counters follow the table). */
static uint64_t counter(const cs_trace_meta *m, const char *name) {
  size_t k = 0;
  for (const cs_col *c = cs_txn_record_cols; c->name; c++) {
    if (!(c->flags & CS_COL_COUNTER)) continue;
    if (!strcmp(c->name, name)) return m->counter[k];
    k++;
  }
  ck_abort_msg("no counter column %s", name);
  return 0;
}

START_TEST(trace_meta_should_sum_per_counter_and_die_pair) {
  cs_trace_meta m;
  cs_backfill_trace_meta(recs, NREC, 128, &m);
  ck_assert_uint_eq(counter(&m, "retry_count"), 6);
  ck_assert_uint_eq(counter(&m, "rn_rd_block"), 3); /* records 0, 1, 5 */
  ck_assert_uint_eq(counter(&m, "rn_wr_block"), 1); /* record 1 */
  ck_assert_uint_eq(counter(&m, "rn_rdb_block") + counter(&m, "rn_wdb_block"), 0);
  ck_assert_uint_eq(counter(&m, "sn_ro_block"), 3);    /* records 1, 2, 5 */
  ck_assert_uint_eq(counter(&m, "sn_share_block"), 1); /* record 2 */
  ck_assert_uint_eq(counter(&m, "sn_wdb_block"), 2);   /* record 2: 4 - 2 */
  ck_assert_uint_eq(counter(&m, "d2d_ro_block"), 3);    /* records 1, 3, 5 */
  ck_assert_uint_eq(counter(&m, "d2d_share_block"), 2); /* records 1, 3 */
  ck_assert_uint_eq(counter(&m, "d2d_wdb_block"), 4);   /* 1 + 3 */
  ck_assert_uint_eq(counter(&m, "eject_retries"), 15);
  ck_assert_uint_eq(m.pair_txns[0][0], 2);
  ck_assert_uint_eq(m.pair_txns[0][1], 2);
  ck_assert_uint_eq(m.pair_txns[1][1], 1);
  ck_assert_uint_eq(m.pair_txns[1][0], 1);
  ck_assert_uint_eq(m.pair_bytes[0][0], 640);
  ck_assert_uint_eq(m.pair_bytes[0][1], 1024);
  ck_assert_uint_eq(m.pair_bytes[1][1], 256);
  ck_assert_uint_eq(m.pair_bytes[1][0], 512);
  uint64_t all = 0;
  for (int a = 0; a < CS_TRACE_MAX_DIES; a++)
    for (int b = 0; b < CS_TRACE_MAX_DIES; b++) all += m.pair_txns[a][b];
  ck_assert_uint_eq(all, NREC);
}
END_TEST

/* Nothing took time: no division by zero, bandwidth 0 and a straggler ratio of 1. */
START_TEST(a_job_that_took_no_time_should_give_zeros_and_ratio_one) {
  for (int i = 0; i < NREC; i++) {
    recs[i].req_inject_tick = recs[i].req_complete_tick = 0;
    recs[i].rsp_inject_tick = recs[i].rsp_complete_tick = 0;
  }
  cs_result r;
  backfill(&r, NULL);
  ck_assert_double_eq(r.total_time_us, 0);
  ck_assert_double_eq(r.bus_bw_gb_per_s, 0);
  ck_assert_double_eq(r.straggler_ratio, 1.0);
  ck_assert_double_eq(r.max_chip_latency_us, 0);
}
END_TEST

START_TEST(result_json_should_carry_the_aggregates_and_summaries) {
  cs_engine_stats st = {.sim_cycles = 777, .flit_hops = 4242};
  cs_result r;
  backfill(&r, &st);
  cJSON *agg = cJSON_CreateObject(), *meta = cJSON_CreateObject();
  cs_backfill_result_json(&r, agg, meta);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(agg, "total_time_us")->valuedouble, 0.2, 1e-15);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(agg, "bus_bw_gb_per_s")->valuedouble, 30.72, 1e-12);
  ck_assert_double_eq(cJSON_GetObjectItem(agg, "total_comm_bytes")->valuedouble, 6144);
  ck_assert_double_eq(cJSON_GetObjectItem(agg, "algorithm_steps")->valuedouble, 6);
  ck_assert_str_eq(cJSON_GetObjectItem(meta, "engine")->valuestring, "math");
  ck_assert_double_eq(cJSON_GetObjectItem(meta, "sim_cycles")->valuedouble, 777);
  ck_assert_double_eq(cJSON_GetObjectItem(meta, "block_d2d")->valuedouble, 9);
  ck_assert_double_eq(cJSON_GetObjectItem(meta, "cross_die_bytes")->valuedouble, 1536);
  cJSON_Delete(agg);
  cJSON_Delete(meta);
}
END_TEST

/* One line per record; each line a JSON object holding that record's values. */
START_TEST(jsonl_should_write_one_object_per_record) {
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  cs_err err;
  ck_assert_int_eq(cs_backfill_write_jsonl(f, NULL, recs, NREC, &err), CS_OK);
  rewind(f);
  char line[2048];
  int k = 0;
  while (fgets(line, sizeof line, f)) {
    cJSON *o = cJSON_Parse(line);
    ck_assert_ptr_nonnull(o);
    ck_assert_double_eq(cJSON_GetObjectItem(o, "request_id")->valuedouble, k);
    ck_assert_double_eq(cJSON_GetObjectItem(o, "src")->valuedouble, table[k].src);
    ck_assert_double_eq(cJSON_GetObjectItem(o, "rsp_complete_tick")->valuedouble, table[k].t[3]);
    ck_assert_double_eq(cJSON_GetObjectItem(o, "burst_length")->valuedouble, table[k].burst);
    cJSON_Delete(o);
    k++;
  }
  ck_assert_int_eq(k, NREC);
  fclose(f);
}
END_TEST

/* Every engine's extra columns fit the slots of the records (the registry assigns them in
 * order, so a column past the last slot would silently not be stored). */
START_TEST(engine_extra_columns_should_fit_their_slots) {
  size_t records = 0, results = 0, in_every_file = 0;
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++) {
    if (e - cs_engine_list() == CS_ENGINES_IN_EVERY_FILE) in_every_file = records;
    ck_assert_uint_eq(cs_engine_record_slot(*e), records);
    ck_assert_uint_eq(cs_engine_extra_slot(*e), results);
    for (const cs_engine_column *c = (*e)->record_columns; c && c->name; c++) records++;
    for (const cs_engine_column *c = (*e)->result_columns; c && c->name; c++) results++;
  }
  ck_assert_uint_le(records, CS_TXN_EXTRA_SLOTS);
  ck_assert_uint_le(results, CS_RESULT_EXTRA_SLOTS);
  /* the driver's -1 fill covers the slots of the engines in every file, no later one's */
  if (cs_engine_list()[CS_ENGINES_IN_EVERY_FILE] == NULL) in_every_file = records;
  ck_assert_uint_eq(cs_engine_record_slots(), in_every_file);
}
END_TEST

/* A JSON line written for a job of engine E holds E's record columns, each with the value of its
 * slot, and no other engine's. */
START_TEST(jsonl_should_carry_the_engines_record_columns) {
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++) {
    cs_txn_record r;
    memset(&r, 0, sizeof r);
    for (int s = 0; s < CS_TXN_EXTRA_SLOTS; s++) r.engine_extra[s] = 100 + s;
    char line[4096];
    cs_backfill_record_json(*e, &r, line, sizeof line);
    cJSON *o = cJSON_Parse(line);
    ck_assert_ptr_nonnull(o);
    size_t slot = cs_engine_record_slot(*e), own = 0;
    for (const cs_engine_column *c = (*e)->record_columns; c && c->name; c++, own++) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, c->name);
      ck_assert_msg(cJSON_IsNumber(v), "%s: column %s missing", (*e)->name, c->name);
      ck_assert_int_eq((int)v->valuedouble, 100 + (int)(slot + own));
    }
    ck_assert_int_eq(cJSON_GetArraySize(o), (int)(cs_cols_count(cs_txn_record_cols) + own));
    cJSON_Delete(o);
  }
}
END_TEST

/* Every column of the record's table is a member of its JSON line, with the record's value. */
START_TEST(jsonl_should_hold_every_record_field) {
  cs_txn_record r;
  memset(&r, 0, sizeof r);
  r.request_id = 42;
  r.src_die = 1;
  r.is_read = 1;
  r.rsp_complete_tick = 1234567890123ull;
  r.d2d_wdb_block = 7;
  r.src_channel = -1;
  char buf[4096];
  size_t n = cs_backfill_record_json(NULL, &r, buf, sizeof buf);
  ck_assert_uint_eq(n, strlen(buf));
  ck_assert_ptr_nonnull(strstr(buf, "\"is_read\":true"));
  ck_assert_ptr_nonnull(strstr(buf, "\"rsp_complete_tick\":1234567890123"));
  /* one member per column of the record's table, each with the record's value */
  cJSON *o = cJSON_Parse(buf);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(cJSON_GetArraySize(o), (int)cs_cols_count(cs_txn_record_cols));
  for (const cs_col *c = cs_txn_record_cols; c->name; c++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, c->name);
    ck_assert_msg(v != NULL, "column %s missing from the JSON line", c->name);
    double want = cs_col_number(c, &r);
    double got = cJSON_IsBool(v) ? (double)cJSON_IsTrue(v) : v->valuedouble;
    ck_assert_msg(got == want, "column %s: %g, expected %g", c->name, got, want);
  }
  cJSON_Delete(o);
}
END_TEST

/* Per-step summaries of four hand-made records over three steps (step 1 has none), bw_bytes
 * 32.  Expected values worked out by hand from the records below. */
START_TEST(step_summaries_should_sum_each_step_by_hand) {
  cs_txn_record r[4];
  memset(r, 0, sizeof r);
  /* step 0: a write die 0 -> 0, ticks 10/14/20/30, burst 4; a read die 0 -> 1, ticks
   * 5/9/12/40, burst 2, retry 3, rn_rd 1, rn_wdb 2, sn_share 4, d2d_ro 5, d2d_wdb 6, eject 7 */
  r[0] = (cs_txn_record){.step = 0, .req_inject_tick = 10, .req_complete_tick = 14,
                         .rsp_inject_tick = 20, .rsp_complete_tick = 30, .burst_length = 4};
  r[1] = (cs_txn_record){.step = 0, .req_inject_tick = 5, .req_complete_tick = 9,
                         .rsp_inject_tick = 12, .rsp_complete_tick = 40, .burst_length = 2,
                         .is_read = 1, .dst_die = 1, .retry_count = 3, .rn_rd_block = 1,
                         .rn_wdb_block = 2, .sn_share_block = 4, .d2d_ro_block = 5,
                         .d2d_wdb_block = 6, .eject_retries = 7};
  /* step 2: two writes, ticks 50/51/60/70 and 52/55/56/90, burst 1, one die 1 -> 0 */
  r[2] = (cs_txn_record){.step = 2, .req_inject_tick = 50, .req_complete_tick = 51,
                         .rsp_inject_tick = 60, .rsp_complete_tick = 70, .burst_length = 1};
  r[3] = (cs_txn_record){.step = 2, .req_inject_tick = 52, .req_complete_tick = 55,
                         .rsp_inject_tick = 56, .rsp_complete_tick = 90, .burst_length = 1,
                         .src_die = 1, .sn_ro_block = 8, .rn_wr_block = 9};
  cs_step_summary out[3];
  cs_err err;
  ck_assert_int_eq(cs_backfill_steps(r, 4, 3, 32, out, &err), 0);
  const cs_step_summary *a = &out[0], *b = &out[1], *c = &out[2];
  ck_assert_uint_eq(a->step, 0);
  ck_assert_uint_eq(a->transactions, 2);
  ck_assert_uint_eq(a->bytes, (4 + 2) * 32);
  ck_assert_uint_eq(a->reads, 1);
  ck_assert_uint_eq(a->writes, 1);
  ck_assert_uint_eq(a->first_req_inject_tick, 5);
  ck_assert_uint_eq(a->last_rsp_complete_tick, 40);
  ck_assert_uint_eq(a->span_ticks, 35);
  ck_assert_uint_eq(a->req_phase_ticks, (14 - 10) + (9 - 5));
  ck_assert_uint_eq(a->rsp_phase_ticks, (30 - 20) + (40 - 12));
  ck_assert_uint_eq(a->max_latency_ticks, 40 - 5);
  ck_assert_uint_eq(a->cross_die_transactions, 1);
  ck_assert_uint_eq(a->cross_die_bytes, 2 * 32);
  ck_assert_uint_eq(a->retries, 3);
  ck_assert_uint_eq(a->eject_retries, 7);
  ck_assert_uint_eq(a->block_rn, 1 + 2);
  ck_assert_uint_eq(a->block_sn, 4);
  ck_assert_uint_eq(a->block_d2d, 5 + 6);
  /* an empty step: zeros but its number */
  cs_step_summary empty;
  memset(&empty, 0, sizeof empty);
  empty.step = 1;
  ck_assert(memcmp(b, &empty, sizeof empty) == 0);
  ck_assert_uint_eq(c->transactions, 2);
  ck_assert_uint_eq(c->bytes, 64);
  ck_assert_uint_eq(c->writes, 2);
  ck_assert_uint_eq(c->first_req_inject_tick, 50);
  ck_assert_uint_eq(c->last_rsp_complete_tick, 90);
  ck_assert_uint_eq(c->span_ticks, 40);
  ck_assert_uint_eq(c->req_phase_ticks, 1 + 3);
  ck_assert_uint_eq(c->rsp_phase_ticks, 10 + 34);
  ck_assert_uint_eq(c->max_latency_ticks, 90 - 52);
  ck_assert_uint_eq(c->cross_die_transactions, 1);
  ck_assert_uint_eq(c->cross_die_bytes, 32);
  ck_assert_uint_eq(c->block_rn, 9);
  ck_assert_uint_eq(c->block_sn, 8);
  /* the order of the records does not matter */
  cs_txn_record rev[4] = {r[3], r[2], r[1], r[0]};
  cs_step_summary out2[3];
  ck_assert_int_eq(cs_backfill_steps(rev, 4, 3, 32, out2, &err), 0);
  ck_assert(memcmp(out, out2, sizeof out) == 0);
  /* a record beyond the job's steps is an internal error naming it */
  ck_assert_int_eq(cs_backfill_steps(r, 4, 2, 32, out, &err), CS_EINTERNAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "is of step 2, the job has 2 steps"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("backfill");
  TCase *tc = tcase_create("result");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, time_metrics_should_follow_tbl_cr09);
  tcase_add_test(tc, straggler_ratio_should_use_the_mean_of_the_middle_two_for_an_even_count);
  tcase_add_test(tc, straggler_ratio_should_use_the_middle_value_for_an_odd_count);
  tcase_add_test(tc, straggler_ratio_should_ignore_participants_that_send_nothing);
  tcase_add_test(tc, summaries_should_sum_every_counter);
  tcase_add_test(tc, a_job_that_took_no_time_should_give_zeros_and_ratio_one);
  suite_add_tcase(s, tc);
  tc = tcase_create("trace_meta");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, trace_meta_should_sum_per_counter_and_die_pair);
  tcase_add_test(tc, result_json_should_carry_the_aggregates_and_summaries);
  tcase_add_test(tc, jsonl_should_write_one_object_per_record);
  tcase_add_test(tc, jsonl_should_hold_every_record_field);
  tcase_add_test(tc, engine_extra_columns_should_fit_their_slots);
  tcase_add_test(tc, jsonl_should_carry_the_engines_record_columns);
  tcase_add_test(tc, step_summaries_should_sum_each_step_by_hand);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
