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
  if (n <= 0 || n > CS_MAX_PARTICIPANTS) return;
  memcpy(out, spec->participants, (size_t)n * sizeof *out);
  if (spec->primitive == CS_PRIM_P2P) return;
  int i = 1;
  while (i < n && out[i - 1] <= out[i]) i++;
  if (i < n) qsort(out, (size_t)n, sizeof *out, cmp_i32); /* most lists come sorted */
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
