/* L1 expansion (seed tbl-cr-05): steps of concurrent flows, each flow split into transactions.
 *
 * Participants of the ring and pairwise algorithms are taken in ascending order (participant
 * index i = rank in that order), so the result and the cache key agree whatever the list order.
 * Chunk c of the message holds floor(M/N) bytes plus one for c < M mod N: bytes are conserved
 * exactly.  Ring step t of the reduce-scatter phase sends chunk (i - t) mod N from i to i+1; the
 * all-gather phase step s sends chunk (i + 1 - s) mod N; pairwise step t sends from i to
 * (i + t + 1) mod N the block destined for that peer.
 *
 * The dimension-decomposed allreduces lay participant index i on spec.grid (dimension 0
 * fastest: c_d = (i / (g_0 ... g_{d-1})) mod g_d) and run ring phases along one dimension at a
 * time, every row of that dimension at once, each participant sending to its +1 neighbour in the
 * dimension.  dimring: a whole ring allreduce of M per dimension (reduce-scatter then all-gather
 * of X, then of Y, then of Z).  dimring_rsag: reduce-scatter along X on M, along Y on the piece
 * each participant then holds, along Z on its piece of that, then all-gather Z, Y, X in reverse.
 * Dimensions of size 1 take no steps. */
#include "commsweep/expand.h"

#include <stdlib.h>
#include <string.h>

#include "commsweep/bigmem.h"

typedef struct flow_shape {
  int src_index, dst_index; /* participant indices in sorted order */
  uint64_t bytes;
} flow_shape;

