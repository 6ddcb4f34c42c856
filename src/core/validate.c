/* The engine-neutral constraints of tbl-cr-10 (C4-C11).  C1-C3 describe the CrossRing adapter's
 * chips and are checked by the engines that model them (cs_engine_ops.validate).  Each message
 * names the constraint, the field, the offending value and the rule, so one failed job in a
 * sweep explains itself. */
#include "commsweep/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/config.h"

/* The frequency triple (C7) by field name. */
typedef struct freq {
  const char *key;
  double v;
} freq;

/* By the adapter field's own name (its key in the table and in chip_spec_summary). */
#define FREQ_(member) (freq){#member, cfg->member}
static void frequency_triple(const cs_adapter_config *cfg, freq out[3]) {
  out[0] = FREQ_(driver_cycle_frequency_ghz);
  out[1] = FREQ_(ip_frequency_ghz);
  out[2] = FREQ_(noc_frequency_ghz);
}
#undef FREQ_

int cs_validate_adapter(const cs_adapter_config *cfg, cs_err *err) {
  if (cfg->mst_rd_outstanding % 2)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "C4: mst_rd_outstanding = %d: must be even (a logical GDMA drives two DMA "
                      "channels alternately)",
                      cfg->mst_rd_outstanding);
  if (cfg->mst_wr_outstanding % 2)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "C4: mst_wr_outstanding = %d: must be even (a logical GDMA drives two DMA "
                      "channels alternately)",
                      cfg->mst_wr_outstanding);
  freq freqs[3];
  frequency_triple(cfg, freqs);
  for (int i = 0; i < 3; i++)
    if (!(freqs[i].v > 0) || !isfinite(freqs[i].v))
      return cs_err_set(err, CS_ECONSTRAINT, "C7: %s = %g: the frequency triple must be positive",
                        freqs[i].key, freqs[i].v);
  if (!cfg->enable_transaction_log)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "C8: enable_transaction_log = false: must be true, back-fill reads the log");
  return CS_OK;
}

/* C7: where chip_spec_summary states a frequency, it must be the adapter's. */
static int check_chip_frequencies(const cs_spec *spec, const cs_adapter_config *cfg, cs_err *err) {
  cJSON *chip = cJSON_Parse(spec->chip_spec_summary[0] ? spec->chip_spec_summary : "{}");
  if (!chip)
    return cs_err_set(err, CS_EINVAL, "C7: chip_spec_summary \"%.60s\" is not JSON",
                      spec->chip_spec_summary);
  int rc = cs_json_strict(chip, "chip_spec_summary", err);
  if (rc) {
    cJSON_Delete(chip);
    return cs_err_prefix(err, "C7");
  }
  freq freqs[3];
  frequency_triple(cfg, freqs);
  for (int i = 0; i < 3 && !rc; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(chip, freqs[i].key);
    if (v && (!cJSON_IsNumber(v) || v->valuedouble != freqs[i].v))
      rc = cs_err_set(err, CS_ECONSTRAINT,
                      "C7: chip_spec_summary.%s = %g differs from the adapter's %s = %g",
                      freqs[i].key, cJSON_IsNumber(v) ? v->valuedouble : NAN, freqs[i].key,
                      freqs[i].v);
  }
  cJSON_Delete(chip);
  return rc;
}

static cs_algorithm required_algorithm(cs_primitive p) {
  switch (p) {
    case CS_PRIM_ALLTOALL: return CS_ALGO_PAIRWISE;
    case CS_PRIM_P2P: return CS_ALGO_DIRECT;
    default: return CS_ALGO_RING;
  }
}

/* The runs of a long participant list (model.h): ascending, apart, summing to N, inside the
 * logical ids. */
static int check_runs(const cs_spec *spec, const cs_adapter_config *cfg, cs_err *err) {
  int runs = spec->num_participant_runs;
  long total = 0;
  int32_t next = 0;
  if (runs > CS_MAX_PARTICIPANT_RUNS)
    return cs_err_set(err, CS_EINVAL, "participants: %d runs, at most %d", runs,
                      CS_MAX_PARTICIPANT_RUNS);
  for (int r = 0; r < runs; r++) {
    int32_t first = spec->participants[2 * r], count = spec->participants[2 * r + 1];
    if (count < 1 || first < next || (long)first + count > cfg->num_initiators ||
        (long)first + count > cfg->num_targets)
      return cs_err_set(err, CS_EINVAL,
                        "participants: ids %d..%ld: logical ids run from 0 to %d (num_initiators "
                        "%d), each once",
                        (int)first, (long)first + count - 1, cfg->num_initiators - 1,
                        cfg->num_initiators);
    next = first + count + 1;
    total += count;
  }
  if (total != spec->num_participants)
    return cs_err_set(err, CS_EINTERNAL, "participants: runs of %ld ids for N = %d", total,
                      spec->num_participants);
  return CS_OK;
}

