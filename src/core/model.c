/* Names of the model's enums, as they appear in spec files, HDF5 columns and messages. */
#include "commsweep/model.h"

#include <stdlib.h>
#include <string.h>

#include "commsweep/err.h"

static const char *const primitive_names[CS_PRIM_COUNT] = {"allreduce", "allgather",
                                                           "reducescatter", "alltoall", "p2p"};
static const char *const algorithm_names[CS_ALGO_COUNT] = {"ring", "pairwise", "direct",
                                                              "dimring", "dimring_rsag"};

const char *cs_primitive_name(cs_primitive p) {
  return (unsigned)p < CS_PRIM_COUNT ? primitive_names[p] : NULL;
}

const char *cs_algorithm_name(cs_algorithm a) {
  return (unsigned)a < CS_ALGO_COUNT ? algorithm_names[a] : NULL;
}

const char *cs_p2p_op_name(cs_p2p_op op) {
  switch (op) {
    case CS_P2P_READ: return "read";
    case CS_P2P_WRITE: return "write";
    case CS_P2P_NONE: return "none";
  }
  return NULL;
}

int cs_primitive_parse(const char *name, cs_primitive *out) {
  for (int i = 0; i < CS_PRIM_COUNT; i++)
    if (strcmp(name, primitive_names[i]) == 0) {
      *out = (cs_primitive)i;
      return CS_OK;
    }
  return CS_EINVAL;
}

bool cs_algorithm_uses_grid(cs_algorithm a) {
  return a == CS_ALGO_DIMRING || a == CS_ALGO_DIMRING_RSAG;
}

int cs_algorithm_parse(const char *name, cs_algorithm *out) {
  for (int i = 0; i < CS_ALGO_COUNT; i++)
    if (strcmp(name, algorithm_names[i]) == 0) {
      *out = (cs_algorithm)i;
      return CS_OK;
    }
  return CS_EINVAL;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

void cs_spec_participant_order(const cs_spec *spec, int32_t *out) {
  int n = spec->num_participants;
  if (n <= 0) return;
  if (spec->num_participant_runs > 0) {
    for (int r = 0, k = 0; r < spec->num_participant_runs && r < CS_MAX_PARTICIPANT_RUNS; r++)
      for (int32_t i = 0; i < spec->participants[2 * r + 1] && k < n; i++)
        out[k++] = spec->participants[2 * r] + i;
    return;
  }
  if (n > CS_MAX_LISTED_PARTICIPANTS) return;
  memcpy(out, spec->participants, (size_t)n * sizeof *out);
  if (spec->primitive == CS_PRIM_P2P) return;
  int i = 1;
  while (i < n && out[i - 1] <= out[i]) i++;
  if (i < n) qsort(out, (size_t)n, sizeof *out, cmp_i32); /* most lists come sorted */
}

int32_t cs_spec_participant(const cs_spec *spec, int i) {
  if (spec->num_participant_runs <= 0)
    return i >= 0 && i < CS_MAX_LISTED_PARTICIPANTS ? spec->participants[i] : -1;
  for (int r = 0; r < spec->num_participant_runs && r < CS_MAX_PARTICIPANT_RUNS; r++) {
    if (i < spec->participants[2 * r + 1]) return spec->participants[2 * r] + i;
    i -= spec->participants[2 * r + 1];
  }
  return -1;
}

int32_t cs_spec_max_participant(const cs_spec *spec) {
  int runs = spec->num_participant_runs;
  if (runs > 0 && runs <= CS_MAX_PARTICIPANT_RUNS)
    return spec->participants[2 * runs - 2] + spec->participants[2 * runs - 1] - 1;
  int32_t top = -1;
  for (int i = 0; i < spec->num_participants && i < CS_MAX_LISTED_PARTICIPANTS; i++)
    if (spec->participants[i] > top) top = spec->participants[i];
  return top;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int cs_spec_set_participants(cs_spec *spec, const int32_t *ids, int n, int64_t *scratch, int *a,
                             int *b) {
  if (n <= CS_MAX_LISTED_PARTICIPANTS) {
    spec->num_participant_runs = 0;
    memset(spec->participants, 0, sizeof spec->participants);
    memcpy(spec->participants, ids, (size_t)(n > 0 ? n : 0) * sizeof *ids);
    spec->num_participants = n;
    return 0;
  }
  /* id in the high half, position in the low: equal ids sort by position */
  for (int i = 0; i < n; i++) scratch[i] = (int64_t)ids[i] << 32 | (int64_t)(uint32_t)i;
  qsort(scratch, (size_t)n, sizeof *scratch, cmp_i64);
  int runs = 0;
  for (int i = 0; i < n; i++) {
    int32_t id = (int32_t)(scratch[i] >> 32), prev = i ? (int32_t)(scratch[i - 1] >> 32) : 0;
    if (i && id == prev) {
      *a = (int)(uint32_t)scratch[i - 1];
      *b = (int)(uint32_t)scratch[i];
      return -1;
    }
    if (!i || id != prev + 1) runs++;
  }
  if (runs > CS_MAX_PARTICIPANT_RUNS) {
    *a = runs;
    return -2;
  }
  memset(spec->participants, 0, sizeof spec->participants);
  for (int i = 0, r = -1; i < n; i++) {
    int32_t id = (int32_t)(scratch[i] >> 32);
    if (r < 0 || id != spec->participants[2 * r] + spec->participants[2 * r + 1]) {
      r++;
      spec->participants[2 * r] = id;
    }
    spec->participants[2 * r + 1]++;
  }
  spec->num_participant_runs = runs;
  spec->num_participants = n;
  return 0;
}

#define TXN_ROW_(ctype, name, dim, kind, unit, flags, doc) \
  CS_COL_ROW(cs_txn_record, name, kind, unit, flags, doc)
const cs_col cs_txn_record_cols[] = {CS_TXN_RECORD_COLUMNS(TXN_ROW_){NULL, 0, 0, 0, NULL, NULL, 0}};
#undef TXN_ROW_

#define RESULT_ROW_(ctype, name, dim, kind, unit, flags, doc) \
  CS_COL_ROW(cs_result, name, kind, unit, flags, doc)
const cs_col cs_result_cols[] = {CS_RESULT_COLUMNS(RESULT_ROW_){NULL, 0, 0, 0, NULL, NULL, 0}};
#undef RESULT_ROW_

/* Every byte of a record is a column or explicit padding: the checksums cover them all. */
_Static_assert(sizeof(cs_txn_record) == 200, "transaction record has implicit padding");
_Static_assert(sizeof(cs_result) == 296, "result has implicit padding");
