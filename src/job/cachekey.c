/* Cache key: SHA-256 over a fixed binary serialisation of the loaded job (not the input text, so
 * formatting and key order never matter):
 *
 *   "commsweep-key/2" | adapter version | adapter fields (table order) |
 *   primitive | algorithm | msg_size_bytes | dtype | p2p_op | N | participants in expansion order |
 *   [grid, 3 integers: only for the algorithms that use it, dimring and dimring_rsag] |
 *   chip_spec_summary (canonical JSON) | engine name, guard, model version, options
 *
 * Integers are 8 little-endian bytes (participants 4), doubles their IEEE bits, strings
 * length-prefixed (fields.h), so no two different jobs serialise alike.  No JSON is built: a key costs about a
 * microsecond.  The canonical JSON of a job for people is the /jobs column job_json. */
#include <stdlib.h>
#include <string.h>

#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "commsweep/engine.h"

#define KEY_FORMAT "commsweep-key/2"

size_t cs_cachekey_serialize(const cs_job *job, const char *adapter_version, uint8_t *buf,
                             size_t cap) {
  const cs_spec *s = &job->spec;
  size_t used = 0;
  cs_bytes_text(buf, cap, &used, KEY_FORMAT, 64);
  cs_bytes_text(buf, cap, &used, adapter_version, 64);
  used = cs_config_adapter_serialize(&job->adapter, buf, cap, used);
  cs_bytes_u64(buf, cap, &used, (uint64_t)s->primitive);
  cs_bytes_u64(buf, cap, &used, (uint64_t)s->algorithm);
  cs_bytes_u64(buf, cap, &used, s->msg_size_bytes);
  cs_bytes_text(buf, cap, &used, s->dtype, sizeof s->dtype);
  cs_bytes_u64(buf, cap, &used, (uint64_t)s->p2p_op);
  int n = s->num_participants;
  if (n < 0 || (n > CS_MAX_LISTED_PARTICIPANTS && s->num_participant_runs <= 0)) n = 0;
  cs_bytes_u64(buf, cap, &used, (uint64_t)n);
  if (s->num_participant_runs > 0) { /* the sorted set, run by run: the same bytes as listed */
    int32_t ids[256];
    for (int i = 0; i < n; i += 256) {
      int k = n - i < 256 ? n - i : 256;
      for (int j = 0; j < k; j++) ids[j] = cs_spec_participant(s, i + j);
      cs_bytes_i32s(buf, cap, &used, ids, (size_t)k);
    }
  } else {
    int32_t order[CS_MAX_LISTED_PARTICIPANTS];
    cs_spec_participant_order(s, order);
    cs_bytes_i32s(buf, cap, &used, order, (size_t)n);
  }
  if (cs_algorithm_uses_grid(s->algorithm))
    for (int d = 0; d < CS_MAX_GRID_DIMS; d++) cs_bytes_u64(buf, cap, &used, (uint64_t)s->grid[d]);
  cs_bytes_text(buf, cap, &used, s->chip_spec_summary, sizeof s->chip_spec_summary);
  return cs_engine_options_serialize(&job->engine, buf, cap, used);
}

int cs_cachekey(const cs_job *job, char out[CS_KEY_HEX], cs_err *err) {
  /* The job's fixed-size fields (adapter and spec strings, 512 listed participants, 1 KiB of
   * chip summary, the engine's options) fit; a long participant list goes to the heap. */
  uint8_t stack[16384], *buf = stack;
  size_t n = cs_cachekey_serialize(job, CS_ADAPTER_VERSION, buf, sizeof stack);
  if (n > sizeof stack) {
    if (!(buf = malloc(n)))
      return cs_err_set(err, CS_ENOMEM, "cache key: out of memory for %zu bytes", n);
    size_t again = cs_cachekey_serialize(job, CS_ADAPTER_VERSION, buf, n);
    if (again != n) {
      free(buf);
      return cs_err_set(err, CS_EINTERNAL, "cache key: the job serialised to %zu, then %zu bytes",
                        n, again);
    }
  }
  cs_sha256_hex(buf, n, out);
  if (buf != stack) free(buf);
  return CS_OK;
}
