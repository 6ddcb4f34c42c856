/* The file's schema as three column tables (one row per column: name, C field, kind, unit,
 * meaning).  The HDF5 compound types, the unit/description attributes and docs/hdf5-schema.md
 * all follow these tables; the memory layout of each row struct *is* the file layout, so the
 * write path never converts. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "store_int.h"

#define U64(s, f, unit, doc) {#f, offsetof(s, f), CS_COL_U64, 0, unit, doc}
#define F64(s, f, unit, doc) {#f, offsetof(s, f), CS_COL_F64, 0, unit, doc}
#define U32(s, f, unit, doc) {#f, offsetof(s, f), CS_COL_U32, 0, unit, doc}
#define I32(s, f, unit, doc) {#f, offsetof(s, f), CS_COL_I32, 0, unit, doc}
#define I16(s, f, unit, doc) {#f, offsetof(s, f), CS_COL_I16, 0, unit, doc}
#define U16(s, f, unit, doc) {#f, offsetof(s, f), CS_COL_U16, 0, unit, doc}
#define U8(s, f, unit, doc) {#f, offsetof(s, f), CS_COL_U8, 0, unit, doc}
#define STR(s, f, doc) {#f, offsetof(s, f), CS_COL_STR, sizeof(((s *)0)->f), NULL, doc}

#define J cs_store_job_row
const cs_col cs_store_job_cols[] = {
    {"key", offsetof(J, key), CS_COL_KEY, CS_STORE_KEY_LEN, NULL,
     "cache key: SHA-256 (hex) of the job's canonical inputs and the adapter version"},
    STR(J, sweep, "name of the sweep that added this row"),
    STR(J, primitive, "allreduce | allgather | reducescatter | alltoall | p2p"),
    STR(J, algorithm, "ring | pairwise | direct"),
    U64(J, msg_size_bytes, "B", "message size M"),
    STR(J, dtype, "element type (metadata only)"),
    I32(J, num_participants, NULL, "participant count N"),
    STR(J, participants, "logical GDMA ids, comma separated"),
    STR(J, p2p_op, "read | write for p2p, empty otherwise"),
    STR(J, topology, "die topology"),
    I32(J, num_dies, NULL, "number of dies"),
    STR(J, dcin_layout, "multi-die layout"),
    I32(J, mst_rd_outstanding, NULL, "read trackers of a logical GDMA"),
    I32(J, mst_wr_outstanding, NULL, "write trackers of a logical GDMA"),
    I32(J, slv_rd_outstanding, NULL, "read trackers of a physical DDR channel"),
    I32(J, slv_wr_outstanding, NULL, "write trackers of a physical DDR channel"),
    I32(J, burst_length, "flit", "flits per transaction"),
    I32(J, bw_bytes, "B", "bytes per flit"),
    F64(J, driver_cycle_frequency_ghz, "GHz", "driver tick frequency"),
    F64(J, ip_frequency_ghz, "GHz", "IP clock"),
    F64(J, noc_frequency_ghz, "GHz", "NoC clock"),
    STR(J, engine, "engine: math | dcin"),
    I32(J, num_steps, NULL, "algorithm steps (from L1 expansion)"),
    U64(J, expected_transactions, NULL, "transactions of the job (from L1 expansion)"),
    U64(J, txlog_reserved_offset, "record", "first /txlog record reserved for the job"),
    U64(J, txlog_reserved_count, "record", "records reserved (0: reserved in results-only mode)"),
    STR(J, job_json, "canonical JSON of the job's inputs: {adapter, engine, spec}"),
    {NULL, 0, 0, 0, NULL, NULL}};
#undef J

#define R cs_store_result_row
const cs_col cs_store_result_cols[] = {
    {"status", offsetof(R, status), CS_COL_STATUS, 0, NULL, "pending | done | failed"},
    STR(R, engine, "engine that produced the row"),
    F64(R, total_time_us, "us", "max rsp_complete_tick / f_driver (tbl-cr-09)"),
    F64(R, req_phase_us, "us", "sum of req_complete - req_inject over transactions"),
    F64(R, rsp_phase_us, "us", "sum of rsp_complete - rsp_inject over transactions"),
    F64(R, max_chip_latency_us, "us", "max over participants of their last rsp_complete"),
    F64(R, straggler_ratio, NULL, "max_i T_i / median_i T_i"),
    F64(R, bus_bw_gb_per_s, "GB/s", "total_comm_bytes / total_time (GB = 1e9 B)"),
    U64(R, total_comm_bytes, "B", "bytes per participant (tbl-cr-06)"),
    U32(R, algorithm_steps, NULL, "T_steps"),
    U64(R, sim_cycles, "cycle", "internal cycles simulated (0 for closed-form engines)"),
    U64(R, total_ticks, "tick", "driver ticks at the end of the job"),
    F64(R, wall_time_s, "s", "host time of the job (not deterministic, not in the checksum)"),
    U64(R, num_transactions, NULL, "transactions simulated"),
    U64(R, retries, NULL, "sum of retry counts"),
    U64(R, block_rn, NULL, "sum of RN block counters"),
    U64(R, block_sn, NULL, "sum of SN block counters"),
    U64(R, block_d2d, NULL, "sum of D2D block counters"),
    U64(R, cross_die_transactions, NULL, "transactions crossing a die boundary"),
    U64(R, cross_die_bytes, "B", "bytes crossing a die boundary"),
    U64(R, flit_hops, NULL, "flit moves between ring slices or links"),
    U64(R, txlog_offset, "record", "first /txlog record of the job"),
    U64(R, txlog_count, "record", "records of the job in /txlog (0 in results-only mode)"),
    STR(R, error, "error message of a failed job"),
    U64(R, txlog_checksum, NULL, "XXH64 of the job's /txlog slice (seed: row); 0 when empty"),
    U64(R, checksum, NULL, "XXH64 over row index, key and every other column but wall_time_s"),
    {NULL, 0, 0, 0, NULL, NULL}};
#undef R

#define T cs_store_txn_row
const cs_col cs_store_txn_cols[] = {
    U64(T, job, NULL, "row of /jobs and /results the record belongs to"),
    U32(T, step, NULL, "algorithm step"),
    U64(T, request_id, NULL, "request id, unique within the job"),
    I32(T, src, NULL, "logical GDMA id (requester)"),
    I32(T, dst, NULL, "logical DDR id (target)"),
    I16(T, src_die, NULL, "die of the source"),
    I16(T, dst_die, NULL, "die of the destination"),
    I16(T, src_node, NULL, "node of the source inside its die"),
    I16(T, dst_node, NULL, "node of the destination inside its die"),
    I16(T, src_channel, NULL, "physical gdma channel"),
    I16(T, dst_channel, NULL, "physical ddr channel"),
    I16(T, d2d_src_node, NULL, "D2D link source node, -1 when die-local"),
    I16(T, d2d_dst_node, NULL, "D2D link destination node, -1 when die-local"),
    U8(T, is_read, NULL, "1 read, 0 write"),
    U16(T, burst_length, "flit", "flits of the transaction"),
    U64(T, req_inject_tick, "tick", "req injected"),
    U64(T, req_complete_tick, "tick", "req phase completed"),
    U64(T, rsp_inject_tick, "tick", "rsp injected"),
    U64(T, rsp_complete_tick, "tick", "rsp phase completed"),
    U32(T, retry_count, NULL, "retries"),
    U32(T, rn_rd_block, NULL, "RN read tracker blocks"),
    U32(T, rn_wr_block, NULL, "RN write tracker blocks"),
    U32(T, rn_rdb_block, NULL, "RN read data buffer blocks"),
    U32(T, rn_wdb_block, NULL, "RN write data buffer blocks"),
    U32(T, sn_ro_block, NULL, "SN read-only tracker blocks"),
    U32(T, sn_share_block, NULL, "SN shared tracker blocks"),
    U32(T, sn_wdb_block, NULL, "SN write data buffer blocks"),
    U32(T, d2d_ro_block, NULL, "D2D read-only tracker blocks"),
    U32(T, d2d_share_block, NULL, "D2D shared tracker blocks"),
    U32(T, d2d_wdb_block, NULL, "D2D write data buffer blocks"),
    U32(T, eject_retries, NULL, "failed eject attempts of the transaction's flits"),
    U64(T, req_inject_cycle, "cycle", "NoC cycle of req inject"),
    U64(T, wdata_gen_cycle, "cycle", "NoC cycle write data generated"),
    U64(T, req_complete_cycle, "cycle", "NoC cycle req completed"),
    U64(T, rsp_inject_cycle, "cycle", "NoC cycle rsp injected"),
    U64(T, wdata_complete_cycle, "cycle", "NoC cycle write data completed"),
    U64(T, rsp_complete_cycle, "cycle", "NoC cycle rsp completed"),
    {NULL, 0, 0, 0, NULL, NULL}};
#undef T

/* Padding is explicit in every row struct, so the bytes the checksum covers are all defined. */
_Static_assert(sizeof(cs_store_result_row) == 1224, "result row layout changed");
_Static_assert(sizeof(cs_store_txn_row) == 176, "txlog row layout changed");
_Static_assert(sizeof(cs_store_job_row) == 4680, "job row layout changed");

