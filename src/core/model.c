/* Names of the model's enums, as they appear in spec files, HDF5 columns and messages. */
#include "commsweep/model.h"

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