int cs_validate_spec(const cs_spec *spec, const cs_adapter_config *cfg, cs_err *err) {
  const char *prim = cs_primitive_name(spec->primitive);
  if (!prim) return cs_err_set(err, CS_EINVAL, "primitive: invalid value %d", (int)spec->primitive);
  cs_algorithm want = required_algorithm(spec->primitive);
  bool dim_allreduce = spec->primitive == CS_PRIM_ALLREDUCE && cs_algorithm_uses_grid(spec->algorithm);
  if (spec->algorithm != want && !dim_allreduce)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "C11: algorithm = \"%s\" for %s: the adapter supports only \"%s\" for %s "
                      "(ring for allreduce/allgather/reducescatter, pairwise for alltoall; "
                      "allreduce also dimring and dimring_rsag)",
                      cs_algorithm_name(spec->algorithm), prim, cs_algorithm_name(want), prim);
  int n = spec->num_participants;
  if (dim_allreduce) {
    long product = 1;
    for (int d = 0; d < CS_MAX_GRID_DIMS && spec->grid[d]; d++) product *= spec->grid[d];
    if (!spec->grid[0] || product != n)
      return cs_err_set(err, CS_ECONSTRAINT,
                        "C11: algorithm = \"%s\" needs spec.grid [X, Y, Z] whose product equals the "
                        "%d participants (grid product %ld)",
                        cs_algorithm_name(spec->algorithm), n, spec->grid[0] ? product : 0);
  }
  if (spec->primitive == CS_PRIM_P2P && n != 2)
    return cs_err_set(err, CS_EINVAL, "participants: p2p takes exactly 2 ([source, destination]), got %d", n);
  if (n < 2)
    return cs_err_set(err, CS_EINVAL, "participants: %s needs at least 2 participants, got %d", prim, n);
  if (spec->num_participant_runs > 0) { /* the sorted set in runs: distinct by construction */
    int rc = check_runs(spec, cfg, err);
    if (rc) return rc;
  }
  for (int i = 0; i < n && !spec->num_participant_runs; i++) {
    int32_t p = spec->participants[i];
    if (p < 0 || p >= cfg->num_initiators || p >= cfg->num_targets)
      return cs_err_set(err, CS_EINVAL,
                        "participants[%d] = %d: logical ids run from 0 to %d (num_initiators %d)",
                        i, p, cfg->num_initiators - 1, cfg->num_initiators);
    for (int j = 0; j < i; j++)
      if (spec->participants[j] == p)
        return cs_err_set(err, CS_ECONSTRAINT,
                          "C5: participants[%d] = %d repeats participants[%d]: participants must be distinct",
                          i, p, j);
  }
  if (spec->msg_size_bytes == 0)
    return cs_err_set(err, CS_EINVAL, "msg_size_bytes = 0: must be a positive integer");
  if (spec->primitive != CS_PRIM_P2P && spec->msg_size_bytes < (uint64_t)n)
    return cs_err_set(err, CS_EINVAL,
                      "msg_size_bytes = %llu: must be at least the participant count %d so every "
                      "chunk carries data",
                      (unsigned long long)spec->msg_size_bytes, n);
  if (spec->primitive == CS_PRIM_P2P && spec->p2p_op == CS_P2P_NONE)
    return cs_err_set(err, CS_EINVAL, "p2p_op: required for p2p (read | write)");
  if (spec->primitive != CS_PRIM_P2P && spec->p2p_op != CS_P2P_NONE)
    return cs_err_set(err, CS_EINVAL, "p2p_op: applies only to p2p, not %s", prim);
  return check_chip_frequencies(spec, cfg, err);
}

int cs_validate_step_injects(const cs_inject *injects, const uint32_t *flow_of, size_t n,
                             uint32_t step, cs_err *err) {
  /* Transactions of one flow are contiguous and share its target, so only the first transaction
   * of each run is compared, against the first transactions of earlier runs: O(flows^2). */
  size_t *starts = malloc((n ? n : 1) * sizeof *starts), nstarts = 0;
  if (!starts) return cs_err_set(err, CS_ENOMEM, "C6 check: out of memory");
  int rc = CS_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    if (injects[i].packet_type != CS_PKT_REQ && injects[i].packet_type != CS_PKT_RSP) {
      rc = cs_err_set(err, CS_ECONSTRAINT,
                      "C9: step %u request %llu: packet type %s: only req and rsp may be injected "
                      "(data is generated inside the engine)",
                      step, (unsigned long long)injects[i].request_id,
                      injects[i].packet_type == CS_PKT_DATA ? "data" : "unknown");
      break;
    }
    if (i > 0 && flow_of[i] == flow_of[i - 1]) continue;
    for (size_t k = 0; k < nstarts && !rc; k++) {
      size_t j = starts[k];
      if (injects[j].dst_id == injects[i].dst_id && flow_of[j] != flow_of[i])
        rc = cs_err_set(err, CS_ECONSTRAINT,
                        "C6: step %u: requests %llu and %llu of different flows both target DDR %d: "
                        "targets within a step must be distinct",
                        step, (unsigned long long)injects[j].request_id,
                        (unsigned long long)injects[i].request_id, injects[i].dst_id);
    }
    starts[nstarts++] = i;
  }
  free(starts);
  return rc;
}

int cs_validate_rsp(const cs_inject *req, const cs_inject *rsp, cs_err *err) {
  if (rsp->packet_type != CS_PKT_RSP)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: request %llu: the response must have packet type rsp",
                      (unsigned long long)rsp->request_id);
  if (rsp->request_id != req->request_id || rsp->src_id != req->dst_id ||
      rsp->dst_id != req->src_id || rsp->is_read != req->is_read)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "C10: rsp (id %llu, %d -> %d) does not reverse req (id %llu, %d -> %d): an rsp "
                      "must swap src/dst and reuse the request id",
                      (unsigned long long)rsp->request_id, rsp->src_id, rsp->dst_id,
                      (unsigned long long)req->request_id, req->src_id, req->dst_id);
  return CS_OK;
}