static hid_t status_type(void) {
  hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
  const char *names[] = {"pending", "done", "failed"};
  for (int8_t v = 0; v < 3; v++) H5Tenum_insert(t, names[v], &v);
  return t;
}

static hid_t member_type(const cs_col *c) {
  switch (c->kind) {
    case CS_COL_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case CS_COL_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case CS_COL_U32: return H5Tcopy(H5T_NATIVE_UINT32);
    case CS_COL_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case CS_COL_I16: return H5Tcopy(H5T_NATIVE_INT16);
    case CS_COL_U16: return H5Tcopy(H5T_NATIVE_UINT16);
    case CS_COL_U8: return H5Tcopy(H5T_NATIVE_UINT8);
    case CS_COL_STATUS: return status_type();
    case CS_COL_STR:
    case CS_COL_KEY: {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, c->size);
      H5Tset_strpad(t, c->kind == CS_COL_KEY ? H5T_STR_NULLPAD : H5T_STR_NULLTERM);
      return t;
    }
  }
  return H5I_INVALID_HID;
}

hid_t cs_store_type_create(const cs_col *cols, size_t struct_size) {
  hid_t t = H5Tcreate(H5T_COMPOUND, struct_size);
  if (t < 0) return t;
  for (const cs_col *c = cols; c->name; c++) {
    hid_t m = member_type(c);
    herr_t rc = m < 0 ? -1 : H5Tinsert(t, c->name, c->offset, m);
    if (m >= 0) H5Tclose(m);
    if (rc < 0) {
      H5Tclose(t);
      return H5I_INVALID_HID;
    }
  }
  return t;
}

int cs_store_type_describe(hid_t dset, const cs_col *cols, const char *what, cs_err *err) {
  if (cs_store_attr_text(dset, "description", what, err)) return err->code;
  char name[96];
  for (const cs_col *c = cols; c->name; c++) {
    snprintf(name, sizeof name, "%s.description", c->name);
    if (cs_store_attr_text(dset, name, c->doc, err)) return err->code;
    if (!c->unit) continue;
    snprintf(name, sizeof name, "%s.unit", c->name);
    if (cs_store_attr_text(dset, name, c->unit, err)) return err->code;
  }
  return CS_OK;
}
