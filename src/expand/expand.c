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
      (spec->num_participants > CS_MAX_LISTED_PARTICIPANTS && spec->num_participant_runs <= 0))
    return cs_err_set(err, CS_EINVAL, "expand: %d participants (need at least 2, listed or in runs)",
                      spec->num_participants);
  if (spec->primitive == CS_PRIM_ALLREDUCE && cs_algorithm_uses_grid(spec->algorithm)) {
    long product = 1;
    for (int d = 0; d < grid_dims(spec); d++) product *= spec->grid[d];
    if (!grid_dims(spec) || product != spec->num_participants)
      return cs_err_set(err, CS_EINVAL, "expand: %s needs a grid whose product is the %d participants",
                        cs_algorithm_name(spec->algorithm), spec->num_participants);
  }
  if (job->adapter.bw_bytes < 1 || job->adapter.burst_length < 1 ||
      job->adapter.burst_length > UINT16_MAX)
    return cs_err_set(err, CS_EINVAL,
                      "expand: bw_bytes %d and burst_length %d must be positive (burst_length at "
                      "most %d)",
                      job->adapter.bw_bytes, job->adapter.burst_length, UINT16_MAX);
  return CS_OK;
}

/* Transactions of a flow of `bytes`. */
static uint64_t txns_of(uint64_t bytes, uint64_t bw, uint64_t burst) {
  return ((bytes + bw - 1) / bw + burst - 1) / burst;
}

/* Counts the transactions of every step into begin[0 .. steps] (when not NULL) and in total. */
static uint64_t count_steps(const cs_job *job, uint32_t steps, uint64_t *begin, uint64_t *widest) {
  const cs_spec *spec = &job->spec;
  uint64_t bw = (uint64_t)job->adapter.bw_bytes, burst = (uint64_t)job->adapter.burst_length;
  uint64_t total = 0, wide = 0;
  int fps = flows_per_step(spec);
  for (uint32_t t = 0; t < steps; t++) {
    if (begin) begin[t] = total;
    uint64_t in_step = 0;
    for (int f = 0; f < fps; f++) in_step += txns_of(shape_of(spec, t, f).bytes, bw, burst);
    total += in_step;
    wide = in_step > wide ? in_step : wide;
  }
  if (begin) begin[steps] = total;
  if (widest) *widest = wide;
  return total;
}

int cs_expand_count(const cs_job *job, uint64_t *num_txns, uint32_t *num_steps, cs_err *err) {
  int rc = check_shape(job, err);
  if (rc) return rc;
  uint32_t steps = num_steps_of(&job->spec);
  *num_txns = count_steps(job, steps, NULL, NULL);
  *num_steps = steps;
  return CS_OK;
}

void cs_plan_free(cs_plan *plan) {
  if (!plan) return;
  free(plan->step_txn_begin);
  free(plan->order);
  memset(plan, 0, sizeof *plan);
}

uint64_t cs_plan_bytes(int n, uint32_t steps) {
  return sizeof(cs_plan) + ((uint64_t)steps + 1) * sizeof(uint64_t) +
         (uint64_t)(n > 0 ? n : 0) * sizeof(int32_t);
}

int cs_expand(const cs_job *job, cs_plan *plan, cs_err *err) {
  memset(plan, 0, sizeof *plan);
  int rc = check_shape(job, err);
  if (rc) return rc;
  const cs_spec *spec = &job->spec;
  cs_plan p = {0};
  p.spec = *spec;
  p.bw_bytes = job->adapter.bw_bytes;
  p.burst_length = job->adapter.burst_length;
  p.num_steps = num_steps_of(spec);
  p.flows_per_step = (uint32_t)flows_per_step(spec);
  p.total_comm_bytes = cs_expand_total_bytes(spec->primitive, spec->msg_size_bytes,
                                             spec->num_participants);
  p.step_txn_begin = calloc((size_t)p.num_steps + 1, sizeof *p.step_txn_begin);
  p.order = malloc((size_t)spec->num_participants * sizeof *p.order);
  if (!p.step_txn_begin || !p.order) {
    cs_plan_free(&p);
    return cs_err_set(err, CS_ENOMEM, "expand: out of memory for %u steps of %d participants",
                      p.num_steps, spec->num_participants);
  }
  cs_spec_participant_order(spec, p.order);
  p.num_txns = count_steps(job, p.num_steps, p.step_txn_begin, &p.widest_step);
  *plan = p;
  return CS_OK;
}

void cs_plan_step_flows(const cs_plan *plan, uint32_t t, cs_flow *out) {
  const cs_spec *spec = &plan->spec;
  uint64_t bw = (uint64_t)plan->bw_bytes, burst = (uint64_t)plan->burst_length;
  uint8_t is_read = spec->primitive == CS_PRIM_P2P && spec->p2p_op == CS_P2P_READ;
  uint64_t next = plan->step_txn_begin[t];
  for (uint32_t f = 0; f < plan->flows_per_step; f++) {
    flow_shape s = shape_of(spec, t, (int)f);
    cs_flow *flow = &out[f];
    flow->step = t;
    flow->src = plan->order[s.src_index];
    flow->dst = plan->order[s.dst_index];
    flow->is_read = is_read;
    flow->burst = (uint16_t)burst;
    flow->bytes = s.bytes;
    flow->flits = (s.bytes + bw - 1) / bw;
    flow->num_txns = (flow->flits + burst - 1) / burst;
    flow->first_txn = next;
    next += flow->num_txns;
  }
}

void cs_plan_step_reqs(const cs_plan *plan, const cs_flow *flows, cs_inject *out) {
  uint64_t at = 0;
  for (uint32_t f = 0; f < plan->flows_per_step; f++)
    for (uint64_t k = 0; k < flows[f].num_txns; k++) out[at++] = cs_flow_req(&flows[f], k);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int cs_plan_check_step_flows(const cs_flow *flows, size_t n, uint32_t step, cs_err *err) {
  /* target in the high half, flow index in the low: a repeated target sorts next to its first */
  uint64_t *keys = malloc((n ? n : 1) * sizeof *keys);
  if (!keys) return cs_err_set(err, CS_ENOMEM, "C6 check: out of memory");
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (flows[i].num_txns) keys[k++] = (uint64_t)(uint32_t)flows[i].dst << 32 | (uint64_t)i;
  qsort(keys, k, sizeof *keys, cmp_u64);
  int rc = CS_OK;
  for (size_t i = 1; i < k && !rc; i++)
    if (keys[i] >> 32 == keys[i - 1] >> 32) {
      const cs_flow *a = &flows[(uint32_t)keys[i - 1]], *b = &flows[(uint32_t)keys[i]];
      rc = cs_err_set(err, CS_ECONSTRAINT,
                      "C6: step %u: requests %llu and %llu of different flows both target DDR %d: "
                      "targets within a step must be distinct",
                      step, (unsigned long long)a->first_txn, (unsigned long long)b->first_txn,
                      b->dst);
    }
  free(keys);
  return rc;
}