static uint64_t chunk_bytes(uint64_t m, int n, int c) {
  return m / (uint64_t)n + ((uint64_t)c < m % (uint64_t)n ? 1 : 0);
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

static int grid_dims(const cs_spec *spec) {
  int d = 0;
  while (d < CS_MAX_GRID_DIMS && spec->grid[d]) d++;
  return d;
}

static uint32_t num_steps_of(const cs_spec *spec) {
  if (spec->primitive != CS_PRIM_ALLREDUCE || !cs_algorithm_uses_grid(spec->algorithm))
    return cs_expand_num_steps(spec->primitive, spec->num_participants);
  uint32_t steps = 0;
  for (int d = 0; d < grid_dims(spec); d++) steps += 2 * (uint32_t)(spec->grid[d] - 1);
  return steps;
}

/* Which ring phase step t of a dimension-decomposed allreduce belongs to. */
typedef struct dim_phase {
  int dim;     /* grid dimension the step runs along */
  bool gather; /* all-gather (else reduce-scatter) */
  int step;    /* step inside the phase, 0 .. g_dim - 2 */
} dim_phase;

static dim_phase phase_of(const cs_spec *spec, uint32_t t) {
  int dims = grid_dims(spec), n_ph = 0;
  dim_phase order[2 * CS_MAX_GRID_DIMS];
  for (int k = 0; k < 2 * dims; k++) {
    int d = spec->algorithm == CS_ALGO_DIMRING ? k / 2 : (k < dims ? k : 2 * dims - 1 - k);
    bool gather = spec->algorithm == CS_ALGO_DIMRING ? k % 2 == 1 : k >= dims;
    order[n_ph++] = (dim_phase){d, gather, 0};
  }
  for (int k = 0; k < n_ph; k++) {
    uint32_t len = (uint32_t)(spec->grid[order[k].dim] - 1);
    if (t < len) return (dim_phase){order[k].dim, order[k].gather, (int)t};
    t -= len;
  }
  return (dim_phase){0, false, 0}; /* not reached for t < num_steps_of() */
}

/* Flow of participant index i in step t of a dimension-decomposed allreduce. */
static flow_shape dim_shape_of(const cs_spec *spec, uint32_t t, int i) {
  dim_phase ph = phase_of(spec, t);
  int c[CS_MAX_GRID_DIMS] = {0, 0, 0}, stride = 1, stride_d = 1;
  for (int d = 0; d < grid_dims(spec); d++) {
    c[d] = (i / stride) % spec->grid[d];
    if (d == ph.dim) stride_d = stride;
    stride *= spec->grid[d];
  }
  int g = spec->grid[ph.dim];
  uint64_t piece = spec->msg_size_bytes;
  if (spec->algorithm == CS_ALGO_DIMRING_RSAG)
    for (int d = 0; d < ph.dim; d++) piece = chunk_bytes(piece, spec->grid[d], mod(c[d] + 1, spec->grid[d]));
  int chunk = ph.gather ? mod(c[ph.dim] + 1 - ph.step, g) : mod(c[ph.dim] - ph.step, g);
  flow_shape s = {i, i + (mod(c[ph.dim] + 1, g) - c[ph.dim]) * stride_d, chunk_bytes(piece, g, chunk)};
  return s;
}

uint32_t cs_expand_num_steps(cs_primitive p, int n) {
  switch (p) {
    case CS_PRIM_ALLREDUCE: return (uint32_t)(2 * (n - 1));
    case CS_PRIM_ALLGATHER:
    case CS_PRIM_REDUCESCATTER:
    case CS_PRIM_ALLTOALL: return (uint32_t)(n - 1);
    case CS_PRIM_P2P: return 1;
    default: return 0;
  }
}

uint64_t cs_expand_total_bytes(cs_primitive p, uint64_t m, int n) {
  if (p == CS_PRIM_P2P) return m;
  if (n < 1) return 0;
  uint64_t k = p == CS_PRIM_ALLREDUCE ? 2 : 1;
  uint64_t factor = k * (uint64_t)(n - 1);
  return factor * (m / (uint64_t)n) + factor * (m % (uint64_t)n) / (uint64_t)n;
}

/* Flow f (0 <= f < flows_per_step) of step t. */
static flow_shape shape_of(const cs_spec *spec, uint32_t t, int f) {
  if (spec->primitive == CS_PRIM_ALLREDUCE && cs_algorithm_uses_grid(spec->algorithm))
    return dim_shape_of(spec, t, f);
  int n = spec->num_participants;
  uint64_t m = spec->msg_size_bytes;
  int steps_rs = n - 1;
  flow_shape s = {f, mod(f + 1, n), 0};
  switch (spec->primitive) {
    case CS_PRIM_ALLREDUCE:
      s.bytes = (int)t < steps_rs ? chunk_bytes(m, n, mod(f - (int)t, n))
                                  : chunk_bytes(m, n, mod(f + 1 - ((int)t - steps_rs), n));
      break;
    case CS_PRIM_ALLGATHER:
    case CS_PRIM_REDUCESCATTER: s.bytes = chunk_bytes(m, n, mod(f - (int)t, n)); break;
    case CS_PRIM_ALLTOALL:
      s.dst_index = mod(f + (int)t + 1, n);
      s.bytes = chunk_bytes(m, n, s.dst_index);
      break;
    case CS_PRIM_P2P:
      s = (flow_shape){0, 1, m};
      break;
    default: break;
  }
  return s;
}

static int flows_per_step(const cs_spec *spec) {
  return spec->primitive == CS_PRIM_P2P ? 1 : spec->num_participants;
}

static int check_shape(const cs_job *job, cs_err *err) {
  const cs_spec *spec = &job->spec;
  if ((unsigned)spec->primitive >= CS_PRIM_COUNT)
    return cs_err_set(err, CS_EINVAL, "expand: invalid primitive %d", (int)spec->primitive);
  if (spec->num_participants < 2 ||
      spec->num_participants > CS_MAX_PARTICIPANTS)
    return cs_err_set(err, CS_EINVAL, "expand: %d participants (need 2 to %d)",
                      spec->num_participants, CS_MAX_PARTICIPANTS);
  if (spec->primitive == CS_PRIM_ALLREDUCE && cs_algorithm_uses_grid(spec->algorithm)) {
    long product = 1;
    for (int d = 0; d < grid_dims(spec); d++) product *= spec->grid[d];
    if (!grid_dims(spec) || product != spec->num_participants)
      return cs_err_set(err, CS_EINVAL, "expand: %s needs a grid whose product is the %d participants",
                        cs_algorithm_name(spec->algorithm), spec->num_participants);
  }
  if (job->adapter.bw_bytes < 1 || job->adapter.burst_length < 1)
    return cs_err_set(err, CS_EINVAL, "expand: bw_bytes %d and burst_length %d must be positive",
                      job->adapter.bw_bytes, job->adapter.burst_length);
  return CS_OK;
}

int cs_expand_count(const cs_job *job, uint64_t *num_txns, uint32_t *num_steps, cs_err *err) {
  int rc = check_shape(job, err);
  if (rc) return rc;
  const cs_spec *spec = &job->spec;
  uint32_t steps = num_steps_of(spec);
  uint64_t bw = (uint64_t)job->adapter.bw_bytes, burst = (uint64_t)job->adapter.burst_length;
  uint64_t total = 0;
  int fps = flows_per_step(spec);
  for (uint32_t t = 0; t < steps; t++)
    for (int f = 0; f < fps; f++) {
      uint64_t flits = (shape_of(spec, t, f).bytes + bw - 1) / bw;
      total += (flits + burst - 1) / burst;
    }
  if (total > CS_MAX_TXNS_PER_JOB)
    return cs_err_set(err, CS_EINVAL,
                      "expand: %llu transactions exceed the per-job limit of %u (raise burst_length "
                      "or bw_bytes, or lower msg_size_bytes)",
                      (unsigned long long)total, CS_MAX_TXNS_PER_JOB);
  *num_txns = total;
  *num_steps = steps;
  return CS_OK;
}

void cs_plan_free(cs_plan *plan) {
  if (!plan) return;
  free(plan->flows);
  free(plan->txns);
  free(plan->txn_flow);
  free(plan->step_txn_begin);
  memset(plan, 0, sizeof *plan);
}

int cs_expand(const cs_job *job, cs_plan *plan, cs_err *err) {
  memset(plan, 0, sizeof *plan);
  uint64_t num_txns;
  uint32_t steps;
  int rc = cs_expand_count(job, &num_txns, &steps, err);
  if (rc) return rc;
  const cs_spec *spec = &job->spec;
  int fps = flows_per_step(spec);
  cs_plan p = {0};
  p.num_steps = steps;
  p.flows_per_step = (uint32_t)fps;
  p.num_flows = steps * (uint32_t)fps;
  p.num_txns = num_txns;
  p.total_comm_bytes = cs_expand_total_bytes(spec->primitive, spec->msg_size_bytes,
                                             spec->num_participants);
  p.flows = calloc(p.num_flows ? p.num_flows : 1, sizeof *p.flows);
  p.txns = cs_big_calloc(num_txns ? num_txns : 1, sizeof *p.txns);
  p.txn_flow = cs_big_calloc(num_txns ? num_txns : 1, sizeof *p.txn_flow);
  p.step_txn_begin = calloc((size_t)steps + 1, sizeof *p.step_txn_begin);
  if (!p.flows || !p.txns || !p.txn_flow || !p.step_txn_begin) {
    cs_plan_free(&p);
    return cs_err_set(err, CS_ENOMEM, "expand: out of memory for %llu transactions",
                      (unsigned long long)num_txns);
  }
  int32_t order[CS_MAX_PARTICIPANTS];
  cs_spec_participant_order(spec, order);
  uint64_t bw = (uint64_t)job->adapter.bw_bytes, burst = (uint64_t)job->adapter.burst_length;
  uint8_t is_read = spec->primitive == CS_PRIM_P2P && spec->p2p_op == CS_P2P_READ;
  uint64_t next = 0;
  for (uint32_t t = 0; t < steps; t++) {
    p.step_txn_begin[t] = next;
    for (int f = 0; f < fps; f++) {
      flow_shape s = shape_of(spec, t, f);
      uint32_t fi = t * (uint32_t)fps + (uint32_t)f;
      cs_flow *flow = &p.flows[fi];
      flow->step = t;
      flow->src = order[s.src_index];
      flow->dst = order[s.dst_index];
      flow->is_read = is_read;
      flow->bytes = s.bytes;
      flow->flits = (s.bytes + bw - 1) / bw;
      flow->num_txns = (flow->flits + burst - 1) / burst;
      flow->first_txn = next;
      for (uint64_t k = 0; k < flow->num_txns; k++, next++) {
        uint64_t left = flow->flits - k * burst;
        p.txns[next] = (cs_inject){.request_id = next,
                                   .src_id = flow->src,
                                   .dst_id = flow->dst,
                                   .is_read = is_read,
                                   .packet_type = CS_PKT_REQ,
                                   .burst_length = (uint16_t)(left < burst ? left : burst)};
        p.txn_flow[next] = fi;
      }
    }
  }
  p.step_txn_begin[steps] = next;
  *plan = p;
  return CS_OK;
}
